"""Base class of txlab's widgets: an anywidget whose ES module is a bundle in txlab/static/."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

import anywidget
import traitlets


@lru_cache(maxsize=None)
def bundle(name: str) -> str:
    """Text of ``txlab/static/<name>.js`` (built from ``widgets/src/<name>.js``)."""
    path = resources.files("txlab") / "static" / f"{name}.js"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:  # pragma: no cover - packaging error
        raise FileNotFoundError(
            f"txlab/static/{name}.js is missing: run `make widgets` to build the front-end bundles"
        ) from exc


class View(anywidget.AnyWidget):
    """Subclasses set ``_bundle = "<name>"``; the ES module text is synced as ``_esm``, so the
    widget also renders in exported HTML that carries widget state."""

    _bundle: str = ""
    #: height of the view in pixels (the front end may scroll inside it)
    height = traitlets.Int(360).tag(sync=True)

    def __init__(self, **kwargs):
        if not self._bundle:
            raise TypeError(f"{type(self).__name__} must set _bundle")
        super().__init__(_esm=bundle(self._bundle), **kwargs)
