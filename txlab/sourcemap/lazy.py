"""Lazy SASS and the line map on a ``Compiled`` (``Compiled.sass``, ``Compiled.source_map``)."""
from __future__ import annotations

from txlab.sourcemap.model import SourceMap


def ensure_sass(compiled) -> tuple[str, str]:
    """(plain SASS, nvdisasm -gi text) of ``compiled``: disassembled on first use (nvdisasm costs
    about as much as nvcc), then kept on the object and added to its cache entry."""
    import time

    from txlab import cache, toolchain

    if compiled.sass_lines is None:
        files = cache.load(compiled.key) if compiled.key else None
        text = files.get("kernel.sass-lines") if files else None
        if text is not None:
            compiled.sass_lines = text.decode()
        else:
            t = time.perf_counter()
            compiled.sass_lines = toolchain.cubin_to_sass(compiled.cubin, line_info=True)
            compiled.timings["disasm"] = time.perf_counter() - t
            if compiled.key:
                cache.add_file(compiled.key, "kernel.sass-lines", compiled.sass_lines)
    cached = getattr(compiled, "_sass_plain", None)
    if cached is None or cached[0] is not compiled.sass_lines:
        plain = "\n".join(l for l in compiled.sass_lines.splitlines() if not l.lstrip().startswith("//##"))
        if compiled.sass_lines.endswith("\n"):
            plain += "\n"
        cached = (compiled.sass_lines, plain)
        object.__setattr__(compiled, "_sass_plain", cached)
    return cached[1], compiled.sass_lines


def source_map_of(compiled) -> SourceMap:
    """The :class:`SourceMap` of a Compiled (built once per object)."""
    from txlab.errors import CompileError

    if compiled._source_map is not None:
        return compiled._source_map
    table = compiled.line_table
    if table is None:
        raise CompileError("linemap", "this kernel has no line map: its IR carries no source spans "
                           "(built from Python objects rather than TVMScript source)", kernel=compiled.name)
    _, gi = ensure_sass(compiled)
    compiled._source_map = SourceMap(table, compiled.cuda_source, compiled.ptx, gi)
    return compiled._source_map
