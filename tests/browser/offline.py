"""Open an exported HTML file (txlab.export) in headless Chromium with the network cut off.

Every request that is not file:, data: or blob: is aborted and recorded, so a test can assert
that the page asked for nothing on the network (a CDN script would show up here).

    with offline_page(path) as (page, console, blocked):
        ...
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from . import harness as H

LOCAL = ("file:", "data:", "blob:")

#: canvas pixels that are not all one colour (a drawn canvas), per canvas under a root
_CANVAS_INK = """(root) => [...document.querySelector(root).querySelectorAll('canvas')].map((c) => {
    if (!c.width || !c.height) return 0;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let differ = 0;
    for (let i = 4; i < d.length; i += 4)
        if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2] || d[i + 3] !== d[3]) differ++;
    return differ;
})"""


def canvas_ink(page, selector: str) -> list[int]:
    """For each canvas under ``selector``: how many pixels differ from its first pixel."""
    return page.evaluate(_CANVAS_INK, selector)


@contextlib.contextmanager
def offline_page(html: Path, *, viewport=(1400, 1000), timeout: float = 60.0):
    """A page showing ``html`` (via file://) once the offline renderer has rendered every widget;
    yields (page, Console, list of blocked URLs)."""
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=H.CHROMIUM, headless=True, args=H.CHROMIUM_ARGS)
        try:
            ctx = b.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1, color_scheme="light"
            )
            ctx.route("**/*", route)
            page = ctx.new_page()
            console = H.Console().attach(page)
            page.goto(Path(html).resolve().as_uri(), wait_until="load")
            page.wait_for_function(
                "document.documentElement.dataset.txlabWidgets === 'rendered'", timeout=timeout * 1000, polling=100
            )
            yield page, console, blocked
        finally:
            b.close()
