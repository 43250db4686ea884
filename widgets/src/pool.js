// PoolMap: byte-scaled map of a txlab PoolLayout (shared.dyn + TMEM) with bank/swizzle patterns.
import { h, theme, categorical, hiDpiCanvas, tooltip, isolateKeys, readJSON } from "./_common.js";

const fmtBytes = (n) =>
  n == null ? "?" : n >= 1024 ? `${(n / 1024).toFixed(n % 1024 ? 1 : 0)} KiB (${n} B)` : `${n} B`;

function assignRows(allocs) {
  const rowsEnd = [];
  const out = new Map();
  const sorted = [...allocs].sort((a, b) => a.offset - b.offset || b.nbytes - a.nbytes);
  for (const a of sorted) {
    let r = rowsEnd.findIndex((end) => end <= a.offset);
    if (r < 0) { r = rowsEnd.length; rowsEnd.push(0); }
    rowsEnd[r] = a.offset + a.nbytes;
    out.set(a.name, r);
  }
  return { rows: Math.max(1, rowsEnd.length), of: out };
}

function allocLines(a) {
  const unit = a.scope === "tmem" ? "columns" : "bytes";
  const lines = [
    `${a.name}  (${a.scope === "shared" ? "shared, static" : a.scope})`,
    `${a.dtype}[${a.shape.join(", ")}]`,
    a.offset != null && a.nbytes != null
      ? `${unit} ${a.offset} .. ${a.offset + a.nbytes}  (${a.nbytes})`
      : `${unit} ${a.offset ?? "?"} .. ?  (${a.nbytes_expr || "?"}${a.depends_on && a.depends_on.length ? `: depends on ${a.depends_on.join(", ")}` : ""})`,
  ];
  if (a.align) lines.push(`align ${a.align} B${a.offset % a.align ? "  (NOT satisfied)" : ""}`);
  if (a.swizzle) lines.push(a.swizzle);
  if (a.lanes) lines.push(`lanes ${a.lanes.map(([l, hi]) => `${l}..${hi}`).join(", ")}`);
  if (a.aliases && a.aliases.length) lines.push(`aliases ${a.aliases.join(", ")}`);
  if (a.origin) lines.push(a.origin);
  return lines;
}

export default {
  render({ model, el }) {
    isolateKeys(el);
    const th = theme(el);
    const root = h("div", { class: "txlab-pool", style: { fontFamily: th.font, color: th.fg, fontSize: "12px" } });
    el.append(root);
    const tip = tooltip(root);
    let view = { lo: 0, hi: 1 };   // visible byte range
    let plan = null;
    let hits = [];                  // [{x0,x1,y0,y1,a}] for hover on the smem canvas
    let tHits = [];

    const summary = h("div", { "data-testid": "pool-summary", style: { margin: "2px 0 4px" } });
    const errors = h("div", { "data-testid": "pool-errors", style: { color: th.error } });
    const select = h("select", { "data-testid": "pool-select" });
    const btn = (id, text, fn) => h("button", { "data-testid": id, onclick: fn, style: { marginRight: "4px" } }, text);
    const zoom = (f) => {
      const mid = (view.lo + view.hi) / 2, half = ((view.hi - view.lo) / 2) * f;
      view = { lo: Math.max(0, mid - half), hi: mid + half };
      draw();
    };
    const controls = h("div", { style: { margin: "4px 0" } },
      btn("pool-zoom-in", "+", () => zoom(0.5)), btn("pool-zoom-out", "−", () => zoom(2)),
      btn("pool-reset", "reset", () => { resetView(); draw(); }), " buffer: ", select);
    const smem = hiDpiCanvas(600, 120);
    smem.canvas.setAttribute("data-testid", "pool-smem-canvas");
    const tmem = hiDpiCanvas(600, 150);
    tmem.canvas.setAttribute("data-testid", "pool-tmem-canvas");
    const tmemBox = h("div", {}, h("div", { style: { margin: "6px 0 2px", fontWeight: "600" } }, "TMEM: 128 lanes × 512 columns"), tmem.canvas);
    const banks = h("div", { "data-testid": "pool-banks", style: { marginTop: "6px" } });
    const accesses = h("div", { "data-testid": "pool-accesses", style: { marginTop: "6px" } });
    root.append(summary, errors, controls, smem.canvas, tmemBox, banks, accesses);

    function resetView() {
      const base = plan.static_smem_bytes || 0;
      const end = Math.max(base + (plan.high_water_bytes || 0), base + (plan.dynamic_smem_bytes || 0), plan.limit_bytes || 0, 1);
      view = { lo: 0, hi: end * 1.02 };
    }

    function draw() {
      if (!plan) return;
      const W = Math.max(300, root.clientWidth || el.clientWidth || 600);
      // The axis is the CTA's shared-memory window: static buffers (scope "shared", offsets from
      // the window's start) first, then the dynamic pool, whose offsets count from its base at
      // static_smem_bytes. A kernel with only static buffers (T.alloc_shared) still shows them.
      const base = plan.static_smem_bytes || 0;
      const stat = plan.allocations.filter((a) => a.scope === "shared" && a.offset != null);
      const dyn = plan.allocations.filter((a) => a.scope === "shared.dyn" && a.offset != null);
      const at = (a) => (a.scope === "shared.dyn" ? base + a.offset : a.offset);
      const { rows, of } = assignRows([...stat, ...dyn].map((a) => ({ name: a.name, offset: at(a), nbytes: a.nbytes })));
      const rowH = 22, top = 16, axisH = 18;
      smem.resize(W, top + rows * rowH + axisH + 4);
      const c = smem.ctx;
      c.clearRect(0, 0, W, smem.height);
      c.font = `11px ${th.font}`;
      const x = (b) => ((b - view.lo) / (view.hi - view.lo)) * W;
      // padding
      c.save();
      c.strokeStyle = th.fgMuted;
      for (const g of plan.gaps) {
        const x0 = x(base + g.offset), x1 = x(base + g.offset + g.nbytes);
        c.save(); c.beginPath(); c.rect(x0, top, x1 - x0, rows * rowH); c.clip();
        for (let k = x0 - rows * rowH; k < x1; k += 6) { c.beginPath(); c.moveTo(k, top + rows * rowH); c.lineTo(k + rows * rowH, top); c.stroke(); }
        c.restore();
      }
      c.restore();
      hits = [];
      [...stat, ...dyn].forEach((a) => {
        const i = plan.allocations.indexOf(a);
        const r = of.get(a.name);
        const x0 = x(at(a)), x1 = Math.max(x(at(a) + a.nbytes), x0 + 1);
        const y0 = top + r * rowH;
        c.globalAlpha = a.aliases.length ? 0.75 : 0.9;
        c.fillStyle = categorical(i);
        c.fillRect(x0, y0 + 1, x1 - x0, rowH - 2);
        c.globalAlpha = 1;
        if (a.name === model.get("selected")) { c.strokeStyle = th.fg; c.lineWidth = 2; c.strokeRect(x0, y0 + 1, x1 - x0, rowH - 2); }
        if (x1 - x0 > c.measureText(a.name).width + 6) { c.fillStyle = "#fff"; c.fillText(a.name, x0 + 3, y0 + 15); }
        hits.push({ x0, x1, y0, y1: y0 + rowH, a });
      });
      // limit and committed size
      const mark = (b, color, label) => {
        const xx = x(b);
        c.strokeStyle = color; c.setLineDash([4, 3]); c.beginPath(); c.moveTo(xx, 10); c.lineTo(xx, top + rows * rowH); c.stroke(); c.setLineDash([]);
        c.fillStyle = color; c.fillText(label, Math.min(xx + 2, W - c.measureText(label).width - 2), 10);
      };
      if (base && dyn.length) mark(base, th.fgMuted, `dynamic from ${base} B`);
      if (plan.dynamic_smem_bytes != null) mark(base + plan.dynamic_smem_bytes, th.fgMuted, `committed ${plan.dynamic_smem_bytes} B`);
      if (plan.limit_bytes) mark(plan.limit_bytes, th.error, `${plan.arch} limit`);
      // axis
      c.fillStyle = th.fgMuted; c.strokeStyle = th.border;
      const yA = top + rows * rowH + 2;
      c.beginPath(); c.moveTo(0, yA); c.lineTo(W, yA); c.stroke();
      const span = view.hi - view.lo;
      const step = Math.pow(2, Math.ceil(Math.log2(span / 8)));
      for (let b = Math.ceil(view.lo / step) * step; b <= view.hi; b += step) {
        const xx = x(b); c.beginPath(); c.moveTo(xx, yA); c.lineTo(xx, yA + 4); c.stroke();
        c.fillText(b >= 1024 ? `${b / 1024}K` : `${b}`, xx + 2, yA + 14);
      }
      drawTmem();
    }

    function drawTmem() {
      const tm = plan.allocations.filter((a) => a.scope === "tmem" && a.offset != null);
      tmemBox.style.display = tm.length || plan.tmem_alloc_columns ? "block" : "none";
      if (!tm.length && !plan.tmem_alloc_columns) return;
      const W = Math.max(300, root.clientWidth || 600);
      const cols = Math.max(plan.tmem_limit_columns, plan.tmem_columns);
      const left = 30, Hh = 128;
      tmem.resize(W, Hh + 24);
      const c = tmem.ctx, cw = (W - left - 4) / cols;
      c.clearRect(0, 0, W, Hh + 24);
      c.font = `11px ${th.font}`;
      c.fillStyle = th.bg2; c.fillRect(left, 0, plan.tmem_limit_columns * cw, Hh);
      tHits = [];
      tm.forEach((a) => {
        const i = plan.allocations.indexOf(a);
        for (const [l0, l1] of a.lanes) {
          const x0 = left + a.offset * cw, y0 = (l0 / 128) * Hh, w = a.nbytes * cw, hh = ((l1 - l0) / 128) * Hh;
          c.globalAlpha = 0.85; c.fillStyle = categorical(i); c.fillRect(x0, y0, w, hh); c.globalAlpha = 1;
          tHits.push({ x0, x1: x0 + w, y0, y1: y0 + hh, a });
          if (w > c.measureText(a.name).width + 6) { c.fillStyle = "#fff"; c.fillText(a.name, x0 + 3, y0 + 14); }
        }
      });
      const vline = (col, color, label) => {
        const xx = left + col * cw;
        c.strokeStyle = color; c.setLineDash([4, 3]); c.beginPath(); c.moveTo(xx, 0); c.lineTo(xx, Hh); c.stroke(); c.setLineDash([]);
        c.fillStyle = color; c.fillText(label, Math.max(left, xx - c.measureText(label).width - 2), Hh + 20);
      };
      vline(plan.tmem_limit_columns, th.error, "512");
      if (plan.tmem_alloc_columns) vline(plan.tmem_alloc_columns, th.fgMuted, `alloc ${plan.tmem_alloc_columns}`);
      c.fillStyle = th.fgMuted;
      c.fillText("0", 4, 10); c.fillText("127", 4, Hh - 2);
      for (let col = 0; col <= cols; col += 128) c.fillText(`${col}`, left + col * cw + 2, Hh + 11);
    }

    function drawBanks() {
      banks.replaceChildren();
      const a = plan.allocations.find((x) => x.name === model.get("selected"));
      if (!a) return;
      banks.append(h("div", { style: { fontWeight: "600", margin: "4px 0" } }, ...allocLines(a).slice(0, 1), a.swizzle ? ` — ${a.swizzle}` : ""));
      const bp = a.bank_pattern;
      if (!bp) { banks.append(h("div", { style: { color: th.fgMuted } }, "no bank pattern (not a 2-D shared tile)")); return; }
      banks.append(h("div", { style: { color: th.fgMuted, marginBottom: "2px" } },
        `bank group (16 B chunk of the 128 B bank row) of each logical 16 B chunk; ${bp.row_bytes} B rows; ` +
        `column reads across 8 rows: ${bp.conflict_ways === 1 ? "conflict-free" : `${bp.conflict_ways}-way conflict`}`));
      const table = h("table", { style: { borderCollapse: "collapse", fontFamily: th.mono } });
      table.append(h("tr", {}, h("th", {}, "row"), ...Array.from({ length: bp.chunks }, (_, c) => h("th", { style: { padding: "0 4px" } }, `c${c}`))));
      bp.bank_group.forEach((row, r) => {
        table.append(h("tr", {}, h("td", { style: { color: th.fgMuted, paddingRight: "6px" } }, `${r}`),
          ...row.map((g) => h("td", { title: `banks ${g * 4}..${g * 4 + 3}`, style: { background: categorical(g * 2), color: "#fff", textAlign: "center", width: "26px", border: `1px solid ${th.bg}` } }, `${g}`))));
      });
      banks.append(table);
    }

    // Bank conflicts per shared-memory access (rows of PoolLayout.bank_conflicts()); the selected
    // buffer's accesses first, conflicting ones highlighted.
    function drawAccesses() {
      accesses.replaceChildren();
      let rows = [];
      rows = readJSON(model).accesses || [];
      if (!rows.length) return;
      if (rows[0].error) { accesses.append(h("div", { style: { color: th.fgMuted } }, rows[0].error)); return; }
      const sel = model.get("selected");
      const ordered = [...rows].sort((a, b) => (b.buffer === sel) - (a.buffer === sel));
      // the headline counts partly unknown rows apart: never an all-clear while something is unknown
      const count = (st) => rows.filter((r) => r.status === st).length;
      const partly = count("partial");
      const counted = `${rows.length} access(es), ${rows.length - partly - count("unknown") - count("async")} analysed`
        + (partly ? `, ${partly} partly unknown` : "") + (count("async") ? `, ${count("async")} by the async proxy` : "")
        + `, ${count("unknown")} unknown`;
      accesses.append(h("div", { style: { fontWeight: "600", margin: "4px 0" } },
        `bank conflicts per access (32 lanes of each warp evaluated): ${counted}`));
      const table = h("table", { style: { borderCollapse: "collapse", fontFamily: th.mono } });
      table.append(h("tr", {}, ...["line", "access", "buffer", "B/lane", "ways", "wavefronts", "colliding lanes", "source"].map((t) => h("th", { style: { padding: "0 6px", textAlign: "left" } }, t))));
      for (const r of ordered) {
        const unknown = r.ways === null || r.ways === undefined;
        const partial = !unknown && r.status === "partial";
        const bad = unknown || r.ways > 1;
        const lanes = (unknown ? `unknown: ${r.reason || "not analysed"}`
          : bad ? `${r.lanes.length} lanes in bank ${r.bank}: ${r.lanes.slice(0, 12).join(",")}${r.lanes.length > 12 ? ",…" : ""}` : "—")
          + (partial ? ` (partly unknown: ${r.reason})` : "");
        const background = bad && !unknown ? "rgba(220,60,60,0.18)" : unknown || partial ? "rgba(230,170,40,0.18)" : "transparent";
        table.append(h("tr", { "data-testid": "pool-access-row", style: { background } },
          ...[String(r.lineno ?? "?"), r.access, r.buffer, String(r.bytes_per_lane), unknown ? "unknown" : String(r.ways),
            unknown ? "?" : `${r.wavefronts}/${r.ideal_wavefronts}`, lanes, r.source || ""]
            .map((t) => h("td", { style: { padding: "0 6px" } }, t))));
      }
      accesses.append(table);
    }

    function load() {
      plan = readJSON(model).plan || {};
      if (!plan.allocations) return;
      const occ = plan.occupancy || {};
      // total_smem_bytes is null where a size depends on a kernel argument (plan.depends_on)
      summary.textContent = `${plan.kernel} (${plan.arch || "arch unknown"}): shared ${fmtBytes(plan.total_smem_bytes)}` +
        (plan.total_smem_bytes == null && (plan.depends_on || []).length ? ` (depends on ${plan.depends_on.join(", ")})` : "") +
        (plan.limit_bytes ? ` of ${fmtBytes(plan.limit_bytes)}` : "") + `, padding ${plan.padding_bytes} B` +
        (plan.tmem_columns || plan.tmem_alloc_columns ? `, TMEM ${plan.tmem_columns}/${plan.tmem_limit_columns} columns` : "") +
        (plan.tmem_cta_group === 2 ? " in each CTA of a cta_group::2 pair" : "") +
        (occ.ctas_per_sm != null ? `, ${occ.ctas_per_sm} CTA/SM (limited by ${occ.limited_by})` : occ.unknown ? `, CTA/SM unknown (${occ.unknown})` : "");
      errors.replaceChildren(...plan.errors.map((e) => h("div", {}, `✖ ${e.message}`)), ...plan.warnings.map((w) => h("div", { style: { color: th.fgMuted } }, `⚠ ${w}`)),
        // buffers declared over another CTA's memory (MBarrier.remote_view): listed, not drawn
        ...(plan.views || []).map((v) => h("div", { style: { color: th.fgMuted } }, `${v.name}: a view of ${v.remote ? "another CTA's shared memory (mapa)" : "a computed pointer"}, ${v.dtype}[${v.shape.join(", ")}], not allocated here`)));
      select.replaceChildren(h("option", { value: "" }, "—"), ...plan.allocations.map((a) => h("option", { value: a.name }, a.name)));
      select.value = model.get("selected");
      resetView();
      draw();
      drawBanks();
      drawAccesses();
    }

    select.addEventListener("change", () => { model.set("selected", select.value); model.save_changes(); });
    const hit = (list, ev, canvas) => {
      const r = canvas.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      return { found: list.find((k) => mx >= k.x0 && mx <= k.x1 && my >= k.y0 && my <= k.y1), mx, my, r };
    };
    const onMove = (list, canvas) => (ev) => {
      const { found, r } = hit(list(), ev, canvas);
      const rr = root.getBoundingClientRect();
      if (found) tip.show(ev.clientX - rr.left, ev.clientY - rr.top, allocLines(found.a)); else tip.hide();
      if (drag) { const dx = ((ev.clientX - drag.x) / r.width) * (drag.hi - drag.lo); view = { lo: Math.max(0, drag.lo - dx), hi: drag.hi - dx - Math.min(0, drag.lo - dx) }; draw(); }
    };
    let drag = null;
    smem.canvas.addEventListener("mousemove", onMove(() => hits, smem.canvas));
    tmem.canvas.addEventListener("mousemove", onMove(() => tHits, tmem.canvas));
    smem.canvas.addEventListener("mouseleave", () => { tip.hide(); drag = null; });
    tmem.canvas.addEventListener("mouseleave", () => tip.hide());
    smem.canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, lo: view.lo, hi: view.hi }; });
    smem.canvas.addEventListener("mouseup", (ev) => {
      const moved = drag && Math.abs(ev.clientX - drag.x) > 3;
      drag = null;
      if (moved) return;
      const { found } = hit(hits, ev, smem.canvas);
      if (found) { model.set("selected", found.a.name); model.save_changes(); }
    });
    tmem.canvas.addEventListener("click", (ev) => {
      const { found } = hit(tHits, ev, tmem.canvas);
      if (found) { model.set("selected", found.a.name); model.save_changes(); }
    });
    smem.canvas.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = smem.canvas.getBoundingClientRect();
      const at = view.lo + ((ev.clientX - r.left) / r.width) * (view.hi - view.lo);
      const f = ev.deltaY > 0 ? 1.25 : 0.8;
      view = { lo: Math.max(0, at - (at - view.lo) * f), hi: at + (view.hi - at) * f };
      draw();
    }, { passive: false });

    const onData = () => load();
    const onSel = () => { select.value = model.get("selected"); draw(); drawBanks(); drawAccesses(); };
    model.on("change:data", onData);
    model.on("change:selected", onSel);
    const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => draw()) : null;
    if (ro) ro.observe(root);
    load();
    return () => {
      model.off("change:data", onData);
      model.off("change:selected", onSel);
      if (ro) ro.disconnect();
    };
  },
};
