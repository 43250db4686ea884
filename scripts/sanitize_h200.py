#!/usr/bin/env python
"""Record compute-sanitizer reports for notebook 10 and check every planted bug is found at its line.

    OUT=/tmp/out python scripts/sanitize_h200.py            # on a GPU host (an H200 here)

For each planted-bug kernel of ``txlab.examples.bugs`` and its fixed twin it runs all four tools
(memcheck, racecheck, synccheck, initcheck) through ``txlab.sanitize``; it also sanitizes the
correct persistent TMA pipeline (``bugs.kernel("over_arrival", fixed=True)``), checks the two
pipeline bugs with ``pipelines.from_kernel`` (they hang on a GPU, so they are not launched), and
measures the transposes' shared-memory bank conflicts with Nsight Compute next to
``PoolLayout.bank_conflicts()``. Writes under ``$OUT`` (3 files):

* ``sanitizer_reports.json`` -- every report (a bundle; copy it to ``txlab/data/``);
* ``summary.json`` -- the table below, bank-conflict comparison, tool versions, timings;
* ``summary.txt`` -- the printed table.

Prints one row per (kernel, tool): the expected finding and its line, and whether it was found
there (``found``), or for a fixed twin whether the tool was clean (``clean``). Exit code 0 when
every row passes, 1 otherwise.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = Path(os.environ.get("OUT") or "sanitize-out")
TIMEOUT_S = float(os.environ.get("TXLAB_SANITIZE_TIMEOUT", "90"))
NCU_METRICS = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
]


def _compile(fn):
    import txlab

    return txlab.compile(fn, progress=lambda s: None)


def _found(rep, tool, kind, line):
    hits = [f for f in rep.findings if f.tool == tool and f.kind == kind]
    at = [f for f in hits if line in (f.lineno, (f.other or {}).get("lineno"))]
    return hits, at


def sanitizer_rows(reports, rows):
    import txlab
    from txlab import sanitizer
    from txlab.errors import KernelFault
    from txlab.examples import bugs

    cases = [(n, False) for n in bugs.SANITIZER_BUGS] + [(n, True) for n in bugs.SANITIZER_BUGS]
    cases.append(("tma_pipeline", True))
    for name, fixed in cases:
        key = name if name == "tma_pipeline" else (f"{name}_fixed" if fixed else name)
        fn = bugs.kernel("over_arrival", fixed=True) if name == "tma_pipeline" else bugs.kernel(name, fixed)
        args = bugs.inputs("over_arrival" if name == "tma_pipeline" else name)
        t0 = time.perf_counter()
        try:
            c = _compile(fn)
            opts = bugs.sanitize_options(name) if name != "tma_pipeline" else {}
            rep = txlab.sanitize(c, *args, timeout_s=TIMEOUT_S, **opts)
        except KernelFault as exc:
            for tool in sanitizer.TOOLS:
                rows.append(
                    {
                        "kernel": key,
                        "tool": tool,
                        "expected": "-",
                        "line": None,
                        "ok": False,
                        "result": f"KernelFault {exc.kind}: {str(exc)[:160]}",
                    }
                )
            continue
        except Exception as exc:  # noqa: BLE001 - record and go on with the next kernel
            traceback.print_exc()
            for tool in sanitizer.TOOLS:
                rows.append(
                    {
                        "kernel": key,
                        "tool": tool,
                        "expected": "-",
                        "line": None,
                        "ok": False,
                        "result": f"{type(exc).__name__}: {str(exc)[:160]}",
                    }
                )
            continue
        reports[key] = rep
        secs = time.perf_counter() - t0
        for tool in sanitizer.TOOLS:
            run = rep.runs.get(tool, {})
            fs = rep.by_tool(tool)
            found_txt = "; ".join(
                f"{f.kind}{'/' + f.hazard if f.hazard else ''} line {f.lineno} "
                f"(CUDA {f.cuda_line}, SASS {f.sass_offset:#x})"
                if f.sass_offset is not None
                else f"{f.kind} line {f.lineno}"
                for f in fs[:3]
            )
            status = run.get("status")
            if not fixed and bugs.EXPECTED[name][0] == tool:
                _, kind = bugs.EXPECTED[name]
                line = bugs.bug_line(name)
                hits, at = _found(rep, tool, kind, line)
                ok = bool(at)
                rows.append(
                    {
                        "kernel": key,
                        "tool": tool,
                        "expected": kind,
                        "line": line,
                        "ok": ok,
                        "result": ("found" if ok else "MISSING" if not hits else "WRONG LINE")
                        + f" [{status}] {found_txt}",
                        "seconds": round(secs, 1),
                    }
                )
            else:
                ok = not fs and status == "ok"
                expected = "no finding" if fixed else "(other tool's bug)"
                if not fixed:  # a planted bug may legitimately show up in another tool too
                    ok = status in ("ok", "fault")
                rows.append(
                    {
                        "kernel": key,
                        "tool": tool,
                        "expected": expected,
                        "line": None,
                        "ok": ok,
                        "result": ("clean" if not fs else f"{len(fs)} finding(s): {found_txt}")
                        + f" [{status}{': ' + run.get('message', '')[:120] if run.get('message') else ''}]",
                        "seconds": round(secs, 1),
                    }
                )


def pipeline_rows(rows):
    from txlab import pipelines as P
    from txlab.examples import bugs

    for name in bugs.PIPELINE_BUGS:
        spec = P.from_kernel(bugs.kernel(name))
        t = spec.simulate(32)
        line = bugs.bug_line(name)
        at = [p for p in t.problems if p.kind == name and p.lineno == line]
        rows.append(
            {
                "kernel": name,
                "tool": "pipelines",
                "expected": name,
                "line": line,
                "ok": bool(at),
                "result": ("found" if at else "MISSING") + f" {[(p.kind, p.lineno) for p in t.problems]}",
            }
        )
    t = P.from_kernel(bugs.kernel("over_arrival", fixed=True)).simulate(32)
    rows.append(
        {
            "kernel": "pipeline_fixed",
            "tool": "pipelines",
            "expected": "no finding",
            "line": None,
            "ok": t.ok,
            "result": "clean" if t.ok else str([p.kind for p in t.problems]),
        }
    )


def _ncu(job: Path):
    from txlab import toolchain

    ncu = toolchain.find_tool("ncu") or (
        "/usr/local/cuda/bin/ncu" if Path("/usr/local/cuda/bin/ncu").exists() else None
    )
    if ncu is None:
        return None, "ncu not found"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [
        ncu,
        "--csv",
        "--page",
        "raw",
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--metrics",
        ",".join(NCU_METRICS),
        sys.executable,
        "-m",
        "txlab.sanitize_runner",
        str(job),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    if not lines:
        return None, (p.stdout + p.stderr)[-600:]
    rdr = list(csv.reader(io.StringIO("\n".join(lines))))
    head, out = rdr[0], {}
    for row in rdr[1:]:
        rec = dict(zip(head, row))
        for m in NCU_METRICS:
            if m in rec:
                try:
                    out[m] = float(rec[m].replace(",", ""))
                except ValueError:
                    pass
        if "Metric Name" in rec and rec["Metric Name"] in NCU_METRICS:  # long format
            try:
                out[rec["Metric Name"]] = float(rec["Metric Value"].replace(",", ""))
            except ValueError:
                pass
    return out, None


def bank_rows(rows, bank):
    import txlab
    from txlab import sanitizer
    from txlab.examples.transpose import VARIANTS, transpose_kernel

    for v in VARIANTS:
        c = _compile(transpose_kernel(1024, v))
        static = txlab.pools.layout(c).bank_conflicts()
        tot = static.totals()
        entry = {"variant": v, "static": {"rows": [r.to_dict() for r in static], "totals": tot}}
        try:
            with tempfile.TemporaryDirectory() as d:
                import numpy as np

                job = sanitizer.write_job(
                    c, [np.ones((1024, 1024), "float32"), np.zeros((1024, 1024), "float32")], Path(d)
                )
                measured, err = _ncu(job)
        except Exception as exc:  # noqa: BLE001
            measured, err = None, f"{type(exc).__name__}: {exc}"
        entry["ncu"] = measured
        entry["ncu_error"] = err
        bank[v] = entry
        ld = tot["load"]
        ok = None
        res = f"static: load wavefronts {ld['grid_wavefronts']}, conflicts {ld['grid_conflicts']}"
        if measured:
            mw = measured.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
            mc = measured.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
            res += (
                f" | ncu: wavefronts {mw:.0f}, conflicts {mc:.0f}"
                if mw is not None and mc is not None
                else f" | ncu: {measured}"
            )
            ok = mw is not None and abs(mw - ld["grid_wavefronts"]) <= 0.02 * max(1, ld["grid_wavefronts"])
        else:
            res += f" | ncu: {err}"
        ways = max((r.ways for r in static if r.access == "load"), default=None)
        rows.append(
            {
                "kernel": f"transpose_{v}",
                "tool": "banks+ncu",
                "expected": f"{ways}-way load",
                "line": None,
                "ok": bool(ok) if ok is not None else True,
                "result": res,
            }
        )


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    from txlab import device, sanitizer

    info = device.probe()
    exe = sanitizer.find_sanitizer()
    meta = {
        "device": info.name,
        "arch": info.arch,
        "driver": info.driver_version,
        "sanitizer": exe,
        "sanitizer_version": sanitizer.sanitizer_version(exe) if exe else None,
        "python": sys.version.split()[0],
        "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    print(
        f"device: {info.name} ({info.arch}), driver {info.driver_version}; compute-sanitizer {exe} "
        f"({meta['sanitizer_version']})",
        flush=True,
    )
    reports, rows, bank = {}, [], {}
    for step in (lambda: sanitizer_rows(reports, rows), lambda: pipeline_rows(rows), lambda: bank_rows(rows, bank)):
        try:
            step()
        except Exception as exc:  # noqa: BLE001
            traceback.print_exc()
            rows.append(
                {
                    "kernel": "?",
                    "tool": "?",
                    "expected": "-",
                    "line": None,
                    "ok": False,
                    "result": f"{type(exc).__name__}: {exc}"[:300],
                }
            )
    if reports:
        sanitizer.save_bundle(reports, OUT / "sanitizer_reports.json", **meta)
    width = max(len(r["kernel"]) for r in rows) if rows else 10
    lines = [f"{'kernel':<{width}}  {'tool':<10} {'expected':<22} {'line':>5}  ok   result"]
    for r in rows:
        lines.append(
            f"{r['kernel']:<{width}}  {r['tool']:<10} {r['expected']:<22} "
            f"{r['line'] if r['line'] is not None else '':>5}  {'yes' if r['ok'] else 'NO ':<4} {r['result']}"
        )
    passed = sum(r["ok"] for r in rows)
    lines.append(
        f"{passed}/{len(rows)} rows pass; {len(reports)} reports in sanitizer_reports.json; "
        f"{time.perf_counter() - t_all:.0f} s"
    )
    text = "\n".join(lines)
    print(text, flush=True)
    (OUT / "summary.txt").write_text(text + "\n")
    (OUT / "summary.json").write_text(
        json.dumps(
            {"meta": meta, "rows": rows, "bank_conflicts": bank, "seconds": time.perf_counter() - t_all},
            indent=1,
            default=str,
        )
    )
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
