"""NaN results are the GPU's: float32/float16/bfloat16 arithmetic, math functions and conversions give the format's
canonical NaN (0x7fffffff, 0x7fff; fp8: 0x7f), whatever payload went in; moves keep every bit; float64 follows x86's
rules (txlab.emulator.nan).

The numpy the emulator computes with keeps the payload (and makes x86's 0xffc00000 for inf - inf), so before the
fix ``Y[tx] = X[tx] * 2 + 1`` on the NaN 0x7fe5a5a5 gave 0x7fe5a5a5 on the CPU where the SASS (FFMA.FTZ) gives
0x7fffffff (audit 37b, section 5). The expected bits below are what an H100 returned for a battery of 119 TIR
expressions (both builds, nvcc 13.0, sm_90a) on these NaNs: every NaN lane of the emulator matched it after the fix,
176 rows did not before."""

import ml_dtypes
import numpy as np
import pytest

from txlab.emulator import emulate

from test_emulator import kernel  # noqa: E402  (tests/ is on sys.path)

BF16 = np.dtype(ml_dtypes.bfloat16)
N = 64
#: NaNs with payloads, signs and a signalling one, then numbers (the NaN lanes are what is checked)
F32_NANS = [0x7FE5A5A5, 0xFFE5A5A5, 0x7F800001, 0xFF812345, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF]
F16_NANS = [0x7E5A, 0xFE5A, 0x7C01, 0xFC23, 0x7E00, 0xFE00, 0x7E01, 0x7FFF]
BF16_NANS = [0x7FA5, 0xFFA5, 0x7F81, 0xFF83, 0x7FC0, 0xFFC0, 0x7FC1, 0x7FFF]


def _with_nans(dt, nans, seed=0):
    """N values of ``dt``: every 4th lane one of ``nans`` (bits), the others ordinary numbers."""
    dt = np.dtype(dt)
    x = np.random.default_rng(seed).uniform(-4, 4, N).astype(np.float32).astype(dt)
    u = x.view(f"u{dt.itemsize}")
    u[::4] = np.resize(np.array(nans, u.dtype), u[::4].size)
    return x


def _pair(dt, nans):
    """Operands with NaN op NaN (lanes 0 mod 8), NaN op number (4 mod 8) and number op NaN (1 mod 8)."""
    a, b = _with_nans(dt, nans), _with_nans(dt, nans[::-1], seed=1)
    b[4::8] = a[5::8]
    b[1::8] = a[0::8]
    return a, b


def _numpy(expr, a, b):
    with np.errstate(all="ignore"):
        return eval(expr.replace("[tx]", ""), {"A": a.astype(np.float64), "B": b.astype(np.float64)})  # noqa: S307


def _bits(x):
    return x.view(f"u{x.dtype.itemsize}")


def _unary(expr, in_dt, out_dt, x, fast_math=True, rows=1):
    src = f"""
@T.prim_func
def k(X: T.Buffer(({N},), "{in_dt}"), Y: T.Buffer(({rows}, {N}), "{out_dt}")):
    T.device_entry()
    tx = T.thread_id([{N}])
    {expr}
"""
    y = np.zeros((rows, N), np.dtype(BF16 if out_dt == "bfloat16" else out_dt))
    res = emulate(kernel(src, "k"), x, y, arch="sm_90a", fast_math=fast_math)
    assert res.ok, res.summary()
    return y


def _binary(expr, dt, a, b, fast_math=True):
    src = f"""
@T.prim_func
def k(A: T.Buffer(({N},), "{dt}"), B: T.Buffer(({N},), "{dt}"), Y: T.Buffer(({N},), "{dt}")):
    T.device_entry()
    tx = T.thread_id([{N}])
    Y[tx] = {expr}
"""
    y = np.zeros(N, a.dtype)
    res = emulate(kernel(src, "k"), a, b, y, arch="sm_90a", fast_math=fast_math)
    assert res.ok, res.summary()
    return y


# ---- the audit's kernel --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fast_math", [True, False])
def test_an_ffma_of_a_nan_payload_gives_the_canonical_nan(fast_math):
    """``X * 2 + 1`` is one FFMA(.FTZ): a NaN in, 0x7fffffff out (audit 37b #5: the payload came out)."""
    x = np.full(256, 0x7FE5A5A5, np.uint32).view(np.float32)
    src = """
@T.prim_func
def mul2(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
    T.device_entry()
    tx = T.thread_id([256])
    Y[tx] = X[tx] * T.float32(2.0) + T.float32(1.0)
"""
    y = np.zeros(256, np.float32)
    assert emulate(kernel(src, "mul2"), x, y, arch="sm_90a", fast_math=fast_math).ok
    assert (_bits(y) == 0x7FFFFFFF).all(), hex(_bits(y)[0])


@pytest.mark.parametrize("fast_math", [True, False])
@pytest.mark.parametrize("expr", ["A[tx] + B[tx]", "A[tx] - B[tx]", "A[tx] * B[tx]", "A[tx] / B[tx]"])
def test_f32_arithmetic_gives_the_canonical_nan(expr, fast_math):
    """A payload NaN operand (either side, both, signalling, negative) and inf - inf / 0 * inf / 0 / 0: every NaN
    result is 0x7fffffff; numbers stay what they were."""
    a, b = _pair(np.float32, F32_NANS)
    a[2], b[2], a[6], b[6] = np.inf, -np.inf, 0.0, np.inf  # inf - inf / inf + -inf, 0 * inf, 0 / inf
    y = _binary(expr, "float32", a, b, fast_math)
    nan = np.isnan(y)
    assert (nan == np.isnan(a) | np.isnan(b) | np.isnan(_numpy(expr, a, b))).all()
    assert (_bits(y)[nan] == 0x7FFFFFFF).all(), [hex(v) for v in _bits(y)[nan]]


# ---- float16 and bfloat16 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt, nans", [("float16", F16_NANS), ("bfloat16", BF16_NANS)])
@pytest.mark.parametrize(
    "expr", ["A[tx] + B[tx]", "A[tx] * B[tx]", "A[tx] - B[tx]", "A[tx] * B[tx] + A[tx]", "-A[tx]", "T.abs(A[tx])"]
)
def test_half_arithmetic_gives_0x7fff(dt, nans, expr):
    """HADD2/HMUL2/HFMA2 (and their .BF16 forms) return 0x7fff for a NaN; ``-x`` (a multiply by -1) and ``abs``
    (HADD2 |x|, -RZ / HFMA2.BF16 -RZ, RZ, |x|) are arithmetic in the SASS too."""
    np_dt = BF16 if dt == "bfloat16" else np.dtype(dt)
    a, b = _pair(np_dt, nans)
    y = _binary(expr, dt, a, b)
    nan = np.isnan(y.astype(np.float32))
    assert nan[::4].all()
    assert (_bits(y)[nan] == 0x7FFF).all(), [hex(v) for v in _bits(y)[nan]]


@pytest.mark.parametrize("fast_math", [True, False])
@pytest.mark.parametrize("op", ["max", "min"])
def test_f32_min_max_give_the_number_or_the_canonical_nan(op, fast_math):
    """fmaxf/fminf (FMNMX): one NaN operand gives the other operand, two give 0x7fffffff (numpy's fmax kept the
    first one's payload)."""
    a, b = _pair(np.float32, F32_NANS)
    y = _binary(f"T.{op}(A[tx], B[tx])", "float32", a, b, fast_math)
    na, nb = np.isnan(a), np.isnan(b)
    assert (na & nb)[::8].all() and (_bits(y)[na & nb] == 0x7FFFFFFF).all()
    assert (na & ~nb).sum() == 8 and np.array_equal(_bits(y)[na & ~nb], _bits(b)[na & ~nb])
    assert (nb & ~na).sum() == 8 and np.array_equal(_bits(y)[nb & ~na], _bits(a)[nb & ~na])


@pytest.mark.parametrize("dt, nans", [("float16", F16_NANS), ("bfloat16", BF16_NANS)])
@pytest.mark.parametrize("op", ["max", "min"])
def test_half_min_max_are_tvms_compare_and_select(dt, nans, op):
    """TVM's CUDA prelude defines ``max(half a, half b)`` as ``__hgt(a, b) ? a : b`` (``min``: ``__hlt``), bfloat16
    alike: HSETP2 + SEL in the SASS. So a NaN on either side gives ``b``, bits and all (the emulator used fmaxf's
    rule: the number, and numpy's NaN 0x7e00 / 0x7fc0 for two), and of two zeros the second."""
    np_dt = BF16 if dt == "bfloat16" else np.dtype(dt)
    a, b = _pair(np_dt, nans)
    a[2], b[2], a[3], b[3] = -0.0, 0.0, 0.0, -0.0
    y = _binary(f"T.{op}(A[tx], B[tx])", dt, a, b)
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    pick_a = fa > fb if op == "max" else fa < fb
    assert np.array_equal(_bits(y), np.where(pick_a, _bits(a), _bits(b)))
    assert (np.isnan(fa) | np.isnan(fb)).sum() == 24 and _bits(y)[2] == _bits(b)[2] and _bits(y)[3] == _bits(b)[3]


# ---- what moves bits keeps them ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dt, nans", [("float32", F32_NANS), ("float16", F16_NANS), ("bfloat16", BF16_NANS)])
def test_moves_and_selects_keep_the_payload(dt, nans):
    """A copy, a select, ``if_then_else`` and a local round trip are moves (LDG/STG/SEL/MOV): the payload and the
    signalling bit arrive as they left."""
    np_dt = BF16 if dt == "bfloat16" else np.dtype(dt)
    x = _with_nans(np_dt, nans)
    y = _unary(
        "Y[0, tx] = X[tx]\n"
        "    Y[1, tx] = T.Select(tx % 2 == 0, X[tx], X[(tx + 4) % 64])\n"
        "    Y[2, tx] = T.if_then_else(tx < 70, X[tx], X[0])\n"
        "    t = T.alloc_local((1,), DT)\n"
        "    t[0] = X[tx]\n"
        "    Y[3, tx] = t[0]".replace("DT", repr(dt)),
        dt,
        dt,
        x,
        rows=4,
    )
    assert np.array_equal(_bits(y[0]), _bits(x))
    assert np.array_equal(_bits(y[1]), np.where(np.arange(N) % 2 == 0, _bits(x), np.roll(_bits(x), -4)))
    assert np.array_equal(_bits(y[2]), _bits(x)) and np.array_equal(_bits(y[3]), _bits(x))


def test_f32_negation_and_fabs_are_fadds():
    """``-x`` and ``fabsf(x)`` are ``FADD -x, -RZ`` / ``FADD |x|, -RZ`` in the SASS (not sign-bit LOPs): the
    canonical NaN, as the PTX model's ``neg``/``abs`` (txlab.emulator.ptx_farith)."""
    x = _with_nans(np.float32, F32_NANS)
    y = _unary("Y[0, tx] = -X[tx]\n    Y[1, tx] = T.abs(X[tx])", "float32", "float32", x, rows=2)
    nan = np.isnan(x)
    for r, want in ((y[0], -x), (y[1], np.abs(x))):
        assert (_bits(r)[nan] == 0x7FFFFFFF).all()
        assert np.array_equal(_bits(r)[~nan], _bits(want)[~nan])


# ---- conversions ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fast_math", [True, False])
def test_conversions_between_float_widths(fast_math):
    """f32 -> f16 / bf16 (F2FP) and f16 -> f32 (HADD2.F32) give the canonical NaN; bf16 -> f32 is a 16-bit shift
    (SHF.L.U32) and keeps every bit."""
    x32 = _with_nans(np.float32, F32_NANS)
    y = _unary("Y[0, tx] = T.Cast('float16', X[tx])", "float32", "float16", x32, fast_math)
    assert (_bits(y[0])[::4] == 0x7FFF).all()
    y = _unary("Y[0, tx] = T.Cast('bfloat16', X[tx])", "float32", "bfloat16", x32, fast_math)
    assert (_bits(y[0])[::4] == 0x7FFF).all()
    x16 = _with_nans(np.float16, F16_NANS)
    y = _unary("Y[0, tx] = T.Cast('float32', X[tx])", "float16", "float32", x16, fast_math)
    assert (_bits(y[0])[::4] == 0x7FFFFFFF).all()
    xb = _with_nans(BF16, BF16_NANS)
    y = _unary("Y[0, tx] = T.Cast('float32', X[tx])", "bfloat16", "float32", xb, fast_math)
    assert np.array_equal(_bits(y[0]), _bits(xb).astype(np.uint32) << 16)


# ---- math functions ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fast_math", [True, False])
@pytest.mark.parametrize(
    "expr", ["T.exp(X[tx])", "T.tanh(X[tx])", "T.sqrt(X[tx])", "T.log(X[tx])", "T.sin(X[tx])", "T.floor(X[tx])"]
)
def test_math_functions_give_the_canonical_nan(expr, fast_math):
    """MUFU (ex2, lg2, tanh, rsq, sin), the FFMA chains of libdevice and FRND return 0x7fffffff for a NaN input."""
    x = _with_nans(np.float32, F32_NANS)
    y = _unary(f"Y[0, tx] = {expr}", "float32", "float32", x, fast_math)
    assert (_bits(y[0])[::4] == 0x7FFFFFFF).all(), [hex(v) for v in _bits(y[0])[::4]]


def test_half_math_functions_give_0x7fff():
    x = _with_nans(np.float16, F16_NANS)
    y = _unary("Y[0, tx] = T.exp(X[tx])\n    Y[1, tx] = T.sqrt(X[tx])", "float16", "float16", x, rows=2)
    assert (_bits(y)[:, ::4] == 0x7FFF).all()


# ---- float64: x86's rules, as the H100 gave them ----------------------------------------------------------------
F64_NANS = [0x7FF5A5A5A5A5A5A5, 0xFFF5A5A5A5A5A5A5, 0x7FF0000000000001, 0xFFF0000000001234, 0x7FF8000000000000]
F64_QUIETED = [0x7FFDA5A5A5A5A5A5, 0xFFFDA5A5A5A5A5A5, 0x7FF8000000000001, 0xFFF8000000001234, 0x7FF8000000000000]


@pytest.mark.parametrize("fast_math", [True, False])
def test_f64_nans_come_out_quieted_with_their_payload(fast_math):
    """DADD/DMUL/DFMA, ``fabs`` (DADD -RZ, |x|: the sign stays), libdevice's ``tanh`` and DMNMX of two NaNs (the
    first) all return the NaN operand with its quiet bit set (numpy's ``abs`` cleared the sign and kept a signalling
    NaN, its ``tanh`` and ``fmax`` gave 0x7ff8000000000000)."""
    x = np.ones(N)
    x.view(np.uint64)[: len(F64_NANS)] = F64_NANS
    second = np.roll(x, 1)  # lanes 1..4: NaN op NaN, the first operand x
    y = np.zeros((5, N))
    src = f"""
@T.prim_func
def k(X: T.Buffer(({N},), "float64"), S: T.Buffer(({N},), "float64"), Y: T.Buffer((5, {N}), "float64")):
    T.device_entry()
    tx = T.thread_id([{N}])
    Y[0, tx] = X[tx] + T.float64(1)
    Y[1, tx] = T.abs(X[tx])
    Y[2, tx] = T.tanh(X[tx])
    Y[3, tx] = T.max(X[tx], S[tx])
    Y[4, tx] = T.min(X[tx], S[tx])
"""
    assert emulate(kernel(src, "k"), x, second, y, arch="sm_90a", fast_math=fast_math).ok
    for row in range(3):
        assert [hex(v) for v in _bits(y[row])[:5]] == [hex(v) for v in F64_QUIETED], row
    for row in (3, 4):
        assert [hex(v) for v in _bits(y[row])[1:5]] == [hex(v) for v in F64_QUIETED[1:5]], row


@pytest.mark.parametrize("fast_math", [True, False])
def test_conversions_from_and_to_f64(fast_math):
    """F2F from float64 keeps the sign and the payload's top bits, quieted (f16 and bf16 too: numpy gave 0x7d69 and
    ml_dtypes 0x7fc0); to float64, a float32 keeps its payload, quieted, except that fast math first multiplies it
    by 1 (FMUL.FTZ: 0x7fffffff); a float16 goes through HADD2.F32 (canonical)."""
    d = np.ones(N)
    d.view(np.uint64)[: len(F64_NANS)] = F64_NANS
    for dt, want in (
        ("float32", [0x7FED2D2D, 0xFFED2D2D, 0x7FC00000, 0xFFC00000, 0x7FC00000]),
        ("float16", [0x7F69, 0xFF69, 0x7E00, 0xFE00, 0x7E00]),
        ("bfloat16", [0x7FED, 0xFFED, 0x7FC0, 0xFFC0, 0x7FC0]),
    ):
        y = _unary(f"Y[0, tx] = T.Cast('{dt}', X[tx])", "float64", dt, d, fast_math)
        assert [hex(v) for v in _bits(y[0])[:5]] == [hex(v) for v in want], dt
    x = _with_nans(np.float32, F32_NANS)
    y = _unary("Y[0, tx] = T.Cast('float64', X[tx])", "float32", "float64", x, fast_math)
    want = [0x7FFFFFFFE0000000] * 4 if fast_math else [0x7FFCB4B4A0000000, 0xFFFCB4B4A0000000, 0x7FF8000020000000]
    assert [hex(v) for v in _bits(y[0])[::4][: len(want)]] == [hex(v) for v in want]
    h = _with_nans(np.float16, F16_NANS)
    y = _unary("Y[0, tx] = T.Cast('float64', X[tx])", "float16", "float64", h, fast_math)
    assert (_bits(y[0])[::4] == 0x7FFFFFFFE0000000).all()


# ---- fp8 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fp8", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_conversions(fp8):
    """F2FP.SATFINITE to e4m3 and e5m2 gives 0x7f for every NaN, the sign dropped (ml_dtypes gave 0xff, 0x7e and
    0xfe); unpacking an fp8 NaN to float16 or float32 gives the canonical NaN."""
    np_fp8 = np.dtype(getattr(ml_dtypes, fp8))
    for src_dt, nans in (("float32", F32_NANS), ("float16", F16_NANS), ("bfloat16", BF16_NANS)):
        x = _with_nans(BF16 if src_dt == "bfloat16" else np.dtype(src_dt), nans)
        y = _unary(f"Y[0, tx] = T.Cast('{fp8}', X[tx])", src_dt, fp8, x)
        assert (_bits(y[0])[::4] == 0x7F).all(), (src_dt, [hex(v) for v in _bits(y[0])[::4]])
    q = np.ones(N, np.float32).astype(np_fp8)
    q.view(np.uint8)[::4] = 0x7F if fp8 == "float8_e4m3fn" else [0x7D, 0xFE, 0x7F, 0xFD] * 4
    y = _unary("Y[0, tx] = T.Cast('float16', X[tx])", fp8, "float16", q)
    assert (_bits(y[0])[::4] == 0x7FFF).all()
    y = _unary("Y[0, tx] = T.Cast('float32', X[tx])", fp8, "float32", q)
    assert (_bits(y[0])[::4] == 0x7FFFFFFF).all()


# ---- the battery against a GPU --------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("fast_math", [True, False])
def test_the_nan_battery_matches_the_gpu_bit_for_bit(fast_math, monkeypatch):
    """tests/kernels/nan_battery.py (119 expressions of every float width on NaN payloads, signs and a signalling
    NaN) on the GPU and on the emulator: every lane where either gives a NaN has the same bits."""
    import txlab
    from kernels import nan_battery as nb  # noqa: E402  (tests/ is on sys.path)

    monkeypatch.setattr(txlab.config, "device", "gpu")
    compiled = txlab.compile(nb.make(kernel), arch="sm_90a", fast_math=fast_math)
    on_gpu, on_cpu = nb.outputs(), nb.outputs()
    compiled(*nb.inputs(), *on_gpu)
    emulate(nb.make(kernel), *nb.inputs(), *on_cpu, arch="sm_90a", fast_math=fast_math, check=False)
    differ = []
    for (buf, (_, rows)), g, e in zip(nb.BUFS.items(), on_gpu, on_cpu):
        nan = np.isnan(g.astype(np.float64)) | np.isnan(e.astype(np.float64))
        gb, eb = _bits(g), _bits(e)
        for i, row in enumerate(rows):
            lanes = np.flatnonzero(nan[i] & (gb[i] != eb[i]))
            if lanes.size:
                differ.append(
                    f"{buf}[{i}] {row}: lane {lanes[0]} GPU {gb[i, lanes[0]]:#x} emulator {eb[i, lanes[0]]:#x}"
                )
    at_gpu, at_cpu = _bits(on_gpu[-1]), _bits(on_cpu[-1])  # AT: a float32 atomicAdd of every input, NaNs included
    lanes = np.flatnonzero(at_gpu != at_cpu)
    if lanes.size:
        differ.append(f"atomic_add: lane {lanes[0]} GPU {at_gpu[lanes[0]]:#x} emulator {at_cpu[lanes[0]]:#x}")
    assert not differ, f"{len(differ)} rows differ:\n" + "\n".join(differ)


@pytest.mark.parametrize("fast_math", [True, False])
def test_a_double_below_flt_min_cast_to_float(fast_math):
    """``(float)d`` of 1e-40: the fast-math build's ``cvt.rn.ftz.f32.f64`` flushes it to zero (an H100, round 37's
    battery), the IEEE build keeps the denormal."""
    src = """
@T.prim_func
def narrow(D: T.Buffer((4,), "float64"), Y: T.Buffer((4,), "float32")):
    T.device_entry()
    tx = T.thread_id([4])
    Y[tx] = T.Cast("float32", D[tx])
"""
    d = np.array([1e-40, -1e-40, 1e-30, 2.5], np.float64)
    y = np.zeros(4, np.float32)
    assert emulate(kernel(src, "narrow"), d, y, fast_math=fast_math).ok
    want = d.astype(np.float32)
    if fast_math:
        want[:2] = [0.0, -0.0]
    assert _bits(y).tolist() == _bits(want).tolist()
