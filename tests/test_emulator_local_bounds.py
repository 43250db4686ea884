"""Bounds of thread-local (register) arrays and of atomics. A local array's index is checked for the lanes that
run the access only (a guarded index of an inactive lane is never evaluated against the array); an active lane's
index outside the array is an ``out_of_bounds`` finding at the user's line naming the buffer and the element, as
for shared and global buffers (its load reads 0, its store writes nothing, and ``stop=True`` stops there). An
atomic on ``address_of(buf[i])`` is checked against ``buf`` as a plain access to ``buf[i]`` is."""

import numpy as np
import pytest
from test_emulator import kernel, line_of

from txlab.emulator import emulate
from txlab.errors import EmulationFault

GUARDED = """
@T.prim_func
def guarded(A: T.Buffer((64,), "float32"), I: T.Buffer((64,), "int32"), B: T.Buffer((64,), "float32"),
            C: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    v = T.alloc_local((8,), "float32")
    for k in T.unroll(8):
        v[k] = A[tx] + T.float32(k)
    B[tx] = T.float32(0)
    if tx < 8:
        B[tx] = v[tx]
    j = I[tx]
    if j >= 0 and j < 8:
        C[tx] = v[j]
    else:
        C[tx] = T.float32(-1)
"""


def test_a_guarded_per_lane_index_of_a_local_array_is_not_checked_for_inactive_lanes():
    """``if tx < 8: B[tx] = v[tx]`` with ``v`` of 8 elements and 64 threads: lanes 8.. never read ``v`` (it
    crashed with numpy's IndexError: the load indexed every lane's row, the inactive ones' too); likewise an
    index read from memory, guarded by ``0 <= j < 8``."""
    a = np.arange(64, dtype=np.float32)
    idx = np.random.default_rng(0).integers(-3, 12, 64).astype(np.int32)
    b = np.full(64, np.nan, np.float32)
    c = np.full(64, np.nan, np.float32)
    res = emulate(kernel(GUARDED, "guarded"), a, idx, b, c)
    assert res.ok, res.findings
    assert np.array_equal(b, np.where(np.arange(64) < 8, 2 * a, 0).astype(np.float32))
    inside = (idx >= 0) & (idx < 8)
    assert np.array_equal(c, np.where(inside, a + np.clip(idx, 0, 7), -1).astype(np.float32))


LOCAL_OOB = """
@T.prim_func
def loc(A: T.Buffer((32, 4), "float32"), B: T.Buffer((32, 4), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    v = T.alloc_local((4,), "float32")
    for k in T.serial(4):
        v[k] = A[tx, k]
    for k in T.serial(4):
        B[tx, k] = ACCESS
"""


@pytest.mark.parametrize(
    "access, elem, threads",
    [
        ("v[k] + v[4]", 4, list(range(8))),  # a constant index past the end: every lane
        ("v[tx % 5]", 4, [4, 9, 14, 19, 24, 29]),  # a per-lane index: the lanes with tx % 5 == 4
        ("v[k - 1]", -1, list(range(8))),  # before the start (numpy wrapped it to v[3], unreported)
    ],
)
def test_a_local_array_read_outside_it_is_an_out_of_bounds_finding_at_its_line(access, elem, threads):
    src = LOCAL_OOB.replace("ACCESS", access)
    a = np.arange(128, dtype=np.float32).reshape(32, 4) + 1
    b = np.full((32, 4), np.nan, np.float32)
    res = emulate(kernel(src, "loc"), a, b)
    (f,) = [x for x in res.findings if x.kind != "note"]
    assert f.kind == "out_of_bounds" and not res.ok
    assert f.line == line_of(src, "B[tx, k] =")
    assert f.buffer == "v" and f.index[0] == elem and f.threads == threads and f.cta == (0, 0, 0)
    assert "read of v" in f.message and "local buffer v" in f.message and "4 float32" in f.message
    assert ("before its start" if elem < 0 else "past its end") in f.message
    # the run carried on, and the lanes' read outside v gave 0
    if access == "v[k - 1]":
        assert np.array_equal(b[:, 0], np.zeros(32, np.float32)) and np.array_equal(b[:, 1:], a[:, :3])
    if access == "v[tx % 5]":
        t = np.arange(32)
        ref = np.where(t % 5 == 4, 0, a[t, np.minimum(t % 5, 3)]).astype(np.float32)
        assert np.array_equal(b, np.repeat(ref[:, None], 4, axis=1))
    with pytest.raises(EmulationFault) as ei:
        emulate(kernel(src, "loc"), a, b.copy(), stop=True)
    assert ei.value.finding.kind == "out_of_bounds" and ei.value.finding.buffer == "v"


LOCAL_STORE = """
@T.prim_func
def loc_store(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    v = T.alloc_local((4,), "float32")
    w = T.alloc_local((4,), "float32")
    for k in T.serial(4):
        w[k] = T.float32(7)
    for k in T.serial(5):
        v[k] = A[tx] + T.float32(k)
    if tx < 4:
        w[tx + 2] = T.float32(1)
    B[tx] = v[0] + v[3] + w[0] + w[1] + w[2] + w[3]
"""


def test_a_local_array_store_outside_it_is_reported_for_its_active_lanes_and_writes_nothing():
    """``for k in range(5): v[k] = ...`` into 4 elements; ``if tx < 4: w[tx + 2] = ...``: lanes 2 and 3 store
    past ``w``'s end (the 28 lanes the branch masks out are no finding, whatever their index)."""
    a = np.arange(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    res = emulate(kernel(LOCAL_STORE, "loc_store"), a, b)
    oob = res.by_kind("out_of_bounds")
    assert len(oob) == 2, res.findings
    fv = next(f for f in oob if f.buffer == "v")
    fw = next(f for f in oob if f.buffer == "w")
    assert fv.line == line_of(LOCAL_STORE, "v[k] = A[tx]") and fv.index[0] == 4 and fv.count == 32
    assert "write of v" in fv.message and "local buffer v" in fv.message
    assert fw.line == line_of(LOCAL_STORE, "w[tx + 2] =") and fw.threads == [2, 3] and fw.index == [4, 5]
    assert fw.count == 2
    t = np.arange(32)
    w = np.full((32, 4), 7, np.float32)
    w[t < 4, :] = np.where(np.arange(4)[None, :] == (t[t < 4, None] + 2), 1, 7)
    assert np.array_equal(b, (2 * a + 3 + w.sum(axis=1)).astype(np.float32))  # nothing landed outside v and w


HIST = """
@T.prim_func
def hist(X: T.Buffer((512,), "float32"), H: T.Buffer((16,), "int32"), C: T.Buffer((1,), "int32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([256])
    bins = T.alloc_shared((16,), "int32")
    cnt = T.alloc_shared((16,), "int32")
    if tx < 16:
        bins[tx] = 0
        cnt[tx] = 0
    T.cuda.cta_sync()
    b = T.Cast("int32", X[bx * 256 + tx] * T.float32(16))
    T.cuda.atomic_add(T.address_of(bins[b]), 1)
    T.cuda.cta_sync()
    if tx < 16:
        T.cuda.atomic_add(T.address_of(H[tx]), bins[tx])
        T.cuda.atomic_add(T.address_of(C[0]), cnt[tx])
    T.cuda.atomic_add(T.address_of(H[b]), 0)
"""


def test_an_atomic_past_its_shared_buffer_is_an_out_of_bounds_finding_naming_the_buffer():
    """Bin 16 of a 16-bin shared histogram lands in the next shared array, ``cnt`` (as it does on a GPU); it was
    no finding. The global atomic on ``H[16]`` was reported as "outside every buffer" with no buffer or index."""
    x = np.random.default_rng(56).random(512).astype(np.float32) * np.float32(0.99)
    x[5] = 1.0  # bin 16, by thread 5 of CTA 0
    h = np.zeros(16, np.int32)
    c = np.zeros(1, np.int32)
    res = emulate(kernel(HIST, "hist"), x, h, c)
    oob = res.by_kind("out_of_bounds")
    assert {f.buffer for f in oob} == {"bins", "H"}, res.findings
    fb = next(f for f in oob if f.buffer == "bins")
    assert fb.line == line_of(HIST, "atomic_add(T.address_of(bins[b])") and fb.index == [16] and fb.threads == [5]
    assert fb.cta == (0, 0, 0) and "atomic add of bins" in fb.message and "into buffer cnt" in fb.message
    fh = next(f for f in oob if f.buffer == "H")
    assert fh.line == line_of(HIST, "T.address_of(H[b])") and fh.index == [16] and fh.threads == [5]
    assert "atomic add of H" in fh.message and "outside every buffer" not in fh.message
    assert c[0] == 1  # the stray add landed in cnt, as on a GPU
    ref = np.bincount(np.minimum((x * 16).astype(np.int32), 15), minlength=16)
    ref[15] -= 1
    assert np.array_equal(h, ref)
    with pytest.raises(EmulationFault) as ei:
        emulate(kernel(HIST, "hist"), x, np.zeros(16, np.int32), np.zeros(1, np.int32), stop=True)
    assert ei.value.finding.buffer == "bins"


PTX_ATOM = """
@T.prim_func
def patom(A: T.Buffer((32,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    S = T.alloc_shared((16,), "uint32")
    d = T.local_scalar("uint32")
    if tx < 16:
        S[tx] = T.uint32(0)
    T.cuda.cta_sync()
    T.ptx.atom.shared__cta.add.u32(d, S.ptr_to([tx]), T.uint32(1))
    A[tx] = d
"""


def test_a_ptx_atom_outside_its_shared_buffer_names_the_buffer():
    """``Tx.ptx.atom.shared`` on ``S.ptr_to([tx])`` (a ``cvta`` of ``address_of(S[tx])``), 32 lanes on 16
    words: lanes 16.. are outside the CTA's shared memory, reported against ``S`` with their elements."""
    a = np.full(32, 9, np.uint32)
    res = emulate(kernel(PTX_ATOM, "patom"), a)
    (f,) = res.by_kind("out_of_bounds")
    assert f.buffer == "S" and f.line == line_of(PTX_ATOM, "T.ptx.atom") and f.index[:2] == [16, 17]
    assert f.threads == list(range(16, 24)) and f.count == 16 and "atomic add of S" in f.message
    assert np.array_equal(a, np.zeros(32, np.uint32))  # the old values: 0 in S, 0 for the lanes skipped
