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

from txlab.emulator import tensorcore as tc

DATA = Path(__file__).parent / "data" / "tensorcore" / "h200_tensorcore.npz"
FAMILIES = ("exact narrow moderate wide cdom single cancel subnormal special zeros ties randbits staircase").split()


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
