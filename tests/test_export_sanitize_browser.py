"""An exported untrusted notebook runs none of its own script in headless Chromium (issue 20,
item 6): <script> in markdown, <img onerror>, <svg><script>, <svg onload>, iframe srcdoc,
javascript: links and forms, <details ontoggle>, <object data>, HTML / markdown / JavaScript / SVG
outputs, raw HTML cells, the notebook title, ipywidgets HTML values and foreign anywidget modules.
txlab's own widget still renders. The same notebook exported with trusted=True does run its
scripts: that is the control showing the detection works.

    .venv/bin/python -m pytest tests/test_export_sanitize_browser.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import harness as H  # noqa: E402
from _hostile_notebook import hostile_notebook, txlab_widget  # noqa: E402

_REASON = H.skip_reason()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]

LOCAL = ("file:", "data:", "blob:", "about:")


def _pwned(html: Path) -> tuple[list, list, int]:
    """(payload tags that ran, dialogs opened, txlab widget roots rendered)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=H.CHROMIUM, headless=True, args=H.CHROMIUM_ARGS)
        try:
            ctx = b.new_context(viewport={"width": 1200, "height": 900})
            ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(LOCAL) else r.abort())
            ctx.add_init_script("window.__pwned = window.__pwned || [];")
            page = ctx.new_page()
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(html.resolve().as_uri(), wait_until="load")
            page.wait_for_function(
                "document.documentElement.dataset.txlabWidgets === 'rendered'", timeout=60_000, polling=100
            )
            page.wait_for_timeout(800)  # img onerror, svg onload, iframes load asynchronously
            # what needs a click: javascript: links and form actions
            page.evaluate("""() => {
                for (const a of document.querySelectorAll('a')) {
                    const t = a.textContent.trim();
                    if (t === 'click' || t === 'md link') a.click();
                }
                for (const b of document.querySelectorAll('button[id$="-submit"]')) b.click();
            }""")
            page.wait_for_timeout(500)
            ran = page.evaluate("() => [...(window.__pwned || [])]")
            frames = [f for f in page.frames if f != page.main_frame]
            for f in frames:
                try:
                    ran += f.evaluate("() => [...(window.__pwned || [])]")
                except Exception:  # noqa: BLE001 - a detached or cross-origin frame
                    pass
            roots = page.locator(".txlab-pipeline").count()
            return ran, dialogs, roots
        finally:
            b.close()


@pytest.fixture(scope="module")
def hostile():
    return hostile_notebook(txlab_widget)


def test_untrusted_export_runs_no_notebook_script(hostile, tmp_path):
    from txlab.export import export_html

    r = export_html(hostile, tmp_path / "untrusted.html")
    ran, dialogs, roots = _pwned(r.path)
    assert ran == [] and dialogs == [], f"payloads that ran in the untrusted export: {ran} {dialogs}"
    assert roots >= 1, "txlab's own widget did not render"


def test_trusted_export_is_the_control(hostile, tmp_path):
    from txlab.export import export_html

    r = export_html(hostile, tmp_path / "trusted.html", trusted=True)
    ran, _, roots = _pwned(r.path)
    assert {"js-output", "md-script", "html-img", "foreign-esm"} <= set(ran), ran
    assert roots >= 1
