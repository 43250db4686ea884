"""NaN results as NVIDIA's float units give them, read off an H100 (``tests/test_emulator_nan.py`` lists the bits).

float32, float16 and bfloat16 keep no NaN payload: FADD/FMUL/FFMA/FMNMX/FRND/MUFU, HADD2/HMUL2/HFMA2 and the
conversions to those formats from float32 or narrower (F2FP, F2F, ``HADD2.F32`` for f16 -> f32, the fp8 unpacks)
return ``0x7fffffff`` (f32) or ``0x7fff`` (f16, bf16) for any NaN result, whatever NaN went in; libdevice's routines
too (their NaN paths end in an FADD/FFMA/MUFU or select the constant ``+QNAN``). Conversions to fp8 (F2FP.SATFINITE)
give ``0x7f`` for e4m3 and e5m2 alike, the sign dropped. numpy keeps payloads (and an invalid operation gives x86's
``0xffc00000``), so every such result of the emulator goes through :func:`canonical`.

What moves bits keeps them, as on the GPU: loads, stores, selects, shuffles, ``copysign`` (LOP3), bfloat16 ->
float32 (a 16-bit shift: ``SHF.L.U32``) and TVM's float16/bfloat16 ``max``/``min`` (``a > b ? a : b``: HSETP2 +
SEL). Negation and ``fabs`` are *not* bit operations in the SASS (``-x`` is ``FADD -x, -RZ``, ``fabsf`` is
``FADD |x|, -RZ``; half: ``HADD2``/``HFMA2.BF16``), so they canonicalise. Where the compiler folds an operation
away (TVM simplifies ``x * 1`` and ``x + 0`` to ``x``), the emulator runs the same simplified IR: the bits kept on
both.

float64 follows x86's rules, which numpy's float64 arithmetic already gives: a NaN operand comes out quieted (its
sign and payload kept; of two, the first), an invalid operation gives ``0xfff8000000000000``. Three places differ
from numpy and are fixed here: ``fabs`` (DADD: the quieted operand, sign kept), ``fmin``/``fmax`` of two NaNs
(DMNMX: the first, quieted) and libdevice functions of a NaN (the quieted operand). A conversion from float64 to a
narrower float keeps the sign and the payload's top bits and sets the quiet bit (F2F), as x86 does for float32.
Of two NaN operands the first came out in the battery's kernels; ptxas may put a commutative instruction's operands
in either order (an H100 returned B's NaN for ``T.ptx`` ``add a, b`` and ``add b, a`` alike), so that lane holds for
kernels compiled as those were, and the ``T.ptx`` forms (:mod:`txlab.emulator.ptx_farith`) refuse it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)

_F64 = np.dtype(np.float64)
_QUIET64 = np.uint64(1 << 51)

#: the canonical NaN of each format whose units keep no payload (numpy scalars of that dtype)
CANONICAL = {
    np.dtype(np.float32): np.uint32(0x7FFFFFFF).view(np.float32),
    np.dtype(np.float16): np.uint16(0x7FFF).view(np.float16),
    _BF16: np.uint16(0x7FFF).view(_BF16),
    np.dtype(ml_dtypes.float8_e4m3fn): np.uint8(0x7F).view(ml_dtypes.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e5m2): np.uint8(0x7F).view(ml_dtypes.float8_e5m2),
}


def canonical(r):
    """``r`` (a numpy array or scalar) with each NaN replaced by its format's canonical NaN; float64, integers and
    anything else unchanged. One ``isnan`` pass when there is no NaN (the common case); a scalar compares itself."""
    c = CANONICAL.get(getattr(r, "dtype", None))
    if c is None:
        return r
    if type(r) is not np.ndarray:  # a numpy scalar: one comparison
        return r if r == r else c
    nan = np.isnan(r)
    if not np.count_nonzero(nan):
        return r
    out = np.where(nan, c, r)
    return out if out.ndim else out[()]


def canonicalising(fn):
    """Binary ``fn(a, b)`` with its result through :func:`canonical` (a float arithmetic operation of the GPU)."""

    def op(a, b):
        return canonical(fn(a, b))

    op.__name__ = getattr(fn, "__name__", "op")
    op.__wrapped__ = fn
    return op


def quieted(x):
    """float64 ``x`` with the quiet bit set in its NaNs (what DADD & co. return for a NaN operand)."""
    x = np.asarray(x, np.float64)
    q = np.where(np.isnan(x), x.view(np.uint64) | _QUIET64, x.view(np.uint64)).view(np.float64)
    return q if q.ndim else q[()]


def propagating(fn):
    """float64 function ``fn(x)`` whose result is the quieted ``x`` where ``x`` is a NaN (libdevice's float64
    routines, and ``fabs``: DADD ``-RZ, |x|``); other dtypes as ``fn`` gives them."""

    def f(x):
        r = fn(x)
        if getattr(r, "dtype", None) != _F64:
            return r
        nan = np.isnan(x)
        if not np.count_nonzero(nan):
            return r
        out = np.where(nan, quieted(x), r)
        return out if out.ndim else out[()]

    return f


def first_nan64(fn):
    """float64 ``fmin``/``fmax`` ``fn(a, b)`` with two NaN operands giving the first, quieted (DMNMX)."""

    def f(a, b):
        r = fn(a, b)
        if getattr(r, "dtype", None) != _F64:
            return r
        both = np.isnan(a) & np.isnan(b)
        if not np.count_nonzero(both):
            return r
        out = np.where(both, quieted(np.broadcast_to(a, np.shape(both))), r)
        return out if out.ndim else out[()]

    return f


def _name(dt) -> str:
    """The scalar format's name of a numpy dtype or a TVM dtype string (``float16x2`` -> ``float16``)."""
    return dt.name if isinstance(dt, np.dtype) else str(dt).split("x")[0]


_MANTISSA = {"float32": (np.uint32, 23), "float16": (np.uint16, 10), "bfloat16": (np.uint16, 7)}


def _via_f32(v):
    """``v`` as float32 with the canonical NaN (a float16 widened by ``HADD2.F32``, an fp8 unpacked, or any float32
    value through fast math's ``FMUL.FTZ x, 1``)."""
    return canonical(np.asarray(v).astype(np.float32))


def _narrowed(to: str):
    """F2F from float64 to ``to``: a NaN keeps its sign and the top bits of its payload and is quieted."""
    ut, m = _MANTISSA[to]
    width = np.dtype(ut).itemsize * 8
    exp_quiet = ((1 << (width - 1 - m)) - 1) << m | (1 << (m - 1))

    def post(r, x):
        x = np.asarray(x, np.float64)
        nan = np.isnan(x)
        if not np.count_nonzero(nan):
            return r
        b = x.view(np.uint64)
        bits = ((b >> np.uint64(64 - width)) & np.uint64(1 << (width - 1))) | np.uint64(exp_quiet)
        bits |= (b & np.uint64((1 << 52) - 1)) >> np.uint64(52 - m)
        out = np.where(nan, bits.astype(ut).view(np.asarray(r).dtype), r)
        return out if out.ndim else out[()]

    return post


def cast_rule(src, to, fast_math: bool):
    """How a conversion ``(to) x`` of a ``src`` value (numpy dtypes or TVM dtype strings) treats NaNs, as the SASS
    nvcc makes for it does on an H100: ``(pre, post)``, ``pre(x)`` applied before the conversion and
    ``post(result, x)`` after it (either None).

    * to float32/float16/bfloat16/fp8 from a float format of at most 32 bits: the canonical NaN (F2FP, F2F,
      ``HADD2.F32``, ``F2FP.F16.E5M2.UNPACK_B``), except bfloat16 -> float32, a 16-bit shift that keeps every bit;
    * from float64 to a narrower float: F2F keeps the sign and the payload's top bits, quieted (fp8: 0x7f);
    * to float64: F2F.F64.F32 keeps the float32's payload, quieted (numpy's conversion does the same), of a float32
      that the fast-math build first multiplies by 1 (FMUL.FTZ: the canonical NaN); a float16 or fp8 is widened
      to float32 first (``HADD2.F32``: canonical), a bfloat16 by a shift (kept; fast math: then the FMUL.FTZ).
    """
    s, t = _name(src), _name(to)
    if s == t or not s.startswith(("float", "bfloat")) or not t.startswith(("float", "bfloat")):
        return None, None
    if t == "float64":
        if s == "float16" or s.startswith("float8"):
            return _via_f32, None
        if fast_math and s in ("float32", "bfloat16"):
            return (canonical if s == "float32" else _via_f32), None
        return None, None
    if s == "float64":
        return None, (_narrowed(t) if t in _MANTISSA else lambda r, x: canonical(r))
    if s == "bfloat16" and t == "float32":
        return None, None
    return None, lambda r, x: canonical(r)
