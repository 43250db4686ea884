"""Shared-memory race checker: a happens-before check with one vector clock per warp.

Every warp ``u`` has a clock ``VC[u][u]``; a shared write records (warp, clock, thread, line) per
byte, a read records (clock, line) per byte and per reading warp. An access by warp ``w`` is
ordered after an earlier access by warp ``u`` iff ``VC[w][u] >= clock``. Clocks flow through
synchronisation exactly as the hardware orders memory: a CTA barrier (``bar.sync``) joins the
clocks of all warps it releases; an mbarrier arrive (or a TMA ``complete_tx``) releases the
arriver's clock into the barrier's current phase, and a wait that sees the phase completed
acquires it. So a write and a read/write of the same byte by different warps with no barrier or
mbarrier ordering between them is reported, with both lines.

A batch of CTAs (run as one lane vector) has one checker with a leading CTA axis: thread ids
are batch-wide (CTA ``c``'s thread ``t`` is ``c * threads + t``), every check is vectorised over
the CTAs, and accesses of different CTAs never meet (each has its own shared memory).

Clusters: a CTA's checker has one more clock row per CTA of its cluster, an *agent* standing for
that CTA's TMA multicast writes into this CTA's shared memory. What a warp knows of another CTA's
warps (``foreign`` clocks, per cluster rank) arrives through remote mbarrier arrives (the arriving
warp's clock travels with the phase) and travels on through local barriers and mbarriers; a
multicast write is ordered after exactly what its issuing warp knew of the target CTA, and the
target's warps acquire the write through the mbarrier its complete_tx signals.

Never-written reads: both checkers also keep, per shared byte, whether anything of this CTA's run
wrote it yet (a store, an atomic, a TMA load or multicast, a cp.async landing, tcgen05.alloc's
address, a DSMEM store from another CTA); a plain read (a load, ldmatrix, a wgmma/tcgen05 operand, a
TMA store's in-bounds source) of bytes nothing wrote is an ``uninitialized_shared_read`` (a GPU
reads whatever was left there); so is an atomic read-modify-write of such bytes (a histogram whose
bins nobody zeroed), but an exchange's, whose stored value does not depend on them. Atomics mark
their bytes written. Tensor-core
operand reads (wgmma, tcgen05.mma/cp descriptors, non-transposed ldmatrix rows) count only the
operand rows that are partly written: a row nothing wrote is the GEMM tail idiom (see
:meth:`RaceChecker.access`). A read that a race is later reported against (the write landing after
it with nothing ordering them, or a cp.async still copying) is that race only: the never-written
reads are kept per line and reported when the CTA's run ends (:meth:`_Reporter.flush`), except at
lines a race named as the read.

Bytes and words: the checkers report bytes (addresses, counts), but keep their state per 4-byte word
while every access so far covered whole aligned words (a float32 kernel's, all run long), and per
byte from the first one that did not (:class:`_Reporter`).

Lanes of one warp: both checkers hand plain loads and stores to a :class:`LaneHazards`
(txlab/emulator/lane_hazards.py), which reports two lanes of one warp touching a byte with no
``__syncwarp`` or barrier between (the warp-synchronous idiom; the warp's lockstep here is one
legal schedule, not a promise). Two lanes writing one byte in the same instruction are not
reported.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.lane_hazards import Entries, LaneHazards


def _spread(a, width: int):
    """Each of the ``width`` consecutive bytes (or entries) from each of ``a``, in that order."""
    return a if width == 1 else (a[:, None] + np.arange(width)).ravel()


def _repeat(tids, width: int):
    """The thread of each byte of :func:`_spread`."""
    return tids if width == 1 else np.repeat(tids, width)


def _words(a, tids):
    """(word offsets, thread of each) where bytes ``a`` (accessed by ``tids``) come in aligned groups of 4
    consecutive bytes of one thread each, as an element of 4, 8 or 16 bytes spreads; else None."""
    if a.size % 4:
        return None
    a4, t4 = a.reshape(-1, 4), tids.reshape(-1, 4)
    if (a4[:, 0] & 3).any() or (a4 != a4[:, :1] + np.arange(4)).any() or (t4 != t4[:, :1]).any():
        return None
    return a4[:, 0] >> 2, t4[:, 0]


def _covered_words(a):
    """The words that bytes ``a`` cover, if they cover each whole (in any order); else None."""
    words = np.unique(a >> 2)
    return words if np.unique(a).size == 4 * words.size else None


class _Reporter:
    """Reports a pair of racing accesses once per (kinds, lines); and reads of shared bytes that
    nothing of the CTA's run wrote before them, once per line, when the run ends.

    The per-byte state is kept per *entry* of ``unit`` bytes: 4 (one per aligned word) while every
    access, mark and operand row so far covered whole aligned words -- a float32 kernel's all run
    long, so its checks do a quarter of the array work -- then 1 (one per byte) from the first one
    that did not (a 1- or 2-byte element's lanes, an unaligned range): :meth:`_to_bytes` repeats
    every entry 4 times. A word's 4 bytes have had the same accesses until then, so its entry is
    what each of their entries would be, and reports give byte addresses and counts of bytes, as
    with one entry per byte from the start."""

    report: object
    _seen: set
    n: int  # shared bytes per CTA
    unit: int  # bytes per entry: 4 or 1
    nu: int  # entries per CTA (n // unit)
    lanes: LaneHazards
    #: the names of the per-entry state arrays (entries on their last axis; None until used)
    PER_ENTRY: tuple = ()

    def lock_global(self, addrs, tids, acquire: bool) -> None:
        """Atomics on global memory at byte addresses ``addrs`` by batch-wide threads ``tids``: a lock in global
        memory orders this CTA's shared accesses as one in shared memory does (a fence orders every space). Each
        checker's ``_locking(acquire)`` says whether an atomic can release or acquire now, its ``_sync_atomic`` how."""
        if not self._locking(acquire):
            return
        tids = np.asarray(tids, np.int64)
        self._sync_atomic(-1 - np.asarray(addrs, np.int64), tids // self.T, (tids % self.T) // 32, acquire)

    def _init_units(self, nbytes: int) -> None:
        self.n = nbytes
        self.unit = 4 if nbytes % 4 == 0 else 1
        self.nu = nbytes // self.unit

    def _to_bytes(self) -> None:
        """From one entry per word to one per byte (see the class docstring), for the rest of the run."""
        for name in self.PER_ENTRY:
            arr = getattr(self, name, None)
            if arr is not None:
                setattr(self, name, np.repeat(arr, 4, axis=-1))
        self.unit, self.nu = 1, self.n
        self.lanes.to_bytes()

    def _entries(self, a, tids, width: int, unwritten) -> tuple:
        """(entries, thread of each) of an access by threads ``tids`` of the ``width`` bytes at each of
        byte offsets ``a`` (int64 arrays). Word entries while it covers whole aligned words (and a tensor-core
        operand's rows of ``unwritten`` bytes are whole words); else the checker goes to bytes."""
        if self.unit == 4 and (isinstance(unwritten, bool) or unwritten % 4 == 0):
            if width % 4 == 0 and not np.bitwise_or.reduce(a) & 3:  # (aligned: no offset has bit 0 or 1 set)
                return _spread(a >> 2, width >> 2), _repeat(tids, width >> 2)
            if width % 4:  # (a vector of 2-byte elements per lane, say, may still cover whole words)
                a, tids, width = _spread(a, width), _repeat(tids, width), 1
                words = _words(a, tids)
                if words is not None:
                    return words
        if self.unit == 4:
            self._to_bytes()
        return _spread(a, width), _repeat(tids, width)

    def sync_warps(self, warps) -> None:
        """``__syncwarp`` (``bar.warp.sync``) by ``warps`` (batch-wide ids): orders the accesses of their lanes."""
        self.lanes.sync(warps)

    def sync_lanes(self, tids) -> None:
        """``__syncwarp`` run by lanes ``tids`` (batch-wide threads): orders their accesses with each other's."""
        self.lanes.sync_lanes(tids)

    def _init_written(self, size: int, report_unwritten) -> None:
        self.written = np.zeros(size, bool)  # per (batch CTA, entry): anything wrote it yet
        self.report_unwritten = report_unwritten  # report_unwritten(record dict, cta_in_batch)
        self.unwritten: dict = {}  # line -> the first never-written read at it (and how many)
        self.raced_reads: set = set()  # lines of reads that a race was reported against

    def mark(self, byte_addr, c: int = 0) -> None:
        """Bytes of batch CTA ``c`` written by something whose write is not an :meth:`access` here
        (a TMA load box, a DSMEM store from another CTA): a later read of them is no finding."""
        a = np.asarray(byte_addr, np.int64).ravel()
        a = a[(a >= 0) & (a < self.n)]
        if self.unit == 4:
            words = _covered_words(a)
            if words is None:
                self._to_bytes()
            else:
                a = words
        self.written[int(c) * self.nu + a] = True

    def check_written(self, byte_addr, tid: int, line, name=None, c: int = 0) -> None:
        """A read by thread ``tid`` (of batch CTA ``c``) of bytes that no :meth:`access` call checks
        (a TMA store's in-bounds source bytes)."""
        a = np.asarray(byte_addr, np.int64).ravel()
        a = a[(a >= 0) & (a < self.n)]
        z = np.zeros(a.size, np.int64)
        k = int(c) * self.nu + (a >> 2 if self.unit == 4 else a)
        self._unwritten(k, z + int(tid), z + int(c), -1 if line is None else int(line), name, addr=a)

    def _read_unwritten(self, k, t, c, ln, name, unwritten, got=None) -> None:
        """``got``: ``written[k]``, where the caller has it."""
        if unwritten is True:
            self._unwritten(k, t, c, ln, name, got=got)
        else:
            self._unwritten_rows(k, t, c, ln, name, int(unwritten) // self.unit, got)

    def _unwritten_rows(self, k, t, c, ln, name, row: int, got=None) -> None:
        """Reads of flat entries ``k`` in rows of ``row`` entries (an operand row of a tensor-core read):
        only the never-written entries of rows that are partly written count (see :meth:`access`)."""
        got = self.written[k] if got is None else got
        if k.size % row or got.all():
            return
        fr = ~got.reshape(-1, row)
        partly = np.repeat(fr.any(axis=1) & ~fr.all(axis=1), row)
        if partly.any():
            self._unwritten(k[partly], t[partly] if np.ndim(t) else t, c[partly] if np.ndim(c) else c, ln, name)

    def _unwritten(self, k, t, c, ln, name, addr=None, got=None) -> None:
        """Reads of flat entries ``k`` (``c * nu + entry``) by threads ``t`` (of batch CTAs ``c``) at line
        ``ln``: keep the first never-written one per line (reported by :meth:`flush`). ``addr``: the byte
        offset of each read (else each entry's first byte's); ``got``: ``written[k]``, where the caller has it."""
        got = self.written[k] if got is None else got
        if got.all():
            return
        fresh = ~got
        nthreads = int(np.unique(np.asarray(t)[fresh]).size) if np.ndim(t) else 1
        rec = self.unwritten.get(ln)
        if rec is not None:
            rec["count"] += nthreads
            return
        i = int(np.argmax(fresh))
        ci = int(c[i]) if np.ndim(c) else int(c)
        self.unwritten[ln] = {
            "line": ln if ln >= 0 else None,
            "addr": int(k[i] % self.nu) * self.unit if addr is None else int(addr[i]),
            "tid": int(t[i]) if np.ndim(t) else int(t),
            "count": nthreads,
            "name": name,
            "cta": ci,
        }

    def flush(self) -> None:
        """The CTA's run ended: report its never-written reads, except at lines a race named as the read."""
        pending, self.unwritten = self.unwritten, {}
        if self.report_unwritten is None:
            return
        for ln, rec in pending.items():
            if ln not in self.raced_reads:
                self.report_unwritten(rec, rec["cta"])

    def _emit(self, first_kind, first_line, first_tid, second_kind, second_line, second_tid, entry, n, cta=0):
        """Report a race at ``entry`` (of its CTA) on ``n`` entries (each reported as its bytes)."""
        if first_kind == "read":  # that read is this race (not a never-written read)
            self.raced_reads.add(first_line)
        key = (first_kind, first_line, second_kind, second_line)
        if key in self._seen:
            return
        self._seen.add(key)
        self.report(
            {
                "first": (first_kind, first_line if first_line >= 0 else None, first_tid),
                "second": (second_kind, second_line if second_line >= 0 else None, second_tid),
                "addr": entry * self.unit,
                "count": n * self.unit,
            },
            cta,
        )


class RaceChecker(_Reporter):
    PER_ENTRY = (
        "written",
        "w_warp",
        "w_clk",
        "w_tid",
        "w_line",
        "r_clk",
        "r_line",
        "r_tid",
        "a_clk",
        "a_line",
        "a_tid",
    )

    def __init__(
        self,
        nbytes: int,
        warps: int,
        report,
        *,
        ctas: int = 1,
        threads: int | None = None,
        agents: int = 0,
        tensor_core: bool = False,
        report_unwritten=None,
    ):
        self.W = warps
        # agent rows: a cluster's one per CTA's multicast writes into this one, then (``tensor_core``)
        # the CTA's tcgen05 pipe, whose completions only an mbarrier a commit arrived on publishes
        self.tc_row = warps + agents if tensor_core else None
        agents += bool(tensor_core)
        self.A = agents
        wa = warps + agents
        self.B = ctas
        self.T = threads if threads is not None else warps * 32
        self._init_units(nbytes)
        nu = self.nu
        self.vc = np.zeros((ctas, wa, wa), dtype=np.int64)
        self.vc[:, np.arange(wa), np.arange(wa)] = 1
        self.w_warp = np.full((ctas, nu), -1, dtype=np.int16)
        self.w_clk = np.zeros((ctas, nu), dtype=np.int64)
        self.w_tid = np.full((ctas, nu), -1, dtype=np.int32)
        self.w_line = np.full((ctas, nu), -1, dtype=np.int32)
        self.r_clk = np.zeros((ctas, wa, nu), dtype=np.int64)
        self.r_line = np.full((ctas, wa, nu), -1, dtype=np.int32)
        self.r_tid = np.full((ctas, wa, nu), -1, dtype=np.int32)
        self.report = report  # report(detail dict, cta_in_batch)
        self._seen: set = set()
        self.foreign: dict = {}  # warp -> {cluster rank: clock over that CTA's checker rows}
        self.a_clk = None  # atomics (allocated at the first one): clock, line, thread per warp
        self.a_line = self.a_tid = None
        # locks: each warp's clock at its last fence (allocated at the first one), and per atomic entry the clock
        # the fenced atomics there released (see :meth:`fence`)
        self.fenced = None
        self.locks: dict = {}
        self.labels: dict = {}  # agent row -> what it stands for, in reports
        self._init_written(ctas * nu, report_unwritten)
        self.lanes = LaneHazards(nu, self.unit, self.T, ctas, report)

    # ---- synchronisation -------------------------------------------------------------------
    def barrier(self, warps) -> None:
        """A CTA barrier released ``warps`` (batch-wide warp ids) together, per CTA."""
        ws = np.asarray(warps).astype(np.int64)
        self.lanes.sync(ws)
        cs = ws // self.W
        wl = ws % self.W
        for c in np.unique(cs):
            w = wl[cs == c]
            joined = self.vc[c][w].max(axis=0)
            self.vc[c][w] = joined
            self.vc[c, w, w] += 1
            if self.foreign:
                known = merge_foreign(*(self.foreign.get(int(c * self.W + x)) for x in w))
                for x in w:
                    self.foreign[int(c * self.W + x)] = dict(known)

    def release(self, warp: int) -> np.ndarray:
        """The clock an mbarrier arrive by ``warp`` publishes; the warp's own clock then ticks."""
        c, w = divmod(int(warp), self.W) if warp < self.W * self.B else (0, int(warp))
        out = self.vc[c, w].copy()
        self.vc[c, w, w] += 1
        return out

    def acquire(self, warp: int, clock) -> None:
        if warp < self.W * self.B:
            self.lanes.sync(warp)
        if clock is not None:
            c, w = divmod(int(warp), self.W) if warp < self.W * self.B else (0, int(warp))
            np.maximum(self.vc[c, w], clock, out=self.vc[c, w])

    def fence(self, warps) -> None:
        """A fence (``__threadfence``, ``fence.acq_rel``) by ``warps`` (batch-wide ids): what each did before it is
        released by its next atomic. An atomic in a polling loop's condition (a spin lock's compare-and-swap, a
        flag's wait) acquires what such releases of its entry published (:meth:`_sync_atomic`): a spin lock (acquire,
        critical section, fence, release by an atomic) orders its critical sections, also between lanes of one warp.
        Other atomics acquire nothing (a histogram's adds, a counter nobody waits on)."""
        if self.fenced is None:
            self.fenced = np.zeros_like(self.vc)
            self.fence_pending = np.zeros(self.vc.shape[:2], bool)
        for x in np.unique(np.asarray(warps, np.int64)):
            c, w = divmod(int(x), self.W)
            self.fenced[c, w] = self.vc[c, w]
            self.fence_pending[c, w] = True
            self.vc[c, w, w] += 1

    def _sync_atomic(self, a, c, w, acquire: bool) -> None:
        """Atomics by warps ``w`` of CTAs ``c`` at entries ``a``: in a poll, each acquires the entry's released clock;
        the first atomic of a warp after its fence releases what it had fenced."""
        released = set()
        for ci, ai, wi in {(int(x), int(y), int(z)) for x, y, z in zip(c, a, w, strict=True)}:
            held = self.locks.get((ci, ai))
            if acquire and held is not None:  # (also a hand-off between lanes of one warp)
                self.lanes.sync(np.int64(ci * self.W + wi))
                np.maximum(self.vc[ci, wi], held, out=self.vc[ci, wi])
            if self.fenced is not None and self.fence_pending[ci, wi]:
                f = self.fenced[ci, wi]
                self.locks[(ci, ai)] = f.copy() if held is None else np.maximum(held, f)
                released.add((ci, wi))
        for ci, wi in released:
            self.fence_pending[ci, wi] = False

    def _locking(self, acquire: bool) -> bool:
        return self.fenced is not None or (acquire and bool(self.locks))

    def stamp(self, c, w) -> np.ndarray:
        """The current clock of warps ``w`` of batch CTAs ``c`` (for :class:`GlobalRaces`)."""
        return self.vc[c, w, w]

    def ordered(self, c, w, u, clk) -> np.ndarray:
        """Whether warp ``w`` (now) is ordered after warp ``u``'s access at clock ``clk``."""
        return self.vc[c, w, u] >= clk

    def known_of(self, warp: int) -> dict:
        """What ``warp`` knows of other CTAs' warps: {cluster rank: clock}."""
        return self.foreign.get(int(warp), {})

    def acquire_foreign(self, warp: int, known: dict) -> None:
        if known:
            self.foreign[int(warp)] = merge_foreign(self.foreign.get(int(warp)), known)

    def agent(self, rank: int, label: str) -> int:
        """The clock row of cluster rank ``rank``'s multicast writes into this CTA."""
        row = self.W + int(rank)
        self.labels[row] = label
        return row

    # ---- accesses ----------------------------------------------------------------------------
    def access(
        self,
        byte_addr: np.ndarray,
        tids: np.ndarray,
        write: bool,
        line,
        atomic: bool = False,
        *,
        name=None,
        unwritten: bool | int = True,
        lanes: bool = False,
        landed=None,
        width: int = 1,
        acquire: bool = False,
    ) -> None:
        """``byte_addr``: flat array of shared byte offsets (of each thread's own CTA); ``tids``:
        the batch-wide thread of each. The accesses of one call are one instruction: lanes of
        different warps touching one byte in a writing instruction race with each other.
        ``atomic``: an atomic read-modify-write, which races only with plain accesses (and marks its
        bytes written). A plain read of bytes nothing wrote yet is kept as a never-written read (through
        ``name``), unless ``unwritten`` is False (the caller checks a part: :meth:`check_written`); an int
        ``unwritten``: ``byte_addr`` is rows of that many bytes (a tensor-core operand's M or N rows), and
        only rows partly written count -- a row nothing wrote is the GEMM tail idiom (only the rows
        inside the matrix loaded; the rest feed accumulator rows that are never stored). ``lanes``: a
        plain load or store, also checked against other lanes of its warp (:class:`LaneHazards`).
        ``width``: ``byte_addr`` is the first byte of each thread's ``width`` bytes (an element's)."""
        if byte_addr.size == 0:
            return
        a, tids = self._entries(np.asarray(byte_addr, np.int64), np.asarray(tids, np.int64), width, unwritten)
        c = tids // self.T
        t = tids - c * self.T
        if atomic:
            if unwritten is True:  # an atomic's read of bytes nothing wrote: the bins nobody zeroed
                self._read_unwritten(c * self.nu + a, t, c, -1 if line is None else int(line), name, True)
            self._atomic(a, c, t, t // 32, line)
            self.lanes.access(c * self.nu + a, tids, True, line, atomic=True)
            self.written[c * self.nu + a] = True
            if self._locking(acquire):
                self._sync_atomic(a, c, t // 32, acquire)
            return
        if not write and unwritten is not False:
            self._read_unwritten(c * self.nu + a, t, c, -1 if line is None else int(line), name, unwritten)
        self._access(a, c, t, t // 32, write, line)
        if lanes:
            self.lanes.access(c * self.nu + a, tids, write, line, landed=landed)

    def _atomic(self, a, c, t, w, line) -> None:
        ln = -1 if line is None else int(line)
        vcw = self.vc[c, w]
        self._vs_write(a, c, t, w, vcw, "atomic", ln)
        self._vs_warps(self.r_clk, self.r_line, self.r_tid, a, c, t, w, vcw, "read", "atomic", ln)
        if self.a_clk is None:
            self.a_clk = np.zeros_like(self.r_clk)
            self.a_line = np.full_like(self.r_line, -1)
            self.a_tid = np.full_like(self.r_tid, -1)
        self.a_clk[c, w, a] = vcw[np.arange(w.size), w]
        self.a_line[c, w, a] = ln
        self.a_tid[c, w, a] = t

    def _emit_lane(self, first, i, what, ln, t, a, c, n) -> None:
        """The race of lane ``i`` of this access (threads ``t``, bytes ``a``, CTAs ``c``; ``what``:
        its kind, or a function of ``i`` giving it) with the earlier access ``first`` = (kind, line,
        thread); ``n`` lanes race."""
        self._emit(*first, what(i) if callable(what) else what, ln, int(t[i]), int(a[i]), n, int(c[i]))

    def _vs_write(self, a, c, t, w, vcw, what, ln) -> None:
        """An access (``what``) against the last write of its bytes by another warp, unordered."""
        ww = self.w_warp[c, a].astype(np.int64)
        other = (ww >= 0) & (ww != w)
        if other.any():
            seen = np.take_along_axis(vcw, np.maximum(ww, 0)[:, None], axis=1)[:, 0]
            bad = other & (self.w_clk[c, a] > seen)
            if bad.any():
                i = int(np.argmax(bad))
                first = (self._kind(int(ww[i]), "write"), int(self.w_line[c[i], a[i]]), int(self.w_tid[c[i], a[i]]))
                self._emit_lane(first, i, what, ln, t, a, c, int(bad.sum()))

    def _vs_warps(self, clk, lines, tids, a, c, t, w, vcw, first_kind, what, ln) -> None:
        """An access against the per-warp records ``clk`` (reads or atomics) of other warps, unordered."""
        rc = clk[c, :, a]  # (n, W): earlier accesses by each warp
        mine = np.arange(self.W + self.A)[None, :] == w[:, None]
        bad = (rc > 0) & (rc > vcw) & ~mine
        if bad.any():
            row = bad.any(axis=1)
            i = int(np.argmax(row))
            u = int(np.argmax(bad[i]))
            first = (first_kind, int(lines[c[i], u, a[i]]), int(tids[c[i], u, a[i]]))
            self._emit_lane(first, i, what, ln, t, a, c, int(row.sum()))

    def _vs_atomics(self, a, c, t, w, vcw, write, ln) -> None:
        """A plain access against the unordered atomics of other warps on the same bytes."""
        what = lambda i: self._kind(int(w[i]), "write" if write else "read")  # noqa: E731 - a local describer
        self._vs_warps(self.a_clk, self.a_line, self.a_tid, a, c, t, w, vcw, "atomic", what, ln)
        if write:
            self.a_clk[c, :, a] = 0

    def access_as(self, row: int, byte_addr: np.ndarray, tid: int, write: bool, line) -> None:
        """An access by agent ``row`` (see :meth:`agent`), reported as thread ``tid`` of its CTA."""
        if byte_addr.size == 0:
            return
        a, t = self._entries(np.asarray(byte_addr, np.int64), np.full(byte_addr.size, int(tid)), 1, True)
        z = np.zeros(a.size, np.int64)
        self._access(a, z, t, z + int(row), write, line)

    def _kind(self, row: int, kind: str) -> str:
        return f"{self.labels[row]} {kind}" if row in self.labels else kind

    def _access(self, a, c, t, w, write, line) -> None:
        ln = -1 if line is None else int(line)
        vcw = self.vc[c, w]  # (n, W): each accessor's clock row
        if self.a_clk is not None:
            self._vs_atomics(a, c, t, w, vcw, write, ln)
        self._vs_write(a, c, t, w, vcw, lambda i: self._kind(int(w[i]), "write" if write else "read"), ln)
        if write:
            self._vs_warps(
                self.r_clk,
                self.r_line,
                self.r_tid,
                a,
                c,
                t,
                w,
                vcw,
                "read",
                lambda i: self._kind(int(w[i]), "write"),
                ln,
            )
            # two warps writing one byte in this same instruction
            if np.unique(w).size > 1:
                key = c * self.nu + a
                order = np.argsort(key, kind="stable")
                ks, wsrt = key[order], w[order]
                dup = (ks[1:] == ks[:-1]) & (wsrt[1:] != wsrt[:-1])
                if dup.any():
                    j = int(np.argmax(dup))
                    i0, i1 = order[j], order[j + 1]
                    self._emit("write", ln, int(t[i0]), "write", ln, int(t[i1]), int(a[i1]), int(dup.sum()), int(c[i1]))
            self.w_warp[c, a] = w
            self.w_clk[c, a] = vcw[np.arange(w.size), w]
            self.w_tid[c, a] = t
            self.w_line[c, a] = ln
            self.r_clk[c, :, a] = 0
            self.written[c * self.nu + a] = True
        else:
            self.r_clk[c, w, a] = vcw[np.arange(w.size), w]
            self.r_line[c, w, a] = ln
            self.r_tid[c, w, a] = t


def merge_foreign(*knowns) -> dict:
    """The union of {cluster rank: clock} maps, clock by clock the later one."""
    out: dict = {}
    for k in knowns:
        for r, clk in (k or {}).items():
            out[r] = clk.copy() if r not in out else np.maximum(out[r], clk)
    return out


class EpochRaceChecker(_Reporter):
    """The race checker of CTAs that run in lockstep (one group per CTA or per batch of CTAs).

    There every CTA barrier releases all warps of the CTA together and no warp waits on an
    mbarrier, so happens-before between warps of a CTA is exactly "separated by a barrier": the
    vector clocks of :class:`RaceChecker` reduce to one epoch counter per CTA. Per shared byte it
    keeps the last writer (warp, epoch) and the readers of the current epoch (one warp, or
    "several"); a write/read after a write by another warp in the same epoch, or a write after a
    read by another warp in the same epoch, is a race. Vectorised over the bytes of every CTA of a
    batch at once (O(accesses) per instruction, no loop over warps or CTAs)."""

    PER_ENTRY = (
        "written",
        "w_warp",
        "w_ep",
        "w_tid",
        "w_line",
        "r_ep",
        "r_warp",
        "r_multi",
        "r_tid",
        "r_line",
        "o_warp",
        "o_tid",
        "o_line",
        "a_ep",
        "a_warp",
        "a_multi",
        "a_tid",
        "a_line",
        "ao_warp",
        "ao_tid",
        "ao_line",
    )

    def __init__(
        self,
        nbytes: int,
        warps: int,
        report,
        *,
        ctas: int = 1,
        threads: int | None = None,
        report_unwritten=None,
    ):
        self.W = warps
        self.B = ctas
        self.T = threads if threads is not None else warps * 32
        self._init_units(nbytes)
        size = ctas * self.nu
        self.ep = np.zeros(ctas, np.int32)
        self.w_warp = np.full(size, -1, np.int16)
        self.w_ep = np.full(size, -1, np.int32)
        self.w_tid = np.full(size, -1, np.int32)
        self.w_line = np.full(size, -1, np.int32)
        self.r_ep = np.full(size, -1, np.int32)
        self.r_warp = np.full(size, -1, np.int16)
        self.r_multi = np.zeros(size, bool)
        self.r_tid = np.full(size, -1, np.int32)
        self.r_line = np.full(size, -1, np.int32)
        # where several warps read a byte in one epoch: a reader of a warp other than the last one's, so a write
        # by the last reader's warp is reported against a read of another warp (not against its own thread)
        self.o_warp = np.full(size, -1, np.int16)
        self.o_tid = np.full(size, -1, np.int32)
        self.o_line = np.full(size, -1, np.int32)
        self.a_ep = None  # atomics (allocated at the first one): epoch, warp, several warps
        self.fenced: set = set()  # (CTA, warp) that fenced: their atomics release (a spin lock's)
        self.locks: set = set()  # entries a fenced atomic released
        self.report = report
        self._seen: set = set()
        self._init_written(size, report_unwritten)
        self.lanes = LaneHazards(self.nu, self.unit, self.T, ctas, report)

    def barrier(self, warps) -> None:
        self.lanes.sync(warps)
        self.ep[np.asarray(warps, np.int64) // self.W] += 1  # (once per CTA: a fancy-index += adds once per index)

    def release(self, warp: int):
        return None  # no waits in lockstep: an arrive orders nothing here (the lanes that wait acquire)

    def fence(self, warps) -> None:
        """A fence by ``warps``: their next atomic releases (see :meth:`RaceChecker.fence`). With one epoch per
        barrier, an atomic in a poll that acquires what such a release published starts a new epoch of its CTA: a
        spin lock's critical sections are ordered (and so is all else of the CTA before the hand-off)."""
        self.fenced.update((int(x) // self.W, int(x) % self.W) for x in np.unique(np.asarray(warps, np.int64)))

    def _sync_atomic(self, k, c, w, acquire: bool) -> None:
        cs = np.zeros(k.size, np.int64) if c is None else np.asarray(c, np.int64)
        released = set()
        for kk, ci, wi in {(int(x), int(y), int(z)) for x, y, z in zip(k, cs, w, strict=True)}:
            if acquire and kk in self.locks:
                self.ep[ci] += 1
                self.lanes.sync(np.int64(ci * self.W + wi))
            if (ci, wi) in self.fenced:
                self.locks.add(kk)
                released.add((ci, wi))
        self.fenced -= released

    def _locking(self, acquire: bool) -> bool:
        return bool(self.fenced) or (acquire and bool(self.locks))

    def acquire(self, warp: int, clock) -> None:
        self.lanes.sync(warp)

    def known_of(self, warp: int) -> dict:
        return {}  # nor across CTAs

    def stamp(self, c, w) -> np.ndarray:
        return self.ep[c] + np.zeros_like(w, dtype=np.int64)

    def ordered(self, c, w, u, clk) -> np.ndarray:
        return self.ep[c] > clk

    def acquire_foreign(self, warp: int, known: dict) -> None:
        pass

    def agent(self, rank: int, label: str):
        # another CTA's multicast writes are not race-checked in lockstep (tma.tile_copy marks them written)
        return None

    def access(
        self,
        byte_addr: np.ndarray,
        tids: np.ndarray,
        write: bool,
        line,
        atomic: bool = False,
        *,
        name=None,
        unwritten: bool | int = True,
        lanes: bool = False,
        landed=None,
        width: int = 1,
        acquire: bool = False,
    ) -> None:
        if byte_addr.size == 0:
            return
        a, tids = self._entries(np.asarray(byte_addr, np.int64), np.asarray(tids, np.int64), width, unwritten)
        if self.B == 1:
            c = None
            t = tids
            k = a
        else:
            if self.T & (self.T - 1):
                c = tids // self.T
                t = tids - c * self.T
            else:  # (the usual power of two: a shift and a mask, several times faster than numpy's // and %)
                c = tids >> (self.T.bit_length() - 1)
                t = tids & (self.T - 1)
            k = c * self.nu + a
        # the CTAs' epochs (one number where they are all alike, as in a batch whose barriers all CTAs pass)
        e = self.ep[0] if self.B == 1 or (self.ep == self.ep[0]).all() else self.ep[c]
        w = (t >> 5).astype(np.int16)  # (// 32, faster)
        ln = -1 if line is None else int(line)
        what = "atomic" if atomic else ("write" if write else "read")
        ix = Entries(k, self.nu)  # (lanes in address order, the usual case: slices, and no two lanes meet)

        def first(bad, kind, lines, tids):
            """Report the first racing entry of ``bad`` against the record (``lines``, ``tids``)."""
            if bad.any():
                i = int(np.argmax(bad))
                j = k[i]
                first_line = ln if lines is None else int(lines[j])
                first_tid = -1 if tids is None else int(tids[j])
                cta = 0 if c is None else int(c[i])
                self._emit(kind, first_line, first_tid, what, ln, int(t[i]), int(j % self.nu), int(bad.sum()), cta)

        if not write or atomic:  # an atomic reads too (its caller says whether that read counts)
            if unwritten is not False:
                self._read_unwritten(k, t, 0 if c is None else c, ln, name, unwritten, ix.get(self.written))
        if write or atomic:
            ix.set(self.written, True)
        # (the records of this epoch first: most entries' are of an earlier one, and then nothing else counts)
        w_now = ix.equal(self.w_ep, e)
        if w_now.any():
            ww = ix.get(self.w_warp)
            first(w_now & (ww >= 0) & (ww != w), "write", self.w_line, self.w_tid)
        r_now = ix.equal(self.r_ep, e)
        r_any = bool(r_now.any())
        reads = r_now & (ix.get(self.r_multi) | (ix.get(self.r_warp) != w)) if r_any else r_now
        if atomic:
            first(reads, "read", self.r_line, self.r_tid)
            if self.a_ep is None:
                size = self.w_warp.size
                self.a_ep = np.full(size, -1, np.int32)
                self.a_warp = np.full(size, -1, np.int16)
                self.a_multi = np.zeros(size, bool)
                self.a_tid = np.full(size, -1, np.int32)
                self.a_line = np.full(size, -1, np.int32)
                self.ao_warp = np.full(size, -1, np.int16)  # an atomic of another warp than a_warp's, this epoch
                self.ao_tid = np.full(size, -1, np.int32)
                self.ao_line = np.full(size, -1, np.int32)
            # an atomic of another warp than the one recorded in this epoch becomes the "other" one (reports name a
            # thread of another warp than the plain access's)
            aw = ix.get(self.a_warp)
            prev = (ix.get(self.a_ep) == e) & (aw >= 0) & (aw != w)
            if prev.any():
                kp = k[prev]
                self.ao_warp[kp], self.ao_tid[kp], self.ao_line[kp] = self.a_warp[kp], self.a_tid[kp], self.a_line[kp]
            self._note(self.a_ep, self.a_warp, self.a_multi, self.a_tid, self.a_line, ix, w, e, t, ln)
            lost = self.a_warp[k] != w
            if lost.any():
                kl = k[lost]
                self.ao_warp[kl], self.ao_tid[kl], self.ao_line[kl] = w[lost], t[lost], ln
            self.lanes.access(ix, tids, True, line, atomic=True)
            if self._locking(acquire):
                self._sync_atomic(k, c, w, acquire)
            return
        if self.a_ep is not None:
            racing = (ix.get(self.a_ep) == e) & (ix.get(self.a_multi) | (ix.get(self.a_warp) != w))
            if racing.any():
                j = k[int(np.argmax(racing))]
                i0 = int(np.argmax(racing))
                other = self.a_warp[j] == w[i0] and self.ao_warp[j] >= 0 and self.ao_warp[j] != w[i0]
                first(racing, "atomic", *((self.ao_line, self.ao_tid) if other else (self.a_line, self.a_tid)))
            if write:
                ix.set(self.a_ep, -1)
                ix.set(self.a_multi, False)
        if write:
            if r_any and reads.any():
                i = int(np.argmax(reads))
                j = k[i]
                other = self.r_warp[j] == w[i] and self.o_warp[j] >= 0 and self.o_warp[j] != w[i]
                lines, rtids = (self.o_line, self.o_tid) if other else (self.r_line, self.r_tid)
                cta = 0 if c is None else int(c[i])
                self._emit(
                    "read", int(lines[j]), int(rtids[j]), what, ln, int(t[i]), int(j % self.nu), int(reads.sum()), cta
                )
            ix.set(self.w_warp, w)
            ix.set(self.w_tid, t)
            ix.set(self.w_line, ln)
            if not ix.distinct:
                # another warp wrote the same entry in this same instruction: the last lane's value won (that lane is
                # the record's thread)
                first(self.w_warp[k] != w, "write", self.w_line, self.w_tid)
            ix.set(self.w_ep, e)
            ix.set(self.r_ep, -1)
            ix.set(self.r_multi, False)
        else:
            if r_any:
                # a reader of another warp than the one recorded in this epoch becomes the "other" reader
                rw = ix.get(self.r_warp)
                prev = r_now & (rw >= 0) & (rw != w)
                if prev.any():
                    kp = k[prev]
                    self.o_warp[kp], self.o_tid[kp], self.o_line[kp] = self.r_warp[kp], self.r_tid[kp], self.r_line[kp]
            self._note(self.r_ep, self.r_warp, self.r_multi, self.r_tid, self.r_line, ix, w, e, t, ln, reads)
            if not ix.distinct:
                same = self.r_warp[k] != w  # several warps in this instruction: a lane whose value the record lost
                if same.any():
                    ks = k[same]
                    self.o_warp[ks], self.o_tid[ks], self.o_line[ks] = w[same], t[same], ln
        if lanes:  # after the checks across warps: where both race, that report stands
            self.lanes.access(ix, tids, write, line, landed=landed)

    @staticmethod
    def _note(ep, warp, multi, tid, line, ix, w, e, t, ln, several=None) -> None:
        """Record readers (or atomics) of entries ``ix`` (:class:`Entries`) in this epoch: one warp, or several. A
        record of an earlier epoch counts for nothing; one instruction's lanes of several warps on one entry make it
        several, whichever lane's value the (duplicate-index) assignment keeps. ``several``: the entries whose record
        of this epoch already is of several warps or of another warp (where the caller has it)."""
        if several is None:
            several = (ix.get(ep) == e) & (ix.get(multi) | (ix.get(warp) != w))
        ix.set(warp, w)
        if ix.distinct:
            ix.set(multi, several)
        else:
            k = ix.k
            several = several | (warp[k] != w)  # several warps in this instruction
            multi[k] = False
            multi[k[several]] = True
        ix.set(ep, e)
        ix.set(tid, t)
        ix.set(line, ln)


class GlobalRaces:
    """Races on global memory that involve atomics: an atomic read-modify-write and a plain load or
    store of the same bytes by threads with nothing ordering them (different CTAs -- nothing orders
    CTAs of one launch but the kernel's own protocol -- or warps of one CTA with no barrier between,
    as the CTA's shared-memory checker decides), in either order. Atomics among themselves never
    race. Only the regions that the kernel's atomics target are tracked (found from the atomics'
    address operands), per byte: the last plain write, the last plain read and the last atomic.

    Atomics on one address form a single order in which each read-modify-write sees the one
    before: a plain access ordered after the *latest* atomic on its bytes (e.g. by the thread that
    performed it: the "last CTA" pattern of a counter) is not a race, even though earlier atomics
    came from other CTAs. A grid barrier (``grid_sync``) orders every access before it against every access after
    it, in any CTA. Plain stores of two CTAs to one byte are txlab.emulator.cta_overlaps's (in kernels with no
    atomics); plain accesses of one CTA against another's plain ones otherwise are not checked.
    """

    def __init__(self, report):
        self.report = report  # report(detail dict)
        self.state: dict = {}  # Region -> dict of per-byte arrays
        self.ctas: dict = {}  # CTA serial -> (x, y, z)
        self._seen: set = set()

    def track(self, region) -> None:
        if region in self.state or region.kind != "global":
            return
        n = region.nbytes
        st = {}
        for p in ("w", "r", "a"):
            st[p + "_epoch"] = np.zeros(n, np.int32)  # the grid barriers (grid_sync) its CTA had passed
            st[p + "_cta"] = np.full(n, -1, np.int64)
            st[p + "_warp"] = np.full(n, -1, np.int32)
            st[p + "_clk"] = np.zeros(n, np.int64)
            st[p + "_tid"] = np.full(n, -1, np.int32)
            st[p + "_line"] = np.full(n, -1, np.int32)
        self.state[region] = st

    def tracks(self, region) -> bool:
        return region in self.state

    def access(self, g, region, byte, tids, write: bool, line, atomic: bool = False) -> None:
        st = self.state.get(region)
        if st is None or byte.size == 0:
            return
        chk = g.cta.races
        b = np.asarray(byte, np.int64)
        tids = np.asarray(tids, np.int64)
        T = g.cta.nthreads
        c = tids // T
        t = tids % T
        w = t // 32
        serial = g.cta.serial + c
        now = chk.stamp(c, w)
        ln = -1 if line is None else int(line)
        epoch = g.slots.get("grid_sync", 0)  # a grid barrier orders every access before it against every one after

        def unordered(p):
            pc, pw, pk = st[p + "_cta"][b], st[p + "_warp"][b], st[p + "_clk"][b]
            same = pc == serial
            ordered = same & ((pw == w) | chk.ordered(c, w, np.maximum(pw, 0), pk))
            ordered |= st[p + "_epoch"][b] < epoch
            return (pc >= 0) & ~ordered

        def emit(p, first_kind, second_kind, bad):
            i = int(np.argmax(bad))
            key = (first_kind, int(st[p + "_line"][b[i]]), second_kind, ln)
            if key in self._seen:
                return
            self._seen.add(key)
            self.report(
                {
                    "first": (
                        first_kind,
                        int(st[p + "_line"][b[i]]),
                        int(st[p + "_tid"][b[i]]),
                        self.ctas.get(int(st[p + "_cta"][b[i]])),
                    ),
                    "second": (second_kind, ln, int(t[i]), self.ctas.get(int(serial[i]))),
                    "addr": int(b[i]),
                    "region": region.name,
                    "count": int(bad.sum()),
                }
            )

        def record(p):
            st[p + "_epoch"][b] = epoch
            st[p + "_cta"][b] = serial
            st[p + "_warp"][b] = w
            st[p + "_clk"][b] = now
            st[p + "_tid"][b] = t
            st[p + "_line"][b] = ln

        if atomic:
            for p, kind in (("w", "write"), ("r", "read")):
                bad = unordered(p)
                if bad.any():
                    emit(p, kind, "atomic", bad)
            record("a")
            return
        bad = unordered("a")
        if bad.any():
            emit("a", "atomic", "write" if write else "read", bad)
        if write:
            record("w")
            st["a_cta"][b] = -1
        else:
            record("r")
