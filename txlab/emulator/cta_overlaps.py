"""Plain stores of two CTAs to the same global bytes with different values.

Nothing orders the CTAs of one launch: the GPU runs them in any order or at once, so where two CTAs store different
values to one byte with plain stores, which value is left is up to the scheduler. It is the mark of an index that
forgot the CTA (``C[tx] = ...`` in every CTA) or of tiles that overlap, and neither compute-sanitizer's racecheck
(shared memory only) nor a single GPU run shows it: every run leaves *some* value. Stores of the same value
(every CTA zeroing a flag) are left alone.

Checked only in kernels with no way for CTAs to order their accesses (:data:`ORDERING_PREFIXES`, :data:`ORDERING_NAMES`:
atomics, fences, PTX loads
and stores with a memory order, grid and cluster synchronization, NVSHMEM; in a cluster launch also
:func:`cluster_orders`: remote mbarrier arrives, multicasts, CTA pairs): in those, a protocol may make a later
CTA's overwrite intended (a serial split-K fix-up, a lock). A cluster's CTAs run interleaved, as one batch. Per byte of each global argument a kernel stores to:
the CTA that stored it last and its thread and line (8 bytes per byte; arguments over :data:`MAX_TRACKED` bytes
are not tracked, and the result's notes say so).
"""

from __future__ import annotations

import numpy as np

#: ops by which CTAs of one launch can order their accesses (names, or prefixes ending in "_"): a kernel calling one
#: is not checked. ``fence.proxy`` and ``fence.mbarrier_init`` order a CTA's own proxies, ``redux.sync`` is a warp
#: reduction, ``ldmatrix``/``stmatrix`` shared-memory ops: none of them orders CTAs.
ORDERING_PREFIXES = (
    "tirx.cuda.atomic_",
    "tirx.ptx.atom",
    "tirx.cuda.thread_fence",
    "tirx.ptx.membar",
    "tirx.cuda.grid_sync",
    "tirx.cuda.cluster",
    "tirx.ptx.barrier_cluster",
    "tirx.ptx.mapa",
    "tirx.cuda.mbarrier_wait_acquire_cluster",
    "tirx.nvshmem",
)
ORDERING_NAMES = frozenset(
    ["tirx.ptx.fence"]
    + [f"tirx.ptx.{n}" for n in ("ld", "ld_vec", "ld_vec256", "ldu", "ldu_vec", "st", "st_vec", "st_vec256")]
)

#: global arguments larger than this are not tracked (17 bytes of state per byte; the result's notes say so)
MAX_TRACKED = 16 << 20

_LINE_BITS = 20


def applies(names) -> bool:
    """Whether a kernel calling the ops ``names`` is checked: none of them can order CTAs."""
    for n in names:
        if n.startswith(ORDERING_PREFIXES) or n in ORDERING_NAMES:
            return False
        if n.startswith("tirx.ptx.red") and not n.startswith("tirx.ptx.redux"):
            return False
    return True


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class _Track:
    """One global argument in units of ``gran`` bytes (the smallest store seen so far: 4 for float32 stores, 1 once a
    byte is stored): the CTA that stored each unit last (and its thread and line), and the final value of the first
    CTA that finished with a store to it (and who stored it)."""

    __slots__ = ("gran", "last", "who", "owner", "owner_who", "settled", "dtype")

    def __init__(self, n, dtype):
        isz = dtype.itemsize
        self.gran = isz if isz in _UINT and n % isz == 0 else 1
        u = n // self.gran
        self.last = np.full(u, -1, np.int32)
        self.who = np.zeros(u, np.int32)
        self.owner = np.full(u, -1, np.int32)
        self.owner_who = np.zeros(u, np.int32)
        self.settled = np.zeros(u, _UINT[self.gran])
        self.dtype = dtype

    def refine(self, isz: int) -> None:
        """Units of ``isz`` bytes (a smaller store): split each unit, its values byte for byte."""
        f = self.gran // isz
        for name in ("last", "who", "owner", "owner_who"):
            setattr(self, name, np.repeat(getattr(self, name), f))
        self.settled = self.settled.view(np.uint8).view(_UINT[isz]).copy()
        self.gran = isz


def _batch_of(cta) -> tuple:
    """(first CTA serial, CTAs) of the CTAs that run together with ``cta`` and finish together: its lockstep batch,
    or its cluster (whose CTAs run interleaved in one scheduler)."""
    cl = cta.cluster
    if cl is not None and len(cl.ctas) > 1:
        return cl.ctas[0].serial, len(cl.ctas)
    return cta.serial, cta.B


def cluster_orders(body) -> bool:
    """Whether a cluster launch's kernel can order its CTAs by something :func:`applies` does not see by name: an
    mbarrier op or TMA/tcgen05 op on a cluster scope or address (a remote arrive, a multicast, a CTA pair)."""
    from txlab import ir

    for n in ir.walk(body):
        if type(n).__name__ != "Call":
            continue
        name = getattr(n.op, "name", "")
        if not name.startswith(
            ("tirx.ptx.mbarrier", "tirx.cuda.mbarrier", "tirx.ptx.cp_async_bulk", "tirx.ptx.tcgen05")
        ):
            continue
        for a in n.args:
            if type(a).__name__ != "StringImm":
                continue
            v = str(a.value)
            if (
                "multicast" in v
                or "cta_group::2" in v
                or (name.startswith(("tirx.ptx.mbarrier", "tirx.cuda.mbarrier")) and "cluster" in v)
            ):
                return True
    return False


class CtaOverlaps:
    """Plain global stores by CTA; ``report(detail)`` gets each element two CTAs leave different values in, compared
    when a batch of CTAs finishes: each CTA's final value at every unit it stored to (the value in memory where its
    store is the last one, or the one another CTA of its lockstep batch overwrote) against the first finished
    CTA's."""

    def __init__(self, report, notes=None):
        self.report = report
        self.notes = notes if notes is not None else []
        self.state: dict = {}  # Region -> _Track, or None (too large to track)
        self.touched: dict = {}  # batch's first CTA serial -> [(region, units, their CTAs)]
        self.shadowed: dict = {}  # batch's first serial -> [(region, units, CTAs, values, who)]: overwritten in it
        self.ctas: dict = {}  # CTA serial -> (x, y, z)

    def _track(self, region, dt):
        st = self.state.get(region, False)
        if st is False:
            n = region.data.nbytes
            if n > MAX_TRACKED:
                st = None
                self.notes.append(
                    f"{region.name} ({n / 2**20:.0f} MiB) is not checked for CTAs storing different values to one "
                    f"element (the check keeps up to 17 bytes per byte; arguments up to {MAX_TRACKED >> 20} MiB are)"
                )
            else:
                st = _Track(n, dt)
            self.state[region] = st
        elif st is not None and dt.itemsize < st.gran:
            if self.touched or self.shadowed:  # units recorded in the finer units' numbers
                self._rescale(region, st.gran // dt.itemsize)
            st.refine(dt.itemsize)
        return st

    def _rescale(self, region, f) -> None:
        """Pending records of ``region`` in units ``f`` times smaller."""
        for recs in self.touched.values():
            for k, (r, u, c) in enumerate(recs):
                if r is region:
                    recs[k] = (r, (u[:, None] * f + np.arange(f)).ravel(), np.repeat(c, f))
        for recs in self.shadowed.values():
            for k, (r, u, c, v, w) in enumerate(recs):
                if r is region:
                    sub = _UINT[int(v.dtype.itemsize) // f]
                    recs[k] = (
                        r,
                        (u[:, None] * f + np.arange(f)).ravel(),
                        np.repeat(c, f),
                        v.view(np.uint8).view(sub),
                        np.repeat(w, f),
                    )

    def store(self, g, region, elems, vals, lanes, dt, line) -> None:
        """Lanes ``lanes`` (indices into the group) are about to store ``vals`` to elements ``elems`` of ``region``
        viewed as ``dt`` (the three arrays of one length; where an element repeats, the last lane's value lands)."""
        st = self._track(region, dt)
        if st is None or elems.size == 0:
            return
        per = dt.itemsize // st.gran  # units per element
        ser = np.full(elems.size, g.cta.serial, np.int32)
        if g.lane_cta is not None:
            ser = ser + g.lane_cta[lanes].astype(np.int32)
        code = (g.tid[lanes].astype(np.int32) << _LINE_BITS) | np.int32(max(line or 0, 0) & ((1 << _LINE_BITS) - 1))
        if per == 1:
            unit, user, uwho = elems.astype(np.int64), ser, np.broadcast_to(code, ser.shape)
        else:
            unit = (elems.astype(np.int64)[:, None] * per + np.arange(per)).ravel()
            user, uwho = np.repeat(ser, per), np.repeat(code, per)
        batch, span = _batch_of(g.cta)
        if span > 1:  # CTAs of this batch (or cluster) overwriting each other: keep what the overwritten one stored
            data = region.data.view(_UINT[st.gran])
            shadow = self.shadowed.setdefault(batch, [])
            prev = st.last[unit]
            over = (prev >= batch) & (prev < batch + span) & (prev != user)
            if over.any():
                k = unit[over]
                shadow.append((region, k, prev[over], data[k].copy(), st.who[k].copy()))
            if elems.size > 1:
                bits = np.ascontiguousarray(vals).view(np.uint8).view(_UINT[st.gran]).ravel()
                order = np.argsort(unit, kind="stable")
                b, c = unit[order], user[order]
                lost = order[np.nonzero((b[:-1] == b[1:]) & (c[:-1] != c[1:]))[0]]  # a later lane of another CTA lands
                if lost.size:
                    shadow.append((region, unit[lost], user[lost], bits[lost].copy(), np.asarray(uwho)[lost]))
        st.last[unit] = user
        st.who[unit] = uwho
        st.dtype = dt
        self.touched.setdefault(batch, []).append((region, unit, user))

    def close(self, batch) -> None:
        """The batch of CTAs whose first serial is ``batch`` finished: compare each one's final value at every unit it
        stored to with the first finished CTA's there."""
        shadows: dict = {}
        for region, b, c, v, w in self.shadowed.pop(batch, ()):
            shadows.setdefault(region, []).append((b, c, v, w))
        by_region: dict = {}
        for region, b, c in self.touched.pop(batch, ()):
            by_region.setdefault(region, []).append((b, c))
        for region, parts in by_region.items():
            st = self.state[region]
            data = region.data.view(_UINT[st.gran])
            if region not in shadows:  # no CTA of the batch overwrote another's: each unit's CTA is its last
                unit = np.concatenate([b for b, _ in parts])
                self._compare(region, st, st.last[unit], unit, data[unit], st.who[unit], None)
                continue
            n = np.int64(st.last.size)
            key = np.unique(np.concatenate([c.astype(np.int64) * n + b for b, c in parts]))
            cta, unit = (key // n).astype(np.int32), key % n
            final = data[unit]
            fwho = st.who[unit]
            mine = st.last[unit] == cta
            sh = shadows[region]  # the latest value each CTA of the batch stored where another stored after it
            skey = np.concatenate([c.astype(np.int64) * n + b for b, c, _, _ in sh])
            sval = np.concatenate([v for _, _, v, _ in sh])
            swho = np.concatenate([w for _, _, _, w in sh])
            ukey, last = np.unique(skey[::-1], return_index=True)
            last = skey.size - 1 - last
            pos = np.minimum(np.searchsorted(ukey, key), ukey.size - 1)
            use = (ukey[pos] == key) & ~mine
            final[use] = sval[last[pos[use]]]
            fwho[use] = swho[last[pos[use]]]
            mine |= use
            cta, unit, final, fwho = cta[mine], unit[mine], final[mine], fwho[mine]
            order = np.lexsort((cta, unit))  # each unit's CTAs in launch order
            self._compare(region, st, cta[order], unit[order], final[order], fwho[order], True)

    def _compare(self, region, st, cta, unit, final, fwho, grouped) -> None:
        """Final values ``final`` of CTAs ``cta`` at units ``unit`` against each unit's first finished CTA's (earlier
        batches', or with ``grouped`` the first of its run of pairs, sorted by unit then CTA); then settle the new."""
        owned = st.owner[unit] >= 0
        if grouped:
            head = np.r_[True, unit[1:] != unit[:-1]]
            first = np.maximum.accumulate(np.where(head, np.arange(unit.size), 0))
            ref_cta = np.where(owned, st.owner[unit], cta[first])
            ref_val = np.where(owned, st.settled[unit], final[first])
            ref_who = np.where(owned, st.owner_who[unit], fwho[first])
            new = head & ~owned
        else:
            ref_cta, ref_val, ref_who = st.owner[unit], st.settled[unit], st.owner_who[unit]
            new = ~owned
            cta = np.broadcast_to(cta, unit.shape)
        clash = np.nonzero((ref_cta >= 0) & (ref_cta != cta) & (ref_val != final))[0]
        if clash.size:
            k = int(clash[0])
            isz = st.dtype.itemsize
            per = isz // st.gran  # a store never has fewer bytes than a unit (refine)
            elem = int(unit[k]) // per
            units = np.arange(elem * per, elem * per + per)

            def element(c, vals_of):
                out = region.data.view(_UINT[st.gran])[units].copy()
                for j, u in enumerate(units):
                    v = vals_of(c, u)
                    if v is not None:
                        out[j] = v
                return out.view(st.dtype)[0]

            def final_of(c, u):
                hit = np.nonzero((unit == u) & (cta == c))[0]
                return final[hit[0]] if hit.size else None

            def first_of(c, u):
                hit = np.nonzero((unit == u) & (ref_cta == c))[0]
                return ref_val[hit[0]] if hit.size else (st.settled[u] if st.owner[u] == c else None)

            n_el = np.int64(st.last.size // per + 1)
            count = np.unique(cta[clash].astype(np.int64) * n_el + unit[clash] // per).size
            c1, c2 = int(ref_cta[k]), int(cta[k])
            self._report(
                region,
                elem,
                st.dtype,
                c1,
                int(ref_who[k]),
                element(c1, first_of),
                c2,
                int(fwho[k]),
                element(c2, final_of),
                count,
            )
        st.owner[unit[new]] = cta[new]
        st.owner_who[unit[new]] = fwho[new]
        st.settled[unit[new]] = final[new]

    def _report(self, region, elem, dt, c1, w1, v1, c2, w2, v2, count) -> None:
        mask = (1 << _LINE_BITS) - 1
        self.report(
            {
                "region": region.name,
                "elem": elem,
                "dtype": str(dt),
                "first": ("store", (w1 & mask) or None, w1 >> _LINE_BITS, self.ctas.get(c1, c1), v1),
                "second": ("store", (w2 & mask) or None, w2 >> _LINE_BITS, self.ctas.get(c2, c2), v2),
                "count": count,
            }
        )
