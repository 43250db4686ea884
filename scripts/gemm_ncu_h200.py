"""On an H200: Nsight Compute beside cuBLAS, for the GEMM shapes where the Hopper GEMM trails it.

    python scripts/gemm_ncu_h200.py [--cases "MxNxK:CONFIG,CONFIG;MxNxK:..."] [--out DIR] [--set full]

For each case, our kernel with each named configuration (``model`` for ``build()``'s own choice; ``PREFIX:CONFIG``
built as before a change, ``hopper_gemm.BEFORE``) and
``torch.matmul`` (cuBLAS) are launched once inside an NVTX range after a warm-up outside it; ``ncu``
profiles only what the range holds, so the report has exactly those kernels. It writes ``DIR/gemm_ncu.csv``
(``ncu --page details --csv``: every section's figures per kernel) and ``DIR/gemm_ncu.json`` (per
kernel: name, duration, the throughputs and counts that tell where the time goes, cuBLAS's kernel
name, which says its tile, cluster and split-K or stream-K choice), and prints a table.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CASES = (
    "1000x3000x5000:128x192x64_s4_c2_tma_cl2x1,128x192x64_s4_c2_tma;"
    "1000x3000x5056:128x192x64_s4_c2_tma;"
    "256x256x65536:128x128x64_s6_c2_cl1x2_sk32p;"
    "768x1024x16384:128x256x64_s4_c2_sk5p"
)
#: the figures the table shows, by ncu's "Metric Name" in the details page
SHOWN = {
    "Duration": "us",
    "Compute (SM) Throughput": "sm%",
    "Memory Throughput": "mem%",
    "DRAM Throughput": "dram%",
    "L2 Cache Throughput": "l2%",
    "L1/TEX Cache Throughput": "l1%",
    "L2 Hit Rate": "l2hit%",
    "Registers Per Thread": "regs",
    "Grid Size": "grid",
    "Cluster Size": "cluster",
    "Achieved Occupancy": "occ%",
}


def parse_cases(text: str) -> list:
    cases = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        shape, _, configs = part.partition(":")
        m, n, k = (int(v) for v in shape.split("x"))
        cases.append(((m, n, k), [c for c in configs.split(",") if c] or ["model"]))
    return cases


#: kernels of torch's own (input generation) that a run without the NVTX filter also profiles
NOT_GEMM = ("elementwise", "distribution", "fill", "copy", "randn")


def child(cases, warm: bool = True) -> None:
    """Launch every case once warm (unless ``warm`` is false), then once more inside the NVTX range
    ``measure``."""
    import torch

    import txlab
    from txlab.examples import hopper_gemm as hg

    launches = []
    for (m, n, k), configs in cases:
        g = torch.Generator(device="cuda").manual_seed(7)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        for config in configs:
            prefix = config[:4] if config[:4] in hg.BEFORE else ""  # PREFIX:CONFIG, built as before a change
            cfg = hg.explain(m, n, k).winner if config == "model" else hg.parse_config(config[len(prefix) :])
            with hg.built_as_before(prefix) if prefix else contextlib.nullcontext():
                exe = txlab.compile(hg.gemm_kernel(m, n, k, cfg), arch="sm_90a").executable
            args = hg.args_for(a, b, c, cfg)
            launches.append((f"{m}x{n}x{k} {prefix}{cfg.name}", lambda exe=exe, args=args: exe(*args)))
        launches.append((f"{m}x{n}x{k} cuBLAS", lambda a=a, b=b: torch.matmul(a, b.T)))
    for _, fn in launches if warm else ():
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    for label, fn in launches:
        torch.cuda.nvtx.range_push("measure")
        fn()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print("launched", label, flush=True)


def labels(cases) -> list:
    out = []
    for (m, n, k), configs in cases:
        out += [f"{m}x{n}x{k} {c}" for c in configs] + [f"{m}x{n}x{k} cuBLAS"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--out", default=os.environ.get("OUT", str(ROOT / "benchmarks" / "results")))
    ap.add_argument("--set", default="full", help="ncu --set (full, detailed, basic)")
    ap.add_argument(
        "--clock-control",
        default="base",
        choices=("base", "none"),
        help="ncu's clock control: base (locked, the default) or none (the GPU's own boost clock)",
    )
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--cold", action="store_true", help="child: no warm-up launches")
    args = ap.parse_args(argv)
    cases = parse_cases(args.cases)
    if args.child:
        child(cases, warm=not args.cold)
        return 0
    ncu = shutil.which("ncu")
    if not ncu:
        print("no ncu on PATH: this script runs on a GPU host with Nsight Compute")
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rep = out / "gemm_ncu"
    kernels: dict = {}
    # with the NVTX filter (only the measured launches); if it admits nothing, every launch of a cold child
    for nvtx in (["--nvtx", "--nvtx-include", "measure/"], []):
        cmd = [
            ncu,
            "--set",
            args.set,
            "--clock-control",
            args.clock_control,
            *nvtx,
            "-f",
            "-o",
            str(rep),
            sys.executable,
            __file__,
            "--child",
            "--cases",
            args.cases,
            *([] if nvtx else ["--cold"]),
        ]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
        print(run.stdout[-3000:], run.stderr[-3000:])
        if run.returncode:
            return run.returncode
        details = subprocess.run(
            [ncu, "--import", f"{rep}.ncu-rep", "--page", "details", "--csv"],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        (out / "gemm_ncu.csv").write_text(details)
        for row in csv.DictReader(io.StringIO(details)):
            if any(w in row["Kernel Name"].lower() for w in NOT_GEMM):
                continue
            k = kernels.setdefault(row["ID"], {"kernel": row["Kernel Name"], "metrics": {}})
            k["metrics"][f"{row['Section Name']}/{row['Metric Name']}"] = (row["Metric Value"], row["Metric Unit"])
        if kernels:
            break
    names = labels(cases)
    rows = []
    at, after_ours = -1, True
    for kid, k in sorted(kernels.items(), key=lambda kv: int(kv[0])):
        # one label per launch: cuBLAS's call may run two kernels (a split-K GEMM, then its reduction)
        ours = k["kernel"].startswith("hopper_gemm")
        at += 1 if ours or after_ours else 0
        after_ours = ours
        i = at
        shown = {}
        for key, (value, unit) in k["metrics"].items():
            metric = key.split("/", 1)[1]
            if metric in SHOWN and SHOWN[metric] not in shown:
                shown[SHOWN[metric]] = f"{value} {unit}".strip()
        rows.append(
            {
                "label": names[i] if i < len(names) else "?",
                "kernel": k["kernel"],
                "shown": shown,
                "metrics": k["metrics"],
            }
        )
    (out / "gemm_ncu.json").write_text(json.dumps(rows, indent=1))
    for r in rows:
        print(f"{r['label']:<48} " + "  ".join(f"{k} {v}" for k, v in r["shown"].items()))
        print(f"    {r['kernel'][:170]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
