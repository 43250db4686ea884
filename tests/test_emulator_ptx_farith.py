"""``T.ptx`` floating-point arithmetic on the emulator (``txlab.emulator.ptx_farith``): add/sub/mul/fma/mad, div,
rsqrt, min/max, neg/abs/copysign, testp and cvt, each checked against an independent reference -- exact rational
arithmetic (``fractions.Fraction``) rounded once by a rounding written here, on random inputs and on the edges:
ties, subnormals, overflow to infinity or to the largest finite value, signed zeros, NaN. Forms ptxas may fuse (no
rounding modifier) are refused, and the SASS shows why. One GPU-marked test runs a battery kernel on both."""

import itertools
import math
from fractions import Fraction as Fr

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate
from txlab.errors import NotEmulatedError

from test_emulator import kernel

N = 640
MODES = ("rn", "rz", "rm", "rp")
#: precision (with the hidden bit), min and max normal exponents
FMTS = {"f32": (24, -126, 127), "f16": (11, -14, 15), "bf16": (8, -126, 127), "f64": (53, -1022, 1023)}
NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}


# ---- the reference --------------------------------------------------------------------------------------
def round_to(x: Fr, fmt: str, mode: str) -> float:
    """The rational ``x`` rounded once to ``fmt`` with ``mode`` (a Python float; +-inf on overflow)."""
    p, emin, emax = FMTS[fmt]
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    ax = abs(x)
    e = ax.numerator.bit_length() - ax.denominator.bit_length()
    if Fr(2) ** e > ax:
        e -= 1
    q = max(e, emin) - (p - 1)
    t = ax / Fr(2) ** q
    n = t.numerator // t.denominator
    frac = t - n
    up = {
        "rn": frac > Fr(1, 2) or (frac == Fr(1, 2) and n % 2 == 1),
        "rz": False,
        "rp": frac > 0 and sign > 0,
        "rm": frac > 0 and sign < 0,
    }[mode]
    v = (n + up) * Fr(2) ** q
    top = (2 - Fr(2) ** (1 - p)) * Fr(2) ** emax
    if v > top:
        toward_inf = mode == "rn" or (mode == "rp" and sign > 0) or (mode == "rm" and sign < 0)
        return sign * (math.inf if toward_inf else float(top))
    return sign * float(v)


def bits_of(v: float, fmt: str) -> int:
    if math.isnan(v):
        return NAN[fmt]
    if fmt == "f32":
        return int(np.float32(v).view(np.uint32))
    if fmt == "f16":
        return int(np.float16(v).view(np.uint16))
    if fmt == "bf16":
        return int(np.float32(v).view(np.uint32)) >> 16  # v is a bf16 value: the f32's high half
    return int(np.float64(v).view(np.uint64))


def value_of(b: int, fmt: str) -> float:
    if fmt == "f32":
        return float(np.uint32(b).view(np.float32))
    if fmt == "f16":
        return float(np.uint16(b).view(np.float16))
    if fmt == "bf16":
        return float(np.uint32(b << 16).view(np.float32))
    return float(np.uint64(b).view(np.float64))


def flush(v: float, fmt: str) -> float:
    return math.copysign(0.0, v) if abs(v) < 2.0 ** FMTS[fmt][1] else v


def ref(op: str, xs, fmt: str, mode: str, ftz=False, sat=False, src=None) -> float:
    """``op`` (add, sub, mul, fma, div) of Python floats, the IEEE result in ``fmt`` under ``mode``."""
    if ftz:
        xs = [flush(x, src or fmt) for x in xs]
    if op == "sub":
        op, xs = "add", [xs[0], -xs[1]]
    if not all(math.isfinite(x) for x in xs) or (op == "div" and xs[1] == 0):
        a, b, *c = xs
        with np.errstate(all="ignore"):
            r = {"add": lambda: a + b, "mul": lambda: a * b, "fma": lambda: a * b + c[0]}.get(op, lambda: None)()
            if op == "div":
                r = float(np.float64(a) / np.float64(b))
            if op == "fma" and math.isfinite(a) and math.isfinite(b):
                r = c[0]  # a finite product and an infinite addend (the float product could overflow)
    else:
        f = [Fr(x) for x in xs]
        x = {"add": lambda: f[0] + f[1], "mul": lambda: f[0] * f[1], "fma": lambda: f[0] * f[1] + f[2]}.get(
            op, lambda: f[0] / f[1]
        )()
        if x == 0:  # IEEE's zero signs
            if op in ("mul", "div"):
                r = math.copysign(1, xs[0]) * math.copysign(1, xs[1]) * 0.0
            else:
                p = xs[0] * xs[1] if op == "fma" else xs[0]
                q = xs[2] if op == "fma" else xs[1]
                same = p == 0 and q == 0 and math.copysign(1, p) == math.copysign(1, q)
                r = math.copysign(0.0, q) if same else (-0.0 if mode == "rm" else 0.0)
        else:
            r = round_to(x, fmt, mode)
    if ftz and not math.isnan(r):
        r = flush(r, fmt)
    if sat:
        r = 0.0 if math.isnan(r) or r <= 0 else min(r, 1.0)
    return r


# ---- inputs ----------------------------------------------------------------------------------------------
EDGES = [
    0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 2.0**-24, -(2.0**-24), 1 + 2.0**-23, 2.0**-149, -(2.0**-149), 1e-40, -3e-39,
    2.0**-126, -(2.0**-126) * (1 - 2.0**-23), 3.4028234663852886e38, -3.4028234663852886e38, 2.0**127, 1e30, -7e-30,
    math.inf, -math.inf, math.nan,
]  # fmt: skip


def f32_inputs(seed: int, k: int = 3) -> list:
    """``k`` float32 arrays of N: every pair of EDGES in the first two, then random values of wide exponents."""
    rng = np.random.default_rng(seed)
    m = len(EDGES)
    pairs = np.array(list(itertools.product(range(m), repeat=2)))
    rand = lambda n: (rng.standard_normal(n) * 2.0 ** rng.integers(-150, 128, n)).astype(np.float32)  # noqa: E731
    with np.errstate(over="ignore"):
        out = []
        for j in range(k):
            head = (
                np.array(EDGES, np.float32)[pairs[:, j]]
                if j < 2
                else np.array(EDGES, np.float32)[rng.integers(0, m, m * m)]
            )
            out.append(np.concatenate([head, rand(N - m * m)]).astype(np.float32))
    # ties of the sum and the product: 1 + 2^-24 * odd, and (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24
    out[0][-4:], out[1][-4:] = [1.0, 1.0, 1 + 2.0**-12, -1.0], [2.0**-24, 3 * 2.0**-24, 1 + 2.0**-12, -(2.0**-24)]
    return out


def body_kernel(rows, dt="float32", inputs=("A", "B", "C"), in_dt=None, n=N) -> str:
    """A kernel with one output row per instruction: ``rows`` are ``T.ptx`` calls writing ``t``."""
    in_dt = in_dt or dt
    params = ", ".join(f'{x}: T.Buffer(({n},), "{in_dt}")' for x in inputs)
    lines = [f"    {x.lower()}: T.{in_dt} = {x}[tx]" for x in inputs]
    for i, r in enumerate(rows):
        lines += [f"    {r}", f"    O[{i}, tx] = t"]
    body = "\n".join(lines)
    return f"""
@T.prim_func
def k({params}, O: T.Buffer(({len(rows)}, {n}), "{dt}")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([{n}])
    t: T.{dt} = T.{dt}(0)
{body}
"""


def run(src, *arrays):
    res = emulate(kernel(src, "k"), *arrays)
    assert res.ok, res.findings
    return arrays[-1]


def check_rows(out, rows, expect):
    """Row by row, the emulator's bits against the reference's (``expect(row, lane) -> bits``)."""
    for i, row in enumerate(rows):
        want = np.array([expect(row, j) for j in range(out.shape[1])], np.uint64)
        bad = np.flatnonzero(out[i].astype(np.uint64) != want)
        assert not len(bad), (
            row,
            bad[:5],
            [hex(int(out[i][j])) for j in bad[:5]],
            [hex(int(want[j])) for j in bad[:5]],
        )


# ---- add / sub / mul / fma / mad ---------------------------------------------------------------------------
F32_ROWS = [f"T.ptx.{op}.{m}.f32(t, a, b)" for op in ("add", "sub", "mul") for m in MODES]
F32_ROWS += [f"T.ptx.fma.{m}.f32(t, a, b, c)" for m in MODES]
F32_ROWS += [
    "T.ptx.add.rn.ftz.f32(t, a, b)",
    "T.ptx.mul.rz.ftz.sat.f32(t, a, b)",
    "T.ptx.sub.rp.sat.f32(t, a, b)",
    "T.ptx.fma.rm.ftz.f32(t, a, b, c)",
    "T.ptx.mad.rp.ftz.sat.f32(t, a, b, c)",
    "T.ptx.mad.rz.f32(t, a, b, c)",
]


def _parse(row):
    """(op, mode, ftz, sat) of a row's spelling."""
    name = row.split("(")[0].split(".")[2:]
    op = "fma" if name[0] == "mad" else name[0]
    return op, next(m for m in MODES if m in name), "ftz" in name, "sat" in name


def test_f32_arithmetic_is_the_exact_result_rounded_once_in_every_mode():
    a, b, c = f32_inputs(1)
    out = run(body_kernel(F32_ROWS), a, b, c, np.zeros((len(F32_ROWS), N), np.float32)).view(np.uint32)

    def expect(row, j):
        op, mode, ftz, sat = _parse(row)
        xs = [float(a[j]), float(b[j])] + ([float(c[j])] if op == "fma" else [])
        return bits_of(ref(op, xs, "f32", mode, ftz, sat), "f32")

    check_rows(out, F32_ROWS, expect)


def test_the_edges_land_where_ieee_puts_them():
    """Spot values, stated outright: a tie to even, overflow under .rz, -0 under .rm, .ftz, .sat of NaN."""
    a = np.array([1, 3.4028234663852886e38, 1, 1e-40, np.nan, 1 + 2.0**-23] + [0] * (N - 6), np.float32)
    b = np.array([2.0**-24, 3.4028234663852886e38, -1, 1e-40, 1, 2.0**-24] + [0] * (N - 6), np.float32)
    rows = ["T.ptx.add.rn.f32(t, a, b)", "T.ptx.add.rz.f32(t, a, b)", "T.ptx.add.rm.f32(t, a, b)",
            "T.ptx.add.rn.ftz.f32(t, a, b)", "T.ptx.add.rn.sat.f32(t, a, b)"]  # fmt: skip
    out = run(body_kernel(rows, inputs=("A", "B")), a, b, np.zeros((5, N), np.float32))
    assert out[0, 0] == 1.0 and out[0, 5] == np.float32(1 + 2.0**-22)  # ties to even, down and up
    assert out[0, 1] == np.inf and out[1, 1] == np.float32(3.4028234663852886e38)  # max + max: inf; .rz: max
    assert np.signbit(out[2, 2]) and not np.signbit(out[0, 2])  # 1 + -1: -0 under .rm, +0 under .rn
    assert out[0, 3] == a[3] * 2 and out[3, 3] == 0  # .ftz: subnormal inputs are zero
    assert out[0, 4].view(np.uint32) == 0x7FFFFFFF and out[4, 4] == 0  # NaN: canonical; .sat: +0


def test_f64_arithmetic_is_exact_in_every_mode():
    rng = np.random.default_rng(2)
    edges = [0.0, -0.0, 1.0, -1.0, 2.0**-1074, -(2.0**-1074), 2.0**-1022, 1.7976931348623157e308, -1e308, 1e-300,
             3.0, 1 + 2.0**-52, 2.0**-53, 1e-160, -3e-170]  # fmt: skip
    m = len(edges)
    pairs = np.array(list(itertools.product(range(m), repeat=2)))
    rand = lambda n: rng.standard_normal(n) * 2.0 ** rng.integers(-1000, 1000, n)  # noqa: E731
    a = np.concatenate([np.array(edges)[pairs[:, 0]], rand(N - m * m)])
    b = np.concatenate([np.array(edges)[pairs[:, 1]], rand(N - m * m)])
    b = np.where(b == 0, 1.5, b)  # x / 0 and 0 / 0 (a NaN: refused) are not what this checks
    c = np.concatenate([np.array(edges)[rng.integers(0, m, m * m)], rand(N - m * m)])
    rows = [f"T.ptx.{op}.{md}.f64(t, a, b)" for op in ("add", "sub", "mul", "div") for md in MODES]
    rows += [f"T.ptx.fma.{md}.f64(t, a, b, c)" for md in MODES] + ["T.ptx.mad.rm.f64(t, a, b, c)"]
    out = run(body_kernel(rows, "float64"), a, b, c, np.zeros((len(rows), N))).view(np.uint64)

    def expect(row, j):
        op, mode, _, _ = _parse(row)
        xs = [float(a[j]), float(b[j])] + ([float(c[j])] if op == "fma" else [])
        return bits_of(ref(op, xs, "f64", mode), "f64")

    check_rows(out, rows, expect)


#: f64 NaNs: signalling and quiet, both signs, payloads high and low
F64_NANS = [0x7FF5A5A5A5A5A5A5, 0xFFF5A5A5A5A5A5A5, 0x7FF0000000000001, 0xFFF0000000001234, 0x7FF8000000000000]
F64_QUIET = [v | 1 << 51 for v in F64_NANS]
F64_NAN_ROWS = ["T.ptx.add.rn.f64(t, a, b)", "T.ptx.sub.rn.f64(t, a, b)", "T.ptx.mul.rn.f64(t, a, b)",
                "T.ptx.div.rn.f64(t, a, b)", "T.ptx.fma.rn.f64(t, a, b, c)", "T.ptx.abs.f64(t, a)",
                "T.ptx.neg.f64(t, a)", "T.ptx.max.f64(t, a, b)", "T.ptx.min.f64(t, a, b)",
                "T.ptx.cvt.f64.f32(t, x)"]  # fmt: skip


def f64_nan_inputs():
    """``(a, b, c, x)``: NaN op number (lanes 0-4), number op NaN (5-9), invalid operations (10-13: inf - inf,
    0 x inf, 0 / 0, inf / inf), an fma's NaN addend (14), numbers elsewhere; ``x``: f32 NaNs in lanes 0-3."""
    a, b, c = np.linspace(1.0, 2.0, N), np.linspace(-3.0, 3.0, N), np.full(N, 0.5)
    a.view(np.uint64)[0:5], b.view(np.uint64)[5:10] = F64_NANS, F64_NANS
    a[10:14], b[10:14] = [np.inf, 0.0, 0.0, np.inf], [-np.inf, np.inf, 0.0, np.inf]
    c.view(np.uint64)[14] = F64_NANS[0]
    x = np.linspace(1.0, 2.0, N).astype(np.float32)
    x.view(np.uint32)[0:4] = [0x7FA5A5A5, 0xFFA5A5A5, 0x7F800001, 0xFFC01234]
    return a, b, c, x


def f64_nan_kernel() -> str:
    src = body_kernel(F64_NAN_ROWS, "float64", inputs=("A", "B", "C"))
    return src.replace("def k(", 'def k(X: T.Buffer((%d,), "float32"), ' % N).replace(
        "    a: T.float64 = A[tx]", "    x: T.float32 = X[tx]\n    a: T.float64 = A[tx]"
    )


def test_f64_nan_results_keep_the_operands_payload_quieted():
    """As an H100 gave them (round 39, these rows): a NaN operand of DADD/DMUL/DFMA, ``div.rn.f64``, ``neg``/``abs``
    (DADD -RZ) and F2F.F64.F32 comes out quieted with its own sign and payload (``neg`` does not flip it); an invalid
    operation gives 0xfff8000000000000; ``min``/``max`` of a NaN and a number give the number."""
    a, b, c, x = f64_nan_inputs()
    out = run(f64_nan_kernel(), x, a, b, c, np.zeros((len(F64_NAN_ROWS), N)))
    bits = [[hex(v) for v in row] for row in out.view(np.uint64)]
    quiet, default = [hex(v) for v in F64_QUIET], "0xfff8000000000000"
    for row in range(5):  # add, sub, mul, div, fma: either operand's NaN, as it is
        assert bits[row][0:10] == quiet * 2, F64_NAN_ROWS[row]
    assert bits[0][10] == default and bits[1][10] == "0x7ff0000000000000"  # inf + -inf; inf - -inf = inf
    assert bits[2][11] == default and bits[3][12:14] == [default] * 2  # 0 x inf; 0 / 0, inf / inf
    assert bits[4][11] == default and bits[4][14] == quiet[0]  # fma: an invalid product; a NaN addend
    assert bits[5][0:5] == quiet and bits[6][0:5] == quiet  # abs and neg keep the NaN's sign
    for row in (7, 8):
        assert not np.isnan(out[row, 0:10]).any()
    assert bits[9][0:4] == ["0x7ffcb4b4a0000000", "0xfffcb4b4a0000000", "0x7ff8000020000000", "0xfff8024680000000"]


def test_f64_nan_results_nothing_decides_are_refused_at_their_line():
    """Two NaN operands (an H100 returned B's NaN for a + b and for b + a alike, and for max(a, b) and max(b, a): the
    SASS operand order is ptxas'), directed rounding modes, an fma of an invalid product and a NaN addend: the
    emulator says it cannot tell rather than guess."""
    nan = np.full(N, np.nan)
    inf = np.full(N, np.inf)
    for row, ins, message in (
        ("T.ptx.add.rn.f64(t, a, b)", (nan, nan), r"two NaN operands.*operand order"),
        ("T.ptx.mul.rn.f64(t, b, a)", (nan, nan), r"two NaN operands"),
        ("T.ptx.max.f64(t, a, b)", (nan, nan), r"min/max\.f64 of two NaN operands"),
        ("T.ptx.add.rz.f64(t, a, b)", (inf, -inf), r"add\.rz: .*measured under \.rn"),
    ):
        with pytest.raises(NotEmulatedError, match=message):
            emulate(kernel(body_kernel([row], "float64", inputs=("A", "B")), "k"), *ins, np.zeros((1, N)))
    src = body_kernel(["T.ptx.fma.rn.f64(t, a, b, c)"], "float64")
    with pytest.raises(NotEmulatedError, match="invalid product"):
        emulate(kernel(src, "k"), np.zeros(N), inf, nan, np.zeros((1, N)))


def test_f32x2_lanes_and_the_mixed_precision_line():
    a, b, c = f32_inputs(3)
    x2 = lambda v: np.stack([v, v[::-1]], 1).reshape(-1).view(np.uint64)  # noqa: E731  lane 0 = v, lane 1 = v reversed
    rows = ["T.ptx.add.rz.ftz.f32x2(t, a, b)", "T.ptx.fma.rp.f32x2(t, a, b, c)", "T.ptx.mul.rm.ftz.f32x2(t, a, b)"]
    out = run(body_kernel(rows, "uint64"), x2(a), x2(b), x2(c), np.zeros((3, N), np.uint64))
    lanes = out.view(np.uint32).reshape(3, N, 2)
    for i, (op, mode, ftz) in enumerate((("add", "rz", True), ("fma", "rp", False), ("mul", "rm", True))):
        for lane, (av, bv, cv) in enumerate(((a, b, c), (a[::-1], b[::-1], c[::-1]))):
            want = [
                bits_of(
                    ref(op, [float(av[j]), float(bv[j]), float(cv[j])][: 3 if op == "fma" else 2], "f32", mode, ftz),
                    "f32",
                )
                for j in range(N)
            ]  # noqa: E501
            assert np.array_equal(lanes[i, :, lane], np.array(want, np.uint32)), (op, lane)
    # add.f32.f16 / fma.f32.bf16: the 16-bit sources widened exactly, one f32 rounding
    h = (np.arange(N) * 37 % 0x7C00).astype(np.uint16)  # finite f16 bit patterns
    src = body_kernel(["T.ptx.add.rz.f32.f16(t, h, a)", "T.ptx.fma.rm.sat.f32.bf16(t, h, h, a)"], inputs=("A",))
    src = src.replace("    a: T.float32 = A[tx]", "    a: T.float32 = A[tx]\n    h: T.uint16 = H[tx]")
    src = src.replace("def k(A: T.Buffer", f'def k(H: T.Buffer(({N},), "uint16"), A: T.Buffer')
    out = run(src, h, a, np.zeros((2, N), np.float32)).view(np.uint32)
    for j in range(N):
        hv, bv, av = value_of(int(h[j]), "f16"), value_of(int(h[j]), "bf16"), float(a[j])
        assert out[0, j] == bits_of(ref("add", [hv, av], "f32", "rz"), "f32"), j
        assert out[1, j] == bits_of(ref("fma", [bv, bv, av], "f32", "rm", sat=True), "f32"), j


# ---- half precision ----------------------------------------------------------------------------------------
def half_inputs(seed):
    rng = np.random.default_rng(seed)
    edges = np.array([0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                      0x7E00, 0x1400, 0x3C01, 0x7F7F, 0x0080, 0x007F, 0x3F80, 0xBF80], np.uint32)  # fmt: skip
    m = len(edges)
    pairs = np.array(list(itertools.product(range(m), repeat=2)))
    rand = lambda n: rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    a = np.concatenate([edges[pairs[:, 0]] | (edges[pairs[:, 1]] << 16), rand(N - m * m)])
    b = np.concatenate([edges[pairs[:, 1]] | (edges[pairs[:, 0]] << 16), rand(N - m * m)])
    c = np.concatenate([edges[rng.integers(0, m, m * m)] * 0x10001, rand(N - m * m)])
    return a.astype(np.uint32), b.astype(np.uint32), c.astype(np.uint32)


HALF_ROWS = [
    ("add", "f16x2", ""), ("sub", "f16x2", "ftz"), ("mul", "f16x2", "sat"), ("fma", "f16x2", "ftz.sat"),
    ("fma", "f16x2", "relu"), ("add", "bf16x2", ""), ("mul", "bf16x2", ""), ("fma", "bf16x2", "relu"),
    ("sub", "bf16x2", ""),
]  # fmt: skip


def test_half_precision_rounds_at_its_own_width_lane_by_lane():
    a, b, c = half_inputs(4)
    rows = [
        f"T.ptx.{op}.rn.{m + '.' if m else ''}{ty}(t, a, b{', c' if op == 'fma' else ''})" for op, ty, m in HALF_ROWS
    ]
    out = run(body_kernel(rows, "uint32"), a, b, c, np.zeros((len(rows), N), np.uint32))
    for i, (op, ty, m) in enumerate(HALF_ROWS):
        fmt = ty[:-2]
        for j in range(N):
            for lane in range(2):
                xs = [value_of((int(v[j]) >> (16 * lane)) & 0xFFFF, fmt) for v in (a, b, c)][: 3 if op == "fma" else 2]
                r = ref(op, xs, fmt, "rn", "ftz" in m, "sat" in m)
                if "relu" in m and not math.isnan(r):
                    r = max(r, 0.0) if r != 0 else 0.0
                got = (int(out[i, j]) >> (16 * lane)) & 0xFFFF
                assert got == bits_of(r, fmt), (op, ty, m, j, lane, hex(got), hex(bits_of(r, fmt)))


def test_f16_agrees_with_numpys_float16_on_products():
    """numpy's float16 product (computed in float32, exact, then rounded once) is an independent check."""
    a, b, _ = half_inputs(5)
    out = run(body_kernel(["T.ptx.mul.rn.f16(t, a, b)"], "uint16", ("A", "B")), a.astype(np.uint16),
              b.astype(np.uint16), np.zeros((1, N), np.uint16))  # fmt: skip
    x, y = a.astype(np.uint16).view(np.float16), b.astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        want = (x.astype(np.float32) * y.astype(np.float32)).astype(np.float16).view(np.uint16)
    want = np.where(np.isnan(want.view(np.float16)), 0x7FFF, want)
    assert np.array_equal(out[0], want)


# ---- min / max ---------------------------------------------------------------------------------------------
def fminmax(x, y, is_max, nan_mode=False, xorsign=False):
    if xorsign:
        s = math.copysign(1, x) * math.copysign(1, y)
        r = fminmax(abs(x), abs(y), is_max, nan_mode)
        return r if math.isnan(r) else math.copysign(r, s)
    if math.isnan(x) and math.isnan(y) or nan_mode and (math.isnan(x) or math.isnan(y)):
        return math.nan
    if math.isnan(x) or math.isnan(y):
        return y if math.isnan(x) else x
    if x == y == 0:
        return (x if math.copysign(1, x) > 0 else y) if is_max else (x if math.copysign(1, x) < 0 else y)
    return max(x, y) if is_max else min(x, y)


def test_min_max_nan_signed_zero_xorsign_and_ftz():
    a, b, c = f32_inputs(6)
    rows = ["T.ptx.min.f32(t, a, b)", "T.ptx.max.f32(t, a, b)", "T.ptx.min.NaN.f32(t, a, b)",
            "T.ptx.max.ftz.NaN.f32(t, a, b)", "T.ptx.max.xorsign.abs.f32(t, a, b)",
            "T.ptx.min.ftz.xorsign.abs.f32(t, a, b)", "T.ptx.max.abs.f32(t, a, b, c)",
            "T.ptx.min.NaN.f32(t, a, b, c)"]  # fmt: skip
    out = run(body_kernel(rows), a, b, c, np.zeros((len(rows), N), np.float32)).view(np.uint32)

    def expect(row, j):
        is_max, mods = ".max." in row, row.split("(")[0].split(".")
        xs = [float(v[j]) for v in (a, b, c)][: 3 if ", c)" in row else 2]
        xs = [flush(x, "f32") for x in xs] if "ftz" in mods else xs
        xs = [abs(x) for x in xs] if "abs" in mods and "xorsign" not in mods else xs
        r = fminmax(xs[0], xs[1], is_max, "NaN" in mods, "xorsign" in mods)
        return bits_of(fminmax(r, xs[2], is_max, "NaN" in mods) if len(xs) == 3 else r, "f32")

    check_rows(out, rows, expect)


def test_min_max_of_halves_and_integers():
    a, b, c = half_inputs(7)
    rows = ["T.ptx.max.NaN.f16x2(t, a, b)", "T.ptx.min.xorsign.abs.bf16x2(t, a, b)", "T.ptx.max.ftz.f16x2(t, a, b)",
            "T.ptx.max.u16x2(t, a, b)", "T.ptx.min.s16x2(t, a, b)", "T.ptx.max.relu.s16x2(t, a, b)",
            "T.ptx.max.u32(t, a, b)"]  # fmt: skip
    out = run(body_kernel(rows, "uint32"), a, b, c, np.zeros((len(rows), N), np.uint32))
    s16 = lambda v: v - (1 << 16) if v >= 1 << 15 else v  # noqa: E731
    for j in range(N):
        for lane in range(2):
            x, y = ((int(v[j]) >> (16 * lane)) & 0xFFFF for v in (a, b))
            got = [(int(out[i, j]) >> (16 * lane)) & 0xFFFF for i in range(6)]
            assert got[0] == bits_of(fminmax(value_of(x, "f16"), value_of(y, "f16"), True, True), "f16")
            want = fminmax(value_of(x, "bf16"), value_of(y, "bf16"), False, xorsign=True)
            assert got[1] == bits_of(want, "bf16"), (j, lane)
            fx, fy = (flush(value_of(v, "f16"), "f16") for v in (x, y))
            assert got[2] == bits_of(fminmax(fx, fy, True), "f16")
            assert got[3] == max(x, y) and got[4] == min(s16(x), s16(y)) & 0xFFFF
            assert got[5] == max(s16(x), s16(y), 0)
        assert int(out[6, j]) == max(int(a[j]), int(b[j]))
    sa, sb = a.view(np.int32), b.view(np.int32)  # .s32 takes int32 registers
    out = run(body_kernel(["T.ptx.min.relu.s32(t, a, b)"], "int32", ("A", "B")), sa, sb, np.zeros((1, N), np.int32))
    assert np.array_equal(out[0], np.maximum(np.minimum(sa, sb), 0))


# ---- neg / abs / copysign / testp -------------------------------------------------------------------------
def test_sign_operations_and_classification():
    a, b, _ = f32_inputs(8)
    rows = ["T.ptx.neg.f32(t, a)", "T.ptx.abs.ftz.f32(t, a)", "T.ptx.copysign.f32(t, a, b)"]
    out = run(body_kernel(rows, inputs=("A", "B")), a, b, np.zeros((3, N), np.float32)).view(np.uint32)
    au, bu = a.view(np.uint32), b.view(np.uint32)
    nan = np.isnan(a)
    assert np.array_equal(out[0], np.where(nan, 0x7FFFFFFF, au ^ 0x80000000))  # NaN: FADD's canonical NaN
    flushed = np.where(np.abs(a) < 2.0**-126, 0, au & 0x7FFFFFFF)
    assert np.array_equal(out[1], np.where(nan, 0x7FFFFFFF, flushed))
    assert np.array_equal(out[2], (bu & 0x7FFFFFFF) | (au & 0x80000000))  # b with a's sign: bits, NaNs too
    ops = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
    src = body_kernel([f"T.ptx.testp.{o}.f32(t, a)" for o in ops], "uint32", ("A",), in_dt="float32")
    got = run(src, a, np.zeros((6, N), np.uint32))
    mag = np.abs(a.astype(np.float64))
    want = [np.isfinite(a), np.isinf(a), ~nan, nan, np.isfinite(a) & ((mag >= 2.0**-126) | (mag == 0)),
            (mag > 0) & (mag < 2.0**-126)]  # fmt: skip
    for i, w in enumerate(want):
        assert np.array_equal(got[i], w.astype(np.uint32)), ops[i]


# ---- div / rsqrt -------------------------------------------------------------------------------------------
def test_division_is_exact_in_every_mode_and_the_approximations_within_two_ulp():
    a, b, _ = f32_inputs(9)
    rows = [f"T.ptx.div.{m}.f32(t, a, b)" for m in MODES] + ["T.ptx.div.rz.ftz.f32(t, a, b)"]
    rows += ["T.ptx.div.approx.f32(t, a, b)", "T.ptx.div.full.ftz.f32(t, a, b)", "T.ptx.rsqrt.approx.f32(t, a)",
             "T.ptx.rsqrt.approx.ftz.f32(t, a)"]  # fmt: skip
    out = run(body_kernel(rows, inputs=("A", "B")), a, b, np.zeros((len(rows), N), np.float32))
    bits = out.view(np.uint32)
    for i, m in enumerate(MODES + ("rz",)):
        for j in range(N):
            want = bits_of(ref("div", [float(a[j]), float(b[j])], "f32", m, ftz=i == 4), "f32")
            assert bits[i, j] == want, (m, j, float(a[j]), float(b[j]))
    x, y = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        q, r = x / y, 1 / np.sqrt(x)
    normal = lambda v: np.isfinite(v) & (np.abs(v) >= 2.0**-126) & (np.abs(v) <= 2.0**126)  # noqa: E731
    ok = normal(x) & normal(y) & normal(q)
    ulp = lambda v: np.spacing(np.abs(v).astype(np.float32)).astype(np.float64)  # noqa: E731
    for row in (5, 6):
        assert (np.abs(out[row][ok] - q[ok]) <= 2 * ulp(q[ok])).all(), rows[row]
    pos = normal(x) & (x > 0)
    for row in (7, 8):
        assert (np.abs(out[row][pos] - r[pos]) <= ulp(r[pos])).all(), rows[row]
    huge = (np.abs(y) > 2.0**126) & np.isfinite(x) & np.isfinite(y)
    assert huge.any() and (out[5][huge] == 0).all()  # the ISA: a divisor in (2^126, 2^128) gives 0


# ---- cvt ---------------------------------------------------------------------------------------------------
IRND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
INTS = {"s8": (8, True), "u16": (16, False), "s32": (32, True), "u32": (32, False), "s64": (64, True),
        "u64": (64, False)}  # fmt: skip


def sat_int(v: float, ty: str) -> int:
    w, signed = INTS[ty]
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return 0 if math.isnan(v) else int(max(lo, min(hi, v))) if math.isfinite(v) else (hi if v > 0 else lo)


def test_cvt_float_to_integer_rounds_saturates_and_maps_nan_to_zero():
    a, _, _ = f32_inputs(10)
    a[:8] = [2.5, -2.5, 3.5, 1e10, -1e10, 255.5, -0.3, 1e-40]
    pairs = [(r, t) for r in IRND for t in INTS]
    rows = [f"T.ptx.cvt.{r}.{t}.f32(t, a)" for r, t in pairs] + ["T.ptx.cvt.rpi.ftz.s32.f32(t, a)"]
    out = run(body_kernel(rows, "int64", ("A",), in_dt="float32"), a, np.zeros((len(rows), N), np.int64))
    for i, (r, ty) in enumerate(pairs + [("rpi", "s32")]):
        w, signed = INTS[ty]
        for j in range(N):
            v = float(a[j]) if i < len(pairs) else flush(float(a[j]), "f32")
            want = sat_int(float(IRND[r](v)) if math.isfinite(v) else v, ty)
            got = int(out[i, j]) if signed else int(out[i, j]) & ((1 << w) - 1)  # a signed type sign-extends
            assert got == want, (r, ty, j, float(a[j]), got, want)


def test_cvt_integer_to_float_rounds_once_in_every_mode():
    rng = np.random.default_rng(11)
    u = rng.integers(0, 1 << 63, N, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    u[:6] = [0, 1, (1 << 64) - 1, (1 << 63) + 1, (1 << 24) + 1, (1 << 53) + 1]
    rows = [f"T.ptx.cvt.{m}.{d}.{s}(t, a)" for m in MODES for d, s in (("f32", "u64"), ("f32", "s64"), ("f32", "s32"))]
    out = run(body_kernel(rows, "float32", ("A",), in_dt="uint64"), u, np.zeros((len(rows), N), np.float32))
    out = out.view(np.uint32)
    for i, row in enumerate(rows):
        m, _, s = row.split("(")[0].split(".")[3:6]
        for j in range(N):
            v = int(u[j])
            v = v - (1 << 64) if s == "s64" and v >= 1 << 63 else v
            if s == "s32":
                v = (v & 0xFFFFFFFF) - ((v & 0x80000000) << 1)
            assert out[i, j] == bits_of(round_to(Fr(v), "f32", m), "f32"), (row, v)
    rows = [f"T.ptx.cvt.{m}.f64.u64(t, a)" for m in MODES]
    out = run(body_kernel(rows, "float64", ("A",), in_dt="uint64"), u, np.zeros((4, N)))
    for i, m in enumerate(MODES):
        assert [round_to(Fr(int(v)), "f64", m) for v in u] == out[i].tolist(), m


def test_cvt_between_floats():
    a, _, _ = f32_inputs(12)
    rows = [f"T.ptx.cvt.{m}.{d}.f32(t, a)" for m in MODES for d in ("f16", "bf16")]
    rows += ["T.ptx.cvt.rn.relu.f16.f32(t, a)", "T.ptx.cvt.rz.satfinite.f16.f32(t, a)",
             "T.ptx.cvt.rn.relu.satfinite.bf16.f32(t, a)"]  # fmt: skip
    out = run(body_kernel(rows, "uint16", ("A",), in_dt="float32"), a, np.zeros((len(rows), N), np.uint16))
    for i, row in enumerate(rows):
        mods = row.split("(")[0].split(".")
        m, d = next(x for x in MODES if x in mods), mods[-2]
        for j in range(N):
            v = float(a[j])
            r = v if not math.isfinite(v) or v == 0 else round_to(Fr(v), d, m)
            if "satfinite" in mods and math.isinf(r):
                r = math.copysign(value_of(0x7BFF if d == "f16" else 0x7F7F, d), r)
            if "relu" in mods and not math.isnan(r):
                r = max(r, 0.0) if r != 0 else 0.0
            assert out[i, j] == bits_of(r, d), (row, j, v)
    # back to f32 and through f64: exact, .ftz on the f32 side; f64 -> f32 rounds once in each mode
    h = np.arange(N, dtype=np.uint16) * 127
    src = body_kernel(["T.ptx.cvt.f32.f16(t, a)", "T.ptx.cvt.f32.bf16(t, a)"], "float32", ("A",), in_dt="uint16")
    out = run(src, h, np.zeros((2, N), np.float32))
    f16v = h.view(np.float16).astype(np.float32)
    assert np.array_equal(out[0].view(np.uint32), np.where(np.isnan(f16v), 0x7FFFFFFF, f16v.view(np.uint32)))
    bf = (h.astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(out[1].view(np.uint32), np.where(np.isnan(bf), 0x7FFFFFFF, bf.view(np.uint32)))
    d = np.random.default_rng(13).standard_normal(N) * 2.0 ** np.random.default_rng(14).integers(-160, 140, N)
    rows = [f"T.ptx.cvt.{m}.f32.f64(t, a)" for m in MODES] + ["T.ptx.cvt.rn.ftz.f32.f64(t, a)"]
    out = run(body_kernel(rows, "float32", ("A",), in_dt="float64"), d, np.zeros((5, N), np.float32))
    for i, m in enumerate(MODES + ("rn",)):
        want = [
            flush(round_to(Fr(float(v)), "f32", m), "f32") if i == 4 else round_to(Fr(float(v)), "f32", m) for v in d
        ]
        assert np.array_equal(out[i].view(np.uint32), np.array([bits_of(w, "f32") for w in want], np.uint32)), m


def test_cvt_float_to_integral_float_and_integer_to_integer():
    a, _, _ = f32_inputs(15)
    rows = [f"T.ptx.cvt.{r}.f32.f32(t, a)" for r in IRND] + [
        "T.ptx.cvt.ftz.sat.f32.f32(t, a)",
        "T.ptx.cvt.f32.f32(t, a)",
    ]
    out = run(body_kernel(rows, inputs=("A",)), a, np.zeros((6, N), np.float32)).view(np.uint32)
    nan = np.isnan(a)
    for i, fn in enumerate(IRND.values()):
        assert np.array_equal(out[i], np.where(nan, 0x7FFFFFFF, fn(a).view(np.uint32)))
    flushed = np.where(np.abs(a) < 2.0**-126, 0, a)
    sat = np.where(nan | (flushed <= 0), 0.0, np.minimum(flushed, 1.0)).astype(np.float32)  # -0 too: FADD.SAT +0 + a
    assert np.array_equal(out[4], sat.view(np.uint32))
    assert np.array_equal(out[5], a.view(np.uint32))  # a plain move: the bits, NaNs too
    v = np.random.default_rng(16).integers(-(1 << 31), 1 << 31, N).astype(np.int32)
    rows = [
        "T.ptx.cvt.s8.s32(t, a)",
        "T.ptx.cvt.sat.u8.s32(t, a)",
        "T.ptx.cvt.sat.s16.s32(t, a)",
        "T.ptx.cvt.u16.s32(t, a)",
    ]
    out = run(body_kernel(rows, "int32", ("A",)), v, np.zeros((4, N), np.int32))
    assert np.array_equal(out[0], v.astype(np.int8).astype(np.int32))  # truncated, sign-extended
    assert np.array_equal(out[1], np.clip(v, 0, 255)) and np.array_equal(out[2], np.clip(v, -32768, 32767))
    assert np.array_equal(out[3], v.astype(np.uint16).astype(np.int32))  # zero-extended


# ---- refusals, predication, and what compiles --------------------------------------------------------------
def test_forms_ptxas_may_contract_are_refused_and_the_sass_shows_why():
    for row in ("T.ptx.add.f32(t, a, b)", "T.ptx.mul.f32(t, a, b)", "T.ptx.sub.ftz.f32(t, a, b)"):
        with pytest.raises(NotEmulatedError, match="no rounding modifier"):
            emulate(kernel(body_kernel([row], inputs=("A", "B")), "k"), *f32_inputs(0, 2), np.zeros((1, N), np.float32))
    pair = "T.ptx.mul{m}.f32(t, a, b)\n    T.ptx.add{m}.f32(t, t, c)"
    for m, fused in (("", 1), (".rn", 0)):
        c = txlab.compile(kernel(body_kernel([pair.format(m=m)]), "k"), arch="sm_90a")
        assert len(c.instructions(r"^FFMA")) == fused, c.instructions(r"^F(FMA|MUL|ADD)")


def test_predicated_lanes_keep_their_destination():
    a, b, _ = f32_inputs(17)
    src = body_kernel(
        ["t = T.float32(-5)\n    T.ptx.fma.rz.f32(t, a, b, a, pred=T.cast(tx % 2 == 0, 'uint32'), preserve_dst=True)"]
    )
    out = run(src, a, b, a, np.zeros((1, N), np.float32))
    even = np.arange(N) % 2 == 0
    assert (out[0][~even] == -5).all()
    want = [
        bits_of(ref("fma", [float(a[j]), float(b[j]), float(a[j])], "f32", "rz"), "f32") for j in np.flatnonzero(even)
    ]
    assert np.array_equal(out[0][even].view(np.uint32), np.array(want, np.uint32))


def test_the_sm100_forms_compile_for_blackwell():
    rows = ["T.ptx.add.rn.ftz.f32x2(t, a, b)", "T.ptx.fma.rz.f32x2(t, a, b, c)"]
    c = txlab.compile(kernel(body_kernel(rows, "uint64"), "k"), arch="sm_100a")
    assert len(c.instructions(r"^FADD2")) == 1 and len(c.instructions(r"^FFMA2")) == 1
    c = txlab.compile(kernel(body_kernel(["T.ptx.max.NaN.abs.f32(t, a, b, c)"]), "k"), arch="sm_100a")
    assert c.instructions(r"^FMNMX3")


# ---- on the GPU ----------------------------------------------------------------------------------------------
BATTERY_F32 = F32_ROWS + [f"T.ptx.div.{m}.f32(t, a, b)" for m in MODES] + [
    "T.ptx.div.rn.ftz.f32(t, a, b)", "T.ptx.min.f32(t, a, b)", "T.ptx.max.NaN.f32(t, a, b)",
    "T.ptx.max.xorsign.abs.f32(t, a, b)", "T.ptx.min.ftz.NaN.xorsign.abs.f32(t, a, b)", "T.ptx.neg.f32(t, a)",
    "T.ptx.abs.ftz.f32(t, a)", "T.ptx.copysign.f32(t, a, b)", "T.ptx.cvt.ftz.f32.f32(t, a)",
    "T.ptx.cvt.sat.f32.f32(t, a)", "T.ptx.cvt.rni.f32.f32(t, a)", "T.ptx.cvt.rpi.ftz.f32.f32(t, a)",
    "T.ptx.add.rz.sat.f32(t, a, b)", "T.ptx.fma.rn.sat.f32(t, a, b, c)",
]  # fmt: skip
BATTERY_APPROX = ["T.ptx.div.approx.f32(t, a, b)", "T.ptx.div.approx.ftz.f32(t, a, b)", "T.ptx.div.full.f32(t, a, b)",
                  "T.ptx.div.full.ftz.f32(t, a, b)", "T.ptx.rsqrt.approx.f32(t, a)", "T.ptx.rsqrt.approx.ftz.f32(t, a)"]  # fmt: skip
BATTERY_U32 = [
    f"T.ptx.testp.{o}.f32(t, a)" for o in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
]
BATTERY_U32 += [f"T.ptx.cvt.{r}.{t}.f32(t, a)" for r in IRND for t in ("s32", "u32", "s8", "u16")]
BATTERY_U32 += [f"T.ptx.cvt.{m}.f16.f32(t, a)" for m in MODES]
BATTERY_U32 += ["T.ptx.cvt.rn.relu.f16.f32(t, a)", "T.ptx.cvt.rz.satfinite.f16.f32(t, a)"]
BATTERY_U16 = [f"T.ptx.cvt.{m}.bf16.f32(t, a)" for m in MODES] + ["T.ptx.cvt.rn.relu.satfinite.bf16.f32(t, a)"]
BATTERY_HALF = [
    f"T.ptx.{op}.rn.{m + '.' if m else ''}{ty}(t, a, b{', c' if op == 'fma' else ''})" for op, ty, m in HALF_ROWS
] + ["T.ptx.max.NaN.f16x2(t, a, b)", "T.ptx.min.xorsign.abs.bf16x2(t, a, b)", "T.ptx.neg.bf16x2(t, a)",
     "T.ptx.abs.ftz.f16x2(t, a)", "T.ptx.max.relu.s16x2(t, a, b)"]  # fmt: skip
BATTERY_F64 = [f"T.ptx.{op}.{m}.f64(t, a, b)" for op in ("add", "mul", "div") for m in MODES]
BATTERY_F64 += [f"T.ptx.fma.{m}.f64(t, a, b, c)" for m in MODES] + ["T.ptx.max.f64(t, a, b)", "T.ptx.neg.f64(t, a)"]


@pytest.mark.gpu
def test_the_battery_is_bitwise_the_gpus():
    """sm_90 forms on random and edge inputs, GPU and emulator; the approximations within 2 ulp of each other."""
    a, b, c = f32_inputs(20)
    h = half_inputs(21)
    rng = np.random.default_rng(22)
    d = [rng.standard_normal(N) * 2.0 ** rng.integers(-1074, 1000, N) for _ in range(3)]
    d[1] = np.where(d[1] == 0, 1.0, d[1])
    cases = [
        (body_kernel(BATTERY_F32 + BATTERY_APPROX), (a, b, c), np.float32, len(BATTERY_F32)),
        (body_kernel(BATTERY_U32, "uint32", ("A",), in_dt="float32"), (a,), np.uint32, None),
        (body_kernel(BATTERY_U16, "uint16", ("A",), in_dt="float32"), (a,), np.uint16, None),
        (body_kernel(BATTERY_HALF, "uint32"), h, np.uint32, None),
        (body_kernel(BATTERY_F64, "float64"), d, np.float64, None),
    ]
    for src, ins, dt, exact_rows in cases:
        rows = src.count("O[")
        c_ = txlab.compile(kernel(src, "k"))
        on_gpu, on_cpu = np.zeros((rows, N), dt), np.zeros((rows, N), dt)
        c_(*ins, on_gpu)
        assert emulate(c_, *ins, on_cpu).ok
        ex = exact_rows or rows
        bad = [i for i in range(ex) if not np.array_equal(on_gpu[i].view(f"u{on_gpu.itemsize}"),
                                                          on_cpu[i].view(f"u{on_cpu.itemsize}"))]  # fmt: skip
        assert not bad, [
            (i, np.flatnonzero(on_gpu[i].view(f"u{on_gpu.itemsize}") != on_cpu[i].view(f"u{on_cpu.itemsize}"))[:5])
            for i in bad
        ]  # noqa: E501
        for i in range(ex, rows):
            g, e = on_gpu[i].astype(np.float64), on_cpu[i].astype(np.float64)
            both = np.isfinite(g) & np.isfinite(e)
            assert (np.isnan(g) == np.isnan(e)).all() and (
                np.abs(g - e)[both] <= 2 * np.spacing(np.abs(on_cpu[i][both]))
            ).all(), i


@pytest.mark.gpu
def test_f64_nan_results_are_bitwise_the_gpus():
    """The rows of :func:`test_f64_nan_results_keep_the_operands_payload_quieted` on a GPU: every lane's bits."""
    a, b, c, x = f64_nan_inputs()
    c_ = txlab.compile(kernel(f64_nan_kernel(), "k"))
    on_gpu, on_cpu = np.zeros((len(F64_NAN_ROWS), N)), np.zeros((len(F64_NAN_ROWS), N))
    c_(x, a, b, c, on_gpu)
    assert emulate(c_, x, a, b, c, on_cpu).ok
    g, e = on_gpu.view(np.uint64), on_cpu.view(np.uint64)
    bad = {F64_NAN_ROWS[i]: [(j, hex(g[i, j]), hex(e[i, j])) for j in np.flatnonzero(g[i] != e[i])[:5]]
           for i in range(len(F64_NAN_ROWS)) if (g[i] != e[i]).any()}  # fmt: skip
    assert not bad, bad
