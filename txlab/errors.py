"""The exceptions txlab raises. Each one carries what a user needs to act on it."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any


class TxlabError(Exception):
    """Base class of every txlab error."""


@dataclass(eq=False, repr=False)
class CompileError(TxlabError):
    """A kernel failed to compile.

    Attributes: ``stage`` (``parse``, ``lower``, ``codegen``, ``nvcc``, ``ptxas``, ``link``), ``lineno``
    and ``source_line`` (in the user's own cell or file, when known), ``filename``, ``message`` (short),
    ``detail`` (the tool's full output) and ``hint`` (what to do about it, when known).
    """

    stage: str
    message: str
    _: KW_ONLY
    lineno: int | None = None
    source_line: str | None = None
    filename: str | None = None
    detail: str | None = None
    hint: str | None = None
    kernel: str | None = None

    def __post_init__(self):
        super().__init__(self._text())

    def _text(self) -> str:
        where = ""
        if self.lineno is not None:
            where = f" at line {self.lineno}"
            if self.filename and not self.filename.startswith("<tirx-cell"):
                where += f" of {self.filename}"
        head = f"[{self.stage}]{where}"
        if self.kernel:
            head += f" in kernel {self.kernel!r}"
        lines = [f"{head}: {self.message}"]
        if self.source_line:
            lines.append(f"    {self.lineno} | {self.source_line.rstrip()}")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class ArchError(TxlabError, ValueError):
    """An arch string that is not a CUDA arch, or an arch the toolchain cannot target."""


class NoGPUError(TxlabError):
    """Running needs a CUDA GPU and none is usable here; the message says what is missing."""


class InputError(TxlabError, ValueError):
    """An argument does not match the kernel's parameter (shape, dtype, device, layout, count)."""

    def __init__(self, message: str, *, param: str | None = None):
        self.param = param
        super().__init__(message)


@dataclass(eq=False, repr=False)
class KernelFault(TxlabError):
    """A kernel faulted, hung or could not launch.

    ``kind``: ``illegal_address``, ``misaligned``, ``trap`` (trap instruction or device-side assert),
    ``illegal_instruction``, ``stack_overflow``, ``timeout`` (past its time budget), ``oom``,
    ``launch_config`` (more threads/shared memory/registers/cluster than the device has),
    ``worker_died``, ``cuda_error`` (anything else), ``emulated`` (the CPU emulator found an
    out-of-bounds access, a race or a barrier problem in a run without a GPU). ``kernel`` and ``launch`` (grid, block,
    cluster, dynamic smem) say what ran; ``waited_s`` how long the caller waited;
    ``worker_replaced`` whether the isolated worker was replaced; ``cuda_error`` the CUDA error
    name when there is one; ``hint`` the usual causes.
    """

    kind: str
    message: str
    _: KW_ONLY
    kernel: str | None = None
    launch: Any = None
    waited_s: float | None = None
    worker_replaced: bool = False
    cuda_error: str | None = None
    hint: str | None = None

    def __post_init__(self):
        super().__init__(f"[{self.kind}] {self.message}")


class NotEmulatedError(TxlabError):
    """The CPU emulator met an operation it does not model (``txlab.emulate``). It stops rather than
    guess: ``name`` is the operation, ``lineno`` the user's line (when known)."""

    def __init__(self, name: str, *, lineno: int | None = None, detail: str = ""):
        self.name = name
        self.lineno = lineno
        where = f" at line {lineno}" if lineno is not None else ""
        super().__init__(f"not emulated: {name}{where}" + (f" ({detail})" if detail else ""))


class EmulationFault(TxlabError):
    """``txlab.emulate(..., stop=True)`` stopped at its first finding; ``finding`` says what and where."""

    def __init__(self, finding):
        self.finding = finding
        super().__init__(str(finding))


# ---------------------------------------------------------------------------------------------
# fault classification: what a CUDA error means and what usually causes it
# CUDA error name (runtime ``cudaError*`` or driver ``CUDA_ERROR_*``) or message -> fault kind
_KINDS = [
    ("illegal_address", ("cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal memory access")),
    ("misaligned", ("cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address")),
    (
        "trap",
        (
            "cudaErrorAssert",
            "CUDA_ERROR_ASSERT",
            "device-side assert",
            "cudaErrorLaunchFailure",
            "CUDA_ERROR_LAUNCH_FAILED",
            "unspecified launch failure",
        ),
    ),
    (
        "illegal_instruction",
        (
            "cudaErrorIllegalInstruction",
            "CUDA_ERROR_ILLEGAL_INSTRUCTION",
            "cudaErrorInvalidPc",
            "CUDA_ERROR_INVALID_PC",
            "illegal instruction",
        ),
    ),
    ("stack_overflow", ("cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR")),
    ("timeout", ("cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT")),
    ("oom", ("cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")),
    (
        "launch_config",
        (
            "cudaErrorInvalidConfiguration",
            "CUDA_ERROR_INVALID_VALUE",
            "cudaErrorInvalidValue",
            "cudaErrorLaunchOutOfResources",
            "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
            "too many resources requested",
            "allowed dynamic shared memory size",
            "non-portable CUDA cluster size",
            "CLUSTER_OUT_OF_RESOURCES",
            "ClusterOutOfResources",
            "invalid configuration argument",
        ),
    ),
]
_HINTS = {
    "illegal_address": "an access outside any allocation: check index arithmetic and bounds "
    "(compute-sanitizer names the instruction)",
    "misaligned": "a vector or wide access at an address that is not a multiple of its width "
    "(e.g. float4 needs 16-byte alignment)",
    "trap": "the kernel executed trap (T.cuda.trap_when_assert_failed with a false condition) or a device-side assert",
    "timeout": "the kernel did not finish: an mbarrier wait whose phase never completes (wrong "
    "parity, arrival count or expect_tx bytes), a spin loop, or a barrier not every thread reaches",
    "oom": "the GPU could not allocate the kernel's buffers or workspace",
    "launch_config": "the launch asks for more than the device has (threads, shared memory, registers or cluster size)",
}


def classify(text: str) -> str:
    """The fault kind for a CUDA error name or message (``cuda_error`` if none matches)."""
    for kind, needles in _KINDS:
        if any(n in text for n in needles):
            return kind
    return "cuda_error"


def hint(kind: str) -> str | None:
    """The usual causes of a fault ``kind`` (None when there is nothing useful to say)."""
    return _HINTS.get(kind)


class ProfilerError(TxlabError):
    """Nsight Compute could not profile the kernel. ``reason``: ``no_ncu`` (not installed),
    ``permission`` (performance counters restricted to admin users: ERR_NVGPUCTRPERM),
    ``ncu_failed`` (ncu exited without a report; ``output`` has its log), ``no_kernel`` (ncu
    profiled no launch of the kernel), ``report`` (the report could not be read). ``hint`` says
    what to do."""

    def __init__(self, reason: str, message: str, *, hint: str | None = None, output: str | None = None):
        self.reason = reason
        self.hint = hint
        self.output = output
        super().__init__(f"[{reason}] {message}" + (f"\nhint: {hint}" if hint else ""))


class SettingError(TxlabError, ValueError):
    """A txlab setting (``txlab.config.<name>`` or its ``$TXLAB_*`` variable) was given a value txlab does not know;
    the message names the setting and the values it takes."""


class FormatError(TxlabError, ValueError):
    """A saved file is not what it claims (wrong schema, unsupported version, missing fields)."""
