"""SASS with its scheduling control information, one record per instruction.

Since Volta (sm_70) every SASS instruction is 128 bits wide and carries its own scheduling
control field in bits 105..125 (the top 23 bits of the second 64-bit word, ``hi >> 41``):

    bits (of hi >> 41)   field        meaning
    0..3                 stall        cycles the scheduler waits before issuing this warp's next instruction
    4                    yield        0 = the scheduler may switch to another warp after this one ("Y")
    5..7                 wr_bar       dependency barrier (scoreboard 0..5) released when the result is written; 7 = none
    8..10                rd_bar       barrier released when the source registers have been read; 7 = none
    11..16               wait_mask    barriers (bit k = SBk) this instruction waits on before it issues
    17..20               reuse        operand reuse-cache flags (bit i = source operand slot i)

Where this layout comes from, and how it is checked, is written in docs/sass-control.md.
The encodings are read from ``nvdisasm -hex`` (falling back to ``cuobjdump -sass``), which prints
both 64-bit words of each instruction next to its text, so the text and the bits come from one tool
run on the same cubin.

    table = compiled.sass_table()      # SassTable: rows, to_dict(), _repr_html_()
    table.rows[0]["wait_mask"], table.filter(cls="memory")

Pure Python; no Jupyter imports.
"""
from __future__ import annotations

import html
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from txlab.errors import CompileError

#: the instruction classes of :func:`classify`, in display order
CLASSES = ("memory", "tensor", "barrier", "control", "warp", "alu", "other")

CONTROL_SHIFT = 41          # control field = hi 64-bit word >> 41 (instruction bits 105..127)
NO_BARRIER = 7


@dataclass(frozen=True)
class Control:
    """Decoded scheduling control field of one sm_70+ instruction."""

    stall: int
    yield_: bool          # True: the warp scheduler may switch warps after this instruction
    wr_bar: int | None    # barrier set when the result is written (None: none)
    rd_bar: int | None    # barrier set when the sources have been read (None: none)
    wait_mask: int        # bit k: wait on barrier k before issuing
    reuse: int            # bit i: keep source operand slot i in the reuse cache
    raw: int              # the 23-bit field as found

    @classmethod
    def from_hi(cls, hi: int) -> "Control":
        """From the second (high) 64-bit word of the instruction, as nvdisasm prints it."""
        return cls.from_field((hi >> CONTROL_SHIFT) & ((1 << 23) - 1))

    @classmethod
    def from_field(cls, c: int) -> "Control":
        wr = (c >> 5) & 7
        rd = (c >> 8) & 7
        return cls(stall=c & 0xF, yield_=not ((c >> 4) & 1),
                   wr_bar=None if wr == NO_BARRIER else wr, rd_bar=None if rd == NO_BARRIER else rd,
                   wait_mask=(c >> 11) & 0x3F, reuse=(c >> 17) & 0xF, raw=c)

    @property
    def waits_on(self) -> list[int]:
        """Barrier indices in the wait mask."""
        return [k for k in range(6) if self.wait_mask >> k & 1]

    def text(self) -> str:
        """The usual notation of SASS assemblers (maxas, CuAssembler): ``B0-----:R-:W2:Y:S04``
        (wait mask, read barrier, write barrier, yield, stall)."""
        wait = "".join(str(k) if self.wait_mask >> k & 1 else "-" for k in range(6))
        rd = "-" if self.rd_bar is None else str(self.rd_bar)
        wr = "-" if self.wr_bar is None else str(self.wr_bar)
        return f"B{wait}:R{rd}:W{wr}:{'Y' if self.yield_ else '-'}:S{self.stall:02d}"


@dataclass
class Instruction:
    """One SASS instruction of one kernel."""

    kernel: str
    index: int            # position in the kernel (offset // 16)
    offset: int           # byte offset in the kernel's .text section
    predicate: str        # '@P0', '@!UPT', ... or ''
    opcode: str           # with modifiers: 'LDG.E.128.CONSTANT'
    operands: str
    lo: int               # the two 64-bit words of the encoding
    hi: int
    control: Control
    cls: str
    padding: bool = False  # trailing NOPs and the self-branch after the last EXIT
    line: int | None = None

    @property
    def text(self) -> str:
        body = f"{self.opcode} {self.operands}".strip()
        return f"{self.predicate} {body}" if self.predicate else body

    @property
    def encoding(self) -> str:
        return f"0x{self.hi:016x}{self.lo:016x}"

    def row(self) -> dict:
        c = self.control
        return {
            "kernel": self.kernel, "index": self.index, "offset": self.offset,
            "predicate": self.predicate, "opcode": self.opcode, "operands": self.operands,
            "stall": c.stall, "yield": c.yield_, "wr_bar": c.wr_bar, "rd_bar": c.rd_bar,
            "wait_mask": c.wait_mask, "reuse": c.reuse, "control": c.text(),
            "line": self.line, "cls": self.cls, "padding": self.padding, "encoding": self.encoding,
        }


# ---------------------------------------------------------------------------------------------
# classification
_TENSOR = re.compile(r"^(HMMA|IMMA|DMMA|BMMA|HGMMA|IGMMA|QGMMA|BGMMA|OMMA|QMMA|UTC\w*MMA)\b")
_BARRIER = re.compile(r"^(BAR|B2R|R2B|SYNCS|DEPBAR|LDGDEPBAR|MEMBAR|FENCE|ERRBAR|CGAERRBAR|WARPSYNC|"
                      r"ARRIVES|WARPGROUP|UCGABAR\w*|CCTL\w*|UTCBAR|ACQBULK|ACQSHMINIT)\b")
_MEMORY = re.compile(r"^(LD|LDG|LDS|LDL|LDC|ULDC|LDSM|LDTM|ST|STG|STS|STL|STSM|STTM|ATOM|ATOMG|ATOMS|"
                     r"RED|REDG|REDAS|LDGSTS|SULD|SUST|SUATOM|SURED|TEX|TLD|TLD4|TMML|TXD|TXQ|"
                     r"UTMA\w*|UBLK\w*|UTCCP|UTCSHIFT)\b")
_CONTROL = re.compile(r"^(BRA|BRX|BRXU|JMP|JMX|JMXU|CALL|RET|EXIT|BSSY|BSYNC|BREAK|BPT|KILL|NANOSLEEP|"
                      r"YIELD|RTT|BMOV|PREEXIT|ENDCOLLECTIVE)\b")
_WARP = re.compile(r"^(SHFL|VOTE|VOTEU|MATCH|REDUX|CREDUX|ELECT|UVOTE)\b")
_OTHER = re.compile(r"^(NOP|S2R|S2UR|CS2R|PMTRIG|SETCTAID|SETLMEMBASE|GETLMEMBASE|USETMAXREG|"
                    r"UGETNEXTWORKID|VIRTCOUNT)\b")


def classify(opcode: str) -> str:
    """The class of an opcode (with or without modifiers): one of :data:`CLASSES`.
    memory: loads/stores/atomics/TMA/texture; tensor: MMA of every generation (HMMA..UTC*MMA);
    barrier: CTA/mbarrier/scoreboard/memory barriers and fences; control: branches, calls, exit,
    convergence; warp: shuffles/votes/warp reductions; other: special registers, NOP, register
    reconfiguration; alu: the rest (integer, floating point, MUFU, conversions, predicates).
    The one classifier: the SASS table, ``txlab.diff`` and the line map (``SourceView``) use it."""
    op = opcode.split(".", 1)[0]
    for cls, rx in (("tensor", _TENSOR), ("barrier", _BARRIER), ("memory", _MEMORY),
                    ("control", _CONTROL), ("warp", _WARP), ("other", _OTHER)):
        if rx.match(op):
            return cls
    return "alu"


# ---------------------------------------------------------------------------------------------
# parsing nvdisasm -hex / cuobjdump -sass
_SECTION = re.compile(r"^\s*\.section\s+\.text\.(?P<name>[^\s,]+)|^\s*Function\s*:\s*(?P<fn>\S+)")
_INSTR = re.compile(
    r"/\*(?P<off>[0-9a-fA-F]{4,})\*/\s*(?P<body>.*?)\s*;?\s*/\*\s*(?P<lo>0x[0-9a-fA-F]{16})\s*\*/")
_HI = re.compile(r"^\s*/\*\s*(?P<hi>0x[0-9a-fA-F]{16})\s*\*/\s*$")
_PRED = re.compile(r"^(?P<pred>@!?U?P(?:T|\d+))\s+(?P<rest>.*)$")


def parse(text: str) -> list[Instruction]:
    """Instructions (with decoded control bits) of ``nvdisasm -hex`` or ``cuobjdump -sass`` output.
    Raises ValueError when the text has no encodings (plain ``nvdisasm`` output)."""
    out: list[Instruction] = []
    kernel = ""
    index_in_kernel = 0
    pending = None
    for line in text.splitlines():
        m = _SECTION.search(line)
        if m:
            kernel = m.group("name") or m.group("fn")
            index_in_kernel = 0
            continue
        if pending is not None:
            h = _HI.match(line)
            if not h:
                raise ValueError(f"expected the second encoding word after {pending[3]!r}, got {line.strip()!r}")
            off, pred, body, lo = pending
            pending = None
            opcode, _, operands = body.partition(" ")
            hi = int(h.group("hi"), 16)
            out.append(Instruction(kernel=kernel, index=index_in_kernel, offset=off, predicate=pred,
                                   opcode=opcode, operands=operands.strip(), lo=lo, hi=hi,
                                   control=Control.from_hi(hi), cls=classify(opcode)))
            index_in_kernel += 1
            continue
        m = _INSTR.search(line)
        if m:
            body = m.group("body").strip().rstrip(";").strip()
            pm = _PRED.match(body)
            pred, body = (pm.group("pred"), pm.group("rest")) if pm else ("", body)
            pending = (int(m.group("off"), 16), pred, body, int(m.group("lo"), 16))
    if not out and re.search(r"/\*[0-9a-fA-F]{4,}\*/", text):
        raise ValueError("this SASS has no instruction encodings: disassemble with `nvdisasm -hex`")
    _mark_padding(out)
    return out


def _mark_padding(instrs: list[Instruction]) -> None:
    """Trailing NOPs of each kernel, and the ``BRA`` to itself that ptxas puts after the last EXIT."""
    by_kernel: dict[str, list[Instruction]] = {}
    for ins in instrs:
        by_kernel.setdefault(ins.kernel, []).append(ins)
    for seq in by_kernel.values():
        i = len(seq) - 1
        while i >= 0 and seq[i].opcode == "NOP":
            seq[i].padding = True
            i -= 1
        if i >= 0 and seq[i].opcode == "BRA" and not seq[i].predicate and i > 0 and seq[i - 1].opcode == "EXIT":
            seq[i].padding = True


def disassemble(cubin: bytes) -> str:
    """``nvdisasm -hex -c`` of a cubin (``cuobjdump -sass`` when nvdisasm is absent or fails)."""
    from txlab import toolchain

    with tempfile.TemporaryDirectory(prefix="txlab-sasshex-") as tmp:
        Path(tmp, "kernel.cubin").write_bytes(cubin)
        nvdisasm = toolchain.find_tool("nvdisasm")
        if nvdisasm:
            proc = toolchain._run([nvdisasm, "-hex", "-c", "kernel.cubin"], "disasm", tmp)
            if proc.returncode == 0:
                return proc.stdout
        cuobjdump = toolchain.find_tool("cuobjdump")
        if cuobjdump is None:
            raise CompileError("disasm", "neither nvdisasm nor cuobjdump was found",
                               hint="pip install nvidia-cuda-nvdisasm")
        proc = toolchain._run([cuobjdump, "-sass", "kernel.cubin"], "disasm", tmp)
        if proc.returncode != 0:
            raise CompileError("disasm", (proc.stdout + proc.stderr).strip() or "cuobjdump failed")
        return proc.stdout


def _arch_major(arch: str) -> int | None:
    m = re.match(r"sm_(\d{1,2})\d", arch or "")
    return int(m.group(1)) if m else None


def instructions(compiled) -> list[Instruction]:
    """Every instruction of ``compiled`` with its control bits and (when the source map has it)
    the user's line. Disassembled once per Compiled (kept on it, and in the compile cache)."""
    cached = compiled.__dict__.get("_sass_instructions")
    if cached is not None:
        return cached
    major = _arch_major(compiled.arch)
    if major is not None and major < 7:
        from txlab.errors import ArchError

        raise ArchError(f"control bits are decoded for sm_70 and newer (128-bit instructions); "
                        f"{compiled.name} was compiled for {compiled.arch}")
    instrs = parse(_hex_text(compiled))
    _attach_lines(compiled, instrs)
    compiled.__dict__["_sass_instructions"] = instrs
    return instrs


def _hex_text(compiled) -> str:
    """The -hex disassembly, from the compile cache entry when it has it (added there on first use)."""
    from txlab import cache

    if compiled.key:
        files = cache.load(compiled.key)
        if files and HEX_FILE in files:
            return files[HEX_FILE].decode()
    text = disassemble(compiled.cubin)
    if compiled.key:
        cache.add_file(compiled.key, HEX_FILE, text)  # False (kept in memory only) when unwritable
    return text


HEX_FILE = "kernel.sass-hex"


def _attach_lines(compiled, instrs: list[Instruction]) -> None:
    """User lines from ``compiled.source_map`` (txlab.sourcemap) when the kernel has one."""
    lookup = line_lookup(compiled)
    if lookup is None:
        return
    for ins in instrs:
        ins.line = lookup(ins)


def line_lookup(compiled):
    """A function Instruction -> user line (int or None), or None when there is no source map.
    Reads the map's per-instruction records (``source_map.instructions``: kernel, offset,
    user_line), else asks ``source_map.line_of_sass(offset, kernel=...)``."""
    try:
        sm = compiled.source_map
    except Exception:  # no spans / no map: the line column stays empty
        return None
    if sm is None:
        return None
    records = getattr(sm, "instructions", None)
    if isinstance(records, (list, tuple)) and records:
        table = {}
        for r in records:
            get = r.get if isinstance(r, dict) else (lambda k, _r=r: getattr(_r, k, None))
            line = get("user_line") if get("user_line") is not None else get("line")
            if get("kernel") is not None and get("offset") is not None:
                table[(get("kernel"), int(get("offset")))] = line
        return lambda ins: table.get((ins.kernel, ins.offset))
    fn = getattr(sm, "line_of_sass", None)
    if fn is None:
        return None

    def by_offset(ins):
        try:
            return fn(ins.offset, kernel=ins.kernel)
        except (IndexError, KeyError, ValueError, TypeError):
            return None
    return by_offset


# ---------------------------------------------------------------------------------------------
COLUMNS = ("kernel", "offset", "predicate", "opcode", "operands", "stall", "yield", "wr_bar", "rd_bar",
           "wait_mask", "reuse", "control", "line", "cls")


@dataclass
class SassTable:
    """One row per SASS instruction: kernel, offset, predicate, opcode, operands, the control
    fields (stall, yield, wr_bar, rd_bar, wait_mask, reuse, and the ``control`` notation), the
    user's line (None until the source map is available) and the instruction class."""

    name: str
    arch: str
    rows: list[dict] = field(default_factory=list)
    html_rows: int = 400

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def filter(self, *, kernel: str | None = None, cls: str | None = None, line: int | None = None,
               opcode: str | None = None, padding: bool = False) -> "SassTable":
        """Rows that match every criterion given (``opcode`` is a regex searched in the opcode)."""
        rx = re.compile(opcode) if opcode else None
        rows = [r for r in self.rows
                if (kernel is None or r["kernel"] == kernel) and (cls is None or r["cls"] == cls)
                and (line is None or r["line"] == line) and (rx is None or rx.search(r["opcode"]))
                and (padding or not r["padding"])]
        return SassTable(self.name, self.arch, rows, self.html_rows)

    def histogram(self) -> dict[str, int]:
        """Instruction count per class (padding left out)."""
        out = {c: 0 for c in CLASSES}
        for r in self.rows:
            if not r["padding"]:
                out[r["cls"]] += 1
        return {c: n for c, n in out.items() if n}

    def plot(self, ax=None):
        """Instructions per class, and how many instructions stall for each cycle count."""
        from txlab.figures import side_by_side

        fig, axes = side_by_side(ax)
        hist = self.histogram()
        axes[0].bar(list(hist), list(hist.values()), color=[f"C{CLASSES.index(c)}" for c in hist])
        axes[0].set_title(f"{self.name}: instructions per class")
        stalls = [0] * 16
        for r in self.rows:
            if not r["padding"]:
                stalls[r["stall"]] += 1
        axes[1].bar(range(16), stalls)
        axes[1].set_xlabel("stall cycles (control field)")
        axes[1].set_title("instructions per stall count")
        fig.tight_layout()
        return fig

    def to_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch, "columns": list(COLUMNS) + ["padding", "encoding"],
                "rows": self.rows}

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS if c != "kernel")
        body = []
        kernel = None
        shown = [r for r in self.rows if not r["padding"]][: self.html_rows]
        for r in shown:
            if r["kernel"] != kernel:
                kernel = r["kernel"]
                body.append(f'<tr><th colspan="{len(COLUMNS) - 1}" style="text-align:left">{e(kernel)}</th></tr>')
            cells = []
            for c in COLUMNS:
                if c == "kernel":
                    continue
                v = r[c]
                if c == "offset":
                    v = f"{v:04x}"
                elif c == "wait_mask":
                    v = "".join(str(k) for k in range(6) if v >> k & 1) or "-"
                elif c == "reuse":
                    v = "".join("abcd"[i] for i in range(4) if v >> i & 1) or "-"
                elif c == "yield":
                    v = "Y" if v else "-"
                elif v is None:
                    v = "-"
                cells.append(f"<td>{e(str(v))}</td>")
            body.append(f'<tr class="txlab-sass-{e(r["cls"])}">{"".join(cells)}</tr>')
        more = len([r for r in self.rows if not r["padding"]]) - len(shown)
        note = f"<p>{more} more rows: use .rows or .to_dict()</p>" if more > 0 else ""
        return (f'<div class="txlab-sass-table"><b>{e(self.name)}</b> · {e(self.arch)} · '
                f"{len(shown) + max(more, 0)} instructions"
                f'<table style="font-family:monospace;font-size:12px"><thead><tr>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody></table>{note}</div>')


def table(compiled) -> SassTable:
    """The :class:`SassTable` of a Compiled (what ``Compiled.sass_table()`` returns)."""
    return SassTable(compiled.name, compiled.arch, [ins.row() for ins in instructions(compiled)])


def control_records(compiled) -> dict[tuple[str, int], dict]:
    """``{(kernel, offset): {"control": "B0-----:R-:W2:Y:S04", "stall": .., "cls": ..}}`` for
    widgets that show the control fields beside a SASS line (the SourceView's SASS pane)."""
    keep = ("control", "stall", "yield", "wr_bar", "rd_bar", "wait_mask", "reuse", "cls")
    return {(r["kernel"], r["offset"]): {k: r[k] for k in keep} for r in table(compiled).rows}


# ---------------------------------------------------------------------------------------------
# dependency barriers: who waits on whom
_DEPBAR = re.compile(r"\bSB(?P<bar>[0-5])\s*,\s*(?P<n>0x[0-9a-fA-F]+|\d+)")


def dependencies(instrs: list[Instruction]) -> list[dict]:
    """For each instruction (same order as ``instrs``): ``{"producers": [(i, bar, kind)],
    "consumers": [(i, bar, kind)]}`` through the dependency barriers (scoreboards SB0..SB5).

    Since Volta a barrier is a counter: a variable-latency instruction increments its write
    barrier (``kind "w"``: released when the result is written) and/or read barrier (``"r"``:
    released when its source registers have been read) at issue; an instruction whose wait mask
    has bit k issues only when SBk is back to zero, i.e. after *every* instruction that set SBk
    since the previous wait on it. ``DEPBAR.LE SBk, n`` waits until at most n are outstanding (the
    n most recent stay in flight). The walk follows program order within each kernel (straight
    line: a barrier set before a loop's back-edge and waited on at the loop's head is not
    linked; such a wait has no producer here)."""
    out = [{"producers": [], "consumers": []} for _ in instrs]
    outstanding: dict[int, list] = {}
    kernel = object()
    for i, ins in enumerate(instrs):
        if ins.kernel != kernel:
            kernel, outstanding = ins.kernel, {b: [] for b in range(6)}
        c = ins.control
        for b in c.waits_on:
            for j, kind in outstanding[b]:
                out[i]["producers"].append((j, b, kind))
                out[j]["consumers"].append((i, b, kind))
            outstanding[b] = []
        if ins.opcode.startswith("DEPBAR"):
            m = _DEPBAR.search(ins.operands)
            if m:
                b, keep = int(m.group("bar")), int(m.group("n"), 0)
                pending = outstanding[b]
                done = pending[: max(0, len(pending) - keep)]
                for j, kind in done:
                    out[i]["producers"].append((j, b, kind))
                    out[j]["consumers"].append((i, b, kind))
                outstanding[b] = pending[len(done):]
        if c.wr_bar is not None:
            outstanding[c.wr_bar].append((i, "w"))
        if c.rd_bar is not None:
            outstanding[c.rd_bar].append((i, "r"))
    return out
