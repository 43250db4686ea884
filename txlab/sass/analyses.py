"""SASS analyses of a ``Compiled``, in one registry: what tuning's facts, the GEMM's summary, the
profiler and SourceView read from the SASS, each computed from the one instruction list
(:func:`instructions`).

    txlab.sass.analyses.names()                 # ['classes', 'dependencies', 'live_registers', ...]
    txlab.sass.analyse(compiled, "summary")     # {'hgmma': 64, 'local_ldst': 0, ...}

An analysis is a function ``f(compiled) -> value`` registered with :func:`analysis`.
"""

from __future__ import annotations

import re
from typing import Callable

from txlab.sass.control import dependencies
from txlab.sass.opcodes import CLASSES, base, is_local

_REGISTRY: dict[str, Callable] = {}


def analysis(name: str):
    """Register ``f(compiled)`` as the SASS analysis ``name``."""

    def register(fn):
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"a SASS analysis named {name!r} is already registered")
        _REGISTRY[name] = fn
        return fn

    return register


def names() -> list[str]:
    """The registered analyses."""
    return sorted(_REGISTRY)


def analyse(compiled, name: str):
    """The value of analysis ``name`` for ``compiled``."""
    from txlab.errors import InputError

    if name not in _REGISTRY:
        raise InputError(f"no SASS analysis named {name!r}: choose one of {', '.join(names())}")
    return _REGISTRY[name](compiled)


def _arch_major(arch: str) -> int | None:
    m = re.match(r"sm_(\d{1,2})\d", arch or "")
    return int(m.group(1)) if m else None


def instructions(compiled) -> list:
    """Every instruction of ``compiled`` (:class:`txlab.sass.Instruction`): with the user's line
    when the kernel has a line map (the map's own records: ``compiled.source_map.instructions``),
    else as the listing has them. From one disassembly per Compiled."""
    from txlab.errors import ArchError, CompileError

    major = _arch_major(compiled.arch)
    if major is not None and major < 7:
        raise ArchError(
            f"control bits are decoded for sm_70 and newer (128-bit instructions); "
            f"{compiled.name} was compiled for {compiled.arch}"
        )
    try:
        return compiled.source_map.instructions
    except CompileError:  # no spans: no user lines
        return compiled.sass_listing.instructions


# ---- the registry ---------------------------------------------------------------------------
@analysis("classes")
def classes(compiled) -> dict[str, int]:
    """Instruction count per class (padding left out)."""
    out = {c: 0 for c in CLASSES}
    for i in instructions(compiled):
        if not i.padding:
            out[i.cls] += 1
    return {c: n for c, n in out.items() if n}


@analysis("opcodes")
def opcode_counts(compiled) -> dict[str, int]:
    """Instruction count per base opcode (``LDG`` for ``LDG.E.128``), every instruction counted."""
    counts: dict[str, int] = {}
    for i in compiled.sass_listing.instructions:
        op = base(i.opcode)
        counts[op] = counts.get(op, 0) + 1
    return counts


#: the opcodes the summary counts (tuning's facts show them per configuration)
SUMMARY_OPCODES = (
    "HGMMA",
    "QGMMA",  # FP8 wgmma
    "HMMA",
    "UTMALDG",
    "UTMASTG",
    "LDG",
    "STG",
    "LDS",
    "STS",
    "LDL",
    "STL",
    "BAR",
    "SYNCS",
    "USETMAXREG",
    "BRA",
)


@analysis("summary")
def summary(compiled) -> dict:
    """What to check before timing, for the first device kernel's resources and the SASS of all:
    registers, spills, stack, dynamic shared memory, HGMMA count and shapes, HMMA, local-memory
    loads/stores, ``USETMAXREG``, ptxas's warnings, the instruction total and the counts of
    :data:`SUMMARY_OPCODES` (those present)."""
    name = compiled.kernels[0] if compiled.kernels else compiled.name
    res = compiled.resources.get(name, {})
    instrs = compiled.sass_listing.instructions
    counts = opcode_counts(compiled)
    hgmma = [i for i in instrs if i.opcode.startswith("HGMMA")]
    warnings = [
        l.strip() for l in compiled.ptxas_report.splitlines() if "warning" in l.lower() or "performance" in l.lower()
    ]
    return {
        "kernel": name,
        "registers": res.get("registers"),
        "spill_store_bytes": res.get("spill_store_bytes"),
        "spill_load_bytes": res.get("spill_load_bytes"),
        "stack_bytes": res.get("stack_bytes"),
        "dynamic_smem_bytes": res.get("dynamic_smem_bytes"),
        "hgmma": len(hgmma),
        "hgmma_shapes": sorted({i.opcode for i in hgmma}),
        "hmma": sum(1 for i in instrs if i.opcode.startswith("HMMA")),
        "local_ldst": sum(1 for i in instrs if is_local(i.opcode)),
        "setmaxnreg": sum(1 for i in instrs if i.opcode.startswith("USETMAXREG")),
        "ptxas_warnings": warnings,
        "sass_instructions": len(instrs),
        "sass": {k: counts[k] for k in SUMMARY_OPCODES if counts.get(k)},
    }


@analysis("dependencies")
def dependencies(compiled) -> list[dict]:
    """Producer/consumer links through the dependency barriers, per instruction
    (:func:`txlab.sass.dependencies` over :func:`instructions`)."""
    return dependencies(instructions(compiled))


@analysis("live_registers")
def live_registers(compiled) -> dict:
    """``{"per_line": {user line: max live GPRs}, "max": n, "unknown": reason or None}`` from
    ``nvdisasm --print-life-ranges`` through the line map."""
    sm = compiled.source_map
    why = sm.load_live_registers()
    if why:
        return {"per_line": {}, "max": None, "unknown": why}
    per = {line: d.get("live_registers") for line, d in sm.per_line(live=True).items()}
    known = [n for n in per.values() if n is not None]
    return {"per_line": per, "max": max(known) if known else None, "unknown": None}


@analysis("local_memory")
def local_memory(compiled) -> dict:
    """``{user line: {"loads", "stores", "kind"}}`` for the lines whose SASS touches local memory
    (``kind`` "spill" when ptxas reported spills, else "local array")."""
    sm = compiled.source_map
    return {line: d["local"] for line, d in sm.per_line().items() if "local" in d}


def table(compiled):
    """The :class:`txlab.sass.SassTable` of a Compiled (what ``Compiled.sass_table()`` returns)."""
    from txlab.sass.rows import SassTable

    return SassTable(compiled.name, compiled.arch, [ins.row() for ins in instructions(compiled)])


def control_records(compiled) -> dict[tuple[str, int], dict]:
    """``{(kernel, offset): {"control": "B0-----:R-:W2:Y:S04", "stall": .., "cls": ..}}``."""
    keep = ("control", "stall", "yield", "wr_bar", "rd_bar", "wait_mask", "reuse", "cls")
    return {(r["kernel"], r["offset"]): {k: r[k] for k in keep} for r in table(compiled).rows}


def line_lookup(compiled):
    """Deprecated: a function Instruction -> user line, or None without a line map. The records
    of :func:`instructions` carry ``user_line`` themselves."""
    from txlab.errors import CompileError

    try:
        sm = compiled.source_map
    except CompileError:
        return None
    return lambda ins: sm.line_of_sass(ins.offset, kernel=ins.kernel)
