"""The one-way layers of DESIGN.md, kept true mechanically.

* ``lint-imports`` (import-linter, contracts in pyproject.toml): layers notebook/CLI -> views ->
  models -> engines, models and engines import nothing from Jupyter, the worker never imports the
  compiler or run.
* No import cycle among txlab modules, counting imports inside functions: the graph is built here
  from the source (ast), independent of import-linter.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "txlab"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """txlab module -> the txlab modules it imports anywhere in its body (module level, inside
    functions and methods, under ``if``/``try``). ``from txlab import cache`` is an import of
    ``txlab.cache``; it counts as importing the package root only for names that are not modules."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                found.update(subs)
                if len(subs) < len(node.names):
                    found.add(target)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycles_counting_function_level_imports():
    graph = import_graph()
    # the walk of a kernel goes down the layers: these edges exist (so the graph is read right) ...
    assert {"txlab.build", "txlab.ir"} <= graph["txlab.compiler"]
    worker = set().union(*(deps for m, deps in graph.items() if m == "txlab.worker" or m.startswith("txlab.worker.")))
    assert "txlab.launch" in worker and "txlab.build" in worker   # the worker package, all its modules
    assert "txlab.run" in graph["txlab.compiler"]        # Compiled.__call__, inside a method
    # ... and nothing climbs back
    assert not cycles(graph), cycles(graph)
    assert not worker & {"txlab.compiler", "txlab.run"}


def test_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_lint_imports_keeps_every_contract():
    """import-linter reads the package it imports: run it on this tree (PYTHONPATH), in this venv."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert "Contracts: " in out and " 0 broken" in out, out
    assert proc.returncode == 0, out
    assert str(ROOT / "txlab") in subprocess.run(
        [sys.executable, "-c", "import txlab, os; print(os.path.dirname(txlab.__file__))"],
        cwd=ROOT, env=env, capture_output=True, text=True).stdout  # it checked this tree


def test_views_and_displays_are_registered_under_real_class_names():
    """hooks and display key models by ``module.Class`` (no model imported there): a class that
    moves between modules must move its key too, else its widget and HTML silently vanish."""
    import importlib

    from txlab import display, views

    names = [tuple(k.rsplit(".", 1)) for k in views.VIEW_OF] + list(display.HTML_OF) + list(display.TEXT_OF)
    for module, cls in names:
        obj = getattr(importlib.import_module(module), cls, None)
        assert isinstance(obj, type) and obj.__module__ == module and obj.__qualname__ == cls, (module, cls)
