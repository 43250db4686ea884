"""The one place txlab runs nvdisasm (or cuobjdump): one disassembly per cubin and flag set,
cached in txlab's content-addressed cache under the cubin's SHA-256, the flags and the tool's
version, and verified on read (:func:`txlab.cache.load`).

Two flag sets, because nvdisasm cannot print everything in one run:

* :data:`LINES` = ``nvdisasm -c -gi -hex``: each instruction's text, both 64-bit words of its
  encoding (the control field: :mod:`txlab.sass.control`) and its line info with the inline chain
  (``//## File "kernel.cu", line 194 inlined at "kernel.cu", line 277``), from one run. Every SASS
  consumer reads this one listing: ``Compiled.sass`` (the same text as plain ``nvdisasm -c``, which
  is this one with the ``//##`` and encoding comments removed), the SASS table, the line map and
  SourceView, ``txlab.diff``, the profiler's CUDA lines, tuning facts.
* :data:`LIFE` = ``nvdisasm -c --print-life-ranges --life-range-mode count``: the number of live
  registers at each instruction (GPR, predicate, uniform, uniform predicate). nvdisasm ignores
  ``-g``/``-gi``/``-gp`` with ``--print-life-ranges`` ("Options --print-line-info and its variants
  are ignored when printing register life range", nvdisasm 13.x), so live registers are a second
  run, made only when they are asked for (``source_map.live_registers``, SourceView's column).

Without nvdisasm, :data:`LINES` falls back to ``cuobjdump -sass`` (encodings, no line info);
live registers then are unknown (:class:`txlab.CompileError` naming the missing tool).
"""

from __future__ import annotations

import hashlib
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
_FILE = "listing.txt"


def run_disassembler(cubin: bytes, flags: tuple = LINES) -> tuple[str, str]:
    """(text, tool command) of ``nvdisasm <flags>`` on ``cubin``; for :data:`LINES`, ``cuobjdump
    -sass`` when nvdisasm is absent or fails. The only nvdisasm/cuobjdump call in txlab."""
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
        if flags != LINES:
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
    for raw in text.splitlines():
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
        names = [os.path.basename(f) for f, _ in frames]
        outer = frames[-1] if frames else None
        pending = dict(
            kernel=kernel,
            index=len(out),
            offset=int(im.group("off"), 16),
            predicate=pred,
            opcode=opcode,
            operands=operands.strip(),
            lo=int(im.group("lo"), 16) if im.group("lo") else None,
            cls=classify(opcode),
            cuda_line=outer[1] if outer and os.path.basename(outer[0]) == cuda_name else None,
            inline=tuple(f"{n}:{l}" for n, (_, l) in zip(names, frames)),
            inner_cuda=tuple(l for n, (_, l) in zip(names, frames) if n == cuda_name)[:-1],
            sass_line=len(plain),
        )
    if pending is not None:
        out.append(Instruction(**pending))
    return "\n".join(plain) + ("\n" if text.endswith("\n") else ""), _mark_padding(out)


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
    ``nvdisasm --print-life-ranges --life-range-mode count``. The columns are the register files
    the kernel uses, named by the table's header (GPR, PRED, UGPR, UPRED); an empty cell is 0."""
    out: dict[tuple[str, int], dict] = {}
    kernel, names = "", []
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
        if om and names and len(cells) == len(names):
            out[(kernel, int(om.group("off"), 16))] = {n: int(c) if c.isdigit() else 0 for n, c in zip(names, cells)}
    return out


# ---------------------------------------------------------------------------------------------
@dataclass
class Listing:
    """The SASS of one cubin: the text of ``Compiled.sass`` and one :class:`Instruction` per
    instruction (encoding, control field, CUDA line, inline frames), from one disassembly."""

    text: str
    instructions: list
    tool: str  # the command that made it: 'nvdisasm -c -gi -hex' or 'cuobjdump -sass'
    arch: str | None = None  # the cubin's target, as the listing names it
    seconds: float | None = None  # disassembly time now; None when served from the cache
    cubin: bytes = field(default=b"", repr=False)
    _live: dict | None = field(default=None, repr=False)

    @property
    def has_lines(self) -> bool:
        """Whether the listing carries line info (nvdisasm -gi on a cubin built with -lineinfo)."""
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
        """``{(kernel, offset): {"gpr", "pred", "ugpr", "upred"}}`` (a second nvdisasm run, once,
        cached like the first). Raises :class:`txlab.CompileError` when nvdisasm cannot give it."""
        if self._live is None:
            if not self.cubin:
                raise CompileError("disasm", "this listing was made from text, not a cubin: no life ranges")
            text, _, _ = text_of(self.cubin, LIFE)
            self._live = parse_life(text)
        return self._live


def of_cubin(cubin: bytes, cuda_name: str = "kernel.cu") -> Listing:
    """The :class:`Listing` of ``cubin`` (``nvdisasm -c -gi -hex``, cached)."""
    text, tool, seconds = text_of(cubin, LINES)
    return from_text(text, tool=tool, seconds=seconds, cubin=cubin, cuda_name=cuda_name)


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


def cuda_line_table(cubin: bytes, source_name: str = "kernel.cu") -> dict[str, dict[int, int]]:
    """``{kernel: {sass_offset: cuda_line}}`` of a cubin (what Nsight Compute's source view
    shows, computed from the exact cubin): each instruction's outermost line in ``source_name``.
    Empty per kernel when the cubin has no line info; ``{}`` when it cannot be disassembled."""
    try:
        return of_cubin(cubin, source_name).cuda_lines()
    except CompileError:
        return {}
