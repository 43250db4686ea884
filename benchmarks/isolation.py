"""Isolated GPU runs: worker round-trip overhead vs inline, fault recovery time, and 200 faulting
launches followed by a good one (worker replaced each time; GPU memory and processes checked).

    python benchmarks/isolation.py            # needs a CUDA GPU
    python benchmarks/isolation.py --faults 50

Prints a table of measured numbers next to the targets of issue 3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRIVIAL = """
@T.prim_func
def add_one(A: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    A[bx * 256 + tx] = A[bx * 256 + tx] + T.float32(1.0)
"""
FAULTING = """
@T.prim_func
def oob_far_write(A: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    A[T.int64(tx) + (T.int64(1) << T.int64(42))] = T.float32(1.0)
"""


def _children() -> list[str]:
    parents = {str(os.getpid())}
    rows = subprocess.run(["ps", "-eo", "stat=,ppid=,pid="], capture_output=True, text=True).stdout
    return [r for r in rows.splitlines() if r.split()[1] in parents and "ps" not in r]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faults", type=int, default=200)
    ap.add_argument("--reps", type=int, default=300)
    opts = ap.parse_args()

    import txlab
    from txlab import worker
    from txlab.magic import run_cell

    if not txlab.device.has_gpu():
        print(f"skipped: needs a CUDA GPU ({txlab.device.probe().reason})")
        return 0
    (good,) = run_cell(TRIVIAL, {}).values()
    (bad,) = run_cell(FAULTING, {}).values()
    a = np.zeros(1024, np.float32)
    rows = []

    # 1. round trip, inline vs worker (same kernel, same array, both warm)
    def timed(n):
        out = []
        for _ in range(n):
            t = time.perf_counter()
            good(a)
            out.append((time.perf_counter() - t) * 1e3)
        return out

    txlab.config.isolation = "inline"
    timed(20)
    inline = timed(opts.reps)
    txlab.config.isolation = "process"
    t = time.perf_counter()
    good(a)
    first = time.perf_counter() - t
    timed(20)
    iso = timed(opts.reps)
    overhead = statistics.median(iso) - statistics.median(inline)
    rows.append(("trivial launch, inline (median ms)", statistics.median(inline), None))
    rows.append(("trivial launch, worker (median ms)", statistics.median(iso), None))
    rows.append(("worker overhead vs inline (median ms)", overhead, "<= 2 ms"))
    rows.append(("first isolated run incl. worker start (s)", first, None))

    # 2. recovery: fault, then time until a good run has completed
    base_mem = worker.device_memory()["free_bytes"]
    base_children = len(_children())
    rec = []
    for _ in range(5):
        try:
            bad(np.zeros(256, np.float32))
        except txlab.KernelFault as e:
            assert e.kind == "illegal_address", e
        t = time.perf_counter()
        good(a)
        rec.append(time.perf_counter() - t)
    rows.append(("recovery after illegal_address (median s)", statistics.median(rec), "<= 3 s"))
    rows.append(("  recovery, max of 5 (s)", max(rec), None))
    _print(rows)  # printed now too, so a run cut short still reports the first two sections

    # 3. throughput: N faulting launches then a good one
    kinds = {}
    t = time.perf_counter()
    for i in range(opts.faults):
        try:
            bad(np.zeros(256, np.float32))
        except txlab.KernelFault as e:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        if i % 25 == 24:
            print(f"  {i + 1} faults in {time.perf_counter() - t:.1f} s", flush=True)
    a[:] = 0
    good(a)
    total = time.perf_counter() - t
    ok = bool((a == 1).all())
    mem = worker.device_memory()["free_bytes"]
    children = _children()
    zombies = [c for c in children if c.split()[0].startswith("Z")]
    rows.append((f"{opts.faults} faults + 1 good run (s)", total, None))
    rows.append(("  faults per second", opts.faults / total, None))
    rows.append(("  kinds", str(kinds), f"all illegal_address ({opts.faults})"))
    rows.append(("  good run after them correct", str(ok), "True"))
    rows.append(("  GPU free memory vs baseline (MiB)", (mem - base_mem) / 2**20, "~0"))
    rows.append(("  child processes (baseline -> now)", f"{base_children} -> {len(children)}", "equal"))
    rows.append(("  zombies", len(zombies), "0"))

    _print(rows)
    status = worker.status()
    print(f"worker: {status}")
    import json
    import platform

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "isolation.json")
    with open(out, "w") as fh:
        json.dump(
            {
                "device": txlab.device.probe().name,
                "date": time.strftime("%Y-%m-%d"),
                "host": platform.node(),
                "faults": opts.faults,
                "reps": opts.reps,
                "rows": [{"measure": n, "value": v, "target": t} for n, v, t in rows],
                "recovery_s": rec,
                "worker": {k: v for k, v in status.items() if k != "pid"},
            },
            fh,
            indent=1,
            default=str,
        )
    print(f"wrote {out}")
    return 0


def _print(rows):
    print(f"{'measure':46s} {'value':>16s}  target")
    for name, value, target in rows:
        v = f"{value:16.3f}" if isinstance(value, float) else f"{value!s:>16s}"
        print(f"{name:46s} {v}  {target or ''}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
