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
"""

from __future__ import annotations

import numpy as np

#: what a branch's generator yields while its lanes wait at a ``__syncwarp`` for lanes of another branch
WARP_SYNC = type("WarpSyncWait", (), {"__repr__": lambda self: "WARP_SYNC"})()

_PASSED = (
    "__syncwarp at line {line}: lanes {waiting} of warp {warp} waited for lanes {missing}, which reached no "
    "__syncwarp in the branch they took; the emulator let them go on (on a GPU they meet those lanes at the next "
    "__syncwarp they reach, so values exchanged through it may differ)"
)


class _Meeting:
    """One ``__syncwarp`` under way in a group: the lanes that must arrive and those that have."""

    __slots__ = ("need", "arrived", "line", "done")

    def __init__(self, need, arrived, line):
        self.need, self.arrived, self.line, self.done = need, arrived, line, False


def member_lanes(g, mask_val) -> np.ndarray:
    """The group's lanes ``__syncwarp(mask_val)`` waits for: those in the member mask, of the warps whose lanes run
    it now (lanes a kernel's thread count leaves out of its last warp are not in the group)."""
    act = g.active()
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    bit = ((m >> (g.gtid % 32).astype(np.uint64)) & np.uint64(1)).astype(bool)
    return (bit & np.isin(g.warp_of_lane, np.unique(g.warp_of_lane[act]))) | act


def arrive(g, mask_val, line, synced):
    """Generator: the active lanes reach ``__syncwarp(mask_val)`` at ``line``; returns once every member lane has
    (at once where none is missing, the common case). ``synced(g, lanes)`` orders the arrived lanes' accesses."""
    act = g.active()
    need = member_lanes(g, mask_val)
    meet = g.wsync
    if meet is None or meet.done:
        if not (need & ~act).any():
            synced(g, act)
            return np.int32(0)
        meet = g.wsync = _Meeting(need, act.copy(), line)
    else:
        meet.arrived |= act
        meet.need |= need
        if not (meet.need & ~meet.arrived).any():
            meet.done = True
            g.wsync = None
            synced(g, meet.arrived)
            return np.int32(0)
    while not meet.done:
        yield WARP_SYNC
    return np.int32(0)


def let_pass(g, synced) -> str:
    """The scheduler got :data:`WARP_SYNC` from ``g``: no branch holds the missing lanes. Release the waiting lanes
    and return the note saying so."""
    meet = g.wsync
    if meet is None:
        return ""
    meet.done = True
    g.wsync = None
    synced(g, meet.arrived)
    miss = meet.need & ~meet.arrived
    w = int(g.warp_of_lane[np.argmax(meet.arrived)])
    lanes = g.gtid % 32
    return _PASSED.format(
        line=meet.line,
        waiting=lane_list(lanes[meet.arrived & (g.warp_of_lane == w)]),
        warp=int(g.gtid[np.argmax(meet.arrived)]) // 32,
        missing=lane_list(lanes[miss & (g.warp_of_lane == w)]),
    )


def branches(g, parts):
    """Generator: run a divergent ``if``'s branches (``parts``: (generator function, lane mask)) in order, each to its
    end as the interpreter always did, except that a branch stopped at a ``__syncwarp`` waiting for lanes of
    another lets the next one run. Other yields (barriers, mbarrier waits) pass out with the branch's lanes; when
    every branch left is waiting, the wait passes out too (to an enclosing ``if``, or the scheduler)."""
    gens = [(fn(g), m) for fn, m in parts]
    live = list(range(len(gens)))
    waiting: set = set()
    i = 0
    while live:
        gen, m = gens[i]
        g.mask = m
        try:
            v = next(gen)
        except StopIteration:
            live.remove(i)
            waiting.discard(i)
            if live:
                i = min((j for j in live if j > i), default=live[0])
            continue
        if v is WARP_SYNC:
            waiting.add(i)
            if waiting >= set(live):
                yield WARP_SYNC
                waiting.clear()
            i = min((j for j in live if j > i), default=live[0])
        else:
            yield v


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
