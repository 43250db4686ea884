"""TMA (cp.async.bulk.tensor) through the tensor map the host encoded (cuTensorMapEncodeTiled):
box, global dims and strides, out-of-bounds fill and swizzle. Loads (global -> shared) land at
once and signal their mbarrier with complete_tx(bytes); stores (shared -> global) land at once.
A multicast load (``.multicast::cluster``, a 16-bit CTA mask) lands at the same shared offset in
every CTA of the mask and signals the mbarrier at the same offset in each; in another CTA its
write is checked for races as that CTA's *agent* for the issuer (txlab/emulator/races.py). With
``.cta_group::2`` the complete_tx goes to the mbarrier of the CTA pair's even (leader) CTA. A ``tile::gather4``
load (Blackwell; a 2-d map) copies ``boxDim[0]`` elements of each of its four rows into four consecutive box rows.
Not emulated (NotEmulatedError at the line): im2col and scatter modes."""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.sync as sync
from txlab.emulator.ops import HANDLERS, _str, _uniform_addr
from txlab.emulator.result import cta_finding
from txlab.errors import NotEmulatedError

_SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
#: the bytes a box row may span under each swizzle mode the driver takes (4-6: the 128-byte atom modes of CUDA 12.8)
_SWIZZLE_SPAN = {**_SWIZZLE_BYTES, 4: 128, 5: 128, 6: 128}


def swizzle_offsets(offsets: np.ndarray, mode: int) -> np.ndarray:
    """Byte offsets (relative to a 1024-byte aligned shared base) after the TMA swizzle:
    16-byte chunk bits [4:7) are XORed with bits [7:10) (128B), [7:9) (64B) or bit 7 (32B)."""
    if mode == 0:
        return offsets
    nbits = {1: 1, 2: 2, 3: 3}[mode]
    mask = (1 << nbits) - 1
    chunk = (offsets >> 4) & mask
    row = (offsets >> 7) & mask
    return (offsets & ~(mask << 4)) | ((chunk ^ row) << 4)


def encode_problems(tmap: dict) -> list[str]:
    """Why ``cuTensorMapEncodeTiled`` would refuse the tensor map ``tmap`` (the host binder's record of its
    arguments), as the CUDA driver API documents its requirements; empty when it would encode it."""
    out = []
    rank, dims, strides, box = tmap["rank"], tmap["dims"], tmap["strides"], tmap["box"]
    elem, inter, swz = tmap["elem_strides"], tmap["interleave"], tmap["swizzle"]
    try:
        size = M.np_dtype(tmap["dtype"]).itemsize
    except (TypeError, ValueError, KeyError):
        return [f"data type {tmap['dtype']!r} is not one a tensor map holds"]
    if not 1 <= rank <= 5:
        return [f"rank {rank}: a tiled tensor map has 1 to 5 dimensions"]
    if inter not in (0, 1, 2):
        out.append(f"interleave {inter}: 0 (none), 1 (16 B) or 2 (32 B)")
    elif inter and rank < 3:
        out.append(f"interleave {inter} on a rank-{rank} map: interleaved layouts need rank 3 or more")
    if swz not in _SWIZZLE_SPAN:
        out.append(f"swizzle {swz}: 0 (none), 1 (32 B), 2 (64 B), 3 (128 B) or 4-6 (the 128 B atom modes)")
    elif inter == 2 and swz != 1:
        out.append("interleave 2 (32 B) requires swizzle 1 (32 B)")
    if tmap["l2"] not in (0, 1, 2, 3):
        out.append(f"L2 promotion {tmap['l2']}: 0 (none), 1 (64 B), 2 (128 B) or 3 (256 B)")
    floating = str(tmap["dtype"]).startswith(("float", "bfloat"))
    if tmap["oob_fill"] not in (0, 1):
        out.append(f"out-of-bounds fill {tmap['oob_fill']}: 0 (zeros) or 1 (NaN)")
    elif tmap["oob_fill"] == 1 and not floating:
        out.append(f"out-of-bounds fill 1 (NaN) needs a floating-point type, not {tmap['dtype']}")
    force = tmap.get("force_dtype", -1)
    if force not in (-1, None) and force != 11:
        out.append(f"forced descriptor type {force}: only 11 (TFLOAT32) can be forced")
    elif force == 11 and tmap["dtype"] != "float32":
        out.append(f"forced descriptor type 11 (TFLOAT32) needs a float32 tensor, not {tmap['dtype']}")
    align = 32 if inter == 2 else 16
    if tmap["base"] % align:
        out.append(f"global address {tmap['base']:#x} is not {align}-byte aligned")
    for i, d in enumerate(dims):
        if not 0 < d <= 2**32:
            out.append(f"globalDim[{i}] = {d}: each dimension is 1 to 2**32")
    for i, st in enumerate(strides):
        if st % align or not 0 < st < 2**40:
            out.append(f"globalStrides[{i}] = {st} bytes: a positive multiple of {align}, under 2**40")
    for i, b in enumerate(box):
        if not 0 < b <= 256:
            out.append(f"boxDim[{i}] = {b}: each box dimension is 1 to 256")
    for i, e in enumerate(elem):
        if not 0 < e <= 8:
            out.append(f"elementStrides[{i}] = {e}: 1 to 8")
    if elem and 0 < elem[0] <= 8 and elem[0] != 1:
        out.append(f"elementStrides[0] = {elem[0]}: must be 1 (tiled TMA has no innermost element stride)")
    if box and 0 < box[0] <= 256 and inter == 0:
        row = box[0] * size
        if row % 16:
            out.append(
                f"boxDim[0] = {box[0]} x {size} bytes = {row} bytes: the box's inner dimension must be a "
                "multiple of 16 bytes"
            )
        span = _SWIZZLE_SPAN.get(swz, 0)
        if span and row > span:
            out.append(
                f"boxDim[0] = {box[0]} x {size} bytes = {row} bytes is wider than the {span}-byte swizzle "
                "span: use a wider swizzle or a narrower box"
            )
    return out


def tile_copy(cta, tmap: dict, smem_off: int, coords: list, line, *, store=False, reader=None, rows=None):
    """Copy one box between global memory and shared offset ``smem_off``; returns bytes moved. A load
    marks the box's shared bytes written in ``cta``'s race checker (also a multicast's, which lockstep
    does not race-check); a store's in-bounds source bytes are checked as read by thread ``reader``
    (its out-of-bounds rows and columns are clipped, so what they hold is never used). ``rows``: a
    ``tile::gather4`` load of a 2-d map: the box is ``boxDim[0]`` elements of each of these rows (``coords[0]``
    the column), one after another in shared memory."""
    dt = M.np_dtype(tmap["dtype"])
    rank = tmap["rank"]
    dims, strides, box = tmap["dims"], tmap["strides"], tmap["box"]
    if rows is not None:  # gather4: a (boxDim[0], 4) box whose row coordinates are the four given
        box = [box[0], len(rows)]
    if any(e != 1 for e in tmap["elem_strides"]) or tmap["interleave"]:
        raise NotEmulatedError("TMA with element strides or interleave", lineno=line)
    if tmap["swizzle"] not in _SWIZZLE_BYTES:
        raise NotEmulatedError(f"TMA swizzle mode {tmap['swizzle']} (a 128-byte atom mode)", lineno=line)
    region = cta.space.find(tmap["base"])
    # element coordinates of the box, innermost first
    grids = np.meshgrid(*[np.arange(b) for b in reversed(box)], indexing="ij")  # outermost first
    idx = [g.ravel() for g in reversed(grids)]  # innermost first
    gcoord = [idx[d] + int(coords[d]) for d in range(rank)]
    if rows is not None:
        gcoord[1] = np.asarray([int(r) for r in rows], np.int64)[idx[1]]
    inb = np.ones(idx[0].size, bool)
    byte = np.zeros(idx[0].size, np.int64)
    for d in range(rank):
        inb &= (gcoord[d] >= 0) & (gcoord[d] < dims[d])
        stride = dt.itemsize if d == 0 else strides[d - 1]
        byte += gcoord[d].astype(np.int64) * stride
    nbytes = idx[0].size * dt.itemsize
    sm_bytes = np.arange(idx[0].size, dtype=np.int64) * dt.itemsize
    sm_bytes = swizzle_offsets(sm_bytes + (smem_off % 1024), tmap["swizzle"]) - (smem_off % 1024) + smem_off
    shared = cta.shared.view(dt)
    if np.any(sm_bytes % dt.itemsize) or sm_bytes.max() + dt.itemsize > cta.shared.nbytes or sm_bytes.min() < 0:
        cta_finding(
            cta,
            "out_of_bounds",
            f"TMA box of {nbytes} bytes at shared offset {smem_off} does not fit "
            f"the CTA's {cta.shared.nbytes} bytes of shared memory",
            line,
            "tma",
        )
        return nbytes
    gview = region.view(dt)
    base_el = (tmap["base"] - region.base) // dt.itemsize
    gel = base_el + byte // dt.itemsize
    past = inb & ((gel < 0) | (gel >= gview.size))
    if past.any():  # inside the map's dims, outside the buffer it was encoded over: an illegal address on a GPU
        cta_finding(
            cta,
            "out_of_bounds",
            f"TMA {'store' if store else 'load'} of the box at {list(coords)}: {int(past.sum())} of its elements are "
            f"inside the tensor map's dims {list(dims)} but past the {gview.size * dt.itemsize} bytes of the buffer "
            "it was encoded over (the map is larger than its buffer)",
            line,
            "tma-global",
        )
        inb &= ~past
    if store:
        region.check_write(line)
        src = shared[sm_bytes // dt.itemsize]
        gview[gel[inb]] = src[inb]
        if cta.races is not None and reader is not None:
            cta.races.check_written(_bytes(sm_bytes[inb], dt), reader, line, "TMA store source")
    else:
        vals = np.zeros(idx[0].size, dt)
        if tmap["oob_fill"] == 1 and np.issubdtype(dt, np.floating):
            vals[:] = np.nan
        vals[inb] = gview[gel[inb]]
        shared[sm_bytes // dt.itemsize] = vals
        if cta.races is not None:
            cta.races.mark(_bytes(sm_bytes, dt))
        # what swizzle wrote these bytes: a tcgen05 descriptor that disagrees is reported (tcgen05.py)
        cta.__dict__.setdefault("tma_writes", {})[int(smem_off)] = (nbytes, int(tmap["swizzle"]), line)
    return nbytes


def _bytes(starts: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Every byte of the elements of ``dt`` at byte offsets ``starts``."""
    return (starts[:, None] + np.arange(dt.itemsize)).ravel()


def _tma(comp, call, *, store: bool):
    """cp.async.bulk.tensor in either direction. Loads (global -> shared) land at once and signal
    their mbarrier with complete_tx(bytes); stores (shared::cta -> global) write the box at once,
    clipped at the tensor's bounds as the hardware does, so the bulk group's wait_group /
    wait_group.read have nothing left to wait for."""
    args = call.args
    strs = [i for i, a in enumerate(args) if type(a).__name__ == "StringImm"]
    first_str = strs[0] if strs else len(args)
    mode = _str(args[first_str + 3]) if first_str + 3 < len(args) else ""
    rank = int(mode[0]) if mode and mode[0].isdigit() else None
    if rank is None:
        return comp.not_emulated(f"{call.op.name} ({mode})")
    extra = [_str(args[i]) for i in strs]
    if any("im2col" in s or "scatter" in s for s in extra):
        return comp.not_emulated(f"{call.op.name} with {', '.join(s for s in extra if s)}")
    # tile::gather4 (a load of a 2-d map): five coordinates, the column and four rows
    gather = "tile::gather4" in extra
    if gather and (store or rank != 2):
        return comp.not_emulated(f"{call.op.name} with tile::gather4 ({mode})", "gather4 loads of 2-d maps only")
    ncoord = 5 if gather else rank
    # loads: (smem dst, tmap, coords..., mbar?); stores: (tmap, coords..., smem src)
    smem_e, tmap_e = (
        (comp.expr(args[1 + ncoord]), comp.expr(args[0])) if store else (comp.expr(args[0]), comp.expr(args[1]))
    )
    first = 1 if store else 2
    coord_fns = [comp.expr(a) for a in args[first : first + ncoord]]
    bar = comp.expr(args[2 + ncoord]) if not store and 2 + ncoord < first_str else None
    multicast = not store and "multicast::cluster" in extra
    if multicast and not (bar is not None and 3 + ncoord < first_str):
        return comp.not_emulated(f"{call.op.name}: a multicast without its mbarrier and CTA mask")
    mask_e = comp.expr(args[3 + ncoord]) if multicast else None
    pair = "cta_group::2" in extra  # complete_tx goes to the CTA pair's even (leader) CTA's mbarrier
    line = comp.line
    what = "TMA source" if store else "TMA destination"

    def f(g):
        tmap = tmap_e(g)
        if not isinstance(tmap, dict):
            raise NotEmulatedError("TMA through a tensor map the host did not encode", lineno=line)
        off = _uniform_addr(g, smem_e(g), line, what)
        coords = [_uniform_addr(g, c(g), line, "TMA coordinate") for c in coord_fns]
        targets = (
            _targets(g, _uniform_addr(g, mask_e(g), line, "TMA multicast CTA mask"), line) if multicast else [g.cta]
        )
        n_issue = g.L if g.mask is None else int(np.count_nonzero(g.mask))
        for _ in range(n_issue):
            for cta in targets:
                reader = int(g.active_tids()[0]) if store else None
                if gather:
                    nbytes = tile_copy(cta, tmap, off, coords[:2], line, rows=coords[1:])
                else:
                    nbytes = tile_copy(cta, tmap, off, coords, line, store=store, reader=reader)
                if cta is g.cta:
                    if cta.races is not None:  # a load writes shared memory, a store reads it
                        b = np.arange(off, off + nbytes)
                        # (tile_copy checks which of a store's source bytes were written: its in-bounds ones)
                        # (a store's read by the issuing lane is checked against the other lanes of its warp: the
                        # staging written by all lanes, then TMA-stored by one, needs __syncwarp between)
                        cta.races.access(
                            b, np.full(b.size, g.active_tids()[0]), not store, line, unwritten=False, lanes=store
                        )
                    if bar is not None:
                        owner, mb = _barrier(g, cta, bar, pair, multicast, line)
                        if owner is cta:
                            sync.mb_tx(cta, mb, -nbytes, line, g=g)
                        else:
                            sync.mb_tx_from_agent(owner, mb, None, -nbytes, line, g.cta)
                    continue
                row = _remote_write(g, cta, off, nbytes, line)
                owner, mb = _barrier(g, cta, bar, pair, multicast, line)
                sync.mb_tx_from_agent(owner, mb, row if owner is cta else None, -nbytes, line, g.cta)
        return np.int32(0)

    return f


def _barrier(g, cta, bar, pair, multicast, line):
    """(owning CTA, MBarrier) a load into ``cta`` completes on: the operand's offset in ``cta`` (a
    multicast signals each destination's own), or the CTA a shared::cluster address names; with
    ``.cta_group::2`` the even CTA of that CTA's pair."""
    a = _uniform_addr(g, bar(g), line, "TMA mbarrier")
    rank, off = M.split_cluster_address(a)
    owner = cta
    if rank is not None and not multicast and cta.cluster is not None and rank < len(cta.cluster.ctas):
        owner = cta.cluster.ctas[rank]
    if pair:
        owner = _pair_leader(owner)
    return owner, sync.mbarrier(owner, off, line)


def _pair_leader(cta):
    """The even CTA of ``cta``'s pair (``.cta_group::2``): the hardware reaches its mbarrier through
    the address ``sm100_2sm_leader_smem_addr`` forms (bit 24, the pair bit, cleared); the
    emulator's shared addresses carry no rank bits, so the modifier routes it."""
    cl = cta.cluster
    return cta if cl is None else cl.ctas[cta.rank & ~1]


def _targets(g, mask, line) -> list:
    """The CTAs of a multicast's mask (bit r: cluster rank r)."""
    ctas = g.cta.cluster.ctas if g.cta.cluster is not None else [g.cta]
    ranks = [r for r in range(16) if int(mask) >> r & 1]
    if not ranks or ranks[-1] >= len(ctas):
        cta_finding(
            g.cta,
            "out_of_bounds",
            f"TMA multicast CTA mask {int(mask):#06x} names cluster rank(s) "
            f"{[r for r in ranks if r >= len(ctas)] or 'none'} of a cluster of {len(ctas)} CTA(s)",
            line,
            "multicast",
            threads=g.active_tids()[:1],
        )
    return [ctas[r] for r in ranks if r < len(ctas)]


def _remote_write(g, cta, off, nbytes, line):
    """Race-check a multicast's write into another CTA ``cta``: as that CTA's agent row for the
    issuing CTA, ordered after what the issuing warp knew of ``cta``'s warps. Returns the row
    (None without a race checker)."""
    mine, theirs = g.cta.races, cta.races
    row = theirs.agent(g.cta.rank, f"TMA multicast (from CTA {g.cta.index})") if theirs is not None else None
    if row is None:
        return None
    if mine is not None:  # what the issuing warp (a group is one warp where mbarriers are waited on) knew
        theirs.acquire(row, mine.known_of(g.first_warp).get(cta.rank))
    theirs.access_as(row, np.arange(off, off + nbytes), int(g.active_tids()[0]), True, line)
    return row


HANDLERS["tirx.ptx.cp_async_bulk_tensor_g2s_cluster"] = lambda comp, call: _tma(comp, call, store=False)
HANDLERS["tirx.ptx.cp_async_bulk_tensor_g2s"] = lambda comp, call: _tma(comp, call, store=False)
HANDLERS["tirx.ptx.cp_async_bulk_tensor_s2g"] = lambda comp, call: _tma(comp, call, store=True)
