"""TVM CudaProfiler buffers (``T.cuda.timer_*``) to a :class:`Timeline`: decode, encode, synthesise.

The wire format is described in :mod:`txlab.timeline`.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from enum import Enum

import numpy as np

from txlab.errors import InputError
from txlab.timeline.model import Timeline, TraceError, Track, check_bool, check_int, read_trace_bytes

_MASK32 = np.uint64(0xFFFFFFFF)
_TYPE_START, _TYPE_END, _TYPE_INSTANT, _TYPE_FINALIZE = 0, 1, 2, 3
_MAX_EVENT_ID = 0x3FF  # 10 bits in the tag
_MAX_LANES = 1 << 20  # 20 bits of lane in the 32-bit tag


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
        raise InputError("event_names must be a list of names indexed by event id, not one string", param="event_names")
    if isinstance(events, Mapping) or not isinstance(events, Iterable):
        raise InputError(
            f"event_names must be a list of names indexed by event id (or the kernel's "
            f"Enum), not {type(events).__name__}",
            param="event_names",
        )
    names = []
    for n in events:
        names.append(str(n))
        if len(names) > _MAX_EVENT_ID + 1:
            raise InputError(
                f"more than {_MAX_EVENT_ID + 1} event_names given; the tag holds ids 0..{_MAX_EVENT_ID}",
                param="event_names",
            )
    return names


#: Default byte cap of :func:`from_cuda_profiler` for a file: 1 GiB = 134M slots (a 1e7-record
#: buffer is 80 MB).
MAX_BUFFER_BYTES = 1 << 30


def _as_uint64(buffer, max_bytes: int) -> np.ndarray:
    if buffer is None:
        raise InputError(
            "buffer is None: pass the profiler buffer (numpy uint64 array, bytes, a tensor, "
            "or the path of a .npy/.bin file)",
            param="buffer",
        )
    if isinstance(buffer, (str, os.PathLike)):
        data = read_trace_bytes(buffer, max_bytes, "profiler buffer")
        if os.fspath(buffer).endswith(".npy"):
            try:
                buffer = np.load(io.BytesIO(data), allow_pickle=False)
            except (ValueError, OSError, EOFError) as exc:
                raise TraceError(
                    f"{os.fspath(buffer)!r} is not a readable .npy array ({exc}); save the "
                    "buffer with numpy.save(path, buffer)"
                ) from None
        else:
            buffer = data
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        mv = memoryview(buffer).cast("B")
        if len(mv) > max_bytes:
            raise TraceError(f"profiler buffer is {len(mv):,} bytes, larger than max_bytes={max_bytes:,}")
        if len(mv) % 8:
            raise TraceError(
                f"profiler buffer is {len(mv)} bytes, not a multiple of 8: it is truncated "
                "(copy the whole uint64 buffer back from the device)"
            )
        return np.frombuffer(mv, dtype="<u8")
    try:
        if not isinstance(buffer, np.ndarray):
            if hasattr(buffer, "numpy"):  # tvm.runtime.Tensor, or a CPU torch tensor
                if hasattr(buffer, "cpu") and not hasattr(buffer, "asnumpy"):
                    buffer = buffer.cpu()
                buffer = buffer.numpy()
            elif hasattr(buffer, "__dlpack__"):
                buffer = np.from_dlpack(buffer)
            else:
                buffer = np.asarray(buffer)
        a = np.asarray(buffer)
    except (TypeError, ValueError, RuntimeError, BufferError) as exc:
        raise InputError(
            f"buffer {type(buffer).__name__} is not an array of uint64 slots ({exc})", param="buffer"
        ) from None
    if a.ndim != 1:
        a = a.reshape(-1)
    if a.dtype == np.uint64:
        return a
    if a.dtype == np.int64:
        return a.view(np.uint64)
    if a.dtype.kind in "iu" or a.dtype == object:
        try:
            if a.dtype.kind == "i" and len(a) and a.min() < 0:
                raise ValueError("negative values")
            return a.astype(np.uint64)
        except (OverflowError, TypeError, ValueError) as exc:
            raise TraceError(f"profiler buffer values do not fit in uint64: {exc}") from None
    raise TraceError(
        f'profiler buffer has dtype {a.dtype}; CudaProfiler writes uint64 (T.match_buffer(prof, (n,), "uint64"))'
    )


def _unwrap_global_base(ts: np.ndarray) -> int:
    """The 32-bit timestamp where the trace starts: just after the largest circular gap."""
    u = np.sort(ts)
    if int(u[0]) == int(u[-1]):
        return int(u[0])
    gaps = np.diff(u)  # uint32: ascending, so no wrap
    wrap_gap = int(u[0]) + (1 << 32) - int(u[-1])
    i = int(np.argmax(gaps))
    return int(u[0]) if wrap_gap >= int(gaps[i]) else int(u[i + 1])


def from_cuda_profiler(
    buffer,
    event_names=None,
    *,
    strict: bool = False,
    num_groups: int | None = None,
    num_blocks: int | None = None,
    meta: dict | None = None,
    max_bytes: int = MAX_BUFFER_BYTES,
) -> Timeline:
    """Decode a CudaProfiler buffer (numpy uint64, bytes, a path to .npy/.bin, or a tensor).

    ``event_names`` is a list indexed by event id or the ``Enum`` used in the kernel. Problems that
    leave the rest of the trace usable (unknown ids, unmatched start/end, records after finalize,
    lanes out of the header's grid, lanes that ran out of buffer) are counted in
    ``Timeline.warnings``; ``strict=True`` turns them into :class:`TraceError`. A missing header is
    an error unless ``num_groups`` (and ``num_blocks``) are given. A path is read as a regular file
    of at most ``max_bytes`` (FIFOs, devices and symlinks to them are refused). Events come out
    sorted by (track, start); ties keep the kernel's write order.

    Vectorised throughout (no per-record Python): a 1e7-record buffer (80 MB) decodes in a few
    seconds with a peak of about 10x the buffer (benchmarks/timeline.py).
    """
    strict = check_bool(strict, "strict")
    max_bytes = check_int(max_bytes, "max_bytes", lo=8, fix="the byte cap for a buffer read from a file")
    if num_groups is not None:
        num_groups = check_int(
            num_groups, "num_groups", lo=1, hi=_MAX_LANES, fix="the number of groups per block given to CudaProfiler"
        )
    if num_blocks is not None:
        num_blocks = check_int(
            num_blocks, "num_blocks", lo=0, hi=_MAX_LANES, fix="the number of blocks of the launch (0: unknown)"
        )
    if meta is not None and not isinstance(meta, Mapping):
        raise InputError(
            f"meta must be a dict of extra fields for Timeline.meta, not {type(meta).__name__}", param="meta"
        )
    names = _event_names(event_names)
    buf = _as_uint64(buffer, max_bytes)
    if len(buf) == 0:
        raise TraceError("profiler buffer is empty")
    warnings: Counter = Counter()
    header = int(buf[0])
    if header == 0:
        if num_groups is None:
            raise TraceError(
                "slot 0 (the header) is 0: the kernel never called CudaProfiler.init from block 0 "
                "thread 0, or the buffer was not the one the kernel wrote. Zero the buffer before the "
                "launch and call p.init(group_id) on every thread, or pass num_groups= to decode anyway."
            )
        hdr_groups, hdr_blocks = num_groups, num_blocks or 0
        warnings["header missing (num_groups given)"] += 1
    else:
        hdr_blocks, hdr_groups = header & 0xFFFFFFFF, header >> 32
        if num_groups is not None and num_groups != hdr_groups:
            raise TraceError(f"header says num_groups={hdr_groups}, caller says {num_groups}")
    if hdr_groups < 1 or (hdr_blocks and hdr_blocks * hdr_groups > _MAX_LANES) or hdr_groups > _MAX_LANES:
        raise TraceError(
            f"header slot 0 = {header:#018x} decodes to num_blocks={hdr_blocks}, "
            f"num_groups={hdr_groups}, which is not a CudaProfiler header "
            f"(lanes must be 1..{_MAX_LANES}); is this the profiler buffer?"
        )

    # -- the non-empty slots, split through a little-endian uint32 view (no shifts of 64-bit words)
    body = buf[1:]
    nz = np.flatnonzero(body)
    idx_t = np.int32 if len(buf) < (1 << 31) else np.int64
    w32 = body[nz].astype("<u8", copy=False).view("<u4").reshape(-1, 2)
    slot = nz.astype(idx_t)
    slot += 1
    del nz
    ts = w32[:, 1].copy()  # globaltimer_lo
    tag = w32[:, 0].copy()
    del w32
    lane = np.right_shift(tag, np.uint32(12)).view(np.int32)  # < 2**20: the same bits as int32
    ev = np.bitwise_and(np.right_shift(tag, np.uint32(2)), np.uint32(_MAX_EVENT_ID)).astype(np.int16)
    typ = np.bitwise_and(tag, np.uint32(3)).astype(np.uint8)
    del tag

    if hdr_blocks:
        bad = lane >= hdr_blocks * hdr_groups
        if bad.any():
            warnings["records from lanes outside the header's grid (dropped)"] += int(bad.sum())
            keep = ~bad
            slot, ts, lane, ev, typ = slot[keep], ts[keep], lane[keep], ev[keep], typ[keep]
        del bad

    # records in write order within each lane: slots ascend, so a stable sort by lane suffices
    # (the interleaved layout is runs of ascending lanes, which timsort merges cheaply)
    if len(lane) and np.any(lane[1:] < lane[:-1]):
        order = np.argsort(lane, kind="stable")
        slot, ts, lane, ev, typ = slot[order], ts[order], lane[order], ev[order], typ[order]
        del order
    n = len(lane)
    new_lane = np.ones(n, bool)
    if n:
        np.not_equal(lane[1:], lane[:-1], out=new_lane[1:])
    lane_start = np.flatnonzero(new_lane)
    lane_ids = lane[lane_start].astype(np.int64)
    lane_len = np.diff(np.append(lane_start, n))
    nl = len(lane_start)

    # write stride from slot spacing; every record must sit on its lane's arithmetic progression:
    # equal spacing inside each lane and each lane's first slot at 1 + lane + k * stride
    stride = None
    if n:
        ds = np.diff(slot)[~new_lane[1:]]
        if len(ds):
            stride = int(ds.min())
            off = slot[lane_start].astype(np.int64) - 1 - lane_ids
            if (off < 0).any() or (off % max(stride, 1)).any() or (ds != stride).any():
                warnings[
                    "records off their lane's slot sequence (two leaders in one lane, or "
                    "write_stride smaller than num_blocks*num_groups)"
                ] += 1
                if strict:
                    raise TraceError(
                        "lanes overlap in the buffer: write_stride must be >= "
                        "num_blocks*num_groups and each (block, group) needs exactly one leader"
                    )
        del ds
    last = lane_start + lane_len - 1
    last_slot = slot[last].astype(np.int64) if n else np.zeros(0, np.int64)
    del slot, new_lane

    # records after each lane's first finalize are dropped: +1 just past the first finalize,
    # -1 at the lane's end, summed (int8: the running sum is 0 or 1)
    fin = np.flatnonzero(typ == _TYPE_FINALIZE)
    fin_lane = np.searchsorted(lane_start, fin, side="right") - 1
    first_fin = np.ones(len(fin), bool)
    first_fin[1:] = fin_lane[1:] != fin_lane[:-1]
    fin, fin_lane = fin[first_fin], fin_lane[first_fin]
    marks = np.zeros(n + 1, np.int8)
    marks[fin + 1] += 1
    marks[lane_start[fin_lane] + lane_len[fin_lane]] -= 1
    after = np.cumsum(marks[:n], dtype=np.int8).view(bool)
    del marks
    n_after = int(np.count_nonzero(after))
    if n_after:
        warnings["records after finalize (ignored)"] += n_after
        if strict:
            raise TraceError("records after a lane's finalize")
    # truncation: a lane that did not finalize and whose next slot is past the end ran out of buffer
    if n:
        unfinished = np.ones(nl, bool)
        unfinished[fin_lane] = False
        if unfinished.any():
            warnings["lanes without finalize"] += int(unfinished.sum())
            if stride is not None:
                full = unfinished & (last_slot + stride >= len(buf))
                if full.any():
                    warnings["lanes that ran out of buffer (trace truncated)"] += int(full.sum())
                    if strict:
                        need = int(last_slot.max() + stride * 4)
                        raise TraceError(
                            f"{int(full.sum())} lanes ran out of buffer: allocate more slots "
                            f"(at least {need}, better 2x the records per lane times write_stride)"
                        )

    # unwrap 32-bit timestamps: global base after the largest gap, then per-lane monotone deltas
    # (uint32 differences wrap mod 2**32 by themselves)
    base = _unwrap_global_base(ts) if n else 0
    t = np.empty(n, np.int64)
    if n:
        d = np.empty(n, np.uint32)
        np.subtract(ts[1:], ts[:-1], out=d[1:])
        d[lane_start] = ts[lane_start] - np.uint32(base)
        np.cumsum(d, dtype=np.int64, out=t)
        restart = t[lane_start] - d[lane_start]  # restart the sum at each lane
        del d
        if restart.any():
            t -= np.repeat(restart, lane_len)
    del ts

    # names, unknown ids (finalize records carry event 0: they never name anything)
    names = list(names)
    keep_rec = ~after & (typ != _TYPE_FINALIZE)
    del after
    if len(names) <= _MAX_EVENT_ID:
        unknown = keep_rec & (ev >= len(names))
        n_unknown = int(np.count_nonzero(unknown))
        if n_unknown:
            ids = np.unique(ev[unknown]).tolist()
            warnings["records with unknown event ids"] += n_unknown
            if strict:
                raise TraceError(f"event ids {ids} have no name (event_names has {len(names)} entries)")
            while len(names) <= max(ids):
                names.append(f"event_{len(names)}")
        del unknown

    # pair starts with ends per (lane, event) with stack semantics, vectorised
    idx_se = np.flatnonzero(keep_rec & (typ <= _TYPE_END))
    o = np.argsort(ev[idx_se], kind="stable")  # int16: radix sort
    o = o[np.argsort(lane[idx_se][o], kind="stable")]  # few ascending runs (one per event id)
    idx_se = idx_se[o]
    del o
    key = lane[idx_se].astype(np.int64) * (_MAX_EVENT_ID + 1) + ev[idx_se]
    ps, pe, unmatched_start, unmatched_end = _pair_brackets(key, typ[idx_se] == _TYPE_START)
    del key
    ps, pe = idx_se[ps], idx_se[pe]
    del idx_se
    if unmatched_start:
        warnings["starts without an end (dropped)"] += unmatched_start
    if unmatched_end:
        warnings["ends without a start (dropped)"] += unmatched_end
    if strict and (unmatched_start or unmatched_end):
        raise TraceError(f"{unmatched_start} starts without end and {unmatched_end} ends without start")

    # events in record order (= (lane, start) order, ties in write order): a range at its start
    # record, an instant at its own record
    is_inst = keep_rec & (typ == _TYPE_INSTANT)
    del keep_rec
    end_of = np.full(n, -1, idx_t)
    end_of[ps] = pe
    del pe
    end_of[is_inst] = np.flatnonzero(is_inst)
    at = np.flatnonzero(end_of >= 0)
    end_at = end_of[at]
    del end_of
    ev_lane = lane[at]
    used, inverse = np.unique(ev_lane, return_inverse=True) if len(at) else (np.zeros(0, np.int32), at)
    g_ = hdr_groups
    tracks = [
        Track((f"block {u // g_}", f"group {u % g_}"), {"block": u // g_, "group": u % g_}) for u in used.tolist()
    ]
    all_s = t[at]
    all_e = t[end_at]
    t_min = int(all_s.min()) if len(all_s) else 0
    if t_min:
        all_s -= t_min
        all_e -= t_min
    info = {
        "source": "cudaprofiler",
        "num_blocks": hdr_blocks,
        "num_groups": hdr_groups,
        "write_stride": stride,
        "buffer_slots": int(len(buf)),
        "records": int(n),
        "lanes_recorded": int(nl),
    }
    info.update(meta or {})
    return Timeline(
        names=names,
        tracks=tracks,
        track=inverse.astype(np.int32),
        name_id=ev[at],
        start_ns=all_s,
        end_ns=all_e,
        kind=is_inst[at],
        warnings=warnings,
        meta=info,
        t0_ns=(base + t_min) % (1 << 32),
    )


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
    # fast path (every trace without nesting of one event in itself): starts and ends alternate
    # inside each run, so each start takes the end right after it and nothing else pairs
    same = key[1:] == key[:-1]
    if not (same & (is_start[1:] == is_start[:-1])).any():
        j = np.flatnonzero(same & is_start[:-1] & ~is_start[1:])
        n_start = int(np.count_nonzero(is_start))
        return j, j + 1, n_start - len(j), m - n_start - len(j)
    del same

    def groups(k):
        first = np.ones(len(k), bool)
        first[1:] = k[1:] != k[:-1]
        gs = np.flatnonzero(first)
        return first, gs, np.diff(np.append(gs, len(k))), np.cumsum(first) - 1

    first, gs, glen, gid = groups(key)
    d = _depth_after(gid, gs, glen, is_start)
    big = np.int64(2 * m + 4)
    run_neg = np.maximum.accumulate(gid * big - d) - gid * big  # -(running min of depth)
    prev_neg = np.zeros(m, np.int64)
    prev_neg[1:] = run_neg[:-1]
    prev_neg[first] = 0
    prev_min = -np.maximum(prev_neg, 0)
    bad_end = ~is_start & (d < prev_min)  # an end with nothing open
    keep = np.flatnonzero(~bad_end)
    k2, st2 = key[keep], is_start[keep]
    first, gs, glen, gid = groups(k2)
    d = _depth_after(gid, gs, glen, st2)
    level = np.where(st2, d, d + 1)
    n2 = np.int64(len(k2))
    if n2 <= 2_000_000:  # one int64 key (< n2**3 < 2**63) sorts faster than a 3-key lexsort
        o = np.argsort((gid * (level.max() + 1) + level) * n2 + np.arange(n2))
    else:
        o = np.lexsort((np.arange(n2), level, gid))
    st_o = st2[o]
    same = (gid[o][1:] == gid[o][:-1]) & (level[o][1:] == level[o][:-1])
    pair = st_o[:-1] & ~st_o[1:] & same
    j = np.flatnonzero(pair)
    s_pos, e_pos = keep[o[j]], keep[o[j + 1]]
    return s_pos, e_pos, int(st2.sum()) - len(j), int(bad_end.sum())


def encode_cuda_profiler(
    lanes: dict, num_blocks: int, num_groups: int, *, write_stride=None, slots: int | None = None
) -> np.ndarray:
    """Build a CudaProfiler buffer exactly as the device helpers write it.

    ``lanes`` maps ``(block, group)`` to a list of ``(timestamp_ns, event_id, type)`` records in
    write order (type 0 start, 1 end, 2 instant, 3 finalize); timestamps are taken mod 2**32 like
    ``%globaltimer_lo``. Used for synthetic traces and tests.
    """
    num_blocks = check_int(num_blocks, "num_blocks", lo=1, hi=_MAX_LANES)
    num_groups = check_int(num_groups, "num_groups", lo=1, hi=_MAX_LANES)
    nl = num_blocks * num_groups
    if nl > _MAX_LANES:
        raise InputError(
            f"num_blocks * num_groups = {nl} lanes; the tag holds at most {_MAX_LANES}", param="num_blocks"
        )
    stride = (
        nl
        if write_stride is None
        else check_int(write_stride, "write_stride", lo=nl, fix="at least num_blocks * num_groups")
    )
    if not isinstance(lanes, Mapping):
        raise InputError(f"lanes must be a dict {{(block, group): records}}, not {type(lanes).__name__}", param="lanes")
    arrays = {}
    for key, recs in lanes.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise InputError(f"lanes keys are (block, group) pairs, not {key!r:.40}", param="lanes")
        b = check_int(key[0], "lanes", lo=0, hi=num_blocks - 1, fix=f"block of lane {key!r:.40}")
        g = check_int(key[1], "lanes", lo=0, hi=num_groups - 1, fix=f"group of lane {key!r:.40}")
        try:
            r = np.asarray(recs, np.int64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(
                f"lanes[{key!r}] must be (timestamp_ns, event_id, type) integer records ({exc})", param="lanes"
            ) from None
        if r.size == 0:
            continue
        if r.ndim != 2 or r.shape[1] != 3:
            raise InputError(
                f"lanes[{key!r}] must be (timestamp_ns, event_id, type) records, got an array of shape {r.shape}",
                param="lanes",
            )
        arrays[b * num_groups + g] = r
    most = max((len(r) for r in arrays.values()), default=0)
    size = (1 + nl + most * stride) if slots is None else check_int(slots, "slots", lo=1)
    buf = np.zeros(size, np.uint64)
    buf[0] = (num_groups << 32) | num_blocks
    for ln, r in arrays.items():
        pos = 1 + ln + np.arange(len(r)) * stride
        keep = pos < size
        tagv = (ln << 12) | ((r[:, 1] & _MAX_EVENT_ID) << 2) | (r[:, 2] & 3)
        word = ((r[:, 0] % (1 << 32)).astype(np.uint64) << np.uint64(32)) | tagv.astype(np.uint64)
        buf[pos[keep]] = word[keep]
    return buf


def synthetic_cuda_profiler(
    kind: str = "load_compute_store", *, num_blocks: int = 8, seed: int = 0, t0: int = 0x7FFF_0000, tiles: int = 6
) -> tuple[np.ndarray, list]:
    """A SYNTHETIC CudaProfiler buffer (not measured): plausible durations drawn from a seeded RNG,
    encoded with :func:`encode_cuda_profiler`. ``kind`` is ``load_compute_store`` (1 group per
    block) or ``warp_specialized`` (3 groups: producer, two consumers). Returns (buffer, names)."""
    if kind not in ("load_compute_store", "warp_specialized"):
        raise InputError(
            f"unknown synthetic kind {kind!r:.60}: use 'load_compute_store' or 'warp_specialized'", param="kind"
        )
    num_blocks = check_int(num_blocks, "num_blocks", lo=1, hi=4096)
    tiles = check_int(tiles, "tiles", lo=1, hi=4096)
    seed = check_int(seed, "seed", lo=0)
    t0 = check_int(t0, "t0", lo=0, hi=(1 << 32) - 1, fix="a %globaltimer_lo value")
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
