"""Shared-memory race checker: a happens-before check with one vector clock per warp.

Every warp ``u`` has a clock ``VC[u][u]``; a shared write records (warp, clock, thread, line) per
byte, a read records (clock, line) per byte and per reading warp. An access by warp ``w`` is
ordered after an earlier access by warp ``u`` iff ``VC[w][u] >= clock``. Clocks flow through
synchronisation exactly as the hardware orders memory: a CTA barrier (``bar.sync``) joins the
clocks of all warps it releases; an mbarrier arrive (or a TMA ``complete_tx``) releases the
arriver's clock into the barrier's current phase, and a wait that sees the phase completed
acquires it. So a write and a read/write of the same byte by different warps with no barrier or
mbarrier ordering between them is reported, with both lines.

Scope (documented limits): accesses by lanes of one warp are ordered by program order (the
emulator runs a warp in lockstep), so intra-warp hazards without ``__syncwarp`` are not reported;
two lanes writing one byte in the same instruction are not reported.
"""
from __future__ import annotations

import numpy as np


class RaceChecker:
    def __init__(self, nbytes: int, warps: int, report):
        self.W = warps
        self.vc = np.zeros((warps, warps), dtype=np.int64)
        np.fill_diagonal(self.vc, 1)
        self.w_warp = np.full(nbytes, -1, dtype=np.int16)
        self.w_clk = np.zeros(nbytes, dtype=np.int64)
        self.w_tid = np.full(nbytes, -1, dtype=np.int32)
        self.w_line = np.full(nbytes, -1, dtype=np.int32)
        self.r_clk = np.zeros((warps, nbytes), dtype=np.int64)
        self.r_line = np.full((warps, nbytes), -1, dtype=np.int32)
        self.r_tid = np.full((warps, nbytes), -1, dtype=np.int32)
        self.report = report       # report(kind_detail dict)
        self._seen: set = set()

    # ---- synchronisation -------------------------------------------------------------------
    def barrier(self, warps) -> None:
        """A CTA barrier released ``warps`` (array of warp ids) together."""
        ws = np.asarray(warps)
        joined = self.vc[ws].max(axis=0)
        self.vc[ws] = joined
        self.vc[ws, ws] += 1

    def release(self, warp: int) -> np.ndarray:
        """The clock an mbarrier arrive by ``warp`` publishes; the warp's own clock then ticks."""
        out = self.vc[warp].copy()
        self.vc[warp, warp] += 1
        return out

    def acquire(self, warp: int, clock) -> None:
        if clock is not None:
            np.maximum(self.vc[warp], clock, out=self.vc[warp])

    # ---- accesses ----------------------------------------------------------------------------
    def access(self, byte_addr: np.ndarray, tids: np.ndarray, write: bool, line) -> None:
        """``byte_addr``: flat array of shared byte offsets; ``tids``: the thread of each."""
        if byte_addr.size == 0:
            return
        warps = tids // 32
        ln = -1 if line is None else int(line)
        for w in np.unique(warps):
            sel = warps == w
            a = byte_addr[sel]
            t = tids[sel]
            vcw = self.vc[w]
            # earlier writes by other warps not ordered before this access
            ww = self.w_warp[a]
            other = (ww >= 0) & (ww != w)
            if other.any():
                bad = other & (self.w_clk[a] > vcw[np.maximum(ww, 0)])
                if bad.any():
                    i = int(np.argmax(bad))
                    self._emit("write", int(self.w_line[a[i]]), int(self.w_tid[a[i]]),
                               "write" if write else "read", ln, int(t[i]), int(a[i]), int(bad.sum()))
            if write:
                # earlier reads by other warps not ordered before this write
                for u in range(self.W):
                    if u == w:
                        continue
                    rc = self.r_clk[u, a]
                    bad = (rc > 0) & (rc > vcw[u])
                    if bad.any():
                        i = int(np.argmax(bad))
                        self._emit("read", int(self.r_line[u, a[i]]), int(self.r_tid[u, a[i]]), "write",
                                   ln, int(t[i]), int(a[i]), int(bad.sum()))
                self.w_warp[a] = w
                self.w_clk[a] = vcw[w]
                self.w_tid[a] = t
                self.w_line[a] = ln
                self.r_clk[:, a] = 0
            else:
                self.r_clk[w, a] = vcw[w]
                self.r_line[w, a] = ln
                self.r_tid[w, a] = t

    def _emit(self, first_kind, first_line, first_tid, second_kind, second_line, second_tid, addr, n):
        key = (first_kind, first_line, second_kind, second_line)
        if key in self._seen:
            return
        self._seen.add(key)
        self.report({"first": (first_kind, first_line if first_line >= 0 else None, first_tid),
                     "second": (second_kind, second_line if second_line >= 0 else None, second_tid),
                     "addr": addr, "count": n})
