"""NVIDIA compute-sanitizer on one kernel launch, findings at the user's line.

    report = txlab.sanitize(compiled, A, B)                      # memcheck, racecheck, synccheck, initcheck
    report.ok, report.findings[0].lineno, report.findings[0].explanation
    report.save("run.sanitizer.json"); txlab.sanitizer.load("run.sanitizer.json")

How it runs: the kernel's executable is exported as a library (TVM's host code + a cubin built with
``-lineinfo``, so the sanitizer can name a CUDA line for each SASS offset), and for each tool a fresh
process ``compute-sanitizer --tool X ... python -m txlab.sanitize_runner job.json`` loads that
library with TVM's runtime only, copies the arguments into exactly-sized device buffers
(``tvm.runtime.empty``: one cudaMalloc each, no caching allocator, so an access past a buffer's end
is outside any allocation) and launches once. A kernel that hangs is killed after ``timeout_s``
(:class:`txlab.KernelFault` ``kind="timeout"``); the notebook process never touches the GPU.

Findings are parsed from the sanitizer's text report (its documented format; the XML record saved
with ``--xml --save`` is kept alongside and read when the text names nothing). Each finding is
typed (:class:`Finding`): tool, kind, the user's line (through ``Compiled.source_map`` when the
compiled cubin carries line info, else through the CUDA line the sanitizer prints), SASS offset,
thread and CTA, address and size, and one sentence saying what happened.
"""
from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from txlab.errors import TxlabError

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
FORMAT = "txlab.sanitizer/1"
#: the per-tool options txlab passes (see ``compute-sanitizer --help``)
TOOL_FLAGS = {
    # cuda-python probes driver entry points with cuGetProcAddress, which memcheck would report
    "memcheck": ["--report-api-errors", "no", "--padding", "256"],
    # analysis reports name both lines of a race (one line per race, however many hazards); the
    # threads, CTA and address come from a second, short hazard-mode run when there is a race
    "racecheck": ["--racecheck-report", "analysis"],
    "synccheck": [],
    # shared memory too: global buffers are always initialised (the arguments are uploaded)
    "initcheck": ["--initcheck-address-space", "all"],
}
#: hazard-mode options of the second racecheck run (threads, CTA and address of each race)
RACECHECK_HAZARD_FLAGS = ["--racecheck-report", "hazard", "--print-limit", "64"]
#: options for every tool: device backtraces only (inlined helpers' call sites; host frames are
#: kilobytes of TVM/Python internals per report)
COMMON_FLAGS = ["--show-backtrace", "device"]
MAX_LOG_CHARS = 60_000


class SanitizerError(TxlabError):
    """compute-sanitizer is missing or could not run the kernel; the message says why and what to do."""


# =============================================================================================
# model
@dataclass
class Finding:
    """One problem compute-sanitizer reported, typed.

    ``kind``: ``out_of_bounds_write``/``out_of_bounds_read`` (``space`` says global/shared/local),
    ``misaligned_write``/``misaligned_read``, ``shared_race`` (``hazard`` RAW/WAR/WAW),
    ``divergent_barrier`` (threads of one warp, or of one CTA, disagree on reaching a barrier),
    ``invalid_barrier``, ``uninitialized_read``, ``malloc_free``, ``api_error``, ``leak`` or
    ``other``. ``lineno`` is the user's line; ``cuda_line`` the line of the generated CUDA C;
    ``sass_offset`` the instruction's byte offset in the kernel. ``other`` holds the second access
    of a race (same fields). ``count``: how many reports this finding stands for."""

    tool: str
    kind: str
    message: str
    explanation: str = ""
    severity: str = "error"
    lineno: int | None = None
    source: str | None = None
    cuda_line: int | None = None
    cuda_file: str | None = None
    sass_offset: int | None = None
    function: str | None = None
    thread: tuple | None = None
    block: tuple | None = None
    address: int | None = None
    size: int | None = None
    access: str | None = None
    space: str | None = None
    hazard: str | None = None
    other: dict | None = None
    count: int = 1
    detail: list = field(default_factory=list)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("thread", "block"):
            if d[k] is not None:
                d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"finding has unknown fields {sorted(unknown)}")
        kw = dict(d)
        for k in ("thread", "block"):
            if kw.get(k) is not None:
                kw[k] = tuple(int(x) for x in kw[k])
        return cls(**kw)

    def where(self) -> str:
        parts = []
        if self.lineno is not None:
            parts.append(f"line {self.lineno}")
        if self.cuda_line is not None:
            parts.append(f"CUDA line {self.cuda_line}")
        if self.sass_offset is not None:
            parts.append(f"SASS +{self.sass_offset:#x}")
        return ", ".join(parts) or "location unknown"

    def __str__(self) -> str:
        return f"[{self.tool}] {self.kind} at {self.where()}: {self.explanation or self.message}"


@dataclass
class SanitizerReport:
    """What compute-sanitizer found in one launch of a kernel, per tool.

    ``findings``: :class:`Finding` rows; ``runs``: per tool, how the run went (``status`` ``ok``,
    ``fault`` (the launch failed, usually because of the error reported), ``failed`` (the sanitizer
    could not run) with ``seconds``, ``errors`` (the sanitizer's ERROR SUMMARY) and ``notes``);
    ``lines``: the user's source text of every line named. ``ok``: every tool ran and found nothing."""

    kernel: str
    tools: list
    findings: list
    runs: dict
    arch: str | None = None
    device: str | None = None
    sanitizer: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)
    line_map: str = ""             # "source_map" (srcmap) or "cuda" (CUDA lines matched to the IR)
    created: str = ""
    key: str = ""
    raw: dict = field(default_factory=dict)   # per tool: {"text": ..., "xml": ...} (truncated)

    @property
    def ok(self) -> bool:
        return not self.findings and all(r.get("status") in ("ok",) for r in self.runs.values())

    def by_tool(self, tool: str) -> list:
        return [f for f in self.findings if f.tool == tool]

    def at_line(self, lineno: int) -> list:
        return [f for f in self.findings if f.lineno == lineno]

    # ---- serialisation ------------------------------------------------------------------------
    def to_dict(self, *, raw: bool = True) -> dict:
        d = {"format": FORMAT, "kernel": self.kernel, "tools": list(self.tools),
             "findings": [f.to_dict() for f in self.findings], "runs": self.runs, "arch": self.arch,
             "device": self.device, "sanitizer": self.sanitizer,
             "lines": {str(k): v for k, v in self.lines.items()}, "line_map": self.line_map,
             "created": self.created, "key": self.key, "ok": self.ok}
        if raw:
            d["raw"] = self.raw
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SanitizerReport":
        _validate(d)
        return cls(kernel=d["kernel"], tools=list(d["tools"]),
                   findings=[Finding.from_dict(f) for f in d["findings"]], runs=d["runs"],
                   arch=d.get("arch"), device=d.get("device"), sanitizer=d.get("sanitizer") or {},
                   lines={int(k): v for k, v in (d.get("lines") or {}).items()},
                   line_map=d.get("line_map", ""), created=d.get("created", ""), key=d.get("key", ""),
                   raw=d.get("raw") or {})

    def save(self, path) -> Path:
        """Write the report as JSON with a SHA-256 of its content (checked by :func:`load`)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(_sealed(self), sort_keys=True, indent=1))
        os.replace(tmp, path)
        return path

    # ---- display ------------------------------------------------------------------------------
    def summary(self) -> str:
        head = f"{self.kernel}: compute-sanitizer ({', '.join(self.tools)})"
        if self.device:
            head += f" on {self.device}"
        if self.ok:
            return head + ": clean, no finding (every tool ran the launch to completion)."
        lines = [head + f": {len(self.findings)} finding(s)"]
        for f in self.findings:
            lines.append(f"  {f}")
            if f.lineno is not None and self.lines.get(f.lineno):
                lines.append(f"      {f.lineno} | {self.lines[f.lineno]}")
        for tool, r in self.runs.items():
            if r.get("status") != "ok":
                lines.append(f"  {tool}: {r.get('status')}: {r.get('message', '')}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (f"<SanitizerReport {self.kernel}: {len(self.findings)} finding(s), "
                f"tools {', '.join(self.tools)}{', clean' if self.ok else ''}>")

    def _repr_pretty_(self, p, cycle):  # pragma: no cover - IPython hook
        p.text(self.summary())

    def _repr_html_(self) -> str:
        e = html.escape
        head = (f"<b>{e(self.kernel)}</b>: compute-sanitizer ({e(', '.join(self.tools))})"
                + (f" on {e(self.device)}" if self.device else ""))
        if self.ok:
            return (f"<div class='txlab-sanitizer'>{head}: <span style='color:#18794e'>clean</span> — "
                    "no finding; every tool ran the launch to completion.</div>")
        rows = []
        for f in self.findings:
            thread = f"{tuple(f.thread)} in CTA {tuple(f.block)}" if f.thread and f.block else (
                str(tuple(f.thread)) if f.thread else "")
            src = self.lines.get(f.lineno) if f.lineno is not None else None
            rows.append("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"
                        "<tr><td></td><td colspan=5><code>{}</code><br>{}</td></tr>".format(
                            e(f.tool), e(f.kind + (f" ({f.hazard})" if f.hazard else "")),
                            e(str(f.lineno) if f.lineno is not None else "?"),
                            e(f"{f.sass_offset:#x}" if f.sass_offset is not None else ""), e(thread),
                            e(f"{f.address:#x}" + (f" ({f.size} B)" if f.size else "") if f.address is not None
                              else ""),
                            e(f"{f.lineno} | {src}" if src else f.where()), e(f.explanation or f.message)))
        runs = "".join(f"<div>{e(t)}: {e(str(r.get('status')))} {e(r.get('message', '') or '')}</div>"
                       for t, r in self.runs.items() if r.get("status") != "ok")
        return ("<div class='txlab-sanitizer'>{}: {} finding(s)<table><tr><th>tool</th><th>kind</th>"
                "<th>line</th><th>SASS</th><th>thread</th><th>address</th></tr>{}</table>{}</div>"
                ).format(head, len(self.findings), "".join(rows), runs)


def load(path) -> SanitizerReport:
    """Read a report written by :meth:`SanitizerReport.save`; verifies its checksum and fields."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a sanitizer report ({exc})") from None
    return _unseal(doc, str(path))


def _sealed(report: "SanitizerReport") -> dict:
    body = report.to_dict()
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "report": body}


def _unseal(doc, where: str) -> "SanitizerReport":
    if not isinstance(doc, dict) or "report" not in doc or "sha256" not in doc:
        raise ValueError(f"{where}: not a txlab sanitizer report (no 'report'/'sha256')")
    body = doc["report"]
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    if hashlib.sha256(text.encode()).hexdigest() != doc["sha256"]:
        raise ValueError(f"{where}: checksum mismatch: the report was modified or truncated")
    return SanitizerReport.from_dict(body)


def save_bundle(reports: dict, path, **meta) -> Path:
    """Several reports ``{name: SanitizerReport}`` in one JSON file, each sealed with its SHA-256."""
    doc = {"format": FORMAT + "+bundle", "meta": meta,
           "reports": {name: _sealed(r) for name, r in reports.items()}}
    path = Path(path)
    path.write_text(json.dumps(doc, sort_keys=True, indent=1))
    return path


def load_bundle(path) -> dict:
    """``{name: SanitizerReport}`` from :func:`save_bundle`'s file, every report verified."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a sanitizer bundle ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT + "+bundle":
        raise ValueError(f"{path}: not a {FORMAT}+bundle file")
    return {name: _unseal(d, f"{path}[{name}]") for name, d in doc["reports"].items()}


def recorded(name: str | None = None):
    """Reports recorded on an H200 by ``scripts/sanitize_h200.py`` and shipped in txlab/data
    (``sanitizer_reports.json``): one by name (``"oob_write"``, ``"oob_write_fixed"``, ...), or all."""
    from importlib import resources

    path = resources.files("txlab") / "data" / "sanitizer_reports.json"
    if not path.is_file():
        raise FileNotFoundError("no recorded sanitizer reports ship with this txlab (run "
                                "scripts/sanitize_h200.py on a GPU host and copy sanitizer_reports.json "
                                "into txlab/data)")
    reports = load_bundle(path)
    if name is None:
        return reports
    if name not in reports:
        raise KeyError(f"no recorded report {name!r}; have {sorted(reports)}")
    return reports[name]


def _validate(d):
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} report (format={d.get('format') if isinstance(d, dict) else None!r})")
    for k, t in (("kernel", str), ("tools", list), ("findings", list), ("runs", dict)):
        if not isinstance(d.get(k), t):
            raise ValueError(f"report field {k!r} must be a {t.__name__}")
    for f in d["findings"]:
        if not isinstance(f, dict) or not isinstance(f.get("tool"), str) or not isinstance(f.get("kind"), str):
            raise ValueError("every finding needs a 'tool' and a 'kind'")
        for k in ("lineno", "cuda_line", "sass_offset", "address", "size", "count"):
            if f.get(k) is not None and not isinstance(f[k], int):
                raise ValueError(f"finding field {k!r} must be an int, got {f[k]!r}")


# =============================================================================================
# parsing compute-sanitizer's text report
_PREFIX = re.compile(r"^=========(?P<rest>.*)$")
_LOC = r"(?P<func>.+?)(?:\+|:)0x(?P<pc>[0-9a-fA-F]+)(?: in (?P<file>.+?):(?P<line>\d+))?"
_AT = re.compile(r"^at " + _LOC + r"\s*$")
_AT_PC_ONLY = re.compile(r"^at 0x(?P<pc>[0-9a-fA-F]+)(?: in (?P<file>.+?):(?P<line>\d+))?\s*$")
_BY = re.compile(r"by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)")
_ADDR = re.compile(r"^(?:Address|Access to) 0x(?P<addr>[0-9a-fA-F]+)(?P<rest>.*)$")
_NEAREST = re.compile(r"and is (?P<n>[\d,]+) bytes (?P<dir>after|before) the nearest allocation at "
                      r"0x(?P<base>[0-9a-fA-F]+) of size (?P<size>[\d,]+) bytes")
_INSIDE = re.compile(r"and is inside the nearest allocation at 0x(?P<base>[0-9a-fA-F]+) of size (?P<size>[\d,]+)")
_DEVFRAME = re.compile(r"^Device Frame:\s*" + _LOC + r"\s*$")
_INVALID = re.compile(r"^(?:Potential )?Invalid (?P<space>__\w+__ )?(?P<op>read|write|atomic)s? of size (?P<size>\d+) bytes?")
_UNINIT = re.compile(r"^Uninitialized (?P<space>__\w+__) memory read of size (?P<size>\d+) bytes?")
_RACE = re.compile(r"^(?P<sev>\w+): Race reported between (?P<acc>Read|Write) access at " + _LOC + r"\s*$")
_RACE_AND = re.compile(r"^and (?P<acc>Read|Write) access at " + _LOC + r"(?: \[(?P<n>[\d,]+) hazards?\])?\s*$")
_HAZARD = re.compile(r"^(?P<sev>\w+): (?:\([^)]*\) )?Potential (?P<type>RAW|WAR|WAW) hazard detected at "
                     r"(?P<space>__\w+__) 0x(?P<addr>[0-9a-fA-F]+) in block \((\d+),(\d+),(\d+)\)")
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
    d = {"function": m.group("func").strip() if "func" in m.groupdict() and m.group("func") else None,
         "sass_offset": int(m.group("pc"), 16)}
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
        f = Finding(tool, "", head, access=op if op != "atomic" else "write", space=space,
                    size=int(m.group("size")))
        _fill_common(f, details)
        misaligned = any("misaligned" in d for d in details)
        f.kind = (("misaligned_" if misaligned else "out_of_bounds_") + ("write" if f.access == "write" else "read"))
        return f
    m = _UNINIT.match(head)
    if m:
        f = Finding(tool, "uninitialized_read", head, access="read",
                    space=m.group("space").strip("_"), size=int(m.group("size")))
        _fill_common(f, details)
        return f
    m = _BARRIER.match(head)
    if m:
        what = m.group("what")
        kind = ("divergent_barrier" if "ivergent" in what else
                "invalid_barrier" if "nvalid" in what else "barrier_error")
        f = Finding(tool, kind, head)
        f.space = "warp" if "warp" in what else "block" if "block" in what else None
        _fill_common(f, details)
        return f
    m = _RACE.match(head)
    if m:
        f = Finding(tool, "shared_race", head, severity=m.group("sev").lower(), access=m.group("acc").lower(),
                    space="shared", **_loc(m))
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
        f = Finding(tool, "shared_race", head, severity=m.group("sev").lower(), hazard=m.group("type"),
                    space=m.group("space").strip("_"), address=int(m.group("addr"), 16),
                    block=_xyz(m.groups()[4:7]), size=1)
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
    return {("write", "read"): "RAW", ("read", "write"): "WAR", ("write", "write"): "WAW"}.get(
        (first, second), "RAW")


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
        key = (f.tool, f.kind, f.sass_offset, f.cuda_line, f.hazard,
               (f.other or {}).get("sass_offset") if isinstance(f.other, dict) else None)
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


# =============================================================================================
# explanations
def explain(f: Finding) -> str:
    """One sentence saying what happened and where to look."""
    who = (f"thread {tuple(f.thread)} of CTA {tuple(f.block)}" if f.thread and f.block else "a thread")
    size = f"{f.size} byte{'s' if f.size != 1 else ''}" if f.size else "some bytes"
    space = {"global": "global", "shared": "shared", "local": "local"}.get(f.space or "", f.space or "")
    near = next((d for d in f.detail if "nearest allocation" in d), "")
    m = _NEAREST.search(near)
    if f.kind in ("out_of_bounds_write", "out_of_bounds_read"):
        verb = "wrote" if f.kind.endswith("write") else "read"
        where = ""
        if m:
            n = int(m.group("n").replace(",", ""))
            where = (f", {n} bytes {m.group('dir')} the {int(m.group('size').replace(',', ''))}-byte "
                     "buffer nearest to it")
        addr = f" at {f.address:#x}" if f.address is not None else ""
        return (f"{who.capitalize()} {verb} {size} of {space} memory{addr} outside every allocation"
                f"{where}: an index on this line runs past its buffer (check the bound or the guard).")
    if f.kind.startswith("misaligned"):
        return (f"{who.capitalize()} made a {size} {space} access at an address that is not a multiple of "
                f"{f.size or 'its'} bytes: a vector/wide access needs an aligned index.")
    if f.kind == "shared_race":
        o = f.other or {}
        other_line = o.get("lineno") or o.get("cuda_line")
        pair = {"RAW": "a write and a later read", "WAR": "a read and a later write",
                "WAW": "two writes"}.get(f.hazard or "", "two accesses")
        sync = ("__syncwarp/warp_sync" if (f.detail and "Warp Level" in f.message) else "a barrier (T.cuda.cta_sync())")
        return (f"Shared-memory race ({f.hazard or 'hazard'}): {pair} of the same shared address by different "
                f"threads with no synchronisation between them"
                + (f" (the other access is at line {other_line})" if other_line else "")
                + f"; put {sync} between them or give each thread its own address.")
    if f.kind == "divergent_barrier":
        scope = "one warp" if f.space == "warp" else "the CTA" if f.space == "block" else "a warp"
        return (f"Threads of {scope} disagree on reaching this barrier ({who} is one of them): a barrier "
                "inside a branch that does not evaluate the same for every thread; move it out of the branch.")
    if f.kind == "invalid_barrier":
        return (f"A barrier was called with invalid arguments ({who}): e.g. a __syncwarp mask that does not "
                "include the calling thread.")
    if f.kind == "uninitialized_read":
        return (f"{who.capitalize()} read {size} of {space} memory that nothing wrote before: initialise it "
                "(or synchronise after the writes) before this read.")
    if f.kind == "api_error":
        return "A CUDA API call failed during the run (see the message)."
    if f.kind == "malloc_free":
        return "A device-side malloc/free error (double free or an invalid pointer)."
    if f.kind == "leak":
        return "Device memory allocated during the run was not freed."
    return f.message


# =============================================================================================
# line mapping
def _kernel_range(cuda_source: str) -> list[tuple[int, int]]:
    """(first, last) CUDA lines of every __global__ function body."""
    lines = cuda_source.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if "__global__" in lines[i] and lines[i].rstrip().endswith("{"):
            depth = 0
            start = i + 1
            for j in range(i, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth == 0 and j > i:
                    out.append((start + 1, j + 1))
                    i = j
                    break
        i += 1
    return out


def cuda_line_map(compiled) -> dict:
    """``{CUDA line: user line}`` for the kernel bodies of ``compiled.cuda_source``, by matching the
    lowered device IR's statements (in program order, each with its span's line) to the CUDA
    statements TVM generated from them: a store matches the line assigning to its buffer, a call the
    line that calls it. Used when the compiled kernel has no ``source_map``."""
    from txlab import simt

    try:
        funcs = simt.device_functions(compiled, compiled.arch)
    except Exception:  # noqa: BLE001 - no map, findings keep their CUDA line only
        return {}
    import tvm.tirx as tx
    import tvm_ffi

    leaves = []

    def on_leaf(s):
        line = simt.user_line(getattr(s, "span", None))
        if line is None:
            return
        if isinstance(s, tx.BufferStore):
            leaves.append((line, "store", s.buffer.name))
        elif isinstance(s, tx.Evaluate) and hasattr(s.value, "op"):
            name = str(getattr(s.value.op, "name", "") or "")
            leaves.append((line, "call", name.rsplit(".", 1)[-1]))

    for _, f in funcs:
        tvm_ffi.structural_walk(f.body, [((tx.Evaluate, tx.BufferStore), on_leaf)], order="pre")
    src = compiled.cuda_source.splitlines()
    out: dict[int, int] = {}
    k = 0
    last = None
    for lo, hi in _kernel_range(compiled.cuda_source):
        for ln in range(lo, hi + 1):
            text = src[ln - 1].strip()
            matched = None
            for j in range(k, min(len(leaves), k + 12)):
                line, what, name = leaves[j]
                if what == "store" and re.match(rf"^(?:\(\(\w+\*\))?\(?{re.escape(name)}(?:_ptr|_\d+)?\)?\s*\[", text):
                    matched = j
                elif what == "call" and name and re.search(rf"\b\w*{re.escape(name.strip('_'))}\w*\s*\(", text):
                    matched = j
                if matched is not None:
                    break
            if matched is not None:
                k = matched + 1
                last = leaves[matched][0]
                out[ln] = last
            elif last is not None and text and not text.startswith(("}", "//")):
                out[ln] = last
    return out


def _unique_call_site(cuda_source: str, line: int, ranges) -> int | None:
    """The kernel line calling the helper function whose body holds CUDA ``line`` (TVM emits
    ``tvm_builtin_*`` helpers, inlined into the kernel), when the kernel calls it exactly once."""
    lines = cuda_source.splitlines()
    if not 0 < line <= len(lines):
        return None
    name = None
    for i in range(line - 1, -1, -1):
        m = re.search(r"__device__\s+[\w\s:<>*&]*?\b(\w+)\s*\(", lines[i])
        if m:
            name = m.group(1)
            break
        if "__global__" in lines[i]:
            return None
    if not name:
        return None
    calls = [ln for lo, hi in ranges for ln in range(lo, hi + 1)
             if re.search(rf"\b{re.escape(name)}\s*\(", lines[ln - 1])]
    return calls[0] if len(calls) == 1 else None


def _user_source_lines(compiled) -> tuple[str | None, list]:
    from txlab.build import user_source

    try:
        src = user_source(compiled.ir_module) if compiled.ir_module is not None else None
    except Exception:  # noqa: BLE001
        src = None
    if src is None:
        return None, []
    return src[0], src[2]


def _map_lines(report_findings, compiled, *, use_source_map: bool):
    """Fill ``lineno``/``source`` of each finding (and of a race's other access)."""
    sm = getattr(compiled, "source_map", None) if use_source_map else None
    cmap = None
    ranges = _kernel_range(compiled.cuda_source)

    def in_kernel(line):
        return any(lo <= line <= hi for lo, hi in ranges)

    def locate(d: dict):
        if sm is not None and d.get("sass_offset") is not None:
            try:
                ln = sm.line_of_sass(d["sass_offset"])
            except Exception:  # noqa: BLE001
                ln = None
            if ln is not None:
                return ln
        nonlocal cmap
        if cmap is None:
            cmap = cuda_line_map(compiled)
        cands = [d.get("cuda_line")] + [fr.get("cuda_line") for fr in d.get("frames", [])]
        for c in cands:  # the innermost frame inside the kernel (helpers are inlined from the preamble)
            if c is not None and in_kernel(c) and c in cmap:
                return cmap[c]
        for c in cands:  # a line inside a helper the kernel calls from one place only
            call = _unique_call_site(compiled.cuda_source, c, ranges) if c is not None else None
            if call is not None and call in cmap:
                return cmap[call]
        return None

    used = "source_map" if sm is not None else "cuda"
    for f in report_findings:
        base = {"sass_offset": f.sass_offset, "cuda_line": f.cuda_line,
                "frames": (f.other or {}).get("frames", []) if isinstance(f.other, dict) else []}
        f.lineno = locate(base)
        if isinstance(f.other, dict) and ("sass_offset" in f.other or "cuda_line" in f.other):
            f.other["lineno"] = locate(f.other)
    return used


# =============================================================================================
# running
def find_sanitizer() -> str | None:
    """Path of ``compute-sanitizer``: ``$TXLAB_COMPUTE_SANITIZER``, then the CUDA toolkit's (PATH,
    ``$CUDA_HOME``, ``/usr/local/cuda``: it matches the installed driver), then NVIDIA's wheel
    (``pip install nvidia-cuda-sanitizer-api`` ships ``nvidia/cu13/bin/compute-sanitizer``; it needs a
    driver recent enough for its CUDA version)."""
    env = os.environ.get("TXLAB_COMPUTE_SANITIZER")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            for cand in (Path(home) / "bin" / "compute-sanitizer",
                         Path(home) / "compute-sanitizer" / "compute-sanitizer"):
                if cand.is_file() and os.access(cand, os.X_OK):
                    return str(cand)
    from txlab import toolchain

    return toolchain.find_tool("compute-sanitizer")


_HELP_CACHE: dict = {}


def supported_flags(exe: str, tool: str, flags=None) -> list:
    """``TOOL_FLAGS[tool]`` without the options this compute-sanitizer does not know (read from its
    ``--help``: e.g. ``--initcheck-address-space`` is new in 2026.x; 2025.3's initcheck checks global
    memory only)."""
    if exe not in _HELP_CACHE:
        try:
            p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
            _HELP_CACHE[exe] = p.stdout + p.stderr
        except (OSError, subprocess.SubprocessError):
            _HELP_CACHE[exe] = ""
    text = _HELP_CACHE[exe]
    flags = TOOL_FLAGS.get(tool, []) if flags is None else flags
    out, i = [], 0
    while i < len(flags):
        opt = flags[i]
        val = flags[i + 1] if i + 1 < len(flags) and not flags[i + 1].startswith("--") else None
        if not text or re.search(rf"(?m)^\s*{re.escape(opt)}\b", text):
            out.append(opt)
            if val is not None:
                out.append(val)
        i += 2 if val is not None else 1
    return out


def sanitizer_version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Version ([\w.]+)", out)
    return m.group(1) if m else None


def _lineinfo_build(compiled):
    """``(compiled with a -lineinfo cubin, rebuilt?)``: the compiled kernel itself when its PTX
    already carries line info (``.loc``), else a copy with PTX and cubin rebuilt from the same CUDA
    source with ``-lineinfo`` (the code is the same; the cubin gains the line table)."""
    if re.search(r"^\s*\.loc\s", compiled.ptx, re.M):
        return compiled, False
    from txlab import toolchain

    ptx = toolchain.cuda_to_ptx(compiled.cuda_source, compiled.arch, extra_flags=["-lineinfo"])
    cubin, _ = toolchain.ptx_to_cubin(ptx, compiled.arch)
    key = hashlib.sha256((compiled.key + ":lineinfo").encode()).hexdigest() if compiled.key else ""
    return dataclasses.replace(compiled, ptx=ptx, cubin=bytes(cubin), key=key, _executable=None), True


def _write_job(compiled, args, workdir: Path, uninitialized=()) -> Path:
    """The runner's job: the kernel (exported library, or script + cubin) and each argument's bytes
    (not uploaded for the parameters named in ``uninitialized``)."""
    from txlab import worker

    lib = worker.library(compiled)
    job = {"name": compiled.name, "arch": compiled.arch, "args": [], "result": str(workdir / "result.json")}
    if lib is not None:
        job["library"] = str(lib)
    else:
        (workdir / "kernel.cubin").write_bytes(compiled.cubin)
        job.update(script=compiled.script, cubin=str(workdir / "kernel.cubin"))
    for i, (p, v) in enumerate(zip(compiled.entry_params, args)):
        if p["kind"] == "scalar":
            import numpy as np

            job["args"].append({"kind": "scalar", "value": v.item() if isinstance(v, np.generic) else v})
            continue
        host, _ = worker.host_copy(v)
        import numpy as np

        path = workdir / f"arg{i}.bin"
        path.write_bytes(np.ascontiguousarray(host).tobytes())
        job["args"].append({"kind": "array", "path": str(path), "shape": [int(s) for s in host.shape],
                            "dtype": p["dtype"], "nbytes": int(host.nbytes),
                            "upload": p["name"] not in uninitialized})
    jp = workdir / "job.json"
    jp.write_text(json.dumps(job))
    return jp


def _run_tool(exe: str, tool: str, job: Path, workdir: Path, timeout_s: float, extra=(), flags=None) -> dict:
    xml = workdir / f"{tool}.xml"
    log = workdir / f"{tool}.log"
    result = workdir / "result.json"
    if result.exists():
        result.unlink()
    opts = list(TOOL_FLAGS.get(tool, []) if flags is None else flags)
    if "--print-limit" not in opts:
        opts += ["--print-limit", "200"]
    cmd = [exe, "--tool", tool, "--log-file", str(log), "--xml", "--save", str(xml),
           *supported_flags(exe, tool, COMMON_FLAGS + opts), *extra,
           sys.executable, "-m", "txlab.sanitize_runner", str(job)]
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, cwd=str(workdir))
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    seconds = time.monotonic() - t0
    text = log.read_text(errors="replace") if log.exists() else ""
    return {"cmd": cmd, "returncode": proc.returncode, "timed_out": timed_out, "seconds": seconds,
            "text": text, "stdout": (out or b"").decode(errors="replace"),
            "xml": xml.read_text(errors="replace") if xml.exists() else "",
            "result": json.loads(result.read_text()) if result.exists() else None}


def sanitize(compiled, *args, tools=TOOLS, timeout_s: float | None = None, keep: str | None = None,
             extra_flags: dict | None = None, uninitialized=()) -> SanitizerReport:
    """Run NVIDIA compute-sanitizer's ``tools`` on one launch of ``compiled`` with ``args``.

    Each tool runs in its own process (the isolated runner, :mod:`txlab.sanitize_runner`) on
    exactly-sized device copies of the arguments; the caller's arrays are not changed. A launch that
    does not finish within ``timeout_s`` (default ``max(120, 30 x txlab.config.timeout_s)``: the
    tools slow kernels down 10-1000x) raises :class:`txlab.KernelFault` ``kind="timeout"``.
    ``keep``: a directory to keep the job, logs and XML records in. ``extra_flags``: per-tool extra
    compute-sanitizer options. ``uninitialized``: names of buffer parameters whose device copy is
    left unwritten (outputs the kernel must write before it reads them: initcheck then reports a
    read of them as uninitialised). Returns a :class:`SanitizerReport`."""
    from txlab.errors import KernelFault
    from txlab.launch import check_args
    from txlab.settings import config

    tools = (tools,) if isinstance(tools, str) else tuple(tools)
    bad = [t for t in tools if t not in TOOLS]
    if bad or not tools:
        raise ValueError(f"tools={tools!r}: choose among {', '.join(TOOLS)}")
    check_args(compiled, args)
    uninitialized = (uninitialized,) if isinstance(uninitialized, str) else tuple(uninitialized)
    names = {p["name"] for p in compiled.entry_params if p["kind"] == "buffer"}
    unknown = [n for n in uninitialized if n not in names]
    if unknown:
        raise ValueError(f"uninitialized={unknown}: {compiled.name} has no buffer parameter named "
                         f"{', '.join(unknown)} (its buffers: {', '.join(sorted(names))})")
    from txlab.device import require_gpu

    info = require_gpu(f"sanitizing {compiled.name}")
    exe = find_sanitizer()
    if exe is None:
        raise SanitizerError("compute-sanitizer was not found: install the CUDA toolkit (it ships in "
                             "/usr/local/cuda/bin) or `pip install nvidia-cuda-sanitizer-api`, or set "
                             "TXLAB_COMPUTE_SANITIZER to its path")
    budget = float(timeout_s) if timeout_s is not None else max(120.0, 30.0 * float(config.timeout_s))
    built, rebuilt = _lineinfo_build(compiled)
    tmp = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="txlab-sanitize-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        job = _write_job(built, args, tmp, uninitialized)
        findings, runs, raw = [], {}, {}
        for tool in tools:
            r = _run_tool(exe, tool, job, tmp, budget, (extra_flags or {}).get(tool, ()))
            raw[tool] = {"text": r["text"][-MAX_LOG_CHARS:], "xml": r["xml"][-MAX_LOG_CHARS:]}
            if r["timed_out"]:
                raise KernelFault(
                    "timeout", f"{compiled.name} did not finish within {budget:g} s under compute-sanitizer "
                    f"--tool {tool}; the process was killed. Likely: a barrier or mbarrier wait that never "
                    "completes (or the tool is just slow: pass timeout_s=...).",
                    kernel=compiled.name, waited_s=r["seconds"])
            fs, facts = parse_text(r["text"], tool)
            if not fs and r["xml"]:
                fs = parse_xml(r["xml"], tool)
            if tool == "racecheck" and any(f.kind == "shared_race" and f.thread is None for f in fs):
                h = _run_tool(exe, tool, job, tmp, budget, flags=RACECHECK_HAZARD_FLAGS)
                if not h["timed_out"]:
                    hz, _ = parse_text(h["text"], tool)
                    races = [f for f in fs if f.kind == "shared_race" and f.other is not None and f.thread is None]
                    rest = [f for f in fs if f not in races]
                    merged = _merge_races(races, [f for f in hz if f.kind == "shared_race"])
                    fs = rest + [f for f in merged if f in races]  # hazards only enrich the races
                    raw[tool]["hazards"] = h["text"][-MAX_LOG_CHARS // 2:]
            res = r["result"] or {}
            status = "ok"
            message = ""
            if res.get("status") == "fault":
                status, message = "fault", res.get("error", "")
            elif not res:
                status = "failed"
                tail = (r["stdout"] or r["text"]).strip().splitlines()[-5:]
                message = (f"the runner did not report (exit code {r['returncode']}): " + " | ".join(tail))[:2000]
            elif res.get("status") != "ok":
                status, message = "failed", res.get("error", "")
            if status == "fault" and fs:
                message += " (the launch failed because of the error reported)"
            runs[tool] = {"status": status, "message": message, "seconds": round(r["seconds"], 2),
                          "errors": facts["errors"], "notes": facts["notes"], "returncode": r["returncode"],
                          "findings": len(fs)}
            findings.extend(fs)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    report = SanitizerReport(kernel=compiled.name, tools=list(tools), findings=findings, runs=runs,
                             arch=compiled.arch, device=getattr(info, "name", None),
                             sanitizer={"path": exe, "version": sanitizer_version(exe),
                                        "flags": {t: supported_flags(exe, t, COMMON_FLAGS + TOOL_FLAGS[t])
                                                  for t in tools}},
                             created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), key=compiled.key,
                             raw=raw)
    finish(report, compiled, use_source_map=not rebuilt)
    return report


def finish(report: SanitizerReport, compiled, *, use_source_map: bool = True) -> SanitizerReport:
    """Map findings to the user's lines, explain them and collect the source text of each line."""
    report.line_map = _map_lines(report.findings, compiled, use_source_map=use_source_map)
    _, user_lines = _user_source_lines(compiled)
    for f in report.findings:
        if f.lineno is not None and 0 < f.lineno <= len(user_lines):
            f.source = user_lines[f.lineno - 1].strip()
            report.lines[f.lineno] = f.source
        o = f.other if isinstance(f.other, dict) else {}
        ol = o.get("lineno")
        if ol is not None and 0 < ol <= len(user_lines):
            report.lines[ol] = user_lines[ol - 1].strip()
        f.explanation = explain(f)
    return report


def from_logs(compiled, logs: dict, **meta) -> SanitizerReport:
    """A report from saved compute-sanitizer text logs ``{tool: text}`` (e.g. recorded on a GPU
    host) for ``compiled`` (which maps the lines; no GPU needed)."""
    findings, runs = [], {}
    for tool, text in logs.items():
        fs, facts = parse_text(text, tool)
        findings.extend(fs)
        runs[tool] = {"status": "ok", "errors": facts["errors"], "notes": facts["notes"], "findings": len(fs)}
    report = SanitizerReport(kernel=compiled.name, tools=list(logs), findings=findings, runs=runs,
                             arch=compiled.arch, raw={t: {"text": x[-MAX_LOG_CHARS:], "xml": ""}
                                                      for t, x in logs.items()}, **meta)
    return finish(report, compiled, use_source_map=False)
