"""How many CTAs of a kernel one SM holds, resource by resource: the rules of NVIDIA's occupancy
calculator (``cuda_occupancy.h``), written once, in the base layer: :func:`txlab.occupancy_of`
(``txlab.occupancy``, which explains them, sweeps them and reports them), a memory plan's occupancy
(``txlab.pools.layout(...).occupancy``), the build's launchability warnings (``txlab.diagnose``) and
the emulator's count of resident CTAs (:func:`resident_capacity`) all count with these functions, so
none can disagree with another.

* **warps**: ``ceil(threads / 32)`` warps per CTA against the SM's warp slots;
* **registers** are allocated per warp (``registers x 32`` rounded up to 256) and each of the 4
  sub-partitions holds ``regs_per_sm / 4`` of them; a CTA must also fit the per-CTA register limit
  with its warp count rounded up to a multiple of 4;
* **shared memory**: what the CTA asks plus the 1 KiB the driver reserves (sm_80 on), rounded up to
  128 bytes, against the carve-out (the whole SM's shared memory by default).
"""

from __future__ import annotations

from txlab.arch import CLUSTERED_ONE_PER_SM, DEFAULT_SMS, ArchLimits

WARP = 32
REG_ALLOC_UNIT = 256  # registers, per warp
SMEM_ALLOC_UNIT = 128  # bytes
SUBPARTITIONS = 4
RESERVED_SMEM_PER_CTA = 1024  # bytes the driver reserves per CTA (sm_80+)
#: the CTA count of a resource that sets no limit (a kernel without registers)
UNLIMITED = 1 << 30

_KIB = 1024


def warps_per_cta(threads: int) -> int:
    return -(-threads // WARP)


def by_warps(lim: ArchLimits, threads: int) -> tuple[int, str | None]:
    """(CTAs the SM's warp slots hold, why none fits or None)."""
    if threads > lim.max_threads_per_cta:
        return 0, f"{threads} threads per CTA, the most is {lim.max_threads_per_cta}"
    return lim.max_warps_per_sm // warps_per_cta(threads), None


def regs_per_warp(registers: int) -> int:
    """Registers one warp is allocated: ``registers x 32`` rounded up to the allocation unit."""
    return -(-max(registers, 0) * WARP // REG_ALLOC_UNIT) * REG_ALLOC_UNIT


def by_registers(lim: ArchLimits, registers: int, threads: int) -> tuple[int, str | None]:
    """(CTAs the SM's register file holds, why none fits or None); :data:`UNLIMITED` for 0 registers."""
    warps = warps_per_cta(threads)
    per_warp = regs_per_warp(registers)
    if registers > lim.max_regs_per_thread:
        return 0, f"{registers} registers per thread, the most is {lim.max_regs_per_thread}"
    if per_warp == 0:
        return UNLIMITED, None
    hw_check = per_warp * (-(-warps // SUBPARTITIONS) * SUBPARTITIONS)
    if hw_check > lim.max_regs_per_cta or per_warp * warps > lim.max_regs_per_cta:
        return 0, f"{registers} registers x {warps} warps exceed the {lim.max_regs_per_cta} registers a CTA may hold"
    warps_fit = ((lim.regs_per_sm // SUBPARTITIONS) // per_warp) * SUBPARTITIONS
    return warps_fit // warps, None


def smem_per_cta(smem_bytes: int) -> int:
    """Shared memory one CTA is allocated: what it asks plus the reserved 1 KiB, rounded up to 128 bytes."""
    return -(-(smem_bytes + RESERVED_SMEM_PER_CTA) // SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT


def by_shared_memory(lim: ArchLimits, smem_bytes: int, carveout: int | None = None) -> tuple[int, int, str | None]:
    """(CTAs the SM's shared memory holds, the carve-out that applies in bytes, why none fits or None).
    ``carveout``: a preference in percent (None: the driver's default, the whole shared memory)."""
    per_cta = smem_per_cta(smem_bytes)
    if smem_bytes > lim.max_smem_per_cta_optin:
        return (
            0,
            lim.max_smem_per_sm,
            f"{smem_bytes} bytes of shared memory per CTA, the most is {lim.max_smem_per_cta_optin}",
        )
    if carveout is None:
        per_sm = lim.max_smem_per_sm
    else:
        per_sm = round_to_carveout(carveout * lim.max_smem_per_sm // 100, lim)
        if per_sm < per_cta:  # the preference is a hint: one CTA always gets what it needs
            per_sm = round_to_carveout(per_cta, lim)
    return per_sm // per_cta, per_sm, None


def round_to_carveout(nbytes: int, lim: ArchLimits) -> int:
    """The smallest carve-out the arch supports that holds ``nbytes`` (its largest when none does)."""
    for kib in lim.carveouts_kib:
        if nbytes <= kib * _KIB:
            return kib * _KIB
    return lim.carveouts_kib[-1] * _KIB


def resident_per_sm(lim: ArchLimits, threads: int, smem_bytes: int = 0, registers: int = 0) -> int:
    """CTAs of ``threads`` threads, ``smem_bytes`` of shared memory and ``registers`` per thread (0: unknown) that one
    SM of ``lim`` holds at once: the least of the CTA slots, :func:`by_warps`, :func:`by_registers` and
    :func:`by_shared_memory` (the driver's default carve-out)."""
    counts = [lim.max_ctas_per_sm, by_warps(lim, threads)[0]]
    if registers:
        counts.append(by_registers(lim, registers, threads)[0])
    if smem_bytes:
        counts.append(by_shared_memory(lim, smem_bytes)[0])
    return min(counts)


def resident_capacity(
    lim: ArchLimits, threads: int, smem_bytes: int = 0, registers: int = 0, sms: int = DEFAULT_SMS, cluster: int = 1
) -> int:
    """CTAs such (:func:`resident_per_sm`) that ``sms`` SMs hold at once, whole clusters of ``cluster`` CTAs
    (:data:`txlab.arch.CLUSTERED_ONE_PER_SM` where one fills an SM): what a cooperative launch may have, and how
    many CTAs of a launch that polls global memory run at once."""
    per_sm = resident_per_sm(lim, threads, smem_bytes, registers)
    if per_sm == 1 and cluster > 1 and sms == DEFAULT_SMS:  # whole clusters in one GPC (measured for this case)
        return CLUSTERED_ONE_PER_SM.get(cluster, sms)
    return per_sm * sms
