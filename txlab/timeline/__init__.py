"""In-kernel timelines: where the time goes inside one kernel launch.

Two tracers feed one model, :class:`Timeline`:

* TVM's ``CudaProfiler`` (``T.cuda.timer_*``): a zeroed ``uint64`` buffer the kernel fills.
  :func:`from_cuda_profiler` decodes it (numpy only; no torch, no triton).
* NVIDIA IKET (``T.cuda.iket.*`` captured by ``run-iket``): :func:`load_iket` reads its JSON
  trace or an ``IketProfileResult``.

CudaProfiler wire format (TVM ``docs/tirx/native_basics/cuda/profiling.rst`` and
``tvm/backend/cuda/cpp/instrument.py``)::

    slot 0          header  = (num_groups << 32) | num_blocks      (block 0, thread 0)
    slot 1 + lane + k * write_stride                               (lane = block * num_groups + group)
    record          (globaltimer_lo << 32) | (lane << 12) | (event << 2) | type
    type            0 start, 1 end, 2 instant, 3 finalize; 0 means "empty slot"
                    (so a start of event 0 in lane 0 stamped exactly at globaltimer_lo == 0 is lost:
                    a 1-in-2**32 ambiguity of the format itself)

Timestamps are the low 32 bits of ``%globaltimer`` (ns); they wrap every 2**32 ns and are unwrapped
here. Events are stored column-wise (numpy), so a million records stay cheap; ``Timeline.events``
is a read-only sequence that builds each event dict on access.

Decoding never executes anything from a trace; JSON is parsed with ``json`` under size caps.

Modules: ``model`` (Timeline, Track, TimelineSummary), ``cuda_profiler`` (decode/encode/synthetic),
``iket`` (run-iket JSON), ``record`` (GPU recording, and ``emulate``: the same kernel on the CPU
emulator, whose clocks count emulated work, labelled so; IKET marks included) and ``saved_traces`` (``txlab/data``).
Every name is importable from ``txlab.timeline``. The example kernels that record them are in
:mod:`txlab.examples.instrumented`; ``python -m txlab.examples.traces`` re-records the saved traces.
"""

from __future__ import annotations

from txlab.timeline.cuda_profiler import encode_cuda_profiler, from_cuda_profiler, synthetic_cuda_profiler
from txlab.timeline.iket import iket_profile, iket_requirements, load_iket
from txlab.timeline.model import (
    IKET_PAYLOAD_TYPES,
    KIND_INSTANT,
    KIND_RANGE,
    IketUnavailable,
    Timeline,
    TimelineSummary,
    TraceError,
    Track,
    decode_payload,
)
from txlab.timeline.record import emulate, record
from txlab.timeline.saved_traces import EXAMPLE_KERNELS, SAVED_IKET, saved

__all__ = [
    "Timeline",
    "Track",
    "TimelineSummary",
    "TraceError",
    "IketUnavailable",
    "from_cuda_profiler",
    "encode_cuda_profiler",
    "synthetic_cuda_profiler",
    "load_iket",
    "record",
    "emulate",
    "iket_profile",
    "iket_requirements",
    "saved",
    "SAVED_IKET",
    "EXAMPLE_KERNELS",
    "IKET_PAYLOAD_TYPES",
    "KIND_RANGE",
    "KIND_INSTANT",
    "decode_payload",
]


def __getattr__(name):
    if name == "SAVED":  # deprecated: saved() lists the saved traces (as profiling.saved() does)
        import warnings

        from txlab.timeline.saved_traces import CUDA_PROFILER_TRACES

        warnings.warn(
            "txlab.timeline.SAVED is deprecated: txlab.timeline.saved() lists the saved traces",
            DeprecationWarning,
            stacklevel=2,
        )
        return CUDA_PROFILER_TRACES
    raise AttributeError(f"module 'txlab.timeline' has no attribute {name!r}")
