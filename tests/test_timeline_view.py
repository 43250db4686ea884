"""TimelineView's compact binary payload (txlab.views.timeline_codec.encode_columns): exact round trip,
bit widths chosen from the data, exceptions and wider fallbacks for values that do not fit,
the aggregates sent for the front end, and the front end's decoder (widgets/src/_timeline_codec.js, run under node) agreeing with the
reference decoder bit for bit."""

from __future__ import annotations

import json
import shutil
import subprocess
import struct
from pathlib import Path

import numpy as np
import pytest

from txlab.timeline import Timeline, Track, decode_payload
from txlab.views import timeline_codec as V
from txlab.views.timeline import TimelineView
from txlab.views.timeline_codec import Blob, decode_columns, density, encode_columns, pack_int, unpack_int

ROOT = Path(__file__).resolve().parents[1]
CODEC = ROOT / "widgets" / "src" / "_timeline_codec.js"


def _timeline(
    n_tracks=6,
    per=200,
    *,
    seed=0,
    names=5,
    dur_hi=400,
    gap_hi=60,
    overlap=False,
    empty_tracks=(),
    payload=False,
    huge=(),
):
    rng = np.random.default_rng(seed)
    tr, st, en = [], [], []
    for t in range(n_tracks):
        if t in empty_tracks:
            continue
        d = rng.integers(0, dur_hi, per)
        g = rng.integers(-dur_hi if overlap else 0, gap_hi, per)
        s = 1000 * t + np.cumsum(d + g) - d
        s -= min(0, s.min())
        tr.append(np.full(per, t))
        st.append(s)
        en.append(s + d)
    tr, st, en = np.concatenate(tr), np.concatenate(st), np.concatenate(en)
    for i, v in huge:  # (event index, extra ns added to its end and everything after in its track)
        same = (tr == tr[i]) & (np.arange(len(tr)) >= i)
        en[same] += v
        st[same & (np.arange(len(tr)) > i)] += v
    n = len(tr)
    kw = {}
    if payload:
        kw["payload_type"] = rng.choice([0, 2, 5, 7, 13, 14, 9], n).astype(np.uint8)
        raw = rng.integers(0, 1 << 63, n, dtype=np.int64).astype(np.uint64)
        raw[kw["payload_type"] == 13] = struct.unpack("<I", struct.pack("<f", -3.25))[0]
        raw[kw["payload_type"] == 5] = 0xFFFFFFE0  # -32 as int32
        kw["payload_raw"] = raw
    return Timeline(
        names=[f"n{k}" for k in range(names)],
        tracks=[Track((f"SM {t // 2}", f"warp {t % 2}")) for t in range(n_tracks)],
        track=tr,
        name_id=rng.integers(0, names, n),
        start_ns=st,
        end_ns=en,
        kind=(en == st).astype(np.uint8),
        **kw,
    )


def _roundtrip(tl):
    spec, data = encode_columns(tl)
    assert len(data) == spec["bytes"]
    d = decode_columns(spec, data)
    assert d["track"].tolist() == tl.track.tolist()
    assert d["name"].tolist() == tl.name_id.tolist()
    assert d["start"].tolist() == tl.start_ns.tolist()
    assert d["end"].tolist() == tl.end_ns.tolist()
    return spec, data, d


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"overlap": True},
        {"empty_tracks": (0, 3, 5)},
        {"names": 300},
        {"dur_hi": 300_000, "gap_hi": 5},
        {"huge": [(5, 1 << 33), (450, 123_456_789)]},
        {"per": 1},
        {"payload": True, "overlap": True},
    ],
)
def test_roundtrip_is_exact(kw):
    tl = _timeline(**kw)
    spec, _, d = _roundtrip(tl)
    if kw.get("overlap"):
        assert spec["max_depth"] > 0 and spec["depth"]["bits"] == 2
        # overlapping ranges of one track never share a sub-row below the cap
        for t in range(len(tl.tracks)):
            m = (d["track"] == t) & (d["depth"] < 3)
            for r in range(3):
                k = np.flatnonzero(m & (d["depth"] == r))
                assert (d["start"][k][1:] >= d["end"][k][:-1]).all()
    else:
        assert spec["max_depth"] == 0 and spec["depth"]["bits"] == 0 and not d["depth"].any()
    # aggregates: longest event per track, latest end, minimap density
    dur = tl.end_ns - tl.start_ns
    assert d["maxdur"].tolist() == [
        int(dur[tl.track == t].max()) if (tl.track == t).any() else 0 for t in range(len(tl.tracks))
    ]
    assert spec["t1"] == tl.end_ns.max() and spec["t0"] == tl.start_ns.min()
    counts, shift = density(tl.start_ns, tl.end_ns, spec["t0"], spec["t1"])
    assert d["density"].tolist() == counts.tolist() and spec["density_shift"] == shift
    assert 2048 <= len(counts) <= 4096 or shift == 0
    width = 1 << shift  # brute force: events overlapping each bin
    assert counts[::97].tolist() == [
        int(np.count_nonzero((tl.start_ns - spec["t0"] < (b + 1) * width) & (tl.end_ns - spec["t0"] >= b * width)))
        for b in range(0, len(counts), 97)
    ]


def _nested(n_tracks=4, outer=50, seed=0):
    """IKET-like ranges: an outer range per iteration with 1-3 inner ranges, one of which has a
    range inside it; returns the timeline and each event's nesting level."""
    rng = np.random.default_rng(seed)
    tr, st, en, lvl = [], [], [], []
    for t in range(n_tracks):
        c = 0
        for _ in range(outer):
            o = c
            c += 5
            for j in range(int(rng.integers(1, 4))):
                d = int(rng.integers(50, 200))
                tr += [t]
                st += [c]
                en += [c + d]
                lvl += [1]
                if j == 0:
                    tr += [t]
                    st += [c + 10]
                    en += [c + 20]
                    lvl += [2]
                c += d + int(rng.integers(0, 3))  # sometimes back to back
            tr += [t]
            st += [o]
            en += [c + 5]
            lvl += [0]
            c += 5 + int(rng.integers(0, 3))
    tl = Timeline(
        names=["a"],
        tracks=[Track((f"SM {t}", "warp 0")) for t in range(n_tracks)],
        track=tr,
        name_id=np.zeros(len(tr), int),
        start_ns=st,
        end_ns=en,
        kind=np.zeros(len(tr), np.uint8),
    )
    order = np.lexsort((np.array(st), np.array(tr)))
    return tl, np.array(lvl)[order]


def test_nested_ranges_get_their_nesting_level_without_the_python_loop(monkeypatch):
    tl, level = _nested()
    assert (tl.start_ns[1:] >= tl.start_ns[:-1])[np.diff(tl.track) == 0].all()

    def loop(*a):
        raise AssertionError("properly nested ranges took the per-event loop")

    monkeypatch.setattr(V, "first_fit_rows", loop)
    assert V.depths(tl).tolist() == level.tolist()
    _roundtrip(tl)


def test_partial_overlaps_fall_back_to_first_fit():
    # [0,10) [5,15) [12,20): open-count rows 0,1,1 overlap on row 1; first fit gives 0,1,0
    tl = Timeline(
        names=["a"],
        tracks=[Track(("b", "g"))],
        track=[0, 0, 0],
        name_id=[0, 0, 0],
        start_ns=[0, 5, 12],
        end_ns=[10, 15, 20],
        kind=[0, 0, 0],
    )
    assert V.depths(tl).tolist() == [0, 1, 0]


def test_empty_timeline():
    tl = Timeline(names=[], tracks=[], track=[], name_id=[], start_ns=[], end_ns=[], kind=[])
    spec, data, d = _roundtrip(tl)
    assert spec["events"] == 0 and len(d["start"]) == 0
    TimelineView(tl)


def test_widths_are_chosen_from_the_data():
    # 5 names, durations < 400, gaps < 60: 3 + 6 + 9 bits per event
    spec, data, _ = _roundtrip(_timeline(n_tracks=8, per=512))
    assert spec["name"]["bits"] == 3 and spec["mode"] == "gap"
    assert spec["step"]["bits"] == 6 and spec["step"]["exceptions"] == 0
    assert spec["dur"]["bits"] == 9 and spec["dur"]["exceptions"] == 0
    assert spec["depth"]["bits"] == 0 and spec["payload"] is None
    per_event = 18 / 8
    # + per-track arrays and the 4096-bin minimap density (a few KB)
    assert len(data) <= per_event * spec["events"] + 3000, (len(data), spec)
    # 256 names fit 8 bits, 257 take 9
    assert encode_columns(_timeline(names=256))[0]["name"]["bits"] == 8
    assert encode_columns(_timeline(names=257))[0]["name"]["bits"] == 9
    # back-to-back events: gaps take 0 bits
    spec = encode_columns(_timeline(gap_hi=1))[0]
    assert spec["mode"] == "gap" and spec["step"]["bits"] == 0
    # overlapping ranges (negative gaps): start deltas pack smaller than gaps, and are chosen
    spec = encode_columns(_timeline(overlap=True))[0]
    assert spec["mode"] == "delta" and spec["step"]["exceptions"] == 0


def test_a_few_wide_values_become_exceptions_many_widen_the_column():
    blob = Blob()
    v = np.arange(1000, dtype=np.int64) % 200
    v[[4, 500]] = [1 << 40, -7]
    spec = pack_int(blob, v)
    assert (spec["bits"], spec["exceptions"]) == (8, 2)
    assert unpack_int(blob.bytes(), spec).tolist() == v.tolist()
    v[::3] = 70_000  # a third of the values need 17 bits: exceptions no longer pay for them
    spec = pack_int(blob, v)
    assert (spec["bits"], spec["exceptions"]) == (17, 2)  # (1 << 40 and -7 still do not fit)
    assert unpack_int(blob.bytes(), spec).tolist() == v.tolist()
    v = np.full(10, 1 << 45, np.int64) + np.arange(10)
    spec = pack_int(blob, v)
    assert spec["bits"] == 64 and unpack_int(blob.bytes(), spec).tolist() == v.tolist()
    for k in (0, 1, 7, 32):  # forced widths fall back to exceptions for everything that overflows
        spec = pack_int(blob, v, bits=k)
        assert spec["exceptions"] == 10 and unpack_int(blob.bytes(), spec).tolist() == v.tolist()
    rng = np.random.default_rng(5)
    for k in range(33):  # every width, lengths that do and do not fill a 64-value block
        for n in (1, 63, 64, 65, 1000):
            v = rng.integers(0, 1 << k, n) if k else np.zeros(n, np.int64)
            spec = pack_int(blob, v, bits=k)
            assert spec["exceptions"] == 0 and unpack_int(blob.bytes(), spec).tolist() == v.tolist()


def test_huge_gap_and_duration_stay_exact_to_the_ns():
    tl = _timeline(huge=[(7, (1 << 41) + 1), (300, 3)])
    spec, _, d = _roundtrip(tl)
    assert spec["dur"]["exceptions"] >= 1 and spec["dur"]["bits"] < 32
    i = 7
    assert d["end"][i] - d["start"][i] == tl.end_ns[i] - tl.start_ns[i] > 1 << 41


def test_payload_values_match_the_scalar_decoder():
    tl = _timeline(payload=True)
    _, _, d = _roundtrip(tl)
    for i in range(len(tl)):
        if tl.payload_type[i]:
            want = float(decode_payload(int(tl.payload_type[i]), int(tl.payload_raw[i])))
            assert d["payload"][i] == want or (np.isnan(want) and np.isnan(d["payload"][i]))
        else:
            assert np.isnan(d["payload"][i])
    assert -3.25 in d["payload"] and -32.0 in d["payload"]


def test_view_sends_meta_and_one_buffer():
    tl = _timeline(overlap=True, payload=True)
    v = TimelineView(tl)
    assert v.meta["num_events"] == len(tl) and v.meta["max_depth"] == v.meta["columns"]["max_depth"]
    assert len(v.data) == v.meta["columns"]["bytes"]
    d = decode_columns(v.meta["columns"], v.data)
    assert d["start"].tolist() == tl.start_ns.tolist()
    state = v.get_state()
    assert set(state) >= {"meta", "data"} and not any(k.startswith("ev_") for k in state)
    other = _timeline(seed=3)
    v.load(other)
    assert decode_columns(v.meta["columns"], v.data)["end"].tolist() == other.end_ns.tolist()
    assert v.timeline is other


def test_million_events_payload_is_compact():
    rng = np.random.default_rng(0)
    n_tracks, per = 512, 1_000_000 // 512
    dur = rng.integers(20, 400, (n_tracks, per))
    gap = rng.integers(0, 60, (n_tracks, per))
    start = (np.cumsum(dur + gap, axis=1) - dur).ravel()
    tr = np.repeat(np.arange(n_tracks), per)
    tl = Timeline(
        names=list("abcde"),
        tracks=[Track((f"SM {t // 4}", f"warp {t % 4}")) for t in range(n_tracks)],
        track=tr,
        name_id=np.arange(tr.size) % 5,
        start_ns=start,
        end_ns=start + dur.ravel(),
        kind=np.zeros(tr.size, np.uint8),
    )
    spec, data = encode_columns(tl)
    # was 19 bytes per event (u4 track, u2 name, f8 start, f4 dur, u1 depth); now 3 + 6 + 9 bits
    assert len(data) / len(tl) < 2.27, len(data) / len(tl)


def _node_decode(spec, data, tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "data.bin").write_bytes(data)
    script = tmp_path / "decode.mjs"
    script.write_text(f"""
import {{ readFileSync }} from "node:fs";
import {{ decodeColumns }} from {json.dumps(CODEC.as_uri())};
const spec = JSON.parse(readFileSync({json.dumps(str(tmp_path / "spec.json"))}, "utf8"));
const file = readFileSync({json.dumps(str(tmp_path / "data.bin"))});
// hand the decoder a view at an odd offset, as a websocket message with several buffers can
const big = new Uint8Array(file.length + 3); big.set(file, 3);
const c = decodeColumns(spec, new DataView(big.buffer, 3, file.length));
const arr = (a) => a ? Array.from(a, (x) => Number.isNaN(x) ? null : x) : null;
process.stdout.write(JSON.stringify({{ offsets: arr(c.offsets), name: arr(c.name),
  start: Array.from(c.start, (x) => x + c.t0), startType: c.start.constructor.name, durType: c.dur.constructor.name,
  dur: arr(c.dur), depth: arr(c.depth), payload: arr(c.payload), maxdur: arr(c.maxDur),
  density: arr(c.density), t0: c.t0, t1: c.t1,
  short: decodeColumns(spec, new DataView(big.buffer, 3, file.length - 1)) }}));
""")
    r = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (needed to run the JS decoder)")
@pytest.mark.parametrize(
    "kw",
    [
        {"payload": True, "overlap": True, "empty_tracks": (2,)},
        {"huge": [(5, 1 << 33)], "names": 300},
        {"dur_hi": 300_000},
        {"dur_hi": 1 << 31, "gap_hi": 1 << 31, "per": 70},
    ],
)
def test_front_end_decoder_matches(kw, tmp_path):
    tl = _timeline(**kw)
    spec, data = encode_columns(tl)
    js = _node_decode(spec, data, tmp_path)
    ref = decode_columns(spec, data)
    assert js["short"] is None  # bytes that do not match the spec are refused, not misread
    assert js["offsets"] == np.searchsorted(tl.track, np.arange(len(tl.tracks) + 1)).tolist()
    assert js["name"] == tl.name_id.tolist()
    assert js["start"] == tl.start_ns.tolist()
    assert js["dur"] == (tl.end_ns - tl.start_ns).tolist()
    assert js["depth"] == ref["depth"].tolist()
    assert js["maxdur"] == ref["maxdur"].tolist() and js["density"] == ref["density"].tolist()
    assert (js["t0"], js["t1"]) == (spec["t0"], spec["t1"])
    # starts (after t0) and durations below 2**32 ns decode into Uint32Arrays, wider ones into Float64Arrays
    wide = lambda yes: "Float64Array" if yes else "Uint32Array"  # noqa: E731
    assert js["startType"] == wide(spec["smax"] >= 1 << 32)
    assert js["durType"] == wide(spec["dmax"] >= 1 << 32)
    assert (spec["smax"] >= 1 << 32) == (bool(kw.get("huge")) or kw.get("dur_hi", 0) >= 1 << 31)
    assert (spec["dmax"] >= 1 << 32) == bool(kw.get("huge"))
    if kw.get("payload"):
        # (JSON prints large doubles as integers: compare as doubles)
        got = [None if x is None else float(x) for x in js["payload"]]
        assert got == [None if np.isnan(x) else x for x in ref["payload"].tolist()]
    else:
        assert js["payload"] is None


_TOOLTIP_CELL = """\
import numpy as np
from txlab.timeline import Timeline, Track
from txlab.views.timeline import TimelineView
t0 = 1_000_000_123     # not 0: the widget works relative to the first start and must add it back
starts = t0 + np.array([0, 1000, 1600, 0, 700])
durs = np.array([987, 555, 999, 701, 1899])
tl = Timeline(names=["load", "mma"], tracks=[Track(("SM 0", "warp 0")), Track(("SM 0", "warp 1"))],
              track=[0, 0, 0, 1, 1], name_id=[0, 1, 0, 1, 0], start_ns=starts, end_ns=starts + durs,
              kind=np.zeros(5, np.uint8))
TimelineView(tl)
"""


@pytest.mark.browser
@pytest.mark.slow
def test_tooltips_show_exact_durations_in_the_browser(tmp_path):
    """Hover every event of a small timeline in JupyterLab: the tooltip names the event, its
    exact duration in ns, its absolute start and its lane."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from browser import harness as H

    reason = H.skip_reason()
    if reason:
        pytest.skip(reason)
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_TOOLTIP_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, tmp_path / "tips.ipynb")
    with H.lab_server(tmp_path) as url, H.browser() as ctx:
        console = H.Console()
        page = H.open_notebook(ctx, url, "tips.ipynb", console)
        H.run_all(page)
        sel = ".txlab-timeline"
        cv = page.locator(f"{sel} [data-testid='timeline-canvas']")
        page.wait_for_function(
            "(s) => document.querySelector(s + \" [data-testid='timeline-stats']\").textContent",
            arg=sel,
            timeout=20_000,
        )
        cv.scroll_into_view_if_needed()
        box = cv.bounding_box()
        tips = set()
        # rows: axis 22 px, group header 16 px, then one 18 px row per warp (bars 2 px in)
        for y in (22 + 16 + 9, 22 + 16 + 18 + 9):
            for x in range(175, int(box["width"]) - 2, 12):
                page.mouse.move(box["x"] + x, box["y"] + y)
                page.wait_for_timeout(20)
                text = page.evaluate(
                    "(s) => [...document.querySelectorAll(s + ' .txlab-tip')]"
                    ".filter(t => t.style.display !== 'none').map(t => t.textContent).join('|')",
                    sel,
                )
                if text:
                    tips.add(text)
        H.screenshot(page, "timeline-tooltips", sel)
        assert not console.real(), console.real()
    want = {
        ("load", 987, "1.000 s", "warp 0"),
        ("mma", 555, "1.000 s", "warp 0"),
        ("load", 999, "1.000 s", "warp 0"),
        ("mma", 701, "1.000 s", "warp 1"),
        ("load", 1899, "1.000 s", "warp 1"),
    }
    got = set()
    for t in tips:
        for name, dur, start, lane in want:
            fmt = f"{dur} ns" if dur < 1000 else f"{dur / 1e3:.2f} µs"
            if t.startswith(name) and f"duration {fmt}" in t and f"start {start}" in t and f"lane SM 0 / {lane}" in t:
                got.add((name, dur, start, lane))
    assert got == want, f"tooltips seen: {sorted(tips)}"


def test_view_says_what_the_clocks_count():
    """A GPU recording's clocks are ns; a timeline of a CPU-emulator run counts emulated work: the
    widget gets the unit (and formats its axis and tooltips with it), plot() says 'not time', and
    summary()'s table names it."""
    tl = _timeline()
    assert TimelineView(tl).meta["clock_unit"] == "ns" and not tl.emulated
    assert "time (" in tl.plot().axes[0].get_xlabel()
    emu = _timeline()
    emu.meta.update(clock_unit="warp-instr", provenance="emulated on the CPU: not time")
    v = TimelineView(emu)
    assert v.meta["clock_unit"] == "warp-instr" and "not time" in v.meta["provenance"]
    ax = emu.plot().axes[0]
    assert "emulated work (warp-instr" in ax.get_xlabel() and "EMULATED" in ax.get_title()
    assert "warp-instr>" in repr(emu)
    # its summary's table counts the same unit (it said "total ns")
    assert "total warp-instr" in str(emu.summary()) and "total ns" not in str(emu.summary())
    assert emu.summary().to_dict()["unit"] == "warp-instr" and "total ns" in str(tl.summary())
    root = Path(__file__).resolve().parents[1]
    # the source formats axis and tooltips with the unit; the minified bundle keeps the property name
    assert "D.meta.clock_unit" in (root / "widgets" / "src" / "timeline.js").read_text()
    assert ".meta.clock_unit" in (root / "txlab" / "static" / "timeline.js").read_text()
