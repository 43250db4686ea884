// TimelineView: canvas timeline of in-kernel events (CudaProfiler / IKET).
// Events arrive as one buffer of compact binary columns sorted by (track, start) (format:
// txlab/views/timeline.py, decoder: _timeline_codec.js). Drawing is level-of-detail: per track
// row, each pixel column is painted once; when an event is narrower than a pixel the loop jumps
// (binary search) to the first event that starts in the next column, so the cost per frame is
// O(rows * width * log n) instead of O(events).
import { h, theme, categorical, hiDpiCanvas, tooltip, isolateKeys } from "./_common.js";
import { decodeColumns } from "./_timeline_codec.js";

const LABEL_W = 170;
const AXIS_H = 22;
const ROW_H = 18;
const HEADER_H = 16;
const MINI_H = 36;

function fmtNs(ns, unit) {
  // a timeline whose clocks are not nanoseconds (the CPU emulator's count emulated work) says so
  if (unit && unit !== "ns") return `${Math.round(ns).toLocaleString()} ${unit}`;
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${Math.round(ns)} ns`;
}

function niceStep(span, target) {
  const raw = span / Math.max(1, target);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** first index i in [lo, hi) with a[i] >= x */
function lowerBound(a, x, lo, hi) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function build(model) {
  const meta = model.get("meta") || {};
  const tracks = meta.tracks || [];
  const tDecode = performance.now();
  // (meta and data change together in one message; a mismatch is a half-applied update: show
  // nothing until the rest arrives)
  const cols = (meta.columns && decodeColumns(meta.columns, model.get("data"))) || {
    n: 0, offsets: new Uint32Array(tracks.length + 1), name: new Uint8Array(0), start: new Float64Array(0),
    dur: new Float64Array(0), depth: new Uint8Array(0), payload: null, maxDur: new Float64Array(tracks.length),
    density: new Float64Array(0), t0: 0, t1: 0 };
  const decodeMs = performance.now() - tDecode;
  const { n, name, start, dur, depth, maxDur, density } = cols;
  const payload = cols.payload || new Float64Array(0);
  const tStart = cols.offsets;
  // times inside the widget are ns after `origin` (the earliest start); labels add it back
  const origin = n ? cols.t0 : 0;
  const t0 = 0;
  let t1 = n ? cols.t1 - cols.t0 : 1;
  if (t1 <= t0) t1 = t0 + 1;
  // rows: a header per outer group (path[:-1]) then one row per track
  const rows = [];
  let prevGroup = null;
  const maxDepth = meta.max_depth || 0;
  const rowH = ROW_H + (maxDepth > 0 ? 6 * Math.min(maxDepth, 3) : 0);
  let y = 0;
  tracks.forEach((path, t) => {
    const group = path.slice(0, -1).join(" / ");
    if (group !== prevGroup) {
      rows.push({ kind: "header", label: group || "kernel", y, h: HEADER_H });
      y += HEADER_H;
      prevGroup = group;
    }
    rows.push({ kind: "track", track: t, label: path[path.length - 1] || "", path, y, h: rowH });
    y += rowH;
  });
  return { meta, name, start, dur, depth, payload, tracks, n, tStart, maxDur, bins: density, binNs: 2 ** (cols.densityShift || 0), origin, t0, t1, rows, contentH: y, rowH, decodeMs };
}

function render({ model, el }) {
  isolateKeys(el);
  el.classList.add("txlab-timeline");
  const mount = performance.now();   // first_render_ms covers decoding the columns too
  let th = theme(el);
  let D = build(model);
  const hidden = new Set();
  const stats = { first_render_ms: null, decode_ms: D.decodeMs, frames: 0, frame_ms: [], last_frame_ms: null, median_frame_ms: null };

  const title = h("span", { style: { fontWeight: "600" } });
  const prov = h("span", { "data-testid": "timeline-provenance", style: { marginLeft: "8px", fontSize: "11px" } });
  const btn = (label, testid, tip, fn) => h("button", { "data-testid": testid, title: tip, onclick: fn,
    style: { marginLeft: "4px", fontSize: "11px", padding: "1px 6px" } }, label);
  // frame statistics: a muted "2.1 ms/frame" for people, the full JSON hidden for benchmarks
  const frameEl = h("span", { "data-testid": "timeline-frame", style: { fontSize: "10px", marginLeft: "8px", fontVariantNumeric: "tabular-nums" } });
  const statsEl = h("span", { "data-testid": "timeline-stats", hidden: true, style: { display: "none" } });
  const toolbar = h("div", { style: { display: "flex", alignItems: "center", flexWrap: "wrap", gap: "2px", marginBottom: "4px" } },
    title, prov,
    h("span", { style: { flex: "1" } }),
    btn("+", "timeline-zoom-in", "zoom in (or mouse wheel)", () => zoomAt(0.5, (view.a + view.b) / 2)),
    btn("−", "timeline-zoom-out", "zoom out", () => zoomAt(2, (view.a + view.b) / 2)),
    btn("reset", "timeline-reset", "show the whole trace", () => { view.a = D.t0; view.b = D.t1; view.scroll = 0; schedule(); }),
    frameEl, statsEl);
  const legend = h("div", { "data-testid": "timeline-legend", style: { display: "flex", flexWrap: "wrap", gap: "8px", fontSize: "11px", margin: "2px 0 4px" } });
  const warn = h("div", { "data-testid": "timeline-warnings", style: { fontSize: "11px" } });
  const mini = hiDpiCanvas(600, MINI_H);
  mini.canvas.setAttribute("data-testid", "timeline-minimap");
  mini.canvas.style.display = "block";
  mini.canvas.style.cursor = "pointer";
  const main = hiDpiCanvas(600, 300);
  main.canvas.setAttribute("data-testid", "timeline-canvas");
  main.canvas.style.display = "block";
  main.canvas.style.cursor = "grab";
  const wrap = h("div", { style: { position: "relative" } }, mini.canvas, main.canvas);
  el.append(toolbar, legend, warn, wrap);
  const tip = tooltip(wrap);

  const view = { a: D.t0, b: D.t1, scroll: 0 };
  const colorOf = (k) => categorical(k);

  function refreshChrome() {
    const m = D.meta;
    title.textContent = m.title || "timeline";
    prov.textContent = m.provenance || "";
    prov.style.color = m.synthetic ? th.error : th.fgMuted;
    legend.replaceChildren(...(m.names || []).map((nm, k) => {
      const item = h("span", { "data-testid": "timeline-legend-item", title: "click to hide/show",
        style: { cursor: "pointer", opacity: hidden.has(k) ? "0.35" : "1", userSelect: "none" },
        onclick: () => { hidden.has(k) ? hidden.delete(k) : hidden.add(k); refreshChrome(); schedule(); } },
        h("span", { style: { display: "inline-block", width: "10px", height: "10px", marginRight: "3px", background: colorOf(k), verticalAlign: "middle" } }),
        nm);
      return item;
    }));
    const w = Object.entries(m.warnings || {});
    warn.textContent = w.length ? "decoder warnings: " + w.map(([k, v]) => `${k} ×${v}`).join("; ") : "";
    warn.style.color = th.error;
  }

  function size() {
    const width = Math.max(320, el.clientWidth || 800);
    const height = Math.max(120, (model.get("height") || 420) - MINI_H - 60);
    mini.resize(width, MINI_H);
    main.resize(width, Math.min(height, D.contentH + AXIS_H + 4));
  }

  const xOf = (t, W) => LABEL_W + ((t - view.a) / (view.b - view.a)) * (W - LABEL_W);
  const tOf = (x, W) => view.a + ((x - LABEL_W) / (W - LABEL_W)) * (view.b - view.a);

  function drawMini() {
    const { ctx, width: W } = mini;
    ctx.fillStyle = th.bg2;
    ctx.fillRect(0, 0, W, MINI_H);
    // events per column, resampled from the density bins the kernel side computed
    if (!D.density || D.density.length !== W) {
      const dens = new Float32Array(W);
      const B = D.bins.length, bw = D.binNs, span = D.t1 - D.t0;
      let mx = 0;
      for (let c = 0; c < W && B; c++) {
        // bins of bw ns from the first event; column c shows [c, c + 1) * span / W
        const lo = Math.floor((c * span) / W / bw), hi = Math.max(lo + 1, Math.ceil(((c + 1) * span) / W / bw));
        let v = 0;
        for (let b = lo; b < hi && b < B; b++) if (D.bins[b] > v) v = D.bins[b];
        dens[c] = v;
        if (v > mx) mx = v;
      }
      D.density = dens; D.densMax = mx || 1;
    }
    ctx.fillStyle = th.accent;
    for (let c = 0; c < W; c++) {
      const hgt = (D.density[c] / D.densMax) * (MINI_H - 4);
      if (hgt > 0) ctx.fillRect(c, MINI_H - 2 - hgt, 1, hgt);
    }
    const span = D.t1 - D.t0;
    const x0 = ((view.a - D.t0) / span) * W, x1 = ((view.b - D.t0) / span) * W;
    ctx.fillStyle = th.dark ? "rgba(255,255,255,0.15)" : "rgba(0,0,0,0.12)";
    ctx.fillRect(x0, 0, Math.max(2, x1 - x0), MINI_H);
    ctx.strokeStyle = th.fg;
    ctx.strokeRect(x0 + 0.5, 0.5, Math.max(2, x1 - x0) - 1, MINI_H - 1);
  }

  function drawMain() {
    const { ctx, width: W, height: H } = main;
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, W, H);
    ctx.font = `11px ${th.font}`;
    ctx.textBaseline = "middle";
    const plotW = W - LABEL_W;
    const nsPerPx = (view.b - view.a) / plotW;
    // axis
    const step = niceStep(view.b - view.a, plotW / 110);
    ctx.strokeStyle = th.border;
    ctx.fillStyle = th.fgMuted;
    ctx.beginPath();
    for (let t = Math.ceil((view.a + D.origin) / step) * step - D.origin; t <= view.b; t += step) {
      const x = Math.round(xOf(t, W)) + 0.5;
      ctx.moveTo(x, AXIS_H - 4); ctx.lineTo(x, H);
      ctx.fillText(fmtNs(t + D.origin, D.meta.clock_unit), x + 3, AXIS_H / 2);
    }
    ctx.globalAlpha = 0.35; ctx.stroke(); ctx.globalAlpha = 1;
    const yTop = AXIS_H - view.scroll;
    const { start, dur, name, depth, tStart, maxDur } = D;
    const sub = D.rowH > ROW_H ? 6 : 0;
    for (const row of D.rows) {
      const y = yTop + row.y;
      if (y + row.h < AXIS_H || y > H) continue;
      if (row.kind === "header") {
        ctx.fillStyle = th.bg2;
        ctx.fillRect(0, y, W, row.h);
        ctx.fillStyle = th.fg;
        ctx.fillText(row.label, 4, y + row.h / 2);
        continue;
      }
      const t = row.track;
      const lo = tStart[t], hi = tStart[t + 1];
      // first event that can overlap the window
      let i = lowerBound(start, view.a - maxDur[t], lo, hi);
      let lastPx = -1;
      const barH = ROW_H - 4;
      while (i < hi) {
        const s = start[i];
        if (s > view.b) break;
        const e = s + dur[i];
        if (e < view.a || hidden.has(name[i])) { i++; continue; }
        let x0 = LABEL_W + (s - view.a) / nsPerPx;
        let x1 = LABEL_W + (e - view.a) / nsPerPx;
        if (x0 < LABEL_W) x0 = LABEL_W;
        if (x1 > W) x1 = W;
        const yy = y + 2 + depth[i] * sub;
        ctx.fillStyle = colorOf(name[i]);
        if (x1 - x0 < 1) {
          const px = Math.floor(x0);
          if (px > lastPx) {
            ctx.fillRect(px, yy, 1, barH);
            lastPx = px;
          }
          // skip every event that starts inside this pixel column (level of detail)
          const next = view.a + (px + 1 - LABEL_W) * nsPerPx;
          const j = lowerBound(start, next, i + 1, hi);
          i = j > i + 1 ? j : i + 1;
          continue;
        }
        ctx.fillRect(x0, yy, x1 - x0, barH);
        if (x1 - x0 > 40) {
          ctx.fillStyle = "#fff";
          ctx.save();
          ctx.beginPath(); ctx.rect(x0, yy, x1 - x0, barH); ctx.clip();
          ctx.fillText(D.meta.names[name[i]], x0 + 3, yy + barH / 2);
          ctx.restore();
        }
        lastPx = Math.floor(x1);
        i++;
      }
      // label gutter
      ctx.fillStyle = th.bg;
      ctx.fillRect(0, y, LABEL_W, row.h);
      ctx.fillStyle = th.fg;
      ctx.fillText(row.label, 14, y + row.h / 2);
      ctx.strokeStyle = th.border;
      ctx.globalAlpha = 0.3;
      ctx.beginPath(); ctx.moveTo(0, y + row.h - 0.5); ctx.lineTo(W, y + row.h - 0.5); ctx.stroke();
      ctx.globalAlpha = 1;
    }
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, LABEL_W, AXIS_H);
    ctx.fillStyle = th.fgMuted;
    ctx.fillText(`${D.n.toLocaleString()} events`, 4, AXIS_H / 2);
  }

  let pending = 0;
  function frame() {
    pending = 0;
    const t = performance.now();
    drawMain();
    drawMini();
    const ms = performance.now() - t;
    if (stats.first_render_ms === null) stats.first_render_ms = performance.now() - mount;
    stats.frames += 1;
    stats.last_frame_ms = ms;
    stats.frame_ms.push(ms);
    if (stats.frame_ms.length > 240) stats.frame_ms.shift();
    const sorted = [...stats.frame_ms].sort((x, y) => x - y);
    stats.median_frame_ms = sorted[sorted.length >> 1];
    statsEl.textContent = JSON.stringify({
      first_render_ms: +stats.first_render_ms.toFixed(2), decode_ms: +stats.decode_ms.toFixed(2), mounted_at_ms: +mount.toFixed(1), frames: stats.frames,
      median_frame_ms: +stats.median_frame_ms.toFixed(3), last_frame_ms: +ms.toFixed(3),
      window_ns: [Math.round(view.a + D.origin), Math.round(view.b + D.origin)],
    });
    frameEl.textContent = `${ms.toFixed(1)} ms/frame`;
    frameEl.title = `draw time of the last frame; median ${stats.median_frame_ms.toFixed(1)} ms over ${stats.frame_ms.length} frames; first render ${stats.first_render_ms.toFixed(0)} ms`;
    frameEl.style.color = th.fgMuted;
    frameEl.style.opacity = "0.7";
  }
  function schedule() {
    if (!pending) pending = requestAnimationFrame(frame);
  }

  function clampView() {
    const span = D.t1 - D.t0;
    const minSpan = 10;
    let w = view.b - view.a;
    if (w < minSpan) { const c = (view.a + view.b) / 2; view.a = c - minSpan / 2; view.b = c + minSpan / 2; w = minSpan; }
    if (w > span * 1.05) { view.a = D.t0; view.b = D.t1; return; }
    if (view.a < D.t0 - span * 0.02) { view.b += D.t0 - view.a; view.a = D.t0; }
    if (view.b > D.t1 + span * 0.02) { view.a -= view.b - D.t1; view.b = D.t1; }
  }
  function zoomAt(factor, tc) {
    view.a = tc - (tc - view.a) * factor;
    view.b = tc + (view.b - tc) * factor;
    clampView();
    schedule();
  }

  function hit(mx, my) {
    const W = main.width;
    if (mx < LABEL_W || my < AXIS_H) return null;
    const yc = my - AXIS_H + view.scroll;
    const row = D.rows.find((r) => r.kind === "track" && yc >= r.y && yc < r.y + r.h);
    if (!row) return null;
    const t = row.track;
    const tm = tOf(mx, W);
    const tol = ((view.b - view.a) / (W - LABEL_W)) * 3;
    const lo = D.tStart[t], hi = D.tStart[t + 1];
    let best = -1, bestD = Infinity;
    let i = lowerBound(D.start, tm - D.maxDur[t] - tol, lo, hi);
    for (; i < hi && D.start[i] <= tm + tol; i++) {
      if (hidden.has(D.name[i])) continue;
      const s = D.start[i], e = s + D.dur[i];
      const d = tm < s ? s - tm : tm > e ? tm - e : 0;
      if (d <= tol && (d < bestD || (d === bestD && D.depth[i] > (best >= 0 ? D.depth[best] : -1)))) { best = i; bestD = d; }
    }
    return best >= 0 ? { i: best, row } : null;
  }

  // interaction
  const cv = main.canvas;
  let drag = null;
  const onWheel = (ev) => {
    ev.preventDefault();
    const r = cv.getBoundingClientRect();
    const mx = ev.clientX - r.left;
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      const d = (ev.shiftKey ? ev.deltaY : ev.deltaX) / (main.width - LABEL_W) * (view.b - view.a);
      view.a += d; view.b += d; clampView(); schedule(); return;
    }
    const tc = mx > LABEL_W ? tOf(mx, main.width) : (view.a + view.b) / 2;
    zoomAt(Math.exp(ev.deltaY * 0.0015), tc);
  };
  const onDown = (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, a: view.a, b: view.b, scroll: view.scroll };
    cv.style.cursor = "grabbing";
    tip.hide();
  };
  const onMove = (ev) => {
    const r = cv.getBoundingClientRect();
    if (drag) {
      const dt = ((ev.clientX - drag.x) / (main.width - LABEL_W)) * (drag.b - drag.a);
      view.a = drag.a - dt; view.b = drag.b - dt;
      const maxScroll = Math.max(0, D.contentH + AXIS_H - main.height);
      view.scroll = Math.min(maxScroll, Math.max(0, drag.scroll - (ev.clientY - drag.y)));
      clampView(); schedule();
      return;
    }
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const found = hit(mx, my);
    if (!found) { tip.hide(); return; }
    const i = found.i;
    const lines = [
      D.meta.names[D.name[i]],
      D.dur[i] > 0 ? `duration ${fmtNs(D.dur[i], D.meta.clock_unit)}` : "instant",
      `start ${fmtNs(D.start[i] + D.origin, D.meta.clock_unit)}`,
      `lane ${found.row.path.join(" / ")}`,
    ];
    if (D.payload.length && !Number.isNaN(D.payload[i])) lines.push(`payload ${D.payload[i]}`);
    tip.show(mx, my + MINI_H, lines);
  };
  const onUp = () => { drag = null; cv.style.cursor = "grab"; };
  const onLeave = () => { tip.hide(); };
  cv.addEventListener("wheel", onWheel, { passive: false });
  cv.addEventListener("mousedown", onDown);
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  cv.addEventListener("mouseleave", onLeave);
  // minimap: click or drag to centre the window there
  let miniDrag = false;
  const miniTo = (ev) => {
    const r = mini.canvas.getBoundingClientRect();
    const tc = D.t0 + ((ev.clientX - r.left) / mini.width) * (D.t1 - D.t0);
    const w = view.b - view.a;
    view.a = tc - w / 2; view.b = tc + w / 2; clampView(); schedule();
  };
  const onMiniDown = (ev) => { miniDrag = true; miniTo(ev); };
  const onMiniMove = (ev) => { if (miniDrag) miniTo(ev); };
  const onMiniUp = () => { miniDrag = false; };
  mini.canvas.addEventListener("mousedown", onMiniDown);
  window.addEventListener("mousemove", onMiniMove);
  window.addEventListener("mouseup", onMiniUp);

  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => { size(); D.density = null; schedule(); }) : null;
  if (ro) ro.observe(el);

  const reload = () => {
    D = build(model);
    stats.decode_ms = D.decodeMs;
    view.a = D.t0; view.b = D.t1; view.scroll = 0;
    th = theme(el);
    refreshChrome(); size(); schedule();
  };
  const traits = ["meta", "data", "height"];
  let reloadPending = false;
  const onChange = () => {
    if (reloadPending) return;
    reloadPending = true;
    queueMicrotask(() => { reloadPending = false; reload(); });
  };
  for (const t of traits) model.on(`change:${t}`, onChange);

  refreshChrome();
  size();
  frame();

  return () => {
    for (const t of traits) model.off(`change:${t}`, onChange);
    cv.removeEventListener("wheel", onWheel);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    window.removeEventListener("mousemove", onMiniMove);
    window.removeEventListener("mouseup", onMiniUp);
    if (ro) ro.disconnect();
    if (pending) cancelAnimationFrame(pending);
  };
}

export default { render };
