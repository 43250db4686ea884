# A warp max written as a shuffle loop and with Tx.cuda.warp_max: byte-identical SASS on sm_90a
# (tests/test_diff.py, tests/test_source_browser.py; run through txlab.magic.run_cell).
@T.prim_func
def warp_max_loop(X: T.Buffer((1024,), "float32"), Out: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    v = T.alloc_local((1,), "float32")
    v[0] = X[bx * 256 + tx]
    for k in T.unroll(5):
        v[0] = T.max(v[0], T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 16 >> k, 32))
    Out[bx * 256 + tx] = v[0]

@T.prim_func
def warp_max_lib(X: T.Buffer((1024,), "float32"), Out: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    v = T.alloc_local((1,), "float32")
    v[0] = X[bx * 256 + tx]
    v[0] = Tx.cuda.warp_max(v[0])
    Out[bx * 256 + tx] = v[0]
