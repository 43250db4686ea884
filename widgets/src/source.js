// SourceView: TVMScript | CUDA C | PTX | SASS, synchronized through the line map.
// Rows are built once (text nodes only); `index[pane][userLine]` lists each pane's rows of a user
// line, so a highlight only toggles the classes of the rows it changes and scrolls the first
// counterpart of each other pane into view (inside the pane, never the page).
// The SASS pane carries each instruction's control field (`control`: notation, stall, yield,
// write_barrier, read_barrier, wait_mask, reuse, producers, consumers); selecting an instruction marks the
// instructions that set the barriers it waits on and those that wait on the barriers it sets.
// Heat: per-row samples where the payload has them (heat_rows), else the row's user line's.
// Live registers (`d.live`): a column in the TVMScript pane (the line's maximum, `lines[u].live_registers`,
// marked when its SASS touches local memory: `lines[u].local.kind` "spill" or "local array") and the
// SASS pane (`s.live_registers`, registers live at the instruction).
// Global memory (`d.coalescing[u]`, the static walk's answer per user line): a TVMScript column with the
// line's 32-byte sectors per L1 request and, below 100%, the share of the sectors' bytes its lanes use;
// "?" where an access's addresses cannot be known (the reason in the tooltip and the info bar).
// Layout: panes side by side in a flex row, grips between them drag the boundary, the header's
// "panes" boxes hide and show them; the CUDA pane folds TVM's generated preamble
// (`cuda_preamble` lines) behind one row. Selecting a line centres its first counterpart in every
// other pane (positions from bounding boxes: rows sit in content-visibility blocks).
import { h, theme, isolateKeys, readJSON } from "./_common.js";

const PANES = ["user", "cuda", "ptx", "sass"];
const TITLES = { user: "TVMScript", cuda: "CUDA C", ptx: "PTX", sass: "SASS" };
const CLASS_COLOURS = { memory: "#4e79a7", tensor: "#e15759", barrier: "#f28e2b", control: "#76b7b2", alu: "#9c9c9c" };
const KIND = { w: "write", r: "read" };
const BLOCK = 64;

// the global-memory cell of a TVMScript line: {text, cls, title} (never an all-clear when unknown)
function coalText(C) {
  const acc = `${C.accesses} global access${C.accesses === 1 ? "" : "es"}`;
  const why = (C.reasons || []).join("; ");
  if (C.status === "unknown") return { text: "?", cls: "unk", title: `global memory: unknown (${acc}): ${why}` };
  const spr = C.sectors_per_request, ideal = C.ideal_sectors_per_request, eff = C.efficiency;
  const used = eff !== null && eff !== undefined && eff < 0.999 ? ` ${Math.round(100 * eff)}%` : "";
  const part = C.status === "partial" ? "?" : "";
  let title = `global memory: ${spr.toFixed(2)} sectors per request (ideal ${ideal.toFixed(2)}; ${C.sectors} sectors, ` +
    `${C.requests} requests per CTA), ${used ? `${Math.round(100 * eff)}% of the sectors' bytes used` : "coalesced"} (${acc})`;
  if (part) title += `; partly unknown: ${why}`;
  const lanes = C.lanes_per_address || 0;  // atomics: lanes of a warp on one address, served one after another
  if (lanes > 1) {
    title += `; atomics serialised: ${lanes} lanes of a warp on one address`;
    return { text: `${spr.toFixed(1)} x${lanes}${part}`, cls: part ? "unk" : "bad", title };
  }
  return { text: `${spr.toFixed(1)}${used}${part}`, cls: part ? "unk" : used ? "bad" : "ok", title };
}   // rows per off-screen-skippable block (content-visibility) of the CUDA, PTX and SASS panes

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
.txlab-source .src-panes { display: flex; min-height: 0; flex: 1; overflow: hidden; }
.txlab-source .src-pane { display: flex; flex-direction: column; min-width: 60px; min-height: 0;
  font-family: var(--jp-code-font-family, ui-monospace, monospace); font-size: 11.5px; }
.txlab-source .src-pane.off, .txlab-source .src-grip.off { display: none; }
.txlab-source .src-grip { flex: none; width: 5px; cursor: col-resize; background: var(--jp-border-color2, #e0e0e0);
  touch-action: none; }
.txlab-source .src-grip:hover, .txlab-source .src-grip.drag { background: var(--jp-brand-color1, #1976d2); }
.txlab-source .src-title { padding: 2px 6px; font-weight: 600; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0);
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 12px; white-space: nowrap; overflow: hidden; }
.txlab-source .src-panes-pick label { margin-right: 6px; white-space: nowrap; }
.txlab-source .src-body.wrap .r { height: auto; min-height: 16px; }
.txlab-source .src-body.wrap .t { white-space: break-spaces; overflow-wrap: anywhere; min-width: 0; padding-left: 4ch; text-indent: -4ch; }
.txlab-source .fold { display: flex; height: 16px; cursor: pointer; color: var(--jp-ui-font-color2, #777);
  background: var(--jp-layout-color2, #eee); font-style: italic; width: max-content; min-width: 100%; }
.txlab-source .fold:hover { color: var(--jp-ui-font-color0, #000); }
.txlab-source .fold-body.folded { display: none; }
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
.txlab-source .co { flex: none; min-width: 4.4em; text-align: right; padding-right: 6px; font-size: 10px; color: var(--jp-ui-font-color2, #777); }
.txlab-source .co.bad { color: #c62828; font-weight: bold; }
.txlab-source .co.ok { color: #2e7d32; }
.txlab-source .co.unk { color: #b26a00; }
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
                  lastSelectMs: 0, selects: 0, hidden: new Set(), basis: {}, disconnect: null, laidOut: false };

    function build() {
      if (state.disconnect) state.disconnect();
      root.textContent = "";
      const d = readJSON(model);
      if (!d.user) { root.appendChild(h("div", { class: "src-info" }, "no line map")); return; }
      root.style.height = `${model.get("height")}px`;
      const lines = d.lines || {};
      const heat = d.heat || {};
      const heatRows = d.heat_rows || {};
      const total = d.total_samples || 0;
      const hasHeat = Object.keys(heat).length > 0 || Object.keys(heatRows).length > 0;
      const coal = d.coalescing || {};
      const hasCo = Object.keys(coal).length > 0;
      const hasCtl = d.sass.some((s) => s.control);
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
      const show = {};
      const pick = h("span", { class: "src-panes-pick", title: "show or hide a pane (drag the bars between panes to resize)" }, "panes: ");
      for (const p of PANES) {
        show[p] = h("input", { type: "checkbox", "data-testid": `source-show-${p}`, checked: !state.hidden.has(p) });
        pick.appendChild(h("label", {}, show[p], ` ${TITLES[p]}`));
      }
      const ptxNote = h("span", { class: "src-note", "data-testid": "source-pane-note", style: "opacity:0.75" });
      head.appendChild(pick);
      head.appendChild(ptxNote);
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

      const bodies = {}, rows = {}, index = {}, paneEls = {}, grips = {};
      // the TVMScript pane starts as wide as its longest line (digits, count bars, heat and
      // global-memory columns beside it), at most 58% of the view (longer lines wrap); the others
      // share the rest
      const longest = Math.max(20, ...d.user.map((t) => t.replace(/\t/g, "    ").length));
      const basis = {
        user: `0 0 min(calc(${longest}ch + 11.5em + ${hasHeat ? 35 : 0}px + ${hasCo ? 50 : 0}px + 24px), 58%)`,
        cuda: "1 1 0", ptx: "0.8 1 0", sass: "1.5 1 0",
      };
      for (const [p, b] of Object.entries(state.basis)) basis[p] = b;   // kept across rebuilds
      const perPaneUser = {
        user: d.user.map((_, i) => d.first + i),
        cuda: d.cuda_user, ptx: d.ptx_user, sass: d.sass.map((s) => s.user_line),
      };
      for (const p of PANES) {
        // TVMScript lines longer than their pane wrap (continuations indented): never cut
        const body = h("div", { class: p === "user" ? "src-body wrap" : "src-body", "data-testid": `source-pane-${p}` });
        const pane = h("div", { class: "src-pane", "data-pane": p }, h("div", { class: "src-title" }, TITLES[p]), body);
        if (p !== PANES[0]) {
          grips[p] = h("div", { class: "src-grip", "data-testid": `source-resize-${p}`, title: "drag to resize the panes" });
          panes.appendChild(grips[p]);
        }
        panes.appendChild(pane);
        paneEls[p] = pane;
        bodies[p] = body;
        // CUDA: TVM's generated preamble (headers, macros, helpers before the kernel) is folded
        const folded = p === "cuda" ? (d.cuda_preamble || 0) : 0;
        let foldBody = null;
        const frag = document.createDocumentFragment();
        const list = [];
        const texts = p === "user" ? d.user : p === "sass" ? d.sass : d[p];
        const own = p === "user" ? null : heatRows[p];
        // one prototype row per pane, cloned (faster than building each row's spans)
        const proto = h("div", { class: "r" }, h("span", { class: "g" }),
          p === "user" ? h("span", { class: "b" }) : null, hasHeat ? h("span", { class: "heat" }) : null,
          p === "sass" ? h("span", { class: "x" }) : null,
          d.live && (p === "user" || p === "sass") ? h("span", { class: "lr", "data-testid": `source-live-${p}` }) : null,
          hasCo && p === "user" ? h("span", { class: "co", "data-testid": "source-coalescing" }) : null,
          h("span", { class: "t" }));
        let blk = null;
        for (let i = 0; i < texts.length; i++) {
          const u = perPaneUser[p][i];
          const r = proto.cloneNode(true);
          if (u) r.setAttribute("data-u", u); else r.className = "r nomap";
          r._i = i;
          let cell = r.firstChild;                      // gutter
          if (p === "sass") { cell.textContent = texts[i].offset.toString(16).padStart(4, "0"); r.setAttribute("data-i", i); }
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
            if (texts[i].cls) r.classList.add(`c-${texts[i].cls}`);
            if (texts[i].control) cell.textContent = texts[i].control.notation;
            cell = cell.nextSibling;
          }
          if (d.live && (p === "user" || p === "sass")) {
            if (p === "sass") { if (texts[i].live_registers !== undefined) cell.textContent = String(texts[i].live_registers); }
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
          if (hasCo && p === "user") {
            const C = coal[String(d.first + i)];
            if (C) {
              const t = coalText(C);
              cell.textContent = t.text;
              cell.classList.add(t.cls);
              cell.title = t.title;
            }
            cell = cell.nextSibling;
          }
          cell.textContent = p === "sass" ? texts[i].text : texts[i];
          if (p === "user") frag.appendChild(r);
          else if (i < folded) {
            if (!foldBody) {
              const fold = h("div", { class: "fold", "data-testid": "source-cuda-fold", title: "click to show or hide" });
              foldBody = h("div", { class: "fold-body folded", "data-testid": "source-cuda-preamble" });
              const label = () => { fold.textContent = `${foldBody.classList.contains("folded") ? "▸" : "▾"} lines 1–${folded}: TVM's generated preamble (headers, macros, helper functions)`; };
              fold.addEventListener("click", () => { foldBody.classList.toggle("folded"); label(); });
              label();
              frag.appendChild(fold);
              frag.appendChild(foldBody);
            }
            foldBody.appendChild(r);
          } else {                                        // blocks the browser may skip while off screen
            if ((i - folded) % BLOCK === 0) { blk = document.createElement("div"); blk.className = "blk"; frag.appendChild(blk); }
            blk.appendChild(r);
          }
          list.push(r);
        }
        if (blk && (texts.length - folded) % BLOCK) blk.style.containIntrinsicBlockSize = `auto ${((texts.length - folded) % BLOCK) * 16}px`;
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
        if (coal[String(u)]) parts.push(coalText(coal[String(u)]).title);
        const hv = heat[String(u)];
        if (hv) {
          const st = stallText(hv.stalls);
          parts.push(`${hv.samples} samples${total ? ` (${pct(hv.samples)})` : ""}` + (st ? ` · stalls: ${st}` : ""));
        }
        return parts.join(" · ");
      }
      function insLabel(j) {
        const s = d.sass[j];
        return `${s.offset.toString(16).padStart(4, "0")} ${s.text.split(" ").slice(0, 2).join(" ")}${s.user_line ? ` (line ${s.user_line})` : ""}`;
      }
      function describeControl(j) {
        const x = d.sass[j].control;
        if (!x) return "";
        const { notation: n, stall, yield: yld, write_barrier: wr, read_barrier: rd, wait_mask: wait, reuse } = x;
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
          const what = p === "sass" ? `instruction ${d.sass[i].offset.toString(16).padStart(4, "0")}` : `${TITLES[p]} line ${i + 1}`;
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
        const x = d.sass[i].control;
        if (!x) return;
        const wait = x.wait_mask;
        const prod = x.producers || [], cons = x.consumers || [];
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
      // where a row sits in its pane's scrolled content: from bounding boxes (a row's offsetTop
      // counts from its content-visibility block, not from the pane)
      function rowTop(body, row) {
        return row.getBoundingClientRect().top - body.getBoundingClientRect().top - body.clientTop + body.scrollTop;
      }
      // scroll `row` to the middle of its pane: always when `centre`, else only if it is out of view
      function scrollTo(body, row, centre) {
        if (!body.clientHeight || !row.getClientRects().length) return false;   // pane hidden, or not laid out yet
        const top = rowTop(body, row), hgt = row.offsetHeight || 16;
        const inView = top >= body.scrollTop && top + hgt <= body.scrollTop + body.clientHeight;
        if (centre || !inView) body.scrollTop = Math.max(0, top - (body.clientHeight - hgt) / 2);
        return true;
      }
      let lit = [];
      function highlight(u, from, i, centre) {
        const s = performance.now();
        for (const r of lit) r.classList.remove("hl");
        lit = [];
        if (u) {
          for (const p of PANES) {
            const rs = index[p].get(u) || [];
            for (const r of rs) r.classList.add("hl");
            lit.push(...rs);
            if (p !== from && rs.length) scrollTo(bodies[p], rs[0], centre);
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
          const x = d.sass[i].control;
          if (x) { for (const [j] of x.producers || []) mark(j, "dep-p"); for (const [j] of x.consumers || []) mark(j, "dep-c"); }
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
            highlight(u, p, i, true);
            return;
          }
          if (!u) return;
          if (state.sel >= 0) select(-1);
          if (state.pin === u) { pin(0); return; }
          pin(u); state.hover = u; highlight(u, p, i, true);
        });
      }
      info.addEventListener("click", (ev) => {
        const b = ev.target.closest("button[data-testid='source-dep']");
        if (!b) return;
        const j = Number(b.dataset.i);
        const u = d.sass[j].user_line || 0;
        select(j);
        pin(u); state.hover = u;
        scrollTo(bodies.sass, rows.sass[j]);
        highlight(u, "sass", j, true);
      });
      for (const hl of d.hot || []) {
        const b = h("button", { "data-testid": "source-hot-line", "data-u": hl.line,
                                title: `${hl.samples} samples · stalls: ${hl.top.map(([k, v]) => `${k} ${v}`).join(", ")}` },
          `${hl.line}: ${pct(hl.samples)} ${hl.text}`);
        b.addEventListener("click", () => {
          if (state.sel >= 0) select(-1);
          pin(hl.line); state.hover = hl.line;
          highlight(hl.line, "hot", undefined, true);
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
      if (state.pin) { const u = state.pin; state.pin = 0; pin(u); highlight(u, "hot", undefined, true); }
      // a pin made before the view was laid out (built off screen): scroll once it has a size
      // and, once the view has a width: a view too narrow for four useful panes (the TVMScript
      // pane's lines plus 240 px for each other pane) starts with PTX hidden (tick PTX to show it)
      const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => {
        if (!panes.clientHeight || !panes.clientWidth) return;
        ro.disconnect();
        if (!state.laidOut) {
          state.laidOut = true;
          const need = userWidth();
          basis.user = `0 0 min(${need}px, 58%)`;
          if (need + 3 * 240 > panes.clientWidth && !state.hidden.size) {
            state.hidden.add("ptx");
            show.ptx.checked = false;
            ptxNote.textContent = "PTX hidden to make room: tick it to show";
          }
          layout();
        }
        if (state.pin) for (const p of PANES) { const rs = index[p].get(state.pin) || []; if (rs.length) scrollTo(bodies[p], rs[0], true); }
      }) : null;
      if (ro) ro.observe(panes);
      state.disconnect = () => ro && ro.disconnect();

      // pane widths and visibility: every visible pane but the last keeps its basis (the last takes
      // what is left); a grip between two panes moves the boundary between them
      function visible() { return PANES.filter((p) => !state.hidden.has(p)); }
      // what the TVMScript pane needs for its longest line unwrapped: that many characters of its
      // font, plus the gutter columns beside the text, plus a scrollbar
      function userWidth() {
        const row = rows.user.find((r) => r.lastChild.textContent.length) || rows.user[0];
        if (!row) return 300;
        const probe = h("span", { style: "position:absolute;visibility:hidden;white-space:pre" }, "0".repeat(longest));
        bodies.user.appendChild(probe);
        const text = probe.getBoundingClientRect().width;
        probe.remove();
        const gutter = row.lastChild.getBoundingClientRect().left - row.getBoundingClientRect().left;
        return Math.ceil(text + gutter + 4 * 7 + 18);   // (+ the wrap indent's room and a scrollbar)
      }
      function layout() {
        const vis = visible();
        for (const p of PANES) {
          const on = vis.includes(p);
          paneEls[p].classList.toggle("off", !on);
          // the last visible pane takes what is left (a growing pane keeps its share)
          const last = p === vis[vis.length - 1];
          paneEls[p].style.flex = last && !basis[p].endsWith(" 1 0") ? "1 1 0" : basis[p];
          if (grips[p]) grips[p].classList.toggle("off", !on || vis.indexOf(p) === 0);
        }
      }
      for (const p of PANES) {
        show[p].addEventListener("change", () => {
          if (!show[p].checked && visible().length === 1) { show[p].checked = true; return; }   // keep one pane
          if (show[p].checked) state.hidden.delete(p); else state.hidden.add(p);
          ptxNote.textContent = "";
          layout();
          // a pane shown again opens on the selected line
          const rs = state.pin ? index[p].get(state.pin) || [] : [];
          if (show[p].checked && rs.length) scrollTo(bodies[p], rs[0], true);
        });
      }
      for (const [p, grip] of Object.entries(grips)) {
        grip.addEventListener("pointerdown", (ev) => {
          const vis = visible();
          const right = p, left = vis[vis.indexOf(p) - 1];
          if (!left) return;
          ev.preventDefault();
          grip.setPointerCapture(ev.pointerId);
          grip.classList.add("drag");
          // freeze every visible pane at its current width (the last one stays flexible)
          const w0 = {};
          for (const q of vis) w0[q] = paneEls[q].getBoundingClientRect().width;
          for (const q of vis.slice(0, -1)) { basis[q] = `0 0 ${w0[q]}px`; }
          layout();
          const x0 = ev.clientX, last = vis[vis.length - 1];
          const move = (e) => {
            let dx = e.clientX - x0;
            dx = Math.max(60 - w0[left], dx);
            if (right !== last) dx = Math.min(w0[right] - 60, dx);
            basis[left] = `0 0 ${w0[left] + dx}px`;
            if (right !== last) basis[right] = `0 0 ${w0[right] - dx}px`;
            state.basis[left] = basis[left];
            if (right !== last) state.basis[right] = basis[right];
            layout();
          };
          const up = () => {
            grip.classList.remove("drag");
            grip.removeEventListener("pointermove", move);
            grip.removeEventListener("pointerup", up);
            grip.removeEventListener("pointercancel", up);
          };
          grip.addEventListener("pointermove", move);
          grip.addEventListener("pointerup", up);
          grip.addEventListener("pointercancel", up);
        });
      }
      layout();
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
    return () => { cleanupKeys && cleanupKeys(); if (state.disconnect) state.disconnect(); model.off("change:data", build); };
  },
};
