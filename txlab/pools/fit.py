"""Whether a plan fits: errors (shared memory, TMEM), warnings, threads per CTA, occupancy, TMEM lane
assignment."""

from __future__ import annotations

import math
import re

from txlab.pools.buffers import _fmt_bytes
from txlab.pools.limits import RESERVED_SMEM_PER_CTA, TMEM_LANES, TMEM_MAX_COLUMNS, sm_limits
from txlab.pools.plan import Occupancy
from txlab.residency import SMEM_ALLOC_UNIT, by_registers, by_shared_memory, by_warps, smem_per_cta


def _errors(plan, dyn, tmem, limits):
    errs = []
    if plan.dynamic_smem_bytes is not None and plan.dynamic_smem_bytes < plan.high_water_bytes:
        last = max(dyn, key=lambda a: a["offset"] + a["nbytes"])
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
    if limits and plan.limit_bytes is not None and plan.total_smem_bytes > plan.limit_bytes:
        over = plan.total_smem_bytes - plan.limit_bytes
        dyn_limit = plan.limit_bytes - plan.static_smem_bytes
        crossing = [
            a for a in sorted(dyn, key=lambda a: (a["offset"], a["nbytes"])) if a["offset"] + a["nbytes"] > dyn_limit
        ]
        who = crossing[0] if crossing else None
        dyn_bytes = plan.total_smem_bytes - plan.static_smem_bytes
        if not dyn_bytes:
            needs = f"{plan.static_smem_bytes} B of static shared memory"
        elif plan.static_smem_bytes:
            needs = (
                f"{plan.total_smem_bytes} B of shared memory ({dyn_bytes} B dynamic + "
                f"{plan.static_smem_bytes} B static)"
            )
        else:
            needs = f"{plan.total_smem_bytes} B of dynamic shared memory"
        if plan.static_smem_bytes >= plan.limit_bytes:
            who = None
            what = "the static buffers (T.alloc_shared) alone reach the limit, so they must shrink"
        elif who is not None:
            what = (
                f"{who['name']!r} (bytes {who['offset']}..{who['offset'] + who['nbytes']}, "
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
        end = a["offset"] + a["nbytes"]
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
            last = max(tmem, key=lambda a: a["offset"] + a["nbytes"])
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


def _warnings(plan, dyn):
    out = []
    for a in dyn:
        if a["align"] and a["offset"] % a["align"]:
            out.append(
                f"{a['name']!r} declares {a['align']} B alignment but sits at byte {a['offset']} "
                f"(offset mod {a['align']} = {a['offset'] % a['align']}): the buffer's data_alignment, which TVM "
                f"sets to 64 where pool.alloc gets no align=; code relying on it (vector accesses) would be "
                f"misaligned: pass align= to place it"
            )
        if a["swizzle"]:
            atom = 8 * int(a["swizzle"].split("B", 1)[0])  # 8 rows x swizzle span
            if a["offset"] % atom:
                out.append(
                    f"{a['name']!r} is {a['swizzle'].split(' (')[0]}d but starts at byte "
                    f"{a['offset']}, not a multiple of its {atom} B swizzle atom: TMA/UMMA "
                    "descriptors assume atom-aligned tiles"
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


def _occupancy(plan, limits, threads, regs) -> Occupancy:
    """CTAs per SM by each resource, counted by :mod:`txlab.residency`: the same functions as
    :func:`txlab.occupancy_of` (one answer for one build), plus TMEM columns."""
    notes = []
    smem_cta = smem_per_cta(plan.total_smem_bytes)
    lim = {"smem": None, "registers": None, "threads": None, "ctas": None, "tmem": None}
    if limits is None:
        notes.append("arch unknown: pass arch= to get occupancy")
        return Occupancy(None, None, lim, smem_cta, threads, regs, notes)
    sm = sm_limits(limits["arch"])
    lim["ctas"] = sm.max_ctas_per_sm
    lim["smem"], _, problem = by_shared_memory(sm, plan.total_smem_bytes)
    problems = [problem]
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
    if plan.tmem_alloc_columns:
        lim["tmem"] = TMEM_MAX_COLUMNS // plan.tmem_alloc_columns
        notes.append("TMEM: a CTA whose tcgen05.alloc does not fit waits for another to free columns")
    notes.append(
        f"{RESERVED_SMEM_PER_CTA} B of shared memory per CTA is reserved by the system, and a CTA's shared memory is "
        f"allocated in {SMEM_ALLOC_UNIT} B units"
    )
    known = {k: v for k, v in lim.items() if v is not None}
    least = min(known.values())
    who = " and ".join(k for k in known if known[k] == least)  # a tie names each resource that allows no more
    return Occupancy(least, who, lim, smem_cta, threads, regs, notes)
