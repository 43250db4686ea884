"""What choosing a GEMM configuration costs on the CPU, without a GPU: ``hopper_gemm.explain(M, N, K)`` (the shipped
table, else the time model corrected by the measured neighbours). Target: < 50 ms per shape, a process's first
included.

    .venv/bin/python benchmarks/gemm_choice.py                 # 12 fresh processes, then 300 shapes in one
    .venv/bin/python benchmarks/gemm_choice.py --processes 30 --shapes 1000 --seed 7

1. ``--processes`` fresh Python processes each import ``txlab.examples.hopper_gemm`` and time their first
   ``explain`` of a random shape: that call imports the model, reads and checksums the shipped measurements and
   checks the rows near the shape (the cost a notebook's first ``build(M, N, K)`` pays once).
2. One process times ``explain`` over ``--shapes`` random shapes (sizes log-uniform in [1, 32768], a quarter of
   them multiples of 128, seeded) after its first.

Prints a table (median, 90th percentile, max, against the target) and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_MS = 50.0

_FIRST = """
import json, sys, time
t0 = time.perf_counter()
from txlab.examples import hopper_gemm
t1 = time.perf_counter()
hopper_gemm.explain({M}, {N}, {K})
t2 = time.perf_counter()
print(json.dumps({{"import_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3}}))
"""

_LATER = """
import json, sys, time
from txlab.examples import hopper_gemm
shapes = json.loads(sys.argv[1])
hopper_gemm.explain(*shapes[0])
out = []
for s in shapes[1:]:
    t = time.perf_counter()
    hopper_gemm.explain(*s)
    out.append((time.perf_counter() - t) * 1e3)
print(json.dumps(out))
"""


def random_shapes(n: int, seed: int) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = [max(1, int(2 ** rng.uniform(0, 15))) for _ in range(3)]
        if rng.random() < 0.25:
            s = [max(128, v // 128 * 128) for v in s]
        s[2] = max(8, s[2] // 8 * 8)  # TMA's row pitch: K a multiple of 8 (build() pads other K itself)
        out.append(tuple(s))
    return out


def _run(code: str, *args) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    if done.returncode:
        raise SystemExit(f"gemm_choice: a measuring process failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def _row(name: str, xs: list, judged: bool = True) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, math.ceil(0.9 * len(xs)) - 1)]
    target = f"< {TARGET_MS:.0f} {'ok' if xs[-1] < TARGET_MS else 'OVER':<4}" if judged else "-"
    return f"| {name:<34} | {len(xs):>5} | {statistics.median(xs):>7.1f} | {p90:>7.1f} | {xs[-1]:>7.1f} | {target:<9} |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=12, help="fresh processes timing their first explain")
    ap.add_argument("--shapes", type=int, default=300, help="shapes explained in one process after its first")
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args(argv)
    if args.processes < 1 or args.shapes < 2:
        ap.error("--processes >= 1 and --shapes >= 2")
    shapes = random_shapes(args.processes + args.shapes, args.seed)
    # every module explain imports loaded once (their bytecode written, where allowed) before anything is timed
    _run("from txlab.examples import hopper_gemm; hopper_gemm.explain(640, 640, 640); print(0)")
    firsts = [json.loads(_run(_FIRST.format(M=M, N=N, K=K))) for M, N, K in shapes[: args.processes]]
    later = json.loads(_run(_LATER, json.dumps(shapes[args.processes :])))
    print(f"hopper_gemm.explain on the CPU ({os.cpu_count()} cores), seed {args.seed}; milliseconds")
    print("| what                               | count |  median |     p90 |     max | target    |")
    print("|------------------------------------|------:|--------:|--------:|--------:|-----------|")
    print(_row("first explain in a fresh process", [f["first_ms"] for f in firsts]))
    print(_row("  (importing hopper_gemm before it)", [f["import_ms"] for f in firsts], judged=False))
    print(_row("later explains, one process", later))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
