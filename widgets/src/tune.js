// TuneView: progress, best-so-far, heatmap over two parameters and a sortable table of a txlab.tune sweep.
import { h, theme, hiDpiCanvas, tooltip, isolateKeys, readJSON } from "./_common.js";

const fmtTime = (ms) => (ms == null ? "" : ms >= 1 ? `${ms.toFixed(3)} ms` : `${(ms * 1000).toFixed(1)} µs`);
const fmtNum = (v, d = 3) => (v == null ? "" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(d)) : String(v));
const fmtSecs = (s) => (s == null ? "–" : s >= 90 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${s.toFixed(1)} s`);
const STATUS_COLORS = { measured: "#59a14f", compiled: "#4e79a7", pending: "#bab0ac", skipped: "#bab0ac" };

// viridis-like ramp, t in [0, 1] (0 = fastest)
function ramp(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const x = Math.min(0.9999, Math.max(0, t)) * (stops.length - 1);
  const i = Math.floor(x), f = x - i;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

export default {
  render({ model, el }) {
    const unkey = isolateKeys(el);
    const th = theme(el);
    const root = h("div", { class: "txlab-tune", style: { fontFamily: th.font, color: th.fg, fontSize: "12px" } });
    el.append(root);
    const tip = tooltip(root);
    let sortKey = "time_ms", sortAsc = true;
    let data = null;
    let cells = [];   // heatmap hit boxes

    const bar = h("div", { "data-testid": "tune-progress", style: { height: "10px", background: th.bg2, borderRadius: "3px", overflow: "hidden", display: "flex", margin: "4px 0" } });
    const progressText = h("div", { "data-testid": "tune-progress-text" });
    const best = h("div", { "data-testid": "tune-best", style: { margin: "4px 0", fontFamily: th.mono } });
    const selX = h("select", { "data-testid": "tune-heat-x" });
    const selY = h("select", { "data-testid": "tune-heat-y" });
    selX.addEventListener("change", () => { model.set("heat_x", selX.value); model.save_changes(); draw(); });
    selY.addEventListener("change", () => { model.set("heat_y", selY.value); model.save_changes(); draw(); });
    const heat = hiDpiCanvas(420, 200);
    heat.canvas.setAttribute("data-testid", "tune-heatmap");
    const tableBox = h("div", { style: { maxHeight: "260px", overflow: "auto", marginTop: "6px" } });
    root.append(
      h("div", { style: { fontWeight: "600" } }, ""), progressText, bar, best,
      h("div", { style: { margin: "6px 0 2px" } }, "heatmap of the best time: x ", selX, " y ", selY),
      heat.canvas, tableBox);
    const title = root.firstChild;

    function params() { return Object.keys((data && data.space && data.space.params) || {}); }

    function fillSelect(sel, value) {
      const names = params();
      if (sel.options.length !== names.length || [...sel.options].some((o, i) => o.value !== names[i])) {
        sel.replaceChildren(...names.map((n) => h("option", { value: n }, n)));
      }
      sel.value = value;
    }

    function drawProgress() {
      const p = data.progress || {};
      const c = data.counts || {};
      const total = Math.max(1, c.total || 0);
      const parts = [
        ["measured", c.measured || 0, STATUS_COLORS.measured],
        ["compiled", Math.max(0, (c.compiled || 0) - (c.measured || 0) - ((c.by_status || {}).check_failed || 0) - ((c.by_status || {}).fault || 0) - ((c.by_status || {}).unlaunchable || 0) - ((c.by_status || {}).spills || 0)), STATUS_COLORS.compiled],
        ["failed", c.failed || 0, th.error],
      ];
      bar.replaceChildren(...parts.map(([name, n, color]) => h("div", { title: `${name} ${n}`, style: { width: `${(100 * n) / total}%`, background: color } })));
      const state = p.done ? "done" : "running";
      progressText.textContent = `${state}: ${c.compiled || 0} compiled, ${c.measured || 0} measured, ${c.failed || 0} failed`
        + `${c.skipped ? `, ${c.skipped} skipped` : ""} of ${c.total || 0}; elapsed ${fmtSecs(p.elapsed_s)}`
        + (p.done ? "" : `, ETA ${fmtSecs(p.eta_s)}`)
        + (data.meta && data.meta.gpus === 0 ? " (compile-only: no GPU)" : "");
      title.textContent = `${data.name}  ·  ${(data.meta && data.meta.search) || ""}  ·  ${(data.meta && data.meta.engine) || ""}`;
    }

    function drawBest() {
      const row = (data.rows || []).find((r) => r.id === data.best);
      if (!row) { best.textContent = "best so far: –"; return; }
      const cfg = Object.entries(row.config).map(([k, v]) => `${k}=${v}`).join(" ");
      best.textContent = `best so far: ${fmtTime(row.time_ms)}`
        + (row.tflops ? `  ${row.tflops.toFixed(1)} TFLOP/s` : "") + (row.gbps ? `  ${row.gbps.toFixed(0)} GB/s` : "")
        + (row.ratio ? `  ${row.ratio.toFixed(3)}× ${(data.baseline && data.baseline.name) || "baseline"}` : "")
        + `  (${cfg})`;
    }

    function draw() {
      if (!data) return;
      const xs = model.get("heat_x"), ys = model.get("heat_y");
      fillSelect(selX, xs); fillSelect(selY, ys);
      const P = data.space.params || {};
      const vx = P[xs] || [null], vy = P[ys] || [null];
      const W = Math.max(320, Math.min(900, root.clientWidth || 600)), left = 70, top = 8, bottom = 34;
      const cw = Math.max(24, Math.min(90, (W - left - 10) / vx.length)), ch = 22;
      const H = top + vy.length * ch + bottom;
      heat.resize(left + vx.length * cw + 10, H);
      const c = heat.ctx;
      c.clearRect(0, 0, heat.width, heat.height);
      c.font = `11px ${th.font}`;
      const grid = new Map();
      for (const r of data.rows || []) {
        if (r.status !== "measured" || r.time_ms == null) continue;
        const k = `${vx.indexOf(r.config[xs])},${vy.indexOf(r.config[ys])}`;
        const g = grid.get(k);
        if (!g || r.time_ms < g.time_ms) grid.set(k, r);
      }
      const times = [...grid.values()].map((r) => r.time_ms);
      const lo = Math.min(...times), hi = Math.max(...times);
      cells = [];
      vy.forEach((y, j) => {
        vx.forEach((x, i) => {
          const x0 = left + i * cw, y0 = top + (vy.length - 1 - j) * ch;
          const r = grid.get(`${i},${j}`);
          c.fillStyle = r ? ramp(hi > lo ? (r.time_ms - lo) / (hi - lo) : 0) : th.bg2;
          c.fillRect(x0 + 1, y0 + 1, cw - 2, ch - 2);
          if (r) {
            c.fillStyle = (hi > lo ? (r.time_ms - lo) / (hi - lo) : 0) > 0.6 ? "#000" : "#fff";
            const label = r.time_ms >= 1 ? r.time_ms.toFixed(2) : (r.time_ms * 1000).toFixed(0);
            c.fillText(label, x0 + 4, y0 + 15);
          }
          cells.push({ x0, y0, x1: x0 + cw, y1: y0 + ch, r, x, y });
        });
        c.fillStyle = th.fgMuted;
        c.fillText(String(y), 4, top + (vy.length - 1 - j) * ch + 15);
      });
      c.fillStyle = th.fgMuted;
      vx.forEach((x, i) => c.fillText(String(x), left + i * cw + 4, top + vy.length * ch + 14));
      c.fillText(`${xs} →   (cells: best time, ${times.length && times[0] >= 1 ? "ms" : "µs"}; other parameters free)`, left, top + vy.length * ch + 28);
      drawTable();
    }

    function drawTable() {
      const names = params();
      const cols = [...names, "status", "compile_s", "time_ms", "tflops", "gbps", "ratio", "rel_error", "registers", "occupancy", "reason"];
      const get = (r, k) => (names.includes(k) ? r.config[k] : k === "registers" ? (r.facts || {}).registers
        : k === "occupancy" ? (r.facts || {}).blocks_per_sm : r[k]);
      const rows = [...(data.rows || [])].sort((a, b) => {
        const va = get(a, sortKey), vb = get(b, sortKey);
        if (va == null && vb == null) return 0;
        if (va == null) return 1;
        if (vb == null) return -1;
        const d = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
        return sortAsc ? d : -d;
      });
      const head = h("tr", {}, ...cols.map((k) => h("th", {
        "data-testid": `tune-sort-${k}`, style: { cursor: "pointer", textAlign: "left", padding: "1px 6px", borderBottom: `1px solid ${th.border}`, position: "sticky", top: "0", background: th.bg },
        onclick: () => { if (sortKey === k) sortAsc = !sortAsc; else { sortKey = k; sortAsc = true; } drawTable(); },
      }, k + (sortKey === k ? (sortAsc ? " ▲" : " ▼") : ""))));
      const body = rows.map((r) => h("tr", { style: r.id === data.best ? { fontWeight: "700" } : {} }, ...cols.map((k) => {
        let v = get(r, k);
        if (k === "time_ms") v = fmtTime(v);
        else if (k === "reason") v = v ? String(v).slice(0, 120) : (r.fault_kind || "");
        else v = fmtNum(v);
        const color = k === "status" ? (STATUS_COLORS[r.status] || th.error) : undefined;
        return h("td", { style: { padding: "1px 6px", color, whiteSpace: "nowrap" } }, v);
      })));
      tableBox.replaceChildren(h("table", { "data-testid": "tune-table", style: { borderCollapse: "collapse", fontFamily: th.mono, fontSize: "11px" } }, head, ...body));
    }

    heat.canvas.addEventListener("mousemove", (e) => {
      const rect = heat.canvas.getBoundingClientRect();
      const x = e.clientX - rect.left, y = e.clientY - rect.top;
      const cell = cells.find((k) => x >= k.x0 && x < k.x1 && y >= k.y0 && y < k.y1);
      if (!cell) { tip.hide(); return; }
      const rootRect = root.getBoundingClientRect();
      const lines = [`${model.get("heat_x")}=${cell.x}  ${model.get("heat_y")}=${cell.y}`];
      if (cell.r) {
        lines.push(`best ${fmtTime(cell.r.time_ms)}`);
        lines.push(Object.entries(cell.r.config).map(([k, v]) => `${k}=${v}`).join(" "));
      } else lines.push("nothing measured here");
      tip.show(e.clientX - rootRect.left, e.clientY - rootRect.top, lines);
    });
    heat.canvas.addEventListener("mouseleave", () => tip.hide());

    function update() {
      data = readJSON(model, null);
      if (!data || !data.space) return;
      drawProgress(); drawBest(); draw();
    }
    model.on("change:data", update);
    model.on("change:heat_x", draw);
    model.on("change:heat_y", draw);
    update();
    return () => { unkey(); model.off("change:data", update); model.off("change:heat_x", draw); model.off("change:heat_y", draw); };
  },
};
