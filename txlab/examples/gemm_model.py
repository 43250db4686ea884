"""Choosing a Hopper GEMM configuration for a shape nobody measured: a calibrated time model.

``hopper_gemm.build(M, N, K)`` without a config takes the shipped table's measured entry for an
exact shape, else :func:`choose`: every valid configuration of the kernel's tune space (schedule,
tile, stages, epilogue, L2 group) is given a predicted time and the fastest wins.
:func:`explain` shows the candidates, the prediction's parts and why the winner won. Each predicted time is then
multiplied by what the H200 measured near the shape (:mod:`txlab.examples.gemm_neighbours`: how each kind of
configuration ran against the others at neighbouring shapes), so the shipped measurements steer the choice where
the model's pricing is known to be off.

The model, per configuration (one persistent CTA per SM, tiles handed out in waves):

* ``tiles = ceil(M / bm) * ceil(N / bn)``; ``CTAs = min(SMs, tiles)``; the busiest CTA runs
  ``ceil(tiles / CTAs)`` tiles -- the *waves* -- and the last wave's idle SMs are the *tail*;
* a tile's mainloop is ``ceil(K / 64)`` k-steps, each bound by the tensor cores
  (``bm * bn * 64 * 2`` flops at the SM's peak, half rate where one warpgroup issues m64 wgmmas
  alone) or by feeding its operands (``(bm + bn) * 64 * 2`` bytes through TMA into shared memory,
  at a rate fitted to the measurements), whichever is slower; the whole is floored by reading A
  and B and writing C through HBM once, and where one M (or N) tile covers the output (a
  decode-sized M), by the busiest CTA streaming its own B (or A) tiles from HBM at a per-SM rate;
* tile widths other than 128 / 192 / 256 join where their tile count fills the last wave better
  (:data:`FIT_WIDTHS`), and any multiple of 8 from 136 to 248, for C or for C.T, that leaves the
  busiest SM less work (:func:`_fill_widths`: edge tiles, the last wave, split-K's fill counted);
* the epilogue writes ``bm * bn`` bf16 per tile: exposed on every tile when the consumers
  cooperate, once (the last tile) when they ping-pong; TMA stores cost less per byte than direct;
* a fixed cost per tile (scheduler, barrier turn-around) and per launch; 3-stage rings pay a
  little per k-step for the exposed load latency;
* split-K (``split_k = S``, candidates only where the tiles cannot fill two waves): the S work
  items of a tile share its k-steps, so the waves count items and each runs ``ceil(KT / S)``
  k-steps; every item stores its fp32 partial tile and pays a fence and a counter, and the item that
  ends a tile reads the S partials back before the bf16 store (:data:`SPLIT_K_COST`); items of two
  tiles that share an operand can pair in a 2-CTA cluster that multicasts it (:data:`CLUSTER_SPLIT`),
  and some tiles are offered only so, split and clustered, either way round (:data:`SPLIT_WIDTHS`,
  96 wide; :func:`_split_fits`, as wide as N over 2 to 8).

Its coefficients (:data:`CALIBRATION`) are fitted (non-negative least squares on relative error,
:func:`calibrate`) to every candidate the H200 sweeps measured (``benchmarks/results/tune_*.json``,
256 measurements over 7 shapes); on those sweeps the model's pick is within 3 % of the measured best
on 6 of the 7 shapes. It is a ranking model: its absolute times are within ~8 % (median). Nothing
here needs a GPU or TVM; a choice costs a few milliseconds.
"""
from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass, field

from txlab.examples.gemm_config import GemmConfig, check_num_sms, check_sizes, row_phase, unaligned
from txlab.examples.gemm_config import replace_fields as replace
from txlab.examples.gemm_neighbours import corrects, shipped

#: the SM count of the device the shipped measurements (:mod:`txlab.examples.gemm_neighbours`) were taken on
SHIPPED_SMS = 132
#: per-SM tensor-core peak (bf16 dense, flop/s) and HBM bandwidth the model assumes
SM_PEAK_FLOPS = 7.2e12
HBM_BYTES_PER_S = 4.0e12
#: per SM: operand bytes a CTA streams from HBM that no other CTA reads (B where one M tile covers M, a decode-sized
#: GEMM; A where one N tile covers N). H200, 2026-12-02: 32 CTAs streaming 1 MB each ran at 47 GB/s per SM
#: (1x4096x4096), 64 CTAs at 46-58 GB/s (16x8192x8192, 8x8192x28672), where all 132 SMs reach 3.9 TB/s together
SM_STREAM_BYTES_PER_S = 6.0e10
#: fitted to the H200 sweeps (see the module docstring and :func:`calibrate`)
CALIBRATION = {
    "smem_feed_bytes_per_s": 5.91e10,   # per SM: the effective operand-delivery rate the fit found
    "mainloop": 0.6425,                 # scale of the max(tensor, feed) k-step time
    "epilogue_direct_s_per_byte": 1.736e-10,
    "epilogue_tma_s_per_byte": 9.283e-11,
    "per_tile_s": 0.0,
    "per_launch_s": 3.857e-7,
    "shallow_ring_s_per_kstep": 1.108e-7,
    "fitted_on": "H200, 256 measured candidates, 2026-12-01 sweeps",
}
#: split-K's own costs (per SM), fitted (:func:`calibrate_split_k`) to the 38 split-K runs of the H200 runs of
#: 2026-12-02 01:21 and 03:55 UTC (benchmarks/results/gemm_shapes.json, gemm_explore_2026-12-02_0355.json:
#: serial and parallel fix-ups, S = 2..32); the partial stores' cost came out nil (it hides in the per-item term)
SPLIT_K_COST = {
    "partial_store_bytes_per_s": float("inf"),  # fp32 partial tiles, 16-byte coalesced stores
    "partial_load_bytes_per_s": 9.61e10,        # the fix-up's loads of the partials
    "per_item_s": 7.32e-6,                      # per wave: fence + counter atomics + the item's ramp and drain
    "wide_tile_mainloop": 0.0779,               # extra mainloop share of bn = 256 items (the base fit's bias there)
    "parallel_item_s": 1.56e-6,                 # per wave, the parallel fix-up's wait for the tile's last item
    "fitted_on": "H200, 38 split-K measurements, 2026-12-02",
}
#: serial split-K over more than one wave of items (handed out in K order, :func:`candidates`): the time the split
#: terms above predict is short by this factor against unsplit tiles at the same shape (H200, 2026-12-03 00:07 UTC,
#: benchmarks/results/gemm_explore_r13b_*: 10 random long-K shapes, median of measured over predicted time ratios)
SPLIT_WAVES = 1.05
#: split_tail (whole tiles in whole waves, then the last wave's tiles split, :func:`_tail_splits`): the predicted
#: time against the pick without it is short by this factor, the median of 18 H200 comparisons of 2026-12-03 00:22 UTC
#: (benchmarks/results/gemm_explore_r13d_*: random long-K shapes, 0.95 to 1.22; near 1 where both run 128 x 256 tiles,
#: 1.05 to 1.22 against narrower tiles, which the base model underrates at long K)
SPLIT_TAIL = 1.11
#: ... and a split_tail winner must be predicted this much faster than the best candidate without it where that one is
#: another tile (the model's comparison of tile widths at long K is its least sure part): of 32 H200 comparisons (r13d
#: and r13e: 18 gains, 14 losses) the rule takes 13 gains and one loss of 2 %; SPLIT_TAIL alone took 24, 7 of them
#: losses of up to 11 %
TAIL_MARGIN = 0.04
#: K whose rows are not 128-byte aligned (2K % 128 != 0 in bf16): the operand feed's cost per byte, by where the rows
#: start (gemm_config.row_phase): on 32-byte sectors ("sector", K % 16 == 0 in bf16: a box row touches 4 sectors of two
#: lines) or off them ("odd": 5 sectors). Fitted by grid search (with CLUSTER_MAINLOOP) to rank the configurations
#: measured together at 47 "sector" and 49 "odd" shapes of the H200 runs up to 2026-12-04 (the file gemm_neighbours
#: reads): the picks' mean loss against each shape's fastest 5.6 % -> 2.9 % ("sector") and 2.9 % -> 1.6 % ("odd")
#: against the single 1.68 both shared before; refitted on 62 + 62 shapes after r18f-i, the same values stayed within
#: 0.4 % of the best. ncu at the boost clock saw L2 throughput 1.7-1.9x that of the aligned K at 1000x3000x5000
#: ("odd"), of which the mainloop feels a part.
UNALIGNED_FEED = {"sector": 1.70, "odd": 2.40}
#: at an unaligned K, a cluster's operand feed against a lone CTA's at the same requests (barriers, releases), fitted
#: with UNALIGNED_FEED: where rows start on sectors, halving one operand's requests by multicast pays less (of the 35
#: "sector" shapes of r18d where both ran, one CTA per tile won by more than 1 % at 16, a cluster at 10), off them it
#: pays most of the way (1000x3000x5000 and 4096x4096x4104 with 2x1 clusters 0.92 and 0.96 of cuBLAS against 0.66 and
#: 0.77 with one CTA per tile)
CLUSTER_MAINLOOP = {"sector": 1.40, "odd": 1.10}
#: ... and a cluster of 4 CTAs or more beyond that (each ring slot waits on three CTAs' releases): fitted on the 96
#: pairs of a 4-CTA and a 2-CTA configuration without split-K measured side by side at unaligned K on the H200 (up to
#: r19h, 2026-12-04), where the model without it put the 4-CTA one 14 % too fast on average and ordered 73 of the
#: pairs right; with it the mean error is under 1 % and 82 pairs are in order
CLUSTER4_FEED = 1.2


#: at an unaligned K the model offers no ping-pong configuration: a ping-pong consumer's 128-row tile loads half
#: the bytes per flop of the cooperative 128 x 256 one, and requests, not bytes, bound such loads. Every ping-pong
#: run at an unaligned K lost to the cooperative choice at the same shape (H200, 2026-12-02: 8192x8192x1000
#: 0.87 and 0.86 against 1.01 with 128 x 256 tiles in 2x1 clusters; 1000x3000x5000 0.43 and 0.74 against 0.90),
#: though the model, which hides ping-pong's epilogue, ranked it first at 8192x8192x1000
PINGPONG_UNALIGNED = False

#: ping-pong: two consumers take alternate tiles and the tensor cores run one's mainloop at a time, so a tile takes
#: max(mainloop, (mainloop + epilogue) / 2): the epilogue hides behind the other consumer's mainloop only while it is
#: the shorter (at K = 320 it is not). One warpgroup storing a whole tile directly costs this much per byte against
#: the cooperative direct epilogue's two (H200, round 17: 12936x11896x320 128 x 128 ping-pong, 2.2 us a tile with
#: the TMA epilogue, 5.8 us with the direct one)
PP_DIRECT_EPILOGUE = 1.75

#: split-K items in a 2-CTA cluster (the two tiles' items of one K slice multicast the operand they share),
#: against one CTA per item, parallel fix-up, the mean time ratio of the H200 runs of 2026-12-02 04:22 and 05:00:
#: 128 x 128 tiles gain (256x256x65536 0.817 -> 0.888 and 0.886, 0.838 -> 0.918 and 0.916; 512x512x16384
#: 0.937 -> 0.973): CLUSTER_SPLIT, also for widths under 192 (H200, 2026-12-02 18:17 UTC: 944x352x34944 128 x 176
#: 0.873 -> 0.921, 944x272x28224 128 x 136 0.837 -> 0.908; 768x1024x16384 128 x 160 0.825 -> 0.873 at 07:05);
#: 128 x 256 and 128 x 192 tiles lose (768x1024x16384 0.913 -> 0.877 and 0.882; 128 x 192 0.810 -> 0.782):
#: CLUSTER_SPLIT_WIDE, for bn >= 192
CLUSTER_SPLIT = 0.93
CLUSTER_SPLIT_WIDE = 1.04
#: split-K-only tile widths under 128 (:func:`candidates`: 2-CTA clusters, parallel fix-up), where 96 columns tile
#: M or N exactly and the items fill the SMs (cuBLAS runs 96 x 128 split-K tiles in 1x2 clusters at 768x1024x16384)
SPLIT_WIDTHS = (96,)
#: ... and their mainloop in a 2-CTA cluster against one CTA per item: a narrow tile is fed, not tensor-bound, and
#: multicast cuts a CTA's loads by a fifth or more. The median of 23 H200 measurements of 2026-12-02 17:38 to
#: 17:57 UTC (21 shapes: outputs of 937x86 to 4096x96 and 384x2048, K 3448 to 51328; benchmarks/results/
#: gemm_explore_r12a_*, _r12b_*, _r12c_*), each the factor that makes the model's time the measured one; they
#: spread from 0.40 to 1.36, so picks within ~10 % of another candidate are close calls (384x2048x8192: 0.91 of
#: cuBLAS against 1.00 before; 14 of the 18 shapes whose pick changed gained, up to 1.94 -> 2.45 at 944x307x3448)
CLUSTER_SPLIT_NARROW = 0.78
#: ... split at least this many ways: with 2 or 3 K slices (a grid of 40 or more 96-wide tiles) the wider tiles won
#: 5 of 8 H200 comparisons of 2026-12-02 (544x720x29760: 0.77 of cuBLAS split in 3 against 1.00 with 128 x 192 tiles
#: split in 6); split 4 ways or more they lost 3 of 26, by 3 % at most (17:57 and 18:05 UTC runs)
NARROW_MIN_SPLIT = 4


#: the staged epilogue's cost per byte against the TMA epilogue's (it is a candidate only where N % 8 != 0,
#: where TMA cannot store C)
STAGED_EPILOGUE = 1.5
#: swap_ab: the direct epilogue's cost per byte when it stores the transposed tile one element at a time (16-byte
#: runs of a row per 8 lanes) against pairs down a row (the TMA epilogue's transposed staging costs what its own does)
SWAP_EPILOGUE = 2.0
#: swap_ab candidates are offered where M's last 128-row tile would be at most this full and N tiles better,
#: and win only when predicted at least SWAP_MARGIN faster than the best unswapped one
SWAP_ROW_FILL = 0.9
SWAP_MARGIN = 0.03
#: ... and only tiles whose transposed tiling fills the SMs' tile slots this much better than their unswapped one
SWAP_SLOT_GAIN = 0.05
#: the tile widths every shape is offered (:func:`_buildable`), and those with the 64-wide narrow tiles and the split-only
#: ones (:data:`SPLIT_WIDTHS`): the widths that are not sized to a shape
STANDARD_WIDTHS = (128, 192, 256)
FIXED_WIDTHS = (64,) + SPLIT_WIDTHS + STANDARD_WIDTHS
#: split factors the model tries (each must leave every item at least one k-step)
SPLITS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32)
FEATURES = ("mainloop", "epilogue_direct_s_per_byte", "epilogue_tma_s_per_byte", "per_tile_s",
            "per_launch_s", "shallow_ring_s_per_kstep")


@dataclass
class Prediction:
    """The model's account of one configuration on one shape (times in seconds)."""

    config: GemmConfig
    time_s: float
    tiles: int
    ctas: int
    waves: int
    tail_idle: float          # share of the CTAs idle in the last wave
    mainloop_s: float
    epilogue_s: float
    bound: str                # "tensor cores", "operand feed" or "HBM"
    flops: int = 0
    split_k: int = 1          # work items per output tile
    fixup_s: float = 0.0      # split-K: partial stores, fences and the fix-up's loads
    split_tiles: int = 0      # split_tail: the last wave's tiles, the ones split (the others run whole)
    correction: object = None  # gemm_neighbours.Correction applied to time_s (None: the model's time as it is)
    expected_s: float | None = None  # explain's expected time: time_s x the shape's level (None: time_s as it is)

    @property
    def items(self) -> int:
        """Work items: output tiles x split_k (what the waves count); with split_tail the whole tiles and the split
        tiles' items."""
        if self.split_tiles:
            return self.tiles - self.split_tiles + self.split_tiles * self.split_k
        return self.tiles * self.split_k

    @property
    def tflops(self) -> float:
        return self.flops / self.time_s / 1e12 if self.time_s else 0.0

    @property
    def expected(self) -> float:
        """The expected time in seconds: :attr:`expected_s` where :func:`explain` set it, else :attr:`time_s`."""
        return self.expected_s if self.expected_s is not None else self.time_s

    @property
    def expected_tflops(self) -> float:
        return self.flops / self.expected / 1e12 if self.expected else 0.0

    def to_dict(self) -> dict:
        return {"config": self.config.name, "time_us": self.time_s * 1e6, "tflops": self.tflops,
                "expected_us": self.expected * 1e6, "expected_tflops": self.expected_tflops,
                "tiles": self.tiles, "ctas": self.ctas, "waves": self.waves, "tail_idle": self.tail_idle,
                "mainloop_us": self.mainloop_s * 1e6, "epilogue_us": self.epilogue_s * 1e6, "bound": self.bound,
                "split_k": self.split_k, "split_tiles": self.split_tiles, "fixup_us": self.fixup_s * 1e6,
                "measured_correction": self.correction.factor if self.correction is not None else 1.0}


def _features(M: int, N: int, K: int, c: GemmConfig, feed: float):
    # the configuration's fields read once into locals: a choice prices a thousand configurations
    consumers, bn, S, split_tail = c.consumers, c.bn, c.split_k, c.split_tail
    pingpong = c.schedule == "pingpong"
    bm = c.tile_m or 64 * consumers
    size = c.cluster_m * c.cluster_n
    rows_m, cols_n = math.ceil(M / bm), math.ceil(N / bn)
    tiles = rows_m * cols_n
    # a cluster's CTAs past the M or N edge still run (and load): the CTAs' work counts whole clusters (7000x3000x1200
    # in 128 x 256 tiles: 55 x 12 = 660 tiles are 5 waves, but 2x1 clusters make 28 x 12 x 2 = 672, a sixth)
    gmc, gnc = c.cluster_tiles(M, N)
    items = gmc * gnc * size * S
    if split_tail:  # whole tiles in whole waves, then one wave of the last tiles' split items
        whole, rest = c.tail_tiles(M, N)
        items = whole + rest * S
    ctas = max(1, min(c.max_clusters * size, items)) if c.persistent else min(c.num_sms, items)
    waves = math.ceil(items / ctas)
    kblocks = math.ceil(K / 64)
    kt = math.ceil(kblocks / S)  # k-steps of the longest item
    # k-steps of the busiest CTA, in units of an item's: split_tail runs whole tiles, then one split item
    steps = waves * kt if not split_tail else (whole // ctas) * kblocks + kt
    issue = 0.5 if ((pingpong and bm == 64) or (not pingpong and consumers == 1)) else 1.0
    tensor = bm * bn * 64 * 2 / (SM_PEAK_FLOPS * issue)
    ar = c.a_rows(M)  # a decode-sized M: the kernel loads only A's live rows
    fed = (ar + bn) * 64 * 2 / feed
    phase = row_phase(K)
    if phase != "aligned":
        # every 128-byte box row spans two L2 lines: the loads' requests, not bytes, set the pace; a CTA of a
        # cluster requests only its share of the tiles the cluster multicasts (1/cluster_m of B, 1/cluster_n
        # of A). Aligned, the sweeps found clusters no faster: the term is left out there.
        fed = (ar / c.cluster_n + bn / c.cluster_m) * 64 * 2 / feed * UNALIGNED_FEED[phase]
        fed *= CLUSTER_MAINLOOP[phase] if size > 1 else 1.0
        fed *= CLUSTER4_FEED if size >= 4 else 1.0
    main = steps * max(tensor, fed)
    if S > 1 and size > 1 and phase == "aligned":
        main *= CLUSTER_SPLIT_NARROW if bn < 128 else CLUSTER_SPLIT if bn < 192 else CLUSTER_SPLIT_WIDE
    # HBM: all of A, B and C once (a floor under the mainloop, scaled with it by the fit); and, in seconds, the
    # busiest CTA's stream of an operand no other CTA reads (predict() floors the fitted mainloop with it)
    hbm = ((M * K + N * K) * 2 + M * N * 2) / HBM_BYTES_PER_S
    own = (bn if rows_m == 1 else 0) + (bm if cols_n == 1 else 0)
    stream = steps * own * 64 * 2 / SM_STREAM_BYTES_PER_S
    stores = whole // ctas + 1 if split_tail else waves if S == 1 else math.ceil(tiles / ctas)
    exposed = bm * bn * 2 * (1 if pingpong else stores)
    epilogue = c.epilogue
    tma = epilogue != "direct"  # the staged epilogue writes shared memory as the TMA one does
    if epilogue == "staged":
        exposed *= STAGED_EPILOGUE
    row = [max(main, hbm), 0 if tma else exposed, exposed if tma else 0, waves, 1.0,
           steps * (1 if c.stages <= 3 else 0)]
    bound = "HBM" if hbm > main else ("tensor cores" if tensor >= fed else "operand feed")
    return row, tiles, ctas, waves, bound, stream, items


def predict(M: int, N: int, K: int, config: GemmConfig, calibration: dict | None = None,
            split_cost: dict | None = None) -> Prediction:
    """The model's time for ``config`` on ``M x N x K`` (see the module docstring). A ``swap_ab`` configuration is
    the same kernel on ``N x M x K`` with its direct epilogue's stores priced at :data:`SWAP_EPILOGUE`."""
    if config.swap_ab:
        p = predict(N, M, K, replace(config, swap_ab=False), calibration, split_cost)
        # split-K's fix-up writes C after summing the partials: swapped, its stores measured about the same
        # (768x1024x16384, 128 x 96 split in 2: 54.6 us against 53.6)
        extra = p.epilogue_s * (SWAP_EPILOGUE - 1) if config.epilogue == "direct" and config.split_k == 1 else 0.0
        return replace(p, config=config, time_s=p.time_s + extra, epilogue_s=p.epilogue_s + extra,
                       flops=2 * M * N * K)
    cal = calibration or CALIBRATION
    row, tiles, ctas, waves, bound, stream, items = _features(M, N, K, config, cal["smem_feed_bytes_per_s"])
    coef = [cal[k] for k in FEATURES]
    t = sum(map(operator.mul, coef, row))
    main_s = coef[0] * row[0]
    if stream > main_s:  # the mainloop waits on one CTA's HBM stream
        t, main_s, bound = t + stream - main_s, stream, "HBM"
    S = config.split_k
    last = items - (waves - 1) * ctas
    epi = coef[1] * row[1] + coef[2] * row[2]
    if config.pingpong:  # an epilogue longer than a mainloop is not hidden by the other consumer's (see PP_DIRECT_EPILOGUE)
        tile_epi = config.bm * config.bn * 2 * (coef[1] * PP_DIRECT_EPILOGUE if config.epilogue == "direct" else coef[2])
        shown = waves * max(0.0, (tile_epi - main_s / waves) / 2)
        t, epi = t + shown, epi + shown
    fix = 0.0
    if S > 1:
        if config.split_tail:  # one wave of the last tiles' items: their share of the mainloop
            whole, rest = config.tail_tiles(M, N)
            kt = math.ceil(math.ceil(K / 64) / S)
            terms = _split_features(config, rest, ctas, 1, main_s * kt / ((whole // ctas) * math.ceil(K / 64) + kt))
        else:
            terms = _split_features(config, tiles, ctas, waves, main_s)
        fix = sum(map(operator.mul, _split_coefs(split_cost or SPLIT_K_COST), terms))
    # calibration of what the split terms leave out (fitted to H200 comparisons): waves of split items in K order,
    # and split_tail
    scale = SPLIT_WAVES if S > 1 and items > ctas and config.split_order == "k" else SPLIT_TAIL if config.split_tail else 1
    return Prediction(config, (t + fix) * scale, tiles, ctas, waves, 1 - last / ctas, main_s, epi, bound,
                      flops=2 * M * N * K, split_k=S, fixup_s=fix,
                      split_tiles=config.tail_tiles(M, N)[1] if config.split_tail else 0)


SPLIT_FEATURES = ("partial_store_bytes_per_s", "per_item_s", "partial_load_bytes_per_s", "wide_tile_mainloop",
                  "parallel_item_s")


def _split_features(config: GemmConfig, tiles: int, ctas: int, waves: int, mainloop_s: float) -> list:
    """Split-K's cost terms: partial bytes stored per CTA, waves of items, partial bytes the busiest CTA's
    fix-ups load, and the mainloop time of a bn = 256 item sequence. The serial fix-up loads all S partials
    of a tile in the one item that ends it; the parallel one spreads the tile's ``bn / 8`` column groups
    over its S items, so the busiest loads ``ceil(groups / S)`` groups of each of the S partials."""
    part = config.bm * config.bn * 4
    S = config.split_k
    if config.fixup == "parallel":
        groups = config.bn // 8
        loads = part * S * math.ceil(groups / S) / groups
    else:
        loads = math.ceil(tiles / ctas) * S * part
    return [waves * part, waves, loads, mainloop_s * (config.bn >= 256), waves * (config.fixup == "parallel")]


def _split_coefs(cost: dict) -> list:
    return [1 / cost["partial_store_bytes_per_s"], cost["per_item_s"], 1 / cost["partial_load_bytes_per_s"],
            cost["wide_tile_mainloop"], cost.get("parallel_item_s", 0.0)]


def calibrate_split_k(records) -> dict:
    """Fit :data:`SPLIT_K_COST` to measured split-K ``records`` ``[(shape, GemmConfig, seconds)]``: non-negative
    least squares on relative error of what the base model (:data:`CALIBRATION`) leaves unexplained."""
    import numpy as np

    X, y, base = [], [], []
    for shape, c, t in records:
        p = predict(*shape, c, split_cost={k: (float("inf") if "per_s" in k else 0.0) for k in SPLIT_K_COST})
        X.append(_split_features(c, p.tiles, p.ctas, p.waves, p.mainloop_s))
        y.append(t)
        base.append(p.time_s)
    X, y, base = np.array(X), np.array(y), np.array(base)
    A = X / y[:, None]
    scale = A.max(axis=0)
    scale[scale == 0] = 1
    x = _nnls(A / scale, (y - base) / y) / scale
    return {"partial_store_bytes_per_s": float(1 / x[0]) if x[0] else float("inf"), "per_item_s": float(x[1]),
            "partial_load_bytes_per_s": float(1 / x[2]) if x[2] else float("inf"), "wide_tile_mainloop": float(x[3]),
            "parallel_item_s": float(x[4]), "fitted_on": f"{len(records)} split-K measurements"}


def split_k_records(path) -> list[tuple]:
    """``[(shape, GemmConfig, seconds)]`` of every correct split-K row (table and sweep) that
    ``scripts/gemm_h200.py`` wrote, except shapes whose K rows are not 128-byte aligned (the base model
    does not price that)."""
    import json
    from pathlib import Path

    from txlab.examples.gemm_config import parse_config

    doc = json.loads(Path(path).read_text())
    out = []
    for r in doc.get("rows", []) + doc.get("sweeps", []):
        if (r.get("status") == "ok" and "_sk" in (r.get("config") or "") and r["shape"][2] % 64 == 0
                and r.get("dtype", "bf16") == "bf16" and "tflops" in r):
            m, n, k = r["shape"]
            out.append(((m, n, k), parse_config(r["config"]), 2 * m * n * k / (r["tflops"] * 1e12)))
    return out


def _row_fill(m: int) -> float:
    """How full ``m`` rows leave their last 128-row tile."""
    return (m - 128 * (math.ceil(m / 128) - 1)) / 128


def candidates(M: int, N: int, K: int, num_sms: int = 132) -> list[GemmConfig]:
    """Every configuration of the kernel's tune space that is valid for this shape (one CTA per
    SM, L2 group 8, no clusters: the sweeps found clusters slower on every shape measured, and the
    model has no term that tells L2 groups apart), and split-K variants (:data:`SPLITS`) of the
    cooperative direct-epilogue ones whose tiles fill fewer than two waves. Where M's last 128-row tile is
    mostly empty (:data:`SWAP_ROW_FILL`) and N's is fuller, the same candidates of the transposed output
    ``N x M`` join as ``swap_ab`` configurations (M = 320: 128 x 160 tiles of C.T fit it exactly)."""
    M, N, K = check_sizes(M, N, K)
    num_sms = check_num_sms(num_sms)
    out = _candidates(M, N, K, num_sms, swap_ab=False)
    # widths sized to the grid (the busiest SM's work, :func:`_fill_widths`), either way round
    plain, swapped = _fill_widths(M, N, K, num_sms)
    out += _candidates(M, N, K, num_sms, swap_ab=False, pool=[c for w in plain for c in _fill_tiles(w, num_sms)])
    out += _candidates(N, M, K, num_sms, swap_ab=True, pool=[c for w in swapped for c in _fill_tiles(w, num_sms)])
    # the split-only tiles (SPLIT_WIDTHS, and widths that tile N exactly) either way round: 96 columns may tile M
    # exactly where they leave N's last tile partly empty (768x1024x16384: 8 x 8 tiles of C.T, 0.98-0.99 of cuBLAS,
    # against 6 x 11 of C)
    out += _candidates(N, M, K, num_sms, swap_ab=True, split_only=True)
    if N <= 64 < M:
        # a decode-sized N: C.T's M is N, and the decode tiles (64 rows, the live rows of A loaded alone, B streamed by
        # as many CTAs as it can) take the user's A as their streamed operand (H200, round 17: 2856x24x42816 0.78 of
        # cuBLAS with 128 x 128 tiles split in 5, 13440x24x22528 0.69, 12384x32x30656 0.77)
        out += _candidates(N, M, K, num_sms, swap_ab=True)
    elif _row_fill(M) <= SWAP_ROW_FILL and _row_fill(N) > _row_fill(M):
        # only where the transposed tiling uses the SMs' tile slots better than the same tile unswapped: at equal
        # use the swap measured slower (448x4096x4096 128 x 128: 0.79 of cuBLAS swapped, 0.99 not; 320x8192x8192
        # 128 x 192: 0.77 against 0.82), where it fits better it won (128 x 160 there: 0.98)
        out += [c for c in _candidates(N, M, K, num_sms, swap_ab=True)
                if _slot_use(N, M, c.bm, c.bn, num_sms) > _slot_use(M, N, c.bm, c.bn, num_sms) * (1 + SWAP_SLOT_GAIN)]
    if row_phase(K) == "odd":
        out += _big_tiles(M, N, K, num_sms)
    out += _tall_tiles(M, N, K, num_sms)
    if unaligned(K):
        out += _narrow_fills(M, N, K, num_sms)
    return out


#: the smallest output side :func:`_narrow_fills` is offered at (the random shapes that measured them drew M and N
#: from 256 up)
NARROW_FILL_MIN = 256


@functools.lru_cache(maxsize=256)  # explain asks again, for its note
def _narrow_fills(M: int, N: int, K: int, num_sms: int) -> tuple[GemmConfig, ...]:
    """At an unaligned K, for grids that 64-row tiles fill in one wave: 64-row tiles (one consumer, the deepest ring)
    as wide as lets the grid nearly fill the SMs, alone and in 2x1 and 1x2 clusters, and as wide as lets 2x2
    clusters fill the 4-CTA clusters the GPU holds at once; either way round. cuBLAS's own kernels there are such
    tiles in 4- and 8-CTA clusters (H200, 2026-12-04: 64 x 104 in 4x2 clusters at 416x1760x1496, 144 x 64 in 2x4 at
    1200x856x1752). Measured (r19h, 11 shapes where the pick ran under 0.90): 1200x856x1752 0.81 -> 0.91 of cuBLAS
    (64 x 144 in 2x2 clusters), 1560x256x2424 0.81 -> 0.94, 368x1136x1688 0.85 -> 0.94, 1664x408x2568 0.84 -> 0.94
    (64 x 88 in 2x1); 2x2 clusters that take two rounds of the GPU's 30 ran at 0.60-0.68. Offered only where they were
    measured, outputs of at least :data:`NARROW_FILL_MIN` rows and columns (decode-sized ones keep their own tiles)."""
    if min(M, N) < NARROW_FILL_MIN:
        return ()
    out = []
    fours = GemmConfig(cluster_m=2, cluster_n=2, num_sms=num_sms).max_clusters  # 4-CTA clusters held at once
    for m, n, swap in ((M, N, False), (N, M, True)):
        rows = math.ceil(m / 64)
        if rows * math.ceil(n / 256) > num_sms:
            continue
        widths = [(_clamp_width(n, num_sms // rows), ((1, 1), (2, 1), (1, 2)))]
        quad = _clamp_width(n, 2 * (fours // math.ceil(rows / 2)))
        if math.ceil(rows / 2) * math.ceil(math.ceil(n / quad) / 2) <= fours:  # 2x2 only where one round holds them
            widths.append((quad, ((2, 2),)))
        for bn, clusters in widths:
            base = _deepest(num_sms, 12, bn=bn, consumers=1, epilogue="tma" if bn % 16 == 0 else "direct")
            out += _fitting([replace(base, cluster_m=cm, cluster_n=cn, swap_ab=swap) for cm, cn in clusters], (M, N, K))
    return tuple(out)


def _clamp_width(n: int, cols: int) -> int:
    """The tile width (a multiple of 8, 64 to 256) that cuts ``n`` columns into at most ``cols`` tiles."""
    return min(256, max(64, _ceil8(math.ceil(n / max(1, cols)))))


#: at K an odd multiple of 8 (rows off the 32-byte sectors: requests, not bytes, bound the loads), 192-row tiles
#: (three consumers) in 2-CTA clusters, as (consumers, bn): cuBLAS's own kernels there (192 x 176 in 1x2 clusters at
#: 4472x2856x3432, 192 x 192 in 2x1 at others). Measured at 30 such shapes (H200, 2026-12-04, r19a/b): 192 x 176 in 1x2
#: clusters 0.995 of cuBLAS at 2680x11080x19432 against 0.906 for the best 128-row tile, 0.984 at 2568x4864x6008
#: against 0.862 for the pick, 0.936 at 2312x10208x14056 against 0.837; 192 x 192 in 2x1 0.904 at 4200x2144x22424
#: (0.888) and 0.836 at 4472x2856x3432 (0.815). The model prices them within its usual spread there (median residual
#: +0.2 %, sd 5 %); at an aligned K they run ~8 % slower than it says and are not offered. 256 x 128 tiles in 1x2
#: clusters ran within 1 % of 128 x 256 in 2x1 and won at none of the 30, so they are not offered either.
BIG_TILES = ((3, 176), (3, 192))


def _big_tiles(M: int, N: int, K: int, num_sms: int) -> list[GemmConfig]:
    """:data:`BIG_TILES` (TMA epilogue, the deepest ring) in 2x1 and 1x2 clusters, either way round, where they fit
    the shape."""
    bases = [_deepest(num_sms, 7, bn=bn, consumers=consumers, epilogue="tma") for consumers, bn in BIG_TILES]
    return _fitting([replace(b, cluster_m=cm, cluster_n=cn, swap_ab=swap) for b in bases for swap in (False, True)
                     for cm, cn in ((2, 1), (1, 2))], (M, N, K))


#: widths of the 256-row tiles :func:`_tall_tiles` offers (two consumers of 128 rows each: at most 192 columns of fp32
#: accumulators per thread), the smallest longer side they are offered at, how many of the best-fitting widths, and
#: the K they are offered above (16 k-blocks)
TALL_WIDTHS = (128, 144, 160, 176, 192)
TALL_MIN_SIDE = 1024
TALL_KEEP = 2
TALL_MIN_K = 1024


@functools.lru_cache(maxsize=256)  # explain asks again
def _tall_tiles(M: int, N: int, K: int, num_sms: int) -> tuple[GemmConfig, ...]:
    """256-row cooperative tiles (two consumers of 128 rows, each issuing two m64 wgmmas per k16 step on one B
    descriptor; cuBLAS runs 256 x 136, 288 x 128 and 160 x 256 tiles at such shapes), their rows along the output's
    longer side (swapped where that is N), in the :data:`TALL_KEEP` widths of :data:`TALL_WIDTHS` that fill the SMs'
    tile slots best, TMA epilogue, the deepest ring, alone and in 2x1 and 1x2 clusters. A 256 x bn tile loads 256 + bn
    rows of a k-block for its 256 x bn outputs where two 128-row tiles load 256 + 2 bn: where an operand's feed sets
    the pace rather than the tensor cores, that is the difference. Offered (none elsewhere) where K's rows sit off the
    32-byte sectors and K is over :data:`TALL_MIN_K`. Drawn on an H100 (r25d, 2026-12-05: odd K +6 to +14 %, 19 of 21
    faster; sector K on outputs with a shorter side under ~2200 +13 %, 6 of 6), then measured on the H200 (2026-12-06,
    r25e and r26a: each pick beside the best pick without them): odd K over 16 k-blocks, 29 shapes, geometric mean
    +0.6 % (13 faster, 12 slower; 3131x3304x14248 +17 %, 3 shapes under 0.90 of cuBLAS without them against 1 with
    them); odd K of at most 16 k-blocks, 9 shapes, -4.2 % (6 slower; 5343x5160x648 0.87 against 1.05 of cuBLAS);
    sector K, 9 shapes, -7.0 % (6 slower; 10704x840x416 0.86 against 1.06): so not offered at a short or a sector K."""
    phase = row_phase(K)
    m, n, swap = (N, M, True) if N > M else (M, N, False)
    if m < TALL_MIN_SIDE or phase != "odd" or K <= TALL_MIN_K:
        return ()
    widths = sorted(TALL_WIDTHS, key=lambda bn: (-_slot_use(m, n, 256, bn, num_sms), -bn))[:TALL_KEEP]
    out = []
    for bn in widths:
        base = _deepest(num_sms, 7, bn=bn, consumers=2, tile_m=256, epilogue="tma")
        out += _fitting([replace(base, cluster_m=cm, cluster_n=cn, swap_ab=swap)
                         for cm, cn in ((1, 1), (2, 1), (1, 2))], (M, N, K))
    return tuple(out)


def _fitting(configs, shape: tuple) -> list[GemmConfig]:
    """The ``configs`` that are valid and compute the user's ``shape`` (M, N, K), in order."""
    out = []
    for c in configs:
        try:
            c.validate()
            c.check_shape(*shape)
        except ValueError:
            continue
        out.append(c)
    return out


def _slot_use(M: int, N: int, bm: int, bn: int, num_sms: int) -> float:
    """The share of the tile slots of every wave that ``bm x bn`` tiles of an ``M x N`` tiling fill with output
    (split-K, clusters and swap left out: what tile shapes and orientations are compared by)."""
    tiles = math.ceil(M / bm) * math.ceil(N / bn)
    return M * N / (math.ceil(tiles / num_sms) * num_sms * bm * bn)


def _candidates(
    M: int, N: int, K: int, num_sms: int, swap_ab: bool, split_only: bool = False, pool: list | None = None
) -> list[GemmConfig]:
    """:func:`candidates` for the ``M x N`` output the kernel tiles; with ``swap_ab`` that is the user's ``N x M``
    (the configurations' own methods take the user's shape, ``shape``). ``split_only``: only the split-K tiles
    offered in clusters alone (:data:`SPLIT_WIDTHS`, :func:`_split_fits`); ``pool``: only these tiles, in every form
    (unsplit, split-K, split_tail, clustered at an unaligned K)."""
    out = []
    shape = (N, M, K) if swap_ab else (M, N, K)
    kt = math.ceil(K / 64)
    # a grid so small that even 64 x 128 tiles split 32 ways leave SMs idle (long K on a tiny output) also gets
    # 64-column tiles with deep rings, split-K only: 128x128x131072 measured 0.95 of cuBLAS with 64 x 64 tiles,
    # 12 stages and 32 splits in 2-CTA clusters, 0.89 with the 64 x 128 ones (H200, 2026-12-02)
    tiny = math.ceil(M / 64) * math.ceil(N / 128) * SPLITS[-1] < num_sms
    # a decode-sized M (one 64-row tile) streams B alone: 64-column tiles, split or not, put twice the CTAs on it
    # (H200: 16x8192x8192 0.98 of cuBLAS with 64 x 64 tiles and 12 stages, 0.94-0.95 with 64 x 128 split in 2;
    # 1x4096x4096 1.05 with 64 x 64 split in 2)
    decode = M <= 64
    # the split-only tiles run split-K in 2-CTA clusters alone
    if pool is not None:
        split_tiles = []
    else:
        split_tiles = [] if decode else [_split_tile(bn, num_sms) for bn in SPLIT_WIDTHS] + _split_fits(M, N, num_sms)
        pool = [] if split_only else (_buildable(num_sms) + _fitted(M, N, num_sms)
                                      + (_narrow(num_sms) if tiny or decode else []))
    for c, split_only_tile in [(c, False) for c in pool] + [(c, True) for c in split_tiles]:
        if c.epilogue == "staged" and (swap_ab or shape[1] % 8 == 0):  # TMA stores these: staged is for the rest
            continue
        if c.pingpong and unaligned(K) and not PINGPONG_UNALIGNED:
            continue
        if swap_ab:
            c = replace(c, swap_ab=True)
        try:
            c.check_shape(*shape)
        except ValueError:
            continue
        # the 64-wide tiles run split only, but for a decode-sized M; the split-only tiles never unsplit
        if (c.bn >= 128 or decode) and not split_only_tile:
            out.append(c)
        # multicast halves one operand's requests: what pays for an unaligned pitch
        if unaligned(K) and not split_only_tile:
            out += _fitting([replace(c, cluster_m=cm, cluster_n=cn) for cm, cn in ((2, 1), (1, 2))], shape)
        if c.pingpong or c.epilogue != "direct":
            continue
        tiles = math.ceil(M / c.bm) * math.ceil(N / c.bn)
        if tiles > num_sms and not split_only_tile:
            out += _tail_splits(c, tiles, kt, num_sms, shape)
        if tiles >= 2 * num_sms:
            continue
        # the listed factors, and the largest that still gives every item its own SM (the parallel fix-up's best
        # fill: 384x384x32768 measured 0.90 of cuBLAS at 128 x 128 x 14 items, 0.87 at 128 x 192 x 20)
        for s in _split_factors(num_sms // tiles):
            if s > kt or tiles * s > 4 * num_sms:
                break
            if split_only_tile and c.bn < 128 and s < NARROW_MIN_SPLIT:
                continue
            # split-only tiles: their clustered forms alone (whose check_shape bounds the workspace)
            # more items than CTAs: handed out K slice by K slice (split_order="k"), what keeps a wave on one or two
            # slices of A and B
            order = "k" if tiles * s > num_sms else "tile"
            sk = None if split_only_tile else replace(c, split_k=s, split_order=order)
            if sk is None or sk.workspace_elems(*shape[:2]) < 2**31:
                if sk is not None:
                    out.append(sk)
                if tiles * s <= num_sms:  # every item on its own CTA at once: the parallel fix-up can wait
                    if sk is not None:
                        out.append(replace(sk, fixup="parallel"))
                    gm, gn = math.ceil(M / c.bm), math.ceil(N / c.bn)
                    for cm, cn in ((2, 1), (1, 2)):  # pairs of tiles sharing an operand, no pad tiles
                        if (gm % 2 == 0 if cm == 2 else gn % 2 == 0):
                            cl = replace(c, split_k=s, fixup="parallel", cluster_m=cm, cluster_n=cn)
                            try:
                                cl.check_shape(*shape)
                            except ValueError:
                                continue
                            out.append(cl)
    return out


def _split_factors(fill: int) -> list[int]:
    """The split counts the model tries, fewest first: :data:`SPLITS`, and ``fill`` (the most that still gives every
    item its own SM: the parallel fix-up's best fill) where it is a split at all and within :data:`SPLITS`' range."""
    return sorted(set(SPLITS) | ({fill} if 2 <= fill <= SPLITS[-1] else set()))


def _last_wave(tiles: int, num_sms: int) -> int:
    """The tiles of the last wave (1 to ``num_sms``): what a split tail splits."""
    return tiles - (tiles - 1) // num_sms * num_sms


def _tail_splits(c: GemmConfig, tiles: int, kt: int, num_sms: int, shape: tuple) -> list[GemmConfig]:
    """``split_tail`` forms of ``c`` for a grid of more tiles than SMs: the last wave's ``R`` tiles split ``S`` ways, one
    wave of items (``R * S <= num_sms``), ``S`` from :data:`SPLITS` and the largest that fits, either fix-up."""
    rest = _last_wave(tiles, num_sms)
    out = []
    for s in _split_factors(num_sms // rest):
        if s > kt or rest * s > num_sms:
            break
        for fixup in ("serial", "parallel"):
            cand = replace(c, split_k=s, fixup=fixup, split_tail=True)
            try:
                cand.check_shape(*shape)
            except ValueError:
                continue
            out.append(cand)
    return out


def _busiest(M: int, N: int, bn: int, kt: int, num_sms: int, tail: float = 1.0) -> float:
    """The k-steps of the busiest SM when ``128 x bn`` tiles of an ``M x N`` output run the best way the model can
    offer them: unsplit, split-K where the tiles fill fewer than two waves (:data:`SPLITS`, and the split that fills
    the SMs), or with a split tail, its k-steps scaled by ``tail`` (:data:`SPLIT_TAIL` is what :func:`predict` charges
    for one). What :func:`_fill_widths` ranks widths by before the model prices them (no epilogue, no split-K costs: a
    cheap first cut)."""
    tiles = math.ceil(M / 128) * math.ceil(N / bn)
    best = math.ceil(tiles / num_sms) * kt
    if tiles < 2 * num_sms:  # the split counts _candidates offers
        for s in _split_factors(num_sms // tiles):
            if s <= kt and tiles * s <= 4 * num_sms:
                best = min(best, math.ceil(tiles * s / num_sms) * math.ceil(kt / s))
    if tiles > num_sms:  # the largest split tail _tail_splits offers
        rest = _last_wave(tiles, num_sms)
        s = max((s for s in _split_factors(num_sms // rest) if s <= kt and rest * s <= num_sms), default=1)
        if s >= 2:
            best = min(best, ((tiles - 1) // num_sms * kt + math.ceil(kt / s)) * tail)
    return best


#: widths (multiples of 8 between 128 and 256) :func:`_fill_widths` may offer, how much less work on the busiest SM
#: one must promise than the best of 128 / 192 / 256 (and a swapped one than the best unswapped width), and how many
#: it keeps per measure of work and side
FILL_WIDTHS = tuple(range(136, 256, 8))
FILL_GAIN = 0.05
FILL_KEEP = 2
#: the two measures of a k-step's work :func:`_fill_widths` ranks by: the tensor cores' (``bn`` columns of 128 rows)
#: and the operand feed's (``128 + bn`` rows of 128 bytes, what the fitted model's k-step time follows). The model
#: rates wide tiles too fast at long K (128 x 256 by 20-28 %, r13d), so a width either measure favours is offered
#: and the full model prices it
_WORK = (lambda bn: bn, lambda bn: 128 + bn)


def _fill_widths(M: int, N: int, K: int, num_sms: int) -> tuple[list, list]:
    """Tile widths sized to the grid: for each measure of work (:data:`_WORK`), the (at most :data:`FILL_KEEP`)
    widths of :data:`FILL_WIDTHS` that leave the busiest SM (:func:`_busiest`: edge tiles' empty columns, the last
    wave's idle SMs and split-K's fill all counted) :data:`FILL_GAIN` less work than the best standard width, for
    the ``M x N`` output (first list) and for its transpose (second: ``swap_ab``, the user's M as the tile's width,
    where it beats the best unswapped width by as much). Split tails are counted both at their bare fill and at the
    price :func:`predict` puts on them (:data:`SPLIT_TAIL`), and the widths either count keeps are offered: counted
    bare, a standard width's split tail hid the widths that beat it unsplit (H200: 9904x2192x33408 128 x 256 0.88-0.90
    of cuBLAS, its split tail priced slower still, 128 x 224 in 6 waves, the last nearly full, 1.01-1.02; of 49 picks
    this moved, r16a and r16c, 31 gained, 13 lost, up to 9 % where a 200-wide tile's direct epilogue displaced a
    144-wide TMA one). H200 (r14a): 368x4408x59968 128 x 208 split in 2 (1.02 of cuBLAS, 0.90 with 128 x 256 split in
    2); M = 136 swapped, one 136-wide tile column split 3 ways (0.92-0.95, 0.63 with two rows of 128 x 256 tiles, the
    second 6 % full); 544x7368x30720 128 x 184 swapped with a split tail (1.03 against 0.90)."""
    kt = math.ceil(K / 64)
    plain, swapped = [], []
    if min(M, N) <= 64:  # decode-sized: the 64-row and 64-wide tiles' ground
        return plain, swapped
    # unswapped only where TMA can store C (N % 8 == 0): at an odd N the direct epilogue stores single elements, and
    # the staged one needs widths of whole 64s (H200, r14c: 3000x5001x4096 128 x 232 direct at 0.80x the speed of
    # 128 x 256 staged)
    for tail in (1.0, SPLIT_TAIL):
        steps = {(w, False): _busiest(M, N, w, kt, num_sms, tail) for w in FILL_WIDTHS + STANDARD_WIDTHS
                 if w in STANDARD_WIDTHS or (w <= _ceil8(N) and N % 8 == 0)}
        steps.update({(w, True): _busiest(N, M, w, kt, num_sms, tail) for w in FILL_WIDTHS if w <= _ceil8(M)})
        _keep_widths(steps, plain, swapped)
    return plain, swapped


def _keep_widths(steps: dict, plain: list, swapped: list) -> None:
    """Add to ``plain`` and ``swapped`` the widths :func:`_fill_widths` keeps by the busiest SM's k-steps ``steps``
    (``{(width, swapped): k-steps}``), for each measure of work."""
    for work in _WORK:
        cost = {k: v * work(k[0]) for k, v in steps.items()}
        standard = min(v for (w, sw), v in cost.items() if not sw and w in STANDARD_WIDTHS)
        keep = sorted((v, w) for (w, sw), v in cost.items()
                      if not sw and w in FILL_WIDTHS and v < standard * (1 - FILL_GAIN))[:FILL_KEEP]
        unswapped = min([standard] + [v for v, _ in keep])
        swap = sorted((v, w) for (w, sw), v in cost.items() if sw and v < unswapped * (1 - SWAP_SLOT_GAIN))[:FILL_KEEP]
        plain += [w for _, w in keep if w not in plain]
        swapped += [w for _, w in swap if w not in swapped]


@functools.lru_cache(maxsize=None)
def _fill_tiles(bn: int, num_sms: int) -> list[GemmConfig]:
    """The 128 x ``bn`` cooperative tiles :func:`_fill_widths` offers: 3 stages and the deepest ring, direct and TMA
    epilogue."""
    return [
        c
        for epilogue in ("direct", "tma")
        if epilogue == "direct" or bn % 16 == 0
        for c in _rings(num_sms, range(3, 8), bn=bn, consumers=2, epilogue=epilogue)
    ]


_BUILDABLE: dict = {}
_NARROW: dict = {}


def _narrow(num_sms: int) -> list[GemmConfig]:
    """64-column cooperative tiles with rings as deep as shared memory allows (up to 12 stages): the split-K
    candidates of the tiniest grids (see :func:`candidates`)."""
    if num_sms not in _NARROW:
        _NARROW[num_sms] = [c for consumers in (1, 2)
                            for c in _rings(num_sms, range(3, 13), bn=64, consumers=consumers)]
    return _NARROW[num_sms]


#: tile widths between the power-of-two-ish 128 / 192 / 256, offered where they fill the SMs' last wave better
#: (cuBLAS's own tiles there: 144 x 128 at 1536^3, 256 x 152 at 5000^3, 192 x 104 at 200 x 11008)
FIT_WIDTHS = (144, 160, 176, 208, 224, 240)


def _fitted(M: int, N: int, num_sms: int) -> list[GemmConfig]:
    """Cooperative 128-row tiles of :data:`FIT_WIDTHS` that use the SMs' tile slots better than every standard
    width (128, 192, 256): a fuller last wave, or less of the N edge's tile left empty (N = 320: two 160-wide tiles
    against two 192-wide ones a sixth empty). Their TMA epilogue stores 32- or 16-column pieces."""
    best = max(_slot_use(M, N, 128, bn, num_sms) for bn in STANDARD_WIDTHS)
    return [c for bn in FIT_WIDTHS if _slot_use(M, N, 128, bn, num_sms) > best + 0.05 for epilogue in ("direct", "tma")
            for c in _rings(num_sms, range(3, 8), bn=bn, consumers=2, epilogue=epilogue)]


def _split_fits(M: int, N: int, num_sms: int) -> list[GemmConfig]:
    """128-row split-K tiles as wide as ``N`` divided into ``t`` equal parts (``ceil(N / t)`` rounded up to 8, ``t`` of 2
    to 8), strictly between 128 and 256 and not 192, deepest ring, for grids whose 128 x 128 tiles cannot fill the
    SMs: offered split-K in 2-CTA clusters only (:func:`_candidates`), ranked by the model's work per tile. H200,
    random long-K grids: 944x352x34944 128 x 176 0.92 of cuBLAS against 0.79 (96 wide) and 0.82 (192);
    912x1360x18112 128 x 176 split in 2 0.94 against 0.74 (128 x 192, the same 64 tiles); 1504x656x38912 128 x 224
    split in 3 0.91 against 0.70."""
    if math.ceil(M / 128) * math.ceil(N / 128) >= num_sms:
        return []
    widths = sorted({_ceil8(math.ceil(N / t)) for t in range(2, 9)} - {192})
    return [_split_tile(w, num_sms) for w in widths if 128 < w < 256]


def _split_tile(bn: int, num_sms: int) -> GemmConfig:
    """The cooperative 128 x ``bn`` tile with the deepest ring (up to 7 stages) that fits shared memory: what the
    split-only tiles are built from (once per width and SM count)."""
    return _deepest(num_sms, 7, bn=bn, consumers=2)


@functools.lru_cache(maxsize=None)
def _deepest(num_sms: int, most: int, **fields) -> GemmConfig:
    """The configuration of ``fields`` with the deepest ring (3 to ``most`` stages) that fits shared memory, once per
    SM count and fields."""
    return _rings(num_sms, range(3, most + 1), **fields)[-1]


def _ceil8(n: int) -> int:
    return -(-n // 8) * 8


def _rings(num_sms: int, stages, **fields) -> list[GemmConfig]:
    """The valid configurations of ``fields`` over ring depths ``stages``, keeping the 3-stage one and the deepest:
    the model prices only rings of 3 stages or fewer, so every depth between has the deepest's time and loses the
    tie to it (:func:`_rank`). Keeps a choice among the tiniest grids' candidates well under 50 ms."""
    out = []
    for n in stages:
        c = GemmConfig(stages=n, num_sms=num_sms, **fields)
        try:
            c.validate()
        except ValueError:
            continue
        out.append(c)
    return [c for c in out if c.stages <= 3 or c is out[-1]]


def _buildable(num_sms: int) -> list[GemmConfig]:
    """The configurations that build at all (shape-independent), once per SM count."""
    if num_sms in _BUILDABLE:
        return _BUILDABLE[num_sms]
    out = _BUILDABLE[num_sms] = []
    for schedule, tile_m, consumers in (("cooperative", 0, 2), ("cooperative", 0, 1),
                                        ("pingpong", 128, 2), ("pingpong", 64, 2)):
        for bn in STANDARD_WIDTHS:
            for epilogue in ("direct", "tma", "staged"):
                if epilogue == "staged" and schedule == "pingpong":  # measured at half the cooperative's speed
                    continue
                out += _rings(num_sms, range(3, 8), bn=bn, consumers=consumers, schedule=schedule,
                              epilogue=epilogue, tile_m=tile_m)
    return out


@dataclass
class GemmChoice:
    """What :func:`explain` returns: the ranked candidates and the winner."""

    shape: tuple
    predictions: list            # Prediction, fastest first
    source: str                  # "tuned table (measured)" or "model"
    winner: GemmConfig
    notes: list = field(default_factory=list)
    level: float = 1.0           # expected time / ranking time, alike for every candidate (see explain)
    measured_in: str = "the shipped tuned table, measured on an NVIDIA H200"  # where a measured winner comes from

    @property
    def why(self) -> str:
        p = next((p for p in self.predictions if p.config == self.winner), None)
        if self.source.startswith("tuned table"):
            hidden = _unnamed(self.winner)
            also = (f" ({hidden}, which its name does not carry: build from this GemmConfig, not from its name)"
                    if hidden else "")
            return f"{self.winner.name}{also}: measured for exactly this shape ({self.measured_in})"
        if p is None:
            return self.winner.name
        runner = next((q for q in self.predictions if q.config.name != p.config.name), None)
        gap = ""
        if runner is not None and runner.time_s >= p.time_s:
            gap = f", {runner.time_s / p.time_s - 1:.1%} ahead of {runner.config.name}"
        elif runner is not None:  # _ordered put the winner first: the runner needs a margin it does not have
            rule = (f"a swap_ab configuration wins only by {SWAP_MARGIN:.0%} or more" if runner.config.swap_ab
                    and not p.config.swap_ab else f"a split_tail configuration of another tile wins only by "
                    f"{TAIL_MARGIN:.0%} or more")
            gap = f", {1 - runner.time_s / p.time_s:.1%} behind {runner.config.name} ({rule})"
        split = (f" ({p.tiles - p.split_tiles} whole, the last wave's {p.split_tiles} in {p.split_k} K slices: "
                 f"{p.items} items)" if p.split_tiles else f" x {p.split_k} K slices = {p.items} items"
                 if p.split_k > 1 else "")
        fix = f", split-K fix-up {p.fixup_s * 1e6:.1f} us" if p.split_k > 1 else ""
        corr = f"; measured neighbours {p.correction.describe()}" if p.correction is not None else ""
        return (f"{p.config.name}: {p.tiles} tiles{split} on {p.ctas} CTAs = {p.waves} wave(s), last wave "
                f"{p.tail_idle:.0%} idle; mainloop {p.mainloop_s * 1e6:.1f} us ({p.bound}-bound), "
                f"epilogue {p.epilogue_s * 1e6:.1f} us exposed{fix}; predicted {p.expected * 1e6:.1f} us, "
                f"{p.expected_tflops:.0f} TFLOP/s{gap}{corr}")

    def labels(self, top: int = 10) -> list:
        """The first ``top`` candidates' names as :meth:`table` shows them: a tuned table's entry may differ from the
        candidate of the same name in a field the name does not carry (8192^3's l2_group=16), shown beside it."""
        sms = SHIPPED_SMS if self.source.startswith("tuned table") else self.winner.num_sms
        return [f"{p.config.name} [{_unnamed(p.config, sms)}]" if _unnamed(p.config, sms) else p.config.name
                for p in self.predictions[:top]]

    def table(self, top: int = 10) -> str:
        """The candidates, fastest first: ``rank us`` is the time they are ranked by (the model's, times its kind's
        ``measured x``), ``pred. us`` and ``TFLOP/s`` the expected time (``rank us`` x :attr:`level`)."""
        names = self.labels(top)
        w = max([34] + [len(n) for n in names])
        head = (f"{'config':<{w}} {'tiles':>8} {'waves':>5} {'tail idle':>9} {'rank us':>9} {'measured x':>10} "
                f"{'pred. us':>9} {'TFLOP/s':>8}  bound")
        rows = [head] + [f"{name:<{w}} {_tiles(p):>8} {p.waves:>5} {p.tail_idle:>9.0%} "
                         f"{p.time_s * 1e6:>9.1f} {_factor(p):>10} {p.expected * 1e6:>9.1f} {p.expected_tflops:>8.0f}  "
                         f"{p.bound}"
                         for name, p in zip(names, self.predictions[:top])]
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {"shape": list(self.shape), "source": self.source, "winner": self.winner.name,
                "winner_config": self.winner.to_dict(), "why": self.why, "level": self.level,
                "candidates": [p.to_dict() for p in self.predictions], "notes": list(self.notes)}

    def __str__(self) -> str:
        M, N, K = self.shape
        notes = "".join(f"\nnote: {n}" for n in self.notes)
        return f"GEMM {M}x{N}x{K}: {self.source} -> {self.why}\n{self.table()}{notes}"


def _unnamed(config: GemmConfig, num_sms: int = SHIPPED_SMS) -> str:
    """The fields of ``config`` its name does not carry (``"l2_group=16"``: where it differs from what
    :func:`~txlab.examples.gemm_config.parse_config` makes of its name; ``num_sms`` only where it is not the
    choice's ``num_sms``), or ``""``."""
    from dataclasses import fields

    from txlab.examples.gemm_config import parse_config

    try:
        named = parse_config(config.name, num_sms=num_sms)
    except ValueError:
        return ""
    return ", ".join(f"{f.name}={getattr(config, f.name)!r}" for f in fields(GemmConfig)
                     if getattr(config, f.name) != getattr(named, f.name))


def _factor(p: Prediction) -> str:
    """The measured neighbours' correction in :meth:`GemmChoice.table` (``-``: none)."""
    return f"{p.correction.factor:.3f}" if p.correction is not None else "-"


def _tiles(p: Prediction) -> str:
    if p.split_tiles:
        return f"{p.tiles - p.split_tiles}+{p.split_tiles}x{p.split_k}"
    return f"{p.tiles}x{p.split_k}" if p.split_k > 1 else str(p.tiles)


def explain(M: int, N: int, K: int, *, num_sms: int = 132, measured: GemmConfig | None = None,
            neighbours=True) -> GemmChoice:
    """The candidates for ``M x N x K`` ranked by predicted time and the winner: ``measured`` (the
    tuned table's entry for this exact shape, as ``hopper_gemm.explain`` passes it) wins over the
    model. ``neighbours``: correct the model's times by what was measured near the shape
    (:mod:`txlab.examples.gemm_neighbours`; True: the shipped measurements, which are of 132 SMs, so only there;
    False: the model alone; or a ``Neighbours`` of your own)."""
    M, N, K = check_sizes(M, N, K)
    preds, level, peak = _predictions_level(M, N, K, num_sms, neighbours)
    preds = _ordered(preds)
    notes = []
    if unaligned(K):
        phase, k64, k16 = row_phase(K), K + (-K) % 64, K + (-K) % 16
        where = ("on 32-byte sectors: a cluster's multicast pays less there (at 35 random shapes measured both ways on "
                 "the H200, one CTA per tile won at 16, a cluster at 10)"
                 if phase == "sector" else
                 "nor on 32-byte sectors: 2-CTA clusters that multicast one operand's tile win most of it back "
                 "(1000x3000x5000 on the H200: 0.66 of cuBLAS with one CTA per tile, 0.92 with a 2x1 cluster), and "
                 "192-row tiles in such clusters (cuBLAS's own choice there) and 256-row tiles are offered too")
        sixteen = ("" if phase == "sector" else
                   f"; K={k16} (a multiple of 16) already puts the rows on sectors, where the fastest configuration "
                   "measured at random shapes ran at a median 0.99 of cuBLAS, against 0.95 off them")
        notes.append(f"K={K} is not a multiple of 64: the rows of A and B ({2 * K} bytes apart) start off 128-byte "
                     f"lines, {where}; every 128-byte row of a TMA box spans two L2 lines, and the model prices the "
                     f"loads at {UNALIGNED_FEED[phase]}x. Padding A and B to K={k64} in each call measured slower "
                     f"(0.48 at 1000x3000x5000), but operands padded once with zero columns and reused run aligned "
                     f"(1000x3000x5056: 1.02){sixteen}. Ping-pong configurations are not offered at an unaligned K (each lost "
                     "to the cooperative one at its shape)")
    if unaligned(K) and _narrow_fills(M, N, K, num_sms):
        notes.append("64-row tiles as wide as lets the grid fill the SMs in one wave join the candidates (alone, in 2-CTA "
                     "clusters, and in 2x2 clusters no more than the GPU holds at once), as cuBLAS runs small grids at an "
                     "unaligned K: at 68 random such shapes on the H200 where the pick moved to them, 46 ran faster and 14 "
                     "slower (geometric mean +5 %)")
    if math.ceil(M / 64) * math.ceil(N / 128) * SPLITS[-1] < num_sms:
        notes.append(f"{M}x{N}: even 64 x 128 tiles split {SPLITS[-1]} ways leave SMs idle, so 64 x 64 tiles with rings "
                     "up to 12 stages join the split-K candidates")
    if not preds:
        from txlab.errors import InputError

        raise InputError(f"no configuration of the kernel computes {M}x{N}x{K} (its K must be a multiple of 8, TMA's "
                         "16-byte row pitch): hopper_gemm.explain and build take any K (they pad it)", param="K")
    if measured is not None:  # the winner first, as the model's own winner is
        mine = next((p for p in preds if p.config == measured), None)
        if mine is not None:
            preds.remove(mine)
        preds.insert(0, mine or predict(M, N, K, measured))
        factor = _expect(preds, level, peak, notes)
        return GemmChoice((M, N, K), preds, "tuned table (measured)", measured, notes, factor)
    best = preds[0]
    tall = best.config.tile_m == 256
    if tall:  # why 256 rows, and why this way round: the reason candidates() offered them for
        side = f"N={N}" if best.config.swap_ab else f"M={M}"
        notes.append(f"256-row tiles (two consumers of 128 rows each) along the longer side, {side}"
                     f"{' (so the kernel tiles C.T = B @ A.T and stores C transposed)' if best.config.swap_ab else ''}: "
                     f"a 256 x {best.config.bn} tile loads 256 + {best.config.bn} rows of each k-block where two 128-row "
                     f"tiles load 256 + {2 * best.config.bn}, and at this K the operands' feed, not the tensor cores, "
                     f"sets the pace. Offered where K's rows sit off the 32-byte sectors and K is over {TALL_MIN_K}: "
                     "beside the best pick without them at 29 such shapes on the H200, +0.6 % (geometric mean; 13 "
                     "faster, 12 slower), where at a shorter K (9 shapes) they lost 4.2 % and on sectors (9) 7.0 %")
    if best.config.bn not in FIXED_WIDTHS and not tall:
        std = min((p for p in preds if p.config.bn in STANDARD_WIDTHS), key=_rank, default=None)
        vs = (f" (the best of 128 / 192 / 256, {std.config.name}: {_tiles(std)} items, {std.waves} wave(s), "
              f"{std.time_s * 1e6:.1f} us predicted)" if std else "")
        epi = f"; its TMA epilogue stores 64 x {best.config.epi_width} pieces" if best.config.epilogue == "tma" else ""
        notes.append(f"tile width {best.config.bn}, sized to the grid: {_tiles(best)} items in {best.waves} wave(s) of "
                     f"{best.ctas} CTAs{vs}{epi}")
    if best.config.swap_ab and not tall:  # why C.T: the reason candidates() offered it for
        tiled = f"C.T = B @ A.T ({N}x{M}: {best.tiles} tiles of {best.config.bm}x{best.config.bn}) and stores C transposed"
        if N <= 64 < M:
            notes.append(f"swap_ab: N={N} is decode-sized, so the kernel tiles {tiled}: its {best.config.bm}-row tiles "
                         f"load B's {N} rows and stream A, as a decode-sized M's tiles stream B")
        elif _row_fill(M) <= SWAP_ROW_FILL and _row_fill(N) > _row_fill(M):
            notes.append(f"swap_ab: M={M} leaves its last 128-row tile {_row_fill(M):.0%} full, so the kernel tiles "
                         f"{tiled}")
        else:
            notes.append(f"swap_ab: the kernel tiles {tiled}; the model ranks it ahead of every tiling of C, though "
                         f"M={M} leaves its last 128-row tile {_row_fill(M):.0%} full")
    if best.bound == "HBM" and M <= best.config.bm:
        notes.append(f"M={M} fits one {best.config.bm}-row tile: A's TMA box is {best.config.a_rows(M)} rows, and each CTA "
                     f"streams its B tiles from HBM alone (about {SM_STREAM_BYTES_PER_S / 1e9:.0f} GB/s per SM), so the "
                     "model spreads B over as many CTAs as it can")
    ws = f"workspace {best.config.workspace_elems(M, N) * 4 / 2**20:.1f} MiB"
    if best.split_tiles:
        notes.append(f"{best.tiles} output tiles for {num_sms} SMs: {best.tiles - best.split_tiles} run whole in full "
                     f"waves and the last wave's {best.split_tiles} are split into {best.split_k} K slices "
                     f"({best.split_tiles * best.split_k} items, {ws}) rather than leave "
                     f"{num_sms - best.split_tiles} SMs idle")
    elif best.split_k > 1:
        notes.append(f"{best.tiles} output tiles for {num_sms} SMs: split-K into {best.split_k} K slices, "
                     f"{best.items} work items ({ws})")
        if best.items > best.ctas:
            notes.append(f"{best.items} items on {best.ctas} CTAs: handed out K slice by K slice (split_order='k'), so "
                         "a wave reads one or two slices of A and B")
    elif best.tiles < num_sms:
        idle = f"{num_sms - best.ctas} SMs idle" if best.ctas > num_sms // 2 else "most SMs idle"
        notes.append(f"{best.tiles} output tiles for {num_sms} SMs: {idle}, and split-K does not win here")
    factor = _expect(preds, level, peak, notes)
    return GemmChoice((M, N, K), preds, "model", preds[0].config, notes, factor)


def choose(M: int, N: int, K: int, *, num_sms: int = 132, neighbours=True) -> GemmConfig:
    """The configuration with the least predicted time for ``M x N x K`` (the model, its times corrected by what
    was measured nearby unless ``neighbours`` is False: see :func:`explain`)."""
    preds = _ordered(_predictions(M, N, K, num_sms, neighbours))
    return preds[0].config if preds else GemmConfig()


@functools.lru_cache(maxsize=1)
def source_fingerprint() -> str:
    """SHA-256 of the model's source (this module and gemm_config): the shipped measurements carry the model's time for
    each row (:mod:`txlab.examples.gemm_neighbours`), trusted only while this matches what they were written with."""
    import hashlib
    import sys
    from pathlib import Path

    h = hashlib.sha256()
    for path in (__file__, sys.modules[GemmConfig.__module__].__file__):
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def measured_neighbours():
    """The shipped measurements' ``gemm_neighbours.Neighbours`` for this model (read and verified once per process):
    what :func:`explain` and :func:`choose` correct by where ``neighbours`` is True."""
    return shipped(predict, source_fingerprint())


def _predictions(M: int, N: int, K: int, num_sms: int, neighbours) -> list:
    """Every candidate's :class:`Prediction`, each time multiplied by its measured neighbours' correction
    (:mod:`txlab.examples.gemm_neighbours`) where ``neighbours`` gives one."""
    return _predictions_level(M, N, K, num_sms, neighbours)[0]


def _predictions_level(M: int, N: int, K: int, num_sms: int, neighbours) -> tuple:
    """``(predictions, level, peak)``: :func:`_predictions`, the neighbours' ``Level`` at the shape (None: no
    measurement near it) and the fastest rate they measured in flop/s (0: none)."""
    configs = candidates(M, N, K, num_sms)
    preds = [predict(M, N, K, c) for c in configs]
    if not neighbours:
        return preds, None, 0.0
    # decode-sized: the model alone (gemm_neighbours.DECODE_ROWS), and no cap: nothing measured is read for them,
    # and their HBM-bound rates are far below any GEMM measured
    if not corrects(M, N):
        return preds, None, 0.0
    if neighbours is True:
        if num_sms != SHIPPED_SMS:  # the shipped measurements are of an H200's 132 SMs
            return preds, None, 0.0
        neighbours = measured_neighbours()
    corrections, level = neighbours.fit(M, N, K, configs)
    for p, corr in zip(preds, corrections):  # each Prediction is fresh: amend it
        if corr.factor != 1.0:
            p.time_s, p.correction = p.time_s * corr.factor, corr
    return preds, level, neighbours.peak_flops


def _expect(preds: list, level, peak: float, notes: list) -> float:
    """Set every prediction's ``expected_s`` (its time x one factor for the shape: the measured neighbours' level,
    raised where the fastest would beat the fastest rate ever measured, ``peak``) and note why; returns the factor."""
    factor = level.factor if level is not None else 1.0
    fastest = min(preds, key=lambda p: p.time_s)
    capped = bool(peak) and fastest.flops / (fastest.time_s * factor) > peak
    if level is not None and not capped:
        notes.append(f"expected times {level.describe()}; the ranking is the model's (times each kind's measured "
                     "factor), and this level scales every candidate alike")
    if capped:
        factor = fastest.flops / (fastest.time_s * peak)
        notes.append(f"expected times x{factor:.2f}: the model's fastest candidate would run at "
                     f"{fastest.flops / (fastest.time_s * (level.factor if level else 1.0)) / 1e12:.0f} TFLOP/s"
                     f"{' with the level of the shapes nearby' if level else ''}, faster than any GEMM measured on "
                     f"the H200 ({peak / 1e12:.0f} TFLOP/s), so every candidate is slowed alike to at most that")
    for p in preds:
        p.expected_s = p.time_s * factor
    return factor


def _ordered(preds: list) -> list:
    """``preds`` fastest first (:func:`_rank`), except for the winner: a ``swap_ab`` one must beat the best unswapped
    prediction by :data:`SWAP_MARGIN` (the same tiles either way tie, and C's transposed stores are the less measured
    path), and a ``split_tail`` one must beat what wins without split_tail by :data:`TAIL_MARGIN` where that is
    another tile (by any margin where it is the same tile unsplit)."""
    preds = sorted(preds, key=_rank)
    whole = _swap_ordered([p for p in preds if not p.config.split_tail])
    tails = _swap_ordered([p for p in preds if p.config.split_tail])
    winner = whole[0] if whole else None
    if tails:
        lead = tails[0]
        margin = 1.0 if winner is None or _tile(lead) == _tile(winner) else 1 - TAIL_MARGIN
        if winner is None or lead.time_s < winner.time_s * margin:
            winner = lead
    if winner is not None:
        preds.remove(winner)
        preds.insert(0, winner)
    return preds


def _swap_ordered(preds: list) -> list:
    """``preds`` (fastest first) with the best unswapped one first unless a ``swap_ab`` one beats it by
    :data:`SWAP_MARGIN`."""
    preds = list(preds)
    if preds and preds[0].config.swap_ab:
        plain = next((p for p in preds if not p.config.swap_ab), None)
        if plain is not None and plain.time_s <= preds[0].time_s * (1 + SWAP_MARGIN):
            preds.remove(plain)
            preds.insert(0, plain)
    return preds


def _tile(p: Prediction) -> tuple:
    return p.config.bm, p.config.bn, p.config.swap_ab


def _rank(p: Prediction):
    """Fastest first; between equal predictions the deeper ring (the model prices only rings of 3
    or fewer stages; the sweeps' pingpong winners ran 6-7)."""
    return (round(p.time_s, 12), -p.config.stages)


# ---- calibration --------------------------------------------------------------------------------
def measured_records(paths) -> list[tuple]:
    """``[(shape, GemmConfig, seconds)]`` of every measured candidate in ``txlab.tune`` sweep
    results written by ``scripts/tune_h200.py`` (``benchmarks/results/tune_*.json``)."""
    import json
    from pathlib import Path

    fields = set(GemmConfig.__dataclass_fields__)
    out = []
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for g in doc.get("gemm") or []:
            for r in (g.get("sweep") or {}).get("rows", []):
                if r.get("status") == "measured" and r.get("time_ms"):
                    cfg = GemmConfig(**{k: v for k, v in r["config"].items() if k in fields})
                    out.append((tuple(g["shape"]), cfg, r["time_ms"] * 1e-3))
    return out


def calibrate(records, feeds=None) -> dict:
    """Fit :data:`CALIBRATION`'s coefficients to measured ``records`` (see :func:`measured_records`):
    non-negative least squares on relative error, the shared-memory feed rate by a grid search."""
    import numpy as np

    y = np.array([t for _, _, t in records])
    w = 1 / y
    best = None
    for feed in (feeds if feeds is not None else np.geomspace(5e10, 3e12, 50)):
        X = np.array([_features(*s, c, feed)[0] for s, c, _ in records])
        A = X * w[:, None]
        scale = A.max(axis=0)
        scale[scale == 0] = 1
        x = _nnls(A / scale, y * w) / scale
        err = float(np.mean((X @ x / y - 1) ** 2))
        if best is None or err < best[0]:
            best = (err, feed, x)
    _, feed, x = best
    cal = {"smem_feed_bytes_per_s": float(feed), **{k: float(v) for k, v in zip(FEATURES, x)},
           "fitted_on": f"{len(records)} measured candidates"}
    return cal


def _nnls(A, b, iters: int = 5000):
    """Non-negative least squares by projected gradient (numpy only: no SciPy dependency for one
    small fit)."""
    import numpy as np

    x = np.maximum(np.linalg.lstsq(A, b, rcond=None)[0], 0)
    step = 1 / np.linalg.norm(A, 2) ** 2
    for _ in range(iters):
        x = np.maximum(x - step * (A.T @ (A @ x - b)), 0)
    return x
