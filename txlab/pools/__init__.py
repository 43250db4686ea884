"""Shared-memory and tensor-memory plans, read back from a kernel's IR.

``SMEMPool`` / ``TMEMPool`` (tvm.backend.cuda.lang) are bump allocators that run while TVMScript is
parsed; what they leave behind is IR: one zero-extent ``shared.dyn`` arena (``AllocBuffer``), a
``DeclBuffer`` per carved buffer whose data is the arena's pointer and whose ``elem_offset`` is
the bump offset, a ``tirx.dyn_smem_bytes`` annotation (``commit()``), and for TMEM ``DeclBuffer``s
of scope ``tmem`` with ``allocated_addr`` = first column plus a ``tcgen05.alloc`` of N columns.
:func:`layout` walks that IR (``tvm_ffi.structural_walk``, TVM's structural visitor) and rebuilds
the plan; nothing is re-derived by re-running the allocator. Byte footprints, TMEM columns and the
bank/swizzle pattern all come from evaluating the buffer's own TVM layout object.

    >>> plan = txlab.pools.layout(compiled)        # prim_func, IRModule or txlab.Compiled
    >>> plan.allocations[0]["name"], plan.occupancy.ctas_per_sm
    >>> plan.check()                               # PoolOverflowError before any launch
    >>> plan.plot(); plan.view()            # a matplotlib Figure; the PoolView widget
"""

from __future__ import annotations

from txlab.pools.limits import (  # noqa: F401  (public here as before)
    ARCH_LIMITS,
    BANK_BYTES,
    BANKS,
    CHUNK_BYTES,
    REG_ALLOC_UNIT,
    RESERVED_SMEM_PER_CTA,
    TMEM_LANES,
    TMEM_MAX_COLUMNS,
    KiB,
    PoolOverflowError,
    arch_limits,
)
from txlab.pools.plan import Occupancy, PoolLayout  # noqa: F401
from txlab.coalescing import coalescing  # noqa: F401  (global-memory sectors per access)
from txlab.pools.reader import bank_pattern, check, layout, layouts, tvm_ffi_call_type, tvm_module_of  # noqa: F401
