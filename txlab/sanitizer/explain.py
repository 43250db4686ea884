"""One sentence per finding saying what happened and what to look at."""

from __future__ import annotations

from txlab.sanitizer.parse import _NEAREST
from txlab.sanitizer.report import Finding


# =============================================================================================
# explanations
def explain(f: Finding) -> str:
    """One sentence saying what happened and where to look."""
    who = f"thread {tuple(f.thread)} of CTA {tuple(f.block)}" if f.thread and f.block else "a thread"
    size = f"{f.size} byte{'s' if f.size != 1 else ''}" if f.size else "some bytes"
    space = {"global": "global", "shared": "shared", "local": "local"}.get(f.space or "", f.space or "")
    near = next((d for d in f.detail if "nearest allocation" in d), "")
    m = _NEAREST.search(near)
    if f.kind in ("out_of_bounds_write", "out_of_bounds_read"):
        verb = "wrote" if f.kind.endswith("write") else "read"
        where = ""
        if m:
            n = int(m.group("n").replace(",", ""))
            where = (
                f", {n} bytes {m.group('dir')} the {int(m.group('size').replace(',', ''))}-byte buffer nearest to it"
            )
        addr = f" at {f.address:#x}" if f.address is not None else ""
        return (
            f"{who.capitalize()} {verb} {size} of {space} memory{addr} outside every allocation"
            f"{where}: an index on this line runs past its buffer (check the bound or the guard)."
        )
    if f.kind.startswith("misaligned"):
        return (
            f"{who.capitalize()} made a {size} {space} access at an address that is not a multiple of "
            f"{f.size or 'its'} bytes: a vector/wide access needs an aligned index."
        )
    if f.kind == "shared_race":
        o = f.other or {}
        other_line = o.get("lineno") or o.get("cuda_line")
        pair = {"RAW": "a write and a later read", "WAR": "a read and a later write", "WAW": "two writes"}.get(
            f.hazard or "", "two accesses"
        )
        sync = "__syncwarp/warp_sync" if (f.detail and "Warp Level" in f.message) else "a barrier (T.cuda.cta_sync())"
        return (
            f"Shared-memory race ({f.hazard or 'hazard'}): {pair} of the same shared address by different "
            f"threads with no synchronisation between them"
            + (f" (the other access is at line {other_line})" if other_line else "")
            + f"; put {sync} between them or give each thread its own address."
        )
    if f.kind == "divergent_barrier":
        scope = "one warp" if f.space == "warp" else "the CTA" if f.space == "block" else "a warp"
        return (
            f"Threads of {scope} disagree on reaching this barrier ({who} is one of them): a barrier "
            "inside a branch that does not evaluate the same for every thread; move it out of the branch."
        )
    if f.kind == "invalid_barrier":
        return (
            f"A barrier was called with invalid arguments ({who}): e.g. a __syncwarp mask that does not "
            "include the calling thread."
        )
    if f.kind == "uninitialized_read":
        return (
            f"{who.capitalize()} read {size} of {space} memory that nothing wrote before: initialise it "
            "(or synchronise after the writes) before this read."
        )
    if f.kind == "api_error":
        return "A CUDA API call failed during the run (see the message)."
    if f.kind == "malloc_free":
        return "A device-side malloc/free error (double free or an invalid pointer)."
    if f.kind == "leak":
        return "Device memory allocated during the run was not freed."
    return f.message
