"""T.ptx integer arithmetic, logic, shift, compare, select and move instructions on the emulator (they stopped the
run with NotEmulatedError before), against per-lane Python written from the PTX ISA's definitions: edge values (0,
-1, MININT, MAXINT, shifts of 0/31/32/255), every compare on NaN / -0 / subnormals, predication, the register
pairs TVM's tile primitives pack and unpack, and the cases the ISA leaves unspecified refused."""

import math
from fractions import Fraction

import numpy as np
import pytest
from test_emulator import kernel

from txlab.emulator import emulate
from txlab.errors import NotEmulatedError

M32, M64 = 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
L = 64


def _s(x, w=32):
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def _u(x, w=32):
    return x & ((1 << w) - 1)


def _clamp(x, w=32):
    return max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, x))


def _quo(a, b):  # towards zero
    return int(Fraction(a, b))


def _s24(x, signed):
    return _s(x, 24) if signed else x & 0xFFFFFF


# ---- the battery: (output buffer, instruction with {d} for its destination, reference of a lane's inputs) ----------
# Inputs per lane x: a, b, c (s32 values), ua, ub, uc (their u32 bits), d (a nonzero s32 divisor, not -1 with MININT),
# n (a shift amount), la, lb, lc / qa, qb, qc (s64 / u64), ld (s64 divisor), ha, hb (s16), ga, gb (u16).
BATTERY = [
    ("S", "T.ptx.add.s32({d}, A[tx], B[tx])", lambda x: _s(x["a"] + x["b"])),
    ("S", "T.ptx.add.sat.s32({d}, A[tx], B[tx])", lambda x: _clamp(x["a"] + x["b"])),
    ("S", "T.ptx.sub.s32({d}, A[tx], B[tx])", lambda x: _s(x["a"] - x["b"])),
    ("S", "T.ptx.sub.sat.s32({d}, A[tx], B[tx])", lambda x: _clamp(x["a"] - x["b"])),
    ("S", "T.ptx.mul.lo.s32({d}, A[tx], B[tx])", lambda x: _s(x["a"] * x["b"])),
    ("S", "T.ptx.mul.hi.s32({d}, A[tx], B[tx])", lambda x: _s((x["a"] * x["b"]) >> 32)),
    ("S", "T.ptx.mad.lo.s32({d}, A[tx], B[tx], C[tx])", lambda x: _s(x["a"] * x["b"] + x["c"])),
    ("S", "T.ptx.mad.hi.s32({d}, A[tx], B[tx], C[tx])", lambda x: _s(((x["a"] * x["b"]) >> 32) + x["c"])),
    ("S", "T.ptx.mad.hi.sat.s32({d}, A[tx], B[tx], C[tx])", lambda x: _clamp(((x["a"] * x["b"]) >> 32) + x["c"])),
    ("S", "T.ptx.mul24.lo.s32({d}, A[tx], B[tx])", lambda x: _s(_s24(x["a"], 1) * _s24(x["b"], 1))),
    ("S", "T.ptx.mul24.hi.s32({d}, A[tx], B[tx])", lambda x: _s((_s24(x["a"], 1) * _s24(x["b"], 1)) >> 16)),
    ("S", "T.ptx.mad24.lo.s32({d}, A[tx], B[tx], C[tx])", lambda x: _s(_s24(x["a"], 1) * _s24(x["b"], 1) + x["c"])),
    (
        "S",
        "T.ptx.mad24.hi.sat.s32({d}, A[tx], B[tx], C[tx])",
        lambda x: _clamp(_s((_s24(x["a"], 1) * _s24(x["b"], 1)) >> 16) + x["c"]),
    ),
    ("S", "T.ptx.sad.s32({d}, A[tx], B[tx], C[tx])", lambda x: _s(x["c"] + abs(x["a"] - x["b"]))),
    ("S", "T.ptx.neg.s32({d}, A[tx])", lambda x: _s(-x["a"])),
    ("S", "T.ptx.abs.s32({d}, A[tx])", lambda x: _s(abs(x["a"]))),
    ("S", "T.ptx.div.s32({d}, A[tx], D[tx])", lambda x: _quo(x["a"], x["d"])),
    ("S", "T.ptx.rem.s32({d}, A[tx], D[tx])", lambda x: x["a"] - x["d"] * _quo(x["a"], x["d"])),
    ("S", "T.ptx.shr.s32({d}, A[tx], N[tx])", lambda x: x["a"] >> min(x["n"], 32)),
    ("S", "T.ptx.szext.clamp.s32({d}, A[tx], N[tx])", lambda x: _szext(x["ua"], x["n"], True, True)),
    ("S", "T.ptx.szext.wrap.s32({d}, A[tx], N[tx])", lambda x: _szext(x["ua"], x["n"], False, True)),
    ("S", "T.ptx.set.lt.s32.s32({d}, A[tx], B[tx])", lambda x: -1 if x["a"] < x["b"] else 0),
    ("U", "T.ptx.add.u32({d}, UA[tx], UB[tx])", lambda x: x["ua"] + x["ub"]),
    ("U", "T.ptx.sub.u32({d}, UA[tx], UB[tx])", lambda x: x["ua"] - x["ub"]),
    ("U", "T.ptx.mul.hi.u32({d}, UA[tx], UB[tx])", lambda x: (x["ua"] * x["ub"]) >> 32),
    ("U", "T.ptx.mad.hi.u32({d}, UA[tx], UB[tx], UC[tx])", lambda x: ((x["ua"] * x["ub"]) >> 32) + x["uc"]),
    ("U", "T.ptx.mul24.lo.u32({d}, UA[tx], UB[tx])", lambda x: _s24(x["ua"], 0) * _s24(x["ub"], 0)),
    ("U", "T.ptx.mul24.hi.u32({d}, UA[tx], UB[tx])", lambda x: (_s24(x["ua"], 0) * _s24(x["ub"], 0)) >> 16),
    (
        "U",
        "T.ptx.mad24.hi.u32({d}, UA[tx], UB[tx], UC[tx])",
        lambda x: ((_s24(x["ua"], 0) * _s24(x["ub"], 0)) >> 16) + x["uc"],
    ),
    ("U", "T.ptx.sad.u32({d}, UA[tx], UB[tx], UC[tx])", lambda x: x["uc"] + abs(x["ua"] - x["ub"])),
    ("U", "T.ptx.div.u32({d}, UA[tx], UD[tx])", lambda x: x["ua"] // x["ud"]),
    ("U", "T.ptx.rem.u32({d}, UA[tx], UD[tx])", lambda x: x["ua"] % x["ud"]),
    ("U", "T.ptx.add.u16x2({d}, UA[tx], UB[tx])", lambda x: _halves(x["ua"], x["ub"])),
    ("U", "T.ptx.add.s16x2({d}, UA[tx], UB[tx])", lambda x: _halves(x["ua"], x["ub"])),
    ("U", "T.ptx.shl.b32({d}, UA[tx], N[tx])", lambda x: x["ua"] << min(x["n"], 32)),
    ("U", "T.ptx.shr.u32({d}, UA[tx], N[tx])", lambda x: x["ua"] >> min(x["n"], 32)),
    ("U", "T.ptx.shr.b32({d}, UA[tx], N[tx])", lambda x: x["ua"] >> min(x["n"], 32)),
    ("U", "T.ptx.szext.wrap.u32({d}, UA[tx], N[tx])", lambda x: _szext(x["ua"], x["n"], False, False)),
    ("U", "T.ptx.bmsk.clamp.b32({d}, UA[tx] & T.uint32(63), N[tx])", lambda x: _bmsk(x["ua"] & 63, x["n"], True)),
    ("U", "T.ptx.bmsk.wrap.b32({d}, UA[tx] & T.uint32(63), N[tx])", lambda x: _bmsk(x["ua"] & 63, x["n"], False)),
    ("U", "T.ptx.and_.b32({d}, UA[tx], UB[tx])", lambda x: x["ua"] & x["ub"]),
    ("U", "T.ptx.or_.b32({d}, UA[tx], UB[tx])", lambda x: x["ua"] | x["ub"]),
    ("U", "T.ptx.xor.b32({d}, UA[tx], UB[tx])", lambda x: x["ua"] ^ x["ub"]),
    ("U", "T.ptx.not_.b32({d}, UA[tx])", lambda x: ~x["ua"]),
    ("U", "T.ptx.cnot.b32({d}, UA[tx] & T.uint32(3))", lambda x: int(x["ua"] & 3 == 0)),
    ("U", "T.ptx.lop3.b32({d}, UA[tx], UB[tx], UC[tx], 0x96)", lambda x: _lop3(x["ua"], x["ub"], x["uc"], 0x96)),
    ("U", "T.ptx.lop3.b32({d}, UA[tx], UB[tx], UC[tx], 0x1A)", lambda x: _lop3(x["ua"], x["ub"], x["uc"], 0x1A)),
    ("U", "T.ptx.lop3.b32({d}, UA[tx], UB[tx], UC[tx], 0x00)", lambda x: 0),
    ("U", "T.ptx.lop3.b32({d}, UA[tx], UB[tx], UC[tx], 0xE4)", lambda x: _lop3(x["ua"], x["ub"], x["uc"], 0xE4)),
    ("U", "T.ptx.setp.lo.u32({d}, UA[tx], UB[tx])", lambda x: int(x["ua"] < x["ub"])),
    ("U", "T.ptx.setp.hs.u32({d}, UA[tx], UB[tx])", lambda x: int(x["ua"] >= x["ub"])),
    ("U", "T.ptx.setp.le.s32({d}, A[tx], B[tx])", lambda x: int(x["a"] <= x["b"])),
    ("U", "T.ptx.setp.ne.b32({d}, UA[tx], UB[tx])", lambda x: int(x["ua"] != x["ub"])),
    ("U", "T.ptx.set.hi.u32.u32({d}, UA[tx], UB[tx])", lambda x: M32 if x["ua"] > x["ub"] else 0),
    ("U", "T.ptx.selp.u32({d}, UA[tx], UB[tx], A[tx] < B[tx])", lambda x: x["ua"] if x["a"] < x["b"] else x["ub"]),
    ("U", "T.ptx.slct.u32.s32({d}, UA[tx], UB[tx], C[tx])", lambda x: x["ua"] if x["c"] >= 0 else x["ub"]),
    ("U", "T.ptx.mov.u32({d}, UA[tx])", lambda x: x["ua"]),
    ("U", "T.ptx.mov.pred({d}, T.ptx.pred(UA[tx] & T.uint32(6)))", lambda x: int(x["ua"] & 6 != 0)),
    ("U", "T.ptx.not_.pred({d}, T.ptx.pred(UA[tx] & T.uint32(6)))", lambda x: int(x["ua"] & 6 == 0)),
    ("U", "T.ptx.xor.pred({d}, A[tx] < 0, B[tx] < 0)", lambda x: int((x["a"] < 0) != (x["b"] < 0))),
    ("W", "T.ptx.mul.wide.s32({d}, A[tx], B[tx])", lambda x: x["a"] * x["b"]),
    ("W", "T.ptx.mad.wide.s32({d}, A[tx], B[tx], LC[tx])", lambda x: x["a"] * x["b"] + x["lc"]),
    ("W", "T.ptx.add.s64({d}, LA[tx], LB[tx])", lambda x: x["la"] + x["lb"]),
    ("W", "T.ptx.mul.lo.s64({d}, LA[tx], LB[tx])", lambda x: x["la"] * x["lb"]),
    ("W", "T.ptx.mul.hi.s64({d}, LA[tx], LB[tx])", lambda x: (x["la"] * x["lb"]) >> 64),
    ("W", "T.ptx.mad.hi.s64({d}, LA[tx], LB[tx], LC[tx])", lambda x: ((x["la"] * x["lb"]) >> 64) + x["lc"]),
    ("W", "T.ptx.sad.s64({d}, LA[tx], LB[tx], LC[tx])", lambda x: x["lc"] + abs(x["la"] - x["lb"])),
    ("W", "T.ptx.neg.s64({d}, LA[tx])", lambda x: -x["la"]),
    ("W", "T.ptx.abs.s64({d}, LA[tx])", lambda x: abs(x["la"])),
    ("W", "T.ptx.div.s64({d}, LA[tx], LD[tx])", lambda x: _quo(x["la"], x["ld"])),
    ("W", "T.ptx.rem.s64({d}, LA[tx], LD[tx])", lambda x: x["la"] - x["ld"] * _quo(x["la"], x["ld"])),
    ("W", "T.ptx.shr.s64({d}, LA[tx], N[tx])", lambda x: x["la"] >> min(x["n"], 64)),
    ("Q", "T.ptx.mul.wide.u32({d}, UA[tx], UB[tx])", lambda x: x["ua"] * x["ub"]),
    ("Q", "T.ptx.mad.wide.u32({d}, UA[tx], UB[tx], QC[tx])", lambda x: x["ua"] * x["ub"] + x["qc"]),
    ("Q", "T.ptx.mul.hi.u64({d}, QA[tx], QB[tx])", lambda x: (x["qa"] * x["qb"]) >> 64),
    ("Q", "T.ptx.mad.lo.u64({d}, QA[tx], QB[tx], QC[tx])", lambda x: x["qa"] * x["qb"] + x["qc"]),
    ("Q", "T.ptx.sub.u64({d}, QA[tx], QB[tx])", lambda x: x["qa"] - x["qb"]),
    ("Q", "T.ptx.shl.b64({d}, QA[tx], N[tx])", lambda x: x["qa"] << min(x["n"], 64)),
    ("Q", "T.ptx.shr.u64({d}, QA[tx], N[tx])", lambda x: x["qa"] >> min(x["n"], 64)),
    ("Q", "T.ptx.div.u64({d}, QA[tx], QD[tx])", lambda x: x["qa"] // x["qd"]),
    ("Q", "T.ptx.rem.u64({d}, QA[tx], QD[tx])", lambda x: x["qa"] % x["qd"]),
    ("Q", "T.ptx.not_.b64({d}, QA[tx])", lambda x: ~x["qa"]),
    ("Q", "T.ptx.selp.b64({d}, QA[tx], QB[tx], T.ptx.pred(UC[tx] & T.uint32(1)))", lambda x: _sel(x, "qa", "qb")),
    ("H", "T.ptx.add.s16({d}, HA[tx], HB[tx])", lambda x: x["ha"] + x["hb"]),
    ("H", "T.ptx.mul.hi.s16({d}, HA[tx], HB[tx])", lambda x: (x["ha"] * x["hb"]) >> 16),
    ("H", "T.ptx.div.s16({d}, HA[tx], HD[tx])", lambda x: _quo(x["ha"], x["hd"])),
    ("H", "T.ptx.rem.s16({d}, HA[tx], HD[tx])", lambda x: x["ha"] - x["hd"] * _quo(x["ha"], x["hd"])),
    ("H", "T.ptx.neg.s16({d}, HA[tx])", lambda x: -x["ha"]),
    ("H", "T.ptx.shr.s16({d}, HA[tx], N[tx])", lambda x: x["ha"] >> min(x["n"], 16)),
    ("H", "T.ptx.shl.b16({d}, HA[tx], N[tx])", lambda x: x["ha"] << min(x["n"], 16)),
    ("H", "T.ptx.sad.s16({d}, HA[tx], HB[tx], HA[tx])", lambda x: x["ha"] + abs(x["ha"] - x["hb"])),
    ("S", "T.ptx.mul.wide.s16({d}, HA[tx], HB[tx])", lambda x: x["ha"] * x["hb"]),
    ("U", "T.ptx.mul.wide.u16({d}, GA[tx], GB[tx])", lambda x: x["ga"] * x["gb"]),
    ("U", "T.ptx.setp.gt.s16({d}, HA[tx], HB[tx])", lambda x: int(x["ha"] > x["hb"])),
    ("U", "T.ptx.setp.ls.u16({d}, GA[tx], GB[tx])", lambda x: int(x["ga"] <= x["gb"])),
]
_OUT = {"S": ("int32", 32), "U": ("uint32", 32), "W": ("int64", 64), "Q": ("uint64", 64), "H": ("int16", 16)}
_INS = [
    ("A", "int32"),
    ("B", "int32"),
    ("C", "int32"),
    ("D", "int32"),
    ("UA", "uint32"),
    ("UB", "uint32"),
    ("UC", "uint32"),
    ("UD", "uint32"),
    ("N", "uint32"),
    ("LA", "int64"),
    ("LB", "int64"),
    ("LC", "int64"),
    ("LD", "int64"),
    ("QA", "uint64"),
    ("QB", "uint64"),
    ("QC", "uint64"),
    ("QD", "uint64"),
    ("HA", "int16"),
    ("HB", "int16"),
    ("HD", "int16"),
    ("GA", "uint16"),
    ("GB", "uint16"),
]


def _halves(a, b):
    return ((a + b) & 0xFFFF) | ((((a >> 16) + (b >> 16)) & 0xFFFF) << 16)


def _sel(x, a, b):
    return x[a] if x["uc"] & 1 else x[b]


def _szext(a, b, clamp, signed):
    """The ISA's prose: N = b; from 32 on .clamp keeps a, .wrap uses b mod 32; N = 0 gives 0."""
    n = b if b < 32 else (32 if clamp else b % 32)
    if n == 0:
        return 0
    if n == 32:
        return _s(a) if signed else a
    low = a & ((1 << n) - 1)
    return _s(low, n) if signed else low


def _bmsk(a, b, clamp):
    """b ones from bit a: .clamp gives 0 for a >= 32 and every bit from a for b >= 32; .wrap takes both mod 32."""
    if not clamp:
        a, b = a % 32, b % 32
    if a >= 32:
        return 0
    return (((1 << min(b, 64)) - 1) << a) & M32


def _lop3(a, b, c, lut):
    bit = lambda v, i: (v >> i) & 1  # noqa: E731
    return sum(((lut >> (bit(a, i) << 2 | bit(b, i) << 1 | bit(c, i))) & 1) << i for i in range(32))


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(INT_MIN, INT_MAX, L, dtype=np.int64, endpoint=True)
    b = rng.integers(INT_MIN, INT_MAX, L, dtype=np.int64, endpoint=True)
    c = rng.integers(INT_MIN, INT_MAX, L, dtype=np.int64, endpoint=True)
    edge = [0, -1, INT_MIN, INT_MAX, 1, INT_MIN, INT_MAX, -1, INT_MIN, INT_MAX, 0x00FFFFFF, 0x00800000, -7, 7]
    a[: len(edge)] = edge
    b[: len(edge)] = [0, -1, -1, 1, -1, INT_MIN, INT_MAX, INT_MAX, 1, -1, 0x00FFFFFF, 0x00800000, 2, -2]
    c[: len(edge)] = [0, -1, INT_MIN, INT_MAX, INT_MAX, INT_MIN, INT_MAX, -1, -1, 1, -1, 5, -3, 3]
    c[20:24] = [-(2**30), 2**30, 0x7FFF0000, -0x7FFF0000]  # mad.hi.sat / mad24.hi.sat near the limits
    a[20:24], b[20:24] = [INT_MIN, INT_MAX, INT_MAX, INT_MIN], [INT_MIN, INT_MAX, INT_MIN, INT_MIN]
    d = rng.integers(-1000, 1000, L)
    d[d == 0] = 3
    d[:14] = [1, -1, 7, -1, 1, 2, -2, 3, -3, 5, 1000, -1000, 2, -2]
    d[(a == INT_MIN) & (d == -1)] = 2  # MININT / -1 is refused (below)
    ud = np.where(rng.integers(0, 2, L) == 1, rng.integers(1, 2**32, L, dtype=np.int64), rng.integers(1, 9, L))
    n = rng.integers(0, 2**32, L, dtype=np.int64)
    n[:20] = [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 2**32 - 1, 5, 24, 8, 0x21, 0x1F, 0x40]
    la = rng.integers(-(2**63), 2**63 - 1, L, dtype=np.int64, endpoint=True)
    lb = rng.integers(-(2**63), 2**63 - 1, L, dtype=np.int64, endpoint=True)
    lc = rng.integers(-(2**63), 2**63 - 1, L, dtype=np.int64, endpoint=True)
    la[:6], lb[:6] = [0, -1, -(2**63), 2**63 - 1, -(2**63), 5], [-1, -1, -1, 2**63 - 1, 1, -7]
    ld = rng.integers(-(2**40), 2**40, L)
    ld[ld == 0] = 1
    ld[:6] = [1, -1, 3, -1, 1, 2]
    ha = rng.integers(-(2**15), 2**15, L)
    hb = rng.integers(-(2**15), 2**15, L)
    ha[:4], hb[:4] = [-(2**15), 2**15 - 1, -1, 0], [-1, 2**15 - 1, -(2**15), 0]
    hd = rng.integers(-300, 300, L)
    hd[hd == 0] = 1
    hd[0] = 1
    hd[(ha == -(2**15)) & (hd == -1)] = 2
    arrays = {
        "A": a.astype(np.int32),
        "B": b.astype(np.int32),
        "C": c.astype(np.int32),
        "D": d.astype(np.int32),
        "UA": a.astype(np.int32).view(np.uint32),
        "UB": b.astype(np.int32).view(np.uint32),
        "UC": c.astype(np.int32).view(np.uint32),
        "UD": ud.astype(np.uint32),
        "N": n.astype(np.uint32),
        "LA": la,
        "LB": lb,
        "LC": lc,
        "LD": ld.astype(np.int64),
        "QA": la.view(np.uint64),
        "QB": lb.view(np.uint64),
        "QC": lc.view(np.uint64),
        "QD": np.where(ld == 0, 1, np.abs(ld)).astype(np.uint64) * np.uint64(2**20 + 1),
        "HA": ha.astype(np.int16),
        "HB": hb.astype(np.int16),
        "HD": hd.astype(np.int16),
        "GA": ha.astype(np.int16).view(np.uint16),
        "GB": hb.astype(np.int16).view(np.uint16),
    }
    return arrays


def _lane(arrays, t):
    low = {k.lower(): int(v[t]) for k, v in arrays.items()}
    return low


def battery_source(cases=BATTERY, name="battery"):
    rows = {k: 0 for k in _OUT}
    body = []
    for out, call, _ in cases:
        body.append("    " + call.format(d=f"{out}[{rows[out]}, tx]"))
        rows[out] += 1
    params = [f'{n}: T.Buffer(({L},), "{dt}")' for n, dt in _INS]
    params += [f'{k}: T.Buffer(({max(rows[k], 1)}, {L}), "{dt}")' for k, (dt, _) in _OUT.items()]
    head = f"@T.prim_func\ndef {name}({', '.join(params)}):\n    T.device_entry()\n    T.cta_id([1])\n"
    return head + f"    tx = T.thread_id([{L}])\n" + "\n".join(body) + "\n", rows


def _outputs(rows):
    return {k: np.zeros((max(rows[k], 1), L), dt) for k, (dt, _) in _OUT.items()}


def _run_battery(arch="sm_90a"):
    src, rows = battery_source()
    arrays = _inputs()
    outs = _outputs(rows)
    res = emulate(kernel(src, "battery"), *arrays.values(), *outs.values(), arch=arch)
    return res, arrays, outs


def test_the_battery_is_the_ptx_isas():
    res, arrays, outs = _run_battery()
    assert res.ok, res.summary()
    rows = {k: 0 for k in _OUT}
    bad = []
    for out, call, ref in BATTERY:
        r = rows[out]
        rows[out] += 1
        w = _OUT[out][1]
        for t in range(L):
            want = _u(ref(_lane(arrays, t)), w)
            got = _u(int(outs[out][r, t]), w)
            if got != want:
                bad.append((call, t, hex(got), hex(want)))
    assert not bad, bad[:10]


def test_a_wrong_result_would_be_seen():
    """The battery's comparison is not vacuous: each output row holds values the lanes disagree on."""
    _, _, outs = _run_battery()
    rows = {k: 0 for k in _OUT}
    for out, call, _ in BATTERY:
        r = rows[out]
        rows[out] += 1
        if ", 0x00)" not in call:  # lop3 with immLut 0 is 0 by definition
            assert len(np.unique(outs[out][r])) > 1, call


# ---- floats: compare, select, move ------------------------------------------------------------------------------
_NAN_BITS = 0x7FC12345  # a quiet NaN with a payload: a move keeps its bits
FLOATS = np.array(
    [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-40, -1e-40, 3.0, 2.5, -2.5, 1e-45, 7.0, np.nan],
    np.float32,
)

CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def _float_source():
    body = []
    for i, cmp in enumerate(CMPS):
        body.append(f"    T.ptx.setp.{cmp}.f32(P[{i}, tx], X[tx], Y[tx])")
        body.append(f"    T.ptx.setp.{cmp}.ftz.f32(PF[{i}, tx], X[tx], Y[tx])")
        body.append(f"    T.ptx.setp.{cmp}.f64(PD[{i}, tx], T.Cast('float64', X[tx]), T.Cast('float64', Y[tx]))")
    body += [
        "    T.ptx.setp.lt.f32(Q[0, tx], Q[1, tx], X[tx], Y[tx])",
        "    T.ptx.setp.lt.and_.f32(Q[2, tx], Q[3, tx], X[tx], Y[tx], tx % 3 == 0)",
        "    T.ptx.setp.ge.xor.ftz.f32(Q[4, tx], X[tx], Y[tx], tx % 2 == 0)",
        "    T.ptx.setp.neu.or_.f32(Q[5, tx], X[tx], Y[tx], tx % 5 == 0)",
        "    T.ptx.set.gtu.f32.f32(R[0, tx], X[tx], Y[tx])",
        "    T.ptx.set.lt.and_.f32.f32(R[1, tx], X[tx], Y[tx], tx % 3 == 0)",
        "    T.ptx.selp.f32(R[2, tx], X[tx], Y[tx], tx % 2 == 0)",
        "    T.ptx.slct.f32.f32(R[3, tx], X[tx], Y[tx], X[tx])",
        "    T.ptx.slct.ftz.f32.f32(R[4, tx], X[tx], Y[tx], X[tx])",
        "    T.ptx.mov.f32(R[5, tx], Y[tx])",
        "    T.ptx.slct.b32.s32(RU[0, tx], T.reinterpret('uint32', X[tx]), T.uint32(7), T.reinterpret('int32', Y[tx]))",
        "    T.ptx.set.ne.u32.f32(RU[1, tx], X[tx], Y[tx])",
        "    T.ptx.set.nan.s32.f32(RS[0, tx], X[tx], Y[tx])",
    ]
    params = (
        'X: T.Buffer((NL,), "float32"), Y: T.Buffer((NL,), "float32"), P: T.Buffer((14, NL), "uint32"), '
        'PF: T.Buffer((14, NL), "uint32"), PD: T.Buffer((14, NL), "uint32"), Q: T.Buffer((6, NL), "uint32"), '
        'R: T.Buffer((6, NL), "float32"), RU: T.Buffer((2, NL), "uint32"), RS: T.Buffer((1, NL), "int32")'
    )
    head = f"@T.prim_func\ndef floats({params}):\n    T.device_entry()\n    T.cta_id([1])\n    tx = T.thread_id([NL])\n"
    return (head + "\n".join(body) + "\n").replace("NL", str(len(FLOATS) ** 2))


def _flush(x):
    return math.copysign(0.0, x) if 0 < abs(x) < 2.0**-126 else x


def _cmp(cmp, x, y):
    nan = math.isnan(x) or math.isnan(y)
    if cmp == "num":
        return not nan
    if cmp == "nan":
        return nan
    base = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp.rstrip("u")]
    return (nan or base) if cmp.endswith("u") else (not nan and base)


def _float_inputs():
    xs = np.repeat(FLOATS, len(FLOATS))
    ys = np.tile(FLOATS, len(FLOATS))
    ys.view(np.uint32)[np.isnan(ys)] = _NAN_BITS
    return xs, ys


def test_float_compares_selects_and_moves_are_the_isas():
    xs, ys = _float_inputs()
    n = len(xs)
    outs = {
        "P": np.zeros((14, n), np.uint32),
        "PF": np.zeros((14, n), np.uint32),
        "PD": np.zeros((14, n), np.uint32),
        "Q": np.zeros((6, n), np.uint32),
        "R": np.zeros((6, n), np.float32),
        "RU": np.zeros((2, n), np.uint32),
        "RS": np.zeros((1, n), np.int32),
    }
    res = emulate(kernel(_float_source(), "floats"), xs, ys, *outs.values(), arch="sm_90a")
    assert res.ok, res.summary()
    P, PF, PD, Q, R, RU, RS = outs.values()
    for t in range(n):
        x, y = float(xs[t]), float(ys[t])
        fx, fy = _flush(x), _flush(y)
        for i, cmp in enumerate(CMPS):
            assert P[i, t] == _cmp(cmp, x, y), (cmp, x, y)
            assert PF[i, t] == _cmp(cmp, fx, fy), (cmp, "ftz", x, y)
            assert PD[i, t] == _cmp(cmp, fx, fy), (cmp, "f64", x, y)  # the fast-math f32 -> f64 cvt flushes
        lt = _cmp("lt", x, y)
        assert [int(v) for v in Q[:, t]] == [
            lt,
            not lt,
            lt and t % 3 == 0,
            (not lt) and t % 3 == 0,
            _cmp("ge", fx, fy) != (t % 2 == 0),
            _cmp("neu", x, y) or t % 5 == 0,
        ], (t, x, y)
        assert R[0, t] == (1.0 if _cmp("gtu", x, y) else 0.0)
        assert R[1, t] == (1.0 if lt and t % 3 == 0 else 0.0)
        sel = xs[t] if t % 2 == 0 else ys[t]
        assert R[2:3, t].view(np.uint32)[0] == sel.view(np.uint32), t  # selp.f32 moves bits (NaN payload, -0)
        assert R[3:4, t].view(np.uint32)[0] == (xs[t] if x >= 0 else ys[t]).view(np.uint32), t  # NaN c: b
        assert R[4:5, t].view(np.uint32)[0] == (xs[t] if fx >= 0 else ys[t]).view(np.uint32), t
        assert R[5:6, t].view(np.uint32)[0] == ys[t].view(np.uint32)
        assert RU[0, t] == (xs[t].view(np.uint32) if ys[t].view(np.int32) >= 0 else 7)
        assert RU[1, t] == (M32 if _cmp("ne", x, y) else 0) and RS[0, t] == (-1 if _cmp("nan", x, y) else 0)
    # the cases that matter are there: NaN ordered ne is false, -0 == 0, a subnormal is below 0 unless flushed
    assert P[CMPS.index("ne")][np.isnan(ys)].sum() == 0 and P[CMPS.index("neu")][np.isnan(ys)].all()
    assert (
        R[3][(xs == np.float32(-1e-40))].view(np.uint32).tolist()
        != R[4][(xs == np.float32(-1e-40))].view(np.uint32).tolist()
    )


# ---- moves: TVM's pack / unpack, registers of other C types ------------------------------------------------------
MOVES = """
@T.prim_func
def moves(X: T.Buffer((32,), "float32"), Y: T.Buffer((32,), "float32"), H: T.Buffer((4, 32), "uint16"),
          F: T.Buffer((2, 32), "float16"), W: T.Buffer((4, 32), "uint64"), O: T.Buffer((6, 32), "uint32"),
          G: T.Buffer((4, 32), "uint16"), Z: T.Buffer((2, 32), "float32"), K: T.Buffer((2, 32), "float16")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    T.ptx.mov.b64(W[0, tx], X[tx], Y[tx])
    T.ptx.mov.b64(W[1, tx], H[0, tx], H[1, tx], H[2, tx], H[3, tx])
    T.ptx.mov.b32(O[0, tx], F[0, tx], F[1, tx])
    T.ptx.mov.b64(Z[0, tx], Z[1, tx], W[0, tx])
    T.ptx.mov.b64(G[0, tx], G[1, tx], G[2, tx], G[3, tx], W[1, tx])
    T.ptx.mov.b32(K[0, tx], K[1, tx], O[0, tx])
    T.ptx.mov.b64(O[1, tx], T.ptx.SINK, W[0, tx])
    T.ptx.mov.b64(T.ptx.SINK, O[2, tx], W[0, tx])
    T.ptx.mov.b64(W[2, tx], T.reinterpret("float64", W[1, tx]))
    T.ptx.mov.b32(O[3, tx], X[tx])
"""


def test_pack_and_unpack_put_element_0_in_the_low_bits():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(32).astype(np.float32)
    y = rng.standard_normal(32).astype(np.float32)
    y.view(np.uint32)[0] = _NAN_BITS
    x[1] = -0.0
    h = rng.integers(0, 2**16, (4, 32)).astype(np.uint16)
    f = rng.standard_normal((2, 32)).astype(np.float16)
    w, o = np.zeros((4, 32), np.uint64), np.full((6, 32), 0xDEAD, np.uint32)
    g, z, k = np.zeros((4, 32), np.uint16), np.zeros((2, 32), np.float32), np.zeros((2, 32), np.float16)
    res = emulate(kernel(MOVES, "moves"), x, y, h, f, w, o, g, z, k, arch="sm_90a")
    assert res.ok, res.summary()
    xu, yu = x.view(np.uint32).astype(np.uint64), y.view(np.uint32).astype(np.uint64)
    assert (w[0] == xu | yu << np.uint64(32)).all()
    h64 = h.astype(np.uint64)
    assert (w[1] == h64[0] | h64[1] << np.uint64(16) | h64[2] << np.uint64(32) | h64[3] << np.uint64(48)).all()
    fu = f.view(np.uint16).astype(np.uint32)
    assert (o[0] == fu[0] | fu[1] << np.uint32(16)).all()
    assert (z[0].view(np.uint32) == x.view(np.uint32)).all() and (z[1].view(np.uint32) == y.view(np.uint32)).all()
    assert (g == h).all() and (k.view(np.uint16) == f.view(np.uint16)).all()
    assert (o[1] == x.view(np.uint32)).all() and (o[2] == y.view(np.uint32)).all()  # a sunk lane is not written
    assert (w[2] == w[1]).all() and (o[3] == x.view(np.uint32)).all() and (o[4:] == 0xDEAD).all()


# ---- predication --------------------------------------------------------------------------------------------------
PRED = """
@T.prim_func
def pred(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), O: T.Buffer((5, 64), "uint32"),
         S: T.Buffer((1, 64), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([64])
    for r in range(5):
        O[r, tx] = T.uint32(5)
    S[0, tx] = -9
    T.ptx.add.s32(S[0, tx], A[tx], B[tx], pred=tx % 2 == 0, preserve_dst=True)
    T.ptx.setp.lt.s32(O[0, tx], A[tx], B[tx], pred=tx % 3 == 0, preserve_dst=True)
    T.ptx.setp.lt.s32(O[1, tx], O[2, tx], A[tx], B[tx], pred=T.Cast("uint32", tx % 4), preserve_dst=True)
    T.ptx.shl.b32(O[3, tx], T.Cast("uint32", A[tx]), T.uint32(4), pred=tx < 10, preserve_dst=True)
    T.ptx.xor.pred(O[4, tx], A[tx] < 0, B[tx] < 0, pred=tx >= 32)
"""


def test_predicated_lanes_keep_their_destination():
    """``pred=`` runs the instruction on the lanes whose predicate holds; the others keep the destination, a
    ``.pred`` one read-written (``preserve_dst``) as 0/1 (the helper's ``setp.ne.b32`` in, ``selp.b32`` out)."""
    rng = np.random.default_rng(4)
    a = rng.integers(-100, 100, 64).astype(np.int32)
    b = rng.integers(-100, 100, 64).astype(np.int32)
    o, s = np.zeros((5, 64), np.uint32), np.zeros((1, 64), np.int32)
    res = emulate(kernel(PRED, "pred"), a, b, o, s, arch="sm_90a")
    assert res.ok, res.summary()
    t = np.arange(64)
    lt = (a < b).astype(np.uint32)
    assert (s[0] == np.where(t % 2 == 0, a + b, -9)).all()
    assert (o[0] == np.where(t % 3 == 0, lt, 1)).all()  # the old 5 comes back as 1
    assert (o[1] == np.where(t % 4 != 0, lt, 1)).all() and (o[2] == np.where(t % 4 != 0, 1 - lt, 1)).all()
    assert (o[3] == np.where(t < 10, a.view(np.uint32) << 4, 5)).all()  # a non-.pred register keeps its bits
    assert (o[4] == np.where(t >= 32, (a < 0) != (b < 0), 5)).all()  # without preserve_dst: left alone


# ---- what the ISA does not define -------------------------------------------------------------------------------
DIV = """
@T.prim_func
def div(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "int32"), O: T.Buffer((2, 32), "int32")):
    T.device_entry()
    T.cta_id([1])
    tx = T.thread_id([32])
    T.ptx.rem.s32(O[1, tx], A[tx], B[tx], pred=B[tx] != 0)
    T.ptx.OP.s32(O[0, tx], A[tx], B[tx], pred=tx < LIVE)
"""


@pytest.mark.parametrize("op", ["div", "rem"])
def test_division_by_zero_is_refused_where_a_lane_divides(op):
    a = np.arange(32, dtype=np.int32) - 16
    b = np.where(np.arange(32) < 31, np.arange(32) % 5 + 1, 0).astype(np.int32)
    o = np.zeros((2, 32), np.int32)
    res = emulate(kernel(DIV.replace("OP", op).replace("LIVE", "31"), "div"), a, b, o, arch="sm_90a")
    assert res.ok, res.summary()  # the lane with the zero divisor does not run it
    want = [int(Fraction(int(x), int(y))) for x, y in zip(a[:31], b[:31])]
    if op == "rem":
        want = [int(x) - int(y) * q for x, y, q in zip(a[:31], b[:31], want)]
    assert o[0, :31].tolist() == want
    with pytest.raises(NotEmulatedError, match="by zero") as e:
        emulate(kernel(DIV.replace("OP", op).replace("LIVE", "32"), "div"), a, b, o, arch="sm_90a")
    assert f"{op}.s32" in str(e.value) and "line 7" in str(e.value)


def test_div_of_int_min_by_minus_one_is_refused_rem_is_zero():
    a = np.full(32, INT_MIN, np.int32)
    b = np.full(32, -1, np.int32)
    o = np.full((2, 32), 3, np.int32)
    res = emulate(kernel(DIV.replace("OP", "rem").replace("LIVE", "32"), "div"), a, b, o, arch="sm_90a")
    assert res.ok and (o == 0).all()
    with pytest.raises(NotEmulatedError, match="does not fit"):
        emulate(kernel(DIV.replace("OP", "div").replace("LIVE", "32"), "div"), a, b, o, arch="sm_90a")


# ---- a tensor-core descriptor through mov.b64 unpack / add / pack (TVM's make_lo_uniform / add_16B_offset) --------
def test_a_descriptor_unpacked_offset_and_repacked_feeds_tcgen05_mma():
    """TVM's tile primitives split a shared-memory matrix descriptor with ``mov.b64 {lo, hi}``, move its 16-byte
    address lane in ``lo`` and join it back with ``mov.b64 d, {lo, hi}``. Built that way from the k = 0 descriptor,
    each k-step's descriptor must be the encoder's own: the MMA gives numpy's product only if element 0 is the low
    word both ways."""
    import test_emulator_tcgen05 as tc

    src = __import__("inspect").getsource(tc._tile_mma)
    old = (
        "                        T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_smem[k * 16]), "
        "ldo=1, sdo=64, swizzle=swizzle)  # <descA>\n"
    )
    assert old in src
    new = (
        "                        T.cuda.tcgen05.encode_matrix_descriptor(descA.data, T.address_of(A_smem[0]), "
        "ldo=1, sdo=64, swizzle=swizzle)\n"
        "                        T.ptx.mov.b64(half[0], half[1], descA[0])\n"
        '                        T.ptx.add.u32(half[0], half[0], T.Cast("uint32", k * 2))\n'
        "                        T.ptx.mov.b64(descA[0], half[0], half[1])\n"
    )
    src = src.replace(old, new).replace(
        '                descI = T.alloc_buffer((1,), "uint32", scope="local")\n',
        '                descI = T.alloc_buffer((1,), "uint32", scope="local")\n'
        '                half = T.alloc_buffer((2,), "uint32", scope="local")\n',
    )
    from txlab.magic import register_source

    ns = dict(vars(tc))
    exec(compile(src, register_source(src, tag="emu-desc"), "exec"), ns)  # noqa: S102 - the test kernel
    rng = np.random.default_rng(0)
    a = rng.standard_normal((tc.M, tc.K)).astype(np.float16)
    b = rng.standard_normal((tc.N, tc.K)).astype(np.float16)
    c = np.zeros((tc.M, tc.N), np.float32)
    res = emulate(ns["_tile_mma"](), a, b, c, arch="sm_100a")
    assert res.findings == [], res.findings
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=1e-5, atol=1e-5)


# ---- the GPU ------------------------------------------------------------------------------------------------------
GPU_EXTRA = [
    ("U", "T.ptx.setp.lt.s32({d}, A[tx], B[tx], pred=tx % 3 == 0, preserve_dst=True)", None),
    ("U", "T.ptx.lop3.and_.b32({d}, UA[tx], UB[tx], UC[tx], 0x3F, tx % 2 == 0)", None),
]


@pytest.mark.gpu
def test_the_battery_is_bitwise_the_gpus():
    """The battery (and the float compares) run on the GPU and in the emulator give the same bits."""
    import txlab

    src, rows = battery_source(BATTERY + GPU_EXTRA)
    arrays = _inputs(7)
    k = txlab.compile(kernel(src, "battery"))
    on_gpu, on_cpu = _outputs(rows), _outputs(rows)
    for outs in (on_gpu, on_cpu):
        for arr in outs.values():
            arr[...] = 5
    k(*arrays.values(), *on_gpu.values())
    assert emulate(k, *arrays.values(), *on_cpu.values()).ok
    for name in on_gpu:
        assert np.array_equal(on_gpu[name], on_cpu[name]), name
    xs, ys = _float_inputs()
    kf = txlab.compile(kernel(_float_source(), "floats"))
    shapes = [(14, np.uint32), (14, np.uint32), (14, np.uint32), (6, np.uint32), (6, np.float32)]
    shapes += [(2, np.uint32), (1, np.int32)]
    gpu = [np.zeros((r, len(xs)), dt) for r, dt in shapes]
    cpu = [np.zeros((r, len(xs)), dt) for r, dt in shapes]
    kf(xs, ys, *gpu)
    assert emulate(kf, xs, ys, *cpu).ok
    for i, (g, c) in enumerate(zip(gpu, cpu)):
        assert np.array_equal(g.view(np.uint8), c.view(np.uint8)), i


def _packed_sum_kernel(n):
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm.tirx.layout import S, TileLayout

    lay, one = TileLayout(S[(n,)]), TileLayout(S[(1,)])

    @T.prim_func
    def packed_sum(A_ptr: T.handle, B_ptr: T.handle) -> None:
        A = T.match_buffer(A_ptr, (32, n), "float32")
        B = T.match_buffer(B_ptr, (32,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([32])
        src = T.alloc_local((n,), dtype="float32", layout=lay)
        dst = T.alloc_local((1,), dtype="float32", layout=one)
        for i in range(n):
            src[i] = A[tid, i]
        Tx.thread.sum(dst[0:1], src[0:n])
        B[tid] = dst[0]

    return packed_sum


def test_tvms_packed_sum_tile_primitive_runs_bitwise():
    """TVM's sm_100 thread-scope ``Tx.sum`` (tile_primitive/reduction/sm100_packed.py) pairs its partial sums with
    ``mov.b64 d, {a, b}``, adds them with ``add.rn.ftz.f32x2`` and splits them with ``mov.b64 {a, b}, d``: run, it
    gives the bits of that order of float32 additions."""
    import txlab
    import txlab.emulator.program  # noqa: F401  (registers every handler)
    from txlab.emulator.ops import HANDLERS

    if "tirx.ptx.add" not in HANDLERS:
        pytest.skip("add.f32x2 (the float arithmetic module) is not emulated in this tree")
    n = 36
    k = txlab.compile(_packed_sum_kernel(n), arch="sm_100a")
    assert "mov.b64 %0, {%1, %2};" in k.cuda_source and "mov.b64 {%0, %1}, %2;" in k.cuda_source
    a = np.random.default_rng(5).standard_normal((32, n)).astype(np.float32)
    b = np.zeros(32, np.float32)
    res = emulate(k, a, b)
    assert res.ok, res.summary()
    s = a[:, :8].copy()
    for o in range(1, n // 8):  # the chunks of 8, pairwise
        s += a[:, 8 * o : 8 * o + 8]
    for i in range(8 * (n // 8), n):  # the remainder into element 0
        s[:, 0] += a[:, i]
    s[:, 0:2] += s[:, 2:4]
    s[:, 4:6] += s[:, 6:8]
    s[:, 0:2] += s[:, 4:6]
    assert np.array_equal(b.view(np.uint32), (s[:, 0] + s[:, 1]).view(np.uint32))
