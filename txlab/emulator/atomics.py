"""Atomic read-modify-writes (``atomicAdd`` & co., PTX ``atom`` / ``red``) on the emulated memory.

Sequentially consistent in a fixed order: CTAs one after another, within a CTA the groups (warps)
in the order the scheduler runs them, within one instruction the lanes in increasing thread index.
``add.f32`` rounds to nearest even and flushes subnormal inputs and results to zero, as
``atom``/``red.add.f32`` do (PTX ISA). Every atomic is shown to the race checkers as an *atomic*
access: it never races with another atomic, but does with an unordered plain load or store of the
same bytes (``shared_race`` / ``global_race``).
"""

from __future__ import annotations

import numpy as np

_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _ftz32(v):
    v = np.asarray(v, np.float32)
    return np.where(np.abs(v) < _TINY32, np.copysign(np.float32(0), v), v).astype(np.float32)


def _combine(op, cur, val, dt):
    if op == "add":
        if dt == np.float32:
            return _ftz32(_ftz32(cur) + _ftz32(val))
        return (cur + val).astype(dt)
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


def apply_atomic(g, prog, addr, vals, op, dt, line):
    """Apply atomic ``op`` of every active lane of group ``g`` at byte addresses ``addr`` (L,) with
    operand(s) ``vals`` (cas: compare, new); returns each lane's old value (L,)."""
    dt = np.dtype(dt)
    addr = np.broadcast_to(np.asarray(addr).astype(np.uint64), (g.L,))
    vals = [np.broadcast_to(np.asarray(v), (g.L,)).astype(dt) for v in vals]
    act = np.nonzero(g.active())[0]
    old = np.zeros(g.L, dt)
    space = g.cta.space
    if act.size == 0:
        return old
    ids = space.find_many(addr[act])
    touched: dict = {}
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
        k = off // dt.itemsize
        if region.cta_stride and g.lane_cta is not None:  # this lane's CTA's shared memory
            k = k + g.lane_cta[lanes].astype(np.int64) * (region.cta_stride // dt.itemsize)
        view = region.view(dt)
        if op == "add" and dt.kind in "iu":
            # integer add: the lanes' old values are the running sums in lane order
            order = np.argsort(k, kind="stable")
            ks, vs = k[order], vals[0][lanes][order]
            start = np.r_[True, ks[1:] != ks[:-1]]
            csum = np.cumsum(vs.astype(np.int64))
            grp_start = np.maximum.accumulate(np.where(start, np.arange(ks.size), 0))
            before = csum - vs.astype(np.int64) - (csum[grp_start] - vs[grp_start].astype(np.int64))
            o = (view[ks].astype(np.int64) + before).astype(dt)
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
    for region, lanes, off in touched.values():
        byte = (off[:, None] + np.arange(dt.itemsize)).ravel()
        tids = np.repeat(g.gtid[lanes], dt.itemsize)
        if region.kind == "shared" and g.cta.races is not None:
            g.cta.races.access(byte, tids, True, line, atomic=True)
        elif region.kind == "global" and prog.global_races is not None:
            prog.global_races.access(g, region, byte, tids, True, line, atomic=True)
    g.cta.progress += 1
    return old
