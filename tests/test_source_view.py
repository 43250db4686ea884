"""SourceView's payload (no browser): control fields and barrier links in the SASS pane, and a
profile's heat in all four panes, with the profiles recorded on an H200 (txlab/data) paired with
the kernels rebuilt here as scripts/profile_h200.py built them. The browser side is
tests/test_source_browser.py."""

from __future__ import annotations

import json

import pytest

import txlab
from txlab import profiling, sass
from txlab.views.source import SourceView


@pytest.fixture(scope="module")
def gemm():
    from txlab.examples import hopper_gemm as hg

    with hg.built_as_before("v16:"):  # the configuration profiled, before round 29's 16-byte direct stores
        return hg.build(8192, 8192, 8192, hg.GemmConfig()), profiling.saved("hopper_gemm")


@pytest.fixture(scope="module")
def naive():
    from txlab.examples import transpose as tr

    return txlab.compile(tr.transpose_kernel(8192, "naive"), arch="sm_90a"), profiling.saved("transpose_naive")


def _data(view):
    return json.loads(view.data)


def test_profile_heat_is_called_not_taken(gemm):
    """SourceView(profile=p) used to take the bound method ``p.heat`` as the heat dict (no heat)."""
    c, p = gemm
    d = _data(SourceView(c, profile=p))
    p = p.for_build(c)  # the saved profile's lines as this file places them now
    want = p.heat()
    assert d["heat"] and {int(k) for k in d["heat"]} == set(want)
    line = p.lines[0]["line"]
    assert d["heat"][str(line)] == {"samples": want[line]["samples"], "stalls": want[line]["stalls"]}
    assert d["total_samples"] == p.total_samples


def test_sass_heat_per_instruction_from_the_profiles_offsets(gemm):
    c, p = gemm
    d = _data(SourceView(c, profile=p))
    p = p.for_build(c)
    hs = d["heat_rows"]["sass"]
    by_off = {r["offset"]: r for r in p.instructions}
    assert sum(v[0] for v in hs.values()) == p.total_samples  # every sample lands on a row
    for i, (n, stalls) in hs.items():
        row = d["sass"][int(i)]
        assert by_off[row["offset"]]["samples"] == n and by_off[row["offset"]]["stalls"] == stalls
    hottest = max(p.instructions, key=lambda r: r["samples"])
    i = next(k for k, s in enumerate(d["sass"]) if s["offset"] == hottest["offset"])
    assert hs[str(i)][0] == hottest["samples"] and d["sass"][i]["user_line"] == hottest["user_line"]
    assert d["sass"][i]["text"].split()[0] == hottest["sass"].split()[0]


def test_cuda_and_ptx_heat(gemm):
    c, p = gemm
    d = _data(SourceView(c, profile=p))
    hc, hp = d["heat_rows"]["cuda"], d["heat_rows"]["ptx"]
    per_cuda = {}
    for r in p.instructions:
        if r.get("cuda_line") and r["samples"]:
            per_cuda[r["cuda_line"]] = per_cuda.get(r["cuda_line"], 0) + r["samples"]
    assert {int(k) + 1: v[0] for k, v in hc.items()} == per_cuda
    m = c.source_map
    assert hp and all(m.ptx_cuda[int(k)] and hc[str(m.ptx_cuda[int(k)] - 1)][0] == v[0] for k, v in hp.items())


def test_top_five_hot_lines(gemm):
    c, p = gemm
    d = _data(SourceView(c, profile=p))
    p = p.for_build(c)
    hot = d["hot"]
    assert [h["line"] for h in hot] == [r["line"] for r in p.hot_lines(5)]
    assert "wgmma" in hot[0]["text"] and hot[0]["top"][0][0] == "barrier"
    assert abs(hot[0]["share"] - p.lines[0]["share"]) < 1e-9


def test_a_profile_of_another_build_gives_no_sass_heat(naive, gemm):
    c, _ = naive
    _, pg = gemm
    d = _data(SourceView(c, profile=pg))
    assert "sass" not in d["heat_rows"] and "cuda" not in d["heat_rows"]
    assert any("not this build" in n for n in d["notes"]) and any("CUDA differs" in n for n in d["notes"])


def test_heat_dict_alone(naive):
    c, p = naive
    d = _data(SourceView(c, heat=p.heat()))
    assert d["heat"] and d["heat_rows"] == {} and len(d["hot"]) == min(5, len([r for r in p.lines if r["samples"]]))
    d2 = _data(SourceView(c, profile=p))  # the transpose's own profile: per-instruction heat too
    assert sum(v[0] for v in d2["heat_rows"]["sass"].values()) == p.total_samples


def test_control_column_and_barrier_links(naive):
    c, _ = naive
    d = _data(SourceView(c))
    table = {(r["kernel"], r["offset"]): r for r in c.sass_table().rows}
    assert all("control" in s for s in d["sass"])
    for s in d["sass"]:
        r = table[(s["kernel"], s["offset"])]
        ctl = s["control"]
        assert [
            ctl["notation"],
            ctl["stall"],
            ctl["yield"],
            ctl["write_barrier"],
            ctl["read_barrier"],
            ctl["wait_mask"],
            ctl["reuse"],
        ] == [r["control"], r["stall"], int(r["yield"]), r["wr_bar"], r["rd_bar"], r["wait_mask"], r["reuse"]]
    # a global load's consumer waits on the load's write barrier, and links back to it
    ld = next(i for i, s in enumerate(d["sass"]) if s["text"].startswith("LDG"))
    wr = d["sass"][ld]["control"]["write_barrier"]
    cons = [j for j, b, k in d["sass"][ld]["control"]["consumers"] if b == wr and k == "w"]
    assert cons and d["sass"][cons[0]]["control"]["wait_mask"] >> wr & 1
    assert [ld, wr, "w"] in d["sass"][cons[0]]["control"]["producers"]
    # same links as txlab.sass.dependencies
    deps = sass.dependencies(sass.instructions(c))
    assert len(deps[ld]["consumers"]) == len(d["sass"][ld]["control"]["consumers"])


def test_magic_profile_passes_the_profile(monkeypatch, naive):
    """%%tirx --profile shows SourceView(compiled, profile=prof) (SASS heat needs the profile)."""
    from IPython.testing import globalipapp
    from IPython.utils.capture import capture_output

    import txlab.views
    import txlab.views.source as vs

    _, p = naive
    seen = {}

    class Recorder(vs.SourceView):
        def __init__(self, compiled, profile=None, heat=None, **kw):
            seen.update(profile=profile, heat=heat)
            super().__init__(compiled, profile=profile, heat=heat, **kw)

    monkeypatch.setattr(profiling, "profile", lambda compiled, *a, **k: p)
    monkeypatch.setattr(vs, "SourceView", Recorder)
    monkeypatch.setattr(txlab.views, "SourceView", Recorder, raising=False)
    ip = globalipapp.start_ipython() or globalipapp.get_ipython()
    ip.run_line_magic("load_ext", "txlab")
    cell = """
@T.prim_func
def tiny(A: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([256])
    A[tx] = A[tx] * T.float32(2.0)
"""
    with capture_output():
        ip.run_cell_magic("tirx", '--arch sm_90a --profile ""', cell)
    assert seen["profile"] is p and seen["heat"] is None


def test_a_profile_saved_before_the_file_changed_is_placed_through_this_builds_map(gemm, naive):
    """The source file of a saved profile changed (lines moved) but the kernel's SASS did not: its
    samples are re-attributed offset by offset through this build's line map, so the hot line is the
    same instruction's line now. A profile of different SASS gets no line heat (it would land on
    wrong lines), with a note naming the first differing instruction."""
    c, p = gemm
    q = p.for_build(c)
    assert q.total_samples == p.total_samples and q.attributed_share >= p.attributed_share - 1e-9
    assert q.source == list(c.source_map.user_source) and q.for_build(c) is q
    hot_ins = max(p.instructions, key=lambda r: r["samples"])
    assert c.source_map.line_of_sass(hot_ins["offset"], kernel=p.kernel) == next(
        r["user_line"] for r in q.instructions if r["offset"] == hot_ins["offset"]
    )
    assert "wgmma.wait_group" in q.hot_lines(1)[0]["text"]
    if q is not p:
        assert any("changed since this profile" in n for n in _data(SourceView(c, profile=p))["notes"])
    tc, tp = naive
    with pytest.raises(ValueError, match="profile this build"):
        tp.for_build(c)
    d = _data(SourceView(c, profile=tp))
    assert d["heat"] == {} and any("no line heat" in n for n in d["notes"])


def test_compiled_view_is_its_source_view(naive):
    """``Compiled.view()`` opens SourceView through txlab.hooks (the model imports no widget)."""
    c, p = naive
    v = c.view()
    assert isinstance(v, SourceView) and _data(v) == _data(SourceView(c))
    assert _data(c.view(profile=p)) == _data(SourceView(c, profile=p))


def test_cuda_preamble_is_folded_in_the_compile_view_and_the_payload():
    """TVM's generated preamble (~65 lines of #ifdef __CUDACC_RTC__ ... before the kernel) is
    folded in the Compiled's CUDA tab and marked in SourceView's payload; the kernel is not."""
    from txlab.display import compiled_html
    from txlab.magic import run_cell
    from txlab.sourcemap.preamble import preamble_lines

    from pathlib import Path

    c = run_cell((Path(__file__).parent / "kernels" / "basics.py").read_text(), {}, arch="sm_90a")["warp_sums"]
    lines = c.cuda_source.splitlines()
    n = preamble_lines(c.cuda_source, c.source_map.cuda_user)
    assert 40 <= n < len(lines)
    assert any("__CUDACC_RTC__" in x for x in lines[:n])
    assert "__global__" in lines[n] and not any("__global__" in x for x in lines[:n])
    assert not any(c.source_map.cuda_user[:n])  # no line of the user's is folded
    page = compiled_html(c, show=["cuda"])
    fold = page.index('<details class="txlab-fold" data-testid="cuda-preamble">')
    folded, rest = page[fold : page.index("</details>")], page[page.index("</details>") :]
    assert "__CUDACC_RTC__" in folded and "warp_sums_kernel" not in folded and "warp_sums_kernel" in rest
    assert "<details open" not in page  # collapsed until clicked
    d = json.loads(SourceView(c).data)
    assert d["cuda_preamble"] == n


def test_coalescing_column_beside_the_line(naive):
    """The TVMScript pane's global-memory column: per user line, the static walk's sectors per
    request against the ideal (txlab.coalescing), and "unknown" with the reason for a gather."""
    import sys
    from pathlib import Path

    c, _ = naive
    d = _data(SourceView(c))
    co = d["coalescing"]
    rows = txlab.pools.coalescing(c).by_line()
    assert set(co) == {str(k) for k in rows} and len(co) == 2
    for line, v in co.items():
        want = rows[int(line)]
        assert v["status"] == "analysed" and v["sectors_per_request"] == want["sectors_per_request"]
    # the transpose goes through shared memory: its global read and write are both coalesced
    assert all(v["efficiency"] == 1.0 for v in co.values())

    sys.path.insert(0, str(Path(__file__).parent / "kernels"))
    import memory_patterns as mp

    s = _data(SourceView(txlab.compile(mp.strided_read(32, 1 << 12), arch="sm_90a")))["coalescing"]
    (v,) = s.values()  # B[i] = A[32 i]: one sector of 32 bytes per 4-byte lane, and the coalesced store
    assert v["status"] == "analysed" and v["sectors"] == 8 * (32 + 4) and v["ideal_sectors"] == 8 * (4 + 4)

    g = txlab.compile(mp.gather(1 << 12), arch="sm_90a")
    d = _data(SourceView(g))
    (line,) = d["coalescing"]  # one statement: I's read, A's gather, B's write
    v = d["coalescing"][line]
    assert v["status"] == "partial" and v["unknown"] == 1 and v["accesses"] == 3
    assert v["reasons"] == ["the index depends on a value read from memory (a gather or scatter)"]


def test_views_take_a_prim_func_and_name_what_they_take():
    """SourceView and PoolView of a ``@T.prim_func`` (what a Python user has) compile / lay it out; PoolView of a
    Compiled lays it out; anything else is an InputError naming what the view takes (it was an AttributeError)."""
    from tvm.script import tirx as T

    from txlab.errors import InputError
    from txlab.views import PoolView

    @T.prim_func
    def double(A: T.Buffer((256,), "float32")):
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([256])
        A[tx] = A[tx] * T.float32(2)

    src = json.loads(SourceView(double).data)
    assert any("A[tx] = A[tx] * T.float32(2)" in str(line) for line in json.dumps(src).split("\\n"))
    for k in (double, txlab.compile(double, arch="sm_90a", progress=lambda s: None)):
        plan = json.loads(PoolView(k).data)["plan"]
        assert plan["kernel"].startswith("double")
    with pytest.raises(InputError, match="SourceView takes a txlab.Compiled"):
        SourceView("double")
    with pytest.raises(InputError, match="PoolView takes a txlab.pools.PoolLayout"):
        PoolView(3)
