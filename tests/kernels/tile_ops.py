# Kernels carried from Apache TVM's tile-primitive tests (Apache License 2.0; see
# http://www.apache.org/licenses/LICENSE-2.0), adapted so that each tile op can be left out:
#   tests/python/tirx/operator/tile_primitive/cuda/copy/test_gmem_smem.py       (_build_kernel, "cta")
#   tests/python/tirx/operator/tile_primitive/cuda/elementwise/test_binary.py   (binary_op_region_region, add)
#   tests/python/tirx/operator/tile_primitive/cuda/reduction/test_reduction.py  (test_reduction_shared, sum)
# ``ops`` names the tile ops a build keeps (all by default): the line map's ground truth compiles
# each op alone and compares its SASS with what the map gives the op's line in the full kernel.
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout

COPY_OPS = ("load", "store")
BINARY_OPS = ("load_a", "load_b", "add", "store")
REDUCE_OPS = ("load", "sum", "store")


def gmem_smem_roundtrip(ops=COPY_OPS, shape=(256, 32), dtype="float16", n_threads=256):
    s_layout = TileLayout(S[shape])
    full = tuple(slice(0, d) for d in shape)

    @T.prim_func
    def kernel(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, shape, dtype)
        B = T.match_buffer(B_ptr, shape, dtype)
        T.device_entry()
        T.cta_id([1])
        T.warp_id([n_threads // 32])
        T.lane_id([32])
        T.thread_id([n_threads])
        A_smem = T.alloc_buffer(shape, dtype, scope="shared", layout=s_layout)
        if "load" in ops:
            Tx.cta.copy(A_smem[full], A[full])
        T.cuda.cta_sync()
        if "store" in ops:
            Tx.cta.copy(B[full], A_smem[full])

    return kernel


def binary_add(ops=BINARY_OPS, g_shape=(32, 32), dtype="float16", thread_cnt=64):
    g_layout = s_layout = TileLayout(S[g_shape])
    full = tuple(slice(None) for _ in g_shape)

    @T.prim_func
    def binary_op_region_region(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, g_shape, dtype, layout=g_layout)
        B = T.match_buffer(B_ptr, g_shape, dtype, layout=g_layout)
        T.device_entry()
        _cta_id = T.cta_id([1])
        _tid = T.thread_id([thread_cnt])
        A_smem = T.alloc_buffer(g_shape, dtype, scope="shared", layout=s_layout)
        B_smem = T.alloc_buffer(g_shape, dtype, scope="shared", layout=s_layout)
        if "load_a" in ops:
            Tx.cta.copy(A_smem[full], A[full])
        if "load_b" in ops:
            Tx.cta.copy(B_smem[full], B[full])
        T.cuda.cta_sync()
        if "add" in ops:
            Tx.cta.add(A_smem[full], A_smem[full], B_smem[full])
        T.cuda.cta_sync()
        if "store" in ops:
            Tx.cta.copy(A[full], A_smem[full])

    return binary_op_region_region


def reduce_sum(ops=REDUCE_OPS, src_shape=(32, 32), dst_shape=(32,), dtype="float32", thread_cnt=32):
    s_layout_src = TileLayout(S[src_shape])
    s_layout_dst = TileLayout(S[dst_shape])
    src_full = tuple(slice(None) for _ in src_shape)
    dst_full = tuple(slice(None) for _ in dst_shape)

    @T.prim_func
    def test_reduction(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, src_shape, dtype, layout=s_layout_src)
        B = T.match_buffer(B_ptr, dst_shape, dtype, layout=s_layout_dst)
        T.device_entry()
        _bx = T.cta_id([1])
        _tid = T.thread_id([thread_cnt])
        A_smem = T.alloc_buffer(src_shape, dtype, scope="shared", layout=s_layout_src)
        B_smem = T.alloc_buffer(dst_shape, dtype, scope="shared", layout=s_layout_dst)
        if "load" in ops:
            Tx.cta.copy(A_smem[src_full], A[src_full])
        T.cuda.cta_sync()
        if "sum" in ops:
            Tx.cta.sum(B_smem[dst_full], A_smem[src_full], axes=(-1,), accum=False)
        T.cuda.cta_sync()
        if "store" in ops:
            Tx.cta.copy(B[dst_full], B_smem[dst_full])

    return test_reduction


GEMM_OPS = ("load_a", "load_b", "gemm", "gemm_acc")


def warp_gemm_pair(ops=GEMM_OPS, dtype="float16"):
    """From tests/python/tirx/operator/tile_primitive/cuda/gemm/test_gemm_mma_m16n8k_.py (the
    m16n8k16 fragment layouts, one warp), with the operands loaded from global memory and a second,
    accumulating gemm."""
    from tvm.tirx.layout import laneid

    d_frag = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
    a_frag = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)]).tile_to([16, 16], [16, 8])
    b_frag = TileLayout(S[(4, 2, 8) : (1 @ laneid, 1, 4 @ laneid)]).tile_to([16, 8], [8, 8])

    @T.prim_func
    def gemm(A_ptr: T.handle, B_ptr: T.handle, D_ptr: T.handle):
        A_g = T.match_buffer(A_ptr, (16, 16), dtype)
        B_g = T.match_buffer(B_ptr, (16, 8), dtype)
        D_g = T.match_buffer(D_ptr, (2, 16, 8), "float32")
        T.device_entry()
        _cta = T.cta_id([1])
        _warp = T.warp_id([1])
        lane = T.lane_id([32])
        A = T.alloc_buffer((16, 16), dtype, scope="local", layout=a_frag)
        B = T.alloc_buffer((16, 8), dtype, scope="local", layout=b_frag)
        C = T.alloc_buffer((16, 8), "float32", scope="local", layout=d_frag)
        D = T.alloc_buffer((16, 8), "float32", scope="local", layout=d_frag)
        E = T.alloc_buffer((16, 8), "float32", scope="local", layout=d_frag)
        if "load_a" in ops:
            Tx.warp.copy(A[:, :], A_g[:, :])
        if "load_b" in ops:
            Tx.warp.copy(B[:, :], B_g[:, :])
        if "gemm" in ops:
            Tx.warp.gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)
        if "gemm_acc" in ops:
            Tx.warp.gemm(E, A, B, D, transpose_A=False, transpose_B=False, alpha=1.0, beta=1.0)
        D_reg = D.local(4)
        E_reg = E.local(4)
        for c in T.unroll(4):
            D_g[0, lane // 4 + (c // 2) * 8, (lane % 4) * 2 + c % 2] = D_reg[c]
            D_g[1, lane // 4 + (c // 2) * 8, (lane % 4) * 2 + c % 2] = E_reg[c]

    return gemm
