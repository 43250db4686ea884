"""Non-tensor bulk copies (``cp.async.bulk``): global -> shared (``g2s_cta``, ``g2s_cluster``), shared -> a peer
CTA's shared memory (``s2c``, DSMEM: what ``Tx.copy_async(..., dispatch="dsmem")`` lowers to) and shared -> global
(``s2g``). Each copies ``size`` contiguous bytes, lands at once and, with ``mbarrier::complete_tx::bytes``, completes
``size`` bytes of transaction on the mbarrier named (in the destination CTA: a ``shared::cluster`` address names a
peer's). The PTX ISA's rules are checked as the hardware enforces them: ``size`` a multiple of 16 and both addresses
16-byte aligned (a ``misaligned`` finding), the bytes inside their buffers (``out_of_bounds``). The multicast and
byte-mask forms are not emulated.

``st.bulk`` (sm_100) sets ``size`` bytes of the executing CTA's shared memory to ``initval`` (PTX allows only 0): a
plain store of each byte by the issuing thread, as the race checker sees it; ``size`` must be a multiple of 8 and the
address 8-byte aligned (``misaligned``), the bytes inside the CTA's shared memory (``out_of_bounds``).
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.sync as sync
from txlab.emulator.ops import HANDLERS
from txlab.emulator.ptx_memory import _guard, decode
from txlab.emulator.result import cta_finding
from txlab.emulator.tma import _remote_write
from txlab.errors import NotEmulatedError


def _shared(g, addr, line, what):
    """(CTA, offset) a shared address names: the executing CTA's own window, or a peer's after ``mapa``."""
    rank, off = M.split_cluster_address(addr)
    if rank is None:
        return g.cta, off
    ctas = g.cta.cluster.ctas if g.cta.cluster is not None else [g.cta]
    if rank >= len(ctas):
        cta_finding(
            g.cta, "out_of_bounds", f"{what}: cluster rank {rank} of a cluster of {len(ctas)} CTA(s)", line, "bulk"
        )
        return None, off
    return ctas[rank], off


def _fits(g, cta, off, n, line, what) -> bool:
    if off < 0 or off + n > cta.shared.nbytes:
        cta_finding(
            g.cta,
            "out_of_bounds",
            f"{what}: {n} bytes at shared offset {off} are past CTA {cta.index}'s {cta.shared.nbytes} bytes of shared "
            "memory",
            line,
            "bulk",
        )
        return False
    return True


def _global(g, addr, n, line, what):
    """(region, byte offset) of ``n`` global bytes at ``addr``, or None (a finding says why)."""
    region = g.cta.space.find(int(addr))
    if region is None or region.kind != "global" or int(addr) - region.base + n > region.nbytes:
        cta_finding(
            g.cta,
            "out_of_bounds",
            f"{what}: {n} bytes at global address {int(addr):#x} are not inside one argument"
            + (f" ({region.name}: {region.nbytes} bytes)" if region is not None else ""),
            line,
            "bulk",
        )
        return None
    return region, int(addr) - region.base


def _bulk(kind: str):
    """A handler for ``cp.async.bulk`` ``kind``: ``g2s`` (global -> shared, own or a peer's), ``s2c`` (own shared ->
    a peer's) or ``s2g`` (own shared -> global)."""

    def build(comp, call):
        ptx = decode(call)
        if ptx is None:
            return comp.not_emulated(call.op.name)
        if ptx.mods.get("multicast") or ptx.mods.get("cp_mask"):
            return comp.not_emulated(call.op.name, "the multicast and byte-mask bulk copies")
        fns = {k: comp.expr(v[0]) for k, v in ptx.ops.items() if v and v[0] is not None}
        if not {"dst_mem", "src_mem", "size"} <= set(fns):
            return comp.not_emulated(call.op.name, f"operands {sorted(fns)}")
        mbar = fns.get("mbar")
        line = comp.line

        def f(g):
            lanes = np.nonzero(g.active())[0]
            vals = {k: np.broadcast_to(np.asarray(fn(g)), (g.L,)) for k, fn in fns.items()}
            for lane in lanes:
                tid = int(g.tid[lane])
                dst, src, n = (int(vals[k][lane]) for k in ("dst_mem", "src_mem", "size"))
                what = f"cp.async.bulk ({kind})"
                if n % 16 or dst % 16 or src % 16:
                    cta_finding(
                        g.cta,
                        "misaligned",
                        f"{what}: size {n} bytes, destination {dst:#x}, source {src:#x}: the size must be a multiple "
                        "of 16 and both addresses 16-byte aligned",
                        line,
                        "bulk",
                    )
                    continue
                if kind == "s2g":
                    _to_global(g, dst, src, n, tid, line, what)
                    continue
                if kind == "g2s":
                    got = _global(g, src, n, line, what)
                    if got is None:
                        continue
                    data = got[0].data[got[1] : got[1] + n]
                else:  # s2c: from the executing CTA's own shared memory
                    if not _fits(g, g.cta, src, n, line, what + " source"):
                        continue
                    if g.cta.races is not None:
                        g.cta.races.check_written(np.arange(src, src + n), tid, line, "bulk copy source")
                    data = g.cta.shared.data[src : src + n]
                cta, off = _shared(g, dst, line, what + " destination")
                if cta is None or not _fits(g, cta, off, n, line, what + " destination"):
                    continue
                cta.shared.data[off : off + n] = data
                row = None
                if cta is g.cta:
                    if cta.races is not None:  # it lands at once, as a TMA load does: the issuing thread's write
                        cta.races.access(np.arange(off, off + n), np.full(n, tid), True, line, unwritten=False)
                else:
                    row = _remote_write(g, cta, off, n, line)
                if mbar is not None:
                    owner, mb = sync.mbarrier_at(g, int(vals["mbar"][lane]), line)
                    if owner is g.cta:
                        sync.mb_tx(owner, mb, -n, line, g=g)
                    else:
                        sync.mb_tx_from_agent(owner, mb, row, -n, line, g.cta)
            return np.int32(0)

        return _guard(comp, ptx, f)

    return build


def _to_global(g, dst, src, n, tid, line, what) -> None:
    if not _fits(g, g.cta, src, n, line, what + " source"):
        return
    got = _global(g, dst, n, line, what + " destination")
    if got is None:
        return
    region, off = got
    region.check_write(line)
    if g.cta.races is not None:
        g.cta.races.check_written(np.arange(src, src + n), tid, line, "bulk copy source")
    region.data[off : off + n] = g.cta.shared.data[src : src + n]


for _name, _kind in (
    ("cp_async_bulk_g2s_cta", "g2s"),
    ("cp_async_bulk_g2s_cluster", "g2s"),
    ("cp_async_bulk_s2c", "s2c"),
    ("cp_async_bulk_s2g", "s2g"),
):
    HANDLERS[f"tirx.ptx.{_name}"] = _bulk(_kind)


def _st_bulk(comp, call):
    ptx = decode(call)
    if ptx is None:
        return comp.not_emulated(call.op.name)
    addr, size = comp.expr(ptx.ops["addr"][0]), comp.expr(ptx.ops["size"][0])
    init = ptx.ops.get("initval") or [None]
    if init[0] is not None and str(init[0]) not in ("0", "T.int32(0)", "T.uint32(0)", "T.int64(0)", "T.uint64(0)"):
        return comp.not_emulated(call.op.name, "an initval other than 0 (PTX allows only 0)")
    line = comp.line

    def f(g):
        lanes = np.nonzero(g.active())[0]
        a_all = np.broadcast_to(np.asarray(addr(g)), (g.L,))
        n_all = np.broadcast_to(np.asarray(size(g)), (g.L,))
        for lane in lanes:
            tid, a, n = int(g.tid[lane]), int(a_all[lane]), int(n_all[lane])
            what = "st.bulk"
            if n % 8 or a % 8:
                cta_finding(
                    g.cta,
                    "misaligned",
                    f"{what}: size {n} bytes at shared address {a:#x}: the size must be a multiple of 8 and the "
                    "address 8-byte aligned",
                    line,
                    "bulk",
                )
                continue
            cta, off = _shared(g, a, line, what)
            if cta is None:
                continue
            if cta is not g.cta:
                raise NotEmulatedError("st.bulk to another CTA's shared memory (PTX: shared::cta only)", lineno=line)
            if not _fits(g, cta, off, n, line, what):
                continue
            if cta.races is not None:
                cta.races.access(np.arange(off, off + n), np.full(n, tid), True, line, name="st.bulk")
            cta.shared.data[off : off + n] = 0
        return np.int32(0)

    return _guard(comp, ptx, f)


HANDLERS["tirx.ptx.st_bulk"] = _st_bulk
