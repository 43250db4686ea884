"""The pipeline protocol's vocabulary: op codes, mbarrier limits, roles and their scripts, and the
records a simulation reports (problems, blocked waits, deadlocks, spans, steps)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

from txlab.errors import TxlabError

#: the vocabulary (re-exported by txlab.pipelines)
__all__ = [
    "ADVANCE",
    "ARRIVE",
    "ARRIVE_EXPECT_TX",
    "BARRIER_KINDS",
    "BARRIERS",
    "COMPLETE_TX",
    "EV_BLOCK",
    "EV_OP",
    "EV_WAKE",
    "EVENT_KINDS",
    "EXPECT_TX",
    "MAX_EVENTS",
    "MAX_ITERATIONS",
    "MAX_ROLES",
    "MAX_STAGES",
    "MBARRIER_MAX_COUNT",
    "OP_NAMES",
    "WAIT",
    "BarrierSpec",
    "BlockedWait",
    "Deadlock",
    "Problem",
    "Role",
    "ScriptError",
    "Span",
    "Step",
    "default_roles",
    "parse_op",
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
MAX_STAGES = 1024  # far more slots than any shared memory holds
MAX_ROLES = 1024
MAX_ITERATIONS = 10**7
MAX_EVENTS = 2_000_000  # default cap on recorded events (about 0.3 GB); simulate(max_events=)


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
    iterations: int | None = None  # None: simulate()'s ``iterations``
    kind: str = "custom"  # "producer", "consumer" or "custom" (display only)
    # the role's PipelineState is re-created (stage 0, ``phase``) every this many iterations while the barriers keep
    # their phases (``PipelineState(...)`` written inside a persistent tile loop); None: one state throughout
    reset_every: int | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "ops": [list(o) for o in self.ops],
            "phase": self.phase,
            "iterations": self.iterations,
            "kind": self.kind,
            "reset_every": self.reset_every,
        }


@dataclass(frozen=True)
class BarrierSpec:
    name: str  # "full" or "empty"
    kind: str  # "tma", "tcgen05" or "mbar"
    init: int  # arrival count per phase (mbarrier.init)
    phase_offset: int = 0  # XORed into every wait's parity

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Problem:
    """A diagnosed problem. ``kind``: ``deadlock``, ``over_arrival``, ``init_count``,
    ``tx_mismatch``, ``phase_skip``, ``phase_mismatch`` (a wait passing on a phase its role already passed on: a
    PipelineState out of step with the barriers), and from a kernel's code (``PipelineSpec.simulate``)
    ``under_arrival``, ``trip_count`` and ``missing_arrive`` (a barrier the kernel waits on and never arrives on)."""

    kind: str
    message: str
    step: int | None = None
    role: str | None = None
    barrier: str | None = None
    stage: int | None = None
    iteration: int | None = None
    lineno: int | None = None  # the user's line of the offending arrive/copy (from_kernel specs)
    lines: tuple = ()  # every line involved (arrives, expect_tx, copies)

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"[{self.kind}]{f' line {self.lineno}:' if self.lineno is not None else ''} {self.message}"


@dataclass(frozen=True)
class BlockedWait:
    role: str
    barrier: str
    stage: int
    parity: int  # the parity passed to try_wait.parity (phase ^ phase_offset)
    iteration: int
    since_step: int
    barrier_phase: int  # the slot's current phase parity (== parity: that is why it blocks)
    pending: int  # arrivals still missing in the current phase
    init: int
    tx: int  # tx bytes still outstanding in the current phase
    completed: int  # phases this slot has completed so far
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Deadlock:
    step: int  # index of the last event before everything stopped
    waits: tuple  # BlockedWait per stuck role
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
    event: str  # "op", "block" (a wait that could not pass yet) or "wake" (it passed)
    op: str
    barrier: str | None
    stage: int | None
    iteration: int
    roles: dict
    barriers: dict

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "roles": {k: list(v) for k, v in self.roles.items()},
            "barriers": {k: [list(s) for s in v] for k, v in self.barriers.items()},
        }


# --- script parsing -------------------------------------------------------------------------------
def parse_op(op, role: str, i: int) -> tuple:
    """One script op (op ``i`` of ``role``) as ``(op code, barrier index or -1, argument)``, the form the
    simulator's inner loop runs; ScriptError naming the fix when it is malformed."""
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
        raise ScriptError(
            f"role {role!r}, op {i}: {name!r} needs a barrier, 'full' or 'empty' "
            f"(e.g. ({name!r}, 'full')), got {tuple(op)!r}"
        )
    bar = BARRIERS.index(op[1])
    if code == WAIT:
        if len(op) != 2:
            raise ScriptError(
                f"role {role!r}, op {i}: ('wait', barrier) takes no third argument; "
                "the parity comes from the role's PipelineState"
            )
        return (WAIT, bar, 0)
    if code == ARRIVE:
        if len(op) > 3:
            raise ScriptError(f"role {role!r}, op {i}: ('arrive', barrier[, count]) takes at most a count")
        n = op[2] if len(op) > 2 else 1
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ScriptError(f"role {role!r}, op {i}: arrival count must be a positive int, got {n!r}")
        if n > MBARRIER_MAX_COUNT:
            raise ScriptError(
                f"role {role!r}, op {i}: arrival count {n} is more than an mbarrier "
                f"counts ({MBARRIER_MAX_COUNT:,} = 2**20 - 1)"
            )
        return (ARRIVE, bar, n)
    if len(op) != 3 or isinstance(op[2], bool) or not isinstance(op[2], int) or op[2] < 0:
        raise ScriptError(
            f"role {role!r}, op {i}: {name!r} needs a byte count, e.g. ({name!r}, {op[1]!r}, 8192); got {tuple(op)!r}"
        )
    if op[2] > MBARRIER_MAX_COUNT:
        raise ScriptError(
            f"role {role!r}, op {i}: {op[2]} bytes is more than an mbarrier's tx-count "
            f"holds per phase ({MBARRIER_MAX_COUNT:,} = 2**20 - 1)"
        )
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
            role = (
                spec
                if name is None or name == spec.name
                else Role(name, spec.ops, spec.phase, spec.iterations, spec.kind, spec.reset_every)
            )
        elif isinstance(spec, dict):
            if "ops" not in spec:
                raise ScriptError(
                    f"role {name!r}: a dict role needs 'ops' (and optionally 'phase', 'iterations', 'kind', "
                    "'reset_every')"
                )
            role = Role(
                name,
                tuple(spec["ops"]),
                spec.get("phase", None),
                spec.get("iterations"),
                spec.get("kind", "custom"),
                spec.get("reset_every"),
            )
        elif isinstance(spec, (list, tuple)):
            role = Role(name, tuple(spec), None, None, "custom")
        else:
            raise ScriptError(f"role {name!r}: expected a list of ops or a Role, got {type(spec).__name__}")
        if not role.name or not isinstance(role.name, str):
            raise ScriptError(f"every role needs a non-empty string name (got {role.name!r})")
        ops = tuple(o if isinstance(o, tuple) else tuple(o) if isinstance(o, list) else (o,) for o in role.ops)
        for i, op in enumerate(ops):
            parse_op(op, role.name, i)
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
        reset = role.reset_every
        if reset is not None:
            reset = _int_param(f"role {role.name!r}: reset_every", reset, 1, MAX_ITERATIONS)
        out.append(Role(role.name, ops, phase, its, kind, reset))
    names = [r.name for r in out]
    if len(set(names)) != len(names):
        raise ScriptError(f"role names must be unique, got {names}")
    if not out:
        raise ScriptError("roles= is empty: give at least one role")
    return out


def default_roles(
    *,
    iterations: int,
    producers: int = 1,
    consumers: int = 1,
    producer_phase: int = 1,
    consumer_phase: int = 0,
    full: str = "tma",
    tx_bytes=None,
) -> list[Role]:
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
        roles.append(
            Role("producer" if producers == 1 else f"producer{i}", prod, producer_phase, iterations, "producer")
        )
    for i in range(consumers):
        roles.append(
            Role("consumer" if consumers == 1 else f"consumer{i}", cons, consumer_phase, iterations, "consumer")
        )
    return roles
