"""Running compiled kernels on the local GPU: argument checks, launch, correctness checks, timing.

    out = compiled(a, b)                    # numpy arrays are copied in and out; torch/DLPack zero-copy
    txlab.check(compiled, (a, b), reference=lambda a, b: a * 2)
    txlab.bench(compiled, a, b, bytes=a.nbytes * 2)

Without a GPU every entry point raises :class:`txlab.NoGPUError` saying what is missing.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

import numpy as np

from txlab.errors import InputError

_DTYPE_ALIASES = {"bool": "bool", "float": "float32", "double": "float64"}


# ---------------------------------------------------------------------------------------------
# argument checks
def _describe(param) -> str:
    if param["kind"] == "buffer":
        return f"{param['name']}: {param['dtype']}[{', '.join(map(str, param['shape']))}]"
    return f"{param['name']}: {param['dtype']}"


def _tensor_facts(value):
    """(shape, dtype, device, contiguous, data_ptr) of an array-like argument, or None."""
    if isinstance(value, np.ndarray):
        return tuple(value.shape), str(value.dtype), "host", value.flags.c_contiguous, value.ctypes.data
    mod = type(value).__module__
    if mod.startswith("torch"):
        dtype = str(value.dtype).removeprefix("torch.")
        device = "cuda" if value.is_cuda else str(value.device.type)
        return tuple(value.shape), dtype, device, value.is_contiguous(), value.data_ptr()
    if hasattr(value, "__dlpack__") or (type(value).__name__ == "Tensor" and mod.startswith("tvm")):
        import tvm

        t = value if mod.startswith("tvm") else tvm.runtime.from_dlpack(value)
        dev = "cuda" if t.device.dlpack_device_type() == 2 else "host"
        return tuple(int(s) for s in t.shape), str(t.dtype), dev, True, None
    return None


def check_args(compiled, args) -> None:
    """Reject arguments that do not match the kernel's parameters, naming the parameter."""
    params = compiled.entry_params
    sig = f"{compiled.name}({', '.join(_describe(p) for p in params)})"
    if len(args) != len(params):
        raise InputError(f"{compiled.name} takes {len(params)} argument(s), got {len(args)}: "
                         f"expected {sig}")
    bound: dict[str, int] = {}
    for i, (p, v) in enumerate(zip(params, args)):
        where = f"argument #{i} ({p['name']})"
        if v is None:
            raise InputError(f"{where} is None; expected {_describe(p)}", param=p["name"])
        if p["kind"] == "scalar":
            if _tensor_facts(v) is not None:
                raise InputError(f"{where} is an array, but {p['name']} is a scalar {p['dtype']}",
                                 param=p["name"])
            want_int = p["dtype"].startswith(("int", "uint"))
            if want_int and not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise InputError(f"{where} must be a Python int for {p['dtype']}, got {type(v).__name__}",
                                 param=p["name"])
            if not want_int and not isinstance(v, (int, float, np.floating, np.integer)):
                raise InputError(f"{where} must be a number for {p['dtype']}, got {type(v).__name__}",
                                 param=p["name"])
            if want_int:
                lo, hi = _int_range(p["dtype"])
                if not lo <= int(v) <= hi:
                    raise InputError(f"{where} = {int(v)} does not fit in {p['dtype']} "
                                     f"([{lo}, {hi}])", param=p["name"])
                prev = bound.setdefault(p["name"], int(v))
                if prev != int(v):
                    raise InputError(f"{where} is {int(v)}, but the arrays say {p['name']} = {prev}",
                                     param=p["name"])
            continue
        facts = _tensor_facts(v)
        if facts is None:
            raise InputError(f"{where} must be a numpy array, a torch tensor or a DLPack tensor "
                             f"of {_describe(p)}, got {type(v).__name__}", param=p["name"])
        shape, dtype, device, contiguous, ptr = facts
        if isinstance(v, np.ndarray) and not v.dtype.isnative:
            raise InputError(f"{where} is {v.dtype.str} (non-native byte order); the GPU reads "
                             f"little-endian {p['dtype']}: pass a.astype('{p['dtype']}')", param=p["name"])
        if dtype != p["dtype"]:
            raise InputError(f"{where} has dtype {dtype}, but {p['name']} is {p['dtype']}; "
                             f"convert it (e.g. a.astype('{p['dtype']}'))", param=p["name"])
        if len(shape) != len(p["shape"]):
            raise InputError(f"{where} has shape {shape} ({len(shape)}-d), but {p['name']} is "
                             f"{len(p['shape'])}-d: {_describe(p)}", param=p["name"])
        for axis, (got, want) in enumerate(zip(shape, p["shape"])):
            if isinstance(want, int):
                if got != want:
                    raise InputError(f"{where} has shape {shape}, but {p['name']} needs "
                                     f"{tuple(p['shape'])} (axis {axis}: {got} != {want})", param=p["name"])
            else:
                prev = bound.setdefault(want, got)
                if prev != got:
                    raise InputError(f"{where}: axis {axis} is {got}, but {want} = {prev} from an "
                                     f"earlier argument", param=p["name"])
        if device not in ("cuda", "host"):
            raise InputError(f"{where} lives on {device}; pass a CUDA tensor (zero-copy) or a numpy "
                             f"array (copied to the GPU)", param=p["name"])
        if device == "host" and not isinstance(v, np.ndarray):
            raise InputError(f"{where} is a CPU tensor; move it to the GPU (t.cuda()) or pass a numpy "
                             f"array", param=p["name"])
        if not contiguous:
            raise InputError(f"{where} is not contiguous; the kernel indexes {p['name']} as a dense "
                             f"row-major array: pass a contiguous copy (np.ascontiguousarray / .contiguous())",
                             param=p["name"])
        if ptr is not None and device == "cuda" and ptr % 16:
            raise InputError(f"{where} starts at an address that is not 16-byte aligned "
                             f"(0x{ptr:x}); slice-free or .clone() it", param=p["name"])


def _int_range(dtype: str) -> tuple[int, int]:
    bits = int("".join(ch for ch in dtype if ch.isdigit()) or 32)
    if dtype.startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def bind_symbols(compiled, args) -> dict:
    """Values of the symbolic extents (``n``, ...) implied by the scalar arguments and buffer shapes."""
    names: dict[str, int] = {}
    params = [p for p in compiled.params if p.get("function", compiled.name) == compiled.name] or compiled.params
    for p, v in zip(params, args):
        if p["kind"] == "scalar":
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                names.setdefault(p["name"], int(v))
            continue
        facts = _tensor_facts(v) if v is not None else None
        if facts is None:
            continue
        for got, want in zip(facts[0], p["shape"]):
            if isinstance(want, str) and want.isidentifier():
                names.setdefault(want, int(got))
    return names


def check_launch(compiled, info, args=()) -> None:
    """Raise ``KernelFault('launch_config')`` before launching if a kernel asks for more threads,
    shared memory, registers or cluster CTAs than the device ``info`` (a GPUInfo) offers."""
    from txlab.errors import KernelFault
    from txlab.worker import _eval_dims, _fmt_shape

    names = bind_symbols(compiled, args)
    for kname, launch in compiled.launch.items():
        shape = {"kernel": kname, **{k: _eval_dims(launch.get(k), names)
                                     for k in ("grid", "block", "cluster", "dynamic_smem_bytes")}}
        res = compiled.resources.get(kname, {})
        block = shape["block"]
        problems = []
        threads = _prod_int(block)
        if threads is not None and info.max_threads_per_block and threads > info.max_threads_per_block:
            problems.append(f"{threads} threads per block (block={tuple(block)}), the device allows "
                            f"{info.max_threads_per_block}")
        dyn = shape["dynamic_smem_bytes"] if isinstance(shape["dynamic_smem_bytes"], int) else 0
        static = int(res.get("static_smem_bytes") or 0)
        if info.max_smem_per_block_optin and static + dyn > info.max_smem_per_block_optin:
            problems.append(f"{static + dyn} bytes of shared memory per block ({static} static + {dyn} "
                            f"dynamic), the device allows {info.max_smem_per_block_optin}")
        regs = int(res.get("registers") or 0)
        if threads and regs and info.max_regs_per_block and regs * threads > info.max_regs_per_block:
            problems.append(f"{regs} registers x {threads} threads = {regs * threads} registers per "
                            f"block, the device has {info.max_regs_per_block}")
        cluster = _prod_int(shape["cluster"] or (1,))
        if cluster is not None and cluster > 16:
            problems.append(f"a cluster of {cluster} CTAs (cluster={tuple(shape['cluster'])}); "
                            f"the most a cluster can hold is 16 (8 portable)")
        grid = shape["grid"]
        if all(isinstance(g, int) for g in grid) and (grid[1] > 65535 or grid[2] > 65535):
            problems.append(f"grid={tuple(grid)}: grid y and z are limited to 65535")
        if problems:
            raise KernelFault("launch_config", f"kernel {kname} {_fmt_shape(shape)} cannot launch on "
                              f"{info.name or 'this GPU'}: " + "; ".join(problems) + ". Nothing was launched.",
                              kernel=kname, launch=shape, hint="lower the block size, shared memory "
                              "or cluster size, or cap registers (launch bounds)")


def _prod_int(values):
    out = 1
    for v in values:
        if not isinstance(v, int):
            return None
        out *= v
    return out


# ---------------------------------------------------------------------------------------------
def _to_device(args):
    """Device arguments for TVM and the (numpy array, device tensor) pairs to copy back."""
    import tvm

    dev = tvm.cuda(0)
    out, copies = [], []
    for v in args:
        if isinstance(v, np.ndarray):
            t = tvm.runtime.tensor(v, device=dev)
            copies.append((v, t))
            out.append(t)
        else:
            out.append(v)
    return out, copies


def launch(compiled, *args, sync: bool = True, timeout_s: float | None = None):
    """Run ``compiled`` once. numpy arrays are copied in and written back in place; torch and DLPack
    tensors are passed zero-copy (inline) or staged through host memory (isolated). Returns None
    (kernels write their outputs).

    With ``txlab.config.isolation == "process"`` the kernel runs in the worker (txlab.worker): a
    fault or a hang raises :class:`txlab.KernelFault` and leaves this process and its arrays intact.
    ``timeout_s`` (isolated runs only) overrides ``txlab.config.timeout_s`` for this call."""
    from txlab.device import require_gpu
    from txlab.settings import config

    info = require_gpu(f"running {compiled.name}")
    check_args(compiled, args)
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        return worker.run(compiled, args, timeout_s=timeout_s)
    exe = compiled.executable
    dev_args, copies = _to_device(args)
    try:
        exe(*dev_args)
    except Exception as exc:  # TVM's launch error (CUDALaunch Error: CUDA_ERROR_...)
        _raise_inline_fault(compiled, args, str(exc))
    if sync or copies:
        _sync(compiled, args)
    for host, tensor in copies:
        if host.flags.writeable:
            host[...] = tensor.numpy()
    return None


def _raise_inline_fault(compiled, args, text: str):
    from txlab.errors import KernelFault
    from txlab.worker import _fmt_shape, _short, classify, hint, launch_shape

    kind = classify(text)
    first = next((l for l in text.splitlines() if l.strip()), text)
    shape = launch_shape(compiled, args)
    sticky = kind in ("illegal_address", "misaligned", "trap", "illegal_instruction", "stack_overflow",
                      "timeout")
    raise KernelFault(kind, f"{compiled.name} {_fmt_shape(shape)}: {_short(first)}."
                      + (" This process's CUDA context is now unusable: restart the kernel, and use "
                         "txlab.config.isolation = 'process' to survive faults." if sticky else ""),
                      kernel=shape["kernel"] if shape else None, launch=shape, hint=hint(kind)) from None


def _sync(compiled=None, args=()):
    from cuda.bindings import runtime as rt

    (err,) = rt.cudaDeviceSynchronize()[:1]
    if err != rt.cudaError_t.cudaSuccess:
        if compiled is not None:
            _raise_inline_fault(compiled, args, err.name)
        from txlab.errors import KernelFault
        from txlab.worker import classify

        raise KernelFault(classify(err.name), f"the kernel failed: {err.name}", cuda_error=err.name)


# ---------------------------------------------------------------------------------------------
@dataclass
class CheckResult:
    """Outcome of :func:`check`: per output, the worst errors and where the first mismatch is."""

    ok: bool
    outputs: dict = field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-6
    device: str = "gpu"
    findings: list = field(default_factory=list)   # the emulator's findings (device="cpu")

    def to_dict(self) -> dict:
        return asdict(self)

    def __bool__(self):
        return self.ok

    def assert_ok(self):
        if not self.ok:
            raise AssertionError(self.summary())
        return self

    def summary(self) -> str:
        parts = []
        for name, o in self.outputs.items():
            status = "ok" if o["ok"] else "MISMATCH"
            parts.append(f"{name}: {status} (max abs {o['max_abs_err']:.3g}, rel Frobenius "
                         f"{o['rel_frobenius']:.3g}, {o['mismatches']} of {o['size']} outside "
                         f"rtol={self.rtol:g} atol={self.atol:g}"
                         + (f"; unwritten {o['unwritten']}" if o.get("unwritten") else "")
                         + (f"; first at {tuple(o['first_mismatch'])}: got {o['got']}, want {o['want']}"
                            if o["first_mismatch"] is not None else "") + ")")
        if self.device == "cpu":
            parts.append("on the CPU emulator" + (f"; {len(self.findings)} finding(s): " + "; ".join(self.findings[:3])
                                                  if self.findings else ""))
        return "; ".join(parts)

    def _repr_html_(self):
        import html

        color = "#2e7d32" if self.ok else "#c62828"
        return (f'<div style="font-family:var(--jp-code-font-family,monospace);font-size:12px">'
                f'<b style="color:{color}">{"PASS" if self.ok else "FAIL"}</b> '
                f"{html.escape(self.summary())}</div>")

    def __repr__(self):
        return f"CheckResult({'PASS' if self.ok else 'FAIL'}: {self.summary()})"


def _poison(a: np.ndarray):
    if np.issubdtype(a.dtype, np.floating) or a.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        a[...] = np.nan
    else:
        a.view(np.uint8)[...] = 0xA5


def check(compiled, args, reference, *, outputs=None, rtol: float = 1e-5, atol: float = 1e-6,
          timeout_s: float | None = None, device: str | None = None) -> CheckResult:
    """Run the kernel on copies of ``args`` and compare with ``reference``.

    ``reference(*args)`` gets numpy copies of the inputs and returns the expected output: one array
    (compared with the last buffer parameter, or with ``outputs=[name]``), a tuple (matched to
    ``outputs``), or a dict ``{param_name: array}``. Output buffers are poisoned (NaN / 0xA5) before
    the launch, so unwritten elements are caught. In isolated mode the run happens in the worker
    (a fault raises :class:`txlab.KernelFault`; ``timeout_s`` bounds the kernel).
    ``device="cpu"`` (or ``txlab.config.device = "cpu"``) runs it on the CPU emulator
    (:func:`txlab.emulate`) instead; its findings are in ``CheckResult.findings``.
    """
    from txlab.settings import config

    device = device or config.device
    if device not in ("gpu", "cpu"):
        raise ValueError(f"device must be 'gpu' or 'cpu', not {device!r}")
    host_args = [np.array(a, copy=True) if isinstance(a, np.ndarray) else _to_numpy(a) for a in args]
    expected = reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in host_args])
    params = compiled.params if type(compiled).__name__ == "Compiled" else _params_for(compiled)
    buffers = [p["name"] for p in params if p["kind"] == "buffer"]
    if isinstance(expected, dict):
        exp = dict(expected)
    else:
        names = list(outputs) if outputs else [buffers[-1]]
        values = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        if len(values) != len(names):
            raise ValueError(f"reference returned {len(values)} value(s) for outputs {names}; "
                             "pass outputs=[...] naming each returned buffer")
        exp = dict(zip(names, values))
    unknown = [n for n in exp if n not in buffers]
    if unknown:
        raise ValueError(f"reference returned {unknown}, which are not buffer parameters of "
                         f"{compiled.name} ({', '.join(buffers)})")
    index = {p["name"]: i for i, p in enumerate(params)}
    for n in exp:
        _poison(host_args[index[n]])
    findings = []
    if device == "cpu":
        from txlab.emulator import emulate

        findings = [str(f) for f in emulate(compiled, *host_args).findings]
    else:
        launch(compiled, *host_args, timeout_s=timeout_s)
    results, ok = {}, True
    for n, want in exp.items():
        got = host_args[index[n]]
        results[n] = _compare(got, np.asarray(want), rtol, atol)
        ok &= results[n]["ok"]
    return CheckResult(ok=bool(ok) and not findings, outputs=results, rtol=rtol, atol=atol, device=device,
                       findings=findings)


def _params_for(kernel):
    from txlab import compiler

    mod, _ = compiler._as_module(kernel, None)
    return compiler._params_of(mod)


def _to_numpy(a):
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().numpy()
    return a


def _compare(got: np.ndarray, want: np.ndarray, rtol, atol) -> dict:
    if got.shape != want.shape:
        raise ValueError(f"reference shape {want.shape} differs from the output's {got.shape}")
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    unwritten = int(np.isnan(g).sum() - np.isnan(w).sum()) if np.issubdtype(g.dtype, np.floating) else 0
    diff = np.abs(g - w)
    bad = ~(diff <= atol + rtol * np.abs(w))
    bad |= np.isnan(g) & ~np.isnan(w)
    first = np.argwhere(bad)[0].tolist() if bad.any() else None
    norm = float(np.linalg.norm(w.ravel()))
    rel = float(np.linalg.norm(np.nan_to_num(g - w, nan=np.inf).ravel()) / norm) if norm else float(
        np.nanmax(diff) if diff.size else 0.0)
    return {
        "ok": not bool(bad.any()),
        "size": int(g.size),
        "mismatches": int(bad.sum()),
        "unwritten": max(unwritten, 0),
        "max_abs_err": float(np.nanmax(np.where(np.isnan(diff), np.inf, diff))) if diff.size else 0.0,
        "rel_frobenius": rel,
        "first_mismatch": first,
        "got": None if first is None else float(g[tuple(first)]),
        "want": None if first is None else float(w[tuple(first)]),
    }


# ---------------------------------------------------------------------------------------------
@dataclass
class BenchResult:
    """Kernel time over ``rep`` launches (CUDA events, L2 flushed before each), in milliseconds."""

    name: str
    times_ms: list
    bytes: int | None = None
    flops: int | None = None
    l2_flushed: bool = True
    device: str = ""

    @property
    def median_ms(self):
        return statistics.median(self.times_ms)

    @property
    def p10_ms(self):
        return float(np.percentile(self.times_ms, 10))

    @property
    def p90_ms(self):
        return float(np.percentile(self.times_ms, 90))

    @property
    def gbps(self):
        return None if not self.bytes else self.bytes / (self.median_ms * 1e-3) / 1e9

    @property
    def tflops(self):
        return None if not self.flops else self.flops / (self.median_ms * 1e-3) / 1e12

    @property
    def intensity(self):
        return None if not (self.bytes and self.flops) else self.flops / self.bytes

    def to_dict(self) -> dict:
        return {"name": self.name, "median_ms": self.median_ms, "p10_ms": self.p10_ms,
                "p90_ms": self.p90_ms, "min_ms": min(self.times_ms), "rep": len(self.times_ms),
                "gbps": self.gbps, "tflops": self.tflops, "bytes": self.bytes, "flops": self.flops,
                "l2_flushed": self.l2_flushed, "device": self.device}

    def __repr__(self):
        extra = ""
        if self.gbps:
            extra += f", {self.gbps:,.0f} GB/s"
        if self.tflops:
            extra += f", {self.tflops:,.1f} TFLOP/s"
        return (f"<BenchResult {self.name}: median {self.median_ms * 1000:.1f} µs "
                f"(p10 {self.p10_ms * 1000:.1f}, p90 {self.p90_ms * 1000:.1f}, n={len(self.times_ms)}){extra}>")

    def _repr_html_(self):
        import html

        return f"<pre>{html.escape(repr(self))}</pre>"

    def plot(self, ax=None):
        """Histogram of the per-launch times."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 2.4))
        ax.hist([t * 1000 for t in self.times_ms], bins=30)
        ax.axvline(self.median_ms * 1000, color="k", lw=1, label="median")
        ax.set_xlabel("µs per launch")
        ax.set_title(self.name)
        ax.legend()
        return ax.figure

    def roofline(self, ceilings=None, ax=None):
        """This result on the roofline of the measured device (see txlab.roofline.measure)."""
        from txlab.roofline import plot_roofline

        return plot_roofline([self], ceilings=ceilings, ax=ax)


def bench(compiled, *args, warmup: int = 10, rep: int = 100, bytes: int | None = None,  # noqa: A002
          flops: int | None = None, flush_l2: bool = True, timeout_s: float | None = None) -> BenchResult:
    """Time ``compiled(*args)``: ``warmup`` untimed launches, then ``rep`` launches each timed with
    CUDA events on the launch stream, the L2 cache flushed (a write over twice its size) before
    each. Give ``bytes`` / ``flops`` moved per launch to get GB/s and TFLOP/s. In isolated mode the
    timing runs in the worker; ``timeout_s`` is the budget of each launch."""
    from txlab.device import probe, require_gpu
    from txlab.settings import config

    info = require_gpu(f"benchmarking {compiled.name}")
    check_args(compiled, args)
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        times = worker.bench(compiled, args, warmup=warmup, rep=rep, flush_l2=flush_l2,
                             l2_bytes=info.l2_bytes, timeout_s=timeout_s)
    else:
        from txlab.progress import Progress

        exe = compiled.executable
        dev_args, _ = _to_device(args)
        progress = Progress(f"bench {compiled.name}", total=rep, delay_s=1.0)
        try:
            times = _timed_launches(exe, dev_args, warmup=warmup, rep=rep, flush_l2=flush_l2,
                                    l2_bytes=info.l2_bytes, progress=progress,
                                    on_error=lambda text: _raise_inline_fault(compiled, args, text))
        finally:
            progress.close()
    return BenchResult(name=compiled.name, times_ms=[float(t) for t in times], bytes=bytes, flops=flops,
                       l2_flushed=flush_l2, device=probe().name)


def _timed_launches(exe, dev_args, *, warmup: int, rep: int, flush_l2: bool, l2_bytes: int,
                    progress=None, beat=None, on_error=None) -> list[float]:
    """The timing loop shared by inline and isolated runs. ``beat(i)`` (the worker's heartbeat) is
    called as each launch completes; without it the launches are queued back to back."""
    from cuda.bindings import runtime as rt

    from txlab.device import cuda_ok

    def fail(text):
        if on_error is not None:
            on_error(text)
        from txlab.errors import KernelFault
        from txlab.worker import classify

        raise KernelFault(classify(text), f"benchmark launch failed: {text}")

    def _check(res):
        return cuda_ok(res, fail)

    def run_once():
        try:
            exe(*dev_args)
        except Exception as exc:  # noqa: BLE001 - TVM launch errors carry the CUDA error name
            fail(str(exc))

    flush = None  # (device pointer, bytes) of a buffer twice the L2 size, rewritten before each launch
    if flush_l2:
        nbytes = max(2 * (l2_bytes or 64 << 20), 128 << 20)
        flush = (_check(rt.cudaMalloc(nbytes)), nbytes)
    start = [_check(rt.cudaEventCreate()) for _ in range(rep)]
    end = [_check(rt.cudaEventCreate()) for _ in range(rep)]
    try:
        for _ in range(warmup):
            run_once()
            if beat is not None:
                _check(rt.cudaDeviceSynchronize())
                beat(-1)
        _check(rt.cudaDeviceSynchronize())
        for i in range(rep):
            if flush is not None:
                _check(rt.cudaMemsetAsync(flush[0], i & 0xFF, flush[1], 0))
            _check(rt.cudaEventRecord(start[i], 0))
            run_once()
            _check(rt.cudaEventRecord(end[i], 0))
            if progress is not None and i % 16 == 15:
                progress.update(f"{i + 1}/{rep}", advance=16)
        if beat is not None:
            for i, ev in enumerate(end):
                _check(rt.cudaEventSynchronize(ev))
                beat(i)
        _check(rt.cudaDeviceSynchronize())
        return [float(_check(rt.cudaEventElapsedTime(s, e))) for s, e in zip(start, end)]
    finally:
        for ev in start + end:
            rt.cudaEventDestroy(ev)
        if flush is not None:
            rt.cudaFree(flush[0])


__all__ = ["launch", "check", "bench", "check_args", "check_launch", "bind_symbols", "CheckResult", "BenchResult"]
