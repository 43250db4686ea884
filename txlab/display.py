"""HTML views of compiled kernels and errors: tabbed, syntax-highlighted (Pygments), readable in
JupyterLab (light and dark themes) and in exported HTML (no JavaScript; CSS-only tabs)."""
from __future__ import annotations

import html
import itertools
from functools import lru_cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer, bygroups
from pygments.lexers import CudaLexer, PtxLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, Text

MAX_LINES = 3000
_ids = itertools.count()


class SassLexer(RegexLexer):
    """NVIDIA SASS as printed by nvdisasm/cuobjdump. Pygments ships no SASS lexer."""

    name = "SASS"
    aliases = ["sass"]
    tokens = {
        "root": [
            (r"/\*[0-9a-f]{4,}\*/", Comment.Special),           # instruction offset
            (r"/\*.*?\*/", Comment.Multiline),
            (r"//.*?$", Comment.Single),
            (r"^\s*\.[\w.]+.*?$", Comment.Preproc),               # directives
            (r"^\s*[\w.$]+:", Name.Label),
            (r"@!?U?P[T0-9]+", Keyword.Pseudo),                   # predicate guard
            (r"\b([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)",
             bygroups(Keyword, Keyword.Type)),                     # opcode + modifiers
            (r"\b(?:U?R[0-9]+|RZ|URZ|U?P[0-9T]|PT|SR_\w+|c\[0x[0-9a-f]+\])\b", Name.Variable),
            (r"-?0x[0-9a-fA-F]+|-?\d+(\.\d+)?", Number),
            (r"[\[\]{},;|]", Punctuation),
            (r"[-+~!]", Operator),
            (r"\s+", Text),
            (r".", Text),
        ]
    }


@lru_cache(maxsize=1)
def _css() -> str:
    light = HtmlFormatter(style="default").get_style_defs(".txlab-code.hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(
        'body[data-jp-theme-light="false"] .txlab-code.hl')
    return f"""
.txlab-tabs {{ font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 12px;
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 4px; margin: 4px 0; }}
.txlab-tabs > input {{ display: none; }}
.txlab-tabs > label {{ display: inline-block; padding: 4px 10px; cursor: pointer;
  color: var(--jp-ui-font-color1, #333); border-bottom: 2px solid transparent; }}
.txlab-tabs > .txlab-head {{ padding: 4px 8px; color: var(--jp-ui-font-color1, #333);
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }}
.txlab-tabs > .txlab-panel {{ display: none; max-height: 480px; overflow: auto;
  border-top: 1px solid var(--jp-border-color2, #e0e0e0); }}
.txlab-tabs .txlab-code pre {{ margin: 0; padding: 6px 8px; font-size: 12px; line-height: 1.35;
  font-family: var(--jp-code-font-family, ui-monospace, monospace); }}
.txlab-tabs .txlab-code.hl {{ background: var(--jp-cell-editor-background, #f7f7f7); }}
body[data-jp-theme-light="false"] .txlab-tabs .txlab-code.hl {{ background: #272822; }}
.txlab-tabs table.txlab-res {{ border-collapse: collapse; margin: 6px 8px; }}
.txlab-tabs table.txlab-res td, .txlab-tabs table.txlab-res th {{ padding: 2px 8px; text-align: right;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }}
.txlab-tabs table.txlab-res th:first-child, .txlab-tabs table.txlab-res td:first-child {{ text-align: left; }}
.txlab-warn {{ padding: 4px 8px; border-left: 4px solid var(--jp-warn-color1, #f57c00);
  background: var(--jp-warn-color3, #fff3e0); color: var(--jp-ui-font-color0, #000); }}
.txlab-warn ul {{ margin: 2px 0 2px 18px; padding: 0; }}
.txlab-note {{ color: var(--jp-ui-font-color2, #777); padding: 2px 8px; }}
.txlab-error {{ font-family: var(--jp-code-font-family, monospace); font-size: 12px; padding: 6px 10px;
  border-left: 4px solid var(--jp-error-color1, #d32f2f); background: var(--jp-rendermime-error-background, #fdd);
  white-space: pre-wrap; color: var(--jp-ui-font-color0, #000); }}
.txlab-error b {{ color: var(--jp-error-color1, #d32f2f); }}
{light}
{dark}
"""


def code_html(text: str, language: str, max_lines: int = MAX_LINES) -> str:
    lexer = {"python": PythonLexer, "cuda": CudaLexer, "ptx": PtxLexer, "sass": SassLexer}[language]()
    lines = text.splitlines()
    note = ""
    if len(lines) > max_lines:
        note = (f'<div class="txlab-note">showing {max_lines} of {len(lines)} lines; '
                f"the full text is on the Python object</div>")
        text = "\n".join(lines[:max_lines])
    body = highlight(text, lexer, HtmlFormatter(nowrap=False, cssclass="txlab-code hl"))
    return note + body


def _fmt_bytes(v) -> str:
    if not isinstance(v, int):
        return html.escape(str(v))
    if v >= 1024:
        return f"{v:,} ({v / 1024:.1f} KiB)"
    return f"{v:,}"


class _Safe(str):
    """Text that is already HTML (built from escaped parts)."""


def _esc(value) -> str:
    """Every value that reaches HTML goes through here (resources come from a cache file too)."""
    return value if isinstance(value, _Safe) else html.escape(str(value))


def _ms(v) -> str:
    return f"{v * 1000:.0f} ms" if isinstance(v, (int, float)) else f"{v!s} s"


def resources_html(compiled) -> str:
    rows = []
    for k in compiled.kernels:
        r = compiled.resources.get(k, {})
        l = compiled.launch.get(k, {})
        rows.append(
            "<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in [
                k, "×".join(map(str, l.get("grid", ()))),
                "×".join(map(str, l.get("block", ()))),
                "×".join(map(str, l["cluster"])) if l.get("cluster") else "—",
                r.get("registers", "?"), _Safe(_fmt_bytes(r.get("static_smem_bytes", 0))),
                _Safe(_fmt_bytes(r.get("dynamic_smem_bytes", 0))),
                f'{r.get("spill_store_bytes", 0)} / {r.get("spill_load_bytes", 0)}',
                r.get("stack_bytes", 0),
            ]) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in [
        "kernel", "grid", "block", "cluster", "regs/thread", "static smem", "dynamic smem",
        "spill st/ld B", "stack B"])
    timing = ", ".join(f"{s} {_ms(v)}" for s, v in compiled.timings.items())
    return (f'<table class="txlab-res"><tr>{head}</tr>{"".join(rows)}</table>'
            f'<div class="txlab-note">compile stages (cold): {html.escape(timing)}</div>')


def compiled_html(compiled, show=None) -> str:
    """Tabbed view of a Compiled. ``show`` picks and orders the tabs (default: all)."""
    uid = f"txlab{next(_ids)}"
    tabs = {
        "resources": ("Resources", lambda: resources_html(compiled)),
        "script": ("TVMScript", lambda: code_html(compiled.script, "python")),
        "cuda": ("CUDA C", lambda: code_html(compiled.cuda_source, "cuda")),
        "ptx": ("PTX", lambda: code_html(compiled.ptx, "ptx")),
        "sass": ("SASS", lambda: code_html(compiled.sass, "sass")),
    }
    order = list(show) if show else ["resources", "script", "cuda", "ptx", "sass"]
    unknown = [s for s in order if s not in tabs]
    if unknown:
        raise ValueError(f"unknown --show entries {unknown}; choose from {', '.join(tabs)}")
    css_rules = []
    parts = []
    for i, key in enumerate(order):
        title, render = tabs[key]
        tid = f"{uid}-{key}"
        parts.append(f'<input type="radio" name="{uid}" id="{tid}"{" checked" if i == 0 else ""}>'
                     f'<label for="{tid}">{title}</label>')
        css_rules.append(f"#{tid}:checked ~ .{tid}-panel {{ display: block; }}"
                         f"#{tid}:checked + label {{ border-bottom-color: var(--jp-brand-color1, #1976d2);"
                         f" font-weight: 600; }}")
    panels = [f'<div class="txlab-panel {uid}-{key}-panel">{tabs[key][1]()}</div>' for key in order]
    hit = "cache hit" if compiled.cache_hit else "compiled"
    head = (f'<div class="txlab-head"><b>{_esc(compiled.name)}</b> · {_esc(compiled.arch)} · '
            f'{hit} in {_esc(_ms(compiled.compile_seconds))} · {len(compiled.cubin):,} B cubin · '
            f'kernels: {_esc(", ".join(map(str, compiled.kernels)))} · '
            f'{_esc(_options_text(compiled))}</div>')
    head += _warnings_html(compiled)
    return (f"<style>{_css()}{''.join(css_rules)}</style>"
            f'<div class="txlab-tabs">{head}{"".join(parts)}{"".join(panels)}</div>')


def error_html(err) -> str:
    lines = [f"<b>CompileError [{html.escape(err.stage)}]</b>"]
    if err.kernel:
        lines[0] += f" in <b>{html.escape(err.kernel)}</b>"
    if err.lineno is not None:
        where = "" if (err.filename or "").startswith("<tirx-cell") else f" of {html.escape(err.filename or '')}"
        lines.append(f"line {html.escape(str(err.lineno))}{where}: {html.escape(err.message)}")
    else:
        lines.append(html.escape(err.message))
    if err.source_line:
        lines.append(f"    {html.escape(str(err.lineno))} | {html.escape(err.source_line.rstrip())}")
    if err.hint:
        lines.append(f"hint: {html.escape(err.hint)}")
    return f"<style>{_css()}</style><div class=\"txlab-error\">{'<br>'.join(lines)}</div>"


def _options_text(compiled) -> str:
    opts = getattr(compiled, "options", None)
    if opts is None:
        from txlab.options import CompileOptions

        opts = CompileOptions()
    return opts.describe()


def _warnings_html(compiled) -> str:
    warns = getattr(compiled, "warnings", None) or []
    if not warns:
        return ""
    items = "".join(f"<li>{html.escape(w)}</li>" for w in warns)
    return (f'<div class="txlab-warn" data-testid="launch-warnings"><b>cannot launch as compiled:</b>'
            f"<ul>{items}</ul></div>")


def timeline_html(tl) -> str:
    """One-paragraph summary of a :class:`txlab.timeline.Timeline` (its widget is ``tl.view()``)."""
    w = ", ".join(f"{html.escape(k)}: {v}" for k, v in sorted(tl.warnings.items()))
    return (f"<div><b>Timeline</b> ({html.escape(str(tl.meta.get('source', '')))}): {len(tl)} events, "
            f"{len(tl.tracks)} tracks, {tl.duration_ns} ns"
            + (f"<br><i>{html.escape(tl.provenance)}</i>" if tl.provenance else "")
            + (f"<br>warnings: {w}" if w else "") + "</div>")


def preformatted_html(obj, text=str) -> str:
    """``text(obj)`` in a <pre> block (TimelineSummary, BenchResult)."""
    return "<pre>" + html.escape(text(obj)) + "</pre>"


def check_html(result) -> str:
    """PASS/FAIL and the summary of a :class:`txlab.CheckResult`."""
    color = "#2e7d32" if result.ok else "#c62828"
    return (f'<div style="font-family:var(--jp-code-font-family,monospace);font-size:12px">'
            f'<b style="color:{color}">{"PASS" if result.ok else "FAIL"}</b> '
            f"{html.escape(result.summary())}</div>")


# model class ("module", "name") -> its HTML. Models carry no display code (they import nothing from
# Jupyter); IPython learns these through its formatters, registered by install() below.
def tune_html(result, limit: int = 20) -> str:
    """A TuneResult: its summary line and the first ``limit`` rows of its table, fastest first."""
    head_line = f"<pre>{html.escape(repr(result))}</pre>"
    table = tune_table_html(result.table(), limit)
    return f"<div>{head_line}{table}</div>" if table else head_line


def tune_table_html(table, limit: int | None = None) -> str:
    """A TuneResult.table() (a list of row dicts) as an HTML table; columns nobody fills are left out."""
    rows = list(table)[:limit] if limit else list(table)
    if not rows:
        return "<i>no rows</i>"
    cols = [k for k in table.columns if any(r.get(k) not in (None, "") for r in rows)] \
        if hasattr(table, "columns") else list(rows[0])

    def cell(v):
        return "" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(r.get(c)))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    more = f"<i>{len(table) - len(rows)} more rows</i>" if len(rows) < len(table) else ""
    return f"<table class='txlab-tune-table' style='font-size:11px'><tr>{head}</tr>{body}</table>{more}"


HTML_OF = {
    ("txlab.tune.model", "TuneResult"): tune_html,
    ("txlab.tune.model", "TuneTable"): tune_table_html,
    ("txlab.compiler", "Compiled"): compiled_html,
    ("txlab.errors", "CompileError"): error_html,
    ("txlab.timeline.model", "Timeline"): timeline_html,
    ("txlab.timeline.model", "TimelineSummary"): preformatted_html,
    ("txlab.run", "CheckResult"): check_html,
    ("txlab.run", "BenchResult"): lambda r: preformatted_html(r, repr),
}


# model class -> plain text (IPython's pretty printer): its summary, not the dataclass repr
TEXT_OF = {
    ("txlab.pools.plan", "PoolLayout"): lambda obj: obj.summary(),
    ("txlab.pipelines.trace", "PipelineTrace"): lambda obj: obj.summary(),
}


def html_of(obj) -> str | None:
    """The HTML txlab shows for ``obj`` in a notebook, or None if it has none."""
    for cls in type(obj).__mro__:
        render = HTML_OF.get((cls.__module__, cls.__qualname__))
        if render is not None:
            return render(obj)
    return None


def install(shell) -> None:
    """Register the HTML of txlab's models (``HTML_OF``) and their plain text (``TEXT_OF``) with
    an IPython shell's formatters, by class name, so no model module is imported here. Idempotent."""
    formatter = shell.display_formatter.formatters["text/html"]
    for (module, name), render in HTML_OF.items():
        formatter.for_type_by_name(module, name, render)
    plain = shell.display_formatter.formatters["text/plain"]
    for (module, name), text in TEXT_OF.items():
        plain.for_type_by_name(module, name, lambda obj, p, cycle, text=text: p.text(text(obj)))
