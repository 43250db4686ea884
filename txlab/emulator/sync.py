"""Barriers: CTA barriers (``bar.sync``: ``cta_sync``, ``syncthreads_and/or``, ``cta_reduce``,
named ``warpgroup_sync``) and mbarriers with phases and transaction counts.

mbarrier semantics are txlab.pipelines' (PTX ISA): ``init(count)`` -> parity 0, pending = count,
tx = 0; ``arrive`` pending -= 1 per arriving thread; ``expect_tx(b)`` tx += b; ``complete_tx(b)``
(a TMA copy landing) tx -= b; the phase completes when pending == 0 and tx == 0 (parity flips,
pending resets to count). More arrivals than pending is an *over-arrival* (undefined in PTX; the
excess is carried into the next phase, as pipelines.simulate does), a barrier completing a phase
again before anyone observed the previous one is a *phase skip*. ``try_wait.parity(p)`` passes
once the current parity differs from ``p``.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.diverged as diverged
from txlab.emulator.races import merge_foreign
from txlab.emulator.result import cta_finding


class CtaBarrier:
    def __init__(self, key, count=None):
        self.key = key
        self.count = count  # None: every live thread of the CTA
        self.arrived = 0
        self.groups: list = []  # (group, line) that arrived in this generation
        self.generation = 0
        self.payload: list = []
        self.results: dict = {}  # generation -> result of the combine function
        self.combine = None

    def arrive(self, cta, g, n, line, payload=None, combine=None):
        self.arrived += n
        self.groups.append((g, line))
        if payload is not None:
            self.payload.append(payload)
            self.combine = combine
        cta.progress += 1
        self.maybe_complete(cta)

    def maybe_complete(self, cta, force=False):
        if not self.groups:
            return
        need = self.count if self.count is not None else cta.live
        if self.arrived >= need or force:
            if cta.races is not None:
                warps = np.unique(np.concatenate([g.warp_of_lane for g, _ in self.groups]))
                cta.races.barrier(warps)
            if self.combine is not None:
                self.results[self.generation] = self.combine(self.payload)
            self.generation += 1
            self.arrived = 0
            self.groups = []
            self.payload = []
            self.combine = None
            cta.progress += 1


def barrier_wait(cta, g, key, line, *, count=None, payload=None, combine=None, what="cta_sync"):
    """Generator: arrive at CTA barrier ``key`` with the group's active lanes and wait for the
    generation to complete. Returns the combine result (or None)."""
    prog = cta.program
    bar = cta.bars.get(key)
    if bar is None:
        bar = cta.bars[key] = CtaBarrier(key, count)
    n = g.n_present()  # lanes that returned early have exited: the barrier does not wait for them
    divergent = g.mask is not None and bool(g.skipped().any())
    if g.catching_up is not None:  # parked lanes caught up with the others here: they arrive and run on with them
        bar.arrive(cta, g, int(np.count_nonzero(g.active())), line, payload, combine)  # (txlab.emulator.diverged)
        raise diverged.ReachedBarrier
    if divergent and g.parked and diverged.parked_lanes(g).any():
        # lanes parked in a poll arrive on their own (txlab.emulator.diverged): a barrier counts threads, and one
        # that never comes leaves it a deadlock
        n = int(np.count_nonzero(g.mask))
        divergent = False
    where = cta.index
    if divergent and g.lane_cta is not None:
        # a batch of CTAs: only a CTA whose threads split at the barrier is divergent
        cnt = np.bincount(g.lane_cta[g.mask], minlength=cta.B)
        present = np.bincount(g.lane_cta[g.present()], minlength=cta.B)
        bad = np.nonzero((cnt > 0) & (cnt < present))[0]
        divergent = bad.size > 0
        if not divergent:
            if cta.races is not None:
                cta.races.barrier(np.unique(g.warp_of_lane[g.mask]))
            return combine(payload and [payload]) if combine is not None else None
        where = cta.index_of(int(bad[0]))
    if divergent:
        sel = g.lane_cta == np.int32(bad[0]) if g.lane_cta is not None else np.ones(g.L, bool)
        act = g.tid[g.mask & sel]
        idle = g.tid[g.skipped() & sel]
        prog.finding(
            "divergent_barrier",
            f"{what} reached by {act.size} of {int((sel & g.present()).sum())} threads of "
            f"{'warp ' + str(g.first_warp) if prog.warp_mode else 'the CTA'} (threads {_ranges(act)}); "
            f"threads {_ranges(idle)} of CTA {where} skipped it (divergent control flow at a barrier: undefined "
            f"behaviour, usually a hang or a barrier matched with the wrong one)",
            line=line,
            cta=where,
            threads=idle,
            key=("divergent_barrier", line, "partial"),
        )
        if not prog.warp_mode:
            # the skipped lanes are in this same group: nobody else can arrive; release it here
            res = combine(payload and [payload]) if combine is not None else None
            if cta.races is not None:
                cta.races.barrier(np.unique(g.warp_of_lane))
            return res
    gen0 = bar.generation
    bar.arrive(cta, g, n, line, payload, combine)
    while bar.generation == gen0:
        if g.parked and diverged.waiting(g):  # lanes parked in a poll come to this barrier too
            yield from diverged.catch_up(g, ("cta", key))
            continue
        g.blocked = ("barrier", line, bar, what)
        yield
    g.blocked = None
    cta.progress += 1
    return bar.results.get(gen0)


class MBarrier:
    def __init__(self, offset: int):
        self.offset = offset
        self.init_count = None
        self.pending = 0
        self.tx = 0
        self.parity = 0
        self.completed = 0
        self.observed = 0
        self.waited = False
        self.vc = None
        self.last_vc = None
        self.fvc: dict = {}  # what arrivers knew of other CTAs' warps: {cluster rank: clock}
        self.last_fvc: dict = {}
        self.arrivers: list = []
        self.init_line = None

    def state(self) -> str:
        return (
            f"mbarrier at shared offset {self.offset}: phase parity {self.parity}, "
            f"{self.pending} arrival(s) pending of {self.init_count}, tx-count {self.tx}, "
            f"{self.completed} phase(s) completed"
        )


def mbarrier(cta, addr, line) -> MBarrier:
    off = int(addr)
    mb = cta.mbarriers.get(off)
    if mb is None:
        mb = cta.mbarriers[off] = MBarrier(off)
    return mb


def mbarrier_at(g, addr, line):
    """(owning CTA, MBarrier) for a 32-bit shared address: the executing CTA's own (shared::cta), or
    through a cluster window (shared::cluster, after ``mapa``) another CTA's of the cluster."""
    from txlab.emulator.memory import split_cluster_address

    rank, off = split_cluster_address(addr)
    if rank is None:
        return g.cta, mbarrier(g.cta, off, line)
    ctas = g.cta.cluster.ctas if g.cta.cluster is not None else [g.cta]
    if rank >= len(ctas):
        from txlab.errors import NotEmulatedError

        raise NotEmulatedError(
            f"mbarrier at shared::cluster address {int(addr):#x}: cluster rank {rank} of a "
            f"cluster of {len(ctas)} CTA(s)",
            lineno=line,
        )
    return ctas[rank], mbarrier(ctas[rank], off, line)


def mb_init(cta, mb, count, line):
    mb.init_count = int(count)
    mb.pending = int(count)
    mb.tx = 0
    mb.parity = 0
    mb.completed = mb.observed = 0
    mb.init_line = line
    cta.progress += 1


def _arriving_warps(g):
    return np.unique(g.warp_of_lane if g.mask is None else g.warp_of_lane[g.mask])


def _release(cta, mb, g):
    if cta.races is not None:
        for w in _arriving_warps(g):
            _publish(cta, mb, int(w))


def _publish(cta, mb, row):
    clk = cta.races.release(row)
    mb.vc = clk if mb.vc is None else np.maximum(mb.vc, clk)
    if cta.races.known_of(row):
        mb.fvc = merge_foreign(mb.fvc, cta.races.known_of(row))


def _release_remote(cta, mb, g):
    """A remote arrive from ``g.cta`` (another CTA of the cluster) on ``cta``'s mbarrier: the
    arriving warps' clocks travel with the phase as foreign knowledge of their CTA's warps."""
    src = g.cta
    if cta.races is None or src.races is None:
        return
    for w in _arriving_warps(g):
        clk = src.races.release(int(w))
        if clk is not None:  # None: a lockstep checker, which orders nothing
            mb.fvc = merge_foreign(mb.fvc, {src.rank: clk}, src.races.known_of(int(w)))


def _uninitialised(cta, mb, line, what, src) -> bool:
    """Report ``what`` (by a thread of CTA ``src``) reaching ``cta``'s mbarrier before its
    ``mbarrier.init``; True when it did (the caller drops the arrive / tx)."""
    if mb.init_count is not None:
        return False
    fix = (
        f" (from CTA {src.index} of its cluster: initialise every CTA's mbarriers, then "
        "fence.mbarrier_init.release.cluster and cluster_sync, before any peer arrives on or multicasts "
        "into them)"
        if src is not cta
        else ""
    )
    cta_finding(
        cta, "deadlock", f"{what} on an mbarrier that was never initialised ({mb.state()}){fix}", line, "uninit"
    )
    return True


def mb_tx_from_agent(cta, mb, row, delta, line, src):
    """complete_tx by CTA ``src``'s multicast (agent ``row`` of ``cta``'s race checker)."""
    if _uninitialised(cta, mb, line, "TMA multicast complete_tx", src):
        return
    if cta.races is not None and row is not None:
        _publish(cta, mb, row)
    mb.tx += delta
    _check_complete(cta, mb, line)


def mb_arrive(cta, mb, g, n_per_lane, lanes, line, tx=0):
    if _uninitialised(cta, mb, line, "arrive", g.cta):
        return
    if g.cta is cta:
        _release(cta, mb, g)
    else:  # a remote arrive (another CTA of the cluster): its clock, as foreign knowledge
        _release_remote(cta, mb, g)
    mb.tx += tx
    total = int(n_per_lane) * int(lanes)
    if total > mb.pending:
        cta_finding(
            cta,
            "over_arrival",
            f"{lanes} thread(s) arrived {total} time(s) on the mbarrier at shared offset {mb.offset} when "
            f"only {mb.pending} arrival(s) were pending in its phase (mbarrier.init count "
            f"{mb.init_count}, line {mb.init_line}): more arrivals than the init count -- undefined "
            f"behaviour in PTX; the phase completes early and the next one starts short"
            + (f" (a remote arrive from CTA {g.cta.index})" if g.cta is not cta else ""),
            line,
            mb.offset,
            threads=g.active_tids(),
        )
    mb.pending -= total
    _check_complete(cta, mb, line)


def mb_arrive_lanes(cta, mb, g, count, lanes, line, expect_tx=False, drop=False):
    """One arrive instruction run by ``lanes`` lanes. With ``expect_tx`` each lane arrives once and
    expects ``count`` transaction bytes; without, each lane arrives ``count`` times. ``drop``
    (``arrive_drop``) also lowers the expected count of the phases to come by those arrivals."""
    per_lane = 1 if expect_tx else int(count)
    if drop and mb.init_count is not None:
        mb.init_count -= per_lane * lanes
    mb_arrive(cta, mb, g, per_lane, lanes, line, tx=int(count) * lanes if expect_tx else 0)


def mb_tx(cta, mb, delta, line, g=None):
    if _uninitialised(cta, mb, line, "complete_tx" if delta < 0 else "expect_tx", cta):
        return
    if g is not None:
        _release(cta, mb, g)
    mb.tx += delta
    _check_complete(cta, mb, line)


def _check_complete(cta, mb, line):
    cta.progress += 1
    while mb.pending <= 0 and mb.tx == 0 and mb.init_count:
        mb.completed += 1
        if mb.waited and mb.completed >= 2 and mb.observed < mb.completed - 1:
            cta.program.finding(
                "phase_skip",
                f"the mbarrier at shared offset {mb.offset} completed phase {mb.completed - 1} before any "
                f"thread observed phase {mb.completed - 2}: a parity wait cannot tell them apart "
                f"(too many arrivals per phase, or an init count smaller than the number of arrivers)",
                line=line,
                cta=cta.index,
                key=("phase_skip", mb.offset),
            )
        mb.parity ^= 1
        mb.pending += mb.init_count
        mb.last_vc = mb.vc
        mb.vc = None
        mb.last_fvc, mb.fvc = mb.fvc, {}
        if mb.pending > 0 or mb.tx != 0:
            break


def mb_wait(cta, g, mb, parity, line):
    """Generator: block until the phase with ``parity`` completed."""
    mb.waited = True
    par = int(np.asarray(parity).ravel()[0]) & 1 if np.ndim(parity) else int(parity) & 1
    if np.ndim(parity) and np.unique(np.asarray(parity)[g.active()] & 1).size > 1:
        from txlab.errors import NotEmulatedError

        raise NotEmulatedError("mbarrier wait on different parities within one warp", lineno=line)
    while mb.parity == par:
        g.blocked = ("mbarrier", line, mb, par)
        yield
    g.blocked = None
    if mb.completed > mb.observed:
        mb.observed = mb.completed
    if cta.races is not None and (mb.last_vc is not None or mb.last_fvc):
        own = mb.last_fvc.get(cta.rank)  # peers' knowledge of this CTA's own warps
        others = {r: c for r, c in mb.last_fvc.items() if r != cta.rank}
        for w in np.unique(g.warp_of_lane):
            cta.races.acquire(int(w), mb.last_vc)
            cta.races.acquire(int(w), own)
            cta.races.acquire_foreign(int(w), others)
    cta.progress += 1


def describe_blocked(cta, blocked) -> bool:
    at_bar = [g for g in blocked if g.blocked and g.blocked[0] == "barrier"]
    others = [g for g in blocked if not (g.blocked and g.blocked[0] == "barrier")]
    if at_bar:
        bar = at_bar[0].blocked[2]
        lines = sorted({g.blocked[1] for g in at_bar if g.blocked[1] is not None})
        waiting = np.concatenate([g.active_tids() for g in at_bar])  # (a group's lanes that reached it)
        elsewhere = []
        for g in others:
            b = g.blocked
            elsewhere.append(f"warp {g.first_warp} waits at line {b[1]} ({b[0]})" if b else f"warp {g.first_warp}")
        exited = cta.nthreads - sum(g.n_present() for g in blocked)  # (lanes that returned early too)
        cta_finding(
            cta,
            "divergent_barrier",
            f"{bar_name(at_bar[0])} at line(s) {lines} is waited on by {waiting.size} thread(s) "
            f"({_ranges(waiting)}) but never reached by the other {cta.nthreads - waiting.size}"
            + (f" ({'; '.join(([f'{exited} exited'] if exited else []) + elsewhere)})" if exited or elsewhere else "")
            + ": a barrier inside thread-dependent control flow. Released so the run can go on.",
            lines[0] if lines else None,
            "deadlock",
            threads=waiting,
        )
        bar.maybe_complete(cta, force=True)
        return True
    parts = []
    first_line = None
    for g in blocked:
        b = g.blocked
        if b is None:
            continue
        if b[0] == "mbarrier":
            first_line = first_line if first_line is not None else b[1]
            parts.append(f"warp {g.first_warp} waits (line {b[1]}) for parity {b[3]} of the {b[2].state()}")
        else:
            first_line = first_line if first_line is not None else b[1]
            parts.append(f"warp {g.first_warp} polls at line {b[1]}")
    cta_finding(
        cta,
        "deadlock",
        "no thread of the CTA can progress (on a GPU: a hang): "
        + "; ".join(parts[:6])
        + (f"; ... {len(parts) - 6} more" if len(parts) > 6 else ""),
        first_line,
    )
    return False


def bar_name(g):
    return g.blocked[3] if g.blocked and len(g.blocked) > 3 else "barrier"


def _ranges(ids) -> str:
    ids = sorted(int(i) for i in np.asarray(ids).ravel())
    if not ids:
        return "none"
    out = []
    start = prev = ids[0]
    for i in ids[1:]:
        if i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = i
    out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out[:6]) + (", ..." if len(out) > 6 else "")
