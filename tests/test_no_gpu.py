"""No GPU is a normal place to be (issue 30, item 1): every entry point that takes a kernel takes a
``@T.prim_func``, an IRModule or a ``Compiled``; under ``txlab.config.device = "auto"`` (the
default) checks and calls run on the CPU emulator with one plain notice; ``bench`` says why it
cannot time; every NoGPUError names the CPU alternative. The no-GPU tests force "no GPU" so they
mean the same on the GPU host; the GPU-marked ones check that "auto" still picks the GPU there."""

import numpy as np
import pytest

import txlab
from txlab import device
from txlab.errors import InputError, KernelFault, NoGPUError


def kernel(src: str, name: str, tag: str):
    from txlab.magic import register_source, tirx_namespace

    src = src.strip("\n") + "\n"
    fn = register_source(src, tag=f"nogpu-{tag}")
    ns = tirx_namespace()
    exec(compile(src, fn, "exec"), ns)  # noqa: S102 - test kernels
    return ns[name]


SCALE = """
@T.prim_func
def scale(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < BOUND:
        B[i] = A[i] * T.float32(2.0)
"""


@pytest.fixture(scope="module")
def scale():
    return kernel(SCALE.replace("BOUND", "n"), "scale", "scale")


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setenv("TXLAB_FORCE_NO_GPU", "1")
    device.probe.cache_clear()
    device.forget_emulation_notice()
    monkeypatch.setattr(txlab.config, "device", "auto")
    yield
    device.probe.cache_clear()


def _args(n=300):
    a = np.arange(n, dtype=np.float32)
    return a, np.zeros_like(a), n


def test_config_device_is_auto_by_default_and_checked(monkeypatch):
    monkeypatch.delenv("TXLAB_DEVICE", raising=False)
    from txlab.settings import Config

    assert Config().device == "auto"
    with pytest.raises(ValueError, match="'auto', 'gpu' or 'cpu'"):
        txlab.config.device = "tpu"
    with pytest.raises(InputError, match="device='tpu'"):
        txlab.check(None, (), lambda: None, device="tpu")


def test_check_takes_a_prim_func_and_runs_on_the_emulator_with_one_plain_notice(scale, no_gpu, capsys):
    r = txlab.check(scale, _args(), reference=lambda a, b, n: 2 * a)
    assert r.ok and r.device == "cpu", r
    r2 = txlab.check(scale, _args(), reference=lambda a, b, n: 2 * a)
    assert r2.ok
    out, err = capsys.readouterr()
    assert out.count("run on the CPU emulator") == 1, out  # once, on stdout
    assert "txlab.config.device" in out and "CPU emulator" not in err


def test_check_takes_an_irmodule(scale, no_gpu):
    import tvm

    mod = tvm.IRModule({"scale": scale})
    assert txlab.check(mod, _args(), reference=lambda a, b, n: 2 * a).ok


def test_calling_a_compiled_kernel_without_a_gpu_emulates_it(scale, no_gpu):
    c = txlab.compile(scale, arch="sm_90a")
    a, b, n = _args()
    assert c(a, b, n) is None
    np.testing.assert_array_equal(b, 2 * a)
    # txlab.run.launch takes the prim_func too (the emulator needs no compile)
    b2 = np.zeros_like(a)
    txlab.run.launch(scale, a, b2, n)
    np.testing.assert_array_equal(b2, 2 * a)


def test_an_emulated_call_that_goes_out_of_bounds_is_a_fault(no_gpu):
    bad = kernel(SCALE.replace("BOUND", "n + 8"), "scale", "oob")
    with pytest.raises(KernelFault) as info:
        txlab.run.launch(bad, *_args())
    assert info.value.kind == "emulated" and "CPU emulator" in str(info.value)


def test_an_emulated_call_that_faults_leaves_the_arrays_unchanged_and_one_array_twice_stays_one(no_gpu):
    """A faulting emulated call wrote the in-bounds lanes into the caller's array (an isolated GPU run leaves it
    unchanged); a clean call still writes back, and an in-place call given one array twice still sees one array."""
    bad = kernel(SCALE.replace("BOUND", "n + 8"), "scale", "oob")
    a, b, n = _args()
    with pytest.raises(KernelFault):
        txlab.run.launch(bad, a, b, n)
    assert not b.any()
    good = kernel(SCALE.replace("BOUND", "n"), "scale", "scale")
    txlab.run.launch(good, a, a, n)  # B is A: in place
    np.testing.assert_array_equal(a, 2 * np.arange(n, dtype=np.float32))


SPIN = """
@T.prim_func
def spin(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    s = T.alloc_shared((1,), "int32")
    if tx == 0:
        s[0] = 1
    T.cuda.cta_sync()
    while s[0] > 0:
        s[0] = s[0] + 0
    B[tx] = A[tx]
"""


def test_a_kernel_that_hangs_on_the_emulator_is_a_timeout_at_its_loop(no_gpu, monkeypatch):
    """A spin on a value nothing changes ran ~4 minutes and then said "not emulated"; it is a hang: past
    ``timeout_s``, or past the emulator's round limit, ``KernelFault('timeout')`` at the loop's line."""
    import time

    from txlab.emulator import interpreter

    k = kernel(SPIN, "spin", "spin")
    a = np.ones(256, np.float32)
    t = time.perf_counter()
    with pytest.raises(KernelFault) as info:
        txlab.check(k, (a, np.zeros_like(a)), reference=lambda a, b: a, device="cpu", timeout_s=1)
    assert time.perf_counter() - t < 30
    f = info.value
    assert f.kind == "timeout" and "timeout_s=1 s" in str(f) and "while loop at line" in str(f) and f.hint
    monkeypatch.setattr(interpreter, "WHILE_ROUNDS", 20_000)
    with pytest.raises(KernelFault, match=r"ran 20,480 rounds without ending"):
        txlab.run.launch(k, a, np.zeros_like(a))


def test_insisting_on_a_gpu_names_the_cpu_alternative(scale, no_gpu, monkeypatch):
    monkeypatch.setattr(txlab.config, "device", "gpu")
    c = txlab.compile(scale, arch="sm_90a")
    for run in (
        lambda: c(*_args()),
        lambda: txlab.check(c, _args(), lambda a, b, n: 2 * a),
        lambda: txlab.check(scale, _args(), lambda a, b, n: 2 * a),
    ):
        with pytest.raises(NoGPUError) as info:
            run()
        msg = str(info.value)
        assert "needs a CUDA GPU" in msg and 'device = "cpu"' in msg and "txlab.emulate" in msg, msg


def test_bench_says_emulated_clocks_are_not_time(scale, no_gpu, monkeypatch):
    for dev in ("auto", "cpu"):
        monkeypatch.setattr(txlab.config, "device", dev)
        for k in (scale, txlab.compile(scale, arch="sm_90a")):
            with pytest.raises(NoGPUError) as info:
                txlab.bench(k, *_args())
            msg = str(info.value)
            assert "benchmarking scale" in msg and "not time" in msg, msg
            assert "txlab.occupancy_of(kernel)" in msg and "txlab.autotune(build" in msg, msg
            assert "compile-only" in msg and "txlab.tune(" not in msg, msg  # no deprecated spelling
    with pytest.raises(InputError, match="takes 3 argument"):  # wrong arguments are still said first
        txlab.bench(txlab.compile(scale, arch="sm_90a"), np.zeros(4, np.float32))


def test_occupancy_takes_a_prim_func(scale):
    from txlab.occupancy import occupancy

    o = occupancy(scale, "sm_90a")
    assert o.blocks_per_sm == 8 and o.kernel == "scale_kernel"
    with pytest.raises(TypeError, match="txlab.occupancy takes a @T.prim_func"):
        occupancy(42)


def test_every_no_gpu_error_names_the_cpu_alternative(scale, no_gpu):
    from txlab.device import require_gpu

    with pytest.raises(NoGPUError) as info:
        require_gpu("doing it")
    assert 'txlab.config.device = "cpu"' in str(info.value) and "txlab.emulate" in str(info.value)
    with pytest.raises(NoGPUError) as info:
        txlab.sanitize(scale, *_args())
    assert "txlab.emulate" in str(info.value)
    with pytest.raises(NoGPUError) as info:
        txlab.profile(scale, *_args())
    assert "txlab.emulate" in str(info.value) and "txlab.occupancy" in str(info.value)


@pytest.mark.gpu
def test_auto_picks_the_gpu_when_there_is_one(scale, monkeypatch, capsys):
    monkeypatch.setattr(txlab.config, "device", "auto")
    r = txlab.check(scale, _args(), reference=lambda a, b, n: 2 * a)
    assert r.ok and r.device == "gpu", r
    assert "CPU emulator" not in capsys.readouterr().out
    b = txlab.bench(scale, *_args(1 << 20), rep=5, warmup=1)
    assert b.median_ms > 0
    r = txlab.check(scale, _args(), reference=lambda a, b, n: 2 * a, device="cpu")
    assert r.ok and r.device == "cpu"


def test_a_bad_device_or_isolation_variable_names_the_variable(monkeypatch):
    """$TXLAB_DEVICE=GPU made the first use of txlab.config fail with "txlab.config.device must
    be ...", a setting the user never touched; case is now ignored, and a wrong value names $VAR."""
    from txlab.settings import Config

    monkeypatch.setenv("TXLAB_DEVICE", " GPU ")
    monkeypatch.setenv("TXLAB_ISOLATION", "Inline")
    c = Config()
    assert (c.device, c.isolation) == ("gpu", "inline")
    monkeypatch.setenv("TXLAB_DEVICE", "cuda")
    with pytest.raises(txlab.SettingError, match=r"\$TXLAB_DEVICE='cuda' .*auto, gpu, cpu.*unset TXLAB_DEVICE"):
        Config()
