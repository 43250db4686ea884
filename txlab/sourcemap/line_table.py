"""TVMScript → CUDA: the line table computed at compile time (kept in the cache, small JSON).

Codegen prints no spans, so the *final* device IR (after every pass, just before codegen) is
marked: before each statement whose origin differs from the one in effect, an
``Evaluate(call_extern("__txlab_line", id))``. Codegen prints each marker as a line of its own;
they are stripped and what is left must equal TVM's unmarked CUDA, character for character (the
passes never see a marker, so the compiled code cannot change); else lines are aligned (difflib).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from txlab.ir import spans
from txlab.sourcemap.origins import Origin, branch_lines, origin_of_span, parsed_facts, user_file_of

MARKER = "__txlab_line"
_MARKER_LINE = re.compile(r"^\s*__txlab_line\((\d+)\);\s*$")


class _Marker:
    """Inserts origin markers into a device function body (a rebuilt copy; the input is kept)."""

    def __init__(self, user_file: str, entry: Origin | None, names: dict, branches: dict | None = None):
        self.branches = branches or {}  # first line of an if's body -> the if's line
        self.work_lines: set[int] = set()
        self.user_file = user_file
        self.entry = entry
        self.names = names
        self.origins: list[Origin] = []
        self._ids: dict[Origin, int] = {}
        self.current: int | None = None

    def _id(self, origin: Origin) -> int:
        if origin not in self._ids:
            self._ids[origin] = len(self.origins)
            self.origins.append(origin)
        return self._ids[origin]

    def _marker(self, oid: int):
        import tvm

        return tvm.tirx.Evaluate(tvm.tirx.call_extern("void", MARKER, tvm.tirx.IntImm("int32", oid)))

    def own(self, stmt, ctx: Origin | None) -> Origin | None:
        from tvm.tirx import stmt as S

        o = origin_of_span(stmt.span, self.user_file)
        if o is not None and o.user_line is None:
            # library-only span: inside the user line in effect (a tile primitive's, when known)
            if ctx is not None and ctx.kind == "op":
                return Origin(ctx.user_line, o.library, o.library_loc, "op")
            return Origin(ctx.user_line if ctx else None, o.library, o.library_loc, "inherited") if ctx else o
        if o is None and isinstance(stmt, S.Bind) and str(stmt.var.name) in self.names:
            return self.names[str(stmt.var.name)]
        if o is None and isinstance(stmt, S.For) and str(stmt.loop_var.name) in self.names:
            return self.names[str(stmt.loop_var.name)]
        if o is None and isinstance(stmt, S.For):
            # a loop a lowering pass made (a tile primitive's element loop) has no span, its body does: the
            # header is the body's line (the primitive's call), not the enclosing one (often T.device_entry())
            line = spans.first_user_line(stmt.body, self.user_file, statements_only=True)
            if line is not None and (ctx is None or line != ctx.user_line):
                return Origin(line, kind="inherited")
        if o is None and isinstance(stmt, S.IfThenElse) and self.branches:
            line = self.branches.get(spans.first_user_line(stmt.then_case, self.user_file, statements_only=True))
            if line is not None:
                return Origin(line)
        if o is None and ctx is not None:
            return ctx if ctx.kind != "span" else Origin(ctx.user_line, ctx.library, ctx.library_loc, "inherited")
        return o

    def visit(self, stmt, ctx: Origin | None) -> list:
        from tvm.tirx import stmt as S

        if isinstance(stmt, S.SeqStmt):
            seq = list(stmt.seq)
            out = []
            for s in seq:
                out.extend(self.visit(s, ctx))
            return out
        o = self.own(stmt, ctx) or ctx
        if (
            o is not None
            and o.user_line is not None
            and o.kind in ("span", "op", "name")
            and isinstance(stmt, (S.BufferStore, S.Evaluate, S.IfThenElse, S.While, S.For))
        ):
            self.work_lines.add(o.user_line)
        out = []
        if o is not None:
            oid = self._id(o)
            if oid != self.current:
                out.append(self._marker(oid))
                self.current = oid
        # an inherited origin does not pass on "inherited" to children with their own spans
        inner = o
        if isinstance(stmt, S.For):
            stmt = S.For(
                stmt.loop_var,
                stmt.min,
                stmt.extent,
                stmt.kind,
                self.block(stmt.body, inner),
                stmt.thread_binding,
                stmt.annotations,
                stmt.step,
                stmt.span,
            )
        elif isinstance(stmt, S.While):
            stmt = S.While(stmt.condition, self.block(stmt.body, inner), stmt.span)
        elif isinstance(stmt, S.IfThenElse):
            then = self.block(stmt.then_case, inner)
            els = None
            if stmt.else_case is not None:
                els = self.block(stmt.else_case, inner)
            stmt = S.IfThenElse(stmt.condition, then, els, stmt.span)
        elif isinstance(stmt, S.AttrStmt):
            stmt = S.AttrStmt(stmt.node, stmt.attr_key, stmt.value, self.block(stmt.body, inner), stmt.span)
        out.append(stmt)
        return out

    def block(self, stmt, ctx):
        from tvm.tirx import stmt as S

        items = self.visit(stmt, ctx)
        return items[0] if len(items) == 1 else S.SeqStmt(items)


def mark_device_mods(device_mods: dict, source_mod, user_file: str):
    """Device modules with origin markers, and the origin table the marker ids index."""
    import tvm

    entry, names = parsed_facts(source_mod, user_file)
    marker = _Marker(user_file, entry, names, branch_lines(source_mod, user_file))
    out = {}
    for target, dmod in device_mods.items():
        funcs = {}
        for gv, func in dmod.functions_items():
            if isinstance(func, tvm.tirx.PrimFunc):
                marker.current = None
                func = func.with_body(marker.block(func.body, entry))
            funcs[gv] = func
        new = tvm.IRModule(funcs, attrs=dmod.attrs) if dmod.attrs is not None else tvm.IRModule(funcs)
        out[target] = new
    return out, marker.origins, sorted(marker.work_lines)


def strip_markers(marked_cuda: str) -> tuple[str, list[int | None]]:
    """(CUDA without markers, origin id in effect at each of its lines (0-based list))."""
    lines_out, origin_of = [], []
    current = None
    for line in marked_cuda.splitlines(keepends=True):
        m = _MARKER_LINE.match(line)
        if m:
            current = int(m.group(1))
            continue
        if line.startswith('extern "C" __global__') or (line.startswith("__global__")):
            current = None  # a new kernel: its prologue is before its first marker
        lines_out.append(line)
        origin_of.append(current)
    return "".join(lines_out), origin_of


# The line table computed at compile time and kept in the cache (small JSON)
@dataclass
class LineTable:
    user_file: str
    user_source: list[str]  # the user's file/cell lines (1-based: [0] is line 1)
    origins: list[dict]  # Origin dicts indexed by id
    cuda_origin: list[int | None]  # per CUDA line (0-based), the origin id
    exact: bool = True  # stripped marked CUDA == TVM's CUDA
    entry_line: int | None = None
    work_lines: list = field(default_factory=list)  # user lines with executable device statements

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LineTable":
        return cls(**d)

    def for_source(self, source_mod) -> "LineTable":
        """This table for ``source_mod``'s own file and text. A cache entry is shared by every
        source with the same IR and line numbering (its key), which may differ in comments and
        blank text: the panes must show the text the user compiled, not the first one cached."""
        import dataclasses
        import linecache

        user_file = user_file_of(source_mod)
        lines = [l.rstrip("\n") for l in linecache.getlines(user_file)] if user_file else []
        if not lines:
            return self
        return dataclasses.replace(self, user_file=user_file, user_source=lines)


def build_line_table(source_mod, device_mods: dict, cuda_plain: str, codegen) -> LineTable | None:
    """Mark the device IR, run ``codegen`` on it and align the result with ``cuda_plain``."""
    import difflib
    import linecache

    user_file = user_file_of(source_mod)
    if user_file is None:
        return None
    marked_mods, origins, work = mark_device_mods(device_mods, source_mod, user_file)
    marked = codegen(marked_mods)
    stripped, per_line = strip_markers(marked)
    exact = stripped == cuda_plain
    if not exact:  # align line by line (a codegen that reacted to a marker: never seen so far)
        plain_lines = cuda_plain.splitlines()
        got = stripped.splitlines()
        mapped: list[int | None] = [None] * len(plain_lines)
        sm = difflib.SequenceMatcher(a=got, b=plain_lines, autojunk=False)
        for a0, b0, n in sm.get_matching_blocks():
            for k in range(n):
                mapped[b0 + k] = per_line[a0 + k]
        per_line = mapped
    entry, _ = parsed_facts(source_mod, user_file)
    src = [l.rstrip("\n") for l in linecache.getlines(user_file)]
    return LineTable(
        user_file=user_file,
        user_source=src,
        origins=[asdict(o) for o in origins],
        cuda_origin=per_line,
        exact=exact,
        entry_line=entry.user_line if entry else None,
        work_lines=work,
    )
