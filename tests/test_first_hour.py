"""The first hour of a kernel engineer with no GPU (three kernels of their own, checks on the
emulator, an accumulating kernel, a compile-only sweep, the API reference, the line map, export),
replayed as tests/first_hour.ipynb. The notebook runs once, in a real kernel with no GPU
(TXLAB_FORCE_NO_GPU=1); each step is one cell tagged ``walk:<step>`` and one test here.

Steps whose feature is not on main yet are xfail(strict=False) with the feature they wait for; the
mark goes once it lands (an XPASS in the summary says which ones already run clean)."""
import os
from pathlib import Path

import pytest

NB = Path(__file__).with_name("first_hour.ipynb")
pytestmark = pytest.mark.slow  # one kernel, ~100 s on a loaded 2-core machine


def _needs(why):
    return pytest.mark.xfail(strict=False, reason=f"needs {why}")


EMULATOR_AUTO = "check/call on the CPU emulator under txlab.config.device='auto' (issue 30 item 1)"
STEPS = [
    "setup", "kernel-scale", "help", "tirx-help", "kernel-warp", "kernel-hist", "kernel-primfunc", "inputs",
    pytest.param("check-auto", marks=_needs(EMULATOR_AUTO)),
    pytest.param("check-primfunc", marks=_needs("check() taking a @Tx.prim_func without a GPU (issue 30 item 1)")),
    pytest.param("check-inout", marks=_needs("check(inout=...) (issue 30 item 2)")),
    pytest.param("poison-message", marks=_needs("a failure message naming the 0xA5A5A5A5 poison (issue 30 item 2)")),
    pytest.param("bench-no-gpu", marks=_needs("bench's NoGPUError naming the emulator and occupancy/tune (item 1)")),
    "emulate-binding",
    pytest.param("emulate-bound", marks=_needs("%%tirx --emulate binding _tirx_emulation (issue 30 item 5)")),
    pytest.param("tune-compile-only", marks=_needs("the local tuning engine and table() as HTML with "
                                                   "blocks_per_sm/occupancy_pct (issue 30 item 3)")),
    "sourceview",
    pytest.param("saved-lists", marks=_needs("txlab.profiling.saved() / txlab.timeline.saved() returning "
                                             "names (issue 30 item 5)")),
    "export",
]


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NB, 4)
    saved = {k: os.environ.get(k) for k in ("TXLAB_FORCE_NO_GPU", "TXLAB_DEVICE")}
    os.environ["TXLAB_FORCE_NO_GPU"] = "1"  # the kernel inherits it: no GPU, whatever this host has
    os.environ.pop("TXLAB_DEVICE", None)     # the default device setting, as a fresh user has it
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": str(tmp_path_factory.mktemp("first_hour"))}}
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
                out[tag[len("walk:"):]] = c
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
