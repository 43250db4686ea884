"""The memory plan of one kernel (``PoolLayout``) and the occupancy it allows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from txlab.pools.buffers import _fmt_bytes
from txlab.pools.limits import TMEM_LANES, TMEM_MAX_COLUMNS, PoolOverflowError


@dataclass
class Occupancy:
    """Resident CTAs per SM and what limits them, counted by :mod:`txlab.residency` (the rules
    :func:`txlab.occupancy_of` counts with). ``limits`` maps each resource to the CTA count it alone
    would allow (``None`` = unknown, e.g. registers without a compiled cubin); ``smem_per_cta_bytes``
    is what a CTA is allocated (its shared memory + the reserved 1 KiB, in 128-byte units; ``None`` when
    the shared memory's size depends on a kernel argument). ``ctas_per_sm`` is ``None`` when it cannot be
    counted, and ``unknown`` then says why (a size that depends on a kernel argument, an invalid
    ``tcgen05.alloc``)."""

    ctas_per_sm: int | None
    limited_by: str | None
    limits: dict
    smem_per_cta_bytes: int | None
    threads_per_cta: int | None
    registers_per_thread: int | None
    notes: list = field(default_factory=list)
    unknown: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PoolLayout:
    """The memory plan of one kernel. Offsets are bytes (TMEM: columns)."""

    kernel: str
    arch: str | None
    allocations: list
    dynamic_smem_bytes: int | None  # the kernel's own tirx.dyn_smem_bytes annotation
    static_smem_bytes: int
    high_water_bytes: int  # end of the furthest shared.dyn allocation
    limit_bytes: int | None  # per-block opt-in shared memory of `arch`
    smem_per_sm_bytes: int | None
    padding_bytes: int  # bytes below the high-water mark that no buffer covers
    gaps: list  # [{"offset", "nbytes", "before", "reason"}]
    tmem_columns: int  # high-water column of TMEM allocations
    tmem_alloc_columns: int | None  # what tcgen05.alloc requests (None: no TMEM alloc)
    occupancy: Occupancy
    errors: list  # [{"kind", "message", "allocation", "excess", "limit"}]
    warnings: list
    # buffers declared over a computed pointer, not allocated here (MBarrier.remote_view: another
    # CTA's barriers through mapa): [{"name", "scope", "dtype", "shape", "remote", "pointer"}]
    views: list = field(default_factory=list)
    # cta_group of the kernel's tcgen05.alloc: 2 means the columns are allocated in both CTAs of a pair
    tmem_cta_group: int | None = None
    # the dynamic shared memory arenas: [{"name", "pool" (an SMEMPool's, else a shared.dyn buffer of its own),
    # "committed" (its tirx.dyn_smem_bytes, None: never committed or not constant), "committed_expr",
    # "extent", "allocations"}]; TVM builds a kernel with at most one
    arenas: list = field(default_factory=list)
    # shared buffers whose size or place depends on a kernel argument: [{"allocation", "scope", "nbytes"
    # (the size as text, e.g. "n * 4"), "depends_on" (the arguments), "in_total" (a constant commit or
    # ptxas' count covers it)}]; pass params= to txlab.pools.layout to judge one size
    unknown_sizes: list = field(default_factory=list)

    # -- queries ---------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> dict:
        for a in self.allocations:
            if a["name"] == name:
                return a
        raise KeyError(f"no allocation named {name!r}; have {[a['name'] for a in self.allocations]}")

    @property
    def total_smem_bytes(self) -> int | None:
        """Static + dynamic shared memory of a CTA; ``None`` when a size depends on a kernel argument that no
        constant commit covers (see :attr:`unknown_sizes`)."""
        if any(not u["in_total"] for u in self.unknown_sizes):
            return None
        dyn = self.dynamic_smem_bytes if self.dynamic_smem_bytes is not None else self.high_water_bytes
        return self.static_smem_bytes + dyn

    @property
    def depends_on(self) -> list[str]:
        """The kernel arguments the plan's shared memory size depends on (empty for a constant plan)."""
        out: list[str] = []
        for u in self.unknown_sizes:
            out += [v for v in u["depends_on"] if v not in out]
        return out

    def check(self) -> "PoolLayout":
        """Raise :class:`PoolOverflowError` for the first error (smem first, then tmem)."""
        if self.errors:
            e = self.errors[0]
            more = f" ({len(self.errors) - 1} more problem(s) in .errors)" if len(self.errors) > 1 else ""
            raise PoolOverflowError(
                e["message"] + more,
                kind=e["kind"],
                allocation=e["allocation"],
                excess=e["excess"],
                limit=e["limit"],
                arch=self.arch,
                kernel=self.kernel,
            )
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["occupancy"] = self.occupancy.to_dict()
        d["total_smem_bytes"] = self.total_smem_bytes
        d["depends_on"] = self.depends_on
        d["tmem_lanes"] = TMEM_LANES
        d["tmem_limit_columns"] = TMEM_MAX_COLUMNS
        return d

    def summary(self) -> str:
        total = self.total_smem_bytes
        deps = self.depends_on
        lines = [
            f"{self.kernel} ({self.arch or 'arch unknown'}): "
            f"{_fmt_bytes(total)} shared"
            + (f" (depends on {', '.join(deps)})" if total is None and deps else "")
            + (f" of {_fmt_bytes(self.limit_bytes)}" if self.limit_bytes else "")
            + f", padding {self.padding_bytes} B"
            + (
                f", TMEM {self.tmem_columns}/{TMEM_MAX_COLUMNS} columns"
                if self.tmem_alloc_columns or self.tmem_columns
                else ""
            )
            + (" in each CTA of a cta_group::2 pair" if self.tmem_cta_group == 2 else "")
            + (
                f", {self.occupancy.ctas_per_sm} CTA/SM ({self.occupancy.limited_by})"
                if self.occupancy.ctas_per_sm is not None
                else f", CTA/SM unknown ({self.occupancy.unknown})"
                if self.occupancy.unknown
                else ""
            )
        ]
        for a in self.allocations:
            unit = "col" if a["scope"] == "tmem" else "B"
            alias = f"  aliases {', '.join(a['aliases'])}" if a["aliases"] else ""
            sw = f"  {a['swizzle']}" if a["swizzle"] else ""
            offset = "?" if a["offset"] is None else a["offset"]
            size = a["nbytes"] if a["nbytes"] is not None else (a.get("nbytes_expr") or "?")
            lines.append(
                f"  {a['name']:<20} {a['scope']:<10} @{offset:>7} {size:>7} {unit}"
                f"  {a['dtype']}{_shape_text(a['shape'])}{sw}{alias}"
            )
        for v in self.views:
            where = "another CTA's shared memory (mapa)" if v["remote"] else "a computed pointer"
            lines.append(
                f"  {v['name']:<20} view of {where}: {v['dtype']}{_shape_text(v['shape'])}, not allocated here"
            )
        for e in self.errors:
            lines.append(f"  ERROR: {e['message']}")
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def view(self, **kwargs):
        """The interactive widget of this plan (:class:`txlab.views.PoolView`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def bank_conflicts(self):
        """One row per shared-memory load/store in the kernel (``T.alloc_shared`` and SMEMPool
        buffers): ``buffer``, ``lineno``, ``access``, ``ways`` (1 = conflict-free ... 32),
        ``wavefronts`` and the colliding ``lanes``, from the index expressions evaluated for the 32
        lanes of every warp (:mod:`txlab.banks`). Returns a :class:`txlab.banks.BankReport`."""
        from txlab.banks import bank_conflicts

        source = getattr(self, "_source", None)
        if source is None:
            raise ValueError(
                "this plan does not know its kernel (it was not built by "
                "txlab.pools.layout); call txlab.pools.layout(kernel).bank_conflicts()"
            )
        return bank_conflicts(source, arch=self.arch, plan=self)

    # -- plotting --------------------------------------------------------------------------------
    def plot(self, ax=None):
        """Byte-scaled map of shared.dyn (and TMEM columns when present) with matplotlib."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        # a buffer whose size or place depends on a kernel argument has no extent to draw (summary() lists it)
        smem = [
            a
            for a in self.allocations
            if a["scope"].startswith("shared.dyn") and a["offset"] is not None and a["nbytes"] is not None
        ]
        tmem = [
            a for a in self.allocations if a["scope"] == "tmem" and a["offset"] is not None and a["nbytes"] is not None
        ]
        if ax is None:
            nrows = 2 if tmem else 1
            fig, axes = plt.subplots(nrows, 1, figsize=(10, 2.2 + 1.6 * nrows), squeeze=False)
            ax, ax_t = axes[0][0], (axes[1][0] if tmem else None)
        else:
            fig, ax_t = ax.figure, None
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        # Aliased buffers get their own lane so overlaps stay visible.
        lanes = _assign_lanes(smem)
        nl = max(lanes.values(), default=0) + 1
        for i, a in enumerate(smem):
            y = lanes[a["name"]]
            ax.add_patch(Rectangle((a["offset"], y), a["nbytes"], 0.8, color=colors[i % len(colors)], alpha=0.85, lw=0))
            ax.text(
                a["offset"] + a["nbytes"] / 2, y + 0.4, a["name"], ha="center", va="center", fontsize=8, clip_on=True
            )
        for g in self.gaps:
            ax.add_patch(
                Rectangle((g["offset"], 0), g["nbytes"], nl - 0.2, fill=False, hatch="///", lw=0, color="grey")
            )
        end = max(self.high_water_bytes, self.dynamic_smem_bytes or 0, 1)
        xmax = end
        if self.limit_bytes:
            dyn_limit = self.limit_bytes - self.static_smem_bytes
            ax.axvline(dyn_limit, color="red", ls="--", lw=1)
            ax.text(dyn_limit, nl, f" {self.arch} limit", color="red", fontsize=8, va="bottom")
            xmax = max(xmax, dyn_limit)
        if self.dynamic_smem_bytes is not None:
            ax.axvline(self.dynamic_smem_bytes, color="black", ls=":", lw=1)
        ax.set_xlim(0, xmax * 1.02)
        ax.set_ylim(-0.2, nl + 0.6)
        ax.set_yticks([])
        ax.set_xlabel("shared.dyn byte offset")
        ax.set_title(
            f"{self.kernel}: {_fmt_bytes(self.total_smem_bytes)} shared"
            + (f" (depends on {', '.join(self.depends_on)})" if self.total_smem_bytes is None else "")
            + f", padding {self.padding_bytes} B"
            + (f", {self.occupancy.ctas_per_sm} CTA/SM" if self.occupancy.ctas_per_sm else ""),
            fontsize=10,
        )
        if ax_t is not None:
            for i, a in enumerate(tmem):
                for lo, hi in a["lanes"]:
                    ax_t.add_patch(
                        Rectangle(
                            (a["offset"], lo),
                            a["nbytes"],
                            hi - lo,
                            color=colors[(i + 3) % len(colors)],
                            alpha=0.8,
                            lw=0,
                        )
                    )
                ax_t.text(
                    a["offset"] + a["nbytes"] / 2,
                    a["lanes"][0][0] + 8 if a["lanes"] else 8,
                    a["name"],
                    ha="center",
                    fontsize=8,
                )
            ax_t.axvline(TMEM_MAX_COLUMNS, color="red", ls="--", lw=1)
            if self.tmem_alloc_columns:
                ax_t.axvline(self.tmem_alloc_columns, color="black", ls=":", lw=1)
            ax_t.set_xlim(0, max(TMEM_MAX_COLUMNS, self.tmem_columns) * 1.02)
            ax_t.set_ylim(TMEM_LANES, 0)
            ax_t.set_xlabel("TMEM column (32-bit cells)")
            ax_t.set_ylabel("lane")
        fig.tight_layout()
        return fig


def _shape_text(shape) -> str:
    """``[3, 128, 64]``; a dimension that is a kernel argument as its name (``[n]``)."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _assign_lanes(allocs) -> dict:
    """Stack overlapping (aliased) byte ranges on separate rows, first-fit in offset order."""
    rows: list[int] = []  # end byte of the last range placed on each row
    out = {}
    for a in sorted(allocs, key=lambda a: (a["offset"], -(a["nbytes"] or 0))):
        end = a["offset"] + (a["nbytes"] or 0)
        for i, row_end in enumerate(rows):
            if row_end <= a["offset"]:
                rows[i] = end
                out[a["name"]] = i
                break
        else:
            rows.append(end)
            out[a["name"]] = len(rows) - 1
    return out
