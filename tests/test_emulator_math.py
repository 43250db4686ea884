"""The emulator's arithmetic is the GPU's: one TIR semantics shared with simt, CUDA math in the
fast-math and IEEE builds, multiply-adds contracted where nvcc contracts them, the op table
current with the installed TVM, and the kernels a newcomer writes first check on the CPU."""

from fractions import Fraction

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate
from txlab.errors import NotEmulatedError
from txlab.ir import semantics


from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)


# ---- one semantics for the emulator and simt --------------------------------------------------
DIVS = """
@T.prim_func
def divs(A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    sm = T.alloc_shared((256,), "int32")
    sm[T.truncdiv(tx - 64, 3) + T.truncmod(tx - 64, 5) + 100] = tx
    B[tx] = T.truncdiv(A[tx], 3) * 100 + T.truncmod(A[tx], 7)
"""


def _c_div(a, b):
    return np.trunc(a / b).astype(np.int64)


def test_emulator_and_simt_share_one_semantics(monkeypatch):
    """Both evaluators resolve binary nodes through txlab.ir.semantics.binary (a fix there is
    a fix in both), and both divide negative int32 as C does."""
    from txlab import simt

    seen = []
    real = semantics.binary

    def spy(name, dtype="", fast_math=True):
        import inspect

        seen.append((inspect.stack()[1].frame.f_globals["__name__"], name))
        return real(name, dtype, fast_math)

    monkeypatch.setattr(semantics, "binary", spy)
    k = kernel(DIVS, "divs")
    a = np.arange(-64, 64, dtype=np.int32)
    b = np.zeros_like(a)
    assert emulate(k, a, b, arch="sm_90a", check=False).ok  # (several threads write one cell: no race check)
    assert np.array_equal(b, _c_div(a, 3) * 100 + np.fmod(a, 7))  # -7 / 3 == -2, -7 % 7 == 0
    visits = []
    ((_, func),) = simt.device_functions(k)
    simt.execute(func, on_visit=visits.append)
    store = next(v for v in visits if v.kind == "store")
    t = np.arange(128) - 64
    assert np.array_equal(np.broadcast_to(store.index, (128,)), _c_div(t, 3) + np.fmod(t, 5) + 100)
    users = {m for m, n in seen if n == "Div"}
    assert {"txlab.emulator.interpreter", "txlab.simt"} <= users, seen


def test_semantics_table_rules():
    S = semantics
    assert S.trunc_div(np.int32(-7), np.int32(2)) == -3 and S.trunc_mod(np.int32(-7), np.int32(2)) == -1
    assert S.floor_div(-7, 2) == -4 and S.floor_mod(-7, 2) == 1
    f2i = S.cast(np.float32([np.nan, 3e9, -3e9, -1.7, 2.9]), np.dtype(np.int32))
    assert f2i.tolist() == [0, 2**31 - 1, -(2**31), -1, 2]  # cvt.rzi saturates
    assert S.cast(np.float32([-1.0, 5e9]), np.dtype(np.uint32)).tolist() == [0, 2**32 - 1]
    assert S.cast(np.float64([1e19]), np.dtype(np.int64)).tolist() == [2**63 - 1]
    mn = S.fmin(np.float32([np.nan, 0.0, -0.0, np.nan]), np.float32([1, -0.0, 0.0, np.nan]))
    assert mn.view(np.uint32).tolist() == [0x3F800000, 0x80000000, 0x80000000, 0x7FFFFFFF]
    tiny = np.float32(1e-39)  # a float32 denormal
    assert S.binary("Add", "float32", True)(tiny, np.float32(0)) == 0  # add.ftz
    assert S.binary("Add", "float32", False)(tiny, np.float32(0)) == tiny
    assert not S.binary("LT", "float32", True)(-tiny, np.float32(0))  # setp.lt.ftz: -0 < 0
    assert S.binary("Div", "float32", True) is S.div_approx_ftz
    assert S.binary("Div", "int32") is S.trunc_div
    assert np.left_shift(np.int32(1), np.int32(33)) == 0  # shl clamps


def test_fma_is_correctly_rounded():
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64):
        a, b = rng.standard_normal(300).astype(dt), rng.standard_normal(300).astype(dt)
        c = (rng.standard_normal(300) * 1e-3).astype(dt)
        r = semantics.fma(a, b, c)
        for x, y, z, q in zip(a, b, c, r):
            exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
            near = [q, np.nextafter(q, dt(np.inf)), np.nextafter(q, dt(-np.inf))]
            assert min(near, key=lambda v: abs(Fraction(float(v)) - exact)) == q


# ---- math functions ------------------------------------------------------------------------------
ELEM = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    C = T.match_buffer(C_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < n:
        C[i] = EXPR
"""


def _run(expr, a, b, **kw):
    c = np.full_like(a, np.nan)
    res = emulate(kernel(ELEM.replace("EXPR", expr), "k"), a, b, c, a.size, arch="sm_90a", **kw)
    assert res.ok, res.summary()
    return c


def _ulp(got, want):
    return int(semantics.ulp_distance(got, want).max())


@pytest.mark.parametrize(
    "expr, ref, ulps",
    [
        (
            "T.exp(A[i])",
            np.exp,
            8,
        ),  # __expf: 2 + 1.173 |x| ulp (x * log2 e is rounded first) ("T.exp2(A[i])", np.exp2, 2), ("T.log(T.fabs(A[i]))", lambda x: np.log(np.abs(x)), 2),
        ("T.sqrt(T.fabs(A[i]))", lambda x: np.sqrt(np.abs(x)), 1),
        ("T.rsqrt(T.fabs(A[i]))", lambda x: 1 / np.sqrt(np.abs(x)), 1),
        ("T.tanh(A[i])", np.tanh, 1),
        ("T.sigmoid(A[i])", lambda x: 1 / (1 + np.exp(-x)), 8),
        ("T.erf(A[i])", None, 1),
        ("T.sin(A[i])", np.sin, 4),
        ("T.floor(A[i] * T.float32(3))", lambda x: np.floor(x * np.float32(3)), 0),
    ],
)
def test_math_that_lowers_to_device_functions_runs(expr, ref, ulps):
    """T.exp & co. lower to call_pure_extern("expf", ...): each runs, close to float64 math (the
    GPU's MUFU result is within the bound docs/emulator-ops.md states)."""
    import math

    rng = np.random.default_rng(0)
    a = (rng.standard_normal(1000) * 2).astype(np.float32)
    got = _run(expr, a, np.zeros_like(a))
    if ref is None:
        ref = np.frompyfunc(math.erf, 1, 1)
    want = np.asarray(ref(a.astype(np.float64)), np.float64).astype(np.float32)
    assert _ulp(got, want) <= ulps


def test_the_build_decides_division_and_flushing():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4000).astype(np.float32)
    b = rng.standard_normal(4000).astype(np.float32)
    ieee = _run("A[i] / B[i]", a, b, fast_math=False)
    assert np.array_equal(ieee, a / b)  # div.rn.f32: bitwise
    fast = _run("A[i] / B[i]", a, b)  # div.approx.ftz.f32
    assert np.array_equal(fast, a * (np.float32(1) / b)) and _ulp(fast, a / b) <= 2
    d = np.full(256, 1e-39, np.float32)
    assert (_run("A[i] + B[i]", d, np.zeros_like(d)) == 0).all()  # add.ftz
    assert (_run("A[i] + B[i]", d, np.zeros_like(d), fast_math=False) == d).all()
    c = txlab.compile(kernel(ELEM.replace("EXPR", "A[i] + B[i]"), "k"), arch="sm_90a", fast_math=False)
    out = np.zeros_like(d)
    assert emulate(c, d, np.zeros_like(d), out, d.size).ok and (out == d).all()  # the Compiled's own build


def test_if_then_else_runs():
    a = np.arange(-5, 5, dtype=np.float32)
    b = np.full_like(a, 7)
    assert np.array_equal(_run("T.if_then_else(A[i] > T.float32(0), A[i], B[i])", a, b), np.where(a > 0, a, b))


def test_unknown_device_function_is_named_with_its_line():
    src = ELEM.replace("EXPR", 'T.call_pure_extern("float32", "my_device_fn", A[i])')
    a = np.ones(8, np.float32)
    with pytest.raises(NotEmulatedError) as ei:
        emulate(kernel(src, "k"), a, a.copy(), a.copy(), 8, arch="sm_90a")
    assert ei.value.name == "my_device_fn" and ei.value.lineno == line_of(src, "C[i] =")
    assert "not emulated: my_device_fn at line" in str(ei.value)


# ---- FMA contraction, checked against nvcc's own PTX ----------------------------------------------
SHAPES = [  # (expression, FFMA in the build's SASS, numpy model with the fused ops explicit)
    (
        "A[i] * T.float32(1.7) + B[i] * A[i] + T.float32(0.1)",
        1,
        lambda x, y, F: F(x, np.float32(1.7), y * x) + np.float32(0.1),
    ),
    ("T.float32(1) + A[i] * B[i]", 1, lambda x, y, F: F(x, y, np.float32(1))),
    ("A[i] * B[i] - T.float32(1.5)", 1, lambda x, y, F: F(x, y, np.float32(-1.5))),
    ("A[i] - B[i] * A[i]", 1, lambda x, y, F: F(-y, x, x)),  # mul + sub in PTX; ptxas fuses
    ("A[i] * B[i] * T.float32(2) + T.float32(1)", 1, lambda x, y, F: F(x * y, np.float32(2), np.float32(1))),
    (
        "(A[i] * B[i]) * (A[i] + B[i]) + A[i] * A[i] * B[i]",
        1,
        lambda x, y, F: F(x * x, y, (x * y) * (x + y)),
    ),  # the lower-ranked product is fused
    ("(A[i] + B[i]) * A[i] + B[i] * B[i]", 1, lambda x, y, F: F(y, y, (x + y) * x)),
    ("A[i] * B[i] + (A[i] + B[i]) * A[i]", 1, lambda x, y, F: F(x, y, (x + y) * x)),
]


@pytest.mark.parametrize("fast_math", [True, False])
def test_contraction_is_nvccs(fast_math):
    """Each shape's emulated bits equal the fused model, and the build's SASS has exactly as many
    FFMA as the model fuses (nvcc and ptxas decide; the test reads the SASS that runs)."""

    rng = np.random.default_rng(2)
    x = rng.standard_normal(2048).astype(np.float32)
    y = rng.standard_normal(2048).astype(np.float32)

    def F(a, b, c):
        return semantics.fma(a, b, c, flush=fast_math)

    differs = 0
    for expr, n_fma, model in SHAPES:
        k = kernel(ELEM.replace("EXPR", expr), "k")
        c = txlab.compile(k, arch="sm_90a", fast_math=fast_math)
        assert len(c.instructions(r"^FFMA")) == n_fma, (expr, c.instructions(r"^F(FMA|MUL|ADD)"))
        out = np.zeros_like(x)
        assert emulate(c, x, y, out, x.size).ok
        want = model(x, y, F)
        assert np.array_equal(out, want), expr
        differs += int(np.any(want != model(x, y, lambda a, b, c_: a * b + c_)))
    assert differs >= 4  # fusing matters: unfused math would differ on these shapes


def test_a_product_bound_to_a_variable_is_fused_once_used():
    src = ELEM.replace("        C[i] = EXPR", "        t = A[i] * B[i]\n        C[i] = t + T.float32(0.3)")
    x = np.random.default_rng(4).standard_normal(1000).astype(np.float32)
    y = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
    c = txlab.compile(kernel(src, "k"), arch="sm_90a")
    assert "fma.rn.ftz.f32" in c.ptx
    out = np.zeros_like(x)
    assert emulate(c, x, y, out, x.size).ok
    assert np.array_equal(out, semantics.fma(x, y, np.float32(0.3), flush=True))


# ---- the op table --------------------------------------------------------------------------------
def test_op_table_is_current():
    """docs/emulator-ops.md is what the generator makes from the installed TVM and the emulator's
    registries (regenerate: python -m txlab.emulator.optable --write)."""
    from txlab.emulator import optable

    table = optable.rows()
    names = {r["name"]: r for r in table}
    for fn in ("expf", "__expf", "exp2f", "tanhf", "rsqrtf", "sqrtf", "hexp", "__popc"):
        assert names[fn]["status"] == "emulated", fn
    assert names["prim.if_then_else"]["status"] == "emulated"
    assert names["tirx.exp"]["status"] == "emulated" and "lowered" in names["tirx.exp"]["why"]
    assert "within" in names["expf"]["fast"] and names["sqrtf"]["ieee"].startswith("bitwise")
    assert all(r["why"] for r in table if r["status"] == "not emulated")
    assert optable.DOC.read_text() == optable.markdown(table), (
        "docs/emulator-ops.md is stale: python -m txlab.emulator.optable --write"
    )


# ---- kernels a newcomer writes first -------------------------------------------------------------
@pytest.mark.parametrize("name", ["softmax", "layernorm", "gelu_tanh", "gelu_erf", "clamp"])
def test_everyday_kernels_check_on_the_cpu(name):
    from txlab.examples import everyday as E

    rtol, atol = E.TOLERANCE[name]
    r = txlab.check(E.kernel(name), E.inputs(name), reference=E.reference(name), device="cpu", rtol=rtol, atol=atol)
    assert r.ok and r.device == "cpu", r


def test_fast_powf_flushes_a_denormal_exponent_before_the_multiply():
    """__powf is lg2.approx.ftz, mul.ftz, ex2.approx.ftz (the build's PTX): mul.ftz flushes its
    denormal operand, so powf(0, 1e-39) is ex2(0 * -inf) = NaN -- the H200's answer, recorded as
    the worst powf row of benchmarks/results/emulator_math_h200.json (the emulator gave 0.0)."""
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).parent.parent / "benchmarks/results/emulator_math_h200.json").read_text())["rows"]
    worst = next(r["worst"] for r in rows if r["function"] == "powf" and r["fast_math"])
    a = np.array([worst["a"], 0.0, 0.0, 2.0], np.float32)
    b = np.array([worst["b"], -1e-39, 2.0, 1e-39], np.float32)
    got = _run("T.pow(A[i], B[i])", a, b)
    assert np.isnan(worst["gpu"]) and np.isnan(got[0]) and np.isnan(got[1]), got
    assert got[2] == 0 and got[3] == 1


CLASSIFY = """
@T.prim_func
def classify(A: T.Buffer((64,), "DT"), O: T.Buffer((64,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    O[tx] = T.Select(T.isnan(A[tx]), 1, 0) + T.Select(T.isinf(A[tx]), 2, 0) + T.Select(T.isfinite(A[tx]), 4, 0)
"""


@pytest.mark.parametrize("dt", ["float32", "float16", "float64"])
@pytest.mark.parametrize("fast_math", [True, False])
def test_isnan_isinf_isfinite_classify_exactly(dt, fast_math):
    """T.isnan prints as ``x != x`` (``setp.nan`` in PTX, also with .ftz) and T.isinf / T.isfinite
    lower to fabs and isnan: exact in either build, a denormal stays finite (it used to stop with
    NotEmulatedError naming tirx.isnan)."""
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 6e-6, -3.0] * 8).astype(dt)
    o = np.zeros(64, np.int32)
    res = emulate(kernel(CLASSIFY.replace("DT", dt), "classify"), a, o, arch="sm_90a", fast_math=fast_math)
    assert res.ok, res.summary()
    x = a.astype(np.float64)
    np.testing.assert_array_equal(o, np.isnan(x) * 1 + np.isinf(x) * 2 + np.isfinite(x) * 4)


INT_MIN_DIV = """
@T.prim_func
def imin(A: T.Buffer((8,), "DT"), B: T.Buffer((8,), "DT"), Q: T.Buffer((8,), "DT"), R: T.Buffer((8,), "DT")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([8])
    Q[tx] = T.truncdiv(A[tx], B[tx])
    R[tx] = T.truncmod(A[tx], B[tx])
"""


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_c_division_of_the_type_minimum(dt):
    """C's ``/`` and ``%`` of the type's minimum by anything but -1 are defined (INT_MIN / 3 ==
    -715827882, INT_MIN % 3 == -2); the emulator took |INT_MIN|, which overflows, and gave
    715827883 and -1."""
    lo = int(np.iinfo(dt).min)
    a = np.array([lo, lo, lo, lo, lo, lo + 1, -7, 7], dt)
    b = np.array([3, -3, 2, 7, lo, -1, 2, -2], dt)
    q, r = np.zeros(8, dt), np.zeros(8, dt)
    assert emulate(kernel(INT_MIN_DIV.replace("DT", dt), "imin"), a, b, q, r, arch="sm_90a").ok
    want_q = [int(Fraction(int(x), int(y))) for x, y in zip(a, b)]  # int() of a Fraction truncates
    assert q.tolist() == want_q
    assert r.tolist() == [int(x) - int(y) * w for x, y, w in zip(a, b, want_q)]


LDEXP = """
@T.prim_func
def scale(A: T.Buffer((8,), "float32"), N: T.Buffer((8,), "int32"), O: T.Buffer((2, 8), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([8])
    O[0, tx] = T.ldexp(A[tx], N[tx])
    O[1, tx] = T.nextafter(A[tx], T.float32(0))
"""


@pytest.mark.parametrize("fast_math", [True, False])
def test_ldexp_and_nextafter_are_exact(fast_math):
    """``ldexpf``/``nextafterf`` stopped the run as unknown device functions; both are exact IEEE operations, the
    exponent stays an integer (``2^200`` overflows, ``2^-140`` of 1 is a denormal); fast math flushes ldexpf's
    denormals, and nextafterf's FTZ variant takes a denormal operand as zero and steps from zero to the smallest
    normal (as an H100 gave them: docs/gpu-runs.md, rounds 36 and 37)."""
    a = np.array([1.5, -3, 1e-39, 1, 3e38, 0, 7, 1e-30], np.float32)
    n = np.array([3, -2, 5, -140, 2, 9, 200, -20], np.int32)
    o = np.zeros((2, 8), np.float32)
    res = emulate(kernel(LDEXP, "scale"), a, n, o, fast_math=fast_math)
    assert res.ok, res.findings
    with np.errstate(all="ignore"):
        want = np.ldexp(a, n).astype(np.float32)
        after = np.nextafter(a, np.float32(0))
    if fast_math:  # ldexpf flushes denormals as the build's float ops do; nextafterf: 1e-39 counts as 0, equal to 0
        with np.errstate(all="ignore"):
            want = semantics.ftz(np.ldexp(semantics.ftz(a), n).astype(np.float32))
        after[2] = 0
    assert np.array_equal(o[0], want), o[0]
    assert np.array_equal(o[1], after), o[1]
    assert (o[0][3] == 0) == fast_math  # 2^-140: a denormal, kept only without fast math


@pytest.mark.parametrize("fast_math", [True, False])
def test_nextafter_from_zero_and_from_denormals_as_the_h100_gave_them(fast_math):
    """Lanes of round 37's H100 battery: under fast math a step from zero gives the smallest normal (0x00800000,
    0x80800000) and a denormal operand counts as zero; the IEEE build steps to the neighbouring denormal."""
    bits = lambda *v: np.array(v, np.uint32).view(np.float32)  # noqa: E731
    a = bits(0x0, 0x80000000, 0x0, 0x000116C2, 0x000116C2, 0x3F000000, 0x40200000, 0x0)
    b = bits(0x7F800000, 0x7F800000, 0xBF800000, 0x0, 0xBF800000, 0x0, 0x0, 0xFFC00000)  # last: towards a NaN
    src = """
@T.prim_func
def step(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), O: T.Buffer((8,), "float32")):
    T.device_entry()
    tx = T.thread_id([8])
    O[tx] = T.nextafter(A[tx], B[tx])
"""
    o = np.zeros(8, np.float32)
    assert emulate(kernel(src, "step"), a, b, o, fast_math=fast_math).ok
    gpu = (
        [0x00800000, 0x00800000, 0x80800000, 0x0, 0x80800000, 0x3EFFFFFF, 0x401FFFFF, 0x7FFFFFFF]
        if fast_math
        else [0x1, 0x1, 0x80000001, 0x000116C1, 0x000116C1, 0x3EFFFFFF, 0x401FFFFF, 0x7FFFFFFF]
    )
    assert [hex(v) for v in o.view(np.uint32)] == [hex(v) for v in gpu]
