"""The one place txlab runs nvdisasm (or cuobjdump): one disassembly per cubin, cached in txlab's
content-addressed cache under the cubin's SHA-256, the flags and the tool's version, and verified
on read (:func:`txlab.cache.load`).

nvdisasm cannot print line info and register life ranges in one run ("Options --print-line-info
and its variants are ignored when printing register life range", nvdisasm 13.x), so a
:class:`Listing` of a cubin with its PTX (``Compiled.sass_listing``) is one run of :data:`ONE` =
``nvdisasm -c -hex --print-life-ranges --life-range-mode count``: each instruction's text, both
64-bit words of its encoding (the control field: :mod:`txlab.sass.control`) and the live
registers at it (GPR, predicate, uniform, uniform predicate); its CUDA line and inline frames are
read from the cubin's line table and the PTX (:mod:`txlab.sass.lines`), equal to what
``nvdisasm -gi`` prints. Every SASS consumer reads this one listing: ``Compiled.sass`` (the text of
plain ``nvdisasm -c``: the encodings and life-range columns removed), the SASS table, the line map
and SourceView with its live-registers column, ``txlab.diff``, the profiler's CUDA lines, tuning
facts.

A cubin given without its PTX is disassembled with :data:`LINES` = ``nvdisasm -c -gi -hex``
(line info from nvdisasm), live registers then being a second run of :data:`LIFE`. Without
nvdisasm, the text falls back to ``cuobjdump -sass`` (encodings, no line info); live registers
then are unknown (:class:`txlab.CompileError` naming the missing tool).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from txlab.errors import CompileError
from txlab.sass.control import Control
from txlab.sass.opcodes import classify, split_predicate
from txlab.sass.record import Instruction

LINES = ("-c", "-gi", "-hex")
LIFE = ("-c", "--print-life-ranges", "--life-range-mode", "count")
ONE = ("-c", "-hex", "--print-life-ranges", "--life-range-mode", "count")
_FILE = "listing.txt"


def run_disassembler(cubin: bytes, flags: tuple = LINES) -> tuple[str, str]:
    """(text, tool command) of ``nvdisasm <flags>`` on ``cubin``; for :data:`LINES` and :data:`ONE`,
    ``cuobjdump -sass`` when nvdisasm is absent or fails. The only nvdisasm/cuobjdump call in txlab."""
    from txlab import toolchain

    with tempfile.TemporaryDirectory(prefix="txlab-sass-") as tmp:
        Path(tmp, "kernel.cubin").write_bytes(cubin)
        nvdisasm = toolchain.find_tool("nvdisasm")
        failed = ""
        if nvdisasm:
            proc = toolchain._run([nvdisasm, *flags, "kernel.cubin"], "disasm", tmp)
            if proc.returncode == 0:
                return proc.stdout, "nvdisasm " + " ".join(flags)
            failed = (proc.stdout + proc.stderr).strip() or f"nvdisasm exited with {proc.returncode}"
        if flags not in (LINES, ONE):
            raise CompileError(
                "disasm",
                failed or "nvdisasm was not found (live registers need it)",
                hint=toolchain.TOOL_FIX["nvdisasm"],
            )
        cuobjdump = toolchain.find_tool("cuobjdump")
        if cuobjdump is None:
            raise CompileError(
                "disasm", failed or "neither nvdisasm nor cuobjdump was found", hint=toolchain.TOOL_FIX["nvdisasm"]
            )
        proc = toolchain._run([cuobjdump, "-sass", "kernel.cubin"], "disasm", tmp)
        if proc.returncode != 0:
            raise CompileError("disasm", (proc.stdout + proc.stderr).strip() or "cuobjdump failed")
        return proc.stdout, "cuobjdump -sass"


def disassemble(cubin: bytes, flags: tuple = LINES) -> str:
    """The text of ``nvdisasm <flags>`` on ``cubin`` (uncached; :func:`of_cubin` caches)."""
    return run_disassembler(cubin, flags)[0]


def cache_key(cubin: bytes, flags: tuple) -> str:
    """The cache key of one disassembly: the cubin's digest, the flags, the tools' versions."""
    from txlab import cache, toolchain

    return cache.make_key(
        what="sass-listing",
        cubin=hashlib.sha256(cubin).hexdigest(),
        flags=list(flags),
        nvdisasm=toolchain.tool_version("nvdisasm"),
        cuobjdump=None if toolchain.find_tool("nvdisasm") else toolchain.tool_version("cuobjdump"),
    )


def text_of(cubin: bytes, flags: tuple = LINES) -> tuple[str, str, float | None]:
    """(text, tool, seconds) of one disassembly: from the cache when an entry verifies
    (seconds None), else disassembled now and stored (one cache write)."""
    import json

    from txlab import cache

    key = cache_key(cubin, flags)
    files = cache.load(key)
    if files and _FILE in files:
        try:
            meta = json.loads(files["meta.json"])
            if meta.get("key") == key and isinstance(meta.get("tool"), str):
                return files[_FILE].decode(), meta["tool"], None
        except (KeyError, ValueError, AttributeError):  # JSONDecodeError, UnicodeDecodeError
            pass  # replaced below
    t = time.perf_counter()
    text, tool = run_disassembler(cubin, flags)
    seconds = time.perf_counter() - t
    meta = {"key": key, "tool": tool, "flags": list(flags), "cubin_sha256": hashlib.sha256(cubin).hexdigest()}
    cache.store(key, {"meta.json": json.dumps(meta), _FILE: text})
    return text, tool, seconds


# ---------------------------------------------------------------------------------------------
_FRAME = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
_FUNC = re.compile(r"^\s*\.text\.([\w$.]+):\s*$|^\s*Function\s*:\s*(\S+)")
_INSTR = re.compile(
    r"^\s*/\*(?P<off>[0-9a-fA-F]{4,})\*/\s+(?P<body>.*?)\s*;"
    r"(?:\s*/\*\s*(?P<lo>0x[0-9a-fA-F]{16})\s*\*/)?"
)
_HI = re.compile(r"^\s*/\*\s*(?P<hi>0x[0-9a-fA-F]{16})\s*\*/\s*$")
_HEX_TAIL = re.compile(r"\s*/\*\s*0x[0-9a-fA-F]{16}\s*\*/\s*$")
_LIFE_TAIL = re.compile(r"\s*// [|+][-+|#.\w ]*$")  # a --print-life-ranges column (or its header)
_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)|\barch\s*=\s*(sm_\w+)", re.M)


def parse(text: str, cuda_name: str = "kernel.cu") -> tuple[str, list[Instruction]]:
    """(plain SASS text, instructions) of ``nvdisasm -c [-gi] [-hex]`` or ``cuobjdump -sass``
    output. The plain text is what ``nvdisasm -c`` prints (line info and encodings removed);
    each instruction carries its encoding and control field (when the text has them), its
    CUDA line (the outermost inline frame in ``cuda_name``) and inline frames."""
    plain: list[str] = []
    out: list[Instruction] = []
    frames: list[tuple[str, int]] = []
    group_open = False
    kernel = ""
    pending: dict | None = None
    in_legend = False
    for raw in text.splitlines():
        if "// |" in raw or "// +" in raw:  # --print-life-ranges columns (parse_life reads them)
            raw = _LIFE_TAIL.sub("", raw)
            if not raw:
                continue
        elif raw.lstrip().startswith("// Legend:"):  # the life-range table's legend, with a blank line
            in_legend = True  # before and after it that plain nvdisasm does not print
            if plain[-1:] == [""]:
                plain.pop()
            continue
        elif in_legend:
            in_legend = bool(raw.strip())
            continue
        if pending is not None:
            h = _HI.match(raw)
            if h:
                hi = int(h.group("hi"), 16)
                out.append(Instruction(**pending, hi=hi, control=Control.from_hi(hi)))
                pending = None
                continue
            out.append(Instruction(**pending))
            pending = None
        stripped = raw.lstrip()
        if stripped.startswith("//##"):
            m = _FRAME.search(raw)
            if m:
                if not group_open:
                    frames, group_open = [], True
                frames.append((m.group(1), int(m.group(2))))
            continue
        group_open = False
        if _HI.match(raw):  # the second word of a cuobjdump instruction, or a stray one
            continue
        plain.append(_HEX_TAIL.sub("", raw) if "/* 0x" in raw else raw)
        fm = _FUNC.match(raw)
        if fm:
            kernel, frames = fm.group(1) or fm.group(2), []
            continue
        im = _INSTR.match(raw)
        if not im:
            continue
        pred, body = split_predicate(im.group("body"))
        opcode, _, operands = body.partition(" ")
        pending = dict(
            kernel=kernel,
            index=len(out),
            offset=int(im.group("off"), 16),
            predicate=pred,
            opcode=opcode,
            operands=operands.strip(),
            lo=int(im.group("lo"), 16) if im.group("lo") else None,
            cls=classify(opcode),
            **frame_fields(frames, cuda_name),
            sass_line=len(plain),
        )
    if pending is not None:
        out.append(Instruction(**pending))
    return "\n".join(plain) + ("\n" if text.endswith("\n") else ""), _mark_padding(out)


def frame_fields(frames, cuda_name: str = "kernel.cu") -> dict:
    """An instruction's ``cuda_line`` (its outermost frame, when in ``cuda_name``), ``inline``
    (``"file:line"`` innermost first) and ``inner_cuda`` from its frames ``[(file, line), ...]``
    (innermost first)."""
    names = [os.path.basename(f) for f, _ in frames]
    outer = frames[-1] if frames else None
    return dict(
        cuda_line=outer[1] if outer and os.path.basename(outer[0]) == cuda_name else None,
        inline=tuple(f"{n}:{ln}" for n, (_, ln) in zip(names, frames)),
        inner_cuda=tuple(ln for n, (_, ln) in zip(names, frames) if n == cuda_name)[:-1],
    )


def parse_encoded(text: str) -> list[Instruction]:
    """The instructions of ``nvdisasm -hex`` or ``cuobjdump -sass`` output, with their control
    fields. Raises ValueError when the text has no encodings (plain ``nvdisasm`` output)."""
    instrs = parse(text)[1]
    if instrs and all(i.hi is None for i in instrs):
        raise ValueError("this SASS has no instruction encodings: disassemble with `nvdisasm -hex`")
    return instrs


def _mark_padding(instrs: list[Instruction]) -> list[Instruction]:
    """Trailing NOPs of each kernel, and the unpredicated ``BRA`` to itself that ptxas puts after
    the last EXIT (or return/branch): code no thread runs."""
    import dataclasses

    by_kernel: dict[str, list[int]] = {}
    for i, ins in enumerate(instrs):
        by_kernel.setdefault(ins.kernel, []).append(i)
    pad: set[int] = set()
    for seq in by_kernel.values():
        j = len(seq) - 1
        while j >= 0 and instrs[seq[j]].opcode == "NOP":
            j -= 1
        pad |= set(seq[j + 1 :])
        if (
            j > 0
            and instrs[seq[j]].opcode == "BRA"
            and not instrs[seq[j]].predicate
            and instrs[seq[j - 1]].opcode in ("EXIT", "BRA", "RET.REL.NODEC", "RET")
        ):
            pad.add(seq[j])
    return [dataclasses.replace(ins, padding=True) if i in pad else ins for i, ins in enumerate(instrs)]


_LIFE_CELLS = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_OFFSET = re.compile(r"^\s*/\*(?P<off>[0-9a-fA-F]{4,})\*/")


def parse_life(text: str) -> dict[tuple[str, int], dict]:
    """``{(kernel, offset): {"gpr": n, "pred": n, ...}}``: registers live at each instruction, from
    ``nvdisasm [-hex] --print-life-ranges --life-range-mode count``. The columns are the register
    files the kernel uses, named by the table's header (GPR, PRED, UGPR, UPRED); an empty cell is
    0. With ``-hex`` the counts stand on the instruction's second line (its upper word)."""
    out: dict[tuple[str, int], dict] = {}
    kernel, names, offset = "", [], None
    for raw in text.splitlines():
        code, sep, comment = raw.partition("//")
        fm = _FUNC.match(code)
        if fm:
            kernel = fm.group(1) or fm.group(2)
        m = _LIFE_CELLS.match(comment) if sep else None
        if not m:
            continue
        cells = [c.strip() for c in m.group("cells").split("|")]
        if any(c in ("GPR", "PRED", "UGPR", "UPRED") for c in cells):
            names = [c.lower() for c in cells]
            continue
        om = _OFFSET.match(code)
        if om:
            offset = int(om.group("off"), 16)
        elif not _HI.match(code):
            continue
        if offset is not None and names and len(cells) == len(names):
            out[(kernel, offset)] = {n: int(c) if c.isdigit() else 0 for n, c in zip(names, cells)}
    return out


# ---------------------------------------------------------------------------------------------
@dataclass
class Listing:
    """The SASS of one cubin: the text of ``Compiled.sass`` and one :class:`Instruction` per
    instruction (encoding, control field, CUDA line, inline frames), from one disassembly."""

    text: str
    instructions: list
    tool: str  # the command that made it: 'nvdisasm -c -hex --print-life-ranges …', 'cuobjdump -sass', …
    arch: str | None = None  # the cubin's target, as the listing names it
    seconds: float | None = None  # disassembly time now; None when served from the cache
    cubin: bytes = field(default=b"", repr=False)
    _live: dict | None = field(default=None, repr=False)

    @property
    def has_lines(self) -> bool:
        """Whether the listing carries line info (a cubin built with -lineinfo)."""
        return any(i.cuda_line is not None for i in self.instructions)

    @property
    def kernels(self) -> list[str]:
        return list(dict.fromkeys(i.kernel for i in self.instructions))

    def cuda_lines(self) -> dict[str, dict[int, int]]:
        """``{kernel: {sass_offset: cuda_line}}`` for the instructions that have a CUDA line."""
        out: dict[str, dict[int, int]] = {k: {} for k in self.kernels}
        for i in self.instructions:
            if i.cuda_line is not None:
                out[i.kernel][i.offset] = i.cuda_line
        return out

    def by_offset(self, kernel: str) -> dict[int, str]:
        """``{offset: instruction text}`` of one kernel."""
        return {i.offset: i.text for i in self.instructions if i.kernel == kernel}

    def live_registers(self) -> dict[tuple[str, int], dict]:
        """``{(kernel, offset): {"gpr", "pred", "ugpr", "upred"}}`` (read with the listing by
        :func:`of_cubin` given the PTX; else a second nvdisasm run, once, cached like the first).
        Raises :class:`txlab.CompileError` when nvdisasm cannot give it."""
        if self._live is None:
            if not self.cubin:
                raise CompileError("disasm", "this listing was made from text, not a cubin: no life ranges")
            text, _, _ = text_of(self.cubin, LIFE)
            self._live = parse_life(text)
        return self._live


_NOP = 0x918  # the opcode field (bits 0-11 of the first word) of NOP, sm_70 and later


def fill_padding(text: str, cubin: bytes) -> str:
    """``text`` (``nvdisasm -hex --print-life-ranges``) with each kernel's trailing padding put
    back: nvdisasm prints its life ranges only up to the self-branch after the last EXIT and leaves
    out the NOPs after it (the section is padded to its alignment), which ``nvdisasm -c`` prints as
    ``NOP;``. They are read from the kernel's section in ``cubin`` and written as nvdisasm writes
    them; a word there that is not a NOP raises ValueError."""
    import struct

    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(cubin))
    sections = {s.name.removeprefix(".text."): s for s in elf.iter_sections() if s.name.startswith(".text.")}
    lines = text.splitlines()
    last: dict[str, tuple[int, int, str]] = {}  # kernel -> (line index to insert after, offset, its line)
    kernel = ""
    for n, raw in enumerate(lines):
        code = _LIFE_TAIL.sub("", raw)
        fm = _FUNC.match(code)
        if fm:
            kernel = fm.group(1) or fm.group(2)
        im = _INSTR.match(code)
        if im and kernel:
            last[kernel] = (n, int(im.group("off"), 16), code)
        elif kernel in last and last[kernel][0] == n - 1 and _HI.match(code):
            last[kernel] = (n, *last[kernel][1:])
    inserts: dict[int, list[str]] = {}
    for kernel, (n, offset, raw) in last.items():
        sec = sections.get(kernel)
        if sec is None:
            continue
        data = sec.data()
        code = raw
        at = code.index("/*", code.index("*/"))  # the encoding column
        body = _INSTR.match(code).start("body")
        width = len(code.split("/*", 1)[0])
        for off in range(offset + 16, len(data) - 15, 16):
            lo, hi = struct.unpack_from("<QQ", data, off)
            if lo & 0xFFF != _NOP:
                raise ValueError(f"{kernel}: the word at 0x{off:04x} after the listing is not a NOP")
            head = f"{' ' * width}/*{off:04x}*/".ljust(body) + "NOP;"
            inserts.setdefault(n, []).extend([f"{head.ljust(at)}/* 0x{lo:016x} */", f"{' ' * at}/* 0x{hi:016x} */"])
    out = []
    for n, raw in enumerate(lines):
        out.append(raw)
        out.extend(inserts.get(n, ()))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def of_cubin(cubin: bytes, cuda_name: str = "kernel.cu", ptx: str | None = None) -> Listing:
    """The :class:`Listing` of ``cubin`` (cached). With the ``ptx`` it was compiled from: one
    ``nvdisasm`` run of :data:`ONE` (live registers included), lines from the cubin and the PTX
    (:mod:`txlab.sass.lines`); without: ``nvdisasm -c -gi -hex`` (:data:`LINES`)."""
    if ptx is not None and importlib.util.find_spec("elftools") is None:
        ptx = None  # pyelftools (a dependency) is not installed: nvdisasm -gi, as before it
    if ptx is None:
        text, tool, seconds = text_of(cubin, LINES)
        return from_text(text, tool=tool, seconds=seconds, cubin=cubin, cuda_name=cuda_name)
    import dataclasses

    from txlab.sass.lines import frames_of

    text, tool, seconds = text_of(cubin, ONE)
    try:
        full = fill_padding(text, cubin) if tool.startswith("nvdisasm") else text
        listing = from_text(full, tool=tool, seconds=seconds, cubin=cubin, cuda_name=cuda_name)
        frames = frames_of(cubin, ptx, listing.instructions)
    except ValueError:  # not the PTX of this cubin, or padding that is not NOPs: nvdisasm -gi
        return of_cubin(cubin, cuda_name)
    if tool.startswith("nvdisasm"):
        listing._live = parse_life(text)
    listing.instructions = [
        dataclasses.replace(ins, **frame_fields(f, cuda_name)) for ins, f in zip(listing.instructions, frames)
    ]
    return listing


def from_text(
    text: str, *, tool: str = "", seconds: float | None = None, cubin: bytes = b"", cuda_name: str = "kernel.cu"
) -> Listing:
    plain, instrs = parse(text, cuda_name)
    m = _TARGET.search(text)
    return Listing(
        text=plain,
        instructions=instrs,
        tool=tool,
        arch=(m.group(1) or m.group(2)) if m else None,
        seconds=seconds,
        cubin=cubin,
    )


def cuda_line_table(cubin: bytes, source_name: str = "kernel.cu", ptx: str | None = None) -> dict[str, dict[int, int]]:
    """``{kernel: {sass_offset: cuda_line}}`` of a cubin (what Nsight Compute's source view
    shows, computed from the exact cubin): each instruction's outermost line in ``source_name``.
    Empty per kernel when the cubin has no line info; ``{}`` when it cannot be disassembled."""
    try:
        return of_cubin(cubin, source_name, ptx).cuda_lines()
    except CompileError:
        return {}
