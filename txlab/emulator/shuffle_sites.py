"""``__shfl_sync`` reached at two places by the two branches of a diverged warp.

Since Volta, ``shfl.sync`` waits until every non-exited lane of its member mask has executed *a* ``shfl.sync`` of the
same mask, not necessarily the same instruction: in ``if lane < 16: y = __shfl_sync(FULL, a, lane + 1) else: y =
__shfl_sync(FULL, b, lane + 1)`` lane 15 gets lane 16's ``b`` (an H100 gave exactly that, with synccheck and racecheck
clean: docs/gpu-runs.md, round 29). The interpreter runs a divergent ``if``'s branches one after the other, so the
first branch's shuffle runs while the lanes it reads have not reached theirs.

Here such a shuffle (member lanes of a warp not executing it) leaves a pending *site* in that warp: its line, mask and
lanes, the member lanes it waits for, and the operand values its lanes gave. A shuffle of the same mask at another
line by the missing lanes *meets* it: its reads of the first site's lanes get the values those lanes gave there, as
on a GPU, and a note says that the first site's lanes read the other lanes' operand as the first site computes it (the
emulator cannot give them the second site's: it has not run yet), so their values may differ from a GPU's. A site
still pending when its missing lanes are active again (the ``if`` reconverged) or the run ends was met by no shuffle:
its reads of lanes that never executed one are the ``divergent_barrier`` finding they always were (undefined values
on a GPU). A branch may leave several sites pending (two shuffles in a row): they wait in order, and the other
branch's shuffles meet them in the same order.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.warp_sync import lane_list

_MET = (
    "{name} at lines {a} and {b}: lanes {la} and lanes {lb} of warp {warp} of CTA {cta} met at {sites} in two "
    "branches (sm_70 and later pair the member lanes at whichever {insn} each executes). The emulator runs one "
    "branch before the other: lanes {lb} (line {b}) get what lanes {la} gave at line {a}, as on a GPU, but lanes {la} "
    "(line {a}) read the other lanes' operand as line {a} computes it, where a GPU gives them line {b}'s: their values "
    "may differ from a GPU's"
)


class Sites:
    """One layer of a group's pending shuffle sites, at most one per warp (index within the group): which :meth:`open`
    call made it (-1: none; that call's operand values and finding), its line, member mask, the lanes that executed it
    and the lanes it waits for (32-bit masks)."""

    def __init__(self, nw: int):
        self.line = np.full(nw, -1, np.int64)
        self.mask = np.zeros(nw, np.uint64)
        self.here = np.zeros(nw, np.uint64)
        self.missing = np.zeros(nw, np.uint64)
        self.event = np.full(nw, -1, np.int64)
        self.events: dict = {}  # id -> (operand values (nw, 32, ...), report(warps) emitting the finding)
        self._next = 0

    def open(self, ws, line: int, mask, here, missing, values, report, name="__shfl_sync") -> None:
        """Warps ``ws`` (without a pending site) wait at a shuffle (or the collective ``name``) at ``line``."""
        e = self._next
        self._next += 1
        self.events[e] = (values, report, name)
        self.line[ws], self.mask[ws], self.here[ws], self.missing[ws], self.event[ws] = line, mask, here, missing, e

    def close(self, ws) -> None:
        self.missing[ws] = 0
        self.event[ws] = -1
        live = set(self.event[self.event >= 0].tolist())
        for e in [e for e in self.events if e not in live]:
            del self.events[e]


def open_sites(g, ws, line: int, mask, here, missing, values, report, name="__shfl_sync") -> None:
    """Warps ``ws`` wait at a shuffle at ``line`` (after any sites they already have pending). Another warp collective
    (a vote, a ``__reduce_*_sync``: ``name``) waits the same way, its kind in ``mask``'s upper 32 bits, so that only
    one of its kind and member mask meets it (txlab.emulator.ops.member_meet)."""
    if g.shfl_sites is None:
        g.shfl_sites = []
    ws = np.asarray(ws)
    st = next((st for st in g.shfl_sites if (st.event[ws] < 0).all()), None)  # the first layer where all are free
    if st is None:
        st = Sites(mask.size)
        g.shfl_sites.append(st)
    st.open(ws, line, mask[ws], here[ws], missing[ws], values, report, name)


def meet(g, line: int, mask, here, V) -> np.ndarray:
    """Per warp (``mask``, ``here``: (nw,) member masks and executing lanes of a shuffle at ``line``), the lanes of the
    pending site it meets (0 where none): a site of the same mask at another line that waits for some of ``here``.
    ``V`` (nw, 32, ...) gets those lanes' operand values from their site; a site no longer missing any lane is closed
    and noted."""
    got = np.zeros(here.shape, np.uint64)
    for st in g.shfl_sites or ():  # each warp meets its earliest matching site
        if (st.event < 0).all():
            continue
        hit = (st.event >= 0) & (st.line != line) & (st.mask == mask) & ((st.missing & here) != 0) & (got == 0)
        if hit.any():
            got |= np.where(hit, st.here, np.uint64(0))
            _meet(g, st, hit, line, here, V)
    return got


def _meet(g, st, hit, line, here, V) -> None:
    lanes = ((np.where(hit, st.here, np.uint64(0))[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
    for e in np.unique(st.event[hit]).tolist():
        values = st.events[e][0]
        sel = lanes & (st.event == e)[:, None]
        V[sel] = values[sel]
    st.missing[hit] &= ~here[hit]
    done = np.nonzero(hit & (st.missing == 0))[0]
    if done.size:
        w = int(done[0])
        lane0 = int(np.nonzero(g.warp_of_lane - g.warp_of_lane[0] == w)[0][0])
        name = st.events[int(st.event[w])][2]
        shfl = name == "__shfl_sync"
        note = _MET.format(
            name=name,
            sites="shuffles" if shfl else f"{name} calls",
            insn="shfl.sync" if shfl else f"{name} of the same mask",
            a=int(st.line[w]),
            b=line,
            la=lane_list(k for k in range(32) if int(st.here[w]) >> k & 1),
            lb=lane_list(k for k in range(32) if int(here[w]) >> k & 1),
            warp=int(g.tid[lane0]) // 32,
            cta=g.cta_of(lane0),
        )
        if note not in g.cta.program.notes:
            g.cta.program.notes.append(note)
        st.close(done)


def reconverged(g, final: bool = False) -> None:
    """The group's active lanes widened (an ``if`` ended), or (``final``) its run ended: a site whose missing lanes are
    active again, or every site at the end, was met by no shuffle: report its reads."""
    layers = g.shfl_sites
    if not layers or all((st.event < 0).all() for st in layers):
        return
    now = None
    if not final:
        act = g.active()
        lw = g.warp_of_lane - g.warp_of_lane[0]
        bits = np.left_shift(np.uint64(1), (g.gtid % 32).astype(np.uint64))
        now = np.zeros(layers[0].line.size, np.uint64)
        np.bitwise_or.at(now, lw[act], bits[act])
    for st in layers:
        ws = np.nonzero(st.event >= 0)[0]
        if now is not None:
            ws = ws[(st.missing[ws] & ~now[ws]) == 0]
        if ws.size == 0:
            continue
        for e in np.unique(st.event[ws]).tolist():
            st.events[e][1](ws[st.event[ws] == e])
        st.close(ws)
