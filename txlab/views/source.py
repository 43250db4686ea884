"""SourceView: four synchronized panes, TVMScript | CUDA C | PTX | SASS, over a kernel's line map
(:attr:`txlab.Compiled.source_map`).

Hover or click a line in any pane: the user line it belongs to and all its counterparts are
highlighted and scrolled into view in the other panes; the info bar says how many SASS
instructions the line became, of which classes (memory, tensor, barrier, control, alu), which
library functions it inlines, and, when a profile's per-line heat is given, its samples and stall
breakdown. Click pins the line (``selected``; Escape or clicking it again unpins).

The payload is one JSON document (``data``): the user lines of the kernel, the CUDA/PTX/SASS text
and, per line of each, its user line. The front end builds every row once and keeps an index from
user line to rows, so a highlight touches only the rows it changes.
``data-testid``: ``source-pane-user``, ``source-pane-cuda``, ``source-pane-ptx``,
``source-pane-sass``, ``source-info``, ``source-code-only`` (hide user lines without code),
``source-stats`` (hidden: render and highlight timings, JSON).
"""
from __future__ import annotations

import json

import traitlets

from txlab.views._base import View


def payload(compiled, heat: dict | None = None, context: int = 2) -> dict:
    m = compiled.source_map
    lines_with = m.lines()
    origin_lines = [o.user_line for o in m.origins if o.user_line]
    allu = sorted(set(lines_with) | set(origin_lines))
    first = max(1, (allu[0] if allu else 1) - context)
    last = min(len(m.user_source), (allu[-1] if allu else len(m.user_source)) + context)
    # a %%tirx cell: all of it; a file: the lines of this kernel (plus context)
    if m.user_file.startswith("<tirx-cell"):
        first, last = 1, len(m.user_source)
    per = m.per_line()
    sass = [{"t": s.text, "o": s.offset, "u": s.user_line, "c": s.cls, "k": s.kernel, "p": s.padding}
            for s in m.instructions]
    heat_d = {}
    for k, v in (heat or {}).items():
        try:
            heat_d[str(int(k))] = {"samples": int(v.get("samples", 0)),
                                   "stalls": {str(a): int(b) for a, b in (v.get("stalls") or {}).items()}}
        except (TypeError, ValueError, AttributeError):
            continue
    return {
        "name": compiled.name, "arch": compiled.arch,
        "file": m.user_file, "first": first,
        "user": m.user_source[first - 1:last],
        "cuda": compiled.cuda_source.splitlines(), "cuda_user": m.cuda_user,
        "ptx": compiled.ptx.splitlines(), "ptx_user": m.ptx_user,
        "sass": sass,
        "lines": {str(k): v for k, v in per.items()},
        "heat": heat_d,
        "exact": m.exact,
    }


class SourceView(View):
    """``SourceView(compiled, profile=None, heat=None)``; ``heat`` (or a profile's
    ``line_heat()``): ``{user_line: {"samples": n, "stalls": {reason: n}}}``."""

    _bundle = "source"
    data = traitlets.Unicode("{}").tag(sync=True)
    selected = traitlets.Int(0).tag(sync=True)
    height = traitlets.Int(460).tag(sync=True)

    def __init__(self, compiled, profile=None, heat: dict | None = None, **kwargs):
        super().__init__(**kwargs)
        if heat is None and profile is not None:
            get = getattr(profile, "line_heat", None)
            heat = get() if callable(get) else getattr(profile, "heat", None)
        self.compiled = compiled
        self.data = json.dumps(payload(compiled, heat), separators=(",", ":"), default=str)
