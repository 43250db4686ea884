"""Table-driven ``T.ptx`` integer, bit-field and warp-vote instructions: ``popc``, ``clz``, ``brev``,
``bfind``, ``bfe``, ``bfi``, ``prmt`` (every mode), ``shf`` (``.l``/``.r``, ``.clamp``/``.wrap``),
``vote.sync`` (``.all``/``.any``/``.uni``/``.ballot``), ``match.any``/``match.all``, ``redux.sync``
(integer), ``activemask``, ``shfl.sync`` (with and without its predicate) and ``elect.sync``.

Each is computed from the PTX ISA's definition of the instruction, bit for bit: bit positions and
lengths are taken modulo 256 (``b & 0xff``), a field past the most significant bit reads the sign
bit (``bfe.s``) or zero, ``shf.wrap`` keeps the amount's low five bits and ``.clamp`` stops at 32.
Operands are decoded with :func:`txlab.emulator.ptx_memory.decode`, so an instruction is read
exactly as TVM's codegen renders it; the destination is the buffer element the call names, written
with PTX's register rules (:func:`~txlab.emulator.ptx_memory.to_register`).

The warp instructions combine the lanes that execute them *and* are in the member mask, as
``__ballot_sync`` & co. do (:mod:`txlab.emulator.ops`).
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
from txlab.emulator.mathfns import _brev, _clz, _popc
from txlab.emulator.ops import (
    _REDUX,
    _full,
    _shfl_check,
    _VOTE,
    HANDLERS,
    _active_mask,
    _ballot_bits,
    _member_active,
    member_meet,
    _per_warp,
    _unwarp,
    _warps,
)
from txlab.emulator.ptx_memory import _dest_stores, _guard, decode, to_register
from txlab.errors import NotEmulatedError
from txlab.ir import semantics

_ONE = np.uint64(1)
_TYPES = {
    "b32": (32, False),
    "u32": (32, False),
    "s32": (32, True),
    "b64": (64, False),
    "u64": (64, False),
    "s64": (64, True),
    "pred": (32, False),
}


def _mask(width: int) -> np.uint64:
    return np.uint64((1 << width) - 1)


def _bits(v, width: int) -> np.ndarray:
    """The operand's ``width`` low bits as uint64 (a float register's bits; ints wrap)."""
    v = np.asarray(v)
    if v.dtype.kind == "f":
        v = v.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[v.dtype.itemsize])
    if v.dtype.kind == "b":
        v = v.astype(np.uint8)
    return v.astype(np.int64).astype(np.uint64) & _mask(width) if v.dtype != np.uint64 else v & _mask(width)


def _bit(a, k):
    return (a >> np.asarray(k).astype(np.uint64)) & _ONE


# ---- the instructions (uint64 arrays of the instruction's width in, the result's bits out) ---------
def _bfe(a, b, c, width, signed):
    """``bfe``: ``len = c & 0xff`` bits of ``a`` from ``pos = b & 0xff``; positions past the msb and
    bits past ``len`` take the sign bit ``a[min(pos + len - 1, msb)]`` (``.s``) or 0; ``len == 0``
    gives 0."""
    msb = width - 1
    pos, ln = b & np.uint64(0xFF), c & np.uint64(0xFF)
    sbit = _bit(a, np.minimum(pos + ln - _ONE, msb)) if signed else np.zeros_like(a)
    sbit = np.where(ln == 0, np.uint64(0), sbit)
    out = np.zeros(np.broadcast(a, pos, ln).shape, np.uint64)
    for i in range(width):
        take = (np.uint64(i) < ln) & (pos + np.uint64(i) <= msb)
        v = np.where(take, _bit(a, np.minimum(pos + np.uint64(i), msb)), sbit)
        out |= v.astype(np.uint64) << np.uint64(i)
    return out


def _bfi(a, b, c, d, width):
    """``bfi f, a, b, c, d``: ``b`` with ``len = d & 0xff`` low bits of ``a`` inserted at ``pos = c & 0xff``
    (bits that would land past the msb are dropped)."""
    msb = width - 1
    pos, ln = c & np.uint64(0xFF), d & np.uint64(0xFF)
    f = np.broadcast_to(b, np.broadcast(a, b, pos, ln).shape).copy()
    for i in range(width):
        put = (np.uint64(i) < ln) & (pos + np.uint64(i) <= msb)
        at = np.minimum(pos + np.uint64(i), msb).astype(np.uint64)
        new = (f & ~(_ONE << at)) | (_bit(a, i) << at)
        f = np.where(put, new, f)
    return f


#: prmt's modes: for selector c[1:0], the source byte of d.b0 .. d.b3 (PTX ISA, prmt's table)
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def _prmt(a, b, c, mode):
    """``prmt.b32{.mode} d, a, b, c``: four bytes picked from the eight of ``{b, a}`` (``a`` bytes 0-3).
    Without a mode each nibble ``c[4n+3:4n]`` picks d's byte n, its bit 3 replicating that byte's
    sign bit; with one, ``c & 3`` picks a row of the mode's table."""
    tmp = (b << np.uint64(32)) | a
    out = np.zeros(np.broadcast(a, b, c).shape, np.uint64)
    if mode:
        rows = np.asarray(_PRMT_MODES[mode], np.uint64)[(c & np.uint64(3)).astype(np.int64)]
    for n in range(4):
        if mode:
            sel = rows[..., n]
            byte = (tmp >> (sel * np.uint64(8))) & np.uint64(0xFF)
        else:
            sel = (c >> np.uint64(4 * n)) & np.uint64(0xF)
            byte = (tmp >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            byte = np.where(sel & np.uint64(8) != 0, (byte >> np.uint64(7)) * np.uint64(0xFF), byte)
        out |= byte << np.uint64(8 * n)
    return out


def _shf(a, b, c, left, clamp):
    """``shf.{l,r}.{clamp,wrap}.b32``: the 64-bit ``{b, a}`` shifted by ``min(c, 32)`` (clamp) or
    ``c & 31`` (wrap); ``.l`` keeps its high word, ``.r`` its low word."""
    u = np.minimum(c, np.uint64(32)) if clamp else c & np.uint64(31)
    tmp = (b << np.uint64(32)) | a
    if left:
        return ((tmp << u) >> np.uint64(32)) & _mask(32)
    return (tmp >> u) & _mask(32)


def _bfind(a, width, signed, shiftamt):
    """``bfind``: the position of the most significant 1 (``.u``) or, for a negative ``.s`` value,
    of the most significant 0; none: 0xffffffff. ``.shiftamt`` gives ``msb - position`` instead."""
    v = a
    if signed:
        neg = _bit(a, width - 1) == 1
        v = np.where(neg, ~a & _mask(width), a)
    pos = np.full(np.shape(v), -1, np.int64)
    for k in range(width):
        pos = np.where(_bit(v, k) == 1, k, pos)
    out = np.where(pos < 0, np.int64(0xFFFFFFFF), (width - 1 - pos) if shiftamt else pos)
    return out.astype(np.uint64)


# ---- handlers -----------------------------------------------------------------------------------
def _dest(comp, call, ptx, name):
    dests = ptx.ops.get(name) or [None]
    key = ("ptx.alu", call.__chandle__())
    stores = _dest_stores(comp, dests[:1], key)
    if not stores or stores[0] is None:
        return None, None, None
    reg_dt = M.np_dtype(comp.buffer_info(dests[0].source)["dtype"])
    return stores[0], reg_dt, key


def _alu(compute):
    """A handler: ``compute(ptx, g, vals) -> (result bits as uint64, result width, signed)`` from the
    decoded instruction and its input operands' values (in the entry's operand order)."""

    def build(comp, call):
        ptx = decode(call)
        if ptx is None:
            return comp.not_emulated(call.op.name)
        ptx.line, ptx.op = comp.line, call.op.name  # (a warp collective's check names them: ops.member_meet)
        out_name = "f" if "f" in ptx.ops else "d"
        store, reg_dt, key = _dest(comp, call, ptx, out_name)
        if store is None:
            return comp.not_emulated(call.op.name, "a destination that is not a buffer element")
        ins = [comp.expr(v[0]) for n, v in ptx.ops.items() if n != out_name]

        def f(g):
            bits, width, signed = compute(ptx, g, [fn(g) for fn in ins])
            bits = np.broadcast_to(np.asarray(bits, np.uint64), (g.L,))
            reg = bits.astype(np.uint32 if width == 32 else np.uint64)
            reg_src = reg.view(np.int32 if width == 32 else np.int64) if signed else reg
            g.slots[key] = [to_register(reg_src, reg_src.dtype, reg_dt, signed)]
            store(g)
            return np.int32(0)

        return _guard(comp, ptx, f)

    return build


def _type(ptx, default="b32"):
    return _TYPES[ptx.mods.get("type") or default]


def _unary(fn):
    def compute(ptx, g, vals):
        width, _ = _type(ptx)
        return fn(_bits(vals[0], width), width), 32, False

    return compute


HANDLERS["tirx.ptx.popc"] = _alu(_unary(lambda a, w: _popc(a, w).astype(np.uint64)))
HANDLERS["tirx.ptx.clz"] = _alu(_unary(lambda a, w: _clz(a, w).astype(np.uint64)))


def _brev_compute(ptx, g, vals):
    width, _ = _type(ptx)
    return _brev(_bits(vals[0], width), width), width, False


def _bfind_compute(ptx, g, vals):
    width, signed = _type(ptx)
    return _bfind(_bits(vals[0], width), width, signed, bool(ptx.mods.get("shiftamt"))), 32, False


def _bfe_compute(ptx, g, vals):
    width, signed = _type(ptx)
    a, b, c = _bits(vals[0], width), _bits(vals[1], 32), _bits(vals[2], 32)
    return _bfe(a, b, c, width, signed), width, signed


def _bfi_compute(ptx, g, vals):
    width, _ = _type(ptx)
    a, b = _bits(vals[0], width), _bits(vals[1], width)
    return _bfi(a, b, _bits(vals[2], 32), _bits(vals[3], 32), width), width, False


def _prmt_compute(ptx, g, vals):
    a, b, c = (_bits(v, 32) for v in vals)
    return _prmt(a, b, c, ptx.mods.get("mode") or ""), 32, False


def _shf_compute(ptx, g, vals):
    a, b, c = (_bits(v, 32) for v in vals)
    return _shf(a, b, c, ptx.mods.get("dir") == "l", ptx.mods.get("mode") == "clamp"), 32, False


HANDLERS["tirx.ptx.brev"] = _alu(_brev_compute)
HANDLERS["tirx.ptx.bfind"] = _alu(_bfind_compute)
HANDLERS["tirx.ptx.bfe"] = _alu(_bfe_compute)
HANDLERS["tirx.ptx.bfi"] = _alu(_bfi_compute)
HANDLERS["tirx.ptx.prmt"] = _alu(_prmt_compute)
HANDLERS["tirx.ptx.shf"] = _alu(_shf_compute)


# ---- warp collectives ---------------------------------------------------------------------------
def _vote_compute(ptx, g, vals):
    pred, member = vals
    act, pad = _member_active(g, member)
    P, _ = _warps(g, np.broadcast_to(np.not_equal(pred, 0), (g.L,)), False)
    mode = ptx.mods.get("mode")
    act, P = member_meet(g, member, act, P, ptx.line, f"vote.sync.{mode or 'uni'}", ptx.op)
    return _per_warp(g, _VOTE[mode if mode in _VOTE else "uni"](act, P).astype(np.uint64), pad), 32, False


def _match_compute(ptx, g, vals):
    a, member = vals
    width, _ = _type(ptx)
    act, pad = _member_active(g, member)
    A, _ = _warps(g, np.broadcast_to(_bits(a, width), (g.L,)), 0)
    act, A = member_meet(g, member, act, A, ptx.line, f"match.{ptx.mods.get('mode') or 'any'}.sync", ptx.op)
    same = (A[:, :, None] == A[:, None, :]) & act[:, None, :]  # [w, lane, other]
    lanes = (same.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=2)
    if ptx.mods.get("mode") == "all":
        members = _ballot_bits(act, np.ones_like(act)).astype(np.uint64)
        uniform = np.all(~act | (A == A[np.arange(A.shape[0]), np.argmax(act, axis=1)][:, None]), axis=1)
        lanes = np.where(uniform, members, 0)[:, None].repeat(32, axis=1)
    return _unwarp(g, lanes, pad), 32, False


def _redux_compute(ptx, g, vals):
    a, member = vals
    act, pad = _member_active(g, member)
    op = ptx.mods.get("op")
    signed = ptx.mods.get("type") == "s32"
    bits = _bits(a, 32).astype(np.uint32)  # add and the bitwise ops are the same on the bits either way
    A, _ = _warps(g, np.broadcast_to(bits.view(np.int32) if signed and op in ("min", "max") else bits, (g.L,)), 0)
    act, A = member_meet(g, member, act, A, ptx.line, f"redux.sync.{op}", ptx.op)
    return _per_warp(g, _bits(_REDUX[op](act, A), 32), pad), 32, signed


def _activemask_compute(ptx, g, vals):
    return _active_mask(g).astype(np.uint64), 32, False


for _n in ("vote_sync", "vote_sync_ballot"):
    HANDLERS[f"tirx.ptx.{_n}"] = _alu(_vote_compute)
for _n in ("match_any_sync", "match_all_sync"):
    HANDLERS[f"tirx.ptx.{_n}"] = _alu(_match_compute)
for _n in ("redux_sync", "redux_sync_bitwise"):
    HANDLERS[f"tirx.ptx.{_n}"] = _alu(_redux_compute)
HANDLERS["tirx.ptx.activemask"] = _alu(_activemask_compute)


# ---- shfl.sync, as the PTX ISA defines it -----------------------------------------------------------
_SHFL_KIND = {"idx": "idx", "up": "up", "down": "down", "bfly": "xor"}


def _standard_width(mode, c):
    """The ``width`` of CUDA's ``__shfl*_sync`` whose ``c`` this is (``(32 - width) << 8``, ``| 0x1f`` but for up),
    or None."""
    c = np.unique(np.asarray(c).astype(np.int64))
    if c.size != 1:
        return None
    c = int(c[0])
    seg, cval = (c >> 8) & 0x1F, c & 0x1F
    w = 32 - seg
    if c >> 13 or w & (w - 1) or cval != (0 if mode == "up" else 0x1F):
        return None
    return w


def _shfl_build(comp, call):
    ptx = decode(call)
    if ptx is None:
        return comp.not_emulated(call.op.name)
    mode = ptx.mods.get("mode")
    stores = _dest_stores(comp, [(ptx.ops.get("d") or [None])[0], (ptx.ops.get("p") or [None])[0]], ("shfl", id(call)))
    if stores is None or stores[0] is None:
        return comp.not_emulated(call.op.name, "a destination that is not a buffer element")
    key = ("shfl", id(call))
    d_dt = M.np_dtype(comp.buffer_info(ptx.ops["d"][0].source)["dtype"])
    a, b, c, member = (comp.expr(ptx.ops[n][0]) for n in ("a", "b", "c", "membermask"))
    line = comp.line

    def f(g):
        av = np.broadcast_to(_bits(a(g), 32), (g.L,)).astype(np.uint32)
        bv = np.broadcast_to(np.asarray(b(g)).astype(np.int64), (g.L,))
        cv = np.broadcast_to(np.asarray(c(g)).astype(np.int64), (g.L,))
        mv = member(g)
        V, pad = _warps(g, av)
        if g.mask is not None or pad or not _full(mv):
            w = _standard_width(mode, cv[g.active()])
            if w is None:
                raise NotEmulatedError(
                    f"shfl.sync.{mode} with c = {int(cv[0]):#x} (not a CUDA width) by part of a warp", lineno=line
                )
            V = _shfl_check(g, _SHFL_KIND[mode], mv, bv, w, line, f"shfl.sync.{mode}", V=V.copy())
        B, _ = _warps(g, bv)
        C, _ = _warps(g, cv)
        src, ok = semantics.shfl_lanes(mode, np.arange(32)[None, :], B, C)
        out = np.take_along_axis(V, src.astype(np.int64), axis=1)
        d = to_register(_unwarp(g, out, pad), np.dtype(np.uint32), d_dt, False)
        g.slots[key] = [d, _unwarp(g, ok, pad).astype(np.uint32)]
        for st in stores:
            if st is not None:
                st(g)
        return np.int32(0)

    return _guard(comp, ptx, f)


def _elect_build(comp, call):
    ptx = decode(call)
    if ptx is None:
        return comp.not_emulated(call.op.name)
    outs = [(ptx.ops.get(n) or [None])[0] for n in ("d", "p")]
    stores = _dest_stores(comp, outs, ("elect", id(call)))
    if stores is None:
        return comp.not_emulated(call.op.name, "a destination that is not a buffer element")
    member = comp.expr(ptx.ops["membermask"][0])
    line = comp.line

    def f(g):
        mv = member(g)
        act, pad = _member_active(g, mv)
        act, _ = member_meet(g, mv, act, np.zeros(act.shape, np.uint32), line, "elect.sync", call.op.name)
        first = np.argmax(act, axis=1)  # the leader: the lowest active member lane
        has = act.any(axis=1)
        lead = np.zeros(act.shape, bool)
        lead[np.nonzero(has)[0], first[has]] = True
        lane_id = np.where(has, first, 0).astype(np.uint32)
        g.slots[("elect", id(call))] = [_per_warp(g, lane_id, pad), _unwarp(g, lead, pad).astype(np.uint32)]
        for st in stores:
            if st is not None:
                st(g)
        return np.int32(0)

    return _guard(comp, ptx, f)


for _n in ("shfl_sync", "shfl_sync_p"):
    HANDLERS[f"tirx.ptx.{_n}"] = _shfl_build
HANDLERS["tirx.ptx.elect_sync"] = _elect_build
