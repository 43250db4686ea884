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
coalesced. For a ``txlab.Compiled``, an access whose line has no global access of its kind in the
SASS (nvcc reused a value loaded on another line) is ``partial``, saying so.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from txlab import simt

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

    sectors_per_request = _ratio("sectors", "requests")
    ideal_sectors_per_request = _ratio("ideal_sectors", "requests")
    sectors_per_instruction = _ratio("sectors", "instructions")
    efficiency = _ratio(
        "ideal_sectors", "sectors", "Ideal over needed sectors (1.0 = fully coalesced), None when unknown."
    )

    @property
    def coalesced(self) -> bool | None:
        e = self.efficiency
        return None if e is None else e >= 0.999

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
        line is "partial" when any access on it is unknown or partly unknown, with the reasons."""
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
                    "reasons": [],
                },
            )
            d["accesses"] += 1
            if r.status == "unknown":
                d["unknown"] += 1
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
                if d["unknown"] == d["accesses"]
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
        verdict = "coalesced" if r.coalesced else f"{r.efficiency:.0%} of sectors used"
        part = f"  (partly unknown: {r.reason})" if r.status == "partial" else ""
        return (
            f"{r.sectors / r.instructions:.1f} sectors and {r.requests / r.instructions:.1f} "
            f"requests per instruction (ideal {r.ideal_sectors / r.instructions:.1f} sectors; "
            f"{r.sectors_per_request:.2f} sectors/request)  {verdict}{part}"
        )


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


def coalescing(kernel, *, arch: str | None = None, cta=(0, 0, 0), limits=simt.Limits) -> CoalescingReport:
    """One :class:`GlobalAccess` per global-memory access site of ``kernel`` (a prim_func,
    IRModule or ``txlab.Compiled``), from its index expressions evaluated for every lane of every
    warp of CTA ``cta``. Nothing runs on a GPU. ``limits``: the walk's :class:`txlab.simt.Limits`
    (a time budget makes a long kernel's rows partial, never missing)."""
    from txlab.arch import resolve_arch
    from txlab.banks import _file_of, source_text, walk_sites
    from txlab.sass.analyses import _arch_major

    arch = resolve_arch(arch) if arch is not None else getattr(kernel, "arch", None) or "sm_90a"
    lowered = simt.lowered_of(kernel, arch, "txlab.pools.coalescing")
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


def _sass_accesses(kernel) -> set | None:
    """``{(user line, "load" | "store" | "atomic")}`` the SASS makes global accesses on, for a
    ``txlab.Compiled`` (its line map); None for a kernel that was not compiled."""
    from txlab.sass.opcodes import memory_kind

    m = getattr(kernel, "source_map", None) if hasattr(kernel, "cubin") else None
    if m is None:
        return None
    kinds = {"ld": "load", "st": "store", "atomic": "atomic"}
    out = set()
    for ins in m.instructions:
        k = memory_kind(ins.opcode)
        if ins.user_line and k and len(k) > 1 and k[1] == "global":
            out.add((ins.user_line, kinds[k[0]]))
    return out


def _check_sass(sites, made) -> None:
    """Sites of a compiled kernel whose line has no global access of their kind in the SASS (nvcc
    reused a value another line loaded, or merged the access elsewhere) are partial, saying so."""
    if made is None:
        return
    for site in sites:
        if site.kind in ("load", "store", "atomic") and site.line and (site.line, site.kind) not in made:
            site.reasons.setdefault(
                f"the SASS has no global {site.kind} on this line: the compiler reused a value loaded on "
                "another line, merged the access there or removed it, so the hardware does not make it here",
                None,
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
                self.instructions += 1
                self.requests += req
                self.sectors += sec
                self.ideal += ideal
                self.lines += lines
                self.worst = max(self.worst, sec)

    def row(self, source) -> GlobalAccess:
        name = getattr(self.buf, "name", None) or str(self.buf)
        notes = [f"{self.unknowns} execution(s) of this access could not be analysed"] if self.unknowns else []
        reason = "; ".join(self.reasons)
        if not self.requests:  # no warp-instruction counted: every count is 0
            status, reason = "unknown", reason or "no execution of it was reached by the walk"
        else:
            status = "partial" if reason else "analysed"
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
        )


class _Site256(_Site):
    max_lane_bytes = 32
