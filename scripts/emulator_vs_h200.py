"""The CPU emulator against the H200, bit for bit: every kernel of the upstream corpus
(tests/upstream/, Apache TVM's own TIRx tests) and every H200-runnable API catalogue example runs
on the GPU and on the emulator with the same inputs; their outputs are compared bitwise (and, for
floats that differ, by their largest distance in ulps -- the measure for MUFU transcendentals).

    source .gpu/setup.sh && OUT=/tmp/out python3 scripts/emulator_vs_h200.py [--only SUBSTRING] [--workers N]

Writes ``$OUT/emulator_vs_h200.json`` (one record per kernel) and ``$OUT/emulator_vs_h200.md``
(the table; the lead copies both to benchmarks/results/ and the table to docs/gpu-runs.md) and prints
the table. Emulation runs in worker processes while the main process compiles and launches on the
GPU, so the whole run takes a few minutes on the 16-core H200 host.

Per kernel: ``bitwise`` (every output equal, bit for bit), ``ulp:N`` (floats within N ulps,
nothing else differs), ``differs`` (say where), ``not emulated`` (the NotEmulatedError), ``finding``
(an upstream bug the emulator reports; not run on the GPU, where it may hang), ``gpu only`` /
``emulator only`` (the other side failed: why), ``skipped`` (why).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.itemsize in (1, 2, 4, 8) else a.view(np.uint8)


def _ulps32(g, e) -> int:
    from upstream.corpus import ulps

    return ulps(g, e)


def compare_outputs(gpu: dict, emu: dict) -> tuple[str, str]:
    """(status, detail) of the emulator's outputs against the GPU's (argument index -> array)."""
    worst, details = 0, []
    for k in sorted(gpu):
        g, e = np.asarray(gpu[k]), np.asarray(emu[k])
        if g.shape != e.shape or g.dtype != e.dtype:
            return "differs", f"arg {k}: {g.dtype}{g.shape} vs {e.dtype}{e.shape}"
        bad = _bits(g) != _bits(e)
        if g.dtype.kind == "f" or str(g.dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            gf, ef = g.astype(np.float32), e.astype(np.float32)
            bad &= ~(np.isnan(gf) & np.isnan(ef))
            if bad.any():
                u = (
                    _ulps32(gf, ef)
                    if g.dtype.itemsize == 4
                    else int(np.abs(_bits(g).astype(np.int64) - _bits(e).astype(np.int64))[bad].max())
                )
                worst = max(worst, u)
                i = int(np.flatnonzero(bad)[0])
                details.append(
                    f"arg {k}: {int(bad.sum())}/{g.size} differ, first at {i}: gpu {g.ravel()[i]!r} "
                    f"emulator {e.ravel()[i]!r}"
                )
        elif bad.any():
            i = int(np.flatnonzero(bad)[0])
            return "differs", (
                f"arg {k}: {int(bad.sum())}/{g.size} differ, first at {i}: gpu {g.ravel()[i]!r} "
                f"emulator {e.ravel()[i]!r}"
            )
    if not details:
        return "bitwise", ""
    return f"ulp:{worst}", "; ".join(details)


# ---- the emulator side (worker processes) ----------------------------------------------------------
def _emulate_job(job):
    kind, key = job
    t0 = time.perf_counter()
    try:
        from txlab.emulator import emulate
        from txlab.errors import NotEmulatedError

        func, args, arch, outs = _load(kind, key)
        try:
            res = emulate(func, *args, arch=arch)
        except NotEmulatedError as exc:
            return key, {"status": "not emulated", "detail": str(exc), "seconds": time.perf_counter() - t0}
        return key, {
            "status": "ok",
            "outputs": {i: args[i] for i in outs},
            "findings": [str(f) for f in res.findings][:3],
            "seconds": time.perf_counter() - t0,
        }
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        return key, {"status": "error", "detail": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - t0}


def _load(kind, key):
    """(prim_func, fresh inputs, arch, indices of the outputs to compare)."""
    if kind == "corpus":
        from upstream import corpus

        c = {c.id: c for c in corpus.cases()}[key]
        args = corpus.fresh_inputs(c, 0)
        want = c.reference([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        outs = sorted(want) or [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        return c.build(), args, c.arch, outs
    from txlab.api import examples

    ex = examples()[key]
    args = ex.inputs()
    return ex.prim_func(), args, ex.arch, [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]


def _jobs(only):
    from upstream import corpus

    from txlab.api import examples

    jobs, skipped = [], {}
    for c in corpus.cases():
        if only and only not in c.id:
            continue
        if c.arch.startswith("sm_10"):  # Blackwell: an H200 cannot run it
            skipped[c.id] = ("corpus", c, f"{c.arch} kernel: needs a Blackwell GPU")
            continue
        if c.expect.startswith("finding:"):
            skipped[c.id] = ("corpus", c, "finding")
        elif c.gpu_differs:
            skipped[c.id] = ("corpus", c, "uncomparable")
        jobs.append(("corpus", c.id))
    for eid, ex in sorted(examples().items()):
        if only and only not in eid:
            continue
        if not ex.runnable:
            skipped[eid] = ("catalogue", None, f"not run: {ex.not_on_h200 or 'no check written'}")
            continue
        if ex.compile is not None:
            skipped[eid] = ("catalogue", None, "custom build (extra TVM pass / runner)")
            continue
        jobs.append(("catalogue", eid))
    return jobs, skipped


# ---- the GPU side (main process) -------------------------------------------------------------------
def _gpu(kind, key):
    from txlab.compiler import compile as compile_kernel
    from txlab.run import launch

    func, args, _arch, outs = _load(kind, key)
    compiled = compile_kernel(func, arch=None)  # this GPU's arch (sm_90a on the H200)
    launch(compiled, *args)
    return {i: args[i] for i in outs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="run the kernels whose id contains this")
    ap.add_argument("--workers", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)))
    ap.add_argument("--deadline", type=float, default=0, help="seconds: then stop launching and report what finished")
    ns = ap.parse_args(argv)
    out_dir = Path(os.environ.get("OUT", "/tmp/out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    late = lambda frac: ns.deadline and time.perf_counter() - t0 > frac * ns.deadline  # noqa: E731

    import concurrent.futures as cf
    import multiprocessing as mp

    from txlab.device import probe

    info = probe()
    jobs, skipped = _jobs(ns.only)
    ctx = mp.get_context("spawn")
    pool = cf.ProcessPoolExecutor(ns.workers, mp_context=ctx)
    futures = {pool.submit(_emulate_job, j): j for j in jobs}
    rows = {}
    for kind, key in jobs:
        row = {"id": key, "source": kind}
        if key in skipped and skipped[key][2] == "finding":
            row["gpu"] = "not run (upstream bug: it may hang on the GPU)"
        elif not info.available:
            row["gpu"] = f"no GPU: {info.reason}"
        elif late(0.85):
            row["gpu"] = "not run: out of the time given (--deadline)"
        else:
            tg = time.perf_counter()
            try:
                row["gpu_outputs"] = _gpu(kind, key)
                row["gpu"] = "ok"
            except Exception as exc:  # noqa: BLE001
                row["gpu"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            row["gpu_seconds"] = round(time.perf_counter() - tg, 3)
        print(f"gpu {key}: {row['gpu']} ({row.get('gpu_seconds', 0)} s)", flush=True)
        rows[key] = row
    left = max(1.0, ns.deadline - (time.perf_counter() - t0)) if ns.deadline else None
    done, pending = cf.wait(futures, timeout=left)
    for fut in done:
        key, emu = fut.result()
        rows[key]["emu"] = emu
        _settle(key, rows[key], skipped)
        r = rows[key]
        print(f"{r['status']:>14} {key}  {r['detail'][:160]}", flush=True)
    for fut in pending:
        key = futures[fut][1]
        rows[key].pop("gpu_outputs", None)
        rows[key].update(status="not finished", detail="the emulator did not finish in the time given (--deadline)")
    if pending:  # stop the workers still emulating (they would hold the run, and its output pipe)
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
    pool.shutdown(wait=not pending, cancel_futures=True)

    for key, (kind, _c, why) in skipped.items():
        if key not in rows:
            rows[key] = {"id": key, "source": kind, "status": "skipped", "detail": why}

    seconds = time.perf_counter() - t0
    counts: dict = {}
    for r in rows.values():
        s = r["status"].split(":")[0]
        counts[s] = counts.get(s, 0) + 1
    record = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "device": getattr(info, "name", None),
        "arch": getattr(info, "arch", None),
        "seconds": round(seconds, 1),
        "counts": counts,
        "kernels": list(rows.values()),
    }
    (out_dir / "emulator_vs_h200.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    md = _markdown(record)
    (out_dir / "emulator_vs_h200.md").write_text(md)
    print(md, flush=True)
    if pending:  # workers still emulating: leave without waiting for them
        os._exit(0)
    return 0


def _settle(key, row, skipped) -> None:
    """Compare one kernel's GPU and emulator outputs into ``row['status']`` / ``row['detail']``."""
    emu = row["emu"]
    gpu_out = row.pop("gpu_outputs", None)
    emu_out = emu.pop("outputs", None)
    row["emu_seconds"] = round(emu.get("seconds", 0), 3)
    if key in skipped and skipped[key][2] == "finding":
        row["status"] = "finding" if emu.get("findings") else "differs"
        row["detail"] = "; ".join(emu.get("findings") or []) or "the upstream bug was not reported"
    elif key in skipped and skipped[key][2] == "uncomparable" and gpu_out is not None and emu_out is not None:
        st, det = compare_outputs(gpu_out, emu_out)
        row["status"] = "bitwise" if st == "bitwise" else "not comparable"
        row["detail"] = skipped[key][1].gpu_differs + ("" if st == "bitwise" else f" ({det})")
    elif emu["status"] == "not emulated":
        row["status"], row["detail"] = "not emulated", emu["detail"]
    elif emu["status"] == "error":
        row["status"], row["detail"] = "emulator error" if gpu_out is not None else "error", emu["detail"]
    elif gpu_out is None:
        row["status"], row["detail"] = "emulator only", row["gpu"]
    else:
        row["status"], row["detail"] = compare_outputs(gpu_out, emu_out)
        if emu.get("findings"):
            row["detail"] = (row["detail"] + "; " if row["detail"] else "") + "findings: " + "; ".join(emu["findings"])
    row.pop("emu")


def _markdown(record) -> str:
    rows = record["kernels"]
    cmp = [r for r in rows if r["status"] == "bitwise" or r["status"].startswith("ulp:") or r["status"] == "differs"]
    bitwise = sum(r["status"] == "bitwise" for r in rows)
    lines = [
        "# The CPU emulator against the H200",
        "",
        f"`scripts/emulator_vs_h200.py` ({record['date']}, {record['device']}, {record['seconds']} s): "
        f"of {len(cmp)} kernels run on both, **{bitwise} bitwise**; "
        + ", ".join(f"{n} {k}" for k, n in sorted(record["counts"].items()))
        + ".",
        "",
        "| kernel | source | result | detail | GPU s | emulator s |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = str(r.get("detail", "")).replace("|", "/").replace("\n", " ")[:240]
        lines.append(
            f"| {r['id']} | {r['source']} | {r['status']} | {d} | {r.get('gpu_seconds', '')} | "
            f"{r.get('emu_seconds', '')} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
