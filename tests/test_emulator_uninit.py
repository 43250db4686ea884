"""Reads of shared memory that nothing of the CTA wrote before them (on a GPU: whatever was left there;
compute-sanitizer's initcheck covers global memory only): an ``uninitialized_shared_read`` finding at the
reading line, once per line; correct kernels (every slot written, TMA-loaded tiles read after their
mbarrier) give none."""

import numpy as np
import pytest
from test_emulator import kernel, line_of

from txlab.emulator import emulate

# every thread sums all 128 slots, but only the threads below n wrote theirs: a guard that skips slots
GUARDED = """
@T.prim_func
def guarded(A: T.Buffer((2, 128), "float32"), B: T.Buffer((2, 128), "float32"), n: T.int32):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    s = T.alloc_shared([128], "float32")
    if tx < n:
        s[tx] = A[bx, tx]
    ELSE
    T.cuda.cta_sync()
    acc = T.alloc_local([1], "float32")
    acc[0] = T.float32(0)
    for j in T.serial(128):
        acc[0] = acc[0] + s[j]
    B[bx, tx] = acc[0]
"""
FIX = "else:\n        s[tx] = T.float32(0)"


def _clean_and_checked(res) -> bool:
    """No finding, and the run says it checked for never-written shared reads (the note every run with shared
    memory carries): a clean result means the check ran and found nothing."""
    return res.ok and any("uninitialized_shared_read" in n for n in res.notes)


def _guarded(src, n=100):
    a = np.arange(256, dtype=np.float32).reshape(2, 128)
    b = np.full_like(a, np.nan)
    res = emulate(kernel(src, "guarded"), a, b, n)
    return res, a, b


def test_a_slot_the_guard_skipped_is_reported_at_the_reading_line():
    src = GUARDED.replace("ELSE", "")
    res, a, _b = _guarded(src)
    (f,) = [f for f in res.findings if f.kind != "note"]
    assert f.kind == "uninitialized_shared_read", res.summary()
    assert f.line == line_of(src, "acc[0] = acc[0] + s[j]") and f.buffer == "s", f
    assert f.index == [100 * 4] and f.cta == (0, 0, 0), f  # s[100]: the first slot no thread wrote
    assert "no thread of this CTA wrote these bytes" in f.message and "whatever was left there" in f.message
    # once per line, however many CTAs, threads and loop iterations read unwritten slots
    assert len(res.by_kind("uninitialized_shared_read")) == 1 and f.count > 1
    # every slot written: nothing found
    res, _a, _b = _guarded(src, n=128)
    assert _clean_and_checked(res), res.summary()


def test_the_fixed_guard_gives_no_finding():
    res, a, b = _guarded(GUARDED.replace("ELSE", FIX))
    assert _clean_and_checked(res) and res.findings == [], res.summary()
    np.testing.assert_array_equal(b, np.broadcast_to(a[:, :100].sum(axis=1, keepdims=True), a.shape))


# two warps: one writes its slots, the other reads them with no barrier: a race (reported as one), not a
# never-written read, whichever runs first (in lockstep the if-branch runs first: with the reader there, the
# read comes before the write, whose race then names it)
RACY = """
@T.prim_func
def racy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    s = T.alloc_shared([64], "float32")
    if tx < 32:
        FIRST
    else:
        SECOND
"""
WRITE, READ = "s[tx] = A[tx]", "B[tx] = s[(tx + 32) % 64]"


@pytest.mark.parametrize("first", [WRITE, READ])
def test_an_unordered_read_of_another_warps_write_is_a_race_not_a_never_written_read(first):
    src = RACY.replace("FIRST", first).replace("SECOND", READ if first == WRITE else WRITE)
    a = np.arange(64, dtype=np.float32)
    res = emulate(kernel(src, "racy"), a, np.zeros_like(a))
    (race,) = res.by_kind("shared_race")
    assert line_of(src, READ) in (race.line, race.other_line), race
    assert not res.by_kind("uninitialized_shared_read") and any("uninitialized_shared_read" in n for n in res.notes)


# a histogram: atomics on slots zeroed first (ZERO), or not
HIST = """
@T.prim_func
def hist(A: T.Buffer((256,), "int32"), H: T.Buffer((8,), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([256])
    h = T.alloc_shared([16], "int32")
    ZERO
    T.cuda.cta_sync()
    T.cuda.OP(h.ptr_to([A[tx] % 8]), 1)
    T.cuda.cta_sync()
    if tx < 8:
        H[tx] = h[tx]
"""


def test_atomics_on_bins_nobody_zeroed_are_never_written_reads_and_mark_their_bytes_written():
    """The everyday histogram bug: bins never zeroed start as whatever was left in shared memory (the emulator
    gives 0, so the counts come out right here). Zeroed, it is clean, and the atomics' bytes count as written (the
    plain reads after them are no finding)."""
    a = np.arange(256, dtype=np.int32)
    zeroed = "if tx < 16:\n        h[tx] = 0"
    for op, zero, bad in (("atomic_add", zeroed, False), ("atomic_add", "T.evaluate(0)", True)):
        src = HIST.replace("ZERO", zero).replace("OP", op)
        h = np.zeros(8, np.int32)
        res = emulate(kernel(src, "hist"), a, h)
        np.testing.assert_array_equal(h, np.full(8, 32, np.int32))
        if not bad:
            assert _clean_and_checked(res), res.summary()
            continue
        (f,) = res.findings
        assert f.kind == "uninitialized_shared_read" and f.line == line_of(src, "T.cuda.atomic_add"), res.summary()
        assert f.buffer == "h" and "with atomic_add" in f.message and "zero it" in f.message, f.message


# a TMA ring of two stages: warp 0 lane 0 loads tile k into stage k % 2, warp 1 sums column tid - 32 of the
# stage it waited for (STAGE)
RING = """
@T.prim_func
def ring(A_ptr: T.handle, Out_ptr: T.handle):
    A = T.match_buffer(A_ptr, (TILES * 8, 32), "float32")
    Out = T.match_buffer(Out_ptr, (32,), "float32")
    T.device_entry()
    T.cta_id([1])
    tid = T.thread_id([64])
    pool = SMEMPool()
    A_smem = pool.alloc((2, 8, 32), "float32", align=128)
    pipe = Pipeline(pool, 2, full="tma", empty="mbar", init_empty=1)
    pool.commit()
    T.ptx.fence.proxy.async_.shared__cta()
    T.cuda.cta_sync()
    if tid == 0:
        ps = PipelineState(2, 1)
        for k in T.serial(TILES):
            pipe.empty.wait(ps.stage, ps.phase)
            tile.copy_async(A_smem[ps.stage, :, :], A[k * 8 : k * 8 + 8, :], dispatch="tma_auto", mbar=pipe.full.ptr_to([ps.stage]))
            pipe.full.arrive(ps.stage, 8 * 32 * 4)
            ps.advance()
    elif tid >= 32:
        cs = PipelineState(2, 0)
        acc = T.alloc_local([1], "float32")
        acc[0] = T.float32(0)
        for k in T.serial(TILES):
            pipe.full.wait(cs.stage, cs.phase)
            for r in T.serial(8):
                acc[0] = acc[0] + A_smem[STAGE, r, tid - 32]
            T.cuda.warp_sync()
            if tid % 32 == 0:
                pipe.empty.arrive(cs.stage)
            cs.advance()
        Out[tid - 32] = acc[0]
"""


def _ring(tiles, stage):
    src = RING.replace("TILES", str(tiles)).replace("STAGE", stage)
    a = np.random.default_rng(0).standard_normal((tiles * 8, 32)).astype(np.float32)
    out = np.zeros(32, np.float32)
    return src, emulate(kernel(src, "ring"), a, out, arch="sm_90a"), a, out


def test_tma_loaded_tiles_read_after_their_mbarrier_are_clean():
    _src, res, a, out = _ring(4, "cs.stage")
    assert _clean_and_checked(res) and not [f for f in res.findings if f.kind != "note"], res.summary()
    np.testing.assert_allclose(out, a.sum(axis=0), rtol=1e-5)


def test_reading_a_ring_stage_nothing_loaded_is_reported():
    # one tile, into stage 0; the consumer reads stage 1, which no TMA load ever filled
    src, res, _a, _out = _ring(1, "(cs.stage + 1) % 2")
    (f,) = [f for f in res.findings if f.kind != "note"]
    assert f.kind == "uninitialized_shared_read" and f.line == line_of(src, "acc[0] = acc[0] + A_smem["), f
