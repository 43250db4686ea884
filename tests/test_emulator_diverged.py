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
            C[0] = C[0] + 1
            T.cuda.thread_fence()
            RELEASE
"""
RELEASE = "T.evaluate(T.cuda.atomic_cas(T.address_of(L[0]), 1, 0))"


def lock_src(ncta=1, nt=32, iters=1, who=None, release=RELEASE):
    return (
        LOCK.replace("NCTA", str(ncta))
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
    and the emulator's are the same, and both free the lock."""
    c = txlab.compile(kernel(lock_src(1, nt, iters, who), "spin"))
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
