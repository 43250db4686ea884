// DiffView: two builds side by side. Resources (a, b, delta), instruction-class histogram as
// paired bars, and the user lines aligned across the two sources; a line whose SASS changed is
// highlighted, and clicking it shows both instruction lists with the changed ones marked. The
// verdict on the SASS as a whole ("SASS identical", "… modulo register renaming", "SASS differs")
// comes first; source lines rewritten to the same SASS (status same_sass) are shown as such, in a
// neutral colour, and are not counted, walked or kept by "changed only".
// Every user string (names, source lines, SASS) goes through text nodes.
import { h, theme, isolateKeys, readJSON } from "./_common.js";

const MAX_ROWS = 2000;
const CLASS_COLOURS = {
  memory: "#4e79a7", tensor: "#e15759", barrier: "#f28e2b", control: "#76b7b2",
  warp: "#b07aa1", alu: "#59a14f", other: "#9c755f",
};

function fmtField(f) {
  return f.replace(/_bytes$/, " (B)").replaceAll("_", " ");
}

export default {
  render({ model, el }) {
    isolateKeys(el);
    const th = theme(el);
    const markBg = {
      changed: th.dark ? "rgba(237,201,72,0.30)" : "rgba(237,201,72,0.45)",
      removed: th.dark ? "rgba(225,87,89,0.30)" : "rgba(225,87,89,0.22)",
      added: th.dark ? "rgba(89,161,79,0.30)" : "rgba(89,161,79,0.22)",
      equal: "transparent",
    };
    const rowBg = { same: "transparent", same_sass: th.dark ? "rgba(160,160,160,0.12)" : "rgba(120,120,120,0.10)",
                    changed: markBg.changed, removed: markBg.removed, added: markBg.added };
    const isChange = (r) => r.status !== "same" && r.status !== "same_sass";
    const mono = { fontFamily: th.mono, fontSize: "12px" };
    const root = h("div", {
      class: "txlab-diff",
      style: {
        fontFamily: th.font, fontSize: "13px", color: th.fg, background: th.bg, border: `1px solid ${th.border}`,
        borderRadius: "4px", display: "flex", flexDirection: "column", height: `${model.get("height")}px`, overflow: "hidden",
      },
    });
    const ctl = { padding: "2px 6px", background: th.bg2, color: th.fg, border: `1px solid ${th.border}`, borderRadius: "3px", font: "inherit", cursor: "pointer" };
    const verdict = h("div", { "data-testid": "diff-verdict", style: { fontWeight: "700", padding: "6px 6px 0" } });
    const summary = h("div", { "data-testid": "diff-summary", style: { fontWeight: "600" } });
    const changedOnly = h("input", { type: "checkbox", "data-testid": "diff-changed-only" });
    const next = h("button", { "data-testid": "diff-next", style: ctl, title: "select the next line whose SASS changed" }, "next change ▸");
    const count = h("span", { "data-testid": "diff-count", style: { color: th.fgMuted } });
    const bar = h("div", { style: { display: "flex", gap: "10px", alignItems: "center", padding: "6px", borderBottom: `1px solid ${th.border}`, flexWrap: "wrap" } },
      summary, h("span", { style: { flex: "1" } }),
      h("label", { style: { display: "flex", gap: "4px", alignItems: "center", cursor: "pointer" } }, changedOnly, "changed only"),
      next, count);
    const resources = h("div", { "data-testid": "diff-resources", style: { overflow: "auto" } });
    const histogram = h("div", { "data-testid": "diff-histogram", style: { minWidth: "220px" } });
    const top = h("div", { style: { display: "flex", gap: "18px", padding: "6px", borderBottom: `1px solid ${th.border}`, maxHeight: "40%", overflow: "auto" } },
      resources, histogram);
    const lines = h("div", { "data-testid": "diff-lines", role: "listbox", style: { width: "46%", minWidth: "260px", overflow: "auto", borderRight: `1px solid ${th.border}` } });
    const detail = h("div", { "data-testid": "diff-detail", style: { flex: "1", overflow: "auto", padding: "6px" } });
    root.append(verdict, bar, top, h("div", { style: { display: "flex", flex: "1", minHeight: "0" } }, lines, detail));
    el.append(root);

    let data = {};

    function parse() {
      data = readJSON(model);
    }

    function renderTop() {
      const a = data.a || {}, b = data.b || {};
      summary.textContent = `${a.name ?? "a"} (${a.arch ?? "?"})  vs  ${b.name ?? "b"} (${b.arch ?? "?"})`;
      verdict.textContent = data.headline || "";
      verdict.dataset.verdict = data.sass_verdict || "";
      verdict.style.color = data.sass_verdict === "different" ? th.fg : "#2e7d32";
      const t = h("table", { style: { borderCollapse: "collapse", ...mono } });
      t.append(h("tr", {}, ...["kernel", "", "a", "b", "Δ"].map((x) => h("th", { style: { textAlign: "left", padding: "0 6px" } }, x))));
      let last = null;
      for (const r of data.resources || []) {
        const name = r.kernel_a === r.kernel_b ? String(r.kernel_a) : `${r.kernel_a ?? "—"} / ${r.kernel_b ?? "—"}`;
        const d = r.delta || 0;
        t.append(h("tr", { style: { fontWeight: d ? "600" : "400" } },
          h("td", { style: { padding: "0 6px", color: th.fgMuted } }, name === last ? "" : name),
          h("td", { style: { padding: "0 6px" } }, fmtField(r.field)),
          h("td", { style: { padding: "0 6px", textAlign: "right" } }, String(r.a)),
          h("td", { style: { padding: "0 6px", textAlign: "right" } }, String(r.b)),
          h("td", { style: { padding: "0 6px", textAlign: "right", color: d > 0 ? th.error : d < 0 ? "#59a14f" : th.fgMuted } }, d ? (d > 0 ? `+${d}` : String(d)) : "·")));
        last = name;
      }
      resources.replaceChildren(t);
      const hist = data.histogram || {};
      const max = Math.max(1, ...Object.values(hist).flatMap((v) => [v.a, v.b]));
      const rows = Object.entries(hist).map(([cls, v]) => {
        const barOf = (n, side) => h("div", {
          title: `${cls} (${side}): ${n}`,
          style: { height: "7px", width: `${(100 * n) / max}%`, minWidth: n ? "2px" : "0", background: CLASS_COLOURS[cls] || th.accent, opacity: side === "a" ? "0.55" : "1", margin: "1px 0" },
        });
        return h("div", { style: { display: "grid", gridTemplateColumns: "64px 1fr 80px", gap: "6px", alignItems: "center", ...mono } },
          h("span", {}, cls), h("div", {}, barOf(v.a, "a"), barOf(v.b, "b")),
          h("span", { style: { textAlign: "right", color: v.delta ? th.fg : th.fgMuted } }, `${v.a} → ${v.b}`));
      });
      histogram.replaceChildren(h("div", { style: { color: th.fgMuted, marginBottom: "2px" } }, "instructions per class (a pale, b solid)"), ...rows);
    }

    function shown() {
      const all = (data.lines || []).map((r, i) => [i, r]);
      return model.get("changed_only") ? all.filter(([, r]) => isChange(r)) : all;
    }

    function renderLines() {
      const rows = shown();
      const total = (data.lines || []).length;
      const changed = (data.lines || []).filter(isChange).length;
      const rewritten = (data.lines || []).filter((r) => r.status === "same_sass").length;
      const unit = data.by_line ? "user lines" : "kernels";
      count.textContent = `${changed} of ${total} ${unit} changed` + (rewritten ? ` · ${rewritten} rewritten, same SASS` : "");
      changedOnly.checked = !!model.get("changed_only");
      const sel = model.get("selected");
      const items = rows.slice(0, MAX_ROWS).map(([i, r]) => {
        const active = i === sel;
        const span = (ls, n) => (ls && ls.length > 1 ? `${ls[0]}–${ls[ls.length - 1]}` : n == null ? "—" : String(n));
        const num = (ls, n) => h("span", { style: { color: th.fgMuted, display: "inline-block", width: "3.6em", textAlign: "right", marginRight: "6px", userSelect: "none" } }, span(ls, n));
        const text = (r.b_text ?? r.a_text ?? "").trim();
        const item = h("div", {
          "data-testid": "diff-row", "data-index": i, "data-status": r.status, role: "option", tabindex: "0",
          "aria-selected": active ? "true" : "false",
          style: {
            ...mono, padding: "2px 4px", cursor: "pointer", whiteSpace: "nowrap", overflow: "hidden", textOverflow: "ellipsis",
            background: rowBg[r.status] || "transparent", borderLeft: active ? `3px solid ${th.accent}` : "3px solid transparent",
            outline: active ? `1px solid ${th.accent}` : "none",
          },
          title: r.status === "same_sass" ? "the source was rewritten; the SASS is the same"
            : `${r.status}: ${(r.a_sass || []).length} → ${(r.b_sass || []).length} instructions`,
        }, num(r.a_lines, r.a_line), num(r.b_lines, r.b_line),
        h("span", { style: { color: th.fgMuted, marginRight: "6px" } }, `${(r.a_sass || []).length}→${(r.b_sass || []).length}`),
        r.status === "same_sass" ? h("span", { "data-testid": "diff-same-sass", style: { color: th.fgMuted, marginRight: "6px" } }, "= SASS") : "",
        text.split("\n").map((t) => t.trim()).filter(Boolean).join(" ⏎ "));
        const choose = () => { model.set("selected", i); model.save_changes(); };
        item.addEventListener("click", choose);
        item.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choose(); } });
        return item;
      });
      if (rows.length > MAX_ROWS) items.push(h("div", { style: { color: th.fgMuted, padding: "4px" } }, `… ${rows.length - MAX_ROWS} more`));
      if (!rows.length) items.push(h("div", { style: { color: th.fgMuted, padding: "6px" } }, total ? "no line changed" : "no SASS to compare"));
      lines.replaceChildren(...items);
      const act = lines.querySelector("[aria-selected='true']");
      if (act && act.scrollIntoView) act.scrollIntoView({ block: "nearest" });
    }

    function sassList(list, testid) {
      const pre = h("div", { "data-testid": testid, style: { ...mono, textAlign: "left", background: th.bg2, borderRadius: "3px", padding: "3px 0", overflowX: "auto" } });
      for (const ins of list || []) {
        pre.append(h("div", {
          "data-mark": ins.mark, title: `${ins.kernel} +0x${Number(ins.offset).toString(16)} · ${ins.cls} · ${ins.control}`,
          style: { whiteSpace: "pre", padding: "0 6px", background: markBg[ins.mark] || "transparent" },
        }, h("span", { style: { color: th.fgMuted, userSelect: "none" } }, `${Number(ins.offset).toString(16).padStart(4, "0")}  `), ins.text));
      }
      if (!(list || []).length) pre.append(h("div", { style: { color: th.fgMuted, padding: "0 6px" } }, "(no instructions)"));
      return pre;
    }

    function renderDetail() {
      const r = (data.lines || [])[model.get("selected")];
      if (!r) {
        detail.replaceChildren(h("div", { style: { color: th.fgMuted } }, "select a line to compare its SASS"));
        return;
      }
      const side = (which, line, text, list) => h("div", { style: { flex: "1", minWidth: "0", textAlign: "left" } },
        h("div", { style: { fontWeight: "600", marginBottom: "2px" } }, `${which}${line == null ? "" : ` ${String(line).includes("–") ? "lines" : "line"} ${line}`}`),
        h("div", { style: { ...mono, whiteSpace: "pre-wrap", marginBottom: "4px", color: th.fgMuted } }, (text ?? "").trim()),
        sassList(list, `diff-sass-${which}`));
      detail.replaceChildren(
        h("div", { style: { marginBottom: "4px" } }, r.status === "same_sass"
          ? `source rewritten, compiled the same: ${(r.a_sass || []).length} instructions on each side`
          : `${r.status}: ${(r.a_sass || []).length} → ${(r.b_sass || []).length} instructions`),
        h("div", { style: { display: "flex", gap: "8px" } },
          side("a", (r.a_lines || []).length > 1 ? `${r.a_lines[0]}–${r.a_lines[r.a_lines.length - 1]}` : r.a_line, r.a_text, r.a_sass),
          side("b", (r.b_lines || []).length > 1 ? `${r.b_lines[0]}–${r.b_lines[r.b_lines.length - 1]}` : r.b_line, r.b_text, r.b_sass)));
    }

    changedOnly.addEventListener("change", () => { model.set("changed_only", changedOnly.checked); model.save_changes(); });
    next.addEventListener("click", () => {
      const ls = data.lines || [];
      const cur = model.get("selected");
      for (let k = 1; k <= ls.length; k++) {
        const i = (cur + k + ls.length) % ls.length;
        if (isChange(ls[i])) { model.set("selected", i); model.save_changes(); return; }
      }
    });

    const onPayload = () => { parse(); renderTop(); renderLines(); renderDetail(); };
    const onSelected = () => { renderLines(); renderDetail(); };
    const onHeight = () => { root.style.height = `${model.get("height")}px`; };
    model.on("change:data", onPayload);
    model.on("change:changed_only", renderLines);
    model.on("change:selected", onSelected);
    model.on("change:height", onHeight);
    onPayload();
    return () => {
      model.off("change:data", onPayload);
      model.off("change:changed_only", renderLines);
      model.off("change:selected", onSelected);
      model.off("change:height", onHeight);
    };
  },
};
