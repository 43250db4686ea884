"""The kernel's own debugging calls on the emulator: ``T.cuda.printf`` prints a line per active lane (C's
conversions, lanes in thread order) into ``EmulationResult.printed`` and standard output; a failed device-side
assert is ``KernelFault("trap")`` at its line."""

import numpy as np
import pytest
from tvm.script import tirx as T

from txlab.emulator import emulate
from txlab.emulator.debug import _formatter
from txlab.errors import KernelFault


@T.prim_func
def show(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([4])
    if tx % 2 == 0:
        T.cuda.printf("cta %d tx=%d x=%5.2f u=%u %%\n", bx, tx, X[bx * 4 + tx], tx - 2)
    T.cuda.trap_when_assert_failed(X[bx * 4 + tx] >= T.float32(0))
    Y[bx * 4 + tx] = X[bx * 4 + tx] + T.float32(1)


def test_printf_prints_each_active_lane_in_thread_order(capsys):
    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    res = emulate(show, x, y)
    assert res.ok, res.summary()
    want = [f"cta {b} tx={t} x={float(b * 4 + t):5.2f} u={(t - 2) & 0xFFFFFFFF} %\n" for b in (0, 1) for t in (0, 2)]
    assert res.printed == want
    assert capsys.readouterr().out.endswith("".join(want))
    assert np.array_equal(y, x + 1)


def test_a_failed_assert_is_a_trap_at_its_line():
    x, y = np.array([0, 1, 2, 3, 4, -5, 6, 7], np.float32), np.full(8, 9, np.float32)
    with pytest.raises(KernelFault) as e:
        emulate(show, x, y)
    assert e.value.kind == "trap" and "thread 1 of CTA (1, 0, 0)" in str(e.value), e.value
    assert "the assert at line" in str(e.value)
    assert (y[4:] == 9).all()  # CTA 1 trapped before its stores


@pytest.mark.parametrize(
    ("fmt", "args", "want"),
    [
        (
            "%lld|%llu|%08.3f|%-4d|%c|%x\n",
            (-3, -3, 3.14159, 7, 65, 255),
            "-3|18446744073709551613|0003.142|7   |A|ff\n",
        ),
        ("%e %g %%d\n", (1234.5, 0.0001), "1.234500e+03 0.0001 %d\n"),
        ("%hhd %zu", (5, 6), "5 6"),
    ],
)
def test_c_conversions(fmt, args, want):
    py, conv = _formatter(fmt)
    assert py % tuple(c(a) for c, a in zip(conv, args)) == want
