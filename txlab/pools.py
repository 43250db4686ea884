"""Shared-memory and tensor-memory plans, read back from a kernel's IR.

``SMEMPool`` / ``TMEMPool`` (tvm.backend.cuda.lang) are bump allocators that run while TVMScript is
parsed; what they leave behind is IR: one zero-extent ``shared.dyn`` arena (``AllocBuffer``), a
``DeclBuffer`` per carved buffer whose data is the arena's pointer and whose ``elem_offset`` is
the bump offset, a ``tirx.dyn_smem_bytes`` annotation (``commit()``), and for TMEM ``DeclBuffer``s
of scope ``tmem`` with ``allocated_addr`` = first column plus a ``tcgen05.alloc`` of N columns.
:func:`layout` walks that IR (``tvm_ffi.structural_walk``, TVM's structural visitor) and rebuilds
the plan; nothing is re-derived by re-running the allocator. Byte footprints, TMEM columns and the
bank/swizzle pattern all come from evaluating the buffer's own TVM layout object.

    >>> plan = txlab.pools.layout(compiled)        # prim_func, IRModule or txlab.Compiled
    >>> plan.allocations[0]["name"], plan.occupancy.ctas_per_sm
    >>> plan.check()                               # PoolOverflowError before any launch
    >>> plan.plot(); plan.view()            # a matplotlib Figure; the PoolMap widget
"""
from __future__ import annotations

import linecache
import math
import re
from dataclasses import asdict, dataclass, field

from txlab import ir
from txlab.errors import TxlabError

KiB = 1024

# Per-architecture limits. Source: NVIDIA CUDA C++ Programming Guide, "Compute Capabilities" >
# "Technical Specifications per Compute Capability" (shared memory per SM, maximum shared memory
# per block with opt-in, 32-bit registers per SM, maximum resident warps / blocks per SM) and the
# CUDA Occupancy Calculator (1 KiB of shared memory reserved per resident block on cc >= 8.0,
# registers allocated per warp in units of 256). TMEM: PTX ISA, "Tensor Memory" (sm_100a family:
# 128 lanes x 512 columns of 32-bit cells per CTA-pair SM; tcgen05.alloc takes a power of two
# of at least 32 columns).
ARCH_LIMITS: dict[str, dict] = {
    "sm_80": dict(smem_per_block_optin=163 * KiB, smem_per_sm=164 * KiB, regs_per_sm=65536,
                  max_warps_per_sm=64, max_ctas_per_sm=32, tmem_columns=0),
    "sm_86": dict(smem_per_block_optin=99 * KiB, smem_per_sm=100 * KiB, regs_per_sm=65536,
                  max_warps_per_sm=48, max_ctas_per_sm=16, tmem_columns=0),
    "sm_89": dict(smem_per_block_optin=99 * KiB, smem_per_sm=100 * KiB, regs_per_sm=65536,
                  max_warps_per_sm=48, max_ctas_per_sm=24, tmem_columns=0),
    "sm_90": dict(smem_per_block_optin=227 * KiB, smem_per_sm=228 * KiB, regs_per_sm=65536,
                  max_warps_per_sm=64, max_ctas_per_sm=32, tmem_columns=0),
    "sm_100": dict(smem_per_block_optin=227 * KiB, smem_per_sm=228 * KiB, regs_per_sm=65536,
                   max_warps_per_sm=64, max_ctas_per_sm=32, tmem_columns=512),
    "sm_103": dict(smem_per_block_optin=227 * KiB, smem_per_sm=228 * KiB, regs_per_sm=65536,
                   max_warps_per_sm=64, max_ctas_per_sm=32, tmem_columns=512),
    "sm_120": dict(smem_per_block_optin=99 * KiB, smem_per_sm=100 * KiB, regs_per_sm=65536,
                   max_warps_per_sm=48, max_ctas_per_sm=32, tmem_columns=0),
}
RESERVED_SMEM_PER_CTA = 1 * KiB
REG_ALLOC_UNIT = 256           # registers, per warp
TMEM_LANES = 128
TMEM_MAX_COLUMNS = 512
BANK_BYTES = 4
BANKS = 32
CHUNK_BYTES = 16               # one 16-byte chunk = 4 banks = one "bank group" (8 per 128 B row)


def arch_limits(arch: str) -> dict:
    """Limits for ``arch`` (``sm_90a`` -> the ``sm_90`` row). Raises ValueError for unknown archs."""
    base = re.sub(r"[af]$", "", str(arch).strip().lower())
    if base not in ARCH_LIMITS:
        raise ValueError(f"unknown arch {arch!r}; txlab knows {', '.join(sorted(ARCH_LIMITS))} "
                         "(pass arch='sm_90a' or similar)")
    return dict(ARCH_LIMITS[base], arch=arch)


class PoolOverflowError(TxlabError, ValueError):
    """A memory plan does not fit. ``kind`` is ``smem`` or ``tmem``; ``allocation`` names the buffer
    that crossed the line (or None when the annotation alone does); ``excess`` is by how much
    (bytes for smem, columns for tmem); ``limit`` the limit crossed; ``arch`` the target."""

    def __init__(self, message: str, *, kind: str, allocation: str | None, excess: int,
                 limit: int, arch: str | None, kernel: str | None = None):
        self.kind = kind
        self.allocation = allocation
        self.excess = excess
        self.limit = limit
        self.arch = arch
        self.kernel = kernel
        super().__init__(message)


@dataclass
class Occupancy:
    """Resident CTAs per SM and what limits them. ``limits`` maps each resource to the CTA count it
    alone would allow (``None`` = unknown, e.g. registers without a compiled cubin)."""

    ctas_per_sm: int | None
    limited_by: str | None
    limits: dict
    smem_per_cta_bytes: int
    threads_per_cta: int | None
    registers_per_thread: int | None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PoolLayout:
    """The memory plan of one kernel. Offsets are bytes (TMEM: columns)."""

    kernel: str
    arch: str | None
    allocations: list
    dynamic_smem_bytes: int | None        # the kernel's own tirx.dyn_smem_bytes annotation
    static_smem_bytes: int
    high_water_bytes: int                 # end of the furthest shared.dyn allocation
    limit_bytes: int | None               # per-block opt-in shared memory of `arch`
    smem_per_sm_bytes: int | None
    padding_bytes: int                    # bytes below the high-water mark that no buffer covers
    gaps: list                            # [{"offset", "nbytes", "before", "reason"}]
    tmem_columns: int                     # high-water column of TMEM allocations
    tmem_alloc_columns: int | None        # what tcgen05.alloc requests (None: no TMEM alloc)
    occupancy: Occupancy
    errors: list                          # [{"kind", "message", "allocation", "excess", "limit"}]
    warnings: list

    # -- queries ---------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> dict:
        for a in self.allocations:
            if a["name"] == name:
                return a
        raise KeyError(f"no allocation named {name!r}; have {[a['name'] for a in self.allocations]}")

    @property
    def total_smem_bytes(self) -> int:
        dyn = self.dynamic_smem_bytes if self.dynamic_smem_bytes is not None else self.high_water_bytes
        return self.static_smem_bytes + dyn

    def check(self) -> "PoolLayout":
        """Raise :class:`PoolOverflowError` for the first error (smem first, then tmem)."""
        if self.errors:
            e = self.errors[0]
            more = f" ({len(self.errors) - 1} more problem(s) in .errors)" if len(self.errors) > 1 else ""
            raise PoolOverflowError(e["message"] + more, kind=e["kind"], allocation=e["allocation"],
                                    excess=e["excess"], limit=e["limit"], arch=self.arch,
                                    kernel=self.kernel)
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["occupancy"] = self.occupancy.to_dict()
        d["total_smem_bytes"] = self.total_smem_bytes
        d["tmem_lanes"] = TMEM_LANES
        d["tmem_limit_columns"] = TMEM_MAX_COLUMNS
        return d

    def summary(self) -> str:
        lines = [f"{self.kernel} ({self.arch or 'arch unknown'}): "
                 f"{_fmt_bytes(self.total_smem_bytes)} shared"
                 + (f" of {_fmt_bytes(self.limit_bytes)}" if self.limit_bytes else "")
                 + f", padding {self.padding_bytes} B"
                 + (f", TMEM {self.tmem_columns}/{TMEM_MAX_COLUMNS} columns" if self.tmem_alloc_columns
                    or self.tmem_columns else "")
                 + (f", {self.occupancy.ctas_per_sm} CTA/SM ({self.occupancy.limited_by})"
                    if self.occupancy.ctas_per_sm is not None else "")]
        for a in self.allocations:
            unit = "col" if a["scope"] == "tmem" else "B"
            alias = f"  aliases {', '.join(a['aliases'])}" if a["aliases"] else ""
            sw = f"  {a['swizzle']}" if a["swizzle"] else ""
            lines.append(f"  {a['name']:<20} {a['scope']:<10} @{a['offset']:>7} {a['nbytes']:>7} {unit}"
                         f"  {a['dtype']}{list(a['shape'])}{sw}{alias}")
        for e in self.errors:
            lines.append(f"  ERROR: {e['message']}")
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def view(self, **kwargs):
        """The interactive widget of this plan (:class:`txlab.views.PoolMap`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def bank_conflicts(self):
        """One row per shared-memory load/store in the kernel (``T.alloc_shared`` and SMEMPool
        buffers): ``buffer``, ``lineno``, ``access``, ``ways`` (1 = conflict-free ... 32),
        ``wavefronts`` and the colliding ``lanes``, from the index expressions evaluated for the 32
        lanes of every warp (:mod:`txlab.banks`). Returns a :class:`txlab.banks.BankReport`."""
        from txlab.banks import bank_conflicts

        source = getattr(self, "_source", None)
        if source is None:
            raise ValueError("this plan does not know its kernel (it was not built by "
                             "txlab.pools.layout); call txlab.pools.layout(kernel).bank_conflicts()")
        return bank_conflicts(source, arch=self.arch, plan=self)

    # -- plotting --------------------------------------------------------------------------------
    def plot(self, ax=None):
        """Byte-scaled map of shared.dyn (and TMEM columns when present) with matplotlib."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        smem = [a for a in self.allocations if a["scope"].startswith("shared.dyn")]
        tmem = [a for a in self.allocations if a["scope"] == "tmem"]
        if ax is None:
            nrows = 2 if tmem else 1
            fig, axes = plt.subplots(nrows, 1, figsize=(10, 2.2 + 1.6 * nrows), squeeze=False)
            ax, ax_t = axes[0][0], (axes[1][0] if tmem else None)
        else:
            fig, ax_t = ax.figure, None
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        # Aliased buffers get their own lane so overlaps stay visible.
        lanes = _assign_lanes(smem)
        nl = max(lanes.values(), default=0) + 1
        for i, a in enumerate(smem):
            y = lanes[a["name"]]
            ax.add_patch(Rectangle((a["offset"], y), a["nbytes"], 0.8, color=colors[i % len(colors)],
                                   alpha=0.85, lw=0))
            ax.text(a["offset"] + a["nbytes"] / 2, y + 0.4, a["name"], ha="center", va="center",
                    fontsize=8, clip_on=True)
        for g in self.gaps:
            ax.add_patch(Rectangle((g["offset"], 0), g["nbytes"], nl - 0.2, fill=False, hatch="///",
                                   lw=0, color="grey"))
        end = max(self.high_water_bytes, self.dynamic_smem_bytes or 0, 1)
        xmax = end
        if self.limit_bytes:
            dyn_limit = self.limit_bytes - self.static_smem_bytes
            ax.axvline(dyn_limit, color="red", ls="--", lw=1)
            ax.text(dyn_limit, nl, f" {self.arch} limit", color="red", fontsize=8, va="bottom")
            xmax = max(xmax, dyn_limit)
        if self.dynamic_smem_bytes is not None:
            ax.axvline(self.dynamic_smem_bytes, color="black", ls=":", lw=1)
        ax.set_xlim(0, xmax * 1.02)
        ax.set_ylim(-0.2, nl + 0.6)
        ax.set_yticks([])
        ax.set_xlabel("shared.dyn byte offset")
        ax.set_title(f"{self.kernel}: {_fmt_bytes(self.total_smem_bytes)} shared, "
                     f"padding {self.padding_bytes} B"
                     + (f", {self.occupancy.ctas_per_sm} CTA/SM" if self.occupancy.ctas_per_sm else ""),
                     fontsize=10)
        if ax_t is not None:
            for i, a in enumerate(tmem):
                for lo, hi in a["lanes"]:
                    ax_t.add_patch(Rectangle((a["offset"], lo), a["nbytes"], hi - lo,
                                             color=colors[(i + 3) % len(colors)], alpha=0.8, lw=0))
                ax_t.text(a["offset"] + a["nbytes"] / 2, a["lanes"][0][0] + 8 if a["lanes"] else 8,
                          a["name"], ha="center", fontsize=8)
            ax_t.axvline(TMEM_MAX_COLUMNS, color="red", ls="--", lw=1)
            if self.tmem_alloc_columns:
                ax_t.axvline(self.tmem_alloc_columns, color="black", ls=":", lw=1)
            ax_t.set_xlim(0, max(TMEM_MAX_COLUMNS, self.tmem_columns) * 1.02)
            ax_t.set_ylim(TMEM_LANES, 0)
            ax_t.set_xlabel("TMEM column (32-bit cells)")
            ax_t.set_ylabel("lane")
        fig.tight_layout()
        return fig


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------

def layout(kernel, name: str | None = None, *, arch: str | None = None) -> PoolLayout:
    """The memory plan of ``kernel`` (a ``tvm.tirx.PrimFunc``, a ``tvm.IRModule``, or a
    ``txlab.Compiled`` / any object with ``.ir_module``). ``name`` picks one function of a module
    that has several. ``arch`` defaults to the Compiled's arch, then the function's target, then
    the local GPU. Does not raise for plans that do not fit: see ``.errors`` and ``.check()``."""
    plans = layouts(kernel, arch=arch)
    if name is not None:
        for key, plan in plans.items():
            if key == name or plan.kernel == name:
                return plan
        raise KeyError(f"no kernel named {name!r}; this module has {sorted(plans)}")
    with_pool = {k: p for k, p in plans.items() if p.allocations}
    pick = with_pool or plans
    if len(pick) != 1:
        raise ValueError(f"the module has {len(pick)} kernels ({', '.join(sorted(pick))}); "
                         "pass name= to pick one, or use txlab.pools.layouts()")
    return next(iter(pick.values()))


def layouts(kernel, *, arch: str | None = None) -> dict:
    """``{function name: PoolLayout}`` for every PrimFunc of ``kernel``."""
    mod, _ = ir.as_module(kernel, what="txlab.pools.layout")
    compiled = kernel if hasattr(kernel, "ir_module") else None  # a txlab.Compiled: its arch
    if arch is None and compiled is not None:
        arch = getattr(compiled, "arch", None)
    if arch is not None:
        arch = _judgeable_arch(arch)
    out = {}
    for gv, func in mod.functions.items():
        if type(func).__name__ != "PrimFunc":
            continue
        fname = gv.name_hint
        # the function's own target, else the local GPU's arch, else the default (said once)
        f_arch = arch or _judgeable_arch(_target_arch(func))
        res, launch = _compiled_info(compiled, fname)
        out[fname] = _build(fname, func, f_arch, res, launch)
        out[fname]._source = compiled if compiled is not None else tvm_module_of(mod, fname)
    return out


def _judgeable_arch(arch) -> str:
    """``arch`` as compile() reads it (None: the local GPU's, else txlab.config.default_arch, said
    once), checked to be one txlab has limits for: a plan is never passed for want of an arch."""
    from txlab.arch import resolve_arch
    from txlab.errors import ArchError

    resolved = resolve_arch(arch)
    try:
        arch_limits(resolved)
    except ValueError:
        raise ArchError(f"txlab has no shared-memory limits for {resolved}, so it cannot judge this "
                        f"plan; pass arch= one of {', '.join(sorted(ARCH_LIMITS))} (or an 'a'/'f' "
                        "variant)") from None
    return resolved


def check(kernel, name: str | None = None, *, arch: str | None = None) -> PoolLayout:
    """Build the plan and raise :class:`PoolOverflowError` if it does not fit (call before launch)."""
    return layout(kernel, name, arch=arch).check()


def bank_pattern(plan: PoolLayout, name: str, rows: int = 8) -> dict:
    """Which bank group (16-byte chunk of a 128-byte bank row, 0..7) each logical 16-byte chunk of
    the first ``rows`` rows of buffer ``name`` lands in, evaluated from the buffer's TVM layout at
    its real byte offset. Returned: {"rows", "chunks", "bank_group": [[...]...], "conflict_ways"}."""
    a = plan[name]
    if a.get("bank_pattern") and len(a["bank_pattern"]["bank_group"]) >= rows:
        bp = dict(a["bank_pattern"])
        bp["bank_group"] = bp["bank_group"][:rows]
        return bp
    raise ValueError(f"{name!r} has no bank pattern (needs a 2-D+ shared buffer with 16-byte rows)")


# ------------------------------------------------------------------------------------------------
# IR walking
# ------------------------------------------------------------------------------------------------

def _target_arch(func) -> str | None:
    try:
        target = func.attrs["target"] if func.attrs is not None and "target" in func.attrs else None
    except Exception:
        target = None
    if target is None:
        return None
    arch = target.attrs.get("arch") if hasattr(target, "attrs") else None
    return str(arch) if arch else None


def _compiled_info(compiled, fname):
    if compiled is None:
        return None, None

    def pick(table):
        if not isinstance(table, dict) or not table:
            return None
        for key in (fname, f"{fname}_kernel"):
            if key in table:
                return table[key]
        cands = [v for k, v in table.items() if str(k).startswith(fname)]
        if len(cands) == 1:
            return cands[0]
        return next(iter(table.values())) if len(table) == 1 else None

    return pick(getattr(compiled, "resources", None)), pick(getattr(compiled, "launch", None))


def _int(x):
    try:
        return int(x)
    except Exception:
        return None


def _shape(buf):
    return [(_int(s) if _int(s) is not None else str(s)) for s in buf.shape]


def _user_line(span):
    """(filename, line) of the first span that is not inside TVM's own package."""
    if span is None:
        return None
    spans = list(span.spans) if hasattr(span, "spans") else [span]
    for s in spans:
        src = getattr(s, "source_name", None)
        fname = getattr(src, "name", None) if src is not None else None
        if fname and "/site-packages/tvm/" not in fname and "/python/tvm/" not in fname:
            return fname, int(s.line)
    return None


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*(?:[\w.]+\.)?([A-Za-z_]\w*)\s*\(")
_METHOD = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.([A-Za-z_]\w*)\s*\(")


def _build(fname, func, arch, resources, launch) -> PoolLayout:
    import tvm
    import tvm_ffi
    from tvm import DataType, tirx

    pools = []                # AllocBuffer of shared.dyn (arena) buffers
    static = []               # AllocBuffer of scope "shared"
    decls = []                # (DeclBuffer node) in program order
    annotation = []
    tmem_allocs = []
    scope_defs = []
    uses = {}                 # buffer id -> {"ops": set, "line": (file, line)}

    def on_alloc(n):
        s = n.buffer.scope()
        if s == "shared.dyn":
            pools.append(n.buffer)
        elif s == "shared":
            static.append(n.buffer)

    def on_decl(n):
        decls.append(n)

    def on_attr(n):
        if n.attr_key == "tirx.dyn_smem_bytes":
            annotation.append(_int(n.value))

    def on_scope(n):
        scope_defs.append(str(getattr(n, "def")))

    tvm_ffi.structural_walk(func.body, [(tirx.AllocBuffer, on_alloc), (tirx.DeclBuffer, on_decl),
                                        (tirx.AttrStmt, on_attr), (tirx.ScopeIdDefStmt, on_scope)],
                            order="pre")

    # Uses of buffers in leaf statements: which ops touch them, and the user's source line.
    def on_leaf(stmt):
        loc = _user_line(stmt.span)
        ops = []

        def on_call(c):
            name = getattr(c.op, "name", None)
            if name:
                ops.append(name)
                if name == "tirx.ptx.tcgen05_alloc" and len(c.args) > 1:
                    tmem_allocs.append(_int(c.args[1]))

        touched = []

        def on_load(x):
            src = x.source
            if isinstance(src, tirx.Buffer):
                touched.append(src)

        tvm_ffi.structural_walk(stmt, [(tvm_ffi_call_type(), on_call), (tvm.ir.TensorLoad, on_load)],
                                order="pre")
        if isinstance(stmt, tirx.BufferStore):
            touched.append(stmt.buffer)
        for b in touched:
            rec = uses.setdefault(_bkey(b), {"ops": set(), "line": None})
            rec["ops"].update(ops)
            if rec["line"] is None and loc is not None:
                rec["line"] = loc

    tvm_ffi.structural_walk(func.body, [((tirx.Evaluate, tirx.BufferStore), on_leaf)], order="pre")

    pool_keys = {_bkey_var(p.data): p for p in pools}
    allocations = []
    for n in decls:
        b = n.buffer
        scope = b.scope()
        if scope not in ("shared.dyn", "shared", "tmem"):
            continue
        bits = DataType(b.dtype).bits * DataType(b.dtype).lanes
        shape = _shape(b)
        lay = b.layout
        entry = {
            "name": b.name, "scope": scope, "dtype": str(b.dtype), "shape": shape,
            "align": int(b.data_alignment), "swizzle": None, "layout": str(lay) if lay is not None else None,
            "aliases": [], "named_in_ir": bool(b.name), "origin": None, "pool": None,
        }
        if scope == "tmem":
            addr = list(b.allocated_addr) if b.allocated_addr is not None else []
            entry["offset"] = _int(addr[0]) if addr else None
            tcol = _int(lay.span("TCol")) if lay is not None else None
            tlane = _int(lay.span("TLane")) if lay is not None else None
            if tcol is None:
                tcol = ir.prod(shape[1:]) if len(shape) >= 2 else ir.prod(shape)
            entry["nbytes"] = math.ceil(tcol * bits / 32) if tcol is not None else None
            entry["lanes"] = _tmem_lanes(lay, shape) if lay is not None else [[0, tlane or TMEM_LANES]]
            entry["align"] = None
        else:
            data = n.data
            pool_var = None
            if data is not None and getattr(getattr(data, "op", None), "name", "") == "tirx.buffer_data":
                pool_var = data.args[0].data
            elif data is not None and isinstance(data, tirx.Var):
                pool_var = data
            if scope == "shared.dyn" and pool_var is None:
                continue  # the arena's own declaration
            if pool_var is not None and _bkey_var(pool_var) in pool_keys:
                entry["pool"] = pool_keys[_bkey_var(pool_var)].name or "pool"
            elif pool_var is not None:
                entry["pool"] = str(pool_var)
            eo = _int(b.elem_offset)
            entry["offset"] = (eo * bits) // 8 if eo is not None else None
            entry["nbytes"] = _footprint_bytes(b, shape, bits)
            entry["swizzle"] = _swizzle_text(lay, bits)
            entry["bank_pattern"] = None
            if entry["offset"] is not None:
                entry["bank_pattern"] = _bank_pattern(lay, shape, bits, entry["offset"])
        rec = uses.get(_bkey(b))
        entry["uses"] = sorted(op.replace("tirx.", "") for op in rec["ops"]) if rec else []
        entry["_line"] = rec["line"] if rec else None
        allocations.append(entry)

    # Static (non-pool) shared buffers: laid out in declaration order, each at its own alignment.
    static_off = 0
    for b in static:
        bits = DataType(b.dtype).bits * DataType(b.dtype).lanes
        align = int(b.data_alignment) or 1
        static_off = -(-static_off // align) * align
        shape = _shape(b)
        nbytes = _footprint_bytes(b, shape, bits)
        allocations.append({"name": b.name or "static", "scope": "shared", "dtype": str(b.dtype),
                            "shape": shape, "align": align, "swizzle": None, "layout": None,
                            "aliases": [], "named_in_ir": bool(b.name), "origin": None,
                            "pool": "static", "offset": static_off, "nbytes": nbytes,
                            "bank_pattern": None, "uses": [], "_line": None})
        static_off += nbytes or 0
    static_bytes = static_off

    _name_unnamed(allocations)
    for a in allocations:
        a.pop("_line", None)

    # Aliases: byte (column) ranges that overlap within the same memory.
    for a in allocations:
        for o in allocations:
            if o is a or o["offset"] is None or a["offset"] is None:
                continue
            same = (a["scope"] == "tmem") == (o["scope"] == "tmem") and a.get("pool") == o.get("pool")
            if not same or a["scope"] == "shared" and o["scope"] != "shared":
                continue
            if a["scope"] == "tmem" and not _lanes_overlap(a["lanes"], o["lanes"]):
                continue
            if a["offset"] < o["offset"] + (o["nbytes"] or 0) and o["offset"] < a["offset"] + (a["nbytes"] or 0):
                a["aliases"].append(o["name"])

    dyn = [a for a in allocations if a["scope"] == "shared.dyn" and a["offset"] is not None]
    high = max((a["offset"] + (a["nbytes"] or 0) for a in dyn), default=0)
    gaps = _gaps(dyn, high)
    padding = sum(g["nbytes"] for g in gaps)
    tmem = [a for a in allocations if a["scope"] == "tmem" and a["offset"] is not None]
    tmem_high = max((a["offset"] + a["nbytes"] for a in tmem), default=0)
    dyn_annot = annotation[0] if annotation else None
    if dyn_annot is None and launch and isinstance(launch.get("dynamic_smem_bytes"), int) and dyn:
        dyn_annot = launch["dynamic_smem_bytes"]

    limits = None
    warnings = []
    if arch:
        try:
            limits = arch_limits(arch)
        except ValueError as exc:
            warnings.append(str(exc))
    if resources and resources.get("static_smem_bytes") is not None:
        ptxas_static = int(resources["static_smem_bytes"])
        if ptxas_static != static_bytes:
            warnings.append(f"ptxas reports {ptxas_static} B of static shared memory, the IR's static "
                            f"buffers add up to {static_bytes} B; occupancy uses ptxas' number")
        static_bytes = ptxas_static

    threads = _threads_per_cta(scope_defs, launch)
    regs = int(resources["registers"]) if resources and resources.get("registers") is not None else None
    tmem_req = max((c for c in tmem_allocs if c is not None), default=None)
    plan = PoolLayout(
        kernel=fname, arch=arch, allocations=allocations, dynamic_smem_bytes=dyn_annot,
        static_smem_bytes=static_bytes, high_water_bytes=high,
        limit_bytes=limits["smem_per_block_optin"] if limits else None,
        smem_per_sm_bytes=limits["smem_per_sm"] if limits else None,
        padding_bytes=padding, gaps=gaps, tmem_columns=tmem_high, tmem_alloc_columns=tmem_req,
        occupancy=None, errors=[], warnings=warnings,
    )
    plan.errors = _errors(plan, dyn, tmem, limits)
    plan.warnings += _warnings(plan, dyn)
    plan.occupancy = _occupancy(plan, limits, threads, regs)
    return plan


def tvm_module_of(mod, fname):
    """A module holding only function ``fname`` of ``mod`` (what bank_conflicts lowers)."""
    import tvm

    return tvm.IRModule({fname: mod[fname]})


def tvm_ffi_call_type():
    import tvm

    return tvm.ir.Call


def _bkey(buf):
    # Buffers are compared by their data var and declaration (several DeclBuffers share one
    # Buffer object only when it is the same buffer).
    return (buf.name, str(buf.data), str(buf.elem_offset), str(buf.dtype), str(list(buf.shape)),
            buf.scope())


def _bkey_var(var):
    return (var.name if hasattr(var, "name") else str(var), str(var.ty) if hasattr(var, "ty") else "")


def _footprint_bytes(buf, shape, bits):
    """Bytes the buffer spans: its layout's span (so strided/padded layouts count what they
    touch), never less than the dense size."""
    n = ir.prod(shape)
    dense = (n * bits + 7) // 8 if n is not None else None
    lay = buf.layout
    span = None
    if lay is not None:
        try:
            span = _int(lay.span())
        except Exception:
            span = None
    if span is not None:
        spanned = (span * bits + 7) // 8
        return max(spanned, dense or 0)
    return dense


def _swizzle_text(lay, bits):
    if lay is None or type(lay).__name__ != "ComposeLayout":
        return None
    per, sw, atom = int(lay.per_element), int(lay.swizzle_len), int(lay.atom_len)
    unit_bytes = (2 ** per) * bits // 8
    span_bytes = unit_bytes * (2 ** sw)
    return f"{span_bytes}B swizzle (Swizzle<{sw},{per},{atom}>, {unit_bytes}B units)"


def _bank_pattern(lay, shape, bits, base_offset, rows=8, max_chunks=16):
    """Evaluate the buffer's layout for (row r, 16-byte chunk c) of its last two dims."""
    if len(shape) < 2 or not all(isinstance(s, int) for s in shape) or bits > 128 or bits == 0:
        return None
    nrows, ncols = shape[-2], shape[-1]
    per_chunk = (CHUNK_BYTES * 8) // bits
    if per_chunk == 0 or ncols % per_chunk != 0:
        return None
    nchunks = min(ncols // per_chunk, max_chunks)
    nr = min(nrows, rows)
    lead = [0] * (len(shape) - 2)
    groups = []
    for r in range(nr):
        row = []
        for c in range(nchunks):
            coord = lead + [r, c * per_chunk]
            if lay is None:
                elem = r * ncols + c * per_chunk
            else:
                out = lay.apply(*coord, shape=shape)
                elem = int(out["m"]) if "m" in out else int(next(iter(out.values())))
            byte = base_offset + elem * bits // 8
            row.append((byte % (BANKS * BANK_BYTES)) // CHUNK_BYTES)
        groups.append(row)
    # A column of 16-byte chunks read across 8 rows (ldmatrix / one 128 B wavefront each): ways of
    # bank conflict = rows sharing the most popular bank group.
    ways = 1
    for c in range(nchunks):
        col = [groups[r][c] for r in range(min(nr, 8))]
        ways = max(ways, max(col.count(g) for g in set(col)))
    return {"rows": nr, "chunks": nchunks, "bank_group": groups, "conflict_ways": ways,
            "row_bytes": ncols * bits // 8}


def _tmem_lanes(lay, shape):
    """Lane intervals the TMEM buffer occupies, by evaluating its layout over rows (and first/last
    column, which catches layouts whose lane depends on the column group)."""
    if len(shape) != 2 or not all(isinstance(s, int) for s in shape):
        t = _int(lay.span("TLane")) or TMEM_LANES
        return [[0, t]]
    rows, cols = shape
    lanes = set()
    for r in range(rows):
        for c in {0, cols - 1, cols // 2}:
            out = lay.apply(r, c, shape=shape)
            if "TLane" in out:
                lanes.add(int(out["TLane"]))
    if not lanes:
        return [[0, TMEM_LANES]]
    ivs, lo, prev = [], None, None
    for x in sorted(lanes):
        if lo is None:
            lo = prev = x
        elif x == prev + 1:
            prev = x
        else:
            ivs.append([lo, prev + 1])
            lo = prev = x
    ivs.append([lo, prev + 1])
    return ivs


def _lanes_overlap(a, b):
    return any(x0 < y1 and y0 < x1 for x0, x1 in a for y0, y1 in b)


def _name_unnamed(allocations):
    """Unnamed buffers (the pool's allocators and Pipeline/MBarrier leave some without a name) are
    named from the user's source line that first touches them, else from what they are."""
    taken = {a["name"] for a in allocations if a["name"]}
    by_line = {}
    for a in allocations:
        if a["_line"]:
            by_line.setdefault(a["_line"], []).append(a)
    for a in allocations:
        if a["name"]:
            continue
        base, origin = None, None
        if a["_line"]:
            fname, line = a["_line"]
            text = linecache.getline(fname, line).strip()
            if text:
                origin = f"line {line}: {text}"
                m = _ASSIGN.match(text)
                if m:
                    var, ctor = m.group(1), m.group(2)
                    siblings = by_line[a["_line"]]
                    if ctor == "Pipeline" and len(siblings) == 2:
                        base = f"{var}.{'full' if siblings[0] is a else 'empty'}"
                    elif len(siblings) > 1:
                        base = f"{var}.{siblings.index(a)}"
                    else:
                        base = var
                else:
                    m = _METHOD.search(text)
                    if m and m.group(1) not in ("T", "Tx", "T.ptx", "T.cuda"):
                        base = m.group(1)
        if base is None:
            kind = _usage_kind(a)
            base = f"{kind}@{a['offset']}"
            origin = origin or f"unnamed in the IR; {kind} inferred from its dtype/uses"
        name, i = base, 1
        while name in taken:
            i += 1
            name = f"{base}#{i}"
        taken.add(name)
        a["name"], a["origin"] = name, origin


def _usage_kind(a):
    ops = " ".join(a["uses"])
    if "mbarrier" in ops or "tcgen05_commit" in ops or (a["dtype"] == "uint64" and a["scope"] != "tmem"):
        if "expect_tx" in ops:
            return "tma_bar"
        if "tcgen05_commit" in ops:
            return "tcgen05_bar"
        return "mbarrier"
    if "tcgen05_alloc" in ops:
        return "tmem_addr"
    return f"{a['scope']}_{a['dtype']}"


def _gaps(dyn, high):
    """Byte ranges below the high-water mark that no allocation covers, with a reason."""
    covered = sorted((a["offset"], i, a["offset"] + (a["nbytes"] or 0), a) for i, a in enumerate(dyn))
    gaps, cursor = [], 0
    for start, _, end, a in covered:
        if start > cursor:
            gap = start - cursor
            align = a["align"] or 1
            reason = (f"alignment of {a['name']} to {align} B" if gap < align and start % align == 0
                      else f"unused range before {a['name']} (move_base_to or explicit offset)")
            gaps.append({"offset": cursor, "nbytes": gap, "before": a["name"], "reason": reason})
        cursor = max(cursor, end)
    return gaps


def _fmt_bytes(n):
    if n is None:
        return "?"
    if n >= KiB and n % KiB == 0:
        return f"{n // KiB} KiB"
    if n >= KiB:
        return f"{n / KiB:.1f} KiB"
    return f"{n} B"


def _errors(plan, dyn, tmem, limits):
    errs = []
    if plan.dynamic_smem_bytes is not None and plan.dynamic_smem_bytes < plan.high_water_bytes:
        last = max(dyn, key=lambda a: a["offset"] + a["nbytes"])
        errs.append({"kind": "smem", "allocation": last["name"],
                     "excess": plan.high_water_bytes - plan.dynamic_smem_bytes,
                     "limit": plan.dynamic_smem_bytes,
                     "message": f"{plan.kernel}: {last['name']!r} ends at byte {plan.high_water_bytes}, "
                                f"past the kernel's dynamic shared memory annotation "
                                f"({plan.dynamic_smem_bytes} B) by "
                                f"{plan.high_water_bytes - plan.dynamic_smem_bytes} B; "
                                "commit the pool after its last alloc (pool.commit())"})
    if limits and plan.limit_bytes is not None and plan.total_smem_bytes > plan.limit_bytes:
        over = plan.total_smem_bytes - plan.limit_bytes
        dyn_limit = plan.limit_bytes - plan.static_smem_bytes
        crossing = [a for a in sorted(dyn, key=lambda a: (a["offset"], a["nbytes"]))
                    if a["offset"] + a["nbytes"] > dyn_limit]
        who = crossing[0] if crossing else None
        dyn_bytes = plan.total_smem_bytes - plan.static_smem_bytes
        if not dyn_bytes:
            needs = f"{plan.static_smem_bytes} B of static shared memory"
        elif plan.static_smem_bytes:
            needs = (f"{plan.total_smem_bytes} B of shared memory ({dyn_bytes} B dynamic + "
                     f"{plan.static_smem_bytes} B static)")
        else:
            needs = f"{plan.total_smem_bytes} B of dynamic shared memory"
        if plan.static_smem_bytes >= plan.limit_bytes:
            who = None
            what = "the static buffers (T.alloc_shared) alone reach the limit, so they must shrink"
        elif who is not None:
            what = (f"{who['name']!r} (bytes {who['offset']}..{who['offset'] + who['nbytes']}, "
                    f"{who['dtype']}{who['shape']}) crosses the line at byte {dyn_limit}"
                    + (f" of the dynamic pool (the limit less {plan.static_smem_bytes} B static)"
                       if plan.static_smem_bytes else ""))
        else:
            what = (f"the pool's committed size ({dyn_bytes} B) is past byte {dyn_limit}, all the "
                    "dynamic shared memory the limit leaves")
        errs.append({"kind": "smem", "allocation": who["name"] if who else None, "excess": over,
                     "limit": plan.limit_bytes,
                     "message": f"{plan.kernel}: shared memory plan needs {needs}, over the "
                                f"{plan.arch} per-block limit of "
                                f"{plan.limit_bytes} B ({_fmt_bytes(plan.limit_bytes)}) by {over} B; "
                                f"{what}. Cut pipeline stages or tile sizes, or alias buffers whose "
                                "lifetimes do not overlap (pool.move_base_to)."})
    tmem_cap = TMEM_MAX_COLUMNS
    if tmem and limits is not None and limits["tmem_columns"] == 0:
        errs.append({"kind": "tmem", "allocation": tmem[0]["name"], "excess": plan.tmem_columns,
                     "limit": 0, "message": f"{plan.kernel}: {plan.arch} has no tensor memory, but "
                     f"{tmem[0]['name']!r} is a TMEM buffer; compile for sm_100a"})
    for a in sorted(tmem, key=lambda a: a["offset"]):
        end = a["offset"] + a["nbytes"]
        if end > tmem_cap:
            errs.append({"kind": "tmem", "allocation": a["name"], "excess": end - tmem_cap,
                         "limit": tmem_cap,
                         "message": f"{plan.kernel}: TMEM buffer {a['name']!r} (columns "
                                    f"{a['offset']}..{end}) runs past column {tmem_cap} by "
                                    f"{end - tmem_cap} column(s); a CTA has {TMEM_LANES} lanes x "
                                    f"{tmem_cap} columns. Reuse columns (tmem.move_base_to) or "
                                    "shrink the accumulator tile."})
            break
    req = plan.tmem_alloc_columns
    if req is not None:
        if req > tmem_cap:
            errs.append({"kind": "tmem", "allocation": None, "excess": req - tmem_cap,
                         "limit": tmem_cap,
                         "message": f"{plan.kernel}: tcgen05.alloc asks for {req} columns, "
                                    f"{req - tmem_cap} over the {tmem_cap}-column maximum"})
        elif req < 32 or req & (req - 1):
            errs.append({"kind": "tmem", "allocation": None, "excess": 0, "limit": tmem_cap,
                         "message": f"{plan.kernel}: tcgen05.alloc asks for {req} columns; it must be "
                                    "a power of two between 32 and 512"})
        elif plan.tmem_columns > req:
            last = max(tmem, key=lambda a: a["offset"] + a["nbytes"])
            errs.append({"kind": "tmem", "allocation": last["name"], "excess": plan.tmem_columns - req,
                         "limit": req,
                         "message": f"{plan.kernel}: TMEM buffer {last['name']!r} ends at column "
                                    f"{plan.tmem_columns}, past the {req} columns tcgen05.alloc "
                                    f"requests, by {plan.tmem_columns - req}"})
    return errs


def _warnings(plan, dyn):
    out = []
    for a in dyn:
        if a["align"] and a["offset"] % a["align"]:
            out.append(f"{a['name']!r} declares {a['align']} B alignment but sits at byte {a['offset']} "
                       f"(offset mod {a['align']} = {a['offset'] % a['align']})")
        if a["swizzle"]:
            atom = 8 * int(a["swizzle"].split("B", 1)[0])   # 8 rows x swizzle span
            if a["offset"] % atom:
                out.append(f"{a['name']!r} is {a['swizzle'].split(' (')[0]}d but starts at byte "
                           f"{a['offset']}, not a multiple of its {atom} B swizzle atom: TMA/UMMA "
                           "descriptors assume atom-aligned tiles")
    return out


def _threads_per_cta(scope_defs, launch):
    if launch and launch.get("block"):
        blk = launch["block"]
        blk = blk if isinstance(blk, (list, tuple)) else [blk]
        try:
            return int(math.prod(int(x) for x in blk))
        except Exception:
            pass
    per = {"thread": 1, "warp": 32, "warpgroup": 128}
    best = None
    for text in scope_defs:
        m = re.search(r"\[([^\]]*)\],\s*\[([^\]]*)\],\s*\"(\w+)\",\s*\"(\w+)\"", text)
        if not m or m.group(3) != "cta" or m.group(4) not in per:
            continue
        try:
            ext = math.prod(int(x) for x in m.group(2).split(",") if x.strip())
        except ValueError:
            continue
        n = ext * per[m.group(4)]
        if m.group(4) == "thread":
            return n
        best = best or n
    return best


def _occupancy(plan, limits, threads, regs) -> Occupancy:
    notes = []
    smem_cta = plan.total_smem_bytes + RESERVED_SMEM_PER_CTA
    lim = {"smem": None, "registers": None, "threads": None, "ctas": None, "tmem": None}
    if limits is None:
        notes.append("arch unknown: pass arch= to get occupancy")
        return Occupancy(None, None, lim, smem_cta, threads, regs, notes)
    lim["ctas"] = limits["max_ctas_per_sm"]
    lim["smem"] = limits["smem_per_sm"] // smem_cta if plan.total_smem_bytes <= plan.limit_bytes else 0
    if threads:
        warps = -(-threads // 32)
        lim["threads"] = limits["max_warps_per_sm"] // warps
        if regs:
            per_warp = -(-regs * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
            lim["registers"] = limits["regs_per_sm"] // (per_warp * warps)
        else:
            notes.append("registers unknown (give a txlab.Compiled for ptxas' count)")
    else:
        notes.append("threads per CTA unknown")
    if plan.tmem_alloc_columns:
        lim["tmem"] = TMEM_MAX_COLUMNS // plan.tmem_alloc_columns
        notes.append("TMEM: a CTA whose tcgen05.alloc does not fit waits for another to free columns")
    notes.append(f"{RESERVED_SMEM_PER_CTA} B of shared memory per CTA is reserved by the system")
    known = {k: v for k, v in lim.items() if v is not None}
    who = min(known, key=lambda k: known[k])
    return Occupancy(known[who], who, lim, smem_cta, threads, regs, notes)


def _assign_lanes(allocs) -> dict:
    """Stack overlapping (aliased) byte ranges on separate rows, first-fit in offset order."""
    rows: list[int] = []          # end byte of the last range placed on each row
    out = {}
    for a in sorted(allocs, key=lambda a: (a["offset"], -(a["nbytes"] or 0))):
        end = a["offset"] + (a["nbytes"] or 0)
        for i, row_end in enumerate(rows):
            if row_end <= a["offset"]:
                rows[i] = end
                out[a["name"]] = i
                break
        else:
            rows.append(end)
            out[a["name"]] = len(rows) - 1
    return out
