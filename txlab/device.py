"""The local CUDA GPU, if any: presence, name, arch, limits. Uses the CUDA driver API (cuda-python).

Nothing here raises when there is no GPU: :func:`probe` returns a :class:`GPUInfo` whose
``available`` is False and whose ``reason`` says what is missing.
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict, dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class GPUInfo:
    available: bool
    reason: str = ""
    name: str = ""
    arch: str = ""  # e.g. "sm_90a" (the arch-specific target txlab compiles for)
    compute_capability: tuple = ()
    driver_version: str = ""
    sm_count: int = 0
    l2_bytes: int = 0
    max_smem_per_block_optin: int = 0
    max_smem_per_sm: int = 0
    max_threads_per_block: int = 0
    max_regs_per_block: int = 0
    max_regs_per_sm: int = 0
    total_memory_bytes: int = 0
    clock_khz: int = 0
    memory_clock_khz: int = 0
    memory_bus_bits: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _arch_for(major: int, minor: int) -> str:
    # Hopper and Blackwell data-center parts expose their arch-specific features under the "a" suffix.
    suffix = "a" if major >= 9 else ""
    return f"sm_{major}{minor}{suffix}"


@lru_cache(maxsize=1)
def probe() -> GPUInfo:
    """What GPU this process can use. Cached; honours ``CUDA_VISIBLE_DEVICES``."""
    if os.environ.get("TXLAB_FORCE_NO_GPU"):
        return GPUInfo(False, "TXLAB_FORCE_NO_GPU is set")
    try:
        from cuda.bindings import driver as cu
    except Exception as exc:  # noqa: BLE001 - cuda-python is a dependency
        return GPUInfo(False, f"cuda-python is not importable ({exc}); pip install cuda-python")
    try:
        (err,) = cu.cuInit(0)
    except Exception as exc:  # noqa: BLE001 - any failure to load libcuda means no driver here
        return GPUInfo(False, f"no NVIDIA driver: libcuda.so could not be loaded ({type(exc).__name__})")
    if err != cu.CUresult.CUDA_SUCCESS:
        return GPUInfo(False, f"the CUDA driver is present but cuInit failed: {err.name}")
    err, count = cu.cuDeviceGetCount()
    if err != cu.CUresult.CUDA_SUCCESS or count == 0:
        return GPUInfo(False, "the CUDA driver sees no GPU (check CUDA_VISIBLE_DEVICES)")
    err, dev = cu.cuDeviceGet(0)
    err, raw = cu.cuDeviceGetName(64, dev)
    name = raw.split(b"\0", 1)[0].decode()
    A = cu.CUdevice_attribute

    def attr(a):
        e, v = cu.cuDeviceGetAttribute(a, dev)
        return int(v) if e == cu.CUresult.CUDA_SUCCESS else 0

    major = attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    minor = attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    err, drv = cu.cuDriverGetVersion()
    err, total = cu.cuDeviceTotalMem(dev)
    return GPUInfo(
        True,
        name=name,
        arch=_arch_for(major, minor),
        compute_capability=(major, minor),
        driver_version=f"{drv // 1000}.{(drv % 1000) // 10}",
        sm_count=attr(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
        l2_bytes=attr(A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        max_smem_per_block_optin=attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
        max_smem_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
        max_threads_per_block=attr(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        max_regs_per_block=attr(A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
        max_regs_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
        total_memory_bytes=int(total),
        clock_khz=attr(A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        memory_clock_khz=attr(A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
        memory_bus_bits=attr(A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
    )


def cuda_ok(res, on_error=None):
    """Unwrap a ``cuda.bindings.runtime`` result: ``(err, value)`` -> value, ``(err,)``/``err`` -> None.
    A failing ``err`` calls ``on_error(err.name)`` (which should raise), else raises RuntimeError."""
    from cuda.bindings import runtime as rt

    err = res[0] if isinstance(res, tuple) else res
    if err != rt.cudaError_t.cudaSuccess:
        if on_error is not None:
            on_error(err.name)
        raise RuntimeError(f"CUDA call failed: {err.name}")
    return res[1] if isinstance(res, tuple) and len(res) > 1 else None


@lru_cache(maxsize=1)
def gpu_count() -> int:
    """How many CUDA GPUs this process can use (0 without a usable driver; honours
    ``CUDA_VISIBLE_DEVICES``)."""
    if not probe().available:
        return 0
    from cuda.bindings import driver as cu

    err, count = cu.cuDeviceGetCount()
    return int(count) if err == cu.CUresult.CUDA_SUCCESS else 0


def has_gpu() -> bool:
    return probe().available


#: what every NoGPUError says about running without a GPU
CPU_ALTERNATIVE = (
    'to run, use the CPU emulator: txlab.config.device = "cpu" (or '
    'check(..., device="cpu")) runs txlab.check and kernel calls there, and '
    "txlab.emulate(kernel, *args) runs one launch with its findings; timing needs a "
    "machine with an NVIDIA GPU and driver."
)


def require_gpu(what: str = "running a kernel", *, alternative: str | None = None):
    """Raise :class:`txlab.NoGPUError` explaining what is missing and what runs without a GPU
    (``alternative``, default: the CPU emulator), unless a GPU is usable."""
    info = probe()
    if not info.available:
        from txlab.errors import NoGPUError

        raise NoGPUError(
            f"{what} needs a CUDA GPU, and none is usable here: {info.reason}. "
            "Compiling and inspecting (txlab.compile, %%tirx) still work without one; "
            + (alternative or CPU_ALTERNATIVE)
        )
    return info


_notice_lock = threading.Lock()
_noticed_emulation = False


def choose(device: str | None = None) -> str:
    """Where a run goes, ``"gpu"`` or ``"cpu"`` (the emulator), from ``device`` (else
    ``txlab.config.device``): ``"auto"`` is the GPU when one is usable, else the CPU, and says so
    once per session (a plain line on stdout); ``"gpu"`` stays ``"gpu"`` without one (the caller's
    :func:`require_gpu` then says what is missing)."""
    from txlab.settings import DEVICES, config

    want = device if device is not None else config.device
    if want not in DEVICES:
        from txlab.errors import InputError

        raise InputError(
            f"device={want!r}: use 'auto' (GPU when present, else the CPU emulator), "
            "'gpu' (insist on one) or 'cpu' (the emulator, txlab.emulate)",
            param="device",
        )
    if want != "auto":
        return want
    info = probe()
    if info.available:
        return "gpu"
    _say_once_emulating(info.reason)
    return "cpu"


def _say_once_emulating(reason: str) -> None:
    global _noticed_emulation
    with _notice_lock:
        if _noticed_emulation:
            return
        _noticed_emulation = True
    print(
        f"txlab: no GPU here ({reason}), so txlab.check and kernel calls run on the CPU emulator "
        '(txlab.emulate); txlab.config.device = "gpu" insists on a GPU.'
    )


def forget_emulation_notice() -> None:
    """Say the no-GPU emulation notice again at the next run (it is said once per session)."""
    global _noticed_emulation
    with _notice_lock:
        _noticed_emulation = False
