"""tvm.backend.cuda.lang on Hopper: SMEMPool + Pipeline/PipelineState/MBarrier between warp roles,
and MBarrier.remote_view across a 2-CTA cluster. Both check a real result on the GPU."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example

PIPE = '''
@T.prim_func
def role_pipeline(X: T.Buffer((1024,), "float32"), Y: T.Buffer((1024,), "float32")):
    # Warpgroup 0 produces 8 chunks of 128 floats through a 2-stage shared-memory ring; warpgroup 1
    # consumes them. full[s]: 128 producer arrivals; empty[s]: 128 consumer arrivals.
    T.device_entry()
    cta = T.cta_id([1])
    wg = T.warpgroup_id([2])
    warp = T.warp_id_in_wg([4])
    tid = T.thread_id_in_wg([128])
    T.thread_id([256])
    pool = SMEMPool()
    ring = pool.alloc((2, 128), "float32")
    pipe = Pipeline(pool, 2, full="mbar", empty="mbar", init_full=128, init_empty=128)
    pool.commit()
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    with WarpgroupRole(wg, 0):
        ps = PipelineState(2, 1)           # a fresh empty barrier counts as released
        for i in T.serial(8):
            pipe.empty.wait(ps.stage, ps.phase)
            ring[ps.stage, tid] = X[i * 128 + tid]
            pipe.full.arrive(ps.stage)
            ps.advance()
    with WarpgroupRole(wg, 1):
        cs = PipelineState(2, 0)
        for i in T.serial(8):
            pipe.full.wait(cs.stage, cs.phase)
            v = T.local_scalar("float32")
            v = ring[cs.stage, tid]
            with WarpRole(warp, 0):        # warp 0 of the consumers also adds 1
                v = v + T.float32(1)
            Y[i * 128 + tid] = v * T.float32(2)
            pipe.empty.arrive(cs.stage)
            cs.advance()
'''


def _pipe_expected(X, Y):
    y = (X * 2).reshape(8, 128).copy()
    y[:, :32] = (X.reshape(8, 128)[:, :32] + 1) * 2
    return y.reshape(-1)


REMOTE = '''
@T.prim_func
def cluster_remote_arrive(Out: T.Buffer((2, 64), "int32")):
    # Each CTA of a 2-CTA cluster waits on its own barrier, which only the *other* CTA arrives on
    # (through remote_view): finishing at all proves the remote arrivals landed.
    T.device_entry()
    cta = T.cta_id([2])
    rank = T.cta_id_in_cluster([2])
    tx = T.thread_id([64])
    pool = SMEMPool()
    bar = MBarrier(pool, 1)
    pool.commit()
    bar.init(64)
    T.ptx.fence.mbarrier_init.release.cluster()
    T.cuda.cluster_sync()
    peer = bar.remote_view(1 - rank)
    peer.arrive(0)
    bar.wait(0, 0)
    Out[rank, tx] = T.Cast("int32", rank) * 100 + tx
    T.cuda.cluster_sync()
'''

EXAMPLES = [
    Example(
        id="role_pipeline", source=PIPE, arch="sm_90a",
        uses=("tvm.backend.cuda.lang.SMEMPool", "tvm.backend.cuda.lang.Pipeline",
              "tvm.backend.cuda.lang.PipelineState", "tvm.backend.cuda.lang.MBarrier",
              "tvm.backend.cuda.lang.WarpgroupRole", "tvm.backend.cuda.lang.WarpRole",
              "tvm.backend.cuda.lang.SMEMPool.commit"),
        inputs=lambda: [np.arange(1024, dtype=np.float32) - 300, np.zeros(1024, np.float32)],
        expected=_pipe_expected, outputs=("Y",),
        emits={"tvm.backend.cuda.lang.MBarrier": r"mbarrier", "tvm.backend.cuda.lang.Pipeline": r"mbarrier",
               "tvm.backend.cuda.lang.WarpgroupRole": r"if \(\(warp_id_in_cta >> 2\) == ",
               "tvm.backend.cuda.lang.WarpRole": r"if \(\(warp_id_in_cta % 4\) == "},
        note="8 chunks through a 2-stage ring; 16 phase flips on each barrier",
    ),
    Example(
        id="cluster_remote_arrive", source=REMOTE, arch="sm_90a",
        uses=("tvm.backend.cuda.lang.MBarrier", "tvm.backend.cuda.lang.MBarrier.remote_view",
              "tvm.backend.cuda.lang.SMEMPool", "Tx.cuda.cluster_sync"),
        inputs=lambda: [np.zeros((2, 64), np.int32)],
        expected=lambda O: (np.arange(2)[:, None] * 100 + np.arange(64)[None, :]).astype(np.int32),
        emits={"tvm.backend.cuda.lang.MBarrier.remote_view": r"mapa|shared::cluster"},
    ),
]
