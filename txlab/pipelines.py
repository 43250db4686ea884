"""Producer/consumer pipelines over full/empty mbarrier pairs, simulated exactly on the CPU.

A warp-specialized kernel built on ``tvm.backend.cuda.lang.Pipeline`` has, per stage ``s``, a *full*
barrier (producer -> consumers: "slot s holds data") and an *empty* barrier (consumers -> producer:
"slot s may be overwritten"). Every role walks the ring with a ``PipelineState`` (stage, phase) and
waits with a parity wait. One wrong phase bit or arrival count hangs the kernel; on the GPU that is
a timeout with no clue. :func:`simulate` runs the same protocol on the CPU with exact mbarrier
semantics and says what went wrong, where, and why.

mbarrier semantics modelled (PTX ISA, ``mbarrier``):

* ``init(count)``: current phase parity 0, pending arrivals = ``count``, tx-count 0.
* ``arrive(n)``: pending -= n. ``arrive.expect_tx(b)``: tx += b, then one arrival.
  ``expect_tx(b)``: tx += b (no arrival). ``complete_tx(b)`` (what a TMA copy does when its bytes
  land): tx -= b. The tx-count may go transiently negative (a copy can land before its expect).
* The current phase completes when pending == 0 and tx == 0: the parity flips, pending is reset to
  ``count`` and a new phase starts. Arriving more times than are pending is undefined behaviour in
  PTX; it is reported as an over-arrival and the excess is carried into the next phase.
* ``wait(parity)`` (``mbarrier.try_wait.parity``, what ``MBarrier.wait(stage, phase)`` emits with
  ``phase ^ phase_offset``) returns once the phase with that parity has completed, i.e. as soon as
  the barrier's current parity differs from ``parity``; it blocks while they are equal. A parity
  wait cannot tell phase k from phase k+2: if a barrier runs two phases ahead, a waiter hangs.
* ``PipelineState.advance()``: ``stage += 1``; on wrap to 0 the phase flips (depth 1: the phase
  flips every time). This is TVM's own code; ``tests/test_pipelines.py`` checks the simulator
  against it compiled for the CPU.

Role scripts
------------
A role is one warp or warpgroup that loops ``iterations`` times over its *script*, a list of ops
run once per iteration, all on the slot given by the role's own ``PipelineState``:

====================================  =================================================================
``("wait", "full")``                  ``full.wait(ps.stage, ps.phase)``: parity wait on full[stage]
``("wait", "empty")``                 ``empty.wait(ps.stage, ps.phase)`` (XOR ``empty_phase_offset``)
``("arrive", "empty")``               ``empty.arrive(ps.stage)``; ``("arrive", "empty", n)`` arrives n
``("arrive_expect_tx", "full", b)``   ``TMABar.arrive(ps.stage, b)``: expect b bytes + one arrival
``("expect_tx", "full", b)``          ``mbarrier.expect_tx`` b bytes, no arrival
``("complete_tx", "full", b)``        the TMA engine delivering b bytes to full[stage]
``("advance",)``                      ``ps.advance()``
====================================  =================================================================

Ops are plain tuples (a bare string works for ``"advance"``), so a protocol is easy to write in a
notebook cell::

    simulate(4, iterations=8, roles={
        "producer": [("wait", "empty"), ("arrive_expect_tx", "full", 8192),
                     ("complete_tx", "full", 8192), ("advance",)],
        "consumer": [("wait", "full"), ("arrive", "empty"), ("arrive", "empty"), ("advance",)],
    })

Scheduling: roles take turns, one op each (round robin); a role whose wait cannot pass is parked
on that barrier slot and woken when the slot's phase flips. The protocol's outcome (finish,
deadlock, skipped phase) does not depend on this order for Pipeline-style protocols; the order
only decides how the steps interleave in the trace.
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from txlab.errors import TxlabError

__all__ = [
    "simulate", "from_kernel", "find_pipelines", "Role", "PipelineTrace", "PipelineSpec",
    "Problem", "Deadlock", "BlockedWait", "Step", "Span", "BarrierSpec", "ScriptError",
]

# --- op codes (ints keep the inner loop cheap) ---------------------------------------------------
WAIT, ARRIVE, EXPECT_TX, ARRIVE_EXPECT_TX, COMPLETE_TX, ADVANCE = range(6)
OP_NAMES = ("wait", "arrive", "expect_tx", "arrive_expect_tx", "complete_tx", "advance")
_OP_CODES = {name: code for code, name in enumerate(OP_NAMES)}
# event kinds
EV_OP, EV_BLOCK, EV_WAKE = 0, 1, 2
EVENT_KINDS = ("op", "block", "wake")

BARRIERS = ("full", "empty")
_FULL, _EMPTY = 0, 1
BARRIER_KINDS = {"tma": "TMABar", "tcgen05": "TCGen05Bar", "mbar": "MBarrier"}


class ScriptError(TxlabError, ValueError):
    """A role script or a simulate() argument is malformed; the message names the fix."""


# PTX ISA, "mbarrier": the expected arrival count and the tx-count are 20-bit fields
# (1 .. 2**20 - 1 arrivals, 0 .. 2**20 - 1 transaction bytes per phase).
MBARRIER_MAX_COUNT = 2**20 - 1
MAX_STAGES = 1024            # far more slots than any shared memory holds
MAX_ROLES = 1024
MAX_ITERATIONS = 10**7
MAX_EVENTS = 2_000_000       # default cap on recorded events (about 0.3 GB); simulate(max_events=)


def _int_param(name: str, value, lo: int, hi: int, what: str = "") -> int:
    """``value`` as an int in [lo, hi] (bools are not ints here), else ScriptError naming it."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ScriptError(f"{name} must be an int{what}, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        if lo == hi - 1 == 0:
            raise ScriptError(f"{name} must be 0 or 1 (a PipelineState phase bit), got {value!r}")
        raise ScriptError(f"{name}={value!r} is out of range: it must be in {lo}..{hi:,}{what}")
    return value


# --- public data objects --------------------------------------------------------------------------
@dataclass(frozen=True)
class Role:
    """One warp/warpgroup role: the ops it runs per iteration and its PipelineState start phase."""

    name: str
    ops: tuple
    phase: int = 0
    iterations: int | None = None   # None: simulate()'s ``iterations``
    kind: str = "custom"            # "producer", "consumer" or "custom" (display only)

    def to_dict(self) -> dict:
        return {"name": self.name, "ops": [list(o) for o in self.ops], "phase": self.phase,
                "iterations": self.iterations, "kind": self.kind}


@dataclass(frozen=True)
class BarrierSpec:
    name: str              # "full" or "empty"
    kind: str              # "tma", "tcgen05" or "mbar"
    init: int              # arrival count per phase (mbarrier.init)
    phase_offset: int = 0  # XORed into every wait's parity

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Problem:
    """A diagnosed problem. ``kind``: ``deadlock``, ``over_arrival``, ``init_count``,
    ``tx_mismatch`` or ``phase_skip``."""

    kind: str
    message: str
    step: int | None = None
    role: str | None = None
    barrier: str | None = None
    stage: int | None = None
    iteration: int | None = None
    lineno: int | None = None   # the user's line of the offending arrive/copy (from_kernel specs)
    lines: tuple = ()           # every line involved (arrives, expect_tx, copies)

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"[{self.kind}]{f' line {self.lineno}:' if self.lineno is not None else ''} {self.message}"


@dataclass(frozen=True)
class BlockedWait:
    role: str
    barrier: str
    stage: int
    parity: int          # the parity passed to try_wait.parity (phase ^ phase_offset)
    iteration: int
    since_step: int
    barrier_phase: int   # the slot's current phase parity (== parity: that is why it blocks)
    pending: int         # arrivals still missing in the current phase
    init: int
    tx: int              # tx bytes still outstanding in the current phase
    completed: int       # phases this slot has completed so far
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Deadlock:
    step: int                       # index of the last event before everything stopped
    waits: tuple                    # BlockedWait per stuck role
    message: str

    def to_dict(self) -> dict:
        return {"step": self.step, "waits": [w.to_dict() for w in self.waits], "message": self.message}

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Span:
    """A wait that blocked: from the step it blocked to the step it passed (None: never)."""

    role: str
    barrier: str
    stage: int
    iteration: int
    start: int
    end: int | None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Step:
    """The state after one event. ``roles``: name -> (stage, phase) of each role's PipelineState;
    ``barriers``: name -> tuple over stages of (phase parity, pending arrivals, tx bytes)."""

    index: int
    role: str
    event: str          # "op", "block" (a wait that could not pass yet) or "wake" (it passed)
    op: str
    barrier: str | None
    stage: int | None
    iteration: int
    roles: dict
    barriers: dict

    def to_dict(self) -> dict:
        return {**asdict(self), "roles": {k: list(v) for k, v in self.roles.items()},
                "barriers": {k: [list(s) for s in v] for k, v in self.barriers.items()}}


# --- script parsing -------------------------------------------------------------------------------
def _parse_op(op, role: str, i: int) -> tuple:
    if isinstance(op, str):
        op = (op,)
    if not isinstance(op, (tuple, list)) or not op:
        raise ScriptError(f"role {role!r}, op {i}: expected a tuple like ('wait', 'full'), got {op!r}")
    name = op[0]
    if name not in _OP_CODES:
        raise ScriptError(f"role {role!r}, op {i}: unknown op {name!r}; use one of {', '.join(OP_NAMES)}")
    code = _OP_CODES[name]
    if code == ADVANCE:
        if len(op) != 1:
            raise ScriptError(f"role {role!r}, op {i}: ('advance',) takes no arguments")
        return (ADVANCE, -1, 0)
    if len(op) < 2 or op[1] not in BARRIERS:
        raise ScriptError(f"role {role!r}, op {i}: {name!r} needs a barrier, 'full' or 'empty' "
                          f"(e.g. ({name!r}, 'full')), got {tuple(op)!r}")
    bar = BARRIERS.index(op[1])
    if code == WAIT:
        if len(op) != 2:
            raise ScriptError(f"role {role!r}, op {i}: ('wait', barrier) takes no third argument; "
                              "the parity comes from the role's PipelineState")
        return (WAIT, bar, 0)
    if code == ARRIVE:
        if len(op) > 3:
            raise ScriptError(f"role {role!r}, op {i}: ('arrive', barrier[, count]) takes at most a count")
        n = op[2] if len(op) > 2 else 1
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ScriptError(f"role {role!r}, op {i}: arrival count must be a positive int, got {n!r}")
        if n > MBARRIER_MAX_COUNT:
            raise ScriptError(f"role {role!r}, op {i}: arrival count {n} is more than an mbarrier "
                              f"counts ({MBARRIER_MAX_COUNT:,} = 2**20 - 1)")
        return (ARRIVE, bar, n)
    if len(op) != 3 or isinstance(op[2], bool) or not isinstance(op[2], int) or op[2] < 0:
        raise ScriptError(f"role {role!r}, op {i}: {name!r} needs a byte count, "
                          f"e.g. ({name!r}, {op[1]!r}, 8192); got {tuple(op)!r}")
    if op[2] > MBARRIER_MAX_COUNT:
        raise ScriptError(f"role {role!r}, op {i}: {op[2]} bytes is more than an mbarrier's tx-count "
                          f"holds per phase ({MBARRIER_MAX_COUNT:,} = 2**20 - 1)")
    return (code, bar, op[2])


def _normalise_roles(roles, iterations, producer_phase, consumer_phase) -> list[Role]:
    out: list[Role] = []
    items: Iterable
    if isinstance(roles, dict):
        items = roles.items()
    elif isinstance(roles, (list, tuple)):
        items = [(r.name if isinstance(r, Role) else None, r) for r in roles]
    else:
        raise ScriptError("roles= takes a dict {name: [ops...]} or a list of txlab.pipelines.Role")
    for name, spec in items:
        if isinstance(spec, Role):
            role = spec if name is None or name == spec.name else Role(name, spec.ops, spec.phase,
                                                                      spec.iterations, spec.kind)
        elif isinstance(spec, dict):
            if "ops" not in spec:
                raise ScriptError(f"role {name!r}: a dict role needs 'ops' (and optionally "
                                  "'phase', 'iterations', 'kind')")
            role = Role(name, tuple(spec["ops"]), spec.get("phase", None), spec.get("iterations"),
                        spec.get("kind", "custom"))
        elif isinstance(spec, (list, tuple)):
            role = Role(name, tuple(spec), None, None, "custom")
        else:
            raise ScriptError(f"role {name!r}: expected a list of ops or a Role, got {type(spec).__name__}")
        if not role.name or not isinstance(role.name, str):
            raise ScriptError(f"every role needs a non-empty string name (got {role.name!r})")
        ops = tuple(o if isinstance(o, tuple) else tuple(o) if isinstance(o, list) else (o,)
                    for o in role.ops)
        for i, op in enumerate(ops):
            _parse_op(op, role.name, i)
        phase = role.phase
        kind = role.kind
        if phase is None:
            # A role whose first wait is on the empty barriers is a producer: it starts at
            # producer_phase; everything else starts at consumer_phase.
            first_wait = next((o[1] for o in ops if o and o[0] == "wait"), None)
            is_producer = first_wait == "empty"
            phase = producer_phase if is_producer else consumer_phase
            if kind == "custom":
                kind = "producer" if is_producer else "consumer"
        if isinstance(phase, bool) or phase not in (0, 1):
            raise ScriptError(f"role {role.name!r}: PipelineState phase must be 0 or 1, got {phase!r}")
        its = role.iterations if role.iterations is not None else iterations
        its = _int_param(f"role {role.name!r}: iterations", its, 0, MAX_ITERATIONS)
        out.append(Role(role.name, ops, phase, its, kind))
    names = [r.name for r in out]
    if len(set(names)) != len(names):
        raise ScriptError(f"role names must be unique, got {names}")
    if not out:
        raise ScriptError("roles= is empty: give at least one role")
    return out


def default_roles(*, iterations: int, producers: int = 1, consumers: int = 1, producer_phase: int = 1,
                  consumer_phase: int = 0, full: str = "tma", tx_bytes=None) -> list[Role]:
    """The roles of a standard Pipeline loop: TMA producer warp(s) and consumer warpgroups.

    Producer: ``empty.wait; full.arrive(stage, tx) [+ the TMA's complete_tx]; advance``.
    Consumer: ``full.wait; empty.arrive; advance``. ``tx_bytes``: int (expected == delivered) or a
    pair ``(expected, delivered)`` to model a copy that moves a different byte count."""
    if tx_bytes is not None and full == "tma":
        expect, deliver = (tx_bytes, tx_bytes) if isinstance(tx_bytes, int) else tuple(tx_bytes)
        fill = (("arrive_expect_tx", "full", int(expect)), ("complete_tx", "full", int(deliver)))
    else:
        fill = (("arrive", "full"),)
    prod = (("wait", "empty"),) + fill + (("advance",),)
    cons = (("wait", "full"), ("arrive", "empty"), ("advance",))
    roles = []
    for i in range(producers):
        roles.append(Role("producer" if producers == 1 else f"producer{i}", prod, producer_phase,
                          iterations, "producer"))
    for i in range(consumers):
        roles.append(Role("consumer" if consumers == 1 else f"consumer{i}", cons, consumer_phase,
                          iterations, "consumer"))
    return roles


# --- the trace ------------------------------------------------------------------------------------
class PipelineTrace:
    """What :func:`simulate` found. ``deadlock`` is None when every role finished; ``problems`` lists
    every diagnosis; ``steps`` has the full state after each event; ``spans`` the blocked waits."""

    def __init__(self, stages, barriers, roles, events, spans, deadlock, problems, finished, params):
        self.stages: int = stages
        self.barriers: tuple[BarrierSpec, ...] = tuple(barriers)
        self.roles: tuple[Role, ...] = tuple(roles)
        self._events = events          # list of compact tuples, see _ev_fields
        self.spans: tuple[Span, ...] = tuple(spans)
        self.deadlock: Deadlock | None = deadlock
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.finished: bool = finished
        self.params: dict = params
        self._steps = None
        self._roles_arg = None

    def rerun(self, **changes) -> "PipelineTrace":
        """Simulate again with some parameters changed (same role scripts), e.g.
        ``trace.rerun(producer_phase=1)``."""
        kw = {k: v for k, v in self.params.items() if k not in ("stages", "custom_roles")}
        kw.update(changes)
        stages = kw.pop("stages", self.stages)
        if isinstance(kw.get("tx_bytes"), list):
            kw["tx_bytes"] = tuple(kw["tx_bytes"])
        return simulate(stages, roles=self._roles_arg, **kw)

    # event tuple layout
    _ev_fields = ("role", "kind", "op", "bar", "stage", "iteration", "slot_phase", "slot_pending",
                  "slot_tx", "role_stage", "role_phase")

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def event_rows(self) -> tuple:
        """Every event as a tuple of ints, fields named by :attr:`event_fields` (what the
        widget streams as one int32 buffer)."""
        return tuple(self._events)

    @property
    def event_fields(self) -> tuple:
        return self._ev_fields

    def __len__(self) -> int:
        return len(self._events)

    @property
    def steps(self) -> list[Step]:
        """Per event: acting role, operation, stage, each role's (stage, phase) and each barrier
        slot's (phase, pending, tx) after the event. Built on first access."""
        if self._steps is None:
            self._steps = self._build_steps()
        return self._steps

    def _build_steps(self) -> list[Step]:
        names = [r.name for r in self.roles]
        bnames = [b.name for b in self.barriers]
        S = self.stages
        slots = [[(0, b.init, 0)] * S for b in self.barriers]
        rstate = [(0, r.phase) for r in self.roles]
        out = []
        for i, (r, kind, op, bar, st, it, sp, spend, stx, rs, rp) in enumerate(self._events):
            if bar >= 0:
                slots[bar][st] = (sp, spend, stx)
            rstate[r] = (rs, rp)
            out.append(Step(i, names[r], EVENT_KINDS[kind], OP_NAMES[op],
                            bnames[bar] if bar >= 0 else None, st if st >= 0 else None, it,
                            dict(zip(names, rstate)),
                            {bnames[b]: tuple(slots[b]) for b in range(len(bnames))}))
        return out

    def summary(self) -> str:
        its = ", ".join(f"{r.name}×{r.iterations}" for r in self.roles)
        head = (f"{self.stages}-stage pipeline, {len(self.roles)} roles ({its}), "
                f"{len(self._events)} events: ")
        if not self.problems:
            return head + "every role finished, no problem found."
        return head + f"{len(self.problems)} problem(s)\n" + "\n".join(f"  - {p}" for p in self.problems)

    def __repr__(self) -> str:
        state = "deadlock" if self.deadlock else ("ok" if self.ok else f"{len(self.problems)} problems")
        return (f"<PipelineTrace stages={self.stages} roles={[r.name for r in self.roles]} "
                f"events={len(self._events)} {state}>")

    def to_dict(self, max_events: int | None = None) -> dict:
        """Compact JSON: per-event columns (ints) plus roles, barriers, spans, problems."""
        ev = self._events if max_events is None else self._events[:max_events]
        cols = {name: [e[i] for e in ev] for i, name in enumerate(self._ev_fields)}
        return {
            "stages": self.stages,
            "roles": [r.to_dict() for r in self.roles],
            "barriers": [b.to_dict() for b in self.barriers],
            "op_names": list(OP_NAMES),
            "event_kinds": list(EVENT_KINDS),
            "n_events": len(self._events),
            "truncated": max_events is not None and len(self._events) > max_events,
            "events": cols,
            "spans": [s.to_dict() for s in self.spans],
            "deadlock": self.deadlock.to_dict() if self.deadlock else None,
            "problems": [p.to_dict() for p in self.problems],
            "finished": self.finished,
            "params": self.params,
        }

    def plot(self, ax=None, max_events: int | None = 400):
        """Swimlanes: one row per role, x = event index; blocked waits as red bars, ops as marks,
        the deadlock point as a vertical line. Returns the matplotlib Figure (drawn on ``ax`` when
        given)."""
        import matplotlib.pyplot as plt

        ev = self._events if max_events is None else self._events[:max_events]
        n_roles = len(self.roles)
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 0.55 * n_roles + 1.4))
        end = len(ev)
        for s in self.spans:
            if s.start >= end:
                continue
            stop = min(s.end if s.end is not None else end, end)
            ri = [r.name for r in self.roles].index(s.role)
            ax.barh(ri, max(stop - s.start, 0.6), left=s.start, height=0.5,
                    color="#e15759" if s.end is None else "#f28e2b", alpha=0.45, linewidth=0)
        style = {WAIT: ("v", "#4e79a7"), ARRIVE: ("^", "#59a14f"), ARRIVE_EXPECT_TX: ("^", "#76b7b2"),
                 EXPECT_TX: ("+", "#76b7b2"), COMPLETE_TX: ("*", "#b07aa1"), ADVANCE: ("|", "#9c755f")}
        for code, (marker, colour) in style.items():
            xs = [i for i, e in enumerate(ev) if e[2] == code and e[1] != EV_BLOCK]
            ys = [ev[i][0] for i in xs]
            if xs:
                ax.scatter(xs, ys, marker=marker, color=colour, s=28, label=OP_NAMES[code], zorder=3)
        if self.deadlock is not None and self.deadlock.step < end:
            ax.axvline(self.deadlock.step, color="#d62728", linewidth=2, label="deadlock")
        ax.set_yticks(range(n_roles), [r.name for r in self.roles])
        ax.invert_yaxis()
        ax.set_xlabel("event")
        title = f"{self.stages}-stage pipeline"
        if self.deadlock:
            title += " — DEADLOCK"
        elif self.problems:
            title += f" — {len(self.problems)} problem(s)"
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        ax.figure.tight_layout()
        return ax.figure

    def view(self, **kwargs):
        """The interactive widget of this simulation (:class:`txlab.views.PipelineViewer`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)


# --- the simulator --------------------------------------------------------------------------------
def simulate(stages: int, *, iterations: int, producers: int = 1, consumers: int = 1,
             producer_phase: int = 1, consumer_phase: int = 0, init_full: int = 1,
             init_empty: int | None = None, empty_phase_offset: int = 0, tx_bytes=None,
             roles=None, full: str = "tma", empty: str = "mbar",
             max_events: int = MAX_EVENTS) -> PipelineTrace:
    """Run a full/empty mbarrier pipeline protocol on the CPU with exact mbarrier semantics.

    ``stages``: ring depth (barrier slots per barrier). ``iterations``: loop trip count of every
    role. Default roles: ``producers`` TMA producer warps and ``consumers`` consumer warpgroups
    (see :func:`default_roles`); ``roles=`` replaces them with custom scripts (module docstring).
    ``init_full``/``init_empty``: mbarrier.init counts (``init_empty`` defaults to the number of
    consumer roles). ``empty_phase_offset``: XORed into every wait on the empty barriers, as
    ``Pipeline(..., empty_phase_offset=)`` does. ``tx_bytes``: bytes per stage announced with
    ``arrive.expect_tx`` and delivered by the TMA (int, or ``(expected, delivered)``).
    ``full``/``empty``: barrier kinds (``"tma"``, ``"tcgen05"``, ``"mbar"``), for display.
    ``max_events``: cap on the recorded events (each op, block and wake is one); a protocol that
    would record more raises :class:`ScriptError` before it runs (or when it gets there).
    """
    stages = _int_param("stages", stages, 1, MAX_STAGES)
    iterations = _int_param("iterations", iterations, 0, MAX_ITERATIONS)
    max_events = _int_param("max_events", max_events, 1, 10**9)
    producers = _int_param("producers", producers, 1, MAX_ROLES)
    consumers = _int_param("consumers", consumers, 1, MAX_ROLES)
    producer_phase = _int_param("producer_phase", producer_phase, 0, 1)
    consumer_phase = _int_param("consumer_phase", consumer_phase, 0, 1)
    if tx_bytes is not None:
        pair = (tx_bytes, tx_bytes) if isinstance(tx_bytes, int) and not isinstance(tx_bytes, bool) \
            else tuple(tx_bytes) if isinstance(tx_bytes, (tuple, list)) else None
        if pair is None or len(pair) != 2:
            raise ScriptError(f"tx_bytes must be an int or a pair (expected, delivered), got {tx_bytes!r}")
        for label, v in zip(("tx_bytes expected", "tx_bytes delivered"), pair):
            _int_param(label, v, 0, MBARRIER_MAX_COUNT, " (an mbarrier tx-count is 20 bits)")
    for kname, k in (("full", full), ("empty", empty)):
        if k not in BARRIER_KINDS:
            raise ScriptError(f"{kname}={k!r}: barrier kind must be one of {sorted(BARRIER_KINDS)}")
    if empty_phase_offset not in (0, 1):
        raise ScriptError(f"empty_phase_offset must be 0 or 1, got {empty_phase_offset!r}")
    if roles is None:
        role_list = default_roles(iterations=iterations, producers=producers, consumers=consumers,
                                  producer_phase=producer_phase, consumer_phase=consumer_phase,
                                  full=full, tx_bytes=tx_bytes)
    else:
        role_list = _normalise_roles(roles, iterations, producer_phase, consumer_phase)
    if init_empty is None:
        init_empty = sum(1 for r in role_list if r.kind == "consumer") or 1
    if len(role_list) > MAX_ROLES:
        raise ScriptError(f"{len(role_list)} roles: at most {MAX_ROLES} (a CTA has at most 32 warps)")
    for kname, c in (("init_full", init_full), ("init_empty", init_empty)):
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise ScriptError(f"{kname} must be a positive int (mbarrier.init count), got {c!r}")
        if c > MBARRIER_MAX_COUNT:
            raise ScriptError(f"{kname}={c} is more than an mbarrier counts ({MBARRIER_MAX_COUNT:,} = 2**20 - 1)")
    ops_total = sum(r.iterations * len(r.ops) for r in role_list)
    if ops_total > max_events:
        raise ScriptError(
            f"this protocol runs {ops_total:,} ops ({' + '.join(f'{r.name} {r.iterations}×{len(r.ops)}' for r in role_list[:4])}"
            f"{' + ...' if len(role_list) > 4 else ''}), more than max_events={max_events:,} events "
            "are recorded; lower iterations, or pass max_events= a larger number to raise the cap "
            "(each event holds about 150 bytes)")
    barriers = (BarrierSpec("full", full, init_full, 0),
                BarrierSpec("empty", empty, init_empty, empty_phase_offset))
    params = dict(stages=stages, iterations=iterations, producers=producers, consumers=consumers,
                  producer_phase=producer_phase, consumer_phase=consumer_phase, init_full=init_full,
                  init_empty=init_empty, empty_phase_offset=empty_phase_offset,
                  tx_bytes=list(tx_bytes) if isinstance(tx_bytes, (tuple, list)) else tx_bytes,
                  full=full, empty=empty, custom_roles=roles is not None)
    problems = _static_checks(role_list, barriers)
    trace = _run(stages, barriers, role_list, problems, params, max_events)
    trace._roles_arg = roles
    return trace


def _static_checks(roles: Sequence[Role], barriers: Sequence[BarrierSpec]) -> list[Problem]:
    """Per barrier: arrivals and tx bytes one iteration of every role brings to a slot."""
    problems = []
    for b, spec in enumerate(barriers):
        per_role = {}
        expect = deliver = 0
        tx_roles = []
        for r in roles:
            n = 0
            for op in r.ops:
                code, bar, arg = _parse_op(op, r.name, 0)
                if bar != b:
                    continue
                if code == ARRIVE:
                    n += arg
                elif code == ARRIVE_EXPECT_TX:
                    n += 1
                    expect += arg
                    tx_roles.append(r.name)
                elif code == EXPECT_TX:
                    expect += arg
                    tx_roles.append(r.name)
                elif code == COMPLETE_TX:
                    deliver += arg
            if n:
                per_role[r.name] = n
        total = sum(per_role.values())
        waiters = [r.name for r in roles if any(o[0] == "wait" and o[1] == spec.name for o in r.ops)]
        if not per_role and not waiters:
            continue
        who = ", ".join(f"{k} ×{v}" for k, v in per_role.items()) or "nobody"
        if total != spec.init:
            multi = [k for k, v in per_role.items() if v > 1]
            if multi and total > spec.init:
                k = multi[0]
                problems.append(Problem(
                    "over_arrival",
                    f"{k} arrives on {spec.name}[stage] {per_role[k]} times per iteration, but each phase "
                    f"of a {spec.name} barrier completes after {spec.init} arrival(s) "
                    f"(init_{spec.name}={spec.init}; arrivals per iteration: {who}). The extra arrival "
                    f"completes a phase nobody waited for, so the parity bit runs ahead and "
                    f"{' and '.join(waiters) or 'the waiters'} will wait on the wrong phase. "
                    f"Arrive once per stage (e.g. only from one elected thread).",
                    role=k, barrier=spec.name))
            elif total > spec.init:
                problems.append(Problem(
                    "init_count",
                    f"{spec.name} barriers are initialised with count {spec.init} (init_{spec.name}) but "
                    f"{total} arrivals reach each slot per iteration ({who}). Each phase completes after "
                    f"the first {spec.init}: the slot is handed on before every arriver is done (a race), "
                    f"and the surplus completes further phases nobody waits for. Set "
                    f"init_{spec.name}={total}.", barrier=spec.name))
            else:
                problems.append(Problem(
                    "init_count",
                    f"{spec.name} barriers are initialised with count {spec.init} (init_{spec.name}) but only "
                    f"{total} arrival(s) reach each slot per iteration ({who}). The phase never completes, "
                    f"so {' and '.join(waiters) or 'any waiter'} hangs. Set init_{spec.name}={total}"
                    + (" or add the missing arrive." if total else " or add the missing arrive."),
                    barrier=spec.name))
        if expect != deliver and (expect or deliver):
            problems.append(Problem(
                "tx_mismatch",
                f"{spec.name}[stage] is told to expect {expect} bytes per phase (expect_tx by "
                f"{', '.join(dict.fromkeys(tx_roles)) or 'nobody'}) but the copies deliver {deliver} bytes. "
                + ("The tx-count never drains to 0, so the phase never completes and its waiters hang. "
                   if expect > deliver else
                   "The tx-count goes negative and the phase cannot complete at 0; its waiters hang. ")
                + "Make expect_tx equal to the bytes the TMA box really moves (box size × element size).",
                barrier=spec.name))
    return problems


def _run(S: int, barriers, roles: list[Role], problems: list[Problem], params,
         max_events: int = MAX_EVENTS) -> PipelineTrace:
    R = len(roles)
    nb = len(barriers)
    init = [barriers[b].init for b in range(nb) for _ in range(S)]
    offset = [barriers[b].phase_offset for b in range(nb)]
    n_slots = nb * S
    sphase = [0] * n_slots
    spend = list(init)
    stx = [0] * n_slots
    scomp = [0] * n_slots          # phases completed
    sobs = [0] * n_slots           # highest completion count a wait has observed
    sarr = [[] for _ in range(n_slots)]        # arrivers (role idx) in the current phase
    sprev = [[] for _ in range(n_slots)]       # arrivers of the last completed phase
    waiters = [[] for _ in range(n_slots)]
    waited_on = [any(o[0] == "wait" and o[1] == barriers[b].name for r in roles for o in r.ops)
                 for b in range(nb)]

    scripts = [[_parse_op(o, r.name, i) for i, o in enumerate(r.ops)] for r in roles]
    lens = [len(s) for s in scripts]
    iters = [r.iterations for r in roles]
    pc = [0] * R
    it = [0] * R
    rstage = [0] * R
    rphase = [r.phase for r in roles]
    blocked_since = [-1] * R
    blocked_it = [0] * R
    done = [iters[r] == 0 or lens[r] == 0 for r in range(R)]

    events: list = []
    ev = events.append
    spans: list[Span] = []
    skip_reported = [False] * nb
    over_reported = [False] * nb
    runnable = deque(r for r in range(R) if not done[r])
    names = [r.name for r in roles]
    bnames = [b.name for b in barriers]

    def finish_op(r):
        p = pc[r] + 1
        if p == lens[r]:
            p = 0
            it[r] += 1
            if it[r] == iters[r]:
                done[r] = True
        pc[r] = p

    def complete(slot, r, bar):
        """Phase completion of `slot` caused by role r's op: flip parity, wake passing waiters."""
        c = scomp[slot] + 1
        scomp[slot] = c
        if waited_on[bar] and c >= 2 and sobs[slot] < c - 1 and not skip_reported[bar]:
            skip_reported[bar] = True
            st = slot - bar * S
            prev = ", ".join(names[x] for x in sprev[slot]) or "none"
            cur = ", ".join(names[x] for x in sarr[slot]) or "none"
            problems.append(Problem(
                "phase_skip",
                f"{bnames[bar]}[{st}] completed phase {c - 2} (arrivals: {prev}) and then phase {c - 1} "
                f"(arrivals: {cur}) before any role waited for phase {c - 2}. A parity wait cannot "
                f"tell these apart: whoever waits on {bnames[bar]}[{st}] next sees the parity it saw "
                f"two phases ago and either hangs or runs on stale data. Too many arrivals reach this "
                f"barrier per phase (over-arrival, or init_{bnames[bar]} smaller than the number of "
                f"arrivers).", step=len(events) - 1, role=names[r], barrier=bnames[bar], stage=st,
                iteration=it[r]))
        sphase[slot] ^= 1
        sprev[slot] = sarr[slot]
        sarr[slot] = []
        ws = waiters[slot]
        if ws:
            keep = []
            par = sphase[slot]
            for w in ws:
                need = rphase[w] ^ offset[bar]
                if par != need:
                    sobs[slot] = c
                    bit = blocked_it[w]
                    finish_op(w)
                    ev((w, EV_WAKE, WAIT, bar, slot - bar * S, bit, sphase[slot], spend[slot], stx[slot],
                        rstage[w], rphase[w]))
                    spans.append(Span(names[w], bnames[bar], slot - bar * S, bit, blocked_since[w],
                                      len(events) - 1))
                    blocked_since[w] = -1
                    if not done[w]:
                        runnable.append(w)
                else:
                    keep.append(w)
            waiters[slot] = keep

    while runnable:
        if len(events) > max_events:
            raise ScriptError(f"the simulation recorded more than max_events={max_events:,} events "
                              "(blocks and wakes count too); lower iterations, or pass max_events= a "
                              "larger number to raise the cap")
        r = runnable.popleft()
        code, bar, arg = scripts[r][pc[r]]
        if code == ADVANCE:
            s = rstage[r] + 1
            if S > 1:
                if s == S:
                    s = 0
                    rphase[r] ^= 1
                rstage[r] = s
            else:
                rphase[r] ^= 1
            cur_it = it[r]
            finish_op(r)
            ev((r, EV_OP, ADVANCE, -1, -1, cur_it, 0, 0, 0, rstage[r], rphase[r]))
            if not done[r]:
                runnable.append(r)
            continue
        slot = bar * S + rstage[r]
        if code == WAIT:
            if sphase[slot] != (rphase[r] ^ offset[bar]):
                if scomp[slot] > sobs[slot]:
                    sobs[slot] = scomp[slot]
                cur_it = it[r]
                finish_op(r)
                ev((r, EV_OP, WAIT, bar, rstage[r], cur_it, sphase[slot], spend[slot], stx[slot],
                    rstage[r], rphase[r]))
                if not done[r]:
                    runnable.append(r)
            else:
                waiters[slot].append(r)
                blocked_since[r] = len(events)
                blocked_it[r] = it[r]
                ev((r, EV_BLOCK, WAIT, bar, rstage[r], it[r], sphase[slot], spend[slot], stx[slot],
                    rstage[r], rphase[r]))
            continue
        cur_it = it[r]
        if code == ARRIVE or code == ARRIVE_EXPECT_TX:
            if code == ARRIVE_EXPECT_TX:
                stx[slot] += arg
                n = 1
            else:
                n = arg
            sarr[slot].append(r)
            p = spend[slot] - n
            if p < 0 and not over_reported[bar]:
                over_reported[bar] = True
                problems.append(Problem(
                    "over_arrival",
                    f"{names[r]} arrived {n} time(s) on {bnames[bar]}[{rstage[r]}] (iteration {cur_it}) "
                    f"when only {spend[slot]} arrival(s) were pending in its phase: more arrivals than "
                    f"the mbarrier.init count {init[slot]} — undefined behaviour in PTX. Lower the "
                    f"arrive count or raise init_{bnames[bar]}.", step=len(events), role=names[r],
                    barrier=bnames[bar], stage=rstage[r], iteration=cur_it))
            spend[slot] = p
        elif code == EXPECT_TX:
            stx[slot] += arg
        else:  # COMPLETE_TX
            stx[slot] -= arg
        finish_op(r)
        ei = len(events)
        ev((r, EV_OP, code, bar, slot - bar * S, cur_it, sphase[slot], spend[slot], stx[slot],
            rstage[r], rphase[r]))
        if spend[slot] <= 0 and stx[slot] == 0:
            while True:
                excess = -spend[slot]
                spend[slot] = init[slot] - excess
                complete(slot, r, bar)
                if excess == 0 or spend[slot] > 0:
                    break
            # the acting event shows the slot after its phase completed
            e = events[ei]
            events[ei] = e[:6] + (sphase[slot], spend[slot], stx[slot]) + e[9:]
        if not done[r]:
            runnable.append(r)

    finished = all(done)
    deadlock = None
    if not finished:
        deadlock = _diagnose(S, barriers, roles, scripts, events, waiters, sphase, spend, stx, scomp,
                             it, iters, done, rstage, rphase, blocked_since)
        problems.insert(0, Problem("deadlock", deadlock.message, step=deadlock.step,
                                   role=deadlock.waits[0].role if deadlock.waits else None,
                                   barrier=deadlock.waits[0].barrier if deadlock.waits else None,
                                   stage=deadlock.waits[0].stage if deadlock.waits else None,
                                   iteration=deadlock.waits[0].iteration if deadlock.waits else None))
        for slot in range(n_slots):
            for w in waiters[slot]:
                spans.append(Span(names[w], bnames[slot // S], slot % S, blocked_it[w],
                                  blocked_since[w], None))
    spans.sort(key=lambda s: s.start)
    return PipelineTrace(S, barriers, roles, events, spans, deadlock, problems, finished, params)


def _diagnose(S, barriers, roles, scripts, events, waiters, sphase, spend, stx, scomp, it, iters,
              done, rstage, rphase, blocked_since) -> Deadlock:
    names = [r.name for r in roles]
    arrivers = {b: [i for i, sc in enumerate(scripts)
                    if any(op[1] == b and op[0] in (ARRIVE, ARRIVE_EXPECT_TX) for op in sc)]
                for b in range(len(barriers))}
    txers = {b: [i for i, sc in enumerate(scripts) if any(op[1] == b and op[0] == COMPLETE_TX for op in sc)]
             for b in range(len(barriers))}
    stuck_on = {}
    for slot, ws in enumerate(waiters):
        for w in ws:
            stuck_on[w] = slot
    waits = []
    for w in sorted(stuck_on, key=lambda w: blocked_since[w]):
        slot = stuck_on[w]
        b, st = divmod(slot, S)
        spec = barriers[b]
        parity = rphase[w] ^ spec.phase_offset
        bname = f"{spec.name}[{st}]"
        off = f" ^ empty_phase_offset {spec.phase_offset}" if spec.phase_offset else ""
        head = (f"{names[w]} waits on {bname} with parity {parity} (PipelineState stage {rstage[w]}, "
                f"phase {rphase[w]}{off}; iteration {it[w]}). The barrier is still in phase parity "
                f"{sphase[slot]} with {spend[slot]} of {spec.init} arrival(s) pending"
                + (f" and {stx[slot]} tx byte(s) outstanding" if stx[slot] else "")
                + f" ({scomp[slot]} phase(s) completed so far), so the wait can only pass once this "
                  f"phase completes.")
        # why it never completes
        who = arrivers[b]
        status = []
        for a in who:
            if a == w:
                status.append(f"{names[a]} itself (blocked here)")
            elif done[a]:
                status.append(f"{names[a]} (finished all {iters[a]} iterations)")
            elif a in stuck_on:
                s2 = stuck_on[a]
                b2, st2 = divmod(s2, S)
                status.append(f"{names[a]} (blocked waiting on {barriers[b2].name}[{st2}])")
        why = ""
        if spend[slot] <= 0 and stx[slot] != 0:
            if stx[slot] > 0:
                why = (f" Every arrival is in, but {stx[slot]} expected byte(s) never landed: expect_tx "
                       f"announced more bytes than the copies deliver (tx-count mismatch).")
            else:
                why = (f" Every arrival is in, but the copies delivered {-stx[slot]} byte(s) more than "
                       f"expect_tx announced; the tx-count is negative and cannot reach 0 (tx-count "
                       f"mismatch).")
        elif not who:
            why = f" Nothing ever arrives on {spec.name}: no role's script has an arrive on it."
        elif all(done[a] or a == w for a in who):
            why = (f" Every role that arrives on {spec.name} ({', '.join(status)}) is done, yet the "
                   f"phase needs {spec.init} arrivals: init_{spec.name}={spec.init} is larger than the "
                   f"arrivals a phase receives, or an arrive is missing.")
        else:
            why = f" Arrivals on {spec.name} come from {', '.join(status)}: a cycle, nobody can move."
        hint = ""
        if (spec.name == "empty" and scomp[slot] == 0 and it[w] == 0 and
                roles[w].kind == "producer" and sphase[slot] == 0 and parity == 0):
            hint = (f" Likely cause: {names[w]} starts its PipelineState at phase {roles[w].phase} on "
                    f"the empty barriers. A fresh mbarrier is in phase 0, so a parity-0 wait blocks "
                    f"until consumers release a slot they never received. Start the producer at phase 1 "
                    f"(PipelineState(stages, 1)) or use empty_phase_offset=1.")
        elif scomp[slot] >= 2 and parity == sphase[slot]:
            per_iter = {a: sum(op[2] if op[0] == ARRIVE else 1 for op in scripts[a]
                               if op[1] == b and op[0] in (ARRIVE, ARRIVE_EXPECT_TX)) for a in who}
            total = sum(per_iter.values())
            twice = [names[a] for a, n in per_iter.items() if n > 1]
            if total > spec.init:
                cause = (f"{twice[0]} arrives on {spec.name} {per_iter[names.index(twice[0])]} times per "
                         f"stage" if twice else
                         f"init_{spec.name}={spec.init} is smaller than the {total} arrivals each stage "
                         f"receives")
                hint = (f" Likely cause: {cause}, so {bname} has completed {scomp[slot]} phases and its "
                        f"parity is back to {sphase[slot]}, the value {names[w]} waits to see change.")
        waits.append(BlockedWait(names[w], spec.name, st, parity, it[w], blocked_since[w], sphase[slot],
                                 spend[slot], spec.init, stx[slot], scomp[slot], head + why + hint))
    step = len(events) - 1
    if waits:
        lines = [f"Deadlock after event {step}: {len(waits)} role(s) wait forever."]
        lines += [f"- {w.reason}" for w in waits]
        message = "\n".join(lines)
    else:  # pragma: no cover - a role can only stop by blocking
        message = f"Deadlock after event {step}."
    return Deadlock(step, tuple(waits), message)


# --- reading a real kernel ------------------------------------------------------------------------
@dataclass
class PipelineSpec:
    """A full/empty pipeline as declared in a kernel's IR (what ``Pipeline(pool, stages, ...)``
    lowered to): barrier buffers, kinds, init counts, expect-tx bytes and the phases the roles'
    PipelineStates start at, where the IR says so. ``simulate(iterations)`` runs it."""

    stages: int
    full: str = "tma"
    empty: str = "mbar"
    init_full: int = 1
    init_empty: int = 1
    empty_phase_offset: int = 0
    tx_bytes: int | None = None
    producer_phase: int = 1
    consumer_phase: int = 0
    full_buffer: str = ""
    empty_buffer: str = ""
    kernel: str = ""
    notes: list = field(default_factory=list)
    # what the code does (txlab.pipeline_code): arrivals per phase counted over the threads that
    # execute each arrive, bytes announced by expect_tx and delivered by the TMA copies, and the
    # user's line of each (None: not derived; notes say what was assumed instead)
    arrivals_full: int | None = None
    arrivals_empty: int | None = None
    expect_tx_bytes: int | None = None
    tx_delivered: int | None = None
    lines: dict = field(default_factory=dict)
    copies: list = field(default_factory=list)
    arrive_sites: dict = field(default_factory=dict)

    @property
    def derived(self) -> bool:
        """True when arrival counts were derived from the code (simulate() then uses them)."""
        return self.arrivals_empty is not None or self.arrivals_full is not None

    def roles(self) -> dict:
        """The roles the code runs, per iteration: the producer waits on empty, announces and
        receives the tx bytes and arrives on full as often as the code does; the consumers wait on
        full and arrive on empty as many times as threads execute their arrive."""
        af = self.arrivals_full if self.arrivals_full is not None else 1
        ae = self.arrivals_empty if self.arrivals_empty is not None else self.init_empty
        expect = self.expect_tx_bytes if self.expect_tx_bytes is not None else (
            self.tx_delivered if self.tx_delivered is not None else self.tx_bytes)
        deliver = self.tx_delivered if self.tx_delivered is not None else expect
        prod = [("wait", "empty")]
        if self.full == "tma" and expect is not None:
            if af >= 1:
                prod.append(("arrive_expect_tx", "full", int(expect)))
                if af > 1:
                    prod.append(("arrive", "full", af - 1))
            else:
                prod.append(("expect_tx", "full", int(expect)))
            if deliver:
                prod.append(("complete_tx", "full", int(deliver)))
        elif af >= 1:
            prod.append(("arrive", "full", af))
        prod.append(("advance",))
        cons = [("wait", "full")] + ([("arrive", "empty", ae)] if ae >= 1 else []) + [("advance",)]
        return {"producer": {"ops": prod, "kind": "producer"}, "consumers": {"ops": cons, "kind": "consumer"}}

    def simulate_kwargs(self) -> dict:
        return dict(init_full=self.init_full, init_empty=self.init_empty,
                    empty_phase_offset=self.empty_phase_offset, tx_bytes=self.tx_bytes,
                    producer_phase=self.producer_phase, consumer_phase=self.consumer_phase,
                    full=self.full, empty=self.empty, consumers=self.init_empty)

    def simulate(self, iterations: int, **overrides) -> PipelineTrace:
        """Simulate this pipeline with one consumer role per empty arrival (``init_empty``) unless
        overridden; any :func:`simulate` keyword can be overridden."""
        kw = self.simulate_kwargs()
        if self.derived and not {"roles", "consumers", "producers", "tx_bytes"} & set(overrides):
            kw.pop("consumers")
            kw.pop("tx_bytes")
            kw.update(overrides)
            trace = simulate(self.stages, iterations=iterations, roles=self.roles(), **kw)
            placed = []
            for p in (self._placed(p) for p in trace.problems):
                if all((q.kind, q.lineno, q.message) != (p.kind, p.lineno, p.message) for q in placed):
                    placed.append(p)
            trace.problems = tuple(placed)
            return trace
        kw.update(overrides)
        return simulate(self.stages, iterations=iterations, **kw)

    def _placed(self, p: Problem) -> Problem:
        """A problem of the derived protocol, at the line of the arrive/copy that causes it."""
        import dataclasses

        if p.kind in ("over_arrival", "init_count") and p.barrier in ("full", "empty"):
            sites = self.arrive_sites.get(p.barrier) or []
            total = sum(n for _, n, _ in sites)
            init = self.init_full if p.barrier == "full" else self.init_empty
            if not sites:
                return p
            worst = max(sites, key=lambda x: x[1])
            line = worst[0]
            threads = ", ".join(f"{n} thread(s) execute the {k} at line {ln}" for ln, n, k in sites)
            if total > init:
                kind = "over_arrival"
                msg = (f"{p.barrier}[stage] receives {total} arrivals per phase but was initialised for "
                       f"{init}: {threads}. Each phase completes after the first {init}; the surplus "
                       f"completes phases nobody waited for, so the parity runs ahead and the waiters "
                       f"hang or pass early. Guard the arrive so {init} thread(s) execute it per phase "
                       f"(e.g. `if tid % 32 == 0` for one per warp, or T.ptx.elect_sync()), or init "
                       f"the barrier with {total}.")
            else:
                kind = "under_arrival"
                msg = (f"{p.barrier}[stage] receives only {total} arrival(s) per phase but was initialised "
                       f"for {init}: {threads}. The phase never completes and its waiters hang. Let "
                       f"{init} thread(s) arrive per phase, or init the barrier with {total}.")
            return dataclasses.replace(p, kind=kind, message=msg, lineno=line,
                                       lines=tuple(ln for ln, _, _ in sites))
        if p.kind == "tx_mismatch":
            ex, cp = self.lines.get("expect_tx") or [], self.lines.get("copy") or []
            boxes = "; ".join(f"line {c['line']}: box {'x'.join(str(e) for e in c['box'])} {c['dtype']} = "
                              f"{c['bytes']} B" + (f" x {c['threads']} threads" if c["threads"] != 1 else "")
                              for c in self.copies)
            msg = (f"{p.barrier}[stage] expects {self.expect_tx_bytes} bytes per phase (expect_tx at line "
                   f"{', '.join(map(str, ex)) or '?'}) but the TMA copies deliver {self.tx_delivered} "
                   f"({boxes}). " + p.message.split(" but the copies deliver")[-1].split(". ", 1)[-1])
            return dataclasses.replace(p, message=msg, lineno=ex[0] if ex else (cp[0] if cp else None),
                                       lines=tuple(ex) + tuple(cp))
        return p

    def to_dict(self) -> dict:
        return asdict(self)


def _as_prim_funcs(obj):
    import tvm

    from txlab import ir

    mod, _ = ir.as_module(obj, what="txlab.pipelines.from_kernel()")
    return [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]


def _barrier_buffer(ptr_expr):
    """The (buffer, index) behind ``cvta(address_of(buf[i]))`` / ``address_of(buf[i])``."""
    from tvm.ir import TensorLoad

    e = ptr_expr
    for _ in range(4):
        if isinstance(e, TensorLoad):
            return _load_source(e), (e.indices[0] if len(e.indices) else None)
        if hasattr(e, "args") and len(e.args):
            e = e.args[0]
        else:
            return None, None
    return None, None


def _load_source(load):
    """The buffer a load reads (``.source`` in TVM 0.27's TensorLoad, ``.buffer`` before)."""
    src = getattr(load, "source", None)
    return src if src is not None else getattr(load, "buffer", None)


def _int(e):
    v = getattr(e, "value", None)
    return int(v) if isinstance(v, int) else None


def find_pipelines(kernel) -> list[PipelineSpec]:
    """Every full/empty barrier pair in a kernel's IR, in declaration order.

    What is read: ``mbarrier.init`` (slot count = buffer extent, arrival count), arrives
    (``arrive.expect_tx`` → TMA with its byte count, ``tcgen05.commit`` → tcgen05, plain
    ``arrive`` → mbar), and parity waits: ``wait(buf[ps_stage], ps_phase ^ k)`` gives the phase
    offset ``k`` and, through the constant ``ps_phase`` is initialised with, the producer (waits on
    empty) and consumer (waits on full) start phases. Barriers are paired as ``Pipeline`` declares
    them: a full barrier initialised right before an empty barrier of the same depth."""
    import tvm.tirx as tx
    import tvm_ffi
    from tvm.ir import StringImm, TensorLoad

    out = []
    for kname, func in _as_prim_funcs(kernel):
        inits: list = []          # (buffer, count) in order
        kinds: dict = {}          # buffer name -> kind
        tx_bytes: dict = {}
        wait_phase: dict = {}     # buffer name -> (phase buffer name, xor constant)
        const_init: list = []     # (local scalar buffer, first constant stored to it)

        def visit(s):
            if isinstance(s, tx.BufferStore):
                buf = getattr(s, "buffer", None)
                if buf is None:
                    buf = getattr(s, "source", None)
                c = _int(s.value)
                if (c is not None and buf is not None and buf.scope() == "local"
                        and not any(b.same_as(buf) for b, _ in const_init)):
                    const_init.append((buf, c))
                return
            if not isinstance(s, tx.Evaluate) or not hasattr(s.value, "op"):
                return
            call = s.value
            op = getattr(call.op, "name", "")
            if not op or not len(call.args):
                return
            if op.endswith("mbarrier_init"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None and not any(b.same_as(buf) for b, _ in inits):
                    inits.append((buf, _int(call.args[1])))
            elif op.endswith("mbarrier_arrive_expect_tx"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds[buf.name] = "tma"
                    n = _int(call.args[1])
                    if n is not None:
                        tx_bytes[buf.name] = n
            elif "tcgen05" in op or any("tcgen05.commit" in str(a) for a in call.args
                                        if isinstance(a, StringImm)):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds[buf.name] = "tcgen05"
            elif op.endswith("mbarrier_arrive") or op.endswith("mbarrier_arrive_nocount"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds.setdefault(buf.name, "mbar")
            elif op.endswith("mbarrier_wait"):
                buf, _ = _barrier_buffer(call.args[0])
                ph = call.args[1]
                xor = 0
                if type(ph).__name__ == "BitwiseXor":
                    xor = _int(ph.b) or 0
                    ph = ph.a
                pbuf = _load_source(ph) if isinstance(ph, TensorLoad) else None
                if buf is not None and buf.name not in wait_phase:
                    wait_phase[buf.name] = (pbuf, xor)

        # TVM's structural visitor, pre-order (the walker txlab.pools uses too)
        tvm_ffi.structural_walk(func.body, [((tx.Evaluate, tx.BufferStore), visit)], order="pre")

        def start_value(pbuf):
            return next((c for b, c in const_init if pbuf is not None and b.same_as(pbuf)), None)
        i = 0
        while i + 1 < len(inits):
            (fb, fc), (eb, ec) = inits[i], inits[i + 1]
            depth = _int(fb.shape[0]) if len(fb.shape) == 1 else None
            if depth is None or len(eb.shape) != 1 or _int(eb.shape[0]) != depth:
                i += 1
                continue
            notes = []
            spec = PipelineSpec(stages=depth, full=kinds.get(fb.name, "mbar"),
                                empty=kinds.get(eb.name, "mbar"), init_full=fc or 1, init_empty=ec or 1,
                                tx_bytes=tx_bytes.get(fb.name), full_buffer=fb.name or "full",
                                empty_buffer=eb.name or "empty", kernel=kname)
            if eb.name in wait_phase:
                pbuf, xor = wait_phase[eb.name]
                spec.empty_phase_offset = xor & 1
                if start_value(pbuf) is not None:
                    spec.producer_phase = start_value(pbuf) & 1
                else:
                    notes.append("producer start phase not a constant in the IR; assumed 1")
            else:
                notes.append("no wait on the empty barriers found")
            if fb.name in wait_phase:
                pbuf, xor = wait_phase[fb.name]
                if xor:
                    notes.append(f"waits on the full barrier XOR the phase with {xor}")
                if start_value(pbuf) is not None:
                    spec.consumer_phase = (start_value(pbuf) ^ xor) & 1
                else:
                    notes.append("consumer start phase not a constant in the IR; assumed 0")
            else:
                notes.append("no wait on the full barriers found")
            notes.append(f"consumers = init_empty = {spec.init_empty} (one arrival per consumer role "
                         "assumed)")
            spec.notes = notes
            out.append(spec)
            i += 2
    if out:
        from txlab.pipeline_code import derive

        derive(kernel, out, getattr(kernel, "arch", None) or "sm_90a")
    return out


def from_kernel(kernel, which: int = 0) -> PipelineSpec:
    """The pipeline a kernel declares (``which``-th if several), read from its IR: stages, barrier
    kinds, init counts, expect-tx bytes, phase offset and start phases. Accepts a prim_func, an
    IRModule, or anything with ``.ir_module`` (``txlab.Compiled``). ``.simulate(iterations)`` on the
    result runs it; pass overrides to try fixes."""
    specs = find_pipelines(kernel)
    if not specs:
        raise ScriptError(
            "no full/empty mbarrier pair found in this kernel's IR: expected two mbarrier.init'ed "
            "barrier buffers of the same depth (what tvm.backend.cuda.lang.Pipeline(pool, stages, "
            "full=..., empty=...) emits). Describe the protocol with txlab.pipelines.simulate(...) "
            "instead.")
    if not -len(specs) <= which < len(specs):
        raise IndexError(f"the kernel declares {len(specs)} pipeline(s); which={which} is out of range")
    return specs[which]


# --- a real kernel with this protocol (notebook 04, GPU test) --------------------------------------
def demo_kernel(stages: int = 4, *, tiles: int = 16, rows: int = 32, consumers: int = 2,
                producer_phase: int = 1, init_empty: int | None = None):
    """A warp-specialized TIRx kernel over a ``stages``-deep TMA pipeline: warp 0 (one thread)
    streams ``tiles`` tiles of ``rows × 32·consumers`` float32 from ``A`` into shared memory with
    TMA (``Pipeline(pool, stages, full="tma", empty="mbar", init_empty=consumers)``); each consumer
    warp sums its 32 columns of every tile and releases the slot (lane 0 arrives on empty).
    ``Out[c] = A[:, c].sum()``. Returns the ``@T.prim_func``; arguments ``(A, Out)`` with
    ``A: (tiles·rows, 32·consumers)`` and ``Out: (32·consumers,)``, both float32.

    ``producer_phase`` and ``init_empty`` exist to build the classic broken variants (producer at
    phase 0, wrong arrival count) so :func:`from_kernel` can be shown reading them back; do not run
    those on a GPU, they hang."""
    from tvm.backend.cuda.lang import Pipeline, PipelineState, SMEMPool
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx

    STAGES, NT, ROWS, NC = stages, tiles, rows, consumers
    PPHASE = producer_phase
    INIT_EMPTY = consumers if init_empty is None else init_empty
    COLS = 32 * NC
    THREADS = 32 * (NC + 1)
    TILE_BYTES = ROWS * COLS * 4

    @T.prim_func
    def pipeline_tile_sum(A_ptr: T.handle, Out_ptr: T.handle):
        A = T.match_buffer(A_ptr, (NT * ROWS, COLS), "float32")
        Out = T.match_buffer(Out_ptr, (COLS,), "float32")
        T.device_entry()
        T.cta_id([1])
        tid = T.thread_id([THREADS])
        pool = SMEMPool()
        A_smem = pool.alloc((STAGES, ROWS, COLS), "float32", align=128)
        pipe = Pipeline(pool, STAGES, full="tma", empty="mbar", init_empty=INIT_EMPTY)
        pool.commit()
        T.ptx.fence.proxy.async_.shared__cta()
        T.cuda.cta_sync()
        if tid == 0:
            # producer: wait for a free slot, launch the TMA copy, announce its bytes
            ps = PipelineState(STAGES, PPHASE)
            for k in T.serial(NT):
                pipe.empty.wait(ps.stage, ps.phase)
                Tx.copy_async(A_smem[ps.stage, :, :], A[k * ROWS:(k + 1) * ROWS, :],
                              dispatch="tma_auto", mbar=pipe.full.ptr_to([ps.stage]))
                pipe.full.arrive(ps.stage, TILE_BYTES)
                ps.advance()
        elif tid >= 32:
            # consumer warps: wait for a full slot, sum it, release it (one arrival per warp)
            cs = PipelineState(STAGES, 0)
            acc = T.alloc_local([1], "float32")
            acc[0] = T.float32(0)
            for k in T.serial(NT):
                pipe.full.wait(cs.stage, cs.phase)
                for r in T.serial(ROWS):
                    acc[0] = acc[0] + A_smem[cs.stage, r, tid - 32]
                T.cuda.warp_sync()
                if tid % 32 == 0:
                    pipe.empty.arrive(cs.stage)
                cs.advance()
            Out[tid - 32] = acc[0]

    return pipeline_tile_sum


def cuda_target(arch: str = "sm_90a"):
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": arch})
