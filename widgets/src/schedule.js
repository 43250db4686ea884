// SchedulerExplorer: two tile-scheduler configurations side by side.
// Python sends per side a header (`left_view`: grid, metrics, column names) and the visits as an
// int32 buffer (`left_data`, visits x columns). Controls edit `left` / `right`; Python re-traces.
import { h, theme, hiDpiCanvas, tooltip, isolateKeys } from "./_common.js";

function int32View(value) {
  if (!value) return new Int32Array(0);
  if (value instanceof DataView) return new Int32Array(value.buffer, value.byteOffset, value.byteLength >> 2);
  if (value instanceof ArrayBuffer) return new Int32Array(value);
  if (ArrayBuffer.isView(value)) return new Int32Array(value.buffer, value.byteOffset, value.byteLength >> 2);
  return new Int32Array(0);
}

function ctaColor(i) {
  // golden-angle hues: neighbouring CTA ids stay distinguishable beyond 20 CTAs
  return `hsl(${(i * 137.508) % 360}, 62%, 55%)`;
}

function seqColor(t) {
  // viridis-like ramp, t in [0, 1]
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const x = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function fmt(v) {
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(3);
  return String(v);
}

function metricRows(m) {
  if (!m) return [];
  const rows = [
    ["visits", m.visits],
    ["tiles/CTA min·max·mean", `${m.tiles_per_cta.min} · ${m.tiles_per_cta.max} · ${fmt(m.tiles_per_cta.mean)}`],
    ["imbalance (max/mean)", m.imbalance],
    ["waves", m.waves],
  ];
  const c = m.coverage;
  if (c.missing || c.duplicated || c.out_of_grid) {
    rows.push(["coverage", `missing ${c.missing}, duplicated ${c.duplicated}, out of grid ${c.out_of_grid}`]);
  } else {
    rows.push(["coverage", "every tile once"]);
  }
  if (m.gemm) {
    rows.push(["A panel loads (est.)", `${m.gemm.a_panel_loads} (row-major ${m.gemm.rowmajor_a_panel_loads})`]);
    rows.push(["B panel loads (est.)", `${m.gemm.b_panel_loads} (row-major ${m.gemm.rowmajor_b_panel_loads})`]);
    rows.push(["DRAM vs row-major", `${fmt(m.gemm.traffic_vs_rowmajor)}×`]);
  }
  if (m.attention) {
    const a = m.attention;
    rows.push(["KV blocks/CTA min·max", `${a.cost.min} · ${a.cost.max}`]);
    rows.push(["cost imbalance", a.cost_imbalance]);
    rows.push(["makespan / ideal", `${a.makespan_kv_blocks} / ${fmt(a.ideal_kv_blocks)}`]);
    rows.push(["efficiency", a.efficiency]);
  }
  return rows;
}

function makeSide(model, side, root, shared, th) {
  const panel = h("div", { class: "txlab-schedule-side", "data-testid": `side-${side}`,
    style: { flex: "1 1 0", minWidth: "280px", display: "flex", flexDirection: "column", gap: "6px" } });
  const controls = h("div", { class: "txlab-schedule-controls",
    style: { display: "flex", flexWrap: "wrap", gap: "4px 10px", alignItems: "center", fontSize: "12px" } });
  const status = h("div", { "data-testid": `status-${side}`, style: { fontSize: "12px", color: th.fgMuted, minHeight: "16px" } });
  const canvasBox = h("div", { style: { position: "relative" } });
  const cv = hiDpiCanvas(320, 320);
  cv.canvas.setAttribute("data-testid", `grid-${side}`);
  canvasBox.append(cv.canvas);
  const tip = tooltip(canvasBox);
  const metrics = h("table", { "data-testid": `metrics-${side}`, style: { fontSize: "12px", borderCollapse: "collapse" } });
  panel.append(controls, status, canvasBox, metrics);
  root.append(panel);

  let data = new Int32Array(0);
  let view = {};
  let ncols = 0;
  let cellIndex = null; // (layer,row,col) -> visit index of first visit
  let geom = { cell: 1, ox: 0, oy: 0 };
  let layer = 0;

  const send = (mutate) => {
    const cfg = JSON.parse(JSON.stringify(model.get(side) || {}));
    cfg.params = cfg.params || {};
    mutate(cfg);
    model.set(side, cfg);
    model.save_changes();
  };

  function buildControls() {
    controls.replaceChildren();
    const schema = model.get("schema") || {};
    const cfg = model.get(side) || {};
    const spec = schema[cfg.scheduler];
    const sel = h("select", { "data-testid": `scheduler-${side}`, title: "scheduler class" });
    for (const name of Object.keys(schema)) {
      const o = h("option", { value: name }, name);
      if (name === cfg.scheduler) o.selected = true;
      sel.append(o);
    }
    sel.addEventListener("change", () => send((c) => { c.scheduler = sel.value; c.params = {}; c.num_ctas = null; }));
    controls.append(h("label", {}, sel));
    if (!spec) return;
    const numInput = (label, testid, value, onset, min = 0, placeholder = "") => {
      const inp = h("input", { type: "number", min, value: value ?? "", placeholder, "data-testid": testid,
        style: { width: "64px" } });
      inp.addEventListener("change", () => {
        const v = inp.value === "" ? null : parseInt(inp.value, 10);
        send((c) => onset(c, v));
      });
      controls.append(h("label", { title: label }, `${label} `, inp));
    };
    if (cfg.scheduler !== "IndexedTripleTileScheduler") {
      numInput("num_ctas", `num_ctas-${side}`, cfg.num_ctas, (c, v) => { c.num_ctas = v; }, 1, "auto");
    }
    numInput("resident", `concurrency-${side}`, cfg.concurrency, (c, v) => { c.concurrency = v; }, 1, "auto");
    for (const p of spec.params) {
      const value = (cfg.params || {})[p.name] ?? p.default;
      if (p.kind === "bool") {
        const cb = h("input", { type: "checkbox", "data-testid": `param-${p.name}-${side}` });
        cb.checked = !!value;
        cb.addEventListener("change", () => send((c) => { c.params[p.name] = cb.checked; }));
        controls.append(h("label", { title: p.help || p.name }, cb, ` ${p.name}`));
      } else if (p.kind === "ints") {
        const inp = h("input", { type: "text", value: (value || []).join(","), "data-testid": `param-${p.name}-${side}`,
          style: { width: "110px" } });
        inp.addEventListener("change", () => {
          const list = inp.value.split(/[\s,]+/).filter((s) => s !== "").map((s) => parseInt(s, 10));
          send((c) => { c.params[p.name] = list; });
        });
        controls.append(h("label", { title: p.help || p.name }, `${p.name} `, inp));
      } else {
        numInput(p.name, `param-${p.name}-${side}`, value, (c, v) => {
          if (v === null) delete c.params[p.name]; else c.params[p.name] = v;
        }, p.minimum);
      }
    }
  }

  function refresh() {
    view = model.get(`${side}_view`) || {};
    data = int32View(model.get(`${side}_data`));
    ncols = (view.columns || []).length;
    cellIndex = null;
    metrics.replaceChildren();
    if (view.error) {
      status.replaceChildren(h("span", { style: { color: th.error } }, view.error));
      draw();
      return;
    }
    // the recorder build that ran (a trace falls back to another where TVM cannot compile the one asked for;
    // view.notes says why, and when no CTA visits a tile)
    const build = view.build || (view.specialized ? "specialized" : "runtime extents");
    const spec = build === "specialized" ? "constants" : build;
    const notes = (view.notes || []).length ? ` · ${view.notes.join("; ")}` : "";
    status.textContent = view.scheduler
      ? `${view.num_ctas} CTAs · ${view.concurrency} resident · ${spec} · ${view.python_ms} ms${notes}`
      : "";
    for (const [k, v] of metricRows(view.metrics)) {
      metrics.append(h("tr", {}, h("td", { style: { color: th.fgMuted, paddingRight: "8px" } }, k), h("td", {}, fmt(v))));
    }
    const g = view.grid || { rows: 0, cols: 0, layers: 1 };
    layer = Math.min(layer, Math.max(0, g.layers - 1));
    const n = ncols ? data.length / ncols : 0;
    cellIndex = new Int32Array(g.rows * g.cols * g.layers).fill(-1);
    for (let i = n - 1; i >= 0; i--) {
      const r = data[i * ncols + 3], c = data[i * ncols + 4], l = data[i * ncols + 5];
      if (r >= 0 && r < g.rows && c >= 0 && c < g.cols && l >= 0 && l < g.layers) cellIndex[(l * g.rows + r) * g.cols + c] = i;
    }
    draw();
  }

  function draw() {
    const g = view.grid || { rows: 0, cols: 0, layers: 1 };
    const box = Math.max(200, Math.min(520, (root.clientWidth || 640) / 2 - 24));
    const cell = g.rows && g.cols ? Math.max(1, Math.floor(Math.min(box / g.cols, box / g.rows))) : 1;
    const w = Math.max(200, cell * g.cols + 2), hgt = Math.max(60, cell * g.rows + 2);
    cv.resize(w, hgt);
    geom = { cell, ox: 1, oy: 1 };
    const ctx = cv.ctx;
    ctx.fillStyle = th.bg2;
    ctx.fillRect(0, 0, w, hgt);
    if (!cellIndex || !ncols) return;
    const by = model.get("color_by");
    const col = by === "step" ? 1 : by === "wave" ? 2 : 0;
    const waveNow = model.get("wave");
    const maxVal = by === "cta" ? 0 : Math.max(1, (by === "step" ? view.metrics.tiles_per_cta.max - 1 : view.metrics.waves - 1));
    const outline = [];
    for (let r = 0; r < g.rows; r++) {
      for (let c = 0; c < g.cols; c++) {
        const i = cellIndex[(layer * g.rows + r) * g.cols + c];
        if (i < 0) continue;
        const wv = data[i * ncols + 2];
        if (waveNow >= 0 && wv > waveNow) continue;
        const v = data[i * ncols + col];
        ctx.fillStyle = by === "cta" ? ctaColor(v) : seqColor(v / maxVal);
        ctx.fillRect(1 + c * cell, 1 + r * cell, cell > 3 ? cell - 1 : cell, cell > 3 ? cell - 1 : cell);
        if (waveNow >= 0 && wv === waveNow) outline.push([r, c]);
      }
    }
    if (outline.length) {
      ctx.strokeStyle = th.fg;
      ctx.lineWidth = 1;
      for (const [r, c] of outline) ctx.strokeRect(1 + c * cell + 0.5, 1 + r * cell + 0.5, Math.max(1, cell - 1), Math.max(1, cell - 1));
    }
  }

  const onMove = (ev) => {
    if (!cellIndex || !ncols) return;
    const g = view.grid;
    const rect = cv.canvas.getBoundingClientRect();
    const c = Math.floor((ev.clientX - rect.left - geom.ox) / geom.cell);
    const r = Math.floor((ev.clientY - rect.top - geom.oy) / geom.cell);
    if (r < 0 || c < 0 || r >= g.rows || c >= g.cols) { tip.hide(); return; }
    const i = cellIndex[(layer * g.rows + r) * g.cols + c];
    if (i < 0) { tip.show(ev.clientX - rect.left, ev.clientY - rect.top, [`tile (${r}, ${c})`, "not visited"]); return; }
    const names = view.columns;
    const lines = [`cta ${data[i * ncols]}  step ${data[i * ncols + 1]}  wave ${data[i * ncols + 2]}`];
    const tile = names.slice(6).map((n, k) => `${n}=${data[i * ncols + 6 + k]}`).join("  ");
    lines.push(tile);
    tip.show(ev.clientX - rect.left, ev.clientY - rect.top, lines);
  };
  cv.canvas.addEventListener("mousemove", onMove);
  cv.canvas.addEventListener("mouseleave", () => tip.hide());

  const onCfg = () => buildControls();
  const onData = () => refresh();
  model.on(`change:${side}`, onCfg);
  model.on(`change:${side}_view`, onData);
  model.on("change:schema", onCfg);
  buildControls();
  refresh();
  return {
    draw,
    maxWave: () => (view.metrics ? view.metrics.waves - 1 : 0),
    layers: () => (view.grid ? view.grid.layers : 1),
    setLayer: (l) => { layer = l; draw(); },
    dispose() {
      model.off(`change:${side}`, onCfg);
      model.off(`change:${side}_view`, onData);
      model.off("change:schema", onCfg);
    },
  };
}

export default {
  render({ model, el }) {
    isolateKeys(el);
    const th = theme(el);
    const root = h("div", { class: "txlab-schedule", style: { fontFamily: th.font, color: th.fg, background: th.bg,
      padding: "6px", maxHeight: `${model.get("height")}px`, overflow: "auto" } });
    const bar = h("div", { style: { display: "flex", gap: "10px", alignItems: "center", fontSize: "12px", marginBottom: "6px", flexWrap: "wrap" } });
    const colorSel = h("select", { "data-testid": "color-by" },
      ...["cta", "step", "wave"].map((v) => h("option", { value: v }, `colour: ${v}`)));
    colorSel.value = model.get("color_by");
    colorSel.addEventListener("change", () => { model.set("color_by", colorSel.value); model.save_changes(); });
    const play = h("button", { "data-testid": "play", title: "play waves" }, "▶");
    const scrub = h("input", { type: "range", min: -1, max: 0, value: model.get("wave"), "data-testid": "wave", style: { width: "220px" } });
    const waveLabel = h("span", { "data-testid": "wave-label" });
    const layerSel = h("input", { type: "number", min: 0, value: 0, "data-testid": "layer", style: { width: "48px" }, title: "k layer (GroupMajor3D)" });
    const exact = h("input", { type: "checkbox", "data-testid": "specialize" });
    exact.checked = model.get("specialize");
    exact.addEventListener("change", () => { model.set("specialize", exact.checked); model.save_changes(); });
    bar.append(colorSel, play, scrub, waveLabel, h("label", {}, "k ", layerSel),
      h("label", { title: "bake every parameter in as a constant (like a static-shape kernel); slower to change" }, exact, " constants"));
    const sides = h("div", { style: { display: "flex", gap: "16px", flexWrap: "wrap" } });
    root.append(bar, sides);
    el.append(root);
    el.classList.add("txlab-schedule");

    const L = makeSide(model, "left", sides, null, th);
    const R = makeSide(model, "right", sides, null, th);
    const syncScrub = () => {
      const maxW = Math.max(L.maxWave(), R.maxWave());
      scrub.max = String(maxW);
      const w = model.get("wave");
      scrub.value = String(w);
      waveLabel.textContent = w < 0 ? `all ${maxW + 1} waves` : `wave ${w} / ${maxW}`;
      layerSel.max = String(Math.max(L.layers(), R.layers()) - 1);
    };
    const redraw = () => { syncScrub(); L.draw(); R.draw(); };
    scrub.addEventListener("input", () => { model.set("wave", parseInt(scrub.value, 10)); model.save_changes(); });
    layerSel.addEventListener("change", () => { const l = parseInt(layerSel.value, 10) || 0; L.setLayer(l); R.setLayer(l); });
    let timer = null;
    const stop = () => { if (timer) clearInterval(timer); timer = null; play.textContent = "▶"; };
    play.addEventListener("click", () => {
      if (timer) { stop(); return; }
      play.textContent = "❚❚";
      timer = setInterval(() => {
        const maxW = parseInt(scrub.max, 10);
        const w = model.get("wave");
        if (w >= maxW) { stop(); return; }
        model.set("wave", w + 1);
        model.save_changes();
      }, 120);
    });
    const onColor = () => { colorSel.value = model.get("color_by"); redraw(); };
    model.on("change:color_by", onColor);
    model.on("change:wave", redraw);
    model.on("change:left_view", syncScrub);
    model.on("change:right_view", syncScrub);
    syncScrub();
    return () => {
      stop();
      L.dispose();
      R.dispose();
      model.off("change:color_by", onColor);
      model.off("change:wave", redraw);
      model.off("change:left_view", syncScrub);
      model.off("change:right_view", syncScrub);
    };
  },
};
