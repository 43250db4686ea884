"""txlab: a Jupyter workbench for TIRx CUDA kernels.

Importing txlab is cheap: TVM (about 2 s to import) and the CUDA driver are loaded on first use.
Names are resolved lazily from the module that owns the concept: ``__getattr__`` imports that
module on first access (each import written out in :func:`_module`, so the import graph that
``lint-imports`` and tests/test_layers.py check holds every edge).
"""

from __future__ import annotations

from txlab._version import __version__  # noqa: F401

# public name -> module that defines it
_EXPORTS = {
    "compile": "txlab.compiler",
    "Compiled": "txlab.compiler",
    "CompileError": "txlab.errors",
    "NoGPUError": "txlab.errors",
    "KernelFault": "txlab.errors",
    "InputError": "txlab.errors",
    "SettingError": "txlab.errors",
    "TxlabError": "txlab.errors",
    "ArchError": "txlab.errors",
    "check": "txlab.run",
    "bench": "txlab.run",
    "BenchResult": "txlab.run",
    "CheckResult": "txlab.run",
    "config": "txlab.settings",
    "export_html": "txlab.export",
    "profile": "txlab.profiling",
    "Profile": "txlab.profiling",
    "emulate": "txlab.emulator",
    "EmulationResult": "txlab.emulator",
    "sanitize": "txlab.sanitizer",
    "SanitizerReport": "txlab.sanitizer",
    "TuneResult": "txlab.tune",
    "autotune": "txlab.tune",
    "compare": "txlab.diff",
    "occupancy_of": "txlab.occupancy",
}
# concept modules reachable as attributes (txlab.schedulers, ...)
_SUBMODULES = {
    "api",
    "compat",
    "device",
    "errors",
    "examples",
    "magic",
    "pipelines",
    "pools",
    "run",
    "schedulers",
    "timeline",
    "toolchain",
    "views",
    "cache",
    "roofline",
    "doctor",
    "export",
    "build",
    "launch",
    "ir",
    "hooks",
    "occupancy",
    "profiling",
    "ncu",
    "sanitizer",
    "banks",
    "simt",
    "sass",
    "diff",  # txlab.compare(a, b) is its entry point (calling the module is deprecated)
    "emulator",
    "tune",  # txlab.autotune(build, space, inputs, ...) is its entry point (likewise)
}


# The composition root: the view layer registers each model's widget and HTML display (models
# import nothing from it). Cheap: no widget module is imported until one is shown.
from txlab.views import install_display as _install_display  # noqa: E402

_installed = _install_display()

# a TVMScript error at the top of a script: printed, where TVM 0.27's excepthook prints only a note
from txlab.uncaught import install as _install_uncaught  # noqa: E402

_uncaught_now = _install_uncaught()


def _module(name: str):
    """``txlab.<name>``, imported on first use (``import txlab.x as m``, not ``from txlab import x``, which would
    call this module's ``__getattr__`` again; one line per module: every edge is visible)."""
    match name:
        case "api":
            import txlab.api as m
        case "banks":
            import txlab.banks as m
        case "build":
            import txlab.build as m
        case "cache":
            import txlab.cache as m
        case "compat":
            import txlab.compat as m
        case "compiler":
            import txlab.compiler as m
        case "device":
            import txlab.device as m
        case "diff":
            import txlab.diff as m
        case "doctor":
            import txlab.doctor as m
        case "emulator":
            import txlab.emulator as m
        case "errors":
            import txlab.errors as m
        case "examples":
            import txlab.examples as m
        case "export":
            import txlab.export as m
        case "hooks":
            import txlab.hooks as m
        case "ir":
            import txlab.ir as m
        case "launch":
            import txlab.launch as m
        case "magic":
            import txlab.magic as m
        case "ncu":
            import txlab.ncu as m
        case "occupancy":
            import txlab.occupancy as m
        case "pipelines":
            import txlab.pipelines as m
        case "pools":
            import txlab.pools as m
        case "profiling":
            import txlab.profiling as m
        case "roofline":
            import txlab.roofline as m
        case "run":
            import txlab.run as m
        case "sanitizer":
            import txlab.sanitizer as m
        case "sass":
            import txlab.sass as m
        case "schedulers":
            import txlab.schedulers as m
        case "settings":
            import txlab.settings as m
        case "simt":
            import txlab.simt as m
        case "timeline":
            import txlab.timeline as m
        case "toolchain":
            import txlab.toolchain as m
        case "tune":
            import txlab.tune as m
        case "views":
            import txlab.views as m
        case _:
            raise AttributeError(f"module 'txlab' has no attribute {name!r}")
    return m


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(_module(_EXPORTS[name].removeprefix("txlab.")), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = _module(name)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'txlab' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)


def load_ipython_extension(ipython):
    """`%load_ext txlab`: registers the %%tirx cell magic and puts ``txlab`` in the notebook's namespace (the
    README's next cells call ``txlab.check`` / ``txlab.bench``); a name the user already bound is left alone."""
    import sys

    from txlab.magic import register

    _install_display(ipython)
    register(ipython)
    ns = getattr(ipython, "user_ns", None)
    if isinstance(ns, dict) and "txlab" not in ns:
        ns["txlab"] = sys.modules[__name__]


def unload_ipython_extension(ipython):  # pragma: no cover - IPython hook
    pass
