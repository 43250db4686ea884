"""One SASS instruction: the one record every part of txlab reads (the SASS table, the line map and
SourceView, ``txlab.diff``, the profiler, tuning facts).

Built by :mod:`txlab.sass.listing` from one nvdisasm run (text, encoding and control field, live
registers) and the cubin's line tables (CUDA line and inline frames); the line map (:class:`txlab.sourcemap.SourceMap`)
adds the user's line and the library the instruction was inlined from, by making new records
(``dataclasses.replace``): a record is never changed once made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from txlab.sass.control import Control


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction of one kernel and where it came from."""

    kernel: str
    index: int  # position in the listing (every kernel, in order)
    offset: int  # byte offset in the kernel's .text section
    predicate: str  # '@P0', '@!UPT', ... or ''
    opcode: str  # with modifiers: 'LDG.E.128.CONSTANT'
    operands: str
    lo: int | None = None  # the two 64-bit words of the encoding (None: not disassembled with -hex)
    hi: int | None = None
    control: Control | None = None  # decoded control field (sm_70+)
    cls: str = "alu"  # txlab.sass.classify: memory | tensor | barrier | control | warp | alu | other
    padding: bool = False  # the end-of-kernel self-branch and NOPs (not the user's code)
    cuda_line: int | None = None  # kernel.cu line (outermost inline frame in the kernel's file)
    inline: tuple = ()  # inline frames, innermost first: ("helpers.h:97", ..., "kernel.cu:277")
    inner_cuda: tuple = ()  # kernel.cu lines of the inner frames (CUDA helpers it was inlined from)
    sass_line: int = 0  # 1-based line in Compiled.sass
    user_line: int | None = None  # the user's (TVMScript) line: set by the line map
    library: str | None = None  # TVM library function the statement was inlined from
    cuda_helper: str | None = None  # CUDA helper function (TVM's preamble) it was inlined from
    moved_from: int | None = None  # user line -lineinfo named, when the line map corrected it
    live_registers: int | None = None  # GPRs live at this instruction (nvdisasm --print-life-ranges)
    live: dict | None = field(default=None, compare=False)  # {"gpr", "pred", "ugpr", "upred"} counts

    @property
    def text(self) -> str:
        """As nvdisasm prints it, predicate kept, ';' dropped: '@P0 BRA `(.L_x_3)'."""
        body = f"{self.opcode} {self.operands}".strip()
        return f"{self.predicate} {body}" if self.predicate else body

    @property
    def line(self) -> int | None:
        """The user's line (the SASS table's ``line`` column)."""
        return self.user_line

    @property
    def encoding(self) -> str | None:
        return None if self.hi is None or self.lo is None else f"0x{self.hi:016x}{self.lo:016x}"

    def row(self) -> dict:
        """The SASS table's row: the control fields spelled out, ``index`` in the kernel."""
        c = self.control
        return {
            "kernel": self.kernel,
            "index": self.offset // 16,
            "offset": self.offset,
            "predicate": self.predicate,
            "opcode": self.opcode,
            "operands": self.operands,
            "stall": c.stall if c else None,
            "yield": c.yield_ if c else None,
            "wr_bar": c.wr_bar if c else None,
            "rd_bar": c.rd_bar if c else None,
            "wait_mask": c.wait_mask if c else None,
            "reuse": c.reuse if c else None,
            "control": c.text() if c else None,
            "line": self.user_line,
            "cls": self.cls,
            "padding": self.padding,
            "encoding": self.encoding,
            "cuda_line": self.cuda_line,
            "live_registers": self.live_registers,
        }

    def to_dict(self, keys: tuple[str, ...] | None = None) -> dict:
        """Every field (the control field as its notation), ``text`` and ``encoding``, JSON-ready;
        only ``keys``, in that order, when given."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "control":
                v = v.text() if v is not None else None
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        out["text"] = self.text
        out["encoding"] = self.encoding
        return out if keys is None else {k: out[k] for k in keys}
