"""The outcome of a tuning sweep: one row per configuration, pure Python (no Jupyter, no Ray).

    res = txlab.autotune(build, space, inputs, check=ref)
    res.best.config, res.best.time_ms, res.to_dict(), res.plot(), res.save("sweep.json")

A row's ``status`` is one of :data:`STATUSES`. Rows change in place while a sweep runs (the engine
calls :meth:`TuneResult.update`), and listeners (``TuneView``) are told about every change.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

FORMAT = "txlab-tune/1"
#: the largest saved result :meth:`TuneResult.load` reads (a sweep of 10^5 rows is ~60 MiB)
MAX_BYTES = 256 << 20

#: pending: not compiled yet; compiled: compiled (measuring needs a GPU, or waits for one);
#: measured: checked and timed; compile_failed / spills / unlaunchable: rejected after compiling;
#: check_failed: wrong results; fault: faulted or hung (``fault_kind`` says which);
#: skipped: never run (the budget ran out or the sweep was cancelled)
STATUSES = (
    "pending",
    "compiled",
    "measured",
    "compile_failed",
    "spills",
    "unlaunchable",
    "check_failed",
    "fault",
    "skipped",
)
FAILED = ("compile_failed", "spills", "unlaunchable", "check_failed", "fault")


@dataclass
class Row:
    config: dict
    id: str
    status: str = "pending"
    reason: str = ""
    fault_kind: str | None = None
    compile_s: float | None = None
    time_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    ratio: float | None = None  # baseline time / this time (1.0 = as fast as the baseline)
    rel_error: float | None = None
    facts: dict = field(default_factory=dict)  # registers, spills, smem, occupancy, SASS counts
    key: str = ""  # the compiled kernel's content key
    cached: bool = False  # the measurement came from the result cache
    worker: str = ""  # which GPU worker measured it

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Row":
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"tune row has unknown fields {sorted(unknown)}")
        row = cls(**d)
        if row.status not in STATUSES:
            raise ValueError(f"tune row {row.id}: unknown status {row.status!r}")
        if not isinstance(row.config, dict):
            raise ValueError(f"tune row {row.id}: config is not a dict")
        return row


#: the columns of :meth:`TuneResult.table` after the configuration's own
TABLE_COLUMNS = (
    "status",
    "compile_s",
    "time_ms",
    "tflops",
    "gbps",
    "ratio",
    "rel_error",
    "registers",
    "spill_bytes",
    "blocks_per_sm",
    "occupancy_pct",
    "reason",
)


class TuneTable(list):
    """:meth:`TuneResult.table`: a list of row dicts (so code that indexes it keeps working) that a
    notebook shows as an HTML table (registered by ``txlab.display``); ``columns`` in order."""

    def __init__(self, rows=(), name: str = ""):
        super().__init__(rows)
        self.name = name

    def __getitem__(self, i):
        got = super().__getitem__(i)
        return TuneTable(got, name=self.name) if isinstance(i, slice) else got

    @property
    def columns(self) -> list[str]:
        cols: list[str] = []
        for r in self:
            cols.extend(k for k in r if k not in cols)
        return cols

    def to_dict(self) -> dict:
        return {"name": self.name, "columns": self.columns, "rows": list(self)}


@dataclass
class TuneResult:
    name: str
    space: dict  # Space.to_dict()
    rows: list = field(default_factory=list)
    objective: str = "time"
    baseline: dict | None = None  # {"name": ..., "time_ms": ...}
    meta: dict = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    finished: float | None = None

    def __post_init__(self):
        self._lock = threading.RLock()
        self._listeners: list = []

    # ---- live updates --------------------------------------------------------------------------
    def subscribe(self, fn) -> None:
        """``fn(result)`` is called (from the sweep's thread) after every change."""
        self._listeners.append(fn)

    def unsubscribe(self, fn) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def update(self, row: Row | None = None, **fields) -> None:
        with self._lock:
            if row is not None:
                for k, v in fields.items():
                    setattr(row, k, v)
            elif fields:
                self.meta.update(fields)
        self._notify()

    def _notify(self):
        for fn in list(self._listeners):
            try:
                fn(self)
            except Exception:  # noqa: BLE001 - a broken view must not stop the sweep
                pass

    # ---- model ---------------------------------------------------------------------------------
    @property
    def measured(self) -> list[Row]:
        return [r for r in self.rows if r.status == "measured" and r.time_ms is not None]

    @property
    def best(self) -> Row | None:
        """The fastest checked row (None before anything was measured, e.g. compile-only)."""
        rows = self.measured
        return min(rows, key=lambda r: r.time_ms) if rows else None

    def counts(self) -> dict:
        c = {s: 0 for s in STATUSES}
        for r in self.rows:
            c[r.status] += 1
        compiled = sum(1 for r in self.rows if r.status not in ("pending", "compile_failed", "skipped"))
        return {
            "total": len(self.rows),
            "compiled": compiled,
            "measured": c["measured"],
            "failed": sum(c[s] for s in FAILED),
            "pending": c["pending"],
            "skipped": c["skipped"],
            "by_status": c,
        }

    def progress(self) -> dict:
        """Counts, elapsed seconds and an ETA (from the rate so far) of the running sweep."""
        c = self.counts()
        elapsed = (self.finished or time.time()) - self.started
        gpus = self.meta.get("gpus", 0)
        # a row is finished when nothing more will happen to it (compiled is final without a GPU)
        finished = sum(
            1 for r in self.rows if r.status not in ("pending", "compiled") or (r.status == "compiled" and not gpus)
        )
        left = c["total"] - finished
        eta = elapsed / finished * left if (self.finished is None and finished and left) else None
        c["finished"] = finished
        return {**c, "elapsed_s": elapsed, "eta_s": eta, "done": self.finished is not None}

    def influence(self) -> dict[str, float]:
        """How much of the spread of log(time) each parameter explains on its own (eta squared of
        a one-way grouping by the parameter's value; 0..1), over the measured rows."""
        rows = self.measured
        names = list(self.space.get("params", {}))
        if len(rows) < 2:
            return {n: 0.0 for n in names}
        y = [math.log(r.time_ms) for r in rows]
        mean = sum(y) / len(y)
        total = sum((v - mean) ** 2 for v in y)
        out = {}
        for n in names:
            groups: dict[str, list[float]] = {}
            for r, v in zip(rows, y):
                groups.setdefault(repr(r.config.get(n)), []).append(v)
            between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values())
            out[n] = between / total if total > 0 else 0.0
        return out

    def top_params(self, k: int = 2) -> list[str]:
        """The ``k`` most influential parameters that take more than one value."""
        varied = [n for n, v in self.space.get("params", {}).items() if len(v) > 1]
        inf = self.influence()
        return sorted(varied, key=lambda n: -inf.get(n, 0.0))[:k]

    def to_dict(self) -> dict:
        with self._lock:
            best = self.best
            return {
                "format": FORMAT,
                "name": self.name,
                "space": self.space,
                "objective": self.objective,
                "baseline": self.baseline,
                "meta": self.meta,
                "started": self.started,
                "finished": self.finished,
                "rows": [r.to_dict() for r in self.rows],
                "best": best.id if best else None,
                "counts": self.counts(),
                "influence": self.influence(),
            }

    def table(self, sort: str = "time_ms") -> "TuneTable":
        """Rows as flat dicts (config values as columns), the measured ones first, fastest first: a
        list (of :data:`TABLE_COLUMNS` after the config's), shown as an HTML table in a notebook.
        ``blocks_per_sm`` is resident CTAs per SM, ``occupancy_pct`` resident warps over the SM's
        maximum (theoretical, from :mod:`txlab.occupancy`)."""

        def key(r):
            v = getattr(r, sort, None)
            return (v is None, v if v is not None else 0)

        out = []
        for r in sorted(self.rows, key=key):
            out.append(
                {
                    **r.config,
                    "status": r.status,
                    "compile_s": r.compile_s,
                    "time_ms": r.time_ms,
                    "tflops": r.tflops,
                    "gbps": r.gbps,
                    "ratio": r.ratio,
                    "rel_error": r.rel_error,
                    "registers": r.facts.get("registers"),
                    "spill_bytes": r.facts.get("spill_bytes"),
                    "blocks_per_sm": r.facts.get("blocks_per_sm"),
                    "occupancy_pct": None
                    if r.facts.get("occupancy") is None
                    else round(100.0 * r.facts["occupancy"], 1),
                    "reason": r.reason,
                }
            )
        return TuneTable(out, name=self.name)

    # ---- persistence ---------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write the result as JSON with a SHA-256 of its content (checked by :meth:`load`)."""
        from txlab.cache import seal

        doc = seal(json.loads(json.dumps(self.to_dict(), default=str)), "body")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path) -> "TuneResult":
        """Read a saved result; raises ValueError if it is not one, or if its content does not match
        its checksum (edited or truncated)."""
        from txlab.cache import sealed_body
        from txlab.files import read_bytes_capped

        data = read_bytes_capped(path, MAX_BYTES, "saved tune result")  # FileReadError is a ValueError
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a saved tune result (not JSON: {exc})") from None
        body, problem = sealed_body(doc, "body")
        if problem == "missing":
            raise ValueError(f"{path} is not a saved tune result (no body/sha256)")
        if problem == "mismatch":
            raise ValueError(f"{path}: content does not match its sha256 (edited or damaged); re-run the sweep")
        if body.get("format") != FORMAT:
            raise ValueError(f"{path}: format {body.get('format')!r}, expected {FORMAT!r}")
        res = cls(
            name=body["name"],
            space=body["space"],
            objective=body["objective"],
            baseline=body.get("baseline"),
            meta=body.get("meta") or {},
            started=body["started"],
            finished=body.get("finished"),
        )
        res.rows = [Row.from_dict(r) for r in body["rows"]]
        return res

    # ---- display -------------------------------------------------------------------------------
    def view(self, **kwargs):
        """The interactive widget of this result (:class:`txlab.views.TuneView`, registered by
        ``txlab.views``); it follows the result live while a sweep fills it."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def plot(self, params: tuple[str, str] | None = None, ax=None):
        """Median time over the two most influential parameters (or ``params``): a heatmap of the best
        time per cell, one panel; with one varied parameter, time against its values."""
        import matplotlib.pyplot as plt

        rows = self.measured
        names = list(params) if params else self.top_params(2)
        if ax is None:
            fig, ax = plt.subplots(figsize=(5.2, 3.6))
        else:
            fig = ax.figure
        if not rows or not names:
            ax.text(
                0.5,
                0.5,
                "nothing measured yet" if not rows else "no varied parameter",
                ha="center",
                va="center",
                transform=ax.transAxes,
            )
            ax.set_axis_off()
            return fig
        if len(names) == 1:
            xs = self.space["params"][names[0]]
            best = [min((r.time_ms for r in rows if r.config.get(names[0]) == x), default=float("nan")) for x in xs]
            ax.plot(range(len(xs)), [b * 1000 for b in best], "o-")
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels([str(x) for x in xs])
            ax.set_xlabel(names[0])
            ax.set_ylabel("best time (µs)")
        else:
            a, b = names
            xs, ys = self.space["params"][a], self.space["params"][b]
            grid = [[float("nan")] * len(xs) for _ in ys]
            for r in rows:
                try:
                    i, j = ys.index(r.config.get(b)), xs.index(r.config.get(a))
                except ValueError:
                    continue
                v = r.time_ms * 1000
                grid[i][j] = v if math.isnan(grid[i][j]) else min(grid[i][j], v)
            im = ax.imshow(grid, cmap="viridis_r", aspect="auto", origin="lower")
            for i in range(len(ys)):
                for j in range(len(xs)):
                    if not math.isnan(grid[i][j]):
                        ax.text(j, i, f"{grid[i][j]:.0f}", ha="center", va="center", fontsize=7, color="w")
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels([str(x) for x in xs])
            ax.set_yticks(range(len(ys)))
            ax.set_yticklabels([str(y) for y in ys])
            ax.set_xlabel(a)
            ax.set_ylabel(b)
            fig.colorbar(im, ax=ax, label="best time (µs), other parameters free")
        best = self.best
        ax.set_title(f"{self.name}: best {best.time_ms * 1000:.1f} µs" if best else self.name, fontsize=9)
        fig.tight_layout()
        return fig

    def __repr__(self):
        c = self.counts()
        best = self.best
        b = f"; best {best.time_ms * 1000:.1f} µs {best.config}" if best else ""
        return (
            f"<TuneResult {self.name}: {c['total']} configs, {c['compiled']} compiled, "
            f"{c['measured']} measured, {c['failed']} failed{b}>"
        )
