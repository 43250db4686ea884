"""Whether a plan fits: errors (shared memory, TMEM), warnings, threads per CTA, occupancy, TMEM lane
assignment."""

from __future__ import annotations

import math
import re

from txlab.pools.buffers import _fmt_bytes
from txlab.pools.limits import RESERVED_SMEM_PER_CTA, TMEM_LANES, TMEM_MAX_COLUMNS, sm_limits
from txlab.pools.plan import Occupancy
from txlab.residency import SMEM_ALLOC_UNIT, by_registers, by_shared_memory, by_warps, smem_per_cta


def _end(a) -> int:
    return a["offset"] + (a["nbytes"] or 0)


def _arena_label(ar) -> str:
    """How the user wrote the arena: ``SMEMPool 'pool'`` (TVM names a pool's arena ``<variable>_buf``)."""
    if not ar["pool"]:
        return f"shared.dyn buffer {ar['name']!r}"
    if ar["name"].endswith("_buf") and len(ar["name"]) > 4:
        return f"SMEMPool {ar['name'][:-4]!r} (arena {ar['name']!r})"
    return f"SMEMPool {ar['name']!r}"


def _uncommitted(plan) -> list:
    """The SMEMPool arenas never committed (no tirx.dyn_smem_bytes, no extent of their own, no launch size)."""
    if len(plan.arenas) == 1 and plan.dynamic_smem_bytes is not None:
        return []  # the launch says its size (a compiled kernel)
    return [
        ar
        for ar in plan.arenas
        if ar["pool"] and ar["committed"] is None and ar["committed_expr"] is None and not ar["extent"]
    ]


def _unbuildable(plan) -> str | None:
    """Why TVM will not build the kernel's dynamic shared memory, or None."""
    if len(plan.arenas) > 1:
        return f"TVM does not build a kernel with {len(plan.arenas)} dynamic shared memory arenas: see errors"
    if _uncommitted(plan):
        return "TVM does not build a kernel whose SMEMPool was never committed: see errors"
    return None


def _arena_errors(plan, dyn) -> list:
    """Dynamic shared memory TVM will not build: several arenas (it allows one dynamic shared allocation per
    kernel, and each would start at byte 0 of the same extern array), or an SMEMPool never committed."""
    errs = []
    arenas = plan.arenas
    if len(arenas) > 1:

        def what(ar):
            held = ", ".join(repr(n) for n in ar["allocations"]) or "nothing"
            return f"{_arena_label(ar)}: {held}"

        arena_of = {n: i for i, ar in enumerate(arenas) for n in ar["allocations"]}
        overlaps = sorted(
            {
                tuple(sorted((a["name"], o)))
                for a in dyn
                for o in a["aliases"]
                if arena_of.get(o) is not None and arena_of.get(o) != arena_of.get(a["name"])
            }
        )
        shared = "; ".join(f"{x!r} and {y!r}" for x, y in overlaps[:4]) + ("; ..." if len(overlaps) > 4 else "")
        first = next((n for ar in arenas[1:] for n in ar["allocations"]), None)
        errs.append(
            {
                "kind": "smem",
                "allocation": first,
                "excess": 0,
                "limit": 0,
                "message": f"{plan.kernel}: {len(arenas)} dynamic shared memory arenas "
                f"({'; '.join(what(ar) for ar in arenas)}): TVM builds a kernel with one dynamic shared memory "
                "allocation ('Only one dynamic shared memory allocation is allowed'), and every arena starts at "
                "byte 0 of the same extern array"
                + (f", so {shared} would overlap" if shared else "")
                + ". Allocate every buffer from one SMEMPool and commit it once, after its last alloc.",
            }
        )
    for ar in _uncommitted(plan):
        held = [a for a in dyn if a["name"] in ar["allocations"]]
        last = max(held, key=_end) if held else None
        high = max((_end(a) for a in held), default=0)
        errs.append(
            {
                "kind": "smem",
                "allocation": last["name"] if last else None,
                "excess": high,
                "limit": 0,
                "message": f"{plan.kernel}: the {_arena_label(ar)} holding "
                f"{', '.join(repr(n) for n in ar['allocations'])} ({high} B) was never committed: no "
                "tirx.dyn_smem_bytes annotation sizes the dynamic shared memory, so TVM refuses to build the "
                "kernel ('placeholder extent'); commit the pool after its last alloc (pool.commit())",
            }
        )
    return errs


def _errors(plan, dyn, tmem, limits):
    errs = _arena_errors(plan, dyn)
    if plan.dynamic_smem_bytes is not None and plan.dynamic_smem_bytes < plan.high_water_bytes:
        last = max(dyn, key=_end)
        errs.append(
            {
                "kind": "smem",
                "allocation": last["name"],
                "excess": plan.high_water_bytes - plan.dynamic_smem_bytes,
                "limit": plan.dynamic_smem_bytes,
                "message": f"{plan.kernel}: {last['name']!r} ends at byte {plan.high_water_bytes}, "
                f"past the kernel's dynamic shared memory annotation "
                f"({plan.dynamic_smem_bytes} B) by "
                f"{plan.high_water_bytes - plan.dynamic_smem_bytes} B; "
                "commit the pool after its last alloc (pool.commit())",
            }
        )
    total = plan.total_smem_bytes
    if limits and plan.limit_bytes is not None and total is not None and total > plan.limit_bytes:
        over = total - plan.limit_bytes
        dyn_limit = plan.limit_bytes - plan.static_smem_bytes
        crossing = [a for a in sorted(dyn, key=lambda a: (a["offset"], a["nbytes"] or 0)) if _end(a) > dyn_limit]
        who = crossing[0] if crossing else None
        dyn_bytes = total - plan.static_smem_bytes
        if not dyn_bytes:
            needs = f"{plan.static_smem_bytes} B of static shared memory"
        elif plan.static_smem_bytes:
            needs = f"{total} B of shared memory ({dyn_bytes} B dynamic + {plan.static_smem_bytes} B static)"
        else:
            needs = f"{total} B of dynamic shared memory"
        if plan.static_smem_bytes >= plan.limit_bytes:
            who = None
            what = "the static buffers (T.alloc_shared) alone reach the limit, so they must shrink"
        elif who is not None:
            what = (
                f"{who['name']!r} (bytes {who['offset']}..{_end(who)}, "
                f"{who['dtype']}{who['shape']}) crosses the line at byte {dyn_limit}"
                + (
                    f" of the dynamic pool (the limit less {plan.static_smem_bytes} B static)"
                    if plan.static_smem_bytes
                    else ""
                )
            )
        else:
            what = (
                f"the pool's committed size ({dyn_bytes} B) is past byte {dyn_limit}, all the "
                "dynamic shared memory the limit leaves"
            )
        errs.append(
            {
                "kind": "smem",
                "allocation": who["name"] if who else None,
                "excess": over,
                "limit": plan.limit_bytes,
                "message": f"{plan.kernel}: shared memory plan needs {needs}, over the "
                f"{plan.arch} per-block limit of "
                f"{plan.limit_bytes} B ({_fmt_bytes(plan.limit_bytes)}) by {over} B; "
                f"{what}. Cut pipeline stages or tile sizes, or alias buffers whose "
                "lifetimes do not overlap (pool.move_base_to).",
            }
        )
    tmem_cap = TMEM_MAX_COLUMNS
    if tmem and limits is not None and limits["tmem_columns"] == 0:
        errs.append(
            {
                "kind": "tmem",
                "allocation": tmem[0]["name"],
                "excess": plan.tmem_columns,
                "limit": 0,
                "message": f"{plan.kernel}: {plan.arch} has no tensor memory, but "
                f"{tmem[0]['name']!r} is a TMEM buffer; compile for sm_100a",
            }
        )
    for a in sorted(tmem, key=lambda a: a["offset"]):
        end = _end(a)
        if end > tmem_cap:
            errs.append(
                {
                    "kind": "tmem",
                    "allocation": a["name"],
                    "excess": end - tmem_cap,
                    "limit": tmem_cap,
                    "message": f"{plan.kernel}: TMEM buffer {a['name']!r} (columns "
                    f"{a['offset']}..{end}) runs past column {tmem_cap} by "
                    f"{end - tmem_cap} column(s); a CTA has {TMEM_LANES} lanes x "
                    f"{tmem_cap} columns. Reuse columns (tmem.move_base_to) or "
                    "shrink the accumulator tile.",
                }
            )
            break
    req = plan.tmem_alloc_columns
    if req is not None:
        if req > tmem_cap:
            errs.append(
                {
                    "kind": "tmem",
                    "allocation": None,
                    "excess": req - tmem_cap,
                    "limit": tmem_cap,
                    "message": f"{plan.kernel}: tcgen05.alloc asks for {req} columns, "
                    f"{req - tmem_cap} over the {tmem_cap}-column maximum",
                }
            )
        elif req < 32 or req & (req - 1):
            errs.append(
                {
                    "kind": "tmem",
                    "allocation": None,
                    "excess": 0,
                    "limit": tmem_cap,
                    "message": f"{plan.kernel}: tcgen05.alloc asks for {req} columns; it must be "
                    "a power of two between 32 and 512",
                }
            )
        elif plan.tmem_columns > req:
            last = max(tmem, key=_end)
            errs.append(
                {
                    "kind": "tmem",
                    "allocation": last["name"],
                    "excess": plan.tmem_columns - req,
                    "limit": req,
                    "message": f"{plan.kernel}: TMEM buffer {last['name']!r} ends at column "
                    f"{plan.tmem_columns}, past the {req} columns tcgen05.alloc "
                    f"requests, by {plan.tmem_columns - req}",
                }
            )
    return errs


#: the data_alignment TVM gives a buffer declared without align= (SMEMPool.alloc's default): a claim, not a
#: placement the pool makes, so only an alignment something needs is checked (see _alignment_needed)
TVM_DEFAULT_ALIGN = 64
#: a shared-memory matrix descriptor (wgmma / tcgen05.mma) encodes the start address in 16-byte units
DESCRIPTOR_ALIGN = 16


def _alignment_needed(a) -> list[tuple[int, str]]:
    """``[(bytes, why)]``: the alignments buffer ``a`` needs where it sits: its dtype's own (a scalar or vector
    access of the element), an ``align=`` the kernel asked for (anything but TVM's default, which the pool does
    not place by), a matrix descriptor's 16 bytes. Swizzle atoms are checked on their own."""
    from tvm import DataType

    out = []
    try:
        t = DataType(a["dtype"])
        natural = max(1, t.bits * t.lanes // 8)
    except Exception:  # noqa: BLE001 - a dtype TVM cannot read has no natural alignment here
        natural = 1
    if natural > 1:
        out.append((natural, f"its dtype ({a['dtype']}, {natural} B)"))
    if a["align"] and a["align"] != TVM_DEFAULT_ALIGN and a["align"] > natural:
        out.append((a["align"], f"the align={a['align']} it was declared with"))
    if any("encode_matrix_descriptor" in op for op in a.get("uses", ())):
        out.append((DESCRIPTOR_ALIGN, "a matrix descriptor (16-byte units)"))
    return out


def _truncated_offsets(dyn) -> list:
    """A pool buffer whose bump offset was not a multiple of its element size: TVM keeps a declared buffer's
    offset in elements (``byte_offset // element bytes``), so the buffer lands below where the pool put it,
    over the end of the one before -- what ``pool.alloc((1,), "int32")`` then ``pool.alloc((1,), "uint64")``
    does. Seen in the IR as the next buffer starting at the previous one's end rounded down to its element."""
    from tvm import DataType

    out = []
    prev = {}
    for a in dyn:
        key = a.get("pool")
        p = prev.get(key)
        prev[key] = a
        if p is None or a["nbytes"] is None or p["nbytes"] is None:
            continue
        try:
            t = DataType(a["dtype"])
            natural = t.bits * t.lanes // 8
        except Exception:  # noqa: BLE001 - a dtype TVM cannot read has no element size here
            continue
        end = _end(p)
        if natural > 1 and end % natural and a["offset"] == end - end % natural:
            out.append(
                f"{a['name']!r} ({a['dtype']}) follows {p['name']!r}, which ends at byte {end}, not a multiple of "
                f"{a['dtype']}'s {natural} B: TVM keeps a pool buffer's offset in elements ({end} // {natural} = "
                f"element {end // natural}), so {a['name']!r} sits at byte {a['offset']} and overlaps {p['name']!r}; "
                f"pass align={natural} to its pool.alloc"
            )
    return out


def _warnings(plan, dyn):
    out = _truncated_offsets(dyn)
    for a in dyn:
        for align, why in _alignment_needed(a):
            if a["offset"] % align:
                out.append(
                    f"{a['name']!r} sits at byte {a['offset']}, not a multiple of {align} B, the alignment "
                    f"{why} needs (offset mod {align} = {a['offset'] % align}): a misaligned shared-memory "
                    "access faults; pass align= to place it"
                )
                break
        if a["swizzle"]:
            atom = 8 * int(a["swizzle"].split("B", 1)[0])  # 8 rows x swizzle span
            if a["offset"] % atom:
                out.append(
                    f"{a['name']!r} is {a['swizzle'].split(' (')[0]}d but starts at byte "
                    f"{a['offset']}, not a multiple of its {atom} B swizzle atom: TMA/UMMA "
                    "descriptors assume atom-aligned tiles"
                )
    out += _unknown_size_warnings(plan)
    return out


def _unknown_size_warnings(plan) -> list:
    """What a shared-memory size that depends on a kernel argument leaves unjudged, and how to judge it."""
    out = []
    for u in plan.unknown_sizes:
        args = ", ".join(u["depends_on"]) or "a value computed at run time"
        what = f"{u['allocation']!r}" if u["allocation"] else "the pool's commit"
        size = f" is {u['nbytes']} B:" if u["nbytes"] else ":"
        if u["in_total"]:
            committed = plan.dynamic_smem_bytes if u["scope"] == "shared.dyn" else plan.static_smem_bytes
            out.append(
                f"{what}{size} its size or place depends on {args}; the plan counts the {committed} B "
                f"{'committed' if u['scope'] == 'shared.dyn' else 'ptxas reports'}, and {what} must fit in them "
                "for every value"
            )
            continue
        limit = (
            f" against the {plan.arch} per-block limit ({plan.limit_bytes} B, {_fmt_bytes(plan.limit_bytes)})"
            if plan.limit_bytes
            else ""
        )
        keys = ", ".join(f"{v!r}: ..." for v in u["depends_on"]) or "...: ..."
        out.append(
            f"{what}{size} its size depends on {args}, so the plan does not judge the shared memory{limit} or "
            f"count occupancy from it; pass params={{{keys}}} to txlab.pools.layout to judge one size"
        )
    return out


def _threads_per_cta(scope_defs, launch):
    if launch and launch.get("block"):
        blk = launch["block"]
        blk = blk if isinstance(blk, (list, tuple)) else [blk]
        try:
            return int(math.prod(int(x) for x in blk))
        except Exception:  # noqa: BLE001 - an unreadable layout leaves the default
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


def _valid_tmem_request(cols) -> bool:
    """Whether ``tcgen05.alloc`` may ask for ``cols`` columns: a power of two from 32 to 512 (PTX ISA)."""
    return 32 <= cols <= TMEM_MAX_COLUMNS and not cols & (cols - 1)


def _occupancy(plan, limits, threads, regs) -> Occupancy:
    """CTAs per SM by each resource, counted by :mod:`txlab.residency`: the same functions as
    :func:`txlab.occupancy_of` (one answer for one build), plus TMEM columns. A resource whose use is not
    known (a size that depends on a kernel argument, an invalid ``tcgen05.alloc``) leaves the count unknown:
    ``ctas_per_sm`` is None and ``unknown`` says why; the resources that are known still bound it (notes)."""
    notes = []
    total = plan.total_smem_bytes
    smem_cta = smem_per_cta(total) if total is not None else None
    lim = {"smem": None, "registers": None, "threads": None, "ctas": None, "tmem": None}
    if limits is None:
        notes.append("arch unknown: pass arch= to get occupancy")
        return Occupancy(None, None, lim, smem_cta, threads, regs, notes)
    sm = sm_limits(limits["arch"])
    lim["ctas"] = sm.max_ctas_per_sm
    unknown = []
    problems = []
    if total is not None:
        lim["smem"], _, problem = by_shared_memory(sm, total)
        problems.append(problem)
    else:
        unknown.append(f"the shared memory's size depends on {', '.join(plan.depends_on) or 'a run-time value'}")
    if threads:
        lim["threads"], problem = by_warps(sm, threads)
        problems.append(problem)
        if regs:
            lim["registers"], problem = by_registers(sm, regs, threads)
            problems.append(problem)
        else:
            notes.append("registers unknown (give a txlab.Compiled for ptxas' count)")
    else:
        notes.append("threads per CTA unknown")
    notes += [p for p in problems if p]
    req = plan.tmem_alloc_columns
    if req:
        if _valid_tmem_request(req):
            lim["tmem"] = TMEM_MAX_COLUMNS // req
            notes.append("TMEM: a CTA whose tcgen05.alloc does not fit waits for another to free columns")
        else:
            unknown.append(
                f"tcgen05.alloc asks for {req} columns, which ptxas refuses (a power of two from 32 to 512): see errors"
            )
    notes.append(
        f"{RESERVED_SMEM_PER_CTA} B of shared memory per CTA is reserved by the system, and a CTA's shared memory is "
        f"allocated in {SMEM_ALLOC_UNIT} B units"
    )
    why = _unbuildable(plan)
    if why:
        unknown.insert(0, why)
    known = {k: v for k, v in lim.items() if v is not None}
    least = min(known.values())
    who = " and ".join(k for k in known if known[k] == least)  # a tie names each resource that allows no more
    if unknown:
        notes.append(f"at most {least} CTA/SM by what is known ({who})")
        return Occupancy(None, None, lim, smem_cta, threads, regs, notes, unknown="; ".join(unknown))
    return Occupancy(least, who, lim, smem_cta, threads, regs, notes)
