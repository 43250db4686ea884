"""On an H200: ``txlab.examples.hopper_attention`` beside torch SDPA's cuDNN and flash backends, in one
process. Every configuration is checked first (O NaN-poisoned, against an fp32 reference on a few
(batch, head) slices: rel. error <= 1e-2, LSE <= 1e-3 abs, no NaN anywhere, -inf LSE exactly where
a row sees no key), then timed: median of interleaved rounds, each round the median of 20 launches
after an L2 flush. TFLOP/s = ``hopper_attention.flops``: 4·B·H·D per (query, key) pair computed, all Sq·Skv
of them, or causal the ones the bottom-right mask leaves (S·(S + 1)/2 at Sq = Skv, the one case torch's top-left
``is_causal`` is the same mask and so the one the SDPA backends run on), one count for every backend. Each case
runs the configuration ``build()`` takes without one (``hopper_attention.tuned_config``: the shipped tuned
table's entry for the shape, else the model's choice); the overlap cases switch one knob of the default.

    python scripts/attention_h200.py [--rounds 3] [--out benchmarks/results/attention.json] [--only NAME,...]

Kernels are compiled first, in parallel worker processes (the txlab cache then serves them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

#: (name, batch, heads, kv_heads, seqlen_q, seqlen_kv, head_dim, causal, config overrides)
CASES = [  # in priority order: a run that reaches its deadline skips the last ones
    ("d128_s4096", 4, 32, 32, 4096, 4096, 128, False, {}),
    ("d128_s4096_causal", 4, 32, 32, 4096, 4096, 128, True, {}),
    ("d128_s8192", 4, 32, 32, 8192, 8192, 128, False, {}),
    ("d128_s8192_causal", 4, 32, 32, 8192, 8192, 128, True, {}),
    ("d128_s16384", 4, 32, 32, 16384, 16384, 128, False, {}),
    ("d128_s16384_causal", 4, 32, 32, 16384, 16384, 128, True, {}),
    ("gqa_32q8kv_d128_s4096", 4, 32, 8, 4096, 4096, 128, False, {}),
    ("d64_s2048", 16, 32, 32, 2048, 2048, 64, False, {}),
    ("d64_s2048_causal", 16, 32, 32, 2048, 2048, 64, True, {}),
    ("ragged_s4000_d128", 4, 32, 32, 4000, 4000, 128, False, {}),  # its neighbour: d128_s4096
    ("ragged_causal_sq1000_sk3000_d64", 2, 8, 2, 1000, 3000, 64, True, {}),
    # the FA3 overlaps, one at a time (same shape as d128_s8192)
    ("d128_s8192_no_pingpong", 4, 32, 32, 8192, 8192, 128, False, {"pingpong": False}),
    ("d128_s8192_no_overlap", 4, 32, 32, 8192, 8192, 128, False, {"overlap": False}),
    ("d128_s8192_neither", 4, 32, 32, 8192, 8192, 128, False, {"pingpong": False, "overlap": False}),
    # head_dim 256: build()'s choice, then the other rings that fit 227 KiB
    ("d256_s4096", 4, 16, 16, 4096, 4096, 256, False, {}),
    ("d256_s4096_causal", 4, 16, 16, 4096, 4096, 256, True, {}),
    ("d256_s4096_bn32_s3", 4, 16, 16, 4096, 4096, 256, False, {"bn": 32, "stages": 3}),
    ("d256_s4096_bn64_s1", 4, 16, 16, 4096, 4096, 256, False, {"bn": 64, "stages": 1}),
    ("d256_s4096_bn48_no_pingpong", 4, 16, 16, 4096, 4096, 256, False, {"pingpong": False}),
    ("d256_s4096_causal_bn32_s3", 4, 16, 16, 4096, 4096, 256, True, {"bn": 32, "stages": 3}),
]
#: small cases run first, each in its own process with a timeout (a hang costs that process only)
SMOKE = [
    ("smoke_default", 1, 4, 2, 512, 512, 128, True, {}),
    ("smoke_no_pingpong", 1, 4, 2, 512, 512, 128, True, {"pingpong": False}),
    ("smoke_no_overlap", 1, 4, 2, 512, 512, 128, True, {"overlap": False}),
    ("smoke_d64_ragged", 1, 4, 4, 300, 700, 64, False, {}),
    ("smoke_d256_ragged", 1, 4, 2, 300, 700, 256, True, {}),
]
#: (batch, head) slices checked against the fp32 reference per case
CHECK_SLICES = 3


def _config(case, num_sms):
    from txlab.examples import hopper_attention as ha

    name, b, h, hk, sq, sk, d, causal, over = case
    # the configuration build() takes without one (the shipped tuned table, else the model); the
    # overlap cases switch one knob of the default
    base = ha.default_config(d, causal) if over else ha.tuned_config(b, h, hk, sq, sk, d, causal)
    from dataclasses import replace

    return replace(base, num_sms=min(base.num_sms, num_sms), **over)


def _compile(case, num_sms):
    """Worker: build one case (fills the txlab cache); returns (name, seconds, error or None)."""
    t = time.time()
    try:
        from txlab.examples import hopper_attention as ha

        name, b, h, hk, sq, sk, d, causal, _ = case
        ha.build(b, h, hk, sq, sk, d, causal, _config(case, num_sms))
        return case[0], time.time() - t, None
    except Exception as exc:  # noqa: BLE001
        return case[0], time.time() - t, f"{type(exc).__name__}: {exc}"[:500]


def _test_kernels():
    """``(shape, causal, config)`` of the kernels tests/test_hopper_attention.py's GPU tests build (read
    from their parametrize marks), so the pytest run after this script finds them compiled."""
    sys.path.insert(0, str(ROOT / "tests"))
    import test_hopper_attention as t

    from txlab.examples import hopper_attention as ha

    out = []
    for fn in (t.test_attention_on_gpu, t.test_tuned_variants_on_gpu, t.test_attention_variants_on_gpu):
        for mark in fn.pytestmark:
            if mark.name != "parametrize":
                continue
            for vals in mark.args[1]:
                if fn is t.test_attention_variants_on_gpu:
                    pp, ov = vals
                    out.append(((2, 8, 8, 1024, 1024, 128), True, ha.AttentionConfig(pingpong=pp, overlap=ov)))
                else:
                    shape, causal, *cfg = vals
                    out.append((shape, causal, cfg[0] if cfg else None))
    return out


def _compile_test(item, num_sms):
    from dataclasses import replace

    from txlab.examples import hopper_attention as ha

    shape, causal, cfg = item
    try:
        ha.build(*shape, causal, replace(cfg or ha.default_config(shape[5], causal), num_sms=num_sms))
        return None
    except Exception as exc:  # noqa: BLE001 - the test will report it
        return f"{type(exc).__name__}: {exc}"[:200]


def _compile_trace(num_sms):
    from dataclasses import replace

    from txlab.examples import hopper_attention as ha

    try:
        ha.build(
            *ha.TRACE_SHAPE, False, replace(ha.default_config(ha.TRACE_SHAPE[5], False), num_sms=num_sms), profile=True
        )
    except Exception:  # noqa: BLE001 - record_trace reports it
        pass


def reference_slices(torch, ha, q, k, v, causal, picks):
    """{(b, h): (O, LSE)} of the fp32 reference for a few (batch, head) slices."""
    g = q.shape[1] // k.shape[1]
    out = {}
    for b, h in picks:
        ro, rl = ha.reference(
            q[b : b + 1, h : h + 1], k[b : b + 1, h // g : h // g + 1], v[b : b + 1, h // g : h // g + 1], causal
        )
        out[(b, h)] = (ro[0, 0], rl[0, 0])
    return out


def compare(torch, o, lse, refs):
    """Max over the reference slices of (rel. error of O, max abs error of finite LSE); whole-tensor NaN
    counts; whether -inf LSE rows are exactly the rows that see no key."""
    errs, lerrs, inf_ok = [], [], True
    for (b, h), (ro, rl) in refs.items():
        got = o[b, h].float()
        errs.append((torch.linalg.vector_norm(got - ro) / torch.linalg.vector_norm(ro).clamp_min(1e-30)).item())
        gl = lse[b, h]
        fin = torch.isfinite(rl)
        inf_ok &= bool(torch.equal(torch.isneginf(gl), ~fin))
        lerrs.append((gl[fin] - rl[fin]).abs().max().item() if fin.any() else 0.0)
    return {
        "rel_error": max(errs),
        "lse_abs_error": max(lerrs),
        "nan_o": int(torch.isnan(o).sum().item()),
        "nan_lse": int(torch.isnan(lse).sum().item()),
        "masked_rows_ok": inf_ok,
        "slices": [list(p) for p in refs],
    }


def passes(r: dict) -> bool:
    """The issue's correctness bar for a :func:`compare` row."""
    return (
        r["rel_error"] <= 1e-2
        and r["lse_abs_error"] <= 1e-3
        and r["nan_o"] == 0
        and r["nan_lse"] == 0
        and r["masked_rows_ok"]
    )


def _check(torch, ha, q, k, v, o, lse, causal):
    """:func:`compare` against the reference on up to :data:`CHECK_SLICES` (batch, head) slices."""
    B, H = q.shape[:2]
    g = H // k.shape[1]
    picks = sorted({(0, 0), (B - 1, H - 1), (B // 2, min(H - 1, g + 1))})[:CHECK_SLICES]
    return compare(torch, o, lse, reference_slices(torch, ha, q, k, v, causal, picks))


def record_trace(torch, out: Path, sms: int) -> str:
    """Record the profiled kernel (``hopper_attention.record_example_trace``), write
    ``hopper_attention.trace.bin`` / ``.trace.json`` (txlab.timeline.saved's format) into ``out``."""
    import numpy as np

    from txlab.examples import hopper_attention as ha

    buf, names, meta = ha.record_example_trace("`python scripts/attention_h200.py --timeline DIR`")
    out.mkdir(parents=True, exist_ok=True)
    (out / "hopper_attention.trace.bin").write_bytes(np.ascontiguousarray(buf, dtype="<u8").tobytes())
    (out / "hopper_attention.trace.json").write_text(json.dumps({"event_names": names, **meta}, indent=1) + "\n")
    return f"timeline: {len(buf)} slots, rel_error={meta['rel_error']:.2e}"


def smoke_one(case) -> int:
    import torch

    from txlab.examples import hopper_attention as ha

    name, b, h, hk, sq, sk, d, causal, _ = case
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    exe = ha.build(b, h, hk, sq, sk, d, causal, _config(case, sms)).executable
    q, k, v, o, lse = ha.random_inputs(b, h, hk, sq, sk, d, seed=3)
    exe(q, k, v, o, lse)
    torch.cuda.synchronize()
    r = _check(torch, ha, q, k, v, o, lse, causal)
    print(
        f"rel_err {r['rel_error']:.2e} lse_err {r['lse_abs_error']:.2e} nan {r['nan_o']}/{r['nan_lse']} "
        f"masked_ok {r['masked_rows_ok']}"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "attention.json"))
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--deadline", type=float, default=200, help="seconds; cases past it are recorded as skipped")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 4))
    ap.add_argument("--smoke-one", default="", help=argparse.SUPPRESS)
    ap.add_argument("--timeline", default="", help="folder: also record the profiled kernel's trace there")
    ap.add_argument("--tests", action="store_true", help="also compile the kernels of the GPU tests (for pytest)")
    args = ap.parse_args()
    t0 = time.time()
    if args.smoke_one:
        return smoke_one(next(c for c in SMOKE if c[0] == args.smoke_one))
    cases = [c for c in CASES if not args.only or c[0] in args.only.split(",")]
    num_sms = int(os.environ.get("TXLAB_NUM_SMS", "132"))
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        trace = pool.submit(_compile_trace, num_sms) if args.timeline else None
        tests = _test_kernels() if args.tests else []
        test_builds = [pool.submit(_compile_test, item, num_sms) for item in tests]
        everything = SMOKE + cases
        built = {n: (s, e) for n, s, e in pool.map(_compile, everything, [num_sms] * len(everything))}
        test_errors = [f.result() for f in test_builds]
    if tests:
        print(f"compiled the {len(tests)} kernels of the GPU tests; failures: {[e for e in test_errors if e]}")
        if trace is not None:
            trace.result()
    print(f"compiled {len(SMOKE) + len(cases)} kernels in {time.time() - t0:.0f} s", flush=True)
    smoke = {}
    for case in SMOKE:
        try:
            r = subprocess.run(
                [sys.executable, __file__, "--smoke-one", case[0]], capture_output=True, text=True, timeout=30
            )
            smoke[case[0]] = (r.stdout.strip().splitlines() or ["(no output)"])[-1] + (
                "" if r.returncode == 0 else f" rc={r.returncode} {r.stderr.strip()[-300:]}"
            )
        except subprocess.TimeoutExpired:
            smoke[case[0]] = "HANG (killed after 25 s)"
        print(f"{case[0]:<22} {smoke[case[0]]}", flush=True)
    if "HANG" in smoke["smoke_default"]:
        print("the default configuration hangs: not timing anything")
        return 1
    hung = [(c[6], c[8]) for c in SMOKE if "HANG" in smoke[c[0]]]  # (head_dim, overrides)
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        print("no torch here: this script measures beside cuDNN on an H200")
        return 2
    if not torch.cuda.is_available():
        print("no GPU here: this script measures on an H200")
        return 2
    from tune_h200 import Timer, interleaved

    from txlab.examples import hopper_attention as ha

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    timer = Timer(torch)
    F = torch.nn.functional
    rows = []
    hdr = f"{'case':<34} {'txlab':>7} {'cuDNN':>7} {'flash':>7} {'ratio':>6} {'rel err':>8} {'lse err':>8}"
    lines = [hdr]
    print(hdr, flush=True)
    for case in cases:
        name, b, h, hk, sq, sk, d, causal, over = case
        row = {
            "case": name,
            "shape": dict(batch=b, heads=h, kv_heads=hk, seqlen_q=sq, seqlen_kv=sk, head_dim=d),
            "causal": causal,
            "compile_s": built[name][0],
        }
        if built[name][1]:
            row["status"] = f"compile failed: {built[name][1]}"
            rows.append(row)
            lines.append(f"{name:<34} {row['status'][:80]}")
            print(lines[-1], flush=True)
            continue
        if (d, over) in hung:
            row["status"] = "skipped: its configuration hung in the smoke run"
            rows.append(row)
            continue
        if time.time() - t0 > args.deadline:
            row["status"] = "skipped: deadline"
            rows.append(row)
            continue
        try:
            cfg = _config(case, num_sms if num_sms <= sms else sms)
            row["config"] = cfg.to_dict()
            exe = ha.build(b, h, hk, sq, sk, d, causal, cfg).executable
            q, k, v, o, lse = ha.random_inputs(b, h, hk, sq, sk, d, seed=7)
            exe(q, k, v, o, lse)
            torch.cuda.synchronize()
            row.update(_check(torch, ha, q, k, v, o, lse, causal))
            ok = passes(row)
            fns = {"txlab": lambda: exe(q, k, v, o, lse)}
            # torch's is_causal is top-left aligned: the same mask only when seqlen_q == seqlen_kv
            if sq == sk or not causal:
                kk, vv = k, v
                gqa = {}
                if hk != h:
                    gqa = {"enable_gqa": True}

                def sdpa(backend, kk=kk, vv=vv, gqa=gqa):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, **gqa)

                for key, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                    try:
                        sdpa(backend)
                        torch.cuda.synchronize()
                        fns[key] = lambda backend=backend: sdpa(backend)
                    except Exception as exc:  # noqa: BLE001 - a backend that refuses the shape
                        row[f"{key}_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            t = interleaved(timer, fns, rounds=args.rounds)
            fl = ha.flops(b, h, sq, sk, d, causal)  # the same count for txlab, cuDNN and flash: the same mask
            for key, val in t.items():
                row[f"{key}_ms"] = val["median_ms"]
                row[f"{key}_tflops"] = fl / (val["median_ms"] * 1e-3) / 1e12
                row[f"{key}_rounds_ms"] = val["rounds_ms"]
            if "cudnn_tflops" in row:
                row["ratio_cudnn"] = row["txlab_tflops"] / row["cudnn_tflops"]
            row["status"] = "ok" if ok else "wrong"
            del q, k, v, o, lse
            torch.cuda.empty_cache()
        except Exception as exc:  # noqa: BLE001 - one case's failure is a row
            row["status"] = f"failed: {type(exc).__name__}: {str(exc)[:300]}"
            row["trace"] = traceback.format_exc()[-2000:]
        rows.append(row)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"summary": {"partial": True}, "rows": rows}, indent=1))
        if "txlab_tflops" in row:
            lines.append(
                f"{name:<34} {row['txlab_tflops']:>7.1f} {row.get('cudnn_tflops', float('nan')):>7.1f} "
                f"{row.get('flash_tflops', float('nan')):>7.1f} {row.get('ratio_cudnn', float('nan')):>6.3f} "
                f"{row['rel_error']:>8.1e} {row['lse_abs_error']:>8.1e}{'' if row['status'] == 'ok' else '  WRONG'}"
            )
        else:
            lines.append(f"{name:<34} {row['status'][:100]}")
        print(lines[-1], flush=True)
    if args.timeline and time.time() - t0 < args.deadline + 15:
        try:
            lines.append(record_trace(torch, Path(args.timeline), sms))
        except Exception as exc:  # noqa: BLE001
            lines.append(f"timeline failed: {type(exc).__name__}: {str(exc)[:300]}")
        print(lines[-1], flush=True)
    ratios = [r["ratio_cudnn"] for r in rows if r.get("status") == "ok" and "ratio_cudnn" in r]
    by = {r["case"]: r for r in rows}
    rag, nb = by.get("ragged_s4000_d128", {}), by.get("d128_s4096", {})
    summary = {
        "ragged_time_over_neighbour": rag["txlab_ms"] / nb["txlab_ms"]
        if "txlab_ms" in rag and "txlab_ms" in nb
        else None,
        "cases": len(cases),
        "correct": sum(r.get("status") == "ok" for r in rows),
        "median_ratio_cudnn": statistics.median(ratios) if ratios else None,
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "elapsed_s": time.time() - t0,
        "smoke": smoke,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print("\n" + "\n".join(lines))
    print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
