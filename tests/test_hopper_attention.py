"""FlashAttention forward for Hopper (txlab.examples.hopper_attention): configuration errors name the
problem and the fix; the kernel builds for sm_90a with its two wgmma shapes, TMA loads and stores,
setmaxnreg and no spills; the CPU emulator runs small instances (ragged, causal with rows that see
no key, GQA, head_dim 128, each overlap on and off) and matches the float64 reference; the
GPU-marked tests check fresh random inputs against the fp32 torch reference on an H100/H200."""

from __future__ import annotations

import numpy as np
import pytest

from txlab.errors import InputError
from txlab.examples import hopper_attention as ha


# ---- configuration and shape errors ---------------------------------------------------------
@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(bn=72), "multiple of 16"),
        (dict(bn=512), "multiple of 16"),
        (dict(consumers=3), "1 or 2 consumer"),
        (dict(consumers=1, pingpong=True), "pingpong=True orders two"),
        (dict(stages=0), "at least 1 stage"),
        (dict(scheduler="random"), "'auto', 'linear' or 'lpt'"),
        (dict(num_sms=0), "positive number"),
    ],
)
def test_config_errors_name_the_fix(kw, match):
    with pytest.raises(InputError, match=match):
        ha.AttentionConfig(**kw).validate()


def test_config_limits_per_head_dim():
    ha.AttentionConfig(bn=128, stages=2).validate(128)
    ha.AttentionConfig(bn=128, stages=4).validate(64)
    with pytest.raises(InputError, match="shared memory"):
        ha.AttentionConfig(bn=128, stages=3).validate(128)  # 32 + 3 x 64 + 32 KiB > 227 KiB
    with pytest.raises(InputError, match="registers"):
        ha.AttentionConfig(bn=256, stages=1).validate(128)
    assert ha.AttentionConfig().smem_bytes(128) == (2 * 128 + 2 * 2 * 128) * 128 * 2 + 8 * (2 + 8)


@pytest.mark.parametrize(
    "args,match",
    [
        ((1, 32, 6, 256, 256, 64), "does not divide"),
        ((1, 8, 8, 256, 256, 96), "head_dim"),
        ((0, 8, 8, 256, 256, 64), "batch"),
        ((1, 8, 8, 256, 0, 64), "seqlen_kv"),
    ],
)
def test_shape_errors(args, match):
    with pytest.raises(InputError, match=match):
        ha.attention_kernel(*args)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: ha.attention_kernel(1, 1, 1, 64, 64, 64, False, {"bn": 64}), r"AttentionConfig\(\*\*d\)"),
        (lambda: ha.attention_kernel(1, 1, 1, 64, 64, 64, False, "128x64_s2"), r"pass an AttentionConfig or None"),
        (lambda: ha.attention_kernel(1, 1, 1, 64, 64, 64, False, ha.AttentionConfig(pingpong="x")), r"pingpong='x'"),
        (lambda: ha.attention_kernel(1, 1, 1, 64, 64, 64, False, ha.AttentionConfig(overlap="no")), r"overlap='no'"),
        (lambda: ha.attention_kernel(1, 1, 1, 64, 64, 64, "yes"), r"causal='yes'"),
        (lambda: ha.explain(True, 1, 1, 64, 64, 64), r"batch=True"),
        (lambda: ha.explain(1, 1, 1, 2**31, 64, 64), r"seqlen_q=2147483648: .*32-bit"),
        (lambda: ha.explain(1, 1, 1, 64, 64, 64, num_sms=0), r"num_sms=0"),  # was a ZeroDivisionError
        (lambda: ha.explain(1, 1, 1, 64, 64, 64, num_sms=-1), r"num_sms=-1"),  # was numpy's 'minlength' error
        (lambda: ha.explain(1, 1, 1, 64, 64, 64, num_sms=1.5), r"num_sms=1.5"),  # was a config of 1.5 SMs
        (lambda: ha.build(1, 1, 1, 64, 64, 64, False, {"bn": 64}), r"pass an AttentionConfig"),
    ],
)
def test_unusual_inputs_are_input_errors_that_name_the_fix(call, match):
    """Before: AttributeError (a dict or str config), TVM's DiagnosticError (non-bool flags), a ZeroDivisionError or
    numpy's error (num_sms), or silently accepted (a bool batch, a string causal, 1.5 SMs)."""
    with pytest.raises(InputError, match=match):
        call()


def test_numpy_integer_sizes_are_sizes():
    """A shape taken from numpy (np.int64) is a shape: before, 'batch=2: a positive int' refused it."""
    plain = ha.explain(2, 8, 8, 1024, 1024, 128)
    got = ha.explain(*(np.int64(v) for v in (2, 8, 8, 1024, 1024, 128)))
    assert got.winner == plain.winner and all(type(v) is int for v in got.shape[:6])
    f = ha.attention_kernel(np.int32(1), 2, 2, np.int64(128), 128, np.int64(64))
    assert f.script() == ha.attention_kernel(1, 2, 2, 128, 128, 64).script()


@pytest.mark.parametrize(
    "shapes",
    [
        ((1, 4, 5, 8), (1, 3, 3, 8), (1, 3, 3, 8)),  # kv_heads does not divide heads
        ((1, 4, 5, 8), (1, 2, 3, 4), (1, 2, 3, 8)),  # head_dim differs
        ((4, 5, 8), (2, 3, 8), (2, 3, 8)),  # no batch axis
        ((1, 4, 5, 8), (1, 2, 3, 8), (1, 2, 4, 8)),  # k and v differ
    ],
)
def test_reference_names_the_layout(shapes):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(InputError, match="q is \\(batch, heads, seqlen_q, head_dim\\)"):
        ha.reference(q, k, v)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_build_refuses_an_arch_without_wgmma(arch):
    """Before: nvcc's "not supported on .target" with a hint about tcgen05 (sm_90), or about wgmma (sm_100a)."""
    from txlab.errors import ArchError

    with pytest.raises(ArchError, match=r"only sm_90a has"):
        ha.build(1, 1, 1, 64, 64, 64, False, arch=arch)


def test_flops_convention():
    """4·B·H·D per (query, key) pair computed: causal, the S·(S + 1)/2 the bottom-right mask leaves at Sq = Skv
    (about half; tests/test_attention_model_inputs.py has Sq != Skv)."""
    assert ha.flops(4, 32, 4096, 4096, 128, False) == 4 * 4 * 32 * 4096 * 4096 * 128
    assert ha.flops(4, 32, 4096, 4096, 128, True) == 4 * 4 * 32 * (4096 * 4097 // 2) * 128


def test_numpy_reference_masks_rows_that_see_no_key():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in ((1, 2, 6, 8), (1, 1, 3, 8), (1, 1, 3, 8)))
    o, lse = ha.reference(q, k, v, causal=True)  # bottom-right: query i sees keys j <= i - 3
    assert np.isneginf(lse[0, :, :3]).all() and np.isfinite(lse[0, :, 3:]).all()
    assert not np.isnan(o).any() and (o[0, :, :3] == 0).all()
    s = q[0, 1, 5] @ k[0, 0].T / np.sqrt(8)
    p = np.exp(s - s.max())
    assert np.allclose(o[0, 1, 5], (p / p.sum()) @ v[0, 0])
    assert np.isclose(lse[0, 1, 5], np.log(np.exp(s).sum()))


# ---- the build ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "shape,causal,cfg",
    [
        ((4, 32, 32, 4096, 4096, 128), True, ha.AttentionConfig()),
        ((2, 16, 4, 1000, 3000, 64), False, ha.AttentionConfig(bn=128, stages=3, consumers=1, pingpong=False)),
    ],
)
def test_builds_for_sm90a(shape, causal, cfg):
    from txlab.sass import summary

    c = ha.build(*shape, causal, cfg)
    s = summary(c)
    d, bn = shape[5], cfg.bn
    assert sorted(s["hgmma_shapes"]) == sorted({f"HGMMA.64x{bn}x16.F32.BF16", f"HGMMA.64x{d}x16.F32.BF16"}), s
    assert s["setmaxnreg"] == 2, "producer dec + consumer inc"
    # at 24 registers the producer keeps two tile-level values on the stack (FA3's 24/240 split); nothing
    # inside the K/V loop
    assert s["spill_store_bytes"] <= 16 and s["stack_bytes"] <= 8, s
    # setmaxnreg.inc waits for registers the other warpgroups freed: the launch's register file
    # (ptxas' count x threads) must hold the producer's and every consumer's target, or it hangs
    regs = c.resources[c.kernels[0]]["registers"]
    assert 128 * (cfg.producer_regs() + cfg.consumers * cfg.consumer_regs()) <= regs * cfg.threads, regs
    assert c.instructions(r"^UTMALDG\.4D") and c.instructions(r"^UTMASTG\.4D")
    assert c.instructions(r"^MUFU\.EX2"), "exp2 on the SFU"
    launch = c.launch[c.kernels[0]]
    tasks = shape[0] * shape[1] * -(-shape[3] // cfg.bm)
    assert launch["block"][0] == cfg.threads and launch["grid"][0] == min(cfg.num_sms, tasks)
    assert launch["dynamic_smem_bytes"] >= cfg.smem_bytes(d)
    if cfg.pingpong:
        assert c.instructions(r"^BAR\.ARV"), "the ping-pong turn is passed with bar.arrive"


# ---- the CPU emulator -----------------------------------------------------------------------
def _emulate(shape, causal, cfg, seed=0):
    import ml_dtypes

    import txlab

    b, h, hk, sq, sk, d = shape
    rng = np.random.default_rng(seed)
    bf = ml_dtypes.bfloat16
    q = rng.standard_normal((b, h, sq, d), dtype=np.float32).astype(bf)
    k = rng.standard_normal((b, hk, sk, d), dtype=np.float32).astype(bf)
    v = rng.standard_normal((b, hk, sk, d), dtype=np.float32).astype(bf)
    o = np.full((b, h, sq, d), np.nan, bf)
    lse = np.full((b, h, sq), np.nan, np.float32)
    res = txlab.emulate(ha.attention_kernel(*shape, causal, cfg), q, k, v, o, lse, arch="sm_90a")
    assert res.ok, res
    ro, rl = ha.reference(q, k, v, causal)
    of = o.astype(np.float32)
    assert not np.isnan(of).any() and not np.isnan(lse).any()
    fin = np.isfinite(rl)
    assert np.array_equal(np.isneginf(lse), ~fin)
    assert np.linalg.norm(of - ro) / np.linalg.norm(ro) <= 1e-2
    assert np.abs(lse[fin] - rl[fin]).max() <= 1e-3
    return lse


def test_emulated_attention_matches_reference():
    """One 128-row tile, two key blocks, ping-pong and intra-warpgroup overlap on (the default)."""
    _emulate((1, 1, 1, 128, 128, 64), False, ha.AttentionConfig(bn=64))


def test_emulated_head_dim_256():
    """head_dim 256 (48-row key blocks, 224 KiB of shared memory): two key blocks, the last ragged."""
    cfg = ha.default_config(256, False)
    assert cfg.smem_bytes(256) <= ha.SMEM_LIMIT
    _emulate((1, 1, 1, 128, 96 - 7, 256), False, cfg)


@pytest.mark.slow
def test_emulated_head_dim_256_causal_gqa_ragged():
    _emulate((1, 2, 1, 130, 190, 256), True, ha.default_config(256, True))


@pytest.mark.slow
def test_emulated_causal_rows_that_see_no_key():
    """seqlen_q > seqlen_kv, causal: the first 156 rows see no key (O = 0, LSE = -inf, no NaN); the
    first query block has no key block at all; the last key block is ragged."""
    lse = _emulate((1, 1, 1, 256, 100, 64), True, ha.AttentionConfig(bn=64))
    assert np.isneginf(lse[0, 0, :156]).all()


@pytest.mark.slow
@pytest.mark.parametrize("pingpong,overlap", [(False, False), (False, True), (True, False)])
def test_emulated_gqa_ragged_head_dim_128(pingpong, overlap):
    cfg = ha.AttentionConfig(bn=64, pingpong=pingpong, overlap=overlap)
    _emulate((1, 2, 1, 130, 190, 128), True, cfg)


# ---- on the GPU -----------------------------------------------------------------------------
def _on_gpu(shape, causal, cfg=None, seed=0):
    torch = pytest.importorskip("torch")
    d = shape[5]
    q, k, v, o, lse = ha.random_inputs(*shape, seed=seed)
    n_sms = torch.cuda.get_device_properties(0).multi_processor_count
    from dataclasses import replace

    cfg = replace(cfg or ha.default_config(d, causal), num_sms=n_sms)
    ha.build(*shape, causal, cfg)(q, k, v, o, lse)
    torch.cuda.synchronize()
    ro, rl = ha.reference(q, k, v, causal)
    assert not torch.isnan(o).any() and not torch.isnan(lse).any(), "NaN (or never written) outputs"
    fin = torch.isfinite(rl)
    assert torch.equal(torch.isneginf(lse), ~fin)
    err = (torch.linalg.vector_norm(o.float() - ro) / torch.linalg.vector_norm(ro)).item()
    lerr = (lse[fin] - rl[fin]).abs().max().item()
    assert err <= 1e-2 and lerr <= 1e-3, (err, lerr)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "shape,causal",
    [
        ((2, 8, 8, 1024, 1024, 128), False),
        ((2, 8, 8, 1024, 1024, 128), True),
        ((2, 8, 2, 1000, 1000, 64), True),
        ((1, 4, 4, 777, 1500, 128), False),
        ((1, 4, 1, 1500, 333, 64), True),
        ((2, 8, 4, 1000, 1100, 256), False),
        ((2, 8, 8, 1024, 1024, 256), True),
    ],
)
def test_attention_on_gpu(shape, causal):
    _on_gpu(shape, causal)


@pytest.mark.gpu
@pytest.mark.parametrize("pingpong,overlap", [(False, False), (True, False), (False, True)])
def test_attention_variants_on_gpu(pingpong, overlap):
    _on_gpu((2, 8, 8, 1024, 1024, 128), True, ha.AttentionConfig(pingpong=pingpong, overlap=overlap))


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.parametrize(
    "shape,causal,cfg",
    [
        ((2, 8, 2, 1000, 1000, 64), True, ha.AttentionConfig(bn=176, stages=2)),  # the tuned table's D64 winner
        ((1, 8, 2, 777, 1500, 128), False, ha.AttentionConfig(scheduler="lpt")),  # GQA's winner
        ((2, 8, 8, 1024, 1024, 64), True, ha.AttentionConfig(stages=3, swizzle=16)),  # D64 causal's winner
    ],
)
def test_tuned_variants_on_gpu(shape, causal, cfg):
    _on_gpu(shape, causal, cfg)


def test_emulator_finds_the_planted_missing_wait():
    """plant='no_v_wait': P V reads a V slot without waiting for its TMA load; the race checker names
    the V copy and the wgmma that reads it."""
    import ml_dtypes

    import txlab

    rng = np.random.default_rng(1)
    q, k, v = (
        rng.standard_normal(s, dtype=np.float32).astype(ml_dtypes.bfloat16)
        for s in ((1, 1, 128, 64), (1, 1, 256, 64), (1, 1, 256, 64))
    )
    bad = ha.attention_kernel(1, 1, 1, 128, 256, 64, config=ha.AttentionConfig(bn=64), plant="no_v_wait")
    res = txlab.emulate(bad, q, k, v, np.zeros_like(q), np.zeros((1, 1, 128), np.float32), arch="sm_90a")
    assert not res.ok
    assert any(f.kind == "shared_race" for f in res.findings), res
    with pytest.raises(InputError, match="no_v_wait"):
        ha.attention_kernel(1, 1, 1, 128, 256, 64, plant="other")


@pytest.mark.slow
def test_pipeline_reader_finds_the_three_rings():
    """txlab.pipelines reads the Q tile's barrier pair and the K and V rings from the IR (its code walk
    goes through the LPT/linear schedulers' index arithmetic)."""
    from txlab.pipelines.spec import find_pipelines

    rings = find_pipelines(ha.attention_kernel(1, 1, 1, 1024, 1024, 128))
    assert [(r.stages, r.empty_buffer, r.init_empty, r.tx_bytes) for r in rings] == [
        (1, "q_empty_buf", 8, 128 * 128 * 2),
        (2, "kp_empty_buf", 8, 128 * 128 * 2),
        (2, "vp_empty_buf", 8, 128 * 128 * 2),
    ]
    assert "no problem found" in rings[1].simulate(iterations=8).summary()


def test_tune_space_constraint_and_build():
    space = ha.tune_space(128)
    assert set(space) == set(ha.TUNE_SPACE) | {"constraint"}
    ok = dict(bn=128, stages=2, consumers=2, pingpong=True, overlap=True, scheduler="auto", num_sms=132)
    assert space["constraint"](ok)
    assert not space["constraint"]({**ok, "stages": 3})  # 256 KiB of shared memory at head_dim 128
    assert not space["constraint"]({**ok, "consumers": 1})  # ping-pong needs two consumers
    assert ha.tune_space(64)["constraint"]({**ok, "stages": 4})
    f = ha.tune_build(1, 2, 1, 256, 256, 64, True)(**{**ok, "bn": 64})
    assert f.__class__.__name__ == "PrimFunc"


def test_register_budget_check_names_the_hang():
    """32 + 2 x 240 setmaxnreg registers do not fit the 168 x 384 a CTA launches with (the first H200
    run of this kernel hung on it); 24 + 2 x 240 do."""
    from types import SimpleNamespace

    from txlab.errors import CompileError

    class Greedy(ha.AttentionConfig):
        def producer_regs(self) -> int:
            return 32

    fake = SimpleNamespace(kernels=["k"], resources={"k": {"registers": 168}})
    ha.check_register_budget(fake, ha.AttentionConfig())
    with pytest.raises(CompileError, match="wait forever"):
        ha.check_register_budget(fake, Greedy())


def test_shipped_timeline_shows_the_ping_pong():
    """The trace recorded on an H200 (txlab.timeline.saved): per CTA a producer lane and two consumer
    lanes, 17 mma and 16 softmax ranges each (16 key blocks, overlap on), and a consumer's softmax
    mostly under the other consumer's mma."""
    from collections import defaultdict

    import txlab

    tl = txlab.timeline.saved("hopper_attention")
    assert not tl.meta["synthetic"] and "H200" in tl.meta["gpu"]
    lanes = defaultdict(list)
    for e in tl.events:
        lanes[(e["block"], e["group"])].append((e["name"], e["start_ns"], e["end_ns"]))
    assert {g for _, g in lanes} == {0, 1, 2} and len({b for b, _ in lanes}) == 64
    names = [n for n, _, _ in lanes[(0, 1)]]
    assert names.count("mma") == 17 and names.count("softmax") == 16 and names.count("epilogue") == 1
    under = total = 0
    for (block, group), evs in lanes.items():
        if group == 0:
            continue
        other = [(a, b) for n, a, b in lanes[(block, 3 - group)] if n == "mma"]
        for n, a, b in evs:
            if n == "softmax":
                total += b - a
                under += sum(max(0, min(b, y) - max(a, x)) for x, y in other)
    assert under / total > 0.4


# ---- the tuned table and the model for unseen shapes ----------------------------------------
def _row(shape, cfg, ms, rel=2e-3):
    keys = ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "head_dim", "causal")
    return {"shape": dict(zip(keys, shape)), "config": cfg.to_dict(), "time_ms": ms, "rel_error": rel,
            "lse_abs_error": 1e-6}  # fmt: skip


@pytest.fixture
def small_table(tmp_path):
    """A table of two measured shapes (what scripts/attention_tune_h200.py writes), in force for the test."""
    from txlab.examples import attention_model as am

    a, b = (4, 32, 32, 8192, 8192, 128, True), (4, 32, 8, 4096, 4096, 128, False)
    cfg, swz = ha.AttentionConfig(), ha.AttentionConfig(swizzle=2)
    measured = [_row(a, cfg, 4.10), _row(a, swz, 3.90), _row(b, cfg, 0.82), _row(b, ha.AttentionConfig(bn=96), 0.90)]
    path = tmp_path / "t.json"
    am.write_tuned_table(path, [measured[1], measured[2]], measured, device="NVIDIA H200", source="test")
    am.use_tuned_table(path)
    yield path, a, b, swz
    am.use_tuned_table(None)


def test_tuned_table_is_verified_on_load(small_table):
    import json

    from txlab.cache import seal
    from txlab.examples import attention_model as am

    path, a, _, _ = small_table
    doc = json.loads(path.read_text())
    doc["table"]["best"][0]["time_ms"] = 1.0  # edited by hand: the seal no longer matches
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="sha256"):
        am.load_tuned_table(path)
    for bad, match in (
        ({"rel_error": 0.5}, "rel_error"),
        ({"config": {"bn": 72}}, "multiple of 16"),
        ({"config": {"bogus": 1}}, "unknown fields"),
        ({"time_ms": -1.0}, "positive time"),
    ):
        body = json.loads(json.dumps(doc["table"]))
        body["best"][0].update(bad)
        path.write_text(json.dumps(seal(body, "table", format=am.TABLE_FORMAT)))  # a valid seal of bad data
        with pytest.raises(ValueError, match=match):
            am.load_tuned_table(path)
    am.use_tuned_table(path)
    with pytest.warns(UserWarning, match="ignoring the tuned table"):
        assert am.table_config(a) is None


def test_build_without_config_takes_the_table_then_the_model(small_table):
    _, a, b, swz = small_table
    assert ha.tuned_config(*a) == swz
    ch = ha.explain(*a)
    assert ch.source == "tuned table (measured)" and ch.winner == swz and ch.predictions[0].config == swz
    # an unseen shape: ranked by the model, corrected by its nearest measured neighbour
    unseen = (2, 16, 16, 12288, 12288, 128, True)
    ch = ha.explain(*unseen)
    assert ch.source == "model" and ch.winner == ha.tuned_config(*unseen) == ch.predictions[0].config
    times = [p.time_s for p in ch.predictions]
    assert times == sorted(times) and len(times) >= 5
    assert "B4 H32 S8192 D128 causal" in ch.predictions[0].neighbour
    assert ch.winner.name in str(ch) and "pred. us" in ch.table() and ch.to_dict()["winner"] == ch.winner.name
    # the measured configuration's correction on the neighbour is what it measured there
    p = next(p for p in ch.predictions if p.config.name == swz.name)
    from txlab.examples import attention_model as am

    assert p.correction == pytest.approx(3.90e-3 / am.model_time(a, swz)[0])
    # no measured shape of that head_dim and masking: the model alone, said so
    ch64 = ha.explain(1, 8, 8, 3000, 3000, 64, True)
    assert ch64.source == "model" and ch64.notes and all(p.correction == 1.0 for p in ch64.predictions)


def test_explain_rejects_bad_shapes():
    with pytest.raises(InputError, match="does not divide"):
        ha.explain(1, 6, 4, 128, 128, 64)


@pytest.mark.parametrize(
    "name,params",
    [
        ("FlashAttentionLPTScheduler", dict(num_batches=2, num_heads=6, num_m_blocks=8, l2_swizzle=4)),
        ("FlashAttentionLPTScheduler", dict(num_batches=1, num_heads=4, num_m_blocks=5, l2_swizzle=1)),
        ("FlashAttentionLinearScheduler", dict(num_batches=2, num_heads=3, num_m_blocks=7)),
    ],
)
def test_model_task_order_is_tvms(name, params):
    """The model's numpy index maps give the tasks TVM's scheduler classes hand out (run on the CPU)."""
    from txlab import schedulers
    from txlab.examples import attention_model as am

    ctas = 20
    tr = schedulers.trace(name, ctas, **params)
    visits = tr.visits
    assert len(visits) == params["num_batches"] * params["num_heads"] * params["num_m_blocks"]
    hb, m = am.task_order(
        params["num_batches"], params["num_heads"], params["num_m_blocks"], "LPT" in name, params.get("l2_swizzle", 1)
    )
    for v in visits:
        i = v["cta"] + v["step"] * ctas
        assert (hb[i], m[i]) == (v["batch_idx"] * params["num_heads"] + v["head_idx"], v["m_block_idx"])


def test_shipped_tuned_table():
    """The table an H200 sweep wrote (scripts/attention_tune_h200.py): it verifies, each shape's entry is
    its fastest measured candidate, and build() without a config takes it."""
    from txlab.examples import attention_model as am

    am.use_tuned_table(None)
    doc = am.load_tuned_table()
    assert "H200" in doc["device"]
    body = doc["table"]

    def key(e):
        return tuple(e["shape"][k] for k in am.SHAPE_KEYS)

    assert len(body["best"]) >= 10 and len(body["measured"]) >= 90
    for e in body["best"]:
        times = [m["time_ms"] for m in body["measured"] if key(m) == key(e)]
        assert e["time_ms"] == min(times)
        assert ha.tuned_config(*key(e)) == ha.AttentionConfig(**e["config"])
    issue = {(4, 32, 32, s, s, 128, c) for s in (4096, 8192, 16384) for c in (False, True)} - {
        (4, 32, 32, 16384, 16384, 128, False)
    }
    assert issue <= {key(e) for e in body["best"]}


def test_shipped_profile_is_on_the_kernels_lines():
    """The ncu profile recorded on an H200 (B 2, H 32, S 4096, D 128, the default configuration): every
    sample on a line, the ten hottest lines are lines of attention_kernel (the softmax's exp2 first),
    MUFU.EX2 holds a sizeable share, and the wgmma waits stall on the tensor cores' barrier."""
    import inspect

    from txlab import profiling

    p = profiling.saved("hopper_attention")
    assert "H200" in p.device and p.line_kind == "tvmscript" and p.attributed_share >= 0.99
    c = ha.build(2, 32, 32, 4096, 4096, 128, False, ha.default_config(128, False))
    p = p.for_build(c)  # the SASS is checked to be the profiled SASS, offset for offset
    src, first = inspect.getsourcelines(ha.attention_kernel)
    own = range(first, first + len(src))
    hot = p.hot_lines(10)
    assert all(r["line"] in own for r in hot), [(r["line"], r["text"]) for r in hot]
    assert "T.exp2" in hot[0]["text"]
    ex2 = [i for i in p.instructions if "MUFU.EX2" in (i.get("sass") or "")]
    assert sum(i["samples"] for i in ex2) / p.total_samples > 0.1
    assert {i["user_line"] for i in ex2} <= {r["line"] for r in p.lines if "T.exp2" in r["text"]}
    waits = [r for r in p.lines if "wgmma.wait_group" in r["text"] and r["samples"]]
    assert waits and any(r["top_stalls"][0][0] == "barrier" for r in waits)


def test_tuned_config_uses_one_cta_per_sm_of_this_gpu(small_table, monkeypatch):
    """The table was measured with 132 SMs; on a GPU with fewer (an H100 PCIe has 114) build() without a
    config launches one persistent CTA per SM, not a second wave of 18."""
    import txlab.device
    from txlab.device import GPUInfo

    _, a, _, swz = small_table
    monkeypatch.setattr(txlab.device, "probe", lambda: GPUInfo(True, name="H100 PCIe", sm_count=114))
    got = ha.tuned_config(*a)
    assert got.num_sms == 114 and got.bn == swz.bn and got.swizzle == swz.swizzle
    assert ha.tuned_config(2, 16, 16, 12288, 12288, 128, True).num_sms == 114
    monkeypatch.setattr(txlab.device, "probe", lambda: GPUInfo(False, "no GPU"))
    assert ha.tuned_config(*a) == swz


def test_model_chooses_well_for_shapes_left_out_of_the_table():
    """Each measured shape re-chosen from the table without it: within 2% of its measured best on at
    least 8 of the 10 shapes, never more than 1.5% behind the default configuration."""
    from txlab.examples import attention_model as am

    am.use_tuned_table(None)
    rows = am.leave_one_out()
    assert len(rows) >= 10 and all(r is not None for _, _, r, _ in rows)
    assert sum(r <= 0.02 for _, _, r, _ in rows) >= 8, rows
    assert all(r <= d + 0.015 for _, _, r, d in rows if d is not None), rows
