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

Untrusted by default. A notebook is code and markup from whoever wrote it, and an HTML file runs
in the reader's browser, so unless ``trusted=True`` the export runs nothing the notebook brought:
markdown (rendered), raw HTML cells and ``text/html``/``text/markdown`` outputs pass through an
HTML sanitizer (no ``<script>``, event handlers, ``javascript:`` URLs, iframes, forms, SVG
elements); ``application/javascript`` outputs are left out; SVG outputs are shown as images (an
SVG in ``<img>`` runs no script); widget state keeps txlab's own widgets (their ES module is
byte-identical to a txlab bundle) and standard ipywidgets models with their HTML values sanitized,
and drops any other anywidget (its ES module is the notebook's code). The only script in an
untrusted export is txlab's renderer. ``trusted=True`` (for a notebook you vouch for) exports as
nbconvert would, scripts included.

The sanitizer is nh3 (Python binding of the Rust crate ammonia, actively maintained, html5ever's
parser, so it parses exactly as browsers do). nbconvert's own ``sanitize_html`` switch is used for
where to sanitize (markdown cells, HTML/markdown outputs, JavaScript outputs), with its
``clean_html`` filter replaced by nh3: nbconvert's filter is built on bleach, which its
maintainers deprecated in 2023.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from txlab.errors import TxlabError

MAX_NOTEBOOK_BYTES = 512 << 20  # read cap for a notebook file (widget state and images included)
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
    #: widget models left out of an untrusted export (anywidgets that are not txlab's own)
    dropped_widget_models: tuple = ()
    #: whether the notebook's own scripts were kept
    trusted: bool = False

    def to_dict(self) -> dict:
        return {
            "path": str(self.path),
            "html_bytes": self.html_bytes,
            "widget_views": self.widget_views,
            "widget_models": self.widget_models,
            "renderer_bytes": self.renderer_bytes,
            "dropped_widget_models": list(self.dropped_widget_models),
            "trusted": self.trusted,
        }


@lru_cache(maxsize=None)
def renderer() -> str:
    """Text of the offline widget renderer, checked to be safe inside a ``<script>`` element."""
    path = resources.files("txlab") / "static" / "export" / "embed.js"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ExportError(
            "txlab/static/export/embed.js is missing: build it with "
            "`cd widgets && npm ci && node build.mjs` (make widgets)"
        ) from exc
    bad = re.search(r"</script|<!--", text, re.IGNORECASE)
    if bad:  # build.mjs refuses to write such a bundle; this guards a hand-edited file
        raise ExportError(
            f"txlab/static/export/embed.js contains {bad.group(0)!r}, which would break "
            "the <script> element it is inlined in: rebuild it with widgets/build.mjs"
        )
    return text


# ---- sanitizing (untrusted notebooks) -----------------------------------------------------------
# <style> and inline styles stay (txlab's own HTML views and DataFrames use them; CSS runs no
# script in today's browsers); ammonia cannot filter CSS properties once <style> is allowed.
_EXTRA_TAGS = {"style", "input", "label", "caption", "tfoot", "figure", "figcaption", "section"}
_ATTRS = {
    "*": {"class", "id", "title", "lang", "dir", "style"},
    "input": {"type", "name", "checked", "disabled", "value"},
    "label": {"for"},
}
# ids/names that would shadow globals the page's scripts read (DOM clobbering)
_CLOBBER = {
    "define",
    "require",
    "requirejs",
    "module",
    "exports",
    "process",
    "global",
    "globalthis",
    "self",
    "top",
    "parent",
    "opener",
    "frames",
    "location",
    "document",
    "window",
    "name",
    "console",
    "navigator",
    "origin",
}


def _attribute_filter(tag: str, attr: str, value: str):
    if attr in ("id", "name", "for") and value.strip().lower() in _CLOBBER:
        return None
    if attr == "href" and re.sub(r"[\s\x00-\x1f]", "", value).lower().startswith("data:"):
        return None  # data: only where it is an image (img src)
    if attr == "type" and tag == "input" and value.strip().lower() not in ("radio", "checkbox"):
        return None
    return value


def sanitize_html(text) -> str:
    """``text`` (HTML) with everything that can run script removed (nh3 / ammonia)."""
    import nh3

    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return nh3.clean(
        text,
        tags=nh3.ALLOWED_TAGS | _EXTRA_TAGS,
        clean_content_tags={"script"},
        attributes={
            **{k: set(v) for k, v in nh3.ALLOWED_ATTRIBUTES.items()},
            **_ATTRS,
            "img": nh3.ALLOWED_ATTRIBUTES["img"],
        },
        attribute_filter=_attribute_filter,
        url_schemes=nh3.ALLOWED_URL_SCHEMES | {"data"},
    )


@lru_cache(maxsize=1)
def _txlab_bundles() -> frozenset:
    """ES module texts of txlab's own widgets (txlab/static/*.js)."""
    root = resources.files("txlab") / "static"
    out = set()
    for entry in root.iterdir():
        if entry.name.endswith(".js") and entry.is_file():
            out.add(entry.read_text(encoding="utf-8"))
    return frozenset(out)


_HTML_MODELS = {"HTMLModel", "HTMLMathModel"}


def _sanitize_outputs(outputs) -> list:
    out = []
    for o in outputs or []:
        o = dict(o)
        data = dict(o.get("data") or {})
        if "text/html" in data:
            data["text/html"] = sanitize_html(_join(data["text/html"]))
        data.pop("application/javascript", None)
        if o.get("data") is not None:
            if not data:
                data = {"text/plain": "[JavaScript output left out: the notebook is not trusted]"}
            o["data"] = data
        out.append(o)
    return out


def _join(v) -> str:
    return "".join(v) if isinstance(v, list) else str(v)


def _sanitize_widget_state(state: dict) -> tuple[dict, list[str]]:
    """(state kept, names of the models dropped)."""
    bundles = _txlab_bundles()
    kept, dropped = {}, []
    for mid, model in (state or {}).items():
        if not isinstance(model, dict):
            dropped.append(str(mid))
            continue
        st = dict(model.get("state") or {})
        esm = st.get("_esm")
        foreign = esm not in bundles if esm is not None else model.get("model_module") == "anywidget"
        if foreign:  # an ES module is the notebook's own code
            dropped.append(f"{model.get('model_name', '?')} {mid}")
            continue
        if model.get("model_name") in _HTML_MODELS and "value" in st:
            st["value"] = sanitize_html(st["value"])
        if st.get("description_allow_html"):
            st["description_allow_html"] = False
        if "outputs" in st:
            st["outputs"] = _sanitize_outputs(st["outputs"])
        kept[mid] = {**model, "state": st}
    return kept, dropped


def _untrusted_copy(nb):
    """A copy of ``nb`` that carries no script of its own (markdown is sanitized by the exporter)."""
    import nbformat

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell["outputs"] = [nbformat.from_dict(o) for o in _sanitize_outputs(cell.get("outputs"))]
    widgets = nb.metadata.get("widgets", {}).get(STATE_MIME)
    dropped: list[str] = []
    if widgets and isinstance(widgets.get("state"), dict):
        kept, dropped = _sanitize_widget_state(widgets["state"])
        widgets["state"] = nbformat.from_dict(kept)
    return nb, dropped


def _count_views(nb) -> int:
    return sum(
        VIEW_MIME in out.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def read_notebook(notebook):
    """The notebook at path ``notebook`` (an ``nbformat`` NotebookNode, version 4), or an :class:`ExportError` of
    one line for a file that is not one: unreadable, not UTF-8 JSON, or JSON that is no Jupyter notebook (``{}``,
    a list, a notebook whose ``cells`` are not a list: nbformat's own errors would be a jsonschema traceback)."""
    import json

    import nbformat

    from txlab.files import FileReadError, read_bytes_capped, resolve_path

    path = resolve_path(notebook, "notebook")
    try:
        text = read_bytes_capped(path, MAX_NOTEBOOK_BYTES, "notebook").decode("utf-8")
        data = json.loads(text)
    except FileReadError as exc:
        raise ExportError(str(exc)) from None
    except (UnicodeDecodeError, ValueError) as exc:  # (JSONDecodeError is a ValueError)
        raise ExportError(f"{notebook!s} is not a notebook (JSON .ipynb): {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        what = f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "JSON without an 'nbformat' number"
        raise ExportError(
            f"{notebook!s} is {what}, not a Jupyter notebook (a .ipynb file is a JSON object with 'nbformat', "
            "'metadata' and 'cells')"
        )
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises jsonschema's ValidationError, KeyError, TypeError, ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ExportError(f"{notebook!s} is not a Jupyter notebook nbformat can read: {first}") from None
    cells = nb.get("cells")
    if not isinstance(nb.get("metadata"), dict) or not isinstance(cells, list):
        raise ExportError(
            f"{notebook!s} is not a Jupyter notebook: its 'cells' must be a list and 'metadata' an object"
        )
    bad = next(
        (i for i, c in enumerate(cells) if not isinstance(c, dict) or not isinstance(c.get("cell_type"), str)), None
    )
    if bad is not None:
        raise ExportError(
            f"{notebook!s} is not a Jupyter notebook: cell {bad} is not a cell (an object with 'cell_type')"
        )
    return nb


def export_html(
    notebook, out_html, *, title: str | None = None, theme: str = "light", trusted: bool = False
) -> ExportedHTML:
    """Write ``notebook`` (a path or an ``nbformat`` NotebookNode, already executed) to ``out_html``
    as one self-contained HTML file whose widgets render offline.

    Widgets need their state saved in the notebook's metadata: execute with nbclient's
    ``store_widget_state=True`` (``python -m txlab.tour`` does), or in JupyterLab turn on
    Settings → Save Widget State Automatically before saving. Raises :class:`ExportError` when
    the notebook has widget outputs but no saved widget state. ``title`` defaults to the
    notebook's metadata title, else its file name; ``theme`` is nbconvert's (light, dark).
    ``trusted=False`` (default) sanitizes what the notebook brings (module docstring);
    ``trusted=True`` keeps its scripts, for a notebook you vouch for.
    """
    import jinja2
    from nbconvert import HTMLExporter

    from txlab.files import resolve_path

    if not isinstance(trusted, bool):
        raise ExportError(f"trusted must be True or False, not {trusted!r}")
    if isinstance(notebook, (str, Path)):
        nb, name = read_notebook(notebook), resolve_path(notebook, "notebook").stem
    else:
        nb, name = notebook, "notebook"
    dropped: list[str] = []
    if not trusted:
        nb, dropped = _untrusted_copy(nb)
    name = title or nb.metadata.get("title") or name
    views = _count_views(nb)
    state = nb.metadata.get("widgets", {}).get(STATE_MIME, {})
    if views and not state.get("state"):
        raise ExportError(
            f"the notebook has {views} widget output(s) but no saved widget state, so the HTML could "
            "not show them: execute it with nbclient's store_widget_state=True (python -m txlab.tour "
            "does), or enable Settings → Save Widget State Automatically in JupyterLab and save"
        )
    script = renderer()
    exporter = HTMLExporter(
        template_name="lab",
        theme=theme,
        extra_loaders=[jinja2.DictLoader({"txlab_offline.html.j2": _TEMPLATE})],
        template_file="txlab_offline.html.j2",
        sanitize_html=not trusted,
        filters={"clean_html": sanitize_html},
    )
    html, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": name}, "txlab_widget_renderer": script})
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    kept = nb.metadata.get("widgets", {}).get(STATE_MIME, {}).get("state", {})
    return ExportedHTML(
        path=out,
        html_bytes=len(html.encode("utf-8")),
        widget_views=views,
        widget_models=len(kept),
        renderer_bytes=len(script.encode("utf-8")),
        dropped_widget_models=tuple(dropped),
        trusted=trusted,
    )


def main(argv=None) -> int:
    """``python -m txlab.export [--trusted] NOTEBOOK.ipynb OUT.html`` (the notebook as saved, not re-run)."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    trusted = "--trusted" in argv
    argv = [a for a in argv if a != "--trusted"]
    if len(argv) != 2:
        print(
            "usage: python -m txlab.export [--trusted] NOTEBOOK.ipynb OUT.html   (to execute first: "
            "python -m txlab.tour; --trusted keeps the notebook's own scripts)",
            file=sys.stderr,
        )
        return 2
    try:
        r = export_html(*argv, trusted=trusted)
    except ExportError as exc:
        print(f"txlab export: {exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {r.path} ({r.html_bytes / 1024:.0f} KiB, {r.widget_views} widget(s), offline renderer "
        f"{r.renderer_bytes / 1024:.0f} KiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
