"""Independent thread scheduling: lanes of a warp that left a polling loop run ahead of the lanes still in it.

The interpreter runs a warp's lanes together, and a divergent loop keeps the lanes that left it waiting at its end
until every lane has left. Since Volta a GPU schedules the lanes of a diverged warp independently, so a lane that
won a spin lock (``while atomic_cas(lock, 0, 1) != 0``) goes on to its critical section and its release while the
other lanes of its warp spin; in lockstep the winner would wait at the loop's end for lanes that wait for it, and
the run would be a false deadlock.

When the scheduler finds nothing progresses (:mod:`txlab.emulator.resident`) and a polling warp has lanes that
already left its loop, it asks that loop to diverge (:func:`request`). The loop then parks its spinning lanes in a
record and returns with the lanes that left. Each enclosing statement sequence adds "the rest of me" to the record
and runs that rest with the running lanes only. The lanes meet again at the first of:

- a CTA barrier or reduction the running lanes reach, or a ``__syncwarp``, shuffle, vote or warp reduction whose
  member mask names parked lanes: those catch up (:func:`catch_up`, :func:`meet`), running their loop and the rests
  until they reach it themselves, and go on with the others from there;
- the end of the enclosing loop's iteration, or of the kernel: the parked lanes run their loop and the rests
  (:func:`resume`).

Each park is a schedule a GPU may choose; the emulator only takes it where lockstep could not go on.
"""

from __future__ import annotations

import numpy as np


class Parked:
    """Lanes of a group parked in a polling loop: ``lanes`` (bool mask); ``rest``, the (closure, is_gen) parts that
    take them from the loop to where the running lanes are; ``merged``: they caught up at a barrier and run with the
    others again (the record stays, so that enclosing sequences keep them active, until the loop's iteration or the
    kernel ends)."""

    __slots__ = ("lanes", "rest", "merged", "serial")

    def __init__(self, g, lanes: np.ndarray, rest: list, merged: bool = False, serial: int | None = None):
        self.lanes = lanes
        self.rest = rest
        self.merged = merged
        # records made while a statement ran have serials from the one before it; ``serial``: the position of the
        # record these lanes came from (the sequences that gave it its rest have nothing more to give them)
        self.serial = g.park_serial if serial is None else serial
        g.park_serial += 1  # (either way: the enclosing sequences see that something was parked)


class ReachedBarrier(Exception):  # noqa: N818 - a signal, not an error
    """Lanes catching up reached a barrier (and arrived at it): their catch-up ends there."""


def request(g) -> bool:
    """Ask ``g``'s polling loop to let the lanes that left it run ahead, or the divergent ``if`` it spins in to run its
    other branch (txlab.emulator.warp_sync.branches): True when it can."""
    if g.left_poll is not None and g.left_poll.any():
        g.diverge = True
        return True
    if g.branch_switch is not None:
        g.switch_branch = True
        return True
    return False


def park(g, spinning: np.ndarray, left: np.ndarray, loop) -> None:
    """The polling loop ``loop`` ((closure, is_gen)) parks its ``spinning`` lanes; ``left`` run on."""
    g.parked.append(Parked(g, spinning.copy(), [loop]))
    g.mask = None if left.all() else left.copy()


def parked_lanes(g) -> np.ndarray:
    """The lanes parked now (not those that caught up)."""
    m = np.zeros(g.L, bool)
    for p in g.parked:
        if not p.merged:
            m |= p.lanes
    return m


def ran_ahead(g, since: int, rest) -> bool:
    """A statement of a sequence parked lanes, or let them catch up (records of serial ``since`` on): the parked
    ones will run ``rest`` (the sequence's remaining statements, (closure, is_gen)); the running lanes are the active
    ones and those that caught up, less every parked lane. False when no lane is left running (the sequence stops)."""
    run = g.active().copy()
    for p in g.parked:
        if p.serial >= since:
            if p.merged:
                run |= p.lanes
            else:
                p.rest.append(rest)
    run &= ~parked_lanes(g)
    g.mask = None if run.all() else run
    return bool(run.any())


def _run_parts(g, parts, lanes):
    """Generator: ``lanes`` run ``parts`` ((closure, is_gen)) in order; lanes that park on the way take the parts
    after with them (new records)."""
    g.mask = None if lanes.all() else lanes
    for k, (fn, is_gen) in enumerate(parts):
        s0 = g.park_serial
        if is_gen:
            yield from fn(g)
        else:
            fn(g)
        if g.park_serial != s0:
            for q in g.parked:
                if q.serial >= s0 and not q.merged:
                    q.rest.extend(parts[k + 1 :])
            run = g.active() & ~parked_lanes(g)
            if not run.any():
                return
            g.mask = None if run.all() else run


def members(g, mask_val=None) -> np.ndarray:
    """The lanes of the group a warp collective with member mask ``mask_val`` (None: the whole warp) waits for: the
    lanes of the warps of the active lanes whose bit is in the mask (as the first active lane gives it)."""
    act = g.active()
    lanes = np.isin(g.warp_of_lane, np.unique(g.warp_of_lane[act]))
    if mask_val is None:
        return lanes
    m = np.broadcast_to(np.asarray(mask_val), (g.L,))
    first = int(np.argmax(act))
    bits = (int(m[first]) >> (g.gtid % 32).astype(np.int64)) & 1
    return lanes & bits.astype(bool)


def waiting(g, lanes=None) -> bool:
    """Whether parked lanes (among ``lanes``, default all) can catch up."""
    return any(not p.merged and p.rest and (lanes is None or (p.lanes & lanes).any()) for p in g.parked)


def meet(g, site, lanes_of=None):
    """Generator: the group reaches the collective ``site`` (``("site", call)``), which waits for ``lanes_of(g)``
    (default every lane): lanes catching up to it stop here (:class:`ReachedBarrier`); otherwise the parked lanes
    it waits for catch up to it first, and it goes on with them."""
    if g.catching_up == site:
        raise ReachedBarrier
    if g.catching_up is None and g.parked:
        want = None if lanes_of is None else lanes_of(g)
        while waiting(g, want):
            yield from catch_up(g, site, want)


def catch_up(g, target, lanes=None):
    """Generator: the parked lanes (of ``lanes``, default all) run their loops and rests now, up to the barrier or
    warp collective ``target`` the running lanes wait at (``("cta", barrier key)`` or ``("site", call)``: there
    :class:`ReachedBarrier` stops them), and run on with the others from there. Lanes that park again form new
    records (with the rest still to run); lanes whose rests end before it wait where the rests end. The running
    lanes' values are kept where the catch-up rebound them."""
    outer = g.active().copy()
    saved = dict(g.env)
    moved = np.zeros(g.L, bool)
    joined = np.zeros(g.L, bool)
    todo = []
    for p in [p for p in g.parked if not p.merged and p.rest]:
        if lanes is not None and not (p.lanes <= lanes).all():
            if not (p.lanes & lanes).any():
                continue
            # the lanes the collective does not wait for stay
            g.parked.append(Parked(g, p.lanes & ~lanes, list(p.rest), serial=p.serial))
            p.lanes = p.lanes & lanes
        todo.append(p)
    for p in todo:
        g.parked.remove(p)  # its lanes run now
        moved |= p.lanes
        c0 = g.park_serial
        g.catching_up = target
        try:
            yield from _run_parts(g, p.rest, p.lanes)
            at = None
        except ReachedBarrier:
            at = g.active() & p.lanes
        finally:
            g.catching_up = None
        # lanes parked again, or whose rest ended before a barrier, wait where p's lanes did: the enclosing sequences
        # that gave p its rest have nothing more to give them (p's serial), those still running will
        for q in g.parked:
            if q.serial >= c0 and not q.merged:
                q.serial = p.serial
        left = p.lanes & ~parked_lanes(g)
        if at is not None:
            joined |= at
            if at.any():  # a new serial: every sequence the running lanes are in keeps them running
                g.parked.append(Parked(g, at.copy(), [], merged=True))
            left &= ~at
        if left.any():
            g.parked.append(Parked(g, left, [], serial=p.serial))
    _keep_running_values(g, saved, moved)
    run = outer | joined
    g.mask = None if run.all() else run


def meeting(handler, masked: bool):
    """A blocking handler for the warp collective ``handler`` builds (a shuffle, vote, reduction, elect; ``masked``:
    its first operand is the member mask): the parked lanes it waits for catch up to it first (catching up, lanes
    stop at it), then it runs for every lane that met."""

    def build(comp, call):
        value = handler(comp, call)
        mask = comp.expr(call.args[0]) if masked and call.args else None
        site = ("site", call.__chandle__())

        def gen(g):
            yield from meet(g, site, lambda g: members(g, None if mask is None else mask(g)))
            return value(g)

        return gen

    return build


def _keep_running_values(g, saved: dict, moved: np.ndarray) -> None:
    """After lanes ``moved`` ran code the running lanes had run (or will not), each variable keeps the running lanes'
    values and takes the moved lanes' from their run."""
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


def resume(g, since: int):
    """Generator: the lanes parked in records of serial ``since`` on resume their loops and run what the others ran
    ahead, one record after another (a record may park lanes again, which join the queue); lanes that caught up at a
    barrier are with the others already. Then the mask is the lanes that were active when it was called together
    with the resumed ones."""
    if not any(p.serial >= since for p in g.parked):
        return
    outer = g.active().copy()
    while True:
        p = next((p for p in g.parked if p.serial >= since), None)
        if p is None:
            break
        g.parked.remove(p)
        outer |= p.lanes
        if not p.merged and p.rest:
            yield from _run_parts(g, p.rest, p.lanes)
    g.mask = None if outer.all() else outer
