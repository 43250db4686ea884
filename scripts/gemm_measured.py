"""The GEMM measurements the time model's choice is corrected by (txlab/data/hopper_gemm_measured.json), and how
much the correction helps.

    python scripts/gemm_measured.py            # rebuild the file from benchmarks/results/gemm_*.json
    python scripts/gemm_measured.py --check    # left-one-shape-out: the pick with and without corrections

``--check`` ranks, for every group of configurations measured together on one shape, the group's configurations
by the model alone and by the model with the corrections of every *other* shape's measurements (the shape's own
left out), and prints how much slower than the group's fastest each pick ran (CPU only; no GPU).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from txlab.examples import gemm_config, gemm_model, gemm_neighbours  # noqa: E402

#: the result files measured beside cuBLAS (gemm_shapes.json is a copy of the latest gemm_shapes_* run)
PATTERNS = ("gemm_explore_*.json", "gemm_shapes_*.json", "gemm_unseen_*.json", "gemm_fresh_*.json", "gemm_weak_*.json")


#: result files kept as a record but left out of the measurements, with why
LEFT_OUT = {
    "gemm_unseen_2026-12-04_1617.json": "host-bound timing: cuBLAS's own times at 1024^3 and 512x2048x1024 were 1.9x "
    "those of every other run (the timer had no GPU-side spin before its start event yet)",
}


def left_out_config(config) -> str | None:
    """Why measurements of ``config`` (a GemmConfig) are left out of the measurements file, or None to keep them:
    rows of configurations the model does not offer move the fitted effects of the families it does offer (the
    effects are fitted jointly with each shape's level)."""
    if config.cluster_size >= 8:
        return (
            "8-CTA clusters, which the model does not offer: at 116 mid-sized unaligned shapes (H200, 2026-12-05, r20b) "
            "they beat the old pick at 37 and lost at 65 (geometric mean 0.94); with their rows the left-one-out loss "
            "of the corrections rose from 1.05 % to 1.48 %"
        )
    return None


#: the GPU the corrections speak for: runs on another (an H100's, with less HBM bandwidth, and other cuBLAS kernels)
#: stay in benchmarks/results as records and out of the measurements. Files without a device are the H200 runs of
#: rounds 9-12, before the scripts recorded one.
DEVICE = "H200"


def run_device(path: Path) -> str:
    """The GPU a result file was measured on ("" where it does not say)."""
    data = json.loads(path.read_text())
    return (data.get("device") or (data.get("summary") or {}).get("device") or "") if isinstance(data, dict) else ""


def result_files() -> list[Path]:
    out = []
    for pattern in PATTERNS:
        out += sorted((ROOT / "benchmarks" / "results").glob(pattern))
    return [p for p in out if "fp8" not in p.name and p.name not in LEFT_OUT and DEVICE in (run_device(p) or DEVICE)]


def build(path: Path) -> None:
    files = result_files()
    records = gemm_neighbours.records_from_results(files)
    kept = [r for r in records if left_out_config(gemm_config.parse_config(r["config"])) is None]
    if len(kept) < len(records):
        print(f"left out {len(records) - len(kept)} measurements of configurations the model does not offer")
    records = kept
    devices = set()
    for f in files:
        devices.add(run_device(f))
    device = "; ".join(sorted(d for d in devices if d)) or "unknown"
    gemm_neighbours.write_measured(
        path, records, device=device, predict=gemm_model.predict, fingerprint=gemm_model.source_fingerprint()
    )
    shapes = {tuple(r["shape"]) for r in records}
    print(f"{path}: {len(records)} measurements of {len(shapes)} shapes from {len(files)} result files ({device})")


def check(path: Path | None) -> None:
    records = gemm_neighbours.load_measured(path, fingerprint=gemm_model.source_fingerprint())
    res = gemm_neighbours.left_one_out(records, gemm_model.predict)
    summary = res.summary()
    print(
        f"{summary['groups']} groups of configurations measured together (H200), each shape's own "
        "measurements left out of its corrections"
    )
    print(f"{'ranking':<18} {'mean loss':>9} {'> 3 %':>6} {'> 8 %':>6}  (pick's time / group's fastest)")
    for name, key in (("model alone", "model"), ("with neighbours", "corrected")):
        s = summary[key]
        print(f"{name:<18} {s['mean_loss']:>9.2%} {s['over_3pct']:>6} {s['over_8pct']:>6}")
    geo = math.exp(statistics.mean(math.log(a / b) for a, b in zip(res.model, res.corrected)))
    print(
        f"picks the correction moves: {summary['faster']} faster, {summary['slower']} slower (by > 1 %); "
        f"geometric mean speed-up {geo:.4f}"
    )
    ab = summary["absolute"]
    print(
        f"absolute time, {ab['measurements']} measurements: median |log(measured / time)| "
        f"{ab['ranked_median_log_error']:.3f} for the ranking's time, {ab['expected_median_log_error']:.3f} for "
        "the expected time (times the shape's level)"
    )
    print("largest losses with neighbours:")
    worst = sorted(zip(res.corrected, res.model, res.groups), reverse=True)[:8]
    for b, a, (source, shape) in worst:
        print(f"  {'x'.join(map(str, shape)):<20} {source:<44} {b:.3f} (model alone {a:.3f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="left-one-shape-out check of the shipped (or --path) file")
    ap.add_argument("--path", type=Path, default=None, help="the measurements file (default: txlab's shipped one)")
    args = ap.parse_args(argv)
    if args.check:
        check(args.path)
    else:
        build(args.path or ROOT / "txlab" / "data" / gemm_neighbours.MEASURED)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
