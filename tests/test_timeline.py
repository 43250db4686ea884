"""txlab.timeline: CudaProfiler decoding, IKET loading, exports, the widget's payload, GPU recording."""

import json
import sys
from enum import Enum, IntEnum

import numpy as np
import pytest

from txlab import timeline as T
from txlab.examples import instrumented
from txlab.timeline import TraceError, encode_cuda_profiler, from_cuda_profiler, load_iket

S, E, I, F = 0, 1, 2, 3


def _word(ts, lane, ev, typ):
    return np.uint64(((ts % (1 << 32)) << 32) | (lane << 12) | (ev << 2) | typ)


def test_decodes_hand_encoded_buffer_bit_for_bit():
    # 2 blocks x 2 groups, stride 4, written exactly like tvm_builtin_timer_* (slot 1 + lane + k*stride)
    buf = np.zeros(64, np.uint64)
    buf[0] = (2 << 32) | 2
    recs = {
        0: [(100, 0, S), (164, 0, E), (200, 1, S), (1000, 1, E), (1000, 0, F)],
        3: [(150, 1, S), (450, 1, E), (460, 2, I), (470, 0, F)],
    }
    for lane, rr in recs.items():
        for k, (ts, ev, typ) in enumerate(rr):
            buf[1 + lane + 4 * k] = _word(ts, lane, ev, typ)
    tl = from_cuda_profiler(buf, ["load", "compute", "tick"])
    assert not tl.warnings
    evs = list(tl.events)
    assert evs == [
        {"block": 0, "group": 0, "name": "load", "start_ns": 0, "end_ns": 64},
        {"block": 0, "group": 0, "name": "compute", "start_ns": 100, "end_ns": 900},
        {"block": 1, "group": 1, "name": "compute", "start_ns": 50, "end_ns": 350},
        {"block": 1, "group": 1, "name": "tick", "start_ns": 360, "end_ns": 360, "instant": True},
    ]
    assert tl.meta["num_blocks"] == 2 and tl.meta["num_groups"] == 2 and tl.meta["write_stride"] == 4
    assert tl.t0_ns == 100


def test_enum_names_and_encoder_roundtrip():
    class Ev(Enum):
        Load = 0
        Compute = 1

    # (a record of lane 0, event 0, type start at timestamp 0 is the all-zero word: "empty slot")
    lanes = {
        (b, 0): [(10 * b + 1, 0, S), (10 * b + 6, 0, E), (10 * b + 6, 1, S), (10 * b + 51, 1, E), (99 + b, 0, F)]
        for b in range(3)
    }
    tl = from_cuda_profiler(encode_cuda_profiler(lanes, 3, 1), Ev)
    assert tl.names == ["Load", "Compute"]
    assert [(e["block"], e["name"], e["end_ns"] - e["start_ns"]) for e in tl.events] == [
        (0, "Load", 5),
        (0, "Compute", 45),
        (1, "Load", 5),
        (1, "Compute", 45),
        (2, "Load", 5),
        (2, "Compute", 45),
    ]


def test_timestamps_that_wrap_2_32():
    near = (1 << 32) - 40
    lanes = {
        (0, 0): [(near, 0, S), (near + 100, 0, E), (near + 100, 0, F)],
        (1, 0): [(near - 20, 0, S), (near + 5000, 0, E), (near + 5000, 0, F)],
    }
    tl = from_cuda_profiler(encode_cuda_profiler(lanes, 2, 1), ["x"])
    d = {e["block"]: (e["start_ns"], e["end_ns"]) for e in tl.events}
    assert d == {0: (20, 120), 1: (0, 5020)}
    # a lane longer than 2**32 ns still unwraps (per-lane monotone deltas)
    lanes = {(0, 0): [(7, 0, S), (3_000_000_007, 0, E), (3_000_000_007, 1, S), (5_000_000_007, 1, E)]}
    tl = from_cuda_profiler(encode_cuda_profiler(lanes, 1, 1), ["a", "b"])
    assert [e["end_ns"] for e in tl.events] == [3_000_000_000, 5_000_000_000]


def test_missing_header_and_truncated_and_wrong_dtype():
    buf = encode_cuda_profiler({(0, 0): [(1, 0, S), (2, 0, E)]}, 1, 1, slots=8)
    buf[0] = 0
    with pytest.raises(TraceError, match="header"):
        from_cuda_profiler(buf, ["a"])
    tl = from_cuda_profiler(buf, ["a"], num_groups=1, num_blocks=1)
    assert len(tl) == 1 and tl.warnings
    with pytest.raises(TraceError, match="multiple of 8"):
        from_cuda_profiler(buf.tobytes()[:-3], ["a"])
    with pytest.raises(TraceError, match="dtype"):
        from_cuda_profiler(buf.astype(np.float64), ["a"])
    with pytest.raises(TraceError, match="empty"):
        from_cuda_profiler(np.zeros(0, np.uint64), ["a"])
    garbage = np.full(16, 0xFFFFFFFFFFFFFFFF, np.uint64)
    with pytest.raises(TraceError, match="not a CudaProfiler header"):
        from_cuda_profiler(garbage, ["a"])


def test_counted_warnings_unknown_ids_unmatched_and_out_of_buffer():
    lanes = {
        (0, 0): [(1, 0, S), (10, 7, S), (20, 7, E), (30, 1, E), (40, 2, S)],  # no finalize
        (1, 0): [(1, 0, S), (5, 0, E), (6, 0, F), (9, 0, S)],
    }  # record after finalize
    buf = encode_cuda_profiler(lanes, 2, 1, slots=11)  # lane 0's next slot (11) is past the end
    tl = from_cuda_profiler(buf, ["a", "b", "c"])
    w = tl.warnings
    assert w["records with unknown event ids"] == 2
    assert w["starts without an end (dropped)"] == 2  # lane 0: 'a' and 'c'
    assert w["ends without a start (dropped)"] == 1  # lane 0: 'b'
    assert w["records after finalize (ignored)"] == 1
    assert w["lanes without finalize"] == 1
    assert w["lanes that ran out of buffer (trace truncated)"] == 1  # buffer sized to the records
    assert "event_7" in tl.names and len(tl) == 2
    with pytest.raises(TraceError):
        from_cuda_profiler(buf, ["a", "b", "c"], strict=True)


def test_nested_same_event_pairs_like_a_stack():
    lanes = {
        (0, 0): [(1, 0, S), (11, 0, S), (21, 0, E), (31, 0, E), (32, 0, F)],
        (1, 0): [
            (1, 0, E),
            (2, 0, S),
            (3, 0, S),
            (4, 0, E),
            (5, 0, S),
            (6, 0, E),
            (7, 0, E),
            (8, 0, E),
            (9, 0, S),
            (10, 0, F),
        ],
    }
    tl = from_cuda_profiler(encode_cuda_profiler(lanes, 2, 1), ["a"])
    assert sorted((e["block"], e["start_ns"], e["end_ns"]) for e in tl.events) == [
        (0, 0, 30),
        (0, 10, 20),
        (1, 1, 6),
        (1, 2, 3),
        (1, 4, 5),
    ]
    assert tl.warnings == {"ends without a start (dropped)": 2, "starts without an end (dropped)": 1}


def test_overlapping_lanes_are_reported():
    buf = np.zeros(32, np.uint64)
    buf[0] = (1 << 32) | 2
    buf[1] = _word(1, 0, 0, S)
    buf[2] = _word(1, 1, 0, S)
    buf[3] = _word(5, 0, 0, E)
    buf[5] = _word(9, 1, 0, E)  # lane 1 skipped a slot
    tl = from_cuda_profiler(buf, ["a"])
    assert any("slot sequence" in k for k in tl.warnings)


def test_summary_and_perfetto(tmp_path):
    tl = T.saved("warp_specialized")
    s = tl.summary()
    ov = s.overall()
    assert set(ov) == {"load_tile", "wait", "compute", "store"}
    comp = [e["end_ns"] - e["start_ns"] for e in tl.events if e["name"] == "compute"]
    assert ov["compute"]["count"] == len(comp) and ov["compute"]["total_ns"] == sum(comp)
    assert ov["compute"]["p50_ns"] == pytest.approx(float(np.percentile(comp, 50)))
    assert ov["compute"]["p90_ns"] == pytest.approx(float(np.percentile(comp, 90)))
    lane = s.lane("block 0 / group 2")
    assert lane["compute"]["count"] == 6
    assert "compute" in str(s)
    out = tl.to_perfetto(tmp_path / "t.json")
    trace = json.loads(out.read_text())
    procs = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    threads = [e for e in trace["traceEvents"] if e.get("name") == "thread_name"]
    assert procs == {f"block {b}" for b in range(8)} and len(threads) == 24
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(tl)
    assert xs[0]["ts"] == pytest.approx(tl.start_ns[0] / 1000)


def test_saved_traces_are_labelled():
    for name in T.saved():
        tl = T.saved(name)
        assert len(tl) > 0 and not tl.warnings
        assert tl.meta["synthetic"] == ("SYNTHETIC" in tl.provenance)


def test_saved_run_iket_trace_from_the_h200():
    """A real run-iket trace of the catalogue's iket_regions: 2 CTAs x 4 warps, each warp one 'kernel'
    range, 4 'step' ranges, a 'done' marker, an 'epilogue' range with a 'store' marker, its lifetime."""
    tl = T.saved("iket")
    assert "run-iket" in tl.provenance and not tl.meta["synthetic"]
    assert len(tl.tracks) == 8
    ov = tl.summary().overall()
    assert ov["kernel"]["count"] == 8 and ov["step"]["count"] == 32 and ov["done"]["count"] == 8
    assert ov["done"]["instants"] == 8 and ov["warp_lifetime"]["count"] == 8
    assert ov["epilogue"]["count"] == 8 and ov["store"]["instants"] == 8
    for e in tl.events:
        assert e["end_ns"] >= e["start_ns"]
    with pytest.raises(ValueError, match="saved traces: .*iket"):
        T.saved("nope")


def _iket_trace():
    return {
        "graphLaunches": {},
        "stringTable": ["mainloop", "tma_issue", "k_tile"],
        "locationTable": [
            {"ctaId": [0, 0, 0], "smId": 3, "gpcId": -1, "tpcId": -1, "warpId": 0},
            {"ctaId": [1, 0, 0], "smId": 7, "gpcId": -1, "tpcId": -1, "warpId": 4},
        ],
        "launches": [
            {
                "kernelName": "gemm_kernel",
                "gridDimX": 2,
                "gridDimY": 1,
                "gridDimZ": 1,
                "blockDimX": 256,
                "blockDimY": 1,
                "blockDimZ": 1,
                "contextId": 1,
                "gridId": 1,
                "ranges": [
                    {
                        "rangeNameIdx": 0,
                        "startTs": 1_000_000_000_032,
                        "endTs": 1_000_000_000_992,
                        "warpLocIdxs": [0, 0],
                        "rangeType": 2,
                        "internalEvents": [
                            {"eventId": 2, "timestamp": 1_000_000_000_032},
                            {"eventId": 31, "timestamp": 1_000_000_000_992},
                        ],
                    },
                    {
                        "rangeNameIdx": 2,
                        "startTs": 1_000_000_000_064,
                        "endTs": 1_000_000_000_128,
                        "warpLocIdxs": [1, 1],
                        "rangeType": 1,
                        "internalEvents": [
                            {"eventId": 1, "timestamp": 1_000_000_000_064, "payloadType": 5, "payloadVal": 7},
                            {"eventId": 1, "timestamp": 1_000_000_000_128},
                        ],
                    },
                ],
                "markers": [
                    {
                        "locIdx": 1,
                        "markerNameIdx": 1,
                        "timestamp": 1_000_000_000_096,
                        "payloadType": 5,
                        "payloadVal": 0xFFFFFFE0,
                    },
                    {
                        "locIdx": 0,
                        "markerNameIdx": 1,
                        "timestamp": 1_000_000_000_000,
                        "payloadType": 13,
                        "payloadVal": 0xC0500000,
                    },
                ],
                "warpLifetimes": [{"locIdx": 0, "startTs": 1_000_000_000_000, "endTs": 1_000_000_001_024}],
            }
        ],
    }


def test_load_iket_tracks_ranges_markers_payloads(tmp_path):
    p = tmp_path / "iket_pid_1.trace.json"
    p.write_text(json.dumps(_iket_trace()))
    tl = load_iket(p)
    assert tl.meta["kernel"] == "gemm_kernel" and tl.meta["source"] == "iket"
    assert [t.path for t in tl.tracks] == [("SM 3", "CTA (0,0,0)", "warp 0"), ("SM 7", "CTA (1,0,0)", "warp 4")] or {
        t.path for t in tl.tracks
    } == {("SM 3", "CTA (0,0,0)", "warp 0"), ("SM 7", "CTA (1,0,0)", "warp 4")}
    evs = list(tl.events)
    by = {(e["name"], e["warp"]): e for e in evs}
    assert by[("mainloop", 0)]["start_ns"] == 32 and by[("mainloop", 0)]["end_ns"] == 992
    assert by[("k_tile", 4)]["block"] == 1 and by[("k_tile", 4)]["payload"] == 7
    assert by[("tma_issue", 4)]["payload"] == -32 and by[("tma_issue", 4)]["instant"]
    assert by[("tma_issue", 0)]["payload"] == -3.25
    assert by[("warp_lifetime", 0)]["end_ns"] == 1024
    assert not tl.warnings

    # the same through an IketProfileResult-like object and through a directory
    class Result:
        postprocess = "all"
        json_traces = (p,)

    assert len(load_iket(Result())) == len(tl)
    assert len(load_iket(tmp_path)) == len(tl)
    assert len(load_iket(_iket_trace(), lifetimes=False)) == len(tl) - 1


def test_load_iket_bad_input(tmp_path):
    with pytest.raises(TraceError, match="not valid JSON"):
        load_iket('{"launches": [')
    with pytest.raises(TraceError, match="nested too deeply"):
        load_iket('{"a":' * 200_000 + "1" + "}" * 200_000)
    with pytest.raises(TraceError, match="stringTable"):
        load_iket({"launches": []})
    with pytest.raises(TraceError, match="no launches"):
        load_iket({"stringTable": [], "launches": []})
    big = tmp_path / "big.json"
    big.write_text('{"stringTable": ["' + "x" * 5000 + '"], "launches": []}')
    with pytest.raises(TraceError, match="max_bytes"):
        load_iket(big, max_bytes=1000)
    t = _iket_trace()
    t["stringTable"][0] = "A" * 100_000
    t["launches"][0]["markers"].append({"locIdx": 0, "markerNameIdx": 99, "timestamp": 5})
    t["launches"][0]["markers"].append({"locIdx": "0; rm -rf /", "markerNameIdx": 1, "timestamp": 5})
    t["launches"][0]["ranges"].append("__import__('os')")
    tl = load_iket(t)
    assert max(len(n) for n in tl.names) <= 257
    assert tl.warnings["names longer than max_name_chars (truncated)"] == 1
    assert tl.warnings["markerNameIdx: out of range (skipped)"] == 1
    assert tl.warnings["marker locIdx: not an integer (skipped)"] == 1
    assert tl.warnings["ranges that are not objects (skipped)"] == 1
    with pytest.raises(TraceError, match="max_events"):
        load_iket(_iket_trace(), max_events=2)
    with pytest.raises(TraceError, match="no launch whose kernel name"):
        load_iket(_iket_trace(), launch="attention")


def test_iket_requirements_name_versions_from_tvm():
    from tvm.backend.cuda import iket

    cfg = iket._OFFICIAL_PROFILES[iket._DEFAULT_PROFILE]
    missing = T.iket_requirements()
    from importlib import metadata

    for dist, ver in cfg["exact_versions"].items():
        try:
            ok = metadata.version(dist) == ver
        except metadata.PackageNotFoundError:
            ok = False
        assert ok or any(m.startswith(f"{dist}=={ver}") for m in missing)
    if missing:
        with pytest.raises(T.IketUnavailable) as exc:
            T.iket_profile([sys.executable, "-c", "pass"], output_dir="/tmp/unused-iket")
        assert exc.value.missing == missing and "pip install" in str(exc.value)


def test_plot_and_widget_payload():
    import matplotlib

    matplotlib.use("Agg")
    tl = T.saved("warp_specialized")
    fig = tl.plot()
    ax = fig.axes[0]
    # the saved traces were recorded on an H200; a synthetic one must say so in its title
    assert ("SYNTHETIC" in ax.get_title()) == bool(tl.meta.get("synthetic"))
    from txlab.views.timeline import TimelineView

    v = TimelineView(tl)
    assert v.meta["num_events"] == len(tl) and v.meta["synthetic"] == bool(tl.meta.get("synthetic"))
    from txlab.views.timeline import decode_columns

    cols = decode_columns(v.meta["columns"], v.data)
    assert cols["start"].tolist() == tl.start_ns.tolist() and cols["end"].tolist() == tl.end_ns.tolist()
    assert cols["track"].tolist() == tl.track.tolist() and cols["name"].tolist() == tl.name_id.tolist()


def test_million_record_decode_is_fast():
    import time

    rng = np.random.default_rng(1)
    nb, ng, per = 512, 4, 488  # 2048 lanes x 488 records ~ 1M records
    lanes = {}
    for b in range(nb):
        for g in range(ng):
            d = rng.integers(32, 2000, per // 2)
            t = np.cumsum(np.repeat(d, 2)) + (1 << 32) - 5_000_000
            ev = np.repeat(np.arange(per // 2) % 5, 2)
            ty = np.tile([S, E], per // 2)
            ty[-1] = F  # the last record finalizes the lane (so the last range has no end)
            lanes[(b, g)] = np.stack([t, ev, ty], 1)
    buf = encode_cuda_profiler(lanes, nb, ng)
    t0 = time.perf_counter()
    tl = from_cuda_profiler(buf, list("abcde"))
    dt = time.perf_counter() - t0
    assert len(tl) == nb * ng * (per // 2 - 1)
    assert tl.warnings == {"starts without an end (dropped)": nb * ng}
    assert dt < 2.0, f"decoding 1M records took {dt:.2f} s"


def test_example_kernels_compile_to_cuda_with_timers():
    import tvm

    for kind in T.EXAMPLE_KERNELS:
        func, ev = instrumented.example_kernel(kind)
        exe = tvm.compile(
            tvm.IRModule({"main": func}),
            target=tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}),
            tir_pipeline="tirx",
        )
        src = exe.mod.imports[0].inspect_source()
        assert "tvm_builtin_timer_init_cuda" in src and "%globaltimer_lo" in src
        assert src.count("tvm_builtin_timer_end_cuda(") >= len(ev)


def test_record_without_gpu_says_so(monkeypatch):
    from txlab import device
    from txlab.errors import NoGPUError

    monkeypatch.setenv("TXLAB_FORCE_NO_GPU", "1")
    device.probe.cache_clear()
    try:
        func, ev = instrumented.example_kernel("load_compute_store")
        with pytest.raises(NoGPUError, match="needs a CUDA GPU"):
            T.record(func, *instrumented.example_inputs(), events=ev)
    finally:
        device.probe.cache_clear()


@pytest.mark.gpu
def test_record_load_compute_store_on_gpu():
    func, ev = instrumented.example_kernel("load_compute_store", num_blocks=8, iters=4000)
    out, inp = instrumented.example_inputs("load_compute_store", num_blocks=8)
    tl = T.record(func, out, inp, events=ev)
    assert not tl.warnings, tl.warnings
    assert len(tl.tracks) == 8 and len(tl) == 24
    ov = tl.summary().overall()
    # 4000 dependent FMAs dominate: compute is far longer than load + store on every block
    assert ov["compute"]["p50_ns"] > 10 * (ov["load"]["p50_ns"] + ov["store"]["p50_ns"])
    assert 1_000 < ov["compute"]["p50_ns"] < 1_000_000
    assert np.all(out != 0)


@pytest.mark.gpu
def test_record_runs_in_the_isolated_worker_and_takes_a_compiled_kernel(isolated):
    import txlab
    from txlab import worker

    func, ev = instrumented.example_kernel("load_compute_store", num_blocks=4, iters=500)
    out, inp = instrumented.example_inputs("load_compute_store", num_blocks=4)
    compiled = txlab.compile(func)
    tl = T.record(compiled, out, inp, events=ev)
    assert worker.status()["alive"], worker.status()
    assert len(tl.tracks) == 4 and len(tl) == 12 and not tl.warnings
    assert tl.meta["kernel"] == compiled.name and tl.meta["arch"] == compiled.arch
    assert np.all(out != 0)  # written back through the worker


def test_record_rejects_a_kernel_without_profiler_buffer_before_running(monkeypatch):
    from tvm.script import tirx as T_script

    import txlab
    from txlab import device
    from txlab.device import GPUInfo

    @T_script.prim_func
    def plain(a: T_script.Buffer((128,), "float32")):
        T_script.device_entry()
        tx = T_script.thread_id([128])
        a[tx] = a[tx] + T_script.float32(1)

    monkeypatch.setattr(device, "require_gpu", lambda what, **kw: GPUInfo(True, name="fake H200", arch="sm_90a"))
    with pytest.raises(T.TraceError, match="no uint64 buffer parameter"):
        T.record(txlab.compile(plain, arch="sm_90a"), np.zeros(128, np.float32), events=["x"])


@pytest.mark.gpu
def test_record_warp_specialized_on_gpu():
    func, ev = instrumented.example_kernel("warp_specialized", num_blocks=8, tiles=6)
    out, inp = instrumented.example_inputs("warp_specialized", num_blocks=8, tiles=6)
    tl = T.record(func, out, inp, events=ev)
    assert not tl.warnings, tl.warnings
    assert len(tl.tracks) == 24
    s = tl.summary()
    c1 = s.lane("block 0 / group 1")["compute"]
    c2 = s.lane("block 0 / group 2")["compute"]
    assert c1["count"] == c2["count"] == 6
    assert c2["p50_ns"] > 1.5 * c1["p50_ns"]  # warpgroup 2 does twice the FMAs
    assert s.lane("block 0 / group 0")["load_tile"]["count"] == 6


def test_saved_lists_names_like_profiling_saved_and_old_spellings_warn():
    import txlab

    names = T.saved()
    assert isinstance(names, list) and "hopper_gemm" in names and "iket" in names
    prof = txlab.profiling.saved()
    assert isinstance(prof, list) and prof and all(isinstance(n, str) for n in prof)
    with pytest.warns(DeprecationWarning, match="saved\\(\\) lists"):
        assert set(T.SAVED) <= set(names)
    with pytest.warns(DeprecationWarning, match="saved\\(\\) lists"):
        assert txlab.profiling.saved_names() == prof


class _Ev(IntEnum):  # the timer helpers read .value
    SCALE = 1


def _timer_and_iket_kernels():
    """The timer ring of txlab.api_examples.instrument with IKET marks added, and an IKET-only twin."""
    tvm_script = pytest.importorskip("tvm.script")
    T_ = tvm_script.tirx

    # fmt: off
    @T_.prim_func
    def timed(Prof: T_.Buffer((21,), "uint64"), X: T_.Buffer((128,), "float32"), Y: T_.Buffer((128,), "float32")):
        T_.device_entry()
        cta = T_.cta_id([2])
        tx = T_.thread_id([64])
        warp = T_.meta_var(tx // 32)
        tag = T_.alloc_buffer([1], "uint64", scope="local", align=8)
        offset = T_.alloc_buffer([1], "uint32", scope="local", align=8)
        i = cta * 64 + tx
        T_.cuda.timer_init(Prof.data, tag.data, offset.data, 2, warp)
        T_.cuda.iket.range_push("scale")  # <iket-push>
        T_.cuda.timer_start(_Ev.SCALE, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
        Y[i] = X[i] * T_.float32(2)
        T_.cuda.timer_end(_Ev.SCALE, Prof.data, tag.data, offset.data, 4, tx % 32 == 0)
        T_.cuda.iket.range_pop()
        T_.cuda.iket.mark("done", tx)  # <iket-mark>
        T_.cuda.timer_finalize(Prof.data, tag.data, offset.data, 4, tx % 32 == 0)

    @T_.prim_func
    def iket_only(X: T_.Buffer((128,), "float32"), Y: T_.Buffer((128,), "float32")):
        T_.device_entry()
        cta = T_.cta_id([2])
        tx = T_.thread_id([64])
        T_.cuda.iket.mark("start", tx)
        Y[cta * 64 + tx] = X[cta * 64 + tx] * T_.float32(2)
    # fmt: on

    return timed, iket_only


def test_emulated_timeline_shows_iket_marks_on_the_timer_rings_clock():
    """IKET annotations, stripped by the regular build, run on the emulator as run-iket records them
    on an H200 (txlab/data/iket.iket.json): one event per warp, the payload its first lane's value;
    on the timer ring's emulated clock (the IKET range brackets the timer range it encloses). Plain
    txlab.emulate still strips them and says so; an IKET-only kernel needs no profiler buffer."""
    import inspect

    import txlab

    timed, iket_only = _timer_and_iket_kernels()
    src, start = inspect.getsourcelines(_timer_and_iket_kernels)
    lines = [start + i for i, s in enumerate(src) if "# <iket-" in s]
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    tl = T.emulate(timed, x, y, events=_Ev, arch="sm_90a")
    np.testing.assert_array_equal(y, x * 2)
    assert tl.emulated and tl.meta["iket"]["emulated"] is True and "not time" in tl.meta["iket"]["note"]
    ev = list(tl.events)
    iket = [e for e in ev if "cta" in e]
    timer = [e for e in ev if "cta" not in e]
    # 2 CTAs x 2 warps: a "scale" range and a "done" mark each, besides the timer ring's SCALE ranges
    assert sorted((e["cta"], e["warp"], e["name"]) for e in iket) == sorted(
        ((c, 0, 0), w, n) for c in range(2) for w in range(2) for n in ("scale", "done")
    )
    assert {(e["cta"][0], e["warp"], e["payload"]) for e in iket if e["name"] == "done"} == {
        (c, w, 32 * w) for c in range(2) for w in range(2)
    }
    for e in timer:  # timer group g of block b is warp g of CTA b: its IKET range encloses it
        r = next(i for i in iket if i["name"] == "scale" and i["cta"][0] == e["block"] and i["warp"] == e["group"])
        assert r["start_ns"] <= e["start_ns"] <= e["end_ns"] <= r["end_ns"], (r, e)
    assert len(timer) == 4 and all(e["name"] == "SCALE" for e in timer)
    # plain txlab.emulate: the regular build's lowering strips them, and the notes say so (with lines)
    res = txlab.emulate(timed, np.zeros(21, np.uint64), x, y, arch="sm_90a")
    note = next(n for n in res.notes if "IKET" in n)
    assert "not emulated" in note and "LowerIket" in note and all(str(n) in note for n in lines), note
    assert res.iket_events == []
    # IKET marks only: every parameter given, no profiler buffer
    tl = T.emulate(iket_only, x, np.zeros_like(y), events=_Ev, arch="sm_90a")
    marks = [(e["cta"][0], e["warp"], e["name"], e["payload"]) for e in tl.events]
    assert sorted(marks) == [(c, w, "start", 32 * w) for c in range(2) for w in range(2)]
