"""What importing :mod:`txlab.views` registers: each model's widget with :mod:`txlab.hooks`
(``model.view()``), the notebook progress bar, and -- through :func:`install_display` -- the
models' HTML (:mod:`txlab.display`) as IPython formatters. Widget modules load on first use."""

from __future__ import annotations

from txlab import hooks

__all__ = ["VIEW_OF", "WIDGETS", "widget_class", "install_display"]

# every public widget class (and the base a view of your own subclasses)
WIDGETS = (
    "ScheduleView",
    "PipelineView",
    "PoolView",
    "TimelineView",
    "APIView",
    "SourceView",
    "DiffView",
    "TuneView",
    "View",
    "bundle",
)

# model class -> the widget its .view() shows
VIEW_OF = {
    "txlab.compiler.Compiled": "SourceView",
    "txlab.timeline.model.Timeline": "TimelineView",
    "txlab.pools.plan.PoolLayout": "PoolView",
    "txlab.pipelines.trace.PipelineTrace": "PipelineView",
    "txlab.schedulers.schedule.ScheduleTrace": "ScheduleView",
    "txlab.tune.model.TuneResult": "TuneView",
    "txlab.diff.CompileDiff": "DiffView",
}


def widget_class(name: str):
    """The widget class ``name`` (its module imported now: one import per widget, all visible)."""
    match name:
        case "ScheduleView":
            from txlab.views.schedule import ScheduleView as cls
        case "PipelineView":
            from txlab.views.pipeline import PipelineView as cls
        case "PoolView":
            from txlab.views.pool import PoolView as cls
        case "TimelineView":
            from txlab.views.timeline import TimelineView as cls
        case "APIView":
            from txlab.views.api import APIView as cls
        case "SourceView":
            from txlab.views.source import SourceView as cls
        case "DiffView":
            from txlab.views.diff import DiffView as cls
        case "TuneView":
            from txlab.views.tune import TuneView as cls
        case "View":
            from txlab.views._base import View as cls
        case "bundle":
            from txlab.views._base import bundle as cls
        case _:
            raise AttributeError(f"module 'txlab.views' has no attribute {name!r}")
    return cls


def _factory(widget: str):
    def make(model, **kwargs):
        return widget_class(widget)(model, **kwargs)

    make.__name__ = f"make_{widget}"
    return make


for _model, _widget in VIEW_OF.items():
    hooks.register_widget(_model, _factory(_widget))


def _progress_bar(total):
    from txlab.views.progress import notebook_bar

    return notebook_bar(total)


hooks.register_progress(_progress_bar)


def _compile_for_run(kernel, what):
    """How txlab.run and txlab.occupancy (below the compiler) compile a @T.prim_func or IRModule
    they are given: txlab.compiler.as_compiled, imported on first use."""
    from txlab.compiler import as_compiled

    return as_compiled(kernel, what=what)


hooks.register_compile(_compile_for_run)


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
