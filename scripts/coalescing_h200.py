"""On a GPU with Nsight Compute: the static memory analyses against ncu, per user line.

For each kernel below, ``txlab.profile`` measures ncu's source counters (global: L2 theoretical
sectors over L1 tag requests; shared: wavefronts and their ideal) and the same kernel's static
analyses (``txlab.pools.coalescing`` and ``layout(...).bank_conflicts()``, no GPU) predict them.
Every line the static walk could analyse must equal ncu's figure; lines it calls unknown are
listed as such (the point is that it says so). Prints a table, writes JSON.

    python scripts/coalescing_h200.py [--out benchmarks/results/static_vs_ncu.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "kernels"))


def kernels():
    import memory_patterns as mp

    from txlab.examples import transpose as tr

    rng = np.random.default_rng(0)
    n = 1 << 20
    f32 = lambda k: rng.standard_normal(k).astype("float32")  # noqa: E731
    out = []
    for s in (1, 2, 4, 32):
        out.append((f"strided_{s}", mp.strided_read(s, n), lambda s=s: (f32(n * s), np.zeros(n, "float32"))))
    out.append(
        ("gather", mp.gather(n), lambda: (f32(n), rng.integers(0, n, n).astype("int32"), np.zeros(n, "float32")))
    )
    out.append(("vector_copy", mp.vector_copy(n), lambda: (f32(n), np.zeros(n, "float32"))))
    out.append(
        ("column_sum", mp.column_sum(2048), lambda: (f32(2048 * 2048).reshape(2048, 2048), np.zeros(32, "float32")))
    )
    for v in ("naive", "padded", "swizzled"):
        out.append(
            (
                f"transpose_{v}",
                tr.transpose_kernel(2048, v),
                lambda: (f32(2048 * 2048).reshape(2048, 2048), np.zeros((2048, 2048), "float32")),
            )
        )
    return out


def compare(name, kernel, make_args) -> list[dict]:
    import txlab

    compiled = txlab.compile(kernel)
    static_g = txlab.pools.coalescing(compiled).by_line()
    static_s: dict = {}
    for r in txlab.pools.layout(compiled).bank_conflicts():
        d = static_s.setdefault(r.lineno, {"wf": 0, "ideal": 0, "unknown": 0})
        if r.status == "unknown":
            d["unknown"] += 1
        else:
            d["wf"] += r.total_wavefronts
            d["ideal"] += r.total_ideal_wavefronts
    prof = txlab.profile(compiled, *make_args())
    rows = []
    for line in prof.lines:
        ln = line["line"]
        if line.get("l1_requests_global"):
            ncu_spr = line["l2_sectors_global"] / line["l1_requests_global"]
            st = static_g.get(ln)
            # a line is comparable only when every global access on it was analysed (ncu pools them)
            known = st is not None and st["status"] == "analysed" and st["sectors_per_request"] is not None
            rows.append(
                {
                    "kernel": name,
                    "line": ln,
                    "what": "global sectors/request",
                    "ncu": ncu_spr,
                    "static": st["sectors_per_request"] if known else None,
                    "status": st["status"] if st else "missing",
                    "equal": (abs(st["sectors_per_request"] - ncu_spr) < 1e-6) if known else None,
                }
            )
        if line.get("shared_wavefronts"):
            st = static_s.get(ln)
            ncu_ratio = line["shared_wavefronts"] / max(line.get("shared_wavefronts_ideal") or 1, 1)
            known = st is not None and not st["unknown"] and st["ideal"]
            ratio = st["wf"] / st["ideal"] if known else None
            rows.append(
                {
                    "kernel": name,
                    "line": ln,
                    "what": "shared wavefronts/ideal",
                    "ncu": ncu_ratio,
                    "static": ratio,
                    "status": "analysed" if known else "unknown" if st else "missing",
                    "equal": (abs(ratio - ncu_ratio) < 1e-6) if known else None,
                }
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "static_vs_ncu.json"))
    args = ap.parse_args()
    import txlab

    if not txlab.device.has_gpu():
        print("no GPU here: this script compares against Nsight Compute on a GPU")
        return 2
    t0 = time.time()
    rows, failed = [], []
    for name, kernel, make_args in kernels():
        try:
            rows += compare(name, kernel, make_args)
        except Exception as exc:  # noqa: BLE001 - one kernel's failure is a row, not the end
            failed.append({"kernel": name, "error": f"{type(exc).__name__}: {exc}"})
    print(f"{'kernel':<20} {'line':>5} {'what':<24} {'ncu':>8} {'static':>8}  verdict")
    for r in rows:
        verdict = {True: "equal", False: "DIFFERENT", None: r["status"]}[r["equal"]]
        st = "-" if r["static"] is None else f"{r['static']:.2f}"
        print(f"{r['kernel']:<20} {r['line']:>5} {r['what']:<24} {r['ncu']:>8.2f} {st:>8}  {verdict}")
    for f in failed:
        print(f"{f['kernel']}: FAILED {f['error']}")
    analysable = [r for r in rows if r["equal"] is not None]
    ok = sum(r["equal"] for r in analysable)
    print(
        f"\n{ok} of {len(analysable)} analysable lines equal ncu; {len(rows) - len(analysable)} unknown/missing; "
        f"{len(failed)} kernel(s) failed; {time.time() - t0:.0f} s"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"rows": rows, "failed": failed, "device": txlab.device.probe().name}, indent=1)
    )
    return 0 if ok == len(analysable) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
