"""Plain global loads and stores of one CTA's threads to the same bytes with nothing ordering them.

The shared-memory checker (:mod:`txlab.emulator.races`) orders a CTA's warps by their clocks: a CTA barrier joins
them, an mbarrier arrive/wait hands one over, a fence and a lock's atomics order a critical section; and the lanes
of one warp by their ``__syncwarp`` count (:mod:`txlab.emulator.lane_hazards`: the warp's lockstep here is one legal
schedule, not a promise). Global memory is ordered the same way inside a CTA, so the same clocks and counts decide
here (``stamp``/``ordered`` of the CTA's checker, as :class:`txlab.emulator.races.GlobalRaces` asks them for atomics,
and its ``lanes.count``): a store and a load or store of the same global bytes by threads of two warps of one CTA with
no barrier between them is a race -- the histogram without atomics (``H[X[i]] = H[X[i]] + 1``: lost updates, whatever
order the emulator's lockstep picked), two warps writing different values to one element -- and so is one by two
lanes of one warp with no ``__syncwarp`` (or barrier) between. Between CTAs, :mod:`txlab.emulator.cta_overlaps` and
:mod:`txlab.emulator.cta_reads` check.

Only what can race is tracked, and only what changes something counts: the global arguments the kernel's plain
stores reach (up to :data:`MAX_TRACKED` bytes each; larger ones are noted), plain TIRx loads and stores only
(atomics are :class:`~txlab.emulator.races.GlobalRaces`'), and a store that leaves the bytes as they were is no event
(every warp zeroing a flag, every lane of a reduction storing the sum it holds): two warps storing different values,
or a load and a store that changes the value, are. Lanes of several warps storing different values to one element in
one lockstep statement race too; lanes of one warp in one statement do not (as in shared memory), nor does a read by
one of the lanes that made the last store, or a store by lanes that include every lane of the last one (each lane's
own stores land in order).

Per unit of each tracked argument (its first access's element size, bytes once a narrower or unaligned access
comes): the last store that changed it and the last read, each as (launch-wide thread, the clock of its warp, its
warp's ``__syncwarp`` count, line, and in a kernel with grid barriers the grid-barrier epoch), the store also with the
lanes of its warp that made it; and, allocated where first needed, one more read by another thread that the last one
replaced (a read of warp 0, then of warp 1, then a store of warp 1 still races with warp 0's). 16 bytes per unit and
record (20 with grid barriers; a store's lanes 4 more, from the first statement whose lanes of one warp meet at a unit),
allocated zeroed (pages nothing touches cost nothing): a kernel that only stores an argument keeps one record of it,
16 MiB for a 4 MiB float32 output.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.lane_hazards import Entries

#: global arguments larger than this are not tracked (16 to 64 bytes of state per unit; the result's notes say so)
MAX_TRACKED = 16 << 20

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3}


class _Record:
    """One access per unit: launch-wide thread + 1 (CTA serial * threads + thread; 0: none), its warp's clock, its
    warp's ``__syncwarp`` count, line, (``epochs``) its grid-barrier epoch and (a store's, allocated at the first
    statement whose lanes meet at a unit) ``mask``, the lanes of its warp that made it (0: the thread's own alone)."""

    NAMES = ("who", "clk", "lsync", "line", "epoch", "mask")

    def __init__(self, n: int, epochs: bool, store: bool = False):
        self.store = store  # a store's record (its lanes count: see :meth:`lanes`)
        self.who = np.zeros(n, np.int32)
        self.clk = np.zeros(n, np.int32)
        self.lsync = np.zeros(n, np.int32)
        self.line = np.zeros(n, np.int32)
        self.epoch = np.zeros(n, np.int32) if epochs else None
        self.mask = None

    def fields(self) -> list:
        return [(k, getattr(self, k)) for k in self.NAMES if getattr(self, k) is not None]

    def refine(self, f: int) -> None:
        """Units of ``1 / f`` the size: each unit's record is each of its parts'."""
        for k, a in self.fields():
            setattr(self, k, np.repeat(a, f))

    def put(self, ix, who1, clk, lsync, line, epoch) -> None:
        ix.set(self.who, who1)
        ix.set(self.clk, clk)
        ix.set(self.lsync, lsync)
        ix.set(self.line, line)
        if self.epoch is not None:
            ix.set(self.epoch, epoch)
        if self.mask is not None:
            ix.set(self.mask, 0)

    def lanes(self, ix) -> np.ndarray:
        """The lanes (bits of their warp's mask) that made the record of entries ``ix``."""
        own = np.left_shift(np.uint32(1), ((ix.get(self.who) - 1) & 31).astype(np.uint32))
        if self.mask is None:
            return own
        m = ix.get(self.mask)
        return np.where(m != 0, m, own)

    def copy(self, other, k) -> None:
        for (_, mine), (_, theirs) in zip(self.fields(), other.fields(), strict=True):
            mine[k] = theirs[k]


class WarpGlobalRaces:
    """``report(detail)`` gets each racing pair once per (kinds, lines, argument): ``first``/``second`` = (kind, line,
    thread, CTA), ``addr`` (byte), ``unit`` (bytes per element tracked), ``region``, ``count`` (bytes), and for two
    lanes of one warp ``warp``. ``epochs``: the kernel has grid barriers (``grid_sync``), which order every access
    before them."""

    def __init__(self, report, notes, epochs: bool = False):
        self.report = report
        self.notes = notes
        self.epochs = epochs
        self.stored = None  # the regions the kernel's plain stores reach (set by Program.run)
        self.state: dict = {}  # Region -> dict (None: too large)
        self.ctas: dict = {}  # CTA serial -> (x, y, z)
        self._seen: set = set()

    def tracks(self, region) -> bool:
        """Whether ``region``'s plain accesses are checked: a global argument a plain store reaches, small enough."""
        if region.kind != "global" or not self.stored or region not in self.stored:
            return False
        st = self.state.get(region, True)
        if st is True and region.nbytes > MAX_TRACKED:
            st = self.state[region] = None
            self.notes.append(
                f"{region.name} ({region.nbytes / 2**20:.1f} MiB) is not checked for races between threads of one "
                f"CTA (arguments up to {MAX_TRACKED >> 20} MiB are)"
            )
        return st is not None

    def _state(self, region, isz: int) -> dict:
        st = self.state.get(region)
        if st is None:
            unit = isz if isz in _UINT and region.nbytes % isz == 0 else 1
            n = region.nbytes // unit
            st = self.state[region] = {"unit": unit, "n": n, "w": _Record(n, self.epochs, store=True)}
        return st

    def access(self, g, region, starts, tids, isz: int, write: bool, line, new=None) -> None:
        """Elements of ``isz`` bytes at byte offsets ``starts`` of ``region`` read, or (``write``) about to be stored
        with ``new`` (one value per element), by batch-wide threads ``tids`` of ``g``'s CTA (or lockstep batch of
        CTAs), in one statement."""
        chk = g.cta.races
        if chk is None or np.size(starts) == 0:
            return
        st = self._state(region, isz)
        u = st["unit"]
        starts = np.asarray(starts, np.int64)
        tids = np.asarray(tids, np.int64)
        if isz != u:  # a narrower access (elements start at multiples of their size): per byte from here on
            if u != 1:
                for name in ("w", "r", "r2"):
                    if name in st:
                        st[name].refine(u)
                st["unit"], st["n"] = 1, region.nbytes
                u = 1
            starts, tids = (starts[:, None] + np.arange(isz)).ravel(), np.repeat(tids, isz)
            if new is not None:
                new = np.ascontiguousarray(new).view(np.uint8)
        elif new is not None:
            new = np.ascontiguousarray(new).view(_UINT[u])
        b = starts >> _SHIFT[u] if u > 1 else starts  # (the lanes in bounds only: whole units of the argument)
        n = st["n"]
        T = g.cta.nthreads
        ix = Entries(b, n)
        if write:
            changes = ix.get(region.view(np.dtype(_UINT[u]))) != new  # a store that changes nothing is no event
            nc = int(np.count_nonzero(changes))
            if nc == 0:
                return
            if nc < changes.size:
                b, tids, new = b[changes], tids[changes], new[changes]
                ix = Entries(b, n)
        who1 = tids + (g.cta.serial * T + 1)  # launch-wide thread + 1: (serial + c) * T + t + 1
        epoch = int(g.slots.get("grid_sync", 0))
        ln = -1 if line is None else int(line)
        counts = chk.lanes.count[:-1]  # each warp's __syncwarp count (one number where every warp's is alike)
        lsync = counts[0] if counts.size and (counts == counts[0]).all() else chk.lanes.count[tids >> 5]
        acc = (chk, b, ix, tids, who1, T, epoch, ln, region, u, lsync)
        if write:
            rec = st["w"]
            cur = _Lanes(b, tids, ix.distinct)
            self._check(rec, acc, "write", "write", cur)
            for name in ("r", "r2"):
                if name in st:
                    self._check(st[name], acc, "read", "write")
            rec.put(ix, who1, self._now(chk, tids, T), lsync, ln, epoch)
            if not ix.distinct and (rec.who[b] != who1).any():  # lanes storing one unit (the last one's landed)
                if rec.mask is None:
                    rec.mask = np.zeros(n, np.uint32)
                rec.mask[b] = cur.bits()  # (the record names the lane that landed, and every lane that stored it)
                self._same_statement(b, who1 - 1, new, T, ln, region, u)
            return
        self._check(st["w"], acc, "write", "read")
        r = st.get("r")
        if r is None:
            r = st["r"] = _Record(n, self.epochs)
        else:  # the last read, by another thread of this CTA and not ordered before this one: kept as the other read
            cross, lane = self._unordered(r, acc)
            moved = cross | lane
            if moved.any():
                if "r2" not in st:
                    st["r2"] = _Record(n, self.epochs)
                st["r2"].copy(r, b[moved])
        r.put(ix, who1, self._now(chk, tids, T), lsync, ln, epoch)

    @staticmethod
    def _now(chk, tids, T):
        """The clock of each accessing lane's warp (one number where the CTAs' epochs are all alike, in lockstep)."""
        ep = getattr(chk, "ep", None)
        if ep is not None and (ep.size == 1 or (ep == ep[0]).all()):
            return ep[0]
        c = tids // T
        return chk.stamp(c, (tids - c * T) >> 5)

    @staticmethod
    def _unordered(rec, acc) -> tuple:
        """``(warps, lanes)``: whether the record ``rec`` of the access ``acc``'s units is an access by another warp
        of the same CTA that nothing orders before the accessing lane; by another lane of its warp with no
        ``__syncwarp`` (or barrier) since."""
        chk, b, ix, tids, who1, T, epoch, ln, region, u, lsync = acc
        pw1 = ix.get(rec.who)
        bad = (pw1 > 0) & (pw1 != who1)  # (most units' record is none, the lane's own or an earlier CTA's: cheap first)
        if not bad.any():
            return bad, bad
        c = tids // T
        t = tids - c * T
        first1 = who1 - t  # the accessing lane's CTA's thread 0, launch-wide, + 1
        bad &= (pw1 >= first1) & (pw1 < first1 + T)
        if rec.epoch is not None:
            bad &= ix.get(rec.epoch) == epoch
        if not bad.any():
            return bad, bad
        pwarp = (pw1 - first1) >> 5
        w = t >> 5
        same = bad & (pwarp == w)
        if same.any():
            same &= ix.get(rec.lsync) == lsync
        cross = bad & (pwarp != w)
        if cross.any():
            cross &= ~chk.ordered(c, w, np.maximum(pwarp, 0), ix.get(rec.clk))
        return cross, same

    def _check(self, rec, acc, first, second, cur=None) -> None:
        """The access ``acc`` (a ``second``) against the record ``rec`` of earlier ``first`` accesses; ``cur``: a
        store's lanes (:class:`_Lanes`; None: a read)."""
        cross, lane = self._unordered(rec, acc)
        chk, b, ix, tids, who1, T, epoch, ln, region, u, lsync = acc
        earlier = None
        if lane.any() and rec.store:  # a store's lanes: which of them this access is not ordered after
            earlier = rec.lanes(ix)
            if cur is not None:  # a store: one by a lane of the earlier store's that does not store it now
                lane &= (earlier & ~cur.bits()) != 0
            else:  # a read: by a lane that was not among them
                lane &= (earlier & _bits(tids)) == 0
        for bad, warp in ((cross, False), (lane, True)):
            if bad.any():
                i = int(np.argmax(bad))
                j = int(b[i])
                prev = int(rec.who[j]) - 1
                if warp and earlier is not None:  # name a lane of the earlier store other than this one
                    m = int(earlier[i]) & ~(1 << int(tids[i] & 31))
                    prev = prev - (prev & 31) + ((m & -m).bit_length() - 1 if m else prev & 31)
                self._emit(first, int(rec.line[j]), prev, second, ln, int(who1[i]) - 1, j, u, region, T, bad, warp)

    def _same_statement(self, b, who, new, T, ln, region, u) -> None:
        """Lanes of several warps of one CTA storing different values to one unit in this one statement (lockstep)."""
        order = np.argsort(b, kind="stable")
        bs, vs, wo = b[order], new[order], who[order]
        cta = wo // T
        warp = (wo - cta * T) >> 5
        dup = (bs[1:] == bs[:-1]) & (cta[1:] == cta[:-1]) & (warp[1:] != warp[:-1]) & (vs[1:] != vs[:-1])
        if dup.any():
            i = int(np.argmax(dup))
            self._emit("write", ln, int(wo[i]), "write", ln, int(wo[i + 1]), int(bs[i]), u, region, T, dup, False)

    def _emit(self, first, l1, who1, second, l2, who2, unit, u, region, T, bad, warp) -> None:
        key = (first, l1, second, l2, region.name, warp)
        if key in self._seen:
            return
        self._seen.add(key)
        self.report(
            {
                "first": (first, l1 if l1 >= 0 else None, who1 % T, self.ctas.get(who1 // T)),
                "second": (second, l2 if l2 >= 0 else None, who2 % T, self.ctas.get(who2 // T)),
                "addr": unit * u,
                "unit": u,
                "region": region.name,
                "count": int(np.count_nonzero(bad)) * u,
                "warp": (who2 % T) // 32 if warp else None,
            }
        )


class _Lanes:
    """The lanes (bits of their warp's 32-bit mask) storing each unit of one statement: each lane's own bit, or where
    lanes meet at a unit (the statement's units are not known distinct) every such lane's of its warp -- worked out
    only where asked (a lane hazard against an earlier store of the same warp, a statement whose lanes meet)."""

    def __init__(self, b, tids, distinct: bool):
        self.b, self.tids, self.distinct = b, tids, distinct
        self._all = None

    def bits(self) -> np.ndarray:
        """Each access's lanes storing its unit."""
        if self._all is None:
            own = _bits(self.tids)
            if self.distinct:
                self._all = own
            else:
                warps = self.tids >> 5  # (the lanes of one warp meeting at a unit: each warp's lanes apart)
                uk, inv = np.unique(self.b * (int(warps.max()) + 1) + warps, return_inverse=True)
                got = np.zeros(uk.size, np.uint32)
                np.bitwise_or.at(got, inv, own)
                self._all = got[inv]
        return self._all


def _bits(tids) -> np.ndarray:
    """Each thread's lane bit (1 << lane) in its warp's 32-bit mask."""
    return np.left_shift(np.uint32(1), (tids & 31).astype(np.uint32))
