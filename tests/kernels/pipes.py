"""A 2-stage (Pipeline + PipelineState) and a 5-stage (raw TMABar / MBarrier, parities from the loop index)
producer/consumer over TMA and mbarriers, with plantable bugs, for txlab.pipelines.from_kernel."""

from __future__ import annotations


def two_stage(*, expect="ok", arrive="wg", cons_xor=0, pphase=1, init_empty=1, tiles=6, base=128):
    """2-stage ring; producer (warp 0, elected lane) loads an A tile (16x64 f32 = 4096 B) and a
    B tile (8x64 f32 = 2048 B) per stage onto ONE full barrier (expect 6144 B). One consumer
    warpgroup (128 threads) releases the slot: one arrival per warpgroup (init_empty=1).

    expect: "ok" (6144) | "a_only" (4096, forgets B) | "double" (12288)
    arrive: "wg" (tid_c == 0) | "warp" (tid_c % 32 == 0 -> 4 arrivals) | "none" (every thread)
    cons_xor: XOR the consumer's full-wait parity (wrong parity)
    """
    from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    S, NT = 2, tiles
    AB = 16 * 64 * 4
    BB = 8 * 64 * 4
    EXP = {"ok": AB + BB, "a_only": AB, "double": 2 * (AB + BB)}[expect]

    @T.prim_func
    def two_stage_k(A_ptr: T.handle, B_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * 16, 64), "float32")
        B = T.match_buffer(B_ptr, (NT * 8, 64), "float32")
        Out = T.match_buffer(Out_ptr, (128,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([base + 128])
        pool = SMEMPool()
        As = pool.alloc((S, 16, 64), "float32", align=128)
        Bs = pool.alloc((S, 8, 64), "float32", align=128)
        pipe = Pipeline(pool, S, full="tma", empty="mbar", init_empty=init_empty)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid < 32:
            if T.cuda.elect_sync():
                ps = PipelineState(S, pphase)
                for k in T.serial(NT):
                    pipe.empty.wait(ps.stage, ps.phase)
                    Tx.copy_async(
                        As[ps.stage, :, :],
                        A[k * 16 : (k + 1) * 16, :],
                        dispatch="tma_auto",
                        mbar=pipe.full.ptr_to([ps.stage]),
                    )
                    Tx.copy_async(
                        Bs[ps.stage, :, :],
                        B[k * 8 : (k + 1) * 8, :],
                        dispatch="tma_auto",
                        mbar=pipe.full.ptr_to([ps.stage]),
                    )
                    pipe.full.arrive(ps.stage, EXP)
                    ps.advance()
        elif tid >= base:
            cs = PipelineState(S, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            c = tid - base
            for k in T.serial(NT):
                pipe.full.wait(cs.stage, cs.phase ^ cons_xor)
                for r in T.serial(8):
                    acc[0] = acc[0] + As[cs.stage, r + (c // 64) * 8, c % 64] + Bs[cs.stage, r, c % 64]
                T.cuda.warpgroup_sync(1)
                if arrive == "wg":
                    if c == 0:
                        pipe.empty.arrive(cs.stage)
                elif arrive == "warp":
                    if c % 32 == 0:
                        pipe.empty.arrive(cs.stage)
                elif arrive == "count4":
                    if c == 0:
                        pipe.empty.arrive(cs.stage, count=4)
                else:
                    pipe.empty.arrive(cs.stage)
                cs.advance()
            Out[c] = acc[0]

    return two_stage_k


def five_stage(
    *,
    init_empty=3,
    cons_phase=0,
    prod_phase=1,
    bad_wait_xor=0,
    skip_last_arrive=False,
    skip_first_arrive=False,
    tiles=12,
    expect_tx_sep=False,
):
    """5-stage ring, one elected producer lane, three consumer warps (each lane 0 arrives on empty).
    Raw TMABar / MBarrier objects (not Pipeline), phases computed from k (no PipelineState):
    stage = k % 5, parity = (k // 5) & 1.

    bad_wait_xor: XOR the consumers' full-wait parity.
    skip_last_arrive: consumer warp 2 does not arrive on the last tile (an arrival that depends on k).
    expect_tx_sep: producer uses mbarrier.expect_tx + plain arrive instead of arrive.expect_tx.
    """
    from tvm.backend.cuda.lang import MBarrier, SMEMPool, TMABar
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    S, NT = 5, tiles
    TB = 32 * 96 * 4

    @T.prim_func
    def five_stage_k(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * 32, 96), "float32")
        Out = T.match_buffer(Out_ptr, (96,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc((S, 32, 96), "float32", align=128)
        full = TMABar(pool, S)
        empty = MBarrier(pool, S)
        full.init(1)
        empty.init(init_empty)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            for k in T.serial(NT):
                empty.wait(k % S, ((k // S) & 1) ^ prod_phase)
                Tx.copy_async(
                    As[k % S, :, :], A[k * 32 : (k + 1) * 32, :], dispatch="tma_auto", mbar=full.ptr_to([k % S])
                )
                if expect_tx_sep:
                    T.ptx.mbarrier.expect_tx.shared.b64(full.ptr_to([k % S]), T.uint32(TB))
                    T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([k % S]), T.uint32(1))
                else:
                    full.arrive(k % S, TB)
        elif tid >= 32:
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NT):
                full.wait(k % S, ((k // S) & 1) ^ cons_phase ^ bad_wait_xor)
                for r in T.serial(32):
                    acc[0] = acc[0] + As[k % S, r, tid - 32]
                T.cuda.warp_sync()
                if skip_last_arrive:
                    if tid % 32 == 0 and (tid < 96 or k < NT - 1):
                        empty.arrive(k % S)
                elif skip_first_arrive:
                    if tid % 32 == 0 and (tid < 96 or k > 0):
                        empty.arrive(k % S)
                else:
                    if tid % 32 == 0:
                        empty.arrive(k % S)
            Out[tid - 32] = acc[0]

    return five_stage_k
