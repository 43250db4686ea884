"""One request to the worker and its result (faults become :class:`txlab.KernelFault`), and the entry
points txlab.run calls: ``run``, ``bench``, ``device_memory``."""

from __future__ import annotations

import time

from txlab.errors import KernelFault, hint
from txlab.launch import fmt_shape, launch_shape
from txlab.worker.library import library, library_errors
from txlab.worker.process import BUILD_TIMEOUT_S, _boot, _Died, _ensure, _lock, _recv, _replace, _stats
from txlab.worker.staging import _pool, pack_args, release_args


def _request(compiled, args, op: str, options: dict, timeout_s: float | None):
    """Send one request and wait for its result; faults become KernelFault."""
    from txlab.settings import config

    budget = float(config.timeout_s if timeout_s is None else timeout_s)
    if budget <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
    with _lock:
        w = _boot(_ensure())
        spec, staged = pack_args(compiled, args, w)
        nbytes = sum(s[4] for s in spec if s[0] == "shm")
        copy_budget = 60.0 + nbytes / 1e9
        req = {
            "op": op,
            "key": compiled.key,
            "name": compiled.name,
            "args": spec,
            "options": options,
            "drop": list(_pool.dropped),
        }
        _pool.dropped.clear()
        if compiled.key not in w.keys:
            lib = library(compiled)
            if lib is not None:
                req.update(library=str(lib))
            else:
                req.update(
                    script=compiled.script,
                    arch=compiled.arch,
                    cubin=compiled.cubin,
                    library_error=library_errors.get(compiled.key),
                )
        t0 = time.monotonic()
        try:
            w.conn.send(("run", req))
            msg = _recv(
                w,
                copy_budget,
                {
                    "build": BUILD_TIMEOUT_S,
                    "upload": copy_budget,
                    "launched": budget,
                    "bench": budget,
                    "download": copy_budget,
                },
            )
        except TimeoutError as exc:
            phase, waited = exc.args
            _stats["faults"] += 1
            _replace(w)
            release_args(staged)
            shape = launch_shape(compiled, args)
            where = dict(kernel=_kernel_name(compiled), launch=shape, waited_s=waited, worker_replaced=True)
            if phase in ("launched", "bench"):
                raise KernelFault(
                    "timeout",
                    f"{_which(compiled)} {fmt_shape(shape)} did not finish within "
                    f"{budget:g} s (waited {waited:.1f} s); the worker was killed and replaced, your "
                    f"arrays are unchanged. Likely: {hint('timeout')}. Raise the budget with "
                    f"timeout_s=... if the kernel is just slow.",
                    hint=hint("timeout"),
                    **where,
                ) from None
            raise KernelFault(
                "worker_died",
                f"the GPU worker did not answer during '{phase}' of "
                f"{compiled.name} for {waited:.1f} s; it was killed and replaced",
                **where,
            ) from None
        except (_Died, BrokenPipeError, OSError) as exc:
            _stats["faults"] += 1
            code = w.proc.exitcode
            _replace(w)
            release_args(staged)
            raise KernelFault(
                "worker_died",
                f"the GPU worker died while running {compiled.name} "
                f"(exit code {code}; {exc}); it was replaced, your arrays are unchanged",
                kernel=_kernel_name(compiled),
                launch=launch_shape(compiled, args),
                waited_s=time.monotonic() - t0,
                worker_replaced=True,
            ) from None
        status_, payload = msg
        if status_ == "ok":
            w.keys.add(compiled.key)
            _stats["last_executable_from"] = payload.get("executable_from")
            try:
                for seg, view, back, host in staged:
                    if view is not None:
                        back(view.view(host.dtype).reshape(host.shape) if host.dtype.itemsize else view)
            finally:
                release_args(staged)
            return payload
        release_args(staged)
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
            tail = (
                " The CUDA context was unusable afterwards, so the worker was replaced; your "
                "arrays are unchanged and the next run starts clean."
                if replaced
                else " The worker is still healthy; your arrays are unchanged."
            )
            raise KernelFault(
                kind,
                f"{_which(compiled)} {fmt_shape(shape)}: {payload['message']}." + tail,
                kernel=_kernel_name(compiled),
                launch=shape,
                waited_s=payload.get("elapsed_s"),
                worker_replaced=replaced,
                cuda_error=payload.get("cuda_error"),
                hint=hint(kind),
            )
        if status_ == "input":
            from txlab.errors import InputError

            raise InputError(payload["message"], param=payload.get("param"))
        raise RuntimeError(f"txlab worker: {payload.get('message')}")


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


def bench(
    compiled, args, *, warmup: int, rep: int, flush_l2: bool, l2_bytes: int, timeout_s: float | None = None
) -> list[float]:
    """Per-launch times (ms) measured in the worker with CUDA events."""
    out = _request(
        compiled,
        list(args),
        "bench",
        {"warmup": warmup, "rep": rep, "flush_l2": flush_l2, "l2_bytes": l2_bytes},
        timeout_s,
    )
    return out["times_ms"]


def device_memory() -> dict:
    """Device-wide free/total bytes as the worker's CUDA context sees them (starts the worker)."""
    with _lock:
        w = _boot(_ensure())
        w.conn.send(("meminfo", {}))
        msg = _recv(w, 30.0, {})
        return msg[1]
