"""Base class of txlab's widgets: an anywidget whose ES module is a bundle in txlab/static/.

Every view sends its model to the front end in one trait, ``data``, of one type: bytes. A view's
payload is either UTF-8 JSON with named keys (:func:`json_bytes`; the front end's
``readJSON(model)`` in ``widgets/src/_common.js``) or, where the size calls for it, a binary codec
the view documents (the timeline's bit-packed columns, the pipeline's event rows), described by a
``meta`` dict. Bytes travel over the comm as a binary buffer (no escaping, no base64) and keep
their type in saved widget state. DESIGN.md ("widget payloads") has the table.
"""

from __future__ import annotations

import json
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


def json_bytes(obj) -> bytes:
    """``obj`` as compact UTF-8 JSON, the payload of a JSON view's ``data`` trait."""
    return json.dumps(obj, separators=(",", ":"), default=str, ensure_ascii=False).encode("utf-8")


def deprecated_alias(old: str, new: str, decode=None):
    """A read-only property ``old`` that warns and returns ``new`` (a renamed trait), optionally
    through ``decode``."""
    import warnings

    def get(self):
        warnings.warn(f"{type(self).__name__}.{old} is deprecated; read .{new}", DeprecationWarning, stacklevel=2)
        value = getattr(self, new)
        return decode(value) if decode else value

    return property(get, doc=f"Deprecated: read ``{new}``.")


def shown(render):
    """Makes ``render(view, model)`` a property of a view named like it: reading gives the model the
    view shows, assigning one keeps it and calls ``render`` to send its payload."""
    attr = "_" + render.__name__

    def set_model(self, model):
        setattr(self, attr, model)
        render(self, model)

    return property(lambda self: getattr(self, attr), set_model, doc=render.__doc__)


class View(anywidget.AnyWidget):
    """Subclasses set ``_bundle = "<name>"``; the ES module text is synced as ``_esm``, so the
    widget also renders in exported HTML that carries widget state."""

    _bundle: str = ""
    #: height of the view in pixels (the front end may scroll inside it)
    height = traitlets.Int(360).tag(sync=True)
    #: the view's payload (module docstring): UTF-8 JSON or the view's binary codec
    data = traitlets.Bytes(b"").tag(sync=True)

    def __init__(self, **kwargs):
        if not self._bundle:
            raise TypeError(f"{type(self).__name__} must set _bundle")
        super().__init__(_esm=bundle(self._bundle), **kwargs)
