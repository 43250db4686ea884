"""pipelines.from_kernel derives arrivals and tx bytes from the code (txlab.pipeline_code)."""

import pytest

from txlab import pipelines as P
from txlab.examples import bugs


def kinds(trace):
    return [p.kind for p in trace.problems]


def test_every_consumer_thread_arriving_is_an_over_arrival_at_its_line():
    spec = P.from_kernel(bugs.kernel("over_arrival"))
    assert spec.init_empty == 4 and spec.arrivals_empty == 128 and spec.arrivals_full == 1
    t = spec.simulate(32)
    assert not t.ok
    over = [p for p in t.problems if p.kind == "over_arrival"]
    assert over and over[0].lineno == bugs.bug_line("over_arrival")
    assert "128" in over[0].message and "initialised for 4" in over[0].message
    assert any("128 arrival(s) per phase at line" in n for n in spec.notes)


def test_expect_tx_of_half_the_box_is_a_tx_mismatch_at_its_line():
    spec = P.from_kernel(bugs.kernel("tx_mismatch"))
    assert spec.expect_tx_bytes == 8192 and spec.tx_delivered == 16384
    assert spec.copies[0]["box"] == [1, 32, 128] and spec.copies[0]["bytes"] == 16384
    t = spec.simulate(32)
    tx = [p for p in t.problems if p.kind == "tx_mismatch"]
    assert tx and tx[0].lineno == bugs.bug_line("tx_mismatch")
    assert spec.lines["copy"][0] in tx[0].lines
    assert "8192" in tx[0].message and "16384" in tx[0].message


def test_the_correct_persistent_pipeline_passes():
    spec = P.from_kernel(bugs.kernel("over_arrival", fixed=True))
    assert (spec.arrivals_empty, spec.arrivals_full) == (4, 1)
    assert spec.expect_tx_bytes == spec.tx_delivered == 32 * 128 * 4
    t = spec.simulate(32)
    assert t.ok and t.deadlock is None, t.summary()


def test_demo_kernel_counts_one_arrival_per_consumer_warp():
    spec = P.from_kernel(P.demo_kernel(4, consumers=3))
    assert spec.arrivals_empty == 3 and spec.simulate(16).ok


def test_under_arrival_at_the_arrive_line():
    spec = P.from_kernel(P.demo_kernel(4, consumers=2, init_empty=4))
    assert spec.arrivals_empty == 2
    t = spec.simulate(16)
    under = [p for p in t.problems if p.kind == "under_arrival"]
    assert under, t.summary()
    import inspect

    src, first = inspect.getsourcelines(P.demo_kernel)
    want = first + next(i for i, l in enumerate(src) if "pipe.empty.arrive(cs.stage)" in l)
    assert under[0].lineno == want


def _guarded(guard: str, init_empty: int, pphase: int = 1, cphase: int = 0):
    from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    STAGES, NT, ROWS, COLS = 2, 8, 16, 128

    @T.prim_func
    def guarded(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * ROWS, COLS), "float32")
        Out = T.match_buffer(Out_ptr, (COLS,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([32 + COLS])
        pool = SMEMPool()
        A_smem = pool.alloc((STAGES, ROWS, COLS), "float32", align=128)
        pipe = Pipeline(pool, STAGES, full="tma", empty="mbar", init_empty=init_empty)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid < 32:
            if T.cuda.elect_sync():
                ps = PipelineState(STAGES, pphase)
                for k in T.serial(NT):
                    pipe.empty.wait(ps.stage, ps.phase)
                    Tx.copy_async(
                        A_smem[ps.stage, :, :],
                        A[k * ROWS : (k + 1) * ROWS, :],
                        dispatch="tma_auto",
                        mbar=pipe.full.ptr_to([ps.stage]),
                    )
                    pipe.full.arrive(ps.stage, ROWS * COLS * 4)
                    ps.advance()
        else:
            cs = PipelineState(STAGES, cphase)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NT):
                pipe.full.wait(cs.stage, cs.phase)
                for r in T.serial(ROWS):
                    acc[0] = acc[0] + A_smem[cs.stage, r, tid - 32]
                T.cuda.warp_sync()
                if guard == "elect":
                    if T.cuda.elect_sync():
                        pipe.empty.arrive(cs.stage)
                elif guard == "one":
                    if tid == 32:
                        pipe.empty.arrive(cs.stage)
                elif guard == "warp":
                    if (tid - 32) % 32 == 0:
                        pipe.empty.arrive(cs.stage)
                else:
                    pipe.empty.arrive(cs.stage)
                cs.advance()
            Out[tid - 32] = acc[0]

    return guarded


@pytest.mark.parametrize("guard,arrivals", [("elect", 4), ("warp", 4), ("one", 1), ("none", 128)])
def test_guards_are_evaluated_over_the_threads(guard, arrivals):
    spec = P.from_kernel(_guarded(guard, 4))
    assert spec.arrivals_empty == arrivals
    # the producer is elected too: one arrival, one copy of the whole box per phase
    assert spec.arrivals_full == 1 and spec.tx_delivered == spec.expect_tx_bytes == 16 * 128 * 4
    t = spec.simulate(8)
    assert t.ok == (arrivals == 4), t.summary()
    if arrivals == 4:
        assert not t.problems
    else:
        p = next(p for p in t.problems if p.kind in ("over_arrival", "under_arrival"))
        assert p.lineno is not None and p.kind == ("over_arrival" if arrivals > 4 else "under_arrival")


@pytest.mark.parametrize("role,pphase,cphase", [("producer", 0, 0), ("consumer", 1, 1)])
def test_a_wrong_start_phase_is_placed_at_its_pipeline_state(role, pphase, cphase):
    """A deadlock whose likely cause is a role's start phase had no line; it is at that role's
    ``PipelineState(...)``. A consumer starting at phase 1 (its first full waits pass on fresh barriers)
    is named as the likely cause too."""
    import inspect

    t = P.from_kernel(_guarded("warp", 4, pphase=pphase, cphase=cphase)).simulate(8)
    dead = next(p for p in t.problems if p.kind == "deadlock")
    src, first = inspect.getsourcelines(_guarded)
    mark = "ps = PipelineState(" if role == "producer" else "cs = PipelineState("
    assert dead.lineno == first + next(i for i, l in enumerate(src) if mark in l), t.summary()
    assert f"Likely cause: {role}" in dead.message


def test_overrides_still_try_fixes():
    spec = P.from_kernel(bugs.kernel("over_arrival"))
    assert spec.simulate(32, init_empty=128).ok


@pytest.mark.parametrize("cm,cn", [(2, 1), (2, 2)])
def test_cluster_arrivals_and_multicast_bytes_from_every_cta(cm, cn):
    """A clustered Hopper GEMM: each consumer warp releases a ring slot in its own CTA and, through
    mapa, in its cluster peers' (MBarrier.arrive(remote=...)); each CTA multicasts a slice of A/B with a
    CTA mask computed at run time. Every CTA of the cluster is walked, so CTA 0's empty barrier gets
    its peers' arrivals too, and the masks are evaluated per CTA (they were: 8 of 16/24 arrivals, half
    the bytes, a false deadlock)."""
    from txlab.examples import hopper_gemm as hg
    from txlab.examples.gemm_config import GemmConfig

    sp = P.find_pipelines(hg.gemm_kernel(512, 512, 256, GemmConfig(cluster_m=cm, cluster_n=cn, bn=128)))[0]
    assert sp.arrivals_empty == sp.init_empty == 8 * (cm + cn - 1)
    assert sp.expect_tx_bytes == sp.tx_delivered == (128 + 128) * 64 * 2
    assert [c["multicast"] for c in sp.copies] == [cn if cn > 1 else None, cm]
    assert sp.simulate(6).ok
