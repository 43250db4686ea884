"""The committed widget bundles (txlab/static/*.js) are what widgets/build.mjs makes from
widgets/src/*.js, and every bundle belongs to a View subclass and follows the conventions the
browser tests rely on (root class txlab-<name>, data-testid on controls, no raw innerHTML)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "widgets"
SOURCES = sorted(p.stem for p in (WIDGETS / "src").glob("*.js") if not p.name.startswith("_"))
#: HTML assignment from an expression (a plain string literal without ${} is allowed)
RISKY_HTML = r"(?:innerHTML|outerHTML)\s*\+?=\s*(?=\S)(?![\"'`][^$\n]*[\"'`]\s*;)[^;\n]+|insertAdjacentHTML\([^)]*\)"
BUNDLES = sorted(p.stem for p in (ROOT / "txlab" / "static").glob("*.js"))


def _node_modules() -> str | None:
    """Make sure widgets/node_modules exists; returns a skip reason or None."""
    if not shutil.which("node"):
        return "node is not installed (needed to run widgets/build.mjs --check)"
    if (WIDGETS / "node_modules" / "esbuild").is_dir():
        return None
    npm = shutil.which("npm")
    if not npm:
        return "widgets/node_modules is missing and npm is not installed to create it"
    cmd = [npm, "ci"] if (WIDGETS / "package-lock.json").exists() else [npm, "install"]
    r = subprocess.run(cmd + ["--no-audit", "--no-fund"], cwd=WIDGETS, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"`{' '.join(cmd)}` in widgets/ failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return None


def test_committed_bundles_match_sources():
    reason = _node_modules()
    if reason:
        pytest.skip(reason)
    r = subprocess.run(["node", "build.mjs", "--check"], cwd=WIDGETS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"stale bundles: rebuild with `cd widgets && node build.mjs`\n{r.stdout}{r.stderr}"
    assert f"{len(SOURCES)} bundles match" in r.stdout, r.stdout


def test_every_source_has_a_bundle_and_no_orphans():
    assert SOURCES, "no widget sources found"
    assert set(SOURCES) == set(BUNDLES), (
        f"sources without bundle: {sorted(set(SOURCES) - set(BUNDLES))}; "
        f"bundles without source: {sorted(set(BUNDLES) - set(SOURCES))}"
    )


def _view_classes():
    import txlab.views
    from txlab.views import View

    out = {}
    for mod in pkgutil.iter_modules(txlab.views.__path__):
        if mod.name.startswith("_"):
            continue
        m = importlib.import_module(f"txlab.views.{mod.name}")
        for obj in vars(m).values():
            if isinstance(obj, type) and issubclass(obj, View) and obj is not View and obj.__module__ == m.__name__:
                out[obj._bundle] = obj
    return out


def test_every_bundle_has_a_view_and_loads():
    views = _view_classes()
    assert set(BUNDLES) <= set(views), f"bundles with no View subclass: {sorted(set(BUNDLES) - set(views))}"
    for name, cls in views.items():
        assert name in BUNDLES, f"{cls.__name__}._bundle = {name!r} but txlab/static/{name}.js does not exist"
    from txlab.views import bundle

    for name in BUNDLES:
        text = bundle(name)
        assert text.startswith(f"// built from widgets/src/{name}.js"), name
        assert re.search(r"export\s*\{[^}]*as default|export default", text), f"{name}: no default export"


@pytest.mark.parametrize("name", SOURCES)
def test_source_conventions(name):
    src = (WIDGETS / "src" / f"{name}.js").read_text()
    assert f"txlab-{name}" in src, f"{name}.js: the root element needs class txlab-{name}"
    assert "data-testid" in src or "dataset.testid" in src, f"{name}.js: controls need data-testid"
    assert "theme(" in src, f"{name}.js: colours must follow the JupyterLab theme via theme()"
    # innerHTML/outerHTML/insertAdjacentHTML with anything but a literal is an injection risk
    risky = re.findall(RISKY_HTML, src)
    assert not risky, f"{name}.js sets HTML from expressions (use h()/text nodes/esc()): {risky}"


def test_risky_html_pattern():
    bad = [
        "el.innerHTML = name;",
        "x.innerHTML = `<b>${n}</b>`;",
        "a.insertAdjacentHTML('beforeend', s)",
        "el.innerHTML = '<b>' + name;",
    ]
    ok = ['el.innerHTML = "";', "el.innerHTML = '<br>';", "el.textContent = name;"]
    assert all(re.findall(RISKY_HTML, s) for s in bad)
    assert not any(re.findall(RISKY_HTML, s) for s in ok)
