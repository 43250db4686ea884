"""Exported HTML (txlab.export) in headless Chromium with the network cut off: every txlab widget
renders from the saved widget state, nothing is requested from a CDN (or anywhere), the page logs
no errors, and the widgets' browser-side interactions work. Screenshots go to build/browser/.

    .venv/bin/python -m pytest -m browser tests/test_export_browser.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import cases, harness as H  # noqa: E402
from browser.offline import canvas_ink, offline_page  # noqa: E402

_REASON = H.skip_reason()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]

NAMES = sorted(n for n in H.widget_names() if n in cases.CASES)
#: steps in tests/browser/harness.py that need the kernel (Python recomputes); a static page has none
NEEDS_KERNEL = "Python"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The widget gallery (one cell per widget), executed with nbclient and exported."""
    import nbformat
    from nbclient import NotebookClient

    from txlab.export import export_html

    root = tmp_path_factory.mktemp("export")
    src = root / "gallery.ipynb"
    cases.notebook("offline label", NAMES, src)
    nb = nbformat.read(src, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", store_widget_state=True, resources={"metadata": {"path": str(root)}}
    ).execute()
    failed = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not failed, f"gallery cell failed: {failed[0].get('ename')}: {failed[0].get('evalue')}"
    r = export_html(nb, root / "gallery.html")
    print(
        f"exported gallery: {r.html_bytes / 1024:.0f} KiB, {r.widget_views} widgets, "
        f"renderer {r.renderer_bytes / 1024:.0f} KiB"
    )
    assert r.widget_views == len(NAMES)
    return r.path


def _roots(page, names, timeout=20.0):
    """{name: selector} of the outermost .txlab-<name> roots, once every name has one."""
    deadline = time.monotonic() + timeout
    while True:
        found = dict(H.widgets(page))
        if set(names) <= set(found) or time.monotonic() > deadline:
            return found
        page.wait_for_timeout(100)


def _check_rendered(page, name, sel):
    text = page.locator(sel).inner_text().strip()
    ink = canvas_ink(page, sel)
    assert text, f"{name}: the widget root is empty"
    assert not ink or max(ink) > 100, f"{name}: every canvas is blank (pixels differing per canvas: {ink})"
    return text, ink


def test_every_widget_renders_offline(exported):
    with offline_page(exported) as (page, console, blocked):
        found = _roots(page, NAMES)
        missing = sorted(set(NAMES) - set(found))
        assert not missing, f"widgets that did not render offline: {missing}"
        assert page.locator(".txlab-export-error").count() == 0, page.locator(".txlab-export-error").first.inner_text()
        for name in NAMES:
            text, ink = _check_rendered(page, name, found[name])
            assert "offline label" in text, f"{name}: the saved state's label is not shown: {text[:200]!r}"
            print(f"{name}: {len(text)} chars of text, canvases with ink: {ink}")
            H.screenshot(page, f"export-{name}", found[name])
        H.screenshot(page, "export-gallery")
        assert not blocked, f"the exported page requested from the network: {blocked}"
        assert not console.errors, "console errors:\n" + "\n".join(console.errors)


def test_browser_side_interactions_work_offline(exported):
    """Every interaction of tests/browser/harness.py that needs no kernel changes the view in the
    static page; the one that needs Python (schedule: num_ctas re-trace) changes only its field."""
    with offline_page(exported) as (page, console, blocked):
        found = _roots(page, NAMES)
        log = []
        for name in NAMES:
            sel = found[name]
            for what, act, *need in H.STEPS[name](page, sel):
                need = set(need[0]) if need else set()
                before = H.snapshot(page, sel)
                act()
                if NEEDS_KERNEL in what:
                    page.wait_for_timeout(1000)
                    parts = set(H.changed_parts(before, H.snapshot(page, sel)))
                    assert parts <= {"vals"}, f"{name}: '{what}' changed {sorted(parts)} with no kernel"
                else:
                    deadline = time.monotonic() + 10
                    while True:
                        page.wait_for_timeout(50)
                        parts = set(H.changed_parts(before, H.snapshot(page, sel)))
                        if parts and need <= parts:
                            break
                        assert time.monotonic() < deadline, (
                            f"{name}: '{what}' changed {sorted(parts) or 'nothing'} in the offline page "
                            f"(needed {sorted(need) or 'any change'})"
                        )
                log.append((name, what, sorted(parts)))
        for entry in log:
            print("%s: %s -> %s" % entry)
        # the brief's example, spelled out: scrubbing the schedule's wave slider redraws the grid
        sel = found["schedule"]
        wave = page.locator(f"{sel} [data-testid='wave']")
        wave.focus()
        wave.press("Home")
        before = H.snapshot(page, sel)
        wave.press("End")
        page.wait_for_timeout(300)
        assert "canv" in H.changed_parts(before, H.snapshot(page, sel)), "the wave slider did not redraw the grid"
        assert sum(1 for n, w, _ in log if NEEDS_KERNEL not in w) >= 12
        assert not blocked, f"the exported page requested from the network: {blocked}"
        assert not console.errors, "console errors:\n" + "\n".join(console.errors)


def test_tour_export_renders_offline(tmp_path):
    """`make demo`'s command: python -m txlab.tour notebooks/00_tour.ipynb OUT.html."""
    out = tmp_path / "tour.html"
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(H.ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
    )
    r = subprocess.run(
        [sys.executable, "-m", "txlab.tour", str(H.ROOT / "notebooks" / "00_tour.ipynb"), str(out)],
        cwd=H.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    print(r.stdout)
    with offline_page(out) as (page, console, blocked):
        views = page.locator("script[type='application/vnd.jupyter.widget-view+json']").count()
        deadline = time.monotonic() + 20
        while page.locator(".widget-subarea").count() < views and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        assert views >= 2 and page.locator(".widget-subarea").count() == views
        found = H.widgets(page)
        assert found, "no txlab widget rendered in the tour"
        for name, sel in found:
            _check_rendered(page, name, sel)
        assert page.locator(".txlab-export-error").count() == 0
        H.screenshot(page, "export-tour")
        assert not blocked, f"the tour page requested from the network: {blocked}"
        assert not console.errors, "console errors:\n" + "\n".join(console.errors)
