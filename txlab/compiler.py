"""Compile a TIRx kernel and keep everything a kernel engineer looks at: TVMScript, CUDA C, PTX,
cubin, SASS, per-kernel resources and launch shapes, with per-stage timings.

    compiled = txlab.compile(my_prim_func, arch="sm_90a")
    compiled.ptx, compiled.sass, compiled.resources["my_kernel"]["registers"]

Stages: ``lower`` (TIRx pipeline), ``codegen`` (TVM's CUDA C), ``nvcc`` (CUDA C -> PTX), ``ptxas``
(PTX -> cubin, resource report), ``disasm`` (SASS). Results are cached on disk (txlab.cache).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from txlab import build, cache, ir, toolchain
from txlab.errors import CompileError, InputError

from txlab.arch import SUPPORTED_ARCH_BASES, _ARCH_RE, resolve_arch, supported_archs  # noqa: F401 (re-exported)


@functools.lru_cache(maxsize=1)
def _tvm_versions() -> dict:
    import importlib.metadata as md

    out = {}
    for dist in ("apache-tvm", "apache-tvm-ffi"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


class KernelMap(dict):
    """``Compiled.resources`` / ``Compiled.launch``: per device kernel (``scale_kernel``), and a missing name says
    which there are (a user reaches for the function's name, ``scale``)."""

    def __init__(self, rows, owner: str = "", what: str = ""):
        super().__init__(rows or {})
        self._owner, self._what = owner, what

    def __missing__(self, key):
        names = ", ".join(repr(k) for k in self)
        guess = [k for k in self if k == f"{key}_kernel" or k.startswith(f"{key}_kernel")]
        hint = (
            f"; did you mean {guess[0]!r}? (TVM names a device kernel after its function, plus _kernel)"
            if guess
            else ""
        )
        raise KeyError(f"{self._what} has no kernel {key!r}; the kernels of {self._owner} are {names}{hint}")


@dataclass
class Compiled:
    """One compiled kernel (its entry function and the device kernels it launches)."""

    name: str
    arch: str
    script: str
    cuda_source: str
    ptx: str
    cubin: bytes
    resources: dict
    launch: dict
    params: list
    compile_seconds: float
    cache_hit: bool
    timings: dict = field(default_factory=dict)
    key: str = ""
    ptxas_report: str = ""
    ir_module: Any = field(default=None, repr=False, compare=False)
    _executable: Any = field(default=None, repr=False, compare=False)
    _lowered: Any = field(default=None, repr=False, compare=False)
    # srcmap: compile options, launchability warnings, line table
    options: Any = None
    warnings: list = field(default_factory=list)
    #: what the lowering warned (a tile primitive's slow fallback variant, at its line): kept in the cache entry,
    #: so a cache hit says it too
    build_warnings: list = field(default_factory=list)
    line_table: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.resources = KernelMap(self.resources, self.name, "resources")
        self.launch = KernelMap(self.launch, self.name, "launch")

    @functools.cached_property
    def sass_listing(self):
        """The SASS of this cubin (:class:`txlab.sass.Listing`: the text and one
        :class:`txlab.sass.Instruction` per instruction, with encoding, control field, live
        registers, CUDA line and inline frames), from one ``nvdisasm`` run on first use (lines
        read from the cubin and this PTX), kept in the cache under the cubin's digest."""
        from txlab.sass import of_cubin

        listing = of_cubin(self.cubin, ptx=self.ptx or None)
        if listing.seconds is not None:
            self.timings["disasm"] = listing.seconds
        return listing

    @functools.cached_property
    def sass(self) -> str:
        """SASS of every kernel, as ``nvdisasm -c`` prints it (:attr:`sass_listing`'s text)."""
        return self.sass_listing.text

    @functools.cached_property
    def source_map(self):
        """The line map (:class:`txlab.sourcemap.SourceMap`): user line <-> CUDA, PTX, SASS."""
        from txlab import sourcemap

        return sourcemap.source_map_of(self)

    # ---- model -------------------------------------------------------------------------------
    @property
    def kernels(self) -> list[str]:
        """Names of the device kernels (``__global__`` functions) in this module."""
        return sorted(self.launch)

    @property
    def entry_params(self) -> list[dict]:
        """The parameters a caller passes, in order (those of the entry function)."""
        return self.signature.entry_params

    @property
    def signature(self):
        """:class:`txlab.ir.Signature`: the entry function's name and parameters (what the launch
        checks, ``txlab.check`` and the emulator read of any kernel)."""
        from txlab.ir.signature import Signature

        return Signature(self.name, self.params)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "arch": self.arch,
            "kernels": self.kernels,
            "resources": self.resources,
            "launch": self.launch,
            "params": self.params,
            "compile_seconds": self.compile_seconds,
            "cache_hit": self.cache_hit,
            "timings": self.timings,
            "key": self.key,
            "sizes": {
                "script": len(self.script),
                "cuda_source": len(self.cuda_source),
                "ptx": len(self.ptx),
                "cubin": len(self.cubin),
                "sass": len(self.sass) if "sass_listing" in self.__dict__ else None,
            },
            "options": self.options.to_dict() if self.options is not None else None,
            "warnings": list(self.warnings),
        }

    def instructions(self, pattern: str) -> list[str]:
        """SASS instructions whose text, predicate excluded, matches ``pattern`` (a regex searched
        from the opcode on), e.g. ``c.instructions('^HGMMA')``; ``'^SYNCS'`` also finds
        ``@P0 SYNCS...``. Returned as printed, predicate included."""
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise InputError(
                f"instructions({pattern!r}): not a regular expression ({exc}); escape special characters, e.g. "
                f"{re.escape(pattern)!r}",
                param="pattern",
            ) from None
        return [i.text for i in self.sass_listing.instructions if rx.search(f"{i.opcode} {i.operands}".strip())]

    def sass_table(self):
        """One row per SASS instruction with its scheduling control bits (stall, yield, read/write
        dependency barriers, wait mask, reuse), class and user line: a :class:`txlab.sass.SassTable`."""
        from txlab.sass import table

        return table(self)

    def plot(self, ax=None):
        """Where the compile time went, and each kernel's registers and shared memory."""
        from txlab.figures import side_by_side

        fig, axes = side_by_side(ax)
        stages = [s for s in ("parse", "lower", "codegen", "nvcc", "ptxas", "disasm") if s in self.timings]
        left = 0.0
        for i, s in enumerate(stages):
            w = self.timings[s]
            axes[0].barh([0], [w], left=left, color=f"C{i}", label=f"{s} {w * 1000:.0f} ms")
            left += w
        axes[0].set_yticks([])
        axes[0].set_xlabel("seconds")
        axes[0].set_title(f"{self.name}: compile ({'cache hit' if self.cache_hit else 'cold'})")
        axes[0].legend(fontsize=7, loc="upper right")
        names = self.kernels
        regs = [self.resources.get(k, {}).get("registers", 0) for k in names]
        smem = [
            (
                self.resources.get(k, {}).get("static_smem_bytes", 0)
                + _int_or0(self.resources.get(k, {}).get("dynamic_smem_bytes", 0))
            )
            / 1024
            for k in names
        ]
        x = range(len(names))
        axes[1].bar([i - 0.2 for i in x], regs, width=0.4, label="registers/thread")
        twin = axes[1].twinx()
        twin.bar([i + 0.2 for i in x], smem, width=0.4, color="C1", label="smem KiB")
        axes[1].set_xticks(list(x))
        axes[1].set_xticklabels(names, fontsize=7)
        axes[1].set_ylabel("registers")
        twin.set_ylabel("shared KiB")
        axes[1].set_title(f"resources ({self.arch})")
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        res = ", ".join(f"{k}: {v.get('registers')} regs" for k, v in self.resources.items())
        return (
            f"<Compiled {self.name} for {self.arch}: kernels {self.kernels} ({res}); "
            f"{self.compile_seconds * 1000:.0f} ms{' cache hit' if self.cache_hit else ''}"
            + (f"; {len(self.warnings)} warning(s): {self.warnings[0]}" if self.warnings else "")
            + ">"
        )

    # ---- running -----------------------------------------------------------------------------
    @property
    def lowered(self) -> build.Lowered:
        """TVM's lowered host and device modules (:class:`txlab.build.Lowered`). Kept from the
        compile; a kernel served from the disk cache is lowered on first use, once."""
        if self._lowered is None:
            import txlab.compat  # noqa: F401  (the same TVM workarounds a compile applies)

            self._lowered = build.lower(self.ir_module, self.arch, self.name)
        return self._lowered

    @property
    def executable(self):
        """TVM's runtime executable for this kernel (host launcher + this exact cubin). Needs a GPU."""
        if self._executable is None:
            from txlab.device import require_gpu

            info = require_gpu(f"running {self.name}")
            problem = cubin_compatibility(self.arch, info.arch)
            if problem:
                from txlab.errors import ArchError

                raise ArchError(
                    f"{self.name}: {problem}; recompile for this GPU with "
                    f"txlab.compile(..., arch={info.arch!r}) (or leave arch unset)"
                )
            self._executable = build.executable(self.lowered, self.cubin)
        return self._executable

    def view(self, **kwargs):
        """The SourceView of this build (TVMScript, CUDA, PTX, SASS linked line by line), the widget
        :mod:`txlab.views` registers for ``Compiled``; ``kwargs`` (``profile=``, ``heat=``) go to it."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def __call__(self, *args, **kwargs):
        """Run once with ``args`` (:func:`txlab.run.launch`): on the GPU, or on the CPU emulator
        when there is none (``txlab.config.device``, "auto")."""
        from txlab.run import launch

        options = ("sync", "timeout_s", "device")
        named = [k for k in kwargs if k not in options]
        if named:
            params = ", ".join(p["name"] for p in self.entry_params)
            raise InputError(
                f"{self.name} takes its arguments by position, in parameter order: {self.name}({params}); got "
                f"{', '.join(f'{k}=' for k in named)} (the keyword options of a call are {', '.join(options)})"
            )
        return launch(self, *args, **kwargs)


def as_compiled(kernel, *, what: str = "txlab.compile") -> "Compiled":
    """``kernel`` when it is a :class:`Compiled`, else ``txlab.compile(kernel)`` (a ``@T.prim_func``
    or an IRModule, for the local GPU's arch; served from the compile cache when unchanged): what
    every entry point that takes a kernel accepts. ``what`` names the caller in the TypeError for
    anything else."""
    if isinstance(kernel, Compiled):
        return kernel
    ir.as_module(kernel, None, what=what)  # a TypeError naming the caller for anything else
    return compile(kernel)


def cubin_compatibility(cubin_arch: str, device_arch: str) -> str | None:
    """Why a cubin built for ``cubin_arch`` cannot load on a ``device_arch`` GPU, or None if it can.
    SASS is binary-compatible only within one major arch, from older to newer minor, and an
    arch-specific ('a') cubin only on exactly its own arch."""
    c = _ARCH_RE.match(cubin_arch)
    d = _ARCH_RE.match(device_arch)
    if not c or not d:
        return None
    if c.group(1) != d.group(1):
        return (
            f"it was compiled for {cubin_arch}, and this GPU is {device_arch}: "
            "cubins run only on GPUs of the same major arch"
        )
    if int(c.group(2)) > int(d.group(2)):
        return f"it was compiled for {cubin_arch}, newer than this GPU ({device_arch})"
    if c.group(3) == "a" and cubin_arch.rstrip("af") != device_arch.rstrip("af"):
        return f"it was compiled for the arch-specific {cubin_arch}, which runs only on {cubin_arch[:-1]} GPUs"
    return None


def _int_or0(v):
    return v if isinstance(v, int) else 0


# ---------------------------------------------------------------------------------------------
def compile(  # noqa: A001 - txlab.compile is the public name
    kernel,
    arch: str | None = None,
    *,
    name: str | None = None,
    use_cache: bool = True,  # noqa: A001
    progress=None,
    fast_math: bool = True,
    maxrregcount: int | None = None,
    nvcc_flags=None,
    cached_only: bool = False,
) -> Compiled:  # noqa: A001 - the domain word
    """Compile a ``@T.prim_func`` (or an IRModule) for ``arch`` with the real CUDA toolchain.

    ``arch`` defaults to the local GPU's (e.g. ``sm_90a`` on an H100/H200), else ``sm_90a``.
    ``fast_math`` (default True, like TVM's own nvcc path: ``--use_fast_math``, so FADD/FMUL are
    ``.FTZ`` and ``exp`` is ``MUFU.EX2``), ``maxrregcount`` (ptxas's register cap) and
    ``nvcc_flags`` (extra nvcc flags; ``-Xptxas X`` goes to ptxas) are part of the cache key.
    Kernels are always compiled with ``-lineinfo`` (the line map: ``Compiled.source_map``).
    Raises :class:`txlab.CompileError` whose ``stage`` says which step failed. ``cached_only``:
    return None instead of compiling when the cache holds no entry (a sweep's cheap first look).
    """
    import txlab.compat  # noqa: F401  (applies the version-guarded TVM workarounds once)
    from txlab import diagnose, sourcemap
    from txlab.options import CompileOptions

    t_start = time.perf_counter()
    options = CompileOptions.make(fast_math=fast_math, maxrregcount=maxrregcount, nvcc_flags=nvcc_flags)
    try:
        mod, entry = ir.as_module(kernel, name)
    except ir.AmbiguousEntry as exc:
        raise InputError(str(exc)) from None
    bad_name = diagnose.kernel_name_error(mod)  # (nvcc would refuse it, at a line of the generated CUDA)
    if bad_name is not None:
        raise bad_name
    arch = resolve_arch(arch)
    script = mod.script()
    key = cache.make_key(
        script=script,
        arch=arch,
        tools=toolchain.versions(),
        tvm=_tvm_versions(),
        txlab=_txlab_version(),
        flags=[toolchain.NVCC_FLAGS, toolchain.PTXAS_FLAGS],
        options=options.key(),
        lines=sourcemap.span_signature(mod),
        launch="flags",  # the launch records carry cooperative / programmatic-dependent flags (entries before: not)
        warned="lowering",  # the entry keeps what the lowering warned (entries before: not)
        # a module of several kernels: one entry per build (a single kernel's key stays what it was)
        **({"entry": entry} if len(ir.functions(mod)) > 1 else {}),
    )
    if use_cache:
        entry_files = cache.load(key)
        compiled = _from_cache(entry_files, mod, key) if entry_files is not None else None
        if compiled is not None:  # None: absent, or failed to verify/decode (rebuilt and replaced below)
            compiled.compile_seconds = time.perf_counter() - t_start
            compiled.cache_hit = True
            # derived from the entry, by this txlab's checks (an entry's stored ones may be an older txlab's)
            compiled.warnings = _warnings(compiled)
            return compiled
    if cached_only:
        return None
    report = progress if progress is not None else _progress_for(entry)
    timings: dict[str, float] = {}
    line_table = None
    try:
        report("lower")
        t = time.perf_counter()
        lowered = build.lower(mod, arch, entry)
        launch = lowered.launch
        timings["lower"] = time.perf_counter() - t

        report("codegen")
        t = time.perf_counter()
        cuda_source = build.codegen_source(lowered, entry)
        timings["codegen"] = time.perf_counter() - t
        t = time.perf_counter()
        try:
            line_table = sourcemap.build_line_table(
                mod,
                lowered.device_mods,
                cuda_source,
                lambda mods: build.codegen_source(dataclasses.replace(lowered, device_mods=mods), entry),
            )
        except CompileError:
            line_table = None  # the map is an extra: never fail a compile for it
        timings["linemap"] = time.perf_counter() - t

        report("nvcc")
        t = time.perf_counter()
        ptx = toolchain.cap_registers(
            toolchain.cuda_to_ptx(cuda_source, arch, base_flags=options.nvcc_args()), options.maxrregcount
        )
        timings["nvcc"] = time.perf_counter() - t

        report("ptxas")
        t = time.perf_counter()
        cubin, ptxas_report = toolchain.ptx_to_cubin(ptx, arch, extra_flags=options.ptxas_args())
        timings["ptxas"] = time.perf_counter() - t
    except CompileError as exc:
        exc.kernel = exc.kernel or entry
        if exc.stage in ("nvcc", "ptxas"):
            if not diagnose.map_toolchain_error(
                exc, mod, locals().get("cuda_source"), line_table, arch, ptx=locals().get("ptx")
            ):
                build.point_at_user_line(exc, mod)
        diagnose.add_hints(exc, mod, arch)
        exc.args = (exc._text(),)
        raise
    finally:
        report(None)
    resources = toolchain.parse_ptxas_report(ptxas_report)
    for kname, launch_k in launch.items():
        resources.setdefault(kname, dict.fromkeys(toolchain.RESOURCE_FIELDS, 0))
        resources[kname]["dynamic_smem_bytes"] = launch_k["dynamic_smem_bytes"]
    compiled = Compiled(
        name=entry,
        arch=arch,
        script=script,
        cuda_source=cuda_source,
        ptx=ptx,
        cubin=bytes(cubin),
        resources=resources,
        launch=launch,
        params=build.params_of(mod),
        compile_seconds=time.perf_counter() - t_start,
        cache_hit=False,
        timings=timings,
        key=key,
        ptxas_report=ptxas_report,
        ir_module=mod,
        options=options,
        line_table=line_table,
        _lowered=lowered,
    )
    compiled.build_warnings = list(lowered.warnings)
    compiled.warnings = _warnings(compiled)
    cache.store(key, _to_cache(compiled))  # also with use_cache=False: a fresh build replaces the entry
    return compiled


def cuda_source(kernel, arch: str | None = None, *, name: str | None = None) -> str:
    """The CUDA C++ that TVM generates for ``kernel`` (lowering and codegen only, no nvcc): the text
    ``Compiled.cuda_source`` holds, for callers that compile it their own way (e.g. with ``-rdc`` and
    NVSHMEM). A :class:`Compiled` answers with the source it holds (nothing is lowered again).
    Raises :class:`txlab.CompileError` with ``stage`` ``lower`` or ``codegen``."""
    import txlab.compat  # noqa: F401

    if isinstance(kernel, Compiled) and (arch is None or resolve_arch(arch) == kernel.arch):
        return kernel.cuda_source
    mod, entry = ir.as_module(kernel, name)
    arch = resolve_arch(arch)
    return build.codegen_source(build.lower(mod, arch, entry), entry)


def _txlab_version() -> str:
    from txlab._version import __version__

    return __version__


def _progress_for(entry: str):
    from txlab.progress import stage_reporter

    return stage_reporter(f"compiling {entry}")


def with_lineinfo(compiled: Compiled) -> Compiled:
    """``compiled`` itself when its cubin has a line table (txlab always builds with ``-lineinfo``),
    else a copy whose PTX and cubin are rebuilt from the same CUDA C with the kernel's own compile
    options plus ``-lineinfo`` (the same SASS), under a key of its own so its exported library is
    distinct. What Nsight Compute and compute-sanitizer need to name source lines."""
    from txlab import ncu
    from txlab.options import CompileOptions

    if ncu.has_line_info(compiled.cubin):
        return compiled
    import hashlib

    options = compiled.options if compiled.options is not None else CompileOptions()
    flags = options.nvcc_args()
    ptx = toolchain.cap_registers(
        toolchain.cuda_to_ptx(
            compiled.cuda_source,
            compiled.arch,
            base_flags=flags,
            extra_flags=[] if "-lineinfo" in flags else ["-lineinfo"],
        ),
        options.maxrregcount,
    )
    cubin, report = toolchain.ptx_to_cubin(ptx, compiled.arch, extra_flags=options.ptxas_args())
    key = hashlib.sha256(f"{compiled.key}:lineinfo".encode()).hexdigest() if compiled.key else ""
    # SASS and its map are read from the new cubin on first use (cached properties start empty)
    return dataclasses.replace(compiled, ptx=ptx, cubin=bytes(cubin), ptxas_report=report, key=key, _executable=None)


def _warnings(c: Compiled) -> list:
    """``Compiled.warnings``: what the lowering warned (kept in the cache entry), then what txlab's checks derive
    from the build (derived again on a cache hit, by this txlab's checks)."""
    from txlab import diagnose

    cap = c.options.maxrregcount if c.options is not None else None
    return (
        list(c.build_warnings)
        + toolchain.register_cap_warnings(c.resources, cap)
        + diagnose.launchability(c)
        + diagnose.aliased_indices(c)
    )


def _to_cache(c: Compiled) -> dict:
    meta = {
        "name": c.name,
        "arch": c.arch,
        "resources": c.resources,
        "params": c.params,
        "launch": {
            k: {
                **v,
                "grid": list(v["grid"]),
                "block": list(v["block"]),
                "cluster": list(v["cluster"]) if v["cluster"] else None,
            }
            for k, v in c.launch.items()
        },
        "timings": c.timings,
        "key": c.key,
        "options": c.options.to_dict() if c.options is not None else None,
        "warnings": c.warnings,
        "build_warnings": c.build_warnings,
    }
    files = {
        "meta.json": json.dumps(meta, indent=1),
        "script.py": c.script,
        "kernel.cu": c.cuda_source,
        "kernel.ptx": c.ptx,
        "kernel.cubin": c.cubin,
        "ptxas.txt": c.ptxas_report,
    }
    if c.line_table is not None:
        files["linemap.json"] = json.dumps(c.line_table.to_dict())
    return files


def _from_cache(files: dict, mod, key: str) -> Compiled | None:
    """The Compiled an entry holds, or None when any part of it does not decode to the expected
    types (the entry verified against its manifest, but a manifest can be rewritten too)."""
    from txlab.options import CompileOptions
    from txlab.sourcemap import LineTable

    try:
        meta = json.loads(files["meta.json"])
        if meta.get("key") != key:
            return None
        launch = {}
        for k, v in meta["launch"].items():
            cluster = tuple(v["cluster"]) if v["cluster"] else None
            launch[str(k)] = {**v, "grid": tuple(v["grid"]), "block": tuple(v["block"]), "cluster": cluster}
            if not all(
                isinstance(d, (int, str)) and not isinstance(d, bool)
                for d in (*launch[k]["grid"], *launch[k]["block"], *(cluster or ()))
            ):
                return None
        resources = meta["resources"]
        if not isinstance(resources, dict) or not all(
            isinstance(r, dict) and all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in r.values())
            for r in resources.values()
        ):
            return None
        timings = meta["timings"]
        if not isinstance(timings, dict) or not all(isinstance(x, (int, float)) for x in timings.values()):
            return None
        if (
            not isinstance(meta["params"], list)
            or not isinstance(meta["name"], str)
            or not isinstance(meta["arch"], str)
            or not _ARCH_RE.match(meta["arch"])
        ):
            return None
        warnings = meta.get("warnings", [])
        build_warnings = meta.get("build_warnings")  # absent: an entry from before they were kept; rebuilt
        if build_warnings is None:
            return None
        if not all(isinstance(ws, list) and all(isinstance(w, str) for w in ws) for ws in (warnings, build_warnings)):
            return None
        cubin = files["kernel.cubin"]
        if cubin[:4] != b"\x7fELF":
            return None
        table = files.get("linemap.json")
        return Compiled(
            name=meta["name"],
            arch=meta["arch"],
            script=files["script.py"].decode(),
            cuda_source=files["kernel.cu"].decode(),
            ptx=files["kernel.ptx"].decode(),
            cubin=cubin,
            resources=resources,
            launch=launch,
            params=meta["params"],
            compile_seconds=0.0,
            cache_hit=True,
            timings=timings,
            key=key,
            ptxas_report=files.get("ptxas.txt", b"").decode(),
            ir_module=mod,
            options=CompileOptions.from_dict(meta.get("options")),
            warnings=warnings,
            build_warnings=build_warnings,
            line_table=LineTable.from_dict(json.loads(table)).for_source(mod) if table is not None else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError):  # JSONDecodeError, UnicodeDecodeError
        return None
