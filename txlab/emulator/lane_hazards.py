"""Hazards between lanes of one warp: shared-memory accesses that only the emulator's lockstep orders.

Since Volta the lanes of a warp are scheduled independently: a store by one lane and a load or store
of the same bytes by another lane of the same warp are ordered only by ``__syncwarp()``
(``Tx.cuda.warp_sync()``) or a barrier between them; the "warp-synchronous" reduction tail that
relied on lockstep is a race. The emulator runs a warp's lanes in lockstep, so its values are those
of one legal schedule; this check reports the pairs nothing orders, as compute-sanitizer's racecheck
does on the GPU.

Per shared byte (of each CTA of a batch, flat ``cta * n + offset``; kept per 4-byte word while the race checker's
accesses allow, as its own state is: txlab/emulator/races.py, ``_Reporter``): the last store's thread,
warp, that warp's sync count and line, and the lanes that stored it in that one instruction (a read by
one of them is not reported: it reads what it stored, or what a lane of the same store did; a read by
another lane, or a later store by a lane that leaves out one of them, is); the last two lanes that
loaded it since. Atomics are recorded as stores and never checked (they do not race with one
another); a plain read of them by another lane races. Per warp a sync count, advanced by what orders the warp's memory:
``__syncwarp`` (``bar.warp.sync``), a CTA or named barrier, an mbarrier arrive or wait. Shuffles,
votes and the warp's other ``.sync`` collectives do not: compute-sanitizer's racecheck reports two
lanes with only a ``__shfl_sync`` between them (H100, 2026-12-06, docs/gpu-runs.md), as the
programming guide promises memory ordering of ``__syncwarp`` alone; an ``ld.acquire`` orders its
warp (the flag of a release/acquire hand-off between lanes). Plain loads and stores take part (TIRx
buffer accesses, weak PTX ``ld``/``st``), atomics as stores, a ``cp.async``'s write into shared memory (its issuing
lane's store, at the wait that completes it: the wait completes a thread's own copies only), and a TMA store's read of its shared
source by the issuing lane; ``ldmatrix``/``stmatrix``, TMA loads and tensor-core operands do not.

Against compute-sanitizer's racecheck on an H100 (benchmarks/results/racecheck_lanes_h100_2026-12-06.log): it
agrees on the reduction tail without ``__syncwarp`` (and with only a shuffle), a leader elected through shared
memory, a word stored by lanes 0-15 and read by lane 20, and a store after every lane's store. It does not report
a plain read of other lanes' atomics (reported here, as the cross-warp checker does: the memory model calls it a
data race), and it does report a release/acquire flag hand-off (not reported here: the memory model orders it).

Warps are keyed by batch-wide thread // 32, as the checkers' barriers are. A ``__syncwarp(mask)`` that leaves lanes
of its warp out (``mask`` 0xffff, run by lanes 0-15) orders only the lanes it names: from the first such sync on,
each warp also keeps, per pair of its lanes (a, b), the latest sync count of b's that a has learned of (a vector
clock: a sync passes on what each of its lanes knew, so lane 0 -> 0x3 -> lane 1 -> 0x6 -> lane 2 orders lane 2
after lane 0), and an access by a is ordered after b's earlier one when a learned of a sync of b's after it.
"""

from __future__ import annotations

import numpy as np


class Entries:
    """The flat entries ``k`` (``cta * n + entry``, an int64 array) that one access touches, and the way to read and
    write per-entry state arrays there. Where ``k`` is one run of consecutive entries, or the same run in each of
    consecutive CTAs (``sm[tx]`` by every lane of a lockstep batch, or by those with ``tx < s``), that is slices, many
    times faster than scattered indices; else ``k`` itself. ``distinct``: no entry comes twice (no two lanes of the
    instruction meet); False where not known."""

    __slots__ = ("k", "distinct", "_at", "_rows")

    def __init__(self, k, n: int = 0):
        """``n``: entries per CTA, to look for runs in ``k`` (0: use ``k`` as it is)."""
        self.k = k
        self._at = k  # an index into a flat state array, or (with _rows) into its (CTA, entry) view
        self._rows = None  # (rows, run, n): the same run of entries in each of ``rows`` consecutive CTAs
        self.distinct = False
        if n and k.size > 1:
            d = k[1:] - k[:-1]
            self.distinct = bool((d > 0).all())
            if self.distinct:
                self._runs(d, n)

    def _runs(self, d, n: int) -> None:
        k0, size = int(self.k[0]), self.k.size
        jumps = np.flatnonzero(d != 1)
        if jumps.size == 0:
            self._at = slice(k0, k0 + size)
            return
        m = int(jumps[0]) + 1
        rows = size // m
        if size != rows * m or jumps.size != rows - 1 or k0 % n + m > n:
            return
        if (jumps == np.arange(m - 1, size - 1, m)).all() and (d[jumps] == n - m + 1).all():
            self._at = (slice(k0 // n, k0 // n + rows), slice(k0 % n, k0 % n + m))
            self._rows = (rows, m, n)

    def get(self, arr) -> np.ndarray:
        """``arr[k]`` (a copy)."""
        if self._rows is not None:
            return arr.reshape(-1, self._rows[2])[self._at].flatten()
        return arr[self._at].copy() if isinstance(self._at, slice) else arr[self._at]

    def equal(self, arr, v) -> np.ndarray:
        """``arr[k] == v`` (where ``v`` is one number, or one per entry of ``k``)."""
        if self._rows is not None and not np.ndim(v):
            return (arr.reshape(-1, self._rows[2])[self._at] == v).ravel()
        if isinstance(self._at, slice):
            return arr[self._at] == v
        return self.get(arr) == v

    def set(self, arr, v) -> None:
        """``arr[k] = v``."""
        if self._rows is not None:
            arr.reshape(-1, self._rows[2])[self._at] = v.reshape(self._rows[:2]) if np.ndim(v) else v
        else:
            arr[self._at] = v


class LaneHazards:
    def __init__(self, entries: int, unit: int, threads: int, ctas: int, report):
        """``entries`` per CTA of ``unit`` bytes each: the race checker's entries (words until its first access
        of less than a whole word, then bytes: :meth:`to_bytes`; txlab/emulator/races.py)."""
        size = ctas * entries
        self.n = entries
        self.unit = unit
        self.T = threads
        self.report = report  # report(detail dict, cta_in_batch)
        self.count = np.zeros((ctas * threads + 31) // 32 + 1, np.int64)
        self.w = _Record(size)
        self.r = _Record(size)
        self.r2 = _Record(size)  # a second reader lane (another than ``r``'s) in the same sync interval
        self.w_mask = np.zeros(size, np.uint32)  # lanes (bit lane % 32) of the last store's warp that stored it
        self.w_atomic = np.zeros(size, bool)  # the last store was atomics
        self.scratch = np.zeros(size, np.uint32)  # zero between accesses (a store's lanes per byte, in access)
        self.full = np.zeros_like(self.count)  # per warp: its sync count at its last sync of every lane
        self.pair = None  # per warp, lane a, lane b: the latest sync count of b's that a learned of (partial syncs)
        self._seen: set = set()

    def to_bytes(self) -> None:
        """The checker went from word entries to byte entries: each word's record is each of its bytes'."""
        for rec in (self.w, self.r, self.r2):
            rec.tid, rec.ep, rec.line = (np.repeat(x, 4) for x in (rec.tid, rec.ep, rec.line))
        self.w_mask = np.repeat(self.w_mask, 4)
        self.w_atomic = np.repeat(self.w_atomic, 4)
        self.scratch = np.repeat(self.scratch, 4)
        self.n *= 4
        self.unit = 1

    def sync(self, warps) -> None:
        """Warps (batch-wide thread // 32) synchronised: their lanes' earlier accesses are ordered."""
        ws = np.asarray(warps, np.int64).ravel()
        ws = ws[(ws >= 0) & (ws < self.count.size)]
        self.count[ws] += 1  # (once per warp named: a fancy-index += adds once per index)
        self.full[ws] = self.count[ws]

    def sync_lanes(self, tids) -> None:
        """Lanes (batch-wide threads) ran one ``__syncwarp``: each warp's lanes among them are ordered with each other's
        and with what each of them had learned through earlier syncs (happens-before is transitive); a warp whose
        every lane is among them, as by :meth:`sync`."""
        tids = np.unique(np.asarray(tids, np.int64).ravel())
        w_all = tids // 32
        ws, first, counts = np.unique(w_all, return_index=True, return_counts=True)
        keep = (ws >= 0) & (ws < self.count.size)
        ws, first, counts = ws[keep], first[keep], counts[keep]
        lanes_in_warp = np.minimum(32, self.T - (ws * 32) % self.T)
        whole = counts >= lanes_in_warp
        if whole.any():
            self.sync(ws[whole])
        for w, f, n in zip(ws[~whole], first[~whole], counts[~whole]):
            lanes = tids[f : f + n] % 32
            if self.pair is None:
                self.pair = np.zeros((self.count.size, 32, 32), np.int64)
            self.count[w] += 1
            known = np.maximum(self.pair[w][lanes].max(axis=0), self.full[w])  # what any of them had learned
            self.pair[w][lanes] = known
            self.pair[w][np.ix_(lanes, lanes)] = self.count[w]

    def _synced(self, wk, lanes, ep) -> np.ndarray:
        """Per access: the lanes (a 32-bit mask) of warp ``wk`` whose accesses before sync count ``ep`` lane ``lanes`` is
        ordered after (it learned of a later sync of theirs, directly or through other lanes; all of them where the
        whole warp synced since)."""
        row = self.pair[wk, lanes]  # (n, 32)
        mask = ((row > ep[:, None]).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1)
        return np.where(self.full[wk] > ep, np.uint64(0xFFFFFFFF), mask).astype(np.uint32)

    def _pending(self, rec, ix, wk, tids, now) -> np.ndarray:
        """Whether the record ``rec`` of entries ``ix`` is another lane of the same warp that nothing ordered since
        (``now``: the sync count of each accessing lane's warp)."""
        if self.pair is None:
            return rec.pending(ix, wk, now, tids)
        t = ix.get(rec.tid)
        same = (t >= 0) & (t >> 5 == wk) & (t != tids)
        if not same.any():
            return same
        return same & ((self._synced(wk, tids & 31, ix.get(rec.ep)) & _bits(t)) == 0)

    def access(self, k, tids, write: bool, line, atomic: bool = False, landed=None) -> None:
        """Plain accesses of flat entries ``k`` (an array, or :class:`Entries`) by batch-wide threads ``tids`` (one
        instruction); ``atomic``: an atomic read-modify-write, recorded as a store (a plain read of it by another lane
        races) but not checked (atomics do not race with one another). ``landed``: a store of several values to one
        address, the thread whose value landed (the others' reads of it are reads of another lane's store)."""
        ix = k if isinstance(k, Entries) else Entries(np.asarray(k, np.int64))
        k = ix.k
        tids = np.asarray(tids, np.int64)
        if k.size == 0:
            return
        wk = tids >> 5
        # each lane's warp's sync count: one number where every warp's is alike (a lockstep batch's barriers)
        counts = self.count[:-1]
        now = counts[0] if (counts == counts[0]).all() else self.count[wk]
        ln = -1 if line is None else int(line)
        w = self.w
        # the last store of each entry was by lanes (``w_mask``) of this warp with no sync since (with partial syncs:
        # those of them that have not synced with this lane since)
        if self.pair is None:
            same = ix.equal(w.ep, now)  # (the same sync count first: most entries' last store is older, so ordered)
            hit = bool(same.any())
            if hit:
                wt = ix.get(w.tid)
                same &= (wt >= 0) & (wt >> 5 == wk)
                wmask = ix.get(self.w_mask)
        else:
            wt = ix.get(w.tid)
            same = (wt >= 0) & (wt >> 5 == wk)
            wmask = ix.get(self.w_mask) & ~self._synced(wk, tids & 31, ix.get(w.ep))
            same &= wmask != 0
            hit = bool(same.any())
        if not write and not atomic:
            if hit:
                # a read by a lane that was not among them (a lane reading its own store is program order; one of
                # several lanes that stored the entry in one instruction reads what it stored or what another did)
                bits = _bits(tids)
                mask = wmask
                # (after atomics only a sole writer reads its own value: the others' increments landed too)
                bad = same & (((ix.get(self.w_mask) & bits) == 0) | (ix.get(self.w_atomic) & ((mask & ~bits) != 0)))
                if bad.any():
                    i = int(np.argmax(bad))
                    kind = "atomic" if self.w_atomic[k[i]] else "write"
                    # named: a writer lane other than the reader
                    self._emit(w, k, tids, bad, kind, "read", ln, lanes=mask & ~bits)
            r = self.r
            moved = self._pending(r, ix, wk, tids, now)  # an earlier reader lane other than this one: keep it as r2
            if moved.any():
                self.r2.copy_from(r, k[moved])
            r.put(ix, tids, now, ln)
            if not ix.distinct:
                lost = r.tid[k] != tids  # several lanes read one entry in this instruction: keep a loser as r2
                if lost.any():
                    self.r2.put(Entries(k[lost]), tids[lost], now[lost] if np.ndim(now) else now, ln)
            return
        bits = _bits(tids)
        # the lanes storing each entry in this instruction: its own lane, unless another stores the entry too (a
        # scatter and a gather find those; only then the sort)
        cur = bits
        if not ix.distinct:
            scratch = self.scratch
            scratch[k] = bits
            if (scratch[k] != bits).any():
                uk, inv = np.unique(k, return_inverse=True)
                cur_u = np.zeros(uk.size, np.uint32)
                np.bitwise_or.at(cur_u, inv, bits)
                cur = cur_u[inv]
            scratch[k] = 0
        if landed is not None:
            kept = np.left_shift(np.uint32(1), np.uint32(int(landed) % 32))
        if not atomic:
            if hit:
                # a store after an earlier store by a lane that does not store it again now (either may land last)
                stale = same & ((wmask & ~cur) != 0)
                if stale.any():
                    self._emit(w, k, tids, stale, "write", "write", ln, lanes=wmask & ~cur)
            for rec in (self.r, self.r2):
                bad = self._pending(rec, ix, wk, tids, now)
                if bad.any():
                    self._emit(rec, k, tids, bad, "read", "write", ln)
                    break
        w.put(ix, tids, now, ln)
        ix.set(self.w_mask, cur if landed is None else kept)
        ix.set(self.w_atomic, atomic)
        self.r.clear(ix)
        self.r2.clear(ix)

    def _emit(self, rec, k, tids, bad, first_kind, second_kind, ln, lanes=None) -> None:
        """Report lane ``bad``'s access against the record ``rec`` of its byte; ``lanes``: per access, the lanes
        of the earlier access to name (the first of them), else the record's thread."""
        i = int(np.argmax(bad))
        j = int(k[i])
        first_line = int(rec.line[j])
        key = (first_kind, first_line, second_kind, ln)
        if key in self._seen:
            return
        self._seen.add(key)
        c, t = divmod(int(tids[i]), self.T)
        first_tid = int(rec.tid[j])
        if lanes is not None:
            m = int(lanes[i])
            first_tid = int(rec.tid[j]) // 32 * 32 + ((m & -m).bit_length() - 1)
        self.report(
            {
                "first": (first_kind, first_line if first_line >= 0 else None, first_tid % self.T),
                "second": (second_kind, ln if ln >= 0 else None, t),
                "addr": j % self.n * self.unit,
                "count": int(bad.sum()) * self.unit,
                "warp": t // 32,
            },
            c,
        )


def _bits(tids) -> np.ndarray:
    """Each thread's lane bit (1 << lane) in its warp's 32-bit mask. (``& 31`` and ``>> 5`` here are ``% 32`` and
    ``// 32``, which numpy does several times slower on int64.)"""
    return np.left_shift(np.uint32(1), (tids & 31).astype(np.uint32))


class _Record:
    """One access per byte: batch-wide thread (its warp: thread // 32), the warp's sync count then, line."""

    def __init__(self, size: int):
        self.tid = np.full(size, -1, np.int32)  # its warp is tid // 32
        self.ep = np.full(size, -1, np.int64)
        self.line = np.full(size, -1, np.int32)

    def pending(self, ix, wk, now, tids) -> np.ndarray:
        """Whether the record of entries ``ix`` (:class:`Entries`) is another lane of the same warp with no sync
        since."""
        p = ix.equal(self.ep, now)  # (the sync count first: most records are older)
        if p.any():
            t = ix.get(self.tid)
            p &= (t >= 0) & (t >> 5 == wk) & (t != tids)
        return p

    def put(self, ix, tids, now, ln) -> None:
        ix.set(self.tid, tids)
        ix.set(self.ep, now)
        ix.set(self.line, ln)

    def copy_from(self, other, k) -> None:
        self.tid[k] = other.tid[k]
        self.ep[k] = other.ep[k]
        self.line[k] = other.line[k]

    def clear(self, ix) -> None:
        ix.set(self.tid, -1)
