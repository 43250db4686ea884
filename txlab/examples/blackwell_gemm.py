"""A warp-specialized, persistent bf16 GEMM for Blackwell (sm_100a), written in TIRx.

**A worked example, not a benchmark.** No Blackwell GPU is available to this project: the kernel
compiles to an sm_100a cubin (``tcgen05.*`` in its PTX and SASS) and runs (1-CTA and
``cta_group=2``) on txlab's CPU emulator over its whole grid; nothing here has been timed on a
B200, and no configuration was tuned.

``C = A @ B.T`` with ``A: (M, K)``, ``B: (N, K)`` (both K-major, row-major as stored),
``C: (M, N)``, bf16 in and out, fp32 accumulation in tensor memory (TMEM).

One CTA of 6 warps (192 threads), each warp a role (notebook 13 walks through it):

* warp 0, **TMA producer** (one lane): for every (tile, k) of the CTA's persistent tile sequence
  it waits for a free ring slot and loads ``128 x 64`` of A and ``bn x 64`` of B into
  128B-swizzled shared memory. The ring is ``Pipeline(full="tma", empty="tcgen05")``: the full
  barrier completes on the TMA bytes, the empty one on a ``tcgen05.commit`` from the MMA warp.
* warp 1, **MMA issuer** (one lane): waits for a full slot, issues four ``tcgen05.mma.kind::f16``
  (k16 each) into the tile's TMEM accumulator, and commits them to the slot's empty barrier, so the
  slot is freed when the tensor core has read it. After a tile's last k it commits to the
  accumulator pipeline's full barrier. Two accumulators (``2 x bn`` TMEM columns) form a second
  ring, ``Pipeline(full="tcgen05", empty="mbar")``: the MMA warp fills one while the epilogue
  drains the other.
* warps 2..5, **epilogue**: wait for a full accumulator, ``tcgen05.ld`` it (``32x32b``: each warp
  reads its own lane quarter, ``warp % 4``, i.e. 32 rows of the tile), ``wait::ld``, convert to
  bf16 and store to C with bounds guards; then ``fence::before_thread_sync`` and one arrival per
  warp on the accumulator's empty barrier.

Tiles are handed out by ``ClusterPersistentScheduler2D`` (group-major order, ``l2_group`` rows per
group); ``num_sms`` caps the persistent grid.

``cta_group=2``: a 2-CTA cluster computes one ``256 x bn`` tile with ``tcgen05.mma.cta_group::2``
(M = 256): each CTA loads its own 128 rows of A and half (``bn / 2`` rows) of B; both CTAs' TMA
loads complete on the *leader's* (rank 0) full barrier, whose expected bytes count both halves;
the leader's MMA warp alone issues the MMAs, and its commits multicast (``cta_mask=0b11``) to the
empty / accumulator-full barriers of both CTAs; each CTA's TMEM holds its 128 rows of the
accumulator; epilogue warps of both CTAs arrive on the leader's accumulator-empty barrier.
TMEM is allocated with ``tcgen05.alloc.cta_group::2`` by one warp of each CTA.

Shapes are compile-time constants; ragged M, N, K are handled by TMA's out-of-bounds zero fill on
loads and guarded stores; K must be a multiple of 8 (TMA's row pitch). Everything imports TVM
lazily.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from numbers import Integral
from enum import Enum

from txlab.errors import InputError
from txlab.examples.gemm_config import BK, _ceil, tma_pitch

WARPS = 6  # producer, MMA, four epilogue warps
THREADS = 32 * WARPS
ACC_STAGES = 2  # TMEM accumulators: one filled by the MMA warp while the epilogue drains the other
EPI_WARP0 = 2  # first epilogue warp
CHUNK = 32  # accumulator columns per tcgen05.ld (32x32b.x32: 32 registers per thread)
B200_SMS = 148


@dataclass(frozen=True)
class BlackwellGemmConfig:
    """Tile shape, ring depth and CTA pairing of :func:`gemm_kernel`.

    ``bn`` is the MMA's N (the tile's columns; 32..256, a multiple of 32, and with ``cta_group=2``
    a multiple of 64 so each CTA's half of B is whole 8-row swizzle atoms of a multiple of 32 rows).
    The tile's M is 128 per CTA (``128 * cta_group`` per cluster). ``stages`` is the depth of the
    shared-memory ring. ``num_sms`` caps the persistent grid (148 on a B200)."""

    bn: int = 128
    stages: int = 4
    cta_group: int = 1
    num_sms: int = B200_SMS
    l2_group: int = 8

    @property
    def bm(self) -> int:
        """Rows of one CTA's tile (one TMEM lane per row)."""
        return 128

    @property
    def mma_m(self) -> int:
        return 128 * self.cta_group

    @property
    def b_rows(self) -> int:
        """Rows of B each CTA loads per stage (half of ``bn`` with ``cta_group=2``)."""
        return self.bn // self.cta_group

    @property
    def stage_bytes(self) -> int:
        """Bytes of one ring slot in one CTA (A and B tiles)."""
        return (self.bm + self.b_rows) * BK * 2

    @property
    def tx_bytes(self) -> int:
        """Bytes the (leader's) full barrier expects per stage: every CTA of the pair lands there."""
        return self.stage_bytes * self.cta_group

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory: the ring plus barriers and the TMEM address slot (rounded)."""
        return self.stages * self.stage_bytes + 8 * (2 * self.stages + 2 * ACC_STAGES) + 16

    @property
    def tmem_columns(self) -> int:
        """Columns ``tcgen05.alloc`` asks for: two fp32 accumulators, rounded up to a power of two."""
        need = ACC_STAGES * self.bn
        cols = 32
        while cols < need:
            cols *= 2
        return cols

    @property
    def name(self) -> str:
        return f"{self.mma_m}x{self.bn}x{BK}_s{self.stages}_cg{self.cta_group}"

    def validate(self) -> None:
        if self.cta_group not in (1, 2):
            raise InputError(
                f"cta_group={self.cta_group}: tcgen05.mma pairs at most 2 CTAs; use 1 or 2", param="cta_group"
            )
        step = 32 * self.cta_group
        if not (step <= self.bn <= 256 and self.bn % step == 0):
            raise InputError(
                f"bn={self.bn}: with cta_group={self.cta_group} the MMA's N must be a multiple of "
                f"{step} in [{step}, 256] (TMEM holds 2 x bn fp32 columns of its 512)",
                param="bn",
            )
        if self.stages < 2:
            raise InputError(
                f"stages={self.stages}: the ring needs >= 2 slots to overlap loads with MMAs", param="stages"
            )
        if self.smem_bytes > 227 * 1024:
            raise InputError(
                f"{self.name}: {self.smem_bytes} B of shared memory is over sm_100a's 227 KiB per "
                f"CTA; use fewer stages or a smaller bn",
                param="stages",
            )
        if self.num_sms < self.cta_group:
            raise InputError(
                f"num_sms={self.num_sms}: at least one cluster of {self.cta_group} CTA(s) is needed", param="num_sms"
            )
        if self.l2_group < 1:
            raise InputError(f"l2_group={self.l2_group}: must be >= 1", param="l2_group")

    def check_shape(self, M: int, N: int, K: int) -> tuple[int, int, int]:
        """``(M, N, K)`` as Python ints (numpy's integers too), or :class:`~txlab.errors.InputError` naming the size
        that is wrong and the fix."""
        for nm, v in (("M", M), ("N", N), ("K", K)):
            if not isinstance(v, Integral) or isinstance(v, bool) or v <= 0:
                raise InputError(f"{nm}={v!r}: GEMM extents must be positive integers", param=nm)
        M, N, K = int(M), int(N), int(K)
        try:
            tma_pitch(K)
        except ValueError as exc:
            raise InputError(str(exc), param="K") from None
        return M, N, K

    def tiles(self, M: int, N: int) -> tuple[int, int]:
        """(M tiles, N tiles) of the scheduler's grid (a tile is one cluster's ``mma_m x bn``)."""
        return _ceil(M, self.mma_m), _ceil(N, self.bn)

    def clusters(self, M: int, N: int) -> int:
        """Persistent clusters launched: one per pair of SMs (or SM), at most one per tile."""
        gm, gn = self.tiles(M, N)
        return max(1, min(self.num_sms // self.cta_group, gm * gn))

    def ctas(self, M: int, N: int) -> int:
        return self.clusters(M, N) * self.cta_group

    def to_dict(self) -> dict:
        return asdict(self)


def flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k


def gemm_kernel(M: int, N: int, K: int, config: BlackwellGemmConfig | None = None, *, profile: bool = False):
    """The warp-specialized persistent kernel for one shape (a TIRx ``PrimFunc``).

    ``profile=True`` returns it instrumented with TVM's CudaProfiler (``Tx.cuda.timer_*``): a fourth
    parameter, a ``uint64`` buffer of :func:`profile_slots` slots, and three profiler groups per CTA
    (0 the TMA warp, 1 the MMA warp, 2 the epilogue warps) recording one :class:`GemmEvent` range
    per tile. :func:`emulated_timeline` runs it on the CPU emulator."""
    from tvm.backend.cuda.lang import (
        ClusterPersistentScheduler2D,
        Pipeline,
        PipelineState,
        SMEMPool,
        TMEMPool,
        WarpRole,
    )
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    cfg = config or BlackwellGemmConfig()
    cfg.validate()
    M, N, K = cfg.check_shape(M, N, K)
    CG, BM, BN, BNS, STAGES = cfg.cta_group, cfg.bm, cfg.bn, cfg.b_rows, cfg.stages
    MMA_M = cfg.mma_m
    GM, GN = cfg.tiles(M, N)
    KT = _ceil(K, BK)
    NCL = cfg.clusters(M, N)
    NCTA = NCL * CG
    TX_BYTES = cfg.tx_bytes
    COLS = cfg.tmem_columns
    L2G = cfg.l2_group
    MMA = f"tcgen05.mma.cta_group::{CG}.kind::f16"
    NMASK = 4 * CG  # disable-output-lane registers: 4 with cta_group::1, 8 with ::2
    LD = f"tcgen05.ld.sync.aligned.32x32b.x{CHUNK}.b32"
    PAIR = CG == 2
    MASK = 3 if PAIR else None  # tcgen05.commit multicast to both CTAs of the pair
    PROF = profile
    GROUPS = 3  # profiler groups per CTA: TMA warp, MMA warp, epilogue warps
    STRIDE = NCTA * GROUPS
    SLOTS = profile_slots(M, N, K, cfg)
    LOAD, MAIN, EPI = GemmEvent.load_tile, GemmEvent.mma_tile, GemmEvent.epilogue

    PAIR_KW = {"cta_group": 2} if PAIR else {}  # a pair's loads signal the leader CTA's barrier

    @T.inline
    def load_ab(As, Bs, A, B, stage, m0, n0, k, mbar):
        """One ring slot's TMA loads: this CTA's rows of the A tile and its share of the B tile."""
        Tx.copy_async(As[stage, :, :], A[m0 : m0 + BM, k * BK : k * BK + BK], dispatch="tma_explicit", mbar=mbar,
                      **PAIR_KW)
        Tx.copy_async(Bs[stage, :, :], B[n0 : n0 + BNS, k * BK : k * BK + BK], dispatch="tma_explicit", mbar=mbar,
                      **PAIR_KW)

    @T.macro
    def body(A, B, C, prof):
        T.device_entry()
        cta = T.cta_id([NCTA])
        if PAIR:
            rank = T.cta_id_in_cluster([2])  # 0: the leader, which issues the pair's MMAs
            cid = T.meta_var(cta // 2)
        else:
            rank = T.meta_var(0)
            cid = T.meta_var(cta)
        warp = T.warp_id([WARPS])
        lane = T.lane_id([32])
        T.thread_id([THREADS])

        pool = SMEMPool()
        As = pool.alloc_tcgen05_mma_AB((STAGES, BM, BK), "bfloat16")
        Bs = pool.alloc_tcgen05_mma_AB((STAGES, BNS, BK), "bfloat16")
        # the ring: full completes on TMA bytes (the leader's, for both CTAs of a pair); empty on
        # the MMA warp's tcgen05.commit (multicast to both CTAs of a pair)
        ab = Pipeline(pool, STAGES, full="tma", empty="tcgen05", init_full=1, init_empty=1)
        # the accumulators: full on tcgen05.commit after a tile's last MMA; empty on one arrival per
        # epilogue warp (of both CTAs of a pair, on the leader's barrier)
        accp = Pipeline(pool, ACC_STAGES, full="tcgen05", empty="mbar", init_full=1, init_empty=4 * CG)
        tmem = TMEMPool(pool, total_cols=COLS, cta_group=CG)
        acc0 = tmem.alloc_tcgen05_mma_D((128, BN), "float32", M=MMA_M, cta_group=CG)  # noqa: F841
        acc1 = tmem.alloc_tcgen05_mma_D((128, BN), "float32", M=MMA_M, cta_group=CG)  # noqa: F841
        pool.commit()
        tmem.commit()  # warp 0 allocates COLS columns (of each CTA of a pair) and writes their address
        T.ptx.fence.proxy.async_.shared__cta()
        T.ptx.tcgen05.fence__before_thread_sync()
        if PAIR:  # the peer arrives on (and TMA completes on) the leader's barriers: all initialized first
            T.ptx.fence.mbarrier_init.release.cluster()
            T.cuda.cluster_sync()
        else:
            T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        if PROF:
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            T.cuda.timer_init(prof.data, tag.data, off.data, GROUPS, T.min(warp, 2))

        with WarpRole(warp, 0):
            # TMA producer: one lane streams this CTA's A rows and B rows for every (tile, k)
            if lane == 0:
                if PAIR:
                    full_lead = ab.full.remote_view(0)  # the leader's full barriers, seen from this CTA
                sched = ClusterPersistentScheduler2D(
                    "p", num_m_tiles=GM, num_n_tiles=GN, num_clusters=NCL, l2_group_size=L2G
                )
                sched.init(cid)
                ps = PipelineState(STAGES, 1)  # a fresh empty barrier counts as released
                while sched.valid():
                    m0 = T.meta_var(sched.m_idx * MMA_M + rank * BM)
                    n0 = T.meta_var(sched.n_idx * BN + rank * BNS)
                    if PROF:
                        T.cuda.timer_start(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    for k in T.serial(KT):
                        ab.empty.wait(ps.stage, ps.phase)
                        if PAIR:
                            load_ab(As, Bs, A, B, ps.stage, m0, n0, k, full_lead.ptr_to([ps.stage]))
                            if rank == 0:
                                ab.full.arrive(ps.stage, TX_BYTES)  # both CTAs' bytes land here
                        else:
                            load_ab(As, Bs, A, B, ps.stage, m0, n0, k, ab.full.ptr_to([ps.stage]))
                            ab.full.arrive(ps.stage, TX_BYTES)
                        ps.advance()
                    if PROF:
                        T.cuda.timer_end(LOAD, prof.data, tag.data, off.data, STRIDE, True)
                    sched.next_tile()
                if PROF:
                    T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, True)

        with WarpRole(warp, 1):
            # MMA issuer: the leader's warp 1; lane 0 issues, the whole warp waits
            if rank == 0:
                sched = ClusterPersistentScheduler2D(
                    "m", num_m_tiles=GM, num_n_tiles=GN, num_clusters=NCL, l2_group_size=L2G
                )
                sched.init(cid)
                ps = PipelineState(STAGES, 0)
                acs = PipelineState(ACC_STAGES, 1)  # both accumulators start drained
                descA: T.uint64
                descB: T.uint64
                descI: T.uint32
                T.cuda.tcgen05.encode_instr_descriptor(
                    T.address_of(descI),
                    d_dtype="float32",
                    a_dtype="bfloat16",
                    b_dtype="bfloat16",
                    M=MMA_M,
                    N=BN,
                    K=16,
                    n_cta_groups=CG,
                    trans_a=False,
                    trans_b=False,
                )
                while sched.valid():
                    if PROF:
                        T.cuda.timer_start(MAIN, prof.data, tag.data, off.data, STRIDE, lane == 0)
                    accp.empty.wait(acs.stage, acs.phase)  # the epilogue has read this accumulator out
                    T.ptx.tcgen05.fence__after_thread_sync()
                    for k in T.serial(KT):
                        ab.full.wait(ps.stage, ps.phase)
                        T.ptx.tcgen05.fence__after_thread_sync()
                        if lane == 0:
                            for kk in T.unroll(BK // 16):
                                # K-major, 128B swizzle (3, the CUtensorMapSwizzle code TMA used): LBO unused (1),
                                # SBO = 8 rows x 128 B = 64 x 16 B; the k16
                                # slice starts 32 B further along row 0
                                T.cuda.tcgen05.encode_matrix_descriptor(
                                    T.address_of(descA), As.ptr_to([ps.stage, 0, kk * 16]), 1, 64, 3
                                )
                                T.cuda.tcgen05.encode_matrix_descriptor(
                                    T.address_of(descB), Bs.ptr_to([ps.stage, 0, kk * 16]), 1, 64, 3
                                )
                                T.ptx[MMA](
                                    T.cuda.get_tmem_addr(tmem.addr, 0, acs.stage * BN),
                                    descA,
                                    descB,
                                    descI,
                                    *[0 for _ in range(NMASK)],
                                    (k > 0) | (kk > 0),
                                )
                            ab.empty.arrive(ps.stage, cta_group=CG, cta_mask=MASK)  # slot free once read
                        T.cuda.warp_sync()
                        ps.advance()
                    if lane == 0:
                        accp.full.arrive(acs.stage, cta_group=CG, cta_mask=MASK)  # the tile's sums are done
                    T.cuda.warp_sync()
                    if PROF:
                        T.cuda.timer_end(MAIN, prof.data, tag.data, off.data, STRIDE, lane == 0)
                    acs.advance()
                    sched.next_tile()
                if PROF:
                    T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, lane == 0)

        if warp >= EPI_WARP0:
            # epilogue: warp w reads TMEM lanes 32 * (w % 4) .. + 31, i.e. rows of the tile
            q = T.meta_var(warp % 4)
            reg = T.alloc_local([CHUNK], "float32")
            sched = ClusterPersistentScheduler2D(
                "e", num_m_tiles=GM, num_n_tiles=GN, num_clusters=NCL, l2_group_size=L2G
            )
            sched.init(cid)
            acs = PipelineState(ACC_STAGES, 0)
            while sched.valid():
                row = T.meta_var(sched.m_idx * MMA_M + rank * BM + q * 32 + lane)
                accp.full.wait(acs.stage, acs.phase)
                if PROF:
                    T.cuda.timer_start(EPI, prof.data, tag.data, off.data, STRIDE, warp == EPI_WARP0 and lane == 0)
                T.ptx.tcgen05.fence__after_thread_sync()
                for c in T.serial(BN // CHUNK):
                    T.ptx[LD](
                        *[reg[j] for j in range(CHUNK)],
                        T.cuda.get_tmem_addr(tmem.addr, q * 32, acs.stage * BN + c * CHUNK),
                    )
                    T.ptx.tcgen05.wait__ld.sync.aligned()
                    for j in T.unroll(CHUNK):
                        col = T.meta_var(sched.n_idx * BN + c * CHUNK + j)
                        if row < M and col < N:
                            C[row, col] = T.cast(reg[j], "bfloat16")
                T.ptx.tcgen05.fence__before_thread_sync()
                T.cuda.warp_sync()
                if lane == 0:
                    if PAIR:
                        accp.empty.arrive(acs.stage, remote=0)
                    else:
                        accp.empty.arrive(acs.stage)
                if PROF:
                    T.cuda.timer_end(EPI, prof.data, tag.data, off.data, STRIDE, warp == EPI_WARP0 and lane == 0)
                acs.advance()
                sched.next_tile()
            if PROF:
                T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, warp == EPI_WARP0 and lane == 0)

        # teardown: every role done (with a pair: the peer's last arrivals on the leader have landed)
        T.ptx.tcgen05.fence__before_thread_sync()
        if PAIR:
            T.cuda.cluster_sync()
        else:
            T.cuda.cta_sync()
        T.ptx.tcgen05.fence__after_thread_sync()
        tmem.dealloc()

    if profile:

        @T.prim_func
        def blackwell_gemm_profiled(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle, P_ptr: T.handle):
            A = T.match_buffer(A_ptr, (M, K), "bfloat16")
            B = T.match_buffer(B_ptr, (N, K), "bfloat16")
            C = T.match_buffer(C_ptr, (M, N), "bfloat16")
            prof = T.match_buffer(P_ptr, (SLOTS,), "uint64")
            body(A, B, C, prof)

        return blackwell_gemm_profiled

    @T.prim_func
    def blackwell_gemm(A_ptr: T.handle, B_ptr: T.handle, C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (M, K), "bfloat16")
        B = T.match_buffer(B_ptr, (N, K), "bfloat16")
        C = T.match_buffer(C_ptr, (M, N), "bfloat16")
        body(A, B, C, None)

    return blackwell_gemm


class GemmEvent(Enum):
    """Profiler events of ``gemm_kernel(..., profile=True)``: one range per tile and role."""

    load_tile = 0  # TMA warp: a tile's k loop of loads (mostly waiting for free ring slots)
    mma_tile = 1  # MMA warp: waiting for a drained accumulator, then the tile's MMAs as slots fill
    epilogue = 2  # epilogue warps: TMEM -> registers -> bf16 stores of one tile


def profile_slots(M: int, N: int, K: int, config: BlackwellGemmConfig | None = None) -> int:
    """Size (uint64 slots) of the profiler buffer of ``gemm_kernel(..., profile=True)``: the header,
    one first slot per (CTA, group) lane, and room for every record of the busiest lane."""
    cfg = config or BlackwellGemmConfig()
    gm, gn = cfg.tiles(M, N)
    lanes = cfg.ctas(M, N) * 3
    per_lane = 2 * _ceil(gm * gn, cfg.clusters(M, N)) + 1  # start + end per tile, and finalize
    return 1 + lanes + per_lane * lanes


def emulated_timeline(A, B, C, config: BlackwellGemmConfig | None = None):
    """Run the profiled kernel on the CPU emulator with ``A (M, K)``, ``B (N, K)``, ``C (M, N)`` (bf16
    numpy arrays; C is written) and return its ``txlab.timeline.Timeline``: per CTA one lane for
    the TMA warp (``load_tile``), the MMA warp (``mma_tile``) and the epilogue (``epilogue``), one
    range per tile. Its clocks count emulated warp-instructions, not time (``clock_unit``)."""
    from txlab import timeline

    (M, K), (N, _) = A.shape, B.shape
    return timeline.emulate(gemm_kernel(M, N, K, config, profile=True), A, B, C, events=GemmEvent, arch="sm_100a")


def kernel_for(M: int, N: int, K: int, config: BlackwellGemmConfig | None = None, *, profile: bool = False):
    return gemm_kernel(M, N, K, config, profile=profile)


def build(M: int, N: int, K: int, config: BlackwellGemmConfig | None = None, *, arch: str = "sm_100a", **kw):
    """Compile the kernel for one shape for sm_100a; returns a ``txlab.Compiled``. Another arch is an
    :class:`~txlab.errors.ArchError` before anything compiles (tcgen05 and TMEM are sm_100a's)."""
    from txlab.arch import resolve_arch
    from txlab.compiler import compile as compile_kernel
    from txlab.errors import ArchError

    resolved = resolve_arch(arch)
    if resolved != "sm_100a":
        raise ArchError(
            f"arch={arch!r} ({resolved}): this Blackwell GEMM uses tcgen05 and tensor memory, which only sm_100a has "
            "(not Hopper's sm_90a): build with arch='sm_100a' (compiling and the CPU emulator need no GPU)"
        )
    return compile_kernel(gemm_kernel(M, N, K, config), arch=resolved, **kw)


def inputs(M: int, N: int, K: int, seed: int = 0):
    """bf16 ``A (M, K)``, ``B (N, K)`` (standard normal) and a zero ``C (M, N)`` as numpy arrays."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    return a, b, np.zeros((M, N), ml_dtypes.bfloat16)


def reference(A, B, C=None):
    """``A @ B.T`` in fp32 with numpy (the inputs' bf16 values, exactly)."""
    import numpy as np

    return np.asarray(A, dtype=np.float32) @ np.asarray(B, dtype=np.float32).T


def tolerance() -> tuple[float, float]:
    """(atol, rtol) between the bf16 output and :func:`reference`: the output is the fp32 sum rounded to
    bf16 (round to nearest: at most half an ulp, ``2**-8`` of the value), plus fp32 summation-order
    differences (far below ``atol`` at these sizes)."""
    return 1e-3, 2.0**-8


def explain(M: int, N: int, K: int, config: BlackwellGemmConfig | None = None) -> str:
    """What :func:`build` makes of ``M x N x K``: tiles, clusters, tiles per cluster, ring and TMEM
    budgets (no GPU needed; nothing here is a time estimate)."""
    cfg = config or BlackwellGemmConfig()
    cfg.validate()
    M, N, K = cfg.check_shape(M, N, K)
    gm, gn = cfg.tiles(M, N)
    ncl = cfg.clusters(M, N)
    per = _ceil(gm * gn, ncl)
    lines = [
        f"blackwell_gemm {M}x{N}x{K}, config {cfg.name} (a worked example: never timed on a B200)",
        f"  tile {cfg.mma_m} x {cfg.bn} per {'CTA pair' if cfg.cta_group == 2 else 'CTA'}"
        f" ({cfg.bm} rows of A and {cfg.b_rows} rows of B loaded per CTA per k step of {BK})",
        f"  grid {gm} x {gn} = {gm * gn} tiles over {ncl} persistent cluster(s) of {cfg.cta_group} CTA(s)"
        f" (num_sms={cfg.num_sms}): up to {per} tile(s) each, {_ceil(K, BK)} k steps per tile",
        f"  shared memory: {cfg.stages} stages x {cfg.stage_bytes} B = {cfg.stages * cfg.stage_bytes} B ring"
        f" (+ barriers), full barrier expects {cfg.tx_bytes} B per stage",
        f"  TMEM: {ACC_STAGES} fp32 accumulators x {cfg.bn} columns = {ACC_STAGES * cfg.bn} of "
        f"{cfg.tmem_columns} allocated columns (of 512), 128 lanes",
        f"  warps: 0 TMA, 1 MMA ({'leader CTA only, ' if cfg.cta_group == 2 else ''}one lane), "
        f"2..5 epilogue (lane quarter = warp % 4)",
    ]
    return "\n".join(lines)
