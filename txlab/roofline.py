"""The measured device's ceilings (memory bandwidth, matrix rate) and a roofline plot of results.

Ceilings are measured on the GPU in this process, not taken from a datasheet: bandwidth by a large
device-to-device copy (bytes read + written), the bf16 matrix rate by torch.matmul when torch is
installed (otherwise that ceiling is omitted and the plot says so).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Ceilings:
    device: str
    bandwidth_gbps: float
    bf16_tflops: float | None
    source: str

    def to_dict(self):
        return asdict(self)


_cached: Ceilings | None = None


def measure(nbytes: int = 2 << 30, rep: int = 20) -> Ceilings:
    """Measure the local GPU's copy bandwidth (and bf16 matmul rate when torch is present)."""
    global _cached
    if _cached is not None:
        return _cached
    from cuda.bindings import runtime as rt

    from txlab.device import cuda_ok as ok
    from txlab.device import require_gpu

    info = require_gpu("measuring the roofline")

    src = ok(rt.cudaMalloc(nbytes))
    dst = ok(rt.cudaMalloc(nbytes))
    try:
        ok(rt.cudaMemset(src, 1, nbytes))
        for _ in range(3):
            ok(rt.cudaMemcpy(dst, src, nbytes, rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice))
        start, end = ok(rt.cudaEventCreate()), ok(rt.cudaEventCreate())
        ok(rt.cudaEventRecord(start, 0))
        for _ in range(rep):
            ok(rt.cudaMemcpyAsync(dst, src, nbytes, rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice, 0))
        ok(rt.cudaEventRecord(end, 0))
        ok(rt.cudaEventSynchronize(end))
        ms = ok(rt.cudaEventElapsedTime(start, end)) / rep
        bw = 2 * nbytes / (ms * 1e-3) / 1e9
    finally:
        rt.cudaFree(src)
        rt.cudaFree(dst)
    tflops = None
    source = "copy: cudaMemcpyAsync D2D"
    try:
        import torch

        n = 8192
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            a @ b
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(10):
            a @ b
        e.record()
        torch.cuda.synchronize()
        tflops = 2 * n**3 / (s.elapsed_time(e) / 10 * 1e-3) / 1e12
        source += "; matrix: torch.matmul bf16 8192^3 on random data"
    except ImportError:
        source += "; matrix: not measured (torch is not installed)"
    _cached = Ceilings(device=info.name, bandwidth_gbps=bw, bf16_tflops=tflops, source=source)
    return _cached


def plot_roofline(results, ceilings: Ceilings | None = None, ax=None):
    """Each result (a BenchResult with bytes and flops) at its arithmetic intensity and rate."""
    import matplotlib.pyplot as plt
    import numpy as np

    if ceilings is None:
        ceilings = measure()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    bw = ceilings.bandwidth_gbps * 1e9
    peak = (ceilings.bf16_tflops or 0) * 1e12
    x = np.logspace(-2, 4, 200)
    roof = x * bw if not peak else np.minimum(x * bw, peak)
    ax.loglog(x, roof / 1e12, "k-", lw=1.5, label=f"measured roof ({ceilings.device})")
    for r in results:
        if r.bytes and r.flops:
            ax.plot(r.intensity, r.tflops, "o", label=f"{r.name}: {r.tflops:.1f} TFLOP/s")
        elif r.bytes:
            ax.axhline(0, alpha=0)
            ax.annotate(
                f"{r.name}: {r.gbps:,.0f} GB/s ({100 * r.gbps * 1e9 / bw:.0f}% of copy)",
                xy=(0.02, 0.9),
                xycoords="axes fraction",
                fontsize=8,
            )
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("roofline: " + ceilings.source, fontsize=7)
    ax.legend(fontsize=7)
    return ax.figure
