"""The in-kernel timeline model: :class:`Timeline` (numpy columns), its tracks and summary.

Pure Python (numpy, matplotlib for ``plot``); decoders live in ``cuda_profiler`` and ``iket``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from txlab.errors import InputError, TxlabError
from txlab.files import FileReadError, read_bytes_capped, resolve_path

KIND_RANGE, KIND_INSTANT = 0, 1

#: IKET payload type code -> the numpy dtype its 64-bit raw value holds (bool and int32/float32 in
#: the low 32 bits), as observed in run-iket 4.6.0 traces (tests/python/tirx/iket in TVM). The
#: widget decodes payloads with the same table (txlab.views.timeline).
IKET_PAYLOAD_TYPES = {2: "bool", 5: "int32", 7: "int64", 13: "float32", 14: "float64"}
_IKET_PAYLOAD_TYPES = IKET_PAYLOAD_TYPES


class TraceError(TxlabError, ValueError):
    """A trace cannot be decoded. The message names what is wrong and how to get a good trace."""


class TraceFileError(TraceError, FileReadError):
    """A trace file cannot be read: missing, empty path, not a regular file (a FIFO, a device, a
    directory, a symlink to ``/dev/zero``) or larger than the reader's byte cap."""


def read_trace_bytes(path, max_bytes: int, what: str) -> bytes:
    """The bytes of the trace file ``path`` through :func:`txlab.files.read_bytes_capped` (resolved
    path, regular files only, at most ``max_bytes`` whatever ``stat`` says); failures are
    :class:`TraceFileError` (a :class:`TraceError`) saying how to fix them."""
    try:
        return read_bytes_capped(path, max_bytes, what)
    except FileReadError as exc:
        msg = str(exc)
        if "larger than" in msg:
            msg += f"; pass a larger max_bytes= (now {max_bytes:,}) if the trace is really that big"
        raise TraceFileError(msg, path=exc.path) from None


def check_int(value, param: str, *, lo: int | None = None, hi: int | None = None, fix: str = "") -> int:
    """``value`` as an int (bool and non-integral values refused) within ``lo..hi`` inclusive, else
    :class:`txlab.errors.InputError` naming ``param``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(
            f"{param} must be an int, not {type(value).__name__} ({value!r:.40})" + (f"; {fix}" if fix else ""),
            param=param,
        )
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
        raise InputError(f"{param}={value} is out of range {rng}" + (f"; {fix}" if fix else ""), param=param)
    return value


def check_bool(value, param: str) -> bool:
    """``value`` if it is a bool (``"no"`` is not read as True), else InputError naming ``param``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{param} must be True or False, not {type(value).__name__} ({value!r:.40})", param=param)


def _column(value, dtype, param: str) -> np.ndarray:
    try:
        a = np.asarray(value)
        if a.dtype.kind not in "iub" and not (
            a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a))
        ):
            raise TypeError(f"dtype {a.dtype}")
        return np.ascontiguousarray(a, dtype=dtype).reshape(-1)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"Timeline column {param} must be a 1-D sequence of integers ({exc})", param=param) from None


class IketUnavailable(TxlabError):
    """NVIDIA's IKET runtime (run-iket and its pinned packages) is not installed; ``missing`` lists
    the requirement strings to install."""

    def __init__(self, message: str, missing: list[str]):
        self.missing = list(missing)
        super().__init__(message)


# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Track:
    """One timeline row: a (block, group) lane of CudaProfiler or an (SM, CTA, warp) of IKET.

    ``path`` are the display labels from outermost to innermost; ``fields`` are merged into each
    event dict of the track.
    """

    path: tuple
    fields: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"path": list(self.path), "fields": dict(self.fields)}


class _Events(Sequence):
    """Read-only sequence of event dicts over a Timeline's columns (built on access)."""

    def __init__(self, tl: "Timeline"):
        self._tl = tl

    def __len__(self):
        return len(self._tl.start_ns)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        tl = self._tl
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("event index out of range")
        ev = dict(tl.tracks[int(tl.track[i])].fields)
        ev["name"] = tl.names[int(tl.name_id[i])]
        ev["start_ns"] = int(tl.start_ns[i])
        ev["end_ns"] = int(tl.end_ns[i])
        if tl.kind[i] == KIND_INSTANT:
            ev["instant"] = True
        if tl.payload_type is not None and tl.payload_type[i]:
            ev["payload"] = decode_payload(int(tl.payload_type[i]), int(tl.payload_raw[i]))
        return ev

    def __repr__(self):
        return f"<{len(self)} timeline events>"


def decode_payload(ptype: int, raw: int):
    """The Python value of one IKET payload: ``raw`` (its 64 bits) read as
    ``IKET_PAYLOAD_TYPES[ptype]`` (32-bit types from the low word); unknown types stay ``raw``."""
    ptype = check_int(ptype, "ptype", lo=0, hi=255, fix="the IKET payload type code (IKET_PAYLOAD_TYPES)")
    raw = check_int(raw, "raw", lo=0, hi=(1 << 64) - 1, fix="the payload's 64 bits as an unsigned int")
    dtype = IKET_PAYLOAD_TYPES.get(ptype)
    if dtype is None:
        return raw
    if dtype == "bool":
        return bool(raw)
    width = np.dtype(dtype).itemsize
    bits = raw & ((1 << (8 * width)) - 1)
    return np.frombuffer(bits.to_bytes(width, "little"), dtype=dtype)[0].item()


class Timeline:
    """Events of one kernel launch, column-wise, sorted by (track, start).

    Columns (numpy, one entry per event): ``track`` (index into ``tracks``), ``name_id`` (index into
    ``names``), ``start_ns``/``end_ns`` (int64, ns from the earliest record), ``kind`` (0 range,
    1 instant) and, for IKET, ``payload_type``/``payload_raw``. ``warnings`` counts what the
    decoder had to skip or repair; ``meta`` says where the trace came from.
    """

    def __init__(
        self,
        *,
        names,
        tracks,
        track,
        name_id,
        start_ns,
        end_ns,
        kind,
        payload_type=None,
        payload_raw=None,
        warnings=None,
        meta=None,
        t0_ns=0,
    ):
        self.names = [str(n) for n in names]
        self.tracks = list(tracks)
        if not all(isinstance(t, Track) for t in self.tracks):
            raise InputError("Timeline tracks must be Track objects", param="tracks")
        track = _column(track, np.int32, "track")
        start_ns = _column(start_ns, np.int64, "start_ns")
        cols = {
            "name_id": _column(name_id, np.int32, "name_id"),
            "end_ns": _column(end_ns, np.int64, "end_ns"),
            "kind": _column(kind, np.uint8, "kind"),
        }
        if payload_type is not None:
            cols["payload_type"] = _column(payload_type, np.uint8, "payload_type")
            cols["payload_raw"] = _column(
                payload_raw if payload_raw is not None else np.zeros(len(track), np.uint64), np.uint64, "payload_raw"
            )
        n = len(track)
        for param, col in (("start_ns", start_ns), *cols.items()):
            if len(col) != n:
                raise InputError(
                    f"Timeline column {param} has {len(col)} entries, track has {n}: every "
                    "column needs one entry per event",
                    param=param,
                )
        if n:
            if track.min() < 0 or track.max() >= len(self.tracks):
                raise InputError(
                    f"Timeline column track holds ids {int(track.min())}..{int(track.max())}; "
                    f"there are {len(self.tracks)} tracks",
                    param="track",
                )
            nid = cols["name_id"]
            if nid.min() < 0 or nid.max() >= len(self.names):
                raise InputError(
                    f"Timeline column name_id holds ids {int(nid.min())}..{int(nid.max())}; "
                    f"there are {len(self.names)} names",
                    param="name_id",
                )
        # sorted by (track, start), stable; decoders that already emit that order skip the sort
        if n < 2 or (
            np.all(track[1:] >= track[:-1]) and np.all((start_ns[1:] >= start_ns[:-1]) | (track[1:] != track[:-1]))
        ):
            order = None
        elif start_ns.min() >= 0 and start_ns.max() < (1 << 40):
            order = np.argsort(track.astype(np.int64) << 40 | start_ns, kind="stable")
        else:
            order = np.lexsort((start_ns, track))
        pick = (lambda a: a) if order is None else (lambda a: a[order])  # noqa: E731
        self.track = pick(track)
        self.start_ns = pick(start_ns)
        self.name_id = pick(cols["name_id"])
        self.end_ns = pick(cols["end_ns"])
        self.kind = pick(cols["kind"])
        self.payload_type = pick(cols["payload_type"]) if "payload_type" in cols else None
        self.payload_raw = pick(cols["payload_raw"]) if "payload_raw" in cols else None
        self.warnings = Counter(warnings or {})
        self.meta = dict(meta or {})
        self.t0_ns = int(t0_ns)

    # -- access ---------------------------------------------------------------------------------
    @property
    def events(self) -> Sequence:
        """Event dicts ``{block, group, name, start_ns, end_ns}`` (+ ``sm``/``cta``/``warp`` and
        ``payload`` for IKET; instants have ``end_ns == start_ns`` and ``instant: True``)."""
        return _Events(self)

    def __len__(self):
        return len(self.start_ns)

    @property
    def duration_ns(self) -> int:
        return int(self.end_ns.max() - self.start_ns.min()) if len(self) else 0

    @property
    def provenance(self) -> str:
        return str(self.meta.get("provenance", self.meta.get("source", "")))

    @property
    def clock_unit(self) -> str:
        """What the ``*_ns`` columns count: ``"ns"`` for a GPU recording; a timeline of a run on the
        CPU emulator (:func:`txlab.timeline.emulate`) counts emulated work, ``"warp-instr"``, which
        orders events and measures work done in between but is not time."""
        return str(self.meta.get("clock_unit") or "ns")

    @property
    def emulated(self) -> bool:
        return self.clock_unit != "ns"

    def __repr__(self):
        warn = f", {sum(self.warnings.values())} warnings" if self.warnings else ""
        return (
            f"<Timeline {self.meta.get('source', '?')}: {len(self)} events on {len(self.tracks)} "
            f"tracks, {len(self.names)} names, {self.duration_ns} {self.clock_unit}{warn}>"
        )

    # -- analysis -------------------------------------------------------------------------------
    def summary(self) -> "TimelineSummary":
        """Per-event count, total, mean, p50 and p90 duration (ns), per track and overall."""
        rows = []
        dur = self.end_ns - self.start_ns
        if len(self):
            # overall: group by name
            for scope, keys in (
                ("lane", self.track.astype(np.int64) * (1 << 20) + self.name_id),
                ("overall", self.name_id.astype(np.int64)),
            ):
                order = np.argsort(keys, kind="stable")
                k = keys[order]
                d = dur[order]
                inst = self.kind[order] == KIND_INSTANT
                bounds = np.flatnonzero(np.diff(k)) + 1
                starts = np.concatenate([[0], bounds])
                ends = np.concatenate([bounds, [len(k)]])
                for s, e in zip(starts, ends):
                    key = int(k[s])
                    seg = d[s:e]
                    name = self.names[key & ((1 << 20) - 1)] if scope == "lane" else self.names[key]
                    lane = self.tracks[key >> 20].path if scope == "lane" else ()
                    p50, p90 = np.percentile(seg, [50, 90])
                    rows.append(
                        {
                            "scope": scope,
                            "lane": " / ".join(map(str, lane)),
                            "name": name,
                            "count": int(e - s),
                            "instants": int(inst[s:e].sum()),
                            "total_ns": int(seg.sum()),
                            "mean_ns": float(seg.mean()),
                            "p50_ns": float(p50),
                            "p90_ns": float(p90),
                        }
                    )
        return TimelineSummary(rows, dict(self.warnings), self.clock_unit)

    # -- export ---------------------------------------------------------------------------------
    def to_dict(self, max_events: int | None = 10_000) -> dict:
        """JSON-able description; events are column lists, truncated to ``max_events``."""
        if max_events is not None:
            max_events = check_int(max_events, "max_events", lo=0, fix="or None for every event")
        n = len(self) if max_events is None else min(len(self), max_events)
        d = {
            "source": self.meta.get("source"),
            "meta": _jsonable(self.meta),
            "names": self.names,
            "tracks": [t.to_dict() for t in self.tracks],
            "num_events": len(self),
            "duration_ns": self.duration_ns,
            "t0_ns": self.t0_ns,
            "warnings": dict(self.warnings),
            "events": {
                "track": self.track[:n].tolist(),
                "name": self.name_id[:n].tolist(),
                "start_ns": self.start_ns[:n].tolist(),
                "end_ns": self.end_ns[:n].tolist(),
                "kind": self.kind[:n].tolist(),
            },
            "truncated": n < len(self),
        }
        return d

    def to_perfetto(self, path) -> Path:
        """Write Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing): one process
        per block (IKET: per SM/CTA), one thread per group (IKET: per warp). Streams to disk.

        The file is strict JSON (RFC 8259): a payload or ``meta`` value that is NaN or ±infinity,
        which JSON cannot hold, is written as the string ``"NaN"``, ``"Infinity"`` or
        ``"-Infinity"`` (the spelling Python's and JavaScript's parsers use for those numbers)."""
        try:
            path = resolve_path(path, "Perfetto output")
        except FileReadError as exc:
            raise InputError(f"{exc} (to_perfetto's path)", param="path") from None
        groups: dict[tuple, int] = {}
        pid_of, tid_of = [], []
        threads_in: Counter = Counter()
        for t in self.tracks:
            outer = tuple(t.path[:-1]) or ("kernel",)
            pid = groups.setdefault(outer, len(groups) + 1)
            pid_of.append(pid)
            threads_in[pid] += 1
            tid_of.append(threads_in[pid])
        qnames = [json.dumps(n) for n in self.names]
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"displayTimeUnit":"ns","otherData":')
            f.write(json.dumps(_jsonable({"txlab": self.meta.get("source"), **self.meta}), allow_nan=False))
            f.write(',"traceEvents":[\n')
            first = True
            for outer, pid in groups.items():
                f.write(
                    ("" if first else ",\n")
                    + json.dumps(
                        {
                            "ph": "M",
                            "name": "process_name",
                            "pid": pid,
                            "tid": 0,
                            "args": {"name": " / ".join(map(str, outer))},
                        }
                    )
                )
                f.write(
                    ",\n"
                    + json.dumps(
                        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}}
                    )
                )
                first = False
            for i, t in enumerate(self.tracks):
                f.write(
                    ",\n"
                    + json.dumps(
                        {
                            "ph": "M",
                            "name": "thread_name",
                            "pid": pid_of[i],
                            "tid": tid_of[i],
                            "args": {"name": str(t.path[-1])},
                        }
                    )
                )
            pid_a = np.asarray(pid_of, np.int64)[self.track] if len(self) else np.zeros(0, np.int64)
            tid_a = np.asarray(tid_of, np.int64)[self.track] if len(self) else np.zeros(0, np.int64)
            chunk = 65536
            for s in range(0, len(self), chunk):
                e = min(len(self), s + chunk)
                parts = []
                for i in range(s, e):
                    ts = int(self.start_ns[i])
                    nm = qnames[self.name_id[i]]
                    args = ""
                    if self.payload_type is not None and self.payload_type[i]:
                        args = ',"args":{"payload":%s}' % json.dumps(
                            _jsonable(decode_payload(int(self.payload_type[i]), int(self.payload_raw[i]))),
                            allow_nan=False,
                        )
                    if self.kind[i] == KIND_INSTANT:
                        parts.append(
                            '{"ph":"i","s":"t","name":%s,"pid":%d,"tid":%d,"ts":%d.%03d%s}'
                            % (nm, pid_a[i], tid_a[i], ts // 1000, ts % 1000, args)
                        )
                    else:
                        du = int(self.end_ns[i]) - ts
                        parts.append(
                            '{"ph":"X","name":%s,"pid":%d,"tid":%d,"ts":%d.%03d,"dur":%d.%03d%s}'
                            % (nm, pid_a[i], tid_a[i], ts // 1000, ts % 1000, du // 1000, du % 1000, args)
                        )
                f.write(",\n" + ",\n".join(parts))
            f.write("\n]}\n")
        return path

    def plot(self, ax=None, *, max_tracks: int = 64, columns: int = 2000):
        """Static matplotlib Gantt chart (tracks as rows, colour per event name). Large traces are
        drawn at ``columns`` horizontal resolution (one bar per occupied column and name).
        Returns the matplotlib Figure (drawn on ``ax`` when given)."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch

        max_tracks = check_int(max_tracks, "max_tracks", lo=1)
        columns = check_int(columns, "columns", lo=1, hi=1 << 20)
        ntr = min(len(self.tracks), max_tracks)
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 0.35 * ntr + 1.2))
        cmap = plt.get_cmap("tab20")
        colors = [cmap(i % 20) for i in range(len(self.names))]
        t_end = max(self.duration_ns, 1)
        scale, unit = (1e3, "µs") if t_end < 5e6 else (1e6, "ms")
        if self.emulated:  # emulated work, not time: never scaled to µs
            scale, unit = 1, self.clock_unit
        sel = self.track < ntr
        tr, nm = self.track[sel], self.name_id[sel]
        st, en = self.start_ns[sel], self.end_ns[sel]
        t_min = int(self.start_ns.min()) if len(self) else 0
        if len(st) > 20_000:  # pixel-level aggregation: one bar per (track, name, column)
            w = t_end / columns
            col = ((st - t_min) / w).astype(np.int64)
            key = np.unique((tr.astype(np.int64) * len(self.names) + nm) * (columns + 1) + col)
            col_u = key % (columns + 1)
            tn = key // (columns + 1)
            tr, nm = tn // len(self.names), tn % len(self.names)
            st = t_min + col_u * w
            en = st + w
        # one broken_barh per (name, track): group by one sort (not a mask per pair: O(names*tracks*n))
        key = nm.astype(np.int64) * max(ntr, 1) + tr
        order = np.argsort(key, kind="stable")
        key, left = key[order], (st[order] - t_min) / scale
        width = np.maximum(en[order] - st[order], t_end * 2e-4) / scale
        cuts = np.flatnonzero(np.diff(key)) + 1
        for lo, hi in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(key)]])):
            if lo == hi:
                continue
            n, r = divmod(int(key[lo]), max(ntr, 1))
            ax.broken_barh(
                list(zip(left[lo:hi], width[lo:hi])),
                (r - 0.4, 0.8),
                facecolor=colors[n],
                edgecolor="white",
                linewidth=0.4,
            )
        ax.set_yticks(range(ntr))
        ax.set_yticklabels([" / ".join(map(str, t.path)) for t in self.tracks[:ntr]], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"emulated work ({unit}, from the CPU emulator: not time)" if self.emulated else f"time ({unit})")
        title = self.meta.get("title") or self.meta.get("kernel") or "in-kernel timeline"
        if self.meta.get("synthetic"):
            title += "  [SYNTHETIC]"
        if self.emulated:
            title += "  [EMULATED]"
        ax.set_title(title)
        ax.legend(
            handles=[Patch(color=colors[i], label=n) for i, n in enumerate(self.names)],
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=8,
            frameon=False,
        )
        return ax.figure

    def view(self, **kwargs):
        """The interactive widget of this timeline (:class:`txlab.views.TimelineView`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)


@dataclass
class TimelineSummary:
    """Rows of per-lane and overall statistics, in the timeline's ``unit`` (its ``clock_unit``: ns for a GPU
    recording, emulated warp-instructions for a run on the CPU; the rows' keys say ``_ns`` either way).
    ``str()`` gives a fixed-width table whose headers name the unit."""

    rows: list
    warnings: dict
    unit: str = "ns"

    def to_dict(self) -> dict:
        return {"rows": self.rows, "warnings": self.warnings, "unit": self.unit}

    def overall(self) -> dict:
        """``{name: row}`` over all lanes."""
        return {r["name"]: r for r in self.rows if r["scope"] == "overall"}

    def lane(self, lane: str) -> dict:
        return {r["name"]: r for r in self.rows if r["scope"] == "lane" and r["lane"] == lane}

    def _table(self, max_rows=60):
        total = f"total {self.unit}"
        w = max(12, len(total))
        hdr = f"{'scope':8} {'lane':24} {'event':20} {'count':>8} {total:>{w}} {'mean':>10} {'p50':>10} {'p90':>10}"
        lines = [hdr]
        rows = [r for r in self.rows if r["scope"] == "overall"] + [r for r in self.rows if r["scope"] == "lane"]
        for r in rows[:max_rows]:
            lines.append(
                f"{r['scope']:8} {r['lane'][:24]:24} {r['name'][:20]:20} {r['count']:>8} "
                f"{r['total_ns']:>{w}} {r['mean_ns']:>10.1f} {r['p50_ns']:>10.1f} {r['p90_ns']:>10.1f}"
            )
        if len(rows) > max_rows:
            lines.append(f"... {len(rows) - max_rows} more rows (see .rows)")
        if self.warnings:
            lines.append("warnings: " + ", ".join(f"{k}={v}" for k, v in sorted(self.warnings.items())))
        return lines

    def __str__(self):
        return "\n".join(self._table())


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isfinite(x):
            return x
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    return str(obj)
