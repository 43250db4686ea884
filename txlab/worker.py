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

import atexit
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from txlab.errors import KernelFault, classify, hint  # noqa: F401  (classify/hint: public here too)
from txlab.launch import fmt_shape, launch_shape, short_message, timed_launches

#: seconds a new worker may take to import TVM and create its CUDA context
START_TIMEOUT_S = 120.0
#: seconds the worker may take to rebuild an executable (parse + lower + link, no nvcc)
BUILD_TIMEOUT_S = 120.0
#: bytes of shared memory kept for reuse between calls
POOL_LIMIT_BYTES = 4 << 30
#: segments at least this large are page-locked in the worker (faster DMA)
PIN_MIN_BYTES = 1 << 20

# =============================================================================================
# parent side
@dataclass
class _Proc:
    proc: object
    conn: object
    pid: int
    started: float
    ready: bool = False
    boot: dict = field(default_factory=dict)
    keys: set = field(default_factory=set)
    shm_known: set = field(default_factory=set)


_lock = threading.RLock()
_current: _Proc | None = None
#: a second worker, booted in the background, that takes over at once when the current one is
#: replaced after a fault
_standby: _Proc | None = None
_stats = {"started": 0, "replaced": 0, "faults": 0, "standby_used": 0, "last_executable_from": None}


def _context():
    import multiprocessing as mp

    return mp.get_context("spawn")


def start() -> None:
    """Start the worker in the background if none is running (returns at once)."""
    with _lock:
        _ensure()


def boot() -> dict:
    """Start the worker if none is running and wait until it is ready (TVM imported, CUDA context
    created); returns :func:`status`. Raises :class:`txlab.KernelFault` if it cannot start."""
    with _lock:
        _boot(_ensure())
    return status()


def _tvm_mode() -> str:
    """What a worker imports: ``"runtime"`` (TVM's runtime library only, ~2x faster to import: the
    worker then only loads libraries the notebook process exported) when a C/C++ compiler is on
    PATH for ``export_library``, else ``"full"`` (it rebuilds executables from TVMScript).
    ``TXLAB_WORKER_TVM=runtime|full`` overrides."""
    mode = os.environ.get("TXLAB_WORKER_TVM", "")
    if mode in ("runtime", "full"):
        return mode
    import shutil

    # the compilers tvm.support.cc.get_cc() would pick (without importing TVM here)
    found = os.environ.get("CXX") or os.environ.get("CC") or any(
        shutil.which(c) for c in ("g++", "gcc", "clang++", "clang", "c++", "cc"))
    return "runtime" if found else "full"


def _new_proc() -> _Proc:
    ctx = _context()
    parent_conn, child_conn = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_child_main, args=(child_conn, _tvm_mode()), name="txlab-worker", daemon=True)
    proc.start()
    child_conn.close()
    _stats["started"] += 1
    return _Proc(proc=proc, conn=parent_conn, pid=proc.pid, started=time.monotonic())


def _ensure() -> _Proc:
    global _current, _standby
    if _current is not None and _current.proc.is_alive():
        return _current
    if _current is not None:
        _discard(_current)
    if _standby is not None and _standby.proc.is_alive():
        _current, _standby = _standby, None
        _stats["standby_used"] += 1
    else:
        _current = _new_proc()
    return _current


def _start_standby() -> None:
    """Boot a spare worker in the background (``TXLAB_WORKER_STANDBY=0`` turns this off)."""
    global _standby
    if os.environ.get("TXLAB_WORKER_STANDBY", "1") == "0":
        return
    if _standby is None or not _standby.proc.is_alive():
        if _standby is not None:
            _discard(_standby)
        _standby = _new_proc()


def _kill(w: _Proc) -> None:
    for sig_target in (lambda: os.killpg(w.pid, signal.SIGKILL), lambda: os.kill(w.pid, signal.SIGKILL)):
        try:
            sig_target()
            break
        except (ProcessLookupError, PermissionError, OSError):
            continue


def _discard(w: _Proc, *, kill: bool = True, join_s: float = 5.0) -> None:
    """Kill (if asked), reap and forget a worker. Never blocks longer than ``join_s``."""
    global _current, _standby
    if kill and w.proc.is_alive():
        _kill(w)
    w.proc.join(join_s)
    if w.proc.is_alive():  # stuck in the driver's teardown: reap it later, off the caller's path
        threading.Thread(target=w.proc.join, daemon=True, name="txlab-reaper").start()
    try:
        w.conn.close()
    except OSError:
        pass
    if _current is w:
        _current = None
    if _standby is w:
        _standby = None


def _replace(w: _Proc) -> None:
    _discard(w)
    _stats["replaced"] += 1
    _ensure()  # the standby takes over (or a replacement boots while the user reads the error)
    _start_standby()


def stop() -> None:
    """Stop the worker (the next GPU run starts a new one)."""
    with _lock:
        for w in (_current, _standby):
            if w is None:
                continue
            try:
                w.conn.send(("exit", {}))
                w.proc.join(2.0)
            except (OSError, BrokenPipeError):
                pass
            _discard(w)


atexit.register(lambda: (stop(), _pool.close_all()))


def status() -> dict:
    """The worker's pid, whether it is alive and booted, its start method and counters."""
    with _lock:
        w = _current
        return {"pid": w.pid if w else None, "alive": bool(w and w.proc.is_alive()),
                "ready": bool(w and w.ready), "start_method": "spawn", **_stats,
                "boot": dict(w.boot) if w else {}, "executables": len(w.keys) if w else 0,
                "standby": bool(_standby and _standby.proc.is_alive())}


class _Died(Exception):
    pass


def _recv(w: _Proc, budget_s: float, phase_budgets: dict):
    """Next non-heartbeat message. Heartbeats ``("beat", phase)`` restart the clock with the
    phase's budget. Raises TimeoutError((phase, waited_s)) or _Died."""
    phase, t_phase = "request", time.monotonic()
    while True:
        left = budget_s - (time.monotonic() - t_phase)
        if left <= 0:
            raise TimeoutError(phase, time.monotonic() - t_phase)
        try:
            ready = w.conn.poll(min(left, 0.25))
        except (OSError, EOFError) as exc:
            raise _Died(str(exc)) from None
        if not ready:
            if not w.proc.is_alive():
                raise _Died(f"exit code {w.proc.exitcode}")
            continue
        try:
            msg = w.conn.recv()
        except (EOFError, OSError) as exc:
            raise _Died(str(exc)) from None
        if msg[0] == "beat":
            phase, t_phase = msg[1], time.monotonic()
            budget_s = phase_budgets.get(phase, budget_s)
            continue
        return msg


def _boot(w: _Proc) -> _Proc:
    """Wait for a worker's ready message; returns the worker, ready."""
    if w.ready:
        return w
    try:
        msg = _recv(w, START_TIMEOUT_S, {})
    except TimeoutError:
        _discard(w)
        raise KernelFault("worker_died", f"the GPU worker did not start within {START_TIMEOUT_S:.0f} s "
                          "(importing TVM and creating the CUDA context)") from None
    except _Died as exc:
        _discard(w, kill=False)
        raise KernelFault("worker_died", f"the GPU worker exited while starting ({exc})") from None
    if msg[0] == "init_failed":
        _discard(w)
        raise KernelFault("cuda_error", f"the GPU worker could not initialise CUDA: {msg[1]['error']}")
    w.ready = True
    w.boot = msg[1]
    _start_standby()
    return w


# ---- shared-memory pool ------------------------------------------------------------------------
class _Pool:
    """Shared-memory segments reused across calls (sizes rounded up to powers of two)."""

    def __init__(self):
        self.free: dict[int, list] = {}
        self.all: dict[str, object] = {}
        self.dropped: list[str] = []

    def take(self, nbytes: int):
        from multiprocessing import shared_memory

        size = 1 << max(12, (max(nbytes, 1) - 1).bit_length())
        bucket = self.free.get(size)
        if bucket:
            return bucket.pop()
        self._trim(size)
        seg = shared_memory.SharedMemory(create=True, size=size)
        self.all[seg.name] = seg
        return seg

    def give(self, seg):
        self.free.setdefault(seg.size, []).append(seg)

    def _trim(self, incoming: int):
        total = sum(s.size for s in self.all.values()) + incoming
        for size in sorted(self.free, reverse=True):
            while total > POOL_LIMIT_BYTES and self.free[size]:
                seg = self.free[size].pop()
                total -= seg.size
                self._unlink(seg)

    def _unlink(self, seg):
        self.all.pop(seg.name, None)
        self.dropped.append(seg.name)
        try:
            seg.close()
            seg.unlink()
        except (FileNotFoundError, BufferError):
            pass

    def close_all(self):
        for seg in list(self.all.values()):
            self._unlink(seg)
        self.free.clear()


_pool = _Pool()


def _view(seg, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.ndarray(shape, dtype=dtype, buffer=seg.buf[:n]) if n else np.empty(shape, dtype)


def _host_copy(value):
    """(numpy array with the value's contents, write-back function or None)."""
    if isinstance(value, np.ndarray):
        return value, (lambda src, dst=value: np.copyto(dst, src) if dst.flags.writeable else None)
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch

        if value.is_cuda:
            torch.cuda.current_stream(value.device).synchronize()
        host = value.detach().cpu().numpy() if value.dtype != torch.bfloat16 else \
            value.detach().view(torch.int16).cpu().numpy()

        def back(src, dst=value):
            t = torch.from_numpy(np.ascontiguousarray(src))
            if dst.dtype == torch.bfloat16:
                t = t.view(torch.int16).view(torch.bfloat16) if t.dtype != torch.bfloat16 else t
            dst.copy_(t.view(dst.dtype) if t.dtype != dst.dtype else t)
            if dst.is_cuda:
                torch.cuda.current_stream(dst.device).synchronize()
        return host, back
    import tvm

    t = value if mod.startswith("tvm") else tvm.runtime.from_dlpack(value)
    return t.numpy(), (lambda src, dst=t: dst.copyfrom(src))


def _pack(compiled, args, w: _Proc):
    """Request arguments, the (segment, view, write-back) list and shared-memory bytes used."""
    spec, staged = [], []
    for p, v in zip(compiled.entry_params, args):
        if p["kind"] == "scalar":
            spec.append(("scalar", v.item() if isinstance(v, np.generic) else v))
            continue
        host, back = _host_copy(v)
        nbytes = host.nbytes
        seg = _pool.take(nbytes)
        view = np.ndarray((nbytes,), np.uint8, buffer=seg.buf[:nbytes]) if nbytes else None
        if nbytes:
            np.copyto(view, np.ascontiguousarray(host).reshape(-1).view(np.uint8))
        staged.append((seg, view, back, host))
        spec.append(("shm", seg.name, tuple(int(s) for s in host.shape), p["dtype"], nbytes))
    return spec, staged


def _request(compiled, args, op: str, options: dict, timeout_s: float | None):
    """Send one request and wait for its result; faults become KernelFault."""
    from txlab.settings import config

    budget = float(config.timeout_s if timeout_s is None else timeout_s)
    if budget <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
    with _lock:
        w = _boot(_ensure())
        spec, staged = _pack(compiled, args, w)
        nbytes = sum(s[4] for s in spec if s[0] == "shm")
        copy_budget = 60.0 + nbytes / 1e9
        req = {"op": op, "key": compiled.key, "name": compiled.name, "args": spec, "options": options,
               "drop": list(_pool.dropped)}
        _pool.dropped.clear()
        if compiled.key not in w.keys:
            lib = _library(compiled)
            if lib is not None:
                req.update(library=str(lib))
            else:
                req.update(script=compiled.script, arch=compiled.arch, cubin=compiled.cubin,
                           library_error=_library_errors.get(compiled.key))
        t0 = time.monotonic()
        try:
            w.conn.send(("run", req))
            msg = _recv(w, copy_budget, {"build": BUILD_TIMEOUT_S, "upload": copy_budget,
                                         "launched": budget, "bench": budget, "download": copy_budget})
        except TimeoutError as exc:
            phase, waited = exc.args
            _stats["faults"] += 1
            _replace(w)
            _release(staged)
            shape = launch_shape(compiled, args)
            if phase in ("launched", "bench"):
                raise KernelFault(
                    "timeout", f"{_which(compiled)} {fmt_shape(shape)} did not finish within "
                    f"{budget:g} s (waited {waited:.1f} s); the worker was killed and replaced, your "
                    f"arrays are unchanged. Likely: {hint('timeout')}. Raise the budget with "
                    f"timeout_s=... if the kernel is just slow.",
                    kernel=_kernel_name(compiled), launch=shape, waited_s=waited, worker_replaced=True,
                    hint=hint("timeout")) from None
            raise KernelFault("worker_died", f"the GPU worker did not answer during '{phase}' of "
                              f"{compiled.name} for {waited:.1f} s; it was killed and replaced",
                              kernel=_kernel_name(compiled), launch=shape, waited_s=waited,
                              worker_replaced=True) from None
        except (_Died, BrokenPipeError, OSError) as exc:
            _stats["faults"] += 1
            code = w.proc.exitcode
            _replace(w)
            _release(staged)
            raise KernelFault("worker_died", f"the GPU worker died while running {compiled.name} "
                              f"(exit code {code}; {exc}); it was replaced, your arrays are unchanged",
                              kernel=_kernel_name(compiled), launch=launch_shape(compiled, args),
                              waited_s=time.monotonic() - t0, worker_replaced=True) from None
        status_, payload = msg
        if status_ == "ok":
            w.keys.add(compiled.key)
            _stats["last_executable_from"] = payload.get("executable_from")
            try:
                for seg, view, back, host in staged:
                    if view is not None:
                        back(view.view(host.dtype).reshape(host.shape) if host.dtype.itemsize else view)
            finally:
                _release(staged)
            return payload
        _release(staged)
        if status_ == "fault":
            _stats["faults"] += 1
            replaced = payload.get("poisoned", False)
            if replaced:
                w.proc.join(5.0)
                _replace(w)
            elif payload.get("built"):
                w.keys.add(compiled.key)
            kind = payload["kind"]
            shape = launch_shape(compiled, args)
            tail = (" The CUDA context was unusable afterwards, so the worker was replaced; your "
                    "arrays are unchanged and the next run starts clean." if replaced else
                    " The worker is still healthy; your arrays are unchanged.")
            raise KernelFault(kind, f"{_which(compiled)} {fmt_shape(shape)}: {payload['message']}." + tail,
                              kernel=_kernel_name(compiled), launch=shape,
                              waited_s=payload.get("elapsed_s"), worker_replaced=replaced,
                              cuda_error=payload.get("cuda_error"), hint=hint(kind))
        if status_ == "input":
            from txlab.errors import InputError

            raise InputError(payload["message"], param=payload.get("param"))
        raise RuntimeError(f"txlab worker: {payload.get('message')}")


_libraries: dict[str, object] = {}
_library_errors: dict[str, str] = {}


def _library(compiled):
    """The kernel's executable exported as a shared library (TVM's host code + txlab's cubin), built
    once in this process and kept in the compile cache; workers load it with ``load_module``
    instead of re-parsing and re-lowering the TVMScript text (no TVM compiler work in a worker, and
    no printer/parser round trip, which TVM 0.27 cannot do for every kernel). None if it cannot be
    exported (no C++ compiler): the worker then rebuilds from the script."""
    key = compiled.key
    if not key:  # nothing to name the library by: the worker rebuilds from the script
        return None
    if key in _libraries:
        return _libraries[key]
    try:
        from txlab import build, cache

        # verified against its digest on every use: a truncated or replaced library is rebuilt
        path = cache.verified_file(f"lib/{key}.so", lambda tmp: build.executable(
            compiled.lowered, compiled.cubin).export_library(str(tmp)))
    except Exception as exc:  # noqa: BLE001 - fall back to the script path, which reports its own errors
        _library_errors[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        path = None
    _libraries[key] = path
    return path


def _release(staged):
    for seg, *_ in reversed(staged):  # LIFO: the next call gets the same segment per argument
        _pool.give(seg)


def _kernel_name(compiled):
    ks = list(compiled.launch)
    return ks[0] if len(ks) == 1 else (", ".join(ks) or compiled.name)


def _which(compiled):
    ks = list(compiled.launch)
    if len(ks) == 1:
        return f"kernel {ks[0]}"
    return f"{compiled.name} (one of kernels {', '.join(ks)})" if ks else compiled.name


# ---- public entry points (called by txlab.run) -----------------------------------------------
def run(compiled, args, *, timeout_s: float | None = None) -> None:
    """Launch ``compiled`` once in the worker; numpy/torch outputs are written back on success."""
    _request(compiled, list(args), "launch", {}, timeout_s)


def bench(compiled, args, *, warmup: int, rep: int, flush_l2: bool, l2_bytes: int,
          timeout_s: float | None = None) -> list[float]:
    """Per-launch times (ms) measured in the worker with CUDA events."""
    out = _request(compiled, list(args), "bench",
                   {"warmup": warmup, "rep": rep, "flush_l2": flush_l2, "l2_bytes": l2_bytes}, timeout_s)
    return out["times_ms"]


def device_memory() -> dict:
    """Device-wide free/total bytes as the worker's CUDA context sees them (starts the worker)."""
    with _lock:
        w = _boot(_ensure())
        w.conn.send(("meminfo", {}))
        msg = _recv(w, 30.0, {})
        return msg[1]


# =============================================================================================
# worker side
def _child_main(conn, tvm_mode: str = "full") -> None:
    try:
        os.setsid()  # own process group: the parent can SIGKILL everything it spawned
    except OSError:
        pass
    t0 = time.perf_counter()
    try:
        import sys

        # tvm_ffi imports torch eagerly when it is installed (~3 s on the H200 host, 3/4 of a boot);
        # the worker never touches torch (tensors arrive as host bytes), so keep it out.
        if os.environ.get("TXLAB_WORKER_TORCH", "0") != "1":
            sys.modules.setdefault("torch", None)
        if tvm_mode == "runtime":
            os.environ["TVM_USE_RUNTIME_LIB"] = "1"  # read by tvm.base at import: no compiler library
        import tvm

        if tvm.base._RUNTIME_ONLY:  # runtime-only skips the backends: load the CUDA module loader
            from tvm_ffi.libinfo import load_lib_ctypes

            runtime_dir = Path(tvm.base._LOADED_LIBS["tvm_runtime"]._name).resolve().parent
            tvm.base._LOADED_LIBS["tvm_runtime_cuda"] = load_lib_ctypes(
                "tvm", "tvm_runtime_cuda", "RTLD_LOCAL", extra_lib_paths=[runtime_dir])
        from cuda.bindings import runtime as rt

        t_import = time.perf_counter()
        (err,) = rt.cudaSetDevice(0)[:1]
        if err == rt.cudaError_t.cudaSuccess:
            (err,) = rt.cudaFree(0)[:1]
        if err != rt.cudaError_t.cudaSuccess:
            conn.send(("init_failed", {"error": err.name}))
            return
        err, free, total = rt.cudaMemGetInfo()
    except Exception as exc:  # noqa: BLE001 - report anything that stops the worker booting
        conn.send(("init_failed", {"error": f"{type(exc).__name__}: {exc}"}))
        return
    t_ready = time.perf_counter()
    conn.send(("ready", {"pid": os.getpid(), "tvm": "runtime" if tvm.base._RUNTIME_ONLY else "full",
                         "boot_s": t_ready - t0, "import_s": t_import - t0,
                         "cuda_context_s": t_ready - t_import,
                         "free_bytes": int(free), "total_bytes": int(total)}))
    state = _ChildState()
    while True:
        try:
            kind, req = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if kind == "exit":
            return
        if kind == "meminfo":
            err, free, total = rt.cudaMemGetInfo()
            conn.send(("ok", {"free_bytes": int(free), "total_bytes": int(total)}))
            continue
        reply, poisoned = state.handle(req, lambda phase: conn.send(("beat", phase)))
        conn.send(reply)
        if poisoned:
            os._exit(3)  # a sticky CUDA error: this context is finished


class _ChildState:
    def __init__(self):
        self.exes: dict[str, object] = {}
        self.loaded_from: dict[str, str] = {}  # key -> "library" (exported .so) or "script" (rebuilt)
        self.shm: dict[str, object] = {}
        self.pinned: set[str] = set()
        self.device: dict[tuple, object] = {}
        self.device_key = None

    def _segment(self, name: str):
        seg = self.shm.get(name)
        if seg is None:
            import sys
            from multiprocessing import shared_memory

            # The parent owns (and unlinks) the segment; the worker only maps it. Python < 3.13
            # registers an attached segment with the resource tracker, which the worker shares
            # with the parent (spawn passes its fd): that duplicate registration is harmless,
            # while unregistering here would make the parent's unlink raise KeyError there.
            seg = (shared_memory.SharedMemory(name=name, track=False) if sys.version_info >= (3, 13)
                   else shared_memory.SharedMemory(name=name))
            self.shm[name] = seg
            if seg.size >= PIN_MIN_BYTES:
                from cuda.bindings import runtime as rt

                ptr = np.frombuffer(seg.buf, np.uint8).ctypes.data
                (err,) = rt.cudaHostRegister(ptr, seg.size, rt.cudaHostRegisterPortable)[:1]
                if err == rt.cudaError_t.cudaSuccess:
                    self.pinned.add(name)
                else:
                    rt.cudaGetLastError()
        return seg

    def _drop(self, names):
        from cuda.bindings import runtime as rt

        for name in names:
            seg = self.shm.pop(name, None)
            if seg is None:
                continue
            if name in self.pinned:
                rt.cudaHostUnregister(np.frombuffer(seg.buf, np.uint8).ctypes.data)
                self.pinned.discard(name)
            try:
                seg.close()
            except BufferError:
                pass

    def _executable(self, req):
        exe = self.exes.get(req["key"])
        if exe is None and "library" in req:
            import tvm

            exe = tvm.runtime.Executable(tvm.runtime.load_module(req["library"]))
            self.exes[req["key"]] = exe
            self.loaded_from[req["key"]] = "library"
        if exe is None:
            if "script" not in req:
                raise RuntimeError("the parent did not send the kernel (stale executable cache)")
            import tvm

            if tvm.base._RUNTIME_ONLY:
                raise RuntimeError("the kernel's library could not be exported in the notebook process "
                                   f"({req.get('library_error') or 'unknown reason'}) and this worker has "
                                   "TVM's runtime only; set TXLAB_WORKER_TVM=full before the first GPU run")
            from tvm.script import from_source

            import txlab.compat  # noqa: F401  (the same TVM workarounds the parent compiled with)
            from txlab import build

            # TVM 0.27 cannot serialise a lowered module (save_json of the host module crashes),
            # so without an exported library the worker parses and lowers the kernel itself
            lowered = build.lower(from_source(req["script"]), req["arch"], req["name"])
            exe = build.executable(lowered, bytes(req["cubin"]))
            self.exes[req["key"]] = exe
            self.loaded_from[req["key"]] = "script"
        return exe

    def handle(self, req, beat):
        from cuda.bindings import runtime as rt

        t0 = time.perf_counter()
        built = False
        stage = "build"
        try:
            self._drop(req.get("drop", ()))
            beat("build")
            exe = self._executable(req)
            built = True
            beat("upload")
            stage = "upload"
            import ctypes

            import tvm
            from tvm.runtime import _ffi_api

            dev = tvm.cuda(0)
            if req["key"] != self.device_key:  # keep device buffers of the latest kernel only
                self.device, self.device_key = {}, req["key"]
            dev_args, outs = [], []
            for i, a in enumerate(req["args"]):
                if a[0] == "scalar":
                    dev_args.append(a[1])
                    continue
                _, name, shape, dtype, nbytes = a
                seg = self._segment(name)
                k = (i, shape, dtype)  # one device tensor per argument slot of the current kernel
                t = self.device.get(k)
                if t is None:
                    t = tvm.runtime.empty(shape, dtype, dev)
                    self.device[k] = t
                ptr = np.frombuffer(seg.buf, np.uint8).ctypes.data
                if nbytes:
                    _ffi_api.TVMTensorCopyFromBytes(t, ctypes.c_void_p(ptr), nbytes)
                dev_args.append(t)
                outs.append((t, ptr, nbytes))
            stage = "launch"
            out = {}
            if req["op"] == "bench":
                o = req["options"]
                beat("bench")  # from here on the per-launch budget applies, not the copy budget
                out["times_ms"] = timed_launches(exe, dev_args, warmup=o["warmup"], rep=o["rep"],
                                                  flush_l2=o["flush_l2"], l2_bytes=o["l2_bytes"],
                                                  beat=lambda i: beat("bench"))
            else:
                beat("launched")
                exe(*dev_args)
                (err,) = rt.cudaDeviceSynchronize()[:1]
                if err != rt.cudaError_t.cudaSuccess:
                    raise _CudaFailure(err.name)
            beat("download")
            stage = "download"
            for t, ptr, nbytes in outs:
                if nbytes:
                    _ffi_api.TVMTensorCopyToBytes(t, ctypes.c_void_p(ptr), nbytes)
            out["elapsed_s"] = time.perf_counter() - t0
            out["executable_from"] = self.loaded_from.get(req["key"])
            return ("ok", out), False
        except Exception as exc:  # noqa: BLE001 - every failure is reported, typed, to the parent
            text = exc.args[0] if isinstance(exc, _CudaFailure) else f"{type(exc).__name__}: {exc}"
            first = next((l for l in str(text).splitlines() if l.strip()), str(text))
            poisoned = _context_poisoned()
            if stage == "build" and not poisoned:
                return ("error", {"message": f"could not rebuild the executable: {first}"}), False
            kind = classify(str(text))
            if kind == "cuda_error" and not poisoned and _looks_like_arg_check(str(text)):
                return ("input", {"message": first}), False
            if kind == "cuda_error" and not poisoned and not _looks_like_cuda(str(text)):
                return ("error", {"message": first}), False
            return ("fault", {"kind": kind, "message": short_message(first), "cuda_error": _cuda_name(str(text)),
                              "poisoned": poisoned, "built": built,
                              "elapsed_s": time.perf_counter() - t0}), poisoned


class _CudaFailure(Exception):
    pass


def _context_poisoned() -> bool:
    """True if the CUDA context is unusable (a sticky error): synchronize still fails."""
    from cuda.bindings import runtime as rt

    try:
        (err,) = rt.cudaDeviceSynchronize()[:1]
        if err != rt.cudaError_t.cudaSuccess:
            return True
        rt.cudaGetLastError()  # clear a non-sticky error
        (err,) = rt.cudaDeviceSynchronize()[:1]
        return err != rt.cudaError_t.cudaSuccess
    except Exception:  # noqa: BLE001
        return True


def _cuda_name(text: str) -> str | None:
    import re

    m = re.search(r"\b(cudaError\w+|CUDA_ERROR_\w+)", text)
    return m.group(1) if m else None


def _looks_like_cuda(text: str) -> bool:
    return _cuda_name(text) is not None or "CUDA" in text


def _looks_like_arg_check(text: str) -> bool:
    return any(s in text for s in ("Argument", "argument", "shape", "dtype", "Expect", "expected"))
