"""Global-memory access patterns with known coalescing: a strided read, a gather, a vector copy,
a global atomic (tests/test_coalescing.py; scripts/coalescing_h200.py profiles the same kernels)."""
from tvm.script import tirx as Tx

THREADS = 256


def strided_read(stride: int, n: int = 1 << 16):
    """``B[i] = A[i * stride]``: 4 sectors per request at stride 1, 8 at 2, 16 at 4, 32 at >= 8."""
    @Tx.prim_func
    def strided(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n * stride,), "float32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        B[bx * THREADS + tx] = A[(bx * THREADS + tx) * stride]
    return strided


def gather(n: int = 1 << 16):
    """``B[i] = A[I[i]]``: the read of A depends on memory (unknown statically)."""
    @Tx.prim_func
    def gather(A_ptr: Tx.handle, I_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n,), "float32")
        I = Tx.match_buffer(I_ptr, (n,), "int32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        B[bx * THREADS + tx] = A[I[bx * THREADS + tx]]
    return gather


def vector_copy(n: int = 1 << 16):
    """``B = A`` with 16-byte lanes (float32x4): a request per quarter warp, 4 sectors each."""
    @Tx.prim_func
    def vcopy(A_ptr: Tx.handle, B_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n,), "float32")
        B = Tx.match_buffer(B_ptr, (n,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // (THREADS * 4)])
        tx = Tx.thread_id([THREADS])
        for v in Tx.vectorized(4):
            B[(bx * THREADS + tx) * 4 + v] = A[(bx * THREADS + tx) * 4 + v]
    return vcopy


def column_sum(n: int = 512):
    """Each thread walks one row of a row-major matrix: lanes are a row apart (uncoalesced), and
    the per-row result goes out through a global atomic into one of 32 counters."""
    @Tx.prim_func
    def colsum(A_ptr: Tx.handle, S_ptr: Tx.handle):
        A = Tx.match_buffer(A_ptr, (n, n), "float32")
        S = Tx.match_buffer(S_ptr, (32,), "float32")
        Tx.device_entry()
        bx = Tx.cta_id([n // THREADS])
        tx = Tx.thread_id([THREADS])
        acc = Tx.alloc_local((1,), "float32")
        acc[0] = Tx.float32(0)
        for j in Tx.serial(4):
            acc[0] = acc[0] + A[bx * THREADS + tx, j]
        Tx.cuda.atomic_add(Tx.address_of(S[tx % 32]), acc[0])
    return colsum
