"""Blackwell tensor memory (TMEM) and the tcgen05 instructions that move data through it:
``tcgen05.alloc`` / ``dealloc`` / ``relinquish_alloc_permit``, ``ld`` / ``st`` (every shape and
``.num``, ``.pack::16b`` / ``.unpack::16b``, the ``.16x32bx2`` split form), ``wait::ld`` /
``wait::st``, ``fence::before/after_thread_sync`` and ``get_tmem_addr``.

Model (PTX ISA 9.7.16 "TensorCore 5th Generation"): each CTA has 128 lanes x 512 columns of 32-bit
cells (a fresh, zeroed TMEM per CTA: the emulator runs one CTA per SM at a time, so CTAs never
compete for columns). A TMEM address is ``lane << 16 | column``. ``alloc`` takes a power of two
of >= 32 and <= 512 columns, first fit at a multiple of its size, and writes the address of
(lane 0, first column) to its shared-memory operand; when the columns are not free the GPU blocks
until another CTA frees them -- here nobody will, so that is an ``tmem_alloc`` finding. An
``alloc`` after ``relinquish_alloc_permit``, a ``dealloc`` of columns that are not one live
allocation (double free, wrong size), an access outside every live allocation and an allocation
still live when the CTA ends (a leak) are findings at the line. Warp ``w`` may only reach lanes
``32*(w % 4)`` .. ``+31``; a ``ld``/``st`` address's lane counts within that quarter (TVM's tile
primitives pass lane 0 from every warp, hand-written kernels ``32*warp``: both run on a B200), and
an address naming another warp's quarter, or a 16-lane shape crossing the quarter's end, is a
``tmem_lane_quarter`` finding at the line.

Register images (TVM's ``tcgen05_atom_layout``, PTX Table 49), lane ``l``, register ``r``, relative
to the address's (lane, column): ``32x32b`` (l, r); ``16x64b`` (l//4 + 8*(l%2), (l//2)%2 + 2r);
``16x128b`` (l//4 + 8*(r%2), l%4 + 4*(r//2)); ``16x256b`` (l//4 + 8*((r//2)%2), r%2 + 2*(l%4) +
8*(r//4)); ``16x32bx2`` (l%16, r + (l//16)*immHalfSplitoff). ``.pack::16b`` packs the low halves
of two adjacent columns into one register (``.unpack::16b`` splits it back), so it reaches twice
the columns.

Ordering: ``ld``/``st`` take effect at issue. The asynchronous writers of TMEM (``tcgen05.mma``,
``tcgen05.cp``: txlab.emulator.tcgen05) land when committed; a ``ld`` of cells such a write has not
made visible to the reading warp -- not committed yet, or committed but the reader did not wait on
the commit's mbarrier phase (the race checker's vector clocks: the CTA's tcgen05 pipe has its own
clock row, which only the commit's mbarrier arrive publishes, so a CTA barrier after the commit
orders nothing) -- is a ``tmem_race`` finding at both lines; so is an asynchronous write over cells
another warp read without being ordered after it (the accumulator reused before the epilogue
released it), and a ``dealloc`` of columns with pending writes or unordered readers. A warp that
ends with a ``tcgen05.ld`` it never waited for (``wait::ld``) is a ``tmem_wait`` finding at the ld's
line. A ``ld``, or an MMA reading cells (its TMEM A operand, or the accumulator it adds to), of
cells a ``tcgen05.st`` wrote needs the store complete (the storing warp's ``wait::st``, then a
barrier or mbarrier for another warp), and a ``st`` over an issued MMA's A operand before the MMA
completed is a race; fences are no-ops (the ordering is the barriers').
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
from txlab.emulator.ops import CTA_EXIT, HANDLERS
from txlab.emulator.ptx_memory import decode, from_register, to_register
from txlab.emulator.result import cta_finding
from txlab.errors import NotEmulatedError

LANES, COLS = 128, 512
_U32 = np.dtype(np.uint32)


class AsyncWrite:
    """One asynchronous TMEM write (an mma or cp): where it was issued and how it completes."""

    __slots__ = ("what", "line", "cta", "warp", "clock", "commit_line", "mb", "phase", "rank", "row")

    def __init__(self, what, line, cta, warp):
        self.what, self.line, self.cta, self.warp = what, line, cta, warp
        self.clock = None  # the clock of ``row`` its commit published (None: not committed)
        self.row = None  # the race-checker row completing it: the CTA's tcgen05 pipe (else the issuing warp)
        self.commit_line = None
        self.mb = None  # (owning CTA, MBarrier) the commit arrived on
        self.phase = 0
        self.rank = 0  # cluster rank of the issuing CTA

    def where(self) -> str:
        s = f"{self.what} at line {self.line} (warp {self.warp}"
        if self.rank or (self.cta is not None and self.cta.cluster is not None):
            s += f" of cluster rank {self.rank}"
        s += ")"
        if self.clock is None:
            return s + ", not committed yet"
        return s + f", committed at line {self.commit_line}"


class Tmem:
    """The tensor memory of one CTA, its allocations and who wrote / read each cell."""

    def __init__(self, cta):
        self.cta = cta
        self.data = np.zeros((LANES, COLS), np.uint32)
        self.allocs: dict = {}  # first column -> (columns, line)
        self.freed: dict = {}  # first column -> (columns, line, warp, clock) of its dealloc
        self.relinquished = None  # line of relinquish_alloc_permit
        self.writer = np.zeros((LANES, COLS), np.int32)  # id of the last asynchronous write per cell
        self.writes: list = [None]  # id -> AsyncWrite
        self.reader = np.full((LANES, COLS), -1, np.int32)  # last reading warp per cell
        self.read_clk = np.zeros((LANES, COLS), np.int64)
        self.read_line = np.zeros((LANES, COLS), np.int32)
        self.pending_ld: dict = {}  # warp -> line of a tcgen05.ld not yet waited for
        self.pending_st: dict = {}  # warp -> line of a tcgen05.st not yet waited for (wait::st)
        self.st_warp = np.full((LANES, COLS), -1, np.int32)  # last tcgen05.st per cell: warp, clock, line
        self.st_clk = np.zeros((LANES, COLS), np.int64)
        self.st_line = np.zeros((LANES, COLS), np.int32)
        self.areader = np.zeros((LANES, COLS), np.int32)  # an MMA reading the cell as its A (writes id)
        self.queue: dict = {}  # issuing warp -> [(AsyncWrite, run)] not yet committed

    # ---- allocation ------------------------------------------------------------------------
    def live_columns(self) -> np.ndarray:
        live = np.zeros(COLS, bool)
        for c, (n, _) in self.allocs.items():
            live[c : c + n] = True
        return live

    def alloc(self, n, line, threads):
        if self.relinquished is not None:
            cta_finding(
                self.cta,
                "tmem_alloc",
                f"tcgen05.alloc of {n} columns after this CTA's relinquish_alloc_permit (line "
                f"{self.relinquished}): undefined behaviour in PTX -- allocate everything before relinquishing",
                line,
                "relinquished",
                threads=threads,
            )
        if n < 32 or n > COLS or n & (n - 1):
            cta_finding(
                self.cta,
                "tmem_alloc",
                f"tcgen05.alloc of {n} columns: the column count must be a power of two from 32 to 512",
                line,
                "ncols",
                threads=threads,
            )
            return None
        live = self.live_columns()
        for c in range(0, COLS, n):
            if not live[c : c + n].any():
                self.allocs[c] = (n, line)
                self.freed.pop(c, None)
                return c
        used = ", ".join(f"{k}..{k + v[0] - 1} (line {v[1]})" for k, v in sorted(self.allocs.items()))
        cta_finding(
            self.cta,
            "tmem_alloc",
            f"tcgen05.alloc of {n} columns cannot be satisfied: {int(live.sum())} of 512 columns are allocated "
            f"({used}); on a GPU the warp blocks until another CTA on the SM frees columns -- a hang when none "
            "does. Deallocate first, or allocate fewer columns",
            line,
            "full",
            threads=threads,
        )
        return None

    def dealloc(self, col, n, line, warp, threads):
        have = self.allocs.get(col)
        if have is None or have[0] != n:
            if col in self.freed:
                why = f"double free: columns {col}..{col + n - 1} were already deallocated at line {self.freed[col][1]}"
            elif have is not None:
                why = f"the allocation at column {col} (line {have[1]}) has {have[0]} columns, not {n}"
            else:
                why = f"no live allocation starts at column {col}"
            cta_finding(
                self.cta,
                "tmem_dealloc",
                f"tcgen05.dealloc of {n} columns at TMEM column {col}: {why}",
                line,
                threads=threads,
            )
            if have is None:
                return
            n = have[0]
        cols = slice(col, col + n)
        self._live_at_dealloc(cols, line, warp, threads)
        del self.allocs[col]
        clock = int(self.cta.races.vc[0, warp, warp]) if self.vc_checked() else 0
        self.freed[col] = (n, line, warp, clock)

    def _live_at_dealloc(self, cols, line, warp, threads):
        w = next(self.unordered_writes(self.writer[:, cols], warp), None)
        if w is not None:
            self.write_race(
                w,
                f"tcgen05.dealloc of TMEM columns {cols.start}..{cols.stop - 1} while the {w.where()} to "
                "them may still be in flight: wait on the commit's mbarrier before deallocating",
                line,
                "dealloc",
                threads,
            )
        unordered = self.unordered_read(slice(None), cols, warp) if self.vc_checked() else None
        if unordered is not None:
            u, ln = unordered
            cta_finding(
                self.cta,
                "tmem_race",
                f"tcgen05.dealloc of TMEM columns {cols.start}..{cols.stop - 1} (a live allocation: warp "
                f"{u} read it at line {ln} and nothing orders that read before this dealloc) -- "
                "synchronise the readers (a barrier or mbarrier) before deallocating",
                line,
                "dealloc_read",
                ln,
                other_line=ln,
                threads=threads,
            )

    def unordered_read(self, lanes, cols, warp) -> tuple[int, int] | None:
        """(reader warp, its line) of the first other warp that read cells (``lanes``, ``cols``)
        with nothing ordering that read before ``warp``'s access now; None when there is none."""
        r = self.reader[lanes, cols]
        bad = (r >= 0) & (r != warp)
        for u in np.unique(r[bad]):
            sel = bad & (r == u)
            if not self.knows(warp, int(u), self.read_clk[lanes, cols][sel].max()):
                return int(u), int(self.read_line[lanes, cols][sel].ravel()[0])
        return None

    def check_allocated(self, lanes, cols, line, what, threads, warp=None) -> bool:
        """Report cells outside every live allocation (or outside TMEM); False when some are outside
        TMEM itself (the access is dropped), True otherwise (a freed column still holds its data).
        An access by ``warp`` to columns another warp deallocated with nothing ordering the two is
        reported as that dealloc's race (the allocation was still live)."""
        cols = np.asarray(cols)
        lanes = np.asarray(lanes)
        outside = (cols < 0) | (cols >= COLS) | (lanes < 0) | (lanes >= LANES)
        live = self.live_columns()
        inside = ~outside
        dead = np.zeros_like(outside)
        dead[inside] = ~live[cols[inside]]
        if not (outside.any() or dead.any()):
            return True
        k = int(np.argmax(outside | dead))
        c, ln = int(cols.ravel()[k]), int(lanes.ravel()[k])
        freed = next(((s, v) for s, v in self.freed.items() if s <= c < s + v[0]), None)
        if not outside.ravel()[k] and freed is not None and warp is not None:
            s, (n, fline, fwarp, fclk) = freed
            if fwarp != warp and not self.knows(warp, fwarp, fclk):
                cta_finding(
                    self.cta,
                    "tmem_race",
                    f"tcgen05.dealloc by warp {fwarp} (line {fline}) frees TMEM columns {s}..{s + n - 1} while "
                    f"warp {warp} still accesses them ({what} at line {line}), with nothing ordering that access "
                    "before the dealloc: a live allocation was deallocated -- synchronise (a barrier) first",
                    fline,
                    "dealloc_live",
                    line,
                    other_line=line,
                    threads=threads,
                )
                return True
        if outside.ravel()[k]:
            why = "outside the 128 lanes x 512 columns of TMEM"
        else:
            why = "in no live tcgen05.alloc allocation" + (
                f" (columns {freed[0]}..{freed[0] + freed[1][0] - 1} were deallocated at line {freed[1][1]})"
                if freed
                else ""
            )
        cta_finding(
            self.cta, "tmem_out_of_bounds", f"{what} reaches TMEM lane {ln}, column {c}: {why}", line, threads=threads
        )
        return not outside.any()

    # ---- ordering ----------------------------------------------------------------------------
    def vc_checked(self) -> bool:
        races = self.cta.races
        return races is not None and hasattr(races, "vc")

    def knows(self, warp, other, clock) -> bool:
        """Whether ``warp`` (of this CTA) is ordered after ``other``'s access at ``clock``."""
        races = self.cta.races
        if races is None:
            return True
        if not hasattr(races, "vc"):  # lockstep: the whole CTA is one group, in program order
            return True
        return bool(races.vc[0, int(warp), int(other)] >= clock)

    def ordered_after_write(self, w: AsyncWrite, warp) -> bool:
        """Whether ``warp`` of this CTA sees asynchronous write ``w`` completed: it acquired the clock
        the tcgen05 pipe published through the commit's mbarrier (waiting on that phase, or ordered
        after a warp that did). A barrier right after the commit is not enough: the commit only
        makes the mbarrier track completion."""
        if self.cta.races is None:
            return True
        if w.clock is None or w.mb is None:
            return False
        owner, mb = w.mb
        row = w.warp if w.row is None else w.row
        if w.row is None and owner is self.cta and warp == w.warp and w.cta is self.cta:
            return mb.completed > w.phase  # no pipe row (lockstep): the commit's phase completed
        races = self.cta.races
        if not hasattr(races, "vc"):
            return False  # lockstep: no warp ever waits on an mbarrier, so nothing saw it complete
        if w.cta is self.cta:
            return bool(races.vc[0, int(warp), row] >= w.clock)
        known = races.known_of(int(warp)).get(w.rank)
        return known is not None and bool(np.asarray(known)[row] >= w.clock)

    def unordered_writes(self, writer_ids, warp):
        """The asynchronous writes named in ``writer_ids`` (cells of a writer map) that ``warp`` does not
        yet see completed, in write order."""
        for i in np.unique(writer_ids):
            if i > 0 and not self.ordered_after_write(w := self.writes[int(i)], warp):
                yield w

    def write_race(self, w: AsyncWrite, message, line, tag, threads):
        """A ``tmem_race`` at ``line`` with asynchronous write ``w`` (at its commit's line, else its
        issue's), reported once per (``line``, ``tag``, ``w``'s line)."""
        cta_finding(
            self.cta, "tmem_race", message, line, tag, w.line, other_line=w.commit_line or w.line, threads=threads
        )

    def check_read(self, lanes, cols, warp, line, threads, pipe=False):
        """A ld by ``warp`` of cells (lanes, cols): every asynchronous write to them must be visible.
        ``pipe``: the reader is an MMA of this CTA's tcgen05 pipe, which runs in issue order after
        the earlier mma/cp of this CTA (PTX's implicit pipelining), so only other CTAs' count."""
        if self.cta.races is None:
            return
        for w in self.unordered_writes(self.writer[lanes, cols], warp):
            if pipe and w.cta is self.cta:
                continue
            fix = (
                "commit it (tcgen05.commit) and wait on that mbarrier before reading"
                if w.clock is None
                else "wait on the commit's mbarrier phase (then tcgen05.fence::after_thread_sync) before reading"
            )
            self.write_race(
                w,
                f"TMEM race: tcgen05.ld by warp {warp} (line {line}) reads lanes {int(np.min(lanes))}.."
                f"{int(np.max(lanes))}, columns {int(np.min(cols))}..{int(np.max(cols))} that the {w.where()} "
                f"writes asynchronously, with nothing ordering the read after its completion: {fix}",
                line,
                "ld",
                threads,
            )

    def check_st_over_mma_read(self, lanes, cols, warp, line, threads):
        """A tcgen05.st over cells an issued MMA reads as its A operand: the MMA must be complete."""
        w = next(self.unordered_writes(self.areader[lanes, cols], warp), None)
        if w is not None:
            self.write_race(
                w,
                f"TMEM race: tcgen05.st by warp {warp} (line {line}) overwrites TMEM cells the {w.where()} reads as "
                "its A operand before that MMA is known to be complete (wait on its commit's mbarrier first)",
                line,
                "st_over_a",
                threads,
            )

    def record_st(self, lanes, cols, warp, line):
        self.pending_st[warp] = line
        self.st_warp[lanes, cols] = warp
        self.st_clk[lanes, cols] = self.cta.races.vc[0, warp, warp] if self.vc_checked() else 0
        self.st_line[lanes, cols] = -1 if line is None else int(line)

    def check_stores_complete(self, lanes, cols, warp, line, what, threads):
        """``warp`` reads TMEM cells -- by a tcgen05.ld, or by an MMA it issued (its A operand, or the
        accumulator it adds to): a tcgen05.st to them must be complete -- ``wait::st`` by the storing
        warp, and for another warp a barrier or mbarrier after it (with
        ``fence::before/after_thread_sync``)."""
        if self.cta.races is None:
            return
        u = self.st_warp[lanes, cols]
        for st in np.unique(u[u >= 0]):
            sel = u == st
            ln = int(self.st_line[lanes, cols][sel].ravel()[0])
            if st == warp:
                if warp not in self.pending_st:
                    continue
                why = f"warp {warp} itself stored them (line {ln}) and has not waited for it (tcgen05.wait::st)"
            else:
                clk = int(self.st_clk[lanes, cols][sel].max())
                if self.knows(warp, int(st), clk) and int(st) not in self.pending_st:
                    continue
                why = f"warp {int(st)} stored them at line {ln} " + (
                    "and has not waited for it (tcgen05.wait::st)"
                    if int(st) in self.pending_st
                    else "and nothing orders that store before this MMA (a barrier after wait::st)"
                )
            cta_finding(
                self.cta,
                "tmem_race",
                f"TMEM race: {what} by warp {warp} (line {line}) reads TMEM cells that a tcgen05.st may still be "
                f"writing: {why}",
                line,
                "st",
                ln,
                other_line=ln,
                threads=threads,
            )
            return

    def record_read(self, lanes, cols, warp, line):
        if not self.vc_checked():
            return
        self.reader[lanes, cols] = warp
        self.read_clk[lanes, cols] = self.cta.races.vc[0, warp, warp]
        self.read_line[lanes, cols] = -1 if line is None else int(line)

    def begin_write(self, w: AsyncWrite, lanes, cols, line, threads) -> None:
        """An asynchronous write of (lanes, cols) issued by ``w.warp`` (of CTA ``w.cta``): the cells'
        earlier readers must be ordered before it; the cells now wait for ``w``'s commit."""
        if self.vc_checked() and w.cta is self.cta:
            unordered = self.unordered_read(lanes, cols, w.warp)
            if unordered is not None:
                u, ln = unordered
                cta_finding(
                    self.cta,
                    "tmem_race",
                    f"TMEM race: {w.what} by warp {w.warp} (line {line}) overwrites TMEM cells warp {u} "
                    f"read at line {ln}, with nothing ordering that read first (the accumulator was reused "
                    "before its reader released it: wait on the reader's mbarrier arrive before issuing)",
                    line,
                    "war",
                    ln,
                    other_line=ln,
                    threads=threads,
                )
            self.reader[lanes, cols] = -1
        self.writes.append(w)
        self.writer[lanes, cols] = len(self.writes) - 1


def tmem_of(cta) -> Tmem:
    tm = getattr(cta, "tmem", None)
    if tm is None:
        tm = cta.tmem = Tmem(cta)
    return tm


def _at_exit(cta):
    tm = getattr(cta, "tmem", None)
    if tm is None or cta.live > 0:  # stopped (deadlock, error): what is left says nothing
        return
    for warp, line in sorted(tm.pending_ld.items()):
        cta_finding(
            cta,
            "tmem_wait",
            f"warp {warp} ended without tcgen05.wait::ld after its tcgen05.ld at line {line}: the loaded registers "
            "are not defined until the wait (add tcgen05.wait::ld before using them)",
            line,
        )
    for col, (n, line) in sorted(tm.allocs.items()):
        cta_finding(
            cta,
            "tmem_leak",
            f"TMEM columns {col}..{col + n - 1} allocated at line {line} were never deallocated: every "
            "allocation must be freed (tcgen05.dealloc) before the CTA exits",
            line,
        )
    for warp, q in sorted(tm.queue.items()):
        if q:
            w = q[0][0]
            cta_finding(
                cta,
                "tmem_race",
                f"{len(q)} asynchronous tcgen05 operation(s) of warp {warp} (the first: {w.what} at line {w.line}) "
                "were never committed (tcgen05.commit): nothing can wait for them",
                w.line,
                "uncommitted",
            )


CTA_EXIT.append(_at_exit)


# ---- helpers ---------------------------------------------------------------------------------------
def warps_of(g):
    """[(warp index in the CTA, lane positions in the group)] of the warps with an active lane."""
    act = g.active()
    out = []
    wl = g.warp_of_lane
    for w in np.unique(wl[act]):
        out.append((int(w), np.nonzero(wl == w)[0]))
    return out


def warp_uniform(g, v, pos, line, what) -> int:
    """The value of per-lane ``v`` that the active lanes ``pos`` of one warp agree on."""
    a = np.asarray(v)
    if a.ndim == 0 or a.shape[0] != g.L:
        return int(a.ravel()[0]) if a.ndim else int(a)
    act = g.active()[pos]
    u = np.unique(a[pos][act])
    if u.size != 1:
        raise NotEmulatedError(f"{what} that differs between the threads of one warp", lineno=line)
    return int(u[0])


def split_addr(taddr: int) -> tuple:
    return (int(taddr) >> 16) & 0xFFFF, int(taddr) & 0xFFFF


def _shared_word(g, e, line, what):
    """(CTA, byte offset) of a 32-bit shared operand (a cvta window offset or a generic address)."""
    from txlab.emulator.ops import _uniform_addr

    a = _uniform_addr(g, e, line, what)
    rank, off = M.split_cluster_address(a)
    if rank is not None:
        raise NotEmulatedError(f"{what} with a shared::cluster address", lineno=line)
    return off


# ---- alloc / dealloc / relinquish --------------------------------------------------------------------
def _alloc(comp, call):
    p = decode(call)
    dst, ncols = comp.expr(p.one("dst")), comp.expr(p.one("ncols"))
    line = comp.line
    if p.mods.get("action") != "alloc":
        return comp.not_emulated(call.op.name)

    def f(g):
        tm = tmem_of(g.cta)
        for w, pos in warps_of(g):
            n = warp_uniform(g, ncols(g), pos, line, "tcgen05.alloc column count")
            off = _shared_word(
                g, np.asarray(dst(g)) if np.ndim(dst(g)) == 0 else np.asarray(dst(g))[pos], line, "tcgen05.alloc"
            )
            threads = g.tid[pos]
            col = tm.alloc(n, line, threads)
            if col is None:
                continue
            cta = g.cta
            if off < 0 or off + 4 > cta.shared.nbytes:
                cta_finding(
                    cta,
                    "out_of_bounds",
                    f"tcgen05.alloc writes its TMEM address to shared offset {off}, outside the CTA's "
                    f"{cta.shared.nbytes} bytes",
                    line,
                    "tmem_alloc",
                )
                continue
            cta.shared.data[off : off + 4] = np.array([col], np.uint32).view(np.uint8)
            if cta.races is not None:
                cta.races.access(np.arange(off, off + 4), np.full(4, int(g.gtid[pos[0]])), True, line)
        g.cta.progress += 1
        return np.int32(0)

    return f


def _dealloc(comp, call):
    p = decode(call)
    taddr, ncols = comp.expr(p.one("taddr")), comp.expr(p.one("ncols"))
    line = comp.line

    def f(g):
        tm = tmem_of(g.cta)
        for w, pos in warps_of(g):
            a = warp_uniform(g, taddr(g), pos, line, "tcgen05.dealloc address")
            n = warp_uniform(g, ncols(g), pos, line, "tcgen05.dealloc column count")
            lane, col = split_addr(a)
            tm.dealloc(col, n, line, w, g.tid[pos])
        g.cta.progress += 1
        return np.int32(0)

    return f


def _relinquish(comp, call):
    line = comp.line

    def f(g):
        tm = tmem_of(g.cta)
        if tm.relinquished is None:
            tm.relinquished = line
        return np.int32(0)

    return f


def _get_tmem_addr(comp, call):
    base, row, col = (comp.expr(a) for a in call.args)

    def f(g):
        b = np.asarray(base(g)).astype(np.int64)
        r = (((b >> 16) & 0xFFFF) + np.asarray(row(g)).astype(np.int64)) & 0xFFFF
        c = ((b & 0xFFFF) + np.asarray(col(g)).astype(np.int64)) & 0xFFFF
        out = ((r << 16) | c).astype(np.uint32)
        return out if out.ndim else out[()]

    return f


# ---- ld / st -------------------------------------------------------------------------------------
def image(shape: str, nregs: int, split: int = 0) -> tuple:
    """(lane, column) of register ``r`` of warp lane ``l``, relative to the address: two (32, nregs)
    arrays (columns in 32-bit register units)."""
    lane = np.arange(32)[:, None]
    r = np.arange(nregs)[None, :]
    if shape == "32x32b":
        return np.broadcast_to(lane, (32, nregs)), np.broadcast_to(r, (32, nregs))
    if shape == "16x64b":
        return np.broadcast_to(lane // 4 + 8 * (lane % 2), (32, nregs)), (lane // 2) % 2 + 2 * r
    if shape == "16x128b":
        return lane // 4 + 8 * (r % 2), lane % 4 + 4 * (r // 2)
    if shape == "16x256b":
        return lane // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (lane % 4) + 8 * (r // 4)
    if shape == "16x32bx2":
        return np.broadcast_to(lane % 16, (32, nregs)), r + (lane // 16) * split
    raise NotEmulatedError(f"tcgen05 ld/st shape {shape}")


def _rows(shape: str) -> int:
    return 32 if shape == "32x32b" else 16


def _cells(g, pos, taddr, shape, nregs, packed, split, line, what, warp):
    """(lanes, cols, ok) of the cells the warp's lanes ``pos`` reach, shape (len(pos), nregs[, 2])."""
    base_lane, base_col = split_addr(taddr)
    dl, dc = image(shape, nregs, split)
    lw = (g.tid[pos] % 32).astype(np.int64)
    quarter = 32 * (warp % 4)
    # the warp reaches its own quarter: the address's lane counts within it (TVM's tile primitives
    # address lane 0 from every warp, hand-written kernels 32 * warp; both run on a B200)
    lanes = quarter + base_lane % 32 + dl[lw]
    cols = dc[lw]
    if packed:
        cols = np.stack([2 * cols, 2 * cols + 1], axis=-1)
        lanes = np.stack([lanes, lanes], axis=-1)
    cols = base_col + cols
    threads = g.tid[pos]
    tm = tmem_of(g.cta)
    named = base_lane // 32
    if named not in (0, warp % 4) or base_lane % 32 + _rows(shape) > 32:
        cta_finding(
            g.cta,
            "tmem_lane_quarter",
            f"{what} by warp {warp} names TMEM lanes {base_lane}..{base_lane + _rows(shape) - 1} (address "
            f"{int(taddr):#010x}: lane {base_lane}, column {base_col}), but warp {warp} may only access lanes "
            f"{quarter}..{quarter + 31} (warp % 4 picks the lane quarter; it would read its own lanes, not "
            f"the ones named): start it at lane {quarter}" + (" or " + str(quarter + 16) if _rows(shape) == 16 else ""),
            line,
            threads=threads,
        )
        return lanes, cols, False
    ok = tm.check_allocated(lanes, cols, line, what, threads, warp)
    return lanes, cols, ok


def _ldst(comp, call):
    p = decode(call)
    if p is None:
        return comp.not_emulated(call.op.name)
    load = p.mods.get("action") == "ld"
    if p.mods.get("red"):
        return comp.not_emulated(f"{call.op.name} (tcgen05.ld.red, sm_103a)")
    shape, num = p.mods["shape"], p.mods["num"]
    packed = bool(p.mods.get("pack") or p.mods.get("unpack"))
    regs = p.ops["r"]
    nregs = len(regs)
    taddr = comp.expr(p.one("taddr"))
    split_e = p.one("imm_half_splitoff")
    split = int(getattr(split_e, "value", 0)) if split_e is not None else 0
    line = comp.line
    what = f"tcgen05.{'ld' if load else 'st'}.{shape}.{num}" + (".pack::16b" if packed and load else "")
    key = ("tcgen05_ld", call.__chandle__())
    if load:
        stores = []
        for k, d in enumerate(regs):
            if d is None:
                continue
            if type(d).__name__ != "TensorLoad":
                return comp.not_emulated(f"{what} into a non-register operand")
            rd = M.np_dtype(comp.buffer_info(d.source)["dtype"])
            stores.append(
                comp.store(
                    d.source, list(d.indices), lambda g, k=k, rd=rd: to_register(g.slots[key][:, k], _U32, rd, False)
                )
            )
    else:
        from txlab.emulator.ops import comp_dtype

        vals = [(comp.expr(d), M.np_dtype(comp_dtype(d))) if d is not None else None for d in regs]

    def f(g):
        tm = tmem_of(g.cta)
        a_all = taddr(g)
        if load:
            out = np.zeros((g.L, nregs), np.uint32)
        else:
            words = np.zeros((g.L, nregs), np.uint32)
            for k, v in enumerate(vals):
                if v is not None:
                    words[:, k] = np.broadcast_to(from_register(np.asarray(v[0](g)), v[1], _U32), (g.L,))
        for w, pos in warps_of(g):
            a = warp_uniform(g, a_all, pos, line, f"{what} address")
            lanes, cols, ok = _cells(g, pos, a, shape, nregs, packed, split, line, what, w)
            if not ok:
                continue
            if load:
                tm.check_read(lanes, cols, w, line, g.tid[pos])
                tm.check_stores_complete(lanes, cols, w, line, what, g.tid[pos])
                cells = tm.data[lanes, cols]
                if packed:
                    cells = (cells[..., 0] & 0xFFFF) | ((cells[..., 1] & 0xFFFF) << 16)
                out[pos] = cells
                tm.record_read(lanes, cols, w, line)
                tm.pending_ld[w] = line
            else:
                tm.check_read(lanes, cols, w, line, g.tid[pos])
                wv = words[pos]
                if packed:
                    tm.data[lanes[..., 0], cols[..., 0]] = wv & 0xFFFF
                    tm.data[lanes[..., 1], cols[..., 1]] = wv >> 16
                else:
                    tm.data[lanes, cols] = wv
                tm.writer[lanes, cols] = 0
                tm.check_st_over_mma_read(lanes, cols, w, line, g.tid[pos])
                tm.record_st(lanes, cols, w, line)
        if load:
            g.slots[key] = out
            for st in stores:
                st(g)
        g.cta.progress += 1
        return np.int32(0)

    return f


def _wait(comp, call):
    p = decode(call)
    action = p.mods.get("action", "") if p is not None else ""

    def f(g):
        tm = tmem_of(g.cta)
        pending = tm.pending_ld if action == "wait::ld" else tm.pending_st
        for w, _ in warps_of(g):
            pending.pop(w, None)
        return np.int32(0)

    return f


_FENCE_NOTE = (
    "tcgen05.fence::before_thread_sync / after_thread_sync are no-ops: the emulator orders tcgen05 "
    "operations through their mbarriers (tcgen05.commit) and its vector clocks"
)


def _fence(comp, call):
    if _FENCE_NOTE not in comp.program.notes:
        comp.program.notes.append(_FENCE_NOTE)
    return lambda g: np.int32(0)


HANDLERS["tirx.ptx.tcgen05_alloc"] = _alloc
HANDLERS["tirx.ptx.tcgen05_dealloc"] = _dealloc
HANDLERS["tirx.ptx.tcgen05_relinquish_alloc_permit"] = _relinquish
HANDLERS["tirx.cuda.get_tmem_addr"] = _get_tmem_addr
for _n in ("tcgen05_ld", "tcgen05_st", "tcgen05_ld_split", "tcgen05_st_split"):
    HANDLERS[f"tirx.ptx.{_n}"] = _ldst
HANDLERS["tirx.ptx.tcgen05_wait"] = _wait
HANDLERS["tirx.ptx.tcgen05_fence"] = _fence
