"""The catalogue: every name of the installed TVM's TIRx CUDA API (:mod:`txlab.tirx_api`) with
the examples that use it."""

from __future__ import annotations

from txlab.tirx_api import Entry, names, signature_of

__all__ = ["Entry", "catalogue", "catalogue_drift", "examples", "entry", "signature_of"]


_catalogue_cache: list[Entry] | None = None


def catalogue() -> list[Entry]:
    """Every API entry of the installed TVM, with the ids of the example kernels that use it."""
    global _catalogue_cache
    if _catalogue_cache is None:
        from txlab.api_examples.registry import all_examples

        entries = names()
        by_name = {e.name: e for e in entries}
        for ex in all_examples():
            for used in ex.uses:
                if used in by_name:
                    by_name[used].examples.append(ex.id)
        _catalogue_cache = entries
    return _catalogue_cache


def catalogue_drift() -> list[str]:
    """Names our examples use that the installed TVM no longer has (removed or renamed upstream)."""
    from txlab.api_examples.registry import all_examples

    have = {e.name for e in catalogue()}
    return sorted({u for ex in all_examples() for u in ex.uses if u not in have})


def examples() -> dict:
    from txlab.api_examples.registry import all_examples

    return {e.id: e for e in all_examples()}


def entry(name: str) -> Entry:
    for e in catalogue():
        if e.name == name:
            return e
    raise KeyError(
        f"{name!r} is not in the TIRx CUDA API of the installed TVM (see txlab.api.catalogue() for the names)"
    )
