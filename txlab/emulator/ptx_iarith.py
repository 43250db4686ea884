"""Table-driven ``T.ptx`` integer arithmetic, logic, shift, compare, select and move instructions.

Emulated, bit for bit from the PTX ISA's definition of each (the entries of
:data:`tvm.backend.cuda.ptx.TABLE`, every modifier the table allows):

- ``add``/``sub`` (integer: ``.u16/.u32/.u64/.s16/.s32/.s64``, ``add.u16x2``/``.s16x2`` per half word, ``.sat.s32``
  clamped to MININT..MAXINT), ``neg.s*``, ``abs.s*`` (both wrap: ``-MININT`` is MININT);
- ``mul.lo``/``.hi``/``.wide`` and ``mad.lo``/``.hi``/``.wide`` (the exact product, its low or high half; ``mad.hi.sat.s32``
  saturates ``t<63..32> + c``), ``mul24``/``mad24`` (``.lo``: ``t<31..0>``, ``.hi``: ``t<47..16>`` of the product of
  the operands' low 24 bits, sign-extended for ``.s32``; ``mad24.hi.sat.s32`` saturates), ``sad``
  (``c + |a - b|``, wrapping);
- ``div``/``rem`` (quotient towards zero, remainder with the dividend's sign);
- ``and``/``or``/``xor``/``not`` (``.pred`` and ``.b16/.b32/.b64``), ``cnot``, ``lop3`` (the ``immLut`` truth table)
  and ``lop3.or``/``.and`` with its predicate ``p = (d != 0) BoolOp q`` (also with ``_`` for ``d``);
- ``shl``/``shr`` (shift amounts above the width clamp to it: 0, or the sign for ``shr.s*``), ``szext`` and ``bmsk``
  (``.clamp``/``.wrap``, the ISA's pseudocode);
- ``selp`` (any type: the bits), ``slct`` (``c >= 0``; an ``.f32`` selector is an ordered compare -- NaN selects
  ``b``, -0 selects ``a`` -- ``.ftz`` flushes a subnormal selector, without it a negative subnormal selects ``b``;
  read off ptxas 13's SASS: ``FSETP.GE``, ``FADD.FTZ``);
- ``setp`` and ``set`` (every CmpOp: ``lo/ls/hi/hs``, signed and bit-size compares, float ``eq..ge`` ordered -- false
  on NaN, ``ne`` too -- ``equ..geu`` unordered, ``num``/``nan``; ``.ftz`` flushes ``.f32`` subnormal inputs), their
  ``.and/.or/.xor`` forms with ``c`` (``p = BoolOp(t, c)``) and the two-destination forms ``p|q``
  (``q = BoolOp(!t, c)``); ``set`` writes 0xffffffff (``.u32/.s32``) or 1.0f (``.f32``), else 0;
- ``mov`` (every type; ``.pred`` normalises to 0/1) and the vector moves ``mov.b32 d, {a, b}``,
  ``mov.b64 d, {a, b}`` / ``{a, b, c, d}`` and their unpacking forms: element 0 is the low bits, a sunk element
  (``T.ptx.SINK``) is not written.

A ``.pred`` operand is TVM's uint32 carrier: read as ``!= 0`` (the helper's ``setp.ne.b32``), written as 0/1 (its
``selp.b32``). ``@p`` (``pred=``) runs the instruction on the lanes whose predicate holds; the others keep their
destination, except that a ``.pred`` destination under ``preserve_dst=True`` is re-materialised to 0/1 there, as the
helper's bridge does (``setp.ne`` in, ``selp`` out). Operand values are decoded with
:func:`txlab.emulator.ptx_memory.decode` and written with PTX's register rules (:func:`~.ptx_memory.to_register`).

Refused (``NotEmulatedError``), never guessed:

- ``div``/``rem`` by zero -- the ISA: "an unspecified, machine-specific value" -- and ``div.s*`` of MININT by -1,
  whose quotient the type cannot hold (the ISA gives ``d = a / b`` and nothing for it); refused at run time, only
  where an executing lane meets one (``rem`` of MININT by -1 is 0, its exact value);
- the 128-bit vector moves ``mov.b128 d, {..}`` and their unpacking (no ``.b128`` registers are modelled).
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
from txlab.emulator.ops import HANDLERS, _str
from txlab.emulator.ptx_memory import _dest_stores, decode, to_register
from txlab.errors import NotEmulatedError
from txlab.ir import semantics as S

#: PTX type token -> (bits, kind): kind "b" bit-size, "u" unsigned, "s" signed, "f" float, "p" predicate
_TYPES = {
    "pred": (32, "p"),
    "b16": (16, "b"),
    "u16": (16, "u"),
    "s16": (16, "s"),
    "b32": (32, "b"),
    "u32": (32, "u"),
    "s32": (32, "s"),
    "b64": (64, "b"),
    "u64": (64, "u"),
    "s64": (64, "s"),
    "f32": (32, "f"),
    "f64": (64, "f"),
    "u16x2": (32, "b"),
    "s16x2": (32, "b"),
}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SINT = {2: np.int16, 4: np.int32, 8: np.int64}
_FLOAT = {4: np.float32, 8: np.float64}
_WIDE = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}
_ZERO = np.uint64(0)
_ONE = np.uint64(1)


class _Unspecified(Exception):
    """A lane met a case whose result the PTX ISA leaves unspecified (the handler names the line)."""


def _mask(width: int) -> np.uint64:
    return np.uint64((1 << width) - 1)


def _bits(v, width: int) -> np.ndarray:
    """A register's ``width`` low bits as uint64: a float's bits, an integer's two's complement, a bool's 0/1."""
    v = np.asarray(v)
    if v.dtype.kind in "iub":
        u = v.astype(np.uint64)
    else:  # float16/bfloat16/float32/float64: the bits
        u = v.view(_UINT[v.dtype.itemsize]).astype(np.uint64)
    return u & _mask(width)


def _signed(u: np.ndarray, width: int) -> np.ndarray:
    """uint64 bits of a ``width``-bit register as its two's-complement value (int64)."""
    s = u.astype(np.int64)
    if width == 64:
        return s
    return np.where(s >= 1 << (width - 1), s - (1 << width), s)


def _exact(u: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """The register's value as Python integers (an object array): products and quotients without overflow."""
    x = u.astype(object)
    if signed:
        x = np.where(x >= 1 << (width - 1), x - (1 << width), x)
    return x


def _wrap(x, width: int) -> np.ndarray:
    """An exact (object or int64) value's ``width`` low bits as uint64."""
    x = np.asarray(x)
    if x.dtype == object:
        return (x & ((1 << width) - 1)).astype(np.uint64)
    return x.astype(np.uint64) & _mask(width)


def _saturate(x, width: int) -> np.ndarray:
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return _wrap(np.where(x < lo, lo, np.where(x > hi, hi, x)), width)


def _float(u: np.ndarray, width: int) -> np.ndarray:
    return u.astype(_UINT[width // 8]).view(_FLOAT[width // 8])


def _pred(v) -> np.ndarray:
    """A ``.pred`` operand (bool, or TVM's uint32 carrier): ``!= 0``."""
    return np.not_equal(np.asarray(v), 0)


def _shift_left(a, n, width):
    """``a << n`` in ``width`` bits, 0 for ``n >= width``."""
    return np.where(n >= width, _ZERO, (a << np.minimum(n, np.uint64(63))) & _mask(width))


def _shift_right(a, n, width, signed):
    """``a >> n``, filling with the sign (``signed``) or 0; amounts from ``width`` on give all fill bits."""
    if signed:
        s = _signed(a, width)
        return _wrap(s >> np.minimum(n, np.uint64(width - 1)).astype(np.int64), width)
    return np.where(n >= width, _ZERO, a >> np.minimum(n, np.uint64(63)))


def _type(ptx, slot="type"):
    return _TYPES[ptx.mods[slot]]


# ---- arithmetic ----------------------------------------------------------------------------------
def _add_sub(sign):
    def compute(ptx, g, v):
        t = ptx.mods["type"]
        w, kind = _TYPES[t]
        a, b = _bits(v["a"][0], w), _bits(v["b"][0], w)
        if t in ("u16x2", "s16x2"):  # two half words, each wrapping
            h = _mask(16)
            lo = ((a & h) + (b & h)) & h
            hi = (((a >> np.uint64(16)) & h) + ((b >> np.uint64(16)) & h)) & h
            return {"d": [lo | (hi << np.uint64(16))]}
        if ptx.mods.get("sat"):  # .sat.s32: the exact result clamped to MININT..MAXINT
            x = _signed(a, w) + sign * _signed(b, w)
            return {"d": [_saturate(x, w)]}
        with np.errstate(over="ignore"):
            return {"d": [((a + b) if sign > 0 else (a - b)) & _mask(w)]}

    return compute


def _product(ptx, v, w):
    signed = _type(ptx)[1] == "s"
    return _exact(_bits(v["a"][0], w), w, signed) * _exact(_bits(v["b"][0], w), w, signed), signed


def _mul_int(ptx, g, v):
    w, _ = _type(ptx)
    if ptx.mods["mode"] == "lo":  # the low half is the same for either signedness: uint64 arithmetic wraps
        with np.errstate(over="ignore"):
            return {"d": [(_bits(v["a"][0], w) * _bits(v["b"][0], w)) & _mask(w)]}
    t, _ = _product(ptx, v, w)
    return {"d": [_wrap(t >> w, w)]}


def _mad_int(ptx, g, v):
    w, _ = _type(ptx)
    if ptx.mods["mode"] == "lo":
        a, b, c = (_bits(v[n][0], w) for n in "abc")
        with np.errstate(over="ignore"):
            return {"d": [(a * b + c) & _mask(w)]}
    t, signed = _product(ptx, v, w)
    c = _exact(_bits(v["c"][0], w), w, signed)
    hi = t >> w  # t<2n-1..n>, as the type reads it
    if ptx.mods.get("sat"):  # mad.hi.sat.s32: MININT..MAXINT
        return {"d": [_saturate(hi + c, w)]}
    return {"d": [_wrap(hi + c, w)]}


def _mul_wide(ptx, g, v):
    w, _ = _type(ptx)
    t, _ = _product(ptx, v, w)
    if "c" in v:  # mad.wide: the 2n-bit c added to the 2n-bit product
        t = t + _exact(_bits(v["c"][0], 2 * w), 2 * w, False)
    return {"d": [_wrap(t, 2 * w)]}


def _int24(a, signed):
    """The low 24 bits of a 32-bit register, sign-extended from bit 23 for ``.s32`` (ptxas: ``SGXT 0x18``)."""
    x = (a & np.uint64(0xFFFFFF)).astype(np.int64)
    return np.where(x >= 1 << 23, x - (1 << 24), x) if signed else x


def _mul24(ptx, g, v):
    signed = _type(ptx)[1] == "s"
    t = _int24(_bits(v["a"][0], 32), signed) * _int24(_bits(v["b"][0], 32), signed)  # 48 bits: exact in int64
    part = (t >> 16) if ptx.mods["mode"] == "hi" else t  # t<47..16> or t<31..0>
    if "c" not in v:
        return {"d": [_wrap(part, 32)]}
    c = _signed(_bits(v["c"][0], 32), 32)
    if ptx.mods.get("sat"):  # mad24.hi.sat.s32: t<47..16> (a 32-bit register) + c, clamped
        return {"d": [_saturate(_signed(_wrap(part, 32), 32) + c, 32)]}
    return {"d": [_wrap(_wrap(part, 32).astype(np.int64) + c, 32)]}


def _sad(ptx, g, v):
    w, kind = _type(ptx)
    a, b, c = (_exact(_bits(v[n][0], w), w, kind == "s") for n in "abc")
    return {"d": [_wrap(c + np.where(a < b, b - a, a - b), w)]}


def _neg(ptx, g, v):
    w, _ = _type(ptx)
    with np.errstate(over="ignore"):
        return {"d": [(_ZERO - _bits(v["a"][0], w)) & _mask(w)]}


def _abs(ptx, g, v):
    w, _ = _type(ptx)
    a = _bits(v["a"][0], w)
    with np.errstate(over="ignore"):
        return {"d": [np.where(_signed(a, w) < 0, (_ZERO - a) & _mask(w), a)]}


def _div_rem(which):
    def compute(ptx, g, v):
        w, kind = _type(ptx)
        signed = kind == "s"
        a, b = _exact(_bits(v["a"][0], w), w, signed), _exact(_bits(v["b"][0], w), w, signed)
        act = g.active()
        zero = b == 0
        if (zero & act).any():
            raise _Unspecified(f"{which} by zero: the PTX ISA makes the result unspecified and machine-specific")
        most = -(1 << (w - 1))
        if which == "div" and signed and ((a == most) & (b == -1) & act).any():
            raise _Unspecified(f"div.s{w} of {most} by -1: the quotient does not fit the type; the ISA does not say")
        b = np.where(zero, 1, b)
        q = abs(a) // abs(b)  # towards zero; rem takes the dividend's sign
        if which == "div":
            return {"d": [_wrap(np.where((a < 0) != (b < 0), -q, q), w)]}
        r = abs(a) - q * abs(b)
        return {"d": [_wrap(np.where(a < 0, -r, r), w)]}

    return compute


# ---- logic and shifts ----------------------------------------------------------------------------
_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _logic(op):
    def compute(ptx, g, v):
        w, kind = _type(ptx)
        if kind == "p":
            return {"d": [_BITWISE[op](_pred(v["a"][0]), _pred(v["b"][0])).astype(np.uint64)]}
        return {"d": [_BITWISE[op](_bits(v["a"][0], w), _bits(v["b"][0], w))]}

    return compute


def _not(ptx, g, v):
    w, kind = _type(ptx)
    if kind == "p":
        return {"d": [(~_pred(v["a"][0])).astype(np.uint64)]}
    return {"d": [~_bits(v["a"][0], w) & _mask(w)]}


def _cnot(ptx, g, v):
    w, _ = _type(ptx)
    return {"d": [(_bits(v["a"][0], w) == 0).astype(np.uint64)]}


def _lop3_value(v):
    """``F(a, b, c)`` of the ``immLut`` table: bit ``i`` of immLut is F at ``a = i>>2 & 1, b = i>>1 & 1, c = i & 1``
    (``ta = 0xF0, tb = 0xCC, tc = 0xAA``), applied to every bit position."""
    a, b, c = (_bits(v[n][0], 32) for n in "abc")
    lut = _bits(v["immLut"][0], 8)
    m = _mask(32)
    out = np.zeros(np.broadcast(a, b, c, lut).shape, np.uint64)
    for i in range(8):
        term = (a if i & 4 else ~a & m) & (b if i & 2 else ~b & m) & (c if i & 1 else ~c & m)
        out |= np.where((lut >> np.uint64(i)) & _ONE == 1, term, _ZERO)
    return out


def _lop3(ptx, g, v):
    d = _lop3_value(v)
    out = {"d": [d]}
    if "boolop" in ptx.mods:  # lop3.BoolOp: p = (d != 0) BoolOp q
        out["p"] = [_BITWISE[ptx.mods["boolop"]](d != 0, _pred(v["q"][0])).astype(np.uint64)]
    return out


def _shl(ptx, g, v):
    w, _ = _type(ptx)
    return {"d": [_shift_left(_bits(v["a"][0], w), _bits(v["b"][0], 32), w)]}


def _shr(ptx, g, v):
    w, kind = _type(ptx)
    return {"d": [_shift_right(_bits(v["a"][0], w), _bits(v["b"][0], 32), w, kind == "s")]}


def _szext(ptx, g, v):
    """PTX ISA ``szext``: ``b1 = b & 0x1f``; ``.clamp`` with ``b >= 32`` keeps ``a``; ``N = 0`` gives 0; ``.s32``
    replicates bit ``N - 1``."""
    a, b = _bits(v["a"][0], 32), _bits(v["b"][0], 32)
    m = _mask(32)
    b1 = b & np.uint64(0x1F)
    too_large = (b >= 32) & (ptx.mods["mode"] == "clamp")
    mask = np.where(too_large, _ZERO, (m << b1) & m)
    sign_pos = (b1 - _ONE) & np.uint64(0x1F)
    if ptx.mods["type"] == "s32":
        sign = np.where((b1 == 0) | too_large, _ZERO, (a >> sign_pos) & _ONE)
    else:
        sign = np.zeros_like(a)
    return {"d": [(a & ~mask & m) | np.where(sign == 1, mask, _ZERO)]}


def _bmsk(ptx, g, v):
    """PTX ISA ``bmsk``: ``b`` ones from bit ``a`` (``& 0x1f`` each; ``.clamp``: ``a >= 32`` gives 0, ``b >= 32`` all
    the bits from ``a`` up)."""
    a, b = _bits(v["a"][0], 32), _bits(v["b"][0], 32)
    m = _mask(32)
    a1, b1 = a & np.uint64(0x1F), b & np.uint64(0x1F)
    mask0 = (m << a1) & m
    s = a1 + b1
    mask1 = (m << np.minimum(s, np.uint64(32))) & m
    overflow = s >= 32
    if ptx.mods["mode"] == "clamp":
        mask0 = np.where(a >= 32, _ZERO, mask0)
        overflow = overflow | (a >= 32) | (b >= 32)
    mask1 = np.where(overflow, _ZERO, np.where(b1 == 0, m, mask1))
    return {"d": [mask0 & ~mask1 & m]}


# ---- compare and select --------------------------------------------------------------------------
_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater}
_ORDERED["ge"] = np.greater_equal
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}


def _compare(cmp, a, b, tok, ftz):
    """``a CmpOp b`` (bool per lane) as PTX ``setp``/``set`` compare registers of type ``tok``."""
    w, kind = _TYPES[tok]
    a, b = _bits(a, w), _bits(b, w)
    if kind == "f":
        x, y = _float(a, w), _float(b, w)
        if ftz and w == 32:
            x, y = S.ftz(x), S.ftz(y)
        nan = np.isnan(x) | np.isnan(y)
        if cmp == "num":
            return ~nan
        if cmp == "nan":
            return nan
        with np.errstate(invalid="ignore"):
            if cmp in _UNORDERED:
                return _ORDERED[_UNORDERED[cmp]](x, y) | nan
            return _ORDERED[cmp](x, y) & ~nan
    if kind == "s":
        return _ORDERED[cmp](_signed(a, w), _signed(b, w))
    return _ORDERED[_UNSIGNED.get(cmp, cmp)](a, b)


def _combine(ptx, t, v):
    """``BoolOp(t, c)`` for the forms with a ``c`` predicate, else ``t``."""
    op = ptx.mods.get("boolop")
    return _BITWISE[op](t, _pred(v["c"][0])) if op else t


def _setp(ptx, g, v):
    t = _compare(ptx.mods["cmp"], v["a"][0], v["b"][0], ptx.mods["type"], bool(ptx.mods.get("ftz")))
    out = {"p": [_combine(ptx, t, v).astype(np.uint64)]}
    if "q" in ptx.ops:  # p|q: q = BoolOp(!t, c)
        out["q"] = [_combine(ptx, ~t, v).astype(np.uint64)]
    return out


def _set(ptx, g, v):
    t = _compare(ptx.mods["cmp"], v["a"][0], v["b"][0], ptx.mods["stype"], bool(ptx.mods.get("ftz")))
    true = np.uint64(0x3F800000 if ptx.mods["dtype"] == "f32" else 0xFFFFFFFF)  # 1.0f or 0xffffffff
    return {"d": [np.where(_combine(ptx, t, v), true, _ZERO)]}


def _selp(ptx, g, v):
    w, _ = _type(ptx)
    return {"d": [np.where(_pred(v["c"][0]), _bits(v["a"][0], w), _bits(v["b"][0], w))]}


def _slct(ptx, g, v):
    w, _ = _type(ptx, "dtype")
    if ptx.mods["ctype"] == "s32":
        take_a = _signed(_bits(v["c"][0], 32), 32) >= 0
    else:  # an ordered c >= 0: NaN selects b, -0 selects a; .ftz flushes a subnormal c first
        c = _float(_bits(v["c"][0], 32), 32)
        if ptx.mods.get("ftz"):
            c = S.ftz(c)
        with np.errstate(invalid="ignore"):
            take_a = c >= 0
    return {"d": [np.where(take_a, _bits(v["a"][0], w), _bits(v["b"][0], w))]}


# ---- moves ---------------------------------------------------------------------------------------
def _mov(ptx, g, v):
    w, kind = _type(ptx)
    if kind == "p":
        return {"d": [_pred(v["a"][0]).astype(np.uint64)]}
    return {"d": [_bits(v["a"][0], w)]}


def _pack(lane_bits):
    def compute(ptx, g, v):
        out = _ZERO
        for k, x in enumerate(v["a"]):  # element 0 in the low bits
            out = out | (_bits(x, lane_bits) << np.uint64(k * lane_bits))
        return {"d": [out]}

    return compute


def _unpack(lane_bits, lanes):
    def compute(ptx, g, v):
        a = _bits(v["a"][0], lane_bits * lanes)
        return {"d": [(a >> np.uint64(k * lane_bits)) & _mask(lane_bits) for k in range(lanes)]}

    return compute


# ---- the handler ---------------------------------------------------------------------------------
def _opcode(ptx) -> str:
    return ".".join([ptx.entry.ptx_name, *(t for t in ptx.mods.values() if t)])


def _registers(comp, ptx, key):
    """The destination lanes (operand name, lane, buffer element or None for a sunk lane) in operand order, their
    stores (of ``g.slots[key][i]``) and register dtypes; None where one is not a buffer element."""
    names = [s.name for s in ptx.entry.operands if s.rw == "w" and s.name in ptx.ops]
    lanes = [(n, k, d) for n in names for k, d in enumerate(ptx.ops[n])]
    stores = _dest_stores(comp, [d for _, _, d in lanes], key)
    if stores is None:
        return None
    reg_dts = [None if d is None else M.np_dtype(comp.buffer_info(d.source)["dtype"]) for _, _, d in lanes]
    return lanes, stores, reg_dts


def _typed(bits: np.ndarray, tok: str) -> np.ndarray:
    """Result bits as a register of the destination's PTX type (a ``.pred`` result as its uint32 0/1 carrier)."""
    w, kind = _TYPES[tok]
    u = bits.astype(_UINT[w // 8])
    if kind == "f":
        return u.view(_FLOAT[w // 8])
    if kind == "s":
        return u.view(_SINT[w // 8])
    return u


def _instr(compute, dest_types, refuse=None):
    """A handler: ``compute(ptx, g, vals) -> {destination: [uint64 bits per lane]}`` from the input operands'
    values (``vals``: operand name -> lane values); ``dest_types(ptx) -> {destination: PTX type}``."""

    def build(comp, call):
        name = call.op.name
        ptx = decode(call)
        if ptx is None:
            return comp.not_emulated(name)
        why = refuse(ptx) if refuse else None
        if why:
            return comp.not_emulated(f"{name} ({_opcode(ptx)})", why)
        key = ("ptx.iarith", call.__chandle__())
        regs = _registers(comp, ptx, key)
        if regs is None:
            return comp.not_emulated(name, "a destination that is not a buffer element")
        lanes, stores, reg_dts = regs
        outs = {n for n, _, _ in lanes}
        ins = {n: [comp.expr(e) for e in es] for n, es in ptx.ops.items() if n not in outs}
        tys = dest_types(ptx)
        opcode = _opcode(ptx)
        line = comp.line if comp.line is not None else comp.nearest_line()

        def f(g):
            vals = {n: [np.broadcast_to(np.asarray(fn(g)), (g.L,)) for fn in fns] for n, fns in ins.items()}
            try:
                res = compute(ptx, g, vals)
            except _Unspecified as e:
                raise NotEmulatedError(f"ptx {opcode}", lineno=line, detail=str(e)) from None
            slots = []
            for (n, k, d), rd in zip(lanes, reg_dts):
                if d is None:
                    slots.append(None)
                    continue
                reg = _typed(np.broadcast_to(np.asarray(res[n][k], np.uint64), (g.L,)), tys[n])
                slots.append(to_register(reg, reg.dtype, rd, _TYPES[tys[n]][1] == "s"))
            g.slots[key] = slots
            for st in stores:
                if st is not None:
                    st(g)
            return np.int32(0)

        flags = _str(call.args[-1]).split(",")
        renorm = []  # a .pred destination bound read-write: lanes @p skips get its old value as 0/1
        if "keep" in flags:
            renorm = [(i, comp.expr(d)) for i, (n, _, d) in enumerate(lanes) if d is not None and tys[n] == "pred"]
        return _guard(comp, ptx, f, key, stores, reg_dts, renorm)

    return build


def _guard(comp, ptx, fn, key, stores, reg_dts, renorm):
    """Run ``fn`` only for the lanes whose ``@p`` predicate holds (:func:`txlab.emulator.ptx_memory._guard`); with
    ``renorm`` (``preserve_dst`` of a ``.pred`` destination) the others get ``old != 0``, which is what the helper's
    ``setp.ne.b32`` / ``selp.b32`` bridge leaves there."""
    if ptx.pred is None:
        return fn
    p = comp.expr(ptx.pred)

    def run(g, m, what):
        outer = g.mask
        g.mask = None if m.all() else m
        try:
            return what(g)
        finally:
            g.mask = outer

    def guarded(g):
        pv = np.broadcast_to(np.not_equal(p(g), 0), (g.L,))
        outer = g.mask
        on = pv if outer is None else outer & pv
        off = ~pv if outer is None else outer & ~pv
        olds = (
            run(g, off, lambda g: [np.broadcast_to(old(g), (g.L,)) for _, old in renorm])
            if renorm and off.any()
            else None
        )
        if on.any():
            run(g, on, fn)
        if olds is not None:

            def restore(g):
                g.slots[key] = [None] * len(stores)
                for (i, _), old in zip(renorm, olds):
                    g.slots[key][i] = to_register(_pred(old).astype(np.uint32), np.dtype(np.uint32), reg_dts[i], False)
                    stores[i](g)

            run(g, off, restore)
        return np.int32(0)

    return guarded


def _same(slot="type", dests=("d",)):
    return lambda ptx: {n: ptx.mods[slot] for n in dests}


def _wide_dest(ptx):
    return {"d": _WIDE[ptx.mods["type"]]}


def _int_dest(ptx):
    t = ptx.mods["type"]
    return {"d": "b32" if t in ("u16x2", "s16x2") else t}


_B128 = "128-bit (.b128) registers are not modelled"
_DIV0 = "division by zero (the ISA: an unspecified, machine-specific value) is refused where an executing lane meets it"

#: what of each entry is not emulated (for the op table, as ptx_floatmath.MISSING)
MISSING = {
    "div": _DIV0 + "; so is div.s* of MININT by -1 (the quotient does not fit; the ISA gives no result)",
    "rem": _DIV0,
    **{n: _B128 for n in ("mov_pack_b32x4", "mov_pack_b64x2", "mov_unpack_b32x4", "mov_unpack_b64x2")},
}


def _b128(ptx):
    return _B128


_PRED = lambda ptx: {"p": "pred", "q": "pred"}  # noqa: E731

HANDLERS["tirx.ptx.add_int"] = _instr(_add_sub(1), _int_dest)
HANDLERS["tirx.ptx.sub_int"] = _instr(_add_sub(-1), _int_dest)
HANDLERS["tirx.ptx.mul_int"] = _instr(_mul_int, _same())
HANDLERS["tirx.ptx.mad_int"] = _instr(_mad_int, _same())
HANDLERS["tirx.ptx.mul_wide"] = _instr(_mul_wide, _wide_dest)
HANDLERS["tirx.ptx.mad_wide"] = _instr(_mul_wide, _wide_dest)
HANDLERS["tirx.ptx.mul24"] = _instr(_mul24, _same())
HANDLERS["tirx.ptx.mad24"] = _instr(_mul24, _same())
HANDLERS["tirx.ptx.sad"] = _instr(_sad, _same())
HANDLERS["tirx.ptx.neg_int"] = _instr(_neg, _same())
HANDLERS["tirx.ptx.abs"] = _instr(_abs, _same())
HANDLERS["tirx.ptx.div"] = _instr(_div_rem("div"), _same())
HANDLERS["tirx.ptx.rem"] = _instr(_div_rem("rem"), _same())
for _op in ("and", "or", "xor"):
    HANDLERS[f"tirx.ptx.{_op}"] = _instr(_logic(_op), _same())
HANDLERS["tirx.ptx.not"] = _instr(_not, _same())
HANDLERS["tirx.ptx.cnot"] = _instr(_cnot, _same())
HANDLERS["tirx.ptx.lop3"] = _instr(_lop3, _same())
HANDLERS["tirx.ptx.lop3_bool"] = _instr(_lop3, lambda ptx: {"d": "b32", "p": "pred"})
HANDLERS["tirx.ptx.lop3_bool_sink"] = _instr(_lop3, lambda ptx: {"d": "b32", "p": "pred"})
HANDLERS["tirx.ptx.shl"] = _instr(_shl, _same())
HANDLERS["tirx.ptx.shr"] = _instr(_shr, _same())
HANDLERS["tirx.ptx.szext"] = _instr(_szext, _same())
HANDLERS["tirx.ptx.bmsk"] = _instr(_bmsk, _same())
HANDLERS["tirx.ptx.selp"] = _instr(_selp, _same())
HANDLERS["tirx.ptx.slct"] = _instr(_slct, _same("dtype"))
for _n in ("setp", "setp_bool", "setp_pq", "setp_bool_pq"):
    HANDLERS[f"tirx.ptx.{_n}"] = _instr(_setp, _PRED)
for _n in ("set", "set_bool"):
    HANDLERS[f"tirx.ptx.{_n}"] = _instr(_set, _same("dtype"))
HANDLERS["tirx.ptx.mov"] = _instr(_mov, _same())
HANDLERS["tirx.ptx.mov_pack_b16x2"] = _instr(_pack(16), lambda ptx: {"d": "b32"})
HANDLERS["tirx.ptx.mov_pack_b16x4"] = _instr(_pack(16), lambda ptx: {"d": "b64"})
HANDLERS["tirx.ptx.mov_pack_b32x2"] = _instr(_pack(32), lambda ptx: {"d": "b64"})
HANDLERS["tirx.ptx.mov_unpack_b16x2"] = _instr(_unpack(16, 2), lambda ptx: {"d": "b16"})
HANDLERS["tirx.ptx.mov_unpack_b16x4"] = _instr(_unpack(16, 4), lambda ptx: {"d": "b16"})
HANDLERS["tirx.ptx.mov_unpack_b32x2"] = _instr(_unpack(32, 2), lambda ptx: {"d": "b32"})
for _n in ("mov_pack_b32x4", "mov_pack_b64x2", "mov_unpack_b32x4", "mov_unpack_b64x2"):
    HANDLERS[f"tirx.ptx.{_n}"] = _instr(_pack(32), lambda ptx: {"d": "b64"}, refuse=_b128)
