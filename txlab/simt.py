"""Run a lowered device kernel's control flow and index arithmetic for every thread of one CTA.

The checkers that read *what the code does* (bank conflicts per shared-memory access, arrivals per
mbarrier ``arrive``) need, for each statement, which threads execute it and what each thread's
index expressions evaluate to. :func:`execute` walks the device function TVM lowered for the GPU
(``threadIdx``/``blockIdx`` explicit, buffers flattened, swizzles folded into the index) once, with
the thread index as a numpy vector over all threads of a CTA (SIMT, in lock step):

* ``if``/``while`` conditions become per-thread masks; ``for`` loops with a constant trip count are
  iterated (each iteration visits the body once); per-thread trip counts become masks;
* arithmetic follows TIR semantics through the emulator's own table (:mod:`txlab.ir.semantics`:
  ``Div``/``Mod`` truncate, ``FloorDiv``/``FloorMod`` floor), ``Let``/``Bind`` values, ``Select``, casts, shifts and bit operations, ``thread_rank()``,
  ``__shfl*_sync`` (value of a source lane) and ``elect_sync`` (lowest active lane of each warp);
* ``local`` scalars written with constant indices keep their per-thread values (pipeline stage
  and phase counters), also when read at a per-thread index (``regs[tx % 4]``), and a vector store's lanes
  write their cells in order (the last of several on one cell stays, with a warning); values read from
  global or shared memory are *unknown* (one read at one address per warp is known to be the same for
  the warp's lanes: a global index it moves, a row gather, is a :class:`WarpUniform`): a condition that depends on one runs both branches with
  the mask unchanged and the visit is marked ``uncertain``; a loop whose trip count is unknown runs
  its body once, marked the same way. A local those paths leave different (a branch's assignment, a
  loop's counter) is unknown after them, with the reason;
* ``break``/``continue`` take the threads that run them out of the rest of the loop / iteration
  (under a condition the walk cannot evaluate, the rest of the loop is marked ``uncertain``).

Every shared- and global-memory load and store and every call is reported to the caller's hooks
with the active-thread mask, the per-thread index values (``UNKNOWN`` where they depend on memory),
the buffer's scope and the user's source line (from the statement's span).
Nothing here runs on a GPU; nothing re-derives TVM's lowering (it is the lowered IR that runs).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

import numpy as np

from txlab.ir import semantics, spans

WARP = 32


class _Unknown:
    """A value the walk cannot know (read from memory, an opaque call)."""

    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self):
        return "UNKNOWN"


UNKNOWN = _Unknown()
_SENTINEL = np.iinfo(np.int64).min
#: what an unknown value most often depends on (the phrase reasons use)
MEMORY = "a value read from memory"
#: the phrase naming a scalar kernel argument the walk was given no value for (followed by its name)
_ARGUMENT = "the kernel argument "
#: the key ``(_UNIFORM, i)`` of a local's cells: what cell ``i`` holds where it is UNKNOWN but warp-uniform,
#: ``(the store's execution id, WarpUniform)`` (two paths that stored it apart do not compare the same)
_UNIFORM = "uniform"


@dataclass
class AddrValue:
    """``address_of(buf[index])``: which buffer and element an address points at (not a load)."""

    buffer: object
    index: object
    rank: object = None  # mapa'd into CTA ``rank`` of the cluster (None: this CTA's own memory)
    why: tuple = ()  # what an UNKNOWN index depends on (phrases, see :meth:`SimtWalk.why`)


@dataclass
class RampValue:
    """A vector index ``base + stride * i`` for ``i < lanes`` (a vector load/store)."""

    base: object
    stride: object
    lanes: int


@dataclass
class WarpUniform:
    """An integer ``known + u`` where ``u`` is not known (it is read from memory) but is the same for every
    lane of each warp and a multiple of ``modulus``: the row of a gather by row (``E[r * 512 + tx]`` with
    ``r = I[bx]``: ``known = tx``, ``modulus = 512``). The index of a global access the walk reports where
    that is all it does not know (:meth:`SimtWalk._uniform`). A warp's lanes that load one address get one
    value: assumed is that nothing writes it while they read (an index array the kernel only reads)."""

    known: object  # int or per-thread int array
    modulus: int


@dataclass
class Visit:
    """One execution of a statement: the threads that ran it and their values."""

    kind: str  # "load", "store" or "call"
    node: object  # the TVM node (BufferLoad/BufferStore/Call)
    stmt: object  # the enclosing statement
    line: int | None  # the user's source line (span of the statement)
    mask: np.ndarray  # active threads (bool, one per thread of the CTA)
    index: object = None  # per-thread flat index (array/int, RampValue) for loads/stores
    args: list = field(default_factory=list)  # evaluated call arguments (for calls)
    loops: tuple = ()  # values of the enclosing loop variables at this visit
    uncertain: bool = False  # a guard on the path could not be evaluated
    #: what the unknown guards on the path depend on, and what an UNKNOWN ``index`` depends on
    #: (phrases such as :data:`MEMORY` or "the kernel argument n (known only at launch)")
    guard_why: tuple = ()
    why: tuple = ()
    exec_id: int = 0  # which execution of a statement this visit belongs to
    scope: str = ""  # the accessed buffer's memory scope for loads/stores ("shared", "global", ...)


class Limits:
    max_loop_iterations = 256  # iterations of one loop visited (the rest are skipped: noted)
    max_visits = 20000  # visits reported in all
    #: wall-clock budget of one walk (None: none); past it every loop runs its first iteration only,
    #: so each statement is still reached once (noted)
    max_seconds: float | None = None
    #: scalar kernel arguments bound to values (``{"k": 4096}``, checked by :func:`checked_params`): every
    #: walk made with these limits (a further CTA's too) knows them; the others are unknown
    params: dict | None = None


class SimtWalk:
    """State of one walk. ``notes`` lists what was approximated (and where)."""

    def __init__(self, func, *, block=None, cta=(0, 0, 0), on_visit=None, limits=Limits, params=None):
        self.func = func
        self.on_visit = on_visit
        self.limits = limits
        #: scalar kernel arguments the walk knows (name -> int): ``params``, else ``limits.params``
        self.params = dict(params if params is not None else getattr(limits, "params", None) or {})
        self.block = tuple(block) if block is not None else None
        self.cta = tuple(cta)
        self.env: dict = {}
        self.locals: dict = {}  # data var -> {const index: value}
        self.scopes: dict = {}  # data var -> scope
        self.buffers: dict = {}  # data var -> Buffer (first declaration)
        self.decl_data: dict = {}  # buffer -> the pointer Var its DeclBuffer names as data
        self.notes: list = []
        self.visits = 0
        self._reported: set = set()  # statements reported at least once
        self._deadline = None
        self.truncated = False
        self.loops_cut = False  # some loop iterations were not followed (limits or the time budget)
        self.var_why: dict = {}  # var key -> what its UNKNOWN value depends on (phrases)
        self.local_why: dict = {}  # local buffer key -> what its UNKNOWN cells depend on
        self.uniform_vars: dict = {}  # var key -> the WarpUniform its UNKNOWN value is (a bound load of one address)
        self._uncertain = 0
        self._guard_why: list = []
        self._loops: list = []
        self._flows: list = []  # the loops around this point that have break/continue (_LoopExits)
        self._has_exits: dict = {}  # loop body -> whether it holds a break/continue
        self._headers: dict = {}  # loop -> the loop with its header's line (spans.loop_header)
        self._stmt = None
        self._exec_id = 0
        self._n = None

    # ---- setup --------------------------------------------------------------------------------
    def _threads(self):
        if self.block is None:
            self.block = _block_dims(self.func)
        bx, by, bz = self.block
        n = bx * by * bz
        lin = np.arange(n, dtype=np.int64)
        self._n = n
        self.tid = {"threadIdx.x": lin % bx, "threadIdx.y": (lin // bx) % by, "threadIdx.z": lin // (bx * by)}
        self.linear = lin

    def run(self):
        import tvm.tirx as tx

        import time

        self._threads()
        if self.limits.max_seconds is not None:
            self._deadline = time.monotonic() + self.limits.max_seconds
        for p in self.func.params:
            if p.name in self.params and _is_scalar_int(p):
                self.env[_key(p)] = int(self.params[p.name])
                continue
            self.env[_key(p)] = UNKNOWN
            self.var_why[_key(p)] = (f"{_ARGUMENT}{p.name}",)
        self._tx = tx
        self._exec(self.func.body, np.ones(self._n, dtype=bool))
        return self

    # ---- helpers ------------------------------------------------------------------------------
    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def _begin(self, s):
        self._stmt = s
        self._exec_id += 1

    def _line(self, stmt):
        return user_line(getattr(stmt, "span", None))

    def _report(self, kind, node, mask, **kw):
        if self.on_visit is None or not mask.any():
            return
        self.visits += 1
        first = _key(self._stmt) not in self._reported
        if self.visits > self.limits.max_visits and not first:
            # past the limit only a statement's first execution is reported (so that every access
            # still has a row, marked as cut short), not its repetitions
            if not self.truncated:
                self.truncated = True
                self.note(
                    f"stopped reporting repeated executions after {self.limits.max_visits} visits "
                    "(later statements are reported once)"
                )
            return
        self._reported.add(_key(self._stmt))
        self.on_visit(
            Visit(
                kind,
                node,
                self._stmt,
                self._line(self._stmt),
                mask.copy(),
                loops=tuple(self._loops),
                uncertain=self._uncertain > 0 or any(f.maybe for f in self._flows),
                guard_why=tuple(
                    dict.fromkeys(w for ws in [*self._guard_why, *(f.maybe for f in self._flows)] for w in ws)
                ),
                exec_id=self._exec_id,
                **kw,
            )
        )

    # ---- statements ---------------------------------------------------------------------------
    def _exec(self, s, mask):
        tx = self._tx
        if s is None or not mask.any():
            return
        if isinstance(s, tx.SeqStmt):
            for c in s.seq:
                if self._flows:  # threads that left the loop's iteration skip the rest of it
                    mask = mask & ~self._flows[-1].left()
                    if not mask.any():
                        return
                self._exec(c, mask)
            return
        if isinstance(s, tx.AttrStmt):
            if s.attr_key == "thread_extent":
                iv = s.node
                tag = str(iv.thread_tag)
                var = iv.var
                if tag.startswith("threadIdx."):
                    self.env[_key(var)] = self.tid[tag]
                elif tag.startswith("blockIdx."):
                    self.env[_key(var)] = int(self.cta["xyz".index(tag[-1])])
                elif tag.startswith("clusterCtaIdx.") and _const(s.value):
                    # the walked CTA's rank in its cluster (CTA 0: the leader of a pair)
                    self.env[_key(var)] = int(self.cta["xyz".index(tag[-1])]) % _const(s.value)
                else:
                    self.env[_key(var)] = UNKNOWN
                    self.var_why[_key(var)] = (f"{tag}, which the walk does not fix",)
            self._exec(s.body, mask)
            return
        if isinstance(s, (tx.Bind, tx.LetStmt)):
            self._begin(s)
            self._bind(s.var, s.value, mask)
            body = getattr(s, "body", None)
            if isinstance(body, tx.Stmt):
                self._exec(body, mask)
            return
        if isinstance(s, (tx.DeclBuffer, tx.AllocBuffer)):
            b = s.buffer
            k = _key(b)
            self.scopes.setdefault(k, b.scope())
            self.buffers.setdefault(k, b)
            data = getattr(s, "data", None)
            if isinstance(data, tx.Var):
                self.decl_data.setdefault(k, data)  # the pointer a declared buffer lives at
            if b.scope() == "local" and k not in self.locals:
                self.locals[k] = {}
            body = getattr(s, "body", None)
            if isinstance(body, tx.Stmt):
                self._exec(body, mask)
            return
        if isinstance(s, tx.For):
            self._for(s, mask)
            return
        if isinstance(s, tx.While):
            self._while(s, mask)
            return
        if isinstance(s, tx.IfThenElse):
            self._begin(s)
            c = self._eval(s.condition, mask)
            if c is UNKNOWN:
                why = self.why(s.condition)
                self.note(
                    f"line {self._line(s) or spans.first_user_line(s) or '?'}: a condition depends on {_phrase(why)}; "
                    "both branches were followed with every thread"
                )
                self._uncertain += 1
                self._guard_why.append(why)
                before = self._locals_state()
                self._exec(s.then_case, mask)
                after_then, self.locals = self.locals, before
                self._exec(s.else_case, mask)
                self._join_locals(after_then, f"set under a condition that depends on {_phrase(why)}")
                self._guard_why.pop()
                self._uncertain -= 1
                return
            c = _as_mask(c, self._n)
            self._exec(s.then_case, mask & c)
            if s.else_case is not None:
                self._exec(s.else_case, mask & ~c)
            return
        if isinstance(s, tx.BufferStore):
            self._begin(s)
            value = self._eval(s.value, mask)
            buf = s.buffer
            k = _key(buf)
            idx = [self._eval(i, mask) for i in s.indices]
            scope = self.scopes.get(k) or buf.scope()
            if scope == "local":
                cells = _lane_cells(s.indices, idx)
                if cells is not None:  # a vector store: each lane writes its cell, in lane order
                    self._store_lanes(s, k, cells, value, mask)
                    return
                if value is UNKNOWN or any(i is UNKNOWN for i in idx):
                    self.local_why.setdefault(k, {}).update(dict.fromkeys(self.why(s.value, *s.indices)))
                elif isinstance(value, RampValue) or len(idx) != 1 or isinstance(idx[0], (np.ndarray, RampValue)):
                    # what it holds is not followed, and no memory is read: say so, never "a value read from memory"
                    name = getattr(self.buffers.get(k), "name", None) or buf.name
                    phrase = f"{name}, a local written with a vector or at a per-thread index the walk does not follow"
                    self.local_why.setdefault(k, {})[phrase] = None
                uniform = self._uniform(s.value, mask) if value is UNKNOWN else None
                self._store_local(k, idx, value, mask, uniform if isinstance(uniform, WarpUniform) else None)
            elif scope.startswith("shared") or scope == "global":
                flat = _flat(idx, buf)
                if flat is UNKNOWN and scope == "global":
                    flat = self._uniform_flat(s.indices, buf, mask)
                why = self.why(*s.indices) if flat is UNKNOWN or _has_uniform(flat) else ()
                self._report("store", s, mask, index=flat, scope=scope, why=why)
            return
        if isinstance(s, tx.Evaluate):
            self._begin(s)
            self._eval(s.value, mask)
            return
        if isinstance(s, (tx.Break, tx.Continue)):
            self._leave(isinstance(s, tx.Break), mask, s)
            return
        # Other statements (asserts, allocations of other kinds): walk their bodies.
        body = getattr(s, "body", None)
        if isinstance(body, tx.Stmt):
            self._exec(body, mask)

    def _for(self, s, mask):
        k = _key(s)
        if k not in self._headers:  # the loop with its header's line (TVM's passes drop its span)
            self._headers[k] = spans.loop_header(s)
        header = self._headers[k]
        self._begin(header)  # what its bounds read is at the loop's line, not the statement before it
        lo = self._eval(s.min, mask)
        ext = self._eval(s.extent, mask)
        step = self._eval(s.step, mask) if getattr(s, "step", None) is not None else 1
        key = _key(s.loop_var)
        if lo is UNKNOWN or ext is UNKNOWN or step is UNKNOWN:
            why = self.why(*(x for x in (s.min, s.extent, getattr(s, "step", None)) if x is not None))
            self.note(
                f"line {self._line(header) or spans.first_user_line(s) or '?'}: a loop bound depends on "
                f"{_phrase(why)}; its body was visited once with an unknown loop variable"
            )
            self.env[key] = UNKNOWN
            self.var_why[key] = (f"the loop variable {s.loop_var.name}, whose trip count depends on {_phrase(why)}",)
            self._uncertain += 1
            self._guard_why.append(why)
            self._loops.append(None)
            before = self._locals_state()
            exits = self._enter_loop(s.body)
            self._exec(s.body, mask)
            self._leave_loop(exits, before)
            self._join_locals(before, f"updated in a loop whose trip count depends on {_phrase(why)}")
            self._loops.pop()
            self._guard_why.pop()
            self._uncertain -= 1
            return
        lo_a, ext_a = np.broadcast_to(lo, (self._n,)), np.broadcast_to(ext, (self._n,))
        step_i = int(np.max(step)) if isinstance(step, np.ndarray) else int(step)
        if step_i <= 0:
            step_i = 1
        trips = np.where(mask, -(-np.maximum(ext_a, 0) // step_i), 0)
        n_max = int(trips.max()) if trips.size else 0
        if n_max > self.limits.max_loop_iterations:
            self.loops_cut = True
            self.note(
                f"line {self._line(header) or spans.first_user_line(s) or '?'}: loop of {n_max} iterations; the first "
                f"{self.limits.max_loop_iterations} were followed"
            )
            n_max = self.limits.max_loop_iterations
        if n_max > 1 and self._past_deadline():
            self.loops_cut = True
            self.note(
                f"past the walk's {self.limits.max_seconds:g} s budget: loops were followed for their "
                "first iteration only from then on"
            )
            n_max = 1
        before = self._locals_state()
        exits = self._enter_loop(s.body)
        for i in range(n_max):
            live = mask & (trips > i)
            if exits is not None:
                live &= ~exits.next_iteration()
            if not live.any():
                break
            v = lo_a + i * step_i
            self.env[key] = int(v[0]) if np.all(v == v[0]) else v.copy()
            self._loops.append(i)
            self._exec(s.body, live)
            self._loops.pop()
        self._leave_loop(exits, before)

    def _enter_loop(self, body):
        """The exits record of a loop whose body holds a break/continue (pushed), else None."""
        k = _key(body)
        if k not in self._has_exits:
            self._has_exits[k] = _has_loop_exit(body)
        if not self._has_exits[k]:
            return None
        exits = _LoopExits(self._n, self._uncertain)
        self._flows.append(exits)
        return exits

    def _leave_loop(self, exits, before) -> None:
        """After a loop: when threads may have left it where the walk could not tell (a break under
        an unknown condition), the locals the loop changed are unknown after it."""
        if exits is None:
            return
        self._flows.pop()
        if exits.maybe:
            self._join_locals(before, f"updated in a loop left by a break that depends on {_phrase(exits.maybe)}")

    def _leave(self, is_break: bool, mask, node) -> None:
        """``break`` / ``continue`` by the threads of ``mask``: they skip the rest of the iteration
        (and with ``break`` the loop). Under a condition the walk could not evaluate, which threads
        leave is not known: the rest of the loop is followed with every thread, marked uncertain."""
        line = self._line(node) or self._line(self._stmt) or "?"
        if not self._flows:
            self.note(f"line {line}: a break/continue outside a loop the walk follows")
            return
        exits = self._flows[-1]
        if self._uncertain > exits.level:
            why = tuple(dict.fromkeys(w for ws in self._guard_why for w in ws))
            exits.maybe = tuple(dict.fromkeys((*exits.maybe, *why)))
            self.note(
                f"line {line}: a {'break' if is_break else 'continue'} depends on {_phrase(why)}; which threads "
                "leave the loop is not known, the rest of it was followed with every thread"
            )
            return
        (exits.broken if is_break else exits.continued)[mask] = True

    def _past_deadline(self) -> bool:
        import time

        return self._deadline is not None and time.monotonic() > self._deadline

    def _while(self, s, mask):
        before = self._locals_state()
        exits = self._enter_loop(s.body)
        try:
            self._while_iterations(s, mask, exits)
        finally:
            self._leave_loop(exits, before)

    def _while_iterations(self, s, mask, exits):
        live = mask.copy()
        for i in range(self.limits.max_loop_iterations):
            if exits is not None:
                live &= ~exits.next_iteration()
                if not live.any():
                    return
            if i and self._past_deadline():
                self.loops_cut = True
                self.note(
                    f"past the walk's {self.limits.max_seconds:g} s budget: loops were followed for their "
                    "first iteration only from then on"
                )
                return
            self._begin(s)
            c = self._eval(s.condition, live)
            if c is UNKNOWN:
                why = self.why(s.condition)
                self.note(
                    f"line {self._line(s) or spans.first_user_line(s) or '?'}: a while condition depends on {_phrase(why)}; "
                    "the body was visited once"
                )
                self._uncertain += 1
                self._guard_why.append(why)
                before = self._locals_state()
                self._exec(s.body, live)
                self._join_locals(before, f"updated in a while loop whose condition depends on {_phrase(why)}")
                self._guard_why.pop()
                self._uncertain -= 1
                return
            live = live & _as_mask(c, self._n)
            if not live.any():
                return
            self._loops.append(i)
            self._exec(s.body, live)
            self._loops.pop()
        self.loops_cut = True
        self.note(
            f"line {self._line(s) or '?'}: while loop followed for {self.limits.max_loop_iterations} iterations only"
        )

    def _bind(self, var, value_expr, mask):
        """``var = value_expr`` (a Let or Bind): its value, and when unknown, what it depends on."""
        value = self._eval(value_expr, mask)
        self.env[_key(var)] = value
        self.uniform_vars.pop(_key(var), None)
        if value is UNKNOWN:
            self.var_why[_key(var)] = self.why(value_expr)
            uniform = self._uniform(value_expr, mask)
            if isinstance(uniform, WarpUniform):
                self.uniform_vars[_key(var)] = uniform
        return value

    def why(self, *exprs) -> tuple:
        """What makes ``exprs`` unknown to the walk, as phrases (in order, each once): a value read
        from memory (:data:`MEMORY`), a kernel argument, a loop variable whose trip count is itself
        unknown, the result of an opaque call. Empty when nothing the walk tracks explains it."""
        import tvm

        from txlab.ir import children

        out: dict = {}
        stack = list(reversed(exprs))
        while stack:
            e = stack.pop()
            if isinstance(e, self._tx.Var):
                if self.env.get(_key(e), UNKNOWN) is UNKNOWN:
                    out.update(
                        dict.fromkeys(self.var_why.get(_key(e), (f"{e.name}, a value the walk does not follow",)))
                    )
                continue
            if isinstance(e, tvm.ir.TensorLoad):
                k = _key(e.source)
                if (self.scopes.get(k) or e.source.scope()) == "local":
                    if self._eval(e, np.ones(self._n, bool)) is not UNKNOWN:
                        continue  # a local the walk knows here (TIRx's scalar bindings live in 1-cell locals)
                    out.update(dict.fromkeys(self.local_why.get(k) or (MEMORY,)))
                    stack.extend(reversed(list(e.indices)))
                else:
                    out[MEMORY] = None
                continue
            if isinstance(e, tvm.ir.Call):
                args = [a for a in e.args if isinstance(a, tvm.ir.Expr) and not _is_str(a)]
                inner = self.why(*args) if args else ()
                short = (getattr(e.op, "name", "") or "").rsplit(".", 1)[-1]
                out.update(dict.fromkeys(inner or ((f"the result of {short}",) if short != "address_of" else ())))
                continue
            stack.extend(reversed([c for c in children(e) if isinstance(c, tvm.ir.Expr)]))
        return tuple(out)

    def _locals_state(self) -> dict:
        """A copy of what the walk knows of local buffers (their cells), to follow two paths from."""
        return {k: dict(cells) for k, cells in self.locals.items()}

    def _join_locals(self, other: dict, phrase: str) -> None:
        """Where the kernel took one of two paths the walk cannot choose between (an unknown branch,
        a loop run an unknown number of times), locals are what both paths agree on: a cell the
        current state and ``other`` differ on becomes unknown, and why (``phrase``, after the
        buffer's name) is what an index read from it depends on."""
        for k in set(self.locals) | set(other):
            a, b = self.locals.get(k, {}), other.get(k, {})
            keys = set(a) | set(b)
            differ = {i for i in keys if i not in a or i not in b or not _same(a[i], b[i])}
            if not differ:
                continue
            self.locals[k] = {i: (UNKNOWN if i in differ else a[i]) for i in keys}
            for i in differ:  # a cell the paths leave different is not one value per warp either
                self.locals[k].pop((_UNIFORM, i), None)
            name = getattr(self.buffers.get(k), "name", None) or "a local value"
            self.local_why.setdefault(k, {})[f"{name}, {phrase}"] = None

    def _store_lanes(self, s, k, cells, value, mask):
        """A vector store into a local (``x[Ramp(0, 1, 4)] = ...``, ``i[Broadcast(0, 4)] = Ramp(...)``): CUDA's
        code writes lane 0's element to its cell, then lane 1's, ..., so where lanes share a cell the last
        one's value is what stays (noted: the other lanes' values are lost)."""
        lanes = len(cells)
        if isinstance(value, RampValue):
            vals = (
                [_simplify(np.add(value.base, np.multiply(value.stride, j))) for j in range(lanes)]
                if value.lanes == lanes and _is_int(value.base) and _is_int(value.stride)
                else [UNKNOWN] * lanes
            )
        else:
            vals = [value] * lanes  # a broadcast value (or one the walk does not know)
        if any(v is UNKNOWN for v in vals):
            self.local_why.setdefault(k, {}).update(dict.fromkeys(self.why(s.value)))
        for cell, v in zip(cells, vals):
            self._store_local(k, [cell], v, mask)
        shared = sorted({c for c in cells if cells.count(c) > 1})
        if shared:
            name = getattr(self.buffers.get(k), "name", None) or s.buffer.name
            what = (
                f"all {lanes} lanes of a vector store write {name}[{shared[0]}]"
                if len(set(cells)) == 1
                else f"lanes of a {lanes}-lane vector store share cells of {name} "
                f"({', '.join(f'{name}[{c}]' for c in shared)})"
            )
            self.note(
                f"line {self._line(s) or spans.first_user_line(s) or '?'}: warning: {what}; only the last lane's "
                "value stays (CUDA writes the lanes in order), so what reads it gets that lane's value and the other "
                "lanes' values are lost: how TVM lowers a vectorized loop's scalar kept in a one-cell local"
            )

    def _store_local(self, k, idx, value, mask, uniform=None):
        """``local[idx] = value`` by the threads of ``mask``; ``uniform``: the :class:`WarpUniform` an UNKNOWN
        ``value`` is, kept for the cell where every warp's threads all store it or all keep a value known as well."""
        if len(idx) != 1 or isinstance(idx[0], (np.ndarray, RampValue)) or idx[0] is UNKNOWN:
            self.locals.setdefault(k, {}).clear()  # a data-dependent write: forget what we knew
            self.locals[k]["*"] = UNKNOWN
            return
        cells = self.locals.setdefault(k, {})
        i = int(idx[0])
        old = cells.get(i, UNKNOWN)
        kept = cells.pop((_UNIFORM, i), None)
        if uniform is not None:
            uniform = _masked_uniform(uniform, mask, old, kept[1] if kept else None)
            if uniform is not None:
                cells[(_UNIFORM, i)] = (self._exec_id, uniform)
        if value is UNKNOWN or isinstance(value, RampValue):
            cells[i] = UNKNOWN
        elif mask.all():
            cells[i] = value
        elif old is UNKNOWN:
            # threads outside the mask keep an unknown value (a sentinel, reads of it by active
            # threads give UNKNOWN); inside, the new one
            cells[i] = np.where(mask, value, _SENTINEL) if _is_int(value) else UNKNOWN
        elif _is_int(value) and _is_int(old):
            cells[i] = np.where(mask, value, old)
        else:
            cells[i] = UNKNOWN

    # ---- expressions --------------------------------------------------------------------------
    def _eval(self, e, mask):
        import tvm

        tx = self._tx
        if isinstance(e, (int, float, bool)):
            return e
        if isinstance(e, tx.IntImm):
            return int(e.value)
        if isinstance(e, tx.FloatImm):
            return float(e.value)
        if isinstance(e, tx.Var):
            return self.env.get(_key(e), UNKNOWN)
        if isinstance(e, tvm.ir.TensorLoad):
            src = e.source
            k = _key(src)
            idx = [self._eval(i, mask) for i in e.indices]
            scope = self.scopes.get(k) or src.scope()
            if scope == "local":
                cells = self.locals.get(k, {})
                if "*" in cells or len(idx) != 1:
                    return UNKNOWN
                if isinstance(idx[0], np.ndarray) and idx[0].dtype.kind in "iu":
                    return self._gather_local(cells, idx[0], mask)
                if not isinstance(idx[0], int):
                    return UNKNOWN
                v = cells.get(idx[0], UNKNOWN)
                if isinstance(v, np.ndarray) and v.dtype == np.int64 and (v[mask] == _SENTINEL).any():
                    return UNKNOWN
                return v
            if scope.startswith("shared") or scope == "global":
                flat = _flat(idx, src)
                if flat is UNKNOWN and scope == "global":
                    flat = self._uniform_flat(e.indices, src, mask)
                why = self.why(*e.indices) if flat is UNKNOWN or _has_uniform(flat) else ()
                self._report("load", e, mask, index=flat, scope=scope, why=why)
            return UNKNOWN
        op = semantics.binary(type(e).__name__, _operand_dtype(e), True)
        if op is not None:
            a = self._eval(e.a, mask)
            b = self._eval(e.b, mask)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            if isinstance(a, RampValue) or isinstance(b, RampValue):
                return _vector_op(op, a, b, self._n)
            with np.errstate(all="ignore"):
                try:
                    return _simplify(op(a, b))
                except (ZeroDivisionError, TypeError, ValueError, OverflowError):
                    return UNKNOWN
        name = type(e).__name__
        if name == "Not":
            a = self._eval(e.a, mask)
            return UNKNOWN if a is UNKNOWN else _simplify(np.logical_not(a))
        if name == "Select":
            return self._select(e.condition, e.true_value, e.false_value, mask)
        if name == "Cast":
            v = self._eval(e.value, mask)
            if v is UNKNOWN or isinstance(v, RampValue):
                return v
            ty = getattr(e, "ty", None)  # TVM 0.27: a Cast carries its type; a pointer cast has no dtype
            dt = str(getattr(ty, "dtype", None) or getattr(e, "dtype", None) or "")
            if isinstance(v, AddrValue):
                # a pointer cast keeps the element it points at; an address turned into a number is not followed
                return UNKNOWN if dt.startswith(("int", "uint", "float", "bool")) else v
            if dt.startswith(("int", "uint")):
                return _simplify(np.asarray(v).astype(np.int64)) if isinstance(v, np.ndarray) else int(v)
            if dt == "bool":
                return _simplify(np.asarray(v).astype(bool)) if isinstance(v, np.ndarray) else bool(v)
            return v
        if name == "Let":
            self._bind(e.var, e.value, mask)
            return self._eval(e.body, mask)
        if name == "Ramp":
            base = self._eval(e.base, mask)
            stride = self._eval(e.stride, mask)
            lanes = _const(e.lanes)
            if base is UNKNOWN or stride is UNKNOWN or lanes is None:
                return UNKNOWN
            return RampValue(base, stride, lanes)
        if name == "Broadcast":
            return self._eval(e.value, mask)
        if isinstance(e, tvm.ir.Call):
            return self._call(e, mask)
        return UNKNOWN

    def _uniform(self, e, mask):
        """``e`` as a value the walk knows (an int or per-thread int array) or as a :class:`WarpUniform`: where
        what it does not know is a value read from memory the same for every lane of each warp (a load of one
        address per warp, kept in a local or bound to a variable), added or scaled by what it knows; else
        UNKNOWN. Integer arithmetic only; it reports nothing (the walk has already visited ``e``'s loads)."""
        import tvm

        tx = self._tx
        if isinstance(e, tx.IntImm):
            return int(e.value)
        if isinstance(e, tx.Var):
            v = self.env.get(_key(e), UNKNOWN)
            if v is UNKNOWN:
                return self.uniform_vars.get(_key(e), UNKNOWN)
            return v if _is_int(v) else UNKNOWN
        if isinstance(e, tvm.ir.TensorLoad):
            return self._uniform_load(e, mask)
        name = type(e).__name__
        if name == "Cast":
            dt = str(getattr(getattr(e, "ty", None), "dtype", None) or getattr(e, "dtype", None) or "")
            return self._uniform(e.value, mask) if dt.startswith(("int", "uint")) else UNKNOWN
        if name == "Broadcast":
            return self._uniform(e.value, mask)
        if name == "Ramp":
            base, stride, lanes = self._uniform(e.base, mask), self._uniform(e.stride, mask), _const(e.lanes)
            if base is UNKNOWN or not isinstance(stride, int) or isinstance(base, RampValue) or not lanes:
                return UNKNOWN
            return RampValue(base, stride, lanes)
        if isinstance(e, tvm.ir.Call):
            short = (getattr(e.op, "name", "") or "").rsplit(".", 1)[-1]
            if short not in _INT_CALLS or len(e.args) != 2:
                return UNKNOWN
            operands, dtype = e.args, ""
        else:
            dtype = _operand_dtype(e)
            if dtype.startswith(("float", "bfloat")) or semantics.binary(name, dtype, True) is None:
                return UNKNOWN
            operands, short = (e.a, e.b), name
        a = self._uniform(operands[0], mask)
        return UNKNOWN if a is UNKNOWN else _uniform_op(short, a, self._uniform(operands[1], mask), dtype)

    def _uniform_load(self, e, mask):
        """A load as :meth:`_uniform` reads it: a local's cell, or a global/shared integer every active lane of
        each warp reads at one address (one value per warp: a ``WarpUniform`` of modulus 1)."""
        src = e.source
        k = _key(src)
        scope = self.scopes.get(k) or src.scope()
        dtype = str(src.dtype)
        if scope != "local" and not dtype.startswith(("int", "uint")) or "x" in dtype:
            return UNKNOWN  # a float, a vector: no index
        idx = [self._uniform(i, mask) for i in e.indices]
        if scope == "local":
            cells = self.locals.get(k, {})
            if "*" in cells or len(idx) != 1 or not isinstance(idx[0], (int, np.integer)):
                return UNKNOWN
            v = cells.get(int(idx[0]), UNKNOWN)
            if v is UNKNOWN:
                kept = cells.get((_UNIFORM, int(idx[0])))
                return kept[1] if isinstance(kept, tuple) else UNKNOWN
            if not _is_int(v) or (isinstance(v, np.ndarray) and (v[mask] == _SENTINEL).any()):
                return UNKNOWN
            return v
        if scope.startswith("shared") or scope == "global":
            flat = _flat(idx, src)
            if isinstance(flat, WarpUniform):  # an address read once per warp: still one address per warp
                flat = flat.known
            if _is_int(flat) and _warp_uniform(flat, mask):
                return WarpUniform(0, 1)
        return UNKNOWN

    def _uniform_flat(self, indices, buf, mask):
        """The flat index of a global access as :meth:`_uniform` reads it (a :class:`WarpUniform`, a
        :class:`RampValue` of one, or a known value), else UNKNOWN."""
        idx = [self._uniform(i, mask) for i in indices]
        if len(idx) == 1:
            flat = idx[0]
        else:
            shape = [_const(s) for s in buf.shape]
            if any(s is None for s in shape) or any(isinstance(i, RampValue) for i in idx):
                return UNKNOWN
            flat = 0
            for i, s in zip(idx, shape):
                flat = _uniform_op("Add", _uniform_op("Mul", flat, s), i)
        if isinstance(flat, RampValue):
            return flat if isinstance(flat.base, WarpUniform) or _is_int(flat.base) else UNKNOWN
        return flat if isinstance(flat, WarpUniform) or _is_int(flat) else UNKNOWN

    def _gather_local(self, cells, idx, mask):
        """A local array read at a per-thread index (``regs[tx % 4]``): each active thread's own
        value of the cell it names, when every such cell holds integers the walk knows."""
        out = np.zeros(self._n, dtype=np.int64)
        for i in np.unique(idx[mask]).tolist():
            v = cells.get(int(i), UNKNOWN)
            if not _is_int(v):
                return UNKNOWN
            sel = mask & (idx == i)
            v = np.broadcast_to(np.asarray(v, dtype=np.int64), (self._n,))
            if (v[sel] == _SENTINEL).any():
                return UNKNOWN
            out[sel] = v[sel]
        return _simplify(out)

    def _call(self, c, mask):
        import tvm

        name = getattr(c.op, "name", "") or ""
        short = name.rsplit(".", 1)[-1]
        if short == "address_of" and len(c.args) == 1 and isinstance(c.args[0], tvm.ir.TensorLoad):
            ld = c.args[0]
            idx = _flat([self._eval(i, mask) for i in ld.indices], ld.source)
            data = self.decl_data.get(_key(ld.source))
            base = self.env.get(_key(data)) if data is not None else None
            if isinstance(base, AddrValue) and str(base.buffer.dtype) == str(ld.source.dtype):
                # a buffer declared over a computed pointer (MBarrier.remote_view: mapa of a local
                # barrier): the element it names is the pointee's, offset by the index
                if isinstance(idx, (int, np.ndarray)) and isinstance(base.index, (int, np.ndarray)):
                    return AddrValue(base.buffer, _simplify(base.index + idx), base.rank)
            return AddrValue(ld.source, idx, why=self.why(*ld.indices) if idx is UNKNOWN else ())
        if short == "buffer_data" and len(c.args) == 1 and _key(c.args[0]) in self.buffers:
            return AddrValue(self.buffers[_key(c.args[0])], 0)  # ``buf.data``: its first element
        if short == "if_then_else" and len(c.args) == 3:
            return self._select(*c.args, mask)
        args = [self._eval(a, mask) if not _is_str(a) else str(a.value) for a in c.args]
        pred = _ptx_predicate(name, c.args, args)
        if pred is None:
            self._report("call", c, mask, args=args)
        elif pred[0] is UNKNOWN or isinstance(pred[0], (AddrValue, RampValue)):
            # a PTX instruction guarded by ``pred=``: which lanes run it is not known
            self._uncertain += 1
            self._guard_why.append(self.why(pred[1]))
            self._report("call", c, mask, args=args)
            self._guard_why.pop()
            self._uncertain -= 1
        else:
            self._report("call", c, mask & _as_mask(np.asarray(pred[0]) != 0, self._n), args=args)
        if short.startswith("cvta") and args:
            return args[0]
        if short == "reinterpret" and args and isinstance(args[-1], AddrValue):
            return args[-1]
        if short.startswith("mapa") and len(args) >= 2 and isinstance(args[1], AddrValue):
            # mapa(dst, addr, rank): the same element of CTA ``rank``'s shared memory. A one-CTA walk
            # keeps the element (the pipeline protocol is the same in every CTA of the cluster)
            rank = args[2] if len(args) > 2 and isinstance(args[2], int) else UNKNOWN
            mapped = AddrValue(args[1].buffer, args[1].index, rank)
            dst = c.args[0]
            if (
                isinstance(dst, tvm.ir.TensorLoad)
                and (self.scopes.get(_key(dst.source)) or dst.source.scope()) == "local"
            ):
                i = [self._eval(x, mask) for x in dst.indices]
                if len(i) == 1 and isinstance(i[0], int):
                    cells = self.locals.setdefault(_key(dst.source), {})
                    cells[i[0]] = mapped
                    cells.pop((_UNIFORM, i[0]), None)
            return mapped
        if short == "func_call" and len(args) >= 3 and args[0] == "tvm_builtin_pointer_offset":
            # TVM's device helper ``ptr + offset`` (elements of the pointer's type)
            ptr, off = args[1], args[2]
            if isinstance(ptr, AddrValue) and _is_int(ptr.index) and _is_int(off):
                return AddrValue(ptr.buffer, _simplify(np.add(ptr.index, off)))
            return UNKNOWN
        if short in ("thread_rank",):
            return self.linear
        if short in ("break_loop", "continue_loop"):
            self._leave(short == "break_loop", mask, c)
            return UNKNOWN
        if short in _INT_CALLS and len(args) == 2:
            if any(a is UNKNOWN for a in args):
                return UNKNOWN
            fn = _INT_CALLS[short]
            if any(isinstance(a, RampValue) for a in args):
                return _vector_op(fn, args[0], args[1], self._n)
            if not all(_is_int(a) for a in args):
                return UNKNOWN
            return _simplify(fn(args[0], args[1]))
        kind = _SHUFFLES.get(short)
        if kind is not None and len(args) >= 3:
            v, src = args[1], args[2]
            width = args[3] if len(args) > 3 and isinstance(args[3], int) else WARP
            if v is UNKNOWN or src is UNKNOWN or not isinstance(width, int) or width <= 0:
                return UNKNOWN
            return self._shuffle(kind, v, src, width)
        if "elect" in short:
            return self._elect(mask)
        return UNKNOWN

    def _select(self, cond, true_value, false_value, mask):
        """``Select`` / ``if_then_else``: CUDA evaluates only the chosen operand (``c ? a : b``), so
        a load in an operand is made by the threads that choose it (as the emulator runs it)."""
        c = self._eval(cond, mask)
        if c is UNKNOWN:
            self._uncertain += 1
            self._guard_why.append(self.why(cond))
            t = self._eval(true_value, mask)
            f = self._eval(false_value, mask)
            self._guard_why.pop()
            self._uncertain -= 1
            return UNKNOWN
        cm = _as_mask(np.asarray(c) != 0, self._n) if isinstance(c, np.ndarray) else np.full(self._n, bool(c))
        t = self._eval(true_value, mask & cm)
        f = self._eval(false_value, mask & ~cm)
        if any(x is UNKNOWN or isinstance(x, (RampValue, AddrValue)) for x in (t, f)):
            return UNKNOWN
        return _simplify(semantics.select(c, t, f))

    def _shuffle(self, kind, v, src, width):
        """The value each thread's shuffle reads: ``v`` of the lane PTX ``shfl.sync`` names."""
        if not (_is_int(v) or isinstance(v, (float, np.ndarray))) or not _is_int(src):
            return UNKNOWN
        v = np.broadcast_to(np.asarray(v), (self._n,))
        lane = self.linear % WARP
        tgt = semantics.shfl_source(kind, lane, np.broadcast_to(np.asarray(src), (self._n,)), width)
        # a partial last warp has no lanes past the CTA's last thread (what they would give is unread)
        return _simplify(v[np.minimum(self.linear - lane + tgt, self._n - 1)])

    def _elect(self, mask):
        out = np.zeros(self._n, dtype=bool)
        for w0 in range(0, self._n, WARP):
            active = np.nonzero(mask[w0 : w0 + WARP])[0]
            if active.size:
                out[w0 + active[0]] = True
        return out


class _LoopExits:
    """The threads that left a loop with ``break`` (for good) or ``continue`` (this iteration), and
    what a break/continue under a condition the walk could not evaluate depends on (``maybe``).
    ``level``: the walk's count of unknown guards when the loop began (a break under more is one
    whose threads are not known)."""

    def __init__(self, n, level):
        self.broken = np.zeros(n, dtype=bool)
        self.continued = np.zeros(n, dtype=bool)
        self.maybe: tuple = ()
        self.level = level

    def left(self):
        return self.broken | self.continued

    def next_iteration(self):
        """The threads that left for good (continue's end with the iteration)."""
        self.continued[:] = False
        return self.broken


def _has_loop_exit(body) -> bool:
    """Whether a loop body holds a break/continue of its own (not only inside an inner loop)."""
    import tvm.tirx as tx

    from txlab.ir import children

    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, (tx.Break, tx.Continue)):
            return True
        if type(n).__name__ == "Call" and getattr(n.op, "name", "") in ("tirx.break_loop", "tirx.continue_loop"):
            return True
        if isinstance(n, (tx.For, tx.While)):
            continue  # an inner loop's break leaves the inner loop
        stack.extend(children(n))
    return False


# ---- evaluation helpers ---------------------------------------------------------------------------
#: warp shuffles by short name (CUDA's and TIR's spellings; their arguments are mask, value, lane or
#: offset, width) -> the ``shfl.sync`` mode
_SHUFFLES = {
    "__shfl_sync": "idx",
    "__shfl_up_sync": "up",
    "__shfl_down_sync": "down",
    "__shfl_xor_sync": "xor",
    "tvm_warp_shuffle": "idx",
    "tvm_warp_shuffle_up": "up",
    "tvm_warp_shuffle_down": "down",
    "tvm_warp_shuffle_xor": "xor",
}


#: integer calls by short name -> what they compute (TIR's semantics)
_INT_CALLS = {
    "truncdiv": semantics.trunc_div,
    "truncmod": semantics.trunc_mod,
    "floordiv": semantics.floor_div,
    "floormod": semantics.floor_mod,
    "shift_left": np.left_shift,
    "shift_right": np.right_shift,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}


def _uniform_op(name, a, b, dtype: str = ""):
    """Operation ``name`` (a binary node's type name or an :data:`_INT_CALLS` name) on values of
    :meth:`SimtWalk._uniform`. Known operands give the known result. With a :class:`WarpUniform` the
    result is one only where it is exact for every value of the unknown part: a sum or difference (its
    modulus the gcd of theirs), a product by or a left shift by a constant, a floor division or modulo by a
    constant that divides the modulus; else UNKNOWN."""
    if a is UNKNOWN or b is UNKNOWN or isinstance(a, RampValue) or isinstance(b, RampValue):
        return UNKNOWN
    if not isinstance(a, WarpUniform) and not isinstance(b, WarpUniform):
        op = _INT_CALLS.get(name) or semantics.binary(name, dtype, True)
        if op is None or not (_is_int(a) and _is_int(b)):
            return UNKNOWN
        with np.errstate(all="ignore"):
            try:
                r = _simplify(op(a, b))
            except (ZeroDivisionError, TypeError, ValueError, OverflowError):
                return UNKNOWN
        return r if _is_int(r) else UNKNOWN
    ka, ma = (a.known, a.modulus) if isinstance(a, WarpUniform) else (a, 0)
    kb, mb = (b.known, b.modulus) if isinstance(b, WarpUniform) else (b, 0)
    if not (_is_int(ka) and _is_int(kb)):
        return UNKNOWN
    if name in ("Add", "Sub"):
        return _with_unknown((np.add if name == "Add" else np.subtract)(ka, kb), math.gcd(ma, mb))
    c = b if isinstance(a, WarpUniform) else a  # the other operand, when it is one constant
    if not isinstance(c, (int, np.integer)) or isinstance(c, (bool, np.bool_)):
        return UNKNOWN
    c = int(c)
    if name == "Mul":
        w = a if isinstance(a, WarpUniform) else b
        return _with_unknown(np.multiply(w.known, c), w.modulus * abs(c))
    if not isinstance(a, WarpUniform):  # a constant shifted or divided by an unknown
        return UNKNOWN
    if name == "shift_left" and 0 <= c < 63:
        return _with_unknown(np.left_shift(ka, c), ma << c)
    if name in ("FloorDiv", "floordiv") and c > 0 and ma % c == 0:
        return _with_unknown(semantics.floor_div(ka, c), ma // c)
    if name in ("FloorMod", "floormod") and c > 0 and ma % c == 0:
        return _simplify(semantics.floor_mod(ka, c))
    return UNKNOWN


def _with_unknown(known, modulus: int):
    """``known`` plus a warp-uniform unknown multiple of ``modulus`` (none when it is 0)."""
    known = _simplify(np.asarray(known, dtype=np.int64)) if isinstance(known, np.ndarray) else int(known)
    return WarpUniform(known, int(modulus)) if modulus else known


def _has_uniform(v) -> bool:
    """Whether an index holds a :class:`WarpUniform` (itself or as a ramp's base)."""
    return isinstance(v, WarpUniform) or (isinstance(v, RampValue) and isinstance(v.base, WarpUniform))


def _warp_uniform(v, mask) -> bool:
    """Whether ``v`` is the same for every active thread of each warp (and none of them holds the sentinel)."""
    if not isinstance(v, np.ndarray):
        return True
    for w0 in range(0, v.size, WARP):
        lanes = v[w0 : w0 + WARP][mask[w0 : w0 + WARP]]
        if lanes.size and ((lanes != lanes[0]).any() or lanes[0] == _SENTINEL):
            return False
    return True


def _masked_uniform(uniform, mask, old, kept):
    """What a local cell holds after the threads of ``mask`` store ``uniform`` (a :class:`WarpUniform`), as
    one: where each warp's threads all store it, or all keep a value known (``old``) or one too (``kept``);
    else None (a warp whose lanes hold different unknowns)."""
    if mask.all():
        return uniform
    for w0 in range(0, mask.size, WARP):
        m = mask[w0 : w0 + WARP]
        if m.any() and not m.all():
            return None
    if kept is not None:
        known = _simplify(np.where(mask, uniform.known, kept.known))
        return WarpUniform(known, math.gcd(uniform.modulus, kept.modulus))
    if not _is_int(old) or (isinstance(old, np.ndarray) and (old[~mask] == _SENTINEL).any()):
        return None
    return WarpUniform(_simplify(np.where(mask, uniform.known, old)), uniform.modulus)


def _operand_dtype(e) -> str:
    """The TVM dtype of a binary node's operands ("" when unknown: decided by the values)."""
    ty = getattr(getattr(e, "a", None), "ty", None)
    return str(getattr(ty, "dtype", "")) if ty is not None else ""


def _vector_lanes(x, lanes: int, n: int):
    """``x`` (a :class:`RampValue` or an integer, per thread or for all) as an ``(n, lanes)`` array of
    each thread's lane values; None when it is neither."""
    if isinstance(x, RampValue):
        if x.lanes != lanes or not _is_int(x.base) or not _is_int(x.stride):
            return None
        base = np.broadcast_to(np.asarray(x.base, dtype=np.int64), (n,))
        stride = np.broadcast_to(np.asarray(x.stride, dtype=np.int64), (n,))
        return base[:, None] + stride[:, None] * np.arange(lanes)
    if _is_int(x):
        return np.broadcast_to(np.asarray(x, dtype=np.int64).reshape(-1, 1), (n, lanes))
    return None


def _vector_op(op, a, b, n):
    """An integer operation on vector index values (``Ramp ^ Broadcast``: a swizzled vector access):
    a :class:`RampValue` again when every thread's lanes are evenly spaced (the same stride for all
    threads), else UNKNOWN."""
    lanes = (a if isinstance(a, RampValue) else b).lanes
    va, vb = _vector_lanes(a, lanes, n), _vector_lanes(b, lanes, n)
    if va is None or vb is None:
        return UNKNOWN
    with np.errstate(all="ignore"):
        try:
            r = np.asarray(op(va, vb))
        except (ZeroDivisionError, TypeError, ValueError, OverflowError):
            return UNKNOWN
    if r.dtype.kind not in "iu" or r.shape != (n, lanes):
        return UNKNOWN
    steps = np.diff(r, axis=1)
    if steps.size and not (steps == steps[0, 0]).all():
        return UNKNOWN
    return RampValue(_simplify(r[:, 0].copy()), int(steps[0, 0]) if steps.size else 1, lanes)


def _same(a, b) -> bool:
    """Whether two values the walk holds are the same for every thread."""
    if a is b:
        return True
    if isinstance(a, (AddrValue, RampValue)) or isinstance(b, (AddrValue, RampValue)):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a) if f.name != "why"
        )
    if a is UNKNOWN or b is UNKNOWN:
        return False
    if isinstance(a, (np.ndarray, np.generic, int, float)) and isinstance(b, (np.ndarray, np.generic, int, float)):
        with np.errstate(all="ignore"):
            return bool(np.all(np.asarray(a) == np.asarray(b)))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _is_int(v):
    if isinstance(v, (bool, np.bool_)):
        return True
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "iub"


def _is_str(a):
    return type(a).__name__ == "StringImm"


def _ptx_predicate(name, exprs, args):
    """``(value, expression)`` of the guard of a ``tirx.ptx.*`` call written with ``pred=`` (its last
    argument, the flags string, names "pred"; the guard is the last operand before the modifier
    strings), else None."""
    if not name.startswith("tirx.ptx.") or not args or not isinstance(args[-1], str):
        return None
    if "pred" not in args[-1].split(","):
        return None
    for e, a in zip(reversed(exprs), reversed(args)):
        if not isinstance(a, str):
            return a, e
    return None


def _simplify(v):
    """A numpy result that is the same for every thread becomes a Python scalar."""
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            v = v.item()
        elif v.size and np.all(v == v.flat[0]):
            v = v.flat[0].item()
        else:
            return v.astype(np.int64) if v.dtype.kind in "iu" else v
    if isinstance(v, np.generic):
        v = v.item()
    return v


def _as_mask(c, n):
    if isinstance(c, np.ndarray):
        return c.astype(bool)
    return np.full(n, bool(c))


def _const(x):
    v = getattr(x, "value", x)
    return int(v) if isinstance(v, (int, np.integer)) else None


def _key(var):
    """Identity of a TVM Var (the same object everywhere it is used)."""
    h = getattr(var, "__chandle__", None)
    return h() if h is not None else id(var)


def _lane_cells(indices, idx):
    """The local cell each lane of a vector store writes, in lane order (``[0, 0, 0, 0]`` for
    ``Broadcast(0, 4)``, ``[4, 5, 6, 7]`` for ``Ramp(4, 1, 4)``), when the index is one such vector the
    same for every thread; else None (a scalar store, or cells the walk does not know)."""
    if len(indices) != 1:
        return None
    i = idx[0]
    if isinstance(i, RampValue):
        if isinstance(i.base, int) and isinstance(i.stride, int):
            return [i.base + i.stride * j for j in range(i.lanes)]
        return None
    lanes = _const(getattr(indices[0], "lanes", None)) if type(indices[0]).__name__ == "Broadcast" else None
    if lanes and lanes > 1 and isinstance(i, int):
        return [i] * lanes
    return None


def _flat(idx, buf):
    """The flat element index of a (possibly multi-dimensional) access."""
    if len(idx) == 1:
        return idx[0]
    if any(i is UNKNOWN or isinstance(i, RampValue) for i in idx):
        return UNKNOWN
    shape = [_const(s) for s in buf.shape]
    if any(s is None for s in shape):
        return UNKNOWN
    flat = 0
    for i, s in zip(idx, shape):
        flat = np.add(np.multiply(flat, s), i)
    return _simplify(flat)


def cluster_size(func) -> int:
    """CTAs per cluster from the function's ``clusterCtaIdx`` thread extents (1: no cluster)."""
    import tvm.tirx as tx
    import tvm_ffi

    n = [1]

    def on_attr(a):
        if a.attr_key == "thread_extent" and str(a.node.thread_tag).startswith("clusterCtaIdx."):
            n[0] *= _const(a.value) or 1

    tvm_ffi.structural_walk(func.body, [(tx.AttrStmt, on_attr)], order="pre")
    return n[0]


def _block_dims(func):
    """(x, y, z) threads per block from the function's thread_extent attributes."""
    import tvm.tirx as tx
    import tvm_ffi

    dims = {"x": 1, "y": 1, "z": 1}

    def on_attr(n):
        if n.attr_key == "thread_extent":
            tag = str(n.node.thread_tag)
            if tag.startswith("threadIdx."):
                v = _const(n.value)
                if v is None:
                    raise ValueError(f"the kernel's {tag} extent is not a constant ({n.value})")
                dims[tag[-1]] = v

    tvm_ffi.structural_walk(func.body, [(tx.AttrStmt, on_attr)], order="pre")
    return dims["x"], dims["y"], dims["z"]


def user_line(span):
    """The user's line of a span (:func:`txlab.ir.spans.user_line`)."""
    return spans.user_line(span)


def lowered_of(kernel, arch: str = "sm_90a", what: str = "txlab.simt"):
    """The :class:`txlab.build.Lowered` of a kernel (prim_func, IRModule, Compiled or a Lowered
    itself): what TVM's tirx pipeline hands to codegen. A Compiled's own lowering is reused. ``what``: the
    function the user called, named in the error for anything else."""
    import tvm

    from txlab import build, ir

    if isinstance(kernel, build.Lowered):
        return kernel
    if hasattr(kernel, "ir_module") and not isinstance(kernel, (tvm.IRModule, tvm.tirx.PrimFunc)):
        lowered = getattr(kernel, "lowered", None)
        if lowered is not None:
            return lowered
        arch = getattr(kernel, "arch", None) or arch
    mod, entry = ir.as_module(kernel, what=what)
    return build.lower(mod, arch, entry)


def device_functions(kernel, arch: str = "sm_90a"):
    """``[(name, lowered device PrimFunc)]`` of a kernel (prim_func, IRModule, Compiled or
    Lowered): what TVM's tirx pipeline hands to CUDA codegen, i.e. what the GPU runs. A Compiled's
    own lowering is reused (nothing is lowered twice)."""
    import tvm

    lowered = lowered_of(kernel, arch)
    out = []
    for _, dmod in lowered.device_mods.items():
        for gv, f in dmod.functions.items():
            if isinstance(f, tvm.tirx.PrimFunc):
                out.append((gv.name_hint, f))
    return out


#: bytes of a PTX ld/st type
_PTX_TYPE_BYTES = {
    **{t: 1 for t in ("u8", "s8", "b8")},
    **{t: 2 for t in ("u16", "s16", "b16", "f16", "bf16")},
    **{t: 4 for t in ("u32", "s32", "b32", "f32", "f16x2", "bf16x2")},
    **{t: 8 for t in ("u64", "s64", "b64", "f64")},
    "b128": 16,
}


def ptx_ld_st(v: Visit):
    """``(direction, AddrValue, bytes per lane)`` of a ``T.ptx.ld`` / ``ld_vec`` / ``st`` / ``st_vec``
    visit (``direction`` "load" or "store"; the width from its vector and type strings, None when
    they say nothing the walk knows), else None."""
    short = str(getattr(v.node.op, "name", "")).rsplit(".", 1)[-1]
    if short not in ("ld", "ld_vec", "ldu", "ldu_vec", "st", "st_vec"):
        return None
    addr = next((a for a in v.args if isinstance(a, AddrValue)), None)
    if addr is None:
        return None
    strings = [a for a in v.args if isinstance(a, str)]
    vec = next((int(x[1:]) for x in strings if x in ("v2", "v4", "v8")), 1)
    size = next((_PTX_TYPE_BYTES[x] for x in reversed(strings) if x in _PTX_TYPE_BYTES), None)
    return ("store" if short.startswith("st") else "load"), addr, (vec * size if size else None)


def is_atomic(short: str) -> bool:
    """Whether the op of short name ``short`` is an atomic memory operation: TVM's ``atomic_add`` /
    ``atomic_cas`` and PTX ``red`` / ``atom`` in every form (``atom_cas``, ``atom_exch``, vector and
    ``_bitbucket`` variants, ``red.async``); not ``redux.sync`` (a warp reduction of registers)."""
    return short.startswith(("atomic", "atom", "red")) and not short.startswith("redux")


def atomic_access(v: Visit, space: str) -> Access | None:
    """The access of an atomic call visit (:func:`is_atomic`) to memory whose scope starts with
    ``space``, at the address it names, else None. A PTX ``red``/``atom`` moves the bytes its type
    and vector strings say (``.v4.f32``: 16 per lane); TVM's ``atomic_*`` the buffer's element."""
    if v.kind != "call":
        return None
    short = str(getattr(v.node.op, "name", "")).rsplit(".", 1)[-1]
    if not is_atomic(short):
        return None
    addr = next((a for a in v.args if isinstance(a, AddrValue)), None)
    if addr is None or not str(addr.buffer.scope()).startswith(space):
        return None
    width = None
    if short.startswith(("atom", "red")):
        strings = [a for a in v.args if isinstance(a, str)]
        vec = next((int(x[1:]) for x in strings if x in ("v2", "v4", "v8")), 1)
        size = next((_PTX_TYPE_BYTES[x] for x in reversed(strings) if x in _PTX_TYPE_BYTES), None)
        width = vec * size if size else None
    return Access("atomic", addr.buffer, addr.index, width=width)


def direct_access(v: Visit, space: str) -> Access | None:
    """The access of visit ``v`` when it is a buffer load or store, or a ``T.ptx.ld``/``st``, of
    memory whose scope starts with ``space`` ("shared", "global"); else None (a call the analysis
    classifies itself, or another memory). A ``ptx`` width the walk does not model is unknown."""
    if v.kind in ("load", "store"):
        if not v.scope.startswith(space):
            return None
        return Access(v.kind, v.node.buffer if v.kind == "store" else v.node.source, v.index)
    ldst = ptx_ld_st(v) if v.kind == "call" else None
    if ldst is None or not str(ldst[1].buffer.scope()).startswith(space):
        return None
    direction, addr, width = ldst
    if width is None or width > 16:
        short = str(getattr(v.node.op, "name", "")).rsplit(".", 1)[-1]
        return Access(direction, addr.buffer, UNKNOWN, f"{short}: an access width the walk does not model")
    return Access(direction, addr.buffer, addr.index, width=width)


#: TVM's ``cp.async`` (LDGSTS) ops, by short name
CP_ASYNC = frozenset(f"cp_async_{c}{s}" for c in ("ca", "cg") for s in ("", "_src_size", "_ignore_src"))
#: CUtensorMapSwizzle (the swizzle argument of cuTensorMapEncodeTiled)
TENSOR_MAP_SWIZZLE = {0: "no swizzle", 1: "32B swizzle", 2: "64B swizzle", 3: "128B swizzle"}


def tensor_map_swizzles(lowered) -> dict:
    """``{tensor map variable name: swizzle enum}`` of the tensor maps the host code encodes, from
    ``runtime.cuTensorMapEncodeTiled`` calls (written by the user) and ``tensormap_encode_tiled``
    (TVM's TMA lowering) in the host module before finalization."""
    from txlab import ir

    host = getattr(lowered, "host_ir", None) or getattr(lowered, "host_mod", None)
    out: dict = {}
    if host is None:
        return out
    for _, f in host.functions_items():
        for node in ir.walk(f.body):
            if type(node).__name__ != "Call":
                continue
            op = getattr(node.op, "name", "")
            args = list(node.args)
            try:
                if op == "tirx.tensormap_encode_tiled":
                    out[args[0].name] = int(node.attrs.swizzle)
                elif (
                    op == "tirx.tvm_call_packed"
                    and str(getattr(args[0], "value", "")) == "runtime.cuTensorMapEncodeTiled"
                ):
                    rank = int(args[3].value)
                    out[args[1].name] = int(args[1 + 4 + 4 * rank].value)
            except (AttributeError, IndexError, TypeError, ValueError):
                continue  # an encode whose swizzle is not a constant: left out (the caller says so)
    return out


def tensor_map_name(call) -> str | None:
    """The name of the tensor map a TMA call takes (``address_of(A_map)``), if it names one."""
    import tvm

    stack = list(call.args)
    while stack:
        a = stack.pop(0)
        if isinstance(a, tvm.ir.Call):
            stack.extend(a.args)
        elif type(a).__name__ == "Var" and "handle" in str(getattr(a, "dtype", "handle")):
            return a.name
    return None


# ---- memory-access sites (what the bank-conflict and coalescing analyses share) ---------------------
@dataclass
class Access:
    """What one visit does to memory, as an analysis classifies it: ``kind`` ("load", "store",
    "atomic" or the instruction's name), the buffer, the per-thread flat index (``UNKNOWN`` when it
    depends on memory) and, when the analysis already knows its addresses cannot be evaluated,
    ``reason``. ``width`` (bytes per lane) and ``lanes`` (how many lanes of each warp supply an
    address) are set by instructions that fix them (``ldmatrix``: 16-byte rows from 8/16/32 lanes);
    ``status``/``reason`` with status "async" mark an access made outside the load/store unit."""

    kind: str
    buffer: object
    index: object
    reason: str | None = None
    width: int | None = None
    lanes: int | None = None
    status: str | None = None
    info: dict = field(default_factory=dict)


class AccessSite:
    """One access in the code (a row of an analysis), fed every execution the walk makes of it.

    Subclasses add what they measure in :meth:`add`; the walker (:func:`visit_accesses`) owns which
    executions belong to which site and what an unknown index means."""

    #: the reason given when the index depends on a value read from memory
    unknown_index_reason = "the index depends on a value read from memory"
    #: an index's warp-uniform unknown part (:class:`WarpUniform`) moves all lanes of a warp by one number of
    #: bytes; where that is a multiple of this (the 128-byte line holds a warp's 32 four-byte banks too), what
    #: is counted per warp is the same for every value of it: the known part's figures are exact
    uniform_period = 128

    def __init__(self, v: Visit, access: Access):
        self.key = None  # what tells it from the kernel's other sites (set by visit_accesses)
        self.node = v.node
        self.kind = access.kind
        self.buf = access.buffer
        self.line = v.line
        self.stmt = v.stmt
        self.unknowns = 0
        self.reasons: dict = {}

    def unknown(self, reason: str) -> None:
        """One execution whose addresses cannot be evaluated, and why."""
        self.unknowns += 1
        self.reasons.setdefault(reason, None)

    def add(self, v: Visit, access: Access) -> None:  # pragma: no cover - every analysis overrides it
        raise NotImplementedError

    def set_dtype(self, dtype: str) -> None:
        """The element type the site moves: ``dtype`` and ``elem_bytes`` (bytes per element)."""
        from tvm import DataType

        dt = DataType(dtype)
        self.dtype = dtype
        self.elem_bytes = max(1, dt.bits * dt.lanes // 8)

    def lane_addresses(self, v: Visit, access: Access, strided: str | None = None):
        """(byte offset per lane, bytes per lane) of execution ``v`` of ``access``; None when it is
        recorded as unknown. A contiguous vector (a ramp of stride 1) is one access of all its
        lanes; a strided one counts each lane's first element (``strided``, when given, is the
        reason recorded for that)."""
        idx = access.index
        width = access.width or self.elem_bytes
        if isinstance(idx, RampValue):
            if not isinstance(idx.stride, int):
                self.unknown("a vector access with a data-dependent stride")
                return None
            if idx.stride == 1:
                width = self.elem_bytes * idx.lanes
            elif strided is not None:
                self.reasons.setdefault(strided, None)
            idx = idx.base
        if isinstance(idx, WarpUniform):
            step = idx.modulus * self.elem_bytes
            if step % self.uniform_period:
                self.unknown(
                    f"the index adds a value read from memory, the same for every lane of a warp, in steps of "
                    f"{step} B: where it puts the warp's addresses within a {self.uniform_period}-byte line (a "
                    f"multiple of {math.gcd(step, self.uniform_period)} B from its start) sets the figures, and "
                    "that is not known"
                )
                return None
            idx = idx.known  # every value of the unknown part moves the warp by whole lines: the same figures
        try:
            addr = np.broadcast_to(np.asarray(idx, dtype=np.int64), (v.mask.size,)) * self.elem_bytes
        except (TypeError, ValueError):
            self.unknown("the index is not an integer per thread")
            return None
        return addr, width


#: the most bytes one lane moves in one load/store instruction: LDS/STS.128 (shared, every
#: arch) and LDG/STG.128 (global up to sm_90; sm_100 adds 256-bit global accesses)
MAX_LANE_BYTES = 16


def split_wide(addr, width: int, limit: int = MAX_LANE_BYTES) -> list:
    """``[(byte address per lane, bytes)]`` of the instructions a lane's ``width``-byte access
    becomes: itself when it fits in ``limit`` bytes, else ``width / limit`` accesses ``limit`` bytes
    apart (a 32-byte vector of 8 floats is two 128-bit loads or stores, as the SASS shows)."""
    if width <= limit or width % limit:
        return [(addr, width)]
    return [(addr + k * limit, limit) for k in range(width // limit)]


def warp_lanes(addr: np.ndarray, mask: np.ndarray):
    """(addresses, active lanes) of each warp of a group that has an active lane, 32 of each (the
    lanes past a partial last warp inactive)."""
    for w0 in range(0, mask.size, WARP):
        act = mask[w0 : w0 + WARP]
        if not act.any():
            continue
        a = np.zeros(WARP, dtype=np.int64)
        m = np.zeros(WARP, dtype=bool)
        a[: act.size] = addr[w0 : w0 + WARP]
        m[: act.size] = act
        yield a, m


class AccessReport(list):
    """The rows of a per-access analysis (one per access site), with a text table: a title, a line
    per row (its line, access, buffer and width, then what :meth:`row_text` says) and the notes."""

    kernel: str = ""
    notes: list
    #: the column the buffer names are padded to
    buffer_width = 10

    def title(self) -> str:  # pragma: no cover - every report overrides it
        raise NotImplementedError

    def row_text(self, r) -> str:  # pragma: no cover - every report overrides it
        raise NotImplementedError

    def summary(self) -> str:
        out = [self.title()]
        for r in self:
            line = r.lineno if r.lineno is not None else "?"
            out.append(
                f"  line {line:>4}  {r.access:<6} {r.buffer:<{self.buffer_width}} {r.bytes_per_lane:>2} B/lane  "
                + self.row_text(r)
            )
        out += [f"  note: {n}" for n in self.notes]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.summary()


def visit_accesses(func, classify, site_class, *, cta=(0, 0, 0), limits=Limits, finish=None):
    """Walk ``func`` and group its memory accesses into sites: ``classify(visit)`` gives an
    :class:`Access` (or None for a visit the analysis ignores); each site is a ``site_class``
    (an :class:`AccessSite`). Returns ``(sites in first-visit order, walk)``.

    A site is one access in the source: copies of a statement made by unrolling share the user's
    line, and several accesses in one statement are told apart by their order in it (line, kind,
    buffer, ordinal); an access without a line is keyed by its IR node. A load that repeats one
    the same statement already made (the same buffer and index expressions, read by the same
    threads: ``S[i] * S[i]``) is not a second access: the compiler loads the value once. An
    execution whose index is unknown, or a guard on whose path depends on memory, or a walk cut
    short, is recorded on the site as a reason: never silently as a known answer. ``finish(sites)``, when
    given, runs on the sites of the finished walk (an analysis joining what several sites did together)."""
    import tvm_ffi

    sites: dict = {}
    ordinal = {"exec": None, "n": 0, "loads": []}

    def on_visit(v):
        access = classify(v)
        if access is None:
            return
        if ordinal["exec"] != v.exec_id:
            ordinal["exec"], ordinal["n"], ordinal["loads"] = v.exec_id, 0, []
        if v.kind == "load":
            if any(
                np.array_equal(m, v.mask) and tvm_ffi.structural_equal(node, v.node) for node, m in ordinal["loads"]
            ):
                return
            ordinal["loads"].append((v.node, v.mask))
        ordinal["n"] += 1
        buf = access.buffer
        key = (
            (v.line, access.kind, getattr(buf, "name", str(buf)), ordinal["n"])
            if v.line is not None
            else (_key(v.node), access.kind)
        )
        site = sites.get(key)
        if site is None:
            site = sites[key] = site_class(v, access)
            site.key = key
        if access.reason is not None and access.status is None:
            site.unknown(access.reason)
        elif access.index is UNKNOWN and access.status is None:
            why = _index_why(v, access)
            if why == (MEMORY,):
                site.unknown(site.unknown_index_reason)
            elif not why:  # nothing it depends on is unknown: a form of expression the walk does not follow
                site.unknown("the index is an expression the walk does not evaluate")
            else:
                site.unknown(f"the index depends on {_phrase(why)}{_bind_hint(why)}")
        else:
            site.add(v, access)
        if v.uncertain:
            site.reasons.setdefault(
                f"a guard on its path depends on {_phrase(v.guard_why)} (both branches were followed)", None
            )

    walk = execute(func, on_visit=on_visit, cta=cta, limits=limits)
    if walk.truncated or walk.loops_cut:
        for site in sites.values():
            site.reasons.setdefault("some loop iterations are beyond the walk's limit (see notes)", None)
    if finish is not None:
        finish(list(sites.values()))
    return list(sites.values()), walk


def checked_params(mod, params) -> dict:
    """``params`` checked against the module's scalar (integer) arguments: ``{name: int}``."""
    from txlab.errors import InputError

    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InputError(
            f"params must be a dict of scalar kernel arguments, e.g. {{'n': 4096}}, not {type(params).__name__}",
            param="params",
        )
    scalars = {}
    for _, func in mod.functions.items():
        if type(func).__name__ != "PrimFunc":
            continue
        for p in func.params:
            if _is_scalar_int(p):
                scalars[p.name] = str(p.ty)
    unknown = sorted(set(params) - set(scalars))
    if unknown:
        have = ", ".join(sorted(scalars)) or "none"
        raise InputError(
            f"params: {', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not an integer "
            f"argument of the kernel (its integer arguments: {have})",
            param="params",
        )
    out = {}
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, int) and not hasattr(v, "__index__"):
            raise InputError(f"params[{k!r}] must be an int, got {v!r}", param="params")
        out[k] = int(v)
    return out


def _is_scalar_int(p) -> bool:
    """Whether function parameter ``p`` is a scalar integer (not a handle)."""
    ty = getattr(p, "ty", None)
    return type(ty).__name__ == "PrimType" and str(ty).startswith(("int", "uint"))


def bind_launch(lowered, params: dict):
    """``lowered`` with each kernel's grid evaluated for the scalar arguments ``params`` binds (``(m + 7) // 8``
    with ``{"m": 4096}``: 512), so that the CTAs a walk compares with (:func:`other_cta`, :func:`last_cta`) and
    :func:`checked_cta` follow from them; ``lowered`` itself when nothing is bound."""
    from txlab.launch import eval_dims

    launch = getattr(lowered, "launch", None)
    if not params or not launch or not dataclasses.is_dataclass(lowered):
        return lowered
    bound = {f: {**info, "grid": eval_dims(info.get("grid"), params)} if info else info for f, info in launch.items()}
    return dataclasses.replace(lowered, launch=bound)


def checked_cta(cta, lowered, what: str) -> tuple:
    """``cta`` as a 3-tuple of ints, checked against the grid of every kernel of ``lowered`` whose
    grid is a constant: a :class:`txlab.errors.InputError` (naming ``what``, the function it was
    passed to) when it is not one to three integers (missing ones are 0), is negative or is outside
    a grid: never an analysis of a CTA the launch does not have."""
    from txlab.errors import InputError

    ok = isinstance(cta, (tuple, list)) and 1 <= len(cta) <= 3
    ok = ok and all(isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in cta)
    if not ok:
        raise InputError(
            f"{what}: cta={cta!r} is not a CTA index: pass a tuple of ints, e.g. cta=(1, 0, 0)", param="cta"
        )
    cta = tuple(int(c) for c in cta) + (0,) * (3 - len(cta))
    if min(cta) < 0:
        raise InputError(f"{what}: cta={cta} has a negative index: CTA indices start at (0, 0, 0)", param="cta")
    for fname, info in (getattr(lowered, "launch", None) or {}).items():
        grid = tuple((info or {}).get("grid") or ())
        if len(grid) != 3 or not all(isinstance(g, int) for g in grid):
            continue
        if not all(0 <= c < g for c, g in zip(cta, grid)):
            raise InputError(
                f"{what}: cta={cta} is outside the grid {grid} of {fname}: each index must be less than the "
                f"grid's size along it (the last CTA is {tuple(g - 1 for g in grid)})",
                param="cta",
            )
    return cta


def other_cta(lowered, fname, cta=(0, 0, 0)):
    """A second CTA of the launch of device function ``fname`` to walk: index 1 (past ``cta``) along
    the first grid dimension of more than one CTA and 3 along the others (1 where they hold fewer
    than 4): each index odd where ``cta``'s is even (``bx % 2`` patterns), and off the diagonal
    (``bx == by`` patterns); None when the grid is one CTA (or its size is not a constant)."""
    grid = _const_grid(lowered, fname)
    if grid is None:
        return None
    other, first = [], True
    for c, g in zip(cta, grid):
        step = 1 if first or c + 3 >= g else 3
        other.append(c + step if c + step < g else c)
        first = first and other[-1] == c
    other = tuple(other)
    return other if other != tuple(cta) else None


def last_cta(lowered, fname):
    """The launch's last CTA (the grid's size less one along each dimension): where a tail is handled
    (``if bx == gridDim.x - 1``, a partial last block). None when the grid's size is not a constant."""
    grid = _const_grid(lowered, fname)
    return None if grid is None else tuple(g - 1 for g in grid)


def _const_grid(lowered, fname):
    """The (x, y, z) grid of device function ``fname``'s launch, or None when its size is not a constant."""
    info = (getattr(lowered, "launch", None) or {}).get(fname) or {}
    grid = tuple(info.get("grid") or ())
    return grid if len(grid) == 3 and all(isinstance(g, int) for g in grid) else None


def compare_other_cta(
    func,
    classify,
    site_class,
    sites,
    walk,
    *,
    lowered,
    fname,
    figures,
    differs,
    cta=(0, 0, 0),
    limits=Limits,
    started=None,
    fresh_classifier=None,
    finish=None,
):
    """Walk a second CTA of the launch (:func:`other_cta`) and the last one (:func:`last_cta`), and mark the
    ``sites`` of the first walk
    (``walk``, of CTA ``cta``) whose figures differ there: ``figures(site)`` gives a site's figures
    (a tuple of numbers, or None when they are not known), ``differs(mine, theirs, cta, other)`` the
    reason recorded on a site whose figures differ (the site keeps CTA ``cta``'s figures). An access
    whose addresses depend on the CTA index (alignment, guards, ``bx % 2``) is then never reported
    as if CTA ``cta`` spoke for every CTA. Nothing is compared when the grid is one CTA or either walk
    was cut short; the second walk has what is left of ``limits.max_seconds`` since ``started`` (a
    ``time.monotonic()``). ``classify`` must be a fresh classifier for the second walk when it keeps
    state, and ``fresh_classifier()`` gives one for each walk after it. A site whose instruction count differs
    (a loop whose trip count depends on the CTA) is marked too. ``finish``: as :func:`visit_accesses`'s, for
    each further walk. Returns the second CTA, or None."""
    import time

    first = other_cta(lowered, fname, cta)
    if first is None or walk.truncated or walk.loops_cut:
        return None
    others = [first]
    last = last_cta(lowered, fname)
    if last is not None and last not in (tuple(cta), first):
        others.append(last)  # the tail CTA: a partial last block, code under bx == gridDim.x - 1
    for other in others:
        left = limits.max_seconds
        if left is not None:
            left -= time.monotonic() - (started if started is not None else time.monotonic())
            if left <= 0:
                break

        class Rest(limits):  # each further walk has what is left of the time budget
            max_seconds = left

        fresh = classify if other is first or fresh_classifier is None else fresh_classifier()
        again, second = visit_accesses(func, fresh, site_class, cta=other, limits=Rest, finish=finish)
        if second.truncated or second.loops_cut:  # a walk cut short is not compared
            continue
        _compare(sites, again, figures, differs, tuple(cta), other)
    return first


def _compare(sites, again, figures, differs, cta, other) -> None:
    """Mark the ``sites`` of CTA ``cta``'s walk whose figures or instruction counts differ in ``again`` (CTA
    ``other``'s walk), and add the accesses only ``other`` reaches as rows with its figures."""
    theirs = {s.key: s for s in again}
    for site in sites:
        alt_site = theirs.get(site.key)
        if alt_site is None:
            continue
        mine, alt = figures(site), figures(alt_site)
        if mine is not None and alt is not None and not np.allclose(mine, alt):
            site.reasons.setdefault(differs(mine, alt, cta, other), None)
        n, m = getattr(site, "instructions", None), getattr(alt_site, "instructions", None)
        if n and m and n != m:  # a loop whose trip count depends on the CTA: the grid totals are not n x CTAs
            site.reasons.setdefault(
                f"CTA {other} makes it {m} times where CTA {cta} makes it {n} (a trip count that depends on the "
                f"CTA index): grid totals scale CTA {cta}'s",
                None,
            )
    # accesses only this CTA reaches (code under a condition on the CTA index): rows with its figures
    known = {s.key for s in sites}
    for site in again:
        if site.key not in known:
            site.reasons.setdefault(
                f"reached by CTA {other} and not by CTA {cta} (a condition on the CTA index): CTA {other}'s figures",
                None,
            )
            sites.append(site)
            known.add(site.key)


def _index_why(v: Visit, access: Access) -> tuple:
    """What the UNKNOWN index of ``access`` (made by visit ``v``) depends on."""
    if v.kind in ("load", "store"):
        return v.why
    for a in v.args:
        if isinstance(a, AddrValue) and a.buffer is access.buffer and a.index is UNKNOWN:
            return a.why
    return ()


def _bind_hint(why) -> str:
    """How to give the walk the scalar kernel arguments the phrases ``why`` name (``params=``), or ""."""
    names = dict.fromkeys(re.findall(rf"{_ARGUMENT}(\w+)", " ".join(why)))
    if not names:
        return ""
    bind = ", ".join(f"{n!r}: ..." for n in names)
    return f" (pass params={{{bind}}} to bind {'it' if len(names) == 1 else 'them'} to a value)"


def _phrase(why) -> str:
    """Phrases joined for a reason (:data:`MEMORY` when there are none); a phrase another one
    already says ("the kernel argument n" beside "the loop variable j, whose trip count depends on
    the kernel argument n") is left out."""
    why = [w for w in why if not any(w != o and w in o for o in why)]
    return " and ".join(why) if why else MEMORY


def execute(func, *, on_visit=None, block=None, cta=(0, 0, 0), limits=Limits, params=None) -> SimtWalk:
    """Walk ``func`` (a lowered device PrimFunc) for every thread of CTA ``cta``; ``on_visit`` gets
    each :class:`Visit`. ``params``: scalar kernel arguments bound to values (default ``limits.params``).
    Returns the walk (its ``notes`` say what was approximated)."""
    return SimtWalk(func, block=block, cta=cta, on_visit=on_visit, limits=limits, params=params).run()
