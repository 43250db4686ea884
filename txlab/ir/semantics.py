"""TIR arithmetic with CUDA's meaning, on numpy values: the one table the CPU emulator
(:mod:`txlab.emulator.interpreter`) and the static walk (:mod:`txlab.simt`) both evaluate with.

What the GPU does, per operation of the lowered device IR (TVM's CUDA codegen prints each as the
C operator or function named here; nvcc's PTX is what these follow):

* ``Div``/``Mod`` on integers truncate toward zero, as C's ``/`` and ``%`` (``-7 / 2 == -3``,
  ``-7 % 2 == -1``); ``FloorDiv``/``FloorMod`` floor (TVM emits them as explicit sequences). A
  division by zero has no defined value in C; here it gives the dividend (``x / 0 == x``) and
  ``x % 0 == 0`` rather than a numpy warning.
* Integer ``+ - *`` wrap at the type's width (two's complement; numpy's fixed-width arithmetic).
* Shifts by at least the width give 0 (``<<``, logical ``>>``) or the sign (arithmetic ``>>``):
  PTX ``shl``/``shr`` clamp the amount -- numpy does the same.
* float32 with fast math (``--use_fast_math``, txlab's default build): every add, sub, mul, fma,
  div, min, max and comparison flushes denormal inputs and results to zero of the same sign (the
  ``.ftz`` forms); ``a / b`` is ``div.approx.ftz.f32`` (``a * rcp(b)``). Without fast math:
  IEEE round-to-nearest-even, denormals kept, ``div.rn``.
* ``Min``/``Max`` on floats are ``fminf``/``fmaxf`` (PTX ``min``/``max``): a NaN operand gives the
  other operand, two NaNs the canonical NaN ``0x7fffffff``, and ``-0.0`` orders below ``+0.0``.
* Casts float -> int round toward zero (``cvt.rzi``), NaN -> 0, out of range -> the type's
  min/max (saturating: PTX ``cvt`` saturates float-to-int); but to 8 and 16 bits nvcc converts to
  32 bits and keeps the low bits (``(signed char)300.0f == 44``; bfloat16 sources, and float16 to
  16 bits, saturate to the target). int/float -> float round to nearest even; to fp8 saturate to
  the largest finite value (``cvt.rn.satfinite``: ``448.0`` for e4m3 from 1000 or inf); only the
  conversion to float64 flushes a float32 denormal under fast math (``cvt.ftz.f64.f32``: bfloat16
  keeps it); int -> int wraps; anything -> bool is ``!= 0``.
* ``Select`` is ``c ? t : f`` per lane.
* ``__shfl*_sync`` read the lane :func:`shfl_source` names (PTX ``shfl.sync``'s rule).

Each function takes numpy arrays, numpy scalars or Python numbers and returns numpy values;
:func:`binary` returns the function for one operation and dtype (one cached object per key, so
both evaluators hold the same function).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "BINARY",
    "binary",
    "cast",
    "fma",
    "ftz",
    "is_float",
    "select",
    "shfl_lanes",
    "shfl_source",
    "trunc_div",
    "trunc_mod",
    "floor_div",
    "floor_mod",
    "fmin",
    "fmax",
    "ulp_distance",
]

_F32_EXP = np.uint32(0x7F800000)
_F32_SIGN = np.uint32(0x80000000)
CANONICAL_NAN_F32 = np.uint32(0x7FFFFFFF)
_F32_MIN = np.float32(1.17549435e-38)  # smallest normal float32


def is_float(dtype) -> bool:
    """True for TVM float dtypes (``float32``, ``float16x4``, ``bfloat16``, ``float8_e4m3fn``...)."""
    return str(dtype).startswith(("float", "bfloat"))


def _ret(r):
    return r if np.ndim(r) else np.asarray(r)[()]


# ---- integers -----------------------------------------------------------------------------------
def trunc_div(a, b):
    """C's ``a / b`` on integers: the quotient rounded toward zero (``x / 0`` gives ``x``)."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        # the floored quotient, one up where it was rounded down past zero (a non-zero remainder
        # and operands of opposite signs); |a| would overflow for the type's minimum (INT_MIN / 3)
        q = np.floor_divide(a, safe)
        up = (np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))
        q = (q + up.astype(q.dtype)).astype(np.result_type(a, b))
    return _ret(q)


def trunc_mod(a, b):
    """C's ``a % b`` on integers: the remainder takes the dividend's sign (``x % 0`` gives 0)."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        r = (a - trunc_div(a, b) * b).astype(np.result_type(a, b))
    return _ret(np.where(b == 0, 0, r).astype(r.dtype))


def floor_div(a, b):
    """TIR ``FloorDiv``: the quotient rounded toward minus infinity (``x // 0`` gives ``x``)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return _ret(np.floor(np.true_divide(a, b)))
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        return _ret(np.floor_divide(a, safe).astype(np.result_type(a, b)))


def floor_mod(a, b):
    """TIR ``FloorMod``: the remainder takes the divisor's sign (``x mod 0`` gives 0)."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            return _ret(np.mod(a, b))
        safe = np.where(b == 0, 1, b)
        return _ret(np.where(b == 0, 0, np.mod(a, safe)).astype(np.result_type(a, b)))


# ---- floats -------------------------------------------------------------------------------------
def ftz(x):
    """float32 ``x`` with denormals flushed to zero of the same sign (PTX ``.ftz``); other dtypes
    unchanged."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return _ret(x)
    with np.errstate(invalid="ignore"):
        tiny = np.abs(x) < _F32_MIN  # denormals (zeros too: flushing them is a no-op)
    if not tiny.any():  # the common case: one cheap pass, nothing to do
        return _ret(x)
    return _ret(np.where(tiny, np.copysign(np.float32(0), x), x).astype(np.float32))


def _nan_canon(r, a, b):
    """Two NaN operands of ``min``/``max`` give the canonical NaN."""
    both = np.isnan(a) & np.isnan(b)
    if not np.any(both):
        return r
    if r.dtype == np.float32:
        return np.where(both, CANONICAL_NAN_F32.view(np.float32), r)
    return np.where(both, np.array(np.nan, r.dtype), r)


def fmin(a, b):
    """``fminf``/PTX ``min``: NaN gives the other operand, two NaNs the canonical NaN, -0 < +0."""
    a, b = np.asarray(a), np.asarray(b)
    r = np.fmin(a, b)
    r = np.where(a == b, np.where(np.signbit(a), a, b), r)  # min(-0, +0) == min(+0, -0) == -0
    return _ret(_nan_canon(np.asarray(r), a, b))


def fmax(a, b):
    """``fmaxf``/PTX ``max``: NaN gives the other operand, two NaNs the canonical NaN, +0 > -0."""
    a, b = np.asarray(a), np.asarray(b)
    r = np.fmax(a, b)
    r = np.where(a == b, np.where(np.signbit(a), b, a), r)
    return _ret(_nan_canon(np.asarray(r), a, b))


def fma(a, b, c, *, flush: bool = False):
    """``fma.rn``: ``a * b + c`` with one rounding, for float32/float16/bfloat16 operands
    (``flush``: the ``.ftz`` form). The product is exact in float64; the sum is rounded to odd in
    float64 and then to the operand type, which is the correctly rounded result (53 >= 2*24 + 2).
    float64 operands: Dekker's exact product and a two-sum, then one final add -- correctly rounded
    except where that last add rounds a tie the exact sum does not have (rare; not bitwise-proven)."""
    dt = np.result_type(np.asarray(a).dtype, np.asarray(b).dtype, np.asarray(c).dtype)
    if flush:
        a, b, c = ftz(a), ftz(b), ftz(c)
    if dt == np.float64:
        return _ret(_fma64(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)))
    with np.errstate(all="ignore"):
        p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        c64 = np.asarray(c, np.float64)
        s = p + c64
        # two-sum error of p + c: exact; nonzero means s was rounded
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        bits = np.asarray(s).view(np.uint64)
        fix = (err != 0) & np.isfinite(s) & ((bits & np.uint64(1)) == 0)
        if np.any(fix):  # round to odd: move to the odd neighbour on the exact value's side
            s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        r = np.asarray(s).astype(dt)
    return ftz(r) if flush else _ret(r)


def _split(x):
    t = x * 134217729.0
    hi = t - (t - x)
    return hi, x - hi


def _fma64(a, b, c):
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        e = (p - (s - bb)) + (c - bb)
        r = s + (pe + e)
        return np.where(np.isfinite(r) & np.isfinite(p), r, p + c)


def _f32_fast(fn):
    """``fn`` on float32 operands in its ``.ftz`` form: inputs and result flushed."""

    def op(a, b):
        return ftz(fn(ftz(a), ftz(b)))

    op.__name__ = f"{getattr(fn, '__name__', 'op')}_ftz"
    return op


def _cmp_fast(fn):
    def op(a, b):
        return fn(ftz(a), ftz(b))

    op.__name__ = f"{getattr(fn, '__name__', 'cmp')}_ftz"
    return op


def rcp_approx_ftz(b):
    """``rcp.approx.ftz.f32`` as the emulator models MUFU.RCP: ``1 / b`` rounded to float32 and
    flushed (the hardware is within 1 ulp of it)."""
    with np.errstate(all="ignore"):
        return ftz(np.asarray(np.float32(1) / np.asarray(ftz(b), np.float64)).astype(np.float32))


def div_approx_ftz(a, b):
    """``div.approx.ftz.f32``: ``a * rcp(b)``, the reciprocal rounded to float32 and flushed (so a
    divisor above 2^126 gives 0). The hardware's MUFU.RCP is within 1 ulp of the rounded
    reciprocal: the quotient is within 2 ulp of the GPU's for ``|b|`` in [2^-126, 2^126]."""
    with np.errstate(all="ignore"):
        return ftz(np.multiply(ftz(a), rcp_approx_ftz(b), dtype=np.float32))


def _true_div(a, b):
    with np.errstate(all="ignore"):
        return np.true_divide(a, b)


def _int_or_float(fi, ff):
    """For callers that do not know the dtype (Python numbers): by the values' kind."""

    def op(a, b):
        if _is_int(a) and _is_int(b):
            return fi(a, b)
        return ff(a, b)

    op.__name__ = getattr(fi, "__name__", "op")
    return op


def _is_int(v):
    if isinstance(v, (bool, int, np.integer, np.bool_)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "iub"


def _float_mod(a, b):
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


#: TIR binary expression node -> numpy function (integer or IEEE float semantics by the operands'
#: kind). :func:`binary` specialises by dtype and build (fast math).
BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": _int_or_float(trunc_div, _true_div),
    "Mod": _int_or_float(trunc_mod, _float_mod),
    "FloorDiv": floor_div,
    "FloorMod": floor_mod,
    "Min": _int_or_float(np.minimum, fmin),
    "Max": _int_or_float(np.maximum, fmax),
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or,
    "BitwiseXor": np.bitwise_xor,
    "LShift": np.left_shift,
    "RShift": np.right_shift,
}

_INT = {"Div": trunc_div, "Mod": trunc_mod, "Min": np.minimum, "Max": np.maximum}
_FLOAT = {"Div": _true_div, "Mod": _float_mod, "Min": fmin, "Max": fmax}
_FTZ_ARITH = ("Add", "Sub", "Mul", "Min", "Max")
_FTZ_CMP = ("EQ", "NE", "LT", "LE", "GT", "GE")


@functools.lru_cache(maxsize=None)
def binary(name: str, dtype: str = "", fast_math: bool = True):
    """The numpy function of TIR binary node ``name`` (``"Add"``, ``"FloorDiv"``...) whose
    *operands* have TVM dtype ``dtype`` (``""``: decided by the values), in a build with or
    without fast math. Unknown names give None."""
    base = BINARY.get(name)
    if base is None or not dtype:
        return base
    scalar = str(dtype).split("x")[0] if not str(dtype).startswith("float8") else str(dtype)
    if is_float(scalar):
        fn = _FLOAT.get(name, base)
        if scalar == "float32" and fast_math:
            if name == "Div":
                return div_approx_ftz
            if name in _FTZ_ARITH:
                return _f32_fast(fn)
            if name in _FTZ_CMP:
                return _cmp_fast(fn)
        return fn
    return _INT.get(name, base)


def ulp_distance(got, want) -> np.ndarray:
    """Per element, how many float32 values lie between ``got`` and ``want`` (0: the same bits or
    both NaN; +0 and -0 are 0 apart)."""
    g = np.asarray(got, np.float32).ravel()
    w = np.asarray(want, np.float32).ravel()
    gi = g.view(np.int32).astype(np.int64)
    wi = w.view(np.int32).astype(np.int64)
    gi = np.where(gi < 0, -(gi & 0x7FFFFFFF), gi)
    wi = np.where(wi < 0, -(wi & 0x7FFFFFFF), wi)
    return np.where(np.isnan(g) & np.isnan(w), 0, np.abs(gi - wi))


def select(c, t, f):
    """``c ? t : f`` per lane (a per-lane condition over vector values broadcasts on lanes)."""
    c = np.asarray(c)
    if c.ndim and np.ndim(t) > c.ndim or c.ndim and np.ndim(f) > c.ndim:
        c = c.reshape(c.shape + (1,) * (max(np.ndim(t), np.ndim(f)) - c.ndim))
    return _ret(np.where(c, t, f))


def _cvt_int_type(src: np.dtype, to: np.dtype) -> np.dtype:
    """The integer type nvcc's ``cvt.rzi`` converts a float of type ``src`` to for ``(to) x``:
    8- and 16-bit targets go through a 32-bit ``cvt.rzi.s32``/``.u32`` (saturating there) and keep
    the low bits, except bfloat16 sources (``cvt.rzi.s8.bf16`` & co.) and float16 to 16 bits
    (``cvt.rzi.s16.f16``), which saturate to the target itself (read off nvcc 13's PTX)."""
    if to.itemsize >= 4 or src.name == "bfloat16" or (src.name == "float16" and to.itemsize == 2):
        return to
    return np.dtype(np.int32 if to.kind == "i" else np.uint32)


def _satfinite(a, to: np.dtype):
    """``cvt.rn.satfinite`` to an fp8 type (``__nv_fp8_e4m3(x)`` & co.): beyond the largest finite
    value, infinities included, gives that value with the sign; NaN stays NaN."""
    import ml_dtypes

    top = float(ml_dtypes.finfo(to).max)
    with np.errstate(invalid="ignore"):
        return np.clip(a, -top, top) if a.dtype.kind == "f" else np.clip(a.astype(np.float32), -top, top)


def cast(v, to: np.dtype, *, fast_math: bool = True):
    """``(to) v`` as CUDA converts (see the module docstring). ``to`` is a numpy dtype (bfloat16 and
    float8 through ml_dtypes)."""
    to = np.dtype(to)
    a = np.asarray(v)
    if to == np.bool_:
        return _ret(np.not_equal(a, 0))
    src_float = a.dtype.kind not in "iub"
    if fast_math and a.dtype == np.float32 and to == np.float64:
        a = np.asarray(ftz(a))  # cvt.ftz.f64.f32; the f16/bf16/fp8 conversions have no .ftz
    if src_float and to.name.startswith(("float8_e4m3", "float8_e5m2")):
        a = _satfinite(a, to)
    if src_float and to.kind in "iu":
        final, to = to, _cvt_int_type(a.dtype, to)
        info = np.iinfo(to)
        with np.errstate(all="ignore"):
            x = np.trunc(a.astype(np.float64))
            x = np.where(np.isnan(x), 0.0, x)
            hi = x >= float(info.max)  # float(2^63 - 1) rounds to 2^63: saturate first
            lo = x <= float(info.min)
            r = np.clip(x, info.min, info.max)
            r = np.where(hi | lo, 0, r).astype(to)
            r = np.where(hi, to.type(info.max), np.where(lo, to.type(info.min), r)).astype(to)
        return _ret(r.astype(final))  # the low bits of a 32-bit conversion (_cvt_int_type)
    with np.errstate(all="ignore"):
        r = a.astype(to)
    if fast_math and a.dtype == np.float64 and to == np.float32:
        r = ftz(r)  # cvt.rn.ftz.f32.f64: a result below FLT_MIN is flushed (an H100, round 37)
    return _ret(r)


def shfl_source(kind, lane, b, w):
    """Source lane of ``shfl.sync.<kind>`` (``kind`` "idx", "up", "down" or "xor") as the PTX ISA
    defines it: CUDA's ``__shfl*_sync`` pass the lane or offset ``b`` as is and ``c = (32 - width)
    << 8`` (| 0x1f except for ``up``); the instruction uses only ``b[4:0]`` and reads the own lane
    when the source leaves the segment. ``lane`` is the lane (0-31) of each thread."""
    c = (((32 - w) & 0x1F) << 8) | (0 if kind == "up" else 0x1F)
    return shfl_lanes("bfly" if kind == "xor" else kind, lane, np.asarray(b).astype(np.int64), c)[0]


def shfl_lanes(mode, lane, b, c):
    """(source lane, in-range predicate) of ``shfl.sync.<mode>`` (``mode`` "idx", "up", "down" or "bfly") for lanes
    ``lane``, the PTX ISA's rule: ``b[4:0]`` the lane or offset, ``c`` packs the clamp value (bits 4:0) and the
    segment mask (bits 12:8); a source outside the segment reads the own lane and clears the predicate."""
    bval = b & 0x1F
    cval, seg = c & 0x1F, (c >> 8) & 0x1F
    maxl = (lane & seg) | (cval & ~seg & 0x1F)
    if mode == "up":
        j = lane - bval
        ok = j >= maxl
    else:
        j = lane + bval if mode == "down" else lane ^ bval if mode == "bfly" else (lane & seg) | (bval & ~seg & 0x1F)
        ok = j <= maxl
    return np.where(ok, j, lane), ok
