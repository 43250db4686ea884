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
sys.path.insert(0, str(ROOT / "tests"))


def kernels():
    import memory_patterns as mp

    from txlab.examples import transpose as tr

    rng = np.random.default_rng(0)
    n = 1 << 20
    f32 = lambda k: rng.standard_normal(k).astype("float32")  # noqa: E731
    f16 = lambda k: rng.standard_normal(k).astype("float16")  # noqa: E731
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
    # shared memory through ldmatrix / stmatrix (64 CTAs of 4 warps; 128-byte rows conflict 8-way,
    # a 16-byte pad is conflict-free) and cp.async's shared write (16 bytes per lane, stride 1 / 2)
    ctas = 64
    for name, rh, num, trans in (("x4", 64, 4, False), ("x4_pad", 72, 4, False), ("x2_trans", 64, 2, True)):
        out.append(
            (
                f"ldmatrix_{name}",
                mp.ldmatrix_tile(rh, num, trans, ctas),
                lambda rh=rh: (f16(ctas * 32 * rh), np.zeros(ctas * 1024, "float16")),
            )
        )
    for name, rh, num, trans in (("x4", 64, 4, False), ("x1_pad_trans", 72, 1, True)):
        out.append(
            (
                f"stmatrix_{name}",
                mp.stmatrix_tile(rh, num, trans, ctas),
                lambda rh=rh: (f16(ctas * 1024), np.zeros(ctas * 32 * rh, "float16")),
            )
        )
    for stride in (1, 2):
        out.append(
            (
                f"cp_async_{stride}",
                mp.cp_async_copy(stride, ctas),
                lambda: (f32(ctas * 512), np.zeros(ctas * 512, "float32")),
            )
        )
    # Apache TVM's own ldmatrix/stmatrix tile copies (tests/upstream) and a TMA + wgmma kernel (async
    # proxy: the static answer is "no LSU wavefronts"; ncu's LSU counters must show none there)
    from upstream import k_copy_ldstmatrix as ls

    for direction, trans in (("ld", False), ("st", True)):
        kern, (m, nn) = ls._build_warp_kernel(4 if direction == "ld" else 2, direction, trans)
        out.append(
            (
                f"tvm_{direction}matrix_warp",
                kern,
                lambda m=m, nn=nn: (f16(m * nn).reshape(m, nn), np.zeros((m, nn), "float16")),
            )
        )
    from txlab.api_examples import wgmma

    out.append(("wgmma_ss_tma", wgmma.ss_kernel(), lambda: wgmma.inputs("ss")))
    out.append(("wgmma_rs_tma", wgmma.rs_kernel(), lambda: wgmma.inputs("rs")))
    return out


def compare(name, kernel, make_args) -> list[dict]:
    import txlab

    compiled = txlab.compile(kernel)
    static_g = txlab.pools.coalescing(compiled).by_line()
    static_s: dict = {}
    for r in txlab.pools.layout(compiled).bank_conflicts():
        d = static_s.setdefault(r.lineno, {"wf": 0, "ideal": 0, "unknown": 0, "async": 0, "kinds": set()})
        d["kinds"].add(r.access)
        if r.status == "unknown":
            d["unknown"] += 1
        else:  # async rows: TMA none, a wgmma the wavefronts ncu's source view counts for it
            d["async"] += r.status == "async"
            d["wf"] += r.total_wavefronts * (r.grid_ctas or 1)
            d["ideal"] += r.total_ideal_wavefronts * (r.grid_ctas or 1)
    prof = txlab.profile(compiled, *make_args())
    rows = []
    ncu_lines = {line["line"]: line for line in prof.lines}
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
                    # a line ncu counted that the static analysis has no access on is a miss
                    "equal": (abs(st["sectors_per_request"] - ncu_spr) < 1e-6) if known else False if not st else None,
                }
            )
    # shared memory: every line ncu counted LSU wavefronts on, and every line with a static shared row
    for ln in sorted(set(static_s) | {k for k, v in ncu_lines.items() if v.get("shared_wavefronts")}, key=str):
        line = ncu_lines.get(ln, {})
        st = static_s.get(ln)
        ncu_wf, ncu_ideal = line.get("shared_wavefronts") or 0, line.get("shared_wavefronts_ideal") or 0
        known = st is not None and not st["unknown"]
        rows.append(
            {
                "kernel": name,
                "line": ln,
                "what": "shared wavefronts (grid)",
                "kinds": sorted(st["kinds"]) if st else [],
                "ncu": ncu_wf,
                "ncu_ideal": ncu_ideal,
                "static": st["wf"] if known else None,
                "static_ideal": st["ideal"] if known else None,
                "status": ("async proxy" if st["async"] and not st["wf"] else "analysed")
                if known
                else "unknown"
                if st
                else "missing",
                "equal": (st["wf"] == ncu_wf and st["ideal"] == ncu_ideal) if known else False if not st else None,
            }
        )
    return rows


def _print_row(r) -> None:
    verdict = {True: "equal", False: "MISSING" if r["status"] == "missing" else "DIFFERENT", None: r["status"]}[
        r["equal"]
    ]
    if "ncu_ideal" in r:  # shared: wavefronts/ideal over the grid
        ncu = f"{r['ncu']}/{r['ncu_ideal']}"
        st = "-" if r["static"] is None else f"{r['static']}/{r['static_ideal']}"
        verdict += f" ({', '.join(r['kinds'])})" if r["kinds"] else ""
    else:
        ncu, st = f"{r['ncu']:.2f}", "-" if r["static"] is None else f"{r['static']:.2f}"
    print(f"{r['kernel']:<22} {str(r['line']):>5} {r['what']:<24} {ncu:>12} {st:>12}  {verdict}", flush=True)


def main() -> int:
    import signal

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "static_vs_ncu.json"))
    ap.add_argument("--only", nargs="*", help="kernel names to run, in this order (default: all)")
    ap.add_argument("--timeout", type=int, default=40, help="seconds per kernel (build, analyses, ncu)")
    args = ap.parse_args()
    import txlab

    if not txlab.device.has_gpu():
        print("no GPU here: this script compares against Nsight Compute on a GPU")
        return 2

    def expire(*_):
        raise TimeoutError(f"over {args.timeout} s")

    signal.signal(signal.SIGALRM, expire)
    t0 = time.time()
    rows, failed = [], []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    device = txlab.device.probe().name
    print(f"{'kernel':<22} {'line':>5} {'what':<24} {'ncu':>12} {'static':>12}  verdict", flush=True)
    todo = kernels()
    if args.only:  # in the order given
        by = {k[0]: k for k in todo}
        todo = [by[n] for n in args.only if n in by]
    for name, kernel, make_args in todo:
        signal.alarm(args.timeout)
        try:
            got = compare(name, kernel, make_args)
        except Exception as exc:  # noqa: BLE001 - one kernel's failure is a row, not the end
            failed.append({"kernel": name, "error": f"{type(exc).__name__}: {exc}"})
            print(f"{name}: FAILED {failed[-1]['error']}", flush=True)
            continue
        finally:
            signal.alarm(0)
        rows += got
        for r in got:
            _print_row(r)
        out.write_text(json.dumps({"rows": rows, "failed": failed, "device": device}, indent=1))
    analysable = [r for r in rows if r["equal"] is not None]
    ok = sum(r["equal"] for r in analysable)
    print(
        f"\n{ok} of {len(analysable)} analysable lines equal ncu; {len(rows) - len(analysable)} unknown/missing; "
        f"{len(failed)} kernel(s) failed; {time.time() - t0:.0f} s",
        flush=True,
    )
    out.write_text(json.dumps({"rows": rows, "failed": failed, "device": device}, indent=1))
    return 0 if ok == len(analysable) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
