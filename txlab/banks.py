"""Shared-memory bank conflicts of every access in a kernel, from the index expressions it runs.

For each shared-memory load and store of the lowered device code (``T.alloc_shared`` buffers and
SMEMPool buffers alike: swizzles and padding are already folded into the flat index there), the
index is evaluated for every thread of a CTA and every iteration of the enclosing loops
(:mod:`txlab.simt`), and each warp's access is split into wavefronts the way the shared-memory
unit serves it:

* shared memory has 32 banks of 4 bytes; bank = (byte address / 4) mod 32;
* one wavefront serves at most 128 bytes: a 4-byte (or narrower) access is served for all 32 lanes
  together, an 8-byte access per half warp (16 lanes), a 16-byte access per quarter warp (8 lanes);
* within one such group, lanes that touch *different* 4-byte words of the same bank are serialised
  (the same word is broadcast): the group needs as many wavefronts as the busiest bank has distinct
  words. ``ways`` is that number (1 = conflict-free ... 32); ``wavefronts`` sums it over the groups.

Totals are per CTA (CTA 0 unless ``cta=`` says otherwise) and for the whole grid, in the units
Nsight Compute reports
(``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}``, ``..._bank_conflicts_...`` =
wavefronts beyond the ideal). Bank patterns do not depend on the CTA index unless the shared
index does: where a grid has more CTAs, a second one and the last one are walked too (as
:mod:`txlab.coalescing` does, :func:`txlab.simt.compare_other_cta`) and an access whose wavefronts or
instruction count differ there is ``partial``, its reason giving both (the grid totals then scale CTA 0's);
an access only such a CTA reaches is a ``partial`` row too. An access no walk reaches is walked to where a guard on
its path names a CTA or a loop iteration (``if bx == 5``; ``if k == 700`` past the iterations followed; a cluster
rank), its row ``partial`` saying so; else it is an ``unknown`` row naming the CTAs and iterations walked and the guard
it runs under (:func:`walk_sites`, which :mod:`txlab.coalescing` uses too). The headline counts partly unknown rows
apart from the analysed ones.

Every shared access of the code is a row, each with a definite answer or ``status="unknown"`` and
the reason:

* shared atomics (``ATOMS``; lanes on one word are serialised, not broadcast, so they count as
  separate wavefronts) are analysed from their ``address_of`` argument; one the SASS implements
  as a compare-and-swap loop (``atomicAdd`` of a float on sm_90: ``LDS`` + ``ATOMS.CAST.SPIN``)
  is ``partial``, as its wavefronts depend on how often lanes retry; one nvcc aggregates over the warp
  (``atomicAdd(&cnt, 1)``: ``ATOMS.POPC.INC``; a leader lane's ``@P ATOMS.ADD`` after ``VOTEU.ANY``/``FLO``)
  counts one lane per warp for each distinct address, its row saying so;
* ``ldmatrix`` / ``stmatrix`` ``.m8n8`` ``.x1/.x2/.x4`` (LDSM / STSM): each 8x8 matrix is 8 rows of
  16 bytes whose addresses come from 8 lanes (lanes 0-7 the first matrix, 8-15 the second, ...;
  ``.trans`` moves data between lanes, not the rows read), served 8 rows = 128 bytes per wavefront,
  so a matrix whose rows fall on the same banks costs as many wavefronts as rows share them;
* ``cp.async`` (LDGSTS) is ``unknown``: Nsight Compute's wavefronts for its shared write do not
  follow the load/store model (measured on the H200), so no figure is given;
* TMA (``cp.async.bulk[.tensor]``) and wgmma operands are read or written by the *async proxy*,
  not the load/store unit: rows with ``status="async"`` (``ways``/``conflicts`` None, never
  "conflict-free") naming the swizzle of the tensor map (host side) or matrix descriptor. A TMA
  row has no wavefronts (Nsight Compute's source view counts none there); a wgmma row is placed at
  the wgmma (not the descriptor) and carries the wavefronts ncu's source view counts for it, all
  ideal: its shared operands' bytes / 128 per warpgroup (measured on the H200);
* the compiler may merge consecutive accesses of an unrolled loop into one wider instruction (two
  fp16 stores into an ``STS``, four floats into an ``LDS.128``): for a ``txlab.Compiled`` the
  line's LDS/STS widths in the SASS decide, and those executions are counted as the one access
  they became; two accesses of one line whose addresses follow each other (``sm[2 * tx] + sm[2 * tx + 1]``:
  one ``LDS.64``) are counted as that access at the first one's row, the other saying so with no
  instructions of its own; an access whose line has no LDS/STS in the SASS (merged into another line's,
  or removed), or a load that repeats an earlier line's where the line's LDS move fewer bytes than its loads by
  exactly that one's (the compiler kept the earlier value), is ``partial`` with ``not_in_sass`` set, and left
  out of :meth:`BankReport.totals`;
* an index that depends on a value read from memory, or a shared access made by an instruction
  whose per-lane addresses the walk does not model, is ``unknown``, never conflict-free.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import asdict, dataclass, field

import numpy as np

from txlab import simt

BANKS = 32
BANK_BYTES = 4
WAVEFRONT_BYTES = 128


@dataclass
class BankAccess:
    """One shared-memory access site of the kernel (one load or store in the code)."""

    buffer: str
    lineno: int | None
    access: str  # "load" or "store"
    ways: int | None  # worst bank conflict of one group of lanes (1 = none; None = unknown)
    wavefronts: int  # wavefronts of the worst warp-instruction
    ideal_wavefronts: int  # wavefronts that instruction needs without conflicts
    bytes_per_lane: int  # access width of one lane (4, 8, 16 ...)
    lanes: list  # the lanes that collide in the worst case (same bank, distinct words)
    bank: int | None  # the bank they collide in
    instructions: int  # warp-level executions per CTA
    total_wavefronts: int  # per CTA
    total_ideal_wavefronts: int  # per CTA
    grid_ctas: int | None = None
    source: str | None = None  # the user's source line
    dtype: str = ""
    notes: list = field(default_factory=list)
    banks: list = field(default_factory=list)  # bank of each lane (lane order) in the worst case
    status: str = "analysed"  # "analysed", "partial" (some executions unknown), "async" (TMA/wgmma) or "unknown"
    reason: str = ""  # why (part of) the access could not be analysed
    #: the SASS of its line does not make it (the compiler reused a value loaded on another line, merged the access
    #: into another one or removed it): partial, and left out of :meth:`BankReport.totals`
    not_in_sass: bool = False

    @property
    def conflicts(self) -> int | None:
        """Wavefronts beyond the ideal, per CTA (Nsight Compute's 'bank conflicts'); None if unknown."""
        if self.status in ("unknown", "async"):
            return None
        return self.total_wavefronts - self.total_ideal_wavefronts

    def to_dict(self) -> dict:
        d = asdict(self)
        d["conflicts"] = self.conflicts
        if self.grid_ctas and self.conflicts is not None:
            d["grid_wavefronts"] = self.total_wavefronts * self.grid_ctas
            d["grid_conflicts"] = self.conflicts * self.grid_ctas
        return d


class BankReport(simt.AccessReport):
    """A list of :class:`BankAccess` rows with a table view and totals."""

    buffer_width = 12

    def totals(self) -> dict:
        """Per-CTA and per-grid wavefronts and conflicts of loads and stores (an access the SASS does not make on its
        line, ``not_in_sass``, left out: the hardware does not make it there)."""
        out = {}
        known = [r for r in self if r.status not in ("unknown", "async") and not r.not_in_sass]
        others = sorted({r.access for r in known} - {"load", "store", "atomic"})
        for kind in ("load", "store", "atomic", *others):
            rows = [r for r in known if r.access == kind]
            wf = sum(r.total_wavefronts for r in rows)
            ideal = sum(r.total_ideal_wavefronts for r in rows)
            ctas = rows[0].grid_ctas if rows and rows[0].grid_ctas else None
            out[kind] = {
                "wavefronts": wf,
                "ideal_wavefronts": ideal,
                "conflicts": wf - ideal,
                "grid_wavefronts": wf * ctas if ctas else None,
                "grid_conflicts": (wf - ideal) * ctas if ctas else None,
            }
        return out

    def counts(self) -> dict:
        """How many accesses there are, how many were analysed fully, how many only partly (``partial``: some
        executions unknown, figures from another CTA, ...; the key is there when there are any), how many are made
        by the async proxy (TMA, wgmma operands: no LSU wavefronts), how many unknown."""
        unknown = sum(r.status == "unknown" for r in self)
        async_ = sum(r.status == "async" for r in self)
        partial = sum(r.status == "partial" for r in self)
        return {
            "accesses": len(self),
            "analysed": len(self) - unknown - async_ - partial,
            **({"partial": partial} if partial else {}),
            "async": async_,
            "unknown": unknown,
        }

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "accesses": [r.to_dict() for r in self],
            "totals": self.totals(),
            "counts": self.counts(),
            "notes": list(self.notes),
        }

    def title(self) -> str:
        c = self.counts()
        by_proxy = f", {c['async']} by the async proxy" if c["async"] else ""
        partly = f", {c['partial']} partly unknown" if c.get("partial") else ""
        return (
            f"{self.kernel}: {c['accesses']} shared-memory access(es), {c['analysed']} analysed{partly}{by_proxy}, "
            f"{c['unknown']} unknown"
        )

    def row_text(self, r) -> str:
        if r.status == "unknown":
            return f"ways unknown: {r.reason}"
        if r.status == "async":
            return f"no LSU wavefronts: {r.reason}"
        if r.not_in_sass:
            as_written = f"ways {r.ways}, wavefronts {r.wavefronts}/{r.ideal_wavefronts}"
            return f"not made on this line: {r.reason} (as the IR writes it: {as_written})"
        flag = "" if r.ways == 1 else f"  <- {r.ways}-way conflict, lanes {_lanes_text(r.lanes)} in bank {r.bank}"
        part = f"  (partly unknown: {r.reason})" if r.status == "partial" else ""
        joined = next((f"  ({n})" for n in r.notes if n.startswith((_JOINED, _AGGREGATED))), "")
        return f"ways {r.ways:>2}  wavefronts {r.wavefronts}/{r.ideal_wavefronts} per instruction{flag}{joined}{part}"


def _lanes_text(lanes) -> str:
    if not lanes:
        return "-"
    lanes = sorted(lanes)
    if lanes == list(range(lanes[0], lanes[-1] + 1)) and len(lanes) > 2:
        return f"{lanes[0]}-{lanes[-1]}"
    return ",".join(str(x) for x in lanes)


def warp_wavefronts(addrs: np.ndarray, active: np.ndarray, width: int, *, serialise: bool = False):
    """(wavefronts, ideal, ways, colliding lanes, bank, per-lane banks) of one warp's access.

    ``addrs``: byte address per lane (32), ``active``: lane mask, ``width``: bytes per lane.
    ``serialise``: lanes on the same word are not broadcast but served one by one (atomics)."""
    width = max(int(width), 1)
    per_group = max(1, min(32, WAVEFRONT_BYTES // max(width, BANK_BYTES)))
    wf = ideal = 0
    worst = (0, [], None)
    lane_banks = [None] * 32
    nwords = max(1, -(-width // BANK_BYTES))
    for g0 in range(0, 32, per_group):
        banks: dict[int, dict[int, list]] = {}
        any_active = False
        for lane in range(g0, min(32, g0 + per_group)):
            if not active[lane]:
                continue
            any_active = True
            a = int(addrs[lane])
            first = a // BANK_BYTES
            for w in range(first, first + nwords):
                b = w % BANKS
                banks.setdefault(b, {}).setdefault(w, []).append(lane)
            lane_banks[lane] = first % BANKS
        if not any_active:
            continue

        def load(words):
            return sum(len(ls) for ls in words.values()) if serialise else len(words)

        ways_g = max(load(words) for words in banks.values())
        wf += ways_g
        ideal += 1
        if ways_g > worst[0]:
            b = max(banks, key=lambda k: load(banks[k]))
            lanes = sorted({lane for ls in banks[b].values() for lane in (ls if serialise else ls[:1])})
            worst = (ways_g, lanes, b)
    return wf, ideal, worst[0], worst[1], worst[2], lane_banks


def bank_conflicts(kernel, *, arch: str | None = None, plan=None, cta=(0, 0, 0)) -> BankReport:
    """One :class:`BankAccess` per shared-memory access site of ``kernel`` (a prim_func,
    IRModule or ``txlab.Compiled``); ``plan`` (a :class:`txlab.pools.PoolLayout`) names SMEMPool
    buffers by their byte range."""
    from txlab.arch import resolve_arch

    if arch is not None:
        arch = resolve_arch(arch)
    arch = arch or getattr(kernel, "arch", None) or (plan.arch if plan is not None else None) or "sm_90a"
    lowered = simt.lowered_of(kernel, arch, "txlab.banks.bank_conflicts")
    cta = simt.checked_cta(cta, lowered, "txlab.banks.bank_conflicts")
    funcs = simt.device_functions(lowered)
    swizzles = simt.tensor_map_swizzles(lowered)
    sass = _sass_widths(kernel)
    report = BankReport()
    report.notes = []
    names = []
    for fname, func in funcs:
        names.append(fname)

        def site(v, a):
            return _Site(v, a, sass=sass)

        sites, walk = walk_sites(
            func,
            lambda: _SharedClassifier(swizzles),
            site,
            lowered=lowered,
            fname=fname,
            figures=_per_instruction,
            differs=_differs,
            cta=cta,
            finish=lambda ss: _finish(ss, sass),
        )
        grid = _grid_ctas(kernel, fname)
        report += [s.row(plan, grid) for s in sites]
        report.notes += [f"{fname}: {n}" if len(funcs) > 1 else n for n in walk.notes]
    report.sort(key=lambda r: (r.lineno if r.lineno is not None else 1 << 30, r.access != "load"))
    report.kernel = ", ".join(names)
    return report


def _per_instruction(site):
    """(worst ways, wavefronts and ideal wavefronts per instruction) of a site, None when unknown."""
    site._flush()
    if site.worst is None or not site.instructions or site.unknowns or site.status == "async":
        return None
    return site.worst[0], site.wf / site.instructions, site.ideal / site.instructions


def _differs(mine, alt, cta, other) -> str:
    """The reason of an access whose wavefronts differ in CTA ``other`` (its figures stay ``cta``'s)."""
    return (
        f"CTA {other} needs {alt[1]:.1f} wavefronts per instruction (ideal {alt[2]:.1f}, ways {alt[0]}) where "
        f"CTA {cta} needs {mine[1]:.1f} (ways {mine[0]}): the figures are CTA {cta}'s, the access depends on "
        "which CTA makes it"
    )


_LDS_STS = re.compile(r"^(?:@!?U?P[T\d]+\s+)?(LDS|STS)((?:\.[A-Z0-9]+)*)\s")
_WIDTH_OF = {"128": 16, "64": 8, "U16": 2, "S16": 2, "U8": 1, "S8": 1}


_ATOMS_CAS = re.compile(r"^(?:@!?U?P[T\d]+\s+)?ATOMS\.CAS")
_ATOMS = re.compile(r"^(?:@!?U?P[T\d]+\s+)?ATOMS\.")


def _sass_widths(kernel) -> dict:
    """``{(user line, "load"|"store"): [bytes per lane of each LDS/STS, in program order]}`` of the LDS/STS the
    compiler emitted, and ``(user line, "atomic"): [...]`` with, for each ``ATOMS`` of the line, ``"CAS"`` where the
    atomic became a compare-and-swap loop (``ATOMS.CAS*``), ``"AGG"`` where the compiler aggregated it over the warp
    (:meth:`SassFlow.aggregated`) and ``"ATOMS"`` for any other, for a ``txlab.Compiled`` (its line map); None for a
    kernel that was not compiled."""
    code = sass_code(kernel)
    if code is None:
        return None
    out: dict = {}
    for listing in code.values():
        flow = None
        for k, ins in enumerate(listing):
            if not ins.user_line:
                continue
            text = ins.text.strip()
            if _ATOMS.match(text):
                if _ATOMS_CAS.match(text):
                    mark = "CAS"
                else:
                    flow = flow or SassFlow(listing)
                    mark = "AGG" if flow.aggregated(k) else "ATOMS"
                out.setdefault((ins.user_line, "atomic"), []).append(mark)
                continue
            hit = _LDS_STS.match(text)
            if hit is None:
                continue
            mods = hit.group(2).split(".")[1:]
            width = next((_WIDTH_OF[x] for x in mods if x in _WIDTH_OF), 4)
            out.setdefault((ins.user_line, "load" if hit.group(1) == "LDS" else "store"), []).append(width)
    return out


# ---- the SASS of a compiled kernel, read for the analyses (shared with txlab.coalescing) -------------------------
def sass_code(kernel) -> dict | None:
    """``{kernel name: [its SASS instruction records, in program order]}`` of a ``txlab.Compiled`` (its line map;
    the padding after the last instruction left out); None for a kernel that was not compiled."""
    m = getattr(kernel, "source_map", None) if hasattr(kernel, "cubin") else None
    if m is None:
        return None
    out: dict = {}
    for ins in getattr(m, "instructions", None) or []:
        if not getattr(ins, "padding", False):
            out.setdefault(ins.kernel, []).append(ins)
    return out


#: a register or predicate an instruction can write (``RZ``, ``PT`` and their uniform twins are sinks)
_SASS_REG = re.compile(r"^(?:U?R\d+|U?P\d+)$")
_SASS_PRED = re.compile(r"^U?P(?:\d+|T)$")
#: a constant-bank operand of bank 0 (where the kernel's arguments are): ``c[0x0][0x210]``
SASS_PARAM = re.compile(r"c\[0x0\]\[(0x[0-9a-fA-F]+)\]")
#: opcodes whose result comes from memory or the hardware, not from their register operands: a value traced back
#: (:meth:`SassFlow.params`) stops there
_SASS_ROOTS = frozenset(
    "LD LDG LDS LDL LDSM LDGSTS ATOM ATOMG ATOMS S2R S2UR CS2R SHFL VOTE VOTEU MATCH REDUX CREDUX ELECT".split()
)


def sass_register(operand: str) -> str | None:
    """The register or predicate an operand names (``R2`` for ``-R2.reuse``, ``|R3|``, ``R2.64``, ``!P0``), else None
    (immediates, constant banks, addresses, sinks)."""
    t = operand.strip().lstrip("-|~!").rstrip("|").split(".", 1)[0]
    return t if _SASS_REG.match(t) else None


def _sass_writes(opcode: str, operands: list) -> tuple[list, int]:
    """(registers and predicates the instruction writes, how many of its leading operands are destinations). A
    predicate destination first makes the second operand one too (``ISETP``'s pair, ``SHFL``'s value); a register
    destination is followed by the predicates it sets (``IADD3 R2, P0, ...``: the carry); a 64-bit or ``.WIDE``
    result writes a register pair, a 128-bit one four registers."""
    if not operands:
        return [], 0
    first = operands[0].strip()
    if _SASS_PRED.match(first.split(".", 1)[0]):
        second = sass_register(operands[1]) if len(operands) > 1 else None
        return [r for r in (sass_register(first), second) if r], min(2, len(operands))
    reg = sass_register(first)
    if reg is None:
        return [], 0
    mods = set(opcode.split(".")[1:])
    wide = bool(mods & {"64", "WIDE", "S64", "U64", "F64"}) or opcode.startswith(("DADD", "DMUL", "DFMA"))
    n = 4 if "128" in mods else 2 if wide else 1
    prefix = reg.rstrip("0123456789")
    out = [f"{prefix}{int(reg[len(prefix) :]) + i}" for i in range(n)]
    dests = 1
    for o in operands[1:]:
        r = sass_register(o)
        if r is None or not _SASS_PRED.match(r):
            break
        out.append(r)
        dests += 1
    return out, dests


class SassFlow:
    """The register writes of one kernel's SASS, in program order: what a register holds at an instruction, as far
    as reading the listing backwards tells (the last write before it; past a predicated write, the one before that
    too). Branches are not followed: a value is traced through the instructions that precede it in the listing."""

    #: instructions one trace visits at most (a trace that needs more gives what it found)
    MAX_STEPS = 64

    def __init__(self, listing):
        import bisect

        self._bisect = bisect.bisect_left
        self.code = list(listing)
        self.operands = [[o for o in ins.operands.split(",") if o.strip()] if ins.operands else [] for ins in self.code]
        self.writes: dict = {}  # register -> indices of the instructions that write it, ascending
        self.ndest = []
        for k, ins in enumerate(self.code):
            regs, n = _sass_writes(ins.opcode, self.operands[k])
            self.ndest.append(n)
            for r in regs:
                self.writes.setdefault(r, []).append(k)

    def last_write(self, reg: str, before: int) -> int | None:
        """The index of the last instruction before ``before`` that writes ``reg``, else None."""
        at = self.writes.get(reg)
        if not at:
            return None
        i = self._bisect(at, before) - 1
        return at[i] if i >= 0 else None

    def sources(self, k: int) -> list:
        """The operands instruction ``k`` reads (those past its destinations)."""
        return self.operands[k][self.ndest[k] :]

    def address_registers(self, k: int) -> list:
        """The registers of memory instruction ``k``'s address (its last ``[...]``: ``R2`` of ``desc[UR4][R2.64+0x10]``)."""
        groups = re.findall(r"\[([^\]]*)\]", self.code[k].operands or "")
        if not groups:
            return []
        return [r for r in (sass_register(t) for t in groups[-1].split("+")) if r]

    def params(self, k: int, regs) -> set | None:
        """The offsets ``X`` of the ``c[0x0][X]`` operands the values of ``regs`` at instruction ``k`` are computed
        from, through the instructions that last wrote them (not through a value loaded from memory or read from a
        special register); None where the trace needs more than :attr:`MAX_STEPS` instructions."""
        found: set = set()
        seen: set = set()
        work = [(r, k) for r in regs]
        while work:
            reg, at = work.pop()
            j = self.last_write(reg, at)
            if j is None or (reg, j) in seen:
                continue
            seen.add((reg, j))
            if len(seen) > self.MAX_STEPS:
                return None
            ins = self.code[j]
            if ins.predicate:  # it may not have written: the value before it may be the one read
                work.append((reg, j))
            if ins.opcode.split(".", 1)[0] in _SASS_ROOTS:
                continue
            for o in self.sources(j):
                hit = SASS_PARAM.search(o)
                if hit:
                    found.add(int(hit.group(1), 16))
                    continue
                r = sass_register(o)
                if r is not None:
                    work.append((r, j))
        return found

    def _written_by(self, reg: str, before: int, *prefixes) -> int | None:
        j = self.last_write(reg, before) if reg else None
        return j if j is not None and self.code[j].opcode.startswith(prefixes) else None

    def aggregated(self, k: int) -> bool:
        """Whether atomic ``k`` is one the compiler aggregated over the warp: a ``.POPC.INC`` (one operation per
        distinct address, adding the number of lanes on it) or one predicated on the warp's leader lane, ``@P ATOMS``
        / ``@P REDG`` where ``P`` is ``ISETP.EQ`` of ``SR_LANEID`` and ``FLO`` of a ``VOTE.ANY`` mask (the leader makes
        the warp's atomic with the lanes' count, ``SHFL`` hands the result back)."""
        ins = self.code[k]
        if ".POPC.INC" in ins.opcode:
            return True
        pred = ins.predicate.lstrip("@")
        if not pred or pred.startswith("!"):
            return False
        j = self._written_by(pred, k, "ISETP.EQ", "UISETP.EQ")
        if j is None:
            return False
        found = set()
        for o in self.sources(j):
            r = sass_register(o)
            d = self.last_write(r, j) if r else None
            if d is None:
                continue
            if self.code[d].opcode.startswith(("S2R", "S2UR")) and "SR_LANEID" in self.code[d].operands:
                found.add("lane")
            elif self.code[d].opcode.startswith(("FLO", "UFLO")) and any(
                self._written_by(sass_register(s), d, "VOTE.ANY", "VOTEU.ANY") is not None for s in self.sources(d)
            ):
                found.add("leader")
        return found == {"lane", "leader"}


def reused_loads(sites, groups, made_on) -> dict:
    """``{site: the earlier site whose value it reuses}``: load sites of a compiled kernel that the SASS of their line
    does not make, because the compiler kept the value an earlier line loaded. ``groups``: ``[(load sites of one line,
    bytes per lane the SASS loads of that line that could make them move together)]``; ``made_on(site)``: whether the
    SASS of ``site``'s line loads what it loads. Where a line's SASS moves fewer bytes than its sites, and the sites
    that repeat a load of an earlier line (the same buffer and index expression, made there) account for exactly the
    bytes missing, those are the ones; any other shortfall (a load merged into a wider one elsewhere, a loop unrolled
    into several instructions, sites that do not add up) names none: the rows stay as counted."""
    import tvm_ffi

    order = {id(s): k for k, s in enumerate(sites)}
    loads = [s for s in sites if s.kind == "load" and s.line is not None and not s.not_in_sass]
    out: dict = {}
    for group, sass_bytes in groups:
        want = sum(s.ir_bytes for s in group)
        if sass_bytes is None or sass_bytes >= want:
            continue
        found = {}
        for s in group:
            earlier = next(
                (
                    e
                    for e in loads
                    if e.line != s.line
                    and order.get(id(e), 1 << 30) < order.get(id(s), -1)
                    and _name(e.buf) == _name(s.buf)
                    and tvm_ffi.structural_equal(e.node, s.node)
                    and made_on(e)
                ),
                None,
            )
            if earlier is not None:
                found[s] = earlier
        if found and sum(s.ir_bytes for s in found) == want - sass_bytes:
            out.update(found)
    return out


def _name(buf) -> str:
    return getattr(buf, "name", None) or str(buf)


def ir_bytes(v, access, elem_bytes: int) -> int:
    """Bytes per lane one execution of an access moves as the IR writes it: its width, or its element's times the
    lanes of a vector load or store (``float32x4``: 16)."""
    if access.width:
        return access.width
    from tvm import DataType

    node = v.node
    dtype = getattr(node, "dtype", None) if v.kind == "load" else getattr(getattr(node, "value", None), "dtype", None)
    try:
        lanes = DataType(str(dtype)).lanes if dtype is not None and v.kind in ("load", "store") else 1
    except (TypeError, ValueError):  # not a data type (a handle), or a scalable vector
        lanes = 1
    return elem_bytes * max(int(lanes), 1)


def _grid_ctas(kernel, fname):
    launch = getattr(kernel, "launch", None)
    if not isinstance(launch, dict) or not launch:
        return None
    info = launch.get(fname) or (next(iter(launch.values())) if len(launch) == 1 else None)
    if not info:
        return None
    n = 1
    for g in info.get("grid", ()):
        if not isinstance(g, int):
            return None
        n *= g
    return n


#: calls that read or write shared memory whose per-lane addresses the walk does not model
_OPAQUE_SHARED = {
    "ldmatrix": "ldmatrix",
    "stmatrix": "stmatrix",
    "cp_async": "cp.async",
    "ld_vec": "ptx.ld",
    "ptx.ld": "ptx.ld",
    "ptx.st": "ptx.st",
    "st_async": "st.async",
    "tcgen05": "tcgen05",
}

#: the note every access made by the async proxy carries (why it has no LSU wavefronts)
ASYNC_PROXY = "served by the async proxy, not the load/store unit (no LSU bank-conflict figure)"
#: wgmma_encode_matrix_descriptor's swizzle argument: the same enum as a tensor map's
SWIZZLE_MODES = simt.TENSOR_MAP_SWIZZLE
#: ldmatrix / stmatrix .m8n8: how many lanes supply a row address for .x1 / .x2 / .x4
_MATRIX_LANES = {"x1": 8, "x2": 16, "x4": 32}


def _is_tma(short: str) -> bool:
    """A bulk copy (TMA, ``cp.async.bulk[.tensor]``, its reduce and multimem forms) that moves data."""
    return short.startswith(("cp_async_bulk", "cp_reduce_async_bulk", "multimem_cp")) and not any(
        w in short for w in ("prefetch", "commit_group", "wait_group")
    )


def _is_wgmma_mma(short: str) -> bool:
    return short.startswith("wgmma_") and short.endswith(("_ss", "_rs"))


class _SharedClassifier:
    """``visit -> simt.Access`` for every visit that touches shared memory (see :func:`shared_access`).
    A wgmma's shared operands are read through matrix descriptors: it remembers which shared buffer
    (and swizzle) each descriptor variable was encoded with, so the wgmma's row names them."""

    def __init__(self, swizzles=None):
        self.swizzles = swizzles or {}
        self.descriptors: dict = {}  # descriptor buffer name -> (shared buffer, index, swizzle)

    def __call__(self, v):
        access = shared_access(v, self.swizzles)
        if access is not None and access.kind == "wgmma operand":
            self.descriptors[access.info["descriptor"]] = (access.buffer, access.index, access.info["swizzle"])
            return None  # the read happens at the wgmma that takes the descriptor
        if access is not None and access.kind == "wgmma":
            return _wgmma_access(v, access, self.descriptors)
        return access


#: bytes per element of a wgmma operand type
_WGMMA_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}


def _wgmma_access(v, access, descriptors):
    """The row of a wgmma whose descriptors were encoded in the walk: the shared operands it reads,
    their swizzle, and the wavefronts Nsight Compute's source view counts for it."""
    import re as _re

    from txlab.ir.walk import walk

    def descriptor_read(expr):
        """The encoded descriptor ``expr`` reads: the variable itself, or one with an offset added (the start
        address advanced to a stage, atom or k-step: ``hopper_gemm``'s mainloop); None for any other operand."""
        for node in [expr] if type(expr).__name__.endswith("Load") else walk(expr):
            if type(node).__name__.endswith("Load"):
                src = getattr(node, "source", None)
                src = getattr(node, "buffer", None) if src is None else src
                if getattr(src, "name", None) in descriptors:
                    return descriptors[src.name]
        return None

    ops = [d for d in map(descriptor_read, v.node.args) if d is not None]
    short = access.info["op"]
    if not ops:
        return access  # unknown: descriptors not built by wgmma_encode_matrix_descriptor
    strings = [x for x in v.args if isinstance(x, str)]
    shape = next((x for x in strings if _re.fullmatch(r"m\d+n\d+k\d+", x)), "")
    types = [x for x in strings if x in _WGMMA_BYTES]
    nbytes = None
    if shape and len(types) >= 2:
        m, n, k = (int(x) for x in _re.findall(r"\d+", shape))
        a_bytes = m * k * _WGMMA_BYTES[types[-2]] if short.endswith("_ss") else 0
        nbytes = a_bytes + n * k * _WGMMA_BYTES[types[-1]]
    names = ", ".join(getattr(b, "name", str(b)) for b, _, _ in ops)
    layouts = sorted(
        {SWIZZLE_MODES.get(z, f"swizzle mode {z}") if isinstance(z, int) else "swizzle unknown" for _, _, z in ops}
    )
    counted = (
        f"; Nsight Compute's source view counts its reads as operand bytes / 128 = {nbytes // 128} wavefronts per "
        "warpgroup, all ideal (measured on the H200 for m64n64k16 f16 operands)"
        if nbytes and nbytes % 512 == 0
        else ""
    )
    return simt.Access(
        "wgmma",
        ops[0][0],
        ops[0][1],
        f"{short} {shape}: reads {names} through matrix descriptors ({', '.join(layouts)}): {ASYNC_PROXY}{counted}",
        status="async",
        info={"operands": names, "bytes": nbytes if counted else None},
    )


def shared_access(v, swizzles=None) -> simt.Access | None:
    """What visit ``v`` does to shared memory (a :class:`txlab.simt.Access`), or None: kind "load" /
    "store" / "atomic" / "ldmatrix" / "stmatrix" / "cp.async" (its shared write) / "TMA" / "wgmma
    operand" (a matrix descriptor) / the op's name; ``reason`` says why its addresses are unknown,
    or (with ``status="async"``) why it has no LSU wavefronts. ``swizzles``: ``{tensor map name:
    swizzle}`` the host encodes (:func:`txlab.simt.tensor_map_swizzles`), named in TMA rows."""
    access = simt.direct_access(v, "shared")
    if access is not None or v.kind != "call":
        return access
    name = str(getattr(v.node.op, "name", "") or "")
    short = name.rsplit(".", 1)[-1]
    addrs = [a for a in v.args if isinstance(a, simt.AddrValue)]
    shared = [a for a in addrs if str(a.buffer.scope()).startswith("shared")]
    strings = [a for a in v.args if isinstance(a, str)]
    if simt.is_atomic(short):
        if shared:
            return simt.atomic_access(v, "shared")
        if not addrs and any(a is simt.UNKNOWN for a in v.args[:1]):
            return simt.Access("atomic", "?", simt.UNKNOWN, f"{name}: the target address is not an address_of a buffer")
        return None
    if short in ("ldmatrix", "stmatrix") and "ptx_legacy" not in name:
        if not shared:
            return simt.Access(
                short, "shared", simt.UNKNOWN, f"{short}: its shared address is not an address the walk evaluates"
            )
        shape = next((x for x in strings if x.startswith("m") and "n" in x), "")
        num = next((x for x in strings if x in _MATRIX_LANES), "")
        if shape != "m8n8" or not num:
            return simt.Access(
                short,
                shared[0].buffer,
                simt.UNKNOWN,
                f"{short} .{shape or '?'} .{num or '?'}: only .m8n8 .x1/.x2/.x4 is modelled",
            )
        info = {"matrices": _MATRIX_LANES[num] // 8, "trans": "trans" in strings}
        # each matrix's 8 rows of 16 bytes come from 8 lanes' addresses; .trans moves data between
        # lanes, not the rows read
        return simt.Access(short, shared[0].buffer, shared[0].index, width=16, lanes=_MATRIX_LANES[num], info=info)
    if short in simt.CP_ASYNC:
        # LDGSTS's shared write is not an STS: on the H200 Nsight Compute counted 32 wavefronts per
        # instruction for 16-byte lanes 32 bytes apart (an STS.128 of that layout takes 8), and 4 for
        # contiguous lanes; without a model that reproduces both, it stays unknown
        return simt.Access(
            "cp.async",
            shared[0].buffer if shared else "shared",
            simt.UNKNOWN,
            "cp.async (LDGSTS): its shared write is served by the L1's global-to-shared path, whose "
            "wavefronts do not follow the load/store bank model (measured on the H200: 4x more than an "
            "STS of the same layout when lanes are 32 bytes apart); not modelled",
        )
    if _is_tma(short):
        tmap = simt.tensor_map_name(v.node)
        swz = (swizzles or {}).get(tmap)
        layout = (
            f"tensor map {tmap}: {simt.TENSOR_MAP_SWIZZLE.get(swz, f'swizzle mode {swz}')}"
            if swz is not None
            else f"its swizzle is in the tensor map{' ' + tmap if tmap else ''}, which the host does not encode "
            "with constants the walk reads"
        )
        direction = "reads" if "s2g" in short or "s2c" in short or short.startswith("multimem") else "writes"
        return simt.Access(
            "TMA",
            shared[0].buffer if shared else "shared",
            shared[0].index if shared else simt.UNKNOWN,
            f"TMA ({short}) {direction} shared memory as one bulk copy: {ASYNC_PROXY}; {layout}; Nsight "
            "Compute's source view counts no shared wavefronts for it (measured on the H200)",
            status="async",
        )
    if short == "wgmma_encode_matrix_descriptor":
        swizzle = v.args[4] if len(v.args) > 4 else None
        mode = SWIZZLE_MODES.get(swizzle) if isinstance(swizzle, int) else None
        desc = next((a for a in v.args if isinstance(a, simt.AddrValue) and all(a is not x for x in shared)), None)
        if desc is None or not shared:
            return None  # no descriptor variable or no shared address: the wgmma reading it says unknown
        return simt.Access(
            "wgmma operand",
            shared[-1].buffer,
            shared[-1].index,
            f"matrix descriptor: {mode or 'swizzle unknown'}",
            status="async",
            info={"descriptor": getattr(desc.buffer, "name", str(desc.buffer)), "swizzle": swizzle},
        )
    if _is_wgmma_mma(short):
        return simt.Access(
            "wgmma",
            "shared",
            simt.UNKNOWN,
            f"{short}: its shared operands come from matrix descriptors not built by "
            "wgmma_encode_matrix_descriptor, whose layout the walk does not read",
            info={"op": short},
        )
    label = next((lab for key, lab in _OPAQUE_SHARED.items() if key in name), None)
    if short == "func_call" and v.args and v.args[0] == "tvm_builtin_pointer_offset":
        return None  # ``ptr + offset``: address arithmetic (the walk follows it), no access of its own
    if label is None and shared and (short == "cta_reduce" or "extern" in short or short == "func_call"):
        # a helper given a shared pointer (T.cuda.cta_sum's scratch, a device function): its STS/LDS are real
        return simt.Access(
            short,
            shared[0].buffer,
            simt.UNKNOWN,
            f"{name} takes a pointer to shared memory: the loads and stores it makes there are inside the helper, "
            "and the static walk does not evaluate them",
        )
    if label is None or not shared:
        return None
    return simt.Access(
        short,
        shared[0].buffer,
        simt.UNKNOWN,
        f"{label}: its per-lane shared addresses are not evaluated by the static walk",
    )


def _finish(sites, sass) -> None:
    """After a walk: accesses the compiler made together (:func:`_join_statement_accesses`), and loads the SASS of their
    line does not make because the compiler reused an earlier line's value (:func:`reused_loads`)."""
    _join_statement_accesses(sites)
    if sass is None:
        return
    by_line: dict = {}
    for s in sites:
        if s.kind == "load" and s.line is not None and not s.not_in_sass and s.status != "async":
            by_line.setdefault(s.line, []).append(s)
    groups = [(g, sum(w for w in sass.get((line, "load"), ()) if isinstance(w, int))) for line, g in by_line.items()]
    for site, earlier in reused_loads(sites, groups, lambda e: bool(sass.get((e.line, "load")))).items():
        made = sum(w for w in sass.get((site.line, "load"), ()) if isinstance(w, int))
        want = sum(s.ir_bytes for s in by_line[site.line])
        site.absent(
            f"the SASS of this line loads {made} bytes per lane from shared memory where its accesses load {want}: "
            f"the compiler reused the value of this load made on line {earlier.line}, so the hardware does not make "
            "it here"
        )


#: executions of one site kept for :func:`_join_statement_accesses` (past that, none are joined)
_JOIN_EXECUTIONS = 4096
#: how the note of an access joined into another's row starts
_JOINED = "the compiler made this access and"
#: how the note of a shared atomic the compiler aggregated over the warp starts
_AGGREGATED = "warp-aggregated by the compiler"
#: how the reason of merged executions that did not pair starts
_UNPAIRED = "the SASS of this line accesses"


def _join_statement_accesses(sites) -> None:
    """After a walk: accesses of one line that the compiler made one wider LDS/STS together (``sm[2 * tx] +
    sm[2 * tx + 1]``: two 4-byte loads, one ``LDS.64``), counted as that access in the row of the lowest address
    (the others say so, with no instructions of their own); and a line whose SASS has several widths: a width that
    another access of the line has is no merge of this one."""
    by_line: dict = {}
    for s in sites:
        s._flush()
        if s.line is not None and s.kind in ("load", "store"):
            by_line.setdefault((s.line, s.kind), []).append(s)
    for group in by_line.values():
        own = {s.ir_width for s in group}
        for s in group:
            if s._mixed and any(w > s.ir_width and w not in own for w in s._mixed):
                s.reasons.setdefault(
                    f"the SASS of this line has shared {s.kind}s of {s._mixed} bytes per lane where the IR has "
                    f"{s.ir_width}: the compiler merged some of them, counted here one by one",
                    None,
                )
        cands = [s for s in group if s.merge > 1 and s._own_failed and s._execs and not s.unknowns]
        for width in {s.sass_width for s in cands}:
            _join(sorted((s for s in cands if s.sass_width == width), key=lambda s: s.key or ()))


def _join(group) -> None:
    """Pair the executions of ``group`` (sites of one line whose SASS width is ``merge`` times theirs) into chains
    of ``merge`` accesses whose addresses follow each other, the same chains in every execution of the
    statement; count each chain's as one wider access at its first site. Nothing changes where they do not."""
    if len(group) < 2:
        return
    merge, w = group[0].merge, group[0].ir_width
    if any(s.merge != merge or s.ir_width != w for s in group) or len(group) % merge:
        return
    runs = []
    for s in group:
        ids = [e[0] for e in s._execs]
        if len(set(ids)) != len(ids):
            return  # two executions in one run of the statement: not one per statement
        runs.append(dict((e[0], e[1:]) for e in s._execs))
    ids = [e[0] for e in group[0]._execs]
    if any(set(r) != set(ids) for r in runs):
        return
    chains = None
    for i in ids:
        execs = [r[i] for r in runs]
        m0 = execs[0][1]
        if not m0.any() or any(not np.array_equal(m, m0) for _, m in execs):
            return
        order = sorted(range(len(group)), key=lambda k: int(execs[k][0][m0].min()))
        these = [tuple(order[c : c + merge]) for c in range(0, len(order), merge)]
        for chain in these:
            a0 = execs[chain[0]][0]
            if (a0[m0] % (w * merge)).any():
                return
            if any(not np.array_equal(execs[k][0][m0], a0[m0] + j * w) for j, k in enumerate(chain)):
                return
        if chains is None:
            chains = these
        elif these != chains:
            return
    for s in group:
        s._reset()
    for chain in chains:
        head = group[chain[0]]
        for i in ids:
            a0, m0 = runs[chain[0]][i]
            head._warps(a0, m0, w * merge)
        for k in chain[1:]:
            group[k].merged_into = head


class _Site(simt.AccessSite):
    #: an access of the code that no walk reached (its row has no figures: :func:`walk_sites`)
    unreached = False

    def __init__(self, v, access, sass=None):
        super().__init__(v, access)
        buf, kind = self.buf, self.kind
        dtype = str(getattr(buf, "dtype", "")) or "uint8"
        if kind == "atomic" and getattr(v.node, "dtype", None) is not None and str(v.node.dtype) != "void":
            dtype = str(v.node.dtype)
        self.set_dtype(dtype)
        self.width = access.width
        self.instructions = 0
        self.wf = 0
        self.ideal = 0
        self.worst = None
        self.offsets = []
        self.status = access.status
        self.info = dict(access.info)
        # the widths of this line's LDS/STS in the SASS: one width wider than the IR's access means
        # the compiler merged consecutive executions (an unrolled loop over adjacent elements)
        self.merge, self.sass_width, self._pending = 1, None, []
        # executions kept for :func:`_join_statement_accesses` (a merge the site's own executions do not explain),
        # whether its own executions failed to pair, the row it was merged into, the line's SASS widths it awaits
        self._execs, self._own_failed, self.merged_into, self._mixed = [], False, None, None
        each = (sass or {}).get((self.line, kind))
        widths = set(each) if each else each
        self.ir_bytes = ir_bytes(v, access, self.elem_bytes)
        self.not_in_sass = False
        # every ATOMS of the line aggregated over the warp (ATOMS.POPC.INC, or a leader lane's): one lane per warp
        # and distinct address makes the atomic
        self.aggregated = kind == "atomic" and bool(widths) and widths == {"AGG"}
        if kind == "atomic" and widths and "CAS" in widths:
            self.reasons.setdefault(
                "the SASS makes this atomic a compare-and-swap loop (LDS + ATOMS.CAS, repeated while lanes "
                "retry): its wavefronts are the loop's, which depend on the retries; counted here as one ATOMS",
                None,
            )
        ir_width = self.ir_width = access.width or self.elem_bytes
        if kind in ("load", "store") and sass is not None and not widths and self.line:
            # a compiled kernel whose line has no LDS/STS: nvcc merged this access into another line's
            # (two loads of adjacent words on two lines, one LDS.64) or removed it
            self.absent(
                f"the SASS has no shared {kind} on this line: the compiler merged it into another line's "
                "access or removed it, so the hardware does not make it here as counted"
            )
        if kind in ("load", "store") and widths:
            wide = max(widths)
            if len(widths) == 1 and wide > ir_width and wide % ir_width == 0:
                self.merge, self.sass_width = wide // ir_width, wide
            elif wide > ir_width and not isinstance(access.index, simt.RampValue):
                # decided once the walk has seen the line's other accesses (:func:`_join_statement_accesses`):
                # a wider LDS/STS of another buffer's access on the line is no merge of this one
                self._mixed = sorted(widths)

    def absent(self, reason: str) -> None:
        """The SASS of the line does not make this access (``reason`` says why): partial, and out of the totals."""
        self.not_in_sass = True
        self.reasons.setdefault(reason, None)

    def add(self, v, access):
        if access.status == "async":
            self.reasons.setdefault(access.reason, None)
            warps = int(sum(v.mask[w0 : w0 + 32].any() for w0 in range(0, v.mask.size, 32)))
            self.instructions += warps
            if access.info.get("bytes"):  # what ncu's source view counts: operand bytes / 128 per warpgroup
                self.wf += warps * access.info["bytes"] // 128 // 4
                self.ideal += warps * access.info["bytes"] // 128 // 4
            if not self.offsets and _is_int_index(access.index):
                idx = np.asarray(access.index)
                if idx.ndim and idx.shape == v.mask.shape and v.mask.any():
                    idx = idx[v.mask]  # the lanes that issue it (an elected lane of warp 4 names its buffer)
                self.offsets.append(int(np.min(idx) * self.elem_bytes))
            return
        # a strided vector: each lane's first element decides its bank (approximation)
        got = self.lane_addresses(v, access)
        if got is None:
            return
        addr, width = got
        mask = v.mask
        if access.lanes is not None:  # only these lanes of each warp supply an address
            mask = mask & (np.arange(mask.size) % 32 < access.lanes)
        if self.merge > 1 and width * self.merge == self.sass_width:
            if self._execs is not None:
                self._execs.append((v.exec_id, addr, mask))
                if len(self._execs) > _JOIN_EXECUTIONS:
                    self._execs = None
            self._pending.append((addr, mask, width))
            if len(self._pending) == self.merge:
                self._flush()
            return
        self._warps(addr, mask, width)

    def _flush(self):
        """Executions the compiler merged into one wider SASS access (``self.merge`` consecutive
        executions whose per-thread addresses follow each other): counted as that one access; when
        they do not follow each other, one by one, with the reason."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        a0, m0, w = pending[0]
        wide = w * len(pending)
        follows = (
            len(pending) == self.merge
            and all(np.array_equal(m, m0) for _, m, _ in pending)
            and all(np.array_equal(a[m0], a0[m0] + i * w) for i, (a, _, _) in enumerate(pending))
            and not (a0[m0] % wide).any()
        )
        if follows:
            self._warps(a0, m0, wide)
            return
        self._own_failed = True
        self.reasons.setdefault(
            f"{_UNPAIRED} {self.sass_width} bytes per lane where the IR has {w}: "
            "executions that do not follow each other were counted one by one",
            None,
        )
        for a, m, width in pending:
            self._warps(a, m, width)

    def _warps(self, addr, mask, width):
        for part, w in simt.split_wide(addr, width):  # wider than 16 bytes: LDS/STS.128 each
            for a, m in simt.warp_lanes(part, mask):
                if self.aggregated:  # one lane per distinct address makes the warp's atomic
                    m = m & _first_per_address(a, m)
                wf, ideal, ways, lanes, bank, lane_banks = warp_wavefronts(a, m, w, serialise=self.kind == "atomic")
                self.instructions += 1
                self.wf += wf
                self.ideal += ideal
                if self.worst is None or (ways, wf) > (self.worst[0], self.worst[1]):
                    self.worst = (ways, wf, ideal, lanes, bank, lane_banks, w)
                if len(self.offsets) < 1:
                    self.offsets.append(int(a[m].min()))

    @property
    def row_source(self):
        fn = _file_of(self.stmt)
        return source_text(fn, self.line) if fn and self.line else None

    def _reset(self):
        """Forget the figures counted so far (and the reason of executions that did not pair)."""
        self.instructions = self.wf = self.ideal = 0
        self.worst, self.offsets, self._pending, self._own_failed = None, [], [], False
        for r in [r for r in self.reasons if r.startswith(_UNPAIRED)]:
            del self.reasons[r]

    def row(self, plan, grid) -> BankAccess:
        self._flush()
        name = getattr(self.buf, "name", None) or str(self.buf) or "shared"
        if self.merged_into is not None:
            head = self.merged_into
            ways, wf, ideal = head.worst[:3]
            op = "LDS" if self.kind == "load" else "STS"
            hb = getattr(head.buf, "name", None) or str(head.buf)
            return BankAccess(
                name, self.line, self.kind, ways, wf, ideal, self.sass_width, [], None, 0, 0, 0, grid,
                head.row_source, self.dtype,
                [f"{_JOINED} {hb}'s on this line one {self.sass_width}-byte {op} per lane: counted in {hb}'s row"],
                [], status="partial" if self.reasons else "analysed", reason="; ".join(self.reasons),
                not_in_sass=self.not_in_sass,
            )  # fmt: skip
        if plan is not None and self.offsets and getattr(self.buf, "scope", lambda: "")() == "shared.dyn":
            name = _pool_name(plan, self.offsets[0], self.dtype) or name
        notes = []
        if self.unknowns:
            notes.append(f"{self.unknowns} execution(s) of this access could not be analysed")
        if self.kind == "atomic" and self.aggregated:
            notes.append(
                f"{_AGGREGATED} (the SASS's ATOMS.POPC.INC, or one leader lane after VOTEU.ANY/FLO): one atomic per "
                "warp for each distinct address, counted so"
            )
        elif self.kind == "atomic":
            notes.append("shared atomic (ATOMS): lanes on one word are serialised, not broadcast")
        if self.kind in ("ldmatrix", "stmatrix") and self.info:
            m = self.info["matrices"]
            notes.append(
                f"{self.kind} .x{m}{' .trans' if self.info['trans'] else ''}: {m} matri{'x' if m == 1 else 'ces'} "
                f"of 8 rows x 16 bytes, each row's address from one of lanes 0-{8 * m - 1}; served 8 rows at a time"
            )
        reason = "; ".join(self.reasons)
        src = self.row_source
        width = self.width or self.elem_bytes
        if self.sass_width and self.merge > 1 and not self._own_failed and self.instructions:
            width = self.sass_width
        if self.status == "async" and not self.unknowns and not self.unreached:
            if self.info.get("operands"):
                name = self.info["operands"]
            per = self.wf // self.instructions if self.instructions else 0
            return BankAccess(
                name, self.line, self.kind, None, per, per, width, [], None, self.instructions, self.wf, self.ideal,
                grid, src, self.dtype, notes, [], status="async", reason=reason,
            )  # fmt: skip
        if self.worst is None:
            return BankAccess(
                name, self.line, self.kind, None, 0, 0, width, [], None, 0, 0, 0, grid, src, self.dtype, notes, [],
                status="unknown", reason=reason or "no execution of it was reached by the walk",
                not_in_sass=self.not_in_sass,
            )  # fmt: skip
        ways, wf, ideal, lanes, bank, lane_banks, width = self.worst
        return BankAccess(
            name,
            self.line,
            self.kind,
            ways,
            wf,
            ideal,
            width,
            lanes if ways > 1 else [],
            bank if ways > 1 else None,
            self.instructions,
            self.wf,
            self.ideal,
            grid,
            src,
            self.dtype,
            notes,
            lane_banks,
            status="partial" if reason else "analysed",
            reason=reason,
            not_in_sass=self.not_in_sass,
        )


def _first_per_address(addrs, active) -> np.ndarray:
    """The lanes of a warp that are the first active one on their address (what an atomic aggregated over the warp
    keeps: one operation per distinct address)."""
    first = np.zeros(len(addrs), dtype=bool)
    seen: set = set()
    for lane in np.flatnonzero(active).tolist():
        a = int(addrs[lane])
        if a not in seen:
            seen.add(a)
            first[lane] = True
    return first


def _is_int_index(idx) -> bool:
    return isinstance(idx, (int, np.integer)) or (isinstance(idx, np.ndarray) and idx.dtype.kind in "iu")


def source_text(filename, line, max_lines=4):
    """The statement at ``line`` of ``filename``, with its backslash continuation lines."""
    parts = []
    for k in range(max_lines):
        text = linecache.getline(filename, line + k).rstrip("\n")
        if not text and k == 0:
            return None
        parts.append(text.strip().rstrip("\\").strip())
        if not text.rstrip().endswith("\\"):
            break
    return " ".join(p for p in parts if p) or None


def _pool_name(plan, byte, dtype=None):
    """The pool allocation holding ``byte``. Where aliased allocations overlap there (``move_base_to``), the one of
    the access's ``dtype`` if exactly one is; else all of them, ``" / "``-joined: never one picked at random."""
    held = [
        a
        for a in plan.allocations
        if a.get("scope") == "shared.dyn"
        and a.get("offset") is not None
        and a.get("nbytes")
        and a["offset"] <= byte < a["offset"] + a["nbytes"]
    ]
    if len(held) > 1 and dtype is not None:
        typed = [a for a in held if str(a.get("dtype")) == str(dtype)]
        held = typed if len(typed) == 1 else held
    return " / ".join(a["name"] for a in held) or None


def _file_of(stmt):
    from txlab.ir import user_frame

    frame = user_frame(getattr(stmt, "span", None))
    return frame[0] if frame else None


# ---- accesses the walk does not reach (shared with txlab.coalescing) ---------------------------------------------
#: the most further walks made for code the first ones did not reach (one per CTA or loop depth a guard asks for)
REACH_WALKS = 4
#: a loop is followed further for a guard on its variable only up to this many times the walk's iteration limit
REACH_DEPTH = 8
#: seconds a walk followed further into a loop may take when the caller set no time budget (at least)
REACH_SECONDS = 2.0
#: how the reason of an access the walks did not reach starts
NOT_REACHED = "not reached by the CTAs/iterations walked"


def walk_sites(
    func, classifier, site_class, *, lowered, fname, figures, differs, cta=(0, 0, 0), limits=simt.Limits,
    finish=None, started=None, first_walk=None,
):  # fmt: skip
    """Sites (one per access in the code) of device function ``func`` and the first walk: CTA ``cta`` walked
    (:func:`txlab.simt.visit_accesses`), a second and the last CTA compared with it
    (:func:`txlab.simt.compare_other_cta`), then every access of the code that no walk reached: where a guard on
    its path names a CTA index or a loop iteration (``if bx == 5``, ``if k == 700`` past the iterations followed),
    that CTA or that far into the loop is walked too and the access analysed there (a ``partial`` row saying so);
    else, or where that walk does not reach it either, a row with no figures whose reason says which CTAs and
    iterations were walked and what it runs under. ``classifier()`` gives a fresh classifier (visit -> Access);
    ``first_walk(sites)`` runs on the first walk's sites before the others are compared. A ``site_class`` with a
    ``compare_walks(sites, walks)`` gets, at the end, the sites and every walk's own sites (one list per CTA walked,
    the first walk's first), to compare what an access did in each."""
    import time

    started = time.monotonic() if started is None else started
    compare_walks = getattr(site_class, "compare_walks", None)
    walks: list = []  # each walk's sites, for compare_walks
    if compare_walks is not None:
        finish_walk = finish

        def finish(ss):
            walks.append(ss)
            if finish_walk is not None:
                finish_walk(ss)

    seen: dict = {}  # walk label -> keys of the IR nodes it reported to the classifier

    def tracked(label):
        classify = classifier()

        def track(v):
            seen.setdefault(label, set()).add(_node_key(v.node))
            return classify(v)

        return track

    sites, walk = simt.visit_accesses(func, tracked("first"), site_class, cta=cta, limits=limits, finish=finish)
    first_seconds = time.monotonic() - started
    if first_walk is not None:
        first_walk(sites)
    started_last = []

    def fresh():
        started_last.append(True)
        return tracked("last")

    other = simt.compare_other_cta(
        func, tracked("other"), site_class, sites, walk, lowered=lowered, fname=fname, figures=figures,
        differs=differs, cta=cta, limits=limits, started=started, fresh_classifier=fresh, finish=finish,
    )  # fmt: skip
    walked = [tuple(cta)]
    if other is not None and "other" in seen:
        walked.append(other)
    last = simt.last_cta(lowered, fname)
    if started_last and last is not None:
        walked.append(last)
    _reach(
        func, classifier, site_class, sites, walk, seen, tracked, walked=walked, cta=tuple(cta), limits=limits,
        finish=finish, started=started, first_seconds=first_seconds, other=other, last=last,
    )  # fmt: skip
    if compare_walks is not None:
        compare_walks(sites, walks)
    return sites, walk


def _const(x):
    v = getattr(x, "value", x)
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None


def _node_key(node):
    h = getattr(node, "__chandle__", None)
    return h() if h is not None else id(node)


class _Entry:
    """One load, store or call of the code (what the walk would report), where it is and what it runs under."""

    __slots__ = ("kind", "node", "stmt", "group", "guards", "loops", "scope", "opaque")

    def __init__(self, kind, node, stmt, group, guards, loops, scope="", opaque=None):
        self.kind, self.node, self.stmt, self.group = kind, node, stmt, group
        self.guards, self.loops, self.scope, self.opaque = guards, loops, scope, opaque


class _Code:
    """The accesses of a device function in the walk's order (:func:`txlab.simt.execute`'s statements and
    expression operands), with the guards and loops around each, the CTA index variables and the bindings."""

    def __init__(self, func):
        import tvm
        import tvm.tirx as tx

        from txlab.ir import spans

        self._tvm, self._tx, self._spans = tvm, tx, spans
        self.entries: list = []
        self.cta_vars: dict = {}  # var key -> CTA index dimension (0 x, 1 y, 2 z)
        self.cluster_vars: dict = {}  # var key -> (dimension, the cluster's extent along it): rank in the cluster
        self.binds: dict = {}  # var key -> the expression it is bound to
        self.loop_vars: dict = {}  # var key -> the For
        self.headers: dict = {}  # For key -> the loop with its header's line (spans.loop_header)
        self._groups = 0
        self._stmt(func.body, (), ())

    def _group(self):
        self._groups += 1
        return self._groups

    def _stmt(self, s, guards, loops):
        tx = self._tx
        if s is None:
            return
        if isinstance(s, tx.SeqStmt):
            for c in s.seq:
                self._stmt(c, guards, loops)
        elif isinstance(s, tx.AttrStmt):
            tag = str(s.node.thread_tag) if s.attr_key == "thread_extent" else ""
            if tag.startswith("blockIdx."):
                self.cta_vars[_node_key(s.node.var)] = "xyz".index(tag[-1])
            elif tag.startswith("clusterCtaIdx.") and _const(s.value):
                # the walk gives it the CTA index modulo the cluster's extent along that dimension
                self.cluster_vars[_node_key(s.node.var)] = ("xyz".index(tag[-1]), _const(s.value))
            self._stmt(s.body, guards, loops)
        elif isinstance(s, (tx.Bind, tx.LetStmt)):
            self.binds[_node_key(s.var)] = s.value
            self._expr(s.value, s, self._group(), guards, loops)
            body = getattr(s, "body", None)
            if isinstance(body, tx.Stmt):
                self._stmt(body, guards, loops)
        elif isinstance(s, tx.For):
            header = self._spans.loop_header(s)
            group = self._group()
            for e in (s.min, s.extent, getattr(s, "step", None)):
                if e is not None:
                    self._expr(e, header, group, guards, loops)
            self.loop_vars[_node_key(s.loop_var)] = s
            self.headers[_node_key(s)] = header
            self._stmt(s.body, guards, (*loops, (s, header)))
        elif isinstance(s, tx.While):
            self._expr(s.condition, s, self._group(), guards, loops)
            self._stmt(s.body, guards, (*loops, (s, s)))
        elif isinstance(s, tx.IfThenElse):
            self._expr(s.condition, s, self._group(), guards, loops)
            self._stmt(s.then_case, (*guards, (s.condition, True, s)), loops)
            if s.else_case is not None:
                self._stmt(s.else_case, (*guards, (s.condition, False, s)), loops)
        elif isinstance(s, tx.BufferStore):
            group = self._group()
            self._expr(s.value, s, group, guards, loops)
            for i in s.indices:
                self._expr(i, s, group, guards, loops)
            scope = str(s.buffer.scope())
            if scope.startswith("shared") or scope == "global":
                self.entries.append(_Entry("store", s, s, group, guards, loops, scope))
        elif isinstance(s, tx.Evaluate):
            self._expr(s.value, s, self._group(), guards, loops)
        elif not isinstance(s, (tx.Break, tx.Continue)):
            body = getattr(s, "body", None)
            if isinstance(body, tx.Stmt):
                self._stmt(body, guards, loops)

    def _expr(self, e, stmt, group, guards, loops, opaque=None):
        """Post-order, as the walk evaluates operands before it reports the access that uses them. Operands of an
        expression kind the walk does not evaluate are still listed (``opaque``: that kind's name)."""
        from txlab.ir import children
        from txlab.ir import semantics

        tvm, tx = self._tvm, self._tx
        if isinstance(e, tvm.ir.TensorLoad):
            for i in e.indices:
                self._expr(i, stmt, group, guards, loops, opaque)
            scope = str(e.source.scope())
            if scope.startswith("shared") or scope == "global":
                self.entries.append(_Entry("load", e, stmt, group, guards, loops, scope, opaque))
            return
        if isinstance(e, tvm.ir.Call):
            short = (getattr(e.op, "name", "") or "").rsplit(".", 1)[-1]
            if short == "address_of" and len(e.args) == 1 and isinstance(e.args[0], tvm.ir.TensorLoad):
                for i in e.args[0].indices:
                    self._expr(i, stmt, group, guards, loops, opaque)
                return
            if short == "buffer_data":
                return
            for a in e.args:
                if isinstance(a, tvm.ir.Expr):
                    self._expr(a, stmt, group, guards, loops, opaque)
            if short != "if_then_else":
                self.entries.append(_Entry("call", e, stmt, group, guards, loops, "", opaque))
            return
        if isinstance(e, (tx.Var, tx.IntImm, tx.FloatImm)) or type(e).__name__ == "StringImm":
            return
        name = type(e).__name__
        walked = name in ("Not", "Select", "Cast", "Let", "Ramp", "Broadcast") or semantics.binary(name, "", True)
        for c in children(e):
            if isinstance(c, tvm.ir.Expr):
                self._expr(c, stmt, group, guards, loops, opaque or (None if walked else name))

    def loop_text(self, loop) -> str:
        line = simt.user_line(getattr(self.headers.get(_node_key(loop), loop), "span", None))
        return f"the loop at line {line}" if line else "a loop"

    # ---- what a guard asks for ------------------------------------------------------------------------------
    def _target(self, x, depth=0):
        """``("cta", dim)``, ``("cluster", dim, extent)`` or ``("loop", For)`` that expression ``x`` is, following
        bindings; else None."""
        tx = self._tx
        if type(x).__name__ == "Cast":
            return self._target(x.value, depth)
        if not isinstance(x, tx.Var) or depth > 8:
            return None
        k = _node_key(x)
        if k in self.cta_vars:
            return ("cta", self.cta_vars[k])
        if k in self.cluster_vars:
            return ("cluster", *self.cluster_vars[k])
        if k in self.loop_vars:
            return ("loop", self.loop_vars[k])
        if k in self.binds:
            return self._target(self.binds[k], depth + 1)
        return None

    def _equalities(self, cond, holds, out):
        name = type(cond).__name__
        if (name == "And" and holds) or (name == "Or" and not holds):
            self._equalities(cond.a, holds, out)
            self._equalities(cond.b, holds, out)
        elif name == "Not":
            self._equalities(cond.a, not holds, out)
        elif (name == "EQ" and holds) or (name == "NE" and not holds):
            for x, c in ((cond.a, cond.b), (cond.b, cond.a)):
                value = _const(c) if isinstance(c, self._tx.IntImm) else None
                target = self._target(x)
                if value is not None and target is not None:
                    out.setdefault(target, set()).add(value)

    def solve(self, entry) -> tuple[dict, dict, list] | None:
        """``({CTA dimension: index}, {dimension: (rank in the cluster, cluster extent)}, {For: value of its
        variable}, guards naming them)`` that the equalities among the guards of ``entry`` ask for; None when they
        contradict each other (no CTA runs it)."""
        out: dict = {}
        named = []
        for cond, holds, stmt in entry.guards:
            before = {k: set(v) for k, v in out.items()}
            self._equalities(cond, holds, out)
            if out != before:
                named.append(stmt)
        if any(len(v) > 1 for v in out.values()):
            return None
        cta = {t[1]: next(iter(v)) for t, v in out.items() if t[0] == "cta"}
        ranks = {t[1]: (next(iter(v)), t[2]) for t, v in out.items() if t[0] == "cluster"}
        loops = {t[1]: next(iter(v)) for t, v in out.items() if t[0] == "loop"}
        if any(dim in cta and cta[dim] % ext != rank for dim, (rank, ext) in ranks.items()):
            return None
        if any(not 0 <= rank < ext for rank, ext in ranks.values()):
            return None
        return cta, ranks, loops, named


def _static_args(call, binds, depth=0):
    """The arguments of ``call`` as far as an access's classifier reads them without a walk: strings, integer
    constants, ``address_of(buf[...])`` as that buffer (index unknown); the rest unknown."""
    return [_static_value(a, binds, depth) for a in call.args]


def _static_value(e, binds, depth=0):
    import tvm
    import tvm.tirx as tx

    if type(e).__name__ == "StringImm":
        return str(e.value)
    if isinstance(e, tx.IntImm):
        return int(e.value)
    if isinstance(e, tx.Var):
        k = _node_key(e)
        return _static_value(binds[k], binds, depth + 1) if k in binds and depth < 8 else simt.UNKNOWN
    if isinstance(e, tvm.ir.Call):
        short = (getattr(e.op, "name", "") or "").rsplit(".", 1)[-1]
        if short == "address_of" and len(e.args) == 1 and isinstance(e.args[0], tvm.ir.TensorLoad):
            return simt.AddrValue(e.args[0].source, simt.UNKNOWN)
        if short == "buffer_data" and len(e.args) == 1 and hasattr(e.args[0], "scope"):
            return simt.AddrValue(e.args[0], simt.UNKNOWN)
        if depth < 8 and e.args and (short.startswith(("cvta", "reinterpret", "mapa")) or short == "func_call"):
            for a in reversed(list(e.args)):
                v = _static_value(a, binds, depth + 1)
                if isinstance(v, simt.AddrValue):
                    return v
    return simt.UNKNOWN


def _static_sites(code, classify):
    """``[(entry, access, visit, key)]`` of the code's accesses the analysis counts (``classify`` says which), keyed as
    :func:`txlab.simt.visit_accesses` keys the sites of a walk."""
    import tvm_ffi

    out = []
    group, n, loads = None, 0, []
    for e in code.entries:
        line = simt.user_line(getattr(e.stmt, "span", None))
        args = _static_args(e.node, code.binds) if e.kind == "call" else []
        v = simt.Visit(e.kind, e.node, e.stmt, line, np.ones(1, dtype=bool), index=simt.UNKNOWN, args=args,
                       scope=e.scope)  # fmt: skip
        try:
            access = classify(v)
        except Exception:  # noqa: BLE001 - a call whose arguments the classifier needs evaluated: not counted
            access = None
        if access is None:
            continue
        if e.group != group:
            group, n, loads = e.group, 0, []
        if e.kind == "load":
            if any(tvm_ffi.structural_equal(node, e.node) for node in loads):
                continue
            loads.append(e.node)
        n += 1
        buf = access.buffer
        key = (line, access.kind, getattr(buf, "name", str(buf)), n) if line is not None else (_node_key(e.node),
                                                                                                 access.kind)  # fmt: skip
        out.append((e, access, v, key))
    return out


def _ctas_text(ctas) -> str:
    ctas = list(dict.fromkeys(tuple(c) for c in ctas))
    if len(ctas) == 1:
        return f"CTA {ctas[0]}"
    return "CTAs " + ", ".join(str(c) for c in ctas[:-1]) + f" and {ctas[-1]}"


def _guard_text(stmt) -> str:
    """A guard as the user wrote it (its source line), else where it is."""
    import tvm

    from txlab.ir import user_frame, walk

    frame = user_frame(getattr(stmt, "span", None))
    if frame is None:  # TVM's passes may drop the if's span; its condition's expressions keep theirs
        for n in walk(getattr(stmt, "condition", stmt)):
            if isinstance(n, tvm.ir.Expr) and not isinstance(n, tvm.tirx.Var):
                frame = user_frame(getattr(n, "span", None))
                if frame is not None and frame[1] > 0:
                    break
                frame = None
    if frame is None:
        return "a condition"
    text = source_text(frame[0], frame[1])
    return f"`{text.rstrip(':').strip()}` (line {frame[1]})" if text else f"a condition at line {frame[1]}"


def _reach(
    func, classifier, site_class, sites, walk, seen, tracked, *, walked, cta, limits, finish, started, first_seconds,
    other, last,
):  # fmt: skip
    """Rows for the accesses of the code that no walk reached (see :func:`walk_sites`)."""
    import time

    code = _Code(func)
    reached = set(seen.get("first", ()))
    known = {s.key for s in sites}
    missing = [
        m for m in _static_sites(code, classifier()) if _node_key(m[0].node) not in reached and m[3] not in known
    ]
    if not missing:
        return
    limit = limits.max_loop_iterations
    walked = [tuple(c) for c in walked]
    plans: dict = {}  # (CTA, iterations to follow or None) -> (where, guards): what a missing access's guards ask for
    hints: dict = {}  # id(entry) -> what its guards ask for, in words
    for entry, _access, _v, _key in missing:
        plan = _plan(code, entry, cta, last, limit, hints)
        if plan is not None and (plan[1] is not None or plan[0] not in walked):
            plans.setdefault(plan[:2], plan[2:])
    for (target, depth), (where, named) in list(plans.items())[:REACH_WALKS]:
        left = None
        if limits.max_seconds is not None:
            left = limits.max_seconds - (time.monotonic() - started)
            if left <= 0:
                break
        if depth is not None:  # a walk that follows the loop further: about depth / limit times the first one
            cap = max(REACH_SECONDS, 4 * first_seconds * depth / max(limit, 1))
            left = cap if left is None else min(left, cap)

        class Further(limits):
            max_loop_iterations = max(limit, depth or 0)
            max_seconds = left

        label = ("reach", target, depth)
        again, _w = simt.visit_accesses(func, tracked(label), site_class, cta=target, limits=Further, finish=finish)
        guard = " and ".join(_guard_text(s) for s in named)
        why = f"reached only {where}, under {guard}: " + (
            f"{_ctas_text([target])}'s figures, from a further walk of it"
            if depth is None
            else f"the figures of a further walk of {_ctas_text([target])} that followed {depth} iterations of its "
            f"loops (past the first {limit})"
        )
        for s in again:
            if s.key not in known:
                s.reasons = {why: None, **s.reasons}
                sites.append(s)
                known.add(s.key)
        reached |= seen.get(label, set())
        if target not in walked:
            walked.append(target)
    # what no walk reached: a row with no figures, saying why
    done: dict = {}
    for entry, access, v, key in missing:
        if _node_key(entry.node) in reached or key in known:
            continue
        site = done.get(key)
        if site is None:
            site = done[key] = site_class(v, access)
            site.key = key
            site.unreached = True
            sites.append(site)
        reason = _unreached_reason(code, entry, walk, walked, limit, hints.get(id(entry)), seen, other, last)
        site.reasons.setdefault(reason, None)


def _plan(code, entry, cta, last, limit, hints):
    """``(CTA, iterations or None, where, guards)``: the CTA (and how far into its loops) that the equalities among
    the guards of ``entry`` ask a walk for, in words, and the guards naming them; None when they ask for none the walk
    can make (``hints`` gets what they ask for, in words, either way)."""
    solved = code.solve(entry)
    if solved is None:
        hints[id(entry)] = "its guards contradict each other: no CTA runs it"
        return None
    want_cta, want_ranks, want_loops, named = solved
    if not named:
        if entry.guards:
            inner = list(dict.fromkeys(_guard_text(g[2]) for g in entry.guards))[-3:]
            hints[id(entry)] = f"it runs under {' and '.join(inner)}"
        return None
    guards = " and ".join(_guard_text(s) for s in named)
    target = list(cta)
    for dim, (rank, ext) in want_ranks.items():  # the walked CTA's cluster, the CTA of that rank in it
        target[dim] = target[dim] // ext * ext + rank
    for dim, value in want_cta.items():
        target[dim] = value
    target = tuple(target)
    want_cta = want_cta or (want_ranks if target != tuple(cta) else {})
    where = [f"by {_ctas_text([target])}"] if want_cta else []
    if want_cta and last is None:
        where[0] += " (if the launch has it: the grid's size is known only at launch)"
    if last is not None and not all(0 <= t <= g for t, g in zip(target, last)):
        hints[id(entry)] = f"{guards} holds in no CTA of the grid {tuple(g + 1 for g in last)}"
        return None
    depth = None
    for loop, value in want_loops.items():
        lo, step, ext = _const(loop.min), _const(getattr(loop, "step", None) or 1), _const(loop.extent)
        if lo is None or not step or (value - lo) % step:
            continue
        it = (value - lo) // step
        if it < 0 or (ext is not None and it >= -(-ext // step)):
            hints[id(entry)] = f"{guards} holds in no iteration of {code.loop_text(loop)}"
            return None
        where.append(f"at iteration {it} of {code.loop_text(loop)}")
        if it >= limit:
            depth = max(depth or 0, it + 1)
    hints[id(entry)] = f"it runs under {guards}" + (f", {' and '.join(where)} only" if where else "")
    if not where or (depth is None and not want_cta):
        return None  # nothing to walk
    if depth is not None and depth > REACH_DEPTH * limit:
        return None
    return target, depth, " ".join(where), named


def _predicated(call) -> bool:
    """Whether a ``T.ptx`` call was written with ``pred=`` (its flags string, the last argument, names it)."""
    last = call.args[-1] if len(call.args) else None
    return type(last).__name__ == "StringImm" and "pred" in str(last.value).split(",")


def _unreached_reason(code, entry, walk, walked, limit, hint, seen, other, last) -> str:
    """Why an access has no figures: the CTAs and iterations walked, and what it runs under."""
    if entry.opaque:
        return (
            f"{NOT_REACHED}: it is inside a {entry.opaque} expression, whose operands the static walk does not "
            "evaluate; not analysed"
        )
    what = [_ctas_text(walked)]
    for loop, _header in entry.loops:
        ext = _const(getattr(loop, "extent", None))
        if ext is not None and ext > limit:
            what.append(f"the first {limit} of the {ext} iterations of {code.loop_text(loop)}")
    if entry.loops and len(what) == 1 and (walk.loops_cut or walk.truncated):
        what.append("not every iteration of its loops: the walk was cut short (see notes)")
    if entry.kind == "call" and _predicated(entry.node):
        hint = "; ".join(h for h in (hint, "its pred= operand holds for no thread walked") if h)
    node = _node_key(entry.node)
    cut = [c for lab, c in (("other", other), ("last", last)) if c is not None and node in seen.get(lab, ())]
    tail = f"; {hint}" if hint else ""
    if cut:
        tail += f"; {_ctas_text(cut)} reached it, but that walk was cut short, so it is not counted"
    return f"{NOT_REACHED} ({'; '.join(what)}){tail}: not analysed"
