"""``__syncwarp`` (``bar.warp.sync``) where a warp's lanes have diverged.

Since Volta, the lanes of a warp in member mask ``m`` meet at ``__syncwarp(m)`` even when they reach it at
different places: the lanes of ``if lane < 16: s[lane] = x; __syncwarp(); y = s[lane + 16]`` and of its ``else``
(the same with ``lane - 16``) wait for each other, then read what the other half wrote (PTX ISA,
``bar.warp.sync``: for sm_70 and later the threads need not execute the same instruction). The interpreter runs
a divergent ``if``'s branches one after the other; here the first branch stops at such a ``__syncwarp`` (its
generator yields :data:`WARP_SYNC`), the other branch runs until it reaches one too (then every member lane has
arrived, the lanes' shared accesses before it are ordered for the race checker, and both go on) or ends, and the
first resumes. Nested branches pass the yield outwards until one holds the missing lanes.

Where the missing lanes reach no ``__syncwarp`` inside the branches (they leave the ``if`` or a loop first), the
yield reaches the CTA's scheduler, which lets the waiting lanes go on and notes it: on a GPU they would meet those
lanes at the next ``__syncwarp`` they reach, after code the emulator has not run for them yet.

Meetings are per warp and member mask (the lanes wait for ``__syncwarp``s of the *same* mask): one pending meeting per
warp; a ``__syncwarp`` of another mask whose lanes are all there completes on its own. A branch that yields keeps
its own lane mask (a nested ``if`` or a per-lane loop inside it narrowed) for when it resumes.
"""

from __future__ import annotations

import numpy as np

#: what a branch's generator yields while its lanes wait at a ``__syncwarp`` for lanes of another branch
WARP_SYNC = type("WarpSyncWait", (), {"__repr__": lambda self: "WARP_SYNC"})()

_PASSED = (
    "__syncwarp at line {line}: lanes {waiting} of warp {warp} of CTA {cta} waited for lanes {missing}, which reached "
    "no __syncwarp of the same mask in the branch they took; the emulator let them go on (on a GPU they meet those "
    "lanes at the next such __syncwarp they reach, so values exchanged through it may differ)"
)


class _Meetings:
    """A group's pending ``__syncwarp`` meetings, one per warp (local index): the lanes it needs and those arrived
    (32-bit masks), its member mask and line; ``opened``/``closed`` number each warp's meetings; ``version`` counts
    the meetings completed (a branch stopped at one may go on once it moves)."""

    def __init__(self, nw: int):
        self.need = np.zeros(nw, np.uint64)
        self.arrived = np.zeros(nw, np.uint64)
        self.mask = np.zeros(nw, np.uint64)
        self.line = np.zeros(nw, np.int64)
        self.opened = np.zeros(nw, np.int64)
        self.closed = np.zeros(nw, np.int64)
        self.version = 0


def _lanes_of(g):
    """Each lane's warp within the group and its bit in that warp's 32-bit mask."""
    return g.warp_of_lane - g.warp_of_lane[0], np.left_shift(np.uint64(1), (g.gtid % 32).astype(np.uint64))


def _per_warp(lw, bits, sel) -> np.ndarray:
    """Per warp of the group, the bits of the lanes ``sel`` picks (a group's lanes run warp by warp, in order)."""
    starts = np.flatnonzero(np.r_[True, lw[1:] != lw[:-1]])
    return np.add.reduceat(np.where(sel, bits, np.uint64(0)), starts)


def _close(g, mt, ws, synced, lw, bits) -> None:
    """Complete warps ``ws``' meetings (``lw``, ``bits``: :func:`_lanes_of`): their arrived lanes are ordered with
    each other."""
    synced(g, np.isin(lw, ws) & ((bits & mt.arrived[lw]) != 0))
    mt.closed[ws] = mt.opened[ws]
    mt.need[ws] = 0
    mt.arrived[ws] = 0
    mt.version += 1


def arrive(g, mask_val, line, synced):
    """Generator: the active lanes reach ``__syncwarp(mask_val)`` at ``line``; returns once every member lane of their
    warps has reached one of the same mask (at once where none is missing, the common case). ``synced(g, lanes)``
    orders the arrived lanes' accesses (``None``: every lane of the group)."""
    if g.mask is None and g.wsync is None:  # every lane of the group's warps is here
        synced(g, None)
        return np.int32(0)
    act = g.active()
    lw, bits = _lanes_of(g)
    here = _per_warp(lw, bits, act)
    exist = _per_warp(lw, bits, True if g.exited is None else ~g.exited)  # lanes that returned early: not waited for
    nw = here.size
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    mv = np.zeros(nw, np.uint64)
    ia = np.nonzero(act)[0]
    mv[lw[ia[::-1]]] = m[ia[::-1]] & np.uint64(0xFFFFFFFF)  # each warp's mask, as its first active lane gives it
    need = np.where(here != 0, (mv & exist) | here, np.uint64(0))
    short = (need & ~here) != 0
    mt = g.wsync
    if not short.any() and (mt is None or not (mt.need[here != 0] != 0).any()):
        synced(g, act)
        return np.int32(0)
    if mt is None:
        mt = g.wsync = _Meetings(nw)
    ws = np.nonzero(here)[0]
    pending = mt.need[ws] != 0
    join = ws[pending & (mt.mask[ws] == mv[ws])]  # the meeting another branch opened: join it
    other = ws[pending & (mt.mask[ws] != mv[ws]) & short[ws]]  # a second meeting of another mask: not modelled
    new = ws[~pending & short[ws]]
    mt.arrived[join] |= here[join]
    mt.need[join] |= need[join]
    done = join[(mt.need[join] & ~mt.arrived[join]) == 0]
    if done.size:
        _close(g, mt, done, synced, lw, bits)
    mt.opened[new] += 1
    mt.need[new], mt.arrived[new], mt.mask[new], mt.line[new] = need[new], here[new], mv[new], line
    if other.size:
        note = f"__syncwarp at line {line}: a second __syncwarp of another mask while one is pending in the warp"
        if note not in g.cta.program.notes:
            g.cta.program.notes.append(note)
    alone = act & ~np.isin(lw, np.concatenate([join, new]))  # warps whose sync completes here without another branch
    if alone.any():
        synced(g, alone)
    wait_w = np.concatenate([np.setdiff1d(join, done), new])
    wait_id = mt.opened[wait_w].copy()
    while (mt.closed[wait_w] < wait_id).any():
        yield WARP_SYNC
    return np.int32(0)


def let_pass(g, synced) -> str:
    """The scheduler got :data:`WARP_SYNC` from ``g``: no branch holds the lanes its pending meetings wait for.
    Release them, their accesses ordered with the missing lanes' (which have run ahead to a later ``__syncwarp``, or
    to the end), and return the note saying so (of the first)."""
    mt = g.wsync
    if mt is None:
        return ""
    ws = np.nonzero(mt.need)[0]
    if ws.size == 0:
        return ""
    lw, bits = _lanes_of(g)
    w = int(ws[0])
    lane0 = int(np.nonzero(lw == w)[0][0])
    have, miss = int(mt.arrived[w]), int(mt.need[w] & ~mt.arrived[w])
    note = _PASSED.format(
        line=int(mt.line[w]),
        waiting=lane_list(k for k in range(32) if have >> k & 1),
        warp=int(g.tid[lane0]) // 32,
        cta=g.cta_of(lane0),
        missing=lane_list(k for k in range(32) if miss >> k & 1),
    )
    mt.arrived[ws] = mt.need[ws]  # ordered as at the later __syncwarp the missing lanes meet them at, on a GPU
    _close(g, mt, ws, synced, lw, bits)
    return note


def branches(g, parts):
    """Generator: run a divergent ``if``'s branches (``parts``: (generator function, lane mask)) in order, each to its
    end as the interpreter always did, except that a branch stopped at a ``__syncwarp`` waiting for lanes of another
    lets the next one run. Other yields (barriers, mbarrier waits) pass out with the branch's lanes; when every
    branch left is waiting and no meeting completed since it stopped, the wait passes out too (to an enclosing
    ``if``, or the scheduler). Each branch resumes with the lane mask it had when it stopped."""
    gens = [fn(g) for fn, _ in parts]
    masks = [m for _, m in parts]
    live = list(range(len(gens)))
    stuck: dict = {}  # branch -> the meetings' version when it stopped at a __syncwarp
    i = 0
    while live:
        g.mask = masks[i]
        try:
            v = next(gens[i])
        except StopIteration:
            live.remove(i)
            stuck.pop(i, None)
            if live:
                i = min((j for j in live if j > i), default=live[0])
            continue
        masks[i] = g.mask
        if v is WARP_SYNC:
            stuck[i] = g.wsync.version if g.wsync is not None else 0
            ver = g.wsync.version if g.wsync is not None else 0
            if all(stuck.get(j) == ver for j in live):
                yield WARP_SYNC
                stuck.clear()
            i = min((j for j in live if j > i), default=live[0])
        else:
            # a branch spinning in a poll while another branch is still to run: the scheduler may switch to that
            # one when nothing progresses (independent thread scheduling: txlab.emulator.diverged.request)
            if g.branch_switch is None and len(live) > 1 and g.blocked is not None and g.blocked[0] == "poll":
                g.branch_switch = gens
            yield v
            if g.branch_switch is gens:
                g.branch_switch = None
                if g.switch_branch:
                    g.switch_branch = False
                    i = min((j for j in live if j > i), default=live[0])


def lane_list(lanes) -> str:
    """Lanes as runs: ``0-15,20``."""
    lanes = [int(x) for x in lanes]
    runs, start = [], None
    for i, x in enumerate(lanes):
        if start is None:
            start = x
        if i + 1 == len(lanes) or lanes[i + 1] != x + 1:
            runs.append(f"{start}" if start == x else f"{start}-{x}")
            start = None
    return ",".join(runs)
