"""Notebook cells that build each txlab widget, with a user-controlled ``label`` placed in every
string the widget shows (event/track names, role names, buffer and kernel names, scheduler
names). tests/test_browser.py renders them with a plain label and drives them;
tests/test_widget_security.py renders them with an HTML-injection label.

A new widget bundle (``txlab/static/<name>.js``) without an entry here makes both tests fail with
a message saying to add one: every widget must be driven and checked for escaping.
"""

from __future__ import annotations

#: setup cell: imports shared by every case
SETUP = """\
import numpy as np
import txlab
from txlab.device import has_gpu
"""


def timeline(label: str) -> str:
    return f"""\
from txlab.timeline import Timeline, Track
from txlab.views.timeline import TimelineView
label = {label!r}
n_tracks, per = 8, 64
tr = np.repeat(np.arange(n_tracks), per)
start = np.tile(np.arange(per) * 1000, n_tracks) + tr * 37
tl = Timeline(names=[label, "compute " + label], tracks=[Track((f"block {{b}} " + label, label + f" warp {{b}}")) for b in range(n_tracks)],
              track=tr, name_id=np.arange(n_tracks * per) % 2, start_ns=start, end_ns=start + 900,
              kind=np.zeros(n_tracks * per, np.uint8), meta={{"title": label, "kernel": label}},
              warnings={{label: 1}})
TimelineView(tl)
"""


def pipeline(label: str) -> str:
    return f"""\
from txlab import pipelines as P
from txlab.views.pipeline import PipelineView
label = {label!r}
producer = [("wait", "empty"), ("arrive_expect_tx", "full", 4096), ("complete_tx", "full", 4096), ("advance",)]
consumer = [("wait", "full"), ("arrive", "empty"), ("advance",)]
PipelineView(P.simulate(4, iterations=6, roles={{"producer " + label: producer, label: consumer}}))
"""


def pool(label: str) -> str:
    # buffer and kernel names come from the TIR; a real plan is renamed so that every shown name
    # carries the label (what a kernel with such buffer names would produce)
    return f"""\
from tvm.script import tirx as T
from txlab.pools import layout
from txlab.views.pool import PoolView

@T.prim_func
def plan_kernel(A: T.Buffer((128, 64), "float16")):
    T.device_entry()
    cta = T.cta_id([1])
    tx = T.thread_id([128])
    pool = T.SMEMPool()
    As = pool.alloc((2, 128, 64), "float16", align=1024)
    Bs = pool.alloc((128, 64), "float16", align=128)
    pool.commit()
    Bs[tx, 0] = A[tx, 0]

label = {label!r}
plan = layout(plan_kernel, arch="sm_90a")
for k, a in enumerate(plan.allocations):
    a["name"] = f"{{a['name']}} " + label
plan.kernel = label
PoolView(plan)
"""


def schedule(label: str) -> str:
    # scheduler names are chosen from a fixed list, but a user-typed unknown name reaches the
    # widget through the error message shown in place of the grid
    return f"""\
from txlab.views.schedule import ScheduleView
label = {label!r}
ScheduleView("ClusterPersistentScheduler2D", {{"scheduler": label, "params": {{}}}})
"""


def api(label: str) -> str:
    # a user-supplied catalogue (entries=) puts arbitrary names, categories and docs on screen
    return f"""\
from txlab.views.api import APIView
label = {label!r}
rows = [{{"name": "Tx.cuda." + label, "category": label, "arch": "sm_90a", "signature": f"f({{label}})",
         "doc": "doc " + label, "examples": []}},
        {{"name": "Tx.cuda.other", "category": "sync", "arch": "sm_90a", "signature": "g()",
         "doc": "other entry", "examples": []}}]
APIView(entries=rows, coverage_rows=[], selected="Tx.cuda." + label)
"""


def tune(label: str) -> str:
    # parameter names, values and the sweep's name all carry the label (a user's space could)
    return f"""\
from txlab.tune import Row, TuneResult
from txlab.views.tune import TuneView
label = {label!r}
res = TuneResult(name="sweep " + label, space={{"params": {{"bn " + label: [128, 256], "stages": [3, 4, 5],
                                                        "mode": [label, "b"]}}}},
                 baseline={{"name": "cuBLAS " + label, "time_ms": 1.0}})
for i, (bn, st, mode) in enumerate([(b, s, m) for b in (128, 256) for s in (3, 4, 5) for m in (label, "b")]):
    t = (1.2 if bn == 128 else 0.9) * (1 + 0.04 * st)
    res.rows.append(Row(config={{"bn " + label: bn, "stages": st, "mode": mode}}, id=f"r{{i}}", status="measured",
                        time_ms=t, ratio=1.0 / t, compile_s=1.5, facts={{"registers": 168, "blocks_per_sm": 1}}))
res.rows.append(Row(config={{"bn " + label: 256, "stages": 5, "mode": "b"}}, id="bad", status="fault",
                    fault_kind="timeout", reason="hung: " + label))
TuneView(res)
"""


_SOURCE_KERNEL = """
# kernel of LABEL
@T.prim_func
def warp_sums(X: T.Buffer((1 << 20,), "float32"), out: T.Buffer((1 << 15,), "float32")):
    T.device_entry()
    bx = T.cta_id([4096])
    tx = T.thread_id([256])
    v = T.alloc_local((1,), "float32")
    v[0] = Tx.cuda.warp_sum(X[bx * 256 + tx])  # LABEL
    if tx % 32 == 0:
        out[bx * 8 + tx // 32] = v[0]
"""


def source(label: str) -> str:
    # the panes show the user's own text: the label sits in the kernel's comments
    cell = _SOURCE_KERNEL.replace("LABEL", label)
    return f"""\
from txlab.magic import run_cell
from txlab.views.source import SourceView
label = {label!r}
cell = {cell!r}
sv = SourceView(run_cell(cell, {{}}, arch="sm_90a")["warp_sums"], heat={{9: {{"samples": 7, "stalls": {{label: 3}}}}}})
sv
"""


def large_source_cell() -> str:
    """A cell that shows the Hopper GEMM's SourceView (thousands of CUDA/PTX lines; benchmarks)."""
    return """\
import txlab
from txlab.examples import hopper_gemm as hg
from txlab.views.source import SourceView
gemm_c = txlab.compile(hg.kernel_for(4096, 4096, 4096), arch="sm_90a")
SourceView(gemm_c, height=600)
"""


def profiled_source_cell() -> str:
    """The Hopper GEMM rebuilt here as scripts/profile_h200.py built it (8192^3), with the profile
    recorded on an H200 (txlab/data): heat in all four panes, the hot-line list (tests, benchmarks)."""
    return """\
import txlab
from txlab import profiling
from txlab.examples import hopper_gemm as hg
from txlab.views.source import SourceView
gemm_prof = profiling.saved("hopper_gemm")
with hg.built_as_before("v16:"):  # the configuration profiled, before round 29's 16-byte direct stores
    gemm_profiled = hg.build(8192, 8192, 8192, hg.GemmConfig())
SourceView(gemm_profiled, profile=gemm_prof, height=600)
"""


_TILE_TRANSPOSE = """
@T.prim_func
def tile_t(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
    T.device_entry()
    bx, by = T.cta_id([32, 32])
    tx, ty = T.thread_id([32, 8])
    tile = T.alloc_shared((32, NCOLS), "float32")
    for k in T.serial(4):
        tile[ty + 8 * k, tx] = A[by * 32 + ty + 8 * k, bx * 32 + tx]
    T.cuda.cta_sync()
    for k in T.serial(4):
        B[bx * 32 + ty + 8 * k, by * 32 + tx] = tile[tx, ty + 8 * k]
"""


def diff(label: str) -> str:
    # kernel names, source lines and SASS text reach the widget; here each carries the label
    return f"""\
import txlab
from txlab.magic import run_cell
from txlab.views.diff import DiffView
label = {label!r}
src = {_TILE_TRANSPOSE!r}
a = run_cell(src.replace("NCOLS", "32"), {{}}, arch="sm_90a")["tile_t"]
b = run_cell(src.replace("NCOLS", "33"), {{}}, arch="sm_90a")["tile_t"]
d = txlab.compare(a, b)
d.a_name, d.b_name = "a " + label, label
for r in d.resources:
    r["kernel_a"] = r["kernel_b"] = label
for r in d.lines:
    r["a_text"] = (r["a_text"] or "") + "  # " + label
    r["b_text"] = (r["b_text"] or "") + "  # " + label
    for i in r["a_sass"][:1] + r["b_sass"][:1]:
        i["text"] += " " + label
DiffView(d)
"""


CASES = {
    "tune": tune,
    "api": api,
    "timeline": timeline,
    "pipeline": pipeline,
    "pool": pool,
    "schedule": schedule,
    "source": source,
    "diff": diff,
}


def notebook(label: str, names, path) -> None:
    """Write a notebook with one cell per widget in ``names`` (unknown names raise KeyError)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(CASES[n](label)) for n in names]
    nbformat.write(nb, path)


def large_timeline_cell(events: int = 1_000_000, tracks: int = 512) -> str:
    """A cell that shows a TimelineView over ``events`` synthetic events (benchmarks)."""
    return f"""\
import numpy as np
from txlab.timeline import Timeline, Track
from txlab.views.timeline import TimelineView
n_tracks = {tracks}
per = {events} // n_tracks
rng = np.random.default_rng(0)
dur = rng.integers(20, 400, (n_tracks, per))
gap = rng.integers(0, 60, (n_tracks, per))
start = (np.cumsum(dur + gap, axis=1) - dur).ravel()
tr = np.repeat(np.arange(n_tracks), per)
big = Timeline(names=["load", "mma", "epilogue", "wait", "store"],
               tracks=[Track((f"SM {{t // 4}}", f"warp {{t % 4}}")) for t in range(n_tracks)],
               track=tr, name_id=np.arange(tr.size) % 5, start_ns=start, end_ns=start + dur.ravel(),
               kind=np.zeros(tr.size, np.uint8), meta={{"title": f"synthetic {{tr.size:,}} events", "synthetic": True}})
TimelineView(big, height=600)
"""


def compiled_cuda_cell() -> str:
    """The compile result's tabbed HTML, CUDA tab first (its preamble folded)."""
    return f"""\
from IPython.display import HTML, display
from txlab.display import compiled_html
from txlab.magic import run_cell
fold_c = run_cell({_SOURCE_KERNEL.replace("LABEL", "fold")!r}, {{}}, arch="sm_90a")["warp_sums"]
display(HTML(compiled_html(fold_c, show=["cuda", "resources"])))
"""


def identical_diff_cell() -> str:
    """DiffView of a shuffle-loop warp max and Tx.cuda.warp_max (byte-identical SASS;
    tests/kernels/warp_max.py)."""
    from pathlib import Path

    src = (Path(__file__).resolve().parents[1] / "kernels" / "warp_max.py").read_text()
    return f"""\
from txlab.magic import run_cell
from txlab.views.diff import DiffView
pair = run_cell({src!r}, {{}}, arch="sm_90a")
DiffView(pair["warp_max_loop"], pair["warp_max_lib"])
"""
