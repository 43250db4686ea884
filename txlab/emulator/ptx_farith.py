"""Table-driven ``T.ptx`` floating-point arithmetic: ``add``/``sub``/``mul``/``fma``/``mad`` (``.f32``, ``.f32x2``,
``.f64``, the mixed ``.f32.f16``/``.f32.bf16`` lines), their half-precision lines (``add_half`` ... ``fma_half``,
``neg_half``, ``abs_half``: ``.f16``, ``.f16x2``, ``.bf16``, ``.bf16x2``), the sm_107 mixed vectors
(``add/sub_mixed_vec_up``, ``..._down_f16/_bf16``, ``mul_mixed_vec_down_*``, ``fma_mixed_vec``), ``min``/``max``
(every float and integer type of the shared entry, ``.NaN``, ``.xorsign.abs``, ``.relu``), ``min3``/``max3``,
``neg``, ``abs_f``, ``copysign``, ``testp``, ``div_f``, ``rsqrt`` and the scalar ``cvt`` (every dtype/atype pair of
the entry). Operands are decoded with :func:`txlab.emulator.ptx_memory.decode` and read as register *bits* of the
instruction's type (packed ``x2`` forms: lane 0 is the low half); the result is written with PTX's register rules.

Exactness. Every IEEE form -- any rounding modifier ``.rn``/``.rz``/``.rm``/``.rp``, subnormals, overflow to
infinity or to the largest finite value, signed zeros -- is bitwise the correctly rounded result, rounded once:

* f32/f16/bf16 results: the exact result is held as a float64 pair (a product of two f32 is exact in float64; a sum
  or an fma's addition is a TwoSum: the float64 sum plus its exact error), rounded to odd at 53 bits, then rounded
  to the destination with the named mode (53 >= 24 + 2, so the two steps are one correct rounding). An f32
  quotient needs no residual: one off the 25-bit grid is at least 2^-50 (relative) away from it, so the float64
  quotient rounds as the exact one in every mode.
* f64 results: numpy's float64 operation is the round-to-nearest result; a directed mode moves it to its neighbour
  by the sign of the exact residual (TwoSum; Dekker's product for ``mul`` and ``div``). Lanes where Dekker's
  product is not exact (exponents near the ends of the range) and every ``fma.f64``/``mad.f64`` lane are computed
  exactly with :class:`fractions.Fraction` and rounded from there.
* ``.ftz`` flushes subnormal inputs and results (after rounding) to zero of the same sign, as
  :func:`txlab.ir.semantics.ftz` does for the fast-math build; ``.sat`` clamps to [+0, 1] with NaN -> +0;
  ``.relu`` clamps negatives (and -0) to +0 and keeps NaN; ``.satfinite`` clamps to the largest finite value.
* f32, f16 and bf16 NaN results are the canonical NaN (0x7fffffff, 0x7fff; f64: below): NVIDIA's single- and
  half-precision units keep no NaN payload (``neg``/``abs`` are FADD/HADD2 in the SASS, so they canonicalise too;
  ``copysign`` is a LOP3 and moves bits). A ``cvt.f32.f32`` without ``.ftz``/``.sat`` is a move: its bits pass through.
* ``min``/``max``: a NaN operand gives the other one, two NaNs (or any NaN with ``.NaN``) the canonical NaN,
  -0 < +0; ``.xorsign.abs`` gives max(|a|, |b|) with the XOR of the two sign bits (ignored when the result is NaN);
  ``min3``/``max3`` fold two at a time, ``.abs`` on every input. ``testp.normal`` holds for zeros (the SASS tests
  ``|a| >= 2^-126 || a == 0``).
* ``cvt``: float -> integer rounds with the integer mode, saturates to the destination range, NaN -> 0;
  integer -> float and float -> narrower float round once with the float mode (64-bit integers: a TwoSum of their
  two halves); f16/bf16/f32 -> wider floats are exact; integer-mode rounding of a float to a float (``cvt.rni.f32.f32``)
  is exact; integer -> integer truncates, or clamps with ``.sat``. ``.ftz`` acts on the ``.f32`` side only.

Approximations (``.approx``; the GPU's MUFU bits are not published): ``div.approx.f32`` is ``a * rcp(b)`` as ptxas
lowers it (operands scaled by 2^24 when |b| < 2^-126 without ``.ftz``; a reciprocal that is subnormal flushed, so
|b| > 2^126 gives 0), the reciprocal correctly rounded where MUFU.RCP is within 1 ulp: within the ISA's 2 ulp for
|b| in [2^-126, 2^126]. ``div.full.f32`` is the same with ptxas' range scaling (|b| > 2^126: both by 1/4), within
its 2 ulp. ``rsqrt.approx.f32`` is 1/sqrt(x) rounded once (``.ftz``: flushed), within MUFU.RSQ's bound.

Refused (``NotEmulatedError`` naming the instruction, never a guess):

* ``add``/``sub``/``mul`` (and their half and mixed lines) with **no rounding modifier**. PTX lets ptxas contract
  them, and it does so across inline-asm blocks: ``T.ptx.mul.f32`` then ``T.ptx.add.f32`` on its result is one
  FFMA in the SASS (so are f64 -> DFMA, f16x2 -> HFMA2, f32x2 -> FFMA2, mul + sub), while the ``.rn`` pair stays
  FMUL + FADD (``tests/test_emulator_ptx_farith.py`` compiles both). Whether a given one is fused depends on the
  rest of the kernel, so the result is not knowable from the instruction: write ``.rn``.
* ``mul_mixed_vec_bf16_f16``/``_f16_bf16`` (no rounding modifier in their syntax, same reason), ``fma.oob`` (the
  out-of-bounds NaN pattern is not modelled), ``rsqrt.approx.f64`` (ptxas' Newton sequence: no stated bound).
* f64 NaN results the instruction does not decide or an H100 did not show: two NaN operands of ``add``/``sub``/
  ``mul``/``div``/``fma``/``min``/``max`` (``add a, b`` and ``add b, a`` both returned B's NaN: ptxas orders the
  SASS operands), ``fma`` of an invalid product (0 x inf) and a NaN addend, NaN results under ``.rz``/``.rm``/``.rp``,
  and ``cvt`` to f64 of a NaN other than a plain ``cvt.f64.f32``; a lane producing one stops the run there. The
  others are as the H100 gave them (round 39, ``tests/test_emulator_ptx_farith.py``): ``.rn`` arithmetic, ``neg``,
  ``abs`` and ``cvt.f64.f32`` return the NaN operand quieted with its own sign and payload, an invalid operation
  ``0xfff8000000000000``; ``min``/``max`` of a NaN and a number the number.

Not checked on hardware: the sm_100 (``.f32x2``, mixed ``.f32.f16``, ``max3``) and sm_107 (mixed vectors) forms
follow the ISA text only; the GPU-marked test in ``tests/test_emulator_ptx_farith.py`` checks the sm_90 forms.
Where tininess is detected for ``.ftz`` (before or after rounding) is taken from the existing fast-math model:
the result is rounded with subnormals, then flushed if subnormal.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from txlab.emulator.nan import quieted
from txlab.emulator.ops import HANDLERS
from txlab.emulator.ptx_alu import _dest
from txlab.emulator.ptx_memory import _guard, decode, to_register
from txlab.errors import NotEmulatedError

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


class _Refused(Exception):
    """A lane's value the emulator does not model (raised while running; the handler names the line)."""


# ---- formats ------------------------------------------------------------------------------------------
class _Fmt:
    """An IEEE binary format: width, precision ``p`` (with the hidden bit), min/max normal exponents, its NaN."""

    def __init__(self, name: str, width: int, p: int, emin: int, emax: int, nan: int | None):
        self.name, self.width, self.p, self.emin, self.emax, self.nan = name, width, p, emin, emax, nan
        self.max = (2.0 - 2.0 ** (1 - p)) * 2.0**emax
        self.tiny = 2.0**emin  # smallest normal
        self.exp_mask = ((1 << (width - p)) - 1) << (p - 1)
        self.sign = 1 << (width - 1)


F16 = _Fmt("f16", 16, 11, -14, 15, 0x7FFF)
BF16 = _Fmt("bf16", 16, 8, -126, 127, 0x7FFF)
F32 = _Fmt("f32", 32, 24, -126, 127, 0x7FFFFFFF)
F64 = _Fmt("f64", 64, 53, -1022, 1023, None)  # no canonical NaN: an f64 NaN keeps its payload (_f64_nans)
_FMT = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}
_F64_MAX = F64.max


def _reg_bits(v, width: int) -> np.ndarray:
    """The ``width`` low bits of a register value as uint64 (a float carrier's bits, an integer's two's complement)."""
    v = np.asarray(v)
    if v.dtype.kind not in "iub":  # float16/32/64, bfloat16 (ml_dtypes): the bits
        v = v.view(_UINT[8 * v.dtype.itemsize])
    if v.dtype.kind == "b":
        v = v.astype(np.uint8)
    u = v.astype(np.uint64) if v.dtype.kind == "u" else v.astype(np.int64).view(np.uint64)
    return u & np.uint64((1 << width) - 1) if width < 64 else u


def _value(bits: np.ndarray, fmt: _Fmt) -> np.ndarray:
    """float64 values of ``fmt`` bits (exact)."""
    if fmt is F64:
        return bits.astype(np.uint64).view(np.float64)
    if fmt is F32:
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if fmt is F16:
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _encode(v: np.ndarray, fmt: _Fmt) -> np.ndarray:
    """uint64 bits of float64 values exactly representable in ``fmt`` (NaN lanes: replaced by the caller)."""
    with np.errstate(all="ignore"):
        if fmt is F64:
            return np.asarray(v, np.float64).view(np.uint64)
        if fmt is F32:
            return v.astype(np.float32).view(np.uint32).astype(np.uint64)
        if fmt is F16:
            return v.astype(np.float16).view(np.uint16).astype(np.uint64)
        return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64)


def _split(bits: np.ndarray, lane_width: int, lanes: int) -> list:
    """Lanes of a packed register, lane 0 the low bits."""
    m = np.uint64((1 << lane_width) - 1)
    return [(bits >> np.uint64(lane_width * i)) & m for i in range(lanes)]


def _join(parts: list, lane_width: int) -> np.ndarray:
    out = np.zeros_like(parts[0])
    for i, p in enumerate(parts):
        out |= p << np.uint64(lane_width * i)
    return out


# ---- exact rounding -----------------------------------------------------------------------------------
def _round(x, fmt: _Fmt, mode: str) -> np.ndarray:
    """float64 ``x`` (exact, or rounded to odd at 53 bits) rounded once to ``fmt`` (not f64) with ``mode``: its bits.
    Overflow gives infinity or the largest finite value as the mode says; NaN gives the canonical NaN."""
    x = np.asarray(x, np.float64)
    neg = np.signbit(x)
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        fin = np.isfinite(ax) & (ax > 0)
        safe = np.where(fin, ax, 1.0)
        _, e = np.frexp(safe)
        q = np.maximum(e - 1, fmt.emin) - (fmt.p - 1)  # the exponent of the destination's last place
        t = np.ldexp(safe, -q)  # exact: a power-of-two scaling
        n = np.floor(t)
        frac = t - n
        if mode == "rn":
            up = (frac > 0.5) | ((frac == 0.5) & (np.fmod(n, 2) == 1))
        elif mode == "rz":
            up = np.zeros(x.shape, bool)
        elif mode == "rp":
            up = (frac > 0) & ~neg
        else:  # rm
            up = (frac > 0) & neg
        v = np.ldexp(n + up, q)
        big = {
            "rn": np.inf,
            "rz": fmt.max,
            "rp": np.where(neg, fmt.max, np.inf),
            "rm": np.where(neg, np.inf, fmt.max),
        }[mode]
        v = np.where(v > fmt.max, big, v)
        v = np.where(fin, v, ax)  # zeros and infinities as they are
        v = np.where(neg, -v, v)
    return np.where(np.isnan(x), np.uint64(fmt.nan), _encode(v, fmt))


def _two_sum(a, b):
    """(s, err): the float64 sum and its exact error (0 where the sum is not finite)."""
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), err, 0.0)


def _two_prod(a, b):
    """(p, err) with p + err == a * b exactly (Dekker), and where that holds (no over/underflow in the split)."""
    with np.errstate(all="ignore"):
        p = a * b

        def split(x):
            t = x * 134217729.0
            hi = t - (t - x)
            return hi, x - hi

        ah, al = split(a)
        bh, bl = split(b)
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        ok = np.isfinite(p) & (np.abs(p) >= 2.0**-968) & (np.abs(a) < 2.0**995) & (np.abs(b) < 2.0**995)
    return p, np.where(ok, err, 0.0), ok | (a == 0) | (b == 0)


def _odd(s, err):
    """``s + err`` (``s`` the nearest float64, ``err`` the exact rest) rounded to odd at 53 bits."""
    s = np.ascontiguousarray(s, np.float64)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    return np.where((err != 0) & even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _exact_zero(s, a, b, mode):
    """IEEE's sign of an exact zero sum ``a + b``: +0 (-0 under .rm) unless both are zeros of one sign."""
    if mode != "rm":
        return s
    both_pos = (a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)
    return np.where((s == 0) & ~both_pos, -0.0, s)


def _directed64(s, rest, mode, over):
    """The f64 result under ``mode`` from the nearest ``s`` and the sign of the exact ``rest`` (x - s); ``over``:
    lanes whose exact result overflowed (|x| beyond the largest finite value)."""
    with np.errstate(all="ignore"):
        if mode == "rp":
            r = np.where(rest > 0, np.nextafter(s, np.inf), s)
            return np.where(over & (s < 0), -_F64_MAX, r)
        if mode == "rm":
            r = np.where(rest < 0, np.nextafter(s, -np.inf), s)
            return np.where(over & (s > 0), _F64_MAX, r)
        if mode == "rz":
            r = np.where((rest != 0) & ((rest > 0) != (s > 0)), np.nextafter(s, 0.0), s)
            return np.where(over, np.copysign(_F64_MAX, s), r)
    return s


def _fraction64(x: Fraction, mode: str, zero: float) -> float:
    """A nonzero-or-exact-zero rational rounded once to f64 (``zero``: the signed zero for an exact 0)."""
    if x == 0:
        return zero
    try:
        q = float(x)  # CPython divides the two integers correctly rounded (subnormals included)
    except OverflowError:
        q = math.inf if x > 0 else -math.inf
    if mode == "rn":
        return q
    if math.isinf(q):
        lo, hi = (_F64_MAX, q) if q > 0 else (q, -_F64_MAX)
    elif Fraction(q) == x:
        return q
    elif Fraction(q) < x:
        lo, hi = q, math.nextafter(q, math.inf)
    else:
        lo, hi = math.nextafter(q, -math.inf), q
    return {"rp": hi, "rm": lo, "rz": lo if x > 0 else hi}[mode]


# ---- the arithmetic ------------------------------------------------------------------------------------
def _flush(v, fmt: _Fmt):
    """Subnormal values flushed to zero of the same sign (.ftz on an input)."""
    return np.where(np.abs(v) < fmt.tiny, np.copysign(0.0, v), v)


def _flush_bits(bits, fmt: _Fmt):
    """Subnormal results flushed to zero of the same sign (.ftz on the result)."""
    sub = (bits & np.uint64(fmt.exp_mask)) == 0
    return np.where(sub, bits & np.uint64(fmt.sign), bits)


def _clamp_bits(bits, fmt: _Fmt, sat: str):
    """``.sat`` ([+0, 1], NaN -> +0) or ``.relu`` (negatives and -0 -> +0, NaN kept) on result bits."""
    v = _value(bits, fmt)
    nan = np.isnan(v)
    neg = np.signbit(v) & ~nan
    if sat == "relu":
        return np.where(neg, np.uint64(0), bits)
    one = _encode(np.ones(1), fmt)[0]
    return np.where(nan | neg, np.uint64(0), np.where(v > 1, one, bits))


def _small(op: str, vals: list, fmt: _Fmt, mode: str, ftz: bool = False) -> np.ndarray:
    """``add``/``sub``/``mul``/``fma`` of float64 operand values with an f32/f16/bf16 result: its bits."""
    if ftz:
        vals = [_flush(v, src) for v, src in vals]
    else:
        vals = [v for v, _ in vals]
    with np.errstate(all="ignore"):
        if op == "mul":
            x = vals[0] * vals[1]  # exact: at most 2 * 24 significant bits
        else:
            a, b = (vals[0] * vals[1], vals[2]) if op == "fma" else (vals[0], -vals[1] if op == "sub" else vals[1])
            s, err = _two_sum(a, b)
            x = _odd(_exact_zero(s, a, b, mode), err)
    bits = _round(x, fmt, mode)
    return _flush_bits(bits, fmt) if ftz else bits


def _f64(op: str, a, b, c, mode: str) -> np.ndarray:
    """``add``/``sub``/``mul``/``div``/``fma`` in f64 under ``mode``: the result values; a NaN lane as
    :func:`_f64_nans` gives it."""
    with np.errstate(all="ignore"):
        fin = np.isfinite(a) & np.isfinite(b) & (np.isfinite(c) if c is not None else True)
        exact = np.zeros(a.shape, bool)  # lanes computed with Fractions
        if op in ("add", "sub"):
            addend = -b if op == "sub" else b
            s, err = _two_sum(a, addend)
            s = _exact_zero(s, a, addend, mode)
            r = _directed64(s, err, mode, np.isinf(s) & fin)
        elif op == "mul":
            s, err, ok = _two_prod(a, b)
            r = _directed64(s, err, mode, np.isinf(s) & fin)
            exact = fin & ~ok & (mode != "rn")
        elif op == "div":
            s = a / b
            hi, lo, ok = _two_prod(s, b)
            rest = np.sign((a - hi) - lo) * np.sign(b)  # the sign of a/b - s (a - hi is exact: hi is within 2x of a)
            r = _directed64(s, np.where(ok, rest, 0.0), mode, np.isinf(s) & fin & (b != 0))
            # Dekker's product is exact and a - hi too (hi within 2x of a) unless a quotient is subnormal
            exact = fin & (b != 0) & (a != 0) & (~ok | (np.abs(s) < 2.0**-1021)) & (mode != "rn")
        else:  # fma: finite lanes exactly; an infinite or NaN operand gives IEEE's special result
            p = np.where(np.isfinite(a) & np.isfinite(b), 0.0, a * b)
            r = p + c
            exact = fin
        if exact.any():
            r = np.array(r, np.float64)
            for i in np.flatnonzero(exact):
                r[i] = _exact64(op, float(a[i]), float(b[i]), None if c is None else float(c[i]), mode)
    nan = np.isnan(r)
    return _f64_nans(op, a, b, c, mode, r, nan) if nan.any() else r


def _f64_nans(op: str, a, b, c, mode: str, r, nan) -> np.ndarray:
    """``r`` with its NaN lanes (``nan``) as an H100 gave them (round 39, ``T.ptx`` itself): DADD/DMUL/DFMA and
    ``div.rn.f64`` return a NaN operand quieted, its sign and payload kept, and an invalid operation (inf - inf,
    0 x inf, 0 / 0, inf / inf) ``0xfff8000000000000``. Refused where that does not decide the bits: two NaN
    operands (``add a, b`` and ``add b, a`` both returned B's NaN: ptxas orders a commutative instruction's operands
    as it likes, so which one comes out is not the PTX's to say), an ``fma`` whose product is invalid while its
    addend is a NaN (not measured), and the directed rounding modes (measured for ``add.rz`` only)."""
    if mode != "rn":
        raise _Refused(f"an f64 NaN result of {op}.{mode}: the GPU's f64 NaN bits are measured under .rn only")
    operands = [a, b] + ([c] if c is not None else [])
    if (nan & (sum(np.isnan(x).astype(np.int8) for x in operands) > 1)).any():
        raise _Refused(
            f"{op}.rn.f64 of two NaN operands: which NaN the GPU returns depends on the operand order ptxas "
            "gives the SASS instruction (an H100 returned B's for a + b and for b + a)"
        )
    with np.errstate(all="ignore"):
        if op == "fma":
            p = a * b
            if (nan & np.isnan(p) & np.isnan(c)).any():
                raise _Refused(
                    "fma.rn.f64 of an invalid product (0 x inf) and a NaN addend: which NaN the GPU "
                    "returns is not measured"
                )
            ieee = p + c
        else:
            ieee = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](a, b)
    return np.where(nan, ieee, r)


def _exact64(op, a, b, c, mode) -> float:
    """One lane of an f64 operation from its exact rational value."""
    fa, fb = Fraction(a), Fraction(b)
    if op == "fma":
        p, fc = fa * fb, Fraction(c)
        both = p == 0 and c == 0 and (math.copysign(1, a) * math.copysign(1, b) == math.copysign(1, c))
        zero = math.copysign(0.0, c) if both else (-0.0 if mode == "rm" else 0.0)
        return _fraction64(p + fc, mode, zero)
    x = fa * fb if op == "mul" else fa / fb
    return _fraction64(x, mode, math.copysign(0.0, a) * math.copysign(1, b))


def _out64(r) -> np.ndarray:
    return np.asarray(r, np.float64).view(np.uint64)


# ---- instruction families ------------------------------------------------------------------------------
_ROUND_FREE = (
    "no rounding modifier: ptxas may contract it with a neighbouring multiply or add into one FMA (it does across "
    "inline-asm blocks), so its rounding depends on the rest of the kernel; write .rn"
)


def _float_operands(bits_list, fmt, lanes, lane_width):
    """Per lane, the float64 values of each operand's bits."""
    return [[_value(p, fmt) for p in _split(b, lane_width, lanes)] for b in bits_list]


def _arith(op: str):
    """``add``/``sub``/``mul``/``fma``/``mad`` (f32, f32x2, f64, and the mixed ``.f32.f16``/``.f32.bf16`` lines)."""

    def refuse(ptx):
        if not ptx.mods.get("rnd"):
            return _ROUND_FREE
        return None

    def compute(ptx, vals):
        ty, mode = ptx.mods["type"], ptx.mods["rnd"]
        ftz, sat = bool(ptx.mods.get("ftz")), bool(ptx.mods.get("sat"))
        src = ptx.mods.get("srctype")
        if ty == "f64":
            a, b, *c = (_value(_reg_bits(v, 64), F64) for v in vals)
            return _out64(_f64("fma" if op == "mad" else op, a, b, c[0] if c else None, mode)), 64, False
        width, lanes = (64, 2) if ty == "f32x2" else (32, 1)
        n_src = 2 if op in ("fma", "mad") else 1  # the leading operands of the mixed line's 16-bit srctype
        outs = []
        for lane in range(lanes):
            ops = []
            for k, v in enumerate(vals):
                if src and k < n_src:
                    ops.append((_value(_reg_bits(v, 16), _FMT[src]), _FMT[src]))
                else:
                    ops.append((_value(_split(_reg_bits(v, width), 32, lanes)[lane], F32), F32))
            r = _small("fma" if op == "mad" else op, ops, F32, mode, ftz)
            outs.append(_clamp_bits(r, F32, "sat") if sat else r)
        return _join(outs, 32), width, False

    return compute, refuse


def _half_arith(op: str):
    """``add_half``/``sub_half``/``mul_half``/``fma_half``: f16/bf16 and their x2 packings, rounded at their width."""

    def refuse(ptx):
        if not ptx.mods.get("rnd"):
            return _ROUND_FREE
        if ptx.mods.get("oob"):
            return "fma.oob: the out-of-bounds NaN operand pattern is not modelled"
        return None

    def compute(ptx, vals):
        ty = ptx.mods["type"]
        fmt, lanes = _FMT[ty[:-2] if ty.endswith("x2") else ty], 2 if ty.endswith("x2") else 1
        ftz = bool(ptx.mods.get("ftz"))
        clamp = "sat" if ptx.mods.get("sat") else "relu" if ptx.mods.get("relu") else ""
        per = _float_operands([_reg_bits(v, 16 * lanes) for v in vals], fmt, lanes, 16)
        outs = []
        for lane in range(lanes):
            r = _small(op, [(per[k][lane], fmt) for k in range(len(vals))], fmt, "rn", ftz)
            outs.append(_clamp_bits(r, fmt, clamp) if clamp else r)
        return _join(outs, 16), 16 * lanes, False

    return compute, refuse


def _mixed_vec(op: str):
    """sm_107's mixed-width vectors: ``up`` (f16x2/bf16x2 ``a`` widened to f32x2), ``down`` (f32x2 operands, an
    f16x2/bf16x2 result), ``fma_mixed_vec`` (f32x2 = f16x2/bf16x2 * f32x2 + f32x2)."""

    def refuse(ptx):
        if not ptx.mods.get("rnd"):
            return _ROUND_FREE
        return None

    def compute(ptx, vals):
        mode, ftz = ptx.mods["rnd"], bool(ptx.mods.get("ftz"))
        dty = ptx.mods["dtype"]
        types = [ptx.mods["atype"]] + ([ptx.mods["btype"]] if "btype" in ptx.mods else []) + [ptx.mods["ctype"]]
        ops = []
        for v, t in zip(vals, types):
            fmt = _FMT[t[:-2]]
            w = 16 if fmt is not F32 else 32
            ops.append([(_value(p, fmt), fmt) for p in _split(_reg_bits(v, 2 * w), w, 2)])
        out = _FMT[dty[:-2]]
        w = 16 if out is not F32 else 32
        outs = [_small(op, [o[lane] for o in ops], out, mode, ftz) for lane in range(2)]
        return _join(outs, w), 2 * w, False

    return compute, refuse


def _neg_abs(kind: str):
    """``neg``/``abs_f`` (f32, f64) and ``neg_half``/``abs_half``: the sign changed; FADD/HADD2 in the SASS, so a
    NaN becomes the canonical NaN and ``.ftz`` flushes a subnormal input (f64: DADD, the NaN quieted)."""

    def compute(ptx, vals):
        ty = ptx.mods["type"]
        fmt, lanes = _FMT[ty[:-2] if ty.endswith("x2") else ty], 2 if ty.endswith("x2") else 1
        ftz = bool(ptx.mods.get("ftz"))
        outs = []
        for p in _split(_reg_bits(vals[0], fmt.width * lanes), fmt.width, lanes):
            v = _value(p, fmt)
            v = _flush(v, fmt) if ftz else v
            r = -v if kind == "neg" else np.abs(v)
            # f64 (DADD -RZ, -x / |x|): the NaN quieted with its own sign, neither flipped nor cleared (an H100,
            # rounds 37 and 39); the narrower formats' FADD/HADD2: the canonical NaN
            nan_bits = quieted(v).view(np.uint64) if fmt is F64 else np.uint64(fmt.nan)
            outs.append(np.where(np.isnan(v), nan_bits, _encode(r, fmt)))
        return _join(outs, fmt.width), fmt.width * lanes, False

    return compute, None


def _copysign(ptx, vals):
    """``copysign d, a, b``: ``b`` with ``a``'s sign bit (a LOP3: every bit moves, NaN payloads too)."""
    fmt = _FMT[ptx.mods["type"]]
    a, b = (_reg_bits(v, fmt.width) for v in vals)
    s = np.uint64(fmt.sign)
    return (b & ~s) | (a & s), fmt.width, False


def _testp(ptx, vals):
    """``testp.op``: a predicate (1/0) from the operand's class; zeros are ``normal`` (as the SASS tests)."""
    fmt = _FMT[ptx.mods["type"]]
    mag = _reg_bits(vals[0], fmt.width) & np.uint64(fmt.sign - 1)
    inf = np.uint64(fmt.exp_mask)
    small = np.uint64(1 << (fmt.p - 1))  # the smallest normal's bits
    test = {
        "finite": mag < inf,
        "infinite": mag == inf,
        "number": mag <= inf,
        "notanumber": mag > inf,
        "normal": ((mag >= small) & (mag < inf)) | (mag == 0),
        "subnormal": (mag > 0) & (mag < small),
    }[ptx.mods["op"]]
    return test.astype(np.uint64), 32, False


# ---- min / max -----------------------------------------------------------------------------------------
_INT_MINMAX = {
    "u16": (16, False, 1),
    "u32": (32, False, 1),
    "u64": (64, False, 1),
    "s16": (16, True, 1),
    "s32": (32, True, 1),
    "s64": (64, True, 1),
    "u16x2": (16, False, 2),
    "s16x2": (16, True, 2),
}


def _signed(bits, width):
    return bits.astype(_UINT[width]).view(_SINT[width]).astype(np.int64)


def _pick(a, b, is_max):
    """max/min of float64 values: a NaN gives the other value, -0 < +0 (two NaNs: NaN)."""
    r = np.fmax(a, b) if is_max else np.fmin(a, b)
    tie = (a == b) & (np.signbit(a) != np.signbit(b))  # +0 and -0
    return np.where(tie, 0.0 if is_max else -0.0, r)


def _minmax(is_max: bool):
    """``min``/``max`` of every type of the entry, and ``min3``/``max3`` (f32)."""

    def compute(ptx, vals):
        ty = ptx.mods["type"]
        if ty in _INT_MINMAX:
            width, signed, lanes = _INT_MINMAX[ty]
            outs = []
            for ps in zip(*(_split(_reg_bits(v, width * lanes), width, lanes) for v in vals)):
                xs = [_signed(p, width) for p in ps] if signed else list(ps)
                r = xs[0]
                for x in xs[1:]:
                    r = np.maximum(r, x) if is_max else np.minimum(r, x)
                if ptx.mods.get("relu"):
                    r = np.maximum(r, 0)
                outs.append(r.astype(np.int64).view(np.uint64) & np.uint64((1 << width) - 1) if signed else r)
            return _join(outs, width), width * lanes, False
        fmt, lanes = _FMT[ty[:-2] if ty.endswith("x2") else ty], 2 if ty.endswith("x2") else 1
        ftz, nan_mode = bool(ptx.mods.get("ftz")), bool(ptx.mods.get("nan"))
        xorsign, absolute = bool(ptx.mods.get("xorsign")), bool(ptx.mods.get("abs"))
        outs = []
        for ps in zip(*(_split(_reg_bits(v, fmt.width * lanes), fmt.width, lanes) for v in vals)):
            xs = [_value(p, fmt) for p in ps]
            xs = [_flush(x, fmt) for x in xs] if ftz else xs
            sign = np.signbit(xs[0]) ^ np.signbit(xs[1])  # .xorsign: of the inputs, NaNs' sign bits included
            if absolute:
                xs = [np.abs(x) for x in xs]
            r = xs[0]
            for x in xs[1:]:
                r = _pick(r, x, is_max)
            nan = np.isnan(r) | (nan_mode & np.any([np.isnan(x) for x in xs], axis=0))
            if xorsign:
                r = np.where(sign, -np.abs(r), np.abs(r))
            if fmt is F64 and nan.any():
                # one NaN gives the other operand; of two NaNs an H100 returned B's for max(a, b) and max(b, a) alike
                # (DSETP.MAX + selects: the order is ptxas', not the PTX's)
                raise _Refused("min/max.f64 of two NaN operands: which one the GPU returns depends on ptxas' order")
            outs.append(np.where(nan, np.uint64(fmt.nan or 0), _encode(np.where(nan, 0.0, r), fmt)))
        return _join(outs, fmt.width), fmt.width * lanes, False

    return compute, None


# ---- division and reciprocal square root ---------------------------------------------------------------
def _rcp_mufu(b32):
    """MUFU.RCP as modelled: 1/b rounded to f32, a subnormal reciprocal flushed (f32 values in float64 out)."""
    with np.errstate(all="ignore"):
        r = np.float64(1.0) / b32
    return _value(_flush_bits(_round(r, F32, "rn"), F32), F32)


def _div(ptx, vals):
    """``div.rn/rz/rm/rp`` (f32, f64: exact), ``div.approx.f32`` and ``div.full.f32`` (ptxas' sequences)."""
    ty, mode, ftz = ptx.mods["type"], ptx.mods["mode"], bool(ptx.mods.get("ftz"))
    if ty == "f64":
        a, b = (_value(_reg_bits(v, 64), F64) for v in vals)
        return _out64(_f64("div", a, b, None, mode)), 64, False
    a, b = (_value(_reg_bits(v, 32), F32) for v in vals)
    if ftz:
        a, b = _flush(a, F32), _flush(b, F32)
    with np.errstate(all="ignore"):
        if mode in ("approx", "full"):
            if not ftz:  # ptxas scales a subnormal divisor (and the dividend) by 2^24 first
                tiny = np.abs(b) < F32.tiny
                a, b = np.where(tiny, a * 2.0**24, a), np.where(tiny, b * 2.0**24, b)
                a = _value(_round(a, F32, "rn"), F32)
            if mode == "full":  # and a huge one by 1/4
                huge = np.abs(b) > 2.0**126
                a, b = np.where(huge, a * 0.25, a), np.where(huge, b * 0.25, b)
                a = _value(_round(a, F32, "rn"), F32)
                a = _flush(a, F32) if ftz else a
            bits = _round(a * _rcp_mufu(b), F32, "rn")  # the product of two f32 is exact in float64
        else:  # a quotient of two f32 off the 25-bit grid (f32 values and midpoints) is >= 2^-50 relative away
            bits = _round(a / b, F32, mode)  # from it, so the float64 quotient rounds as the exact one in any mode
    return (_flush_bits(bits, F32) if ftz else bits), 32, False


def _rsqrt(ptx, vals):
    """``rsqrt.approx.f32``: 1/sqrt(x) rounded once (``.ftz``: subnormal input and result flushed)."""
    ftz = bool(ptx.mods.get("ftz"))
    x = _value(_reg_bits(vals[0], 32), F32)
    x = _flush(x, F32) if ftz else x
    with np.errstate(all="ignore"):
        bits = _round(1.0 / np.sqrt(x), F32, "rn")
    return (_flush_bits(bits, F32) if ftz else bits), 32, False


def _rsqrt_refuse(ptx):
    if ptx.mods.get("type") == "f64":
        return "rsqrt.approx.f64: ptxas' MUFU.RSQ64H + Newton sequence has no stated bound"
    return None


# ---- cvt -----------------------------------------------------------------------------------------------
_INT_TYPES = {
    "u8": (8, False),
    "u16": (16, False),
    "u32": (32, False),
    "u64": (64, False),
    "s8": (8, True),
    "s16": (16, True),
    "s32": (32, True),
    "s64": (64, True),
}
_IRND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _float_to_int(v, width, signed):
    """Integer-valued float64 ``v`` saturated to the integer type (NaN -> 0): its bits."""
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    v = np.where(np.isnan(v), 0.0, v)
    top, bottom = v >= float(hi + 1), v <= float(lo)  # float(2^63 - 1) rounds up: compare with 2^63
    mid = np.where(top | bottom, 0.0, v)
    r = mid.astype(np.int64).view(np.uint64) if signed else mid.astype(np.uint64)
    r = np.where(top, np.uint64(hi), np.where(bottom, np.uint64(lo & ((1 << 64) - 1)), r))
    return r & np.uint64((1 << width) - 1) if width < 64 else r


def _int_value(bits, width, signed):
    """(s, err): the integer of the register bits as an exact float64 pair (64-bit ones: high + low halves)."""
    if width < 64:
        v = _signed(bits, width) if signed else bits.astype(np.int64)
        return v.astype(np.float64), np.zeros(bits.shape)
    hi = (bits >> np.uint64(32)).astype(np.int64)
    if signed:
        hi = np.where(hi >= 1 << 31, hi - (1 << 32), hi)
    lo = (bits & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return _two_sum(hi.astype(np.float64) * 2.0**32, lo)


def _int_to_int(bits, aw, asigned, dw, dsigned, sat):
    """``cvt`` between integer types: the source's value (sign- or zero-extended from its width) in ``dw`` bits,
    or with ``.sat`` clamped to the destination's range."""
    mask = np.uint64((1 << dw) - 1 if dw < 64 else (1 << 64) - 1)
    if asigned:
        v = _signed(bits, aw)  # int64
        if sat:
            lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsigned else (0, min((1 << dw) - 1, (1 << 63) - 1))
            v = np.clip(v, lo, hi)
        return v.view(np.uint64) & mask, dw, dsigned
    v = bits  # uint64
    if sat:
        v = np.minimum(v, np.uint64((1 << (dw - 1)) - 1 if dsigned else (1 << dw) - 1))
    return v & mask, dw, dsigned


def _cvt(ptx, vals):
    m = ptx.mods
    d, a, rnd = m["dtype"], m["atype"], m.get("rnd") or ""
    ftz, sat = bool(m.get("ftz")), bool(m.get("sat"))
    if a in _INT_TYPES:
        aw, asigned = _INT_TYPES[a]
        bits = _reg_bits(vals[0], aw)
        if d in _INT_TYPES:  # integer -> integer: the source's value truncated to the destination, or clamped
            return _int_to_int(bits, aw, asigned, *_INT_TYPES[d], sat)
        s, err = _int_value(bits, aw, asigned)
        mode = rnd or "rn"
        if d == "f64":
            return _out64(_directed64(s, err, mode, np.zeros(s.shape, bool))), 64, False
        out = _FMT[d]
        r = _round(_odd(s, err), out, mode)
        if ftz and out is F32:
            r = _flush_bits(r, out)
        return (_clamp_bits(r, out, "sat") if sat else r), out.width, False
    src = _FMT[a]
    bits = _reg_bits(vals[0], src.width)
    x = _value(bits, src)
    if ftz and src is F32:
        x = _flush(x, F32)
    if d in _INT_TYPES:  # float -> integer: the integer rounding, saturated, NaN -> 0
        dw, dsigned = _INT_TYPES[d]
        with np.errstate(all="ignore"):
            return _float_to_int(_IRND[rnd](x), dw, dsigned), dw, dsigned
    out = _FMT[d]
    if d == a and not rnd and not sat and not (ftz and out is F32):
        return bits, out.width, False  # a move: the bits as they are
    if np.isnan(x).any() and out is F64:
        if src is not F32 or ftz or rnd or sat:
            raise _Refused("cvt to f64 of a NaN: the GPU's bits are measured for a plain cvt.f64.f32 only")
        # F2F.F64.F32 (what (double)x lowers to without fast math): the payload kept, quieted (an H100, round 37)
        return _out64(quieted(x)), 64, False
    with np.errstate(all="ignore"):
        if rnd in _IRND:
            x = _IRND[rnd](x)  # an integral value in the same format: exact
            rnd = ""
    if out is F64:
        r = _out64(x)
    else:
        r = _round(x, out, rnd or "rn")  # exact when the destination is wider: no rounding happens
    if ftz and out is F32:
        r = _flush_bits(r, out)
    if m.get("satfinite"):
        v = _value(r, out)
        r = np.where(np.isinf(v), _encode(np.copysign(out.max, v), out), r)
    if m.get("relu"):
        r = _clamp_bits(r, out, "relu")
    if sat:
        r = _clamp_bits(r, out, "sat")
    return r, out.width, False


# ---- handlers ------------------------------------------------------------------------------------------
def _spelling(ptx) -> str:
    e = ptx.entry
    return ".".join([e.mnemonic or e.name] + [ptx.mods[s.name] for s in e.slots if ptx.mods.get(s.name)])


def _handler(compute, refuse=None):
    """A handler from ``compute(ptx, values) -> (result bits as uint64, width, signed)`` (values: the input operands
    in the entry's order, one per lane of the warp) and ``refuse(ptx) -> reason or None`` (decided at build time)."""

    def build(comp, call):
        ptx = decode(call)
        if ptx is None:
            return comp.not_emulated(call.op.name)
        why = refuse(ptx) if refuse is not None else None
        if why:
            return comp.not_emulated(f"{call.op.name} ({_spelling(ptx)})", why)
        out = "p" if "p" in ptx.ops else "d"
        store, reg_dt, key = _dest(comp, call, ptx, out)
        if store is None:
            return comp.not_emulated(call.op.name, "a destination that is not a buffer element")
        ins = [comp.expr(v[0]) for n, v in ptx.ops.items() if n != out]
        name, line, spelled = call.op.name, comp.line, _spelling(ptx)

        def f(g):
            vals = [np.broadcast_to(np.asarray(fn(g)), (g.L,)) for fn in ins]
            try:
                bits, width, signed = compute(ptx, vals)
            except _Refused as e:
                raise NotEmulatedError(f"{name} ({spelled})", lineno=line, detail=str(e)) from None
            reg = np.broadcast_to(np.asarray(bits, np.uint64), (g.L,)).astype(_UINT[width])
            reg = reg.view(_SINT[width]) if signed else reg
            g.slots[key] = [to_register(reg, reg.dtype, reg_dt, signed)]
            store(g)
            return np.int32(0)

        return _guard(comp, ptx, f)

    return build


def _register(name: str, pair):
    compute, refuse = pair if isinstance(pair, tuple) else (pair, None)
    HANDLERS[f"tirx.ptx.{name}"] = _handler(compute, refuse)


for _op in ("add", "sub", "mul", "fma"):
    _register(_op, _arith(_op))
    _register(f"{_op}_half", _half_arith(_op))
_register("mad_f", _arith("mad"))
for _op in ("add", "sub"):
    _register(f"{_op}_mixed_vec_up", _mixed_vec(_op))
for _op in ("add", "sub", "mul"):
    for _t in ("f16", "bf16"):
        _register(f"{_op}_mixed_vec_down_{_t}", _mixed_vec(_op))
_register("fma_mixed_vec", _mixed_vec("fma"))
_register("neg", _neg_abs("neg"))
_register("abs_f", _neg_abs("abs"))
_register("neg_half", _neg_abs("neg"))
_register("abs_half", _neg_abs("abs"))
_register("copysign", _copysign)
_register("testp", _testp)
_register("min", _minmax(False))
_register("max", _minmax(True))
_register("min3", _minmax(False))
_register("max3", _minmax(True))
_register("div_f", _div)
_register("rsqrt", (_rsqrt, _rsqrt_refuse))
_register("cvt", _cvt)

#: the precision each entry is emulated to (for docs/emulator-ops.md)
PRECISION = {
    **{
        n: "bitwise (IEEE, every rounding modifier)"
        for n in ("add", "sub", "mul", "fma", "mad_f", "add_half", "sub_half", "mul_half", "fma_half", "cvt")
    },
    "div_f": "rn/rz/rm/rp: bitwise; approx/full.f32: a * rcp(b) as ptxas lowers it, within the ISA's 2 ulp",
    "rsqrt": "approx.f32: the function correctly rounded; the GPU's MUFU.RSQ result differs within its bound",
}
#: what of each is refused (for docs/emulator-ops.md)
MISSING = {
    **{n: "forms with no rounding modifier (ptxas may fuse them)" for n in ("add", "sub", "mul")},
    **{n: "forms with no rounding modifier (ptxas may fuse them)" for n in ("add_half", "sub_half", "mul_half")},
    "fma_half": ".oob",
    "rsqrt": "rsqrt.approx.f64",
}
