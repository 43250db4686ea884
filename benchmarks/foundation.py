"""Foundation benchmarks: import time, cold compile (per stage), warm %%tirx path, and on a GPU
txlab.bench against triton.testing.do_bench for a copy kernel. Prints a table; writes
benchmarks/results/foundation-<host kind>.json.

    python benchmarks/foundation.py [--gpu-only]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KERNELS = (ROOT / "tests" / "kernels" / "basics.py").read_text()

COPY = """
@T.prim_func
def copy4(A: T.Buffer((1 << 28,), "float32"), B: T.Buffer((1 << 28,), "float32")):
    T.device_entry()
    bx = T.cta_id([(1 << 28) // 1024])
    tx = T.thread_id([256])
    for v in T.vectorized(4):
        B[bx * 1024 + tx * 4 + v] = A[bx * 1024 + tx * 4 + v]
"""

rows: list[tuple] = []
results: dict = {}


def row(what, value, target="", ok=None):
    rows.append((what, value, target, "" if ok is None else ("PASS" if ok else "MISS")))


def import_time() -> float:
    times = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", "import time; t=time.perf_counter(); import txlab; print(time.perf_counter()-t)"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def cold_compiles():
    import tvm  # noqa: F401  (imported once, outside the per-kernel timings)

    from txlab.magic import run_cell

    out = {}
    for chunk in KERNELS.split("\n\n@T.prim_func"):
        src = chunk if chunk.lstrip().startswith(("@", "#")) else "@T.prim_func" + chunk
        t = time.perf_counter()
        ((name, c),) = run_cell(src, {}, arch="sm_90a", use_cache=False).items()
        _ = c.sass  # SASS is lazy now: ask for it, as the old path always produced it
        total = time.perf_counter() - t
        stages = dict(c.timings)
        stages["parse"] = max(total - sum(stages.values()), 0.0)
        out[name] = {"total_s": total, **{f"{k}_s": v for k, v in stages.items()}}
    return out


def cold_to_resources(repeats: int = 3) -> dict:
    """Cold %%tirx of the tour kernels until the resources panel is rendered, side by side:
    ``eager`` = the old path (SASS disassembled during the compile, as before lazy SASS),
    ``lazy`` = today's (nvdisasm only when SASS/the map is asked for). Median of ``repeats``
    alternating runs, each in a fresh cache; same kernels, same process."""
    import tvm  # noqa: F401

    from txlab import sourcemap
    from txlab.display import compiled_html
    from txlab.magic import run_cell

    chunks = []
    for chunk in KERNELS.split("\n\n@T.prim_func"):
        chunks.append(chunk if chunk.lstrip().startswith(("@", "#")) else "@T.prim_func" + chunk)

    def one(eager: bool) -> float:
        from txlab import magic

        os.environ["TXLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="txlab-bench-")
        magic.forget_cells()  # cold: neither the disk cache nor the unchanged-cell memo
        t = time.perf_counter()
        for src in chunks:
            for c in run_cell(src, {}, arch="sm_90a", use_cache=True).values():
                if eager:
                    sourcemap.ensure_sass(c)  # what every cold compile paid before
                compiled_html(c, show=["resources"])
        return time.perf_counter() - t

    one(False)  # warm the imports and TVM's parser once
    eager, lazy = [], []
    for _ in range(repeats):
        eager.append(one(True))
        lazy.append(one(False))
    e, l = statistics.median(eager), statistics.median(lazy)
    return {"eager_s": e, "lazy_s": l, "saving": 1 - l / e, "eager_all": eager, "lazy_all": lazy}


def warm_cell() -> float:
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython()
    ip.run_line_magic("load_ext", "txlab")
    cell = KERNELS.split("\n\n@T.prim_func")[0]
    ip.run_cell_magic("tirx", "--arch sm_90a --quiet", cell)
    times = []
    for _ in range(20):
        t = time.perf_counter()
        ip.run_cell_magic("tirx", "--arch sm_90a --quiet", cell)
        times.append(time.perf_counter() - t)
    assert ip.user_ns["scale"].cache_hit
    return statistics.median(times)


def gpu_bench_vs_triton():
    import numpy as np
    import torch
    import triton.testing

    import txlab
    from txlab.magic import run_cell

    c = run_cell(COPY, {})["copy4"]
    n = 1 << 28
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    c(a, b)
    torch.cuda.synchronize()
    assert torch.equal(a, b), "copy kernel is wrong"
    ours = txlab.bench(c, a, b, bytes=2 * a.numel() * 4, warmup=10, rep=100)
    exe = c.executable
    theirs_ms = triton.testing.do_bench(lambda: exe(a, b), warmup=50, rep=500, return_mode="median")
    torch_ms = triton.testing.do_bench(lambda: b.copy_(a), warmup=50, rep=500, return_mode="median")
    return {
        "txlab_median_ms": ours.median_ms,
        "triton_do_bench_median_ms": theirs_ms,
        "torch_copy_median_ms": torch_ms,
        "txlab_gbps": ours.gbps,
        "torch_gbps": 2 * n * 4 / (torch_ms * 1e-3) / 1e9,
        "ratio": ours.median_ms / theirs_ms,
        "device": ours.device,
        "np": np.__version__,
    }


def main():
    gpu_only = "--gpu-only" in sys.argv
    os.environ["TXLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="txlab-bench-")
    from txlab.device import probe

    if not gpu_only:
        t = import_time()
        results["import_txlab_s"] = t
        row("import txlab (median of 5, fresh interpreter)", f"{t * 1000:.1f} ms", "<= 1500 ms", t <= 1.5)
        cold = cold_compiles()
        results["cold_compile"] = cold
        for name, d in cold.items():
            split = ", ".join(f"{k[:-2]} {v * 1000:.0f}" for k, v in d.items() if k != "total_s")
            to_cubin = d["total_s"] - d.get("disasm_s", 0.0)
            row(f"cold compile {name} to cubin (ms: {split})", f"{to_cubin:.2f} s", "<= 3 s", to_cubin <= 3.0)
            row(f"  ... and to SASS as well", f"{d['total_s']:.2f} s")
        lz = cold_to_resources()
        results["cold_to_resources_panel"] = lz
        row("cold %%tirx of the tour kernels -> resources panel, eager SASS (old path)", f"{lz['eager_s']:.2f} s")
        row("  ... lazy SASS (nvdisasm on first SASS/map use)", f"{lz['lazy_s']:.2f} s")
        row("  wall time saved by lazy SASS", f"{lz['saving']:.0%}", ">= 35%", lz["saving"] >= 0.35)
        w = warm_cell()
        results["warm_cell_s"] = w
        row("re-run unchanged %%tirx cell (median of 20)", f"{w * 1000:.1f} ms", "<= 50 ms", w <= 0.05)
    info = probe()
    if info.available:
        g = gpu_bench_vs_triton()
        results["gpu"] = g
        row(f"copy 1 GiB on {g['device']}: txlab.bench median", f"{g['txlab_median_ms']:.3f} ms")
        row("  triton.testing.do_bench median (same executable)", f"{g['triton_do_bench_median_ms']:.3f} ms")
        dev = abs(g["ratio"] - 1)
        row("  txlab.bench / do_bench", f"{g['ratio']:.3f}", "within 3%", dev <= 0.03)
        row("  txlab copy GB/s vs torch copy_ GB/s", f"{g['txlab_gbps']:.0f} / {g['torch_gbps']:.0f}")
    else:
        row("GPU comparisons", f"skipped: {info.reason}")
    width = max(len(r[0]) for r in rows)
    print(f"\n{'measurement':<{width}}  {'value':>12}  {'target':>10}  result")
    for what, value, target, ok in rows:
        print(f"{what:<{width}}  {value:>12}  {target:>10}  {ok}")
    kind = "gpu" if info.available else "cpu"
    results["host"] = {
        "gpu": info.name if info.available else None,
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    out = ROOT / "benchmarks" / "results" / f"foundation-{kind}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    print(f"\nwrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
