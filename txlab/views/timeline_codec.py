"""The wire format of :class:`txlab.views.TimelineView`: a :class:`txlab.timeline.Timeline` as
one binary buffer of bit-packed columns (pure numpy; no Jupyter imports).

Events travel to the browser as one binary buffer (``data``) of bit-packed columns, described by
``meta["columns"]``. What the comm carries dominates first-render time (~50-80 ms per MB
kernel → browser on a 2-core machine), so every column takes the fewest bits that keep it exact:

* ``offsets``: uint32 per track (events are sorted by (track, start), so a track's events are
  ``offsets[t]:offsets[t+1]`` and no per-event track id is sent);
* ``name``: name ids;
* ``first``: per track, the first start minus ``t0`` (the earliest start);
* ``step``: per event, its start relative to the previous event of its track, either the gap
  after that event's end (``mode == "gap"``: back-to-back events give small numbers) or the start
  delta (``mode == "delta"``), whichever packs smaller; 0 for a track's first event;
* ``dur``: end - start;
* ``depth``: sub-row for overlapping ranges (0 bits when no range overlaps);
* ``maxdur`` (per track), ``density`` (events per bin of ``2**density_shift`` ns from ``t0``, for
  the minimap) and
  ``t1`` (the latest end): aggregates the front end would otherwise compute in a pass over every
  event before its first frame;
* ``payload``: the events that carry an IKET payload (uint32 index + float64 value; absent if none).

The spec names every field (``events``, ``tracks``, and per column ``bits``, ``count``, ``offset``,
``exceptions``, ``exceptions_offset``: byte offsets into the buffer). An integer column is ``bits``
(``k`` below) bits per value (0 ≤ k ≤ 32, little-endian bit stream of uint32 words:
value ``i`` is bits ``i*k .. i*k+k-1``, padded to whole blocks of 32 values), with ``k`` chosen to minimise the column's size: values that do not fit
(negative, or wider than ``k`` bits) are exceptions (uint32 index + exact float64 value) patched in
by the decoder; ``k == 64`` is a dense float64 column for when exceptions would not pay. Every time
is an integer ns, exact while below 2**53. :func:`decode_columns` is the reference decoder (the
front end's is ``widgets/src/_timeline_codec.js``; tests check that both agree).
"""

from __future__ import annotations

import numpy as np

from txlab.timeline.model import IKET_PAYLOAD_TYPES

MAX_DEPTH = 3
_EXC_BYTES = 12  # one exception: uint32 index + float64 value


def depths(tl) -> np.ndarray:
    """Sub-row of every event so that overlapping ranges of one track do not hide each other
    (capped at 4 rows). Vectorised: an event's row is the number of earlier events of its track
    still open when it starts, which is the nesting level of properly nested ranges (IKET's);
    tracks where that makes two ranges of one row overlap (partial overlaps) get first-fit rows
    in a Python loop over their own events only.

    O(n log n) in the number of events whatever the tracks and times: (track, time) pairs are
    packed into one int64 key, with times replaced by their ranks when a far-off timestamp would
    not leave room for the track id (one event at 2**50 ns among 100k tracks used to send every
    track through the loop, each one scanning all events: O(tracks * events))."""
    n = len(tl)
    depth = np.zeros(n, np.uint8)
    if n == 0:
        return depth
    tr = np.asarray(tl.track, np.int64)
    s = np.asarray(tl.start_ns, np.int64)
    e = np.maximum(np.asarray(tl.end_ns, np.int64), s)  # (a negative duration counts as 0)
    t0 = int(s.min())
    span_bits = (int(e.max()) - t0).bit_length()
    track_bits = int(tr.max()).bit_length()
    if span_bits + track_bits <= 62:
        sk, ek = s - t0, e - t0
    else:  # ranks keep the order (and ties) of the times in < 2n values
        _, inv = np.unique(np.concatenate([s, e]), return_inverse=True)
        sk, ek = inv[:n].astype(np.int64), inv[n:].astype(np.int64)
        span_bits = (2 * n).bit_length()
    base = tr << span_bits
    ends = np.sort(base + ek)
    lo = np.searchsorted(tr, tr, side="left")  # first event of each event's track
    closed = np.searchsorted(ends, base + sk, side="right") - lo
    opened = np.arange(n) - lo  # earlier events of the same track
    depth = np.clip(opened - closed, 0, MAX_DEPTH).astype(np.uint8)
    bad = _row_overlaps(tr, s, e, depth)
    if len(bad):
        first = np.searchsorted(tr, bad, side="left")  # events are sorted by track
        last = np.searchsorted(tr, bad, side="right")
        for a, b in zip(first.tolist(), last.tolist()):
            first_fit_rows(range(a, b), s, e, depth)
    return depth


def first_fit_rows(idx, s, e, depth) -> None:
    """First-fit sub-rows for the events ``idx`` of one track (in start order), into ``depth``.
    Only the rows below the cap are tracked (an event that fits none of them goes on the last,
    shared row): O(MAX_DEPTH) per event, not O(rows so far)."""
    ends_of_row = []  # end time of the last event on each of the sub-rows 0..MAX_DEPTH-1
    for i in idx:
        si, ei = s[i], e[i]
        for r, last in enumerate(ends_of_row):
            if si >= last:
                ends_of_row[r] = ei
                depth[i] = r
                break
        else:
            if len(ends_of_row) < MAX_DEPTH:
                ends_of_row.append(ei)
                depth[i] = len(ends_of_row) - 1
            else:
                depth[i] = MAX_DEPTH


def _row_overlaps(tr, s, e, depth) -> np.ndarray:
    """Tracks where two events of one sub-row below the cap overlap (events sorted by track,
    start: within a row of a track, consecutive events must not overlap)."""
    bad = []
    for r in range(MAX_DEPTH):
        idx = np.flatnonzero(depth == r)
        if len(idx) < 2:
            continue
        t = tr[idx]
        clash = (t[1:] == t[:-1]) & (s[idx[1:]] < e[idx[:-1]])
        bad.append(t[1:][clash])
    return np.unique(np.concatenate(bad)) if bad else np.zeros(0, np.int64)


def payload_values(tl):
    """(indices, float64 values) of the events that carry an IKET payload (vectorised
    :func:`txlab.timeline.decode_payload`)."""
    if tl.payload_type is None:
        return np.zeros(0, np.uint32), np.zeros(0, np.float64)
    idx = np.flatnonzero(tl.payload_type)
    ptype = tl.payload_type[idx]
    raw = np.ascontiguousarray(tl.payload_raw[idx], dtype=np.uint64)
    lo32 = (raw & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    vals = raw.astype(np.float64)  # unknown types: the raw bits as a number
    for code, dtype in IKET_PAYLOAD_TYPES.items():  # the model's table: one source of the codes
        m = ptype == code
        if m.any():
            if dtype == "bool":
                vals[m] = (raw[m] != 0).astype(np.float64)
            else:  # 32-bit values sit in the low word
                bits = lo32[m] if np.dtype(dtype).itemsize == 4 else raw[m]
                vals[m] = bits.view(dtype).astype(np.float64)
    return idx.astype(np.uint32), vals


class Blob:
    """Columns appended at 8-byte aligned offsets; ``spec`` says where each one is."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, arr: np.ndarray) -> int:
        off = self.size
        b = np.ascontiguousarray(arr).tobytes()
        pad = -len(b) % 8
        self.parts.append(b + b"\0" * pad)
        self.size += len(b) + pad
        return off

    def bytes(self) -> bytes:
        return b"".join(self.parts)


_MAX_BITS = 32


def _bit_length_counts(v: np.ndarray) -> np.ndarray:
    """counts[b]: how many values of int64 ``v`` need b bits (negatives count as 0 bits, values
    of 41 bits or more as 41)."""
    # bit_length(x) is the float64 exponent of 2x + 1 (exact: x < 2**41 after the clip)
    x = np.minimum(v, 1 << 40)
    if x.min() < 0:
        np.maximum(x, 0, out=x)
    x <<= 1
    x += 1
    bl = (x.astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.intp) - 1023
    return np.bincount(bl, minlength=42)


def _choose_bits(v: np.ndarray, mn: int | None = None, mx: int | None = None) -> tuple[int, int]:
    """(k, exceptions) of the smallest packing of int64 ``v``: k bits per value with the values
    that do not fit as exceptions, or k = 64 (dense float64). Columns longer than 65536 values
    are judged on an evenly strided sample (the choice only affects the size, never exactness)."""
    n = len(v)
    if n == 0:
        return 0, 0
    mn = int(v.min()) if mn is None else mn
    mx = int(v.max()) if mx is None else mx
    if mn >= 0 and mx < 2:
        return mx, 0
    stride = max(1, n // 65536)
    sample = v[::stride]
    scale = n / len(sample)
    nneg = int(np.count_nonzero(sample < 0)) * scale if mn < 0 else 0
    above = (len(sample) - np.cumsum(_bit_length_counts(sample))) * scale  # wider than k bits
    best, best_cost = (64, 0), 8 * n
    for k in range(_MAX_BITS + 1):
        if n * k >= 1 << 32:  # the decoder's bit positions are uint32
            break
        x = int(round(above[k] + nneg))
        if x == 0 and (mn < 0 or mx >= 1 << k):
            x = 1  # (the sample missed them, but they exist)
        cost = -(-n * k // 8) + _EXC_BYTES * x
        if cost < best_cost:
            best, best_cost = (k, x), cost
    return best


def _pack_bits(v: np.ndarray, k: int) -> np.ndarray:
    """uint32 words of the little-endian k-bit stream of ``v`` (0 <= v < 2**k, 1 <= k <= 32),
    padded to a multiple of 32 values. Vectorised over blocks of 32 values, which fill exactly
    k words: one numpy operation per position in the block, not per value."""
    n = len(v)
    m = -(-n // 32)
    vals = np.empty(m * 32, np.uint32)
    vals[:n] = v
    vals[n:] = 0
    cols = np.ascontiguousarray(vals.reshape(m, 32).T)  # cols[j]: the j-th value of every block
    words = np.zeros((k, m), np.uint32)
    tmp = np.empty(m, np.uint32)
    for j in range(32):
        w, s = divmod(j * k, 32)
        np.left_shift(cols[j], np.uint32(s), out=tmp)
        words[w] |= tmp
        if s + k > 32:
            np.right_shift(cols[j], np.uint32(32 - s), out=tmp)
            words[w + 1] |= tmp
    return np.ascontiguousarray(words.T).ravel().astype("<u4", copy=False)


def pack_int(blob: Blob, v: np.ndarray, bits: int | None = None) -> dict:
    """Pack int64 ``v`` into ``blob``; ``bits`` forces a width, else the smallest packing is
    chosen."""
    v = np.asarray(v, dtype=np.int64)
    mn, mx = (int(v.min()), int(v.max())) if len(v) else (0, 0)
    k = _choose_bits(v, mn, mx)[0] if bits is None else bits
    spec = {"bits": k, "count": int(len(v)), "offset": 0, "exceptions": 0, "exceptions_offset": 0}
    if k == 64:
        spec["offset"] = blob.add(v.astype("<f8"))
        return spec
    fits = v
    if mn >= 0 and mx < 1 << k:
        xi = ()
    else:
        bad = (v < 0) | (v >= 1 << k)
        xi = np.flatnonzero(bad)
        fits = np.where(bad, 0, v)
    if k:
        spec["offset"] = blob.add(_pack_bits(fits, k))
    if len(xi):
        spec["exceptions"] = int(len(xi))
        spec["exceptions_offset"] = blob.add(xi.astype("<u4"))
        blob.add(v[xi].astype("<f8"))  # right after the (8-aligned) indices
    return spec


DENSITY_BINS = 4096


def encode_columns(tl) -> tuple[dict, bytes]:
    """The compact binary payload of ``tl`` (see the module docstring): ``(spec, data)``."""
    n = len(tl)
    ntr = len(tl.tracks)
    track = np.asarray(tl.track)
    if n and (track[0] < 0 or track[-1] >= ntr or np.any(track[1:] < track[:-1])):
        raise ValueError(
            "Timeline events must be sorted by track and name existing tracks "
            "(build it with Timeline(...), which sorts them)"
        )
    blob = Blob()
    offsets = np.searchsorted(track, np.arange(ntr + 1), side="left").astype("<u4")
    spec: dict = {"version": 3, "events": n, "tracks": ntr}
    spec["offsets"] = blob.add(offsets)
    name_id = np.asarray(tl.name_id, np.int64)
    spec["name"] = pack_int(blob, name_id, int(name_id.max()).bit_length() if n and name_id.min() >= 0 else None)
    s = np.asarray(tl.start_ns, np.int64)
    e = np.asarray(tl.end_ns, np.int64)
    t0 = int(s.min()) if n else 0
    spec["t0"] = t0
    spec["t1"] = int(e.max()) if n else 0
    dur = e - s
    has = offsets[1:] > offsets[:-1]
    lo = offsets[:-1][has].astype(np.int64)
    first = np.zeros(ntr, np.int64)
    first[has] = s[lo] - t0
    new = np.zeros(n, bool)
    new[lo] = True
    gap = np.zeros(n, np.int64)
    if n > 1:
        np.subtract(s[1:], e[:-1], out=gap[1:])
    gap[new] = 0
    # without overlaps every gap is <= its start delta (delta = gap + previous duration), so
    # deltas are only worth a look when some gap is negative
    gmin = int(gap.min()) if n else 0
    dmin = int(dur.min()) if n else 0
    spec["smax"] = int(s.max()) - t0 if n else 0  # (the decoder sizes its arrays from these)
    spec["dmin"], spec["dmax"] = dmin, int(dur.max()) if n else 0
    mode, step, bits = "gap", gap, None
    if gmin < 0:
        size = lambda kx: -(-n * kx[0] // 8) + _EXC_BYTES * kx[1] if kx[0] < 64 else 8 * n  # noqa: E731
        delta = np.zeros(n, np.int64)
        np.subtract(s[1:], s[:-1], out=delta[1:])
        delta[new] = 0
        kg, kd = _choose_bits(gap), _choose_bits(delta)
        mode, step, bits = ("delta", delta, kd[0]) if size(kd) < size(kg) else ("gap", gap, kg[0])
    spec["mode"] = mode
    spec["first"] = pack_int(blob, first)
    spec["step"] = pack_int(blob, step, bits)
    spec["dur"] = pack_int(blob, dur)
    maxdur = np.zeros(ntr, np.int64)
    if n:
        maxdur[has] = np.maximum.reduceat(dur, lo)
    spec["maxdur"] = pack_int(blob, maxdur)
    # (no negative gap or duration: nothing overlaps, every sub-row is 0)
    depth = np.zeros(n, np.uint8) if gmin >= 0 and dmin >= 0 else depths(tl)
    spec["max_depth"] = int(depth.max()) if n else 0
    spec["depth"] = pack_int(blob, depth.astype(np.int64), max(spec["max_depth"], 0).bit_length())
    counts, spec["density_shift"] = density(s, e, t0, spec["t1"], ends_after_starts=dmin >= 0)
    spec["density"] = pack_int(blob, counts)
    pidx, pval = payload_values(tl)
    spec["payload"] = None
    if len(pidx):
        spec["payload"] = {"count": int(len(pidx)), "offset": blob.add(pidx.astype("<u4"))}
        blob.add(pval.astype("<f8"))
    spec["bytes"] = blob.size
    return spec, blob.bytes()


def density(s, e, t0, t1, bins: int = DENSITY_BINS, ends_after_starts: bool = False):
    """(counts, shift): events overlapping each bin of 2**shift ns from t0 (the minimap; the
    smallest power-of-two bin width that covers [t0, t1] with at most ``bins`` bins, so that
    binning is a shift)."""
    shift = max(0, int(t1 - t0).bit_length() - (bins - 1).bit_length())
    nb = ((t1 - t0) >> shift) + 1
    if not len(s):
        return np.zeros(nb, np.int64), shift
    if t0:
        s, e = s - t0, e - t0
    c0 = s >> shift
    c1 = (e if ends_after_starts else np.maximum(e, s)) >> shift
    d = np.bincount(c0, minlength=nb)
    d[1:] -= np.bincount(c1, minlength=nb)[:-1]  # an event leaves after its end bin
    return np.cumsum(d), shift


def unpack_int(data: bytes, spec: dict) -> np.ndarray:
    n, k = spec["count"], spec["bits"]
    if k == 64:
        return np.frombuffer(data, "<f8", n, spec["offset"]).astype(np.int64)
    v = np.zeros(n, np.int64)
    if k:
        words = np.frombuffer(data, "<u4", -(-n // 32) * k, spec["offset"]).astype(np.uint64)
        p = np.arange(n, dtype=np.uint64) * np.uint64(k)
        w, sh = (p >> np.uint64(5)).astype(np.int64), p & np.uint64(31)
        u = words[w] >> sh
        over = sh + np.uint64(k) > np.uint64(32)
        u[over] |= words[w[over] + 1] << (np.uint64(32) - sh[over])
        v = (u & np.uint64((1 << k) - 1)).astype(np.int64)
    if spec["exceptions"]:
        xi = np.frombuffer(data, "<u4", spec["exceptions"], spec["exceptions_offset"])
        xoff = spec["exceptions_offset"] + 4 * spec["exceptions"] + (-4 * spec["exceptions"] % 8)
        v[xi] = np.frombuffer(data, "<f8", spec["exceptions"], xoff).astype(np.int64)
    return v


def decode_columns(spec: dict, data: bytes) -> dict:
    """Inverse of :func:`encode_columns` (reference for the front end's decoder and the tests):
    ``track``, ``name``, ``start``, ``end`` (int64 ns), ``depth``, ``payload`` (float64, NaN
    where none) per event; ``maxdur`` per track, ``density`` per minimap bin."""
    n, ntr = spec["events"], spec["tracks"]
    offsets = np.frombuffer(data, "<u4", ntr + 1, spec["offsets"]).astype(np.int64)
    track = np.repeat(np.arange(ntr), np.diff(offsets))
    first = unpack_int(data, spec["first"])
    step = unpack_int(data, spec["step"])
    dur = unpack_int(data, spec["dur"])
    start = np.zeros(n, np.int64)
    for t in range(ntr):  # per track (reference decoder: clarity over speed)
        lo, hi = offsets[t], offsets[t + 1]
        if lo == hi:
            continue
        st = step[lo:hi].copy()
        st[0] = spec["t0"] + first[t]
        if spec["mode"] == "gap":
            st[1:] += dur[lo : hi - 1]
        start[lo:hi] = np.cumsum(st)
    payload = np.full(n, np.nan)
    if spec["payload"]:
        k, off = spec["payload"]["count"], spec["payload"]["offset"]
        pidx = np.frombuffer(data, "<u4", k, off)
        payload[pidx] = np.frombuffer(data, "<f8", k, off + 4 * k + (-4 * k % 8))
    return {
        "track": track,
        "name": unpack_int(data, spec["name"]),
        "start": start,
        "end": start + dur,
        "depth": unpack_int(data, spec["depth"]),
        "payload": payload,
        "maxdur": unpack_int(data, spec["maxdur"]),
        "density": unpack_int(data, spec["density"]),
    }
