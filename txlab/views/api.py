"""APIView: search the TIRx CUDA authoring API, read an entry's doc and example, and see the CUDA
lines the helper produced, highlighted in TVM's generated source.

The payload is the catalogue (no compiling at construction). Selecting an entry (the ``selected``
trait, set by the front end or from Python) compiles that entry's example to CUDA (txlab's disk
cache makes repeats instant) and fills ``detail`` with the example source, the generated lines
around what the name emitted, and the highlighted line numbers (``txlab.api.emitted_lines``).
The "Insert example" button asks Python to put the example into a new cell
(``IPython.get_ipython().set_next_input``); without an IPython shell the front end copies it to the
clipboard instead and says so.
"""

from __future__ import annotations

import traitlets

from txlab.deprecation import renamed
from txlab.views._base import View

ARCHS = ("sm_80", "sm_90", "sm_90a", "sm_100a", "multi-GPU")


def _rows(entries=None, coverage_rows=None) -> list[dict]:
    """Catalogue rows for the widget: entry fields plus status (no compiling here)."""
    import txlab.api as api

    if entries is None:
        entries = [e.to_dict() for e in api.catalogue()]
    else:
        entries = [dict(e.to_dict() if hasattr(e, "to_dict") else e) for e in entries]
    status = {r["name"]: r for r in (coverage_rows if coverage_rows is not None else api.coverage(compile=False))}
    out = []
    for e in entries:
        st = status.get(e["name"], {})
        out.append(
            {
                "name": e["name"],
                "category": e.get("category", ""),
                "arch": e.get("arch", ""),
                "signature": e.get("signature", ""),
                "doc": e.get("doc", ""),
                "kind": e.get("kind", ""),
                "examples": list(e.get("examples", ())),
                "has_example": bool(e.get("examples")),
                "compiles": st.get("compiles"),
                "compile_error": st.get("compile_error", ""),
                "verified_gpu": st.get("verified_gpu", False) if e.get("examples") else None,
                "why_not": st.get("not_on_h200", ""),
            }
        )
    return out


class APIView(View):
    """``APIView()`` — every name of the installed TVM's TIRx CUDA API.

    ``APIView(query="shfl", category=..., arch="sm_90a")`` starts filtered;
    ``.selected = "Tx.cuda.elect_sync"`` selects from Python (``.detail`` then holds the example
    and the highlighted CUDA). ``coverage_rows=txlab.api.coverage()`` shows compile status for
    every entry up front (that compiles every example; otherwise ``compiles`` is filled in per
    entry as you select it). ``entries`` replaces the catalogue (dicts with name, category, arch,
    signature, doc, examples), e.g. to browse a subset.

    ``data-testid``s: ``api-search``, ``api-category``, ``api-arch``, ``api-count``, ``api-list``,
    ``api-item`` (one per shown entry, ``data-name`` = its name), ``api-detail``, ``api-example``,
    ``api-insert``, ``api-insert-status``, ``api-cuda``, ``api-highlight`` (each highlighted line),
    ``api-how``.
    """

    _bundle = "api"
    entries = traitlets.List().tag(sync=True)
    categories = traitlets.List().tag(sync=True)
    archs = traitlets.List().tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    category = traitlets.Unicode("").tag(sync=True)
    arch = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    #: {name, state: "loading"|"ready"|"error", example_id, example_source, lines, highlight, how, error}
    detail = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(560).tag(sync=True)

    def __init__(
        self,
        entries=None,
        *,
        coverage_rows=None,
        query: str = "",
        category: str = "",
        arch: str = "",
        selected: str = "",
        context: int = 3,
        **kwargs,
    ):
        super().__init__(**kwargs)
        rows = _rows(entries, coverage_rows)
        self._context = context
        self._by_name = {r["name"]: r for r in rows}
        self.entries = rows
        self.categories = sorted({r["category"] for r in rows})
        self.archs = [a for a in ARCHS if any(r["arch"] == a for r in rows)] + sorted(
            {r["arch"] for r in rows} - set(ARCHS)
        )
        if category and category not in self.categories:
            raise ValueError(f"unknown category {category!r}; choose from {self.categories}")
        if arch and arch not in self.archs:
            raise ValueError(f"unknown arch {arch!r}; choose from {self.archs}")
        self.query, self.category, self.arch = query, category, arch
        self.observe(self._on_selected, names="selected")
        self.on_msg(self._on_msg)
        if selected:
            self.selected = selected

    # ---- filtering (the same rules as the front end, for scripts and tests) --------------------
    def matches(self) -> list[str]:
        """Names the current query/category/arch filters show (case-insensitive; every word of
        the query must occur in the name or the doc)."""
        words = self.query.lower().split()
        out = []
        for r in self.entries:
            if self.category and r["category"] != self.category:
                continue
            if self.arch and r["arch"] != self.arch:
                continue
            hay = (r["name"] + "\n" + r["doc"]).lower()
            if all(w in hay for w in words):
                out.append(r["name"])
        return out

    # ---- selection -> example + highlighted CUDA ------------------------------------------------
    def _on_selected(self, change):
        self.select(change["new"])

    def select(self, name: str) -> dict:
        """Compile ``name``'s example and fill ``detail`` (also what setting ``selected`` does)."""
        import txlab.api as api

        if not name:
            self.detail = {}
            return self.detail
        row = self._by_name.get(name)
        if row is None:
            self.detail = {"name": name, "state": "error", "error": f"{name!r} is not in this catalogue"}
            return self.detail
        if self.selected != name:
            self.selected = name  # re-enters through the observer
            return self.detail
        if not row["examples"]:
            self.detail = {
                "name": name,
                "state": "ready",
                "example_id": None,
                "example_source": "",
                "lines": [],
                "highlight": [],
                "definitions": [],
                "total_lines": 0,
                "how": "no example kernel uses this name yet",
            }
            return self.detail
        self.detail = {"name": name, "state": "loading", "example_id": row["examples"][0]}
        try:
            d = api.emitted_lines(name, row["examples"][0], context=self._context)
        except Exception as exc:  # noqa: BLE001 - a compile error is shown in the view, not raised at the user
            msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            self.detail = {
                "name": name,
                "state": "error",
                "example_id": row["examples"][0],
                "example_source": api.examples()[row["examples"][0]].source,
                "error": msg,
            }
            return self.detail
        d["state"] = "ready"
        self.detail = d
        if row["compiles"] is None:  # reaching CUDA source is not a cubin: leave compiles unknown
            pass
        return self.detail

    # ---- insert the example into a new cell ----------------------------------------------------
    def insert_example(self, name: str | None = None) -> dict:
        """Put ``name``'s (default: the selected entry's) example into the next cell. Returns
        {ok, how, text}; ``ok`` False with ``how`` = "no-ipython" outside an IPython shell (the
        front end then copies ``text`` to the clipboard)."""
        import txlab.api as api

        name = name or self.selected
        row = self._by_name.get(name)
        if row is None or not row["examples"]:
            return {
                "type": "insert",
                "ok": False,
                "how": "no-example",
                "text": "",
                "message": f"{name or 'nothing'} selected has no example to insert",
            }
        ex_id = row["examples"][0]
        try:
            from IPython import get_ipython

            ip = get_ipython()
        except ImportError:
            ip = None
        magic = bool(
            ip is not None and "tirx" in getattr(getattr(ip, "magics_manager", None), "magics", {}).get("cell", {})
        )
        text = api.example_cell(ex_id, magic=magic)
        if ip is None:
            return {
                "type": "insert",
                "ok": False,
                "how": "no-ipython",
                "text": text,
                "message": "no IPython shell: copied to the clipboard instead",
            }
        ip.set_next_input(text, replace=False)
        return {
            "type": "insert",
            "ok": True,
            "how": "set_next_input",
            "text": text,
            "message": f"inserted example {ex_id} into a new cell" + (" (%%tirx)" if magic else ""),
        }

    def _on_msg(self, _widget, content, _buffers):
        self.receive(content)

    def receive(self, content) -> None:
        """Act on a message from the front end: ``{"type": "insert" | "select", "name": ...}``
        (what the explorer's buttons send; anything else is ignored)."""
        if not isinstance(content, dict):
            return
        if content.get("type") == "insert":
            self.send(self.insert_example(content.get("name")))
        elif content.get("type") == "select":
            self.selected = str(content.get("name") or "")


# APIExplorer was this view's name until 0.1 (one release of warnings)
__getattr__ = renamed(__name__, {"APIExplorer": "APIView"})
