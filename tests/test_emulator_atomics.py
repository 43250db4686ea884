"""Races that involve atomics: an atomic and a plain access of the same shared or global bytes by
threads with nothing ordering them are a race at both lines; atomics among themselves never race."""

import numpy as np
import pytest
from test_emulator import kernel, line_of

from txlab.emulator import emulate

HIST = """
@T.prim_func
def hist(X_ptr: T.handle, H_ptr: T.handle):
    X = T.match_buffer(X_ptr, (4096,), "int32")
    H = T.match_buffer(H_ptr, (64,), "int32")
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    bins = T.alloc_buffer((64,), "int32", scope="shared")
    if tx < 64:
        bins[tx] = 0
    SYNC
    for j in range(4):
        T.cuda.atomic_add(T.address_of(bins[X[bx * 1024 + j * 256 + tx]]), 1)
    T.cuda.cta_sync()
    if tx < 64:
        T.cuda.atomic_add(T.address_of(H[tx]), bins[tx])
"""


def _hist_inputs():
    x = np.random.default_rng(1).integers(0, 64, 4096).astype(np.int32)
    return x, np.bincount(x, minlength=64).astype(np.int32)


@pytest.mark.parametrize("sync", ["T.cuda.cta_sync()", 'T.tvm_storage_sync("shared")'])
def test_histogram_without_barrier_races_and_its_fixed_twin_is_clean(sync):
    x, ref = _hist_inputs()
    racy_src = HIST.replace("SYNC", "pass")
    h = np.zeros(64, np.int32)
    res = emulate(kernel(racy_src, "hist"), x, h)
    races = res.by_kind("shared_race")
    assert races, res.findings
    zero, add = line_of(racy_src, "bins[tx] = 0"), line_of(racy_src, "T.cuda.atomic_add(T.address_of(bins")
    assert {(f.line, f.other_line) for f in races} >= {(add, zero)}
    assert "write" in races[0].message and "atomic" in races[0].message

    h = np.zeros(64, np.int32)
    res = emulate(kernel(HIST.replace("SYNC", sync), "hist"), x, h)
    assert res.ok, res.findings
    assert np.array_equal(h, ref)


def test_atomics_do_not_race_with_each_other():
    """The 1024 atomics of 8 warps on the same 64 bins have no barrier between them: no race. (Without the zeroing
    the bins would start as whatever was there: tests/test_emulator_uninit.py.)"""
    x, ref = _hist_inputs()
    src = HIST.replace("SYNC", "T.cuda.cta_sync()")
    h = np.zeros(64, np.int32)
    res = emulate(kernel(src, "hist"), x, h)
    assert res.ok, res.findings
    assert np.array_equal(h, ref)


def test_plain_read_after_atomic_without_barrier_races():
    src = HIST.replace("SYNC", "T.cuda.cta_sync()").replace(
        "    T.cuda.cta_sync()\n    if tx < 64:\n        T.cuda.atomic_add",
        "    if tx < 64:\n        T.cuda.atomic_add",
    )
    x, _ = _hist_inputs()
    res = emulate(kernel(src, "hist"), x, np.zeros(64, np.int32))
    races = res.by_kind("shared_race")
    add = line_of(src, "T.cuda.atomic_add(T.address_of(bins")
    read = line_of(src, "T.cuda.atomic_add(T.address_of(H[tx])")
    assert any(f.other_line == add and f.line == read and "atomic" in f.message for f in races), res.findings


GHIST = """
@T.prim_func
def ghist(X_ptr: T.handle, H_ptr: T.handle):
    X = T.match_buffer(X_ptr, (NX,), "int32")
    H = T.match_buffer(H_ptr, (64,), "int32")
    T.device_entry()
    bx = T.cta_id([NCTA])
    tx = T.thread_id([256])
    if bx == 0:
        if tx < 64:
            H[tx] = 0
    SYNC
    for j in range(4):
        T.cuda.atomic_add(T.address_of(H[X[bx * 1024 + j * 256 + tx]]), 1)
"""


def test_global_histogram_zeroed_in_the_kernel():
    x, _ = _hist_inputs()
    one = GHIST.replace("NX", "1024").replace("NCTA", "1")
    zero = line_of(one, "H[tx] = 0")
    add = line_of(one, "T.cuda.atomic_add(T.address_of(H[X")
    racy = one.replace("SYNC", "pass")
    h = np.full(64, 7, np.int32)
    res = emulate(kernel(racy, "ghist"), x[:1024], h)
    races = res.by_kind("global_race")
    assert races and races[0].line == add and races[0].other_line == zero, res.findings
    assert "same CTA" in races[0].message
    assert "compare-and-swap" not in races[0].message  # a store, not a read seeding a CAS loop

    fixed = one.replace("SYNC", "T.cuda.cta_sync()")  # one CTA: its barrier orders global memory too
    h = np.full(64, 7, np.int32)
    res = emulate(kernel(fixed, "ghist"), x[:1024], h)
    assert res.ok, res.findings
    assert np.array_equal(h, np.bincount(x[:1024], minlength=64))

    # four CTAs: CTA 0's zeroing is ordered with its own atomics by the barrier, never with the others'
    many = GHIST.replace("NX", "4096").replace("NCTA", "4").replace("SYNC", "T.cuda.cta_sync()")
    res = emulate(kernel(many, "ghist"), x, np.zeros(64, np.int32))
    races = res.by_kind("global_race")
    assert races and {races[0].line, races[0].other_line} == {zero, add}, res.findings
    assert "different CTAs" in races[0].message


def test_counter_reset_by_the_cta_that_took_the_last_ticket_is_not_a_race():
    # every CTA takes a ticket; the one that took the last resets the counter: ordered after every
    # earlier atomic through the counter's own order
    src = """
@T.prim_func
def tickets(C_ptr: T.handle, O_ptr: T.handle):
    C = T.match_buffer(C_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (4,), "int32")
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([32])
    if tx == 0:
        t = T.cuda.atomic_add(T.address_of(C[0]), 1)
        O[bx] = t
        if t == 3:
            C[0] = 0
"""
    c = np.zeros(1, np.int32)
    o = np.zeros(4, np.int32)
    res = emulate(kernel(src, "tickets"), c, o)
    assert res.ok, res.findings
    assert list(o) == [0, 1, 2, 3] and c[0] == 0


WAIT = """
@T.prim_func
def wait(F_ptr: T.handle, O_ptr: T.handle):
    F = T.match_buffer(F_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (2,), "int32")
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([32])
    if tx == 0:
        if bx == WAITER:
            while T.cuda.atomic_add(T.address_of(F[0]), 0) < 1:  # the spin
                T.evaluate(0)
            O[bx] = 1
        else:
            T.evaluate(T.cuda.atomic_add(T.address_of(F[0]), 1))
            O[bx] = 2
"""


@pytest.mark.parametrize("waiter", [0, 1])
def test_a_wait_on_another_cta_runs_with_the_ctas_resident_together(waiter):
    """CTA 0 spinning on a flag CTA 1 sets looped forever while CTAs ran one after another, and later stopped with a
    NotEmulatedError. A kernel that polls global memory now runs its CTAs resident together (one scheduler, a poll
    that finds nothing new yields), so the wait ends when the other CTA sets the flag, whichever CTA waits."""
    src = WAIT.replace("WAITER", str(waiter))
    o = np.zeros(2, np.int32)
    res = emulate(kernel(src, "wait"), np.zeros(1, np.int32), o)
    assert res.ok, res.findings
    assert o.tolist() == ([1, 2] if waiter == 0 else [2, 1])
    assert "resident" in (res.stats.get("resident") or "")


POLL = """
@T.prim_func
def poll(F_ptr: T.handle, O_ptr: T.handle):
    F = T.match_buffer(F_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (2,), "int32")
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([32])
    if tx == 0:
        while T.cuda.atomic_add(T.address_of(F[0]), ADD) < BOUND:  # the poll
            T.evaluate(0)
        O[bx] = 1
"""
HANG = POLL.replace("ADD", "0").replace("BOUND", "1")  # both CTAs wait for a flag nobody sets


def test_polls_nobody_answers_are_a_deadlock_finding_not_a_hang():
    """Both CTAs wait for a flag neither sets: on a GPU a hang; here a deadlock finding at the spin's line naming both
    CTAs' polling warps, and the run ends."""
    src = HANG
    o = np.zeros(2, np.int32)
    res = emulate(kernel(src, "poll"), np.zeros(1, np.int32), o)
    assert not res.ok
    (f,) = [f for f in res.findings if f.kind == "deadlock"]
    assert f.line == line_of(src, "# the poll")
    assert "CTA (0, 0, 0) warp 0 polls" in f.message and "CTA (1, 0, 0) warp 0 polls" in f.message, f.message
    assert o.tolist() == [0, 0]


CLUSTER_WAIT = """
@T.prim_func
def cwait(F_ptr: T.handle, O_ptr: T.handle):
    F = T.match_buffer(F_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (4,), "int32")
    T.device_entry()
    for rank in T.thread_binding(2, thread="clusterCtaIdx.x"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                if tx == 0:
                    if bx == 0:
                        while T.cuda.atomic_add(T.address_of(F[0]), 0) < 1:  # the spin
                            T.evaluate(0)
                    if bx == 3:
                        T.evaluate(T.cuda.atomic_add(T.address_of(F[0]), 1))
                    O[bx] = 1
"""


def test_a_wait_on_another_cluster_runs_the_clusters_resident_together():
    """In clusters: CTA 0 (first cluster) waits for CTA 3 (second cluster). Both clusters are resident at once, so
    the wait ends (a cluster launch once said "no other CTA is left", then counted the CTAs still to run)."""
    o = np.zeros(4, np.int32)
    res = emulate(kernel(CLUSTER_WAIT, "cwait"), np.zeros(1, np.int32), o)
    assert res.ok, res.findings
    assert o.tolist() == [1, 1, 1, 1]


TWO_WARPS = """
@T.prim_func
def k(A: T.Buffer((64,), "int32"), B: T.Buffer((4,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    bins = T.alloc_shared((4,), "int32")
    if tx < 4:
        bins[tx] = 0
    T.cuda.cta_sync()
    T.cuda.atomic_add(T.address_of(bins[A[tx] % 4]), 1)
    if tx >= 60:
        B[tx - 60] = bins[tx - 60]
"""


def test_a_read_racing_atomics_of_two_warps_names_a_thread_of_the_other_warp():
    """Both warps add into the bins; thread 60 (warp 1) reads one with no barrier. The report said 'atomic by thread 60
    and read by thread 60 ... (threads of different warps)': the record kept its own warp's last lane."""
    res = emulate(kernel(TWO_WARPS, "k"), np.arange(64, dtype=np.int32), np.zeros(4, np.int32))
    (f,) = res.by_kind("shared_race")
    t_atomic, t_read = (int(x) for x in f.threads)
    assert t_read == 60 and t_atomic // 32 == 0 and "within warp" not in f.message, f.message


CHAIN = """
@T.prim_func
def chain(X_ptr: T.handle, S_ptr: T.handle, F_ptr: T.handle):
    X = T.match_buffer(X_ptr, (8,), "int32")
    S = T.match_buffer(S_ptr, (8,), "int32")
    F = T.match_buffer(F_ptr, (8,), "int32")
    T.device_entry()
    bx = T.cta_id([8])
    tx = T.thread_id([32])
    seen = T.alloc_buffer((1,), "int32", scope="local")
    if tx == 0:
        if bx == FIRST:
            S[bx] = X[bx]
        else:
            T.cuda.wait_until(seen[0], T.address_of(F[PREV]), seen[0] >= 1)  # the wait
            S[bx] = S[PREV] + X[bx]
        T.ptx.red.release.gpu.global_.add.s32(T.address_of(F[bx]), 1)
"""


@pytest.mark.parametrize("window", [8, 3])
def test_a_chain_of_ctas_each_waiting_on_the_one_before_runs_through_any_window(monkeypatch, window):
    """A decoupled look-back's shape: CTA b waits (acquire) for CTA b - 1's flag (release), then adds its value to
    b - 1's sum. Every CTA waits only on earlier ones, so it runs to the end with all eight resident at once and with
    three (each ending CTA makes room for the next, in launch order)."""
    import txlab.emulator.resident as R

    monkeypatch.setattr(R, "WINDOW", window)
    src = CHAIN.replace("FIRST", "0").replace("PREV", "bx - 1")
    x = np.arange(1, 9, dtype=np.int32)
    s, f = np.zeros(8, np.int32), np.zeros(8, np.int32)
    res = emulate(kernel(src, "chain"), x, s, f)
    assert res.ok, res.summary()
    assert s.tolist() == np.cumsum(x).tolist() and f.tolist() == [1] * 8


def test_a_wait_on_a_cta_past_the_window_is_a_deadlock_that_says_so(monkeypatch):
    """The chain reversed (CTA b waits for b + 1; the last CTA starts it): with three CTAs resident the first three
    wait for a CTA that would start only when one of them ends -- a hang on a GPU that holds three -- and the finding
    says the other CTAs are waiting to start; with all eight resident it runs."""
    import txlab.emulator.runner as R

    src = CHAIN.replace("FIRST", "7").replace("PREV", "bx + 1")
    x = np.arange(1, 9, dtype=np.int32)
    for window in (3, 8):  # a GPU that holds three CTAs of this kernel at once, then one that holds all eight
        monkeypatch.setattr(R, "resident_capacity", lambda *a, w=window, **k: w)
        s, f = np.zeros(8, np.int32), np.zeros(8, np.int32)
        res = emulate(kernel(src, "chain"), x, s, f)
        if window == 8:
            assert res.ok, res.summary()
            assert s.tolist() == np.cumsum(x[::-1])[::-1].tolist()
            continue
        (d,) = [f for f in res.findings if f.kind == "deadlock"]
        assert d.line == line_of(src, "# the wait")
        assert "3 CTA(s) resident at once" in d.message and "5 CTA(s) of the launch wait" in d.message, d.message


COUNTING = POLL.replace("ADD", "1").replace("BOUND", "2000000000")  # each round adds one: never still


def test_a_poll_that_keeps_changing_memory_still_times_out():
    """Resident CTAs: each round of a poll whose atomic changes memory counts as progress, so no window ever stalls;
    the loop's own round limit and ``timeout_s`` still end it, as a KernelFault at its line."""
    from txlab.errors import KernelFault

    with pytest.raises(KernelFault, match=r"while loop at line %d" % line_of(COUNTING, "# the poll")):
        emulate(kernel(COUNTING, "poll"), np.zeros(1, np.int32), np.zeros(2, np.int32), timeout_s=2)
