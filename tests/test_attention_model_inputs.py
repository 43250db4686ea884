"""The FlashAttention model's inputs and accounts (txlab.examples.attention_model, attention_config): the causal
FLOP count is the (query, key) pairs the bottom-right mask leaves, for any Sq and Skv; ``why`` never calls a slower
kept default "ahead"; the cost model's time and memory are bounded on every valid shape (and the shapes past the
kernel's 32-bit indices are refused up front); ``random_inputs`` without a GPU is a NoGPUError; the model checks
``causal`` as hopper_attention does. No GPU needed."""

from __future__ import annotations

import random
import re
import sys
import time
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from txlab.errors import InputError, NoGPUError
from txlab.examples import attention_config as ac
from txlab.examples import attention_model as am
from txlab.examples import hopper_attention as ha


# ---- 4: the causal FLOP count ---------------------------------------------------------------------------
def _pairs_by_mask(sq, sk):
    i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
    return int((j <= i + (sk - sq)).sum())  # the kernel's mask (and hopper_attention.reference's)


def test_causal_pairs_are_the_masks_visible_pairs():
    """Before: 4·B·H·Sq·Skv·D halved whenever causal, right only at Sq == Skv (and then off by S/2 pairs)."""
    sizes = (1, 2, 3, 7, 64, 100, 127, 128, 129, 300)
    for sq in sizes:
        for sk in sizes:
            assert ac.visible_pairs(sq, sk, True) == _pairs_by_mask(sq, sk), (sq, sk)
            assert ac.visible_pairs(sq, sk, False) == sq * sk
    for sq, sk in ((8192, 128), (128, 8192), (4096, 4096), (1000, 3000), (2**30, 2**31 - 1024)):
        n = min(sq, sk)
        assert ac.visible_pairs(sq, sk, True) == n * (sk - n) + n * (n + 1) // 2
    assert ha.flops(1, 8, 8192, 128, 128, True) == 4 * 8 * 128 * (128 * 129 // 2)  # was 63.5x this
    assert ha.flops(1, 8, 128, 8192, 128, True) == 4 * 8 * 128 * (128 * 8064 + 128 * 129 // 2)  # was about half
    assert ha.flops(1, 8, 128, 8192, 128, False) == 4 * 8 * 128 * 128 * 8192


@pytest.mark.parametrize("sq,sk", [(8192, 128), (128, 8192), (4096, 4096), (1000, 3000)])
def test_explain_counts_the_causal_pairs(sq, sk):
    """Before: 775 TFLOP/s predicted for Sq 8192 / Skv 128 causal (63.5x the work done), 17 for Sq 128 / Skv 8192."""
    ch = ha.explain(1, 8, 8, sq, sk, 128, True, num_sms=132)
    for p in ch.predictions:
        assert p.flops == 4.0 * 8 * 128 * _pairs_by_mask(sq, sk)
        # no more than the busiest CTA's tensor cores could do in the predicted time, spread over every CTA
        assert p.tflops * 1e12 <= p.ctas * am.SM_PEAK_FLOPS
    if sq > sk:
        assert ch.predictions[0].tflops < 50
    if sq < sk:
        assert ch.predictions[0].tflops > 25


# ---- 5: a kept default is not "ahead" --------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape",
    [
        (1, 8, 8, 8192, 128, 128, True),
        (1, 8, 8, 128, 8192, 128, True),
        (2, 16, 16, 2048, 2048, 64, True),
        (1, 32, 32, 1024, 1024, 128, False),
        (4, 32, 8, 4096, 4096, 128, True),
    ],
)
def test_why_says_the_default_is_kept_within_the_margin(shape):
    """Before: "-2.4% ahead of <a faster config>" when explain() kept the default."""
    ch = ha.explain(*shape, num_sms=132)
    assert not re.search(r"-\d[\d.]*% ahead", ch.why), ch.why
    first, rest = ch.predictions[0], ch.predictions[1:]
    assert first.config == ch.winner
    assert [p.time_s for p in rest] == sorted(p.time_s for p in rest)  # the others: fastest first
    faster = [p for p in rest if p.time_s < first.time_s]
    if ch.source == "model" and faster:
        best = min(faster, key=lambda p: p.time_s)
        assert first.config == replace(ha.default_config(shape[5], shape[6]), num_sms=132)
        assert "ahead of" not in ch.why and "the default" in ch.why and "is kept" in ch.why, ch.why
        assert best.config.name in ch.why and f"within the {am.MARGIN:.0%} margin" in ch.why, ch.why
        gap = float(re.search(r"predicted ([\d.]+)% faster", ch.why).group(1))
        assert 0 <= gap < 100 * am.MARGIN
        assert "note: no candidate is predicted 3% faster" in str(ch) and "listed first" in str(ch)
    elif ch.source == "model" and rest:
        lead = float(re.search(r", ([\d.]+)% ahead of", ch.why).group(1))
        assert lead >= 0


@pytest.mark.parametrize("shape", [(1, 8, 8, 8192, 128, 128, True), (1, 8, 8, 128, 8192, 128, True)])
def test_the_audits_shapes_say_the_default_is_kept(shape):
    """Shapes where explain() keeps a default predicted slower than another candidate: the honest sentence."""
    ch = ha.explain(*shape, num_sms=132)
    assert ch.predictions[1].time_s < ch.predictions[0].time_s
    assert "is kept" in ch.why and "ahead of" not in ch.why, ch.why


# ---- 6: the model's cost is bounded -----------------------------------------------------------------------
def test_closed_form_sums_match_brute_force():
    rng = random.Random(3)
    for _ in range(500):
        n, a, c, b = rng.randint(0, 60), rng.randint(1, 20), rng.randint(1, 20), rng.randint(-200, 200)
        lo = rng.randint(-3, 3)
        hi = lo + rng.randint(0, 10)
        want = sum(min(max((a * i + b) // c, lo), hi) for i in range(n))
        assert am._sum_clip_floor(np.array([n]), a, np.array([b]), c, lo, hi)[0] == want
    for _ in range(200):
        sq, sk = rng.randint(1, 3000), rng.randint(1, 3000)
        bm, bn, causal = rng.choice([64, 128]), rng.choice([16, 48, 64, 96, 128, 176, 256]), rng.random() < 0.8
        w = am._Blocks(bm, bn, -(-sq // bm), -(-sk // bn), sk - sq, causal, sk % bn != 0)
        blk, msk = w.of(np.arange(w.mb))
        stride = rng.choice([1, 2, 3, 33, 132])
        sb, sm = w.ap_sums(stride, np.arange(stride))
        assert [int(x) for x in sb] == [int(blk[r::stride].sum()) for r in range(stride)]
        assert [int(x) for x in sm] == [int(msk[r::stride].sum()) for r in range(stride)]


def _walked(shape, bm, bn, num_sms, lpt, swz):
    """The busiest CTA by walking every task (what _work_of did for every shape before)."""
    b, h, _, sq, sk, _, causal = shape
    mb, nb = -(-sq // bm), -(-sk // bn)
    tasks = b * h * mb
    ctas = min(num_sms, tasks)
    _, m = am.task_order(b, h, mb, lpt, swz)
    blocks, masked = am._Blocks(bm, bn, mb, nb, sk - sq, causal, sk % bn != 0).of(m)
    cta = np.arange(tasks) % ctas
    per_b = np.bincount(cta, weights=blocks, minlength=ctas)
    per_t = np.bincount(cta, minlength=ctas)
    per_m = np.bincount(cta, weights=masked, minlength=ctas)
    i = int(np.argmax(per_b + 1.5 * per_t))
    return int(per_t[i]), int(per_b[i]), int(per_m[i]), float(blocks.sum()) / ctas, ctas, tasks


def test_structured_count_is_the_walk(monkeypatch):
    """Past EXACT_TASKS the model counts each CTA's tasks from the order's structure: the same numbers as walking
    every task, for both orders, any swizzle, ragged and causal shapes, CTA counts that do and do not divide."""
    monkeypatch.setattr(am, "EXACT_TASKS", 0)
    rng = random.Random(5)
    for _ in range(150):
        b, h = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3, 6, 8, 16, 32])
        sq, sk = rng.choice([64, 100, 1000, 3000, 8192]), rng.choice([64, 128, 1000, 3000, 8192])
        causal, bm, bn = rng.random() < 0.7, rng.choice([64, 128]), rng.choice([48, 64, 96, 128, 176])
        lpt = rng.random() < 0.5
        swz = min(rng.choice([1, 2, 3, 4, 16, 64]), b * h) if lpt else 0
        num_sms = rng.choice([132, 114, 7, 1, 500])
        shape = (b, h, h, sq, sk, 128, causal)
        am._work_of.cache_clear()
        got = am._work_of(shape, bm, bn, num_sms, lpt, swz)
        want = _walked(shape, bm, bn, num_sms, lpt, swz)
        assert got[:3] == want[:3] and got[4:] == want[4:] and got[3] == pytest.approx(want[3]), (shape, bm, bn)
    am._work_of.cache_clear()


LARGEST = [
    (1, 1, 1, 2**30, 2**30, 64, True),  # 2**24 query blocks in one head
    (2**15, 2**15, 1, 1, 1, 64, True),  # 2**30 heads of one row
    (1, 32, 8, 2**25, 2**25, 128, True),
    (8, 32, 8, 2**22, 2**22, 128, True),
    (4, 64, 8, 2**20, 1024, 128, True),  # Sq >> Skv: a few key blocks at the end of each head
    (3, 5, 5, 12345677, 7654321, 256, True),
    (1, 1, 1, 2**30, 2**31 - 1024, 64, False),
]


@pytest.mark.parametrize("shape", LARGEST)
def test_explain_on_the_largest_shapes_is_quick_and_small(shape):
    """Before: numpy arrays of every task: a MemoryError after 39 s at (8, 32, 8, 2**27, 2**27, 128, True)."""
    ha.explain(1, 8, 8, 1024, 1024, 128, True, num_sms=132)  # the table and its neighbours, read once
    am._work_of.cache_clear()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        ch = ha.explain(*shape, num_sms=132)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert took < 2.0 and peak < 8 * 2**20, (took, peak)
    p = ch.predictions[0]
    b, h, _, sq, sk, d, causal = ch.shape
    assert p.tasks == b * h * -(-sq // p.config.bm) and 0 < p.balance <= 1
    assert p.flops == ha.flops(b, h, sq, sk, d, causal)


def test_a_num_sms_past_any_gpu_is_sampled_within_bounds():
    """More CTAs than the structured count takes (a num_sms no GPU has): the busiest CTA is estimated from a
    sample, still bounded in time and memory, its blocks at least the ideal share."""
    tracemalloc.start()
    try:
        ch = ha.explain(8, 32, 8, 2**22, 2**22, 128, True, num_sms=10**6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    for p in ch.predictions:
        assert p.ctas == 10**6 and p.busiest_blocks >= p.ideal_blocks * 0.99 and p.busiest_tasks >= 1


@pytest.mark.parametrize(
    "args,match",
    [
        ((64, 128, 8, 2**24, 2**24, 128, True), r"batch\*heads\*seqlen_q = 137,438,953,472 query rows.*2\*\*30"),
        ((8, 32, 8, 2**27, 2**27, 128, True), r"query rows: .*32-bit.*split the batch"),
        ((1, 1, 1, 64, 2**31 - 1000, 64, True), r"seqlen_kv=2147482648: .*32-bit key coordinates"),
        ((1, 64, 64, 64, 2**27, 128, False), r"K and V's batch stride .*2\*\*40"),
    ],
)
def test_shapes_past_the_kernels_indices_are_refused(args, match):
    """Valid-looking shapes (every size < 2**31) the kernel cannot index: an InputError naming the limit and the
    fix, from explain (the model), the model's own explain and the kernel builder alike."""
    with pytest.raises(InputError, match=match):
        ha.explain(*args, num_sms=132)
    with pytest.raises(InputError, match=match):
        am.explain(args)
    with pytest.raises(InputError, match=match):
        ha.attention_kernel(*args[:6], args[6])


def test_the_query_row_limit_is_inclusive():
    ch = ha.explain(1, 1, 1, 2**30, 4096, 64, True, num_sms=132)
    assert ch.predictions[0].tasks == -(-(2**30) // ch.predictions[0].config.bm)
    with pytest.raises(InputError, match="query rows"):
        ha.explain(1, 2, 1, 2**30, 4096, 64, True, num_sms=132)


def test_task_order_maps_a_part_of_a_huge_order():
    with pytest.raises(InputError, match="pass idx="):
        am.task_order(1024, 1024, 1024, True, 4)
    idx = np.array([0, 1, 4096, 2**30 - 1])
    hb, m = am.task_order(1024, 1024, 1024, True, 4, idx=idx)
    assert hb.tolist() == [0, 1, 4, 1024 * 1024 - 1] and m.tolist() == [1023, 1023, 1023, 0]


# ---- 7: random_inputs without a GPU ------------------------------------------------------------------------
@pytest.fixture
def no_gpu(monkeypatch):
    from txlab import device

    monkeypatch.setenv("TXLAB_FORCE_NO_GPU", "1")
    device.probe.cache_clear()
    yield
    device.probe.cache_clear()


def test_random_inputs_without_a_gpu_is_a_no_gpu_error(no_gpu):
    """Before: ModuleNotFoundError('torch') without torch, torch's RuntimeError with a CPU-only torch."""
    with pytest.raises(NoGPUError) as info:
        ha.random_inputs(1, 1, 1, 64, 64, 64)
    msg = str(info.value)
    assert "random_inputs" in msg and "needs a CUDA GPU" in msg and "numpy arrays" in msg, msg
    with pytest.raises(InputError, match="head_dim"):  # a wrong shape is said first
        ha.random_inputs(1, 1, 1, 64, 64, 96)


def test_random_inputs_without_torch_is_a_no_gpu_error(monkeypatch):
    import txlab.device
    from txlab.device import GPUInfo

    monkeypatch.setattr(txlab.device, "probe", lambda: GPUInfo(True, name="H100", sm_count=132))
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(NoGPUError, match=r"torch is not importable here .*pip install torch"):
        ha.random_inputs(1, 1, 1, 64, 64, 64)


# ---- 9: the model checks causal ----------------------------------------------------------------------------
@pytest.mark.parametrize("causal", ["yes", 2, None, 0.5])
def test_model_explain_checks_causal_like_hopper_attention(causal):
    """Before: attention_model.explain took "yes", 2 or None as a causal flag (truthy or not) and kept it in the
    choice's shape, where hopper_attention.explain raised an InputError."""
    with pytest.raises(InputError) as model:
        am.explain((1, 8, 8, 1024, 1024, 128, causal))
    with pytest.raises(InputError) as kernel:
        ha.explain(1, 8, 8, 1024, 1024, 128, causal)
    assert str(model.value) == str(kernel.value) and f"causal={causal!r}" in str(model.value)
    with pytest.raises(InputError, match="causal="):
        am.choose((1, 8, 8, 1024, 1024, 128, causal))


def test_model_explain_takes_0_and_1_as_the_flag():
    for flag, want in ((0, False), (1, True)):
        ch = am.explain((1, 8, 8, 1024, 1024, 128, flag))
        assert ch.shape[6] is want
        assert ch.winner == am.explain((1, 8, 8, 1024, 1024, 128, want)).winner
