"""CTAs that wait on one another run together: a window of resident CTAs in one scheduler.

Without a wait on another part of the grid, the emulator runs a launch CTA by CTA (or cluster by cluster). A kernel
that polls global memory (``T.cuda.wait_until``, or a ``while`` whose condition reads through an atomic: a split-K or
stream-K fix-up that waits for the tile's other items, a decoupled look-back, a grid barrier) cannot run that way:
the value it waits for is another CTA's, which has not run yet. Such a launch runs here the way a GPU keeps CTAs
resident: as many CTAs as the GPU holds at once (whole clusters) start in launch order, every warp of every resident CTA is a
coroutine of one round-robin scheduler, a poll that finds nothing new yields to the others, and a CTA that ends makes
room for the next. Each CTA has its own shared memory (its own view of the address space), barriers and race
checker, as in a cluster (:mod:`txlab.emulator.cluster`).

No resident warp able to progress is a hang on a GPU too, and is reported, not hung: a CTA barrier some of a CTA's
threads never reach, or a cluster barrier, is released as in a lone CTA or cluster (``divergent_barrier``); polls
nobody will satisfy are a ``deadlock`` finding naming every polling warp, and the run stops. A wait on a CTA past the
window (one that would only start when a resident one ends) is such a deadlock on a GPU whose SMs hold that many.
"""

from __future__ import annotations

import txlab.emulator.diverged as diverged
from txlab.emulator.result import cta_finding

#: CTAs resident at once where the arch's limits are unknown: an H100 / H200's 132 SMs, one CTA each (the GEMM's
#: persistent and split-K grids). Otherwise the runner sets what the SMs hold of the launch's CTAs (threads, shared
#: memory, registers); a grid whose CTAs only wait on earlier ones, as a decoupled look-back does, runs through it
#: in launch order
WINDOW = 132


class _Lone:
    """One CTA as a unit of the window (a cluster is its own: :class:`txlab.emulator.cluster.Cluster`)."""

    def __init__(self, cta):
        self.ctas = [cta]

    def start(self, args_env):
        self.ctas[0].start(args_env)

    def local_deadlock(self) -> bool:
        c = self.ctas[0]
        return c.deadlock(c.blocked_groups())


def _unit(program, members, grid, block, space, dyn_bytes, cta_class):
    if len(members) > 1:  # a cluster
        from txlab.emulator.cluster import Cluster

        return Cluster(program, members, grid, block, space, dyn_bytes, cta_class)
    return _Lone(cta_class(program, members[0], grid, block, space.fork(), dyn_bytes))


def _alive(unit) -> bool:
    return any(c.gens_live for c in unit.ctas)


def _polls(unit) -> list:
    return [(c, g) for c in unit.ctas for g in c.blocked_groups() if g.blocked and g.blocked[0] == "poll"]


def run(program, units, grid, block, space, dyn_bytes, cta_class, args_env, window: int | None = None) -> int:
    """Run ``units`` (lists of CTA indices: one CTA, or a cluster in rank order) with up to ``window`` CTAs resident
    at once (default :data:`WINDOW`; a cooperative launch: all of them); returns the number of CTAs run."""
    window = WINDOW if window is None else window
    pending = list(units)
    live: list = []
    ran = 0
    stalls = 0

    def admit():
        nonlocal ran
        while pending and (not live or sum(len(u.ctas) for u in live) + len(pending[0]) <= window):
            u = _unit(program, pending.pop(0), grid, block, space, dyn_bytes, cta_class)
            live.append(u)
            ran += len(u.ctas)
            u.start(args_env)

    def retire(u, stopped=False):
        for c in u.ctas:
            if stopped:
                c.stop()
            c.finish()
        for c in u.ctas:
            c.close()
        live.remove(u)

    try:
        admit()
        while live:
            program.running_ctas = [c for u in live for c in u.ctas]
            program.ctas_after = sum(len(m) for m in pending)
            before = sum(c.progress for u in live for c in u.ctas)
            for u in list(live):
                for c in u.ctas:
                    c.step()
            ended = [u for u in live if not _alive(u)]
            for u in ended:
                retire(u)
            if ended:
                admit()
                stalls = 0
                continue
            if sum(c.progress for u in live for c in u.ctas) != before:
                stalls = 0
                continue
            stalls += 1
            if stalls < 2:
                continue
            stalls = 0
            if _diverge(live) or _release(live):
                continue
            _report(program, live, pending)
            for u in list(live):
                retire(u, stopped=True)
            break
    finally:
        program.running_ctas = []
        for u in list(live):
            for c in u.ctas:
                c.close()
    return ran


def _diverge(live) -> bool:
    """Nothing progresses: a polling warp whose other lanes already left the loop lets them run ahead, as a GPU's
    independent thread scheduling does (:mod:`txlab.emulator.diverged`). True when one was asked to."""
    asked = False
    for u in live:
        for _, g in _polls(u):
            asked = diverged.request(g) or asked
    return asked


def _release(live) -> bool:
    """Nothing progresses: let a unit with no poll release a barrier some of its threads never reach (its own
    deadlock handling, as when it runs alone). True when something was released."""
    for u in live:
        if _polls(u):
            continue
        if u.local_deadlock():
            return True
    return False


def _report(program, live, pending) -> None:
    polls = [(c, g) for u in live for c, g in _polls(u)]
    if not polls:  # a unit's own deadlock (an mbarrier nobody completes) was reported by local_deadlock
        return
    first = polls[0][0]
    lines = sorted({g.blocked[1] for _, g in polls if g.blocked[1] is not None})
    parts = [
        f"CTA {c.index} warp {g.first_warp} {'waits in grid_sync' if g.blocked[2:] == ('grid_sync',) else 'polls'} "
        f"at line {g.blocked[1]}"
        for c, g in polls[:8]
    ]
    more = f"; ... {len(polls) - 8} more" if len(polls) > 8 else ""
    waiting = (
        f" ({sum(len(m) for m in pending)} CTA(s) of the launch wait for a resident one to end)" if pending else ""
    )
    partial = getattr(program, "partial_grid", None)
    if partial:  # ctas= ran part of the grid: what the polls wait for may be a CTA that was not run
        cta_finding(
            first,
            "partial_grid_wait",
            f"{'; '.join(parts)}{more}: the values these polls wait for are written by no CTA that ran, and ctas= ran "
            f"{partial[0]} of the grid's {partial[1]} CTAs. On a GPU every CTA runs, so this is not a hang there: "
            "emulate with ctas=None to check the kernel's protocol",
            lines[0] if lines else None,
            "poll",
        )
        return
    cta_finding(
        first,
        "deadlock",
        f"no resident CTA can progress (on a GPU: a hang): {'; '.join(parts)}{more}. {len(live)} unit(s) of "
        f"{sum(len(u.ctas) for u in live)} CTA(s) resident at once{waiting}; the values these polls wait for are "
        "written by no thread that can still run"
        + (" (a grid_sync ends only when every thread of the launch reaches it)" if program.grid_sync else ""),
        lines[0] if lines else None,
        "poll",
    )
