"""ScheduleView: two scheduler configurations side by side, recomputed on every control change.

The front end (widgets/src/schedule.js) edits ``left`` / ``right`` (``{"scheduler", "num_ctas",
"concurrency", "params"}``); Python re-traces with :func:`txlab.schedulers.trace` and sends back a
header (the trace's ``to_dict(arrays=False)``: grid, metrics) plus the visit columns as one int32
buffer per side (``left_data`` / ``right_data``, row-major ``visits x len(columns)``).
"""

from __future__ import annotations

import time

import numpy as np
import traitlets

from txlab.deprecation import renamed
from txlab.views._base import View

_COLUMNS = ["cta", "step", "wave", "row", "col", "layer"]


def _config_of(obj) -> dict:
    from txlab.schedulers import ScheduleTrace, spec_of

    if isinstance(obj, ScheduleTrace):
        params = dict(obj.params)
        if obj.scheduler == "FlashAttentionLPTScheduler" and not params.get("persistent"):
            nc = None
        else:
            nc = obj.num_ctas
        return {"scheduler": obj.scheduler, "num_ctas": nc, "concurrency": obj.concurrency, "params": params}
    if isinstance(obj, str):
        return {"scheduler": spec_of(obj).name, "num_ctas": None, "concurrency": None, "params": {}}
    if not isinstance(obj, dict):
        from txlab.errors import InputError

        raise InputError(
            "ScheduleView takes a ScheduleTrace (txlab.schedulers.trace(...)), a scheduler name or a dict "
            f'{{"scheduler", "num_ctas", "concurrency", "params"}}, not {type(obj).__name__}',
            param="left",
        )
    cfg = dict(obj)
    cfg.setdefault("params", {})
    cfg.setdefault("num_ctas", None)
    cfg.setdefault("concurrency", None)
    return cfg


class ScheduleView(View):
    """Tile grid coloured by CTA / step / wave, a wave scrubber, every constructor parameter as a
    control, hover for (cta, step, tile), metrics, and two configurations side by side.

    ``ScheduleView(left, right)`` where each side is a :class:`ScheduleTrace`, a scheduler
    name, or a dict ``{"scheduler", "num_ctas", "concurrency", "params"}``.
    ``specialize=False`` (default here) re-traces with runtime extents, so most edits cost a few
    milliseconds; group sizes and other compile-time parameters compile once per value (~0.6 s).
    """

    _bundle = "schedule"
    height = traitlets.Int(560).tag(sync=True)
    schema = traitlets.Dict().tag(sync=True)
    left = traitlets.Dict().tag(sync=True)
    right = traitlets.Dict().tag(sync=True)
    left_view = traitlets.Dict().tag(sync=True)
    right_view = traitlets.Dict().tag(sync=True)
    left_data = traitlets.Bytes(b"").tag(sync=True)
    right_data = traitlets.Bytes(b"").tag(sync=True)
    color_by = traitlets.Unicode("cta").tag(sync=True)
    wave = traitlets.Int(-1).tag(sync=True)
    specialize = traitlets.Bool(False).tag(sync=True)
    #: Python-side milliseconds of the last update, per side (trace + metrics + payload)
    timings = traitlets.Dict().tag(sync=True)

    def __init__(self, left="ClusterPersistentScheduler2D", right=None, *, specialize=False, **kwargs):
        from txlab.schedulers import SCHEDULERS

        if right is None:
            right = dict(_config_of(left))
            right["params"] = dict(right["params"])
            if right["scheduler"] == "ClusterPersistentScheduler2D":
                right["params"]["serpentine"] = not right["params"].get("serpentine", False)
        self._traces = {}
        super().__init__(schema={k: v.to_dict() for k, v in SCHEDULERS.items()}, specialize=specialize, **kwargs)
        for side, obj in (("left", left), ("right", right)):
            from txlab.schedulers import ScheduleTrace

            if isinstance(obj, ScheduleTrace):
                self._traces[side] = obj
            setattr(self, side, _config_of(obj))

    @traitlets.observe("left", "right", "specialize")
    def _on_change(self, change):
        sides = ["left", "right"] if change["name"] == "specialize" else [change["name"]]
        for side in sides:
            self.update(side)

    def update(self, side: str):
        """Re-trace one side from its config and push the result to the front end."""
        from txlab.errors import TxlabError
        from txlab.schedulers import trace

        cfg = getattr(self, side)
        if not cfg:
            return {}
        t0 = time.perf_counter()
        given = self._traces.pop(side, None)
        try:
            if given is not None:
                tr = given
            else:
                tr = trace(
                    cfg["scheduler"],
                    cfg.get("num_ctas"),
                    specialize=self.specialize,
                    concurrency=cfg.get("concurrency"),
                    **cfg.get("params", {}),
                )
            header = tr.to_dict(arrays=False)
            cols = tr.columns()
            names = _COLUMNS + [a for a in tr.attrs]
            header["columns"] = names
            data = np.stack([cols[n] for n in names], axis=1).astype("<i4").tobytes()
        except (TxlabError, ValueError) as exc:
            header, data = {"error": str(exc), "scheduler": cfg.get("scheduler")}, b""
        header["python_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
        with self.hold_sync():
            setattr(self, f"{side}_data", data)
            setattr(self, f"{side}_view", header)
            self.timings = {**self.timings, side: header["python_ms"]}
        return header

    def trace_of(self, side: str = "left"):
        """The :class:`ScheduleTrace` currently shown on ``side`` (re-traced from its config)."""
        from txlab.schedulers import trace

        cfg = getattr(self, side)
        return trace(
            cfg["scheduler"],
            cfg.get("num_ctas"),
            specialize=self.specialize,
            concurrency=cfg.get("concurrency"),
            **cfg.get("params", {}),
        )


# SchedulerExplorer was this view's name until 0.1 (one release of warnings)
__getattr__ = renamed(__name__, {"SchedulerExplorer": "ScheduleView"})
