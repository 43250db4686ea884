"""Traces shipped in ``txlab/data`` (``python -m txlab.examples.traces`` regenerates them).
"""
from __future__ import annotations

import json
from importlib import resources

import numpy as np

from txlab.errors import InputError
from txlab.timeline.cuda_profiler import from_cuda_profiler
from txlab.timeline.iket import load_iket
from txlab.timeline.model import Timeline


SAVED = ("load_compute_store", "warp_specialized", "hopper_gemm")
EXAMPLE_KERNELS = ("load_compute_store", "warp_specialized")  # example_kernel kinds; hopper_gemm is only recorded


SAVED_IKET = ("iket",)  # run-iket JSON traces: <name>.iket.json + <name>.iket.meta.json


def saved(name: str = "load_compute_store") -> Timeline:
    """A trace shipped in ``txlab/data``: CudaProfiler buffers (``<name>.trace.bin`` +
    ``<name>.trace.json``) and ``"iket"``, a run-iket JSON trace recorded on an H200. Its
    ``meta['provenance']`` says whether it was recorded on a GPU or is synthetic."""
    if not isinstance(name, str) or name not in SAVED + SAVED_IKET:
        raise InputError(f"no saved trace {name!r:.60} (name); saved traces: {', '.join(SAVED + SAVED_IKET)}",
                         param="name")
    root = resources.files("txlab") / "data"
    if name in SAVED_IKET:
        tl = load_iket(str(root / f"{name}.iket.json"))
        tl.meta.update(json.loads((root / f"{name}.iket.meta.json").read_text(encoding="utf-8")))
        return tl
    info = json.loads((root / f"{name}.trace.json").read_text(encoding="utf-8"))
    buf = np.frombuffer((root / f"{name}.trace.bin").read_bytes(), dtype="<u8")
    return from_cuda_profiler(buf, info["event_names"], meta={k: v for k, v in info.items() if k != "event_names"})
