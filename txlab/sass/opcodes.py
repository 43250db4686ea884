"""The one opcode classifier of txlab: every question "what kind of SASS instruction is this"
(class, predicate, base opcode, family, local memory) is answered here, from the opcode text
nvdisasm prints. Used by the SASS table, the line map (SourceView), ``txlab.diff``, the profiler,
tuning facts and the GEMM's summary."""

from __future__ import annotations

import re

#: the instruction classes of :func:`classify`, in display order
CLASSES = ("memory", "tensor", "barrier", "control", "warp", "alu", "other")

_TENSOR = re.compile(r"^(HMMA|IMMA|DMMA|BMMA|HGMMA|IGMMA|QGMMA|BGMMA|OMMA|QMMA|UTC\w*MMA)\b")
_BARRIER = re.compile(
    r"^(BAR|B2R|R2B|SYNCS|DEPBAR|LDGDEPBAR|MEMBAR|FENCE|ERRBAR|CGAERRBAR|WARPSYNC|"
    r"ARRIVES|WARPGROUP|UCGABAR\w*|CCTL\w*|UTCBAR|ACQBULK|ACQSHMINIT)\b"
)
_MEMORY = re.compile(
    r"^(LD|LDG|LDS|LDL|LDC|ULDC|LDSM|LDTM|ST|STG|STS|STL|STSM|STTM|ATOM|ATOMG|ATOMS|"
    r"RED|REDG|REDAS|LDGSTS|SULD|SUST|SUATOM|SURED|TEX|TLD|TLD4|TMML|TXD|TXQ|"
    r"UTMA\w*|UBLK\w*|UTCCP|UTCSHIFT)\b"
)
_CONTROL = re.compile(
    r"^(BRA|BRX|BRXU|JMP|JMX|JMXU|CALL|RET|EXIT|BSSY|BSYNC|BREAK|BPT|KILL|NANOSLEEP|"
    r"YIELD|RTT|BMOV|PREEXIT|ENDCOLLECTIVE)\b"
)
_WARP = re.compile(r"^(SHFL|VOTE|VOTEU|MATCH|REDUX|CREDUX|ELECT|UVOTE)\b")
_OTHER = re.compile(
    r"^(NOP|S2R|S2UR|CS2R|PMTRIG|SETCTAID|SETLMEMBASE|GETLMEMBASE|USETMAXREG|"
    r"UGETNEXTWORKID|VIRTCOUNT)\b"
)


def classify(opcode: str) -> str:
    """The class of an opcode (with or without modifiers): one of :data:`CLASSES`.
    memory: loads/stores/atomics/TMA/texture; tensor: MMA of every generation (HMMA..UTC*MMA);
    barrier: CTA/mbarrier/scoreboard/memory barriers and fences; control: branches, calls, exit,
    convergence; warp: shuffles/votes/warp reductions; other: special registers, NOP, register
    reconfiguration; alu: the rest (integer, floating point, MUFU, conversions, predicates)."""
    op = base(opcode)
    for cls, rx in (
        ("tensor", _TENSOR),
        ("barrier", _BARRIER),
        ("memory", _MEMORY),
        ("control", _CONTROL),
        ("warp", _WARP),
        ("other", _OTHER),
    ):
        if rx.match(op):
            return cls
    return "alu"


_PRED = re.compile(r"^(?P<pred>@!?U?P(?:T|\d+))\s+(?P<rest>.*)$")


def split_predicate(text: str) -> tuple[str, str]:
    """('@!P0', 'BRA `(.L_x_3)') for '@!P0 BRA `(.L_x_3)'; ('', text) when unpredicated."""
    text = text.strip()
    m = _PRED.match(text)
    return (m.group("pred"), m.group("rest")) if m else ("", text)


def opcode_of(text: str) -> str:
    """The opcode with modifiers, predicate excluded: '@!P0 SYNCS.ARRIVE.TRANS64 ...' -> 'SYNCS.ARRIVE.TRANS64'."""
    body = split_predicate(text)[1]
    return body.split()[0] if body else ""


def base(opcode: str) -> str:
    """The opcode without modifiers: 'LDG.E.128.CONSTANT' -> 'LDG'."""
    return opcode.split(".", 1)[0]


def is_local(opcode: str) -> bool:
    """A local-memory load or store (``LDL``/``STL``): register spills, or a per-thread array that
    is indexed at run time (ptxas's report says which: its spill byte counts)."""
    return base(opcode) in ("LDL", "STL")


# SASS families whose PTX origin is unmistakable (the line map moves an instruction that ptxas
# gave a neighbour's line to the nearest line whose PTX has the family's instruction)
FAMILIES = {
    "wgmma": re.compile(r"^(HGMMA|IGMMA|QGMMA|BGMMA)"),
    "bulk_copy": re.compile(r"^(UTMALDG|UTMASTG|UBLKCP)"),
    "mma": re.compile(r"^(HMMA|IMMA)"),
}


def family(opcode: str) -> str | None:
    """'wgmma', 'bulk_copy' or 'mma' for the opcodes of :data:`FAMILIES`, else None."""
    return next((name for name, rx in FAMILIES.items() if rx.match(opcode)), None)


#: CTA barriers: SASS ``BAR.SYNC`` / ``BAR.ARV`` / ``BAR.RED`` (PTX ``bar.sync`` / ``barrier.sync``, ``bar.arrive``,
#: ``bar.red``), by what they do
_BAR_OP = {"SYNC": "sync", "ARV": "arrive", "RED": "red"}


def barrier_kind(opcode: str) -> tuple | None:
    """``("bar", "sync" | "arrive" | "red")`` for a CTA barrier (``BAR.SYNC.DEFER_BLOCKING`` -> ``("bar", "sync")``),
    as the line map pairs it with PTX's ``bar``/``barrier`` instructions; None for anything else (``WARPSYNC`` too)."""
    parts = opcode.split(".")
    if parts[0] != "BAR" or len(parts) < 2 or parts[1] not in _BAR_OP:
        return None
    return ("bar", _BAR_OP[parts[1]])


_MEM_SPACE = {"LDG": ("ld", "global"), "STG": ("st", "global"), "LDS": ("ld", "shared"), "STS": ("st", "shared")}


_ATOMIC_SPACE = {"ATOMG": "global", "REDG": "global", "ATOMS": "shared"}


def memory_kind(opcode: str) -> tuple | None:
    """What a global/shared load or store moves, as the line map pairs it with PTX:
    ``("ld" | "st", "global" | "shared", bits)`` (``LDG.E.128`` -> ``("ld", "global", 128)``);
    ``("atomic", "global" | "shared")`` for ``ATOMG``/``REDG``/``ATOMS`` (PTX ``atom``/``red``;
    ptxas makes an ``atom`` whose result is unused a ``REDG``); ``("mma",)`` for ``HMMA``/``IMMA``;
    ``("cp.async",)`` for ``LDGSTS``; ``("mbarrier", "init")`` for ``SYNCS.EXCH.64`` (what ``mbarrier.init``
    assembles to on sm_90); None for anything else."""
    if opcode.startswith(("HMMA", "IMMA")):
        return ("mma",)
    if opcode.startswith("SYNCS.EXCH.64"):
        return ("mbarrier", "init")
    if opcode.startswith("LDGSTS"):
        return ("cp.async",)
    if base(opcode) in _ATOMIC_SPACE:
        return ("atomic", _ATOMIC_SPACE[base(opcode)])
    space = _MEM_SPACE.get(base(opcode))
    if space is None:
        return None
    mods = set(opcode.split(".")[1:])
    bits = (
        128
        if "128" in mods
        else 64
        if "64" in mods
        else 16
        if {"U16", "S16"} & mods
        else 8
        if {"U8", "S8"} & mods
        else 32
    )
    return (*space, bits)
