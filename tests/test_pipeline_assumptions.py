"""``txlab.pipelines.from_kernel`` never reads as an all-clear where it could not read the kernel: a wait parity
computed over nested loops is read iteration by iteration (one it cannot follow is an assumption, not a deadlock),
every assumption reaches the verdict (``trace.assumed`` and its summary), a trip count or byte count known only at
launch is read with a value the caller passes (``params=``) or named as assumed, and a guard that reads memory
keeps its thread part while the memory part is assumed to hold."""

import inspect
import sys

import pytest
from tvm.backend.cuda.lang import MBarrier, SMEMPool, TMABar
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

from txlab import pipelines as P
from txlab.errors import InputError

S, NK, NT = 3, 8, 2
TB = 32 * 64 * 4  # one 32x64 float32 tile


def _line(kernel: str, text: str) -> int:
    """The line of this file holding ``text``, first after ``def kernel``."""
    src = inspect.getsource(sys.modules[__name__]).splitlines()
    start = next(i for i, t in enumerate(src) if f"def {kernel}(" in t)
    return 1 + next(i for i in range(start, len(src)) if text in src[i])


# --- kernels: a 3-slot TMA ring, one producer thread, two consumer warps (lane 0 of each releases a slot) -------
def nested_ring():
    """The ring walked by two nested loops, the slot and parity from the combined index ``it = t * NK + k``."""

    @T.prim_func
    def nested_ring_k(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * NK * 32, 64), "float32")
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
            for t in T.serial(NT):
                for k in T.serial(NK):
                    it = t * NK + k
                    empty.wait(it % S, ((it // S) & 1) ^ 1)
                    Tx.copy_async(
                        As[it % S, :, :], A[it * 32 : (it + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([it % S])
                    )
                    full.arrive(it % S, TB)
        elif tid >= 32:
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for t in T.serial(NT):
                for k in T.serial(NK):
                    it = t * NK + k
                    full.wait(it % S, (it // S) & 1)
                    for r in T.serial(32):
                        acc[0] = acc[0] + As[it % S, r, tid - 32]
                    T.cuda.warp_sync()
                    if tid % 32 == 0:
                        empty.arrive(it % S)
            Out[tid - 32] = acc[0]

    return nested_ring_k


@T.prim_func
def nested_by_args(A_ptr: T.handle, Out_ptr: T.handle, nt: T.int32, nk: T.int32):
    """Nested loops whose both bounds are kernel arguments: the parity cannot be followed past the first row."""
    A = T.match_buffer(A_ptr, (NT * NK * 32, 64), "float32")
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
        for t in T.serial(nt):
            for k in T.serial(nk):
                it = t * nk + k
                empty.wait(it % S, ((it // S) & 1) ^ 1)
                Tx.copy_async(
                    As[it % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([it % S])
                )
                full.arrive(it % S, TB)
    elif tid >= 32:
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for t in T.serial(nt):
            for k in T.serial(nk):
                it = t * nk + k
                full.wait(it % S, (it // S) & 1)
                for r in T.serial(32):
                    acc[0] = acc[0] + As[it % S, r, tid - 32]
                T.cuda.warp_sync()
                if tid % 32 == 0:
                    empty.arrive(it % S)
        Out[tid - 32] = acc[0]


@T.prim_func
def expect_from_arg(A_ptr: T.handle, Out_ptr: T.handle, nbytes: T.int32):
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
        for k in T.serial(NK):
            empty.wait(k % S, ((k // S) & 1) ^ 1)
            Tx.copy_async(As[k % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([k % S]))
            full.arrive(k % S, nbytes)
    elif tid >= 32:
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for k in T.serial(NK):
            full.wait(k % S, (k // S) & 1)
            for r in T.serial(32):
                acc[0] = acc[0] + As[k % S, r, tid - 32]
            T.cuda.warp_sync()
            if tid % 32 == 0:
                empty.arrive(k % S)
        Out[tid - 32] = acc[0]


@T.prim_func
def producer_loop_from_arg(A_ptr: T.handle, Out_ptr: T.handle, nk: T.int32):
    """The producer runs ``nk`` iterations (a kernel argument), the consumers a fixed NK."""
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
        for k in T.serial(nk):
            empty.wait(k % S, ((k // S) & 1) ^ 1)
            Tx.copy_async(As[k % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([k % S]))
            full.arrive(k % S, TB)
    elif tid >= 32:
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for k in T.serial(NK):
            full.wait(k % S, (k // S) & 1)
            for r in T.serial(32):
                acc[0] = acc[0] + As[k % S, r, tid - 32]
            T.cuda.warp_sync()
            if tid % 32 == 0:
                empty.arrive(k % S)
        Out[tid - 32] = acc[0]


@T.prim_func
def both_loops_from_arg(A_ptr: T.handle, Out_ptr: T.handle, nk: T.int32):
    """Every role runs ``nk`` iterations (the usual K loop given at launch)."""
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
        for k in T.serial(nk):
            empty.wait(k % S, ((k // S) & 1) ^ 1)
            Tx.copy_async(As[k % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([k % S]))
            full.arrive(k % S, TB)
    elif tid >= 32:
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for k in T.serial(nk):
            full.wait(k % S, (k // S) & 1)
            for r in T.serial(32):
                acc[0] = acc[0] + As[k % S, r, tid - 32]
            T.cuda.warp_sync()
            if tid % 32 == 0:
                empty.arrive(k % S)
        Out[tid - 32] = acc[0]


def arrive_on_memory(nested: bool, init_empty: int = 2):
    """Lane 0 of each consumer warp releases the slot only where ``F[k] > 0`` (a flag read from global memory),
    written as one ``and`` or as two nested ifs."""

    @T.prim_func
    def arrive_on_memory_k(A_ptr: T.handle, Out_ptr: T.handle, F_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NK * 32, 64), "float32")
        Out = T.match_buffer(Out_ptr, (64,), "float32")
        F = T.match_buffer(F_ptr, (NK,), "int32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([96])
        pool = SMEMPool()
        As = pool.alloc((S, 32, 64), "float32", align=128)
        full = TMABar(pool, S)
        empty = MBarrier(pool, S)
        full.init(1)
        empty.init(init_empty)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            for k in T.serial(NK):
                empty.wait(k % S, ((k // S) & 1) ^ 1)
                Tx.copy_async(
                    As[k % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([k % S])
                )
                full.arrive(k % S, TB)
        elif tid >= 32:
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NK):
                full.wait(k % S, (k // S) & 1)
                for r in T.serial(32):
                    acc[0] = acc[0] + As[k % S, r, tid - 32]
                T.cuda.warp_sync()
                if nested:
                    if tid % 32 == 0:
                        if F[k] > 0:
                            empty.arrive(k % S)
                else:
                    if tid % 32 == 0 and F[k] > 0:
                        empty.arrive(k % S)
            Out[tid - 32] = acc[0]

    return arrive_on_memory_k


# --- D2: wait parities over nested loops -------------------------------------------------------------------------
def test_a_parity_over_nested_loops_is_read_and_the_correct_ring_passes():
    """``((it // S) & 1) ^ 1`` with ``it = t * NK + k`` was evaluated with every loop variable at one value, could not
    be read, and the fallback kept the XOR on top of an assumed phase 1: a deadlock in a correct ring."""
    spec = P.from_kernel(nested_ring())
    assert (spec.producer_phase, spec.empty_phase_offset, spec.consumer_phase) == (1, 0, 0), spec.notes
    t = spec.simulate(12)
    assert t.ok and t.deadlock is None and t.assumed == (), t.summary()


def test_a_parity_that_cannot_be_read_is_an_assumption_not_a_deadlock():
    spec = P.from_kernel(nested_by_args)
    t = spec.simulate(12)
    assert t.deadlock is None and not any(p.kind == "deadlock" for p in t.problems), t.summary()
    parity = [a for a in t.assumed if a.startswith("wait parity not read")]
    assert parity and any("producer" in a and "assumed it is 1" in a for a in parity), t.assumed
    # the loops bounded by kernel arguments are named with how to read them
    bounds = [a for a in t.assumed if "known only at launch" in a]
    assert bounds and all("params=" in a for a in bounds), t.assumed
    assert "no problem found." not in t.summary() and "assumed where the kernel could not be read" in t.summary()


def test_a_deadlock_from_a_phase_xor_does_not_advise_the_phase_it_already_has():
    t = P.simulate(3, iterations=4, producer_phase=1, empty_phase_offset=1)
    msg = t.deadlock.message
    assert "Start the producer at phase 1" not in msg, msg
    assert "Drop the XOR with 1 (empty_phase_offset=0)" in msg and "starts its PipelineState at phase 1" in msg


# --- D3: every assumption reaches the verdict ---------------------------------------------------------------------
def test_an_expect_tx_count_from_a_kernel_argument_is_an_assumption_of_the_verdict():
    spec = P.from_kernel(expect_from_arg)
    assert spec.expect_tx_bytes is None
    t = spec.simulate(12)
    assert t.ok and t.assumed == spec.assumptions
    assert any("expect_tx" in a and "assumed" in a for a in t.assumed), t.assumed
    s = t.summary()
    assert not s.endswith("no problem found.") and t.assumed[0] in s


def test_a_byte_count_is_read_with_the_value_passed():
    spec = P.from_kernel(expect_from_arg, params={"nbytes": TB})
    assert spec.expect_tx_bytes == spec.tx_delivered == TB
    t = spec.simulate(12)
    assert t.ok and t.assumed == (), t.summary()
    t = P.from_kernel(expect_from_arg, params={"nbytes": TB // 2}).simulate(12)
    assert any(p.kind == "tx_mismatch" for p in t.problems), t.summary()


def test_the_assumptions_stay_in_a_rerun_and_next_to_problems():
    t = P.from_kernel(arrive_on_memory(nested=False, init_empty=3)).simulate(12)
    assert not t.ok and t.assumed, t.summary()
    assert "assumed where the kernel could not be read" in t.summary()
    assert t.rerun(init_empty=2).assumed == t.assumed


# --- D4: trip counts known only at launch -------------------------------------------------------------------------
def test_a_loop_bound_by_a_kernel_argument_is_read_as_named_assumption():
    spec = P.from_kernel(producer_loop_from_arg)
    # read with the consumers' trip count: the code's arrivals are counted, not the declaration's
    assert (spec.arrivals_full, spec.arrivals_empty, spec.expect_tx_bytes) == (1, 2, TB), spec.notes
    t = spec.simulate(12)
    assert t.ok, t.summary()
    (a,) = [a for a in t.assumed if "nk" in a]
    assert "assumed nk = 8" in a and "params={'nk': ...}" in a
    assert f"line {_line('producer_loop_from_arg', 'for k in T.serial(nk)')}" in a


def test_a_loop_every_role_bounds_by_the_same_argument_is_read_with_a_shared_count():
    spec = P.from_kernel(both_loops_from_arg)
    assert (spec.arrivals_full, spec.arrivals_empty) == (1, 2), spec.notes
    t = spec.simulate(12)
    assert t.ok and any("assumed nk = " in a for a in t.assumed), t.summary()


@pytest.mark.parametrize(
    ("nk", "waits"),
    [(5, "full.wait(k % S, (k // S) & 1)"), (12, "empty.wait(k % S, ((k // S) & 1) ^ 1)")],
)
def test_roles_that_run_different_trip_counts_hang_at_the_first_wait_past_them(nk, waits):
    t = P.from_kernel(producer_loop_from_arg, params={"nk": nk}).simulate(12)
    assert not t.ok and all("nk" not in a for a in t.assumed), t.summary()
    trip = [p for p in t.problems if p.kind == "trip_count"]
    assert len(trip) == 1 and trip[0].lineno == _line("producer_loop_from_arg", waits), t.summary()
    assert "never passes and the kernel hangs" in trip[0].message
    # the per-phase averages over sides of different lengths are not reported as over-arrivals
    assert not any(p.kind in ("over_arrival", "phase_skip") for p in t.problems), t.summary()


def test_the_trip_count_passed_that_matches_reads_clean():
    t = P.from_kernel(producer_loop_from_arg, params={"nk": NK}).simulate(12)
    assert t.ok and t.assumed == (), t.summary()


@pytest.mark.parametrize(
    ("params", "needle"), [({"nope": 1}, "not a scalar argument"), ({"nk": 2.5}, "must be an int")]
)
def test_params_that_do_not_fit_the_kernel_are_refused(params, needle):
    with pytest.raises(InputError, match=needle):
        P.from_kernel(producer_loop_from_arg, params=params)


# --- D5: guards that read memory ----------------------------------------------------------------------------------
@pytest.mark.parametrize("nested", [False, True])
def test_a_guard_reading_memory_keeps_its_thread_part_and_assumes_the_rest(nested):
    spec = P.from_kernel(arrive_on_memory(nested))
    assert spec.arrivals_empty == 2, spec.notes  # one per consumer warp, not every thread of the branch
    t = spec.simulate(12)
    assert t.ok, t.summary()
    (a,) = [a for a in t.assumed if "F[k] > 0" in a]
    assert "assumed `F[k] > 0` holds" in a and "waiters hang" in a
    assert f"line {_line('arrive_on_memory_k', 'if F[k] > 0:' if nested else 'and F[k] > 0:')}" in a
