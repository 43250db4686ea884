"""Blackwell tensor memory (TMEM) and the tcgen05 instructions that move data through it:
``tcgen05.alloc`` / ``dealloc`` / ``relinquish_alloc_permit``, ``ld`` / ``st`` (every shape and
``.num``, ``.pack::16b`` / ``.unpack::16b``, the ``.16x32bx2`` split form), ``wait::ld`` /
``wait::st``, ``fence::before/after_thread_sync`` and ``get_tmem_addr``.

Model (PTX ISA 9.7.16 "TensorCore 5th Generation"): each CTA has 128 lanes x 512 columns of 32-bit
cells (a TMEM per CTA: the emulator runs one CTA per SM at a time, so CTAs never compete for columns).
``alloc`` does not clear the columns it hands out: a cell nothing wrote since its allocation (no
``tcgen05.st``, ``tcgen05.cp``, or ``tcgen05.mma`` -- one with ``enable_input_d = 0`` writes without
reading) holds whatever was left there, so a ``tcgen05.ld`` of it, or an MMA that accumulates onto it
(``enable_input_d = 1``: the "forgot to zero the accumulator" bug), reads it as an
``uninitialized_tmem_read`` finding at that line (the emulator gives 0). A TMEM address is
``lane << 16 | column``. ``alloc`` takes a power of two
of >= 32 and <= 512 columns, first fit at a multiple of its size, and writes the address of
(lane 0, first column) to its shared-memory operand; when the columns are not free the GPU blocks
until another CTA frees them -- here nobody will, so that is an ``tmem_alloc`` finding. An
``alloc`` after ``relinquish_alloc_permit``, a ``dealloc`` of columns that are not one live
allocation (double free, wrong size), an access outside every live allocation and an allocation
still live when the CTA ends (a leak) are findings at the line. Warp ``w`` may only reach lanes
``32*(w % 4)`` .. ``+31``; a ``ld``/``st`` address's lane counts within that quarter (TVM's tile
primitives pass lane 0 from every warp, hand-written kernels ``32*warp``: both run on a B200), and
an address naming another warp's quarter, or a 16-lane shape crossing the quarter's end, is a
``tmem_lane_quarter`` finding at the line. ``alloc``, ``dealloc``, ``relinquish_alloc_permit``,
``ld``, ``st`` and ``wait::ld/st`` are ``.sync.aligned``: part of a warp reaching one is a
``divergent_barrier`` finding (as for ``mma.sync``). Every tcgen05 instruction of a kernel must name
the same ``.cta_group`` (PTX ISA, tcgen05.alloc): one that differs from the first executed is a
``tcgen05_pair`` finding.

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
released it; with ``cta_group::2`` also the peer CTA's readers of its half, ordered through the
remote arrives that carry its clocks, or a cluster barrier), and a ``dealloc`` of columns with
pending writes or unordered readers. A warp that ends with a ``tcgen05.ld`` it never waited for
(``wait::ld``) is a ``tmem_wait`` finding at the ld's line, and so is a read of one of its destination
registers before that wait, at the reading line (the registers are undefined until it). A ``ld``, or
an MMA reading cells (its TMEM A operand, or the accumulator it adds to), of cells a ``tcgen05.st``
wrote needs the store complete (the storing warp's ``wait::st``, then a barrier or mbarrier for
another warp), and a ``st`` over an issued MMA's A operand before the MMA completed is a race.

Fences (PTX ISA 9.7.16.6.3-4): an asynchronous tcgen05 operation (``ld``, ``st``, ``mma``, ``cp``)
is ordered after another thread's tcgen05 operation through a thread synchronisation (an mbarrier
wait, a barrier) only with ``tcgen05.fence::after_thread_sync`` between that synchronisation and
it, and the other side's ``ld``/``st`` is ordered before the synchronisation only with
``tcgen05.fence::before_thread_sync`` between it and the arrive or barrier (``tcgen05.commit`` does
that for the mma/cp it tracks). Where the vector clocks order the two only through a
synchronisation that lacks one of them, that is a ``missing_fence`` finding at the line of the
operation the fence belongs to, naming the fence; the fences order nothing else here.
"""

from __future__ import annotations

import bisect

import numpy as np

import txlab.emulator.memory as M
from txlab.emulator.mma import whole_warp_check
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
        self.written = np.zeros((LANES, COLS), bool)  # anything wrote the cell since its tcgen05.alloc
        self.allocs: dict = {}  # first column -> (columns, line)
        self.freed: dict = {}  # first column -> (columns, line, warp, clock) of its dealloc
        self.relinquished = None  # line of relinquish_alloc_permit
        self.writer = np.zeros((LANES, COLS), np.int32)  # id of the last asynchronous write per cell
        self.writes: list = [None]  # id -> AsyncWrite
        self.reader = np.full((LANES, COLS), -1, np.int32)  # last reading warp per cell
        self.read_clk = np.zeros((LANES, COLS), np.int64)
        self.read_line = np.zeros((LANES, COLS), np.int32)
        # each ld / st's place in the CTA's tcgen05 order (``seq``: program order within a warp) and the cluster
        # barriers completed before it (``cluster_gen``), for the fence rules and a cta_group::2 pair's peer
        self.read_seq = np.zeros((LANES, COLS), np.int64)
        self.read_cgen = np.zeros((LANES, COLS), np.int64)
        self.seq = 0
        self.pending_ld: dict = {}  # warp -> line of a tcgen05.ld not yet waited for
        self.pending_st: dict = {}  # warp -> line of a tcgen05.st not yet waited for (wait::st)
        self.st_warp = np.full((LANES, COLS), -1, np.int32)  # last tcgen05.st per cell: warp, clock, line
        self.st_clk = np.zeros((LANES, COLS), np.int64)
        self.st_line = np.zeros((LANES, COLS), np.int32)
        self.st_seq = np.zeros((LANES, COLS), np.int64)
        self.st_cgen = np.zeros((LANES, COLS), np.int64)
        self.fence_before: dict = {}  # warp -> ([seq], [clock], [cluster_gen]) of its tcgen05.fence::before_thread_sync
        self.fence_after: dict = {}  # warp -> (clock row, foreign clocks, cluster_gen) at its last ::after_thread_sync
        self.fence_after_ep: dict = {}  # lockstep (one epoch per CTA barrier): warp -> epoch of its last such fence
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
                self.written[:, c : c + n] = False  # alloc does not clear TMEM: what is there is no value of this run
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

    def readers(self, lanes, cols, warp, rcta=None) -> list:
        """``[(reader, clock, line, seq, cluster_gen)]``: per warp of this CTA other than ``warp`` of ``rcta`` (this
        CTA unless given: the issuing CTA of a ``cta_group::2`` pair) that read cells (``lanes``, ``cols``), the
        latest clock, line and place of its reads there, and the cluster barriers completed before the last."""
        rcta = self.cta if rcta is None else rcta
        r = self.reader[lanes, cols]
        bad = (r >= 0) & ((r != warp) | (rcta is not self.cta))
        out = []
        for u in np.unique(r[bad]):
            sel = bad & (r == u)
            seq = self.read_seq[lanes, cols][sel]
            k = int(np.argmax(seq))
            out.append(
                (
                    int(u),
                    int(self.read_clk[lanes, cols][sel].max()),
                    int(self.read_line[lanes, cols][sel][k]),
                    int(seq[k]),
                    int(self.read_cgen[lanes, cols][sel].max()),
                )
            )
        return out

    def unordered_read(self, lanes, cols, warp, rcta=None) -> tuple[int, int] | None:
        """(reader warp, its line) of the first other warp that read cells (``lanes``, ``cols``) with nothing
        ordering that read before ``warp``'s (of ``rcta``) access now; None when there is none."""
        for u, clk, ln, _, cgen in self.readers(lanes, cols, warp, rcta):
            if not self.ordered(self.cta if rcta is None else rcta, warp, u, clk, cgen):
                return u, ln
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
        return _has_clocks(self.cta)

    def knows(self, warp, other, clock) -> bool:
        """Whether ``warp`` (of this CTA) is ordered after ``other``'s access at ``clock``."""
        races = self.cta.races
        if races is None:
            return True
        if not hasattr(races, "vc"):  # lockstep: the whole CTA is one group, in program order
            return True
        return bool(races.vc[0, int(warp), int(other)] >= clock)

    def cluster_gen(self) -> int:
        """Cluster barriers completed so far (0 outside a cluster). A cluster barrier carries no clocks from one
        CTA to another: one completed after an access orders it before what every thread does after the barrier."""
        cl = self.cta.cluster
        return int(cl.barrier.generation) if cl is not None else 0

    def ordered(self, rcta, warp, u, clock, cgen=None) -> bool:
        """Whether warp ``warp`` of CTA ``rcta`` (this one, or the other CTA of a ``cta_group::2`` pair) is ordered
        after warp ``u`` of this CTA's access at ``clock``, ``cgen`` cluster barriers after the launch: through
        the clocks of this CTA's warps that remote mbarrier arrives carried to ``rcta``, or a cluster barrier."""
        if rcta is self.cta:
            return self.knows(warp, u, clock)
        if not _has_clocks(rcta):
            return True
        known = rcta.races.known_of(int(warp)).get(self.cta.rank)
        if known is not None and np.asarray(known)[int(u)] >= clock:
            return True
        return cgen is not None and self.cluster_gen() > cgen

    def ordered_after_write(self, w: AsyncWrite, warp, rcta=None) -> bool:
        """Whether ``warp`` of ``rcta`` (this CTA unless given) sees asynchronous write ``w`` completed: it acquired
        the clock the tcgen05 pipe published through the commit's mbarrier (waiting on that phase, or ordered after
        a warp that did). A barrier right after the commit is not enough: the commit only makes the mbarrier track
        completion."""
        rcta = self.cta if rcta is None else rcta
        if rcta.races is None:
            return True
        if w.clock is None or w.mb is None:
            return False
        owner, mb = w.mb
        row = w.warp if w.row is None else w.row
        if w.row is None and owner is rcta and warp == w.warp and w.cta is rcta:
            return mb.completed > w.phase  # no pipe row (lockstep): the commit's phase completed
        races = rcta.races
        if not hasattr(races, "vc"):
            return False  # lockstep: no warp ever waits on an mbarrier, so nothing saw it complete
        if w.cta is rcta:
            return bool(races.vc[0, int(warp), row] >= w.clock)
        known = races.known_of(int(warp)).get(w.rank)
        return known is not None and bool(np.asarray(known)[row] >= w.clock)

    def unordered_writes(self, writer_ids, warp, rcta=None):
        """The asynchronous writes named in ``writer_ids`` (cells of a writer map) that ``warp`` (of ``rcta``)
        does not yet see completed, in write order."""
        for w in self.writes_of(writer_ids):
            if not self.ordered_after_write(w, warp, rcta):
                yield w

    def writes_of(self, writer_ids):
        """The asynchronous writes named in ``writer_ids``, in write order."""
        for i in np.unique(writer_ids):
            if i > 0:
                yield self.writes[int(i)]

    def write_race(self, w: AsyncWrite, message, line, tag, threads, cta=None):
        """A ``tmem_race`` at ``line`` with asynchronous write ``w`` (at its commit's line, else its
        issue's), reported once per (``line``, ``tag``, ``w``'s line)."""
        cta_finding(
            cta or self.cta,
            "tmem_race",
            message,
            line,
            tag,
            w.line,
            other_line=w.commit_line or w.line,
            threads=threads,
        )

    # ---- fences (PTX ISA 9.7.16.6.3: tcgen05.fence::before/after_thread_sync) -----------------------------------
    def fence(self, warp, after: bool) -> None:
        """``tcgen05.fence::after_thread_sync`` by ``warp``: what it knows now orders its later asynchronous tcgen05
        operations; ``::before_thread_sync``: its earlier ones are ordered before its next arrive or barrier."""
        races, warp, ep = self.cta.races, int(warp), _epoch(self.cta)
        if ep is None and not self.vc_checked():
            return
        if after:
            if ep is not None:
                self.fence_after_ep[warp] = ep
                return
            known = {r: np.array(c, copy=True) for r, c in races.known_of(warp).items()}
            self.fence_after[warp] = (races.vc[0, warp].copy(), known, self.cluster_gen())
        else:
            self.seq += 1
            seqs, clocks, gens = self.fence_before.setdefault(warp, ([], [], []))
            seqs.append(self.seq)
            clocks.append(ep if ep is not None else int(races.vc[0, warp, warp]))
            gens.append(self.cluster_gen())

    def fenced_after(self, rcta, warp, src, row, clock, cgen=None) -> bool:
        """Whether ``warp`` of ``rcta`` knew clock row ``row`` of CTA ``src`` at ``clock`` (or a cluster barrier
        after ``cgen``, for another CTA) at its last ``tcgen05.fence::after_thread_sync``."""
        snap = tmem_of(rcta).fence_after.get(int(warp))
        if snap is None:
            return False
        vc, foreign, fgen = snap
        if src is rcta:
            return bool(vc[int(row)] >= clock)
        known = foreign.get(src.rank)
        if known is not None and np.asarray(known)[int(row)] >= clock:
            return True
        return cgen is not None and fgen > cgen

    def fenced_before(self, u, seq, rcta, warp) -> bool:
        """Whether warp ``u`` of this CTA ran ``tcgen05.fence::before_thread_sync`` after its access number ``seq``
        and ``warp`` of ``rcta`` is ordered after that fence (an arrive or barrier of ``u``'s after it)."""
        f = self.fence_before.get(int(u))
        if not f:
            return False
        i = bisect.bisect_right(f[0], seq)
        return i < len(f[0]) and self.ordered(rcta, warp, u, f[1][i], f[2][i])

    def check_fences(self, rcta, warp, line, what, u, clock, seq, cgen, pline, pwhat, threads) -> None:
        """``what`` by ``warp`` of ``rcta`` (line ``line``) is ordered after ``pwhat`` by warp ``u`` of this CTA (line
        ``pline``; clock ``clock``, access number ``seq``) through a thread synchronisation: the fences that order
        asynchronous tcgen05 operations across it must be there (PTX ISA 9.7.16.6.4.4)."""
        ep = _epoch(self.cta)
        if ep is not None and rcta is self.cta:  # lockstep: a CTA barrier (epoch) is the only synchronisation
            if ep <= clock:
                return  # the same epoch: the two are ordered by the lockstep's program order, not a synchronisation
            after = self.fence_after_ep.get(int(warp), -1) > clock
            f = self.fence_before.get(int(u))
            i = bisect.bisect_right(f[0], seq) if f else 0
            before = bool(f) and i < len(f[0]) and f[1][i] < ep
        elif self.vc_checked() and _has_clocks(rcta):
            after = self.fenced_after(rcta, warp, self.cta, u, clock, cgen)
            before = self.fenced_before(u, seq, rcta, warp)
        else:
            return
        if not after:
            _missing_after(rcta, warp, line, what, f"the {pwhat} by warp {u}{_of(self.cta, rcta)}", pline, threads)
        if not before:
            wait = "tcgen05.wait::ld" if pwhat.startswith("tcgen05.ld") else "tcgen05.wait::st"
            cta_finding(
                self.cta,
                "missing_fence",
                f"missing tcgen05.fence::before_thread_sync: the {pwhat} by warp {u} (line {pline}) is ordered before "
                f"the {what} by warp {warp}{_of(rcta, self.cta)} (line {line}) only through a thread synchronisation "
                f"(an mbarrier arrive or a barrier) with no tcgen05.fence::before_thread_sync between the {pwhat} and "
                "it: PTX's tcgen05 memory model (ISA 9.7.16.6.3) orders an asynchronous tcgen05 operation before a "
                f"thread synchronisation only through that fence -- add T.ptx.tcgen05.fence__before_thread_sync() "
                f"after the {wait}, before the arrive or barrier",
                pline,
                "before",
                line,
                other_line=line,
            )

    def check_write_fence(self, w: AsyncWrite, rcta, warp, line, what, threads) -> None:
        """``what`` by ``warp`` of ``rcta`` is ordered after asynchronous write ``w`` through the mbarrier its
        commit arrived on: ``tcgen05.fence::after_thread_sync`` must follow the wait (the commit itself is the
        producer's ``before_thread_sync``)."""
        if w.clock is None or not _has_clocks(rcta) or w.cta.races is None or not hasattr(w.cta.races, "vc"):
            return
        row = w.warp if w.row is None else w.row
        if not self.fenced_after(rcta, warp, w.cta, row, w.clock):
            _missing_after(rcta, warp, line, what, f"the {w.what} committed", w.commit_line or w.line, threads)

    # ---- reads and writes --------------------------------------------------------------------
    def check_read(self, lanes, cols, warp, line, threads, pipe=False, rcta=None, what="tcgen05.ld"):
        """``what`` by ``warp`` of ``rcta`` (this CTA unless given) reads cells (lanes, cols): every asynchronous
        write to them must be visible. ``pipe``: the reader is an MMA of ``rcta``'s tcgen05 pipe, which runs in issue
        order after the earlier mma/cp of that CTA (PTX's implicit pipelining), so only other CTAs' count."""
        rcta = self.cta if rcta is None else rcta
        if self.cta.races is None:
            return
        for w in self.writes_of(self.writer[lanes, cols]):
            if pipe and w.cta is rcta:
                continue
            if self.ordered_after_write(w, warp, rcta):
                self.check_write_fence(w, rcta, warp, line, what, threads)
                continue
            fix = (
                "commit it (tcgen05.commit) and wait on that mbarrier before reading"
                if w.clock is None
                else "wait on the commit's mbarrier phase (then tcgen05.fence::after_thread_sync) before reading"
            )
            self.write_race(
                w,
                f"TMEM race: {what} by warp {warp} (line {line}) reads lanes {int(np.min(lanes))}.."
                f"{int(np.max(lanes))}, columns {int(np.min(cols))}..{int(np.max(cols))} that the {w.where()} "
                f"writes asynchronously, with nothing ordering the read after its completion: {fix}",
                line,
                "ld",
                threads,
            )

    def check_st_over_mma_read(self, lanes, cols, warp, line, threads, what="tcgen05.st"):
        """A tcgen05.st over cells an issued MMA reads as its A operand: the MMA must be complete."""
        for w in self.writes_of(self.areader[lanes, cols]):
            if self.ordered_after_write(w, warp):
                self.check_write_fence(w, self.cta, warp, line, what, threads)
                continue
            self.write_race(
                w,
                f"TMEM race: tcgen05.st by warp {warp} (line {line}) overwrites TMEM cells the {w.where()} reads as "
                "its A operand before that MMA is known to be complete (wait on its commit's mbarrier first)",
                line,
                "st_over_a",
                threads,
            )
            return

    def record_st(self, lanes, cols, warp, line):
        self.pending_st[warp] = line
        self.st_warp[lanes, cols] = warp
        ep = _epoch(self.cta)
        self.st_clk[lanes, cols] = self.cta.races.vc[0, warp, warp] if self.vc_checked() else ep or 0
        self.st_line[lanes, cols] = -1 if line is None else int(line)
        self.seq += 1
        self.st_seq[lanes, cols] = self.seq
        self.st_cgen[lanes, cols] = self.cluster_gen()
        self.written[lanes, cols] = True

    def check_stores_complete(self, lanes, cols, warp, line, what, threads, rcta=None):
        """``warp`` of ``rcta`` (this CTA unless given) reads TMEM cells -- by a tcgen05.ld, or by an MMA it issued
        (its A operand, or the accumulator it adds to): a tcgen05.st to them must be complete -- ``wait::st`` by the
        storing warp, and for another warp a barrier or mbarrier after it (with ``fence::before/after_thread_sync``)."""
        rcta = self.cta if rcta is None else rcta
        if self.cta.races is None:
            return
        u = self.st_warp[lanes, cols]
        for st in np.unique(u[u >= 0]):
            sel = u == st
            seqs = self.st_seq[lanes, cols][sel]
            k = int(np.argmax(seqs))
            ln = int(self.st_line[lanes, cols][sel][k])
            if st == warp and rcta is self.cta:
                if warp not in self.pending_st:
                    continue
                why = f"warp {warp} itself stored them (line {ln}) and has not waited for it (tcgen05.wait::st)"
            else:
                clk = int(self.st_clk[lanes, cols][sel].max())
                cgen = int(self.st_cgen[lanes, cols][sel].max())
                if self.ordered(rcta, warp, int(st), clk, cgen) and int(st) not in self.pending_st:
                    self.check_fences(
                        rcta, warp, line, what, int(st), clk, int(seqs[k]), cgen, ln, "tcgen05.st", threads
                    )
                    continue
                why = f"warp {int(st)}{_of(self.cta, rcta)} stored them at line {ln} " + (
                    "and has not waited for it (tcgen05.wait::st)"
                    if int(st) in self.pending_st
                    else "and nothing orders that store before this MMA (a barrier after wait::st)"
                )
            cta_finding(
                rcta,
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
        ep = _epoch(self.cta)
        if ep is None and not self.vc_checked():
            return
        self.reader[lanes, cols] = warp
        self.read_clk[lanes, cols] = self.cta.races.vc[0, warp, warp] if ep is None else ep
        self.read_line[lanes, cols] = -1 if line is None else int(line)
        self.seq += 1
        self.read_seq[lanes, cols] = self.seq
        self.read_cgen[lanes, cols] = self.cluster_gen()

    def check_unwritten(self, lanes, cols, line, what, threads, fix=None, rcta=None) -> None:
        """``what`` (at ``line``, of ``rcta``: this CTA unless given) reads cells (``lanes``, ``cols``): one nothing
        wrote since its ``tcgen05.alloc`` is an ``uninitialized_tmem_read`` (alloc does not clear TMEM)."""
        got = self.written[lanes, cols]
        if got.all():
            return
        miss = ~got
        L = np.broadcast_to(np.asarray(lanes), got.shape)[miss]
        C = np.broadcast_to(np.asarray(cols), got.shape)[miss]
        c0 = int(C.min())
        alloc = next((f" (allocated at line {ln})" for c, (n, ln) in self.allocs.items() if c <= c0 < c + n), "")
        cta_finding(
            rcta or self.cta,
            "uninitialized_tmem_read",
            f"read of never-written TMEM: {what} reads lanes {int(L.min())}..{int(L.max())}, columns "
            f"{c0}..{int(C.max())}{alloc}{_of(self.cta, rcta or self.cta, ' in')}, and nothing wrote {int(miss.sum())} of "
            "those cells since their tcgen05.alloc (no tcgen05.st, tcgen05.cp or tcgen05.mma): tcgen05.alloc does not "
            "clear TMEM, so on a GPU they hold whatever was left there (the emulator's TMEM starts as zeros)"
            + (
                f" -- {fix}"
                if fix
                else " -- write them first (tcgen05.st, tcgen05.cp, or an MMA with enable_input_d = 0)"
            ),
            line,
            "unwritten",
            threads=threads,
        )

    def begin_write(self, w: AsyncWrite, lanes, cols, line, threads, keep=None) -> None:
        """An asynchronous write of (lanes, cols) issued by ``w.warp`` (of CTA ``w.cta``, this one or the leader of
        a ``cta_group::2`` pair): the cells' earlier readers must be ordered before it (the peer CTA's through the
        clocks its remote arrives carried, or a cluster barrier), with the tcgen05 fences around that ordering; the
        cells now wait for ``w``'s commit. ``keep``: the cells it writes (an MMA's disabled output lanes are not)."""
        if self.vc_checked() and _has_clocks(w.cta):
            for u, clk, ln, seq, cgen in self.readers(lanes, cols, w.warp, w.cta):
                if not self.ordered(w.cta, w.warp, u, clk, cgen):
                    cta_finding(
                        self.cta,
                        "tmem_race",
                        f"TMEM race: {w.what} by warp {w.warp}{_of(w.cta, self.cta)} (line {line}) overwrites TMEM "
                        f"cells warp {u}{_of(self.cta, w.cta)} read at line {ln}, with nothing ordering that read "
                        "first (the accumulator was reused before its reader released it: wait on the reader's "
                        "mbarrier arrive before issuing)",
                        line,
                        "war",
                        ln,
                        other_line=ln,
                        threads=threads,
                    )
                    break
                self.check_fences(w.cta, w.warp, line, w.what, u, clk, seq, cgen, ln, "tcgen05.ld", threads)
            self.reader[lanes, cols] = -1
        self.writes.append(w)
        self.writer[lanes, cols] = len(self.writes) - 1
        if keep is None:
            self.written[lanes, cols] = True
        else:
            self.written[np.asarray(lanes)[keep], np.asarray(cols)[keep]] = True


def _epoch(cta) -> int | None:
    """The CTA barriers ``cta`` completed, where its race checker runs in lockstep (one epoch per barrier; no
    mbarrier waits), else None."""
    races = cta.races
    ep = getattr(races, "ep", None) if races is not None else None
    return None if ep is None else int(ep[0])


def _has_clocks(cta) -> bool:
    """Whether ``cta``'s race checker keeps a clock per warp (warp mode), which the ordering rules read."""
    races = cta.races
    return races is not None and hasattr(races, "vc")


def _of(cta, other, prep=" of") -> str:
    """`` of cluster rank r`` when ``cta`` is not ``other`` (the two CTAs of a ``cta_group::2`` pair), else ''."""
    return "" if cta is other else f"{prep} cluster rank {cta.rank}"


def _missing_after(rcta, warp, line, what, after, other_line, threads) -> None:
    """``what`` by ``warp`` of ``rcta`` (line ``line``) is ordered after ``after`` (line ``other_line``) through a
    thread synchronisation with no ``tcgen05.fence::after_thread_sync`` between it and ``what``."""
    cta_finding(
        rcta,
        "missing_fence",
        f"missing tcgen05.fence::after_thread_sync: the {what} by warp {warp} (line {line}) is ordered after {after} "
        f"(line {other_line}) only through a thread synchronisation (an mbarrier wait or a barrier) with no "
        "tcgen05.fence::after_thread_sync between that synchronisation and it: PTX's tcgen05 memory model (ISA "
        "9.7.16.6.3) orders an asynchronous tcgen05 operation after a thread synchronisation only through that fence "
        "-- add T.ptx.tcgen05.fence__after_thread_sync() after the wait or barrier, before this operation",
        line,
        "after",
        other_line,
        other_line=other_line,
        threads=threads,
    )


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


def note_cta_group(g, cg: int, line, what: str) -> None:
    """``what`` names ``.cta_group::cg``: every tcgen05 instruction of a kernel must name the same one (PTX ISA,
    tcgen05.alloc: "All tcgen05 instructions within a kernel must specify the same value for the .cta_group
    qualifier"); one that differs from the first this run executed is a ``tcgen05_pair`` finding at its line."""
    first = g.cta.program.__dict__.setdefault("tcgen05_cta_group", (cg, line, what))
    if first[0] != cg:
        cta_finding(
            g.cta,
            "tcgen05_pair",
            f"{what} (line {line}) names .cta_group::{cg}, but {first[2]} (line {first[1]}) named "
            f".cta_group::{first[0]}: all tcgen05 instructions of a kernel must specify the same .cta_group (PTX ISA, "
            "tcgen05.alloc) -- a cta_group::2 kernel allocates, deallocates, relinquishes, copies, multiplies and "
            "commits with .cta_group::2 (alloc and dealloc by one warp of each CTA of the pair)",
            line,
            "cta_group",
            first[1],
            other_line=first[1],
            threads=g.active_tids()[:1],
        )


def _cta_group(p) -> int:
    return 2 if p.mods.get("cta_group") == "cta_group::2" else 1


#: the ``g.slots`` key of a group's :class:`PendingRegs` (the interpreter's local loads look it up)
PENDING = "tcgen05_ld_pending"


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _offset(a: np.ndarray, root: np.ndarray) -> int:
    """Byte offset of view ``a``'s first element from its root's (a register buffer seen as another type: 0)."""
    return int(a.__array_interface__["data"][0] - root.__array_interface__["data"][0])


class PendingRegs:
    """The destination registers of a group's ``tcgen05.ld`` instructions not waited for yet (``tcgen05.wait::ld``):
    per local buffer (its root array), the ld's line per lane and byte (0: nothing pending). The interpreter calls
    it for each load of a local buffer while some are pending (``g.slots[PENDING]``): a read of one is a
    ``tmem_wait`` finding at the reading line (PTX ISA 9.7.16.8.3: the registers are undefined until the wait)."""

    def __init__(self):
        self.bufs: dict = {}  # id(root) -> (root, (lanes, bytes per lane) int32 of ld lines)

    def mark(self, arr, elems: list, isz: int, lanes, line) -> None:
        """Elements ``elems`` (each an index, or an index per lane) of ``isz`` bytes of local buffer ``arr``, in
        ``lanes``, now wait for the ld at ``line``."""
        root = _root(arr)
        ent = self.bufs.get(id(root))
        if ent is None or ent[0] is not root:
            ent = self.bufs[id(root)] = (root, np.zeros((root.shape[0], root[0].nbytes), np.int32))
        lines = ent[1]
        ln = -1 if line is None else int(line)
        off, step = _offset(arr, root), np.arange(isz)
        scalar = [int(e) for e in elems if np.ndim(e) == 0]
        if scalar:
            cols = (off + np.asarray(scalar, np.int64)[:, None] * isz + step).ravel()
            cols = cols[(cols >= 0) & (cols < lines.shape[1])]
            lines[np.ix_(lanes, cols)] = ln
        for e in elems:
            if np.ndim(e):
                cols = off + np.broadcast_to(np.asarray(e, np.int64), (lines.shape[0],))[lanes, None] * isz + step
                lines[lanes[:, None], np.clip(cols, 0, lines.shape[1] - 1)] = ln

    def clear(self, g, lanes) -> None:
        """``tcgen05.wait::ld`` by the warps of ``lanes``: their registers are defined."""
        for key, (_, lines) in list(self.bufs.items()):
            lines[lanes] = 0
            if not lines.any():
                del self.bufs[key]
        if not self.bufs:
            g.slots.pop(PENDING, None)

    def __call__(self, g, arr, i, line) -> None:
        """A load of element(s) ``i`` of local buffer ``arr`` (as the loading type) by ``g``'s active lanes."""
        root = _root(arr)
        ent = self.bufs.get(id(root))
        if ent is None or ent[0] is not root:
            return
        lines = ent[1]
        isz, n, L = arr.itemsize, lines.shape[1], lines.shape[0]
        e = np.asarray(i, np.int64)
        start = np.clip(_offset(arr, root) + e * isz, 0, n - isz)
        step = np.arange(isz)
        if e.ndim == 0:
            hit = lines[:, int(start) : int(start) + isz].max(axis=1)
        else:
            cols = start[..., None] + step
            cols = np.broadcast_to(cols.reshape(cols.shape[0], -1), (L, cols[0].size))
            hit = lines[np.arange(L)[:, None], cols].max(axis=1)
        hit = np.where(g.active(), hit, 0)
        if not hit.any():
            return
        ld = int(hit[np.flatnonzero(hit)[0]])
        ld = None if ld < 0 else ld
        cta_finding(
            g.cta,
            "tmem_wait",
            f"read of a tcgen05.ld's destination register before its tcgen05.wait::ld: line {line} reads a register "
            f"the tcgen05.ld at line {ld} loads, and the warp has not executed tcgen05.wait::ld since -- the "
            "registers are undefined until the wait (PTX ISA: tcgen05.ld is asynchronous; a register dependency does "
            "not wait for it): put T.ptx.tcgen05.wait__ld.sync.aligned() between the ld and the first use",
            line,
            "use",
            ld,
            other_line=ld,
            threads=g.tid[hit != 0],
        )


# ---- alloc / dealloc / relinquish --------------------------------------------------------------------
def _alloc(comp, call):
    p = decode(call)
    dst, ncols = comp.expr(p.one("dst")), comp.expr(p.one("ncols"))
    line = comp.line
    if p.mods.get("action") != "alloc":
        return comp.not_emulated(call.op.name)
    cg = _cta_group(p)
    what = f"tcgen05.alloc.cta_group::{cg}"

    def f(g):
        tm = tmem_of(g.cta)
        whole_warp_check(g, what, line)
        note_cta_group(g, cg, line, what)
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
    cg = _cta_group(p)
    what = f"tcgen05.dealloc.cta_group::{cg}"

    def f(g):
        tm = tmem_of(g.cta)
        whole_warp_check(g, what, line)
        note_cta_group(g, cg, line, what)
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
    p = decode(call)
    cg = _cta_group(p) if p is not None else 1
    what = f"tcgen05.relinquish_alloc_permit.cta_group::{cg}"

    def f(g):
        tm = tmem_of(g.cta)
        whole_warp_check(g, what, line)
        note_cta_group(g, cg, line, what)
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
        dests: dict = {}  # destination buffer -> (element size, [flat index of each register in it])
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
            dests.setdefault(d.source, (rd.itemsize, []))[1].append(comp._flat_index(d.source, list(d.indices)))
    else:
        from txlab.emulator.ops import comp_dtype

        vals = [(comp.expr(d), M.np_dtype(comp_dtype(d))) if d is not None else None for d in regs]

    def f(g):
        tm = tmem_of(g.cta)
        whole_warp_check(g, what, line)
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
                tm.check_read(lanes, cols, w, line, g.tid[pos], what=what)
                tm.check_stores_complete(lanes, cols, w, line, what, g.tid[pos])
                tm.check_unwritten(lanes, cols, line, f"{what} by warp {w}", g.tid[pos])
                cells = tm.data[lanes, cols]
                if packed:
                    cells = (cells[..., 0] & 0xFFFF) | ((cells[..., 1] & 0xFFFF) << 16)
                out[pos] = cells
                tm.record_read(lanes, cols, w, line)
                tm.pending_ld[w] = line
            else:
                tm.check_read(lanes, cols, w, line, g.tid[pos], what=what)
                wv = words[pos]
                if packed:
                    tm.data[lanes[..., 0], cols[..., 0]] = wv & 0xFFFF
                    tm.data[lanes[..., 1], cols[..., 1]] = wv >> 16
                else:
                    tm.data[lanes, cols] = wv
                tm.writer[lanes, cols] = 0
                tm.check_st_over_mma_read(lanes, cols, w, line, g.tid[pos], what)
                tm.record_st(lanes, cols, w, line)
        if load:
            g.slots[key] = out
            for st in stores:
                st(g)
            # the registers are undefined until the warp's tcgen05.wait::ld: a read of one before it is a finding
            pend = g.slots.get(PENDING)
            if pend is None:
                pend = g.slots[PENDING] = PendingRegs()
            lanes_now = np.flatnonzero(g.active())
            for buf, (isz, idx) in dests.items():
                arr = g.env[buf]
                if isinstance(arr, np.ndarray) and arr.ndim == 2:  # (registers: a local buffer, a row per lane)
                    pend.mark(arr, [ix(g) for ix in idx], isz, lanes_now, line)
        g.cta.progress += 1
        return np.int32(0)

    return f


def _wait(comp, call):
    p = decode(call)
    action = p.mods.get("action", "") if p is not None else ""
    line = comp.line
    what = f"tcgen05.{action or 'wait'}"

    def f(g):
        tm = tmem_of(g.cta)
        whole_warp_check(g, what, line)
        pending = tm.pending_ld if action == "wait::ld" else tm.pending_st
        regs = g.slots.get(PENDING) if action == "wait::ld" else None
        for w, pos in warps_of(g):
            pending.pop(w, None)
            if regs is not None:
                regs.clear(g, pos)
        return np.int32(0)

    return f


_FENCE_NOTE = (
    "tcgen05.fence::before_thread_sync / after_thread_sync order nothing themselves here: the emulator orders "
    "tcgen05 operations through their mbarriers (tcgen05.commit) and its vector clocks, and reports a tcgen05 "
    "operation ordered after another thread's only through a thread synchronisation without them (missing_fence)"
)


def _fence(comp, call):
    if _FENCE_NOTE not in comp.program.notes:
        comp.program.notes.append(_FENCE_NOTE)
    p = decode(call)
    action = p.mods.get("action", "") if p is not None else ""
    if action not in ("fence::before_thread_sync", "fence::after_thread_sync"):
        return comp.not_emulated(call.op.name)
    after = action == "fence::after_thread_sync"

    def f(g):
        tm = tmem_of(g.cta)
        for w, _ in warps_of(g):
            tm.fence(w, after)
        return np.int32(0)

    return f


HANDLERS["tirx.ptx.tcgen05_alloc"] = _alloc
HANDLERS["tirx.ptx.tcgen05_dealloc"] = _dealloc
HANDLERS["tirx.ptx.tcgen05_relinquish_alloc_permit"] = _relinquish
HANDLERS["tirx.cuda.get_tmem_addr"] = _get_tmem_addr
for _n in ("tcgen05_ld", "tcgen05_st", "tcgen05_ld_split", "tcgen05_st_split"):
    HANDLERS[f"tirx.ptx.{_n}"] = _ldst
HANDLERS["tirx.ptx.tcgen05_wait"] = _wait
HANDLERS["tirx.ptx.tcgen05_fence"] = _fence
