"""Indices past their own axis of a multi-dimensional buffer, at the user's line.

TIRx flattens buffers while lowering (``LowerTIRx`` views an argument ``X: (4, 100)`` as ``X[400]``, ``FlattenBuffer``
the rest), so the device IR the emulator runs indexes ``X[r * 100 + c + 1]``: an off-by-one along the last axis
(``c + 1 == 100``) is element ``(r + 1) * 100``, the next row's first, inside ``X``, and the bounds checks of the whole
buffer (:mod:`txlab.emulator.program`) see nothing, as a GPU does not. The kernel as written (the user's PrimFunc,
before lowering) still has the per-axis indices; each load and store keeps its span -- file, line and columns
(:func:`txlab.ir.spans.sites`) -- through lowering, and its index variables are the same objects in the device IR. So
a lowered plain load or store whose span is one the user wrote also evaluates that access's indices, in the same
lanes' environment, and reports the active lanes whose index of an inner axis lies outside it while the element is
inside the buffer (an element past the whole buffer is the whole-buffer checks' finding, under the same finding key:
one finding per line, buffer and access).

Checked only where an index past its axis can only be a mistake (elsewhere nothing is said):

- the user wrote the access in the kernel's file, outside ``address_of`` (a tile primitive's, a library macro's or
  any other access TVM made has TVM's frames in its span; an address one past a row is a C idiom);
- the buffer has two or more axes of static extents, stored row-major and compact: a kernel argument, an
  ``alloc_shared``/``alloc_local`` buffer, or a ``match_buffer``/``decl_buffer`` over a kernel argument's own pointer,
  with no strides, no element offset and the trivial layout (no swizzle, no TMA, wgmma or register-fragment layout);
  views of other buffers' data and aliases are not checked, nor 1-D buffers (a 1-D shape over a flat pointer says
  nothing of the allocation);
- every index is arithmetic of variables the lowered kernel still binds (no loads or calls; an unrolled or vectorized
  loop's variable is gone, and so is the check);
- at run time, the flat index the indices give row-major equals the lowered access's own, lane by lane (else what was
  matched is not this access, and nothing is reported).
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
from txlab.errors import NotEmulatedError
from txlab.ir import spans

#: expression nodes an index may be made of (pure integer arithmetic of variables)
_PURE = frozenset(
    (
        "Var",
        "IntImm",
        "Add",
        "Sub",
        "Mul",
        "FloorDiv",
        "FloorMod",
        "Div",
        "Mod",
        "Min",
        "Max",
        "Cast",
        "Ramp",
        "Broadcast",
    )
)
#: calls whose buffer-element argument is an address, not an access
_ADDRESS_OPS = ("tirx.address_of", "tirx.tvm_access_ptr")
_AMBIGUOUS = "ambiguous"


class Access:
    """A load or store the user wrote on a checked buffer: its name, shape, per-axis indices and their variables."""

    __slots__ = ("name", "shape", "indices", "vars", "itemsize")

    def __init__(self, name, shape, indices, variables, itemsize):
        self.name = name
        self.shape = shape
        self.indices = indices
        self.vars = variables
        self.itemsize = itemsize


def user_accesses(mod, user_file) -> dict:
    """``{(sites, write): Access}`` of the plain loads and stores the kernel's functions in ``mod`` (as parsed, before
    lowering) make in ``user_file`` on buffers whose axes are checked (see the module docstring)."""
    from txlab import ir

    out: dict = {}
    if mod is None or user_file is None:
        return out
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        params = list(getattr(func, "params", ()) or ())
        checked = {p: _row_major_shape(p) for p in params}
        handles = {p for p in params if checked[p] is None}
        addressed: set = set()
        for n in ir.walk(body):  # (pre-order: a buffer's definition, and an address_of, come before its loads)
            t = type(n).__name__
            if t == "AllocBuffer":
                checked[n.buffer] = _row_major_shape(n.buffer)
                continue
            if t == "DeclBuffer":  # a match_buffer/decl_buffer: only over a kernel argument's own pointer
                data = getattr(n, "data", None)
                own = type(data).__name__ == "Var" and data in handles
                checked[n.buffer] = _row_major_shape(n.buffer) if own else None
                continue
            if t == "Call" and getattr(n.op, "name", "") in _ADDRESS_OPS:
                loads = (x for a in n.args for x in ir.walk(a) if type(x).__name__ in ("TensorLoad", "BufferLoad"))
                addressed.update(x.__chandle__() for x in loads)
                continue
            if t == "BufferStore":
                buf, write = n.buffer, True
            elif t in ("TensorLoad", "BufferLoad"):
                if n.__chandle__() in addressed:
                    continue
                buf, write = (n.source if t == "TensorLoad" else n.buffer), False
            else:
                continue
            shape = checked.get(buf)
            indices = list(n.indices)
            if shape is None or len(indices) != len(shape):
                continue
            where = spans.sites(getattr(n, "span", None))
            if not where or any(s[0] != user_file for s in where):
                continue
            variables = _pure_vars(indices)
            if variables is None:
                continue
            key = (where, write)
            acc = Access(str(buf.name), shape, indices, variables, M.np_dtype(str(buf.ty.dtype)).itemsize)
            prev = out.get(key)
            if prev is not None and (prev is _AMBIGUOUS or not _same(prev, acc)):
                out[key] = _AMBIGUOUS  # two accesses at one place (nothing tells them apart): not checked
            else:
                out[key] = acc
    return {k: v for k, v in out.items() if v is not _AMBIGUOUS}


def _same(a: Access, b: Access) -> bool:
    return a.name == b.name and a.shape == b.shape and all(x.same_as(y) for x, y in zip(a.indices, b.indices))


def _row_major_shape(bufvar) -> tuple | None:
    """The static shape of buffer variable ``bufvar`` where it has 2+ axes stored row-major and compact (no strides,
    element offset 0, the trivial layout); else None."""
    ty = getattr(bufvar, "ty", None)
    if ty is None or not hasattr(ty, "shape") or not hasattr(ty, "layout"):
        return None
    try:
        shape = tuple(int(s.value) for s in ty.shape)
        if len(ty.strides) or int(ty.elem_offset.value) != 0:
            return None
    except (AttributeError, TypeError, ValueError):
        return None
    if len(shape) < 2 or min(shape) <= 0 or M.lanes_of(str(ty.dtype)) != 1:
        return None
    layout = ty.layout
    if layout is None:
        return shape
    if type(layout).__name__ != "TileLayout" or len(layout.replica) or len(dict(layout.offset)):
        return None
    shard = list(layout.shard)
    if len(shard) != len(shape):
        return None
    stride = 1
    try:
        for it, ext in zip(reversed(shard), reversed(shape)):
            if int(it.extent) != ext or int(it.stride) != stride or str(it.axis.name) != "m":
                return None
            stride *= ext
    except (AttributeError, TypeError, ValueError):
        return None
    return shape


def _pure_vars(indices):
    """The variables of ``indices`` where they are pure integer arithmetic of variables; else None."""
    import tvm

    from txlab import ir

    out = set()
    for e in indices:
        for x in ir.walk(e):
            if not isinstance(x, tvm.ir.Expr):
                continue
            t = type(x).__name__
            if t not in _PURE:
                return None
            if t == "Var":
                out.add(x)
    return out


def _bound_vars(comp) -> set:
    """The variables the lowered kernel binds (parameters, lets, loop variables, thread indices): computed once."""
    got = comp.__dict__.get("_axis_bound")
    if got is not None:
        return got
    from txlab import ir

    func = getattr(comp.program, "func", None)
    got = set(getattr(func, "params", ()) or ())
    nodes = getattr(comp.program, "_keep_alive", None)  # (the program's walk of the kernel's body, if it made one)
    for n in nodes if nodes is not None else ir.walk(getattr(func, "body", None)):
        t = type(n).__name__
        if t in ("Bind", "Let"):
            got.add(n.var)
        elif t == "For":
            got.add(n.loop_var)
        elif t == "AttrStmt" and n.attr_key == "thread_extent":
            got.add(n.node.var)
    comp.__dict__["_axis_bound"] = got
    return got


def checker(comp, node, info, write: bool):
    """A check ``check(g, flat)`` for the lowered load or store ``node`` of buffer ``info`` (its flat index ``flat``,
    as the access computes it), where the user wrote it on a checked buffer; else None."""
    table = getattr(comp.program, "axes", None)
    if not table or node is None:
        return None
    acc = table.get((spans.sites(getattr(node, "span", None)), bool(write)))
    if acc is None or M.np_dtype(info["dtype"]).itemsize != acc.itemsize:
        return None
    if not acc.vars <= _bound_vars(comp):
        return None
    fns = [comp.expr(i) for i in acc.indices]
    shape = acc.shape
    strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]
    inner = list(zip(fns[1:], shape[1:]))
    prog = comp.program
    line = comp.line
    what = "write" if write else "read"

    def check(g, flat):
        try:
            if all(_in_range(f(g), n) for f, n in inner):
                return
            vals = [np.asarray(f(g)) for f in fns]
        except (NotEmulatedError, KeyError):
            return
        _report(prog, g, acc, vals, strides, flat, info, line, what)

    return check


def _in_range(v, n: int) -> bool:
    """Whether every entry of index ``v`` (a number, or per lane) lies in ``[0, n)``: one reduction."""
    v = np.asarray(v)
    if v.ndim == 0:
        return 0 <= int(v) < n
    if v.dtype.kind == "i":
        return v.size == 0 or int(v.view(np.dtype(f"u{v.dtype.itemsize}")).max()) < n
    return bool(((v >= 0) & (v < n)).all())


def _grid(v, L: int, w: int) -> np.ndarray:
    """Index ``v`` (a number, per lane ``(L,)``, or per lane and element ``(L or 1, w)``) as ``(L, w)`` int64."""
    v = np.asarray(v).astype(np.int64)
    if v.ndim == 1:
        v = v[:, None]
    return np.broadcast_to(v, (L, w))


def _report(prog, g, acc, vals, strides, flat, info, line, what) -> None:
    shape = acc.shape
    w = max([np.shape(v)[1] if np.ndim(v) == 2 else 1 for v in [*vals, flat]])
    L = g.L
    grids = [_grid(v, L, w) for v in vals]
    out = np.zeros((L, w), bool)
    for v, n in zip(grids[1:], shape[1:]):
        out |= (v < 0) | (v >= n)
    user_flat = sum(v * s for v, s in zip(grids, strides))
    total = int(np.prod(shape))
    bad = out & (user_flat == _grid(flat, L, w)) & (user_flat >= 0) & (user_flat < total)
    if g.mask is not None:
        bad &= g.mask[:, None]
    if not bad.any():
        return
    threads, cta_idx = prog._offenders(g, bad)
    r, c = (int(x) for x in np.argwhere(bad)[0])
    idx = [int(v[r, c]) for v in grids]
    ax = next(k for k in range(1, len(shape)) if not 0 <= idx[k] < shape[k])
    elem = int(user_flat[r, c])
    touched = [int(x) for x in np.unravel_index(elem, shape)]
    name = acc.name
    side = "past the end" if idx[ax] >= shape[ax] else "before the start"
    verb = "reads" if what == "read" else "writes"
    prog.finding(
        "out_of_bounds",
        f"out-of-bounds {what} of {name}: {name}[{', '.join(map(str, idx))}] by thread "
        f"{int(threads[0]) if threads.size else '?'} of CTA {cta_idx}: index {idx[ax]} of axis {ax} is {side} of that "
        f"axis, which holds {shape[ax]} (0..{shape[ax] - 1}; {name} is {tuple(shape)}), so it {verb} "
        f"{name}[{', '.join(map(str, touched))}] (element {elem} of {total}) instead, silently: the element is inside "
        f"{name}, so neither a GPU nor a bounds check of the whole buffer notices. Guard the index, or size axis {ax} "
        "of the buffer for it",
        line=line,
        cta=cta_idx,
        threads=threads,
        index=user_flat[bad],
        buffer=info["name"],
        count=int(np.count_nonzero(bad)),
        key=("out_of_bounds", line, info["name"], what),
    )
