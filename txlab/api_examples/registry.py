"""Every API example, gathered from the category modules (each imported by name, so the import
graph that ``lint-imports`` and tests/test_layers.py check holds every edge)."""
from __future__ import annotations

from txlab.api_examples.example import Example

CATEGORY_MODULES = ("sync", "memory", "reduce", "descriptors", "calls", "convert", "instrument",
                    "wgmma", "blackwell", "nvshmem", "lang", "schedulers", "iket")


def all_examples() -> list[Example]:
    import txlab.api_examples.blackwell as blackwell
    import txlab.api_examples.calls as calls
    import txlab.api_examples.convert as convert
    import txlab.api_examples.descriptors as descriptors
    import txlab.api_examples.iket as iket
    import txlab.api_examples.instrument as instrument
    import txlab.api_examples.lang as lang
    import txlab.api_examples.memory as memory
    import txlab.api_examples.nvshmem as nvshmem
    import txlab.api_examples.reduce as reduce
    import txlab.api_examples.schedulers as schedulers
    import txlab.api_examples.sync as sync
    import txlab.api_examples.wgmma as wgmma

    modules = {"sync": sync, "memory": memory, "reduce": reduce, "descriptors": descriptors, "calls": calls,
               "convert": convert, "instrument": instrument, "wgmma": wgmma, "blackwell": blackwell,
               "nvshmem": nvshmem, "lang": lang, "schedulers": schedulers, "iket": iket}
    out: list[Example] = []
    for name in CATEGORY_MODULES:
        out.extend(modules[name].EXAMPLES)
    ids = [e.id for e in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate example ids: {sorted(dup)}")
    return out
