"""The Hopper bf16 GEMM (txlab.examples.hopper_gemm) against torch.matmul (cuBLAS), side by side on
one GPU in one run, plus the memory-bound companions (txlab.examples.bandwidth) against torch's
device-to-device copy. Target: >= 90% of cuBLAS TFLOP/s at 8192^3; copy and row sum >= 90% of
torch's copy bandwidth.

    .venv/bin/python benchmarks/hopper_gemm.py                      # everything, ~3-5 min on an H200
    .venv/bin/python benchmarks/hopper_gemm.py --variants 128x256x64_s4_c2,128x128x64_s5_c2
    .venv/bin/python benchmarks/hopper_gemm.py --quick              # fewer shapes and repeats

1. Compile every variant for 8192^3 and print registers, spills, HGMMA count/shape, setmaxnreg,
   ptxas warnings (no GPU needed for this part; ``--compile-only`` stops here).
2. For each variant at 8192^3: check against torch in fp32 on fresh random inputs (output poisoned
   with NaN first), time it (median, L2 flushed before every launch), keep the fastest correct one.
3. With the winner: correctness at 4096^3, 8192^3 and a ragged 4095x8191x4096; speed at 4096^3,
   8192^3, 16384^3 and two skinny shapes, each beside torch.matmul timed the same way.
4. Bandwidth: vectorized copy and row sum vs torch ``copy_`` and ``sum(dim=1)``.

Every variant / shape runs in its own try/except (a failure prints its error and the run goes on).
Writes benchmarks/results/hopper_gemm.json, hopper_gemm.log and hopper_gemm_roofline.png; the
table is printed last. ``--out DIR`` writes them there instead (e.g. $OUT on a device machine).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from txlab.examples import hopper_gemm as hg  # noqa: E402

TUNE_SHAPE = (8192, 8192, 8192)
CHECK_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4095, 8191, 4096)]
SPEED_SHAPES = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (16384, 16384, 16384),
    (512, 8192, 8192),
    (8192, 512, 8192),
]  # the last two: skinny M, skinny N
REL_TOL = 1e-2
LOG: list[str] = []


def say(*parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    LOG.append(line)


def fail(what, exc):
    say(f"  !! {what}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    LOG.append(traceback.format_exc())


# ---- timing: the same method for txlab and torch ---------------------------------------------
class Timer:
    """Median of ``rep`` launches, each between CUDA events on the current stream, with the L2
    flushed (a 2x-L2 memset) before each one, then a GPU-side spin (``torch.cuda._sleep``) so the host has
    enqueued the launch before the start event runs (a slow host then cannot stretch a short kernel's interval);
    ``warmup`` untimed launches first."""

    def __init__(self, torch, warmup=10, rep=50, spin_cycles=400_000):
        self.torch, self.warmup, self.rep, self.spin = torch, warmup, rep, spin_cycles
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(max(2 * l2, 128 << 20), dtype=torch.uint8, device="cuda")

    def __call__(self, fn) -> dict:
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.rep)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.rep)]
        for i in range(self.rep):
            self.flush.fill_(i & 0xFF)
            if self.spin:
                torch.cuda._sleep(self.spin)
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "rep": len(ms)}


def rel_error(torch, out, a, b) -> tuple[float, int]:
    ref = a.float() @ b.float().T
    got = out.float()
    unwritten = int(torch.isnan(got).sum().item())
    err = (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref)).item()
    return err, unwritten


def inputs(torch, m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    return a, b, c


# ---- pieces --------------------------------------------------------------------------------
def compile_variant(m, n, k, cfg):
    t = time.perf_counter()
    c = hg.build(m, n, k, cfg)
    s = hg.sass_summary(c)
    s["compile_s"] = round(time.perf_counter() - t, 2)
    return c, s


def describe(name, s):
    warn = f" ptxas: {'; '.join(s['ptxas_warnings'])[:200]}" if s["ptxas_warnings"] else ""
    say(
        f"  {name:<22} regs {s['registers']:>3}  spills {s['spill_store_bytes']}/{s['spill_load_bytes']} B  "
        f"stack {s['stack_bytes']} B  LDL/STL {s['local_ldst']}  HGMMA {s['hgmma']} {','.join(s['hgmma_shapes'])}  "
        f"HMMA {s['hmma']}  setmaxnreg {s['setmaxnreg']}  smem {s['dynamic_smem_bytes']} B  "
        f"compile {s['compile_s']} s{warn}"
    )


class Hang(RuntimeError):
    pass


def guarded_first_launch(compiled, args, timeout_s=30.0):
    """The first launch of a kernel runs in txlab's worker process with a time limit, so a pipeline
    that deadlocks or faults costs this variant, not the whole run. Raises Hang for a timeout or a
    device fault; other worker trouble is printed and the run goes on inline."""
    from txlab import worker
    from txlab.errors import KernelFault

    try:
        worker.run(compiled, list(args), timeout_s=timeout_s)
    except KernelFault as exc:
        raise Hang(f"first launch in the worker failed ({exc.kind}): {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the guard itself failed; do not block the run on it
        say(f"  (worker guard unavailable: {type(exc).__name__}: {str(exc)[:120]}; launching inline)")


def run_gemm(torch, timer, compiled, m, n, k, seed, time_it=True, cublas=None, guard=False):
    """Check (fresh inputs, poisoned output) then time; returns a record."""
    a, b, c = inputs(torch, m, n, k, seed)
    if guard:
        guarded_first_launch(compiled, (a, b, c))
        c.fill_(float("nan"))
    compiled(a, b, c)
    torch.cuda.synchronize()
    err, unwritten = rel_error(torch, c, a, b)
    rec = {
        "m": m,
        "n": n,
        "k": k,
        "rel_error": err,
        "unwritten": unwritten,
        "correct": bool(err <= REL_TOL and unwritten == 0),
    }
    # a second check on new inputs: a race shows up as an error that moves
    a2, b2, c2 = inputs(torch, m, n, k, seed + 1000)
    compiled(a2, b2, c2)
    torch.cuda.synchronize()
    rec["rel_error_2"], _ = rel_error(torch, c2, a2, b2)
    del a2, b2, c2
    if time_it:
        exe = compiled.executable
        t = timer(lambda: exe(a, b, c))
        rec["txlab_ms"] = t["median_ms"]
        rec["txlab_tflops"] = hg.flops(m, n, k) / (t["median_ms"] * 1e-3) / 1e12
        rec["txlab_spread_ms"] = [t["min_ms"], t["max_ms"]]
    if cublas is not None:
        rec.update(cublas)
    return rec


def time_cublas(torch, timer, m, n, k, seed):
    a, b, _ = inputs(torch, m, n, k, seed)
    bt = b.T
    t = timer(lambda: torch.matmul(a, bt))
    return {"cublas_ms": t["median_ms"], "cublas_tflops": hg.flops(m, n, k) / (t["median_ms"] * 1e-3) / 1e12}


def bandwidth(torch, timer, records):
    from txlab import compile as tx_compile
    from txlab.examples import bandwidth as bw

    n = 1 << 28  # 1 GiB of float32 per buffer
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    t = timer(lambda: dst.copy_(src))
    torch_copy = bw.copy_bytes(n) / (t["median_ms"] * 1e-3) / 1e9
    say(f"  torch copy_: {torch_copy:,.0f} GB/s (read + write, {bw.copy_bytes(n) >> 20} MiB moved)")
    records["torch_copy_gbps"] = torch_copy
    try:
        c = tx_compile(bw.copy_kernel(n), arch="sm_90a")
        dst.fill_(float("nan"))
        c(src, dst)
        torch.cuda.synchronize()
        ok = bool(torch.equal(src, dst))
        exe = c.executable
        t = timer(lambda: exe(src, dst))
        g = bw.copy_bytes(n) / (t["median_ms"] * 1e-3) / 1e9
        records["copy"] = {
            "gbps": g,
            "torch_gbps": torch_copy,
            "ratio": g / torch_copy,
            "correct": ok,
            "registers": c.resources[c.kernels[0]]["registers"],
            "ldg128": len(c.instructions(r"^LDG.*128")),
            "stg128": len(c.instructions(r"^STG.*128")),
        }
        say(f"  txlab copy: {g:,.0f} GB/s = {100 * g / torch_copy:.1f}% of torch copy; exact: {ok}")
    except Exception as exc:  # noqa: BLE001
        fail("copy", exc)
    del dst
    rows, cols = 16384, 16384  # 1 GiB
    A = src.view(rows, cols)
    try:
        t = timer(lambda: A.sum(dim=1))
        records["torch_row_sum_gbps"] = bw.row_sum_bytes(rows, cols) / (t["median_ms"] * 1e-3) / 1e9
        c = tx_compile(bw.row_sum_kernel(rows, cols), arch="sm_90a")
        out = torch.full((rows,), float("nan"), device="cuda")
        c(A, out)
        torch.cuda.synchronize()
        ref = A.double().sum(dim=1)
        err = ((out.double() - ref).norm() / ref.norm()).item()
        exe = c.executable
        t = timer(lambda: exe(A, out))
        g = bw.row_sum_bytes(rows, cols) / (t["median_ms"] * 1e-3) / 1e9
        records["row_sum"] = {
            "gbps": g,
            "torch_gbps": torch_copy,
            "ratio": g / torch_copy,
            "torch_sum_gbps": records["torch_row_sum_gbps"],
            "rel_error": err,
            "correct": bool(err < 1e-5),
            "registers": c.resources[c.kernels[0]]["registers"],
        }
        say(
            f"  txlab row sum: {g:,.0f} GB/s = {100 * g / torch_copy:.1f}% of torch copy "
            f"(torch sum(dim=1): {records['torch_row_sum_gbps']:,.0f} GB/s); rel err {err:.1e}"
        )
    except Exception as exc:  # noqa: BLE001
        fail("row sum", exc)


def roofline_png(torch, records, path, copy_gbps):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        peak = max([r.get("cublas_tflops") or 0 for r in records] + [1])
        x = np.logspace(0, 4, 200)
        ax.loglog(
            x,
            np.minimum(x * copy_gbps * 1e9, peak * 1e12) / 1e12,
            "k-",
            lw=1,
            label=f"roof: {copy_gbps:,.0f} GB/s, {peak:.0f} TFLOP/s (best cuBLAS)",
        )
        for r in records:
            ai = hg.flops(r["m"], r["n"], r["k"]) / hg.min_bytes(r["m"], r["n"], r["k"])
            lab = f"{r['m']}x{r['n']}x{r['k']}"
            if r.get("txlab_tflops"):
                ax.plot(ai, r["txlab_tflops"], "o", color="C0")
                ax.annotate(lab, (ai, r["txlab_tflops"]), fontsize=6)
            if r.get("cublas_tflops"):
                ax.plot(ai, r["cublas_tflops"], "x", color="C3")
        ax.plot([], [], "o", color="C0", label="txlab")
        ax.plot([], [], "x", color="C3", label="cuBLAS")
        ax.set_xlabel("FLOP / minimum byte")
        ax.set_ylabel("TFLOP/s")
        ax.legend(fontsize=7)
        ax.set_title("bf16 GEMM on " + torch.cuda.get_device_name(0), fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        say(f"roofline: {path}")
    except Exception as exc:  # noqa: BLE001
        fail("roofline plot", exc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--variants",
        default=",".join(hg.DEFAULT_VARIANTS),
        help="comma-separated BMxBNx64_sSTAGES_cCONSUMERS configs to try at 8192^3",
    )
    ap.add_argument("--quick", action="store_true", help="fewer shapes and repeats")
    ap.add_argument("--compile-only", action="store_true", help="build and report SASS facts; no GPU needed")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--rep", type=int, default=50)
    ap.add_argument(
        "--no-guard", action="store_true", help="first launches inline instead of in the time-limited worker process"
    )
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t_start = time.perf_counter()
    result = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "records": [],
        "variants": [],
        "target": "txlab >= 0.9 x cuBLAS TFLOP/s at 8192^3; bandwidth >= 0.9 x torch copy",
    }

    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        torch, has_gpu = None, False
    if not has_gpu and not args.compile_only:
        say("no CUDA GPU / torch here: running --compile-only")
        args.compile_only = True
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count if has_gpu else 132
    device = torch.cuda.get_device_name(0) if has_gpu else "none (compile only)"
    result["device"] = device
    say(f"device: {device}, {num_sms} SMs; torch {getattr(torch, '__version__', '-')}")

    configs = []
    for text in [v for v in args.variants.split(",") if v.strip()]:
        try:
            configs.append(hg.parse_config(text, num_sms=num_sms))
        except Exception as exc:  # noqa: BLE001
            fail(f"variant {text}", exc)

    say(f"\n== compile at {TUNE_SHAPE} ==")
    built = {}
    for cfg in configs:
        try:
            built[cfg.name] = compile_variant(*TUNE_SHAPE, cfg)
            describe(cfg.name, built[cfg.name][1])
        except Exception as exc:  # noqa: BLE001
            fail(f"compile {cfg.name}", exc)
    if args.compile_only:
        result["variants"] = [{"config": n, **s} for n, (_, s) in built.items()]
        _write(args.out, result, table=False)
        return 0

    timer = Timer(torch, rep=args.rep if not args.quick else 20)
    seed = int(time.time()) % 100000
    say(f"\n== variants at {TUNE_SHAPE} (seed {seed}) ==")
    cub = time_cublas(torch, timer, *TUNE_SHAPE, seed)
    say(f"  cuBLAS: {cub['cublas_tflops']:.1f} TFLOP/s ({cub['cublas_ms']:.3f} ms)")
    best = None
    for cfg in configs:
        if cfg.name not in built:
            continue
        compiled, facts = built[cfg.name]
        try:
            rec = run_gemm(torch, timer, compiled, *TUNE_SHAPE, seed, cublas=cub, guard=not args.no_guard)
            rec.update(config=cfg.name, sass=facts)
            result["variants"].append(rec)
            say(
                f"  {cfg.name:<22} {rec['txlab_tflops']:7.1f} TFLOP/s = {100 * rec['txlab_tflops'] / cub['cublas_tflops']:5.1f}% "
                f"of cuBLAS; rel err {rec['rel_error']:.2e} / {rec['rel_error_2']:.2e}; unwritten {rec['unwritten']}; "
                f"spread {rec['txlab_spread_ms'][0]:.3f}-{rec['txlab_spread_ms'][1]:.3f} ms"
            )
            if rec["correct"] and (best is None or rec["txlab_tflops"] > best[1]["txlab_tflops"]):
                best = (cfg, rec)
        except Exception as exc:  # noqa: BLE001
            fail(cfg.name, exc)
    # the steps of the notebook, for the record: the simple kernel and the non-persistent pipeline
    for label, make in (
        ("step1_simple_64x128", lambda: hg.simple_kernel(*TUNE_SHAPE, bn=128)),
        ("step2_nonpersistent", lambda: hg.gemm_kernel(*TUNE_SHAPE, hg.GemmConfig(num_sms=num_sms, persistent=False))),
    ):
        try:
            import txlab

            c = txlab.compile(make(), arch="sm_90a")
            rec = run_gemm(torch, timer, c, *TUNE_SHAPE, seed, cublas=cub, guard=not args.no_guard)
            rec.update(config=label, sass=hg.sass_summary(c))
            result["variants"].append(rec)
            say(f"  {label:<22} {rec['txlab_tflops']:7.1f} TFLOP/s; rel err {rec['rel_error']:.2e}")
        except Exception as exc:  # noqa: BLE001
            fail(label, exc)

    if best is None:
        say("no variant was correct at 8192^3: no shape sweep")
    else:
        cfg = best[0]
        result["best"] = cfg.name
        say(f"\n== shapes with {cfg.name} ==")
        shapes = list(dict.fromkeys(SPEED_SHAPES + CHECK_SHAPES))
        if args.quick:
            shapes = [s for s in shapes if s[0] * s[1] * s[2] <= 8192**3]
        for m, n, k in shapes:
            try:
                compiled = best_compiled = None
                if (m, n, k) == TUNE_SHAPE:
                    best_compiled = built[cfg.name][0]
                compiled = best_compiled or hg.build(m, n, k, cfg)
                timed = (m, n, k) in SPEED_SHAPES
                cb = time_cublas(torch, timer, m, n, k, seed) if timed else None
                rec = run_gemm(
                    torch,
                    timer,
                    compiled,
                    m,
                    n,
                    k,
                    seed + m + n + k,
                    time_it=timed,
                    cublas=cb,
                    guard=(m, n, k) != TUNE_SHAPE and not args.no_guard,
                )
                rec.update(
                    config=cfg.name,
                    device=device,
                    date=result["date"],
                    txlab_tflops=rec.get("txlab_tflops"),
                    cublas_tflops=rec.get("cublas_tflops"),
                )
                result["records"].append(rec)
                speed = (
                    (
                        f"{rec['txlab_tflops']:7.1f} vs cuBLAS {rec['cublas_tflops']:7.1f} TFLOP/s "
                        f"({100 * rec['txlab_tflops'] / rec['cublas_tflops']:5.1f}%)"
                    )
                    if timed
                    else "(check only)"
                )
                say(f"  {m}x{n}x{k}: {speed}; rel err {rec['rel_error']:.2e}; unwritten {rec['unwritten']}")
            except Exception as exc:  # noqa: BLE001
                fail(f"{m}x{n}x{k}", exc)
            torch.cuda.empty_cache()

    say("\n== bandwidth ==")
    bwrec = {}
    try:
        bandwidth(torch, timer, bwrec)
    except Exception as exc:  # noqa: BLE001
        fail("bandwidth", exc)
    result["bandwidth"] = bwrec
    if bwrec.get("torch_copy_gbps"):
        roofline_png(
            torch, result["records"], os.path.join(args.out, "hopper_gemm_roofline.png"), bwrec["torch_copy_gbps"]
        )
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    _write(args.out, result, table=True)
    return 0


def _write(out, result, table):
    if table:
        say("\n== summary ==")
        say(f"{'shape':>20} {'txlab TF/s':>11} {'cuBLAS TF/s':>12} {'ratio':>7} {'rel err':>9} {'ok':>4}")
        for r in result["records"]:
            ratio = (
                f"{r['txlab_tflops'] / r['cublas_tflops']:.3f}"
                if r.get("txlab_tflops") and r.get("cublas_tflops")
                else "-"
            )
            tf = f"{r['txlab_tflops']:.1f}" if r.get("txlab_tflops") else "-"
            cb = f"{r['cublas_tflops']:.1f}" if r.get("cublas_tflops") else "-"
            say(
                f"{r['m']}x{r['n']}x{r['k']:>6} {tf:>11} {cb:>12} {ratio:>7} {r['rel_error']:9.2e} "
                f"{'yes' if r['correct'] else 'NO':>4}"
            )
        bw = result.get("bandwidth", {})
        for key in ("copy", "row_sum"):
            if key in bw:
                say(
                    f"{key:>20} {bw[key]['gbps']:>8,.0f} GB/s vs torch copy {bw[key]['torch_gbps']:,.0f} GB/s "
                    f"= {100 * bw[key]['ratio']:.1f}% (target 90%)"
                )
        tgt = [r for r in result["records"] if (r["m"], r["n"], r["k"]) == TUNE_SHAPE and r.get("txlab_tflops")]
        if tgt:
            ratio = tgt[0]["txlab_tflops"] / tgt[0]["cublas_tflops"]
            say(
                f"target 8192^3 >= 0.90 x cuBLAS: {ratio:.3f} -> {'MET' if ratio >= 0.9 else 'NOT MET'} "
                f"(best config {result.get('best')}; run took {result.get('seconds')} s)"
            )
    path = os.path.join(out, "hopper_gemm.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(out, "hopper_gemm.log"), "w") as f:
        f.write("\n".join(LOG) + "\n")
    print(f"wrote {path} and hopper_gemm.log", flush=True)


if __name__ == "__main__":
    sys.exit(main())
