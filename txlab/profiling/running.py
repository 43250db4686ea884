"""Profiling a kernel: ncu on ``python -m txlab.ncu_runner`` (the isolated worker's request loop) with
a cubin built with ``-lineinfo``; a fault or hang is a typed error."""

from __future__ import annotations

import os
import time
from pathlib import Path

from txlab.compiler import with_lineinfo  # noqa: F401  (public here too: txlab.profiling.with_lineinfo)
from txlab.profiling.measurements import Profile
from txlab.profiling.shipped import saved, saved_names


def _describe_args(args) -> str:
    import numpy as np

    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(f"{a.dtype}{list(a.shape)}")
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            out.append(f"{str(a.dtype).removeprefix('torch.')}{list(a.shape)}")
        else:
            out.append(repr(a))
    return ", ".join(out)


def profile(
    compiled,
    *args,
    kernel: str | None = None,
    sections=None,
    metrics=(),
    timeout_s: float = 300.0,
    report_path=None,
    launch_skip: int = 0,
) -> Profile:
    """Run ``compiled(*args)`` once under Nsight Compute and return its :class:`Profile`.

    ``sections``: ncu section identifiers (default :data:`txlab.ncu.DEFAULT_SECTIONS`);
    ``metrics``: extra ncu metric names. ``kernel``: which device kernel (default the first).
    ``report_path``: where to keep the ``.ncu-rep`` (default: a temporary file, deleted).
    ``timeout_s`` bounds the whole profiling run (ncu replays the kernel once per pass).

    The launch happens in a process of its own (a fault is a :class:`txlab.KernelFault`, a hang
    is killed after ``timeout_s``); arguments are checked first. Needs a GPU and ``ncu``;
    raises :class:`txlab.errors.ProfilerError` naming what is missing (e.g. counter permission).
    """
    import sys
    import tempfile

    from txlab import ncu, worker
    from txlab.device import require_gpu
    from txlab.errors import ProfilerError
    from txlab.run import check_args, check_launch

    from txlab.compiler import as_compiled

    info = require_gpu(
        f"profiling {getattr(compiled, 'name', None) or 'a kernel'}",
        alternative="profiling measures the hardware, so the CPU emulator cannot stand in; "
        "without a GPU, txlab.occupancy_of(kernel) and the SASS "
        "(Compiled.sass) answer statically, and txlab.emulate(kernel, *args) "
        '(or txlab.config.device = "cpu") runs it for correctness.',
    )
    compiled = as_compiled(compiled, what="txlab.profile")
    check_args(compiled, args)
    check_launch(compiled, info, args)
    names = list(compiled.launch)
    kernel = kernel or (names[0] if names else compiled.name)
    if names and kernel not in names:
        from txlab.errors import InputError

        raise InputError(f"{compiled.name} has no kernel {kernel!r}; its kernels: {', '.join(names)}", param="kernel")
    exe = ncu.find_ncu()
    if exe is None:
        raise ProfilerError(
            "no_ncu",
            "Nsight Compute (ncu) was not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin",
            hint="install Nsight Compute (it ships with the CUDA toolkit) or put ncu on PATH",
        )
    allowed, why = ncu.counters_permission()
    if allowed is False:
        raise ProfilerError("permission", why, hint=ncu.PERMISSION_HINT)
    sections = tuple(sections) if sections is not None else ncu.DEFAULT_SECTIONS
    t0 = time.perf_counter()
    target = with_lineinfo(compiled)
    with tempfile.TemporaryDirectory(prefix="txlab-ncu-") as tmp:
        report = Path(report_path) if report_path else Path(tmp, "report.ncu-rep")
        job, staged = _job(target, args, tmp, worker)
        argv = [sys.executable, "-m", "txlab.ncu_runner", job]
        src = Path(tmp, "src")  # ncu embeds the CUDA source it finds here (matched by file name)
        src.mkdir()
        (src / "kernel.cu").write_text(target.cuda_source)
        cmd = ncu.command(
            exe,
            kernel=kernel,
            report=str(report.with_suffix("")),
            argv=argv,
            sections=sections,
            metrics=metrics,
            launch_skip=launch_skip,
            extra=["--source-folders", str(src)],
        )
        t_run = time.perf_counter()
        try:
            output, code, timed_out = run_ncu(cmd, timeout_s, Path(tmp, "messages.pkl"))
        finally:
            worker.release_args(staged)
        run_s = time.perf_counter() - t_run
        _raise_for_runner(target, args, Path(tmp, "messages.pkl"), kernel, timed_out, timeout_s, run_s)
        if not report.is_file():
            problem = ncu.classify_output(output) or ("ncu_failed", f"ncu exited with code {code} and wrote no report")
            raise ProfilerError(
                problem[0],
                problem[1],
                output=output[-4000:],
                hint=ncu.PERMISSION_HINT if problem[0] == "permission" else "the log is in .output of this error",
            )
        prof = Profile.from_report(
            report,
            target,
            kernel=kernel,
            timings={"ncu_run_s": run_s, "prepare_s": t_run - t0},
            sections=sections,
            args=_describe_args(args),
        )
    prof.timings["total_s"] = time.perf_counter() - t0
    if report_path is None:
        prof.report_path = None
    return prof


def _job(compiled, args, tmp: str, worker):
    """The runner's job file (one launch request, arguments staged in shared memory) and the
    staged segments to release afterwards."""
    import pickle

    spec, staged = worker.pack_args(compiled, args, None)
    req = {
        "op": "launch",
        "key": compiled.key or f"profile-{id(compiled)}",
        "name": compiled.name,
        "args": spec,
        "options": {},
        "drop": [],
    }
    lib = worker.library(compiled)
    if lib is not None:
        req["library"] = str(lib)
    else:
        req.update(
            script=compiled.script,
            arch=compiled.arch,
            cubin=compiled.cubin,
            library_error=worker.library_errors.get(compiled.key),
        )
    job = Path(tmp, "job.pkl")
    mode = "runtime" if lib is not None else "full"
    job.write_bytes(pickle.dumps({"request": req, "messages": str(Path(tmp, "messages.pkl")), "tvm_mode": mode}))
    return str(job), staged


def run_ncu(cmd, timeout_s: float, messages: Path):
    """Run ncu; returns (log, exit code, timed_out). On a timeout ncu's process group and the
    runner (which starts a session of its own) are killed."""
    import signal
    import subprocess

    from txlab import ncu_runner

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the txlab package
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return out or "", proc.returncode, False
    except subprocess.TimeoutExpired:
        pids = [m[1].get("pid") for m in ncu_runner.read_messages(messages) if m[0] == "ready"]
        for pid in pids:
            for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
                try:
                    kill(pid)
                    break
                except (ProcessLookupError, PermissionError, OSError):
                    continue
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            proc.kill()
        out, _ = proc.communicate()
        return out or "", proc.returncode, True


def _raise_for_runner(
    compiled, args, messages: Path, kernel: str, timed_out: bool, timeout_s: float, waited: float
) -> None:
    """A typed error for what the runner reported (fault, failed start, hang)."""
    from txlab import ncu_runner
    from txlab.errors import InputError, KernelFault
    from txlab.errors import _HINTS
    from txlab.launch import fmt_shape as _fmt_shape, launch_shape

    msgs = ncu_runner.read_messages(messages)
    shape = launch_shape(compiled, args)
    replies = [m for m in msgs if m[0] not in ("beat", "ready")]
    if timed_out:
        phase = next((m[1] for m in reversed(msgs) if m[0] == "beat"), "start")
        raise KernelFault(
            "timeout",
            f"profiling {kernel} {_fmt_shape(shape)} did not finish within "
            f"{timeout_s:g} s (last phase: {phase}); ncu and the kernel's process were killed. "
            f"Likely: {_HINTS['timeout']}. Raise timeout_s=... if it is just slow under "
            "ncu's replay.",
            kernel=kernel,
            launch=shape,
            waited_s=waited,
            worker_replaced=False,
            hint=_HINTS["timeout"],
        )
    if not replies:
        return  # ncu's own failure: the caller reads the log
    status, payload = replies[0]
    if status == "init_failed":
        raise KernelFault(
            "cuda_error",
            f"the profiling process could not initialise CUDA under ncu: {payload.get('error')}",
            kernel=kernel,
            launch=shape,
        )
    if status == "fault":
        kind = payload["kind"]
        raise KernelFault(
            kind,
            f"kernel {kernel} {_fmt_shape(shape)} faulted under ncu: {payload['message']}. "
            "The notebook is unaffected (the kernel ran in a process of its own).",
            kernel=kernel,
            launch=shape,
            waited_s=payload.get("elapsed_s"),
            cuda_error=payload.get("cuda_error"),
            hint=_HINTS.get(kind),
        )
    if status == "input":
        raise InputError(payload["message"], param=payload.get("param"))
    if status == "error":
        raise KernelFault(
            "cuda_error", f"the profiling process failed: {payload.get('message')}", kernel=kernel, launch=shape
        )


# txlab.profile.saved(name) / .saved_names(): the shipped profiles, reachable from the function
profile.saved = saved
profile.saved_names = saved_names
