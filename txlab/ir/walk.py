"""Reading TVM IR generically: walk any TVM object graph through its FFI field reflection.

TVM 0.27's wheel has no Python ``post_order_visit`` for TIRx statements; every IR node does
describe its fields (``__tvm_ffi_type_info__``), so one walker serves all node kinds.
"""

from __future__ import annotations

from typing import Iterator

from txlab.errors import InputError


def _fields(type_cls) -> list[str]:
    names: list[str] = []
    info = getattr(type_cls, "__tvm_ffi_type_info__", None)
    chain = []
    while info is not None:
        chain.append(info)
        info = info.parent_type_info
    for info in reversed(chain):
        for field in info.fields:
            if field.name not in ("span",) and field.name not in names:
                names.append(field.name)
    return names


_FIELD_CACHE: dict[type, list[str]] = {}


def children(node) -> Iterator:
    """Direct children of an IR node (fields, array items, map keys and values)."""
    import tvm_ffi

    if isinstance(node, (str, bytes, int, float, bool)) or node is None:
        return
    if isinstance(node, (tvm_ffi.Array, list, tuple)):
        yield from node
        return
    if isinstance(node, (tvm_ffi.Map, dict)):
        for key, value in node.items():
            yield key
            yield value
        return
    cls = type(node)
    names = _FIELD_CACHE.get(cls)
    if names is None:
        names = _FIELD_CACHE[cls] = _fields(cls)
    for name in names:
        try:
            yield getattr(node, name)
        except Exception:  # noqa: BLE001 - a field the Python class does not expose
            continue


def walk(root, *, skip=None) -> Iterator:
    """Every node reachable from ``root`` in pre-order, each visited once (DAG-safe)."""
    import tvm_ffi

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, tvm_ffi.Object):
            key = node.__chandle__() if hasattr(node, "__chandle__") else id(node)
            if key in seen:
                continue
            seen.add(key)
        yield node
        if skip is not None and skip(node):
            continue
        kids = list(children(node))
        stack.extend(reversed(kids))


def calls(root, op_name: str) -> list:
    """Every ``Call`` in ``root`` whose operator is named ``op_name`` (e.g. 'tirx.call_ffi_kernel')."""
    import tvm

    found = []
    for node in walk(root):
        if isinstance(node, tvm.ir.Call):
            op = node.op
            if getattr(op, "name", None) == op_name:
                found.append(node)
    return found


def functions(mod) -> list[tuple[str, object]]:
    """(name, function) pairs of an IRModule, in name order."""
    return sorted(((gv.name_hint, f) for gv, f in mod.functions_items()), key=lambda x: x[0])


def expr_value(expr):
    """An int for a constant expression, else its TVMScript text (a symbolic launch dimension)."""
    if isinstance(expr, int):
        return expr
    value = getattr(expr, "value", None)  # IntImm and friends carry their constant here
    if isinstance(value, int):
        return value
    return str(expr)


def prod(values):
    """The product of ``values`` if every one is an int, else None (a symbolic extent)."""
    out = 1
    for v in values:
        if not isinstance(v, int):
            return None
        out *= v
    return out


def as_module(kernel, name: str | None = None, *, what: str = "txlab.compile"):
    """``(IRModule, entry name)`` for a ``@T.prim_func``, a ``tvm.IRModule`` or a compiled kernel
    (anything with ``.ir_module``, e.g. :class:`txlab.Compiled`). The entry is ``name``, else the
    function's ``global_symbol``, else ``main`` (or the module's first function). ``what`` names
    the caller in the TypeError for anything else."""
    import tvm

    if hasattr(kernel, "ir_module") and not isinstance(kernel, (tvm.IRModule, tvm.tirx.PrimFunc)):
        mod = kernel.ir_module
        if callable(mod) and not isinstance(mod, tvm.IRModule):
            mod = mod()
        own = getattr(kernel, "name", None) or name
        funcs = kernel_names(mod)
        if own is not None and own not in funcs and len(funcs) > 1:
            raise AmbiguousEntry(
                f"{own} holds {len(funcs)} kernels ({', '.join(funcs)}): pass one of them, e.g. {own}.{funcs[0]}"
            )
        return mod, own or _entry_of(mod)
    if isinstance(kernel, tvm.tirx.PrimFunc):
        symbol = name or (kernel.attrs.get("global_symbol") if kernel.attrs is not None else None) or "main"
        return tvm.IRModule({str(symbol): kernel}), str(symbol)
    if isinstance(kernel, tvm.IRModule):
        funcs = kernel_names(kernel)
        if name is None or name in funcs:
            return kernel, name or _entry_of(kernel)
        if len(funcs) == 1:  # the module's one kernel, whatever the module is called (``Mod`` in a cell)
            return kernel, funcs[0]
        raise AmbiguousEntry(
            f"this IRModule has no function {name!r}; it holds {len(funcs)} kernels ({', '.join(funcs)}): say which, e.g. "
            f"txlab.compile(mod, name={funcs[0]!r}) (a %%tirx cell binds the module as a set of kernels: "
            f"Mod.{funcs[0]}(...))"
        )
    raise TypeError(
        f"{what} takes a @T.prim_func, a tvm.IRModule or a txlab.Compiled, not {type(kernel).__name__}; "
        "decorate the kernel with @T.prim_func (from tvm.script import tirx as T)"
    )


def kernel_names(mod) -> list[str]:
    """The names of the PrimFuncs of IRModule ``mod`` (its kernels), in the module's order."""
    import tvm

    return [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]


def _callees(func) -> set:
    """Names of the module functions ``func`` refers to (calls through a GlobalVar)."""
    import tvm

    return {node.name_hint for node in walk(func) if isinstance(node, tvm.ir.GlobalVar)}


def entry_kernels(mod) -> list:
    """The kernels of IRModule ``mod`` a caller launches: its PrimFuncs, less those another function of the module
    calls (a ``@T.prim_func(private=True)`` helper), in the module's order."""
    funcs = kernel_names(mod)
    called = set()
    for gv, func in mod.functions_items():
        called |= _callees(func) - {gv.name_hint}
    return [f for f in funcs if f not in called] or funcs


def entry_module(mod, entry: str):
    """IRModule ``mod`` cut to its function ``entry`` and what that calls, directly or not: one kernel of an
    ``@I.ir_module`` built on its own, so its build (resources, launch, SASS) holds that kernel only."""
    import tvm

    by_name = {gv.name_hint: (gv, func) for gv, func in mod.functions_items()}
    keep, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name in keep or name not in by_name:
            continue
        keep.add(name)
        todo.extend(_callees(by_name[name][1]))
    if len(keep) == len(by_name):
        return mod
    kept = {gv: func for name, (gv, func) in by_name.items() if name in keep}
    return tvm.IRModule(kept, attrs=mod.attrs, global_infos=getattr(mod, "global_infos", None))


class AmbiguousEntry(InputError):
    """An IRModule of several kernels given without the name of one (:func:`as_module`): an
    :class:`txlab.errors.InputError` (so a ``ValueError`` too), shown as its message."""


def _entry_of(mod) -> str:
    names = [gv.name_hint for gv, _ in mod.functions_items()]
    return "main" if "main" in names else names[0]
