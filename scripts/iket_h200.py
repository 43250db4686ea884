"""Run NVIDIA IKET end to end on this GPU: TVM's official ``run-iket`` profile (cutlass-4.6.0) over
txlab's catalogue example ``iket_regions`` (sm_90a, ``Tx.cuda.iket.*``), then
``txlab.timeline.load_iket``; ``--record=txlab/data/api_verified_iket.json`` records the result for
``txlab.api.coverage``.

    python3 scripts/iket_h200.py [OUT_DIR] [--record=FILE]   # the profiling parent (what a user runs)
    python3 scripts/iket_h200.py --workload       # the replayed child (run-iket runs this)

Prints what is missing (``txlab.timeline.iket_requirements``), TVM's own validation, the run-iket
output tail on failure, and on success the decoded Timeline's summary. Exit status 0 only when a
trace was recorded and decoded with the expected ranges and markers.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def workload() -> None:
    """The kernel run under run-iket: txlab's catalogue example ``iket_regions`` (2 CTAs x 128
    threads: a stack range around 4 token ranges per thread, a marker with a payload, the
    IketProfiler meta class), built by ``IketProfiler.compile``; its output is checked."""
    import numpy as np
    import tvm
    from tvm.backend.cuda.iket import IketProfiler

    from txlab.api import examples

    ex = examples()["iket_regions"]
    exe = IketProfiler().compile(ex.prim_func(), target=tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}))
    dev = tvm.cuda(0)
    x = np.arange(256, dtype="float32")
    xd = tvm.runtime.tensor(x, device=dev)
    od = tvm.runtime.tensor(np.zeros(256, "float32"), device=dev)
    exe["iket_regions"](xd, od)
    dev.sync()
    np.testing.assert_allclose(od.numpy(), x * 6)  # Out += X * k for k in 0..3
    print("workload: iket_regions ran and its output is right")


def main(out_dir: Path, record: Path | None = None) -> int:
    from txlab import timeline

    missing = timeline.iket_requirements()
    print("iket_requirements:", missing or "complete")
    from tvm.backend.cuda import iket

    try:
        iket._validate_official_installation(iket._DEFAULT_PROFILE)
        print("TVM: official installation validated (versions, file hashes, run-iket entry point, NVRTC)")
    except Exception as exc:  # noqa: BLE001 - report TVM's own words
        print(f"TVM validation: {type(exc).__name__}: {exc}")
    if missing:
        return 2
    t = time.perf_counter()
    try:
        tl = timeline.iket_profile(
            [sys.executable, str(Path(__file__).resolve()), "--workload"],
            output_dir=out_dir,
            timeout=300,
            postprocess="all",
        )
    except Exception as exc:  # noqa: BLE001
        print(f"iket_profile failed after {time.perf_counter() - t:.1f} s: {type(exc).__name__}: {exc}")
        tail = getattr(exc, "output_tail", "") or getattr(getattr(exc, "__cause__", None), "output_tail", "")
        if tail:
            print("--- run-iket output tail ---\n" + tail)
        return 1
    print(
        f"iket_profile: {time.perf_counter() - t:.1f} s, {len(tl)} events on {len(tl.tracks)} tracks, "
        f"warnings={dict(tl.warnings)}"
    )
    print(tl.summary())
    tl.to_perfetto(out_dir / "txlab-perfetto.json")
    names = {e["name"] for e in tl.events}
    want = {"kernel", "step", "done", "epilogue", "store"}
    ok = want <= names and not tl.warnings
    print("expected ranges/markers present:", ok, sorted(names))
    if record:
        import json

        from txlab.api import examples

        info = json.loads(record.read_text()) if record.is_file() else {}
        info.update(
            device=tl.meta.get("gpu") or _gpu_name(),
            arch="sm_90a",
            date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            runtime="run-iket (cutlass-4.6.0 profile)",
        )
        info.setdefault("examples", {})["iket_regions"] = {
            "id": "iket_regions",
            "ok": ok,
            "events": len(tl),
            "tracks": len(tl.tracks),
            "names": sorted(names),
            "missing": sorted(want - names),
            "warnings": dict(tl.warnings),
            "uses": list(examples()["iket_regions"].uses),
        }
        record.write_text(json.dumps(info, indent=1) + "\n")
        print(f"wrote {record}")
    return 0 if ok else 1


def _gpu_name() -> str:
    from txlab.device import probe

    return probe().name


if __name__ == "__main__":
    if "--workload" in sys.argv:
        workload()
    else:
        args = [a for a in sys.argv[1:] if not a.startswith("--record=")]
        rec = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--record=")]
        out = Path(args[0] if args else os.environ.get("OUT", "/tmp") + "/iket")
        sys.exit(main(out, Path(rec[0]) if rec else None))
