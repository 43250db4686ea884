"""One call on a GPU host (an H200, 16 cores): txlab.tune end to end, recorded.

    python scripts/tune_h200.py                 # writes under $OUT (else benchmarks/results)
    python scripts/tune_h200.py --quick --no-gpu   # the compile side only, small (runs anywhere)

1. Planted candidates: a copy sweep with one candidate that faults (a store 16 TiB out of bounds) and
   one that hangs (spins forever); the sweep completes and reports both with their KernelFault kind.
2. Compile phase, serial vs parallel, for 32 Hopper-GEMM candidates (8192^3): the parallel phase is
   txlab.tune's (Ray tasks, cold compile cache); the serial one compiles the same 32 in this
   process (TVM already imported, its own cold cache). Target >= 6x on 16 cores.
3. The vectorized copy (1 GiB) tuned over its knobs (threads, unroll, CTAs/grid-stride, unguarded),
   then the best and the default beside torch's copy_ in interleaved rounds. Target >= 0.97.
4. The Hopper GEMM tuned per shape (budget per shape; the default config and the benchmark's
   variants first, then Optuna TPE), each candidate checked (rel. Frobenius error <= 1e-2) then
   timed on the GPU actor; the best then beside torch.matmul (cuBLAS) in interleaved rounds (same
   CUDA-event timing, L2 flushed before each launch), and re-checked on fresh inputs. Target >= 0.95.

Writes tune.json (everything), hopper_gemm_tuned.json (the table txlab/data ships; copy it there),
tune.log; prints a table last. Stays inside --deadline seconds (default 450): shapes that would
start after it are reported as skipped.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SHAPES = [
    (8192, 8192, 8192),
    (4096, 4096, 4096),
    (8192, 8192, 2048),
    (1024, 8192, 4096),
    (2048, 2048, 8192),
    (8192, 1024, 8192),
    (16384, 16384, 16384),
]
LOG: list[str] = []
T0 = time.monotonic()
ENGINE = "ray"  # "serial" when Ray is missing on the host
SEARCH = "auto"  # "exhaustive" when Optuna is missing


def say(*parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    LOG.append(line)


def elapsed():
    return time.monotonic() - T0


# ---- planted candidates (TVMScript in this file: compile workers read it from here) ------------
def planted_build(kind: str, n: int = 1 << 20):
    from tvm.script import tirx as T

    from txlab.examples import bandwidth as bw

    if kind == "good":
        return bw.copy_kernel(n, unroll=4)
    if kind == "fault":

        @T.prim_func
        def planted_fault(src: T.Buffer((n,), "float32"), dst: T.Buffer((n,), "float32")):
            T.device_entry()
            bx = T.cta_id([1])
            tx = T.thread_id([256])
            dst[T.int64(tx) + (T.int64(1) << T.int64(42))] = src[tx]

        return planted_fault

    @T.prim_func
    def planted_hang(src: T.Buffer((n,), "float32"), dst: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        while src[0] == T.float32(0):  # src is all zeros: never leaves (the atomic keeps the loop)
            T.cuda.atomic_add(dst.ptr_to([tx]), T.float32(1))

    return planted_hang


def copy_reference(src, dst):
    return src


# ---- timing beside torch, interleaved -----------------------------------------------------------
class Timer:
    """Median of ``rep`` launches between CUDA events, a 2x-L2 memset before each (as txlab.bench), then a GPU-side
    spin of ``spin_cycles`` clock cycles (``torch.cuda._sleep``) before the start event: the host enqueues the
    launch while the GPU still spins, so the interval is the kernel's and not the host's launch cost. Without it,
    a slow or busy host made launches of a few microseconds host-bound (H200, 2026-12-04 16:17: cuBLAS at 1024^3
    read 17 us against 9 us in every other run, and our launch, dearer on the host, 22 us)."""

    def __init__(self, torch, warmup=5, rep=20, spin_cycles=400_000):
        self.torch, self.warmup, self.rep, self.spin = torch, warmup, rep, spin_cycles
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(max(2 * l2, 128 << 20), dtype=torch.uint8, device="cuda")

    def __call__(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(self.rep)]
        for i, (s, e) in enumerate(ev):
            self.flush.fill_(i & 0xFF)
            if self.spin:
                torch.cuda._sleep(self.spin)
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in ev)


def interleaved(timer, fns: dict, rounds: int) -> dict:
    """{name: median over rounds of each round's median} with the candidates' order alternating."""
    per = {k: [] for k in fns}
    names = list(fns)
    for r in range(rounds):
        for k in names if r % 2 == 0 else names[::-1]:
            per[k].append(timer(fns[k]))
    return {k: {"median_ms": statistics.median(v), "rounds_ms": v} for k, v in per.items()}


# ---- phases ----------------------------------------------------------------------------------------
def planted(txlab, record, gpu):
    import numpy as np

    n = 1 << 20

    def inputs(config):
        return [np.zeros(n, np.float32), np.zeros(n, np.float32)]

    say("\n== planted fault and hang ==")
    res = txlab.autotune(
        planted_build,
        {"kind": ["good", "fault", "hang"]},
        inputs if gpu else None,
        check=copy_reference,
        rel_tol=0.0,
        timeout_s=3.0,
        warmup=2,
        rep=5,
        use_cache=False,
        name="planted",
        engine=ENGINE,
    )
    for r in res.rows:
        say(f"  {r.config['kind']:<6} {r.status:<14} {r.fault_kind or '':<16} {r.reason[:110]}")
    record["planted"] = res.to_dict()
    return res


def compile_scaling(txlab, hg, record, count, cache_root):
    from txlab.tune import engine as E
    from txlab.tune.space import Space

    say(f"\n== compile phase: {count} GEMM candidates (8192^3), parallel (Ray) vs serial ==")
    m = n = k = 8192
    space = hg.tune_space(m, n, k)
    configs = Space.of(space).configs()
    res = txlab.autotune(
        hg.tune_build(m, n, k),
        space,
        gpus=0,
        budget=count,
        search="exhaustive",
        prior=hg.TUNE_PRIOR,
        use_cache=False,
        name="compile-scaling",
    )
    par = res.meta["compile_phase_s"]
    ok = sum(r.status == "compiled" for r in res.rows)
    say(
        f"  parallel: {ok}/{len(res.rows)} compiled in {par:.1f} s on {res.meta['workers']} Ray workers "
        f"(Ray was started before, {record['ray']['init_s']:.1f} s; worker processes start inside the phase)"
    )
    chosen = [r.config for r in res.rows]
    os.environ["TXLAB_CACHE_DIR"] = os.path.join(cache_root, "serial")  # a cold cache of its own
    t = time.perf_counter()
    for c in chosen:
        E.compile_one(hg.tune_build(m, n, k), c, "sm_90a")
    ser = time.perf_counter() - t
    os.environ["TXLAB_CACHE_DIR"] = os.path.join(cache_root, "main")
    say(f"  serial:   {len(chosen)} compiled in {ser:.1f} s  ->  speed-up {ser / par:.2f}x (target >= 6)")
    record["compile"] = {
        "candidates": len(chosen),
        "parallel_s": par,
        "serial_s": ser,
        "speedup": ser / par,
        "workers": res.meta["workers"],
        "ray_init_s": record["ray"]["init_s"],
        "space_valid": len(configs),
        "rows": res.to_dict()["rows"],
    }


def copy_sweep(txlab, torch, timer, record, budget, gpu):
    from txlab.examples import bandwidth as bw

    n = 1 << 28
    nbytes = bw.copy_bytes(n)
    say(f"\n== copy sweep (1 GiB), budget {budget} ==")
    space = {**bw.COPY_SPACE, "constraint": bw.copy_space_valid(n)}
    default = {"threads": 256, "unroll": 4, "blocks_per_sm": 8, "unguarded": False}
    res = txlab.autotune(
        bw.copy_build(n),
        space,
        bw.copy_inputs(n) if gpu else None,
        check=copy_reference,
        rel_tol=0.0,
        bytes=nbytes,
        budget=budget,
        prior=[default],
        warmup=5,
        rep=20,
        name="copy_1GiB",
        engine=ENGINE,
        search=SEARCH,
    )
    out = {"sweep": res.to_dict()}
    for r in sorted(res.measured, key=lambda r: r.time_ms)[:5]:
        say(f"  {r.config}  {r.gbps:,.0f} GB/s")
    if gpu and res.best:
        src = torch.randn(n, device="cuda")
        dst = torch.empty_like(src)
        best = txlab.compile(bw.copy_build(n)(**res.best.config), arch="sm_90a").executable
        dflt = txlab.compile(bw.copy_build(n)(**default), arch="sm_90a").executable
        t = interleaved(
            timer,
            {"tuned": lambda: best(src, dst), "default": lambda: dflt(src, dst), "torch": lambda: dst.copy_(src)},
            rounds=5,
        )
        best(src, dst)
        torch.cuda.synchronize()
        exact = bool(torch.equal(src, dst))
        gbps = {k: nbytes / (v["median_ms"] * 1e-3) / 1e9 for k, v in t.items()}
        out.update(
            best=res.best.config,
            times=t,
            gbps=gbps,
            ratio=gbps["tuned"] / gbps["torch"],
            default_ratio=gbps["default"] / gbps["torch"],
            exact=exact,
        )
        say(
            f"  tuned {gbps['tuned']:,.0f} GB/s, default {gbps['default']:,.0f}, torch copy_ {gbps['torch']:,.0f}"
            f"  ->  tuned/torch {out['ratio']:.3f} (target >= 0.97), default/torch {out['default_ratio']:.3f};"
            f" exact {exact}"
        )
    record["copy"] = out


def gemm_sweeps(txlab, hg, torch, timer, record, budget, deadline, gpu, shapes):
    say(f"\n== GEMM sweeps, budget {budget} per shape ==")
    entries, rows = [], []
    for m, n, k in shapes:
        name = f"{m}x{n}x{k}"
        # rough seconds per sweep: inputs, reference, then per candidate a checked run and the timing
        need = 15.0 + budget * (6.0 if m * n * k >= 16384**3 else 2.5)
        if elapsed() + need > deadline:
            say(f"  {name}: skipped ({elapsed():.0f} s + ~{need:.0f} s would pass the {deadline:.0f} s deadline)")
            rows.append({"shape": [m, n, k], "skipped": "deadline"})
            continue
        t = time.perf_counter()
        try:
            res = txlab.autotune(
                hg.tune_build(m, n, k),
                hg.tune_space(m, n, k),
                hg.tune_inputs(m, n, k) if gpu else None,
                check=hg.reference,
                rel_tol=1e-2,
                flops=hg.flops(m, n, k),
                budget=budget,
                prior=hg.TUNE_PRIOR,
                warmup=5,
                rep=20,
                timeout_s=10.0,
                name=f"gemm_{name}",
                engine=ENGINE,
                search=SEARCH,
            )
        except Exception as exc:  # noqa: BLE001 - one shape must not end the run
            say(f"  {name}: sweep failed: {type(exc).__name__}: {exc}")
            LOG.append(traceback.format_exc())
            rows.append({"shape": [m, n, k], "error": str(exc)})
            continue
        c = res.counts()
        rec = {"shape": [m, n, k], "sweep_s": time.perf_counter() - t, "counts": c, "sweep": res.to_dict()}
        if not gpu or res.best is None:
            say(f"  {name}: {c['compiled']} compiled, {c['measured']} measured, {c['failed']} failed (no best)")
            rows.append(rec)
            continue
        best_cfg = res.best.config
        try:
            rec.update(compare_gemm(txlab, hg, torch, timer, m, n, k, best_cfg))
        except Exception as exc:  # noqa: BLE001
            say(f"  {name}: comparison failed: {type(exc).__name__}: {exc}")
            LOG.append(traceback.format_exc())
            rows.append(rec)
            continue
        rec["best"] = best_cfg
        say(
            f"  {name}: {c['measured']} measured, {c['failed']} failed in {rec['sweep_s']:.0f} s; best "
            f"{config_text(best_cfg)}: "
            f"{rec['tflops']:.1f} TFLOP/s vs cuBLAS {rec['cublas_tflops']:.1f} = {rec['ratio']:.3f} "
            f"(default {rec['default_ratio']:.3f}); rel err {rec['rel_error']:.2e}"
        )
        if rec["correct"]:
            entries.append(table_entry([m, n, k], best_cfg, rec))
        rows.append(rec)
    record["gemm"] = rows
    return entries


def verify_table(txlab, hg, torch, timer, record, swept, rounds=7):
    """The shipped table and this run's sweep winners, measured again here beside cuBLAS: per shape
    the shipped entry's configuration and, when it differs, the sweep's, each in ``rounds``
    interleaved rounds with cuBLAS; the entry kept is the one with the higher ratio in this run, and
    the returned entries carry only this run's figures."""
    candidates: dict = {}
    for e in hg.load_tuned_table()["entries"]:
        candidates.setdefault(tuple(e["shape"]), []).append((hg.GemmConfig(**e["config"]), "table"))
    for e in swept:
        have = candidates.setdefault(tuple(e["shape"]), [])
        cfg = hg.GemmConfig(**e["config"])
        if all(cfg != c for c, _ in have):
            have.append((cfg, "sweep"))
    say(f"\n== verify: {len(candidates)} tuned shapes beside cuBLAS in this run ({rounds} rounds each) ==")
    out, rows = [], []
    for shape, cands in candidates.items():
        m, n, k = shape
        best = None
        for cfg, origin in cands:
            config = {f: getattr(cfg, f) for f in hg.TUNE_SPACE}
            try:
                rec = compare_gemm(txlab, hg, torch, timer, m, n, k, config, rounds=rounds)
            except Exception as exc:  # noqa: BLE001
                say(f"  {m}x{n}x{k}: verification of {cfg.name} failed: {type(exc).__name__}: {exc}")
                LOG.append(traceback.format_exc())
                continue
            rec.update(shape=list(shape), best=config, origin=origin)
            rows.append(rec)
            say(
                f"  {m}x{n}x{k}: {config_text(config)} ({origin}): {rec['tflops']:.1f} TFLOP/s vs "
                f"cuBLAS {rec['cublas_tflops']:.1f} = {rec['ratio']:.3f} (default {rec['default_ratio']:.3f}); "
                f"rel err {rec['rel_error']:.2e}"
            )
            if rec["correct"] and (best is None or rec["ratio"] > best[1]["ratio"]):
                best = (config, rec)
        if best is not None:
            out.append(table_entry(list(shape), *best))
    record["verify"] = rows
    return out


def table_entry(shape: list, config: dict, rec: dict) -> dict:
    """A tuned-table entry (hopper_gemm.write_tuned_table) from a compare_gemm record."""
    return {
        "shape": shape,
        "config": config,
        "time_ms": rec["time_ms"],
        "tflops": rec["tflops"],
        "ratio": rec["ratio"],
        "baseline": "torch.matmul",
        "baseline_ms": rec["cublas_ms"],
        "rel_error": rec["rel_error"],
    }


def compare_gemm(txlab, hg, torch, timer, m, n, k, best_cfg, rounds=5):
    g = torch.Generator(device="cuda").manual_seed(1234)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tuned = txlab.compile(hg.gemm_kernel(m, n, k, hg.GemmConfig(**best_cfg)), arch="sm_90a").executable
    dflt = txlab.compile(hg.gemm_kernel(m, n, k, hg.GemmConfig()), arch="sm_90a").executable
    bt = b.T
    tuned(a, b, c)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    rel = (torch.linalg.vector_norm(c.float() - ref) / torch.linalg.vector_norm(ref)).item()
    unwritten = int(torch.isnan(c).sum().item())
    del ref
    t = interleaved(
        timer,
        {"tuned": lambda: tuned(a, b, c), "default": lambda: dflt(a, b, c), "cublas": lambda: torch.matmul(a, bt)},
        rounds=rounds,
    )
    fl = hg.flops(m, n, k)
    tf = {key: fl / (v["median_ms"] * 1e-3) / 1e12 for key, v in t.items()}
    return {
        "time_ms": t["tuned"]["median_ms"],
        "default_ms": t["default"]["median_ms"],
        "cublas_ms": t["cublas"]["median_ms"],
        "rounds": t,
        "tflops": tf["tuned"],
        "default_tflops": tf["default"],
        "cublas_tflops": tf["cublas"],
        "ratio": tf["tuned"] / tf["cublas"],
        "default_ratio": tf["default"] / tf["cublas"],
        "rel_error": rel,
        "unwritten": unwritten,
        "correct": bool(rel <= 1e-2 and unwritten == 0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--deadline", type=float, default=450.0, help="seconds after which no new shape starts")
    ap.add_argument("--budget", type=int, default=10, help="candidates measured per GEMM shape")
    ap.add_argument("--copy-budget", type=int, default=16)
    ap.add_argument("--compile-count", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="small counts, two shapes (a smoke test)")
    ap.add_argument(
        "--phases",
        default="planted,compile,copy,gemm,verify",
        help="comma-separated subset of planted,compile,copy,gemm,verify (default: all). verify: "
        "every shape of the tuned table (the shipped one, updated by this run's sweeps where "
        "they did better) measured again beside cuBLAS in this run; the table written holds "
        "those figures",
    )
    ap.add_argument("--shapes", default="", help="MxNxK,... instead of the issue's seven")
    ap.add_argument("--no-gpu", action="store_true", help="compile-only everywhere")
    ap.add_argument(
        "--engine",
        choices=("auto", "serial"),
        default="auto",
        help="serial: no Ray (what happens by itself when Ray is not importable)",
    )
    args = ap.parse_args()
    if args.quick:
        args.budget, args.copy_budget, args.compile_count = 3, 3, 4
    os.makedirs(args.out, exist_ok=True)
    cache_root = tempfile.mkdtemp(prefix="txlab-tune-cache-")
    os.environ["TXLAB_CACHE_DIR"] = os.path.join(cache_root, "main")  # cold compiles, inherited by Ray
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")

    import txlab
    from txlab.examples import hopper_gemm as hg
    from txlab.tune import engine as E

    gpu = not args.no_gpu
    global ENGINE, SEARCH
    try:
        if args.engine == "serial":
            raise ImportError("--engine serial")
        import ray  # noqa: F401
    except ImportError:
        ENGINE = "serial"
        say(
            "!! Ray is not importable here (pack it with scripts/pack_ray.sh): sweeps run in this process "
            "(engine='serial'); the compile-scaling phase is skipped"
        )
    try:
        import optuna  # noqa: F401
    except ImportError:
        SEARCH = "exhaustive"
        say("!! Optuna is not importable here: budgets take the first configurations (priors first)")
    torch = timer = None
    if gpu:
        import torch as _torch

        torch = _torch
        if not torch.cuda.is_available():
            say("no CUDA GPU visible to torch: run with --no-gpu for the compile side only")
            return 2
        timer = Timer(torch)
    record = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": os.uname().nodename,
        "cpus": os.cpu_count(),
        "args": vars(args),
    }
    n_gpus = torch.cuda.device_count() if gpu else 0
    if ENGINE == "ray":
        init = E.ray_init(num_cpus=os.cpu_count(), num_gpus=n_gpus)
        say(f"Ray {init['mode']} started in {init['init_s']:.1f} s: {E.node_report()}")
        record["ray"] = {**init, "nodes": E.node_report()}
    record["engine"], record["search"] = ENGINE, SEARCH
    if gpu and ENGINE == "ray":
        actors, placement = E.measurers(n_gpus)
        say(f"GPU actors: {placement}")
        record["placement"] = placement
        record["device"] = placement[0]["device"] if placement else None
    try:
        phases = set(args.phases.split(","))
        if "planted" in phases:
            planted(txlab, record, gpu)
        if ENGINE == "ray" and "compile" in phases:
            compile_scaling(txlab, hg, record, args.compile_count, cache_root)
        if "copy" in phases:
            copy_sweep(txlab, torch, timer, record, args.copy_budget, gpu)
        shapes = SHAPES[:2] if args.quick else SHAPES
        if args.shapes:
            shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
        entries = []
        if "gemm" in phases:
            entries = gemm_sweeps(txlab, hg, torch, timer, record, args.budget, args.deadline, gpu, shapes)
        if "verify" in phases and gpu:
            entries = verify_table(txlab, hg, torch, timer, record, entries)
        if entries:
            hg.write_tuned_table(
                os.path.join(args.out, hg.TUNED_TABLE),
                entries,
                device=record.get("device") or "?",
                source=f"scripts/tune_h200.py on {record['host']}, {record['date']}",
            )
            say(f"\nwrote {hg.TUNED_TABLE} with {len(entries)} shapes (copy it to txlab/data/)")
    except Exception as exc:  # noqa: BLE001 - keep what was recorded
        say(f"!! {type(exc).__name__}: {exc}")
        LOG.append(traceback.format_exc())
    finally:
        record["elapsed_s"] = elapsed()
        summary(record)
        with open(os.path.join(args.out, "tune.json"), "w") as fh:
            json.dump(record, fh, indent=1, default=str)
        with open(os.path.join(args.out, "tune.log"), "w") as fh:
            fh.write("\n".join(LOG) + "\n")
        if ENGINE == "ray":
            E.shutdown()
    return 0


def summary(record):
    say(f"\n== summary ({record['elapsed_s']:.0f} s) ==")
    p = record.get("planted", {}).get("rows", [])
    say(
        "planted: "
        + ", ".join(
            f"{r['config']['kind']} -> {r['status']}" + (f" ({r['fault_kind']})" if r.get("fault_kind") else "")
            for r in p
        )
    )
    c = record.get("compile")
    if c:
        say(
            f"compile: {c['candidates']} candidates, serial {c['serial_s']:.1f} s, parallel {c['parallel_s']:.1f} s"
            f" = {c['speedup']:.2f}x on {c['workers']} workers (target >= 6x)"
        )
    cp = record.get("copy", {})
    if "ratio" in cp:
        say(
            f"copy 1 GiB: tuned {cp['gbps']['tuned']:,.0f} GB/s = {cp['ratio']:.3f} of torch copy_ "
            f"(default {cp['default_ratio']:.3f}); best {cp['best']}"
        )
    say(f"{'shape':<18}{'tuned TFLOP/s':>14}{'cuBLAS':>9}{'ratio':>8}{'default':>9}{'rel err':>10}  best")
    for r in record.get("gemm", []) + record.get("verify", []):
        shape = "x".join(map(str, r["shape"]))
        if "ratio" not in r:
            say(f"{shape:<18}  {r.get('skipped') or r.get('error') or 'not measured'}")
            continue
        say(
            f"{shape:<18}{r['tflops']:>14.1f}{r['cublas_tflops']:>9.1f}{r['ratio']:>8.3f}{r['default_ratio']:>9.3f}"
            f"{r['rel_error']:>10.2e}  {config_text(r['best'])}"
        )


def config_text(cfg: dict) -> str:
    """``128x128x64_s6_c2_pp l2 8 sms 132`` (+ ``serpentine``): a GEMM config on one line."""
    from txlab.examples import hopper_gemm as hg

    return f"{hg.GemmConfig(**cfg).name} l2 {cfg.get('l2_group')} sms {cfg.get('num_sms')}" + (
        " serpentine" if cfg.get("serpentine") else ""
    )


if __name__ == "__main__":
    sys.exit(main())
