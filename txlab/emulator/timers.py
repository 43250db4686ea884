"""Clocks and TVM's timer ring (``Tx.cuda.timer_init/start/end/finalize``).

There is no time on the CPU, so the emulator's clocks count *emulated warp-instructions*: every
lowered-IR statement a group of threads executes adds one per warp of the group (a warp of the
kernel when it runs warp by warp, every warp of the CTA when the CTA runs in lockstep; masked-off
warps count too). Two clocks, as on the GPU:

- ``clock`` / ``clock64`` (``%clock``, ``%clock64``: per SM on a GPU): the warp-instructions the
  reading CTA has issued so far (each CTA as if alone on its own SM, starting from 0; ``clock`` is
  the low 32 bits).
- ``%globaltimer_lo`` (what the timer ring writes, ``tvm_builtin_get_timestamp``; nanoseconds on a
  GPU, one clock for the whole device): the warp-instructions the whole launch has issued so far,
  over every CTA already run and every CTA running (CTAs run one after another, a cluster's CTAs
  together), low 32 bits.

So a timer value is an ordering and an amount of emulated work, not a duration: within a CTA (and
within a cluster) a later read never gives a smaller value and a read after more statements gives a
larger one; a difference of two reads is "warp-instructions issued in between" (by the CTA for
clock64, by the launch for the global timer), which has no fixed ratio to nanoseconds or cycles.
All lanes of one instruction read the same value.

The timer ring follows TVM's device helpers (tvm.backend.cuda.cpp.instrument) word for word:
``init`` writes the header ``(num_groups << 32) | num_ctas`` (CTA 0, threadIdx.x 0), sets each
thread's write offset to ``1 + cta * num_groups + group`` and its tag to that index ``<< 12``;
``start``/``end``/``finalize`` let the leader lanes write ``(timestamp << 32) | tag | event << 2 |
kind`` (kind 0, 1, 3) and advance the offset by the stride. The writes are bounds-checked global
stores at the user's line.
"""

from __future__ import annotations

import numpy as np

from txlab.emulator.ops import HANDLERS

U64 = np.dtype(np.uint64)


def cta_clock(cta) -> int:
    """``clock64`` of a CTA: warp-instructions it issued so far."""
    return int(cta.warp_steps)


def global_timer(cta) -> int:
    """``%globaltimer``: warp-instructions the launch issued so far (CTAs finished + CTAs running)."""
    prog = cta.program
    running = prog.running_ctas or [cta]
    return int(prog.warp_steps_done + sum(c.warp_steps for c in running))


def _note(prog):
    note = (
        "clock/clock64 and %globaltimer (the timer ring's timestamps) count emulated warp-instructions "
        "(per CTA and per launch): they order events, they do not measure time"
    )
    if note not in prog.notes:
        prog.notes.append(note)


def _clock(bits):
    def build(comp, call):
        _note(comp.program)
        dt = np.dtype(np.uint64) if bits == 64 else np.dtype(np.uint32)

        def f(g):
            return np.full(g.L, cta_clock(g.cta) & ((1 << bits) - 1), dtype=dt)

        return f

    return build


HANDLERS["tirx.cuda.clock64"] = _clock(64)
HANDLERS["tirx.cuda.clock"] = _clock(32)


def _word(comp, e, what):
    """(get(g) -> (L,) values, set(g, values, mask)) for word 0 of the buffer ``e`` points to
    (``tag.data``: a local buffer, one word per thread; or a shared/global buffer)."""
    prog = comp.program
    line = comp.line
    if type(e).__name__ == "Call" and getattr(e.op, "name", "") == "tirx.buffer_data":
        buf = e.args[0]
        info = comp.buffer_info(buf)
        dt = np.dtype(str(info["dtype"])) if info["dtype"] in ("uint32", "uint64", "int32", "int64") else None
        if info["scope"].startswith("local"):

            def get(g):
                arr = g.env[buf]
                return arr[:, 0] if dt is None or arr.dtype == dt else arr.view(dt)[:, 0]

            def put(g, v, m):
                arr = g.env[buf]
                col = arr[:, 0] if dt is None or arr.dtype == dt else arr.view(dt)[:, 0]
                col[m] = np.asarray(v).astype(col.dtype)[m] if np.ndim(v) else v

            return get, put
        ptr = comp.expr(e)
    else:
        ptr = comp.expr(e)
        info = {"name": what, "dtype": "uint64"}
        dt = None
    dt = dt or np.dtype(np.uint64 if what == "profiler_tag" else np.uint32)
    binfo = {"name": what, "dtype": str(dt)}

    def get_mem(g):
        return np.broadcast_to(prog.mem_read(g, ptr(g), np.int64(0), 0, dt, line, binfo), (g.L,))

    def put_mem(g, v, m):
        outer = g.mask
        g.mask = m
        try:
            prog.mem_write(g, ptr(g), np.zeros(g.L, np.int64), 0, dt, np.broadcast_to(v, (g.L,)), line, binfo)
        finally:
            g.mask = outer

    return get_mem, put_mem


def _profiler_operands(comp, buf, tag_e, off_e):
    """(buffer pointer, tag word (get, put), write-offset word (get, put), line, program, buffer
    info) of a profiler call; notes once that clocks are emulated."""
    prog = comp.program
    _note(prog)
    return (
        comp.expr(buf),
        _word(comp, tag_e, "profiler_tag"),
        _word(comp, off_e, "profiler_write_offset"),
        comp.line,
        prog,
        {"name": "profiler_buffer", "dtype": "uint64"},
    )


def _timer_init(comp, call):
    buf, tag_e, off_e, ngroups, group = call.args
    prof, (tag_get, tag_put), (off_get, off_put), line, prog, info = _profiler_operands(comp, buf, tag_e, off_e)
    ng, gid = comp.expr(ngroups), comp.expr(group)

    def f(g):
        cta = g.cta
        gx, gy, _ = (tuple(cta.grid) + (1, 1, 1))[:3]
        bx, by, bz = cta.index
        nblocks = int(np.prod(cta.grid))
        block = (bz * gy + by) * gx + bx
        n = np.uint64(int(np.asarray(ng(g)).ravel()[0]) & 0xFFFFFFFF)
        bgi = np.uint64(block) * n + np.broadcast_to(np.asarray(gid(g)), (g.L,)).astype(np.uint32).astype(np.uint64)
        act = g.active()
        off_put(g, (np.uint64(1) + bgi).astype(np.uint32), act)
        tag_put(g, (bgi << np.uint64(12)), act)
        if (bx, by, bz) == (0, 0, 0):
            x0 = act & (cta.index_value("threadIdx.x", g) == 0)
            if x0.any():
                outer = g.mask
                g.mask = x0
                try:
                    prog.mem_write(
                        g,
                        prof(g),
                        np.zeros(g.L, np.int64),
                        0,
                        U64,
                        np.full(g.L, (n << np.uint64(32)) | np.uint64(nblocks), U64),
                        line,
                        info,
                    )
                finally:
                    g.mask = outer
        return np.int32(0)

    return f


def _timer_event(kind):
    def build(comp, call):
        args = list(call.args)
        if kind == 3:
            event = None
            buf, tag_e, off_e, stride, leader = args
        else:
            ev, buf, tag_e, off_e, stride, leader = args
            event = comp.expr(ev)
        prof, (tag_get, _), (off_get, off_put), line, prog, info = _profiler_operands(comp, buf, tag_e, off_e)
        stride_f, lead = comp.expr(stride), comp.expr(leader)

        def f(g):
            m = g.active() & np.broadcast_to(np.not_equal(lead(g), 0), (g.L,))
            if not m.any():
                return np.int32(0)
            ts = np.uint64(global_timer(g.cta) & 0xFFFFFFFF)
            bits = (
                np.uint64(kind)
                if event is None
                else (np.uint64(int(np.asarray(event(g)).ravel()[0]) & 0xFFFFFFFF) << np.uint64(2)) | np.uint64(kind)
            )
            tag = np.broadcast_to(tag_get(g), (g.L,)).astype(np.uint64)
            off = np.broadcast_to(off_get(g), (g.L,)).astype(np.uint32)
            outer = g.mask
            g.mask = m
            try:
                prog.mem_write(
                    g, prof(g), off.astype(np.int64), 0, U64, (ts << np.uint64(32)) | (tag | bits), line, info
                )
            finally:
                g.mask = outer
            step = np.uint32(int(np.asarray(stride_f(g)).ravel()[0]) & 0xFFFFFFFF)
            off_put(g, off + step, m)
            return np.int32(0)

        return f

    return build


HANDLERS["tirx.timer_init_cuda"] = _timer_init
HANDLERS["tirx.timer_start_cuda"] = _timer_event(0)
HANDLERS["tirx.timer_end_cuda"] = _timer_event(1)
HANDLERS["tirx.timer_finalize_cuda"] = _timer_event(3)
