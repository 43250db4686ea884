"""Run TIRx kernels on the CPU: a SIMT-faithful emulator of the kernel's lowered device IR.

    res = txlab.emulate(kernel, a, b, n)          # writes outputs into the numpy arrays, like a GPU run
    res.findings                                  # out-of-bounds, shared races, never-written shared reads, ...
    txlab.emulate(kernel, a, b, n, ctas=[0, 17])  # only some CTAs of a big grid

What runs is the IR TVM's CUDA codegen sees (the ``tirx`` pipeline, then the device finalisation),
so a wrong kernel is wrong here too. Modules: ``runner`` (lowering, host arguments, the CTA loop),
``interpreter`` (IR -> closures over lane vectors), ``memory`` (address space, bounds), ``ops``
(warp collectives, atomics, conversions), ``sync`` (CTA barriers, mbarriers), ``tma``, ``wgmma``,
``timers`` (clock64, the timer ring: emulated warp-instructions), ``cluster`` (CTAs of a cluster
together, DSMEM, remote mbarrier arrives), ``tmem`` and ``tcgen05`` (Blackwell tensor memory and
its tcgen05 instructions), ``packed_math`` (sm_100 fmul2/fadd2), ``races`` (shared-memory race
checker, and reads of shared bytes nothing wrote), ``warp_global`` (global races between warps of one CTA),
``axes`` (indices past their own axis of a multi-dimensional buffer), ``result``.
Anything not modelled raises :class:`txlab.errors.NotEmulatedError` naming the op and the user's
line. This file re-exports only.
"""

from txlab.emulator.result import EmulationResult, Finding
from txlab.emulator.runner import emulate, lower_for_emulation

__all__ = ["emulate", "EmulationResult", "Finding", "lower_for_emulation"]
