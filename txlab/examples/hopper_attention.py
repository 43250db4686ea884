"""FlashAttention forward for Hopper (sm_90a), written in TIRx.

``O = softmax(Q Kᵀ · scale [+ causal mask]) V`` and ``LSE`` (natural log-sum-exp of the scaled
scores, per query row), bf16 in and out, fp32 accumulation. Tensors in torch SDPA's layout:
``Q, O: (batch, heads, seqlen_q, head_dim)``, ``K, V: (batch, kv_heads, seqlen_kv, head_dim)``,
``LSE: (batch, heads, seqlen_q)`` float32. Grouped-query attention: query head ``h`` reads kv head
``h // (heads // kv_heads)``. Causal masking is aligned to the bottom-right corner (FlashAttention's
convention: query ``i`` sees keys ``j <= i + seqlen_kv - seqlen_q``; for ``seqlen_q == seqlen_kv``
this is torch's ``is_causal``); a row that sees no key gets ``O = 0`` and ``LSE = -inf``, never NaN.

The kernel (:func:`attention_kernel`), FlashAttention-3's structure in TIRx:

* one persistent CTA per SM walks (batch, head, query block) tasks from
  ``FlashAttentionLinearScheduler`` (non-causal) or ``FlashAttentionLPTScheduler`` (causal: the
  query blocks with the most key blocks first, heads grouped for L2 reuse of K/V);
* a producer warpgroup (one thread, ``setmaxnreg`` down to 24 registers) issues TMA loads of the
  query tile into 128B-swizzled shared memory and of K and V blocks into a ``stages``-deep
  ``Pipeline`` ring (full: TMA transaction bytes; empty: one arrival per consumer warp);
* ``consumers`` warpgroups (``setmaxnreg`` up to 240) each own 64 query rows of the
  ``64 * consumers``-row tile. Per key block: ``S = Q Kᵀ`` by ``wgmma`` from shared memory
  (``m64n{bn}k16``), the online softmax on the fragment (row max across the four lanes of a row,
  ``exp2`` with ``scale · log2 e`` folded into one FMA, running sum), ``P`` converted to bf16 pairs
  in registers — the accumulator fragment *is* the A-operand fragment of the next wgmma — and
  ``O += P V`` by the register-A form of ``wgmma`` with V read MN-major (``imm-trans-b``);
* ``overlap`` (intra-warpgroup): the next block's ``Q Kᵀ`` is issued before this block's
  ``P V``, and the softmax of the next block runs while ``P V`` is on the tensor cores; ``O`` is
  rescaled by the previous softmax's factor between the two issues, under ``Q Kᵀ``;
* ``pingpong`` (inter-warpgroup): two consumers take turns on the tensor cores, ordered by two
  named barriers (``bar.sync``/``bar.arrive`` over 256 threads), so one's softmax runs under the
  other's GEMMs;
* epilogue: ``O / l`` to bf16 into 128B-swizzled shared memory and one TMA store per warpgroup
  (clipped at ``seqlen_q``); ``LSE`` from registers.

Ragged sequence lengths: TMA zero-fills rows past the end of K/V/Q, the key blocks that reach
past ``seqlen_kv`` (or past the causal diagonal) are masked to ``-inf`` element-wise, and the
stores clip. Shapes are compile-time constants (one build per shape). TVM is imported lazily.

``head_dim`` is 64, 128 or 256. At 256 the default ring holds two 48-row K/V blocks: with the Q
tile and the two O staging tiles that is 224 KiB of the 227 KiB a CTA may have, and O alone takes
128 of a consumer's 240 registers.
"""

from __future__ import annotations

import math
from enum import Enum

from txlab.examples.attention_config import (  # noqa: F401  (re-exported: hopper_attention.AttentionConfig, ...)
    HEAD_DIMS,
    SMEM_LIMIT,
    TUNE_SPACE,
    AttentionConfig,
    _ceil,
    as_config,
    check_causal,
    check_shape,
    default_config,
    flops,
    l2_swizzle,
    tune_candidates,
    tune_space,
    tune_valid,
)

import txlab.errors as _errors


# --------------------------------------------------------------------------------------------
def attention_kernel(
    batch: int,
    heads: int,
    kv_heads: int,
    seqlen_q: int,
    seqlen_kv: int,
    head_dim: int,
    causal: bool = False,
    config: AttentionConfig | None = None,
    *,
    profile: bool = False,
    plant: str | None = None,
):
    """The ``@T.prim_func`` for one shape: ``(Q, K, V, O, LSE)`` (see the module docstring).

    ``profile=True``: the same kernel with TVM's CudaProfiler (``Tx.cuda.timer_*``): a sixth
    parameter, a ``uint64`` buffer of :func:`profile_slots` slots, one profiler group per warpgroup
    (0 the producer, 1.. the consumers) recording :class:`AttentionEvent` ranges; read it with
    :func:`record_timeline` (``txlab.timeline.record``).

    ``plant="no_v_wait"`` plants a bug for the emulator to find (notebook 12): the consumers read a V
    slot without waiting on its full barrier, so ``P V`` may read the slot before its TMA load lands."""
    if plant not in (None, "no_v_wait"):
        raise _errors.InputError(f"plant={plant!r}: the one planted bug is 'no_v_wait' (or None)")
    PLANT = plant
    import txlab.compat  # noqa: F401  (before parsing: a parse before TVM is patched gives another cache key)
    from tvm.backend.cuda.lang import (
        FlashAttentionLinearScheduler,
        FlashAttentionLPTScheduler,
        MBarrier,
        Pipeline,
        PipelineState,
        SMEMPool,
        TMABar,
        WarpgroupRole,
    )
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    from txlab.examples.hopper_gemm import _ConsumerRole

    batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim = check_shape(
        batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim
    )
    causal = check_causal(causal)
    cfg = as_config(config) or default_config(head_dim, causal)
    cfg.validate(head_dim)
    B, H, HK, SQ, SK, D = batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim
    G = H // HK
    NC, BN, STAGES = cfg.consumers, cfg.bn, cfg.stages
    BM = 64 * NC
    PP, OV = cfg.pingpong, cfg.overlap
    MB = _ceil(SQ, BM)
    NB = _ceil(SK, BN)
    TASKS = B * H * MB
    NCTA = min(cfg.num_sms, TASKS)
    LPT = cfg.scheduler == "lpt" or (cfg.scheduler == "auto" and causal)
    SWZ = cfg.swizzle or l2_swizzle(SK, D)
    NS, NO, NP = BN // 2, D // 2, BN // 4  # registers per thread: S, O accumulators; P (bf16 pairs)
    MMA_S = f"wgmma.mma_async.sync.aligned.m64n{BN}k16.f32.bf16.bf16"
    MMA_O = f"wgmma.mma_async.sync.aligned.m64n{D}k16.f32.bf16.bf16"
    SCALE_LOG2 = (1.0 / math.sqrt(D)) * math.log2(math.e)
    LN2 = math.log(2.0)
    DIAG = SK - SQ  # causal: key j visible to query i iff j <= i + DIAG
    Q_BYTES, KV_BYTES = BM * D * 2, BN * D * 2
    NEG_INF = float("-inf")
    RAGGED = SK % BN != 0
    PREGS, CREGS = cfg.producer_regs(), cfg.consumer_regs()
    DC = D // 64  # 64-column swizzle atoms of a row
    PROF, GROUPS = profile, NC + 1
    STRIDE = NCTA * GROUPS
    SLOTS = profile_slots(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal, cfg)
    LOAD, MMA, SOFTMAX, EPI = (
        AttentionEvent.load_tile,
        AttentionEvent.mma,
        AttentionEvent.softmax,
        AttentionEvent.epilogue,
    )

    def sched_for(prefix):
        if LPT:
            return FlashAttentionLPTScheduler(
                prefix, num_batches=B, num_heads=H, num_m_blocks=MB, l2_swizzle=min(SWZ, H * B), num_ctas=NCTA
            )
        return FlashAttentionLinearScheduler(prefix, num_batches=B, num_heads=H, num_m_blocks=MB, num_ctas=NCTA)

    def n_blocks(m):
        """Key blocks query block ``m`` sees (0 when a causal block sees none)."""
        if causal:
            return T.max(T.min((m * BM + BM + DIAG + BN - 1) // BN, NB), 0)
        return NB

    def masked(n, m):
        """Whether key block ``n`` of query block ``m`` needs the element mask: it reaches past the
        causal diagonal of the block's first row, or past ``seqlen_kv``."""
        if causal:
            return n >= T.min((m * BM + DIAG) // BN, NB - 1)
        return n == NB - 1 if RAGGED else False

    @T.macro
    def body(Q, K, V, O, LSE, prof):
        T.device_entry()
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
        cta = T.cta_id([NCTA])
        wg = T.warpgroup_id([NC + 1])
        T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        tid = T.thread_id_in_wg([128])
        T.thread_id([128 * (NC + 1)])

        pool = SMEMPool()
        Qs = pool.alloc_tcgen05_mma_AB((BM, D), "bfloat16")
        Ks = pool.alloc_tcgen05_mma_AB((STAGES, BN, D), "bfloat16")
        Vs = pool.alloc_tcgen05_mma_AB((STAGES, BN, D), "bfloat16")
        Os = pool.alloc_tcgen05_mma_AB((NC, 64, D), "bfloat16")
        q_full = TMABar(pool, 1)
        q_full.init(1)
        q_empty = MBarrier(pool, 1)
        q_empty.init(4 * NC)  # every consumer warp is done reading the tile's Q
        kp = Pipeline(pool, STAGES, full="tma", empty="mbar", init_full=1, init_empty=4 * NC)
        vp = Pipeline(pool, STAGES, full="tma", empty="mbar", init_full=1, init_empty=4 * NC)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if PROF:
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            T.cuda.timer_init(prof.data, tag.data, off.data, GROUPS, wg)

        with WarpgroupRole(wg, 0, regs=PREGS, increase=False):

            @T.inline
            def load_block(pipe, dst, src, b, h, n, stage, phase):
                """Key block ``n`` of K or V into ring slot ``stage``, once the consumers freed it."""
                pipe.empty.wait(stage, phase)
                for dq in T.unroll(DC):  # one TMA box per 64-column (128-byte) swizzle atom
                    Tx.copy_async(
                        dst[stage, :, dq * 64 : dq * 64 + 64],
                        src[b, h // G, n * BN : n * BN + BN, dq * 64 : dq * 64 + 64],
                        dispatch="tma_explicit",
                        mbar=pipe.full.ptr_to([stage]),
                    )
                pipe.full.arrive(stage, KV_BYTES)

            if tid == 0:
                sched = sched_for("p")
                sched.init(cta)
                ps = PipelineState(STAGES, 1)
                tiles = T.local_scalar("int32")
                tiles = 0
                while sched.valid():
                    b = T.meta_var(sched.batch_idx)
                    h = T.meta_var(sched.head_idx)
                    m = T.meta_var(sched.m_block_idx)
                    nmax = T.meta_var(n_blocks(m))
                    if tiles > 0:  # the consumers are done with the last tile's Q
                        q_empty.wait(0, (tiles - 1) % 2)
                    for dq in T.unroll(DC):  # one TMA box per 64-column (128-byte) swizzle atom
                        Tx.copy_async(
                            Qs[:, dq * 64 : dq * 64 + 64],
                            Q[b, h, m * BM : m * BM + BM, dq * 64 : dq * 64 + 64],
                            dispatch="tma_explicit",
                            mbar=q_full.ptr_to([0]),
                        )
                    q_full.arrive(0, Q_BYTES)
                    if PROF:
                        T.cuda.timer_start(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    for i in T.serial(nmax):
                        n = T.meta_var(nmax - 1 - i)
                        load_block(kp, Ks, K, b, h, n, ps.stage, ps.phase)
                        load_block(vp, Vs, V, b, h, n, ps.stage, ps.phase)
                        ps.advance()
                    if PROF:
                        T.cuda.timer_end(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    tiles = tiles + 1
                    sched.next_tile()
                if PROF:
                    T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, True)

        with _ConsumerRole(wg, (1, NC + 1), regs=CREGS, increase=True):
            c = T.meta_var(wg - 1)
            s_acc = T.alloc_local([NS], "float32")
            o_acc = T.alloc_local([NO], "float32")
            p_reg = T.alloc_local([NP], "uint32")
            m_i = T.alloc_local([2], "float32")
            l_i = T.alloc_local([2], "float32")
            m_s = T.alloc_local([2], "float32")  # m_i * scale * log2(e), 0 for a row that saw no key yet
            alpha = T.alloc_local([2], "float32")
            red = T.alloc_local([2], "float32")  # row max, then row sum, of one block
            descA: T.uint64
            descB: T.uint64
            sched = sched_for("c")
            sched.init(cta)
            cs = PipelineState(STAGES, 0)
            vs_stage = T.local_scalar("int32")  # the V slot P V reads (one block behind with overlap)
            vs_phase = T.local_scalar("int32")
            tiles = T.local_scalar("int32")
            tiles = 0
            row0 = T.meta_var(c * 64 + (tid % 32) // 4 + (tid // 32) * 16)  # + 8h: this thread's rows
            if PP:
                if c == 1:  # the first consumer takes the tensor cores first
                    T.ptx.bar.arrive(T.uint32(3), T.uint32(256))

            @T.inline
            def turn_begin():
                if PROF:
                    T.cuda.timer_start(MMA, prof.data, tag.data, off.data, STRIDE, tid == 0)
                if PP:
                    T.ptx.bar.sync(T.cast(3 + c, "uint32"), T.uint32(256))

            @T.inline
            def turn_end():
                if PP:
                    T.ptx.bar.arrive(T.cast(4 - c, "uint32"), T.uint32(256))

            @T.inline
            def issue_s(stage):
                T.ptx.wgmma.fence.sync.aligned()
                for kk in T.unroll(D // 16):
                    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), Qs.ptr_to([c * 64, kk * 16]), 1, 64, 3)
                    T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), Ks.ptr_to([stage, 0, kk * 16]), 1, 64, 3)
                    T.ptx[MMA_S](*[s_acc[i] for i in range(NS)], descA, descB, kk > 0, 1, 1, 0, 0)
                T.ptx.wgmma.commit_group.sync.aligned()

            @T.inline
            def issue_o(stage):
                T.ptx.wgmma.fence.sync.aligned()
                for kk in T.unroll(BN // 16):
                    # V as the MN-major B operand: 16 key rows (2 x 8-row groups, SBO 1024 B) per k16
                    # step, 64-column swizzle atoms BN x 128 B apart (LBO)
                    T.cuda.wgmma.encode_matrix_descriptor(
                        T.address_of(descB), Vs.ptr_to([stage, kk * 16, 0]), BN * 8, 64, 3
                    )
                    T.ptx[MMA_O](
                        *[o_acc[i] for i in range(NO)],
                        *[p_reg[kk * 4 + r] for r in range(4)],
                        descB,
                        T.bool(True),
                        1,
                        1,
                        1,
                    )
                T.ptx.wgmma.commit_group.sync.aligned()

            @T.inline
            def softmax(n, m_blk, masked):
                """Online softmax of S (key block ``n``), in place: S becomes P (fp32), ``m_i`` and
                ``l_i`` move on, ``alpha`` is the factor the O accumulated so far is rescaled by."""
                for i in T.unroll(NS):
                    T.cuda.wgmma.noop_barrier(s_acc[i])
                if masked:
                    for j in T.unroll(NS // 4):
                        for hh in T.unroll(2):
                            for e in T.unroll(2):
                                col = T.meta_var(n * BN + j * 8 + (tid % 4) * 2 + e)
                                row = T.meta_var(m_blk * BM + row0 + 8 * hh)
                                if causal:
                                    if col > T.min(row + DIAG, SK - 1):
                                        s_acc[j * 4 + hh * 2 + e] = T.float32(NEG_INF)
                                else:
                                    if col >= SK:
                                        s_acc[j * 4 + hh * 2 + e] = T.float32(NEG_INF)
                for hh in T.unroll(2):
                    red[hh] = m_i[hh]
                    for j in T.unroll(NS // 4):
                        for e in T.unroll(2):
                            red[hh] = T.max(red[hh], s_acc[j * 4 + hh * 2 + e])
                    red[hh] = T.cuda.warp_reduce(red[hh], "max", 4)
                    m_s[hh] = T.Select(red[hh] == T.float32(NEG_INF), T.float32(0), red[hh] * T.float32(SCALE_LOG2))
                    alpha[hh] = T.exp2(m_i[hh] * T.float32(SCALE_LOG2) - m_s[hh])
                    m_i[hh] = red[hh]
                    red[hh] = T.float32(0)
                    for j in T.unroll(NS // 4):
                        for e in T.unroll(2):
                            s_acc[j * 4 + hh * 2 + e] = T.exp2(
                                s_acc[j * 4 + hh * 2 + e] * T.float32(SCALE_LOG2) - m_s[hh]
                            )
                            red[hh] = red[hh] + s_acc[j * 4 + hh * 2 + e]
                    l_i[hh] = l_i[hh] * alpha[hh] + red[hh]

            @T.inline
            def pack_p():
                """P to bf16 pairs: the m64nBN accumulator fragment is the A fragment of m64nDk16."""
                for i in T.unroll(NP):
                    p_reg[i] = T.cuda.float22bfloat162_rn(s_acc[2 * i], s_acc[2 * i + 1])

            @T.inline
            def rescale_o():
                for i in T.unroll(NO):
                    T.cuda.wgmma.noop_barrier(o_acc[i])
                for j in T.unroll(NO // 4):
                    for hh in T.unroll(2):
                        for e in T.unroll(2):
                            o_acc[j * 4 + hh * 2 + e] = o_acc[j * 4 + hh * 2 + e] * alpha[hh]

            @T.inline
            def v_wait(stage, phase):
                if PLANT != "no_v_wait":
                    vp.full.wait(stage, phase)

            @T.inline
            def release(pipe, stage):
                if lane == 0:
                    pipe.empty.arrive(stage)

            @T.inline
            def mma_done():
                if PROF:
                    T.cuda.timer_end(MMA, prof.data, tag.data, off.data, STRIDE, tid == 0)

            @T.inline
            def soft_begin():
                if PROF:
                    T.cuda.timer_start(SOFTMAX, prof.data, tag.data, off.data, STRIDE, tid == 0)

            @T.inline
            def soft_end():
                if PROF:
                    T.cuda.timer_end(SOFTMAX, prof.data, tag.data, off.data, STRIDE, tid == 0)

            @T.inline
            def q_done():
                if lane == 0:
                    q_empty.arrive(0)

            while sched.valid():
                b = T.meta_var(sched.batch_idx)
                h = T.meta_var(sched.head_idx)
                m = T.meta_var(sched.m_block_idx)
                nmax = T.meta_var(n_blocks(m))
                for hh in T.unroll(2):
                    m_i[hh] = T.float32(NEG_INF)
                    l_i[hh] = T.float32(0)
                for i in T.unroll(NO):
                    o_acc[i] = T.float32(0)
                q_full.wait(0, tiles % 2)
                if OV:
                    if nmax > 0:
                        # prologue: S of the first block and its softmax; its P V goes with the next S
                        turn_begin()
                        kp.full.wait(cs.stage, cs.phase)
                        issue_s(cs.stage)
                        turn_end()
                        T.ptx.wgmma.wait_group.sync.aligned(0)
                        mma_done()
                        release(kp, cs.stage)
                        if nmax == 1:
                            q_done()
                        soft_begin()
                        softmax(nmax - 1, m, masked(nmax - 1, m))
                        pack_p()
                        soft_end()
                        vs_stage = cs.stage
                        vs_phase = cs.phase
                        cs.advance()
                        for i in T.serial(nmax - 1):
                            n = T.meta_var(nmax - 2 - i)
                            turn_begin()
                            kp.full.wait(cs.stage, cs.phase)
                            issue_s(cs.stage)
                            rescale_o()  # by the last softmax's alpha, while S is on the tensor cores
                            v_wait(vs_stage, vs_phase)
                            issue_o(vs_stage)
                            turn_end()
                            T.ptx.wgmma.wait_group.sync.aligned(1)  # S is done; P V is in flight
                            mma_done()
                            release(kp, cs.stage)
                            if i == nmax - 2:
                                q_done()
                            soft_begin()
                            softmax(n, m, masked(n, m))  # under P V (which still reads p_reg and O)
                            T.ptx.wgmma.wait_group.sync.aligned(0)
                            release(vp, vs_stage)
                            pack_p()
                            soft_end()
                            vs_stage = cs.stage
                            vs_phase = cs.phase
                            cs.advance()
                        turn_begin()
                        rescale_o()
                        v_wait(vs_stage, vs_phase)
                        issue_o(vs_stage)
                        turn_end()
                        T.ptx.wgmma.wait_group.sync.aligned(0)
                        mma_done()
                        release(vp, vs_stage)
                else:
                    for i in T.serial(nmax):
                        n = T.meta_var(nmax - 1 - i)
                        turn_begin()
                        kp.full.wait(cs.stage, cs.phase)
                        issue_s(cs.stage)
                        turn_end()
                        T.ptx.wgmma.wait_group.sync.aligned(0)
                        mma_done()
                        release(kp, cs.stage)
                        if i == nmax - 1:
                            q_done()
                        soft_begin()
                        softmax(n, m, masked(n, m))
                        rescale_o()
                        pack_p()
                        soft_end()
                        turn_begin()
                        v_wait(cs.stage, cs.phase)
                        issue_o(cs.stage)
                        turn_end()
                        T.ptx.wgmma.wait_group.sync.aligned(0)
                        mma_done()
                        release(vp, cs.stage)
                        cs.advance()
                if nmax == 0:
                    q_done()
                for i in T.unroll(NO):
                    T.cuda.wgmma.noop_barrier(o_acc[i])
                if PROF:
                    T.cuda.timer_start(EPI, prof.data, tag.data, off.data, STRIDE, tid == 0)
                # epilogue: O / l (0 for a row that saw no key), LSE = (m·scale·log2 e + log2 l)·ln 2
                for hh in T.unroll(2):
                    l_i[hh] = T.cuda.warp_reduce(l_i[hh], "sum", 4)
                    alpha[hh] = T.Select(l_i[hh] > T.float32(0), T.float32(1) / l_i[hh], T.float32(0))
                rescale_o()
                if tid == 0:
                    T.ptx.cp.async_.bulk.wait_group.read(0)  # the last tile's store is done reading Os
                T.cuda.warpgroup_sync(1 + c)
                for j in T.unroll(NO // 4):
                    for hh in T.unroll(2):
                        for e in T.unroll(2):
                            Os[c, (tid % 32) // 4 + (tid // 32) * 16 + 8 * hh, j * 8 + (tid % 4) * 2 + e] = T.cast(
                                o_acc[j * 4 + hh * 2 + e], "bfloat16"
                            )
                T.ptx.fence.proxy.async_.shared__cta()
                T.cuda.warpgroup_sync(1 + c)
                if tid == 0:
                    for dq in T.unroll(DC):
                        Tx.copy_async(
                            O[b, h, m * BM + c * 64 : m * BM + c * 64 + 64, dq * 64 : dq * 64 + 64],
                            Os[c, :, dq * 64 : dq * 64 + 64],
                            dispatch="tma_explicit",
                        )
                    T.ptx.cp.async_.bulk.commit_group()
                if tid % 4 == 0:
                    for hh in T.unroll(2):
                        if m * BM + row0 + 8 * hh < SQ:
                            LSE[b, h, m * BM + row0 + 8 * hh] = T.Select(
                                l_i[hh] > T.float32(0), (m_s[hh] + T.log2(l_i[hh])) * T.float32(LN2), T.float32(NEG_INF)
                            )
                if PROF:
                    T.cuda.timer_end(EPI, prof.data, tag.data, off.data, STRIDE, tid == 0)
                tiles = tiles + 1
                sched.next_tile()
            if PP:
                if c == 0:  # the second consumer's last turn_end has no matching turn_begin
                    T.ptx.bar.sync(T.uint32(3), T.uint32(256))
            if tid == 0:
                T.ptx.cp.async_.bulk.wait_group(0)
            if PROF:
                T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, tid == 0)

    if profile:

        @T.prim_func
        def flash_attention_fwd_profiled(
            q_ptr: T.handle, k_ptr: T.handle, v_ptr: T.handle, o_ptr: T.handle, lse_ptr: T.handle, p_ptr: T.handle
        ):
            Q = T.match_buffer(q_ptr, (B, H, SQ, D), "bfloat16")
            K = T.match_buffer(k_ptr, (B, HK, SK, D), "bfloat16")
            V = T.match_buffer(v_ptr, (B, HK, SK, D), "bfloat16")
            O = T.match_buffer(o_ptr, (B, H, SQ, D), "bfloat16")
            LSE = T.match_buffer(lse_ptr, (B, H, SQ), "float32")
            prof = T.match_buffer(p_ptr, (SLOTS,), "uint64")
            body(Q, K, V, O, LSE, prof)

        return flash_attention_fwd_profiled

    @T.prim_func
    def flash_attention_fwd(q_ptr: T.handle, k_ptr: T.handle, v_ptr: T.handle, o_ptr: T.handle, lse_ptr: T.handle):
        Q = T.match_buffer(q_ptr, (B, H, SQ, D), "bfloat16")
        K = T.match_buffer(k_ptr, (B, HK, SK, D), "bfloat16")
        V = T.match_buffer(v_ptr, (B, HK, SK, D), "bfloat16")
        O = T.match_buffer(o_ptr, (B, H, SQ, D), "bfloat16")
        LSE = T.match_buffer(lse_ptr, (B, H, SQ), "float32")
        body(Q, K, V, O, LSE, None)

    return flash_attention_fwd


def tune_build(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal=False):
    """``build(**config)`` for :data:`TUNE_SPACE` at one shape (what ``txlab.autotune`` calls)."""

    def build_one(**config):
        return attention_kernel(
            batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal, AttentionConfig(**config)
        )

    build_one.__name__ = f"hopper_attention_{batch}x{heads}x{kv_heads}x{seqlen_q}x{seqlen_kv}x{head_dim}" + (
        "_causal" if causal else ""
    )
    return build_one


class AttentionEvent(Enum):
    """Profiler events of ``attention_kernel(..., profile=True)``."""

    load_tile = 0  # producer: a tile's K/V loop of TMA loads (mostly waiting for free slots)
    mma = 1  # consumer: from asking for the tensor cores (its ping-pong turn) until its S = QK^T is done
    softmax = 2  # consumer: the online softmax of one block (and the O rescale, P to bf16)
    epilogue = 3  # consumer: O / l, the staging tile, the TMA store, LSE


def profile_slots(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal=False, config=None) -> int:
    """Slots (uint64) of the profiler buffer: header, one first slot per (CTA, warpgroup) lane, and room
    for the busiest lane (two ranges of two stamps per key block, the epilogue, finalize)."""
    cfg = config or default_config(head_dim, causal)
    bm = 64 * cfg.consumers
    tasks = batch * heads * _ceil(seqlen_q, bm)
    ncta = min(cfg.num_sms, tasks)
    lanes = ncta * (cfg.consumers + 1)
    per_tile = 6 * _ceil(seqlen_kv, cfg.bn) + 8
    per_lane = per_tile * _ceil(tasks, ncta) + 1
    return 1 + lanes + per_lane * lanes


def record_timeline(q, k, v, o, lse, causal: bool = False, config: AttentionConfig | None = None):
    """Run the profiled kernel once on torch tensors in the kernel's layout; return its
    ``txlab.timeline.Timeline`` (per CTA: the producer's lane and one per consumer)."""
    from txlab import timeline

    b, h, sq, d = q.shape
    hk, sk = k.shape[1], k.shape[2]
    c = build(b, h, hk, sq, sk, d, causal, config, profile=True)
    return timeline.record(c, q, k, v, o, lse, events=AttentionEvent)


#: the shape of the shipped trace (``txlab.timeline.saved("hopper_attention")``): 64 CTAs, one 128-row
#: tile of 16 key blocks each
TRACE_SHAPE = (1, 4, 4, 2048, 2048, 128)


def record_example_trace(provenance: str = "`python -m txlab.examples.traces record-examples`"):
    """Record the profiled kernel at :data:`TRACE_SHAPE` (non-causal, default configuration) on this
    GPU, check its output against the fp32 reference, and return ``(buffer, event names, meta)`` in
    the format of the traces shipped in ``txlab/data``."""
    from dataclasses import replace

    import torch

    b, h, hk, sq, sk, d = TRACE_SHAPE
    cfg = replace(default_config(d, False), num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    q, k, v, o, lse = random_inputs(*TRACE_SHAPE, seed=0)
    record_timeline(q, k, v, o, lse, False, cfg)  # warm-up: module load, TMA descriptors
    tl = record_timeline(q, k, v, o, lse, False, cfg)
    ro, _ = reference(q, k, v, False)
    err = (torch.linalg.vector_norm(o.float() - ro) / torch.linalg.vector_norm(ro)).item()
    if not err <= 1e-2:
        raise RuntimeError(f"the profiled kernel is wrong: relative error {err:.3g}")
    meta = {
        "synthetic": False,
        "kernel": f"hopper_attention {'x'.join(map(str, TRACE_SHAPE))} non-causal",
        "gpu": tl.meta["gpu"],
        "arch": tl.meta["arch"],
        "config": cfg.to_dict(),
        "rel_error": err,
        "provenance": f"recorded on {tl.meta['gpu']} ({tl.meta['arch']}) by {provenance}",
    }
    return tl.meta["buffer"], [e.name for e in AttentionEvent], meta


def build(
    batch: int,
    heads: int,
    kv_heads: int,
    seqlen_q: int,
    seqlen_kv: int,
    head_dim: int,
    causal: bool = False,
    config: AttentionConfig | None = None,
    *,
    arch: str = "sm_90a",
    profile: bool = False,
    **kw,
):
    """Compile the kernel for one shape; returns a ``txlab.Compiled`` taking ``(Q, K, V, O, LSE)``
    (and the profiler buffer with ``profile=True``). Without a ``config``: :func:`tuned_config`'s
    (the shipped table's measured best for this exact shape, else the model's choice; :func:`explain`
    says why)."""
    from txlab.compiler import compile as compile_kernel
    from txlab.examples.hopper_gemm import check_arch

    check_arch(arch)
    config = as_config(config)
    if config is None:
        config = tuned_config(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal)
    kernel = attention_kernel(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal, config, profile=profile)
    compiled = compile_kernel(kernel, arch=arch, **kw)
    check_register_budget(compiled, config)
    return compiled


def check_register_budget(compiled, config: AttentionConfig) -> None:
    """Raise when the ``setmaxnreg`` targets do not fit the register file the CTA gets at launch
    (ptxas' per-thread count x threads): the consumers' ``setmaxnreg.inc`` would wait forever."""
    from txlab.errors import CompileError

    regs = compiled.resources[compiled.kernels[0]]["registers"]
    need = 128 * (config.producer_regs() + config.consumers * config.consumer_regs())
    if need > regs * config.threads:
        raise CompileError(
            "ptxas",
            f"setmaxnreg asks for {need} registers ({config.producer_regs()} + {config.consumers} x "
            f"{config.consumer_regs()} per thread of each warpgroup) but the CTA launches with "
            f"{regs} x {config.threads} = {regs * config.threads}: the consumers would wait forever",
            hint="lower consumer_regs()/producer_regs() so they fit ptxas' count at launch",
        )


def random_inputs(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, seed: int = 0):
    """``(Q, K, V, O, LSE)`` torch tensors on the GPU in the kernel's layout: Q, K, V standard normal
    bf16 (drawn in that order from ``seed``), O and LSE NaN-poisoned (a value never written shows).
    Without a GPU, or without a torch that sees it: :class:`~txlab.errors.NoGPUError` saying which."""
    from txlab.device import require_gpu

    batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim = check_shape(
        batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim
    )
    instead = (
        "for hopper_attention.reference or the CPU emulator (txlab.emulate(attention_kernel(...), q, k, v, o, lse)) "
        "make numpy arrays in the same layout instead (bf16 through ml_dtypes)"
    )
    require_gpu("hopper_attention.random_inputs (torch tensors on the GPU)", alternative=instead + ".")
    try:
        import torch
    except ImportError as exc:
        raise _errors.NoGPUError(
            f"hopper_attention.random_inputs makes torch tensors on the GPU, and torch is not importable here "
            f"({exc}): pip install torch (a CUDA build), or {instead}"
        ) from None
    if not torch.cuda.is_available():
        raise _errors.NoGPUError(
            f"hopper_attention.random_inputs makes torch tensors on the GPU, and this torch ({torch.__version__}) "
            f"sees no CUDA device (a CPU-only build, or CUDA_VISIBLE_DEVICES): install a CUDA build of torch, or {instead}"
        )
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(batch, heads, seqlen_q, head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
    k, v = (
        torch.randn(batch, kv_heads, seqlen_kv, head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
        for _ in range(2)
    )
    o = torch.full_like(q, float("nan"))
    lse = torch.full((batch, heads, seqlen_q), float("nan"), device="cuda", dtype=torch.float32)
    return q, k, v, o, lse


def reference(q, k, v, causal: bool = False):
    """fp32 (float64 for numpy) ``(O, LSE)`` of the same function, for torch tensors or numpy arrays
    in the kernel's layout; fully masked rows give ``O = 0``, ``LSE = -inf``."""
    _check_layout(q, k, v)
    if type(q).__module__.startswith("torch"):
        import torch

        qf, kf, vf = q.float(), k.float(), v.float()
        g = q.shape[1] // k.shape[1]
        kf, vf = kf.repeat_interleave(g, dim=1), vf.repeat_interleave(g, dim=1)
        s = (qf @ kf.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if causal:
            sq, sk = q.shape[2], k.shape[2]
            i = torch.arange(sq, device=q.device)[:, None]
            j = torch.arange(sk, device=q.device)[None, :]
            s = s.masked_fill(j > i + (sk - sq), float("-inf"))
        lse = torch.logsumexp(s, dim=-1)
        p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
        return p @ vf, lse
    import numpy as np

    qf, kf, vf = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    g = qf.shape[1] // kf.shape[1]
    kf, vf = np.repeat(kf, g, axis=1), np.repeat(vf, g, axis=1)
    s = qf @ np.swapaxes(kf, -1, -2) / math.sqrt(qf.shape[-1])
    if causal:
        sq, sk = qf.shape[2], kf.shape[2]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    mx = s.max(axis=-1, keepdims=True)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(s - safe)
    tot = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        lse = np.where(tot > 0, np.log(tot) + safe, -np.inf)[..., 0]
        o = np.where(tot > 0, (e / np.where(tot > 0, tot, 1.0)) @ vf, 0.0)
    return o, lse


def _check_layout(q, k, v) -> None:
    """The kernel's layout, or an InputError naming the array that breaks it: ``q (batch, heads, seqlen_q, head_dim)``,
    ``k`` and ``v (batch, kv_heads, seqlen_kv, head_dim)``, ``kv_heads`` dividing ``heads``."""
    shapes = [tuple(getattr(x, "shape", ())) for x in (q, k, v)]
    layout = (
        "q is (batch, heads, seqlen_q, head_dim), k and v are (batch, kv_heads, seqlen_kv, head_dim), kv_heads "
        "dividing heads"
    )
    for name, sh in zip("qkv", shapes):
        if len(sh) != 4:
            raise _errors.InputError(f"{name} has shape {sh}, not 4 axes: {layout}", param=name)
    (b, h, _, d), kk, vv = shapes
    if kk != vv or kk[0] != b or kk[3] != d or kk[1] < 1 or h % kk[1]:
        raise _errors.InputError(f"q {shapes[0]}, k {kk}, v {vv}: {layout}", param="k")


def tuned_config(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal=False) -> AttentionConfig:
    """The configuration :func:`build` uses without one: the shipped tuned table's measured best for
    this exact shape, else the model's choice (:mod:`txlab.examples.attention_model`; no GPU, a few
    milliseconds), with one persistent CTA per SM of this GPU (132, an H100/H200 SXM's, without one).
    A damaged table warns once and is ignored."""
    return explain(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal).winner


def explain(batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal=False, *, num_sms: int | None = None):
    """Why :func:`build` without a config picks what it picks: the measured table entry, or the
    model's ranking of the candidates (``print()`` it: candidates, predicted time, winner, why).
    ``num_sms``: persistent CTAs at most (default: this GPU's SMs, else 132)."""
    from txlab.examples.attention_model import explain as rank

    batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim = check_shape(
        batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim
    )
    causal = check_causal(causal)
    if num_sms is None:
        from txlab.device import probe

        num_sms = probe().sm_count or 132
    elif not isinstance(num_sms, int) or isinstance(num_sms, bool) or num_sms < 1:
        raise _errors.InputError(
            f"num_sms={num_sms!r}: persistent CTAs at most, a positive int (132 on an H100/H200 "
            "SXM; None: this GPU's SMs)",
            param="num_sms",
        )
    shape = (batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal)
    return rank(shape, num_sms=num_sms)
