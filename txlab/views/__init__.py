"""Notebook widgets: thin anywidget views over txlab's model objects.

Each module here owns one widget; its front-end source lives in ``widgets/src/<name>.js`` and is
bundled into ``txlab/static/<name>.js``. Import the widget from its module, e.g.
``from txlab.views.schedule import ScheduleView`` (or ``txlab.views.ScheduleView``). A widget is
named ``<Concept>View`` after the model it shows (DESIGN.md).

The hookup runs one way, from here down: importing this package (``import txlab`` does) registers
each model's widget with :mod:`txlab.hooks`, so ``model.view()`` works without the model importing
Jupyter code, and the notebook progress bar. :func:`install_display` registers the models' HTML
(:mod:`txlab.display`) as IPython ``text/html`` formatters; ``import txlab`` calls it when an
IPython shell is running, and ``%load_ext txlab`` does too. Nothing here imports anywidget until a
widget is built. The registrations are in :mod:`txlab.views.registry`; this file re-exports, and
its ``__getattr__`` imports a widget's module when the widget is first named.
"""

from __future__ import annotations

from txlab.views.registry import VIEW_OF, WIDGETS, install_display, widget_class

# old widget names (one release of warnings)
_DEPRECATED = {
    "SchedulerExplorer": "ScheduleView",
    "PipelineViewer": "PipelineView",
    "PoolMap": "PoolView",
    "APIExplorer": "APIView",
}

__all__ = ["VIEW_OF", "install_display", *WIDGETS]


def __getattr__(name):
    if name in WIDGETS:
        return widget_class(name)
    if name in _DEPRECATED:
        from txlab.deprecation import warn

        warn(f"txlab.views.{name}", f"txlab.views.{_DEPRECATED[name]}")
        return widget_class(_DEPRECATED[name])
    raise AttributeError(f"module 'txlab.views' has no attribute {name!r}")


def __dir__():
    # the widgets are imported on first use: list them, so tab completion and "did you mean" see them
    return sorted(set(globals()) | set(__all__))
