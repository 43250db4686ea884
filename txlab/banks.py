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
wavefronts beyond the ideal). Accesses through ``ldmatrix``/``stmatrix``/``wgmma`` descriptors and
TMA are not thread loads/stores and are not counted here.
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
    access: str                 # "load" or "store"
    ways: int                   # worst bank conflict of one group of lanes (1 = none)
    wavefronts: int             # wavefronts of the worst warp-instruction
    ideal_wavefronts: int       # wavefronts that instruction needs without conflicts
    bytes_per_lane: int         # access width of one lane (4, 8, 16 ...)
    lanes: list                 # the lanes that collide in the worst case (same bank, distinct words)
    bank: int | None            # the bank they collide in
    instructions: int           # warp-level executions per CTA
    total_wavefronts: int       # per CTA
    total_ideal_wavefronts: int  # per CTA
    grid_ctas: int | None = None
    source: str | None = None   # the user's source line
    dtype: str = ""
    notes: list = field(default_factory=list)
    banks: list = field(default_factory=list)   # bank of each lane (lane order) in the worst case

    @property
    def conflicts(self) -> int:
        """Wavefronts beyond the ideal, per CTA (Nsight Compute's 'bank conflicts')."""
        return self.total_wavefronts - self.total_ideal_wavefronts

    def to_dict(self) -> dict:
        d = asdict(self)
        d["conflicts"] = self.conflicts
        if self.grid_ctas:
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
        for kind in ("load", "store"):
            rows = [r for r in self if r.access == kind]
            wf = sum(r.total_wavefronts for r in rows)
            ideal = sum(r.total_ideal_wavefronts for r in rows)
            ctas = rows[0].grid_ctas if rows and rows[0].grid_ctas else None
            out[kind] = {"wavefronts": wf, "ideal_wavefronts": ideal, "conflicts": wf - ideal,
                         "grid_wavefronts": wf * ctas if ctas else None,
                         "grid_conflicts": (wf - ideal) * ctas if ctas else None}
        return out

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "accesses": [r.to_dict() for r in self], "totals": self.totals(),
                "notes": list(self.notes)}

    def summary(self) -> str:
        lines = [f"{self.kernel}: {len(self)} shared-memory access(es)"]
        for r in self:
            flag = "" if r.ways == 1 else f"  <- {r.ways}-way conflict, lanes {_lanes_text(r.lanes)} in bank {r.bank}"
            lines.append(f"  line {r.lineno if r.lineno is not None else '?':>4}  {r.access:<5} {r.buffer:<12} "
                         f"{r.bytes_per_lane:>2} B/lane  ways {r.ways:>2}  wavefronts {r.wavefronts}/"
                         f"{r.ideal_wavefronts} per instruction{flag}")
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


def warp_wavefronts(addrs: np.ndarray, active: np.ndarray, width: int):
    """(wavefronts, ideal, ways, colliding lanes, bank, per-lane banks) of one warp's access.

    ``addrs``: byte address per lane (32), ``active``: lane mask, ``width``: bytes per lane."""
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
        ways_g = max(len(words) for words in banks.values())
        wf += ways_g
        ideal += 1
        if ways_g > worst[0]:
            b = max(banks, key=lambda k: len(banks[k]))
            lanes = sorted({ls[0] for ls in banks[b].values()})
            worst = (ways_g, lanes, b)
    return wf, ideal, worst[0], worst[1], worst[2], lane_banks


def bank_conflicts(kernel, *, arch: str | None = None, plan=None, cta=(0, 0, 0)) -> BankReport:
    """One :class:`BankAccess` per shared-memory load/store site of ``kernel`` (a prim_func,
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
            if v.kind not in ("load", "store"):
                return
            if ordinal["exec"] != v.exec_id:
                ordinal["exec"], ordinal["n"] = v.exec_id, 0
            ordinal["n"] += 1
            buf = v.node.buffer if v.kind == "store" else v.node.source
            # one row per access in the source: copies of a statement made by unrolling share the
            # line; several accesses in one statement are told apart by their order in it
            key = ((v.line, v.kind, buf.name, ordinal["n"]) if v.line is not None
                   else (simt._key(v.node), v.kind))
            s = sites.get(key)
            if s is None:
                s = sites[key] = _Site(v)
            if v.index is simt.UNKNOWN:
                s.unknown += 1
            else:
                s.add(v)

        walk = simt.execute(func, on_visit=on_visit, cta=cta)
        grid = _grid_ctas(kernel, fname)
        for s in sites.values():
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


class _Site:
    def __init__(self, v):
        self.node = v.node
        self.kind = v.kind
        self.line = v.line
        self.stmt = v.stmt
        buf = v.node.buffer if v.kind == "store" else v.node.source
        self.buf = buf
        from tvm import DataType

        dt = DataType(str(buf.dtype))
        self.elem_bytes = max(1, dt.bits * dt.lanes // 8)
        self.dtype = str(buf.dtype)
        self.instructions = 0
        self.wf = 0
        self.ideal = 0
        self.worst = None
        self.unknown = 0
        self.offsets = []

    def add(self, v):
        idx = v.index
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
            act = v.mask[w0:w0 + 32]
            if not act.any():
                continue
            a = np.zeros(32, dtype=np.int64)
            m = np.zeros(32, dtype=bool)
            a[:act.size] = addr[w0:w0 + 32]
            m[:act.size] = act
            wf, ideal, ways, lanes, bank, lane_banks = warp_wavefronts(a, m, width)
            self.instructions += 1
            self.wf += wf
            self.ideal += ideal
            if self.worst is None or (ways, wf) > (self.worst[0], self.worst[1]):
                self.worst = (ways, wf, ideal, lanes, bank, lane_banks, width)
            if len(self.offsets) < 1:
                self.offsets.append(int(a[m].min()))

    def row(self, plan, grid) -> BankAccess:
        name = self.buf.name or "shared"
        if plan is not None and self.offsets and self.buf.scope() == "shared.dyn":
            name = _pool_name(plan, self.offsets[0]) or name
        notes = []
        if self.unknown:
            notes.append(f"{self.unknown} visit(s) with an index that depends on memory were not counted")
        src = None
        fn = _file_of(self.stmt)
        if fn and self.line:
            src = source_text(fn, self.line)
        if self.worst is None:
            return BankAccess(name, self.line, self.kind, 1, 0, 0, self.elem_bytes, [], None, 0, 0, 0,
                              grid, src, self.dtype, notes + ["no evaluable execution"], [])
        ways, wf, ideal, lanes, bank, lane_banks, width = self.worst
        return BankAccess(name, self.line, self.kind, ways, wf, ideal, width, lanes if ways > 1 else [],
                          bank if ways > 1 else None, self.instructions, self.wf, self.ideal, grid, src,
                          self.dtype, notes, lane_banks)


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
