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

Totals are per CTA (CTA 0; bank patterns do not depend on the CTA index unless the shared index
does) and for the whole grid, in the units Nsight Compute reports
(``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}``, ``..._bank_conflicts_...`` =
wavefronts beyond the ideal).

Every shared access of the code is a row, each with a definite answer or ``status="unknown"`` and
the reason: shared atomics (``ATOMS``; lanes on one word are serialised, not broadcast, so they
count as separate wavefronts) are analysed from their ``address_of`` argument; an index that
depends on a value read from memory, a shared access made by an instruction whose per-lane
addresses the walk does not model (``ldmatrix``/``stmatrix``, ``cp.async``, TMA, wgmma operands)
is listed as unknown, never as conflict-free.
"""

from __future__ import annotations

import linecache
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
    status: str = "analysed"  # "analysed", "partial" (some executions unknown) or "unknown"
    reason: str = ""  # why (part of) the access could not be analysed

    @property
    def conflicts(self) -> int | None:
        """Wavefronts beyond the ideal, per CTA (Nsight Compute's 'bank conflicts'); None if unknown."""
        if self.status == "unknown":
            return None
        return self.total_wavefronts - self.total_ideal_wavefronts

    def to_dict(self) -> dict:
        d = asdict(self)
        d["conflicts"] = self.conflicts
        if self.grid_ctas and self.conflicts is not None:
            d["grid_wavefronts"] = self.total_wavefronts * self.grid_ctas
            d["grid_conflicts"] = self.conflicts * self.grid_ctas
        return d


class BankReport(list):
    """A list of :class:`BankAccess` rows with a table view and totals."""

    kernel: str = ""
    notes: list

    def totals(self) -> dict:
        """Per-CTA and per-grid wavefronts and conflicts of loads and stores."""
        out = {}
        for kind in ("load", "store", "atomic"):
            rows = [r for r in self if r.access == kind and r.status != "unknown"]
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
        """How many accesses there are, how many were analysed (fully or partly), how many unknown."""
        unknown = sum(r.status == "unknown" for r in self)
        return {"accesses": len(self), "analysed": len(self) - unknown, "unknown": unknown}

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "accesses": [r.to_dict() for r in self],
            "totals": self.totals(),
            "counts": self.counts(),
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        c = self.counts()
        lines = [
            f"{self.kernel}: {c['accesses']} shared-memory access(es), {c['analysed']} analysed, {c['unknown']} unknown"
        ]
        for r in self:
            head = (
                f"  line {r.lineno if r.lineno is not None else '?':>4}  {r.access:<6} {r.buffer:<12} "
                f"{r.bytes_per_lane:>2} B/lane  "
            )
            if r.status == "unknown":
                lines.append(head + f"ways unknown: {r.reason}")
                continue
            flag = "" if r.ways == 1 else f"  <- {r.ways}-way conflict, lanes {_lanes_text(r.lanes)} in bank {r.bank}"
            part = f"  (partly unknown: {r.reason})" if r.status == "partial" else ""
            lines.append(
                head + f"ways {r.ways:>2}  wavefronts {r.wavefronts}/{r.ideal_wavefronts} per instruction{flag}{part}"
            )
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


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
    arch = arch or getattr(kernel, "arch", None) or (plan.arch if plan is not None else None) or "sm_90a"
    funcs = simt.device_functions(kernel, arch)
    report = BankReport()
    report.notes = []
    names = []
    for fname, func in funcs:
        names.append(fname)
        sites: dict = {}
        ordinal = {"exec": None, "n": 0}

        def on_visit(v, sites=sites, ordinal=ordinal):
            access = shared_access(v)
            if access is None:
                return
            kind, buf, index, reason = access
            if ordinal["exec"] != v.exec_id:
                ordinal["exec"], ordinal["n"] = v.exec_id, 0
            ordinal["n"] += 1
            # one row per access in the source: copies of a statement made by unrolling share the
            # line; several accesses in one statement are told apart by their order in it
            key = (
                (v.line, kind, getattr(buf, "name", str(buf)), ordinal["n"])
                if v.line is not None
                else (simt._key(v.node), kind)
            )
            s = sites.get(key)
            if s is None:
                s = sites[key] = _Site(v, kind, buf)
            if reason is not None:
                s.unknown += 1
                s.reasons.setdefault(reason, None)
            elif index is simt.UNKNOWN:
                s.unknown += 1
                s.reasons.setdefault("the index depends on a value read from memory", None)
            else:
                s.add(v, index)
            if v.uncertain:
                s.reasons.setdefault("a guard on its path depends on memory (both branches were followed)", None)

        walk = simt.execute(func, on_visit=on_visit, cta=cta)
        grid = _grid_ctas(kernel, fname)
        for s in sites.values():
            if walk.truncated or any("were followed" in n for n in walk.notes):
                s.reasons.setdefault("some loop iterations are beyond the walk's limit (see notes)", None)
            report.append(s.row(plan, grid))
        report.notes += [f"{fname}: {n}" if len(funcs) > 1 else n for n in walk.notes]
    report.sort(key=lambda r: (r.lineno if r.lineno is not None else 1 << 30, r.access != "load"))
    report.kernel = ", ".join(names)
    return report


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


#: calls that read or write shared memory through per-lane addresses the walk does not model
_OPAQUE_SHARED = {
    "ldmatrix": "ldmatrix",
    "stmatrix": "stmatrix",
    "cp_async_bulk": "TMA (cp.async.bulk)",
    "cp_async": "cp.async",
    "wgmma": "a wgmma operand",
    "tma": "TMA",
    "ld_vec": "ptx.ld",
    "ptx.ld": "ptx.ld",
    "ptx.st": "ptx.st",
    "tcgen05": "tcgen05",
}


def _is_atomic(name: str) -> bool:
    short = name.rsplit(".", 1)[-1]
    return short.startswith(("atomic_", "atomicAdd", "red_")) or short == "red"


def shared_access(v):
    """``(kind, buffer, index, reason)`` when visit ``v`` touches shared memory, else None: kind
    "load" / "store" / "atomic" / the op's name; ``reason`` is set when its addresses are unknown."""
    if v.kind in ("load", "store"):
        if v.scope and not v.scope.startswith("shared"):
            return None
        buf = v.node.buffer if v.kind == "store" else v.node.source
        return v.kind, buf, v.index, None
    if v.kind != "call":
        return None
    name = str(getattr(v.node.op, "name", "") or "")
    addrs = [a for a in v.args if isinstance(a, simt.AddrValue)]
    shared = [a for a in addrs if str(a.buffer.scope()).startswith("shared")]
    if _is_atomic(name):
        if shared:
            return "atomic", shared[0].buffer, shared[0].index, None
        if not addrs and any(a is simt.UNKNOWN for a in v.args[:1]):
            return "atomic", "?", simt.UNKNOWN, f"{name}: the target address is not an address_of a buffer"
        return None
    label = next((lab for key, lab in _OPAQUE_SHARED.items() if key in name), None)
    if label is None:
        return None
    if shared or not addrs:
        buf = shared[0].buffer if shared else "shared"
        return (
            name.rsplit(".", 1)[-1],
            buf,
            simt.UNKNOWN,
            f"{label}: its per-lane shared addresses are not evaluated by the static walk",
        )
    return None


class _Site:
    def __init__(self, v, kind, buf):
        self.node = v.node
        self.kind = kind
        self.line = v.line
        self.stmt = v.stmt
        self.buf = buf
        from tvm import DataType

        dtype = str(getattr(buf, "dtype", "")) or "uint8"
        if kind == "atomic" and getattr(v.node, "dtype", None) is not None and str(v.node.dtype) != "void":
            dtype = str(v.node.dtype)
        dt = DataType(dtype)
        self.elem_bytes = max(1, dt.bits * dt.lanes // 8)
        self.dtype = dtype
        self.instructions = 0
        self.wf = 0
        self.ideal = 0
        self.worst = None
        self.unknown = 0
        self.reasons: dict = {}
        self.offsets = []

    def add(self, v, idx):
        width = self.elem_bytes
        if isinstance(idx, simt.RampValue):
            if not isinstance(idx.stride, int):
                self.unknown += 1
                return
            if idx.stride == 1:
                width = self.elem_bytes * idx.lanes
                idx = idx.base
            else:  # a strided vector: each lane's first element decides its bank (approximation)
                idx = idx.base
        n = v.mask.size
        addr = np.broadcast_to(np.asarray(idx, dtype=np.int64), (n,)) * self.elem_bytes
        for w0 in range(0, n, 32):
            act = v.mask[w0 : w0 + 32]
            if not act.any():
                continue
            a = np.zeros(32, dtype=np.int64)
            m = np.zeros(32, dtype=bool)
            a[: act.size] = addr[w0 : w0 + 32]
            m[: act.size] = act
            wf, ideal, ways, lanes, bank, lane_banks = warp_wavefronts(a, m, width, serialise=self.kind == "atomic")
            self.instructions += 1
            self.wf += wf
            self.ideal += ideal
            if self.worst is None or (ways, wf) > (self.worst[0], self.worst[1]):
                self.worst = (ways, wf, ideal, lanes, bank, lane_banks, width)
            if len(self.offsets) < 1:
                self.offsets.append(int(a[m].min()))

    def row(self, plan, grid) -> BankAccess:
        name = getattr(self.buf, "name", None) or str(self.buf) or "shared"
        if plan is not None and self.offsets and self.buf.scope() == "shared.dyn":
            name = _pool_name(plan, self.offsets[0]) or name
        notes = []
        if self.unknown:
            notes.append(f"{self.unknown} execution(s) of this access could not be analysed")
        if self.kind == "atomic":
            notes.append("shared atomic (ATOMS): lanes on one word are serialised, not broadcast")
        reason = "; ".join(self.reasons)
        src = None
        fn = _file_of(self.stmt)
        if fn and self.line:
            src = source_text(fn, self.line)
        if self.worst is None:
            return BankAccess(
                name,
                self.line,
                self.kind,
                None,
                0,
                0,
                self.elem_bytes,
                [],
                None,
                0,
                0,
                0,
                grid,
                src,
                self.dtype,
                notes,
                [],
                status="unknown",
                reason=reason or "no execution of it was reached by the walk",
            )
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
        )


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


def _pool_name(plan, byte):
    for a in plan.allocations:
        if a.get("scope") == "shared.dyn" and a.get("offset") is not None and a.get("nbytes"):
            if a["offset"] <= byte < a["offset"] + a["nbytes"]:
                return a["name"]
    return None


def _file_of(stmt):
    from txlab.ir import user_frame

    frame = user_frame(getattr(stmt, "span", None))
    return frame[0] if frame else None
