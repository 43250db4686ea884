"""``T.ptx`` float math on the emulator (``ex2``, ``lg2``, ``sin``, ``cos``, ``tanh``, ``rcp``, ``sqrt``): each stopped
the run with NotEmulatedError before. ``.rn`` forms are IEEE operations (bitwise), ``.approx`` ones the function
rounded once, ``.ftz`` flushes denormals; a predicated one leaves the lanes it skips alone."""

import numpy as np
import pytest

from txlab.emulator import emulate
from txlab.errors import NotEmulatedError

from test_emulator import kernel

MATH = """
@T.prim_func
def math(A: T.Buffer((64,), "float32"), O: T.Buffer((7, 64), "float32"), D: T.Buffer((2, 64), "float64")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    v: T.float32 = A[tx]
    r: T.float32 = T.float32(-1)
    d: T.float64 = T.float64(0)
    T.ptx.ex2.approx.ftz.f32(r, v)
    O[0, tx] = r
    T.ptx.lg2.approx.f32(r, v)
    O[1, tx] = r
    T.ptx.rcp.rn.f32(r, v)
    O[2, tx] = r
    T.ptx.sqrt.rn.f32(r, v)
    O[3, tx] = r
    T.ptx.tanh.approx.f32(r, v)
    O[4, tx] = r
    T.ptx.sqrt.approx.ftz.f32(r, v)
    O[5, tx] = r
    r = T.float32(-1)
    T.ptx.sin.approx.f32(r, v, pred=T.cast(tx % 2 == 0, "uint32"), preserve_dst=True)
    O[6, tx] = r
    T.ptx.rcp.rn.f64(d, T.Cast("float64", v))
    D[0, tx] = d
    T.ptx.sqrt.rn.f64(d, T.Cast("float64", v))
    D[1, tx] = d
"""


def test_ptx_float_math_runs_to_the_isa():
    a = np.concatenate([np.linspace(0.05, 6.0, 62), [1e-40, 3.0]]).astype(np.float32)  # a denormal among them
    o, d = np.zeros((7, 64), np.float32), np.zeros((2, 64), np.float64)
    res = emulate(kernel(MATH, "math"), a, o, d)
    assert res.ok, res.findings
    x = a.astype(np.float64)
    ok = np.abs(x) > 1e-38  # the normal inputs
    with np.errstate(over="ignore"):
        assert np.array_equal(o[2], np.float32(1) / a) and np.array_equal(o[3], np.sqrt(a))  # .rn f32: bitwise
    assert np.array_equal(d[0][ok], 1 / x[ok]) and np.array_equal(d[1][ok], np.sqrt(x[ok]))  # .rn f64: bitwise
    assert d[0][62] == np.inf  # the fast-math build's float -> double conversion flushes the denormal (.ftz)
    for row, ref in ((0, np.exp2(x)), (1, np.log2(x)), (4, np.tanh(x)), (5, np.sqrt(x))):
        assert np.allclose(o[row][ok], ref[ok], rtol=3e-7), row
    assert o[0][62] == 1.0 and o[5][62] == 0.0  # .ftz: the denormal input is zero (2^0, sqrt 0)
    even = np.arange(64) % 2 == 0
    assert np.allclose(o[6][even], np.sin(x)[even], rtol=3e-7) and (o[6][~even] == -1).all()  # @p, preserved


def test_a_directed_rounding_is_not_emulated():
    src = MATH.replace("T.ptx.rcp.rn.f32(r, v)", "T.ptx.rcp.rz.f32(r, v)")
    with pytest.raises(NotEmulatedError) as exc:
        emulate(kernel(src, "math"), np.ones(64, np.float32), np.zeros((7, 64), np.float32), np.zeros((2, 64)))
    assert "rcp.rz.f32" in str(exc.value)
