"""``Tx.cuda.grid_sync`` on the emulator: a grid barrier of every CTA of a cooperative launch (all resident at once),
the launch flags TVM reads from ``tirx.kernel_launch_params``, and what a GPU would refuse or hang on."""

import numpy as np
import pytest

import txlab
from txlab.emulator import emulate
from txlab.errors import KernelFault

from test_emulator import kernel, line_of

COOP = '    T.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})\n'

# each CTA doubles its quarter, then (after the grid barrier) reads the next CTA's quarter: right only if every CTA
# wrote before any read; a second barrier, then each CTA adds the previous CTA's result
TWO_PHASE = """
@T.prim_func
def two_phase(X: T.Buffer((NN,), "float32"), Y: T.Buffer((NN,), "float32"), Z: T.Buffer((NN,), "float32")):
COOP    T.device_entry()
    bx = T.cta_id([CTAS])
    tx = T.thread_id([128])
    X[bx * 128 + tx] = X[bx * 128 + tx] * T.float32(2.0)
    T.cuda.grid_sync()
    Y[bx * 128 + tx] = X[(bx * 128 + tx + 128) % NN]
    T.cuda.grid_sync()
    Z[bx * 128 + tx] = Y[bx * 128 + tx] + Y[(bx * 128 + tx + NN - 128) % NN]
"""


def two_phase(ctas: int, cooperative: bool = True):
    src = TWO_PHASE.replace("COOP", COOP if cooperative else "").replace("NN", str(ctas * 128))
    return kernel(src.replace("CTAS", str(ctas)), "two_phase"), src


def expected(ctas: int):
    n = ctas * 128
    x2 = np.arange(n, dtype=np.float32) * 2
    y = np.roll(x2, -128)
    return x2, y, y + np.roll(y, 128)


def run(k, grid_ctas, **kw):
    n = grid_ctas * 128
    x, y, z = np.arange(n, dtype=np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    return emulate(k, x, y, z, **kw), (x, y, z)


def test_launch_flags_are_read_and_carry_no_operand():
    k, _ = two_phase(4)
    info = txlab.compile(k, arch="sm_90a").launch["two_phase_kernel"]
    # the flag is not a launch operand: before, it shifted every operand (grid = the last argument's pointer)
    assert info["grid"] == (4, 1, 1) and info["block"] == (128, 1, 1)
    assert info["cooperative"] is True and info["programmatic_dependent"] is False
    plain, _ = two_phase(4, cooperative=False)
    assert txlab.compile(plain, arch="sm_90a").launch["two_phase_kernel"]["cooperative"] is False


@pytest.mark.parametrize("ctas", [4, 300])
def test_every_cta_passes_each_grid_barrier_together(ctas):
    k, _ = two_phase(ctas)
    res, (x, y, z) = run(k, ctas)
    assert res.ok, res.findings
    want = expected(ctas)
    assert np.array_equal(x, want[0]) and np.array_equal(y, want[1]) and np.array_equal(z, want[2])
    assert "all resident at once" in res.stats["resident"]


def test_a_launch_that_is_not_cooperative_is_a_finding():
    k, src = two_phase(4, cooperative=False)
    res, (_, _, z) = run(k, 4)
    kinds = [f.kind for f in res.findings]
    assert kinds == ["grid_sync_not_cooperative"]
    f = res.findings[0]
    assert f.line == line_of(src, "T.cuda.grid_sync()")
    assert "tirx.use_cooperative_launch" in f.message
    assert np.array_equal(z, expected(4)[2])  # emulated as if it were cooperative


def test_ctas_naming_part_of_the_grid_runs_all_of_it():
    k, _ = two_phase(4)
    res, (_, _, z) = run(k, 4, ctas=[1])
    assert res.ok, res.findings
    assert any("grid_sync waits for every CTA" in n for n in res.notes)
    assert np.array_equal(z, expected(4)[2])


SKIPS = """
@T.prim_func
def skips(X: T.Buffer((512,), "float32")):
    T.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([128])
    if bx > 0:
        T.cuda.grid_sync()
    X[bx * 128 + tx] = T.float32(1.0)
"""


def test_a_cta_that_never_arrives_is_a_deadlock_not_a_hang():
    k = kernel(SKIPS, "skips")
    res = emulate(k, np.zeros(512, np.float32), timeout_s=60)
    dead = [f for f in res.findings if f.kind == "deadlock"]
    assert dead, res.findings
    assert dead[0].line == line_of(SKIPS, "T.cuda.grid_sync()")
    assert "waits in grid_sync" in dead[0].message and "every thread of the launch" in dead[0].message


def test_a_grid_too_large_to_be_resident_is_refused_like_the_gpu_refuses_it():
    k, _ = two_phase(3000)
    with pytest.raises(KernelFault) as exc:
        run(k, 3000)
    assert exc.value.kind == "launch_config"
    assert "cooperative launch" in str(exc.value) and "2112" in str(exc.value)
    assert "2112 CTAs" in exc.value.hint
    c = txlab.compile(k, arch="sm_90a")  # the static answer, with the registers ptxas reports
    assert any("cooperative launch (grid_sync) of 3000 CTAs" in w for w in c.warnings)
    small, _ = two_phase(300)
    assert not any("cooperative" in w for w in txlab.compile(small, arch="sm_90a").warnings)


def test_the_compile_warns_of_a_grid_sync_that_is_not_launched_cooperatively():
    plain, _ = two_phase(4, cooperative=False)
    (w,) = [w for w in txlab.compile(plain, arch="sm_90a").warnings if "grid_sync" in w]
    assert "not launched cooperatively" in w and "tirx.use_cooperative_launch" in w
    coop, _ = two_phase(4)
    assert not any("grid_sync" in w for w in txlab.compile(coop, arch="sm_90a").warnings)


HIST = """
@T.prim_func
def hist(X: T.Buffer((1024,), "int32"), H: T.Buffer((64,), "int32")):
    T.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([256])
    if bx == 0:
        if tx < 64:
            H[tx] = 0
    SYNC
    T.cuda.atomic_add(T.address_of(H[X[bx * 256 + tx]]), 1)
"""


@pytest.mark.parametrize("barrier", [True, False])
def test_a_grid_barrier_orders_plain_stores_before_other_ctas_atomics(barrier):
    """CTA 0 zeroes the bins, every CTA then adds atomically: with the grid barrier between, nothing races (it was
    a global_race finding: only a CTA's own barriers ordered its accesses); without it, CTA 0's zeroing races the
    other CTAs' atomics."""
    k = kernel(HIST.replace("SYNC", "T.cuda.grid_sync()" if barrier else "T.evaluate(0)"), "hist")
    x = np.random.default_rng(1).integers(0, 64, 1024).astype(np.int32)
    h = np.full(64, 7, np.int32)
    res = emulate(k, x, h)
    assert [f.kind for f in res.findings if f.kind == "global_race"] == ([] if barrier else ["global_race"])
    if barrier:
        assert np.array_equal(h, np.bincount(x, minlength=64))


TWO_PASS = """
@T.prim_func
def two_pass(X: T.Buffer((512,), "float32"), P: T.Buffer((4,), "float32"), Out: T.Buffer((1,), "float32")):
    T.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([128])
    if tx == 0:
        acc = T.alloc_local((1,), "float32")
        acc[0] = T.float32(0)
        for i in range(128):
            acc[0] = acc[0] + X[bx * 128 + i]
        P[bx] = acc[0]  # the partial
    SYNC
    if bx == 0:
        if tx == 0:
            Out[0] = P[0] + P[1] + P[2] + P[3]  # the sum
"""


@pytest.mark.parametrize("barrier", [True, False])
def test_a_read_of_another_ctas_store_needs_a_grid_barrier_between(barrier):
    """CTA 0 sums the other CTAs' partials: right with grid_sync between, and without it a global_race naming the
    store and the read (the emulator, running CTA 0 first, summed stale partials and said nothing before)."""
    src = TWO_PASS.replace("SYNC", "T.cuda.grid_sync()" if barrier else "T.cuda.thread_fence()")
    x = np.ones(512, np.float32)
    res = emulate(kernel(src, "two_pass"), x, np.zeros(4, np.float32), np.zeros(1, np.float32))
    races = [f for f in res.findings if f.kind == "global_race"]
    if barrier:
        assert res.ok, res.findings
        return
    (f,) = races
    assert (f.line, f.other_line) == (line_of(src, "# the sum"), line_of(src, "# the partial"))
    assert "no grid barrier between" in f.message and "Tx.cuda.grid_sync()" in f.message


SAME_VALUE = """
@T.prim_func
def same_value(F: T.Buffer((1,), "int32"), Out: T.Buffer((4,), "int32")):
    T.device_entry()
    bx = T.cta_id([4])
    tx = T.thread_id([32])
    if tx == 0:
        F[0] = 1
        Out[bx] = F[0]
"""


def test_ctas_storing_one_value_and_reading_it_back_do_not_race():
    out = np.zeros(4, np.int32)
    res = emulate(kernel(SAME_VALUE, "same_value"), np.zeros(1, np.int32), out)
    assert res.ok, res.findings
    assert (out == 1).all()


CLUSTERED = """
@T.prim_func
def clustered(X: T.Buffer((CTAS * 1024,), "float32"), Y: T.Buffer((CTAS * 1024,), "float32")):
    T.func_attr({"tirx.kernel_launch_params": ["tirx.use_cooperative_launch"]})
    T.device_entry()
    bx = T.cta_id([CTAS])
    rank = T.cta_id_in_cluster([4])
    tx = T.thread_id([1024])
    sm = T.alloc_buffer((30720,), "float32", scope="shared.dyn")
    sm[tx] = X[bx * 1024 + tx]
    T.cuda.cluster_sync()
    T.cuda.grid_sync()
    Y[bx * 1024 + tx] = sm[tx] + X[((bx + 4) % CTAS) * 1024 + tx]
"""


@pytest.mark.parametrize("ctas", [120, 132])
def test_a_cooperative_grid_of_4_cta_clusters_holds_120_ctas_that_fill_an_sm(ctas):
    """One 1024-thread CTA with 120 KiB per SM, in clusters of 4: whole clusters fit 30 at once (120 CTAs, what the
    H200 measured), not 33."""
    k = kernel(CLUSTERED.replace("CTAS", str(ctas)), "clustered")
    x, y = np.arange(ctas * 1024, dtype=np.float32), np.zeros(ctas * 1024, np.float32)
    warned = [w for w in txlab.compile(k, arch="sm_90a").warnings if "cooperative launch" in w]
    if ctas == 120:
        assert emulate(k, x, y).ok and not warned
        return
    assert warned and "hold 120" in warned[0] and "in clusters of 4" in warned[0]
    with pytest.raises(KernelFault) as exc:
        emulate(k, x, y)
    assert "at most 120 CTAs" in str(exc.value) and "in clusters of 4" in str(exc.value)
