"""A plain global load of bytes another CTA stores with a plain store in the same grid-barrier epoch.

Nothing orders two CTAs of one launch but a grid barrier (``grid_sync``, in a cooperative launch) or the kernel's own
protocol (atomics, polls, acquire/release, cluster barriers). Where one CTA reads bytes that another writes and no
grid barrier lies between them, the value read depends on which runs first: a forgotten ``grid_sync`` (CTA 0 summing
partials the other CTAs have not written yet), a read of a neighbour's data that the neighbour then overwrites, an
in-place stencil across CTA tiles. The emulator runs CTAs in one order, so its outputs look right; this checker
reports the pair. A store that leaves the bytes as they were (several CTAs writing one value) is not counted.

Checked only in kernels whose one way to order CTAs is ``grid_sync`` (fences alone order nothing across CTAs):
elsewhere a protocol may order the accesses. Per byte of each global argument the kernel touches (up to
:data:`MAX_TRACKED` bytes; larger ones are noted and not checked): the last CTA that stored to it, the first that
read it in the current epoch and the latest other one, and the grid barriers each had passed.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.cta_overlaps import ORDERING_NAMES, ORDERING_PREFIXES

#: global arguments larger than this are not tracked (34 bytes of state per byte; the result's notes say so)
MAX_TRACKED = 4 << 20

#: ops that order nothing between CTAs on their own: a fence orders one thread's accesses, a grid barrier is the
#: epoch this checker counts
_NOT_ORDERING = ("tirx.cuda.grid_sync", "tirx.cuda.thread_fence", "tirx.ptx.membar", "tirx.ptx.fence")
_SEVERAL = -2  # several CTAs stored the same bytes with the same value: a read gets that value in any order
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: per unit: the last storing CTA (serial; -1 none, -2 several with one value), its epoch and ``tid << 20 | line``;
#: the epoch's first reading CTA, its epoch and code, whether another CTA read it too, and the latest such
_ARRAYS = (
    ("w_cta", np.int32, -1),
    ("w_epoch", np.int32, 0),
    ("w_code", np.int32, 0),
    ("r_cta", np.int32, -1),
    ("r_epoch", np.int32, 0),
    ("r_code", np.int32, 0),
    ("r_several", bool, False),
    ("r2_cta", np.int32, -1),
    ("r2_code", np.int32, 0),
)


def applies(names) -> bool:
    """Whether a kernel calling the ops ``names`` is checked: none of them but grid_sync and fences orders CTAs."""
    for n in names:
        if n.startswith(_NOT_ORDERING):
            continue
        if n.startswith(ORDERING_PREFIXES) or n in ORDERING_NAMES:
            return False
        if n.startswith("tirx.ptx.red") and not n.startswith("tirx.ptx.redux"):
            return False
    return True


class CtaReads:
    """Per global argument the kernel stores to, per unit (its first access's element size; bytes once a narrower or
    unaligned access comes): :data:`_ARRAYS`. ``report(detail)`` gets each conflicting pair (once per pair of
    lines)."""

    def __init__(self, report, notes):
        self.report = report
        self.notes = notes
        self.state: dict = {}  # Region -> dict of arrays (None: too large)
        self.ctas: dict = {}  # CTA serial -> (x, y, z)
        self._seen: set = set()
        self.stored = None  # the regions the kernel's plain stores reach (None: any); loads of others need no record

    def tracks(self, region) -> bool:
        """Whether accesses of ``region`` are recorded: a global argument the kernel stores to, small enough."""
        if region.kind != "global" or (self.stored is not None and region not in self.stored):
            return False
        if region not in self.state and region.nbytes > MAX_TRACKED:
            self.state[region] = None
            self.notes.append(
                f"{region.name} ({region.nbytes / 2**20:.1f} MiB) is not checked for one CTA reading bytes another CTA "
                f"stores without a grid barrier between (arguments up to {MAX_TRACKED >> 20} MiB are)"
            )
        return self.state.get(region, True) is not None

    def _state(self, region, isz: int) -> dict:
        st = self.state.get(region)
        if st is None:
            unit = isz if isz in _UINT and region.nbytes % isz == 0 else 1
            n = region.nbytes // unit
            st = self.state[region] = {"unit": unit, **{k: np.full(n, fill, dt) for k, dt, fill in _ARRAYS}}
        return st

    def access(self, g, region, starts, tids, isz: int, write: bool, line, new=None, uniform=False) -> None:
        """Elements of ``isz`` bytes at byte offsets ``starts`` of ``region`` read or (``write``) about to be stored
        with ``new`` (their values, one per element) by batch-wide threads ``tids`` of ``g``'s CTA (or lockstep
        batch); ``uniform``: every lane stores to one address."""
        starts = np.asarray(starts, np.int64)
        if starts.size == 0:
            return
        st = self._state(region, isz)
        u = st["unit"]
        tids = np.asarray(tids, np.int64)
        if isz != u or np.any(starts % u):  # a narrower or unaligned access: per byte from here on
            if u != 1:
                for k, _, _ in _ARRAYS:
                    st[k] = np.repeat(st[k], u)
                st["unit"] = u = 1
            starts, tids = (starts[:, None] + np.arange(isz)).ravel(), np.repeat(tids, isz)
            if new is not None:
                new = np.ascontiguousarray(new).view(np.uint8)
        elif new is not None:
            new = np.ascontiguousarray(new).view(_UINT[u])
        b = starts // u
        keep = (b >= 0) & (b < st["w_cta"].size)
        if not keep.all():
            b, tids = b[keep], tids[keep]
            new = None if new is None else new[keep]
        T = g.cta.nthreads
        cta = (g.cta.serial + tids // T).astype(np.int32)
        code = ((tids % T).astype(np.int32) << 20) | np.int32(max(int(line or 0), 0) & ((1 << 20) - 1))
        epoch = np.int32(g.slots.get("grid_sync", 0))
        if write:
            self._write(st, region, u, b, cta, code, epoch, new, uniform)
            return
        wc, we = st["w_cta"][b], st["w_epoch"][b]
        bad = (wc >= 0) & (we == epoch) & (wc != cta)
        if bad.any():
            self._emit(region, u, b, bad, st["w_code"], st["w_cta"], "write", "read", code, cta)
        rc, re = st["r_cta"][b], st["r_epoch"][b]
        fresh = (rc < 0) | (re != epoch)
        fb = b[fresh]  # the epoch's first reader of these units
        st["r_cta"][fb], st["r_epoch"][fb], st["r_code"][fb], st["r_several"][fb] = cta[fresh], epoch, code[fresh], 0
        more = ~fresh & (rc != cta)  # another CTA read them in this epoch
        mb = b[more]
        st["r_several"][mb], st["r2_cta"][mb], st["r2_code"][mb] = True, cta[more], code[more]

    def _write(self, st, region, u, b, cta, code, epoch, new, uniform) -> None:
        rc, re = st["r_cta"][b], st["r_epoch"][b]
        now = (rc >= 0) & (re == epoch)
        first = now & (rc != cta)
        if first.any():
            self._emit(region, u, b, first, st["r_code"], st["r_cta"], "read", "write", code, cta)
        second = now & (rc == cta) & st["r_several"][b]  # its own read first, another CTA's after it
        if second.any():
            self._emit(region, u, b, second, st["r2_code"], st["r2_cta"], "read", "write", code, cta)
        same = region.view(np.dtype(_UINT[u]))[b] == new if new is not None else np.zeros(b.size, bool)
        wc = st["w_cta"][b]
        other = (wc != cta) & (wc != -1) & (st["w_epoch"][b] == epoch)
        # a store that changes nothing is no event, unless another CTA's store of the same value makes it one
        upd = ~same | other
        bb = b[upd]
        st["w_cta"][bb] = np.where(same[upd] & other[upd], _SEVERAL, cta[upd])
        st["w_epoch"][bb] = epoch
        st["w_code"][bb] = code[upd]
        if uniform and new is not None and b.size > 1 and (cta != cta[0]).any() and (new == new[0]).all():
            st["w_cta"][np.unique(b)] = _SEVERAL  # CTAs of one lockstep batch storing one value to one address

    def _emit(self, region, unit, b, bad, codes, ctas, first, second, code, cta) -> None:
        i = int(np.argmax(bad))
        fc = int(codes[b[i]])
        key = (region.name, fc & 0xFFFFF, int(code[i]) & 0xFFFFF, first)
        if key in self._seen:
            return
        self._seen.add(key)
        self.report(
            {
                "first": (first, fc & 0xFFFFF, fc >> 20, self.ctas.get(int(ctas[b[i]]))),
                "second": (second, int(code[i]) & 0xFFFFF, int(code[i]) >> 20, self.ctas.get(int(cta[i]))),
                "addr": int(b[i]) * unit,
                "region": region.name,
                "count": int(bad.sum()),
            }
        )
