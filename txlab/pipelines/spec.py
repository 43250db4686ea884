"""Reading a real kernel: the full/empty barrier pairs a kernel's IR declares (``PipelineSpec``),
with arrivals and tx bytes derived from the code by :mod:`txlab.pipeline_code`."""

from __future__ import annotations

import re

from dataclasses import asdict, dataclass, field

from txlab.pipelines.protocol import Problem, ScriptError
from txlab.pipelines.simulator import simulate
from txlab.pipelines.trace import PipelineTrace


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
    # phases whose arrivals differ from the usual per-phase count ("full"/"empty" -> [{slot, phase, count, usual,
    # line}]): an arrive skipped or repeated in some iterations, reported as its own problem by simulate()
    uneven: dict = field(default_factory=dict)

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
        expect = (
            self.expect_tx_bytes
            if self.expect_tx_bytes is not None
            else (self.tx_delivered if self.tx_delivered is not None else self.tx_bytes)
        )
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
        return dict(
            init_full=self.init_full,
            init_empty=self.init_empty,
            empty_phase_offset=self.empty_phase_offset,
            tx_bytes=self.tx_bytes,
            producer_phase=self.producer_phase,
            consumer_phase=self.consumer_phase,
            full=self.full,
            empty=self.empty,
            consumers=self.init_empty,
        )

    def simulate(self, iterations: int, **overrides) -> PipelineTrace:
        """Simulate this pipeline with one consumer role per empty arrival (``init_empty``) unless
        overridden; any :func:`simulate` keyword can be overridden. Where the kernel never waits on a
        barrier, the trace's ``assumed`` says so (its summary too)."""
        trace = self._simulate_spec(iterations, **overrides)
        trace.assumed = tuple(n for n in self.notes if n.startswith(("no wait on the", _PARITY_ASSUMED)))
        if self.uneven and not {"roles", "consumers", "producers"} & set(overrides):
            trace.problems = (*trace.problems, *self._uneven_problems())
        return trace

    def _uneven_problems(self) -> list:
        """A problem per barrier whose phases get different arrival counts (the simulated protocol gives every
        phase the usual count, so the odd phases are reported here, at the arrive whose count differs)."""
        out = []
        for barrier, odd in self.uneven.items():
            init = self.init_full if barrier == "full" else self.init_empty
            bad = [o for o in odd if o["count"] != init]
            if not bad:
                continue
            o = bad[0]
            under = o["count"] < init
            more = f" (and {len(bad) - 1} more phase(s))" if len(bad) > 1 else ""
            msg = (
                f"{barrier}[{o['slot']}] phase {o['phase']} receives {o['count']} arrival(s) where the other phases "
                f"receive {o['usual']} and the barrier was initialised for {init}{more}: the arrive at line "
                f"{o['line']} runs for {'fewer' if under else 'more'} threads in some iterations. "
                + (
                    "That phase never completes and its waiters hang."
                    if under
                    else "That phase completes early and the parity runs ahead of the waiters."
                )
                + " Make every iteration arrive the same number of times (move the guard off the arrive)."
            )
            out.append(
                Problem(
                    "under_arrival" if under else "over_arrival",
                    msg,
                    barrier=barrier,
                    stage=o["slot"],
                    iteration=o["phase"],
                    lineno=o["line"],
                    lines=tuple(sorted({x["line"] for x in bad if x["line"] is not None})),
                )
            )
        return out

    def _simulate_spec(self, iterations: int, **overrides) -> PipelineTrace:
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
        """A problem of the derived protocol, at the line of the arrive/copy that causes it (a deadlock or skipped
        phase whose likely cause is a role's start phase: at that role's ``PipelineState(...)``)."""
        import dataclasses

        if p.lineno is None and p.kind in ("deadlock", "phase_skip"):
            for role in ("producer", "consumer"):
                line = self.lines.get(f"{role}_phase")
                if line is not None and re.search(rf"\b{role}\w* starts its PipelineState", p.message):
                    return dataclasses.replace(p, lineno=line, lines=(line,))

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
                msg = (
                    f"{p.barrier}[stage] receives {total} arrivals per phase but was initialised for "
                    f"{init}: {threads}. Each phase completes after the first {init}; the surplus "
                    f"completes phases nobody waited for, so the parity runs ahead and the waiters "
                    f"hang or pass early. Guard the arrive so {init} thread(s) execute it per phase "
                    f"(e.g. `if tid % 32 == 0` for one per warp, or T.ptx.elect_sync()), or init "
                    f"the barrier with {total}."
                )
            else:
                kind = "under_arrival"
                msg = (
                    f"{p.barrier}[stage] receives only {total} arrival(s) per phase but was initialised "
                    f"for {init}: {threads}. The phase never completes and its waiters hang. Let "
                    f"{init} thread(s) arrive per phase, or init the barrier with {total}."
                )
            return dataclasses.replace(p, kind=kind, message=msg, lineno=line, lines=tuple(ln for ln, _, _ in sites))
        if p.kind == "tx_mismatch":
            ex, cp = self.lines.get("expect_tx") or [], self.lines.get("copy") or []
            boxes = "; ".join(
                f"line {c['line']}: box {'x'.join(str(e) for e in c['box'])} {c['dtype']} = "
                f"{c['bytes']} B" + (f" x {c['threads']} threads" if c["threads"] != 1 else "")
                for c in self.copies
            )
            msg = (
                f"{p.barrier}[stage] expects {self.expect_tx_bytes} bytes per phase (expect_tx at line "
                f"{', '.join(map(str, ex)) or '?'}) but the TMA copies deliver {self.tx_delivered} "
                f"({boxes}). " + p.message.split(" but the copies deliver")[-1].split(". ", 1)[-1]
            )
            return dataclasses.replace(
                p, message=msg, lineno=ex[0] if ex else (cp[0] if cp else None), lines=tuple(ex) + tuple(cp)
            )
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


def _user_line(stmt):
    from txlab import ir

    loc = ir.user_frame(stmt.span)
    return loc


def _declared_name(loc, which: str) -> str:
    """``ab.full`` for the barriers of ``ab = Pipeline(...)`` (read from the user's line), else
    ``which``."""
    import linecache
    import re

    if loc is None:
        return which
    text = linecache.getline(loc[0], loc[1]).strip()
    m = re.match(r"(\w+)\s*=\s*Pipeline\(", text)
    return f"{m.group(1)}.{which}" if m else which


def _bkey(buf):
    """A barrier buffer's identity: unnamed pool buffers (``Pipeline``'s barriers) share the empty
    name, so the name alone would merge them; their pool offsets differ."""
    return (buf.name, str(buf.data), str(buf.elem_offset), str(buf.dtype), str(list(buf.shape)))


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
    from tvm.ir import StringImm

    out = []
    tcgen05: list = []  # a kernel with tcgen05 ops lowers (for the arrival counts) for sm_100a only
    for kname, func in _as_prim_funcs(kernel):
        inits: list = []  # (buffer, count) in order
        kinds: dict = {}  # buffer name -> kind
        tx_bytes: dict = {}
        wait_phase: dict = {}  # buffer name -> (phase buffer name, xor constant)
        const_init: list = []  # (local scalar buffer, first constant stored to it, the user's line of that store)
        init_lines: dict = {}  # barrier buffer -> the user's source line of its init

        def visit(s):
            if isinstance(s, tx.BufferStore):
                buf = getattr(s, "buffer", None)
                if buf is None:
                    buf = getattr(s, "source", None)
                c = _int(s.value)
                if (
                    c is not None
                    and buf is not None
                    and buf.scope() == "local"
                    and not any(b.same_as(buf) for b, _, _ in const_init)
                ):
                    const_init.append((buf, c, _user_line(s)))
                return
            if not isinstance(s, tx.Evaluate) or not hasattr(s.value, "op"):
                return
            call = s.value
            op = getattr(call.op, "name", "")
            if not op or not len(call.args):
                return
            if "tcgen05" in op:
                tcgen05.append(op)
            if op.endswith("mbarrier_init"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None and not any(b.same_as(buf) for b, _ in inits):
                    inits.append((buf, _int(call.args[1])))
                    init_lines[_bkey(buf)] = _user_line(s)
            elif op.endswith("mbarrier_arrive_expect_tx"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds[_bkey(buf)] = "tma"
                    n = _int(call.args[1])
                    if n is not None:
                        tx_bytes[_bkey(buf)] = n
            elif "tcgen05" in op or any("tcgen05.commit" in str(a) for a in call.args if isinstance(a, StringImm)):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds[_bkey(buf)] = "tcgen05"
            elif op.endswith("mbarrier_arrive") or op.endswith("mbarrier_arrive_nocount"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None:
                    kinds.setdefault(_bkey(buf), "mbar")
            elif op.endswith("mbarrier_wait"):
                buf, _ = _barrier_buffer(call.args[0])
                if buf is not None and _bkey(buf) not in wait_phase:
                    loc = _user_line(s)
                    wait_phase[_bkey(buf)] = (*_wait_parity(call.args[1]), loc[1] if loc else None)

        # TVM's structural visitor, pre-order (the walker txlab.pools uses too)
        tvm_ffi.structural_walk(func.body, [((tx.Evaluate, tx.BufferStore), visit)], order="pre")

        def start_value(pbuf):
            return next((c for b, c, _ in const_init if pbuf is not None and b.same_as(pbuf)), None)

        def start_line(pbuf):
            """The user's line of the store that starts a PipelineState's phase (its ``PipelineState(...)``)."""
            loc = next((ln for b, _, ln in const_init if pbuf is not None and b.same_as(pbuf)), None)
            return loc[1] if loc else None

        i = 0
        while i + 1 < len(inits):
            (fb, fc), (eb, ec) = inits[i], inits[i + 1]
            depth = _int(fb.shape[0]) if len(fb.shape) == 1 else None
            if depth is None or len(eb.shape) != 1 or _int(eb.shape[0]) != depth:
                i += 1
                continue
            notes = []
            spec = PipelineSpec(
                stages=depth,
                full=kinds.get(_bkey(fb), "mbar"),
                empty=kinds.get(_bkey(eb), "mbar"),
                init_full=fc or 1,
                init_empty=ec or 1,
                tx_bytes=tx_bytes.get(_bkey(fb)),
                full_buffer=fb.name or _declared_name(init_lines.get(_bkey(fb)), "full"),
                empty_buffer=eb.name or _declared_name(init_lines.get(_bkey(eb)), "empty"),
                kernel=kname,
            )
            # where the slots sit in the lowered code's barrier space (pool element offsets): how
            # txlab.pipeline_code tells apart unnamed barrier arrays of one pool
            spec._slots = {
                "full": (fb.name, _int(fb.elem_offset), depth),
                "empty": (eb.name, _int(eb.elem_offset), depth),
            }
            if _bkey(eb) in wait_phase:
                pbuf, xor, by_k, wline = wait_phase[_bkey(eb)]
                spec.empty_phase_offset = xor & 1
                if start_value(pbuf) is not None:
                    spec.producer_phase = start_value(pbuf) & 1
                    spec.lines["producer_phase"] = start_line(pbuf)
                elif _flips_per_pass(by_k, depth):
                    spec.producer_phase, spec.empty_phase_offset = by_k[0], 0
                    spec.lines["producer_phase"] = wline
                    notes.append(f"the producer's wait parity is computed from the loop index: {by_k[0]} at its start")
                else:
                    notes.append(f"{_PARITY_ASSUMED}producer start phase not a constant in the IR; assumed 1")
            else:
                notes.append("no wait on the empty barriers found")
            if _bkey(fb) in wait_phase:
                pbuf, xor, by_k, wline = wait_phase[_bkey(fb)]
                if xor:
                    notes.append(f"waits on the full barrier XOR the phase with {xor}")
                if start_value(pbuf) is not None:
                    spec.consumer_phase = (start_value(pbuf) ^ xor) & 1
                    # a consumer's XOR is written at its wait: the line that sets the parity it waits for
                    spec.lines["consumer_phase"] = wline if xor else start_line(pbuf)
                elif _flips_per_pass(by_k, depth):
                    spec.consumer_phase = by_k[0]
                    spec.lines["consumer_phase"] = wline
                    notes.append(f"the consumer's wait parity is computed from the loop index: {by_k[0]} at its start")
                else:
                    notes.append(f"{_PARITY_ASSUMED}consumer start phase not a constant in the IR; assumed 0")
            else:
                notes.append("no wait on the full barriers found")
            notes.append(f"consumers = init_empty = {spec.init_empty} (one arrival per consumer role assumed)")
            spec.notes = notes
            out.append(spec)
            i += 2
    if out:
        from txlab.pipeline_code import derive

        derive(kernel, out, getattr(kernel, "arch", None) or ("sm_100a" if tcgen05 else "sm_90a"))
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
            "instead."
        )
    if not -len(specs) <= which < len(specs):
        raise IndexError(f"the kernel declares {len(specs)} pipeline(s); which={which} is out of range")
    return specs[which]


#: how the note of a wait parity the reader could not follow starts (the trace's summary names it as assumed)
_PARITY_ASSUMED = "wait parity not read: "


def _xor_leaves(e, out):
    if type(e).__name__ == "BitwiseXor":
        _xor_leaves(e.a, out)
        _xor_leaves(e.b, out)
    else:
        out.append(e)
    return out


def _wait_parity(ph):
    """``(phase buffer, XOR constant, parities by iteration)`` of a wait's parity expression. ``ps_phase ^ k``
    (nested XORs too: ``(cs.phase ^ 1) ^ offset``) gives the buffer and ``k``; an expression of the loop index
    (``((k // S) & 1) ^ 1``, raw barriers) gives no buffer and its parities at iterations 0..8
    (:func:`_parity_by_iteration`), None where it is not such an expression either."""
    from tvm.ir import TensorLoad

    leaves = _xor_leaves(ph, [])
    consts = [_int(x) for x in leaves]
    loads = [x for x, c in zip(leaves, consts) if c is None]
    xor = 0
    for c in consts:
        if c is not None:
            xor ^= c
    if len(loads) == 1 and isinstance(loads[0], TensorLoad):
        return _load_source(loads[0]), xor, None
    return None, xor, _parity_by_iteration(ph)


def _parity_by_iteration(ph):
    """The parity expression's values with its variables at 0, 1, .., 8 (a tuple of 0/1), or None when it is not
    an integer expression of its variables alone (a load, a call)."""
    vals = [_int_eval(ph, k) for k in range(9)]
    return None if None in vals else tuple(v & 1 for v in vals)


def _int_eval(e, k: int):
    """The integer value of ``e`` with every variable set to ``k`` (TIR's integer semantics, txlab.ir.semantics),
    or None for anything else in it (a load, a call, a float)."""
    from txlab.ir import semantics

    t = type(e).__name__
    if t == "IntImm":
        return int(e.value)
    if t == "Var":
        return k
    if t == "Cast":
        return _int_eval(e.value, k)
    fn = semantics.BINARY.get(t)
    if fn is None or not hasattr(e, "a"):
        return None
    a, b = _int_eval(e.a, k), _int_eval(e.b, k)
    if a is None or b is None or (t in ("Div", "Mod", "FloorDiv", "FloorMod") and b == 0):
        return None
    return int(fn(a, b))


def _flips_per_pass(vals, depth) -> bool:
    """Parities by iteration (:func:`_parity_by_iteration`) that behave as a PipelineState's over a ``depth``-deep
    ring: the same for the first ``depth`` iterations, flipped at iteration ``depth`` (rings up to 8 deep); False
    for None."""
    if vals is None or not depth or depth >= len(vals):
        return False
    return all(v == vals[0] for v in vals[:depth]) and vals[depth] == vals[0] ^ 1
