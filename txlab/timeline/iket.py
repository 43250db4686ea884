"""NVIDIA IKET traces (``T.cuda.iket.*`` captured by ``run-iket``) to a :class:`Timeline`."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np

from txlab.errors import InputError
from txlab.files import FileReadError, resolve_path
from txlab.timeline.model import (
    IKET_PAYLOAD_TYPES,
    KIND_INSTANT,
    KIND_RANGE,
    IketUnavailable,
    Timeline,
    TraceError,
    TraceFileError,
    Track,
    check_bool,
    check_int,
    read_trace_bytes,
)

#: How far :func:`load_iket` looks inside a directory for run-iket's trace: run-iket writes
#: ``iket_pid_<pid>.trace.json`` at the top of its output folder or one or two levels down, so the
#: search stops at this depth and after this many directory entries (a directory that is not a
#: run-iket output folder, ``/`` or a home directory, is refused instead of walked).
MAX_DIR_DEPTH = 3
MAX_DIR_ENTRIES = 10_000


def _iket_int(v, what, warnings, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, int):
        warnings[f"{what}: not an integer (skipped)"] += 1
        return None
    if (lo is not None and v < lo) or (hi is not None and v >= hi):
        warnings[f"{what}: out of range (skipped)"] += 1
        return None
    return v


def load_iket(
    path_or_result,
    *,
    launch=None,
    max_bytes: int = 512 << 20,
    max_events: int = 20_000_000,
    max_name_chars: int = 256,
    lifetimes: bool = True,
    max_dir_entries: int = MAX_DIR_ENTRIES,
) -> Timeline:
    """Read an IKET trace: a ``*.trace.json`` path, its text, a parsed dict, or TVM's
    ``IketProfileResult``. Tracks are SM → CTA → warp; ranges become ranges, markers instants
    (with payloads), ``warpLifetimes`` a ``warp_lifetime`` range per warp (``lifetimes=False`` drops
    them). ``launch`` picks a launch by index or kernel-name substring (default: the first; the
    others are listed in ``meta['launches']``). Files over ``max_bytes``, nesting too deep for the
    parser, and more than ``max_events`` events raise :class:`TraceError`.

    A path must be a regular file (read with a byte cap whatever ``stat`` says: FIFOs, devices and
    symlinks to them are refused) or a run-iket output folder: the one ``*.trace.json`` (or
    top-level ``*.json``) within ``MAX_DIR_DEPTH`` levels, found in at most ``max_dir_entries``
    directory entries. An empty path is an error (it does not mean the working directory).
    """
    if launch is not None and (isinstance(launch, bool) or not isinstance(launch, (int, np.integer, str))):
        raise InputError(
            f"launch must be a launch index (int) or a kernel-name substring (str), not {type(launch).__name__}",
            param="launch",
        )
    if isinstance(launch, np.integer):
        launch = int(launch)
    max_bytes = check_int(max_bytes, "max_bytes", lo=2, fix="the byte cap of the JSON trace")
    max_events = check_int(max_events, "max_events", lo=0, fix="the most events to load")
    max_name_chars = check_int(max_name_chars, "max_name_chars", lo=1, fix="names longer than this are truncated")
    lifetimes = check_bool(lifetimes, "lifetimes")
    max_dir_entries = check_int(max_dir_entries, "max_dir_entries", lo=1)
    trace = _read_iket(path_or_result, max_bytes, max_dir_entries)
    if not isinstance(trace, dict):
        raise TraceError(f"IKET trace must be a JSON object, got {type(trace).__name__}")
    warnings: Counter = Counter()
    strings = trace.get("stringTable")
    locs = trace.get("locationTable")
    launches = trace.get("launches")
    if not isinstance(strings, list) or not isinstance(launches, list):
        raise TraceError(
            "not an IKET trace: it needs a 'stringTable' list and a 'launches' list "
            "(run-iket ... profile --postprocess json writes iket_pid_<pid>.trace.json)"
        )
    if not isinstance(locs, list):
        locs = []
        warnings["no locationTable (tracks by location index)"] += 1
    if not launches:
        raise TraceError("IKET trace has no launches: was the kernel JIT-compiled and run inside run-iket?")
    names_all = []
    for s in strings:
        if not isinstance(s, str):
            warnings["stringTable entries that are not strings"] += 1
            s = repr(type(s).__name__)
        if len(s) > max_name_chars:
            warnings["names longer than max_name_chars (truncated)"] += 1
            s = s[:max_name_chars] + "…"
        names_all.append(s)
    launch_names = [
        str(lc.get("kernelName", f"launch {i}"))[:max_name_chars] if isinstance(lc, dict) else f"launch {i}"
        for i, lc in enumerate(launches)
    ]
    if launch is None:
        li = 0
    elif isinstance(launch, int):
        if not -len(launches) <= launch < len(launches):
            raise TraceError(f"launch {launch} out of range: the trace has {len(launches)} launches")
        li = launch % len(launches)
    else:
        hits = [i for i, n in enumerate(launch_names) if str(launch) in n]
        if not hits:
            raise TraceError(f"no launch whose kernel name contains {launch!r}; launches: {launch_names}")
        li = hits[0]
    lc = launches[li]
    if not isinstance(lc, dict):
        raise TraceError(f"launch {li} is not an object")
    gdim = []
    for k in ("gridDimX", "gridDimY", "gridDimZ"):
        v = lc.get(k, 1)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v < 1 << 31:
            warnings[f"{k}: not a positive integer (taken as 1)"] += 1
            v = 1
        gdim.append(v)
    gdim = tuple(gdim)

    def items(field):
        v = lc.get(field)
        if v is None:
            return []
        if not isinstance(v, list):
            raise TraceError(
                f"launch {li}: {field!r} is a {type(v).__name__}, not a list; this is not a "
                "run-iket trace (or it was edited)"
            )
        return v

    track_of: dict = {}
    tracks: list = []

    def track_for(loc_idx):
        if loc_idx in track_of:
            return track_of[loc_idx]
        loc = locs[loc_idx] if 0 <= loc_idx < len(locs) and isinstance(locs[loc_idx], dict) else {}
        sm = loc.get("smId") if isinstance(loc.get("smId"), int) else -1
        cta = loc.get("ctaId")
        cta = (
            tuple(int(c) for c in cta[:3])
            if isinstance(cta, list) and all(isinstance(c, int) and not isinstance(c, bool) for c in cta[:3]) and cta
            else (-1, -1, -1)
        )
        cta = (cta + (0, 0, 0))[:3]
        warp = loc.get("warpId") if isinstance(loc.get("warpId"), int) else -1
        block = cta[0] + gdim[0] * (cta[1] + gdim[1] * cta[2]) if cta[0] >= 0 else -1
        tr = Track(
            (f"SM {sm}", f"CTA ({cta[0]},{cta[1]},{cta[2]})", f"warp {warp}"),
            {"block": block, "group": warp, "sm": sm, "cta": cta, "warp": warp},
        )
        track_of[loc_idx] = len(tracks)
        tracks.append(tr)
        return track_of[loc_idx]

    col_tr, col_nm, col_s, col_e, col_k, col_pt, col_pv = [], [], [], [], [], [], []

    def add(loc, name, start, end, kind, ptype, pval):  # one event: a row of every column
        col_tr.append(track_for(loc))
        col_nm.append(name_id(name))
        col_s.append(start)
        col_e.append(end)
        col_k.append(kind)
        col_pt.append(ptype)
        col_pv.append(pval & ((1 << 64) - 1))

    name_ids: dict = {}

    def name_id(s):
        if s not in name_ids:
            name_ids[s] = len(name_ids)
        return name_ids[s]

    def budget():
        if len(col_s) >= max_events:
            raise TraceError(
                f"IKET launch has more than max_events={max_events} events; "
                "raise max_events or profile fewer CTAs (run-iket --enabled-cluster)"
            )

    def objects(key):  # the objects of the list ``key``; anything else is counted and skipped
        for item in items(key):
            budget()
            if isinstance(item, dict):
                yield item
            else:
                warnings[f"{key} that are not objects (skipped)"] += 1

    nloc = max(len(locs), 1 << 31)
    for item in objects("ranges"):
        ni = _iket_int(item.get("rangeNameIdx"), "rangeNameIdx", warnings, 0, len(names_all))
        s = _iket_int(item.get("startTs"), "range startTs", warnings, 0)
        e = _iket_int(item.get("endTs"), "range endTs", warnings, 0)
        wl = item.get("warpLocIdxs")
        li0 = wl[0] if isinstance(wl, list) and wl else item.get("locIdx")
        li0 = _iket_int(li0, "range warpLocIdxs", warnings, 0, nloc)
        if None in (ni, s, e, li0):
            continue
        if isinstance(wl, list) and len(wl) > 1 and wl[0] != wl[-1]:
            warnings["ranges that start and end on different warps"] += 1
        if e < s:
            warnings["ranges with endTs < startTs (skipped)"] += 1
            continue
        pt, pv = 0, 0
        ie = item.get("internalEvents")
        if isinstance(ie, list) and ie and isinstance(ie[0], dict) and isinstance(ie[0].get("payloadType"), int):
            pt = ie[0]["payloadType"] & 0xFF
            pv = ie[0].get("payloadVal") if isinstance(ie[0].get("payloadVal"), int) else 0
        add(li0, names_all[ni], s, e, KIND_RANGE, pt, pv)
    for item in objects("markers"):
        ni = _iket_int(item.get("markerNameIdx"), "markerNameIdx", warnings, 0, len(names_all))
        ts = _iket_int(item.get("timestamp"), "marker timestamp", warnings, 0)
        loc = _iket_int(item.get("locIdx"), "marker locIdx", warnings, 0, nloc)
        if None in (ni, ts, loc):
            continue
        pt = item.get("payloadType") if isinstance(item.get("payloadType"), int) else 0
        pv = item.get("payloadVal") if isinstance(item.get("payloadVal"), int) else 0
        add(loc, names_all[ni], ts, ts, KIND_INSTANT, pt & 0xFF, pv)
    if lifetimes:
        for item in objects("warpLifetimes"):
            s = _iket_int(item.get("startTs"), "warpLifetime startTs", warnings, 0)
            e = _iket_int(item.get("endTs"), "warpLifetime endTs", warnings, 0)
            loc = _iket_int(item.get("locIdx"), "warpLifetime locIdx", warnings, 0, nloc)
            if None in (s, e, loc) or e < s:
                continue
            add(loc, "warp_lifetime", s, e, KIND_RANGE, 0, 0)

    s = np.asarray(col_s, dtype=np.int64)
    e = np.asarray(col_e, dtype=np.int64)
    t_min = int(s.min()) if len(s) else 0
    unknown_pt = set(col_pt) - set(IKET_PAYLOAD_TYPES) - {0}
    if unknown_pt:
        warnings["payloads of unknown type (shown raw)"] += sum(1 for p in col_pt if p in unknown_pt)
    meta = {
        "source": "iket",
        "kernel": launch_names[li],
        "launch_index": li,
        "launches": launch_names,
        "grid": gdim,
        "block_dim": tuple(
            lc.get(k) if isinstance(lc.get(k), int) else 1 for k in ("blockDimX", "blockDimY", "blockDimZ")
        ),
    }
    return Timeline(
        names=list(name_ids),
        tracks=tracks,
        track=col_tr,
        name_id=col_nm,
        start_ns=s - t_min,
        end_ns=e - t_min,
        kind=col_k,
        payload_type=np.asarray(col_pt, np.uint8),
        payload_raw=np.asarray(col_pv, np.uint64),
        warnings=warnings,
        meta=meta,
        t0_ns=t_min,
    )


def _read_iket(src, max_bytes, max_dir_entries):
    if isinstance(src, dict):
        return src
    # TVM's IketProfileResult (duck-typed so that tvm need not be imported)
    if hasattr(src, "json_traces") and hasattr(src, "postprocess"):
        traces = tuple(src.json_traces)
        if not traces:
            raise TraceError(
                f"the IKET profile has no JSON trace (postprocess={src.postprocess!r}); "
                "profile with postprocess='json' or 'all'"
            )
        if len(traces) > 1:
            raise TraceError(
                f"the IKET profile has {len(traces)} JSON traces (one per process); "
                "pass one of result.json_traces to load_iket"
            )
        src = traces[0]
    if isinstance(src, (bytes, bytearray)):
        text = bytes(src[: max_bytes + 1])
    elif isinstance(src, str) and src.lstrip().startswith("{"):
        text = src
    elif isinstance(src, (str, os.PathLike)):
        try:
            p = resolve_path(src, "IKET trace")
        except FileReadError as exc:  # empty path, NUL byte
            raise TraceFileError(str(exc), path=exc.path) from None
        if p.is_dir():
            p = _find_trace_in(p, max_dir_entries)
        text = read_trace_bytes(p, max_bytes, "IKET trace")
    else:
        raise InputError(
            f"load_iket takes a path, JSON text, dict or IketProfileResult as path_or_result, not {type(src).__name__}",
            param="path_or_result",
        )
    if len(text) > max_bytes:
        raise TraceError(f"IKET trace is {len(text)} bytes, over max_bytes={max_bytes}")
    try:
        return json.loads(text)
    except RecursionError:
        raise TraceError("IKET trace is nested too deeply to be a run-iket trace (hostile or corrupt JSON)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceError(f"IKET trace is not valid JSON: {exc}") from None


def _find_trace_in(root: Path, max_entries: int) -> Path:
    """The one run-iket JSON trace in the output folder ``root``: the ``*.json`` files at its top and
    the ``*.trace.json`` files below it (what ``tvm.backend.cuda.iket`` collects), searched
    breadth-first to ``MAX_DIR_DEPTH`` levels and ``max_entries`` directory entries, never through
    symlinked directories."""

    def refuse(why):
        return TraceFileError(
            f"{root} is not a run-iket output folder ({why}); pass the iket_pid_<pid>.trace.json file itself",
            path=str(root),
        )

    if root.parent == root:
        raise refuse("it is a filesystem root")
    found, seen, level = [], 0, [root]
    for depth in range(MAX_DIR_DEPTH + 1):
        nxt = []
        for d in level:
            try:
                with os.scandir(d) as it:
                    for entry in it:
                        seen += 1
                        if seen > max_entries:
                            raise refuse(
                                f"more than max_dir_entries={max_entries} entries within {MAX_DIR_DEPTH} levels"
                            )
                        name = entry.name
                        if entry.is_dir(follow_symlinks=False):
                            if depth < MAX_DIR_DEPTH:
                                nxt.append(Path(entry.path))
                        elif name.endswith(".trace.json") or (depth == 0 and name.endswith(".json")):
                            found.append(Path(entry.path))
            except OSError as exc:
                raise refuse(f"cannot list {d}: {exc.strerror or exc}") from None
        level = nxt
    if not found:
        raise refuse(f"no *.trace.json within {MAX_DIR_DEPTH} levels")
    if len(found) != 1:
        raise TraceFileError(
            f"{root} holds {len(found)} IKET JSON traces "
            f"({', '.join(sorted(str(f.relative_to(root)) for f in found)[:5])}); "
            "pass the file itself",
            path=str(root),
        )
    return found[0]


def iket_requirements() -> list[str]:
    """What is missing for TVM's official IKET profiling, as pip requirement strings (empty when
    everything is in place). The versions are read from ``tvm.backend.cuda.iket``."""
    from importlib import metadata

    profile = _iket_profile_config()
    missing = []
    for versions, at_least in ((profile["minimum_versions"], True), (profile["exact_versions"], False)):
        for dist, want in versions.items():
            req = f"{dist}{'>=' if at_least else '=='}{want}"
            try:
                have = metadata.version(dist)
            except metadata.PackageNotFoundError:
                missing.append(req)
                continue
            if at_least:
                if _version_tuple(have) < _version_tuple(want):
                    missing.append(f"{req} (have {have})")
            elif have != want:
                missing.append(f"{req} (have {have})")
    import shutil

    if shutil.which("run-iket") is None:
        missing.append("run-iket on PATH (installed by nvidia-cutlass-dsl-libs-base)")
    want = ".".join(map(str, profile["nvrtc_version"]))
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        if int(err) != 0 or (int(major), int(minor)) != tuple(profile["nvrtc_version"]):
            missing.append(f"NVRTC {want} loadable (loaded {int(major)}.{int(minor)})")
    except Exception:  # noqa: BLE001 - any failure to load NVRTC is reported as missing
        missing.append(f"NVRTC {want} loadable by cuda.bindings.nvrtc")
    return missing


_IKET_FALLBACK = {
    "nvrtc_version": (13, 2),
    "minimum_versions": {
        "nvidia-cutlass-dsl": "4.6.0",
        "nvidia-cutlass-dsl-libs-base": "4.6.0",
        "nvidia-cutlass-dsl-libs-core": "4.6.0",
        "nvidia-cutlass-dsl-libs-cu13": "4.6.0",
    },
    "exact_versions": {"nvidia-cuda-nvdisasm": "13.3.73", "nvidia-cuda-nvrtc": "13.2.78"},
}


def _iket_profile_config() -> dict:
    try:
        from tvm.backend.cuda import iket

        return iket._OFFICIAL_PROFILES[iket._DEFAULT_PROFILE]
    except Exception:  # noqa: BLE001 - TVM moved its table: fall back to the 0.27 values
        return _IKET_FALLBACK


def _version_tuple(v: str):
    out = []
    for part in v.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def iket_profile(command, *, output_dir, launch=None, timeout: float = 600.0, **kwargs) -> Timeline:
    """Run ``command`` (a replayable argv, e.g. ``[sys.executable, "my_kernel.py"]``) under
    NVIDIA's ``run-iket`` through ``tvm.backend.cuda.iket.profile`` and load the JSON trace.
    Raises :class:`IketUnavailable` naming every missing package and version first."""
    missing = iket_requirements()
    if missing:
        raise IketUnavailable(
            "IKET profiling needs NVIDIA's official runtime, which is not complete here. Missing: "
            + "; ".join(missing)
            + ". Install with: pip install "
            + " ".join(f"'{m.split(' (')[0]}'" for m in missing if not m.startswith(("run-iket", "NVRTC"))),
            missing,
        )
    from tvm.backend.cuda import iket

    result = iket.profile(
        command,
        output_dir=output_dir,
        postprocess=kwargs.pop("postprocess", "all"),
        clobber=kwargs.pop("clobber", True),
        timeout=timeout,
        **kwargs,
    )
    return load_iket(result, launch=launch)
