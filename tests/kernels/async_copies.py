# Two cp.async tile copies into two shared tiles, then copies out of them, one in an unrolled
# loop that re-reads the same tile (ptxas merges those loads into one LDS). ``ops`` names the
# copies a build keeps: the line map's ground truth compiles each alone (tests/test_spans.py).
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.layout import S, TileLayout

OPS = ("async_a", "async_b", "out_a", "out_b")


def two_async_copies(ops=OPS):
    lay = TileLayout(S[(32, 32)])

    @T.prim_func
    def kernel(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"), C: T.Buffer((4, 32, 32), "float16")):
        T.device_entry()
        T.cta_id([1])
        T.thread_id([128])
        sa = T.alloc_buffer((32, 32), "float16", scope="shared", layout=lay)
        sb = T.alloc_buffer((32, 32), "float16", scope="shared", layout=lay)
        if "async_a" in ops:
            Tx.cta.copy_async(sa[0:32, 0:32], A[0:32, 0:32])
        if "async_b" in ops:
            Tx.cta.copy_async(sb[0:32, 0:32], B[0:32, 0:32])
        T.ptx.cp.async_.wait_all()
        T.cuda.cta_sync()
        for i in T.unroll(4):
            if "out_a" in ops:
                Tx.cta.copy(C[i, 0:32, 0:32], sa[0:32, 0:32])
        if "out_b" in ops:
            Tx.cta.copy(C[0, 0:32, 0:32], sb[0:32, 0:32])

    return kernel
