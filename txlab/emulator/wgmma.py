"""Hopper ``wgmma.mma_async`` (SS and RS forms) through its shared-memory matrix descriptors.

Descriptor (PTX ISA "Matrix Descriptor Format"; TVM's ``ptx_wgmma_encode_matrix_descriptor``):
bits 0-13 start address >> 4, 16-29 leading-dimension byte offset (LBO) >> 4, 32-45 stride-dimension
byte offset (SBO) >> 4, 49-51 base offset, 62-63 layout (0 interleave, 1 128B, 2 64B, 3 32B swizzle).
Canonical layouts, T = 16 bytes / element size, W = swizzle width in 16-byte chunks (1, 2, 4, 8):

- K-major (imm-trans 0): row ``mn = r + 8*i`` at ``r*16*W + i*SBO`` (interleave: ``r*16 + i*SBO``);
  column ``k = t + T*j`` at ``t*size + j*16`` (interleave: ``j*LBO``);
- MN-major (imm-trans 1): ``mn = t + T*(c + W*i)`` at ``t*size + c*16 + i*LBO`` (interleave:
  ``i*SBO``); ``k = r + 8*j`` at ``r*16*W + j*SBO`` (interleave: ``r*16 + j*LBO``);

then the swizzle of the absolute shared address: bits [4, 4+b) ^= bits [7, 7+b), b = log2(W) --
the pattern TMA writes, so TMA-swizzled tiles are read back exactly. The accumulator fragment of
m64nNk16 (thread t of the warpgroup, warp w = t // 32, lane l): register i holds
``D[16w + l//4 + 8*((i//2) % 2), 8*(i//4) + 2*(l%4) + i%2]``; the RS A fragment uses the same map
over its 8 (16-bit) elements with K in place of N.

Asynchrony: ``mma_async`` records the operation (its descriptors, scale-d, the A registers) in the
warpgroup's open group; ``commit_group`` closes it; ``wait_group N`` completes every committed group
but the newest N, in order: shared memory is read and the accumulator registers written then (the
latest moment the hardware may read; a kernel that overwrites an operand before waiting is wrong
here too). Arithmetic: the H200's, bit for bit (:mod:`txlab.emulator.tensorcore`: each
instruction's k products and the accumulator aligned to the largest exponent with 25 bits -- 13
for fp8 --, truncated, the sum truncated to fp32 -- 13 fraction bits for fp8 -- or rounded to an f16
accumulator, whose registers hold f16x2 pairs of the f32 layout's elements, low half first).
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.tensorcore as tc
from txlab.emulator.ops import HANDLERS, _str
from txlab.emulator.ptx_memory import async_groups, commit_groups, complete_groups
from txlab.emulator.result import cta_finding
from txlab.errors import NotEmulatedError

_LAYOUT_W = {0: 1, 1: 8, 2: 4, 3: 2}  # descriptor layout type -> swizzle width (16 B chunks)
_ENCODE_LAYOUT = {0: 0, 1: 3, 2: 2, 3: 1}  # CUtensorMapSwizzle (none, 32B, 64B, 128B) -> layout type
_TYPES = {"f16": "float16", "bf16": "bfloat16", "tf32": "float32", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def encode(addr: int, lbo: int, sbo: int, swizzle: int) -> np.uint64:
    """The 64-bit descriptor TVM's encoder writes (``lbo``/``sbo`` in 16-byte units)."""
    d = ((addr >> 4) & 0x3FFF) | ((lbo & 0x3FFF) << 16) | ((sbo & 0x3FFF) << 32)
    d |= _ENCODE_LAYOUT[int(swizzle)] << 62
    return np.uint64(d)


def decode(desc: int) -> dict:
    d = int(desc)
    base = (d >> 49) & 7
    if base:
        raise NotEmulatedError(f"wgmma descriptor with base offset {base}")
    return {
        "start": (d & 0x3FFF) << 4,
        "lbo": ((d >> 16) & 0x3FFF) << 4,
        "sbo": ((d >> 32) & 0x3FFF) << 4,
        "layout": (d >> 62) & 3,
    }


def operand_bytes(desc: int, rows: int, k: int, itemsize: int, mn_major: bool) -> np.ndarray:
    """Shared byte address of element (mn, k) of an operand, shape (rows, k)."""
    f = decode(desc)
    W = _LAYOUT_W[f["layout"]]
    T = 16 // itemsize
    mn = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    lbo, sbo = f["lbo"], f["sbo"]
    if not mn_major:
        if f["layout"] == 0:
            off = (mn % 8) * 16 + (mn // 8) * sbo + (kk % T) * itemsize + (kk // T) * lbo
        else:
            off = (mn % 8) * 16 * W + (mn // 8) * sbo + (kk % T) * itemsize + (kk // T) * 16
    else:
        if f["layout"] == 0:
            off = (mn % T) * itemsize + (mn // T) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
        else:
            off = (
                (mn % T) * itemsize + ((mn // T) % W) * 16 + (mn // (T * W)) * lbo + (kk % 8) * 16 * W + (kk // 8) * sbo
            )
    addr = f["start"] + off
    if W > 1:
        b = {2: 1, 4: 2, 8: 3}[W]
        mask = (1 << b) - 1
        addr = addr ^ (((addr >> 7) & mask) << 4)
    return addr.astype(np.int64)


def _state(g):
    return async_groups(g, "wgmma")


def _reg_ref(comp, arg, what):
    """(buffer var, element index) of an accumulator / A-register operand ``acc[i]``."""
    if type(arg).__name__ != "TensorLoad" or len(arg.indices) != 1 or not hasattr(arg.indices[0], "value"):
        raise NotEmulatedError(f"wgmma {what} operand that is not a local register element", lineno=comp.line)
    info = comp.buffer_info(arg.source)
    if not info["scope"].startswith("local"):
        raise NotEmulatedError(f"wgmma {what} operand in {info['scope']} memory", lineno=comp.line)
    return arg.source, int(arg.indices[0].value), M.np_dtype(info["dtype"])


def _lane_regs(g, bufvar, dt):
    arr = g.env[bufvar]
    return arr if arr.dtype == dt else arr.view(dt)


def _mma(comp, call, strs):
    args = list(call.args)
    first = next(i for i, a in enumerate(args) if type(a).__name__ == "StringImm")
    shape, dtype, atype, btype = strs[3], strs[4], strs[5], strs[6]
    m, rest = shape[1:].split("n")
    n, k = (int(x) for x in rest.split("k"))
    if int(m) != 64 or dtype not in ("f32", "f16") or atype not in _TYPES or btype not in _TYPES:
        return comp.not_emulated(f"wgmma.mma_async.{shape}.{dtype}.{atype}.{btype}")
    nacc = n // 2 if dtype == "f32" else n // 4  # f16 accumulators: f16x2 registers
    pre = args[:first]
    tail = len(pre) - nacc
    # imm-trans-a/b exist for f16/bf16 only: tf32 and fp8 operands are K-major, with no trans immediates
    trans = atype in ("f16", "bf16")
    ss_tail, rs_tail = (7, 9) if trans else (5, 8)  # rs: 4 A registers, desc-b, scale-d, imm-scale-a/b (+ trans-b)
    if tail == ss_tail:
        form = "ss"
    elif tail == rs_tail:
        form = "rs"
    else:
        return comp.not_emulated(
            f"wgmma.mma_async.{shape}.{dtype}.{atype}.{btype} with {len(pre)} operands "
            f"({nacc} accumulators, then {tail}: expected {ss_tail} for A in shared memory, "
            f"{rs_tail} for A in registers)"
        )
    line = comp.line
    acc = [_reg_ref(comp, a, "accumulator") for a in pre[:nacc]]
    if len({a[0].__chandle__() for a in acc}) != 1:
        return comp.not_emulated("wgmma accumulators in several register arrays")
    acc_buf, acc_dt = acc[0][0], acc[0][2]
    acc_idx = np.array([a[1] for a in acc])
    ops = [comp.expr(a) for a in pre[nacc:]]
    a_dt = M.np_dtype(_TYPES[atype])
    b_dt = M.np_dtype(_TYPES[btype])
    if form == "rs":
        if a_dt.itemsize != 2:
            return comp.not_emulated(f"wgmma RS form with {atype} A registers")
        a_regs = [_reg_ref(comp, a, "A") for a in pre[nacc : nacc + 4]]
        desc_b, scale_d, sa, sb = ops[4:8]
        desc_a, ta, tb = None, None, (ops[8] if trans else None)
    else:
        desc_a, desc_b, scale_d, sa, sb = ops[:5]
        ta, tb = ops[5:7] if trans else (None, None)
        a_regs = None

    def uniform(g, fn, what):
        v = np.asarray(fn(g))
        if v.ndim:
            act = v[g.active()] if v.shape[0] == g.L else v
            if np.unique(act).size != 1:
                raise NotEmulatedError(f"wgmma {what} that differs between threads of the warpgroup", lineno=line)
            return act.ravel()[0]
        return v[()]

    def issue(g):
        op = {
            "form": form,
            "n": n,
            "k": k,
            "line": line,
            "acc": (acc_buf, acc_idx, acc_dt),
            "desc_b": int(uniform(g, desc_b, "B descriptor")),
            "scale_d": bool(uniform(g, scale_d, "scale-d")),
            "neg": float(uniform(g, sa, "imm-scale-a")) * float(uniform(g, sb, "imm-scale-b")),
            "tb": int(uniform(g, tb, "imm-trans-b")) if tb is not None else 0,
            "dt_a": a_dt,
            "dt_b": b_dt,
            "atype": atype,
            "btype": btype,
            "ctype": dtype,
        }
        if form == "ss":
            op["desc_a"] = int(uniform(g, desc_a, "A descriptor"))
            op["ta"] = int(uniform(g, ta, "imm-trans-a")) if ta is not None else 0
        else:  # the A fragment is read from the registers at issue
            regs = np.stack([_lane_regs(g, b, np.dtype(np.uint32))[:, i] for b, i, _ in a_regs], axis=1)
            op["a_frag"] = np.ascontiguousarray(regs).view(a_dt)  # (L, 8): the map of the fragment
            op["mask"] = g.active().copy()
        _state(g)["open"].append(op)
        return np.int32(0)

    return issue


def _run(g, op):
    """Complete one mma: D[rows of this group's lanes] = A @ B (+ D)."""
    cta = g.cta
    n, k = op["n"], op["k"]
    t = g.tid % 128
    w, lane = t // 32, t % 32
    i = np.arange(n // 2)
    rows = (16 * w + lane // 4)[:, None] + 8 * ((i // 2) % 2)[None, :]  # (L, n/2)
    cols = (8 * (i // 4))[None, :] + (2 * (lane % 4))[:, None] + (i % 2)[None, :]
    shared = cta.shared

    def read(desc, mnrows, dt, mn_major, which):
        addr = operand_bytes(desc, mnrows, k, dt.itemsize, mn_major)
        if addr.min() < 0 or addr.max() + dt.itemsize > shared.nbytes or np.any(addr % dt.itemsize):
            cta_finding(
                cta,
                "out_of_bounds",
                f"wgmma operand descriptor {desc:#x} reaches outside the CTA's {shared.nbytes} bytes of shared memory",
                op["line"],
                "wgmma",
            )
            addr = np.clip(addr, 0, shared.nbytes - dt.itemsize) // dt.itemsize * dt.itemsize
        if cta.races is not None:
            byte = (addr.ravel()[:, None] + np.arange(dt.itemsize)).ravel()
            # (rows, k): only operand rows partly written are never-written reads (RaceChecker.access)
            row = addr.shape[-1] * dt.itemsize
            cta.races.access(byte, np.full(byte.size, int(g.gtid[0])), False, op["line"], name=which, unwritten=row)
        v = shared.view(dt)[addr // dt.itemsize]
        if dt == np.float32:  # tf32: the tensor core reads the top 19 bits
            v = tc.tf32_value(v)
        return v.astype(np.float64)

    dt_b = op["dt_b"]
    B = read(op["desc_b"], n, dt_b, bool(op["tb"]), "wgmma B operand")  # (n, k)
    # the warps of the warpgroup(s) this group holds: each owns 16 rows of A and of D
    gw = g.tid // 32  # the warp within the CTA
    blocks, lane_block = np.unique(gw, return_inverse=True)
    wrow = (blocks % 4) * 16  # first row of each warp's slice
    if op["form"] == "ss":
        A = read(op["desc_a"], 64, op["dt_a"], bool(op["ta"]), "wgmma A operand")  # (64, k)
        Ab = A[wrow[:, None] + np.arange(16)[None, :]]  # (warps, 16, k)
    else:
        frag = op["a_frag"].astype(np.float64)  # (L, 8)
        e = np.arange(8)
        arow = (lane // 4)[:, None] + 8 * ((e % 4) // 2)[None, :]  # row within the warp's 16
        acol = (8 * (e // 4))[None, :] + (2 * (lane % 4))[:, None] + (e % 2)[None, :]
        Ab = np.zeros((blocks.size, 16, k))
        Ab[lane_block[:, None], arow, acol] = frag
    buf, idx, dt = op["acc"]
    regs = g.env[buf]
    lrow = rows - (16 * w)[:, None]  # row within the warp's slice
    f16 = op["ctype"] == "f16"
    if f16 and dt.itemsize != 4:
        raise NotEmulatedError(f"wgmma f16 accumulators in {dt} registers (f16x2 in 32 bits expected)")
    Cb = np.zeros((blocks.size, 16, n), np.float16 if f16 else np.float32)
    if op["scale_d"]:  # element e of a lane: f32 register e, or f16 half e % 2 of register e // 2
        cur = np.ascontiguousarray(regs[:, idx]).view(np.float16) if f16 else regs[:, idx].astype(np.float32)
        Cb[lane_block[:, None], lrow, cols] = cur
    if op["neg"] < 0:  # imm-scale-a/b of -1: negate one operand (exact)
        Ab = -Ab
    D = tc.compute("wgmma", op["atype"], op["ctype"], Ab, B.T[None], Cb, op["btype"])
    new = D[lane_block[:, None], lrow, cols]
    new = np.ascontiguousarray(new).view(np.uint32).view(dt) if f16 else new.astype(dt)
    m = g.mask
    if m is None:
        regs[:, idx] = new
    else:
        sub = regs[m]
        sub[:, idx] = new[m]
        regs[m] = sub
    g.cta.progress += 1


def _wgmma(comp, call):
    strs = [_str(a) for a in call.args if type(a).__name__ == "StringImm"]
    action = strs[0] if strs else ""
    line = comp.line
    if action == "fence":
        return lambda g: np.int32(0)
    if action == "commit_group":

        def commit(g):
            commit_groups(g, "wgmma")
            return np.int32(0)

        return commit
    if action == "wait_group":
        nkeep = comp.expr(call.args[0])

        def wait(g):
            complete_groups(g, "wgmma", int(np.asarray(nkeep(g)).ravel()[0]), _run)
            return np.int32(0)

        return wait
    if action == "mma_async":
        return _mma(comp, call, strs)
    del line
    return comp.not_emulated(f"wgmma.{action}")


def _encode_desc(comp, call):
    dst, addr, lbo, sbo, swz = call.args
    if not (type(dst).__name__ == "Call" and getattr(dst.op, "name", "") == "tirx.address_of"):
        return comp.not_emulated("wgmma descriptor written through a pointer that is not address_of(...)")
    load = dst.args[0]
    if type(load).__name__ != "TensorLoad":
        return comp.not_emulated("wgmma descriptor destination")
    a, l, s, z = comp.expr(addr), comp.expr(lbo), comp.expr(sbo), comp.expr(swz)
    line = comp.line

    def value(g):
        av = np.asarray(a(g)).astype(np.uint64)
        off = av - np.uint64(M.SHARED_BASE) if np.all(av >= np.uint64(M.SHARED_BASE)) else av
        lv, sv, zv = (int(np.asarray(x(g)).ravel()[0]) for x in (l, s, z))
        if zv not in _ENCODE_LAYOUT:
            raise NotEmulatedError(f"wgmma descriptor swizzle mode {zv}", lineno=line)
        flat = np.asarray(off).ravel()
        out = np.array([encode(int(o), lv, sv, zv) for o in np.unique(flat)], np.uint64)
        if out.size == 1:
            return out[0]
        lut = dict(zip(np.unique(flat).tolist(), out.tolist()))
        return np.array([lut[int(o)] for o in flat], np.uint64)

    store = comp.store(load.source, list(load.indices), value)

    def f(g):
        store(g)
        return np.int32(0)

    return f


HANDLERS["tirx.ptx.wgmma"] = _wgmma
for _name in ("fence", "commit_group", "wait_group"):
    HANDLERS[f"tirx.ptx.wgmma_{_name}"] = _wgmma
for _group in ("f16", "f16_f16acc", "bf16", "tf32", "fp8", "fp8_f16acc", "int", "b1"):
    for _form in ("ss", "rs"):
        HANDLERS[f"tirx.ptx.wgmma_{_group}_{_form}"] = _wgmma
HANDLERS["tirx.cuda.wgmma_encode_matrix_descriptor"] = _encode_desc
