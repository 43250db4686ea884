"""Reading a real kernel: the full/empty barrier pairs a kernel's IR declares (``PipelineSpec``),
with arrivals and tx bytes derived from the code by :mod:`txlab.pipeline_code`."""

from __future__ import annotations

import re

from dataclasses import asdict, dataclass, field

from txlab.pipelines.kernel_scan import COUNTED, assume_guards_hold, like_pipeline_state, load_source, memory_guards
from txlab.pipelines.kernel_scan import barrier_buffer as _barrier_buffer
from txlab.pipelines.kernel_scan import bkey as _bkey
from txlab.pipelines.kernel_scan import const_int as _int
from txlab.pipelines.kernel_scan import key as obj_key
from txlab.pipelines.kernel_scan import param_names, parity_by_iteration, sources
from txlab.pipelines.kernel_scan import scan as scan_kernel
from txlab.pipelines.kernel_scan import text as expr_text
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
    # how many times each side runs its operations on the barriers, where the loops say ("full_wait",
    # "full_arrive", "empty_wait", "empty_arrive" -> (trip count, line)): sides that run different counts hang
    trips: dict = field(default_factory=dict)

    @property
    def assumptions(self) -> tuple:
        """The notes that say what was assumed where the kernel could not be read (a wait parity, an arrival count,
        a byte count, a loop's trip count, a guard that reads memory): what a verdict of :meth:`simulate` holds
        under (``trace.assumed``)."""
        return tuple(n for n in self.notes if _is_assumption(n))

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
        trace.assumed = self.assumptions
        if not {"roles", "consumers", "producers"} & set(overrides):
            trip = self._trip_problems()
            if trip:
                # the code's arrivals per phase were averaged over sides that ran different counts: what the
                # simulation of those averages finds (but a byte count) is an artefact of that, not the kernel's
                skewed = any("differ between slots" in n or "not a whole number" in n for n in self.notes)
                kept = [p for p in trace.problems if p.kind == "tx_mismatch"] if skewed else list(trace.problems)
                trace.problems = (*trip, *kept)
            if self.uneven:
                trace.problems = (*trace.problems, *self._uneven_problems())
        return trace

    def _trip_problems(self) -> list:
        """A problem where the two sides of the pipeline run their loops a different number of times: the side
        that waits more often than the other fills (or frees) slots hangs at its first wait past them."""
        t = self.trips
        if not all(k in t for k in ("full_wait", "full_arrive", "empty_wait", "empty_arrive")):
            return []
        S = self.stages
        (wf, lwf), (af, laf) = t["full_wait"], t["full_arrive"]
        (we, lwe), (ae, lae) = t["empty_wait"], t["empty_arrive"]
        out = []
        if wf > af:
            out.append(
                Problem(
                    "trip_count",
                    f"the consumers wait on {self.full_buffer or 'full'} {wf} times (line {lwf}) but the producer "
                    f"fills it only {af} times (line {laf}): their wait in iteration {af} ({self.full_buffer or 'full'}"
                    f"[{af % S}]) never passes and the kernel hangs. Make both loops run the same number of iterations.",
                    barrier="full",
                    stage=af % S,
                    iteration=af,
                    lineno=lwf,
                    lines=tuple(x for x in (lwf, laf) if x is not None),
                )
            )
        if we > ae + S:
            out.append(
                Problem(
                    "trip_count",
                    f"the producer waits on {self.empty_buffer or 'empty'} {we} times (line {lwe}) but the consumers "
                    f"free its slots only {ae} times (line {lae}), and a {S}-slot ring lets the producer run {S} "
                    f"ahead: its wait in iteration {ae + S} ({self.empty_buffer or 'empty'}[{(ae + S) % S}]) never "
                    "passes and the kernel hangs. Make both loops run the same number of iterations.",
                    barrier="empty",
                    stage=(ae + S) % S,
                    iteration=ae + S,
                    lineno=lwe,
                    lines=tuple(x for x in (lwe, lae) if x is not None),
                )
            )
        return out

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


def _user_loc(stmt):
    from txlab import ir

    return ir.user_frame(stmt.span)


def find_pipelines(kernel, *, params: dict | None = None) -> list[PipelineSpec]:
    """Every full/empty barrier pair in a kernel's IR, in declaration order.

    What is read: ``mbarrier.init`` (slot count = buffer extent, arrival count), arrives
    (``arrive.expect_tx`` → TMA with its byte count, ``tcgen05.commit`` → tcgen05, plain
    ``arrive`` → mbar), and parity waits: ``wait(buf[ps_stage], ps_phase ^ k)`` gives the phase
    offset ``k`` and, through the constant ``ps_phase`` is initialised with, the producer (waits on
    empty) and consumer (waits on full) start phases; a parity computed from the loop indices (nested
    loops too) is evaluated iteration by iteration. Barriers are paired as ``Pipeline`` declares
    them: a full barrier initialised right before an empty barrier of the same depth.

    ``params``: values of scalar kernel arguments (``{"nk": 8}``) to read the code with, where a loop
    bound or a byte count is an argument known only at launch. Without one, a loop bounded by an
    argument is read with the trip count the other loops on its barriers have, an assumption the
    verdict names (:attr:`PipelineSpec.assumptions`)."""
    import tvm
    import tvm.tirx as tx
    import tvm_ffi
    from tvm.ir import StringImm

    from txlab import ir

    mod, _ = ir.as_module(kernel, what="txlab.pipelines.from_kernel()")
    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]
    funcs, launch_notes, changed = _read_with(funcs, params)
    derived_funcs = dict(funcs)  # what the arrival counts are read from (guards that read memory assumed to hold)

    out = []
    tcgen05: list = []  # a kernel with tcgen05 ops lowers (for the arrival counts) for sm_100a only
    for kname, func in funcs:
        sc = scan_kernel(func)
        inits: list = []  # (buffer, count) in order
        kinds: dict = {}  # buffer name -> kind
        tx_bytes: dict = {}
        wait_phase: dict = {}  # buffer name -> (phase buffer, xor constant, wait line, parity expression)
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
                    const_init.append((buf, c, _user_loc(s)))
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
                    init_lines[_bkey(buf)] = _user_loc(s)
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
                    loc = _user_loc(s)
                    wait_phase[_bkey(buf)] = (*_wait_parity(call.args[1]), loc[1] if loc else None, call.args[1])

        # TVM's structural visitor, pre-order (the walker txlab.pools uses too)
        tvm_ffi.structural_walk(func.body, [((tx.Evaluate, tx.BufferStore), visit)], order="pre")

        def start_value(pbuf):
            return next((c for b, c, _ in const_init if pbuf is not None and b.same_as(pbuf)), None)

        def start_line(pbuf):
            """The user's line of the store that starts a PipelineState's phase (its ``PipelineState(...)``)."""
            loc = next((ln for b, _, ln in const_init if pbuf is not None and b.same_as(pbuf)), None)
            return loc[1] if loc else None

        def by_iteration(bk):
            """The parities the first wait on barrier ``bk`` passes, iteration by iteration (None: not read)."""
            op = next((o for o in sc.ops if o.kind == "wait" and o.barrier == bk), None)
            return None if op is None else parity_by_iteration(op, sc)

        guards = memory_guards(sc)
        if guards:
            derived_funcs[kname] = assume_guards_hold(func, guards)
            changed = True
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
                pbuf, xor, wline, ph = wait_phase[_bkey(eb)]
                by_k = by_iteration(_bkey(eb)) if start_value(pbuf) is None else None
                if start_value(pbuf) is not None:
                    spec.empty_phase_offset = xor & 1
                    spec.producer_phase = start_value(pbuf) & 1
                    spec.lines["producer_phase"] = start_line(pbuf)
                elif like_pipeline_state(by_k, depth):
                    spec.producer_phase, spec.empty_phase_offset = by_k[0], 0
                    spec.lines["producer_phase"] = wline
                    notes.append(f"the producer's wait parity is computed from the loop index: {by_k[0]} at its start")
                else:
                    # the parity is not known: the simulated producer waits as a correct one does (parity 1 on the
                    # first pass over fresh barriers), with no XOR on top (the XOR read is part of what is unknown)
                    spec.producer_phase, spec.empty_phase_offset = 1, 0
                    notes.append(_PARITY_ASSUMED + _unread_parity("producer", wline, ph, by_k, depth, 1))
            else:
                notes.append("no wait on the empty barriers found")
            if _bkey(fb) in wait_phase:
                pbuf, xor, wline, ph = wait_phase[_bkey(fb)]
                by_k = by_iteration(_bkey(fb)) if start_value(pbuf) is None else None
                if start_value(pbuf) is not None:
                    if xor:
                        notes.append(f"waits on the full barrier XOR the phase with {xor}")
                    spec.consumer_phase = (start_value(pbuf) ^ xor) & 1
                    # a consumer's XOR is written at its wait: the line that sets the parity it waits for
                    spec.lines["consumer_phase"] = wline if xor else start_line(pbuf)
                elif like_pipeline_state(by_k, depth):
                    spec.consumer_phase = by_k[0]
                    spec.lines["consumer_phase"] = wline
                    notes.append(f"the consumer's wait parity is computed from the loop index: {by_k[0]} at its start")
                else:
                    spec.consumer_phase = 0
                    notes.append(_PARITY_ASSUMED + _unread_parity("consumer", wline, ph, by_k, depth, 0))
            else:
                notes.append("no wait on the full barriers found")
            mine = {_bkey(fb), _bkey(eb)}
            notes += [n for n, keys in launch_notes.get(kname, ()) if keys & mine]
            notes += _unknown_loop_notes(sc, mine)
            for g in guards:
                if any(o.barrier in mine for o in g.ops):
                    notes.append(_guard_note(g))
            spec.trips = _trips(sc, _bkey(fb), _bkey(eb))
            notes.append(f"consumers = init_empty = {spec.init_empty} (one arrival per consumer role assumed)")
            spec.notes = notes
            out.append(spec)
            i += 2
    if out:
        from txlab.pipeline_code import derive

        arch = getattr(kernel, "arch", None) or ("sm_100a" if tcgen05 else "sm_90a")
        target = kernel
        if changed:
            target = tvm.IRModule(
                {gv: derived_funcs.get(gv.name_hint, f) for gv, f in mod.functions.items()}, attrs=mod.attrs
            )
        derive(target, out, arch)
    return out


def from_kernel(kernel, which: int = 0, *, params: dict | None = None) -> PipelineSpec:
    """The pipeline a kernel declares (``which``-th if several), read from its IR: stages, barrier
    kinds, init counts, expect-tx bytes, phase offset and start phases. Accepts a prim_func, an
    IRModule, or anything with ``.ir_module`` (``txlab.Compiled``). ``params``: values of scalar
    kernel arguments the code depends on (``{"nk": 8}``: a loop bound, a byte count), read as if
    launched with them. ``.simulate(iterations)`` on the result runs it; pass overrides to try fixes.
    What could not be read is an assumption its verdict names (``trace.assumed``)."""
    specs = find_pipelines(kernel, params=params)
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


def _is_assumption(note: str) -> bool:
    """Whether a note of a spec says what was assumed where the kernel could not be read (the declaration-only
    "one arrival per consumer role" note is how a spec without the code's counts simulates, not a reading)."""
    if note.startswith(("no wait on the", _PARITY_ASSUMED, "code walk:")):
        return True
    if note.startswith("consumers = init_empty"):
        return False
    return bool(re.search(r"\bassum(e|ed|es|ing)\b|\brounded\b|differ between slots", note))


#: the trip count a loop bounded by a kernel argument is read with when no other loop on its barriers says one
_DEFAULT_TRIPS = 16


def _unread_parity(role: str, line, ph, by_k, depth: int, assumed: int) -> str:
    where = f"at line {line} " if line is not None else ""
    what = f"the {role}'s wait parity {where}(`{expr_text(ph)}`)"
    if by_k:
        shown = ", ".join(map(str, by_k[: 2 * depth + 2]))
        why = (
            f"{what} takes the parities {shown}, ... over its iterations, which no PipelineState over the "
            f"{depth}-slot ring takes"
        )
    else:
        why = f"{what} is neither a PipelineState's phase nor a function of the loop indices the reader can follow"
    return (
        f"{why}; assumed it is {assumed} on the first pass over the ring and flips each pass "
        f"({'a fresh barrier lets the producer fill every slot' if role == 'producer' else 'consumers wait for the first fill'})"
    )


def _guard_note(g) -> str:
    cond = " and ".join(f"`{expr_text(c)}`" for c in g.unknown)
    what = ", ".join(g.why)
    ops = ", ".join(sorted({f"{o.kind.replace('_', ' ')} at line {o.line}" for o in g.ops}))
    one = "," not in ops
    return (
        f"line {g.line}: assumed {cond} holds in every iteration (it reads {what}, which the analysis cannot see): "
        f"the {ops} {'is' if one else 'are'} counted as if {'it' if one else 'they'} ran "
        + (f"whenever `{' and '.join(expr_text(c) for c in g.known)}` holds" if g.known else "every time")
        + f"; a phase that misses {'it' if one else 'them'} never completes and its waiters hang"
    )


def _unknown_loop_notes(sc, barriers) -> list:
    """An assumption per loop around this pipeline's operations whose trip count the reading does not know."""
    seen: dict = {}
    for o in sc.ops:
        if o.barrier not in barriers:
            continue
        for lp in o.loops:
            if lp.var is None or obj_key(lp.node) in seen:
                continue
            src = sources(lp.min, sc) + sources(lp.extent, sc)
            if src:
                seen[obj_key(lp.node)] = (lp, tuple(dict.fromkeys(src)))
    notes = []
    for lp, src in seen.values():
        lines = sorted({o.line for o in sc.ops if o.barrier in barriers and lp in o.loops and o.line is not None})
        names = param_names(lp.extent, sc) + param_names(lp.min, sc)
        notes.append(
            f"line {lp.line}: assumed the trip count `{expr_text(lp.extent)}` of this loop, which depends on "
            f"{', '.join(src)} (known only at launch), matches the other roles': the barrier operations in it "
            f"(line {', '.join(map(str, lines))}) were read for one iteration of unknown index, so the counts "
            "simulated are the declaration's"
            + (
                f"; pass from_kernel(..., params={{{', '.join(f'{n!r}: ...' for n in dict.fromkeys(names))}}}) "
                "to read it with a value"
                if names
                else ""
            )
        )
    return notes


def _read_with(funcs, params):
    """The kernel's functions with scalar arguments specialised: those ``params`` gives, and a loop bound that is an
    argument by the trip count the other loops on its barriers have (an assumption, noted). Returns (functions,
    {function: [(note, barrier keys it concerns)]}, whether anything changed)."""
    from txlab.errors import InputError

    params = dict(params or {})
    scalars = {
        name: {p.name: p for p in f.params if type(getattr(p, "ty", None)).__name__ == "PrimType"} for name, f in funcs
    }
    every = sorted({n for d in scalars.values() for n in d})
    bad = [k for k in params if k not in every]
    if bad:
        raise InputError(
            f"params names {', '.join(map(repr, bad))}, not a scalar argument of the kernel "
            f"({', '.join(every) or 'it has none'})"
        )
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(f"params[{k!r}] must be an int (the value the kernel is launched with), got {v!r}")
    out, notes, changed = [], {}, False
    for name, f in funcs:
        mine = {scalars[name][k]: _imm(scalars[name][k], v) for k, v in params.items() if k in scalars[name]}
        if mine:
            f = f.specialize(mine)
            changed = True
        guessed, fnotes = _assumed_trips(f)
        if guessed:
            try:
                f = f.specialize(guessed)
                changed = True
            except Exception:  # noqa: BLE001 - not specialisable: the loops stay unknown (noted per spec)
                fnotes = []
        out.append((name, f))
        notes[name] = fnotes
    return out, notes, changed


def _imm(var, value: int):
    import tvm

    return tvm.tirx.IntImm(str(getattr(var, "dtype", "int32")), int(value))


def _assumed_trips(func):
    """``({argument var: value}, [(note, barrier keys)])`` for loops around barrier operations whose trip count is
    exactly a scalar argument: read with the trip count the barriers' other operations run (the same for all of
    them), or with ``_DEFAULT_TRIPS`` where every loop on them is bounded by arguments."""
    sc = scan_kernel(func)
    ops = [o for o in sc.ops if o.kind == "wait" or o.kind in COUNTED]
    by_param: dict = {}  # argument key -> (var, [(loop, ops under it)])
    for o in ops:
        cands = [
            lp
            for lp in o.loops
            if lp.var is not None
            and type(lp.extent).__name__ == "Var"
            and obj_key(lp.extent) in sc.params
            and _int(lp.min) is not None
        ]
        if len(cands) != 1:
            continue
        lp = cands[0]
        if any(lp2 is not lp and lp2.trips is None for lp2 in o.loops):
            continue
        var = lp.extent
        entry = by_param.setdefault(obj_key(var), (var, {}))
        entry[1].setdefault(obj_key(lp.node), (lp, []))[1].append(o)
    guessed, notes = {}, []
    for var, loops in by_param.values():
        under = [o for _, os_ in loops.values() for o in os_]
        barriers = {o.barrier for o in under}
        others = [o for o in ops if o.barrier in barriers and o not in under and o.trips is not None]
        trips = {o.trips for o in others}
        ratios = set()
        for lp, os_ in loops.values():
            for o in os_:
                rest = 1
                for lp2 in o.loops:
                    if lp2 is not lp:
                        rest *= lp2.trips
                ratios.add((rest, lp.step))
        if len(trips) > 1 or len(ratios) != 1:
            continue
        rest, step = ratios.pop()
        if trips:
            want = trips.pop()
            if not rest or want % rest:
                continue
            value = (want // rest) * step
            why = (
                f"so it runs as many iterations as the other loops on these barriers "
                f"(line {', '.join(str(x) for x in sorted({o.line for o in others if o.line is not None}))})"
            )
        else:
            value = _DEFAULT_TRIPS * step
            why = "every loop on these barriers is bounded by it: any count they share gives the same protocol"
        guessed[var] = _imm(var, value)
        lines = ", ".join(str(lp.line) for lp, _ in loops.values())
        notes.append(
            (
                f"line {lines}: this loop runs `{var.name}` times, a kernel argument known only at launch: assumed "
                f"{var.name} = {value}, {why}; pass from_kernel(..., params={{{var.name!r}: ...}}) to read it with "
                "the value it is launched with",
                barriers,
            )
        )
    return guessed, notes


def _trips(sc, full, empty) -> dict:
    """How many times each side of the pipeline runs its operations, where the loops say (one trip count per
    side, no guard inside the loops that depends on the iteration): ``{"full_wait": (n, line), "full_arrive": ...,
    "empty_wait": ..., "empty_arrive": ...}``, empty where not known."""
    out = {}
    for bk, name in ((full, "full"), (empty, "empty")):
        for side, kinds in (("wait", ("wait",)), ("arrive", ("arrive", "arrive_expect_tx", "commit"))):
            ops = [o for o in sc.ops if o.barrier == bk and o.kind in kinds]
            trips = {o.trips for o in ops}
            if not ops or len(trips) != 1 or None in trips or any(_varies(o, sc) for o in ops):
                return {}
            out[f"{name}_{side}"] = (trips.pop(), min((o.line for o in ops if o.line is not None), default=None))
    return out


def _varies(op, sc) -> bool:
    """Whether a guard inside the loops around ``op`` depends on the iteration (a loop index, or a local the loops
    set), so the trip count of its loops is not how often it runs."""
    import tvm.tirx as tx
    import tvm_ffi
    from tvm.ir import TensorLoad

    loop_vars = {obj_key(lp.var) for lp in op.loops if lp.var is not None}
    hit = []

    def visit(n):
        k = obj_key(load_source(n)) if isinstance(n, TensorLoad) else obj_key(n)
        defs = sc.defs.get(k) or []
        if k in loop_vars or len(defs) > 1 or any(loops for _, loops, *_ in defs):
            hit.append(n)

    for g in op.guards:
        if g.depth:
            tvm_ffi.structural_walk(g.condition, [((tx.Var, TensorLoad), visit)], order="pre")
    return bool(hit)


def _xor_leaves(e, out):
    if type(e).__name__ == "BitwiseXor":
        _xor_leaves(e.a, out)
        _xor_leaves(e.b, out)
    else:
        out.append(e)
    return out


def _wait_parity(ph):
    """``(phase buffer, XOR constant)`` of a wait's parity expression: ``ps_phase ^ k`` (nested XORs too:
    ``(cs.phase ^ 1) ^ offset``) gives the buffer and ``k``; any other expression (``((k // S) & 1) ^ 1``, raw
    barriers: evaluated iteration by iteration, :func:`txlab.pipelines.kernel_scan.parity_by_iteration`) no buffer."""
    from tvm.ir import TensorLoad

    leaves = _xor_leaves(ph, [])
    consts = [_int(x) for x in leaves]
    loads = [x for x, c in zip(leaves, consts) if c is None]
    xor = 0
    for c in consts:
        if c is not None:
            xor ^= c
    if len(loads) == 1 and isinstance(loads[0], TensorLoad):
        src = load_source(loads[0])
        if src is not None and src.scope() == "local":
            return src, xor
    return None, xor
