"""The worker side: the request loop of a spawned worker process (TVM runtime only), its CUDA
state, and telling CUDA faults and argument-check failures apart."""

from __future__ import annotations

import os
import time

import numpy as np

from txlab.errors import classify
from txlab.launch import short_message, timed_launches
from txlab.worker.staging import PIN_MIN_BYTES


def child_main(conn, tvm_mode: str = "full") -> None:
    """A worker process's life: boot TVM (``tvm_mode`` "runtime": its runtime library only, or "full"),
    report ready on ``conn``, then serve requests until told to stop or the pipe closes."""
    try:
        os.setsid()  # own process group: the parent can SIGKILL everything it spawned
    except OSError:
        pass
    t0 = time.perf_counter()
    try:
        from txlab.worker.boot import import_tvm

        # the worker never touches torch (tensors arrive as host bytes): kept out unless asked
        tvm = import_tvm(tvm_mode == "runtime", allow_torch=os.environ.get("TXLAB_WORKER_TORCH", "0") == "1")
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
    conn.send(
        (
            "ready",
            {
                "pid": os.getpid(),
                "tvm": "runtime" if tvm.base._RUNTIME_ONLY else "full",
                "boot_s": t_ready - t0,
                "import_s": t_import - t0,
                "cuda_context_s": t_ready - t_import,
                "free_bytes": int(free),
                "total_bytes": int(total),
            },
        )
    )
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
            seg = (
                shared_memory.SharedMemory(name=name, track=False)
                if sys.version_info >= (3, 13)
                else shared_memory.SharedMemory(name=name)
            )
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
                raise RuntimeError(
                    "the kernel's library could not be exported in the notebook process "
                    f"({req.get('library_error') or 'unknown reason'}) and this worker has "
                    "TVM's runtime only; set TXLAB_WORKER_TVM=full before the first GPU run"
                )
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
                out["times_ms"] = timed_launches(
                    exe,
                    dev_args,
                    warmup=o["warmup"],
                    rep=o["rep"],
                    flush_l2=o["flush_l2"],
                    l2_bytes=o["l2_bytes"],
                    beat=lambda i: beat("bench"),
                )
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
            return (
                "fault",
                {
                    "kind": kind,
                    "message": short_message(first),
                    "cuda_error": _cuda_name(str(text)),
                    "poisoned": poisoned,
                    "built": built,
                    "elapsed_s": time.perf_counter() - t0,
                },
            ), poisoned


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
