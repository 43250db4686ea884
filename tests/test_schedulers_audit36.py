"""Scheduler traces (audit 36, item 6): a build TVM cannot compile falls back to one it can, in either direction
and, where both fail, to one whose every integer parameter is a kernel argument; the result says which ran.
An empty trace says it is empty; TVM's ClusterLaunchControlScheduler says why it cannot be traced."""

import numpy as np
import pytest

from txlab import schedulers as S
from txlab.errors import InputError, TxlabError
from txlab.schedulers import recorder, tracing

RANK = "RankAwareGroupMajorTileScheduler"


def same(a, b) -> bool:
    return (
        a.num_ctas == b.num_ctas
        and np.array_equal(a.cta, b.cta)
        and np.array_equal(a.step, b.step)
        and all(np.array_equal(a.attrs[k], b.attrs[k]) for k in a.attrs)
    )


def test_catalogue_defaults_trace_in_both_builds():
    """trace('RankAwareGroupMajorTileScheduler') with the explorer's defaults raised 'divides by a constant 0 ... Or
    pass specialize=False': the specialized build now falls back to the runtime-extent one, as the reverse did."""
    got = S.trace(RANK)
    asked = S.trace(RANK, specialize=False)
    assert got.build == asked.build == "runtime extents" and not got.specialized
    assert got.notes and "specialized" in got.notes[0] and "constant 0" in got.notes[0]
    assert asked.notes == []
    assert same(got, asked) and got.metrics()["coverage"]["missing"] == 0
    assert got.to_dict(arrays=False)["build"] == "runtime extents"
    assert "runtime extents build" in repr(got)


@pytest.mark.parametrize(
    "params",
    [
        dict(m_clusters=8, n_clusters=3, group_size=1, world_size=2, rank=1),
        dict(m_clusters=5, n_clusters=3, group_size=2, world_size=1, rank=0),
    ],
    ids=["group_size=1", "world_size=1"],
)
def test_a_divisor_zero_from_the_constants_alone_traces_with_runtime_parameters(params):
    """group_size=1 or world_size=1: TVM's constant folder meets floormod(x, 0) in a dead branch in both builds;
    with every integer parameter a kernel argument no constant divisor is left."""
    for specialize in (True, False):
        tr = S.trace(RANK, 3, specialize=specialize, **params)
        assert tr.build == "runtime parameters" and not tr.specialized
        (note,) = tr.notes
        assert "runtime parameters" in note and f"group_size={params['group_size']}" in note
        cov = tr.metrics()["coverage"]
        assert cov["missing"] == cov["duplicated"] == cov["out_of_grid"] == 0
        assert len(tr) == params["m_clusters"] * params["n_clusters"]


def test_runtime_parameter_build_agrees_with_the_constant_build(monkeypatch):
    """The fallback build runs the same class: forced on parameters every build compiles, it records the same
    visits as the specialized build."""
    p = dict(m_clusters=16, n_clusters=8, group_size=5, world_size=4, rank=3)
    want = S.trace(RANK, 12, **p)
    assert want.build == "specialized"
    real = tracing._executable

    def only_runtime_parameters(text, rank, device):
        if "p_group_size" not in text:
            raise recorder._ConstantDivideByZero("forced by the test")
        return real(text, rank, device)

    monkeypatch.setattr(tracing, "_executable", only_runtime_parameters)
    got = S.trace(RANK, 12, **p)
    assert got.build == "runtime parameters" and same(got, want)


def test_when_every_build_fails_the_message_names_the_setting_and_the_defect(monkeypatch):
    def refuse(text, rank, device):
        raise recorder._ConstantDivideByZero(
            "TVM cannot compile this scheduler with these constant parameters: one of its branches (unreachable "
            "for them) divides by a constant 0, which TVM's constant folder rejects."
        )

    monkeypatch.setattr(tracing, "_executable", refuse)
    with pytest.raises(TxlabError) as info:
        S.trace(RANK, 3, m_clusters=8, n_clusters=3, group_size=1, world_size=2, rank=1)
    msg = str(info.value)
    assert "group_size=1, world_size=2, rank=1" in msg and "constant folder" in msg
    assert "specialized, runtime extents, runtime parameters" in msg and "specialize=False" not in msg


def test_explorer_shows_the_build_that_ran():
    from txlab.views.schedule import ScheduleView

    w = ScheduleView({"scheduler": RANK, "num_ctas": 4, "params": {"m_clusters": 16, "n_clusters": 4}}, specialize=True)
    assert "error" not in w.left_view, w.left_view.get("error")
    assert w.left_view["build"] == "runtime extents" and w.left_view["notes"]


def test_empty_trace_says_it_is_empty():
    """An IndexedTripleTileScheduler whose tiles_indptr gives every CTA an empty range reported grid_tiles=1,
    missing=1."""
    tr = S.trace("IndexedTripleTileScheduler", None, b_indices=[0], h_indices=[0], q_indices=[0], tiles_indptr=[0, 0])
    assert tr.empty and len(tr) == 0
    m = tr.metrics()
    assert m["empty"] and m["coverage"]["grid_tiles"] == 0 and m["coverage"]["missing"] == 0
    assert "empty" in repr(tr)
    (note,) = tr.notes
    assert note.startswith("empty") and "tiles_indptr [0, 0]" in note
    full = S.trace("IndexedTripleTileScheduler", **S.lpt_index_lists(1, 2, 2, 2))
    assert not full.empty and full.notes == [] and not full.metrics()["empty"]


def test_cluster_launch_control_scheduler_says_why_it_cannot_be_traced():
    from tvm.backend.cuda.lang.tile_scheduler import ClusterLaunchControlScheduler

    for name in ("ClusterLaunchControlScheduler", ClusterLaunchControlScheduler):
        with pytest.raises(InputError) as info:
            S.trace(name)
        msg = str(info.value)
        assert "cannot be traced" in msg and "clusterlaunchcontrol.try_cancel" in msg and "sm_100" in msg
        assert "unknown scheduler" not in msg and "ClusterPersistentScheduler2D" in msg
