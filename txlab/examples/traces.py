"""``python -m txlab.examples.traces record-examples | synthetic-examples``: regenerate the example traces
(recording needs a GPU; the example kernels are in :mod:`txlab.examples.instrumented`).

Both write into ``./txlab-traces`` by default (``--out DIR`` elsewhere); ``--into-package`` writes
into ``txlab/data``, the traces :func:`txlab.timeline.saved` ships. A trace recorded on a GPU
(``"synthetic": false``) is never replaced without ``--overwrite-recorded``; the check runs before
anything is recorded or written.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from txlab.examples.instrumented import example_inputs, example_kernel
from txlab.timeline.cuda_profiler import from_cuda_profiler, synthetic_cuda_profiler
from txlab.timeline.model import TraceError, read_trace_bytes
from txlab.timeline.record import run_profiled
from txlab.timeline.saved_traces import CUDA_PROFILER_TRACES, EXAMPLE_KERNELS


def _record_hopper_gemm(m: int = 8192, n: int = 8192, k: int = 8192):
    """The profiled warp-specialized GEMM (txlab.examples.hopper_gemm) on this GPU, checked."""
    import torch

    import txlab.examples.hopper_gemm as hg

    cfg = hg.GemmConfig(num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hg.record_timeline(a, b, c, cfg)  # warm-up: first launch pays module load and TMA descriptor set-up
    tl = hg.record_timeline(a, b, c, cfg)
    ref = a.float() @ b.float().T
    err = ((c.float() - ref).norm() / ref.norm()).item()
    if not err <= 1e-2:
        raise RuntimeError(f"the profiled GEMM is wrong: relative error {err:.3g}")
    meta = {"synthetic": False, "kernel": f"hopper_gemm {m}x{n}x{k} {cfg.name}", "gpu": tl.meta["gpu"],
            "arch": tl.meta["arch"], "config": cfg.to_dict(), "rel_error": err,
            "provenance": f"recorded on {tl.meta['gpu']} ({tl.meta['arch']}) by "
                          "`python -m txlab.examples.traces record-examples`"}
    print(f"hopper_gemm: {len(tl)} events, warnings={dict(tl.warnings)}, rel_error={err:.2e}")
    return tl.meta["buffer"], [e.name for e in hg.GemmEvent], meta


def _write_saved(name: str, buf: np.ndarray, names: list, meta: dict, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix, data in ((".trace.bin", np.ascontiguousarray(buf, dtype="<u8").tobytes()),
                         (".trace.json", (json.dumps({"event_names": list(names), **meta}, indent=1)
                                          + "\n").encode("utf-8"))):
        final = out_dir / f"{name}{suffix}"
        tmp = out_dir / f".{name}{suffix}.tmp-{os.getpid()}"
        tmp.write_bytes(data)
        os.replace(tmp, final)        # (a reader never sees half a trace)


#: Where the commands write unless told otherwise: a folder in the working directory, never the
#: package (whose traces were recorded on an H200 and are what ``txlab.timeline.saved`` serves).
DEFAULT_OUT = "txlab-traces"


def _package_data() -> Path:
    return Path(__file__).resolve().parent.parent / "data"


def build_parser():
    """The command line of ``python -m txlab.examples.traces``."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m txlab.examples.traces",
        description="Regenerate the example traces. Writes into ./" + DEFAULT_OUT + " unless --out or "
                    "--into-package says otherwise, and never replaces a recorded trace (\"synthetic\": "
                    "false) without --overwrite-recorded.")
    ap.add_argument("command", choices=["record-examples", "synthetic-examples"],
                    help="record-examples: run the instrumented example kernels on this GPU; "
                         "synthetic-examples: write labelled synthetic traces (no GPU)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--out", help=f"folder to write the traces into (default: ./{DEFAULT_OUT})")
    where.add_argument("--into-package", action="store_true",
                       help="write into txlab/data, the traces txlab.timeline.saved() ships (maintainers, "
                            "after recording on a GPU)")
    ap.add_argument("--overwrite-recorded", action="store_true",
                    help="allow replacing traces that were recorded on a GPU")
    return ap


def output_folder(args) -> Path:
    """The folder the parsed command writes into (``--out``, ``--into-package``, else ./txlab-traces)."""
    if args.into_package:
        return _package_data()
    if args.out is not None and not str(args.out).strip():
        raise SystemExit("--out is empty: give a folder")
    return Path(args.out).expanduser().resolve() if args.out else Path.cwd().resolve() / DEFAULT_OUT


def _recorded(out: Path, kinds) -> list[Path]:
    """The trace files in ``out`` that a write of ``kinds`` would replace and that are not marked
    synthetic (unreadable or unlabelled ones count as recorded: they are kept too)."""
    keep = []
    for kind in kinds:
        js, bn = out / f"{kind}.trace.json", out / f"{kind}.trace.bin"
        if not (js.exists() or js.is_symlink() or bn.exists() or bn.is_symlink()):
            continue
        try:
            synthetic = json.loads(read_trace_bytes(js, 16 << 20, "trace metadata")).get("synthetic") is True
        except (TraceError, ValueError, AttributeError):
            synthetic = False
        if not synthetic:
            keep.append(js)
    return keep


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    out = output_folder(a)
    kinds = [k for k in CUDA_PROFILER_TRACES if a.command == "record-examples" or k in EXAMPLE_KERNELS]
    if out.exists() and not out.is_dir():
        print(f"error: {out} exists and is not a folder", file=sys.stderr)
        return 2
    recorded = _recorded(out, kinds)
    if recorded and not a.overwrite_recorded:
        print(f"error: {len(recorded)} trace(s) in {out} were recorded on a GPU (not marked synthetic) and "
              f"would be replaced: {', '.join(p.name for p in recorded)}. Write elsewhere with --out, or "
              "pass --overwrite-recorded to replace them.", file=sys.stderr)
        return 2
    for kind in kinds:
        if kind == "hopper_gemm" and a.command == "record-examples":
            buf, names, meta = _record_hopper_gemm()
        elif kind == "hopper_attention" and a.command == "record-examples":
            from txlab.examples.hopper_attention import record_example_trace

            buf, names, meta = record_example_trace()
        elif a.command == "synthetic-examples":
            buf, names = synthetic_cuda_profiler(kind)
            meta = {"synthetic": True, "kernel": kind,
                    "provenance": "SYNTHETIC: generated by txlab.timeline.synthetic_cuda_profiler("
                                  f"{kind!r}, seed=0), not measured. Regenerate from the GPU with "
                                  "`python -m txlab.examples.traces record-examples`."}
        else:
            func, ev = example_kernel(kind)
            outp, inp = example_inputs(kind)
            buf, rmeta = run_profiled(func, (outp, inp))
            names = [m.name for m in ev]
            meta = {"synthetic": False, "kernel": kind, "gpu": rmeta["gpu"], "arch": rmeta["arch"],
                    "provenance": f"recorded on {rmeta['gpu']} ({rmeta['arch']}) by "
                                  "`python -m txlab.examples.traces record-examples`",
                    "output_checksum": float(outp.sum())}
            tl = from_cuda_profiler(buf, names)
            print(f"{kind}: {len(tl)} events, warnings={dict(tl.warnings)}")
        _write_saved(kind, buf, names, meta, out)
        tl = from_cuda_profiler(buf, names)
        print(f"wrote {out}/{kind}.trace.bin: {len(tl)} events on {len(tl.tracks)} tracks, "
              f"{tl.duration_ns} ns ({meta['provenance'][:40]}...)")
        print(tl.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
