"""The local tuning engine's compile workers: plain Python processes on this machine, started on
first need and kept for the session (no daemon, no cluster, nothing to register with).

Each worker is ``python -m txlab.tune.pool`` with the GPUs hidden (compiling never needs one); it
imports TVM once at start-up (while the caller goes on) and then compiles one configuration per
request, writing the result into the shared disk cache (:mod:`txlab.cache`) and answering with the
row's summary. Requests and answers are length-prefixed pickles on the worker's stdin and a private
copy of its stdout (its fd 1 goes to stderr, so whatever a compile prints cannot corrupt the stream).

Why not ``concurrent.futures.ProcessPoolExecutor``: with the ``spawn`` start method (the only one
allowed here: nothing is forked after ``import tvm``) every child re-runs the top level of an
unguarded ``python my_sweep.py`` script; a worker started as a module of its own cannot. A
``build`` defined in a notebook cell or a closure travels by value through cloudpickle (the
standalone package when installed, else the copy Ray ships); a module-level one by reference.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor

_HEADER = struct.Struct("<Q")


def _write(stream, data: bytes) -> None:
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream) -> bytes | None:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    return data if len(data) == n else None


def dumps_build(build) -> bytes | None:
    """``build`` as bytes a worker can load: by reference when its module is importable there, else
    by value (cloudpickle). None when neither works (the sweep then compiles in this process)."""
    if getattr(build, "__module__", "__main__") not in ("__main__", None):
        try:
            return pickle.dumps(build)
        except Exception:  # noqa: BLE001 - a closure or a lambda: by value below
            pass
    try:
        import cloudpickle
    except ImportError:
        try:
            from ray import cloudpickle
        except ImportError:
            return None
    try:
        return cloudpickle.dumps(build)
    except Exception:  # noqa: BLE001 - something in it cannot be pickled at all
        return None


class _Worker:
    def __init__(self):
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = ""  # compiling needs no GPU context
        env["TXLAB_TUNE_ROLE"] = "compile"
        env["TXLAB_ISOLATION"] = "inline"
        # the caller's import path, so its build function's module (and this txlab) import there too
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths + env.get("PYTHONPATH", "").split(os.pathsep)))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "txlab.tune.pool"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=os.getcwd(),
        )
        self.builds: set = set()  # digests of the builds this worker holds

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, request: tuple):
        _write(self.proc.stdin, pickle.dumps(request))
        data = _read(self.proc.stdout)
        if data is None:
            raise RuntimeError(f"the compile worker (pid {self.proc.pid}) exited (status {self.proc.wait()})")
        status, value = pickle.loads(data)
        if status != "ok":
            raise RuntimeError(value)
        return value

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.proc.kill()


class Pool:
    """``n`` compile workers, booted at once (their ``import tvm`` overlaps the caller's work)."""

    def __init__(self, n: int):
        self.n = n
        self._idle = [_Worker() for _ in range(n)]
        self._all = list(self._idle)
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(n, thread_name_prefix="txlab-tune-compile")

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.alive():
                    return w
            w = _Worker()
            self._all.append(w)
            return w

    def _give(self, w: _Worker) -> None:
        with self._lock:
            if w.alive():
                self._idle.append(w)

    def _run(self, payload: bytes, digest: str, config: dict, arch: str, sources, max_spill_bytes: int):
        w = self._take()
        try:
            from txlab.cache import cache_root

            send = payload if digest not in w.builds else None
            out = w.call(
                (digest, send, config, arch, sources if send is not None else None, max_spill_bytes, str(cache_root()))
            )
            w.builds.add(digest)
            return out
        finally:
            self._give(w)

    def submit(self, payload: bytes, config: dict, arch: str, sources=None, max_spill_bytes: int = 0) -> Future:
        """Compile one configuration in a worker; the future's result is ``compile_one``'s summary."""
        import hashlib

        digest = hashlib.sha256(payload).hexdigest()
        return self._threads.submit(self._run, payload, digest, config, arch, sources, max_spill_bytes)

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        for w in self._all:
            w.close()
        self._all.clear()
        self._idle.clear()


_pool: Pool | None = None
_pool_lock = threading.Lock()


def workers_for(num_cpus: int | None) -> int:
    """Compile workers beside the calling process (which compiles too): one per core but one, and
    none where the cores are busy already (``num_cpus`` not given: the load average says how many
    are idle). A worker costs an ``import tvm`` (seconds) and pays off only on an idle core: on a
    busy 2-core machine the sweep is fastest in this process (0: compile here only)."""
    if num_cpus:
        return max(0, int(num_cpus) - 1)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        idle = cores - os.getloadavg()[0]
    except OSError:
        idle = cores
    return max(0, min(cores - 1, int(idle) - 1))


def pool(n: int) -> Pool:
    """The session's pool of ``n`` workers (kept between sweeps; rebuilt when ``n`` changes)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool.n != n:
            if _pool is not None:
                _pool.close()
            _pool = Pool(n)
        return _pool


def current(n: int) -> Pool | None:
    """The session's pool when it already has ``n`` workers running (booted by an earlier sweep)."""
    with _pool_lock:
        if _pool is not None and _pool.n == n and any(w.alive() for w in _pool._all):
            return _pool
        return None


def shutdown() -> None:
    """Stop the compile workers (the next sweep starts new ones)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.close()
            _pool = None


atexit.register(shutdown)


# ---- the worker process ------------------------------------------------------------------------
def _serve() -> None:
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # prints from a compile go to stderr
    if os.environ.get("TXLAB_TUNE_WORKER_TORCH", "0") != "1":
        sys.modules.setdefault("torch", None)  # tvm_ffi would import torch eagerly (~3 s)
    import txlab.compat  # noqa: F401  (imports TVM now, while the caller still prepares work)
    import txlab.tune.engine as E

    stdin = sys.stdin.buffer
    builds: dict = {}
    while True:
        data = _read(stdin)
        if data is None:
            return
        try:
            digest, payload, config, arch, sources, max_spill_bytes, root = pickle.loads(data)
            os.environ["TXLAB_CACHE_DIR"] = root  # the caller's cache, as it is now
            if payload is not None:
                E.install_sources(sources)
                builds[digest] = pickle.loads(payload)
            summary, _ = E.compile_one(builds[digest], config, arch, None, max_spill_bytes, files=False)
            reply = ("ok", summary)
        except BaseException as exc:  # noqa: BLE001 - reported to the sweep as this row's failure
            reply = ("error", f"{type(exc).__name__}: {exc}")
        _write(out, pickle.dumps(reply))


if __name__ == "__main__":
    _serve()
