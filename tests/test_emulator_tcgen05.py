"""Blackwell tensor memory and tcgen05 on the CPU emulator: a TMA -> tcgen05.mma -> TMEM -> registers
tile kernel gives numpy's answer, and each planted bug (lane-quarter violation, ld before the
commit's mbarrier completed, dealloc of a live allocation, a leak, a missing wait::ld, a descriptor
swizzle that disagrees with the TMA that wrote the operand or with the declared swizzle layout of the
buffer threads stored it into) is reported at its line while its fixed twin is clean."""

import inspect

import numpy as np
import pytest

pytest.importorskip("tvm")

from tvm.script import tirx as T  # noqa: E402

import txlab  # noqa: E402

M, N, K = 128, 32, 64


def _tile_mma(
    *,
    swizzle=3,
    wait_mma=True,
    lane_shift=0,
    sync_before_dealloc=True,
    dealloc=True,
    wait_ld=True,
    kind_f16=True,
    bar_after_commit=False,
):
    """One CTA: TMA A (128 x 64) and B (32 x 64) into 128B-swizzled shared memory, four
    tcgen05.mma k16 steps into TMEM, tcgen05.ld to registers, C = A @ B.T."""
    a_t = "float16" if kind_f16 else "bfloat16"

    # fmt: off
    @T.prim_func
    def tile_mma(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), a_t, align=16)
        B = T.match_buffer(B_ptr, (N, K), a_t, align=16)
        C = T.match_buffer(C_ptr, (M, N), "float32")
        A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, a_t, 2, A.data, K, M, K * 2, K, M, 1, 1, 0, 3, 0, 0)
        B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, a_t, 2, B.data, K, N, K * 2, K, N, 1, 1, 0, 3, 0, 0)
        T.device_entry()
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A_smem = T.alloc_buffer((M * K,), a_t, scope="shared", align=1024)
                B_smem = T.alloc_buffer((N * K,), a_t, scope="shared", align=1024)
                tmem_addr = T.shared_scalar("uint32")
                tma_bar = T.shared_scalar("uint64")
                mma_bar = T.shared_scalar("uint64")
                reg = T.alloc_buffer((N,), "float32", scope="local")
                descA = T.alloc_buffer((1,), "uint64", scope="local")
                descB = T.alloc_buffer((1,), "uint64", scope="local")
                descI = T.alloc_buffer((1,), "uint32", scope="local")
                if tx // 32 == 0:
                    T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))  # <alloc>
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(T.address_of(tma_bar), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(T.address_of(mma_bar), T.uint32(1))
                    T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_smem.data, T.address_of(A_map), 0, 0, T.address_of(tma_bar))  # <tma>
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](B_smem.data, T.address_of(B_map), 0, 0, T.address_of(tma_bar))
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(tma_bar), T.uint32((M + N) * K * 2))
                    T.cuda.mbarrier_wait(T.address_of(tma_bar), 0)
                    T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype=a_t, b_dtype=a_t, M=M, N=N, K=16, trans_a=False, trans_b=False, n_cta_groups=1)  # noqa: E501
                    for k in range(K // 16):
                        T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_smem[k * 16]), ldo=1, sdo=64, swizzle=swizzle)  # <descA>
                        T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_smem[k * 16]), ldo=1, sdo=64, swizzle=3)
                        T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, k > 0)  # <mma>
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(mma_bar))  # <commit>
                if wait_mma:
                    T.cuda.mbarrier_wait(T.address_of(mma_bar), 0)
                if bar_after_commit:
                    T.ptx.tcgen05.fence__before_thread_sync()
                    T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                for i in range(N):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, (tx // 32 + lane_shift) % 4 * 32, i))  # <ld>
                if wait_ld:
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                for i in range(N):
                    C[tx, i] = reg[i]
                if sync_before_dealloc:
                    T.cuda.cta_sync()
                if dealloc:
                    if tx // 32 == 0:
                        T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()
                        T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))  # <dealloc>
    # fmt: on

    return tile_mma


def _line(tag, fn=None):
    src, start = inspect.getsourcelines(fn or _tile_mma)
    for i, text in enumerate(src):
        if f"# <{tag}>" in text:
            return start + i
    raise AssertionError(tag)


def _run(**kw):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    res = txlab.emulate(_tile_mma(**kw), a, b, c, arch="sm_100a")
    return res, a, b, c


def _kinds(res):
    return {(f.kind, f.line) for f in res.findings}


def test_tile_mma_matches_numpy_and_is_clean():
    res, a, b, c = _run()
    assert res.findings == []
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


def test_lane_quarter_violation_is_found_at_the_ld():
    res, *_ = _run(lane_shift=1)
    assert ("tmem_lane_quarter", _line("ld")) in _kinds(res)
    msg = next(f.message for f in res.findings if f.kind == "tmem_lane_quarter")
    assert "may only access lanes" in msg


def test_ld_before_the_commit_completed_is_a_race_at_both_lines():
    res, *_ = _run(wait_mma=False)
    races = [f for f in res.findings if f.kind == "tmem_race"]
    assert races, res.findings
    assert any(f.line == _line("ld") and f.other_line == _line("commit") for f in races), races
    assert "mma" in races[0].message


def test_a_barrier_after_the_commit_does_not_order_the_mma_before_the_ld():
    """The commit only makes its mbarrier track the MMA's completion: a CTA barrier after it (even
    with the tcgen05 fences) orders nothing, so a warp's ld races with the MMA until it (or a warp
    it synchronised with after) waited on that mbarrier (PTX ISA: tcgen05.commit)."""
    res, *_ = _run(wait_mma=False, bar_after_commit=True)
    races = [f for f in res.findings if f.kind == "tmem_race" and f.line == _line("ld")]
    assert races and all(f.other_line == _line("commit") for f in races), res.findings
    res, *_ = _run(bar_after_commit=True)  # waiting on the mbarrier first: clean
    assert res.findings == []


def test_dealloc_of_a_live_allocation_is_found_at_the_dealloc():
    res, *_ = _run(sync_before_dealloc=False)
    assert any(f.kind == "tmem_race" and f.line == _line("dealloc") for f in res.findings), res.findings


def test_leak_and_missing_wait_ld_are_found():
    res, *_ = _run(dealloc=False)
    assert ("tmem_leak", _line("alloc")) in _kinds(res)
    res, *_ = _run(wait_ld=False)
    assert ("tmem_wait", _line("ld")) in _kinds(res)


def test_descriptor_swizzle_that_disagrees_with_the_tma_is_found():
    res, a, b, c = _run(swizzle=2)
    bad = [f for f in res.findings if f.kind == "tcgen05_descriptor"]
    assert bad and bad[0].line == _line("descA") and bad[0].other_line == _line("mma"), res.findings
    assert "64B swizzle" in bad[0].message and "128B swizzle" in bad[0].message
    assert not np.allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, atol=1e-3)


def test_double_free_and_bad_column_count():
    from txlab.emulator.tmem import Tmem

    class _Prog:
        def __init__(self):
            self.found = []

        def finding(self, kind, msg, **kw):
            self.found.append((kind, kw.get("line"), msg))

    class _Cta:
        index = (0, 0, 0)
        races = None

        def __init__(self):
            self.program = _Prog()

    cta = _Cta()
    tm = Tmem(cta)
    assert tm.alloc(48, 1, []) is None  # not a power of two
    c0 = tm.alloc(256, 2, [])
    c1 = tm.alloc(256, 3, [])
    assert (c0, c1) == (0, 256)
    assert tm.alloc(32, 4, []) is None  # full: on a GPU, a hang
    tm.dealloc(c1, 256, 5, 0, [])
    tm.dealloc(c1, 256, 6, 0, [])  # double free
    kinds = [(k, line) for k, line, _ in cta.program.found]
    assert kinds == [("tmem_alloc", 1), ("tmem_alloc", 4), ("tmem_dealloc", 6)]
    assert "double free" in cta.program.found[-1][2]


def test_descriptor_encoders_match_tvm_bitfields():
    from txlab.emulator.tcgen05 import (
        decode_instr_descriptor,
        decode_smem_descriptor,
        instr_descriptor,
        smem_descriptor,
    )

    d = decode_smem_descriptor(smem_descriptor(0x1230, 1, 64, 3))
    assert (d["start"], d["lbo"], d["sbo"], d["version"], d["layout"]) == (0x1230, 16, 1024, 1, 2)
    i = decode_instr_descriptor(instr_descriptor("float32", "bfloat16", "bfloat16", 128, 256, True, False))
    assert (i["m"], i["n"], i["a_format"], i["c_format"], i["a_major"], i["b_major"]) == (128, 256, 1, 1, 1, 0)


@pytest.mark.parametrize("shape,regs", [("16x64b", 2), ("16x128b", 4), ("16x256b", 8)])
def test_16xnb_ld_reads_the_documented_register_image(shape, regs):
    """st through .32x32b (lane t, column r), ld back through a .16x*b shape: each register holds
    the cell TVM's tcgen05_atom_layout names for (lane, register)."""
    num = {"16x64b": 2, "16x128b": 2, "16x256b": 2}[shape]

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128, 16), "float32"), B: T.Buffer((128, 8), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        tmem_addr = T.shared_scalar("uint32")
        r = T.alloc_buffer((16,), "float32", scope="local")
        o = T.alloc_buffer((8,), "float32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        T.cuda.cta_sync()
        for i in range(16):
            r[i] = A[tx, i]
        for i in range(16):
            T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i), r[i])
        T.ptx.tcgen05.wait__st.sync.aligned()
        T.cuda.cta_sync()
        T.ptx[f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32"](*[o[j] for j in range(regs)], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # noqa: E501
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for j in range(regs):
            B[tx, j] = o[j]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    a = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    b = np.zeros((128, 8), np.float32)
    res = txlab.emulate(k, a, b, arch="sm_100a")
    assert res.findings == []
    t = np.arange(128)[:, None]
    lane, rr = t % 32, np.arange(regs)[None, :]
    if shape == "16x64b":  # TVM's tcgen05_atom_layout: (row, fp32 column) of (lane, register)
        row, col = lane // 4 + 8 * (lane % 2) + 0 * rr, (lane // 2) % 2 + 2 * rr
    elif shape == "16x128b":
        row, col = lane // 4 + 8 * (rr % 2), lane % 4 + 4 * (rr // 2)
    else:
        row, col = lane // 4 + 8 * ((rr // 2) % 2), rr % 2 + 2 * (lane % 4) + 8 * (rr // 4)
    want = a[32 * (t // 32) + row, col]
    np.testing.assert_array_equal(b[:, :regs], want)


def _st_then_ld(*, wait_st=True):
    """Each warp tcgen05.st's a column into its lane quarter, then reads it back with tcgen05.ld."""

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        tmem_addr = T.shared_scalar("uint32")
        r = T.alloc_buffer((1,), "float32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        T.cuda.cta_sync()
        T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0), A[tx])  # <st1>
        if wait_st:
            T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # <ld1>
        T.ptx.tcgen05.wait__ld.sync.aligned()
        B[tx] = r[0]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    return k


def test_ld_of_a_store_not_waited_for_is_a_race_at_the_ld():
    """PTX: tcgen05.st is asynchronous; tcgen05.wait::st must complete it before the cells are read
    back, by the same warp too."""
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    res = txlab.emulate(_st_then_ld(), a, b, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_array_equal(b, a)
    res = txlab.emulate(_st_then_ld(wait_st=False), a, np.zeros_like(b), arch="sm_100a")
    races = [f for f in res.findings if f.kind == "tmem_race"]
    assert races and races[0].line == _line("ld1", _st_then_ld), res.findings
    assert races[0].other_line == _line("st1", _st_then_ld) and "wait::st" in races[0].message


def _pair_mma(*, wait=True):
    """A 2-CTA cluster, cta_group::2: each CTA stages its 128 rows of A and 32 rows of B (no-swizzle
    K-major canonical layout), the even CTA issues the M=256 N=64 MMA for the pair and multicasts
    its commit to both CTAs' mbarriers; each CTA reads its own 128 x 64 accumulator."""
    KK = 32

    # fmt: off
    @T.prim_func
    def pair(A: T.Buffer((256, KK), "float16"), B: T.Buffer((64, KK), "float16"), C: T.Buffer((256, 64), "float32")):
        T.device_entry()
        cta = T.cta_id([2])
        rank = T.cta_id_in_cluster([2])
        tx = T.thread_id([128])
        A_s = T.alloc_buffer((128 * KK,), "float16", scope="shared", align=1024)
        B_s = T.alloc_buffer((32 * KK,), "float16", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        reg = T.alloc_buffer((64,), "float32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cluster_sync()
        for k in range(KK):
            A_s[tx % 8 * 8 + tx // 8 * 64 + k % 8 + k // 8 * 1024] = A[rank * 128 + tx, k]
        if tx < 32:
            for k in range(KK):
                B_s[tx % 8 * 8 + tx // 8 * 64 + k % 8 + k // 8 * 256] = B[rank * 32 + tx, k]
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cluster_sync()
        if rank == 0 and tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=256, N=64, K=16, trans_a=False, trans_b=False, n_cta_groups=2)  # noqa: E501
            for k in range(KK // 16):
                T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[k * 2048]), ldo=128, sdo=8, swizzle=0)
                T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[k * 512]), ldo=32, sdo=8, swizzle=0)
                T.ptx["tcgen05.mma.cta_group::2.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, 0, 0, 0, 0, k > 0)  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](T.address_of(bar), T.uint16(3))  # noqa: E501
        if wait:
            T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        for i in range(64):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))  # <pair-ld>
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(64):
            C[rank * 128 + tx, i] = reg[i]
        T.cuda.cluster_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned"]()
            T.ptx["tcgen05.dealloc.cta_group::2.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    return pair


def test_cta_pair_mma_splits_operands_and_multicasts_the_commit():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 32)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    c = np.zeros((256, 64), np.float32)
    res = txlab.emulate(_pair_mma(), a, b, c, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    # the odd CTA reading without waiting for the multicast commit is a race in that CTA too
    res = txlab.emulate(_pair_mma(wait=False), a, b, np.zeros_like(c), arch="sm_100a")
    races = [f for f in res.findings if f.kind == "tmem_race"]
    assert {f.cta[0] for f in races} == {0, 1}, res.findings


def test_tvm_tile_primitives_gemm_async_and_copy_async_readback():
    """TVM's own lowering: TMEMPool, Tx.gemm_async(dispatch="tcgen05") and Tx.wg.copy_async from TMEM
    (which addresses lane 0 from every warp: the lane counts within the warp's quarter)."""
    from tvm.backend.cuda.lang import SMEMPool, TCGen05Bar, TMEMPool  # noqa: F401  (the script names them)
    from tvm.script.tirx import tile as Tx

    # fmt: off
    @T.prim_func
    def tile(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128, 64), "float16"), C: T.Buffer((128, 128), "float32")):
        T.device_entry()
        T.cta_id([1])
        T.warp_id([4])
        T.warpgroup_id([1])
        tx = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc_tcgen05_mma_AB((128, 64), "float16")
        Bs = pool.alloc_tcgen05_mma_AB((128, 64), "float16")
        done = TCGen05Bar(pool, 1)
        tmem = TMEMPool(pool, total_cols=512)
        acc = tmem.alloc_tcgen05_mma_D((128, 128), "float32", M=128, cta_group=1)
        pool.commit()
        done.init(1)
        tmem.commit()
        for i in T.serial(64):
            As[tx, i] = A[tx, i]
            Bs[tx, i] = B[tx, i]
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tx == 0:
            Tx.gemm_async(acc[:, :], As[:, :], Bs[:, :], dispatch="tcgen05")
            done.arrive(0)
        done.wait(0, 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        frag = T.alloc_tcgen05_ldst_frag("32x32b", (128, 128), "float32")
        Tx.wg.copy_async(frag[:, :], acc[:, :])
        T.ptx.tcgen05.wait__ld.sync.aligned()
        reg = frag.local()
        for i in T.serial(128):
            C[tx, i] = reg[i]
        T.cuda.cta_sync()
        tmem.dealloc()
    # fmt: on

    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    res = txlab.emulate(tile, a, b, c, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)


def test_cta_pair_tma_signals_the_leaders_mbarrier():
    """.cta_group::2 TMA: each CTA of the pair loads its half of A and B into its own shared memory
    and the bytes are counted on the leader's mbarrier (sm100_2sm_leader_smem_addr); the leader waits
    for both halves and issues the pair's M=256 MMA."""

    # fmt: off
    @T.prim_func
    def pair_tma(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (256, 64), "float16", align=16)
        B = T.match_buffer(B_ptr, (64, 64), "float16", align=16)
        C = T.match_buffer(C_ptr, (256, 64), "float32")
        A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float16", 2, A.data, 64, 256, 128, 64, 128, 1, 1, 0, 3, 0, 0)
        B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float16", 2, B.data, 64, 64, 128, 64, 32, 1, 1, 0, 3, 0, 0)
        T.device_entry()
        for rank in T.thread_binding(2, thread="clusterCtaIdx.x"):
          for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A_s = T.alloc_buffer((128 * 64,), "float16", scope="shared", align=1024)
                B_s = T.alloc_buffer((32 * 64,), "float16", scope="shared", align=1024)
                tmem_addr = T.shared_scalar("uint32")
                tma_bar = T.shared_scalar("uint64")
                mma_bar = T.shared_scalar("uint64")
                reg = T.alloc_buffer((64,), "float32", scope="local")
                descA = T.alloc_buffer((1,), "uint64", scope="local")
                descB = T.alloc_buffer((1,), "uint64", scope="local")
                descI = T.alloc_buffer((1,), "uint32", scope="local")
                if tx // 32 == 0:
                    T.ptx["tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(T.address_of(tma_bar), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(T.address_of(mma_bar), T.uint32(1))
                T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cluster_sync()
                if tx == 0:
                    leader_bar = T.cuda.sm100_2sm_leader_smem_addr(T.address_of(tma_bar))
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"](A_s.data, T.address_of(A_map), 0, rank * 128, leader_bar)  # noqa: E501
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"](B_s.data, T.address_of(B_map), 0, rank * 32, leader_bar)  # noqa: E501
                    if rank == 0:
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(tma_bar), T.uint32(2 * (128 + 32) * 64 * 2))
                        T.cuda.mbarrier_wait(T.address_of(tma_bar), 0)
                        T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=256, N=64, K=16, trans_a=False, trans_b=False, n_cta_groups=2)  # noqa: E501
                        for k in range(4):
                            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[k * 16]), ldo=1, sdo=64, swizzle=3)
                            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[k * 16]), ldo=1, sdo=64, swizzle=3)
                            T.ptx["tcgen05.mma.cta_group::2.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, 0, 0, 0, 0, k > 0)  # noqa: E501
                        T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](T.address_of(mma_bar), T.uint16(3))  # noqa: E501
                T.cuda.mbarrier_wait(T.address_of(mma_bar), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for i in range(64):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, 0, i))
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for i in range(64):
                    C[rank * 128 + tx, i] = reg[i]
                T.cuda.cluster_sync()
                if tx // 32 == 0:
                    T.ptx["tcgen05.dealloc.cta_group::2.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    rng = np.random.default_rng(3)
    a = rng.standard_normal((256, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((256, 64), np.float32)
    res = txlab.emulate(pair_tma, a, b, c, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)


def test_block_scaled_mxf8f6f4_mma_applies_e8m0_scales_from_tmem():
    """kind::mxf8f6f4.block_scale.scale_vec::1X: e4m3 A (128 x 32) and B (32 x 32), one e8m0 scale
    per row in TMEM (row r at lane r, column + r // 32, the tcgen05.cp.32x128b.warpx4 staging)."""
    import ml_dtypes

    # fmt: off
    @T.prim_func
    def scaled(A: T.Buffer((128, 32), "float8_e4m3fn"), B: T.Buffer((32, 32), "float8_e4m3fn"),
               SFA: T.Buffer((128,), "uint32"), SFB: T.Buffer((32,), "uint32"), C: T.Buffer((128, 32), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        A_s = T.alloc_buffer((128 * 32,), "float8_e4m3fn", scope="shared", align=1024)
        B_s = T.alloc_buffer((32 * 32,), "float8_e4m3fn", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        sf = T.alloc_buffer((4,), "uint32", scope="local")
        sb = T.alloc_buffer((1,), "uint32", scope="local")
        reg = T.alloc_buffer((32,), "float32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.cuda.cta_sync()
        for k in range(32):
            A_s[tx % 8 * 16 + tx // 8 * 128 + k % 16 + k // 16 * 2048] = A[tx, k]
        if tx < 32:
            for k in range(32):
                B_s[tx % 8 * 16 + tx // 8 * 128 + k % 16 + k // 16 * 512] = B[tx, k]
        for j in range(4):
            sf[j] = T.Select(j == tx // 32, SFA[tx], T.uint32(0))
        sb[0] = SFB[tx % 32]
        T.ptx["tcgen05.st.sync.aligned.32x32b.x4.b32"](T.cuda.get_tmem_addr(tmem_addr, 0, 32), sf[0], sf[1], sf[2], sf[3])
        T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, 0, 36), sb[0])
        T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor_block_scaled(descI.data, d_dtype="float32", a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", sfa_dtype="float8_e8m0fnu", sfb_dtype="float8_e8m0fnu", sfa_tmem_addr=0, sfb_tmem_addr=0, M=128, N=32, K=32, trans_a=False, trans_b=False)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=128, sdo=8, swizzle=0)
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            T.ptx["tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X"](tmem_addr, descA[0], descB[0], descI[0], T.cuda.get_tmem_addr(tmem_addr, 0, 32), T.cuda.get_tmem_addr(tmem_addr, 0, 36), False)  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(bar))
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        for i in range(32):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, 0, i))
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(32):
            C[tx, i] = reg[i]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    rng = np.random.default_rng(4)
    e4m3 = ml_dtypes.float8_e4m3fn
    a = rng.standard_normal((128, 32)).astype(e4m3)
    b = rng.standard_normal((32, 32)).astype(e4m3)
    ea = rng.integers(120, 135, 128).astype(np.uint32)
    eb = rng.integers(120, 135, 32).astype(np.uint32)
    c = np.zeros((128, 32), np.float32)
    res = txlab.emulate(scaled, a, b, ea, eb, c, arch="sm_100a")
    assert res.findings == []
    sa = np.ldexp(1.0, ea.astype(np.int64) - 127)[:, None]
    sb = np.ldexp(1.0, eb.astype(np.int64) - 127)[:, None]
    want = (a.astype(np.float64) * sa) @ (b.astype(np.float64) * sb).T
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)


def _ts_mma(*, sync=True, cp_a=False):
    """A in TMEM (each warp tcgen05.st's its 32 rows), B in shared memory: the TS form of
    tcgen05.mma, issued by thread 0 after wait::st, fence::before_thread_sync and a CTA barrier.
    ``cp_a``: thread 0 tcgen05.cp's A into TMEM from shared memory instead, right before the MMA."""

    # fmt: off
    @T.prim_func
    def ts(A: T.Buffer((128, 8), "uint32"), B: T.Buffer((32, 16), "float16"), C: T.Buffer((128, 32), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        B_s = T.alloc_buffer((32 * 16,), "float16", scope="shared", align=1024)
        A_s = T.alloc_buffer((128 * 8,), "uint32", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        a = T.alloc_buffer((8,), "uint32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        reg = T.alloc_buffer((32,), "float32", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.cuda.cta_sync()
        if tx < 32:
            for k in range(16):
                B_s[tx % 8 * 8 + tx // 8 * 64 + k % 8 + k // 8 * 256] = B[tx, k]
        if cp_a:
            for j in range(8):  # row tx, word j: core matrix (tx // 8, j // 4), 16-byte rows
                A_s[tx // 8 * 64 + j // 4 * 32 + tx % 8 * 4 + j % 4] = A[tx, j]
        else:
            for j in range(8):
                a[j] = A[tx, j]
            T.ptx["tcgen05.st.sync.aligned.32x32b.x8.b32"](T.cuda.get_tmem_addr(tmem_addr, 0, 32), a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])  # <ts-st>
            T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        if sync:
            T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=128, N=32, K=16, trans_a=False, trans_b=False)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            if cp_a:
                T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=8, sdo=16, swizzle=0)
                T.ptx["tcgen05.cp.cta_group::1.128x256b"](T.cuda.get_tmem_addr(tmem_addr, 0, 32), descA[0])
            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, T.cuda.get_tmem_addr(tmem_addr, 0, 32), descB[0], descI[0], 0, 0, 0, 0, False)  # <ts-mma>  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(bar))
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        for i in range(32):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, 0, i))
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(32):
            C[tx, i] = reg[i]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    return ts


def _ts_line(tag):
    src, start = inspect.getsourcelines(_ts_mma)
    return start + next(i for i, t in enumerate(src) if f"# <{tag}>" in t)


def test_ts_mma_reads_a_from_tmem_and_needs_the_stores_ordered_first():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 16)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = np.zeros((128, 32), np.float32)
    res = txlab.emulate(_ts_mma(), a.view(np.uint32).copy(), b, c, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    # without the barrier, warps 1-3's stores of A are not ordered before thread 0's MMA
    res = txlab.emulate(_ts_mma(sync=False), a.view(np.uint32).copy(), b, np.zeros_like(c), arch="sm_100a")
    bad = [f for f in res.findings if f.kind == "tmem_race" and f.line == _ts_line("ts-mma")]
    assert bad and bad[0].other_line == _ts_line("ts-st"), res.findings


def test_cp_then_ts_mma_from_one_thread_is_pipelined_without_a_wait():
    """tcgen05.cp then a TS tcgen05.mma reading what it copied, issued in order by one thread with no
    commit between: the tensor pipe runs them in issue order (implicit pipelining), so no race."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((128, 16)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = np.zeros((128, 32), np.float32)
    res = txlab.emulate(_ts_mma(cp_a=True), a.view(np.uint32).copy(), b, c, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)


def _stored_operands(*, swizzle=3, alias=False):
    """Threads store A and B with ordinary stores into SMEMPool.alloc_tcgen05_mma_AB buffers (their
    declared layout: 128B swizzle for f16), then four k16 tcgen05.mma read them through descriptors
    encoded with ``swizzle`` for A. ``alias`` also declares a flat view over A's bytes (which layout
    wrote them is then unknown)."""
    from tvm.backend.cuda.lang import SMEMPool, TCGen05Bar, TMEMPool  # noqa: F401  (the script names them)

    # fmt: off
    @T.prim_func
    def stored(A: T.Buffer((128, 64), "float16"), B: T.Buffer((32, 64), "float16"), C: T.Buffer((128, 32), "float32")):
        T.device_entry()
        cta = T.cta_id([1])
        warp = T.warp_id([4])
        tx = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc_tcgen05_mma_AB((128, 64), "float16")
        Bs = pool.alloc_tcgen05_mma_AB((32, 64), "float16")
        done = TCGen05Bar(pool, 1)
        tmem = TMEMPool(pool, total_cols=512)
        acc = tmem.alloc_tcgen05_mma_D((128, 32), "float32", M=128, cta_group=1)  # noqa: F841
        pool.commit()
        done.init(1)
        tmem.commit()
        if alias:
            flat = T.decl_buffer((128 * 64,), "float16", data=As.data, scope="shared.dyn")  # noqa: F841
        for i in T.serial(64):
            As[tx, i] = A[tx, i]
        if tx < 32:
            for i in T.serial(64):
                Bs[tx, i] = B[tx, i]
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        descA: T.uint64
        descB: T.uint64
        descI: T.uint32
        if tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(T.address_of(descI), d_dtype="float32", a_dtype="float16", b_dtype="float16", M=128, N=32, K=16, trans_a=False, trans_b=False)  # noqa: E501
            for kk in T.unroll(4):
                T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(descA), As.ptr_to([0, kk * 16]), 1, 64, swizzle)  # <st-descA>
                T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(descB), Bs.ptr_to([0, kk * 16]), 1, 64, 3)
                T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem.addr, descA, descB, descI, 0, 0, 0, 0, kk > 0)  # <st-mma>
            done.arrive(0)
        done.wait(0, 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        reg = T.alloc_buffer((32,), "float32", scope="local")
        for i in T.serial(32):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem.addr, warp * 32, i))
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in T.serial(32):
            C[tx, i] = reg[i]
        T.cuda.cta_sync()
        if warp == 0:
            tmem.dealloc()
    # fmt: on

    return stored


def _stored_line(tag):
    src, start = inspect.getsourcelines(_stored_operands)
    return start + next(i for i, text in enumerate(src) if f"# <{tag}>" in text)


@pytest.mark.parametrize("swizzle", [2, 3])
def test_descriptor_swizzle_that_disagrees_with_a_stored_buffers_layout_is_found(swizzle):
    """No TMA here: the bytes were laid out by stores through the buffer's declared 128B-swizzle
    layout, so a 64B-swizzle descriptor reads them scrambled -- a finding at the encode line; the
    fixed twin (swizzle=3) is clean and gives numpy's answer."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    c = np.zeros((128, 32), np.float32)
    res = txlab.emulate(_stored_operands(swizzle=swizzle), a, b, c, arch="sm_100a")
    want = a.astype(np.float64) @ b.astype(np.float64).T
    if swizzle == 3:
        assert res.findings == []
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
        return
    bad = [f for f in res.findings if f.kind == "tcgen05_descriptor"]
    assert bad and bad[0].line == _stored_line("st-descA") and bad[0].other_line == _stored_line("st-mma"), res.findings
    assert "As" in bad[0].message and "64B swizzle" in bad[0].message and "128B swizzle" in bad[0].message
    assert "swizzle=3" in bad[0].message
    assert not np.allclose(c, want, atol=1e-3)


def test_descriptor_swizzle_is_not_judged_when_the_bytes_layout_is_unknown():
    """A second, flat declaration over A's bytes: stores may have gone through either, so the
    emulator does not say which swizzle the descriptor should have had (no finding, only the
    scrambled result)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    c = np.zeros((128, 32), np.float32)
    res = txlab.emulate(_stored_operands(swizzle=2, alias=True), a, b, c, arch="sm_100a")
    assert not [f for f in res.findings if f.kind == "tcgen05_descriptor"], res.findings


def _cp_kernel(shape, cg=1, issuer=0):
    """A 2-CTA cluster; each CTA stages its A[rank] (``rows`` x 256 bits, no-swizzle K-major
    canonical layout behind 1 KiB of padding, its descriptor addressed through ptr_byte_offset as
    TVM's tcgen05.cp lowering does), pre-zeroes its TMEM, tcgen05.cp's the rows in (``cta_group::2``:
    only CTA ``issuer`` issues, for the pair) and dumps its TMEM lanes to B[rank]."""
    rows = 4 if shape == "4x256b" else 128
    cp = f"tcgen05.cp.cta_group::{cg}.{shape}"
    commit = f"tcgen05.commit.cta_group::{cg}.mbarrier::arrive::one.shared::cluster" + (
        ".multicast::cluster.b64" if cg == 2 else ".b64"
    )
    mask = [T.uint16(3)] if cg == 2 else []
    everyone = cg == 1

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((2, rows, 8), "uint32"), B: T.Buffer((2, 128, 8), "uint32")):
        T.device_entry()
        T.cta_id([2])
        rank = T.cta_id_in_cluster([2])
        tx = T.thread_id([128])
        A_s = T.alloc_buffer((256 + 1024,), "uint32", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        desc = T.alloc_buffer((1,), "uint64", scope="local")
        o = T.alloc_buffer((8,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx[f"tcgen05.alloc.cta_group::{cg}.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cluster_sync()
        if tx < rows:
            for j in range(8):  # row tx, 32-bit word j: core matrix (tx // 8, j // 4), 16-byte rows
                A_s[256 + tx // 8 * 64 + j // 4 * 32 + tx % 8 * 4 + j % 4] = A[rank, tx, j]
        for j in range(8):
            T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, j), T.uint32(0))
        T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cluster_sync()
        if tx == 0 and (everyone or rank == issuer):
            T.cuda.tcgen05.encode_matrix_descriptor(desc.data, T.ptr_byte_offset(A_s.ptr_to([0]), 1024, "uint32"), ldo=8, sdo=16, swizzle=0)  # noqa: E501
            T.ptx[cp](T.cuda.get_tmem_addr(tmem_addr, 0, 0), desc[0])  # <cp>
            T.ptx[commit](T.address_of(bar), *mask)
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        T.ptx["tcgen05.ld.sync.aligned.32x32b.x8.b32"](*[o[j] for j in range(8)], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # noqa: E501
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for j in range(8):
            B[rank, tx, j] = o[j]
        T.cuda.cluster_sync()
        if tx // 32 == 0:
            T.ptx[f"tcgen05.dealloc.cta_group::{cg}.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    return k


def _cp_run(shape, cg=1, issuer=0):
    rows = 4 if shape == "4x256b" else 128
    a = np.random.default_rng(5).integers(1, 2**32, (2, rows, 8), dtype=np.uint32)
    b = np.zeros((2, 128, 8), np.uint32)
    res = txlab.emulate(_cp_kernel(shape, cg, issuer), a, b, arch="sm_100a")
    return a, b, res


def test_cp_descriptor_addressed_through_ptr_byte_offset():
    """TVM's tcgen05.cp and gemm_async lowerings step a descriptor's start address with
    ptr_byte_offset (a byte add on the pointer): the copy reads the rows 1 KiB in."""
    a, b, res = _cp_run("128x256b")
    assert res.findings == []
    np.testing.assert_array_equal(b, a)


def test_cp_4x256b_puts_one_row_in_each_lane_quarter():
    """PTX's .4x256b (CUTLASS's SM100_UTCCP_4dp256bit: rows at TMEM lane stride 32; TVM's B200-checked
    test_tcgen05_cp.py): rows 0..3 land on lanes 0, 32, 64, 96, the other lanes are untouched."""
    a, b, res = _cp_run("4x256b")
    assert res.findings == []
    want = np.zeros_like(b)
    want[:, 0::32] = a
    np.testing.assert_array_equal(b, want)


def test_cp_cta_group_2_copies_each_ctas_own_shared_memory_into_its_own_tmem():
    """One issue by the even CTA: each CTA of the pair copies from its own shared memory (the same
    descriptor address) into its own TMEM (TVM's B200-pinned cta_group=2 cp tests)."""
    a, b, res = _cp_run("128x256b", cg=2)
    assert res.findings == []
    np.testing.assert_array_equal(b, a)


def test_cp_cta_group_2_issued_by_the_odd_cta_is_found_at_the_cp():
    _, _, res = _cp_run("128x256b", cg=2, issuer=1)
    hits = [f for f in res.findings if f.kind == "tcgen05_pair"]
    assert hits and hits[0].line == _line("cp", _cp_kernel), res.findings


@pytest.mark.parametrize(
    ("m", "n", "k", "a_dtype", "b_dtype", "trans", "cta_group"),
    [
        (128, 224, 32, "float8_e4m3fn", "float8_e4m3fn", False, 1),  # kind::mxf8f6f4
        (256, 256, 32, "float8_e4m3fn", "float8_e5m2", True, 2),
        (128, 64, 64, "float4_e2m1fn", "float4_e2m1fn", False, 1),  # kind::mxf4: a/b format 1, not mxf8f6f4's 5
    ],
)
def test_the_block_scaled_instr_descriptor_is_tvms(m, n, k, a_dtype, b_dtype, trans, cta_group):
    """TVM's own test (codegen/test_tcgen05_descriptor_encoders.py): the emulated encoder's value equals TVM's
    compile-time encoder's. The emulator once coded E2M1 as 5 in every kind: 0x08901680 where TVM writes
    0x08900480 for fp4 x fp4."""
    from tvm.backend.cuda.cpp.descriptors import encode_instr_descriptor_block_scaled_uint32

    @T.prim_func
    def enc(out_ptr: T.handle):
        out = T.match_buffer(out_ptr, (1,), "uint64")
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        if tx == 0:
            desc = T.local_scalar("uint32")
            T.cuda.tcgen05.encode_instr_descriptor_block_scaled(
                T.address_of(desc), d_dtype="float32", a_dtype=a_dtype, b_dtype=b_dtype,
                sfa_dtype="float8_e8m0fnu", sfb_dtype="float8_e8m0fnu", sfa_tmem_addr=0, sfb_tmem_addr=0,
                M=m, N=n, K=k, trans_a=trans, trans_b=trans, n_cta_groups=cta_group,
            )  # fmt: skip
            out[0] = T.cast(desc, "uint64")

    out = np.zeros(1, np.uint64)
    assert txlab.emulate(enc, out, arch="sm_100a").ok
    want = encode_instr_descriptor_block_scaled_uint32(
        M=m, N=n, K=k, d_dtype="float32", a_dtype=a_dtype, b_dtype=b_dtype, sf_dtype="float8_e8m0fnu",
        trans_a=trans, trans_b=trans, cta_group=cta_group,
    )  # fmt: skip
    assert int(out[0]) == int(want), (hex(int(out[0])), hex(int(want)))
