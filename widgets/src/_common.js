// Helpers shared by every txlab widget. Each widget is an anywidget ES module:
//   export default { render({ model, el }) { ... return cleanup } }
// Rules: user-controlled strings go through text nodes or esc(); never innerHTML with raw data.

/** Escape a string for use inside HTML text or attribute values. */
export function esc(value) {
  return String(value)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Create an element with attributes and children (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style" && typeof value === "object") Object.assign(node.style, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** True when JupyterLab (or the page) uses a dark theme. */
export function isDark(el) {
  const body = document.body;
  if (body && body.dataset && body.dataset.jpThemeLight === "false") return true;
  const bg = getComputedStyle(el || body).getPropertyValue("--jp-layout-color0").trim();
  if (bg) {
    const m = bg.match(/^#([0-9a-f]{6})$/i);
    if (m) {
      const n = parseInt(m[1], 16);
      const lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
      return lum < 128;
    }
  }
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

/** Theme colours read from JupyterLab's CSS variables, with fallbacks for exported HTML. */
export function theme(el) {
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
    mono: v("--jp-code-font-family", "ui-monospace, monospace"),
  };
}

/** A categorical colour for index i (Tableau-20 like, readable on light and dark). */
export function categorical(i) {
  const palette = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
  ];
  return palette[((i % palette.length) + palette.length) % palette.length];
}

/** A canvas sized for the device pixel ratio; returns {canvas, ctx, width, height, resize}. */
export function hiDpiCanvas(width, height) {
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext("2d");
  const state = { canvas, ctx, width, height };
  state.resize = (w, h) => {
    const dpr = window.devicePixelRatio || 1;
    state.width = w;
    state.height = h;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  };
  state.resize(width, height);
  return state;
}

/** A floating tooltip attached to `root`; show(x, y, lines) with plain-text lines. */
export function tooltip(root) {
  const tip = h("div", {
    class: "txlab-tip",
    style: {
      position: "absolute", pointerEvents: "none", display: "none", zIndex: 10,
      padding: "4px 6px", borderRadius: "4px", fontSize: "12px", whiteSpace: "pre",
      background: "rgba(20,20,20,0.9)", color: "#fff",
    },
  });
  root.style.position = root.style.position || "relative";
  root.append(tip);
  return {
    node: tip,
    show(x, y, lines) {
      tip.textContent = Array.isArray(lines) ? lines.join("\n") : String(lines);
      tip.style.left = `${x + 12}px`;
      tip.style.top = `${y + 12}px`;
      tip.style.display = "block";
    },
    hide() {
      tip.style.display = "none";
    },
  };
}

/** Keep keystrokes aimed at the widget's own controls inside the widget: JupyterLab's notebook
 *  shortcuts otherwise swallow ArrowLeft/Right on sliders and Enter in number fields. Shift+Enter
 *  (run cell) and Escape (command mode) still reach JupyterLab. */
export function isolateKeys(el) {
  const stop = (e) => {
    if (e.key === "Escape" || (e.key === "Enter" && (e.shiftKey || e.ctrlKey || e.metaKey))) return;
    e.stopPropagation();
  };
  el.addEventListener("keydown", stop);
  return () => el.removeEventListener("keydown", stop);
}

/** The bytes of a view's `data` trait (a DataView from the comm or saved state, an ArrayBuffer,
 *  a typed array), as a Uint8Array; empty when unset. */
export function dataBytes(value) {
  if (!value) return new Uint8Array(0);
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(0);
}

/** A JSON view's payload: its `data` trait (bytes of UTF-8 JSON, see txlab/views/_base.py)
 *  parsed; `fallback` when empty or unreadable. */
export function readJSON(model, fallback = {}, name = "data") {
  const bytes = dataBytes(model.get(name));
  if (!bytes.length) return fallback;
  try { return JSON.parse(new TextDecoder().decode(bytes)); } catch (e) { return fallback; }
}
