"""txlab.tune on Ray: the embedded local Ray (capped object store) compiles a sweep in parallel with
the same results as in-process; a simulated two-node cluster (ray.cluster_utils.Cluster) spreads
compile tasks over both nodes and places the GPU actor on the node that has the GPU resource.
Slow (Ray start-up: ~3 s on an idle machine, ~10 s on this shared 2-core box)."""
from __future__ import annotations

import time

import pytest

import txlab
from txlab.examples import bandwidth as bw

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow
N = 1 << 16
SPACE = {"threads": [128, 256], "unroll": [2, 4], "blocks_per_sm": [0], "unguarded": [False]}


@pytest.fixture
def no_ray():
    from txlab.tune import engine as E

    if ray.is_initialized():
        E.shutdown()
    yield
    E.shutdown()


def test_local_ray_compiles_in_parallel_like_serial(no_ray, monkeypatch):
    monkeypatch.setenv("TXLAB_RAY_OBJECT_STORE_MB", "100")
    t0 = time.perf_counter()
    res = txlab.autotune(bw.copy_build(N), SPACE, gpus=0, num_cpus=2, use_cache=False)
    wall = time.perf_counter() - t0
    assert res.meta["ray"]["mode"] == "local" and res.meta["engine"] == "ray"
    assert ray.cluster_resources()["object_store_memory"] == 100 << 20
    serial = txlab.autotune(bw.copy_build(N), SPACE, engine="serial", gpus=0)
    a = {r.id: (r.status, r.facts["registers"], r.facts["sass"], r.key) for r in res.rows}
    b = {r.id: (r.status, r.facts["registers"], r.facts["sass"], r.key) for r in serial.rows}
    assert a == b  # same kernels, same facts
    assert res.meta["compile_gpu_visible"] == [""]  # compile workers see no GPU
    print(f"ray init {res.meta['ray']['init_s']:.1f} s, sweep {wall:.1f} s, compile phase "
          f"{res.meta['compile_phase_s']:.1f} s on {res.meta['workers']} workers; serial "
          f"{serial.meta['compile_phase_s']:.1f} s (cache hits)")


def test_background_sweep_feeds_the_view_and_can_be_cancelled(no_ray):
    from txlab.views.tune import TuneView

    run = txlab.autotune(bw.copy_build(N), {**SPACE, "unroll": [2, 4, 8, 16]}, gpus=0, num_cpus=2,
                     use_cache=False, background=True)
    view = TuneView(run)
    seen = []
    run.result.subscribe(lambda r: seen.append(r.counts()["compiled"]))
    deadline = time.monotonic() + 120
    while not run.done and run.result.counts()["compiled"] < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    run.cancel()
    res = run.wait(120)
    c = res.counts()
    assert c["compiled"] >= 2 and c["compiled"] + c["skipped"] == c["total"] == 8
    assert seen == sorted(seen) and seen[-1] == c["compiled"]
    time.sleep(0.4)
    import json

    assert json.loads(view.data)["counts"] == c


def test_two_node_cluster_placement(no_ray):
    """Two raylets on this machine: the head (1 CPU) and a second node (1 CPU, one GPU resource).
    Compile tasks run on both nodes; the GPU actor is placed on the second one."""
    from ray.cluster_utils import Cluster

    from txlab.tune import engine as E

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 << 20})
    gpu_node = cluster.add_node(num_cpus=2, num_gpus=1, object_store_memory=80 << 20)
    try:
        cluster.wait_for_nodes()
        res = txlab.autotune(bw.copy_build(N), {**SPACE, "unroll": [2, 4, 8]}, gpus=0, cluster=cluster.address,
                         use_cache=False)
        nodes = {n["node_id"]: n for n in res.meta["nodes"]}
        assert len(nodes) == 2 and res.meta["ray"]["mode"] == "cluster"
        assert res.counts()["compiled"] == 6
        assert len(res.meta["compile_nodes"]) == 2, res.meta["compile_nodes"]  # both nodes compiled
        actors, placement = E.measurers(1)
        assert placement[0]["node_id"] == gpu_node.node_id  # num_gpus=1 lands where the GPU is
        assert placement[0]["gpu_ids"] == ["0"]
        print("compile tasks per node:", res.meta["compile_nodes"], "GPU actor on", placement[0]["node_id"][:12])
    finally:
        E.shutdown()
        cluster.shutdown()


def test_gpu_actor_plumbing_with_a_stand_in_gpu_resource(no_ray):
    """Ray told there is one GPU (there is none here): the sweep creates the measuring actor, ships
    each compiled kernel's cache entry, the build, inputs and check to it, and records what the actor
    reports — here that nothing could run (skipped, with the reason) — per row, without stopping. On a GPU host the same path
    measures (tests/test_tune.py::test_gpu_sweep_measures_checks_and_reports_a_fault)."""
    import numpy as np

    from txlab.tune import engine as E

    E.ray_init(num_cpus=2, num_gpus=1)
    res = txlab.autotune(bw.copy_build(N), {"threads": [128, 256], "unroll": [2], "blocks_per_sm": [0],
                                        "unguarded": [False]},
                     lambda c: [np.zeros(N, np.float32), np.zeros(N, np.float32)],
                     check=lambda src, dst: src, rel_tol=0.0, use_cache=False)
    assert res.meta["gpus"] == 1 and res.meta["placement"][0]["gpu_ids"] == ["0"]
    for r in res.rows:
        assert r.status == "skipped" and r.fault_kind is None, (r.status, r.reason)
        assert "needs a CUDA GPU" in r.reason and r.worker.endswith("GPU 0")
