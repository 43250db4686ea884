"""``T.ptx.mbarrier`` waits a loop polls (``try_wait``/``test_wait``, by parity or by an arrive's state),
``arrive_drop``, ``complete_tx`` and ``inval`` on the emulator: each stopped the run with NotEmulatedError
before."""

import numpy as np
import pytest

from txlab.emulator import emulate
from txlab.errors import NotEmulatedError

from test_emulator import kernel, line_of

# warp 0 produces a value per round and arrives; warps 1..3 poll the mbarrier with WAIT, then read it
HANDOFF = """
@T.prim_func
def handoff(O: T.Buffer((4, 128), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    val = T.alloc_shared([1], "int32")
    ok = T.local_scalar("uint32")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), 32)
    T.cuda.cta_sync()
    for r in range(4):
        if tx < 32:
            if tx == 0:
                val[0] = r * 10 + 7
            T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
        else:
            ok = T.uint32(0)
            while ok == T.uint32(0):
                WAIT
            O[r, tx] = val[0]
        T.cuda.cta_sync()
"""

WAITS = {
    "try_wait.parity": "T.ptx.mbarrier.try_wait.parity.shared__cta.b64(ok, T.address_of(bar), T.uint32(r % 2), "
    "T.uint32(1000))",
    "try_wait.parity no hint": "T.ptx.mbarrier.try_wait.parity.shared__cta.b64(ok, T.address_of(bar), T.uint32(r % 2))",
    "test_wait.parity": "T.ptx.mbarrier.test_wait.parity.shared__cta.b64(ok, T.address_of(bar), T.uint32(r % 2))",
}


@pytest.mark.parametrize("wait", list(WAITS))
def test_a_polled_wait_sees_every_phase(wait):
    o = np.full((4, 128), -1, np.int32)
    res = emulate(kernel(HANDOFF.replace("WAIT", WAITS[wait]), "handoff"), o)
    assert res.ok, res.findings
    assert (o[:, 32:] == (np.arange(4) * 10 + 7)[:, None]).all(), o[:, 32:]
    assert (o[:, :32] == -1).all()


STATE = """
@T.prim_func
def state(O: T.Buffer((128,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.shared_scalar("uint64")
    val = T.alloc_shared([1], "int32")
    ok = T.local_scalar("uint32")
    st = T.local_scalar("uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), 128)
    T.cuda.cta_sync()
    if tx == 5:
        val[0] = 42
    T.ptx.mbarrier.arrive.shared.b64(st, T.address_of(bar))
    ok = T.uint32(0)
    while ok == T.uint32(0):
        WAIT
    O[tx] = val[0]
"""


@pytest.mark.parametrize(
    "wait",
    [
        "T.ptx.mbarrier.try_wait.shared__cta.b64(ok, T.address_of(bar), st)",
        "T.ptx.mbarrier.test_wait.shared__cta.b64(ok, T.address_of(bar), st)",
    ],
)
def test_a_wait_on_an_arrive_state_waits_for_its_phase(wait):
    o = np.zeros(128, np.int32)
    res = emulate(kernel(STATE.replace("WAIT", wait), "state"), o)
    assert res.ok, res.findings
    assert (o == 42).all()


def test_a_poll_nobody_answers_is_a_deadlock_at_the_wait():
    src = HANDOFF.replace("WAIT", WAITS["test_wait.parity"]).replace(
        "T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))", "T.evaluate(0)"
    )
    o = np.full((4, 128), -1, np.int32)
    res = emulate(kernel(src, "handoff"), o)
    kinds = {f.kind for f in res.findings}
    assert "deadlock" in kinds, res.findings
    assert any(f.line == line_of(src, "T.ptx.mbarrier.test_wait") for f in res.findings if f.kind == "deadlock")


DROP = """
@T.prim_func
def drop(O: T.Buffer((3, 64), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    bar = T.shared_scalar("uint64")
    val = T.alloc_shared([1], "int32")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), 64)
    T.cuda.cta_sync()
    # round 0: every thread arrives; threads 32.. drop out of the phases after it
    if tx >= 32:
        T.ptx.mbarrier.arrive_drop.shared.b64(T.address_of(bar), T.uint32(1))
    else:
        T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    O[0, tx] = 1
    if tx < 32:
        if tx == 3:
            val[0] = 5
        T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
        T.cuda.mbarrier_wait(T.address_of(bar), 1)
        O[1, tx] = val[0]
        T.ptx.mbarrier.expect_tx.shared.b64(T.address_of(bar), T.uint32(8))
        T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
        if tx == 0:
            T.ptx.mbarrier.complete_tx.shared.b64(T.address_of(bar), T.uint32(256))
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        O[2, tx] = 9
"""


def test_arrive_drop_lowers_the_count_of_later_phases_and_complete_tx_settles_bytes():
    """After 32 threads drop, 32 arrivals complete a phase; 32 expect_tx of 8 bytes are settled by one complete_tx of
    256. Without the drop the second wait deadlocks; without the complete_tx the third does."""
    o = np.zeros((3, 64), np.int32)
    res = emulate(kernel(DROP, "drop"), o)
    assert res.ok, res.findings
    assert (o[0] == 1).all() and (o[1, :32] == 5).all() and (o[2, :32] == 9).all()
    short = DROP.replace("T.uint32(256)", "T.uint32(128)")
    o = np.zeros((3, 64), np.int32)
    res = emulate(kernel(short, "drop"), o)
    assert any(f.kind == "deadlock" for f in res.findings), res.findings
    assert (o[2] == 0).all()


def test_an_arrive_after_inval_is_reported():
    src = """
@T.prim_func
def inval(O: T.Buffer((32,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    bar = T.shared_scalar("uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), 32)
    T.cuda.cta_sync()
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx.mbarrier.inval.shared.b64(T.address_of(bar))
    T.cuda.cta_sync()
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar), T.uint32(1))
    O[tx] = 1
"""
    res = emulate(kernel(src, "inval"), np.zeros(32, np.int32))
    msgs = [f.message for f in res.findings]
    assert any("never initialised" in m for m in msgs), msgs
    assert any(f.line == line_of(src, "O[tx] = 1") - 1 for f in res.findings)


def test_conditional_phase_waits_are_refused_with_their_line():
    src = HANDOFF.replace(
        "WAIT",
        "T.ptx.mbarrier.try_wait.parity.phase_type__conditional.shared__cta.b64(ok, T.address_of(bar), "
        "T.uint32(r % 2))",
    )
    with pytest.raises(NotEmulatedError) as ei:
        emulate(kernel(src, "handoff"), np.zeros((4, 128), np.int32), arch="sm_100a")
    assert "conditional" in str(ei.value)


@pytest.mark.gpu
@pytest.mark.parametrize("wait", list(WAITS))
def test_the_polled_handoff_and_the_drop_give_the_gpus_results(wait):
    import txlab

    for src, name, shape in ((HANDOFF.replace("WAIT", WAITS[wait]), "handoff", (4, 128)), (DROP, "drop", (3, 64))):
        c = txlab.compile(kernel(src, name))
        on_gpu, on_cpu = np.full(shape, -1, np.int32), np.full(shape, -1, np.int32)
        c(on_gpu)
        assert emulate(c, on_cpu).ok
        assert np.array_equal(on_gpu, on_cpu), (name, on_gpu, on_cpu)
