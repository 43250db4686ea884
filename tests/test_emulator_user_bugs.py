"""Bugs of everyday kernels the emulator reports at their line, found by trying kernels nobody tuned it for: a
read past the end of one static shared buffer into the next, a barrier inside a loop whose trip count differs per
thread, a shared race named for its buffer, and warp and CTA reductions called by part of a warp."""

from __future__ import annotations

import numpy as np
import pytest

from txlab.emulator import emulate

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

NEIGHBOUR = """
@T.prim_func
def k(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([256])
    xs = T.alloc_shared((256,), "float32")
    ws = T.alloc_shared((256,), "float32")
    ws[tx] = T.float32(0.5)
    xs[tx] = A[bx * 256 + tx]
    T.cuda.cta_sync()
    B[bx * 256 + tx] = (xs[tx] + xs[tx + 1]) * ws[tx]
"""


def test_a_read_past_one_shared_buffer_into_the_next_is_out_of_bounds():
    """``xs[tx + 1]`` reads ``xs[256]``: inside the CTA's shared memory (it is ``ws[0]``), so only a per-buffer
    bound sees it; the GPU reads ws's bytes silently."""
    res = emulate(kernel(NEIGHBOUR, "k"), np.ones(512, np.float32), np.zeros(512, np.float32), arch="sm_90a")
    (f,) = res.by_kind("out_of_bounds")
    assert f.line == line_of(NEIGHBOUR, "xs[tx + 1]") and f.buffer == "xs"
    assert "element 256 of shared buffer xs" in f.message and "into buffer ws" in f.message
    assert list(f.threads) == [255]
    # the same kernel reading xs[tx] only is clean
    ok = NEIGHBOUR.replace("xs[tx + 1]", "xs[255 - tx]")
    assert emulate(kernel(ok, "k"), np.ones(512, np.float32), np.zeros(512, np.float32), arch="sm_90a").ok


LOOP_BARRIER = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "float32")
    sm[tx] = A[tx]
    for k in T.serial(tx // 64 + 1):
        T.cuda.cta_sync()
        sm[tx] = sm[tx] + T.float32(1.0)
    B[tx] = sm[tx]
"""


def test_a_barrier_in_a_loop_with_per_thread_trip_counts_is_a_divergent_barrier():
    """Threads 0-63 run the loop once, 192-255 four times: the second round's barrier is reached by 192 of 256
    threads (it was a NotEmulatedError with no line)."""
    b = np.zeros(256, np.float32)
    res = emulate(kernel(LOOP_BARRIER, "k"), np.zeros(256, np.float32), b, arch="sm_90a")
    (f,) = res.by_kind("divergent_barrier")
    assert f.line == line_of(LOOP_BARRIER, "cta_sync")
    assert "reached by 192 of 256 threads" in f.message and "threads 0-63" in f.message
    assert np.array_equal(b, (np.arange(256) // 64 + 1).astype(np.float32))  # each thread's own trip count


RACE = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), B: T.Buffer((1,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    pad = T.alloc_shared((8,), "float32")
    sm = T.alloc_shared((256,), "float32")
    if tx < 8:
        pad[tx] = T.float32(0)
    sm[tx] = A[tx]
    T.cuda.cta_sync()
    if tx < 64:
        sm[tx] = sm[tx] + sm[tx + 64]
    if tx < 32:
        sm[tx] = sm[tx] + sm[tx + 32]
    if tx == 0:
        B[0] = sm[0]
"""


def test_a_shared_race_names_its_buffer_and_the_fix():
    """The second round reads ``sm[32..63]`` that warp 1 wrote in the first with no barrier between."""
    res = emulate(kernel(RACE, "k"), np.ones(256, np.float32), np.zeros(1, np.float32), arch="sm_90a")
    races = res.by_kind("shared_race")
    assert races, res.summary()
    assert all(f.buffer == "sm" for f in races), [(f.buffer, f.message) for f in races]
    assert " of sm (shared byte " in races[0].message and "cta_sync()" in races[0].message


PARTIAL_WARP = """
@T.prim_func
def k(X: T.Buffer((48,), "float32"), Y: T.Buffer((48,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([48])
    Y[tx] = T.cuda.warp_max(X[tx])
"""

DIVERGENT = """
@T.prim_func
def k(X: T.Buffer((32,), "float32"), Y: T.Buffer((32,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    if tx < 16:
        Y[tx] = T.cuda.warp_sum(X[tx])
"""


def test_a_warp_reduction_run_by_part_of_a_warp_is_reported():
    """TVM's warp_reduce is ``__shfl_xor_sync(0xFFFFFFFF, ...)`` steps: a partial last warp's lanes, or lanes under
    a per-lane condition, read lanes that never ran it (undefined values), as a written shuffle's would."""
    for src, n, what in ((PARTIAL_WARP, 48, "warp_reduce (max)"), (DIVERGENT, 32, "warp_reduce (sum)")):
        res = emulate(kernel(src, "k"), -np.ones(n, np.float32), np.zeros(n, np.float32), arch="sm_90a")
        (f,) = res.by_kind("divergent_barrier")
        assert f.line == line_of(src, "T.cuda.warp_") and what in f.message, f.message
        assert "lanes 0-15" in f.message
    # a whole warp, no condition: clean
    whole = PARTIAL_WARP.replace("48", "64")
    assert emulate(kernel(whole, "k"), -np.ones(64, np.float32), np.zeros(64, np.float32), arch="sm_90a").ok


SCAN = """
@T.prim_func
def k(X: T.Buffer((256,), "int32"), Y: T.Buffer((256,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "int32")
    t = T.alloc_local((1,), "int32")
    sm[tx] = X[tx]
    T.cuda.cta_sync()
    for k in T.unroll(8):
        t[0] = 0
        if tx >= (1 << k):
            t[0] = sm[tx - (1 << k)]
        sm[tx] = sm[tx] + t[0]
        T.cuda.cta_sync()
    Y[tx] = sm[tx]
"""


def test_a_scan_missing_its_middle_barrier_names_the_other_warps_read():
    """Thread 31 writes ``sm[31]`` (line of the add) that thread 32 of the next warp read a line before, with no
    barrier between. Several warps read that byte in the round; the report names a reader of another warp than the
    writer's, not the writer itself (it said "read by thread 31 and write by thread 31 ... of different warps")."""
    x = np.arange(256, dtype=np.int32)
    res = emulate(kernel(SCAN, "k"), x, np.zeros(256, np.int32), arch="sm_90a")
    races = res.by_kind("shared_race")
    assert races, res.summary()
    f = races[0]
    read, write = line_of(SCAN, "t[0] = sm[tx - (1 << k)]"), line_of(SCAN, "sm[tx] = sm[tx] + t[0]")
    assert (f.other_line, f.line) == (read, write), f.message
    t_read, t_write = (int(x) for x in f.threads)
    assert t_read // 32 != t_write // 32, f.message


def test_two_warps_writing_one_shared_byte_in_one_instruction_name_both_threads():
    """``pad[tx % 8] = 0`` by 256 threads: the race names the thread whose value landed (the last lane), not -1."""
    src = """
@T.prim_func
def k(B: T.Buffer((1,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    pad = T.alloc_shared((8,), "float32")
    pad[tx % 8] = T.float32(0)
    T.cuda.cta_sync()
    if tx == 0:
        B[0] = pad[0]
"""
    res = emulate(kernel(src, "k"), np.zeros(1, np.float32), arch="sm_90a")
    (f,) = res.by_kind("shared_race")
    assert "thread -1" not in f.message and all(int(t) >= 0 for t in f.threads), f.message
    assert f.buffer == "pad"


def test_a_kernel_no_gpu_can_launch_is_refused_as_the_gpu_would():
    """2048 threads and 273 KiB of shared memory per CTA: a GPU refuses the launch (txlab.launch.check_launch
    before a GPU run), and the emulator used to run it and say OK."""
    import pytest

    from txlab.errors import KernelFault

    src = """
@T.prim_func
def k(A: T.Buffer((2048,), "float32")):
    T.device_entry()
    tx = T.thread_id([2048])
    S = T.alloc_shared((70000,), "float32")
    S[tx] = T.float32(1.0)
    A[tx] = S[tx]
"""
    with pytest.raises(KernelFault) as info:
        emulate(kernel(src, "k"), np.zeros(2048, np.float32), arch="sm_90a")
    err = info.value
    assert err.kind == "launch_config"
    assert "2048 threads per block" in str(err) and "280000 bytes of shared memory" in str(err)
    ok = src.replace("2048", "1024").replace("70000", "1024")
    assert emulate(kernel(ok, "k"), np.zeros(1024, np.float32), arch="sm_90a").ok


TAIL = """
@T.prim_func
def k(A: T.Buffer((256,), "float32"), B: T.Buffer((1,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    sm = T.alloc_shared((64,), "float32")
    sm[tx] = A[tx] + A[tx + 64] + A[tx + 128] + A[tx + 192]
    T.cuda.cta_sync()
    if tx < 32:
        sm[tx] = sm[tx] + sm[tx + 32]
        SYNC
        if tx < 16:
            sm[tx] = sm[tx] + sm[tx + 16]
        SYNC
        if tx < 8:
            sm[tx] = sm[tx] + sm[tx + 8]
        SYNC
        if tx == 0:
            B[0] = sm[0] + sm[1] + sm[2] + sm[3] + sm[4] + sm[5] + sm[6] + sm[7]
"""


def test_a_warp_synchronous_tail_without_syncwarp_is_a_race_within_the_warp():
    """The classic reduction tail: lanes 0-15 read what lanes 16-31 of the same warp wrote a line before, with no
    __syncwarp between. The emulator runs the warp in lockstep (the sum is right here), but since Volta nothing
    orders the lanes; racecheck reports it on the GPU. With Tx.cuda.warp_sync() between the rounds it is clean."""
    a = np.random.default_rng(0).random(256).astype(np.float32)
    b = np.zeros(1, np.float32)
    res = emulate(kernel(TAIL.replace("SYNC", "T.evaluate(0)"), "k"), a, b, arch="sm_90a")
    races = res.by_kind("shared_race")
    first = races[0]
    src = TAIL.replace("SYNC", "T.evaluate(0)")
    assert (first.other_line, first.line) == (
        line_of(src, "sm[tx] = sm[tx] + sm[tx + 32]"),
        line_of(src, "sm[tx] = sm[tx] + sm[tx + 16]"),
    ), first.message
    assert "within warp 0" in first.message and "Tx.cuda.warp_sync()" in first.message
    t_write, t_read = (int(x) for x in first.threads)
    assert t_write // 32 == t_read // 32 == 0 and t_write != t_read
    assert {f.line for f in races} == {line_of(src, "sm[tx + 16]"), line_of(src, "sm[tx + 8]"), line_of(src, "B[0]")}
    np.testing.assert_allclose(b[0], a.sum(), rtol=1e-5)
    fixed = TAIL.replace("SYNC", "T.cuda.warp_sync()")
    assert emulate(kernel(fixed, "k"), a, np.zeros(1, np.float32), arch="sm_90a").ok
    # a shuffle between the rounds orders nothing: racecheck reported this variant on an H100 too (docs/gpu-runs.md)
    shfl = TAIL.replace("SYNC", "T.evaluate(T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), tx, 0, 32))")
    res = emulate(kernel(shfl, "k"), a, np.zeros(1, np.float32), arch="sm_90a")
    assert {f.line for f in res.by_kind("shared_race")} == {f.line for f in races}, res.summary()


RELAX = """
@T.prim_func
def k(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    u = T.alloc_shared((256,), "float32")
    avg = T.alloc_local((1,), "float32")
    u[tx] = X[tx]
    T.cuda.cta_sync()
    for s in T.serial(3):
        avg[0] = (u[T.max(tx - 1, 0)] + u[T.min(tx + 1, 255)]) * T.float32(0.5)
        T.cuda.cta_sync()
        u[tx] = u[tx] * T.float32(0.5) + avg[0] * T.float32(0.5)
        T.cuda.cta_sync()
    Y[tx] = u[tx]
"""


def test_a_relaxation_reading_neighbours_then_its_own_element_after_a_barrier_is_clean():
    """Round s reads u[tx +- 1] (two warps read the bytes at warp edges), a barrier, then each thread reads and
    writes its own u[tx]: the earlier round's "several warps read it" must not carry past the barrier (it reported
    a race "with no barrier between them")."""
    x = np.random.default_rng(1).random(256).astype(np.float32)
    res = emulate(kernel(RELAX, "k"), x, np.zeros(256, np.float32), arch="sm_90a")
    assert res.ok, res.summary()


BROADCAST = """
@T.prim_func
def k(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([128])
    sm = T.alloc_shared((128,), "float32")
    sm[tx] = X[tx]
    T.cuda.cta_sync()
    Y[tx] = sm[127]
    T.cuda.warp_sync()
    if tx == 127:
        sm[127] = T.float32(0)
"""


def test_a_write_after_every_warp_read_the_byte_races_with_the_other_warps():
    """All four warps read sm[127] in one instruction, then thread 127 overwrites it with only a __syncwarp
    between: warps 0-2 race with the write (the record kept only the last lane's warp, 3, and missed them)."""
    res = emulate(kernel(BROADCAST, "k"), np.ones(128, np.float32), np.zeros(128, np.float32), arch="sm_90a")
    (f,) = res.by_kind("shared_race")
    assert f.line == line_of(BROADCAST, "sm[127] = T.float32(0)") and f.other_line == line_of(BROADCAST, "Y[tx]")
    t_read, t_write = (int(x) for x in f.threads)
    assert t_write == 127 and t_read // 32 != 3 and "cta_sync" in f.message, f.message


_LANES = """
@T.prim_func
def k(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    sm = T.alloc_shared((4,), "float32")
    flag = T.alloc_shared((1,), "uint32")
    f = T.alloc_local((1,), "uint32")
    if tx == 0:
        flag[0] = T.uint32(0)
    sm[1] = T.float32(0)
    T.cuda.warp_sync()
    BODY
"""

LANE_CASES = {
    # every lane stores 0, then lane 0 stores again with no __syncwarp: another lane's 0 may land last
    "uniform_then_one": ("sm[0] = T.float32(0)\n    if tx == 0:\n        sm[0] = A[0]\n    B[tx] = sm[0]", "race"),
    # leader election: each candidate stores its id; a lane reads the winner, another lane's store
    "leader": ("if A[tx] > T.float32(0):\n        sm[2] = T.Cast('float32', tx)\n    B[tx] = sm[2]", "race"),
    # lanes 0-15 store one word; lane 20, not among them, reads it
    "partial_uniform": ("if tx < 16:\n        sm[3] = A[0]\n    if tx == 20:\n        B[0] = sm[3]", "race"),
    # lanes add atomically into a bin, then lane 0 reads it: the other lanes' increments race with the read
    "atomics_then_read": (
        "T.cuda.atomic_add(T.address_of(sm[1]), T.float32(1))\n    if tx == 0:\n        B[0] = sm[1]",
        "race",
    ),
    # a release/acquire flag between lanes orders the data (and the flag's strong accesses are no data race)
    "release_acquire": (
        "if tx == 0:\n        sm[0] = A[0]\n        T.ptx.st.release.cta.shared.u32(flag.ptr_to([0]), T.uint32(1))\n"
        "    if tx == 1:\n        f[0] = T.uint32(0)\n        while f[0] == T.uint32(0):\n"
        "            T.ptx.ld.acquire.cta.shared.u32(f[0], flag.ptr_to([0]))\n        B[0] = sm[0]",
        "clean",
    ),
}


@pytest.mark.parametrize("case", sorted(LANE_CASES))
def test_lanes_of_one_warp_race_unless_something_orders_them(case):
    """Cases a fresh-eyes pass found: stores of several lanes to one word were all exempt ("a uniform store"),
    atomics were not recorded, an acquire load ordered nothing between lanes."""
    body, want = LANE_CASES[case]
    src = _LANES.replace("BODY", body)
    res = emulate(kernel(src, "k"), np.ones(32, np.float32), np.zeros(32, np.float32), arch="sm_90a")
    lane = [f for f in res.by_kind("shared_race") if "within warp" in f.message]
    assert bool(lane) == (want == "race"), res.summary()


ELECT = """
@T.prim_func
def k(B: T.Buffer((32,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    B[tx] = T.uint32(7)
    if T.cuda.elect_sync():
        B[tx] = T.uint32(1)
"""


def test_an_elected_lane_is_one_lane():
    """``if T.cuda.elect_sync():`` ran its body on lanes 0 and 1: the uint32 condition was used as an index array
    (values [1, 0, ...] pick lanes 1 and 0) instead of a mask."""
    b = np.zeros(32, np.uint32)
    assert emulate(kernel(ELECT, "k"), b, arch="sm_90a").ok
    assert b.tolist() == [1] + [7] * 31
