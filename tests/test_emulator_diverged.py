"""Independent thread scheduling (txlab.emulator.diverged): lanes of a warp that won a spin lock run their critical
section and release it while the other lanes of their warp spin, as on a GPU since Volta; in lockstep that was a
false deadlock. A lock nobody releases is still a deadlock, and the GPU agrees with the emulator's counts."""

import numpy as np
import pytest
from test_emulator import kernel, line_of

import txlab
from txlab.emulator import emulate

LOCK = """
@T.prim_func
def spin(L_ptr: T.handle, C_ptr: T.handle):
    L = T.match_buffer(L_ptr, (1,), "int32")
    C = T.match_buffer(C_ptr, (1,), "int32")
    T.device_entry()
    bx = T.cta_id([NCTA])
    tx = T.thread_id([NT])
    for it in range(ITERS):
        if tx < WHO:
            while T.cuda.atomic_cas(T.address_of(L[0]), 0, 1) != 0:  # acquire
                T.evaluate(0)
        if tx < WHO:
            T.cuda.thread_fence()  # (on a GPU: nor may the compiler keep C[0] in a register across rounds)
            C[0] = C[0] + 1
            T.cuda.thread_fence()
            RELEASE
"""
RELEASE = "T.evaluate(T.cuda.atomic_cas(T.address_of(L[0]), 1, 0))"


# On a GPU, plain accesses of C under the lock are not enough: TVM declares every argument ``__restrict__``, so the
# compiler may keep C[0] in a register across the fences and the barrier (an H100 counted 58 of 144 in a loop of
# rounds and read back its own store after a barrier). The GPU comparisons use volatile PTX loads and stores, which
# the emulator runs as plain ones.
VOLATILE_RMW = """v = T.alloc_local((1,), "int32")
            T.ptx.ld.volatile.global_.s32(v[0], C.ptr_to([0]))
            T.ptx.st.volatile.global_.s32(C.ptr_to([0]), v[0] + 1)"""


def lock_src(ncta=1, nt=32, iters=1, who=None, release=RELEASE, volatile=False):
    src = LOCK.replace("C[0] = C[0] + 1", VOLATILE_RMW) if volatile else LOCK
    return (
        src.replace("NCTA", str(ncta))
        .replace("NT", str(nt))
        .replace("ITERS", str(iters))
        .replace("WHO", str(nt if who is None else who))
        .replace("RELEASE", release)
    )


@pytest.mark.parametrize(
    ("ncta", "nt", "iters", "who"),
    [(1, 32, 1, None), (1, 64, 1, None), (2, 64, 1, None), (2, 64, 3, 48), (1, 128, 2, 40)],
)
def test_a_spin_lock_within_a_warp_runs_every_lane_once_per_round(ncta, nt, iters, who):
    """Every lane of every warp that takes the lock adds one under it: the count is exact and the lock is free at
    the end; the release sits after the loop's ``if`` (the lanes that won run past it), and in a loop of rounds."""
    lk, c = np.zeros(1, np.int32), np.zeros(1, np.int32)
    res = emulate(kernel(lock_src(ncta, nt, iters, who), "spin"), lk, c, timeout_s=60)
    assert res.ok, res.findings
    assert c[0] == ncta * (nt if who is None else who) * iters and lk[0] == 0


def test_a_lock_nobody_releases_is_still_a_deadlock_at_the_acquire():
    src = lock_src(release="T.evaluate(0)")
    lk, c = np.zeros(1, np.int32), np.zeros(1, np.int32)
    res = emulate(kernel(src, "spin"), lk, c, timeout_s=60)
    (f,) = res.by_kind("deadlock")
    assert f.line == line_of(src, "# acquire")
    assert c[0] == 1  # the winner ran ahead; the other 31 lanes wait for a release that never comes


SHARED_LOCK = """
@T.prim_func
def slock(C_ptr: T.handle):
    C = T.match_buffer(C_ptr, (1,), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    lk = T.alloc_shared((2,), "int32")
    if tx == 0:
        lk[0] = 0
        lk[1] = 0
    T.cuda.cta_sync()
    while T.cuda.atomic_cas(T.address_of(lk[0]), 0, 1) != 0:  # acquire
        T.evaluate(0)
    lk[1] = lk[1] + 1
    T.cuda.thread_fence()
    T.evaluate(T.cuda.atomic_cas(T.address_of(lk[0]), 1, 0))
    T.cuda.cta_sync()
    if tx == 0:
        C[0] = lk[1]
"""


def test_a_spin_on_shared_memory_nobody_answers_is_a_deadlock_not_a_timeout():
    """A poll of a shared-memory lock that no thread releases was counted as progress at every failed compare
    (only global polls were watched), so the run spun until timeout_s; now it is a deadlock finding at once."""
    src = SHARED_LOCK.replace("T.evaluate(T.cuda.atomic_cas(T.address_of(lk[0]), 1, 0))", "T.evaluate(0)")
    res = emulate(kernel(src, "slock"), np.zeros(1, np.int32), timeout_s=60)
    assert any(f.kind == "deadlock" and f.line == line_of(src, "# acquire") for f in res.findings), res.findings


@pytest.mark.gpu
@pytest.mark.parametrize(("nt", "iters", "who"), [(64, 1, None), (64, 3, 48), (128, 2, 40)])
def test_the_gpu_counts_what_the_emulator_counts(nt, iters, who):
    """One CTA (its lanes share an L1, so the plain read-modify-write under the lock is coherent): the GPU's count
    and the emulator's are the same, and both free the lock. (With plain loads and stores of C, fenced or not, an
    H100 lost counts in the rounds of a loop: 68, then 58, of 144; see VOLATILE_RMW.)"""
    c = txlab.compile(kernel(lock_src(1, nt, iters, who, volatile=True), "spin"))
    on_gpu = [np.zeros(1, np.int32), np.zeros(1, np.int32)]
    on_cpu = [np.zeros(1, np.int32), np.zeros(1, np.int32)]
    c(*on_gpu)
    assert emulate(c, *on_cpu).ok
    assert [a.tolist() for a in on_gpu] == [a.tolist() for a in on_cpu] == [[0], [(who or nt) * iters]]


@pytest.mark.parametrize("mode", ["per-CTA lockstep", "per-warp"])
def test_a_fenced_spin_lock_orders_its_critical_sections_for_the_race_checker(mode):
    """The lanes of both warps add one to a shared counter under a shared lock, a fence before each release: 64, and
    no race (the fenced release and the next acquire order them), whether the CTA runs in lockstep or warp by warp
    (a named barrier of 128 threads puts it in warp mode)."""
    src = SHARED_LOCK
    if mode == "per-warp":
        src = src.replace("tx = T.thread_id([64])", "tx = T.thread_id([128])").replace(
            "    T.cuda.cta_sync()\n    while", "    T.cuda.warpgroup_sync(1)\n    while"
        )
    c = np.zeros(1, np.int32)
    res = emulate(kernel(src, "slock"), c, timeout_s=60)
    assert res.stats["mode"] == mode
    assert res.ok and res.findings == [], res.findings
    assert c[0] == (64 if mode == "per-CTA lockstep" else 128)


def test_without_the_fence_the_lock_orders_nothing_and_the_counter_races():
    src = SHARED_LOCK.replace("    T.cuda.thread_fence()\n", "")
    res = emulate(kernel(src, "slock"), np.zeros(1, np.int32), timeout_s=60)
    line = line_of(src, "lk[1] = lk[1] + 1")
    assert any(f.kind == "shared_race" and f.line == line for f in res.findings), res.findings


@pytest.mark.gpu
def test_the_gpu_runs_the_shared_lock_to_the_emulators_count():
    c = txlab.compile(kernel(SHARED_LOCK, "slock"))
    on_gpu, on_cpu = np.zeros(1, np.int32), np.zeros(1, np.int32)
    c(on_gpu)
    assert emulate(c, on_cpu).ok
    assert on_gpu.tolist() == on_cpu.tolist() == [64]


AFTER = """
@T.prim_func
def after(L_ptr: T.handle, C_ptr: T.handle, O_ptr: T.handle):
    L = T.match_buffer(L_ptr, (1,), "int32")
    C = T.match_buffer(C_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (NT,), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([NT])
    mine = T.alloc_local((1,), "int32")
    while T.cuda.atomic_cas(T.address_of(L[0]), 0, 1) != 0:
        T.evaluate(0)
    T.cuda.thread_fence()
    mine[0] = C[0]
    C[0] = C[0] + 1
    T.cuda.thread_fence()
    T.evaluate(T.cuda.atomic_cas(T.address_of(L[0]), 1, 0))
    MEET
    O[tx] = AFTER_VALUE
"""


@pytest.mark.parametrize(
    ("nt", "meet", "value"),
    [
        (32, "T.cuda.cta_sync()", "C[0] * 1000 + mine[0]"),
        (256, "T.cuda.cta_sync()", "C[0] * 1000 + mine[0]"),
        (64, "T.cuda.cta_sync()\n    T.cuda.cta_sync()", "C[0] * 1000 + mine[0]"),
        (32, "T.cuda.warp_sync()", "C[0] * 1000 + mine[0]"),
        (32, "T.evaluate(0)", "T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), mine[0], 1, 32)"),
    ],
)
def test_the_lanes_meet_again_at_the_barrier_after_the_lock(nt, meet, value):
    """After the release, a CTA barrier (or ``__syncwarp``, or a full-mask shuffle) waits for the lanes still
    spinning: every thread then runs the statements after it once, with the count complete and its own value
    from the critical section. (A first version ran those statements again for the parked lanes: C grew as NT**2,
    and 256 threads overflowed Python's stack.)"""
    src = AFTER.replace("NT", str(nt)).replace("MEET", meet).replace("AFTER_VALUE", value)
    lk, c, o = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(nt, -1, np.int32)
    res = emulate(kernel(src, "after"), lk, c, o, timeout_s=120)
    assert res.ok and res.findings == [], res.findings
    assert c[0] == nt and lk[0] == 0
    if "shfl" in value:
        mine = o[np.arange(nt) ^ 1]  # each lane's own turn, read back from its partner
        assert sorted(mine.tolist()) == list(range(nt))
    else:
        assert (o // 1000 == nt).all() and sorted((o % 1000).tolist()) == list(range(nt))


def test_a_lock_taken_with_break_is_a_poll_too():
    """``while True: if atomic_cas(...) == 0: break`` spins like the loop whose test is the compare: the lanes that
    won run ahead (it ran until timeout_s, as a hang)."""
    src = lock_src(nt=64).replace(
        """            while T.cuda.atomic_cas(T.address_of(L[0]), 0, 1) != 0:  # acquire
                T.evaluate(0)""",
        """            while True:
                if T.cuda.atomic_cas(T.address_of(L[0]), 0, 1) == 0:  # acquire
                    break""",
    )
    lk, c = np.zeros(1, np.int32), np.zeros(1, np.int32)
    res = emulate(kernel(src, "spin"), lk, c, timeout_s=60)
    assert res.ok, res.findings
    assert c[0] == 64 and lk[0] == 0


def test_a_consumer_branch_spinning_lets_the_producer_branch_of_its_warp_run():
    """Lanes 1-31 wait for a flag lane 0 sets in the other branch of one ``if``: the branch that spins yields to
    the other one, as a GPU's scheduler lets it (this was a deadlock finding)."""
    src = """
@T.prim_func
def pc(F_ptr: T.handle, O_ptr: T.handle):
    F = T.match_buffer(F_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (32,), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    if tx != 0:
        while T.cuda.atomic_add(T.address_of(F[0]), 0) == 0:
            T.evaluate(0)
        O[tx] = 7
    else:
        T.evaluate(T.cuda.atomic_add(T.address_of(F[0]), 1))
"""
    f, o = np.zeros(1, np.int32), np.zeros(32, np.int32)
    res = emulate(kernel(src, "pc"), f, o, timeout_s=60)
    assert res.ok, res.findings
    assert o.tolist() == [0] + [7] * 31


def test_a_fenced_counter_nobody_waits_on_orders_nothing():
    """Only an atomic in a polling loop acquires: warps that write, fence and bump a counter, then read what another
    warp wrote without waiting for the counter, race (the first version let every atomic of a fenced word order its
    CTA)."""
    src = """
@T.prim_func
def cnt(O_ptr: T.handle):
    O = T.match_buffer(O_ptr, (64,), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    s = T.alloc_shared((129,), "int32")
    if tx == 0:
        s[128] = 0
    T.cuda.cta_sync()
    for i in range(2):
        s[i * 64 + tx] = tx
        T.cuda.thread_fence()
        T.evaluate(T.cuda.atomic_add(T.address_of(s[128]), 1))
    O[tx] = s[64 + (tx + 32) % 64]
"""
    res = emulate(kernel(src, "cnt"), np.zeros(64, np.int32))
    line = line_of(src, "O[tx] = s[64")
    assert any(f.kind == "shared_race" and f.line == line for f in res.findings), res.findings


# The GPU form of AFTER's critical section and of its read after the meeting: volatile, as VOLATILE_RMW says why (an
# H100 read back its own store of C after the barrier: 11010 where 256010 was due).
AFTER_VOLATILE = """    now = T.alloc_local((1,), "int32")
    T.ptx.ld.volatile.global_.s32(mine[0], C.ptr_to([0]))
    T.ptx.st.volatile.global_.s32(C.ptr_to([0]), mine[0] + 1)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("meet", ["T.cuda.cta_sync()", "T.cuda.warp_sync()"])
def test_the_gpu_meets_after_the_lock_as_the_emulator_does(meet):
    nt = 256 if "cta" in meet else 32
    src = (
        AFTER.replace("    mine[0] = C[0]\n    C[0] = C[0] + 1\n", AFTER_VOLATILE)
        .replace("NT", str(nt))
        .replace("MEET", meet + "\n    T.ptx.ld.volatile.global_.s32(now[0], C.ptr_to([0]))")
        .replace("AFTER_VALUE", "now[0] * 1000 + mine[0]")
    )
    assert "ld.volatile" in src
    c = txlab.compile(kernel(src, "after"))
    on_gpu = [np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(nt, np.int32)]
    on_cpu = [np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(nt, np.int32)]
    c(*on_gpu)
    assert emulate(c, *on_cpu).ok
    o = on_gpu[2]  # the order of the turns is the GPU's own; what each lane saw after the barrier is not
    assert on_gpu[1][0] == on_cpu[1][0] == nt and (o // 1000 == nt).all()
    assert sorted((o % 1000).tolist()) == sorted((on_cpu[2] % 1000).tolist()) == list(range(nt))


COLLECTIVE = """
@T.prim_func
def coll(L_ptr: T.handle, C_ptr: T.handle, O_ptr: T.handle):
    L = T.match_buffer(L_ptr, (1,), "int32")
    C = T.match_buffer(C_ptr, (1,), "int32")
    O = T.match_buffer(O_ptr, (NT,), "int32")
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([NT])
    mine = T.alloc_local((1,), "int32")
    scratch = T.alloc_shared((2,), "int32")
    while T.cuda.atomic_cas(T.address_of(L[0]), 0, 1) != 0:
        T.evaluate(0)
    T.cuda.thread_fence()
    mine[0] = C[0] + 1
    C[0] = C[0] + 1
    T.cuda.thread_fence()
    T.evaluate(T.cuda.atomic_cas(T.address_of(L[0]), 1, 0))
    AFTER
"""


@pytest.mark.parametrize(
    ("nt", "after", "want"),
    [
        (
            32,
            'O[tx] = T.Cast("int32", T.cuda.reduce_add_sync_u32(T.uint32(0xFFFFFFFF), T.Cast("uint32", mine[0])))',
            528,
        ),
        (
            32,
            'O[tx] = T.Cast("int32", T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), mine[0] > 0) == T.uint32(0xFFFFFFFF))',
            1,
        ),
        (64, "O[tx] = T.cuda.cta_sum(mine[0], 2, scratch.data)", 2080),
    ],
)
def test_warp_and_cta_collectives_after_the_lock_wait_for_the_parked_lanes(nt, after, want):
    """A full-mask reduction or vote, and a CTA reduction, count every lane's value from the critical section (they
    took the parked lanes' stale values, or only the running lanes', before)."""
    src = COLLECTIVE.replace("NT", str(nt)).replace("AFTER", after)
    lk, c, o = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(nt, np.int32)
    res = emulate(kernel(src, "coll"), lk, c, o, timeout_s=60)
    assert res.ok and res.findings == [], res.findings
    assert o.tolist() == [want] * nt


def test_a_syncwarp_waits_only_for_its_own_warps_lanes():
    """Warp 0's ``__syncwarp`` in ``if tx < 32`` catches up warp 0's parked lanes only: warp 1's lanes never enter
    the branch (they did, once, in lockstep), and all meet at the CTA barrier."""
    src = COLLECTIVE.replace("NT", "64").replace(
        "AFTER", "if tx < 32:\n        T.cuda.warp_sync()\n        O[tx] = O[tx] + 1\n    T.cuda.cta_sync()"
    )
    lk, c, o = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(64, np.int32)
    res = emulate(kernel(src, "coll"), lk, c, o, timeout_s=60)
    assert res.ok and res.findings == [], res.findings
    assert o.tolist() == [1] * 32 + [0] * 32 and c[0] == 64


def test_a_lock_in_global_memory_orders_shared_data():
    """A fence orders every space: shared data under a global lock is not a race."""
    src = (
        COLLECTIVE.replace("NT", "64")
        .replace("    mine[0] = C[0] + 1\n    C[0] = C[0] + 1\n", "    scratch[0] = scratch[0] + 1\n")
        .replace("    while T.cuda", "    if tx == 0:\n        scratch[0] = 0\n    T.cuda.cta_sync()\n    while T.cuda")
    )
    src = src.replace("AFTER", "T.cuda.cta_sync()\n    O[tx] = scratch[0]")
    lk, c, o = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(64, np.int32)
    res = emulate(kernel(src, "coll"), lk, c, o, timeout_s=60)
    assert res.ok and res.findings == [], res.findings
    assert o.tolist() == [64] * 64
