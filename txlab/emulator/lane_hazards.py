"""Hazards between lanes of one warp: shared-memory accesses that only the emulator's lockstep orders.

Since Volta the lanes of a warp are scheduled independently: a store by one lane and a load or store
of the same bytes by another lane of the same warp are ordered only by ``__syncwarp()``
(``Tx.cuda.warp_sync()``) or a barrier between them; the "warp-synchronous" reduction tail that
relied on lockstep is a race. The emulator runs a warp's lanes in lockstep, so its values are those
of one legal schedule; this check reports the pairs nothing orders, as compute-sanitizer's racecheck
does on the GPU.

Per shared byte (of each CTA of a batch, flat ``cta * nbytes + offset``): the last plain store's
thread, warp, that warp's sync count and line, and whether several lanes stored it in that one
instruction (a uniform store: every lane wrote the value it reads back, not reported); the last two
lanes that loaded it since. Per warp a sync count, advanced by what orders the warp's memory:
``__syncwarp`` (``bar.warp.sync``), a CTA or named barrier, an mbarrier arrive or wait. Shuffles,
votes and the warp's other ``.sync`` collectives do not: compute-sanitizer's racecheck reports two
lanes with only a ``__shfl_sync`` between them (H100, 2026-12-06, docs/gpu-runs.md), as the
programming guide promises memory ordering of ``__syncwarp`` alone. Only plain loads and stores take
part (TIRx buffer accesses, PTX ``ld``/``st``); atomics, ``ldmatrix``/``stmatrix``, TMA and
tensor-core operands do not.

Warps are keyed by batch-wide thread // 32, as the checkers' barriers are.
"""

from __future__ import annotations

import numpy as np


class LaneHazards:
    def __init__(self, size: int, nbytes: int, threads: int, ctas: int, report):
        self.n = nbytes
        self.T = threads
        self.report = report  # report(detail dict, cta_in_batch)
        self.count = np.zeros((ctas * threads + 31) // 32 + 1, np.int64)
        self.w = _Record(size)
        self.r = _Record(size)
        self.r2 = _Record(size)  # a second reader lane (another than ``r``'s) in the same sync interval
        self.w_multi = np.zeros(size, bool)
        self._seen: set = set()

    def sync(self, warps) -> None:
        """Warps (batch-wide thread // 32) synchronised: their lanes' earlier accesses are ordered."""
        ws = np.unique(np.asarray(warps, np.int64).ravel())
        self.count[ws[(ws >= 0) & (ws < self.count.size)]] += 1

    def access(self, k, tids, write: bool, line) -> None:
        """Plain accesses of flat bytes ``k`` by batch-wide threads ``tids`` (one instruction)."""
        k = np.asarray(k, np.int64)
        tids = np.asarray(tids, np.int64)
        if k.size == 0:
            return
        wk = tids // 32
        now = self.count[wk]
        ln = -1 if line is None else int(line)
        w = self.w
        # against the last store by another lane of this warp in this sync interval (one lane's store)
        bad = w.pending(k, wk, now, tids) & ~self.w_multi[k]
        if bad.any():
            self._emit(w, k, tids, bad, "write", "write" if write else "read", ln)
        if write:
            for rec in (self.r, self.r2):
                bad = rec.pending(k, wk, now, tids)
                if bad.any():
                    self._emit(rec, k, tids, bad, "read", "write", ln)
                    break
            w.put(k, tids, wk, now, ln)
            self.w_multi[k] = False
            self.w_multi[k[w.tid[k] != tids]] = True  # several lanes stored one byte in this instruction
            self.r.clear(k)
            self.r2.clear(k)
        else:
            r = self.r
            moved = r.pending(k, wk, now, tids)  # an earlier reader lane other than this one: keep it as r2
            if moved.any():
                km = k[moved]
                self.r2.copy_from(r, km)
            r.put(k, tids, wk, now, ln)
            lost = r.tid[k] != tids  # several lanes read one byte in this instruction: keep a loser as r2
            if lost.any():
                self.r2.put(k[lost], tids[lost], wk[lost], now[lost], ln)

    def _emit(self, rec, k, tids, bad, first_kind, second_kind, ln) -> None:
        i = int(np.argmax(bad))
        j = int(k[i])
        first_line = int(rec.line[j])
        key = (first_kind, first_line, second_kind, ln)
        if key in self._seen:
            return
        self._seen.add(key)
        c, t = divmod(int(tids[i]), self.T)
        self.report(
            {
                "first": (first_kind, first_line if first_line >= 0 else None, int(rec.tid[j]) % self.T),
                "second": (second_kind, ln if ln >= 0 else None, t),
                "addr": j % self.n,
                "count": int(bad.sum()),
                "warp": t // 32,
            },
            c,
        )


class _Record:
    """One access per byte: batch-wide thread, warp, the warp's sync count then, line."""

    def __init__(self, size: int):
        self.tid = np.full(size, -1, np.int64)
        self.warp = np.full(size, -1, np.int64)
        self.ep = np.full(size, -1, np.int64)
        self.line = np.full(size, -1, np.int32)

    def pending(self, k, wk, now, tids) -> np.ndarray:
        """Whether byte ``k``'s record is another lane of the same warp with no sync since."""
        return (self.warp[k] == wk) & (self.ep[k] == now) & (self.tid[k] != tids) & (self.tid[k] >= 0)

    def put(self, k, tids, wk, now, ln) -> None:
        self.tid[k] = tids
        self.warp[k] = wk
        self.ep[k] = now
        self.line[k] = ln

    def copy_from(self, other, k) -> None:
        self.tid[k] = other.tid[k]
        self.warp[k] = other.warp[k]
        self.ep[k] = other.ep[k]
        self.line[k] = other.line[k]

    def clear(self, k) -> None:
        self.tid[k] = -1
        self.warp[k] = -1
