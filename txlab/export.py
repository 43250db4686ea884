"""Self-contained HTML export of a notebook, widgets included.

nbconvert's HTML loads require.js, MathJax and the widget renderer (``@jupyter-widgets/html-manager``,
which in turn fetches ``anywidget``'s front end) from CDNs when the page is opened: offline, or
behind a proxy, every widget stays blank. :func:`export_html` uses nbconvert's ``lab`` template
but inlines txlab's offline renderer instead (``txlab/static/export/embed.js``, built by
``widgets/build.mjs`` from ``widgets/src/export/embed.js``: html-manager + anywidget, about 1.1 MB),
so the file shows every widget that has saved state with no network access at all.

What works in the file: everything a widget does in the browser (sliders, zoom, hover, selection).
What cannot: anything that needs Python (a re-trace, a recompile); those controls change the
page's local state only. Markdown math and mermaid diagrams stay as their source text (rendering
them would need MathJax/mermaid from the network).

    from txlab.export import export_html
    export_html("notebooks/00_tour.ipynb", "build/tour.html")   # saved with widget state
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from txlab.errors import TxlabError

STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"

# nbconvert's lab template with every network load removed and the widget renderer inlined
_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}
{%- if "widgets" in nb.metadata %}
<script>
{{ resources.txlab_widget_renderer }}
</script>
{%- endif %}
{% endblock jupyter_widgets %}
"""


class ExportError(TxlabError):
    """The notebook cannot be exported as self-contained HTML; the message says why and what to do."""


@dataclass(frozen=True)
class ExportedHTML:
    """What :func:`export_html` wrote."""

    path: Path
    html_bytes: int
    #: widget outputs in the page (each becomes a rendered widget)
    widget_views: int
    #: widget models in the saved state (views plus their layouts, styles and children)
    widget_models: int
    #: size of the inlined renderer (the same for every export)
    renderer_bytes: int

    def to_dict(self) -> dict:
        return {"path": str(self.path), "html_bytes": self.html_bytes,
                "widget_views": self.widget_views, "widget_models": self.widget_models,
                "renderer_bytes": self.renderer_bytes}


@lru_cache(maxsize=None)
def renderer() -> str:
    """Text of the offline widget renderer, checked to be safe inside a ``<script>`` element."""
    path = resources.files("txlab") / "static" / "export" / "embed.js"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ExportError("txlab/static/export/embed.js is missing: build it with "
                          "`cd widgets && npm ci && node build.mjs` (make widgets)") from exc
    bad = re.search(r"</script|<!--", text, re.IGNORECASE)
    if bad:  # build.mjs refuses to write such a bundle; this guards a hand-edited file
        raise ExportError(f"txlab/static/export/embed.js contains {bad.group(0)!r}, which would break "
                          "the <script> element it is inlined in: rebuild it with widgets/build.mjs")
    return text


def _count_views(nb) -> int:
    return sum(VIEW_MIME in out.get("data", {})
               for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []))


def export_html(notebook, out_html, *, title: str | None = None, theme: str = "light") -> ExportedHTML:
    """Write ``notebook`` (a path or an ``nbformat`` NotebookNode, already executed) to ``out_html``
    as one self-contained HTML file whose widgets render offline.

    Widgets need their state saved in the notebook's metadata: execute with nbclient's
    ``store_widget_state=True`` (``python -m txlab.tour`` does), or in JupyterLab turn on
    Settings → Save Widget State Automatically before saving. Raises :class:`ExportError` when
    the notebook has widget outputs but no saved widget state. ``title`` defaults to the
    notebook's metadata title, else its file name; ``theme`` is nbconvert's (light, dark).
    """
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    if isinstance(notebook, (str, Path)):
        name = Path(notebook).stem
        nb = nbformat.read(str(notebook), as_version=4)
    else:
        nb, name = notebook, "notebook"
    name = title or nb.metadata.get("title") or name
    views = _count_views(nb)
    state = nb.metadata.get("widgets", {}).get(STATE_MIME, {})
    if views and not state.get("state"):
        raise ExportError(
            f"the notebook has {views} widget output(s) but no saved widget state, so the HTML could "
            "not show them: execute it with nbclient's store_widget_state=True (python -m txlab.tour "
            "does), or enable Settings → Save Widget State Automatically in JupyterLab and save")
    script = renderer()
    exporter = HTMLExporter(template_name="lab", theme=theme,
                            extra_loaders=[jinja2.DictLoader({"txlab_offline.html.j2": _TEMPLATE})],
                            template_file="txlab_offline.html.j2")
    html, _ = exporter.from_notebook_node(
        nb, resources={"metadata": {"name": name}, "txlab_widget_renderer": script})
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return ExportedHTML(path=out, html_bytes=len(html.encode("utf-8")), widget_views=views,
                        widget_models=len(state.get("state", {})),
                        renderer_bytes=len(script.encode("utf-8")))


def main(argv=None) -> int:
    """``python -m txlab.export NOTEBOOK.ipynb OUT.html`` (the notebook as saved, not re-run)."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m txlab.export NOTEBOOK.ipynb OUT.html   (to execute first: python -m txlab.tour)",
              file=sys.stderr)
        return 2
    try:
        r = export_html(*argv)
    except ExportError as exc:
        print(f"txlab export: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {r.path} ({r.html_bytes / 1024:.0f} KiB, {r.widget_views} widget(s), offline renderer "
          f"{r.renderer_bytes / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
