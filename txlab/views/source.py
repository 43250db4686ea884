"""SourceView: four synchronized panes, TVMScript | CUDA C | PTX | SASS, over a kernel's line map
(:attr:`txlab.Compiled.source_map`).

Hover or click a line in any pane: the user line it belongs to and all its counterparts are
highlighted and scrolled into view in the other panes; the info bar says how many SASS
instructions the line became, of which classes (memory, tensor, barrier, control, alu), which
library functions it inlines, and, with a profile, its samples and stall breakdown. Click pins the
line (``selected``; Escape or clicking it again unpins).

The TVMScript and SASS panes have a live-registers column: the general-purpose registers live at
each instruction (``nvdisasm --print-life-ranges``), the line's maximum on TVMScript lines; a line
whose SASS loads or stores local memory is marked (``spill`` when ptxas reported spills, else
``local``: a per-thread array in local memory).

The TVMScript pane has a global-memory column (``coalescing`` in the payload, from
:func:`txlab.coalescing.coalescing`, no GPU): the line's global accesses' 32-byte sectors per L1
request, as Nsight Compute's source view counts them, with the share of those sectors' bytes the
lanes use when below 100% (``4.0 25%``); ``?`` when an access's addresses cannot be known (a
gather, a TMA copy), with the reason in the tooltip and the info bar (``source-coalescing``).

The SASS pane has a column with each instruction's scheduling control field in the notation of
SASS assemblers (``B--2---:R-:W1:Y:S05``: wait mask, read barrier, write barrier, yield, stall
cycles; :mod:`txlab.sass` decodes it). Clicking an instruction selects it (``instruction``, its
index in the SASS pane): the instructions that set the dependency barriers it waits on (its
producers) and those that wait on the barriers it sets (its consumers) are highlighted, and the
info bar spells the fields and links out.

With a profile (``SourceView(compiled, profile=txlab.profile(...))``) every pane gets a heat
column: TVMScript lines from ``Profile.heat()``, CUDA lines from the samples at each instruction's
CUDA line, PTX lines through their CUDA line, SASS instructions from the profile's per-offset
samples (only when the profile's SASS is this build's: opcodes compared offset by offset). A
profile saved before its source file changed around an unchanged kernel is placed through this
build's line map (``Profile.for_build``); one of different SASS shows no line heat. With
only a ``heat`` dict (``{user_line: {"samples", "stalls"}}``) the CUDA and PTX panes show the heat
of the user line each row belongs to. The five hottest lines are listed above the panes; clicking
one pins it and scrolls every pane there.

The payload is one JSON document (``data``). The front end builds every row once and keeps an
index from user line to rows, so a highlight touches only the rows it changes.
``data-testid``: ``source-pane-user``, ``source-pane-cuda``, ``source-pane-ptx``,
``source-pane-sass``, ``source-info``, ``source-code-only`` (hide user lines without code),
``source-control`` (show the control column), ``source-hot`` (the hot-line list) and
``source-hot-line`` (one entry), ``source-stats`` (hidden: render and highlight timings, JSON).
"""

from __future__ import annotations

import traitlets

from txlab.sass.opcodes import opcode_of
from txlab.sourcemap.preamble import preamble_lines
from txlab.views._base import View, json_bytes


#: the fields of a SASS row's ``control`` (``_controls`` gives them in this order); producers and
#: consumers are lists of ``[row, barrier, "w" | "r"]``
CONTROL_FIELDS = (
    "notation",
    "stall",
    "yield",
    "write_barrier",
    "read_barrier",
    "wait_mask",
    "reuse",
    "producers",
    "consumers",
)


def _clean_heat(heat) -> dict:
    out = {}
    for k, v in (heat or {}).items():
        try:
            out[int(k)] = {
                "samples": int(v.get("samples", 0)),
                "stalls": {str(a): int(b) for a, b in (v.get("stalls") or {}).items()},
            }
        except (TypeError, ValueError, AttributeError):
            continue
    return out


def _add(acc: dict, key, samples: int, stalls: dict) -> None:
    r = acc.setdefault(key, [0, {}])
    r[0] += int(samples)
    for s, n in (stalls or {}).items():
        r[1][s] = r[1].get(s, 0) + int(n)


def _controls(compiled, m) -> tuple[list | None, str | None]:
    """Per SASS row of the map: [notation, stall, yield, wr, rd, wait, reuse, producers, consumers]
    (producers/consumers: [[row, bar, kind], ...]), or (None, why not). The map's rows are the
    SASS records themselves (one listing), so row indices are the records' positions."""
    from txlab.sass import dependencies

    instrs = m.instructions
    if not any(ins.control is not None for ins in instrs):
        return None, "control bits unavailable: the disassembly has no instruction encodings"
    out: list = [None] * len(instrs)
    for i, (ins, d) in enumerate(zip(instrs, dependencies(instrs))):
        c = ins.control
        if c is not None:
            out[i] = [
                c.text(),
                c.stall,
                int(c.yield_),
                c.wr_bar,
                c.rd_bar,
                c.wait_mask,
                c.reuse,
                [[j, b, k] for j, b, k in d["producers"]],
                [[j, b, k] for j, b, k in d["consumers"]],
            ]
    return out, None


def _profile_heat(compiled, m, profile) -> dict:
    """Heat per pane row from a Profile's per-instruction samples (see the module docstring)."""
    out: dict = {"notes": []}
    ins = list(getattr(profile, "instructions", None) or [])
    if not ins:
        return out
    # SASS: by offset, when the profile's instruction at each offset is this build's
    kernels = {s.kernel for s in m.instructions}
    pk = getattr(profile, "kernel", None)
    kernel = pk if pk in kernels else (next(iter(kernels)) if len(kernels) == 1 else None)
    row_of = {s.offset: i for i, s in enumerate(m.instructions) if s.kernel == kernel}
    same = sum(
        1
        for r in ins
        if r.get("offset") in row_of
        and opcode_of(m.instructions[row_of[r["offset"]]].text) == opcode_of(r.get("sass") or "")
    )
    if kernel is not None and same >= 0.95 * len(ins):
        sass_h: dict = {}
        for r in ins:
            i = row_of.get(r.get("offset"))
            if i is not None and r.get("samples"):
                _add(sass_h, i, r["samples"], r.get("stalls"))
        out["sass"] = sass_h
    else:
        out["notes"].append(
            f"the profile's SASS is not this build's ({same} of {len(ins)} instructions agree): no per-instruction heat"
        )
    # CUDA: by each instruction's CUDA line, when the profiled CUDA is this build's
    cuda_lines = compiled.cuda_source.splitlines()
    if list(getattr(profile, "cuda_source", None) or []) == cuda_lines:
        cuda_h: dict = {}
        for r in ins:
            cl = r.get("cuda_line")
            if cl and 0 < cl <= len(cuda_lines) and r.get("samples"):
                _add(cuda_h, cl - 1, r["samples"], r.get("stalls"))
        out["cuda"] = cuda_h
        ptx_cuda = getattr(m, "ptx_cuda", None)
        if ptx_cuda:
            ptx_h: dict = {}
            for i, cl in enumerate(ptx_cuda):
                if cl and (cl - 1) in cuda_h:
                    s, st = cuda_h[cl - 1]
                    ptx_h[i] = [s, st]
            out["ptx"] = ptx_h
    else:
        out["notes"].append("the profiled CUDA differs from this build's: CUDA and PTX show their user line's heat")
    out["total"] = int(sum(r.get("samples", 0) for r in ins))
    return out


#: seconds the coalescing column's static walk may take before loops are followed once (a big
#: kernel's lines then read as partly unknown, never missing)
COALESCING_SECONDS = 4.0


def _coalescing(compiled) -> tuple[dict, str | None]:
    """``({user line: global-memory coalescing}, note)`` from :func:`txlab.coalescing.coalescing`
    (the static walk of the lowered kernel): per line, its accesses' sectors per request against
    the ideal, or ``status`` "unknown" / "partial" with the reasons."""
    from txlab import simt
    from txlab.coalescing import coalescing

    class Budget(simt.Limits):
        max_seconds = COALESCING_SECONDS

    try:
        report = coalescing(compiled, limits=Budget)
    except Exception as exc:  # noqa: BLE001 - the column is one analysis among many: say why it is empty
        return {}, f"global-memory coalescing not analysed: {type(exc).__name__}: {exc}"
    out = {}
    for line, v in report.by_line().items():
        out[str(line)] = {
            "status": v["status"],
            "accesses": v["accesses"],
            "unknown": v["unknown"],
            "reasons": sorted(set(v["reasons"])),
            "requests": v["requests"],
            "sectors": v["sectors"],
            "ideal_sectors": v["ideal_sectors"],
            "sectors_per_request": v["sectors_per_request"],
            "ideal_sectors_per_request": v["ideal_sectors_per_request"],
            "efficiency": v["ideal_sectors"] / v["sectors"] if v["sectors"] else None,
            "lanes_per_address": v["lanes_per_address"],
        }
    cut = [n for n in report.notes if "budget" in n or "stopped reporting" in n]
    return out, (
        f"global-memory coalescing (static walk): {cut[0]}; lines it marks '?' are partly unknown" if cut else None
    )


def payload(compiled, heat: dict | None = None, context: int = 2, profile=None) -> dict:
    m = compiled.source_map
    lines_with = m.lines()
    origin_lines = [o.user_line for o in m.origins if o.user_line]
    allu = sorted(set(lines_with) | set(origin_lines))
    first = max(1, (allu[0] if allu else 1) - context)
    last = min(len(m.user_source), (allu[-1] if allu else len(m.user_source)) + context)
    # a %%tirx cell: all of it; a file: the lines of this kernel (plus context)
    if m.user_file.startswith("<tirx-cell"):
        first, last = 1, len(m.user_source)
    per = m.per_line(live=True)  # live registers: nvdisasm --print-life-ranges (cached)
    # one row per SASS instruction; a column of the SASS pane is one more named key here
    sass = [
        {
            "text": s.text,
            "offset": s.offset,
            "user_line": s.user_line,
            "cls": s.cls,
            "kernel": s.kernel,
            "padding": s.padding,
        }
        for s in m.instructions
    ]
    for s, ins in zip(sass, m.instructions):
        if ins.live_registers is not None:
            s["live_registers"] = ins.live_registers
    controls, control_note = _controls(compiled, m)
    if controls is not None:
        for s, c in zip(sass, controls):
            if c is not None:
                s["control"] = dict(zip(CONTROL_FIELDS, c))
    heat_d = _clean_heat(heat)
    rows = _profile_heat(compiled, m, profile) if profile is not None else {"notes": []}
    total = rows.get("total") or sum(v["samples"] for v in heat_d.values())
    hot = []
    for ln, v in sorted(heat_d.items(), key=lambda kv: (-kv[1]["samples"], kv[0]))[:5]:
        if v["samples"] <= 0:
            break
        text = m.user_source[ln - 1].strip() if 0 < ln <= len(m.user_source) else ""
        top = sorted(v["stalls"].items(), key=lambda kv: -kv[1])[:3]
        hot.append(
            {
                "line": ln,
                "samples": v["samples"],
                "share": v["samples"] / total if total else 0.0,
                "text": text,
                "top": [[a, b] for a, b in top],
            }
        )
    notes = list(rows.get("notes", []))
    coalesced, coalescing_note = _coalescing(compiled)
    if coalescing_note:
        notes.append(coalescing_note)
    if control_note:
        notes.append(control_note)
    if m.live_registers_unknown:
        notes.append(m.live_registers_unknown)
    if m.spills():
        spill_lines = sorted(u for u, v in per.items() if v.get("local", {}).get("kind") == "spill")
        notes.append(
            "ptxas spilled registers to local memory"
            + (
                f": LDL/STL at line{'s' if len(spill_lines) > 1 else ''} {', '.join(map(str, spill_lines))}"
                if spill_lines
                else ""
            )
        )
    return {
        "name": compiled.name,
        "arch": compiled.arch,
        "file": m.user_file,
        "first": first,
        "user": m.user_source[first - 1 : last],
        "cuda": compiled.cuda_source.splitlines(),
        "cuda_user": m.cuda_user,
        "cuda_preamble": preamble_lines(compiled.cuda_source, m.cuda_user),
        "ptx": compiled.ptx.splitlines(),
        "ptx_user": m.ptx_user,
        "sass": sass,
        "lines": {str(k): v for k, v in per.items()},
        "heat": {str(k): v for k, v in heat_d.items()},
        "heat_rows": {p: {str(i): v for i, v in rows[p].items()} for p in ("cuda", "ptx", "sass") if p in rows},
        "total_samples": total,
        "hot": hot,
        "notes": notes,
        "exact": m.exact,
        "live": any("live_registers" in x for x in sass),
        "coalescing": coalesced,
    }


class SourceView(View):
    """``SourceView(compiled, profile=None, heat=None)``: ``profile`` a :class:`txlab.Profile`
    of this kernel (heat in all four panes, SASS per instruction), or ``heat`` a per-line dict
    ``{user_line: {"samples": n, "stalls": {reason: n}}}`` (``Profile.heat()``)."""

    _bundle = "source"
    selected = traitlets.Int(0).tag(sync=True)
    #: the selected SASS instruction (its index in the SASS pane), -1 when none
    instruction = traitlets.Int(-1).tag(sync=True)
    height = traitlets.Int(460).tag(sync=True)

    def __init__(self, compiled, profile=None, heat: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        compiled = _compiled(compiled)
        notes = []
        if profile is not None and hasattr(profile, "for_build"):
            profile, note = _profile_for(compiled, profile)
            notes += [note] if note else []
        if heat is None and profile is not None:
            get = getattr(profile, "heat", None)
            heat = get() if callable(get) else get
        self.compiled = compiled
        self.profile = profile
        d = payload(compiled, heat, profile=profile)
        d["notes"] = notes + d["notes"]
        self.data = json_bytes(d)


def _compiled(kernel):
    """A ``txlab.Compiled`` for the view: one as given, a ``@T.prim_func`` / IRModule compiled (txlab.compile, the
    default arch, cached), anything else an InputError saying what the view takes."""
    import tvm

    from txlab.compiler import Compiled, compile
    from txlab.errors import InputError

    if isinstance(kernel, Compiled) or hasattr(kernel, "source_map"):
        return kernel
    if isinstance(kernel, (tvm.tirx.PrimFunc, tvm.IRModule)):
        return compile(kernel, progress=lambda s: None)
    raise InputError(
        f"SourceView takes a txlab.Compiled (a %%tirx cell's kernel, txlab.compile(...)) or a @T.prim_func, not "
        f"{type(kernel).__name__}",
        param="compiled",
    )


def _profile_for(compiled, profile):
    """(profile, note): the profile as this build's lines place it. A profile saved before the source
    file changed around an unchanged kernel is re-attributed through this build's line map; one whose
    SASS differs keeps its per-instruction data but loses its line heat (it would land on wrong lines)."""
    if getattr(profile, "line_kind", None) != "tvmscript":
        return profile, None
    try:
        moved = profile.for_build(compiled)
    except ValueError as exc:
        import dataclasses

        return (
            dataclasses.replace(profile, instructions=[{**r, "user_line": None} for r in profile.instructions]),
            f"no line heat: the source changed since this profile and {exc}",
        )
    if moved is profile:
        return profile, None
    return moved, "the source file changed since this profile; its samples are placed through this build's line map"
