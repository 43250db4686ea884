"""A real kernel with the pipeline protocol (notebook 04, the GPU test)."""

from __future__ import annotations


def demo_kernel(
    stages: int = 4,
    *,
    tiles: int = 16,
    rows: int = 32,
    consumers: int = 2,
    producer_phase: int = 1,
    init_empty: int | None = None,
):
    """A warp-specialized TIRx kernel over a ``stages``-deep TMA pipeline: warp 0 (one thread)
    streams ``tiles`` tiles of ``rows × 32·consumers`` float32 from ``A`` into shared memory with
    TMA (``Pipeline(pool, stages, full="tma", empty="mbar", init_empty=consumers)``); each consumer
    warp sums its 32 columns of every tile and releases the slot (lane 0 arrives on empty).
    ``Out[c] = A[:, c].sum()``. Returns the ``@T.prim_func``; arguments ``(A, Out)`` with
    ``A: (tiles·rows, 32·consumers)`` and ``Out: (32·consumers,)``, both float32.

    ``producer_phase`` and ``init_empty`` exist to build the classic broken variants (producer at
    phase 0, wrong arrival count) so :func:`from_kernel` can be shown reading them back; do not run
    those on a GPU, they hang."""
    from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    STAGES, NT, ROWS, NC = stages, tiles, rows, consumers
    PPHASE = producer_phase
    INIT_EMPTY = consumers if init_empty is None else init_empty
    COLS = 32 * NC
    THREADS = 32 * (NC + 1)
    TILE_BYTES = ROWS * COLS * 4

    @T.prim_func
    def pipeline_tile_sum(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * ROWS, COLS), "float32")
        Out = T.match_buffer(Out_ptr, (COLS,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([THREADS])
        pool = SMEMPool()
        A_smem = pool.alloc((STAGES, ROWS, COLS), "float32", align=128)
        pipe = Pipeline(pool, STAGES, full="tma", empty="mbar", init_empty=INIT_EMPTY)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            # producer: wait for a free slot, launch the TMA copy, announce its bytes
            ps = PipelineState(STAGES, PPHASE)
            for k in T.serial(NT):
                pipe.empty.wait(ps.stage, ps.phase)
                Tx.copy_async(
                    A_smem[ps.stage, :, :],
                    A[k * ROWS : (k + 1) * ROWS, :],
                    dispatch="tma_auto",
                    mbar=pipe.full.ptr_to([ps.stage]),
                )
                pipe.full.arrive(ps.stage, TILE_BYTES)
                ps.advance()
        elif tid >= 32:
            # consumer warps: wait for a full slot, sum it, release it (one arrival per warp)
            cs = PipelineState(STAGES, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NT):
                pipe.full.wait(cs.stage, cs.phase)
                for r in T.serial(ROWS):
                    acc[0] = acc[0] + A_smem[cs.stage, r, tid - 32]
                T.cuda.warp_sync()
                if tid % 32 == 0:
                    pipe.empty.arrive(cs.stage)
                cs.advance()
            Out[tid - 32] = acc[0]

    return pipeline_tile_sum


def cuda_target(arch: str = "sm_90a"):
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": arch})
