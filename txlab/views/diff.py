"""DiffView: two builds side by side -- resources, instruction classes, and the SASS of each user
line, with the lines whose instructions changed highlighted.

The payload (``data``) is the diff's ``to_dict()`` as JSON (a few hundred rows for the Hopper GEMM); the
front end filters and selects without a round trip. ``changed_only`` and ``selected`` (the row
index shown in the detail pane, -1 for none) are synced both ways.
"""

from __future__ import annotations

import traitlets

from txlab.views._base import View, deprecated_alias, json_bytes, shown


class DiffView(View):
    """``DiffView(txlab.compare(a, b))`` or ``DiffView(a, b)`` for two Compiled.

    Click a line to see its SASS side by side (changed instructions marked); "changed only"
    hides the lines whose SASS is the same; "next change" walks the changed lines.
    ``data-testid``s: ``diff-summary``, ``diff-resources``, ``diff-histogram``, ``diff-changed-only``,
    ``diff-next``, ``diff-count``, ``diff-lines``, ``diff-row`` (one per shown line, ``data-index``),
    ``diff-detail``, ``diff-sass-a``, ``diff-sass-b``."""

    _bundle = "diff"
    changed_only = traitlets.Bool(False).tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    height = traitlets.Int(480).tag(sync=True)
    #: deprecated: the payload is ``data`` (bytes of JSON) like every view's
    payload = deprecated_alias("payload", "data", bytes.decode)

    def __init__(self, diff_or_a, b=None, **kwargs):
        super().__init__(**kwargs)
        if b is not None:
            from txlab.diff import diff

            diff_or_a = diff(diff_or_a, b)
        self.diff = diff_or_a

    @shown
    def diff(self, d):
        """The diff shown (assign another to show it)."""
        data = d.to_dict()
        self.data = json_bytes(data)
        rows = data.get("lines", [])
        changed = [i for i, r in enumerate(rows) if r.get("status") not in ("same", "same_sass")]
        rewritten = [i for i, r in enumerate(rows) if r.get("status") == "same_sass"]
        self.selected = (changed or rewritten or [0 if rows else -1])[0]
