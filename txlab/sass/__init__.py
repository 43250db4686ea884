"""SASS, in one place: the one nvdisasm caller (``listing``: one disassembly per cubin and flag
set, cached), the one instruction record (``record``), the opcode classifier (``opcodes``),
control-bit decoding (``control``), the SASS table (``rows``) and the SASS analyses (``analyses``).

    compiled.sass                       # the text (nvdisasm -c)
    compiled.sass_listing.instructions  # Instruction records: text, encoding, control, CUDA line, frames
    compiled.sass_table()               # SassTable: rows, to_dict(), _repr_html_()
    txlab.sass.instructions(compiled)   # the records with the user's line (the line map's)
    txlab.sass.analyse(compiled, "summary")

Pure Python; no Jupyter imports. Re-exports only.
"""

from __future__ import annotations

from txlab.sass.analyses import (
    SUMMARY_OPCODES,
    analyse,
    analysis,
    classes,
    control_records,
    instructions,
    line_lookup,
    live_registers,
    local_memory,
    names,
    opcode_counts,
    summary,
    table,
)
from txlab.sass.analyses import _arch_major  # noqa: F401 (old private name)
from txlab.sass.control import CONTROL_SHIFT, NO_BARRIER, Control, dependencies
from txlab.sass.listing import (
    LIFE,
    LINES,
    ONE,
    Listing,
    cuda_line_table,
    disassemble,
    of_cubin,
    parse_life,
    run_disassembler,
)
from txlab.sass.listing import parse_encoded as parse
from txlab.sass.opcodes import CLASSES, FAMILIES, base, classify, family, is_local, opcode_of, split_predicate
from txlab.sass.record import Instruction
from txlab.sass.rows import COLUMNS, SassTable

__all__ = [
    "CLASSES",
    "COLUMNS",
    "CONTROL_SHIFT",
    "Control",
    "FAMILIES",
    "Instruction",
    "LIFE",
    "LINES",
    "Listing",
    "ONE",
    "NO_BARRIER",
    "SUMMARY_OPCODES",
    "SassTable",
    "analyse",
    "analysis",
    "base",
    "classes",
    "classify",
    "control_records",
    "cuda_line_table",
    "dependencies",
    "disassemble",
    "family",
    "instructions",
    "is_local",
    "line_lookup",
    "live_registers",
    "local_memory",
    "names",
    "of_cubin",
    "opcode_counts",
    "opcode_of",
    "parse",
    "parse_life",
    "run_disassembler",
    "split_predicate",
    "summary",
    "table",
]
