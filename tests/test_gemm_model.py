"""The Hopper GEMM's configuration choice for shapes nobody measured (txlab.examples.gemm_model):
calibrated on the H200 sweeps in benchmarks/results, shown by hopper_gemm.explain."""

import functools
import glob
from pathlib import Path

import pytest

from txlab.display import html_of
from txlab.examples import gemm_model as gm
from txlab.examples import hopper_gemm as hg
from txlab.examples.gemm_config import GemmConfig

RESULTS = sorted(glob.glob(str(Path(__file__).parent.parent / "benchmarks" / "results" / "tune_2026-12-01_*.json")))


@pytest.fixture(scope="module")
def records():
    recs = gm.measured_records(RESULTS)
    assert len(recs) >= 200 and len({s for s, _, _ in recs}) == 7
    return recs


def test_shipped_calibration_is_the_fit_of_the_measurements(records):
    cal = gm.calibrate(records)
    for key in gm.FEATURES + ("smem_feed_bytes_per_s",):
        assert cal[key] == pytest.approx(gm.CALIBRATION[key], rel=0.05, abs=1e-12), key


def test_pick_is_near_the_measured_best_on_every_sweep(records):
    """For each measured shape, the candidate the model ranks first (among those measured) runs
    within 3 % of the fastest measured on 6 of 7 shapes and within 12 % on all."""
    ratios = {}
    for shape in {s for s, _, _ in records}:
        rows = [(c, t) for s, c, t in records if s == shape]
        best = min(t for _, t in rows)
        pick = min(rows, key=lambda r: gm.predict(*shape, r[0]).time_s)
        ratios[shape] = best / pick[1]
    assert sum(r >= 0.97 for r in ratios.values()) >= 6, ratios
    assert min(ratios.values()) >= 0.88, ratios


def test_measured_shapes_keep_their_table_entry():
    for e in hg.load_tuned_table()["entries"]:
        shape = tuple(e["shape"])
        choice = hg.explain(*shape)
        assert choice.source.startswith("tuned table") and choice.winner == hg.GemmConfig(**e["config"])
        assert hg.tuned_config(*shape) == choice.winner
        # the winner heads the ranking and the table, as the model's own winner does
        assert choice.predictions[0].config == choice.winner
        assert choice.table().splitlines()[1].startswith(choice.winner.name)
        assert choice.to_dict()["winner_config"] == choice.winner.to_dict()
        if choice.winner != hg.parse_config(choice.winner.name):  # a field its name does not carry
            assert "which its name does not carry" in choice.why
    # 8192^3's entry runs l2_group=16 and 4096^3's num_sms=128: the table tells them from the candidates of their name
    for shape, field in (((8192, 8192, 8192), "l2_group=16"), ((4096, 4096, 4096), "num_sms=128")):
        choice = hg.explain(*shape)
        assert f"[{field}]" in choice.table().splitlines()[1] and field in choice.why
        assert f"[{field}]" in html_of(choice)
    assert "[" not in hg.explain(4096, 4096, 4096, num_sms=114).table()  # every candidate's num_sms is the query's


def test_the_choice_html_header_tooltips_parse_whole():
    """The ranking's column tooltips are whole attributes (an apostrophe in a single-quoted title ended it early)."""
    from html.parser import HTMLParser

    titles = []

    class Headers(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "th" and attrs:
                titles.append(attrs)

    Headers().feed(html_of(hg.explain(512, 512, 16384)))
    assert [[name for name, _ in attrs] for attrs in titles] == [["title"], ["title"]]
    assert titles[0][0][1].startswith("the model's time times its kind's measured factor")


def test_a_winner_within_a_margin_is_not_called_ahead():
    """``_ordered`` keeps an unswapped winner unless a swap_ab candidate beats it by SWAP_MARGIN: its why then says
    how far behind it is and why it still wins, never a negative lead."""
    choice = hg.explain(85, 3, 44863)
    assert not choice.winner.swap_ab and choice.predictions[1].config.swap_ab
    assert choice.predictions[1].time_s < choice.predictions[0].time_s
    assert "% ahead of" not in choice.why and "-" not in choice.why.split("TFLOP/s")[-1]
    assert "behind 64x64x64_s12_c1_sk32p_swap (a swap_ab configuration wins only by 3% or more)" in choice.why


@pytest.mark.parametrize(
    "shape",
    [
        (6144, 6144, 6144),
        (4096, 14336, 4096),
        (3072, 3072, 12288),
        (1000, 3000, 5032),  # K rows not 128-byte aligned: a cluster
        (640, 640, 16384),  # few tiles: split-K
        (4095, 8191, 4096),
        (3000, 5001, 4096),  # N % 8 != 0: the staged epilogue
    ],
)
def test_unseen_shapes_get_a_valid_model_choice(shape):
    choice = hg.explain(*shape)
    assert choice.source == "model"
    cfg = hg.tuned_config(*shape)
    assert cfg == choice.winner
    cfg.validate()
    cfg.check_shape(*shape)
    best = choice.predictions[0]
    # only a swapped or split-tail prediction may beat the winner, by less than its margin (gemm_model._ordered)
    assert best.config == cfg and all(
        p.time_s >= best.time_s
        or (p.config.swap_ab and p.time_s * (1 + gm.SWAP_MARGIN) >= best.time_s)
        or (p.config.split_tail and p.time_s >= best.time_s * (1 - gm.TAIL_MARGIN))
        for p in choice.predictions
    )
    assert best.waves == -(-best.items // best.ctas) and 0 <= best.tail_idle < 1
    assert cfg.name in choice.why and "wave" in choice.why
    assert cfg.name in choice.table() and "<table>" in html_of(choice)
    if shape[1] % 8:  # TMA cannot store rows of this pitch
        assert cfg.epilogue != "tma"
    d = choice.to_dict()
    assert d["winner"] == cfg.name and d["candidates"][0]["config"] == cfg.name


@pytest.mark.parametrize("shape", [(512, 512, 16384), (768, 1024, 16384), (128, 128, 8192), (256, 256, 65536)])
def test_small_grids_get_split_k(shape):
    """Too few tiles for the SMs: the model splits K so the work items fill them, says so, and the
    config it names builds for the shape (the model's own choice: some of these shapes are in the table)."""
    choice = gm.explain(*shape)
    best = choice.predictions[0]
    assert best.split_k > 1 and best.tiles < 100 and best.items >= 2 * best.tiles, choice.table()
    assert best.fixup_s > 0 and "split-K" in " ".join(choice.notes) and "MiB" in " ".join(choice.notes)
    assert f"{best.tiles}x{best.split_k}" in choice.table() and "K slices" in choice.why
    cfg = gm.choose(*shape)
    assert cfg == best.config and cfg.split_k == best.split_k
    cfg.validate()
    cfg.check_shape(*shape)


@pytest.mark.parametrize("shape", [(6144, 6144, 6144), (4096, 14336, 4096), (16384, 8192, 1024), (2048, 4096, 4096)])
def test_full_grids_are_not_split(shape):
    """Split-K costs partial stores and a fix-up: shapes whose tiles fill the SMs do not get it
    (past two waves of tiles only split_tail forms, whose whole tiles fill the waves, are priced)."""
    assert gm.choose(*shape).split_k == 1
    if gm.predict(*shape, gm.GemmConfig()).tiles >= 2 * 132:
        assert all(p.split_k == 1 or p.config.split_tail for p in gm.explain(*shape).predictions)


def test_split_k_costs_are_the_fit_of_the_h200_run():
    """SPLIT_K_COST is calibrate_split_k of the split-K rows measured on the H200 (scripts/gemm_h200.py's
    run of 01:21 and scripts/gemm_explore_h200.py's of 03:55)."""
    res = Path(__file__).parent.parent / "benchmarks" / "results"
    recs = gm.split_k_records(res / "gemm_shapes_2026-12-02_0121.json")
    recs += gm.split_k_records(res / "gemm_explore_2026-12-02_0355.json")
    assert len(recs) >= 38 and all(c.split_k > 1 for _, c, _ in recs)
    assert any(c.fixup == "parallel" for _, c, _ in recs)
    cal = gm.calibrate_split_k(recs)
    for key in gm.SPLIT_FEATURES:
        assert cal[key] == pytest.approx(gm.SPLIT_K_COST[key], rel=0.05, abs=1e-9), key


def test_measured_split_k_wins_are_table_entries():
    """Where a split-K run measured best on the H200 it is cached in the tuned table (exact shape)."""
    for shape in ((256, 4096, 8192), (1024, 1024, 32768)):
        choice = hg.explain(*shape)
        assert choice.source.startswith("tuned table") and choice.winner.split_k == 2


def test_unaligned_k_is_named_in_the_notes():
    """K % 64 != 0 (rows not 128-byte aligned) measured ~1.5x slower on the H200: explain says so and
    how to avoid it; aligned K says nothing."""
    notes = " ".join(hg.explain(1000, 3000, 5000).notes)
    assert "not a multiple of 64" in notes and "clusters" in notes and "K=5056" in notes
    assert not any("multiple of 64" in n for n in hg.explain(1000, 3000, 5120).notes)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="positive"):
        hg.explain(0, 128, 128)
    with pytest.raises(ValueError, match="K must be a multiple of 8"):
        gm.explain(128, 128, 100)  # the model's own; hg.explain explains build()'s padded K (test_hopper_gemm)


def test_unaligned_k_is_priced_by_where_rows_start():
    """Rows on 32-byte sectors but not 128-byte lines (K % 16 == 0, K % 64 != 0 in bf16) and rows off the sectors
    (K an odd multiple of 8) measured differently on the H200 (r18d/r18e, 2026-12-04): off the sectors a 2-CTA cluster
    pays most of the misalignment back; on them one CTA per tile ran within 1 % of the best cluster or faster at most
    shapes. The model prices the two apart, and explain says which it is."""
    from txlab.examples.gemm_config import row_phase

    assert [row_phase(k) for k in (4096, 4000, 4104, 1200, 5000)] == ["aligned", "sector", "odd", "sector", "odd"]
    assert row_phase(4000, elem_bytes=1) == "sector" and row_phase(4008, elem_bytes=1) == "odd"
    cfg, clustered = gm.GemmConfig(epilogue="tma"), gm.GemmConfig(epilogue="tma", cluster_m=2)

    def clustered_over_one(K):
        return gm.predict(8192, 8192, K, clustered).time_s / gm.predict(8192, 8192, K, cfg).time_s

    assert clustered_over_one(4096) >= 1
    assert clustered_over_one(4000) > 0.9  # multicast barely pays where the rows start on sectors
    assert clustered_over_one(4104) < 0.85
    # measured side by side (r18d): one CTA per tile won at these sector shapes, and the model alone says so now
    for shape in ((9808, 368, 17776), (1408, 2000, 1312), (2168, 2776, 1200), (3704, 1664, 1872), (336, 9648, 1744)):
        assert gm.choose(*shape, neighbours=False).cluster_size == 1, shape
    assert "32-byte sectors" in " ".join(gm.explain(4096, 4096, 4000).notes)


def test_odd_k_offers_192_row_tiles_in_clusters():
    """Rows off the 32-byte sectors (K an odd multiple of 8) load at the rate of their requests; 192-row tiles in
    2-CTA clusters (cuBLAS's own choice there) won on the H200 (r19c, 2026-12-04: at 22 random such shapes where the
    model moved to them, 17 ran faster, 4 slower; 3344x1176x7384 0.75 -> 0.96 of cuBLAS, 1312x9504x3016 0.87 -> 1.05).
    The model offers them there and nowhere else, and picks them at those shapes without the measurements."""

    def big(shape):
        return [c.name for c in gm.candidates(*shape) if c.consumers == 3]

    assert {"192x176x64_s4_c3_tma_cl1x2", "192x192x64_s3_c3_tma_cl2x1"} <= set(big((4472, 2856, 3432)))
    assert all("_cl" in n and "_tma" in n for n in big((4472, 2856, 3432)))
    assert big((4472, 2856, 3456)) == [] and big((4472, 2856, 3440)) == []  # aligned, sector
    for shape in ((3344, 1176, 7384), (1312, 9504, 3016), (7240, 1032, 6520)):
        assert gm.choose(*shape, neighbours=False).consumers == 3, shape


def test_tall_tiles_where_an_operand_feed_sets_the_pace():
    """256-row tiles (two consumers of 128 rows) load 256 + bn rows per k-block for 256 x bn outputs. Measured on the
    H200 (r25e, r26a, 2026-12-06) against the best pick without them: even at K off the 32-byte sectors over 16
    k-blocks (29 shapes, +0.6 %), slower at a shorter odd K (9 shapes, -4.2 %) and at sector K (9 shapes, -7.0 %).
    The model offers them exactly there, rows along the longer side, every one valid for the shape, at most 192
    columns, the TMA epilogue."""

    def tall(shape):
        return [c for c in gm.candidates(*shape) if c.tile_m == 256]

    for shape in ((8784, 464, 17096), (568, 9312, 4728), (4904, 11664, 20232), (3131, 3304, 14248)):
        cs = tall(shape)
        assert cs, shape
        for c in cs:
            c.validate()
            c.check_shape(*shape)
            assert c.consumers == 2 and c.bn <= 192 and c.epilogue == "tma"
            assert c.swap_ab == (shape[1] > shape[0]), (shape, c.name)
        assert {c.cluster_size for c in cs} == {1, 2}
    assert tall((8784, 464, 17152)) == []  # K on the 128-byte lines
    assert tall((3208, 1440, 3120)) == [] and tall((10704, 840, 416)) == []  # sector K (H100: +13 %; H200: -7 %)
    assert tall((5343, 5160, 648)) == [] and tall((4000, 3000, 1016)) == []  # odd K of at most 16 k-blocks
    assert tall((4000, 3000, 1032)) != []  # odd K of 17 k-blocks
    assert tall((512, 900, 4728)) == []  # the longer side under TALL_MIN_SIDE
    # where the feed of 128-row tiles sets the pace, the model without the measurements takes them
    for shape in ((8784, 464, 17096), (568, 9312, 4728)):
        assert gm.choose(*shape, neighbours=False).tile_m == 256, shape
    # explain says why 256 rows and why that way round, in place of the 128-row tiles' width and swap notes
    notes = " ".join(gm.explain(568, 9312, 4728, neighbours=False).notes)
    assert "256-row tiles" in notes and "N=9312" in notes and "C.T = B @ A.T" in notes
    assert "sized to the grid" not in notes and "swap_ab:" not in notes


def test_unaligned_small_grids_offer_narrow_tiles_in_clusters():
    """Where 64-row tiles fill the SMs in one wave at an unaligned K, tiles as wide as fills them join the candidates,
    alone, in 2-CTA clusters and (as wide as fits the GPU's 30 4-CTA clusters at once) in 2x2 clusters: cuBLAS's own
    kernels there are such tiles in 4- and 8-CTA clusters. H200, r19h/r19i (2026-12-04): 1560x256x2424 0.81 -> 0.94 of
    cuBLAS in 2x2 clusters, 368x1136x1688 0.85 -> 0.94; at 68 random mid-sized shapes whose pick moved, 46 ran faster,
    14 slower. A 4-CTA cluster's feed is priced above a 2-CTA one's (CLUSTER4_FEED): measured, 2x2 ran only ~4 %
    faster than 2x1 at 1880x536x2728, not the ~20 % the feed term alone says."""
    from txlab.examples.gemm_config import parse_config

    names = {c.name for c in gm.candidates(1200, 856, 1752)}
    assert {"64x144x64_s8_c1_tma", "64x144x64_s8_c1_tma_cl2x1", "64x144x64_s8_c1_tma_cl2x2"} <= names
    assert not any(c.cluster_size == 4 for c in gm.candidates(1200, 856, 1792))  # aligned: none
    assert not any(c.cluster_size == 4 for c in gm.candidates(4096, 4096, 4104))  # more than a wave: none
    for shape in ((1560, 256, 2424), (368, 1136, 1688)):
        c = gm.choose(*shape, neighbours=False)
        assert (c.bm, c.cluster_size) == (64, 4), (shape, c.name)
    s = (1880, 536, 2728)
    ratio = (
        gm.predict(*s, parse_config("64x136x64_s9_c1_cl2x2")).time_s
        / gm.predict(*s, parse_config("64x136x64_s9_c1_cl2x1")).time_s
    )
    assert 0.88 < ratio < 1.0, ratio


def test_unaligned_k_takes_a_multicasting_cluster():
    """Rows not 128-byte aligned are request-bound (H200: 0.66 of cuBLAS alone, 0.92 with a 2x1 cluster):
    the model picks a 2-CTA cluster there, and never at an aligned K (where the sweeps found none faster)."""
    for shape in ((1000, 3000, 5032), (2000, 7000, 3000), (4096, 4096, 4104)):
        assert gm.choose(*shape).cluster_size == 2, shape
    for shape in ((1000, 3000, 5056), (2048, 7000, 3072), (4096, 4096, 4096)):
        assert all(p.config.cluster_size == 1 for p in gm.explain(*shape).predictions), shape


def test_split_k_fixup_is_parallel_only_when_every_item_has_its_cta():
    """The parallel fix-up waits for a tile's items, so it is a candidate only where all items are resident
    at once; on one wave it wins (measured: 256x256x65536 0.74 -> 0.84, 512x512x16384 0.86 -> 0.92)."""
    for shape in ((640, 640, 16384), (128, 128, 131072), (384, 768, 32768)):
        best = gm.explain(*shape).predictions[0]
        assert best.split_k > 1 and best.config.fixup == "parallel" and best.items <= 132, (shape, best.config.name)
    for p in gm.explain(1024, 1024, 32768).predictions:
        if p.config.fixup == "parallel":
            assert p.items <= 132 and p.config.persistent


def test_small_grids_pair_their_split_k_items_in_clusters():
    """Split-K items of two 128 x 128 tiles that share an operand, in a 2-CTA cluster, multicast it: measured
    on the H200 at 256x256x65536 0.838 -> 0.918 and 512x512x16384 0.937 -> 0.973. The model takes it where the
    tiles pair up without a pad tile and the cluster's CTAs leave slack on the SMs; not for 128 x 256 tiles
    (768x1024x16384 0.913 alone, 0.877 and 0.882 in clusters); FP8 (not measured so) does not."""
    for shape in ((640, 640 + 128, 20480), (128, 128, 131072), (512, 512, 16384)):
        cfg = gm.choose(*shape)
        assert cfg.split_k > 1 and cfg.fixup == "parallel" and cfg.cluster_size == 2, (shape, cfg.name)
    wide = [p for p in gm.explain(768, 1024, 16384).predictions if p.config.bn == 256 and p.split_k == 5]
    alone = next(p for p in wide if p.config.cluster_size == 1 and p.config.fixup == "parallel")
    assert wide[0].config == alone.config
    par = gm.GemmConfig(bn=128, stages=6, split_k=13, fixup="parallel")
    par.check_shape(256, 640, 65536)  # 10 tiles x 13 = 130 CTAs: fits 132
    with pytest.raises(ValueError, match="holds 128 of them in clusters of 2"):
        gm.GemmConfig(bn=128, stages=6, split_k=13, fixup="parallel", cluster_m=2).check_shape(256, 640, 65536)


def test_narrow_split_tiles_in_clusters_either_way_round():
    """128 x 96 split-K tiles in 2-CTA clusters (cuBLAS's own tile at 768x1024x16384 and 4096x96x12288), split at
    least 4 ways, either way round. H200: 384x512x16384 0.98 of cuBLAS swapped (8 x 4 tiles of C.T x 8 slices)
    against 0.95; 256x768x8192 1.02 against 0.95; 1088x176x34112 0.99 against 0.92. Split 2 or 3 ways the wider
    tiles won most comparisons (544x720x29760: 0.77 against 1.00), so those are not offered; 768x1024x16384, which
    measured 0.99 split in 2 (swapped, 96 columns tiling M = 768 exactly), keeps it as a tuned-table entry."""
    cfg = gm.choose(384, 512, 16384)
    assert (cfg.bm, cfg.bn, cfg.split_k, cfg.fixup, cfg.cluster_size, cfg.swap_ab) == (128, 96, 8, "parallel", 2, True)
    assert cfg.kernel_shape(384, 512) == (512, 384) and cfg.ctas(384, 512) == 128
    assert not gm.choose(1088, 176, 34112).swap_ab and gm.choose(1088, 176, 34112).bn == 96
    narrow = [c for c in gm.candidates(384, 512, 16384) if c.bn in gm.SPLIT_WIDTHS]
    assert narrow and all(c.split_k >= gm.NARROW_MIN_SPLIT and c.fixup == "parallel" for c in narrow)
    assert all(c.cluster_size == 2 for c in narrow) and {c.swap_ab for c in narrow} == {True, False}
    assert not [c for c in gm.candidates(768, 1024, 16384) if c.bn in gm.SPLIT_WIDTHS]  # 2 slices fill the SMs
    assert hg.tuned_config(768, 1024, 16384).name == "128x96x64_s7_c2_cl2x1_sk2p_swap"  # measured
    # the cluster's share: the same tile and split, one CTA per item, is predicted slower by the fitted factor
    alone = gm.predict(384, 512, 16384, gm.GemmConfig(bn=96, stages=7, split_k=8, fixup="parallel", swap_ab=True))
    p = gm.predict(384, 512, 16384, cfg)
    assert p.mainloop_s == pytest.approx(alone.mainloop_s * gm.CLUSTER_SPLIT_NARROW)
    # swapped split-K pays no transposed-store premium (its fix-up writes C): the same time as unswapped C.T
    assert alone.time_s == pytest.approx(
        gm.predict(512, 384, 16384, gm.GemmConfig(bn=96, stages=7, split_k=8, fixup="parallel")).time_s
    )
    # full grids and decode-sized M get none
    assert not [c for c in gm.candidates(4096, 4096, 4096) if c.bn in gm.SPLIT_WIDTHS]
    assert not [c for c in gm.candidates(16, 8192, 8192) if c.bn in gm.SPLIT_WIDTHS and not c.swap_ab]


def test_split_tiles_as_wide_as_n_divided_evenly():
    """On long-K grids whose 128 x 128 tiles cannot fill the SMs, 128-row split tiles as wide as N (or, swapped, M)
    divided into 2 to 8 parts, in 2-CTA clusters. H200, random shapes (before -> after): 944x352x34944 128 x 176
    0.79 -> 0.92; 912x1360x18112 128 x 176 split in 2 0.70 -> 0.94; 1504x656x38912 128 x 136 split in 2
    0.71 -> 0.97; 784x1840x23232 128 x 200 of C.T 0.86 -> 1.04."""
    assert [c.bn for c in gm._split_fits(944, 352, 132)] == [176]  # 352 = 2 x 176
    assert gm._split_fits(4096, 4096, 132) == []  # a full grid: none
    assert 192 not in {c.bn for c in gm._split_fits(944, 384, 132)}  # 192 is a standard width already
    # (912x1360x18112, 1504x656x38912 and 784x1840x23232 took these tiles too until round 14's widths sized to the
    # grid, one CTA per item, displaced them: 0.94 -> 1.02, 0.96 -> 0.94 and 1.03 -> 0.98 on the H200, r14c)
    cfg = gm.choose(944, 352, 34944)
    assert (cfg.bn, cfg.split_k, cfg.swap_ab) == (176, 8, False) and cfg.cluster_size == 2, cfg.name
    assert cfg.fixup == "parallel"
    ranked = gm.explain(784, 1840, 23232).predictions  # 784 = 4 x 196 columns of C.T: still offered, in a cluster
    assert any(p.config.bn == 200 and p.config.swap_ab and p.config.cluster_size == 2 for p in ranked)
    # clusters gain for widths under 192 (CLUSTER_SPLIT), lose from 192 on (CLUSTER_SPLIT_WIDE)
    alone = gm.predict(944, 352, 34944, gm.GemmConfig(bn=176, stages=5, split_k=8, fixup="parallel"))
    pair = gm.predict(944, 352, 34944, gm.GemmConfig(bn=176, stages=5, split_k=8, fixup="parallel", cluster_m=2))
    assert pair.mainloop_s == pytest.approx(alone.mainloop_s * gm.CLUSTER_SPLIT)


def test_parallel_fixup_in_4_cta_clusters_leaves_each_gpc_its_slack():
    """32 clusters of 4 CTAs (128 of 132 SMs) hung on the H200 waiting for each other's items (256x256x65536,
    2x2 clusters, S = 32); 24 clusters (768x1024x16384, 128 x 128 tiles, S = 2) ran right."""
    cl = dict(bn=128, stages=6, fixup="parallel", cluster_m=2, cluster_n=2)
    with pytest.raises(ValueError, match="holds 116 of them in clusters of 4"):
        gm.GemmConfig(split_k=32, **cl).check_shape(256, 256, 65536)
    gm.GemmConfig(split_k=2, **cl).check_shape(768, 1024, 16384)
    gm.GemmConfig(split_k=29, **cl).check_shape(256, 256, 65536)  # 116 CTAs
    from txlab.examples import hopper_gemm_fp8 as f8

    assert f8.tuned_config(256, 256, 65536).cluster_size == 1


def test_unaligned_k_gets_no_pingpong_candidates():
    """Every ping-pong run at an unaligned K lost to the cooperative choice at its shape on the H200
    (8192x8192x1000: 0.87 vs 1.01 of cuBLAS), though the model ranked ping-pong first there: it is not offered."""
    for shape in ((8192, 8192, 1000), (1000, 3000, 5000), (16384, 8192, 520)):
        assert not [c for c in gm.candidates(*shape) if c.pingpong], shape
        assert not gm.choose(*shape).pingpong
    assert gm.choose(8192, 8192, 1000).name == "128x256x64_s4_c2_tma_cl2x1"
    assert "Ping-pong configurations are not offered" in gm.explain(8192, 8192, 1000).notes[0]
    assert any(c.pingpong for c in gm.candidates(8192, 8192, 1024))  # aligned: still a candidate (and the choice)
    assert gm.choose(8192, 8192, 1024).pingpong


def test_tiniest_grids_get_narrow_deep_split_k_tiles():
    """Where even 64 x 128 tiles split 32 ways cannot fill the SMs, 64 x 64 tiles with deep rings join the
    split-K candidates (128x128x131072: 0.95 of cuBLAS against 0.89 with 64 x 128 tiles); elsewhere they do not."""
    cfg = gm.choose(128, 128, 131072)
    assert (cfg.bn, cfg.split_k > 1, cfg.stages) == (64, True, 12), cfg.name
    assert any("64 x 64 tiles" in n for n in gm.explain(128, 128, 131072).notes)
    assert not any("64 x 64 tiles" in n for n in gm.explain(256, 256, 65536).notes)
    narrow = [c for c in gm.candidates(128, 128, 131072) if c.bn == 64]
    assert narrow and all(c.split_k > 1 for c in narrow)
    for shape in ((256, 256, 65536), (128, 8192, 8192), (65, 4096, 14336)):
        assert not [c for c in gm.candidates(*shape) if c.bn == 64], shape


def test_decode_sized_m_gets_64_column_tiles_split_or_not():
    """At M <= 64 (one 64-row tile) 64 x 64 tiles put twice the CTAs on B's stream, split or not (H200:
    16x8192x8192 0.98 of cuBLAS against 0.95 with 64 x 128 split in 2; 1x4096x4096 1.02 against 0.95); FP8 takes
    one-warpgroup 64-row tiles there too (16x4096x4096: 0.93 against 0.64 with 128 x 128)."""
    for shape in ((16, 8192, 8192), (1, 4096, 4096), (2, 7168, 7168)):
        cfg = gm.choose(*shape)
        assert (cfg.bm, cfg.bn, cfg.split_k) == (64, 64, 1), (shape, cfg.name)
    assert gm.choose(64, 4096, 14336).bn == 64 and gm.choose(64, 4096, 14336).split_k == 2
    narrow = [c for c in gm.candidates(16, 8192, 8192) if c.bn == 64]
    assert any(c.split_k == 1 for c in narrow) and any(c.split_k > 1 for c in narrow)
    from txlab.examples import gemm_fp8_config as f8

    fp8 = f8.tuned_config(16, 4096, 4096)
    assert (fp8.bm, fp8.consumers, fp8.promote) == (64, 1, f8.PROMOTE), fp8.name
    assert f8.tuned_config(128, 8192, 8192).bm == 128  # past one 64-row tile: two warpgroups issue, as before


def test_swap_ab_where_m_leaves_its_last_tile_empty():
    """M = 320 is two and a half 128-row tiles: the model tiles C.T with 160-wide tiles (H200: 0.98 of cuBLAS
    against 0.82), but not where the transposed tiling fills the SMs no better (448x4096x4096 at 128 x 128: 0.79
    swapped against 0.99), nor where M tiles well."""
    cfg = gm.choose(320, 8192, 8192)
    assert cfg.swap_ab and (cfg.bm, cfg.bn, cfg.epilogue) == (128, 160, "tma"), cfg.name
    assert cfg.kernel_shape(320, 8192) == (8192, 320) and cfg.cluster_tiles(320, 8192) == (64, 2)
    p = gm.predict(320, 8192, 8192, cfg)
    assert p.tiles == 128 and p.flops == 2 * 320 * 8192 * 8192
    assert any("swap_ab" in n for n in gm.explain(320, 8192, 8192).notes)
    assert not gm.choose(448, 4096, 4096).swap_ab
    assert not [c for c in gm.candidates(448, 4096, 4096) if c.swap_ab and c.bn == 128]
    assert not [c for c in gm.candidates(4096, 4096, 4096) if c.swap_ab]
    assert gm.choose(700, 4096, 4096).swap_ab
    direct = gm.GemmConfig(bn=160, stages=5, swap_ab=True)  # single-element stores cost more than pairs
    tma = gm.GemmConfig(bn=160, stages=5, swap_ab=True, epilogue="tma")
    plain = gm.predict(8192, 320, 8192, gm.GemmConfig(bn=160, stages=5))
    assert gm.predict(320, 8192, 8192, direct).epilogue_s == pytest.approx(plain.epilogue_s * gm.SWAP_EPILOGUE)
    assert gm.predict(320, 8192, 8192, tma).time_s < gm.predict(320, 8192, 8192, direct).time_s
    from txlab.examples import gemm_fp8_config as f8

    assert f8.tuned_config(320, 8192, 8192).swap_ab


@pytest.mark.parametrize(
    "shape,reason",
    [
        ((320, 8192, 8192), "M=320 leaves its last 128-row tile 50% full, so the kernel tiles C.T"),
        ((65536, 16, 64), "N=16 is decode-sized, so the kernel tiles C.T"),  # M fills its tiles: not the reason
        ((765, 12, 944), "N=12 is decode-sized"),
        (
            (1917, 84, 31528),
            "the model ranks it ahead of every tiling of C, though M=1917 leaves its last 128-row tile 98% full",
        ),  # a width sized to the grid of C.T
    ],
)
def test_the_swap_ab_note_gives_the_reason_it_was_offered(shape, reason):
    """The note on a swap_ab winner names why C.T was tiled: a mostly empty last row tile of M, a decode-sized N, or
    the ranking alone; it no longer says that a full last tile (100 %) was the reason."""
    choice = gm.explain(*shape)
    assert choice.winner.swap_ab, choice.winner.name
    (note,) = [n for n in choice.notes if n.startswith("swap_ab")]
    assert reason in note and "100% full, so" not in note


def test_cp_async_loads_are_a_named_knob_the_model_does_not_offer():
    """loads='cp_async' (name suffix _cpa) measured slower than TMA at every shape tried (H100, r28c: 0.50-0.94 of
    the same tile with TMA), so the model never offers it; it takes no cluster, split-K, L2 promotion or FP8."""
    from txlab.examples.gemm_config import parse_config

    cfg = gm.GemmConfig(bn=128, stages=6, epilogue="tma", loads="cp_async", swap_ab=True)
    assert cfg.name == "128x128x64_s6_c2_tma_cpa_swap" and parse_config(cfg.name) == cfg
    for bad in (dict(cluster_m=2), dict(split_k=2), dict(l2_promotion=2)):
        with pytest.raises(ValueError, match="cp_async"):
            gm.GemmConfig(loads="cp_async", **bad).validate()
    with pytest.raises(ValueError, match="loads='ldg'"):
        gm.GemmConfig(loads="ldg").validate()
    for shape in ((1000, 3000, 5000), (579, 792, 1352), (4096, 4096, 4096)):
        assert all(c.loads == "tma" for c in gm.candidates(*shape)), shape


def test_swap_ab_config_names_and_rules():
    cfg = gm.GemmConfig(bn=160, stages=5, epilogue="tma", swap_ab=True)
    assert cfg.name == "128x160x64_s5_c2_tma_swap"
    from txlab.examples.gemm_config import parse_config

    assert parse_config(cfg.name) == cfg
    assert parse_config("128x128x64_s6_c2_sk2p_swap").swap_ab
    with pytest.raises(ValueError, match="swap_ab"):
        gm.GemmConfig(epilogue="staged", swap_ab=True).validate()
    with pytest.raises(ValueError, match="swap_ab='yes'"):
        gm.GemmConfig(swap_ab="yes").validate()
    with pytest.raises(ValueError, match="N % 8"):  # C's own row pitch, swapped or not
        gm.GemmConfig(bn=160, epilogue="tma", swap_ab=True).check_shape(320, 8190, 1024)
    gm.GemmConfig(bn=160, epilogue="tma", swap_ab=True).check_shape(321, 8192, 1024)  # an odd M is C's rows
    assert gm.GemmConfig(split_k=2, swap_ab=True).workspace_elems(320, 8192) == gm.GemmConfig(
        split_k=2
    ).workspace_elems(8192, 320)


def test_widths_between_128_192_256_where_they_fill_the_last_wave():
    """Tile widths 144..240 (TMA epilogue in 32- or 16-column pieces) are offered where their tile count fills the
    last wave better than 128, 192 and 256 do: 1536^3 takes 128 x 144 (132 tiles for 132 SMs; H200: 0.99 of cuBLAS
    against 0.86 with 128 x 192), and nothing changes where the standard widths already fill the SMs."""
    cfg = gm.choose(1536, 1536, 1536)
    assert (cfg.bm, cfg.bn, cfg.epilogue) == (128, 144, "tma"), cfg.name
    assert cfg.epi_width == 16
    assert gm.choose(200, 11008, 4096).bn == 176
    assert not gm._fitted(8192, 8192, 132)  # 64 x 32 tiles of 128 x 256: whole waves already
    assert gm.choose(8192, 8192, 8192).bn == 256
    assert all(c.bn in gm.FIT_WIDTHS for c in gm._fitted(1536, 1536, 132))


def test_parallel_split_fills_the_sms():
    """Besides the listed split factors, the largest that keeps every item of a tiny grid on its own SM: 384x384 in
    128 x 128 tiles is 9 tiles x 14 items = 126 CTAs (H200: 0.89 of cuBLAS against 0.87 at 128 x 192 x 20). The
    128 x 96 tiles in 1x2 clusters split in 10 (120 CTAs) beat it there (0.93 against 0.91 in one run)."""
    assert 14 not in gm.SPLITS
    assert "128x128x64_s7_c2_sk14p" in {c.name for c in gm.candidates(384, 384, 32768)}
    assert gm.choose(384, 384, 32768).name == "128x96x64_s7_c2_cl1x2_sk10p"


def test_decode_sized_m_is_bound_by_each_ctas_weight_stream():
    """With one M tile a CTA streams its B tiles from HBM alone, at most ~60 GB/s per SM: 32 CTAs of 64 x 128 tiles
    cannot stream 1x4096x4096's 32 MB as fast as 128 split-K items (H200: 0.83 against 0.97 of cuBLAS)."""
    c1 = gm.GemmConfig(bn=128, consumers=1)
    assert (c1.a_rows(1), c1.a_rows(16), c1.a_rows(60), c1.a_rows(65)) == (8, 16, 64, 64)
    assert gm.GemmConfig(cluster_n=2).a_rows(16) == 128  # A multicast in slices: whole tiles
    one = gm.predict(1, 4096, 4096, gm.GemmConfig(bn=128, stages=7, consumers=1, epilogue="tma"))
    assert one.bound == "HBM"
    assert one.mainloop_s == pytest.approx(4096 // 64 * 128 * 64 * 2 / gm.SM_STREAM_BYTES_PER_S)
    cfg = gm.choose(1, 4096, 4096)  # not 64 x 128 tiles on 32 CTAs: narrower tiles or split-K items
    assert cfg.bm == 64 and (cfg.split_k >= 2 or cfg.bn == 64), cfg.name
    assert gm.predict(1, 4096, 4096, cfg).time_s < one.time_s / 1.5
    # a GEMM whose tiles all share their operands is not floored by one CTA's stream
    assert gm.predict(4096, 4096, 4096, gm.GemmConfig()).bound != "HBM"


def test_cluster_pad_ctas_count_in_the_waves():
    """A 2x1 cluster over an odd number of M tiles runs a pad CTA past the edge: 7000x3000x1200 in 128 x 256 tiles is
    55 x 12 = 660 tiles (5 waves of 132), but 2x1 clusters run 28 x 12 x 2 = 672 CTAs' work, a sixth wave; 1x2
    clusters pair the 12 N tiles with no pad (H200: 1x2 0.993 of cuBLAS, 2x1 0.862). K = 1200 puts rows on 32-byte
    sectors, where a cluster gains little: one CTA per tile ran 1.04 (2026-12-04), and that is the pick."""
    cfg = gm.GemmConfig(epilogue="tma", cluster_m=2)
    p = gm.predict(7000, 3000, 1200, cfg)
    assert (p.tiles, p.waves) == (660, 6)
    assert gm.predict(7000, 3000, 1200, gm.GemmConfig(epilogue="tma", cluster_n=2)).waves == 5
    pick = gm.choose(7000, 3000, 1200)
    assert pick.cluster_m == 1 and gm.predict(7000, 3000, 1200, pick).waves == 5, pick.name


def test_split_k_over_several_waves_runs_in_k_order():
    """Serial split-K with more items than CTAs is offered in K order only: handed out tile by tile, a wave reads
    every K slice of A and B and L2 cannot hold them (H200, 2026-12-03: 1168x1408x38080 128 x 168 split 12 ways,
    swapped, 0.36 of cuBLAS in tile order, 0.80 in K order; 10 of 10 random long-K shapes faster in K order)."""
    seen = 0
    for shape in ((1184, 3336, 54144), (3648, 1080, 55808), (2000, 2096, 33536), (1168, 1408, 38080)):
        for p in gm.explain(*shape).predictions:
            if p.split_k > 1 and p.config.fixup == "serial" and not p.config.split_tail:
                assert p.config.split_order == ("k" if p.items > p.ctas else "tile"), (shape, p.config.name)
                seen += p.items > p.ctas
    assert seen
    # 128 x 192 split in 2, 210 items: 0.99 of cuBLAS in K order (r13f); the model's own ranking (the measured
    # neighbours' corrections, tested in test_gemm_neighbours.py, may prefer another tile here)
    choice = gm.explain(2704, 1704, 65152, neighbours=False)
    best = choice.predictions[0]
    assert best.config.split_order == "k" and best.items > best.ctas, best.config.name
    assert any("K slice by K slice" in n for n in choice.notes)
    assert gm.SPLIT_WAVES > 1  # priced a little above what the split terms give (the r13b fit)


def test_the_last_waves_tiles_are_split_where_that_fills_it():
    """split_tail candidates for grids a little over whole waves. H200, 2026-12-03 (r13d, r13e): where they displace
    the same tile unsplit they gained 11 to 25 % (3456x3040x44864 0.80 -> 0.97 of cuBLAS, 2048x4856x24576 0.79 ->
    0.99); against another tile width only where predicted TAIL_MARGIN faster (1816x2608x40128: 128 x 160 kept,
    the split tail measured 11 % slower)."""
    for shape in ((3456, 3040, 44864), (2048, 4856, 24576), (784, 5096, 47424), (1008, 4248, 28800)):
        best = gm.explain(*shape, neighbours=False).predictions[0]  # the model's own ranking
        whole, rest = best.config.tail_tiles(*shape[:2])
        assert best.config.split_tail and whole > 0 and rest * best.split_k <= 132, (shape, best.config.name)
    for shape in ((1296, 7360, 60928), (1024, 4728, 52544)):
        assert not gm.choose(*shape).split_tail, shape
    # 128 x 144 kept (1.01 of cuBLAS, r13c; 0.95 with 128 x 192 split in 2), the split tail predicted 3 % faster
    ranked = gm.explain(768, 6240, 39104).predictions
    tails = [p for p in ranked if p.config.split_tail]
    assert tails and tails[0].time_s < ranked[0].time_s  # offered, predicted faster, and held back by the margin
    assert 0 < gm.TAIL_MARGIN < 0.1 and gm.SPLIT_TAIL > 1
    # not where whole waves fill the SMs (4096^3: 512 tiles of 128 x 256), nor for grids short of one wave (plain
    # split-K covers those)
    assert not gm.choose(4096, 4096, 4096).split_tail
    assert not any(p.config.split_tail for p in gm.explain(512, 512, 16384).predictions)


def test_tile_widths_sized_to_the_grid_either_way_round():
    """Widths of 136...248 that leave the busiest SM less work than 128 / 192 / 256 (edge tiles, the last wave and
    split-K's fill counted), by the tensor cores' measure or the operand feed's, for C and for C.T. H200, round 14
    (r14a, r14b, r14e: of 89 picks it moved on random shapes, 81 gained, 8 lost 2-6 %): M = 136 swapped into one 136-wide tile column
    0.63 -> 0.92 of cuBLAS; 368x4408x59968 128 x 208 split in 2 0.90 -> 1.02; 1336x1600x48768 128 x 200 split in 3
    0.72 -> 0.98."""
    plain, swapped = gm._fill_widths(136, 4912, 46592, 132)
    assert 136 in swapped  # M fits one 136-wide column of C.T
    cfg = gm.choose(136, 4912, 46592)
    assert (cfg.bn, cfg.swap_ab, cfg.split_k) == (136, True, 3), cfg.name
    assert gm.choose(368, 4408, 59968).bn in gm._fill_widths(368, 4408, 59968, 132)[0]
    assert gm.choose(1336, 1600, 48768).bn == 200
    # the busiest SM's k-steps: 54 tiles of 128 x 256 split in 2 (469 k-steps each) against 60 of 128 x 224
    kt = -(-59968 // 64)
    assert gm._busiest(368, 4408, 256, kt, 132) == gm._busiest(368, 4408, 224, kt, 132) == -(-kt // 2)
    # none where the standard widths fill the grid (8192^3, the LLM shapes), none at a decode-sized M, and no
    # unswapped one where TMA cannot store C (N % 8 != 0: the staged epilogue needs whole 64s)
    assert gm._fill_widths(8192, 8192, 8192, 132) == ([], [])
    assert gm._fill_widths(16, 8192, 8192, 132) == ([], [])
    assert gm._fill_widths(3000, 5001, 4096, 132)[0] == []
    assert gm.choose(3000, 5001, 4096).epilogue == "staged"
    for shape in ((4096, 4096, 4096), (2048, 14336, 4096), (16384, 4096, 14336)):
        assert gm.choose(*shape).bn in (128, 192, 256), shape
    note = " ".join(gm.explain(368, 4408, 59968).notes)
    assert "sized to the grid" in note and "128x256x64_s4_c2_sk2" in note


def test_a_split_tail_counted_at_its_price_does_not_hide_a_width():
    """The first cut of widths (:func:`_fill_widths`) counts a split tail both bare and at the price the model puts on
    it (SPLIT_TAIL): counted bare, 128 x 256's split tail at 9904x2192x33408 (5 waves and a third) hid 128 x 224 (6
    waves, the last nearly full), and the model chose 128 x 256 unsplit. H200: 0.88 -> 1.01 of cuBLAS (r15e), 0.90 ->
    1.02 (r16a); on 20 random shapes whose pick this moved, 16 gained (8024x1280x9216 0.78 -> 0.99, 3760x3840x15936
    0.85 -> 1.04), two lost 1-4 % (r16c)."""
    shape = (9904, 2192, 33408)
    kt = -(-shape[2] // 64)
    bare = gm._busiest(*shape[:2], 256, kt, 132)
    priced = gm._busiest(*shape[:2], 256, kt, 132, gm.SPLIT_TAIL)
    assert bare == 5 * kt + -(-kt // 3) and priced == pytest.approx(bare * gm.SPLIT_TAIL)
    assert gm._busiest(*shape[:2], 224, kt, 132) == 6 * kt  # 780 tiles: 6 waves, no split tail fits 120 tiles
    assert 224 in gm._fill_widths(*shape, 132)[0]
    assert gm.choose(*shape).name == "128x224x64_s4_c2_tma"
    assert gm.choose(8024, 1280, 9216).name == "128x208x64_s5_c2_tma_swap"
    assert gm.choose(3760, 3840, 15936).name == "128x224x64_s4_c2_tma_swap"


def test_replace_fields_is_dataclasses_replace_for_the_models_dataclasses():
    """gemm_config.replace_fields (the model makes thousands of configurations per choice) copies the instance's
    attributes: right only while __init__ sets the fields alone, which this checks."""
    import dataclasses

    from txlab.examples.gemm_config import replace_fields

    for cls in (GemmConfig, gm.Prediction):
        assert not hasattr(cls, "__post_init__") and not any(
            isinstance(v, functools.cached_property) for v in vars(cls).values()
        ), cls
    c = GemmConfig(bn=128, stages=6, split_k=4, fixup="parallel")
    for changes in ({"swap_ab": True}, {"split_k": 2, "cluster_m": 2}, {}):
        assert replace_fields(c, **changes) == dataclasses.replace(c, **changes)
        assert replace_fields(c, **changes).name == dataclasses.replace(c, **changes).name
    assert c.split_k == 4  # the original unchanged
    p = gm.predict(4096, 4096, 4096, c)
    assert replace_fields(p, time_s=1.0) == dataclasses.replace(p, time_s=1.0)
    with pytest.raises(TypeError, match="no field"):
        replace_fields(c, split=2)
