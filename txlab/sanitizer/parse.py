"""Reading compute-sanitizer's text report (its documented format, checked on real 2025.3.1 output)
and its ``--xml --save`` record into :class:`Finding` objects."""

from __future__ import annotations

import re

from txlab.sanitizer.report import Finding

# =============================================================================================
# parsing compute-sanitizer's text report
_PREFIX = re.compile(r"^=========(?P<rest>.*)$")
_LOC = r"(?P<func>.+?)(?:\+|:)0x(?P<pc>[0-9a-fA-F]+)(?: in (?P<file>.+?):(?P<line>\d+))?"
_AT = re.compile(r"^at " + _LOC + r"\s*$")
_AT_PC_ONLY = re.compile(r"^at 0x(?P<pc>[0-9a-fA-F]+)(?: in (?P<file>.+?):(?P<line>\d+))?\s*$")
_BY = re.compile(r"by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)")
_ADDR = re.compile(r"^(?:Address|Access to) 0x(?P<addr>[0-9a-fA-F]+)(?P<rest>.*)$")
_NEAREST = re.compile(
    r"and is (?P<n>[\d,]+) bytes (?P<dir>after|before) the nearest allocation at "
    r"0x(?P<base>[0-9a-fA-F]+) of size (?P<size>[\d,]+) bytes"
)
_INSIDE = re.compile(r"and is inside the nearest allocation at 0x(?P<base>[0-9a-fA-F]+) of size (?P<size>[\d,]+)")
_DEVFRAME = re.compile(r"^Device Frame:\s*" + _LOC + r"\s*$")
_INVALID = re.compile(
    r"^(?:Potential )?Invalid (?P<space>__\w+__ )?(?P<op>read|write|atomic)s? of size (?P<size>\d+) bytes?"
)
_UNINIT = re.compile(r"^Uninitialized (?P<space>__\w+__) memory read of size (?P<size>\d+) bytes?")
_RACE = re.compile(r"^(?P<sev>\w+): Race reported between (?P<acc>Read|Write) access at " + _LOC + r"\s*$")
_RACE_AND = re.compile(r"^and (?P<acc>Read|Write) access at " + _LOC + r"(?: \[(?P<n>[\d,]+) hazards?\])?\s*$")
_HAZARD = re.compile(
    r"^(?P<sev>\w+): (?:\([^)]*\) )?Potential (?P<type>RAW|WAR|WAW) hazard detected at "
    r"(?P<space>__\w+__) 0x(?P<addr>[0-9a-fA-F]+) in block \((\d+),(\d+),(\d+)\)"
)
_HAZ_THREAD = re.compile(r"^(?P<acc>Read|Write) Thread \((\d+),(\d+),(\d+)\) at " + _LOC + r"\s*$")
_BARRIER = re.compile(r"^Barrier error detected\.?\s*(?P<what>.*?)\.?\s*$")
_SUMMARY = re.compile(r"^(?:ERROR SUMMARY|RACECHECK SUMMARY): (?P<n>\d+)(?P<rest>.*)$")
_API = re.compile(r"^Program hit (?P<err>\w+)")


def _blocks(text: str):
    """(headline, [detail lines]) for each report in a compute-sanitizer text log."""
    blocks, cur = [], None
    for raw in text.splitlines():
        m = _PREFIX.match(raw)
        if not m:
            continue
        rest = m.group("rest")
        body = rest.strip()
        if not body:
            cur = None
            continue
        indent = len(rest) - len(rest.lstrip(" "))
        if indent <= 1 or cur is None:
            cur = (body, [])
            blocks.append(cur)
        else:
            cur[1].append(body)
    return blocks


def _loc(m) -> dict:
    d = {
        "function": m.group("func").strip() if "func" in m.groupdict() and m.group("func") else None,
        "sass_offset": int(m.group("pc"), 16),
    }
    if m.group("file"):
        d["cuda_file"] = m.group("file").strip()
        d["cuda_line"] = int(m.group("line"))
    return d


def _xyz(groups) -> tuple:
    return tuple(int(g) for g in groups)


def parse_text(text: str, tool: str) -> tuple[list, dict]:
    """Findings in a compute-sanitizer text log, and facts about the run (error count, notes)."""
    findings: list[Finding] = []
    facts: dict = {"errors": None, "notes": []}
    races: list[Finding] = []
    hazards: list[Finding] = []
    for head, details in _blocks(text):
        m = _SUMMARY.match(head)
        if m:
            if "not printed" in m.group("rest"):
                facts["notes"].append(head)
            elif head.startswith("ERROR SUMMARY"):
                facts["errors"] = int(m.group("n"))
            continue
        if head.startswith("COMPUTE-SANITIZER") or head.startswith("LEAK SUMMARY"):
            continue
        f = _parse_block(head, details, tool)
        if f is None:
            if re.match(r"^(Error|Internal Sanitizer Error|Target application|Warning)", head):
                facts["notes"].append(head)
            continue
        if f.kind == "shared_race" and f.other is not None and f.thread is None:
            races.append(f)
        elif f.kind == "shared_race":
            hazards.append(f)
        else:
            findings.append(f)
    findings.extend(_merge_races(races, hazards))
    return _dedupe(findings), facts


def _parse_block(head, details, tool) -> Finding | None:
    m = _INVALID.match(head)
    if m:
        op = m.group("op")
        space = (m.group("space") or "").strip().strip("_") or "generic"
        f = Finding(tool, "", head, access=op if op != "atomic" else "write", space=space, size=int(m.group("size")))
        _fill_common(f, details)
        misaligned = any("misaligned" in d for d in details)
        f.kind = ("misaligned_" if misaligned else "out_of_bounds_") + ("write" if f.access == "write" else "read")
        return f
    m = _UNINIT.match(head)
    if m:
        f = Finding(
            tool,
            "uninitialized_read",
            head,
            access="read",
            space=m.group("space").strip("_"),
            size=int(m.group("size")),
        )
        _fill_common(f, details)
        return f
    m = _BARRIER.match(head)
    if m:
        what = m.group("what")
        kind = "divergent_barrier" if "ivergent" in what else "invalid_barrier" if "nvalid" in what else "barrier_error"
        f = Finding(tool, kind, head)
        f.space = "warp" if "warp" in what else "block" if "block" in what else None
        _fill_common(f, details)
        return f
    m = _RACE.match(head)
    if m:
        f = _shared_race(tool, head, m, access=m.group("acc").lower(), space="shared", **_loc(m))
        for d in details:
            a = _RACE_AND.match(d)
            if a:
                other = {"access": a.group("acc").lower(), **_loc(a)}
                if a.group("n"):
                    f.count = int(a.group("n").replace(",", ""))
                if f.other is None:
                    f.other = other
        if f.other is not None:
            f.hazard = _hazard_type(f.access, f.other["access"])
        return f
    m = _HAZARD.match(head)
    if m:
        f = _shared_race(
            tool,
            head,
            m,
            hazard=m.group("type"),
            space=m.group("space").strip("_"),
            address=int(m.group("addr"), 16),
            block=_xyz(m.groups()[4:7]),
            size=1,
        )
        threads = [t for t in (_HAZ_THREAD.match(d) for d in details) if t]
        if threads:
            t0 = threads[0]
            f.access = t0.group("acc").lower()
            f.thread = _xyz(t0.groups()[1:4])
            for k, v in _loc(t0).items():
                setattr(f, k, v)
        if len(threads) > 1:
            t1 = threads[1]
            f.other = {"access": t1.group("acc").lower(), "thread": list(_xyz(t1.groups()[1:4])), **_loc(t1)}
        f.detail = [d for d in details if d.startswith("Current Value")]
        return f
    m = _API.match(head)
    if m:
        f = Finding(tool, "api_error", head)
        _fill_common(f, details)
        return f
    if head.startswith("Malloc/Free error"):
        f = Finding(tool, "malloc_free", head)
        _fill_common(f, details)
        return f
    if head.startswith("Leaked "):
        return Finding(tool, "leak", head, severity="warning")
    if details and any(_AT.match(d) or _BY.search(d) for d in details):
        f = Finding(tool, "other", head)
        _fill_common(f, details)
        return f
    return None


def _fill_common(f: Finding, details):
    frames = []
    for d in details:
        m = _AT_PC_ONLY.match(d)
        if m and f.sass_offset is None:
            f.sass_offset = int(m.group("pc"), 16)
            if m.group("file"):
                f.cuda_file, f.cuda_line = m.group("file"), int(m.group("line"))
            continue
        m = _AT.match(d)
        if m and f.sass_offset is None:
            for k, v in _loc(m).items():
                setattr(f, k, v)
            continue
        m = _DEVFRAME.match(d)
        if m:
            frames.append(_loc(m))
            continue
        m = _BY.search(d)
        if m and f.thread is None:
            f.thread = _xyz(m.groups()[:3])
            f.block = _xyz(m.groups()[3:6])
            continue
        m = _ADDR.match(d)
        if m and f.address is None:
            f.address = int(m.group("addr"), 16)
            continue
        m = _NEAREST.match(d) or _INSIDE.match(d)
        if m:
            f.detail.append(d)
    if frames:
        f.other = {"frames": frames} if f.other is None else f.other
    if not f.detail:
        f.detail = [d for d in details if not d.startswith(("Saved host backtrace", "Host Frame"))][:6]


def _hazard_type(first: str, second: str) -> str:
    return {("write", "read"): "RAW", ("read", "write"): "WAR", ("write", "write"): "WAW"}.get((first, second), "RAW")


def _merge_races(races, hazards):
    """One finding per race (analysis report), with thread, CTA and address from a hazard report at
    the same two instructions; hazards no analysis report covers are kept, one per pair of
    instructions."""
    out = []
    used = set()
    for r in races:
        pcs = {r.sass_offset, (r.other or {}).get("sass_offset")}
        for i, h in enumerate(hazards):
            if {h.sass_offset, (h.other or {}).get("sass_offset")} == pcs:
                used.add(i)
                if r.thread is None:
                    r.thread, r.block, r.address = h.thread, h.block, h.address
                    r.hazard = h.hazard or r.hazard
                    if h.other and r.other is not None and "thread" in h.other:
                        r.other["thread"] = h.other["thread"]
        out.append(r)
    seen = {}
    for i, h in enumerate(hazards):
        if i in used:
            continue
        key = (h.hazard, h.sass_offset, (h.other or {}).get("sass_offset"))
        if key in seen:
            seen[key].count += 1
            continue
        seen[key] = h
        out.append(h)
    return out


def _dedupe(findings):
    """Reports of the same kind at the same instruction become one finding with a count."""
    out, seen = [], {}
    for f in findings:
        key = (
            f.tool,
            f.kind,
            f.sass_offset,
            f.cuda_line,
            f.hazard,
            (f.other or {}).get("sass_offset") if isinstance(f.other, dict) else None,
        )
        if f.sass_offset is not None and key in seen:
            seen[key].count += f.count
            continue
        seen[key] = f
        out.append(f)
    return out


def parse_xml(xml_text: str, tool: str) -> list:
    """Findings from the XML record ``--xml --save`` writes, read generically: each ``record``'s
    kind and text, and any thread/block/address/pc/file/line values it carries."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return []
    out = []
    for rec in root.iter():
        if rec.tag.lower() != "record":
            continue
        kind_el = _child(rec, "kind")
        texts = [t.text.strip() for t in rec.iter() if t.tag.lower() == "text" and t.text and t.text.strip()]
        head = texts[0] if texts else (kind_el.text.strip() if kind_el is not None and kind_el.text else "")
        if not head or (kind_el is not None and (kind_el.text or "").strip().lower() == "api"):
            continue
        f = _parse_block(head, [], tool) or Finding(tool, "other", head)
        vals = {t.tag.lower(): (t.text or "").strip() for t in rec.iter() if len(t) == 0}
        for el in rec.iter():
            tag = el.tag.lower()
            xyz = [_child(el, c) for c in ("x", "y", "z")]
            if all(c is not None for c in xyz):
                v = tuple(_int(c.text) for c in xyz)
                if "thread" in tag and f.thread is None:
                    f.thread = v
                elif "block" in tag and f.block is None:
                    f.block = v
        for tag, v in vals.items():
            if f.sass_offset is None and tag in ("pc", "offset", "pcoffset", "functionoffset"):
                f.sass_offset = _int(v)
            elif f.address is None and tag in ("address", "addr"):
                f.address = _int(v)
            elif f.cuda_line is None and tag in ("line", "linenumber"):
                f.cuda_line = _int(v)
            elif f.cuda_file is None and tag in ("file", "filename"):
                f.cuda_file = v or None
            elif f.size is None and tag == "size":
                f.size = _int(v)
        out.append(f)
    return _dedupe(out)


def _child(el, name):
    for c in el:
        if c.tag.lower() == name:
            return c
    return None


def _int(s):
    if s is None:
        return None
    s = str(s).strip().replace(",", "")
    try:
        return int(s, 16) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None


def _shared_race(tool, head, m, **fields) -> Finding:
    """A racecheck ``shared_race`` finding from its header line ``head`` (``m``: the header's match,
    whose ``sev`` group is the severity)."""
    return Finding(tool, "shared_race", head, severity=m.group("sev").lower(), **fields)
