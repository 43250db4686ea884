"""TimelineView: an interactive canvas timeline of a :class:`txlab.timeline.Timeline`.

Events travel as binary columns (typed arrays on the JavaScript side), sorted by (track, start):
``ev_track`` uint32, ``ev_name`` uint16, ``ev_start`` float64 (ns), ``ev_dur`` float32 (ns),
``ev_depth`` uint8 (sub-row for overlapping ranges), ``ev_payload`` float64 (NaN: none; empty when
the trace has no payloads). Track labels, names and provenance go in ``meta`` (compact JSON).
"""
from __future__ import annotations

import numpy as np
import traitlets

from txlab.views._base import View

_MAX_DEPTH = 3


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


class TimelineView(View):
    """Tracks grouped block → group (IKET: SM / CTA → warp). Wheel zooms around the cursor, drag
    pans, the minimap shows the whole trace and the visible window (drag it), hover shows name,
    duration and lane, the legend toggles names. Draws at pixel resolution (level of detail) so a
    million events stay interactive. ``data-testid``s: ``timeline-canvas``, ``timeline-minimap``,
    ``timeline-zoom-in``, ``timeline-zoom-out``, ``timeline-reset``, ``timeline-stats`` (JSON with
    first-render and per-frame times), ``timeline-legend``."""

    _bundle = "timeline"
    meta = traitlets.Dict().tag(sync=True)
    ev_track = traitlets.Bytes(b"").tag(sync=True)
    ev_name = traitlets.Bytes(b"").tag(sync=True)
    ev_start = traitlets.Bytes(b"").tag(sync=True)
    ev_dur = traitlets.Bytes(b"").tag(sync=True)
    ev_depth = traitlets.Bytes(b"").tag(sync=True)
    ev_payload = traitlets.Bytes(b"").tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)

    def __init__(self, timeline, **kwargs):
        super().__init__(**kwargs)
        self.timeline = timeline
        self._load(timeline)

    def _load(self, tl):
        if len(tl.names) > 65535:
            raise ValueError("TimelineView shows at most 65535 distinct event names")
        pay = b""
        if tl.payload_type is not None and tl.payload_type.any():
            from txlab.timeline import _decode_payload

            vals = np.full(len(tl), np.nan)
            for i in np.flatnonzero(tl.payload_type):
                v = _decode_payload(int(tl.payload_type[i]), int(tl.payload_raw[i]))
                vals[i] = float(v)
            pay = vals.astype("<f8").tobytes()
        depth = _depths(tl)
        m = tl.meta
        self.meta = {
            "names": list(tl.names),
            "tracks": [[str(p) for p in t.path] for t in tl.tracks],
            "source": str(m.get("source", "")),
            "title": str(m.get("title") or m.get("kernel") or "in-kernel timeline"),
            "provenance": tl.provenance,
            "synthetic": bool(m.get("synthetic", False)),
            "duration_ns": tl.duration_ns,
            "num_events": len(tl),
            "warnings": {str(k): int(v) for k, v in tl.warnings.items()},
            "max_depth": int(depth.max()) if len(depth) else 0,
        }
        self.ev_track = tl.track.astype("<u4").tobytes()
        self.ev_name = tl.name_id.astype("<u2").tobytes()
        self.ev_start = tl.start_ns.astype("<f8").tobytes()
        self.ev_dur = (tl.end_ns - tl.start_ns).astype("<f4").tobytes()
        self.ev_depth = depth.tobytes()
        self.ev_payload = pay
