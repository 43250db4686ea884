"""A battery of TIR expressions on NaNs (payloads, signs, signalling) for comparing the emulator's NaN bits with a GPU's:
f32/f16/bf16/f64 arithmetic, math functions, min/max, moves, selects and conversions, fp8 included.
tests/test_emulator_nan.py runs it on the GPU (both builds) and on the emulator and compares every NaN lane."""
import numpy as np
import ml_dtypes

N = 64
BF, E4, E5 = np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)

F32_ROWS = [
    "a * T.float32(2.0) + T.float32(1.0)", "a + b", "a - b", "a * b", "a / b", "-a", "T.abs(a)", "T.max(a, b)",
    "T.min(a, b)", "T.exp(a)", "T.tanh(a)", "T.sqrt(a)", "T.log(a)", "T.sin(a)", "T.Select(tx % 2 == 0, a, b)",
    "T.Cast('float32', h)", "T.Cast('float32', bf)", "T.Cast('float32', d)", "T.floor(a)", "T.rsqrt(a)", "T.erf(a)",
    "T.call_pure_extern('float32', 'fmaf', a, b, T.float32(1.0))", "T.exp2(a)", "T.sigmoid(a)", "T.pow(a, b)", "T.fmod(a, b)", "T.round(a)", "a",
    "T.nextafter(a, b)", "a * b + b", "T.trunc(a)", "T.Cast('float32', e5)", "a / T.float32(3.0)",
    "T.ldexp(a, 2)", "T.cos(a)", "T.max(a, T.float32(1.0))", "a * T.float32(1.0)", "a + T.float32(0.0)",
    "T.Cast('float32', e4)", "T.ceil(a)", "T.log2(a)", "T.tan(a)", "T.atan(a)", "T.cosh(a)", "T.log1p(a)",
    "T.nearbyint(a)", "T.Cast('float32', T.Cast('float16', a))", "T.exp10(a)", "T.log10(a)", "T.sinh(a)",
    "T.min(a, T.float32(1.0))", "T.Cast('float32', T.Cast('int32', a))",
]
H_ROWS = [
    "h + h2", "h * h2", "-h", "T.abs(h)", "T.max(h, h2)", "T.min(h, h2)", "T.Cast('float16', a)",
    "T.Cast('float16', d)", "h * h2 + h", "T.exp(h)", "T.sqrt(h)", "T.Select(tx % 2 == 0, h, h2)",
    "T.Cast('float16', bf)", "h - h2", "h / h2", "T.tanh(h)", "h", "T.log(h)", "T.floor(h)", "T.Cast('float16', e5)",
    "T.max(h, T.float16(1.0))",
]
B_ROWS = [
    "bf + bf2", "bf * bf2", "-bf", "T.abs(bf)", "T.max(bf, bf2)", "T.min(bf, bf2)", "T.Cast('bfloat16', a)",
    "T.Cast('bfloat16', d)", "bf * bf2 + bf", "T.exp(bf)", "T.sqrt(bf)", "T.Select(tx % 2 == 0, bf, bf2)",
    "T.Cast('bfloat16', h)", "bf - bf2", "bf / bf2", "T.tanh(bf)", "bf", "T.floor(bf)",
]
D_ROWS = [
    "d + d2", "d * d2", "-d", "T.abs(d)", "T.max(d, d2)", "T.min(d, d2)", "T.Cast('float64', a)",
    "T.Cast('float64', h)", "d * d2 + d", "T.exp(d)", "T.sqrt(d)", "d / d2", "d - d2", "T.Cast('float64', bf)",
    "T.Select(tx % 2 == 0, d, d2)", "d", "T.floor(d)", "T.call_pure_extern('float64', 'fma', d, d2, T.float64(1.0))", "T.tanh(d)", "T.log(d)",
]
Q4_ROWS = ["T.Cast('float8_e4m3fn', a)", "T.Cast('float8_e4m3fn', h)", "T.Cast('float8_e4m3fn', bf)"]
Q5_ROWS = ["T.Cast('float8_e5m2', a)", "T.Cast('float8_e5m2', h)", "T.Cast('float8_e5m2', bf)", "e5"]


def source(rows_by_buf):
    sig = ('A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), H: T.Buffer((64,), "float16"), '
           'H2: T.Buffer((64,), "float16"), BF: T.Buffer((64,), "bfloat16"), BF2: T.Buffer((64,), "bfloat16"), '
           'D: T.Buffer((64,), "float64"), D2: T.Buffer((64,), "float64"), E4: T.Buffer((64,), "float8_e4m3fn"), '
           'E5: T.Buffer((64,), "float8_e5m2")')
    outs = []
    body = []
    for buf, (dt, rows) in rows_by_buf.items():
        outs.append(f'{buf}: T.Buffer(({len(rows)}, 64), "{dt}")')
        for i, r in enumerate(rows):
            body.append(f"    {buf}[{i}, tx] = {r}")
    lets = ["    a = A[tx]", "    b = B[tx]", "    h = H[tx]", "    h2 = H2[tx]", "    bf = BF[tx]", "    bf2 = BF2[tx]",
            "    d = D[tx]", "    d2 = D2[tx]", "    e4 = E4[tx]", "    e5 = E5[tx]"]
    return ("@T.prim_func\ndef battery(" + sig + ", " + ", ".join(outs) + ", AT: T.Buffer((64,), \"float32\")):\n"
            "    T.device_entry()\n    tx = T.thread_id([64])\n" + "\n".join(lets) + "\n" + "\n".join(body)
            + "\n    T.cuda.atomic_add(T.address_of(AT[tx]), a)\n")


BUFS = {"Y": ("float32", F32_ROWS), "HO": ("float16", H_ROWS), "BO": ("bfloat16", B_ROWS), "DO": ("float64", D_ROWS),
        "Q4": ("float8_e4m3fn", Q4_ROWS), "Q5": ("float8_e5m2", Q5_ROWS)}


def inputs():
    f32n = [0x7FE5A5A5, 0xFFE5A5A5, 0x7F800001, 0xFF812345, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0x7FC00001]
    nums = [0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, 1e-40, 3e38, 0.5, 100.0, -100.0, 1e-3, 7.0, -0.25, 3.0]
    a = np.zeros(N, np.float32)
    a[:8] = np.array(f32n, np.uint32).view(np.float32)
    a[8:24] = nums
    a[24:32] = a[:8]
    a[32:48] = nums
    a[48:56] = a[:8]
    a[56:64] = nums[:8]
    b = np.zeros(N, np.float32)
    b[:8] = 1.0                      # NaN op number
    b[8:24] = np.roll(a[:8], 3).tolist() * 2  # number op NaN
    b[24:32] = np.roll(a[:8], 1)     # NaN op NaN (different payloads)
    b[32:48] = [np.inf, np.inf, -np.inf, np.inf, 0.0, -np.inf, np.inf, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # invalid ops
    b[48:56] = a[:8]                 # NaN op the same NaN
    b[56:64] = -1.0
    h16n = [0x7E5A, 0xFE5A, 0x7C01, 0xFC23, 0x7E00, 0xFE00, 0x7FFF, 0x7E01]
    bf16n = [0x7FA5, 0xFFA5, 0x7F81, 0xFF83, 0x7FC0, 0xFFC0, 0x7FFF, 0x7FC1]
    f64n = [0x7FF5A5A5A5A5A5A5, 0xFFF5A5A5A5A5A5A5, 0x7FF0000000000001, 0xFFF0000000001234, 0x7FF8000000000000,
            0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FF8000000000001]
    def like(dt, nans, src):
        x = src.astype(dt)
        x.view(f"u{dt.itemsize}")[:8] = nans
        x.view(f"u{dt.itemsize}")[24:32] = nans
        x.view(f"u{dt.itemsize}")[48:56] = nans
        return x
    def like2(dt, nans, src):
        x = src.astype(dt)
        u = x.view(f"u{dt.itemsize}")
        u[8:16] = np.roll(np.array(nans, u.dtype), 3)
        u[16:24] = np.roll(np.array(nans, u.dtype), 3)
        u[24:32] = np.roll(np.array(nans, u.dtype), 1)
        u[48:56] = nans
        return x
    with np.errstate(all="ignore"):
        h, h2 = like(np.dtype(np.float16), h16n, a), like2(np.dtype(np.float16), h16n, b)
        bf, bf2 = like(BF, bf16n, a), like2(BF, bf16n, b)
        d, d2 = like(np.dtype(np.float64), f64n, a), like2(np.dtype(np.float64), f64n, b)
        e4 = a.astype(E4)
        e4.view(np.uint8)[:8] = [0x7F, 0xFF] * 4
        e5 = a.astype(E5)
        e5.view(np.uint8)[:8] = [0x7D, 0xFE, 0x7F, 0xFD, 0x7E, 0xFF, 0x7D, 0x7E]
    return [a, b, h, h2, bf, bf2, d, d2, e4, e5]


def outputs():
    return [np.zeros((len(rows), N), np.dtype(dt) if dt in ("float32", "float16", "float64") else
                     {"bfloat16": BF, "float8_e4m3fn": E4, "float8_e5m2": E5}[dt]) for dt, rows in BUFS.values()] + [np.zeros(N, np.float32)]




def make(kernel):
    """The battery as a ``@T.prim_func`` (``kernel(src, name)``: tests/test_emulator.py's builder)."""
    return kernel(source(BUFS), "battery")
