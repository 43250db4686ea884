"""Browser tests: JupyterLab + headless Chromium (Playwright) run every notebook and drive every
txlab widget with real mouse/keyboard input, asserting that the view changes (DOM text, form
values, tooltips or canvas pixels) and that the page logs no errors. Screenshots go to
build/browser/. New notebooks (notebooks/*.ipynb) and new widget bundles (txlab/static/*.js)
are picked up automatically; a bundle also needs a case in tests/browser/cases.py.

    make test-browser        (or: .venv/bin/python -m pytest -m browser tests/test_browser.py)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import cases, harness as H  # noqa: E402

NOTEBOOKS = sorted(p.name for p in (H.ROOT / "notebooks").glob("*.ipynb"))
_REASON = H.skip_reason()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    H.copy_notebooks(root)
    cases.notebook("gallery", [n for n in H.widget_names() if n in cases.CASES], root / "widget_gallery.ipynb")
    with H.lab_server(root) as url, H.browser() as ctx:
        yield url, ctx


def _run(lab, name):
    url, ctx = lab
    console = H.Console()
    page = H.open_notebook(ctx, url, name, console)
    H.run_all(page)
    return page, console


def _drive_all(page, stem):
    found = H.widgets(page)
    log = []
    for k, (name, sel) in enumerate(found):
        H.screenshot(page, f"{stem}-{name}{k}-before", sel)
        log += [(name, step, parts) for step, parts in H.drive(page, name, sel)]
        H.screenshot(page, f"{stem}-{name}{k}-after", sel)
    return found, log


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_runs_and_widgets_respond(lab, notebook):
    page, console = _run(lab, notebook)
    try:
        found, log = _drive_all(page, Path(notebook).stem)
        H.screenshot(page, Path(notebook).stem)
        for name, step, parts in log:
            print(f"{notebook}: {name}: {step} -> changed {parts}")
        assert not console.real(), f"{notebook}: console errors:\n" + "\n".join(console.real())
    finally:
        page.close()


def test_every_widget_has_a_case():
    missing = [n for n in H.widget_names() if n not in cases.CASES]
    assert not missing, (
        f"widget bundle(s) {missing} have no case in tests/browser/cases.py: add a "
        "cell that builds the widget with `label` in every user-visible string"
    )


def test_widget_gallery(lab):
    """Every widget bundle with a case renders (also those not yet used by a notebook) and reacts
    to real input."""
    page, console = _run(lab, "widget_gallery.ipynb")
    try:
        found, log = _drive_all(page, "gallery")
        shown = {n for n, _ in found}
        expected = {n for n in H.widget_names() if n in cases.CASES}
        assert shown == expected, f"widgets that did not render: {sorted(expected - shown)}"
        for name in expected:
            assert any(n == name for n, _, _ in log), name
        # the light theme is followed: the page background is JupyterLab's light layout colour
        assert page.evaluate("document.body.dataset.jpThemeLight") == "true"
        assert not console.real(), "console errors:\n" + "\n".join(console.real())
    finally:
        page.close()


def test_dark_theme_followed(lab):
    """Switching JupyterLab to its dark theme re-colours the widgets (canvas background is dark)."""
    url, ctx = lab
    console = H.Console()
    page = H.open_notebook(ctx, url, "widget_gallery.ipynb", console)
    try:
        page.locator(".lm-MenuBar-item", has_text="Settings").first.click()
        page.locator(".lm-Menu-item:visible", has_text="Theme").first.hover()
        page.locator(".lm-Menu-item:visible", has_text="JupyterLab Dark").first.click()
        page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        H.run_all(page)
        found = H.widgets(page)
        assert found
        dark = page.evaluate(
            """(sels) => sels.map((s) => {
            const c = document.querySelector(s + ' canvas');
            if (!c) return null;
            const px = c.getContext('2d').getImageData(1, 1, 1, 1).data;
            return 0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2];
        })""",
            [s for _, s in found],
        )
        H.screenshot(page, "gallery-dark")
        lum = {n: v for (n, _), v in zip(found, dark) if v is not None}
        assert lum and all(v < 128 for v in lum.values()), f"canvas corner luminance in dark theme: {lum}"
    finally:
        # back to light for the other tests (theme is a user setting of this server)
        page.locator(".lm-MenuBar-item", has_text="Settings").first.click()
        page.locator(".lm-Menu-item:visible", has_text="Theme").first.hover()
        page.locator(".lm-Menu-item:visible", has_text="JupyterLab Light").first.click()
        page.wait_for_function("document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
        page.close()


def test_arrow_keys_reach_sliders(lab):
    page, console = _run(lab, "widget_gallery.ipynb")
    try:
        moved = {}
        for name, sel in H.widgets(page):
            sliders = page.locator(f"{sel} input[type=range]")
            if not sliders.count():
                continue
            s = sliders.first
            s.press("Home")
            v0 = s.evaluate("e => e.value")
            s.press("ArrowRight")
            page.wait_for_timeout(300)
            moved[name] = s.evaluate("e => e.value") != v0
        assert moved and all(moved.values()), f"ArrowRight moved the slider: {moved}"
    finally:
        page.close()


def test_enter_commits_number_fields(lab):
    page, console = _run(lab, "widget_gallery.ipynb")
    try:
        sel = next(s for n, s in H.widgets(page) if n == "schedule")
        status = page.locator(f"{sel} [data-testid='status-left']")
        num = page.locator(f"{sel} [data-testid='num_ctas-left']")
        num.fill("44")
        num.press("Enter")
        page.wait_for_function(
            "(s) => document.querySelector(s).textContent.startsWith('44 CTAs')",
            arg=f"{sel} [data-testid='status-left']",
            timeout=10_000,
        )
        assert status.inner_text().startswith("44 CTAs")
    finally:
        page.close()
