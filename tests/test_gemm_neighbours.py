"""The measured neighbours' corrections to the GEMM time model (txlab.examples.gemm_neighbours): the shipped file's
verification, the family effects' fit, and what the corrections change in hopper_gemm's choice."""

import json
import math
import warnings

import pytest

from txlab.examples import gemm_model as gm
from txlab.examples import gemm_neighbours as nb
from txlab.examples import hopper_gemm as hg
from txlab.examples.gemm_config import parse_config

PP = "128x128x64_s6_c2_pp_tma"
WIDE = "128x256x64_s4_c2_tma"


def record(shape, name, slower=1.0, source="synthetic.json"):
    """A measurement of ``name`` at ``shape`` that ran ``slower`` times the model's time."""
    c = parse_config(name)
    t = gm.predict(*shape, c).time_s * slower
    return {
        "shape": list(shape),
        "config": name,
        "parsed": c,
        "time_us": t * 1e6,
        "ratio": 1.0,
        "source": source,
        "model_us": None,
    }


def test_the_shipped_measurements_load_verified_and_carry_this_models_times():
    records = nb.load_measured(fingerprint=gm.source_fingerprint())
    assert len(records) > 2000 and len({tuple(r["shape"]) for r in records}) > 500
    # written by this very model: regenerate with `python scripts/gemm_measured.py` after changing gemm_model.py
    assert all(r["model_us"] is not None for r in records), "stale model_us: run scripts/gemm_measured.py"
    r = records[0]
    assert r["model_us"] == pytest.approx(gm.predict(*r["shape"], r["parsed"]).time_s * 1e6, rel=1e-4)


def test_a_damaged_or_foreign_file_is_refused_with_the_reason(tmp_path):
    doc = json.loads(nb._measured_path().read_text())
    edited = json.loads(json.dumps(doc))
    edited["measurements"]["rows"][0][2] //= 2  # a time halved by hand
    path = tmp_path / "m.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="sha256"):
        nb.load_measured(path)
    foreign = dict(doc, format="something-else/1")
    path.write_text(json.dumps(foreign))
    with pytest.raises(ValueError, match="format"):
        nb.load_measured(path)


def test_written_rows_round_trip_and_an_invalid_row_is_named(tmp_path):
    recs = [record((2048, 2048, 4096), WIDE), record((2048, 2048, 4096), PP, 0.9)]
    path = tmp_path / "m.json"
    nb.write_measured(path, recs, device="test", predict=gm.predict, fingerprint=gm.source_fingerprint())
    back = nb.load_measured(path, fingerprint=gm.source_fingerprint())
    assert [(r["shape"], r["config"]) for r in back] == [(r["shape"], r["config"]) for r in recs]
    assert back[1]["time_us"] == pytest.approx(recs[1]["time_us"], rel=1e-6)
    assert all(r["model_us"] is not None for r in back)  # written by this model
    # a row whose configuration cannot compute its shape (TMA stores need N % 8 == 0), sealed anew: still refused
    from txlab.cache import seal_text

    doc = json.loads(path.read_text())
    body = doc["measurements"]
    body["shapes"][0][1] = 2047

    def sealed(body):
        path.write_text(seal_text(body, "measurements", format=nb.MEASURED_FORMAT, device="test"))
        return path

    with pytest.raises(ValueError, match=r"row 0 \(2048x2047x4096\)"):
        nb.load_measured(sealed(body))
    body["shapes"][0][1] = 2048
    # a configuration that is not a name at all (a list would not even key a dict): a ValueError, not a TypeError
    body["configs"][0] = ["128x256x64_s4_c2"]
    with pytest.raises(ValueError, match=r"row 0 \(2048x2048x4096\): config .*not a configuration name"):
        nb.load_measured(sealed(body))
    body["configs"][0] = WIDE
    # every column is checked, naming the row: an index past its list, a time that is not a positive integer, a
    # model time of this model's file that is not one either
    for col, value, message in (
        (0, 5, r"row 1: shape 5 is not an index into 1 shapes"),
        (1, -1, r"row 1 \(2048x2048x4096\): config -1 is not an index"),
        (2, 0, r"row 1 \(2048x2048x4096\): time_ns 0 is not a positive integer"),
        (2, 1.5, r"time_ns 1.5 is not a positive integer"),
        (3, 7, r"source 7 is not an index into 1 sources"),
        (4, None, r"row 1 \(2048x2048x4096\): model_ps None is not a positive integer"),
    ):
        saved, body["rows"][1][col] = body["rows"][1][col], value
        with pytest.raises(ValueError, match=message):
            nb.load_measured(sealed(body), fingerprint=gm.source_fingerprint())
        body["rows"][1][col] = saved
    body["rows"][1] = body["rows"][1][:4]
    with pytest.raises(ValueError, match=r"row 1 is not a list of 5 values"):
        nb.load_measured(sealed(body))
    body["rows"][1] = list(body["rows"][0])
    body["shapes"].append(list(body["shapes"][0]))
    with pytest.raises(ValueError, match=r"shapes are not distinct"):
        nb.load_measured(sealed(body))
    # a model time written by another model is not read (the model prices the row again), whatever it holds
    body["shapes"].pop()
    body["model"] = "another model"
    body["rows"][1][4] = None
    assert all(r["model_us"] is None for r in nb.load_measured(sealed(body), fingerprint=gm.source_fingerprint()))


def test_a_kind_that_ran_slower_than_the_others_at_the_same_shapes_is_charged_for_it():
    # ping-pong measured 20 % slower than priced and 128 x 256 as priced, side by side at three shapes
    shapes = [(4096, 4096, 4096), (4096, 8192, 4096), (8192, 4096, 2048)]
    recs = [r for s in shapes for r in (record(s, PP, 1.2), record(s, WIDE, 1.0))]
    near = nb.Neighbours(recs, gm.predict)
    pp, wide, other = near.corrections(
        4096, 6144, 4096, [parse_config(PP), parse_config(WIDE), parse_config("128x192x64_s4_c2_tma")]
    )
    assert pp.factor / wide.factor == pytest.approx(1.2, rel=0.1)  # most of the 20 %, shrunk a little
    # the 20 % is shared out as effects against each other: ping-pong's up, 128 x 256's down
    assert pp.effect > 0.05 and wide.effect < -0.05 and pp.measured == wide.measured >= 2
    assert other.weight == 0 and other.factor == pytest.approx(math.exp(nb.RISK))  # never measured: the risk charge
    assert "never" not in pp.describe() and "+" in pp.describe() and "no configuration" in other.describe()
    # a clock that ran every configuration of one shape 30 % slower changes nothing between the kinds
    recs2 = [dict(r, time_us=r["time_us"] * (1.3 if r["shape"] == [4096, 8192, 4096] else 1)) for r in recs]
    pp2, wide2 = nb.Neighbours(recs2, gm.predict).corrections(4096, 6144, 4096, [parse_config(PP), parse_config(WIDE)])
    assert pp2.factor / wide2.factor == pytest.approx(pp.factor / wide.factor, rel=1e-6)
    # one kind alone at a shape says nothing about kinds against each other
    alone = nb.Neighbours([record(s, PP, 1.5) for s in shapes], gm.predict)
    assert alone.effects(4096, 6144, 4096) == {}
    # nothing within CUTOFF bandwidths: no correction at all
    far = near.corrections(512, 512, 512 * 2**10, [parse_config(PP)])
    assert far == [nb.NONE]


def test_left_one_out_the_corrections_pick_better_than_the_model_alone():
    """The claim of the module docstring, on the shipped measurements: each shape ranked with only the other shapes'
    measurements, the picks lose less against each group's fastest than the model's own picks."""
    res = nb.left_one_out(nb.load_measured(fingerprint=gm.source_fingerprint()), gm.predict)
    s = res.summary()
    assert s["groups"] > 500
    assert s["corrected"]["mean_loss"] < 0.7 * s["model"]["mean_loss"]
    assert s["corrected"]["over_8pct"] < s["model"]["over_8pct"] and s["faster"] > 2 * s["slower"]


def test_the_level_of_the_shapes_nearby_scales_every_candidate_alike():
    # every kind ran 30 % slower than priced at these shapes (the model's absolute error, the clocks of the runs)
    shapes = [(4096, 4096, 4096), (4096, 8192, 4096), (8192, 4096, 2048)]
    recs = [r for s in shapes for r in (record(s, PP, 1.3 * 1.1), record(s, WIDE, 1.3))]
    near = nb.Neighbours(recs, gm.predict)
    configs = [parse_config(PP), parse_config(WIDE)]
    corrections, level = near.fit(4096, 6144, 4096, configs)
    assert corrections == near.corrections(4096, 6144, 4096, configs)
    # the residuals less each kind's effect: about 1.3 x (the kinds' effects share the 10 % between them)
    assert level.factor == pytest.approx(1.3 * 1.1**0.5, rel=0.05) and level.shapes == 2  # (8192x4096x2048: > 2x)
    assert "+36%" in level.describe() and "nearest 4096x8192x4096" in level.describe()
    assert near.fit(512, 512, 512 * 2**10, configs)[1] is None  # nothing near: no level
    # explain: ranked by the model's times, expected = the same times x one factor, so the order never changes
    choice = gm.explain(4096, 6144, 4096, neighbours=near)
    alone = gm.explain(4096, 6144, 4096, neighbours=False)
    assert choice.level == pytest.approx(level.factor) and alone.level == 1.0
    assert all(p.expected_s == pytest.approx(p.time_s * level.factor) for p in choice.predictions)
    assert "expected times x1.3" in " ".join(choice.notes) and "pred. us" in choice.table()
    assert choice.to_dict()["candidates"][0]["expected_us"] == pytest.approx(choice.predictions[0].expected * 1e6)


def test_no_expected_time_is_faster_than_any_gemm_measured():
    """Before: 65536^3 was predicted at 1025 TFLOP/s and 32768^3 at 1098, over the H200's dense bf16 peak (989);
    no GEMM measured there ever ran faster than ~820."""
    peak = gm.measured_neighbours().peak_flops
    assert 7.5e14 < peak < 8.5e14
    for shape in ((65536, 65536, 65536), (32768, 32768, 32768), (16384, 16384, 16384), (8192, 8192, 8192)):
        choice = hg.explain(*shape)
        assert max(p.expected_tflops for p in choice.predictions) <= peak / 1e12 * (1 + 1e-9), shape
    big = hg.explain(65536, 65536, 65536)
    assert big.predictions[0].tflops > peak / 1e12  # the model's own time, as ranked, would be
    assert any("faster than any GEMM measured on the H200" in n for n in big.notes)


def test_left_one_out_the_level_brings_the_expected_time_nearer_what_ran():
    """The claim of LEVEL_BANDWIDTH's comment: each shape's own measurements left out, the expected time (the
    ranking's time x the level of the shapes nearby) is nearer the measured time than the ranking's time is."""
    s = nb.left_one_out(nb.load_measured(fingerprint=gm.source_fingerprint()), gm.predict).summary()["absolute"]
    assert s["measurements"] > 2000
    assert s["expected_median_log_error"] < 0.7 * s["ranked_median_log_error"]


def test_the_choice_follows_what_was_measured_and_says_so():
    # H200 (r16e): 2488x9992x7168 ran 128 x 256 at 0.86 of cuBLAS, 128 x 128 ping-pong at 1.00; the model alone
    # prices 128 x 256 first
    assert gm.choose(2488, 9992, 7168, neighbours=False).name == WIDE
    choice = hg.explain(2488, 9992, 7168)
    assert choice.winner.name == PP and choice.predictions[0].correction.factor < 0.95
    assert "measured neighbours" in choice.why and "measured x" in choice.table()
    assert choice.to_dict()["candidates"][0]["measured_correction"] < 0.95


def test_decode_sized_outputs_and_other_sm_counts_keep_the_model_alone():
    for shape in ((16, 8192, 8192), (2856, 24, 42816)):
        assert all(p.correction is None for p in gm.explain(*shape).predictions)
    assert all(p.correction is None for p in gm.explain(2488, 9992, 7168, num_sms=114).predictions)


def test_a_damaged_shipped_file_warns_once_and_the_model_chooses_alone(monkeypatch, tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    monkeypatch.setattr(nb, "_measured_path", lambda: bad)
    nb.shipped.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cfg = gm.choose(2488, 9992, 7168)
        assert cfg == gm.choose(2488, 9992, 7168, neighbours=False)
        assert any("ignoring the measurements file" in str(x.message) for x in w)
    finally:
        nb.shipped.cache_clear()


def test_a_shipped_row_that_fails_its_check_when_first_used_turns_the_corrections_off(monkeypatch, tmp_path):
    """The shipped file's rows are checked when a query first uses them (the first choice stays cheap): a sealed
    file whose row near the query cannot compute its shape warns once, naming the row, and the model chooses alone
    from then on."""
    from txlab.cache import seal_text

    shape = (2488, 9992, 7168)
    doc = json.loads(nb._measured_path().read_text())
    body = doc["measurements"]
    body["shapes"].append([2488, 9991, 7168])  # TMA stores need N % 8 == 0
    body["rows"].append([len(body["shapes"]) - 1, body["configs"].index(WIDE), 100_000, 0, 90_000_000])
    bad = tmp_path / "m.json"
    bad.write_text(seal_text(body, "measurements", lines="rows", format=nb.MEASURED_FORMAT, device="test"))
    monkeypatch.setattr(nb, "_measured_path", lambda: bad)
    nb.shipped.cache_clear()
    try:
        assert gm.measured_neighbours().peak_flops > 0  # read before any row is checked
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cfg = gm.choose(*shape)
            again = gm.choose(4096, 4096, 4096)
        msgs = [str(x.message) for x in w if "ignoring the measurements file" in str(x.message)]
        assert len(msgs) == 1 and f"row {len(body['rows']) - 1} (2488x9991x7168)" in msgs[0], msgs
        assert cfg == gm.choose(*shape, neighbours=False)
        assert again == gm.choose(4096, 4096, 4096, neighbours=False)
        assert gm.measured_neighbours().peak_flops == 0.0  # nothing of the file is left, its fastest rate neither
    finally:
        nb.shipped.cache_clear()


def test_a_decode_sized_n_runs_as_c_transposed_on_the_decode_tiles():
    """H200, round 17 (r17d): 13440x24x22528 0.66 of cuBLAS with 128 x 128 tiles, 1.09 swapped onto 64-row tiles;
    4248x8x29952 0.80 -> 1.08."""
    for shape in ((13440, 24, 22528), (4248, 8, 29952), (2856, 24, 42816)):
        cfg = gm.choose(*shape)
        assert cfg.swap_ab and cfg.bm == 64, (shape, cfg.name)
        cfg.check_shape(*shape)


def test_ping_pong_pays_for_an_epilogue_longer_than_its_mainloop():
    """H200, round 17: 12936x11896x320 128 x 128 ping-pong 1.26 of cuBLAS with the TMA epilogue, 0.47 with the
    direct one (5 k-steps cannot hide a one-warpgroup direct store)."""
    shape = (12936, 11896, 320)
    direct = gm.predict(*shape, parse_config("128x128x64_s7_c2_pp"))
    tma = gm.predict(*shape, parse_config(PP))
    assert direct.time_s > 1.4 * tma.time_s
    assert gm.choose(*shape).name == PP
    # at long K the mainloop hides either
    long = (4096, 4096, 8192)
    d, t = (gm.predict(*long, parse_config(n)).time_s for n in ("128x128x64_s7_c2_pp", PP))
    assert d == pytest.approx(t, rel=0.02)


def test_the_choice_cost_benchmark_times_fresh_processes_and_prints_its_table(capsys):
    """benchmarks/gemm_choice.py (the README's choice-cost row): a fresh process's first explain and later ones,
    judged against the 50 ms target."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "benchmarks" / "gemm_choice.py"
    spec = importlib.util.spec_from_file_location("gemm_choice", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    shapes = bench.random_shapes(200, 3)
    assert shapes == bench.random_shapes(200, 3) and all(K % 8 == 0 and min(M, N, K) >= 1 for M, N, K in shapes)
    assert bench.main(["--processes", "1", "--shapes", "3"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert "first explain in a fresh process" in rows and "later explains, one process" in rows
    first = rows["first explain in a fresh process"].split("|")
    assert int(first[2]) == 1 and float(first[3]) > 0 and ("ok" in first[6] or "OVER" in first[6])
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "1"])


def _fit_row_by_row(records, M, N, K):
    """The fit of the module docstring written out row by row (what the per-shape sums must reproduce)."""
    q = (math.log2(M), math.log2(N), math.log2(K))
    by_shape = {}
    for r in records:
        d2 = sum((math.log2(a) - z) ** 2 for a, z in zip(r["shape"], q))
        if d2 < (nb.CUTOFF * nb.BANDWIDTH) ** 2:
            w = math.exp(-d2 / (2 * nb.BANDWIDTH**2))
            resid = math.log(r["time_us"] / r["model_us"])
            by_shape.setdefault(tuple(r["shape"]), []).append((nb.family(r["parsed"], r["shape"][2]), w, resid))
    rows = [v for v in by_shape.values() if len({f for f, _, _ in v}) > 1]
    weight = {}
    for v in rows:
        for f, w, _ in v:
            weight[f] = weight.get(f, 0.0) + w
    b = dict.fromkeys(weight, 0.0)
    for _ in range(nb.ROUNDS):
        levels = [sum(w * (r - b[f]) for f, w, r in v) / sum(w for _, w, _ in v) for v in rows]
        num = dict.fromkeys(weight, 0.0)
        for v, level in zip(rows, levels):
            for f, w, r in v:
                num[f] += w * (r - level)
        b = {f: num[f] / (weight[f] + nb.PRIOR) for f in weight}
    return {f: (b[f], weight[f]) for f in weight}


def test_the_per_shape_sums_fit_what_the_rows_fit():
    """The fit runs on each shape's per-family sums of residuals (every row of a shape has the shape's weight):
    the effects must be the row-by-row fit's, on the shipped measurements, at shapes of every kind."""
    records = nb.load_measured(fingerprint=gm.source_fingerprint())
    near = gm.measured_neighbours()
    for shape in ((3333, 4444, 5552), (2488, 9992, 7168), (512, 512, 16384), (8192, 8192, 8192), (1000, 3000, 5000)):
        want, got = _fit_row_by_row(records, *shape), near.effects(*shape)
        assert want.keys() == got.keys() and len(got) > 3, shape
        for f, (b, w) in want.items():
            assert got[f][0] == pytest.approx(b, rel=1e-9, abs=1e-12) and got[f][1] == pytest.approx(w, rel=1e-12)


def test_the_shipped_file_is_read_column_by_column_into_its_distinct_shapes_and_names():
    m = nb.read_measured(fingerprint=gm.source_fingerprint())
    rows = len(m.time_ns)
    assert rows > 4000 and len(m.shapes) < rows / 2 and len(m.configs) < rows / 4  # what the indices save
    assert len(m.shape) == len(m.config) == len(m.source) == len(m.model_ps) == rows
    assert all(type(t) is int and t > 0 for t in m.time_ns)
    rec = m.records()[0]
    assert rec["time_us"] == m.time_ns[0] / 1e3 and tuple(rec["shape"]) == m.shapes[m.shape[0]]
    # a file of another model: its model times are not read at all
    assert nb.read_measured(fingerprint="0" * 64).model_ps is None


def test_a_rows_configuration_is_parsed_once_per_name_and_checked_once_per_shape():
    """Measured.row_config is the one path from a row to its GemmConfig (load_measured and the neighbours' fit both
    go through it): one parse per name, one check per (shape, name), and a row that fails names itself."""
    recs = [dict(record(s, WIDE), parsed=None) for s in ((2048, 2048, 4096), (4096, 2048, 4096))]
    recs.append(dict(recs[0]))  # the same shape and name measured twice
    recs.append({"shape": [2048, 2047, 4096], "config": WIDE, "parsed": None, "time_us": 1.0})  # TMA stores: N % 8
    m = nb.Measured.from_records(recs)
    assert not m.parsed and not m.checked
    first = m.row_config(0)
    assert m.row_config(1) is first and m.row_config(2) is first and len(m.parsed) == 1
    assert m.checked == {(0, 0), (1, 0)}
    with pytest.raises(nb.DamagedRow, match=r"row 3 \(2048x2047x4096\): config '" + WIDE):
        m.row_config(3)
    assert (2, 0) not in m.checked
    # records that bring their parsed configuration were checked by whoever parsed them
    trusted = nb.Measured.from_records([record((2048, 2048, 4096), WIDE)])
    assert trusted.checked == {(0, 0)} and trusted.parsed[WIDE] == first
