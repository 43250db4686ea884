"""What a TIRx kernel's source sees, and where TVMScript reads it from.

* :func:`tirx_namespace`: ``T``/``Tx``, ``tile``, ``tvm`` and the public names of
  ``tvm.backend.cuda.lang`` (:func:`lang_names`), the globals of a ``%%tirx`` cell and of the API
  examples;
* :func:`register_source`: TVMScript parses a function from its source text, so source that lives
  in no file (a notebook cell, an example string) is put in ``linecache`` under a pseudo file name.

Used by the ``%%tirx`` magic and by ``txlab.api_examples``; it imports nothing from txlab.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import linecache

_cells = itertools.count(1)


@functools.lru_cache(maxsize=1)
def _base_namespace() -> tuple:
    import tvm

    import txlab.compat  # noqa: F401  (some workarounds act at parse time, before compile())
    from tvm.script import tirx as T
    from tvm.script.tirx import tile

    ns = {"tvm": tvm, "T": T, "Tx": T, "tile": tile}
    ns.update(lang_names())
    return tuple(ns.items())


def tirx_namespace() -> dict:
    """Names a %%tirx cell sees without importing them."""
    return dict(_base_namespace())


def lang_names() -> dict:
    """The public names of tvm.backend.cuda.lang (its ``__all__``, resolved lazily by TVM)."""
    import tvm.backend.cuda.lang as lang

    return {name: getattr(lang, name) for name in getattr(lang, "__all__", ())}


def register_source(source: str, tag: str | None = None) -> str:
    """Put ``source`` in linecache under a unique pseudo file name (TVMScript reads source text)."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:10]
    filename = f"<tirx-cell-{tag or next(_cells)}-{digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename
