"""What a caller of a kernel must pass: its entry function's name and parameters.

``params`` are :func:`txlab.build.params_of` rows (``name``, ``kind``, ``dtype``, ``shape``, and
``function`` when a module holds several functions). :class:`txlab.Compiled` has one
(``Compiled.signature``); the emulator builds one from the IR it lowers; the launch layer's checks
and ``txlab.check`` read either, so none of them needs to know what a ``Compiled`` is.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Signature", "entry_params"]


def entry_params(name: str, params: list[dict]) -> list[dict]:
    """The parameters a caller passes, in order: those of the entry function ``name`` (all of
    ``params`` when none is marked with its function)."""
    return [p for p in params if p.get("function", name) == name] or list(params)


@dataclass(frozen=True)
class Signature:
    name: str
    params: list

    @property
    def entry_params(self) -> list[dict]:
        return entry_params(self.name, self.params)
