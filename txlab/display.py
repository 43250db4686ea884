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
            (r"/\*[0-9a-f]{4,}\*/", Comment.Special),  # instruction offset
            (r"/\*.*?\*/", Comment.Multiline),
            (r"//.*?$", Comment.Single),
            (r"^\s*\.[\w.]+.*?$", Comment.Preproc),  # directives
            (r"^\s*[\w.$]+:", Name.Label),
            (r"@!?U?P[T0-9]+", Keyword.Pseudo),  # predicate guard
            (r"\b([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)", bygroups(Keyword, Keyword.Type)),  # opcode + modifiers
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
    dark = HtmlFormatter(style="monokai").get_style_defs('body[data-jp-theme-light="false"] .txlab-code.hl')
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
.txlab-tabs .txlab-fold > summary {{ cursor: pointer; padding: 3px 8px; color: var(--jp-ui-font-color2, #777);
  font-family: var(--jp-code-font-family, ui-monospace, monospace); font-size: 11.5px;
  background: var(--jp-layout-color2, #eee); }}
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
        note = (
            f'<div class="txlab-note">showing {max_lines} of {len(lines)} lines; '
            f"the full text is on the Python object</div>"
        )
        text = "\n".join(lines[:max_lines])
    body = highlight(text, lexer, HtmlFormatter(nowrap=False, cssclass="txlab-code hl"))
    return note + body


def cuda_html(cuda_source: str) -> str:
    """CUDA C with TVM's generated preamble (headers, macros, helper functions before the first
    kernel; :func:`txlab.sourcemap.preamble.preamble_lines`) folded in a ``<details>``: the tab
    opens on the kernel, one click shows the rest (no JavaScript, so exported HTML folds too)."""
    from txlab.sourcemap.preamble import preamble_lines

    n = preamble_lines(cuda_source)
    if not n:
        return code_html(cuda_source, "cuda")
    lines = cuda_source.splitlines()
    head, kernel = "\n".join(lines[:n]), "\n".join(lines[n:])
    return (
        f'<details class="txlab-fold" data-testid="cuda-preamble"><summary>lines 1–{n}: '
        f"TVM's generated preamble (headers, macros, helper functions) — click to show</summary>"
        f"{code_html(head, 'cuda')}</details>" + code_html(kernel, "cuda", max_lines=max(1, MAX_LINES - n))
    )


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
            "<tr>"
            + "".join(
                f"<td>{_esc(c)}</td>"
                for c in [
                    k,
                    "×".join(map(str, l.get("grid", ()))),
                    "×".join(map(str, l.get("block", ()))),
                    "×".join(map(str, l["cluster"])) if l.get("cluster") else "—",
                    r.get("registers", "?"),
                    _Safe(_fmt_bytes(r.get("static_smem_bytes", 0))),
                    _Safe(_fmt_bytes(r.get("dynamic_smem_bytes", 0))),
                    f"{r.get('spill_store_bytes', 0)} / {r.get('spill_load_bytes', 0)}",
                    r.get("stack_bytes", 0),
                ]
            )
            + "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in [
            "kernel",
            "grid",
            "block",
            "cluster",
            "regs/thread",
            "static smem",
            "dynamic smem",
            "spill st/ld B",
            "stack B",
        ]
    )
    timing = ", ".join(f"{s} {_ms(v)}" for s, v in compiled.timings.items())
    return (
        f'<table class="txlab-res"><tr>{head}</tr>{"".join(rows)}</table>'
        f'<div class="txlab-note">compile stages (cold): {html.escape(timing)}</div>'
    )


def compiled_html(compiled, show=None) -> str:
    """Tabbed view of a Compiled. ``show`` picks and orders the tabs (default: all)."""
    uid = f"txlab{next(_ids)}"
    tabs = {
        "resources": ("Resources", lambda: resources_html(compiled)),
        "script": ("TVMScript", lambda: code_html(compiled.script, "python")),
        "cuda": ("CUDA C", lambda: cuda_html(compiled.cuda_source)),
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
        parts.append(
            f'<input type="radio" name="{uid}" id="{tid}"{" checked" if i == 0 else ""}>'
            f'<label for="{tid}">{title}</label>'
        )
        css_rules.append(
            f"#{tid}:checked ~ .{tid}-panel {{ display: block; }}"
            f"#{tid}:checked + label {{ border-bottom-color: var(--jp-brand-color1, #1976d2);"
            f" font-weight: 600; }}"
        )
    panels = [f'<div class="txlab-panel {uid}-{key}-panel">{tabs[key][1]()}</div>' for key in order]
    hit = "cache hit" if compiled.cache_hit else "compiled"
    head = (
        f'<div class="txlab-head"><b>{_esc(compiled.name)}</b> · {_esc(compiled.arch)} · '
        f"{hit} in {_esc(_ms(compiled.compile_seconds))} · {len(compiled.cubin):,} B cubin · "
        f"kernels: {_esc(', '.join(map(str, compiled.kernels)))} · "
        f"{_esc(_options_text(compiled))}</div>"
    )
    head += _warnings_html(compiled)
    return (
        f"<style>{_css()}{''.join(css_rules)}</style>"
        f'<div class="txlab-tabs">{head}{"".join(parts)}{"".join(panels)}</div>'
    )


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
    return f'<style>{_css()}</style><div class="txlab-error">{"<br>".join(lines)}</div>'


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
    return (
        f'<div class="txlab-warn" data-testid="launch-warnings"><b>cannot launch as compiled:</b><ul>{items}</ul></div>'
    )


def timeline_html(tl) -> str:
    """One-paragraph summary of a :class:`txlab.timeline.Timeline` (its widget is ``tl.view()``)."""
    w = ", ".join(f"{html.escape(k)}: {v}" for k, v in sorted(tl.warnings.items()))
    return (
        f"<div><b>Timeline</b> ({html.escape(str(tl.meta.get('source', '')))}): {len(tl)} events, "
        f"{len(tl.tracks)} tracks, {tl.duration_ns} ns"
        + (f"<br><i>{html.escape(tl.provenance)}</i>" if tl.provenance else "")
        + (f"<br>warnings: {w}" if w else "")
        + "</div>"
    )


def preformatted_html(obj, text=str) -> str:
    """``text(obj)`` in a <pre> block (TimelineSummary, BenchResult)."""
    return "<pre>" + html.escape(text(obj)) + "</pre>"


def check_html(result) -> str:
    """PASS/FAIL and the summary of a :class:`txlab.CheckResult`."""
    color = "#2e7d32" if result.ok else "#c62828"
    return (
        f'<div style="font-family:var(--jp-code-font-family,monospace);font-size:12px">'
        f'<b style="color:{color}">{"PASS" if result.ok else "FAIL"}</b> '
        f"{html.escape(result.summary())}</div>"
    )


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
    cols = (
        [k for k in table.columns if any(r.get(k) not in (None, "") for r in rows)]
        if hasattr(table, "columns")
        else list(rows[0])
    )

    def cell(v):
        return "" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows)
    more = f"<i>{len(table) - len(rows)} more rows</i>" if len(rows) < len(table) else ""
    return f"<table class='txlab-tune-table' style='font-size:11px'><tr>{head}</tr>{body}</table>{more}"


# ---- results whose HTML lives here (HTML only through txlab.display: models stay pure Python) ----
def sanitizer_html(report) -> str:
    e = html.escape
    head = f"<b>{e(report.kernel)}</b>: compute-sanitizer ({e(', '.join(report.tools))})" + (
        f" on {e(report.device)}" if report.device else ""
    )
    if report.ok:
        return (
            f"<div class='txlab-sanitizer'>{head}: <span style='color:#18794e'>clean</span> — "
            "no finding; every tool ran the launch to completion.</div>"
        )
    rows = []
    for f in report.findings:
        thread = (
            f"{tuple(f.thread)} in CTA {tuple(f.block)}"
            if f.thread and f.block
            else (str(tuple(f.thread)) if f.thread else "")
        )
        src = report.lines.get(f.lineno) if f.lineno is not None else None
        rows.append(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"
            "<tr><td></td><td colspan=5><code>{}</code><br>{}</td></tr>".format(
                e(f.tool),
                e(f.kind + (f" ({f.hazard})" if f.hazard else "")),
                e(str(f.lineno) if f.lineno is not None else "?"),
                e(f"{f.sass_offset:#x}" if f.sass_offset is not None else ""),
                e(thread),
                e(f"{f.address:#x}" + (f" ({f.size} B)" if f.size else "") if f.address is not None else ""),
                e(f"{f.lineno} | {src}" if src else f.where()),
                e(f.explanation or f.message),
            )
        )
    runs = "".join(
        f"<div>{e(t)}: {e(str(r.get('status')))} {e(r.get('message', '') or '')}</div>"
        for t, r in report.runs.items()
        if r.get("status") != "ok"
    )
    return (
        "<div class='txlab-sanitizer'>{}: {} finding(s)<table><tr><th>tool</th><th>kind</th>"
        "<th>line</th><th>SASS</th><th>thread</th><th>address</th></tr>{}</table>{}</div>"
    ).format(head, len(report.findings), "".join(rows), runs)


def profile_diff_html(d) -> str:
    from txlab.profiling.compare import _fmt, _ratio
    from txlab.profiling.measurements import _clip

    body = "".join(
        f"<tr><td>{html.escape(r['label'])}</td><td>{_fmt(r['a'])}</td><td>{_fmt(r['b'])}</td>"
        f"<td>{_ratio(r['ratio'])}</td></tr>"
        for r in d.rows
    )

    def hot(p):
        return "".join(
            f"<li>{p.line_kind} line {r['line']} {r['share']:.0%}: "
            f"<code>{html.escape(_clip(r['text'], 60))}</code></li>"
            for r in p.hot_lines(5)
        )

    return (
        f'<div class="txlab-profile-diff" style="font-size:12px"><p>{html.escape(d.summary())}</p>'
        f"<table><tr><th>metric</th><th>{html.escape(d.a.kernel)}</th>"
        f"<th>{html.escape(d.b.kernel)}</th><th>b / a</th></tr>{body}</table>"
        f"<p>hot lines of {html.escape(d.a.kernel)}</p><ul>{hot(d.a)}</ul>"
        f"<p>hot lines of {html.escape(d.b.kernel)}</p><ul>{hot(d.b)}</ul></div>"
    )


def profile_html(prof) -> str:
    from txlab.profiling.measurements import _clip

    rows = "".join(
        f"<tr><td>{r['line']}</td><td>{r['share']:.1%}</td><td>{r['samples']}</td>"
        f"<td>{html.escape(', '.join(f'{s} {n}' for s, n in r['top_stalls']))}</td>"
        f"<td><code>{html.escape(_clip(r['text'], 70))}</code></td></tr>"
        for r in prof.hot_lines(5)
    )
    return (
        f'<div class="txlab-profile" style="font-size:12px"><p>{html.escape(prof.summary())}</p>'
        f"<table><tr><th>{prof.line_kind} line</th><th>share</th><th>samples</th><th>top stalls</th>"
        f"<th>source</th></tr>{rows}</table></div>"
    )


def compile_diff_html(d) -> str:
    e = html.escape
    res = ["<table><tr><th>kernel</th><th>field</th><th>a</th><th>b</th><th>Δ</th></tr>"]
    for r in d.resources:
        style = ' style="font-weight:600"' if r["delta"] else ""
        name = r["kernel_a"] if r["kernel_a"] == r["kernel_b"] else f"{r['kernel_a']} / {r['kernel_b']}"
        res.append(
            f"<tr{style}><td>{e(str(name))}</td><td>{e(r['field'])}</td><td>{e(str(r['a']))}</td>"
            f"<td>{e(str(r['b']))}</td><td>{r['delta']:+d}</td></tr>"
        )
    res.append("</table>")
    hist = ["<table><tr><th>class</th><th>a</th><th>b</th><th>Δ</th></tr>"]
    for c, v in d.histogram.items():
        hist.append(f"<tr><td>{e(c)}</td><td>{v['a']}</td><td>{v['b']}</td><td>{v['delta']:+d}</td></tr>")
    hist.append("</table>")
    colour = {
        "changed": "rgba(237,201,72,0.35)",
        "removed": "rgba(225,87,89,0.25)",
        "added": "rgba(89,161,79,0.25)",
        "equal": "transparent",
    }
    row_bg = {"same": "transparent", "same_sass": "rgba(120,120,120,0.10)"}
    code = "text-align:left;white-space:pre;font-family:monospace"  # JupyterLab right-aligns <td>
    rows = [
        '<table style="font-family:monospace;font-size:12px;border-collapse:collapse">'
        "<tr><th>a line</th><th>a</th><th>b line</th><th>b</th></tr>"
    ]
    for r in d.lines:
        bg = row_bg.get(r["status"], "rgba(237,201,72,0.15)")

        def cell(sass_list):
            return "<br>".join(f'<span style="background:{colour[i["mark"]]}">{e(i["text"])}</span>' for i in sass_list)

        rows.append(
            f'<tr style="background:{bg};vertical-align:top" class="txlab-diff-{e(r["status"])}">'
            f"<td>{e(str(r['a_line'] if r['a_line'] is not None else ''))}</td>"
            f'<td style="{code}"><div>{e(r["a_text"] or "")}</div>{cell(r["a_sass"])}</td>'
            f"<td>{e(str(r['b_line'] if r['b_line'] is not None else ''))}</td>"
            f'<td style="{code}"><div>{e(r["b_text"] or "")}</div>{cell(r["b_sass"])}</td></tr>'
        )
    rows.append("</table>")
    head = (
        f'<div data-testid="diff-verdict" style="font-weight:600">{e(d.headline)}</div>'
        f"<b>{e(d.a_name)}</b> ({e(d.a_arch)}) vs <b>{e(d.b_name)}</b> ({e(d.b_arch)}): "
        f"{e(d._lines_text())}"
    )
    return (
        f'<div class="txlab-compile-diff"><div>{head}</div>'
        f'<div style="display:flex;gap:24px">{"".join(res)}{"".join(hist)}</div>{"".join(rows)}</div>'
    )


def _access_table(report, css: str, title: str, columns: tuple, cells) -> str:
    """One table row per memory access of ``report`` (banks and coalescing): line, access and
    buffer, then ``cells(r)`` -> (bad, [further cells, already HTML]), the source last."""
    rows = []
    for r in report:
        bad, more = cells(r)
        tds = [html.escape(str(r.lineno)), html.escape(r.access), html.escape(r.buffer), *map(str, more)]
        rows.append(
            "<tr{}>{}<td><code>{}</code></td></tr>".format(
                ' style="background:#fde2e2"' if bad else "",
                "".join(f"<td>{t}</td>" for t in tds),
                html.escape(r.source or ""),
            )
        )
    head = "".join(f"<th>{c}</th>" for c in ("line", "access", "buffer", *columns, "source"))
    counted = report.title().split(": ", 1)[-1]  # the report's headline: analysed, partly unknown, unknown
    notes = "".join(f"<div class='txlab-note'>note: {html.escape(n)}</div>" for n in getattr(report, "notes", []))
    return "<div class='{}'><b>{}</b>: {} ({})<table><tr>{}</tr>{}</table>{}</div>".format(
        css, html.escape(report.kernel), title, html.escape(counted), head, "".join(rows), notes
    )


def bank_report_html(report) -> str:
    from txlab.banks import _lanes_text

    def cells(r):
        bad = r.ways is None or r.ways > 1 or r.status == "partial"
        lanes = _lanes_text(r.lanes) if r.ways is not None and r.ways > 1 else "-"
        return bad, [
            r.bytes_per_lane,
            "unknown" if r.ways is None else r.ways,
            "{}/{}".format("?" if r.ways is None else r.wavefronts, "?" if r.ways is None else r.ideal_wavefronts),
            html.escape(
                r.reason
                if r.ways is None
                else f"{lanes} (partly unknown: {r.reason})"
                if r.status == "partial"
                else lanes
            ),
        ]

    return _access_table(
        report,
        "txlab-banks",
        "shared-memory bank conflicts per access",
        ("B/lane", "ways", "wavefronts/ideal", "colliding lanes"),
        cells,
    )


def emulation_html(res) -> str:

    color = "#2e7d32" if res.ok else "#c62828"
    return f'<pre style="color:{color}">{html.escape(res.summary())}</pre>'


def api_help_html(h) -> str:
    """A :class:`txlab.api.ApiHelp`: the call, arch, doc, the example's lines using the name and what
    each lowers to (PTX, SASS), the CUDA it produced, and the whole example in a fold."""

    def code(text, language):
        return code_html(text, language) if text else ""

    parts = [
        f"<style>{_css()}</style><div class='txlab-tabs' style='padding:4px 8px'>"
        f"<code style='font-size:13px'><b>{html.escape(h.call)}</b></code>",
        f'<div class="txlab-note">{html.escape(h.kind)}, {html.escape(h.category)}; needs '
        f"<b>{html.escape(h.arch)}</b>; signature: {html.escape(h.signature_how)}; "
        f"<code>Tx</code> and <code>T</code> are the same module (tvm.script.tirx)</div>",
    ]
    if h.doc:
        parts.append(f"<pre style='font-size:11px;margin:4px 8px'>{html.escape(h.doc)}</pre>")
    if h.example_id is None:
        parts.append('<div class="txlab-note">no catalogue example uses this name</div></div>')
        return "".join(parts)
    parts.append(f"<div><b>called as</b> (example <code>{html.escape(h.example_id)}</code>)</div>")
    parts.append(code("\n".join(f"{u.lineno:>3} | {u.source}" for u in h.usage), "python"))
    rows = []
    for u in h.usage:
        if u.ptx or u.sass:
            rows.append(
                f"<tr><td style='vertical-align:top'>line {u.lineno}</td>"
                f"<td style='vertical-align:top'>{code(chr(10).join(u.ptx), 'ptx')}</td>"
                f"<td style='vertical-align:top'>{code(chr(10).join(u.sass), 'sass')}</td></tr>"
            )
    parts.append("<div><b>lowers to</b></div>")
    if rows:
        parts.append(
            "<table style='font-size:11px'><tr><th></th><th>PTX</th><th>SASS</th></tr>" + "".join(rows) + "</table>"
        )
    if h.lowering:
        parts.append(f'<div class="txlab-note">PTX/SASS: {html.escape(h.lowering)}</div>')
    if h.cuda_lines:
        parts.append(f'<div class="txlab-note">CUDA: {html.escape(h.cuda_how)}</div>')
        parts.append(code("\n".join(t for _n, t in h.cuda_lines), "cuda"))
    parts.append(
        f"<details><summary>example <code>{html.escape(h.example_id)}</code> "
        f"(<code>txlab.api.example_cell({html.escape(repr(h.example_id))})</code>)</summary>"
        f"{code(h.example_source, 'python')}</details>"
    )
    if h.other_examples:
        parts.append(f'<div class="txlab-note">also used in: {html.escape(", ".join(h.other_examples))}</div>')
    return "".join(parts) + "</div>"


def coalescing_html(report) -> str:
    def cells(r):
        known = r.status != "unknown"
        verdict = r.reason if not known else "coalesced" if r.coalesced else f"{r.efficiency:.0%} of sectors used"
        if r.status == "partial":  # never an all-clear: what is not known is said beside the figures
            verdict += f" (partly unknown: {r.reason})"
        return not known or not r.coalesced or r.status == "partial", [
            r.bytes_per_lane,
            f"{r.sectors / r.instructions:.1f}" if known else "unknown",
            f"{r.ideal_sectors / r.instructions:.1f}" if known else "-",
            html.escape(verdict),
        ]

    return _access_table(
        report,
        "txlab-coalescing",
        "global-memory coalescing per access",
        ("B/lane", "sectors/instruction", "ideal", "verdict"),
        cells,
    )


def gemm_choice_html(choice) -> str:
    rows = "".join(
        "<tr{}><td><code>{}</code></td><td>{}</td><td>{}</td><td>{:.0%}</td><td>{:.1f}</td><td>{}</td>"
        "<td>{:.1f}</td><td>{:.0f}</td><td>{}</td></tr>".format(
            ' style="font-weight:600"' if p.config == choice.winner else "",
            html.escape(name),
            p.tiles,
            p.waves,
            p.tail_idle,
            p.time_s * 1e6,
            f"{p.correction.factor:.3f}" if p.correction is not None else "-",
            p.expected * 1e6,
            p.expected_tflops,
            html.escape(p.bound),
        )
        for name, p in zip(choice.labels(10), choice.predictions[:10])
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in getattr(choice, "notes", None) or ())
    return (
        "<div class='txlab-gemm-choice'><b>{}</b><br>{}<table><tr><th>config</th><th>tiles</th>"
        "<th>waves</th><th>tail idle</th><th title='the model&#39;s time times its kind&#39;s measured factor: what "
        "the candidates are ranked by'>rank us</th><th>measured x</th><th title='rank us times the level of the "
        "shapes measured nearby'>predicted us</th><th>TFLOP/s</th><th>bound</th></tr>{}"
        "</table>{}</div>"
    ).format(
        html.escape("GEMM {}x{}x{}: {}".format(*choice.shape, choice.source)),
        html.escape(choice.why),
        rows,
        f"<ul class='txlab-gemm-notes'>{notes}</ul>" if notes else "",
    )


def fp8_gemm_choice_html(choice) -> str:
    """The FP8 GEMM's choice: its winner and why, without the bf16 model's table (its times and TFLOP/s are of the
    bf16 problem of half the K the model ranked, not of the FP8 GEMM)."""
    return "<div class='txlab-gemm-choice'><b>{}</b><br>{}</div>".format(
        html.escape("FP8 GEMM {}x{}x{}: {} -> {}".format(*choice.shape, choice.source, choice.winner.name)),
        html.escape(choice.why),
    )


def sass_table_html(table) -> str:
    """A SassTable (``compiled.sass_table()``): one row per instruction, control fields decoded."""
    from txlab.sass.rows import COLUMNS

    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS if c != "kernel")
    body = []
    kernel = None
    shown = [r for r in table.rows if not r["padding"]][: table.html_rows]
    for r in shown:
        if r["kernel"] != kernel:
            kernel = r["kernel"]
            body.append(f'<tr><th colspan="{len(COLUMNS) - 1}" style="text-align:left">{e(kernel)}</th></tr>')
        cells = []
        for c in COLUMNS:
            if c == "kernel":
                continue
            v = r[c]
            if c == "offset":
                v = f"{v:04x}"
            elif c == "wait_mask":
                v = "".join(str(k) for k in range(6) if v >> k & 1) or "-"
            elif c == "reuse":
                v = "".join("abcd"[i] for i in range(4) if v >> i & 1) or "-"
            elif c == "yield":
                v = "Y" if v else "-"
            elif v is None:
                v = "-"
            cells.append(f"<td>{e(str(v))}</td>")
        body.append(f'<tr class="txlab-sass-{e(r["cls"])}">{"".join(cells)}</tr>')
    more = len([r for r in table.rows if not r["padding"]]) - len(shown)
    note = f"<p>{more} more rows: use .rows or .to_dict()</p>" if more > 0 else ""
    return (
        f'<div class="txlab-sass-table"><b>{e(table.name)}</b> · {e(table.arch)} · '
        f"{len(shown) + max(more, 0)} instructions"
        f'<table style="font-family:monospace;font-size:12px"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{note}</div>"
    )


HTML_OF = {
    ("txlab.sass.rows", "SassTable"): sass_table_html,
    ("txlab.api.reference", "ApiHelp"): api_help_html,
    ("txlab.tune.model", "TuneResult"): tune_html,
    ("txlab.tune.model", "TuneTable"): tune_table_html,
    ("txlab.compiler", "Compiled"): compiled_html,
    ("txlab.errors", "CompileError"): error_html,
    ("txlab.timeline.model", "Timeline"): timeline_html,
    ("txlab.timeline.model", "TimelineSummary"): preformatted_html,
    ("txlab.run", "CheckResult"): check_html,
    ("txlab.run", "BenchResult"): lambda r: preformatted_html(r, repr),
    ("txlab.sanitizer.report", "SanitizerReport"): sanitizer_html,
    ("txlab.profiling.compare", "ProfileDiff"): profile_diff_html,
    ("txlab.profiling.measurements", "Profile"): profile_html,
    ("txlab.diff", "CompileDiff"): compile_diff_html,
    ("txlab.banks", "BankReport"): bank_report_html,
    ("txlab.emulator.result", "EmulationResult"): emulation_html,
    ("txlab.coalescing", "CoalescingReport"): coalescing_html,
    ("txlab.examples.gemm_model", "GemmChoice"): gemm_choice_html,
    ("txlab.examples.gemm_fp8_config", "Fp8Choice"): fp8_gemm_choice_html,
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
