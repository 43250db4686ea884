"""Blackwell tcgen05 / TMEM bugs the emulator once ran silently (each planted bug is reported at its line,
its fixed twin stays clean): an MMA accumulating onto never-written TMEM and a tcgen05.ld of it
(uninitialized_tmem_read: tcgen05.alloc does not clear TMEM); MMA operands refilled before the MMA
completed (a shared_race with the tensor core's asynchronous read); .sync.aligned tcgen05 instructions run
by part of a warp (divergent_barrier); a cta_group::2 MMA reusing the accumulator before the peer CTA's
epilogue released it (tmem_race in the peer); a tcgen05.ld's registers read before tcgen05.wait::ld
(tmem_wait at the use); a missing tcgen05.fence::after/before_thread_sync around the synchronisation that
orders two threads' tcgen05 operations (missing_fence, PTX ISA 9.7.16.6); and tcgen05 instructions of one
kernel naming different .cta_group values (tcgen05_pair)."""

import inspect

import numpy as np
import pytest

pytest.importorskip("tvm")

from tvm.script import tirx as T  # noqa: E402

import txlab  # noqa: E402


def _line(fn, tag):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(src) if f"# <{tag}>" in text)


def _at(res, kind):
    return {(f.line, f.other_line) for f in res.findings if f.kind == kind}


def _kinds(res):
    return {f.kind for f in res.findings}


# ---- 1. never-written TMEM -------------------------------------------------------------------------------
def _accumulate(*, first_accumulates=False, read_unwritten=False):
    """Thread 0 issues two k16 MMAs into a fresh allocation; ``first_accumulates``: the first passes
    enable_input_d = 1 (``kk >= 0``: accumulating onto TMEM nothing wrote); ``read_unwritten``: every warp also
    loads column 40, which nothing wrote."""
    M, N, K = 128, 32, 32
    bias = 1 if first_accumulates else 0  # kk + 1 > 0: every MMA accumulates, the first too

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"), C: T.Buffer((128, N), "float32"), D: T.Buffer((128,), "float32")):  # noqa: E501
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        A_s = T.alloc_buffer((M * K,), "float16", scope="shared", align=1024)
        B_s = T.alloc_buffer((N * K,), "float16", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        reg = T.alloc_buffer((N,), "float32", scope="local")
        r2 = T.alloc_buffer((1,), "float32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.cuda.cta_sync()
        for r in range(M):
            if tx < K:
                A_s[r % 8 * 8 + r // 8 * 64 + tx % 8 + tx // 8 * M * 8] = A[r, tx]
        for r in range(N):
            if tx < K:
                B_s[r % 8 * 8 + r // 8 * 64 + tx % 8 + tx // 8 * N * 8] = B[r, tx]
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=M, N=N, K=16, trans_a=False, trans_b=False, n_cta_groups=1)  # noqa: E501
            for kk in range(K // 16):
                T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[kk * 2 * M * 8]), ldo=M, sdo=8, swizzle=0)
                T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[kk * 2 * N * 8]), ldo=N, sdo=8, swizzle=0)
                T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, kk + bias > 0)  # <acc-mma>  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(bar))
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        for i in range(N):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))
        if read_unwritten:
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r2[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 40))  # <acc-ld40>  # noqa: E501
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(N):
            C[tx, i] = reg[i]
        D[tx] = r2[0]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((128, N), np.float32)
    res = txlab.emulate(k, a, b, c, np.zeros(128, np.float32), arch="sm_100a")
    return res, a, b, c


def test_mma_accumulating_onto_never_written_tmem_is_found_at_the_mma():
    """The "forgot to zero the accumulator" bug: enable_input_d = 1 on the first MMA of a fresh allocation adds to
    whatever TMEM held (alloc does not clear it); the emulator's zeros hid it."""
    res, a, b, c = _accumulate()
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    res, *_ = _accumulate(first_accumulates=True)
    hits = [f for f in res.findings if f.kind == "uninitialized_tmem_read"]
    assert [f.line for f in hits] == [_line(_accumulate, "acc-mma")], res.findings
    assert "enable_input_d" in hits[0].message and "not zeroed" in hits[0].message


def test_ld_of_never_written_tmem_is_found_at_the_ld():
    res, *_ = _accumulate(read_unwritten=True)
    hits = [f for f in res.findings if f.kind == "uninitialized_tmem_read"]
    assert [f.line for f in hits] == [_line(_accumulate, "acc-ld40")], res.findings
    assert "columns 40..40" in hits[0].message


def _realloc():
    """Every warp stores a column, warp 0 deallocates and allocates again, every warp loads the column back."""

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
        T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0), A[tx])
        T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # <realloc-ld>  # noqa: E501
        T.ptx.tcgen05.wait__ld.sync.aligned()
        B[tx] = r[0]
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    return k


def test_a_second_allocation_of_freed_columns_is_never_written_again():
    """alloc hands out columns as they are: what a previous allocation wrote there is no value of the new one."""
    res = txlab.emulate(_realloc(), np.arange(128, dtype=np.float32), np.zeros(128, np.float32), arch="sm_100a")
    assert [f.line for f in res.findings if f.kind == "uninitialized_tmem_read"] == [_line(_realloc, "realloc-ld")]


# ---- 2. operands refilled before the MMA completed --------------------------------------------------------
def _refill(*, wait_mma_before_refill=False):
    """One stage, two k-tiles: thread 0 TMA-loads A and B, issues four k16 MMAs, and (the bug) TMA-loads the next
    k-tile into the same buffers while those MMAs may still be reading them. ``wait_mma_before_refill``: it commits
    and waits on the commit's mbarrier before each refill (the fix)."""
    M, N, BK, K = 128, 32, 64, 128

    # fmt: off
    @T.prim_func
    def k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float16", align=16)
        B = T.match_buffer(B_ptr, (N, K), "float16", align=16)
        C = T.match_buffer(C_ptr, (M, N), "float32")
        A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float16", 2, A.data, K, M, K * 2, BK, M, 1, 1, 0, 3, 0, 0)
        B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float16", 2, B.data, K, N, K * 2, BK, N, 1, 1, 0, 3, 0, 0)
        T.device_entry()
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A_s = T.alloc_buffer((M * BK,), "float16", scope="shared", align=1024)
                B_s = T.alloc_buffer((N * BK,), "float16", scope="shared", align=1024)
                tmem_addr = T.shared_scalar("uint32")
                tma_bar = T.shared_scalar("uint64")
                mma_bar = T.shared_scalar("uint64")
                step_bar = T.shared_scalar("uint64")
                reg = T.alloc_buffer((N,), "float32", scope="local")
                descA = T.alloc_buffer((1,), "uint64", scope="local")
                descB = T.alloc_buffer((1,), "uint64", scope="local")
                descI = T.alloc_buffer((1,), "uint32", scope="local")
                if tx // 32 == 0:
                    T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(T.address_of(tma_bar), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(T.address_of(mma_bar), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(T.address_of(step_bar), T.uint32(1))
                    T.ptx.fence.proxy.async_.shared__cta()
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                T.ptx.tcgen05.fence__after_thread_sync()
                if tx == 0:
                    T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=M, N=N, K=16, trans_a=False, trans_b=False, n_cta_groups=1)  # noqa: E501
                    for kt in range(K // BK):
                        if wait_mma_before_refill and kt > 0:
                            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(step_bar))
                            T.cuda.mbarrier_wait(T.address_of(step_bar), (kt - 1) % 2)
                        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_s.data, T.address_of(A_map), kt * BK, 0, T.address_of(tma_bar))  # <refill-tma>  # noqa: E501
                        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](B_s.data, T.address_of(B_map), kt * BK, 0, T.address_of(tma_bar))  # noqa: E501
                        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(tma_bar), T.uint32((M + N) * BK * 2))
                        T.cuda.mbarrier_wait(T.address_of(tma_bar), kt % 2)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        for kk in range(BK // 16):
                            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[kk * 16]), ldo=1, sdo=64, swizzle=3)
                            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[kk * 16]), ldo=1, sdo=64, swizzle=3)
                            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, kt * 4 + kk > 0)  # <refill-mma>  # noqa: E501
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(mma_bar))
                T.cuda.mbarrier_wait(T.address_of(mma_bar), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for i in range(N):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for i in range(N):
                    C[tx, i] = reg[i]
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.cta_sync()
                if tx // 32 == 0:
                    T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    res = txlab.emulate(k, a, b, c, arch="sm_100a")
    return res, a, b, c


def test_operands_refilled_before_the_mma_completed_is_a_shared_race():
    """The tensor core reads an MMA's shared-memory operands until the commit's mbarrier completes: a TMA landing
    on them before the writer waited for that is a race between the two lines (once a silent, deterministic wrong
    answer: every MMA read the last k-tile at its commit)."""
    res, a, b, c = _refill()
    races = _at(res, "shared_race")
    assert (_line(_refill, "refill-tma"), _line(_refill, "refill-mma")) in races, res.findings
    assert _kinds(res) == {"shared_race"}, res.findings
    # the operands are read at issue: the answer is the one the program means
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-4, atol=1e-4)
    res, a, b, c = _refill(wait_mma_before_refill=True)
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-4, atol=1e-4)


def _store_over(how):
    """Thread 0 issues an MMA, then writes its B operand before committing it: a store (``how="store"``) or a
    cp.async.bulk landing (``"bulk"``); ``"after_wait"``: the store comes after the wait on the commit's mbarrier."""

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128, 16), "float16"), B: T.Buffer((32, 16), "float16"), C: T.Buffer((128, 32), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        A_s = T.alloc_buffer((128 * 16,), "float16", scope="shared", align=1024)
        B_s = T.alloc_buffer((32 * 16,), "float16", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        bar = T.shared_scalar("uint64")
        bar2 = T.shared_scalar("uint64")
        reg = T.alloc_buffer((32,), "float32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar2), T.uint32(1))
        for kk in range(16):
            A_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 1024] = A[tx, kk]
        if tx < 32:
            for kk in range(16):
                B_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 256] = B[tx, kk]
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=128, N=32, K=16, trans_a=False, trans_b=False, n_cta_groups=1)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=128, sdo=8, swizzle=0)
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, False)  # <st-mma>  # noqa: E501
            if how == "store":
                B_s[0] = T.float16(0)  # <st-over>
            if how == "bulk":
                T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](T.address_of(B_s[0]), B.data, T.uint32(1024), T.address_of(bar2))  # <bulk-over>  # noqa: E501
                T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar2), T.uint32(1024))
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(bar))
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx == 0:
            if how == "bulk":
                T.cuda.mbarrier_wait(T.address_of(bar2), 0)
            if how == "after_wait":
                B_s[0] = T.float16(0)
        for i in range(32):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(32):
            C[tx, i] = reg[i]
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    return k


@pytest.mark.parametrize(("how", "tag"), [("store", "st-over"), ("bulk", "bulk-over"), ("after_wait", None)])
def test_a_store_or_bulk_copy_over_an_operand_in_flight_is_a_shared_race(how, tag):
    """Not only TMA: a plain store or a cp.async.bulk landing on the operand bytes after the MMA's issue, before
    waiting for its commit (after that wait: clean)."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 16)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    res = txlab.emulate(_store_over(how), a, b, np.zeros((128, 32), np.float32), arch="sm_100a")
    if tag is None:
        assert res.findings == []
        return
    assert _at(res, "shared_race") == {(_line(_store_over, tag), _line(_store_over, "st-mma"))}, res.findings


# ---- 3. .sync.aligned tcgen05 instructions by part of a warp ---------------------------------------------
def _partial(*, partial=True):
    first = 1 if partial else 32  # threads running alloc / dealloc: one, or the whole warp 0
    lanes = 16 if partial else 32  # lanes of each warp running st / ld / wait

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        tmem_addr = T.shared_scalar("uint32")
        r = T.alloc_buffer((1,), "float32", scope="local")
        if tx < first:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))  # <p-alloc>  # noqa: E501
        T.cuda.cta_sync()
        if tx % 32 < lanes:
            T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0), A[tx])  # <p-st>  # noqa: E501
            T.ptx.tcgen05.wait__st.sync.aligned()  # <p-wait-st>
        if tx % 32 < lanes:
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # <p-ld>  # noqa: E501
            T.ptx.tcgen05.wait__ld.sync.aligned()  # <p-wait-ld>
            B[tx] = r[0]
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        if tx < first:
            T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()  # <p-relinquish>
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))  # <p-dealloc>
    # fmt: on

    return k


def test_sync_aligned_tcgen05_by_part_of_a_warp_is_found_at_each_line():
    """tcgen05.alloc / dealloc / relinquish_alloc_permit / ld / st / wait are .sync.aligned (PTX ISA): every lane of
    the warp must execute them; one thread or half a warp leaves the result undefined on a GPU."""
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    res = txlab.emulate(_partial(partial=False), a, b, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_array_equal(b, a)
    res = txlab.emulate(_partial(), a, np.zeros_like(b), arch="sm_100a")
    got = {f.line for f in res.findings if f.kind == "divergent_barrier"}
    want = {
        _line(_partial, t) for t in ("p-alloc", "p-st", "p-wait-st", "p-ld", "p-wait-ld", "p-relinquish", "p-dealloc")
    }
    assert got == want, res.findings
    assert all(".sync.aligned" in f.message for f in res.findings if f.kind == "divergent_barrier")


# ---- 4. a cta_group::2 MMA over the peer CTA's accumulator before the peer released it --------------------
def _pair_reuse(*, peer_arrives=True):
    """A CTA pair: the leader issues an M=256 MMA, both CTAs' epilogues read their halves, then the leader issues
    a second MMA into the same accumulator after waiting on its ``empty`` barrier. ``peer_arrives``: the odd CTA's
    epilogue warps arrive on the leader's barrier too (remotely, count 8); else only the leader's 4 do (the bug)."""
    KK = 16

    # fmt: off
    @T.prim_func
    def pair(A: T.Buffer((256, KK), "float16"), B: T.Buffer((64, KK), "float16"), C: T.Buffer((256, 64), "float32")):
        T.device_entry()
        T.cta_id([2])
        rank = T.cta_id_in_cluster([2])
        tx = T.thread_id([160])
        A_s = T.alloc_buffer((128 * KK,), "float16", scope="shared", align=1024)
        B_s = T.alloc_buffer((32 * KK,), "float16", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        full = T.shared_scalar("uint64")
        empty = T.shared_scalar("uint64")
        done = T.shared_scalar("uint64")
        reg = T.alloc_buffer((64,), "float32", scope="local")
        mapped = T.alloc_buffer((1,), "uint32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(full), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(T.address_of(empty), T.uint32(8 if peer_arrives else 4))
            T.ptx.mbarrier.init.shared.b64(T.address_of(done), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cluster_sync()
        if tx < 128:
            for kk in range(KK):
                A_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 1024] = A[rank * 128 + tx, kk]
        if tx < 32:
            for kk in range(KK):
                B_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 256] = B[rank * 32 + tx, kk]
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cluster_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if rank == 0 and tx == 128:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=256, N=64, K=16, trans_a=False, trans_b=False, n_cta_groups=2)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=128, sdo=8, swizzle=0)
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            T.ptx["tcgen05.mma.cta_group::2.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, 0, 0, 0, 0, False)  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](T.address_of(full), T.uint16(3))  # noqa: E501
            T.cuda.mbarrier_wait(T.address_of(empty), 0)
            T.ptx.tcgen05.fence__after_thread_sync()
            T.ptx["tcgen05.mma.cta_group::2.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, 0, 0, 0, 0, True)  # <pair-mma2>  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](T.address_of(done), T.uint16(3))  # noqa: E501
        if tx < 128:
            T.cuda.mbarrier_wait(T.address_of(full), 0)
            T.ptx.tcgen05.fence__after_thread_sync()
            for i in range(64):
                T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))  # <pair-ld>  # noqa: E501
            T.ptx.tcgen05.wait__ld.sync.aligned()
            for i in range(64):
                C[rank * 128 + tx, i] = reg[i]
            T.ptx.tcgen05.fence__before_thread_sync()
            if tx % 32 == 0 and (peer_arrives or rank == 0):
                T.ptx.mapa.shared__cluster.u32(mapped[0], T.cuda.cvta_generic_to_shared(T.address_of(empty)), T.uint32(0))
                T.ptx.mbarrier.arrive.shared__cluster.b64(mapped[0])
            T.cuda.mbarrier_wait(T.address_of(done), 0)
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cluster_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::2.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, KK)).astype(np.float16)
    b = rng.standard_normal((64, KK)).astype(np.float16)
    c = np.zeros((256, 64), np.float32)
    res = txlab.emulate(pair, a, b, c, arch="sm_100a")
    return res, a, b, c


def test_pair_mma_over_the_peers_unreleased_accumulator_is_a_race_in_the_peer():
    """With cta_group::2 both CTAs' TMEM hold the accumulator: the leader's MMA must be ordered after the odd CTA's
    epilogue reads too (its warps' remote arrives carry their clocks), not only after the leader's own."""
    res, a, b, c = _pair_reuse()
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    res, *_ = _pair_reuse(peer_arrives=False)
    races = [f for f in res.findings if f.kind == "tmem_race"]
    assert races and all(f.cta == (1, 0, 0) for f in races), res.findings
    assert (races[0].line, races[0].other_line) == (_line(_pair_reuse, "pair-mma2"), _line(_pair_reuse, "pair-ld"))
    assert "cluster rank 1" in races[0].message


# ---- 5. a tcgen05.ld's registers used before tcgen05.wait::ld ---------------------------------------------
def _use_before_wait(*, wait_first=False):
    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([128])
        tmem_addr = T.shared_scalar("uint32")
        r = T.alloc_buffer((2,), "float32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        T.cuda.cta_sync()
        r[1] = A[tx] * T.float32(2)
        T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0), A[tx])
        T.ptx.tcgen05.wait__st.sync.aligned()
        T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # <u-ld>
        if wait_first:
            T.ptx.tcgen05.wait__ld.sync.aligned()
        B[tx] = r[0] + r[1] * T.float32(0)  # <u-use>
        T.ptx.tcgen05.wait__ld.sync.aligned()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    return k


def test_ld_registers_read_before_wait_ld_are_found_at_the_use():
    """PTX: tcgen05.ld is asynchronous and its destination registers are undefined until tcgen05.wait::ld; the
    emulator wrote them at the ld, so a read before the wait looked right. Another register (r[1]) is free to read."""
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    res = txlab.emulate(_use_before_wait(wait_first=True), a, b, arch="sm_100a")
    assert res.findings == []
    np.testing.assert_array_equal(b, a)
    res = txlab.emulate(_use_before_wait(), a, np.zeros_like(b), arch="sm_100a")
    assert _at(res, "tmem_wait") == {(_line(_use_before_wait, "u-use"), _line(_use_before_wait, "u-ld"))}, res.findings


# ---- 6. tcgen05 fences around the thread synchronisation ---------------------------------------------------
def _handoff(*, fence_after_wait=True, epilogue_fence_before=True, mma_fence_after=True):
    """Two MMA rounds into one accumulator, issued by warp 4; warps 0-3 read each round (tcgen05.ld, wait::ld) and
    release the accumulator on an ``empty`` mbarrier. The PTX ISA's canonical pattern (9.7.16.6.4.4): the readers
    put tcgen05.fence::after_thread_sync after their wait on the commit's mbarrier, and
    tcgen05.fence::before_thread_sync before their arrive; the MMA warp fence::after_thread_sync after its wait."""

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128, 16), "float16"), B: T.Buffer((32, 16), "float16"), C: T.Buffer((2, 128, 32), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([160])
        A_s = T.alloc_buffer((128 * 16,), "float16", scope="shared", align=1024)
        B_s = T.alloc_buffer((32 * 16,), "float16", scope="shared", align=1024)
        tmem_addr = T.shared_scalar("uint32")
        full = T.shared_scalar("uint64")
        empty = T.shared_scalar("uint64")
        reg = T.alloc_buffer((32,), "float32", scope="local")
        descA = T.alloc_buffer((1,), "uint64", scope="local")
        descB = T.alloc_buffer((1,), "uint64", scope="local")
        descI = T.alloc_buffer((1,), "uint32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(full), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(T.address_of(empty), T.uint32(4))
        if tx < 128:
            for kk in range(16):
                A_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 1024] = A[tx, kk]
        if tx < 32:
            for kk in range(16):
                B_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 256] = B[tx, kk]
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx == 128:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=128, N=32, K=16, trans_a=False, trans_b=False, n_cta_groups=1)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=128, sdo=8, swizzle=0)
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, False)
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(full))  # <h-commit1>  # noqa: E501
            T.cuda.mbarrier_wait(T.address_of(empty), 0)
            if mma_fence_after:
                T.ptx.tcgen05.fence__after_thread_sync()
            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, True)  # <h-mma2>  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(full))
        if tx < 128:
            for rnd in range(2):
                T.cuda.mbarrier_wait(T.address_of(full), rnd)
                if fence_after_wait:
                    T.ptx.tcgen05.fence__after_thread_sync()
                for i in range(32):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))  # <h-ld>  # noqa: E501
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for i in range(32):
                    C[rnd, tx, i] = reg[i]
                if epilogue_fence_before:
                    T.ptx.tcgen05.fence__before_thread_sync()
                if rnd == 0 and tx % 32 == 0:
                    T.ptx.mbarrier.arrive.shared.b64(T.address_of(empty))
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 16)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = np.zeros((2, 128, 32), np.float32)
    res = txlab.emulate(k, a, b, c, arch="sm_100a")
    return res, a, b, c


def test_the_canonical_fenced_handoff_is_clean():
    res, a, b, c = _handoff()
    assert res.findings == []
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c[0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c[1], 2 * want, rtol=1e-5, atol=1e-5)


def test_ld_after_the_commits_wait_without_fence_after_thread_sync():
    """PTX ISA 9.7.16.6.4.2: mma, commit, mbarrier wait, tcgen05.fence::after_thread_sync, tcgen05.ld -- the fence
    is what orders the (asynchronous) ld after the wait."""
    res, *_ = _handoff(fence_after_wait=False)
    assert _kinds(res) == {"missing_fence"}, res.findings
    assert (_line(_handoff, "h-ld"), _line(_handoff, "h-commit1")) in _at(res, "missing_fence")
    f = next(f for f in res.findings if f.line == _line(_handoff, "h-ld"))
    assert "fence::after_thread_sync" in f.message and "fence__after_thread_sync()" in f.message


def test_mma_after_the_readers_release_needs_both_fences():
    """9.7.16.6.4.4: ld, wait::ld, fence::before_thread_sync, arrive | wait, fence::after_thread_sync, mma. A missing
    before-fence is reported at the ld (its producer side), a missing after-fence at the MMA."""
    res, *_ = _handoff(epilogue_fence_before=False)
    assert _at(res, "missing_fence") == {(_line(_handoff, "h-ld"), _line(_handoff, "h-mma2"))}, res.findings
    assert "fence::before_thread_sync" in res.findings[0].message
    res, *_ = _handoff(mma_fence_after=False)
    assert _at(res, "missing_fence") == {(_line(_handoff, "h-mma2"), _line(_handoff, "h-ld"))}, res.findings
    assert "fence::after_thread_sync" in res.findings[0].message


def _st_then_other_warp_ld(*, fence_before=True, fence_after=True):
    """Warps 4-7 tcgen05.st into their lane quarters (warp w reaches lanes 32 * (w % 4)..), wait::st; a CTA barrier;
    warps 0-3 tcgen05.ld the same quarters."""

    # fmt: off
    @T.prim_func
    def k(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        tmem_addr = T.shared_scalar("uint32")
        r = T.alloc_buffer((1,), "float32", scope="local")
        if tx // 32 == 0:
            T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx >= 128:
            T.ptx["tcgen05.st.sync.aligned.32x32b.x1.b32"](T.cuda.get_tmem_addr(tmem_addr, tx % 128 // 32 * 32, 0), A[tx % 128])  # <x-st>  # noqa: E501
            T.ptx.tcgen05.wait__st.sync.aligned()
            if fence_before:
                T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        if tx < 128:
            if fence_after:
                T.ptx.tcgen05.fence__after_thread_sync()
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](r[0], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, 0))  # <x-ld>  # noqa: E501
            T.ptx.tcgen05.wait__ld.sync.aligned()
            B[tx] = r[0]
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx // 32 == 0:
            T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on

    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    return txlab.emulate(k, a, b, arch="sm_100a"), a, b


def test_a_store_read_by_another_warp_after_a_barrier_needs_both_fences():
    """st, wait::st, fence::before_thread_sync, bar.sync | bar.sync, fence::after_thread_sync, ld (another warp
    of the same lane quarter)."""
    res, a, b = _st_then_other_warp_ld()
    assert res.findings == []
    np.testing.assert_array_equal(b, a)
    st, ld = _line(_st_then_other_warp_ld, "x-st"), _line(_st_then_other_warp_ld, "x-ld")
    res, *_ = _st_then_other_warp_ld(fence_before=False)
    assert _at(res, "missing_fence") == {(st, ld)}, res.findings
    res, *_ = _st_then_other_warp_ld(fence_after=False)
    assert _at(res, "missing_fence") == {(ld, st)}, res.findings


# ---- 7. one kernel, two .cta_group values -------------------------------------------------------------------
def _mixed(*, alloc_group=2):
    KK = 16

    # fmt: off
    @T.prim_func
    def pair(A: T.Buffer((256, KK), "float16"), B: T.Buffer((64, KK), "float16"), C: T.Buffer((256, 64), "float32")):
        T.device_entry()
        T.cta_id([2])
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
            T.ptx[f"tcgen05.alloc.cta_group::{alloc_group}.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(64))  # <m-alloc>  # noqa: E501
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
        T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cluster_sync()
        for kk in range(KK):
            A_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 1024] = A[rank * 128 + tx, kk]
        if tx < 32:
            for kk in range(KK):
                B_s[tx % 8 * 8 + tx // 8 * 64 + kk % 8 + kk // 8 * 256] = B[rank * 32 + tx, kk]
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cluster_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if rank == 0 and tx == 0:
            T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype="float32", a_dtype="float16", b_dtype="float16", M=256, N=64, K=16, trans_a=False, trans_b=False, n_cta_groups=2)  # noqa: E501
            T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_s[0]), ldo=128, sdo=8, swizzle=0)
            T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_s[0]), ldo=32, sdo=8, swizzle=0)
            T.ptx["tcgen05.mma.cta_group::2.kind::f16"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, 0, 0, 0, 0, False)  # <m-mma>  # noqa: E501
            T.ptx["tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"](T.address_of(bar), T.uint16(3))  # noqa: E501
        T.cuda.mbarrier_wait(T.address_of(bar), 0)
        T.ptx.tcgen05.fence__after_thread_sync()
        for i in range(64):
            T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))
        T.ptx.tcgen05.wait__ld.sync.aligned()
        for i in range(64):
            C[rank * 128 + tx, i] = reg[i]
        T.ptx.tcgen05.fence__before_thread_sync()
        T.cuda.cluster_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if tx // 32 == 0:
            T.ptx[f"tcgen05.dealloc.cta_group::{alloc_group}.sync.aligned.b32"](tmem_addr, T.uint32(64))
    # fmt: on

    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, KK)).astype(np.float16)
    b = rng.standard_normal((64, KK)).astype(np.float16)
    c = np.zeros((256, 64), np.float32)
    return txlab.emulate(pair, a, b, c, arch="sm_100a"), a, b, c


def test_one_kernel_mixing_cta_group_values_is_found():
    """PTX ISA (tcgen05.alloc): "All tcgen05 instructions within a kernel must specify the same value for the
    .cta_group qualifier" -- a cta_group::1 allocation under cta_group::2 MMAs."""
    res, a, b, c = _mixed()
    assert res.findings == []
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    res, *_ = _mixed(alloc_group=1)
    hits = [f for f in res.findings if f.kind == "tcgen05_pair"]
    assert hits and hits[0].line == _line(_mixed, "m-mma") and hits[0].other_line == _line(_mixed, "m-alloc"), (
        res.findings
    )
    assert ".cta_group::1" in hits[0].message and ".cta_group::2" in hits[0].message
