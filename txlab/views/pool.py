"""PoolView: a byte-scaled, zoomable map of a :class:`txlab.pools.PoolLayout`.

The plan travels as compact JSON (``data``: ``{"plan": the layout's to_dict(), "accesses": the
bank-conflict rows}``); plans are small (tens of
allocations). The front end draws the CTA's shared memory as a byte axis (static buffers first,
then the dynamic pool from its base; aliased buffers stacked on separate rows, alignment padding
hatched, the arch limit and the committed size marked), TMEM as a
128-lane x 512-column grid, and for the selected swizzled tile its bank-group pattern.
"""

from __future__ import annotations

import json

import traitlets

from txlab.deprecation import renamed
from txlab.views._base import View, deprecated_alias, json_bytes, shown


class PoolView(View):
    """Wheel zooms the byte axis around the cursor, drag pans, ``pool-reset`` resets; hover shows
    an allocation's offset, size, alignment, swizzle and aliases; click selects it (``selected``),
    which shows its bank pattern. ``data-testid``s: ``pool-smem-canvas``, ``pool-tmem-canvas``,
    ``pool-zoom-in``, ``pool-zoom-out``, ``pool-reset``, ``pool-select`` (allocation picker),
    ``pool-banks`` (bank-pattern table), ``pool-accesses`` (bank conflicts per shared-memory
    access, from :meth:`txlab.pools.PoolLayout.bank_conflicts`), ``pool-errors``, ``pool-summary``."""

    _bundle = "pool"
    selected = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    #: deprecated: both are in ``data`` (bytes of JSON) like every view's payload
    plan = deprecated_alias("plan", "data", lambda d: json.dumps(json.loads(d)["plan"]))
    accesses = deprecated_alias("accesses", "data", lambda d: json.dumps(json.loads(d)["accesses"]))

    def __init__(self, layout, **kwargs):
        super().__init__(**kwargs)
        self.layout = _layout(layout)

    @shown
    def layout(self, layout):
        """The layout shown (assign another to show it)."""
        rows = []
        if getattr(layout, "_source", None) is not None:
            try:
                rows = [r.to_dict() for r in layout.bank_conflicts()]
            except Exception as exc:  # noqa: BLE001 - the map still shows; the table says why not
                rows = [{"error": f"bank conflicts not computed: {type(exc).__name__}: {exc}"}]
        self.data = json_bytes({"plan": layout.to_dict(), "accesses": rows})
        if not self.selected:
            swz = [a["name"] for a in layout.allocations if a.get("bank_pattern") and a.get("swizzle")]
            self.selected = swz[0] if swz else ""


def _layout(obj):
    """A :class:`txlab.pools.PoolLayout` for the view: one as given; a kernel (``txlab.Compiled``, ``@T.prim_func``,
    IRModule) laid out with :func:`txlab.pools.layout`; anything else an InputError saying what the view takes."""
    import tvm

    from txlab import pools
    from txlab.errors import InputError

    if isinstance(obj, pools.PoolLayout):
        return obj
    if isinstance(obj, (tvm.tirx.PrimFunc, tvm.IRModule)) or hasattr(obj, "ir_module"):
        return pools.layout(obj)
    raise InputError(
        f"PoolView takes a txlab.pools.PoolLayout (txlab.pools.layout(kernel)) or a kernel (txlab.Compiled, "
        f"@T.prim_func), not {type(obj).__name__}",
        param="layout",
    )


# PoolMap was this view's name until 0.1 (one release of warnings)
__getattr__ = renamed(__name__, {"PoolMap": "PoolView"})
