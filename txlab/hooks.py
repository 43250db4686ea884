"""Hooks the view layer fills in, so a model can offer its widget without importing Jupyter code.

Models are pure Python: ``Timeline.view()``, ``PoolLayout.view()``, ``PipelineTrace.view()`` and
``ScheduleTrace.view()`` call :func:`widget`, which finds the factory that ``txlab.views``
registered for the model's class (by qualified name, so nothing here imports a model or a view).
``import txlab`` imports ``txlab.views`` (cheap: widget modules load on first use), so the
factories are always registered. The views also register the models' rich HTML displays as
IPython formatters (``txlab.views.install_display``), the other direction of the same rule.
"""

from __future__ import annotations

from typing import Callable

_WIDGETS: dict[str, Callable] = {}


def register_widget(model: str, factory: Callable) -> None:
    """``factory(model_object, **kwargs)`` builds the widget of instances of the class named
    ``model`` (``"module.Class"``, the class's ``__module__`` and ``__qualname__``)."""
    _WIDGETS[model] = factory


def widget(obj, **kwargs):
    """The registered widget of ``obj`` (the first registered class in its MRO)."""
    for cls in type(obj).__mro__:
        factory = _WIDGETS.get(f"{cls.__module__}.{cls.__qualname__}")
        if factory is not None:
            return factory(obj, **kwargs)
    raise LookupError(
        f"no widget is registered for {type(obj).__name__}; import txlab.views "
        "(import txlab does) to register txlab's widgets"
    )


_PROGRESS: list[Callable] = []


def register_progress(factory: Callable) -> None:
    """``factory(total) -> bar or None``: a notebook progress bar (``bar.update(value, text)``,
    ``bar.finish(text)``) when the session can show one, else None (stderr is used)."""
    _PROGRESS[:] = [factory]


def progress_bar(total):
    """A registered notebook progress bar, or None (no notebook, or no view layer loaded)."""
    for factory in _PROGRESS:
        bar = factory(total)
        if bar is not None:
            return bar
    return None


_COMPILE: list[Callable] = []


def register_compile(fn: Callable) -> None:
    """``fn(kernel, what) -> Compiled``: how entry points below the compiler (``txlab.run``,
    ``txlab.occupancy``) turn a ``@T.prim_func`` or an IRModule into a compiled kernel. ``import
    txlab`` registers :func:`txlab.compiler.as_compiled` (imported when first used)."""
    _COMPILE[:] = [fn]


def as_compiled(kernel, *, what: str = "txlab"):
    """``kernel`` when it is already compiled (it has a ``signature`` and an ``executable``), else
    the registered compile of it."""
    if hasattr(type(kernel), "executable") and hasattr(kernel, "signature"):
        return kernel
    if not _COMPILE:
        raise TypeError(
            f"{what} got a {type(kernel).__name__}, and no compiler is registered to build "
            "it: import txlab (it registers txlab.compile), or pass txlab.compile(kernel)"
        )
    return _COMPILE[0](kernel, what)
