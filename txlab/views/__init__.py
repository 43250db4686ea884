"""Notebook widgets: thin anywidget views over txlab's model objects.

Each module here owns one widget; its front-end source lives in ``widgets/src/<name>.js`` and is
bundled into ``txlab/static/<name>.js``. Import the widget from its module, e.g.
``from txlab.views.schedule import SchedulerExplorer`` (or ``txlab.views.SchedulerExplorer``).
"""
from __future__ import annotations

import importlib

_WIDGETS = {
    "SchedulerExplorer": "txlab.views.schedule",
    "PipelineViewer": "txlab.views.pipeline",
    "PoolMap": "txlab.views.pool",
    "TimelineView": "txlab.views.timeline",
    "APIExplorer": "txlab.views.api",
    "TuneView": "txlab.views.tune",
}


def __getattr__(name):
    if name in _WIDGETS:
        return getattr(importlib.import_module(_WIDGETS[name]), name)
    raise AttributeError(f"module 'txlab.views' has no attribute {name!r}")
