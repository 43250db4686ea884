"""Shared-memory matrix transposes in TIRx: the textbook bank-conflict example, three ways.

``B = A.T`` for a float32 ``(n, n)`` matrix (``n`` a multiple of 32). Each CTA moves one 32 x 32
tile: 256 threads (8 warps) read it row by row from global memory (coalesced) into shared memory,
synchronise, then read it *column-wise* from shared memory so that the global store is coalesced
too. Only the shared-memory tile differs between the variants:

* ``naive`` — ``tile[32, 32]``. The column read ``tile[lane, c]`` has a stride of 32 words: all
  32 lanes of a warp hit the same bank, a 32-way conflict (32 wavefronts per request).
* ``padded`` — ``tile[32, 33]``. One extra column shifts each row by one bank, so the column read
  touches 32 distinct banks (1 wavefront per request); costs 32 words of shared memory.
* ``swizzled`` — ``tile[32, 32]`` with the column index XOR-ed by the row
  (``tile[r, c ^ r]``): the same conflict-free column read, no padding.

The shared-memory writes are row-wise (lane -> consecutive words) in all three variants, hence
conflict-free; only the reads differ. These kernels are the profiling notebook's (09) and the
sanitizer's (10) examples; :data:`VARIANTS` names them and :func:`smem_read_index` gives the
shared-memory word each lane reads, for checks that compute bank conflicts from the index
expressions.

Everything imports TVM lazily.
"""
from __future__ import annotations

TILE = 32
#: rows of the tile each of the 8 warps handles per step (TILE / ROWS warps = 8 per CTA)
ROWS = 8
THREADS = TILE * ROWS
VARIANTS = ("naive", "padded", "swizzled")


def transpose_kernel(n: int, variant: str = "naive"):
    """``B = A.T`` for float32 ``(n, n)`` arrays; ``variant`` is one of :data:`VARIANTS`.

    The prim_func is named ``transpose_<variant>``; its kernel is ``transpose_<variant>_kernel``."""
    from tvm.script import tirx as T

    if variant not in VARIANTS:
        raise ValueError(f"variant={variant!r}: choose one of {', '.join(VARIANTS)}")
    if n <= 0 or n % TILE:
        raise ValueError(f"n={n}: the transpose moves 32 x 32 tiles; use a positive multiple of 32")
    G = n // TILE

    # the variants differ only in the shared tile: its width (one padding column shifts each row
    # by a bank) and where column c of tile row r is stored (swizzled: at c ^ r)
    width = TILE + 1 if variant == "padded" else TILE
    swizzled = variant == "swizzled"

    def col(r, c):
        return T.bitwise_xor(c, r) if swizzled else c

    @T.prim_func
    def transpose(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (n, n), "float32")
        B = T.match_buffer(B_ptr, (n, n), "float32")
        T.device_entry()
        by, bx = T.cta_id([G, G])
        tid = T.thread_id([THREADS])
        tile = T.alloc_shared((TILE, width), "float32")
        lane = T.meta_var(tid % TILE)
        warp = T.meta_var(tid // TILE)
        for j in T.unroll(TILE // ROWS):
            tile[warp + j * ROWS, col(warp + j * ROWS, lane)] = A[by * TILE + warp + j * ROWS, bx * TILE + lane]
        T.cuda.cta_sync()
        for j in T.unroll(TILE // ROWS):
            B[bx * TILE + warp + j * ROWS, by * TILE + lane] = tile[lane, col(lane, warp + j * ROWS)]

    return transpose.with_attr("global_symbol", f"transpose_{variant}")


def smem_read_index(variant: str, lane: int, row: int) -> int:
    """The 32-bit shared-memory word that ``lane`` reads for output row ``row`` (0..31) of the tile
    in the column-wise read (``tile[lane, row]``, after the variant's padding or swizzle). The bank
    is this index mod 32."""
    if variant == "naive":
        return lane * TILE + row
    if variant == "padded":
        return lane * (TILE + 1) + row
    if variant == "swizzled":
        return lane * TILE + (row ^ lane)
    raise ValueError(f"variant={variant!r}: choose one of {', '.join(VARIANTS)}")


def expected_read_ways(variant: str) -> int:
    """Wavefronts per warp-wide shared load of the column read (1 = conflict-free), from
    :func:`smem_read_index`: the most lanes that hit one bank at different words."""
    worst = 1
    for row in range(TILE):
        per_bank: dict[int, set] = {}
        for lane in range(TILE):
            w = smem_read_index(variant, lane, row)
            per_bank.setdefault(w % 32, set()).add(w)
        worst = max(worst, max(len(v) for v in per_bank.values()))
    return worst


def transpose_bytes(n: int) -> int:
    """Bytes moved per launch (read A, write B)."""
    return 2 * 4 * n * n


def kernel_name(variant: str) -> str:
    """The ``__global__`` function TVM emits for a variant (what ncu's ``--kernel-name`` matches)."""
    return f"transpose_{variant}_kernel"
