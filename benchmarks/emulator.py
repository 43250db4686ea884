"""CPU emulator speed: cost per executed IR statement per lane, and wall time of representative
kernels against the issue's targets (1M-element elementwise <= 0.1 s; a 4096x256 row softmax <= 1 s;
the Hopper GEMM at 256x256x128 <= 5 s; tour kernels <= 1 s each).
Baseline measured in the same run: numpy doing the same elementwise work directly.

    PYTHONPATH=. python benchmarks/emulator.py      # table + benchmarks/results/emulator.json
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np


def _kernel(src, name):
    from txlab.magic import register_source, tirx_namespace

    fn = register_source(src, tag=f"bench-{name}")
    ns = tirx_namespace()
    exec(compile(src, fn, "exec"), ns)  # noqa: S102
    return ns[name]


def _time(fn, rep=3):
    best = float("inf")
    for _ in range(rep):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def notebook_kernels(path="notebooks/01_first_kernel.ipynb"):
    """The ``%%tirx`` cells of a notebook, compiled as the notebook does (name -> prim_func)."""
    nb = json.loads((Path(__file__).resolve().parents[1] / path).read_text())
    out = {}
    for c in nb["cells"]:
        src = "".join(c["source"])
        if src.startswith("%%tirx"):
            body = src.split("\n", 1)[1]
            name = body.split("def ", 1)[1].split("(", 1)[0]
            out[name] = _kernel(body, name)
    return out


def main():
    from txlab.api import examples
    from txlab.emulator import emulate
    import txlab.emulator.program as P

    rows = []

    def row(label, sec, res, target, base=None, unbatched=None):
        li = res.stats["lane_instructions"]
        rows.append(
            {
                "kernel": label,
                "seconds": sec,
                "target_s": target,
                "lane_instructions": li,
                "ns_per_lane_instruction": sec / max(li, 1) * 1e9,
                "numpy_seconds": base,
                "x_numpy": sec / base if base else None,
                "lower_seconds": res.stats["lower_seconds"],
                "ctas_per_batch": res.stats.get("ctas_per_batch", 1),
                "unbatched_seconds": unbatched,
            }
        )

    nbk = notebook_kernels()  # the tour's kernels, as notebook 01 compiles them
    scale = nbk["scale"]
    rng = np.random.default_rng(0)
    for n, target, label in [
        (1 << 20, 0.1, "elementwise 1M (tour `scale`)"),
        (1 << 24, 1.0, "tour `scale` at the tour's n = 2^24"),
    ]:
        a = rng.standard_normal(n).astype(np.float32)
        b = np.zeros_like(a)
        emulate(scale, a[:1024], b[:1024], 1024)
        sec, res = _time(lambda: emulate(scale, a, b, n), rep=3)
        assert np.array_equal(b, 2 * a)
        base, _ = _time(lambda: np.multiply(a, np.float32(2), out=b))
        unb = None
        if n == 1 << 20:  # the same kernel CTA by CTA (no batching), measured in this run
            saved, P.MAX_BATCH_LANES = P.MAX_BATCH_LANES, 1
            try:
                unb, _ = _time(lambda: emulate(scale, a, b, n), rep=1)
            finally:
                P.MAX_BATCH_LANES = saved
        row(label, sec, res, target, base, unb)
    X = rng.standard_normal((4096, 256), dtype=np.float32)
    out = np.zeros(4096, np.float32)
    sec, res = _time(lambda: emulate(nbk["row_sum_smem"], X, out), rep=1)
    assert np.allclose(out, X.sum(axis=1), rtol=1e-4, atol=1e-4) and res.ok, res.summary()
    row("notebook 01 row_sum_smem 4096x256 (shared, races checked)", sec, res, 1.0)
    sec, res = _time(lambda: emulate(nbk["row_sum_smem"], X, out, check=False), rep=1)
    row("notebook 01 row_sum_smem, check=False", sec, res, 1.0)
    X = rng.standard_normal(1 << 20, dtype=np.float32)
    out = np.zeros(1 << 15, np.float32)
    sec, res = _time(lambda: emulate(nbk["warp_sums"], X, out), rep=1)
    assert np.allclose(out, X.reshape(-1, 32).sum(axis=1), rtol=1e-4, atol=1e-4)
    row("notebook 01 warp_sums 1M", sec, res, 1.0)
    from txlab.examples import everyday, hopper_gemm as hg

    X = (rng.standard_normal((4096, 256)) * 3).astype(np.float32)
    Y = np.zeros_like(X)
    sm = everyday.kernel("softmax", rows=4096, cols=256)
    sec, res = _time(lambda: emulate(sm, X, Y), rep=1)
    assert np.allclose(Y, everyday.reference("softmax")(X, Y), rtol=1e-5, atol=1e-7) and res.ok
    row("row softmax 4096x256 (txlab.examples.everyday, fast math)", sec, res, 1.0)
    try:
        import ml_dtypes

        M = N = 256
        K = 128
        ga = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
        gb = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
        gc = np.zeros((M, N), ml_dtypes.bfloat16)
        gk = hg.gemm_kernel(M, N, K, hg.parse_config("128x128x64_s2_c2", num_sms=4))
        sec, res = _time(lambda: emulate(gk, ga, gb, gc, arch="sm_90a"), rep=1)
        assert res.ok, res.summary()
        row("Hopper GEMM 256x256x128 (128x128x64_s2_c2, 4 SMs)", sec, res, 5.0)
    except ImportError:
        pass
    ex = examples()
    for eid in ("warp_reductions", "cta_reductions", "warp_vote", "role_pipeline", "tma_tile"):
        e = ex[eid]
        args = e.inputs()
        f = e.prim_func()
        sec, res = _time(lambda: emulate(f, *[x.copy() if isinstance(x, np.ndarray) else x for x in args], arch=e.arch))
        row(f"catalogue {eid} ({res.stats['mode']})", sec, res, 1.0)
    print(
        f"{'kernel':58s} {'seconds':>8s} {'target':>7s} {'lane-instr':>11s} {'ns/lane-instr':>13s} "
        f"{'x numpy':>8s} {'CTAs/batch':>10s} {'unbatched s':>11s}"
    )
    for r in rows:
        tgt = f"{r['target_s']:.1f}" if r["target_s"] else "-"
        xn = f"{r['x_numpy']:.0f}" if r["x_numpy"] else "-"
        ok = "" if r["target_s"] is None else ("  ok" if r["seconds"] <= r["target_s"] else "  OVER")
        ub = f"{r['unbatched_seconds']:.3f}" if r["unbatched_seconds"] else "-"
        print(
            f"{r['kernel']:58s} {r['seconds']:8.3f} {tgt:>7s} {r['lane_instructions']:11,d} "
            f"{r['ns_per_lane_instruction']:13.1f} {xn:>8s} {r['ctas_per_batch']:10d} {ub:>11s}{ok}"
        )
    out = Path(__file__).parent / "results" / "emulator.json"
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
