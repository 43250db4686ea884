"""pools.check judges every plan it passes (issue 20, item 3)."""

import pytest

tvm = pytest.importorskip("tvm")
from tvm.script import tirx as T  # noqa: E402

import txlab.arch as arch_mod  # noqa: E402
import txlab.pools as pools  # noqa: E402
from txlab.errors import ArchError  # noqa: E402


@T.prim_func
def eight_gib(A: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    big = pool.alloc((2**31,), "float32")
    pool.commit()
    big[tx] = A[tx]


@T.prim_func
def static_240k(A: T.Buffer((128,), "float32")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    sm = T.alloc_shared((60000,), "float32")
    sm[tx] = A[tx]
    A[tx] = sm[127 - tx]


@pytest.mark.parametrize("arch", ["garbage", "sm_42", "sm_9", "compute_90", ""])
def test_unknown_arch_is_an_arch_error(arch):
    with pytest.raises(ArchError):
        pools.check(eight_gib, arch=arch)


def test_digits_mean_what_compile_takes_them_to_mean():
    with pytest.raises(pools.PoolOverflowError, match="sm_90"):
        pools.check(eight_gib, arch="90")


def test_no_arch_without_a_gpu_judges_for_the_default_arch_said_once(monkeypatch, capsys):
    import txlab
    from txlab import device

    monkeypatch.setattr(device, "probe", lambda: device.GPUInfo(False, "test: no GPU"))
    arch_mod.forget_default_arch_notice()
    with pytest.raises(pools.PoolOverflowError) as info:
        pools.check(eight_gib)
    assert info.value.arch == txlab.config.default_arch
    with pytest.raises(pools.PoolOverflowError):
        pools.check(eight_gib)
    out = capsys.readouterr().out
    assert out.count("no GPU here") == 1, out


def test_static_over_the_limit_is_worded_with_the_right_numbers():
    with pytest.raises(pools.PoolOverflowError) as info:
        pools.check(static_240k, arch="sm_90a")
    msg = str(info.value)
    limit = 227 * 1024
    assert "240000 B of static shared memory" in msg, msg
    assert f"by {240000 - limit} B" in msg
    assert "None" not in msg and "byte -" not in msg and "240000 B + 240000 B" not in msg
    assert info.value.excess == 240000 - limit
