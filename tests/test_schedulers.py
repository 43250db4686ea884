"""txlab.schedulers: traces come from TVM's compiled scheduler code; checked against the tile
numberings documented in tvm/backend/cuda/lang/tile_scheduler.py and against each other."""

import json

import numpy as np
import pytest

from txlab import schedulers as S
from txlab.errors import InputError


def order_table(tr, rows, cols):
    """Single-CTA trace -> rows x cols table of visit order."""
    table = np.full((rows, cols), -1)
    for v in tr.visits:
        table[v["m_idx"], v["n_idx"]] = v["step"]
    return table


def test_group_major_matches_documented_numbering():
    # Docstring of ClusterPersistentScheduler2D: 4x4 tiles, l2_group_size=2
    tr = S.trace("ClusterPersistentScheduler2D", 1, num_m_tiles=4, num_n_tiles=4, l2_group_size=2)
    expected = np.array([[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]])
    assert (order_table(tr, 4, 4) == expected).all()


def test_serpentine_matches_documented_numbering():
    tr = S.trace("ClusterPersistentScheduler2D", 1, num_m_tiles=4, num_n_tiles=4, l2_group_size=2, serpentine=True)
    # The docstring's rules: blocks go Block(0,0) -> (1,0) -> (1,1) -> (0,1), tiles row-major
    # inside a block. (Its drawn table reverses the rows inside the odd-column blocks, which
    # contradicts the rule it states and what the code does.)
    expected = np.array([[0, 1, 12, 13], [2, 3, 14, 15], [4, 5, 8, 9], [6, 7, 10, 11]])
    assert (order_table(tr, 4, 4) == expected).all()


def test_persistent_stride_and_visit_shape():
    tr = S.trace("ClusterPersistentScheduler2D", 3, num_m_tiles=4, num_n_tiles=4, l2_group_size=2)
    single = S.trace("ClusterPersistentScheduler2D", 1, num_m_tiles=4, num_n_tiles=4, l2_group_size=2)
    order = [(v["m_idx"], v["n_idx"]) for v in single.visits]
    for v in tr.visits:  # CTA c's step s is work item c + 3 s of the single-CTA order
        assert (v["m_idx"], v["n_idx"]) == order[v["cta"] + 3 * v["step"]]
    assert set(tr.visits[0]) == {"cta", "step", "m_idx", "n_idx"}
    arr = tr.array
    assert arr.dtype.names == ("cta", "step", "m_idx", "n_idx") and len(arr) == 16
    m = tr.metrics()
    assert m["tiles_per_cta"] == {"min": 5, "max": 6, "mean": round(16 / 3, 3)}
    assert m["waves"] == 6 and m["coverage"]["missing"] == 0


def test_big_grid_covers_every_tile_once_and_reuses_panels():
    tr = S.trace("ClusterPersistentScheduler2D", 132, num_m_tiles=128, num_n_tiles=128)
    m = tr.metrics()
    assert len(tr) == 128 * 128
    assert m["coverage"] == {"grid_tiles": 16384, "missing": 0, "duplicated": 0, "extra_visits": 0, "out_of_grid": 0}
    assert m["waves"] == -(-16384 // 132)
    g = m["gemm"]
    # a wave of 132 tiles in 8-row groups spans 8 A row-panels and ceil(132/8)+1 B col-panels;
    # row-major spans 1-2 rows and ~128 columns
    assert g["a_panels_per_wave"][0] == 8 and g["b_panels_per_wave"][0] == 17
    assert max(g["a_panels_per_wave"]) <= 16  # a wave straddling two groups
    assert g["b_panel_loads"] < g["rowmajor_b_panel_loads"] / 5
    assert 0.15 < g["traffic_vs_rowmajor"] < 0.25


def test_serpentine_residual_gap_is_reported():
    # 10x10 tiles, swizzle 4: tiles below the full blocks and left of the right strip are never
    # produced by the scheduler (it falls back to (0, 0)); coverage must say so.
    tr = S.trace("ClusterPersistentScheduler2D", 4, num_m_tiles=10, num_n_tiles=10, l2_group_size=4, serpentine=True)
    cov = tr.metrics()["coverage"]
    hits = np.zeros((10, 10), int)
    for v in tr.visits:
        hits[v["m_idx"], v["n_idx"]] += 1
    assert cov["missing"] == int((hits == 0).sum()) > 0
    assert cov["duplicated"] == int((hits > 1).sum())


def test_cluster_padding_visits_are_out_of_grid():
    tr = S.trace("ClusterPersistentScheduler2D", 4, num_m_tiles=5, num_n_tiles=4, cluster_m=2)
    assert tr.metrics()["coverage"]["out_of_grid"] == int((tr.attrs["m_idx"] >= 5).sum()) > 0


CASES = [
    ("ClusterPersistentScheduler2D", 7, dict(num_m_tiles=13, num_n_tiles=9, l2_group_size=4)),
    ("ClusterPersistentScheduler2D", 5, dict(num_m_tiles=12, num_n_tiles=12, l2_group_size=4, serpentine=True)),
    ("GroupMajor3D", 7, dict(m_tiles=6, n_tiles=5, k_tiles=2, group_rows=4)),
    ("FlashAttentionLinearScheduler", 16, dict(num_batches=2, num_heads=4, num_m_blocks=8)),
    ("FlashAttentionLPTScheduler", None, dict(num_batches=2, num_heads=3, num_m_blocks=8, l2_swizzle=4)),
    ("FlashAttentionLPTScheduler", 10, dict(num_batches=2, num_heads=3, num_m_blocks=8, l2_swizzle=2)),
    ("RankAwareGroupMajorTileScheduler", 12, dict(m_clusters=16, n_clusters=8, group_size=5, world_size=4, rank=3)),
]


@pytest.mark.parametrize("name,nc,params", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_runtime_extent_build_agrees_with_constant_build(name, nc, params):
    a = S.trace(name, nc, **params)
    b = S.trace(name, nc, specialize=False, **params)
    assert a.num_ctas == b.num_ctas and (a.cta == b.cta).all() and (a.step == b.step).all()
    for k in a.attrs:
        assert (a.attrs[k] == b.attrs[k]).all(), k
    assert a.metrics()["coverage"]["missing"] == 0


def test_attention_lpt_balances_causal_work_better_than_linear():
    p = dict(num_batches=2, num_heads=8, num_m_blocks=16)
    lin = S.trace("FlashAttentionLinearScheduler", 32, **p).metrics()["attention"]
    lpt = S.trace("FlashAttentionLPTScheduler", None, l2_swizzle=4, concurrency=32, **p).metrics()["attention"]
    assert lin["total_kv_blocks"] == lpt["total_kv_blocks"] == 2 * 8 * sum(range(1, 17))
    assert lpt["efficiency"] > lin["efficiency"]
    first = S.trace("FlashAttentionLPTScheduler", None, l2_swizzle=4, **p).visits[0]
    assert first["m_block_idx"] == 15  # heaviest causal block first


def test_indexed_triple_follows_its_lists():
    lists = S.lpt_index_lists(2, 2, 4, 3)
    tr = S.trace("IndexedTripleTileScheduler", **lists)
    assert tr.num_ctas == 3
    got = [(v["b_idx"], v["h_idx"], v["q_idx"]) for v in tr.visits]
    assert got == list(zip(lists["b_indices"], lists["h_indices"], lists["q_indices"]))
    ptr = lists["tiles_indptr"]
    assert np.bincount(tr.cta, minlength=3).tolist() == [b - a for a, b in zip(ptr, ptr[1:])]


def test_rank_is_substituted_for_my_pe():
    p = dict(m_clusters=16, n_clusters=4, group_size=5, world_size=4)
    firsts = [S.trace("RankAwareGroupMajorTileScheduler", 1, rank=r, **p).visits[0]["m_idx"] for r in range(4)]
    # the remote-first rotation starts at the next rank's row block: (rank + 1) * 16 / 4
    assert firsts == [4, 8, 12, 0]


@pytest.mark.parametrize(
    "name,nc,params,param",
    [
        ("ClusterPersistentScheduler2D", 4, dict(num_m_tiles=0, num_n_tiles=4), "num_m_tiles"),
        ("ClusterPersistentScheduler2D", 4, dict(num_m_tiles=4, num_n_tiles=4, l2_group_size=0), "l2_group_size"),
        ("ClusterPersistentScheduler2D", 17, dict(num_m_tiles=4, num_n_tiles=4), "num_ctas"),
        ("GroupMajor3D", 4, dict(m_tiles=4, n_tiles=4, group_rows=0), "group_rows"),
        ("FlashAttentionLPTScheduler", None, dict(l2_swizzle=0), "l2_swizzle"),
        ("RankAwareGroupMajorTileScheduler", 4, dict(world_size=4, rank=4), "rank"),
        (
            "IndexedTripleTileScheduler",
            None,
            dict(b_indices=[0, 0], h_indices=[0], q_indices=[0], tiles_indptr=[0, 1]),
            "q_indices",
        ),
        (
            "IndexedTripleTileScheduler",
            None,
            dict(b_indices=[0], h_indices=[0], q_indices=[0], tiles_indptr=[0, 2]),
            "tiles_indptr",
        ),
        ("ClusterPersistentScheduler2D", 4, dict(bogus=1), "bogus"),
    ],
)
def test_invalid_parameters_are_named(name, nc, params, param):
    with pytest.raises(InputError) as err:
        S.trace(name, nc, **params)
    assert err.value.param == param
    assert param in str(err.value) or "tiles" in str(err.value)


def test_unknown_scheduler():
    with pytest.raises(InputError, match="unknown scheduler"):
        S.trace("NoSuchScheduler")


def test_zero_divisor_in_dead_branch_falls_back_to_the_runtime_extent_build():
    # static params where the class's middle branch divides by 0 (TVM refuses to constant-fold it): the
    # specialized build cannot be compiled, the runtime-extent build can, and the trace says it ran that one
    p = dict(m_clusters=16, n_clusters=4, group_size=4, world_size=4)
    got = S.trace("RankAwareGroupMajorTileScheduler", 4, **p)
    assert got.build == "runtime extents" and not got.specialized
    assert any("divide" in n and "specialized" in n for n in got.notes), got.notes
    ok = S.trace("RankAwareGroupMajorTileScheduler", 4, specialize=False, **p)
    assert ok.notes == [] and ok.metrics()["coverage"]["missing"] == 0
    assert (got.cta == ok.cta).all() and all((got.attrs[k] == ok.attrs[k]).all() for k in ok.attrs)


def test_accepts_the_class_itself_and_its_worker_name():
    from tvm.backend.cuda.lang import ClusterPersistentScheduler2D

    a = S.trace(ClusterPersistentScheduler2D, num_clusters=3, num_m_tiles=4, num_n_tiles=4)
    assert a.num_ctas == 3 and len(a) == 16


def test_to_dict_is_compact_json():
    tr = S.trace("ClusterPersistentScheduler2D", 8, num_m_tiles=16, num_n_tiles=16)
    d = tr.to_dict()
    text = json.dumps(d)
    assert set(d["columns"]) >= {"cta", "step", "wave", "row", "col", "m_idx", "n_idx"}
    assert all(isinstance(x, int) for x in d["columns"]["cta"][:5])
    assert len(text) < 40 * len(tr)  # a few numbers per visit, no per-visit dicts


def test_plot_draws_the_grid():
    import matplotlib

    matplotlib.use("Agg")
    tr = S.trace("ClusterPersistentScheduler2D", 8, num_m_tiles=16, num_n_tiles=16)
    ax = tr.plot(by="wave", wave=3).axes[0]
    img = ax.images[0].get_array()
    assert img.shape == (16, 16)
    assert int(np.isnan(np.asarray(img, float)).sum()) == 256 - 4 * 8  # only waves 0..3 drawn


def test_explorer_recomputes_on_parameter_change():
    from txlab.views.schedule import ScheduleView

    w = ScheduleView(
        {"scheduler": "ClusterPersistentScheduler2D", "num_ctas": 8, "params": {"num_m_tiles": 16, "num_n_tiles": 16}}
    )
    assert w.left_view["visits"] == 256 and len(w.left_data) == 256 * len(w.left_view["columns"]) * 4
    assert w.right_view["params"]["serpentine"] is True
    w.left = {**w.left, "num_ctas": 16}
    assert w.left_view["num_ctas"] == 16 and w.left_view["metrics"]["waves"] == 16
    w.left = {**w.left, "params": {"num_m_tiles": 0, "num_n_tiles": 16}}
    assert "num_m_tiles" in w.left_view["error"]


@pytest.mark.gpu
@pytest.mark.parametrize(
    "name,nc,params",
    CASES
    + [
        ("ClusterPersistentScheduler2D", 132, dict(num_m_tiles=128, num_n_tiles=128)),
        ("IndexedTripleTileScheduler", None, S.lpt_index_lists(2, 4, 8, 16)),
    ],
    ids=[str(i) for i in range(len(CASES) + 2)],
)
def test_gpu_trace_matches_cpu(name, nc, params):
    cpu = S.trace(name, nc, **params)
    gpu = S.trace(name, nc, device="cuda", **params)
    assert gpu.device == "cuda"
    assert (cpu.cta == gpu.cta).all() and (cpu.step == gpu.step).all()
    for k in cpu.attrs:
        assert (cpu.attrs[k] == gpu.attrs[k]).all(), k


def test_l2_group_size_one_traces_in_the_explorer():
    """Issue 16: l2_group_size=1 made the runtime-extent build divide by a constant 0 and the
    explorer said 'pass specialize=False' although it already did; it now traces (specialized)."""
    from txlab import schedulers as S
    from txlab.views.schedule import ScheduleView

    want = S.trace("ClusterPersistentScheduler2D", specialize=True, l2_group_size=1)
    got = S.trace("ClusterPersistentScheduler2D", specialize=False, l2_group_size=1)
    assert got.specialized
    assert got.to_dict(arrays=False)["params"] == want.to_dict(arrays=False)["params"]
    import numpy as np

    for a in want.attrs:
        assert np.array_equal(got.attrs[a], want.attrs[a])
    w = ScheduleView({"scheduler": "ClusterPersistentScheduler2D", "params": {"l2_group_size": 1}})
    assert "error" not in w.left_view, w.left_view.get("error")
    assert "specialize=False" not in str(w.left_view)


def test_schedule_view_names_what_it_takes():
    """A side that is no trace, scheduler name or dict is an InputError (it was a TypeError from dict())."""
    from txlab.errors import InputError
    from txlab.views import ScheduleView

    for bad in (None, 3):
        with pytest.raises(InputError, match="ScheduleView takes a ScheduleTrace"):
            ScheduleView(bad)
