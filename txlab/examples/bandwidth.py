"""Memory-bound companions to the GEMM: a vectorized copy and a row sum, both in TIRx.

Their floor is bytes / bandwidth; the bar is the device-to-device bandwidth torch reaches in the
same run (``dst.copy_(src)``, bytes read + written).

* :func:`copy_kernel` — ``dst[:] = src[:]`` (float32). A grid-stride loop over 16-byte vectors:
  each thread issues ``unroll`` independent 16-byte loads before the first store, so several
  requests are in flight per thread; every warp access is 512 contiguous bytes.
* :func:`row_sum_kernel` — ``out[r] = sum(A[r, :])`` (float32). One CTA per row (grid-stride over
  rows); each thread accumulates 16-byte vectors, ``unroll`` loads in flight, then
  ``Tx.cuda.cta_sum`` (warp shuffles + one shared-memory exchange) combines the CTA.
"""
from __future__ import annotations


def copy_kernel(n: int, *, threads: int = 256, unroll: int = 4, blocks: int | None = 132 * 8,
                unguarded: bool = False):
    """``dst = src`` for float32 vectors of length ``n`` (a multiple of 4).

    Knobs (all tunable, see :data:`COPY_SPACE`): ``threads`` per CTA; ``unroll`` 16-byte loads in
    flight per thread; ``blocks`` CTAs of the grid-stride loop (``None``: one CTA per chunk, no
    loop); ``unguarded`` drops the per-vector bounds test when every step is full (raises
    otherwise). The defaults build exactly the kernel measured before these knobs existed."""
    from tvm.script import tirx as T

    if n % 4:
        raise ValueError(f"n={n}: the vectorized copy moves 16-byte float4 vectors; use a multiple of 4")
    NV = n // 4                       # float4 vectors
    CHUNK = threads * unroll          # vectors per CTA per step
    if blocks is None:                # one CTA per chunk: no grid-stride loop
        blocks = (NV + CHUNK - 1) // CHUNK
    STEPS = (NV + blocks * CHUNK - 1) // (blocks * CHUNK)
    THREADS, UNROLL, BLOCKS = threads, unroll, blocks
    if unguarded and NV % (blocks * CHUNK):
        raise ValueError(f"unguarded=True needs every step full: {NV} vectors is not a multiple of "
                         f"blocks x threads x unroll = {blocks * CHUNK}")
    def full(v):
        """Vector ``v`` is inside the array: the bounds test, or (unguarded) known at build time."""
        return True if unguarded else v < NV

    @T.prim_func
    def vec_copy(src_ptr: T.handle, dst_ptr: T.handle):
        src = T.match_buffer(src_ptr, (n,), "float32", align=16)
        dst = T.match_buffer(dst_ptr, (n,), "float32", align=16)
        T.device_entry()
        bx = T.cta_id([BLOCKS])
        tx = T.thread_id([THREADS])
        reg = T.alloc_local([UNROLL * 4], "float32")
        for s in T.serial(STEPS):
            base = T.meta_var((s * BLOCKS + bx) * CHUNK + tx)
            for u in T.unroll(UNROLL):
                if full(base + u * THREADS):
                    for v in T.vectorized(4):
                        reg[u * 4 + v] = src[(base + u * THREADS) * 4 + v]
            for u in T.unroll(UNROLL):
                if full(base + u * THREADS):
                    for v in T.vectorized(4):
                        dst[(base + u * THREADS) * 4 + v] = reg[u * 4 + v]

    # its own name: a profile or cached measurement of one is never taken for the other
    return vec_copy.with_attr("global_symbol", "vec_copy_unguarded") if unguarded else vec_copy


def row_sum_kernel(rows: int, cols: int, *, threads: int = 256, unroll: int = 4, blocks: int | None = None):
    """``out[r] = sum(A[r, :])`` for a float32 ``(rows, cols)`` matrix (``cols`` a multiple of 4)."""
    from tvm.script import tirx as T

    if cols % 4:
        raise ValueError(f"cols={cols}: rows are read as 16-byte float4 vectors; use a multiple of 4")
    if threads % 32 or threads & (threads - 1):
        raise ValueError(f"threads={threads}: Tx.cuda.cta_sum needs a power-of-two number of warps")
    NV = cols // 4
    CHUNK = threads * unroll
    PASSES = (NV + CHUNK - 1) // CHUNK
    BLOCKS = blocks or min(rows, 132 * 8)
    ROW_STEPS = (rows + BLOCKS - 1) // BLOCKS
    THREADS, UNROLL, WARPS = threads, unroll, threads // 32

    @T.prim_func
    def row_sum(A_ptr: T.handle, out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (rows, cols), "float32", align=16)
        out = T.match_buffer(out_ptr, (rows,), "float32")
        T.device_entry()
        bx = T.cta_id([BLOCKS])
        tx = T.thread_id([THREADS])
        # two scratch slots, alternating by row: the next cta_sum's per-warp writes cannot race
        # with slower warps still reading the previous row's broadcast result
        scratch = T.alloc_buffer([2, WARPS], "float32", scope="shared")
        reg = T.alloc_local([UNROLL * 4], "float32")
        acc = T.alloc_local([1], "float32")
        tot = T.alloc_local([1], "float32")
        for rs in T.serial(ROW_STEPS):
            r = T.meta_var(rs * BLOCKS + bx)
            if r < rows:
                acc[0] = T.float32(0)
                for p in T.serial(PASSES):
                    for u in T.unroll(UNROLL):
                        if (p * CHUNK + u * THREADS + tx) < NV:
                            for v in T.vectorized(4):
                                reg[u * 4 + v] = A[r, (p * CHUNK + u * THREADS + tx) * 4 + v]
                        else:
                            for v in T.vectorized(4):
                                reg[u * 4 + v] = T.float32(0)
                    for u in T.unroll(UNROLL):
                        acc[0] = acc[0] + ((reg[u * 4] + reg[u * 4 + 1]) + (reg[u * 4 + 2] + reg[u * 4 + 3]))
                # every thread takes part in the reduction (it has barriers inside); only then does
                # thread 0 store. A meta_var here would inline the call under `if tx == 0`.
                tot[0] = T.cuda.cta_sum(acc[0], WARPS, scratch.ptr_to([rs % 2, 0]))
                if tx == 0:
                    out[r] = tot[0]

    return row_sum


#: the copy's tuning space (``txlab.tune(copy_build(n), COPY_SPACE, ...)``); ``blocks_per_sm`` 0 means
#: no grid-stride loop (one CTA per chunk)
COPY_SPACE = {"threads": [128, 256, 512, 1024], "unroll": [2, 4, 8, 16], "blocks_per_sm": [0, 2, 4, 8, 16],
              "unguarded": [False, True]}


def copy_build(n: int, sms: int = 132):
    """``build(**config)`` for :data:`COPY_SPACE`: the copy kernel of ``n`` floats for one point."""
    def build(threads=256, unroll=4, blocks_per_sm=8, unguarded=False):
        return copy_kernel(n, threads=threads, unroll=unroll,
                           blocks=sms * blocks_per_sm if blocks_per_sm else None, unguarded=unguarded)

    build.__name__ = f"copy_{n}"
    return build


def copy_space_valid(n: int, sms: int = 132):
    """The constraint of :data:`COPY_SPACE` for ``n`` floats: at most 2048 threads resident per SM,
    and ``unguarded`` only where every step is full."""
    def valid(c):
        if c["blocks_per_sm"] and c["blocks_per_sm"] * c["threads"] > 2048:
            return False
        if c["unguarded"]:
            chunk = c["threads"] * c["unroll"]
            blocks = sms * c["blocks_per_sm"] if c["blocks_per_sm"] else -(-(n // 4) // chunk)
            return (n // 4) % (blocks * chunk) == 0
        return True
    return valid


def copy_inputs(n: int, seed: int = 0):
    """``inputs(config)`` for a copy sweep: ``src`` (standard normal float32) and ``dst`` (zeros), made
    once per process (the same arrays for every configuration)."""
    return _CopyInputs(n, seed)


class _CopyInputs:
    _held: dict = {}

    def __init__(self, n, seed):
        self.key = (n, seed)
        self.__name__ = self.__qualname__ = f"copy_inputs_{n}_s{seed}"

    def __call__(self, config=None):
        import numpy as np

        if self.key not in _CopyInputs._held:
            _CopyInputs._held.clear()
            n, seed = self.key
            src = np.random.default_rng(seed).standard_normal(n, dtype=np.float32)
            _CopyInputs._held[self.key] = (src, np.zeros(n, np.float32))
        return _CopyInputs._held[self.key]


def copy_bytes(n: int) -> int:
    return 2 * 4 * n


def row_sum_bytes(rows: int, cols: int) -> int:
    return 4 * rows * cols + 4 * rows
