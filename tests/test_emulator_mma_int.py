"""Integer ``mma.sync`` on the emulator, against numpy with the PTX ISA's m16n8k32 8-bit fragment
maps: the accumulator registers are uint32 carriers (how TIRx binds ``mma_int``), so their bits
must be read as s32; and s8 x u8 is a legal pairing."""

import numpy as np
import pytest
from tvm.script import tirx as T

from txlab.emulator import emulate


def _kernel(chain):
    @T.prim_func
    def k(
        A: T.Buffer((32, 4), "uint32"),
        B: T.Buffer((32, 2), "uint32"),
        C: T.Buffer((32, 4), "uint32"),
        D: T.Buffer((32, 4), "uint32"),
    ):
        T.device_entry()
        T.cta_id([1])
        T.lane_id([32])
        tid = T.thread_id([32])
        ra = T.alloc_buffer((4,), "uint32", scope="local")
        rb = T.alloc_buffer((2,), "uint32", scope="local")
        rc = T.alloc_buffer((4,), "uint32", scope="local")
        rd = T.alloc_buffer((4,), "uint32", scope="local")
        for j in range(4):
            ra[j] = A[tid, j]
            rc[j] = C[tid, j]
        for j in range(2):
            rb[j] = B[tid, j]
        T.ptx[chain](rd[0], rd[1], rd[2], rd[3], ra[0], ra[1], ra[2], ra[3], rb[0], rb[1], rc[0], rc[1], rc[2], rc[3])
        for j in range(4):
            D[tid, j] = rd[j]

    return k


def _maps():
    lane = np.arange(32)[:, None]
    g, t = lane // 4, lane % 4
    i = np.arange(16)[None, :]
    a = (g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8))  # A 16x32, 16 bytes per lane
    j = np.arange(8)[None, :]
    b = (4 * t + j % 4 + 16 * (j // 4), g + 0 * j)  # B 32x8, 8 bytes per lane
    c = np.arange(4)[None, :]
    d = (g + 8 * (c // 2), 2 * t + c % 2)  # C/D 16x8
    return a, b, d


def _run(atype, btype, a, b, c, sat):
    chain = f"mma.sync.aligned.m16n8k32.row.col{'.satfinite' if sat else ''}.s32.{atype}.{btype}.s32"
    am, bm, dm = _maps()
    A = np.ascontiguousarray(a[am]).view(np.uint32).reshape(32, 4)
    B = np.ascontiguousarray(b[bm]).view(np.uint32).reshape(32, 2)
    C = np.ascontiguousarray(c[dm]).view(np.uint32)
    D = np.zeros((32, 4), np.uint32)
    res = emulate(_kernel(chain), A, B, C, D, arch="sm_90a")
    assert res.ok, res.summary()
    out = np.zeros((16, 8), np.int32)
    out[dm] = D.view(np.int32)
    return out


def test_satfinite_reads_a_negative_accumulator_as_negative():
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 8)).astype(np.int8)
    c = np.full((16, 8), -5, np.int32)
    c[:4] = 2**31 - 100  # and some rows that do saturate
    c[4:6] = -(2**31) + 100
    want = np.clip(a.astype(np.int64) @ b.astype(np.int64) + c, -(2**31), 2**31 - 1).astype(np.int32)
    assert np.array_equal(_run("s8", "s8", a, b, c, sat=True), want)


@pytest.mark.parametrize(("atype", "btype"), [("s8", "u8"), ("u8", "s8")])
def test_mixed_signedness_is_emulated(atype, btype):
    rng = np.random.default_rng(1)
    lim = {"s8": (-128, 128, np.int8), "u8": (0, 256, np.uint8)}
    a = rng.integers(*lim[atype][:2], (16, 32)).astype(lim[atype][2])
    b = rng.integers(*lim[btype][:2], (32, 8)).astype(lim[btype][2])
    c = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    want = (a.astype(np.int64) @ b.astype(np.int64) + c).astype(np.int32)
    assert np.array_equal(_run(atype, btype, a, b, c, sat=False), want)
