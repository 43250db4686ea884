"""Plain stores of two CTAs to the same global bytes with different values.

Nothing orders the CTAs of one launch: the GPU runs them in any order or at once, so where two CTAs store different
values to one byte with plain stores, which value is left is up to the scheduler. It is the mark of an index that
forgot the CTA (``C[tx] = ...`` in every CTA) or of tiles that overlap, and neither compute-sanitizer's racecheck
(shared memory only) nor a single GPU run shows it: every run leaves *some* value. Stores of the same value
(every CTA zeroing a flag) are left alone.

Checked only in kernels with no way for CTAs to order their accesses (:data:`ORDERING`: atomics, fences, PTX loads
and stores with a memory order, grid and cluster synchronization, NVSHMEM): in those, a protocol may make a later
CTA's overwrite intended (a serial split-K fix-up, a lock). Per byte of each global argument a kernel stores to:
the CTA that stored it last and its thread and line (8 bytes per byte; arguments over :data:`MAX_TRACKED` bytes
are not tracked, and the result's notes say so).
"""

from __future__ import annotations

import numpy as np

#: op-name prefixes by which CTAs of one launch can order their accesses: a kernel calling one is not checked
ORDERING = (
    "tirx.cuda.atomic_",
    "tirx.ptx.red",
    "tirx.ptx.atom",
    "tirx.cuda.thread_fence",
    "tirx.ptx.fence",
    "tirx.ptx.membar",
    "tirx.cuda.grid_sync",
    "tirx.cuda.cluster",
    "tirx.ptx.barrier_cluster",
    "tirx.ptx.mapa",
    "tirx.cuda.mbarrier_wait_acquire_cluster",
    "tirx.nvshmem",
    "tirx.ptx.ld",
    "tirx.ptx.st_vec",
)
_PTX_ST = "tirx.ptx.st"  # exact: a PTX st may carry .release (tirx.ptx.stmatrix is a shared-memory op)

#: global arguments larger than this are not tracked (17 bytes of state per byte)
MAX_TRACKED = 16 << 20

_LINE_BITS = 20


def applies(names) -> bool:
    """Whether a kernel calling the ops ``names`` is checked: none of them can order CTAs."""
    return not any(n.startswith(ORDERING) or n == _PTX_ST for n in names)


class _Track:
    """One global argument's bytes: the CTA that stored each last (and its thread and line), and the final value
    of the first CTA that finished with a store to it (and who stored it)."""

    __slots__ = ("last", "who", "owner", "owner_who", "settled", "dtype")

    def __init__(self, n, dtype):
        self.last = np.full(n, -1, np.int32)
        self.who = np.zeros(n, np.int32)
        self.owner = np.full(n, -1, np.int32)
        self.owner_who = np.zeros(n, np.int32)
        self.settled = np.zeros(n, np.uint8)
        self.dtype = dtype


class CtaOverlaps:
    """Plain global stores by CTA; ``report(detail)`` gets each byte two CTAs leave different values in, compared
    when a CTA finishes: its final value at each byte it stored to (the value in memory where its store is the last
    one, or the one another CTA of its lockstep batch overwrote) against the first finished CTA's."""

    def __init__(self, report):
        self.report = report
        self.state: dict = {}  # Region -> _Track, or None (too large to track)
        self.touched: dict = {}  # CTA serial -> [(region, byte indices)]
        self.shadowed: dict = {}  # CTA serial -> [(region, byte indices, their bytes)]: overwritten while it ran
        self.ctas: dict = {}  # CTA serial -> (x, y, z)
        self.untracked: list = []

    def _track(self, region, dt):
        st = self.state.get(region, False)
        if st is False:
            n = region.data.nbytes
            if n > MAX_TRACKED:
                st = None
                self.untracked.append(region.name)
            else:
                st = _Track(n, dt)
            self.state[region] = st
        return st

    def store(self, g, region, elems, vals, lanes, dt, line) -> None:
        """Lanes ``lanes`` (indices into the group) are about to store ``vals`` to elements ``elems`` of ``region``
        viewed as ``dt`` (the three arrays of one length; where an element repeats, the last lane's value lands)."""
        st = self._track(region, dt)
        if st is None or elems.size == 0:
            return
        isz = dt.itemsize
        ser = np.full(elems.size, g.cta.serial, np.int32)
        if g.lane_cta is not None:
            ser = ser + g.lane_cta[lanes].astype(np.int32)
        code = (g.tid[lanes].astype(np.int32) << _LINE_BITS) | np.int32(max(line or 0, 0) & ((1 << _LINE_BITS) - 1))
        byte = (elems.astype(np.int64)[:, None] * isz + np.arange(isz)).ravel()
        bser = np.repeat(ser, isz)
        data = region.data.view(np.uint8)
        if g.cta.B > 1:  # CTAs of this lockstep batch overwriting each other: keep what the overwritten one stored
            running = (g.cta.serial, g.cta.serial + g.cta.B)
            prev = st.last[byte]
            over = np.nonzero((prev >= running[0]) & (prev < running[1]) & (prev != bser))[0]
            for c in np.unique(prev[over]):
                k = over[prev[over] == c]
                self.shadowed.setdefault(int(c), []).append((region, byte[k], data[byte[k]].copy()))
            if elems.size > 1:
                bits = np.ascontiguousarray(vals).view(np.uint8).ravel()
                order = np.argsort(byte, kind="stable")
                b, c = byte[order], bser[order]
                lost = np.nonzero((b[:-1] == b[1:]) & (c[:-1] != c[1:]))[0]  # a later lane of another CTA lands
                for cc in np.unique(c[lost]):
                    k = order[lost[c[lost] == cc]]
                    self.shadowed.setdefault(int(cc), []).append((region, byte[k], bits[k].copy()))
        st.last[byte] = bser
        st.who[byte] = np.repeat(code, isz)
        st.dtype = dt
        for c in np.unique(ser):
            mine = byte if ser.size == 1 or (ser == c).all() else byte[bser == c]
            self.touched.setdefault(int(c), []).append((region, mine))

    def close(self, serials) -> None:
        """CTAs ``serials`` finished: compare each one's final value at every byte it stored to with the first
        finished CTA's there."""
        for c in serials:
            c = int(c)
            shadow: dict = {}
            for region, byte, vals in self.shadowed.pop(c, ()):
                shadow.setdefault(region, []).append((byte, vals))
            by_region: dict = {}
            for region, byte in self.touched.pop(c, ()):
                by_region.setdefault(region, []).append(byte)
            for region, parts in by_region.items():
                st = self.state[region]
                byte = np.unique(np.concatenate(parts))
                final = region.data.view(np.uint8)[byte]
                mine = st.last[byte] == c
                if region in shadow:  # its value where another CTA of its batch stored after it: the latest one
                    sb = np.concatenate([b for b, _ in shadow[region]])
                    sv = np.concatenate([v for _, v in shadow[region]])
                    last = len(sb) - 1 - np.unique(sb[::-1], return_index=True)[1]
                    pos = np.searchsorted(byte, sb[last])
                    ok = ~mine[pos]
                    final[pos[ok]] = sv[last][ok]
                    mine[pos[ok]] = True
                byte, final = byte[mine], final[mine]
                if byte.size == 0:
                    continue
                theirs = st.owner[byte]
                clash = np.nonzero((theirs >= 0) & (theirs != c) & (st.settled[byte] != final))[0]
                if clash.size:
                    self._clash(region, st, byte, final, clash, c)
                fresh = theirs < 0
                st.owner[byte[fresh]] = c
                st.owner_who[byte[fresh]] = st.who[byte[fresh]]
                st.settled[byte[fresh]] = final[fresh]

    def _clash(self, region, st, byte, final, clash, c) -> None:
        dt = st.dtype
        isz = dt.itemsize
        b = int(byte[clash[0]])
        elem = b // isz
        lo = elem * isz
        mine = region.data.view(np.uint8)[lo : lo + isz].copy()
        at = np.searchsorted(byte, np.arange(lo, lo + isz))
        for k in range(isz):
            if at[k] < byte.size and byte[at[k]] == lo + k:
                mine[k] = final[at[k]]
        first = mine.copy()
        for k in range(isz):
            if st.owner[lo + k] >= 0:
                first[k] = st.settled[lo + k]
        elems = np.unique(byte[clash] // isz)
        self._report(
            region,
            elem,
            dt,
            int(st.owner[b]),
            int(st.owner_who[b]),
            first.view(dt)[0],
            c,
            int(st.who[b]),
            mine.view(dt)[0],
            elems.size,
        )

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
