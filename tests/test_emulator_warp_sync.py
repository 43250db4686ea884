"""``__syncwarp`` reached by a warp's lanes in different branches: since Volta the lanes of the member mask meet
there wherever each reaches it, so a value one branch stores before it is there for the other branch after it. The
emulator ran a divergent ``if``'s branches one after the other, so the first branch read the other's stores before
they happened (zeros). These kernels exchange values across branches through shared memory."""

from __future__ import annotations

import numpy as np

from txlab.emulator import emulate

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

SWAP = """
@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "float32")
    lane = tx % 32
    w = tx // 32
    if lane < 16:
        s[tx] = A[bx * 64 + tx] * T.float32(2)
        SYNC_A
        B[bx * 64 + tx] = s[w * 32 + lane + 16]
    else:
        s[tx] = A[bx * 64 + tx] * T.float32(3)
        SYNC_B
        B[bx * 64 + tx] = s[w * 32 + lane - 16]
"""


def _swapped(a):
    out = np.empty_like(a)
    for t in range(a.size):
        lane, base = t % 32, t - t % 32
        out[t] = a[base + lane + 16] * 3 if lane < 16 else a[base + lane - 16] * 2
    return out


def test_lanes_of_both_branches_meet_at_their_syncwarps():
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    src = SWAP.replace("SYNC_A", "T.cuda.warp_sync()").replace("SYNC_B", "T.cuda.warp_sync()")
    res = emulate(kernel(src, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b, _swapped(a))
    assert res.ok, res.summary()
    assert not [n for n in res.notes if "__syncwarp" in n], res.notes
    # without them nothing orders the two halves' accesses: the lane race checker says so at both lines
    bare = SWAP.replace("SYNC_A", "T.evaluate(0)").replace("SYNC_B", "T.evaluate(0)")
    res = emulate(kernel(bare, "k"), a, np.zeros(128, np.float32), arch="sm_90a")
    lines = {f.line for f in res.by_kind("shared_race")}
    assert line_of(bare, "s[w * 32 + lane + 16]") in lines or line_of(bare, "s[w * 32 + lane - 16]") in lines


def test_a_ptx_bar_warp_sync_with_the_full_mask_meets_the_other_branch_too():
    a = np.random.default_rng(1).random(128).astype(np.float32)
    b = np.zeros(128, np.float32)
    sync = "T.ptx.bar.warp.sync(T.uint32(0xFFFFFFFF))"
    src = SWAP.replace("SYNC_A", sync).replace("SYNC_B", "T.cuda.warp_sync()")
    res = emulate(kernel(src, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b, _swapped(a))
    assert res.ok, res.summary()


#: a one-warp kernel's head: A and B of 32 floats, 32 threads, 32 floats of shared memory
HEAD32 = """
@T.prim_func
def k(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    T.device_entry()
    tx = T.thread_id([32])
    s = T.alloc_shared((32,), "float32")
"""

ROTATE = (
    HEAD32
    + """    v = T.alloc_local((1,), "float32")
    v[0] = A[tx]
    for r in range(3):
        if tx < 16:
            if tx < 8:
                s[tx] = v[0] + T.float32(1)
                T.cuda.warp_sync()
                v[0] = s[(tx + 8) % 32]
            else:
                s[tx] = v[0] + T.float32(2)
                T.cuda.warp_sync()
                v[0] = s[(tx + 8) % 32]
        else:
            s[tx] = v[0] + T.float32(3)
            T.cuda.warp_sync()
            v[0] = s[(tx + 8) % 32]
        T.cuda.warp_sync()
    B[tx] = v[0]
"""
)


def test_three_sites_in_nested_branches_meet_round_after_round():
    a = np.arange(32, dtype=np.float32) * 10
    b = np.zeros(32, np.float32)
    res = emulate(kernel(ROTATE, "k"), a, b, arch="sm_90a")
    v = a.copy()
    for _ in range(3):
        s = v + np.where(np.arange(32) < 8, 1, np.where(np.arange(32) < 16, 2, 3)).astype(np.float32)
        v = s[(np.arange(32) + 8) % 32]
    np.testing.assert_array_equal(b, v)
    assert res.ok, res.summary()


ONE_SIDED = (
    HEAD32
    + """    if tx < 16:
        s[tx] = A[tx]
        T.cuda.warp_sync()
        B[tx] = s[tx + 16]
    else:
        s[tx] = A[tx] * T.float32(2)
    T.cuda.warp_sync()
    if tx >= 16:
        B[tx] = s[tx - 16]
"""
)


def test_lanes_waiting_for_lanes_that_reach_no_syncwarp_in_their_branch_go_on_with_a_note():
    """The lanes 16-31 leave the ``if`` and meet lanes 0-15 at the ``__syncwarp`` after it on a GPU; the emulator
    cannot run them past the ``if`` while lanes 0-15 wait inside it, so it lets lanes 0-15 go on once the other
    branch is done (its stores are there) and says so."""
    a = np.arange(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    res = emulate(kernel(ONE_SIDED, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b[:16], a[16:] * 2)
    np.testing.assert_array_equal(b[16:], a[:16])
    note = next(n for n in res.notes if "__syncwarp" in n)
    line = line_of(ONE_SIDED, "T.cuda.warp_sync()")
    assert f"line {line}" in note and "lanes 0-15 of warp 0" in note and "lanes 16-31" in note, note


PARTIAL = (
    HEAD32
    + """    if tx < 16:
        s[tx] = A[tx]
        T.ptx.bar.warp.sync(T.uint32(0xFFFF))
        B[tx] = s[tx ^ 1]
    else:
        B[tx] = A[tx]
"""
)


def test_a_member_mask_of_the_branch_lanes_waits_for_nobody_else():
    a = np.arange(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    res = emulate(kernel(PARTIAL, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b[:16], a[:16][np.arange(16) ^ 1])
    np.testing.assert_array_equal(b[16:], a[16:])
    assert res.ok and not [n for n in res.notes if "__syncwarp" in n], (res.summary(), res.notes)


PARTIAL_ORDER = (
    HEAD32
    + """
    if tx < 16:
        s[tx] = A[tx]
        T.ptx.bar.warp.sync(T.uint32(0xFFFF))
    LATER
    if tx >= 16:
        B[tx] = s[tx - 16]
"""
)


def test_a_syncwarp_of_part_of_the_warp_orders_only_its_member_lanes():
    """Lanes 0-15 store and sync among themselves (mask 0xFFFF); lanes 16-31 then read their stores with nothing
    between them and those lanes: a race on a GPU (the emulator counted any __syncwarp as the whole warp's). A full
    __syncwarp after it orders them."""
    a = np.arange(32, dtype=np.float32)
    src = PARTIAL_ORDER.replace("LATER", "T.evaluate(0)")
    res = emulate(kernel(src, "k"), a, np.zeros(32, np.float32), arch="sm_90a")
    (f,) = res.by_kind("shared_race")
    assert (f.other_line, f.line) == (line_of(src, "s[tx] = A[tx]"), line_of(src, "B[tx] = s[tx - 16]"))
    assert "within warp 0" in f.message and f.threads[0] < 16 <= f.threads[1], (f.threads, f.message)
    fixed = PARTIAL_ORDER.replace("LATER", "T.cuda.warp_sync()")
    assert emulate(kernel(fixed, "k"), a, np.zeros(32, np.float32), arch="sm_90a").ok


ROUNDS = (
    HEAD32
    + """
    v = T.alloc_local((1,), "float32")
    if tx < 16:
        s[tx] = A[tx]
        T.cuda.warp_sync()
        v[0] = s[tx + 16]
        T.cuda.warp_sync()
        s[tx] = v[0] + T.float32(100)
        T.cuda.warp_sync()
        B[tx] = s[tx + 16]
    else:
        s[tx] = A[tx] * T.float32(2)
        T.ptx.bar.warp.sync(T.uint32(0xFFFF0000))
        T.cuda.warp_sync()
        v[0] = s[tx - 16]
        T.cuda.warp_sync()
        s[tx] = v[0] + T.float32(200)
        T.cuda.warp_sync()
        B[tx] = s[tx - 16]
"""
)


def test_branches_meet_round_after_round_and_a_half_warp_sync_between_meets_only_its_lanes():
    """Three full-warp meetings in each branch (the second branch also syncs its own half between): every round reads
    what the other half stored before it. The emulator sent the second meeting out as unmet (the first branch still
    counted as waiting), reporting races and reading stale values; and it let the half-warp sync complete the other
    branch's full-warp meeting."""
    a = np.arange(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    res = emulate(kernel(ROUNDS, "k"), a, b, arch="sm_90a")
    t = np.arange(32)
    np.testing.assert_array_equal(b, np.where(t < 16, a + 200, 2 * a + 100))
    assert res.ok and not [n for n in res.notes if "__syncwarp" in n], (res.summary(), res.notes)


NARROWED = (
    HEAD32
    + """
    if tx < 16:
        if tx < 8:
            s[tx] = A[tx]
            T.ptx.bar.warp.sync(T.uint32(0xFFFF00FF))
            B[tx] = s[tx + 16]
    else:
        s[tx] = A[tx] * T.float32(2)
        T.ptx.bar.warp.sync(T.uint32(0xFFFF00FF))
        B[tx] = A[tx]
"""
)


def test_a_branch_resumes_with_the_lanes_it_stopped_with():
    """Lanes 0-7 (a one-sided if inside the first branch) wait for lanes 16-31; when the branch resumes, lanes 8-15
    must stay out of it (they wrote B[8:16] once its mask was the branch's whole)."""
    a = np.arange(32, dtype=np.float32)
    b = np.full(32, -1, np.float32)
    res = emulate(kernel(NARROWED, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b[:8], 2 * a[16:24])
    np.testing.assert_array_equal(b[8:16], -1)
    np.testing.assert_array_equal(b[16:], a[16:])
    assert res.ok, res.summary()


HANDOFF = """
@T.prim_func
def k(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.device_entry()
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "float32")
    bar = T.shared_scalar("uint64")
    lane = tx % 32
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
    if tx >= 32:
        if tx == 32:
            s[0] = A[0] + T.float32(1000)
            T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar))
    else:
        if lane < 16:
            if lane == 0:
                T.cuda.mbarrier_wait(T.address_of(bar), 0)
                B[tx] = s[0]
        else:
            B[tx] = T.float32(-5)
"""


def test_a_branch_blocked_on_an_mbarrier_resumes_with_its_own_lanes():
    """No __syncwarp at all: lane 0 of warp 0 blocks on an mbarrier inside a nested one-sided if; the warp's other
    branch runs meanwhile, and lane 0 alone resumes (lanes 1-15 wrote s[0] into B once)."""
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    res = emulate(kernel(HANDOFF, "k"), a, b, arch="sm_90a")
    want = np.zeros(64, np.float32)
    want[0], want[16:32] = 1000, -5
    np.testing.assert_array_equal(b, want)
    assert res.ok, res.summary()


CHAIN = (
    HEAD32
    + """
    if tx == 0:
        s[0] = A[0]
    if tx < 2:
        T.ptx.bar.warp.sync(T.uint32(0x3))
    if tx >= 1 and tx < 3:
        T.ptx.bar.warp.sync(T.uint32(0x6))
    if tx == 2:
        B[0] = s[0]
"""
)


def test_partial_syncs_order_through_a_chain_of_lanes():
    """Lane 0 syncs with lane 1 (mask 0x3), lane 1 then with lane 2 (0x6): happens-before is transitive, so lane 2's
    read of lane 0's store is ordered."""
    a = np.arange(32, dtype=np.float32) + 5
    b = np.zeros(32, np.float32)
    res = emulate(kernel(CHAIN, "k"), a, b, arch="sm_90a")
    assert b[0] == 5 and res.ok, res.summary()
    broken = CHAIN.replace("T.ptx.bar.warp.sync(T.uint32(0x3))", "T.evaluate(0)")
    res = emulate(kernel(broken, "k"), a, np.zeros(32, np.float32), arch="sm_90a")
    assert res.by_kind("shared_race"), res.summary()


def test_lanes_let_go_are_ordered_with_the_lanes_they_waited_for():
    """ONE_SIDED on an H100: lanes 0-15 meet lanes 16-31 at the __syncwarp after the if, so their read of s[tx + 16]
    is ordered after lanes 16-31's stores (racecheck clean). The emulator, which lets them go once the other branch
    is done, must not report a race there."""
    res = emulate(kernel(ONE_SIDED, "k"), np.arange(32, dtype=np.float32), np.zeros(32, np.float32), arch="sm_90a")
    assert not res.by_kind("shared_race"), res.summary()


WARPS_1_TO_4 = """
@T.prim_func
def k(Out: T.Buffer((160,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([160])
    sm = T.alloc_shared([160], "float32")
    if tid >= 32:
        sm[tid] = T.float32(tid)
        T.cuda.warpgroup_sync(1)
        Out[tid] = sm[(tid - 32 + 1) % 128 + 32]
    else:
        Out[tid] = T.float32(-1)
"""


def test_warpgroup_sync_is_a_named_barrier_of_any_128_threads():
    """``T.cuda.warpgroup_sync(id)`` is ``bar.sync id, 128`` (checked in the CUDA): it completes once any 128 threads
    arrived, an aligned warpgroup or not. Warps 1-4 (threads 32-159) meeting at it and reading each other's
    shared writes is right on a GPU; the emulator once kept one barrier per aligned warpgroup and reported a
    divergent barrier and a race."""
    import txlab

    k = kernel(WARPS_1_TO_4, "k")
    assert "bar.sync %0, 128" in txlab.compile(k, arch="sm_90a").cuda_source
    out = np.zeros(160, np.float32)
    res = txlab.emulate(k, out, arch="sm_90a")
    assert res.ok, res.summary()
    t = np.arange(32, 160)
    assert (out[:32] == -1).all() and np.array_equal(out[32:], ((t - 32 + 1) % 128 + 32).astype(np.float32))
