"""On an H200: tune ``txlab.examples.hopper_attention`` over a representative set of shapes, beside torch
SDPA's cuDNN backend in the same process, and record the kernel's Nsight Compute profile.

    python scripts/attention_tune_h200.py [--out DIR] [--deadline 250] [--jobs 16]

1. Compile every candidate (``hopper_attention.tune_candidates`` per shape: block sizes, ring depth,
   ping-pong, scheduler, the LPT scheduler's L2 swizzle) in parallel worker processes.
2. Meanwhile, once its kernel is built: the default configuration at :data:`PROFILE_SHAPE` is checked
   against the fp32 reference and profiled under ncu with source counters (``txlab.profile``: stall
   samples per SASS instruction, mapped to the TVMScript lines); written as
   ``hopper_attention.profile.json`` (what ``txlab/data`` ships) with its top lines, the MUFU share and
   whether each top line is a line of ``attention_kernel``.
3. Per shape, in a child process (a hang costs that process only; the parent restarts it without the
   candidate that hung): every candidate is run once on NaN-poisoned outputs and checked against the
   fp32 reference on two (batch, head) slices (rel. error <= 1e-2, LSE <= 1e-3 abs, no NaN, ``-inf``
   LSE exactly where a row sees no key); the correct ones and cuDNN are then timed in interleaved
   rounds (median of ``--rep`` launches after an L2 flush, median over rounds).

Writes ``attention_tune.json`` (every row), ``hopper_attention.profile.json`` and ``attention_tune.log``
(the printed table) under ``--out`` (default ``$OUT/attn``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

#: (name, batch, heads, kv_heads, seqlen, head_dim, causal): the issue's shapes (B x H filling the GPU)
#: and neighbours the model interpolates between
SHAPES = [
    ("d128_s8192_causal", 4, 32, 32, 8192, 128, True),
    ("d128_s16384_causal", 4, 32, 32, 16384, 128, True),
    ("d128_s4096_causal", 4, 32, 32, 4096, 128, True),
    ("d128_s4096", 4, 32, 32, 4096, 128, False),
    ("d128_s8192", 4, 32, 32, 8192, 128, False),
    ("gqa_32q8kv_d128_s4096", 4, 32, 8, 4096, 128, False),
    ("d64_s2048", 16, 32, 32, 2048, 64, False),
    ("d64_s2048_causal", 16, 32, 32, 2048, 64, True),
    ("d128_s1024", 16, 32, 32, 1024, 128, False),
    ("d64_s8192_causal", 4, 32, 32, 8192, 64, True),
]
#: the profiled shape (non-causal, default configuration): 1024 query tiles, ~8 waves
PROFILE_SHAPE = (2, 32, 32, 4096, 4096, 128, False)
LINES: list[str] = []


def say(*parts):
    line = " ".join(str(p) for p in parts)
    print(line, flush=True)
    LINES.append(line)


def plan():
    """[(shape name, shape tuple, [config dicts])]."""
    from txlab.examples import hopper_attention as ha

    out = []
    for name, b, h, hk, s, d, causal in SHAPES:
        out.append((name, (b, h, hk, s, s, d, causal), ha.tune_candidates(b, h, hk, s, s, d, causal)))
    return out


def key_of(cfg: dict) -> str:
    from txlab.examples import hopper_attention as ha

    return ha.AttentionConfig(**cfg).name


# ---- compile (worker processes) -------------------------------------------------------------------
def _compile(shape, cfg):
    t = time.time()
    try:
        from txlab.examples import hopper_attention as ha

        c = ha.build(*shape, ha.AttentionConfig(**cfg))
        r = c.resources[c.kernels[0]]
        return time.time() - t, None, {"registers": r.get("registers"), "spill": r.get("spill_stores", 0)}
    except Exception as exc:  # noqa: BLE001 - a failed candidate is a row
        return time.time() - t, f"{type(exc).__name__}: {exc}"[:400], {}


# ---- the profile (a thread of the parent: it mostly waits on ncu) ---------------------------------
def profile_phase(out: Path, result: dict) -> None:
    t0 = time.time()
    try:
        import inspect

        import torch

        import txlab
        from txlab.examples import hopper_attention as ha

        b, h, hk, s, _, d, causal = PROFILE_SHAPE
        cfg = ha.default_config(d, causal)
        c = ha.build(b, h, hk, s, s, d, causal, cfg)
        q, k, v, o, lse = ha.random_inputs(b, h, hk, s, s, d, seed=11)
        c.executable(q, k, v, o, lse)
        torch.cuda.synchronize()
        ro, rl = ha.reference(q[:1, :1], k[:1, :1], v[:1, :1], causal)
        rel = (torch.linalg.vector_norm(o[:1, :1].float() - ro) / torch.linalg.vector_norm(ro)).item()
        result["rel_error"] = rel
        result["lse_abs_error"] = (lse[:1, :1] - rl).abs().max().item()
        del ro, rl
        prof = txlab.profile(c, q, k, v, o, lse, timeout_s=170)
        prof.save(out / "hopper_attention.profile.json")
        own = set(range(*_kernel_lines(inspect, ha)))
        total = prof.total_samples or 1
        mufu = sum(i.get("samples", 0) for i in prof.instructions if (i.get("sass") or "").split()[:1] == ["MUFU.EX2"])
        mufu_any = sum(i.get("samples", 0) for i in prof.instructions if "MUFU" in (i.get("sass") or ""))
        result.update(
            {
                "shape": list(PROFILE_SHAPE),
                "config": cfg.to_dict(),
                "duration_ms": (prof.duration_ns or 0) / 1e6,
                "tflops_under_ncu": ha.flops(b, h, s, s, d, causal) / ((prof.duration_ns or 1) * 1e-9) / 1e12,
                "samples": prof.total_samples,
                "attributed_share": prof.attributed_share,
                "line_kind": prof.line_kind,
                "mufu_ex2_sample_share": mufu / total,
                "mufu_sample_share": mufu_any / total,
                "stalls": prof.stalls,
                "kernel_lines": [min(own), max(own)],
                "top_lines": [
                    {
                        "line": r["line"],
                        "text": r["text"],
                        "share": r["share"],
                        "top_stalls": r["top_stalls"],
                        "own_line": r["line"] in own,
                    }
                    for r in prof.hot_lines(15)
                ],
                "wall_s": time.time() - t0,
            }
        )
        del q, k, v, o, lse
        torch.cuda.empty_cache()
    except Exception as exc:  # noqa: BLE001 - the sweep goes on without it
        result["error"] = f"{type(exc).__name__}: {exc}"[:600]
        result["trace"] = traceback.format_exc()[-2500:]
        result["wall_s"] = time.time() - t0


def _kernel_lines(inspect, ha):
    lines, first = inspect.getsourcelines(ha.attention_kernel)
    return first, first + len(lines)


# ---- measuring (the child) ------------------------------------------------------------------------
def _launch_or_exit(torch, fn, timeout_s=10.0):
    """Run ``fn`` once and wait for the GPU; a kernel still running after ``timeout_s`` is a hang: exit
    (the parent marks the candidate and restarts without it)."""
    ev = torch.cuda.Event()
    fn()
    ev.record()
    t = time.time()
    while not ev.query():
        if time.time() - t > timeout_s:
            os._exit(3)
        time.sleep(0.002)


def measure_child(plan_path: str, results_path: str, deadline: float, rounds: int, rep: int) -> int:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from attention_h200 import compare, passes, reference_slices
    from tune_h200 import Timer, interleaved

    from txlab.examples import hopper_attention as ha

    job = json.loads(Path(plan_path).read_text())
    done, hung = set(), set()
    if Path(results_path).exists():
        for line in Path(results_path).read_text().splitlines():
            r = json.loads(line)
            if r["event"] in ("timed", "skipped"):
                done.add(r["shape"])
            elif r["event"] == "hang":
                hung.add((r["shape"], r["config"]))
    res = open(results_path, "a")  # noqa: SIM115 - appended line by line, flushed each time

    def emit(**row):
        res.write(json.dumps(row) + "\n")
        res.flush()

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    F = torch.nn.functional
    for name, shape, cfgs in job["shapes"]:
        if name in done:
            continue
        if time.time() > deadline:
            emit(event="skipped", shape=name, why="deadline")
            continue
        b, h, hk, sq, sk, d, causal = shape
        cfgs = [c for c in cfgs if (name, c["name"]) not in hung]
        # every build on one thread of its own, ahead of the GPU work (parse + lowering are CPU)
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(1)

        def prebuild(cfg, shape=shape):
            comp = ha.build(*shape, ha.AttentionConfig(**cfg))
            comp.lowered  # noqa: B018 - lowered here, off the GPU's critical path
            return comp

        futs = {c["name"]: pool.submit(prebuild, c["config"]) for c in cfgs}
        q, k, v, o, lse = ha.random_inputs(b, h, hk, sq, sk, d, seed=7)
        refs = reference_slices(torch, ha, q, k, v, causal, sorted({(0, 0), (b - 1, h - 1)}))
        fns = {}
        gqa = {"enable_gqa": True} if hk != h else {}

        def sdpa():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)

        try:
            sdpa()
            torch.cuda.synchronize()
            fns["cudnn"] = sdpa
        except Exception as exc:  # noqa: BLE001
            emit(event="cudnn_error", shape=name, error=f"{type(exc).__name__}: {str(exc)[:200]}")
        for c in cfgs:
            key = c["name"]
            emit(event="start", shape=name, config=key)
            try:
                comp = futs[key].result()
                exe = comp.executable
            except Exception as exc:  # noqa: BLE001
                emit(event="checked", shape=name, config=key, status=f"build failed: {type(exc).__name__}: {exc}"[:300])
                continue
            o.fill_(float("nan"))
            lse.fill_(float("nan"))
            _launch_or_exit(torch, lambda exe=exe: exe(q, k, v, o, lse))
            r = compare(torch, o, lse, refs)
            ok = passes(r)
            emit(event="checked", shape=name, config=key, status="ok" if ok else "wrong", **r)
            if ok:
                fns[key] = lambda exe=exe: exe(q, k, v, o, lse)
        pool.shutdown()
        if time.time() > deadline + 20:
            emit(event="skipped", shape=name, why="deadline (checked, not timed)")
            continue
        big = ha.flops(b, h, sq, sk, d, causal) > 4e15
        timer = Timer(torch, warmup=2 if big else 3, rep=max(5, rep // 2) if big else rep)
        t = interleaved(timer, fns, rounds=rounds)
        emit(event="timed", shape=name, sms=sms, times={k2: v2 for k2, v2 in t.items()},
             flops=ha.flops(b, h, sq, sk, d, causal))  # fmt: skip
        del q, k, v, o, lse, refs
        torch.cuda.empty_cache()
    res.close()
    return 0


def run_children(plan_path, results_path, deadline, rounds, rep, stall_s=75.0) -> list:
    """Run the measuring child until every shape is timed or skipped; a child that exits with 3 or
    stops writing for ``stall_s`` hung on the candidate it started last: recorded, and a new child
    goes on without it."""
    notes = []
    for _attempt in range(6):
        cmd = [sys.executable, __file__, "--measure", plan_path, results_path, str(deadline), str(rounds), str(rep)]
        p = subprocess.Popen(cmd)
        last, size = time.time(), -1
        while p.poll() is None:
            time.sleep(1)
            sz = os.path.getsize(results_path) if os.path.exists(results_path) else 0
            if sz != size:
                size, last = sz, time.time()
            elif time.time() - last > stall_s:
                p.kill()
                p.wait()
                break
        rows = (
            [json.loads(x) for x in Path(results_path).read_text().splitlines()] if os.path.exists(results_path) else []
        )
        if p.returncode == 0:
            break
        started = [r for r in rows if r["event"] == "start"]
        finished = {(r["shape"], r["config"]) for r in rows if r["event"] in ("checked", "hang")}
        if started and (started[-1]["shape"], started[-1]["config"]) not in finished:
            s = started[-1]
            with open(results_path, "a") as f:
                f.write(json.dumps({"event": "hang", "shape": s["shape"], "config": s["config"]}) + "\n")
            notes.append(f"hang: {s['shape']} {s['config']} (child rc {p.returncode})")
            say(f"  HANG {s['shape']} {s['config']}: restarting the measuring process without it")
        else:
            notes.append(f"child exited rc {p.returncode} outside a launch")
            say(f"  measuring process exited rc {p.returncode}; restarting")
    return notes


# ---- the parent ------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp/out"), "attn"))
    ap.add_argument("--deadline", type=float, default=250.0, help="seconds: shapes starting after it are skipped")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 4))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rep", type=int, default=12)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--measure", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        p, r, dl, rounds, rep = args.measure
        return measure_child(p, r, float(dl), int(rounds), int(rep))
    t0 = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    from txlab.examples import hopper_attention as ha

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    jobs = plan()
    for _, _, cfgs in jobs:
        for c in cfgs:
            c["num_sms"] = min(c.get("num_sms", sms), sms)
    n = sum(len(c) for _, _, c in jobs)
    say(f"{torch.cuda.get_device_name(0)}, {sms} SMs, torch {torch.__version__}; {len(jobs)} shapes, {n} candidates")
    prof_result: dict = {}
    prof_thread = None
    compiled = {}
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        b, h, hk, s, _, d, causal = PROFILE_SHAPE
        pf = pool.submit(_compile, PROFILE_SHAPE, ha.default_config(d, causal).to_dict())
        futs = {(name, key_of(c)): pool.submit(_compile, shape, c) for name, shape, cfgs in jobs for c in cfgs}
        if not args.no_profile:
            pf.result()
            say(f"profile kernel built at {time.time() - t0:.0f} s; profiling under ncu while the rest compile")
            prof_thread = threading.Thread(target=profile_phase, args=(out, prof_result), daemon=True)
            prof_thread.start()
        for k, f in futs.items():
            compiled[k] = f.result()
    bad = {k: v[1] for k, v in compiled.items() if v[1]}
    say(f"compiled {n} candidates in {time.time() - t0:.0f} s; {len(bad)} failed to build")
    for k, e in list(bad.items())[:12]:
        say(f"  {k[0]} {k[1]}: {e[:160]}")
    if prof_thread is not None:
        prof_thread.join(timeout=max(10.0, 150 - (time.time() - t0)))
        _say_profile(prof_result)
    tmp = Path(tempfile.mkdtemp(prefix="attn_tune_"))
    plan_doc = {
        "shapes": [
            [name, list(shape), [{"name": key_of(c), "config": c} for c in cfgs if (name, key_of(c)) not in bad]]
            for name, shape, cfgs in jobs
        ]
    }
    (tmp / "plan.json").write_text(json.dumps(plan_doc))
    results_path = str(tmp / "results.jsonl")
    notes = run_children(str(tmp / "plan.json"), results_path, t0 + args.deadline, args.rounds, args.rep)
    rows = [json.loads(x) for x in Path(results_path).read_text().splitlines()] if os.path.exists(results_path) else []
    raw = {"raw_rows": rows, "compiled": [[k[0], k[1], *v] for k, v in compiled.items()], "notes": notes,
           "profile": {k: v for k, v in prof_result.items() if k != "trace"}}  # fmt: skip
    (out / "attention_tune.json").write_text(json.dumps(raw, indent=1) + "\n")  # kept if assembling fails
    try:
        doc = assemble(jobs, compiled, rows, notes, prof_result, torch, sms, time.time() - t0)
        doc["raw_rows"] = rows
        (out / "attention_tune.json").write_text(json.dumps(doc, indent=1) + "\n")
        print_table(doc)
    except Exception:  # noqa: BLE001
        say(traceback.format_exc()[-2000:])
    (out / "attention_tune.log").write_text("\n".join(LINES) + "\n")
    return 0


def _say_profile(r: dict) -> None:
    if "error" in r:
        say(f"profile FAILED: {r['error']}")
        say(r.get("trace", "")[-1200:])
        return
    if not r:
        say("profile: did not finish in time")
        return
    say(
        f"profile {r['shape']}: rel_err {r['rel_error']:.1e}, {r['duration_ms']:.3f} ms under ncu, "
        f"{r['samples']} samples, {r['attributed_share']:.1%} attributed, lines {r['line_kind']}, "
        f"MUFU.EX2 {r['mufu_ex2_sample_share']:.1%} of samples, {r['wall_s']:.0f} s"
    )
    for x in r["top_lines"][:10]:
        st = ", ".join(f"{a} {b}" for a, b in x["top_stalls"][:3])
        say(f"  {'own' if x['own_line'] else 'LIB'} line {x['line']:>4} {x['share']:6.1%}  {x['text'][:70]:<70} {st}")


def assemble(jobs, compiled, rows, notes, prof, torch, sms, elapsed):
    checked = {(r["shape"], r["config"]): r for r in rows if r["event"] == "checked"}
    timed = {r["shape"]: r for r in rows if r["event"] == "timed"}
    hung = {(r["shape"], r["config"]) for r in rows if r["event"] == "hang"}
    skipped = {r["shape"]: r.get("why") for r in rows if r["event"] == "skipped"}
    shapes = []
    for name, shape, cfgs in jobs:
        b, h, hk, sq, sk, d, causal = shape
        t = timed.get(name)
        cud = t["times"].get("cudnn") if t else None
        cands = []
        for c in cfgs:
            key = key_of(c)
            cs, err, res = compiled[(name, key)]
            row = {"config": c, "name": key, "compile_s": cs, **res}
            if err:
                row["status"] = f"compile failed: {err}"
            elif (name, key) in hung:
                row["status"] = "hang"
            elif (name, key) in checked:
                ck = checked[(name, key)]
                row.update({k: v for k, v in ck.items() if k not in ("event", "shape", "config")})
                if t and key in t["times"]:
                    ms = t["times"][key]["median_ms"]
                    row["time_ms"] = ms
                    row["rounds_ms"] = t["times"][key]["rounds_ms"]
                    row["tflops"] = t["flops"] / (ms * 1e-3) / 1e12
                    if cud:
                        row["ratio_cudnn"] = cud["median_ms"] / ms
            else:
                row["status"] = f"skipped: {skipped.get(name) or 'not measured'}"
            cands.append(row)
        ok = [c for c in cands if c.get("status") == "ok" and "time_ms" in c]
        best = min(ok, key=lambda c: c["time_ms"]) if ok else None
        default = next((c for c in cands if c["name"] == key_of(_default(d, causal, sms))), None)
        shapes.append(
            {
                "name": name,
                "shape": dict(batch=b, heads=h, kv_heads=hk, seqlen_q=sq, seqlen_kv=sk, head_dim=d, causal=causal),
                "cudnn_ms": cud["median_ms"] if cud else None,
                "cudnn_rounds_ms": cud["rounds_ms"] if cud else None,
                "cudnn_tflops": t["flops"] / (cud["median_ms"] * 1e-3) / 1e12 if cud else None,
                "best": best and best["name"],
                "best_ratio_cudnn": best and best.get("ratio_cudnn"),
                "default_ratio_cudnn": default and default.get("ratio_cudnn"),
                "candidates": cands,
            }
        )
    return {
        "format": "txlab-attention-sweep/1",
        "device": torch.cuda.get_device_name(0),
        "sms": sms,
        "torch": torch.__version__,
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "elapsed_s": elapsed,
        "notes": notes,
        "profile": {k: v for k, v in prof.items() if k != "trace"},
        "shapes": shapes,
    }


def _default(d, causal, sms):
    from dataclasses import replace

    from txlab.examples import hopper_attention as ha

    return replace(ha.default_config(d, causal), num_sms=sms).to_dict()


def print_table(doc):
    say("")
    say(f"{'shape':<24} {'cuDNN':>6} {'default':>8} {'best':>6}  best config")
    for s in doc["shapes"]:
        c = s["cudnn_tflops"]
        say(
            f"{s['name']:<24} {c or float('nan'):>6.0f} {s['default_ratio_cudnn'] or float('nan'):>8.3f} "
            f"{s['best_ratio_cudnn'] or float('nan'):>6.3f}  {s['best']}"
        )
        for r in sorted(s["candidates"], key=lambda r: -(r.get("ratio_cudnn") or 0))[:4]:
            if r.get("ratio_cudnn"):
                say(f"    {r['name']:<44} {r['tflops']:6.0f} TFLOP/s  {r['ratio_cudnn']:.3f}  err {r['rel_error']:.1e}")
        wrong = [r["name"] + ":" + r["status"][:40] for r in s["candidates"] if r.get("status") not in ("ok", None)]
        if wrong:
            say(f"    not ok: {'; '.join(wrong)[:300]}")
    say(f"elapsed {doc['elapsed_s']:.0f} s; notes {doc['notes']}")


if __name__ == "__main__":
    sys.exit(main())
