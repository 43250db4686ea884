"""Benchmark of txlab.pipelines.simulate. Target: 1,000 iterations × 8 stages × 4 roles (one TMA
producer, three consumer warpgroups) simulated in <= 200 ms. Baseline, timed in the same run: a
straightforward polling simulator with the same mbarrier semantics (every round it retries every
role's next op, no waiter lists, no trace or diagnosis) — what one writes first.

    .venv/bin/python benchmarks/pipelines.py [--repeat 5]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from txlab import pipelines as P  # noqa: E402


def polling_baseline(stages, roles, init, offset):
    """Returns (finished, ops executed). Same semantics as simulate(), none of its bookkeeping."""
    S = stages
    scripts = [[P.parse_op(o, r.name, i) for i, o in enumerate(r.ops)] for r in roles]
    phase = [0] * (2 * S)
    pend = [init[b] for b in range(2) for _ in range(S)]
    tx = [0] * (2 * S)
    st = [0] * len(roles)
    ph = [r.phase for r in roles]
    pc = [0] * len(roles)
    it = [0] * len(roles)
    ops = 0
    while True:
        progressed = False
        live = False
        for r, role in enumerate(roles):
            if it[r] >= role.iterations:
                continue
            live = True
            code, bar, arg = scripts[r][pc[r]]
            slot = bar * S + st[r]
            if code == P.WAIT:
                if phase[slot] == ph[r] ^ offset[bar]:
                    continue
            elif code == P.ADVANCE:
                st[r] += 1
                if st[r] == S:
                    st[r] = 0
                    ph[r] ^= 1
            else:
                if code == P.ARRIVE:
                    pend[slot] -= arg
                elif code == P.ARRIVE_EXPECT_TX:
                    pend[slot] -= 1
                    tx[slot] += arg
                elif code == P.EXPECT_TX:
                    tx[slot] += arg
                else:
                    tx[slot] -= arg
                if pend[slot] <= 0 and tx[slot] == 0:
                    phase[slot] ^= 1
                    pend[slot] += init[bar]
            ops += 1
            progressed = True
            pc[r] += 1
            if pc[r] == len(scripts[r]):
                pc[r] = 0
                it[r] += 1
        if not live:
            return True, ops
        if not progressed:
            return False, ops


def best_of(fn, repeat):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    I, S = 1000, 8
    rows = []

    def sim(**kw):
        return lambda: P.simulate(S, iterations=I, consumers=3, tx_bytes=16384, **kw)

    t_ok, trace = best_of(sim(), args.repeat)
    roles = list(trace.roles)
    t_base, (fin, nops) = best_of(lambda: polling_baseline(S, roles, [1, 3], [0, 0]), args.repeat)
    assert fin and nops == sum(len(r.ops) * r.iterations for r in roles)
    rows.append(("simulate, correct (1000 it × 8 st × 4 roles)", t_ok, 0.200, len(trace)))
    rows.append(("  baseline: polling simulator, same protocol", t_base, None, nops))
    t_dl, tr_dl = best_of(sim(producer_phase=0), args.repeat)
    rows.append(("simulate, producer phase 0 (deadlock + diagnosis)", t_dl, 0.200, len(tr_dl)))
    cons2 = [("wait", "full"), ("arrive", "empty"), ("arrive", "empty"), ("advance",)]
    prod = [("wait", "empty"), ("arrive_expect_tx", "full", 16384), ("complete_tx", "full", 16384), ("advance",)]
    t_oa, tr_oa = best_of(
        lambda: P.simulate(
            S,
            iterations=I,
            init_empty=3,
            roles={
                "producer": prod,
                "consumer0": cons2,
                "consumer1": cons2[:1] + cons2[2:],
                "consumer2": cons2[:1] + cons2[2:],
            },
        ),
        args.repeat,
    )
    rows.append(("simulate, consumer arriving twice", t_oa, 0.200, len(tr_oa)))
    t_steps, _ = best_of(
        lambda: P.simulate(S, iterations=I, consumers=3, tx_bytes=16384).steps, max(1, args.repeat // 2)
    )
    rows.append(("simulate + materialise .steps (full state per event)", t_steps, None, len(trace)))
    t_dict, d = best_of(lambda: trace.to_dict(), args.repeat)
    rows.append(("trace.to_dict()", t_dict, None, d["n_events"]))
    from txlab.views.pipeline import pack_events

    t_pack, blob = best_of(lambda: pack_events(trace), args.repeat)
    rows.append(("widget payload (int32 events)", t_pack, None, len(blob) // 44))

    print(f"{'measurement':56s} {'time':>10s} {'target':>10s} {'events':>8s}  status")
    for name, t, target, n in rows:
        tgt = f"{target * 1e3:.0f} ms" if target else "-"
        status = "" if target is None else ("PASS" if t <= target else "FAIL")
        print(f"{name:56s} {t * 1e3:8.1f} ms {tgt:>10s} {n:8d}  {status}")
    print(
        f"\nsimulate vs polling baseline: {t_ok / t_base:.2f}× the baseline's time, while also "
        f"recording {len(trace)} events and running every diagnosis"
    )
    print(f"per event: {t_ok / len(trace) * 1e6:.2f} µs")
    if any(target and t > target for _, t, target, _ in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
