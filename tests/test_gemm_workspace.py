"""A split-K GEMM's workspace: its counters must start zeroed, a launch leaves them zero, and a caller's
workspace that is not zeroed is refused before the launch (it left C unwritten, with no error)."""

import numpy as np
import pytest

from txlab.errors import InputError
from txlab.examples import hopper_gemm as hg

ml_dtypes = pytest.importorskip("ml_dtypes")

M, N, K = 128, 128, 512


@pytest.fixture(scope="module")
def split2():
    cfg = hg.parse_config("128x128x64_s4_c2_sk2")
    return cfg, hg.build(M, N, K, cfg)


def _operands():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    return a, b, np.zeros((M, N), ml_dtypes.bfloat16)


def test_counters_follow_the_partials():
    for name, m, n in (
        ("128x128x64_s4_c2_sk2", 128, 128),
        ("128x256x64_s4_c2_cl2x1_sk3", 1000, 700),
        ("128x128x64_s4_c2_sk2t", 1024, 1152),
        ("64x128x64_s4_c1_sk4p", 333, 129),
    ):
        cfg = hg.parse_config(name)
        start, count = cfg.workspace_counters(m, n)
        total = cfg.workspace_elems(m, n)
        assert start + count == total and count % (128 * cfg.consumers) == 0
        assert start == count // (128 * cfg.consumers) * cfg.split_k * cfg.bm * cfg.bn  # one partial per item
    assert hg.parse_config("128x128x64_s4_c2").workspace_counters(128, 128) == (0, 0)


@pytest.mark.parametrize("dirt", ["ones", "one_counter"])
def test_a_workspace_that_is_not_zeroed_is_refused(split2, dirt):
    cfg, exe = split2
    w = hg.workspace(M, N, K, cfg)
    start, count = exe.workspace_counters
    if dirt == "ones":
        w[:] = 1.0  # torch.empty's leftovers, say
    else:
        w.view(np.int32)[start + count - 1] = 1  # one counter bumped by an aborted launch
    a, b, c = _operands()
    with pytest.raises(InputError, match=r"counters .* non-zero .* must start zeroed") as err:
        exe(a, b, c, w)
    assert err.value.param == "workspace"
    assert not np.asarray(c, np.float32).any()  # nothing launched


def test_a_zeroed_workspace_is_left_zero_for_the_next_launch(split2):
    cfg, exe = split2
    w = hg.workspace(M, N, K, cfg)
    start, count = exe.workspace_counters
    a, b, c = _operands()
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    for _ in range(2):
        c[:] = 0
        exe(a, b, c, w)
        assert np.linalg.norm(c.astype(np.float32) - ref) / np.linalg.norm(ref) < 4e-3
        assert not w.view(np.int32)[start:].any()


# ---- the GPU's SM count: the parallel fix-up's items must all be resident --------------------------------------
class _CudaTensor:
    """Stands for a torch CUDA tensor (torch is not needed: the check reads the type's module and ``is_cuda``)."""

    __module__ = "torch.testing.fake"
    is_cuda = True


def test_choices_for_another_sm_count_leave_the_table():
    from txlab.examples import gemm_fp8_config

    table = hg.tuned_config(256, 256, 65536)  # the table's entry, measured on 132 SMs
    assert table == hg.table_config(256, 256, 65536) and table.fixup == "parallel"
    for sms in (114, 78):
        cfg = hg.tuned_config(256, 256, 65536, num_sms=sms)
        assert cfg.num_sms == sms
        cfg.check_shape(256, 256, 65536)  # its items fit the GPU it is for
        assert hg.explain(256, 256, 65536, num_sms=sms).winner == cfg
        assert hg.workspace(256, 256, 65536, num_sms=sms).size == cfg.workspace_elems(256, 256)
        fp8 = gemm_fp8_config.tuned_config(256, 256, 65536, num_sms=sms)
        assert fp8.num_sms == sms
    with pytest.raises(InputError, match="num_sms"):
        hg.tuned_config(256, 256, 65536, num_sms=0)


def test_a_parallel_fix_up_refuses_a_gpu_with_too_few_sms(monkeypatch):
    import txlab.device as device

    M, N, K = 256, 256, 65536
    exe = hg.build(M, N, K)  # the table's 128x64 split 16, parallel fix-up: 128 CTAs wait for one another
    assert exe.gemm_config.fixup == "parallel"
    args = (_CudaTensor(), _CudaTensor(), _CudaTensor())
    monkeypatch.setattr(device, "probe", lambda: device.GPUInfo(True, name="H100 PCIe", sm_count=114))
    with pytest.raises(InputError, match=r"built for 132 SMs and this GPU has 114: .*num_sms=114") as err:
        exe.kernel_args(*args)
    assert err.value.param == "num_sms"
    monkeypatch.setattr(device, "probe", lambda: device.GPUInfo(True, name="H200", sm_count=132))
    w = hg.workspace(M, N, K)
    assert exe.kernel_args(*args, w) == (*args, w)
    # host arrays run on the emulator, every item at once: no check
    monkeypatch.setattr(device, "probe", lambda: device.GPUInfo(True, name="H100 PCIe", sm_count=114))
    host = (np.zeros(1), np.zeros(1), np.zeros(1))
    assert exe.kernel_args(*host, w) == (*host, w)


# ---- arguments and configurations as users write them ------------------------------------------------------------
def test_numpy_integers_and_bools_in_a_configuration():
    cfg = hg.GemmConfig(split_k=np.int64(2), swap_ab=np.bool_(False), stages=np.int32(4))
    cfg.validate()  # refused before, with "split_k=np.int64(2): use an integer in [1, 32]"
    assert type(cfg.split_k) is int and type(cfg.swap_ab) is bool and cfg == hg.GemmConfig(split_k=2)
    assert cfg.name == "128x256x64_s4_c2_sk2"
    for bad, text in (
        (dict(split_k=2.0), "an integer"),
        (dict(split_k=True), "an integer"),
        (dict(swap_ab="yes"), "True or False"),
        (dict(split_k=33), r"\[1, 32\]"),
    ):
        with pytest.raises(InputError, match=text):
            hg.GemmConfig(**bad).validate()


def test_an_fp8_name_without_dtype_says_so():
    with pytest.raises(InputError, match="FP8 configuration's name .* dtype='e4m3'"):
        hg.workspace(1024, 1024, 32768, "128x128x128_s7_c2_sk2_p2")
    assert hg.workspace(1024, 1024, 32768, "128x128x128_s7_c2_sk2_p2", dtype="e4m3").dtype == np.float32


def test_a_workspace_is_only_made_for_a_configuration_that_computes_the_shape():
    with pytest.raises(InputError, match="split_k <= 2"):
        hg.workspace(512, 512, 128, "128x128x64_s4_c2_sk4")


def test_args_for_fp8_operands_take_the_scales_and_the_fp8_workspace():
    e4m3, bf16 = ml_dtypes.float8_e4m3fn, ml_dtypes.bfloat16
    M, N, K = 6009, 32, 47040  # FP8 splits K here, bf16 does not: the FP8 build's workspace
    a, b, c = np.zeros((M, K), e4m3), np.zeros((N, K), e4m3), np.zeros((M, N), bf16)
    args = hg.args_for(a, b, c, scale_a=0.5, scale_b=2.0)
    assert args[3:5] == (0.5, 2.0)
    assert args[5].size == hg.workspace(M, N, K, dtype="e4m3").size > 0
    with pytest.raises(InputError, match="takes its per-tensor scales"):
        hg.args_for(a, b, c)
    x = np.zeros((64, 64), bf16)
    with pytest.raises(InputError, match="a bf16 GEMM takes none"):
        hg.args_for(x, x, x, scale_a=1.0, scale_b=1.0)
