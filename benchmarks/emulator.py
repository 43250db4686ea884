"""CPU emulator speed: cost per executed IR statement per lane, and wall time of representative
kernels against the issue's targets (1M-element elementwise <= 2 s; tour kernels <= 1 s each).
Baseline measured in the same run: numpy doing the same elementwise work directly.

    PYTHONPATH=. python benchmarks/emulator.py      # table + benchmarks/results/emulator.json
"""
from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np

SCALE = '''
@T.prim_func
def scale(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < n:
        B[i] = A[i] * T.float32(2.0)
'''


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


def main():
    from txlab.api import examples
    from txlab.emulator import emulate

    rows = []
    scale = _kernel(SCALE, "scale")
    for n, target, label in [(1 << 20, 2.0, "elementwise 1M (tour `scale`)"),
                             (1 << 24, None, "tour `scale` at the tour's n = 2^24")]:
        a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        b = np.zeros_like(a)
        emulate(scale, a[:1024], b[:1024], 1024)  # warm: lowering cached by TVM? (no: measured below)
        sec, res = _time(lambda: emulate(scale, a, b, n), rep=1 if n > 1 << 20 else 3)
        assert np.array_equal(b, 2 * a)
        base, _ = _time(lambda: np.multiply(a, np.float32(2), out=b))
        li = res.stats["lane_instructions"]
        rows.append({"kernel": label, "seconds": sec, "target_s": target, "lane_instructions": li,
                     "ns_per_lane_instruction": sec / li * 1e9, "numpy_seconds": base,
                     "x_numpy": sec / base, "lower_seconds": res.stats["lower_seconds"]})
    ex = examples()
    for eid in ("warp_reductions", "cta_reductions", "warp_vote", "role_pipeline", "tma_tile"):
        e = ex[eid]
        args = e.inputs()
        f = e.prim_func()
        sec, res = _time(lambda: emulate(f, *[x.copy() if isinstance(x, np.ndarray) else x for x in args],
                                         arch=e.arch))
        li = res.stats["lane_instructions"]
        rows.append({"kernel": f"catalogue {eid} ({res.stats['mode']})", "seconds": sec, "target_s": 1.0,
                     "lane_instructions": li, "ns_per_lane_instruction": sec / max(li, 1) * 1e9,
                     "numpy_seconds": None, "x_numpy": None, "lower_seconds": res.stats["lower_seconds"]})
    print(f"{'kernel':48s} {'seconds':>8s} {'target':>7s} {'lane-instr':>11s} {'ns/lane-instr':>13s} {'x numpy':>8s}")
    for r in rows:
        tgt = f"{r['target_s']:.1f}" if r["target_s"] else "-"
        xn = f"{r['x_numpy']:.0f}" if r["x_numpy"] else "-"
        ok = "" if r["target_s"] is None else ("  ok" if r["seconds"] <= r["target_s"] else "  OVER")
        print(f"{r['kernel']:48s} {r['seconds']:8.3f} {tgt:>7s} {r['lane_instructions']:11,d} "
              f"{r['ns_per_lane_instruction']:13.1f} {xn:>8s}{ok}")
    out = Path(__file__).parent / "results" / "emulator.json"
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "rows": rows}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
