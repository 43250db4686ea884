// SourceView: TVMScript | CUDA C | PTX | SASS, synchronized through the line map.
// Rows are built once (text nodes only); `index[pane][userLine]` lists each pane's rows of a user
// line, so a highlight only toggles the classes of the rows it changes and scrolls the first
// counterpart of each other pane into view (inside the pane, never the page).
import { h, theme, isolateKeys } from "./_common.js";

const PANES = ["user", "cuda", "ptx", "sass"];
const TITLES = { user: "TVMScript", cuda: "CUDA C", ptx: "PTX", sass: "SASS" };
const CLASS_COLOURS = { memory: "#4e79a7", tensor: "#e15759", barrier: "#f28e2b", control: "#76b7b2", alu: "#9c9c9c" };

const CSS = `
.txlab-source { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 12px;
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 4px; display: flex; flex-direction: column; }
.txlab-source .src-head { padding: 4px 8px; display: flex; gap: 12px; align-items: center;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-panes { display: grid; grid-template-columns: 1.2fr 1.2fr 1fr 1fr; min-height: 0; flex: 1; }
.txlab-source .src-pane { display: flex; flex-direction: column; min-width: 0; border-right: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-title { padding: 2px 6px; font-weight: 600; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.txlab-source .src-body { overflow: auto; flex: 1; font-family: var(--jp-code-font-family, ui-monospace, monospace);
  font-size: 11.5px; line-height: 16px; white-space: pre; position: relative; }
.txlab-source .r { display: flex; height: 16px; cursor: default; }
.txlab-source .r.nomap { opacity: 0.45; }
.txlab-source .r.hl { background: var(--txlab-src-hl, rgba(255, 200, 0, 0.28)); }
.txlab-source .r.pin { outline: 1px solid var(--jp-brand-color1, #1976d2); outline-offset: -1px; }
.txlab-source .r.hidden { display: none; }
.txlab-source .g { color: var(--jp-ui-font-color2, #888); min-width: 4.2em; text-align: right; padding-right: 6px; flex: none; }
.txlab-source .b { min-width: 5.5em; flex: none; display: flex; gap: 1px; align-items: center; padding-right: 4px; }
.txlab-source .b i { display: inline-block; height: 9px; }
.txlab-source .t { flex: 1; }
.txlab-source .src-info { padding: 4px 8px; min-height: 32px; border-top: 1px solid var(--jp-border-color2, #e0e0e0); white-space: normal; }
.txlab-source .heat { width: 30px; flex: none; }
`;

function userLinesOf(arr) {
  const out = new Map();
  arr.forEach((u, i) => { if (u !== null && u !== undefined) { if (!out.has(u)) out.set(u, []); out.get(u).push(i); } });
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
    let state = { hover: 0, pin: model.get("selected") || 0, lastHighlightMs: 0, highlights: 0 };

    function build() {
      root.textContent = "";
      const d = JSON.parse(model.get("data") || "{}");
      if (!d.user) { root.appendChild(h("div", { class: "src-info" }, "no line map")); return; }
      root.style.height = `${model.get("height")}px`;
      const lines = d.lines || {};
      const heat = d.heat || {};
      const maxHeat = Math.max(1, ...Object.values(heat).map((v) => v.samples || 0));
      const codeOnly = h("input", { type: "checkbox", "data-testid": "source-code-only" });
      const head = h("div", { class: "src-head" },
        h("b", {}, d.name), ` ${d.arch} · ${d.sass.length} SASS instructions · `,
        h("label", {}, codeOnly, " only lines with SASS"),
        d.exact ? "" : h("span", { title: "the marked CUDA differed from TVM's; lines were aligned" }, " (CUDA lines aligned)"));
      root.appendChild(head);
      const panes = h("div", { class: "src-panes" });
      root.appendChild(panes);
      const info = h("div", { class: "src-info", "data-testid": "source-info" }, "hover a line: its CUDA, PTX and SASS light up");
      root.appendChild(info);
      root.appendChild(stats);

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
        for (let i = 0; i < texts.length; i++) {
          const u = perPaneUser[p][i];
          const r = document.createElement("div");
          r.className = u ? "r" : "r nomap";
          if (u) r.dataset.u = u;
          const g = document.createElement("span");
          g.className = "g";
          if (p === "sass") g.textContent = texts[i].o.toString(16).padStart(4, "0");
          else g.textContent = String(p === "user" ? d.first + i : i + 1);
          r.appendChild(g);
          if (p === "user") {
            const b = document.createElement("span");
            b.className = "b";
            const L = lines[String(u)];
            if (L) {
              const total = L.sass;
              for (const [c, n] of Object.entries(L.classes)) {
                const bar = document.createElement("i");
                bar.style.width = `${Math.max(2, Math.round(40 * n / Math.max(total, 1)))}px`;
                bar.style.background = CLASS_COLOURS[c] || "#999";
                b.appendChild(bar);
              }
              b.appendChild(document.createTextNode(` ${total}`));
            } else if (d.user[i].trim()) {
              r.classList.add("nomap");
            }
            r.appendChild(b);
            const hv = heat[String(u)];
            if (Object.keys(heat).length) {
              const hb = document.createElement("span");
              hb.className = "heat";
              if (hv) { hb.style.background = th.dark ? `rgba(255,90,60,${hv.samples / maxHeat})` : `rgba(220,40,20,${hv.samples / maxHeat})`; }
              r.appendChild(hb);
            }
          } else if (p === "sass" && texts[i].c) {
            r.style.borderLeft = `3px solid ${CLASS_COLOURS[texts[i].c] || "transparent"}`;
          }
          const tx = document.createElement("span");
          tx.className = "t";
          tx.textContent = p === "sass" ? texts[i].t : texts[i];
          r.appendChild(tx);
          frag.appendChild(r);
          list.push(r);
        }
        body.appendChild(frag);
        rows[p] = list;
        const idx = new Map();
        list.forEach((r, i) => { const u = perPaneUser[p][i]; if (u) { if (!idx.has(u)) idx.set(u, []); idx.get(u).push(r); } });
        index[p] = idx;
      }

      let lit = [];
      function describe(u) {
        const L = lines[String(u)];
        const text = d.user[u - d.first] !== undefined ? d.user[u - d.first].trim() : "";
        const parts = [`line ${u}: ${text}`];
        if (L) {
          parts.push(`${L.sass} SASS (` + Object.entries(L.classes).map(([c, n]) => `${c} ${n}`).join(", ") + ")");
          if (L.library && L.library.length) parts.push("inlines " + L.library.join(", "));
        } else parts.push("no SASS of its own");
        const hv = heat[String(u)];
        if (hv) {
          const st = Object.entries(hv.stalls || {}).sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => `${k} ${v}`).join(", ");
          parts.push(`${hv.samples} samples` + (st ? ` · stalls: ${st}` : ""));
        }
        info.textContent = parts.join(" · ");
      }
      function scrollTo(body, row) {
        const top = row.offsetTop, bottom = top + row.offsetHeight;
        if (top < body.scrollTop || bottom > body.scrollTop + body.clientHeight) {
          body.scrollTop = Math.max(0, top - body.clientHeight / 3);
        }
      }
      function highlight(u, from) {
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
          describe(u);
        }
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
      for (const p of PANES) {
        const body = bodies[p];
        body.addEventListener("mouseover", (ev) => {
          const r = ev.target.closest(".r");
          const u = r && r.dataset.u ? Number(r.dataset.u) : 0;
          if (u !== state.hover && !state.pin) { state.hover = u; highlight(u, p); }
        });
        body.addEventListener("click", (ev) => {
          const r = ev.target.closest(".r");
          const u = r && r.dataset.u ? Number(r.dataset.u) : 0;
          if (!u) return;
          if (state.pin === u) { pin(0); return; }
          pin(u); state.hover = u; highlight(u, p);
        });
      }
      root.addEventListener("keydown", (ev) => { if (ev.key === "Escape") { pin(0); highlight(0); } });
      root.tabIndex = 0;
      codeOnly.addEventListener("change", () => {
        for (const r of rows.user) {
          const u = Number(r.dataset.u || 0);
          r.classList.toggle("hidden", codeOnly.checked && !lines[String(u)]);
        }
      });
      if (state.pin) { const u = state.pin; state.pin = 0; pin(u); highlight(u); }
      requestAnimationFrame(() => requestAnimationFrame(() => {
        state.firstPaintMs = performance.now() - t0;
        writeStats();
      }));
      function writeStats() {
        stats.textContent = JSON.stringify({ firstPaintMs: state.firstPaintMs, lastHighlightMs: state.lastHighlightMs,
          highlights: state.highlights, rows: PANES.map((p) => rows[p].length) });
      }
    }
    build();
    model.on("change:data", build);
    model.on("change:height", () => { root.style.height = `${model.get("height")}px`; });
    return () => { cleanupKeys && cleanupKeys(); model.off("change:data", build); };
  },
};
