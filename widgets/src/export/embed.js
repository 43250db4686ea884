// Offline widget renderer for HTML exported by txlab.export (nbconvert + widget state).
//
// nbconvert's own output loads @jupyter-widgets/html-manager and every third-party widget module
// (anywidget included) from a CDN at view time. This bundle carries both, so an exported page
// renders its widgets with no network at all: the HTML manager of ipywidgets 8 (standard
// controls, boxes, output) plus anywidget's front end, whose models import each widget's ES module
// from its `_esm` trait through a blob: URL. Interactions that stay in the browser work; anything
// that needs the kernel cannot (there is none), and state changes are simply not sent.
import { HTMLManager } from "@jupyter-widgets/html-manager/lib/htmlmanager";
import * as base from "@jupyter-widgets/base";
import anywidgetFactory from "anywidget";

const STATE_MIME = "application/vnd.jupyter.widget-state+json";
const VIEW_MIME = "application/vnd.jupyter.widget-view+json";

const anywidget = anywidgetFactory(base);
const LOCAL = { anywidget };

function loader(moduleName, moduleVersion) {
  const mod = LOCAL[moduleName];
  if (mod) return Promise.resolve(mod);
  return Promise.reject(new Error(
    `widget module ${moduleName}@${moduleVersion} is not part of this offline page ` +
    `(it bundles @jupyter-widgets/base, controls, output and anywidget)`));
}

function problem(where, message) {
  const div = document.createElement("div");
  div.className = "txlab-export-error";
  div.style.cssText = "font: 12px monospace; color: #b00020; padding: 4px 0";
  div.textContent = `[widget not rendered] ${message}`;
  where.parentElement.insertBefore(div, where);
}

async function renderState(stateTag) {
  let state;
  try {
    state = JSON.parse(stateTag.textContent);
  } catch (e) {
    console.error("txlab export: unreadable widget state", e);
    return;
  }
  const manager = new HTMLManager({ loader });
  const models = await manager.set_state(state);
  const byId = new Map(models.map((m) => [m.model_id, m]));
  const tags = [...document.querySelectorAll(`script[type="${VIEW_MIME}"]`)];
  await Promise.all(tags.map(async (tag) => {
    if (!tag.parentElement) return;
    let id;
    try {
      id = JSON.parse(tag.textContent).model_id;
    } catch (e) {
      problem(tag, "unreadable widget view");
      return;
    }
    const model = byId.get(id);
    if (!model) {
      problem(tag, `no saved state for widget ${id} (was the notebook saved with its widget state?)`);
      return;
    }
    const host = document.createElement("div");
    host.className = "widget-subarea";
    tag.parentElement.insertBefore(host, tag);
    const view = await manager.create_view(model);
    await manager.display_view(view, host);
  }));
}

async function renderAll() {
  const tags = [...document.querySelectorAll(`script[type="${STATE_MIME}"]`)];
  await Promise.all(tags.map((t) => renderState(t).catch((e) => console.error("txlab export:", e))));
  document.documentElement.dataset.txlabWidgets = "rendered";
}

if (!window.__txlab_widget_embed) {
  window.__txlab_widget_embed = true;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", renderAll);
  else renderAll();
}
