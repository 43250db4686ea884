"""In-kernel timelines: where the time goes inside one kernel launch.

Two tracers feed one model, :class:`Timeline`:

* TVM's ``CudaProfiler`` (``T.cuda.timer_*``): a zeroed ``uint64`` buffer the kernel fills.
  :func:`from_cuda_profiler` decodes it (numpy only; no torch, no triton).
* NVIDIA IKET (``T.cuda.iket.*`` captured by ``run-iket``): :func:`load_iket` reads its JSON
  trace or an ``IketProfileResult``.

CudaProfiler wire format (TVM ``docs/tirx/native_basics/cuda/profiling.rst`` and
``tvm/backend/cuda/cpp/instrument.py``)::

    slot 0          header  = (num_groups << 32) | num_blocks      (block 0, thread 0)
    slot 1 + lane + k * write_stride                               (lane = block * num_groups + group)
    record          (globaltimer_lo << 32) | (lane << 12) | (event << 2) | type
    type            0 start, 1 end, 2 instant, 3 finalize; 0 means "empty slot"
                    (so a start of event 0 in lane 0 stamped exactly at globaltimer_lo == 0 is lost:
                    a 1-in-2**32 ambiguity of the format itself)

Timestamps are the low 32 bits of ``%globaltimer`` (ns); they wrap every 2**32 ns and are unwrapped
here. Events are stored column-wise (numpy), so a million records stay cheap; ``Timeline.events``
is a read-only sequence that builds each event dict on access.

Decoding never executes anything from a trace; JSON is parsed with ``json`` under size caps.
Run ``python -m txlab.timeline --help`` for the commands that (re)generate the saved traces.
"""
from __future__ import annotations

import json
import math
import os
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from txlab.errors import TxlabError

__all__ = [
    "Timeline", "Track", "TimelineSummary", "TraceError", "IketUnavailable",
    "from_cuda_profiler", "encode_cuda_profiler", "synthetic_cuda_profiler", "load_iket",
    "record", "iket_profile", "iket_requirements", "saved", "example_kernel",
]

_MASK32 = np.uint64(0xFFFFFFFF)
_TYPE_START, _TYPE_END, _TYPE_INSTANT, _TYPE_FINALIZE = 0, 1, 2, 3
_MAX_EVENT_ID = 0x3FF            # 10 bits in the tag
_MAX_LANES = 1 << 20             # 20 bits of lane in the 32-bit tag
KIND_RANGE, KIND_INSTANT = 0, 1

# IKET payload types as observed in run-iket 4.6.0 traces (tests/python/tirx/iket in TVM).
_IKET_PAYLOAD_TYPES = {2: "bool", 5: "int32", 7: "int64", 13: "float32", 14: "float64"}


class TraceError(TxlabError, ValueError):
    """A trace cannot be decoded. The message names what is wrong and how to get a good trace."""


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
            ev["payload"] = _decode_payload(int(tl.payload_type[i]), int(tl.payload_raw[i]))
        return ev

    def __repr__(self):
        return f"<{len(self)} timeline events>"


def _decode_payload(ptype: int, raw: int):
    if ptype == 2:
        return bool(raw)
    if ptype == 5:
        raw &= 0xFFFFFFFF
        return raw - (1 << 32) if raw >= 1 << 31 else raw
    if ptype == 7:
        raw &= (1 << 64) - 1
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if ptype == 13:
        return struct.unpack("<f", struct.pack("<I", raw & 0xFFFFFFFF))[0]
    if ptype == 14:
        return struct.unpack("<d", struct.pack("<Q", raw & ((1 << 64) - 1)))[0]
    return raw


class Timeline:
    """Events of one kernel launch, column-wise, sorted by (track, start).

    Columns (numpy, one entry per event): ``track`` (index into ``tracks``), ``name_id`` (index into
    ``names``), ``start_ns``/``end_ns`` (int64, ns from the earliest record), ``kind`` (0 range,
    1 instant) and, for IKET, ``payload_type``/``payload_raw``. ``warnings`` counts what the
    decoder had to skip or repair; ``meta`` says where the trace came from.
    """

    def __init__(self, *, names, tracks, track, name_id, start_ns, end_ns, kind,
                 payload_type=None, payload_raw=None, warnings=None, meta=None, t0_ns=0):
        self.names = list(names)
        self.tracks = list(tracks)
        track = np.asarray(track, dtype=np.int32)
        start_ns = np.asarray(start_ns, dtype=np.int64)
        if len(track) == 0:
            order = np.zeros(0, np.int64)
        elif start_ns.min() >= 0 and start_ns.max() < (1 << 40) and track.min() >= 0:
            order = np.argsort(track.astype(np.int64) << 40 | start_ns, kind="stable")
        else:
            order = np.lexsort((start_ns, track))
        self.track = track[order]
        self.name_id = np.asarray(name_id, dtype=np.int32)[order]
        self.start_ns = start_ns[order]
        self.end_ns = np.asarray(end_ns, dtype=np.int64)[order]
        self.kind = np.asarray(kind, dtype=np.uint8)[order]
        self.payload_type = None if payload_type is None else np.asarray(payload_type, np.uint8)[order]
        self.payload_raw = None if payload_raw is None else np.asarray(payload_raw, np.uint64)[order]
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

    def __repr__(self):
        warn = f", {sum(self.warnings.values())} warnings" if self.warnings else ""
        return (f"<Timeline {self.meta.get('source', '?')}: {len(self)} events on {len(self.tracks)} "
                f"tracks, {len(self.names)} names, {self.duration_ns} ns{warn}>")

    # -- analysis -------------------------------------------------------------------------------
    def summary(self) -> "TimelineSummary":
        """Per-event count, total, mean, p50 and p90 duration (ns), per track and overall."""
        rows = []
        dur = self.end_ns - self.start_ns
        if len(self):
            # overall: group by name
            for scope, keys in (("lane", self.track.astype(np.int64) * (1 << 20) + self.name_id),
                                ("overall", self.name_id.astype(np.int64))):
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
                    rows.append({
                        "scope": scope, "lane": " / ".join(map(str, lane)), "name": name,
                        "count": int(e - s), "instants": int(inst[s:e].sum()),
                        "total_ns": int(seg.sum()), "mean_ns": float(seg.mean()),
                        "p50_ns": float(p50), "p90_ns": float(p90),
                    })
        return TimelineSummary(rows, dict(self.warnings))

    # -- export ---------------------------------------------------------------------------------
    def to_dict(self, max_events: int | None = 10_000) -> dict:
        """JSON-able description; events are column lists, truncated to ``max_events``."""
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
                "track": self.track[:n].tolist(), "name": self.name_id[:n].tolist(),
                "start_ns": self.start_ns[:n].tolist(), "end_ns": self.end_ns[:n].tolist(),
                "kind": self.kind[:n].tolist(),
            },
            "truncated": n < len(self),
        }
        return d

    def to_perfetto(self, path) -> Path:
        """Write Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing): one process
        per block (IKET: per SM/CTA), one thread per group (IKET: per warp). Streams to disk."""
        path = Path(path)
        groups: dict[tuple, int] = {}
        pid_of, tid_of = [], []
        for t in self.tracks:
            outer = tuple(t.path[:-1]) or ("kernel",)
            pid = groups.setdefault(outer, len(groups) + 1)
            pid_of.append(pid)
            tid_of.append(sum(1 for p in pid_of if p == pid))
        qnames = [json.dumps(n) for n in self.names]
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"displayTimeUnit":"ns","otherData":')
            f.write(json.dumps(_jsonable({"txlab": self.meta.get("source"), **self.meta})))
            f.write(',"traceEvents":[\n')
            first = True
            for outer, pid in groups.items():
                f.write(("" if first else ",\n") + json.dumps(
                    {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                     "args": {"name": " / ".join(map(str, outer))}}))
                f.write(",\n" + json.dumps({"ph": "M", "name": "process_sort_index", "pid": pid,
                                            "tid": 0, "args": {"sort_index": pid}}))
                first = False
            for i, t in enumerate(self.tracks):
                f.write(",\n" + json.dumps({"ph": "M", "name": "thread_name", "pid": pid_of[i],
                                            "tid": tid_of[i], "args": {"name": str(t.path[-1])}}))
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
                            _decode_payload(int(self.payload_type[i]), int(self.payload_raw[i])))
                    if self.kind[i] == KIND_INSTANT:
                        parts.append('{"ph":"i","s":"t","name":%s,"pid":%d,"tid":%d,"ts":%d.%03d%s}'
                                     % (nm, pid_a[i], tid_a[i], ts // 1000, ts % 1000, args))
                    else:
                        du = int(self.end_ns[i]) - ts
                        parts.append('{"ph":"X","name":%s,"pid":%d,"tid":%d,"ts":%d.%03d,"dur":%d.%03d%s}'
                                     % (nm, pid_a[i], tid_a[i], ts // 1000, ts % 1000,
                                        du // 1000, du % 1000, args))
                f.write(",\n" + ",\n".join(parts))
            f.write("\n]}\n")
        return path

    def plot(self, ax=None, *, max_tracks: int = 64, columns: int = 2000):
        """Static matplotlib Gantt chart (tracks as rows, colour per event name). Large traces are
        drawn at ``columns`` horizontal resolution (one bar per occupied column and name)."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch

        ntr = min(len(self.tracks), max_tracks)
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 0.35 * ntr + 1.2))
        cmap = plt.get_cmap("tab20")
        colors = [cmap(i % 20) for i in range(len(self.names))]
        t_end = max(self.duration_ns, 1)
        scale, unit = (1e3, "µs") if t_end < 5e6 else (1e6, "ms")
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
        for n in np.unique(nm):
            m = nm == n
            for r in np.unique(tr[m]):
                mm = m & (tr == r)
                spans = list(zip((st[mm] - t_min) / scale, np.maximum(en[mm] - st[mm], t_end * 2e-4) / scale))
                ax.broken_barh(spans, (r - 0.4, 0.8), facecolor=colors[n], edgecolor="white", linewidth=0.4)
        ax.set_yticks(range(ntr))
        ax.set_yticklabels([" / ".join(map(str, t.path)) for t in self.tracks[:ntr]], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"time ({unit})")
        title = self.meta.get("title") or self.meta.get("kernel") or "in-kernel timeline"
        if self.meta.get("synthetic"):
            title += "  [SYNTHETIC]"
        ax.set_title(title)
        ax.legend(handles=[Patch(color=colors[i], label=n) for i, n in enumerate(self.names)],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return ax

    def view(self, **kwargs):
        """The interactive :class:`txlab.views.timeline.TimelineView` of this timeline."""
        from txlab.views.timeline import TimelineView

        return TimelineView(self, **kwargs)

    def _repr_html_(self):
        from html import escape

        w = ", ".join(f"{escape(k)}: {v}" for k, v in sorted(self.warnings.items()))
        return (f"<div><b>Timeline</b> ({escape(str(self.meta.get('source', '')))}): {len(self)} events, "
                f"{len(self.tracks)} tracks, {self.duration_ns} ns"
                + (f"<br><i>{escape(self.provenance)}</i>" if self.provenance else "")
                + (f"<br>warnings: {w}" if w else "") + "</div>")


@dataclass
class TimelineSummary:
    """Rows of per-lane and overall statistics (ns). ``str()`` gives a fixed-width table."""

    rows: list
    warnings: dict

    def to_dict(self) -> dict:
        return {"rows": self.rows, "warnings": self.warnings}

    def overall(self) -> dict:
        """``{name: row}`` over all lanes."""
        return {r["name"]: r for r in self.rows if r["scope"] == "overall"}

    def lane(self, lane: str) -> dict:
        return {r["name"]: r for r in self.rows if r["scope"] == "lane" and r["lane"] == lane}

    def _table(self, max_rows=60):
        hdr = f"{'scope':8} {'lane':24} {'event':20} {'count':>8} {'total ns':>12} {'mean':>10} {'p50':>10} {'p90':>10}"
        lines = [hdr]
        rows = [r for r in self.rows if r["scope"] == "overall"] + [r for r in self.rows if r["scope"] == "lane"]
        for r in rows[:max_rows]:
            lines.append(f"{r['scope']:8} {r['lane'][:24]:24} {r['name'][:20]:20} {r['count']:>8} "
                         f"{r['total_ns']:>12} {r['mean_ns']:>10.1f} {r['p50_ns']:>10.1f} {r['p90_ns']:>10.1f}")
        if len(rows) > max_rows:
            lines.append(f"... {len(rows) - max_rows} more rows (see .rows)")
        if self.warnings:
            lines.append("warnings: " + ", ".join(f"{k}={v}" for k, v in sorted(self.warnings.items())))
        return lines

    def __str__(self):
        return "\n".join(self._table())

    def _repr_html_(self):
        from html import escape

        return "<pre>" + escape(str(self)) + "</pre>"


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


# --------------------------------------------------------------------------------------------
# CudaProfiler
# --------------------------------------------------------------------------------------------
def _event_names(events) -> list:
    if events is None:
        return []
    if isinstance(events, type) and issubclass(events, Enum):
        members = list(events)
        vals = [m.value for m in members]
        if not all(isinstance(v, int) and 0 <= v <= _MAX_EVENT_ID for v in vals):
            raise TraceError(f"event enum {events.__name__} must have int values in 0..{_MAX_EVENT_ID}")
        names = [None] * (max(vals) + 1 if vals else 0)
        for m in members:
            names[m.value] = m.name
        return [n if n is not None else f"event_{i}" for i, n in enumerate(names)]
    if isinstance(events, (str, bytes)):
        raise TraceError("event_names must be a list of names indexed by event id, not one string")
    names = [str(n) for n in events]
    if len(names) > _MAX_EVENT_ID + 1:
        raise TraceError(f"{len(names)} event names given; the tag holds ids 0..{_MAX_EVENT_ID}")
    return names


def _as_uint64(buffer) -> np.ndarray:
    if isinstance(buffer, (str, os.PathLike)):
        p = Path(buffer)
        if p.suffix == ".npy":
            buffer = np.load(p, allow_pickle=False)
        else:
            buffer = p.read_bytes()
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        mv = memoryview(buffer).cast("B")
        if len(mv) % 8:
            raise TraceError(f"profiler buffer is {len(mv)} bytes, not a multiple of 8: it is truncated "
                             "(copy the whole uint64 buffer back from the device)")
        return np.frombuffer(mv, dtype="<u8")
    if not isinstance(buffer, np.ndarray):
        if hasattr(buffer, "numpy"):        # tvm.runtime.Tensor, or a CPU torch tensor
            if hasattr(buffer, "cpu") and not hasattr(buffer, "asnumpy"):
                buffer = buffer.cpu()
            buffer = buffer.numpy()
        elif hasattr(buffer, "__dlpack__"):
            buffer = np.from_dlpack(buffer)
        else:
            buffer = np.asarray(buffer)
    a = np.asarray(buffer)
    if a.ndim != 1:
        a = a.reshape(-1)
    if a.dtype == np.uint64:
        return a
    if a.dtype == np.int64:
        return a.view(np.uint64)
    if a.dtype.kind in "iu" or a.dtype == object:
        try:
            return a.astype(np.uint64)
        except (OverflowError, TypeError, ValueError) as exc:
            raise TraceError(f"profiler buffer values do not fit in uint64: {exc}") from None
    raise TraceError(f"profiler buffer has dtype {a.dtype}; CudaProfiler writes uint64 "
                     "(T.match_buffer(prof, (n,), \"uint64\"))")


def _unwrap_global_base(ts: np.ndarray) -> int:
    """The 32-bit timestamp where the trace starts: just after the largest circular gap."""
    u = np.sort(ts)
    if int(u[0]) == int(u[-1]):
        return int(u[0])
    gaps = np.diff(u.astype(np.int64))
    wrap_gap = int(u[0]) + (1 << 32) - int(u[-1])
    i = int(np.argmax(gaps))
    return int(u[0]) if wrap_gap >= gaps[i] else int(u[i + 1])


def from_cuda_profiler(buffer, event_names=None, *, strict: bool = False,
                       num_groups: int | None = None, num_blocks: int | None = None,
                       meta: dict | None = None) -> Timeline:
    """Decode a CudaProfiler buffer (numpy uint64, bytes, a path to .npy/.bin, or a tensor).

    ``event_names`` is a list indexed by event id or the ``Enum`` used in the kernel. Problems that
    leave the rest of the trace usable (unknown ids, unmatched start/end, records after finalize,
    lanes out of the header's grid, lanes that ran out of buffer) are counted in
    ``Timeline.warnings``; ``strict=True`` turns them into :class:`TraceError`. A missing header is
    an error unless ``num_groups`` (and ``num_blocks``) are given.
    """
    names = _event_names(event_names)
    buf = _as_uint64(buffer)
    if len(buf) == 0:
        raise TraceError("profiler buffer is empty")
    warnings: Counter = Counter()
    header = int(buf[0])
    if header == 0:
        if num_groups is None:
            raise TraceError(
                "slot 0 (the header) is 0: the kernel never called CudaProfiler.init from block 0 "
                "thread 0, or the buffer was not the one the kernel wrote. Zero the buffer before the "
                "launch and call p.init(group_id) on every thread, or pass num_groups= to decode anyway.")
        hdr_groups, hdr_blocks = int(num_groups), int(num_blocks or 0)
        warnings["header missing (num_groups given)"] += 1
    else:
        hdr_blocks, hdr_groups = header & 0xFFFFFFFF, header >> 32
        if num_groups is not None and int(num_groups) != hdr_groups:
            raise TraceError(f"header says num_groups={hdr_groups}, caller says {num_groups}")
    if hdr_groups < 1 or (hdr_blocks and hdr_blocks * hdr_groups > _MAX_LANES) or hdr_groups > _MAX_LANES:
        raise TraceError(f"header slot 0 = {header:#018x} decodes to num_blocks={hdr_blocks}, "
                         f"num_groups={hdr_groups}, which is not a CudaProfiler header "
                         f"(lanes must be 1..{_MAX_LANES}); is this the profiler buffer?")
    body = buf[1:]
    slot = np.flatnonzero(body)
    words = body[slot]
    slot = slot + 1
    ts = (words >> np.uint64(32)).astype(np.uint32)
    tag = (words & _MASK32).astype(np.uint32)
    lane = (tag >> 12).astype(np.int64)
    ev = ((tag >> 2) & _MAX_EVENT_ID).astype(np.int32)
    typ = (tag & 3).astype(np.uint8)

    if hdr_blocks:
        bad = lane >= hdr_blocks * hdr_groups
        if bad.any():
            warnings["records from lanes outside the header's grid (dropped)"] += int(bad.sum())
            keep = ~bad
            slot, ts, lane, ev, typ = slot[keep], ts[keep], lane[keep], ev[keep], typ[keep]

    # records in write order within each lane: slots ascend, so a stable sort by lane suffices
    order = np.argsort(lane, kind="stable")
    slot, ts, lane, ev, typ = slot[order], ts[order], lane[order], ev[order], typ[order]
    n = len(lane)
    new_lane = np.ones(n, bool)
    if n:
        new_lane[1:] = lane[1:] != lane[:-1]
    lane_start = np.flatnonzero(new_lane)
    lane_ids = lane[lane_start]
    lane_len = np.diff(np.append(lane_start, n))

    # write stride from slot spacing; check every record sits on its lane's arithmetic progression
    stride = None
    if n:
        ds = np.diff(slot)[~new_lane[1:]]
        if len(ds):
            stride = int(ds.min())
            off = slot - 1 - lane
            if (off < 0).any() or (off % max(stride, 1)).any() or (ds != stride).any():
                warnings["records off their lane's slot sequence (two leaders in one lane, or "
                         "write_stride smaller than num_blocks*num_groups)"] += 1
                if strict:
                    raise TraceError("lanes overlap in the buffer: write_stride must be >= "
                                     "num_blocks*num_groups and each (block, group) needs exactly one leader")

    # drop records after each lane's first finalize
    is_fin = typ == _TYPE_FINALIZE
    fin_before = np.cumsum(is_fin) - is_fin  # finalize records strictly before, global
    fin_before = fin_before - np.repeat(fin_before[lane_start] if n else fin_before[:0], lane_len)
    after = fin_before > 0
    if after.any():
        warnings["records after finalize (ignored)"] += int(after.sum())
        if strict:
            raise TraceError("records after a lane's finalize")
    finalized_lanes = set(lane[is_fin & ~after].tolist())
    # truncation: a lane that did not finalize and whose next slot is past the end ran out of buffer
    if n:
        last = np.append(lane_start[1:], n) - 1
        unfinished = np.array([lid not in finalized_lanes for lid in lane_ids.tolist()], bool)
        if unfinished.any():
            warnings["lanes without finalize"] += int(unfinished.sum())
            if stride is not None:
                full = unfinished & (slot[last] + stride >= len(buf))
                if full.any():
                    warnings["lanes that ran out of buffer (trace truncated)"] += int(full.sum())
                    if strict:
                        need = int(slot[last].max() + stride * 4)
                        raise TraceError(f"{int(full.sum())} lanes ran out of buffer: allocate more slots "
                                         f"(at least {need}, better 2x the records per lane times write_stride)")

    # unwrap 32-bit timestamps: global base after the largest gap, then per-lane monotone deltas
    base = _unwrap_global_base(ts) if n else 0
    rel = (ts.astype(np.int64) - base) % (1 << 32)
    if n:
        d = np.empty(n, np.int64)
        d[0] = rel[0]
        d[1:] = (ts[1:].astype(np.int64) - ts[:-1].astype(np.int64)) % (1 << 32)
        d[lane_start] = rel[lane_start]
        c = np.cumsum(d)
        t = c - np.repeat(c[lane_start] - d[lane_start], lane_len)  # restart the sum at each lane
    else:
        t = rel

    keep = ~after & (typ != _TYPE_FINALIZE)
    slot, t, lane, ev, typ = slot[keep], t[keep], lane[keep], ev[keep], typ[keep]

    # names, unknown ids
    names = list(names)
    unknown = ev >= len(names)
    if unknown.any():
        ids = sorted(set(ev[unknown].tolist()))
        warnings["records with unknown event ids"] += int(unknown.sum())
        if strict:
            raise TraceError(f"event ids {ids} have no name (event_names has {len(names)} entries)")
        while len(names) <= max(ids):
            names.append(f"event_{len(names)}")

    # pair starts with ends per (lane, event) with stack semantics, vectorized
    idx_se = np.flatnonzero(typ <= _TYPE_END)
    key = lane[idx_se] * (_MAX_EVENT_ID + 1) + ev[idx_se]
    o = np.argsort(key * len(key) + np.arange(len(key)))   # stable by construction, radix-free
    idx_se, key = idx_se[o], key[o]
    ps, pe, unmatched_start, unmatched_end = _pair_brackets(key, typ[idx_se] == _TYPE_START)
    ps, pe = idx_se[ps], idx_se[pe]
    if unmatched_start:
        warnings["starts without an end (dropped)"] += unmatched_start
    if unmatched_end:
        warnings["ends without a start (dropped)"] += unmatched_end
    if strict and (unmatched_start or unmatched_end):
        raise TraceError(f"{unmatched_start} starts without end and {unmatched_end} ends without start")
    inst = np.flatnonzero(typ == _TYPE_INSTANT)
    all_lane = np.concatenate([lane[ps], lane[inst]])
    all_ev = np.concatenate([ev[ps], ev[inst]])
    all_s = np.concatenate([t[ps], t[inst]])
    all_e = np.concatenate([t[pe], t[inst]])
    all_k = np.concatenate([np.zeros(len(ps), np.uint8), np.ones(len(inst), np.uint8)])

    # tracks: only lanes that recorded something
    used = np.flatnonzero(np.bincount(all_lane)) if len(all_lane) else np.zeros(0, np.int64)
    remap = np.full(int(used.max()) + 1 if len(used) else 1, -1, np.int64)
    remap[used] = np.arange(len(used))
    g_ = hdr_groups
    tracks = [Track((f"block {int(u) // g_}", f"group {int(u) % g_}"),
                    {"block": int(u) // g_, "group": int(u) % g_}) for u in used]
    t_min = int(all_s.min()) if len(all_s) else 0
    info = {"source": "cudaprofiler", "num_blocks": hdr_blocks, "num_groups": hdr_groups,
            "write_stride": stride, "buffer_slots": int(len(buf)), "records": int(n),
            "lanes_recorded": int(len(lane_ids))}
    info.update(meta or {})
    return Timeline(names=names, tracks=tracks, track=remap[all_lane], name_id=all_ev,
                    start_ns=all_s - t_min, end_ns=all_e - t_min, kind=all_k, warnings=warnings,
                    meta=info, t0_ns=(base + t_min) % (1 << 32))


def _depth_after(gid, gs, glen, is_start):
    step = np.where(is_start, 1, -1).astype(np.int64)
    c = np.cumsum(step)
    return c - np.repeat(c[gs] - step[gs], glen)


def _pair_brackets(key, is_start):
    """Match starts with ends inside each run of equal ``key`` like brackets (the innermost open
    start takes the next end). Returns (start positions, end positions, #unmatched starts,
    #unmatched ends). O(n log n), no Python loop."""
    m = len(key)
    if m == 0:
        z = np.zeros(0, np.int64)
        return z, z, 0, 0

    def groups(k):
        first = np.ones(len(k), bool)
        first[1:] = k[1:] != k[:-1]
        gs = np.flatnonzero(first)
        return first, gs, np.diff(np.append(gs, len(k))), np.cumsum(first) - 1

    first, gs, glen, gid = groups(key)
    d = _depth_after(gid, gs, glen, is_start)
    big = np.int64(2 * m + 4)
    run_neg = np.maximum.accumulate(gid * big - d) - gid * big     # -(running min of depth)
    prev_neg = np.zeros(m, np.int64)
    prev_neg[1:] = run_neg[:-1]
    prev_neg[first] = 0
    prev_min = -np.maximum(prev_neg, 0)
    bad_end = ~is_start & (d < prev_min)                           # an end with nothing open
    keep = np.flatnonzero(~bad_end)
    k2, st2 = key[keep], is_start[keep]
    first, gs, glen, gid = groups(k2)
    d = _depth_after(gid, gs, glen, st2)
    level = np.where(st2, d, d + 1)
    n2 = np.int64(len(k2))
    if n2 <= 2_000_000:   # one int64 key (< n2**3 < 2**63) sorts faster than a 3-key lexsort
        o = np.argsort((gid * (level.max() + 1) + level) * n2 + np.arange(n2))
    else:
        o = np.lexsort((np.arange(n2), level, gid))
    st_o = st2[o]
    same = (gid[o][1:] == gid[o][:-1]) & (level[o][1:] == level[o][:-1])
    pair = st_o[:-1] & ~st_o[1:] & same
    j = np.flatnonzero(pair)
    s_pos, e_pos = keep[o[j]], keep[o[j + 1]]
    return s_pos, e_pos, int(st2.sum()) - len(j), int(bad_end.sum())


def encode_cuda_profiler(lanes: dict, num_blocks: int, num_groups: int, *, write_stride=None,
                         slots: int | None = None) -> np.ndarray:
    """Build a CudaProfiler buffer exactly as the device helpers write it.

    ``lanes`` maps ``(block, group)`` to a list of ``(timestamp_ns, event_id, type)`` records in
    write order (type 0 start, 1 end, 2 instant, 3 finalize); timestamps are taken mod 2**32 like
    ``%globaltimer_lo``. Used for synthetic traces and tests.
    """
    nl = num_blocks * num_groups
    stride = write_stride or nl
    if stride < nl:
        raise ValueError("write_stride must be >= num_blocks * num_groups")
    most = max((len(r) for r in lanes.values()), default=0)
    size = slots or (1 + nl + most * stride)
    buf = np.zeros(size, np.uint64)
    buf[0] = (num_groups << 32) | num_blocks
    for (b, g), recs in lanes.items():
        ln = b * num_groups + g
        if len(recs) == 0:
            continue
        r = np.asarray(recs, np.int64).reshape(-1, 3)
        pos = 1 + ln + np.arange(len(r)) * stride
        keep = pos < size
        tagv = (ln << 12) | ((r[:, 1] & _MAX_EVENT_ID) << 2) | (r[:, 2] & 3)
        word = ((r[:, 0] % (1 << 32)).astype(np.uint64) << np.uint64(32)) | tagv.astype(np.uint64)
        buf[pos[keep]] = word[keep]
    return buf


def synthetic_cuda_profiler(kind: str = "load_compute_store", *, num_blocks: int = 8, seed: int = 0,
                            t0: int = 0x7FFF_0000, tiles: int = 6) -> tuple[np.ndarray, list]:
    """A SYNTHETIC CudaProfiler buffer (not measured): plausible durations drawn from a seeded RNG,
    encoded with :func:`encode_cuda_profiler`. ``kind`` is ``load_compute_store`` (1 group per
    block) or ``warp_specialized`` (3 groups: producer, two consumers). Returns (buffer, names)."""
    rng = np.random.default_rng(seed)
    lanes = {}
    if kind == "load_compute_store":
        names = ["load", "compute", "store"]
        for b in range(num_blocks):
            t = t0 + int(rng.integers(0, 400))
            recs = []
            for e, mean in ((0, 96), (1, 8700), (2, 64)):
                recs.append((t, e, 0))
                t += int(max(32, rng.normal(mean, mean * 0.03)) // 32 * 32)
                recs.append((t, e, 1))
                t += 32
            recs.append((t, 0, 3))
            lanes[(b, 0)] = recs
        return encode_cuda_profiler(lanes, num_blocks, 1), names
    if kind == "warp_specialized":
        # Same structure as example_kernel("warp_specialized"): per stage k, group 0 loads tile k
        # (k < tiles), groups 1 and 2 compute tile k-1 (k > 0; group 2 twice the work), then all
        # three wait at a CTA barrier that releases when the last group arrives.
        names = ["load_tile", "wait", "compute", "store"]
        tick = lambda x: int(max(32, x) // 32 * 32)  # noqa: E731  (globaltimer granularity)
        for b in range(num_blocks):
            now = [t0 + int(rng.integers(0, 400))] * 3
            recs = {0: [], 1: [], 2: []}
            for k in range(tiles + 1):
                for g in range(3):
                    if g == 0 and k < tiles:
                        recs[0].append((now[0], 0, 0))
                        now[0] += tick(rng.normal(640, 30))
                        recs[0].append((now[0], 0, 1))
                    elif g > 0 and k > 0:
                        recs[g].append((now[g], 2, 0))
                        now[g] += tick(rng.normal(1100 * g, 30 * g))
                        recs[g].append((now[g], 2, 1))
                    recs[g].append((now[g], 1, 0))
                release = max(now) + 32
                for g in range(3):
                    now[g] = release + tick(rng.normal(32, 10)) - 32
                    recs[g].append((now[g], 1, 1))
            for g in (1, 2):
                recs[g].append((now[g], 3, 0))
                now[g] += tick(rng.normal(64, 10))
                recs[g].append((now[g], 3, 1))
            for g in range(3):
                recs[g].append((now[g] + 32, 0, 3))
                lanes[(b, g)] = recs[g]
        return encode_cuda_profiler(lanes, num_blocks, 3), names
    raise ValueError(f"unknown synthetic kind {kind!r}: use 'load_compute_store' or 'warp_specialized'")


# --------------------------------------------------------------------------------------------
# IKET
# --------------------------------------------------------------------------------------------
def _iket_int(v, what, warnings, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, int):
        warnings[f"{what}: not an integer (skipped)"] += 1
        return None
    if (lo is not None and v < lo) or (hi is not None and v >= hi):
        warnings[f"{what}: out of range (skipped)"] += 1
        return None
    return v


def load_iket(path_or_result, *, launch=None, max_bytes: int = 512 << 20, max_events: int = 20_000_000,
              max_name_chars: int = 256, lifetimes: bool = True) -> Timeline:
    """Read an IKET trace: a ``*.trace.json`` path, its text, a parsed dict, or TVM's
    ``IketProfileResult``. Tracks are SM → CTA → warp; ranges become ranges, markers instants
    (with payloads), ``warpLifetimes`` a ``warp_lifetime`` range per warp (``lifetimes=False`` drops
    them). ``launch`` picks a launch by index or kernel-name substring (default: the first; the
    others are listed in ``meta['launches']``). Files over ``max_bytes``, nesting too deep for the
    parser, and more than ``max_events`` events raise :class:`TraceError`.
    """
    trace = _read_iket(path_or_result, max_bytes)
    if not isinstance(trace, dict):
        raise TraceError(f"IKET trace must be a JSON object, got {type(trace).__name__}")
    warnings: Counter = Counter()
    strings = trace.get("stringTable")
    locs = trace.get("locationTable")
    launches = trace.get("launches")
    if not isinstance(strings, list) or not isinstance(launches, list):
        raise TraceError("not an IKET trace: it needs a 'stringTable' list and a 'launches' list "
                         "(run-iket ... profile --postprocess json writes iket_pid_<pid>.trace.json)")
    if not isinstance(locs, list):
        locs = []
        warnings["no locationTable (tracks by location index)"] += 1
    if not launches:
        raise TraceError("IKET trace has no launches: was the kernel JIT-compiled and run inside run-iket?")
    names_all = []
    for s in strings:
        if not isinstance(s, str):
            warnings["stringTable entries that are not strings"] += 1
            s = repr(type(s).__name__)
        if len(s) > max_name_chars:
            warnings["names longer than max_name_chars (truncated)"] += 1
            s = s[:max_name_chars] + "…"
        names_all.append(s)
    launch_names = [str(lc.get("kernelName", f"launch {i}"))[:max_name_chars] if isinstance(lc, dict)
                    else f"launch {i}" for i, lc in enumerate(launches)]
    if launch is None:
        li = 0
    elif isinstance(launch, int):
        if not -len(launches) <= launch < len(launches):
            raise TraceError(f"launch {launch} out of range: the trace has {len(launches)} launches")
        li = launch % len(launches)
    else:
        hits = [i for i, n in enumerate(launch_names) if str(launch) in n]
        if not hits:
            raise TraceError(f"no launch whose kernel name contains {launch!r}; launches: {launch_names}")
        li = hits[0]
    lc = launches[li]
    if not isinstance(lc, dict):
        raise TraceError(f"launch {li} is not an object")
    gdim = tuple(lc.get(k) if isinstance(lc.get(k), int) else 1 for k in ("gridDimX", "gridDimY", "gridDimZ"))

    track_of: dict = {}
    tracks: list = []

    def track_for(loc_idx):
        if loc_idx in track_of:
            return track_of[loc_idx]
        loc = locs[loc_idx] if 0 <= loc_idx < len(locs) and isinstance(locs[loc_idx], dict) else {}
        sm = loc.get("smId") if isinstance(loc.get("smId"), int) else -1
        cta = loc.get("ctaId")
        cta = tuple(int(c) for c in cta[:3]) if isinstance(cta, list) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in cta[:3]) and cta else (-1, -1, -1)
        cta = (cta + (0, 0, 0))[:3]
        warp = loc.get("warpId") if isinstance(loc.get("warpId"), int) else -1
        block = cta[0] + gdim[0] * (cta[1] + gdim[1] * cta[2]) if cta[0] >= 0 else -1
        tr = Track((f"SM {sm}", f"CTA ({cta[0]},{cta[1]},{cta[2]})", f"warp {warp}"),
                   {"block": block, "group": warp, "sm": sm, "cta": cta, "warp": warp})
        track_of[loc_idx] = len(tracks)
        tracks.append(tr)
        return track_of[loc_idx]

    col_tr, col_nm, col_s, col_e, col_k, col_pt, col_pv = [], [], [], [], [], [], []
    name_ids: dict = {}

    def name_id(s):
        if s not in name_ids:
            name_ids[s] = len(name_ids)
        return name_ids[s]

    def budget():
        if len(col_s) >= max_events:
            raise TraceError(f"IKET launch has more than max_events={max_events} events; "
                             "raise max_events or profile fewer CTAs (run-iket --enabled-cluster)")

    nloc = max(len(locs), 1 << 31)
    for item in lc.get("ranges") or []:
        budget()
        if not isinstance(item, dict):
            warnings["ranges that are not objects (skipped)"] += 1
            continue
        ni = _iket_int(item.get("rangeNameIdx"), "rangeNameIdx", warnings, 0, len(names_all))
        s = _iket_int(item.get("startTs"), "range startTs", warnings, 0)
        e = _iket_int(item.get("endTs"), "range endTs", warnings, 0)
        wl = item.get("warpLocIdxs")
        li0 = wl[0] if isinstance(wl, list) and wl else item.get("locIdx")
        li0 = _iket_int(li0, "range warpLocIdxs", warnings, 0, nloc)
        if None in (ni, s, e, li0):
            continue
        if isinstance(wl, list) and len(wl) > 1 and wl[0] != wl[-1]:
            warnings["ranges that start and end on different warps"] += 1
        if e < s:
            warnings["ranges with endTs < startTs (skipped)"] += 1
            continue
        pt, pv = 0, 0
        ie = item.get("internalEvents")
        if isinstance(ie, list) and ie and isinstance(ie[0], dict) and isinstance(ie[0].get("payloadType"), int):
            pt = ie[0]["payloadType"] & 0xFF
            pv = ie[0].get("payloadVal") if isinstance(ie[0].get("payloadVal"), int) else 0
        col_tr.append(track_for(li0)); col_nm.append(name_id(names_all[ni])); col_s.append(s); col_e.append(e)
        col_k.append(KIND_RANGE); col_pt.append(pt); col_pv.append(pv & ((1 << 64) - 1))
    for item in lc.get("markers") or []:
        budget()
        if not isinstance(item, dict):
            warnings["markers that are not objects (skipped)"] += 1
            continue
        ni = _iket_int(item.get("markerNameIdx"), "markerNameIdx", warnings, 0, len(names_all))
        ts = _iket_int(item.get("timestamp"), "marker timestamp", warnings, 0)
        loc = _iket_int(item.get("locIdx"), "marker locIdx", warnings, 0, nloc)
        if None in (ni, ts, loc):
            continue
        pt = item.get("payloadType") if isinstance(item.get("payloadType"), int) else 0
        pv = item.get("payloadVal") if isinstance(item.get("payloadVal"), int) else 0
        col_tr.append(track_for(loc)); col_nm.append(name_id(names_all[ni])); col_s.append(ts); col_e.append(ts)
        col_k.append(KIND_INSTANT); col_pt.append(pt & 0xFF); col_pv.append(pv & ((1 << 64) - 1))
    if lifetimes:
        for item in lc.get("warpLifetimes") or []:
            budget()
            if not isinstance(item, dict):
                continue
            s = _iket_int(item.get("startTs"), "warpLifetime startTs", warnings, 0)
            e = _iket_int(item.get("endTs"), "warpLifetime endTs", warnings, 0)
            loc = _iket_int(item.get("locIdx"), "warpLifetime locIdx", warnings, 0, nloc)
            if None in (s, e, loc) or e < s:
                continue
            col_tr.append(track_for(loc)); col_nm.append(name_id("warp_lifetime")); col_s.append(s)
            col_e.append(e); col_k.append(KIND_RANGE); col_pt.append(0); col_pv.append(0)

    s = np.asarray(col_s, dtype=np.int64)
    e = np.asarray(col_e, dtype=np.int64)
    t_min = int(s.min()) if len(s) else 0
    unknown_pt = set(col_pt) - set(_IKET_PAYLOAD_TYPES) - {0}
    if unknown_pt:
        warnings["payloads of unknown type (shown raw)"] += sum(1 for p in col_pt if p in unknown_pt)
    meta = {"source": "iket", "kernel": launch_names[li], "launch_index": li,
            "launches": launch_names, "grid": gdim,
            "block_dim": tuple(lc.get(k) if isinstance(lc.get(k), int) else 1
                               for k in ("blockDimX", "blockDimY", "blockDimZ"))}
    return Timeline(names=list(name_ids), tracks=tracks, track=col_tr, name_id=col_nm,
                    start_ns=s - t_min, end_ns=e - t_min, kind=col_k,
                    payload_type=np.asarray(col_pt, np.uint8), payload_raw=np.asarray(col_pv, np.uint64),
                    warnings=warnings, meta=meta, t0_ns=t_min)


def _read_iket(src, max_bytes):
    if isinstance(src, dict):
        return src
    # TVM's IketProfileResult (duck-typed so that tvm need not be imported)
    if hasattr(src, "json_traces") and hasattr(src, "postprocess"):
        traces = tuple(src.json_traces)
        if not traces:
            raise TraceError(f"the IKET profile has no JSON trace (postprocess={src.postprocess!r}); "
                             "profile with postprocess='json' or 'all'")
        if len(traces) > 1:
            raise TraceError(f"the IKET profile has {len(traces)} JSON traces (one per process); "
                             "pass one of result.json_traces to load_iket")
        src = traces[0]
    if isinstance(src, (bytes, bytearray)):
        text = bytes(src[: max_bytes + 1])
    elif isinstance(src, str) and src.lstrip().startswith("{"):
        text = src
    elif isinstance(src, (str, os.PathLike)):
        p = Path(src)
        if p.is_dir():
            found = sorted(p.rglob("*.trace.json")) or sorted(p.glob("*.json"))
            if len(found) != 1:
                raise TraceError(f"{p} holds {len(found)} IKET JSON traces; pass the file itself")
            p = found[0]
        try:
            size = p.stat().st_size
        except OSError as exc:
            raise TraceError(f"cannot read IKET trace {p}: {exc.strerror}") from None
        if size > max_bytes:
            raise TraceError(f"IKET trace {p} is {size} bytes, over max_bytes={max_bytes}; "
                             "pass a larger max_bytes or profile fewer CTAs (run-iket --enabled-cluster)")
        text = p.read_bytes()
    else:
        raise TraceError(f"load_iket takes a path, JSON text, dict or IketProfileResult, not {type(src).__name__}")
    if len(text) > max_bytes:
        raise TraceError(f"IKET trace is {len(text)} bytes, over max_bytes={max_bytes}")
    try:
        return json.loads(text)
    except RecursionError:
        raise TraceError("IKET trace is nested too deeply to be a run-iket trace (hostile or corrupt JSON)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TraceError(f"IKET trace is not valid JSON: {exc}") from None


def iket_requirements() -> list[str]:
    """What is missing for TVM's official IKET profiling, as pip requirement strings (empty when
    everything is in place). The versions are read from ``tvm.backend.cuda.iket``."""
    from importlib import metadata

    profile = _iket_profile_config()
    missing = []
    for versions, at_least in ((profile["minimum_versions"], True), (profile["exact_versions"], False)):
        for dist, want in versions.items():
            req = f"{dist}{'>=' if at_least else '=='}{want}"
            try:
                have = metadata.version(dist)
            except metadata.PackageNotFoundError:
                missing.append(req)
                continue
            if at_least:
                if _version_tuple(have) < _version_tuple(want):
                    missing.append(f"{req} (have {have})")
            elif have != want:
                missing.append(f"{req} (have {have})")
    import shutil

    if shutil.which("run-iket") is None:
        missing.append("run-iket on PATH (installed by nvidia-cutlass-dsl-libs-base)")
    want = ".".join(map(str, profile["nvrtc_version"]))
    try:
        from cuda.bindings import nvrtc

        err, major, minor = nvrtc.nvrtcVersion()
        if int(err) != 0 or (int(major), int(minor)) != tuple(profile["nvrtc_version"]):
            missing.append(f"NVRTC {want} loadable (loaded {int(major)}.{int(minor)})")
    except Exception:
        missing.append(f"NVRTC {want} loadable by cuda.bindings.nvrtc")
    return missing


_IKET_FALLBACK = {
    "nvrtc_version": (13, 2),
    "minimum_versions": {"nvidia-cutlass-dsl": "4.6.0", "nvidia-cutlass-dsl-libs-base": "4.6.0",
                         "nvidia-cutlass-dsl-libs-core": "4.6.0", "nvidia-cutlass-dsl-libs-cu13": "4.6.0"},
    "exact_versions": {"nvidia-cuda-nvdisasm": "13.3.73", "nvidia-cuda-nvrtc": "13.2.78"},
}


def _iket_profile_config() -> dict:
    try:
        from tvm.backend.cuda import iket

        return iket._OFFICIAL_PROFILES[iket._DEFAULT_PROFILE]
    except Exception:  # TVM moved its table: fall back to the 0.27 values
        return _IKET_FALLBACK


def _version_tuple(v: str):
    out = []
    for part in v.split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def iket_profile(command, *, output_dir, launch=None, timeout: float = 600.0, **kwargs) -> Timeline:
    """Run ``command`` (a replayable argv, e.g. ``[sys.executable, "my_kernel.py"]``) under
    NVIDIA's ``run-iket`` through ``tvm.backend.cuda.iket.profile`` and load the JSON trace.
    Raises :class:`IketUnavailable` naming every missing package and version first."""
    missing = iket_requirements()
    if missing:
        raise IketUnavailable(
            "IKET profiling needs NVIDIA's official runtime, which is not complete here. Missing: "
            + "; ".join(missing) + ". Install with: pip install "
            + " ".join(f"'{m.split(' (')[0]}'" for m in missing if not m.startswith(("run-iket", "NVRTC"))),
            missing)
    from tvm.backend.cuda import iket

    result = iket.profile(command, output_dir=output_dir, postprocess=kwargs.pop("postprocess", "all"),
                          clobber=kwargs.pop("clobber", True), timeout=timeout, **kwargs)
    return load_iket(result, launch=launch)


# --------------------------------------------------------------------------------------------
# recording on the GPU
# --------------------------------------------------------------------------------------------
def record(kernel, *args, events, buffer_slots: int | None = None, arch: str | None = None,
           strict: bool = False) -> Timeline:
    """Compile (if needed) and run a CudaProfiler-instrumented kernel once on the GPU; return its
    Timeline. ``kernel`` is a TIRx ``PrimFunc``, an ``IRModule`` or a :class:`txlab.Compiled` whose
    profiler buffer is its (last) ``uint64`` parameter; ``args`` are the other parameters in order
    (numpy arrays are written back in place, torch tensors are used as they are). ``events`` names
    the event ids (a list or the kernel's ``Enum``). The kernel is compiled by :func:`txlab.compile`
    for ``arch`` (default: this GPU's) and launched by :func:`txlab.run.launch`, so it runs in the
    isolated worker when ``txlab.config.isolation == "process"``. The raw buffer is kept as
    ``timeline.meta['buffer']``.
    """
    buf, meta = _run_profiled(kernel, args, buffer_slots=buffer_slots, arch=arch)
    tl = from_cuda_profiler(buf, events, strict=strict, meta=meta)
    tl.meta["buffer"] = buf
    return tl


def _run_profiled(kernel, args, *, buffer_slots=None, arch=None):
    """Compile with :func:`txlab.compile` (txlab's own nvcc cubin, cached) and launch with
    :func:`txlab.run.launch`, so a recording runs where every other txlab launch runs (the isolated
    worker when ``txlab.config.isolation == "process"``) and gets the same argument checks."""
    from txlab.compiler import Compiled
    from txlab.device import require_gpu
    from txlab.run import launch

    info = require_gpu("txlab.timeline.record")
    if isinstance(kernel, Compiled):
        compiled = kernel
    else:
        from txlab.compiler import compile as compile_kernel

        compiled = compile_kernel(kernel, arch=arch or info.arch)
    params = compiled.entry_params
    prof_pos = [i for i, p in enumerate(params) if p["kind"] == "buffer" and p["dtype"] == "uint64"]
    if not prof_pos:
        raise TraceError("the kernel has no uint64 buffer parameter for the profiler "
                         "(T.match_buffer(prof_ptr, (SLOTS,), \"uint64\"))")
    pp = prof_pos[-1]
    if len(args) != len(params) - 1:
        raise TraceError(f"{compiled.name} takes {len(params) - 1} arguments besides the profiler buffer "
                         f"({', '.join(p['name'] for i, p in enumerate(params) if i != pp)}), got {len(args)}")
    shape = params[pp]["shape"]
    if not all(isinstance(d, int) for d in shape):
        raise TraceError(f"the profiler buffer {params[pp]['name']} has a symbolic shape {shape}; "
                         "give it a constant number of slots")
    slots = int(np.prod(shape))
    if buffer_slots is not None and buffer_slots != slots:
        raise TraceError(f"the kernel's profiler buffer has {slots} slots, buffer_slots={buffer_slots}")
    prof = np.zeros(shape, np.uint64)
    full = list(args)
    full.insert(pp, prof)
    launch(compiled, *full)
    meta = {"kernel": compiled.name, "gpu": info.name, "arch": compiled.arch,
            "provenance": f"recorded on {info.name} ({compiled.arch})"}
    return prof.reshape(-1), meta


def example_kernel(kind: str = "load_compute_store", *, num_blocks: int = 8, iters: int = 4000,
                   tiles: int = 6, slots: int = 4096):
    """A CudaProfiler-instrumented example kernel (TIRx PrimFunc) and its event names.

    ``load_compute_store``: 128 threads per block, one group; ``load`` / ``compute`` (an
    ``iters``-long FMA chain) / ``store``. Params: (out f32[N], inp f32[N], prof u64[slots]).

    ``warp_specialized``: 384 threads = 3 warpgroups, one profiler group per warpgroup. Warpgroup 0
    produces tiles into a 2-stage shared buffer, warpgroups 1 and 2 consume them (2 has twice the
    work), a CTA barrier per stage hands tiles over, so loading tile k+1 overlaps computing tile k.
    Params: (out f32[num_blocks*256], inp f32[num_blocks*tiles*128], prof u64[slots]).
    """
    from tvm.script import tirx as T

    if kind == "load_compute_store":
        BLOCK = 128
        N = num_blocks * BLOCK
        STRIDE = num_blocks

        class Ev(Enum):
            load = 0
            compute = 1
            store = 2

        @T.prim_func
        def load_compute_store(out_ptr: T.handle, inp_ptr: T.handle, prof_ptr: T.handle):
            out = T.match_buffer(out_ptr, (N,), "float32")
            inp = T.match_buffer(inp_ptr, (N,), "float32")
            prof = T.match_buffer(prof_ptr, (slots,), "uint64")
            T.device_entry()
            bid = T.cta_id([num_blocks])
            tid = T.thread_id([BLOCK])
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            T.cuda.timer_init(prof.data, tag.data, off.data, 1, 0)
            T.cuda.timer_start(Ev.load, prof.data, tag.data, off.data, STRIDE, tid == 0)
            x: T.f32 = inp[bid * BLOCK + tid]
            T.cuda.timer_end(Ev.load, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_start(Ev.compute, prof.data, tag.data, off.data, STRIDE, tid == 0)
            acc: T.f32 = T.float32(0)
            for _ in range(iters):
                acc = acc * T.float32(1.0001) + x
            T.cuda.timer_end(Ev.compute, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_start(Ev.store, prof.data, tag.data, off.data, STRIDE, tid == 0)
            out[bid * BLOCK + tid] = acc
            T.cuda.timer_end(Ev.store, prof.data, tag.data, off.data, STRIDE, tid == 0)
            T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, tid == 0)

        return load_compute_store, Ev

    if kind == "warp_specialized":
        WG = 128
        GROUPS = 3
        STRIDE = num_blocks * GROUPS
        NIN = num_blocks * tiles * WG
        NOUT = num_blocks * 2 * WG

        class Ev(Enum):
            load_tile = 0
            wait = 1
            compute = 2
            store = 3

        @T.prim_func
        def warp_specialized(out_ptr: T.handle, inp_ptr: T.handle, prof_ptr: T.handle):
            out = T.match_buffer(out_ptr, (NOUT,), "float32")
            inp = T.match_buffer(inp_ptr, (NIN,), "float32")
            prof = T.match_buffer(prof_ptr, (slots,), "uint64")
            T.device_entry()
            bid = T.cta_id([num_blocks])
            tid = T.thread_id([GROUPS * WG])
            smem = T.alloc_buffer((2, WG), "float32", scope="shared", align=16)
            tag = T.alloc_buffer([1], "uint64", scope="local", align=8)
            off = T.alloc_buffer([1], "uint32", scope="local", align=8)
            wg = tid // WG
            lane = tid % WG
            leader = lane == 0
            T.cuda.timer_init(prof.data, tag.data, off.data, GROUPS, wg)
            acc: T.f32 = T.float32(0)
            for k in range(tiles + 1):
                if wg == 0:
                    if k < tiles:
                        T.cuda.timer_start(Ev.load_tile, prof.data, tag.data, off.data, STRIDE, leader)
                        smem[k % 2, lane] = inp[(bid * tiles + k) * WG + lane]
                        T.cuda.timer_end(Ev.load_tile, prof.data, tag.data, off.data, STRIDE, leader)
                else:
                    if k > 0:
                        T.cuda.timer_start(Ev.compute, prof.data, tag.data, off.data, STRIDE, leader)
                        x: T.f32 = smem[(k - 1) % 2, lane]
                        for _ in range(iters * wg // 4):
                            acc = acc * T.float32(1.0001) + x
                        T.cuda.timer_end(Ev.compute, prof.data, tag.data, off.data, STRIDE, leader)
                T.cuda.timer_start(Ev.wait, prof.data, tag.data, off.data, STRIDE, leader)
                T.cuda.cta_sync()
                T.cuda.timer_end(Ev.wait, prof.data, tag.data, off.data, STRIDE, leader)
            if wg > 0:
                T.cuda.timer_start(Ev.store, prof.data, tag.data, off.data, STRIDE, leader)
                out[bid * 2 * WG + (wg - 1) * WG + lane] = acc
                T.cuda.timer_end(Ev.store, prof.data, tag.data, off.data, STRIDE, leader)
            T.cuda.timer_finalize(prof.data, tag.data, off.data, STRIDE, leader)

        return warp_specialized, Ev
    raise ValueError(f"unknown example kernel {kind!r}: use 'load_compute_store' or 'warp_specialized'")


def example_inputs(kind: str = "load_compute_store", *, num_blocks: int = 8, tiles: int = 6):
    """Host arrays (out, inp) matching :func:`example_kernel`."""
    if kind == "load_compute_store":
        n = num_blocks * 128
        return np.zeros(n, np.float32), np.ones(n, np.float32)
    return np.zeros(num_blocks * 256, np.float32), np.ones(num_blocks * tiles * 128, np.float32)


# --------------------------------------------------------------------------------------------
# saved traces (txlab/data)
# --------------------------------------------------------------------------------------------
SAVED = ("load_compute_store", "warp_specialized", "hopper_gemm")
EXAMPLE_KERNELS = ("load_compute_store", "warp_specialized")  # example_kernel kinds; hopper_gemm is only recorded


SAVED_IKET = ("iket",)  # run-iket JSON traces: <name>.iket.json + <name>.iket.meta.json


def saved(name: str = "load_compute_store") -> Timeline:
    """A trace shipped in ``txlab/data``: CudaProfiler buffers (``<name>.trace.bin`` +
    ``<name>.trace.json``) and ``"iket"``, a run-iket JSON trace recorded on an H200. Its
    ``meta['provenance']`` says whether it was recorded on a GPU or is synthetic."""
    root = resources.files("txlab") / "data"
    if name in SAVED_IKET:
        tl = load_iket(str(root / f"{name}.iket.json"))
        tl.meta.update(json.loads((root / f"{name}.iket.meta.json").read_text(encoding="utf-8")))
        return tl
    if name not in SAVED:
        raise ValueError(f"no saved trace {name!r}; saved traces: {', '.join(SAVED + SAVED_IKET)}")
    info = json.loads((root / f"{name}.trace.json").read_text(encoding="utf-8"))
    buf = np.frombuffer((root / f"{name}.trace.bin").read_bytes(), dtype="<u8")
    return from_cuda_profiler(buf, info["event_names"], meta={k: v for k, v in info.items() if k != "event_names"})


def _record_hopper_gemm(m: int = 8192, n: int = 8192, k: int = 8192):
    """The profiled warp-specialized GEMM (txlab.examples.hopper_gemm) on this GPU, checked."""
    import torch

    from txlab.examples import hopper_gemm as hg

    cfg = hg.GemmConfig(num_sms=torch.cuda.get_device_properties(0).multi_processor_count)
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hg.record_timeline(a, b, c, cfg)  # warm-up: first launch pays module load and TMA descriptor set-up
    tl = hg.record_timeline(a, b, c, cfg)
    ref = a.float() @ b.float().T
    err = ((c.float() - ref).norm() / ref.norm()).item()
    if not err <= 1e-2:
        raise RuntimeError(f"the profiled GEMM is wrong: relative error {err:.3g}")
    meta = {"synthetic": False, "kernel": f"hopper_gemm {m}x{n}x{k} {cfg.name}", "gpu": tl.meta["gpu"],
            "arch": tl.meta["arch"], "config": cfg.to_dict(), "rel_error": err,
            "provenance": f"recorded on {tl.meta['gpu']} ({tl.meta['arch']}) by "
                          "`python -m txlab.timeline record-examples`"}
    print(f"hopper_gemm: {len(tl)} events, warnings={dict(tl.warnings)}, rel_error={err:.2e}")
    return tl.meta["buffer"], [e.name for e in hg.GemmEvent], meta


def _write_saved(name: str, buf: np.ndarray, names: list, meta: dict, out_dir: Path):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.trace.bin").write_bytes(np.ascontiguousarray(buf, dtype="<u8").tobytes())
    (out_dir / f"{name}.trace.json").write_text(
        json.dumps({"event_names": list(names), **meta}, indent=1) + "\n", encoding="utf-8")


def _main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(prog="python -m txlab.timeline",
                                 description="Regenerate the traces saved in txlab/data.")
    ap.add_argument("command", choices=["record-examples", "synthetic-examples"],
                    help="record-examples: run the instrumented example kernels on this GPU; "
                         "synthetic-examples: write labelled synthetic traces (no GPU)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "data"))
    a = ap.parse_args(argv)
    out = Path(a.out)
    for kind in SAVED:
        if a.command == "synthetic-examples" and kind not in EXAMPLE_KERNELS:
            continue
        if kind == "hopper_gemm" and a.command == "record-examples":
            buf, names, meta = _record_hopper_gemm()
        elif a.command == "synthetic-examples":
            buf, names = synthetic_cuda_profiler(kind)
            meta = {"synthetic": True, "kernel": kind,
                    "provenance": "SYNTHETIC: generated by txlab.timeline.synthetic_cuda_profiler("
                                  f"{kind!r}, seed=0), not measured. Regenerate from the GPU with "
                                  "`python -m txlab.timeline record-examples`."}
        else:
            func, ev = example_kernel(kind)
            outp, inp = example_inputs(kind)
            buf, rmeta = _run_profiled(func, (outp, inp))
            names = [m.name for m in ev]
            meta = {"synthetic": False, "kernel": kind, "gpu": rmeta["gpu"], "arch": rmeta["arch"],
                    "provenance": f"recorded on {rmeta['gpu']} ({rmeta['arch']}) by "
                                  "`python -m txlab.timeline record-examples`",
                    "output_checksum": float(outp.sum())}
            tl = from_cuda_profiler(buf, names)
            print(f"{kind}: {len(tl)} events, warnings={dict(tl.warnings)}")
        _write_saved(kind, buf, names, meta, out)
        tl = from_cuda_profiler(buf, names)
        print(f"wrote {out}/{kind}.trace.bin: {len(tl)} events on {len(tl.tracks)} tracks, "
              f"{tl.duration_ns} ns ({meta['provenance'][:40]}...)")
        print(tl.summary())


if __name__ == "__main__":
    _main()
