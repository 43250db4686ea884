"""User-controlled strings shown by widgets are escaped: every widget is rendered in JupyterLab
(headless Chromium) with `<img src=x onerror=...>` in every name it shows (timeline event and
track names, pipeline role names, pool buffer and kernel names, scheduler names that reach an
error message), then hovered and driven so tooltips and re-renders show the names too. The test
asserts that no script ran (window.__pwned stays undefined), that no <img> element appeared in
any widget, and that the names are visible as literal text.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import cases, harness as H  # noqa: E402

PAYLOAD = "<img src=x onerror=window.__pwned=1>"
_REASON = H.skip_reason()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]


def test_payload_is_the_one_described():
    # the payload really executes when it is inserted as HTML (so the browser test can fail)
    assert "onerror=" in PAYLOAD and PAYLOAD.startswith("<img")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    missing = [n for n in H.widget_names() if n not in cases.CASES]
    assert not missing, (
        f"widget bundle(s) {missing} have no case in tests/browser/cases.py, so their escaping is untested"
    )
    root = tmp_path_factory.mktemp("xss")
    cases.notebook(PAYLOAD, H.widget_names(), root / "xss.ipynb")
    with H.lab_server(root) as url, H.browser() as ctx:
        console = H.Console()
        pg = H.open_notebook(ctx, url, "xss.ipynb", console)
        H.run_all(pg)
        yield pg


def test_control_the_payload_fires_when_injected(page):
    """Positive control: the same string set as innerHTML in this page does run (window.__pwned
    becomes 1), so a widget that did that would be caught."""
    assert page.evaluate("typeof window.__pwned") == "undefined", "a widget ran the injected handler"
    page.evaluate(
        "(p) => { const d = document.createElement('div'); d.innerHTML = p; "
        "document.body.append(d); window.__control = d; }",
        PAYLOAD,
    )
    page.wait_for_function("window.__pwned === 1", timeout=5000)
    page.evaluate("() => { window.__control.remove(); delete window.__pwned; }")


@pytest.mark.parametrize("name", H.widget_names())
def test_widget_escapes_user_strings(page, name):
    found = [sel for n, sel in H.widgets(page) if n == name]
    assert found, f"the {name} widget did not render"
    sel = found[0]
    # drive it: tooltips, re-renders and error paths show the names again
    try:
        H.drive(page, name, sel, timeout=10)
    except AssertionError:
        pass  # escaping is what this test checks; interactions are checked by test_browser
    page.wait_for_timeout(300)
    H.screenshot(page, f"xss-{name}", sel)
    state = page.evaluate(
        """(sel) => {
        const el = document.querySelector(sel);
        return { pwned: typeof window.__pwned, imgs: el.querySelectorAll('img').length,
                 text: el.innerText, tips: [...el.querySelectorAll('.txlab-tip')].map(t => t.textContent).join('\\n') };
    }""",
        sel,
    )
    assert state["pwned"] == "undefined", f"{name}: the injected onerror handler ran"
    assert state["imgs"] == 0, f"{name}: an <img> element was injected"
    shown = state["text"] + state["tips"]
    if name != "timeline":  # the timeline draws names on a canvas; its legend is checked below
        assert PAYLOAD in shown, f"{name}: the name is not shown as literal text:\n{shown[:800]}"
    else:
        legend = page.locator(f"{sel} [data-testid='timeline-legend']").inner_text()
        assert PAYLOAD in legend, legend
