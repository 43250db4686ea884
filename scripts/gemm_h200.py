"""On an H200: the Hopper GEMM with the configuration ``build(M, N, K)`` chooses (the tuned table's
entry, else the time model of ``txlab.examples.gemm_model``, split-K included) beside cuBLAS, on a
set of shapes most of which were never measured: the table's seven, Llama-style projections, short
K, long K on small grids, ragged sizes. Same-process ratios, median of interleaved rounds, an L2
flush before every launch, each output NaN-poisoned and checked against an fp32 reference first.

    python scripts/gemm_h200.py [--rounds 5] [--out benchmarks/results/gemm_shapes.json]
                                [--shapes MxNxK,...] [--dtypes bf16,e4m3] [--phases table,sweep,repro,diag]

Phases: ``table`` (the shape set, the model's choice), ``sweep`` (split factors and tiles on the
small-grid shapes, what the model's split-K costs are fitted to), ``repro`` (split-K run twice on
the same inputs: the outputs must be equal byte for byte), ``diag`` (K whose rows are not 128-byte
aligned, under the clusters that multicast an operand).

Other element types join the same run through :data:`MEASURERS` (``dtype -> case factory``): a
factory takes ``(torch, m, n, k, config=None)`` and returns a :class:`Case` (our launch, the
baseline's, and a correctness check); ``--dtypes`` picks which run. ``e4m3`` is the FP8 GEMM
(``build(..., dtype="e4m3")``'s choice) beside cuBLAS FP8 (``torch._scaled_mm``, ``use_fast_accum=False``)
on the shape set of ``scripts/gemm_fp8_h200.py``, the inputs and baseline of that script. Without
``--shapes`` each dtype runs its own set; the sweep, repro and diag phases are bf16's. Configurations
are compiled in parallel worker processes first (``--jobs``), then every launch finds them in the
compile cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

TABLE = [
    (8192, 8192, 8192),
    (4096, 4096, 4096),
    (16384, 16384, 16384),
    (2048, 2048, 8192),
    (1024, 8192, 4096),
    (8192, 8192, 2048),
    (8192, 1024, 8192),
]
LLM = [(m, n, k) for m in (512, 2048, 16384) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))] + [
    (4096, 28672, 8192),
    (8192, 8192, 28672),
    (1024, 28672, 4096),
    (8192, 4096, 14336),
]
SHORT_K = [(8192, 8192, 512), (16384, 8192, 1024)]
SMALL_GRID = [(512, 512, 16384), (1024, 1024, 32768), (256, 4096, 8192), (256, 256, 65536), (768, 1024, 16384)]
RAGGED = [(6144, 6144, 6144), (3072, 3072, 12288), (4095, 8191, 4096), (1000, 3000, 5000), (12345, 5432, 2048)]
SHAPES = TABLE + LLM + SHORT_K + SMALL_GRID + RAGGED
#: ``--set unseen``: shapes no table entry, sweep or fit has seen (the model's choice alone), across the kinds
#: a user brings: decode-sized M, tall and skinny outputs, small squares, K a multiple of 8 but not of 64, K not a
#: multiple of 8 (``build()`` pads A and B on each call: the copy is timed with the launch), other LLM widths,
#: long K on small grids, sizes with no power of two in them
UNSEEN = [
    (16, 8192, 8192),
    (64, 4096, 14336),
    (128, 8192, 8192),
    (200, 11008, 4096),
    (65536, 256, 4096),
    (16384, 128, 8192),
    (4096, 96, 12288),
    (1024, 1024, 1024),
    (512, 2048, 1024),
    (1536, 1536, 1536),
    (2000, 2000, 2000),
    (3000, 3000, 3000),
    (5000, 5000, 5000),
    (7168, 7168, 7168),
    (4096, 4096, 4000),
    (2048, 2048, 2056),
    (8192, 8192, 1000),
    (3072, 3072, 3080),
    (6000, 2000, 4040),
    (4096, 11008, 4096),
    (4096, 4096, 11008),
    (8192, 3072, 12288),
    (2048, 6144, 4096),
    (32768, 1024, 1024),
    (384, 384, 32768),
    (128, 128, 131072),
    (2048, 512, 32768),
    (640, 1280, 20480),
    (3333, 4444, 5552),
    (999, 1999, 3000),
    (4096, 4096, 4097),
    (1000, 3000, 4999),
]
#: ``--set fresh``: shapes picked in round 10 after the model last changed and measured only by this set: decode and
#: small-M widths, odd sizes whose tile counts the in-between widths (144..240) fill, and more LLM projections
FRESH = [
    (2, 7168, 7168),
    (24, 5120, 13824),
    (48, 14336, 4096),
    (96, 12288, 4096),
    (320, 8192, 8192),
    (640, 10240, 4096),
    (896, 896, 8192),
    (1792, 1792, 4096),
    (2816, 2816, 2816),
    (3584, 4608, 2048),
    (1280, 3584, 7168),
    (2304, 7168, 1536),
    (5120, 5120, 1024),
    (9216, 2304, 4096),
    (4608, 4608, 4608),
    (1600, 6400, 3200),
    (2500, 2500, 2504),
    (7000, 3000, 1200),
    (11008, 4096, 2048),
    (736, 2944, 8192),
]
SETS = {"main": SHAPES, "unseen": UNSEEN, "fresh": FRESH}

#: the sweep phase: beside the choice (in the table), the small-grid configurations the model ranks next or
#: that have not been measured yet (deeper rings, other tiles with the parallel fix-up)
SWEEP = {
    (256, 256, 65536): ["128x128x64_s7_c2_sk32p", "64x128x64_s7_c1_sk16p"],
    (512, 512, 16384): ["128x128x64_s7_c2_sk8p", "128x256x64_s4_c2_sk8p"],
    (768, 1024, 16384): ["128x192x64_s5_c2_sk3p", "128x128x64_s7_c2_sk2p"],
    (384, 1536, 24576): ["128x192x64_s5_c2_sk5p", "128x128x64_s7_c2_sk3p"],
}
#: the repro phase: split-K configurations run three times on the same inputs (the first through
#: ``hg.build(...)(A, B, C)``, which makes its own workspace), serial and parallel fix-ups
REPRO = [
    ((512, 512, 16384), "128x128x64_s6_c2_sk8p"),
    ((1000, 3000, 5000), "128x192x64_s4_c2_sk2"),
    ((200, 72, 1000), "64x128x64_s4_c1_sk3p"),
    ((256, 256, 65536), "128x128x64_s6_c2_sk32p"),
]
#: the diag phase: K whose rows are not 128-byte aligned (1000x3000x5000: 10000-byte rows; 4096x4096x4104)
#: with the clusters that multicast an operand (2x1 shares B, 1x2 shares A, 2x2 both), and with no L2
#: promotion
DIAG = [
    (
        (1000, 3000, 5000),
        [
            "128x192x64_s4_c2_tma_cl1x2",
            "128x192x64_s4_c2_tma_cl2x2",
            "128x192x64_s4_c2_tma_cl2x1_l2p0",
            "128x256x64_s4_c2_tma_cl2x2",
        ],
    ),
    ((4096, 4096, 4104), ["128x256x64_s4_c2_tma_cl2x2", "128x256x64_s3_c2_tma_cl2x1"]),
]


def say(*a):
    print(*a, flush=True)


@dataclass
class Case:
    """One GEMM to measure: ``run`` launches ours, ``baseline`` the library's, ``check(run=None)`` runs
    ours (or ``run``) once on NaN-poisoned output and returns ``{"rel_error", "unwritten"}`` against a
    float reference."""

    dtype: str
    shape: tuple
    config: str
    source: str
    run: Callable
    baseline: Callable
    check: Callable
    info: dict = field(default_factory=dict)
    tensors: tuple = ()  # (A, B, C) of ``run``, for checks that launch another way


def bf16_case(torch, m, n, k, config=None) -> Case:
    """bf16 ``A (m, k) @ B (n, k).T`` by hopper_gemm (the model's or table's choice unless ``config``)
    beside ``torch.matmul`` (cuBLAS). At K % 8 != 0 through ``hg.build(...)``'s Compiled, which copies A
    and B into its zero-padded buffers on each call: that copy is inside the timed launch."""
    from txlab.examples import hopper_gemm as hg

    info = {}
    if config is None:
        tc = time.perf_counter()
        choice = hg.explain(m, n, k)
        info["choice_ms"] = (time.perf_counter() - tc) * 1e3
        cfg, source = choice.winner, choice.source
        info.update(why=choice.why, notes=choice.notes)
        if choice.source == "model":
            # explain's prediction (the ranking's time scaled by the measured shapes nearby, never above the fastest
            # GEMM measured), and the model's own ranking rate beside it
            info["predicted_tflops"] = choice.predictions[0].expected_tflops
            info["ranked_tflops"] = choice.predictions[0].tflops
    else:
        cfg, source = hg.parse_config(config) if isinstance(config, str) else config, "given"
    gemm = hg.build(m, n, k, cfg, arch="sm_90a")  # K % 8 != 0: built for the padded K
    exe = gemm.executable
    g = torch.Generator(device="cuda").manual_seed(1234)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    bt = b.T
    if getattr(gemm, "padded_k", 0):
        info.update(padded_k=gemm.padded_k, pad_bytes=gemm.pad_bytes)
        if gemm.workspace_elems:
            info["workspace_bytes"] = gemm.workspace_elems * 4

        def launch():  # the copy into the padded buffers (and the kept workspace), then the kernel
            exe(*gemm.kernel_args(a, b, c))

    else:
        args = hg.args_for(a, b, c, cfg)
        if len(args) == 4:
            info["workspace_bytes"] = args[3].numel() * 4

        def launch():
            exe(*args)

    def check(run=None):
        c.fill_(float("nan"))
        (run or launch)()
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        out = {
            "rel_error": (torch.linalg.vector_norm(c.float() - ref) / torch.linalg.vector_norm(ref)).item(),
            "unwritten": int(torch.isnan(c).sum().item()),
        }
        del ref
        return out

    return Case(
        "bf16",
        (m, n, k),
        cfg.name,
        source,
        launch,
        lambda: torch.matmul(a, bt),
        check,
        info,
        (a, b, c),
    )


def fp8_case(torch, m, n, k, config=None) -> Case:
    """e4m3 ``scale_a * scale_b * A (m, k) @ B (n, k).T`` by the FP8 hopper_gemm (its choice unless
    ``config``) beside ``torch._scaled_mm`` (cuBLAS FP8; N and K padded to 16 where it needs them), on
    the inputs of ``scripts/gemm_fp8_h200.py``; the check is against float64 of the dequantised inputs
    and also reports cuBLAS's rel. error there."""
    from gemm_fp8_h200 import _cublas, _inputs
    from txlab.examples import hopper_gemm as hg
    from txlab.examples import hopper_gemm_fp8 as f8

    info = {}
    if config is None:
        tc = time.perf_counter()
        choice = hg.explain(m, n, k, dtype="e4m3")  # at K % 16 != 0: the choice for the padded K
        info["choice_ms"] = (time.perf_counter() - tc) * 1e3
        cfg, source = choice.winner, choice.source
        info["why"] = choice.why
    else:
        cfg, source = f8.resolve(m, n, hg.padded_k(k, "e4m3"), config), "given"
    gemm = hg.build(m, n, k, cfg, arch="sm_90a", dtype="e4m3")
    exe = gemm.executable
    qa, qb, sa, sb = _inputs(torch, m, n, k)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    cublas, info["cublas_shape"] = _cublas(torch, qa, qb, sa, sb)
    if getattr(gemm, "padded_k", 0):  # K % 16 != 0: A and B copied into the kept padded buffers each call
        info.update(padded_k=gemm.padded_k, pad_bytes=gemm.pad_bytes)
        held = [f8.kernel_arg(x) for x in gemm.kernel_args(qa, qb, c, sa, sb)]  # views of the kept buffers

        def launch():
            gemm.kernel_args(qa, qb, c, sa, sb)  # the copy, inside the timed call
            exe(*held)

    else:
        xa, xb = f8.kernel_arg(qa), f8.kernel_arg(qb)
        ws = () if cfg.split_k == 1 else (hg.workspace(m, n, k, cfg, like=c),)  # split-K: its workspace
        if ws:
            info["workspace_bytes"] = ws[0].numel() * 4

        def launch():
            exe(xa, xb, c, sa, sb, *ws)

    def check(run=None):
        c.fill_(float("nan"))
        (run or launch)()
        torch.cuda.synchronize()
        ref = f8.reference(qa, qb, sa, sb)
        out = {
            "rel_error": f8.rel_error(c, ref),
            "unwritten": int(torch.isnan(c).sum().item()),
            "cublas_rel_error": f8.rel_error(cublas()[:, :n], ref),
        }
        del ref
        return out

    return Case("e4m3", (m, n, k), cfg.name, source, launch, cublas, check, info, (qa, qb, c))


#: dtype -> case factory; another element type adds its own here (or passes measurers= to main)
MEASURERS: dict = {"bf16": bf16_case, "e4m3": fp8_case}


def default_shapes(dtype: str, which: str = "main") -> list:
    """The shape set a dtype's table runs without ``--shapes``: bf16's :data:`SHAPES`, FP8's
    ``gemm_fp8_h200.SHAPES`` (K a multiple of 16, as its TMA loads and cuBLAS FP8 need)."""
    if dtype == "e4m3":
        from gemm_fp8_h200 import SHAPES as FP8_SHAPES

        return list(FP8_SHAPES)
    return list(SETS[which])


def compile_jobs(shapes_by_dtype: dict, phases: set) -> list:
    """``(m, n, k, config, dtype)`` for every kernel the run will launch (config None: the choice)."""
    jobs = []
    for dtype, shapes in shapes_by_dtype.items():
        jobs += [(*s, None, dtype) for s in shapes] if "table" in phases else []
    if "bf16" in shapes_by_dtype:
        jobs += [(*s, c, "bf16") for s, cs in SWEEP.items() for c in cs] if "sweep" in phases else []
        jobs += [(*s, c, "bf16") for s, c in REPRO] if "repro" in phases else []
        jobs += [(*s, c, "bf16") for s, cs in DIAG for c in cs] if "diag" in phases else []
    return jobs


def measure(torch, timer, case: Case, rounds: int) -> dict:
    """One row: correctness first, then interleaved rounds of ours and the baseline."""
    from tune_h200 import interleaved

    m, n, k = case.shape
    row = {"shape": [m, n, k], "dtype": case.dtype, "config": case.config, "source": case.source, **case.info}
    row.update(case.check())
    t = interleaved(timer, {"txlab": case.run, "baseline": case.baseline}, rounds=rounds)
    fl = 2 * m * n * k
    row["tflops"] = fl / (t["txlab"]["median_ms"] * 1e-3) / 1e12
    row["cublas_tflops"] = fl / (t["baseline"]["median_ms"] * 1e-3) / 1e12
    row["ratio"] = row["tflops"] / row["cublas_tflops"]
    row["rounds_ms"] = {key: v["rounds_ms"] for key, v in t.items()}
    row["status"] = "ok" if row["rel_error"] <= 1e-2 and row["unwritten"] == 0 else "wrong"
    return row


def baseline_call(torch, dtype: str, m: int, n: int, k: int):
    """The library call a row's ratio is against, on fresh inputs: ``torch.matmul`` (bf16), or
    ``torch._scaled_mm`` as ``fp8_case`` calls it (e4m3)."""
    if dtype == "e4m3":
        from gemm_fp8_h200 import _cublas, _inputs

        return _cublas(torch, *_inputs(torch, m, n, k))[0]
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.matmul(a, b.T)


def baseline_kernels(torch, fn) -> list:
    """The names of the CUDA kernels one call of ``fn`` launches (cuBLAS's kernel name says its tile,
    cluster and split-K or stream-K choice), from torch's profiler. Run after every timing: once CUPTI
    is attached it may stay, and launches timed after it would pay for it."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    except Exception as exc:  # noqa: BLE001 - a profiler that cannot start costs the names, not the row
        return [f"unknown: {type(exc).__name__}: {exc}"[:200]]
    return list(dict.fromkeys(n for n in names if n and "memset" not in n.lower()))


def _compile_one(job):
    m, n, k, config, dtype = job
    from txlab.examples import hopper_gemm as hg

    t = time.perf_counter()
    hg.build(m, n, k, config, arch="sm_90a", dtype=dtype)  # its choice without a config; any K (padded)
    return job, time.perf_counter() - t


def precompile(jobs, workers: int, compile_one=_compile_one) -> float:
    """Build every (m, n, k, config, dtype) in ``workers`` spawned processes (into the compile cache), each by
    ``compile_one`` (a module-level function, for the spawned processes)."""
    import concurrent.futures as cf
    import multiprocessing as mp

    t0 = time.time()
    jobs = list(dict.fromkeys(jobs))
    if workers <= 1:
        for j in jobs:
            compile_one(j)
        return time.time() - t0
    with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as ex:
        for fut in cf.as_completed([ex.submit(compile_one, j) for j in jobs]):
            try:
                fut.result()
            except Exception as exc:  # noqa: BLE001 - the measuring pass reports it per row
                say(f"precompile: {type(exc).__name__}: {str(exc)[:200]}")
    return time.time() - t0


def _fmt(row) -> str:
    shape = "x".join(map(str, row["shape"]))
    if "ratio" not in row:
        return f"{row['dtype']:<5} {shape:<20} {row.get('status', '')[:90]}"
    src = row["source"][:5]
    flag = "" if row["status"] == "ok" else "  " + row["status"]
    return (
        f"{row['dtype']:<5} {shape:<20} {row['config'] + ' (' + src + ')':<38} {row['tflops']:>7.1f} "
        f"{row['cublas_tflops']:>7.1f} {row['ratio']:>6.3f} {row['rel_error']:>8.1e}{flag}"
    )


def _guarded(fn, row_base):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - one shape's failure is a row
        return {
            **row_base,
            "status": f"failed: {type(exc).__name__}: {exc}"[:500],
            "trace": traceback.format_exc()[-2000:],
        }


def main(argv=None, measurers: dict | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gemm_shapes.json"))
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK (default: the whole set)")
    ap.add_argument(
        "--set",
        default="main",
        choices=sorted(SETS),
        help="the bf16 shape set without --shapes "
        "(main: the set of record; unseen: shapes nothing was tuned or fitted on)",
    )
    ap.add_argument("--dtypes", default="bf16", help="comma-separated keys of MEASURERS (bf16, e4m3)")
    ap.add_argument("--phases", default="table,sweep,repro,diag")
    ap.add_argument("--jobs", type=int, default=min(14, os.cpu_count() or 1), help="parallel compile workers")
    ap.add_argument("--deadline", type=float, default=200, help="seconds; later phases past it are recorded as skipped")
    ap.add_argument("--table-deadline", type=float, default=240, help="seconds; table shapes past it are skipped")
    args = ap.parse_args(argv)
    measurers = measurers or MEASURERS
    dtypes = [d for d in args.dtypes.split(",") if d]
    unknown = [d for d in dtypes if d not in measurers]
    if unknown or not dtypes:
        ap.error(
            f"--dtypes {args.dtypes!r}: {', '.join(unknown) or 'none given'}; use keys of MEASURERS: "
            + ", ".join(measurers)
        )
    # the arguments are checked here, before a GPU is touched or a kernel compiled: a typo must not cost a GPU run
    given = []
    for s in (s.strip() for s in args.shapes.split(",")):
        if not s:
            continue
        try:
            shape = tuple(int(v) for v in s.lower().split("x"))
        except ValueError:
            shape = ()
        if len(shape) != 3 or min(shape) < 1:
            ap.error(f"--shapes {s!r}: each shape is MxNxK, three positive integers (e.g. 4096x4096x4096)")
        given.append(shape)
    phases = {p for p in args.phases.split(",") if p}
    known = ("table", "sweep", "repro", "diag")
    if not phases or phases - set(known):
        ap.error(f"--phases {args.phases!r}: use some of {', '.join(known)}, comma-separated")
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: at least 1 (each row is the median of its rounds)")
    try:
        import torch
    except ImportError:
        print("no torch here: this script measures beside cuBLAS on an H200")
        return 2
    if not torch.cuda.is_available():
        print("no GPU here: this script measures on an H200")
        return 2
    from tune_h200 import Timer

    t0 = time.time()
    shapes_by_dtype = {d: given or default_shapes(d, args.set) for d in dtypes}
    jobs = compile_jobs({d: s for d, s in shapes_by_dtype.items() if d in ("bf16", "e4m3")}, phases)
    compile_s = precompile(jobs, args.jobs)
    from txlab.examples import hopper_gemm as hg

    from txlab.examples import gemm_model

    tc = time.perf_counter()
    hg.explain(64, 64, 64)  # builds the candidate list once: choice_ms is then the per-shape cost
    gemm_model.measured_neighbours()  # reads and verifies the shipped measurements once (64^3 does not reach them)
    setup_ms = (time.perf_counter() - tc) * 1e3
    say(f"compiled {len(set(jobs))} kernels in {compile_s:.1f} s ({args.jobs} workers)")
    timer = Timer(torch)
    doc = {"rows": [], "sweeps": [], "repro": [], "diag": []}

    def late():
        return time.time() - t0 > args.deadline

    def save():  # after every phase: a run stopped by its time limit keeps what it measured
        doc["summary"] = summary()
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=1))

    def summary():
        by = {}
        for dtype in dtypes:
            rows = [r for r in doc["rows"] if r.get("dtype") == dtype]
            ratios = [r["ratio"] for r in rows if r.get("status") == "ok"]
            by[dtype] = {
                "shapes": len(rows),
                "measured": len(ratios),
                "median_ratio": statistics.median(ratios) if ratios else None,
                "min_ratio": min(ratios) if ratios else None,
                "at_least_0.95": sum(r >= 0.95 for r in ratios),
                "below_0.90": sum(r < 0.90 for r in ratios),
                "max_choice_ms": max((r.get("choice_ms", 0) for r in rows), default=None),
            }
        return {
            "by_dtype": by,
            "repro_bitwise_equal": all(r.get("bitwise_equal") for r in doc["repro"]) if doc["repro"] else None,
            "compile_s": compile_s,
            "choice_setup_ms": setup_ms,  # once per process, before the first choice: not in choice_ms
            "elapsed_s": time.time() - t0,
            "device": torch.cuda.get_device_name(0),
        }

    head = (
        f"{'dtype':<5} {'shape':<20} {'config (source)':<38} {'TFLOP/s':>7} {'cuBLAS':>7} {'ratio':>6} {'rel err':>8}"
    )

    def table():
        say("\n== table: the model's (or the tuned table's) choice ==\n" + head)
        for dtype in dtypes:
            for m, n, k in shapes_by_dtype[dtype]:
                base = {"shape": [m, n, k], "dtype": dtype}
                if time.time() - t0 > args.table_deadline:
                    row = {**base, "status": "skipped: deadline"}
                else:
                    row = _guarded(lambda: measure(torch, timer, measurers[dtype](torch, m, n, k), args.rounds), base)
                    torch.cuda.empty_cache()
                doc["rows"].append(row)
                say(_fmt(row))

    def kernel_names():
        say("\n== the baseline's kernels (torch's profiler, after every timing) ==")
        for row in doc["rows"]:
            if row.get("status") != "ok":
                continue
            try:
                call = baseline_call(torch, row["dtype"], *row["shape"])
                row["baseline_kernels"] = baseline_kernels(torch, call)
                del call
            except Exception as exc:  # noqa: BLE001 - a name the profiler cannot get costs the name only
                row["baseline_kernels"] = [f"unknown: {type(exc).__name__}: {exc}"[:200]]
            torch.cuda.empty_cache()
            names = " | ".join(name[:110] for name in row["baseline_kernels"][:2])
            say(f"{row['dtype']:<5} {'x'.join(map(str, row['shape'])):<20} {names}")

    def repro():
        say("\n== repro: split-K three times on the same inputs, byte for byte ==")
        for i, ((m, n, k), config) in enumerate(REPRO):
            base = {"shape": [m, n, k], "config": config}

            def once():
                case = bf16_case(torch, m, n, k, config)
                a, b, c = case.tensors
                run = None
                if i == 0:  # through build()'s Compiled, called with (A, B, C): it makes its own workspace
                    gemm = hg.build(m, n, k, config)

                    def run():
                        gemm(a, b, c)

                outs = []
                for _ in range(3):
                    err = case.check(run)
                    outs.append(c.clone())
                same = all(torch.equal(outs[0].view(torch.int16), o.view(torch.int16)) for o in outs[1:])
                ok = same and err["rel_error"] <= 1e-2 and err["unwritten"] == 0
                return {
                    **base,
                    **err,
                    "runs": len(outs),
                    "bitwise_equal": bool(same),
                    "status": "ok" if ok else "wrong",
                }

            row = _guarded(once, base)
            doc["repro"].append(row)
            say(f"{'x'.join(map(str, (m, n, k))):<20} {config:<26} {row.get('status')} {row.get('rel_error', '')}")

    def fixed(name, plan, rounds):
        say(f"\n== {name} ==\n" + head)
        for (m, n, k), configs in plan:
            for config in configs:
                base = {"shape": [m, n, k], "dtype": "bf16", "config": config}
                if late():
                    doc[name].append({**base, "status": "skipped: deadline"})
                    continue
                row = _guarded(lambda: measure(torch, timer, bf16_case(torch, m, n, k, config), rounds), base)
                doc[name].append(row)
                say(_fmt(row))
            torch.cuda.empty_cache()

    # the table first (the numbers of record), then the checks, then the comparisons
    if "table" in phases:
        table()
        save()
    if "repro" in phases and "bf16" in dtypes:
        repro()
        save()
    if "diag" in phases and "bf16" in dtypes:
        fixed("diag", DIAG, 3)
        save()
    if "sweep" in phases and "bf16" in dtypes:
        fixed("sweeps", list(SWEEP.items()), 3)
        save()
    if "table" in phases:
        kernel_names()
        save()
    summaries = doc["summary"]["by_dtype"]
    say("\n== summary ==")
    for dtype, s in summaries.items():
        say(dtype + "  " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()))
    say(
        f"repro bitwise equal: {doc['summary']['repro_bitwise_equal']}  elapsed {doc['summary']['elapsed_s']:.0f} s  "
        f"choice setup (once per process) {doc['summary']['choice_setup_ms']:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
