"""Try NVIDIA IKET end to end on this GPU: TVM's official ``run-iket`` profile (cutlass-4.6.0) over a
small sm_90a TIRx kernel annotated with ``Tx.cuda.iket.*``, then ``txlab.timeline.load_iket``.

    python3 scripts/iket_h200.py [OUT_DIR]        # the profiling parent (what a user runs)
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
    """The kernel run under run-iket: 2 CTAs x 128 threads, 4 token ranges per thread, a stack range
    around them, a marker with a payload; its output is checked."""
    import numpy as np
    import tvm
    from tvm.backend.cuda.iket import IketProfiler
    from tvm.script import tirx as T

    @T.prim_func
    def iket_steps(X: T.Buffer((256,), "float32"), Out: T.Buffer((256,), "float32")):
        T.device_entry()
        cta = T.cta_id([2])
        tx = T.thread_id([128])
        i = cta * 128 + tx
        T.cuda.iket.range_push("kernel")
        token = T.cuda.iket.sentinel_token("idle")
        for k in T.serial(4, unroll=False):
            T.cuda.iket.range_end(token)
            token = T.cuda.iket.range_start("step")
            Out[i] = Out[i] + X[i] * T.float32(k)
        T.cuda.iket.range_end(token)
        T.cuda.iket.mark("done", tx)
        T.cuda.iket.range_pop()

    exe = IketProfiler().compile(iket_steps, target=tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}))
    dev = tvm.cuda(0)
    x = np.arange(256, dtype="float32")
    xd = tvm.runtime.tensor(x, device=dev)
    od = tvm.runtime.tensor(np.zeros(256, "float32"), device=dev)
    exe["iket_steps"](xd, od)
    dev.sync()
    np.testing.assert_allclose(od.numpy(), x * 6)
    print("workload: iket_steps ran and its output is right")


def main(out_dir: Path) -> int:
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
        tl = timeline.iket_profile([sys.executable, str(Path(__file__).resolve()), "--workload"],
                                   output_dir=out_dir, timeout=300, postprocess="all")
    except Exception as exc:  # noqa: BLE001
        print(f"iket_profile failed after {time.perf_counter() - t:.1f} s: {type(exc).__name__}: {exc}")
        tail = getattr(exc, "output_tail", "") or getattr(getattr(exc, "__cause__", None), "output_tail", "")
        if tail:
            print("--- run-iket output tail ---\n" + tail)
        return 1
    print(f"iket_profile: {time.perf_counter() - t:.1f} s, {len(tl)} events on {len(tl.tracks)} tracks, "
          f"warnings={dict(tl.warnings)}")
    print(tl.summary())
    tl.to_perfetto(out_dir / "txlab-perfetto.json")
    names = {e["name"] for e in tl.events}
    ok = {"step", "kernel", "done"} <= names
    print("expected ranges/markers present:", ok, sorted(names))
    return 0 if ok else 1


if __name__ == "__main__":
    if "--workload" in sys.argv:
        workload()
    else:
        out = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp") + "/iket")
        sys.exit(main(out))
