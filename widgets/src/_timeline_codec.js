// Decoder of TimelineView's bit-packed event columns. The format and the encoder are in
// txlab/views/timeline.py (encode_columns; decode_columns there is the reference, and
// tests/test_timeline_view.py runs this file under node against it).

/** An ArrayBuffer with `value`'s bytes at offset 0 (copied only when `value` is a partial view). */
function whole(value) {
  if (!value) return new ArrayBuffer(0);
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value)) {
    if (value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) return value.buffer;
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice().buffer;
  }
  return new ArrayBuffer(0);
}

/** Unpack integer column `c` into `out` (a typed array of c.count elements, zero-filled). */
function unpackInto(buf, c, out) {
  const n = c.count, k = c.bits;
  if (k === 64) {
    out.set(new Float64Array(buf, c.offset, n));
    return out;
  }
  if (k > 0) {
    const words = new Uint32Array(buf, c.offset, Math.ceil(n / 32) * k);
    const mask = k === 32 ? -1 : 2 ** k - 1;
    for (let i = 0, p = 0; i < n; i++, p += k) {
      const w = p >>> 5, s = p & 31;
      let v = words[w] >>> s;
      if (s + k > 32) v |= words[w + 1] << (32 - s);
      out[i] = (v & mask) >>> 0;
    }
  }
  if (c.exceptions) {
    const xi = new Uint32Array(buf, c.exceptions_offset, c.exceptions);
    const xv = new Float64Array(buf, c.exceptions_offset + 8 * Math.ceil(c.exceptions / 2), c.exceptions);
    for (let j = 0; j < c.exceptions; j++) out[xi[j]] = xv[j];
  }
  return out;
}

/** The smallest unsigned typed array that holds every value of column `c` (exceptions too). */
function intArray(buf, c) {
  let max = c.bits >= 32 ? 2 ** 32 : 2 ** c.bits;
  if (c.exceptions) {
    const xv = new Float64Array(buf, c.exceptions_offset + 8 * Math.ceil(c.exceptions / 2), c.exceptions);
    for (let j = 0; j < c.exceptions; j++) if (!(xv[j] >= 0 && xv[j] < 2 ** 32)) return new Float64Array(c.count);
    for (let j = 0; j < c.exceptions; j++) if (xv[j] >= max) max = xv[j] + 1;
  }
  if (c.bits === 64) return new Float64Array(c.count);
  return max <= 256 ? new Uint8Array(c.count) : max <= 65536 ? new Uint16Array(c.count) : new Uint32Array(c.count);
}

/**
 * Starts (relative to t0) and durations from the `step` and `dur` columns: Uint32Arrays when
 * every value fits (half the memory of Float64Arrays; fresh memory is what decoding a million
 * events mostly costs), else Float64Arrays.
 */
function startsAndDurations(buf, spec, offsets, first) {
  const n = spec.events, ntr = spec.tracks, st = spec.step, du = spec.dur, gap = spec.mode === "gap";
  const general = st.exceptions || du.exceptions || st.bits === 64 || du.bits === 64;
  const start = (spec.smax || 0) < 2 ** 32 ? new Uint32Array(n) : new Float64Array(n);
  const dur = !general || ((spec.dmin || 0) >= 0 && (spec.dmax || 0) < 2 ** 32) ? new Uint32Array(n) : new Float64Array(n);
  if (general) {
    // general path: unpack, patch the exceptions, then prefix-sum per track
    unpackInto(buf, du, dur);
    const steps = unpackInto(buf, st, new Float64Array(n));   // (steps may be negative)
    for (let t = 0; t < ntr; t++) {
      const lo = offsets[t], hi = offsets[t + 1];
      if (lo >= hi) continue;
      let prev = first[t];
      start[lo] = prev;
      for (let i = lo + 1; i < hi; i++) {
        prev += steps[i] + (gap ? dur[i - 1] : 0);
        start[i] = prev;
      }
    }
    return { start, dur };
  }
  // common path (every value fits its width): one fused pass over both bit streams
  const ks = st.bits, kd = du.bits;
  // (a 0-bit stream never advances: it reads word 0 of a zero array, masked to 0)
  const sw = ks ? new Uint32Array(buf, st.offset, Math.ceil(n / 32) * ks) : new Uint32Array(2);
  const dw = kd ? new Uint32Array(buf, du.offset, Math.ceil(n / 32) * kd) : new Uint32Array(2);
  const ms = ks === 32 ? -1 : 2 ** ks - 1, md = kd === 32 ? -1 : 2 ** kd - 1;
  for (let t = 0; t < ntr; t++) {
    const lo = offsets[t], hi = offsets[t + 1];
    let prev = first[t], prevDur = 0;
    for (let i = lo, ps = lo * ks, pd = lo * kd; i < hi; i++, ps += ks, pd += kd) {
      let a = ps >>> 5, b = ps & 31;
      let v = sw[a] >>> b;
      if (b + ks > 32) v |= sw[a + 1] << (32 - b);
      const step = (v & ms) >>> 0;
      a = pd >>> 5; b = pd & 31;
      v = dw[a] >>> b;
      if (b + kd > 32) v |= dw[a + 1] << (32 - b);
      const d = (v & md) >>> 0;
      const s0 = i === lo ? prev : gap ? prev + prevDur + step : prev + step;
      start[i] = s0; dur[i] = d;
      prev = s0; prevDur = d;
    }
  }
  return { start, dur };
}

/**
 * Decode the columns: { n, offsets (Uint32Array, tracks + 1), name, depth (unsigned typed arrays),
 * start (ns after t0), dur (ns), payload (Float64Array, NaN = none; or null), maxDur (per track),
 * density (events per bin of 2 ** densityShift ns from t0), t0, t1 (absolute ns) }, or null when the bytes do not match the spec
 * (an update whose other half has not arrived yet).
 */
export function decodeColumns(spec, value) {
  const buf = whole(value);
  if (buf.byteLength !== (spec.bytes || 0)) return null;
  const n = spec.events, ntr = spec.tracks;
  const offsets = new Uint32Array(buf, spec.offsets, ntr + 1);
  const name = unpackInto(buf, spec.name, intArray(buf, spec.name));
  const depth = unpackInto(buf, spec.depth, intArray(buf, spec.depth));
  const first = unpackInto(buf, spec.first, new Float64Array(ntr));
  const t0 = spec.t0 || 0;
  const { start, dur } = startsAndDurations(buf, spec, offsets, first);
  let payload = null;
  if (spec.payload) {
    const k = spec.payload.count, off = spec.payload.offset;
    const pi = new Uint32Array(buf, off, k);
    const pv = new Float64Array(buf, off + 8 * Math.ceil(k / 2), k);
    payload = new Float64Array(n).fill(NaN);
    for (let j = 0; j < k; j++) payload[pi[j]] = pv[j];
  }
  const maxDur = unpackInto(buf, spec.maxdur, new Float64Array(ntr));
  const density = unpackInto(buf, spec.density, new Float64Array(spec.density.count));
  return { n, offsets, name, start, dur, depth, payload, maxDur, density, densityShift: spec.density_shift || 0,
    t0, t1: spec.t1 || 0 };
}
