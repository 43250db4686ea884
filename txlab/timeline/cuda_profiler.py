"""TVM CudaProfiler buffers (``T.cuda.timer_*``) to a :class:`Timeline`: decode, encode, synthesise.

The wire format is described in :mod:`txlab.timeline`.
"""
from __future__ import annotations

import os
from collections import Counter
from enum import Enum
from pathlib import Path

import numpy as np

from txlab.timeline.model import Timeline, TraceError, Track

_MASK32 = np.uint64(0xFFFFFFFF)
_TYPE_START, _TYPE_END, _TYPE_INSTANT, _TYPE_FINALIZE = 0, 1, 2, 3
_MAX_EVENT_ID = 0x3FF            # 10 bits in the tag
_MAX_LANES = 1 << 20             # 20 bits of lane in the 32-bit tag


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
