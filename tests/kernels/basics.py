# Kernels used by the foundation tests (no imports: run through txlab.magic.run_cell, like a %%tirx cell).
@T.prim_func
def scale(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < n:
        B[i] = A[i] * T.float32(2.0)

@T.prim_func
def row_sum_smem(X: T.Buffer((4096, 256), "float32"), out: T.Buffer((4096,), "float32")):
    T.device_entry()
    row = T.cta_id([4096])
    tx = T.thread_id([256])
    sm = T.alloc_shared((256,), "float32")
    sm[tx] = X[row, tx]
    T.cuda.cta_sync()
    s = T.alloc_local((1,), "int32")
    s[0] = 128
    while s[0] >= 1:
        if tx < s[0]:
            sm[tx] += sm[tx + s[0]]
        T.cuda.cta_sync()
        s[0] = s[0] // 2
    if tx == 0:
        out[row] = sm[0]

@T.prim_func
def warp_sums(X: T.Buffer((1 << 20,), "float32"), out: T.Buffer((1 << 15,), "float32")):
    T.device_entry()
    bx = T.cta_id([4096])
    tx = T.thread_id([256])
    v = T.alloc_local((1,), "float32")
    v[0] = Tx.cuda.warp_sum(X[bx * 256 + tx])
    if tx % 32 == 0:
        out[bx * 8 + tx // 32] = v[0]
