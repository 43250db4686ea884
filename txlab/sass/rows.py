"""The SASS table: one row per instruction with its control fields, class and user line
(``Compiled.sass_table()``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from txlab.sass.opcodes import CLASSES

COLUMNS = (
    "kernel",
    "offset",
    "predicate",
    "opcode",
    "operands",
    "stall",
    "yield",
    "wr_bar",
    "rd_bar",
    "wait_mask",
    "reuse",
    "control",
    "line",
    "cls",
)


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

    def filter(
        self,
        *,
        kernel: str | None = None,
        cls: str | None = None,
        line: int | None = None,
        opcode: str | None = None,
        padding: bool = False,
    ) -> "SassTable":
        """Rows that match every criterion given (``opcode`` is a regex searched in the opcode)."""
        rx = re.compile(opcode) if opcode else None
        rows = [
            r
            for r in self.rows
            if (kernel is None or r["kernel"] == kernel)
            and (cls is None or r["cls"] == cls)
            and (line is None or r["line"] == line)
            and (rx is None or rx.search(r["opcode"]))
            and (padding or not r["padding"])
        ]
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
            if not r["padding"] and r["stall"] is not None:
                stalls[r["stall"]] += 1
        axes[1].bar(range(16), stalls)
        axes[1].set_xlabel("stall cycles (control field)")
        axes[1].set_title("instructions per stall count")
        fig.tight_layout()
        return fig

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "arch": self.arch,
            "columns": list(COLUMNS) + ["padding", "encoding", "cuda_line", "live_registers"],
            "rows": self.rows,
        }
