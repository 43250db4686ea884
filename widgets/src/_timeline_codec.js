// Decoder of TimelineView's compact event columns (the encoder and the format are in
// txlab/views/timeline.py: encode_columns; decode_columns there is the reference).
// Input: meta.columns (the spec) and the `data` bytes; output: per-event typed arrays.

const UINT = { 1: Uint8Array, 2: Uint16Array, 4: Uint32Array };

/** An ArrayBuffer holding `value`'s bytes at offset 0 (copied only when misaligned). */
function aligned(value) {
  if (!value) return new ArrayBuffer(0);
  if (value instanceof ArrayBuffer) return value;
  if (ArrayBuffer.isView(value)) {
    const u8 = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) return value.buffer;
    return u8.slice().buffer;
  }
  return new ArrayBuffer(0);
}

/** Float64Array of a packed integer column (width 1/2/4 + exceptions, or 8 = float64). */
function unpackInt(buf, c) {
  if (c.w === 8) return new Float64Array(buf, c.off, c.n).slice();
  const out = new Float64Array(c.n);
  out.set(new UINT[c.w](buf, c.off, c.n));
  if (c.xn) {
    const xi = new Uint32Array(buf, c.xoff, c.xn);
    const xv = new Float64Array(buf, c.xoff + 8 * Math.ceil((4 * c.xn) / 8), c.xn);
    for (let k = 0; k < c.xn; k++) out[xi[k]] = xv[k];
  }
  return out;
}

/**
 * Decode the columns: { n, offsets (Uint32Array, tracks + 1), name (Uint8/16/32Array),
 * start, dur (Float64Array, ns), depth (Uint8Array), payload (Float64Array, NaN = none; or null) },
 * or null when the bytes do not match the spec (an update whose other half has not arrived).
 */
export function decodeColumns(spec, value) {
  const buf = aligned(value);
  const n = spec.n, ntr = spec.tracks;
  const need = spec.bytes || 0;
  if (buf.byteLength !== need) return null;   // data and meta out of step
  const offsets = new Uint32Array(buf, spec.offsets, ntr + 1);
  const name = new UINT[spec.name.w](buf, spec.name.off, n);
  const first = unpackInt(buf, spec.first);
  const dur = unpackInt(buf, spec.dur);
  const start = unpackInt(buf, spec.step);   // decoded in place: step -> absolute start
  const gap = spec.mode === "gap";
  const t0 = spec.t0 || 0;
  for (let t = 0; t < ntr; t++) {
    const lo = offsets[t], hi = offsets[t + 1];
    if (lo >= hi) continue;
    start[lo] = t0 + first[t];
    if (gap) for (let i = lo + 1; i < hi; i++) start[i] += start[i - 1] + dur[i - 1];
    else for (let i = lo + 1; i < hi; i++) start[i] += start[i - 1];
  }
  const depth = spec.depth == null ? new Uint8Array(n) : new Uint8Array(buf, spec.depth, n);
  let payload = null;
  if (spec.payload) {
    const k = spec.payload.n, off = spec.payload.off;
    const pi = new Uint32Array(buf, off, k);
    const pv = new Float64Array(buf, off + 8 * Math.ceil((4 * k) / 8), k);
    payload = new Float64Array(n).fill(NaN);
    for (let j = 0; j < k; j++) payload[pi[j]] = pv[j];
  }
  return { n, offsets, name, start, dur, depth, payload };
}
