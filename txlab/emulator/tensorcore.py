"""The arithmetic of Hopper's tensor cores (``mma.sync`` and ``wgmma`` on the H200), bit for bit.

One output element is ``d = c + sum_k a_k * b_k``. The tensor core neither rounds each product
and adds them one by one nor sums them exactly. For a *block* of products it

1. forms every product exactly;
2. aligns the products and the accumulator ``c`` to the largest exponent among them -- a product's
   exponent taken as ``ea + eb``, before normalising its significand (in [1, 4)) -- and keeps
   ``frac`` bits below that point, dropping (truncating toward zero) every bit shifted further;
3. adds the aligned values exactly;
4. normalises and rounds the sum to the accumulator: fp32 by truncation (round toward zero;
   an overflow is inf), fp16 to nearest even; a zero result is +0 unless every term was -0;
   a NaN is the canonical 0x7FFFFFFF (0x7FFF in fp16); inf/nan operands give IEEE's result.

This is the family of models of Fasi, Higham, Mikaitis and Pranesh ("Numerical behavior of NVIDIA
tensor cores", PeerJ CS 2021) and Khattak and Mikaitis ("Accurate models of NVIDIA tensor cores",
2025); the parameters below were settled from the H200's own outputs on inputs built to tell the
candidates apart (``scripts/tensorcore_probe_h200.py``, fitted by ``scripts/fit_tensorcore.py``;
``tests/data/tensorcore/`` holds a sample that ``tests/test_tensorcore_model.py`` replays):

- f16, bf16 and tf32 (``mma.sync`` m16n8k8/k16, m16n8k4/k8 and ``wgmma`` k16/k8), f32 or f16
  accumulator: the whole k of one instruction is one block; ``frac`` = 25. tf32 operands are read
  as their top 19 bits (the low 13 bits of the fp32 register are dropped, not rounded).
- fp8 e4m3/e5m2 ``wgmma`` (k32): one block of 32 with ``frac`` = 13, and an fp32 result keeps
  only 13 fraction bits (truncated); with an f16 accumulator, f16's 10 bits, to nearest.
- fp8 ``mma.sync`` m16n8k32 (sm_89's instruction): on sm_90 ptxas lowers it to two f16 m16n8k16
  tensor-core operations on the operands converted to f16 (exact), the first over the k with
  ``k % 4 < 2``, the second over the rest, starting from +0, and then adds ``c`` with an fp32
  ``FADD`` (round to nearest even).

:func:`mma` works on exact float64 values (``a (..., M, K)``, ``b (..., K, N)``, ``c (..., M, N)``)
and returns float64 values representable in the accumulator's format; :func:`compute` is what the
emulator calls (accumulator dtype in and out, canonical NaNs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_NEG = -(1 << 20)  # the exponent of a zero term: below every real one


@dataclass(frozen=True)
class Model:
    """One instruction's arithmetic (see the module docstring)."""

    frac: int  # bits kept below the largest term's exponent when aligning
    round: str = "rz"  # each block's sum to the accumulator: "rz" (toward zero) or "rne"
    keep: int = 0  # fraction bits of a block's result; 0: the accumulator format's own
    order: tuple = ()  # the k of each block, in the order the hardware takes them; (): one block
    c_last: bool = False  # blocks start from +0 and c is added last by an fp32 FADD (to nearest)
    raw_exp: bool = True  # align on ea + eb, not on the normalised product's exponent
    align: str = "rz"  # bits shifted out: "rz" (truncated toward zero) or "rd" (toward -inf)


_F16_BF16_TF32 = Model(frac=25)
_FP8_WGMMA = Model(frac=13, keep=13)
_K = np.arange(32)
_FP8_MMA = Model(frac=25, order=(tuple(_K[_K % 4 < 2]), tuple(_K[_K % 4 >= 2])), c_last=True)


def model_for(kind: str, atype: str, ctype: str) -> Model:
    """The fitted model of ``kind`` ("mma" for mma.sync, "wgmma") with operands ``atype`` (f16,
    bf16, tf32, e4m3, e5m2) and accumulator ``ctype`` (f32, f16)."""
    if atype in ("e4m3", "e5m2"):
        if kind == "mma":
            return _FP8_MMA
        return _FP8_WGMMA if ctype == "f32" else Model(frac=13, round="rne")
    return _F16_BF16_TF32 if ctype == "f32" else Model(frac=25, round="rne")


# operand formats: smallest normal exponent (a subnormal's exponent in the alignment)
OP_EMIN = {"f16": -14, "bf16": -126, "tf32": -126, "e4m3": -6, "e5m2": -14}
_FMT = {"f32": (23, -126, 127), "f16": (10, -14, 15)}  # mantissa bits, min normal, max exponent
_NAN = {"f32": np.uint32(0x7FFFFFFF), "f16": np.uint16(0x7FFF)}


def _exponent(x: np.ndarray, emin: int | None = None) -> np.ndarray:
    """floor(log2|x|) (at least ``emin``) of nonzero x; ``_NEG`` for zeros."""
    _, e = np.frexp(x)
    e = e - 1
    if emin is not None:
        e = np.maximum(e, emin)
    return np.where(x == 0, _NEG, e).astype(np.int32)


def _round(v: np.ndarray, fmt: str, mode: str, keep: int = 0) -> np.ndarray:
    """``v`` (float64, finite, exact) rounded to ``fmt`` (``keep`` fraction bits where nonzero)
    with ``mode``; float64 out. Overflow is inf (also toward zero); subnormals are kept."""
    mb, emin, emax = _FMT[fmt]
    _, e = np.frexp(v)
    q = np.maximum(e - 1, emin) - (keep or mb)  # exponent of the last place kept
    s = np.ldexp(v, -q)
    s = np.trunc(s) if mode == "rz" else np.rint(s)  # rint: ties to even
    out = np.ldexp(s, q)
    big = np.ldexp(2.0 - 2.0**-mb, emax)
    return np.where(np.abs(out) > big, np.copysign(np.inf, out), out)


def _block(a, b, c, ea, eb, model: Model, fmt: str) -> np.ndarray:
    """One block: finite ``a (..., M, K)``, ``b (..., K, N)``, ``c (..., M, N)`` (exact float64)
    and the operands' alignment exponents -> the rounded float64 result."""
    P = a[..., :, None, :] * np.swapaxes(b, -1, -2)[..., None, :, :]  # (..., M, N, K), exact
    if model.raw_exp:
        E = ea[..., :, None, :] + np.swapaxes(eb, -1, -2)[..., None, :, :]
        E = np.where(E < _NEG // 2, _NEG, E)
    else:
        E = _exponent(P)
    emax = np.maximum(E.max(axis=-1), _exponent(c))
    live = emax > _NEG // 2
    pw = np.ldexp(1.0, np.where(live, model.frac - emax, 0))  # a power of two: scaling is exact
    cut = np.trunc if model.align == "rz" else np.floor
    S = cut(P * pw[..., None]).sum(axis=-1) + cut(c * pw)  # integers below 2**40: exact
    v = S / pw
    out = _round(v, fmt, model.round, model.keep)
    zero = out == 0
    if zero.any():  # +0, but -0 for a sum of -0 terms alone
        neg = np.zeros(out.shape, bool)
        idx = np.nonzero(zero & (v == 0) & np.signbit(c))
        if idx[0].size:
            neg[idx] = np.all(np.signbit(P[idx]), axis=-1)
        out = np.where(zero, np.where(neg, -0.0, 0.0), out)
    return out


def mma(a, b, c, model: Model, fmt: str = "f32", op_emin=-126) -> np.ndarray:
    """``c + a @ b`` as the tensor core computes it: float64 in (exact operand values), float64
    out (values of ``fmt``). ``op_emin``: the operands' smallest normal exponent (one for both,
    or a pair (a's, b's))."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    finite = np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()
    a0, b0, c0 = (a, b, c) if finite else (np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0) for x in (a, b, c))
    emin_a, emin_b = op_emin if isinstance(op_emin, tuple) else (op_emin, op_emin)
    ea = _exponent(a0, emin_a)
    eb = _exponent(b0, emin_b)
    acc = np.zeros(c.shape) if model.c_last else c0
    for ks in model.order or (None,):
        if ks is None:
            acc = _block(a0, b0, acc, ea, eb, model, fmt)
        else:
            ks = list(ks)
            acc = _block(a0[..., ks], b0[..., ks, :], acc, ea[..., ks], eb[..., ks, :], model, fmt)
    with np.errstate(invalid="ignore", over="ignore"):
        if model.c_last:  # the FADD: fp32, to nearest even
            acc = (c0.astype(np.float32) + acc.astype(np.float32)).astype(np.float64)
        if not finite:  # inf and nan as IEEE sums give them (0 * inf is nan)
            special = c + (a[..., :, None, :] * np.swapaxes(b, -1, -2)[..., None, :, :]).sum(axis=-1)
            acc = np.where(np.isfinite(special), acc, special)
    return acc


def compute(kind: str, atype: str, ctype: str, a, b, c, btype: str | None = None) -> np.ndarray:
    """The emulator's entry: exact operand values ``a (..., M, K)``, ``b (..., K, N)`` and the
    accumulator ``c (..., M, N)`` (float32 / float16) -> ``d`` in the accumulator's dtype, with the
    tensor core's NaN. ``btype``: b's type where it differs from a's (fp8 e4m3 x e5m2)."""
    dt = np.dtype(np.float32 if ctype == "f32" else np.float16)
    emin = (OP_EMIN[atype], OP_EMIN[btype or atype])
    d = mma(a, b, np.asarray(c, dt), model_for(kind, atype, ctype), ctype, emin)
    with np.errstate(over="ignore", invalid="ignore"):
        out = d.astype(dt)
    nan = np.isnan(d)
    if nan.any():
        bits = out.view(_NAN[ctype].dtype)
        bits[nan] = _NAN[ctype]
    return out


# ---- operands as bit patterns (the probe's data, the regression test) ----------------------
def _dtype(name: str) -> np.dtype:
    if name in ("f16", "f32", "tf32"):
        return np.dtype(np.float16 if name == "f16" else np.float32)
    import ml_dtypes

    return np.dtype({"bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}[name])


def tf32_value(x: np.ndarray) -> np.ndarray:
    """fp32 values as the tensor core reads them for tf32: the top 19 bits."""
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def decode_operands(a_bits, b_bits, c_bits, atype: str, ctype: str):
    """Exact float64 values of raw bit patterns: ``a``, ``b`` of ``atype``, ``c`` of ``ctype``."""
    a = np.ascontiguousarray(a_bits).view(_dtype(atype))
    b = np.ascontiguousarray(b_bits).view(_dtype(atype))
    if atype == "tf32":
        a, b = tf32_value(a), tf32_value(b)
    c = np.ascontiguousarray(c_bits).view(_dtype(ctype))
    with np.errstate(invalid="ignore"):
        return a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)


def run_bits(kind: str, atype: str, ctype: str, a_bits, b_bits, c_bits) -> np.ndarray:
    """``d``'s bit patterns for operands given as bit patterns (the probe's record layout)."""
    a, b, c = decode_operands(a_bits, b_bits, c_bits, atype, ctype)
    d = compute(kind, atype, ctype, a, b, c.astype(_dtype(ctype)))
    return d.view(np.uint32 if ctype == "f32" else np.uint16)
