"""export_html reads only what it should and sanitizes untrusted notebooks (issue 20, items 4, 6)."""

from __future__ import annotations

import os
import sys
import threading

import nbformat
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _hostile_notebook import MARKUP, hostile_notebook, txlab_widget  # noqa: E402

from txlab.export import ExportError, export_html, sanitize_html  # noqa: E402
from txlab.files import FileReadError, read_bytes_capped  # noqa: E402


# ---- item 4: bounded, regular-file reads ---------------------------------------------------------
def test_symlink_to_dev_zero_is_refused_not_read_forever(tmp_path):
    link = tmp_path / "zero.ipynb"
    link.symlink_to("/dev/zero")
    with pytest.raises(ExportError, match="character device"):
        export_html(link, tmp_path / "out.html")


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    result = {}

    def go():
        try:
            export_html(fifo, tmp_path / "out.html")
        except ExportError as exc:
            result["err"] = str(exc)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():  # unblock the reader so the test process can exit
        with open(fifo, "w"):
            pass
        pytest.fail("export_html blocked on a FIFO")
    assert "FIFO" in result["err"]


def test_directory_and_empty_path_are_refused(tmp_path):
    with pytest.raises(ExportError, match="directory"):
        export_html(tmp_path, tmp_path / "out.html")
    with pytest.raises(FileReadError, match="empty"):
        export_html("", tmp_path / "out.html")


def test_byte_cap_holds_whatever_stat_says(tmp_path, monkeypatch):
    big = tmp_path / "big.ipynb"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(FileReadError, match="larger than 4,096 bytes"):
        read_bytes_capped(big, 4096, "notebook")
    assert read_bytes_capped(big, 5000) == b"x" * 5000
    import txlab.export as E

    monkeypatch.setattr(E, "MAX_NOTEBOOK_BYTES", 1000)
    with pytest.raises(ExportError, match="larger than"):
        export_html(big, tmp_path / "out.html")


def test_dev_zero_through_the_helper_is_refused():
    with pytest.raises(FileReadError, match="not a regular file"):
        read_bytes_capped("/dev/zero", 1 << 20)
    with pytest.raises(FileReadError, match="not a regular file"):
        read_bytes_capped("/proc/self", 1 << 20)


def test_a_real_notebook_path_still_exports(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("**bold** and `code`")]
    src = tmp_path / "plain.ipynb"
    nbformat.write(nb, src)
    link = tmp_path / "link.ipynb"
    link.symlink_to(src)
    r = export_html(link, tmp_path / "out.html")
    assert "<strong>bold</strong>" in r.path.read_text()


def test_not_json_is_an_export_error(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_bytes(b"\xff\xfe not json")
    with pytest.raises(ExportError, match="not a notebook"):
        export_html(bad, tmp_path / "out.html")


# ---- item 6: sanitizing (static checks; tests/test_export_sanitize_browser.py runs the page) ------
@pytest.mark.parametrize("name", sorted(MARKUP))
def test_sanitizer_removes_each_payload(name):
    out = sanitize_html(MARKUP[name].replace("%s", "t")).lower()
    for bad in (
        "<script",
        "onerror",
        "onload",
        "ontoggle",
        "javascript:",
        "<iframe",
        "srcdoc",
        "<object",
        "<meta",
        "<form",
        "<svg",
    ):
        assert bad not in out, (name, out)


def test_sanitizer_keeps_ordinary_markup_and_txlabs_html():
    from txlab.display import code_html

    html = "<table class='x'><tr><td style='color: red'>1</td></tr></table><img src='data:image/png;base64,AA=='>"
    out = sanitize_html(html)
    assert "<table" in out and 'style="color: red"' in out and "data:image/png" in out
    tabs = '<style>.a{}</style><input type="radio" name="txlab1" id="txlab1-sass" checked><label for="txlab1-sass">SASS</label>'
    out = sanitize_html(tabs + code_html("x = 1", "python"))
    assert "<style>" in out and 'type="radio"' in out and 'for="txlab1-sass"' in out and "checked" in out


def test_untrusted_export_keeps_txlab_widget_and_drops_foreign_one(tmp_path):
    nb = hostile_notebook(txlab_widget)
    r = export_html(nb, tmp_path / "out.html")
    html = r.path.read_text()
    assert not r.trusted and len(r.dropped_widget_models) == 1 and "AnyModel" in r.dropped_widget_models[0]
    assert "foreign widget ran" not in html
    assert "js-output" not in html
    assert "<title>&lt;/title&gt;" in html
    assert "built from widgets" in html  # txlab's own widget module is there
    rt = export_html(nb, tmp_path / "trusted.html", trusted=True)
    assert rt.trusted and not rt.dropped_widget_models and "js-output" in rt.path.read_text()
