"""T.ptx integer, bit-field and warp-vote instructions on the emulator, against per-lane Python
written from the PTX ISA's definitions."""

import numpy as np
import pytest
from test_emulator import kernel

from txlab.emulator import emulate

BITS = """
@T.prim_func
def bits(A: T.Buffer((64,), "uint32"), B: T.Buffer((64,), "uint32"), C: T.Buffer((64,), "uint32"),
         O: T.Buffer((13, 64), "uint32"), S: T.Buffer((1, 64), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    T.ptx.bfe.u32(O[0, tx], A[tx], B[tx], C[tx])
    T.ptx.bfe.s32(S[0, tx], T.Cast("int32", A[tx]), B[tx], C[tx])
    T.ptx.bfi.b32(O[1, tx], A[tx], B[tx], C[tx], C[tx] >> T.uint32(8))
    T.ptx.prmt.b32(O[2, tx], A[tx], B[tx], C[tx])
    T.ptx.prmt.b32.b4e(O[3, tx], A[tx], B[tx], C[tx])
    T.ptx.prmt.b32.ecr(O[4, tx], A[tx], B[tx], C[tx])
    T.ptx.shf.l.wrap.b32(O[5, tx], A[tx], B[tx], C[tx] & T.uint32(63))
    T.ptx.shf.r.clamp.b32(O[6, tx], A[tx], B[tx], C[tx] & T.uint32(63))
    T.ptx.brev.b32(O[7, tx], A[tx])
    T.ptx.popc.b32(O[8, tx], A[tx])
    T.ptx.clz.b32(O[9, tx], A[tx])
    T.ptx.bfind.u32(O[10, tx], A[tx])
    T.ptx.bfind.shiftamt.s32(O[11, tx], T.Cast("int32", A[tx]))
    T.ptx.bfind.s32(O[12, tx], T.Cast("int32", A[tx]))
"""


def _bit(x, k):
    return (x >> k) & 1


def _bfe(a, b, c, signed, w=32):
    pos, ln = b & 0xFF, c & 0xFF
    if ln == 0:
        return 0
    sbit = _bit(a, min(pos + ln - 1, w - 1)) if signed else 0
    return sum((_bit(a, pos + i) if i < ln and pos + i < w else sbit) << i for i in range(w))


def _bfi(a, b, c, d, w=32):
    pos, ln, f = c & 0xFF, d & 0xFF, b
    for i in range(ln):
        if pos + i < w:
            f = (f & ~(1 << (pos + i))) | (_bit(a, i) << (pos + i))
    return f


_MODES = {  # PTX ISA prmt: selector c[1:0] -> source bytes of d.b3 d.b2 d.b1 d.b0
    "b4e": ["5670", "6701", "7012", "0123"],
    "ecr": ["0000", "1110", "2210", "3210"],
}


def _prmt(a, b, c, mode=None):
    by = [((b << 32 | a) >> (8 * k)) & 0xFF for k in range(8)]
    out = 0
    for n in range(4):
        if mode:
            byte = by[int(_MODES[mode][c & 3][3 - n])]
        else:
            s = (c >> (4 * n)) & 0xF
            byte = by[s & 7]
            if s & 8:
                byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * n)
    return out


def _shf(a, b, c, left, clamp):
    n = min(c, 32) if clamp else c & 31
    v = b << 32 | a
    return ((v << n) >> 32) & 0xFFFFFFFF if left else (v >> n) & 0xFFFFFFFF


def _bfind(a, signed, shiftamt):
    if signed and a >> 31:
        a = ~a & 0xFFFFFFFF
    if a == 0:
        return 0xFFFFFFFF
    p = a.bit_length() - 1
    return 31 - p if shiftamt else p


def _s32(x):
    return x - (1 << 32) if x >> 31 else x


def test_bit_field_instructions_are_the_ptx_isas():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    a[:4] = [0, 0xFFFFFFFF, 0x80000000, 1]
    b = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b[:16] = [0, 5, 31, 32, 40, 255, 256 + 3, 20, 25, 30, 8, 0, 16, 24, 31, 7]  # positions past the msb too
    c = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    c[:16] = [0, 7, 4, 10, 3, 1, 9, 32, 0x1010, 0x0205, 255, 0x8888, 0x7654, 0x3210, 33, 64]
    o = np.zeros((13, 64), np.uint32)
    s = np.zeros((1, 64), np.int32)
    res = emulate(kernel(BITS, "bits"), a, b, c, o, s, arch="sm_90a")
    assert res.ok, res.summary()
    for t in range(64):
        A, B, C = int(a[t]), int(b[t]), int(c[t])
        want = [
            _bfe(A, B, C, False),
            _bfi(A, B, C, C >> 8),
            _prmt(A, B, C),
            _prmt(A, B, C, "b4e"),
            _prmt(A, B, C, "ecr"),
            _shf(A, B, C & 63, True, False),
            _shf(A, B, C & 63, False, True),
            int(f"{A:032b}"[::-1], 2),
            bin(A).count("1"),
            32 - A.bit_length(),
            _bfind(A, False, False),
            _bfind(A, True, True),
            _bfind(A, True, False),
        ]
        assert [int(x) for x in o[:, t]] == want, t
        assert [int(x) for x in s[:, t]] == [_s32(_bfe(A, B, C, True))], t


VOTES = """
@T.prim_func
def votes(A: T.Buffer((64,), "int32"), O: T.Buffer((8, 64), "uint32"), S: T.Buffer((2, 64), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    if tx % 32 < LIVE:
        T.ptx.vote_sync.ballot.b32(O[0, tx], A[tx] > 0, T.uint32(MASK))
        T.ptx.activemask.b32(O[1, tx])
        T.ptx.redux_sync.add.u32(O[2, tx], T.Cast("uint32", A[tx]), T.uint32(MASK))
        T.ptx.redux_sync.min.s32(S[0, tx], A[tx], T.uint32(MASK))
        T.ptx.redux_sync.max.u32(O[3, tx], T.Cast("uint32", A[tx]), T.uint32(MASK))
        T.ptx.redux_sync.xor.b32(O[4, tx], T.Cast("uint32", A[tx]), T.uint32(MASK))
        T.ptx.match.any.sync.b32(O[5, tx], T.Cast("uint32", A[tx] % 3), T.uint32(MASK))
        T.ptx.match.all.sync.b32(O[6, tx], T.Cast("uint32", A[tx] // 1000), T.uint32(MASK))
        T.ptx.redux_sync.max.s32(S[1, tx], A[tx], T.uint32(MASK))
"""


@pytest.mark.parametrize("live, mask", [(32, 0xFFFFFFFF), (20, 0x000FFFFF)])
def test_warp_votes_reduce_the_member_lanes(live, mask):
    """vote.sync / redux.sync / match.sync / activemask over the lanes that execute them (a branch of
    20 lanes with their member mask): each lane gets its warp's value, as the PTX ISA defines it."""
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 64).astype(np.int32)
    a[32:40] = [-(2**31), 2**31 - 1, 0, 7, 7, 7, -7, 3]
    o = np.zeros((8, 64), np.uint32)
    s = np.zeros((2, 64), np.int32)
    src = VOTES.replace("LIVE", str(live)).replace("MASK", hex(mask))
    res = emulate(kernel(src, "votes"), a, o, s, arch="sm_90a")
    assert res.ok, res.summary()
    for w in range(2):
        lanes = range(w * 32, w * 32 + live)
        v = [int(a[t]) for t in lanes]
        members = sum(1 << (t % 32) for t in lanes)
        ballot = sum(1 << (t % 32) for t in lanes if a[t] > 0)
        xor = 0
        for x in v:
            xor ^= x & 0xFFFFFFFF
        same_all = members if len({x // 1000 for x in v}) == 1 else 0
        for t in lanes:
            match_any = sum(1 << (u % 32) for u in lanes if a[u] % 3 == a[t] % 3)
            want = [ballot, members, sum(v) & 0xFFFFFFFF, max(x & 0xFFFFFFFF for x in v), xor, match_any, same_all]
            assert [int(x) for x in o[:7, t]] == want, t
            assert [int(x) for x in s[:, t]] == [min(v), max(v)], t


SHFL = """
@T.prim_func
def shfl(A: T.Buffer((64,), "float32"), O: T.Buffer((4, 64), "float32"), P: T.Buffer((2, 64), "uint32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    v: T.float32 = A[tx]
    r: T.float32 = T.float32(0)
    p: T.uint32 = T.uint32(0)
    T.ptx.shfl_sync.idx.b32(r, v, T.uint32(tx % 7 + 3), T.uint32(0x1f), T.uint32(0xffffffff))
    O[0, tx] = r
    T.ptx.shfl_sync.bfly.b32(r, v, T.uint32(9), T.uint32(0x101f), T.uint32(0xffffffff))
    O[1, tx] = r
    T.ptx.shfl_sync.up.b32(r, p, v, T.uint32(3), T.uint32(0x1800), T.uint32(0xffffffff))
    O[2, tx] = r
    P[0, tx] = p
    T.ptx.shfl_sync.down.b32(r, v, T.uint32(5), T.uint32(0x101f), T.uint32(0xffffffff))
    O[3, tx] = r
    d: T.uint32 = T.uint32(0)
    e: T.uint32 = T.uint32(0)
    if tx % 32 >= 5:
        T.ptx.elect_sync(d, e, T.uint32(0xffffffe0))
    P[1, tx] = e * T.uint32(100) + d
"""


def _shfl_want(a):
    from txlab.ir.semantics import shfl_source

    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    rows = [
        (shfl_source("idx", lane, np.arange(64) % 7 + 3, 32), None),
        (shfl_source("xor", lane, 9, 16), None),
        (shfl_source("up", lane, 3, 8), "up"),
        (shfl_source("down", lane, 5, 16), None),
    ]
    return np.stack([a[base + src] for src, _ in rows]), (shfl_source("up", lane, 3, 8) != lane).astype(np.uint32)


def test_ptx_shfl_sync_and_elect_sync_follow_the_isa():
    """``T.ptx.shfl_sync`` (TVM's own smem descriptor broadcast uses it) and ``T.ptx.elect_sync`` stopped the run;
    the packed ``c`` operand (clamp and segment mask) gives CUDA's widths, the predicate says the source was in
    range, and elect picks the lowest active member lane."""
    a = np.arange(64, dtype=np.float32) * 1.5
    o, p = np.zeros((4, 64), np.float32), np.zeros((2, 64), np.uint32)
    res = emulate(kernel(SHFL, "shfl"), a, o, p)
    assert res.ok, res.findings
    want, pred = _shfl_want(a)
    assert np.array_equal(o, want), o
    assert np.array_equal(p[0], pred)
    lane = np.arange(64) % 32
    assert np.array_equal(p[1], np.where(lane == 5, 105, np.where(lane > 5, 5, 0)))


@pytest.mark.gpu
def test_ptx_shfl_sync_and_elect_sync_match_the_gpu():
    import txlab

    c = txlab.compile(kernel(SHFL, "shfl"))
    a = np.arange(64, dtype=np.float32) * 1.5
    runs = []
    for go in (c, lambda *x: emulate(c, *x)):
        o, p = np.zeros((4, 64), np.float32), np.zeros((2, 64), np.uint32)
        go(a, o, p)
        runs.append((o, p))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1]), runs
