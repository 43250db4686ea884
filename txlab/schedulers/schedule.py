"""ScheduleTrace: the tiles each CTA of a scheduler visits, in order, and their metrics (waves, L2
reuse, balance), plots and widget."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from txlab.errors import InputError
from txlab.schedulers.catalogue import SCHEDULERS, SchedulerSpec
from txlab.schedulers.params import DEFAULT_SM_COUNT


@dataclass
class ScheduleTrace:
    """Tiles visited by each CTA of a scheduler, in order. Arrays are int32, CTA-major.

    ``cta``/``step`` say who visits and when (the step-th tile of that CTA); ``attrs`` holds the
    scheduler's own attributes for each visit (``m_idx``, ``n_idx``, ``k_idx`` or ``batch_idx``,
    ``head_idx``, ``m_block_idx`` or ``b_idx``, ``h_idx``, ``q_idx``).

    ``build`` is the recorder build that ran: ``"specialized"`` (every parameter a constant, as in a kernel
    with static shapes), ``"runtime extents"`` (extents and worker counts kernel arguments) or
    ``"runtime parameters"`` (every integer parameter one: what a trace falls back to where TVM cannot
    compile the others); ``specialized`` is ``build == "specialized"``. ``notes`` says why a build other
    than the one asked for ran, and when no CTA visits a tile (an empty trace).
    """

    scheduler: str
    params: dict
    num_ctas: int
    cta: np.ndarray
    step: np.ndarray
    attrs: dict
    concurrency: int = DEFAULT_SM_COUNT
    device: str = "cpu"
    specialized: bool = True
    build: str | None = None
    notes: list = field(default_factory=list)
    _metrics_cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.build is None:
            self.build = "specialized" if self.specialized else "runtime extents"

    @property
    def empty(self) -> bool:
        """No CTA visits a tile."""
        return len(self) == 0

    # ---- shapes -----------------------------------------------------------------------------
    @property
    def spec(self) -> SchedulerSpec:
        return SCHEDULERS[self.scheduler]

    @property
    def family(self) -> str:
        return self.spec.family

    def __len__(self) -> int:
        return int(self.cta.size)

    @property
    def visits(self) -> list[dict]:
        """One dict per visit, ``{"cta", "step", <attribute names>}``, in each CTA's order."""
        names = list(self.attrs)
        cols = [self.cta.tolist(), self.step.tolist()] + [self.attrs[n].tolist() for n in names]
        keys = ["cta", "step"] + names
        return [dict(zip(keys, row)) for row in zip(*cols)]

    @property
    def array(self) -> np.ndarray:
        """The visits as a numpy structured array (fields ``cta``, ``step``, attributes)."""
        dtype = [("cta", "i4"), ("step", "i4")] + [(n, "i4") for n in self.attrs]
        arr = np.empty(len(self), dtype=dtype)
        arr["cta"], arr["step"] = self.cta, self.step
        for n, v in self.attrs.items():
            arr[n] = v
        return arr

    def grid_shape(self) -> tuple[int, int, int]:
        """(rows, cols, layers) of the tile grid the trace is drawn on."""
        p = self.params
        n = self.scheduler
        if n == "ClusterPersistentScheduler2D":
            return p["num_m_tiles"], p["num_n_tiles"], 1
        if n == "GroupMajor3D":
            return p["m_tiles"], p["n_tiles"], p["k_tiles"]
        if n == "RankAwareGroupMajorTileScheduler":
            return p["m_clusters"], p["n_clusters"], 1
        if n == "IndexedTripleTileScheduler":
            b, h, q = self.attrs["b_idx"], self.attrs["h_idx"], self.attrs["q_idx"]
            nb = int(b.max()) + 1 if b.size else 1
            nh = int(h.max()) + 1 if h.size else 1
            return nb * nh, (int(q.max()) + 1 if q.size else 1), 1
        return p["num_batches"] * p["num_heads"], p["num_m_blocks"], 1

    def coords(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, col, layer) of every visit on the grid of :meth:`grid_shape`."""
        a = self.attrs
        zeros = np.zeros_like(self.cta)
        if "m_idx" in a:
            return a["m_idx"], a["n_idx"], a.get("k_idx", zeros)
        if "batch_idx" in a:
            return a["batch_idx"] * self.params["num_heads"] + a["head_idx"], a["m_block_idx"], zeros
        nh = int(a["h_idx"].max()) + 1 if a["h_idx"].size else 1
        return a["b_idx"] * nh + a["h_idx"], a["q_idx"], zeros

    @property
    def waves_per_step(self) -> int:
        return -(-self.num_ctas // self.concurrency)

    @property
    def wave(self) -> np.ndarray:
        """Wave of each visit under an equal-time model: ``concurrency`` CTAs are resident; CTA c
        runs in slot group c // concurrency, and its step s in wave s * ceil(num_ctas/concurrency)
        + c // concurrency (for a persistent grid, num_ctas <= concurrency: wave == step)."""
        return (self.step * self.waves_per_step + self.cta // self.concurrency).astype(np.int32)

    # ---- metrics ----------------------------------------------------------------------------
    def metrics(
        self,
        *,
        tile_m: int = 128,
        tile_n: int = 128,
        k: int = 4096,
        dtype_bytes: int = 2,
        block_m: int = 128,
        block_n: int = 128,
        causal: bool = True,
    ) -> dict:
        """Load balance, waves, coverage; GEMM panel reuse per wave and DRAM estimate; attention
        causal cost per CTA. See :func:`_gemm_metrics` and :func:`_attention_metrics` for models."""
        key = (tile_m, tile_n, k, dtype_bytes, block_m, block_n, causal)
        if key in self._metrics_cache:
            return self._metrics_cache[key]
        counts = np.bincount(self.cta, minlength=self.num_ctas)
        mean = float(counts.mean()) if counts.size else 0.0
        waves = int(self.wave.max()) + 1 if len(self) else 0
        rows, cols, layers = self.grid_shape()
        r, c, l = self.coords()
        inside = (r >= 0) & (r < rows) & (c >= 0) & (c < cols) & (l >= 0) & (l < layers)
        flat = (l[inside].astype(np.int64) * rows + r[inside]) * cols + c[inside]
        hits = np.bincount(flat, minlength=rows * cols * layers)
        if self.empty and self.scheduler == "IndexedTripleTileScheduler":
            # its grid is drawn from the tiles visited: with none there is no grid to miss tiles of
            hits = np.zeros(0, np.int64)
        m = {
            "scheduler": self.scheduler,
            "num_ctas": self.num_ctas,
            "concurrency": self.concurrency,
            "visits": len(self),
            "tiles_per_cta": {
                "min": int(counts.min()) if counts.size else 0,
                "max": int(counts.max()) if counts.size else 0,
                "mean": round(mean, 3),
            },
            "imbalance": round(float(counts.max()) / mean, 4) if mean else 0.0,
            "idle_ctas": int((counts == 0).sum()),
            "waves": waves,
            "empty": self.empty,
            "coverage": {
                "grid_tiles": int(hits.size),
                "missing": int((hits == 0).sum()),
                "duplicated": int((hits > 1).sum()),
                "extra_visits": int(np.maximum(hits - 1, 0).sum()),
                "out_of_grid": int((~inside).sum()),
            },
        }
        if self.family == "gemm":
            m["gemm"] = self._gemm_metrics(tile_m, tile_n, k, dtype_bytes)
        else:
            m["attention"] = self._attention_metrics(block_m, block_n, causal)
        self._metrics_cache[key] = m
        return m

    def _gemm_metrics(self, tile_m, tile_n, k, dtype_bytes) -> dict:
        """Per wave, the distinct A row-panels (m, or (m, k) blocks for 3D) and B column-panels
        (n, or (k, n)) its concurrently running tiles read. Traffic model: a wave's distinct panels
        come from DRAM once, nothing survives in L2 across waves. Baseline: row-major tile order
        (tile t = (t // N, t % N), or (m, n, k) lexicographic) striding by the same num_ctas."""
        rows, cols, layers = self.grid_shape()
        r, c, l = self.coords()
        wave = self.wave
        a_per, b_per = _distinct_per_wave(wave, r, c, l, layers)
        # row-major baseline with the same CTA count, stride and wave model
        total = rows * cols * layers
        t = np.arange(total, dtype=np.int64)
        base_cta = t % self.num_ctas
        base_step = t // self.num_ctas
        base_wave = base_step * self.waves_per_step + base_cta // self.concurrency
        bm, rem = np.divmod(t, cols * layers)
        bn, bk = np.divmod(rem, layers)
        ba, bb = _distinct_per_wave(base_wave, bm, bn, bk, layers)
        k_slice = k / layers
        a_bytes = tile_m * k_slice * dtype_bytes
        b_bytes = tile_n * k_slice * dtype_bytes
        traffic = float(a_per.sum() * a_bytes + b_per.sum() * b_bytes)
        base = float(ba.sum() * a_bytes + bb.sum() * b_bytes)
        return {
            "a_panels_per_wave": a_per.tolist(),
            "b_panels_per_wave": b_per.tolist(),
            "a_panel_loads": int(a_per.sum()),
            "b_panel_loads": int(b_per.sum()),
            "rowmajor_a_panel_loads": int(ba.sum()),
            "rowmajor_b_panel_loads": int(bb.sum()),
            "dram_bytes_est": traffic,
            "rowmajor_dram_bytes_est": base,
            "traffic_vs_rowmajor": round(traffic / base, 4) if base else 0.0,
            "model": {"tile_m": tile_m, "tile_n": tile_n, "k": k, "dtype_bytes": dtype_bytes},
        }

    def _attention_metrics(self, block_m, block_n, causal) -> dict:
        """Causal cost of a (batch, head, m_block) task = KV blocks it reads:
        min(ceil((m_block+1)*block_m / block_n), kv_blocks) with kv_blocks = ceil(seq/block_n),
        seq = num_m_blocks*block_m; non-causal = kv_blocks. Makespan: CTAs run their tasks back to
        back; with more CTAs than ``concurrency`` they are issued in index order to the first free
        slot (greedy list scheduling)."""
        _, cols, _ = self.grid_shape()
        q = self.coords()[1].astype(np.int64)
        seq = cols * block_m
        kv_blocks = -(-seq // block_n)
        if causal:
            cost = np.minimum(-(-((q + 1) * block_m) // block_n), kv_blocks)
        else:
            cost = np.full_like(q, kv_blocks)
        per_cta = np.bincount(self.cta, weights=cost, minlength=self.num_ctas).astype(np.int64)
        mean = float(per_cta.mean()) if per_cta.size else 0.0
        if self.num_ctas <= self.concurrency:
            makespan = int(per_cta.max()) if per_cta.size else 0
        else:
            import heapq

            slots = [0] * self.concurrency
            heapq.heapify(slots)
            finish = 0
            for work in per_cta.tolist():
                start = heapq.heappop(slots)
                end = start + work
                finish = max(finish, end)
                heapq.heappush(slots, end)
            makespan = finish
        ideal = float(cost.sum()) / min(self.concurrency, self.num_ctas) if len(self) else 0.0
        return {
            "causal": causal,
            "cost_per_cta": per_cta.tolist(),
            "cost": {
                "min": int(per_cta.min()) if per_cta.size else 0,
                "max": int(per_cta.max()) if per_cta.size else 0,
                "mean": round(mean, 3),
            },
            "cost_imbalance": round(float(per_cta.max()) / mean, 4) if mean else 0.0,
            "total_kv_blocks": int(cost.sum()),
            "makespan_kv_blocks": makespan,
            "ideal_kv_blocks": round(ideal, 3),
            "efficiency": round(ideal / makespan, 4) if makespan else 0.0,
            "model": {"block_m": block_m, "block_n": block_n},
        }

    # ---- output -----------------------------------------------------------------------------
    def columns(self) -> dict[str, np.ndarray]:
        """int32 columns for drawing: cta, step, wave, row, col, layer, then the attributes."""
        r, c, l = self.coords()
        cols = {"cta": self.cta, "step": self.step, "wave": self.wave, "row": r, "col": c, "layer": l}
        cols.update(self.attrs)
        return {k: np.ascontiguousarray(v, dtype=np.int32) for k, v in cols.items()}

    def to_dict(self, *, arrays: bool = True) -> dict:
        """Compact payload: scalars, metrics and int columns (lists, not per-visit dicts)."""
        rows, cols, layers = self.grid_shape()
        spec = self.spec
        labels = {"gemm": ("m tile", "n tile", "k tile"), "attention": ("batch·head", "m block", "")}[spec.family]
        d = {
            "scheduler": self.scheduler,
            "family": spec.family,
            "params": {k: v for k, v in self.params.items()},
            "num_ctas": self.num_ctas,
            "concurrency": self.concurrency,
            "device": self.device,
            "specialized": self.specialized,
            "build": self.build,
            "notes": list(self.notes),
            "attrs": list(self.attrs),
            "grid": {
                "rows": rows,
                "cols": cols,
                "layers": layers,
                "row_label": labels[0],
                "col_label": labels[1],
                "layer_label": labels[2],
                "num_heads": self._num_heads(),
            },
            "visits": len(self),
            "metrics": self.metrics(),
        }
        if arrays:
            d["columns"] = {k: v.tolist() for k, v in self.columns().items()}
        return d

    def _num_heads(self) -> int:
        if "num_heads" in self.params:
            return self.params["num_heads"]
        if "h_idx" in self.attrs and self.attrs["h_idx"].size:
            return int(self.attrs["h_idx"].max()) + 1
        return 1

    def tile_map(self, by: str = "cta", layer: int = 0) -> np.ndarray:
        """rows x cols array of the first visit's ``by`` (cta, step or wave) per tile; -1 if none."""
        rows, cols, _ = self.grid_shape()
        out = np.full((rows, cols), -1, dtype=np.int64)
        r, c, l = self.coords()
        val = {"cta": self.cta, "step": self.step, "wave": self.wave}[by]
        ok = (l == layer) & (r >= 0) & (r < rows) & (c >= 0) & (c < cols)
        # reversed so the first visit wins when a tile is visited twice
        out[r[ok][::-1], c[ok][::-1]] = val[ok][::-1]
        return out

    def plot(self, by: str = "cta", wave: int | None = None, layer: int = 0, ax=None):
        """Tile grid coloured by ``by`` (cta, step or wave); with ``wave``, tiles of later waves
        are blank and that wave's tiles are outlined. Returns the matplotlib Figure (drawn on ``ax``
        when given)."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if by not in ("cta", "step", "wave"):
            raise InputError("by must be 'cta', 'step' or 'wave'", param="by")
        grid = self.tile_map(by, layer).astype(float)
        if wave is not None:
            wmap = self.tile_map("wave", layer)
            grid[wmap > wave] = np.nan
        grid[grid < 0] = np.nan
        if ax is None:
            rows, cols, _ = self.grid_shape()
            scale = 6.0 / max(rows, cols)
            _, ax = plt.subplots(figsize=(max(3.0, cols * scale + 1.5), max(3.0, rows * scale + 0.8)))
        cmap = "tab20" if by == "cta" else "viridis"
        im = ax.imshow(grid, cmap=cmap, interpolation="nearest", aspect="auto")
        spec = self.spec
        labels = {"gemm": ("m tile", "n tile"), "attention": ("batch·head", "m block")}[spec.family]
        ax.set_ylabel(labels[0])
        ax.set_xlabel(labels[1])
        m = self.metrics()
        title = f"{self.scheduler} · {self.num_ctas} CTAs · {m['waves']} waves"
        if wave is not None:
            title += f" · wave {wave}"
            r, c, l = self.coords()
            sel = (self.wave == wave) & (l == layer)
            for rr, cc in zip(r[sel].tolist(), c[sel].tolist()):
                ax.add_patch(Rectangle((cc - 0.5, rr - 0.5), 1, 1, fill=False, lw=0.8, ec="black"))
        ax.set_title(title, fontsize=9)
        ax.figure.colorbar(im, ax=ax, label=by, fraction=0.046, pad=0.04)
        return ax.figure

    def view(self, **kwargs):
        """The interactive widget of this schedule (:class:`txlab.views.ScheduleView`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def __repr__(self) -> str:
        if self.empty:
            return f"ScheduleTrace({self.scheduler}, {self.num_ctas} CTAs, empty: no CTA visits a tile)"
        m = self.metrics()
        return (
            f"ScheduleTrace({self.scheduler}, {self.num_ctas} CTAs, {len(self)} visits, "
            f"{m['waves']} waves, imbalance {m['imbalance']})"
            + (f", {self.build} build" if self.build != "specialized" else "")
        )


def _distinct_per_wave(wave, r, c, l, layers):
    """Distinct A blocks (row, layer) and B blocks (layer, col) per wave."""
    if wave.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    nw = int(wave.max()) + 1
    w = wave.astype(np.int64)
    r = r.astype(np.int64)
    c = c.astype(np.int64)
    l = l.astype(np.int64)
    span_r = int(r.max()) + 2 if r.size else 1
    span_c = int(c.max()) + 2 if c.size else 1
    a_keys = np.unique((w * layers + l) * span_r + r)
    b_keys = np.unique((w * layers + l) * span_c + c)
    a_per = np.bincount(a_keys // (span_r * layers), minlength=nw)
    b_per = np.bincount(b_keys // (span_c * layers), minlength=nw)
    return a_per, b_per
