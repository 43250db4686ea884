"""Independent thread scheduling: lanes of a warp that left a polling loop run ahead of the lanes still in it.

The interpreter runs a warp's lanes together, and a divergent loop keeps the lanes that left it waiting at its end
until every lane has left. Since Volta a GPU schedules the lanes of a diverged warp independently, so a lane that
won a spin lock (``while atomic_cas(lock, 0, 1) != 0``) goes on to its critical section and its release while the
other lanes of its warp spin; in lockstep the winner would wait at the loop's end for lanes that wait for it, and
the run would be a false deadlock.

When the scheduler finds nothing progresses (:mod:`txlab.emulator.resident`) and a polling warp has lanes that
already left its loop, it asks that loop to diverge (:func:`request`). The loop then parks its spinning lanes in a
record and returns with the lanes that left. Each enclosing statement sequence adds "the rest of me" to the record
and runs that rest with the running lanes only; at the end of the enclosing loop's iteration (or of the kernel), the
parked lanes resume the loop and run those rests in order (:func:`resume`), and the warp is whole again. Each park
is a schedule a GPU may choose; the emulator only takes it where lockstep could not go on.
"""

from __future__ import annotations

import numpy as np


class Parked:
    """Lanes of a group parked in a polling loop: ``lanes`` (bool mask) and ``rest``, the (closure, is_gen) parts
    that take them from the loop to the point where they meet the lanes that ran ahead."""

    __slots__ = ("lanes", "rest")

    def __init__(self, lanes: np.ndarray, loop):
        self.lanes = lanes
        self.rest = [loop]


def request(g) -> bool:
    """Ask ``g``'s polling loop to let the lanes that left it run ahead: True when it has such lanes."""
    if g.left_poll is None or not g.left_poll.any():
        return False
    g.diverge = True
    return True


def park(g, spinning: np.ndarray, left: np.ndarray, loop) -> None:
    """The polling loop ``loop`` ((closure, is_gen)) parks its ``spinning`` lanes; ``left`` run on."""
    g.parked.append(Parked(spinning.copy(), loop))
    g.mask = None if left.all() else left.copy()


def parked_lanes(g) -> np.ndarray | None:
    if not g.parked:
        return None
    m = np.zeros(g.L, bool)
    for p in g.parked:
        m |= p.lanes
    return m


def ran_ahead(g, since: int, rest) -> bool:
    """A statement of a sequence parked lanes (records past ``since``): they will run ``rest`` (the sequence's
    remaining statements, (closure, is_gen)) when resumed; the running lanes are the active ones less every parked
    lane. False when no lane is left running (the sequence stops)."""
    for p in g.parked[since:]:
        p.rest.append(rest)
    run = g.active() & ~parked_lanes(g)
    g.mask = None if run.all() else run
    return bool(run.any())


def run_parked(g):
    """Generator: before the group's running lanes wait at a CTA barrier, its parked lanes go on now (a barrier counts
    threads since Volta, so the lanes of a warp may reach it at different times): each record runs what it has of its
    rest so far, that is up to where the running lanes are. Lanes that park again form new records, and a barrier
    they reach runs those in turn. The running lanes' values are kept where the parked ones' run rebound them."""
    todo = [p for p in g.parked if p.rest]
    if not todo:
        return
    outer = g.mask
    saved = dict(g.env)
    moved = np.zeros(g.L, bool)
    for p in todo:
        rest, p.rest = p.rest, []
        moved |= p.lanes
        g.mask = None if p.lanes.all() else p.lanes
        for k, (fn, is_gen) in enumerate(rest):
            n0 = len(g.parked)
            if is_gen:
                yield from fn(g)
            else:
                fn(g)
            if len(g.parked) > n0:
                again = np.zeros(g.L, bool)
                for q in g.parked[n0:]:
                    q.rest.extend(rest[k + 1 :])
                    again |= q.lanes
                p.lanes = p.lanes & ~again
                run = g.active() & ~again
                if not run.any():
                    break
                g.mask = None if run.all() else run
    for key, before in saved.items():
        after = g.env.get(key)
        if after is before:
            continue
        if (
            isinstance(before, np.ndarray)
            and isinstance(after, np.ndarray)
            and before.shape == after.shape
            and (before.ndim and before.shape[0] == g.L)
        ):
            merged = before.copy()
            merged[moved] = after[moved]
            g.env[key] = merged
        else:
            g.env[key] = before
    g.parked = [p for p in g.parked if p.lanes.any()]
    g.mask = outer


def resume(g, since: int):
    """Generator: the lanes parked since record ``since`` resume their loops and run what the others ran ahead, one
    record after another (a record may park lanes again, which join the queue); then the mask is the lanes that were
    active when it was called together with the resumed ones."""
    if len(g.parked) <= since:
        return
    outer = g.active().copy()
    while len(g.parked) > since:
        p = g.parked.pop(since)
        outer |= p.lanes
        g.mask = None if p.lanes.all() else p.lanes
        for k, (fn, is_gen) in enumerate(p.rest):
            n0 = len(g.parked)
            if is_gen:
                yield from fn(g)
            else:
                fn(g)
            if len(g.parked) > n0:
                for q in g.parked[n0:]:
                    q.rest.extend(p.rest[k + 1 :])
                run = g.active() & ~parked_lanes(g)
                if not run.any():
                    break
                g.mask = None if run.all() else run
    g.mask = None if outer.all() else outer
