"""Table-driven ``T.ptx`` memory instructions: ``ld`` / ``st`` (scalar, ``.v2``/``.v4``/``.v8``, every
memory order and cache modifier), ``ldu``, ``red`` / ``atom``, non-bulk ``cp.async`` (``ca``/``cg``,
``src-size`` zero-fill, ``ignore-src``, commit/wait groups) -- plus the address expression
``T.ptx.addr`` and TVM's ``tvm_builtin_pointer_offset`` / ``tvm_builtin_cast_*x2`` device helpers.

Every ``tirx.ptx.<name>`` call carries its operands first, then one modifier token per slot of its
:data:`tvm.backend.cuda.ptx.TABLE` entry, then a flag string (``pred``, sunk lanes ``s<i>``);
:func:`decode` reads that layout from the installed table, so an instruction is recognised exactly
as TVM's own codegen renders it.

Memory orders (``.relaxed``/``.acquire``/``.release``/``.volatile``, scopes) and cache operators do
not change a value in the emulator's coherent memory; they are accepted and noted. Accesses go
through :meth:`Program.mem_read`/``mem_write``, so bounds and the race checkers see them.

``cp.async``: the copy is performed when the thread's group is waited for (``wait_group N`` keeps
the newest N committed groups outstanding; ``wait_all`` / ``wait_group 0`` completes everything),
which is the latest moment the hardware may perform it; reading the destination before the wait
reads the old bytes, as it may on the GPU. ``src-size`` below ``cp-size`` zero-fills the rest;
``ignore-src`` true writes zeros.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.sync as sync
from txlab.emulator.nan import cast_rule
from txlab.emulator.ops import EXTERNS, HANDLERS, _str, comp_dtype, extern, warp_synced

_MEM_TYPES = {
    "b8": "uint8",
    "u8": "uint8",
    "s8": "int8",
    "b16": "uint16",
    "u16": "uint16",
    "s16": "int16",
    "f16": "float16",
    "bf16": "bfloat16",
    "b32": "uint32",
    "u32": "uint32",
    "s32": "int32",
    "f32": "float32",
    "b64": "uint64",
    "u64": "uint64",
    "s64": "int64",
    "f64": "float64",
}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_ORDER_NOTE = (
    "PTX memory orders, scopes and cache operators (ld.acquire, st.release, .volatile, .nc, "
    "L1::/L2:: hints) do not change values in the emulator's coherent memory: accepted as plain accesses"
)


class Ptx:
    """One decoded ``tirx.ptx.*`` call: ``mods`` (slot -> token, "" omitted), ``ops`` (operand name ->
    list of argument expressions, None for a sunk lane), ``pred`` (the guard expression or None)."""

    def __init__(self, entry, mods, ops, pred):
        self.entry, self.mods, self.ops, self.pred = entry, mods, ops, pred

    def one(self, name):
        v = self.ops.get(name) or [None]
        return v[0]


def decode(call):
    from tvm.backend.cuda.ptx import TABLE
    from tvm.backend.cuda.ptx.table import mods, operand_layout

    name = call.op.name[len("tirx.ptx.") :]
    entry = TABLE.get(name)
    if entry is None:
        return None
    args = list(call.args)
    n = len(entry.slots)
    flags = _str(args[-1]).split(",")
    tokens = [_str(a) for a in args[len(args) - n - 1 : -1]]
    rest = args[: len(args) - n - 1]
    mm = mods(entry, tokens)
    layout = operand_layout(entry, mm)
    sunk = {int(f[1:]) for f in flags if f[:1] == "s" and f[1:].isdigit()}
    ops, pos = {}, 0
    for slot, i, lanes in layout:
        vals = []
        for lane in range(lanes):
            if i + lane in sunk:
                vals.append(None)
            else:
                vals.append(rest[pos])
                pos += 1
        ops[slot.name] = vals
    pred = rest[pos] if "pred" in flags and pos < len(rest) else None
    return Ptx(entry, mm, ops, pred)


def _note(comp, text):
    if text not in comp.program.notes:
        comp.program.notes.append(text)


# ---- addresses -------------------------------------------------------------------------------------
def _ptx_addr(comp, call):
    base, off = comp.expr(call.args[0]), comp.expr(call.args[1])

    def f(g):
        b = base(g)
        o = np.asarray(off(g)).astype(np.int64)
        if np.asarray(b).dtype == np.uint32 or np.asarray(b).dtype == np.int32:
            return (np.asarray(b).astype(np.int64) + o).astype(np.uint32)[()]
        return (np.asarray(b).astype(np.uint64) + o.astype(np.uint64))[()]

    return f


HANDLERS["tirx.ptx.addr"] = _ptx_addr


def _addr_dtype(e) -> str:
    if type(e).__name__ == "Call" and getattr(e.op, "name", "") == "tirx.ptx.addr":
        return _addr_dtype(e.args[0])
    return comp_dtype(e)


def address(comp, e, space: str):
    """Closure giving the generic (64-bit) address of an address operand: a 32-bit operand of a
    shared space is a shared-window offset (``cvta``'s result), anything else a generic pointer."""
    fn = comp.expr(e)
    window = _addr_dtype(e) in ("uint32", "int32") and space.startswith("shared")

    def f(g):
        v = np.asarray(fn(g))
        if window:
            return (v.astype(np.uint64) & np.uint64(0xFFFFFFFF)) + np.uint64(M.SHARED_BASE)
        return v.astype(np.uint64)

    return f


def _uniform_lanes(v, L):
    v = np.asarray(v)
    return v if v.ndim else np.broadcast_to(v, (L,))


def to_register(bits: np.ndarray, mem_dt: np.dtype, reg_dt: np.dtype, signed: bool) -> np.ndarray:
    """Memory value(s) of ``mem_dt`` into a register of ``reg_dt`` (PTX's relaxed type rules: same
    size reinterprets the bits, a wider register is sign- or zero-extended, a narrower one truncated)."""
    v = np.asarray(bits, mem_dt)
    if mem_dt == reg_dt:
        return v
    if mem_dt.itemsize == reg_dt.itemsize:
        return v.view(reg_dt)
    if mem_dt.kind == "f" or reg_dt.kind == "f" and reg_dt.itemsize != mem_dt.itemsize:
        return v.astype(reg_dt)
    u = v.view(_UINT[mem_dt.itemsize])
    if reg_dt.itemsize > mem_dt.itemsize:
        w = (
            u.view(_SINT[mem_dt.itemsize]).astype(_SINT[reg_dt.itemsize])
            if signed
            else u.astype(_UINT[reg_dt.itemsize])
        )
        return w.view(reg_dt)
    return u.astype(_UINT[reg_dt.itemsize]).view(reg_dt)


def from_register(v, reg_dt: np.dtype, mem_dt: np.dtype) -> np.ndarray:
    v = np.asarray(v).astype(reg_dt, copy=False)
    if reg_dt == mem_dt:
        return v
    if reg_dt.itemsize == mem_dt.itemsize:
        return v.view(mem_dt)
    if reg_dt.kind == "f" or mem_dt.kind == "f":
        return v.astype(mem_dt)
    u = v.view(_UINT[reg_dt.itemsize]).astype(_UINT[mem_dt.itemsize])
    return u.view(mem_dt)


def _mem_dt(comp, ptx, what):
    t = ptx.mods.get("type", "")
    if t not in _MEM_TYPES:
        return None
    return M.np_dtype(_MEM_TYPES[t])


def _dest_stores(comp, dests, key):
    """Per destination operand (a buffer element), a store of lane ``k`` of the value kept in
    ``g.slots[key]``."""
    stores = []
    for k, d in enumerate(dests):
        if d is None:
            stores.append(None)
            continue
        if type(d).__name__ != "TensorLoad":
            return None
        dt = M.np_dtype(comp.buffer_info(d.source)["dtype"])
        stores.append(comp.store(d.source, list(d.indices), lambda g, k=k: g.slots[key][k]))
        del dt
    return stores


def _guard(comp, ptx, fn):
    """Run ``fn`` only for lanes whose ``@p`` predicate holds."""
    if ptx.pred is None:
        return fn
    p = comp.expr(ptx.pred)

    def guarded(g):
        pv = np.broadcast_to(np.not_equal(p(g), 0), (g.L,))
        outer = g.mask
        m = pv if outer is None else (outer & pv)
        if not m.any():
            return np.int32(0)
        g.mask = None if m.all() else m
        try:
            return fn(g)
        finally:
            g.mask = outer

    return guarded


def _weak(ptx) -> bool:
    """A weak ``ld``/``st`` (no ``.relaxed``/``.acquire``/``.release``/``.volatile``): a strong access is no data race
    between lanes, so only weak ones are checked as plain accesses."""
    return (ptx.mods.get("sem") or "") in ("", "weak")


def _ld_st(comp, call, what, hints):
    """(decoded call, element dtype, space, address closure) of ``ld``/``st``; or the refusal
    (a closure) where the element type is not modelled."""
    ptx = decode(call)
    dt = _mem_dt(comp, ptx, what)
    if dt is None:
        return comp.not_emulated(f"{call.op.name}.{ptx.mods.get('type')}", "ld/st of 128-bit (b128) values")
    if any(ptx.mods.get(k) for k in hints):
        _note(comp, _ORDER_NOTE)
    space = ptx.mods.get("space", "")
    return ptx, dt, space, address(comp, ptx.one("addr"), space)


def _ld(comp, call):
    ops = _ld_st(comp, call, "ld", ("sem", "scope", "cop", "nc", "l1ev", "l2ev", "cache", "prefetch"))
    if not isinstance(ops, tuple):
        return ops
    ptx, dt, space, addr = ops
    name = call.op.name
    dests = ptx.ops["d"]
    n = len(dests)
    key = ("ptx.ld", call.__chandle__())
    stores = _dest_stores(comp, dests, key)
    if stores is None:
        return comp.not_emulated(name, "a destination that is not a buffer element")
    reg_dts = [M.np_dtype(comp.buffer_info(d.source)["dtype"]) if d is not None else dt for d in dests]
    signed = ptx.mods.get("type", "").startswith("s")
    line = comp.line
    prog = comp.program
    info = {"name": f"ld.{space or 'generic'} address", "dtype": str(dt)}
    elems = np.arange(n)[None, :] if n > 1 else np.int64(0)
    weak = _weak(ptx)
    acquire = ptx.mods.get("sem") == "acquire"

    def f(g):
        if acquire:  # the lane's later accesses are ordered after what the release it reads published
            warp_synced(g, whole_warps=True)
        base = addr(g)
        e = np.broadcast_to(elems, (g.L, n)) if n > 1 else elems
        v = np.asarray(prog.mem_read(g, base if np.ndim(base) else base[()], e, 0, dt, line, info, plain=weak))
        if n > 1:
            v = np.broadcast_to(v, (g.L, n)) if v.ndim < 2 or v.shape[0] != g.L else v
            g.slots[key] = [to_register(v[:, k], dt, reg_dts[k], signed) for k in range(n)]
        else:
            g.slots[key] = [to_register(v, dt, reg_dts[0], signed)]
        for st in stores:
            if st is not None:
                st(g)
        return np.int32(0)

    return _guard(comp, ptx, f)


def _st(comp, call):
    ops = _ld_st(comp, call, "st", ("sem", "scope", "cop", "l1ev", "l2ev", "cache"))
    if not isinstance(ops, tuple):
        return ops
    ptx, dt, space, addr = ops
    name = call.op.name
    vals = ptx.ops["value"]
    lanes = [k for k, v in enumerate(vals) if v is not None]
    fns = [comp.expr(vals[k]) for k in lanes]
    reg_dts = [M.np_dtype(comp_dtype(vals[k])) for k in lanes]
    line = comp.line
    prog = comp.program
    info = {"name": f"st.{space or 'generic'} address", "dtype": str(dt)}
    single = len(vals) == 1
    weak = _weak(ptx)

    idx = np.asarray(lanes, np.int64)[None, :]

    def f(g):
        base = addr(g)
        base = base if np.ndim(base) else base[()]
        cols = [np.broadcast_to(from_register(fn(g), rd, dt), (g.L,)) for fn, rd in zip(fns, reg_dts)]
        if single:
            prog.mem_write(g, base, np.int64(0), 0, dt, cols[0], line, info, plain=weak)
        else:
            prog.mem_write(
                g,
                base,
                np.broadcast_to(idx, (g.L, idx.shape[1])),
                0,
                dt,
                np.stack(cols, axis=1),
                line,
                info,
                plain=weak,
            )
        return np.int32(0)

    return _guard(comp, ptx, f)


def _ldg(comp, call):
    """``T.cuda.ldg(ptr, dtype)`` (``__ldg``: a load through the read-only cache) and its vector
    form ``T.cuda.ldg(ptr, dtype, dst=(p0, p1, ..), vec="v2"/"v4")``, which writes each element
    through its own destination pointer."""
    args = list(call.args)
    if len(args) <= 2:
        addr = comp.expr(args[0])
        dt = M.np_dtype(_str(args[1]) if len(args) > 1 else comp_dtype(call))
        line, prog = comp.line, comp.program
        info = {"name": "ldg pointer", "dtype": str(dt)}
        return lambda g: prog.mem_read(g, addr(g), np.int64(0), 0, dt, line, info)
    *dsts, addr_e, dtype, vec, _count = args
    dt = M.np_dtype(_str(dtype))
    n = int(_str(vec)[1:]) if _str(vec) else 1
    addr = comp.expr(addr_e)
    key = ("ldg", call.__chandle__())
    line, prog = comp.line, comp.program
    info = {"name": "ldg pointer", "dtype": str(dt)}
    dinfo = {"name": "ldg destination", "dtype": str(dt)}
    writes = []
    for k, d in enumerate(dsts):
        load = d.args[0] if type(d).__name__ == "Call" and getattr(d.op, "name", "") == "tirx.address_of" else None
        if type(load).__name__ == "TensorLoad":  # &reg[i] (also of a register): store into that element
            st = comp.store(load.source, list(load.indices), lambda g, k=k: g.slots[key][:, k])
            writes.append(lambda g, st=st: st(g))
        else:
            dp = comp.expr(d)
            writes.append(
                lambda g, dp=dp, k=k: prog.mem_write(
                    g, np.broadcast_to(dp(g), (g.L,)), np.int64(0), 0, dt, g.slots[key][:, k], line, dinfo
                )
            )
    elems = np.arange(n)[None, :]

    def f(g):
        a = np.broadcast_to(addr(g), (g.L,))
        g.slots[key] = np.broadcast_to(
            np.asarray(prog.mem_read(g, a, np.broadcast_to(elems, (g.L, n)), 0, dt, line, info)), (g.L, n)
        )
        for w in writes:
            w(g)
        return np.int32(0)

    return f


HANDLERS["tirx.cuda.ldg"] = _ldg


def _loop_exit(which):
    def build(comp, call):
        from txlab.emulator.interpreter import _leave

        return _leave(which)

    return build


HANDLERS["tirx.break_loop"] = _loop_exit(0)  # break / continue (txlab.emulator.interpreter)
HANDLERS["tirx.continue_loop"] = _loop_exit(1)

for _n in ("ld", "ld_vec", "ld_vec256", "ldu", "ldu_vec"):
    HANDLERS[f"tirx.ptx.{_n}"] = _ld
for _n in ("st", "st_vec", "st_vec256"):
    HANDLERS[f"tirx.ptx.{_n}"] = _st


# ---- red / atom ----------------------------------------------------------------------------------
def _red_atom(comp, call):
    from txlab.emulator.atomics import apply_atomic, element_of

    ptx = decode(call)
    op = ptx.mods.get("op", "")
    t = ptx.mods.get("type", "")
    if t not in _MEM_TYPES or op not in ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec"):
        return comp.not_emulated(f"{call.op.name}.{op}.{t}")
    dt = M.np_dtype(_MEM_TYPES[t].replace("uint", "int") if t.startswith("s") else _MEM_TYPES[t])
    space = ptx.mods.get("space", "")
    addr = address(comp, ptx.one("addr"), space)
    target = element_of(comp, ptx.one("addr"))  # address_of(buf[i]): bounds-checked against buf
    if op == "cas":
        vals = [comp.expr(ptx.one("compare")), comp.expr(ptx.one("value"))]
    else:
        vals = [comp.expr(ptx.one("value"))]
    dests = ptx.ops.get("d")
    key = ("ptx.atom", call.__chandle__())
    stores = _dest_stores(comp, dests, key) if dests and dests[0] is not None else []
    line = comp.line
    prog = comp.program
    acquire = comp.polling

    def f(g):
        a = np.broadcast_to(addr(g), (g.L,))
        vs = [np.broadcast_to(np.asarray(v(g)), (g.L,)) for v in vals]
        old = apply_atomic(g, prog, a, vs, op, dt, line, acquire, target)
        g.slots[key] = [old]
        for st in stores or ():
            st(g)
        return np.int32(0)

    return _guard(comp, ptx, f)


for _n in ("red", "atom", "atom_cas", "atom_exch", "atom_bitbucket", "atom_cas_bitbucket", "atom_exch_bitbucket"):
    HANDLERS[f"tirx.ptx.{_n}"] = _red_atom


# ---- cp.async (non-bulk) -------------------------------------------------------------------------
def async_groups(g, name: str) -> dict:
    """The asynchronous operations ``name`` (``cp.async``, ``wgmma``) of group ``g``: ``open``
    (issued since the last commit) and ``groups`` (committed, oldest first)."""
    st = g.slots.get(name)
    if st is None:
        st = g.slots[name] = {"open": [], "groups": []}
    return st


def commit_groups(g, name: str) -> None:
    """``commit_group``: close the open group of ``name``."""
    st = async_groups(g, name)
    st["groups"].append(st["open"])
    st["open"] = []


def complete_groups(g, name: str, keep: int, perform) -> None:
    """``wait_group keep``: ``perform(g, op)`` every committed op but the newest ``keep`` groups'."""
    st = async_groups(g, name)
    while len(st["groups"]) > keep:
        for op in st["groups"].pop(0):
            perform(g, op)


def _cp_state(g):
    return async_groups(g, "cp.async")


def _cp_async(comp, call):
    ptx = decode(call)
    name = call.op.name
    dst = address(comp, ptx.one("dst_mem"), "shared")
    src = address(comp, ptx.one("src_mem"), "global")
    size_e = ptx.one("cp_size")
    if not hasattr(size_e, "value"):
        return comp.not_emulated(name, "cp.async with a cp-size that is not a constant")
    cp_size = int(size_e.value)
    src_size = comp.expr(ptx.one("src_size")) if "src_size" in ptx.ops else None
    ignore = comp.expr(ptx.one("ignore_src")) if "ignore_src" in ptx.ops else None
    line = comp.line
    prog = comp.program
    u8 = np.dtype(np.uint8)
    if "cg" in name and cp_size != 16:
        return comp.not_emulated(name, f"cp.async.cg of {cp_size} bytes (the ISA allows only 16)")

    def issue(g):
        act = g.active().copy()
        d = np.broadcast_to(dst(g), (g.L,)).copy()
        s = np.broadcast_to(src(g), (g.L,)).copy()
        n = np.full(g.L, cp_size, np.int64)
        if src_size is not None:
            n = np.minimum(np.broadcast_to(np.asarray(src_size(g)).astype(np.int64), (g.L,)), cp_size)
        if ignore is not None:
            n = np.where(np.broadcast_to(np.not_equal(ignore(g), 0), (g.L,)), 0, n)
        token = prog.cp_issued(g, d, cp_size, line, dst_info) if act.any() else None
        _cp_state(g)["open"].append((act, d, s, n.copy(), token))
        return np.int32(0)

    issue_info = {"name": "cp.async source", "dtype": "uint8"}
    dst_info = {"name": "cp.async destination", "dtype": "uint8"}

    def perform(g, rec):
        act, d, s, n, token = rec
        prog.cp_landed(g, token)
        outer = g.mask
        g.mask = act if not act.all() else None
        try:
            elems = np.arange(cp_size)[None, :]
            data = np.zeros((g.L, cp_size), np.uint8)
            # only the first src-size bytes are read (the rest may lie past the source's end)
            for k in np.unique(n[act & (n > 0)]):
                has = act & (n == k)
                g.mask = has if not has.all() else None
                v = np.asarray(prog.mem_read(g, s, elems[:, :k], 0, u8, line, issue_info))
                data[has, :k] = np.broadcast_to(v, (g.L, int(k)))[has]
            g.mask = act if not act.all() else None
            prog.mem_write(g, d, elems, 0, u8, data, line, dst_info, plain=True)
        finally:
            g.mask = outer

    _PERFORM[call.__chandle__()] = perform
    key = call.__chandle__()

    def issue_rec(g):
        issue(g)
        _cp_state(g)["open"][-1] += (key,)
        return np.int32(0)

    return _guard(comp, ptx, issue_rec)


_PERFORM: dict = {}


def _complete(g, keep: int):
    complete_groups(g, "cp.async", keep, lambda g, rec: _PERFORM[rec[5]](g, rec[:5]))
    g.cta.progress += 1


def _cp_commit(comp, call):
    def f(g):
        commit_groups(g, "cp.async")
        return np.int32(0)

    return f


def _cp_wait(comp, call):
    ptx = decode(call)
    grp = ptx.one("group") if ptx is not None and "group" in ptx.ops else None
    if grp is not None and not hasattr(grp, "value"):
        return comp.not_emulated(call.op.name, "cp.async.wait_group with a non-constant group count")
    keep = int(grp.value) if grp is not None else 0
    wait_all = call.op.name.endswith("wait_all")

    def f(g):
        if wait_all:  # cp.async.wait_all: commit the open copies, then wait for all
            commit_groups(g, "cp.async")
        _complete(g, keep)
        return np.int32(0)

    return f


def _cp_mbarrier_arrive(comp, call):
    """``cp.async.mbarrier.arrive[.noinc]``: an arrive-on the mbarrier, triggered once the thread's earlier cp.asyncs
    complete. Here they complete now (every copy of the group still pending: the latest moment the hardware may
    perform one is its completion's, and no later access of the kernel may rely on an earlier one); ``.noinc``
    counts the arrival among the mbarrier's expected ones, without it the arrive-on cancels the pending count it
    adds, so the phase is left as it was."""
    from txlab.emulator.ops import _active_count, _uniform_addr

    ptx = decode(call)
    addr = comp.expr(ptx.one("addr"))
    noinc = bool(ptx.mods.get("noinc"))
    line = comp.line

    def f(g):
        commit_groups(g, "cp.async")
        _complete(g, 0)
        if noinc:
            cta, mb = sync.mbarrier_at(g, _uniform_addr(g, addr(g), line, "cp.async.mbarrier.arrive"), line)
            sync.mb_arrive(cta, mb, g, 1, _active_count(g), line)
        return np.int32(0)

    return _guard(comp, ptx, f)


HANDLERS["tirx.ptx.cp_async_mbarrier_arrive"] = _cp_mbarrier_arrive

for _n in (
    "cp_async_ca",
    "cp_async_cg",
    "cp_async_ca_src_size",
    "cp_async_cg_src_size",
    "cp_async_ca_ignore_src",
    "cp_async_cg_ignore_src",
):
    HANDLERS[f"tirx.ptx.{_n}"] = _cp_async
HANDLERS["tirx.ptx.cp_async_commit_group"] = _cp_commit
HANDLERS["tirx.ptx.cp_async_wait_group"] = _cp_wait
HANDLERS["tirx.ptx.cp_async_wait_all"] = _cp_wait


# ---- TVM's device helpers (T.cuda.func_call by name) -------------------------------------------
def _pointee_size(comp, e) -> int | None:
    if (
        type(e).__name__ == "Call"
        and getattr(e.op, "name", "") == "tirx.address_of"
        and type(e.args[0]).__name__ == "TensorLoad"
    ):
        return M.np_dtype(comp.buffer_info(e.args[0].source)["dtype"]).itemsize
    if (
        type(e).__name__ == "Call"
        and getattr(e.op, "name", "") == "tirx.cuda.func_call"
        and _str(e.args[0]) == "tvm_builtin_pointer_offset"
    ):
        return _pointee_size(comp, e.args[1])
    ty = getattr(e, "ty", None)
    el = getattr(ty, "element_type", None)
    d = getattr(el, "dtype", None)
    if d is not None and str(d) not in ("void", "handle"):
        return M.np_dtype(str(d)).itemsize
    return None


@extern("tvm_builtin_pointer_offset")
def _pointer_offset(comp, call, args):
    """``template <T> T* tvm_builtin_pointer_offset(T* ptr, int offset) { return ptr + offset; }``:
    pointer arithmetic in elements of the pointee type."""
    ptr, off = args
    size = _pointee_size(comp, ptr)
    if size is None:
        return comp.not_emulated("tvm_builtin_pointer_offset", "a pointer whose element type is not known")
    p, o = comp.expr(ptr), comp.expr(off)

    def f(g):
        base = np.asarray(p(g)).astype(np.uint64)
        step = np.asarray(o(g)).astype(np.int64) * size
        return (base.astype(np.int64) + step).astype(np.uint64)[()]

    return f


_CAST2 = {("float32", "float16"), ("float16", "float32"), ("bfloat16", "float32"), ("float32", "bfloat16")}


def _cast_vec2(src_dt, dst_dt):
    """``tvm_builtin_cast_<src>x2_<dst>x2(void* dst, void* src)``: ``__float22half2_rn``,
    ``__half22float2``, ``__bfloat1622float2``, ``__float22bfloat162_rn`` of one packed pair
    (round to nearest even; the widening ones are exact). NaNs: the canonical NaN, except ``__bfloat1622float2``
    (16-bit shifts: every bit kept; txlab.emulator.nan)."""

    def build(comp, call, args):
        s, d = M.np_dtype(src_dt), M.np_dtype(dst_dt)
        _, post = cast_rule(s, d, True)
        line = comp.line
        prog = comp.program
        elems = np.arange(2)[None, :]
        dloc, sloc = (_local_pair(comp, a) for a in args)  # Tx.cast of thread-local tiles: register pairs
        dptr = None if dloc else comp.expr(args[0])
        sptr = None if sloc else comp.expr(args[1])

        def f(g):
            if sloc:
                v = sloc[0](g, s)
            else:
                v = prog.mem_read(g, sptr(g), elems, 0, s, line, {"name": "cast source", "dtype": src_dt})
            out = np.asarray(v).astype(np.float32).astype(d)
            if post is not None:
                out = post(out, v)
            if dloc:
                dloc[1](g, d, out)
            else:
                prog.mem_write(g, dptr(g), elems, 0, d, out, line, {"name": "cast destination", "dtype": dst_dt})
            return np.int32(0)

        return f

    return build


def _local_pair(comp, e):
    """For ``&local[i]`` (a pointer into a thread-local buffer, which the emulator keeps per lane, not in an
    address space): ``(read(g, dtype) -> (lanes, 2), write(g, dtype, values))`` of elements ``i, i + 1`` of each
    lane's buffer; None for any other pointer."""
    if type(e).__name__ != "Call" or getattr(e.op, "name", "") != "tirx.address_of":
        return None
    load = e.args[0]
    if type(load).__name__ != "TensorLoad":
        return None
    bufvar = load.source
    if not comp.buffer_info(bufvar)["scope"].startswith("local"):
        return None
    idx = comp._flat_index(bufvar, list(load.indices))

    def cols(g):
        i = np.broadcast_to(np.asarray(idx(g)).astype(np.int64), (g.L,))
        return i[:, None] + np.arange(2)[None, :]

    def view(g, dt):
        arr = g.env[bufvar]
        return arr if arr.dtype == dt else arr.view(dt)

    def read(g, dt):
        return np.take_along_axis(view(g, dt), cols(g), axis=1)

    def write(g, dt, values):
        arr, c = view(g, dt), cols(g)
        rows = np.broadcast_to(np.arange(g.L)[:, None], c.shape)
        v = np.broadcast_to(np.asarray(values).astype(dt), c.shape)
        if g.mask is not None:
            rows, c, v = rows[g.mask], c[g.mask], v[g.mask]
        arr[rows, c] = v

    return read, write


for _s, _d in _CAST2:
    EXTERNS[f"tvm_builtin_cast_{_s}x2_{_d}x2"] = _cast_vec2(_s, _d)
