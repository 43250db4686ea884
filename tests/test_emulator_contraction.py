"""FMA contraction beyond single-use products, each shape checked against the build's SASS: a
product used only by adds/subs is fused into every one of them, a fast-math division's multiply
fuses like any other, and a product bound outside a loop is not fused into an add inside it."""

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate
from txlab.ir import semantics

from test_emulator import kernel  # noqa: E402  (tests/ is on sys.path)

TWO_OUT = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, D_ptr: T.handle, E_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    C = T.match_buffer(C_ptr, (n,), "float32")
    D = T.match_buffer(D_ptr, (n,), "float32")
    E = T.match_buffer(E_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 128)])
    tx = T.thread_id([128])
    i = bx * 128 + tx
    if i < n:
BODY
"""


def _rcp(b):
    return semantics.rcp_approx_ftz(b)


#: (body, FFMA in the SASS, fast math?, model of (D, E) with the build's fused ops explicit)
SHAPES = [
    (  # one product, two uses (an add and a sub): ptxas fuses both and drops the FMUL
        "        t = A[i] * B[i]\n        D[i] = t + C[i]\n        E[i] = t - A[i]",
        2,
        True,
        lambda a, b, c, F: (F(a, b, c), F(a, b, -a)),
    ),
    (
        "        t = A[i] * B[i]\n        D[i] = t + C[i]\n        E[i] = t - A[i]",
        2,
        False,
        lambda a, b, c, F: (F(a, b, c), F(a, b, -a)),
    ),
    (  # the same product twice in one add: nvcc's fma(a, b, a * b)
        "        D[i] = A[i] * B[i] + A[i] * B[i]\n        E[i] = C[i]",
        1,
        True,
        lambda a, b, c, F: (F(a, b, semantics.ftz(a * b)), c),
    ),
    (  # fast math: a / b is MUFU.RCP and a multiply, fused into the add / sub
        "        D[i] = A[i] / B[i] + C[i]\n        E[i] = C[i] - A[i] / B[i]",
        2,
        True,
        lambda a, b, c, F: (F(a, _rcp(b), c), F(-a, _rcp(b), c)),
    ),
    (  # layernorm's var / n + eps
        "        D[i] = A[i] / T.float32(96) + T.float32(1e-5)\n        E[i] = C[i]",
        1,
        True,
        lambda a, b, c, F: (F(a, _rcp(np.float32(96)), np.float32(1e-5)), c),
    ),
    (  # a product also stored is not fused
        "        D[i] = A[i] * B[i]\n        E[i] = A[i] * B[i] + C[i]",
        0,
        True,
        lambda a, b, c, F: (semantics.ftz(a * b), semantics.ftz(semantics.ftz(a * b) + c)),
    ),
]


@pytest.mark.parametrize("body, n_fma, fast, model", SHAPES)
def test_multi_use_products_and_fast_divisions_fuse_as_the_sass_does(body, n_fma, fast, model):
    c = txlab.compile(kernel(TWO_OUT.replace("BODY", body), "k"), arch="sm_90a", fast_math=fast)
    assert len(c.instructions(r"^FFMA")) == n_fma, c.instructions(r"^(F(FMA|MUL|ADD)|MUFU)")
    rng = np.random.default_rng(7)
    a, b, cc = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    d, e = np.zeros_like(a), np.zeros_like(a)
    assert emulate(c, a, b, cc, d, e, a.size).ok

    def F(x, y, z):
        return semantics.fma(x, y, z, flush=fast)

    want_d, want_e = model(a, b, cc, F)
    assert np.array_equal(d, want_d) and np.array_equal(e, want_e)


LOOP = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, D_ptr: T.handle, E_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    C = T.match_buffer(C_ptr, (n,), "float32")
    D = T.match_buffer(D_ptr, (n,), "float32")
    E = T.match_buffer(E_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    t = A[tx] * B[tx]
    acc = T.alloc_local((1,), "float32")
    acc[0] = C[tx]
    for j in range(E.shape[0] // 32):
        acc[0] = acc[0] + t
    D[tx] = acc[0]
"""


def test_a_product_outside_a_runtime_loop_is_not_fused_inside_it():
    c = txlab.compile(kernel(LOOP, "k"), arch="sm_90a")
    assert len(c.instructions(r"^FFMA")) == 0 and len(c.instructions(r"^FMUL")) == 1
    rng = np.random.default_rng(3)
    a, b, cc = (rng.standard_normal(96).astype(np.float32) for _ in range(3))
    d, e = np.zeros_like(a), np.zeros_like(a)
    assert emulate(c, a, b, cc, d, e, a.size).ok
    t = (a * b)[:32]
    want = cc[:32].copy()
    for _ in range(3):
        want = want + t
    assert np.array_equal(d[:32], want)


HALF = TWO_OUT.replace('"float32"', '"DT"')

#: (body, HFMA2 in the SASS, model of (D, E) from the inputs with F the fused op and R one rounding)
HALF_SHAPES = [
    (  # m + c and c - m: ptxas fuses mul.f16 and add.f16 / sub.f16 (no .rn) into HFMA2
        "        D[i] = A[i] * B[i] + C[i]\n        E[i] = C[i] - A[i] * B[i]",
        2,
        lambda a, b, c, e, F, R: (F(a, b, c), F(-a, b, c)),
    ),
    (  # an equal product also stored: each product written is its own mul; the add's is fused
        "        D[i] = A[i] * B[i] - C[i]\n        E[i] = A[i] * B[i]",
        1,
        lambda a, b, c, e, F, R: (F(a, b, -c), R(a * b)),
    ),
    (  # two products: the first is fused, the second rounded
        "        D[i] = A[i] * B[i] - C[i] * E[i]\n        E[i] = C[i] * E[i] + A[i] * B[i]",
        2,
        lambda a, b, c, e, F, R: (F(a, b, -R(c * e)), F(c, e, R(a * b))),
    ),
    (  # the same product twice: computed once (HMUL2), then HADD2
        "        D[i] = A[i] * B[i] + A[i] * B[i]\n        E[i] = C[i]",
        0,
        lambda a, b, c, e, F, R: (R(R(a * b) + R(a * b)), c),
    ),
    (  # a fused result multiplied and added again: two HFMA2
        "        D[i] = (A[i] * B[i] + C[i]) * E[i] + A[i]\n        E[i] = C[i]",
        2,
        lambda a, b, c, e, F, R: (F(F(a, b, c), e, a), c),
    ),
]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("body, n_fma, model", HALF_SHAPES)
def test_half_and_bfloat16_mul_add_fuse_as_ptxas_does(body, n_fma, model, fast, dt):
    """TVM prints half arithmetic as cuda_fp16.h / cuda_bf16.h operators: mul.f16 and add.f16 in the
    PTX, no rounding modifier, which ptxas fuses into HFMA2 (one rounding) with or without fast
    math. Checked bitwise against float64 arithmetic rounded once per instruction the SASS has."""
    import ml_dtypes

    npdt = np.float16 if dt == "float16" else ml_dtypes.bfloat16
    c = txlab.compile(kernel(HALF.replace("DT", dt).replace("BODY", body), "k"), arch="sm_90a", fast_math=fast)
    assert len(c.instructions(r"^HFMA2(\.BF16_V2)?\s")) == n_fma, c.instructions(r"^H(FMA|MUL|ADD)")
    rng = np.random.default_rng(11)
    a, b, cc, e0 = ((rng.standard_normal(1000) * 10).astype(npdt) for _ in range(4))
    d, e = np.zeros_like(a), e0.copy()
    assert emulate(c, a, b, cc, d, e, a.size).ok

    def R(x):  # one rounding of an exact float64 value
        return np.asarray(x, np.float64).astype(npdt).astype(np.float64)

    def F(x, y, z):  # HFMA2: x * y + z exact in float64 here (|values| < 2^10, 24-bit products), one rounding
        return R(np.asarray(x, np.float64) * np.asarray(y, np.float64) + np.asarray(z, np.float64))

    f64 = [np.asarray(v, np.float64) for v in (a, b, cc, e0)]
    want_d, want_e = model(*f64, F, R)
    assert np.array_equal(d.astype(np.float64), want_d)
    assert np.array_equal(e.astype(np.float64), want_e)


HALF_VEC = """
@T.prim_func
def k(A: T.Buffer((1024,), "DT"), B: T.Buffer((1024,), "DT"), C: T.Buffer((1024,), "DT"), D: T.Buffer((1024,), "DT"),
      E: T.Buffer((1024,), "DT")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    for v in T.vectorized(8):
        i = T.meta_var(tx * 8 + v)
        D[i] = A[i] * B[i] + C[i]
        E[i] = C[i] - A[i] * B[i]
"""


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_vectorized_half_and_bfloat16_mul_add_fuse_lane_by_lane(dt):
    """A vectorized loop's float16x8 / bfloat16x8 ``a * b + c`` and ``c - a * b``: ptxas fuses each lane pair into
    HFMA2 as it does the scalar forms (before, the emulator rounded the product and the sum apart: up to 108 half-ulp
    off where the sum cancels)."""
    import ml_dtypes

    npdt = np.float16 if dt == "float16" else ml_dtypes.bfloat16
    c = txlab.compile(kernel(HALF_VEC.replace("DT", dt), "k"), arch="sm_90a")
    assert c.instructions(r"^HFMA2"), c.instructions(r"^H(FMA|MUL|ADD)")
    assert not c.instructions(r"^HMUL2"), c.instructions(r"^H(FMA|MUL|ADD)")
    rng = np.random.default_rng(12)
    a, b, cc = ((rng.standard_normal(1024) * 10).astype(npdt) for _ in range(3))
    d, e = np.zeros_like(a), np.zeros_like(a)
    assert emulate(c, a, b, cc, d, e).ok
    f64 = [np.asarray(v, np.float64) for v in (a, b, cc)]
    assert np.array_equal(d, (f64[0] * f64[1] + f64[2]).astype(npdt))
    assert np.array_equal(e, (f64[2] - f64[0] * f64[1]).astype(npdt))


ROPE = """
@T.prim_func
def rope(X: T.Buffer((256, 2), "float32"), CS: T.Buffer((256, 2), "float32"), O: T.Buffer((256, 2), "float32")):
    T.device_entry()
    T.cta_id([1])
    i = T.thread_id([256])
    O[i, 0] = X[i, 0] * CS[i, 0] - X[i, 1] * CS[i, 1]
    O[i, 1] = X[i, 0] * CS[i, 1] + X[i, 1] * CS[i, 0]
"""


@pytest.mark.parametrize("fast", [True, False])
def test_a_rotation_fuses_the_product_the_sass_fuses(fast):
    """RoPE's rotation (a complex multiply) with the loads written in both lines: the second line's ``x0 * s +
    x1 * c`` fuses ``x0 * s`` in the SASS (its loads, after the first line's store, rank as new loads when LLVM's
    Reassociate orders the add; they are merged only later). The emulator once fused ``x1 * c`` there: a third of
    the outputs one ulp off."""
    c = txlab.compile(kernel(ROPE, "rope"), arch="sm_90a", fast_math=fast)
    assert len(c.instructions(r"^FFMA")) == 2 and len(c.instructions(r"^FMUL")) == 2, c.instructions(r"^F(FMA|MUL)")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 2)).astype(np.float32)
    ang = rng.uniform(0, 6.28, 256)
    cs = np.stack([np.cos(ang), np.sin(ang)], 1).astype(np.float32)
    o = np.zeros((256, 2), np.float32)
    assert emulate(c, x, cs, o).ok
    x0, x1, co, si = x[:, 0], x[:, 1], cs[:, 0], cs[:, 1]

    def F(a, b, z):
        return semantics.fma(a, b, z, flush=fast)

    def mul(a, b):
        return semantics.ftz(a * b) if fast else a * b

    assert np.array_equal(o[:, 0], F(x0, co, -mul(x1, si)))
    assert np.array_equal(o[:, 1], F(x0, si, mul(x1, co)))


LOCALS = """
@T.prim_func
def k(A_ptr: T.handle, B_ptr: T.handle, O_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 2), "float32")
    B = T.match_buffer(B_ptr, (256, 2), "float32")
    O = T.match_buffer(O_ptr, (256, 2), "float32")
    T.device_entry()
    T.cta_id([1])
    i = T.thread_id([256])
    ar = A[i, 0]
    ai = A[i, 1]
    br = B[i, 0]
    bi = B[i, 1]
    O[i, 0] = ar * br - ai * bi
    O[i, 1] = ar * bi + ai * br
"""


def test_products_of_locals_rank_as_the_loads_stored_into_them():
    """A complex multiply with their loads bound to TVMScript locals first (``ar = A[i, 0]``): each local is
    one SSA value, so ``ar * bi + ai * br`` ranks its products by the loads (ar 1st, ai 2nd, br 3rd, bi 4th) and fuses
    ``ai * br``, the lower. The emulator once ranked the locals' reads on the second line as new loads (after the
    first line's store) and fused ``ar * bi``: 50 of 128 imaginary parts off, by up to 17 ulp."""
    c = txlab.compile(kernel(LOCALS, "k"), arch="sm_90a")
    assert len(c.instructions(r"^FFMA")) == 2 and len(c.instructions(r"^FMUL")) == 2, c.instructions(r"^F(FMA|MUL)")
    rng = np.random.default_rng(24)
    a = rng.standard_normal((256, 2)).astype(np.float32)
    b = rng.standard_normal((256, 2)).astype(np.float32)
    o = np.zeros((256, 2), np.float32)
    assert emulate(c, a, b, o).ok
    ar, ai, br, bi = a[:, 0], a[:, 1], b[:, 0], b[:, 1]
    F, mul = semantics.fma, (lambda x, y: semantics.ftz(x * y))
    assert np.array_equal(o[:, 0], F(ar, br, -mul(ai, bi)))
    assert np.array_equal(o[:, 1], F(ai, br, mul(ar, bi)))


SHARED = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32"),
      D: T.Buffer((256,), "float32"), O: T.Buffer((NOUT, 256), "float32")):
    T.device_entry()
    T.cta_id([1])
    i = T.thread_id([256])
    a = A[i]
    b = B[i]
    c = C[i]
    d = D[i]
BODY
"""

#: (outputs O[0], O[1], ... as written, FFMA and FMUL in the SASS, model of the outputs with F the fused op and R a
#: rounded multiply)
SHARED_SHAPES = [
    (  # ptxas: c * d has fewer uses than a * b, so it is fused into both; a * b stays an FMUL (c + a * b rounds twice)
        ["a * b + c * d", "a * b - c * d", "a * b + c"],
        (2, 1),
        lambda a, b, c, d, F, R: (F(c, d, R(a, b)), F(-c, d, R(a, b)), c + R(a, b)),
    ),
    (  # ptxas fuses products used once first: c * d here, which makes a * b an addend, fused nowhere after
        ["a * b - c", "a * b - c * d", "a * b - d"],
        (1, 1),
        lambda a, b, c, d, F, R: (R(a, b) - c, F(-c, d, R(a, b)), R(a, b) - d),
    ),
    (  # c * d used twice: a * b - c is fused before a * b loses to c * d (fewer uses), a * b - d after is not
        ["a * b - c", "a * b - c * d", "a * b - d", "c * d - a"],
        (3, 1),
        lambda a, b, c, d, F, R: (F(a, b, -c), F(-c, d, R(a, b)), R(a, b) - d, F(c, d, -a)),
    ),
    (  # NVVM visits the adds last to first: a * b is fused into the second line first, and c * d, now an addend, is
        # not fused into c * d + a (written the other way round, c * d would be fused into both)
        ["c * d + a", "a * b + c * d"],
        (1, 1),
        lambda a, b, c, d, F, R: (R(c, d) + a, F(a, b, R(c, d))),
    ),
    (  # a complex multiply's parts: ptxas fuses a * b (its minuend) into the first line, so c * d is an addend there
        # and NVVM does not fuse it into the second either (it fuses a * (1 - d), used once)
        ["a * b - c * d", "a * (T.float32(1) - d) + c * d"],
        (2, 1),
        lambda a, b, c, d, F, R: (F(a, b, -R(c, d)), F(a, np.float32(1) - d, R(c, d))),
    ),
    (  # Reassociate turns x + y * -3 (y * -3 used once) into x - y * 3, x first (the DAG combiner makes it an fadd
        # again): b * c is fused, not a * -3, written first and lower in rank
        ["a * T.float32(-3) + b * c"],
        (1, 1),
        lambda a, b, c, d, F, R: (F(b, c, R(a, np.float32(-3))),),
    ),
    (  # a product used twice by one add can never go, so ptxas fuses it nowhere
        ["a * b + c", "a * b + a * b", "a * b - d"],
        (0, 1),
        lambda a, b, c, d, F, R: (R(a, b) + c, R(a, b) + R(a, b), R(a, b) - d),
    ),
    (  # loads written again after stores: InstCombine merges B[i] with the load six instructions back, A[i] (two
        # stores back) is a new load, so the ranks of A[i] * B[i] and A[i] * A[i] tie and the first is fused
        ["A[i]", "B[i]", "A[i] * B[i] + A[i] * A[i]"],
        (1, 1),
        lambda a, b, c, d, F, R: (a, b, F(a, b, R(a, a))),
    ),
]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("outs, counts, model", SHARED_SHAPES)
def test_shared_products_fuse_as_nvvm_then_ptxas_do(outs, counts, model, fast):
    """Products shared between outputs: NVVM fuses some into fadds (last to first), ptxas the rest (products used
    once first, then fewer uses first), and a product that became an FFMA's addend is fused nowhere after. Each
    shape's FFMA and FMUL are counted in the SASS and its outputs checked bitwise against the fused model."""
    body = "".join(f"    O[{j}, i] = {e}\n" for j, e in enumerate(outs))
    src = SHARED.replace("NOUT", str(len(outs))).replace("BODY", body)
    c = txlab.compile(kernel(src, "k"), arch="sm_90a", fast_math=fast)
    got = (len(c.instructions(r"^FFMA")), len(c.instructions(r"^FMUL")))
    assert got == counts, c.instructions(r"^F(FMA|MUL|ADD)")
    rng = np.random.default_rng(17)
    a, b, cc, d = (rng.standard_normal(256).astype(np.float32) for _ in range(4))
    o = np.zeros((len(outs), 256), np.float32)
    assert emulate(c, a, b, cc, d, o).ok

    def F(x, y, z):
        return semantics.fma(x, y, z, flush=fast)

    def R(x, y):
        return semantics.ftz(x * y) if fast else x * y

    for j, want in enumerate(model(a, b, cc, d, F, R)):
        assert np.array_equal(o[j], np.broadcast_to(want, o[j].shape)), (outs[j], int(np.sum(o[j] != want)))
