"""Nsight Compute as an engine: find ``ncu``, run a kernel under it in a process of its own, and
read the report with NVIDIA's reader.

* **Finding ncu**: ``PATH``, then ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``, ``/usr/local/cuda/bin``,
  then ``/opt/nvidia/nsight-compute/<version>/ncu`` (newest).
* **Running**: ``ncu --target-processes all --kernel-name regex:^<kernel>$ --launch-count 1
  --section ... --import-source yes --export <tmp>/report python -m txlab.ncu_runner <job>``.
  The runner (:mod:`txlab.ncu_runner`) is the isolated worker's own request loop
  (``txlab.worker.child_main``) fed one launch request from a file: it loads the library the
  notebook process exported for the kernel and launches it once, with the arguments staged in
  shared memory exactly as for the worker. A fault is reported back typed (the runner's reply);
  a hang is bounded by a timeout after which ncu's process group and the runner are killed.
  Either way the notebook process never touches the CUDA context that ran the kernel.
* **Reading**: the ``ncu_report`` module (PyPI ``ncu-report``, NVIDIA's Python interface to
  ``.ncu-rep`` files). We chose it over ``ncu --import --csv``: it needs neither ncu nor a GPU
  (saved reports are read anywhere), it gives each source-level counter with its correlation
  ID (the instruction's PC), so per-instruction samples and stall reasons come as numbers keyed
  by SASS offset instead of a CSV page whose columns change between ncu versions, and it reads
  a 1000-metric report in well under 0.1 s.
* **Lines**: nvdisasm's line table of the profiled cubin (:func:`txlab.sass.cuda_line_table`;
  the kernel is compiled with ``-lineinfo``) maps each SASS offset to the outermost CUDA line of
  ``Compiled.cuda_source`` (through inlined helpers). The same map ncu would show, but computed
  from the exact cubin, with or without ncu.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

#: sections collected by default: what an engineer looks at first
DEFAULT_SECTIONS = (
    "LaunchStats",
    "Occupancy",
    "SpeedOfLight",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Tables",
    "ComputeWorkloadAnalysis",
    "WarpStateStats",
    "SchedulerStats",
    "InstructionStats",
    "SourceCounters",
)

PERMISSION_HINT = (
    "the GPU's performance counters are restricted to admin users (ERR_NVGPUCTRPERM). Either run "
    "as root, or allow all users: add `options nvidia NVreg_RestrictProfilingToAdminUsers=0` to a "
    "file in /etc/modprobe.d/, then reload the nvidia module or reboot (see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM). In a container the host must allow it."
)

STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"


@lru_cache(maxsize=1)
def find_ncu() -> str | None:
    """Absolute path of ``ncu``, or None."""
    found = shutil.which("ncu")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            cand = Path(home) / "bin" / "ncu"
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
    versions = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), key=_version_key)
    return versions[-1] if versions else None


def _shipped_reader_dirs() -> list[Path]:
    """Where an Nsight Compute install keeps its own copy of the report reader
    (``<install>/extras/python/ncu_report.py``), the installed ``ncu`` first."""
    roots = []
    ncu = find_ncu()
    if ncu:
        real = Path(os.path.realpath(ncu))
        roots += [real.parent, real.parent.parent]
    roots += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*/nsight-compute*"), key=_version_key, reverse=True)]
    roots += [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*"), key=_version_key, reverse=True)]
    return [r / "extras" / "python" for r in roots if (r / "extras" / "python" / "ncu_report.py").is_file()]


def import_report_reader():
    """NVIDIA's report reader: the ``ncu_report`` module from PyPI (``ncu-report``), else the copy
    an Nsight Compute install ships beside ``ncu`` (same module, matching that ncu's reports)."""
    import importlib
    import sys

    from txlab.errors import ProfilerError

    try:
        return importlib.import_module("ncu_report")
    except ImportError as first:
        for folder in _shipped_reader_dirs():
            sys.path.insert(0, str(folder))
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(str(folder))
        raise ProfilerError(
            "report",
            f"the ncu_report module is not importable ({first}) and no Nsight "
            "Compute install with extras/python/ncu_report.py was found",
            hint="pip install ncu-report",
        ) from None


def _version_key(path: str):
    return [int(x) if x.isdigit() else 0 for x in re.findall(r"\d+", path)]


@lru_cache(maxsize=4)
def ncu_version(path: str | None = None) -> str | None:
    """ncu's version (e.g. '2025.3.1.0'), or None."""
    path = path or find_ncu()
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Version\s+([\d.]+)", out)
    return m.group(1) if m else (out.strip().splitlines() or [None])[-1]


def counters_permission() -> tuple[bool | None, str]:
    """(allowed, why): whether this user may read GPU performance counters, from the driver's
    ``RmProfilingAdminOnly`` parameter (None when that cannot be read, e.g. no driver)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return True, "running as root"
    try:
        text = Path("/proc/driver/nvidia/params").read_text()
    except OSError:
        return None, "unknown (no /proc/driver/nvidia/params: no NVIDIA driver here)"
    m = re.search(r"RmProfilingAdminOnly:\s*(\d+)", text)
    if not m:
        return None, "unknown (the driver does not report RmProfilingAdminOnly)"
    if m.group(1) == "0":
        return True, "open to all users (RmProfilingAdminOnly: 0)"
    return False, "admin only (RmProfilingAdminOnly: 1): " + PERMISSION_HINT


def command(
    ncu: str,
    *,
    kernel: str,
    report: str,
    argv: list[str],
    sections=DEFAULT_SECTIONS,
    metrics=(),
    launch_skip: int = 0,
    clock_control: str = "none",
    extra=(),
) -> list[str]:
    """The ncu command line that profiles one launch of ``kernel`` made by ``argv``.
    ``clock_control="none"`` leaves the GPU's clocks alone (ncu's default, ``base``, locks them to
    base clocks: durations then read ~20% longer than unprofiled runs on an H200)."""
    cmd = [
        ncu,
        "--target-processes",
        "all",
        "--kernel-name",
        f"regex:^{re.escape(kernel)}$",
        "--launch-skip",
        str(int(launch_skip)),
        "--launch-count",
        "1",
        "--clock-control",
        clock_control,
    ]
    for s in sections:
        cmd += ["--section", s]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    cmd += ["--import-source", "yes", "--export", report, "--force-overwrite", *extra, *argv]
    return cmd


def classify_output(output: str) -> tuple[str, str] | None:
    """(reason, message) for a failing ncu log, or None if nothing recognisable."""
    if "ERR_NVGPUCTRPERM" in output:
        return "permission", "ncu may not read the GPU's performance counters"
    m = re.search(r"==ERROR==\s*(.*)", output)
    if m and re.search(r"[Ff]ailed to find metric|[Ii]nvalid metric|not found", m.group(1)):
        return "ncu_failed", f"ncu rejected the metrics: {m.group(1).strip()}"
    if re.search(r"No kernels were profiled", output):
        return "no_kernel", "ncu profiled no kernel: the kernel name did not match any launch"
    if m:
        return "ncu_failed", m.group(1).strip()
    return None


# ---------------------------------------------------------------------------------------------
# reading reports
def _value(m, instance: int | None = None):
    v = m.value() if instance is None else m.value(instance)
    if isinstance(v, (int, float)):
        return float(v) if isinstance(v, float) else int(v)
    return v if isinstance(v, str) else str(v)


def _has_aggregate(m) -> bool:
    """Whether an (instanced) metric also has a value of its own."""
    try:
        return bool(m.has_value())
    except Exception:  # noqa: BLE001 - older readers: no has_value()
        return False


def read_report(path, kernel: str | None = None) -> dict:
    """The profiled launch of ``kernel`` (default: the first) in an ``.ncu-rep`` file as plain
    data: ``{"kernel", "metrics": {name: [value, unit]}, "function_pc", "pcs": {offset:
    {metric: value}}, "source_files": [...], "actions": [names]}``. Per-PC values are the
    report's source-level (instanced, PC-correlated) metrics: ``smsp__pcsamp_sample_count``,
    ``smsp__pcsamp_warps_issue_stalled_<reason>``, ``inst_executed``, memory counters."""
    from txlab.errors import ProfilerError

    ncu_report = import_report_reader()
    path = str(path)
    if not Path(path).is_file():
        raise ProfilerError("report", f"no report at {path}")
    try:
        ctx = ncu_report.load_report(path)
    except Exception as exc:  # noqa: BLE001 - the reader raises several types
        raise ProfilerError("report", f"ncu_report could not read {path}: {exc}") from None
    actions = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for i in range(rng.num_actions()):
            actions.append(rng.action_by_idx(i))
    if not actions:
        raise ProfilerError("no_kernel", f"{path} holds no profiled kernel (an empty or unreadable report)")
    names = [a.name() for a in actions]
    if kernel is None:
        action = actions[0]
    else:
        matches = [a for a in actions if a.name() == kernel]
        if not matches:
            raise ProfilerError("no_kernel", f"{path} has no launch of {kernel!r} (it has {sorted(set(names))})")
        action = matches[0]
    fpc_metric = action.metric_by_name("launch__function_pcs")
    function_pc = None
    if fpc_metric is not None:
        function_pc = int(fpc_metric.value(0)) if fpc_metric.num_instances() else int(fpc_metric.value())
    metrics: dict[str, list] = {}
    pcs: dict[int, dict] = {}
    for name in action.metric_names():
        m = action.metric_by_name(name)
        if m is None:
            continue
        n = m.num_instances()
        if n == 0 or _has_aggregate(m):
            # an instanced metric can carry its aggregate too (launch statistics and the occupancy
            # section are instanced per function in recent reports): keep it as the metric's value
            try:
                metrics[name] = [_value(m), m.unit()]
            except Exception:  # noqa: BLE001 - a metric without a readable value is skipped
                pass
            if n == 0:
                continue
        if function_pc is None or not m.has_correlation_ids():
            if n == 1 and name not in metrics:
                try:
                    metrics[name] = [_value(m, 0), m.unit()]
                except Exception:  # noqa: BLE001
                    pass
            continue
        corr = m.correlation_ids()
        try:
            ids = [int(corr.value(i)) for i in range(corr.num_instances())]
        except (TypeError, ValueError):
            continue
        if n == 1 and name not in metrics and ids == [function_pc]:
            try:  # one value for the whole function (a launch statistic), not an instruction's
                metrics[name] = [_value(m, 0), m.unit()]
            except Exception:  # noqa: BLE001
                pass
        if not ids or min(ids) < function_pc or max(ids) >= function_pc + (1 << 26):
            continue  # instanced but not per instruction (e.g. occupancy curves)
        for pc, i in zip(ids, range(n)):
            v = m.value(i)
            if isinstance(v, (int, float)) and v:
                pcs.setdefault(pc - function_pc, {})[name] = v
    try:
        files = list(action.source_files().keys())
    except Exception:  # noqa: BLE001
        files = []
    sass = {}
    for off in pcs:
        try:
            sass[off] = " ".join(action.sass_by_pc(function_pc + off).split()).rstrip(" ;")
        except Exception:  # noqa: BLE001 - SASS is optional in a report
            pass
    return {
        "kernel": action.name(),
        "metrics": metrics,
        "function_pc": function_pc,
        "pcs": pcs,
        "sass": sass,
        "source_files": files,
        "actions": names,
    }


def stall_reasons(counters: dict) -> dict:
    """``{reason: samples}`` from one instruction's per-PC counters (issued and not, summed as
    ncu's source view shows them; the ``_not_issued`` split is dropped)."""
    out = {}
    for k, v in counters.items():
        if k.startswith(STALL_PREFIX) and not k.endswith("_not_issued"):
            out[k[len(STALL_PREFIX) :]] = v
    return out


def has_line_info(cubin: bytes) -> bool:
    """Whether the cubin carries a line table (compiled with -lineinfo or -G)."""
    return b".debug_line" in cubin or b".nv_debug_line_sass" in cubin
