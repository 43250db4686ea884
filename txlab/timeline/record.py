"""Recording a CudaProfiler-instrumented kernel on the GPU: compile with :func:`txlab.compile`,
launch with :func:`txlab.run.launch` (the isolated worker when configured), decode.
"""

from __future__ import annotations

import numpy as np

from txlab.errors import InputError
from txlab.timeline.cuda_profiler import _event_names, from_cuda_profiler
from txlab.timeline.model import KIND_INSTANT, KIND_RANGE, Timeline, TraceError, Track, check_bool, check_int


def record(
    kernel, *args, events, buffer_slots: int | None = None, arch: str | None = None, strict: bool = False
) -> Timeline:
    """Compile (if needed) and run a CudaProfiler-instrumented kernel once on the GPU; return its
    Timeline. ``kernel`` is a TIRx ``PrimFunc``, an ``IRModule`` or a :class:`txlab.Compiled` whose
    profiler buffer is its (last) ``uint64`` parameter; ``args`` are the other parameters in order
    (numpy arrays are written back in place, torch tensors are used as they are). ``events`` names
    the event ids (a list or the kernel's ``Enum``). The kernel is compiled by :func:`txlab.compile`
    for ``arch`` (default: this GPU's) and launched by :func:`txlab.run.launch`, so it runs in the
    isolated worker when ``txlab.config.isolation == "process"``. The raw buffer is kept as
    ``timeline.meta['buffer']``.
    """
    # every argument is checked before the GPU is looked for, so a bad call says so on any machine
    if kernel is None or isinstance(kernel, (str, bytes, int, float)):
        raise InputError(
            f"kernel must be a TIRx PrimFunc, an IRModule or a txlab.Compiled, not {type(kernel).__name__}",
            param="kernel",
        )
    _event_names(events)
    if buffer_slots is not None:
        buffer_slots = check_int(buffer_slots, "buffer_slots", lo=2, fix="the profiler buffer's slot count")
    if arch is not None and not isinstance(arch, str):
        raise InputError(f"arch must be a string such as 'sm_90a', not {type(arch).__name__}", param="arch")
    strict = check_bool(strict, "strict")
    buf, meta = run_profiled(kernel, args, buffer_slots=buffer_slots, arch=arch)
    tl = from_cuda_profiler(buf, events, strict=strict, meta=meta)
    tl.meta["buffer"] = buf
    return tl


def _with_profiler_buffer(name: str, params: list[dict], args) -> tuple[np.ndarray, list]:
    """A zeroed profiler buffer (the kernel's last ``uint64`` buffer parameter) and the full argument
    list with it inserted at its place; TraceError when the kernel has none, its shape is symbolic or
    ``args`` does not cover the other parameters."""
    prof_pos = [i for i, p in enumerate(params) if p["kind"] == "buffer" and p["dtype"] == "uint64"]
    if not prof_pos:
        raise TraceError(
            'the kernel has no uint64 buffer parameter for the profiler (T.match_buffer(prof_ptr, (SLOTS,), "uint64"))'
        )
    pp = prof_pos[-1]
    if len(args) != len(params) - 1:
        raise TraceError(
            f"{name} takes {len(params) - 1} arguments besides the profiler buffer "
            f"({', '.join(p['name'] for i, p in enumerate(params) if i != pp)}), got {len(args)}"
        )
    shape = params[pp]["shape"]
    if not all(isinstance(d, int) for d in shape):
        raise TraceError(
            f"the profiler buffer {params[pp]['name']} has a symbolic shape {shape}; give it a constant number of slots"
        )
    prof = np.zeros(shape, np.uint64)
    full = list(args)
    full.insert(pp, prof)
    return prof, full


def run_profiled(kernel, args, *, buffer_slots=None, arch=None):
    """Compile with :func:`txlab.compile` (txlab's own nvcc cubin, cached) and launch with
    :func:`txlab.run.launch`, so a recording runs where every other txlab launch runs (the isolated
    worker when ``txlab.config.isolation == "process"``) and gets the same argument checks."""
    from txlab.compiler import Compiled
    from txlab.device import require_gpu
    from txlab.run import launch

    info = require_gpu(
        "txlab.timeline.record",
        alternative="a recording reads the GPU's clocks, so the CPU emulator cannot stand in "
        "(its clocks count emulated work, not time); txlab.emulate(kernel, *args) "
        "runs it for correctness.",
    )
    if isinstance(kernel, Compiled):
        compiled = kernel
    else:
        from txlab.compiler import compile as compile_kernel

        compiled = compile_kernel(kernel, arch=arch or info.arch)
    prof, full = _with_profiler_buffer(compiled.name, compiled.entry_params, args)
    if buffer_slots is not None and buffer_slots != prof.size:
        raise TraceError(f"the kernel's profiler buffer has {prof.size} slots, buffer_slots={buffer_slots}")
    launch(compiled, *full, device="gpu")  # its clocks are the point: never the emulator
    meta = {
        "kernel": compiled.name,
        "gpu": info.name,
        "arch": compiled.arch,
        "provenance": f"recorded on {info.name} ({compiled.arch})",
    }
    return prof.reshape(-1), meta


def emulate(kernel, *args, events, arch: str | None = None, strict: bool = False) -> Timeline:
    """Run a CudaProfiler-instrumented kernel once on the CPU emulator (:func:`txlab.emulate`) and
    return its Timeline; the same arguments as :func:`record` (the profiler buffer, the kernel's last
    ``uint64`` buffer parameter, is made here). No GPU is needed, and none is timed: the emulator's
    ``%globaltimer`` counts emulated warp-instructions of the launch (``txlab.emulator.timers``), so
    the timeline's clocks are emulated work (``clock_unit == "warp-instr"``), labelled so in
    ``plot()`` and the widget. They order the events and say how much emulated work ran in between;
    they are not durations. The emulation's result (findings, notes) is ``meta['emulation']``; a
    run with findings still gives its timeline (check ``meta['emulation'].ok``). IKET annotations
    (``T.cuda.iket.*``, which the regular build strips) run too (:mod:`txlab.emulator.iket`): one
    event per warp on tracks "IKET (emulated)" / CTA / warp, on the same emulated clock, described in
    ``meta['iket']``; a kernel with IKET marks and no timer ring takes all its parameters in ``args``
    (no profiler buffer is made) and ``events`` is not used."""
    if kernel is None or isinstance(kernel, (str, bytes, int, float)):
        raise InputError(
            f"kernel must be a TIRx PrimFunc, an IRModule or a txlab.Compiled, not {type(kernel).__name__}",
            param="kernel",
        )
    _event_names(events)
    strict = check_bool(strict, "strict")
    import tvm

    from txlab import ir
    from txlab.build import params_of
    from txlab.emulator import emulate as run_emulated

    mod, _ = ir.as_module(kernel, what="txlab.timeline.emulate")
    rows = params_of(mod)
    name = next((gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)), "kernel")
    from txlab.emulator.runner import iket_annotations
    from txlab.ir import spans

    marks = iket_annotations(mod, spans.user_file_of(mod))
    params = [p for p in rows if p.get("function", name) == name]
    if marks and len(args) == len(params):  # every parameter given: IKET marks only, no timer ring
        prof, full = None, list(args)
    else:
        prof, full = _with_profiler_buffer(name, params, args)
    res = run_emulated(kernel, *full, arch=arch, iket=bool(marks))
    karch = arch or getattr(kernel, "arch", None) or "the default arch"
    meta = {
        "kernel": name,
        "arch": karch,
        "clock_unit": "warp-instr",
        "provenance": f"emulated on the CPU ({karch}): clocks count emulated warp-instructions, not time",
        "emulation": res,
    }
    if prof is None:
        empty = np.zeros(0, np.int64)
        tl = Timeline(
            names=[],
            tracks=[],
            track=empty,
            name_id=empty,
            start_ns=empty,
            end_ns=empty,
            kind=empty,
            meta={"source": "iket (emulated)", **meta},
        )
    else:
        tl = from_cuda_profiler(prof.reshape(-1), events, strict=strict, meta=meta)
    if marks:
        tl = _with_iket(tl, res.iket_events)
    tl.meta["buffer"] = None if prof is None else prof.reshape(-1)
    return tl


_PAYLOAD_TYPE = {"b": 2, "i": 5, "u": 5, "f": 13}  # numpy kind -> IKET payload type (32-bit forms)


def _payload(v) -> tuple[int, int]:
    """(IKET payload type, raw bits) of an emulated payload, as run-iket stores them."""
    if v is None:
        return 0, 0
    v = np.asarray(v)
    if v.dtype.kind == "f":
        if v.dtype.itemsize == 8:
            return 14, int(v.astype(np.float64).view(np.uint64))
        return 13, int(v.astype(np.float32).view(np.uint32))
    if v.dtype.kind in "iu" and v.dtype.itemsize == 8:
        return 7, int(v.astype(np.int64).view(np.uint64))
    return _PAYLOAD_TYPE.get(v.dtype.kind, 5), int(v.astype(np.int64)) & 0xFFFFFFFF


def _with_iket(tl: Timeline, iket_events) -> Timeline:
    """``tl`` (the timer ring's events) plus the emulated IKET events, one track per (CTA, warp)
    under "IKET (emulated)", on the same clock (emulated ``%globaltimer``, low 32 bits)."""
    names = list(tl.names)
    name_of = {n: i for i, n in enumerate(names)}
    tracks = list(tl.tracks)
    track_of: dict = {}
    cols: dict = {k: [] for k in ("track", "name", "start", "end", "kind", "ptype", "praw")}
    for _kname, cta, warp, name, start, end, payload, _line in iket_events:
        key = (tuple(cta), int(warp))
        if key not in track_of:
            track_of[key] = len(tracks)
            tracks.append(
                Track(
                    ("IKET (emulated)", f"CTA ({','.join(map(str, cta))})", f"warp {warp}"),
                    {"cta": key[0], "warp": key[1]},
                )
            )
        if name not in name_of:
            name_of[name] = len(names)
            names.append(name)
        pt, raw = _payload(payload)
        cols["track"].append(track_of[key])
        cols["name"].append(name_of[name])
        cols["start"].append(int(start) % (1 << 32))
        cols["end"].append(int(start if end is None else end) % (1 << 32))
        cols["kind"].append(KIND_INSTANT if end is None else KIND_RANGE)
        cols["ptype"].append(pt)
        cols["praw"].append(raw)
    n = len(tl)
    starts = cols["start"]
    cands = ([tl.t0_ns] if n else []) + ([min(starts)] if starts else [])
    t0 = min(cands) if cands else 0
    shift = tl.t0_ns - t0 if n else 0
    meta = dict(tl.meta)
    if n:
        meta["source"] = f"{meta.get('source', '?')} + iket (emulated)"
    meta["iket"] = {
        "emulated": True,
        "events": len(cols["start"]),
        "note": "IKET annotations run on the CPU emulator: one event per warp (payload: its first active "
        "lane's value), clocks in emulated warp-instructions like the timer ring's, not time",
    }
    return Timeline(
        names=names,
        tracks=tracks,
        track=np.concatenate([tl.track, np.asarray(cols["track"], np.int32)]),
        name_id=np.concatenate([tl.name_id, np.asarray(cols["name"], np.int32)]),
        start_ns=np.concatenate([tl.start_ns + shift, np.asarray(cols["start"], np.int64) - t0]),
        end_ns=np.concatenate([tl.end_ns + shift, np.asarray(cols["end"], np.int64) - t0]),
        kind=np.concatenate([tl.kind, np.asarray(cols["kind"], np.uint8)]),
        payload_type=np.concatenate([np.zeros(n, np.uint8), np.asarray(cols["ptype"], np.uint8)]),
        payload_raw=np.concatenate([np.zeros(n, np.uint64), np.asarray(cols["praw"], np.uint64)]),
        warnings=tl.warnings,
        meta=meta,
        t0_ns=t0,
    )
