"""The worker processes: a long-lived worker spawned on first use and a booted standby, their
replacement after a fault, status, and reading their replies within a budget per phase."""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
from dataclasses import dataclass, field

from txlab.errors import KernelFault
from txlab.worker.child import child_main
from txlab.worker.staging import _pool

#: seconds a new worker may take to import TVM and create its CUDA context
START_TIMEOUT_S = 120.0
#: seconds the worker may take to rebuild an executable (parse + lower + link, no nvcc)
BUILD_TIMEOUT_S = 120.0


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
    found = (
        os.environ.get("CXX")
        or os.environ.get("CC")
        or any(shutil.which(c) for c in ("g++", "gcc", "clang++", "clang", "c++", "cc"))
    )
    return "runtime" if found else "full"


def _new_proc() -> _Proc:
    ctx = _context()
    parent_conn, child_conn = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=child_main, args=(child_conn, _tvm_mode()), name="txlab-worker", daemon=True)
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
        return {
            "pid": w.pid if w else None,
            "alive": bool(w and w.proc.is_alive()),
            "ready": bool(w and w.ready),
            "start_method": "spawn",
            **_stats,
            "boot": dict(w.boot) if w else {},
            "executables": len(w.keys) if w else 0,
            "standby": bool(_standby and _standby.proc.is_alive()),
        }


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
        raise KernelFault(
            "worker_died",
            f"the GPU worker did not start within {START_TIMEOUT_S:.0f} s "
            "(importing TVM and creating the CUDA context)",
        ) from None
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
