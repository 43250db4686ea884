"""The emulator's entry point: lower a kernel, bind the host arguments, run every CTA.

``emulate`` is what ``txlab.emulate`` calls; see :mod:`txlab.emulator` for the model.
"""

from __future__ import annotations

import sys

import numpy as np

from txlab.arch import DEFAULT_SMS, SM_LIMITS
from txlab.residency import resident_capacity
from txlab.emulator.result import EmulationResult
from txlab.ir.signature import Signature

__all__ = ["emulate", "iket_annotations", "iket_note", "lower_for_emulation"]


def lower_for_emulation(kernel, arch: str | None = None, name: str | None = None, *, iket: bool = False):
    """(entry name, user PrimFunc, host module before finalisation, {kernel: device PrimFunc},
    launch info) -- :func:`txlab.build.lower`, the lowering txlab.compile runs; a ``txlab.Compiled``
    for the same arch gives the lowering it kept (a kernel is lowered once). ``iket=True``: the same
    lowering without ``LowerIket``, so IKET annotations stay in the device code (:mod:`txlab.emulator.iket`)."""
    import txlab.compat  # noqa: F401
    from txlab import ir
    from txlab.arch import resolve_arch

    mod, entry = ir.as_module(kernel, name, what="txlab.emulate")
    arch = resolve_arch(arch if arch is not None else getattr(kernel, "arch", None))
    lowered = None
    if (
        not iket
        and isinstance(getattr(type(kernel), "lowered", None), property)
        and getattr(kernel, "arch", None) == arch
    ):
        lowered = kernel.lowered  # txlab.Compiled: kept from its compile
    if lowered is None or lowered.host_ir is None:
        lowered = _lowered(kernel, mod, arch, entry, iket)
    host_mod, launch = lowered.host_ir, lowered.launch
    devices = {gv.name_hint: f for m in lowered.device_mods.values() for gv, f in m.functions_items()}
    user = mod[entry] if entry in [gv.name_hint for gv, _ in mod.functions_items()] else None
    return entry, mod, user, host_mod, devices, launch


def iket_annotations(mod, user_file=None) -> list:
    """``(intrinsic, user line or None)`` of each NVIDIA IKET annotation (``T.cuda.iket.*``,
    ``IketProfiler``) in the kernel as written. The regular build's ``LowerIket`` pass strips them,
    so the emulator, which runs that build's lowering, never sees them: :func:`iket_note` says so."""
    from txlab import ir
    from txlab.ir import spans

    found = []
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for n in ir.walk(body):
            name = getattr(getattr(n, "op", None), "name", "")
            if isinstance(name, str) and name.startswith("tirx.cuda.iket_"):
                found.append((name[len("tirx.cuda.") :], spans.user_line(getattr(n, "span", None), user_file)))
    return found


def iket_note(found) -> str:
    """The note an emulated run carries when its kernel has IKET annotations: they are not emulated,
    and why."""
    lines = sorted({line for _, line in found if line is not None})
    where = f" at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    return (
        f"{len(found)} IKET annotation{'s' if len(found) != 1 else ''} (T.cuda.iket.*){where} not emulated: the "
        "regular build's LowerIket pass strips them before the emulator runs the kernel (its behaviour is "
        "unchanged), and their events exist only in an IKET-enabled build run under NVIDIA's run-iket, whose "
        "recording the emulator does not model; record them on a GPU and read the trace with "
        "txlab.timeline.load_iket"
    )


_LOWERED: dict = {}  # (id of the kernel object, entry, arch) -> (kernel, lowering): the last few


def _buildable(lowered, arch: str, entry: str) -> None:
    """What the GPU build would refuse, refused here too, so an emulated check never passes a kernel that cannot
    be built: TVM's CUDA codegen of the same lowering (a :class:`txlab.CompileError`, stage ``codegen``, e.g. an
    intrinsic with no CUDA lowering), and a TIRx function that needs a newer architecture than ``arch`` (an
    :class:`txlab.errors.ArchError` naming it, its line and the arch to build for)."""
    from txlab import build, ir
    from txlab.arch import needs_newer
    from txlab.errors import ArchError

    build.codegen_source(lowered, entry)
    try:
        from txlab.tirx_api import names

        gated = {
            "tirx." + e.name[len("Tx.") :]: e for e in names() if e.name.startswith("Tx.") and e.arch.startswith("sm_")
        }
    except Exception:  # noqa: BLE001 - the catalogue is an extra check; codegen above is the build's own
        return
    for dmod in lowered.device_mods.values():
        for node in ir.walk(dmod):
            e = gated.get(getattr(getattr(node, "op", None), "name", None))
            if e is not None and needs_newer(e.arch, arch):
                frame = ir.user_frame(getattr(node, "span", None))
                where = f" (line {frame[1]})" if frame else ""
                raise ArchError(
                    f"{e.name}{where} needs {e.arch}; this kernel is emulated for {arch}, and its GPU build for "
                    f"{arch} would fail: build it for {e.arch} (txlab.compile(kernel, arch={e.arch!r}), then check "
                    f"or run that; txlab.emulate(kernel, ..., arch={e.arch!r}); %%tirx --arch {e.arch})"
                )


def _lowered(kernel, mod, arch, entry, iket=False):
    """:func:`txlab.build.lower` of ``mod``, reused when the same kernel object is emulated again
    (lowering costs more than running a small kernel). Keyed by identity, not structure: two equal
    kernels written at different lines must report their own lines."""
    from txlab import build

    key = (id(kernel), entry, arch, iket)
    hit = _LOWERED.get(key)
    if hit is not None and hit[0] is kernel:
        return hit[1]
    if iket:  # keep the IKET annotations: the regular build's LowerIket would strip them
        import tvm
        from tvm.backend.cuda import transforms

        ctx = tvm.transform.PassContext.current()
        off = [*ctx.disabled_pass, transforms.LowerIket().info.name]
        with tvm.transform.PassContext(opt_level=ctx.opt_level, config=dict(ctx.config), disabled_pass=off):
            lowered = build.lower(mod, arch, entry)
    else:
        lowered = build.lower(mod, arch, entry)
        _buildable(lowered, arch, entry)
    if len(_LOWERED) >= 8:
        _LOWERED.pop(next(iter(_LOWERED)))
    _LOWERED[key] = (kernel, lowered)  # holds the kernel: its id is not reused while cached
    return lowered


def emulate(
    kernel_or_compiled,
    *args,
    ctas=None,
    check: bool = True,
    stop: bool = False,
    arch: str | None = None,
    fast_math: bool | None = None,
    iket: bool = False,
    timeout_s: float | None = None,
) -> EmulationResult:
    """Run ``kernel_or_compiled`` (a ``@T.prim_func``, IRModule or :class:`txlab.Compiled`) on the
    CPU with ``args`` (numpy arrays and Python scalars, as for a GPU run; arrays are written in
    place: a read-only one is fine for an argument the kernel only reads, an InputError at its first
    write otherwise). ``ctas``: CTA indices to run (linear, or (x, y, z) tuples; default: the whole grid).
    ``check``: run the shared-memory race checker and report reads of shared memory nothing of the CTA wrote
    before them (``uninitialized_shared_read``; bounds are always checked). ``stop``: raise
    :class:`txlab.errors.EmulationFault` at the first finding instead of collecting them.
    ``fast_math``: the build whose arithmetic is emulated (``--use_fast_math``: FTZ, approximate
    division and transcendentals; or IEEE); default: a Compiled's own option, else True (txlab's
    default build). docs/emulator-ops.md lists each function's precision in both. ``iket``: run
    IKET annotations (``T.cuda.iket.*``, stripped by the regular build) as events with emulated-work
    clocks, in ``result.iket_events`` (:mod:`txlab.emulator.iket`; what :func:`txlab.timeline.emulate`
    uses); by default they are stripped as in the regular build, and the result's notes say so.
    ``timeout_s``: wall-clock seconds the emulation may take (default: none); a run past it, or a ``while`` loop
    past 10 million rounds, is :class:`txlab.KernelFault` ``kind="timeout"`` at the loop's line (on a GPU the
    kernel would hang there). A numpy array that is not C-contiguous (a strided view, Fortran order) runs as a
    C-ordered copy whose values are written back when the emulation returns, as a GPU call stages it.
    """
    import time

    from txlab import build
    import txlab.emulator.memory as M
    from txlab.emulator.program import Program
    from txlab.launch import bind_symbols, check_args, staged_numpy, write_back
    from txlab.launch import eval_dims as _eval_dims

    args, staged = staged_numpy(args)  # C-ordered copies of strided or Fortran-order arrays, written back at the end

    t0 = time.perf_counter()
    if fast_math is None:
        fast_math = bool(getattr(getattr(kernel_or_compiled, "options", None), "fast_math", True))
    elif not isinstance(fast_math, bool):
        from txlab.errors import InputError

        raise InputError(f"fast_math must be True or False, not {fast_math!r}", param="fast_math")
    for name, flag in (("check", check), ("stop", stop), ("iket", iket)):
        if not isinstance(flag, bool):
            from txlab.errors import InputError

            raise InputError(f"{name} must be True or False, not {flag!r}", param=name)
    ctas = _checked_ctas(ctas)
    prepare = getattr(kernel_or_compiled, "kernel_args", None)  # a build whose call pads A and B / adds a workspace
    entry, mod, user, host_mod, devices, launch = lower_for_emulation(kernel_or_compiled, arch, iket=iket)
    from txlab.arch import resolve_arch

    launch_arch = resolve_arch(arch if arch is not None else getattr(kernel_or_compiled, "arch", None))
    sig = Signature(entry, build.params_of(mod))
    from txlab.errors import InputError

    try:
        check_args(sig, args)
    except InputError:
        if not callable(prepare):
            raise
        # the arguments its call takes (hopper_gemm.build at an unaligned K or with split-K: the user's A, B, C),
        # prepared as its call prepares them; a mistake there is named in the user's terms
        args = tuple(prepare(*args))
        check_args(sig, args)
    names = bind_symbols(sig, args)
    space = M.AddressSpace()
    from txlab.emulator.interpreter import user_file

    ufile = user_file(mod)
    bind = _HostBinder(sig, user, args, names, space)
    bind.user_file = ufile  # a refused tensor map names its line
    bind.walk(host_mod, entry)
    t_lower = time.perf_counter() - t0
    result = EmulationResult(kernel=entry)
    marks = iket_annotations(mod, ufile)
    if marks and not iket:
        result.notes.append(iket_note(marks))
    total_stats: dict = {"lower_seconds": t_lower}
    from txlab.emulator.axes import user_accesses

    written = user_accesses(mod, ufile)  # the multi-dimensional accesses as written: checked per axis
    for kname, call_args in bind.launches:
        func = devices.get(kname)
        if func is None:
            continue
        info = launch.get(kname, {})
        shape = {
            k: _eval_dims(info.get(k), {**bind.let_values(), **names}) for k in ("grid", "block", "dynamic_smem_bytes")
        }
        _closed_launch(kname, shape)
        grid = tuple(int(x) for x in shape["grid"])
        block = tuple(int(x) for x in shape["block"])
        dyn = int(shape["dynamic_smem_bytes"] or 0)
        prog = Program(func, kname, info, check=check, stop=stop, filename=ufile, fast_math=fast_math, axes=written)
        prog.deadline = (t0 + float(timeout_s), float(timeout_s)) if timeout_s is not None else None
        regs = int((getattr(kernel_or_compiled, "resources", None) or {}).get(kname, {}).get("registers") or 0)
        cluster = int(np.prod(prog.cluster_dims))
        _check_launch(
            kname,
            launch_arch,
            grid,
            block,
            prog.static_smem,
            dyn,
            cooperative=prog.grid_sync,
            registers=regs,
            cluster=cluster,
            cluster_dims=prog.cluster_dims,
        )
        lim = SM_LIMITS.get(str(launch_arch).rstrip("af"))
        if lim is not None:  # CTAs of a launch that polls global memory that the GPU runs at once
            prog.resident_window = resident_capacity(
                lim, int(np.prod(block)), prog.static_smem + dyn, regs, cluster=cluster
            )
        # the swizzle each shared buffer was declared with: tcgen05 descriptors are checked against it
        from txlab.emulator.tcgen05 import declared_swizzles

        prog.smem_swizzles = declared_swizzles(user, prog, ufile)
        env = {}
        params = list(func.params)
        for p, v in zip(params, call_args):
            env[p] = v
        order = _cta_order(grid, ctas)
        with np.errstate(all="ignore"):
            prog.run(env, space, order, grid, block, dyn)
        result.findings.extend(prog.findings)
        printed = prog.__dict__.get("printed", ())
        if printed:  # as a GPU prints device printf when the host synchronises
            result.printed.extend(printed)
            sys.stdout.write("".join(printed))
            sys.stdout.flush()
        if iket:
            from txlab.emulator.iket import unclosed

            result.iket_events.extend((kname, *e) for e in prog.__dict__.get("iket_events", ()))
            if unclosed(prog):
                result.notes.append(
                    f"{unclosed(prog)} IKET range(s) of {kname} opened and never closed: left out of iket_events"
                )
        for n in prog.notes:
            if n not in result.notes:
                result.notes.append(n)
        for k, v in prog.stats.items():
            if isinstance(v, (int, float)) and k in total_stats and k not in ("threads_per_cta",):
                total_stats[k] += v
            else:
                total_stats[k] = v
        total_stats.setdefault("kernels", []).append(kname)
    total_stats["seconds"] = time.perf_counter() - t0
    result.stats = total_stats
    write_back(staged)
    return result


def _check_launch(
    kname,
    arch,
    grid,
    block,
    static_smem,
    dyn_smem,
    *,
    cooperative: bool = False,
    registers: int = 0,
    cluster: int = 1,
    cluster_dims=(1, 1, 1),
):
    """Raise ``KernelFault('launch_config')`` where the GPU would refuse the launch (as ``txlab.launch.check_launch``
    does before a GPU run): more threads or shared memory per CTA than ``arch`` has, grid y or z past 65535, a grid
    that is not a whole number of clusters (``cluster_dims``: cuLaunchKernelEx refuses it), or (a ``cooperative``
    launch: the kernel calls grid_sync) more CTAs than the SMs hold at once. An emulated run of a kernel no GPU can
    start would read as a pass."""
    from txlab.errors import KernelFault
    from txlab.launch import whole_cluster_grid

    cdims = (tuple(int(c) for c in cluster_dims) + (1, 1, 1))[:3]
    gdims = (tuple(int(v) for v in grid) + (1, 1, 1))[:3]
    fix = whole_cluster_grid(gdims, cdims)  # the rule a GPU launch through txlab is checked by
    if fix is not None:
        raise KernelFault(
            "launch_config",
            f"kernel {kname} (grid={gdims}, block={tuple(block)}, cluster={cdims}) cannot launch: its grid is not a "
            f"multiple of its cluster dims (grid {'x'.join(map(str, gdims))} in clusters of "
            f"{'x'.join(map(str, cdims))}), which CUDA refuses (cuLaunchKernelEx: CUDA_ERROR_INVALID_CLUSTER_SIZE). "
            "Nothing was emulated: a GPU would refuse this launch.",
            kernel=kname,
            launch={"grid": gdims, "block": tuple(block), "cluster": cdims, "dynamic_smem_bytes": dyn_smem},
            hint=f"make every grid dimension a multiple of the cluster's: a grid of {fix} CTAs "
            f"(T.cta_id with extents that are multiples of T.cta_id_in_cluster's), or a cluster that divides {gdims}",
        )
    _check_limits(kname, arch, grid, block, static_smem, dyn_smem, cooperative, registers, cluster)


def _closed_launch(kname, shape):
    """Raise NotEmulatedError naming the launch extent the arguments did not settle (an expression of
    something the host computes that txlab cannot read)."""
    from txlab.errors import NotEmulatedError

    for key, value in shape.items():
        for v in value if isinstance(value, tuple) else (value,):
            if v is not None and not isinstance(v, (int, np.integer)):
                raise NotEmulatedError(
                    f"{kname}: the launch's {key.replace('_', ' ')} is {v}, which the kernel's arguments do not "
                    "settle; emulate a build whose launch depends only on its scalar arguments and buffer shapes"
                )


def _check_limits(kname, arch, grid, block, static_smem, dyn_smem, cooperative, registers, cluster):
    from txlab.errors import KernelFault
    from txlab.launch import block_problems, grid_problems

    lim = SM_LIMITS.get(str(arch).rstrip("af"))
    if lim is None:
        return
    problems = block_problems(
        block, int(static_smem), int(dyn_smem), lim.max_threads_per_cta, lim.max_smem_per_cta_optin, who=arch
    )
    problems += grid_problems(grid)
    hint = "lower the block size or the shared memory (fewer stages, smaller tiles)"
    if cooperative and not problems:
        threads, ctas = int(np.prod(block)), int(np.prod(grid))
        cap = resident_capacity(lim, threads, int(static_smem) + int(dyn_smem), registers, cluster=cluster)
        if ctas > cap:
            problems.append(
                f"a cooperative launch (grid_sync) needs all {ctas} CTAs resident at once, and {DEFAULT_SMS} SMs "
                f"hold at most {cap} CTAs of {threads} threads"
                + (f" and {int(static_smem) + int(dyn_smem)} bytes of shared memory" if static_smem or dyn_smem else "")
                + (f" and {registers} registers" if registers else "")
                + (f", in clusters of {cluster}" if cluster > 1 else "")
                + (
                    " (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"
                    + ("" if registers else "; fewer if registers limit it")
                    + ")"
                )
            )
            hint = f"launch at most {cap} CTAs (a persistent grid whose CTAs loop over the work)"
    if problems:
        raise KernelFault(
            "launch_config",
            f"kernel {kname} (grid={tuple(grid)}, block={tuple(block)}) cannot launch on {arch}: "
            + "; ".join(problems)
            + ". Nothing was emulated: a GPU would refuse this launch.",
            kernel=kname,
            launch={"grid": tuple(grid), "block": tuple(block), "dynamic_smem_bytes": dyn_smem},
            hint=hint,
        )


def _checked_ctas(ctas):
    """``ctas`` as a list of CTA indices (ints or (x, y, z) tuples of ints), or None (the whole grid);
    an InputError for anything else (an int, an empty list, a float, a string, a 4-tuple)."""
    if ctas is None:
        return None
    from txlab.errors import InputError

    how = "a list of CTA indices, each a linear index or an (x, y, z) tuple, e.g. ctas=[0] or ctas=[(1, 0, 0)]"
    if isinstance(ctas, (str, bytes)) or not hasattr(ctas, "__iter__"):
        raise InputError(f"ctas must be {how}; not {ctas!r} (None runs the whole grid)", param="ctas")
    out = list(ctas)
    if not out:
        raise InputError(
            "ctas is empty, so no CTA would run: pass the CTAs to run, or ctas=None for the whole grid", param="ctas"
        )

    def is_int(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    for c in out:
        ok = is_int(c) or (isinstance(c, (tuple, list, np.ndarray)) and 1 <= len(c) <= 3 and all(is_int(v) for v in c))
        if not ok:
            raise InputError(f"ctas must be {how}; {c!r} is neither", param="ctas")
    return out


def _cta_order(grid, ctas):
    gx, gy, gz = (tuple(grid) + (1, 1, 1))[:3]
    if ctas is None:  # launch order, blockIdx.x fastest: (N, 3) int array
        lin = np.arange(gx * gy * gz, dtype=np.int64)
        return np.stack([lin % gx, (lin // gx) % gy, lin // (gx * gy)], axis=1)
    out = []
    for c in ctas:
        if isinstance(c, (tuple, list, np.ndarray)):
            t = tuple(int(v) for v in c) + (0, 0)
            t = t[:3]
            inside = 0 <= t[0] < gx and 0 <= t[1] < gy and 0 <= t[2] < gz
            what = f"{t}"
        else:
            c = int(c)
            t = (c % gx, (c // gx) % gy, c // (gx * gy))
            inside = 0 <= c < gx * gy * gz
            what = f"{c} (a linear index: 0 to {gx * gy * gz - 1} here)"
        if not inside:
            from txlab.errors import InputError

            raise InputError(f"ctas: {what} is outside the grid {tuple(grid)}", param="ctas")
        out.append(t)
    return out


class _HostBinder:
    """Reads the host function: which buffers and scalars each device kernel gets, and the tensor
    maps it encodes (cuTensorMapEncodeTiled)."""

    def __init__(self, sig, user, args, names, space):
        import txlab.emulator.memory as M

        self.names = dict(names)
        self.user_file = None
        self.alias: dict = {}  # host buffer name -> user buffer name
        self.values: dict = {}  # user buffer name -> base address
        self.scalars: dict = {}
        # tensor map variable -> its encoding: keyed by the variable itself, since two maps of one buffer can share a
        # name (B_tensormap for two box shapes of B: the printer alone tells them apart, as B_tensormap_1)
        self.tensormaps: dict = {}
        self.launches: list = []
        self.lets: dict = {}  # host variable -> its value expression
        bufs = {}
        if user is not None:
            for p in user.params:
                b = user.buffer_map.get(p) if hasattr(user, "buffer_map") else None
                if b is not None:
                    bufs[p.name] = b.name
        for i, (p, v) in enumerate(zip(sig.entry_params, args)):
            if p["kind"] == "buffer":
                arr = v
                if not isinstance(arr, np.ndarray):
                    from txlab.errors import InputError

                    raise InputError(f"txlab.emulate takes numpy arrays; {p['name']} is {type(v).__name__}")
                base = M.GLOBAL_BASE + i * M.GLOBAL_STRIDE
                data = arr.reshape(-1).view(np.uint8)
                space.add(M.Region(p["name"], base, data, "global"))
                self.values[p["name"]] = np.uint64(base)
                self.values[bufs.get(p["name"], p["name"])] = np.uint64(base)
            else:
                self.scalars[p["name"]] = v
        self.space = space

    def walk(self, host_mod, entry=None):
        """The launches of host function ``entry`` (of every host function when the module has none by that
        name): a module of several kernels runs only the one called."""
        from txlab import build, ir

        funcs = list(host_mod.functions_items())
        mine = [(gv, f) for gv, f in funcs if gv.name_hint == entry]
        for _, f in mine or funcs:
            for node in ir.walk(f.body):
                t = type(node).__name__
                if t in ("Bind", "LetStmt") and hasattr(node, "var"):  # host-side CSE (cse_v1 = n // 128)
                    self.lets[node.var.name] = node.value
                elif t == "DeclBuffer":
                    src = self._buffer_of(node.data)
                    if src is not None:
                        self.alias[node.buffer.name] = src
                elif (
                    t == "Call"
                    and getattr(node.op, "name", "") == "tirx.tvm_call_packed"
                    and str(getattr(node.args[0], "value", "")) == "runtime.cuTensorMapEncodeTiled"
                ):
                    self._tensormap(node)
                elif t == "Call" and getattr(node.op, "name", "") == "tirx.tensormap_encode_tiled":
                    self._tensormap_attr(node)
            for node in ir.walk(f.body):
                if type(node).__name__ == "Call" and getattr(node.op, "name", "") == "tirx.call_ffi_kernel":
                    params = [str(p) for p in node.attrs.launch_params if str(p) not in build.LAUNCH_FLAGS]
                    args = list(node.args)
                    kname = str(getattr(args[0], "value", args[0]))
                    vals = [self.value(a) for a in args[1 : len(args) - len(params)]]
                    self.launches.append((kname, vals))

    def let_values(self) -> dict:
        """Integer values of the host's let-bound variables (launch dimensions may name them)."""
        out = {}
        for name in self.lets:
            try:
                v = self.value(self.lets[name])
            except Exception:  # noqa: BLE001 - a let that is not an integer expression of the arguments
                continue
            if isinstance(v, (int, np.integer)):
                out[name] = int(v)
        return out

    def _buffer_of(self, e):
        t = type(e).__name__
        if t == "Call" and getattr(e.op, "name", "") == "tirx.buffer_data":
            return self.alias.get(e.args[0].name, e.args[0].name)
        return None

    def value(self, e):
        t = type(e).__name__
        if t in ("IntImm",):
            return np.int32(e.value) if str(e.ty.dtype) == "int32" else np.dtype(str(e.ty.dtype)).type(e.value)
        if t == "FloatImm":
            return np.dtype(str(e.ty.dtype)).type(e.value)
        if t == "StringImm":
            return str(e.value)
        b = self._buffer_of(e)
        if b is not None:
            if b not in self.values:
                from txlab.errors import NotEmulatedError

                raise NotEmulatedError(f"kernel argument {b} (a buffer the host derives)")
            return self.values[b]
        if t == "Var":
            if e in self.tensormaps:
                return self.tensormaps[e]
            if e.name in self.scalars:
                from txlab.emulator.memory import np_dtype

                return np_dtype(str(e.ty.dtype)).type(self.scalars[e.name])
            if e.name in self.names:
                return np.dtype(str(e.ty.dtype)).type(self.names[e.name])
            if e.name in self.lets:
                v = self.value(self.lets[e.name])
                return np.dtype(str(e.ty.dtype)).type(v) if not isinstance(v, (dict, str)) else v
        # an expression of scalars (e.g. n * 4): evaluate by name
        from txlab.launch import eval_dims as _eval_dims

        v = _eval_dims(
            [str(e)], {**self.names, **{k: int(v) for k, v in self.scalars.items() if isinstance(v, (int, np.integer))}}
        )[0]
        if isinstance(v, int):
            return np.int32(v)
        from txlab.errors import NotEmulatedError

        raise NotEmulatedError(f"host-computed kernel argument {e}")

    def _tensormap_attr(self, call):
        """``T.tensormap_encode_tiled(map, base, dims..., strides..., box..., elem_strides...)``
        with the dtype, rank, swizzle, ... in the call's attributes."""
        at = call.attrs
        a = list(call.args)
        rank = int(at.rank)
        base = self._address(a[1])
        nums = [int(self.value(x)) for x in a[2:]]
        self.tensormaps[a[0]] = {
            "dtype": str(at.descriptor_dtype),
            "rank": rank,
            "base": int(base),
            "dims": nums[:rank],
            "strides": nums[rank : 2 * rank - 1],
            "box": nums[2 * rank - 1 : 3 * rank - 1],
            "elem_strides": nums[3 * rank - 1 : 4 * rank - 1],
            "interleave": int(at.interleave),
            "swizzle": int(at.swizzle),
            "l2": int(at.l2_promotion),
            "oob_fill": int(at.oob_fill),
        }
        self._check_map(a[0], call)

    def _address(self, e):
        if type(e).__name__ == "Call" and getattr(e.op, "name", "") == "tirx.handle_add_byte_offset":
            return int(self._address(e.args[0])) + int(self.value(e.args[1]))
        return int(self.value(e))

    def _tensormap(self, call):
        a = list(call.args)[1:]
        mapvar = a[0]
        dtype = str(a[1].value)
        rank = int(a[2].value)
        base = self.value(a[3])
        nums = [int(self.value(x)) for x in a[4:]]
        dims = nums[:rank]
        strides = nums[rank : 2 * rank - 1]
        box = nums[2 * rank - 1 : 3 * rank - 1]
        elem = nums[3 * rank - 1 : 4 * rank - 1]
        interleave, swizzle, l2, oob = nums[4 * rank - 1 : 4 * rank + 3]
        force = nums[4 * rank + 3] if len(nums) > 4 * rank + 3 else -1  # TVM's optional forced descriptor type
        self.tensormaps[mapvar] = {
            "dtype": dtype,
            "rank": rank,
            "base": int(base),
            "dims": dims,
            "strides": strides,
            "box": box,
            "elem_strides": elem,
            "interleave": interleave,
            "swizzle": swizzle,
            "l2": l2,
            "oob_fill": oob,
            "force_dtype": force,
        }
        self._check_map(mapvar, call)

    def _check_map(self, mapvar, call) -> None:
        """A tensor map cuTensorMapEncodeTiled would refuse stops the run as the host call stops a GPU run, before
        the launch: a map the emulator used anyway would load what no GPU loads."""
        from txlab import ir
        from txlab.emulator.tma import encode_problems
        from txlab.errors import KernelFault

        problems = encode_problems(self.tensormaps[mapvar])
        if problems:
            line = ir.first_user_line(call, self.user_file)
            raise KernelFault(
                "cuda_error",
                f"cuTensorMapEncodeTiled refuses tensor map {getattr(mapvar, 'name', mapvar)}"
                + (f" (line {line})" if line else "")
                + ": "
                + "; ".join(problems)
                + ". Nothing was emulated: on a GPU the host call fails before the launch.",
                cuda_error="CUDA_ERROR_INVALID_VALUE",
                hint="fix the map's arguments (sizes, strides, box, swizzle) to what the driver accepts",
            )
