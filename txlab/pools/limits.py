"""Per-architecture limits a memory plan is judged against, and the error a plan that does not fit
raises."""

from __future__ import annotations

import re

from txlab.errors import TxlabError

KiB = 1024

# Per-architecture limits. Source: NVIDIA CUDA C++ Programming Guide, "Compute Capabilities" >
# "Technical Specifications per Compute Capability" (shared memory per SM, maximum shared memory
# per block with opt-in, 32-bit registers per SM, maximum resident warps / blocks per SM) and the
# CUDA Occupancy Calculator (1 KiB of shared memory reserved per resident block on cc >= 8.0,
# registers allocated per warp in units of 256). TMEM: PTX ISA, "Tensor Memory" (sm_100a family:
# 128 lanes x 512 columns of 32-bit cells per CTA-pair SM; tcgen05.alloc takes a power of two
# of at least 32 columns).
ARCH_LIMITS: dict[str, dict] = {
    "sm_80": dict(
        smem_per_block_optin=163 * KiB,
        smem_per_sm=164 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=64,
        max_ctas_per_sm=32,
        tmem_columns=0,
    ),
    "sm_86": dict(
        smem_per_block_optin=99 * KiB,
        smem_per_sm=100 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=48,
        max_ctas_per_sm=16,
        tmem_columns=0,
    ),
    "sm_89": dict(
        smem_per_block_optin=99 * KiB,
        smem_per_sm=100 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=48,
        max_ctas_per_sm=24,
        tmem_columns=0,
    ),
    "sm_90": dict(
        smem_per_block_optin=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=64,
        max_ctas_per_sm=32,
        tmem_columns=0,
    ),
    "sm_100": dict(
        smem_per_block_optin=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=64,
        max_ctas_per_sm=32,
        tmem_columns=512,
    ),
    "sm_103": dict(
        smem_per_block_optin=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=64,
        max_ctas_per_sm=32,
        tmem_columns=512,
    ),
    "sm_120": dict(
        smem_per_block_optin=99 * KiB,
        smem_per_sm=100 * KiB,
        regs_per_sm=65536,
        max_warps_per_sm=48,
        max_ctas_per_sm=32,
        tmem_columns=0,
    ),
}
RESERVED_SMEM_PER_CTA = 1 * KiB
REG_ALLOC_UNIT = 256  # registers, per warp
TMEM_LANES = 128
TMEM_MAX_COLUMNS = 512
BANK_BYTES = 4
BANKS = 32
CHUNK_BYTES = 16  # one 16-byte chunk = 4 banks = one "bank group" (8 per 128 B row)


def arch_limits(arch: str) -> dict:
    """Limits for ``arch`` (``sm_90a`` -> the ``sm_90`` row). Raises ValueError for unknown archs."""
    base = re.sub(r"[af]$", "", str(arch).strip().lower())
    if base not in ARCH_LIMITS:
        raise ValueError(
            f"unknown arch {arch!r}; txlab knows {', '.join(sorted(ARCH_LIMITS))} (pass arch='sm_90a' or similar)"
        )
    return dict(ARCH_LIMITS[base], arch=arch)


class PoolOverflowError(TxlabError, ValueError):
    """A memory plan does not fit. ``kind`` is ``smem`` or ``tmem``; ``allocation`` names the buffer
    that crossed the line (or None when the annotation alone does); ``excess`` is by how much
    (bytes for smem, columns for tmem); ``limit`` the limit crossed; ``arch`` the target."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        allocation: str | None,
        excess: int,
        limit: int,
        arch: str | None,
        kernel: str | None = None,
    ):
        self.kind = kind
        self.allocation = allocation
        self.excess = excess
        self.limit = limit
        self.arch = arch
        self.kernel = kernel
        super().__init__(message)
