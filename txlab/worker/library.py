"""The kernel's executable exported once as a shared library, which workers load."""

from __future__ import annotations


_libraries: dict[str, object] = {}
library_errors: dict[str, str] = {}


def library(compiled):
    """The kernel's executable exported as a shared library (TVM's host code + txlab's cubin), built
    once in this process and kept in the compile cache; workers load it with ``load_module``
    instead of re-parsing and re-lowering the TVMScript text (no TVM compiler work in a worker, and
    no printer/parser round trip, which TVM 0.27 cannot do for every kernel). None if it cannot be
    exported (no C++ compiler): the worker then rebuilds from the script."""
    key = compiled.key
    if not key:  # nothing to name the library by: the worker rebuilds from the script
        return None
    if key in _libraries:
        return _libraries[key]
    try:
        from txlab import build, cache

        # verified against its digest on every use: a truncated or replaced library is rebuilt
        path = cache.verified_file(
            f"lib/{key}.so", lambda tmp: build.executable(compiled.lowered, compiled.cubin).export_library(str(tmp))
        )
    except Exception as exc:  # noqa: BLE001 - fall back to the script path, which reports its own errors
        library_errors[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        path = None
    _libraries[key] = path
    return path
