"""The ``emulated`` column of the API catalogue: does the CPU emulator reproduce each catalogue
example's result (the numpy expectation its H200 run was verified against)?

    python -m txlab.api.emulated        # prints the table, writes txlab/data/api_emulated.json

Integer and exact-float outputs must match bitwise; other float outputs within the example's own
tolerance, and the largest distance in float32 ulps is recorded.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data" / "api_emulated.json"


def _ulps(got, want) -> int:
    from txlab.ir.semantics import ulp_distance

    g = np.asarray(got, np.float32).ravel()
    w = np.asarray(want, np.float32).ravel()
    ok = np.isfinite(g) & np.isfinite(w)
    return int(ulp_distance(g[ok], w[ok]).max()) if ok.any() else 0


def emulate_example(example_id: str) -> dict:
    """Emulate one catalogue example and compare with its expectation."""
    from txlab.api.entries import examples
    from txlab.api.verification import _problem as _compare
    from txlab.emulator import emulate
    from txlab.errors import NotEmulatedError, TxlabError

    ex = examples()[example_id]
    if ex.inputs is None or ex.expected is None:  # an example an H200 cannot run may still be checked here
        return {"id": ex.id, "status": "not run", "reason": ex.not_on_h200 or "no check written"}
    if ex.compile is not None:
        return {"id": ex.id, "status": "not emulated", "reason": "custom build (extra TVM pass / runner)"}
    t0 = time.perf_counter()
    args = ex.inputs()
    want = ex.expected(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    try:
        func = ex.prim_func()
        res = emulate(func, *args, arch=ex.arch)
    except NotEmulatedError as exc:
        return {"id": ex.id, "status": "not emulated", "reason": str(exc)}
    except TxlabError as exc:
        return {"id": ex.id, "status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    from txlab import build, ir

    mod, _ = ir.as_module(func, None)
    params = build.params_of(mod)
    buffers = [p["name"] for p in params if p["kind"] == "buffer"]
    if isinstance(want, dict):
        expected = want
    else:
        names = list(ex.outputs or buffers[-1:])
        values = list(want) if isinstance(want, (tuple, list)) else [want]
        expected = dict(zip(names, values))
    index = {p["name"]: i for i, p in enumerate(params)}
    problems, exact, ulps = {}, True, 0
    if ex.invariant is not None:
        msg = ex.invariant(*args)
        if msg:
            problems["invariant"] = msg
    for n, w in expected.items():
        got = args[index[n]]
        p = _compare(got, w, ex.rtol, ex.atol)
        if p:
            problems[n] = p
        g, wv = np.asarray(got), np.asarray(w)
        if g.shape == wv.shape and not np.array_equal(g.astype(np.float64), wv.astype(np.float64), equal_nan=True):
            exact = False
            if g.dtype.kind == "f":
                ulps = max(ulps, _ulps(g, wv))
    findings = [str(f) for f in res.findings]
    status = "mismatch" if problems else ("bitwise" if exact else f"within tolerance ({ulps} ulp)")
    if findings and not problems:
        status += " (with findings)"
    return {
        "id": ex.id,
        "status": status,
        "problems": problems,
        "findings": findings[:5],
        "seconds": round(time.perf_counter() - t0, 3),
        "ulps": ulps,
        "mode": res.stats.get("mode"),
        "notes": res.notes,
    }


def emulate_all(write: bool = False) -> dict:
    from txlab.api.entries import examples

    rows = {}
    for eid, ex in sorted(examples().items()):
        if ex.inputs is None or ex.expected is None:
            continue
        rows[eid] = emulate_example(eid)
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "examples": rows}
    if write:
        DATA.write_text(json.dumps(out, indent=1, default=str) + "\n")
    return out


def emulated_cell(example_ids, record: dict | None = None) -> str:
    """The ``emulated`` cell of a catalogue row (the coverage table's reader, txlab.api.markdown)."""
    from txlab.api.markdown import emulated_examples_cell

    return emulated_examples_cell(example_ids, record)


def markdown(out: dict) -> str:
    from txlab.api.entries import examples

    rows = out["examples"]
    good = lambda r: r["status"].startswith(("bitwise", "within"))  # noqa: E731
    cpu_only = {e for e, ex in examples().items() if e in rows and not ex.runnable}
    ok = [r for k, r in rows.items() if good(r) and k not in cpu_only]
    ok_bw = [k for k in cpu_only if good(rows[k])]
    lines = [
        "# API catalogue examples on the CPU emulator",
        "",
        f"`python -m txlab.api.emulated` ({out['date']}): **{len(ok)} of {len(rows) - len(cpu_only)}** H200-verified "
        "catalogue examples reproduce their verified result on the CPU emulator (`txlab.emulate`), and "
        f"**{len(ok_bw)} of {len(cpu_only)}** examples outside the H200 record ({', '.join(sorted(cpu_only))}: "
        "sm_100a-only, or not run in it yet) give their numpy expectation there. "
        "*bitwise*: every output equals the expectation the H200 run was checked against, bit for bit.",
        "*within tolerance (n ulp)*: inside the example's own rtol/atol; n is the largest distance in "
        "fp32 ulps from the numpy expectation (for wgmma_ss/rs the emulator's result is the H200's "
        "tensor-core sum, truncated -- txlab.emulator.tensorcore, fitted to the H200's outputs -- and "
        "the ulps are its distance from numpy's fp32 sum).",
        "",
        "Not emulated, and why: `loads_and_calls` calls a user-written CUDA function "
        "(`T.cuda.func_call` with `source_code`), which the emulator cannot run without compiling C.",
        "",
        "What a timer value means here (`timer_ring`, `mbarrier_handoff`'s clock64; "
        "txlab/emulator/timers.py): there is no time on the CPU, so the clocks count *emulated "
        "warp-instructions* -- each lowered-IR statement a group of threads executes adds one per warp "
        "of the group. `clock`/`clock64` (per SM on a GPU) is what the reading CTA has issued so far "
        "(each CTA as if alone on its SM, from 0); `%globaltimer_lo`, the timer ring's timestamp "
        "(nanoseconds on a GPU), is what the whole launch has issued so far (CTAs run one after "
        "another, a cluster's together, and those of a launch whose CTAs wait on one another resident together). "
        "A later read in a CTA never gives less, a read after more "
        "statements gives more, all lanes of one instruction read the same value; a difference is an "
        "amount of emulated work, not a duration. `timer_ring`'s own check compares the header, tags, "
        "event ids and kinds (the low words) exactly and requires each group's timestamps to be "
        "non-decreasing (jumps under 1 s): no GPU-only number is compared, so *bitwise* there means "
        "the low words bit for bit and the timestamp ordering held; the timestamps' values are "
        "the emulator's own.",
        "",
        "Clusters (`cluster_remote_arrive`, `mbarrier_cluster`; txlab/emulator/cluster.py): the CTAs "
        "of one cluster run together in one scheduler, each with its own shared memory; "
        "`cluster_sync`/`barrier.cluster` is one barrier of the cluster's non-exited threads, `mapa` "
        "maps a shared address into another CTA's window, remote mbarrier arrives act on the owning "
        "CTA's barrier; a cluster whose threads all wait is reported (`deadlock`, naming every "
        "blocked warp of every CTA), not hung.",
        "",
        "CTAs that wait on one another (txlab/emulator/resident.py): a kernel that polls global memory "
        "(`T.cuda.wait_until`, or a `while` whose condition reads through an atomic: split-K's parallel fix-up, a "
        "decoupled look-back, a hand-written grid barrier) runs its CTAs resident together, as many at once as 132 "
        "SMs hold of them (by threads, shared memory and, for a `Compiled`, registers; whole clusters) in launch "
        "order, every warp of every resident CTA a coroutine of one scheduler; a poll that finds nothing new yields "
        "to the others, and a CTA that ends makes room for the next. Polls no resident thread will answer are a "
        "`deadlock` finding naming each polling warp (on a GPU: a hang), not a hang of the emulator; where `ctas=` "
        "ran part of the grid they are `partial_grid_wait` (the CTA they wait for was not run). Other launches still "
        "run CTA by CTA (or in lockstep batches).",
        "",
        "Lanes of a warp that left a polling loop (txlab/emulator/diverged.py): a GPU since Volta schedules a "
        "diverged warp's lanes independently, so the lane that won a spin lock (`while atomic_cas(lock, 0, 1) != 0`, "
        "or `while True:` with an `if atomic_cas(...) == 0: break`) runs its critical section and its release while "
        "the other lanes of its warp spin. Where nothing else can progress, the emulator parks the spinning lanes and "
        "lets the lanes that left run ahead. The parked lanes catch up at the first CTA barrier or CTA reduction the "
        "others reach (a barrier counts threads), at a `__syncwarp`, shuffle, vote or warp reduction whose member "
        "mask names them, or else resume at the end of the enclosing loop's iteration or of the kernel; from there "
        "they run with the others, each statement once per thread. A branch of a divergent `if` that spins waiting "
        "for the other branch of its warp lets that branch run. A lock nobody releases is still a `deadlock` finding "
        "at the spin, and a spin on shared memory is watched as one on global memory is. Not modelled: running lanes "
        "that wait (a poll, an mbarrier) for what the parked lanes will do after the lock are a `deadlock` finding, "
        "where a GPU goes on. The race checkers order a spin lock's critical sections: the first atomic of a warp "
        "after a fence (`Tx.cuda.thread_fence`, `fence.acq_rel`) releases what the warp did before the fence, and an "
        "atomic of the same word (shared or global) in a polling loop acquires it; other atomics order nothing (a "
        "histogram's adds, a counter nobody waits on).",
        "",
        "Grid barriers (`Tx.cuda.grid_sync`, `cg::this_grid().sync()`): the launch runs every CTA of its grid "
        "resident at once, as a cooperative launch keeps them, and a CTA passes its k-th grid barrier when every CTA "
        "of the grid has reached its own k-th (its threads meet at the CTA's barrier first). `ctas=` naming part of "
        "the grid runs all of it (a note says so). CUDA defines the barrier only for a cooperative launch, which TVM "
        'makes when the kernel declares it: `Tx.func_attr({"tirx.kernel_launch_params": '
        '["tirx.use_cooperative_launch"]})`; without that the run is a `grid_sync_not_cooperative` finding at the '
        "call's line (an H100 faults there), and is emulated as if it were cooperative. A grid larger than 132 SMs "
        'hold at once is refused as the GPU refuses it (`KernelFault("launch_config")`), and a CTA that never '
        "reaches a grid barrier leaves the others waiting: a `deadlock` finding, not a hang. A grid barrier orders "
        "every access before it against every access after it, in any CTA: an atomic after it does not race a plain "
        "store before it, and a plain load of bytes another CTA stores in the same epoch (between the same two grid "
        "barriers) is a `global_race` naming both lines (checked where grid_sync is the kernel's only way to order "
        "CTAs; arguments up to 4 MiB).",
        "",
        "| example | emulated | why not / findings |",
        "|---|---|---|",
    ]
    for r in rows.values():
        why = (
            r.get("reason")
            or "; ".join(f"{k}: {v}" for k, v in r.get("problems", {}).items())
            or "; ".join(r.get("findings", []))
        )
        lines.append(f"| {r['id']} | {r['status']} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = emulate_all(write="--no-write" not in argv)
    if "--no-write" not in argv:
        (Path(__file__).resolve().parents[2] / "docs" / "api-emulated.md").write_text(markdown(out))
    rows = out["examples"]
    ok = [r for r in rows.values() if r["status"].startswith(("bitwise", "within"))]
    for r in rows.values():
        print(
            f"{r['id']:28s} {r['status']:32s} {r.get('reason', '') or '; '.join(f'{k}: {v}' for k, v in r.get('problems', {}).items())}"[
                :220
            ]
        )
    print(f"{len(ok)}/{len(rows)} H200-verified examples reproduced by the emulator")
    return 0


if __name__ == "__main__":
    sys.exit(main())
