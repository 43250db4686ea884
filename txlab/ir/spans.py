"""Which user line: the one reading of TVM spans (and of generated CUDA lines) in txlab.

TVM's parser gives every statement a ``Span``; a statement inlined from a macro or a library class
(``tvm.backend.cuda.lang``) carries a ``SequentialSpan``, its inline stack, the user's call first.
The *user file* is the file the kernel is written in (never a file inside TVM's package); the
*user line* of a statement is the last frame of the leading run of frames in that file (a macro
written in the same file resolves to its body's line), and the frames after it name the library
code it was inlined from.

A tile primitive (``Tx.cta.copy``, ``Tx.gemm``, ...) is replaced by its implementation's body while
lowering (``TilePrimitiveDispatch``), whose spans are TVM's implementation only: the call site is
lost. :func:`with_call_site` puts it back (txlab.build runs it on each dispatch), so the lowered
body's frames are ``[user call, implementation...]`` like any other inlined code.

Everything that asks "which user line" (the line map, the emulator, simt, banks, pools, the
sanitizer and diagnostics) asks this module; ``tests/test_spans.py`` checks nobody else walks spans.
"""

from __future__ import annotations

import os

Frame = tuple  # (file, line)


def frames(span) -> list[Frame]:
    """The inline stack of ``span`` as ``(file, line)``, outermost (the user's call) first."""
    if span is None:
        return []
    inner = getattr(span, "spans", None)
    if inner is not None:  # SequentialSpan
        out = []
        for s in inner:
            out.extend(frames(s))
        return out
    name = getattr(span, "source_name", None)
    fname = getattr(name, "name", None) if name is not None else None
    if not fname:
        return []
    try:
        return [(str(fname), int(span.line))]
    except (TypeError, ValueError):
        return []


def sites(span) -> tuple:
    """The source ranges of ``span``'s inline stack, outermost first: ``(file, line, column, end_line,
    end_column)`` per frame. Where :func:`frames` names a line, this names the expression on it (the two loads
    of ``X[r, c + 1] - X[r, c]`` differ by their columns); lowering keeps a load's or store's span, so it finds
    the access as written again in the lowered IR. Empty for a node without a span."""
    if span is None:
        return ()
    inner = getattr(span, "spans", None)
    if inner is not None:  # SequentialSpan
        return tuple(s for sub in inner for s in sites(sub))
    name = getattr(span, "source_name", None)
    fname = getattr(name, "name", None) if name is not None else None
    if not fname:
        return ()
    try:
        return ((str(fname), int(span.line), int(span.column), int(span.end_line), int(span.end_column)),)
    except (TypeError, ValueError):
        return ()


def is_library(path: str) -> bool:
    """True for a file inside TVM's own Python package (an implementation, never the user's)."""
    p = path.replace(os.sep, "/")
    return "/site-packages/tvm/" in p or "/python/tvm/" in p or "/dist-packages/tvm/" in p


def split(span, user_file: str | None = None) -> tuple[Frame | None, list[Frame]]:
    """``((user file, user line) or None, library frames after it)``. Without ``user_file`` the user
    file is the first frame's file when that is not TVM's. The user line is the last frame of the
    leading run in the user file; a span that does not start in the user file has no user line."""
    fr = frames(span)
    if not fr:
        return None, []
    if user_file is None:
        if is_library(fr[0][0]):
            return None, fr
        user_file = fr[0][0]
    k = 0
    while k < len(fr) and fr[k][0] == user_file:
        k += 1
    if k == 0:
        return None, fr
    return fr[k - 1], fr[k:]


def user_frame(span, user_file: str | None = None) -> Frame | None:
    """``(file, line)`` where the user wrote the statement of ``span`` (None if nowhere)."""
    return split(span, user_file)[0]


def user_line(span, user_file: str | None = None) -> int | None:
    """The user line of ``span`` (see :func:`split`); None when it has none."""
    fr = split(span, user_file)[0]
    return fr[1] if fr is not None and fr[1] > 0 else None


def first_user_line(node, user_file: str | None = None, *, statements_only: bool = False) -> int | None:
    """The user line of the first node (pre-order) under ``node`` that has one, or of the first
    statement with ``statements_only``: what TVM made while lowering carries no span, what it
    holds may."""
    import tvm

    from txlab.ir.walk import walk

    for n in walk(node):
        if statements_only and not isinstance(n, tvm.tirx.Stmt):
            continue
        span = getattr(n, "span", None)
        line = user_line(span, user_file) if span is not None else None
        if line:
            return line
    return None


def user_file_of(mod) -> str | None:
    """The file the kernel is written in: the most common outermost non-TVM frame of its statements'
    spans. A module that went through TVM's lowering before txlab saw it keeps the user's file (its
    tile bodies' spans name TVM's implementation files, which never count)."""
    import tvm

    from txlab.ir.walk import walk

    counts: dict[str, int] = {}
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in walk(body):
            if isinstance(node, tvm.tirx.Stmt):
                fr = frames(node.span)
                if fr and not is_library(fr[0][0]):
                    counts[fr[0][0]] = counts.get(fr[0][0], 0) + 1
    return max(counts, key=counts.get) if counts else None


def user_lines_of(mod, user_file: str | None = None) -> set[int]:
    """Every line of ``user_file`` (default :func:`user_file_of`) that a frame of the module's nodes
    names: the kernel's own statements and the macros inlined into it, not the rest of the file
    (another kernel written beside it)."""
    from txlab.ir.walk import walk

    user_file = user_file or user_file_of(mod)
    out: set[int] = set()
    if user_file is None:
        return out
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in walk(body):
            out.update(line for f, line in frames(getattr(node, "span", None)) if f == user_file and line > 0)
    return out


def loop_header(loop, user_file: str | None = None):
    """``loop`` (a ``For``) with a span at the line its header is written on: TVM's passes leave a
    ``for j in T.serial(L[tx + 1] - L[tx])`` without one (its body and bound expressions keep
    theirs), so whatever the loop's bounds read would be put at the statement before it. The line is
    the first user line of its bound expressions (``L[tx + 1]``; a variable's span is where it was
    declared, never counted), else the ``for`` naming the loop variable written above the body's
    first line; the loop itself when it has a line or none is found. A shallow copy: only the span
    differs."""
    import tvm

    from txlab.ir.walk import walk

    if user_line(loop.span, user_file) is not None:
        return loop
    found = None
    for e in (loop.min, loop.extent, getattr(loop, "step", None)):
        for n in walk(e) if e is not None else ():
            if isinstance(n, tvm.ir.Expr) and not isinstance(n, tvm.tirx.Var):
                found = user_frame(getattr(n, "span", None), user_file)
                if found is not None and found[1] > 0:
                    break
                found = None
        if found is not None:
            break
    if found is None:
        found = _loop_header_by_text(loop, user_file)
    if found is None:
        return loop
    return _with_span(loop, tvm.ir.Span(tvm.ir.SourceName(found[0]), found[1], found[1], 0, 0))


def _loop_header_by_text(loop, user_file):
    """``(file, line)`` of the ``for`` that names ``loop``'s variable, above its body's first line
    (up to the enclosing ``def``), or None."""
    import linecache
    import re

    import tvm

    from txlab.ir.walk import walk

    body = None
    for n in walk(loop.body):
        if isinstance(n, tvm.tirx.Stmt):
            body = user_frame(n.span, user_file)
            if body is not None and body[1] > 0:
                break
            body = None
    if body is None:
        return None
    name = str(loop.loop_var.name)
    src = linecache.getlines(body[0])
    for ln in range(min(body[1] - 1, len(src)), 0, -1):
        text = src[ln - 1].split("#")[0]
        m = re.match(r"\s*(?:async\s+)?for\s+(.+?)\s+in\s", text)
        if m and name in re.split(r"[\s,()\[\]]+", m.group(1)):
            return body[0], ln
        if re.match(r"\s*(?:def\s|@)", text):
            return None
    return None


def with_call_site(stmt, call_span):
    """``stmt`` with ``call_span``'s frames put in front of every statement span inside it that does
    not already start with them (a tile primitive's lowered body, given the primitive's span). Only
    spans change: the statements are shallow copies, equal in everything else."""
    import tvm
    import tvm_ffi

    call = frames(call_span)
    if not call:
        return stmt
    n = len(call)
    head = list(call_span.spans) if hasattr(call_span, "spans") else [call_span]

    def fix(s):
        own = s.span
        if frames(own)[:n] == call:
            return s
        parts = head + ([own] if own is not None and frames(own) else [])
        return _with_span(s, tvm.ir.SequentialSpan(parts))

    return tvm_ffi.structural_map(stmt, [(tvm.tirx.Stmt, fix)])


def _with_span(node, span):
    from tvm_ffi import core

    copy = core._lookup_type_attr(type(node).__tvm_ffi_type_info__.type_index, "__ffi_shallow_copy__")
    if copy is None:  # a node type that cannot be copied keeps its span (its line is inherited)
        return node
    out = copy(node)
    type(out).span.set(out, span)
    return out


def user_line_of_cuda(cuda_source: str, table, cuda_line: int) -> int | None:
    """The user line of a line of generated CUDA, from a line table (``txlab.sourcemap.LineTable``:
    ``cuda_origin``, ``origins``, ``entry_line``). A kernel line before the first marker is the
    kernel's ``T.device_entry()`` line. A line inside one of TVM's helper functions (the preamble's
    ``tvm_builtin_*``) is the user line of the kernel line calling it, when every kernel line that
    calls it belongs to one user line; else None (which call is meant is unknown)."""
    import txlab.ir.cuda_text as cuda_text

    funcs = cuda_text.cuda_functions(cuda_source)
    here = cuda_text.function_at(funcs, cuda_line)
    if here is None:
        return None
    if here.is_kernel:
        return _table_user(table, cuda_line)
    users = {_table_user(table, cl) for cl in cuda_text.call_sites(cuda_source, funcs, here.name)}
    users.discard(None)
    return users.pop() if len(users) == 1 else None


def cuda_user_lines(cuda_source: str, table) -> dict[int, int]:
    """``{CUDA line: user line}`` for every kernel-body line that has one."""
    import txlab.ir.cuda_text as cuda_text

    out = {}
    for lo, hi in cuda_text.kernel_lines(cuda_text.cuda_functions(cuda_source)):
        for cl in range(lo, hi + 1):
            u = _table_user(table, cl)
            if u is not None:
                out[cl] = u
    return out


def _table_user(table, cuda_line: int) -> int | None:
    per = table.cuda_origin
    oid = per[cuda_line - 1] if 0 < cuda_line <= len(per) else None
    if oid is None:
        return table.entry_line
    return table.origins[oid]["user_line"] or table.entry_line


def tirx_alias(source: str) -> str:
    """How ``source`` spells the TIRx script module: ``"Tx"`` where it writes ``Tx.`` more often than ``T.``
    (``from tvm.script import tirx as Tx``), else ``"T"``; messages name the user's own spelling."""
    import re

    tx = len(re.findall(r"\bTx\.", source or ""))
    t = len(re.findall(r"\bT\.", source or ""))
    return "Tx" if tx > t else "T"
