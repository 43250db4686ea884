"""Bank conflicts computed from the index expressions a kernel runs (txlab.banks, PoolLayout.bank_conflicts)."""

import numpy as np
import pytest

import txlab
from txlab import banks


def test_warp_wavefronts_model():
    lanes = np.arange(32)
    on = np.ones(32, bool)
    # 4-byte, consecutive words: one wavefront for the warp
    assert banks.warp_wavefronts(lanes * 4, on, 4)[:3] == (1, 1, 1)
    # 4-byte, stride 32 words: every lane in bank 0 -> 32 ways
    wf, ideal, ways, colliding, bank, _ = banks.warp_wavefronts(lanes * 128, on, 4)
    assert (wf, ideal, ways, bank) == (32, 1, 32, 0) and colliding == list(range(32))
    # same word for every lane: broadcast, no conflict
    assert banks.warp_wavefronts(np.zeros(32, int), on, 4)[:3] == (1, 1, 1)
    # 16-byte vector accesses, consecutive: served per quarter warp, 4 wavefronts, conflict-free
    assert banks.warp_wavefronts(lanes * 16, on, 16)[:3] == (4, 4, 1)
    # 8-byte accesses with a stride of 2 elements (16 B): each half warp spans 256 B -> 2-way
    assert banks.warp_wavefronts(lanes * 16, on, 8)[:3] == (4, 2, 2)
    # inactive lanes do not count
    half = lanes < 16
    assert banks.warp_wavefronts(lanes * 128, half, 4)[2] == 16


@pytest.mark.parametrize("variant,ways", [("naive", 32), ("padded", 1), ("swizzled", 1)])
def test_transposes(variant, ways):
    from txlab.examples.transpose import expected_read_ways, transpose_kernel

    f = transpose_kernel(1024, variant)
    rows = txlab.pools.layout(f, arch="sm_90a").bank_conflicts()
    loads = [r for r in rows if r.access == "load"]
    stores = [r for r in rows if r.access == "store"]
    assert len(loads) == 1 and len(stores) == 1, rows.summary()
    assert loads[0].buffer == "tile" and stores[0].buffer == "tile"
    assert loads[0].ways == ways == expected_read_ways(variant)
    assert stores[0].ways == 1
    # 8 warps x 4 rows per CTA; the naive read needs 32 wavefronts per request
    assert loads[0].instructions == 32
    assert loads[0].total_wavefronts == 32 * ways
    assert loads[0].wavefronts == ways and loads[0].ideal_wavefronts == 1
    # the user's line: the statement that reads the tile
    assert "tile[lane" in (loads[0].source or "")
    if ways > 1:
        assert loads[0].lanes == list(range(32))
        assert "32-way" in rows.summary()
    tot = rows.totals()
    assert tot["load"]["conflicts"] == 32 * (ways - 1)


def test_grid_totals_from_compiled():
    from txlab.examples.transpose import transpose_kernel

    c = txlab.compile(transpose_kernel(256, "naive"), arch="sm_90a")
    rows = txlab.pools.layout(c).bank_conflicts()
    tot = rows.totals()
    # 8 x 8 CTAs, each 32 load instructions of 32 wavefronts
    assert tot["load"]["grid_wavefronts"] == 64 * 32 * 32
    assert tot["load"]["grid_conflicts"] == 64 * 32 * 31
    assert tot["store"]["grid_conflicts"] == 0


def test_guarded_and_vector_accesses(tmp_path):
    from tvm.script import tirx as T

    @T.prim_func
    def vec(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tid = T.thread_id([128])
        s = T.alloc_shared((32, 64), "float32")
        if tid < 64:
            for i in T.serial(32):
                s[i, tid] = A[i * 32 + tid]
        T.cuda.cta_sync()
        if tid < 16:
            B[tid] = s[tid, 0] + s[0, tid * 2]

    rows = txlab.pools.layout(vec, arch="sm_90a").bank_conflicts()
    by = {(r.access, r.ways) for r in rows}
    # the store: 64 lanes (2 warps), consecutive -> conflict-free
    store = [r for r in rows if r.access == "store"][0]
    assert store.ways == 1 and store.instructions == 2 * 32
    loads = sorted((r for r in rows if r.access == "load"), key=lambda r: -r.ways)
    # s[tid, 0] for 16 lanes: stride 64 words -> all in bank 0, 16 ways (only the active lanes)
    assert loads[0].ways == 16 and loads[0].lanes == list(range(16))
    # s[0, tid * 2]: stride 2 words over 16 lanes -> 16 distinct banks
    assert loads[1].ways == 1
    assert by


def test_pool_widget_shows_accesses():
    from txlab.examples.transpose import transpose_kernel
    from txlab.views.pool import PoolView
    import json

    w = PoolView(txlab.pools.layout(transpose_kernel(256, "naive"), arch="sm_90a"))
    rows = json.loads(w.data)["accesses"]
    assert {r["access"]: r["ways"] for r in rows} == {"load": 32, "store": 1}


# Nsight Compute 2025.3.1 on the H200 (the lead's sample run, tests/data/h200/sample_kernels.py; the
# transposes there launch 64 CTAs of 1024 threads): l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}
# and l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}, read from the .ncu-rep files.
NCU_H200 = {
    "transpose_naive": {"ld_wavefronts": 65536, "ld_conflicts": 63488, "st_wavefronts": 2048, "st_conflicts": 0},
    "transpose_padded": {"ld_wavefronts": 2048, "ld_conflicts": 0, "st_wavefronts": 2048, "st_conflicts": 0},
}


@pytest.mark.parametrize("name", sorted(NCU_H200))
def test_matches_nsight_compute_on_the_h200(name):
    import importlib.util
    import pathlib
    import sys

    path = pathlib.Path(__file__).parent / "data" / "h200" / "sample_kernels.py"
    mod = sys.modules.get("h200_sample_kernels")
    if mod is None:
        spec = importlib.util.spec_from_file_location("h200_sample_kernels", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["h200_sample_kernels"] = mod
        spec.loader.exec_module(mod)
    c = txlab.compile(getattr(mod, name), arch="sm_90a", progress=lambda s: None)
    tot = txlab.pools.layout(c).bank_conflicts().totals()
    want = NCU_H200[name]
    assert tot["load"]["grid_wavefronts"] == want["ld_wavefronts"]
    assert tot["load"]["grid_conflicts"] == want["ld_conflicts"]
    assert tot["store"]["grid_wavefronts"] == want["st_wavefronts"]
    assert tot["store"]["grid_conflicts"] == want["st_conflicts"]
