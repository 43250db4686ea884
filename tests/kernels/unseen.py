"""Kernels written to try the static answers on patterns the other tests do not (tests/test_banks.py
checks each against the hand derivation in its docstring: 32 banks of 4 bytes, a 4-byte access
served for the whole warp, 8 bytes per half warp, 16 bytes per quarter warp; lanes on different
words of one bank serialise; global: 32-byte sectors, one request per 128-byte line)."""

from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool, WarpgroupRole
from tvm.script import tirx as T


def transpose_bf16():
    """bf16 ``tile[32, 32]``: the column read ``tile[lane, c]`` is word ``16 lane + c // 2``, so even
    lanes share bank ``c // 2`` and odd lanes bank ``16 + c // 2``: 16 distinct words a bank, 16-way.
    The row write puts two lanes on each word (one broadcast word): conflict-free. Global rows of
    32 bf16 are 64 bytes: 2 sectors, 1 request."""

    @T.prim_func
    def tbf16(A: T.Buffer((256, 256), "bfloat16"), B: T.Buffer((256, 256), "bfloat16")):
        T.device_entry()
        by, bx = T.cta_id([8, 8])
        tid = T.thread_id([256])
        tile = T.alloc_shared((32, 32), "bfloat16")
        lane = T.meta_var(tid % 32)
        warp = T.meta_var(tid // 32)
        for j in T.unroll(4):
            tile[warp + j * 8, lane] = A[by * 32 + warp + j * 8, bx * 32 + lane]
        T.cuda.cta_sync()
        for j in T.unroll(4):
            B[bx * 32 + warp + j * 8, by * 32 + lane] = tile[lane, warp + j * 8]

    return tbf16


def transpose_xor8():
    """float32 ``tile[r, c ^ (r % 8)]``: the column read of column c is at bank ``c ^ (lane % 8)``,
    8 distinct banks, each hit by 4 lanes on 4 rows: 4-way (a full ``c ^ r`` swizzle is 1-way)."""

    @T.prim_func
    def txor8(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32")):
        T.device_entry()
        by, bx = T.cta_id([8, 8])
        tid = T.thread_id([256])
        tile = T.alloc_shared((32, 32), "float32")
        lane = T.meta_var(tid % 32)
        warp = T.meta_var(tid // 32)
        for j in T.unroll(4):
            r = warp + j * 8
            tile[r, T.bitwise_xor(lane, r % 8)] = A[by * 32 + r, bx * 32 + lane]
        T.cuda.cta_sync()
        for j in T.unroll(4):
            c = warp + j * 8
            B[bx * 32 + c, by * 32 + lane] = tile[lane, T.bitwise_xor(c, lane % 8)]

    return txor8


def interleaved_reduce():
    """``sm[2^(k+1) t] += sm[2^(k+1) t + 2^k]`` for the ``128 >> k`` first threads, k = 0..7: conflicts
    only in some iterations. Per iteration, warps x ways: k=0 4 x 2, k=1 2 x 4, k=2 1 x 8 (32 lanes,
    stride 8 words), k=3 1 x 8 (16 lanes, stride 16), k=4 1 x 8, k=5 1 x 4, k=6 1 x 2, k=7 1 x 1:
    12 warp-instructions, 47 wavefronts per access (worst 8-way)."""

    @T.prim_func
    def ired(X: T.Buffer((64 * 256,), "float32"), O: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([64])
        tx = T.thread_id([256])
        sm = T.alloc_shared((256,), "float32")
        sm[tx] = X[bx * 256 + tx]
        T.cuda.cta_sync()
        for k in T.unroll(8):
            if tx < (128 >> k):
                sm[tx * (2 << k)] = sm[tx * (2 << k)] + sm[tx * (2 << k) + (1 << k)]
            T.cuda.cta_sync()
        if tx == 0:
            O[bx] = sm[0]

    return ired


def let_bound():
    """Indices through let-bound names: ``S[j]`` with ``j = 2 tid`` (lanes 0 and 16 on bank 0: 2-way)
    and ``S[k]`` with ``k = 16 (tid % 32) + tid // 32`` (16 lanes a bank: 16-way)."""

    @T.prim_func
    def li(A: T.Buffer((1 << 16,), "float32"), B: T.Buffer((1 << 16,), "float32")):
        T.device_entry()
        bx = T.cta_id([256])
        tid = T.thread_id([256])
        S = T.alloc_shared((512,), "float32")
        i = bx * 256 + tid
        j = tid * 2
        S[j] = A[i]
        T.cuda.cta_sync()
        k = (tid % 32) * 16 + tid // 32
        B[i] = S[k]

    return li


def padded_nested():
    """``S[16, 129]`` read at ``S[t % 16, 16 (t // 16) + 4 i + j]`` in a serial loop around an unrolled
    one: lane l is at word ``129 (l % 16) + 16 (l // 16) + c``, bank ``l + c`` (129 = 1 mod 32): 32
    distinct banks, conflict-free, 16 executions of 4 warps."""

    @T.prim_func
    def nu(A: T.Buffer((64, 4, 4, 128), "float32"), B: T.Buffer((64, 128), "float32")):
        T.device_entry()
        bx = T.cta_id([64])
        tid = T.thread_id([128])
        S = T.alloc_shared((16, 129), "float32")
        for i in T.serial(4):
            for j in T.unroll(4):
                S[i * 4 + j, tid] = A[bx, i, j, tid]
        T.cuda.cta_sync()
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for i in T.serial(4):
            for j in T.unroll(4):
                acc[0] = acc[0] + S[tid % 16, (tid // 16) * 16 + i * 4 + j]
        B[bx, tid] = acc[0]

    return nu


def lane_masks():
    """Guards on lane bits: ``tx % 2 == 0`` stores ``S[32 tx]`` (16 lanes in bank 0: 16-way) and loads
    ``A[2 tx]`` (16 lanes 16 bytes apart: 8 sectors over 2 lines, ideal 2); ``tx & 3 == 1`` stores
    ``S[2 tx + 1]`` (lanes 1, 5, ... 29 at banks 3, 11, 19, 27 twice: 2-way) and loads ``A[4 tx + 1]``
    (8 lanes 64 bytes apart: 8 sectors over 4 lines, ideal 1); ``elect_sync`` leaves one lane."""

    @T.prim_func
    def lm(A: T.Buffer((8192,), "float32"), B: T.Buffer((8192,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_shared((8192,), "float32")
        if tx % 2 == 0:
            S[tx * 32] = A[tx * 2]
        if T.bitwise_and(tx, 3) == 1:
            S[tx * 2 + 1] = A[tx * 4 + 1]
        if T.cuda.elect_sync():
            S[tx * 32 + 1] = T.float32(0)
        T.cuda.cta_sync()
        B[tx] = S[tx]

    return lm


def warp_specialized():
    """Producer warpgroup 0 fills ``ring[stage, tid]`` (conflict-free) through a 2-stage mbarrier ring;
    consumer warpgroup 1 reads ``ring[stage, 4 (tid % 32) + tid // 32]`` (lanes 16 bytes apart: 4-way)
    and stores ``Y[..]`` at the same stride (512 bytes a warp: 16 sectors over 4 lines, ideal 4)."""

    @T.prim_func
    def ws(X: T.Buffer((1024,), "float32"), Y: T.Buffer((1024,), "float32")):
        T.device_entry()
        T.cta_id([1])
        wg = T.warpgroup_id([2])
        T.warp_id_in_wg([4])
        tid = T.thread_id_in_wg([128])
        T.thread_id([256])
        pool = SMEMPool()
        ring = pool.alloc((2, 128), "float32")
        pipe = Pipeline(pool, 2, full="mbar", empty="mbar", init_full=128, init_empty=128)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        with WarpgroupRole(wg, 0):
            ps = PipelineState(2, 1)
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
                v = ring[cs.stage, (tid % 32) * 4 + tid // 32]
                Y[i * 128 + (tid % 32) * 4 + tid // 32] = v * T.float32(2)
                pipe.empty.arrive(cs.stage)
                cs.advance()

    return ws


def fp8_copy():
    """1-byte e4m3 elements: 32 lanes read 32 contiguous bytes (1 sector, 1 request) and write 8 shared
    words (four lanes a word, broadcast): conflict-free, reversed or not."""

    @T.prim_func
    def f8(A: T.Buffer((1 << 16,), "float8_e4m3fn"), B: T.Buffer((1 << 16,), "float8_e4m3fn")):
        T.device_entry()
        bx = T.cta_id([256])
        tid = T.thread_id([256])
        S = T.alloc_shared((256,), "float8_e4m3fn")
        S[tid] = A[bx * 256 + tid]
        T.cuda.cta_sync()
        B[bx * 256 + tid] = S[255 - tid]

    return f8
