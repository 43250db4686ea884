"""Where a GEMM's time goes, per phase, beside cuBLAS: the in-kernel timeline of hopper_gemm's profiled kernel.

    python3 scripts/gemm_timeline_h200.py [--out DIR] M,N,K:CONFIG [M,N,K:CONFIG ...]

For each ``M,N,K:CONFIG`` (CONFIG a hopper_gemm configuration name, or ``-`` for the model's or table's choice; a
``hopper_gemm.BEFORE`` prefix such as ``v16:CONFIG`` builds it with that switch as it was before its change):
the kernel (unprofiled) and ``torch.matmul`` timed in interleaved rounds (``tune_h200.Timer``: L2 flushed, the
launch queued behind a GPU spin), then one run of the same configuration built with ``profile=True`` recorded by
``hg.record_timeline`` (globaltimer stamps per tile and warpgroup), summarised per phase:

- ``setup``: per CTA, its first instruction to its barriers initialized and synced (a cluster's sync with one);
- ``start spread``: the last CTA's first stamp after the first CTA's (the launch's ramp);
- ``to first wgmma``: per consumer, its mainloop's start after its CTA's producer started loading (the first
  stage's TMA latency: a mainloop starts waiting on the first full barrier at once, so this is the prologue);
- ``mainloop``: per tile, its K loop (median and max over tiles), and per k-block;
- ``fixup`` (split-K): per item, its partial stored and counted, and with the parallel fix-up the wait for the tile's
  other items; ``epilogue``: per tile or item, the stores (split-K: the partials' sum and the stores) (median, max);
- ``span``: first stamp to last stamp, against the unprofiled kernel's time and cuBLAS's;
- ``operands``: A and B's bytes over each kernel's time (TB/s), the floor a long-K small grid streams at.

Writes ``timeline_<M>x<N>x<K>_<CONFIG>.json`` per case (the summary and the raw events of 8 CTAs) and prints a
table. The profiled kernel carries the timers' stores, so its span runs a little longer than the kernel timed; it
runs once, after the same L2 flush as every timed launch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def _parse(spec: str):
    shape, _, config = spec.partition(":")
    m, n, k = (int(x) for x in shape.split(","))
    return (m, n, k), (None if config in ("", "-") else config)


def summarise(tl, k_steps: int) -> dict:
    """Phase statistics of one recorded run (see the module's docstring)."""
    names = tl.names
    per_cta: dict = {}
    main, epi, setup, fix = [], [], [], []
    first_wgmma = []
    for i in range(len(tl.start_ns)):
        block = tl.tracks[int(tl.track[i])].fields["block"]  # CudaProfiler tracks: one per (block, group)
        name = names[int(tl.name_id[i])]
        s, e = int(tl.start_ns[i]), int(tl.end_ns[i])
        d = per_cta.setdefault(block, {"first": s, "last": e, "load": None, "main": None})
        d["first"] = min(d["first"], s)
        d["last"] = max(d["last"], e)
        if name == "load_tile":
            d["load"] = s if d["load"] is None else min(d["load"], s)
        elif name == "mainloop":
            main.append(e - s)
            d["main"] = s if d["main"] is None else min(d["main"], s)
        elif name == "epilogue":
            epi.append(e - s)
        elif name == "setup":
            setup.append(e - s)
        elif name == "fixup":
            fix.append(e - s)
    t0 = min(d["first"] for d in per_cta.values())
    t1 = max(d["last"] for d in per_cta.values())
    for d in per_cta.values():
        if d["load"] is not None and d["main"] is not None:
            first_wgmma.append(d["main"] - d["load"])
    starts = sorted(d["first"] - t0 for d in per_cta.values())

    def q(xs):
        if not xs:
            return None
        xs = sorted(xs)
        return {"median_us": statistics.median(xs) / 1e3, "max_us": xs[-1] / 1e3, "min_us": xs[0] / 1e3}

    out = {
        "ctas": len(per_cta),
        "span_us": (t1 - t0) / 1e3,
        "start_spread_us": starts[-1] / 1e3 if starts else None,
        "to_first_wgmma": q(first_wgmma),
        "mainloop": q(main),
        "epilogue": q(epi),
        "setup": q(setup),
        "fixup": q(fix),
    }
    if main and k_steps:
        out["mainloop_per_kblock_ns"] = statistics.median(main) / k_steps
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", help="M,N,K:CONFIG (CONFIG '-' for the choice)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import torch
    from gemm_h200 import bf16_case
    from tune_h200 import Timer

    from txlab.examples import hopper_gemm as hg
    from txlab.examples.gemm_config import BK

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timer = Timer(torch, rep=15)
    dev = torch.cuda.get_device_name(0)
    print(f"device {dev}", flush=True)
    rows = []
    for spec in args.cases:
        shape, config = _parse(spec)
        m, n, k = shape
        row = {"shape": list(shape), "device": dev}
        prefix = config[:4] if config and config[:4] in hg.BEFORE else ""
        config = config[len(prefix) :] if prefix else config
        try:
            with hg.built_as_before(*([prefix] if prefix else [])):
                case = bf16_case(torch, m, n, k, config)
            row["config"] = prefix + case.config
            row.update(case.check())
            per = {"txlab": [], "cublas": []}
            for r in range(args.rounds):
                order = [("txlab", case.run), ("cublas", case.baseline)]
                for name, fn in order if r % 2 == 0 else order[::-1]:
                    t = timer(fn)
                    per[name].append((t["median_ms"] if isinstance(t, dict) else t) * 1e3)
            row["txlab_us"] = statistics.median(per["txlab"])
            row["cublas_us"] = statistics.median(per["cublas"])
            # A and B read once from DRAM at least: how near each kernel runs to the bandwidth a long-K small grid needs
            operand_bytes = (m + n) * k * 2
            row["operand_tbps"] = {w: operand_bytes / (row[f"{w}_us"] * 1e6) for w in ("txlab", "cublas")}
            cfg = hg.parse_config(case.config)
            a, b, c = case.tensors
            with hg.built_as_before(*([prefix] if prefix else [])):
                hg.build(m, n, k, cfg, profile=True)  # compiled (and cached) first, then L2 flushed as for the timings
                timer.flush.fill_(7)
                torch.cuda.synchronize()
                tl = hg.record_timeline(a, b, c, cfg)
            k_steps = -(-k // BK)
            if cfg.split_k > 1:
                k_steps = -(-k_steps // cfg.split_k)
            row["timeline"] = summarise(tl, k_steps)
            ev = [e for e in tl.events if int(e.get("block", 0)) < 8]
            row["events_first_8_ctas"] = ev[:200]
        except Exception as exc:  # noqa: BLE001 - one case's failure is a row
            row["error"] = f"{type(exc).__name__}: {exc}"[:400]
        rows.append(row)
        t = row.get("timeline") or {}

        def at(part, stat):  # one statistic of the summary, 0 where the run has none
            return (t.get(part) or {}).get(stat) or 0

        bw = row.get("operand_tbps") or {}
        print(
            f"{'x'.join(map(str, shape)):>18} {row.get('config', config)!s:<36} ours {row.get('txlab_us', 0):7.2f} us "
            f"cuBLAS {row.get('cublas_us', 0):7.2f} us | span {t.get('span_us', 0):7.2f} spread "
            f"{t.get('start_spread_us') or 0:5.2f} setup {at('setup', 'max_us'):5.2f} first-wgmma "
            f"{at('to_first_wgmma', 'median_us'):5.2f} main {at('mainloop', 'median_us'):7.2f}/"
            f"{at('mainloop', 'max_us'):7.2f} per-kb {t.get('mainloop_per_kblock_ns') or 0:6.1f} ns fix "
            f"{at('fixup', 'median_us'):5.2f}/{at('fixup', 'max_us'):5.2f} epi {at('epilogue', 'median_us'):5.2f}/"
            f"{at('epilogue', 'max_us'):5.2f} operands {bw.get('txlab', 0):4.2f}/{bw.get('cublas', 0):4.2f} TB/s "
            f"{row.get('error', '')}",
            flush=True,
        )
        name = f"timeline_{m}x{n}x{k}_{str(row.get('config', 'choice')).replace(':', '-')}.json"
        (out / name).write_text(json.dumps(row, indent=1, default=str))
    stamp = time.strftime("%Y-%m-%d_%H%M", time.gmtime())
    (out / f"gemm_timeline_{stamp}.json").write_text(json.dumps(rows, default=str))


if __name__ == "__main__":
    main()
