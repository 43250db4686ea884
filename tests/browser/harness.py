"""Drive txlab's widgets in a real JupyterLab with headless Chromium (Playwright, Python).

Used by tests/test_browser.py, tests/test_widget_security.py and benchmarks/browser_latency.py.
Chromium comes from the system (Debian's ``chromium``; ``TXLAB_CHROMIUM`` overrides the path);
Playwright's own browser download (``playwright install``) is never used.

    with lab_server(notebook_dir) as url, browser() as ctx:
        page = open_notebook(ctx, url, "04_pipelines.ipynb")
        run_all(page)
        for w in widgets(page): ...
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "browser"
CHROMIUM = os.environ.get("TXLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: console messages that are JupyterLab's own noise in an offline, token-less server, not widget
#: errors (each entry is a substring; keep this list short and explain every entry)
BENIGN_CONSOLE = (
    # requests this harness aborts on purpose (anything not on 127.0.0.1, e.g. news/announcements)
    "net::ERR_FAILED",
    "net::ERR_INTERNET_DISCONNECTED",
)


def widget_names() -> list[str]:
    """Every widget bundle (``txlab/static/<name>.js``): new widgets are picked up automatically."""
    return sorted(p.stem for p in (ROOT / "txlab" / "static").glob("*.js"))


def skip_reason() -> str | None:
    """Why browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (install Debian's `chromium` with apt, or set TXLAB_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright (Python) is not installed: pip install -e '.[test]'"
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "jupyterlab is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def lab_server(root_dir: Path, *, timeout: float = 90.0):
    """A token-less JupyterLab on a free localhost port serving ``root_dir``; yields its URL."""
    port = free_port()
    env = dict(os.environ)
    # a private Jupyter config/runtime/data so the user's settings and workspaces do not leak in
    private = Path(tempfile.mkdtemp(prefix="txlab-jupyter-"))
    env.update(
        JUPYTER_CONFIG_DIR=str(private / "config"),
        JUPYTER_RUNTIME_DIR=str(private / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(private / "workspaces"),
        PYTHONUNBUFFERED="1",
    )
    env.setdefault("TXLAB_CACHE_DIR", str(private / "txlab-cache"))
    # the kernel must import this checkout's txlab
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--ServerApp.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        "--allow-root",
        f"--ServerApp.root_dir={root_dir}",
        "--ServerApp.port_retries=0",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    # no announcements/news toast (it covers widgets in screenshots and wants the network)
    (private / "config" / "labconfig").mkdir(parents=True)
    (private / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    log = open(private / "server.log", "wb")  # noqa: SIM115 - the server writes into it until the fixture stops it
    proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited ({proc.returncode}):\n"
                    + (private / "server.log").read_text(errors="replace")[-3000:]
                )
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(private, ignore_errors=True)


@dataclass
class Console:
    """Console errors and uncaught page errors collected from a page."""

    errors: list = field(default_factory=list)

    def attach(self, page):
        def on_console(msg):
            if msg.type == "error":
                self.errors.append(f"console: {msg.text} @ {msg.location.get('url', '')}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        return self

    def real(self) -> list[str]:
        return [e for e in self.errors if not any(b in e for b in BENIGN_CONSOLE)]


@contextlib.contextmanager
def browser(*, viewport=(1400, 1000)):
    """A Playwright persistent Chromium context with a fresh user-data-dir; only 127.0.0.1 is
    reachable (everything else is aborted, so nothing waits on the network)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="txlab-chromium-")
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": viewport[0], "height": viewport[1]},
            device_scale_factor=1,
            color_scheme="light",
        )

        local = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")
        ctx.route(lambda u: not u.startswith(local), lambda r: r.abort())
        try:
            yield ctx
        finally:
            ctx.close()
            shutil.rmtree(profile, ignore_errors=True)


def copy_notebooks(dest: Path, names=None) -> Path:
    """Copy notebooks/ (or the named notebooks) into ``dest`` (tests never touch the originals)."""
    src = ROOT / "notebooks"
    dest.mkdir(parents=True, exist_ok=True)
    for nb in sorted(src.glob("*.ipynb")):
        if names is None or nb.name in names:
            set_kernel(nb, dest / nb.name)
    return dest


def set_kernel(src: Path, dest: Path) -> None:
    """Copy a notebook, naming this Python's kernel (committed notebooks may carry no kernelspec,
    which makes JupyterLab ask with a dialog)."""
    import nbformat

    nb = nbformat.read(src, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, dest)


def open_notebook(ctx, url: str, name: str, console: Console | None = None):
    """Open ``name`` in JupyterLab (fresh workspace) and wait for its kernel to be idle."""
    page = ctx.new_page()
    if console is not None:
        console.attach(page)
    page.goto(f"{url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    wait_kernel_idle(page, timeout=120)
    return page


def wait_kernel_idle(page, timeout: float = 120):
    """Wait until the notebook has a running, idle kernel."""
    page.wait_for_function(
        """() => {
            const p = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            if (!p) return false;
            const name = p.querySelector('.jp-KernelName');
            const s = p.querySelector('.jp-Notebook-ExecutionIndicator');
            return name && !/No Kernel/.test(name.textContent) && s && s.getAttribute('data-status') === 'idle';
        }""",
        timeout=timeout * 1000,
        polling=200,
    )


def run_all(page, timeout: float = 600):
    """Run every cell (Run menu → Run All Cells) and wait until the kernel is done. JupyterLab
    stops at the first cell that raises, so a cell left unexecuted means an error: raises
    AssertionError with the output of the cell that failed."""
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    prompts = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"
    page.wait_for_function(
        """(sel) => {
            const ps = [...document.querySelectorAll(sel)];
            const s = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
            return ps.length > 0 && !ps.some((p) => p.textContent.includes('*')) && /\\d/.test(ps[0].textContent) &&
                   (ps.every((p) => /\\[\\d+\\]/.test(p.textContent)) || (s && s.getAttribute('data-status') === 'idle'));
        }""",
        arg=prompts,
        timeout=timeout * 1000,
        polling=250,
    )
    wait_kernel_idle(page, timeout)
    problems = cell_errors(page)
    if problems:
        raise AssertionError("a cell failed in the browser:\n" + "\n".join(problems))


def cell_errors(page) -> list[str]:
    """Unexecuted code cells after Run All, with the output of the last executed cell (the one
    that raised). Empty when every cell ran."""
    return page.evaluate("""() => {
        const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')];
        const ran = cells.map((c) => /\\[\\d+\\]/.test(c.querySelector('.jp-InputPrompt').textContent));
        const first = ran.indexOf(false);
        if (first < 0) return [];
        const culprit = cells[Math.max(0, first - 1)];
        const out = culprit.querySelector('.jp-OutputArea');
        return [`code cell ${first + 1} of ${cells.length} did not run; output of the cell before it:\n` +
                (out ? out.innerText.slice(-3000) : '(none)')];
    }""")


_FIND_WIDGETS = """(names) => {
    const out = [];
    for (const name of names) {
        for (const el of document.querySelectorAll(`.txlab-${name}`)) {
            if (el.parentElement && el.parentElement.closest(`.txlab-${name}`)) continue;  // outermost
            out.push(name);
            el.setAttribute('data-txlab-probe', `${name}-${out.filter((n) => n === name).length - 1}`);
        }
    }
    return out;
}"""


def widgets(page) -> list[tuple[str, str]]:
    """(widget name, CSS selector) of every txlab widget root on the page, in document order per
    name; the selector stays valid while the widget is shown."""
    names = page.evaluate(_FIND_WIDGETS, widget_names())
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append((n, f"[data-txlab-probe='{n}-{k}']"))
    return out


#: a fingerprint of what a widget shows: visible text, form values and every canvas's pixels
_SNAPSHOT = """(root) => {
    const el = document.querySelector(root);
    if (!el) return null;
    const canv = [...el.querySelectorAll('canvas')].map((c) => {
        try { return c.width + 'x' + c.height + ':' + c.toDataURL(); } catch (e) { return 'tainted'; }
    });
    const vals = [...el.querySelectorAll('input,select')].map((i) => i.type === 'checkbox' ? String(i.checked) : i.value);
    const tips = [...el.querySelectorAll('.txlab-tip')].map((t) => t.style.display + ':' + t.textContent);
    return JSON.stringify({ text: el.innerText, vals, tips, canv });
}"""


def snapshot(page, selector: str) -> str:
    return page.evaluate(_SNAPSHOT, selector)


def changed_parts(before: str, after: str) -> list[str]:
    b, a = json.loads(before), json.loads(after)
    return [k for k in b if b[k] != a[k]]


def screenshot(page, name: str, selector: str | None = None) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if selector:
        page.locator(selector).screenshot(path=str(path))
    else:
        page.screenshot(path=str(path), full_page=True)
    return path


# ------------------------------------------------------------------------------------------------
# interactions: each returns after the action; `drive` checks that the view changed
# ------------------------------------------------------------------------------------------------
def _tid(sel: str, testid: str) -> str:
    return f"{sel} [data-testid='{testid}']"


def _click_range(page, loc, frac=0.3):
    loc.scroll_into_view_if_needed()
    box = loc.bounding_box()
    page.mouse.click(box["x"] + box["width"] * frac, box["y"] + box["height"] / 2)


def _wheel(page, loc, dy=-500, fx=0.6, fy=0.5):
    loc.scroll_into_view_if_needed()
    box = loc.bounding_box()
    page.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
    page.mouse.wheel(0, dy)


def _hover_until_tip(page, sel, loc, points):
    """Move the mouse over ``points`` (fractions of the canvas, or pixel offsets when > 1) until a
    tooltip shows; returns the tooltip text or None."""
    # up to three sweeps, each from a fresh bounding box: while a long notebook is still laying out its
    # outputs the canvas can move between the measurement and the mouse moves
    for sweep in range(3):
        loc.scroll_into_view_if_needed()
        box = loc.bounding_box()
        for fx, fy in points:
            x = box["x"] + (fx if fx > 1 else fx * box["width"])
            y = box["y"] + (fy if fy > 1 else fy * box["height"])
            page.mouse.move(x, y, steps=2)
            page.wait_for_timeout(60 * (sweep + 1))
            text = page.evaluate(
                "(s) => [...document.querySelectorAll(s + ' .txlab-tip')].filter(t => t.style.display !== 'none').map(t => t.textContent).join('|')",
                sel,
            )
            if text:
                return text
    return None


def _grid(fx0=0.05, fx1=0.95, fys=(0.2, 0.4, 0.6, 0.8), n=12):
    return [(fx0 + (fx1 - fx0) * i / (n - 1), fy) for fy in fys for i in range(n)]


def timeline_steps(page, sel):
    cv = page.locator(_tid(sel, "timeline-canvas"))
    return [
        ("wheel-zoom the timeline canvas", lambda: _wheel(page, cv)),
        ("click the zoom-out button", lambda: page.locator(_tid(sel, "timeline-zoom-out")).click()),
        (
            "hover an event (tooltip)",
            lambda: _hover_until_tip(
                page, sel, cv, [(175 + 40 * i, 22 + 16 + 3 + dy) for dy in (6, 10) for i in range(25)]
            ),
            {"tips"},
        ),
        ("toggle a legend entry", lambda: page.locator(_tid(sel, "timeline-legend-item")).first.click()),
    ]


def pipeline_steps(page, sel):
    return [
        ("click the step slider", lambda: _click_range(page, page.locator(_tid(sel, "pipeline-slider")), 0.3)),
        # (ArrowLeft/Right are swallowed by JupyterLab's shortcuts; see test_arrow_keys_reach_sliders)
        ("press Home on the step slider", lambda: page.locator(_tid(sel, "pipeline-slider")).press("Home")),
        (
            "hover the swimlanes (tooltip)",
            lambda: _hover_until_tip(page, sel, page.locator(_tid(sel, "pipeline-lanes")), _grid()),
            {"tips"},
        ),
    ]


def pool_steps(page, sel):
    cv = page.locator(_tid(sel, "pool-smem-canvas"))
    return [
        # a few pixels in first: the buffer at byte 0 of a small plan is a sliver of the map (the
        # axis runs to the arch limit), narrower than the grid's spacing
        (
            "hover the smem map (tooltip)",
            lambda: _hover_until_tip(
                page, sel, cv, [(4, fy) for fy in (0.3, 0.5, 0.7)] + _grid(0.02, 0.6, (0.3, 0.5, 0.7))
            ),
            {"tips"},
        ),
        ("wheel-zoom the smem map", lambda: _wheel(page, cv, fx=0.3)),
        ("click zoom reset", lambda: page.locator(_tid(sel, "pool-reset")).click()),
    ]


def _set_number(page, loc, value):
    """Type a value and leave the field with Tab (commits it; Enter does not inside JupyterLab,
    see test_enter_commits_number_fields)."""
    loc.scroll_into_view_if_needed()
    loc.fill(str(value))
    loc.press("Tab")


def schedule_steps(page, sel):
    wave = page.locator(_tid(sel, "wave"))
    num = page.locator(_tid(sel, "num_ctas-left"))
    return [
        ("scrub the wave slider (End)", lambda: (wave.focus(), wave.press("End"))),
        ("scrub the wave slider (Home)", lambda: wave.press("Home")),
        ("change num_ctas on the left (Python re-trace)", lambda: _set_number(page, num, 50), {"text", "canv"}),
        ("colour by step", lambda: page.locator(_tid(sel, "color-by")).select_option("step")),
    ]


def generic_steps(page, sel):
    """For a widget without its own steps: its first slider, canvas or button."""
    ranges = page.locator(f"{sel} input[type=range]")
    if ranges.count():
        return [("click its first slider", lambda: _click_range(page, ranges.first, 0.7))]
    canv = page.locator(f"{sel} canvas")
    if canv.count():
        return [("wheel over its first canvas", lambda: _wheel(page, canv.first))]
    return [("click its first button", lambda: page.locator(f"{sel} button").first.click())]


def api_steps(page, sel):
    search = page.locator(_tid(sel, "api-search"))
    return [
        ("type a search query", lambda: (search.click(), search.fill("other")), {"text"}),
        ("click an entry", lambda: page.locator(_tid(sel, "api-item")).first.click(), {"text"}),
        ("clear the search", lambda: search.fill(""), {"text"}),
    ]


def _other_option(select, *avoid):
    """A value of ``select`` that is none of the values of the ``avoid`` selects (else any other
    than its own): the parameters come from the sweep that is shown."""
    values = select.evaluate("e => [...e.options].map(o => o.value)")
    taken = {select.input_value()} | {a.input_value() for a in avoid}
    return next((v for v in values if v not in taken), None) or next(v for v in values if v != select.input_value())


def tune_steps(page, sel):
    heat = page.locator(_tid(sel, "tune-heatmap"))
    # the table's first column is the sweep's first parameter (whatever this sweep calls it)
    first_col = page.locator(f"{sel} [data-testid^='tune-sort-']").first
    heat_y = page.locator(_tid(sel, "tune-heat-y"))
    return [
        ("sort the table by its first parameter", lambda: first_col.click(), {"text"}),
        ("sort it again (descending)", lambda: first_col.click(), {"text"}),
        (
            "hover the heatmap (tooltip)",
            lambda: _hover_until_tip(page, sel, heat, _grid(0.2, 0.9, (0.2, 0.5))),
            {"tips"},
        ),
        (
            "heatmap over another parameter",
            lambda: heat_y.select_option(_other_option(heat_y, page.locator(_tid(sel, "tune-heat-x")))),
            {"canv"},
        ),
    ]


def source_steps(page, sel):
    user = page.locator(_tid(sel, "source-pane-user") + " .r[data-u]")
    sass = page.locator(_tid(sel, "source-pane-sass") + " .r[data-u]")
    return [
        ("hover a TVMScript line (counterparts highlighted)", lambda: user.nth(user.count() // 2).hover(), {"text"}),
        ("click a SASS instruction (pins its line)", lambda: sass.nth(sass.count() // 2).click()),
        ("hide lines without SASS", lambda: page.locator(_tid(sel, "source-code-only")).check()),
    ]


def diff_steps(page, sel):
    return [
        ("click a line (its SASS side by side)", lambda: page.locator(_tid(sel, "diff-row")).last.click(), {"text"}),
        ("next change", lambda: page.locator(_tid(sel, "diff-next")).click(), {"text"}),
        ("changed lines only", lambda: page.locator(_tid(sel, "diff-changed-only")).check(), {"text", "vals"}),
    ]


STEPS = {
    "tune": tune_steps,
    "source": source_steps,
    "api": api_steps,
    "timeline": timeline_steps,
    "pipeline": pipeline_steps,
    "pool": pool_steps,
    "schedule": schedule_steps,
    "diff": diff_steps,
}


def drive(page, name: str, sel: str, *, timeout: float = 20.0) -> list[tuple[str, list[str]]]:
    """Run every interaction step on one widget; returns [(step, changed parts)]. A step that
    changes nothing within ``timeout`` seconds raises AssertionError."""
    steps = STEPS.get(name, generic_steps)(page, sel)
    done = []
    for what, act, *need in steps:
        need = set(need[0]) if need else set()  # parts that must change (default: any)
        before = snapshot(page, sel)
        act()
        deadline = time.monotonic() + timeout
        while True:
            page.wait_for_timeout(50)
            after = snapshot(page, sel)
            parts = set(changed_parts(before, after))
            if parts and need <= parts:
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{name} widget ({sel}): '{what}' changed {sorted(parts) or 'nothing'}"
                    f" in {timeout:.0f} s (needed {sorted(need) or 'any change'})"
                )
        done.append((what, changed_parts(before, after)))
    return done
