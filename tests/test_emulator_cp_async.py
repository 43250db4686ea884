"""cp.async on the emulator: src-size reads only its bytes (a ragged tail's zero-fill never reads
past the source), and a shared access to bytes a copy is still writing is a race at both lines."""

import numpy as np
from test_emulator import kernel, line_of

from txlab.emulator import emulate

TAIL = """
@T.prim_func
def tail(A: T.Buffer((10,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([4])
    S = T.alloc_shared([16], "float32")
    rem = T.max(T.min(n - tx * 4, 4), 0)
    T.ptx["cp.async.cg.shared.global"](S.ptr_to([tx * 4]), A.ptr_to([T.min(tx * 4, 8)]), 16, T.cast(rem * 4, "uint32"))
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
    T.cuda.cta_sync()
    for j in T.serial(4):
        B[tx * 4 + j] = S[tx * 4 + j]
"""


def test_src_size_reads_only_its_bytes_and_zero_fills_the_rest():
    # thread 2 copies A[8:10] (8 of 16 bytes): the other 8 bytes lie past A's end and are not
    # read; before, they were reported out of bounds and the whole copy came back as zeros
    a = np.arange(10, dtype=np.float32) + 1
    b = np.full(16, -1, np.float32)
    res = emulate(kernel(TAIL, "tail"), a, b, 10)
    assert res.ok, res.summary()
    np.testing.assert_array_equal(b, np.concatenate([a, np.zeros(6, np.float32)]))


EARLY = """
@T.prim_func
def early(A: T.Buffer((2, 128), "float32"), B: T.Buffer((2, 128), "float32"), keep: T.int32):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    S = T.alloc_shared([2, 128], "float32")
    for s in T.serial(2):
        T.ptx["cp.async.cg.shared.global"](S.ptr_to([s, tx * 4]), A.ptr_to([s, tx * 4]), 16)  # the copy
        T.ptx.cp.async_.commit_group()
    if keep == 1:
        T.ptx.cp.async_.wait_group(1)
    else:
        T.ptx.cp.async_.wait_group(0)
    T.cuda.cta_sync()
    for j in T.serial(4):
        B[0, tx * 4 + j] = S[0, (tx * 4 + j + 4) % 128]
        B[1, tx * 4 + j] = S[1, tx * 4 + j]  # the read
"""


def test_reading_a_copy_still_in_flight_is_a_race():
    # wait_group(1) leaves the second stage's copy outstanding: its bytes may land before or after
    # the read (the emulator used to say "no findings" and return the old bytes)
    k = kernel(EARLY, "early")
    a = np.arange(256, dtype=np.float32).reshape(2, 128) + 1
    res = emulate(k, a, np.zeros((2, 128), np.float32), 1)
    hits = res.by_kind("shared_race")
    assert len(hits) == 1, res.summary()
    assert (hits[0].line, hits[0].other_line) == (line_of(EARLY, "# the read"), line_of(EARLY, "# the copy"))
    # the bytes it read were not written yet, but that is this race, not a never-written read too
    assert not res.by_kind("uninitialized_shared_read"), res.summary()
    b = np.zeros((2, 128), np.float32)
    fixed = emulate(k, a, b, 0)
    assert fixed.ok, fixed.summary()
    np.testing.assert_array_equal(b, np.stack([np.roll(a[0], -4), a[1]]))


NEIGHBOURS = """
@T.prim_func
def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.device_entry()
    tx = T.thread_id([32])
    S = T.alloc_shared((128,), "float32")
    T.ptx["cp.async.cg.shared.global"](S.ptr_to([tx * 4]), A.ptr_to([tx * 4]), 16)
    T.ptx.cp.async_.commit_group()
    T.ptx.cp.async_.wait_group(0)
    SYNC
    for j in range(4):
        B[tx * 4 + j] = S[((tx + 1) % 32) * 4 + j]
"""


def test_reading_another_lanes_copy_after_only_ones_own_wait_is_a_race():
    """``cp.async.wait_group`` completes the waiting thread's own copies; another lane of its warp reading them needs a
    ``__syncwarp`` (or a barrier) after the wait. The emulator's lockstep ran it right and said nothing; the copy's
    store now counts as its issuing lane's, at the wait."""
    a = np.arange(128, dtype=np.float32)
    src = NEIGHBOURS.replace("SYNC", "T.evaluate(0)")
    b = np.zeros(128, np.float32)
    res = emulate(kernel(src, "k"), a, b, arch="sm_90a")
    np.testing.assert_array_equal(b, np.roll(a.reshape(32, 4), -1, axis=0).ravel())
    (f,) = res.by_kind("shared_race")
    assert (f.other_line, f.line) == (line_of(src, "cp.async.cg"), line_of(src, "B[tx * 4 + j]"))
    assert "within warp 0" in f.message
    fixed = NEIGHBOURS.replace("SYNC", "T.cuda.warp_sync()")
    assert emulate(kernel(fixed, "k"), a, np.zeros(128, np.float32), arch="sm_90a").ok
