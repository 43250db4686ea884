"""NVIDIA compute-sanitizer on one kernel launch, findings at the user's line.

    report = txlab.sanitize(compiled, A, B)                      # memcheck, racecheck, synccheck, initcheck
    report.ok, report.findings[0].lineno, report.findings[0].explanation
    report.save("run.sanitizer.json"); txlab.sanitizer.load("run.sanitizer.json")

How it runs: the kernel's executable is exported as a library (TVM's host code + a cubin built with
``-lineinfo``, so the sanitizer can name a CUDA line for each SASS offset), and for each tool a fresh
process ``compute-sanitizer --tool X ... python -m txlab.sanitize_runner job.json`` loads that
library with TVM's runtime only, copies the arguments into exactly-sized device buffers
(``tvm.runtime.empty``: one cudaMalloc each, no caching allocator, so an access past a buffer's end
is outside any allocation) and launches once. A kernel that hangs is killed after ``timeout_s``
(:class:`txlab.KernelFault` ``kind="timeout"``); the notebook process never touches the GPU.

Findings are parsed from the sanitizer's text report (its documented format; the XML record saved
with ``--xml --save`` is kept alongside and read when the text names nothing). Each finding is
typed (:class:`Finding`): tool, kind, the user's line (through ``Compiled.source_map`` when the
compiled cubin carries line info, else through the CUDA line the sanitizer prints), SASS offset,
thread and CTA, address and size, and one sentence saying what happened.
"""

from __future__ import annotations

from txlab.sanitizer.explain import explain  # noqa: F401
from txlab.sanitizer.lines import cuda_line_map  # noqa: F401
from txlab.sanitizer.parse import parse_text, parse_xml  # noqa: F401
from txlab.sanitizer.report import (  # noqa: F401
    FORMAT,
    TOOLS,
    Finding,
    SanitizerError,
    SanitizerReport,
    load,
    load_bundle,
    recorded,
    save_bundle,
)
from txlab.sanitizer.tools import (  # noqa: F401
    COMMON_FLAGS,
    MAX_LOG_CHARS,
    RACECHECK_HAZARD_FLAGS,
    TOOL_FLAGS,
    find_sanitizer,
    finish,
    from_logs,
    sanitize,
    sanitizer_version,
    supported_flags,
    write_job,
)
