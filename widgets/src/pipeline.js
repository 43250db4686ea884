// PipelineViewer: step through a simulated full/empty mbarrier pipeline.
// Layout: header (status) · controls (step/play) · stage slots (full/empty barrier state per stage,
// with each role's PipelineState marked on its stage) · swimlanes (one row per role; ops as ticks,
// blocked waits as bars, deadlock marked; click to select an event) · problems · parameters.
// State at a step is rebuilt by replaying events from the nearest checkpoint (every 256 events).
import { h, theme, categorical, hiDpiCanvas, tooltip, isolateKeys } from "./_common.js";

const NF = 11; // fields per event: role kind op bar stage iteration slot_phase slot_pending slot_tx role_stage role_phase
const CHECK = 256;
const LABEL_W = 110;
const ROW_H = 22;
const AXIS_H = 18;
const OP_COLOURS = {
  wait: "#4e79a7", arrive: "#59a14f", expect_tx: "#76b7b2", arrive_expect_tx: "#76b7b2",
  complete_tx: "#b07aa1", advance: "#9c755f",
};

function int32s(value) {
  if (!value) return new Int32Array(0);
  let buf, off, len;
  if (value instanceof ArrayBuffer) { buf = value; off = 0; len = value.byteLength; }
  else if (ArrayBuffer.isView(value)) { buf = value.buffer; off = value.byteOffset; len = value.byteLength; }
  else return new Int32Array(0);
  const n = Math.floor(len / 4);
  if (off % 4 === 0) return new Int32Array(buf, off, n);
  return new Int32Array(buf.slice(off, off + n * 4));
}

/** Replays events; state(i) gives the slot and role state after event i (i = -1: initial). */
function makeReplayer(meta, ev) {
  const S = meta.stages;
  const nb = meta.barriers.length;
  const nr = meta.roles.length;
  const n = Math.floor(ev.length / NF);
  const init = () => ({
    slots: meta.barriers.map((b) => Array.from({ length: S }, () => [0, b.init, 0])),
    roles: meta.roles.map((r) => [0, r.phase]),
    iter: meta.roles.map(() => 0),
  });
  const clone = (s) => ({
    slots: s.slots.map((row) => row.map((c) => c.slice())),
    roles: s.roles.map((r) => r.slice()),
    iter: s.iter.slice(),
  });
  const apply = (s, i) => {
    const o = i * NF;
    const r = ev[o], bar = ev[o + 3], st = ev[o + 4];
    if (bar >= 0 && bar < nb && st >= 0) s.slots[bar][st] = [ev[o + 6], ev[o + 7], ev[o + 8]];
    if (r >= 0 && r < nr) { s.roles[r] = [ev[o + 9], ev[o + 10]]; s.iter[r] = ev[o + 5]; }
  };
  const checkpoints = [init()];
  let cur = init();
  for (let i = 0; i < n; i++) {
    apply(cur, i);
    if ((i + 1) % CHECK === 0) checkpoints.push(clone(cur));
  }
  return {
    n,
    state(i) {
      if (i < 0) return init();
      const k = Math.floor((i + 1) / CHECK);
      const s = clone(checkpoints[Math.min(k, checkpoints.length - 1)]);
      for (let j = Math.min(k, checkpoints.length - 1) * CHECK; j <= i; j++) apply(s, j);
      return s;
    },
  };
}

function describe(meta, ev, i) {
  if (i < 0) return "initial state: every barrier in phase 0, nothing arrived";
  const o = i * NF;
  const role = meta.roles[ev[o]] ? meta.roles[ev[o]].name : "?";
  const kind = meta.event_kinds[ev[o + 1]];
  const op = meta.op_names[ev[o + 2]];
  const bar = ev[o + 3] >= 0 ? meta.barriers[ev[o + 3]].name : null;
  const st = ev[o + 4];
  const where = bar ? ` ${bar}[${st}]` : "";
  const what = kind === "block" ? `${op}${where} blocks` : kind === "wake" ? `${op}${where} passes (woken)` : `${op}${where}`;
  return `event ${i}: ${role}, iteration ${ev[o + 5]}: ${what}`;
}

export default {
  render({ model, el }) {
    isolateKeys(el);
    const root = h("div", { class: "txlab-pipeline" });
    el.append(root);
    let T = theme(el);
    let ev = new Int32Array(0);
    let meta = {};
    let rep = null;
    let playing = null;
    let lanes = null;
    let view0 = 0; // first event shown in the swimlanes
    let tip = null;

    const css = () => ({
      fontFamily: T.font, fontSize: "12px", color: T.fg, background: T.bg, padding: "6px",
      border: `1px solid ${T.border}`, borderRadius: "4px", maxHeight: `${model.get("height")}px`,
      overflow: "auto", position: "relative",
    });

    function btn(label, testid, title, onclick) {
      return h("button", {
        "data-testid": testid, title, onclick,
        style: { margin: "0 2px", padding: "1px 7px", cursor: "pointer", background: T.bg2, color: T.fg, border: `1px solid ${T.border}`, borderRadius: "3px" },
      }, label);
    }

    function setStep(i) {
      const n = rep ? rep.n : 0;
      i = Math.max(-1, Math.min(n - 1, i));
      if (i !== model.get("step")) { model.set("step", i); model.save_changes(); }
      else refresh();
    }

    function stopPlay() { if (playing) { clearInterval(playing); playing = null; } }

    function full() {
      stopPlay();
      T = theme(el);
      meta = model.get("meta") || {};
      ev = int32s(model.get("data"));
      rep = meta.roles ? makeReplayer(meta, ev) : null;
      root.replaceChildren();
      Object.assign(root.style, css());
      if (!rep) { root.append("no trace"); return; }
      tip = tooltip(root);
      const dl = meta.deadlock;
      const nprob = (meta.problems || []).length;
      const status = dl ? "DEADLOCK" : nprob ? `${nprob} problem(s)` : "OK: every role finished";
      const statusColour = dl || nprob ? T.error : "#59a14f";
      root.append(h("div", { style: { display: "flex", gap: "10px", alignItems: "baseline", marginBottom: "4px" } },
        h("b", {}, `${meta.stages}-stage pipeline`),
        h("span", { style: { color: T.fgMuted } },
          `${meta.roles.map((r) => `${r.name} (${r.kind}, phase ${r.phase})`).join(", ")} · ` +
          meta.barriers.map((b) => `${b.name}: ${b.kind}, init ${b.init}${b.phase_offset ? `, phase offset ${b.phase_offset}` : ""}`).join(" · ")),
        h("span", { "data-testid": "pipeline-status", style: { color: statusColour, fontWeight: "bold", marginLeft: "auto" } }, status)));

      // controls
      const slider = h("input", { type: "range", min: -1, max: rep.n - 1, value: model.get("step"), "data-testid": "pipeline-slider", style: { flex: "1" } });
      slider.addEventListener("input", () => setStep(parseInt(slider.value, 10)));
      const label = h("span", { "data-testid": "pipeline-step-label", style: { minWidth: "110px", fontFamily: T.mono } });
      const play = btn("▶", "pipeline-play", "play / pause", () => {
        if (playing) { stopPlay(); play.textContent = "▶"; return; }
        play.textContent = "⏸";
        playing = setInterval(() => {
          const s = model.get("step");
          if (s >= rep.n - 1) { stopPlay(); play.textContent = "▶"; return; }
          setStep(s + 1);
        }, 120);
      });
      const controls = h("div", { style: { display: "flex", alignItems: "center", gap: "4px", margin: "4px 0" } },
        btn("⏮", "pipeline-first", "initial state", () => setStep(-1)),
        btn("◀", "pipeline-prev", "previous event", () => setStep(model.get("step") - 1)),
        play,
        btn("▶|", "pipeline-next", "next event", () => setStep(model.get("step") + 1)),
        btn("⏭", "pipeline-last", "last event", () => setStep(rep.n - 1)),
        dl ? btn("⚠ deadlock", "pipeline-deadlock", "jump to the deadlock", () => setStep(dl.step)) : null,
        slider, label);
      root.append(controls);
      const evline = h("div", { "data-testid": "pipeline-event", style: { fontFamily: T.mono, margin: "2px 0 6px", color: T.fg } });
      root.append(evline);

      // slots
      const slots = h("div", { "data-testid": "pipeline-slots", style: { overflowX: "auto" } });
      root.append(slots);

      // lanes
      const width = Math.max(360, (el.clientWidth || 800) - 30);
      lanes = hiDpiCanvas(width, AXIS_H + ROW_H * meta.roles.length + 6);
      lanes.canvas.dataset.testid = "pipeline-lanes";
      lanes.canvas.style.cursor = "pointer";
      lanes.canvas.style.display = "block";
      lanes.canvas.style.marginTop = "6px";
      root.append(lanes.canvas);
      const pick = (e) => {
        const r = lanes.canvas.getBoundingClientRect();
        const x = e.clientX - r.left, y = e.clientY - r.top;
        const per = (lanes.width - LABEL_W) / visibleCount();
        const i = view0 + Math.floor((x - LABEL_W) / per);
        const row = Math.floor((y - AXIS_H) / ROW_H);
        return { i, row, x, y };
      };
      lanes.canvas.addEventListener("click", (e) => { const p = pick(e); if (p.i >= 0 && p.i < rep.n) setStep(p.i); });
      lanes.canvas.addEventListener("mousemove", (e) => {
        const p = pick(e);
        if (p.i < 0 || p.i >= rep.n || p.x < LABEL_W) { tip.hide(); return; }
        const rr = lanes.canvas.getBoundingClientRect(), rootR = root.getBoundingClientRect();
        tip.show(e.clientX - rootR.left + root.scrollLeft, e.clientY - rootR.top + root.scrollTop, [describe(meta, ev, p.i)]);
        void rr;
      });
      lanes.canvas.addEventListener("mouseleave", () => tip.hide());

      // problems
      if (nprob) {
        const box = h("div", { style: { marginTop: "8px" } }, h("b", {}, "Problems"));
        meta.problems.forEach((p, k) => {
          const item = h("div", {
            "data-testid": `pipeline-problem-${k}`,
            style: { whiteSpace: "pre-wrap", margin: "4px 0", padding: "4px 6px", borderLeft: `3px solid ${T.error}`, background: T.bg2, cursor: p.step !== null && p.step !== undefined ? "pointer" : "default" },
            onclick: () => { if (p.step !== null && p.step !== undefined) setStep(p.step); },
          }, h("b", {}, p.kind), " ", p.message);
          box.append(item);
        });
        root.append(box);
      }

      // parameters
      const params = model.get("params") || {};
      const editable = meta.editable || {};
      const inputs = {};
      const prow = h("div", { style: { marginTop: "8px", display: "flex", flexWrap: "wrap", gap: "8px", alignItems: "center" } }, h("b", {}, "Parameters"));
      for (const [name, range] of Object.entries(editable)) {
        if (!(name in params)) continue;
        const inp = h("input", { type: "number", min: range[0], max: range[1], value: params[name], "data-testid": `pipeline-param-${name}`, style: { width: "64px", background: T.bg, color: T.fg, border: `1px solid ${T.border}` } });
        inputs[name] = inp;
        prow.append(h("label", { style: { whiteSpace: "nowrap" } }, `${name} `, inp));
      }
      prow.append(btn("re-run", "pipeline-rerun", "simulate again with these parameters", () => {
        const next = { ...params };
        for (const [k, inp] of Object.entries(inputs)) {
          const v = parseInt(inp.value, 10);
          next[k] = Number.isNaN(v) ? params[k] : v;
        }
        model.set("params", next);
        model.save_changes();
      }));
      const err = model.get("error");
      if (err) prow.append(h("span", { style: { color: T.error } }, err));
      root.append(prow);
      function visibleCount() { return Math.max(20, Math.min(Math.max(rep.n, 1), Math.floor((lanes.width - LABEL_W) / 6))); }
      full.visibleCount = visibleCount;
      full.label = label; full.slider = slider; full.evline = evline; full.slots = slots;
      refresh();
      if (meta.n_events === 0) evline.textContent = "no events (zero iterations)";
    }

    function drawSlots(state, step) {
      const box = full.slots;
      const S = meta.stages;
      const o = step * NF;
      const actBar = step >= 0 ? ev[o + 3] : -1, actStage = step >= 0 ? ev[o + 4] : -1;
      const stuck = new Set();
      if (meta.deadlock && step >= meta.deadlock.step) for (const w of meta.deadlock.waits) stuck.add(`${w.barrier}:${w.stage}`);
      const table = h("table", { style: { borderCollapse: "collapse", fontFamily: T.mono, fontSize: "11px" } });
      const head = h("tr", {}, h("th", { style: { textAlign: "left", paddingRight: "8px" } }, "stage"));
      for (let s = 0; s < S; s++) head.append(h("th", { style: { padding: "2px 6px", minWidth: "74px" } }, String(s)));
      table.append(head);
      meta.barriers.forEach((b, bi) => {
        const tr = h("tr", {}, h("td", { style: { paddingRight: "8px" } }, `${b.name} (${b.kind})`));
        for (let s = 0; s < S; s++) {
          const [ph, pend, tx] = state.slots[bi][s];
          const active = bi === actBar && s === actStage;
          const dead = stuck.has(`${b.name}:${s}`);
          const cell = h("td", {
            title: `${b.name}[${s}]: phase parity ${ph}, ${pend} of ${b.init} arrivals pending, tx ${tx} bytes`,
            style: {
              border: `${active ? 2 : 1}px solid ${dead ? T.error : active ? T.accent : T.border}`,
              padding: "2px 6px", textAlign: "center",
              background: dead ? (T.dark ? "#4a1c1c" : "#fde2e2") : ph ? (T.dark ? "#1f3347" : "#e3eef9") : "transparent",
            },
          }, h("div", {}, `φ${ph}  ${b.init - pend}/${b.init}`), tx ? h("div", { style: { color: T.fgMuted } }, `tx ${tx}`) : null);
          tr.append(cell);
        }
        table.append(tr);
      });
      const rr = h("tr", {}, h("td", { style: { paddingRight: "8px", color: T.fgMuted } }, "roles"));
      for (let s = 0; s < S; s++) {
        const td = h("td", { style: { padding: "2px 4px", verticalAlign: "top" } });
        meta.roles.forEach((r, ri) => {
          if (state.roles[ri][0] !== s) return;
          td.append(h("div", { style: { color: categorical(ri), whiteSpace: "nowrap" } }, `${r.name} φ${state.roles[ri][1]}`));
        });
        rr.append(td);
      }
      table.append(rr);
      box.replaceChildren(table);
    }

    function drawLanes(step) {
      const { ctx, width, height } = lanes;
      const vis = full.visibleCount();
      if (step < view0 || step >= view0 + vis) view0 = Math.max(0, Math.min(rep.n - vis, step - Math.floor(vis / 2)));
      view0 = Math.max(0, view0);
      const per = (width - LABEL_W) / vis;
      const X = (i) => LABEL_W + (i - view0) * per;
      ctx.clearRect(0, 0, width, height);
      ctx.font = `11px ${T.font}`;
      ctx.textBaseline = "middle";
      meta.roles.forEach((r, ri) => {
        const y = AXIS_H + ri * ROW_H;
        ctx.fillStyle = ri % 2 ? T.bg2 : T.bg;
        ctx.fillRect(0, y, width, ROW_H);
        ctx.fillStyle = categorical(ri);
        ctx.fillText(r.name.length > 15 ? `${r.name.slice(0, 14)}…` : r.name, 4, y + ROW_H / 2);
      });
      // axis
      ctx.fillStyle = T.fgMuted;
      const tickEvery = Math.max(1, Math.pow(10, Math.ceil(Math.log10(vis / 8))));
      for (let i = Math.ceil(view0 / tickEvery) * tickEvery; i < view0 + vis; i += tickEvery) {
        ctx.fillText(String(i), X(i), AXIS_H / 2);
      }
      // blocked spans
      for (const s of meta.spans || []) {
        const end = s.end === null || s.end === undefined ? rep.n : s.end;
        if (end < view0 || s.start > view0 + vis) continue;
        const ri = meta.roles.findIndex((r) => r.name === s.role);
        const y = AXIS_H + ri * ROW_H;
        ctx.fillStyle = s.end === null || s.end === undefined ? "rgba(214,39,40,0.45)" : "rgba(242,142,43,0.40)";
        const x0 = Math.max(LABEL_W, X(s.start)), x1 = Math.min(width, X(end) + per);
        ctx.fillRect(x0, y + 4, Math.max(1, x1 - x0), ROW_H - 8);
      }
      // ops
      for (let i = view0; i < Math.min(rep.n, view0 + vis); i++) {
        const o = i * NF;
        const ri = ev[o];
        const op = meta.op_names[ev[o + 2]];
        const kind = ev[o + 1];
        const y = AXIS_H + ri * ROW_H;
        ctx.fillStyle = OP_COLOURS[op] || T.fg;
        const x = X(i);
        const w = Math.max(1.5, per - 1);
        if (kind === 1) { ctx.strokeStyle = T.error; ctx.strokeRect(x + 0.5, y + 3.5, w - 1, ROW_H - 7); }
        else ctx.fillRect(x, y + 5, w, ROW_H - 10);
      }
      // deadlock
      if (meta.deadlock) {
        const x = X(meta.deadlock.step) + per;
        if (x >= LABEL_W && x <= width) {
          ctx.fillStyle = T.error;
          ctx.fillRect(x, AXIS_H, 2, height - AXIS_H);
          ctx.fillText("deadlock", Math.min(x + 4, width - 50), AXIS_H / 2);
        }
      }
      // cursor
      if (step >= 0) {
        ctx.strokeStyle = T.accent;
        ctx.lineWidth = 1.5;
        ctx.strokeRect(X(step) - 1, AXIS_H, per + 2, height - AXIS_H);
        ctx.lineWidth = 1;
      }
    }

    function refresh() {
      if (!rep || !full.label) return;
      const step = Math.max(-1, Math.min(rep.n - 1, model.get("step")));
      full.label.textContent = `${step + 1} / ${rep.n}`;
      full.slider.value = String(step);
      full.evline.textContent = describe(meta, ev, step);
      const state = rep.state(step);
      drawSlots(state, step);
      drawLanes(step);
    }

    full();
    const onData = () => full();
    model.on("change:meta", onData);
    model.on("change:data", onData);
    model.on("change:error", onData);
    model.on("change:step", refresh);
    return () => {
      stopPlay();
      model.off("change:meta", onData);
      model.off("change:data", onData);
      model.off("change:error", onData);
      model.off("change:step", refresh);
    };
  },
};
