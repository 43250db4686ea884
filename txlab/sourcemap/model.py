"""The line map of one compiled module: user line ↔ CUDA lines ↔ PTX lines ↔ SASS instructions."""

from __future__ import annotations

import bisect
import dataclasses
import numbers
import os
import re

from txlab.errors import CompileError, InputError
from txlab.sass.listing import Listing, from_text
from txlab.sass.opcodes import barrier_kind, family, is_local, memory_kind
from txlab.sass.record import Instruction
from txlab.sourcemap.line_table import LineTable
from txlab.sourcemap.listings import cuda_functions, ptx_cuda_lines
from txlab.sourcemap.origins import Origin

#: bytes of one SASS instruction (Volta and later): every instruction's offset is a multiple
SASS_BYTES = 16

#: the line map's instruction record is txlab's one SASS record (old name kept)
SassInstruction = Instruction


class SourceMap:
    """User line ↔ CUDA lines ↔ PTX lines ↔ SASS instructions of one compiled kernel module.

    User line numbers are numbered like :attr:`txlab.CompileError.lineno`: lines of the file the
    kernel is defined in, or of the ``%%tirx`` cell."""

    def __init__(
        self, table: LineTable, cuda_source: str, ptx: str, listing: Listing | str, resources: dict | None = None
    ):
        """``listing``: the cubin's :class:`txlab.sass.Listing` (or ``nvdisasm -c -gi [-hex]`` text);
        ``resources``: ptxas's per-kernel report (tells spills from local arrays)."""
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
        self.ptx_user = [self.cuda_user[c - 1] if c and c <= len(self.cuda_user) else None for c in self.ptx_cuda]
        if isinstance(listing, str):
            listing = from_text(listing)
        self.listing = listing
        self.resources = dict(resources or {})
        self.sass_text = listing.text
        self.instructions: list[Instruction] = []
        for ins in listing.instructions:
            cl = ins.cuda_line
            user = self.cuda_user[cl - 1] if cl and cl <= len(self.cuda_user) else None
            lib = self.cuda_lib[cl - 1] if cl and cl <= len(self.cuda_lib) else None
            helper = None
            for inner in ins.inner_cuda:
                f = func_of(inner)
                if f is not None and not f[3]:
                    helper = f[2]
                    break
            if ins.padding:  # the end-of-kernel self-branch and NOPs belong to no line
                user, lib, helper = None, None, None
            self.instructions.append(dataclasses.replace(ins, user_line=user, library=lib, cuda_helper=helper))
        self._fix_families()
        self._fix_memory_order(ptx)
        self._index()
        self.kernels = list(dict.fromkeys(s.kernel for s in self.instructions))
        self._live_unknown: str | None = None
        self._live_loaded = False

    def _index(self) -> None:
        self._by_offset: dict[tuple[str, int], Instruction] = {(s.kernel, s.offset): s for s in self.instructions}

    # SASS families whose PTX origin is unmistakable. ptxas's line info for some of them names a
    # neighbouring line (an HGMMA of an unrolled wgmma sequence shows up at the descriptor
    # arithmetic or the loop counter): such an instruction is moved to the nearest user line whose
    # PTX has the family's instruction. Recorded in ``moved_from``.
    _FAMILY_PTX = {
        "wgmma": re.compile(r"\bwgmma\.mma_async"),
        "bulk_copy": re.compile(r"\bcp\.(?:async\.bulk|reduce\.async\.bulk)"),
        "mma": re.compile(r"\bmma\.sync|\bwmma\."),
    }

    def _fix_families(self) -> None:
        lines_with: dict[str, set[int]] = {}
        for name, ptx_rx in self._FAMILY_PTX.items():
            lines_with[name] = {
                u for i, u in enumerate(self.ptx_user) if u is not None and ptx_rx.search(self._ptx_lines[i])
            }
        for k, s in enumerate(self.instructions):
            name = family(s.opcode) if s.user_line is not None else None
            have = lines_with.get(name) if name else None
            if have and s.user_line not in have:
                best = min(have, key=lambda l: (abs(l - s.user_line), l))
                self.instructions[k] = dataclasses.replace(s, moved_from=s.user_line, user_line=best)

    # Global and shared loads, stores and atomics, mma.sync, CTA barriers: ptxas's line info can give
    # an instruction of one inlined helper call the line of another identical one (two Tx.cta.copy
    # bodies: all LDGs at the first; two Tx.warp.gemm: both HMMAs at the first; two atomic_add
    # helpers: both REDGs at the first; a tile primitive's closing barrier and the user's cta_sync
    # after it: both BARs at the primitive), while the PTX ``.loc`` is right. Per kind
    # (space, direction, width), when a kernel has as many SASS instructions as PTX ones, each
    # line keeps as many as its PTX has: a line's surplus (its last ones in program order) goes to
    # the lines short of theirs, in PTX order. With any other count nothing is changed. mbarrier inits
    # too: two ``.init`` lines in a row had all their SYNCS.EXCH.64 at the first.
    _PTX_MEM = re.compile(r"^\s*(?:@!?%p\d+\s+)?(ld|st)\.(global|shared)((?:\.[\w:]+)*)\s")
    _PTX_MMA = re.compile(r"^\s*(?:@!?%p\d+\s+)?mma\.sync\.")
    _PTX_CP_ASYNC = re.compile(r"^\s*(?:@!?%p\d+\s+)?cp\.async\.(?:ca|cg)\.shared(?:::cta)?\.global")
    _PTX_BAR = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bar|barrier)(?:\.cta)?\.(sync|arrive|red)\b")
    _PTX_ATOMIC = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:atom|red)\.(global|shared)(?:::cta)?\.")
    _PTX_MBAR_INIT = re.compile(r"^\s*(?:@!?%p\d+\s+)?mbarrier\.init\.")
    _PTX_ADDRESS = re.compile(r"\[([^\]]+)\]")
    _PTX_ENTRY = re.compile(r"^\s*\.(?:visible\s+)?\.?entry\s+([\w$]+)")

    @classmethod
    def _ptx_kind(cls, line: str):
        if cls._PTX_MMA.match(line):
            return ("mma",)
        if cls._PTX_CP_ASYNC.match(line):
            return ("cp.async",)
        if cls._PTX_MBAR_INIT.match(line):
            return ("mbarrier", "init")
        m = cls._PTX_BAR.match(line)
        if m:
            return ("bar", m.group(1))
        m = cls._PTX_ATOMIC.match(line)
        if m:
            return ("atomic", m.group(1))
        m = cls._PTX_MEM.match(line)
        if not m:
            return None
        quals = m.group(3).split(".")
        vec = 4 if "v4" in quals else 2 if "v2" in quals else 1
        types = [q for q in quals if re.fullmatch(r"[usbf](8|16|32|64)", q)]
        if not types:
            return None
        return (m.group(1), m.group(2), vec * int(types[-1][1:]))

    def _fix_memory_order(self, ptx: str) -> None:
        kernel, ptx_of = None, {}
        for i, line in enumerate(self._ptx_lines):
            m = self._PTX_ENTRY.match(line)
            if m:
                kernel = m.group(1)
            if kernel is not None:
                k = self._ptx_kind(line)
                if k is not None:
                    a = self._PTX_ADDRESS.search(line)
                    ptx_of.setdefault(kernel, {}).setdefault(k, []).append(
                        (self.ptx_user[i], a.group(1) if a else None)
                    )
        pos = {(s.kernel, s.offset): k for k, s in enumerate(self.instructions)}
        for name, kinds in ptx_of.items():
            code = [s for s in self.instructions if s.kernel == name and not s.padding]
            for kind, sites in kinds.items():
                sass = [s for s in code if (memory_kind(s.opcode) or barrier_kind(s.opcode)) == kind]
                want_lines = [line for line, _ in sites]
                if kind[0] == "ld" and len(sass) < len(want_lines):
                    # ptxas merges loads of one address (an unrolled loop re-reading the same
                    # shared tile): count each (line, address) once
                    want_lines = [line for line, _ in dict.fromkeys(sites)]
                if (
                    not sass
                    or len(sass) != len(want_lines)
                    or None in want_lines
                    or any(s.user_line is None for s in sass)
                ):
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
                    k = pos[(s.kernel, s.offset)]
                    self.instructions[k] = dataclasses.replace(
                        s, moved_from=s.moved_from or s.user_line, user_line=line
                    )

    # ---- queries ------------------------------------------------------------------------------
    def lines(self) -> list[int]:
        """User lines that have SASS instructions, ascending."""
        return sorted({s.user_line for s in self.instructions if s.user_line is not None})

    def cuda_lines_for(self, lineno: int) -> list[int]:
        """CUDA line numbers (1-based) generated for user line ``lineno``."""
        lineno = self._line(lineno, "cuda_lines_for")
        return [i + 1 for i, u in enumerate(self.cuda_user) if u == lineno]

    def cuda_for(self, lineno: int) -> list[str]:
        """The CUDA C lines generated for user line ``lineno``."""
        return [self._cuda_lines[i - 1] for i in self.cuda_lines_for(self._line(lineno, "cuda_for"))]

    def ptx_lines_for(self, lineno: int) -> list[int]:
        lineno = self._line(lineno, "ptx_lines_for")
        return [i + 1 for i, u in enumerate(self.ptx_user) if u == lineno]

    def ptx_for(self, lineno: int) -> list[str]:
        """The PTX instruction lines generated for user line ``lineno``."""
        return [self._ptx_lines[i - 1].strip() for i in self.ptx_lines_for(self._line(lineno, "ptx_for"))]

    def sass_records_for(self, lineno: int) -> list[SassInstruction]:
        lineno = self._line(lineno, "sass_records_for")
        return [s for s in self.instructions if s.user_line == lineno]

    def _line(self, lineno, what: str) -> int:
        """``lineno`` as a line of the user's source, else an :class:`InputError` (a line past the source has no
        code, which an empty answer would not tell from a line that made none)."""
        lineno = _user_line(lineno, what)
        n = len(self.user_source or [])
        if n and not 1 <= lineno <= n:
            raise InputError(
                f"{what}({lineno}): {self.user_file or 'the source'} has lines 1-{n}; .lines() lists the lines "
                "that made code",
                param="lineno",
            )
        return lineno

    def sass_for(self, lineno: int) -> list[str]:
        """The SASS instructions (text, predicate kept) attributed to user line ``lineno``."""
        return [s.text for s in self.sass_records_for(self._line(lineno, "sass_for"))]

    def line_of_sass(self, offset_or_index=None, *, kernel: str | None = None, index: int | None = None) -> int | None:
        """The user line of a SASS instruction: by byte ``offset`` (an int, as Nsight Compute and
        compute-sanitizer report it, or a string '0x01a0' / '/*01a0*/') within ``kernel`` (needed
        only when the module has several kernels), or by ``index=`` into :attr:`instructions`."""
        rec = self.instruction(offset_or_index, kernel=kernel, index=index)
        return rec.user_line if rec is not None else None

    def instruction(self, offset=None, *, kernel: str | None = None, index: int | None = None):
        if kernel is not None and kernel not in self.kernels:
            raise InputError(
                f"line_of_sass: no kernel {kernel!r} in this module; its kernels: {', '.join(self.kernels)}",
                param="kernel",
            )
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, numbers.Integral):
                raise InputError(
                    f"line_of_sass: index={index!r} is not an int (a position in .instructions)", param="index"
                )
            return self.instructions[index] if -len(self.instructions) <= index < len(self.instructions) else None
        if isinstance(offset, str):
            try:
                offset = int(offset.strip().strip("/*").strip(), 16)
            except ValueError:
                raise InputError(
                    f"line_of_sass: {offset!r} is not a SASS offset: pass an int (0x1a0) or a hex string as "
                    "Nsight Compute or nvdisasm write it ('0x01a0', '/*01a0*/')",
                    param="offset",
                ) from None
        if offset is None:
            raise TypeError("line_of_sass needs an offset or index=")
        if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
            raise InputError(
                f"line_of_sass: offset {offset!r} is not a SASS byte offset: pass an int (0x1a0) or a hex string",
                param="offset",
            )
        offset = int(offset)
        if offset < 0:
            raise InputError(
                f"line_of_sass: offset {offset} is negative: SASS offsets count bytes from the kernel's first "
                "instruction (0, 0x10, ...)",
                param="offset",
            )
        if kernel is None:
            hits = [s for s in self.instructions if s.offset == offset]
            if len({s.kernel for s in hits}) > 1:
                raise InputError(
                    f"line_of_sass: offset {offset:#x} is in several kernels ({', '.join(sorted({s.kernel for s in hits}))}):"
                    " pass kernel= to say which",
                    param="kernel",
                )
            if hits:
                return hits[0]
        else:
            rec = self._by_offset.get((kernel, offset))
            if rec is not None:
                return rec
        mine = [s.offset for s in self.instructions if kernel is None or s.kernel == kernel]
        if not mine:
            return None
        where = f"kernel {kernel!r}" if kernel is not None else "this module"
        if offset > max(mine):
            raise InputError(
                f"line_of_sass: offset {offset:#x} is past the last instruction of {where} ({max(mine):#06x}; "
                f"{len(mine)} instructions of {SASS_BYTES} bytes)",
                param="offset",
            )
        if offset % SASS_BYTES:
            raise InputError(
                f"line_of_sass: offset {offset:#x} is not at an instruction: SASS instructions are {SASS_BYTES} bytes, "
                f"so offsets are multiples of {SASS_BYTES:#x} (the instruction holding it starts at "
                f"{offset - offset % SASS_BYTES:#06x})",
                param="offset",
            )
        return None

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
        return {
            "sass": n,
            "sass_with_line": with_line,
            "share": with_line / n if n else 1.0,
            "padding": len(self.instructions) - n,
            "work_lines": work,
            "work_lines_without_sass": [l for l in work if l not in have],
            "work_share": (sum(l in have for l in work) / len(work)) if work else 1.0,
            "exact_cuda": self.exact,
        }

    def statement_coverage(self) -> tuple[int, int]:
        """(statement lines with SASS, statement lines): lines whose IR does work (stores, calls,
        loops, branches) against those that got instructions."""
        c = self.coverage()
        return len(c["work_lines"]) - len(c["work_lines_without_sass"]), len(c["work_lines"])

    # ---- registers and local memory ---------------------------------------------------------
    def load_live_registers(self) -> str | None:
        """Read the live-register counts of every instruction (``nvdisasm --print-life-ranges``: the
        listing's own run, or one more, cached) into this map's records; None when done, else why
        they are unknown."""
        if not self._live_loaded:
            self._live_loaded = True
            try:
                counts = self.listing.live_registers()
            except CompileError as exc:
                self._live_unknown = f"live registers unknown: {exc.message}"
                return self._live_unknown
            for k, s in enumerate(self.instructions):
                c = counts.get((s.kernel, s.offset))
                if c is not None:
                    self.instructions[k] = dataclasses.replace(s, live_registers=c["gpr"], live=dict(c))
            self._index()
            if not counts:
                self._live_unknown = "live registers unknown: nvdisasm printed no life ranges"
        return self._live_unknown

    def live_registers(self, lineno: int) -> int | None:
        """The most general-purpose registers live at any SASS instruction of user line ``lineno``
        (Nsight Compute's "Live Registers", rolled up to the line as its maximum); None when the
        line has no SASS. Raises :class:`txlab.CompileError` when nvdisasm cannot tell."""
        why = self.load_live_registers()
        if why:
            raise CompileError("disasm", why)
        counts = [
            s.live_registers for s in self.sass_records_for(lineno) if not s.padding and s.live_registers is not None
        ]
        return max(counts) if counts else None

    def spills(self) -> bool:
        """Whether ptxas reported spill stores or loads for any kernel of this map."""
        return any(
            int(r.get("spill_store_bytes") or 0) + int(r.get("spill_load_bytes") or 0)
            for r in self.resources.values()
            if isinstance(r, dict)
        )

    def local_memory(self, lineno: int) -> dict:
        """Local-memory traffic the SASS of user line ``lineno`` has: ``{"loads": LDL count,
        "stores": STL count, "kind": "spill" | "local array" | None}`` (kind "spill" when ptxas
        reported spills for the kernel of these instructions, else a per-thread array in local
        memory; None when the line has no LDL/STL)."""
        recs = [s for s in self.sass_records_for(lineno) if is_local(s.opcode)]
        loads = sum(1 for s in recs if s.opcode.startswith("LDL"))
        kind = None
        if recs:
            spilled = {
                k
                for k, r in self.resources.items()
                if isinstance(r, dict) and int(r.get("spill_store_bytes") or 0) + int(r.get("spill_load_bytes") or 0)
            }
            kind = "spill" if any(s.kernel in spilled for s in recs) else "local array"
        return {"loads": loads, "stores": len(recs) - loads, "kind": kind}

    def per_line(self, live: bool = False) -> dict[int, dict]:
        """Per user line: SASS count, classes, libraries, local memory (``local``: LDL/STL counts
        and kind, when the line has any) and, with ``live``, ``live_registers`` (max over the
        line's instructions; None where unknown, the reason in :attr:`live_registers_unknown`)."""
        if live:
            self.load_live_registers()
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
            if live:
                if s.live_registers is not None and not s.padding:
                    d["live_registers"] = max(d.get("live_registers") or 0, s.live_registers)
                else:
                    d.setdefault("live_registers", None)
        for line, d in out.items():
            loc = self.local_memory(line)
            if loc["kind"] is not None:
                d["local"] = loc
        return out

    @property
    def live_registers_unknown(self) -> str | None:
        """Why live registers are unknown (None: known, or not read yet)."""
        return self._live_unknown

    def to_dict(self) -> dict:
        lines = self.per_line(live=True)
        return {
            "user_file": self.user_file,
            "exact_cuda": self.exact,
            "user_source": self.user_source,
            "cuda_user": self.cuda_user,
            "ptx_user": self.ptx_user,
            "instructions": [s.to_dict() for s in self.instructions],
            "lines": {str(k): v for k, v in lines.items()},
            "coverage": {k: v for k, v in self.coverage().items()},
            "live_registers_unknown": self._live_unknown,
        }

    def __repr__(self) -> str:
        return f"<SourceMap {os.path.basename(self.user_file)}: {self.headline()}>"

    def headline(self) -> str:
        """Both coverages, and the lines that did work but got no SASS (by number)."""
        c = self.coverage()
        work = c["work_lines"]
        text = (
            f"{len(self.lines())} user lines, {c['sass']} SASS instructions, {c['share']:.0%} with a "
            f"user line; {len(work) - len(c['work_lines_without_sass'])}/{len(work)} statement lines "
            f"with SASS ({c['work_share']:.0%})"
        )
        if c["work_lines_without_sass"]:
            text += (
                "; no SASS for line"
                + ("s " if len(c["work_lines_without_sass"]) > 1 else " ")
                + ", ".join(map(str, c["work_lines_without_sass"]))
            )
        return text


def _user_line(lineno, what: str) -> int:
    """``lineno`` as a user line number (an int), else an :class:`InputError` naming ``what``."""
    if isinstance(lineno, bool) or not isinstance(lineno, numbers.Integral):
        raise InputError(
            f"{what} takes a user line number (an int, as .lines() lists them), not {lineno!r}", param="lineno"
        )
    return int(lineno)
