"""Blackwell ``tcgen05`` asynchronous tensor-core work: ``tcgen05.mma`` (SS and TS forms,
``cta_group::1`` and ``::2``), ``tcgen05.cp`` (shared -> TMEM), ``tcgen05.commit`` (unicast and
``.multicast::cluster``), and the descriptor encoders TVM emits (``tcgen05.encode_matrix_descriptor``,
``encode_instr_descriptor`` and its block-scaled form). TMEM itself, ld/st and their ordering:
:mod:`txlab.emulator.tmem`.

Shared-memory descriptor (TVM's ``SmemDescriptor``, PTX ISA "Shared memory descriptor"): bits 0-13
start address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 46-47 version (1), 49-51 base offset, 52 LBO
mode, 61-63 layout (0 none, 2 128B, 4 64B, 6 32B swizzle; 1 128B with 32-byte atoms). The canonical
layouts and the address swizzle are the wgmma ones (:func:`txlab.emulator.wgmma.operand_bytes`
reads them). Instruction descriptor (``InstrDescriptor``): c_format bits 4-5 (0 f16, 1 f32, 2 s32),
a/b format 7-9 / 10-12, negate A/B 13/14, A/B MN-major 15/16, N >> 3 at 17-22, M >> 4 at 24-28;
K is fixed by the kind (f16 16, tf32 8, f8f6f4 and i8 32).

Accumulator placement in TMEM (PTX "Data path layout"): ``cta_group::1`` M=128 row i at lane i
(layout D), M=64 row i at lane ``32*(i//16) + i%16`` (layout F); ``cta_group::2`` M=256: each CTA of
the pair holds its 128 rows at lanes 0..127 (layout A), M=128: each CTA its 64 rows, column halves
folded onto lanes 64..127 (layout B). With ``cta_group::2`` the even CTA of the pair issues; A's
rows and B's rows (N) are split between the two CTAs' shared memories at the same descriptor
address, and both CTAs' TMEM receive D.

Descriptor swizzle check: a descriptor whose swizzle differs from the layout its bytes were written
with is a finding at the line that encoded it -- the tensor map's swizzle for bytes a TMA load wrote,
else the declared swizzle layout of the shared buffer over them (``SMEMPool.alloc_tcgen05_mma_AB``, a
``decl_buffer`` with a swizzle ``ComposeLayout``: ordinary stores go through it). Where neither is
known (no swizzle layout, or aliasing declarations that disagree) nothing is said. One look-up per
issued mma or cp, at its issue.

Asynchrony: an mma or cp reads its shared-memory operands at issue and runs (its TMEM operands,
scale factors, and the write of TMEM) when its issuing warp commits (``tcgen05.commit``) -- the
latest moment the hardware may write TMEM -- then the commit arrives once on its mbarrier (in every
CTA of the mask for ``multicast::cluster``). Reads of its TMEM cells before the reader has waited on
that mbarrier phase are races (tmem.py). The tensor core reads the shared-memory operands at any
time from the issue until that completion: the issuing CTA's operand bytes are read by its tcgen05
pipe (the race checker's clock row that only a commit's mbarrier arrive publishes), so a write to
them (a thread's store, a TMA or bulk copy landing) by a thread not yet ordered after the commit's
completion is a ``shared_race`` naming the MMA's (or cp's) line and the write's -- the buffer refilled
before the MMA that reads it finished. (The odd CTA's operand half of a ``cta_group::2`` MMA is read
at issue too, but its reuse is not checked: the leader's pipe has no clock row in the odd CTA.) An MMA
accumulating (``enable_input_d = 1``) onto TMEM cells nothing wrote since their alloc is an
``uninitialized_tmem_read`` at its line (so is a TS A operand or scale factor nothing wrote).

Arithmetic: the wgmma model's (:mod:`txlab.emulator.tensorcore`, fitted to the H200: one
instruction's K products aligned, truncated and summed as one block, the accumulator included);
Blackwell's own tensor-core arithmetic has not been measured (no B200), so results are the H200
model's, not known to be the B200's bits; tf32 operands drop the low 13 mantissa bits; i8 is exact
(s32 wrap-around). Block-scaled ``kind::mxf8f6f4.block_scale.scale_vec::1X``: each row's e8m0 scale for
its K=32 block is byte ``sf_id`` of TMEM (lane r, column + r // 32) -- the layout TVM and CUTLASS
stage with ``tcgen05.cp.32x128b.warpx4`` (not yet compared with a B200); scales are powers of two,
so the products stay exact. Not modelled (NotEmulatedError naming them): f16 accumulators, sparse
and weight-stationary (``.ws``) forms, fp6/fp4 operands (``mxf4``, ``mxf4nvf4``, 2X/4X scales), cp
decompression.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.sync as sync
import txlab.emulator.tensorcore as tc
import txlab.emulator.tmem as T
from txlab.emulator.ops import HANDLERS, _str
from txlab.emulator.ptx_memory import decode
from txlab.emulator.result import cta_finding
from txlab.errors import NotEmulatedError

# ---- descriptors ---------------------------------------------------------------------------------
_LAYOUT_OF_SWIZZLE = {0: 0, 1: 6, 2: 4, 3: 2, 4: 1}  # TVM's swizzle argument -> descriptor layout
_WGMMA_LAYOUT = {0: 0, 2: 1, 4: 2, 6: 3}  # tcgen05 layout type -> wgmma layout type (same canon)
_SWIZZLE_NAME = {0: "no swizzle", 1: "128B_base32B", 2: "128B swizzle", 4: "64B swizzle", 6: "32B swizzle"}
_TMA_LAYOUT = {0: 0, 1: 6, 2: 4, 3: 2}  # CUtensorMapSwizzle (none, 32B, 64B, 128B) -> layout type
_TC_TYPE = {"float16": "f16", "bfloat16": "bf16", "float32": "tf32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_K_OF_KIND = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32}
_FORMATS = {
    "f16": {0: "float16", 1: "bfloat16"},
    "tf32": {2: "float32"},
    "f8f6f4": {0: "float8_e4m3fn", 1: "float8_e5m2"},
    "i8": {0: "uint8", 1: "int8"},
    "mxf8f6f4": {0: "float8_e4m3fn", 1: "float8_e5m2"},
}


def smem_descriptor(addr: int, lbo: int, sbo: int, swizzle: int) -> int:
    """The 64-bit value TVM's ``tcgen05.encode_matrix_descriptor`` writes (lbo/sbo in 16 B units)."""
    d = ((int(addr) >> 4) & 0x3FFF) | ((int(lbo) & 0x3FFF) << 16) | ((int(sbo) & 0x3FFF) << 32)
    d |= 1 << 46
    d |= _LAYOUT_OF_SWIZZLE[int(swizzle)] << 61
    return d


def decode_smem_descriptor(desc: int) -> dict:
    d = int(desc)
    return {
        "start": (d & 0x3FFF) << 4,
        "lbo": ((d >> 16) & 0x3FFF) << 4,
        "sbo": ((d >> 32) & 0x3FFF) << 4,
        "version": (d >> 46) & 3,
        "base": (d >> 49) & 7,
        "lbo_mode": (d >> 52) & 1,
        "layout": (d >> 61) & 7,
    }


def _format_code(dtype: str) -> int:
    s = str(dtype)
    table = {
        "float16": 0,
        "bfloat16": 1,
        "tfloat32": 2,
        "tensor_float32": 2,  # TVM's spelling (the only one its encoder accepts for kind::tf32)
        "tf32": 2,
        "float8_e4m3fn": 0,
        "float8_e4m3fnuz": 0,
        "float8_e5m2": 1,
        "float6_e2m3fn": 3,
        "float6_e3m2fn": 4,
        "float4_e2m1fn": 5,
        "uint8": 0,
        "int8": 1,
        "int32": 2,
    }
    return table[s]


def instr_descriptor(d_dtype, a_dtype, b_dtype, m, n, trans_a, trans_b, neg_a=False, neg_b=False, sat=False):
    """The 32-bit value of TVM's ``tcgen05.encode_instr_descriptor`` (dense, no block scaling)."""
    d_fmt = {"float16": 0, "float32": 1, "int32": 2}[str(d_dtype)]
    a_fmt = 2 if str(a_dtype) == "float32" else _format_code(a_dtype)
    b_fmt = 2 if str(b_dtype) == "float32" else _format_code(b_dtype)
    v = (int(sat) << 3) | (d_fmt << 4) | (a_fmt << 7) | (b_fmt << 10)
    v |= (int(neg_a) << 13) | (int(neg_b) << 14) | (int(trans_a) << 15) | (int(trans_b) << 16)
    v |= ((int(n) >> 3) & 0x3F) << 17
    v |= ((int(m) >> 4) & 0x1F) << 24
    return v


def decode_instr_descriptor(v: int) -> dict:
    v = int(v)
    return {
        "sparse": (v >> 2) & 1,
        "sat": (v >> 3) & 1,
        "c_format": (v >> 4) & 3,
        "a_format": (v >> 7) & 7,
        "b_format": (v >> 10) & 7,
        "neg_a": (v >> 13) & 1,
        "neg_b": (v >> 14) & 1,
        "a_major": (v >> 15) & 1,
        "b_major": (v >> 16) & 1,
        "n": ((v >> 17) & 0x3F) << 3,
        "m": ((v >> 24) & 0x1F) << 4,
        "max_shift": (v >> 30) & 3,
    }


def _dest_store(comp, dst, what):
    """A store closure for an encoder's destination: ``buf.data`` (element 0) or ``address_of(buf[i])``."""
    name = getattr(getattr(dst, "op", None), "name", "")
    if name == "tirx.address_of" and type(dst.args[0]).__name__ == "TensorLoad":
        load = dst.args[0]
        return lambda fn: comp.store(load.source, list(load.indices), fn)
    if name == "tirx.buffer_data":
        from tvm import tirx

        buf = dst.args[0]
        return lambda fn: comp.store(buf, [tirx.IntImm("int32", 0)], fn)
    return None


def _storing(mk, value):
    """An encoder's op: store ``value(g)`` through ``mk`` (from :func:`_dest_store`); the call is 0."""
    store = mk(value)

    def f(g):
        store(g)
        return np.int32(0)

    return f


def _const_ints(args) -> list[int] | None:
    """The values of constant arguments (None when one is not a constant)."""
    if not all(hasattr(x, "value") for x in args):
        return None
    return [int(x.value) for x in args]


def _dest_read(comp, dst):
    """A read closure for an encoder's destination (the element ``_dest_store`` writes)."""
    name = getattr(getattr(dst, "op", None), "name", "")
    if name == "tirx.address_of" and type(dst.args[0]).__name__ == "TensorLoad":
        return comp.expr(dst.args[0])
    if name == "tirx.buffer_data":
        buf = dst.args[0]
        dt = M.np_dtype(comp.buffer_info(buf)["dtype"])

        def read(g):
            arr = g.env[buf]
            return (arr if arr.dtype == dt else arr.view(dt))[:, 0]

        return read
    return None


def _runtime_instr_desc(comp, call):
    """``*desc = (*desc & ~0x60000030) | (sf_id << 29) | (sf_id << 4)``: the scale-factor ids of a
    block-scaled instruction descriptor (TVM's ``runtime_instr_desc``)."""
    dst, sf = call.args
    mk, rd = _dest_store(comp, dst, "descriptor"), _dest_read(comp, dst)
    if mk is None or rd is None:
        return comp.not_emulated(f"{call.op.name} on a descriptor that is not a local buffer element")
    sf_e = comp.expr(sf)

    def value(g):
        d = np.asarray(rd(g)).astype(np.uint32)
        i = np.asarray(sf_e(g)).astype(np.uint32)
        out = (d & np.uint32(~0x60000030 & 0xFFFFFFFF)) | (i << np.uint32(29)) | (i << np.uint32(4))
        return out if out.ndim else out[()]

    return _storing(mk, value)


def _uniform_int(v) -> int:
    a = np.asarray(v)
    return int(a.ravel()[0]) if a.ndim else int(a)


def _encode_matrix(comp, call):
    dst, addr, lbo, sbo, swz = call.args
    mk = _dest_store(comp, dst, "descriptor")
    if mk is None:
        return comp.not_emulated(f"{call.op.name} into a destination that is not a local buffer element")
    a, l, s, z = comp.expr(addr), comp.expr(lbo), comp.expr(sbo), comp.expr(swz)
    line = comp.line

    def value(g):
        av = np.asarray(a(g)).astype(np.uint64)
        off = np.where(av >= np.uint64(M.SHARED_BASE), av - np.uint64(M.SHARED_BASE), av)
        lv, sv, zv = (_uniform_int(x(g)) for x in (l, s, z))
        if zv not in _LAYOUT_OF_SWIZZLE:
            raise NotEmulatedError(f"tcgen05 descriptor swizzle mode {zv}", lineno=line)
        flat = np.asarray(off).ravel()
        uniq = np.unique(flat)
        lut = {int(o): smem_descriptor(int(o) & 0x3FFFF, lv, sv, zv) for o in uniq}
        if uniq.size == 1:
            return np.uint64(lut[int(uniq[0])])
        return np.array([lut[int(o)] for o in flat], np.uint64)

    def value_noted(g):
        v = value(g)
        lines = g.cta.__dict__.setdefault("tcgen05_desc_lines", {})
        for d in np.unique(np.asarray(v)):
            lines[int(d)] = line  # a descriptor's findings name the line that encoded it
        return v

    return _storing(mk, value_noted)


def _instr_desc_args(comp, call, first_const: int):
    """What an instruction-descriptor encoder needs: (the destination's store maker, the constant
    arguments from ``first_const`` on, the last one ``sparse``), or (None, the op that says why it is
    not emulated: a destination that is not a local element, a non-constant argument, sparsity)."""
    args = list(call.args)
    mk = _dest_store(comp, args[0], "instruction descriptor")
    if mk is None:
        return None, comp.not_emulated(f"{call.op.name} into a destination that is not a local buffer element")
    consts = _const_ints(args[first_const:])
    if consts is None:
        return None, comp.not_emulated(f"{call.op.name} with a non-constant argument")
    if consts[-1]:
        return None, comp.not_emulated(f"{call.op.name} for a sparse MMA")
    return mk, consts


def _encode_instr(comp, call):
    mk, consts = _instr_desc_args(comp, call, 4)
    if mk is None:
        return consts
    d_t, a_t, b_t = (_str(x) for x in call.args[1:4])
    m, n, k, ta, tb, _ncta, na, nb, sat, _sparse = consts
    try:
        v = np.uint32(instr_descriptor(d_t, a_t, b_t, m, n, ta, tb, na, nb, sat))
    except KeyError as exc:
        return comp.not_emulated(call.op.name, f"no descriptor format for dtype {exc.args[0]!r}")
    return _storing(mk, lambda g: v)


def _encode_instr_block_scaled(comp, call):
    mk, consts = _instr_desc_args(comp, call, 8)
    if mk is None:
        return consts
    d_t, a_t, b_t, sfa_t, sfb_t = (_str(x) for x in call.args[1:6])
    m, n, k, ta, tb, _ncta, na, nb, _sparse = consts
    s_fmt = 1 if "e8m0" in sfa_t else 0
    try:
        from tvm.backend.cuda.cpp.descriptors import _get_tcgen05_mma_kind  # TVM's own rule, not a copy of it

        kind = _get_tcgen05_mma_kind(d_t, a_t, b_t, sfa_t, sfb_t)
    except (ImportError, ValueError) as exc:
        return comp.not_emulated(call.op.name, f"the MMA kind of {a_t} x {b_t} scaled by {sfa_t}: {exc}")
    try:
        # kind::mxf4 / mxf4nvf4 take fp4 operands only and code them 1 (E2M1), as TVM's encoder writes; the
        # mxf8f6f4 table (E2M1 = 5) is for fp4 mixed with fp8 / fp6
        fa, fb = (1, 1) if kind != "mxf8f6f4" else (_format_code(a_t), _format_code(b_t))
    except KeyError as exc:
        return comp.not_emulated(call.op.name, f"no descriptor format for dtype {exc.args[0]!r}")
    v = (
        (fa << 7)
        | (fb << 10)
        | (int(na) << 13)
        | (int(nb) << 14)
        | (int(ta) << 15)
        | (int(tb) << 16)
        | (((n >> 3) & 0x3F) << 17)
        | (s_fmt << 23)
        | (((m >> 4) & 0x1F) << 24)
        | (int(k == 96) << 31)
    )
    val = np.uint32(v)
    return _storing(mk, lambda g: val)


# ---- operands ------------------------------------------------------------------------------------
def _operand_addresses(desc: int, rows: int, k: int, itemsize: int, mn_major: bool, line, cta, what) -> np.ndarray:
    """Shared byte address of element (row, k) of an operand (rows, k) through a tcgen05 descriptor."""
    from txlab.emulator.wgmma import operand_bytes

    f = decode_smem_descriptor(desc)
    if f["version"] != 1:
        cta_finding(
            cta,
            "tcgen05_descriptor",
            f"{what} descriptor {int(desc):#018x} has version {f['version']} in bits 46-47; tcgen05 needs 1 "
            "(a wgmma descriptor? encode it with T.cuda.tcgen05.encode_matrix_descriptor)",
            line,
            "version",
        )
    if f["layout"] not in _WGMMA_LAYOUT:
        raise NotEmulatedError(f"tcgen05 descriptor layout {_SWIZZLE_NAME.get(f['layout'], f['layout'])}", lineno=line)
    if f["lbo_mode"]:
        raise NotEmulatedError("tcgen05 descriptor with leading-byte-offset mode 1", lineno=line)
    hopper = (int(desc) & ((1 << 46) - 1)) | (f["base"] << 49) | (_WGMMA_LAYOUT[f["layout"]] << 62)
    try:
        return operand_bytes(hopper, rows, k, itemsize, mn_major)
    except NotEmulatedError as exc:
        raise NotEmulatedError(str(exc).replace("wgmma", "tcgen05"), lineno=line) from None


def declared_swizzles(user, program, user_file=None) -> list:
    """The shared buffers of ``user`` (the kernel as written, before lowering drops layouts) that
    the lowered kernel ``program.func`` also declares, as ``(lo, hi, dyn, mode, name, line)``:
    bytes ``[lo, hi)`` from the start of dynamic (``dyn``) or static shared memory, ``mode`` the
    TVM swizzle argument (1 32B, 2 64B, 3 128B) of a declared swizzle layout whose 16-byte units and
    8-row atom are the tcgen05 descriptor's (``alloc_tcgen05_mma_AB``, ``mma_shared_layout``), else
    ``None``. Ordinary stores to such a buffer go through its layout, so its bytes are laid out with
    that swizzle; :func:`_check_swizzle` compares it with a descriptor's. Buffers at a symbolic
    offset are left out (their bytes are unknown here)."""
    from txlab import ir
    from txlab.ir import spans

    if user is None:
        return []
    lowered = {}
    for n in ir.walk(program.func.body):
        b = getattr(n, "buffer", None)
        if type(n).__name__ in ("DeclBuffer", "AllocBuffer") and b is not None:
            lowered.setdefault(b.name, set()).add(b.scope())
    static = {}
    for name, off, _ in program.shared_static:
        static[name] = None if name in static else off  # two statics of one name: unknown
    out = []
    for n in ir.walk(user.body):
        b = getattr(n, "buffer", None)
        tn = type(n).__name__
        if tn not in ("DeclBuffer", "AllocBuffer") or b is None:
            continue
        scope = b.scope()
        if scope not in ("shared", "shared.dyn") or scope not in lowered.get(b.name, ()):
            continue
        try:
            dt = np.dtype(M.np_dtype(str(b.dtype)))
            nel = int(np.prod([int(x) for x in b.shape])) if len(b.shape) else 1
            eoff = int(b.elem_offset)
        except (TypeError, ValueError, KeyError):
            continue  # symbolic shape or offset, or a dtype numpy has no name for
        if scope == "shared.dyn":
            lo, dyn = eoff * dt.itemsize, True
        elif tn == "AllocBuffer" and static.get(b.name) is not None:
            lo, dyn = static[b.name], False
        else:
            continue
        out.append(
            (lo, lo + nel * dt.itemsize, dyn, _layout_swizzle(b, dt), b.name, spans.user_line(n.span, user_file))
        )
    return out


def _layout_swizzle(buf, dt):
    """The TVM swizzle argument a buffer's declared layout lays its bytes out with, or None."""
    lay = getattr(buf, "layout", None)
    if type(lay).__name__ != "ComposeLayout":
        return None
    try:
        pe, sl, al = int(lay.per_element), int(lay.swizzle_len), int(lay.atom_len)
        inner = bool(lay.swizzle_inner)
    except (AttributeError, TypeError, ValueError):
        return None
    if (1 << pe) * dt.itemsize != 16 or al != 3 or sl not in (1, 2, 3) or not inner:
        return None
    return sl


def _declared_layout(cta, start):
    """(mode, name, line) of the one swizzled buffer declared over shared byte ``start``; None when
    no declaration says, or when overlapping declarations disagree (an alias view: unknown)."""
    decls = getattr(cta.program, "smem_swizzles", None)
    if not decls:
        return None
    hits = []
    for lo, hi, dyn, mode, name, dline in decls:
        base = cta.dyn_offset if dyn else 0
        if base + lo <= start < base + hi:
            hits.append((mode, name, dline))
    if not hits or len({h[0] for h in hits}) != 1 or hits[0][0] is None:
        return None
    return hits[0]


def _check_swizzle(cta, desc: int, nbytes_span, line, what):
    """A descriptor whose swizzle differs from the way its bytes were written -- by the TMA load
    that wrote them, or else by ordinary stores through the swizzled layout of the shared buffer
    declared there -- is a finding; where neither is known, nothing is said."""
    f = decode_smem_descriptor(desc)
    start = f["start"]
    writes = getattr(cta, "tma_writes", None) or {}
    for off, (n, mode, tline) in writes.items():
        if off <= start < off + n:
            want = _TMA_LAYOUT.get(mode)
            if want is not None and want != f["layout"]:
                _swizzle_finding(
                    cta,
                    desc,
                    f,
                    line,
                    f"the TMA load at line {tline} wrote these {n} bytes of shared memory (offset {off}) with "
                    f"{_SWIZZLE_NAME[_TMA_LAYOUT[mode]]}: the operand is read scrambled by the {what} at line "
                    f"{line} (give the descriptor the tensor map's swizzle)",
                    what,
                )
            return
    known = _declared_layout(cta, start)
    if known is None:
        return
    mode, name, dline = known
    if _LAYOUT_OF_SWIZZLE[mode] == f["layout"]:
        return
    where = f" (declared at line {dline})" if dline is not None else ""
    _swizzle_finding(
        cta,
        desc,
        f,
        line,
        f"shared buffer {name}{where} is declared with a {_SWIZZLE_NAME[_LAYOUT_OF_SWIZZLE[mode]]} layout, "
        f"so stores into it laid its bytes out that way: the operand is read scrambled by the {what} at line "
        f"{line} (encode the descriptor with swizzle={mode}, the buffer's swizzle)",
        what,
    )


def _swizzle_finding(cta, desc, f, line, cause, what):
    """The finding of descriptor ``desc`` (fields ``f``) read at ``line`` whose swizzle is not the
    one ``cause`` says its bytes were written with; at the line that encoded it, when known."""
    enc = getattr(cta, "tcgen05_desc_lines", {}).get(int(desc))
    cta.program.finding(
        "tcgen05_descriptor",
        f"{what} descriptor"
        + (f" (encoded at line {enc})" if enc is not None else "")
        + f" says {_SWIZZLE_NAME.get(f['layout'], f['layout'])} but {cause}",
        line=enc if enc is not None else line,
        other_line=line,
        cta=cta.index,
        key=("tcgen05_descriptor", enc, line, "swizzle"),
    )


def _operand(cta, issuer, desc, rows, k, dt, major, line, tid, what):
    """The (rows, k) operand of ``dt`` through ``desc`` in ``cta``'s shared memory, read at the issue of an mma or
    cp by thread ``tid`` of CTA ``issuer``. In the issuer's own shared memory the tensor core goes
    on reading those bytes until the commit's mbarrier completes (:func:`_pipe_read`)."""
    me = cta is issuer
    if me:
        _check_swizzle(cta, desc, None, line, what)
    addr = _operand_addresses(desc, rows, k, dt.itemsize, major, line, cta, what)
    vals = _read_smem(cta, addr, dt, line, tid if me else None, what, desc)
    if me:
        _pipe_read(cta, addr, dt, tid, line)
    return vals


def _pipe_read(cta, addr, dt, tid, line):
    """Bytes ``addr`` (of ``dt`` elements) of ``cta``'s shared memory, read asynchronously by its tcgen05 pipe from
    now until the completion a commit publishes (its clock row): a later write by a thread that is not ordered after
    that completion is a race with this read (the issuing thread's own read, just checked, covers what came
    before). Recorded as the pipe's read with its RAW check switched off for the moment."""
    races = cta.races
    row = getattr(races, "tc_row", None)
    if row is None or not hasattr(races, "vc"):
        return
    byte = (np.asarray(addr, np.int64).ravel()[:, None] + np.arange(dt.itemsize)).ravel()
    byte = byte[(byte >= 0) & (byte < cta.shared.nbytes)]
    if byte.size == 0:
        return
    saved = races.vc[0, row].copy()
    races.vc[0, row] = np.maximum(saved, races.vc[0].max(axis=0))  # (the writes before it: the issuer's check)
    try:
        races.access_as(row, byte, tid, False, line)
    finally:
        races.vc[0, row] = saved


def _read_smem(cta, addr, dt, line, tid, what, desc):
    shared = cta.shared
    if addr.min() < 0 or addr.max() + dt.itemsize > shared.nbytes or np.any(addr % dt.itemsize):
        cta_finding(
            cta,
            "out_of_bounds",
            f"{what} descriptor {int(desc):#x} reaches outside the CTA's {shared.nbytes} bytes of shared memory",
            line,
            "tcgen05",
        )
        addr = np.clip(addr, 0, shared.nbytes - dt.itemsize) // dt.itemsize * dt.itemsize
    if cta.races is not None and tid is not None:
        byte = (addr.ravel()[:, None] + np.arange(dt.itemsize)).ravel()
        # (rows, k): only operand rows partly written are never-written reads (RaceChecker.access)
        row = addr.shape[-1] * dt.itemsize if addr.ndim == 2 else True
        cta.races.access(byte, np.full(byte.size, int(tid)), False, line, name=f"{what} operand", unwritten=row)
    return shared.view(dt)[addr // dt.itemsize]


def _datapath(m_cta: int, cg: int, n: int):
    """(lane of row r, column offset of column c) functions for the accumulator of one CTA."""
    rows = np.arange(m_cta)[:, None]
    cols = np.arange(n)[None, :]
    if cg == 1 and m_cta == 128 or cg == 2 and m_cta == 128:
        return np.broadcast_to(rows, (m_cta, n)), np.broadcast_to(cols, (m_cta, n))
    if cg == 1 and m_cta == 64:  # layout F
        return np.broadcast_to(32 * (rows // 16) + rows % 16, (m_cta, n)), np.broadcast_to(cols, (m_cta, n))
    if cg == 2 and m_cta == 64:  # layout B: column halves on lanes 0..63 / 64..127
        return rows + 64 * (cols >= n // 2), np.broadcast_to(cols % (n // 2), (m_cta, n))
    raise NotEmulatedError(f"tcgen05.mma accumulator of {m_cta} rows per CTA with cta_group::{cg}")


def _elements_from_tmem(tm, lane0, col0, rows_lanes, k, dt):
    """A (rows, k) operand of ``dt`` read from TMEM at (lane0 + lanes, col0 + packed k)."""
    isz = dt.itemsize
    per = 4 // isz
    ncols = (k + per - 1) // per
    cells = tm.data[(lane0 + rows_lanes)[:, None], col0 + np.arange(ncols)[None, :]]
    return np.ascontiguousarray(cells).view(np.uint8).reshape(cells.shape[0], -1)[:, : k * isz].copy().view(dt)


# ---- mma -----------------------------------------------------------------------------------------
class _Mma:
    """One issued tcgen05.mma, run at its commit."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def run(self):
        dt_a, dt_b, k = self.dt_a, self.dt_b, self.k
        kind = self.kind
        ctas = self.ctas  # [issuing CTA] or [even, odd] of the pair
        cg = len(ctas)
        m_cta, n = self.m // cg, self.n
        n_cta = n // cg
        parts_a = []
        for i, cta in enumerate(ctas):
            if self.a_desc is not None:
                parts_a.append(self.smem_a[i])  # (shared-memory operands: read at issue, read_operands)
            else:
                tm = T.tmem_of(cta)
                lanes, _ = _datapath(m_cta, cg, 1)
                lane0, col0 = T.split_addr(self.a_tmem)
                parts_a.append(_elements_from_tmem(tm, lane0, col0, lanes[:, 0], k, dt_a))
        B = np.concatenate(self.smem_b, axis=0)  # (n, k)
        wide = np.int64 if kind == "i8" else np.float64
        if kind == "tf32":
            parts_a = [(p.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for p in parts_a]
            B = (B.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        Bw = B.astype(wide)
        if self.sf is not None:  # e8m0 block scales from TMEM (one per row and K=32 block)
            parts_a = [
                p.astype(np.float64) * _scales(T.tmem_of(c), self.sf[0], self.sf[2], m_cta)[:, None]
                for p, c in zip(parts_a, ctas)
            ]
            Bw = Bw * np.concatenate([_scales(T.tmem_of(c), self.sf[1], self.sf[3], n_cta) for c in ctas])[:, None]
        if self.neg_b:
            Bw = -Bw
        lane0, col0 = T.split_addr(self.d_tmem)
        lanes, cols = _datapath(m_cta, cg, n)
        for i, cta in enumerate(ctas):
            Aw = parts_a[i].astype(wide)
            if self.neg_a:
                Aw = -Aw
            P = Aw @ Bw.T  # (m_cta, n): exact sums of one instruction's K products
            tm = T.tmem_of(cta)
            L, C = lane0 + lanes, col0 + cols
            keep = _kept(self.disabled, i, cg, L)
            old = tm.data[L, C]
            if kind == "i8":
                new = P.astype(np.int64)
                if self.enable_d:
                    new = old.view(np.int32).astype(np.int64) + new
                if self.sat:
                    new = np.clip(new, -(1 << 31), (1 << 31) - 1)
                bits_out = new.astype(np.int64).astype(np.int32).view(np.uint32)
            elif self.sf is not None:  # block-scaled: the exact sum rounded once (scales are 2^k)
                Pf = P.astype(np.float32)
                new = (old.view(np.float32) + Pf) if self.enable_d else Pf
                bits_out = np.asarray(new, np.float32).view(np.uint32)
            else:  # the wgmma model's arithmetic (txlab.emulator.tensorcore), one instruction's K a block
                c = old.view(np.float32) if self.enable_d else np.zeros(old.shape, np.float32)
                new = tc.compute("wgmma", _TC_TYPE[dt_a.name], "f32", Aw, Bw.T, c, btype=_TC_TYPE[dt_b.name])
                bits_out = np.asarray(new, np.float32).view(np.uint32)
            tm.data[L[keep], C[keep]] = bits_out[keep]
        ctas[0].progress += 1

    def read_operands(self):
        """Read the shared-memory operands now (the MMA's issue): A (SS form) and B of each CTA."""
        ctas, k, cg, line, tid = self.ctas, self.k, len(self.ctas), self.line, self.tid
        m_cta, n_cta = self.m // cg, self.n // cg
        self.smem_a = None
        if self.a_desc is not None:
            self.smem_a = [
                _operand(c, ctas[0], self.a_desc, m_cta, k, self.dt_a, self.a_major, line, tid, "tcgen05.mma A")
                for c in ctas
            ]
        self.smem_b = [
            _operand(c, ctas[0], self.b_desc, n_cta, k, self.dt_b, self.b_major, line, tid, "tcgen05.mma B")
            for c in ctas
        ]


def _kept(disabled, i: int, cg: int, L) -> np.ndarray:
    """Which accumulator cells at lanes ``L`` of the pair's CTA ``i`` an MMA writes: not its disabled output lanes."""
    if disabled is None:
        return np.ones(np.shape(L), bool)
    bits = disabled[i * 4 : i * 4 + 4] if cg == 2 else disabled
    lane_off = ((np.array(bits, np.uint64)[:, None] >> np.arange(32, dtype=np.uint64)) & 1).ravel() == 0
    return lane_off[np.clip(L, 0, 127)]


def _scale_cells(taddr: int, rows: int) -> tuple:
    """(lanes, columns) of the TMEM cells holding ``rows`` rows' scale factors (see :func:`_scales`)."""
    lane0, col0 = T.split_addr(taddr)
    r = np.arange(rows)
    return (lane0 + r % 32 + 32 * ((r // 32) % 4)) % 128, col0 + r // 32


def _scales(tm, taddr: int, sf_id: int, rows: int) -> np.ndarray:
    """The e8m0 scale of each of ``rows`` rows for one K=32 block: row r's byte ``sf_id`` of the
    cell at (lane r % 128, column + r // 32) -- the layout TVM and CUTLASS stage with
    ``tcgen05.cp.32x128b.warpx4`` (32 rows x 4 columns, copied to every lane quarter)."""
    cells = tm.data[_scale_cells(taddr, rows)]
    e = ((cells >> np.uint32(8 * sf_id)) & np.uint32(0xFF)).astype(np.int64)
    return np.where(e == 255, np.nan, np.ldexp(1.0, e - 127))


def _mma(comp, call):
    p = decode(call)
    if p is None:
        return comp.not_emulated(call.op.name)
    form = "ts" if call.op.name.endswith("_ts") else "ss"
    kind = p.mods.get("kind", "").replace("kind::", "")
    cg = 2 if p.mods.get("cta_group") == "cta_group::2" else 1
    scaled = "block_scale" in call.op.name
    if kind not in _K_OF_KIND or scaled != (kind == "mxf8f6f4"):
        return comp.not_emulated(f"tcgen05.mma.kind::{kind}" + (".block_scale" if scaled else ""))
    if scaled and p.mods.get("scale_vec") != "scale_vec::1X":
        return comp.not_emulated(f"tcgen05.mma.kind::{kind}.block_scale.{p.mods.get('scale_vec')}")
    if p.mods.get("collector_a"):
        return comp.not_emulated(f"tcgen05.mma with {p.mods['collector_a']}")
    d_e = comp.expr(p.one("d_tmem"))
    a_e = comp.expr(p.one("a_desc" if form == "ss" else "a_tmem"))
    b_e = comp.expr(p.one("b_desc"))
    i_e = comp.expr(p.one("idesc"))
    mask_es = [comp.expr(x) for x in p.ops.get("disable_output_lane", []) if x is not None]
    en_e = comp.expr(p.one("enable_input_d"))
    sfa_e = comp.expr(p.one("sfa_tmem")) if scaled else None
    sfb_e = comp.expr(p.one("sfb_tmem")) if scaled else None
    pred_e = comp.expr(p.pred) if p.pred is not None else None
    line = comp.line
    what = f"tcgen05.mma.cta_group::{cg}.kind::{kind}" + (".block_scale" if scaled else "")

    def lane_val(fn, g, lane):
        v = np.asarray(fn(g))
        return int(v[lane]) if v.ndim and v.shape[0] == g.L else int(v.ravel()[0]) if v.ndim else int(v)

    def f(g):
        act = np.nonzero(g.active())[0]
        if pred_e is not None:
            pv = np.broadcast_to(np.asarray(pred_e(g)), (g.L,))
            act = act[pv[act] != 0]
        if act.size:
            T.note_cta_group(g, cg, line, what)
        for lane in act:
            _issue(g, int(lane), lane_val)
        return np.int32(0)

    def _issue(g, lane, lane_val):
        cta = g.cta
        warp = int(g.warp_of_lane[lane])
        idesc = decode_instr_descriptor(lane_val(i_e, g, lane))
        if scaled:  # the block-scaled layout: scale-factor ids and format where c_format sits
            raw = lane_val(i_e, g, lane)
            idesc.update(c_format=1, sat=0, b_sf_id=(raw >> 4) & 3, a_sf_id=(raw >> 29) & 3, sf_e8m0=(raw >> 23) & 1)
            idesc["n"] = ((raw >> 17) & 0x3F) << 3
            if not idesc["sf_e8m0"]:
                raise NotEmulatedError(f"{what} with e4m3 scale factors", lineno=line)
        if idesc["sparse"]:
            raise NotEmulatedError(f"{what}.sp (sparse)", lineno=line)
        if idesc["c_format"] != (2 if kind == "i8" else 1):
            raise NotEmulatedError(
                f"{what} with a {'f16' if idesc['c_format'] == 0 else 'format ' + str(idesc['c_format'])} accumulator",
                lineno=line,
            )
        fa = _FORMATS[kind].get(idesc["a_format"])
        fb = _FORMATS[kind].get(idesc["b_format"])
        if fa is None or fb is None:
            raise NotEmulatedError(
                f"{what} with operand formats {idesc['a_format']}/{idesc['b_format']} (fp6/fp4 operands)", lineno=line
            )
        m, n = idesc["m"], idesc["n"]
        if cg == 1 and m not in (64, 128) or cg == 2 and m not in (128, 256):
            raise NotEmulatedError(f"{what} with M={m}", lineno=line)
        ctas = _pair(cta, what, line) if cg == 2 else [cta]
        if not ctas:
            return
        d_tmem = lane_val(d_e, g, lane)
        disabled = [lane_val(x, g, lane) for x in mask_es] if mask_es else None
        if disabled is not None and not any(disabled):
            disabled = None
        op = _Mma(
            kind=kind,
            k=_K_OF_KIND[kind],
            m=m,
            n=n,
            dt_a=M.np_dtype(fa),
            dt_b=M.np_dtype(fb),
            a_desc=lane_val(a_e, g, lane) if form == "ss" else None,
            a_tmem=lane_val(a_e, g, lane) if form == "ts" else None,
            b_desc=lane_val(b_e, g, lane),
            a_major=bool(idesc["a_major"]),
            b_major=bool(idesc["b_major"]),
            neg_a=bool(idesc["neg_a"]),
            neg_b=bool(idesc["neg_b"]),
            sat=bool(idesc["sat"]),
            enable_d=bool(lane_val(en_e, g, lane)),
            disabled=disabled,
            d_tmem=d_tmem,
            sf=(lane_val(sfa_e, g, lane), lane_val(sfb_e, g, lane), idesc["a_sf_id"], idesc["b_sf_id"])
            if scaled
            else None,
            ctas=ctas,
            line=line,
            tid=int(g.gtid[lane]),
        )
        lane0, col0 = T.split_addr(d_tmem)
        lanes, cols = _datapath(m // cg, cg, n)
        w = T.AsyncWrite(what, line, cta, warp)
        w.rank = cta.rank
        threads = g.tid[lane : lane + 1]
        L, C = lane0 + lanes, col0 + cols
        for i, c in enumerate(ctas):
            tm = T.tmem_of(c)
            if not tm.check_allocated(L, C, line, f"{what} accumulator", threads, warp):
                return
            if form == "ts":
                la, ca = T.split_addr(op.a_tmem)
                alanes, _ = _datapath(m // cg, cg, 1)
                per = 4 // op.dt_a.itemsize
                acols = ca + np.arange((op.k + per - 1) // per)
                AL, AC = la + alanes + 0 * acols[None, :], acols[None, :] + 0 * alanes
                if not tm.check_allocated(AL, AC, line, f"{what} A operand", threads, warp):
                    return
                tm.check_read(AL, AC, warp, line, threads, pipe=True, rcta=cta, what=f"{what} A operand")
                tm.check_stores_complete(AL, AC, warp, line, what + " A", threads, rcta=cta)
                tm.check_unwritten(AL, AC, line, f"{what} A operand (from TMEM)", threads, rcta=cta)
            if op.enable_d:
                keep = _kept(disabled, i, cg, L)
                tm.check_stores_complete(L, C, warp, line, what + " accumulator", threads, rcta=cta)
                tm.check_unwritten(
                    L[keep],
                    C[keep],
                    line,
                    f"{what} with enable_input_d = 1 (it adds to the accumulator)",
                    threads,
                    fix="TMEM is not zeroed: pass enable_input_d = 0 to the first MMA of an accumulation (k > 0, not "
                    "k >= 0), or zero the accumulator first",
                    rcta=cta,
                )
            if scaled:  # the e8m0 scale factors of this CTA's rows of A and of B
                for taddr_sf, rows in ((op.sf[0], m // cg), (op.sf[1], n // cg)):
                    tm.check_unwritten(*_scale_cells(taddr_sf, rows), line, f"{what} scale factors", threads, rcta=cta)
        op.read_operands()
        for i, c in enumerate(ctas):
            T.tmem_of(c).begin_write(w, L, C, line, threads, keep=_kept(disabled, i, cg, L))
        if form == "ts":  # the A cells are read when the MMA runs: a later st must wait for it
            tm = T.tmem_of(cta)
            tm.areader[la + alanes, acols[None, :] + 0 * alanes] = len(tm.writes) - 1
        T.tmem_of(cta).queue.setdefault(warp, []).append((w, op.run))

    return f


# ---- cp ------------------------------------------------------------------------------------------
_CP_SHAPES = {"128x256b": (128, 32), "4x256b": (4, 32), "128x128b": (128, 16), "64x128b": (64, 16), "32x128b": (32, 16)}


def _cp(comp, call):
    p = decode(call)
    if p is None:
        return comp.not_emulated(call.op.name)
    shape = p.mods.get("shape", "")
    mc = p.mods.get("multicast", "")
    cg = 2 if p.mods.get("cta_group") == "cta_group::2" else 1
    if p.mods.get("dst_fmt") or p.mods.get("src_fmt"):
        return comp.not_emulated(f"tcgen05.cp.{shape} with decompression ({p.mods.get('src_fmt')})")
    rows, nbytes = _CP_SHAPES[shape]
    t_e, d_e = comp.expr(p.one("taddr")), comp.expr(p.one("s_desc"))
    line = comp.line
    what = f"tcgen05.cp{'.cta_group::2' if cg == 2 else ''}.{shape}" + (f".{mc}" if mc else "")

    def lanes_of():
        r = np.arange(rows)
        if shape == "4x256b":  # one row per lane quarter: rows 0..3 -> lanes 0, 32, 64, 96
            return [32 * r]
        if mc == "warpx2::02_13":
            return [r % 32 + 32 * (r // 32), r % 32 + 32 * (r // 32) + 64]
        if mc == "warpx2::01_23":
            return [r % 32 + 64 * (r // 32), r % 32 + 64 * (r // 32) + 32]
        if mc == "warpx4":
            return [r + 32 * q for q in range(4)]
        return [r]

    def f(g):
        cta = g.cta
        if g.active().any():
            T.note_cta_group(g, cg, line, what)
        ctas = _pair(cta, what, line) if cg == 2 else [cta]
        if not ctas:
            return np.int32(0)
        for lane in np.nonzero(g.active())[0]:
            taddr = int(np.asarray(t_e(g)).ravel()[lane if np.ndim(t_e(g)) else 0])
            dv = np.asarray(d_e(g))
            desc = int(dv.ravel()[lane] if dv.ndim else dv)
            warp = int(g.warp_of_lane[lane])
            lane0, col0 = T.split_addr(taddr)
            dst_lanes = [lane0 + x for x in lanes_of()]
            cols = col0 + np.arange(nbytes // 4)
            threads = g.tid[lane : lane + 1]
            L = np.concatenate([x[:, None] + 0 * cols[None, :] for x in dst_lanes])
            C = np.concatenate([cols[None, :] + 0 * x[:, None] for x in dst_lanes])
            if not all(T.tmem_of(c).check_allocated(L, C, line, what, threads, warp) for c in ctas):
                continue
            w = T.AsyncWrite(what, line, cta, warp)
            w.rank = cta.rank
            tid = int(g.gtid[lane])

            # with cta_group::2 each CTA of the pair copies from its own shared memory (the same descriptor
            # address) into its own TMEM, as the MMA reads its operand halves; the source is read at issue
            # (the copy goes on reading it until the commit's mbarrier completes: _operand)
            src = [_operand(c, cta, desc, rows, nbytes // 4, np.dtype(np.uint32), False, line, tid, what) for c in ctas]

            def run(L=L, C=C, src=src):
                for c, vals in zip(ctas, src, strict=True):
                    T.tmem_of(c).data[L, C] = np.concatenate([vals] * len(dst_lanes))
                cta.progress += 1

            for c in ctas:
                T.tmem_of(c).begin_write(w, L, C, line, threads)
            T.tmem_of(cta).queue.setdefault(warp, []).append((w, run))
        return np.int32(0)

    return f


def _pair(cta, what, line) -> list:
    """The CTA pair a ``cta_group::2`` operation issued by ``cta`` acts on: [even, odd]; [] (after a
    finding) when the odd CTA issued it. No cluster of two is not emulated."""
    cl = cta.cluster
    if cl is None or len(cl.ctas) < 2:
        raise NotEmulatedError(
            f"{what} outside a cluster of at least 2 CTAs (cta_group::2 needs a CTA pair)", lineno=line
        )
    if cta.rank % 2:
        cta_finding(
            cta,
            "tcgen05_pair",
            f"{what} issued by CTA rank {cta.rank}, the odd CTA of its pair: with cta_group::2 only the "
            "even (leader) CTA issues (guard it with the CTA's rank in the cluster)",
            line,
        )
        return []
    return [cta, cl.ctas[cta.rank + 1]]


# ---- commit --------------------------------------------------------------------------------------
def _commit(comp, call):
    p = decode(call)
    if p is None:
        return comp.not_emulated(call.op.name)
    mb_e = comp.expr(p.one("mbar"))
    mask_e = comp.expr(p.one("mask")) if p.ops.get("mask") else None
    line = comp.line
    cg = 2 if p.mods.get("cta_group") == "cta_group::2" else 1
    what = f"tcgen05.commit.cta_group::{cg}"

    def f(g):
        from txlab.emulator.ops import _uniform_addr
        from txlab.emulator.tma import _targets

        cta = g.cta
        tm = T.tmem_of(cta)
        act = np.nonzero(g.active())[0]
        if act.size:
            T.note_cta_group(g, cg, line, what)
        a = _uniform_addr(g, mb_e(g), line, "tcgen05.commit")
        if a >= M.SHARED_BASE:
            a -= M.SHARED_BASE
        for lane in act:
            warp = int(g.warp_of_lane[lane])
            ops = tm.queue.pop(warp, [])
            for _, run in ops:
                run()
            clock = row = None
            races = cta.races
            if races is not None and hasattr(races, "vc"):
                row = getattr(races, "tc_row", None)
                if row is None:
                    clock = int(races.vc[0, warp, warp])
                else:  # the pipe completes what the warp issued, after all the warp knew
                    races.acquire(row, races.release(warp))  # (the warp's later work is after it)
                    clock = int(races.vc[0, row, row])
            if mask_e is not None:
                mask = _uniform_addr(g, mask_e(g), line, "tcgen05.commit multicast mask")
                targets = [(c, sync.mbarrier(c, a & M.DSMEM_MASK, line)) for c in _targets(g, mask, line)]
            else:
                targets = [sync.mbarrier_at(g, a, line)]
            for w, _ in ops:
                w.clock = clock if clock is not None else -1
                w.row = row
                w.commit_line = line
                own = next((t for t in targets if t[0] is cta), targets[0] if targets else None)
                if own is not None:
                    w.mb = own
                    w.phase = own[1].completed
            sub = _one_lane(g, lane, row)
            for owner, mb in targets:
                sync.mb_arrive(owner, mb, sub, 1, 1, line)
        return np.int32(0)

    return f


class _Lane:
    """A one-lane view of a group for an mbarrier arrive (commit arrives once per thread)."""

    def __init__(self, g, lane, row=None):
        self.cta = g.cta
        self.L = g.L
        self.mask = np.zeros(g.L, bool)
        self.mask[lane] = True
        self.warp_of_lane = g.warp_of_lane
        if row is not None:  # the arrive publishes the tcgen05 pipe's clock, not the warp's
            self.warp_of_lane = g.warp_of_lane.copy()
            self.warp_of_lane[lane] = row
        self.tid = g.tid
        self.gtid = g.gtid

    def active_tids(self):
        return self.tid[self.mask]

    def active(self):
        return self.mask


def _one_lane(g, lane, row=None):
    return _Lane(g, lane, row)


HANDLERS["tirx.cuda.tcgen05_encode_matrix_descriptor"] = _encode_matrix
HANDLERS["tirx.cuda.tcgen05_encode_instr_descriptor"] = _encode_instr
HANDLERS["tirx.cuda.tcgen05_encode_instr_descriptor_block_scaled"] = _encode_instr_block_scaled
HANDLERS["tirx.cuda.runtime_instr_desc"] = _runtime_instr_desc
HANDLERS["tirx.ptx.tcgen05_mma_ss"] = _mma
HANDLERS["tirx.ptx.tcgen05_mma_ts"] = _mma
HANDLERS["tirx.ptx.tcgen05_mma_block_scale_ss"] = _mma
HANDLERS["tirx.ptx.tcgen05_mma_block_scale_ts"] = _mma
HANDLERS["tirx.ptx.tcgen05_cp"] = _cp
HANDLERS["tirx.ptx.tcgen05_commit"] = _commit
HANDLERS["tirx.ptx.tcgen05_commit_multicast"] = _commit
