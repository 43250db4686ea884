"""Atomic read-modify-writes (``atomicAdd`` & co., PTX ``atom`` / ``red``) on the emulated memory.

Sequentially consistent in a fixed order: CTAs one after another, within a CTA the groups (warps)
in the order the scheduler runs them, within one instruction the lanes in increasing thread index.
``add.f32`` rounds to nearest even and flushes subnormal inputs and results to zero, as
``atom``/``red.add.f32`` do (PTX ISA); a NaN sum is taken to be the canonical NaN, as the other
float32/float16/bfloat16 adds (txlab.emulator.nan; a float32 ``atomicAdd`` of NaNs, checked on an H100). Every atomic
is shown to the race checkers as an *atomic* access: it never races with another atomic, but does
with an unordered plain load or store of the same bytes (``shared_race`` / ``global_race``).
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.nan import canonical
from txlab.errors import NotEmulatedError

_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _ftz32(v):
    v = np.asarray(v, np.float32)
    return np.where(np.abs(v) < _TINY32, np.copysign(np.float32(0), v), v).astype(np.float32)


def _combine(op, cur, val, dt):
    if op == "add":
        if dt == np.float32:
            return canonical(_ftz32(_ftz32(cur) + _ftz32(val)))
        return canonical((cur + val).astype(dt))
    if op == "max":
        return max(cur, val)
    if op == "min":
        return min(cur, val)
    if op == "exch":
        return val
    if op == "and":
        return cur & val
    if op == "or":
        return cur | val
    if op == "xor":
        return cur ^ val
    if op == "inc":  # atom.inc.u32: (old >= b) ? 0 : old + 1
        return dt.type(0) if cur >= val else dt.type(cur + 1)
    if op == "dec":  # atom.dec.u32: (old == 0 || old > b) ? b : old - 1
        return val if (cur == 0 or cur > val) else dt.type(cur - 1)
    raise ValueError(op)


#: consecutive atomics at one line of a CTA that leave global memory as it was and return the same values before
#: the emulator calls it a wait on another CTA (a spin loop: ``while (atomicAdd(flag, 0) < n) {}``). Far past what a
#: loop that merely finds nothing to change (an atomicMax that loses) runs per CTA in an emulation
SPIN_LIMIT = 1 << 18


def spin_check(g, prog, line, old, changed: bool) -> None:
    """Count an atomic on global memory toward a spin at ``line``; past :data:`SPIN_LIMIT` unchanged rounds, stop
    with a NotEmulatedError saying why (CTAs run one after another here, so what another CTA would write never
    comes; with none left to run, it is a hang on a GPU too) instead of looping forever."""
    if prog.grid_waits:  # resident CTAs: a poll yields each round, and a window where none progresses is reported
        return
    spins = g.cta.spins
    seen = old[g.active()].tobytes()
    last = spins.get(line)
    n = last[1] + 1 if (last is not None and not changed and last[0] == seen) else 0
    spins[line] = (seen, n)
    if n < SPIN_LIMIT:
        return
    after = prog.ctas_after
    why = (
        f"CTA {g.cta.index} polls global memory at line {line}: {SPIN_LIMIT:,} atomics in a row returned the same "
        "value and changed nothing. "
        + (
            f"The emulator runs CTAs one after another (or in lockstep batches) and {after} other CTA(s) may not "
            "have run yet, so a value another CTA "
            "writes never arrives (split-K or stream-K fix-ups that wait for other CTAs, a decoupled look-back): "
            "run it on a GPU, or use a variant that does not wait (for txlab's GEMM, the serial fix-up)"
            if after
            else "No other CTA is left to change it: on a GPU this CTA would hang"
        )
    )
    raise NotEmulatedError("a wait on another CTA", lineno=line, detail=why)


def element_of(comp, e):
    """For an atomic's address operand ``address_of(buf[i])`` (also through ``cvta_generic_to_shared``): a closure
    ``g -> (buf's pointer, element index)`` and buf's info, which :func:`apply_atomic` checks against buf as a plain
    access to ``buf[i]`` is checked (``Program.atomic_bounds``); None for any other address."""
    if type(e).__name__ == "Call" and getattr(e.op, "name", "") == "tirx.cuda.cvta_generic_to_shared":
        e = e.args[0]
    if not (
        type(e).__name__ == "Call"
        and getattr(e.op, "name", "") == "tirx.address_of"
        and type(e.args[0]).__name__ == "TensorLoad"
    ):
        return None
    bufvar = e.args[0].source
    info = comp.buffer_info(bufvar)
    if info["scope"].startswith("local"):
        return None
    idx = comp._flat_index(bufvar, list(e.args[0].indices))
    off = info["elem_offset"]

    def element(g):
        i = idx(g)
        return g.env[bufvar], (i if off == 0 else np.asarray(i) + off)

    return element, info


def apply_atomic(g, prog, addr, vals, op, dt, line, acquire: bool = False, target=None):
    """Apply atomic ``op`` of every active lane of group ``g`` at byte addresses ``addr`` (L,) with
    operand(s) ``vals`` (cas: compare, new); returns each lane's old value (L,). ``target``: the
    :func:`element_of` of the address operand, whose buffer bounds the lanes' elements (a lane outside it is
    reported as a plain access is, naming the buffer and element; one outside its region is then skipped)."""
    dt = np.dtype(dt)
    addr = np.broadcast_to(np.asarray(addr).astype(np.uint64), (g.L,))
    vals = [np.broadcast_to(np.asarray(v), (g.L,)).astype(dt) for v in vals]
    live = g.active()
    if target is not None:
        element, info = target
        base, elem = element(g)
        inside = prog.atomic_bounds(g, base, elem, info, f"atomic {op}", line)
        if inside is not None:
            live = live & inside
    act = np.nonzero(live)[0]
    old = np.zeros(g.L, dt)
    space = g.cta.space
    if act.size == 0:
        return old
    ids = space.find_many(addr[act])
    touched: dict = {}
    polled = changed = spun_global = False
    for rid in np.unique(ids):
        lanes = act[ids == rid]
        region = space.regions[int(rid)] if rid >= 0 else None
        if region is None:
            off = np.zeros(lanes.size, np.int64)
            bad = np.ones(lanes.size, bool)
        else:
            off = addr[lanes].astype(np.int64) - region.base
            bad = (off < 0) | (off + dt.itemsize > region.nbytes) | (off % dt.itemsize != 0)
        for i in lanes[bad]:
            prog.finding(
                "out_of_bounds",
                f"atomic {op} at an address outside every buffer (thread {int(g.tid[i])} of CTA {g.cta_of(i)})",
                line=line,
                cta=g.cta_of(i),
                threads=[g.tid[i]],
                key=("out_of_bounds", line, "atomic"),
            )
        lanes, off = lanes[~bad], off[~bad]
        if lanes.size == 0:
            continue
        region.check_write(line)
        k = off // dt.itemsize
        if region.cta_stride and g.lane_cta is not None:  # this lane's CTA's shared memory
            k = k + g.lane_cta[lanes].astype(np.int64) * (region.cta_stride // dt.itemsize)
        view = region.view(dt)
        # what was there: a spin on global memory is checked for progress (spin_check), and in a resident run one on
        # shared memory too (a histogram's adds elsewhere pay nothing)
        watched = region.kind == "global" or (region.kind == "shared" and prog.grid_waits)
        before = view[k].copy() if watched else None
        if op == "add" and dt.kind in "iu":
            # integer add: the lanes' old values are the running sums in lane order
            order = np.argsort(k, kind="stable")
            ks, vs = k[order], vals[0][lanes][order]
            start = np.r_[True, ks[1:] != ks[:-1]]
            csum = np.cumsum(vs.astype(np.int64))
            grp_start = np.maximum.accumulate(np.where(start, np.arange(ks.size), 0))
            prefix = csum - vs.astype(np.int64) - (csum[grp_start] - vs[grp_start].astype(np.int64))
            o = (view[ks].astype(np.int64) + prefix).astype(dt)
            old[lanes[order]] = o
            last = np.r_[ks[1:] != ks[:-1], True]
            view[ks[last]] = (o[last].astype(np.int64) + vs[last].astype(np.int64)).astype(dt)
        else:
            for j, i in enumerate(lanes):
                kk = int(k[j])
                cur = view[kk]
                old[i] = cur
                if op == "cas":
                    if cur == vals[0][i]:
                        view[kk] = vals[1][i]
                else:
                    view[kk] = _combine(op, cur, vals[0][i], dt)
        touched[int(rid)] = (region, lanes, off)
        if before is not None:
            polled = True
            changed = changed or not np.array_equal(view[k], before)
            spun_global = spun_global or region.kind == "global"
    if spun_global:  # global memory: a spin on a value only another CTA can change stops with a reason
        spin_check(g, prog, line, old, changed)
    for region, lanes, off in touched.values():
        byte = (off[:, None] + np.arange(dt.itemsize)).ravel()
        tids = np.repeat(g.gtid[lanes], dt.itemsize)
        if region.kind == "shared" and g.cta.races is not None:
            # its read of never-written bytes is reported as a plain read's is (the bins nobody zeroed), but an
            # exchange's: the value it stores does not depend on what was there
            g.cta.races.access(
                byte, tids, True, line, atomic=True, name=f"atomic_{op}", unwritten=op != "exch", acquire=acquire
            )
        elif region.kind == "dsmem" and region.owner is not None and region.owner.races is not None:
            region.owner.races.mark(byte)  # a peer's (or, through its window, the own) shared memory: written
        elif region.kind == "global" and prog.global_races is not None:
            prog.global_races.access(g, region, byte, tids, True, line, atomic=True)
        if region.kind == "global" and g.cta.races is not None:
            g.cta.races.lock_global(region.base + off, g.gtid[lanes], acquire)  # a global lock orders shared data
    if changed or not (polled and prog.grid_waits):  # resident CTAs: a poll that changed nothing is no progress
        g.cta.progress += 1
    return old
