"""Findings at the user's line: ``Compiled.source_map`` for the SASS offset, else the CUDA line the
sanitizer prints matched to the lowered IR's statements."""
from __future__ import annotations

import re

# =============================================================================================
# line mapping
def _kernel_range(cuda_source: str) -> list[tuple[int, int]]:
    """(first, last) CUDA lines of every __global__ function body."""
    lines = cuda_source.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if "__global__" in lines[i] and lines[i].rstrip().endswith("{"):
            depth = 0
            start = i + 1
            for j in range(i, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth == 0 and j > i:
                    out.append((start + 1, j + 1))
                    i = j
                    break
        i += 1
    return out


def cuda_line_map(compiled) -> dict:
    """``{CUDA line: user line}`` for the kernel bodies of ``compiled.cuda_source``, by matching the
    lowered device IR's statements (in program order, each with its span's line) to the CUDA
    statements TVM generated from them: a store matches the line assigning to its buffer, a call the
    line that calls it. Used when the compiled kernel has no ``source_map``."""
    from txlab import simt

    try:
        funcs = simt.device_functions(compiled, compiled.arch)
    except Exception:  # noqa: BLE001 - no map, findings keep their CUDA line only
        return {}
    import tvm.tirx as tx
    import tvm_ffi

    leaves = []

    def on_leaf(s):
        line = simt.user_line(getattr(s, "span", None))
        if line is None:
            return
        if isinstance(s, tx.BufferStore):
            leaves.append((line, "store", s.buffer.name))
        elif isinstance(s, tx.Evaluate) and hasattr(s.value, "op"):
            name = str(getattr(s.value.op, "name", "") or "")
            leaves.append((line, "call", name.rsplit(".", 1)[-1]))

    for _, f in funcs:
        tvm_ffi.structural_walk(f.body, [((tx.Evaluate, tx.BufferStore), on_leaf)], order="pre")
    src = compiled.cuda_source.splitlines()
    out: dict[int, int] = {}
    k = 0
    last = None
    for lo, hi in _kernel_range(compiled.cuda_source):
        for ln in range(lo, hi + 1):
            text = src[ln - 1].strip()
            matched = None
            for j in range(k, min(len(leaves), k + 12)):
                line, what, name = leaves[j]
                if what == "store" and re.match(rf"^(?:\(\(\w+\*\))?\(?{re.escape(name)}(?:_ptr|_\d+)?\)?\s*\[", text):
                    matched = j
                elif what == "call" and name and re.search(rf"\b\w*{re.escape(name.strip('_'))}\w*\s*\(", text):
                    matched = j
                if matched is not None:
                    break
            if matched is not None:
                k = matched + 1
                last = leaves[matched][0]
                out[ln] = last
            elif last is not None and text and not text.startswith(("}", "//")):
                out[ln] = last
    return out


def _unique_call_site(cuda_source: str, line: int, ranges) -> int | None:
    """The kernel line calling the helper function whose body holds CUDA ``line`` (TVM emits
    ``tvm_builtin_*`` helpers, inlined into the kernel), when the kernel calls it exactly once."""
    lines = cuda_source.splitlines()
    if not 0 < line <= len(lines):
        return None
    name = None
    for i in range(line - 1, -1, -1):
        m = re.search(r"__device__\s+[\w\s:<>*&]*?\b(\w+)\s*\(", lines[i])
        if m:
            name = m.group(1)
            break
        if "__global__" in lines[i]:
            return None
    if not name:
        return None
    calls = [ln for lo, hi in ranges for ln in range(lo, hi + 1)
             if re.search(rf"\b{re.escape(name)}\s*\(", lines[ln - 1])]
    return calls[0] if len(calls) == 1 else None


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
    sm = getattr(compiled, "source_map", None) if use_source_map else None
    cmap = None
    ranges = _kernel_range(compiled.cuda_source)

    def in_kernel(line):
        return any(lo <= line <= hi for lo, hi in ranges)

    def locate(d: dict):
        if sm is not None and d.get("sass_offset") is not None:
            try:
                ln = sm.line_of_sass(d["sass_offset"])
            except Exception:  # noqa: BLE001
                ln = None
            if ln is not None:
                return ln
        nonlocal cmap
        if cmap is None:
            cmap = cuda_line_map(compiled)
        cands = [d.get("cuda_line")] + [fr.get("cuda_line") for fr in d.get("frames", [])]
        for c in cands:  # the innermost frame inside the kernel (helpers are inlined from the preamble)
            if c is not None and in_kernel(c) and c in cmap:
                return cmap[c]
        for c in cands:  # a line inside a helper the kernel calls from one place only
            call = _unique_call_site(compiled.cuda_source, c, ranges) if c is not None else None
            if call is not None and call in cmap:
                return cmap[call]
        return None

    used = "source_map" if sm is not None else "cuda"
    for f in report_findings:
        base = {"sass_offset": f.sass_offset, "cuda_line": f.cuda_line,
                "frames": (f.other or {}).get("frames", []) if isinstance(f.other, dict) else []}
        f.lineno = locate(base)
        if isinstance(f.other, dict) and ("sass_offset" in f.other or "cuda_line" in f.other):
            f.other["lineno"] = locate(f.other)
    return used
