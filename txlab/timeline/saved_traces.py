"""Traces shipped in ``txlab/data`` (``python -m txlab.examples.traces`` regenerates them)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

from txlab.errors import InputError
from txlab.timeline.cuda_profiler import from_cuda_profiler
from txlab.timeline.iket import load_iket


CUDA_PROFILER_TRACES = ("load_compute_store", "warp_specialized", "hopper_gemm", "hopper_attention")
EXAMPLE_KERNELS = ("load_compute_store", "warp_specialized")  # example_kernel kinds; the hopper_* are only recorded


SAVED_IKET = ("iket",)  # run-iket JSON traces: <name>.iket.json + <name>.iket.meta.json


def saved(name: str | None = None):
    """``saved()``: the names of the traces shipped in ``txlab/data`` (a list, as
    ``txlab.profiling.saved()`` lists the saved profiles). ``saved(name)``: that trace, a
    :class:`Timeline` -- CudaProfiler buffers (``<name>.trace.bin`` + ``<name>.trace.json``) or
    ``"iket"``, a run-iket JSON trace recorded on an H200. Its ``meta['provenance']`` says whether it
    was recorded on a GPU or is synthetic."""
    names = CUDA_PROFILER_TRACES + SAVED_IKET
    if name is None:
        return list(names)
    if not isinstance(name, str) or name not in names:
        raise InputError(
            f"no saved trace {name!r:.60} (name); saved traces: {', '.join(names)} (txlab.timeline.saved() lists them)",
            param="name",
        )
    root = resources.files("txlab") / "data"
    if name in SAVED_IKET:
        tl = load_iket(str(root / f"{name}.iket.json"))
        tl.meta.update(json.loads((root / f"{name}.iket.meta.json").read_text(encoding="utf-8")))
        return tl
    info = json.loads((root / f"{name}.trace.json").read_text(encoding="utf-8"))
    buf = np.frombuffer((root / f"{name}.trace.bin").read_bytes(), dtype="<u8")
    return from_cuda_profiler(buf, info["event_names"], meta={k: v for k, v in info.items() if k != "event_names"})
