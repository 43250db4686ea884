"""The Blackwell GEMM example (txlab.examples.blackwell_gemm): compiles for sm_100a with tcgen05
in its PTX and SASS; the pool planner shows its TMEM plan; the pipeline reader gets both of its
pipelines (the TMA/tcgen05 ring, the TMEM accumulators) from the code; it runs on the CPU emulator
over its whole grid within bf16 rounding of numpy; its profiled twin gives an emulated timeline."""

from __future__ import annotations

import numpy as np
import pytest

from txlab.errors import InputError
from txlab.examples import blackwell_gemm as bg

CG1 = bg.BlackwellGemmConfig()
CG2 = bg.BlackwellGemmConfig(cta_group=2)


@pytest.mark.parametrize("cfg", [CG1, CG2], ids=["cta_group1", "cta_group2"])
def test_compiles_for_sm100a_with_tcgen05(cfg):
    c = bg.build(256, 256, 128, cfg)
    cg = cfg.cta_group
    assert ".target sm_100a" in c.ptx
    for ins in (
        f"tcgen05.alloc.cta_group::{cg}",
        f"tcgen05.mma.cta_group::{cg}.kind::f16",
        f"tcgen05.commit.cta_group::{cg}",
        "tcgen05.ld.sync.aligned.32x32b.x32.b32",
        "tcgen05.wait::ld",
        f"tcgen05.dealloc.cta_group::{cg}",
    ):
        assert ins in c.ptx, ins
    if cg == 2:
        assert ".multicast::cluster" in c.ptx  # the leader's commits reach both CTAs
        assert "mbarrier::complete_tx::bytes.cta_group::2" in c.ptx  # TMA onto the leader's barrier
    # the tensor-core MMA, its commit and the TMEM load made it into the machine code
    for op in ("UTCHMMA", "UTCBAR", "LDTM", "UTMALDG"):
        assert op in c.sass, op


def test_tmem_plan_is_the_kernels():
    from txlab import pools

    plan = pools.layout(bg.gemm_kernel(300, 200, 136, CG1), arch="sm_100a")
    by = {a["name"]: a for a in plan.allocations}
    assert (by["acc0"]["offset"], by["acc0"]["nbytes"]) == (0, 128)  # TMEM offsets/sizes are columns
    assert (by["acc1"]["offset"], by["acc1"]["nbytes"]) == (128, 128)
    assert by["acc0"]["lanes"] == [[0, 128]]
    assert plan.tmem_alloc_columns == CG1.tmem_columns == 256 and plan.tmem_columns == 256
    assert by["As"]["nbytes"] == CG1.stages * 128 * 64 * 2 and by["As"]["swizzle"].startswith("128B")
    assert plan.errors == [] and plan.tmem_cta_group == 1 and plan.views == []

    pair = pools.layout(bg.gemm_kernel(300, 200, 136, CG2), arch="sm_100a")
    names = [a["name"] for a in pair.allocations]
    # MBarrier.remote_view(0) declares a buffer over the leader's barriers (mapa): not an allocation
    assert not any(a["pool"] == "remote_mbar_ptr" for a in pair.allocations), names
    assert [v["remote"] for v in pair.views] == [True]
    assert pair.tmem_cta_group == 2 and "cta_group::2 pair" in pair.summary()
    assert pair["Bs"]["shape"] == [CG2.stages, 64, 64]  # each CTA loads half of B


@pytest.mark.parametrize("cfg", [CG1, CG2], ids=["cta_group1", "cta_group2"])
def test_pipelines_read_from_the_code(cfg):
    from txlab import pipelines

    k = bg.gemm_kernel(300, 200, 136, cfg)
    ring, acc = pipelines.find_pipelines(k)
    # the two Pipelines' unnamed barriers are told apart (by pool offset), named from the source line
    assert (ring.full_buffer, ring.empty_buffer) == ("ab.full", "ab.empty")
    assert (ring.full, ring.empty, ring.stages) == ("tma", "tcgen05", cfg.stages)
    assert (ring.producer_phase, ring.consumer_phase) == (1, 0)
    assert (ring.arrivals_full, ring.arrivals_empty) == (1, 1)  # expect_tx; one tcgen05.commit per slot
    assert ring.expect_tx_bytes == ring.tx_delivered == cfg.tx_bytes
    assert len(ring.copies) == 2 and len(ring.lines["arrive_empty"]) == 1
    assert (acc.full, acc.empty, acc.stages, acc.tx_bytes) == ("tcgen05", "mbar", 2, None)
    assert (acc.producer_phase, acc.consumer_phase) == (1, 0)
    # one arrival per epilogue warp, of both CTAs with a pair (remote arrives on the leader)
    assert acc.arrivals_full == 1 and acc.arrivals_empty == acc.init_empty == 4 * cfg.cta_group
    assert ring.simulate(6).ok and acc.simulate(6).ok


def test_config_errors_are_typed():
    with pytest.raises(InputError, match="bn=48"):
        bg.gemm_kernel(128, 128, 64, bg.BlackwellGemmConfig(bn=48))
    with pytest.raises(InputError, match="multiple of 64"):
        bg.BlackwellGemmConfig(bn=96, cta_group=2).validate()
    with pytest.raises(InputError, match="cta_group=4"):
        bg.BlackwellGemmConfig(cta_group=4).validate()
    with pytest.raises(InputError, match="K % 8"):
        bg.gemm_kernel(128, 128, 60)


def test_numpy_integer_sizes_are_sizes():
    """Before: 'M=256: GEMM extents must be positive integers' for np.int64(256)."""
    assert bg.explain(np.int64(256), np.int32(256), np.int64(512)) == bg.explain(256, 256, 512)
    assert bg.gemm_kernel(np.int64(128), 128, np.int64(64)).script() == bg.gemm_kernel(128, 128, 64).script()
    with pytest.raises(InputError, match=r"M=128.0"):
        bg.explain(128.0, 128, 64)


def test_says_it_is_a_worked_example():
    assert "not a benchmark" in bg.__doc__ and "a worked example" in bg.explain(300, 200, 136)
    text = bg.explain(300, 200, 136, bg.BlackwellGemmConfig(num_sms=2))
    assert "3 x 2 = 6 tiles over 2 persistent cluster(s)" in text and "256 of 256 allocated columns" in text


def _emulate(M, N, K, cfg):
    import txlab

    a, b, c = bg.inputs(M, N, K, seed=M + N + K)
    res = txlab.emulate(bg.gemm_kernel(M, N, K, cfg), a, b, c, arch="sm_100a")
    return res, c.astype(np.float32), bg.reference(a, b)


PAIR2 = dict(cta_group=2, num_sms=2)  # one cluster of two CTAs: the pair walks every tile


@pytest.mark.parametrize(
    "shape,cfg",
    [
        ((256, 256, 128), CG1),  # whole tiles, one tile per CTA
        ((300, 200, 136), bg.BlackwellGemmConfig(num_sms=2)),  # ragged M, N, K; 2 persistent CTAs, 3 tiles each
        ((130, 72, 24), bg.BlackwellGemmConfig(bn=64, stages=2, num_sms=1)),  # K < one k step, one CTA, 4 tiles
        ((256, 256, 128), CG2),  # cta_group::2: two 2-CTA clusters, one 256 x 128 tile each
        ((300, 200, 136), bg.BlackwellGemmConfig(**PAIR2)),  # ragged, one pair over 4 tiles
        ((130, 72, 24), bg.BlackwellGemmConfig(bn=64, stages=2, **PAIR2)),  # K < 64, bn = 64 (32 B rows per CTA)
    ],
    ids=[
        "256x256x128",
        "300x200x136_persistent",
        "130x72x24_one_cta",
        "pair_256x256x128",
        "pair_300x200x136_persistent",
        "pair_130x72x24",
    ],
)
def test_emulator_whole_grid_within_bf16_rounding(shape, cfg):
    import ml_dtypes

    res, out, ref = _emulate(*shape, cfg)
    assert res.ok, res.summary()
    assert res.stats["ctas_run"] == res.stats["ctas_in_grid"] == cfg.ctas(*shape[:2])  # the whole grid
    atol, rtol = bg.tolerance()
    np.testing.assert_allclose(out, ref, atol=atol, rtol=rtol)
    assert np.mean(out == ref.astype(ml_dtypes.bfloat16).astype(np.float32)) > 0.99  # mostly exactly bf16(ref)


def test_emulated_timeline_is_labelled_emulated_work():
    a, b, c = bg.inputs(300, 200, 136)
    tl = bg.emulated_timeline(a, b, c, bg.BlackwellGemmConfig(num_sms=2))
    assert tl.meta["emulation"].ok and tl.clock_unit == "warp-instr" and tl.emulated
    assert "not time" in tl.provenance
    ev = list(tl.events)
    # 2 CTAs x 3 roles, 3 tiles each: one range per tile and role
    assert sorted({(e["block"], e["group"]) for e in ev}) == [(b_, g) for b_ in (0, 1) for g in (0, 1, 2)]
    assert [sum(e["name"] == n for e in ev) for n in ("load_tile", "mma_tile", "epilogue")] == [6, 6, 6]
    # within a CTA, the MMA of a tile ends before its epilogue does
    for blk in (0, 1):
        mma = sorted(e["end_ns"] for e in ev if e["block"] == blk and e["name"] == "mma_tile")
        epi = sorted(e["end_ns"] for e in ev if e["block"] == blk and e["name"] == "epilogue")
        assert all(m < x for m, x in zip(mma, epi))
    fig = tl.plot()
    assert "emulated work" in fig.axes[0].get_xlabel() and "EMULATED" in fig.axes[0].get_title()
    assert np.abs(c.astype(np.float32) - bg.reference(a, b)).max() < 0.2


def test_build_for_another_arch_is_an_arch_error_before_compiling():
    """``build(..., arch="sm_90a")`` was an nvcc error placed on a line of this module's docstring (the instruction
    comes from TVM's library code); it is an ArchError naming sm_100a now, before anything compiles."""
    from txlab.errors import ArchError

    for arch in ("sm_90a", "sm_90"):
        with pytest.raises(ArchError, match="only sm_100a has"):
            bg.build(64, 64, 64, arch=arch)
