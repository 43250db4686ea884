"""Profile notebook 09's kernels on this GPU with Nsight Compute and record the results.

    python3 scripts/profile_h200.py [OUT_DIR]        # default $OUT, else /tmp/out

Writes (at most 8 files): ``profiles.json`` (also copied to benchmarks/results/ when run from a
checkout), one ``<name>.profile.json`` per kernel (the saved profiles for txlab/data) and the raw
``.ncu-rep`` of the naive transpose and of the GEMM. Per kernel: duration under ncu vs txlab.bench
without it, headline metrics, top hot lines, profiling wall time and report-reading time,
attribution share, theoretical occupancy (txlab) vs the driver's and ncu's. Checks, each printed
PASS/FAIL: the naive transpose's shared-load bank conflicts >= 8x the padded and the swizzled
ones'; the GEMM's hottest line is a wgmma line; >= 95% of the GEMM's samples attributed to lines;
txlab's occupancy equals the driver's for every kernel. One kernel's failure is recorded and the
others still run; ``profiles.json`` is rewritten after each kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _kernels():
    """(name, build, make_args, bytes, flops) of every notebook kernel, cheapest first; ``build()``
    returns the Compiled kernel."""
    import txlab
    from txlab.examples import bandwidth as bw
    from txlab.examples import hopper_gemm as hg
    from txlab.examples import transpose as tr

    import numpy as np

    # arguments travel to the profiled process through /dev/shm: size them to what it holds
    shm_free = shutil.disk_usage("/dev/shm").free if os.path.isdir("/dev/shm") else 0
    big = shm_free >= 4 << 30
    n_t, n_copy, g = (8192, 1 << 26, 8192) if big else (4096, 1 << 24, 4096)
    print(f"/dev/shm free {shm_free / 2**30:.1f} GiB: transposes {n_t}^2, copy {n_copy} floats, GEMM {g}^3")

    def transpose_args():
        a = np.random.default_rng(0).standard_normal((n_t, n_t)).astype("float32")
        return [a, np.zeros_like(a)]

    def copy_args():
        src = np.random.default_rng(1).standard_normal(n_copy).astype("float32")
        return [src, np.zeros_like(src)]

    def gemm_args():
        import torch

        gen = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(g, g, device="cuda", dtype=torch.bfloat16, generator=gen)
        b = torch.randn(g, g, device="cuda", dtype=torch.bfloat16, generator=gen)
        return [a, b, torch.zeros(g, g, device="cuda", dtype=torch.bfloat16)]

    out = []
    for v in tr.VARIANTS:
        out.append(
            (
                f"transpose_{v}",
                lambda v=v: txlab.compile(tr.transpose_kernel(n_t, v)),
                transpose_args,
                tr.transpose_bytes(n_t),
                None,
            )
        )
    out.append(("vec_copy", lambda: txlab.compile(bw.copy_kernel(n_copy)), copy_args, bw.copy_bytes(n_copy), None))
    out.append(
        ("hopper_gemm", lambda: hg.build(g, g, g, hg.GemmConfig()), gemm_args, hg.min_bytes(g, g, g), hg.flops(g, g, g))
    )
    return out


def _check_output(name, compiled, args):
    """Correctness of the kernel on this GPU (transposes and copy; the GEMM is checked by notebook 07)."""
    import numpy as np

    import txlab

    if name.startswith("transpose"):
        a = args[0]
        return txlab.check(compiled, (a, np.zeros_like(a)), reference=lambda a, b: a.T.copy()).ok
    if name == "vec_copy":
        s = args[0]
        return txlab.check(compiled, (s, np.zeros_like(s)), reference=lambda s, d: s.copy()).ok
    return None


def profile_one(name, build, make_args, nbytes, flops, out_dir: Path, keep_report: bool) -> dict:
    import txlab
    from txlab import occupancy as occ

    rec: dict = {"name": name}
    t = time.perf_counter()
    compiled = build()
    rec["compile_s"] = time.perf_counter() - t
    kernel = compiled.kernels[0]
    rec["kernel"] = kernel
    args = make_args()
    try:
        rec["correct"] = _check_output(name, compiled, args)
    except Exception as exc:  # noqa: BLE001
        rec["correct"] = f"{type(exc).__name__}: {exc}"
    # occupancy: txlab's calculator vs the driver
    o = txlab.occupancy_of(compiled)
    rec["occupancy"] = {
        "txlab_blocks_per_sm": o.blocks_per_sm,
        "txlab_limiter": o.limiter,
        "txlab_occupancy": o.occupancy,
    }
    try:
        rec["occupancy"]["driver_blocks_per_sm"] = occ.driver_blocks_per_sm(compiled)
    except Exception as exc:  # noqa: BLE001
        rec["occupancy"]["driver_error"] = f"{type(exc).__name__}: {exc}"
    # without ncu
    t = time.perf_counter()
    b = txlab.bench(compiled, *args, rep=30, warmup=5, bytes=nbytes, flops=flops)
    rec["bench"] = {**b.to_dict(), "wall_s": time.perf_counter() - t}
    # under ncu
    report = out_dir / f"{name}.ncu-rep" if keep_report else None
    t = time.perf_counter()
    prof = txlab.profile(compiled, *args, report_path=report, timeout_s=240)
    rec["profile_wall_s"] = time.perf_counter() - t
    prof.save(out_dir / f"{name}.profile.json")
    h = prof.headline
    rec["timings"] = prof.timings
    rec["headline"] = {k: v for k, v in h.items()}
    dur_ns = prof.duration_ns
    rec["duration_ncu_ms"] = dur_ns / 1e6 if dur_ns else None
    rec["duration_bench_ms"] = b.median_ms
    rec["ncu_over_bench"] = (dur_ns / 1e6) / b.median_ms if dur_ns and b.median_ms else None
    if nbytes and dur_ns:
        rec["gbps_ncu"] = nbytes / (dur_ns * 1e-9) / 1e9
    if flops and dur_ns:
        rec["tflops_ncu"] = flops / (dur_ns * 1e-9) / 1e12
    rec["bound"] = prof.bound()
    rec["summary"] = prof.summary()
    rec["samples"] = prof.total_samples
    rec["attributed_share"] = prof.attributed_share
    rec["line_kind"] = prof.line_kind
    rec["hot_lines"] = [
        {
            k: r[k]
            for k in (
                "line",
                "text",
                "samples",
                "share",
                "top_stalls",
                "inst_executed",
                "shared_wavefronts",
                "l2_sectors_global",
            )
        }
        for r in prof.hot_lines(5)
    ]
    ncu_limits = h.get("occupancy_limits") or {}
    if ncu_limits:
        rec["occupancy"]["ncu_blocks_per_sm"] = min(ncu_limits.values())
    if name == "hopper_gemm":
        for tag, pat in (("wgmma_line", "HGMMA"), ("tma_line", "UTMALDG")):
            r = prof.line_of(pat)
            rec[tag] = None if r is None else {k: r[k] for k in ("line", "text", "samples", "share", "top_stalls")}
    return rec


def main(out_dir: Path) -> int:
    import txlab
    from txlab import ncu

    out_dir.mkdir(parents=True, exist_ok=True)
    info = txlab.device.probe()
    allowed, why = ncu.counters_permission()
    result = {
        "device": info.name,
        "arch": info.arch,
        "ncu": ncu.find_ncu(),
        "ncu_version": ncu.ncu_version(),
        "counters": why,
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "kernels": {},
        "checks": {},
    }
    print(f"device {info.name} ({info.arch}); ncu {result['ncu_version']} at {result['ncu']}; counters: {why}")
    if not info.available or result["ncu"] is None:
        print("cannot profile here:", info.reason or "no ncu")
        return 2
    for name, build, make_args, nbytes, flops in _kernels():
        t = time.perf_counter()
        try:
            rec = profile_one(
                name, build, make_args, nbytes, flops, out_dir, keep_report=name in ("transpose_naive", "hopper_gemm")
            )
            h = rec["headline"]
            print(
                f"[{name}] {time.perf_counter() - t:.1f} s: ncu {rec['duration_ncu_ms']:.4f} ms vs bench "
                f"{rec['duration_bench_ms']:.4f} ms; {rec['bound']}-bound; SM {h['sm_throughput_pct']:.0f}% "
                f"mem {h['memory_throughput_pct']:.0f}% DRAM {h['dram_throughput_pct']:.0f}%; smem ld conflicts "
                f"{h['smem_ld_bank_conflicts']}, wavefronts/request {h['smem_ld_wavefronts_per_request']}; "
                f"samples {rec['samples']} ({rec['attributed_share']:.1%} attributed); profile wall "
                f"{rec['profile_wall_s']:.1f} s, report read {rec['timings'].get('read_report_s', 0):.2f} s; "
                f"occupancy {rec['occupancy']}; correct {rec['correct']}"
            )
            for r in rec["hot_lines"][:3]:
                print(f"    line {r['line']} {r['share']:.0%} {r['top_stalls']}: {r['text'][:100]}")
        except Exception as exc:  # noqa: BLE001 - one kernel's failure must not lose the others
            rec = {"name": name, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
            print(f"[{name}] FAILED after {time.perf_counter() - t:.1f} s: {rec['error']}")
            print(rec["traceback"][-1500:])
        result["kernels"][name] = rec
        (out_dir / "profiles.json").write_text(json.dumps(result, indent=1, default=str))
    k = result["kernels"]
    checks = result["checks"]

    def conflicts(n):
        return (k.get(n, {}).get("headline") or {}).get("smem_ld_bank_conflicts")

    cn, cp, cs = conflicts("transpose_naive"), conflicts("transpose_padded"), conflicts("transpose_swizzled")
    if None not in (cn, cp, cs):
        checks["naive_conflicts_ge_8x_padded"] = cn >= 8 * max(cp, 1)
        checks["naive_conflicts_ge_8x_swizzled"] = cn >= 8 * max(cs, 1)
    g = k.get("hopper_gemm", {})
    if g.get("hot_lines"):
        checks["gemm_hot_line_is_wgmma"] = "wgmma" in g["hot_lines"][0]["text"]
        checks["gemm_attributed_ge_95pct"] = g["attributed_share"] >= 0.95
    occ_ok = [
        v["occupancy"].get("driver_blocks_per_sm") == v["occupancy"]["txlab_blocks_per_sm"]
        for v in k.values()
        if "occupancy" in v
    ]
    if occ_ok:
        checks["occupancy_matches_driver"] = all(occ_ok)
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'} {name}")
    overhead = {n: v["profile_wall_s"] / max(v["bench"]["wall_s"], 1e-9) for n, v in k.items() if "profile_wall_s" in v}
    result["profiling_overhead_vs_bench_wall"] = overhead
    (out_dir / "profiles.json").write_text(json.dumps(result, indent=1, default=str))
    dest = ROOT / "benchmarks" / "results"
    if dest.is_dir():
        shutil.copy(out_dir / "profiles.json", dest / "profiles.json")
    errors = [n for n, v in k.items() if "error" in v]
    print(
        f"done: {len(k) - len(errors)}/{len(k)} kernels profiled"
        + (f"; failed: {', '.join(errors)}" if errors else "")
        + f"; results in {out_dir}"
    )
    return 0 if not errors and all(checks.values()) else 1


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(os.environ.get("OUT", "/tmp/out"))
    sys.exit(main(out))
