"""The sanitizer's findings as data: :class:`Finding`, :class:`SanitizerReport`, saved reports and
bundles, and the reports shipped with txlab."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from txlab.errors import TxlabError

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
FORMAT = "txlab.sanitizer/1"


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
    line_map: str = ""  # "source_map" (srcmap) or "cuda" (CUDA lines matched to the IR)
    created: str = ""
    key: str = ""
    raw: dict = field(default_factory=dict)  # per tool: {"text": ..., "xml": ...} (truncated)

    @property
    def ok(self) -> bool:
        return not self.findings and all(r.get("status") in ("ok",) for r in self.runs.values())

    def by_tool(self, tool: str) -> list:
        return [f for f in self.findings if f.tool == tool]

    def at_line(self, lineno: int) -> list:
        return [f for f in self.findings if f.lineno == lineno]

    # ---- serialisation ------------------------------------------------------------------------
    def to_dict(self, *, raw: bool = True) -> dict:
        d = {
            "format": FORMAT,
            "kernel": self.kernel,
            "tools": list(self.tools),
            "findings": [f.to_dict() for f in self.findings],
            "runs": self.runs,
            "arch": self.arch,
            "device": self.device,
            "sanitizer": self.sanitizer,
            "lines": {str(k): v for k, v in self.lines.items()},
            "line_map": self.line_map,
            "created": self.created,
            "key": self.key,
            "ok": self.ok,
        }
        if raw:
            d["raw"] = self.raw
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SanitizerReport":
        _validate(d)
        return cls(
            kernel=d["kernel"],
            tools=list(d["tools"]),
            findings=[Finding.from_dict(f) for f in d["findings"]],
            runs=d["runs"],
            arch=d.get("arch"),
            device=d.get("device"),
            sanitizer=d.get("sanitizer") or {},
            lines={int(k): v for k, v in (d.get("lines") or {}).items()},
            line_map=d.get("line_map", ""),
            created=d.get("created", ""),
            key=d.get("key", ""),
            raw=d.get("raw") or {},
        )

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
        return (
            f"<SanitizerReport {self.kernel}: {len(self.findings)} finding(s), "
            f"tools {', '.join(self.tools)}{', clean' if self.ok else ''}>"
        )

    def _repr_pretty_(self, p, cycle):  # pragma: no cover - IPython hook
        p.text(self.summary())


def load(path) -> SanitizerReport:
    """Read a report written by :meth:`SanitizerReport.save`; verifies its checksum and fields."""
    path = Path(path)
    doc = _read_json(path, "sanitizer report")
    return _unseal(doc, str(path))


MAX_REPORT_BYTES = 256 << 20


def _read_json(path: Path, what: str):
    """A user-named JSON file, read capped (regular files only: txlab.files); ValueError if not JSON."""
    from txlab.files import read_bytes_capped

    data = read_bytes_capped(path, MAX_REPORT_BYTES, what)  # FileReadError is a ValueError
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a {what} ({exc})") from None


def _sealed(report: "SanitizerReport") -> dict:
    from txlab.cache import seal

    return seal(report.to_dict(), "report", compact=True)


def _unseal(doc, where: str) -> "SanitizerReport":
    from txlab.cache import sealed_body

    body, problem = sealed_body(doc, "report", compact=True)
    if problem == "missing":
        raise ValueError(f"{where}: not a txlab sanitizer report (no 'report'/'sha256')")
    if problem == "mismatch":
        raise ValueError(f"{where}: checksum mismatch: the report was modified or truncated")
    return SanitizerReport.from_dict(body)


def save_bundle(reports: dict, path, **meta) -> Path:
    """Several reports ``{name: SanitizerReport}`` in one JSON file, each sealed with its SHA-256."""
    doc = {"format": FORMAT + "+bundle", "meta": meta, "reports": {name: _sealed(r) for name, r in reports.items()}}
    path = Path(path)
    path.write_text(json.dumps(doc, sort_keys=True, indent=1))
    return path


def load_bundle(path) -> dict:
    """``{name: SanitizerReport}`` from :func:`save_bundle`'s file, every report verified."""
    path = Path(path)
    doc = _read_json(path, "sanitizer bundle")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT + "+bundle":
        raise ValueError(f"{path}: not a {FORMAT}+bundle file")
    return {name: _unseal(d, f"{path}[{name}]") for name, d in doc["reports"].items()}


def recorded(name: str | None = None):
    """Reports recorded on an H200 by ``scripts/sanitize_h200.py`` and shipped in txlab/data
    (``sanitizer_reports.json``): one by name (``"oob_write"``, ``"oob_write_fixed"``, ...), or all."""
    from importlib import resources

    path = resources.files("txlab") / "data" / "sanitizer_reports.json"
    if not path.is_file():
        raise FileNotFoundError(
            "no recorded sanitizer reports ship with this txlab (run "
            "scripts/sanitize_h200.py on a GPU host and copy sanitizer_reports.json "
            "into txlab/data)"
        )
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
