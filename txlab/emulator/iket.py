"""NVIDIA IKET annotations (``T.cuda.iket.*``, ``IketProfiler``) as events with emulated-work clocks.

The regular build's ``LowerIket`` pass strips these annotations, so :func:`txlab.emulate` never
meets them; :func:`txlab.timeline.emulate` lowers without that pass (``emulate(..., iket=True)``) and
these handlers record what run-iket would: one event per warp that executes an annotation (the
annotations are warp-uniform), its payload the value of the warp's first active lane -- what an
H200 recording under run-iket shows for ``mark(name, threadIdx.x)`` (``txlab/data/iket.iket.json``:
payloads 0, 32, 64, 96 for warps 0..3). ``range_start`` returns a token naming the range its warp
opened, ``range_end`` closes it (a ``sentinel_token`` closes nothing), ``range_push``/``range_pop``
keep a stack per warp (a range's payload: the one its end gives, else its start's). Clocks are the timer ring's: ``%globaltimer`` counts emulated
warp-instructions of the launch (:mod:`txlab.emulator.timers`), so an event's clock orders it and
says how much emulated work ran before it; it is not time. Ranges still open when the kernel ends
are dropped and counted in the result's notes. ``iket_official_event`` exists only after an
IKET-enabled ``LowerIket`` and is not modelled (NotEmulatedError).

Events land in ``program.iket_events`` as ``(cta, warp, name, start, end, payload, line)``
(``end is None`` for a mark).
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.ops import _str, handler
from txlab.emulator.timers import _note, global_timer

_SENTINEL = 0  # the token of sentinel_token: range_end of it records nothing


def _state(prog):
    st = prog.__dict__.get("_iket")
    if st is None:
        st = prog._iket = {"tokens": [None], "stacks": {}, "open": {}}
        prog.__dict__.setdefault("iket_events", [])
    return st


def _warps(g):
    """(lane, cta, warp) of the first active lane of each warp of the group."""
    lanes = np.flatnonzero(g.active())
    if lanes.size == 0:
        return []
    w = g.warp_of_lane[lanes]
    first = lanes[np.concatenate([[True], w[1:] != w[:-1]])]
    return [(int(lane), g.cta_of(int(lane)), int(g.tid[lane]) // 32) for lane in first]


def _payload(p, g, lane):
    if p is None:
        return None
    v = np.asarray(p(g))
    return v.ravel()[lane] if v.ndim and v.size > 1 else v.ravel()[0]  # a numpy scalar: its dtype is the type


def _annotation(tokens=False):
    """A handler for an annotation with a name and an optional payload, from ``record(prog, st, cta,
    warp, event)``: run once per warp at its first active lane, ``event`` being (name, clock,
    payload, line). With ``tokens`` the call's value in each warp's lanes is what ``record`` returned
    for that warp; else 0."""

    def wrap(record):
        def build(comp, call):
            args = list(call.args)
            name = _str(args[0])
            payload = comp.expr(args[1]) if len(args) > 1 else None
            line, prog = comp.line, comp.program
            _note(prog)

            def f(g):
                st = _state(prog)
                out = np.zeros(g.L, np.uint32)
                for lane, cta, warp in _warps(g):
                    event = (name, global_timer(g.cta), _payload(payload, g, lane), line)
                    tok = record(prog, st, cta, warp, event)
                    if tokens:
                        out[g.warp_of_lane == g.warp_of_lane[lane]] = tok
                return out if tokens else np.int32(0)

            return f

        return build

    return wrap


@handler("tirx.cuda.iket_mark")
@_annotation()
def _mark(prog, st, cta, warp, event):
    name, clock, payload, line = event
    prog.iket_events.append((cta, warp, name, clock, None, payload, line))


@handler("tirx.cuda.iket_range_start")
@_annotation(tokens=True)
def _range_start(prog, st, cta, warp, event):
    st["tokens"].append((cta, warp, *event))
    tok = len(st["tokens"]) - 1
    st["open"][tok] = True
    return tok


@handler("tirx.cuda.iket_sentinel_token")
def _sentinel(comp, call):
    def f(g):
        return np.full(g.L, _SENTINEL, np.uint32)

    return f


@handler("tirx.cuda.iket_range_end")
def _range_end(comp, call):
    args = list(call.args)
    tok_e = comp.expr(args[0])
    end_payload = comp.expr(args[1]) if len(args) > 1 else None
    line, prog = comp.line, comp.program

    def f(g):
        st = _state(prog)
        toks = np.broadcast_to(np.asarray(tok_e(g)), (g.L,))
        for lane, _, _ in _warps(g):
            tok = int(toks[lane])
            if tok == _SENTINEL or not st["open"].pop(tok, False):
                continue  # a sentinel, or a token already closed (run-iket records nothing either)
            cta, warp, name, start, pay, sline = st["tokens"][tok]
            end_pay = _payload(end_payload, g, lane)
            prog.iket_events.append(
                (cta, warp, name, start, global_timer(g.cta), end_pay if end_pay is not None else pay, sline)
            )
        return np.int32(0)

    return f


@handler("tirx.cuda.iket_range_push")
@_annotation()
def _range_push(prog, st, cta, warp, event):
    st["stacks"].setdefault((cta, warp), []).append(event)


@handler("tirx.cuda.iket_range_pop")
def _range_pop(comp, call):
    prog = comp.program

    def f(g):
        st = _state(prog)
        for _, cta, warp in _warps(g):
            stack = st["stacks"].get((cta, warp))
            if stack:
                name, start, pay, sline = stack.pop()
                prog.iket_events.append((cta, warp, name, start, global_timer(g.cta), pay, sline))
        return np.int32(0)

    return f


def unclosed(prog) -> int:
    """Ranges a kernel opened and never closed (dropped from its events)."""
    st = prog.__dict__.get("_iket")
    if st is None:
        return 0
    return len(st["open"]) + sum(len(s) for s in st["stacks"].values())
