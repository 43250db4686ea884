"""Old spellings work for one release and say what replaced them (``DeprecationWarning``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import txlab

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "old,new",
    [
        ("SchedulerExplorer", "ScheduleView"),
        ("PipelineViewer", "PipelineView"),
        ("PoolMap", "PoolView"),
        ("APIExplorer", "APIView"),
    ],
)
def test_old_view_names_warn_and_are_the_new_classes(old, new):
    import txlab.views as views
    from txlab.views import registry

    with pytest.warns(DeprecationWarning, match=f"txlab.views.{old} is deprecated.*txlab.views.{new}"):
        cls = getattr(views, old)
    assert cls is registry.widget_class(new) and cls.__name__ == new
    module = sys.modules[cls.__module__]
    with pytest.warns(DeprecationWarning, match=new):
        assert getattr(module, old) is cls
    with pytest.raises(AttributeError):
        module.NoSuchView  # noqa: B018


def test_calling_a_module_warns_and_calls_the_new_function(monkeypatch):
    import txlab.diff as diff_mod
    import txlab.occupancy as occ_mod
    import txlab.tune.entry as auto_mod

    # the real wiring: each module calls its function
    for mod, func, new in [
        (sys.modules["txlab.tune"], auto_mod.autotune, "txlab.autotune"),
        (diff_mod, diff_mod.diff, "txlab.compare"),
        (occ_mod, occ_mod.occupancy, "txlab.occupancy_of"),
    ]:
        old, hint, target = mod.__dict__["__txlab_deprecated_call__"]
        assert target is func and hint.startswith(new)
    seen = []
    monkeypatch.setitem(
        diff_mod.__dict__,
        "__txlab_deprecated_call__",
        ("txlab.diff", "txlab.compare(a, b)", lambda *a, **k: seen.append(("diff", a, k)) or "d"),
    )
    with pytest.warns(DeprecationWarning, match=r"calling the module txlab.diff\(...\).*txlab.compare\(a, b\)"):
        assert txlab.diff(1, 2, x=3) == "d"
    assert seen == [("diff", (1, 2), {"x": 3})]
    with pytest.warns(DeprecationWarning, match="txlab.occupancy_of"), pytest.raises(Exception):
        txlab.occupancy(None)


def test_new_spellings():
    import txlab.diff
    import txlab.occupancy
    import txlab.tune

    assert txlab.compare is txlab.diff.diff
    assert txlab.autotune is txlab.tune.autotune is txlab.tune.tune
    assert txlab.occupancy_of is txlab.occupancy.occupancy


def test_python_m_txlab_timeline_runs_the_moved_command():
    proc = subprocess.run(
        [sys.executable, "-m", "txlab.timeline", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "deprecated" in proc.stderr and "python -m txlab.examples.traces" in proc.stdout
