"""``txlab doctor``: what this machine has and which txlab features work here."""

from __future__ import annotations

import importlib.metadata as md
import platform
import sys
import time


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _nvrtc_version() -> str | None:
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}" if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else None
    except Exception:  # noqa: BLE001 - a probe that fails reports the tool as absent
        return None


def _iket_status() -> tuple[bool, str]:
    try:
        from txlab.timeline import iket_requirements  # provided by the timeline module
    except ImportError:
        iket_requirements = None
    if iket_requirements is not None:
        try:
            missing = iket_requirements()
            if not missing:
                return True, "official IKET runtime installed"
            return False, "missing " + ", ".join(missing)
        except Exception as exc:  # noqa: BLE001 - defensive
            return False, f"could not check ({exc})"
    return False, "unknown"


def report() -> dict:
    from txlab import toolchain
    from txlab.device import probe

    t = time.perf_counter()
    import tvm  # noqa: F401

    tvm_import_s = time.perf_counter() - t
    gpu = probe()
    # A tool is ticked only after it ran: `--version` for each, and a real compile for nvcc+ptxas.
    tools = {}
    for name in ("nvcc", "ptxas", "nvdisasm", "cuobjdump"):
        path, version, problem = toolchain.tool_status(name)
        tools[name] = {"path": path, "version": version, "problem": problem or None}
    if tools["nvcc"]["version"] and tools["ptxas"]["version"]:
        ptx_ok, ptx_detail = toolchain.smoke_test()
    else:
        ptx_ok = False
        ptx_detail = "; ".join(tools[n]["problem"] for n in ("nvcc", "ptxas") if tools[n]["problem"])
        ptx_detail += f" (fix: {toolchain.TOOL_FIX['nvcc']})"
    iket_ok, iket_msg = _iket_status()
    from txlab import ncu

    ncu_path = ncu.find_ncu()
    counters_ok, counters_msg = ncu.counters_permission()
    try:
        ncu.import_report_reader()  # PyPI's ncu-report, else the copy beside ncu
        reader = True
    except Exception:  # noqa: BLE001 - ProfilerError, or a reader that fails to load
        reader = False
    from txlab import cache
    from txlab.sanitizer.tools import find_sanitizer

    sanitizer = find_sanitizer()
    features = {
        "compile to CUDA C": True,
        "PTX/cubin (nvcc+ptxas)": ptx_ok,
        "SASS (nvdisasm/cuobjdump)": bool(tools["nvdisasm"]["version"] or tools["cuobjdump"]["version"]),
        "run/check/bench on a GPU": gpu.available,
        "run/check on the CPU emulator (txlab.emulate)": True,
        "scheduler traces on the CPU": True,
        "IKET in-kernel profiling": iket_ok and gpu.available,
        "Nsight Compute profiling (txlab.profile)": bool(ncu_path) and gpu.available and counters_ok is not False,
        "compute-sanitizer (txlab.sanitize)": bool(sanitizer) and gpu.available,
        "reading saved profiles / .ncu-rep (ncu_report)": reader,
    }
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": {
            "txlab": _version("txlab"),
            "apache-tvm": _version("apache-tvm"),
            "apache-tvm-ffi": _version("apache-tvm-ffi"),
            "cuda-python": _version("cuda-python"),
            "cuda-bindings": _version("cuda-bindings"),
            "NVRTC": _nvrtc_version(),
            "jupyterlab": _version("jupyterlab"),
            "ipywidgets": _version("ipywidgets"),
            "anywidget": _version("anywidget"),
        },
        "tools": tools,
        "tvm_import_seconds": round(tvm_import_s, 2),
        "gpu": gpu.to_dict() if gpu.available else {"available": False, "reason": gpu.reason},
        "iket": {"available": iket_ok, "detail": iket_msg},
        "ptx_cubin": {"available": ptx_ok, "detail": ptx_detail},
        "ncu": {
            "path": ncu_path,
            "version": ncu.ncu_version(ncu_path) if ncu_path else None,
            "counters_permitted": counters_ok,
            "counters": counters_msg,
        },
        "compute_sanitizer": {"path": sanitizer},
        "cache": cache.usage(),
        "features": features,
    }


def format_report(r: dict) -> str:
    lines = ["txlab doctor", ""]
    lines.append(f"python        {r['python']}  ({r['platform']})")
    for k, v in r["versions"].items():
        lines.append(f"{k:<16}{v or 'not installed'}")
    lines.append("")
    for name, t in r["tools"].items():
        if t["version"]:
            lines.append(f"{name:<14}{t['version']:<12}{t['path']}")
        else:
            lines.append(f"{name:<14}{'-':<12}{t.get('problem') or 'not found'}")
    lines.append("")
    g = r["gpu"]
    if g.get("available"):
        lines.append(
            f"GPU           {g['name']} ({g['arch']}, {g['sm_count']} SMs, "
            f"{g['total_memory_bytes'] / 2**30:.0f} GiB, driver {g['driver_version']})"
        )
    else:
        lines.append(f"GPU           none: {g['reason']}")
    lines.append(f"IKET          {'yes' if r['iket']['available'] else 'no'}: {r['iket']['detail']}")
    if "ptx_cubin" in r:
        lines.append(
            f"nvcc+ptxas    {'ok' if r['ptx_cubin']['available'] else 'NOT WORKING'}: {r['ptx_cubin']['detail']}"
        )
    n = r.get("ncu") or {}
    lines.append(f"ncu           {n.get('version') or '-':<12}{n.get('path') or 'not found'}")
    lines.append(f"GPU counters  {n.get('counters') or '-'}")
    if "compute_sanitizer" in r:
        path = r["compute_sanitizer"].get("path")
        lines.append(
            f"sanitizer     {path or 'not found: txlab.sanitize needs compute-sanitizer (the CUDA toolkit, or pip install nvidia-cuda-sanitizer-api)'}"
        )
    if "cache" in r:
        c = r["cache"]
        if c.get("exists"):
            size = f"{c['bytes'] / 2**20:.1f} MiB, {c['entries']} compiled kernel(s)"
            lines.append(f"cache         {c['path']}  ({size}; never evicted: txlab.cache.clear() empties it)")
        else:
            lines.append(f"cache         {c['path']}  (empty; TXLAB_CACHE_DIR moves it)")
    lines.append("")
    for feat, ok in r["features"].items():
        lines.append(f"  [{'x' if ok else ' '}] {feat}")
    return "\n".join(lines)
