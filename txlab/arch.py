"""Which CUDA archs txlab compiles for, and the arch a compile uses when none is named (the local
GPU's, else ``txlab.config.default_arch``, said once). Engines layer: the compiler and the memory
planner both resolve archs here."""

from __future__ import annotations

import re
import sys
import threading
from dataclasses import asdict, dataclass

# sm_<major><minor>[a|f]: sm_80, sm_89, sm_90a, sm_100a, sm_120 (major 5..12, one minor digit)
_ARCH_RE = re.compile(r"^sm_(\d{1,2})(\d)([af]?)$")
_KNOWN_MAJORS = {5, 6, 7, 8, 9, 10, 11, 12}
# What CUDA 13's nvcc/ptxas (txlab's toolchain) can target: `nvcc --list-gpu-code` gives the bases
# (13.0 dropped Maxwell, Pascal and Volta); arch-specific "a" exists from sm_90, family "f" from
# sm_100 (CUDA C++ Programming Guide, "Feature Availability").
SUPPORTED_ARCH_BASES = (
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_88",
    "sm_89",
    "sm_90",
    "sm_100",
    "sm_103",
    "sm_110",
    "sm_120",
    "sm_121",
)


def supported_archs() -> list[str]:
    out = []
    for base in SUPPORTED_ARCH_BASES:
        major = int(base[3:-1])
        out.append(base)
        if major >= 9:
            out.append(base + "a")
        if major >= 10:
            out.append(base + "f")
    return out


_KIB = 1024


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM limits of one compute capability (occupancy and memory plans read these)."""

    arch: str
    max_threads_per_sm: int
    max_ctas_per_sm: int
    max_smem_per_sm: int  # bytes (the largest carve-out)
    max_smem_per_cta_optin: int  # bytes a CTA may use (opt-in), without the reserved 1 KiB
    carveouts_kib: tuple  # shared-memory carve-out sizes the SM supports
    tmem_columns: int = 0  # tensor memory columns per SM (sm_100 family: 512)
    regs_per_sm: int = 65536
    max_regs_per_cta: int = 65536
    max_regs_per_thread: int = 255
    max_threads_per_cta: int = 1024
    default_smem_per_cta: int = 48 * _KIB  # without opt-in

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // 32

    def to_dict(self) -> dict:
        return {**asdict(self), "max_warps_per_sm": self.max_warps_per_sm}


_SMALL = (0, 8, 16, 32, 64, 100)
_AMPERE = (0, 8, 16, 32, 64, 100, 132, 164)
_BIG = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
#: Per-SM limits of the archs txlab knows, keyed by compute capability without the a/f suffix.
#: Source: the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", as
#: encoded in CUDA 13.0's ``cuda_occupancy.h`` (where they differ, sm_120's resident CTAs, the
#: header's 24); TMEM: PTX ISA, "Tensor Memory" (128 lanes x 512 columns on the sm_100 family).
#: sm_87, sm_88, sm_110 and sm_121: the same two NVIDIA sources, checked against each other: CUDA 13.0's
#: ``cuda_occupancy.h`` (``cudaOccMaxBlocksPerMultiprocessor``: 16, 16, 24, 24 CTAs;
#: ``cudaOccAlignUpShmemSizeVoltaPlus``: the carve-outs, sm_87 as sm_80's, sm_110 as sm_100's; 128-byte
#: shared-memory and 256-register allocation units for majors 8 to 12) and NVIDIA CCCL's
#: ``libcudacxx/include/cuda/__device/arch_traits.h`` (``arch_traits<sm_87>``: 164 KiB per SM, 1536
#: threads; ``sm_88``: sm_86's; ``sm_110``: sm_100's with 24 CTAs and 1536 threads; ``sm_121``: sm_120's;
#: 64 K registers per SM and per CTA, 1 KiB reserved per CTA from sm_80 on). TMEM on sm_110: ptxas 13.0
#: assembles ``tcgen05.alloc`` for sm_110a/sm_110f (and refuses it for sm_120a/sm_121a).
#: SMs of an H100 / H200 (SXM): what answers that need a whole GPU's capacity (a cooperative launch's resident CTAs)
#: assume where no GPU is asked
DEFAULT_SMS = 132
#: CTAs an H100/H200 holds at once in clusters of each size when one CTA fills an SM: a cluster starts only on free
#: SMs of one GPC, and the GPCs' SM counts leave room for 30 clusters of 4, 15 of 8, 7 of 16
#: (cudaOccupancyMaxActiveClusters on the H200, 2026-12-05; docs/gpu-runs.md)
CLUSTERED_ONE_PER_SM = {1: 132, 2: 132, 4: 120, 8: 120, 16: 112}

SM_LIMITS = {
    "sm_80": ArchLimits("sm_80", 2048, 32, 164 * _KIB, 163 * _KIB, _AMPERE),
    "sm_86": ArchLimits("sm_86", 1536, 16, 100 * _KIB, 99 * _KIB, _SMALL),
    "sm_87": ArchLimits("sm_87", 1536, 16, 164 * _KIB, 163 * _KIB, _AMPERE),
    "sm_88": ArchLimits("sm_88", 1536, 16, 100 * _KIB, 99 * _KIB, _SMALL),
    "sm_89": ArchLimits("sm_89", 1536, 24, 100 * _KIB, 99 * _KIB, _SMALL),
    "sm_90": ArchLimits("sm_90", 2048, 32, 228 * _KIB, 227 * _KIB, _BIG),
    "sm_100": ArchLimits("sm_100", 2048, 32, 228 * _KIB, 227 * _KIB, _BIG, tmem_columns=512),
    "sm_103": ArchLimits("sm_103", 2048, 32, 228 * _KIB, 227 * _KIB, _BIG, tmem_columns=512),
    "sm_110": ArchLimits("sm_110", 1536, 24, 228 * _KIB, 227 * _KIB, _BIG, tmem_columns=512),
    "sm_120": ArchLimits("sm_120", 1536, 24, 100 * _KIB, 99 * _KIB, _SMALL),
    "sm_121": ArchLimits("sm_121", 1536, 24, 100 * _KIB, 99 * _KIB, _SMALL),
}

#: Archs txlab compiles for but has no :data:`SM_LIMITS` row for, and why: what judges a plan or counts
#: occupancy for them refuses with this reason rather than count with rules that are not theirs.
UNJUDGED_ARCHS = {
    "sm_75": (
        "Turing allocates shared memory by other rules than the ones txlab.residency counts with "
        "(sm_80 on): no 1 KiB reserved per CTA, 256-byte allocation units, 32 or 64 KiB carve-outs "
        "(cuda_occupancy.h), so txlab does not judge plans or occupancy for it"
    ),
}


_notice_lock = threading.Lock()
_noticed_default_arch = False


def _say_once_default_arch(arch: str) -> None:
    global _noticed_default_arch
    with _notice_lock:
        if _noticed_default_arch:
            return
        _noticed_default_arch = True
    # an info line on stdout: no GPU is a normal place to be (stderr renders as a red error box in
    # JupyterLab)
    print(
        f"txlab: no GPU here, so kernels are compiled for {arch} (pass arch=... or --arch to choose another).",
        file=sys.stdout,
    )


def forget_default_arch_notice() -> None:
    """Say the default-arch notice again on the next compile without an arch (it is said once)."""
    global _noticed_default_arch
    with _notice_lock:
        _noticed_default_arch = False


def resolve_arch(arch: str | None) -> str:
    """The arch to compile for: the one given, else the local GPU's, else txlab.config.default_arch."""
    if arch is None:
        from txlab.device import probe
        from txlab.settings import config

        info = probe()
        if info.available:
            return info.arch
        arch = config.default_arch
        _say_once_default_arch(arch)
    arch = str(arch).strip().lower()
    if arch.isdigit():
        arch = f"sm_{arch}"
    m = _ARCH_RE.match(arch)
    if not m or int(m.group(1)) not in _KNOWN_MAJORS:
        from txlab.errors import ArchError

        guess = re.sub(r"^(?:sm|compute)_?(?=\d)", "sm_", arch)  # sm90a, compute_90a (nvcc's PTX spelling)
        fix = (
            f"did you mean {guess!r}?" if guess in supported_archs() else "write it like 'sm_90a', 'sm_100a' or 'sm_80'"
        )
        raise ArchError(f"arch {arch!r} is not a CUDA arch: {fix} (supported: {', '.join(supported_archs())})")
    if arch not in supported_archs():
        from txlab.errors import ArchError

        base = arch.rstrip("af")
        if base in SUPPORTED_ARCH_BASES:
            why = f"'{arch[-1]}' variants exist from {'sm_90' if arch.endswith('a') else 'sm_100'} on"
        elif int(m.group(1)) < 7 or base in ("sm_70", "sm_72"):
            why = "CUDA 13 no longer targets Maxwell, Pascal or Volta (use CUDA 12 for those)"
        else:
            why = "no such GPU generation"
        raise ArchError(f"arch {arch!r} cannot be compiled for: {why}. Supported: {', '.join(supported_archs())}")
    return arch


def arch_rank(arch: str) -> tuple[int, bool] | None:
    """``(compute capability as an int, arch-specific 'a')`` of ``'sm_90a'`` -> ``(90, True)``; None for no sm_ name."""
    m = re.match(r"^sm_(\d+)([af]?)$", str(arch).strip().lower())
    return (int(m.group(1)), m.group(2) == "a") if m else None


def needs_newer(needed: str, arch: str) -> bool:
    """True when code for ``needed`` (e.g. 'sm_100a') cannot be compiled for ``arch``."""
    n, a = arch_rank(needed), arch_rank(arch)
    if n is None or a is None:
        return False
    if n[1]:  # arch-specific features: exactly that arch (its family's 'a' variant)
        return not (a[1] and a[0] == n[0]) and not (a[1] and n[0] // 10 == a[0] // 10 and a[0] >= n[0])
    return a[0] < n[0]
