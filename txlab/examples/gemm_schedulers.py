"""Tile schedulers of the Hopper GEMM beyond TVM's own (``tvm.backend.cuda.lang.ClusterPersistentScheduler2D``).

:class:`SplitTailScheduler` hands a persistent grid whole tiles first and then the split items of the tiles left
for the last wave (``GemmConfig.split_tail``). It reuses TVM's scheduler for the tile order (its group-major
position-to-tile mapping) and only changes which position, and which K slice, a work item is.
"""
from __future__ import annotations

from tvm.backend.cuda.lang import ClusterPersistentScheduler2D
from tvm.script import tirx as T


class SplitTailScheduler(ClusterPersistentScheduler2D):
    """Work items ``0 .. D-1`` are the tiles at positions ``0 .. D-1`` of TVM's group-major order, whole
    (``k_slice == -1``); item ``D + j`` is K slice ``j // R`` of the tile at position ``D + j % R`` (``split_pos``
    ``j % R`` numbers the split tiles: their partials' and counters' index). Every CTA runs its whole tiles before
    its split item, so items that wait for a tile's other slices never hold up a whole tile."""

    def __init__(self, prefix: str, num_m_tiles: int, num_n_tiles: int, num_clusters: int, l2_group_size: int,
                 whole: int, split_tiles: int, split: int):
        super().__init__(prefix, num_m_tiles, num_n_tiles, num_clusters, l2_group_size)
        self.k_slice = T.local_scalar("int32")
        self.split_pos = T.local_scalar("int32")
        self._whole, self._split_tiles = whole, split_tiles
        self._TOTAL_TILES = whole + split_tiles * split

    # fmt: off
    @T.inline
    def update_current_m_n_idx(self, work_idx):
        WHOLE = T.meta_var(self._whole)
        R = T.meta_var(self._split_tiles)

        @T.inline
        def set_tile_coords(tile_row, tile_col):
            self.m_idx = tile_row
            self.n_idx = tile_col

        if WHOLE > 0:
            if work_idx < WHOLE:
                self.k_slice = -1
                self.split_pos = 0
                self._update_group_major(work_idx, set_tile_coords)
            else:
                self.k_slice = (work_idx - WHOLE) // R
                self.split_pos = (work_idx - WHOLE) % R
                self._update_group_major(WHOLE + (work_idx - WHOLE) % R, set_tile_coords)
        else:
            self.k_slice = work_idx // R
            self.split_pos = work_idx % R
            self._update_group_major(work_idx % R, set_tile_coords)
    # fmt: on
