"""Addresses and barriers around TMA on Hopper: TMABar (expect_tx + complete_tx), shared-window
addresses (cvta_generic_to_shared, smem_addr_from_uint64), and the cooperative grid barrier."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

TMA = '''
@T.prim_func
def tma_tile(A_ptr: T.handle, Out_ptr: T.handle, Addr_ptr: T.handle):
    # One 2-D TMA load (16 x 64 f16, no swizzle, so shared memory is row-major) completes a
    # TMABar; then every thread reads the tile and records shared-window addresses.
    A = T.match_buffer(A_ptr, (16, 64), "float16", align=16)
    Out = T.match_buffer(Out_ptr, (16, 64), "float32", align=16)
    Addr = T.match_buffer(Addr_ptr, (2, 128), "uint32", align=16)
    A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float16", 2, A.data,
                  64, 16, 128, 64, 16, 1, 1, 0, 0, 0, 0)
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = SMEMPool()
    tile = pool.alloc((16, 64), "float16", align=1024)
    bar = TMABar(pool, 1)
    pool.commit()
    bar.init(1)
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"](
            tile.data, T.address_of(A_map), 0, 0, bar.ptr_to([0]))
        bar.arrive(0, 2048)                       # expect_tx: 16 * 64 * 2 bytes
    bar.wait(0, 0)
    for j in T.serial(8):
        Out[tx // 8, (tx % 8) * 8 + j] = T.Cast("float32", tile[tx // 8, (tx % 8) * 8 + j])
    base = T.cuda.cvta_generic_to_shared(tile.ptr_to([0, 0]))
    mine = T.cuda.cvta_generic_to_shared(tile.ptr_to([tx // 64, tx % 64]))
    Addr[0, tx] = mine - base                     # 2 bytes per f16 element
    Addr[1, tx] = T.cuda.smem_addr_from_uint64(T.Cast("uint64", mine)) - mine
'''


def _tma_inputs():
    rng = np.random.default_rng(7)
    return [rng.integers(-500, 500, (16, 64)).astype(np.float16), np.zeros((16, 64), np.float32),
            np.full((2, 128), 7, np.uint32)]


GRID = kernel_source(
    "grid_barrier", 'X: T.Buffer((512,), "float32"), Y: T.Buffer((512,), "float32")',
    ctas=4, threads=128,
    comment=("Y = 2 X, then X[i] = Y[(i + 128) % 512]: every CTA writes its part of Y, the whole grid meets at",
             "grid_sync, then each CTA reads a neighbour's part. A grid barrier needs a cooperative launch,",
             "which TVM makes when the kernel names it in tirx.kernel_launch_params."),
    attrs='{"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]}',
    body='''
    i = cta * 128 + tx
    Y[i] = X[i] * T.float32(2.0)
    T.cuda.thread_fence()
    T.cuda.grid_sync()
    X[i] = Y[(i + 128) % 512]
''',
)


def _grid_inputs():
    return [np.arange(512, dtype=np.float32), np.zeros(512, np.float32)]


def _grid_expected(X, Y):
    return {"X": np.roll(X * 2, -128), "Y": X * 2}


EXAMPLES = [
    Example(
        id="tma_tile", source=TMA, arch="sm_90a",
        uses=("tvm.backend.cuda.lang.TMABar", "Tx.cuda.cvta_generic_to_shared", "Tx.cuda.smem_addr_from_uint64",
              "tvm.backend.cuda.lang.SMEMPool", "Tx.cuda.cta_sync"),
        inputs=_tma_inputs, outputs=("Out", "Addr"),
        expected=lambda A, O, Ad: {"Out": A.astype(np.float32),
                                   "Addr": np.stack([2 * np.arange(128), np.zeros(128)]).astype(np.uint32)},
        emits={"tvm.backend.cuda.lang.TMABar": r"expect_tx|mbarrier",
               "Tx.cuda.cvta_generic_to_shared": r"cvta_generic_to_shared",
               "Tx.cuda.smem_addr_from_uint64": r"smem_addr_from_uint64|static_cast<unsigned int>"},
    ),
    Example(
        id="grid_barrier", source=GRID, arch="sm_80",
        uses=("Tx.cuda.grid_sync", "Tx.cuda.thread_fence"),
        inputs=_grid_inputs, outputs=("X", "Y"), expected=_grid_expected,
        not_on_h200=("not in the H200 record yet: the record predates txlab reading the cooperative launch flag; "
                     "the cooperative launch ran right on an H100 (2026-12-07)"),
        emits={"Tx.cuda.grid_sync": r"this_grid\(\)\.sync|grid_sync"},
        note="a cooperative launch (tirx.use_cooperative_launch); without it the GPU faults at grid_sync",
    ),
]
