"""TimelineView: an interactive canvas timeline of a :class:`txlab.timeline.Timeline`.

The events travel as one binary buffer (``data``) of bit-packed columns described by
``meta["columns"]``: the format is :mod:`txlab.views.timeline_codec` (``encode_columns``, the
reference ``decode_columns``; the front end's decoder is ``widgets/src/_timeline_codec.js``).
"""

from __future__ import annotations

import traitlets

from txlab.errors import InputError
from txlab.timeline.model import Timeline
from txlab.views._base import View
from txlab.views.timeline_codec import decode_columns, encode_columns  # noqa: F401  (public here too)


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
    height = traitlets.Int(420).tag(sync=True)

    def __init__(self, timeline, **kwargs):
        if not isinstance(timeline, Timeline):
            raise InputError(
                f"TimelineView shows a txlab.timeline.Timeline (from_cuda_profiler, load_iket, "
                f"record, saved), not {type(timeline).__name__}",
                param="timeline",
            )
        meta, data = self._payload(timeline)
        # the columns go with the widget's comm_open (one message, no second update)
        super().__init__(meta=meta, data=data, **kwargs)
        self.timeline = timeline

    @staticmethod
    def _payload(tl) -> tuple[dict, bytes]:
        if len(tl.names) > 65535:
            raise InputError(
                f"TimelineView shows at most 65535 distinct event names; this timeline has {len(tl.names)}",
                param="timeline",
            )
        spec, data = encode_columns(tl)
        m = tl.meta
        meta = {
            "names": list(tl.names),
            "tracks": [[str(p) for p in t.path] for t in tl.tracks],
            "source": str(m.get("source", "")),
            "title": str(m.get("title") or m.get("kernel") or "in-kernel timeline"),
            "provenance": tl.provenance,
            "synthetic": bool(m.get("synthetic", False)),
            "clock_unit": tl.clock_unit,
            "duration_ns": tl.duration_ns,
            "num_events": len(tl),
            "warnings": {str(k): int(v) for k, v in tl.warnings.items()},
            "max_depth": spec["max_depth"],
            "columns": spec,
        }
        return meta, data

    def load(self, tl):
        """Show another timeline in this view (one sync message)."""
        if not isinstance(tl, Timeline):
            raise InputError(f"TimelineView shows a txlab.timeline.Timeline, not {type(tl).__name__}", param="timeline")
        meta, data = self._payload(tl)
        with self.hold_sync():
            self.data = data
            self.meta = meta
        self.timeline = tl
