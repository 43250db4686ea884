"""Old spellings kept for one release, each warning (``DeprecationWarning``) on use with the new one.

* :func:`renamed` gives a module a ``__getattr__`` that serves old names of its classes/functions.
* :func:`callable_module` lets a module still be called as a function (``txlab.diff(a, b)`` is now
  ``txlab.compare(a, b)``; ``txlab.tune(...)`` is ``txlab.autotune(...)``; ``txlab.occupancy(c)`` is
  ``txlab.occupancy_of(c)``). A module and a function cannot both be the package attribute of one
  name (importing ``txlab.diff`` binds the module), so the function got a name of its own; this is
  the one place the old call spelling lives until it goes.
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import Callable

__all__ = ["warn", "renamed", "callable_module"]


def warn(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(
        f"{old} is deprecated and goes in the next release: use {new}", DeprecationWarning, stacklevel=stacklevel
    )


def renamed(module: str, names: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving ``names`` (old -> new name in the same module) with a warning:
    ``__getattr__ = renamed(__name__, {"PoolMap": "PoolView"})``."""

    def __getattr__(name: str):
        if name in names:
            warn(f"{module}.{name}", f"{module}.{names[name]}")
            return getattr(sys.modules[module], names[name])
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        old, new, func = self.__dict__["__txlab_deprecated_call__"]
        warn(f"calling the module {old}(...)", new)
        return func(*args, **kwargs)


def callable_module(module: str, func: Callable, new: str) -> None:
    """Let ``module`` (already in ``sys.modules``, e.g. while its ``__init__`` runs) be called as
    ``func`` with a warning naming ``new``."""
    mod = sys.modules[module]
    mod.__dict__["__txlab_deprecated_call__"] = (module, new, func)
    mod.__class__ = _CallableModule
