"""APIView, Python side (no browser): the payload is the catalogue without compiling; selecting
an entry (as the front end does: a state update of ``selected``, or a "select" message) compiles its
example and highlights the CUDA lines the helper produced; "insert" calls IPython's set_next_input
or, without a shell, hands the text back for the clipboard."""

from __future__ import annotations

import re
import time

import pytest

import txlab.api as api
from txlab.views.api import APIView


@pytest.fixture(scope="module")
def explorer():
    return APIView()


def _highlighted(detail) -> list[str]:
    hi = set(detail["highlight"])
    return [text for n, text in detail["lines"] if n in hi]


def test_payload_is_the_catalogue_with_status(explorer):
    names = [e["name"] for e in explorer.entries]
    assert names == [e.name for e in api.catalogue()]
    row = next(e for e in explorer.entries if e["name"] == "Tx.cuda.elect_sync")
    assert {
        "name",
        "category",
        "arch",
        "signature",
        "doc",
        "examples",
        "has_example",
        "compiles",
        "verified_gpu",
        "why_not",
    } <= set(row)
    assert row["arch"] == "sm_90" and row["examples"] == ["warp_vote"] and row["has_example"]
    assert row["compiles"] is None  # nothing compiled at construction
    tc = next(e for e in explorer.entries if e["name"] == "Tx.cuda.tcgen05.encode_instr_descriptor")
    assert tc["verified_gpu"] is None and "sm_100" in tc["why_not"]
    assert explorer.archs == ["sm_80", "sm_90", "sm_90a", "sm_100a", "multi-GPU"]
    assert "reductions" in explorer.categories and "nvshmem (multi-GPU)" in explorer.categories
    assert explorer.detail == {} and explorer.selected == ""


def test_construction_does_not_compile(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("compiled at construction")

    from txlab.api import coverage_rows, sources

    for module in (api, sources):
        monkeypatch.setattr(module, "cuda_source", boom)
    for module in (api, coverage_rows):
        monkeypatch.setattr(module, "compile_examples", boom)
    t = time.perf_counter()
    w = APIView()
    assert time.perf_counter() - t < 5
    assert len(w.entries) >= 120


def test_filters_search_name_and_doc_category_and_arch(explorer):
    w = APIView(query="shfl")
    got = w.matches()
    assert "Tx.cuda.__shfl_xor_sync" in got and all(
        "shfl" in (n + next(e["doc"] for e in w.entries if e["name"] == n)).lower() for n in got
    )
    w = APIView(category="reductions", arch="sm_80")
    assert set(w.matches()) >= {"Tx.cuda.warp_sum", "Tx.cuda.cta_reduce"}
    assert all(e["category"] == "reductions" for e in w.entries if e["name"] in w.matches())
    w = APIView(arch="multi-GPU")
    assert w.matches() and all(n.startswith("Tx.nvshmem.") for n in w.matches())
    with pytest.raises(ValueError, match="unknown arch"):
        APIView(arch="sm_75")


def test_select_warp_sum_highlights_the_shuffle_reduction(explorer):
    explorer.set_state({"selected": "Tx.cuda.warp_sum"})  # what a front-end selection does
    d = explorer.detail
    assert d["state"] == "ready" and d["name"] == "Tx.cuda.warp_sum" and d["example_id"] == "warp_reductions"
    assert "T.cuda.warp_sum(X[tx])" in d["example_source"]
    hl = "\n".join(_highlighted(d))
    assert "tvm_builtin_cuda_warp_reduce_sum_32(X_ptr" in hl  # the call site
    assert "__shfl_xor_sync" in hl  # what the helper wraps
    assert "warp_reduce_sum_8(X_ptr" not in hl  # warp_reduce's call, not warp_sum's
    # an excerpt, not the whole file with its prelude
    assert len(d["lines"]) < d["total_lines"] / 2
    assert all(isinstance(n, int) and n >= 1 for n, _ in d["lines"])
    assert not any("#include" in t for _, t in d["lines"])


def test_select_message_elect_sync_shows_elect_sync_ptx(explorer):
    explorer.receive({"type": "select", "name": "Tx.cuda.elect_sync"})
    d = explorer.detail
    assert d["state"] == "ready" and d["example_id"] == "warp_vote"
    hl = "\n".join(_highlighted(d))
    assert "elect.sync" in hl and "tvm_builtin_elect_one_sync_op()" in hl
    assert "__ballot_sync" not in hl


@pytest.mark.parametrize(
    "name, expect",
    [
        ("Tx.cuda.__shfl_xor_sync", r"__shfl_xor_sync\(full_ptr"),
        ("Tx.cuda.atomic_add", r"atomicAdd|tvm_builtin_cuda_atomic_add"),
        ("Tx.cuda.wgmma.noop_barrier", r"ptx_wgmma_fence_float"),
        ("tvm.backend.cuda.lang.MBarrier", r"mbarrier"),
        ("tvm.backend.cuda.lang.GroupMajor3D", r"g3_\w+_ptr"),
        ("Tx.cuda.func_call", r"txlab_square"),
    ],
)
def test_other_entries_highlight_what_they_emit(explorer, name, expect):
    d = explorer.select(name)
    assert d["state"] == "ready", d
    assert any(re.search(expect, t) for t in _highlighted(d)), (name, d["how"], _highlighted(d)[:5])


def test_every_entry_highlights_something_or_says_why():
    """With the CUDA of each example (cache hits), every name either highlights lines or states
    plainly that nothing is attributable (only host-side Python APIs may)."""
    sources = {}
    for e in api.catalogue():
        if not e.examples:
            continue
        ex = e.examples[0]
        sources.setdefault(ex, api.generated_cuda(ex))
        d = api.emitted_lines(e.name, ex, source=sources[ex])
        if d["highlight"]:
            assert d["how"] and d["lines"], e.name
        else:
            assert e.name.startswith("tvm.backend.cuda.iket."), (e.name, d["how"])
            assert "Python-side" in d["how"]


def test_generated_cuda_is_what_txlab_compile_generates():
    """The explorer's nvcc-free CUDA is the same text txlab.compile produces (and caches)."""
    assert api.generated_cuda("warp_reductions") == api.cuda_source("warp_reductions")


def test_unknown_selection_is_an_error_state(explorer):
    explorer.selected = "Tx.cuda.no_such_helper"
    assert explorer.detail["state"] == "error" and "not in this catalogue" in explorer.detail["error"]


class _Shell:
    def __init__(self, magics=()):
        self.calls = []
        self.magics_manager = type("M", (), {"magics": {"cell": {m: None for m in magics}}})()

    def set_next_input(self, text, replace=False):
        self.calls.append((text, replace))


def test_insert_calls_set_next_input(explorer, monkeypatch):
    import IPython

    shell = _Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    sent = []
    monkeypatch.setattr(explorer, "send", lambda content, buffers=None: sent.append(content))
    explorer.selected = "Tx.cuda.elect_sync"
    explorer.receive({"type": "insert", "name": "Tx.cuda.elect_sync"})
    assert len(shell.calls) == 1
    text, replace = shell.calls[0]
    assert replace is False
    assert "def warp_vote(" in text and "from tvm.script import tirx as T" in text
    assert "txlab.compile(warp_vote" in text
    compile(text, "<inserted>", "exec")  # valid Python
    assert sent and sent[0]["ok"] and sent[0]["how"] == "set_next_input"


def test_insert_uses_tirx_magic_when_loaded(monkeypatch):
    import IPython

    shell = _Shell(magics=("tirx",))
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    w = APIView()
    r = w.insert_example("tvm.backend.cuda.lang.Pipeline")
    assert r["ok"] and shell.calls[0][0].startswith("%%tirx --arch sm_90a\n")
    assert "Pipeline(pool, 2" in shell.calls[0][0]


def test_insert_without_ipython_returns_text_for_the_clipboard(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    w = APIView()
    r = w.insert_example("Tx.cuda.warp_sum")
    assert r["ok"] is False and r["how"] == "no-ipython" and "def warp_reductions(" in r["text"]
    assert "clipboard" in r["message"]


def test_inserted_plain_cell_parses_and_compiles():
    """The plain-Python cell text defines the prim_func when executed as a cell would be."""
    import txlab
    from txlab.magic import register_source

    text = api.example_cell("warp_vote")
    ns: dict = {}
    exec(compile(text, register_source(text, tag="test-insert"), "exec"), ns)  # noqa: S102
    assert isinstance(ns["warp_vote_compiled"], txlab.Compiled)
    assert "elect.sync" in ns["warp_vote_compiled"].cuda_source
