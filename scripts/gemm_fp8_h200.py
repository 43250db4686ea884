"""On an H200: the FP8 (e4m3 x e4m3 -> bf16, per-tensor scales) Hopper GEMM beside cuBLAS FP8
(``torch._scaled_mm``, its default ``use_fast_accum=False``) in the same process.

Per shape: the configuration ``hopper_gemm_fp8.build(M, N, K)`` chooses, the output NaN-poisoned,
checked against a float64 product of the dequantised e4m3 inputs (rel. error = ||C - ref|| / ||ref||),
then timed beside cuBLAS: median of interleaved rounds, an L2 flush before every launch. cuBLAS needs
N and K multiples of 16; for a ragged N its baseline runs on N rounded up (recorded as ``cublas_shape``).

    python scripts/gemm_fp8_h200.py [--rounds 5] [--sweep] [--accuracy] [--shapes MxNxK,...]
        [--out benchmarks/results/gemm_shapes_fp8.json]

``--sweep`` first times a set of configurations at 8192^3 (which one should be the default);
``--accuracy`` compares the tensor core's own accumulation (``promote=0``) with promotion and with
cuBLAS's two modes on long K and same-sign data. :func:`measure_fp8` is what other scripts call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

SHAPES = [
    (8192, 8192, 8192),
    (4096, 4096, 4096),
    (16384, 8192, 8192),
    (2048, 14336, 4096),  # Llama-style MLP up-projection
    (16384, 4096, 14336),  # down-projection, long K
    (512, 4096, 4096),  # small M (decode-ish batch)
    (4096, 28672, 8192),
    (8192, 8192, 1024),  # short K
    (4095, 8191, 4096),  # ragged M and N
    (12345, 5432, 2048),  # ragged
    (1000, 3000, 5008),  # ragged, K a multiple of 16 (TMA's and cuBLAS's requirement)
    (6144, 6144, 6144),
    (1024, 1024, 32768),  # few tiles, long K
]
SWEEP = [
    "128x256x128_s4_c2_tma",
    "128x256x128_s3_c2_tma",
    "128x256x128_s4_c2",
    "128x128x128_s6_c2_pp_tma",
    "64x256x128_s4_c2_pp_tma",
    "128x256x128_s4_c2_tma_cl2x1",
    "128x128x128_s6_c2_tma",
    "128x128x128_s6_c2_tma_p4",
    "128x128x128_s6_c2_tma_p1",
    "128x192x128_s4_c2_tma_p4",
    "128x192x128_s4_c2_tma_p2",
]
ACCURACY = [  # (shape, configs) on N(0,1) and |N(0,1)| inputs: no promotion, every 4 and every 2 k-blocks
    ((4096, 4096, 8192), ["128x256x128_s3_c2_tma", "128x192x128_s4_c2_tma_p4", "128x192x128_s4_c2_tma_p2"]),
]
FAST = "128x256x128_s3_c2_tma"  # promote=0: compared with cuBLAS's use_fast_accum=True at 8192^3


def _compile_one(job):
    """(M, N, K, config name) -> compile into the disk cache (a worker process; no GPU)."""
    M, N, K, name = job
    t = time.time()
    try:
        import txlab
        from txlab.examples import hopper_gemm_fp8 as f8

        txlab.config.progress = False  # no progress bars in a batch log
        txlab.compile(f8.kernel(M, N, K, name), arch="sm_90a")
        return job, None, time.time() - t
    except Exception as exc:  # noqa: BLE001 - reported per job
        return job, f"{type(exc).__name__}: {exc}"[:500], time.time() - t


def precompile(jobs, workers=12):
    """Compile every (M, N, K, config) into TXLAB_CACHE_DIR in parallel (spawned processes, before
    this process touches CUDA); returns {job: error or None}."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    jobs = list(dict.fromkeys(jobs))
    if not jobs:
        return {}
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as ex:
        return {job: err for job, err, _ in ex.map(_compile_one, jobs)}


def _inputs(torch, m, n, k, seed=1234, positive=False):
    from txlab.examples import hopper_gemm_fp8 as f8

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g)
    b = torch.randn(n, k, device="cuda", generator=g)
    if positive:
        a, b = a.abs(), b.abs()
    qa, sa = f8.quantize(a * 2.0)  # unequal scales: the scale product is checked too
    qb, sb = f8.quantize(b * 0.5)
    del a, b
    return qa, qb, sa, sb


def _cublas(torch, qa, qb, sa, sb, fast=False):
    """cuBLAS FP8 on the same inputs; N and K padded to 16 where cuBLAS needs it (the pad is zeros)."""
    n, k = qb.shape
    pn, pk = -n % 16, -k % 16
    if pn or pk:
        qb = torch.nn.functional.pad(qb.view(torch.uint8), (0, pk, 0, pn)).view(torch.float8_e4m3fn)
        qa = torch.nn.functional.pad(qa.view(torch.uint8), (0, pk)).view(torch.float8_e4m3fn)
    bt = qb.t()

    def run():
        return torch._scaled_mm(qa, bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast)

    return run, [qa.shape[0], qb.shape[0], qa.shape[1]]


def measure_fp8(shapes, *, rounds=5, configs=None, deadline=None, torch=None, timer=None, log=print):
    """Measure the FP8 kernel beside cuBLAS FP8 on ``shapes`` (``configs``: {shape: config name}
    overrides; else ``build``'s own choice). Returns one dict per shape: shape, dtype, config,
    source, TFLOP/s, cuBLAS TFLOP/s, ratio, rel. errors (ours, cuBLAS's), unwritten outputs, status."""
    import torch as _torch

    torch = torch or _torch
    import txlab
    from tune_h200 import Timer, interleaved
    from txlab.examples import hopper_gemm_fp8 as f8

    timer = timer or Timer(torch)
    t0 = time.time()
    rows = []
    for m, n, k in shapes:
        row = {"shape": [m, n, k], "dtype": "fp8_e4m3"}
        if deadline is not None and time.time() - t0 > deadline:
            row["status"] = "skipped: deadline"
            rows.append(row)
            continue
        try:
            tc = time.perf_counter()
            if configs and (m, n, k) in configs:
                cfg, source = f8.parse_config(configs[(m, n, k)]), "given"
            else:
                choice = f8.explain(m, n, k)
                cfg, source = choice.winner, choice.source
            row.update(config=cfg.name, source=source, choice_ms=(time.perf_counter() - tc) * 1e3)
            exe = txlab.compile(f8.kernel(m, n, k, cfg), arch="sm_90a").executable
            qa, qb, sa, sb = _inputs(torch, m, n, k)
            xa, xb = f8.kernel_arg(qa), f8.kernel_arg(qb)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            exe(xa, xb, c, sa, sb)
            torch.cuda.synchronize()
            ref = f8.reference(qa, qb, sa, sb)
            row["unwritten"] = int(torch.isnan(c).sum().item())
            row["rel_error"] = f8.rel_error(c, ref)
            cub, row["cublas_shape"] = _cublas(torch, qa, qb, sa, sb)
            out = cub()[:, :n]
            row["cublas_rel_error"] = f8.rel_error(out, ref)
            del ref, out
            t = interleaved(timer, {"txlab": lambda: exe(xa, xb, c, sa, sb), "cublas": cub}, rounds=rounds)
            fl = 2 * m * n * k
            row["tflops"] = fl / (t["txlab"]["median_ms"] * 1e-3) / 1e12
            row["cublas_tflops"] = fl / (t["cublas"]["median_ms"] * 1e-3) / 1e12
            row["ratio"] = row["tflops"] / row["cublas_tflops"]
            row["rounds_ms"] = {key: v["rounds_ms"] for key, v in t.items()}
            row["status"] = "ok" if row["rel_error"] <= 1e-2 and row["unwritten"] == 0 else "wrong"
            del qa, qb, xa, xb, c
            torch.cuda.empty_cache()
        except Exception as exc:  # noqa: BLE001 - one shape's failure is a row
            row["status"] = f"failed: {type(exc).__name__}: {exc}"[:600]
            row["trace"] = traceback.format_exc()[-2000:]
        rows.append(row)
        shape = "x".join(map(str, row["shape"]))
        if "ratio" in row:
            log(
                f"{shape:<18} {row['config']:<32} {row['tflops']:>7.0f} {row['cublas_tflops']:>7.0f} "
                f"{row['ratio']:>6.3f} {row['rel_error']:>8.1e} {row['cublas_rel_error']:>8.1e}"
                f"{'' if row['status'] == 'ok' else '  ' + row['status']}"
            )
        else:
            log(f"{shape:<18} {row['status'][:200]}")
    return rows


def sweep_8192(torch, timer, names, rounds=3, log=print):
    """Time each configuration at 8192^3 beside cuBLAS (interleaved), with its rel. error."""
    import txlab
    from tune_h200 import interleaved
    from txlab.examples import hopper_gemm_fp8 as f8

    m = n = k = 8192
    qa, qb, sa, sb = _inputs(torch, m, n, k)
    xa, xb = f8.kernel_arg(qa), f8.kernel_arg(qb)
    ref = f8.reference(qa, qb, sa, sb)
    cub, _ = _cublas(torch, qa, qb, sa, sb)
    fl = 2 * m * n * k
    rows = []
    for name in names:
        row = {"config": name}
        try:
            exe = txlab.compile(f8.kernel(m, n, k, name), arch="sm_90a").executable
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            exe(xa, xb, c, sa, sb)
            torch.cuda.synchronize()
            row["rel_error"] = f8.rel_error(c, ref)
            row["unwritten"] = int(torch.isnan(c).sum().item())
            t = interleaved(timer, {"txlab": lambda: exe(xa, xb, c, sa, sb), "cublas": cub}, rounds=rounds)
            row["tflops"] = fl / (t["txlab"]["median_ms"] * 1e-3) / 1e12
            row["cublas_tflops"] = fl / (t["cublas"]["median_ms"] * 1e-3) / 1e12
            row["ratio"] = row["tflops"] / row["cublas_tflops"]
            log(
                f"sweep 8192^3 {name:<32} {row['tflops']:>7.0f} {row['cublas_tflops']:>7.0f} {row['ratio']:>6.3f} "
                f"{row['rel_error']:>8.1e} unwritten {row['unwritten']}"
            )
            del c
        except Exception as exc:  # noqa: BLE001
            row["status"] = f"failed: {type(exc).__name__}: {exc}"[:600]
            log(f"sweep 8192^3 {name:<32} {row['status'][:200]}")
        rows.append(row)
    del qa, qb, xa, xb, ref
    torch.cuda.empty_cache()
    return rows


def fast_8192(torch, timer, name=FAST, rounds=5, log=print):
    """Fast accumulation on both sides: ``promote=0`` against ``use_fast_accum=True`` at 8192^3."""
    import txlab
    from tune_h200 import interleaved
    from txlab.examples import hopper_gemm_fp8 as f8

    m = n = k = 8192
    qa, qb, sa, sb = _inputs(torch, m, n, k)
    xa, xb = f8.kernel_arg(qa), f8.kernel_arg(qb)
    exe = txlab.compile(f8.kernel(m, n, k, name), arch="sm_90a").executable
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    cub, _ = _cublas(torch, qa, qb, sa, sb, fast=True)
    exe(xa, xb, c, sa, sb)
    ref = f8.reference(qa, qb, sa, sb)
    row = {"shape": [m, n, k], "config": name, "baseline": "torch._scaled_mm(use_fast_accum=True)"}
    row["rel_error"], row["cublas_rel_error"] = f8.rel_error(c, ref), f8.rel_error(cub(), ref)
    del ref
    t = interleaved(timer, {"txlab": lambda: exe(xa, xb, c, sa, sb), "cublas": cub}, rounds=rounds)
    fl = 2 * m * n * k
    row["tflops"] = fl / (t["txlab"]["median_ms"] * 1e-3) / 1e12
    row["cublas_tflops"] = fl / (t["cublas"]["median_ms"] * 1e-3) / 1e12
    row["ratio"] = row["tflops"] / row["cublas_tflops"]
    log(
        f"fast accumulation 8192^3 {name} {row['tflops']:.0f} vs cuBLAS fast {row['cublas_tflops']:.0f} TFLOP/s: "
        f"ratio {row['ratio']:.3f}; rel. error {row['rel_error']:.1e} / {row['cublas_rel_error']:.1e}"
    )
    del qa, qb, xa, xb, c
    torch.cuda.empty_cache()
    return row


def accuracy(torch, cases=ACCURACY, log=print):
    """rel. error against float64 of the dequantised inputs: our kernel with and without promotion,
    cuBLAS FP8 with use_fast_accum False (default) and True; N(0,1) and |N(0,1)| inputs."""
    import txlab
    from txlab.examples import hopper_gemm_fp8 as f8

    rows = []
    for (m, n, k), names in cases:
        for positive in (False, True):
            qa, qb, sa, sb = _inputs(torch, m, n, k, seed=7, positive=positive)
            ref = f8.reference(qa, qb, sa, sb)
            row = {"shape": [m, n, k], "inputs": "|N(0,1)|" if positive else "N(0,1)", "rel_error": {}}
            for fast in (False, True):
                cub, _ = _cublas(torch, qa, qb, sa, sb, fast=fast)
                row["rel_error"][f"cublas fast_accum={fast}"] = f8.rel_error(cub(), ref)
            for name in names:
                try:
                    exe = txlab.compile(f8.kernel(m, n, k, name), arch="sm_90a").executable
                    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                    exe(f8.kernel_arg(qa), f8.kernel_arg(qb), c, sa, sb)
                    torch.cuda.synchronize()
                    row["rel_error"][name] = f8.rel_error(c, ref)
                except Exception as exc:  # noqa: BLE001
                    row["rel_error"][name] = f"failed: {type(exc).__name__}: {exc}"[:300]
            # what bf16 rounding of the exact result alone costs: the floor of any bf16-output GEMM
            row["rel_error"]["exact result rounded to bf16"] = f8.rel_error(ref.to(torch.bfloat16), ref)
            rows.append(row)
            log(
                f"accuracy {m}x{n}x{k} {row['inputs']:<9} "
                + "  ".join(
                    f"{key}: {v:.2e}" if isinstance(v, float) else f"{key}: {v}" for key, v in row["rel_error"].items()
                )
            )
            del qa, qb, ref
            torch.cuda.empty_cache()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gemm_shapes_fp8.json"))
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK (default: the whole set)")
    ap.add_argument("--config", action="append", default=[], help="MxNxK=CONFIG: measure this config there")
    ap.add_argument("--sweep", action="store_true", help="time SWEEP's configurations at 8192^3 first")
    ap.add_argument("--accuracy", action="store_true", help="the accumulation-precision study")
    ap.add_argument("--fast", action="store_true", help="promote=0 against cuBLAS use_fast_accum=True at 8192^3")
    ap.add_argument("--deadline", type=float, default=200, help="seconds; shapes past it are recorded as skipped")
    args = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s] or SHAPES
    configs = {tuple(int(v) for v in c.split("=")[0].split("x")): c.split("=")[1] for c in args.config}

    t0 = time.time()
    import txlab
    from txlab.examples import hopper_gemm_fp8 as f8

    txlab.config.progress = False
    jobs = []
    for s in shapes:
        jobs.append((*s, configs.get(s) or f8.tuned_config(*s).name))
    if args.sweep:
        jobs += [(8192, 8192, 8192, name) for name in SWEEP]
    if args.accuracy:
        jobs += [(*s, name) for s, names in ACCURACY for name in names]
    if args.fast:
        jobs.append((8192, 8192, 8192, FAST))
    errors = precompile(jobs)
    bad = {j: e for j, e in errors.items() if e}
    print(f"precompiled {len(errors)} kernels in {time.time() - t0:.0f} s; {len(bad)} failed")
    for j, e in bad.items():
        print("  compile failed:", j, e)

    try:
        import torch
    except ImportError:
        print("no torch here: this script measures beside cuBLAS on an H200")
        return 2
    if not torch.cuda.is_available():
        print("no GPU here: this script measures on an H200")
        return 2
    from tune_h200 import Timer

    timer = Timer(torch)
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    if args.sweep:
        doc["sweep_8192"] = sweep_8192(torch, timer, SWEEP)
    print(f"{'shape':<18} {'config':<32} {'TFLOP/s':>7} {'cuBLAS':>7} {'ratio':>6} {'rel err':>8} {'cuBLAS':>8}")
    left = args.deadline - (time.time() - t0)
    rows = measure_fp8(shapes, rounds=args.rounds, configs=configs, deadline=left, torch=torch, timer=timer)

    def save():
        ok = [r for r in rows if r.get("status") == "ok"]
        ratios = [r["ratio"] for r in ok]
        doc["summary"] = {
            "shapes": len(shapes),
            "measured": len(ok),
            "ratio_8192": next((r["ratio"] for r in ok if r["shape"] == [8192, 8192, 8192]), None),
            "median_ratio": statistics.median(ratios) if ratios else None,
            "min_ratio": min(ratios) if ratios else None,
            "at_least_0.85": sum(r >= 0.85 for r in ratios),
            "max_rel_error": max((r["rel_error"] for r in ok), default=None),
            "elapsed_s": time.time() - t0,
        }
        doc["rows"] = rows
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=1))

    save()  # the table is kept whatever happens next
    for flag, key, fn in (
        (args.accuracy, "accuracy", lambda: accuracy(torch)),
        (args.fast, "fast_accum_8192", lambda: fast_8192(torch, timer)),
    ):
        if not flag:
            continue
        if time.time() - t0 > args.deadline:
            doc[key] = "skipped: deadline"
            continue
        try:
            doc[key] = fn()
        except Exception as exc:  # noqa: BLE001 - reported, the table is kept
            doc[key] = f"failed: {type(exc).__name__}: {exc}"[:600]
            print(key, doc[key])
        save()
    save()
    print("\n" + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in doc["summary"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
