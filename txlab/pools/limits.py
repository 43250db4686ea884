"""Per-architecture limits a memory plan is judged against, and the error a plan that does not fit
raises."""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass

from txlab.arch import SM_LIMITS, UNJUDGED_ARCHS
from txlab.errors import TxlabError
from txlab.residency import REG_ALLOC_UNIT, RESERVED_SMEM_PER_CTA  # noqa: F401 (public here as before)

KiB = 1024

# Per-architecture limits, as a memory plan reads them: the rows of the one table in txlab.arch
# (the occupancy calculator's too; its allocation rules, the reserved 1 KiB per CTA and registers per
# warp in units of 256, are txlab.residency's). TMEM: PTX ISA, "Tensor Memory" (tcgen05.alloc
# takes a power of two of at least 32 columns).
ARCH_LIMITS: dict[str, dict] = {
    base: dict(
        smem_per_block_optin=a.max_smem_per_cta_optin,
        smem_per_sm=a.max_smem_per_sm,
        regs_per_sm=a.regs_per_sm,
        max_warps_per_sm=a.max_warps_per_sm,
        max_ctas_per_sm=a.max_ctas_per_sm,
        tmem_columns=a.tmem_columns,
    )
    for base, a in SM_LIMITS.items()
}
TMEM_LANES = 128
TMEM_MAX_COLUMNS = 512
BANK_BYTES = 4
BANKS = 32
CHUNK_BYTES = 16  # one 16-byte chunk = 4 banks = one "bank group" (8 per 128 B row)


def _base(arch: str) -> str:
    return re.sub(r"[af]$", "", str(arch).strip().lower())


def sm_limits(arch: str):
    """The :class:`txlab.arch.ArchLimits` row of ``arch`` (what :mod:`txlab.residency` counts with)."""
    base = _base(arch)
    if base not in SM_LIMITS:
        raise ValueError(f"unknown arch {arch!r}; txlab knows {', '.join(sorted(ARCH_LIMITS))}")
    return SM_LIMITS[base]


def arch_limits(arch: str) -> dict:
    """Limits for ``arch`` (``sm_90a`` -> the ``sm_90`` row). Raises ValueError for unknown archs."""
    base = _base(arch)
    if base not in ARCH_LIMITS:
        why = f" ({UNJUDGED_ARCHS[base]})" if base in UNJUDGED_ARCHS else ""
        raise ValueError(
            f"unknown arch {arch!r}{why}; txlab knows {', '.join(sorted(ARCH_LIMITS))} (pass arch='sm_90a' or similar)"
        )
    return dict(ARCH_LIMITS[base], arch=arch)


@dataclass(eq=False, repr=False)
class PoolOverflowError(TxlabError, ValueError):
    """A memory plan does not fit. ``kind`` is ``smem`` or ``tmem``; ``allocation`` names the buffer
    that crossed the line (or None when the annotation alone does); ``excess`` is by how much
    (bytes for smem, columns for tmem); ``limit`` the limit crossed; ``arch`` the target."""

    message: str
    _: KW_ONLY
    kind: str
    allocation: str | None
    excess: int
    limit: int
    arch: str | None
    kernel: str | None = None

    def __post_init__(self):
        super().__init__(self.message)
