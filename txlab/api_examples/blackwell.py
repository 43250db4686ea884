"""Blackwell (sm_100a) tcgen05 from TIRx: TMEM allocation through TMEMPool, SMEM operands through
SMEMPool.alloc_tcgen05_mma_AB, tcgen05 matrix/instruction descriptors, a tcgen05.mma committed to
a TCGen05Bar, and the TMEM read-back address (get_tmem_addr).

Compiled for sm_100a here; an H200 (sm_90) cannot run tcgen05/TMEM code.
"""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example

SM100 = "tcgen05 / TMEM instructions exist only on sm_100+ (Blackwell); an H200 cannot run it"

TCGEN05 = '''
@T.prim_func
def tcgen05_tile(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128, 64), "float16"),
                 C: T.Buffer((128, 128), "float32"), Info: T.Buffer((4,), "uint64")):
    # C = A @ B^T for one 128x128x64 f16 tile: operands copied into 128B-swizzled SMEM, four
    # k16 tcgen05.mma into a TMEM accumulator, committed to an mbarrier, read back per warp.
    T.device_entry()
    cta = T.cta_id([1])
    warp = T.warp_id([4])
    lane = T.lane_id([32])
    tx = T.thread_id([128])
    pool = SMEMPool()
    As = pool.alloc_tcgen05_mma_AB((128, 64), "float16")
    Bs = pool.alloc_tcgen05_mma_AB((128, 64), "float16")
    done = TCGen05Bar(pool, 1)
    tmem = TMEMPool(pool, total_cols=512)
    acc = tmem.alloc_tcgen05_mma_D((128, 128), "float32", M=128, cta_group=1)
    spare_c = tmem.alloc_tcgen05_mma_C((128, 128), "float32", M=128, cta_group=1)
    a_tmem = tmem.alloc_tcgen05_mma_A((128, 64), "float16", M=128, cta_group=1)
    sfa = tmem.alloc_sf((128, 4), "float8_e8m0fnu", sf_per_mma=4)
    scratch = tmem.alloc((128, 32), "float32")
    pool.commit()
    done.init(1)
    tmem.commit()
    for i in T.serial(64):
        As[tx, i] = A[tx, i]
        Bs[tx, i] = B[tx, i]
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    descA: T.uint64
    descB: T.uint64
    descI: T.uint32
    descS: T.uint32
    if tx == 0:
        T.cuda.tcgen05.encode_instr_descriptor(T.address_of(descI), d_dtype="float32", a_dtype="float16",
                                               b_dtype="float16", M=128, N=128, K=16, trans_a=False,
                                               trans_b=False)
        for k in T.unroll(4):
            T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(descA), As.ptr_to([0, k * 16]), 1, 64, 3)
            T.cuda.tcgen05.encode_matrix_descriptor(T.address_of(descB), Bs.ptr_to([0, k * 16]), 1, 64, 3)
            T.ptx["tcgen05.mma.cta_group::1.kind::f16"](tmem.addr, descA, descB, descI, 0, 0, 0, 0, k > 0)
        done.arrive(0)
        # block-scaled (mxf8f6f4) descriptor with its scale factors in TMEM, and the per-MMA
        # scale-factor id patched in at run time: recorded, not issued.
        T.cuda.tcgen05.encode_instr_descriptor_block_scaled(
            T.address_of(descS), d_dtype="float32", a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn",
            sfa_dtype="float8_e8m0fnu", sfb_dtype="float8_e8m0fnu", sfa_tmem_addr=0, sfb_tmem_addr=0,
            M=128, N=128, K=32, trans_a=False, trans_b=False)
        T.cuda.runtime_instr_desc(T.address_of(descS), 1)
        Info[0] = T.Cast("uint64", descI)
        Info[1] = T.Cast("uint64", descS)
        Info[2] = descA
        Info[3] = T.Cast("uint64", T.cuda.sm100_2sm_leader_smem_addr(done.ptr_to([0])))
        sd = SmemDescriptor()              # encode once, then step along K by 16-byte units
        sd.init(Bs.ptr_to([0, 0]), 1, 64, 3)
        sd.make_lo_uniform()
        Info[0] = sd.add_16B_offset(2)
    done.wait(0, 0)
    T.ptx.tcgen05.fence__after_thread_sync()
    reg = T.alloc_buffer((128,), "float32", scope="local")
    for i in T.serial(128):
        T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](reg[i], T.cuda.get_tmem_addr(tmem.addr, warp * 32, i))
    T.ptx.tcgen05.wait__ld.sync.aligned()
    for i in T.serial(128):
        C[tx, i] = reg[i]
    T.cuda.cta_sync()
    tmem.dealloc()
'''

def _tile_inputs():
    rng = np.random.default_rng(11)
    return [rng.standard_normal((128, 64)).astype(np.float16), rng.standard_normal((128, 64)).astype(np.float16),
            np.zeros((128, 128), np.float32), np.zeros(4, np.uint64)]


def _tile_expected(A, B, C, Info):
    return {"C": (A.astype(np.float64) @ B.astype(np.float64).T).astype(np.float32)}


EXAMPLES = [
    Example(
        id="tcgen05_tile", source=TCGEN05, arch="sm_100a", not_on_h200=SM100,
        uses=("Tx.cuda.tcgen05.encode_matrix_descriptor", "Tx.cuda.tcgen05.encode_instr_descriptor",
              "Tx.cuda.tcgen05.encode_instr_descriptor_block_scaled", "Tx.cuda.runtime_instr_desc",
              "Tx.cuda.get_tmem_addr", "Tx.cuda.sm100_2sm_leader_smem_addr",
              "tvm.backend.cuda.lang.TMEMPool", "tvm.backend.cuda.lang.TMEMPool.alloc",
              "tvm.backend.cuda.lang.TMEMPool.alloc_sf", "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_A",
              "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_C", "tvm.backend.cuda.lang.TMEMPool.alloc_tcgen05_mma_D",
              "tvm.backend.cuda.lang.SMEMPool.alloc_tcgen05_mma_AB", "tvm.backend.cuda.lang.SMEMPool.commit",
              "tvm.backend.cuda.lang.TCGen05Bar", "tvm.backend.cuda.lang.SMEMPool",
              "tvm.backend.cuda.lang.SmemDescriptor", "tvm.backend.cuda.lang.SmemDescriptor.make_lo_uniform"),
        emits={"Tx.cuda.tcgen05.encode_matrix_descriptor": r"encode_matrix_descriptor|smem_desc",
               "Tx.cuda.tcgen05.encode_instr_descriptor": r"instr_desc",
               "Tx.cuda.get_tmem_addr": r"tcgen05\.ld|tmem_addr",
               "tvm.backend.cuda.lang.TMEMPool": r"tcgen05\.(alloc|dealloc|relinquish)",
               "tvm.backend.cuda.lang.TCGen05Bar": r"tcgen05\.commit",
               "Tx.cuda.sm100_2sm_leader_smem_addr": r"& \(uint\)4278190079",  # & 0xFEFFFFFF: the leader CTA's window
               "tvm.backend.cuda.lang.SmemDescriptor": r"\bsd__buf_ptr",
               "tvm.backend.cuda.lang.SmemDescriptor.make_lo_uniform": r"= sd__buf_ptr\[0\]|make_uint2\(",
               "tvm.backend.cuda.lang.SMEMPool.commit": r"extern __shared__"},
        inputs=_tile_inputs, expected=_tile_expected, outputs=("C",), rtol=1e-5, atol=1e-5,
        note="compiled for sm_100a; on a B200 C == A @ B.T (f32 accumulate); checked on the CPU emulator "
             "(tcgen05.mma sums each k16 step exactly and rounds once to fp32: within fp32 ulps)",
    ),
]
