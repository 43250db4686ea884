"""Notebook widgets: thin anywidget views over txlab's model objects.

Each module here owns one widget; its front-end source lives in ``widgets/src/<name>.js`` and is
bundled into ``txlab/static/<name>.js``. Import the widget from its module, e.g.
``from txlab.views.schedule import SchedulerExplorer`` (or ``txlab.views.SchedulerExplorer``).

The hookup runs one way, from here down: importing this package (``import txlab`` does) registers
each model's widget with :mod:`txlab.hooks`, so ``model.view()`` works without the model importing
Jupyter code, and the notebook progress bar. :func:`install_display` registers the models' HTML
(:mod:`txlab.display`) as IPython ``text/html`` formatters; ``import txlab`` calls it when an
IPython shell is running, and ``%load_ext txlab`` does too. Nothing here imports anywidget until a
widget is built.
"""
from __future__ import annotations

import importlib

from txlab import hooks

_WIDGETS = {
    "SchedulerExplorer": "txlab.views.schedule",
    "PipelineViewer": "txlab.views.pipeline",
    "PoolMap": "txlab.views.pool",
    "TimelineView": "txlab.views.timeline",
    "APIExplorer": "txlab.views.api",
    "SourceView": "txlab.views.source",
    "DiffView": "txlab.views.diff",
    "TuneView": "txlab.views.tune",
    # the base every widget subclasses, and its bundle reader (for writing a view of your own)
    "View": "txlab.views._base",
    "bundle": "txlab.views._base",
}

# model class -> the widget its .view() shows
VIEW_OF = {
    "txlab.timeline.model.Timeline": "TimelineView",
    "txlab.pools.plan.PoolLayout": "PoolMap",
    "txlab.pipelines.trace.PipelineTrace": "PipelineViewer",
    "txlab.schedulers.schedule.ScheduleTrace": "SchedulerExplorer",
    "txlab.tune.model.TuneResult": "TuneView",
}


def _factory(widget: str):
    def make(model, **kwargs):
        return getattr(importlib.import_module(_WIDGETS[widget]), widget)(model, **kwargs)

    make.__name__ = f"make_{widget}"
    return make


for _model, _widget in VIEW_OF.items():
    hooks.register_widget(_model, _factory(_widget))


def _progress_bar(total):
    from txlab.views.progress import notebook_bar

    return notebook_bar(total)


hooks.register_progress(_progress_bar)


def install_display(shell=None) -> bool:
    """Register txlab's HTML displays with ``shell`` (default: the running IPython shell).
    Returns whether a shell was found."""
    if shell is None:
        import sys

        if "IPython" not in sys.modules:
            return False
        shell = sys.modules["IPython"].get_ipython()
        if shell is None:
            return False
    from txlab.display import install

    install(shell)
    return True


def __getattr__(name):
    if name in _WIDGETS:
        return getattr(importlib.import_module(_WIDGETS[name]), name)
    raise AttributeError(f"module 'txlab.views' has no attribute {name!r}")
