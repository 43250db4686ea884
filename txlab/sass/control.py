"""Scheduling control field of sm_70+ SASS, and the dependency-barrier links it implies.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTROL_SHIFT = 41  # control field = hi 64-bit word >> 41 (instruction bits 105..127)
NO_BARRIER = 7


@dataclass(frozen=True)
class Control:
    """Decoded scheduling control field of one sm_70+ instruction."""

    stall: int
    yield_: bool  # True: the warp scheduler may switch warps after this instruction
    wr_bar: int | None  # barrier set when the result is written (None: none)
    rd_bar: int | None  # barrier set when the sources have been read (None: none)
    wait_mask: int  # bit k: wait on barrier k before issuing
    reuse: int  # bit i: keep source operand slot i in the reuse cache
    raw: int  # the 23-bit field as found

    @classmethod
    def from_hi(cls, hi: int) -> "Control":
        """From the second (high) 64-bit word of the instruction, as nvdisasm prints it."""
        return cls.from_field((hi >> CONTROL_SHIFT) & ((1 << 23) - 1))

    @classmethod
    def from_field(cls, c: int) -> "Control":
        wr = (c >> 5) & 7
        rd = (c >> 8) & 7
        return cls(
            stall=c & 0xF,
            yield_=not ((c >> 4) & 1),
            wr_bar=None if wr == NO_BARRIER else wr,
            rd_bar=None if rd == NO_BARRIER else rd,
            wait_mask=(c >> 11) & 0x3F,
            reuse=(c >> 17) & 0xF,
            raw=c,
        )

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
        if c is None:  # no encoding (pre-Volta): no barriers to follow
            continue
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
                outstanding[b] = pending[len(done) :]
        if c.wr_bar is not None:
            outstanding[c.wr_bar].append((i, "w"))
        if c.rd_bar is not None:
            outstanding[c.rd_bar].append((i, "r"))
    return out
