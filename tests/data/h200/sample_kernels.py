# Kernels for gathering real ncu / compute-sanitizer output on the H200 (lead's sample run).
from tvm.script import tirx as T


@T.prim_func
def transpose_naive(A: T.Buffer((2048, 2048), "float32"), B: T.Buffer((2048, 2048), "float32")):
    T.device_entry()
    bx = T.cta_id([64])
    by = T.cta_id([64])
    tid = T.thread_id([1024])
    ty = tid // 32
    tx = tid % 32
    tile = T.alloc_shared((32, 32), "float32")
    tile[ty, tx] = A[by * 32 + ty, bx * 32 + tx]
    T.cuda.cta_sync()
    B[bx * 32 + ty, by * 32 + tx] = tile[tx, ty]


@T.prim_func
def transpose_padded(A: T.Buffer((2048, 2048), "float32"), B: T.Buffer((2048, 2048), "float32")):
    T.device_entry()
    bx = T.cta_id([64])
    by = T.cta_id([64])
    tid = T.thread_id([1024])
    ty = tid // 32
    tx = tid % 32
    tile = T.alloc_shared((32, 33), "float32")
    tile[ty, tx] = A[by * 32 + ty, bx * 32 + tx]
    T.cuda.cta_sync()
    B[bx * 32 + ty, by * 32 + tx] = tile[tx, ty]


@T.prim_func
def oob_write(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    if bx * 256 + tx < n:
        B[bx * 256 + tx] = A[bx * 256 + tx] * T.float32(2.0)
    if tx == 255:
        B[bx * 256 + tx + 1] = T.float32(1.0)


@T.prim_func
def shared_race(X: T.Buffer((256,), "float32"), out: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "float32")
    sm[tx] = X[tx]
    out[tx] = sm[(tx + 33) % 256]


@T.prim_func
def uninit_read(X: T.Buffer((256,), "float32"), out: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    sm = T.alloc_shared((512,), "float32")
    sm[tx] = X[tx]
    T.cuda.cta_sync()
    out[tx] = sm[tx + 256]


@T.prim_func
def divergent_sync(X: T.Buffer((256,), "float32"), out: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "float32")
    sm[tx] = X[tx]
    if tx % 2 == 0:
        T.cuda.cta_sync()
    out[tx] = sm[255 - tx]
