"""Hopper wgmma through TIRx: descriptors, accumulator fences, fence/commit/wait (sm_90a).

Both kernels compute one m64n64k16 f16 -> f32 tile with a single warpgroup. They pass the literal
``0`` for scale-d as TVM's own tests do (txlab.compat makes that legal; ``T.bool(False)`` is the
clearer spelling) and fence accumulators with ``T.cuda.wgmma.noop_barrier`` (also patched).
"""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example

SS = '''
@T.prim_func
def wgmma_ss(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
    # A is K x M and B is K x N in global memory (MN-major); C = A^T @ B.
    A = T.match_buffer(A_ptr, (16, 64), "float16", align=16)
    B = T.match_buffer(B_ptr, (16, 64), "float16", align=16)
    C = T.match_buffer(C_ptr, (64, 64), "float32", align=16)
    A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float16", 2, A.data,
                  64, 16, 128, 64, 16, 1, 1, 0, 3, 0, 0)  # 128B swizzle
    B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float16", 2, B.data,
                  64, 16, 128, 64, 16, 1, 1, 0, 3, 0, 0)
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])  # one warpgroup
    A_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    B_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    bar = T.shared_scalar("uint64")
    descA: T.uint64
    descB: T.uint64
    acc = T.alloc_buffer((32,), "float32", scope="local")
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](
            A_smem.data, T.address_of(A_map), 0, 0, T.address_of(bar))
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](
            B_smem.data, T.address_of(B_map), 0, 0, T.address_of(bar))
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(4096))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    for i in T.serial(32):
        acc[i] = T.float32(0)
        T.cuda.wgmma.noop_barrier(acc[i])
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), A_smem.data, 1, 64, 3)
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), B_smem.data, 1, 64, 3)
    T.ptx.wgmma.fence.sync.aligned()
    T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"](
        *[acc[i] for i in range(32)], descA, descB, 0, 1, 1, 1, 1)
    T.ptx.wgmma.commit_group.sync.aligned()
    T.ptx.wgmma.wait_group.sync.aligned(0)
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
    for i in T.serial(8):
        row = T.meta_var((tx % 32) // 4 + (tx // 32) * 16)
        col = T.meta_var(i * 8 + tx % 4 * 2)
        C[row, col] = acc[i * 4]
        C[row, col + 1] = acc[i * 4 + 1]
        C[row + 8, col] = acc[i * 4 + 2]
        C[row + 8, col + 1] = acc[i * 4 + 3]
'''

RS = '''
@T.prim_func
def wgmma_rs(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
    # A (64 x 16) comes from registers, B is K x N in shared memory; C = A @ B.
    A = T.match_buffer(A_ptr, (64, 16), "float16", align=16)
    B = T.match_buffer(B_ptr, (16, 64), "float16", align=16)
    C = T.match_buffer(C_ptr, (64, 64), "float32", align=16)
    B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float16", 2, B.data,
                  64, 16, 128, 64, 16, 1, 1, 0, 3, 0, 0)
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    B_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    bar = T.shared_scalar("uint64")
    descB: T.uint64
    a_frag = T.alloc_buffer((8,), "float16", scope="local")
    a_regs = T.decl_buffer((4,), "uint32", data=a_frag.data)  # the 4 .b32 A registers
    acc = T.alloc_buffer((32,), "float32", scope="local")
    for i in T.serial(2):
        row = T.meta_var((tx % 32) // 4 + (tx // 32) * 16)
        col = T.meta_var(i * 8 + tx % 4 * 2)
        a_frag[i * 4] = A[row, col]
        a_frag[i * 4 + 1] = A[row, col + 1]
        a_frag[i * 4 + 2] = A[row + 8, col]
        a_frag[i * 4 + 3] = A[row + 8, col + 1]
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](
            B_smem.data, T.address_of(B_map), 0, 0, T.address_of(bar))
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(2048))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    for i in T.serial(32):
        acc[i] = T.float32(0)
    for i in T.serial(4):
        T.cuda.wgmma.noop_barrier(a_regs[i])
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), B_smem.data, 1, 64, 3)
    T.ptx.wgmma.fence.sync.aligned()
    T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"](
        *[acc[i] for i in range(32)], *[a_regs[i] for i in range(4)], descB, 0, 1, 1, 1)
    T.ptx.wgmma.commit_group.sync.aligned()
    T.ptx.wgmma.wait_group.sync.aligned(0)
    for i in T.serial(4):
        T.cuda.wgmma.noop_barrier(a_regs[i])
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
    for i in T.serial(8):
        row = T.meta_var((tx % 32) // 4 + (tx // 32) * 16)
        col = T.meta_var(i * 8 + tx % 4 * 2)
        C[row, col] = acc[i * 4]
        C[row, col + 1] = acc[i * 4 + 1]
        C[row + 8, col] = acc[i * 4 + 2]
        C[row + 8, col + 1] = acc[i * 4 + 3]
'''


def inputs(form: str) -> list:
    rng = np.random.default_rng(0)
    a_shape = (16, 64) if form == "ss" else (64, 16)
    return [rng.standard_normal(a_shape).astype(np.float16),
            rng.standard_normal((16, 64)).astype(np.float16), np.zeros((64, 64), np.float32)]


def expected(form: str, A, B, C):
    a = A.astype(np.float32)
    return (a.T if form == "ss" else a) @ B.astype(np.float32)


EXAMPLES = [
    Example(
        id="wgmma_ss", source=SS, arch="sm_90a",
        uses=("Tx.cuda.wgmma.encode_matrix_descriptor", "Tx.cuda.wgmma.noop_barrier",
              "Tx.cuda.mbarrier_wait", "Tx.cuda.cta_sync"),
        inputs=lambda: inputs("ss"), expected=lambda *a: expected("ss", *a), rtol=1e-2, atol=1e-2,
        emits={"Tx.cuda.wgmma.noop_barrier": r"ptx_wgmma_fence_float"},  # the register fence it lowers to
        note="smem x smem: one HGMMA.64x64x16.F32 in SASS",
    ),
    Example(
        id="wgmma_rs", source=RS, arch="sm_90a",
        uses=("Tx.cuda.wgmma.noop_barrier", "Tx.cuda.wgmma.encode_matrix_descriptor"),
        inputs=lambda: inputs("rs"), expected=lambda *a: expected("rs", *a), rtol=1e-2, atol=1e-2,
        emits={"Tx.cuda.wgmma.noop_barrier": r"ptx_wgmma_fence_(float|uint)"},
        note="registers x smem: A's fragment is four uint32 registers",
    ),
]


def ss_kernel():
    return EXAMPLES[0].prim_func()


def rs_kernel():
    return EXAMPLES[1].prim_func()
