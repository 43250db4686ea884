"""CUDA → PTX: line information read from the toolchain's text.

CUDA C function extents and PTX ``.loc`` directives (nvcc ``-lineinfo``): each PTX line gets the
CUDA line of its outermost inline frame in ``kernel.cu``. SASS instructions get theirs from
``nvdisasm -gi`` in :mod:`txlab.sass.listing`.
"""

from __future__ import annotations

import os
import re

from txlab.ir.cuda_text import cuda_functions  # noqa: F401 (the one CUDA function-extent scanner)
from txlab.sass.opcodes import classify, opcode_of  # noqa: F401 (re-exported: the one classifier)

_FILE_DIR = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_LOC = re.compile(
    r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:,\s*function_name\s+[^,]+,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?"
)


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
        if (
            not stripped
            or stripped.startswith(("//", "."))
            or stripped in ("{", "}")
            or stripped.endswith(":")
            or stripped.startswith("$")
        ):
            out.append(None if not stripped.startswith("$") else current)
            if stripped.startswith((".visible", ".entry", ".func")):
                current = None
            continue
        out.append(current)
    return out


def parse_sass_with_lines(text: str, cuda_name: str = "kernel.cu"):
    """Deprecated: (plain SASS text, [instruction dicts]) of ``nvdisasm -c -gi`` output; use
    :func:`txlab.sass.listing.parse`, which gives :class:`txlab.sass.Instruction` records."""
    from txlab.sass.listing import parse

    plain, instrs = parse(text, cuda_name)
    return plain, [
        dict(
            kernel=i.kernel,
            offset=i.offset,
            text=i.text,
            opcode=i.opcode,
            cls=i.cls,
            cuda_line=i.cuda_line,
            inline=list(i.inline),
            inner_cuda=list(i.inner_cuda),
            sass_line=i.sass_line,
        )
        for i in instrs
    ]
