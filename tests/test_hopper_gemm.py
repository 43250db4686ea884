"""The Hopper GEMM and bandwidth examples: each step builds for sm_90a with the instructions it is
meant to have (HGMMA, setmaxnreg, 128-bit LDG/STG), no spills or local memory; the GPU-marked
tests check results against torch on fresh random inputs (output poisoned first) on an H100/H200."""

from __future__ import annotations

import numpy as np
import pytest

import txlab
from txlab.errors import ArchError, InputError
from txlab.examples import bandwidth as bw
from txlab.examples import hopper_gemm as hg


def _clean(c):
    s = hg.sass_summary(c)
    assert s["spill_store_bytes"] == 0 and s["spill_load_bytes"] == 0, s
    assert s["local_ldst"] == 0 and s["stack_bytes"] == 0, s
    assert s["hmma"] == 0, "a wgmma kernel fell back to mma.sync"
    return s


def test_config_parsing_and_limits():
    cfg = hg.parse_config("128x256x64_s4_c2")
    assert (cfg.bm, cfg.bn, cfg.stages, cfg.consumers, cfg.threads) == (128, 256, 4, 2, 384)
    assert cfg.smem_bytes == 4 * (128 + 256) * 64 * 2 + 64
    assert hg.parse_config("64x128_s3").consumers == 1
    assert not hg.parse_config("128x128x64_s4_c2_np").persistent
    with pytest.raises(ValueError, match="shared memory"):
        hg.parse_config("128x256x64_s5_c2")  # 5 x 48 KiB > 227 KiB
    with pytest.raises(ValueError, match="64 x consumers"):
        hg.parse_config("128x256x64_s4_c1")
    with pytest.raises(ValueError, match="BMxBNx64"):
        hg.parse_config("big")


def test_pingpong_config_parsing_and_limits():
    cfg = hg.parse_config("128x128x64_s6_c2_pp")
    assert (cfg.schedule, cfg.bm, cfg.bn, cfg.m_atoms, cfg.threads) == ("pingpong", 128, 128, 2, 384)
    assert cfg.name == "128x128x64_s6_c2_pp" and hg.parse_config(cfg.name) == cfg
    assert cfg.smem_bytes == 6 * (128 + 128) * 64 * 2 + 6 * 16 + 16  # + the two order barriers
    assert hg.parse_config("64x256_s4_pp").m_atoms == 1
    with pytest.raises(ValueError, match="accumulators"):
        hg.parse_config("128x256x64_s3_c2_pp")  # 256 fp32 accumulators per thread
    with pytest.raises(ValueError, match="persistent"):
        hg.parse_config("128x128x64_s4_c2_pp_np")
    with pytest.raises(ValueError, match="64 or 128 rows"):
        hg.GemmConfig(schedule="pingpong", tile_m=192, bn=64).validate()
    with pytest.raises(ValueError, match="leave tile_m=0"):
        hg.GemmConfig(tile_m=64).validate()
    with pytest.raises(ValueError, match="'cooperative' or 'pingpong'"):
        hg.GemmConfig(schedule="stream-k").validate()


def test_tma_epilogue_config_and_limits():
    cfg = hg.parse_config("128x256x64_s4_c2_tma")
    assert cfg.epilogue == "tma" and cfg.name == "128x256x64_s4_c2_tma" and hg.parse_config(cfg.name) == cfg
    assert hg.parse_config("128x128_s6_c2_pp_tma").name == "128x128x64_s6_c2_pp_tma"
    assert cfg.smem_bytes == 4 * (128 + 256) * 64 * 2 + 2 * hg.EPI_BUFFERS * 64 * 64 * 2 + 64
    with pytest.raises(ValueError, match="shared memory"):
        hg.parse_config("128x128x64_s7_c2_pp_tma")  # 7 stages + 32 KiB of staging tiles > 227 KiB
    with pytest.raises(ValueError, match="multiple of 16"):
        hg.GemmConfig(bn=168, epilogue="tma").validate()
    with pytest.raises(ValueError, match="multiple of 64"):
        hg.GemmConfig(bn=160, epilogue="staged").validate()
    hg.GemmConfig(bn=160, epilogue="tma").validate()
    with pytest.raises(ValueError, match="N % 8 == 0"):
        hg.gemm_kernel(1024, 1020, 256, cfg)


def test_cluster_config_parsing_and_limits():
    cfg = hg.parse_config("128x256x64_s4_c2_cl2x1")
    assert (cfg.cluster_m, cfg.cluster_n, cfg.cluster_size, cfg.sharers) == (2, 1, 2, 2)
    assert hg.parse_config(cfg.name) == cfg and cfg.name == "128x256x64_s4_c2_cl2x1"
    both = hg.parse_config("128x128x64_s6_c2_cl2x2_np")
    assert (both.cluster_size, both.sharers, both.persistent) == (4, 3, False)
    assert hg.parse_config("128x128x64_s6_c2_pp_tma_cl1x2").name == "128x128x64_s6_c2_pp_tma_cl1x2"
    assert hg.GemmConfig().to_dict()["cluster"] == [1, 1]
    # whole clusters: 132 SMs hold 66 2-CTA clusters and 30 of 4 (the GPCs' SM counts leave no room for more
    # at once); tile grids round up to whole cluster tiles
    assert cfg.ctas(8192, 8192) == 132 and hg.GemmConfig(cluster_m=2, cluster_n=2).ctas(8192, 8192) == 120
    assert hg.GemmConfig(cluster_m=4).ctas(8192, 8192) == 120 and hg.GemmConfig(cluster_n=4).max_clusters == 30
    assert hg.GemmConfig(cluster_m=2, cluster_n=2).ctas(1000, 3000) == 96  # 24 cluster tiles, all resident
    wide = hg.parse_config("128x224x64_s4_c2_cl4x1")
    assert (wide.cluster_m, wide.cluster_n, wide.sharers) == (4, 1, 4) and hg.parse_config(wide.name) == wide
    assert hg.GemmConfig(cluster_m=2, num_sms=131).ctas(8192, 8192) == 130
    assert cfg.cluster_tiles(300, 1000) == (2, 4) and cfg.ctas(300, 1000) == 16
    assert hg.GemmConfig(cluster_m=2, persistent=False).ctas(200, 256) == 2
    with pytest.raises(ValueError, match="cluster_m, cluster_n in"):
        hg.GemmConfig(cluster_m=3).validate()
    with pytest.raises(ValueError, match="at most 8 CTAs"):
        hg.GemmConfig(cluster_m=4, cluster_n=4).validate()
    with pytest.raises(ValueError, match="cluster_m, cluster_n in"):
        hg.GemmConfig(cluster_m=16).validate()
    # 8-CTA clusters: the portable size; 132 SMs hold 15 of them (120 CTAs, as 30 of 4)
    eight = hg.parse_config("64x104x64_s10_c1_cl4x2_swap")
    assert (eight.cluster_size, eight.sharers, eight.max_clusters) == (8, 5, 15)
    assert hg.parse_config(eight.name) == eight
    assert hg.GemmConfig(cluster_m=2, cluster_n=4).ctas(8192, 8192) == 120
    assert hg.GemmConfig(cluster_m=8, bn=64).ctas(8192, 8192) == 120
    with pytest.raises(ValueError, match="split-K in 8-CTA clusters has not been run on a GPU"):
        hg.GemmConfig(cluster_m=4, cluster_n=2, split_k=2).validate()  # a fix-up that could wait on a waiting cluster
    hg.GemmConfig(bn=200, cluster_m=4).validate()  # B in slices of 56, 56, 56 and 32 rows
    assert hg.GemmConfig.slices(200, 4) == (56, 32) and hg.GemmConfig.slices(256, 2) == (128, 128)
    # where equal whole-atom slices would leave the last empty, the others take one atom and the last the rest
    assert hg.GemmConfig.slices(48, 4) == (8, 24) and hg.GemmConfig.slices(40, 4) == (8, 16)
    hg.GemmConfig(bn=40, cluster_m=4).validate()
    with pytest.raises(ValueError, match="3 atoms, too few"):
        hg.GemmConfig(bn=24, cluster_m=4).validate()  # three atoms for four CTAs
    with pytest.raises(ValueError, match="8-row swizzle atoms"):
        hg.GemmConfig(bn=8, cluster_m=2).validate()
    with pytest.raises(ValueError, match="cannot hold one cluster"):
        hg.GemmConfig(cluster_m=2, cluster_n=2, num_sms=3).validate()
    # the tune space carries the cluster knobs; every valid point launches a whole number of clusters
    from txlab.tune.space import Space

    space = hg.tune_space(4096, 4096, 4096)
    assert space["cluster_m"] == [1, 2] and space["cluster_n"] == [1, 2]
    points = [hg.GemmConfig(**p) for p in Space.of(space).configs()]
    assert {p.cluster_size for p in points} == {1, 2, 4}
    assert all(p.ctas(4096, 4096) % p.cluster_size == 0 for p in points)
    assert any(p["cluster_m"] == 2 for p in hg.TUNE_PRIOR) and any(p["cluster_n"] == 2 for p in hg.TUNE_PRIOR)


def test_shape_checks_name_the_problem_and_the_fix():
    with pytest.raises(ValueError, match=r"K % 8 == 0.*K=360"):
        hg.gemm_kernel(256, 256, 354)
    with pytest.raises(ValueError, match=r"K % 8 == 0"):
        hg.simple_kernel(256, 256, 100)
    with pytest.raises(ValueError, match="at least 16 row tiles"):
        hg.gemm_kernel(256, 256, 256, hg.GemmConfig(serpentine=True, l2_group=16))
    with pytest.raises(ValueError, match="bottom residual row"):
        hg.gemm_kernel(9 * 128, 9 * 256, 256, hg.GemmConfig(serpentine=True, l2_group=2))
    assert hg.tune_space(256, 256, 354)["constraint"](hg.TUNE_PRIOR[0]) is False


def test_serpentine_shape_rule_matches_tvms_scheduler():
    """GemmConfig.check_shape's serpentine rule against TVM's own ClusterPersistentScheduler2D, run on
    the CPU by txlab.schedulers.trace: a tile grid is accepted exactly when the scheduler visits every
    tile once (TVM 0.27 divides by zero below l2_group row tiles and skips the bottom residual row
    when neither tile count is a multiple of l2_group). The kernel's shapes are constants: a grid whose
    constant build TVM refuses (the trace then runs another build, ``build`` says which) is no usable order."""
    from txlab import schedulers

    disagree = []
    for s in (2, 4):
        for gm in range(1, 10):
            for gn in range(1, 10):
                try:
                    tr = schedulers.trace(
                        "ClusterPersistentScheduler2D",
                        min(4, gm * gn),
                        num_m_tiles=gm,
                        num_n_tiles=gn,
                        l2_group_size=s,
                        serpentine=True,
                    )
                    cov = tr.metrics()["coverage"]
                    covered = cov["missing"] == 0 and cov["duplicated"] == 0 and tr.build == "specialized"
                except Exception:  # noqa: BLE001 - TVM's divide by zero: not a usable order
                    covered = False
                cfg = hg.GemmConfig(serpentine=True, l2_group=s)
                try:
                    cfg.check_shape(gm * cfg.bm, gn * cfg.bn, 64)
                    accepted = True
                except ValueError:
                    accepted = False
                if accepted != covered:
                    disagree.append((s, gm, gn, covered))
    assert not disagree


def test_simple_kernel_builds_to_hgmma():
    c = txlab.compile(hg.simple_kernel(256, 256, 256, bn=128), arch="sm_90a")
    s = _clean(c)
    assert s["hgmma"] >= 4 and s["hgmma_shapes"] == ["HGMMA.64x128x16.F32.BF16"]
    assert c.instructions(r"^UTMALDG")  # TMA loads


@pytest.mark.parametrize(
    "shape,config",
    [
        ((4096, 4096, 4096), "128x256x64_s4_c2"),
        ((4095, 8191, 4096), "128x128x64_s5_c2"),
        ((1024, 1024, 1000), "64x256x64_s4_c1"),
        ((8192, 8192, 2048), "128x128x64_s7_c2_pp"),
        ((1000, 999, 4096), "64x256x64_s4_c2_pp"),
        ((4095, 8192, 1000), "128x256x64_s4_c2_tma"),
        ((1000, 1000, 4096), "128x128x64_s6_c2_pp_tma"),
        ((4096, 4096, 4096), "128x256x64_s4_c2_cl2x1"),
        ((4095, 8184, 4096), "128x128x64_s6_c2_pp_tma_cl1x2"),
        ((1000, 1000, 1000), "128x128x64_s4_c2_cl2x2"),
        ((8192, 8192, 4096), "128x256x64_s4_c2_tma_cl2x2"),  # 33 cluster tiles of 4 and more: 30 resident clusters
        ((1000, 3000, 5000), "128x224x64_s4_c2_cl4x1"),
        ((1000, 3000, 5000), "128x200x64_s4_c2_cl4x1"),  # uneven slices of B: two tensor maps of B
        ((4096, 4096, 1000), "128x256x64_s4_c2_tma_cl1x4"),
    ],
)
def test_warp_specialized_kernel_builds(shape, config):
    cfg = hg.parse_config(config)
    c = hg.build(*shape, cfg)
    s = _clean(c)
    assert s["hgmma_shapes"] == [f"HGMMA.64x{cfg.bn}x16.F32.BF16"]
    # one m64 wgmma per consumer row block and k16 step, 4 k16 steps per 64-wide k-block
    assert s["hgmma"] % (4 * cfg.m_atoms) == 0, s
    assert s["setmaxnreg"] == 2, "producer dec + consumer inc"
    assert not [w for w in s["ptxas_warnings"] if "setmaxnreg" in w or "C7508" in w or "wgmma" in w], s
    launch = c.launch[c.kernels[0]]
    assert launch["block"][0] == cfg.threads
    assert launch["dynamic_smem_bytes"] == cfg.smem_bytes
    tiles = -(-shape[0] // cfg.bm) * -(-shape[1] // cfg.bn)
    if cfg.cluster_size == 1:
        assert launch["grid"][0] == min(cfg.num_sms, tiles) and launch["cluster"] is None
    else:  # one cluster dimension (rank = m + cluster_m * n); multicast loads, remote releases
        gm, gn = cfg.cluster_tiles(*shape[:2])
        assert launch["cluster"] == (cfg.cluster_size, 1, 1)
        assert launch["grid"][0] == cfg.cluster_size * min(cfg.max_clusters, gm * gn)
        assert "multicast::cluster" in c.cuda_source and "mapa.shared::cluster" in c.cuda_source
        assert c.instructions(r"^UTMALDG\.2D\.MULTICAST"), s
    assert "__launch_bounds__(%d, 1)" % cfg.threads in c.cuda_source
    if cfg.epilogue == "tma":  # staged in shared memory, stored by TMA: no per-thread global stores
        assert c.instructions(r"^UTMASTG") and not c.instructions(r"^STG"), s
        return
    # epilogue: 16-byte stores of 8 columns when rows are 16-byte aligned (N % 8 == 0), a pair per row half for
    # each 8-column group past the last four; bf16 pairs as 4-byte stores when N is only even, 2-byte ones when odd
    pairs, singles = c.instructions(r"STG\.E\s"), c.instructions(r"STG\.E\.U16")
    vec = c.instructions(r"STG\.E\.128")
    if shape[1] % 2:
        assert not pairs and not vec and len(singles) >= cfg.bn // 2
    elif shape[1] % 8:
        assert len(pairs) >= cfg.bn // 4 and not singles and not vec
    else:
        assert len(vec) >= cfg.bn // 16 and not singles and len(pairs) >= cfg.bn // 8 % 4 * 2, (len(vec), len(pairs))


def test_kernel_reads_back_into_widgets():
    """The notebook's views read the real kernel: its pipeline, its memory plan."""
    from txlab import pipelines, pools

    f = hg.gemm_kernel(1024, 1024, 1024, hg.GemmConfig(stages=4))
    spec = pipelines.from_kernel(f)
    assert spec.stages == 4
    trace = spec.simulate(iterations=12)
    assert trace.ok, trace.summary()
    plan = pools.layout(f, arch="sm_90a")
    assert plan.occupancy.ctas_per_sm == 1


def test_profiled_kernel_builds_with_timers_and_the_same_mma():
    """profile=True adds the CudaProfiler buffer and timers around the same kernel."""
    cfg = hg.GemmConfig()
    plain = txlab.compile(hg.gemm_kernel(4096, 4096, 1024, cfg), arch="sm_90a")
    prof = txlab.compile(hg.gemm_kernel(4096, 4096, 1024, cfg, profile=True), arch="sm_90a")
    slots = hg.profile_slots(4096, 4096, 1024, cfg)
    tiles, lanes = 32 * 16, 132 * 3
    assert slots == 1 + lanes + (4 * -(-tiles // 132) + 1) * lanes
    assert [p["name"] for p in prof.entry_params] == ["A", "B", "C", "prof"]
    assert prof.entry_params[-1]["shape"] == [slots] and prof.entry_params[-1]["dtype"] == "uint64"
    assert "%globaltimer_lo" in prof.cuda_source and "%globaltimer_lo" not in plain.cuda_source
    sp, sq = hg.sass_summary(plain), hg.sass_summary(prof)
    assert sp["hgmma"] == sq["hgmma"] and sp["hgmma_shapes"] == sq["hgmma_shapes"]
    assert sq["spill_store_bytes"] == 0 and sq["setmaxnreg"] == 2


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((1024, 64, 64), "128x64x64_s4_c2_swap", 2),  # C.T: 16 tiles of 64 x 1024, where C would have 8
        ((384, 192, 64), "128x64x64_s4_c2_cl2x1", 2),  # one cluster: each CTA one of 6 cluster tiles, 9 tiles of C
    ],
)
def test_the_profiler_buffer_holds_every_record(shape, config, sms):
    """``profile_slots`` counts the tiles the kernel walks (C.T's with swap_ab, whole cluster tiles with a cluster),
    so the busiest lane's records stay inside the buffer; it takes a configuration's name too."""
    import numpy as np

    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.emulator import emulate

    M, N, K = shape
    cfg = hg.parse_config(config, num_sms=sms)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    prof = np.zeros(hg.profile_slots(M, N, K, cfg), np.uint64)
    res = emulate(hg.gemm_kernel(M, N, K, cfg, profile=True), a, b, c, prof, arch="sm_90a")
    assert res.ok, res.summary()
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert np.linalg.norm(c.astype(np.float32) - ref) / np.linalg.norm(ref) < 4e-3
    assert hg.profile_slots(M, N, K, config) == hg.profile_slots(M, N, K, hg.parse_config(config))


def test_bandwidth_kernels_build_vectorized():
    c = txlab.compile(bw.copy_kernel(1 << 20), arch="sm_90a")
    assert len(c.instructions(r"^LDG\.E\.128")) >= 4 and len(c.instructions(r"^STG\.E\.128")) >= 4
    r = txlab.compile(bw.row_sum_kernel(256, 4096), arch="sm_90a")
    assert r.instructions(r"^LDG\.E\.128") and r.instructions(r"^SHFL\.BFLY")
    for k in (c, r):
        assert k.resources[k.kernels[0]]["spill_store_bytes"] == 0
    with pytest.raises(ValueError, match="multiple of 4"):
        bw.copy_kernel(1001)


# ---- on the GPU -----------------------------------------------------------------------------
def _gemm_on_gpu(kernel, m, n, k, seed=0):
    torch = pytest.importorskip("torch")
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    compiled = txlab.compile(kernel, arch="sm_90a")
    compiled(a, b, c)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    assert not torch.isnan(c).any(), "some outputs were never written"
    return ((c.float() - ref).norm() / ref.norm()).item()


@pytest.mark.gpu
def test_simple_kernel_on_gpu():
    assert _gemm_on_gpu(hg.simple_kernel(512, 384, 320, bn=128), 512, 384, 320) <= 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (8192, 8192, 8192), (4095, 8191, 4096), (200, 72, 1000)])
@pytest.mark.parametrize(
    "config",
    [
        "128x256x64_s4_c2",
        "128x128x64_s5_c2_np",
        "128x128x64_s7_c2_pp",
        "64x256x64_s3_c2_pp",
        "128x256x64_s4_c2_tma",
        "128x128x64_s6_c2_pp_tma",
        "128x256x64_s4_c2_cl2x1",
        "128x128x64_s7_c2_pp_cl1x2",
        "128x128x64_s6_c2_pp_tma_cl2x1",
        "128x128x64_s4_c2_cl2x2_np",
        "128x256x64_s4_c2_stg",
        "128x128x64_s5_c2_cl4x1",
        "128x224x64_s4_c2_cl1x4",
        "128x160x64_s5_c2_tma",
        "128x144x64_s6_c2_tma",
        "128x176x64_s4_c2_tma_cl2x1",
        "128x200x64_s4_c2_cl4x1",  # B in uneven slices: 56, 56, 56, 32 rows
        "128x104x64_s6_c2_cl2x1_swap",  # the kernel's B (the user's A) in slices of 56 and 48 rows
    ],
)
def test_gemm_on_gpu(shape, config):
    import torch

    if "_tma" in config and shape[1] % 8:
        pytest.skip("epilogue='tma' needs N % 8 == 0")
    n_sms = torch.cuda.get_device_properties(0).multi_processor_count
    cfg = hg.parse_config(config, num_sms=n_sms)
    errs = [_gemm_on_gpu(hg.gemm_kernel(*shape, cfg), *shape, seed=s) for s in (1, 2)]
    assert max(errs) <= 1e-2, errs


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(16, 4096, 4096), (1, 1000, 512), (40, 520, 256), (9, 264, 4104)])
@pytest.mark.parametrize(
    "config", ["64x128x64_s7_c1", "128x128x64_s6_c2_pp_tma", "64x64x64_s8_c1_sk2", "128x128x64_s5_c2_sk2p"]
)
def test_decode_sized_m_on_gpu(shape, config):
    """One M tile: A's TMA box is ceil(M / 8) * 8 rows; the slot's other rows hold whatever the ring held before
    (earlier tiles' data, or never written), and the outputs they feed must stay unwritten."""
    import torch

    if "_tma" in config and shape[1] % 8:
        pytest.skip("epilogue='tma' needs N % 8 == 0")
    m, n, k = shape
    f = hg.build(m, n, k, hg.parse_config(config, num_sms=torch.cuda.get_device_properties(0).multi_processor_count))
    g = torch.Generator(device="cuda").manual_seed(7)
    junk = torch.full((4096, k), float("nan"), device="cuda", dtype=torch.bfloat16)
    f(junk[:m], junk[:n], torch.empty((m, n), device="cuda", dtype=torch.bfloat16))  # NaN left in the ring
    for _ in range(2):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        f(a, b, c)
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        assert not torch.isnan(c).any(), "outputs unwritten, or stale rows leaked into them"
        assert ((c.float() - ref).norm() / ref.norm()).item() <= 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(320, 4096, 1024), (300, 2056, 520), (136, 8192, 4096), (200, 1030, 520)])
@pytest.mark.parametrize(
    "config",
    [
        "128x160x64_s5_c2_tma_swap",
        "128x160x64_s5_c2_swap",
        "128x128x64_s6_c2_pp_tma_swap",
        "128x192x64_s4_c2_tma_cl2x1_swap",
        "128x128x64_s6_c2_sk2p_swap",
    ],
)
def test_swapped_operands_on_gpu(shape, config):
    """``swap_ab``: C.T = B @ A.T tiled, stored transposed (directly, through TMA, after a split-K fix-up), every
    element written once and right, run after run; the direct and fix-up stores transposed by movmatrix, 16 bytes
    where N % 8 == 0, 4-byte pairs at N = 1030."""
    import torch

    m, n, k = shape
    cfg = hg.parse_config(config, num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    try:
        cfg.check_shape(m, n, k)
    except ValueError as e:
        pytest.skip(str(e))
    f = hg.build(m, n, k, cfg)
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    outs = []
    for _ in range(2):
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        f(a, b, c)
        torch.cuda.synchronize()
        outs.append(c)
    ref = a.float() @ b.float().T
    assert not torch.isnan(outs[0]).any(), "outputs never written"
    assert ((outs[0].float() - ref).norm() / ref.norm()).item() <= 1e-2
    assert torch.equal(outs[0], outs[1])


@pytest.mark.gpu
def test_bandwidth_kernels_on_gpu():
    import torch

    n = 1 << 24
    src = torch.randn(n, device="cuda")
    dst = torch.full_like(src, float("nan"))
    txlab.compile(bw.copy_kernel(n), arch="sm_90a")(src, dst)
    torch.cuda.synchronize()
    assert torch.equal(src, dst)
    A = torch.randn(1000, 4100, device="cuda")
    out = torch.full((1000,), float("nan"), device="cuda")
    txlab.compile(bw.row_sum_kernel(1000, 4100), arch="sm_90a")(A, out)
    torch.cuda.synchronize()
    ref = A.double().sum(dim=1)
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-5


def _timeline_on_gpu(m, n, k, config, seed):
    """(configuration at this GPU's SM count, the timeline ``record_timeline`` took of it) on random bf16 operands; C
    checked against the fp32 product, the timeline without warnings."""
    import torch

    cfg = hg.parse_config(config, num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tl = hg.record_timeline(a, b, c, cfg)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    assert ((c.float() - ref).norm() / ref.norm()).item() <= 1e-2
    assert not tl.warnings, tl.warnings
    return cfg, tl


@pytest.mark.gpu
def test_gemm_timeline_on_gpu():
    """The profiled GEMM's own timeline: every tile appears once per warpgroup, in order, and the
    result is still right."""
    m, n, k = 4096, 4096, 1024
    cfg, tl = _timeline_on_gpu(m, n, k, "128x256x64_s4_c2", seed=3)
    tiles = (m // cfg.bm) * (n // cfg.bn)
    ev = list(tl.events)
    for group, name in ((0, "load_tile"), (1, "mainloop"), (2, "mainloop"), (1, "epilogue"), (2, "epilogue")):
        assert sum(1 for e in ev if e["group"] == group and e["name"] == name) == tiles, (group, name)
    assert {e["block"] for e in ev} == set(range(min(cfg.num_sms, tiles)))
    for e in ev:
        assert e["end_ns"] >= e["start_ns"]
    lane = sorted((e for e in ev if e["block"] == 0 and e["group"] == 1), key=lambda e: e["start_ns"])
    assert [e["name"] for e in lane[:4]] == ["mainloop", "epilogue", "mainloop", "epilogue"]
    assert all(x["end_ns"] <= y["start_ns"] for x, y in zip(lane, lane[1:]))


# ---- split-K ---------------------------------------------------------------------------------
def test_split_k_config_names_sizes_and_limits():
    cfg = hg.parse_config("128x128x64_s5_c2_sk4")
    assert (cfg.split_k, cfg.name) == (4, "128x128x64_s5_c2_sk4") and hg.parse_config(cfg.name) == cfg
    assert hg.parse_config("64x256x64_s4_c1_sk3_np") == hg.GemmConfig(bn=256, consumers=1, split_k=3, persistent=False)
    # 4 x 4 tiles of 128 x 128, 4 items each: one fp32 partial tile per item, a counter per thread and tile
    assert cfg.workspace_elems(512, 512) == 16 * 4 * 128 * 128 + 16 * 256
    assert hg.GemmConfig().workspace_elems(512, 512) == 0
    assert cfg.work_grid(512, 512) == (16, 4) and cfg.ctas(512, 512) == 64 and cfg.ctas(4096, 4096) == 132
    ws = hg.workspace(512, 512, 4096, cfg)
    assert ws.dtype.name == "float32" and ws.size == cfg.workspace_elems(512, 512) and not ws.any()
    assert hg.workspace(512, 512, 4096, "128x128x64_s5_c2") is None
    with pytest.raises(ValueError, match="cooperative schedule with the direct epilogue"):
        hg.parse_config("128x128x64_s6_c2_pp_sk2")
    with pytest.raises(ValueError, match="cooperative schedule with the direct epilogue"):
        hg.parse_config("128x256x64_s3_c2_tma_sk2")
    cl = hg.parse_config("128x256x64_s3_c2_cl2x1_sk2")  # split-K in 2-CTA clusters
    # 300 rows are 3 M tiles, rounded up to 2 clusters of 2: the workspace holds 4 x 2 tiles
    assert cl.workspace_elems(300, 512) == 4 * 2 * 2 * 128 * 256 + 4 * 2 * 256
    with pytest.raises(ValueError, match="fixup='parallel' waits for every item"):
        hg.parse_config("128x128x64_s6_c2_sk32p").check_shape(512, 512, 65536)  # 16 tiles x 32 > 132 SMs
    with pytest.raises(ValueError, match=r"integer in \[1, 32\]"):
        hg.GemmConfig(split_k=0).validate()
    with pytest.raises(ValueError, match="use split_k <= 3"):
        cfg.check_shape(512, 512, 136)  # 3 k-steps cannot make 4 slices


@pytest.mark.parametrize(
    "config,sms",
    [
        ("128x128x64_s4_c2_sk3", 8),
        ("128x128x64_s4_c2_sk2p", 8),  # the parallel fix-up's 8 items all resident
        ("64x128x64_s4_c1_cl1x2_sk2", 8),
        ("128x128x64_s4_c2_sk2t", 2),  # split_tail: 2 whole tiles (an empty fixup range each), 2 split in 2
    ],
)
def test_split_k_profiled_kernel_records_every_item_and_stays_right(config, sms):
    """profile=True with split-K: the workspace comes before the profiler buffer (the recorder inserts that last),
    every work item (a tile's K slice) gets one mainloop and one epilogue range (the epilogue holding its fix-up),
    the buffer holds them all and C is still the product (the emulator runs the kernel, timers and all)."""
    import numpy as np

    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab import timeline

    M, N, K = 256, 256, 768
    cfg = hg.parse_config(config, num_sms=sms)
    kernel = hg.gemm_kernel(M, N, K, cfg, profile=True)
    names = [p.name for p in kernel.params]
    assert names[-2:] == ["W", "prof"], names
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    w = hg.workspace(M, N, K, cfg)
    if cfg.fixup == "parallel":  # its items wait for one another: they run resident together on the emulator
        built = hg.build(M, N, K, cfg, profile=True)
        assert [p["name"] for p in built.entry_params][-2:] == ["W", "prof"]
    tl = timeline.emulate(kernel, a, b, c, w, events=hg.GemmEvent)
    assert tl.meta["emulation"].ok, tl.meta["emulation"].summary()
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert np.linalg.norm(c.astype(np.float32) - ref) / np.linalg.norm(ref) < 4e-3
    assert not tl.warnings, tl.warnings
    items = cfg.work_items(M, N) * cfg.cluster_size  # each CTA of a cluster takes one tile of a cluster tile
    ev = list(tl.events)
    for name in ("mainloop", "fixup", "epilogue"):
        assert sum(1 for e in ev if e["group"] >= 1 and e["name"] == name) == items * cfg.consumers, name
    assert sum(1 for e in ev if e["group"] == 0 and e["name"] == "load_tile") == items
    # a consumer's lane: mainloop, fixup (partial stored, counted, peers waited for), epilogue (the sum, the stores)
    lane = sorted((e for e in ev if e["block"] == 0 and e["group"] == 1), key=lambda e: e["start_ns"])
    assert [e["name"] for e in lane[:3]] == ["mainloop", "fixup", "epilogue"]
    assert all(x["end_ns"] <= y["start_ns"] for x, y in zip(lane, lane[1:]))
    # one setup range per CTA, the producer's, before its first load
    setups = {e["block"]: e for e in ev if e["name"] == "setup"}
    assert len(setups) == cfg.ctas(M, N) and all(e["group"] == 0 for e in setups.values())
    for e in ev:
        if e["name"] == "load_tile":
            assert setups[e["block"]]["end_ns"] <= e["start_ns"]


def test_split_tail_names_sizes_and_limits():
    """``split_tail`` (the ``t`` suffix): the first ``D`` tiles (whole waves) run whole, the last ``R`` split."""
    cfg = hg.parse_config("128x256x64_s4_c2_sk16pt")
    assert (cfg.split_tail, cfg.fixup, cfg.split_k) == (True, "parallel", 16) and hg.parse_config(cfg.name) == cfg
    assert hg.parse_config("128x256x64_s4_c2_sk2t_swap").name == "128x256x64_s4_c2_sk2t_swap"
    # 784 x 5096 in 128 x 256 tiles: 7 x 20 = 140 tiles, one wave of 132 whole and 8 split 16 ways
    assert cfg.tail_tiles(784, 5096) == (132, 8) and cfg.work_items(784, 5096) == 132 + 8 * 16
    assert cfg.ctas(784, 5096) == 132
    assert cfg.workspace_elems(784, 5096) == 8 * 16 * 128 * 256 + 8 * 256  # partials and counters of the 8 alone
    assert cfg.tail_tiles(512, 512) == (0, 8) and cfg.work_items(512, 512) == 128  # under one wave: all split
    assert cfg.tail_tiles(128 * 24, 256 * 11) == (132, 132)  # 264 tiles: the second wave is the tail
    with pytest.raises(ValueError, match="fixup='parallel' waits"):
        hg.parse_config("128x256x64_s4_c2_sk32pt").check_shape(2048, 2304 + 256 * 4, 4096)  # 8 x 13 = 104: 104 x 32
    for bad in ("128x256x64_s4_c2_cl2x1_sk2t", "128x256x64_s4_c2_sk2kt", "128x256x64_s4_c2_sk2t_np"):
        with pytest.raises(ValueError, match="split_tail=True splits the last wave"):
            hg.parse_config(bad)


def test_split_k_in_k_order_names_and_indexing():
    """``split_order="k"`` (the ``k`` suffix) hands out every tile's first K slice, then every tile's second: the
    scheduler's M index is ``s * GM + tile_m``; each slice covers the same k-steps either way."""
    k = hg.parse_config("128x128x64_s5_c2_sk6k")
    assert k.split_order == "k" and k.name == "128x128x64_s5_c2_sk6k" and hg.parse_config(k.name) == k
    pk = hg.parse_config("128x176x64_s5_c2_cl2x1_sk3pk_swap")
    assert (pk.fixup, pk.split_order, pk.swap_ab, pk.cluster_m) == ("parallel", "k", True, 2)
    assert hg.parse_config(pk.name) == pk
    assert hg.GemmConfig(split_k=4).name.endswith("_sk4")  # tile order, the default, has no suffix
    with pytest.raises(ValueError, match="split_order='k' orders split-K's K slices"):
        hg.GemmConfig(split_order="k").validate()
    with pytest.raises(ValueError, match="use 'tile'"):
        hg.GemmConfig(split_k=2, split_order="diagonal").validate()

    class Sched:
        def __init__(self, m_idx):
            self.m_idx = m_idx

    kt, split, gm_ = 10, 3, 4  # 10 k-steps in slices of 3, 3 and 4; 4 M tiles
    tile_fns = hg._split_k_indexing(split, kt)
    k_fns = hg._split_k_indexing(split, kt, gm_)
    seen_tile, seen_k = [], []
    for idx in range(gm_ * split):
        for fns, seen in ((tile_fns, seen_tile), (k_fns, seen_k)):
            m_tile, k_slice, k_first, k_count = (f(Sched(idx)) for f in fns)
            seen.append((m_tile, k_slice, k_first, k_count))
    # the same items, each slice's k-steps the same, in another order: K order runs slice 0 of every tile first
    assert sorted(seen_tile) == sorted(seen_k)
    assert [s[1] for s in seen_k[:gm_]] == [0] * gm_ and [s[0] for s in seen_k[:gm_]] == list(range(gm_))
    assert [s[1] for s in seen_tile[:split]] == [0, 1, 2]
    assert {(s[1], s[2], s[3]) for s in seen_k} == {(0, 0, 3), (1, 3, 3), (2, 6, 4)}


def test_split_k_kernel_builds():
    """Partials leave as 16-byte stores and come back as 16-byte loads; a fence and an atomic per
    thread; nothing spilled; one CTA per work item up to the SM count."""
    shape, cfg = (512, 512, 16384), hg.parse_config("128x128x64_s5_c2_sk8")
    c = hg.build(*shape, cfg)
    s = _clean(c)
    assert s["hgmma_shapes"] == ["HGMMA.64x128x16.F32.BF16"] and s["setmaxnreg"] == 2
    assert c.instructions(r"^STG\.E\.128") and c.instructions(r"^LDG\.E\.(EL\.)?128")
    assert c.instructions(r"^ATOMG") and c.instructions(r"^MEMBAR")
    assert c.launch[c.kernels[0]]["grid"][0] == min(cfg.num_sms, 16 * 8) == cfg.ctas(512, 512)
    assert c.entry_params and len(c.entry_params) == 4


def _emulate_gemm(kernel, M, N, K, cfg, seed=1, ws=None):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    from txlab.emulator import emulate

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    split = cfg.split_k > 1
    ws = (hg.workspace(M, N, K, cfg) if split else None) if ws is None else ws
    res = emulate(kernel, a, b, c, *[ws] if split else [], arch="sm_90a")
    assert res.ok, res.summary()
    got, ref = c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T
    assert not np.isnan(got).any(), "outputs never written"
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3
    if split:
        counters = ws.view(np.int32)[-_counters(M, N, cfg) :]
        assert not counters.any(), "a launch must leave the workspace's counters zero"
    return c, ws


def _counters(M, N, cfg):
    gm, gn = cfg.cluster_tiles(M, N)
    tiles = cfg.tail_tiles(M, N)[1] if cfg.split_tail else gm * cfg.cluster_m * gn * cfg.cluster_n
    return tiles * 128 * cfg.consumers


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((200, 136, 640), "128x128x64_s3_c2_sk3", 2),  # tails in M and N, slices of 3, 3 and 4 k-steps
        ((130, 250, 328), "64x128x64_s4_c1_sk5", 3),  # K tail (328 = 5 x 64 + 8), odd N: single stores
        ((256, 200, 256), "128x256x64_s2_c2_sk4_np", 132),  # one CTA per item, one k-step each
        ((300, 200, 640), "128x128x64_s3_c2_cl2x1_sk3", 2),  # 2-CTA clusters: the M edge's idle CTA sums a pad tile
        ((300, 200, 640), "128x128x64_s3_c2_cl2x2_sk3", 4),  # 2x2 clusters: both operands multicast, pad tiles
        ((300, 200, 640), "128x128x64_s3_c2_sk3k", 2),  # K order: 18 items on 2 CTAs, slice 0 of all 6 tiles first
        ((300, 200, 640), "128x128x64_s3_c2_sk3t", 2),  # split tail: 4 whole tiles, then 2 tiles in 3 slices
        ((300, 200, 640), "128x128x64_s3_c2_sk2t", 8),  # split tail of a grid under one wave: every tile split
    ],
)
def test_split_k_on_the_emulator(shape, config, sms):
    cfg = hg.parse_config(config, num_sms=sms)
    _emulate_gemm(hg.gemm_kernel(*shape, cfg), *shape, cfg)


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((130, 251, 200), "128x128x64_s3_c2_stg", 2),  # odd N: single coalesced stores, tails in M and N
        ((67, 33, 64), "128x192x64_s2_c2_stg", 1),  # odd M and N, N smaller than one 64-column piece
        ((200, 136, 192), "128x192x64_s3_c2_stg", 1),  # even N: pairs; 3 pieces a tile, 2 tiles on one CTA
        ((256, 200, 256), "128x128x64_s3_c2_pp_stg", 1),  # pingpong: both consumers' staging tiles
        ((390, 251, 200), "128x128x64_s3_c2_stg_cl2x1", 2),  # a 2-CTA cluster (multicast B), edge CTAs idle
    ],
)
def test_staged_epilogue_on_the_emulator(shape, config, sms):
    """``epilogue="staged"``: the fragment through shared memory, stored back row by row by the threads."""
    _emulate_right(shape, config, sms, seed=3)


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((200, 336, 136), "128x160x64_s3_c2_tma", 4),  # 160 = 5 pieces of 32 columns (64-byte swizzle); M, N tails
        ((130, 304, 200), "128x144x64_s3_c2_tma", 3),  # 144 = 9 pieces of 16 (32-byte swizzle), 3 tiles on 3 CTAs
        ((140, 200, 72), "128x96x64_s3_c2_pp_tma", 2),  # pingpong: each consumer's 32-column staging tiles
        ((130, 360, 64), "128x176x64_s3_c2_tma_cl1x2", 4),  # a 2-CTA cluster (multicast A), 16-column pieces
    ],
)
def test_narrow_tma_epilogue_pieces_on_the_emulator(shape, config, sms):
    """A tile width 64 does not divide stores through 64 x 32 or 64 x 16 staging tiles, each a TMA box."""
    cfg = hg.parse_config(config)
    assert cfg.epi_width == (32 if cfg.bn % 64 == 32 else 16 if cfg.bn % 32 else 64)
    assert cfg.epilogue_bytes == cfg.consumers * hg.EPI_BUFFERS * 64 * cfg.epi_width * 2
    _emulate_right(shape, config, sms, seed=3)


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((136, 300, 200), "128x160x64_s3_c2_swap", 3),  # C.T tiled 300 x 136: tails on both sides, element stores
        ((97, 260, 136), "64x128x64_s3_c1_swap", 2),  # odd M (the tiled N): no pairs; 5 tiles on 2 CTAs
        ((200, 130, 640), "128x128x64_s3_c2_sk3_swap", 2),  # split-K: partials in the tiled layout, stores transposed
        ((130, 390, 72), "128x96x64_s3_c2_cl2x1_swap", 2),  # a 2-CTA cluster over the tiled grid (B multicast)
        ((136, 296, 200), "128x160x64_s3_c2_tma_swap", 3),  # TMA epilogue: 32 x 64 transposed staging tiles
        ((200, 264, 136), "128x128x64_s3_c2_pp_tma_swap", 2),  # pingpong, 64 x 64 transposed pieces, clipped edges
    ],
)
def test_swapped_operands_on_the_emulator(shape, config, sms):
    """``swap_ab``: the kernel tiles C.T = B @ A.T (its A is the user's B) and stores each element to C[m, n]
    (directly, or through transposed staging tiles and TMA boxes of C)."""
    cfg = hg.parse_config(config, num_sms=sms)
    assert cfg.swap_ab and cfg.kernel_shape(*shape[:2]) == shape[1::-1]
    if cfg.split_k > 1:
        _emulate_gemm(hg.gemm_kernel(*shape, cfg), *shape, cfg)
    else:
        _emulate_right(shape, config, sms, seed=7)


def _emulate_right(shape, config, sms, seed):
    """One emulated launch of ``config`` (no split-K) on NaN-poisoned C: no fault, every output written,
    within bf16 rounding of the float reference."""
    import numpy as np

    M, N, K = shape
    cfg = hg.parse_config(config, num_sms=sms)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.emulator import emulate

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    res = emulate(hg.gemm_kernel(M, N, K, cfg), a, b, c, arch="sm_90a")
    assert res.ok, res.summary()
    got, ref = c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T
    assert not np.isnan(got).any(), "outputs never written"
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((300, 520, 200), "128x128x64_s3_c2_cl1x4", 4),  # A multicast to 4 CTAs in 32-row slices; N edge pad CTAs
        ((520, 296, 200), "128x128x64_s3_c2_tma_cl4x1", 4),  # B multicast to 4 in 32-row slices; M edge pad CTAs
        ((700, 260, 136), "64x128x64_s3_c1_cl4x1", 8),  # two 4-CTA clusters, each with two tiles in turn
        ((300, 410, 200), "128x200x64_s3_c2_cl4x1", 4),  # uneven slices of B: 56, 56, 56 and the last 32 rows
        ((260, 300, 136), "128x104x64_s3_c2_cl2x1_swap", 4),  # 56 and 48 rows of the kernel's B (the user's A)
    ],
)
def test_four_cta_clusters_on_the_emulator(shape, config, sms):
    """1x4 and 4x1 clusters: each CTA loads a quarter of the shared tile and multicasts it to the other three,
    and releases a ring slot in all four (the slot's writers) before any of them refills it. Where the tile's rows
    do not split into equal whole swizzle atoms, the last CTA loads what the others leave."""
    _emulate_right(shape, config, sms, seed=5)


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((600, 300, 136), "64x64x64_s3_c1_cl4x2", 8),  # B to 4 CTAs in 16-row slices, A to 2; pad tiles both ways
        ((300, 520, 200), "64x48x64_s3_c1_cl2x4", 8),  # A to 4 CTAs in 16-row slices, B to 2 in 24-row ones
        ((600, 200, 136), "128x48x64_s3_c2_cl4x2", 8),  # B's 48 rows over 4 CTAs: 8, 8, 8 and the last 24
        ((200, 500, 136), "64x104x64_s3_c1_cl4x2_swap", 8),  # cuBLAS's 64 x 104 in 4x2: the kernel's B is the user's A
        ((300, 600, 136), "64x64x64_s3_c1_tma_cl2x4", 8),  # the TMA epilogue in an 8-CTA cluster
    ],
)
def test_eight_cta_clusters_on_the_emulator(shape, config, sms):
    """4x2 and 2x4 clusters (cuBLAS's at small grids on the H200): each CTA loads its slice of the B tile its column
    shares and of the A tile its row shares, multicasts both, and frees a ring slot in all five CTAs that write it."""
    cfg = hg.parse_config(config, num_sms=sms)
    assert cfg.cluster_size == 8 and cfg.sharers == 5
    _emulate_right(shape, config, sms, seed=13)


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((300, 400, 640), "192x192x64_s3_c3", 4),  # three consumers' 64-row slices; tails in M and N
        ((300, 400, 640), "192x192x64_s3_c3_tma", 4),  # each consumer's own staging tiles and named barrier
        ((400, 296, 640), "192x160x64_s3_c3_tma_swap", 3),  # C.T, 32-column transposed pieces
        ((500, 600, 640), "192x192x64_s3_c3_tma_cl2x1", 4),  # B multicast to a 2-CTA cluster
    ],
)
def test_three_consumer_warpgroups_on_the_emulator(shape, config, sms):
    """``consumers=3``: a 192-row tile, each consumer warpgroup owning 64 rows (cuBLAS's 192 x 192 tile); setmaxnreg
    gives the three 152 registers each."""
    cfg = hg.parse_config(config, num_sms=sms)
    assert cfg.consumers == 3 and cfg.bm == 192 and cfg.threads == 512 and cfg.consumer_regs_ == 152
    _emulate_right(shape, config, sms, seed=11)


def test_three_consumers_split_k_on_the_emulator():
    """Split-K with three consumers: 384 threads' partial slices, the fix-up's named barrier past the three
    warpgroups' own."""
    cfg = hg.parse_config("192x192x64_s3_c3_sk3", num_sms=3)
    _emulate_gemm(hg.gemm_kernel(300, 400, 1280, cfg), 300, 400, 1280, cfg)


def test_three_consumers_fit_the_registers_only_up_to_192_columns():
    hg.GemmConfig(bn=192, consumers=3, stages=4).validate()
    with pytest.raises(ValueError, match="bn <= 192"):
        hg.GemmConfig(bn=256, consumers=3, stages=3).validate()
    with pytest.raises(ValueError, match="1, 2 or 3 consumer"):
        hg.GemmConfig(bn=128, consumers=4, stages=3).validate()
    # the parallel fix-up's named barrier: 3 for one or two consumers (their generated code is unchanged), 4 past the
    # three warpgroups' own 1..3
    for config, bar in (
        ("128x128x64_s3_c2_sk3p", "T.uint32(3), T.uint32(256)"),
        ("192x192x64_s3_c3_sk2p", "T.uint32(4), T.uint32(384)"),
    ):
        src = hg.gemm_kernel(300, 400, 640, hg.parse_config(config)).script()
        assert f'T.ptx.bar({bar}, "", "sync", "")' in src, config


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((300, 260, 200), "256x128x64_s3_c2", 2),  # two m64 atoms per consumer; tails in M and N
        ((300, 264, 200), "256x128x64_s3_c2_tma", 2),  # each consumer's four 64-row pieces through two staging tiles
        ((300, 259, 200), "256x128x64_s3_c2_stg", 2),  # odd N: staged, coalesced single stores
        ((264, 304, 200), "256x96x64_s3_c2_tma_swap", 2),  # C.T: the kernel's 256 rows are the user's columns
        ((520, 300, 136), "256x128x64_s3_c2_cl1x2", 4),  # A's 256 rows multicast in two 128-row slices
        ((520, 300, 136), "256x144x64_s3_c2_cl2x1", 4),  # B multicast; 144 accumulators per thread
        # the forms gemm_model._tall_tiles offers: rows along the longer side (swapped where that is N), TMA stores
        ((300, 520, 136), "256x176x64_s3_c2_tma_cl1x2_swap", 4),  # C.T, the user's B multicast
        ((296, 520, 200), "256x192x64_s3_c2_tma_cl2x1_swap", 4),  # C.T, the user's A multicast; 192 columns
    ],
)
def test_256_row_cooperative_tiles_on_the_emulator(shape, config, sms):
    """``tile_m=256``: two consumers of 128 rows, each issuing two m64 wgmmas per k16 step on one B descriptor
    (cuBLAS's 256 x 128 tile): half the B loads of two 128-row tiles."""
    cfg = hg.parse_config(config, num_sms=sms)
    assert cfg.bm == 256 and cfg.tile_m == 256 and cfg.m_atoms == 2 and cfg.threads == 384
    _emulate_right(shape, config, sms, seed=13)


@pytest.mark.parametrize(
    "config,shape,sms",
    [
        ("256x128x64_s3_c2_sk3", (300, 260, 640), 3),  # serial fix-up: two atoms' partials per thread
        ("256x96x64_s3_c2_sk2k", (300, 260, 640), 3),  # K order
        ("256x128x64_s3_c2_sk2t", (520, 400, 640), 3),  # split tail
        ("256x128x64_s3_c2_cl1x2_sk2", (300, 200, 640), 4),  # a cluster's pad tile
    ],
)
def test_256_row_tiles_split_k_on_the_emulator(config, shape, sms):
    cfg = hg.parse_config(config, num_sms=sms)
    _emulate_gemm(hg.gemm_kernel(*shape, cfg), *shape, cfg)


def test_256_row_tiles_names_and_limits():
    cfg = hg.parse_config("256x128x64_s4_c2_tma")
    assert (cfg.tile_m, cfg.bm, cfg.m_atoms, cfg.schedule) == (256, 256, 2, "cooperative")
    assert cfg.name == "256x128x64_s4_c2_tma" and cfg.smem_bytes == hg.parse_config("128x256x64_s4_c2_tma").smem_bytes
    hg.GemmConfig(bn=192, tile_m=256, stages=3).validate()  # 192 accumulators per thread: no spills (ptxas)
    with pytest.raises(ValueError, match="bn <= 192"):
        hg.GemmConfig(bn=256, tile_m=256, stages=3).validate()
    with pytest.raises(ValueError, match="256 with consumers=2"):
        hg.GemmConfig(bn=128, tile_m=256, consumers=1).validate()
    with pytest.raises(ValueError, match="256 with c2"):
        hg.parse_config("256x128x64_s4_c1")
    # split-K: one 256 x 128 fp32 partial per item (both atoms of every consumer thread), then the counters
    sk = hg.parse_config("256x128x64_s3_c2_sk3")
    assert sk.workspace_elems(300, 260) == 2 * 3 * 3 * 256 * 128 + 2 * 3 * 256


def _bits_either_way(monkeypatch, shape, config, switch, sms, seed):
    """C's bits from one emulated launch of ``config`` with hopper_gemm's ``switch`` on, then off (the same inputs;
    NaN-poisoned C, a workspace for split-K): ([bits on, bits off], [TVMScript on, off], A, B)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    from txlab.emulator import emulate

    M, N, K = shape
    cfg = hg.parse_config(config, num_sms=sms)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    outs, scripts = [], []
    for on in (True, False):
        monkeypatch.setattr(hg, switch, on)
        kernel = hg.gemm_kernel(M, N, K, cfg)
        scripts.append(kernel.script())
        c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
        ws = (hg.workspace(M, N, K, cfg),) if cfg.split_k > 1 else ()
        res = emulate(kernel, a, b, c, *ws, arch="sm_90a")
        assert res.ok, res.summary()
        outs.append(c.view(np.uint16).copy())
    return outs, scripts, a, b


@pytest.mark.parametrize(
    "shape,config",
    [
        ((300, 264, 200), "128x256x64_s3_c2_tma"),  # 64-column pieces, 128B swizzle
        ((300, 264, 200), "128x144x64_s3_c2_tma"),  # 16-column pieces, 32B swizzle: one stmatrix.x4 per piece
        ((264, 304, 200), "128x160x64_s3_c2_tma_swap"),  # transposed staging tiles: stmatrix .trans
        ((300, 259, 200), "128x256x64_s3_c2_stg"),  # the staged epilogue's tiles
    ],
)
def test_stmatrix_staging_is_bitwise_the_element_stores(shape, config, monkeypatch):
    """The epilogues' staging tiles written by stmatrix.x4 hold exactly what 2-byte stores of each element put there:
    C is the same bit for bit (a wrong lane address or matrix order would move elements)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    outs, scripts, _, _ = _bits_either_way(monkeypatch, shape, config, "_EPI_STMATRIX", 2, 3)
    assert "stmatrix" in scripts[0] and "stmatrix" not in scripts[1]
    assert not np.isnan(outs[0].view(ml_dtypes.bfloat16).astype(np.float32)).any()
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize(
    "shape,config,vec",
    [
        ((300, 408, 200), "128x200x64_s3_c2", True),  # 25 column groups: 6 quads of 16-byte stores + 1 pair; edges
        ((130, 264, 128), "64x136x64_s3_c1", True),  # one consumer, 17 groups, M tail
        ((256, 200, 256), "128x128x64_s3_c2_pp", True),  # pingpong: two m64 atoms per consumer
        ((200, 136, 640), "128x128x64_s3_c2_sk3", True),  # split-K's serial fix-up stores through store_direct
        ((300, 520, 200), "128x128x64_s3_c2_cl1x4", True),  # a 4-CTA cluster: each CTA's own tile of the cluster's
        ((130, 250, 64), "128x128x64_s3_c2", False),  # N % 8 != 0: rows not 16-byte aligned, pairs only
    ],
)
def test_sixteen_byte_direct_stores_are_bitwise_the_pair_stores(shape, config, vec, monkeypatch):
    """The direct epilogue's 16-byte stores (four lanes of a quad trading bf16 pairs by shuffles) put every element
    where the 4-byte pair stores did: C is the same bit for bit, every output written (a wrong butterfly step or lane
    column would move or drop 8-column groups)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    outs, scripts, _, _ = _bits_either_way(monkeypatch, shape, config, "_EPI_VEC16", 4, 11)
    assert ("shfl_xor" in scripts[0]) == vec and "shfl_xor" not in scripts[1]
    assert not np.isnan(outs[0].view(ml_dtypes.bfloat16).astype(np.float32)).any()
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize(
    "shape,config",
    [
        ((200, 300, 256), "128x128x64_s3_c2_pp"),  # pingpong, two m64 atoms per consumer
        ((300, 264, 200), "256x128x64_s3_c2"),  # cooperative, two atoms per consumer (128 rows each)
        ((300, 410, 200), "128x200x64_s3_c2_cl4x1"),  # a 4-CTA cluster, B in uneven slices
    ],
)
def test_advanced_descriptors_give_the_encoded_ones_results(shape, config, monkeypatch):
    """Stage 0's descriptors plus each wgmma's offset (stage, atom, k-step) address what encoding each one did:
    C is the same bit for bit, with every output written."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    outs, scripts, a, b = _bits_either_way(monkeypatch, shape, config, "_DESC_ADVANCE", 4, 17)
    got, ref = outs[0].view(ml_dtypes.bfloat16).astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3
    assert scripts[0] != scripts[1] and np.array_equal(outs[0], outs[1])


def _encodes_between_wgmmas(compiled) -> list[int]:
    """For each pair of consecutive HGMMA/QGMMA of one commit group (the first not ending it with ``gsb0``), how
    many instructions between them encode a descriptor's start address (``>> 4``, then the 14-bit mask)."""
    import re

    sass = [ln for ln in compiled.sass.splitlines() if re.match(r"\s*/\*[0-9a-f]+\*/", ln)]
    at = [i for i, ln in enumerate(sass) if re.search(r"\b[HQ]GMMA\.", ln)]
    encode = re.compile(r"USHF\.R\.U32\.HI .*, 0x4,|ULOP3\.LUT .*, 0x3ff[c-f],")
    return [sum(bool(encode.search(ln)) for ln in sass[i + 1 : j]) for i, j in zip(at, at[1:]) if "gsb0" not in sass[i]]


@pytest.mark.parametrize(
    "shape,config,dtype",
    [
        ((1000, 3000, 5000), "128x200x64_s5_c2_cl4x1", "bf16"),
        ((4096, 4096, 4096), "128x128x64_s6_c2_pp_tma", "bf16"),
        ((4096, 4096, 4096), "128x192x128_s4_c2_tma_p2", "e4m3"),
    ],
)
def test_wgmmas_of_a_k_block_are_not_separated_by_descriptor_encodes(shape, config, dtype, monkeypatch):
    """The mainloop issues a k-block's wgmmas a few uniform adds apart (cuBLAS's spacing), where encoding each
    descriptor again put about ten instructions between them; the per-wgmma encode still shows them."""
    gaps = _encodes_between_wgmmas(hg.build(*shape, config, dtype=dtype))
    assert gaps and max(gaps) == 0, gaps
    monkeypatch.setattr(hg, "_DESC_ADVANCE", False)
    assert max(_encodes_between_wgmmas(hg.build(*shape, config, dtype=dtype))) > 0


@pytest.mark.parametrize(
    "shape,config,maps",
    [
        ((1000, 3000, 5000), "128x200x64_s5_c2_cl4x1", 3),  # A, B's whole slices and B's last, uneven one
        ((4096, 4096, 4096), "128x128x64_s6_c2_pp_tma", 3),  # A, B and C's store
        ((4095, 8191, 4096), "128x256x64_s4_c2_stg", 2),
    ],
)
def test_tensor_maps_are_prefetched_at_entry(shape, config, maps, monkeypatch):
    """Warp 0 prefetches each tensor map the kernel's TMA copies use (``UTMACCTL.PF``), once per map; without the
    switch, none."""
    c = hg.build(*shape, config)
    pf = c.instructions(r"^UTMACCTL\.PF")
    assert len(pf) == maps, pf
    monkeypatch.setattr(hg, "_TMA_PREFETCH", False)
    assert not hg.build(*shape, config).instructions(r"^UTMACCTL")


@pytest.mark.parametrize("config", ["128x64x64_s8_c2_cl1x2_sk16p", "128x128x64_s6_c2_sk2"])
def test_split_k_fixups_count_by_release_and_acquire(config):
    """Split-K's fix-ups order the partials by release/acquire (a release reduction and an acquiring wait by one
    thread, parallel; one acq_rel atomic per thread, serial), not by every consumer thread's two fence.sc.gpu (far:,
    the fix-ups before round 30)."""

    def fences(*prefixes):
        with hg.built_as_before(*prefixes):
            k = txlab.compile(hg.gemm_kernel(256, 256, 65536, hg.parse_config(config)), arch="sm_90a")
        return [i.text if hasattr(i, "text") else str(i) for i in k.instructions(r"MEMBAR|REDG|ATOMG|STRONG\.GPU")]

    today, before = fences(), fences("far:")
    assert sum("MEMBAR.SC.GPU" in i for i in before) == 2 and not any("MEMBAR.SC.GPU" in i for i in today)
    if config.endswith("p"):  # one release reduction, one acquiring poll by the counting thread
        assert any(i.startswith("@") and "REDG.E.ADD.S32.STRONG.GPU" in i for i in today)
        assert any("LDG.E.STRONG.GPU" in i for i in today)
    else:
        assert any("ATOMG.E.ADD.S32.STRONG.GPU" in i for i in today)


def test_built_as_before_sets_one_switch_and_puts_it_back():
    """The GPU scripts' ``PREFIX:CONFIG`` variants: inside, the prefix's switch has its old value; after, even when
    the build raised, today's."""
    assert set(hg.BEFORE) == {"sts:", "enc:", "tpf:", "v16:", "far:", "fst:", "sw2:"}
    today = {switch: getattr(hg, switch) for switch, _ in hg.BEFORE.values()}
    for prefix, (switch, old) in hg.BEFORE.items():
        assert today[switch] != old
        with pytest.raises(RuntimeError), hg.built_as_before(prefix):
            assert {s: getattr(hg, s) for s in today} == {**today, switch: old}
            raise RuntimeError("a build failed")
        assert {s: getattr(hg, s) for s in today} == today
    with hg.built_as_before("enc:", "tpf:"):
        assert (hg._DESC_ADVANCE, hg._TMA_PREFETCH, hg._EPI_STMATRIX) == (False, False, True)
    assert {s: getattr(hg, s) for s in today} == today
    with pytest.raises(InputError, match="'enc' is not one of"):
        with hg.built_as_before("enc"):
            pass


def _mutant(*edits):
    """hopper_gemm with pieces of its source replaced, as a fresh module (a broken variant)."""
    import linecache
    import sys
    import types

    with open(hg.__file__) as f:
        src = f.read()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path = f"<hopper_gemm split-K mutant {abs(hash(src))}>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)  # TVMScript reads the source
    mod = types.ModuleType(f"hopper_gemm_sk_mutant_{abs(hash(src))}")
    sys.modules[mod.__name__] = mod
    exec(compile(src, path, "exec"), mod.__dict__)  # noqa: S102 - the test's own copy of a txlab module
    return mod


@pytest.mark.parametrize(
    "shape,config,sms,wide",
    [
        ((260, 304, 136), "128x104x64_s3_c2_cl2x1_swap", 4, True),  # 13 groups: six quads and a pair group
        ((136, 300, 200), "128x160x64_s3_c2_swap", 3, False),  # the user's N even, not a multiple of 8: pairs
        ((100, 256, 256), "128x128x64_s3_c2_sk3p_swap", 6, True),  # parallel fix-up: share groups G, G + 3 per quad
        ((96, 512, 256), "256x96x64_s3_c2_sk2p_swap", 4, True),  # two atoms per consumer: quads across them
        ((136, 296, 640), "128x160x64_s3_c2_sk2_swap", 4, True),  # the serial fix-up stores through store_direct
    ],
)
def test_swapped_direct_stores_transpose_in_registers(shape, config, sms, wide):
    """swap_ab's direct and fix-up stores: each 8 x 8 block transposed by movmatrix and four traded per quad (16 bytes
    of a row of C per lane; 4-byte pairs where the user's N is only even) give C bit for bit as the element stores
    before (sw2:), on the emulator; in the SASS no 2-byte store is left but the serial fix-up's lane-by-lane arm."""
    import numpy as np

    M, N, K = shape
    outs = []
    for prefix in ("", "sw2:"):
        with hg.built_as_before(*[prefix] if prefix else []):
            cfg = hg.parse_config(config, num_sms=sms)
            kernel = hg.gemm_kernel(M, N, K, cfg)
            if not prefix:
                stores = txlab.compile(kernel, arch="sm_90a").instructions(r"^(@!?U?P\w+ )?STG")
        outs.append(_emulate_gemm(kernel, M, N, K, cfg)[0].view(np.uint16).copy())
    assert np.array_equal(outs[0], outs[1])
    texts = [i.text if hasattr(i, "text") else str(i) for i in stores]
    # the serial fix-up keeps element stores for a warp whose lanes split between two items (the ballot's other arm)
    assert any(".U16" in t for t in texts) == config.endswith("sk2_swap"), texts
    assert any("STG.E.128" in t for t in texts) == wide, texts


@pytest.mark.parametrize(
    "config,n", [("64x64x64_s3_c1_sk2_swap", 64), ("64x64x64_s3_c1_sk2_swap", 62), ("64x64x64_s3_c1_sk2", 64)]
)
@pytest.mark.parametrize("first", [slice(0, 32, 2), slice(0, 16)], ids=["even-lanes", "half-warp"])
def test_serial_fix_up_where_a_warps_lanes_disagree_on_the_last_item(config, n, first):
    """The serial fix-up counts per thread, so two items ending together may each count last for some lanes of one
    warp. The stores that trade values between lanes (16-byte quads, swap_ab's movmatrix) then run only where the
    whole warp counted last, the others' lanes storing their own elements: C is the first launch's, with no finding.
    Here a second launch finds warp 0's counters as if the other item had counted some of its lanes first (it once
    gave 512-768 wrong elements, the half-warp case with no finding)."""
    import numpy as np

    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.emulator import emulate

    M, K = 64, 256
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, K)).astype(ml_dtypes.bfloat16)
    cfg = hg.parse_config(config, num_sms=1)
    kernel = hg.gemm_kernel(M, n, K, cfg)
    ws = hg.workspace(M, n, K, cfg)
    counters = ws.view(np.int32)[-_counters(M, n, cfg) :]  # after the partials, one per thread
    outs = []
    for launch in range(2):
        c = np.full((M, n), np.nan, ml_dtypes.bfloat16)
        res = emulate(kernel, a, b, c, ws, arch="sm_90a")
        assert res.ok, res.summary()
        outs.append(c.view(np.uint16).copy())
        if launch == 0:
            assert not counters.any()
            counters[first] = 1  # these lanes of warp 0: the other item counted first
    assert np.array_equal(outs[0], outs[1])


def test_split_k_is_bitwise_the_same_whichever_item_ends_last():
    """One CTA runs a tile's items in split order; two and three CTAs end them in other orders. The
    fix-up sums in split order, so C is bitwise the same each way, and again on a reused workspace. A
    fix-up that starts from its own partial (the order of who ends last) is not: the check can fail."""
    import numpy as np

    M, N, K, base = 192, 128, 768, "128x128x64_s3_c2_sk3"
    outs = []
    for sms in (1, 2, 3):
        cfg = hg.parse_config(base, num_sms=sms)
        c, ws = _emulate_gemm(hg.gemm_kernel(M, N, K, cfg), M, N, K, cfg)
        outs.append(c.view(np.uint16))
    outs.append(_emulate_gemm(hg.gemm_kernel(M, N, K, cfg), M, N, K, cfg, ws=ws)[0].view(np.uint16))
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    own_first = _mutant(
        ("for s in T.serial(SPLIT):", "for s in T.serial(SPLIT - 1):"),
        ("acc[i] = T.float32(0)", "acc[i] = acc[i]"),
        ("W[(((tile * SPLIT + s) * NV", "W[(((tile * SPLIT + (me + 1 + s) % SPLIT) * NV"),
    )
    got = []
    for sms in (1, 2):
        cfg = own_first.parse_config(base, num_sms=sms)
        got.append(_emulate_gemm(own_first.gemm_kernel(M, N, K, cfg), M, N, K, cfg)[0].view(np.uint16))
    assert not np.array_equal(got[0], got[1])


def test_split_k_build_called_with_three_arguments_makes_its_workspace():
    """``build(...)(A, B, C)`` of a split-K configuration: the Compiled makes the zeroed workspace
    once and reuses it (here on the CPU emulator)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    M, N, K = 136, 64, 384
    cfg = hg.parse_config("64x128x64_s3_c1_sk3", num_sms=2)
    gemm = hg.build(M, N, K, cfg)
    assert isinstance(gemm, txlab.Compiled) and gemm.workspace_elems == cfg.workspace_elems(M, N)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    outs = []
    for _ in range(2):
        c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
        old, txlab.config.device = txlab.config.device, "cpu"
        try:
            gemm(a, b, c)
        finally:
            txlab.config.device = old
        got = c.astype(np.float32)
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3
        outs.append(c.view(np.uint16))
    assert np.array_equal(*outs) and len(gemm._workspaces) == 1


@pytest.mark.gpu
@pytest.mark.parametrize(
    "shape,config",
    [
        ((512, 512, 16384), "128x128x64_s6_c2_sk8"),
        ((200, 72, 1000), "64x128x64_s4_c1_sk3"),
        ((1000, 3000, 5000), "128x192x64_s4_c2_sk2"),
        ((300, 1000, 4096), "128x256x64_s4_c2_sk3_np"),
        ((256, 256, 65536), "128x128x64_s6_c2_sk32p"),  # parallel fix-up: 4 tiles x 32 items, one CTA each
        ((512, 512, 16384), "128x128x64_s6_c2_sk8p"),
        ((200, 72, 1000), "64x128x64_s4_c1_sk3p"),  # tails, odd N: single-element stores of each share
        ((256, 256, 65536), "128x128x64_s6_c2_cl1x2_sk32p"),  # split-K in 2-CTA clusters (multicast A)
        ((768, 1024, 16384), "128x128x64_s6_c2_cl2x2_sk2p"),  # 2x2 clusters: both operands multicast
        ((300, 200, 4096), "128x128x64_s4_c2_cl2x1_sk3"),  # clusters, serial fix-up, the M edge's idle CTA
        ((384, 512, 16384), "128x96x64_s7_c2_cl2x1_sk8p_swap"),  # narrow split tiles of C.T in 2-CTA clusters
        ((1088, 176, 34112), "128x96x64_s7_c2_cl1x2_sk7p"),  # N's last 96-wide tile partly empty
        ((1168, 1408, 38080), "128x168x64_s6_c2_sk12k_swap"),  # K order: 924 items in 7 waves, swapped
        ((2064, 640, 58240), "128x128x64_s7_c2_sk3k"),  # K order, 2 waves
        ((2304, 2048, 2048), "128x256x64_s4_c2_sk4pt"),  # split tail: 132 whole tiles, 12 in 4 slices, parallel
        ((2304, 2048, 4096), "128x256x64_s4_c2_sk2t"),  # ... serial fix-up
        ((2048, 2312, 2048), "128x256x64_s4_c2_sk3pt_swap"),  # ... swapped, N's last tile partly empty
    ],
)
def test_split_k_on_gpu_is_right_and_bitwise_reproducible(shape, config):
    import torch

    m, n, k = shape
    cfg = hg.parse_config(config, num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    gemm = hg.build(m, n, k, cfg)
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    ref = a.float() @ b.float().T
    outs = []
    for _ in range(3):
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemm(a, b, c)  # the Compiled's own workspace, made on the first call
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), "some outputs were never written"
        assert ((c.float() - ref).norm() / ref.norm()).item() <= 1e-2
        outs.append(c.view(torch.int16))
        (ws,) = gemm._workspaces.values()
        assert not ws.view(torch.int32)[-_counters(m, n, cfg) :].any(), "a launch must leave its counters zero"
    assert all(torch.equal(outs[0], o) for o in outs[1:]), "split-K results differ run to run"
    # fresh inputs on the same workspace: a fix-up reading the last launch's partials would be caught here
    a2, b2 = torch.randn_like(a), torch.randn_like(b)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm(a2, b2, c)
    torch.cuda.synchronize()
    ref2 = a2.float() @ b2.float().T
    assert ((c.float() - ref2).norm() / ref2.norm()).item() <= 1e-2


# ---- any K: build() pads A and B where TMA cannot load them ----------------------------------------------
def _launched(monkeypatch):
    """What ``Compiled.__call__`` hands ``txlab.run.launch``, recorded instead of launched."""
    import txlab.run

    calls = []
    monkeypatch.setattr(txlab.run, "launch", lambda kernel, *args, **kw: calls.append(args))
    return calls


def test_padded_k_rounds_to_whole_rows():
    """bf16 pads to 128-byte rows (K % 64 == 0), which adds no k-step (the kernel runs ceil(K / 64) of them); a K
    TMA loads as it is (K % 8 == 0) is not padded; e4m3 pads to 16."""
    assert [hg.padded_k(k) for k in (4096, 4104, 4097, 1001, 100, 7, 2047)] == [4096, 4104, 4160, 1024, 128, 64, 2048]
    for k in (7, 100, 1001, 4097, 999):
        assert -(-hg.padded_k(k) // 64) == -(-k // 64)
    assert [hg.padded_k(k, "e4m3") for k in (4097, 1001, 4112)] == [4112, 1008, 4112]


@pytest.mark.parametrize(
    "shape,config,dtype,kp",
    [
        ((136, 64, 380), "64x128x64_s3_c1_sk3", "bf16", 384),  # split-K: the workspace after the padded operands
        ((64, 72, 100), "64x128x64_s3_c1", "bf16", 128),
        ((64, 72, 100), "128x128x128_s3_c2_p2", "e4m3", 112),  # e4m3 rows need K % 16 == 0
    ],
)
def test_padded_k_build_copies_a_and_b_into_zero_padded_buffers(monkeypatch, shape, config, dtype, kp):
    """``build(M, N, K)`` with K % 8 != 0 (e4m3: % 16) compiles for the padded K and its call hands the
    kernel kept (M, Kp) and (N, Kp) buffers whose first K columns are A and B and the rest zero, the same
    buffers every call, and split-K's workspace after them."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    M, N, K = shape
    fp8 = dtype == "e4m3"
    gemm = hg.build(M, N, K, config, dtype=dtype)
    assert isinstance(gemm, txlab.Compiled) and gemm.padded_k == kp == hg.padded_k(K, dtype)
    assert [p["shape"] for p in gemm.entry_params[:2]] == [[M, kp], [N, kp]]
    assert gemm.pad_bytes == (M + N) * K * (1 if fp8 else 2) == hg.pad_bytes(M, N, K, dtype)
    split = "_sk" in config
    assert gemm.workspace_elems == (hg.parse_config(config).workspace_elems(M, N) if split else 0)
    calls = _launched(monkeypatch)
    rng = np.random.default_rng(5)
    el = ml_dtypes.float8_e4m3fn if fp8 else ml_dtypes.bfloat16
    scales = (np.ones(1, np.float32), np.ones(1, np.float32)) if fp8 else ()
    seen = []
    for _ in range(2):
        a = rng.standard_normal((M, K)).astype(el)
        b = rng.standard_normal((N, K)).astype(el)
        c = np.zeros((M, N), ml_dtypes.bfloat16)
        gemm(a, b, c, *scales)
        args = calls[-1]
        assert len(args) == 3 + len(scales) + split
        pa, pb = args[0], args[1]
        assert pa.shape == (M, kp) and pb.shape == (N, kp) and pa.dtype == a.dtype and args[2] is c
        assert np.array_equal(pa[:, :K].view(np.uint8), a.view(np.uint8))
        assert np.array_equal(pb[:, :K].view(np.uint8), b.view(np.uint8))
        assert not pa[:, K:].view(np.uint8).any() and not pb[:, K:].view(np.uint8).any()
        if split:
            w = args[-1]
            assert w.dtype == np.float32 and w.shape == (gemm.workspace_elems,) and not w.any()
        seen.append(args)
    assert seen[0][0] is seen[1][0] and seen[0][1] is seen[1][1], "the padded buffers are made once"
    assert not split or seen[0][-1] is seen[1][-1]
    gemm(a, b, c, *scales, *(() if not split else (np.zeros(gemm.workspace_elems, np.float32),)))
    assert len(calls[-1]) == 3 + len(scales) + split, "a workspace passed in is not doubled"
    with pytest.raises(txlab.InputError, match=rf"A is \(100, {K}\), not \({M}, {K}\)"):
        gemm(np.zeros((100, K), el), b, c, *scales)


@pytest.mark.parametrize(
    "config,dtype,sms",
    [
        ("64x128x64_s3_c1", "bf16", 1),
        (None, "bf16", 132),  # build()'s own choice for 64x72x128
        ("128x128x128_s3_c2_p2", "e4m3", 2),  # padded to 112
    ],
)
def test_padded_k_gemm_on_the_emulator(config, dtype, sms):
    """64 x 72 x 100 end to end on the CPU emulator, called with the unpadded arrays, twice (the second
    call on the kept buffers, with a fresh A), against a numpy reference."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    from txlab.examples import hopper_gemm_fp8 as f8

    M, N, K = 64, 72, 100
    fp8 = dtype == "e4m3"
    if config is not None:
        config = (f8 if fp8 else hg).parse_config(config, num_sms=sms)
    gemm = hg.build(M, N, K, config, dtype=dtype)
    assert gemm.padded_k == (112 if fp8 else 128)
    rng = np.random.default_rng(6)

    def operand(rows):
        x = rng.standard_normal((rows, K)).astype(np.float32)
        return f8.quantize(x) if fp8 else (x.astype(ml_dtypes.bfloat16), None)

    (b, sb) = operand(N)
    for _ in range(2):
        (a, sa) = operand(M)
        c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
        old, txlab.config.device = txlab.config.device, "cpu"
        try:
            gemm(a, b, c, *((sa, sb) if fp8 else ()))
        finally:
            txlab.config.device = old
        got = c.astype(np.float64)
        ref = f8.reference(a, b, sa, sb) if fp8 else a.astype(np.float64) @ b.astype(np.float64).T
        assert not np.isnan(got).any(), "outputs never written"
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3


def test_a_users_tuned_table_is_named_as_theirs(tmp_path):
    """use_tuned_table(path): explain's why named 'the shipped tuned table' measured on an H200 for the user's own."""
    shipped = hg.explain(4096, 4096, 4096)
    assert "the shipped tuned table, measured on an NVIDIA H200" in shipped.why
    path = tmp_path / "mine.json"
    entry = {
        "shape": [1000, 2000, 3008],
        "config": hg.GemmConfig(bn=128, stages=5).__dict__ | {},
        "time_ms": 0.05,
        "tflops": 240.0,
        "ratio": 1.0,
        "baseline": "cublas",
        "rel_error": 2e-3,
    }
    hg.write_tuned_table(path, [entry], device="NVIDIA H100 80GB HBM3", source="a test")
    hg.use_tuned_table(path)
    try:
        mine = hg.explain(1000, 2000, 3008)
        assert mine.winner == hg.GemmConfig(bn=128, stages=5)
        assert f"the tuned table {path}, measured on NVIDIA H100 80GB HBM3" in mine.why and "shipped" not in mine.why
    finally:
        hg.use_tuned_table(None)
    assert "shipped" in hg.explain(4096, 4096, 4096).why


def test_emulate_takes_a_builds_call_arguments():
    """txlab.emulate(gemm, A, B, C) with what the build's own call takes (the unpadded A and B, no workspace):
    before, 'takes 4 argument(s), got 3' / a shape mismatch at the padded K; the kernel's own arguments still work."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    M, N, K = 64, 64, 100  # padded to 128, and split in 2 (serial fix-up)
    gemm = hg.build(M, N, K, hg.parse_config("64x64x64_s3_c1_sk2", num_sms=2))
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((r, K)).astype(ml_dtypes.bfloat16) for r in (M, N))
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    res = txlab.emulate(gemm, a, b, c)
    assert not res.findings and np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref) < 4e-3
    assert gemm.gemm_config == hg.parse_config("64x64x64_s3_c1_sk2", num_sms=2)  # what was built
    assert hg.build(64, 72, 100).gemm_config == hg.tuned_config(64, 72, 128)  # the choice, at the padded K
    c2 = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    txlab.emulate(gemm, *gemm.kernel_args(a, b, c2))  # the kernel's own (padded, with the workspace)
    assert np.array_equal(c2.astype(np.float32), c.astype(np.float32))
    with pytest.raises(txlab.InputError, match=r"A is \(32, 100\), not \(64, 100\)"):
        txlab.emulate(gemm, a[:32], b, c)


@pytest.mark.gpu
@pytest.mark.parametrize("config", ["128x128x64_s6_c2_sk8", "128x128x64_s6_c2_sk8p"])
def test_split_k_gemm_timeline_on_gpu(config):
    """A split-K GEMM's timeline (the workspace handed to the recorder before its buffer): one mainloop, fixup and
    epilogue range per item and consumer, one load_tile range per item, C right."""
    m, n, k = 512, 512, 16384
    cfg, tl = _timeline_on_gpu(m, n, k, config, seed=5)
    items = cfg.work_items(m, n)
    assert items == 16 * 8
    ev = list(tl.events)
    for name in ("mainloop", "fixup", "epilogue"):
        assert sum(1 for e in ev if e["group"] >= 1 and e["name"] == name) == items * cfg.consumers, name
    assert sum(1 for e in ev if e["group"] == 0 and e["name"] == "load_tile") == items


def test_record_timeline_hands_the_recorder_padded_operands(monkeypatch):
    """``record_timeline`` at K % 8 != 0: the recorder launches the executable itself, so it gets the
    (M, Kp) and (N, Kp) copies of A and B, and C as given."""
    import numpy as np

    from txlab import timeline

    seen = []
    monkeypatch.setattr(timeline, "record", lambda kernel, *args, events: seen.append((kernel, args)))
    a, b, c = np.ones((64, 100), np.float32), np.ones((72, 100), np.float32), np.zeros((64, 72), np.float32)
    hg.record_timeline(a, b, c, "64x128x64_s3_c1")
    ((kernel, (pa, pb, pc)),) = seen
    assert kernel.padded_k == 128 and pa.shape == (64, 128) and pb.shape == (72, 128) and pc is c
    assert (pa[:, :100] == 1).all() and not pa[:, 100:].any()


def test_record_timeline_hands_the_recorder_the_split_k_workspace(monkeypatch):
    """A split-K configuration's profiled kernel takes (A, B, C, W, prof): the recorder gets the workspace the build
    keeps (zeroed, its size), and inserts the profiler buffer after it."""
    import numpy as np

    from txlab import timeline

    seen = []
    monkeypatch.setattr(timeline, "record", lambda kernel, *args, events: seen.append((kernel, args)))
    a, b, c = np.ones((256, 2048), np.float32), np.ones((256, 2048), np.float32), np.zeros((256, 256), np.float32)
    hg.record_timeline(a, b, c, "128x128x64_s4_c2_sk4")
    ((kernel, (pa, pb, pc, w)),) = seen
    assert pa is a and pb is b and pc is c
    assert (
        w.dtype == np.float32
        and w.size == kernel.workspace_elems == hg.workspace(256, 256, 2048, "128x128x64_s4_c2_sk4").size
    )
    assert [p["name"] for p in kernel.entry_params] == ["A", "B", "C", "W", "prof"]


def test_padded_k_explain_notes_the_copy_and_its_bytes():
    choice = hg.explain(1000, 3000, 4999)  # padded to whole 128-byte rows: 5056, the same 79 k-steps as 5000
    assert choice.shape == (1000, 3000, 5056) and choice.winner == hg.explain(1000, 3000, 5056).winner
    note = choice.notes[0]
    assert "K=4999" in note and "(1000, 5056) and (3000, 5056)" in note
    assert f"{(1000 + 3000) * 4999 * 2} bytes" in note and "each call copies A and B" in note
    assert not any("each call copies" in n for n in hg.explain(1000, 3000, 5000).notes)
    assert hg.explain(64, 72, 100).shape == (64, 72, 128)  # whole 128-byte rows: the same 2 k-steps as 104
    fp8 = hg.explain(1000, 3000, 4999, dtype="e4m3")
    assert fp8.shape == (1000, 3000, 5008) and fp8.winner == hg.explain(1000, 3000, 5008, dtype="e4m3").winner
    assert f"{(1000 + 3000) * 4999} bytes" in fp8.why and "(3000, 5008)" in fp8.why
    # workspace/args_for take the user's K and size the workspace of build()'s choice for the padded K
    assert hg.tuned_config(512, 512, 16384).split_k > 1
    ws = hg.workspace(512, 512, 16383)
    assert ws is not None and ws.size == hg.tuned_config(512, 512, 16384).workspace_elems(512, 512)
    import numpy as np

    a, b, c = np.zeros((512, 16383), np.float32), np.zeros((512, 16383), np.float32), np.zeros((512, 512))
    assert len(hg.args_for(a, b, c)) == 4


def test_unpadded_k_kernel_errors_say_build_pads():
    with pytest.raises(ValueError, match=r"K=354: .*hopper_gemm.build\(M, N, K\) pads for you .*K=360"):
        hg.kernel_for(256, 256, 354)
    with pytest.raises(ValueError, match=r"build\(M, N, K\) pads for you.*pad A and B with zero columns to K=360"):
        hg.gemm_kernel(256, 256, 354, hg.GemmConfig())
    with pytest.raises(ValueError, match=r"K=1000: .*dtype='e4m3'\) pads for you .*zero columns to K=1008"):
        hg.kernel_for(256, 256, 1000, dtype="e4m3")


def test_a_k_whose_pad_passes_32_bits_is_named_as_given():
    """K = 2**31 - 1 is a valid size, but build() would pad it to 2**31: the error names the K the caller gave and
    the pad, not a K of 2**31 they never passed."""
    for call in (
        lambda: hg.explain(1, 1, 2**31 - 1),
        lambda: hg.tuned_config(1, 1, 2**31 - 1),
        lambda: hg.build(1, 1, 2**31 - 1),
        lambda: hg.workspace(1, 1, 2**31 - 1),
        lambda: hg.explain(1, 1, 2**31 - 9, dtype="e4m3"),
    ):
        with pytest.raises(
            InputError,
            match=r"K=21474836\d\d is not a multiple of (8|16) .* pad it to K=2147483648, "
            r"past the kernel's 32-bit sizes",
        ) as err:
            call()
        assert err.value.param == "K"
    assert hg.padded_k(2**31 - 64) == 2**31 - 64 and hg.padded_k(2**31 - 65) == 2**31 - 64


@pytest.mark.gpu
@pytest.mark.parametrize(
    "shape,dtype",
    [
        ((1000, 3000, 4999), "bf16"),  # padded to 5000: the tuned table's 1000x3000x5000 entry
        ((129, 257, 1001), "bf16"),  # tails in M and N, odd N
        ((64, 128, 7), "bf16"),  # K smaller than one k-step
        ((512, 512, 16383), "bf16"),  # padded to 16384: split-K (the table's choice), the kept workspace too
        ((1000, 3000, 4999), "e4m3"),  # padded to 5008
    ],
)
def test_padded_k_gemm_on_gpu(shape, dtype):
    """``build(M, N, K)`` at K % 8 != 0 (e4m3: % 16) called with the unpadded torch tensors: right
    (rel. error <= 1e-2 against a float reference, nothing unwritten) on two calls with fresh inputs,
    and the pad columns of its kept buffers still zero."""
    import torch

    from txlab.examples import hopper_gemm_fp8 as f8

    m, n, k = shape
    fp8 = dtype == "e4m3"
    gemm = hg.build(m, n, k, dtype=dtype)
    assert gemm.padded_k == hg.padded_k(k, dtype) > k
    if shape == (512, 512, 16383):
        assert gemm.workspace_elems > 0, "this shape's choice is split-K"
    g = torch.Generator(device="cuda").manual_seed(11)
    for _ in range(2):
        if fp8:
            a, sa = f8.quantize(torch.randn(m, k, device="cuda", generator=g) * 3)
            b, sb = f8.quantize(torch.randn(n, k, device="cuda", generator=g))
        else:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
            b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        if fp8:  # torch float8 reaches the executable through kernel_arg, as every FP8 launch here
            gemm.executable(*[f8.kernel_arg(x) for x in gemm.kernel_args(a, b, c, sa, sb)])
            ref = f8.reference(a, b, sa, sb)
        else:
            gemm(a, b, c)
            ref = a.double() @ b.double().T
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), "some outputs were never written"
        assert ((c.double() - ref).norm() / ref.norm()).item() <= 1e-2
    ((pa, pb),) = gemm._pad_buffers.values()
    tail = k * pa.element_size()  # the pad columns' bytes
    assert not pa.view(torch.uint8)[:, tail:].any() and not pb.view(torch.uint8)[:, tail:].any()


# ---- unusual and bad inputs: typed errors that name the fix, never a raw traceback ------------------------------
def _fp8_config():
    from txlab.examples import hopper_gemm_fp8 as f8

    return f8.parse_config("128x128x128_s3_c2_p2")


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: hg.explain(0, 8, 8), r"M=0: GEMM sizes are positive integers"),
        (lambda: hg.explain(8, -1, 8), r"N=-1"),
        (lambda: hg.explain(True, 8, 8), r"M=True"),  # a bool is not a size
        (lambda: hg.explain("8", 8, 8, dtype="e4m3"), r"M='8'"),
        (lambda: hg.explain(8, 8, 2**31), r"K=2147483648: .*32-bit"),
        (lambda: hg.workspace(0, 8, 8), r"M=0"),  # was a ZeroDivisionError in the model
        (lambda: hg.build(8.0, 8, 8), r"M=8.0"),  # was TVM's DiagnosticError from match_buffer
        (lambda: hg.build(8, 8, 0), r"K=0"),  # was a CompileError from the TMA copy's lowering
        (lambda: hg.tuned_config(None, 8, 8), r"M=None"),
        (lambda: hg.explain(64, 64, 64, num_sms=0), r"num_sms=0: .*positive integer"),
        (lambda: hg.explain(64, 64, 64, num_sms=-3, dtype="e4m3"), r"num_sms=-3"),
        (lambda: hg.explain(64, 64, 64, dtype="fp16"), r"'bf16' or 'e4m3'"),
        (lambda: hg.build(64, 64, 64, {"bn": 128}), r"GemmConfig\(\*\*d\)"),
        (lambda: hg.build(64, 64, 64, 42), r"pass a GemmConfig, its name"),
        (lambda: hg.gemm_kernel(64, 64, 64, {"bn": 128}), r"pass a GemmConfig"),
        (lambda: hg.build(64, 64, 64, {"bn": 128}, dtype="e4m3"), r"pass an Fp8GemmConfig"),
        (lambda: hg.build(64, 64, 64, _fp8_config()), r"for e4m3 operands, not bf16: pass dtype='e4m3'"),
        (lambda: hg.workspace(64, 64, 64, "garbage"), r"BMxBNx64"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(num_sms=0)), r"num_sms=0"),  # was a ZeroDivisionError
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(num_sms=-1)), r"num_sms=-1"),  # built a grid of -1 CTAs
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(l2_group=0)), r"l2_group=0"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(producer_regs=7)), r"setmaxnreg takes a multiple of 8"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(consumers=1, consumer_regs=300)), r"consumer_regs=300"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(stages=2.5)), r"stages=2.5: an integer"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(bn="128")), r"bn='128': an integer"),
        (lambda: hg.build(64, 64, 64, hg.GemmConfig(persistent="no")), r"persistent='no': True or False"),
        (lambda: hg.simple_kernel(64, 64, 64, bn=7), r"bn=7"),
        (lambda: hg.reference(np.ones((4, 8)), np.ones((8, 4))), r"A \(M, K\) and B \(N, K\)"),
    ],
)
def test_unusual_inputs_are_input_errors_that_name_the_fix(call, match):
    """Each of these was a raw ZeroDivisionError, TypeError, AttributeError, TVM DiagnosticError, an untyped
    ValueError or, for num_sms=-1, a kernel built for a negative grid."""
    with pytest.raises(InputError, match=match):
        call()


def test_gemm_model_refuses_an_unpadded_k_with_an_input_error():
    from txlab.examples import gemm_model as gm

    with pytest.raises(InputError, match="hopper_gemm.explain and build take any K"):
        gm.explain(64, 64, 100)
    assert hg.explain(64, 64, 100).winner.name  # hopper_gemm's own explain pads


@pytest.mark.parametrize("arch", ["sm_90", "sm_100a", "sm_80"])
def test_build_refuses_an_arch_without_wgmma(arch):
    """sm_90 (no 'a') and sm_100a have no wgmma/setmaxnreg: before, nvcc's error came with a hint about tcgen05, or
    (sm_80) a lowering error from the TMA copy."""
    with pytest.raises(ArchError, match=r"only sm_90a has"):
        hg.build(64, 64, 64, "64x128x64_s3_c1", arch=arch)


@pytest.mark.parametrize("config", ["128x128x64_s4_c2", "64x128x64_s7_c1_stg", "128x128x64_s4_c2_swap"])
@pytest.mark.parametrize("n", [65537, 40000])  # single-element stores; bf16 pairs (their word index 32-bit before)
def test_outputs_past_2_31_elements_store_with_64_bit_indices(config, n):
    """65537 x n outputs have more than 2**31 - 1 elements: every store's flat index into C is computed in 64 bits
    (it was ``row * N + col`` in int32, which wraps: stores to wrong addresses, no error; pairs of bf16 got an int64
    word index only past 2**32 elements, where TVM widened the uint32 view's extent)."""
    from txlab.compiler import cuda_source

    src = cuda_source(hg.gemm_kernel(65537, n, 64, hg.parse_config(config)), "sm_90a")
    stores = [ln for ln in src.splitlines() if "C_ptr)[" in ln or "C_ptr[" in ln]
    # the direct epilogue's 16-byte stores (N % 8 == 0): *(uint4*)(((uint*)C_ptr) + index) = ...
    vec = [ln for ln in src.splitlines() if "*(uint4*)(((uint*)C_ptr) +" in ln]
    assert stores or vec
    assert all("(int64_t)" in ln.split("] =")[0] for ln in stores), stores[:2]
    assert all("(int64_t)" in ln.split(") = ")[0] for ln in vec), vec[:2]


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((130, 250, 72), "128x128x64_s3_c2", 2),  # pairs
        ((130, 251, 72), "64x128x64_s3_c1", 2),  # single elements
        ((131, 250, 72), "128x128x64_s3_c2_stg", 2),  # staged pairs
        ((131, 251, 72), "128x128x64_s3_c2_stg", 2),  # staged single elements
        ((136, 300, 200), "128x160x64_s3_c2_swap", 3),  # transposed stores
        ((200, 72, 1000), "64x128x64_s4_c1_sk3", 2),  # split-K's serial fix-up stores through store_direct
    ],
)
def test_64_bit_store_indices_on_the_emulator(monkeypatch, shape, config, sms):
    """The 64-bit index path (here for every size) stores every element where the 32-bit one does."""
    monkeypatch.setattr(hg, "WIDE_INDEX", 1)
    cfg = hg.parse_config(config, num_sms=sms)
    kernel = hg.gemm_kernel(*shape, cfg)
    assert "int64" in kernel.script()
    if cfg.split_k > 1:
        _emulate_gemm(kernel, *shape, cfg)
    else:
        _emulate_right(shape, config, sms, seed=9)


def test_choices_at_a_k_tma_cannot_load_and_their_explanations_agree():
    """tuned_config(1000, 3000, 4999) returned GemmConfig() (invalid at that K) where build and explain choose for
    padded_k(K); the printed explanation left out its notes (the copy each call makes); num_sms was ignored for a
    shape the 132-SM table holds; kernel_for's error named K=104 where build pads to 128."""
    assert hg.tuned_config(1000, 3000, 4999) == hg.explain(1000, 3000, 4999).winner == hg.tuned_config(1000, 3000, 5056)
    text = str(hg.explain(1000, 3000, 4999))
    assert "note: K=4999 is not a multiple of 8" in text and "38.1 MiB" in text
    from txlab.display import gemm_choice_html

    page = gemm_choice_html(hg.explain(1000, 3000, 4999))
    assert "each call copies A and B" in page and "predicted us" in page and "rank us" in page
    assert hg.explain(4096, 4096, 4096).source.startswith("tuned table")
    assert hg.explain(4096, 4096, 4096, num_sms=3).source == "model"
    with pytest.raises(InputError, match="builds for K=128"):
        hg.kernel_for(64, 64, 100)
    with pytest.raises(InputError, match="name is a string"):
        hg.parse_config(None)


def test_the_parallel_fix_up_is_emulated_as_built():
    """Split-K's parallel fix-up waits for the tile's other items: its CTAs run resident together on the emulator
    (txlab.emulator.resident), as on a GPU, where they once ran one after another (build(64, 64, 4096)'s own choice,
    sk32p, spun for minutes) and a serial twin was emulated in their place. C is the serial fix-up's bit for bit (the
    same partials summed in the same split order), and the workspace's counters are back at zero."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.emulator import emulate

    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
    outs, stored = [], []
    for prefix, name in (("", "64x64x64_s4_c1_sk2p"), ("fst:", "64x64x64_s4_c1_sk2p"), ("", "64x64x64_s4_c1_sk2")):
        with hg.built_as_before(*[prefix] if prefix else []):
            c = hg.build(64, 64, 256, name)
        out = np.full((64, 64), np.nan, ml_dtypes.bfloat16)
        w = c._workspace(a)
        res = emulate(c, a, b, out, w)
        assert res.ok, res.summary()
        assert (res.stats.get("resident") is not None) == name.endswith("p"), res.stats
        assert not w.view(np.int32)[2 * 64 * 64 :].any()  # the tile's counters, after its two partials
        stored.append(np.count_nonzero(w[: 2 * 64 * 64]))  # partial values written (none is exactly zero here)
        outs.append(out.view(np.uint16).copy())
    # each item keeps the half it sums itself in registers (_FIX_OWN); fst: and the serial fix-up store all of it
    assert stored == [64 * 64, 2 * 64 * 64, 2 * 64 * 64], stored
    assert (outs[0] == outs[1]).all()
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert np.linalg.norm(out.astype(np.float32) - ref) / np.linalg.norm(ref) < 4e-3
    assert (outs[0] == outs[2]).all()
    sk32 = hg.build(64, 64, 4096)
    assert sk32.gemm_config.fixup == "parallel"


@pytest.mark.parametrize(
    "call",
    [
        lambda: hg.padded_k(-3),
        lambda: hg.padded_k(3.5),
        lambda: hg.pad_bytes(-1, 2, 3),
        lambda: __import__("txlab.examples.blackwell_gemm", fromlist=["x"]).explain(True, 1, 8),
        lambda: __import__("txlab.examples.hopper_attention", fromlist=["x"]).explain(1, 8, 8, 1024, 1024, 128.0),
    ],
    ids=["padded_k-negative", "padded_k-float", "pad_bytes-negative", "blackwell-bool", "attention-float-head_dim"],
)
def test_the_example_kernels_size_helpers_refuse_what_is_not_a_size(call):
    """padded_k(-3) gave 0 and padded_k(3.5) 64.0, pad_bytes(-1, 2, 3) 6, Blackwell's explain took True for M and
    attention's took head_dim=128.0: each is an InputError naming the size now."""
    with pytest.raises(InputError):
        call()


@pytest.mark.parametrize(
    "argv,match",
    [
        (["--shapes", "4096x4096"], r"--shapes '4096x4096': each shape is MxNxK"),  # was an unpacking traceback
        (["--shapes", "64x64x0,128x128x128"], r"--shapes '64x64x0'"),
        (["--shapes", "64xKx64"], r"--shapes '64xKx64'"),  # was int()'s ValueError
        (["--phases", "table,tabel"], r"--phases 'table,tabel': use some of table, sweep, repro, diag"),
        (["--phases", ""], r"--phases ''"),  # no phase ran: a KeyError at the summary, after the compiles
        (["--rounds", "0"], r"--rounds 0: at least 1"),  # every row a median of nothing
    ],
)
def test_gemm_h200_refuses_bad_arguments_before_the_gpu(argv, match, monkeypatch, capsys):
    """``scripts/gemm_h200.py`` checks its arguments first: a typo ends it with a usage error before it looks for a
    GPU or compiles, not with a traceback after (or an empty run written over the results file)."""
    import importlib.util
    import pathlib
    import re
    import sys

    path = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "gemm_h200.py"
    spec = importlib.util.spec_from_file_location("gemm_h200_args_under_test", path)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)
    with pytest.raises(SystemExit) as exit_:
        script.main(argv)
    assert exit_.value.code == 2 and re.search(match, capsys.readouterr().err)


@pytest.mark.parametrize(
    "call,match",
    [
        # A has 2**34 elements: a CompileError from inside the lowering
        (lambda: hg.build(2**31 - 1, 1, 8), r"A \(2147483647, 8\) has 17179869176 elements, .*32-bit"),
        (lambda: hg.kernel_for(2, 2**28 + 64, 8), r"B \(268435520, 8\) has 2147484160 elements.* along N or K"),
        # rows of 2**31 bits or more: TVM's pitch in bits wrapped (K = 2**30: built with a pitch of 0 bytes,
        # 2**28 + 64: 128 bytes)
        (lambda: hg.build(8, 8, 2**30), r"K=1073741824: rows of A and B 2147483648 bytes long"),
        (lambda: hg.build(2, 2, 2**28 + 64, "64x64x64_s4_c1"), r"K=268435520: rows of A and B 536871040 bytes"),
        (lambda: hg.gemm_kernel(1, 1, 2**27, hg.GemmConfig()), r"K=134217728: .*under 2\*\*31 bits"),
        (lambda: hg.build(2, 2, 2**28, dtype="e4m3"), r"K=268435456: rows of A and B 268435456 bytes"),
        (lambda: hg.simple_kernel(8, 8, 2**30), r"K=1073741824"),
    ],
)
def test_operands_the_kernel_cannot_address_are_refused_up_front(call, match):
    """Each size under 2**31 is not enough: A and B are indexed with 32-bit integers and their TMA descriptors' row
    pitch is computed in bits in 32 bits. Shapes past either are an InputError from build and the kernels, not a
    lowering error or a kernel built with a wrapped pitch; explain still ranks them, and says build() refuses them."""
    with pytest.raises(InputError, match=match):
        call()
    assert hg.explain(2**31 - 1, 1, 8).notes[0].startswith("build() refuses 2147483647x1x8: A (2147483647, 8) has")
    assert "build() refuses 2x2x268435456: K=268435456" in hg.explain(2, 2, 2**28, dtype="e4m3").why
    assert not any("refuses" in n for n in hg.explain(1, 1, 2**27 - 64).notes)


def test_the_largest_k_the_descriptors_address_builds_with_its_pitch():
    """K = 2**27 - 64 (rows of 2**28 - 128 bytes) is the last bf16 K under the pitch limit: it builds, and A's tensor
    map gets that pitch. Where N reaches 2**27 the TMA epilogue's pitch of C would wrap: the model stores C directly."""
    g = hg.build(1, 1, 2**27 - 64, "64x64x64_s4_c1")
    encode = [ln for ln in str(g.lowered).splitlines() if "tensormap_encode_tiled(A_tensormap" in ln]
    assert encode and f"{2**27 - 64}, 1, {2**28 - 128}, 64, 8" in encode[0]
    with pytest.raises(InputError, match=r"N < 2\*\*27"):
        hg.GemmConfig(epilogue="tma").check_shape(8, 2**27, 8)
    assert hg.explain(8, 2**27, 8).winner.epilogue == "direct"
    assert hg.explain(8, 2**27 - 8, 8).winner.epilogue == "tma"  # under it, as before


@pytest.mark.parametrize("shape, config", [((3, 5, 7), None), ((128, 128, 1024), "128x128x64_s4_c2_sk4")])
def test_txlab_check_takes_a_build_with_the_arguments_its_call_takes(shape, config):
    """A build at a padded K (A and B copied into padded buffers) or with split-K (a workspace appended) is called
    with (A, B, C); txlab.check said 'A needs (3, 64)' or 'takes 4 argument(s)'. It checks them as the call does."""
    import ml_dtypes

    M, N, K = shape
    kern = hg.build(M, N, K, config, arch="sm_90a")
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    ref = lambda a, b, c: hg.reference(a, b)  # noqa: E731 - the reference of the call's operands
    res = txlab.check(kern, (A, B, np.zeros((M, N), ml_dtypes.bfloat16)), ref, rtol=2e-2, atol=5e-2, device="cpu")
    assert res.ok and list(res.outputs) == ["C"], res.summary()
