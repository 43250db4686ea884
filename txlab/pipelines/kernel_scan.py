"""What a kernel's TIRx says around its mbarrier operations, read before lowering (for
:func:`txlab.pipelines.from_kernel`): the loops around each operation (their trip counts, a bound only the launch
knows), the values a wait's parity takes iteration by iteration, and the guards around arrives that read memory.

Nothing here guesses a value: what depends on a kernel argument or on memory is named (``sources``), and the
caller turns it into an assumption of the verdict or reads it with a value the user passes (``params``)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: how many iterations of a wait's loops its parity is evaluated for
PARITY_ITERATIONS = 64
#: the arrive-like operations pipeline_code counts per phase (a guard around them changes the counts)
COUNTED = ("arrive", "arrive_expect_tx", "expect_tx", "commit", "copy")


def key(obj):
    """Identity of a TVM object (the same object everywhere it is used)."""
    h = getattr(obj, "__chandle__", None)
    return h() if h is not None else id(obj)


def const_int(e):
    v = getattr(e, "value", None)
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def load_source(load):
    """The buffer a load reads (``.source`` in TVM 0.27's TensorLoad, ``.buffer`` before)."""
    src = getattr(load, "source", None)
    return src if src is not None else getattr(load, "buffer", None)


def barrier_buffer(ptr_expr):
    """The (buffer, index) behind ``cvta(address_of(buf[i]))`` / ``address_of(buf[i])``."""
    from tvm.ir import TensorLoad

    e = ptr_expr
    for _ in range(4):
        if isinstance(e, TensorLoad):
            return load_source(e), (e.indices[0] if len(e.indices) else None)
        if hasattr(e, "args") and len(e.args):
            e = e.args[0]
        else:
            return None, None
    return None, None


def bkey(buf):
    """A barrier buffer's identity: unnamed pool buffers (``Pipeline``'s barriers) share the empty
    name, so the name alone would merge them; their pool offsets differ."""
    return (buf.name, str(buf.data), str(buf.elem_offset), str(buf.dtype), str(list(buf.shape)))


def user_line(stmt):
    """The user's source line of a statement (None where its span names none)."""
    from txlab import ir

    loc = ir.user_frame(getattr(stmt, "span", None))
    return loc[1] if loc else None


def _scope(buf) -> str:
    try:
        return str(buf.scope())
    except Exception:  # noqa: BLE001 - a parameter's buffer: global memory
        return "global"


def op_kind(call) -> str | None:
    """The mbarrier operation a call is (``init``, ``wait``, ``arrive``, ``arrive_expect_tx``, ``expect_tx``,
    ``commit``), None for anything else."""
    from tvm.ir import StringImm

    name = str(getattr(getattr(call, "op", None), "name", "") or "")
    if not name or not len(getattr(call, "args", ())):
        return None
    if name.endswith("mbarrier_init"):
        return "init"
    if name.endswith("mbarrier_wait"):
        return "wait"
    if name.endswith("mbarrier_arrive_expect_tx"):
        return "arrive_expect_tx"
    if name.endswith("mbarrier_expect_tx"):
        return "expect_tx"
    if "tcgen05" in name or any("tcgen05.commit" in str(a) for a in call.args if isinstance(a, StringImm)):
        return "commit" if "commit" in name or any("commit" in str(a) for a in call.args) else None
    if name.endswith(("mbarrier_arrive", "mbarrier_arrive_nocount", "mbarrier_arrive_remote")):
        return "arrive"
    return None


@dataclass
class Loop:
    """A loop around a barrier operation (``var`` None for a ``while``)."""

    node: object
    var: object
    min: object
    extent: object
    step: int
    line: int | None

    @property
    def trips(self) -> int | None:
        lo, ext = const_int(self.min), const_int(self.extent)
        if self.var is None or lo is None or ext is None:
            return None
        return max(0, -(-ext // self.step))


@dataclass
class Guard:
    """An ``if`` a barrier operation sits under (``then``: in its then branch)."""

    node: object
    condition: object
    then: bool
    line: int | None
    depth: int  # loops around the if


@dataclass
class BarrierOp:
    kind: str
    barrier: tuple  # bkey of the barrier buffer
    line: int | None
    loops: tuple
    guards: tuple
    order: int
    parity: object = None  # a wait's parity expression

    @property
    def trips(self) -> int | None:
        """How many times the loops around it run it (None: a bound not known here)."""
        n = 1
        for lp in self.loops:
            t = lp.trips
            if t is None:
                return None
            n *= t
        return n


@dataclass
class Scan:
    ops: list = field(default_factory=list)
    defs: dict = field(default_factory=dict)  # var / local buffer key -> [(value, loops, order, indices)]
    def_lines: dict = field(default_factory=dict)  # order of a def -> the user's line of it
    params: dict = field(default_factory=dict)  # scalar kernel argument key -> name
    ifs: list = field(default_factory=list)  # (IfThenElse, line, loops, ops in then, ops in else)
    inits: list = field(default_factory=list)  # the mbarrier.init ops (kind "init"), with their loops
    # barriers whose address reaches a call the reading does not know (inline asm, a helper): what it does to them
    # is not known, so no arrive found on them proves none exists
    unknown_uses: set = field(default_factory=set)

    def on(self, barriers) -> list:
        return [o for o in self.ops if o.barrier in barriers]


def scan(func) -> Scan:
    """Every mbarrier operation of ``func`` (a TIRx PrimFunc as written) with the loops and guards around it, the
    values its locals and bound variables are given, and its scalar kernel arguments."""
    import tvm.tirx as tx
    import tvm_ffi

    out = Scan()
    for p in func.params:
        ty = getattr(p, "ty", None)
        if type(ty).__name__ == "PrimType":
            out.params[key(p)] = p.name
    loops: list = []
    guards: list = []
    counter = [0]

    def tick():
        counter[0] += 1
        return counter[0]

    def add_op(kind, barrier_expr, stmt, parity=None):
        buf, _ = barrier_buffer(barrier_expr)
        if buf is None:
            return
        out.ops.append(BarrierOp(kind, bkey(buf), user_line(stmt), tuple(loops), tuple(guards), tick(), parity=parity))

    def on_for(s, v):
        step = const_int(getattr(s, "step", None)) if getattr(s, "step", None) is not None else 1
        loops.append(Loop(s, s.loop_var, s.min, s.extent, step if step and step > 0 else 1, user_line(s)))
        v.visit(s.body)
        loops.pop()

    def on_while(s, v):
        loops.append(Loop(s, None, None, None, 1, user_line(s)))
        v.visit(s.body)
        loops.pop()

    def on_if(s, v):
        n0 = len(out.ops)
        guards.append(Guard(s, s.condition, True, user_line(s), len(loops)))
        v.visit(s.then_case)
        guards.pop()
        n1 = len(out.ops)
        if s.else_case is not None:
            guards.append(Guard(s, s.condition, False, user_line(s), len(loops)))
            v.visit(s.else_case)
            guards.pop()
        out.ifs.append((s, user_line(s), tuple(loops), out.ops[n0:n1], out.ops[n1:]))

    def on_eval(s, v):
        call = s.value
        kind = op_kind(call)
        if kind == "init":
            buf, _ = barrier_buffer(call.args[0])
            if buf is not None:
                out.inits.append(BarrierOp(kind, bkey(buf), user_line(s), tuple(loops), tuple(guards), tick()))
            return
        if kind is None:
            if hasattr(call, "op") and not str(getattr(call.op, "name", "")).endswith(_HARMLESS):
                out.unknown_uses.update(_shared_u64_addressed(call))
            return
        add_op(kind, call.args[0], s, parity=call.args[1] if kind == "wait" and len(call.args) > 1 else None)

    def on_tile(s, v):
        name = str(getattr(s.op, "name", ""))
        cfg = dict(s.config.items()) if getattr(s, "config", None) is not None else {}
        if name.endswith("copy_async") and "mbar" in cfg:
            add_op("copy", cfg["mbar"], s)

    def on_store(s, v):
        buf = getattr(s, "buffer", None)
        if buf is None:
            buf = getattr(s, "source", None)
        if buf is not None and _scope(buf) == "local":
            order = tick()
            out.defs.setdefault(key(buf), []).append((s.value, tuple(loops), order, tuple(s.indices)))
            out.def_lines[order] = user_line(s)

    def on_bind(s, v):
        out.defs.setdefault(key(s.var), []).append((s.value, tuple(loops), tick(), ()))
        body = getattr(s, "body", None)
        if isinstance(body, tx.Stmt):
            v.visit(body)

    tvm_ffi.structural_visit(
        func.body,
        [
            (tx.For, on_for),
            (tx.While, on_while),
            (tx.IfThenElse, on_if),
            (tx.Evaluate, on_eval),
            (tx.TilePrimitiveCall, on_tile),
            (tx.BufferStore, on_store),
            ((tx.Bind, tx.LetStmt), on_bind),
        ],
    )
    return out


#: calls that take a barrier's address and do nothing to its arrivals (fences, a wait spelled another way is a wait)
_HARMLESS = ("fence_proxy", "fence", "cta_sync", "warp_sync", "printf")


def _shared_u64_addressed(call) -> set:
    """The keys of 64-bit shared buffers (mbarriers) whose element address an unrecognised call takes."""
    import tvm_ffi
    from tvm.ir import Call, TensorLoad

    found: set = set()

    def visit(n):
        name = str(getattr(getattr(n, "op", None), "name", "") or "")
        if name.endswith(("address_of", "tvm_access_ptr")) and len(n.args):
            a = n.args[0]
            src = load_source(a) if isinstance(a, TensorLoad) else None
            if src is not None and str(src.dtype) == "uint64" and _scope(src).startswith("shared"):
                found.add(bkey(src))

    try:
        tvm_ffi.structural_walk(call, [(Call, visit)], order="pre")
    except Exception:  # noqa: BLE001 - an expression the walker cannot take: nothing known about its operands
        return found
    return found


# --- what a value depends on ------------------------------------------------------------------------------------
def sources(e, sc: Scan, _seen=None) -> tuple:
    """What expression ``e`` depends on that only the launch or memory knows: ``("the kernel argument nk",
    "memory (F)")``; empty when it is computed from constants, loop and thread indices alone."""
    import tvm.tirx as tx
    import tvm_ffi
    from tvm.ir import TensorLoad
    from tvm_ffi.structural import WalkResult

    seen = set() if _seen is None else _seen
    found: dict = {}

    def of_defs(k):
        if k in seen:
            return
        seen.add(k)
        for value, *_ in sc.defs.get(k, ()):
            found.update(dict.fromkeys(sources(value, sc, seen)))

    def visit(n):
        if isinstance(n, TensorLoad):
            src = load_source(n)
            if src is not None and _scope(src) != "local":
                found[f"memory ({src.name})"] = None
            elif src is not None:
                of_defs(key(src))
            for i in n.indices:
                found.update(dict.fromkeys(sources(i, sc, seen)))
            return WalkResult.SKIP
        if type(n).__name__ == "Var":
            k = key(n)
            if k in sc.params:
                found[f"the kernel argument {sc.params[k]}"] = None
            elif k in sc.defs:
                of_defs(k)
        return None

    tvm_ffi.structural_walk(e, [((TensorLoad, tx.Var), visit)], order="pre")
    return tuple(found)


def param_names(e, sc: Scan) -> list:
    """The kernel arguments ``e`` depends on (by name)."""
    return [s.split("the kernel argument ", 1)[1] for s in sources(e, sc) if s.startswith("the kernel argument ")]


# --- a PipelineState re-created inside the loops around a wait ------------------------------------------------
def restarts(wait: "BarrierOp", state, sc: Scan):
    """Where the phase local ``state`` a wait reads is set to a constant inside a loop that also runs the wait, before
    or after the loops inside it that run the wait (a ``PipelineState(...)`` written in a persistent tile loop, an
    ``init`` at the end of a tile): ``(constant, line of that store, the loop, waits per pass of the loop or None
    where a trip count is not known here)``; None where every constant store sits outside the wait's loops, or the
    loop runs at most once."""
    for value, loops, order, _idx in sc.defs.get(key(state)) or ():
        c = const_int(value)
        if c is None or not loops or not _prefix(loops, wait.loops) or len(loops) >= len(wait.loops):
            continue
        if loops[-1].trips is not None and loops[-1].trips <= 1:
            continue
        per = 1
        for lp in wait.loops[len(loops) :]:
            t = lp.trips
            if t is None:
                per = None
                break
            per *= t
        return c, sc.def_lines.get(order), loops[-1], per
    return None


# --- a wait's parity, iteration by iteration ------------------------------------------------------------------
def _prefix(a: tuple, b: tuple) -> bool:
    return len(a) <= len(b) and all(x is y for x, y in zip(a, b))


def _definition(k, op: BarrierOp, sc: Scan):
    """The one value a bound variable / local scalar holds at ``op``: defined once, before it, in loops that are
    around ``op`` too (so each of its iterations sets it first); None otherwise."""
    ds = sc.defs.get(k) or []
    if len(ds) != 1:
        return None
    value, loops, order, idx = ds[0]
    if order >= op.order or not _prefix(loops, op.loops) or any(const_int(i) is None for i in idx):
        return None
    return value


def int_eval(e, env: dict, op: BarrierOp, sc: Scan, depth: int = 0):
    """The integer value of ``e`` with the loop variables of ``env`` (key -> value), the locals and bound variables
    defined once before ``op`` substituted (TIR's integer semantics, txlab.ir.semantics); None for anything else
    (a load from memory, a call, a float, a variable not known here)."""
    from tvm.ir import TensorLoad

    from txlab.ir import semantics

    if depth > 32:
        return None
    t = type(e).__name__
    if t == "IntImm":
        return int(e.value)
    if t == "Var":
        k = key(e)
        if k in env:
            return env[k]
        d = _definition(k, op, sc)
        return None if d is None else int_eval(d, env, op, sc, depth + 1)
    if isinstance(e, TensorLoad):
        src = load_source(e)
        if src is None or _scope(src) != "local":
            return None
        d = _definition(key(src), op, sc)
        return None if d is None else int_eval(d, env, op, sc, depth + 1)
    if t == "Cast":
        return int_eval(e.value, env, op, sc, depth + 1)
    fn = semantics.BINARY.get(t)
    if fn is None or not hasattr(e, "a"):
        return None
    a, b = int_eval(e.a, env, op, sc, depth + 1), int_eval(e.b, env, op, sc, depth + 1)
    if a is None or b is None or (t in ("Div", "Mod", "FloorDiv", "FloorMod") and b == 0):
        return None
    return int(fn(a, b))


def iterations(op: BarrierOp, sc: Scan, limit: int = PARITY_ITERATIONS):
    """The loop variables' values at ``op``'s first ``limit`` executions, in the order the loops run them
    (outermost slowest): ``[{var key: value}]``. The outermost loop may have a bound not known here (its first
    iterations are what counts); any other loop needs bounds computable from the loops around it. None otherwise."""
    loops = op.loops
    out: list = []
    budget = [20 * limit + 1000]

    def rec(i, env) -> bool:
        if len(out) >= limit:
            return True
        if i == len(loops):
            out.append(dict(env))
            return True
        lp = loops[i]
        if lp.var is None:  # a while loop: the outermost one is followed for its first iterations
            if i:
                return False
            while len(out) < limit and budget[0] > 0:
                budget[0] -= 1
                before = len(out)
                if not rec(i + 1, env) or len(out) == before:
                    return len(out) > 0
            return True
        lo = int_eval(lp.min, env, op, sc)
        ext = int_eval(lp.extent, env, op, sc)
        if lo is None or (ext is None and i):
            return False
        j = 0
        k = key(lp.var)
        while (ext is None or j * lp.step < ext) and len(out) < limit:
            budget[0] -= 1
            if budget[0] < 0:
                return False
            env[k] = lo + j * lp.step
            before = len(out)
            if not rec(i + 1, env):
                return False
            if ext is None and len(out) == before:  # an unbounded loop whose body never reaches the op
                return False
            j += 1
        env.pop(k, None)
        return True

    return out if rec(0, {}) else None


def parity_by_iteration(op: BarrierOp, sc: Scan, limit: int = PARITY_ITERATIONS):
    """The parity a wait passes at each of its first executions (a tuple of 0/1), or None where it is not an
    integer function of the loop indices the reader can follow."""
    its = iterations(op, sc, limit)
    if not its:
        return None
    vals = []
    for env in its:
        v = int_eval(op.parity, env, op, sc)
        if v is None:
            return None
        vals.append(v & 1)
    return tuple(vals)


def like_pipeline_state(vals, depth) -> bool:
    """Parities by iteration that are a PipelineState's over a ``depth``-deep ring: the start value for ``depth``
    iterations, then flipped for ``depth``, and so on, over every iteration read."""
    if not vals or not depth:
        return False
    return all(v == vals[0] ^ ((i // depth) & 1) for i, v in enumerate(vals))


# --- guards that read memory, and the kernel rewritten as if they hold ------------------------------------------
def conjuncts(cond) -> list:
    if type(cond).__name__ == "And":
        return conjuncts(cond.a) + conjuncts(cond.b)
    return [cond]


@dataclass
class MemoryGuard:
    """An ``if`` around counted barrier operations whose condition reads what only memory or the launch knows:
    ``unknown`` are those conjuncts (assumed to hold), ``known`` the rest (kept)."""

    node: object
    line: int | None
    unknown: list
    known: list
    why: tuple
    ops: list  # the counted operations in its then branch


def memory_guards(sc: Scan) -> list:
    """The ifs whose then branch holds counted barrier operations (what pipeline_code counts per phase), whose
    else branch holds none, and whose condition has a conjunct that reads memory or a kernel argument."""
    out = []
    for node, line, _loops, then_ops, else_ops in sc.ifs:
        counted = [o for o in then_ops if o.kind in COUNTED]
        if not counted or any(o.kind in COUNTED for o in else_ops):
            continue
        unknown, known, why = [], [], {}
        for c in conjuncts(node.condition):
            s = sources(c, sc)
            if s:
                unknown.append(c)
                why.update(dict.fromkeys(s))
            else:
                known.append(c)
        if unknown:
            out.append(MemoryGuard(node, line, unknown, known, tuple(why), counted))
    return out


def assume_guards_hold(func, guards: list):
    """``func`` with the conjuncts of ``guards`` that read memory dropped (as if they hold): an ``if`` keeps its
    known conjuncts, one with none left is its then branch."""
    import tvm.tirx as tx
    import tvm_ffi

    plan = {key(g.node): g for g in guards}

    def on_if(s, m):
        g = plan.get(key(s))
        new = m.default_mutate(s)
        if g is None:
            return new
        if not g.known:
            return new.then_case
        cond = g.known[0]
        for c in g.known[1:]:
            cond = tx.And(cond, c)
        return tx.IfThenElse(cond, new.then_case, new.else_case, span=s.span)

    return func.with_body(tvm_ffi.structural_mutate(func.body, [(tx.IfThenElse, on_if)]))


def text(e) -> str:
    """An expression as TVMScript writes it (one line)."""
    return " ".join(str(e).split())
