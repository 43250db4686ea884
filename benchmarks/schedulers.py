"""Scheduler tracing speed: a 128x128-tile grid on 132 CTAs.

Run: .venv/bin/python benchmarks/schedulers.py
Cold = first trace in a fresh process after `import tvm` (TVMScript parse + llvm compile + run);
cached = the same trace again; widget = ScheduleView update after a parameter change
(Python side: trace, metrics, payload), for a runtime extent (num_ctas) and a compile-time
parameter (l2_group_size) seen before.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRID = dict(num_m_tiles=128, num_n_tiles=128)


def ms(f, n=1):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def main():
    t0 = time.perf_counter()
    import tvm  # noqa: F401  (import cost is reported separately: it is not the tracer's)

    import_ms = (time.perf_counter() - t0) * 1e3
    from txlab import schedulers as S

    rows = []
    cold = ms(lambda: S.trace("ClusterPersistentScheduler2D", 132, **GRID))
    rows.append(("trace cold (parse+compile+run)", cold, 1000))
    cached = ms(lambda: S.trace("ClusterPersistentScheduler2D", 132, **GRID), n=10)
    rows.append(("trace cached", cached, 50))
    cold_s = ms(lambda: S.trace("ClusterPersistentScheduler2D", 132, serpentine=True, **GRID))
    rows.append(("trace cold, serpentine", cold_s, 1000))
    tr = S.trace("ClusterPersistentScheduler2D", 132, **GRID)
    rows.append(
        (
            "metrics (fresh trace)",
            ms(lambda: S.trace("ClusterPersistentScheduler2D", 132, **GRID).metrics()) - cached,
            None,
        )
    )
    rows.append(("to_dict (lists)", ms(lambda: tr.to_dict(), n=5), None))

    from txlab.views.schedule import ScheduleView

    w = ScheduleView({"scheduler": "ClusterPersistentScheduler2D", "num_ctas": 132, "params": dict(GRID)})
    counter = iter(range(1000))

    def change_ctas():
        w.left = {**w.left, "num_ctas": 100 + next(counter) % 32}

    change_ctas()  # first runtime-extent compile for this class
    rows.append(("widget update: num_ctas change", ms(change_ctas, n=10), 100))
    for g in (4, 8):  # compile both group sizes once
        w.left = {**w.left, "params": {**GRID, "l2_group_size": g}}
    flip = iter(range(1000))

    def change_group():
        w.left = {**w.left, "params": {**GRID, "l2_group_size": 4 if next(flip) % 2 else 8}}

    rows.append(("widget update: l2_group_size (seen)", ms(change_group, n=10), 100))
    fresh = iter(range(9, 40))

    def new_group():
        w.left = {**w.left, "params": {**GRID, "l2_group_size": next(fresh)}}

    rows.append(("widget update: new l2_group_size", ms(new_group, n=3), None))

    print(f"import tvm: {import_ms:.0f} ms (not counted)")
    print(f"{'measurement':40s} {'ms':>9s} {'target':>9s}  ok")
    for name, value, target in rows:
        tgt = f"{target:>9.0f}" if target else f"{'-':>9s}"
        ok = "" if target is None else ("yes" if value <= target else "NO")
        print(f"{name:40s} {value:9.1f} {tgt}  {ok}")


if __name__ == "__main__":
    main()
