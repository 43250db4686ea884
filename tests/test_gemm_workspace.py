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
