"""The line map of a ``Compiled`` (``Compiled.source_map``, a cached property of the class)."""

from __future__ import annotations

from txlab.sourcemap.model import SourceMap


def source_map_of(compiled) -> SourceMap:
    """A new :class:`SourceMap` of a Compiled, from its line table and SASS listing
    (``Compiled.sass_listing``); ``Compiled.source_map`` keeps the one it builds."""
    from txlab.errors import CompileError

    table = compiled.line_table
    if table is None:
        raise CompileError(
            "linemap",
            "this kernel has no line map: its IR carries no source spans "
            "(built from Python objects rather than TVMScript source)",
            kernel=compiled.name,
        )
    return SourceMap(table, compiled.cuda_source, compiled.ptx, compiled.sass_listing, compiled.resources)


def ensure_sass(compiled) -> tuple[str, object]:
    """Deprecated: ``(compiled.sass, compiled.sass_listing)``; read those instead."""
    return compiled.sass, compiled.sass_listing
