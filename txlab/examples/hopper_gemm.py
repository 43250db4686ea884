"""A warp-specialized, persistent bf16 GEMM for Hopper (sm_90a), written in TIRx.

``C = A @ B.T`` with ``A: (M, K)``, ``B: (N, K)`` (both K-major, i.e. row-major as stored),
``C: (M, N)``, bf16 in and out, fp32 accumulation in registers.

Three kernels, each a step up from the last (notebook 07 walks through them):

* :func:`simple_kernel` — one warpgroup per 64 x BN tile; each K step: one TMA load of A and B
  into 128B-swizzled shared memory, an mbarrier wait, four ``wgmma.m64nBNk16`` (one per 16 of
  the 64 K columns in the tile), wait, next. Nothing overlaps; it is the correctness baseline.
* :func:`gemm_kernel` with ``persistent=False`` — the warp-specialized pipeline: a producer
  warpgroup (one thread issues TMA) fills a ``stages``-deep ring of A/B tiles
  (``Pipeline(full="tma", empty="mbar")``); ``consumers`` warpgroups each own 64 rows of the
  ``BM = 64 * consumers`` x BN tile and run wgmma on a slot as soon as its full barrier flips,
  keeping one wgmma group in flight (``wait_group(1)``) and releasing the previous slot (each
  consumer encodes stage 0's wgmma descriptors once and adds the slot's, atom's and k-step's offset).
  ``setmaxnreg`` moves registers from the producer (40) to the consumers (240 for one, 232 each for two,
  152 each for three).
* :func:`gemm_kernel` (default, ``persistent=True``) — the same roles inside a persistent loop:
  one CTA per SM, tiles handed out by ``ClusterPersistentScheduler2D`` in L2-friendly group-major
  order. The producer runs ahead into the next tile while consumers write the current one.
  ``schedule="pingpong"``: the two consumers own alternate tiles (an order barrier makes their
  mainloops take turns), so one's epilogue runs under the other's mainloop.
  ``epilogue="tma"``: the fragment goes through 128B-swizzled shared memory and TMA stores.
  ``split_k=S``: each tile is S work items over slices of K, for shapes whose tiles cannot fill
  the SMs; fp32 partials go to a workspace (:func:`workspace`, the fourth argument) and the item
  that finishes last sums them in split order (bitwise reproducible) and stores C.

Shapes are compile-time constants (one build per shape); tails (M, N not multiples of the tile,
K not a multiple of 64) are handled by TMA's out-of-bounds zero fill on loads and guarded stores
(or TMA's clipping) in the epilogue; the kernel's K must be a multiple of 8 (TMA's row pitch), and
:func:`build` takes any K by building for K rounded up to 8 and copying A and B into zero-padded
buffers on each call (``padded_k``/``pad_bytes`` on its Compiled say what that costs). The direct
epilogue writes bf16 pairs (4-byte stores) from the wgmma fragment when N is even, single
elements otherwise. :func:`build` without a config uses :func:`tuned_config` (the shipped table,
measured on an H200) and :data:`TUNE_SPACE` is what ``txlab.tune`` sweeps.

Everything here imports TVM lazily; ``import txlab.examples.hopper_gemm`` is cheap.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from enum import Enum

from txlab.examples.gemm_config import (  # noqa: F401 - BK, parse_config: this module's public names too
    BK,
    EPI_BUFFERS,
    GemmConfig,
    _ceil,
    as_config,
    check_num_sms,
    check_sizes,
    parse_config,
    shape_builder,
    shape_space,
    tma_pitch,
)
# the time model a choice ranks by (and its measured neighbours), and the readers of the table and the measurements,
# imported with this module: a notebook's first build(M, N, K) then pays for the choice alone
from txlab.cache import read_sealed, seal
import txlab.examples.gemm_model as gemm_model
from txlab.files import shipped_data

def flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def min_bytes(m: int, n: int, k: int) -> int:
    """Each input read once, the output written once (bf16)."""
    return 2 * (m * k + n * k + m * n)


# --------------------------------------------------------------------------------------------
# Step 1: one warpgroup, one tile per CTA, no overlap.
def simple_kernel(M: int, N: int, K: int, bn: int = 128):
    """One warpgroup computes a 64 x ``bn`` tile of C: TMA -> 128B-swizzled smem -> wgmma, serially."""
    from tvm.backend.cuda.lang import SMEMPool, TMABar
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    M, N, K = check_sizes(M, N, K)
    tma_pitch(K)
    check_extents(M, N, K)
    if bn not in range(8, 257, 8):
        from txlab.errors import InputError

        raise InputError(f"bn={bn!r}: wgmma N must be a multiple of 8 in [8, 256]", param="bn")
    wide = _widener(M * N)
    BM, BN = 64, bn
    NACC = BN // 2  # f32 accumulator registers per thread for m64nBN
    GM, GN, KT = _ceil(M, BM), _ceil(N, BN), _ceil(K, BK)
    MMA = f"wgmma.mma_async.sync.aligned.m64n{BN}k16.f32.bf16.bf16"
    TX_BYTES = (BM + BN) * BK * 2

    @T.prim_func
    def gemm_simple(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "bfloat16")
        B = T.match_buffer(B_ptr, (N, K), "bfloat16")
        C = T.match_buffer(C_ptr, (M, N), "bfloat16")
        T.device_entry()
        bm, bn_ = T.cta_id([GM, GN])
        tx = T.thread_id([128])
        pool = SMEMPool()
        As = pool.alloc_tcgen05_mma_AB((BM, BK), "bfloat16")  # SW128 K-major: the wgmma layout too
        Bs = pool.alloc_tcgen05_mma_AB((BN, BK), "bfloat16")
        bar = TMABar(pool, 1)
        bar.init(1)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        acc = T.alloc_local([NACC], "float32")
        descA: T.uint64
        descB: T.uint64
        for k in T.serial(KT):
            if tx == 0:
                Tx.copy_async(As[:, :], A[bm * BM:bm * BM + BM, k * BK:k * BK + BK],
                              dispatch="tma_explicit", mbar=bar.ptr_to([0]))
                Tx.copy_async(Bs[:, :], B[bn_ * BN:bn_ * BN + BN, k * BK:k * BK + BK],
                              dispatch="tma_explicit", mbar=bar.ptr_to([0]))
                bar.arrive(0, TX_BYTES)
            bar.wait(0, k % 2)
            T.ptx.wgmma.fence.sync.aligned()
            for kk in T.unroll(BK // 16):
                # K-major SW128: LBO unused (1), SBO = 8 rows x 128 B = 1024 B = 64 x 16 B;
                # the k16 slice starts 32 B further along the (unswizzled) row 0.
                T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), As.ptr_to([0, kk * 16]), 1, 64, 3)
                T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), Bs.ptr_to([0, kk * 16]), 1, 64, 3)
                T.ptx[MMA](*[acc[i] for i in range(NACC)], descA, descB, (k > 0) | (kk > 0), 1, 1, 0, 0)
            T.ptx.wgmma.commit_group.sync.aligned()
            T.ptx.wgmma.wait_group.sync.aligned(0)
            T.cuda.cta_sync()  # every warp is done reading the slot before thread 0 refills it
        for i in T.unroll(NACC):
            T.cuda.wgmma.noop_barrier(acc[i])
        for j in T.unroll(NACC // 4):
            row = T.meta_var(bm * BM + (tx % 32) // 4 + (tx // 32) * 16)
            col = T.meta_var(bn_ * BN + j * 8 + (tx % 4) * 2)
            for h in T.unroll(2):
                for e in T.unroll(2):
                    if row + 8 * h < M and col + e < N:
                        C[wide(row + 8 * h), wide(col + e)] = T.cast(acc[j * 4 + h * 2 + e], "bfloat16")

    return gemm_simple


# --------------------------------------------------------------------------------------------
# Steps 2 and 3: warp-specialized producer/consumers over a multi-stage pipeline, persistent.

#: The TMA and staged epilogues write their staging tiles with ``stmatrix.x4`` (16 x 16 blocks of the fragment per
#: instruction); False builds the 2-byte shared stores of rounds 4-14 instead, kept so ``scripts/gemm_explore_h200.py``
#: (``sts:CONFIG``) can time one beside the other in a run: on the H200 stmatrix was faster on 27 of 30 TMA-epilogue
#: shapes, by 0.75 % at the median, and on FP8's staged ones by 6-7 % (round 15).
_EPI_STMATRIX = True

#: The consumers build their two wgmma descriptors once, for stage 0 (TVM's encoder), and give each wgmma the
#: descriptor plus its operand's 16-byte offset (stage, m64 atom, k-step): one add where encoding again took about
#: ten uniform-datapath instructions per k-step (ncu, round 22: 2.1x cuBLAS's instructions at the same tile). The
#: descriptors are the same 64-bit values: the start address is bits 0-13 in 16-byte units, and shared memory
#: (< 256 KiB) never carries out of them. False encodes per wgmma as before, kept so ``scripts/gemm_explore_h200.py``
#: (``enc:CONFIG``) can time one beside the other in a run.
_DESC_ADVANCE = True

#: Warp 0 prefetches the A/B tensor maps (and C's, with the TMA epilogue) at the kernel's entry
#: (``prefetch.tensormap``, TVM's ``prefetch_tensormap`` option, as CUTLASS's kernels do), so the first loads do not
#: wait for the descriptors to come from memory. False leaves it out (``scripts/gemm_explore_h200.py``'s ``tpf:CONFIG``).
_TMA_PREFETCH = True

#: The direct epilogue stores 16 bytes per thread (8 columns of a row) where C's rows allow it (N % 8 == 0, not
#: swapped): the four lanes of a quad trade their bf16 pairs of four 8-column groups by two rounds of
#: ``shfl.sync.bfly`` (a 4 x 4 transpose), so a warp's store covers 64 contiguous bytes of each of 8 rows where the
#: 4-byte pair stores covered 16. In-kernel timelines (H100, round 29: ``scripts/gemm_timeline_h200.py``) put the
#: 4-byte stores' epilogue of a 128x200 tile at 5.1 us of a 48 us kernel (120 CTAs storing at once), against 0.7 us
#: for a TMA epilogue. False builds the 4-byte stores (``v16:CONFIG`` in the GPU scripts).
_EPI_VEC16 = True

#: With swap_ab a thread's accumulator pairs are two rows of C^T's tile, so the direct epilogue and the split-K fix-ups
#: stored C element by element (2-byte stores, 8 lanes to a 16-byte run). Each 8 x 8 block of the fragment is now
#: transposed in registers (``movmatrix.m8n8.trans.b16``), which gives every lane two adjacent elements of one row of
#: C, and four blocks are traded within each quad as :data:`_EPI_VEC16`'s are: 16 bytes of a row of C per lane where
#: the user's N is a multiple of 8, 4-byte pairs where it is even. False stores element by element (``sw2:CONFIG``).
_EPI_SWAP16 = True

#: Split-K's parallel fix-up counts and waits as CUTLASS's semaphores do: the consumers meet at a named barrier, one
#: thread adds its item to the tile's counter with a release reduction (``red.release.gpu``, cumulative over the
#: partial stores the barrier ordered before it), waits with relaxed polls closed by one acquire load
#: (``T.cuda.wait_until``), and the consumers meet again before reading the peers' partials. False counts with relaxed
#: atomics between two ``__threadfence()`` (``fence.sc.gpu``) by every consumer thread, as before (``far:CONFIG``).
_FIX_ACQREL = True

#: Split-K's parallel fix-up keeps an item's own share in registers: an item stores to the workspace only the 8-column
#: groups its peers sum (j % S != me) and adds its own partial from registers, in its place of the split order (the
#: fp32 value it would have stored and read back, so C is the same bit for bit). At S = 2 that halves the fix-up's
#: workspace traffic. False stores and reads back the whole partial, as before (``fst:CONFIG``).
_FIX_OWN = True

#: ``PREFIX:CONFIG`` in the GPU scripts (``scripts/gemm_explore_h200.py``, ``scripts/gemm_ncu_h200.py``): CONFIG built
#: with one of the switches above as it was before its change, to time or profile beside the kernel of today
BEFORE = {"sts:": ("_EPI_STMATRIX", False), "enc:": ("_DESC_ADVANCE", False), "tpf:": ("_TMA_PREFETCH", False),
          "v16:": ("_EPI_VEC16", False), "far:": ("_FIX_ACQREL", False),
          "fst:": ("_FIX_OWN", False), "sw2:": ("_EPI_SWAP16", False)}


@contextmanager
def built_as_before(*prefixes: str):
    """Within it, this module builds kernels with :data:`BEFORE`'s switch for each of ``prefixes`` (e.g. ``"enc:"``)
    set as it was before that change: to time a change, or to build the kernel an older report was taken of (the
    sample ncu report of the 4096^3 GEMM the tests read predates ``"enc:"`` and ``"tpf:"``)."""
    unknown = [p for p in prefixes if p not in BEFORE]
    if unknown:
        from txlab.errors import InputError

        raise InputError(f"built_as_before{prefixes!r}: {unknown[0]!r} is not one of {sorted(BEFORE)}",
                         param="prefixes")
    now = {BEFORE[p][0]: globals()[BEFORE[p][0]] for p in prefixes}
    globals().update({BEFORE[p][0]: BEFORE[p][1] for p in prefixes})
    try:
        yield
    finally:
        globals().update(now)

#: elements of C from which the epilogues' stores compute C's flat index in 64 bits: TVM flattens ``C[row, col]`` to
#: ``row * N + col`` in the type of the indices (int32), which wraps past 2**31 - 1 elements (M x N = 65537 x 65537:
#: stores to wrong addresses, no error). Below it the index stays 32-bit, and the kernels measured keep their code.
WIDE_INDEX = 2**31


def _widener(elements: int):
    """``wide(x)``: an index expression as int64 where C has :data:`WIDE_INDEX` elements or more, else ``x`` itself."""
    from tvm.script import tirx as T

    if elements < WIDE_INDEX:
        return lambda x: x
    return lambda x: T.cast(x, "int64")


def gemm_kernel(M: int, N: int, K: int, config: GemmConfig | None = None, *, profile: bool = False):
    """The warp-specialized (and, by default, persistent) kernel for ``config``.

    ``profile=True`` returns the same kernel instrumented with TVM's CudaProfiler
    (``Tx.cuda.timer_*``): a last parameter (after the operands and a split-K workspace), a ``uint64``
    buffer of :func:`profile_slots` slots, and one profiler group per warpgroup (group 0 the producer,
    1.. the consumers) recording :class:`GemmEvent` ranges per work item. Read it with
    ``txlab.timeline.record`` (:func:`record_timeline`)."""
    from tvm.backend.cuda.lang import (ClusterPersistentScheduler2D, MBarrier, Pipeline, PipelineState,
                                       SMEMPool, WarpgroupRole)

    from txlab.examples.gemm_schedulers import SplitTailScheduler
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    @T.inline
    def skip(ps, n):
        """Step a PipelineState over ``n`` ring slots at once (``n`` known when tracing): the
        q = n // depth whole turns flip the phase q times; the r = n % depth more may wrap once."""
        ps.stage = ps.stage + n % ps.depth
        if (n // ps.depth) % 2 == 1:
            ps.phase = ps.phase ^ 1
        if ps.stage >= ps.depth:
            ps.stage = ps.stage - ps.depth
            ps.phase = ps.phase ^ 1

    M, N, K = check_sizes(M, N, K)
    cfg = as_config(config or GemmConfig(), getattr(config, "dtype", "bf16"))
    cfg.validate()
    BM, BN, STAGES, NC = cfg.bm, cfg.bn, cfg.stages, cfg.consumers
    # operand type: bf16, or e4m3 (a Fp8GemmConfig) with per-tensor scales and optional promotion of
    # the tensor core's accumulator into fp32 registers every PROMO k-blocks (hopper_gemm_fp8)
    OP = operand(getattr(cfg, "dtype", "bf16"))
    BK, KSTEP, IN_DT, SCALED = OP["bk"], OP["kstep"], OP["tvm"], OP["scaled"]
    PROMO = getattr(cfg, "promote", 0)
    PROMOTE = PROMO > 0
    NACC = BN // 2  # fp32 accumulators per thread of one m64nBN wgmma
    MW, PP, SERP = cfg.m_atoms, cfg.pingpong, cfg.serpentine
    STMATRIX = _EPI_STMATRIX  # staging stores (TMA and staged epilogues): stmatrix.x4, or (False) 2-byte stores
    ADVANCE = _DESC_ADVANCE  # wgmma descriptors: stage 0's plus an offset, or (False) encoded per wgmma
    # descriptor offsets in 16-byte units: a row of the swizzled operand tiles is one 128-byte swizzle row (BK
    # elements), so a stage of A is BM rows, of B BN rows, an m64 atom 64 rows, and a k-step KSTEP elements in
    # the row (the 128B swizzle's XOR is zero at an atom's first row, which the descriptor addresses)
    ROW16 = BK * (2 if OP["ptx"] == "bf16" else 1) // 16
    assert ROW16 == 8, "a K tile is one 128-byte swizzle row"
    A_STAGE16, B_STAGE16, ATOM16, KSTEP16 = BM * ROW16, BN * ROW16, 64 * ROW16, KSTEP * ROW16 // BK
    NV = MW * NACC // 4  # a consumer thread's fragment in 4-float vectors (split-K's partials)

    def arow(c, mi):
        """First row, in the tile, of consumer ``c``'s m64 atom ``mi``: pingpong's consumer owns the whole tile,
        a cooperative one rows [64 MW c, 64 MW (c + 1)). With one atom (MW = 1) the expression is the ``c * 64`` of
        before, and store_share's atom and column split below is left out there: the TIR of those kernels, the ones
        measured, stays byte-identical."""
        return (mi if PP else (c if MW == 1 else c * MW + mi)) * 64
    # NCH: pieces of a 64-row block, EW columns each (64; 32 or 16 when 64 does not divide BN)
    EW = cfg.epi_width
    TMA_EPI, NCH = cfg.epilogue == "tma", BN // EW
    STG = cfg.epilogue == "staged"  # staged through shared memory, stored back by the threads, coalesced
    # the A/B loads' tensor-map options: TVM's defaults unless the configuration sets the L2 promotion
    LKW = {} if cfg.l2_promotion is None else {"tensormap_l2_promotion": cfg.l2_promotion}
    SKW = {"prefetch_tensormap": True} if _TMA_PREFETCH else {}  # the TMA copies' tensor maps, prefetched at entry
    LKW.update(SKW)
    cfg.check_shape(M, N, K)
    check_extents(M, N, K, getattr(cfg, "dtype", "bf16"))
    NCTA = cfg.ctas(M, N)
    # swap_ab: the kernel computes C.T = B @ A.T (its A is the user's B, its M the user's N) and stores
    # transposed; MU, NU are the user's output shape, M and N from here on the tiled one
    SWAP, MU, NU = cfg.swap_ab, M, N
    M, N = cfg.kernel_shape(MU, NU)
    wide = _widener(M * N)  # C's flat index in 64 bits where 32 would wrap
    GM, GN, KT = _ceil(M, BM), _ceil(N, BN), _ceil(K, BK)
    # clusters: cluster_m x cluster_n CTAs take one cluster tile of the scheduler's grid together; each
    # loads 1/cluster_n of its A tile and 1/cluster_m of its B tile and multicasts them to the CTAs sharing it
    CM, CN, CS, CLU = cfg.cluster_m, cfg.cluster_n, cfg.cluster_size, cfg.cluster_size > 1
    (GMC, GNC), NCL = cfg.work_grid(MU, NU), NCTA // CS
    # each CTA's slice of a shared tile is whole 8-row swizzle atoms; where B's do not split evenly the last CTA of a
    # column loads what the others leave (bn = 200 over 4 CTAs: 56, 56, 56 and 32 rows). A's 64 or 128 rows always
    # split evenly over 1, 2 or 4 CTAs.
    (BMS, BML), (BNS, BNL) = cfg.slices(BM, CN), cfg.slices(BN, CM)
    assert BML == BMS, (BM, CN)
    ROW_BITS = sum(1 << (CM * j) for j in range(CN))  # cluster ranks rm + CM * j: one row of the cluster, at rm = 0
    # split-K: S work items per tile (the scheduler's M index is tile_m * S + split), each a K slice
    SPLIT = cfg.split_k
    SK = SPLIT > 1
    PAR = SK and cfg.fixup == "parallel"  # every item sums its share of the tile (items all resident at once)
    # split_tail: whole tiles first, then the last wave's tiles split (the scheduler's k_slice: -1 for a whole tile)
    TAIL = SK and cfg.split_tail
    WHOLE, RT = cfg.tail_tiles(MU, NU) if TAIL else (0, 0)
    KORD = SK and cfg.split_order == "k"  # the scheduler's M index is split * GMT + tile_m: K slice by K slice
    GMT = cfg.cluster_tiles(MU, NU)[0]  # M tiles of the scheduler's grid (cluster tiles), one K slice's rows
    m_tile, k_slice, k_first, k_count = (_split_tail_indexing(SPLIT, KT) if TAIL
                                         else _split_k_indexing(SPLIT, KT, GMT if KORD else 0))

    def scheduler(prefix):
        """The work-item scheduler: TVM's, over the (split) tile grid, or for split_tail the txlab one over the tiles."""
        if TAIL:
            return SplitTailScheduler(prefix, GMT, GNC, NCL, cfg.l2_group, WHOLE, RT, SPLIT)
        return ClusterPersistentScheduler2D(prefix, num_m_tiles=GMC, num_n_tiles=GNC, num_clusters=NCL,
                                            l2_group_size=L2G, serpentine=SERP)

    @T.inline
    def release(empty, stage, crank):
        """A consumer warp frees ring slot ``stage`` in every CTA whose TMA loads write into this
        CTA's copy of it: itself, and with a cluster its column peers (the other slices of B, ranks
        ``crank ^ d``, ``d < CM``) and its row peers (the other slices of A, ranks ``crank ^ (d * CM)``,
        ``d < CN``; cluster sides are powers of two, rank = rm + CM * rn)."""
        empty.arrive(stage)
        if CM > 1:
            for d in T.unroll(CM - 1):
                empty.arrive(stage, remote=crank ^ (d + 1))
        if CN > 1:
            for d in T.unroll(CN - 1):
                empty.arrive(stage, remote=crank ^ ((d + 1) * CM))

    MMA = f"wgmma.mma_async.sync.aligned.m64n{BN}k{KSTEP}.f32.{OP['ptx']}.{OP['ptx']}"
    MMA_TAIL = OP["tail"]  # imm-scale-a/b (and bf16's imm-trans-a/b: K-major, 0)
    # a decode-sized M loads only A's live rows (an output row depends on its own A row only): half the TMA work at M = 16
    AR = cfg.a_rows(M)
    TX_BYTES = cfg.stage_bytes * (AR + BN) // (BM + BN)
    PREGS, CREGS = cfg.producer_regs, cfg.consumer_regs_
    # cp.async loads: the producer warpgroup's 128 threads copy a stage's 16-byte chunks (8 per 128-byte row; at K
    # off the 128-byte lines a row's chunks make two line requests, where a TMA box row made up to five), rows past
    # the operand and chunks past K zero-filled, each thread's arrival on the full barrier triggered by its copies
    CPA = cfg.loads == "cp_async"
    # an L2 group holds l2_group M tiles whatever the split; in K order, one K slice of every tile
    L2G = GMT if KORD else cfg.l2_group * SPLIT
    # bf16x2 stores are 4-byte aligned only when every row starts at an even column (and the pair lies in a row)
    PAIRS = N % 2 == 0 and not SWAP
    # 16-byte stores of 8 columns (rows 16-byte aligned: N % 8 == 0), four 8-column groups per quad transpose
    VEC16 = _EPI_VEC16 and PAIRS and N % 8 == 0
    # swap_ab: C's rows are the tiled M (the user's N): pairs after a movmatrix where M is even, 16 bytes where M % 8 == 0
    SW_PAIRS = _EPI_SWAP16 and SWAP and M % 2 == 0
    SW_VEC = SW_PAIRS and M % 8 == 0
    NG = NACC // 4  # 8-column groups of one m64 atom's fragment
    TRADES = VEC16 or SW_PAIRS  # the direct epilogue's stores trade values between the lanes of a warp
    FIX_AR = _FIX_ACQREL
    FIX_OWN = _FIX_OWN
    GROUPS = NC + 1  # profiler groups: one per warpgroup
    STRIDE = NCTA * GROUPS
    PROF = profile
    SLOTS = profile_slots(MU, NU, K, cfg)
    LOAD, MAIN, EPI, SETUP = GemmEvent.load_tile, GemmEvent.mainloop, GemmEvent.epilogue, GemmEvent.setup
    FIX = GemmEvent.fixup

    def advance(desc, units):
        """``desc`` with ``units`` (16 bytes each) added to its start address, in the low word alone: a 32-bit add
        (the field never carries, see :data:`_DESC_ADVANCE`), the high word kept."""
        low = T.cast(T.cast(desc, "uint32") + T.cast(units, "uint32"), "uint64")
        return T.bitwise_or(T.shift_left(T.shift_right(desc, T.uint64(32)), T.uint64(32)), low)

    @T.inline
    def put(C, row, col, value):
        """One element of the tiled output at (row, col), as bf16: ``C[row, col]``, or with swap_ab ``C[col, row]``."""
        if SWAP:
            C[wide(col), wide(row)] = T.cast(value, "bfloat16")
        else:
            C[wide(row), wide(col)] = T.cast(value, "bfloat16")

    @T.inline
    def quad_trade(v, a, b, hi, lanes):
        """One butterfly step of :func:`quad_transpose`: lanes whose bit is set (``hi``) send ``v[a]`` and take the
        partner's (lane ``^ lanes``) into it, the others send ``v[b]`` and take into ``v[b]``."""
        got = T.local_scalar("uint32")
        got = T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), T.Select(hi, v[a], v[b]), lanes, 32)
        v[a] = T.Select(hi, got, v[a])
        v[b] = T.Select(hi, v[b], got)

    @T.inline
    def quad_transpose(v, i):
        """The four lanes of a quad (``i``: this lane's index in it) transpose their 4 x 4 words ``v``: afterwards lane
        i's ``v[s]`` is lane s's ``v[i]`` before. Two butterfly rounds (lanes i ^ 2, then i ^ 1), each trading the two
        words whose position differs from the lane in that bit; every lane of the warp takes part."""
        quad_trade(v, 0, 2, (i >> 1) % 2 == 1, 2)
        quad_trade(v, 1, 3, (i >> 1) % 2 == 1, 2)
        quad_trade(v, 0, 1, i % 2 == 1, 1)
        quad_trade(v, 2, 3, i % 2 == 1, 1)

    @T.inline
    def transposed_word(w, acc, G, h):
        """``w``: the 8 x 8 block (group ``G`` of the fragment, rows + 8 h) transposed across the warp by movmatrix:
        the lane's two bf16 of C (swap_ab) at rows 2 (lane % 4), + 1 of the block's transpose, column lane // 4."""
        pv = T.alloc_local([2], "bfloat16")
        pv[0] = T.cast(acc[G * 4 + h * 2], "bfloat16")
        pv[1] = T.cast(acc[G * 4 + h * 2 + 1], "bfloat16")
        pw = T.decl_buffer([1], "uint32", data=pv.data, scope="local")
        T.ptx.movmatrix.sync.aligned.m8n8.trans.b16(w, pw[0])

    @T.inline
    def store_swapped_quad(C, acc, G0, G1, r0, c0, c, tid):
        """swap_ab, 16-byte stores: groups ``G0`` and ``G1`` of the fragment (each two 8 x 8 blocks, h = 0, 1; any
        atom) of the tile at rows ``r0`` and columns ``c0`` of the tiled output (columns of C^T). After movmatrix lane
        q of a quad holds word q of each of the four blocks; the quad transpose gives it block q's four words, 8
        consecutive elements of one row of C."""
        v = T.alloc_local([4], "uint32")
        for g in T.unroll(4):
            transposed_word(v[g], acc, G0 + (G1 - G0) * (g // 2), g % 2)
        quad_transpose(v, tid % 4)
        gq = T.meta_var(G0 + (G1 - G0) * ((tid % 4) // 2))
        row = T.meta_var(r0 + arow(c, gq // NG) + (tid // 32) * 16 + 8 * (tid % 2))
        col = T.meta_var(c0 + (gq % NG) * 8 + (tid % 32) // 4)
        if row < M and col < N:
            Cv = T.decl_buffer([M * N // 2], "uint32", data=C.data)
            for e in T.vectorized(4):
                Cv[(wide(col) * M + row) // 2 + e] = v[e]

    @T.inline
    def store_swapped_pairs(C, acc, G, r0, c0, c, tid):
        """swap_ab, 4-byte stores: group ``G`` of the fragment, each lane's movmatrix pair of one row of C."""
        for h in T.unroll(2):
            w = T.alloc_local([1], "uint32")
            transposed_word(w[0], acc, G, h)
            row = T.meta_var(r0 + arow(c, G // NG) + (tid // 32) * 16 + 8 * h + 2 * (tid % 4))
            col = T.meta_var(c0 + (G % NG) * 8 + (tid % 32) // 4)
            if row < M and col < N:
                Cw = T.decl_buffer([M * N // 2], "uint32", data=C.data)
                Cw[(wide(col) * M + row) // 2] = w[0]

    def frag_row(mt, rm, c, mi, tid):
        """The first row, in C (C.T with swap_ab), of this thread's part of m64 atom ``mi`` of cluster tile row ``mt``
        (the thread's other row is 8 below)."""
        return (mt * CM + rm) * BM + arow(c, mi) + (tid % 32) // 4 + (tid // 32) * 16

    @T.inline
    def store_group_lanewise(C, acc, a0, row, col):
        """One 8-column group of the fragment (``acc[a0 .. a0 + 4)``: rows ``row`` and ``row + 8``, columns ``col`` and
        ``col + 1``): the lane stores its own elements, a 4-byte pair where N is even (swap_ab: one element at a time),
        and trades nothing with other lanes."""
        for h in T.unroll(2):
            if PAIRS:
                if row + 8 * h < M and col < N:
                    pair = T.alloc_local([2], "bfloat16")
                    pair[0] = T.cast(acc[a0 + h * 2], "bfloat16")
                    pair[1] = T.cast(acc[a0 + h * 2 + 1], "bfloat16")
                    word = T.decl_buffer([1], "uint32", data=pair.data, scope="local")
                    Cw = T.decl_buffer([M * N // 2], "uint32", data=C.data)
                    Cw[(wide(row + 8 * h) * N + col) // 2] = word[0]
            else:
                for e in T.unroll(2):
                    if row + 8 * h < M and col + e < N:
                        put(C, row + 8 * h, col + e, acc[a0 + h * 2 + e])

    @T.inline
    def store_groups_lanewise(C, acc, row, mi, j0, nt, tid, rn):
        """8-column groups ``j0..`` of m64 atom ``mi`` (its fragment's rows ``row``, + 8), each by
        :func:`store_group_lanewise`."""
        for j in T.unroll(j0, NACC // 4):
            store_group_lanewise(C, acc, mi * NACC + j * 4, row, (nt * CN + rn) * BN + j * 8 + (tid % 4) * 2)

    @T.inline
    def store_lanewise(C, acc, mt, nt, c, tid, rm, rn):
        """:func:`store_direct` without its trades between lanes (:data:`_EPI_VEC16`'s quad transposes, swap_ab's
        movmatrix): for lanes that store where others of their warp do not (the serial fix-up's last counts)."""
        for mi in T.unroll(MW):
            store_groups_lanewise(C, acc, frag_row(mt, rm, c, mi, tid), mi, 0, nt, tid, rn)

    @T.inline
    def store_direct(C, acc, mt, nt, c, tid, rm, rn):
        """The direct epilogue: each thread stores its fragment of cluster tile (mt, nt) to C as bf16
        (pairs of 4 bytes when N is even; with :data:`_EPI_VEC16`, 16 bytes of 8 columns per thread for each four
        8-column groups, the rest in pairs; with swap_ab, :data:`_EPI_SWAP16`'s), guarded at M and N."""
        if SW_PAIRS:
            for mi in T.unroll(MW):
                for t in T.unroll(NG // 2 if SW_VEC else 0):
                    store_swapped_quad(C, acc, mi * NG + 2 * t, mi * NG + 2 * t + 1, (mt * CM + rm) * BM,
                                       (nt * CN + rn) * BN, c, tid)
                for jj in T.unroll((NG // 2) * 2 if SW_VEC else 0, NG):
                    store_swapped_pairs(C, acc, mi * NG + jj, (mt * CM + rm) * BM, (nt * CN + rn) * BN, c, tid)
        for mi in T.unroll(0 if SW_PAIRS else MW):
            row = T.meta_var(frag_row(mt, rm, c, mi, tid))
            if VEC16:
                for j4 in T.unroll(NACC // 16):
                    for h in T.unroll(2):
                        v = T.alloc_local([4], "uint32")
                        for g in T.unroll(4):
                            pv = T.alloc_local([2], "bfloat16")
                            pv[0] = T.cast(acc[mi * NACC + (j4 * 4 + g) * 4 + h * 2], "bfloat16")
                            pv[1] = T.cast(acc[mi * NACC + (j4 * 4 + g) * 4 + h * 2 + 1], "bfloat16")
                            pw = T.decl_buffer([1], "uint32", data=pv.data, scope="local")
                            v[g] = pw[0]
                        quad_transpose(v, tid % 4)
                        # lane i of the quad now holds group 4 j4 + i's 8 columns of its row, in order
                        vcol = T.meta_var((nt * CN + rn) * BN + (j4 * 4 + tid % 4) * 8)
                        if row + 8 * h < M and vcol < N:
                            Cv = T.decl_buffer([M * N // 2], "uint32", data=C.data)
                            for e in T.vectorized(4):
                                Cv[(wide(row + 8 * h) * N + vcol) // 2 + e] = v[e]
            store_groups_lanewise(C, acc, row, mi, (NACC // 16) * 4 if VEC16 else 0, nt, tid, rn)

    @T.inline
    def store_share(C, acc, mt, nt, c, tid, me):
        """The parallel fix-up's store: the 8-column groups j of the fragment with j % SPLIT == me (this
        item's share of the tile), in 4-byte bf16 pairs as :func:`store_direct` did before
        :data:`_EPI_VEC16` (16-byte stores of two groups per quad measured even with them: round 29, H100); with
        swap_ab, :data:`_EPI_SWAP16`'s (two share groups G, G + S per quad)."""
        if SW_PAIRS:
            for p in T.unroll(NV // (2 * SPLIT) if SW_VEC else 0):
                for r in T.unroll(SPLIT):
                    if r == me:
                        store_swapped_quad(C, acc, p * 2 * SPLIT + r, p * 2 * SPLIT + SPLIT + r, mt * BM, nt * BN,
                                           c, tid)
            for j in T.unroll((NV // (2 * SPLIT)) * 2 * SPLIT if SW_VEC else 0, NV):
                if j % SPLIT == me:
                    store_swapped_pairs(C, acc, j, mt * BM, nt * BN, c, tid)
        for j in T.unroll(0 if SW_PAIRS else NV):
            if j % SPLIT == me:
                row = T.meta_var(mt * BM + arow(c, j // (NACC // 4) if MW > 1 else 0) + (tid % 32) // 4
                                 + (tid // 32) * 16)
                col = T.meta_var(nt * BN + (j % (NACC // 4) if MW > 1 else j) * 8 + (tid % 4) * 2)
                store_group_lanewise(C, acc, j * 4, row, col)

    WTH = 128 * NC  # split-K: consumer threads, each with its own slice of a partial tile (and serial: counter)
    FIX_BAR = max(3, NC + 1)  # the parallel fix-up's named barrier: past the warpgroups' own (1 + c)
    # the tile grid rounded up to whole clusters (a cluster's CTAs past the edge sum partials nobody stores)
    GMP, GNP = cfg.cluster_tiles(MU, NU)[0] * CM, cfg.cluster_tiles(MU, NU)[1] * CN
    # the workspace's partials (split_tail: of the split tiles alone); the tiles' counters follow (int32)
    WPART = (RT if TAIL else GMP * GNP) * SPLIT * BM * BN
    WSIZE = cfg.workspace_elems(MU, NU)

    @T.inline
    def fixed_up(prof, tag, off, tid):
        """Profiled split-K: the item's fix-up range ends (partial stored and counted, peers waited for) and its
        epilogue's begins."""
        if PROF:
            T.cuda.timer_end(FIX, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_start(EPI, prof.data, tag.data, off.data, STRIDE, tid == 0)

    @T.inline
    def fixup_parallel(C, W, Wc, acc, tile, me, tm, tn, c, tid, prof, tag, off):
        """Split-K's parallel fix-up for item ``me`` of partial tile ``tile`` (output tile ``tm, tn``): store the
        8-column groups of this item's fp32 partial its peers sum (:data:`_FIX_OWN`; else all of it) and count it
        (release), wait until the tile's S items have (acquire), then sum the groups j % S == me of all S partials in
        split order (its own from registers) and store them; the second count's last resets the counter."""
        slot = T.meta_var(c * 128 + tid)
        for v in T.unroll(NV):
            if not FIX_OWN or v % SPLIT != me:  # FIX_OWN: only the groups the peers sum
                for e in T.vectorized(4):
                    W[(((tile * SPLIT + me) * NV + v) * WTH + slot) * 4 + e] = acc[v * 4 + e]
        # one counter per tile: the consumers meet (named barrier FIX_BAR), one thread counts and waits for
        # the tile's S items, and they meet again (per-thread counters measured 0.5-2 % slower)
        # FIX_AR: the barrier orders every consumer's partial stores before the counting release reduction, and the
        # waiting thread's acquire, then the barrier, orders the peers' partials before the reads (far:, every
        # consumer thread's fence before and after)
        if not FIX_AR:
            T.cuda.thread_fence()
        T.ptx.bar.sync(T.uint32(FIX_BAR), T.uint32(WTH))
        if tid == 0:
            if c == 0:
                if FIX_AR:
                    T.ptx.red.release.gpu.global_.add.s32(T.address_of(Wc[WPART + tile * WTH]), 1)
                    seen = T.local_scalar("int32")
                    T.cuda.wait_until(seen, T.address_of(Wc[WPART + tile * WTH]), lambda v: v >= SPLIT)
                else:
                    T.evaluate(T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH]), 1))
                    while T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH]), 0) < SPLIT:
                        T.evaluate(0)
        T.ptx.bar.sync(T.uint32(FIX_BAR), T.uint32(WTH))
        fixed_up(prof, tag, off, tid)
        if not FIX_AR:
            T.cuda.thread_fence()
        for v in T.unroll(NV):
            if v % SPLIT == me:
                own = T.alloc_local([4], "float32")
                for e in T.vectorized(4):
                    own[e] = acc[v * 4 + e]
                    acc[v * 4 + e] = T.float32(0)
                for part in T.unroll(SPLIT):  # all S loads in flight at once
                    if FIX_OWN and part == me:
                        for e in T.vectorized(4):
                            acc[v * 4 + e] = acc[v * 4 + e] + own[e]
                    else:
                        for e in T.vectorized(4):
                            acc[v * 4 + e] = acc[v * 4 + e] + \
                                W[(((tile * SPLIT + part) * NV + v) * WTH + slot) * 4 + e]
        store_share(C, acc, tm, tn, c, tid, me)
        if tid == 0:
            if c == 0:
                fin = T.local_scalar("int32")
                fin = T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH]), 1)
                if fin == 2 * SPLIT - 1:
                    T.evaluate(T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH]), -2 * SPLIT))

    @T.inline
    def fixup_serial(C, W, Wc, acc, tile, me, mt, nt, c, tid, rm, rn, prof, tag, off):
        """Split-K's serial fix-up for item ``me`` of partial tile ``tile`` (cluster tile ``mt, nt``): store this
        item's fp32 partial, then (release: fence, then count) bump this thread's counter of the tile; the item that
        counts last (acquire: fence after the count) sums the S partials in split order into acc, resets the counter
        and stores C."""
        slot = T.meta_var(c * 128 + tid)
        for v in T.unroll(NV):
            for e in T.vectorized(4):
                W[(((tile * SPLIT + me) * NV + v) * WTH + slot) * 4 + e] = \
                    acc[v * 4 + e]
        seen = T.local_scalar("int32")
        if FIX_AR:  # release: this thread's partial stores; acquire: the earlier items' (one release sequence)
            T.ptx.atom.acq_rel.gpu.global_.add.s32(seen, T.address_of(Wc[WPART + tile * WTH + slot]), 1)
        else:
            T.cuda.thread_fence()
            seen = T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH + slot]), 1)
        fixed_up(prof, tag, off, tid)
        if seen == SPLIT - 1:
            if not FIX_AR:
                T.cuda.thread_fence()
            T.evaluate(T.cuda.atomic_add(T.address_of(Wc[WPART + tile * WTH + slot]), -SPLIT))
            for i in T.unroll(MW * NACC):
                acc[i] = T.float32(0)
            for s in T.serial(SPLIT):
                for v in T.unroll(NV):
                    for e in T.vectorized(4):
                        acc[v * 4 + e] = acc[v * 4 + e] + \
                            W[(((tile * SPLIT + s) * NV + v) * WTH + slot) * 4 + e]
            if not TRADES:
                store_direct(C, acc, mt, nt, c, tid, rm, rn)
        if TRADES:
            # each thread counts its own counter, so two items ending together may each count last for some lanes of
            # a warp: the stores that trade values between lanes run only where the whole warp counted last
            if T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), seen == SPLIT - 1) == T.uint32(0xFFFFFFFF):
                store_direct(C, acc, mt, nt, c, tid, rm, rn)
            elif seen == SPLIT - 1:
                store_lanewise(C, acc, mt, nt, c, tid, rm, rn)

    @T.inline
    def stage_piece(Cs, buf, acc, mi, q, tid, lane):
        """Write piece ``q`` (64 rows x EW columns) of m64 atom ``mi`` of the fragment to staging tile ``buf`` as bf16
        (transposed with swap_ab): by stmatrix.x4, a 16 x 16 block (four 8 x 8 matrices: column groups 2jp + g, halves
        h) per instruction, lane l addressing row l % 8 of matrix l // 8; or element by element."""
        if STMATRIX:
            for jp in T.unroll(EW // 16):
                pk = T.alloc_local([8], "bfloat16")
                for g in T.unroll(2):
                    for h in T.unroll(2):
                        for e in T.unroll(2):
                            pk[(g * 2 + h) * 2 + e] = T.cast(
                                acc[mi * NACC + (q * (EW // 8) + 2 * jp + g) * 4 + h * 2 + e], "bfloat16")
                wd = T.decl_buffer([4], "uint32", data=pk.data, scope="local")
                fr = T.meta_var((tid // 32) * 16 + ((lane // 8) % 2) * 8)  # the matrix's first row in the fragment
                fc = T.meta_var((2 * jp + lane // 16) * 8)  # and its first column
                if SWAP:
                    T.ptx["stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"](
                        Cs.ptr_to([buf, fc + lane % 8, fr]), wd[0], wd[1], wd[2], wd[3])
                else:
                    T.ptx["stmatrix.sync.aligned.m8n8.x4.shared.b16"](
                        Cs.ptr_to([buf, fr + lane % 8, fc]), wd[0], wd[1], wd[2], wd[3])
        else:
            for jj in T.unroll(EW // 8):
                for h in T.unroll(2):
                    for e in T.unroll(2):
                        pr = T.meta_var((tid % 32) // 4 + (tid // 32) * 16 + 8 * h)
                        pc = T.meta_var(jj * 8 + (tid % 4) * 2 + e)
                        v = T.meta_var(acc[mi * NACC + (q * (EW // 8) + jj) * 4 + h * 2 + e])
                        if SWAP:
                            Cs[buf, pc, pr] = T.cast(v, "bfloat16")
                        else:
                            Cs[buf, pr, pc] = T.cast(v, "bfloat16")

    @T.inline
    def copy_rows(S, G, stage, r0, R, ROWS, kg, tid):
        """cp.async: rows [r0, r0 + ROWS) of operand G's k-block kg into ring slot ``stage`` of S (its swizzled
        layout places each 16-byte chunk), chunk i * 128 + tid by thread tid: 8 consecutive lanes per row."""
        for i in T.unroll((ROWS * 8 + 127) // 128):
            idx = T.meta_var(i * 128 + tid)
            row = T.meta_var(idx // 8)
            ch = T.meta_var(idx % 8)
            if ROWS * 8 % 128 == 0 or idx < ROWS * 8:
                gr = T.meta_var(r0 + row)
                gk = T.meta_var(kg * BK + ch * 8)
                T.ptx["cp.async.cg.shared.global"](
                    S.ptr_to([stage, row, ch * 8]), G.ptr_to([T.min(gr, R - 1), T.min(gk, K - 8)]), 16,
                    T.Select(T.And(gr < R, gk < K), T.uint32(16), T.uint32(0)))

    def ops(A, B):
        """The kernel's two operands: (A, B), or with swap_ab (B, A)."""
        return (B, A) if SWAP else (A, B)

    @T.macro
    def body(A, B, C, prof, SA, SB, W, Wc):
        T.device_entry()
        T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})  # a register cap at entry: setmaxnreg works
        cta = T.cta_id([NCTA])
        if CLU:
            crank = T.cta_id_in_cluster([CS])  # rank = rm + CM * rn
            rm = T.meta_var(crank % CM)
            rn = T.meta_var(crank // CM)
            cid = T.meta_var(cta // CS)
            # CTAs of my column (same rn) share B; of my row (same rm), A
            mask_b = T.meta_var(((1 << CM) - 1) if CN == 1 else T.shift_left(T.int32((1 << CM) - 1), rn * CM))
            mask_a = T.meta_var(((1 << CN) - 1) if CM == 1 else T.shift_left(T.int32(ROW_BITS), rm))
            # whether my slice of B is a whole BNS rows: always where they split evenly (a static branch), else all but
            # the column's last CTA
            b_full_slice = T.meta_var(True if BNL == BNS else rm < CM - 1)
        else:
            crank = T.meta_var(0)
            rm = T.meta_var(0)
            rn = T.meta_var(0)
            cid = T.meta_var(cta)
        wg = T.warpgroup_id([NC + 1])
        T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        tid = T.thread_id_in_wg([128])
        T.thread_id([128 * (NC + 1)])
        if PROF:  # the producer's leader stamps the CTA's setup: from here to its barriers initialized and synced
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            T.cuda.timer_init(prof.data, tag.data, off.data, GROUPS, wg)
            T.cuda.timer_start(SETUP, prof.data, tag.data, off.data, STRIDE, T.And(wg == 0, tid == 0))
        else:
            tag = T.meta_var(None)
            off = T.meta_var(None)

        pool = SMEMPool()
        As = pool.alloc_tcgen05_mma_AB((STAGES, BM, BK), IN_DT)
        Bs = pool.alloc_tcgen05_mma_AB((STAGES, BN, BK), IN_DT)
        if TMA_EPI or STG:  # swizzled 64 x EW staging tiles (EW * 2-byte rows), EPI_BUFFERS per consumer: the TMA
            # store's boxes
            # (swap_ab: EW x 64, a box of C's EW rows of 64 columns, the piece transposed)
            Cs = pool.alloc_tcgen05_mma_AB((NC * EPI_BUFFERS, EW, 64) if SWAP else (NC * EPI_BUFFERS, 64, EW),
                                           "bfloat16", swizzle_mode=_swizzle(64 if SWAP else EW))
        # full: the producer's expect_tx arrival + TMA bytes; empty: one arrival per warp of the
        # consumers that read the slot (all of them cooperatively, one warpgroup in pingpong)
        # (times the CTAs sharing a slot's loads, with a cluster)
        pipe = Pipeline(pool, STAGES, full="mbar" if CPA else "tma", empty="mbar", init_full=128 if CPA else 1,
                        init_empty=(4 if PP else 4 * NC) * cfg.sharers)
        if PP:
            # pingpong order: consumer c's mainloop for a tile starts once the other consumer's mainloop for
            # the tile before it has passed all its full-barrier waits (arrival of its 4 warps on order[c]);
            # so no consumer waits on a slot more than one phase ahead, and the mainloops alternate
            order = MBarrier(pool, 2)
            order.init(4)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        if CLU:  # peers arrive on and multicast into this CTA's barriers and ring: all initialized first
            T.ptx.fence.mbarrier_init.release.cluster()
            T.cuda.cluster_sync()
        else:
            T.cuda.cta_sync()
        if PROF:
            T.cuda.timer_end(SETUP, prof.data, tag.data, off.data, STRIDE, T.And(wg == 0, tid == 0))

        with WarpgroupRole(wg, 0, regs=PREGS, increase=False):
            if CPA:  # producer: the warpgroup's threads copy A/B tiles for every (tile, k) this CTA owns
                sched = scheduler("p")
                sched.init(cid)
                ps = PipelineState(STAGES, 1)
                while sched.valid():
                    m0 = T.meta_var(m_tile(sched) * BM)
                    n0 = T.meta_var(sched.n_idx * BN)
                    for k in T.serial(k_count(sched)):
                        kg = T.meta_var(k_first(sched) + k)
                        pipe.empty.wait(ps.stage, ps.phase)
                        copy_rows(As, A, ps.stage, m0, M, BM, kg, tid)
                        copy_rows(Bs, B, ps.stage, n0, N, BN, kg, tid)
                        T.ptx["cp.async.mbarrier.arrive.noinc.shared.b64"](pipe.full.ptr_to([ps.stage]))
                        ps.advance()
                    sched.next_tile()
            # producer: one thread streams A/B tiles for every (tile, k) this CTA owns
            elif tid == 0:
                sched = scheduler("p")
                sched.init(cid)
                ps = PipelineState(STAGES, 1)  # a fresh empty barrier counts as released
                while sched.valid():
                    m0 = T.meta_var((m_tile(sched) * CM + rm) * BM)
                    n0 = T.meta_var((sched.n_idx * CN + rn) * BN)
                    if PROF:
                        T.cuda.timer_start(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    for k in T.serial(k_count(sched)):
                        kg = T.meta_var(k_first(sched) + k)  # k-step of the whole K loop
                        pipe.empty.wait(ps.stage, ps.phase)
                        if CN > 1:  # my slice of the row's A tile, to every CTA of my row
                            Tx.copy_async(As[ps.stage, rn * BMS:rn * BMS + BMS, :],
                                          A[m0 + rn * BMS:m0 + rn * BMS + BMS, kg * BK:kg * BK + BK],
                                          dispatch="tma_explicit", mbar=pipe.full.ptr_to([ps.stage]), cta_mask=mask_a,
                                          **LKW)
                        else:
                            Tx.copy_async(As[ps.stage, 0:AR, :], A[m0:m0 + AR, kg * BK:kg * BK + BK],
                                          dispatch="tma_explicit", mbar=pipe.full.ptr_to([ps.stage]), **LKW)
                        if CM > 1:  # my slice of the column's B tile, to every CTA of my column
                            if b_full_slice:
                                Tx.copy_async(Bs[ps.stage, rm * BNS:rm * BNS + BNS, :],
                                              B[n0 + rm * BNS:n0 + rm * BNS + BNS, kg * BK:kg * BK + BK],
                                              dispatch="tma_explicit", mbar=pipe.full.ptr_to([ps.stage]),
                                              cta_mask=mask_b, **LKW)
                            else:  # the column's last CTA, slices uneven: the rows the others leave
                                Tx.copy_async(Bs[ps.stage, (CM - 1) * BNS:BN, :],
                                              B[n0 + (CM - 1) * BNS:n0 + BN, kg * BK:kg * BK + BK],
                                              dispatch="tma_explicit", mbar=pipe.full.ptr_to([ps.stage]),
                                              cta_mask=mask_b, **LKW)
                        else:
                            Tx.copy_async(Bs[ps.stage, :, :], B[n0:n0 + BN, kg * BK:kg * BK + BK],
                                          dispatch="tma_explicit", mbar=pipe.full.ptr_to([ps.stage]), **LKW)
                        pipe.full.arrive(ps.stage, TX_BYTES)  # the whole stage lands here, whoever loads it
                        ps.advance()
                    if PROF:
                        T.cuda.timer_end(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    sched.next_tile()
                if PROF:
                    T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, True)

        with _ConsumerRole(wg, (1, NC + 1), regs=CREGS, increase=True):
            # cooperative: warpgroup c owns rows [64 MW c, 64 MW (c + 1)) of every BM x BN tile;
            # pingpong: warpgroup c owns whole tiles, every other one of the CTA's sequence (c-th first)
            c = T.meta_var(wg - 1)
            acc = T.alloc_local([MW * NACC], "float32")
            descA: T.uint64
            descB: T.uint64
            if ADVANCE:  # stage 0's descriptors (k-step 0, this consumer's first atom), once
                T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descA), As.ptr_to([0, arow(c, 0), 0]), 1, 64, 3)
                T.cuda.wgmma.encode_matrix_descriptor(T.address_of(descB), Bs.ptr_to([0, 0, 0]), 1, 64, 3)
            prev = T.local_scalar("int32")
            if PROMOTE:  # the fp32 sum of the tensor core's partial accumulators
                total = T.alloc_local([MW * NACC], "float32")
            if SCALED:
                scale = T.local_scalar("float32")
                scale = SA[0] * SB[0]
            sched = scheduler("c")
            sched.init(cid)
            cs = PipelineState(STAGES, 0)
            if PP:
                done = T.local_scalar("int32")  # tiles this consumer has finished
                done = 0
                if c == 1:  # the second consumer starts one tile (KT k-blocks of the ring) later
                    sched.next_tile()
                    skip(cs, KT)
            while sched.valid():
                if PP:
                    if done + c > 0:  # the other consumer's mainloop for the tile before this one
                        order.wait(1 - c, (done + c + 1) % 2)
                if PROF:
                    T.cuda.timer_start(MAIN, prof.data, tag.data, off.data, STRIDE, tid == 0)
                if PROMOTE:
                    for i in T.unroll(MW * NACC):
                        total[i] = T.float32(0)
                for k in T.serial(k_count(sched)):
                    pipe.full.wait(cs.stage, cs.phase)
                    if CPA:  # the copies wrote through the generic proxy; wgmma reads through the async one
                        T.ptx.fence.proxy.async_.shared__cta()
                    T.ptx.wgmma.fence.sync.aligned()
                    for kk in T.unroll(BK // KSTEP):
                        for mi in T.unroll(MW):
                            if ADVANCE:
                                T.ptx[MMA](*[acc[mi * NACC + i] for i in range(NACC)],
                                           advance(descA, cs.stage * A_STAGE16 + (mi * ATOM16 + kk * KSTEP16)),
                                           advance(descB, cs.stage * B_STAGE16 + kk * KSTEP16),
                                           ((k % PROMO if PROMOTE else k) > 0) | (kk > 0), *MMA_TAIL)
                            else:
                                T.cuda.wgmma.encode_matrix_descriptor(
                                    T.address_of(descA), As.ptr_to([cs.stage, arow(c, mi), kk * KSTEP]), 1, 64, 3)
                                if mi == 0:  # B's descriptor: once per k16 step, shared by the m64 atoms
                                    T.cuda.wgmma.encode_matrix_descriptor(
                                        T.address_of(descB), Bs.ptr_to([cs.stage, 0, kk * KSTEP]), 1, 64, 3)
                                T.ptx[MMA](*[acc[mi * NACC + i] for i in range(NACC)], descA, descB,
                                           ((k % PROMO if PROMOTE else k) > 0) | (kk > 0), *MMA_TAIL)
                    T.ptx.wgmma.commit_group.sync.aligned()
                    # keep this k's group in flight; the previous one is done: release its slot
                    T.ptx.wgmma.wait_group.sync.aligned(1)
                    if k > 0:
                        if lane == 0:
                            release(pipe.empty, prev, crank)
                    prev = cs.stage
                    cs.advance()
                    if PROMOTE:  # every PROMO k-blocks and at the end: drain, add into total, restart
                        if k % PROMO == PROMO - 1 or k == k_count(sched) - 1:
                            T.ptx.wgmma.wait_group.sync.aligned(0)
                            for i in T.unroll(MW * NACC):
                                T.cuda.wgmma.noop_barrier(acc[i])
                                total[i] = total[i] + acc[i]
                if PP:
                    if lane == 0:
                        order.arrive(c)
                T.ptx.wgmma.wait_group.sync.aligned(0)
                if lane == 0:
                    release(pipe.empty, prev, crank)
                for i in T.unroll(MW * NACC):
                    T.cuda.wgmma.noop_barrier(acc[i])
                if SCALED:  # out = scale_a * scale_b * (A @ B.T), in fp32, before the bf16 rounding
                    for i in T.unroll(MW * NACC):
                        acc[i] = (total[i] if PROMOTE else acc[i]) * scale
                if PROF:  # a split-K item's end starts with its fix-up (a whole tile of split_tail's: an empty one)
                    T.cuda.timer_end(MAIN, prof.data, tag.data, off.data, STRIDE, tid == 0)
                    T.cuda.timer_start(FIX if SK else EPI, prof.data, tag.data, off.data, STRIDE, tid == 0)
                # epilogue: fragment row (t%32)//4 + 16*(t//32) + 8h, column 8j + 2(t%4) + e
                if TMA_EPI:
                    # per 64 x EW piece: wait until the store that last read its staging tile is done
                    # reading, write the fragment there (bf16), make it visible to the async proxy, and
                    # one thread stores the box with TMA (clipped at M and N), without waiting for it
                    for mi in T.unroll(MW):
                        for q in T.unroll(NCH):
                            buf = T.meta_var(c * EPI_BUFFERS + (mi * NCH + q) % EPI_BUFFERS)
                            if tid == 0:
                                T.ptx.cp.async_.bulk.wait_group.read(EPI_BUFFERS - 1)
                            T.cuda.warpgroup_sync(1 + c)
                            stage_piece(Cs, buf, acc, mi, q, tid, lane)
                            T.ptx.fence.proxy.async_.shared__cta()
                            T.cuda.warpgroup_sync(1 + c)
                            if tid == 0:
                                r0 = T.meta_var((m_tile(sched) * CM + rm) * BM + arow(c, mi))
                                c0 = T.meta_var((sched.n_idx * CN + rn) * BN + q * EW)
                                if SWAP:
                                    Tx.copy_async(C[c0:c0 + EW, r0:r0 + 64], Cs[buf, :, :], dispatch="tma_explicit",
                                                  **SKW)
                                else:
                                    Tx.copy_async(C[r0:r0 + 64, c0:c0 + EW], Cs[buf, :, :], dispatch="tma_explicit",
                                                  **SKW)
                                T.ptx.cp.async_.bulk.commit_group()
                elif STG:
                    # per 64 x 64 piece: wait until every thread is done reading the staging tile's last piece,
                    # write the fragment there (bf16), then the warpgroup stores the piece row by row: a warp
                    # covers a row's 64 columns (bf16 pairs when N is even, else single elements), coalesced
                    for mi in T.unroll(MW):
                        for q in T.unroll(NCH):
                            buf = T.meta_var(c * EPI_BUFFERS + (mi * NCH + q) % EPI_BUFFERS)
                            T.cuda.warpgroup_sync(1 + c)
                            stage_piece(Cs, buf, acc, mi, q, tid, lane)
                            T.cuda.warpgroup_sync(1 + c)
                            r0 = T.meta_var((m_tile(sched) * CM + rm) * BM + arow(c, mi))
                            c0 = T.meta_var((sched.n_idx * CN + rn) * BN + q * 64)
                            if PAIRS:
                                for it in T.unroll(16):
                                    if r0 + it * 4 + tid // 32 < M and c0 + (tid % 32) * 2 < N:
                                        pair = T.alloc_local([2], "bfloat16")
                                        pair[0] = Cs[buf, it * 4 + tid // 32, (tid % 32) * 2]
                                        pair[1] = Cs[buf, it * 4 + tid // 32, (tid % 32) * 2 + 1]
                                        word = T.decl_buffer([1], "uint32", data=pair.data, scope="local")
                                        Cw = T.decl_buffer([M * N // 2], "uint32", data=C.data)
                                        Cw[(wide(r0 + it * 4 + tid // 32) * N + c0 + (tid % 32) * 2) // 2] = word[0]
                            else:
                                for it in T.unroll(32):
                                    if r0 + it * 2 + tid // 64 < M and c0 + tid % 64 < N:
                                        C[wide(r0 + it * 2 + tid // 64), wide(c0 + tid % 64)] = \
                                            Cs[buf, it * 2 + tid // 64, tid % 64]
                elif PAR:
                    if CLU:  # this CTA's tile of the cluster tile
                        tm = T.meta_var(m_tile(sched) * CM + rm)
                        tn = T.meta_var(sched.n_idx * CN + rn)
                    else:
                        tm = T.meta_var(m_tile(sched))
                        tn = T.meta_var(sched.n_idx)
                    if TAIL:  # a whole tile, or an item of the split tile split_pos
                        if sched.k_slice < 0:
                            fixed_up(prof, tag, off, tid)
                            store_direct(C, acc, tm, tn, c, tid, rm, rn)
                        else:
                            fixup_parallel(C, W, Wc, acc, sched.split_pos, sched.k_slice, tm, tn, c, tid, prof, tag,
                                           off)
                    else:
                        fixup_parallel(C, W, Wc, acc, tm * GNP + tn, k_slice(sched), tm, tn, c, tid, prof, tag, off)
                elif SK:
                    if CLU:  # this CTA's tile of the cluster tile
                        tile = T.meta_var((m_tile(sched) * CM + rm) * GNP + sched.n_idx * CN + rn)
                    else:
                        tile = T.meta_var(m_tile(sched) * GN + sched.n_idx)
                    if TAIL:
                        if sched.k_slice < 0:
                            fixed_up(prof, tag, off, tid)
                            store_direct(C, acc, m_tile(sched), sched.n_idx, c, tid, rm, rn)
                        else:
                            fixup_serial(C, W, Wc, acc, sched.split_pos, sched.k_slice, m_tile(sched), sched.n_idx, c,
                                         tid, rm, rn, prof, tag, off)
                    else:
                        fixup_serial(C, W, Wc, acc, tile, k_slice(sched), m_tile(sched), sched.n_idx, c, tid, rm, rn,
                                     prof, tag, off)
                else:
                    store_direct(C, acc, sched.m_idx, sched.n_idx, c, tid, rm, rn)
                if PROF:
                    T.cuda.timer_end(EPI, prof.data, tag.data, off.data, STRIDE, tid == 0)
                sched.next_tile()
                if PP:  # skip the other consumer's tile
                    done = done + 1
                    sched.next_tile()
                    skip(cs, KT)
            if TMA_EPI:
                if tid == 0:  # the last stores must finish before the CTA (and its shared memory) goes
                    T.ptx.cp.async_.bulk.wait_group(0)
            if PROF:
                T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, tid == 0)
        if CLU:  # no CTA leaves while a peer may still multicast into it or arrive on its barriers
            T.cuda.cluster_sync()

    if SCALED:  # e4m3: (A, B, C, scale_a, scale_b[, W][, prof]), the scales fp32 tensors of one element
        if profile and SK:
            @T.prim_func
            def hopper_gemm_fp8_split_k_profiled(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, SA_ptr: T.handle,
                                                 SB_ptr: T.handle, W_ptr: T.handle, P_ptr: T.handle):
                A = T.match_buffer(A_ptr, (MU, K), IN_DT)
                B = T.match_buffer(B_ptr, (NU, K), IN_DT)
                C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
                SA = T.match_buffer(SA_ptr, (1,), "float32")
                SB = T.match_buffer(SB_ptr, (1,), "float32")
                W = T.match_buffer(W_ptr, (WSIZE,), "float32")
                prof = T.match_buffer(P_ptr, (SLOTS,), "uint64")
                Wc = T.decl_buffer([WSIZE], "int32", data=W.data)
                body(*ops(A, B), C, prof, SA, SB, W, Wc)

            return hopper_gemm_fp8_split_k_profiled

        if profile:
            @T.prim_func
            def hopper_gemm_fp8_profiled(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, SA_ptr: T.handle,
                                         SB_ptr: T.handle, P_ptr: T.handle):
                A = T.match_buffer(A_ptr, (MU, K), IN_DT)
                B = T.match_buffer(B_ptr, (NU, K), IN_DT)
                C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
                SA = T.match_buffer(SA_ptr, (1,), "float32")
                SB = T.match_buffer(SB_ptr, (1,), "float32")
                prof = T.match_buffer(P_ptr, (SLOTS,), "uint64")
                body(*ops(A, B), C, prof, SA, SB, None, None)

            return hopper_gemm_fp8_profiled

        if SK:
            @T.prim_func
            def hopper_gemm_fp8_split_k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, SA_ptr: T.handle,
                                        SB_ptr: T.handle, W_ptr: T.handle):
                A = T.match_buffer(A_ptr, (MU, K), IN_DT)
                B = T.match_buffer(B_ptr, (NU, K), IN_DT)
                C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
                SA = T.match_buffer(SA_ptr, (1,), "float32")
                SB = T.match_buffer(SB_ptr, (1,), "float32")
                W = T.match_buffer(W_ptr, (WSIZE,), "float32")
                Wc = T.decl_buffer([WSIZE], "int32", data=W.data)
                body(*ops(A, B), C, None, SA, SB, W, Wc)

            return hopper_gemm_fp8_split_k

        @T.prim_func
        def hopper_gemm_fp8(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, SA_ptr: T.handle,
                            SB_ptr: T.handle):
            A = T.match_buffer(A_ptr, (MU, K), IN_DT)
            B = T.match_buffer(B_ptr, (NU, K), IN_DT)
            C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
            SA = T.match_buffer(SA_ptr, (1,), "float32")
            SB = T.match_buffer(SB_ptr, (1,), "float32")
            body(*ops(A, B), C, None, SA, SB, None, None)

        return hopper_gemm_fp8

    if profile and SK:  # the workspace before the profiler buffer (the recorder inserts it last)
        @T.prim_func
        def hopper_gemm_split_k_profiled(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, W_ptr: T.handle,
                                         P_ptr: T.handle):
            A = T.match_buffer(A_ptr, (MU, K), "bfloat16")
            B = T.match_buffer(B_ptr, (NU, K), "bfloat16")
            C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
            W = T.match_buffer(W_ptr, (WSIZE,), "float32")
            prof = T.match_buffer(P_ptr, (SLOTS,), "uint64")
            Wc = T.decl_buffer([WSIZE], "int32", data=W.data)
            body(*ops(A, B), C, prof, None, None, W, Wc)

        return hopper_gemm_split_k_profiled

    if profile:
        @T.prim_func
        def hopper_gemm_profiled(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, P_ptr: T.handle):
            A = T.match_buffer(A_ptr, (MU, K), "bfloat16")
            B = T.match_buffer(B_ptr, (NU, K), "bfloat16")
            C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
            prof = T.match_buffer(P_ptr, (SLOTS,), "uint64")
            body(*ops(A, B), C, prof, None, None, None, None)

        return hopper_gemm_profiled

    if SK:
        @T.prim_func
        def hopper_gemm_split_k(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, W_ptr: T.handle):
            A = T.match_buffer(A_ptr, (MU, K), "bfloat16")
            B = T.match_buffer(B_ptr, (NU, K), "bfloat16")
            C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
            W = T.match_buffer(W_ptr, (WSIZE,), "float32")
            Wc = T.decl_buffer([WSIZE], "int32", data=W.data)
            body(*ops(A, B), C, None, None, None, W, Wc)

        return hopper_gemm_split_k

    @T.prim_func
    def hopper_gemm(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (MU, K), "bfloat16")
        B = T.match_buffer(B_ptr, (NU, K), "bfloat16")
        C = T.match_buffer(C_ptr, (MU, NU), "bfloat16")
        body(*ops(A, B), C, None, None, None, None, None)

    return hopper_gemm


def _swizzle(width: int):
    """The shared-memory swizzle of an epilogue staging tile ``width`` bf16 wide: the atom its rows fill."""
    from tvm.backend.cuda.tile_primitive.tma_utils import SwizzleMode

    return {64: SwizzleMode.SWIZZLE_128B_ATOM, 32: SwizzleMode.SWIZZLE_64B_ATOM, 16: SwizzleMode.SWIZZLE_32B_ATOM}[width]


def _split_k_indexing(split: int, kt: int, k_order_rows: int = 0):
    """Trace-time helpers of the split-K work items: ``m_tile(sched)`` (the M tile of the scheduler's
    item), ``k_slice(sched)`` (its K slice ``s``), ``k_first(sched)`` and ``k_count(sched)`` (its share of the
    ``kt`` k-steps: slice s runs ``[s * kt // split, (s + 1) * kt // split)``). The scheduler's M index is
    ``tile_m * split + s``, or with ``k_order_rows`` (the M tiles of one slice, ``split_order="k"``)
    ``s * k_order_rows + tile_m``. With ``split == 1`` they return the scheduler's own index, 0, 0 and ``kt``:
    the kernel's IR is then what it was before split-K existed."""
    if split == 1:
        return (lambda sched: sched.m_idx), (lambda sched: 0), (lambda sched: 0), (lambda sched: kt)
    if k_order_rows:
        def m_tile(sched):
            return sched.m_idx % k_order_rows

        def k_slice(sched):
            return sched.m_idx // k_order_rows
    else:
        def m_tile(sched):
            return sched.m_idx // split

        def k_slice(sched):
            return sched.m_idx % split

    def k_first(sched):
        return k_slice(sched) * kt // split

    def k_count(sched):
        return (k_slice(sched) + 1) * kt // split - k_first(sched)

    return m_tile, k_slice, k_first, k_count


def _split_tail_indexing(split: int, kt: int):
    """:func:`_split_k_indexing` for ``split_tail`` (:class:`~txlab.examples.gemm_schedulers.SplitTailScheduler`):
    the scheduler's M index is the tile's, and its ``k_slice`` is -1 for a whole tile (all ``kt`` k-steps) or the
    split item's slice."""
    from tvm.script import tirx as T

    def k_first(sched):
        return T.if_then_else(sched.k_slice < 0, 0, sched.k_slice * kt // split)

    def k_count(sched):
        return T.if_then_else(sched.k_slice < 0, kt, (sched.k_slice + 1) * kt // split - sched.k_slice * kt // split)

    return (lambda sched: sched.m_idx), (lambda sched: sched.k_slice), k_first, k_count


def operand(dtype: str) -> dict:
    """What the kernel needs to know about its operand type: the TVM dtype, the wgmma PTX type, the K
    extent of one 128-byte swizzle row (``bk``), wgmma's K per instruction, its trailing immediates
    (bf16's include imm-trans-a/b; FP8 wgmma has none: both operands must be K-major), and whether
    the output is scaled (FP8's per-tensor scales)."""
    if dtype in ("bf16", "bfloat16"):
        return {"tvm": "bfloat16", "ptx": "bf16", "bk": 64, "kstep": 16, "tail": (1, 1, 0, 0), "scaled": False}
    if dtype in ("e4m3", "float8_e4m3fn"):
        return {"tvm": "float8_e4m3fn", "ptx": "e4m3", "bk": 128, "kstep": 32, "tail": (1, 1), "scaled": True}
    from txlab.errors import InputError

    raise InputError(f"dtype={dtype!r}: the Hopper GEMM takes 'bf16' or 'e4m3' operands", param="dtype")


class GemmEvent(Enum):
    """Profiler events of ``gemm_kernel(..., profile=True)``, one range per tile and warpgroup."""

    load_tile = 0   # producer: issuing a tile's K loop of TMA loads (mostly waiting for free slots)
    mainloop = 1    # consumer: the tile's K loop (waiting for full slots + wgmma)
    epilogue = 2    # consumer: fp32 fragment -> bf16 stores to C; for a split-K item its fix-up too (its partial
    #                 to the workspace, or the wait for the tile's other items, their sum and the stores)
    setup = 3       # producer, once per CTA: from its first instruction to its barriers initialized and synced
    #                 (with a cluster, the cluster's sync: every CTA of it started)
    fixup = 4       # consumer, split-K: an item's fp32 partial to the workspace and its count, and with the parallel
    #                 fix-up the wait for the tile's other items (the epilogue after it: the partials' sum, the stores)


def profile_slots(M: int, N: int, K: int, config: GemmConfig | None = None) -> int:
    """Size (uint64 slots) of the profiler buffer of ``gemm_kernel(..., profile=True)``: the header,
    one first slot per (CTA, warpgroup) lane, and room for every record of the busiest lane. ``config``: a
    GemmConfig or its name (None: ``GemmConfig()``)."""
    M, N, K = check_sizes(M, N, K)
    cfg = as_config(config, getattr(config, "dtype", "bf16")) or GemmConfig()
    ncta = cfg.ctas(M, N)
    lanes = ncta * (cfg.consumers + 1)
    # the tiles the busiest CTA records: its cluster's share of the work items (cluster tiles of the grid the
    # kernel tiles, C.T's with swap_ab), each CTA of a cluster one tile of every cluster tile, edge CTAs too
    busiest = _ceil(cfg.work_items(M, N), ncta // cfg.cluster_size)
    # start + end of two ranges per item (split-K: three, the fix-up's too), and finalize (the producer's lane: one
    # range per item, and the setup's)
    per_lane = (6 if cfg.split_k > 1 else 4) * busiest + 1
    return 1 + lanes + per_lane * lanes


class _ConsumerRole:
    """``WarpgroupRole(wg, (start, stop), ...)`` as TVM 0.27 means it. Its tuple form builds the guard
    with Python's ``and`` (``start <= wg and wg < stop``), which TVMScript rejects ("Cannot use and /
    or / not operator to Expr"); this builds the same guard with ``tvm.tirx.all``."""

    def __new__(cls, wg_id_var, wg_id_val, regs=None, increase=False):
        from tvm.backend.cuda.lang import WarpgroupRole

        class FixedRange(WarpgroupRole):
            def __enter__(self):
                import tvm
                from tvm.script import tirx as T

                if not isinstance(self.wg_id_val, tuple):
                    return super().__enter__()
                start, stop = self.wg_id_val
                self._if_frame = T.If(tvm.tirx.all(start <= self.wg_id_var, self.wg_id_var < stop))
                self._if_frame.__enter__()
                self._then_frame = T.Then()
                self._then_frame.__enter__()
                if self.regs is not None:
                    T.evaluate(T.ptx[f"setmaxnreg.{'inc' if self.increase else 'dec'}.sync.aligned.u32"](
                        self.regs))
                return self

        return FixedRange(wg_id_var, wg_id_val, regs=regs, increase=increase)


def kernel_for(M: int, N: int, K: int, config: GemmConfig | str | None = None, *, profile: bool = False,
               dtype: str = "bf16"):
    """``gemm_kernel`` for a GemmConfig or its name string; without one, :func:`tuned_config`'s
    (the shipped tuned table's entry for this shape, else ``GemmConfig()``). ``dtype="e4m3"``: the
    FP8 kernel (:mod:`txlab.examples.hopper_gemm_fp8`; parameters ``A, B, C, scale_a, scale_b``;
    ``config`` an ``Fp8GemmConfig``, its name, or a bf16 GemmConfig whose FP8 twin is meant).
    K must be a multiple of :func:`pad_unit` (TMA's row pitch); the ValueError for any other K says
    that :func:`build` pads (builds for ``padded_k(K)`` and copies A and B each call)."""
    M, N, K = check_sizes(M, N, K)
    if operand(dtype)["scaled"]:
        import txlab.examples.gemm_fp8_config as gemm_fp8_config

        return gemm_kernel(M, N, K, gemm_fp8_config.resolve(M, N, K, config), profile=profile)
    config = as_config(config)
    if config is None:
        config = tuned_config(M, N, K)
    return gemm_kernel(M, N, K, config, profile=profile)


#: the arch every kernel here is built for: wgmma, setmaxnreg and TMA multicast are sm_90a's (Blackwell has no wgmma)
ARCH = "sm_90a"


def check_arch(arch) -> str:
    """``arch`` resolved (``txlab.arch.resolve_arch``: None is this GPU's), or :class:`~txlab.errors.ArchError`
    unless it is :data:`ARCH`: the Hopper kernels (this GEMM, ``hopper_attention``) use instructions only sm_90a
    has."""
    from txlab.arch import resolve_arch
    from txlab.errors import ArchError

    resolved = resolve_arch(arch)
    if resolved != ARCH:
        raise ArchError(f"arch={arch!r} ({resolved}): this Hopper kernel uses wgmma, setmaxnreg and TMA multicast, "
                        f"which only {ARCH} has (not sm_90 without 'a', not Blackwell's sm_100a): build with "
                        f"arch={ARCH!r} (compiling and the CPU emulator need no GPU; running needs an H100/H200)")
    return resolved


def pad_unit(dtype: str = "bf16") -> int:
    """K must be a multiple of this for TMA to load A and B (a row pitch of 16 bytes): 8 in bf16, 16 in e4m3."""
    return 16 // (2 if operand(dtype)["ptx"] == "bf16" else 1)


#: bf16: where :func:`build` pads K at all it pads to whole 128-byte rows (K a multiple of 64): the copy is paid
#: either way, the pad never adds a k-step (the kernel runs ceil(K / 64) of them, the last zero-filled past K), and
#: rows that start on 128-byte lines load faster (1000x3000 on the H200: 0.90 of cuBLAS at K = 5000, 1.02 at
#: K = 5056; rows off 32-byte sectors, as a pad to 8 leaves half the time, measured worst: gemm_config.row_phase).
#: FP8 pads to 16 only (its unaligned rows measured no slower: 1000x3000x5008 1.02-1.45 of cuBLAS FP8).
BF16_PAD = 64


def padded_k(K: int, dtype: str = "bf16") -> int:
    """The K :func:`build` compiles for: ``K`` itself when TMA can load it (a multiple of :func:`pad_unit`),
    else ``K`` rounded up to :func:`pad_unit` (e4m3: 16) or, in bf16, to a multiple of :data:`BF16_PAD`
    (128-byte rows; the same k-steps)."""
    K = check_sizes(1, 1, K)[2]
    unit = pad_unit(dtype)
    if K % unit == 0:
        return K
    step = BF16_PAD if operand(dtype)["ptx"] == "bf16" else unit
    kp = K + (-K) % step
    if kp >= 2**31:
        from txlab.errors import InputError

        raise InputError(f"K={K} is not a multiple of {unit} (TMA's 16-byte row pitch) and build() would pad it to "
                         f"K={kp}, past the kernel's 32-bit sizes (each below 2**31): split the GEMM into pieces "
                         "along K", param="K")
    return kp


def pad_bytes(M: int, N: int, K: int, dtype: str = "bf16") -> int:
    """Bytes one call of :func:`build`'s Compiled copies into its zero-padded A and B buffers when
    ``K % pad_unit(dtype) != 0`` (it reads as many): the K real columns of A and B; 0 otherwise."""
    M, N, K = check_sizes(M, N, K)
    if padded_k(K, dtype) == K:
        return 0
    return (M + N) * K * (2 if operand(dtype)["ptx"] == "bf16" else 1)


def check_extents(M: int, N: int, K: int, dtype: str = "bf16") -> None:
    """:class:`~txlab.errors.InputError` unless the kernel can address ``A (M, Kp)`` and ``B (N, Kp)`` (``Kp =
    padded_k(K, dtype)``, what :func:`build` computes): each operand has fewer than 2**31 elements (they are indexed
    with 32-bit integers) and its rows are fewer than 2**31 *bits* apart (TVM computes a TMA descriptor's row pitch in
    bits, in 32 bits: bf16 K = 2**28 + 64 built A's with a pitch of 128 bytes, K = 2**30 with 0).
    :func:`~txlab.examples.gemm_config.check_sizes` bounds each size alone; C's index is 64-bit where it needs to be
    (:data:`WIDE_INDEX`), and :meth:`GemmConfig.check_shape` bounds the TMA epilogue's pitch of C."""
    M, N, K = check_sizes(M, N, K)
    kp = padded_k(K, dtype)
    bits = kp * (16 if operand(dtype)["ptx"] == "bf16" else 8)
    if bits >= 2**31:
        from txlab.errors import InputError

        raise InputError(f"K={K}: rows of A and B {bits // 8} bytes long, and TVM computes a TMA descriptor's row pitch "
                         f"in bits as a 32-bit integer (rows under 2**31 bits, {2**28} bytes): split the GEMM into "
                         "pieces along K", param="K")
    for name, rows, side in (("A", M, "M"), ("B", N, "N")):
        if rows * kp >= 2**31:
            from txlab.errors import InputError

            raise InputError(f"{name} ({rows}, {kp}) has {rows * kp} elements, and the kernel indexes A and B with 32-bit "
                             f"integers (fewer than 2**31 elements each): split the GEMM into pieces along {side} or K",
                             param=side)


def build(M: int, N: int, K: int, config: GemmConfig | str | None = None, *, arch: str = "sm_90a",
          profile: bool = False, dtype: str = "bf16", num_sms: int = 132, **kw):
    """Compile the kernel for one shape; returns a ``txlab.Compiled``. A split-K configuration's (the
    model picks split-K where few tiles would leave SMs idle) takes a :func:`workspace` as a fourth
    argument; called with three, it makes one (zeroed, on the inputs' device) and keeps it for the
    next calls. ``dtype="e4m3"`` builds the FP8 GEMM (``C = scale_a * scale_b * A @ B.T``, see
    :mod:`txlab.examples.hopper_gemm_fp8`; split-K too, with its workspace after the two scales).

    Any K: where TMA cannot load A and B (K % 8 != 0 in bf16, K % 16 != 0 in e4m3: a row pitch of 16
    bytes) the kernel is built for ``Kp = padded_k(K, dtype)`` (bf16: whole 128-byte rows, which add no
    k-step, see :data:`BF16_PAD`; the configuration chosen for
    ``M x N x Kp``; zero columns do not change the product) and the Compiled, called with the
    unpadded ``(A (M, K), B (N, K), C, ...)``, copies A and B into zero-padded ``(M, Kp)`` and
    ``(N, Kp)`` buffers it keeps (per array library, device and dtype; the pad columns are zeroed once)
    and launches on those. Its ``padded_k`` and ``pad_bytes`` say what that costs: each call copies
    ``pad_bytes`` (and reads as many), about 2 x (M + N) x K bytes of extra memory traffic in bf16;
    ``kernel_args(...)`` gives the padded arguments for launching ``.executable`` yourself, or for
    ``txlab.bench``/``txlab.check``, which launch the kernel as compiled (the kernel alone, no copy).
    Like split-K's workspace, the buffers serve one call at a time on a device. The Compiled's ``gemm_config`` is
    the configuration it was built from (:func:`tuned_config`'s choice where none was given).

    ``num_sms``: the SMs of the GPU it will run on (132: H100/H200 SXM; the tuned table is used only there) for
    the choice where no config is given. A split-K build whose items wait for one another (``fixup='parallel'``)
    refuses to launch on a GPU with too few SMs to hold them all (an ``InputError`` naming ``num_sms=``)."""
    from txlab.compiler import compile as compile_kernel

    M, N, K = check_sizes(M, N, K)
    num_sms = check_num_sms(num_sms)
    check_arch(arch)
    check_extents(M, N, K, dtype)
    kp = padded_k(K, dtype)
    if operand(dtype)["scaled"]:
        import txlab.examples.gemm_fp8_config as gemm_fp8_config

        config = gemm_fp8_config.resolve(M, N, kp, config, num_sms=num_sms)
    else:
        config = as_config(config)
    if config is None:
        config = tuned_config(M, N, kp, num_sms=num_sms)
    compiled = compile_kernel(gemm_kernel(M, N, kp, config, profile=profile), arch=arch, **kw)
    if config.split_k > 1 or kp != K:
        compiled = _gemm_compiled()(**{f: getattr(compiled, f) for f in compiled.__dataclass_fields__})
        compiled.workspace_elems = config.workspace_elems(M, N)
        compiled.workspace_counters = config.workspace_counters(M, N)
        compiled.built_shape = (M, N, kp)
        compiled.operands = 5 if operand(dtype)["scaled"] else 3
        if kp != K:
            compiled.gemm_shape, compiled.padded_k = (M, N, K), kp
            compiled.pad_bytes = pad_bytes(M, N, K, dtype)
    compiled.gemm_config = config  # what was built: the choice, where none was given
    return compiled


_GEMM_COMPILED: list = []


def _gemm_compiled():
    """``txlab.Compiled`` for :func:`build`'s kernels whose call takes more than copying the arguments
    through: a split-K configuration's (called with the plain operands, it appends the workspace it
    keeps) and a padded K's (it copies A and B into the zero-padded buffers it keeps); one class for both."""
    if not _GEMM_COMPILED:
        from txlab.compiler import Compiled

        class GemmCompiled(Compiled):
            workspace_elems = 0  # split-K: float32 elements of the workspace appended to a plain call
            workspace_counters = (0, 0)  # split-K: (first element, elements) of its int32 counters
            operands = 3  # (A, B, C); FP8: (A, B, C, scale_a, scale_b)
            gemm_shape = None  # padded K: the user's (M, N, K)
            padded_k = 0  # padded K: the K the kernel computes (A and B are copied into (M, Kp), (N, Kp))
            pad_bytes = 0  # padded K: bytes each call copies (the K real columns of A and B)
            built_shape = None  # the (M, N, K) the kernel computes (K padded)

            def kernel_args(self, *args) -> tuple:
                """The kernel's arguments for a call with ``args``: A and B copied into the kept zero-padded
                buffers (padded K), then the kept workspace appended when ``args`` are the plain operands
                (split-K). What ``self(*args)`` launches; ``self.executable(*self.kernel_args(...))``
                launches it without txlab's argument checks (FP8 torch tensors through
                ``hopper_gemm_fp8.kernel_arg``)."""
                self._check_residency(args)
                if self.padded_k and len(args) >= 2:
                    args = (*self._padded(args[0], args[1]), *args[2:])
                if self.workspace_elems and len(args) == self.operands:
                    args = (*args, self._workspace(args[0]))
                elif self.workspace_elems and len(args) == self.operands + 1:
                    self._check_counters(args[-1])
                return args

            def _check_residency(self, args):
                """Raise InputError before a launch on a GPU with too few SMs for this build: the parallel fix-up's
                items wait for one another, so they must all be resident at once, and the build counted on
                ``config.num_sms`` SMs (a GPU with fewer would hang in the wait)."""
                cfg = getattr(self, "gemm_config", None)
                if cfg is None or cfg.split_k == 1 or cfg.fixup != "parallel" or self.built_shape is None:
                    return
                if not any(type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False) for a in args):
                    return  # host arrays: the emulator runs every item at once
                from txlab.device import probe

                sms = probe().sm_count
                if not sms or sms >= cfg.num_sms:
                    return
                import dataclasses

                from txlab.errors import InputError

                try:
                    dataclasses.replace(cfg, num_sms=sms).check_shape(*self.built_shape)
                except InputError as exc:
                    M, N, K = self.built_shape
                    raise InputError(
                        f"this GEMM was built for {cfg.num_sms} SMs and this GPU has {sms}: {exc}. Build it for this "
                        f"GPU with hopper_gemm.build({M}, {N}, {K}, num_sms={sms}) (the model's choice for {sms} SMs)",
                        param="num_sms") from None

            def _check_counters(self, w):
                """A caller's workspace: raise InputError unless its counters are zero (a workspace that is not
                zeroed makes the fix-up count wrong: C is left unwritten or summed early). Read once per
                workspace object (one device sync at its first use); each launch leaves them zero."""
                import weakref

                start, count = self.workspace_counters
                module = type(w).__module__
                if not count or not (module.startswith("torch") or module == "numpy"):
                    return  # another array type: txlab's argument checks judge it
                if getattr(w, "shape", None) != (self.workspace_elems,) or str(w.dtype) not in ("float32",
                                                                                                  "torch.float32"):
                    return  # the argument checks name the size or dtype
                seen = self.__dict__.setdefault("_zeroed_workspaces", weakref.WeakValueDictionary())
                if seen.get(id(w)) is w:
                    return
                if module.startswith("torch"):
                    import torch

                    dirty = int(torch.count_nonzero(w[start:start + count].view(torch.int32)))
                else:
                    import numpy as np

                    dirty = int(np.count_nonzero(w[start:start + count].view(np.int32)))
                if dirty:
                    from txlab.errors import InputError

                    raise InputError(
                        f"the split-K workspace's counters (elements {start}..{start + count - 1}) hold {dirty} "
                        "non-zero value(s): it must start zeroed (hopper_gemm.workspace(M, N, K, config, like=A) "
                        "makes one; or torch.zeros, not torch.empty). Each launch leaves the counters zero, so keep "
                        "one per stream and reuse it", param="workspace")
                seen[id(w)] = w

            @property
            def call_params(self) -> list:
                """The parameters a plain call takes (what ``txlab.check`` matches the arguments and the reference
                against): the operands at the user's shapes, without the workspace :meth:`kernel_args` appends."""
                params = [dict(p) for p in self.entry_params[: self.operands]]
                if self.padded_k:
                    for p in params[:2]:
                        p["shape"] = [p["shape"][0], self.gemm_shape[2]]
                return params

            def __call__(self, *args, **kwargs):
                return super().__call__(*self.kernel_args(*args), **kwargs)

            def _workspace(self, a):
                held = self.__dict__.setdefault("_workspaces", {})
                key = (type(a).__module__, str(getattr(a, "device", "cpu")))
                if key not in held:
                    if type(a).__module__.startswith("torch"):
                        import torch

                        held[key] = torch.zeros(self.workspace_elems, dtype=torch.float32, device=a.device)
                    else:
                        import numpy as np

                        held[key] = np.zeros(self.workspace_elems, np.float32)
                return held[key]

            def _padded(self, a, b):
                import numpy as np

                M, N, K = self.gemm_shape
                for x, rows, nm in ((a, M, "A"), (b, N, "B")):
                    if tuple(getattr(x, "shape", ())) != (rows, K):
                        from txlab.errors import InputError

                        raise InputError(f"{nm} is {tuple(getattr(x, 'shape', ()))}, not ({rows}, {K}): this GEMM "
                                         f"was built for {M}x{N}x{K} (computed at K={self.padded_k})", param=nm)
                torch_ = type(a).__module__.startswith("torch")
                if not (torch_ or isinstance(a, np.ndarray)) or type(b) is not type(a):
                    from txlab.errors import InputError

                    raise InputError(f"A and B are {type(a).__name__} and {type(b).__name__}: a GEMM built for K="
                                     f"{K} (padded to {self.padded_k}) copies torch tensors or numpy arrays into its "
                                     "padded buffers; pass two of one kind", param="A")
                held = self.__dict__.setdefault("_pad_buffers", {})
                key = (type(a).__module__.split(".")[0], str(getattr(a, "device", "cpu")), (M, N, K),
                       str(a.dtype), str(b.dtype))
                if torch_:
                    import torch
                if key not in held:  # zeroed once: the pad columns are never written again
                    if torch_:  # 1-byte types (float8) made and copied as their bytes
                        held[key] = tuple(
                            torch.zeros(r, self.padded_k, dtype=torch.uint8, device=x.device).view(x.dtype)
                            if x.element_size() == 1 else torch.zeros(r, self.padded_k, dtype=x.dtype, device=x.device)
                            for x, r in ((a, M), (b, N)))
                    else:
                        held[key] = tuple(np.zeros((r, self.padded_k), x.dtype) for x, r in ((a, M), (b, N)))
                pa, pb = held[key]
                for dst, src in ((pa, a), (pb, b)):
                    if not torch_:
                        dst[:, :K] = src
                    elif dst.element_size() == 1:
                        dst.view(torch.uint8)[:, :K].copy_(src.view(torch.uint8))
                    else:
                        dst[:, :K].copy_(src)
                return pa, pb

        _GEMM_COMPILED.append(GemmCompiled)
    return _GEMM_COMPILED[0]


def workspace(M: int, N: int, K: int, config: GemmConfig | str | None = None, *, like=None, dtype: str = "bf16",
              num_sms: int = 132):
    """The zeroed float32 workspace a split-K configuration (``split_k > 1``) takes as its fourth
    argument (``exe(A, B, C, W)``; FP8: its sixth, after the scales), or None without split-K. ``like``: a torch
    tensor (the workspace is made on its device) or None (numpy). Size: :meth:`GemmConfig.workspace_elems` (4 bytes
    each), one fp32 partial tile per work item plus a counter per consumer thread and tile. Keep one per stream:
    a launch leaves its counters zero for the next, and two launches at once must not share it. The kernel takes
    exactly this many elements (its parameter's shape), so a workspace serves one shape and configuration.
    Without a config, the one :func:`build` chooses (for ``M x N x padded_k(K)`` where K % 8 != 0); ``dtype="e4m3"``:
    the FP8 build's (its choice, or a configuration's FP8 name), as ``build(..., dtype="e4m3")`` takes them;
    ``num_sms`` as :func:`build` takes it. A configuration that cannot compute this shape is an InputError."""
    M, N, K = check_sizes(M, N, K)
    if operand(dtype)["scaled"]:
        import txlab.examples.gemm_fp8_config as gemm_fp8_config

        # what build(..., dtype=) builds, checked against the shape
        config = gemm_fp8_config.resolve(M, N, padded_k(K, dtype), config, num_sms=num_sms)
    else:
        config = as_config(config, getattr(config, "dtype", "bf16"))  # an FP8 configuration's workspace too
        if config is not None:
            config.check_shape(M, N, padded_k(K, getattr(config, "dtype", "bf16")))
    if config is None:
        config = tuned_config(M, N, padded_k(K), num_sms=num_sms)  # what build() chooses, for K % 8 != 0 too
    n = config.workspace_elems(M, N)
    if n == 0:
        return None
    if like is not None and type(like).__module__.startswith("torch"):
        import torch

        return torch.zeros(n, dtype=torch.float32, device=like.device)
    import numpy as np

    return np.zeros(n, np.float32)


def args_for(A, B, C, config: GemmConfig | str | None = None, *, scale_a=None, scale_b=None,
             num_sms: int = 132) -> tuple:
    """The kernel's arguments for ``A (M, K)``, ``B (N, K)``, ``C (M, N)``: ``(A, B, C)``, and a fresh
    :func:`workspace` after them for a split-K configuration (allocate once and reuse it in loops).
    FP8 operands (float8 e4m3 A and B) need their per-tensor scales: ``(A, B, C, scale_a, scale_b)`` and the FP8
    build's workspace after them. With K % 8 != 0 (FP8: 16) these are the arguments for :func:`build`'s Compiled,
    which pads A and B itself (its ``kernel_args(...)`` are the padded ones its executable takes). ``num_sms``: as
    :func:`build` took it."""
    (M, K), (N, _) = A.shape, B.shape
    fp8 = "float8" in str(getattr(A, "dtype", ""))
    if (scale_a is None or scale_b is None) if fp8 else (scale_a is not None or scale_b is not None):
        from txlab.errors import InputError

        raise InputError(f"A is {getattr(A, 'dtype', type(A).__name__)}: " + (
            "an FP8 GEMM takes its per-tensor scales: args_for(A, B, C, scale_a=..., scale_b=...)" if fp8 else
            "scale_a and scale_b are the FP8 GEMM's (float8 e4m3 A and B); a bf16 GEMM takes none"), param="scale_a")
    w = workspace(M, N, K, config, like=A, dtype="e4m3" if fp8 else "bf16", num_sms=num_sms)
    head = (A, B, C, scale_a, scale_b) if fp8 else (A, B, C)
    return head if w is None else (*head, w)


def record_timeline(A, B, C, config: GemmConfig | str | None = None):
    """Run the profiled kernel once on ``A (M, K)``, ``B (N, K)``, ``C (M, N)`` (bf16 torch tensors or
    numpy arrays) and return its ``txlab.timeline.Timeline``: per CTA, one lane for the producer
    warpgroup (``load_tile``) and one per consumer (``mainloop``, ``epilogue``), one range per work item (a
    tile; with split-K each K slice of a tile is an item, and its ``epilogue`` holds its fix-up)."""
    from txlab import timeline

    (M, K), (N, _) = A.shape, B.shape
    gemm = build(M, N, K, config, profile=True)
    # the recorder launches the executable itself: at K % 8 != 0 hand it the padded copies of A and B, and a
    # split-K configuration's workspace (the profiler buffer goes after it)
    args = gemm.kernel_args(A, B, C) if hasattr(gemm, "kernel_args") else (A, B, C)
    return timeline.record(gemm, *args, events=GemmEvent)


def sass_summary(compiled) -> dict:
    """What to check before timing: HGMMA count and shape, registers, spills, ptxas warnings
    (:func:`txlab.sass.summary`, the one SASS summary; tuning's facts read it too)."""
    from txlab.sass import summary

    return summary(compiled)


def with_sms(config: GemmConfig, num_sms: int) -> GemmConfig:
    return replace(config, num_sms=num_sms)


DEFAULT_VARIANTS = ("128x256x64_s4_c2", "128x128x64_s5_c2", "128x256x64_s3_c2", "64x256x64_s4_c1",
                    "128x192x64_s4_c2")


# --------------------------------------------------------------------------------------------
# Tuning (txlab.tune): the space over this kernel's knobs and the shipped table of tuned configs.
#: what ``txlab.tune`` varies: tile shape, pipeline depth, the consumer schedule (cooperative: two
#: warpgroups split one tile; pingpong: each owns alternate tiles, hiding the epilogue), the epilogue
#: (direct 4-byte stores from the fragment, or staged through 128B-swizzled shared memory and stored by
#: TMA without waiting), tile order (L2 group size, serpentine), persistent or one CTA per tile, and
#: ``num_sms``, which caps the persistent grid and so moves the wave boundary of wave-quantized shapes,
#: and the thread-block cluster (``cluster_m`` CTAs along M multicast the B tile they share, ``cluster_n``
#: along N the A tile: each CTA loads a slice, L2 serves each tile once per cluster).
#: Split-K (``split_k``) is not swept here: :mod:`txlab.examples.gemm_model` prices the split factors
#: for shapes whose tiles cannot fill the SMs (pass ``{**TUNE_SPACE, "split_k": [1, 2, 4]}`` to sweep it).
TUNE_SPACE = {"schedule": ["cooperative", "pingpong"], "tile_m": [0, 64, 128], "bn": [128, 192, 256],
              "stages": [3, 4, 5, 6, 7], "consumers": [1, 2], "epilogue": ["direct", "tma"], "l2_group": [4, 8, 16],
              "serpentine": [False, True], "persistent": [True, False], "num_sms": [132, 128],
              "cluster_m": [1, 2], "cluster_n": [1, 2]}


def _point(schedule="cooperative", tile_m=0, bn=256, stages=4, consumers=2, epilogue="direct", l2_group=8,
           serpentine=False, persistent=True, num_sms=132, cluster_m=1, cluster_n=1) -> dict:
    return dict(schedule=schedule, tile_m=tile_m, bn=bn, stages=stages, consumers=consumers, epilogue=epilogue,
                l2_group=l2_group, serpentine=serpentine, persistent=persistent, num_sms=num_sms,
                cluster_m=cluster_m, cluster_n=cluster_n)


_PP128 = dict(schedule="pingpong", tile_m=128, bn=128)
#: points every sweep measures first: today's default, then the configurations that won on the H200
#: (docs/gpu-runs.md) and their TMA-epilogue twins, their 2-CTA-cluster twins, then the benchmark's variants
TUNE_PRIOR = [_point(),
              _point(**_PP128, stages=7),
              _point(epilogue="tma"),
              _point(**_PP128, stages=6, epilogue="tma"),
              _point(cluster_m=2),
              _point(**_PP128, stages=7, cluster_m=2),
              _point(cluster_n=2),
              _point(**_PP128, stages=6, epilogue="tma", cluster_m=2),
              _point(num_sms=128),
              _point(**_PP128, stages=7, num_sms=128),
              _point(stages=3, epilogue="tma"),
              _point(**_PP128, stages=6, epilogue="tma", num_sms=128),
              _point(stages=3),
              _point(schedule="pingpong", tile_m=64, bn=256, stages=4, epilogue="tma"),
              _point(**_PP128, stages=6),
              _point(schedule="pingpong", tile_m=64, bn=256, stages=4),
              _point(bn=128, stages=5)]
TUNED_TABLE = "hopper_gemm_tuned.json"
TABLE_FORMAT = "txlab-hopper-gemm-tuned/1"


def tune_valid(config: dict) -> bool:
    """The space's constraint: the configuration builds (shared memory, registers, TMA box)."""
    try:
        GemmConfig(**config).validate()
    except (ValueError, TypeError):
        return False
    return True


def tune_space(M: int, N: int, K: int) -> dict:
    """:data:`TUNE_SPACE` with the constraint for one shape: :func:`tune_valid` and
    :meth:`GemmConfig.check_shape` (the TMA epilogue only where N % 8 == 0, serpentine orders only on
    tile grids TVM's scheduler covers). Empty when K % 8 != 0 (no configuration can load A and B)."""
    return shape_space(TUNE_SPACE, GemmConfig, M, N, K, "hopper_gemm")


def tune_build(M: int, N: int, K: int):
    """``build(**config)`` for :data:`TUNE_SPACE` at one shape."""
    return shape_builder(gemm_kernel, GemmConfig, M, N, K, "hopper_gemm")


def tune_inputs(M: int, N: int, K: int, seed: int = 0):
    """``inputs(config)``: bf16 ``A (M, K)``, ``B (N, K)`` (standard normal) and ``C (M, N)``, made once
    per process and shape (the same arrays for every configuration)."""
    return _Inputs(M, N, K, seed)


class _Inputs:
    _held: dict = {}

    def __init__(self, M, N, K, seed):
        self.shape = (M, N, K, seed)
        self.__name__ = self.__qualname__ = f"hopper_gemm_inputs_{M}x{N}x{K}_s{seed}"

    def __call__(self, config=None):
        import ml_dtypes
        import numpy as np

        if self.shape not in _Inputs._held:
            _Inputs._held.clear()  # one shape at a time: these are large
            M, N, K, seed = self.shape
            rng = np.random.default_rng(seed)
            a = rng.standard_normal((M, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
            b = rng.standard_normal((N, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
            c = np.zeros((M, N), ml_dtypes.bfloat16)
            _Inputs._held[self.shape] = (a, b, c)
        held = _Inputs._held[self.shape]
        if config is not None and config.get("split_k", 1) > 1:  # split-K: its workspace, zeroed
            M, N, K, _ = self.shape
            return (*held, workspace(M, N, K, GemmConfig(**config)))
        return held


def reference(A, B, C=None):
    """``A @ B.T`` in fp32 (on the GPU through torch when it is there, else numpy)."""
    import numpy as np

    sa, sb = tuple(getattr(A, "shape", ())), tuple(getattr(B, "shape", ()))
    if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[1]:
        from txlab.errors import InputError

        raise InputError(f"A {sa} and B {sb}: the GEMM's operands are A (M, K) and B (N, K), both K-major (C = A @ "
                         "B.T)", param="B")

    a, b = A.astype(np.float32), B.astype(np.float32)
    try:
        import torch

        if torch.cuda.is_available():
            with torch.no_grad():
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                out = (ta @ tb.T).cpu().numpy()
            del ta, tb
            torch.cuda.empty_cache()
            return out
    except ImportError:
        pass
    return a @ b.T


_table_override: list = []   # [path] while use_tuned_table(path) is in force


def _table_path():
    return _table_override[0] if _table_override else shipped_data(TUNED_TABLE)


def use_tuned_table(path=None) -> None:
    """Make :func:`tuned_config` (and so ``kernel_for``/``build`` without a config) read the table
    at ``path`` (one written by :func:`write_tuned_table`); ``None``: the shipped table again."""
    from pathlib import Path

    _table_override[:] = [Path(path)] if path is not None else []
    _tuned_cache.clear()


def load_tuned_table(path=None) -> dict:
    """The tuned table (``txlab/data/hopper_gemm_tuned.json`` unless ``path``), verified: format,
    checksum of the entries, every entry a valid GemmConfig for its shape that was correct
    (rel. error <= 1e-2) when measured. Raises ValueError naming what is wrong."""
    from pathlib import Path

    src = Path(path) if path is not None else _table_path()
    doc = read_sealed(src, "entries", TABLE_FORMAT, what="tuned table")
    entries = doc["entries"]
    if not isinstance(entries, list):
        raise ValueError(f"{src}: 'entries' is a {type(entries).__name__}, not a list of measured shapes")
    fields = set(GemmConfig.__dataclass_fields__)
    for e in entries:
        shape = e.get("shape")
        if not (isinstance(shape, list) and len(shape) == 3 and all(isinstance(v, int) and v > 0 for v in shape)):
            raise ValueError(f"{src}: entry with a bad shape {shape!r}")
        cfg = e.get("config")
        if not isinstance(cfg, dict) or set(cfg) - fields:
            raise ValueError(f"{src}: entry {shape}: config {cfg!r} has unknown fields")
        try:
            config = GemmConfig(**cfg)
            config.validate()
            config.check_shape(*shape)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{src}: entry {shape}: {exc}") from None
        rel = e.get("rel_error")
        if not isinstance(rel, (int, float)) or not rel <= 1e-2:
            raise ValueError(f"{src}: entry {shape}: rel_error {rel!r} is not <= 1e-2")
    return doc


def write_tuned_table(path, entries: list[dict], *, device: str, source: str) -> dict:
    """Write a table :func:`load_tuned_table` accepts: entries ``{"shape": [M, N, K], "config": {...},
    "time_ms", "tflops", "ratio", "baseline", "rel_error"}``."""
    import json
    from pathlib import Path

    doc = seal(json.loads(json.dumps(entries)), "entries", format=TABLE_FORMAT, device=device, source=source)
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    load_tuned_table(path)  # what was written must load
    return doc


_tuned_cache: dict = {}


def tuned_config(M: int, N: int, K: int, *, num_sms: int = 132) -> GemmConfig:
    """The tuned configuration for this exact shape from the shipped table (measured on the device
    named in the table), else the time model's choice (:func:`explain` shows why); for a K that
    TMA cannot load, the choice for ``padded_k(K)``, as :func:`build` compiles it. A damaged table
    warns once and is ignored. ``num_sms``: the GPU's SMs (the table was measured on 132; another count is the
    model's choice for it)."""
    M, N, K = check_sizes(M, N, K)
    num_sms = check_num_sms(num_sms)
    K = padded_k(K)
    measured = table_config(M, N, K) if num_sms == 132 else None
    if measured is not None:
        return measured
    return gemm_model.choose(M, N, K, num_sms=num_sms)


def table_config(M: int, N: int, K: int) -> GemmConfig | None:
    """The shipped table's measured configuration for exactly this shape, or None."""
    if "doc" not in _tuned_cache:
        try:
            _tuned_cache["doc"] = load_tuned_table()
        except ValueError as exc:
            import warnings

            warnings.warn(f"hopper_gemm: ignoring the tuned table: {exc}", stacklevel=2)
            _tuned_cache["doc"] = {"entries": []}
    for e in _tuned_cache["doc"]["entries"]:
        if tuple(e["shape"]) == (M, N, K):
            return GemmConfig(**e["config"])
    return None


def explain(M: int, N: int, K: int, *, num_sms: int = 132, dtype: str = "bf16"):
    """Why :func:`build` without a config picks what it picks for ``M x N x K``: the measured table
    entry, or the time model's ranking of every valid configuration
    (:func:`txlab.examples.gemm_model.explain`; no GPU needed). ``dtype="e4m3"`` explains the FP8
    GEMM's choice (:func:`txlab.examples.gemm_fp8_config.explain`), as ``build(..., dtype=)`` takes it.
    Where K is not a multiple of :func:`pad_unit` (8 in bf16, 16 in e4m3) it explains the choice for
    ``padded_k(K)``, what :func:`build` compiles, and its notes (FP8: its ``why``) say that each call
    copies A and B into buffers of that K, and how many bytes. Where :func:`build` refuses the sizes
    (:func:`check_extents`: operands past the kernel's 32-bit indices or TMA pitch) the model still ranks, and the
    first note (FP8: the ``why``) says why build() refuses them."""
    M, N, K = check_sizes(M, N, K)
    num_sms = check_num_sms(num_sms)
    from txlab.errors import InputError

    kp = padded_k(K, dtype)
    notes = []
    try:  # the model answers for any sizes; say where build() refuses them
        check_extents(M, N, K, dtype)
    except InputError as exc:
        notes.append(f"build() refuses {M}x{N}x{K}: {exc}")
    if kp != K:
        nbytes = pad_bytes(M, N, K, dtype)
        size = f"{nbytes / 2**20:.1f} MiB" if nbytes >= 2**20 else f"{nbytes / 2**10:.1f} KiB"
        notes.append(f"K={K} is not a multiple of {pad_unit(dtype)} (TMA's 16-byte row pitch): build() computes "
                     f"{M}x{N}x{kp} (zero columns do not change the product) and each call copies A and B into kept "
                     f"zero-padded ({M}, {kp}) and ({N}, {kp}) buffers: {nbytes} bytes ({size}) "
                     "read and as many written before the launch")
    if operand(dtype)["scaled"]:
        import txlab.examples.gemm_fp8_config as gemm_fp8_config

        choice = gemm_fp8_config.explain(M, N, kp, num_sms=num_sms)
        choice.why = "; ".join([choice.why, *notes])
        return choice
    # the table's entries were measured on all 132 SMs: another SM count is the model's to answer
    measured = table_config(M, N, kp) if num_sms == 132 else None
    choice = gemm_model.explain(M, N, kp, num_sms=num_sms, measured=measured)
    if measured is not None and _table_override:  # use_tuned_table(path): the user's table, not the shipped one
        device = (_tuned_cache.get("doc") or {}).get("device") or "an unnamed device"
        choice.measured_in = f"the tuned table {_table_override[0]}, measured on {device}"
    choice.notes[:0] = notes
    return choice
