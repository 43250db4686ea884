// SourceView: TVMScript | CUDA C | PTX | SASS, synchronized through the line map.
// Rows are built once (text nodes only); `index[pane][userLine]` lists each pane's rows of a user
// line, so a highlight only toggles the classes of the rows it changes and scrolls the first
// counterpart of each other pane into view (inside the pane, never the page).
// The SASS pane carries each instruction's control field (`x`: notation, stall, yield, write and
// read barrier, wait mask, reuse, producers, consumers); selecting an instruction marks the
// instructions that set the barriers it waits on and those that wait on the barriers it sets.
// Heat: per-row samples where the payload has them (heat_rows), else the row's user line's.
// Live registers (`d.live`): a column in the TVMScript pane (the line's maximum, `lines[u].live_registers`,
// marked when its SASS touches local memory: `lines[u].local.kind` "spill" or "local array") and the
// SASS pane (`s.r`, registers live at the instruction).
import { h, theme, isolateKeys } from "./_common.js";

const PANES = ["user", "cuda", "ptx", "sass"];
const TITLES = { user: "TVMScript", cuda: "CUDA C", ptx: "PTX", sass: "SASS" };
const CLASS_COLOURS = { memory: "#4e79a7", tensor: "#e15759", barrier: "#f28e2b", control: "#76b7b2", alu: "#9c9c9c" };
const KIND = { w: "write", r: "read" };
const BLOCK = 64;   // rows per off-screen-skippable block (content-visibility) of the CUDA, PTX and SASS panes

const CSS = `
.txlab-source { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 12px;
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 4px; display: flex; flex-direction: column; }
.txlab-source .src-head { padding: 4px 8px; display: flex; gap: 12px; align-items: center; flex-wrap: wrap;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-hot { padding: 2px 8px; display: flex; gap: 6px; align-items: center; flex-wrap: wrap;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-hot button, .txlab-source .src-info button { font: inherit; font-size: 11px; padding: 0 5px; cursor: pointer;
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 3px; background: var(--jp-layout-color1, #fff);
  color: inherit; max-width: 28em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.txlab-source .src-panes { display: grid; grid-template-columns: 1.1fr 1fr 0.8fr 1.5fr; grid-template-rows: minmax(0, 1fr);
  min-height: 0; flex: 1; overflow: hidden; }
.txlab-source .src-pane { display: flex; flex-direction: column; min-width: 0; min-height: 0; border-right: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-title { padding: 2px 6px; font-weight: 600; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-body { overflow: auto; flex: 1; font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-size: 11.5px; line-height: 16px; white-space: pre; position: relative; }
.txlab-source .r { display: flex; height: 16px; cursor: default; }
.txlab-source .r.nomap { opacity: 0.45; }
.txlab-source .r.c-memory { border-left: 3px solid #4e79a7; }
.txlab-source .r.c-tensor { border-left: 3px solid #e15759; }
.txlab-source .r.c-barrier { border-left: 3px solid #f28e2b; }
.txlab-source .r.c-control { border-left: 3px solid #76b7b2; }
.txlab-source .r.c-alu { border-left: 3px solid #9c9c9c; }
.txlab-source .r.hl { background: var(--txlab-src-hl, rgba(255, 200, 0, 0.28)); }
.txlab-source .r.pin { outline: 1px solid var(--jp-brand-color1, #1976d2); outline-offset: -1px; }
.txlab-source .r.isel { outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: -2px; }
.txlab-source .r.dep-p { background: rgba(60, 130, 240, 0.30); }
.txlab-source .r.dep-c { background: rgba(40, 170, 90, 0.30); }
.txlab-source .r.hidden { display: none; }
.txlab-source .blk { content-visibility: auto; contain-intrinsic-block-size: auto ${BLOCK * 16}px;
  width: max-content; min-width: 100%; }
.txlab-source .g { color: var(--jp-ui-font-color2, #888); min-width: 4.2em; text-align: right; padding-right: 6px; flex: none; }
.txlab-source .b { min-width: 5.5em; flex: none; display: flex; gap: 1px; align-items: center; padding-right: 4px; }
.txlab-source .b i { display: inline-block; height: 9px; }
.txlab-source .t { flex: 1; }
.txlab-source .x { flex: none; padding-right: 6px; font-size: 10px; color: var(--jp-ui-font-color2, #777); }
.txlab-source.noctl .x { display: none; }
.txlab-source .lr { flex: none; min-width: 2.6em; text-align: right; padding-right: 6px; font-size: 10px; color: var(--jp-ui-font-color2, #777); }
.txlab-source .lr.spill { color: #c62828; font-weight: bold; }
.txlab-source .src-info { padding: 4px 8px; min-height: 32px; max-height: 6.5em; overflow: auto; flex: none; border-top: 1px solid var(--jp-border-color2, #e0e0e0); white-space: normal; }
.txlab-source .heat { width: 30px; flex: none; font-size: 9.5px; text-align: right; padding-right: 2px; margin-right: 3px; }
`;

function stallText(stalls, n = 5) {
  return Object.entries(stalls || {}).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${k} ${v}`).join(", ");
}

function barrierList(mask) {
  const out = [];
  for (let k = 0; k < 6; k++) if ((mask >> k) & 1) out.push(`SB${k}`);
  return out;
}

export default {
  render({ model, el }) {
    const t0 = performance.now();
    const th = theme(el);
    const root = h("div", { class: "txlab-source" });
    const style = h("style", {}, CSS);
    el.appendChild(style);
    el.appendChild(root);
    const cleanupKeys = isolateKeys(root);
    const stats = h("pre", { "data-testid": "source-stats", style: "display:none" });
    let state = { hover: 0, hoverRow: null, pin: model.get("selected") || 0, lastHighlightMs: 0, highlights: 0,
                  lastSelectMs: 0, selects: 0 };

    function build() {
      root.textContent = "";
      const d = JSON.parse(model.get("data") || "{}");
      if (!d.user) { root.appendChild(h("div", { class: "src-info" }, "no line map")); return; }
      root.style.height = `${model.get("height")}px`;
      const lines = d.lines || {};
      const heat = d.heat || {};
      const heatRows = d.heat_rows || {};
      const total = d.total_samples || 0;
      const hasHeat = Object.keys(heat).length > 0 || Object.keys(heatRows).length > 0;
      const hasCtl = d.sass.some((s) => s.x);
      const pct = (n) => (total ? `${(100 * n / total).toFixed(n / total >= 0.1 ? 0 : 1)}%` : `${n}`);
      const codeOnly = h("input", { type: "checkbox", "data-testid": "source-code-only" });
      const ctlBox = h("input", { type: "checkbox", "data-testid": "source-control", checked: hasCtl });
      const head = h("div", { class: "src-head" },
        h("span", {}, h("b", {}, d.name), ` ${d.arch} · ${d.sass.length} SASS instructions`,
          total ? ` · ${total.toLocaleString()} samples` : ""),
        h("label", {}, codeOnly, " only lines with SASS"),
        hasCtl ? h("label", { title: "wait mask : read barrier : write barrier : yield : stall cycles" }, ctlBox, " control bits") : "",
        d.exact ? "" : h("span", { title: "the marked CUDA differed from TVM's; lines were aligned" }, "(CUDA lines aligned)"),
        ...(d.notes || []).map((n) => h("span", { class: "src-note", style: "opacity:0.75" }, n)));
      root.appendChild(head);
      root.classList.toggle("noctl", !hasCtl);
      const hotBox = (d.hot || []).length ? h("div", { class: "src-hot", "data-testid": "source-hot" }, h("span", {}, "hot lines:")) : null;
      if (hotBox) root.appendChild(hotBox);
      const panes = h("div", { class: "src-panes" });
      root.appendChild(panes);
      const info = h("div", { class: "src-info", "data-testid": "source-info" },
        "hover a line: its CUDA, PTX and SASS light up; click a SASS instruction for its barrier dependencies");
      root.appendChild(info);
      root.appendChild(stats);

      const lineMax = Math.max(1, ...Object.values(heat).map((v) => v.samples || 0));
      const rowMax = {};
      for (const p of ["cuda", "ptx", "sass"]) {
        const hr = heatRows[p];
        rowMax[p] = hr ? Math.max(1, ...Object.values(hr).map((v) => v[0])) : 0;
      }
      const heatColour = (a) => th.dark ? `rgba(255,90,60,${a.toFixed(3)})` : `rgba(220,40,20,${a.toFixed(3)})`;

      const bodies = {}, rows = {}, index = {};
      const perPaneUser = {
        user: d.user.map((_, i) => d.first + i),
        cuda: d.cuda_user, ptx: d.ptx_user, sass: d.sass.map((s) => s.u),
      };
      for (const p of PANES) {
        const body = h("div", { class: "src-body", "data-testid": `source-pane-${p}` });
        const pane = h("div", { class: "src-pane" }, h("div", { class: "src-title" }, TITLES[p]), body);
        panes.appendChild(pane);
        bodies[p] = body;
        const frag = document.createDocumentFragment();
        const list = [];
        const texts = p === "user" ? d.user : p === "sass" ? d.sass : d[p];
        const own = p === "user" ? null : heatRows[p];
        // one prototype row per pane, cloned (faster than building each row's spans)
        const proto = h("div", { class: "r" }, h("span", { class: "g" }),
          p === "user" ? h("span", { class: "b" }) : null, hasHeat ? h("span", { class: "heat" }) : null,
          p === "sass" ? h("span", { class: "x" }) : null,
          d.live && (p === "user" || p === "sass") ? h("span", { class: "lr", "data-testid": `source-live-${p}` }) : null,
          h("span", { class: "t" }));
        let blk = null;
        for (let i = 0; i < texts.length; i++) {
          const u = perPaneUser[p][i];
          const r = proto.cloneNode(true);
          if (u) r.setAttribute("data-u", u); else r.className = "r nomap";
          r._i = i;
          let cell = r.firstChild;                      // gutter
          if (p === "sass") { cell.textContent = texts[i].o.toString(16).padStart(4, "0"); r.setAttribute("data-i", i); }
          else cell.textContent = String(p === "user" ? d.first + i : i + 1);
          cell = cell.nextSibling;
          if (p === "user") {                           // instruction count and classes
            const L = lines[String(u)];
            if (L) {
              const tot = L.sass;
              for (const [c, n] of Object.entries(L.classes)) {
                const bar = document.createElement("i");
                bar.style.width = `${Math.max(2, Math.round(40 * n / Math.max(tot, 1)))}px`;
                bar.style.background = CLASS_COLOURS[c] || "#999";
                cell.appendChild(bar);
              }
              cell.appendChild(document.createTextNode(` ${tot}`));
            } else if (d.user[i].trim()) {
              r.classList.add("nomap");
            }
            cell = cell.nextSibling;
          }
          if (hasHeat) {
            const mine = own ? own[String(i)] : undefined;
            const hv = u ? heat[String(u)] : undefined;
            if (p === "user" && hv && hv.samples) {
              cell.style.background = heatColour(hv.samples / lineMax);
              if (hv.samples / (total || 1) >= 0.005) cell.textContent = pct(hv.samples);
            } else if (mine) {
              cell.style.background = heatColour(mine[0] / rowMax[p]);
              if (mine[0] / (total || 1) >= 0.005) cell.textContent = pct(mine[0]);
            } else if (!own && hv && hv.samples) {   // no per-row samples: the user line's, fainter
              cell.style.background = heatColour(0.6 * hv.samples / lineMax);
            }
            cell = cell.nextSibling;
          }
          if (p === "sass") {
            if (texts[i].c) r.classList.add(`c-${texts[i].c}`);
            if (texts[i].x) cell.textContent = texts[i].x[0];
            cell = cell.nextSibling;
          }
          if (d.live && (p === "user" || p === "sass")) {
            if (p === "sass") { if (texts[i].r !== undefined) cell.textContent = String(texts[i].r); }
            else {
              const L = u ? lines[String(u)] : undefined;
              if (L && L.live_registers !== undefined && L.live_registers !== null) cell.textContent = String(L.live_registers);
              if (L && L.local) {
                cell.classList.add("spill");
                cell.textContent += L.local.kind === "spill" ? " spill" : " local";
                cell.title = `${L.local.loads} LDL, ${L.local.stores} STL (${L.local.kind})`;
              }
            }
            cell = cell.nextSibling;
          }
          cell.textContent = p === "sass" ? texts[i].t : texts[i];
          if (p === "user") frag.appendChild(r);
          else {                                          // blocks the browser may skip while off screen
            if (i % BLOCK === 0) { blk = document.createElement("div"); blk.className = "blk"; frag.appendChild(blk); }
            blk.appendChild(r);
          }
          list.push(r);
        }
        if (blk && texts.length % BLOCK) blk.style.containIntrinsicBlockSize = `auto ${(texts.length % BLOCK) * 16}px`;
        body.appendChild(frag);
        rows[p] = list;
        const idx = new Map();
        list.forEach((r, i) => { const u = perPaneUser[p][i]; if (u) { if (!idx.has(u)) idx.set(u, []); idx.get(u).push(r); } });
        index[p] = idx;
      }

      function lineText(u) {
        return d.user[u - d.first] !== undefined ? d.user[u - d.first].trim() : "";
      }
      function describeLine(u) {
        const L = lines[String(u)];
        const parts = [`line ${u}: ${lineText(u)}`];
        if (L) {
          parts.push(`${L.sass} SASS (` + Object.entries(L.classes).map(([c, n]) => `${c} ${n}`).join(", ") + ")");
          if (L.library && L.library.length) parts.push("inlines " + L.library.join(", "));
          if (L.live_registers !== undefined && L.live_registers !== null) parts.push(`${L.live_registers} registers live (max)`);
          if (L.local) parts.push(`local memory: ${L.local.loads} LDL, ${L.local.stores} STL (${L.local.kind})`);
        } else parts.push("no SASS of its own");
        const hv = heat[String(u)];
        if (hv) {
          const st = stallText(hv.stalls);
          parts.push(`${hv.samples} samples${total ? ` (${pct(hv.samples)})` : ""}` + (st ? ` · stalls: ${st}` : ""));
        }
        return parts.join(" · ");
      }
      function insLabel(j) {
        const s = d.sass[j];
        return `${s.o.toString(16).padStart(4, "0")} ${s.t.split(" ").slice(0, 2).join(" ")}${s.u ? ` (line ${s.u})` : ""}`;
      }
      function describeControl(j) {
        const x = d.sass[j].x;
        if (!x) return "";
        const [n, stall, yld, wr, rd, wait, reuse] = x;
        const ru = [];
        for (let k = 0; k < 4; k++) if ((reuse >> k) & 1) ru.push("abcd"[k]);
        return `control ${n}: stall ${stall} cycles, ${yld ? "may yield" : "no yield"}` +
          (wr !== null ? `, sets SB${wr} when written` : "") + (rd !== null ? `, sets SB${rd} when read` : "") +
          (wait ? `, waits on ${barrierList(wait).join(" ")}` : "") + (ru.length ? `, reuse ${ru.join("")}` : "");
      }
      // the info bar: line, then (for a row of a pane with its own heat / a SASS row) that row
      function describe(u, p, i) {
        info.textContent = "";
        const parts = [];
        if (u) parts.push(describeLine(u));
        if (p && p !== "user" && i !== undefined) {
          const mine = heatRows[p] ? heatRows[p][String(i)] : undefined;
          const what = p === "sass" ? `instruction ${d.sass[i].o.toString(16).padStart(4, "0")}` : `${TITLES[p]} line ${i + 1}`;
          if (mine) {
            const st = stallText(mine[1]);
            parts.push(`${what}: ${mine[0]} samples (${pct(mine[0])})` + (st ? ` · stalls: ${st}` : ""));
          }
          if (p === "sass") { const c = describeControl(i); if (c) parts.push(c); }
        }
        info.appendChild(document.createTextNode(parts.join(" · ")));
        if (p === "sass" && i === state.sel) depButtons(i);
      }
      function depButtons(i) {
        const x = d.sass[i].x;
        if (!x) return;
        const [, , , , , wait] = x;
        const prod = x[7] || [], cons = x[8] || [];
        const line = h("div", {});
        if (wait && !prod.length) line.append(`waits on ${barrierList(wait).join(" ")}: no instruction before it sets it (set on a loop's back-edge or another path)`);
        if (prod.length) {
          line.append("waits for: ");
          for (const [j, b, k] of prod) line.append(h("button", { "data-testid": "source-dep", "data-i": j, title: `sets SB${b} (${KIND[k]})` }, `SB${b} ← ${insLabel(j)}`), " ");
        }
        if (cons.length) {
          line.append(" released to: ");
          for (const [j, b, k] of cons) line.append(h("button", { "data-testid": "source-dep", "data-i": j, title: `waits on SB${b} (${KIND[k]})` }, `SB${b} → ${insLabel(j)}`), " ");
        }
        info.appendChild(line);
      }
      function scrollTo(body, row) {
        const top = row.offsetTop, bottom = top + row.offsetHeight;
        if (top < body.scrollTop || bottom > body.scrollTop + body.clientHeight) {
          body.scrollTop = Math.max(0, top - body.clientHeight / 3);
        }
      }
      let lit = [];
      function highlight(u, from, i) {
        const s = performance.now();
        for (const r of lit) r.classList.remove("hl");
        lit = [];
        if (u) {
          for (const p of PANES) {
            const rs = index[p].get(u) || [];
            for (const r of rs) r.classList.add("hl");
            lit.push(...rs);
            if (p !== from && rs.length) scrollTo(bodies[p], rs[0]);
          }
        }
        if (u || from) describe(u, from, i);
        state.lastHighlightMs = performance.now() - s;
        state.highlights += 1;
        writeStats();
      }
      let pinned = [];
      function pin(u) {
        for (const r of pinned) r.classList.remove("pin");
        pinned = [];
        state.pin = u;
        if (u) for (const p of PANES) { const rs = index[p].get(u) || []; for (const r of rs) r.classList.add("pin"); pinned.push(...rs); }
        if (model.get("selected") !== u) { model.set("selected", u); model.save_changes(); }
      }
      let marked = [];
      // select SASS instruction i (-1: none): it, its producers and its consumers are marked
      function select(i) {
        const s = performance.now();
        for (const [r, c] of marked) r.classList.remove(c);
        marked = [];
        state.sel = i;
        if (i >= 0) {
          const mark = (j, c) => { const r = rows.sass[j]; if (r) { r.classList.add(c); marked.push([r, c]); } };
          mark(i, "isel");
          const x = d.sass[i].x;
          if (x) { for (const [j] of x[7] || []) mark(j, "dep-p"); for (const [j] of x[8] || []) mark(j, "dep-c"); }
        }
        state.lastSelectMs = performance.now() - s;
        state.selects += 1;
        if (model.get("instruction") !== i) { model.set("instruction", i); model.save_changes(); }
        writeStats();
      }
      for (const p of PANES) {
        const body = bodies[p];
        body.addEventListener("mouseover", (ev) => {
          const r = ev.target.closest(".r");
          if (state.pin || r === state.hoverRow) return;
          if (!r) { state.hoverRow = null; if (state.hover) { state.hover = 0; highlight(0); } return; }
          state.hoverRow = r;
          const u = r.dataset.u ? Number(r.dataset.u) : 0;
          const i = r._i;
          if (u !== state.hover) { state.hover = u; highlight(u, p, i); } else describe(u, p, i);
        });
        body.addEventListener("click", (ev) => {
          const r = ev.target.closest(".r");
          if (!r) return;
          const u = r.dataset.u ? Number(r.dataset.u) : 0;
          const i = r._i;
          if (p === "sass") {
            if (state.sel === i) { select(-1); pin(0); describe(u, p, i); return; }
            select(i);
            if (u) { pin(u); state.hover = u; }
            highlight(u, p, i);
            return;
          }
          if (!u) return;
          if (state.sel >= 0) select(-1);
          if (state.pin === u) { pin(0); return; }
          pin(u); state.hover = u; highlight(u, p, i);
        });
      }
      info.addEventListener("click", (ev) => {
        const b = ev.target.closest("button[data-testid='source-dep']");
        if (!b) return;
        const j = Number(b.dataset.i);
        const u = d.sass[j].u || 0;
        select(j);
        pin(u); state.hover = u;
        scrollTo(bodies.sass, rows.sass[j]);
        highlight(u, "sass", j);
      });
      for (const hl of d.hot || []) {
        const b = h("button", { "data-testid": "source-hot-line", "data-u": hl.line,
                                title: `${hl.samples} samples · stalls: ${hl.top.map(([k, v]) => `${k} ${v}`).join(", ")}` },
          `${hl.line}: ${pct(hl.samples)} ${hl.text}`);
        b.addEventListener("click", () => {
          if (state.sel >= 0) select(-1);
          pin(hl.line); state.hover = hl.line;
          highlight(hl.line, "hot");
        });
        hotBox.appendChild(b);
      }
      root.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { select(-1); pin(0); highlight(0); } });
      root.tabIndex = 0;
      codeOnly.addEventListener("change", () => {
        for (const r of rows.user) {
          const u = Number(r.dataset.u || 0);
          r.classList.toggle("hidden", codeOnly.checked && !lines[String(u)]);
        }
      });
      ctlBox.addEventListener("change", () => root.classList.toggle("noctl", !ctlBox.checked));
      state.sel = -1;
      if (state.pin) { const u = state.pin; state.pin = 0; pin(u); highlight(u, "hot"); }
      const si = model.get("instruction");
      if (si >= 0 && si < d.sass.length) select(si);
      requestAnimationFrame(() => requestAnimationFrame(() => {
        state.firstPaintMs = performance.now() - t0;
        writeStats();
      }));
      function writeStats() {
        stats.textContent = JSON.stringify({ firstPaintMs: state.firstPaintMs, lastHighlightMs: state.lastHighlightMs,
          highlights: state.highlights, lastSelectMs: state.lastSelectMs, selects: state.selects,
          rows: PANES.map((p) => rows[p].length) });
      }
    }
    build();
    model.on("change:data", build);
    model.on("change:height", () => { root.style.height = `${model.get("height")}px`; });
    return () => { cleanupKeys && cleanupKeys(); model.off("change:data", build); };
  },
};
