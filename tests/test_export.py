"""txlab.export: exported HTML inlines the offline widget renderer and asks for nothing on the
network (what the page does in a browser is tested in tests/test_export_browser.py)."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest

from txlab.export import STATE_MIME, VIEW_MIME, ExportError, export_html, main, renderer

ROOT = Path(__file__).resolve().parents[1]
#: anything in an exported page that would make the browser fetch from the network
REMOTE = re.compile(
    r"""<script[^>]+src\s*=\s*["']?(?:https?:)?//|<link[^>]+href\s*=\s*["']?(?:https?:)?//|"""
    r"""@import\s+url\(\s*["']?(?:https?:)?//|unpkg\.com|jsdelivr|cdnjs|require\.min\.js""",
    re.IGNORECASE,
)


def _pipeline_notebook() -> nbformat.NotebookNode:
    """A notebook whose one output is a real PipelineView, with its widget state saved the way
    JupyterLab/nbclient save it (ipywidgets.embed builds the same JSON)."""
    from ipywidgets.embed import dependency_state, embed_data

    from txlab import pipelines as P
    from txlab.views.pipeline import PipelineView

    producer = [("wait", "empty"), ("arrive_expect_tx", "full", 4096), ("complete_tx", "full", 4096), ("advance",)]
    consumer = [("wait", "full"), ("arrive", "empty"), ("advance",)]
    w = PipelineView(P.simulate(4, iterations=6, roles={"producer": producer, "consumer": consumer}))
    data = embed_data(views=[w], state=dependency_state(w))  # only this widget's models, not every
    # widget other tests left open in this process
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("PipelineView(...)")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", data={VIEW_MIME: data["view_specs"][0], "text/plain": "PipelineView(...)"}
        )
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# pipeline"), cell]
    nb.metadata["widgets"] = {STATE_MIME: data["manager_state"]}
    w.close()
    return nb


def test_renderer_is_safe_to_inline():
    text = renderer()
    assert text.startswith("// built from widgets/src/export/embed.js by widgets/build.mjs")
    assert not re.search(r"</script|<!--", text, re.IGNORECASE)
    assert not REMOTE.search(text), REMOTE.search(text).group(0)
    assert len(text) < 1.5 * 2**20, f"offline renderer grew to {len(text) / 2**20:.2f} MiB"


def test_front_end_versions_are_pinned_and_match_python():
    pkg = json.loads((ROOT / "widgets" / "package.json").read_text())["devDependencies"]
    for name in ("@jupyter-widgets/html-manager", "anywidget"):
        assert re.fullmatch(r"\d+\.\d+\.\d+", pkg[name]), f"{name} must be pinned exactly, got {pkg[name]}"
    # the bundled anywidget front end must speak the protocol of the installed anywidget
    py = version("anywidget").split(".")[:2]
    assert pkg["anywidget"].split(".")[:2] == py, (
        f"widgets/package.json bundles anywidget {pkg['anywidget']} but Python has {version('anywidget')}: "
        "pin the matching npm version and rebuild (cd widgets && npm install --save-exact anywidget@X && node build.mjs)"
    )
    # ipywidgets 8 <-> html-manager 1.x
    assert version("ipywidgets").startswith("8.") and pkg["@jupyter-widgets/html-manager"].startswith("1.")


def test_export_inlines_renderer_and_state(tmp_path):
    nb = _pipeline_notebook()
    out = tmp_path / "sub" / "page.html"
    r = export_html(nb, out, title="pipes & <tags>")
    html = out.read_text(encoding="utf-8")
    assert r.path == out and r.html_bytes == len(html.encode())
    assert r.widget_views == 1 and r.widget_models == 2
    assert r.renderer_bytes == len(renderer().encode())
    assert html.count(renderer()) == 1
    hit = REMOTE.search(html)
    assert hit is None, f"exported HTML would load {hit.group(0)!r} from the network"
    assert f'type="{STATE_MIME}"' in html and f'type="{VIEW_MIME}"' in html
    assert "<title>pipes &amp; &lt;tags&gt;</title>" in html
    # the widget's own ES module travels in the state (anywidget's _esm trait; nbconvert writes
    # "/" as "\/" inside script elements)
    assert r"built from widgets\/src\/pipeline.js" in html


def test_export_from_path_uses_file_name_as_title(tmp_path):
    src = tmp_path / "my_pipes.ipynb"
    nbformat.write(_pipeline_notebook(), src)
    export_html(src, tmp_path / "out.html")
    assert "<title>my_pipes</title>" in (tmp_path / "out.html").read_text()


def test_widget_outputs_without_state_are_refused(tmp_path):
    nb = _pipeline_notebook()
    del nb.metadata["widgets"]
    with pytest.raises(ExportError, match="no saved widget state.*store_widget_state=True"):
        export_html(nb, tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


def test_notebook_without_widgets_has_no_renderer(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("plain"), nbformat.v4.new_code_cell("1 + 1")]
    r = export_html(nb, tmp_path / "plain.html")
    html = (tmp_path / "plain.html").read_text()
    assert r.widget_views == 0 and "widgets/src/export/embed.js" not in html
    assert not REMOTE.search(html)
    assert r.html_bytes < 400_000


def test_cli(tmp_path, capsys):
    assert main([]) == 2
    src = tmp_path / "nb.ipynb"
    nbformat.write(_pipeline_notebook(), src)
    assert main([str(src), str(tmp_path / "nb.html")]) == 0
    assert "1 widget(s)" in capsys.readouterr().out
    nb = nbformat.read(src, as_version=4)
    del nb.metadata["widgets"]
    nbformat.write(nb, src)
    assert main([str(src), str(tmp_path / "nb.html")]) == 1
    assert "no saved widget state" in capsys.readouterr().err
