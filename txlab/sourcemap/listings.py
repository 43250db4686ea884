"""CUDA → PTX: line information read from the toolchain's text.

CUDA C function extents and PTX ``.loc`` directives (nvcc ``-lineinfo``): each PTX line gets the
CUDA line of its outermost inline frame in ``kernel.cu`` (the chains are read by
:mod:`txlab.sass.lines`, which also gives SASS instructions theirs).
"""

from __future__ import annotations

import os

from txlab.ir.cuda_text import cuda_functions  # noqa: F401 (the one CUDA function-extent scanner)
from txlab.sass.lines import ptx_frames
from txlab.sass.opcodes import classify, opcode_of  # noqa: F401 (re-exported: the one classifier)


def ptx_cuda_lines(ptx: str, cuda_name: str = "kernel.cu") -> list[int | None]:
    """For each PTX line (0-based), the kernel.cu line it came from (outermost inline frame of the
    ``.loc`` in force: :func:`txlab.sass.lines.ptx_frames`); None on directives, blank lines and
    braces, and where no location is in force."""
    files, frames = ptx_frames(ptx)
    cu = {k for k, v in files.items() if os.path.basename(v) == cuda_name}
    out: list[int | None] = []
    for line, chain in zip(ptx.splitlines(), frames):
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", ".")) or stripped in ("{", "}") or stripped.endswith(":"):
            if not stripped.startswith("$"):
                out.append(None)
                continue
        out.append(chain[-1][1] if chain and chain[-1][0] in cu else None)
    return out


def parse_sass_with_lines(text: str, cuda_name: str = "kernel.cu"):
    """Deprecated: (plain SASS text, [instruction dicts]) of ``nvdisasm -c -gi`` output; use
    :func:`txlab.sass.listing.parse`, which gives :class:`txlab.sass.Instruction` records."""
    from txlab.sass.listing import parse

    plain, instrs = parse(text, cuda_name)
    keys = ("kernel", "offset", "text", "opcode", "cls", "cuda_line", "inline", "inner_cuda", "sass_line")
    return plain, [i.to_dict(keys) for i in instrs]
