"""TuneView: a tuning sweep (txlab.tune), live while it runs.

Shows progress (compiled / measured / failed of the total, elapsed and ETA), the best configuration
so far, a heatmap of the best time over two chosen parameters (``heat_x``, ``heat_y``; default the
two most influential) and a table of every configuration, sortable by any column.

    run = txlab.autotune(build, space, inputs, check=ref, background=True)
    TuneView(run)            # fills in as results come in; TuneView(result) for a finished sweep
"""

from __future__ import annotations

import threading
import time

import traitlets

from txlab.views._base import View, json_bytes


class TuneView(View):
    """``data-testid``s: ``tune-progress`` (bar), ``tune-progress-text``, ``tune-best``,
    ``tune-heat-x`` / ``tune-heat-y`` (parameter pickers), ``tune-heatmap`` (canvas; hover shows a
    cell's best time and configuration), ``tune-table``, ``tune-sort-<column>`` (header buttons)."""

    _bundle = "tune"
    heat_x = traitlets.Unicode("").tag(sync=True)
    heat_y = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(520).tag(sync=True)
    #: seconds between two pushes of a running sweep (the last state is always pushed)
    interval_s = 0.25

    def __init__(self, result, **kwargs):
        super().__init__(**kwargs)
        from txlab.tune.model import TuneResult

        self.run = None
        if not isinstance(result, TuneResult):
            if not hasattr(result, "result"):
                raise TypeError(
                    "TuneView takes a TuneResult or a running sweep (txlab.autotune(..., "
                    f"background=True)), not {type(result).__name__}"
                )
            self.run, result = result, result.result
        self.result = result
        self._lock = threading.Lock()
        self._last = 0.0
        self._timer = None
        self._push()
        result.subscribe(self._changed)

    def _changed(self, _result):
        now = time.monotonic()
        with self._lock:
            if now - self._last >= self.interval_s:
                self._last = now
                push = True
            else:
                push = False
                if self._timer is None:  # make sure the latest state arrives
                    self._timer = threading.Timer(self.interval_s, self._deferred)
                    self._timer.daemon = True
                    self._timer.start()
        if push:
            self._push()

    def _deferred(self):
        with self._lock:
            self._timer = None
            self._last = time.monotonic()
        self._push()

    def _push(self):
        r = self.result
        d = r.to_dict()
        d["progress"] = r.progress()
        if not self.heat_x or not self.heat_y:
            top = r.top_params(2)
            names = list(r.space.get("params", {}))
            top += [n for n in names if n not in top]
            if len(top) >= 2:
                self.heat_x, self.heat_y = self.heat_x or top[0], self.heat_y or top[1]
        self.data = json_bytes(d)

    def close(self):
        self.result.unsubscribe(self._changed)
        super().close()
