"""TimelineView: an interactive canvas timeline of a :class:`txlab.timeline.Timeline`.

Events travel to the browser as one binary buffer (``data``) of compact columns, described by
``meta["columns"]``; what the comm carries dominates first-render time (~70 ms per MB on a
2-core machine), so every column takes the fewest bytes that keep it exact:

* ``offsets``: uint32 per track (events are sorted by (track, start), so a track's events are
  ``offsets[t]:offsets[t+1]`` and no per-event track id is sent);
* ``name``: uint8/16/32 name ids, the narrowest width that holds ``len(names) - 1``;
* ``first``: per track, the first start minus ``meta["columns"]["t0"]``;
* ``step``: per event, the start relative to the previous event of its track, either as the gap
  after its end (``mode == "gap"``: back-to-back events give small numbers) or as the start delta
  (``mode == "delta"``), whichever packs smaller; 0 for a track's first event;
* ``dur``: end - start;
* ``depth``: uint8 sub-row for overlapping ranges (absent when no range overlaps);
* ``payload``: the events that carry an IKET payload (uint32 index + float64 value; absent if none).

Integer columns (``first``, ``step``, ``dur``) are packed at 1, 2 or 4 bytes per value, the width
that minimises the total size; values that do not fit (negative, or too wide) are listed as
exceptions (uint32 index + exact float64 value) that the decoder patches in; a column where that
does not pay is sent as float64. Every time is an integer ns, exact while below 2**53.
:func:`decode_columns` is the reference decoder (the front end's is ``widgets/src/_timeline_codec.js``).
"""
from __future__ import annotations

import numpy as np
import traitlets

from txlab.views._base import View

_MAX_DEPTH = 3
_EXC_BYTES = 12  # one exception: uint32 index + float64 value


def _depths(tl) -> np.ndarray:
    """Sub-row of every event so that overlapping ranges of one track do not hide each other
    (greedy interval colouring, capped at 4 rows; only tracks that overlap pay the Python loop)."""
    n = len(tl)
    depth = np.zeros(n, np.uint8)
    if n == 0:
        return depth
    tr, s, e = tl.track, tl.start_ns, tl.end_ns
    new = np.ones(n, bool)
    new[1:] = tr[1:] != tr[:-1]
    # common case: within each track every event starts after the previous one ended (then the
    # ends never decrease and nothing overlaps)
    if (e >= s).all() and ((s[1:] >= e[:-1]) | new[1:]).all():
        return depth
    # running max of the previous ends within each track: tracks are contiguous, so offsetting each
    # track by seg * 2**40 (times are < 2**40 ns) lets one global running max serve all tracks
    seg = (np.cumsum(new) - 1).astype(np.int64)
    prev_end = np.zeros(n, np.int64)
    prev_end[1:] = e[:-1]
    prev_end[new] = 0
    big = np.int64(1) << 40
    run = np.maximum.accumulate(seg * big + np.clip(prev_end, 0, big - 1)) - seg * big
    overlaps = (s < run) & ~new
    for t in np.unique(tr[overlaps]):
        idx = np.flatnonzero(tr == t)
        ends = []  # end time of the last event on each sub-row
        for i in idx:
            si, ei = s[i], e[i]
            for r, last in enumerate(ends):
                if si >= last:
                    ends[r] = ei
                    depth[i] = min(r, _MAX_DEPTH)
                    break
            else:
                ends.append(ei)
                depth[i] = min(len(ends) - 1, _MAX_DEPTH)
    return depth


def _payload_values(tl):
    """(indices, float64 values) of the events that carry an IKET payload (vectorised
    :func:`txlab.timeline._decode_payload`)."""
    if tl.payload_type is None:
        return np.zeros(0, np.uint32), np.zeros(0, np.float64)
    idx = np.flatnonzero(tl.payload_type)
    ptype = tl.payload_type[idx]
    raw = np.ascontiguousarray(tl.payload_raw[idx], dtype=np.uint64)
    lo32 = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    vals = raw.astype(np.float64)                      # unknown types: the raw bits as a number
    for code, conv in ((2, lambda r, lo: (r != 0).astype(np.float64)),
                       (5, lambda r, lo: lo.view(np.int32).astype(np.float64)),
                       (7, lambda r, lo: r.view(np.int64).astype(np.float64)),
                       (13, lambda r, lo: lo.view(np.float32).astype(np.float64)),
                       (14, lambda r, lo: r.view(np.float64))):
        m = ptype == code
        if m.any():
            vals[m] = conv(raw[m], lo32[m])
    return idx.astype(np.uint32), vals


class _Blob:
    """Columns appended at 8-byte aligned offsets; ``spec`` says where each one is."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, arr: np.ndarray) -> int:
        off = self.size
        b = np.ascontiguousarray(arr).tobytes()
        pad = -len(b) % 8
        self.parts.append(b + b"\0" * pad)
        self.size += len(b) + pad
        return off

    def bytes(self) -> bytes:
        return b"".join(self.parts)


_UINT = {1: np.dtype("<u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4")}


def _uint_width(max_value: int) -> int:
    for w in (1, 2, 4):
        if max_value < 1 << (8 * w):
            return w
    raise ValueError(f"id {max_value} does not fit in 32 bits")


def _choose_width(v: np.ndarray) -> tuple[int, int]:
    """(width, exceptions) of the cheapest packing of int64 ``v``: width 1/2/4 with the values
    that do not fit as exceptions, or 8 (dense float64)."""
    n = len(v)
    best = (8, 0)
    best_cost = 8 * n
    if n == 0:
        return 1, 0
    neg = int(np.count_nonzero(v < 0))
    for w in (1, 2, 4):
        x = neg + int(np.count_nonzero(v > (1 << (8 * w)) - 1))
        cost = w * n + _EXC_BYTES * x
        if cost < best_cost:
            best, best_cost = (w, x), cost
    return best


def _pack_int(blob: _Blob, v: np.ndarray, width: int | None = None) -> dict:
    """Pack int64 ``v`` into ``blob``; ``width`` forces one (tests), else the cheapest is chosen."""
    v = np.asarray(v, dtype=np.int64)
    w = _choose_width(v)[0] if width is None else width
    spec = {"w": w, "n": int(len(v)), "off": 0, "xn": 0, "xoff": 0}
    if w == 8:
        spec["off"] = blob.add(v.astype("<f8"))
        return spec
    bad = (v < 0) | (v > (1 << (8 * w)) - 1)
    xi = np.flatnonzero(bad)
    spec["off"] = blob.add(np.where(bad, 0, v).astype(_UINT[w]))
    if len(xi):
        spec["xn"] = int(len(xi))
        spec["xoff"] = blob.add(xi.astype("<u4"))
        blob.add(v[xi].astype("<f8"))        # right after the (8-aligned) indices
    return spec


def encode_columns(tl) -> tuple[dict, bytes]:
    """The compact binary payload of ``tl`` (see the module docstring): ``(spec, data)``."""
    n = len(tl)
    ntr = len(tl.tracks)
    track = np.asarray(tl.track)
    if n and (track[0] < 0 or track[-1] >= ntr or np.any(track[1:] < track[:-1])):
        raise ValueError("Timeline events must be sorted by track and name existing tracks "
                         "(build it with Timeline(...), which sorts them)")
    blob = _Blob()
    offsets = np.searchsorted(track, np.arange(ntr + 1), side="left").astype("<u4")
    spec: dict = {"version": 2, "n": n, "tracks": ntr}
    spec["offsets"] = blob.add(offsets)
    wn = _uint_width(max(len(tl.names) - 1, 0))
    spec["name"] = {"w": wn, "off": blob.add(np.asarray(tl.name_id).astype(_UINT[wn]))}
    s = np.asarray(tl.start_ns, np.int64)
    e = np.asarray(tl.end_ns, np.int64)
    t0 = int(s.min()) if n else 0
    spec["t0"] = t0
    dur = e - s
    has = offsets[1:] > offsets[:-1]
    first = np.zeros(ntr, np.int64)
    first[has] = s[offsets[:-1][has]] - t0
    new = np.zeros(n, bool)
    new[offsets[:-1][has]] = True
    gap = np.zeros(n, np.int64)
    delta = np.zeros(n, np.int64)
    if n > 1:
        gap[1:] = s[1:] - e[:-1]
        delta[1:] = s[1:] - s[:-1]
    gap[new] = 0
    delta[new] = 0
    wg, xg = _choose_width(gap)
    wd, xd = _choose_width(delta)
    cost = lambda w, x: w * n + _EXC_BYTES * x  # noqa: E731
    mode, step = ("gap", gap) if cost(wg, xg) <= cost(wd, xd) else ("delta", delta)
    spec["mode"] = mode
    spec["first"] = _pack_int(blob, first)
    spec["step"] = _pack_int(blob, step)
    spec["dur"] = _pack_int(blob, dur)
    depth = _depths(tl)
    max_depth = int(depth.max()) if n else 0
    spec["depth"] = blob.add(depth) if max_depth else None
    pidx, pval = _payload_values(tl)
    spec["payload"] = None
    if len(pidx):
        spec["payload"] = {"n": int(len(pidx)), "off": blob.add(pidx.astype("<u4"))}
        blob.add(pval.astype("<f8"))
    spec["max_depth"] = max_depth
    spec["bytes"] = blob.size
    return spec, blob.bytes()


def _unpack_int(data: bytes, spec: dict) -> np.ndarray:
    n, w = spec["n"], spec["w"]
    if w == 8:
        return np.frombuffer(data, "<f8", n, spec["off"]).astype(np.int64)
    v = np.frombuffer(data, _UINT[w], n, spec["off"]).astype(np.int64)
    if spec["xn"]:
        xi = np.frombuffer(data, "<u4", spec["xn"], spec["xoff"])
        xoff = spec["xoff"] + 4 * spec["xn"] + (-4 * spec["xn"] % 8)
        v[xi] = np.frombuffer(data, "<f8", spec["xn"], xoff).astype(np.int64)
    return v


def decode_columns(spec: dict, data: bytes) -> dict:
    """Inverse of :func:`encode_columns` (reference for the front end's decoder and the tests):
    ``track``, ``name``, ``start``, ``end`` (int64 ns), ``depth`` (uint8) and ``payload``
    (float64, NaN where none)."""
    n, ntr = spec["n"], spec["tracks"]
    offsets = np.frombuffer(data, "<u4", ntr + 1, spec["offsets"]).astype(np.int64)
    track = np.repeat(np.arange(ntr), np.diff(offsets))
    name = np.frombuffer(data, _UINT[spec["name"]["w"]], n, spec["name"]["off"]).astype(np.int64)
    first = _unpack_int(data, spec["first"])
    step = _unpack_int(data, spec["step"])
    dur = _unpack_int(data, spec["dur"])
    start = np.zeros(n, np.int64)
    for t in range(ntr):   # per track (reference decoder: clarity over speed)
        lo, hi = offsets[t], offsets[t + 1]
        if lo == hi:
            continue
        st = step[lo:hi].copy()
        st[0] = spec["t0"] + first[t]
        if spec["mode"] == "gap":
            st[1:] += dur[lo:hi - 1]
        start[lo:hi] = np.cumsum(st)
    depth = (np.frombuffer(data, "<u1", n, spec["depth"]).copy() if spec["depth"] is not None
             else np.zeros(n, np.uint8))
    payload = np.full(n, np.nan)
    if spec["payload"]:
        k, off = spec["payload"]["n"], spec["payload"]["off"]
        pidx = np.frombuffer(data, "<u4", k, off)
        payload[pidx] = np.frombuffer(data, "<f8", k, off + 4 * k + (-4 * k % 8))
    return {"track": track, "name": name, "start": start, "end": start + dur, "depth": depth,
            "payload": payload}


class TimelineView(View):
    """Tracks grouped block → group (IKET: SM / CTA → warp). Wheel zooms around the cursor, drag
    pans, the minimap shows the whole trace and the visible window (drag it), hover shows name,
    duration and lane, the legend toggles names. Draws at pixel resolution (level of detail) so a
    million events stay interactive. ``data-testid``s: ``timeline-canvas``, ``timeline-minimap``,
    ``timeline-zoom-in``, ``timeline-zoom-out``, ``timeline-reset``, ``timeline-legend``,
    ``timeline-frame`` (the last frame's draw time, muted) and ``timeline-stats`` (hidden; JSON
    with first-render and per-frame times, read by benchmarks/browser_latency.py)."""

    _bundle = "timeline"
    meta = traitlets.Dict().tag(sync=True)
    data = traitlets.Bytes(b"").tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)

    def __init__(self, timeline, **kwargs):
        meta, data = self._payload(timeline)
        # the columns go with the widget's comm_open (one message, no second update)
        super().__init__(meta=meta, data=data, **kwargs)
        self.timeline = timeline

    @staticmethod
    def _payload(tl) -> tuple[dict, bytes]:
        if len(tl.names) > 65535:
            raise ValueError("TimelineView shows at most 65535 distinct event names")
        spec, data = encode_columns(tl)
        m = tl.meta
        meta = {
            "names": list(tl.names),
            "tracks": [[str(p) for p in t.path] for t in tl.tracks],
            "source": str(m.get("source", "")),
            "title": str(m.get("title") or m.get("kernel") or "in-kernel timeline"),
            "provenance": tl.provenance,
            "synthetic": bool(m.get("synthetic", False)),
            "duration_ns": tl.duration_ns,
            "num_events": len(tl),
            "warnings": {str(k): int(v) for k, v in tl.warnings.items()},
            "max_depth": spec["max_depth"],
            "columns": spec,
        }
        return meta, data

    def _load(self, tl):
        """Show another timeline in this view (one sync message)."""
        meta, data = self._payload(tl)
        with self.hold_sync():
            self.data = data
            self.meta = meta
        self.timeline = tl
