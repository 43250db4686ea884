"""Findings at the user's line: ``Compiled.source_map`` for the SASS offset, else the CUDA line the
sanitizer prints, through the line table (:func:`txlab.ir.spans.user_line_of_cuda`)."""

from __future__ import annotations


def cuda_line_map(compiled) -> dict:
    """``{CUDA line: user line}`` for the kernel bodies of ``compiled.cuda_source``, from its line
    table (:func:`txlab.ir.spans.cuda_user_lines`); empty when it has none."""
    from txlab import ir

    table = getattr(compiled, "line_table", None)
    return ir.cuda_user_lines(compiled.cuda_source, table) if table is not None else {}


def _user_source_lines(compiled) -> tuple[str | None, list]:
    from txlab.build import user_source

    try:
        src = user_source(compiled.ir_module) if compiled.ir_module is not None else None
    except Exception:  # noqa: BLE001
        src = None
    if src is None:
        return None, []
    return src[0], src[2]


def _map_lines(report_findings, compiled, *, use_source_map: bool):
    """Fill ``lineno``/``source`` of each finding (and of a race's other access)."""
    from txlab import ir
    from txlab.ir import cuda_text

    sm = getattr(compiled, "source_map", None) if use_source_map else None
    table = getattr(compiled, "line_table", None)
    funcs = ir.cuda_functions(compiled.cuda_source)

    def in_kernel(line):
        f = cuda_text.function_at(funcs, line)
        return f is not None and f.is_kernel

    def locate(d: dict):
        if sm is not None and d.get("sass_offset") is not None:
            try:
                ln = sm.line_of_sass(d["sass_offset"])
            except Exception:  # noqa: BLE001
                ln = None
            if ln is not None:
                return ln
        if table is None:
            return None
        cands = [c for c in [d.get("cuda_line")] + [fr.get("cuda_line") for fr in d.get("frames", [])] if c is not None]
        # the innermost frame inside the kernel (helpers are inlined from the preamble), else a
        # line inside a helper that the kernel calls from one user line only
        for c in [c for c in cands if in_kernel(c)] + [c for c in cands if not in_kernel(c)]:
            ln = ir.user_line_of_cuda(compiled.cuda_source, table, c)
            if ln is not None:
                return ln
        return None

    used = "source_map" if sm is not None else "cuda"
    for f in report_findings:
        base = {
            "sass_offset": f.sass_offset,
            "cuda_line": f.cuda_line,
            "frames": (f.other or {}).get("frames", []) if isinstance(f.other, dict) else [],
        }
        f.lineno = locate(base)
        if isinstance(f.other, dict) and ("sass_offset" in f.other or "cuda_line" in f.other):
            f.other["lineno"] = locate(f.other)
    return used
