"""The first hour of a kernel engineer with no GPU (three kernels of their own, checks on the
emulator, an accumulating kernel, a compile-only sweep, the API reference, the line map, export),
replayed as tests/first_hour.ipynb. The notebook runs once, in a real kernel with no GPU
(TXLAB_FORCE_NO_GPU=1); each step is one cell tagged ``walk:<step>`` and one test here."""

import os
from pathlib import Path

import pytest

NB = Path(__file__).with_name("first_hour.ipynb")
pytestmark = pytest.mark.slow  # one kernel, ~100 s on a loaded 2-core machine

STEPS = [
    "setup",
    "kernel-scale",
    "help",
    "tirx-help",
    "kernel-warp",
    "kernel-hist",
    "kernel-primfunc",
    "inputs",
    "check-auto",
    "check-primfunc",
    "check-inout",
    "poison-message",
    "bench-no-gpu",
    "emulate-binding",
    "emulate-bound",
    "tune-compile-only",
    "sourceview",
    "saved-lists",
    "export",
]


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NB, 4)
    saved = {k: os.environ.get(k) for k in ("TXLAB_FORCE_NO_GPU", "TXLAB_DEVICE")}
    os.environ["TXLAB_FORCE_NO_GPU"] = "1"  # the kernel inherits it: no GPU, whatever this host has
    os.environ.pop("TXLAB_DEVICE", None)  # the default device setting, as a fresh user has it
    try:
        nbclient.NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(tmp_path_factory.mktemp("first_hour"))}},
        ).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out = {}
    for c in nb.cells:
        for tag in c.metadata.get("tags", []):
            if tag.startswith("walk:"):
                out[tag[len("walk:") :]] = c
    return out


def test_every_step_of_the_notebook_is_a_test(cells):
    ids = [s if isinstance(s, str) else s.values[0] for s in STEPS]
    assert sorted(ids) == sorted(cells), set(ids) ^ set(cells)


@pytest.mark.parametrize("step", STEPS)
def test_step_runs_clean(cells, step):
    cell = cells[step]
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    assert cell.get("execution_count") is not None, f"step {step!r} did not run"
    assert not errors, f"step {step!r}: {errors[0]['ename']}: {errors[0]['evalue']}"
