"""Two CTAs leaving different values in one global element with plain stores: nothing orders the CTAs of a launch,
so the value left is the scheduler's choice. The everyday cause is an index that forgot the CTA."""

from __future__ import annotations

import numpy as np

from txlab.emulator import emulate

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

FORGOT = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([64])
    CLOCK
    B[INDEX] = A[bx * 64 + tx] * T.float32(2)
"""


def _run(index, clock=False, n=256):
    src = FORGOT.replace("INDEX", index).replace("CLOCK", "T.evaluate(T.cuda.clock64())" if clock else "T.evaluate(0)")
    a = np.random.default_rng(0).random(256).astype(np.float32)
    return src, emulate(kernel(src, "k"), a, np.zeros(n, np.float32), arch="sm_90a")


def test_an_index_without_the_cta_is_two_ctas_storing_to_one_element():
    for clock in (False, True):  # CTAs in lockstep batches, and one after another (clock64 runs them singly)
        src, res = _run("tx", clock)
        (f,) = res.by_kind("global_race")
        assert f.line == f.other_line == line_of(src, "B[tx] =")
        assert f.buffer == "B" and f.index == [0], f.message
        assert "CTAs (0, 0, 0) and (1, 0, 0)" in f.message and "T.cta_id" in f.message, f.message
        assert f.count == 3 * 64, f.count  # CTAs 1-3 against CTA 0, at each element of B[0:64]
    _, res = _run("bx * 64 + tx")
    assert res.ok, res.summary()


SAME_LAST = """
@T.prim_func
def k(B: T.Buffer((64,), "int32"), C: T.Buffer((2, 64), "int32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    for i in T.serial(5):
        B[tx] = i + bx
    B[tx] = 7
    C[bx, tx] = tx
"""


def test_stores_that_leave_the_same_value_are_not_reported():
    """Every CTA's last store to B is 7 (its earlier ones differ between CTAs, but they are overwritten by the CTA
    that made them): whichever CTA runs last, 7 is left."""
    res = emulate(kernel(SAME_LAST, "k"), np.zeros(64, np.int32), np.zeros((2, 64), np.int32), arch="sm_90a")
    assert res.ok, res.summary()


WITH_ATOMIC = """
@T.prim_func
def k(B: T.Buffer((64,), "int32"), N: T.Buffer((1,), "int32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    B[tx] = bx
    if tx == 0:
        T.cuda.atomic_add(N.ptr_to([0]), 1)
"""


def test_kernels_that_can_order_their_ctas_are_not_checked():
    """An atomic (or a fence, an acquire load, a grid or cluster barrier) can make a later CTA's overwrite part of a
    protocol, which this check cannot follow; such kernels are left to it alone."""
    res = emulate(kernel(WITH_ATOMIC, "k"), np.zeros(64, np.int32), np.zeros(1, np.int32), arch="sm_90a")
    assert not [f for f in res.findings if "leave different values" in f.message], res.summary()


UNIFORM = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), Out: T.Buffer((1,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([64])
    CLOCK
    if tx == 0:
        Out[0] = A[bx * 64]
"""


def test_a_reduction_that_forgot_its_atomic_is_found_in_lockstep_batches_too():
    """Every CTA stores its partial to Out[0] (one lane, a uniform address): in a lockstep batch of CTAs only the last
    CTA's store was recorded, so the overlap went unseen unless the CTAs ran one at a time."""
    a = np.arange(256, dtype=np.float32)
    for clock in ("T.evaluate(0)", "T.evaluate(T.cuda.clock64())"):
        src = UNIFORM.replace("CLOCK", clock)
        res = emulate(kernel(src, "k"), a, np.zeros(1, np.float32), arch="sm_90a")
        (f,) = res.by_kind("global_race")
        assert f.line == line_of(src, "Out[0] =") and f.buffer == "Out" and f.count == 3, (clock, f.message)
        assert "thread 0 of CTA (0, 0, 0) stores 0.0" in f.message, f.message


SIDES = """
@T.prim_func
def k(B: T.Buffer((64,), "int32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    if bx == 0:
        B[tx] = 100 + tx
    else:
        B[63 - tx] = 200 + tx
"""


def test_each_ctas_store_is_named_by_its_own_thread_and_line():
    res = emulate(kernel(SIDES, "k"), np.zeros(64, np.int32), arch="sm_90a")
    (f,) = res.by_kind("global_race")
    assert (f.other_line, f.line) == (line_of(SIDES, "100 + tx"), line_of(SIDES, "200 + tx")), f.message
    assert "thread 0 of CTA (0, 0, 0) stores 100" in f.message and "thread 63 of CTA (1, 0, 0) stores 263" in f.message


def test_ops_that_only_look_like_ordering_ones_leave_the_check_on():
    from txlab.emulator import cta_overlaps as co

    assert co.applies(["tirx.ptx.ldmatrix", "tirx.ptx.redux_sync", "tirx.ptx.fence_proxy", "tirx.ptx.stmatrix"])
    for n in ("tirx.ptx.fence", "tirx.ptx.red", "tirx.ptx.ld", "tirx.ptx.st", "tirx.cuda.atomic_add", "tirx.ptx.atom"):
        assert not co.applies([n]), n
