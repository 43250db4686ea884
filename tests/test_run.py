"""Running, checking and timing (GPU-marked tests run on a CUDA GPU; the rest run anywhere)."""

from pathlib import Path

import numpy as np
import pytest

import txlab
from txlab.magic import run_cell
from txlab.run import compare

KERNELS = (Path(__file__).parent / "kernels" / "basics.py").read_text()


@pytest.fixture(scope="module")
def kernels():
    return run_cell(KERNELS, {})  # the local GPU's arch, or sm_90a without one


def test_without_gpu_running_says_what_is_missing(kernels, monkeypatch):
    from txlab import device

    if device.has_gpu():
        monkeypatch.setenv("TXLAB_FORCE_NO_GPU", "1")
        device.probe.cache_clear()
    monkeypatch.setattr(txlab.config, "device", "gpu")  # insist (the default "auto" emulates)
    try:
        a = np.zeros(256, np.float32)
        with pytest.raises(txlab.NoGPUError, match="needs a CUDA GPU") as info:
            kernels["scale"](a, a.copy(), 256)
        assert "Compiling and inspecting" in str(info.value)
        with pytest.raises(txlab.NoGPUError):
            txlab.bench(kernels["scale"], a, a.copy(), 256)
    finally:
        device.probe.cache_clear()


def test_compare_finds_mismatches_and_unwritten_elements():
    want = np.arange(8, dtype=np.float32)
    got = want.copy()
    assert compare(got, want, 1e-5, 1e-6)["ok"]
    got[3] += 1
    got[5] = np.nan  # an element the kernel never wrote (poisoned)
    r = compare(got, want, 1e-5, 1e-6)
    assert not r["ok"] and r["mismatches"] == 2 and r["first_mismatch"] == [3] and r["unwritten"] == 1


def test_check_args_reject_wrong_inputs(kernels):
    from txlab.run import check_args

    c = kernels["row_sum_smem"]
    X = np.zeros((4096, 256), np.float32)
    out = np.zeros(4096, np.float32)
    check_args(c, (X, out))
    with pytest.raises(txlab.InputError, match="takes 2 argument"):
        check_args(c, (X,))
    with pytest.raises(txlab.InputError, match=r"argument #1 \(out\) is None"):
        check_args(c, (X, None))
    with pytest.raises(txlab.InputError, match="dtype float64, but X is float32"):
        check_args(c, (X.astype(np.float64), out))
    with pytest.raises(txlab.InputError, match=r"axis 1: 128 != 256"):
        check_args(c, (X[:, :128].copy(), out))
    with pytest.raises(txlab.InputError, match="not contiguous"):
        check_args(c, (np.zeros((256, 4096), np.float32).T, out))
    s = kernels["scale"]
    a = np.zeros(100, np.float32)
    with pytest.raises(txlab.InputError, match="n = 100 from an earlier argument"):
        check_args(s, (a, np.zeros(99, np.float32), 100))
    with pytest.raises(txlab.InputError, match="must be a Python int"):
        check_args(s, (a, a.copy(), 100.0))


@pytest.mark.gpu
def test_numpy_arrays_are_copied_in_and_out(kernels):
    n = (1 << 20) + 7
    a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    b = np.full(n, np.nan, np.float32)
    kernels["scale"](a, b, n)
    np.testing.assert_array_equal(b, 2 * a)


@pytest.mark.gpu
def test_check_passes_and_fails_for_real(kernels):
    X = np.random.default_rng(1).standard_normal((4096, 256), dtype=np.float32)
    out = np.empty(4096, np.float32)
    good = txlab.check(kernels["row_sum_smem"], (X, out), reference=lambda X, o: X.sum(1), rtol=1e-4, atol=1e-4)
    assert good.ok, good.summary()
    bad = txlab.check(kernels["row_sum_smem"], (X, out), reference=lambda X, o: X.sum(1) + 1, rtol=1e-4, atol=1e-4)
    assert not bad.ok and bad.outputs["out"]["mismatches"] == 4096


@pytest.mark.gpu
def test_torch_tensors_are_zero_copy(kernels):
    torch = pytest.importorskip("torch")
    X = torch.randn(1 << 20, device="cuda")
    out = torch.full((1 << 15,), float("nan"), device="cuda")
    ptr = out.data_ptr()
    kernels["warp_sums"](X, out)
    torch.cuda.synchronize()
    assert out.data_ptr() == ptr
    torch.testing.assert_close(out, X.view(-1, 32).sum(1), rtol=1e-4, atol=1e-4)
    with pytest.raises(txlab.InputError, match="lives on cpu; pass a CUDA tensor"):
        kernels["warp_sums"](X.cpu(), out)


@pytest.mark.gpu
def test_bench_reports_sane_times_and_rates(kernels):
    n = 1 << 24
    a = np.random.default_rng(2).standard_normal(n, dtype=np.float32)
    b = np.empty_like(a)
    r = txlab.bench(kernels["scale"], a, b, n, bytes=2 * a.nbytes, warmup=5, rep=50)
    assert len(r.times_ms) == 50 and 0 < r.p10_ms <= r.median_ms <= r.p90_ms
    assert 50 < r.gbps < 6000  # a real HBM kernel on a data-center GPU
    d = r.to_dict()
    assert d["l2_flushed"] and d["device"]


def test_scalar_must_agree_with_array_shapes(kernels):
    from txlab.run import check_args

    a = np.zeros(100, np.float32)
    with pytest.raises(txlab.InputError, match="arrays say n = 100"):
        check_args(kernels["scale"], (a, a.copy(), 50))
