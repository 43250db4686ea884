"""Warp shuffles on the emulator as PTX ``shfl.sync`` defines them: the lane or offset's low five
bits only, segments of ``width`` lanes, the own lane when the source leaves the segment; and a
shuffle that reads a lane not executing it is reported, not given a made-up value."""

import numpy as np
import pytest
from test_emulator import kernel, line_of

from txlab.emulator import emulate

SHUFFLES = """
@T.prim_func
def shf(X: T.Buffer((64,), "float32"), O: T.Buffer((6, 64), "float32"), d: T.int32):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    v = X[tx]
    O[0, tx] = T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v, d, 32)
    O[1, tx] = T.cuda.__shfl_up_sync(T.uint32(0xFFFFFFFF), v, d, 32)
    O[2, tx] = T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v, d, 32)
    O[3, tx] = T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v, d, 8)
    O[4, tx] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v, d, 8)
    O[5, tx] = T.cuda.__shfl_down_sync(T.uint32(0xFFFFFFFF), v, d, 8)
"""


def _ptx_shfl(x, mode, b, width):
    """shfl.sync's source lane, written out from the PTX ISA's pseudocode for each lane, with
    c = ((32 - width) << 8) | (0 for up, 0x1f otherwise) as CUDA's __shfl*_sync pass it."""
    out = np.empty_like(x)
    for t in range(x.size):
        lane, base = t % 32, t - t % 32
        segmask, cval, bval = (32 - width) & 0x1F, 0 if mode == "up" else 0x1F, b & 0x1F
        max_lane = (lane & segmask) | (cval & ~segmask & 0x1F)
        min_lane = lane & segmask
        if mode == "up":
            j, ok = lane - bval, lane - bval >= max_lane
        elif mode == "down":
            j, ok = lane + bval, lane + bval <= max_lane
        elif mode == "bfly":
            j, ok = lane ^ bval, (lane ^ bval) <= max_lane
        else:
            j = min_lane | (bval & ~segmask & 0x1F)
            ok = j <= max_lane
        out[t] = x[base + (j if ok else lane)]
    return out


@pytest.mark.parametrize("d", [1, 5, 16, 31, 33, 40, -1])
def test_shuffle_lane_is_the_ptx_one_for_any_offset(d):
    # before: offsets >= 32 read the own lane (PTX uses b[4:0]) and a negative one raised IndexError
    x = np.arange(64, dtype=np.float32) * 3 + 1
    o = np.zeros((6, 64), np.float32)
    res = emulate(kernel(SHUFFLES, "shf"), x, o, d)
    assert res.ok, res.summary()
    rows = [("down", 32), ("up", 32), ("bfly", 32), ("bfly", 8), ("idx", 8), ("down", 8)]
    for i, (mode, w) in enumerate(rows):
        np.testing.assert_array_equal(o[i], _ptx_shfl(x, mode, d, w), err_msg=f"{mode} width {w} d={d}")


TAIL_SUM = """
@T.prim_func
def tail_sum(X: T.Buffer((40,), "float32"), O: T.Buffer((40,), "float32"), n: T.int32):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    if tx < n:
        v = T.alloc_local((1,), "float32")
        v[0] = X[tx]
        for k in T.unroll(5):
            v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(0xFFFFFFFF), v[0], 16 >> k, 32)  # the shuffle
        O[tx] = v[0]
"""


def test_shuffle_reading_a_lane_that_skipped_it_is_reported():
    # 40 rows: warp 1 has 8 lanes in the branch and its butterfly reads lanes 8-31, which are not
    # there -- undefined values on a GPU; the emulator used to say "no findings"
    k = kernel(TAIL_SUM, "tail_sum")
    res = emulate(k, np.ones(40, np.float32), np.zeros(40, np.float32), 40)
    hits = res.by_kind("divergent_barrier")
    assert hits and hits[0].line == line_of(TAIL_SUM, "# the shuffle"), res.summary()
    assert "lanes 0-7 read lanes 16-23" in hits[0].message and hits[0].cta == (0, 0, 0)
    # a full tail (n = 64 would be out of bounds; 32 fills warp 0 only, warp 1 skips it whole) is clean
    ok = emulate(k, np.ones(40, np.float32), np.zeros(40, np.float32), 32)
    assert ok.ok, ok.summary()


TWO_SITES = """
@T.prim_func
def k(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    v = T.local_scalar("float32")
    v = X[tx]
    if tx % 32 < 16:
        Y[tx] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v, (tx + 1) % 32, 32)  # site a
        SECOND_A
    else:
        ELSE
"""
SITE_B = "Y[tx] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v + T.float32(100), (tx + 1) % 32, 32)  # site b"


def test_shuffles_in_two_branches_meet_as_on_a_gpu():
    """sm_70+ pairs a warp's member lanes at whichever shfl.sync each executes: on an H100 (docs/gpu-runs.md, round
    29; benchmarks/results/shfl_two_sites_h100_2026-12-06.log) lane 15 got lane 16's operand of the else branch's
    shuffle, lane 31 lane 0's of the if's, with synccheck and racecheck clean. No finding here; the second branch's
    lanes get what the first branch's gave, as on the GPU, and a note says the first branch's lanes cannot."""
    src = TWO_SITES.replace("SECOND_A", "T.evaluate(0)").replace("ELSE", SITE_B)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    res = emulate(kernel(src, "k"), x, y)
    assert res.ok, res.summary()
    for w in (0, 32):  # both warps: lanes 16-30 read lanes 17-31 of their own site, lane 31 reads lane 0 of site a
        np.testing.assert_array_equal(y[w + 16 : w + 31], x[w + 17 : w + 32] + 100)
        assert y[w + 31] == x[w]
    (note,) = [n for n in res.notes if "met at shuffles in two branches" in n]
    a, b = line_of(src, "# site a"), line_of(src, "# site b")
    assert f"lines {a} and {b}" in note and "lanes 0-15 (line" in note


def test_a_shuffle_the_other_branch_never_reaches_is_still_reported():
    """The else branch reaches no shuffle: the if's lanes 0-15 read lanes 16-31, which never execute one (undefined
    values on a GPU), reported at the if's shuffle when the branches reconverge; and two shuffles in each branch pair
    in order, clean."""
    one_sided = TWO_SITES.replace("SECOND_A", "T.evaluate(0)").replace("ELSE", "Y[tx] = v")
    res = emulate(kernel(one_sided, "k"), np.arange(64, dtype=np.float32), np.zeros(64, np.float32))
    hits = res.by_kind("divergent_barrier")
    assert hits and hits[0].line == line_of(one_sided, "# site a"), res.summary()
    assert "lanes 15 read lanes 16" in hits[0].message
    second = "Y[tx] = Y[tx] + T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), v * T.float32(2), (tx + 1) % 32, 32)"
    both = TWO_SITES.replace("SECOND_A", second).replace(
        "ELSE", SITE_B + "\n        " + second.replace("T.float32(2)", "T.float32(3)")
    )
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    res = emulate(kernel(both, "k"), x, y)
    assert res.ok, res.summary()
    # lane 31 of each warp: lane 0's operands at both of site a's shuffles (x[0] and 2 x[0])
    assert y[31] == x[0] + 2 * x[0] and y[63] == x[32] + 2 * x[32]


HALF = """
@T.prim_func
def half(X: T.Buffer((32,), "float32"), Y: T.Buffer((1,), "float32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    v = T.alloc_local((1,), "float32")
    v[0] = X[tx]
    if tx < LIVE:
        for k in T.unroll(4):
            v[0] = v[0] + T.cuda.__shfl_xor_sync(T.uint32(MASK), v[0], 8 >> k, 32)
        if tx == 0:
            Y[0] = v[0]
    T.cuda.cta_sync()
"""


@pytest.mark.parametrize(
    "live, mask, why",
    [
        (32, "0x0000FFFF", "outside their member mask"),  # the whole warp runs it, the mask names half
        (16, "0xFFFFFFFF", "execute no shuffle of that mask"),  # half the warp runs it, the mask names all
    ],
)
def test_a_shuffle_whose_mask_is_not_the_lanes_running_it_is_reported(live, mask, why):
    """Both are undefined on a GPU (each caller's own bit must be set; every non-exited lane of the mask must run a
    shuffle of it), even where every read stays inside lanes 0-15; the emulator was silent on both."""
    src = HALF.replace("LIVE", str(live)).replace("MASK", mask)
    res = emulate(kernel(src, "half"), np.ones(32, np.float32), np.zeros(1, np.float32))
    found = [f for f in res.findings if f.kind == "divergent_barrier"]
    assert found and why in found[0].message, res.findings
    assert found[0].line == line_of(src, "__shfl_xor_sync")
    fixed = HALF.replace("LIVE", "16").replace("MASK", "0x0000FFFF")
    res = emulate(kernel(fixed, "half"), np.ones(32, np.float32), y := np.zeros(1, np.float32))
    assert res.ok and y[0] == 16, res.findings


def test_a_ballot_run_outside_its_mask_by_a_converged_warp_is_reported():
    src = """
@T.prim_func
def vote(X: T.Buffer((32,), "int32"), Y: T.Buffer((32,), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    Y[tx] = T.cuda.ballot_sync(T.uint32(0x0000FFFF), X[tx] > 0)
"""
    res = emulate(kernel(src, "vote"), np.ones(32, np.int32), np.zeros(32, np.uint32))
    assert [f.kind for f in res.findings] == ["divergent_barrier"], res.findings
    assert "lanes 16-31 execute it outside their member mask" in res.findings[0].message
