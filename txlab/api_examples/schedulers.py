"""Tile schedulers of tvm.backend.cuda.lang, run on the device: each CTA loops its scheduler and
counts the tiles it is handed. Every scheduler must hand out every tile exactly once, so the
expected hit counts are all ones (an exact GPU check that does not restate the numbering)."""
from __future__ import annotations

import numpy as np

from txlab.api_examples.example import Example, kernel_source

SCHED = kernel_source(
    "tile_schedulers", 'Hits: T.Buffer((5, 48), "int32")',
    ctas=5, threads=32,
    comment=('5 persistent CTAs; row s of Hits counts the tiles scheduler s handed out (48 tiles each).',),
    preamble='''
@T.meta_class
class ColumnMajor(BaseTileScheduler):
    """A minimal scheduler written on the base class: column-major tiles, persistent stride."""

    def __init__(self, prefix, m_tiles, n_tiles, stride):
        super().__init__(prefix)
        self._m = m_tiles
        self._n = n_tiles
        self._stride = stride

    @T.inline
    def update_current_m_n_idx(self, linear_idx):
        self.m_idx = linear_idx % self._m
        self.n_idx = linear_idx // self._m

    @T.inline
    def next_tile(self):
        self.linear_idx = self.linear_idx + self._stride
        self.update_current_m_n_idx(self.linear_idx)

    def valid(self):
        return self.linear_idx < self._m * self._n

''',
    body='''
    if tx == 0:
        gemm = ClusterPersistentScheduler2D("g", num_m_tiles=8, num_n_tiles=6, num_clusters=5,
                                            l2_group_size=4)
        gemm.init(cta)
        while gemm.valid():
            T.cuda.atomic_add(T.address_of(Hits[0, gemm.m_idx * 6 + gemm.n_idx]), 1)
            gemm.next_tile()
        g3 = GroupMajor3D("k", m_tiles=8, n_tiles=3, k_tiles=2, group_rows=4, step=5)
        g3.init(cta)
        while g3.valid():
            T.cuda.atomic_add(T.address_of(Hits[1, (g3.k_idx * 8 + g3.m_idx) * 3 + g3.n_idx]), 1)
            g3.next_tile()
        lin = FlashAttentionLinearScheduler("l", num_batches=2, num_heads=6, num_m_blocks=4, num_ctas=5)
        lin.init(cta)
        while lin.valid():
            T.cuda.atomic_add(T.address_of(Hits[2, (lin.batch_idx * 6 + lin.head_idx) * 4 + lin.m_block_idx]), 1)
            lin.next_tile()
        lpt = FlashAttentionLPTScheduler("p", num_batches=2, num_heads=6, num_m_blocks=4, l2_swizzle=2,
                                         num_ctas=5)
        lpt.init(cta)
        while lpt.valid():
            T.cuda.atomic_add(T.address_of(Hits[3, (lpt.batch_idx * 6 + lpt.head_idx) * 4 + lpt.m_block_idx]), 1)
            lpt.next_tile()
        col = ColumnMajor("c", 8, 6, 5)
        col.init(cta)
        while col.valid():
            T.cuda.atomic_add(T.address_of(Hits[4, col.m_idx * 6 + col.n_idx]), 1)
            col.next_tile()
''',
)

INDEXED = kernel_source(
    "indexed_scheduler",
    ('B: T.Buffer((12,), "int32"), H: T.Buffer((12,), "int32"), Q: T.Buffer((12,), "int32"),',
     'Indptr: T.Buffer((4,), "int32"), Hits: T.Buffer((2, 2, 3), "int32")'),
    ctas=3, threads=32,
    comment=('A host-built work list (batch, head, q-block) split into 3 CTA ranges by Indptr.',),
    body='''
    if tx == 0:
        s = IndexedTripleTileScheduler("x", B, H, Q, Indptr)
        s.init(cta)
        while s.valid():
            T.cuda.atomic_add(T.address_of(Hits[s.b_idx, s.h_idx, s.q_idx]), 1)
            s.next_tile()
''',
)


def _indexed_inputs():
    rng = np.random.default_rng(11)
    work = [(b, h, q) for b in range(2) for h in range(2) for q in range(3)]
    order = rng.permutation(len(work))
    b, h, q = (np.array([work[i][k] for i in order], np.int32) for k in range(3))
    return [b, h, q, np.array([0, 5, 7, 12], np.int32), np.zeros((2, 2, 3), np.int32)]


RANK = kernel_source(
    "rank_aware_tiles", 'Hits: T.Buffer((8, 6), "int32")',
    ctas=5, threads=32,
    comment=('group_size=3, not 2: with 4 remote m-tiles and group_size 2 the tail branch divides by',
             "zero at compile time (TVM 0.27). Multi-GPU GEMM ordering: each PE starts on the next PE's block of m-tiles (its remote",
             'tiles first), so the PEs do not all read the same rows at once.'),
    body='''
    if tx == 0:
        s = RankAwareGroupMajorTileScheduler("r", m_clusters=8, n_clusters=6, group_size=3, world_size=2)
        s.init(cta)
        while s.valid():
            T.cuda.atomic_add(T.address_of(Hits[s.m_idx, s.n_idx]), 1)
            s.next_tile(5)
''',
)

EXAMPLES = [
    Example(
        id="tile_schedulers", source=SCHED, arch="sm_90a",
        uses=("tvm.backend.cuda.lang.ClusterPersistentScheduler2D", "tvm.backend.cuda.lang.GroupMajor3D",
              "tvm.backend.cuda.lang.FlashAttentionLinearScheduler",
              "tvm.backend.cuda.lang.FlashAttentionLPTScheduler", "tvm.backend.cuda.lang.BaseTileScheduler",
              "Tx.cuda.atomic_add"),
        inputs=lambda: [np.zeros((5, 48), np.int32)], expected=lambda H: np.ones((5, 48), np.int32),
        # each scheduler's state lives in variables named after its Python variable
        emits={"tvm.backend.cuda.lang.ClusterPersistentScheduler2D": r"\bgemm_\w+_ptr",
               "tvm.backend.cuda.lang.GroupMajor3D": r"\bg3_\w+_ptr",
               "tvm.backend.cuda.lang.FlashAttentionLinearScheduler": r"\blin_\w+_ptr",
               "tvm.backend.cuda.lang.FlashAttentionLPTScheduler": r"\blpt_\w+_ptr",
               "tvm.backend.cuda.lang.BaseTileScheduler": r"Hits_ptr\[.*\+ 192\)\]"},
        note="every scheduler hands each of its 48 tiles to exactly one of the 5 CTAs",
    ),
    Example(
        id="indexed_scheduler", source=INDEXED, arch="sm_90a",
        uses=("tvm.backend.cuda.lang.IndexedTripleTileScheduler",),
        inputs=_indexed_inputs, expected=lambda *a: np.ones((2, 2, 3), np.int32), outputs=("Hits",),
        emits={"tvm.backend.cuda.lang.IndexedTripleTileScheduler": r"\bs_\w+_ptr\[0\] = |while \(1\)"},
        note=("TVM's next_tile() loads the entry after a CTA's range before valid() ends the loop, so the last CTA "
              "reads B, H and Q at index 12, one past the 12-entry lists (the emulator's out_of_bounds finding); "
              "give the index lists one spare entry"),
    ),
    Example(
        id="rank_aware_tiles", source=RANK, arch="sm_90a", needs=("nvshmem",),
        emits={"tvm.backend.cuda.lang.RankAwareGroupMajorTileScheduler": r"nvshmem_my_pe\(\)|while \(1\)"},
        uses=("tvm.backend.cuda.lang.RankAwareGroupMajorTileScheduler", "Tx.nvshmem.my_pe"),
        not_on_h200="reads nvshmem_my_pe(): needs an NVSHMEM job (nvshmrun); one H200 cannot run it",
        note="on each PE of a 2-PE job: Hits == 1 everywhere, starting from the other PE's m-tiles",
    ),
]
