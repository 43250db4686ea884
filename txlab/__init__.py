"""txlab: a Jupyter workbench for TIRx CUDA kernels.

Importing txlab is cheap: TVM (about 2 s to import) and the CUDA driver are loaded on first use.
Names are resolved lazily from the module that owns the concept.
"""
from __future__ import annotations

import importlib

from txlab._version import __version__  # noqa: F401

# public name -> module that defines it
_EXPORTS = {
    "compile": "txlab.compiler",
    "Compiled": "txlab.compiler",
    "CompileError": "txlab.errors",
    "NoGPUError": "txlab.errors",
    "KernelFault": "txlab.errors",
    "InputError": "txlab.errors",
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
}
# concept modules reachable as attributes (txlab.schedulers, ...)
_SUBMODULES = {
    "api", "compat", "device", "errors", "examples", "magic", "pipelines", "pools",
    "run", "schedulers", "timeline", "toolchain", "views", "cache", "roofline", "doctor", "export",
    "build", "launch", "ir", "hooks",
    "occupancy", "profiling", "ncu",
    "sanitizer", "banks", "simt",
    "sass",
    "diff",  # a callable module: txlab.diff(a, b) compares two builds (txlab/diff.py)
    "emulator",
    "tune",  # a callable package: txlab.tune(build, space, inputs, ...)
}


# The composition root: the view layer registers each model's widget and HTML display (models
# import nothing from it). Cheap: no widget module is imported until one is shown.
from txlab import views as _views  # noqa: E402

_views.install_display()


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(_EXPORTS[name])
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f"txlab.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'txlab' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)


def load_ipython_extension(ipython):
    """`%load_ext txlab`: registers the %%tirx cell magic."""
    from txlab.magic import register

    _views.install_display(ipython)
    register(ipython)


def unload_ipython_extension(ipython):  # pragma: no cover - IPython hook
    pass
