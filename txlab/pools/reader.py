"""Reading a plan back from a kernel's IR: the public entry points (``layout``, ``layouts``, ``check``,
``bank_pattern``) and the walk over the IR (``tvm_ffi.structural_walk``) that rebuilds the plan."""

from __future__ import annotations

import math

from txlab import ir
from txlab.pools.buffers import (
    _bank_pattern,
    _footprint_bytes,
    _free_vars,
    _gaps,
    _int,
    _lanes_overlap,
    _name_unnamed,
    _shape,
    _swizzle_text,
    _symbolic_bytes,
    _tmem_lanes,
)
from txlab.pools.fit import _errors, _occupancy, _threads_per_cta, _warnings
from txlab.pools.limits import ARCH_LIMITS, TMEM_LANES, arch_limits
from txlab.pools.plan import PoolLayout
from txlab.simt import checked_params


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------


def layout(kernel, name: str | None = None, *, arch: str | None = None, params: dict | None = None) -> PoolLayout:
    """The memory plan of ``kernel`` (a ``tvm.tirx.PrimFunc``, a ``tvm.IRModule``, or a
    ``txlab.Compiled`` / any object with ``.ir_module``). ``name`` picks one function of a module
    that has several. ``arch`` defaults to the Compiled's arch, then the function's target, then
    the local GPU. ``params`` binds scalar kernel arguments that shared-memory sizes depend on
    (``{"n": 4096}``: the plan of that size; without it such a size is reported in ``.unknown_sizes``
    and not judged). Does not raise for plans that do not fit: see ``.errors`` and ``.check()``."""
    plans = layouts(kernel, arch=arch, params=params)
    if name is not None:
        for key, plan in plans.items():
            if key == name or plan.kernel == name:
                return plan
        raise KeyError(f"no kernel named {name!r}; this module has {sorted(plans)}")
    with_pool = {k: p for k, p in plans.items() if p.allocations}
    pick = with_pool or plans
    if len(pick) != 1:
        raise ValueError(
            f"the module has {len(pick)} kernels ({', '.join(sorted(pick))}); "
            "pass name= to pick one, or use txlab.pools.layouts()"
        )
    return next(iter(pick.values()))


def layouts(kernel, *, arch: str | None = None, params: dict | None = None) -> dict:
    """``{function name: PoolLayout}`` for every PrimFunc of ``kernel`` (``params``: see :func:`layout`)."""
    mod, _ = ir.as_module(kernel, what="txlab.pools.layout")
    bind = checked_params(mod, params)
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
        mine = {p: bind[p.name] for p in func.params if p.name in bind}
        if mine:  # the arguments bound: TVM's own substitution (PrimFunc.specialize)
            func = func.specialize(mine)
        out[fname] = _build(fname, func, f_arch, res, launch)
        if mine:
            out[fname]._source = tvm_module_of({fname: func}, fname)
        else:
            out[fname]._source = compiled if compiled is not None else tvm_module_of(mod, fname)
    return out


def _judgeable_arch(arch) -> str:
    """``arch`` as compile() reads it (None: the local GPU's, else txlab.config.default_arch, said
    once), checked to be one txlab has limits for: a plan is never passed for want of an arch."""
    from txlab.arch import UNJUDGED_ARCHS, resolve_arch
    from txlab.errors import ArchError

    resolved = resolve_arch(arch)
    try:
        arch_limits(resolved)
    except ValueError:
        base = resolved.rstrip("af")
        why = UNJUDGED_ARCHS.get(base, f"txlab has no shared-memory limits for {resolved}")
        raise ArchError(
            f"{resolved}: {why}, so it cannot judge this plan; pass arch= one of "
            f"{', '.join(sorted(ARCH_LIMITS, key=lambda a: int(a[3:])))} (or an 'a'/'f' variant)"
        ) from None
    return resolved


def check(kernel, name: str | None = None, *, arch: str | None = None, params: dict | None = None) -> PoolLayout:
    """Build the plan and raise :class:`PoolOverflowError` if it does not fit (call before launch)."""
    return layout(kernel, name, arch=arch, params=params).check()


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
    except Exception:  # noqa: BLE001 - a node the FFI cannot read has no target
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


def _entry(b, scope: str, shape) -> dict:
    """The allocation record of buffer ``b`` before its place is known."""
    lay = b.layout
    return {
        "name": b.name,
        "scope": scope,
        "dtype": str(b.dtype),
        "shape": shape,
        "align": int(b.data_alignment),
        "swizzle": None,
        "layout": str(lay) if lay is not None else None,
        "aliases": [],
        "named_in_ir": bool(b.name),
        "origin": None,
        "pool": None,
    }


def _place(entry: dict, b, shape, bits: int, offset, offset_expr=None) -> None:
    """A shared buffer's place: ``offset`` (bytes, None when not constant), size, swizzle and bank pattern.
    A size or an offset that is no constant (it depends on a kernel argument) is ``None``; ``nbytes_expr``
    says the size as text (``"n * 4"``) and ``depends_on`` names the variables either depends on."""
    entry["offset"] = offset
    entry["nbytes"] = _footprint_bytes(b, shape, bits)
    expr, names = _symbolic_bytes(b, bits) if entry["nbytes"] is None else (None, [])
    if offset is None and offset_expr is not None:
        names += [v for v in _free_vars([offset_expr]) if v not in names]
    entry["nbytes_expr"] = expr
    entry["depends_on"] = names
    entry["swizzle"] = _swizzle_text(b.layout, bits)
    entry["bank_pattern"] = _bank_pattern(b.layout, shape, bits, offset) if offset is not None else None


def _uses(entry: dict, rec) -> None:
    """The ops that touch the buffer and the line of its first use, from its ``uses`` record (or None)."""
    entry["uses"] = sorted(op.replace("tirx.", "") for op in rec["ops"]) if rec else []
    entry["_line"] = rec["line"] if rec else None


def _build(fname, func, arch, resources, launch) -> PoolLayout:
    import tvm
    import tvm_ffi
    from tvm import DataType, tirx

    pools = []  # AllocBuffer of shared.dyn (arena) buffers
    static = []  # AllocBuffer of scope "shared"
    decls = []  # (DeclBuffer node) in program order
    annotation = []  # (index of the arena allocated last before it, bytes or None when not constant, the value)
    tmem_allocs = []
    tmem_groups = []  # cta_group of each tcgen05.alloc (2: the same columns in both CTAs of a pair)
    scope_defs = []
    mapa_dests = set()  # scratch buffers mapa writes a peer CTA's address into
    bound = {}  # var name -> value of a Bind: pointers computed at run time (a peer CTA's window via mapa)
    uses = {}  # buffer id -> {"ops": set, "line": (file, line)}

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
            # SMEMPool.commit() annotates right after the pool's allocs: the arena allocated last is its own
            annotation.append((len(pools) - 1, _int(n.value), n.value))

    def on_scope(n):
        scope_defs.append(str(getattr(n, "def")))

    def on_bind(n):
        bound[_bkey_var(n.var)] = n.value

    tvm_ffi.structural_walk(
        func.body,
        [
            (tirx.AllocBuffer, on_alloc),
            (tirx.DeclBuffer, on_decl),
            (tirx.AttrStmt, on_attr),
            (tirx.ScopeIdDefStmt, on_scope),
            (tirx.Bind, on_bind),
        ],
        order="pre",
    )

    # Uses of buffers in leaf statements: which ops touch them, and the user's source line.
    def on_leaf(stmt):
        loc = ir.user_frame(stmt.span)
        ops = []

        def on_call(c):
            name = getattr(c.op, "name", None)
            if name:
                ops.append(name)
                if name == "tirx.ptx.tcgen05_alloc" and len(c.args) > 1:
                    tmem_allocs.append(_int(c.args[1]))
                if "mapa" in name and len(c.args) and isinstance(getattr(c.args[0], "source", None), tirx.Buffer):
                    mapa_dests.add(_bkey(c.args[0].source))
                if name == "tirx.ptx.tcgen05_alloc" and len(c.args) > 1:
                    tmem_groups.extend(
                        2 if str(a) in ('"cta_group::2"', "cta_group::2") else 1
                        for a in c.args[2:]
                        if "cta_group" in str(a)
                    )

        touched = []

        def on_load(x):
            src = x.source
            if isinstance(src, tirx.Buffer):
                touched.append(src)

        tvm_ffi.structural_walk(stmt, [(tvm_ffi_call_type(), on_call), (tvm.ir.TensorLoad, on_load)], order="pre")
        if isinstance(stmt, tirx.BufferStore):
            touched.append(stmt.buffer)
        for b in touched:
            rec = uses.setdefault(_bkey(b), {"ops": set(), "line": None})
            rec["ops"].update(ops)
            if rec["line"] is None and loc is not None:
                rec["line"] = loc

    tvm_ffi.structural_walk(func.body, [((tirx.Evaluate, tirx.BufferStore), on_leaf)], order="pre")

    pool_keys = {_bkey_var(p.data): p for p in pools}
    arena_of = {_bkey_var(p.data): i for i, p in enumerate(pools)}
    allocations = []
    views = []  # buffers declared over a computed pointer: memory allocated elsewhere
    for n in decls:
        b = n.buffer
        scope = b.scope()
        if scope not in ("shared.dyn", "shared", "tmem"):
            continue
        bits = DataType(b.dtype).bits * DataType(b.dtype).lanes
        shape = _shape(b)
        lay = b.layout
        entry = _entry(b, scope, shape)
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
            if pool_var is not None and _bkey_var(pool_var) not in pool_keys and _bkey_var(pool_var) in bound:
                # e.g. MBarrier.remote_view(rank): a buffer over a pointer mapa computed into another
                # CTA's shared memory; it occupies nothing in this CTA
                value = bound[_bkey_var(pool_var)]
                views.append(
                    {
                        "name": b.name or str(pool_var),
                        "scope": scope,
                        "dtype": str(b.dtype),
                        "shape": shape,
                        "remote": _calls_mapa(value, mapa_dests),
                        "pointer": str(value),
                    }
                )
                continue
            if pool_var is not None and _bkey_var(pool_var) in pool_keys:
                entry["pool"] = pool_keys[_bkey_var(pool_var)].name or "pool"
                entry["_arena"] = arena_of[_bkey_var(pool_var)]
            elif pool_var is not None:
                entry["pool"] = str(pool_var)
            eo = _int(b.elem_offset)
            _place(entry, b, shape, bits, (eo * bits) // 8 if eo is not None else None, b.elem_offset)
        _uses(entry, uses.get(_bkey(b)))
        allocations.append(entry)

    # A shared.dyn buffer allocated as it is (T.alloc_buffer(..., scope="shared.dyn")) and not carved into views
    # (an SMEMPool's arena is): it is the dynamic shared memory, from byte 0.
    carved = {a["_arena"] for a in allocations if a.get("_arena") is not None}
    for i, p in enumerate(pools):
        if i in carved:
            continue
        shape = _shape(p)
        entry = _entry(p, "shared.dyn", shape)
        entry["name"] = p.name or "dynamic"
        entry["_arena"] = i
        _place(entry, p, shape, DataType(p.dtype).bits * DataType(p.dtype).lanes, 0)
        _uses(entry, uses.get(_bkey(p)))
        allocations.append(entry)

    # Static (non-pool) shared buffers: laid out in declaration order, each at its own alignment.
    static_off = 0
    for b in static:
        bits = DataType(b.dtype).bits * DataType(b.dtype).lanes
        align = int(b.data_alignment) or 1
        if static_off is not None:
            static_off = -(-static_off // align) * align
        shape = _shape(b)
        nbytes = _footprint_bytes(b, shape, bits)
        nbytes_expr, depends_on = _symbolic_bytes(b, bits) if nbytes is None else (None, [])
        allocations.append(
            {
                "name": b.name or "static",
                "scope": "shared",
                "dtype": str(b.dtype),
                "shape": shape,
                "align": align,
                "swizzle": None,
                "layout": None,
                "aliases": [],
                "named_in_ir": bool(b.name),
                "origin": None,
                "pool": "static",
                "offset": static_off,
                "nbytes": nbytes,
                "nbytes_expr": nbytes_expr,
                "depends_on": depends_on,
                "bank_pattern": None,
                "uses": [],
                "_line": None,
            }
        )
        # after a buffer whose size depends on a kernel argument, the next ones' places do too
        static_off = static_off + nbytes if static_off is not None and nbytes is not None else None
    # (not all known: the known ones' sum, a lower bound; the plan's unknown_sizes say the rest)
    static_bytes = (
        static_off
        if static_off is not None
        else sum(a["nbytes"] or 0 for a in allocations if a["scope"] == "shared" and a["offset"] is not None)
    )

    _name_unnamed(allocations)
    for a in allocations:
        a.pop("_line", None)

    # The dynamic shared memory arenas (SMEMPools' and T.alloc_buffer(..., scope="shared.dyn")), each with
    # its commit (the tirx.dyn_smem_bytes annotation that follows it) and the buffers carved from it.
    arenas = []
    for i, p in enumerate(pools):
        held = [a for a in allocations if a.get("_arena") == i]
        commits = [(v, e) for j, v, e in annotation if j == i]
        extent = _footprint_bytes(p, _shape(p), DataType(p.dtype).bits * DataType(p.dtype).lanes)
        arenas.append(
            {
                "name": p.name or "dynamic",
                "pool": i in carved,  # an SMEMPool's (buffers carved from it), else a buffer of its own
                "committed": commits[-1][0] if commits else None,
                "committed_expr": str(commits[-1][1]) if commits and commits[-1][0] is None else None,
                "extent": extent,
                "allocations": [a["name"] for a in held],
            }
        )
    for a in allocations:
        a.pop("_arena", None)

    # Aliases: byte (column) ranges that overlap within the same memory: TMEM columns (where lanes overlap
    # too), the static shared buffers, and the dynamic shared memory -- one extern array from byte 0 whatever
    # arena (pool) a buffer was carved from.
    def memory(a):
        return "tmem" if a["scope"] == "tmem" else "static" if a["scope"] == "shared" else "dynamic"

    for a in allocations:
        for o in allocations:
            if o is a or o["offset"] is None or a["offset"] is None:
                continue
            if memory(a) != memory(o):
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
    tmem_high = max((a["offset"] + (a["nbytes"] or 0) for a in tmem), default=0)
    # several arenas: no one size (TVM refuses the kernel, see the plan's errors)
    dyn_annot = annotation[0][1] if annotation and len(arenas) <= 1 else None
    if dyn_annot is None and launch and isinstance(launch.get("dynamic_smem_bytes"), int) and dyn and len(arenas) <= 1:
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
            warnings.append(
                f"ptxas reports {ptxas_static} B of static shared memory, the IR's static "
                f"buffers add up to {static_bytes} B; occupancy uses ptxas' number"
            )
        static_bytes = ptxas_static

    # Shared memory whose size (or place) depends on a kernel argument: the total is unknown unless a constant
    # commit (the dynamic part) or ptxas (the static part) says it.
    unknown = []
    for a in allocations:
        if a["scope"] == "tmem" or (a["nbytes"] is not None and a["offset"] is not None):
            continue
        counted = (
            dyn_annot is not None
            if a["scope"] == "shared.dyn"
            else bool(resources and resources.get("static_smem_bytes") is not None)
        )
        unknown.append(
            {
                "allocation": a["name"],
                "scope": a["scope"],
                "nbytes": a["nbytes_expr"],
                "depends_on": a["depends_on"],
                "in_total": counted,
            }
        )
    for _, value, expr in annotation:
        if value is None and dyn_annot is None:
            unknown.append(
                {
                    "allocation": None,
                    "scope": "shared.dyn",
                    "nbytes": str(expr),
                    "depends_on": _free_vars([expr]),
                    "in_total": False,
                }
            )

    threads = _threads_per_cta(scope_defs, launch)
    regs = int(resources["registers"]) if resources and resources.get("registers") is not None else None
    tmem_req = max((c for c in tmem_allocs if c is not None), default=None)
    plan = PoolLayout(
        kernel=fname,
        arch=arch,
        allocations=allocations,
        dynamic_smem_bytes=dyn_annot,
        static_smem_bytes=static_bytes,
        high_water_bytes=high,
        limit_bytes=limits["smem_per_block_optin"] if limits else None,
        smem_per_sm_bytes=limits["smem_per_sm"] if limits else None,
        padding_bytes=padding,
        gaps=gaps,
        tmem_columns=tmem_high,
        tmem_alloc_columns=tmem_req,
        occupancy=None,
        errors=[],
        warnings=warnings,
        views=views,
        tmem_cta_group=max(tmem_groups) if tmem_groups else None,
        arenas=arenas,
        unknown_sizes=unknown,
    )
    plan.errors = _errors(plan, dyn, tmem, limits)
    plan.warnings += _warnings(plan, dyn)
    plan.occupancy = _occupancy(plan, limits, threads, regs)
    return plan


def _calls_mapa(value, mapa_dests) -> bool:
    """Whether a computed pointer comes from ``mapa`` (a peer CTA's shared window): a ``mapa`` call in
    the value itself, or a read of the scratch buffer a ``mapa`` wrote (what ``MBarrier.remote_view``
    does with ``mapa.u64``)."""
    import tvm
    import tvm_ffi

    hits = []

    def on_call(c):
        if "mapa" in getattr(c.op, "name", ""):
            hits.append(c)

    def on_load(x):
        if isinstance(x.source, tvm.tirx.Buffer) and _bkey(x.source) in mapa_dests:
            hits.append(x)

    tvm_ffi.structural_walk(value, [(tvm.ir.Call, on_call), (tvm.ir.TensorLoad, on_load)], order="pre")
    return bool(hits)


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
    return (buf.name, str(buf.data), str(buf.elem_offset), str(buf.dtype), str(list(buf.shape)), buf.scope())


def _bkey_var(var):
    return (var.name if hasattr(var, "name") else str(var), str(var.ty) if hasattr(var, "ty") else "")
