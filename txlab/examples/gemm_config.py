"""The Hopper GEMM's configuration: tile shape, pipeline depth, schedule, epilogue, cluster.

:class:`GemmConfig` is what :mod:`txlab.examples.hopper_gemm` builds from, what its tuner sweeps
and what :mod:`txlab.examples.gemm_model` ranks; it knows its own resource needs (shared memory,
registers) and which shapes it can compute (:meth:`GemmConfig.check_shape`). No TVM here.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from numbers import Integral

from txlab.errors import InputError

MAX_SPLIT_K = 32  # split-K work items per output tile
BK = 64  # one 128-byte swizzle atom of bf16 per row: the K extent of every smem tile
MAX_COOP_ACC = 192  # fp32 accumulators per cooperative consumer thread: 64 x 256 rows x columns, or 128 x 192
EPI_BUFFERS = 2  # epilogue="tma": 64-row staging tiles per consumer (one is filled while one is stored)
#: clusters of 4 CTAs an H100/H200 (132 SMs) holds at once. A cluster's CTAs must find free SMs in one GPC, and the
#: GPCs' SM counts leave room for 30 whole 4-CTA clusters, not 33: on the H200, 32 clusters of 2x2 hung in the
#: parallel fix-up (not all resident) and a persistent grid of 33 ran its last clusters in a second round (0.52 of
#: cuBLAS); cuBLAS launches 120-CTA grids of 1x4 and 4x1 clusters there. Scaled for other SM counts.
CLUSTERS_OF_4_AT_132_SMS = 30
#: ... and clusters of 8 (4x2, 2x4): half as many, the same 120 CTAs (cuBLAS launches 15 clusters of 2x4 at
#: 1200x856x1752 on the H200). Both measured by cudaOccupancyMaxActiveClusters on the H200 (2026-12-05) for a CTA
#: of 384 threads with 200 or 227 KiB of shared memory: 30 clusters of 4, 15 of 8 (7 of 16). Scaled for other SM
#: counts.
CLUSTERS_OF_8_AT_132_SMS = 15


@dataclass(frozen=True)
class GemmConfig:
    """Tile shape and pipeline depth of :func:`gemm_kernel`.

    ``schedule="cooperative"`` (the default): the consumer warpgroups split one ``bm x bn`` tile,
    ``bm = 64 * consumers`` (each owns 64 rows: one m64 wgmma), and write it out together, so the
    tensor cores idle during the epilogue. ``schedule="pingpong"``: two consumers each own a whole
    tile of ``tile_m`` (64 or 128) rows and take alternate tiles of the CTA's sequence, so one's
    epilogue runs while the other's mainloop does (what hides the epilogue on short-K shapes).
    ``bn`` is the wgmma N (8..256, multiple of 8). ``serpentine`` switches the tile order to
    TVM's 2-D block swizzle (``l2_group`` is then the block size).

    ``split_k = S > 1`` (split-K, for shapes whose tiles cannot fill the SMs): each output tile is
    S work items, item s running k-steps ``[s * KT // S, (s + 1) * KT // S)``. Every item writes its
    fp32 partial to a workspace (:meth:`workspace_elems` float32, zero before the first launch; every
    launch leaves its counters zero again), bumps a per-thread counter, and the item that finds the
    others done sums the S partials in split order (0, 1, ..., S-1, so the result is bitwise the same
    run to run, whichever item finishes last) and writes C. Cooperative, direct epilogue, clusters of at most
    4 CTAs (every item of a split tile must be resident at once; ``split_tail``: no cluster).
    ``fixup="parallel"``: every item waits until the tile's S partials are stored (one counter per tile, counted
    and polled by one thread between two barriers of the consumers) and then sums (in split order) and stores
    its own share of the tile's columns, so the fix-up is spread over S CTAs rather than left to one; it needs
    every work item on its own CTA at once (``tiles * split_k <= num_sms``).
    ``split_order="k"``: the scheduler hands out every tile's first K slice, then every tile's second, and so on
    (``"tile"``, the default: a tile's S items adjacent). With more items than CTAs, the CTAs of one wave then
    read the same one or two K slices of A and B, which L2 serves to all of them, where the tile order spreads a
    wave over all S slices and reads every slice of the operands from HBM once per wave.
    ``split_tail=True``: only the last wave's tiles are split (data-parallel and split-K in one launch, as stream-K
    hybrids do): with T tiles on P CTAs the first ``D = P * ((T - 1) // P)`` run whole, one after another on each CTA,
    and the ``R = T - D`` left are split S ways, their items handed out K slice by K slice after them
    (:meth:`tail_tiles`). 140 tiles on 132 SMs: one wave of whole tiles and 8 tiles in 16 slices (128 items a
    sixteenth as long) rather than a second wave of 8 whole tiles. One CTA per cluster.

    ``epilogue="staged"``: the fragment goes through shared memory (as with ``"tma"``) and the warpgroup
    stores it back row by row, coalesced, with guarded stores: for outputs TMA cannot store (N % 8 != 0).

    ``swap_ab=True`` computes ``C.T = B @ A.T``: the kernel tiles the N x M transposed output (its "A" is the
    user's B) and the epilogue writes each fragment element to ``C[m, n]`` (the TMA one through transposed staging
    tiles). It is for an M that tiles badly when N tiles well (M = 320 is two and a half 128-row tiles; 160
    columns tile it exactly). Methods taking an output's ``(m, n)`` mean the user's output and swap it themselves
    (:meth:`kernel_shape`)."""

    bn: int = 256
    stages: int = 4
    consumers: int = 2
    num_sms: int = 132
    l2_group: int = 8
    persistent: bool = True
    producer_regs: int = 40
    consumer_regs: int | None = None  # default: 232 with 2 consumers, 240 with 1, 152 with 3
    schedule: str = "cooperative"     # or "pingpong"
    epilogue: str = "direct"          # or "tma": through shared memory and TMA stores
    tile_m: int = 0                   # pingpong: rows of one consumer's tile (64 or 128); cooperative: 0 (64 *
    #                                   consumers) or 256 (two consumers of 128 rows each)
    serpentine: bool = False
    cluster_m: int = 1                # CTAs of a cluster along M: they share (multicast) the B tile
    cluster_n: int = 1                # CTAs of a cluster along N: they share (multicast) the A tile
    split_k: int = 1                  # work items per output tile, each a slice of the K loop (split-K)
    fixup: str = "serial"             # split-K: "serial" (the last item sums) or "parallel" (every item sums a share)
    split_order: str = "tile"         # split-K: "tile" (a tile's items adjacent) or "k" (K slice by K slice)
    split_tail: bool = False          # split-K: only the last wave's tiles are split, the others run whole
    l2_promotion: int | None = None   # TMA loads' L2 promotion (0 none, 1 64 B, 2 128 B, 3 256 B); None: TVM's (128 B)
    loads: str = "tma"                # A/B tiles by TMA, or "cp_async": 16-byte cp.async by the producer warpgroup
    swap_ab: bool = False             # tile the transposed output (C.T = B @ A.T), stores transposed

    @property
    def pingpong(self) -> bool:
        return self.schedule == "pingpong"

    @property
    def bm(self) -> int:
        return self.tile_m or 64 * self.consumers

    @property
    def cluster_size(self) -> int:
        return self.cluster_m * self.cluster_n

    @property
    def sharers(self) -> int:
        """CTAs whose TMA writes land in one CTA's ring slot (its row and column of the cluster,
        itself counted once): each must release the slot before any of them refills it."""
        return self.cluster_m + self.cluster_n - 1

    @property
    def m_atoms(self) -> int:
        """m64 wgmmas per consumer per k16 step: the rows a consumer owns, in 64s."""
        return self.bm // 64 if self.pingpong else self.bm // (64 * self.consumers)

    @property
    def threads(self) -> int:
        return 128 * (self.consumers + 1)

    @property
    def consumer_regs_(self) -> int:
        if self.consumer_regs is not None:
            return self.consumer_regs
        return {1: 240, 2: 232}.get(self.consumers, 152)  # 3: 128 x (40 + 3 x 152) registers, under 65536

    @property
    def stage_bytes(self) -> int:
        return (self.bm + self.bn) * BK * 2

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory: the A/B ring, the TMA epilogue's staging tiles, two barrier arrays
        (8 bytes per stage each), and pingpong's two order barriers."""
        return (self.stages * self.stage_bytes + self.epilogue_bytes + 16 * self.stages
                + (16 if self.pingpong else 0))

    @property
    def epi_width(self) -> int:
        """Columns of one staging tile of the TMA or staged epilogue: 64 (a 128-byte swizzled row), or for a
        ``bn`` that 64 does not divide, 32 or 16 (64- and 32-byte swizzle), so the tile's pieces end at its edge."""
        if self.epilogue == "staged":
            return 64
        return next((w for w in (64, 32, 16) if self.bn % w == 0), 64)

    @property
    def epilogue_bytes(self) -> int:
        """``epilogue="tma"`` or ``"staged"``: per consumer, EPI_BUFFERS 64 x :attr:`epi_width` bf16 staging tiles
        (8 KiB each at 64 columns)."""
        return self.consumers * EPI_BUFFERS * 64 * self.epi_width * 2 if self.epilogue != "direct" else 0

    def a_rows(self, m: int) -> int:
        """Rows of A's TMA box for a kernel's A of ``m`` rows (the output's rows; its columns with :attr:`swap_ab`):
        ``bm``, or where one M tile covers ``m`` and no cluster multicasts A (a decode-sized M), only its
        ``ceil(m / 8) * 8`` rows (whole swizzle atoms). The slot's other rows keep stale data and feed only
        accumulator rows that are never stored."""
        if m > self.bm or self.cluster_n > 1:
            return self.bm
        return min(self.bm, _ceil(m, 8) * 8)

    @staticmethod
    def slices(rows: int, ways: int) -> tuple:
        """How a cluster splits a shared tile's ``rows`` among the ``ways`` CTAs that load it: ``(first, last)``, the
        rows of each of the first ``ways - 1`` slices (whole 8-row swizzle atoms) and of the last (what they leave).
        ``slices(200, 4) == (56, 32)``; where equal whole-atom slices would leave the last empty, the first are
        smaller and the last takes the rest (``slices(48, 4) == (8, 24)``); ``last`` is 0 or less where no split
        exists (fewer atoms than CTAs)."""
        first = _ceil(rows, 8 * ways) * 8
        if rows - (ways - 1) * first <= 0 and rows >= 8 * ways:  # 48 over 4: 8, 8, 8 and 24 rather than 16, 16, 16, 0
            first = rows // (8 * ways) * 8
        return first, rows - (ways - 1) * first

    def kernel_shape(self, m: int, n: int) -> tuple:
        """The (rows, columns) the kernel tiles for an m x n output: (n, m) with :attr:`swap_ab`."""
        return (n, m) if self.swap_ab else (m, n)

    def cluster_tiles(self, m: int, n: int) -> tuple:
        """The grid of cluster tiles (``cluster_m * bm`` x ``cluster_n * bn``) over an m x n output (over the
        n x m one the kernel tiles with :attr:`swap_ab`)."""
        m, n = self.kernel_shape(m, n)
        return _ceil(_ceil(m, self.bm), self.cluster_m), _ceil(_ceil(n, self.bn), self.cluster_n)

    def work_grid(self, m: int, n: int) -> tuple:
        """The scheduler's grid of work items: the cluster tiles, with ``split_k`` items per M tile (row
        ``tile_m * S + s`` with ``split_order="tile"``, ``s * GM + tile_m`` with ``"k"``)."""
        gm, gn = self.cluster_tiles(m, n)
        return gm * self.split_k, gn

    def tail_tiles(self, m: int, n: int) -> tuple:
        """``split_tail``: ``(D, R)``, the tiles that run whole (whole waves of the SMs, first in the tile order) and
        the last ``R`` that are split; ``(0, tiles)`` where the tiles do not fill one wave."""
        gm, gn = self.cluster_tiles(m, n)
        tiles = gm * gn
        whole = (tiles - 1) // self.num_sms * self.num_sms
        return whole, tiles - whole

    def work_items(self, m: int, n: int) -> int:
        """Work items the scheduler hands out: cluster tiles times ``split_k``, or with ``split_tail`` the whole
        tiles and the split tail's items."""
        if self.split_tail:
            whole, rest = self.tail_tiles(m, n)
            return whole + rest * self.split_k
        gm, gn = self.work_grid(m, n)
        return gm * gn

    @property
    def max_clusters(self) -> int:
        """Clusters of this size the GPU holds at once (what a persistent grid launches at most): every pair
        of SMs for 2-CTA clusters, :data:`CLUSTERS_OF_4_AT_132_SMS` and :data:`CLUSTERS_OF_8_AT_132_SMS` (scaled) for
        4- and 8-CTA ones."""
        size = self.cluster_size
        if size <= 2:
            return self.num_sms // size
        held = CLUSTERS_OF_4_AT_132_SMS if size == 4 else CLUSTERS_OF_8_AT_132_SMS
        whole = self.num_sms // size  # 33 of 4 at 132 SMs, of which 30 fit: one in 11 left out
        return max(1, whole - whole * (132 // size - held) // (132 // size))

    def ctas(self, m: int, n: int) -> int:
        """CTAs launched for an m x n output: one per SM when persistent (whole clusters, as many as can be
        resident at once), else one per work item (a cluster's CTAs past the M or N edge compute nothing but
        still load their share)."""
        items = self.work_items(m, n)
        clusters = min(self.max_clusters, items) if self.persistent else items
        return clusters * self.cluster_size

    @property
    def name(self) -> str:
        p = "" if self.persistent else "_np"
        pp = "_pp" if self.pingpong else ""
        cl = f"_cl{self.cluster_m}x{self.cluster_n}" if self.cluster_size > 1 else ""
        tma = {"tma": "_tma", "staged": "_stg"}.get(self.epilogue, "")
        sk = (f"_sk{self.split_k}{'p' if self.fixup == 'parallel' else ''}{'k' if self.split_order == 'k' else ''}"
              f"{'t' if self.split_tail else ''}" if self.split_k > 1 else "")
        l2 = f"_l2p{self.l2_promotion}" if self.l2_promotion is not None else ""
        cpa = "_cpa" if self.loads == "cp_async" else ""
        sw = "_swap" if self.swap_ab else ""
        return f"{self.bm}x{self.bn}x{BK}_s{self.stages}_c{self.consumers}{pp}{tma}{cl}{sk}{l2}{cpa}{sw}{p}"

    def workspace_elems(self, m: int, n: int) -> int:
        """float32 elements of the split-K workspace for an m x n output (0 without split-K): one fp32
        partial tile per work item, then one int32 counter per consumer thread and tile (tiles of the grid
        rounded up to whole clusters: a cluster's CTAs past the edge sum a tile nobody stores)."""
        if self.split_k == 1:
            return 0
        gm, gn = self.cluster_tiles(m, n)
        tiles = self.tail_tiles(m, n)[1] if self.split_tail else gm * self.cluster_m * gn * self.cluster_n
        return tiles * self.split_k * self.bm * self.bn + tiles * 128 * self.consumers

    def workspace_counters(self, m: int, n: int) -> tuple[int, int]:
        """``(first element, elements)`` of the split-K workspace's int32 counters for an m x n output (after the
        partial tiles; ``(0, 0)`` without split-K). They must be zero before a launch, and a launch leaves them
        zero."""
        total = self.workspace_elems(m, n)
        if total == 0:
            return 0, 0
        count = total // (self.split_k * self.bm * self.bn + 128 * self.consumers) * 128 * self.consumers
        return total - count, count

    def validate(self) -> None:
        """Raise :class:`~txlab.errors.InputError` naming the field and the fix when the kernel cannot be built
        from this configuration (any shape)."""
        for f in _INT_FIELDS:  # (plain ints first: the time model validates a thousand configurations per choice)
            v = getattr(self, f)
            if type(v) is not int and not (f == "consumer_regs" and v is None):
                if not (isinstance(v, Integral) and not isinstance(v, bool)):
                    raise InputError(f"{f}={v!r}: an integer"
                                     + (" (or None: the default)" if f == "consumer_regs" else ""))
                object.__setattr__(self, f, int(v))  # a numpy integer: held as the int it equals (names, JSON)
        for f in _BOOL_FIELDS:
            v = getattr(self, f)
            if v is not True and v is not False:
                if v not in (0, 1):
                    raise InputError(f"{f}={v!r}: True or False")
                object.__setattr__(self, f, bool(v))  # 0, 1 or a numpy bool: held as the bool it equals
        if self.num_sms < 1:
            raise InputError(f"num_sms={self.num_sms}: the persistent grid's CTAs, at least 1 (132 on an H100/H200)")
        if self.l2_group < 1:
            raise InputError(f"l2_group={self.l2_group}: M tiles of one L2 group of the tile order, at least 1 "
                             "(the default 8)")
        for f, regs in (("producer_regs", self.producer_regs), ("consumer_regs", self.consumer_regs_)):
            if regs % 8 or not 24 <= regs <= 256:
                raise InputError(f"{f}={regs}: setmaxnreg takes a multiple of 8 in [24, 256] registers per thread")
        if self.consumers not in (1, 2, 3):
            raise InputError(f"consumers={self.consumers}: use 1, 2 or 3 consumer warpgroups")
        if self.schedule not in ("cooperative", "pingpong"):
            raise InputError(f"schedule={self.schedule!r}: use 'cooperative' or 'pingpong'")
        if self.epilogue not in ("direct", "tma", "staged"):
            raise InputError(f"epilogue={self.epilogue!r}: use 'direct', 'tma' or 'staged'")
        if self.epilogue == "staged" and self.bn % 64:
            raise InputError(f"epilogue='staged' stages 64-column tiles: bn={self.bn} must be a multiple of 64")
        if self.epilogue == "tma" and self.bn % 16:
            raise InputError(f"epilogue='tma' stores the tile in 64-row pieces 64, 32 or 16 columns wide: bn={self.bn} "
                             "must be a multiple of 16 (or use epilogue='direct')")
        if self.fixup not in ("serial", "parallel"):
            raise InputError(f"fixup={self.fixup!r}: use 'serial' or 'parallel'")
        if self.fixup == "parallel" and self.split_k == 1:
            raise InputError("fixup='parallel' is split-K's fix-up: use split_k > 1, or fixup='serial'")
        if self.split_order not in ("tile", "k"):
            raise InputError(f"split_order={self.split_order!r}: use 'tile' (a tile's K slices adjacent) or 'k' "
                             "(every tile's first K slice first)")
        if self.split_order == "k" and self.split_k == 1:
            raise InputError("split_order='k' orders split-K's K slices: use split_k > 1, or split_order='tile'")
        if self.split_tail and (self.split_k == 1 or self.cluster_size > 1 or not self.persistent
                                or self.split_order != "tile"):
            raise InputError("split_tail=True splits the last wave's tiles of a persistent grid of single CTAs (its "
                             "tail is handed out in K order already): use split_k > 1, no cluster, persistent=True "
                             "and split_order='tile'")
        if self.split_k > 1 and self.cluster_size > 4:
            raise InputError(f"split_k={self.split_k} in a cluster of {self.cluster_size} CTAs: a split tile's items "
                             "wait on each other across clusters, so every cluster must be resident, and split-K "
                             "in 8-CTA clusters has not been run on a GPU: use a cluster of at most 4 CTAs with "
                             "split-K, or split_k=1")
        if self.loads not in ("tma", "cp_async"):
            raise InputError(f"loads={self.loads!r}: use 'tma' (the tensor maps) or 'cp_async' (16-byte cp.async)")
        if self.loads == "cp_async" and (self.cluster_size > 1 or self.split_k > 1 or self.l2_promotion is not None
                                         or getattr(self, "dtype", "bf16") != "bf16"):
            raise InputError("loads='cp_async' is built for bf16 without clusters (cp.async cannot multicast), split-K "
                             "or a tensor map's L2 promotion: use cluster 1x1, split_k=1, l2_promotion=None, or "
                             "loads='tma'")
        if self.l2_promotion not in (None, 0, 1, 2, 3):
            raise InputError(f"l2_promotion={self.l2_promotion!r}: use None (TVM's default), 0 (none), 1 (64 B), "
                             "2 (128 B) or 3 (256 B)")
        if self.pingpong:
            if self.consumers != 2 or not self.persistent:
                raise InputError("schedule='pingpong' alternates tiles between two consumers of a "
                                 "persistent CTA: use consumers=2, persistent=True")
            if self.tile_m not in (64, 128):
                raise InputError(f"tile_m={self.tile_m}: a pingpong consumer owns 64 or 128 rows")
            if self.m_atoms * self.bn > 256:
                raise InputError(f"pingpong {self.bm}x{self.bn}: {self.m_atoms * self.bn // 2} fp32 accumulators "
                                 "per thread; keep tile_m x bn <= 64 x 256 or 128 x 128")
        elif self.tile_m not in (0, 64 * self.consumers) and not (self.tile_m == 256 and self.consumers == 2):
            raise InputError(f"tile_m={self.tile_m}: a cooperative tile has 64 x consumers rows (leave tile_m=0), or "
                             "256 with consumers=2 (128 rows each)")
        elif self.m_atoms * self.bn > 2 * MAX_COOP_ACC:
            raise InputError(f"cooperative {self.bm}x{self.bn}: {self.m_atoms * self.bn // 2} fp32 accumulators per "
                             f"thread; a {self.bm}-row tile keeps bn <= {2 * MAX_COOP_ACC // self.m_atoms}")
        if self.consumers == 3 and self.bn > 192:
            raise InputError(f"bn={self.bn} with 3 consumers: {self.bn // 2} fp32 accumulators per thread do not fit the "
                             f"{self.consumer_regs_} registers each of 3 consumer warpgroups gets (65536 / 128 shared with "
                             "the producer): use bn <= 192, or 2 consumers")
        if not (8 <= self.bn <= 256 and self.bn % 8 == 0):
            raise InputError(f"bn={self.bn}: wgmma N must be a multiple of 8 in [8, 256]")
        if self.bn > 256 or self.bm > 256:
            raise InputError("a TMA box is at most 256 rows: keep bm, bn <= 256")
        if self.stages < 2:
            raise InputError(f"stages={self.stages}: a pipeline needs at least 2 stages")
        if self.cluster_m not in (1, 2, 4, 8) or self.cluster_n not in (1, 2, 4, 8) or self.cluster_size > 8:
            raise InputError(f"cluster {self.cluster_m}x{self.cluster_n}: use cluster_m, cluster_n in (1, 2, 4, 8) with "
                             "at most 8 CTAs (the portable cluster size: 1x2, 2x1, 2x2, 1x4, 4x1, 4x2, 2x4, 1x8, 8x1)")
        for rows, ways, side in ((self.bn, self.cluster_m, "B"), (self.bm, self.cluster_n, "A")):
            if ways > 1 and self.slices(rows, ways)[1] <= 0:
                raise InputError(f"cluster {self.cluster_m}x{self.cluster_n} splits the {self.bm}x{self.bn} tile's "
                                 f"{side} loads into {ways} slices of whole 8-row swizzle atoms, and {rows} rows are "
                                 f"{rows // 8} atoms, too few to give each one: use a smaller cluster on that side or "
                                 "a wider tile")
        if self.cluster_size > 1 and self.num_sms < self.cluster_size:
            raise InputError(f"num_sms={self.num_sms} cannot hold one cluster of {self.cluster_size} CTAs: use "
                             f"num_sms >= {self.cluster_size} or a smaller cluster")
        if not 1 <= self.split_k <= MAX_SPLIT_K:
            raise InputError(f"split_k={self.split_k!r}: use an integer in [1, {MAX_SPLIT_K}]")
        if self.swap_ab and self.epilogue == "staged":
            raise InputError("swap_ab=True stores the transposed tile directly or through TMA: use epilogue='direct' "
                             "or 'tma', or swap_ab=False")
        if self.split_k > 1 and (self.pingpong or self.epilogue != "direct"):
            raise InputError(f"split_k={self.split_k} is built for the cooperative schedule with the direct "
                             "epilogue: use schedule='cooperative', epilogue='direct', or split_k=1")
        if self.smem_bytes > 227 * 1024:
            raise InputError(f"{self.name} needs {self.smem_bytes} bytes of shared memory; the H100/H200 "
                             f"limit is {227 * 1024} per block: use fewer stages or a smaller bn")
        regs = 128 * (self.producer_regs + self.consumers * self.consumer_regs_)
        if regs > 65536:
            raise InputError(f"setmaxnreg budget {self.producer_regs}+{self.consumers}x{self.consumer_regs_} "
                             f"per thread x 128 = {regs} registers, more than the SM's 65536")

    def check_shape(self, M: int, N: int, K: int) -> None:
        """Raise :class:`~txlab.errors.InputError` naming the problem and the fix when this configuration cannot compute
        ``C (M, N) = A (M, K) @ B (N, K).T`` correctly."""
        tma_pitch(K, padder="hopper_gemm.build(M, N, K)")
        if self.epilogue == "tma" and N % 8:
            raise InputError(f"epilogue='tma' needs N % 8 == 0 (TMA row pitch a multiple of 16 bytes); N={N}: "
                             "use epilogue='direct'")
        if self.epilogue == "tma" and N * 16 >= 2**31:  # TVM computes the pitch in bits, in 32 bits
            raise InputError(f"epilogue='tma' stores C through a TMA descriptor whose row pitch ({N} bf16) must be under "
                             "2**31 bits: N < 2**27; use epilogue='direct'")
        if self.split_k > 1:
            kt = _ceil(K, BK)
            if self.split_k > kt:
                raise InputError(f"split_k={self.split_k} splits K={K} ({kt} k-steps of {BK}) into empty slices: "
                                 f"use split_k <= {kt}")
            gm, gn = self.work_grid(M, N)
            items = gm * gn * self.cluster_size  # CTAs, one per work item, past-the-edge cluster members too
            if self.split_tail:  # the split items run after the whole tiles: those of the tail must be resident
                items = self.tail_tiles(M, N)[1] * self.split_k
            # a cluster starts only on free SMs of one GPC: keep 4 SMs of slack for 2-CTA clusters; 4-CTA ones can
            # leave 2 SMs idle in each of the 8 GPCs (H200: 32 clusters of 4 = 128 CTAs hung waiting for each other);
            # validate() refuses split-K in larger clusters
            room = self.num_sms - {1: 0, 2: 4}.get(self.cluster_size, 16)
            if self.fixup == "parallel" and (items > room or not self.persistent):
                raise InputError(f"fixup='parallel' waits for every item of a tile: {items} work items need as many "
                                 f"CTAs at once, and num_sms={self.num_sms} holds {room} of them in clusters of "
                                 f"{self.cluster_size}: use fixup='serial' or a smaller split_k")
            if self.workspace_elems(M, N) >= 2**31:
                raise InputError(f"split_k={self.split_k} on {M}x{N}: the workspace would have "
                                 f"{self.workspace_elems(M, N)} elements (32-bit indices): use a smaller split_k")
        if self.serpentine:
            (gm, gn), s = self.cluster_tiles(M, N), self.l2_group
            if gm < s:
                raise InputError(f"serpentine=True with l2_group={s} needs at least {s} row tiles; M={M} has {gm} "
                                 f"(TVM 0.27's ClusterPersistentScheduler2D divides by {gm} // {s}): use "
                                 "serpentine=False or a smaller l2_group")
            if gm % s and gn % s and gn > s:
                raise InputError(f"serpentine=True with l2_group={s} on a {gm} x {gn} tile grid: TVM 0.27's "
                                 "ClusterPersistentScheduler2D never visits the bottom residual row of tiles when "
                                 "neither tile count is a multiple of l2_group (their outputs would be left "
                                 "unwritten): use serpentine=False or an l2_group dividing one of them")

    def to_dict(self) -> dict:
        return {**asdict(self), "bm": self.bm, "bk": BK, "name": self.name, "threads": self.threads,
                "cluster": [self.cluster_m, self.cluster_n],
                "smem_bytes": self.smem_bytes, "consumer_regs": self.consumer_regs_}


_INT_FIELDS = ("bn", "stages", "consumers", "num_sms", "l2_group", "producer_regs", "consumer_regs", "tile_m",
               "cluster_m", "cluster_n", "split_k")
_BOOL_FIELDS = ("persistent", "serpentine", "split_tail", "swap_ab")


def replace_fields(obj, **changes):
    """``dataclasses.replace`` for plain dataclasses whose ``__init__`` only sets the fields (no ``__post_init__``,
    no ``InitVar``, nothing cached on the instance: :class:`GemmConfig`, the model's ``Prediction``): a copy of the
    instance's attributes with ``changes``. ``dataclasses.replace`` reads every field's definition on each call; a
    GEMM choice makes thousands of configurations, and this is about a tenth of that cost. Unknown names raise
    TypeError, as ``replace`` does."""
    cls = type(obj)
    if not changes.keys() <= cls.__dataclass_fields__.keys():
        unknown = sorted(changes.keys() - cls.__dataclass_fields__.keys())
        raise TypeError(f"{cls.__name__} has no field(s) {unknown}")
    new = object.__new__(cls)
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new


def check_sizes(M, N, K) -> tuple:
    """``(M, N, K)`` as ints, or :class:`~txlab.errors.InputError` naming the size that is not a positive integer
    (``C (M, N) = A (M, K) @ B (N, K).T``)."""
    for v, name, what in ((M, "M", "rows of A and C"), (N, "N", "rows of B, columns of C"), (K, "K", "columns of A "
                                                                                             "and B")):
        if not isinstance(v, Integral) or isinstance(v, bool) or v <= 0:
            raise InputError(f"{name}={v!r}: GEMM sizes are positive integers ({name}: the {what})", param=name)
        if v >= 2**31:
            raise InputError(f"{name}={v}: the kernel's TMA coordinates and loop bounds are 32-bit, so each size is "
                             f"below 2**31: split the GEMM into pieces along {name}", param=name)
    return int(M), int(N), int(K)


def check_num_sms(num_sms) -> int:
    """``num_sms`` as an int, or :class:`~txlab.errors.InputError` unless it is a positive integer."""
    if not isinstance(num_sms, Integral) or isinstance(num_sms, bool) or num_sms < 1:
        raise InputError(f"num_sms={num_sms!r}: the SMs the persistent grid may use, a positive integer (132 on an "
                         "H100/H200 SXM)", param="num_sms")
    return int(num_sms)


def as_config(config, dtype: str = "bf16"):
    """A configuration given as a :class:`GemmConfig` or its name (:func:`parse_config`), as a GemmConfig; None
    stays None (the caller's choice). A configuration of another operand type (an FP8 one for ``dtype="bf16"``), or
    anything else, is an :class:`~txlab.errors.InputError` saying what to pass."""
    if config is None:
        return None
    if isinstance(config, str):
        config = parse_config(config)
    if not isinstance(config, GemmConfig):
        hint = " (GemmConfig(**d) makes one from a dict of its fields)" if isinstance(config, dict) else ""
        raise InputError(f"config={config!r}: pass a GemmConfig, its name (e.g. '128x256x64_s4_c2') or None{hint}",
                         param="config")
    if getattr(config, "dtype", "bf16") != dtype:
        raise InputError(f"config {config.name} is a configuration for {config.dtype} operands, not {dtype}: pass "
                         f"dtype={config.dtype!r}, or a {dtype} configuration", param="config")
    return config


def unaligned(K: int, elem_bytes: int = 2) -> bool:
    """Whether rows of K elements start off a 128-byte boundary (every TMA box row then spans two lines)."""
    return (K * elem_bytes) % 128 != 0


def row_phase(K: int, elem_bytes: int = 2) -> str:
    """Where rows of K elements start: ``"aligned"`` (on 128-byte L2 lines), ``"sector"`` (on 32-byte sectors, not
    lines: a 128-byte box row touches 4 sectors of two lines) or ``"odd"`` (off the sectors too: it touches 5). The
    two unaligned kinds measure differently on the H200 (gemm_model.UNALIGNED_FEED)."""
    pitch = K * elem_bytes
    return "aligned" if pitch % 128 == 0 else "sector" if pitch % 32 == 0 else "odd"


#: a configuration's name (:attr:`GemmConfig.name`), field by field
_NAME = re.compile(r"(\d+)x(\d+)(?:x64)?(?:_s(\d+))?(?:_c(\d+))?(_pp)?(_tma|_stg)?(?:_cl(\d)x(\d))?"
                   r"(?:_sk(\d+)(p)?(k)?(t)?)?(?:_l2p(\d))?(_cpa)?(_swap)?(_np)?")


def parse_config(text: str, **defaults) -> GemmConfig:
    """``"128x256x64_s4_c2"`` (also ``"128x256_s4"``, ``"c1"`` inferred from bm) -> GemmConfig."""
    if not isinstance(text, str):
        raise InputError(f"config {text!r}: a configuration's name is a string such as '128x256x64_s4_c2' (or pass a "
                         "GemmConfig)", param="config")
    text = text.strip()
    m = _NAME.fullmatch(text)
    if not m and re.fullmatch(r"\d+x\d+x128_s\d+.*", text):
        raise InputError(f"config {text!r} is an FP8 configuration's name (k-blocks of 128): pass dtype='e4m3' with it "
                         "(bf16 names read BMxBNx64_...)", param="config")
    if not m:
        raise InputError(f"config {text!r}: write it as BMxBNx64_sSTAGES_cCONSUMERS[_pp][_tma|_stg][_clMxN][_skS[p][k][t]]"
                         "[_l2pN][_cpa][_swap][_np], "
                         "e.g. 128x256x64_s4_c2, 128x256x64_s4_c2_cl2x1 or 128x128x64_s5_c2_sk4")
    bm, bn, stages, cons, pp, epi, cm, cn, sk, par, korder, tail, l2p, cpa, swap, np_ = m.groups()
    bm = int(bm)
    pingpong = bool(pp)
    consumers = int(cons) if cons else (2 if pingpong else bm // 64)
    if not pingpong and bm != 64 * consumers and not (bm == 256 and consumers == 2):
        raise InputError(f"config {text!r}: bm must be 64 x consumers (each consumer warpgroup owns 64 rows), or 256 "
                         "with c2 (128 rows each)")
    fields = dict(defaults)
    if pingpong:
        fields["schedule"], fields["tile_m"] = "pingpong", bm
    elif bm != 64 * consumers:
        fields["tile_m"] = bm
    if epi:
        fields["epilogue"] = "tma" if epi == "_tma" else "staged"
    if cm:
        fields["cluster_m"], fields["cluster_n"] = int(cm), int(cn)
    if sk:
        fields["split_k"] = int(sk)
    if par:
        fields["fixup"] = "parallel"
    if korder:
        fields["split_order"] = "k"
    if tail:
        fields["split_tail"] = True
    if l2p:
        fields["l2_promotion"] = int(l2p)
    if cpa:
        fields["loads"] = "cp_async"
    if swap:
        fields["swap_ab"] = True
    cfg = GemmConfig(bn=int(bn), stages=int(stages or 4), consumers=consumers, persistent=not np_, **fields)
    cfg.validate()
    return cfg


def shape_space(space: dict, config_cls, M: int, N: int, K: int, name: str) -> dict:
    """``space`` (a ``txlab.tune`` space of ``config_cls`` fields) with the constraint for one shape: the
    configuration validates and :meth:`GemmConfig.check_shape` accepts the shape."""

    def constraint(config: dict) -> bool:
        try:
            cfg = config_cls(**config)
            cfg.validate()
            cfg.check_shape(M, N, K)
        except (ValueError, TypeError):
            return False
        return True

    constraint.__name__ = f"{name}_valid_{M}x{N}x{K}"
    return {**space, "constraint": constraint}


def shape_builder(kernel, config_cls, M: int, N: int, K: int, name: str):
    """``build(**config)`` for a tune space at one shape: ``kernel(M, N, K, config_cls(**config))``."""

    def build(**config):
        return kernel(M, N, K, config_cls(**config))

    build.__name__ = f"{name}_{M}x{N}x{K}"
    return build


def tma_pitch(K: int, padder: str | None = None) -> None:
    """A and B are loaded by TMA, whose row pitch (K bf16 = 2K bytes) must be a multiple of 16.
    ``padder``: the builder that pads such K itself (named in the error beside padding by hand)."""
    if K % 8:
        kp, kb = K + (-K) % 8, K + (-K) % 64  # by hand, the next multiple of 8; build() goes to whole 128-byte rows
        by = (f"{padder} pads for you (it builds for K={kb} and copies A and B into zero-padded (M, {kb}) and "
              f"(N, {kb}) buffers on each call), or " if padder else "")
        raise InputError(f"K={K}: TMA loads need K % 8 == 0 (the row pitch of A and B, 2K bytes, a multiple "
                         f"of 16): {by}pad A and B with zero columns to K={kp}")


def _ceil(a: int, b: int) -> int:
    return (a + b - 1) // b
