"""Tile-scheduler traces: which tile each CTA visits, in which order, by running TVM's own code.

``trace(name, num_ctas, **params)`` generates a small TVMScript recorder for one of the tile
schedulers of ``tvm.backend.cuda.lang`` (``ClusterPersistentScheduler2D``, ``GroupMajor3D``,
``FlashAttentionLinearScheduler``, ``FlashAttentionLPTScheduler``, ``IndexedTripleTileScheduler``,
``RankAwareGroupMajorTileScheduler``). The recorder instantiates the real class exactly as a kernel
does, runs ``init(cta)`` / ``valid()`` / ``next_tile()`` with the CTA index as a serial loop, and
stores the scheduler's own attributes (``m_idx``, ``n_idx``, ...) into an output buffer. It is
compiled for ``llvm`` (or, with ``device="cuda"``, launched as a real kernel with the real CTA
index). No tile order is re-derived in Python.

Two builds exist:

* ``specialize=True`` (default): every parameter is a Python int baked into the scheduler, as in a
  kernel with static shapes (the classes prune statically dead branches in that case). One parse
  and compile per parameter set (about 0.6 s here, mostly TVMScript parsing), then cached in memory.
* ``specialize=False``: grid extents and the worker count are kernel arguments (the "runtime
  expression" form the classes accept for shapes); group sizes, cluster shape, swizzle, serpentine
  and world size stay constants. One compile then serves every grid size and CTA count (a new
  extent costs about a millisecond). The explorer widget uses this; tests check both builds agree.

``RankAwareGroupMajorTileScheduler`` reads its rank from ``T.nvshmem.my_pe()``. The recorder
substitutes that intrinsic while the scheduler is parsed: it yields the recorder's int32 argument
``rank`` instead, so the class's remapping runs unchanged, on the CPU and on a GPU without NVSHMEM.
The substitution is local to the parse (a lock guards it and the original is restored).
"""

from __future__ import annotations

from txlab.schedulers.catalogue import SCHEDULERS, Param, SchedulerSpec, _resolve, spec_of  # noqa: F401
from txlab.schedulers.params import DEFAULT_SM_COUNT, lpt_index_lists  # noqa: F401
from txlab.schedulers.tracing import MAX_TRACE_TILES, trace  # noqa: F401
from txlab.schedulers.recorder import clear_cache, last_message_line  # noqa: F401
from txlab.schedulers.schedule import ScheduleTrace

__all__ = ["trace", "ScheduleTrace", "SCHEDULERS", "SchedulerSpec", "Param", "lpt_index_lists", "spec_of"]
