"""GPU runs in a worker process that owns the CUDA context, so a faulting or hung kernel costs a
worker, never the notebook.

Why: an illegal address (or misaligned access, or trap) leaves a CUDA context unusable for the rest
of the process's life, and a kernel stuck in an ``mbarrier`` wait never returns. In the worker, each
becomes a :class:`txlab.KernelFault` raised in the notebook within a bounded time; the worker is
replaced in the background and the next run works.

How it works

* One long-lived worker, started on first use (or ahead of time with :func:`start`) with
  ``spawn``, and a standby booted in the background that takes over at once after a fault.
  Nothing is forked: ``import tvm`` initialises CUDA (seen on the H200 host), and a child forked
  from a process that did cannot use it. Each worker is its own process group; on a timeout the
  group is SIGKILLed and reaped.
* A worker boots in ~0.5 s on an H200 host: it imports TVM's runtime library only
  (``TVM_USE_RUNTIME_LIB``) and keeps torch out (``tvm_ffi`` would import it: ~3 s). It runs the
  library the notebook process exported for the kernel (TVM's host code + the cubin txlab built,
  ``export_library``, cached by ``Compiled.key``), so the worker runs exactly that binary and
  does no compiler work. Without a C/C++ compiler for the export, workers import all of TVM and
  rebuild the executable from the TVMScript text and the cubin.
* numpy arguments travel through shared memory (a pool of ``multiprocessing.shared_memory``
  segments reused across calls; the worker page-locks large ones with ``cudaHostRegister``), so
  each array is copied once into shared memory and DMA'd to the GPU from there — never pickled.
  Results are copied back into the caller's arrays only when the run succeeded: after a fault the
  caller's arrays are exactly as they were.
* torch CUDA tensors (and other DLPack GPU tensors) go through the same host staging: the parent
  copies them into shared memory, the worker runs on its own device copies, and the results are
  copied back into the caller's tensors on success. We chose this over CUDA IPC on purpose: with
  IPC the faulting process would write into the caller's live allocation, so a fault could leave
  half-written outputs, and a kernel writing far out of bounds could land in the caller's memory.
  The cost is two PCIe transfers per tensor; use ``txlab.config.isolation = "inline"`` when
  speed matters more than survival.
* Deadlines: the parent waits with a budget per phase. The kernel's budget (``timeout_s``,
  default ``txlab.config.timeout_s``) starts when the worker reports it launched; copies and the
  first build of an executable have their own, generous budgets. ``bench`` sends a heartbeat per
  completed launch, so the budget is per launch.
"""

from __future__ import annotations

from txlab.errors import KernelFault, classify, hint  # noqa: F401  (classify/hint: public here too)
from txlab.worker.child import child_main  # noqa: F401  (the spawned process's target; ncu_runner runs it)
from txlab.worker.client import bench, device_memory, run  # noqa: F401
from txlab.worker.library import library, library_errors  # noqa: F401
from txlab.worker.process import (  # noqa: F401
    BUILD_TIMEOUT_S,
    START_TIMEOUT_S,
    boot,
    start,
    status,
    stop,
)
from txlab.worker.staging import POOL_LIMIT_BYTES, PIN_MIN_BYTES, host_copy, pack_args, release_args  # noqa: F401
