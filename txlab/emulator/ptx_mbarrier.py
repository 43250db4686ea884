"""``T.ptx.mbarrier`` instructions beyond init / arrive / expect_tx: the waits a hand-written loop polls
(``try_wait``, ``test_wait``, by parity or by the state an arrive returned), ``arrive_drop``, ``complete_tx``
and ``inval``.

They act on the mbarriers of :mod:`txlab.emulator.sync` (phase parity, pending arrivals, tx-count), as
the PTX ISA defines them:

* ``try_wait`` is potentially blocking: the thread may be suspended until the phase completes or a time
  limit the system chooses passes, and then learns which. The emulator never lets the limit pass: the
  warp waits (the other warps run) and the result is ``True`` -- one of the outcomes the ISA allows, and
  the one a spin ``while not try_wait(...)`` ends with. A phase nobody completes is a ``deadlock``
  finding at the wait, where a GPU spins forever.
* ``test_wait`` never blocks: it gives whether the phase has completed now. When it has not, the warp
  yields to the others before it goes on (so a loop polling it lets the producer run), and a poll nobody
  will answer is a ``deadlock`` finding.
* The ``state`` an arrive returns (``arrive_state`` and its count / expect_tx / drop forms) is opaque in
  PTX; here it names the phase the arrive was counted in (bit 63 set, the phase number in the low 32
  bits), and a ``try_wait`` / ``test_wait`` on it waits for that phase to complete.
* ``arrive_drop`` lowers the expected arrival count of the phases to come by ``count`` and arrives with
  ``count`` on the current one; ``complete_tx`` lowers the tx-count as an asynchronous copy's bytes do;
  ``inval`` leaves the mbarrier uninitialised (a later arrive on it is reported).

Refused (``NotEmulatedError``): ``phase_type::conditional`` waits, the ``report`` forms, the
``multicast::cluster`` arrives, ``noComplete``, ``pending_count``, ``check_layout``, a predicated wait,
and a wait on another CTA's mbarrier.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.sync as sync
from txlab.emulator.ops import BLOCKING, HANDLERS, WARP_MODE_OPS, _active_count, _uniform_addr
from txlab.emulator.ptx_alu import _dest
from txlab.emulator.ptx_memory import _guard, decode
from txlab.errors import NotEmulatedError

#: the state token's marker bit (the low 32 bits count the mbarrier's phases)
STATE_MARK = np.uint64(1) << np.uint64(63)

_PARITY_WAITS = ("mbarrier_try_wait_parity", "mbarrier_try_wait_parity_no_hint", "mbarrier_test_wait_parity")
_STATE_WAITS = ("mbarrier_try_wait", "mbarrier_try_wait_hint", "mbarrier_test_wait")
_STATE_ARRIVES = (
    "mbarrier_arrive_state",
    "mbarrier_arrive_count_state",
    "mbarrier_arrive_expect_tx_state",
    "mbarrier_arrive_drop_state",
    "mbarrier_arrive_drop_count_state",
    "mbarrier_arrive_drop_expect_tx_state",
)
_DROPS = (
    "mbarrier_arrive_drop",
    "mbarrier_arrive_drop_nocount",
    "mbarrier_arrive_drop_expect_tx",
)


def _refusal(comp, name, why):
    return comp.not_emulated(name, why)


def _addr_of(comp, ptx):
    return comp.expr(ptx.ops["addr"][0])


def _own_mbarrier(g, a, line, what):
    cta, mb = sync.mbarrier_at(g, a, line)
    if cta is not g.cta:
        raise NotEmulatedError(f"{what} on another CTA's mbarrier (PTX waits only on shared::cta)", lineno=line)
    return mb


# ---- waits ---------------------------------------------------------------------------------------
def _wait(comp, call):
    name = call.op.name[len("tirx.ptx.") :]
    ptx = decode(call)
    if ptx is None:
        return _refusal(comp, call.op.name, "an instruction TVM's PTX table does not list")
    if (ptx.mods.get("phase_type") or "").endswith("conditional"):
        return _refusal(comp, call.op.name, "phase_type::conditional waits are not modelled")
    if ptx.pred is not None:
        return _refusal(comp, call.op.name, "a predicated mbarrier wait")
    store, _reg_dt, key = _dest(comp, call, ptx, "wait_complete")
    if store is None:
        return _refusal(comp, call.op.name, "a result that is not a buffer element")
    addr = _addr_of(comp, ptx)
    by_parity = name in _PARITY_WAITS
    token = comp.expr(ptx.ops["phase" if by_parity else "state"][0])
    blocking = ".try_wait" in f".{name[len('mbarrier_') :]}"
    line = comp.line
    what = "mbarrier." + ("try_wait" if blocking else "test_wait") + (".parity" if by_parity else "")

    def target(g, mb):
        """(phase parity the wait blocks on, whether the phase waited for has completed)."""
        t = np.asarray(token(g))
        if by_parity:
            par = np.asarray(t).astype(np.int64) & 1
            if par.ndim and np.unique(par[g.active()] if par.shape[0] == g.L else par).size > 1:
                raise NotEmulatedError(f"{what} on different parities within one warp", lineno=line)
            p = int(par.ravel()[0])
            return p, mb.parity != p
        s = t.astype(np.uint64)
        s = s[g.active()] if s.ndim and s.shape[0] == g.L else s.ravel()
        if np.unique(s).size > 1:
            raise NotEmulatedError(f"{what} on different arrive states within one warp", lineno=line)
        v = int(s[0])
        if not v & int(STATE_MARK):
            raise NotEmulatedError(
                f"{what} on a state no mbarrier.arrive of this kernel returned ({v:#x})", lineno=line
            )
        phase = v & 0xFFFFFFFF
        return mb.parity, mb.completed > phase

    def gen(g):
        a = _uniform_addr(g, addr(g), line, what)
        mb = _own_mbarrier(g, a, line, what)
        par, done = target(g, mb)
        if blocking:
            while not done:
                g.blocked = ("mbarrier", line, mb, par)
                yield
                par, done = target(g, mb)
            g.blocked = None
        elif not done:  # test_wait: not yet; the other warps run before this one goes on
            g.blocked = ("mbarrier", line, mb, par)
            yield
            g.blocked = None
        if done:
            yield from sync.mb_wait(g.cta, g, mb, mb.parity ^ 1, line)  # the acquire (never blocks)
        g.slots[key] = [np.full(g.L, 1 if done else 0, np.uint32)]
        store(g)
        return np.int32(0)

    return gen


for _n in _PARITY_WAITS + _STATE_WAITS:
    BLOCKING[f"tirx.ptx.{_n}"] = _wait
    WARP_MODE_OPS.add(f"tirx.ptx.{_n}")


# ---- arrives that return a state, and arrive_drop -------------------------------------------------
def _arrive(comp, call):
    name = call.op.name[len("tirx.ptx.") :]
    ptx = decode(call)
    if ptx is None:
        return _refusal(comp, call.op.name, "an instruction TVM's PTX table does not list")
    addr = _addr_of(comp, ptx)
    drop = "_drop" in name
    expect = "expect_tx" in name
    returns = name.endswith("_state")
    count_slot = "tx_count" if "tx_count" in ptx.ops else "count"
    count = comp.expr(ptx.ops[count_slot][0]) if count_slot in ptx.ops else (lambda g: 1)
    store = key = None
    if returns:
        store, _reg_dt, key = _dest(comp, call, ptx, "state")
        if store is None:
            return _refusal(comp, call.op.name, "a state that is not a buffer element")
    line = comp.line
    what = "mbarrier.arrive" + ("_drop" if drop else "") + (".expect_tx" if expect else "")

    def f(g):
        a = _uniform_addr(g, addr(g), line, what)
        cta, mb = sync.mbarrier_at(g, a, line)
        n = _active_count(g)
        c = int(np.asarray(count(g)).ravel()[0])
        phase = mb.completed
        sync.mb_arrive_lanes(cta, mb, g, c, n, line, expect_tx=expect, drop=drop)
        if returns:
            g.slots[key] = [np.full(g.L, STATE_MARK | np.uint64(phase & 0xFFFFFFFF), np.uint64)]
            store(g)
        return np.uint64(0)

    return _guard(comp, ptx, f)


for _n in _STATE_ARRIVES + _DROPS:
    HANDLERS[f"tirx.ptx.{_n}"] = _arrive


# ---- complete_tx and inval ------------------------------------------------------------------------
@lambda fn: HANDLERS.__setitem__("tirx.ptx.mbarrier_complete_tx", fn)
def _complete_tx(comp, call):
    ptx = decode(call)
    if ptx is None:
        return _refusal(comp, call.op.name, "an instruction TVM's PTX table does not list")
    addr, count = _addr_of(comp, ptx), comp.expr(ptx.ops["tx_count"][0])
    line = comp.line

    def f(g):
        a = _uniform_addr(g, addr(g), line, "mbarrier.complete_tx")
        cta, mb = sync.mbarrier_at(g, a, line)
        c = int(np.asarray(count(g)).ravel()[0])
        sync.mb_tx(cta, mb, -c * _active_count(g), line, g if cta is g.cta else None)
        return np.int32(0)

    return _guard(comp, ptx, f)


@lambda fn: HANDLERS.__setitem__("tirx.ptx.mbarrier_inval", fn)
def _inval(comp, call):
    ptx = decode(call)
    if ptx is None:
        return _refusal(comp, call.op.name, "an instruction TVM's PTX table does not list")
    addr = _addr_of(comp, ptx)
    line = comp.line

    def f(g):
        mb = _own_mbarrier(g, _uniform_addr(g, addr(g), line, "mbarrier.inval"), line, "mbarrier.inval")
        mb.init_count = None
        mb.pending = mb.tx = 0
        g.cta.progress += 1
        return np.int32(0)

    return _guard(comp, ptx, f)
