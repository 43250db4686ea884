"""Fault injection: bad kernels (GPU-marked, run in the isolated worker) and bad inputs (CPU, checked
against a Compiled built for sm_90a). Each GPU case asserts the exact KernelFault kind, that the
caller's arrays are unchanged, and that a following correct run succeeds."""

import numpy as np
import pytest

import txlab
from txlab.device import GPUInfo
from txlab.errors import InputError, KernelFault
from txlab.magic import run_cell
from txlab.run import check_args, check_launch

# ---------------------------------------------------------------------------------------------
# bad kernels, written in TIRx
FAULT_KERNELS = {
    # a store 16 TiB past a 1 KiB buffer
    "oob_far_write": """
@T.prim_func
def oob_far_write(A: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    A[T.int64(tx) + (T.int64(1) << T.int64(42))] = T.float32(1.0)
""",
    # a load 16 TiB before the buffer
    "far_read": """
@T.prim_func
def far_read(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    B[tx] = A[T.int64(tx) - (T.int64(1) << T.int64(42))]
""",
    # a shared-memory store 64 MiB past the CTA's window
    "smem_oob": """
@T.prim_func
def smem_oob(A: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    sm = T.alloc_shared((128,), "float32")
    sm[tx + (1 << 24)] = A[tx]
    T.cuda.cta_sync()
    A[tx] = sm[tx]
""",
    # a float4 store at a 4-byte offset
    "misaligned_vec": """
@T.prim_func
def misaligned_vec(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    B[T.ramp(tx * 4 + 1, 1, 4)] = A[T.ramp(tx * 4, 1, 4)]
""",
    # a device-side assert that fails for ordinary data
    "trap_kernel": """
@T.prim_func
def trap_kernel(A: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    T.cuda.trap_when_assert_failed(A[tx] > T.float32(1e30))
    A[tx] = T.float32(1.0)
""",
    # mbarrier initialised for 2 arrivals, only 1 arrives: the parity-0 wait never completes
    "mbar_deadlock": """
@T.prim_func
def mbar_deadlock(A: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    bar = T.alloc_shared((1,), "uint64", align=8)
    if tx == 0:
        T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(2))
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tx == 0:
        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]), T.uint32(1))
    T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    A[tx] = T.float32(1.0)
""",
    # spins while A[0] == 0, with an atomic per iteration so the loop cannot be optimised away
    "spin_forever": """
@T.prim_func
def spin_forever(A: T.Buffer((2,), "int32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([32])
    while A[0] == 0:
        T.cuda.atomic_add(A.ptr_to([1]), 1)
""",
    "too_many_threads": """
@T.prim_func
def too_many_threads(A: T.Buffer((2048,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([2048])
    A[tx] = T.float32(1.0)
""",
    # 300 KiB of dynamic shared memory (H100/H200 opt-in maximum: 227 KiB)
    "too_much_smem": """
@T.prim_func
def too_much_smem(A: T.Buffer((128,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    sm = T.alloc_buffer((300 * 256,), "float32", scope="shared.dyn", align=128)
    sm[tx * 500] = A[tx]
    T.cuda.cta_sync()
    A[tx] = sm[(127 - tx) * 500]
""",
    "big_cluster": """
@T.prim_func
def big_cluster(A: T.Buffer((1024,), "float32")):
    T.device_entry()
    for clusterCtaIdx in T.thread_binding(32, thread="clusterCtaIdx.x"):
        bx = T.cta_id([32])
        tx = T.thread_id([32])
        A[bx * 32 + tx] = T.float32(1.0)
""",
    # a 1 TiB global workspace allocated by the host code before the launch
    "huge_workspace": """
@T.prim_func
def huge_workspace(A: T.Buffer((256,), "float32")):
    W = T.alloc_buffer((1 << 38,), "float32", scope="global")
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    W[T.int64(tx) * T.int64(1 << 30)] = A[tx]
    A[tx] = W[T.int64(255 - tx) * T.int64(1 << 30)]
""",
}

GOOD = """
@T.prim_func
def scale(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n,), "float32")
    T.device_entry()
    bx = T.cta_id([T.ceildiv(n, 256)])
    tx = T.thread_id([256])
    i = bx * 256 + tx
    if i < n:
        B[i] = A[i] * T.float32(2.0)

@T.prim_func
def fixed(X: T.Buffer((64, 32), "float32"), Y: T.Buffer((64, 32), "float16"), k: T.int32, s: T.float32):
    T.device_entry()
    bx = T.cta_id([64])
    tx = T.thread_id([32])
    Y[bx, tx] = T.float16(X[bx, tx] * s) + T.float16(k)
"""

# an H200 as cuDeviceGetAttribute reports it (for the pre-launch checks, no GPU needed)
H200 = GPUInfo(
    True,
    name="NVIDIA H200",
    arch="sm_90a",
    compute_capability=(9, 0),
    sm_count=132,
    max_smem_per_block_optin=232448,
    max_smem_per_sm=233472,
    max_threads_per_block=1024,
    max_regs_per_block=65536,
    max_regs_per_sm=65536,
)


@pytest.fixture(scope="module")
def faults():
    out = {}
    for name, src in FAULT_KERNELS.items():
        (c,) = run_cell(src, {}, arch=None if txlab.device.has_gpu() else "sm_90a").values()
        out[name] = c
    return out


@pytest.fixture(scope="module")
def good():
    return run_cell(GOOD, {}, arch=None if txlab.device.has_gpu() else "sm_90a")


# ---------------------------------------------------------------------------------------------
# CPU: every fault kernel compiles, and the worker's rebuild from compiled.script is identical
def test_fault_kernels_compile_for_sm90a_and_round_trip_through_script():
    from tvm.script import from_source

    for name, src in FAULT_KERNELS.items():
        (c,) = run_cell(src, {}, arch="sm_90a").values()
        assert c.cubin[:4] == b"\x7fELF", name
        again = txlab.compile(from_source(c.script), arch="sm_90a", name=c.name)
        # the same kernel: same CUDA, PTX and cubin (the cache keys differ: a key also covers the
        # source's line numbering, which the line map depends on, and the printed script has its own)
        assert (again.cuda_source, again.ptx, again.cubin) == (c.cuda_source, c.ptx, c.cubin), name


def test_fault_kernels_emit_what_they_claim():
    cs = {
        n: list(run_cell(s, {}, arch="sm_90a").values())[0]
        for n, s in FAULT_KERNELS.items()
        if n in ("oob_far_write", "misaligned_vec", "trap_kernel", "mbar_deadlock", "spin_forever")
    }
    assert "(int64_t)4398046511104" in cs["oob_far_write"].cuda_source
    assert "*(float4*)(B_ptr + ((((int)threadIdx.x) * 4) + 1))" in cs["misaligned_vec"].cuda_source
    assert 'asm("trap;")' in cs["trap_kernel"].cuda_source
    assert "mbarrier.try_wait.parity" in cs["mbar_deadlock"].cuda_source
    assert "while (1)" in cs["spin_forever"].cuda_source and "atomic" in cs["spin_forever"].cuda_source


@pytest.mark.parametrize(
    "name, problem",
    [
        ("too_many_threads", "2048 threads per block"),
        ("too_much_smem", "307200 bytes of shared memory"),
        ("big_cluster", "a cluster of 32 CTAs"),
    ],
)
def test_launch_config_rejected_before_launch(faults, name, problem):
    with pytest.raises(KernelFault) as e:
        check_launch(faults[name], H200, [np.zeros(2048, np.float32)])
    assert e.value.kind == "launch_config"
    assert problem in str(e.value) and "Nothing was launched" in str(e.value)
    assert e.value.kernel == f"{name}_kernel" and e.value.launch["block"]


def test_registers_times_threads_over_the_register_file(good):
    c = good["scale"]
    small = GPUInfo(
        True,
        name="tiny",
        max_threads_per_block=1024,
        max_smem_per_block_optin=1 << 20,
        max_regs_per_block=256 * c.resources["scale_kernel"]["registers"] - 1,
    )
    with pytest.raises(KernelFault, match="registers per block") as e:
        check_launch(c, small, [np.zeros(300, np.float32)] * 2 + [300])
    assert e.value.kind == "launch_config"


def test_good_kernels_pass_launch_checks_and_symbolic_grid_is_evaluated(good):
    from txlab.launch import launch_shape

    a = np.zeros(1000, np.float32)
    check_launch(good["scale"], H200, [a, a, 1000])
    check_launch(good["fixed"], H200, [])
    assert launch_shape(good["scale"], [a, a, 1000])["grid"] == (4, 1, 1)


# ---------------------------------------------------------------------------------------------
# CPU: bad inputs, rejected before launch, naming the parameter
def _fixed_args():
    return [np.zeros((64, 32), np.float32), np.zeros((64, 32), np.float16), 3, 0.5]


def _bad_inputs():
    f32 = np.zeros(100, np.float32)
    X, Y, k, s = _fixed_args()
    return [
        ("scale", "too_few", [f32, f32], None, "takes 3 argument(s), got 2"),
        ("scale", "too_many", [f32, f32, 100, 1], None, "takes 3 argument(s), got 4"),
        ("scale", "none", [None, f32, 100], "A", "is None"),
        ("scale", "dtype", [f32.astype(np.float64), f32, 100], "A", "has dtype float64, but A is float32"),
        ("scale", "ndim", [f32.reshape(10, 10), f32, 100], "A", "2-d"),
        ("fixed", "shape", [X[:32], Y, k, s], "X", "axis 0: 32 != 64"),
        ("scale", "symbolic_mismatch", [f32, np.zeros(99, np.float32), 100], "B", "axis 0 is 99"),
        ("scale", "scalar_vs_shape", [f32, f32, 101], "n", "arrays say n = 100"),
        ("scale", "float_for_int", [f32, f32, 100.0], "n", "must be a Python int"),
        ("scale", "bool_for_int", [f32, f32, True], "n", "is a bool; n is int32"),
        (
            "scale",
            "int32_overflow",
            [np.zeros(0, np.float32), np.zeros(0, np.float32), 1 << 31],
            "n",
            "does not fit in int32",
        ),
        ("scale", "array_for_scalar", [f32, f32, np.array([100])], "n", "is an array"),
        ("fixed", "string_for_float", [X, Y, k, "0.5"], "s", "must be a number"),
        ("scale", "list_for_buffer", [list(f32), f32, 100], "A", "must be a numpy array"),
        ("fixed", "non_contiguous", [np.zeros((32, 64), np.float32).T, Y, k, s], "X", "not contiguous"),
        ("scale", "strided", [np.zeros(200, np.float32)[::2], f32, 100], "A", "not contiguous"),
        ("scale", "byte_order", [f32.astype(">f4"), f32, 100], "A", "non-native byte order"),
        ("fixed", "fp16_for_fp32", [X.astype(np.float16), Y, k, s], "X", "has dtype float16"),
    ]


@pytest.mark.parametrize("kernel, case, args, param, message", _bad_inputs(), ids=[c[1] for c in _bad_inputs()])
def test_bad_input_rejected_naming_the_parameter(good, kernel, case, args, param, message):
    with pytest.raises(InputError) as e:
        check_args(good[kernel], args)
    assert message in str(e.value)
    assert e.value.param == param
    if param:
        assert f"({param})" in str(e.value)


def test_good_inputs_pass(good):
    check_args(good["scale"], [np.zeros(100, np.float32)] * 2 + [100])
    check_args(good["scale"], [np.zeros(100, np.float32)] * 2 + [np.int64(100)])
    check_args(good["fixed"], _fixed_args())


def test_torch_inputs_on_the_wrong_device_rejected(good):
    torch = pytest.importorskip("torch")
    a = torch.zeros(100)
    with pytest.raises(InputError, match="CPU tensor") as e:
        check_args(good["scale"], [a, a, 100])
    assert e.value.param == "A"
    m = torch.zeros(100, device="meta")
    with pytest.raises(InputError, match="lives on meta"):
        check_args(good["scale"], [m, m, 100])


# ---------------------------------------------------------------------------------------------
# GPU: each bad kernel in the worker -> exact kind; arrays unchanged; the next run works
def _assert_next_run_works(good):
    a = np.arange(1000, dtype=np.float32)
    b = np.zeros_like(a)
    good["scale"](a, b, 1000)
    np.testing.assert_array_equal(b, a * 2)


def _args_for(c):
    out = []
    for p in c.entry_params:
        if p["kind"] == "scalar":
            out.append(0)
        else:
            out.append(np.full(p["shape"], 0.25 if p["dtype"].startswith("float") else 0, dtype=p["dtype"]))
    return out


GPU_CASES = [
    ("oob_far_write", "illegal_address", True),
    ("far_read", "illegal_address", True),
    ("smem_oob", "illegal_instruction", True),  # what the H200 reports for it (2026-11-30)
    ("misaligned_vec", "misaligned", True),
    ("trap_kernel", "trap", True),
    ("mbar_deadlock", "timeout", True),
    ("spin_forever", "timeout", True),
    ("too_many_threads", "launch_config", False),
    ("too_much_smem", "launch_config", False),
    ("big_cluster", "launch_config", False),
    ("huge_workspace", "oom", False),
]


@pytest.mark.gpu
@pytest.mark.parametrize("name, kind, replaced", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_fault_in_worker(isolated, faults, good, name, kind, replaced):
    from txlab import worker

    c = faults[name]
    args = _args_for(c)
    before = [a.copy() for a in args if isinstance(a, np.ndarray)]
    worker.boot()  # a booted worker, so a replacement is visible as a new pid
    pid_before = worker.status()["pid"]
    with pytest.raises(KernelFault) as e:
        c(*args, timeout_s=3.0)
    f = e.value
    assert f.kind == kind, str(f)
    assert f.kernel == f"{c.name}_kernel"
    assert f.launch and f.launch["grid"] and f.launch["block"]
    if kind == "timeout":
        assert 2.9 <= f.waited_s < 10, f.waited_s
        assert "did not finish within 3 s" in str(f) and "grid=" in str(f)
    for a, b in zip([a for a in args if isinstance(a, np.ndarray)], before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are unchanged
    if kind != "launch_config":  # pre-launch rejections never reach the worker
        assert f.worker_replaced is replaced
        if replaced:
            assert worker.status()["pid"] != pid_before
    _assert_next_run_works(good)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["too_many_threads", "too_much_smem"])
def test_launch_config_from_cuda_when_the_precheck_is_bypassed(isolated, faults, good, name):
    """The worker classifies CUDA's own launch error too (worker.run skips check_launch)."""
    from txlab import worker

    c = faults[name]
    with pytest.raises(KernelFault) as e:
        worker.run(c, _args_for(c), timeout_s=5.0)
    assert e.value.kind == "launch_config", str(e.value)
    assert e.value.worker_replaced is False
    _assert_next_run_works(good)


@pytest.mark.gpu
def test_check_and_bench_surface_faults(isolated, faults, good):
    c = faults["trap_kernel"]
    with pytest.raises(KernelFault) as e:
        txlab.check(c, (np.full(256, 0.25, np.float32),), reference=lambda a: np.ones_like(a), timeout_s=3.0)
    assert e.value.kind == "trap"
    c = faults["oob_far_write"]
    with pytest.raises(KernelFault) as e:
        txlab.bench(c, np.zeros(256, np.float32), warmup=1, rep=3, timeout_s=3.0)
    assert e.value.kind == "illegal_address"
    with pytest.raises(KernelFault) as e:
        txlab.bench(faults["spin_forever"], np.zeros(2, np.int32), warmup=0, rep=2, timeout_s=2.0)
    assert e.value.kind == "timeout"
    _assert_next_run_works(good)


@pytest.mark.gpu
def test_inline_mode_still_classifies(faults, good):
    """Inline, a launch-config error is still typed (and harmless to the context)."""
    before = txlab.config.isolation
    txlab.config.isolation = "inline"
    try:
        c = faults["too_much_smem"]
        with pytest.raises(KernelFault) as e:
            c(*_args_for(c))
        assert e.value.kind == "launch_config"
        _assert_next_run_works(good)
    finally:
        txlab.config.isolation = before


RAGGED_CLUSTER = """
@T.prim_func
def ragged(A: T.Buffer((96,), "float32")):
    T.device_entry()
    cbx = T.cta_id_in_cluster([2])
    tx = T.thread_id([32])
    A[cbx * 32 + tx] = T.float32(1.0)
"""  # no T.cta_id: TVM launches a grid of one CTA with a cluster of two


def test_a_grid_that_is_not_whole_clusters_is_rejected_before_launch_as_the_emulator_refuses_it():
    """cuLaunchKernelEx refuses a grid that is not a multiple of the cluster dims; txlab says so before launching,
    in the words the emulator's refusal uses (a GPU run went to the driver and came back unclassified)."""
    from txlab.emulator import emulate

    c = run_cell(RAGGED_CLUSTER, {}, arch="sm_90a")["ragged"]
    assert c.launch["ragged_kernel"]["grid"] == (1, 1, 1) and c.launch["ragged_kernel"]["cluster"] == (2, 1, 1)
    with pytest.raises(KernelFault) as e:
        check_launch(c, H200, [np.zeros(96, np.float32)])
    assert e.value.kind == "launch_config" and "not a whole number of clusters of (2, 1, 1)" in str(e.value)
    assert "a grid of (2, 1, 1) would be" in str(e.value)
    with pytest.raises(KernelFault) as e:
        emulate(c, np.zeros(96, np.float32))
    assert e.value.kind == "launch_config" and "not a multiple of its cluster dims" in str(e.value)
