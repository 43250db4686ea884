"""Gaps an audit found by running Apache TVM's own TIRx test kernels through the emulator (round 35c): a PTX ``st``/
``ld`` out of bounds at a uniform address, ``T.cluster_id`` (``mov.u32 %clusterid.x``), an early ``return``, TMA
``tile::gather4``, a grid that is not a whole number of clusters, warp votes and reductions executed by part of
their member mask, and plain stores of a cluster's CTAs to one element. Each kernel is small and written here."""

from __future__ import annotations

import numpy as np
import pytest

from txlab.emulator import emulate
from txlab.errors import KernelFault, NotEmulatedError

from test_emulator import kernel, line_of  # noqa: E402  (tests/ is on sys.path)

# ---- A: a PTX st/ld out of bounds at a uniform address (one active lane) -------------------------------------------
ST_GLOBAL_ONE_LANE = """
@T.prim_func
def k(U32: T.Buffer((4,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    if tx == 0:
        T.ptx.st.global_.u32(U32.ptr_to([100]), T.uint32(7))  # past the end
"""

ST_SHARED_ONE_LANE = """
@T.prim_func
def k(U32: T.Buffer((4,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    smem = T.alloc_shared([4], "uint32")
    if tx == 0:
        T.ptx.st.shared.u32(smem.ptr_to([4096]), T.uint32(7))  # past the end
"""

LD_SHARED_OF_GLOBAL = """
@T.prim_func
def k(U32: T.Buffer((4,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    v = T.local_scalar("uint32")
    if tx == 0:
        T.ptx.ld.shared.u32(v, U32.data)  # a global pointer
        U32[1] = v
"""


@pytest.mark.parametrize(
    "src, access",
    [(ST_GLOBAL_ONE_LANE, "write"), (ST_SHARED_ONE_LANE, "write"), (LD_SHARED_OF_GLOBAL, "read")],
    ids=["st.global", "st.shared", "ld.shared-of-global"],
)
def test_uniform_ptx_access_out_of_bounds_is_a_finding(src, access):
    """One lane's PTX access outside its buffer: the out_of_bounds finding 32 lanes get (it crashed in numpy), and a
    store that lands nowhere (not in element 0 of the region)."""
    u = np.arange(4, dtype=np.uint32) + 1
    res = emulate(kernel(src, "k"), u, arch="sm_90a")
    (f,) = [f for f in res.findings if f.kind == "out_of_bounds"]
    assert f.line == line_of(src, "T.ptx.")
    assert f.threads == [0] and f"out-of-bounds {access}" in f.message
    assert u.tolist() == ([1, 2, 3, 4] if access == "write" else [1, 0, 3, 4])


# ---- B: special registers (T.cluster_id lowers to mov.u32 %clusterid.x) ---------------------------------------------
CLUSTER_ID = """
@T.prim_func
def k(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    T.device_entry()
    cid = T.cluster_id([2])
    cbx = T.cta_id_in_cluster([2])
    tx = T.thread_id([32])
    if tx == 0:
        A[cid * 2 + cbx] = cid
        B[cid * 2 + cbx] = cbx
"""


def test_cluster_id_is_emulated():
    a, b = np.full(4, -1, np.int32), np.full(4, -1, np.int32)
    res = emulate(kernel(CLUSTER_ID, "k"), a, b, arch="sm_90a")
    assert res.findings == []
    assert a.tolist() == [0, 0, 1, 1] and b.tolist() == [0, 1, 0, 1]


SREGS = """
@T.prim_func
def k(A: T.Buffer((4, 8, 64), "int32")):
    T.device_entry()
    bx = T.cta_id([4])
    cbx = T.cta_id_in_cluster([2])
    tx = T.thread_id([64])
    A[bx, 0, tx] = T.cuda.mov_sreg(32, "clusterid.x")
    A[bx, 1, tx] = T.cuda.mov_sreg(32, "nclusterid.x")
    A[bx, 2, tx] = T.cuda.mov_sreg(32, "cluster_ctarank")
    A[bx, 3, tx] = T.cuda.mov_sreg(32, "cluster_nctarank")
    A[bx, 4, tx] = T.cuda.mov_sreg(32, "laneid")
    A[bx, 5, tx] = T.cuda.mov_sreg(32, "warpid")
    A[bx, 6, tx] = T.cuda.mov_sreg(32, "nctaid.x")
    A[bx, 7, tx] = T.cuda.mov_sreg(32, "tid.x")
"""


def test_special_registers_of_a_cluster_launch():
    a = np.full((4, 8, 64), -1, np.int32)
    res = emulate(kernel(SREGS, "k"), a, arch="sm_90a")
    assert res.findings == []
    bx = np.arange(4)[:, None]
    tx = np.arange(64)[None, :]
    want = [bx // 2 + 0 * tx, 2 + 0 * bx + 0 * tx, bx % 2 + 0 * tx, 2 + 0 * bx + 0 * tx]
    want += [tx % 32 + 0 * bx, tx // 32 + 0 * bx, 4 + 0 * bx + 0 * tx, tx + 0 * bx]
    for r, w in enumerate(want):
        assert (a[:, r, :] == w).all(), r


SMID = """
@T.prim_func
def k(A: T.Buffer((32,), "int32")):
    T.device_entry()
    tx = T.thread_id([32])
    sm = T.cuda.mov_sreg(32, "smid")
    A[tx] = sm
"""


def test_a_special_register_not_modelled_is_refused_at_its_line():
    with pytest.raises(NotEmulatedError, match="smid") as e:
        emulate(kernel(SMID, "k"), np.zeros(32, np.int32), arch="sm_90a")
    assert e.value.lineno == line_of(SMID, "mov_sreg")


def test_a_refusal_names_the_line_of_a_let_tvm_remade(monkeypatch):
    """``cid = T.cluster_id([2])`` lowers to a let with no line of its own (its variable has one): a refusal there,
    made when the kernel is compiled or raised by the op as it runs, names that line."""
    import txlab.emulator.cluster  # noqa: F401  (registers the handler)
    import txlab.emulator.ops as ops

    def raising(comp, call):
        def f(g):
            raise NotEmulatedError("an op that knows no line")

        return f

    line = line_of(CLUSTER_ID, "T.cluster_id")
    monkeypatch.delitem(ops.HANDLERS, "tirx.cuda.mov_sreg", raising=False)
    with pytest.raises(NotEmulatedError, match="mov_sreg") as e:
        emulate(kernel(CLUSTER_ID, "k"), np.zeros(4, np.int32), np.zeros(4, np.int32), arch="sm_90a")
    assert e.value.lineno == line
    monkeypatch.setitem(ops.HANDLERS, "tirx.cuda.mov_sreg", raising)
    with pytest.raises(NotEmulatedError, match=f"knows no line at line {line}") as e:
        emulate(kernel(CLUSTER_ID, "k"), np.zeros(4, np.int32), np.zeros(4, np.int32), arch="sm_90a")
    assert e.value.lineno == line


# ---- C: an early return --------------------------------------------------------------------------------------------
RETURN_CTA = """
@T.prim_func
def k(A: T.Buffer((4,), "int32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([32])
    if bx >= 3:
        return 0
    if tx == 0:
        A[bx] = A[bx] + 1
"""


def test_early_return_of_a_cta():
    """TVM's codegen test: ``if bx >= 3: return 0`` (CUDA ``return;``): CTA 3 leaves its element alone."""
    a = np.array([10, 20, 30, 40], np.int32)
    res = emulate(kernel(RETURN_CTA, "k"), a, arch="sm_90a")
    assert res.findings == [] and a.tolist() == [11, 21, 31, 40]


RETURN_THEN_BARRIER = """
@T.prim_func
def k(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    T.device_entry()
    tx = T.thread_id([64])
    s = T.alloc_shared((64,), "int32")
    if tx >= 40:
        return 0
    s[tx] = A[tx] * 2
    T.cuda.cta_sync()
    B[tx] = s[39 - tx]
"""


def test_a_barrier_after_an_early_return_counts_the_threads_left():
    """Threads 40-63 return; the barrier after waits for threads 0-39 only (as __syncthreads does for exited
    threads): no divergent barrier, and each thread reads what another wrote before it."""
    a = np.arange(64, dtype=np.int32)
    b = np.full(64, -1, np.int32)
    res = emulate(kernel(RETURN_THEN_BARRIER, "k"), a, b, arch="sm_90a")
    assert res.findings == []
    assert b[:40].tolist() == [2 * (39 - t) for t in range(40)] and (b[40:] == -1).all()


RETURN_SKIPPED_BARRIER = """
@T.prim_func
def k(A: T.Buffer((64,), "int32")):
    T.device_entry()
    tx = T.thread_id([64])
    if tx >= 40:
        return 0
    if tx < 20:
        T.cuda.cta_sync()
    A[tx] = 1
"""


def test_a_barrier_the_threads_left_skip_is_still_divergent():
    res = emulate(kernel(RETURN_SKIPPED_BARRIER, "k"), np.zeros(64, np.int32), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "divergent_barrier" and f.line == line_of(RETURN_SKIPPED_BARRIER, "cta_sync")
    assert "20 of 40 threads" in f.message and "threads 20-39" in f.message


RETURN_IN_LOOP = """
@T.prim_func
def k(A: T.Buffer((64,), "int32")):
    T.device_entry()
    tx = T.thread_id([64])
    for i in range(4):
        if i == tx % 4:
            return 0
        A[tx] = A[tx] + 1
"""


def test_a_return_inside_a_loop_ends_the_loop_for_those_lanes():
    a = np.zeros(64, np.int32)
    res = emulate(kernel(RETURN_IN_LOOP, "k"), a, arch="sm_90a")
    assert res.findings == [] and a.tolist() == [t % 4 for t in range(64)]


RETURN_WARPS = """
@T.prim_func
def k(A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32")):
    T.device_entry()
    tx = T.thread_id([128])
    s = T.alloc_shared((128,), "int32")
    bar = T.alloc_shared((1,), "uint64")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar[0]), T.uint32(64))
    T.cuda.cta_sync()
    if tx >= 64:
        return 0
    s[tx] = A[tx] * 2
    T.ptx.mbarrier.arrive.shared.b64(T.address_of(bar[0]))
    T.cuda.mbarrier_wait(T.address_of(bar[0]), 0)
    T.cuda.cta_sync()
    B[tx] = s[63 - tx]
"""


def test_early_return_of_warps_run_one_by_one():
    """Warps 2 and 3 return; warps 0 and 1 arrive on an mbarrier of 64 and meet at a CTA barrier without them."""
    a = np.arange(128, dtype=np.int32)
    b = np.full(128, -1, np.int32)
    res = emulate(kernel(RETURN_WARPS, "k"), a, b, arch="sm_90a")
    assert res.stats["mode"] == "per-warp"
    assert res.findings == []
    assert b[:64].tolist() == [2 * (63 - t) for t in range(64)] and (b[64:] == -1).all()


def test_the_op_table_lists_return():
    from txlab.emulator import optable

    (row,) = [r for r in optable.rows() if r["name"] == "Return"]
    assert row["kind"] == "IR statement" and row["status"] == "emulated"
    assert "| `Return` | emulated |" in optable.DOC.read_text()


# ---- D: TMA tile::gather4 --------------------------------------------------------------------------------------------
GATHER4 = """
@T.prim_func
def k(A_ptr: T.handle, Out_ptr: T.handle):
    A = T.match_buffer(A_ptr, (256, 64), "float16")
    Out = T.match_buffer(Out_ptr, (4, 64), "float16")
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([128])
    dyn = T.alloc_buffer((576,), "uint8", scope="shared.dyn")
    T.attr({"tirx.dyn_smem_bytes": 576})
    A_smem = T.decl_buffer((4, 64), "float16", dyn.data, layout=T.TileLayout(T.S[4, 64]))
    mbar = T.decl_buffer((1,), "uint64", dyn.data, elem_offset=64)
    mbar_ptr = T.meta_var(mbar.ptr_to([0]))
    if tid == 0:
        T.ptx.mbarrier.init.shared.b64(mbar_ptr, T.uint32(1))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tid == 0:
        tile.copy_async(A_smem[:, :], A[0:1, :], dispatch="tma_explicit", mbar=mbar_ptr, gather4=[7, 3, 19, 5])
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(mbar_ptr, T.uint32(512))
    T.cuda.mbarrier_wait(mbar_ptr, 0)
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    tile.cta.copy(Out[:, :], A_smem[:, :])
"""


def test_tma_gather4_loads_the_four_rows():
    """``tile::gather4`` (five coordinates: the column and four rows) was read as a 2-d box whose third row index was
    the mbarrier: zeros and a false deadlock."""
    a = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float16)
    out = np.zeros((4, 64), np.float16)
    res = emulate(kernel(GATHER4, "k"), a, out, arch="sm_100a")
    assert res.findings == []
    assert (out == a[[7, 3, 19, 5]]).all()


# ---- E: a grid that is not a whole number of clusters -----------------------------------------------------------------
CLUSTER_ONLY = """
@T.prim_func
def k(A: T.Buffer((1,), "int32")):
    T.device_entry()
    cbx, cby = T.cta_id_in_cluster([2, 2])
    tx = T.thread_id([32])
    if tx == 0:
        A[0] = cbx + cby
"""


def test_a_grid_not_a_multiple_of_the_cluster_is_refused():
    """TVM launches this (upstream's codegen test) with grid (1, 1, 1) and cluster (2, 2, 1): CUDA refuses it."""
    a = np.zeros(1, np.int32)
    with pytest.raises(KernelFault, match=r"grid=\(1, 1, 1\).*cluster=\(2, 2, 1\).*not a multiple") as e:
        emulate(kernel(CLUSTER_ONLY, "k"), a, arch="sm_90a")
    assert e.value.kind == "launch_config" and "(2, 2, 1)" in e.value.hint
    assert a.tolist() == [0]


# ---- F: warp votes and reductions that part of their member mask executes ------------------------------------------
BALLOT_ONE = """
@T.prim_func
def k(A: T.Buffer((32,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    if tx == 0:
        A[0] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), 1)
    A[1] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), 1)
"""

REDUCE_ONE = """
@T.prim_func
def k(A: T.Buffer((32,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    if tx == 0:
        A[0] = T.cuda.reduce_add_sync_u32(T.uint32(0xFFFFFFFF), A[0])
    A[tx] = T.cuda.reduce_min_sync_u32(T.uint32(0xFFFFFFFF), A[tx])
"""


@pytest.mark.parametrize("src, name", [(BALLOT_ONE, "__ballot_sync"), (REDUCE_ONE, "__reduce_add_sync")])
def test_a_warp_collective_part_of_its_mask_skips_is_found(src, name):
    """``mask 0xFFFFFFFF`` inside ``if tx == 0``: lanes 1-31 never execute it (undefined on a GPU), reported as the
    same misuse of ``__shfl_sync`` is; the same call by the whole warp is not."""
    res = emulate(kernel(src, "k"), np.arange(32, dtype=np.uint32), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "divergent_barrier" and f.line == line_of(src, "if tx == 0") + 1
    assert name in f.message and "lanes 1-31" in f.message


VOTES_MEET = """
@T.prim_func
def k(A: T.Buffer((32,), "uint32")):
    T.device_entry()
    tx = T.thread_id([32])
    if tx < 16:
        A[tx] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), tx % 2)
    else:
        A[tx] = T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), tx % 3 == 0)
"""


def test_a_vote_met_by_the_other_branch_is_no_finding():
    """sm_70+ pairs the member lanes at whichever call of the same mask each executes: the second branch's lanes
    see every lane's predicate; the first branch's are noted as computed from its own lanes only."""
    a = np.zeros(32, np.uint32)
    res = emulate(kernel(VOTES_MEET, "k"), a, arch="sm_90a")
    assert res.findings == []
    want = sum(1 << t for t in range(16) if t % 2) | sum(1 << t for t in range(16, 32) if t % 3 == 0)
    assert (a[16:] == want).all()
    assert any("__ballot_sync calls in two branches" in n for n in res.notes)


# ---- G: plain stores of a cluster's CTAs to one element, nothing ordering them ---------------------------------------
CLUSTER_STORES = """
@T.prim_func
def k(A: T.Buffer((1,), "int32")):
    T.device_entry()
    cbx = T.cta_id_in_cluster([4])
    bx = T.cta_id([4])
    tx = T.thread_id([32])
    if tx == 0:
        A[0] = bx
"""


def test_cluster_ctas_leaving_different_values_in_one_element_are_found():
    """A cluster launch with no cluster barrier, fence, atomic or remote arrive orders its CTAs no more than any
    launch does: the finding the same kernel without a cluster gets; with a cluster barrier, which may order them,
    none."""
    res = emulate(kernel(CLUSTER_STORES, "k"), np.zeros(1, np.int32), arch="sm_90a")
    (f,) = res.findings
    assert f.kind == "global_race" and f.line == line_of(CLUSTER_STORES, "A[0] = bx")
    assert "leave different values" in f.message
    synced = CLUSTER_STORES.replace("    if tx == 0:\n", "    T.cuda.cluster_sync()\n    if tx == 0:\n")
    assert emulate(kernel(synced, "k"), np.zeros(1, np.int32), arch="sm_90a").findings == []
