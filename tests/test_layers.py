"""The one-way layers of DESIGN.md, kept true mechanically.

* ``lint-imports`` (import-linter, contracts in pyproject.toml): layers notebook/CLI -> views ->
  models -> engines, models and engines import nothing from Jupyter, the worker never imports the
  compiler or run.
* No import cycle among txlab modules, counting imports inside functions: the graph is built here
  from the source (ast), independent of import-linter. Nor among top-level packages (each module
  collapsed to ``txlab.<package>``), so the sublayers of pyproject.toml cannot be dodged by a
  function-level import; nor inside a package, where reading a name through the package
  (``from txlab.tune import engine``) runs the package's ``__init__``.
* No first-party import through ``importlib`` / ``__import__`` / ``runpy``: every edge is one
  these checks see.
* A package's ``__init__.py`` re-exports only (imports, ``__all__``, a docstring; a lazy or
  deprecated-name ``__getattr__`` whose imports are written out).
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


def import_graph(through_packages: bool = False) -> dict[str, set[str]]:
    """txlab module -> the txlab modules it imports anywhere in its body (module level, inside
    functions and methods, under ``if``/``try``). ``from txlab import cache`` is an import of
    ``txlab.cache``; it counts as importing the package root only for names that are not modules.
    ``through_packages``: ``from txlab.tune import engine`` also counts as importing ``txlab.tune``
    (the package's namespace is read), except for the root package ``txlab``."""
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
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                found.update(subs)
                if len(subs) < len(node.names) or (through_packages and subs and target != "txlab"):
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
    assert "txlab.launch" in worker and "txlab.build" in worker  # the worker package, all its modules
    assert "txlab.run" in graph["txlab.compiler"]  # Compiled.__call__, inside a method
    # ... and nothing climbs back
    assert not cycles(graph), cycles(graph)
    assert not worker & {"txlab.compiler", "txlab.run"}


def package_of(module: str) -> str:
    """``txlab.tune.sweep`` -> ``txlab.tune``; ``txlab.run`` -> ``txlab.run``."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph with every module collapsed to its top-level package."""
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(package_of(m), set()).update(package_of(d) for d in deps if package_of(d) != package_of(m))
    for deps in list(out.values()):
        for d in deps:
            out.setdefault(d, set())
    return out


def test_no_package_level_cycles():
    """compiler -> run -> emulator -> api -> diagnose -> compiler was one; examples <-> timeline another."""
    pg = package_graph(import_graph())
    assert {"txlab.build", "txlab.run"} <= pg["txlab.compiler"]  # read right
    assert "txlab.examples" not in pg["txlab.timeline"]
    assert not cycles(pg), cycles(pg)


def test_no_cycles_inside_packages_through_their_init():
    """A submodule that reads its package's namespace runs the package's ``__init__``; the
    ``__init__`` imports the submodules: that is a cycle (``tune`` <-> ``tune.sweep`` was one).
    Inside a package, import a sibling by its module path (``from txlab.tune.engine import x``)."""
    graph = import_graph(through_packages=True)
    inside = [c for c in cycles(graph) if len({package_of(m) for m in c}) == 1]
    assert not inside, inside
    back = sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps if m.startswith(d + ".") and d != "txlab")
    assert not back, back


# txlab/__init__.py: its lazy loader (every import written out) and the hooks IPython looks for
_ROOT_FUNCTIONS = {"_module", "load_ipython_extension", "unload_ipython_extension"}
_PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def _reexport_problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if names and names <= {"__all__", "_EXPORTS", "_SUBMODULES", "_DEPRECATED", "_WIDGETS"}:
                continue  # tables the lazy __getattr__ reads
        if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__"):
            continue
        if path == PACKAGE / "__init__.py" and (
            isinstance(node, ast.FunctionDef)
            and node.name in _ROOT_FUNCTIONS
            or isinstance(node, ast.Assign)
            and ast.unparse(node) in ("_installed = _install_display()", "_uncaught_now = _install_uncaught()")
        ):
            continue  # the composition root: lazy names, IPython's hooks, the display install, TVM's excepthook
        out.append(
            f"{path.relative_to(ROOT)}:{node.lineno}: {type(node).__name__} {getattr(node, 'name', '')}".rstrip()
        )
    return out


def test_package_inits_reexport_only():
    problems = [p for pkg in _PACKAGES for p in _reexport_problems(pkg / "__init__.py")]
    assert not problems, "\n".join(problems)


def test_reexport_checker_catches_a_body(tmp_path):
    (tmp_path / "x.py").write_text('"""doc"""\nfrom a import b\n__all__ = ["b"]\n')
    (tmp_path / "y.py").write_text('"""doc"""\nfrom a import b\n\ndef f():\n    return 1\n\nclass C:\n    pass\n')
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _reexport_problems(tmp_path / "x.py") == []
        assert [p.split(": ")[1] for p in _reexport_problems(tmp_path / "y.py")] == ["FunctionDef f", "ClassDef C"]
    finally:
        ROOT = saved


def test_no_first_party_import_through_importlib():
    """``importlib.import_module("txlab.x")`` is an edge neither lint-imports nor this file sees."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("import_module", "__import__", "run_module", "find_spec", "reload"):
                arg = node.args[0] if node.args else None
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                if not literal or arg.value.startswith(("txlab", ".")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not found, "\n".join(found)


def test_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_lint_imports_keeps_every_contract():
    """import-linter reads the package it imports: run it on this tree (PYTHONPATH), in this venv."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--no-cache",
            "--no-logo",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert "Contracts: " in out and " 0 broken" in out, out
    assert proc.returncode == 0, out
    assert (
        str(ROOT / "txlab")
        in subprocess.run(
            [sys.executable, "-c", "import txlab, os; print(os.path.dirname(txlab.__file__))"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
    )  # it checked this tree


def test_views_and_displays_are_registered_under_real_class_names():
    """hooks and display key models by ``module.Class`` (no model imported there): a class that
    moves between modules must move its key too, else its widget and HTML silently vanish."""
    import importlib

    from txlab import display, views

    names = [tuple(k.rsplit(".", 1)) for k in views.VIEW_OF] + list(display.HTML_OF) + list(display.TEXT_OF)
    for module, cls in names:
        obj = getattr(importlib.import_module(module), cls, None)
        assert isinstance(obj, type) and obj.__module__ == module and obj.__qualname__ == cls, (module, cls)


def test_lazy_views_are_listed_for_completion_and_suggestions():
    """``txlab.views.<TAB>`` offers the widgets (imported on first use), and a typo gets Python's
    "Did you mean" (it reads ``dir()`` of the module)."""
    from txlab import views

    assert {"SourceView", "TimelineView", "ScheduleView"} <= set(dir(views))
    err = subprocess.run(
        [sys.executable, "-c", "import txlab.views as v; v.SourceViw"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    ).stderr
    assert "Did you mean: 'SourceView'?" in err, err


def test_html_only_through_display():
    """Models are pure Python: their notebook HTML is an IPython formatter in ``txlab.display``
    (registered by class name), never a ``_repr_html_`` of their own."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel.startswith("txlab/views/") or rel == "txlab/display.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef) and node.name == "_repr_html_":
                found.append(f"{rel}:{node.lineno}")
    assert not found, found


def test_every_result_with_html_is_registered_in_display():
    from txlab import display

    for key in [
        ("txlab.sanitizer.report", "SanitizerReport"),
        ("txlab.profiling.measurements", "Profile"),
        ("txlab.profiling.compare", "ProfileDiff"),
        ("txlab.diff", "CompileDiff"),
        ("txlab.banks", "BankReport"),
        ("txlab.emulator.result", "EmulationResult"),
        ("txlab.sass.rows", "SassTable"),
        ("txlab.coalescing", "CoalescingReport"),
    ]:
        assert key in display.HTML_OF, key
