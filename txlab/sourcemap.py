"""The line map: every line of the user's kernel source ↔ the CUDA C, PTX and SASS it became.

    m = compiled.source_map
    m.lines()                 # user lines that have SASS
    m.sass_for(37)            # ['SHFL.BFLY PT, R5, R2, 0x10, 0x1f', 'FADD.FTZ R5, R2, R5', ...]
    m.line_of_sass(0x90)      # 37 (a SASS byte offset, as ncu / compute-sanitizer report it)
    m.instructions[0]         # SassInstruction(kernel, offset, text, cuda_line, user_line, library)

How it is built (DESIGN.md, "line map"):

* **TVMScript → CUDA.** TVM's parser gives every statement a span, and a ``SequentialSpan`` for
  statements inlined from macros and ``tvm.backend.cuda.lang`` classes (the inline stack: the
  user's call first, the library's lines after). Most spans survive the tirx pipeline. TVM's CUDA
  codegen prints no spans, so txlab marks the *final* device IR (after every pass, just before
  codegen): before each statement whose origin differs from the one in effect, an
  ``Evaluate(call_extern("__txlab_line", id))``. Codegen prints each marker as a line of its own;
  txlab strips them and checks that what is left equals TVM's unmarked CUDA, character for
  character — the passes never see a marker, so the compiled code cannot change.
* **CUDA → PTX → SASS.** nvcc ``-lineinfo`` (``.loc`` in PTX, ``.debug_line`` in the cubin) and
  ``nvdisasm -gi`` (line info with the inline chain). A SASS instruction belongs to the outermost
  frame in the kernel's own function; the CUDA helper it was inlined from (e.g. TVM's
  ``tvm_builtin_cuda_warp_reduce_sum_32``) is recorded as its ``cuda_helper``.

Approximate where TVM's passes drop spans: statements they create (common-subexpression
``Bind``\\ s, hoisted index arithmetic, launch-thread set-up) inherit the origin of the statement
around them, or the kernel's ``T.device_entry()`` line at the top of the kernel (``kind`` "entry");
and where nvcc/ptxas move an instruction, ``-lineinfo`` says which CUDA line it came from, which is
what this map reports.
"""
from __future__ import annotations

import ast
import bisect
import functools
import os
import re
from dataclasses import asdict, dataclass, field

MARKER = "__txlab_line"
_MARKER_LINE = re.compile(r"^\s*__txlab_line\((\d+)\);\s*$")


# =============================================================================================
# TVMScript → CUDA: origins of statements, markers in the final device IR
@dataclass(frozen=True)
class Origin:
    """Where a statement of the final device IR came from."""

    user_line: int | None
    library: str | None = None        # e.g. "PipelineBarrier.wait" (TVM library / other file)
    library_loc: str | None = None    # e.g. "tvm/backend/cuda/lang/pipeline.py:212"
    kind: str = "span"                # span | inherited | entry | name


def _site_root() -> str:
    import tvm

    return os.path.dirname(os.path.dirname(os.path.abspath(tvm.__file__)))


def _short_path(path: str) -> str:
    try:
        root = _site_root()
    except Exception:  # pragma: no cover - tvm missing
        return path
    if path.startswith(root + os.sep):
        return path[len(root) + 1:]
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


def _frames(span) -> list[tuple[str, int]]:
    """The inline stack of a span as (file, line), outermost first."""
    import tvm

    if span is None:
        return []
    if isinstance(span, tvm.ir.SequentialSpan):
        out = []
        for s in span.spans:
            out.extend(_frames(s))
        return out
    name = getattr(span, "source_name", None)
    if name is None:
        return []
    return [(str(name.name), int(span.line))]


def origin_of_span(span, user_file: str) -> Origin | None:
    """The user's line of a span (the last frame in the user's file before any library frame),
    and the library function the statement was inlined from; None without a user frame."""
    frames = _frames(span)
    user_line, lib = None, None
    for i, (fn, line) in enumerate(frames):
        if fn == user_file:
            user_line = line
            continue
        if user_line is not None:
            lib = (fn, line, frames[i:])
        break
    if user_line is None:
        if frames:  # a library-only span (e.g. a pass that lowers through TVMScript helpers)
            fn, line = frames[-1]
            return Origin(None, function_at(fn, line), f"{_short_path(fn)}:{line}", "span")
        return None
    if lib is None:
        return Origin(user_line)
    fn, line, _ = lib
    return Origin(user_line, function_at(fn, line), f"{_short_path(fn)}:{line}")


def user_file_of(mod) -> str | None:
    """The file the kernel is written in: the outermost frame of its statements' spans."""
    from txlab import ir
    import tvm

    counts: dict[str, int] = {}
    for _, func in mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if isinstance(node, tvm.tirx.Stmt):
                fr = _frames(node.span)
                if fr:
                    counts[fr[0][0]] = counts.get(fr[0][0], 0) + 1
    return max(counts, key=counts.get) if counts else None


def _parsed_facts(mod, user_file: str) -> tuple[Origin | None, dict]:
    """(origin of T.device_entry(), {scope-id variable name: origin}) from the parsed IR."""
    from txlab import ir
    import tvm
    from tvm.tirx import stmt as S

    return _parsed_facts_cached(mod, user_file)[:2]


def _parsed_ops(mod, user_file: str) -> list[int]:
    """User lines of tile primitives (Tx.copy_async, Tx.gemm, ...) in the parsed IR: their
    lowering replaces them with statements whose spans are TVM's implementation only."""
    return _parsed_facts_cached(mod, user_file)[2]


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
    entry, names, ops, first = None, {}, set(), None
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
                first = line if first is None else min(first, line)
            if line is None:
                continue
            if isinstance(node, S.ScopeIdDefStmt):
                for v in getattr(node.__getattribute__("def"), "def_ids", ()):
                    names.setdefault(str(v.name), Origin(line, kind="name"))
            elif isinstance(node, S.For):
                names.setdefault(str(node.loop_var.name), Origin(line, kind="name"))
            elif isinstance(node, S.TilePrimitiveCall):
                ops.add(line)
    # the T.device_entry() call itself: its statement carries the def line; the text says where
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
    out = (Origin(entry, kind="entry") if entry is not None else None, names, sorted(ops))
    _FACTS.clear()
    _FACTS[key] = (mod, out)
    return out


class _Marker:
    """Inserts origin markers into a device function body (a rebuilt copy; the input is kept)."""

    def __init__(self, user_file: str, entry: Origin | None, names: dict, ops: list | None = None):
        self.ops = ops or []
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

    def _op_hints(self, seq, ctx) -> list:
        """For runs of statements that only TVM's own code has spans for (a lowered tile primitive),
        the user line of the primitive they replace: the tile-primitive lines between the user
        lines before and after the run, split evenly when the run is several same-sized
        lowerings (two Tx.copy_async in a row)."""
        hints: list = [None] * len(seq)
        if not self.ops:
            return hints
        raw = [origin_of_span(s.span, self.user_file) for s in seq]
        user = [r is not None and r.user_line is not None for r in raw]
        lib = [r is not None and r.user_line is None for r in raw]
        i = 0
        prev = ctx.user_line if ctx is not None else None
        while i < len(seq):
            if user[i]:
                prev = raw[i].user_line
                i += 1
                continue
            j = i
            while j < len(seq) and not user[j]:
                j += 1
            run = list(range(i, j))
            libs = [k for k in run if lib[k]]
            if libs:
                nxt = raw[j].user_line if j < len(seq) else None
                lo = prev if prev is not None else -1
                cands = [l for l in self.ops if l > lo and (nxt is None or l < nxt)]
                if nxt is None:
                    cands = cands[:1]
                if cands:
                    k = len(cands) if len(libs) % len(cands) == 0 else 1
                    size = len(libs) // k
                    group_of = {idx: cands[min(n // size, k - 1)] for n, idx in enumerate(libs)}
                    for idx in run:
                        later = [g for g in libs if g >= idx]
                        line = group_of[later[0]] if later else group_of[libs[-1]]
                        r = raw[idx]
                        hints[idx] = Origin(line, r.library if r else None, r.library_loc if r else None, "op")
            i = j
        return hints

    def own(self, stmt, ctx: Origin | None) -> Origin | None:
        from tvm.tirx import stmt as S

        o = origin_of_span(stmt.span, self.user_file)
        if o is not None and o.user_line is None:
            # library-only span: inside the user line in effect (a tile primitive's, when known)
            if ctx is not None and ctx.kind == "op":
                return Origin(ctx.user_line, o.library, o.library_loc, "op")
            return Origin(ctx.user_line if ctx else None, o.library, o.library_loc,
                          "inherited") if ctx else o
        if o is None and isinstance(stmt, S.Bind) and str(stmt.var.name) in self.names:
            return self.names[str(stmt.var.name)]
        if o is None and isinstance(stmt, S.For) and str(stmt.loop_var.name) in self.names:
            return self.names[str(stmt.loop_var.name)]
        if o is None and ctx is not None:
            return ctx if ctx.kind != "span" else Origin(ctx.user_line, ctx.library, ctx.library_loc, "inherited")
        return o

    def visit(self, stmt, ctx: Origin | None) -> list:
        from tvm.tirx import stmt as S

        if isinstance(stmt, S.SeqStmt):
            seq = list(stmt.seq)
            out = []
            for s, hint in zip(seq, self._op_hints(seq, ctx)):
                out.extend(self.visit(s, hint or ctx))
            return out
        o = self.own(stmt, ctx) or ctx
        if o is not None and o.user_line is not None and o.kind in ("span", "op", "name") and \
                isinstance(stmt, (S.BufferStore, S.Evaluate, S.IfThenElse, S.While, S.For)):
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
            stmt = S.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, self.block(stmt.body, inner),
                         stmt.thread_binding, stmt.annotations, stmt.step, stmt.span)
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

    entry, names = _parsed_facts(source_mod, user_file)
    marker = _Marker(user_file, entry, names, _parsed_ops(source_mod, user_file))
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
    depth_fn = None
    for line in marked_cuda.splitlines(keepends=True):
        m = _MARKER_LINE.match(line)
        if m:
            current = int(m.group(1))
            continue
        if line.startswith("extern \"C\" __global__") or (line.startswith("__global__")):
            current = None  # a new kernel: its prologue is before its first marker
            depth_fn = True
        lines_out.append(line)
        origin_of.append(current)
    return "".join(lines_out), origin_of


# =============================================================================================
# The line table computed at compile time and kept in the cache (small JSON)
@dataclass
class LineTable:
    user_file: str
    user_source: list[str]           # the user's file/cell lines (1-based: [0] is line 1)
    origins: list[dict]              # Origin dicts indexed by id
    cuda_origin: list[int | None]    # per CUDA line (0-based), the origin id
    exact: bool = True               # stripped marked CUDA == TVM's CUDA
    entry_line: int | None = None
    work_lines: list = field(default_factory=list)  # user lines with executable device statements

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LineTable":
        return cls(**d)


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
    entry, _ = _parsed_facts(source_mod, user_file)
    src = [l.rstrip("\n") for l in linecache.getlines(user_file)]
    return LineTable(user_file=user_file, user_source=src,
                     origins=[asdict(o) for o in origins], cuda_origin=per_line, exact=exact,
                     entry_line=entry.user_line if entry else None, work_lines=work)


def span_signature(source_mod) -> str:
    """A digest of the user-line numbering of the kernel's statements (part of the cache key:
    the same IR written at other lines must not be served another source's line table)."""
    import hashlib

    from txlab import ir
    import tvm

    h = hashlib.sha256()
    for _, func in source_mod.functions_items():
        body = getattr(func, "body", None)
        if body is None:
            continue
        for node in ir.walk(body):
            if isinstance(node, tvm.tirx.Stmt):
                for _fn, line in _frames(node.span):
                    h.update(f"{line},".encode())
                h.update(b";")
    return h.hexdigest()[:16]


# =============================================================================================
# CUDA functions, PTX .loc, SASS with inline chains
_FUNC_HEAD = re.compile(r"^(?!\s)(?:.*\s)?(?:\*\s*)?(\w+)\s*\((?:[^;]*)\)\s*(?:const\s*)?\{?\s*$")


def cuda_functions(cuda: str) -> list[tuple[int, int, str, bool]]:
    """(first line, last line, name, is_kernel) of each function definition in CUDA C (1-based)."""
    lines = cuda.splitlines()
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FUNC_HEAD.match(line)
        if m and not line.startswith("#") and ("{" in line or (i + 1 < len(lines) and lines[i + 1].strip() == "{")):
            depth, j, started = 0, i, False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if "{" in lines[j]:
                    started = True
                if started and depth <= 0:
                    break
                j += 1
            out.append((i + 1, j + 1, m.group(1), "__global__" in line))
            i = j + 1
            continue
        i += 1
    return out


_FILE_DIR = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:,\s*function_name\s+[^,]+,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def ptx_cuda_lines(ptx: str, cuda_name: str = "kernel.cu") -> list[int | None]:
    """For each PTX line (0-based), the kernel.cu line it came from (outermost inline frame)."""
    files: dict[int, str] = {}
    for line in ptx.splitlines():
        m = _FILE_DIR.match(line)
        if m:
            files[int(m.group(1))] = m.group(2)
    cu = {k for k, v in files.items() if os.path.basename(v) == cuda_name}
    parent: dict[tuple, tuple] = {}
    out: list[int | None] = []
    current = None
    for line in ptx.splitlines():
        m = _LOC.match(line)
        if m:
            here = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if m.group(4):
                parent[here] = (int(m.group(4)), int(m.group(5)), int(m.group(6)))
            else:
                parent.pop(here, None)
            loc, seen = here, 0
            while loc in parent and seen < 64:
                loc, seen = parent[loc], seen + 1
            current = loc[1] if loc[0] in cu else None
            out.append(None)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", ".")) or stripped in ("{", "}") or \
                stripped.endswith(":") or stripped.startswith("$"):
            out.append(None if not stripped.startswith("$") else current)
            if stripped.startswith((".visible", ".entry", ".func")):
                current = None
            continue
        out.append(current)
    return out


_SASS_FRAME = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
_SASS_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_SASS_FUNC = re.compile(r"^\.text\.([\w$.]+):")


@dataclass
class SassInstruction:
    """One SASS instruction and where it came from."""

    index: int
    kernel: str
    offset: int
    text: str                      # e.g. "@P0 BRA `(.L_x_3)" (predicate kept, ';' dropped)
    opcode: str                    # e.g. "BRA" (predicate excluded, modifiers kept: "LDG.E.CONSTANT")
    cls: str                       # memory | tensor | barrier | control | alu
    cuda_line: int | None          # kernel.cu line (outermost frame in the kernel)
    user_line: int | None
    library: str | None = None     # TVM library function the statement was inlined from
    cuda_helper: str | None = None  # CUDA helper function (TVM's preamble) it was inlined from
    inline: list = field(default_factory=list)  # frames innermost first: ["kernel.cu:72", ...]
    sass_line: int = 0             # 1-based line in Compiled.sass
    padding: bool = False          # the end-of-kernel self-branch and NOPs (not the user's code)
    moved_from: int | None = None  # user line -lineinfo named, when txlab corrected it (see below)

    def to_dict(self) -> dict:
        return asdict(self)


_TENSOR = re.compile(r"^(HMMA|IMMA|DMMA|BMMA|HGMMA|IGMMA|QGMMA|BGMMA|UTC\w*MMA|UTCQMMA|UTCHMMA|OMMA|QMMA|GMMA)")
_MEMORY = re.compile(r"^(LD|ST|ATOM|RED|UTMA|UBLKCP|UBLK|UTMALDG|UTMASTG|UTMAPF|UTMACCTL|CCTL|SUST|SULD|SUATOM|SURED|TLD|TEX|TMML|TXD|TXQ|LDGSTS|LDGDEPBAR|MATCH|QSPC|UCGABAR_\w*|ULDC|LDC|LDSM|STSM|LDTRAM|UTCBAR|FENCE)")
_BARRIER = re.compile(r"^(BAR|SYNCS|MEMBAR|DEPBAR|ERRBAR|WARPSYNC|ARRIVES|CGAERRBAR|UCGABAR|WARPGROUP|NANOSLEEP|ELECT)")
_CONTROL = re.compile(r"^(BRA|BRX|JMP|JMX|EXIT|RET|CALL|BSSY|BSYNC|BREAK|BPT|KILL|YIELD|NOP|BMOV|WARPSYNC|ACQBULK|PREEXIT|ENDCOLLECTIVE|CALL\.\w+)")


def classify(opcode: str) -> str:
    """Instruction class: tensor (MMA), memory, barrier, control or alu."""
    op = opcode.split(".")[0]
    if _TENSOR.match(op):
        return "tensor"
    if _BARRIER.match(op):
        return "barrier"
    if _MEMORY.match(op):
        return "memory"
    if _CONTROL.match(op):
        return "control"
    return "alu"


def opcode_of(text: str) -> str:
    """The opcode with modifiers, predicate excluded: '@!P0 SYNCS.ARRIVE.TRANS64 ...' -> 'SYNCS.ARRIVE.TRANS64'."""
    t = re.sub(r"^@!?U?P[T0-9]+\s+", "", text.strip())
    return t.split()[0] if t else ""


def parse_sass_with_lines(text: str, cuda_name: str = "kernel.cu"):
    """(plain SASS text, [SassInstruction without user attribution]) from ``nvdisasm -c -gi``."""
    plain, instrs = [], []
    frames: list[tuple[str, int]] = []
    group_open = False
    kernel = ""
    for raw in text.splitlines():
        m = _SASS_FRAME.search(raw)
        if m and raw.lstrip().startswith("//##"):
            if not group_open:
                frames = []
                group_open = True
            frames.append((m.group(1), int(m.group(2))))
            continue
        group_open = False
        plain.append(raw)
        fm = _SASS_FUNC.match(raw)
        if fm:
            kernel = fm.group(1)
            frames = []
            continue
        im = _SASS_INSTR.match(raw)
        if not im:
            continue
        txt = im.group(2)
        op = opcode_of(txt)
        chain = [f"{os.path.basename(f)}:{l}" for f, l in frames]
        outer = frames[-1] if frames else None
        cuda_line = outer[1] if outer and os.path.basename(outer[0]) == cuda_name else None
        inner_cu = [l for f, l in frames if os.path.basename(f) == cuda_name]
        instrs.append(dict(kernel=kernel, offset=int(im.group(1), 16), text=txt, opcode=op,
                           cls=classify(op), cuda_line=cuda_line, inline=chain,
                           inner_cuda=inner_cu[:-1], sass_line=len(plain)))
    return "\n".join(plain) + ("\n" if text.endswith("\n") else ""), instrs


# =============================================================================================
class SourceMap:
    """User line ↔ CUDA lines ↔ PTX lines ↔ SASS instructions of one compiled kernel module.

    User line numbers are numbered like :attr:`txlab.CompileError.lineno`: lines of the file the
    kernel is defined in, or of the ``%%tirx`` cell."""

    def __init__(self, table: LineTable, cuda_source: str, ptx: str, sass_lines_text: str):
        self.table = table
        self.user_file = table.user_file
        self.user_source = table.user_source
        self.exact = table.exact
        self.origins = [Origin(**o) for o in table.origins]
        self._cuda_lines = cuda_source.splitlines()
        self._ptx_lines = ptx.splitlines()
        cuda_origin = list(table.cuda_origin) + [None] * max(0, len(self._cuda_lines) - len(table.cuda_origin))
        funcs = cuda_functions(cuda_source)
        self._funcs = funcs
        starts = [f[0] for f in funcs]

        def func_of(cl):
            i = bisect.bisect_right(starts, cl) - 1
            if i >= 0 and funcs[i][0] <= cl <= funcs[i][1]:
                return funcs[i]
            return None

        # CUDA line -> user line (lines outside any kernel: None; kernel lines before the first
        # marker: the kernel's entry line)
        self.cuda_user: list[int | None] = []
        self.cuda_lib: list[str | None] = []
        for i in range(len(self._cuda_lines)):
            f = func_of(i + 1)
            oid = cuda_origin[i]
            if f is None or not f[3]:
                self.cuda_user.append(None)
                self.cuda_lib.append(None)
            elif oid is None:
                self.cuda_user.append(table.entry_line)
                self.cuda_lib.append(None)
            else:
                o = self.origins[oid]
                self.cuda_user.append(o.user_line if o.user_line is not None else table.entry_line)
                self.cuda_lib.append(o.library)
        self.ptx_cuda = ptx_cuda_lines(ptx)
        self.ptx_user = [self.cuda_user[c - 1] if c and c <= len(self.cuda_user) else None
                         for c in self.ptx_cuda]
        self.sass_text, raw = parse_sass_with_lines(sass_lines_text)
        self.instructions: list[SassInstruction] = []
        for i, r in enumerate(raw):
            cl = r["cuda_line"]
            user = self.cuda_user[cl - 1] if cl and cl <= len(self.cuda_user) else None
            lib = self.cuda_lib[cl - 1] if cl and cl <= len(self.cuda_lib) else None
            helper = None
            for inner in r["inner_cuda"]:
                f = func_of(inner)
                if f is not None and not f[3]:
                    helper = f[2]
                    break
            self.instructions.append(SassInstruction(
                index=i, kernel=r["kernel"], offset=r["offset"], text=r["text"], opcode=r["opcode"],
                cls=r["cls"], cuda_line=cl, user_line=user, library=lib, cuda_helper=helper,
                inline=r["inline"], sass_line=r["sass_line"]))
        self._fix_padding()
        self._fix_families()
        self._by_offset: dict[tuple[str, int], SassInstruction] = {
            (s.kernel, s.offset): s for s in self.instructions}
        self.kernels = list(dict.fromkeys(s.kernel for s in self.instructions))

    def _fix_padding(self) -> None:
        """The self-branch and NOPs nvdisasm shows after a kernel's last EXIT belong to no line."""
        by_kernel: dict[str, list[SassInstruction]] = {}
        for s in self.instructions:
            by_kernel.setdefault(s.kernel, []).append(s)
        for seq in by_kernel.values():
            i = len(seq) - 1
            while i >= 0 and seq[i].opcode == "NOP":
                i -= 1
            if i >= 0 and seq[i].opcode == "BRA" and i < len(seq) and (i == len(seq) - 1 or seq[i + 1].opcode == "NOP"):
                if i > 0 and seq[i - 1].opcode in ("EXIT", "BRA", "RET.REL.NODEC", "RET"):
                    for s in seq[i:]:
                        s.padding, s.user_line, s.library, s.cuda_helper = True, None, None, None

    # SASS families whose PTX origin is unmistakable. ptxas's line info for some of them names a
    # neighbouring line (an HGMMA of an unrolled wgmma sequence shows up at the descriptor
    # arithmetic or the loop counter): such an instruction is moved to the nearest user line whose
    # PTX has the family's instruction. Recorded in ``moved_from``.
    _FAMILIES = (
        (re.compile(r"^HGMMA|^IGMMA|^QGMMA|^BGMMA"), re.compile(r"\bwgmma\.mma_async")),
        (re.compile(r"^UTMALDG|^UTMASTG|^UBLKCP"), re.compile(r"\bcp\.(?:async\.bulk|reduce\.async\.bulk)")),
        (re.compile(r"^HMMA|^IMMA"), re.compile(r"\bmma\.sync|\bwmma\.")),
    )

    def _fix_families(self) -> None:
        lines_with: dict[int, set[int]] = {}
        for k, (_, ptx_rx) in enumerate(self._FAMILIES):
            have = set()
            for i, u in enumerate(self.ptx_user):
                if u is not None and ptx_rx.search(self._ptx_lines[i]):
                    have.add(u)
            lines_with[k] = have
        for s in self.instructions:
            if s.user_line is None:
                continue
            for k, (sass_rx, _) in enumerate(self._FAMILIES):
                if sass_rx.match(s.opcode):
                    have = lines_with[k]
                    if have and s.user_line not in have:
                        best = min(have, key=lambda l: (abs(l - s.user_line), l))
                        s.moved_from, s.user_line = s.user_line, best
                    break

    # ---- queries ------------------------------------------------------------------------------
    def lines(self) -> list[int]:
        """User lines that have SASS instructions, ascending."""
        return sorted({s.user_line for s in self.instructions if s.user_line is not None})

    def cuda_lines_for(self, lineno: int) -> list[int]:
        """CUDA line numbers (1-based) generated for user line ``lineno``."""
        return [i + 1 for i, u in enumerate(self.cuda_user) if u == lineno]

    def cuda_for(self, lineno: int) -> list[str]:
        """The CUDA C lines generated for user line ``lineno``."""
        return [self._cuda_lines[i - 1] for i in self.cuda_lines_for(lineno)]

    def ptx_lines_for(self, lineno: int) -> list[int]:
        return [i + 1 for i, u in enumerate(self.ptx_user) if u == lineno]

    def ptx_for(self, lineno: int) -> list[str]:
        """The PTX instruction lines generated for user line ``lineno``."""
        return [self._ptx_lines[i - 1].strip() for i in self.ptx_lines_for(lineno)]

    def sass_records_for(self, lineno: int) -> list[SassInstruction]:
        return [s for s in self.instructions if s.user_line == lineno]

    def sass_for(self, lineno: int) -> list[str]:
        """The SASS instructions (text, predicate kept) attributed to user line ``lineno``."""
        return [s.text for s in self.sass_records_for(lineno)]

    def line_of_sass(self, offset_or_index=None, *, kernel: str | None = None, index: int | None = None) -> int | None:
        """The user line of a SASS instruction: by byte ``offset`` (an int, as Nsight Compute and
        compute-sanitizer report it, or a string '0x01a0' / '/*01a0*/') within ``kernel`` (needed
        only when the module has several kernels), or by ``index=`` into :attr:`instructions`."""
        rec = self.instruction(offset_or_index, kernel=kernel, index=index)
        return rec.user_line if rec is not None else None

    def instruction(self, offset=None, *, kernel: str | None = None, index: int | None = None):
        if index is not None:
            return self.instructions[index] if -len(self.instructions) <= index < len(self.instructions) else None
        if isinstance(offset, str):
            offset = int(offset.strip().strip("/*").strip(), 16)
        if offset is None:
            raise TypeError("line_of_sass needs an offset or index=")
        if kernel is None:
            hits = [s for s in self.instructions if s.offset == offset]
            if len({s.kernel for s in hits}) > 1:
                raise ValueError(f"offset {offset:#x} is in several kernels ({sorted({s.kernel for s in hits})}): "
                                 "pass kernel=")
            return hits[0] if hits else None
        return self._by_offset.get((kernel, offset))

    def library_of(self, lineno: int) -> list[str]:
        """Library functions whose code user line ``lineno`` inlines (TVM lang / CUDA helpers)."""
        out = []
        for s in self.sass_records_for(lineno):
            for name in (s.library, s.cuda_helper):
                if name and name not in out:
                    out.append(name)
        return out

    def classes_for(self, lineno: int) -> dict:
        out: dict[str, int] = {}
        for s in self.sass_records_for(lineno):
            out[s.cls] = out.get(s.cls, 0) + 1
        return out

    def coverage(self) -> dict:
        """How complete the map is: SASS instructions with a user line, and user statement lines
        (lines the kernel's IR has statements for) that got SASS."""
        code = [s for s in self.instructions if not s.padding]
        n = len(code)
        with_line = sum(1 for s in code if s.user_line is not None)
        work = list(self.table.work_lines)
        have = set(self.lines())
        return {"sass": n, "sass_with_line": with_line, "share": with_line / n if n else 1.0,
                "padding": len(self.instructions) - n,
                "work_lines": work, "work_lines_without_sass": [l for l in work if l not in have],
                "work_share": (sum(l in have for l in work) / len(work)) if work else 1.0,
                "exact_cuda": self.exact}

    def per_line(self) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for s in self.instructions:
            if s.user_line is None:
                continue
            d = out.setdefault(s.user_line, {"sass": 0, "classes": {}, "library": []})
            d["sass"] += 1
            d["classes"][s.cls] = d["classes"].get(s.cls, 0) + 1
            for name in (s.library, s.cuda_helper):
                if name and name not in d["library"]:
                    d["library"].append(name)
        return out

    def to_dict(self) -> dict:
        return {
            "user_file": self.user_file, "exact_cuda": self.exact,
            "user_source": self.user_source,
            "cuda_user": self.cuda_user, "ptx_user": self.ptx_user,
            "instructions": [s.to_dict() for s in self.instructions],
            "lines": {str(k): v for k, v in self.per_line().items()},
            "coverage": {k: v for k, v in self.coverage().items()},
        }

    def __repr__(self) -> str:
        c = self.coverage()
        return (f"<SourceMap {os.path.basename(self.user_file)}: {len(self.lines())} user lines, "
                f"{c['sass']} SASS instructions, {c['share']:.0%} with a user line>")


# =============================================================================================
# Lazy SASS and the map on a Compiled
def ensure_sass(compiled) -> tuple[str, str]:
    """(plain SASS, nvdisasm -gi text) of ``compiled``: disassembled on first use (nvdisasm costs
    about as much as nvcc), then kept on the object and added to its cache entry."""
    import time

    from txlab import cache, toolchain

    if compiled.sass_lines is None:
        files = cache.load(compiled.key) if compiled.key else None
        text = files.get("kernel.sass-lines") if files else None
        if text is not None:
            compiled.sass_lines = text.decode()
        else:
            t = time.perf_counter()
            compiled.sass_lines = toolchain.cubin_to_sass(compiled.cubin, line_info=True)
            compiled.timings["disasm"] = time.perf_counter() - t
            if compiled.key:
                cache.add_file(compiled.key, "kernel.sass-lines", compiled.sass_lines)
    cached = getattr(compiled, "_sass_plain", None)
    if cached is None or cached[0] is not compiled.sass_lines:
        plain = "\n".join(l for l in compiled.sass_lines.splitlines() if not l.lstrip().startswith("//##"))
        if compiled.sass_lines.endswith("\n"):
            plain += "\n"
        cached = (compiled.sass_lines, plain)
        object.__setattr__(compiled, "_sass_plain", cached)
    return cached[1], compiled.sass_lines


def source_map_of(compiled) -> SourceMap:
    """The :class:`SourceMap` of a Compiled (built once per object)."""
    from txlab.errors import CompileError

    if compiled._source_map is not None:
        return compiled._source_map
    table = compiled.line_table
    if table is None:
        raise CompileError("linemap", "this kernel has no line map: its IR carries no source spans "
                           "(built from Python objects rather than TVMScript source)", kernel=compiled.name)
    _, gi = ensure_sass(compiled)
    compiled._source_map = SourceMap(table, compiled.cuda_source, compiled.ptx, gi)
    return compiled._source_map
