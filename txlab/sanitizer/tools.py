"""Running compute-sanitizer: finding the binary and the options it knows, the job file the runner
reads, one process per tool (killed on a timeout), and turning the logs into a report."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from txlab.sanitizer.explain import explain
from txlab.sanitizer.lines import _map_lines, _user_source_lines
from txlab.sanitizer.parse import _merge_races, parse_text, parse_xml
from txlab.sanitizer.report import TOOLS, SanitizerError, SanitizerReport

#: the per-tool options txlab passes (see ``compute-sanitizer --help``)
TOOL_FLAGS = {
    # cuda-python probes driver entry points with cuGetProcAddress, which memcheck would report
    "memcheck": ["--report-api-errors", "no", "--padding", "256"],
    # analysis reports name both lines of a race (one line per race, however many hazards); the
    # threads, CTA and address come from a second, short hazard-mode run when there is a race
    "racecheck": ["--racecheck-report", "analysis"],
    "synccheck": [],
    # shared memory too: global buffers are always initialised (the arguments are uploaded)
    "initcheck": ["--initcheck-address-space", "all"],
}
#: hazard-mode options of the second racecheck run (threads, CTA and address of each race)
RACECHECK_HAZARD_FLAGS = ["--racecheck-report", "hazard", "--print-limit", "64"]
#: options for every tool: device backtraces only (inlined helpers' call sites; host frames are
#: kilobytes of TVM/Python internals per report)
COMMON_FLAGS = ["--show-backtrace", "device"]
MAX_LOG_CHARS = 60_000


# =============================================================================================
# running
def find_sanitizer() -> str | None:
    """Path of ``compute-sanitizer``: ``$TXLAB_COMPUTE_SANITIZER``, then the CUDA toolkit's (PATH,
    ``$CUDA_HOME``, ``/usr/local/cuda``: it matches the installed driver), then NVIDIA's wheel
    (``pip install nvidia-cuda-sanitizer-api`` ships ``nvidia/cu13/bin/compute-sanitizer``; it needs a
    driver recent enough for its CUDA version)."""
    env = os.environ.get("TXLAB_COMPUTE_SANITIZER")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            for cand in (
                Path(home) / "bin" / "compute-sanitizer",
                Path(home) / "compute-sanitizer" / "compute-sanitizer",
            ):
                if cand.is_file() and os.access(cand, os.X_OK):
                    return str(cand)
    from txlab import toolchain

    return toolchain.find_tool("compute-sanitizer")


_HELP_CACHE: dict = {}


def supported_flags(exe: str, tool: str, flags=None) -> list:
    """``TOOL_FLAGS[tool]`` without the options this compute-sanitizer does not know (read from its
    ``--help``: e.g. ``--initcheck-address-space`` is new in 2026.x; 2025.3's initcheck checks global
    memory only)."""
    if exe not in _HELP_CACHE:
        try:
            p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
            _HELP_CACHE[exe] = p.stdout + p.stderr
        except (OSError, subprocess.SubprocessError):
            _HELP_CACHE[exe] = ""
    text = _HELP_CACHE[exe]
    flags = TOOL_FLAGS.get(tool, []) if flags is None else flags
    out, i = [], 0
    while i < len(flags):
        opt = flags[i]
        val = flags[i + 1] if i + 1 < len(flags) and not flags[i + 1].startswith("--") else None
        if not text or re.search(rf"(?m)^\s*{re.escape(opt)}\b", text):
            out.append(opt)
            if val is not None:
                out.append(val)
        i += 2 if val is not None else 1
    return out


def sanitizer_version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Version ([\w.]+)", out)
    return m.group(1) if m else None


def write_job(compiled, args, workdir: Path, uninitialized=()) -> Path:
    """The runner's job: the kernel (exported library, or script + cubin) and each argument's bytes
    (not uploaded for the parameters named in ``uninitialized``)."""
    from txlab import worker

    lib = worker.library(compiled)
    job = {"name": compiled.name, "arch": compiled.arch, "args": [], "result": str(workdir / "result.json")}
    if lib is not None:
        job["library"] = str(lib)
    else:
        (workdir / "kernel.cubin").write_bytes(compiled.cubin)
        job.update(script=compiled.script, cubin=str(workdir / "kernel.cubin"))
    for i, (p, v) in enumerate(zip(compiled.entry_params, args)):
        if p["kind"] == "scalar":
            import numpy as np

            job["args"].append({"kind": "scalar", "value": v.item() if isinstance(v, np.generic) else v})
            continue
        host, _ = worker.host_copy(v)
        import numpy as np

        path = workdir / f"arg{i}.bin"
        path.write_bytes(np.ascontiguousarray(host).tobytes())
        job["args"].append(
            {
                "kind": "array",
                "path": str(path),
                "shape": [int(s) for s in host.shape],
                "dtype": p["dtype"],
                "nbytes": int(host.nbytes),
                "upload": p["name"] not in uninitialized,
            }
        )
    jp = workdir / "job.json"
    jp.write_text(json.dumps(job))
    return jp


def _run_tool(exe: str, tool: str, job: Path, workdir: Path, timeout_s: float, extra=(), flags=None) -> dict:
    xml = workdir / f"{tool}.xml"
    log = workdir / f"{tool}.log"
    result = workdir / "result.json"
    if result.exists():
        result.unlink()
    opts = list(TOOL_FLAGS.get(tool, []) if flags is None else flags)
    if "--print-limit" not in opts:
        opts += ["--print-limit", "200"]
    cmd = [
        exe,
        "--tool",
        tool,
        "--log-file",
        str(log),
        "--xml",
        "--save",
        str(xml),
        *supported_flags(exe, tool, COMMON_FLAGS + opts),
        *extra,
        sys.executable,
        "-m",
        "txlab.sanitize_runner",
        str(job),
    ]
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parents[2])  # the folder holding the txlab package
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=str(workdir)
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    seconds = time.monotonic() - t0
    text = log.read_text(errors="replace") if log.exists() else ""
    return {
        "cmd": cmd,
        "returncode": proc.returncode,
        "timed_out": timed_out,
        "seconds": seconds,
        "text": text,
        "stdout": (out or b"").decode(errors="replace"),
        "xml": xml.read_text(errors="replace") if xml.exists() else "",
        "result": json.loads(result.read_text()) if result.exists() else None,
    }


def sanitize(
    compiled,
    *args,
    tools=TOOLS,
    timeout_s: float | None = None,
    keep: str | None = None,
    extra_flags: dict | None = None,
    uninitialized=(),
) -> SanitizerReport:
    """Run NVIDIA compute-sanitizer's ``tools`` on one launch of ``compiled`` with ``args``.

    Each tool runs in its own process (the isolated runner, :mod:`txlab.sanitize_runner`) on
    exactly-sized device copies of the arguments; the caller's arrays are not changed. A launch that
    does not finish within ``timeout_s`` (default ``max(120, 30 x txlab.config.timeout_s)``: the
    tools slow kernels down 10-1000x) raises :class:`txlab.KernelFault` ``kind="timeout"``.
    ``keep``: a directory to keep the job, logs and XML records in. ``extra_flags``: per-tool extra
    compute-sanitizer options. ``uninitialized``: names of buffer parameters whose device copy is
    left unwritten (outputs the kernel must write before it reads them: initcheck then reports a
    read of them as uninitialised). Returns a :class:`SanitizerReport`."""
    from txlab.errors import KernelFault
    from txlab.launch import check_args
    from txlab.settings import config

    from txlab.compiler import as_compiled

    compiled = as_compiled(compiled, what="txlab.sanitize")
    tools = (tools,) if isinstance(tools, str) else tuple(tools)
    bad = [t for t in tools if t not in TOOLS]
    if bad or not tools:
        raise ValueError(f"tools={tools!r}: choose among {', '.join(TOOLS)}")
    check_args(compiled, args)
    uninitialized = (uninitialized,) if isinstance(uninitialized, str) else tuple(uninitialized)
    names = {p["name"] for p in compiled.entry_params if p["kind"] == "buffer"}
    unknown = [n for n in uninitialized if n not in names]
    if unknown:
        raise ValueError(
            f"uninitialized={unknown}: {compiled.name} has no buffer parameter named "
            f"{', '.join(unknown)} (its buffers: {', '.join(sorted(names))})"
        )
    from txlab.device import require_gpu

    info = require_gpu(
        f"sanitizing {compiled.name}",
        alternative="without one, txlab.emulate(kernel, *args) checks bounds, shared-memory "
        'races and barriers on the CPU (txlab.config.device = "cpu" runs '
        "txlab.check and kernel calls there).",
    )
    exe = find_sanitizer()
    if exe is None:
        raise SanitizerError(
            "compute-sanitizer was not found: install the CUDA toolkit (it ships in "
            "/usr/local/cuda/bin) or `pip install nvidia-cuda-sanitizer-api`, or set "
            "TXLAB_COMPUTE_SANITIZER to its path"
        )
    budget = float(timeout_s) if timeout_s is not None else max(120.0, 30.0 * float(config.timeout_s))
    from txlab.compiler import with_lineinfo

    built = with_lineinfo(compiled)
    tmp = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="txlab-sanitize-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        job = write_job(built, args, tmp, uninitialized)
        findings, runs, raw = [], {}, {}
        for tool in tools:
            r = _run_tool(exe, tool, job, tmp, budget, (extra_flags or {}).get(tool, ()))
            raw[tool] = {"text": r["text"][-MAX_LOG_CHARS:], "xml": r["xml"][-MAX_LOG_CHARS:]}
            if r["timed_out"]:
                raise KernelFault(
                    "timeout",
                    f"{compiled.name} did not finish within {budget:g} s under compute-sanitizer "
                    f"--tool {tool}; the process was killed. Likely: a barrier or mbarrier wait that never "
                    "completes (or the tool is just slow: pass timeout_s=...).",
                    kernel=compiled.name,
                    waited_s=r["seconds"],
                )
            fs, facts = parse_text(r["text"], tool)
            if not fs and r["xml"]:
                fs = parse_xml(r["xml"], tool)
            if tool == "racecheck" and any(f.kind == "shared_race" and f.thread is None for f in fs):
                h = _run_tool(exe, tool, job, tmp, budget, flags=RACECHECK_HAZARD_FLAGS)
                if not h["timed_out"]:
                    hz, _ = parse_text(h["text"], tool)
                    races = [f for f in fs if f.kind == "shared_race" and f.other is not None and f.thread is None]
                    rest = [f for f in fs if f not in races]
                    merged = _merge_races(races, [f for f in hz if f.kind == "shared_race"])
                    fs = rest + [f for f in merged if f in races]  # hazards only enrich the races
                    raw[tool]["hazards"] = h["text"][-MAX_LOG_CHARS // 2 :]
            res = r["result"] or {}
            status = "ok"
            message = ""
            if res.get("status") == "fault":
                status, message = "fault", res.get("error", "")
            elif not res:
                status = "failed"
                tail = (r["stdout"] or r["text"]).strip().splitlines()[-5:]
                message = (f"the runner did not report (exit code {r['returncode']}): " + " | ".join(tail))[:2000]
            elif res.get("status") != "ok":
                status, message = "failed", res.get("error", "")
            if status == "fault" and fs:
                message += " (the launch failed because of the error reported)"
            runs[tool] = {
                "status": status,
                "message": message,
                "seconds": round(r["seconds"], 2),
                "errors": facts["errors"],
                "notes": facts["notes"],
                "returncode": r["returncode"],
                "findings": len(fs),
            }
            findings.extend(fs)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    # a rebuilt cubin (with line info): map by CUDA line
    return _report(
        compiled,
        tools,
        findings,
        runs,
        use_source_map=built is compiled,
        device=getattr(info, "name", None),
        sanitizer={
            "path": exe,
            "version": sanitizer_version(exe),
            "flags": {t: supported_flags(exe, t, COMMON_FLAGS + TOOL_FLAGS[t]) for t in tools},
        },
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        key=compiled.key,
        raw=raw,
    )


def _report(compiled, tools, findings, runs, *, use_source_map: bool, **fields) -> SanitizerReport:
    """The report of ``compiled``'s ``findings`` (``runs``: per tool), finished (:func:`finish`)."""
    report = SanitizerReport(
        kernel=compiled.name, tools=list(tools), findings=findings, runs=runs, arch=compiled.arch, **fields
    )
    return finish(report, compiled, use_source_map=use_source_map)


def finish(report: SanitizerReport, compiled, *, use_source_map: bool = True) -> SanitizerReport:
    """Map findings to the user's lines, explain them and collect the source text of each line."""
    report.line_map = _map_lines(report.findings, compiled, use_source_map=use_source_map)
    _, user_lines = _user_source_lines(compiled)
    for f in report.findings:
        if f.lineno is not None and 0 < f.lineno <= len(user_lines):
            f.source = user_lines[f.lineno - 1].strip()
            report.lines[f.lineno] = f.source
        o = f.other if isinstance(f.other, dict) else {}
        ol = o.get("lineno")
        if ol is not None and 0 < ol <= len(user_lines):
            report.lines[ol] = user_lines[ol - 1].strip()
        f.explanation = explain(f)
    return report


def from_logs(compiled, logs: dict, **meta) -> SanitizerReport:
    """A report from saved compute-sanitizer text logs ``{tool: text}`` (e.g. recorded on a GPU
    host) for ``compiled`` (which maps the lines; no GPU needed)."""
    findings, runs = [], {}
    for tool, text in logs.items():
        fs, facts = parse_text(text, tool)
        findings.extend(fs)
        runs[tool] = {"status": "ok", "errors": facts["errors"], "notes": facts["notes"], "findings": len(fs)}
    raw = {t: {"text": x[-MAX_LOG_CHARS:], "xml": ""} for t, x in logs.items()}
    return _report(compiled, logs, findings, runs, use_source_map=False, raw=raw, **meta)
