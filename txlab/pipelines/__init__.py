"""Producer/consumer pipelines over full/empty mbarrier pairs, simulated exactly on the CPU.

A warp-specialized kernel built on ``tvm.backend.cuda.lang.Pipeline`` has, per stage ``s``, a *full*
barrier (producer -> consumers: "slot s holds data") and an *empty* barrier (consumers -> producer:
"slot s may be overwritten"). Every role walks the ring with a ``PipelineState`` (stage, phase) and
waits with a parity wait. One wrong phase bit or arrival count hangs the kernel; on the GPU that is
a timeout with no clue. :func:`simulate` runs the same protocol on the CPU with exact mbarrier
semantics and says what went wrong, where, and why.

mbarrier semantics modelled (PTX ISA, ``mbarrier``):

* ``init(count)``: current phase parity 0, pending arrivals = ``count``, tx-count 0.
* ``arrive(n)``: pending -= n. ``arrive.expect_tx(b)``: tx += b, then one arrival.
  ``expect_tx(b)``: tx += b (no arrival). ``complete_tx(b)`` (what a TMA copy does when its bytes
  land): tx -= b. The tx-count may go transiently negative (a copy can land before its expect).
* The current phase completes when pending == 0 and tx == 0: the parity flips, pending is reset to
  ``count`` and a new phase starts. Arriving more times than are pending is undefined behaviour in
  PTX; it is reported as an over-arrival and the excess is carried into the next phase.
* ``wait(parity)`` (``mbarrier.try_wait.parity``, what ``MBarrier.wait(stage, phase)`` emits with
  ``phase ^ phase_offset``) returns once the phase with that parity has completed, i.e. as soon as
  the barrier's current parity differs from ``parity``; it blocks while they are equal. A parity
  wait cannot tell phase k from phase k+2: if a barrier runs two phases ahead, a waiter hangs.
* ``PipelineState.advance()``: ``stage += 1``; on wrap to 0 the phase flips (depth 1: the phase
  flips every time). This is TVM's own code; ``tests/test_pipelines.py`` checks the simulator
  against it compiled for the CPU.

Role scripts
------------
A role is one warp or warpgroup that loops ``iterations`` times over its *script*, a list of ops
run once per iteration, all on the slot given by the role's own ``PipelineState``:

====================================  =================================================================
``("wait", "full")``                  ``full.wait(ps.stage, ps.phase)``: parity wait on full[stage]
``("wait", "empty")``                 ``empty.wait(ps.stage, ps.phase)`` (XOR ``empty_phase_offset``)
``("arrive", "empty")``               ``empty.arrive(ps.stage)``; ``("arrive", "empty", n)`` arrives n
``("arrive_expect_tx", "full", b)``   ``TMABar.arrive(ps.stage, b)``: expect b bytes + one arrival
``("expect_tx", "full", b)``          ``mbarrier.expect_tx`` b bytes, no arrival
``("complete_tx", "full", b)``        the TMA engine delivering b bytes to full[stage]
``("advance",)``                      ``ps.advance()``
====================================  =================================================================

Ops are plain tuples (a bare string works for ``"advance"``), so a protocol is easy to write in a
notebook cell::

    simulate(4, iterations=8, roles={
        "producer": [("wait", "empty"), ("arrive_expect_tx", "full", 8192),
                     ("complete_tx", "full", 8192), ("advance",)],
        "consumer": [("wait", "full"), ("arrive", "empty"), ("arrive", "empty"), ("advance",)],
    })

A dict role may also give ``"reset_every": n``: its PipelineState is re-created (stage 0, its start phase) every
``n`` iterations while the barriers keep their phases, as a ``PipelineState(...)`` written inside a persistent tile
loop does. A wait that then passes on a phase its role already passed on is a ``phase_mismatch``.

Scheduling: roles take turns, one op each (round robin); a role whose wait cannot pass is parked
on that barrier slot and woken when the slot's phase flips. The protocol's outcome (finish,
deadlock, skipped phase) does not depend on this order for Pipeline-style protocols; the order
only decides how the steps interleave in the trace.
"""

from __future__ import annotations

from txlab.pipelines.demo import cuda_target, demo_kernel  # noqa: F401 - re-exported
from txlab.pipelines.protocol import *  # noqa: F403 - the vocabulary (protocol.__all__), public here as before
from txlab.pipelines.simulator import simulate
from txlab.pipelines.spec import PipelineSpec, find_pipelines, from_kernel
from txlab.pipelines.trace import PipelineTrace

__all__ = [
    "simulate",
    "from_kernel",
    "find_pipelines",
    "Role",
    "PipelineTrace",
    "PipelineSpec",
    "Problem",
    "Deadlock",
    "BlockedWait",
    "Step",
    "Span",
    "BarrierSpec",
    "ScriptError",
]
