"""The line map of one compiled module: user line ↔ CUDA lines ↔ PTX lines ↔ SASS instructions."""
from __future__ import annotations

import bisect
import os
import re
from dataclasses import asdict, dataclass, field

from txlab.sourcemap.line_table import LineTable
from txlab.sourcemap.listings import cuda_functions, parse_sass_with_lines, ptx_cuda_lines
from txlab.sourcemap.origins import Origin


@dataclass
class SassInstruction:
    """One SASS instruction and where it came from."""

    index: int
    kernel: str
    offset: int
    text: str                      # e.g. "@P0 BRA `(.L_x_3)" (predicate kept, ';' dropped)
    opcode: str                    # e.g. "BRA" (predicate excluded, modifiers kept: "LDG.E.CONSTANT")
    cls: str                       # txlab.sass.classify: memory | tensor | barrier | control | warp | alu | other
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
        self._fix_memory_order(ptx)
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

    # Global and shared loads and stores, mma.sync: ptxas's line info can give an instruction of one
    # inlined helper call the line of another identical one (two Tx.cta.copy bodies: all LDGs at the
    # first; two Tx.warp.gemm: both HMMAs at the first), while the PTX ``.loc`` is right. Per kind
    # (space, direction, width), when a kernel has as many SASS instructions as PTX ones, each
    # line keeps as many as its PTX has: a line's surplus (its last ones in program order) goes to
    # the lines short of theirs, in PTX order. With any other count nothing is changed.
    _PTX_MEM = re.compile(r"^\s*(?:@!?%p\d+\s+)?(ld|st)\.(global|shared)((?:\.[\w:]+)*)\s")
    _PTX_MMA = re.compile(r"^\s*(?:@!?%p\d+\s+)?mma\.sync\.")
    _PTX_ENTRY = re.compile(r"^\s*\.(?:visible\s+)?\.?entry\s+([\w$]+)")
    _SASS_MEM = re.compile(r"^(LDG|STG|LDS|STS)(?:\.|$)")
    _SASS_SPACE = {"LDG": ("ld", "global"), "STG": ("st", "global"), "LDS": ("ld", "shared"), "STS": ("st", "shared")}

    @classmethod
    def _ptx_kind(cls, line: str):
        if cls._PTX_MMA.match(line):
            return ("mma",)
        m = cls._PTX_MEM.match(line)
        if not m:
            return None
        quals = m.group(3).split(".")
        vec = 4 if "v4" in quals else 2 if "v2" in quals else 1
        types = [q for q in quals if re.fullmatch(r"[usbf](8|16|32|64)", q)]
        if not types:
            return None
        return (m.group(1), m.group(2), vec * int(types[-1][1:]))

    @classmethod
    def _sass_kind(cls, opcode: str):
        if opcode.startswith(("HMMA", "IMMA")):
            return ("mma",)
        m = cls._SASS_MEM.match(opcode)
        if not m:
            return None
        mods = opcode.split(".")[1:]
        bits = 128 if "128" in mods else 64 if "64" in mods else 16 if {"U16", "S16"} & set(mods) else \
            8 if {"U8", "S8"} & set(mods) else 32
        return (*cls._SASS_SPACE[m.group(1)], bits)

    def _fix_memory_order(self, ptx: str) -> None:
        kernel, ptx_of = None, {}
        for i, line in enumerate(self._ptx_lines):
            m = self._PTX_ENTRY.match(line)
            if m:
                kernel = m.group(1)
            if kernel is not None:
                k = self._ptx_kind(line)
                if k is not None:
                    ptx_of.setdefault(kernel, {}).setdefault(k, []).append(self.ptx_user[i])
        for name, kinds in ptx_of.items():
            code = [s for s in self.instructions if s.kernel == name and not s.padding]
            for kind, want_lines in kinds.items():
                sass = [s for s in code if self._sass_kind(s.opcode) == kind]
                if not sass or len(sass) != len(want_lines) or None in want_lines or \
                        any(s.user_line is None for s in sass):
                    continue
                want = {l: want_lines.count(l) for l in want_lines}
                by_line: dict[int, list] = {}
                for s in sass:
                    by_line.setdefault(s.user_line, []).append(s)
                pool = []
                for line, group in by_line.items():
                    extra = len(group) - want.get(line, 0)
                    if extra > 0:
                        pool.extend(group[-extra:])
                if not pool:
                    continue
                pool.sort(key=lambda s: s.offset)
                short = []
                for line in dict.fromkeys(want_lines):  # PTX order
                    short.extend([line] * max(0, want[line] - len(by_line.get(line, []))))
                for s, line in zip(pool, short):
                    s.moved_from, s.user_line = s.moved_from or s.user_line, line

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

    def statement_coverage(self) -> tuple[int, int]:
        """(statement lines with SASS, statement lines): lines whose IR does work (stores, calls,
        loops, branches) against those that got instructions."""
        c = self.coverage()
        return len(c["work_lines"]) - len(c["work_lines_without_sass"]), len(c["work_lines"])

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
        return f"<SourceMap {os.path.basename(self.user_file)}: {self.headline()}>"

    def headline(self) -> str:
        """Both coverages, and the lines that did work but got no SASS (by number)."""
        c = self.coverage()
        work = c["work_lines"]
        text = (f"{len(self.lines())} user lines, {c['sass']} SASS instructions, {c['share']:.0%} with a "
                f"user line; {len(work) - len(c['work_lines_without_sass'])}/{len(work)} statement lines "
                f"with SASS ({c['work_share']:.0%})")
        if c["work_lines_without_sass"]:
            text += "; no SASS for line" + ("s " if len(c["work_lines_without_sass"]) > 1 else " ") + \
                ", ".join(map(str, c["work_lines_without_sass"]))
        return text
