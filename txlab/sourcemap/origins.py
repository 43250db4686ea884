"""Where a statement of the kernel's IR came from: its span's inline stack, read as the user's
line and the library function (a ``tvm.backend.cuda.lang`` method, a macro) it was inlined from.

TVM's parser gives every statement a span, and a ``SequentialSpan`` for statements inlined from
macros and library classes (the user's call first, the library's lines after). The user line is
the last frame in the kernel's own file; the next frame names the library function.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass

from txlab.ir import spans


# TVMScript → CUDA: origins of statements, markers in the final device IR
@dataclass(frozen=True)
class Origin:
    """Where a statement of the final device IR came from."""

    user_line: int | None
    library: str | None = None  # e.g. "PipelineBarrier.wait" (TVM library / other file)
    library_loc: str | None = None  # e.g. "tvm/backend/cuda/lang/pipeline.py:212"
    kind: str = "span"  # span | inherited | entry | name


def _site_root() -> str:
    import tvm

    return os.path.dirname(os.path.dirname(os.path.abspath(tvm.__file__)))


def _short_path(path: str) -> str:
    try:
        root = _site_root()
    except Exception:  # noqa: BLE001 - tvm missing
        return path
    if path.startswith(root + os.sep):
        return path[len(root) + 1 :]
    return path


@functools.lru_cache(maxsize=256)
def _functions_of(path: str) -> tuple:
    """(start, end, qualname) of every function in a Python file, innermost last."""
    import linecache

    text = "".join(linecache.getlines(path))
    if not text:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            return ()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ()
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(out)


def function_at(path: str, line: int) -> str | None:
    """The qualified name of the innermost function of ``path`` containing ``line``."""
    best = None
    for start, end, name in _functions_of(path):
        if start <= line <= end and (best is None or start >= best[0]):
            best = (start, name)
    return best[1] if best else None


def origin_of_span(span, user_file: str) -> Origin | None:
    """The user's line of a span (:func:`txlab.ir.spans.split`) and the library function the
    statement was inlined from; for a library-only span, the library function alone; None
    without frames."""
    user, lib = spans.split(span, user_file)
    if user is None:
        if lib:  # a library-only span (e.g. a pass that lowers through TVMScript helpers)
            fn, line = lib[-1]
            return Origin(None, function_at(fn, line), f"{_short_path(fn)}:{line}", "span")
        return None
    if not lib:
        return Origin(user[1])
    fn, line = lib[0]
    return Origin(user[1], function_at(fn, line), f"{_short_path(fn)}:{line}")


#: the kernel's own file (:func:`txlab.ir.spans.user_file_of`)
user_file_of = spans.user_file_of


def parsed_facts(mod, user_file: str) -> tuple[Origin | None, dict]:
    """(origin of T.device_entry(), {scope-id / loop variable name: origin}) from the parsed IR."""
    return _parsed_facts_cached(mod, user_file)


_FACTS: dict = {}


def _parsed_facts_cached(mod, user_file: str):
    import linecache

    from txlab import ir
    import tvm
    from tvm.tirx import stmt as S

    key = (id(mod), user_file)
    hit = _FACTS.get(key)
    if hit is not None and hit[0] is mod:
        return hit[1]
    entry, names, first = None, {}, None
    bodies = []  # (line, node) of every statement with a user line
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if not isinstance(node, tvm.tirx.Stmt):
                continue
            o = origin_of_span(node.span, user_file)
            line = o.user_line if o is not None else None
            if isinstance(node, S.AttrStmt) and str(node.attr_key) == "tirx.device_entry":
                if entry is None and line is not None:
                    entry = line
                continue
            if line is not None and not isinstance(node, S.SeqStmt):
                bodies.append(line)
            if line is None:
                continue
            if isinstance(node, S.ScopeIdDefStmt):
                for v in getattr(node.__getattribute__("def"), "def_ids", ()):
                    names.setdefault(str(v.name), Origin(line, kind="name"))
            elif isinstance(node, S.For):
                names.setdefault(str(node.loop_var.name), Origin(line, kind="name"))
    # the T.device_entry() call itself: its statement carries the def line; the text says where.
    # Statements inlined from a macro or helper written above the kernel in the same file have
    # their body's lines: the search starts from the kernel's own first statement after the def.
    after = [l for l in bodies if entry is None or l > entry]
    first = min(after or bodies) if bodies else None
    src = linecache.getlines(user_file)
    if first is not None:
        for ln in range(min(first, len(src)), 0, -1):
            text = src[ln - 1].split("#")[0]
            if "device_entry(" in text:
                entry = ln
                break
            if text.lstrip().startswith("def ") and entry is not None:
                break
    if entry is None:
        entry = first
    out = (Origin(entry, kind="entry") if entry is not None else None, names)
    _FACTS.clear()
    _FACTS[key] = (mod, out)
    return out


def branch_lines(mod, user_file: str) -> dict[int, int]:
    """``{first line of a branch's body: the line of its if}`` from the parsed IR. TVM's passes drop
    the span of an ``if`` (a guard ``if i < n:`` reaches codegen without one) while its body keeps
    theirs: the body's first line finds the ``if`` the user wrote."""
    from tvm.tirx import stmt as S

    from txlab import ir

    out: dict[int, int] = {}
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if not isinstance(node, S.IfThenElse):
                continue
            o = origin_of_span(node.span, user_file)
            first = spans.first_user_line(node.then_case, user_file, statements_only=True)
            if o is not None and o.user_line is not None and first is not None and first != o.user_line:
                out.setdefault(first, o.user_line)
    return out


def span_signature(source_mod) -> str:
    """A digest of the user-line numbering of the kernel's statements (part of the cache key:
    the same IR written at other lines must not be served another source's line table)."""
    import hashlib

    from txlab import ir
    import tvm

    h = hashlib.sha256(b"linemap-5")  # bumped when the map's reading of spans changes
    for _, func in source_mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if isinstance(node, tvm.tirx.Stmt):
                for _fn, line in spans.frames(node.span):
                    h.update(f"{line},".encode())
                h.update(b";")
    return h.hexdigest()[:16]
