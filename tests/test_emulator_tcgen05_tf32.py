"""``kind::tf32`` tcgen05.mma: the emulator encodes the tf32 instruction descriptor's format code (2); a
descriptor TVM's encoder takes but its CUDA codegen refuses is refused by the emulator as by the build."""

import numpy as np
import pytest
from tvm.script import tirx as T

import txlab
import txlab.emulator.tensorcore as tc
from txlab.errors import CompileError

M, N, K = 128, 32, 32  # float32 rows of 128 bytes: one 128B-swizzle atom; K = 4 tf32 k8 steps


def _kernel(desc_t, d_t="float32"):
    # fmt: off
    @T.prim_func
    def tile_mma(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "float32", align=16)
        B = T.match_buffer(B_ptr, (N, K), "float32", align=16)
        C = T.match_buffer(C_ptr, (M, N), "float32")
        A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", 2, A.data, K, M, K * 4, K, M, 1, 1, 0, 3, 0, 0)
        B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float32", 2, B.data, K, N, K * 4, K, N, 1, 1, 0, 3, 0, 0)
        T.device_entry()
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A_smem = T.alloc_buffer((M * K,), "float32", scope="shared", align=1024)
                B_smem = T.alloc_buffer((N * K,), "float32", scope="shared", align=1024)
                tmem_addr = T.shared_scalar("uint32")
                tma_bar = T.shared_scalar("uint64")
                mma_bar = T.shared_scalar("uint64")
                reg = T.alloc_buffer((N,), "float32", scope="local")
                descA = T.alloc_buffer((1,), "uint64", scope="local")
                descB = T.alloc_buffer((1,), "uint64", scope="local")
                descI = T.alloc_buffer((1,), "uint32", scope="local")
                if tx // 32 == 0:
                    T.ptx["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"](T.address_of(tmem_addr), T.uint32(32))
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(T.address_of(tma_bar), T.uint32(1))
                    T.ptx.mbarrier.init.shared.b64(T.address_of(mma_bar), T.uint32(1))
                    T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.cta_sync()
                if tx == 0:
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](A_smem.data, T.address_of(A_map), 0, 0, T.address_of(tma_bar))
                    T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](B_smem.data, T.address_of(B_map), 0, 0, T.address_of(tma_bar))
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(tma_bar), T.uint32((M + N) * K * 4))
                    T.cuda.mbarrier_wait(T.address_of(tma_bar), 0)
                    T.cuda.tcgen05.encode_instr_descriptor(descI.data, d_dtype=d_t, a_dtype=desc_t, b_dtype=desc_t, M=M, N=N, K=8, trans_a=False, trans_b=False, n_cta_groups=1)  # <idesc>
                    for k in range(K // 8):
                        T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_smem[k * 8]), ldo=1, sdo=64, swizzle=3)
                        T.cuda.tcgen05.encode_matrix_descriptor(descB.data, T.address_of(B_smem[k * 8]), ldo=1, sdo=64, swizzle=3)
                        T.ptx["tcgen05.mma.cta_group::1.kind::tf32"](tmem_addr, descA[0], descB[0], descI[0], 0, 0, 0, 0, k > 0)
                    T.ptx["tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"](T.address_of(mma_bar))
                T.cuda.mbarrier_wait(T.address_of(mma_bar), 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for i in range(N):
                    T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem_addr, tx // 32 * 32, i))
                T.ptx.tcgen05.wait__ld.sync.aligned()
                for i in range(N):
                    C[tx, i] = reg[i]
                T.cuda.cta_sync()
                if tx // 32 == 0:
                    T.ptx["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned"]()
                    T.ptx["tcgen05.dealloc.cta_group::1.sync.aligned.b32"](tmem_addr, T.uint32(32))
    # fmt: on
    return tile_mma


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((N, K)).astype(np.float32)


def test_tf32_mma():
    a, b = _inputs()
    c = np.zeros((M, N), np.float32)
    res = txlab.emulate(_kernel("tf32"), a, b, c, arch="sm_100a")
    assert res.ok, res.summary()
    want = tc.tf32_value(a).astype(np.float64) @ tc.tf32_value(b).astype(np.float64).T
    assert np.abs(c - want).max() < 1e-4


@pytest.mark.parametrize(
    ("desc_t", "d_t", "said"),
    [
        ("tensor_float32", "float32", "Unrecognized PTX data type tensor_float32"),
        ("tf32", "bfloat16", "Invalid multiplicand data types"),
    ],
)
def test_a_descriptor_the_build_refuses_is_refused_as_the_build_does(desc_t, d_t, said):
    """TVM's encoder takes ``a_dtype="tensor_float32"`` and a bfloat16 accumulator, but its CUDA codegen refuses
    both: the emulator stops with the same CompileError (it once ran them, passing a kernel no GPU could run)."""
    a, b = _inputs()
    with pytest.raises(CompileError) as built:
        txlab.compile(_kernel(desc_t, d_t), arch="sm_100a")
    with pytest.raises(CompileError) as emulated:
        txlab.emulate(_kernel(desc_t, d_t), a, b, np.zeros((M, N), np.float32), arch="sm_100a")
    assert said in built.value.message and emulated.value.message == built.value.message
    assert emulated.value.stage == "codegen"
