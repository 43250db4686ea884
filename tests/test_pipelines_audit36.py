"""``txlab.pipelines.from_kernel`` on rings that hang or race on a GPU and were read as sound (audit 36): a barrier the
kernel waits on and never arrives on, TMA bytes no expect_tx announces, full/empty told apart by init order (swapped,
or another barrier initialised between them), and a PipelineState re-created in every pass of a persistent tile loop
while the barriers keep their phases. Each is a finding at its line, naming the iteration that hangs and the fix; the
correct rings stay clean."""

import inspect
import sys

import pytest
from tvm.backend.cuda.lang import MBarrier, PipelineState, SMEMPool, TMABar
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from txlab import pipelines as P

S, NK = 3, 8
TB = 32 * 64 * 4  # one 32x64 float32 tile


def _line(kernel: str, text: str) -> int:
    """The line of this file holding ``text``, first after ``def kernel``."""
    src = inspect.getsource(sys.modules[__name__]).splitlines()
    start = next(i for i, t in enumerate(src) if f"def {kernel}(" in t)
    return 1 + next(i for i in range(start, len(src)) if text in src[i])


# --- kernels: a 3-slot TMA ring, one producer thread, two consumer warps (lane 0 of each releases a slot) -------
def ring(
    *,
    nk=NK,
    swap_init=False,
    between=False,
    two_copies=False,
    expect=None,
    fill="expect",
    consumer_arrive=True,
):
    """``fill``: how the producer signals full after its copy: ``"expect"`` (arrive.expect_tx), ``"plain"`` (an arrive
    with no byte count) or ``"none"``. ``swap_init``: empty initialised before full; ``between``: a third barrier of
    the same depth initialised between them."""
    exp = (2 * TB if two_copies else TB) if expect is None else expect

    @T.prim_func
    def ring_k(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (nk * 32, 64), "float32")
        Out = T.match_buffer(Out_ptr, (64,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([96])
        pool = SMEMPool()
        As = pool.alloc((S, 32, 64), "float32", align=128)
        Bs = pool.alloc((S, 32, 64), "float32", align=128)
        full = TMABar(pool, S)
        done = MBarrier(pool, S)
        empty = MBarrier(pool, S)
        if swap_init:
            empty.init(2)
            full.init(1)
        else:
            full.init(1)
            if between:
                done.init(1)
            empty.init(2)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            ps = PipelineState(S, 1)
            for k in T.serial(nk):
                empty.wait(ps.stage, ps.phase)
                Tx.copy_async(
                    As[ps.stage, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([ps.stage])
                )
                if two_copies:
                    Tx.copy_async(
                        Bs[ps.stage, :, :],
                        A[k * 32 : (k + 1) * 32, :],
                        dispatch="tma_auto",
                        mbar=full.ptr_to([ps.stage]),
                    )
                if fill == "expect":
                    full.arrive(ps.stage, exp)
                elif fill == "plain":
                    full.arrive(ps.stage)
                ps.advance()
        elif tid >= 32:
            cs = PipelineState(S, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(nk):
                full.wait(cs.stage, cs.phase)
                acc[0] = acc[0] + As[cs.stage, 0, tid - 32]
                T.cuda.warp_sync()
                if consumer_arrive:
                    if tid % 32 == 0:
                        empty.arrive(cs.stage)
                cs.advance()
            Out[tid - 32] = acc[0]

    return ring_k


def handmade(swap_init=False):
    """No TMA: the producer warp writes the slot itself and arrives on full (32 arrivals); raw MBarriers both."""

    @T.prim_func
    def handmade_k(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NK, 32), "float32")
        Out = T.match_buffer(Out_ptr, (32,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([64])
        pool = SMEMPool()
        As = pool.alloc((S, 32), "float32", align=128)
        full = MBarrier(pool, S)
        empty = MBarrier(pool, S)
        if swap_init:
            empty.init(1)
            full.init(32)
        else:
            full.init(32)
            empty.init(1)
        pool.commit()
        T.cuda.cta_sync()
        if tid < 32:
            ps = PipelineState(S, 1)
            for k in T.serial(NK):
                empty.wait(ps.stage, ps.phase)
                As[ps.stage, tid] = A[k, tid]
                full.arrive(ps.stage)
                ps.advance()
        else:
            cs = PipelineState(S, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NK):
                full.wait(cs.stage, cs.phase)
                acc[0] = acc[0] + As[cs.stage, tid - 32]
                T.cuda.warp_sync()
                if tid == 32:
                    empty.arrive(cs.stage)
                cs.advance()
            Out[tid - 32] = acc[0]

    return handmade_k


def persistent(*, reset: bool, nk: int = 4, nt: int = 4, reinit: bool = False):
    """``nt`` tiles of ``nk`` k-steps over the 3-slot ring; ``reset``: each role's PipelineState is created inside
    the tile loop (as if per tile), else once before it (``reinit``: and set back to its start at the end of every
    tile)."""

    @T.prim_func
    def persistent_k(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (nk * 32, 64), "float32")
        Out = T.match_buffer(Out_ptr, (64,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([96])
        pool = SMEMPool()
        As = pool.alloc((S, 32, 64), "float32", align=128)
        full = TMABar(pool, S)
        empty = MBarrier(pool, S)
        full.init(1)
        empty.init(2)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            if reset:
                for t in T.serial(nt):
                    ps = PipelineState(S, 1)  # per tile (producer)
                    for k in T.serial(nk):
                        empty.wait(ps.stage, ps.phase)
                        Tx.copy_async(
                            As[ps.stage, :, :],
                            A[k * 32 : (k + 1) * 32, :],
                            dispatch="tma_auto",
                            mbar=full.ptr_to([ps.stage]),
                        )
                        full.arrive(ps.stage, TB)
                        ps.advance()
            else:
                ps = PipelineState(S, 1)
                for t in T.serial(nt):
                    for k in T.serial(nk):
                        empty.wait(ps.stage, ps.phase)
                        Tx.copy_async(
                            As[ps.stage, :, :],
                            A[k * 32 : (k + 1) * 32, :],
                            dispatch="tma_auto",
                            mbar=full.ptr_to([ps.stage]),
                        )
                        full.arrive(ps.stage, TB)
                        ps.advance()
                    if reinit:
                        ps.init(1)  # end of tile (producer)
        elif tid >= 32:
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            if reset:
                for t in T.serial(nt):
                    cs = PipelineState(S, 0)  # per tile (consumer)
                    for k in T.serial(nk):
                        full.wait(cs.stage, cs.phase)
                        acc[0] = acc[0] + As[cs.stage, 0, tid - 32]
                        T.cuda.warp_sync()
                        if tid % 32 == 0:
                            empty.arrive(cs.stage)
                        cs.advance()
            else:
                cs = PipelineState(S, 0)
                for t in T.serial(nt):
                    for k in T.serial(nk):
                        full.wait(cs.stage, cs.phase)
                        acc[0] = acc[0] + As[cs.stage, 0, tid - 32]
                        T.cuda.warp_sync()
                        if tid % 32 == 0:
                            empty.arrive(cs.stage)
                        cs.advance()
                    if reinit:
                        cs.init(0)  # end of tile (consumer)
            Out[tid - 32] = acc[0]

    return persistent_k


@T.prim_func
def reset_by_arg(A_ptr: T.handle, Out_ptr: T.handle, nk: T.int32):
    """The PipelineStates are created per tile, and a tile's k-steps are a kernel argument."""
    A = T.match_buffer(A_ptr, (NK * 32, 64), "float32")
    Out = T.match_buffer(Out_ptr, (64,), "float32")
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([96])
    pool = SMEMPool()
    As = pool.alloc((S, 32, 64), "float32", align=128)
    full = TMABar(pool, S)
    empty = MBarrier(pool, S)
    full.init(1)
    empty.init(2)
    pool.commit()
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tid == 0:
        for t in T.serial(4):
            ps = PipelineState(S, 1)
            for k in T.serial(nk):
                empty.wait(ps.stage, ps.phase)
                Tx.copy_async(
                    As[ps.stage, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([ps.stage])
                )
                full.arrive(ps.stage, TB)
                ps.advance()
    elif tid >= 32:
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for t in T.serial(4):
            cs = PipelineState(S, 0)
            for k in T.serial(nk):
                full.wait(cs.stage, cs.phase)
                acc[0] = acc[0] + As[cs.stage, 0, tid - 32]
                T.cuda.warp_sync()
                if tid % 32 == 0:
                    empty.arrive(cs.stage)
                cs.advance()
        Out[tid - 32] = acc[0]


def _kinds(t):
    return [p.kind for p in t.problems]


# --- 1: a barrier the kernel waits on and never arrives on --------------------------------------------------------
def test_consumers_that_never_release_a_slot_hang_the_producer_at_iteration_s():
    spec = P.from_kernel(ring(consumer_arrive=False))
    assert spec.arrivals_empty == 0 and spec.arrivals_full == 1, spec.notes
    t = spec.simulate(NK)
    assert not t.ok and t.assumed == (), (t.summary(), t.assumed)
    prod = next(w for w in t.deadlock.waits if w.role == "producer")
    assert (prod.barrier, prod.stage, prod.iteration) == ("empty", 0, S)
    (p,) = [p for p in t.problems if p.kind == "missing_arrive"]
    assert p.lineno == _line("ring_k", "empty.wait(ps.stage, ps.phase)") and p.iteration == S
    assert "nothing ever arrives on empty" in p.message and f"iteration {S}" in p.message
    assert "`empty.arrive(stage)`" in p.message
    # the simulator's "set init_empty=0" is not offered as a fix
    assert not any(p.kind == "init_count" for p in t.problems), t.summary()
    # the kernel runs NK > S iterations: fewer simulated still names the hang
    assert any(p.kind == "missing_arrive" for p in spec.simulate(2).problems)


def test_a_ring_that_never_reuses_a_slot_needs_no_release():
    """S k-steps over S slots: every producer wait passes on a fresh barrier, nothing hangs."""
    spec = P.from_kernel(ring(nk=S, consumer_arrive=False))
    assert spec.arrivals_empty == 0
    t = spec.simulate(S)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()


# --- 2: TMA bytes no expect_tx announces --------------------------------------------------------------------------
def test_a_copy_with_no_arrive_on_its_barrier_hangs_the_consumers_at_once():
    spec = P.from_kernel(ring(fill="none"))
    assert (spec.arrivals_full, spec.expect_tx_bytes, spec.tx_delivered) == (0, 0, TB), spec.notes
    t = spec.simulate(NK)
    assert not t.ok and t.assumed == (), t.summary()
    cons = next(w for w in t.deadlock.waits if w.role == "consumers")
    assert (cons.barrier, cons.stage, cons.iteration) == ("full", 0, 0)
    miss = next(p for p in t.problems if p.kind == "missing_arrive")
    assert miss.barrier == "full" and miss.lineno == _line("ring_k", "full.wait(cs.stage, cs.phase)")
    assert f"`full.arrive(stage, {TB})`" in miss.message and "iteration 0" in miss.message
    tx = next(p for p in t.problems if p.kind == "tx_mismatch")
    assert "no expect_tx announces them" in tx.message


def test_a_plain_arrive_next_to_a_tma_copy_races_then_hangs():
    spec = P.from_kernel(ring(fill="plain"))
    assert (spec.arrivals_full, spec.expect_tx_bytes, spec.tx_delivered) == (1, 0, TB), spec.notes
    t = spec.simulate(NK)
    assert not t.ok and t.assumed == (), t.summary()
    (tx,) = [p for p in t.problems if p.kind == "tx_mismatch"]
    assert tx.lineno == _line("ring_k", "full.arrive(ps.stage)")
    assert _line("ring_k", "Tx.copy_async(") in tx.lines
    assert "a race" in tx.message and f"iteration {S}" in tx.message
    assert f"`full.arrive(stage, {TB})`" in tx.message
    cons = next(w for w in t.deadlock.waits if w.role == "consumers")
    assert (cons.barrier, cons.stage, cons.iteration) == ("full", 0, S)
    assert any("expect_tx none" in n for n in spec.notes), spec.notes


def test_the_announced_ring_stays_clean():
    spec = P.from_kernel(ring())
    assert (spec.arrivals_full, spec.arrivals_empty, spec.expect_tx_bytes, spec.tx_delivered) == (1, 2, TB, TB)
    t = spec.simulate(NK)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()


# --- 3 and 4: full and empty told apart by what the roles do ------------------------------------------------------
@pytest.mark.parametrize("layout", [{}, {"swap_init": True}, {"between": True}])
def test_full_and_empty_are_read_from_the_roles_not_the_init_order(layout):
    spec = P.from_kernel(ring(**layout))
    assert (spec.full, spec.empty, spec.init_full, spec.init_empty) == ("tma", "mbar", 1, 2), spec.notes
    assert (spec.producer_phase, spec.consumer_phase) == (1, 0)
    assert (spec.arrivals_full, spec.arrivals_empty, spec.expect_tx_bytes, spec.tx_delivered) == (1, 2, TB, TB)
    t = spec.simulate(NK)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()
    if layout:
        assert any(n.startswith("paired by what the code does") for n in spec.notes), spec.notes
    assert len(P.find_pipelines(ring(**layout))) == 1  # the barrier between is not a pipeline


@pytest.mark.parametrize("layout", [{"swap_init": True}, {"between": True}])
def test_a_byte_mismatch_is_found_whatever_the_init_order(layout):
    spec = P.from_kernel(ring(two_copies=True, expect=TB, **layout))
    assert (spec.expect_tx_bytes, spec.tx_delivered) == (TB, 2 * TB)
    t = spec.simulate(NK)
    tx = [p for p in t.problems if p.kind == "tx_mismatch"]
    assert not t.ok and tx and tx[0].lineno == _line("ring_k", "full.arrive(ps.stage, exp)"), t.summary()


@pytest.mark.parametrize("swap", [False, True])
def test_raw_barriers_without_bytes_are_told_apart_by_their_first_wait(swap):
    spec = P.from_kernel(handmade(swap_init=swap))
    assert (spec.init_full, spec.init_empty, spec.arrivals_full, spec.arrivals_empty) == (32, 1, 32, 1), spec.notes
    assert (spec.producer_phase, spec.consumer_phase) == (1, 0)
    t = spec.simulate(NK)
    assert t.ok and t.problems == (), t.summary()


# --- 5: a PipelineState re-created per tile -----------------------------------------------------------------------
def test_a_pipeline_state_recreated_per_tile_is_a_phase_mismatch_at_its_line():
    spec = P.from_kernel(persistent(reset=True))
    assert spec.resets["producer"]["every"] == spec.resets["consumer"]["every"] == 4
    t = spec.simulate(16)
    assert not t.ok and t.assumed == (), t.summary()
    mism = [p for p in t.problems if p.kind == "phase_mismatch"]
    at = {p.lineno for p in mism}
    prod_line = _line("persistent_k", "ps = PipelineState(S, 1)  # per tile (producer)")
    cons_line = _line("persistent_k", "cs = PipelineState(S, 0)  # per tile (consumer)")
    assert {prod_line, cons_line} <= at, t.summary()
    p = next(p for p in mism if p.lineno == cons_line)
    assert f"loop at line {cons_line - 1}" in p.message  # the tile loop the PipelineState is written in
    assert "re-created" in p.message and "not a multiple of 2 x 3 = 6" in p.message
    assert "stage 1, phase 1" in p.message and "Create the PipelineState once, before the loop" in p.message
    # the simulation of the restart: tile 1's consumer wait on full[1] passes on tile 0's phase (stale data)
    stale = next(p for p in mism if p.role == "consumers" and p.lineno != cons_line)
    assert (stale.barrier, stale.stage, stale.iteration) == ("full", 1, 5) and "stale" in stale.message
    assert "full[1] in iteration 5" in p.message
    # the restart, not extra arrivals, is the cause: no phase_skip advising on arrival counts
    assert "phase_skip" not in _kinds(t)


def test_a_pipeline_state_kept_across_tiles_is_clean():
    spec = P.from_kernel(persistent(reset=False))
    assert spec.resets == {}
    t = spec.simulate(16)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()


def test_a_restart_where_the_ring_comes_back_to_stage_0_phase_start_is_harmless():
    """6 k-steps per tile over 3 slots: each tile ends where a fresh PipelineState starts."""
    spec = P.from_kernel(persistent(reset=True, nk=2 * S))
    assert spec.resets == {}
    t = spec.simulate(4 * 2 * S)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()


def test_a_pipeline_state_set_back_at_the_end_of_each_tile_is_the_same_mismatch():
    spec = P.from_kernel(persistent(reset=False, reinit=True))
    assert spec.resets["consumer"]["line"] == _line("persistent_k", "cs.init(0)  # end of tile (consumer)")
    t = spec.simulate(16)
    assert not t.ok and {p.lineno for p in t.problems if p.kind == "phase_mismatch"} >= {
        _line("persistent_k", "ps.init(1)  # end of tile (producer)"),
        _line("persistent_k", "cs.init(0)  # end of tile (consumer)"),
    }, t.summary()


def test_a_pipeline_state_created_in_a_loop_that_runs_once_is_no_restart():
    spec = P.from_kernel(persistent(reset=True, nt=1))
    assert spec.resets == {}
    t = spec.simulate(4)
    assert t.ok and t.problems == () and t.assumed == (), t.summary()


def test_a_restart_over_a_trip_count_known_only_at_launch_is_an_assumption():
    spec = P.from_kernel(reset_by_arg)
    t = spec.simulate(12)
    restart = [a for a in t.assumed if "re-created in every pass" in a]
    assert restart and "multiple of 2 x 3" in restart[0], t.assumed
    t = P.from_kernel(reset_by_arg, params={"nk": 4}).simulate(16)
    assert any(p.kind == "phase_mismatch" for p in t.problems), t.summary()


# --- the simulator: a role's PipelineState restarted every n iterations -------------------------------------------
PROD = [("wait", "empty"), ("arrive", "full"), ("advance",)]
CONS = [("wait", "full"), ("arrive", "empty"), ("advance",)]


def test_simulate_restarts_a_role_every_n_iterations():
    ok = P.simulate(3, iterations=12, roles={"producer": PROD, "consumer": CONS})
    assert ok.ok and ok.problems == ()
    roles = {"producer": {"ops": PROD, "reset_every": 4}, "consumer": {"ops": CONS, "reset_every": 4}}
    t = P.simulate(3, iterations=12, roles=roles)
    assert not t.ok and "phase_mismatch" in _kinds(t), t.summary()
    assert [r.reset_every for r in t.roles] == [4, 4] and t.roles[0].to_dict()["reset_every"] == 4
    # after a restart the role is back at stage 0, its start phase
    after = [s for s in t.steps if s.role == "consumer" and s.iteration == 4]
    assert after and after[0].roles["consumer"] == (0, 0)
    assert t.rerun().roles[0].reset_every == 4
    # a restart every 2 x stages iterations changes nothing
    same = {"producer": {"ops": PROD, "reset_every": 6}, "consumer": {"ops": CONS, "reset_every": 6}}
    assert P.simulate(3, iterations=12, roles=same).ok


def test_reset_every_must_be_a_positive_int():
    with pytest.raises(P.ScriptError, match="reset_every"):
        P.simulate(3, iterations=4, roles={"producer": {"ops": PROD, "reset_every": 0}, "consumer": CONS})


def test_waiting_twice_on_one_phase_in_one_iteration_is_no_mismatch():
    cons = [("wait", "full"), ("wait", "full"), ("arrive", "empty"), ("advance",)]
    t = P.simulate(2, iterations=6, roles={"producer": PROD, "consumer": cons})
    assert t.ok and t.problems == (), t.summary()
