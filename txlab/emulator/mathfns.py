"""Math functions of lowered device code, with the meaning the build gives them on the GPU.

TVM lowers ``T.exp(x)`` (float32) to ``call_pure_extern("expf", x)``; nvcc then compiles ``expf``
to ``ex2.approx.ftz.f32(x * log2 e)`` under ``--use_fast_math`` (txlab's default) and to its
libdevice routine without. Each function here is registered by the name the CUDA source calls
(:data:`txlab.emulator.ops.EXTERNS`) and implemented per build (``comp.fast_math``):

* **bitwise** where the GPU's result is defined to the bit: IEEE operations (``sqrt.rn``,
  ``div.rn``, ``rcp.rn``, ``fma.rn``), rounding functions, ``fabs``/``copysign``/``fmod``,
  ``fmin``/``fmax``, integer bit counts;
* **within a bound** where NVIDIA does not publish the bits: the MUFU approximations (``ex2``,
  ``lg2``, ``rsqrt``, ``sin``/``cos``, ``tanh``, ``rcp.approx``) and libdevice's routines. The
  emulator computes these in float64 and rounds once, which is within the PTX ISA's (MUFU) or the
  CUDA Programming Guide's (libdevice) stated error of what the GPU returns; the compositions nvcc
  emits around them (the ``x * log2 e`` multiply, flushing, the ``* ln 2`` after ``lg2``) are
  done exactly as the PTX does them. :data:`PRECISION` states each bound;
  ``scripts/emulator_math_h200.py`` measures the real distance on an H200.
"""

from __future__ import annotations

import math

import numpy as np

import txlab.emulator.memory as M
from txlab.emulator.nan import canonical, first_nan64, propagating
from txlab.emulator.ops import EXTERNS, HANDLERS, extern, handler
from txlab.ir import semantics as S

F32 = np.float32
LOG2E = F32(1.4426950408889634)
LN2 = F32(0.6931471805599453)
LOG10_2 = F32(0.30102999566398120)
LOG2_10 = F32(3.3219280948873622)

#: function -> (fast-math build, IEEE build) precision vs the GPU, as docs/emulator-ops.md prints it
PRECISION: dict = {}


def _dt(comp, call) -> np.dtype:
    from txlab.emulator.interpreter import _dtype_of

    return M.np_dtype(_dtype_of(call))


def _ret(r):
    return r if np.ndim(r) else np.asarray(r)[()]


def _rounded(fn64, dt):
    """``fn64`` evaluated in float64 and rounded once to ``dt``."""

    def f(*xs):
        with np.errstate(all="ignore"):
            return _ret(np.asarray(fn64(*[np.asarray(x, np.float64) for x in xs])).astype(dt))

    return f


def _erf64(x):
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


# ---- the MUFU approximations, as PTX names them -------------------------------------------------
def ex2_approx(x, flush=True):
    """``ex2.approx(.ftz).f32``: 2^x (PTX ISA: max 2 ulp over the full range)."""
    x = S.ftz(x) if flush else x
    r = _rounded(np.exp2, np.float32)(x)
    return S.ftz(r) if flush else r


def lg2_approx(x, flush=True):
    """``lg2.approx(.ftz).f32``: log2 x (PTX ISA: max absolute error 2^-22 for x in [0.5, 2], else
    max relative error 2^-22.6)."""
    x = S.ftz(x) if flush else x
    return _rounded(np.log2, np.float32)(x)


def _mul_ftz(a, b, flush=True):
    """``mul(.ftz).f32``: with ``.ftz`` denormal operands are zeros too (``0 * -inf`` is NaN)."""
    if flush:
        a, b = S.ftz(np.asarray(a, np.float32)), S.ftz(np.asarray(b, np.float32))
    r = np.multiply(np.asarray(a, np.float32), b, dtype=np.float32)
    return S.ftz(r) if flush else _ret(r)


def _unary_f32(fast, ieee, name, fast_bound, ieee_bound):
    """Register f32 function ``name``: ``fast(x)`` under fast math, ``ieee(x)`` without."""
    PRECISION[name] = (fast_bound, ieee_bound)

    @extern(name)
    def build(comp, call, args):
        (x,) = [comp.expr(a) for a in args]
        fn = fast if comp.fast_math else ieee
        return lambda g: canonical(fn(x(g)))

    return build


def _rn(fn64):
    return _rounded(fn64, np.float32)


def _ftz_in_out(fn):
    def f(x):
        return S.ftz(fn(S.ftz(x)))

    return f


_exp_fast = lambda x: ex2_approx(_mul_ftz(x, LOG2E))  # noqa: E731
_exp10_fast = lambda x: ex2_approx(_mul_ftz(x, LOG2_10))  # noqa: E731
_log_fast = lambda x: _mul_ftz(lg2_approx(x), LN2)  # noqa: E731
_log10_fast = lambda x: _mul_ftz(lg2_approx(x), LOG10_2)  # noqa: E731
_sin_fast = _ftz_in_out(_rn(np.sin))
_cos_fast = _ftz_in_out(_rn(np.cos))
_tanh_fast = _rn(np.tanh)
_sqrt_fast = _ftz_in_out(_rn(np.sqrt))
_rsqrt = _rn(lambda v: 1.0 / np.sqrt(v))
_rsqrt_fast = _ftz_in_out(_rsqrt)

_MUFU_EX2 = "within ex2.approx's bound: 2 ulp (PTX ISA), after the exact x*log2(e) multiply"
_LIBDEV = "libdevice {n} ulp (CUDA Programming Guide); emulated correctly rounded"

_unary_f32(_exp_fast, _rn(np.exp), "__expf", _MUFU_EX2, _MUFU_EX2)
_unary_f32(_exp_fast, _rn(np.exp), "expf", _MUFU_EX2, _LIBDEV.format(n=2))
_unary_f32(ex2_approx, _rn(np.exp2), "exp2f", "within ex2.approx.ftz: 2 ulp (PTX ISA)", _LIBDEV.format(n=2))
_unary_f32(
    _exp10_fast,
    _rn(lambda v: np.power(10.0, v)),
    "exp10f",
    _MUFU_EX2.replace("log2(e)", "log2(10)"),
    _LIBDEV.format(n=2),
)
_unary_f32(
    _exp10_fast,
    _exp10_fast,
    "__exp10f",
    _MUFU_EX2.replace("log2(e)", "log2(10)"),
    _MUFU_EX2.replace("log2(e)", "log2(10)"),
)
_LG2 = "within lg2.approx: 2^-22 absolute in [0.5, 2], else 2^-22.6 relative (PTX ISA)"
_unary_f32(_log_fast, _rn(np.log), "logf", _LG2 + ", then the exact *ln(2)", _LIBDEV.format(n=1))
_unary_f32(_log_fast, _log_fast, "__logf", _LG2 + ", then the exact *ln(2)", _LG2 + ", then the exact *ln(2)")
_unary_f32(lg2_approx, _rn(np.log2), "log2f", _LG2, _LIBDEV.format(n=1))
_unary_f32(lg2_approx, lg2_approx, "__log2f", _LG2, _LG2)
_unary_f32(_log10_fast, _rn(np.log10), "log10f", _LG2 + ", then the exact *log10(2)", _LIBDEV.format(n=2))
_unary_f32(_log10_fast, _log10_fast, "__log10f", _LG2 + ", then the exact *log10(2)", _LG2)
_SQRT_APPROX = "within sqrt.approx.ftz: 1 ulp (CUDA Programming Guide, sqrtf without -prec-sqrt)"
_unary_f32(_sqrt_fast, _rn(np.sqrt), "sqrtf", _SQRT_APPROX, "bitwise (sqrt.rn.f32)")
_RSQRT = "within rsqrt.approx: 2 ulp (CUDA Programming Guide)"
_unary_f32(_rsqrt_fast, _rsqrt, "rsqrtf", _RSQRT, _RSQRT)
_TANH = "within tanh.approx.f32: 2^-11 relative (PTX ISA), i.e. up to ~2^12 ulp"
_unary_f32(_tanh_fast, _rn(np.tanh), "tanhf", _TANH, _LIBDEV.format(n=2))
_unary_f32(_tanh_fast, _tanh_fast, "__tanhf", _TANH, _TANH)
_SIN = "within sin/cos.approx.ftz: 2^-21.41 absolute in [-pi, pi] (CUDA Programming Guide), unbounded outside"
for _n, _fast, _ieee in (("sinf", _sin_fast, _rn(np.sin)), ("cosf", _cos_fast, _rn(np.cos))):
    _unary_f32(_fast, _ieee, _n, _SIN, _LIBDEV.format(n=2))
    _unary_f32(_fast, _fast, "__" + _n, _SIN, _SIN)


def _tan_fast(x):
    return S.div_approx_ftz(_sin_fast(x), _cos_fast(x))


_unary_f32(
    _tan_fast, _rn(np.tan), "tanf", "__sinf/__cosf through div.approx: unbounded near pi/2 + k*pi", _LIBDEV.format(n=4)
)
_unary_f32(_tan_fast, _tan_fast, "__tanf", "__sinf/__cosf through div.approx", "__sinf/__cosf through div.approx")
#: libdevice functions without a fast-math form, emulated with numpy's result: name, function, and
#: the ulp bound of the float32 (``<name>f``) and float64 versions (CUDA Programming Guide; None:
#: that version is not emulated)
_LIBDEVICE = (
    ("erf", _erf64, 2, 2),
    ("expm1", np.expm1, 1, 1),
    ("log1p", np.log1p, 1, 1),
    ("sinh", np.sinh, 3, 2),
    ("cosh", np.cosh, 2, 1),
    ("atan", np.arctan, 2, 2),
    ("asin", np.arcsin, 2, 2),
    ("acos", np.arccos, 2, 2),
    ("asinh", np.arcsinh, 3, None),
    ("acosh", np.arccosh, 4, None),
    ("atanh", np.arctanh, 3, None),
    ("cbrt", np.cbrt, 1, 1),
)
for _n, _fn, _ulp, _ in _LIBDEVICE:
    _unary_f32(
        _ftz_in_out(_rn(_fn)),
        _rn(_fn),
        _n + "f",
        _LIBDEV.format(n=_ulp) + " (inputs/results flushed)",
        _LIBDEV.format(n=_ulp),
    )


# ---- exact float32 functions ------------------------------------------------------------------
def _round_half_away(v):
    v = np.asarray(v)
    t = np.trunc(v)
    return _ret(np.where(np.abs(v - t) >= 0.5, t + np.copysign(np.ones_like(v), v), t).astype(v.dtype))


_EXACT_UNARY = {
    "fabs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "nearbyint": np.rint,
    "rint": np.rint,
    "round": _round_half_away,
}


def _exact_unary(fn, flush_ok):
    fn = propagating(fn)  # float64: a NaN comes out quieted (fabs is DADD -RZ, |x|: its sign is kept)

    def build(comp, call, args):
        (x,) = [comp.expr(a) for a in args]
        dt = _dt(comp, call)
        flush = comp.fast_math and dt == np.float32 and flush_ok

        def f(g):
            v = np.asarray(x(g)).astype(dt, copy=False)
            return canonical(S.ftz(fn(S.ftz(v))) if flush else _ret(fn(v)))

        return f

    return build


for _n, _fn in _EXACT_UNARY.items():
    # fast math: fabs is abs.ftz.f32 (SASS FADD.FTZ |x|, -RZ: a denormal becomes +-0, seen on the
    # H200), the rounding ones cvt.rni/rmi... .ftz; the IEEE build keeps denormals
    EXTERNS[_n + "f"] = EXTERNS[_n] = _exact_unary(_fn, True)
    PRECISION[_n + "f"] = PRECISION[_n] = ("bitwise", "bitwise")


@handler("tirx.isnan")
def _isnan(comp, call):
    """``T.isnan(x)``: TVM's CUDA codegen prints it as ``x != x`` (on ``(float)x`` for half), and
    lowers ``T.isinf`` / ``T.isfinite`` to ``fabs`` and ``isnan`` before that; the comparison is
    exact in any build (``setp.nan``: fast math's ``.ftz`` cannot turn a NaN into a number)."""
    (x,) = [comp.expr(a) for a in call.args]
    wide = np.float64 if _dt(comp, call.args[0]) == np.float64 else np.float32
    return lambda g: _ret(np.isnan(np.asarray(x(g)).astype(wide)))


def _binary_extern(name, fn_for, bound=("bitwise", "bitwise"), moves_bits=False):
    """Register a two-argument function; ``fn_for(fast_math, dtype)`` gives its numpy function. Its NaN results
    are the canonical NaN (txlab.emulator.nan) unless ``moves_bits`` (``copysign``: a LOP3)."""
    PRECISION[name] = bound

    @extern(name)
    def build(comp, call, args):
        a, b = [comp.expr(x) for x in args]
        dt = _dt(comp, call)
        fn = fn_for(comp.fast_math, dt)
        if moves_bits:
            return lambda g: fn(np.asarray(a(g)).astype(dt, copy=False), np.asarray(b(g)).astype(dt, copy=False))
        return lambda g: canonical(fn(np.asarray(a(g)).astype(dt, copy=False), np.asarray(b(g)).astype(dt, copy=False)))

    return build


def _ftz2(fn, fast, dt):
    if fast and dt == np.float32:
        return lambda a, b: S.ftz(fn(S.ftz(a), S.ftz(b)))
    return fn


for _n in ("fminf", "fmin"):  # float64 (DMNMX): of two NaNs the first, quieted
    _binary_extern(_n, lambda fast, dt: _ftz2(first_nan64(S.fmin), fast, dt))
for _n in ("fmaxf", "fmax"):
    _binary_extern(_n, lambda fast, dt: _ftz2(first_nan64(S.fmax), fast, dt))
for _n in ("fmodf", "fmod"):
    _binary_extern(_n, lambda fast, dt: _ftz2(np.fmod, fast, dt))
for _n in ("copysignf", "copysign"):
    _binary_extern(_n, lambda fast, dt: np.copysign, moves_bits=True)
_binary_extern(
    "__fdividef",
    lambda fast, dt: S.div_approx_ftz if fast else _div_approx,
    ("within div.approx: 2 ulp for |y| in [2^-126, 2^126] (PTX ISA)",) * 2,
)
_binary_extern(
    "fdividef",
    lambda fast, dt: S.div_approx_ftz if fast else _div_approx,
    ("within div.approx: 2 ulp for |y| in [2^-126, 2^126] (PTX ISA)",) * 2,
)
_binary_extern("__fdiv_rn", lambda fast, dt: np.true_divide)
_binary_extern(
    "powf",
    lambda fast, dt: _pow_fast if fast else _rn(np.power),
    ("ex2.approx(y * lg2.approx(x)): error grows with |y log2 x| (as __powf)", _LIBDEV.format(n=4)),
)
_binary_extern(
    "__powf", lambda fast, dt: _pow_fast, ("ex2.approx(y * lg2.approx(x)): error grows with |y log2 x|",) * 2
)
_binary_extern("atan2f", lambda fast, dt: _rn(np.arctan2), (_LIBDEV.format(n=3),) * 2)


_LDEXP = ("bitwise: x * 2^n is exact (fast math flushes denormal inputs and results)", "bitwise: x * 2^n, rounded once")


def _ldexp_build(comp, call, args):
    """``ldexpf(x, n)``: ``x * 2^n`` rounded once (exact unless it over- or underflows); ``n`` stays an
    integer (a float conversion would round large exponents). The fast-math build flushes denormals."""
    x, n = [comp.expr(a) for a in args]
    dt = _dt(comp, call)
    flush = comp.fast_math and dt == np.float32

    def f(g):
        v = np.asarray(x(g)).astype(dt, copy=False)
        k = np.clip(np.asarray(n(g)).astype(np.int64), -4000, 4000).astype(np.int32)
        with np.errstate(all="ignore"):
            r = np.ldexp(S.ftz(v) if flush else v, k).astype(dt)
        return canonical(_ret(S.ftz(r) if flush else r))

    return f


def _nextafter_ftz(x, y):
    """libdevice's ``nextafterf`` in the fast-math (FTZ) build, as an H100 returned it (docs/gpu-runs.md, round 37):
    denormal operands count as zero (0x000116c2 towards 0 gives 0), a step from zero gives the smallest normal
    towards ``y`` (0x00800000 / 0x80800000), and other steps move the bits by one (a step from FLT_MIN towards zero
    is taken to give the denormal, unflushed: no GPU run has had that lane yet)."""
    xf, yf = S.ftz(x), S.ftz(y)
    with np.errstate(all="ignore"):
        r = np.nextafter(xf, yf)
        tiny = np.finfo(np.float32).tiny
        from_zero = (xf == 0) & (yf != 0) & ~np.isnan(yf)
        return np.where(from_zero, np.where(yf > 0, tiny, -tiny).astype(np.float32), r).astype(np.float32)


def _nextafter_fn(fast, dt):
    """``nextafterf(x, y)``: the representable neighbour of ``x`` towards ``y`` (IEEE, bitwise). libdevice steps the
    bits with integer operations; its FTZ variant (fast math, float32) treats denormal operands as zero and steps from
    zero to the smallest normal (:func:`_nextafter_ftz`)."""
    return _nextafter_ftz if fast and dt == np.float32 else np.nextafter


for _n in ("ldexpf", "ldexp"):
    EXTERNS[_n] = _ldexp_build
    PRECISION[_n] = _LDEXP if _n == "ldexpf" else (_LDEXP[1],) * 2
for _n in ("nextafterf", "nextafter"):
    _binary_extern(_n, _nextafter_fn)
_binary_extern("hypotf", lambda fast, dt: _rn(np.hypot), (_LIBDEV.format(n=3),) * 2)


def _div_approx(a, b):
    """``div.approx.f32`` (no flush): ``a * rcp.approx(b)``."""
    with np.errstate(all="ignore"):
        r = np.asarray(1.0 / np.asarray(b, np.float64)).astype(np.float32)
        return _ret(np.multiply(np.asarray(a, np.float32), r, dtype=np.float32))


def _pow_fast(x, y):
    return ex2_approx(_mul_ftz(lg2_approx(x), y))


for _n, _fn, _b in (("__frcp_rn", lambda v: 1.0 / v, "bitwise (rcp.rn)"), ("__fsqrt_rn", np.sqrt, "bitwise (sqrt.rn)")):
    _unary_f32(_rn(_fn), _rn(_fn), _n, _b, _b)


def _fma_build(comp, call, args):
    a, b, c = [comp.expr(x) for x in args]
    dt = _dt(comp, call)
    flush = comp.fast_math and dt == np.float32
    return lambda g: canonical(
        S.fma(
            np.asarray(a(g)).astype(dt, copy=False),
            np.asarray(b(g)).astype(dt, copy=False),
            np.asarray(c(g)).astype(dt, copy=False),
            flush=flush,
        )
    )


_FMA64 = "float64: correctly rounded except rare ties (Dekker product and two-sum)"
for _n, _b in (
    ("fmaf", "bitwise (fma.rn.f32)"),
    ("__fmaf_rn", "bitwise (fma.rn.f32)"),
    ("fma", _FMA64),
    ("__fma_rn", _FMA64),
):
    EXTERNS[_n] = _fma_build
    PRECISION[_n] = (_b, _b)
HANDLERS["tirx.fma"] = lambda comp, call: _fma_build(comp, call, list(call.args))


# ---- float64 (not touched by fast math) ---------------------------------------------------------
_LIBDEV64 = "libdevice {n} ulp (CUDA Programming Guide); emulated with numpy's float64 (<= 1 ulp)"


def _unary_any(name, fn, bound):
    PRECISION[name] = (bound, bound)

    @extern(name)
    def build(comp, call, args):
        (x,) = [comp.expr(a) for a in args]
        dt = _dt(comp, call)
        f = propagating(_rounded(fn, dt))  # float64: libdevice returns a NaN operand quieted
        return lambda g: canonical(f(x(g)))

    return build


for _n, _fn, _ulp in (
    ("exp", np.exp, 1),
    ("exp2", np.exp2, 1),
    ("exp10", lambda v: np.power(10.0, v), 1),
    ("log", np.log, 1),
    ("log2", np.log2, 1),
    ("log10", np.log10, 1),
    ("tanh", np.tanh, 1),
    ("sin", np.sin, 2),
    ("cos", np.cos, 2),
    ("tan", np.tan, 2),
    *((n, fn, ulp) for n, fn, _, ulp in _LIBDEVICE if ulp is not None),
    ("rsqrt", lambda v: 1.0 / np.sqrt(v), 1),
):
    _unary_any(_n, _fn, _LIBDEV64.format(n=_ulp))
_unary_any("sqrt", np.sqrt, "bitwise (sqrt.rn.f64)")
_binary_extern("pow", lambda fast, dt: np.power, (_LIBDEV64.format(n=2),) * 2)


# ---- half and bfloat16 (cuda_fp16.h / cuda_bf16.h): computed in float32 on the GPU ----------------
_HALF = "the half function rounds a float32 evaluation once; emulated correctly rounded (measured on the H200)"
for _n, _fn in (
    ("hexp", np.exp),
    ("hexp2", np.exp2),
    ("hexp10", lambda v: np.power(10.0, v)),
    ("hlog", np.log),
    ("hlog2", np.log2),
    ("hlog10", np.log10),
    ("hsqrt", np.sqrt),
    ("hrsqrt", lambda v: 1.0 / np.sqrt(v)),
    ("hrcp", lambda v: 1.0 / v),
    ("hsin", np.sin),
    ("hcos", np.cos),
    ("htanh", np.tanh),
    ("herf", _erf64),
):
    _unary_any(_n, _fn, _HALF)
for _n, _fn in (("__habs", np.abs), ("hfloor", np.floor), ("hceil", np.ceil), ("htrunc", np.trunc), ("hrint", np.rint)):
    _unary_any(_n, _fn, "bitwise")


# ---- integer intrinsics ------------------------------------------------------------------------
def _int_unary(name, fn, width):
    PRECISION[name] = ("bitwise", "bitwise")

    @extern(name)
    def build(comp, call, args):
        (x,) = [comp.expr(a) for a in args]
        dt = _dt(comp, call)
        utype = np.uint32 if width == 32 else np.uint64

        def f(g):
            v = np.asarray(x(g)).astype(utype)
            return _ret(np.asarray(fn(v, width)).astype(dt))

        return f

    return build


def _popc(v, width):
    v = v.astype(np.uint64)
    out = np.zeros(v.shape, np.int64)
    for k in range(width):
        out += ((v >> np.uint64(k)) & np.uint64(1)).astype(np.int64)
    return out


def _clz(v, width):
    v = v.astype(np.uint64)
    out = np.full(v.shape, width, np.int64)
    for k in range(width):
        out = np.where((v >> np.uint64(k)) & np.uint64(1) == 1, width - 1 - k, out)
    return out


def _ffs(v, width):
    v = v.astype(np.uint64)
    out = np.zeros(v.shape, np.int64)
    for k in reversed(range(width)):
        out = np.where((v >> np.uint64(k)) & np.uint64(1) == 1, k + 1, out)
    return out


def _brev(v, width):
    v = v.astype(np.uint64)
    out = np.zeros(v.shape, np.uint64)
    for k in range(width):
        out |= ((v >> np.uint64(k)) & np.uint64(1)) << np.uint64(width - 1 - k)
    return out


for _n, _fn in (("__popc", _popc), ("__clz", _clz), ("__ffs", _ffs), ("__brev", _brev)):
    _int_unary(_n, _fn, 32)
    _int_unary(_n + "ll", _fn, 64)


# ---- TIR math ops that reached the device IR without CUDA's intrinsic rules ----------------------
def _tir_math(op_name):
    """``tirx.exp`` & co. as TVM's CUDA rule would name them (``expf`` for float32...): the same
    implementation as the extern the CUDA source would call."""

    def build(comp, call):
        import tvm

        from txlab.emulator.ops import _extern_call

        rule = tvm.ir.Op.get(op_name).get_attr("cuda.FLowerIntrinsic")
        lowered = rule(call) if rule is not None else None
        if (
            lowered is None
            or not hasattr(lowered, "op")
            or getattr(lowered.op, "name", "") not in ("tirx.call_pure_extern", "tirx.call_extern")
        ):
            return comp.not_emulated(op_name, "TVM's CUDA rule gives no device function for this dtype")
        return _extern_call(0)(comp, lowered)

    return build


def _register_tir_math():
    for n in (
        "exp",
        "exp2",
        "exp10",
        "log",
        "log2",
        "log10",
        "sqrt",
        "rsqrt",
        "fabs",
        "tanh",
        "sin",
        "cos",
        "tan",
        "floor",
        "ceil",
        "trunc",
        "round",
        "nearbyint",
        "erf",
        "pow",
        "fmod",
        "atan",
        "sinh",
        "cosh",
        "popcount",
    ):
        HANDLERS[f"tirx.{n}"] = _tir_math(f"tirx.{n}")


_register_tir_math()
HANDLERS["tirx.cuda.fdividef"] = lambda comp, call: EXTERNS["__fdividef"](comp, call, list(call.args))
