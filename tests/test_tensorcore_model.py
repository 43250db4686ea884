"""The emulator's tensor-core arithmetic against outputs recorded on an H200, bit for bit.

tests/data/tensorcore/h200_tensorcore.npz holds, per instruction (``mma.sync`` m16n8k8/k16 f16 and
bf16, m16n8k4/k8 tf32, m16n8k32 e4m3/e5m2 and s8/u8, f32 and f16 accumulators; ``wgmma`` m64n8k16
f16/bf16, k8 tf32, k32 e4m3/e5m2), the operands, accumulator and the H200's result of a sample of
``scripts/tensorcore_probe_h200.py --seed 1``'s trials: every input family (wide exponent spreads,
cancellation, dominant or tiny accumulators, single products, rounding ties, subnormals, inf/nan,
signed zeros, random bit patterns). The second part runs recorded operands through a real
``Tx.warp.gemm`` kernel (Apache TVM's own test kernel, tests/upstream/) on the emulator.
"""

from pathlib import Path

import numpy as np
import pytest

from scripts.tensorcore_probe_h200 import FAMILIES
from txlab.emulator import tensorcore as tc

DATA = Path(__file__).parent / "data" / "tensorcore" / "h200_tensorcore.npz"


def _records():
    z = np.load(DATA)
    out: dict = {}
    for key in z.files:
        name, field = key.split("/")
        out.setdefault(name, {})[field] = z[key]
    return out


RECORDS = _records()


def test_the_sample_covers_every_instruction_and_family():
    names = set(RECORDS)
    for shape in ("m16n8k8_f16", "m16n8k16_f16", "m16n8k8_bf16", "m16n8k16_bf16", "m16n8k4_tf32", "m16n8k8_tf32"):
        assert f"mma_{shape}_f32" in names
    for name in ("mma_m16n8k32_e4m3_f32", "mma_m16n8k32_e5m2_f32", "mma_m16n8k16_f16_f16", "mma_m16n8k32_s8_s32"):
        assert name in names
    for name in ("wgmma_m64n8k16_f16_f32", "wgmma_m64n8k16_bf16_f32", "wgmma_m64n8k8_tf32_f32"):
        assert name in names
    for name in ("wgmma_m64n8k32_e4m3_f32", "wgmma_m64n8k32_e5m2_f32", "wgmma_m64n8k16_f16_f16"):
        assert name in names
    for rec in RECORDS.values():
        assert set(np.unique(rec["family"])) == set(range(len(FAMILIES)))


@pytest.mark.parametrize("name", sorted(n for n in RECORDS if not n.split("_")[2] in ("s8", "u8")))
def test_model_reproduces_every_recorded_output(name):
    rec = RECORDS[name]
    kind, _, at, ct = name.split("_")
    got = tc.run_bits(kind, at, ct, rec["A"], rec["B"], rec["C"])
    bad = got != rec["D"]
    fam = rec["family"]
    per = {FAMILIES[f]: int(bad[fam == f].sum()) for f in np.unique(fam) if bad[fam == f].any()}
    assert not bad.any(), f"{name}: {int(bad.sum())} of {bad.size} outputs differ from the H200's: {per}"


def test_the_model_is_not_a_correctly_rounded_sum():
    """The recorded outputs tell the hardware from an exact sum rounded once (what the emulator did
    before): the test above could not pass with that model."""
    rec = RECORDS["mma_m16n8k16_f16_f32"]
    a, b, c = tc.decode_operands(rec["A"], rec["B"], rec["C"], "f16", "f32")
    with np.errstate(invalid="ignore", over="ignore"):
        once = (np.einsum("tmk,tkn->tmn", a, b) + c).astype(np.float32).view(np.uint32)
    assert (once != rec["D"]).sum() > 100


def test_integer_mma_is_exact_and_wraps():
    for name in ("mma_m16n8k16_s8_s32", "mma_m16n8k32_s8_s32", "mma_m16n8k32_u8_s32"):
        rec = RECORDS[name]
        dt = np.int8 if "_s8_" in name else np.uint8
        a = rec["A"].view(dt).astype(np.int64)
        b = rec["B"].view(dt).astype(np.int64)
        c = rec["C"].view(np.int32).astype(np.int64)
        want = (a @ b + c).astype(np.int32).view(np.uint32)  # two's-complement wrap
        assert np.array_equal(want, rec["D"]), name


@pytest.mark.parametrize(
    ("name", "k", "dtype"), [("mma_m16n8k16_bf16_f32", 16, "bfloat16"), ("mma_m16n8k8_f16_f32", 8, "float16")]
)
def test_emulated_warp_gemm_gives_the_h200s_bits(name, k, dtype):
    """A ``Tx.warp.gemm`` kernel (one mma.sync, C + A @ B) on the emulator, fed recorded operands."""
    import ml_dtypes
    from upstream import k_gemm_mma

    from txlab.emulator import emulate

    rec = RECORDS[name]
    npdt = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[dtype]
    fn = k_gemm_mma._build_tiled_numeric(1, 1, 1, k, 1.0, dtype)[0]
    fam = rec["family"]
    picks = [int(np.nonzero(fam == FAMILIES.index(f))[0][0]) for f in ("cancel", "ties", "special", "subnormal")]
    for t in picks:
        d = np.zeros((16, 8), np.float32)
        emulate(fn, rec["A"][t].view(npdt), rec["B"][t].view(npdt), rec["C"][t].view(np.float32).copy(), d)
        assert np.array_equal(d.view(np.uint32), rec["D"][t]), f"{name} trial {t} ({FAMILIES[fam[t]]})"


def test_emulated_hopper_gemm_is_the_model_step_by_step():
    """txlab's Hopper GEMM (TMA, 128B swizzle, wgmma m64n128k16 bf16) on the emulator equals the
    fitted model applied k16 step by k16 step, element for element: the wgmma handler feeds the
    model the right rows, columns and accumulator (the model itself is checked above)."""
    import ml_dtypes

    from txlab.emulator import emulate
    from txlab.examples import hopper_gemm as hg

    rng = np.random.default_rng(0)
    M = N = 256
    K = 128
    a = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-6, 6, (M, K)))).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal((N, K)) * np.exp2(rng.integers(-6, 6, (N, K)))).astype(ml_dtypes.bfloat16)
    c = np.zeros((M, N), ml_dtypes.bfloat16)
    res = emulate(hg.gemm_kernel(M, N, K, hg.parse_config("128x128x64_s2_c2", num_sms=4)), a, b, c, arch="sm_90a")
    assert res.ok, res.summary()
    a64, b64 = a.astype(np.float64), b.astype(np.float64).T
    acc = np.zeros((M, N), np.float32)
    for s in range(K // 16):
        acc = tc.compute("wgmma", "bf16", "f32", a64[:, 16 * s : 16 * s + 16], b64[16 * s : 16 * s + 16], acc)
    want = acc.astype(ml_dtypes.bfloat16)
    assert np.array_equal(c.view(np.uint16), want.view(np.uint16))
    once = (a64 @ b64).astype(np.float32).astype(ml_dtypes.bfloat16)
    assert not np.array_equal(c.view(np.uint16), once.view(np.uint16))  # the truncation shows


def test_emulated_wgmma_with_f16_accumulators():
    """``wgmma ... .f16.f16.f16`` (f16x2 accumulator registers, the layout the probe checked on the
    H200) on the emulator equals the fitted f16-accumulator model, register half by half."""
    from scripts.tensorcore_probe_h200 import f16acc_kernel, f16acc_model

    from txlab.emulator import emulate

    rng = np.random.default_rng(3)
    a = (rng.standard_normal((16, 64)) * np.exp2(rng.integers(-6, 6, (16, 64)))).astype(np.float16)
    b = (rng.standard_normal((16, 64)) * np.exp2(rng.integers(-6, 6, (16, 64)))).astype(np.float16)
    regs = np.zeros((128, 16), np.uint32)
    res = emulate(f16acc_kernel(), a, b, regs, arch="sm_90a")
    assert res.ok, res.summary()
    assert np.array_equal(regs, f16acc_model(a, b))
