"""CUDA → PTX → SASS: line information read from the toolchain's text.

CUDA C function extents, PTX ``.loc`` directives (nvcc ``-lineinfo``) and ``nvdisasm -gi``
listings (line info with the inline chain): each PTX line and SASS instruction gets the CUDA line
of its outermost inline frame in ``kernel.cu``.
"""
from __future__ import annotations

import os
import re

from txlab.ir.cuda_text import cuda_functions  # noqa: F401 (the one CUDA function-extent scanner)
from txlab.sass import classify  # the one instruction classifier (also the SASS table's and diff's)

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

