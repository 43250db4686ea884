"""Hopper wgmma through TIRx: descriptors, accumulator fences, fence/commit/wait (sm_90a).

Both kernels compute one m64n64k16 f16 -> f32 tile with a single warpgroup. They pass the literal
``0`` for scale-d as TVM's own tests do (txlab.compat makes that legal; ``T.bool(False)`` is the
clearer spelling) and fence accumulators with ``T.cuda.wgmma.noop_barrier`` (also patched).
"""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example

# The two kernels' texts are built from the pieces they share (each Example's source is still one
# whole kernel): the global operands (A's shape differs), a 16 x 64 f16 operand's TMA tensor map
# (128B swizzle) and its load onto the mbarrier, the barrier's setup, the wgmma issue, and the loop
# over the wgmma register fragment (each thread holds rows row and row + 8, columns col and col + 1
# of every 8-column block).
def _operands(a_shape: str) -> str:
    return "\n".join([f'    A = T.match_buffer(A_ptr, {a_shape}, "float16", align=16)',
                      '    B = T.match_buffer(B_ptr, (16, 64), "float16", align=16)',
                      '    C = T.match_buffer(C_ptr, (64, 64), "float32", align=16)'])


def _tensor_map(x: str, note: str = "") -> str:
    return "\n".join([f'    {x}_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)',
                      f'    T.call_packed("runtime.cuTensorMapEncodeTiled", {x}_map, "float16", 2, {x}.data,',
                      f"                  64, 16, 128, 64, 16, 1, 1, 0, 3, 0, 0){note}"])


def _tma_load(x: str) -> str:
    return "\n".join(['        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](',
                      f"            {x}_smem.data, T.address_of({x}_map), 0, 0, T.address_of(bar))"])


_BARRIER_INIT = '''\
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()'''


def _mma(operands: str) -> str:
    """Fence the registers, issue one m64n64k16 f16 -> f32 wgmma into the 32 accumulators with
    ``operands`` (A's descriptor or registers, B's descriptor, the scale and transpose flags), commit
    it and wait for it."""
    return "\n".join(["    T.ptx.wgmma.fence.sync.aligned()",
                      '    T.ptx["wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"](',
                      f"        *[acc[i] for i in range(32)], {operands})",
                      "    T.ptx.wgmma.commit_group.sync.aligned()",
                      "    T.ptx.wgmma.wait_group.sync.aligned(0)"])


def _per_fragment(blocks: int, element: str) -> str:
    """A loop over ``blocks`` 8-column blocks of the fragment; ``element`` assigns one element,
    ``{rc}`` its tile index and ``{k}`` its register."""
    elements = [("row, col", "i * 4"), ("row, col + 1", "i * 4 + 1"), ("row + 8, col", "i * 4 + 2"),
                ("row + 8, col + 1", "i * 4 + 3")]
    return "\n".join([f"    for i in T.serial({blocks}):",
                      "        row = T.meta_var((tx % 32) // 4 + (tx // 32) * 16)",
                      "        col = T.meta_var(i * 8 + tx % 4 * 2)",
                      *("        " + element.format(rc=rc, k=k) for rc, k in elements)])


SS = f'''
@T.prim_func
def wgmma_ss(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
    # A is K x M and B is K x N in global memory (MN-major); C = A^T @ B.
{_operands("(16, 64)")}
{_tensor_map("A", "  # 128B swizzle")}
{_tensor_map("B")}
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])  # one warpgroup
    A_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    B_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    bar = T.shared_scalar("uint64")
    descA: T.uint64
    descB: T.uint64
    acc = T.alloc_buffer((32,), "float32", scope="local")
{_BARRIER_INIT}
    if tx == 0:
{_tma_load("A")}
{_tma_load("B")}
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(4096))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    for i in T.serial(32):
        acc[i] = T.float32(0)
        T.cuda.wgmma.noop_barrier(acc[i])
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), A_smem.data, 1, 64, 3)
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), B_smem.data, 1, 64, 3)
{_mma("descA, descB, 0, 1, 1, 1, 1")}
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
{_per_fragment(8, "C[{rc}] = acc[{k}]")}
'''

RS = f'''
@T.prim_func
def wgmma_rs(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
    # A (64 x 16) comes from registers, B is K x N in shared memory; C = A @ B.
{_operands("(64, 16)")}
{_tensor_map("B")}
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    B_smem = T.alloc_buffer((16, 64), "float16", scope="shared", align=1024)
    bar = T.shared_scalar("uint64")
    descB: T.uint64
    a_frag = T.alloc_buffer((8,), "float16", scope="local")
    a_regs = T.decl_buffer((4,), "uint32", data=a_frag.data)  # the 4 .b32 A registers
    acc = T.alloc_buffer((32,), "float32", scope="local")
{_per_fragment(2, "a_frag[{k}] = A[{rc}]")}
{_BARRIER_INIT}
    if tx == 0:
{_tma_load("B")}
        T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(2048))
    T.cuda.mbarrier_wait(T.address_of(bar), 0)
    for i in T.serial(32):
        acc[i] = T.float32(0)
    for i in T.serial(4):
        T.cuda.wgmma.noop_barrier(a_regs[i])
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), B_smem.data, 1, 64, 3)
{_mma("*[a_regs[i] for i in range(4)], descB, 0, 1, 1, 1")}
    for i in T.serial(4):
        T.cuda.wgmma.noop_barrier(a_regs[i])
    for i in T.serial(32):
        T.cuda.wgmma.noop_barrier(acc[i])
{_per_fragment(8, "C[{rc}] = acc[{k}]")}
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
