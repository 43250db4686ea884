"""txlab.emulate: the CPU emulator of the lowered device IR. Correct kernels equal numpy; planted
bugs are found at their lines; their correct twins give no finding."""

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate
from txlab.errors import EmulationFault, NotEmulatedError


def kernel(src: str, name: str):
    from txlab.magic import register_source, tirx_namespace

    src = src.strip("\n") + "\n"
    fn = register_source(src, tag=f"emu-{name}")
    ns = tirx_namespace()
    exec(compile(src, fn, "exec"), ns)  # noqa: S102 - test kernels
    return ns[name]


def line_of(src: str, needle: str) -> int:
    lines = src.strip("\n").splitlines()
    return next(i for i, l in enumerate(lines, 1) if needle in l)


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


def test_elementwise_equals_numpy_and_bounds_are_checked():
    good = kernel(SCALE.replace("BOUND", "n"), "scale")
    n = 1000
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    b = np.full_like(a, np.nan)
    res = emulate(good, a, b, n)
    assert res.ok and res.findings == []
    assert np.array_equal(b, 2 * a)
    assert res.stats["ctas_run"] == 4 and res.stats["lane_instructions"] > 0

    src = SCALE.replace("BOUND", "n + 8")
    bad = kernel(src, "scale")
    b2 = np.full_like(a, np.nan)
    res = emulate(bad, a, b2, n)
    oob = res.by_kind("out_of_bounds")
    assert {f.buffer for f in oob} == {"A", "B"}
    line = line_of(src, "B[i] = A[i]")
    assert all(f.line == line for f in oob)
    w = next(f for f in oob if "write" in f.message)
    assert w.cta == (3, 0, 0) and w.index[0] == 1000 and w.threads[0] == 1000 - 3 * 256
    assert np.array_equal(b2, 2 * a)  # the in-bounds lanes still wrote; nothing else changed
    with pytest.raises(EmulationFault) as ei:
        emulate(bad, a, b2.copy(), n, stop=True)
    assert ei.value.finding.kind == "out_of_bounds"


def test_a_compiled_kernel_is_not_lowered_again(monkeypatch):
    """emulate(compiled) runs the device IR the compile lowered (txlab.build.lower, kept on the
    Compiled); a prim_func is lowered by the same function, once per kernel object and arch."""
    from txlab import build

    good = kernel(SCALE.replace("BOUND", "n"), "scale")
    c = txlab.compile(good, arch="sm_90a", use_cache=False)  # a cache hit is lowered on first use (once)
    calls = []
    real = build.lower
    monkeypatch.setattr(build, "lower", lambda *a, **k: calls.append(a) or real(*a, **k))
    a = np.arange(300, dtype=np.float32)
    b = np.zeros_like(a)
    assert emulate(c, a, b, 300).ok and np.array_equal(b, 2 * a)
    assert calls == []
    from txlab.emulator import runner

    runner._LOWERED.clear()
    assert emulate(good, a, b, 300, arch="sm_90a").ok and len(calls) == 1
    # the same kernel again: not lowered again; another arch, or an equal kernel written elsewhere
    # (its lines are its own): lowered
    assert emulate(good, a, b, 300, arch="sm_90a").ok and len(calls) == 1
    assert emulate(good, a, b, 300, arch="sm_80").ok and len(calls) == 2
    assert emulate(kernel(SCALE.replace("BOUND", "n"), "scale"), a, b, 300, arch="sm_90a").ok and len(calls) == 3


def test_ctas_subset_runs_only_those():
    good = kernel(SCALE.replace("BOUND", "n"), "scale")
    n = 1024
    a = np.ones(n, np.float32)
    b = np.zeros(n, np.float32)
    res = emulate(good, a, b, n, ctas=[2])
    assert res.stats["ctas_run"] == 1
    assert b[512:768].tolist() == [2.0] * 256 and b[:512].sum() == 0 and b[768:].sum() == 0


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"ctas": 0}, "ctas must be a list of CTA indices"),
        ({"ctas": []}, "ctas is empty"),
        ({"ctas": [1.5]}, "1.5 is neither"),
        ({"ctas": ["0"]}, "'0' is neither"),
        ({"ctas": [(0, 0, 0, 0)]}, "is neither"),
        ({"ctas": [True]}, "True is neither"),
        ({"ctas": [4]}, "4 (a linear index: 0 to 3 here) is outside the grid (4, 1, 1)"),
        ({"ctas": [-1]}, "-1 (a linear index: 0 to 3 here) is outside"),
        ({"ctas": [(0, 1)]}, "(0, 1, 0) is outside the grid"),
        ({"check": "yes"}, "check must be True or False, not 'yes'"),
        ({"stop": 1}, "stop must be True or False, not 1"),
        ({"iket": None}, "iket must be True or False"),
    ],
)
def test_bad_emulate_options_are_input_errors(options, says):
    """Each option is checked like fast_math: an InputError naming it, before anything runs (an int
    for ctas was a bare TypeError, an empty list ran nothing and said ok, check='yes' was taken)."""
    from txlab.errors import InputError

    good = kernel(SCALE.replace("BOUND", "n"), "scale")
    a = np.ones(1000, np.float32)
    b = np.zeros_like(a)
    with pytest.raises(InputError) as ei:
        emulate(good, a, b, 1000, **options)
    assert says in str(ei.value) and ei.value.param == next(iter(options))
    assert not b.any()
    assert emulate(good, a, b, 1000, ctas=np.array([3]), check=False).stats["ctas_run"] == 1


def test_a_read_only_array_is_fine_as_an_input_and_an_input_error_as_an_output():
    """A read-only numpy array the kernel only reads runs; one it writes (a store, an atomic) is an
    InputError naming the argument, not numpy's bare 'assignment destination is read-only'."""
    from txlab.errors import InputError

    src = SCALE.replace("BOUND", "n")
    good = kernel(src, "scale")
    a = np.arange(300, dtype=np.float32)
    a.flags.writeable = False
    b = np.zeros_like(a)
    assert emulate(good, a, b, 300).ok and np.array_equal(b, 2 * a)
    b = np.zeros_like(a)
    b.flags.writeable = False
    with pytest.raises(InputError) as ei:
        emulate(good, np.ones(300, np.float32), b, 300)
    assert ei.value.param == "B" and "read-only" in str(ei.value) and "writeable" in str(ei.value)
    assert f"line {line_of(src, 'B[i] = A[i]')}" in str(ei.value) and not b.any()
    # a store no lane makes (the guard is false for all) is no write
    b2 = np.zeros(1, np.float32)
    b2.flags.writeable = False
    assert emulate(kernel(SCALE.replace("BOUND", "0"), "scale"), np.ones(1, np.float32), b2, 1).ok

    from test_emulator_atomics import HIST, _hist_inputs

    x, _ = _hist_inputs()
    h = np.zeros(64, np.int32)
    h.flags.writeable = False
    with pytest.raises(InputError, match="argument H is a read-only") as ei:
        emulate(kernel(HIST.replace("SYNC", "T.cuda.cta_sync()"), "hist"), x, h)
    assert ei.value.param == "H"


RACE = """
@T.prim_func
def shift(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    s = T.alloc_shared((256,), "float32")
    s[tx] = A[tx]
    SYNC
    B[tx] = s[(tx + 1) % 256]
"""


def test_shared_race_found_at_both_lines_and_not_with_a_barrier():
    a = np.arange(256, dtype=np.float32)
    src = RACE.replace("SYNC", "T.evaluate(0)")
    b = np.zeros_like(a)
    res = emulate(kernel(src, "shift"), a, b)
    races = res.by_kind("shared_race")
    assert len(races) == 1
    assert races[0].line == line_of(src, "B[tx] = s[") and races[0].other_line == line_of(src, "s[tx] = A[tx]")
    src_ok = RACE.replace("SYNC", "T.cuda.cta_sync()")
    b = np.zeros_like(a)
    res = emulate(kernel(src_ok, "shift"), a, b)
    assert res.ok, res.summary()
    assert np.array_equal(b, np.roll(a, -1))


UNWRITTEN = """
@T.prim_func
def unwritten(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    s = T.alloc_shared((512,), "float32")
    s[tx] = A[tx]
    T.cuda.cta_sync()
    B[tx] = s[tx + 256]
"""


def test_an_unwritten_shared_read_is_reported_and_gives_zero():
    """Shared memory starts as zeros on the emulator: a read of bytes nothing of the CTA wrote gives 0 there and is an
    uninitialized_shared_read finding at the reading line (a GPU reads whatever is there); the notes say both. With
    check=False nothing is checked."""
    from txlab.emulator.interpreter import ZEROED

    a = np.arange(256, dtype=np.float32)
    b = np.full_like(a, np.nan)
    res = emulate(kernel(UNWRITTEN, "unwritten"), a, b)
    assert np.array_equal(b, np.zeros_like(a))
    (f,) = [f for f in res.findings if f.kind != "note"]
    assert f.kind == "uninitialized_shared_read" and f.line == line_of(UNWRITTEN, "B[tx] = s[tx + 256]"), f
    assert f.buffer == "s" and f.index == [1024] and f.count == 256 and f.cta == (0, 0, 0), f
    assert "no thread of this CTA wrote" in f.message and "whatever was left" in f.message
    assert ZEROED in res.notes and "uninitialized_shared_read" in ZEROED
    b = np.full_like(a, np.nan)
    assert emulate(kernel(UNWRITTEN, "unwritten"), a, b, check=False).ok
    res = emulate(kernel(SCALE.replace("BOUND", "n"), "scale"), a, np.zeros_like(a), 256)
    assert ZEROED not in res.notes  # no shared memory


CTA_SUMS = """
@T.prim_func
def sums(X: T.Buffer((256,), "float32"), O: T.Buffer((3, 256), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    scratch = T.alloc_buffer((8,), "float32", scope="shared")
    O[0, tx] = T.cuda.cta_sum(X[tx], 8, scratch.data)
    BETWEEN
    O[1, tx] = T.cuda.cta_sum(X[tx] * T.float32(2), 8, scratch.data)
    T.cuda.cta_sync()
    O[2, tx] = scratch[0]
"""


def test_cta_reductions_go_through_their_scratch_as_on_the_gpu():
    """TVM's cta_reduce helper stores each warp's total and then the CTA's in its shared scratch, and every thread
    reads scratch[0] last: two reductions on one scratch with no barrier between race (warp 0's first store of
    the second against the other warps' last load of the first), and the scratch holds the total afterwards."""
    x = np.arange(256, dtype=np.float32)
    src = CTA_SUMS.replace("BETWEEN", "T.evaluate(0)")
    o = np.zeros((3, 256), np.float32)
    res = emulate(kernel(src, "sums"), x, o)
    (race,) = res.by_kind("shared_race")
    first, second = line_of(src, "O[0, tx]"), line_of(src, "O[1, tx]")
    assert {race.line, race.other_line} == {first, second}, race
    fixed = CTA_SUMS.replace("BETWEEN", "T.cuda.cta_sync()")
    o = np.zeros((3, 256), np.float32)
    res = emulate(kernel(fixed, "sums"), x, o)
    assert res.ok, res.summary()
    assert (o[0] == x.sum()).all() and (o[1] == 2 * x.sum()).all() and (o[2] == 2 * x.sum()).all()


DIVERGENT = """
@T.prim_func
def rev(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    s = T.alloc_shared((256,), "float32")
    s[tx] = A[tx]
    if COND:
        T.cuda.cta_sync()
    B[tx] = s[255 - tx]
"""


def test_divergent_barrier_found_and_uniform_twin_clean():
    a = np.arange(256, dtype=np.float32)
    src = DIVERGENT.replace("COND", "tx < 100")
    res = emulate(kernel(src, "rev"), a, np.zeros_like(a))
    div = res.by_kind("divergent_barrier")
    assert div and div[0].line == line_of(src, "T.cuda.cta_sync()")
    src_ok = DIVERGENT.replace("COND", "bx == 0")
    b = np.zeros_like(a)
    res = emulate(kernel(src_ok, "rev"), a, b)
    assert res.ok, res.summary()
    assert np.array_equal(b, a[::-1])


def _example_source(eid):
    from txlab.api import examples

    return examples()[eid]


def test_role_pipeline_runs_warp_by_warp_and_over_arrival_is_found():
    ex = _example_source("role_pipeline")
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    y = np.zeros_like(x)
    res = emulate(ex.prim_func(), x, y, arch=ex.arch)
    assert res.ok, res.summary()
    assert res.stats["mode"] == "per-warp"
    np.testing.assert_array_equal(y, ex.expected(x, y))
    src = ex.source.replace("init_full=128", "init_full=64")
    bad = kernel(src, "role_pipeline")
    res = emulate(bad, x, np.zeros_like(x), arch=ex.arch)
    # 128 producer arrivals on a barrier initialised for 64: each warp's 32 arrivals fit the pending
    # count, so the symptom is the full barrier completing twice before the consumers saw phase 0
    over = res.by_kind("over_arrival") + res.by_kind("phase_skip")
    assert over and over[0].line == line_of(src, "pipe.full.arrive(ps.stage)")
    assert res.by_kind("deadlock")  # and then the pipeline hangs, as on the GPU


def test_deadlock_is_reported_not_hung():
    ex = _example_source("role_pipeline")
    src = ex.source.replace("PipelineState(2, 1)", "PipelineState(2, 0)")  # producer waits on the wrong phase
    x = np.zeros(1024, np.float32)
    res = emulate(kernel(src, "role_pipeline"), x, np.zeros_like(x), arch=ex.arch)
    dead = res.by_kind("deadlock")
    assert dead and dead[0].line == line_of(src, "pipe.empty.wait(ps.stage, ps.phase)")
    assert "parity" in dead[0].message


@pytest.mark.parametrize(
    "eid",
    [
        "warp_vote",
        "warp_reductions",
        "cta_reductions",
        "atomics",
        "mbarrier_handoff",
        "flag_poll",
        "tma_tile",
        "tile_schedulers",
        "conversions",
        "packed_half",
        "mma_fragment_store",
        "timer_ring",
        "cluster_remote_arrive",
        "mbarrier_cluster",
    ],
)
def test_catalogue_examples_reproduce_bitwise(eid):
    from txlab.api.emulated import emulate_example

    row = emulate_example(eid)
    assert row["status"] == "bitwise", row


def test_not_emulated_names_op_and_line():
    # an inline CUDA function (T.cuda.func_call) is not modelled: the emulator stops and says where
    ex = _example_source("loads_and_calls")
    args = ex.inputs()
    with pytest.raises(NotEmulatedError) as ei:
        emulate(ex.prim_func(), *args, arch=ex.arch)
    # it names the user's device function, not the call op that carries it
    assert "not emulated: txlab_square" in str(ei.value) and "tirx.cuda.func_call" in str(ei.value)
    assert ei.value.name == "txlab_square"
    assert ei.value.lineno == line_of(ex.source, "T.cuda.func_call(")


def test_check_on_cpu_device():
    good = kernel(SCALE.replace("BOUND", "n"), "scale")
    n = 300
    a = np.arange(n, dtype=np.float32)
    r = txlab.check(good, (a, np.zeros_like(a), n), reference=lambda a, b, n: 2 * a, outputs=["B"], device="cpu")
    assert r.ok and r.device == "cpu", r
    bad = kernel(SCALE.replace("BOUND", "n + 8").replace("* T.float32(2.0)", "* T.float32(2.0)"), "scale")
    r = txlab.check(bad, (a, np.zeros_like(a), n), reference=lambda a, b, n: 2 * a, outputs=["B"], device="cpu")
    assert not r.ok and r.findings
    old = txlab.config.device
    try:
        txlab.config.device = "cpu"
        assert txlab.check(good, (a, np.zeros_like(a), n), reference=lambda a, b, n: 2 * a, outputs=["B"]).ok
    finally:
        txlab.config.device = old
    # a typed error (a ValueError too) naming the setting and its values, from Python as from $TXLAB_DEVICE
    with pytest.raises(txlab.SettingError, match=r"txlab.config.device must be 'auto', 'gpu' or 'cpu', not 'tpu'"):
        txlab.config.device = "tpu"
    with pytest.raises(txlab.SettingError, match="txlab.config.isolation must be"):
        txlab.config.isolation = "thread"


BLOCKSUM = """
@T.prim_func
def blocksum(A_ptr: T.handle, B_ptr: T.handle, n: T.int32):
    A = T.match_buffer(A_ptr, (n,), "float32")
    B = T.match_buffer(B_ptr, (n // 128,), "float32")
    T.device_entry()
    bx = T.cta_id([n // 128])
    tx = T.thread_id([128])
    s = T.alloc_shared((128,), "float32")
    s[tx] = A[bx * 128 + tx]
    T.cuda.cta_sync()
    if COND:
        T.cuda.cta_sync()
    if tx == 0:
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for k in T.serial(128):
            acc[0] = acc[0] + s[READ]
        B[bx] = acc[0]
"""


def test_ctas_batched_into_one_vector_equal_cta_by_cta(monkeypatch):
    import txlab.emulator.program as P

    n = 128 * 40
    a = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    src = BLOCKSUM.replace("COND", "bx % 3 == 0").replace("READ", "k")  # a barrier taken by whole CTAs only
    k = kernel(src, "blocksum")
    want = np.zeros(n // 128, np.float32)
    for c in range(n // 128):
        acc = np.float32(0)
        for v in a[c * 128 : (c + 1) * 128]:
            acc = np.float32(acc + v)
        want[c] = acc
    b = np.zeros(n // 128, np.float32)
    res = emulate(k, a, b, n)
    assert res.stats["ctas_per_batch"] == 40 and res.ok, res.summary()
    assert np.array_equal(b, want)
    monkeypatch.setattr(P, "MAX_BATCH_LANES", 128)  # one CTA at a time: the same bits
    b1 = np.zeros_like(b)
    res1 = emulate(k, a, b1, n)
    assert res1.stats["ctas_per_batch"] == 1 and np.array_equal(b1, b)
    monkeypatch.undo()
    # a barrier split inside one CTA of the batch is found, in that CTA; a race in every CTA once
    bad = kernel(BLOCKSUM.replace("COND", "bx == 7 and tx < 64").replace("READ", "k"), "blocksum")
    res = emulate(bad, a, np.zeros_like(b), n)
    div = res.by_kind("divergent_barrier")
    assert len(div) == 1 and div[0].cta == (7, 0, 0) and div[0].threads[0] == 64
    racy = BLOCKSUM.replace("    T.cuda.cta_sync()\n    if COND", "    if COND").replace("COND", "bx < 0")
    res = emulate(kernel(racy.replace("READ", "k"), "blocksum"), a, np.zeros_like(b), n)
    races = res.by_kind("shared_race")
    assert races and races[0].cta == (0, 0, 0) and races[0].line == line_of(racy, "acc[0] + s[")


@pytest.mark.parametrize("eid", ["wgmma_ss", "wgmma_rs"])
def test_wgmma_through_descriptors_equals_the_tensor_core_model(eid):
    from txlab.emulator import tensorcore as tc

    ex = _example_source(eid)
    A, B, C = ex.inputs()
    C0 = C.copy()
    res = emulate(ex.prim_func(), A, B, C, arch=ex.arch)
    assert res.ok, res.summary()
    a = A.astype(np.float64)
    atype = {"float16": "f16", "bfloat16": "bf16"}[str(A.dtype)]
    want = tc.compute("wgmma", atype, "f32", a.T if eid == "wgmma_ss" else a, B.astype(np.float64), np.zeros_like(C0))
    assert np.array_equal(C.view(np.uint32), want.view(np.uint32))  # one k16 step, as the H200 sums it


@pytest.mark.parametrize(
    "shape,config,sms",
    [
        ((384, 256, 320), "128x128x64_s4_c2_pp", 2),  # 3 tiles per CTA
        ((300, 250, 192), "64x256x64_s3_c2_pp", 2),  # tails, KT < stages
        ((256, 255, 64), "128x128x64_s2_c2_pp", 1),  # odd N, KT = 1
        ((512, 256, 128), "128x64x64_s6_c2_pp", 3),
        ((300, 320, 192), "128x128x64_s4_c2_pp_tma", 2),  # TMA stores
        ((384, 192, 320), "128x192x64_s3_c2_tma", 1),
        # clusters: B multicast along M, A along N, both; tails
        # leave a cluster's second CTA past the edge of C
        ((320, 392, 200), "128x128x64_s3_c2_cl2x1", 2),
        ((320, 392, 200), "128x128x64_s3_c2_cl1x2", 2),
        ((384, 520, 136), "128x128x64_s2_c2_cl2x2", 4),
        ((384, 256, 192), "128x128x64_s4_c2_pp_tma_cl2x1", 2),
        ((200, 264, 128), "64x128x64_s3_c1_cl2x1_np", 2),
    ],
)
def test_hopper_gemm_pingpong_and_tma_epilogue_without_races(shape, config, sms):
    """Pingpong consumers skip each other's k-blocks in the shared ring; the order barrier keeps each
    one within a phase of the barrier it waits on (without it the emulator reports the consumer
    reading a slot the producer is still writing). The TMA epilogue's staging tiles are clipped at M
    and N by the store. Every element written, within bf16 rounding."""
    from txlab.examples import hopper_gemm as hg

    cfg = hg.parse_config(config, num_sms=sms, serpentine=sms == 3, l2_group=4 if sms == 3 else 8)
    _emulated_gemm_writes_every_element(shape, cfg, seed=1)


def _emulated_gemm_writes_every_element(shape, cfg, seed):
    """hopper_gemm's kernel for ``cfg`` at ``shape`` on the emulator: no finding, every element of C written (it
    starts NaN), within bf16 rounding of a float32 reference."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.examples import hopper_gemm as hg

    M, N, K = shape
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    res = emulate(hg.gemm_kernel(M, N, K, cfg), a, b, c, arch="sm_90a")
    assert res.ok, res.summary()
    assert not np.isnan(c.astype(np.float32)).any()
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert np.linalg.norm(c.astype(np.float32) - ref) / np.linalg.norm(ref) < 4e-3


@pytest.mark.parametrize(
    "shape, config", [((200, 136, 200), "64x64x64_s4_c1_tma_cpa"), ((129, 300, 136), "128x128x64_s4_c2_cpa_swap")]
)
def test_hopper_gemm_cp_async_loads(shape, config):
    """loads='cp_async': the producer warpgroup's 16-byte cp.asyncs place each chunk in the swizzled ring slot, zero
    rows past M or N and chunks past K (here K is off the 128-byte lines), and arrive on the full barrier through
    cp.async.mbarrier.arrive.noinc (128 arrivals a stage). Every element written, within bf16 rounding."""
    from txlab.examples import hopper_gemm as hg

    _emulated_gemm_writes_every_element(shape, hg.parse_config(config), seed=2)


def _hopper_gemm_mutant(*edits):
    """hopper_gemm with pieces of its source replaced (``(old, new)`` pairs: a broken protocol, to
    show the emulator finds it), as a fresh module."""
    import linecache
    import sys
    import types

    from txlab.examples import hopper_gemm as hg

    with open(hg.__file__) as f:
        src = f.read()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path = f"<hopper_gemm mutant {abs(hash(src))}>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)  # TVMScript reads the source
    mod = types.ModuleType(f"hopper_gemm_mutant_{abs(hash(src))}")
    sys.modules[mod.__name__] = mod  # dataclasses look their module up there
    exec(compile(src, path, "exec"), mod.__dict__)  # noqa: S102 - the test's own copy of a txlab module
    return mod


def test_hopper_gemm_cluster_multicast_protocol_breaks_are_found():
    """A 2-CTA cluster's CTAs multicast halves of the B tile into each other's ring. Consumers that
    release a slot only in their own CTA, with an empty barrier that counts only them, let the peer's
    producer refill the slot under their wgmma: a race between the peer's multicast write and the
    read. Consumers that skip the peer while its barrier still counts them leave it waiting forever."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    M = N = K = 256
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    peer = (
        "        if CM > 1:\n            for d in T.unroll(CM - 1):\n"
        "                empty.arrive(stage, remote=crank ^ (d + 1))\n",
        "",
    )
    count = ("init_empty=(4 if PP else 4 * NC) * cfg.sharers)", "init_empty=(4 if PP else 4 * NC))")

    def run(mod):
        c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
        return emulate(
            mod.gemm_kernel(M, N, K, mod.parse_config("128x128x64_s2_c2_cl2x1", num_sms=2)), a, b, c, arch="sm_90a"
        )

    from txlab.examples import hopper_gemm as hg

    assert run(hg).ok
    res = run(_hopper_gemm_mutant(peer, count))
    races = res.by_kind("shared_race")
    assert races and all("TMA multicast (from CTA" in r.message for r in races), res.summary()
    assert {r.cta for r in races} == {(0, 0, 0), (1, 0, 0)}
    res = run(_hopper_gemm_mutant(peer))
    dead = res.by_kind("deadlock")
    assert dead and "pending" in dead[0].message, res.summary()


MULTICAST = """
@T.prim_func
def multicast(A_ptr: T.handle, B_ptr: T.handle):
    # (TVM's own multicast codegen test, tests/python/tirx/codegen/test_codegen_hopper.py): rank 0
    # loads a 16 x 16 tile once and multicasts it to the four CTAs of its cluster; CTA 2 stores it
    A = T.match_buffer(A_ptr, (16, 16), dtype="float32", align=16)
    B = T.match_buffer(B_ptr, (16, 16), dtype="float32", align=16)
    A_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, "float32", 2, A.data, 16, 16, 64, 16, 16, 1, 1, 0, 0, 0, 0)
    B_map: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", B_map, "float32", 2, B.data, 16, 16, 64, 16, 16, 1, 1, 0, 0, 0, 0)
    T.device_entry()
    for rank in T.thread_binding(4, thread="clusterCtaIdx.x"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                bar = T.shared_scalar("uint64")
                A_smem = T.alloc_buffer((16, 16), "float32", scope="shared", align=128)
                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(T.address_of(bar), T.uint32(1))
                    T.ptx.fence.proxy.async_.shared__cta()
                SYNC
                if tx == 0:
                    T.ptx.mbarrier.arrive.expect_tx.shared.b64(T.address_of(bar), T.uint32(1024))
                    if rank == 0:
                        T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"](A_smem.data, T.address_of(A_map), 0, 0, T.address_of(bar), 15)
                T.cuda.mbarrier_wait(T.address_of(bar), 0)
                T.cuda.cta_sync()
                T.ptx.fence.proxy.async_.shared__cta()
                if bx == 2:
                    if tx == 0:
                        T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](T.address_of(B_map), 0, 0, A_smem.access_ptr("r", offset=0))
                        T.ptx.cp.async_.bulk.commit_group()
                        T.ptx.cp.async_.bulk.wait_group(0)
"""


def test_multicast_into_a_peer_before_its_mbarrier_init_is_found():
    """TVM's multicast codegen test has no cluster barrier between the peers' mbarrier.init and rank
    0's multicast, so the multicast may signal a barrier not yet initialised (whose init then wipes
    the bytes it counted: a hang). The emulator names the cause and the fix; with
    fence.mbarrier_init + cluster_sync every CTA receives the tile."""
    A = np.arange(256, dtype=np.float32).reshape(16, 16)
    racy = MULTICAST.replace("SYNC", "pass")
    B = np.zeros_like(A)
    res = emulate(kernel(racy, "multicast"), A, B, arch="sm_90a")
    early = [f for f in res.by_kind("deadlock") if "never initialised" in f.message]
    assert early and early[0].line == line_of(racy, 'T.ptx["cp.async.bulk.tensor.2d.shared::cluster'), res.summary()
    assert "from CTA (0, 0, 0)" in early[0].message and "cluster_sync" in early[0].message
    fixed = MULTICAST.replace(
        "SYNC", "T.ptx.fence.mbarrier_init.release.cluster()\n                T.cuda.cluster_sync()"
    )
    B = np.zeros_like(A)
    res = emulate(kernel(fixed, "multicast"), A, B, arch="sm_90a")
    assert res.ok, res.summary()
    np.testing.assert_array_equal(B, A)


def test_hopper_gemm_whole_grid_through_tma_mbarrier_wgmma():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from txlab.examples import hopper_gemm as hg

    M = N = 256
    K = 128
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
    res = emulate(hg.gemm_kernel(M, N, K), a, b, c, arch="sm_90a")
    assert res.ok and res.stats["ctas_run"] == hg.GemmConfig().ctas(M, N), res.summary()
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    got = c.astype(np.float64)
    # fp32 accumulation (8 k16 steps, each rounded once) then one bf16 rounding: within half a bf16
    # ulp of the result plus the fp32 accumulation bound K * 2^-24 * sum|a||b|
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(got), 1e-30))) - 7)
    bound = 0.5 * ulp + K * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T)
    assert np.all(np.abs(got - exact) <= bound), (np.abs(got - exact) - bound).max()
    want = (a.astype(np.float32) @ b.astype(np.float32).T).astype(ml_dtypes.bfloat16)
    assert (c != want).sum() <= 8  # numpy's fp32 sum order differs from the k16 steps


def test_wgmma_descriptor_encoding_and_swizzle():
    # the GEMM's producer refilling a stage before the consumers' wgmma group completed
    from txlab.emulator.wgmma import decode, encode, operand_bytes

    d = encode(1024 + 32, 1, 64, 3)
    f = decode(d)
    assert (f["start"], f["lbo"], f["sbo"], f["layout"]) == (1056, 16, 1024, 1)
    # 128B swizzle, K-major: row r's 16-byte chunk c lands at chunk c ^ (r % 8)
    addr = operand_bytes(encode(0, 1, 64, 3), 8, 64, 2, False)
    assert [(int(addr[r, 8 * c]) % 128) // 16 for r, c in [(0, 0), (1, 0), (3, 2), (7, 7)]] == [0, 1, 1, 0]


def test_coverage_doc_emulated_column_matches_the_emulation_record():
    from pathlib import Path

    import txlab.api as api
    from txlab.api.markdown import emulated_cell

    doc = (Path(__file__).resolve().parents[1] / "docs" / "api-coverage.md").read_text()
    cells = {}
    for line in doc.splitlines():
        if line.startswith("| `"):
            cols = [c.strip() for c in line.strip("|").split(" | ")]
            cells[cols[0].strip("`")] = cols[7]  # name, signature, category, arch, example, ...
    rows = api.coverage(compile=False)
    stale = {
        r["name"]: (cells.get(r["name"]), emulated_cell(r)) for r in rows if cells.get(r["name"]) != emulated_cell(r)
    }
    assert not stale, f"regenerate docs/api-coverage.md (python -m txlab.api.emulated first): {stale}"
    assert any(c.startswith("yes") for c in cells.values())


# ---- clocks and the timer ring (txlab.emulator.timers) ------------------------------------------
CLOCKED = """
@T.prim_func
def clocked(Out: T.Buffer((2, 64), "uint64"), Scratch: T.Buffer((64,), "int32")):
    T.device_entry()
    cta = T.cta_id([2])
    tx = T.thread_id([64])
    t0 = T.cuda.clock64()
    for k in T.serial(STEPS):
        Scratch[tx] = k
    Out[cta, tx] = T.cuda.clock64() - t0
"""


def test_clock64_counts_the_ctas_warp_instructions():
    # 64 threads = 2 warps in lockstep: each loop iteration is one statement, two warp-instructions
    got = {}
    for steps in (10, 30):
        out = np.zeros((2, 64), np.uint64)
        res = emulate(kernel(CLOCKED.replace("STEPS", str(steps)), "clocked"), out, np.zeros(64, np.int32))
        assert res.ok, res.summary()
        assert (out == out[0, 0]).all(), out  # every lane of every CTA: the same count (per CTA)
        got[steps] = int(out[0, 0])
    assert got[30] - got[10] == 20 * 2, got
    assert any("warp-instructions" in n for n in res.notes)


def test_timer_ring_timestamps_order_events_per_group_and_launch():
    ex = _example_source("timer_ring")
    prof, x, y = ex.inputs()
    res = emulate(ex.prim_func(), prof, x, y, arch=ex.arch)
    assert res.ok, res.summary()
    low = ex.expected(prof.copy(), x, y)["Prof"]
    assert prof[0] == low[0] == (2 << 32) | 2  # header: 2 groups per CTA, 2 CTAs
    assert np.array_equal(prof[1:] & np.uint64(0xFFFFFFFF), low[1:])  # tags, events, kinds: exact
    ts = (prof[1:] >> np.uint64(32)).astype(np.int64).reshape(5, 4).T  # group x (start, end, start, end, final)
    assert (np.diff(ts, axis=1) > 0).all(), ts  # strictly later, within a group
    assert (ts[:2] == ts[:2][0]).all() and (ts[2:] == ts[2:][0]).all()  # a CTA's two warps: one instruction
    assert ts[2, 0] > ts[0, -1]  # CTA 1 ran after CTA 0 (global timer)
    np.testing.assert_array_equal(y, x * 2 + 1)


# ---- clusters (txlab.emulator.cluster) ----------------------------------------------------------
DSMEM = """
@T.prim_func
def dsmem_swap(Out: T.Buffer((2, 64), "int32")):
    T.device_entry()
    cta = T.cta_id([2])
    rank = T.cta_id_in_cluster([2])
    tx = T.thread_id([64])
    data = T.alloc_buffer((64,), "int32", scope="shared")
    mapped = T.alloc_buffer((1,), "uint64", scope="local")
    T.evaluate(T.ptx.mapa.u64(mapped[0], T.address_of(data[0]), T.Cast("uint32", 1 - rank)))
    ptr: T.let[T.handle("int32", "shared")] = T.reinterpret(T.handle("int32", "shared").ty, mapped[0])
    peer = T.decl_buffer((64,), "int32", data=ptr, scope="shared")
    T.cuda.cluster_sync()
    peer[INDEX] = T.Cast("int32", rank) * 1000 + tx
    T.cuda.cluster_sync()
    Out[rank, tx] = data[tx]
"""


def test_distributed_shared_memory_through_mapa_and_its_bounds():
    out = np.zeros((2, 64), np.int32)
    res = emulate(kernel(DSMEM.replace("INDEX", "tx"), "dsmem_swap"), out, arch="sm_90a")
    assert res.ok, res.summary()
    assert res.stats["cluster"] == (2, 1, 1)
    # each CTA wrote into the other's shared memory before the second cluster_sync
    np.testing.assert_array_equal(out, np.stack([1000 + np.arange(64), np.arange(64)]).astype(np.int32))
    src = DSMEM.replace("INDEX", "tx + 1")
    res = emulate(kernel(src, "dsmem_swap"), np.zeros((2, 64), np.int32), arch="sm_90a")
    oob = res.by_kind("out_of_bounds")
    assert oob and oob[0].line == line_of(src, "peer[tx + 1] =") and oob[0].threads == [63], res.summary()
    assert "cluster rank" in oob[0].message and "element 64" in oob[0].message


def test_cross_cta_deadlock_in_a_cluster_is_reported_not_hung():
    import time

    ex = _example_source("cluster_remote_arrive")
    # each CTA waits on its own barrier before arriving on the other's: neither can arrive
    src = ex.source.replace("    peer.arrive(0)\n    bar.wait(0, 0)\n", "    bar.wait(0, 0)\n    peer.arrive(0)\n")
    assert src != ex.source
    t0 = time.perf_counter()
    res = emulate(kernel(src, "cluster_remote_arrive"), np.zeros((2, 64), np.int32), arch=ex.arch)
    assert time.perf_counter() - t0 < 30
    dead = res.by_kind("deadlock")
    assert len(dead) == 1 and dead[0].line == line_of(src, "bar.wait(0, 0)"), res.summary()
    assert "CTA (0, 0, 0)" in dead[0].message and "CTA (1, 0, 0)" in dead[0].message
    assert "parity 0" in dead[0].message
    # a cluster_sync only rank 0 reaches: a divergent cluster barrier, found and released
    src = ex.source.replace(
        "    T.cuda.cluster_sync()\n    peer", "    if rank == 0:\n        T.cuda.cluster_sync()\n    peer"
    )
    res = emulate(kernel(src, "cluster_remote_arrive"), np.zeros((2, 64), np.int32), arch=ex.arch)
    div = res.by_kind("divergent_barrier")
    assert div and div[0].line == line_of(src, "        T.cuda.cluster_sync()"), res.summary()
    # the correct kernel, asked for one CTA: its whole cluster runs
    out = np.zeros((2, 64), np.int32)
    res = emulate(ex.prim_func(), out, arch=ex.arch, ctas=[1])
    assert res.ok and any("whole cluster" in n for n in res.notes), res.summary()
    np.testing.assert_array_equal(out, ex.expected(out))


def test_hopper_gemm_random_points_of_the_tune_space_on_random_shapes():
    """Seeded points of hopper_gemm.tune_space (every schedule, epilogue, tile, order, grid, cluster)
    on random shapes with tails, 1-3 persistent CTAs (clusters) so each walks several tiles: every output element
    written and within bf16 rounding of fp32 A @ B.T, no race or barrier finding."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import random

    from txlab.examples import hopper_gemm as hg
    from txlab.tune.space import Space

    rnd = random.Random(11)
    for i in range(12):
        M, N, K = rnd.randint(1, 700), rnd.choice([rnd.randint(1, 700), 8 * rnd.randint(1, 80)]), 8 * rnd.randint(1, 50)
        config = rnd.choice(Space.of(hg.tune_space(M, N, K)).configs())
        config = dict(config, num_sms=rnd.randint(1, 3) * config["cluster_m"] * config["cluster_n"])
        rng = np.random.default_rng(i)
        a = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
        c = np.full((M, N), np.nan, ml_dtypes.bfloat16)
        res = emulate(hg.gemm_kernel(M, N, K, hg.GemmConfig(**config)), a, b, c, arch="sm_90a")
        where = (M, N, K, config)
        assert res.ok, (where, res.summary())
        got, ref = c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T
        assert not np.isnan(got).any(), where
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 4e-3, where
