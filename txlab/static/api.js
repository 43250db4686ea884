// built from widgets/src/api.js by widgets/build.mjs; do not edit

// src/_common.js
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === void 0 || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style" && typeof value === "object") Object.assign(node.style, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === void 0 || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function isDark(el) {
  const body = document.body;
  if (body && body.dataset && body.dataset.jpThemeLight === "false") return true;
  const bg = getComputedStyle(el || body).getPropertyValue("--jp-layout-color0").trim();
  if (bg) {
    const m = bg.match(/^#([0-9a-f]{6})$/i);
    if (m) {
      const n = parseInt(m[1], 16);
      const lum = 0.299 * (n >> 16) + 0.587 * (n >> 8 & 255) + 0.114 * (n & 255);
      return lum < 128;
    }
  }
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
}
function theme(el) {
  const cs = getComputedStyle(el || document.body);
  const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
  const dark = isDark(el);
  return {
    dark,
    fg: v("--jp-ui-font-color0", dark ? "#e6e6e6" : "#1f1f1f"),
    fgMuted: v("--jp-ui-font-color2", dark ? "#9a9a9a" : "#666666"),
    bg: v("--jp-layout-color0", dark ? "#111111" : "#ffffff"),
    bg2: v("--jp-layout-color2", dark ? "#2a2a2a" : "#eeeeee"),
    border: v("--jp-border-color1", dark ? "#444444" : "#cccccc"),
    accent: v("--jp-brand-color1", "#1976d2"),
    error: v("--jp-error-color1", "#d32f2f"),
    font: v("--jp-ui-font-family", "system-ui, sans-serif"),
    mono: v("--jp-code-font-family", "ui-monospace, monospace")
  };
}
function isolateKeys(el) {
  const stop = (e) => {
    if (e.key === "Escape" || e.key === "Enter" && (e.shiftKey || e.ctrlKey || e.metaKey)) return;
    e.stopPropagation();
  };
  el.addEventListener("keydown", stop);
  return () => el.removeEventListener("keydown", stop);
}

// src/api.js
var MAX_LIST = 400;
function matches(e, words, category, arch) {
  if (category && e.category !== category) return false;
  if (arch && e.arch !== arch) return false;
  const hay = `${e.name}
${e.doc}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}
function badge(th, text, title, colour) {
  return h("span", {
    class: "txlab-api-badge",
    title,
    style: {
      display: "inline-block",
      padding: "0 5px",
      marginLeft: "4px",
      borderRadius: "3px",
      fontSize: "11px",
      border: `1px solid ${colour || th.border}`,
      color: colour || th.fgMuted,
      whiteSpace: "nowrap"
    }
  }, text);
}
function compileBadge(th, e) {
  if (!e.has_example) return badge(th, "no example", "no example kernel uses this name");
  if (e.compiles === true) return badge(th, "compiles ✓", "every example using it builds to a cubin for its arch", "#59a14f");
  if (e.compiles === false) return badge(th, "compiles ✗", e.compile_error || "an example failed to build", th.error);
  return badge(th, "compiles ?", "not built in this session (selecting it compiles its example to CUDA)");
}
function gpuBadge(th, e) {
  if (e.verified_gpu === true) return badge(th, "H200 ✓", "result checked on an H200 (txlab/data/api_verified.json)", "#59a14f");
  if (e.verified_gpu === null || e.verified_gpu === void 0) {
    return badge(th, "H200 n/a", e.why_not || "an H200 cannot run this example");
  }
  return badge(th, "H200 —", "runnable on an H200 but not (yet) verified there");
}
async function copyText(text) {
  try {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch (err) {
  }
  try {
    const ta = h("textarea", { style: { position: "fixed", left: "-9999px" } });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  } catch (err) {
    return false;
  }
}
var api_default = {
  render({ model, el }) {
    isolateKeys(el);
    const th = theme(el);
    const root = h("div", {
      class: "txlab-api",
      style: {
        fontFamily: th.font,
        fontSize: "13px",
        color: th.fg,
        background: th.bg,
        border: `1px solid ${th.border}`,
        borderRadius: "4px",
        display: "flex",
        flexDirection: "column",
        height: `${model.get("height")}px`,
        overflow: "hidden"
      }
    });
    const ctl = { padding: "2px 4px", background: th.bg, color: th.fg, border: `1px solid ${th.border}`, borderRadius: "3px", font: "inherit" };
    const search = h("input", { type: "search", placeholder: "search name or doc", "data-testid": "api-search", style: { ...ctl, flex: "1 1 200px", minWidth: "120px" } });
    const catSel = h("select", { "data-testid": "api-category", style: ctl });
    const archSel = h("select", { "data-testid": "api-arch", style: ctl });
    const count = h("span", { "data-testid": "api-count", style: { color: th.fgMuted, whiteSpace: "nowrap" } });
    const bar = h(
      "div",
      { style: { display: "flex", gap: "6px", alignItems: "center", padding: "6px", borderBottom: `1px solid ${th.border}`, flexWrap: "wrap" } },
      search,
      catSel,
      archSel,
      count
    );
    const list = h("div", { "data-testid": "api-list", role: "listbox", style: { width: "36%", minWidth: "220px", overflowY: "auto", borderRight: `1px solid ${th.border}` } });
    const detail = h("div", { "data-testid": "api-detail", style: { flex: "1", overflow: "auto", padding: "8px 10px" } });
    const body = h("div", { style: { display: "flex", flex: "1", minHeight: "0" } }, list, detail);
    root.append(bar, body);
    el.append(root);
    const mono = { fontFamily: th.mono, fontSize: "12px" };
    let insertStatus = null;
    let pendingInsert = null;
    function fillSelect(sel, values, allLabel, current) {
      sel.replaceChildren(h("option", { value: "" }, allLabel), ...values.map((v) => h("option", { value: v }, v)));
      sel.value = values.includes(current) ? current : "";
    }
    function renderList() {
      const entries = model.get("entries") || [];
      const words = (model.get("query") || "").toLowerCase().split(/\s+/).filter(Boolean);
      const shown = entries.filter((e) => matches(e, words, model.get("category"), model.get("arch")));
      count.textContent = `${shown.length} of ${entries.length}`;
      const sel = model.get("selected");
      const items = shown.slice(0, MAX_LIST).map((e) => {
        const active = e.name === sel;
        const item = h(
          "div",
          {
            "data-testid": "api-item",
            "data-name": e.name,
            role: "option",
            "aria-selected": active ? "true" : "false",
            tabindex: "0",
            style: {
              padding: "3px 6px",
              cursor: "pointer",
              borderBottom: `1px solid ${th.bg2}`,
              background: active ? th.bg2 : "transparent",
              borderLeft: active ? `3px solid ${th.accent}` : "3px solid transparent"
            }
          },
          h("div", { style: { ...mono, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" } }, e.name),
          h("div", { style: { color: th.fgMuted, fontSize: "11px" } }, `${e.category} · ${e.arch}`, compileBadge(th, e), gpuBadge(th, e))
        );
        const choose = () => {
          model.set("selected", e.name);
          model.save_changes();
        };
        item.addEventListener("click", choose);
        item.addEventListener("keydown", (ev) => {
          if (ev.key === "Enter" || ev.key === " ") {
            ev.preventDefault();
            choose();
          }
        });
        return item;
      });
      if (shown.length > MAX_LIST) items.push(h("div", { style: { padding: "4px 6px", color: th.fgMuted } }, `… ${shown.length - MAX_LIST} more: refine the search`));
      if (!shown.length) items.push(h("div", { style: { padding: "6px", color: th.fgMuted } }, "no entry matches"));
      list.replaceChildren(...items);
    }
    function cudaBlock(d) {
      const hi = new Set(d.highlight || []);
      const defs = new Set(d.definitions || []);
      const pre = h("pre", { "data-testid": "api-cuda", style: { ...mono, margin: "0", padding: "4px 0", background: th.bg2, overflowX: "auto", borderRadius: "3px" } });
      let prev = 0;
      for (const [n, text] of d.lines || []) {
        if (n > prev + 1) {
          pre.append(h("div", { style: { color: th.fgMuted, padding: "0 6px" } }, `   ⋯ ${n - prev - 1} line${n - prev - 1 === 1 ? "" : "s"}`));
        }
        const isHi = hi.has(n);
        pre.append(h("div", {
          "data-testid": isHi ? "api-highlight" : null,
          "data-line": n,
          style: {
            padding: "0 6px",
            whiteSpace: "pre",
            background: isHi ? th.dark ? "rgba(237,201,72,0.28)" : "rgba(237,201,72,0.45)" : defs.has(n) ? th.dark ? "rgba(78,121,167,0.18)" : "rgba(78,121,167,0.10)" : "transparent"
          }
        }, h("span", { style: { color: th.fgMuted, userSelect: "none", display: "inline-block", width: "4.5em" } }, String(n)), text));
        prev = n;
      }
      if (d.total_lines && prev < d.total_lines) pre.append(h("div", { style: { color: th.fgMuted, padding: "0 6px" } }, `   ⋯ ${d.total_lines - prev} lines`));
      return pre;
    }
    function renderDetail() {
      const name = model.get("selected");
      const entries = model.get("entries") || [];
      const e = entries.find((x) => x.name === name);
      const d = model.get("detail") || {};
      if (!e) {
        detail.replaceChildren(h("div", { style: { color: th.fgMuted } }, name ? `${name} is not in this catalogue` : "select an entry to see its doc, example and generated CUDA"));
        return;
      }
      const head = h(
        "div",
        { style: { marginBottom: "6px" } },
        h("div", { style: { ...mono, fontSize: "14px", fontWeight: "600", wordBreak: "break-all" } }, e.name),
        h("div", { style: { ...mono, color: th.fgMuted, wordBreak: "break-all" } }, e.signature),
        h("div", { style: { marginTop: "3px", color: th.fgMuted } }, `${e.kind} · ${e.category} · needs ${e.arch}`, compileBadge(th, e), gpuBadge(th, e))
      );
      const parts = [head];
      if (e.why_not && e.verified_gpu !== true) parts.push(h("div", { style: { color: th.fgMuted, fontSize: "12px" } }, `not on an H200: ${e.why_not}`));
      parts.push(h("pre", { style: { whiteSpace: "pre-wrap", margin: "6px 0", fontFamily: th.font } }, e.doc || "(no docstring)"));
      if (!e.has_example) {
        parts.push(h("div", { style: { color: th.fgMuted } }, "no example kernel uses this name yet"));
        detail.replaceChildren(...parts);
        return;
      }
      const ex = d.name === name ? d : {};
      const insert = h("button", { "data-testid": "api-insert", disabled: !ex.example_source, style: { ...ctl, cursor: "pointer" } }, "Insert example");
      insertStatus = h("span", { "data-testid": "api-insert-status", style: { color: th.fgMuted, marginLeft: "8px" } });
      insert.addEventListener("click", () => doInsert(name, ex.example_source || ""));
      parts.push(h(
        "div",
        { style: { display: "flex", alignItems: "center", margin: "6px 0 2px" } },
        h("span", { style: { fontWeight: "600" } }, `example ${ex.example_id || e.examples[0]}`),
        h("span", { style: { flex: "1" } }),
        insert,
        insertStatus
      ));
      if (ex.example_source) {
        parts.push(h("pre", { "data-testid": "api-example", style: { ...mono, margin: "0 0 8px", padding: "4px 6px", background: th.bg2, overflowX: "auto", borderRadius: "3px" } }, ex.example_source));
      }
      if (ex.state === "loading" || !ex.state) {
        parts.push(h("div", { style: { color: th.fgMuted } }, "compiling the example to CUDA…"));
      } else if (ex.state === "error") {
        parts.push(h("div", { style: { color: th.error } }, `could not generate CUDA: ${ex.error}`));
      } else {
        parts.push(h(
          "div",
          { style: { fontWeight: "600", marginTop: "4px" } },
          `generated CUDA (${(ex.highlight || []).length} highlighted of ${ex.total_lines} lines, ${ex.arch})`
        ));
        parts.push(h("div", { "data-testid": "api-how", style: { color: th.fgMuted, fontSize: "12px", margin: "2px 0 4px" } }, ex.how || ""));
        if ((ex.lines || []).length) parts.push(cudaBlock(ex));
      }
      detail.replaceChildren(...parts);
    }
    async function doInsert(name, fallbackText) {
      const status = insertStatus;
      if (status) status.textContent = "inserting…";
      const token = {};
      pendingInsert = token;
      model.send({ type: "insert", name });
      setTimeout(async () => {
        if (pendingInsert !== token) return;
        pendingInsert = null;
        const ok = await copyText(fallbackText);
        if (status) status.textContent = ok ? "no kernel answered: example copied to the clipboard" : "no kernel answered and the clipboard is not available";
      }, 3e3);
    }
    const onMsg = async (msg) => {
      if (!msg || msg.type !== "insert") return;
      pendingInsert = null;
      const status = insertStatus;
      if (msg.ok) {
        if (status) status.textContent = msg.message || "inserted into a new cell";
        return;
      }
      if (msg.how === "no-ipython" && msg.text) {
        const ok = await copyText(msg.text);
        if (status) status.textContent = ok ? "no IPython shell: example copied to the clipboard" : "no IPython shell and the clipboard is not available";
        return;
      }
      if (status) status.textContent = msg.message || "could not insert";
    };
    function renderControls() {
      fillSelect(catSel, model.get("categories") || [], "all categories", model.get("category"));
      fillSelect(archSel, model.get("archs") || [], "all archs", model.get("arch"));
      if (search.value !== model.get("query")) search.value = model.get("query") || "";
    }
    let debounce = null;
    search.addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        model.set("query", search.value);
        model.save_changes();
      }, 120);
    });
    search.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        clearTimeout(debounce);
        model.set("query", search.value);
        model.save_changes();
      }
    });
    catSel.addEventListener("change", () => {
      model.set("category", catSel.value);
      model.save_changes();
    });
    archSel.addEventListener("change", () => {
      model.set("arch", archSel.value);
      model.save_changes();
    });
    const onFilter = () => {
      renderControls();
      renderList();
    };
    const onSelected = () => {
      renderList();
      renderDetail();
    };
    const onEntries = () => {
      renderControls();
      renderList();
      renderDetail();
    };
    const onHeight = () => {
      root.style.height = `${model.get("height")}px`;
    };
    model.on("change:query", onFilter);
    model.on("change:category", onFilter);
    model.on("change:arch", onFilter);
    model.on("change:entries", onEntries);
    model.on("change:categories", onFilter);
    model.on("change:archs", onFilter);
    model.on("change:selected", onSelected);
    model.on("change:detail", renderDetail);
    model.on("change:height", onHeight);
    model.on("msg:custom", onMsg);
    onEntries();
    return () => {
      clearTimeout(debounce);
      model.off("change:query", onFilter);
      model.off("change:category", onFilter);
      model.off("change:arch", onFilter);
      model.off("change:entries", onEntries);
      model.off("change:categories", onFilter);
      model.off("change:archs", onFilter);
      model.off("change:selected", onSelected);
      model.off("change:detail", renderDetail);
      model.off("change:height", onHeight);
      model.off("msg:custom", onMsg);
    };
  }
};
export {
  api_default as default
};
