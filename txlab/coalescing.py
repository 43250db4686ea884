"""Global-memory coalescing of every access in a kernel, from the index expressions it runs.

For each global load, store and atomic of the lowered device code, the index is evaluated for
every thread of a CTA and every iteration of the enclosing loops (:mod:`txlab.simt`, the walk the
bank-conflict analysis uses), and each warp-instruction's lanes are turned into the memory
transactions the L1/L2 serve:

* a *sector* is 32 bytes, a *cache line* 128 bytes; a warp-instruction makes one L1 *request* per
  cache line it touches (Nsight Compute's tag requests: 1 for 32 coalesced 4-byte lanes, 4 for
  16-byte lanes, 32 when every lane is on a line of its own);
* the sectors a request needs are the distinct 32-byte sectors its active lanes' bytes fall in;
  the *ideal* is the fewest sectors those bytes could fill (distinct bytes / 32, rounded up), so a
  broadcast (every lane on one word) is ideal too;
* buffers start 256-byte aligned (``cudaMalloc`` and TVM's allocator guarantee it), so byte
  address = flat element index x element size.

These are the quantities Nsight Compute's source counters report per instruction
(``memory_l2_theoretical_sectors_global`` and ``..._ideal`` over ``memory_l1_tag_requests_global``),
per CTA here (CTA 0 unless ``cta=`` says otherwise). Where a grid has more CTAs, a second one
(:func:`txlab.simt.other_cta`: index 1 along the first dimension of more than one CTA, 3 along the
others, so it is odd and off the diagonal) is walked too, and the last CTA (the grid less one along each
dimension, where a partial last block or a tail branch runs): an access whose transactions differ there
(a row pitch that is not a multiple of the cache line moves the other CTAs' rows off the line, a
tail guard) or that runs a different number of times there is ``partial``, its reason giving both, and an
access only such a CTA reaches (code under a condition on the CTA index) is a ``partial`` row with its figures. Every
access of the code is a row: one no walk reaches is walked to where a guard on its path names a CTA or a loop iteration
(``if bx == 5``; ``if k == 700`` past the iterations followed), a ``partial`` row saying so, else it is ``unknown``
with a reason naming the CTAs and iterations walked and the guard it runs under (:func:`txlab.banks.walk_sites`); the
headline counts partly unknown rows apart from the analysed ones. An access whose index depends on a
value read from memory (a gather) or that is made by an instruction whose per-lane addresses the
walk does not model (TMA, ``ptx.ld``) is listed with ``status="unknown"`` and the reason, never as
coalesced. For a ``txlab.Compiled``, an access the SASS of its line does not make is ``partial``, saying so, with
``not_in_sass`` set and its figures left out of the line's (:meth:`CoalescingReport.by_line`): its line has no
global access of its kind (nvcc reused a value loaded on another line), or none of the line's accesses reaches its
buffer (each traced in the SASS to the kernel argument its address is computed from, ``c[0x0][...]``), or it
repeats an earlier line's load where the line's loads move fewer bytes than its accesses by exactly that one's.
An atomic row gives the most lanes of one warp on one address (``lanes_per_address``: serialised at the atomic
unit, so more than one is never "coalesced"; 1 where nvcc aggregated the warp's atomic to a leader lane), the
SASS that makes it (``REDG`` / ``ATOMG`` and the operation) and whether every CTA walked makes it on the same
addresses (the grid's CTAs then contend for them).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from txlab import simt
from txlab.banks import _AGGREGATED, SassFlow, ir_bytes, reused_loads, sass_code

SECTOR_BYTES = 32
LINE_BYTES = 128
WARP = 32

#: calls (by short name) that read or write global memory through addresses the walk does not model
_OPAQUE_GLOBAL = {
    "ldg": "__ldg",
    **{n: "ptx.ld" for n in ("ld", "ld_vec", "ld_vec256", "ld_proxy_readonly", "ldu", "ldu_vec")},
    **{n: "ptx.st" for n in ("st", "st_vec", "st_vec256", "st_bulk")},
}


def _ratio(num: str, den: str, doc: str | None = None) -> property:
    """A row's ``num / den`` as a property: None when ``den`` is 0 or the access is unknown."""

    def get(self) -> float | None:
        d = getattr(self, den)
        return getattr(self, num) / d if d and self.status != "unknown" else None

    return property(get, doc=doc)


@dataclass
class GlobalAccess:
    """One global-memory access site of the kernel (one load, store or atomic in the code)."""

    buffer: str
    lineno: int | None
    access: str  # "load", "store", "atomic" or the op that makes it
    dtype: str
    bytes_per_lane: int
    instructions: int  # warp-instructions analysed (per CTA)
    requests: int  # L1 requests (one per cache line touched) of those instructions (per CTA)
    sectors: int  # 32-byte sectors they need (per CTA)
    ideal_sectors: int
    lines: int  # 128-byte cache lines they touch (per CTA)
    worst_sectors: int  # the most sectors one instruction needs
    status: str = "analysed"  # "analysed", "partial" (some executions unknown) or "unknown"
    reason: str = ""
    source: str | None = None
    notes: list = field(default_factory=list)
    #: the SASS of its line does not make it (the compiler reused a value loaded on another line, merged the access
    #: there or removed it): partial, and left out of :meth:`CoalescingReport.by_line`'s figures
    not_in_sass: bool = False
    #: atomics: the most lanes of one warp-instruction on one address, which the atomic unit serves one after
    #: another (1 where the compiler aggregated the warp's atomic: one lane per distinct address); None otherwise
    lanes_per_address: int | None = None
    #: atomics of a compiled kernel: the SASS instruction(s) making it (``REDG.E.ADD.F32.FTZ.RN.STRONG.GPU``: a
    #: reduction, no value returned; ``ATOMG.E.ADD...``: the old value returned), " / "-joined when several
    sass_opcode: str | None = None
    #: atomics: whether every CTA walked makes it on the same addresses (the grid's CTAs then contend for them in
    #: the L2); None when fewer than two CTAs were walked or an execution was unknown
    same_address_every_cta: bool | None = None

    sectors_per_request = _ratio("sectors", "requests")
    ideal_sectors_per_request = _ratio("ideal_sectors", "requests")
    sectors_per_instruction = _ratio("sectors", "instructions")
    efficiency = _ratio(
        "ideal_sectors", "sectors", "Ideal over needed sectors (1.0 = fully coalesced), None when unknown."
    )

    @property
    def coalesced(self) -> bool | None:
        """Whether the sectors are all used (efficiency 1.0); never for an atomic whose lanes share an address
        (``lanes_per_address`` > 1: serialised however few sectors it needs). None when unknown."""
        e = self.efficiency
        if e is None:
            return None
        return e >= 0.999 and not (self.lanes_per_address or 0) > 1

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(
            sectors_per_request=self.sectors_per_request,
            sectors_per_instruction=self.sectors_per_instruction,
            ideal_sectors_per_request=self.ideal_sectors_per_request,
            efficiency=self.efficiency,
            coalesced=self.coalesced,
        )
        return d


class CoalescingReport(simt.AccessReport):
    """A list of :class:`GlobalAccess` rows: per access, per line, counts and a table."""

    def counts(self) -> dict:
        """How many accesses there are, how many were analysed fully, how many only partly (``partial``: some
        executions unknown, figures from another CTA, ...; the key is there when there are any) and how many are
        unknown."""
        unknown = sum(r.status == "unknown" for r in self)
        partial = sum(r.status == "partial" for r in self)
        return {
            "accesses": len(self),
            "analysed": len(self) - unknown - partial,
            **({"partial": partial} if partial else {}),
            "unknown": unknown,
        }

    def by_line(self) -> dict:
        """``{user line: {"sectors_per_request", "ideal_sectors_per_request", "status", "accesses", ...}}``:
        the line's analysed accesses pooled (the unit SourceView and ncu's source view show); the
        line is "partial" when any access on it is unknown or partly unknown, with the reasons. An access the
        SASS does not make on the line (``not_in_sass``: counted in ``"not_in_sass"``) adds its reason, not its
        figures: they are what the hardware moves there. A line with no figures at all is "unknown".
        ``"lanes_per_address"``: the most lanes of a warp on one address of the line's atomics (> 1: serialised)."""
        out: dict = {}
        for r in self:
            if r.lineno is None:
                continue
            d = out.setdefault(
                r.lineno,
                {
                    "requests": 0,
                    "sectors": 0,
                    "ideal_sectors": 0,
                    "accesses": 0,
                    "unknown": 0,
                    "partial": 0,
                    "not_in_sass": 0,
                    "lanes_per_address": 0,
                    "reasons": [],
                },
            )
            d["accesses"] += 1
            d["lanes_per_address"] = max(d["lanes_per_address"], r.lanes_per_address or 0)
            if r.status == "unknown":
                d["unknown"] += 1
                d["reasons"].append(r.reason)
                continue
            if r.not_in_sass:  # the hardware does not make it here: its reason, not its figures
                d["not_in_sass"] += 1
                d["partial"] += 1
                d["reasons"].append(r.reason)
                continue
            if r.status == "partial":  # some executions unknown: the line is not fully known either
                d["partial"] += 1
                d["reasons"].append(r.reason)
            d["requests"] += r.requests
            d["sectors"] += r.sectors
            d["ideal_sectors"] += r.ideal_sectors
        for d in out.values():
            n = d["requests"]
            d["sectors_per_request"] = d["sectors"] / n if n else None
            d["ideal_sectors_per_request"] = d["ideal_sectors"] / n if n else None
            d["status"] = (
                "unknown"
                if d["unknown"] == d["accesses"] or not n
                else "partial"
                if d["unknown"] or d["partial"]
                else "analysed"
            )
        return out

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "accesses": [r.to_dict() for r in self],
            "counts": self.counts(),
            "lines": {str(k): v for k, v in self.by_line().items()},
            "notes": list(self.notes),
        }

    def title(self) -> str:
        c = self.counts()
        partly = f", {c['partial']} partly unknown" if c.get("partial") else ""
        return (
            f"{self.kernel}: {c['accesses']} global-memory access(es), {c['analysed']} analysed{partly}, "
            f"{c['unknown']} unknown"
        )

    def row_text(self, r) -> str:
        if r.status == "unknown":
            return f"unknown: {r.reason}"
        if r.not_in_sass:
            return f"not made on this line: {r.reason}"
        verdict = (
            "coalesced"
            if r.coalesced
            else f"{r.efficiency:.0%} of sectors used"
            if not (r.lanes_per_address or 0) > 1
            else f"serialised: {r.lanes_per_address} lanes of a warp on one address, served one after another"
        )
        part = f"  (partly unknown: {r.reason})" if r.status == "partial" else ""
        return (
            f"{r.sectors / r.instructions:.1f} sectors and {r.requests / r.instructions:.1f} "
            f"requests per instruction (ideal {r.ideal_sectors / r.instructions:.1f} sectors; "
            f"{r.sectors_per_request:.2f} sectors/request)  {verdict}{_atomic_text(r)}{part}"
        )


def _atomic_text(r) -> str:
    """What an atomic row adds to its line of the table: the SASS that makes it, aggregation, contention among CTAs."""
    if r.access != "atomic":
        return ""
    out = [r.sass_opcode] if r.sass_opcode else []
    out += [n for n in r.notes if n.startswith(_AGGREGATED)]
    if r.same_address_every_cta:
        out.append("every CTA walked makes it on the same address(es): the grid's CTAs contend for them")
    return f"  ({'; '.join(out)})" if out else ""


def warp_sectors(addrs: np.ndarray, active: np.ndarray, width: int) -> tuple[int, int, int, int]:
    """(requests, sectors, ideal sectors, cache lines) of one warp-instruction: ``addrs`` the byte
    address of each of the 32 lanes, ``active`` the lane mask, ``width`` the bytes each lane moves.

    A request is one L1 tag lookup, one per 128-byte cache line the instruction touches (so
    ``requests == lines``): what Nsight Compute counts as ``memory_l1_tag_requests_global``, as
    measured on the H200 for coalesced, strided, vector and row-per-lane accesses."""
    a = np.asarray(addrs, dtype=np.int64)[np.asarray(active, dtype=bool)]
    if a.size == 0:
        return 0, 0, 0, 0
    width = max(int(width), 1)
    first, last = a // SECTOR_BYTES, (a + width - 1) // SECTOR_BYTES
    touched: set = set()
    for f, l in zip(first.tolist(), last.tolist()):
        touched.update(range(f, l + 1))
    lines = {t * SECTOR_BYTES // LINE_BYTES for t in touched}
    unique_bytes = len(np.unique(a)) * width
    ideal = min(len(touched), max(1, -(-unique_bytes // SECTOR_BYTES)))
    return len(lines), len(touched), ideal, len(lines)


def global_access(v) -> simt.Access | None:
    """What visit ``v`` does to global memory (a :class:`txlab.simt.Access`), or None."""
    access = simt.direct_access(v, "global")
    if access is not None or v.kind != "call":
        return access
    name = str(getattr(v.node.op, "name", "") or "")
    addrs = [a for a in v.args if isinstance(a, simt.AddrValue)]
    glob = [a for a in addrs if str(a.buffer.scope()) == "global"]
    short = name.rsplit(".", 1)[-1]
    if short == "ldg" and glob:  # __ldg(&A[i]): a global load through the read-only path
        return simt.Access("load", glob[0].buffer, glob[0].index)
    if simt.is_atomic(short):
        return simt.atomic_access(v, "global")
    if short in simt.CP_ASYNC:
        if not glob and addrs:
            return None
        # on the H200 the same global reads measured 4 sectors/request with a contiguous shared
        # destination and 8 with lanes 32 bytes apart there: LDGSTS's requests depend on both sides
        return simt.Access(
            "cp.async",
            glob[0].buffer if glob else "global",
            simt.UNKNOWN,
            "cp.async (LDGSTS): its L1 requests depend on the shared destination's layout too (measured "
            "on the H200), which this model of global requests does not follow",
        )
    if any(w in short for w in ("commit_group", "wait_group", "wait_all", "prefetch")):
        return None
    if short.startswith(("cp_async_bulk", "cp_reduce_async_bulk")) and ("g2s" in short or "s2g" in short):
        return simt.Access(
            "TMA",
            glob[0].buffer if glob else simt.tensor_map_name(v.node) or "global",
            simt.UNKNOWN,
            f"TMA ({short}): one bulk copy by the tensor-memory accelerator, not per-lane requests of the "
            "load/store unit",
        )
    label = _OPAQUE_GLOBAL.get(short)
    if label is None or (addrs and not glob):
        return None
    buf = glob[0].buffer if glob else "global"
    return simt.Access(
        short, buf, simt.UNKNOWN, f"{label}: its per-lane global addresses are not evaluated by the static walk"
    )


def coalescing(
    kernel, *, arch: str | None = None, cta=(0, 0, 0), limits=simt.Limits, params: dict | None = None
) -> CoalescingReport:
    """One :class:`GlobalAccess` per global-memory access site of ``kernel`` (a prim_func,
    IRModule or ``txlab.Compiled``), from its index expressions evaluated for every lane of every
    warp of CTA ``cta``. Nothing runs on a GPU. ``limits``: the walk's :class:`txlab.simt.Limits`
    (a time budget makes a long kernel's rows partial, never missing). ``params`` binds scalar kernel
    arguments (``{"k": 4096}``, as :func:`txlab.pools.layout`'s): a runtime pitch, loop bound or grid is then
    that value; without it an index that depends on one is unknown, saying so. An index that adds a value read
    from memory once per warp (a row gather, :class:`txlab.simt.WarpUniform`) in steps of whole 128-byte lines
    has the figures of its known part, whatever the value; other gathers are unknown."""
    from txlab import ir
    from txlab.arch import resolve_arch
    from txlab.banks import _file_of, source_text, walk_sites
    from txlab.sass.analyses import _arch_major

    arch = resolve_arch(arch) if arch is not None else getattr(kernel, "arch", None) or "sm_90a"
    bind = {}
    if params is not None:  # checked as txlab.pools.layout checks them
        bind = simt.checked_params(ir.as_module(kernel, what="txlab.pools.coalescing")[0], params)
    if bind:

        class Bound(limits):  # every walk (a further CTA's, an unreached access's) knows the bound arguments
            params = {**(getattr(limits, "params", None) or {}), **bind}

        limits = Bound
    lowered = simt.bind_launch(simt.lowered_of(kernel, arch, "txlab.pools.coalescing"), bind)
    cta = simt.checked_cta(cta, lowered, "txlab.pools.coalescing")
    funcs = simt.device_functions(lowered)
    made = _sass_accesses(kernel)
    report = CoalescingReport()
    report.notes = []
    names = []
    for fname, func in funcs:
        names.append(fname)
        start = time.monotonic()
        site = _Site256 if (_arch_major(arch) or 0) >= 10 else _Site  # sm_100 on: 256-bit global accesses
        sites, walk = walk_sites(
            func,
            lambda: global_access,
            site,
            lowered=lowered,
            fname=fname,
            figures=_per_instruction,
            differs=_differs,
            cta=cta,
            limits=limits,
            started=start,
            first_walk=lambda first: _check_sass(first, made),
        )
        _check_sass(sites, made)  # the rows the further walks added (and those no walk reached) too
        for site in sites:
            fn = _file_of(site.stmt)
            report.append(site.row(source_text(fn, site.line) if fn and site.line else None))
        report.notes += [f"{fname}: {n}" if len(funcs) > 1 else n for n in walk.notes]
    report.sort(key=lambda r: (r.lineno if r.lineno is not None else 1 << 30, r.access))
    report.kernel = ", ".join(names)
    return report


#: where the kernel's arguments start in constant bank 0 (``c[0x0][0x210]`` is the first one's on sm_90), by the
#: arch's major version: as nvcc's SASS reads them for sm_80/89, sm_90 and sm_100/120
_PARAM_BASE = {7: 0x160, 8: 0x160, 9: 0x210, 10: 0x380, 11: 0x380, 12: 0x380}
_PTX_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(")
_PTX_PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.[a-z]+?(\d+)\b[^,]*?_param_\d+(?:\[(\d+)\])?")
#: distinct addresses of an atomic kept per walk (to compare CTAs); past that, not compared
_ATOMIC_ADDRESSES = 1 << 14


@dataclass
class _SassAccess:
    """One global load, store or atomic of the SASS (:func:`_sass_accesses`)."""

    width: int  # bytes per lane
    buffers: frozenset | None  # the buffers over the kernel argument its address is computed from; None: not traced
    opcode: str
    aggregated: bool = False  # an atomic the compiler aggregated over the warp (SassFlow.aggregated)


@dataclass
class _Made:
    """The global accesses the SASS of a compiled kernel makes, per user line (:func:`_sass_accesses`)."""

    each: dict  # (user line, "load" | "store" | "atomic") -> [_SassAccess], in program order
    buffers: set  # names of the global buffers over a kernel argument (those an access can be traced to)


def _sass_accesses(kernel) -> _Made | None:
    """The global accesses the SASS of a ``txlab.Compiled`` makes on each user line (its line map), each traced back
    to the kernel argument its address is computed from where the SASS shows it (:meth:`txlab.banks.SassFlow.params`);
    None for a kernel that was not compiled."""
    from txlab.sass.opcodes import memory_kind

    code = sass_code(kernel)
    if code is None:
        return None
    kinds = {"ld": "load", "st": "store", "atomic": "atomic"}
    args = _argument_buffers(kernel)
    made = _Made({}, {b for spans in args.values() for _, _, names in spans for b in names})
    for name, listing in code.items():
        flow = None
        spans = args.get(name)
        for k, ins in enumerate(listing):
            mk = memory_kind(ins.opcode)
            if ins.opcode.startswith(("RED.E.", "ATOM.E.")):  # before sm_90 a global atomic is a generic RED/ATOM
                mk = ("atomic", "global")
            if not ins.user_line or not mk or len(mk) < 2 or mk[1] != "global":
                continue
            flow = flow or SassFlow(listing)
            mods = set(ins.opcode.split(".")[1:])
            wide = next((b for b in (256, 128, 64) if str(b) in mods), None)  # 256: sm_100's LDG/STG.ENL2.256
            width = (wide or (mk[2] if len(mk) > 2 else 32)) // 8
            buffers = None
            if spans:
                found = flow.params(k, flow.address_registers(k))
                buffers = _argument_of(found, spans) if found else None
            atomic = mk[0] == "atomic"
            made.each.setdefault((ins.user_line, kinds[mk[0]]), []).append(
                _SassAccess(width, buffers, ins.opcode, atomic and flow.aggregated(k))
            )
    return made


def _argument_of(offsets, spans) -> frozenset | None:
    """The buffers over the one pointer argument among constant-bank offsets ``offsets`` (what an address is computed
    from); None when there is not exactly one, or an offset past the arguments' start lies in none of them (the
    arguments are not where :data:`_PARAM_BASE` says)."""
    start = min(lo for lo, _, _ in spans)
    hit = set()
    for x in offsets:
        if x < start:  # not an argument (the stack pointer, the memory descriptor)
            continue
        arg = next((names for lo, hi, names in spans if lo <= x < hi), None)
        if arg is None:
            return None
        if arg:
            hit.add(arg)
    return next(iter(hit)) if len(hit) == 1 else None


def _argument_buffers(kernel) -> dict:
    """``{kernel name: [(first byte, end byte, names of the global buffers declared over it)]}``: where each argument of
    a compiled kernel lies in constant bank 0 (PTX's parameter list, from where the arch puts the first) and the
    buffers its lowered code declares over a pointer argument; {} where that is not known."""
    from txlab import ir
    from txlab.banks import _node_key
    from txlab.sass.analyses import _arch_major

    base = _PARAM_BASE.get(_arch_major(getattr(kernel, "arch", None) or "") or 0)
    ptx = getattr(kernel, "ptx", None)
    if base is None or not isinstance(ptx, str):
        return {}
    layouts = {}
    for m in _PTX_ENTRY.finditer(ptx):
        offsets, off = [], 0
        for p in _PTX_PARAM.finditer(ptx[m.end() : ptx.find(")", m.end())]):
            elem, count = max(int(p.group(2)) // 8, 1), int(p.group(3) or 1)
            align = int(p.group(1) or elem)
            off = -(-off // align) * align
            offsets.append((off, elem * count))
            off += elem * count
        layouts[m.group(1)] = offsets
    out = {}
    try:
        funcs = simt.device_functions(kernel)
    except Exception:  # noqa: BLE001 - no lowering to read: nothing is traced to a buffer
        return {}
    for fname, func in funcs:
        params = [_node_key(p) for p in func.params]
        layout = layouts.get(fname)
        if layout is None or len(layout) != len(params):
            continue
        names: dict = {}
        for n in ir.walk(func.body):
            data = getattr(n, "data", None) if type(n).__name__ == "DeclBuffer" else None
            if data is not None and str(n.buffer.scope()) == "global" and _node_key(data) in params:
                names.setdefault(params.index(_node_key(data)), set()).add(n.buffer.name)
        out[fname] = [
            (base + off, base + off + size, frozenset(names.get(i, ()))) for i, (off, size) in enumerate(layout)
        ]
    return out


def _name(site) -> str:
    return getattr(site.buf, "name", None) or str(site.buf)


def _check_sass(sites, made) -> None:
    """Sites of a compiled kernel that the SASS of their line does not make are partial, saying so, and their figures
    are left out of the line's (``not_in_sass``): a line with no global access of the site's kind (nvcc reused a
    value another line loaded, or merged the access elsewhere); a buffer that none of the line's accesses of that kind
    reaches, every one of them traced to its kernel argument; a load that repeats an earlier line's where the line's
    SASS loads fewer bytes than its accesses (:func:`txlab.banks.reused_loads`). Atomic sites get the SASS opcode
    that makes them, and whether it is aggregated over the warp."""
    if made is None:
        return
    for site in sites:
        if site.kind not in ("load", "store", "atomic") or not site.line:
            continue
        each = made.each.get((site.line, site.kind))
        name = _name(site)
        if not each:
            site.absent(
                f"the SASS has no global {site.kind} on this line: the compiler reused a value loaded on "
                "another line, merged the access there or removed it, so the hardware does not make it here"
            )
            continue
        traced = name in made.buffers and all(a.buffers is not None for a in each)
        if traced and all(name not in a.buffers for a in each):
            reached = ", ".join(sorted(set().union(*(a.buffers for a in each))))
            site.absent(
                f"the SASS's global {site.kind}s on this line access {reached} only (each traced to its kernel "
                f"argument), not {name}: the compiler reused a value loaded on another line, merged the access there "
                "or removed it, so the hardware does not make it here"
            )
        if site.kind == "atomic":
            mine = [a for a in each if a.buffers is None or name in a.buffers]
            if mine:
                site.sass_opcode = " / ".join(dict.fromkeys(a.opcode for a in mine))
                site.aggregated = all(a.aggregated for a in mine)
    # loads the compiler reused from an earlier line: per buffer where every load of the line is traced, else per line
    by_line: dict = {}
    for s in sites:
        if s.kind == "load" and s.line and not s.not_in_sass:
            by_line.setdefault(s.line, []).append(s)
    groups = []
    for line, group in by_line.items():
        each = made.each.get((line, "load"), [])
        if all(a.buffers is not None for a in each) and all(_name(s) in made.buffers for s in group):
            for name in dict.fromkeys(_name(s) for s in group):
                mine = [s for s in group if _name(s) == name]
                groups.append((mine, sum(a.width for a in each if name in a.buffers)))
        else:
            groups.append((group, sum(a.width for a in each)))

    def made_on(e) -> bool:
        return any(a.buffers is None or _name(e) in a.buffers for a in made.each.get((e.line, "load"), ()))

    for site, earlier in reused_loads(sites, groups, made_on).items():
        site.absent(
            "the SASS of this line loads fewer bytes per lane from global memory than its accesses: the compiler "
            f"reused the value of this load made on line {earlier.line}, so the hardware does not make it here"
        )


def _per_instruction(site):
    if not site.instructions or site.unknowns:
        return None
    n = site.instructions
    return site.sectors / n, site.requests / n, site.ideal / n


def _differs(mine, alt, cta, other) -> str:
    """The reason of an access whose transactions per instruction differ in CTA ``other`` (its
    figures stay those of ``cta``), naming both."""
    return (
        f"CTA {other} needs {alt[0]:.1f} sectors and {alt[1]:.1f} requests per instruction (ideal "
        f"{alt[2]:.1f}) where CTA {cta} needs {mine[0]:.1f} and {mine[1]:.1f}: the figures are CTA "
        f"{cta}'s, the access depends on which CTA makes it (alignment, guards)"
    )


class _Site(simt.AccessSite):
    #: an access of the code that no walk reached (its row has no figures: :func:`txlab.banks.walk_sites`)
    unreached = False
    unknown_index_reason = "the index depends on a value read from memory (a gather or scatter)"
    #: the most bytes a lane moves in one global load/store (sm_100's 256-bit accesses: set per arch)
    max_lane_bytes = simt.MAX_LANE_BYTES

    def __init__(self, v, access):
        super().__init__(v, access)
        self.set_dtype(str(getattr(self.buf, "dtype", "")) or "uint8")
        self.width = access.width or self.elem_bytes
        self.instructions = self.requests = self.sectors = self.ideal = self.lines = self.worst = 0
        self.ir_bytes = ir_bytes(v, access, self.elem_bytes)
        self.not_in_sass = False
        # atomics: the most lanes of one warp-instruction on one address, the addresses it was made on (to compare
        # CTAs; None past _ATOMIC_ADDRESSES), the SASS making it (_check_sass), whether every CTA walked used the same
        self.lanes = 0
        self._addresses = set() if self.kind == "atomic" else None
        self.sass_opcode, self.aggregated, self.same_address = None, False, None

    def absent(self, reason: str) -> None:
        """The SASS of the line does not make this access (``reason`` says why): partial, and out of the line's
        figures."""
        self.not_in_sass = True
        self.reasons.setdefault(reason, None)

    @staticmethod
    def compare_walks(sites, walks) -> None:
        """Atomics (:func:`txlab.banks.walk_sites` calls it with every CTA's sites): whether each CTA walked made it
        on the same addresses."""
        keyed = [{s.key: s for s in ws} for ws in walks]
        for site in sites:
            if site.kind != "atomic":
                continue
            seen = [w[site.key] for w in keyed if site.key in w]
            if len(seen) < 2 or any(s._addresses is None or s.unknowns or not s.instructions for s in seen):
                continue
            site.same_address = all(s._addresses == seen[0]._addresses for s in seen[1:])

    def add(self, v, access):
        got = self.lane_addresses(v, access, "a strided vector access: each lane's first element was counted")
        if got is None:
            return
        addr, width = got
        parts = simt.split_wide(addr, width, self.max_lane_bytes)  # one instruction per 128-bit piece
        self.width = parts[0][1]
        for part, w in parts:
            for a, act in simt.warp_lanes(part, v.mask):
                req, sec, ideal, lines = warp_sectors(a, act, w)
                if self.kind == "atomic" and act.any():
                    self._atomic_lanes(a[act])
                self.instructions += 1
                self.requests += req
                self.sectors += sec
                self.ideal += ideal
                self.lines += lines
                self.worst = max(self.worst, sec)

    def _atomic_lanes(self, live) -> None:
        """One warp-instruction of an atomic, ``live`` its active lanes' addresses: the most lanes on one address,
        and the addresses."""
        addresses, counts = np.unique(live, return_counts=True)
        self.lanes = max(self.lanes, int(counts.max()))
        if self._addresses is not None:
            self._addresses.update(addresses.tolist())
            if len(self._addresses) > _ATOMIC_ADDRESSES:
                self._addresses = None

    def row(self, source) -> GlobalAccess:
        name = getattr(self.buf, "name", None) or str(self.buf)
        notes = [f"{self.unknowns} execution(s) of this access could not be analysed"] if self.unknowns else []
        if self.kind == "atomic" and self.aggregated:
            notes.append(
                f"{_AGGREGATED} (one leader lane after VOTEU.ANY/FLO, or .POPC.INC): one atomic per warp for each "
                "distinct address"
            )
        reason = "; ".join(self.reasons)
        if not self.requests:  # no warp-instruction counted: every count is 0
            status, reason = "unknown", reason or "no execution of it was reached by the walk"
        else:
            status = "partial" if reason else "analysed"
        lanes = (1 if self.aggregated else self.lanes) if self.kind == "atomic" and self.requests else None
        return GlobalAccess(
            name,
            self.line,
            self.kind,
            self.dtype,
            self.width,
            self.instructions,
            self.requests,
            self.sectors,
            self.ideal,
            self.lines,
            self.worst,
            status=status,
            reason=reason,
            source=source,
            notes=notes,
            not_in_sass=self.not_in_sass,
            lanes_per_address=lanes,
            sass_opcode=self.sass_opcode,
            same_address_every_cta=self.same_address if self.kind == "atomic" else None,
        )


class _Site256(_Site):
    max_lane_bytes = 32
