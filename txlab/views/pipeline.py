"""PipelineView: step through a :class:`txlab.pipelines.PipelineTrace`.

Swimlanes per role (ops as ticks, blocked waits as bars, the deadlock point marked), one column per
stage slot with each barrier's phase bit, pending arrivals and tx bytes, a step/play control, the
diagnosed problems (click one to jump to it) and the protocol's parameters, which re-run the
simulation in Python when changed.

Events travel as one binary int32 column block (``data``: n × 11, the layout of
``PipelineTrace._ev_fields``); everything else is compact JSON in ``meta``.
"""

from __future__ import annotations

from array import array

import traitlets

from txlab.deprecation import renamed
from txlab.views._base import View, deprecated_alias

#: parameters the widget may change (and their allowed ranges); others stay as simulated
EDITABLE = {
    "stages": (1, 64),
    "iterations": (0, 100_000),
    "producer_phase": (0, 1),
    "consumer_phase": (0, 1),
    "init_full": (1, 1024),
    "init_empty": (1, 1024),
    "empty_phase_offset": (0, 1),
}


def pack_events(trace) -> bytes:
    """The trace's events as one int32 buffer (the widget's payload), fields in ``trace.event_fields``."""
    flat = array("i")
    for e in trace.event_rows:
        flat.extend(e)
    if flat.itemsize != 4:  # pragma: no cover - every supported platform has 32-bit C int
        raise RuntimeError("array('i') is not 32-bit here")
    return flat.tobytes()


class PipelineView(View):
    """Interactive view of a pipeline simulation. ``PipelineView(trace)``; ``.step`` is the
    selected event (``-1``: the initial state) and syncs both ways; ``.trace`` the shown trace.

    ``data-testid``s: ``pipeline-first``, ``pipeline-prev``, ``pipeline-play``, ``pipeline-next``,
    ``pipeline-last``, ``pipeline-deadlock``, ``pipeline-slider``, ``pipeline-step-label``,
    ``pipeline-lanes`` (canvas; click selects an event), ``pipeline-slots``,
    ``pipeline-problem-<i>``, ``pipeline-param-<name>``, ``pipeline-rerun``, ``pipeline-status``,
    ``pipeline-event``."""

    _bundle = "pipeline"
    meta = traitlets.Dict().tag(sync=True)
    #: deprecated: the event rows are ``data`` like every view's payload
    events = deprecated_alias("events", "data")
    step = traitlets.Int(-1).tag(sync=True)
    #: parameters sent back by the front end; setting them re-runs the simulation
    params = traitlets.Dict().tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(520).tag(sync=True)

    def __init__(self, trace, **kwargs):
        super().__init__(**kwargs)
        self._loading = False
        self.load(trace)
        self.observe(self._on_params, names="params")

    def load(self, trace, step: int | None = None):
        """Show another trace (keeps the widget; selects the deadlock point or the first event)."""
        from txlab.pipelines import PipelineTrace

        if not isinstance(trace, PipelineTrace):
            from txlab.errors import InputError

            raise InputError(
                f"PipelineView shows a txlab.pipelines.PipelineTrace (a spec's or from_kernel's .simulate()), not "
                f"{type(trace).__name__}",
                param="trace",
            )
        self.trace = trace
        d = trace.to_dict(max_events=0)
        d.pop("events")
        d["editable"] = {k: list(v) for k, v in EDITABLE.items()}
        d["ev_fields"] = list(trace._ev_fields)
        self._loading = True
        try:
            self.meta = d
            self.data = pack_events(trace)
            self.params = {k: trace.params[k] for k in EDITABLE if k in trace.params}
            self.error = ""
            if step is None:
                step = trace.deadlock.step if trace.deadlock else -1
            self.step = max(-1, min(step, len(trace) - 1))
        finally:
            self._loading = False

    def _on_params(self, change):
        if self._loading:
            return
        new = dict(change["new"] or {})
        changes = {}
        for k, v in new.items():
            if k not in EDITABLE:
                continue
            lo, hi = EDITABLE[k]
            try:
                v = int(v)
            except (TypeError, ValueError):
                self.error = f"{k} must be an integer, got {v!r}"
                return
            if not lo <= v <= hi:
                self.error = f"{k} must be between {lo} and {hi}, got {v}"
                return
            if self.trace.params.get(k) != v:
                changes[k] = v
        if not changes:
            return
        try:
            trace = self.trace.rerun(**changes)
        except ValueError as exc:  # ScriptError: a message meant for the user
            self.error = str(exc)
            return
        self.load(trace)


# PipelineViewer was this view's name until 0.1 (one release of warnings)
__getattr__ = renamed(__name__, {"PipelineViewer": "PipelineView"})
