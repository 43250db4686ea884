"""Tuning start-up on one machine: a 9-point compile-only sweep of the copy kernel, cold and cached,
on the local engine (the default) against the serial engine measured in the same run, and two
sweeps in two processes at once (two notebooks). Targets (issue 30): cold <= 1.2x serial, cached
<= 1 s, both concurrent sweeps finish.

    PYTHONPATH=$PWD python benchmarks/tune.py          # JSON in benchmarks/results/tune.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 1 << 16
SPACE = {"threads": [128, 256, 512], "unroll": [2, 4, 8], "blocks_per_sm": [0], "unguarded": [False]}
CHILD = """
import sys, time, txlab
from txlab.examples import bandwidth as bw
t = time.perf_counter()
res = txlab.autotune(bw.copy_build(1 << 16), {space}, gpus=0)
print("RESULT", time.perf_counter() - t, res.counts()["compiled"], res.meta["engine"])
"""


def sweep(engine: str, cache: str) -> tuple[float, object]:
    import txlab
    from txlab.examples import bandwidth as bw

    os.environ["TXLAB_CACHE_DIR"] = cache
    t = time.perf_counter()
    res = txlab.autotune(bw.copy_build(N), SPACE, gpus=0, engine=engine)
    return time.perf_counter() - t, res


def two_at_once(cache: str) -> list:
    env = dict(os.environ, TXLAB_CACHE_DIR=cache)
    code = CHILD.format(space=repr({**SPACE, "unroll": [2, 4, 16]}))
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)
    ]
    out = []
    for p in procs:
        text, _ = p.communicate(timeout=900)
        line = next((l for l in text.splitlines() if l.startswith("RESULT")), None)
        out.append(
            {
                "rc": p.returncode,
                "seconds": float(line.split()[1]) if line else None,
                "compiled": int(line.split()[2]) if line else 0,
            }
        )
    return out


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="txlab-bench-tune-"))
    serial_s, _ = sweep("serial", str(root / "serial"))
    cold_s, cold = sweep("auto", str(root / "local"))
    cached_s, cached = sweep("auto", str(root / "local"))
    pair = two_at_once(str(root / "pair"))
    rows = [
        ("serial, cold (baseline)", serial_s, "-", "-"),
        ("local engine, cold", cold_s, f"<= {1.2 * serial_s:.1f} s (1.2x)", cold_s <= 1.2 * serial_s),
        ("local engine, cached", cached_s, "<= 1.0 s", cached_s <= 1.0),
        (
            "two processes at once",
            max((p["seconds"] or float("inf")) for p in pair),
            "both finish",
            all(p["rc"] == 0 and p["compiled"] == 9 for p in pair),
        ),
    ]
    print(f"9-point compile-only sweep, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'case':26} {'seconds':>8}  {'vs serial':>9}  {'target':>20}  ok")
    for name, s, target, ok in rows:
        print(f"{name:26} {s:8.2f}  {s / serial_s:9.2f}  {target:>20}  {ok}")
    print(
        f"(cold: {cold.meta['compiled_here']} compiled here, {cold.meta['compiled_in_workers']} in "
        f"{cold.meta['workers'] - 1} worker(s); cached: {cached.meta['compile_cache_hits']} hits)"
    )
    out = Path(__file__).parent / "results" / "tune.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "cores": os.cpu_count(),
                "load": os.getloadavg()[0],
                "serial_s": serial_s,
                "local_cold_s": cold_s,
                "local_cached_s": cached_s,
                "two_at_once": pair,
                "ok": {r[0]: r[3] for r in rows[1:]},
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
