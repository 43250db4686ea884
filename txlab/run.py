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

from txlab.ir.signature import Signature
from txlab.launch import bind_symbols, check_args, check_launch  # noqa: F401  (public here too)
from txlab.launch import checked_then_gpu
from txlab.launch import raise_inline_fault, timed_launches, to_device
from txlab.launch import sync as wait_for_kernel


def launch(compiled, *args, sync: bool = True, timeout_s: float | None = None):
    """Run ``compiled`` once. numpy arrays are copied in and written back in place; torch and DLPack
    tensors are passed zero-copy (inline) or staged through host memory (isolated). Returns None
    (kernels write their outputs).

    With ``txlab.config.isolation == "process"`` the kernel runs in the worker (txlab.worker): a
    fault or a hang raises :class:`txlab.KernelFault` and leaves this process and its arrays intact.
    ``timeout_s`` (isolated runs only) overrides ``txlab.config.timeout_s`` for this call."""
    from txlab.settings import config

    info = checked_then_gpu(compiled, args, f"running {compiled.name}", writes_back=True)
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        return worker.run(compiled, args, timeout_s=timeout_s)
    exe = compiled.executable
    dev_args, copies = to_device(args)
    try:
        exe(*dev_args)
    except Exception as exc:  # noqa: BLE001 - TVM's launch error (CUDALaunch Error: CUDA_ERROR_...)
        raise_inline_fault(compiled, args, str(exc))
    if sync or copies:
        wait_for_kernel(compiled, args)
    for host, tensor in copies:
        if host.flags.writeable:
            host[...] = tensor.numpy()
    return None


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
    if device == "gpu":
        checked_then_gpu(compiled, args, f"checking {compiled.name}")  # before the reference runs
    host_args = [np.array(a, copy=True) if isinstance(a, np.ndarray) else _to_numpy(a) for a in args]
    expected = reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in host_args])
    sig = getattr(compiled, "signature", None)   # txlab.Compiled has one; a @T.prim_func is read here
    params = sig.params if isinstance(sig, Signature) else _params_for(compiled)
    exp = expected_outputs(compiled, expected, outputs, params=params)
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
        results[n] = compare(got, np.asarray(want), rtol, atol)
        ok &= results[n]["ok"]
    return CheckResult(ok=bool(ok) and not findings, outputs=results, rtol=rtol, atol=atol, device=device,
                       findings=findings)


def _params_for(kernel):
    from txlab import build, ir

    mod, _ = ir.as_module(kernel, None)
    return build.params_of(mod)


def _to_numpy(a):
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().numpy()
    return a


def expected_outputs(compiled, expected, outputs=None, *, params=None) -> dict:
    """``{buffer parameter: expected array}`` from what a reference returned: a dict by name, one
    array (the last buffer parameter, or ``outputs=[name]``) or a tuple matched to ``outputs``."""
    params = compiled.params if params is None else params
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
                         f"{getattr(compiled, 'name', 'the kernel')} ({', '.join(buffers)})")
    return exp


def compare(got: np.ndarray, want: np.ndarray, rtol, atol, *, exact_integers: bool = False,
            equal_nan: bool = False) -> dict:
    """How ``got`` differs from ``want``: ``ok``, ``mismatches`` of ``size``, ``unwritten`` (NaN
    where a value was expected), ``max_abs_err``, ``rel_frobenius``, the ``first_mismatch`` index
    and its ``got``/``want``. An element matches when ``|got - want| <= atol + rtol * |want|``;
    NaN never matches, unless ``equal_nan`` (then NaN == NaN and inf == inf, as in
    ``np.isclose(equal_nan=True)``). ``exact_integers``: integer arrays must be equal.
    :func:`check` and ``txlab.api.verify`` both compare with this."""
    if got.shape != want.shape:
        raise ValueError(f"reference shape {want.shape} differs from the output's {got.shape}")
    with np.errstate(invalid="ignore", over="ignore"):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        unwritten = int(np.isnan(g).sum() - np.isnan(w).sum()) if np.issubdtype(g.dtype, np.floating) else 0
        diff = np.abs(g - w)
        if exact_integers and got.dtype.kind in "iub" and want.dtype.kind in "iub":
            bad = got.astype(np.int64) != want.astype(np.int64)
        elif equal_nan:
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
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
    from txlab.device import probe
    from txlab.settings import config

    info = checked_then_gpu(compiled, args, f"benchmarking {compiled.name}")
    check_launch(compiled, info, args)
    if config.isolation == "process":
        from txlab import worker

        times = worker.bench(compiled, args, warmup=warmup, rep=rep, flush_l2=flush_l2,
                             l2_bytes=info.l2_bytes, timeout_s=timeout_s)
    else:
        from txlab.progress import Progress

        exe = compiled.executable
        dev_args, _ = to_device(args)
        progress = Progress(f"bench {compiled.name}", total=rep, delay_s=1.0)
        try:
            times = timed_launches(exe, dev_args, warmup=warmup, rep=rep, flush_l2=flush_l2,
                                    l2_bytes=info.l2_bytes, progress=progress,
                                    on_error=lambda text: raise_inline_fault(compiled, args, text))
        finally:
            progress.close()
    return BenchResult(name=compiled.name, times_ms=[float(t) for t in times], bytes=bytes, flops=flops,
                       l2_flushed=flush_l2, device=probe().name)


__all__ = ["launch", "check", "bench", "check_args", "check_launch", "bind_symbols", "CheckResult", "BenchResult",
           "compare", "expected_outputs"]
