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
from txlab.pipelines.kernel_scan import param_names, parity_by_iteration, restarts, sources
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
    # a role whose PipelineState is re-created inside a loop around its waits while the barriers keep their phases
    # ("producer"/"consumer" -> {every: its iterations per pass of that loop, line: the PipelineState(...) line,
    # loop: that loop's line, start: the phase it restarts at, barrier: the barrier it waits on})
    resets: dict = field(default_factory=dict)

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
        # bytes the copies bring complete on the full barrier whatever its declared kind: a plain arrive (or none)
        # next to a TMA copy leaves them unannounced, and the simulation must see them land
        if (self.full == "tma" and expect is not None) or deliver:
            if af >= 1 and expect:
                prod.append(("arrive_expect_tx", "full", int(expect)))
                if af > 1:
                    prod.append(("arrive", "full", af - 1))
            elif af >= 1:
                prod.append(("arrive", "full", af))
            elif expect:
                prod.append(("expect_tx", "full", int(expect)))
            if deliver:
                prod.append(("complete_tx", "full", int(deliver)))
        elif af >= 1:
            prod.append(("arrive", "full", af))
        prod.append(("advance",))
        cons = [("wait", "full")] + ([("arrive", "empty", ae)] if ae >= 1 else []) + [("advance",)]
        out = {"producer": {"ops": prod, "kind": "producer"}, "consumers": {"ops": cons, "kind": "consumer"}}
        for role, r in (self.resets or {}).items():
            if r.get("every"):
                out["producer" if role == "producer" else "consumers"]["reset_every"] = r["every"]
        return out

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
            trace.problems = tuple(self._code_problems(trace, self.derived and "tx_bytes" not in overrides))
        return trace

    def _code_problems(self, trace, derived: bool) -> list:
        """The problems of what the code does that the simulated protocol alone words poorly: a barrier the kernel
        waits on and never arrives on, TMA bytes nobody announces with expect_tx, a PipelineState re-created inside
        a loop while the barriers keep their phases. Each names its barrier, line, the iteration that hangs (or
        runs on stale data) and the fix; the simulator's generic wording of the same fault gives way to it.
        ``derived``: the trace ran the code's counts (not overridden), which the first two are read from."""
        import dataclasses

        probs = list(trace.problems)
        code = getattr(self, "_code", None) or {}
        S = self.stages
        names = {"full": self.full_buffer or "full", "empty": self.empty_buffer or "empty"}
        names.update({f"{k}_var": v for k, v in (getattr(self, "_vars", None) or {}).items()})
        hung = {}
        for w in trace.deadlock.waits if trace.deadlock else ():
            hung.setdefault(w.barrier, w)
        extra = []
        for bar in ("full", "empty"):
            if not derived or (self.arrivals_full if bar == "full" else self.arrivals_empty) != 0:
                continue
            c = code.get(bar) or {}
            # the simulator's "set init to 0" is no fix: the arrive is what is missing
            probs = [p for p in probs if not (p.kind in ("init_count", "under_arrival") and p.barrier == bar)]
            runs = c.get("wait_trips")
            w = hung.get(bar)
            if w is None and bar == "empty" and not (runs is not None and runs > S):
                continue  # the waits never come back to a slot: fresh barriers let them all pass
            extra.append(self._missing_arrive(bar, names, c, w, code))
        if derived and self.expect_tx_bytes == 0 and self.tx_delivered:
            tx = next((p for p in probs if p.kind == "tx_mismatch"), None)
            probs = [p for p in probs if p.kind != "tx_mismatch"]
            extra.append(self._unannounced_bytes(names, hung.get("full"), tx))
        if self.resets:
            # phase skips here come from the restarted state, not from extra arrivals (what their text says)
            probs = [p for p in probs if p.kind != "phase_skip"]
            for role, r in self.resets.items():
                extra.append(self._restart_problem(role, r, trace))
        placed = []
        for p in probs:
            if p.kind == "phase_mismatch" and p.lineno is None and p.barrier in code and code[p.barrier]["waits"]:
                line = code[p.barrier]["waits"][0]
                p = dataclasses.replace(p, lineno=line, lines=(line,))
            placed.append(p)
        # right after the deadlock the simulation ends in, if any
        at = next((i + 1 for i, p in enumerate(placed) if p.kind == "deadlock"), 0)
        return placed[:at] + extra + placed[at:]

    def _missing_arrive(self, bar: str, names: dict, c: dict, w, code: dict) -> Problem:
        S = self.stages
        wl = (c.get("waits") or [None])[0]
        init = self.init_full if bar == "full" else self.init_empty
        it = w.iteration if w is not None else (0 if bar == "full" else S)
        stage = w.stage if w is not None else 0
        at = f" (line {wl})" if wl is not None else ""
        if bar == "empty":
            ol = ((code.get("full") or {}).get("waits") or [None])[0]
            msg = (
                f"nothing ever arrives on {names['empty']}: the consumers wait on {names['full']}"
                + (f" (line {ol})" if ol is not None else "")
                + f" but no thread of the kernel arrives on {names['empty']} to hand a slot back (it was initialised "
                f"for {init} arrival(s) per phase), so its phases never complete. The producer's first {S} waits pass "
                f"on the fresh barriers; its wait on {names['empty']}[{stage}] in iteration {it}{at} never passes and "
                f"the kernel hangs. Arrive on {names['empty']}[stage] once the consumers are done reading the slot: "
                f"`{names.get('empty_var', names['empty'])}.arrive(stage)` by {init} thread(s) per phase (one per "
                "consumer warp, e.g. under `if lane == 0`)."
            )
        else:
            copies = (code.get("full") or {}).get("copies") or []
            fed = (
                f"the TMA copies at line {', '.join(map(str, copies))} complete their bytes on it but "
                if copies
                else ""
            )
            var = names.get("full_var", names["full"])
            fix = (
                f"`{var}.arrive(stage, {self.tx_delivered})` (mbarrier.arrive.expect_tx: one arrival that "
                "announces the bytes) after issuing the copies"
                if self.tx_delivered
                else f"`{var}.arrive(stage)` by {init} thread(s) once the slot is filled"
            )
            msg = (
                f"nothing ever arrives on {names['full']}: {fed}no thread of the kernel arrives on it (it was "
                f"initialised for {init} arrival(s) per phase), so its phase never completes. The consumers' wait on "
                f"{names['full']}[{stage}] in iteration {it}{at} never passes and the kernel hangs. Add {fix}."
            )
        return Problem(
            "missing_arrive",
            msg,
            role="consumers" if bar == "full" else "producer",
            barrier=bar,
            stage=stage,
            iteration=it,
            lineno=wl,
            lines=tuple(x for x in (wl,) if x is not None),
        )

    def _unannounced_bytes(self, names: dict, w, tx) -> Problem:
        S = self.stages
        n = self.tx_delivered
        full = names["full"]
        var = names.get("full_var", full)
        arrives = self.lines.get("arrive_full") or []
        copies = self.lines.get("copy") or []
        boxes = "; ".join(
            f"line {c['line']}: box {'x'.join(str(e) for e in c['box'])} {c['dtype']} = {c['bytes']} B"
            for c in self.copies
        )
        if self.arrivals_full:
            it = w.iteration if w is not None else S
            why = (
                f"the arrive at line {', '.join(map(str, arrives))} carries no byte count, so it completes the phase "
                "by itself: the consumers' wait passes before the copy lands and reads a slot still being written "
                f"(a race). The bytes then land in the next phase and leave its tx-count at -{n}, which never drains "
                f"to 0: the consumers' wait on {full}[{w.stage if w is not None else 0}] in iteration {it} never "
                f"passes and the kernel hangs."
            )
            fix = f"Announce the bytes with the arrive: `{var}.arrive(stage, {n})` (mbarrier.arrive.expect_tx)."
        else:
            it = w.iteration if w is not None else 0
            why = f"nothing arrives on it either (the missing arrive above), and the kernel hangs at iteration {it}."
            fix = f"Arrive and announce the bytes after issuing the copies: `{var}.arrive(stage, {n})`."
        return Problem(
            "tx_mismatch",
            f"{full}[stage] receives {n} bytes per phase from the TMA copies ({boxes}) but no expect_tx announces "
            f"them: {why} {fix}",
            step=tx.step if tx is not None else None,
            barrier="full",
            stage=tx.stage if tx is not None else None,
            iteration=it,
            lineno=(arrives or copies or [None])[0],
            lines=tuple(arrives) + tuple(copies),
        )

    def _restart_problem(self, role: str, r: dict, trace) -> Problem:
        S = self.stages
        every, start = r["every"], r["start"]
        stage, phase = every % S, start ^ ((every // S) & 1)
        bar = r.get("barrier") or ("empty" if role == "producer" else "full")
        stale = [p for p in trace.problems if p.kind == "phase_mismatch" and p.iteration is not None]
        mine = "producer" if role == "producer" else "consumers"
        seen = next((p for p in stale if p.role == mine), stale[0] if stale else None)
        if seen is not None:
            then = (
                f" In the simulation, {_poss(seen.role)} wait on {seen.barrier}[{seen.stage}] in iteration {seen.iteration} "
                "passes at once on a phase it already consumed"
                + (" (stale data)." if seen.barrier == "full" else " (it overwrites a slot still being read).")
            )
        elif trace.deadlock is not None and trace.deadlock.waits:
            w = trace.deadlock.waits[0]
            then = (
                f" In the simulation, {_poss(w.role)} wait on {w.barrier}[{w.stage}] in iteration {w.iteration} hangs."
            )
        else:
            then = ""
        return Problem(
            "phase_mismatch",
            f"the {role}'s PipelineState (line {r['line']}) is re-created at stage 0, phase {start} in every pass of "
            f"the loop at line {r['loop']}, while {self.full_buffer or 'full'} and {self.empty_buffer or 'empty'} keep "
            f"their phases from one pass to the next. A pass runs {every} {role} iteration(s), not a multiple of "
            f"2 x {S} = {2 * S}, so the ring is at stage {stage}, phase {phase} when the next pass restarts at "
            f"stage 0, phase {start}: from iteration {every} on, its waits on {bar} (line {r.get('wait_line')}) "
            f"use the wrong slot and parity, and pass on old phases or hang.{then} Create the PipelineState once, "
            f"before the loop at line {r['loop']}, so its stage and phase carry over from pass to pass.",
            role="producer" if role == "producer" else "consumers",
            barrier="empty" if role == "producer" else "full",
            stage=0,
            iteration=every,
            lineno=r["line"],
            lines=tuple(x for x in (r["line"], r.get("wait_line")) if x is not None),
        )

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


def _poss(name: str) -> str:
    """``consumers'`` / ``producer's``."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _user_name(loc, which: str, fallback: str) -> str:
    """The name the user's code calls a barrier by (for a fix written as code): ``ab.full`` for ``ab = Pipeline(...)``,
    ``full`` for ``full.init(1)``, else ``fallback``."""
    import linecache

    if loc is None:
        return fallback
    text = linecache.getline(loc[0], loc[1]).strip()
    m = re.match(r"(\w+)\s*=\s*Pipeline\(", text)
    if m:
        return f"{m.group(1)}.{which}"
    m = re.match(r"([\w.]+)\.init\(", text)
    return m.group(1) if m else fallback


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
    funcs, launch_notes, changed, as_launched = _read_with(funcs, params)
    derived_funcs = dict(funcs)  # what the arrival counts are read from (guards that read memory assumed to hold)

    out = []
    tcgen05: list = []  # a kernel with tcgen05 ops lowers (for the arrival counts) for sm_100a only
    for kname, func in funcs:
        sc = scan_kernel(func)
        sc_given = sc if as_launched.get(kname) is func else scan_kernel(as_launched[kname])
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

        def first_parity(bk):
            """The parity the first wait on barrier ``bk`` waits with (None: not read)."""
            if bk not in wait_phase:
                return None
            pbuf, xor, _, _ = wait_phase[bk]
            if start_value(pbuf) is not None:
                return (start_value(pbuf) ^ xor) & 1
            by_k = by_iteration(bk)
            return by_k[0] if by_k else None

        for fb, fc, eb, ec, how in _pair_by_roles(inits, sc, first_parity, init_lines):
            depth = _int(fb.shape[0])
            notes = [how] if how else []
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
            spec._vars = {
                "full": _user_name(init_lines.get(_bkey(fb)), "full", spec.full_buffer),
                "empty": _user_name(init_lines.get(_bkey(eb)), "empty", spec.empty_buffer),
            }
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
            pair = {_bkey(fb), _bkey(eb)}
            for role, bk, bname in (
                ("producer", _bkey(eb), spec.empty_buffer),
                ("consumer", _bkey(fb), spec.full_buffer),
            ):
                # read with the trip counts the kernel is launched with (``params``), not with guessed ones: whether a
                # restarted PipelineState meets the ring depends on the count itself
                reset, note = _restart(sc_given, bk, depth, role, bname, pair)
                if reset:
                    spec.resets[role] = reset
                if note:
                    notes.append(note)
            mine = {_bkey(fb), _bkey(eb)}
            notes += [n for n, keys in launch_notes.get(kname, ()) if keys & mine]
            notes += _unknown_loop_notes(sc, mine)
            for g in guards:
                if any(o.barrier in mine for o in g.ops):
                    notes.append(_guard_note(g))
            spec.trips = _trips(sc, _bkey(fb), _bkey(eb))
            spec._code = {"full": _code_ops(sc, _bkey(fb)), "empty": _code_ops(sc, _bkey(eb))}
            notes.append(f"consumers = init_empty = {spec.init_empty} (one arrival per consumer role assumed)")
            spec.notes = notes
            out.append(spec)
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


# --- which barriers form a pipeline, and which of the two is full -------------------------------------------------
#: operations that signal a barrier (arrivals, or bytes that complete its transaction count)
_SIGNALS = ("arrive", "arrive_expect_tx", "expect_tx", "commit", "copy")
#: operations that bring bytes to a barrier: only the full barrier of a pipeline receives data
_BYTES = ("arrive_expect_tx", "expect_tx", "copy")


def _one_role(w, a) -> bool:
    """Whether a wait and a signalling operation run in one role's iteration: inside a common loop, or both outside
    every loop in one branch."""
    if w.loops and a.loops:
        return any(x is y for x in w.loops for y in a.loops)
    if not w.loops and not a.loops and w.guards and a.guards:
        return w.guards[0] is a.guards[0]
    return False


def _feeds(sc, x, y) -> bool:
    """Whether a role waits on barrier ``x`` and then signals barrier ``y`` (a producer waits on empty and fills
    full; a consumer waits on full and releases empty)."""
    waits = [o for o in sc.ops if o.barrier == x and o.kind == "wait"]
    sigs = [o for o in sc.ops if o.barrier == y and o.kind in _SIGNALS]
    return any(_one_role(w, a) for w in waits for a in sigs)


def _pair_by_roles(inits, sc, first_parity, init_locs) -> list:
    """``[(full buffer, init count, empty buffer, init count, note)]``: the barriers paired and told apart by what the
    code does with them, not by where they are initialised. A pair is two barriers of one depth where each role waits
    on one and signals the other (both ways first; one way where an arrive is missing; else, as ``Pipeline``
    declares them, consecutive inits). Of a pair, the full barrier is the one that receives bytes (a TMA copy, an
    expect_tx), else the first a ``Pipeline(...)`` line initialises, else the one whose first wait blocks on a fresh
    barrier (parity 0: consumers wait for the first fill), else the first initialised."""

    def depth(b):
        return _int(b.shape[0]) if len(b.shape) == 1 else None

    n = len(inits)
    keys = [_bkey(b) for b, _ in inits]
    init_line = {k: (loc[1] if loc else None) for k, loc in init_locs.items()}
    used: set = set()
    chosen: list = []  # (i, j): indices into inits

    def pick(test):
        for i in range(n):
            if i in used or depth(inits[i][0]) is None:
                continue
            for j in range(i + 1, n):
                if j in used or depth(inits[j][0]) != depth(inits[i][0]):
                    continue
                if test(i, j):
                    used.update((i, j))
                    chosen.append((i, j))
                    break

    def both(i, j):
        return _feeds(sc, keys[i], keys[j]) and _feeds(sc, keys[j], keys[i])

    def either(i, j):
        return _feeds(sc, keys[i], keys[j]) or _feeds(sc, keys[j], keys[i])

    # declared next to each other wins over a later partner with the same evidence (two rings the same roles run)
    pick(lambda i, j: j == i + 1 and both(i, j))
    pick(both)
    pick(lambda i, j: j == i + 1 and either(i, j))
    pick(either)
    pick(lambda i, j: j == i + 1)
    out = []
    for i, j in sorted(chosen):
        (a, ca), (b, cb) = inits[i], inits[j]
        ka, kb = keys[i], keys[j]
        bytes_a = any(o.barrier == ka and o.kind in _BYTES for o in sc.ops)
        bytes_b = any(o.barrier == kb and o.kind in _BYTES for o in sc.ops)
        pa, pb = first_parity(ka), first_parity(kb)
        swap = False
        why = ""
        if bytes_a != bytes_b:
            swap = bytes_b
            why = "it receives the TMA bytes"
        elif init_line.get(ka) is not None and init_line.get(ka) == init_line.get(kb):
            swap = False  # one Pipeline(...) declaration: TVM initialises full, then empty
        elif pa is not None and pb is not None and pa != pb:
            swap = pa == 1
            why = "its first wait blocks until the first fill while the other's passes on a fresh barrier"
        (fb, fc, kf), (eb, ec, ke) = ((b, cb, kb), (a, ca, ka)) if swap else ((a, ca, ka), (b, cb, kb))
        fname = fb.name or _declared_name(init_locs.get(kf), "full")
        ename = eb.name or _declared_name(init_locs.get(ke), "empty")
        how = ""
        if swap or j != i + 1:
            line_f, line_e = init_line.get(kf), init_line.get(ke)
            how = (
                f"paired by what the code does, not by init order: {fname} (init at line {line_f}) is the full "
                f"barrier{f' ({why})' if why else ''} and {ename} (init at line {line_e}) the empty one"
                + (
                    f"; the {j - i - 1} barrier(s) initialised between them are not this pipeline's"
                    if j > i + 1
                    else ""
                )
            )
        out.append((fb, fc, eb, ec, how))
    return out


def _restart(sc, bk, depth: int, role: str, bname: str, pair: set):
    """``(reset, note)`` for a role whose PipelineState (the phase local its wait on ``bk`` reads) is re-created inside
    a loop around that wait: ``reset`` (for :attr:`PipelineSpec.resets`) where that loop's passes run a count of
    iterations that leaves the ring elsewhere than stage 0 at the start phase, so the re-created state disagrees with
    the barriers; a note where that count is not known here (an assumption). Barriers initialised again in the same
    loop start over with the state: no reset then."""
    wait = next((o for o in sc.ops if o.kind == "wait" and o.barrier == bk), None)
    state = _wait_parity(wait.parity)[0] if wait is not None and wait.parity is not None else None
    found = restarts(wait, state, sc) if state is not None else None
    if found is None:
        return None, None
    start, line, loop, per = found
    if any(o.barrier in pair and any(lp is loop for lp in o.loops) for o in sc.inits):
        return None, None
    where = f"line {line}: " if line is not None else ""
    if per is None:
        inner = wait.loops[next(i for i, lp in enumerate(wait.loops) if lp is loop) + 1 :]
        bounds = ", ".join(f"`{expr_text(lp.extent)}`" if lp.var is not None else "a while loop" for lp in inner)
        return None, (
            f"{where}the {role}'s PipelineState is re-created in every pass of the loop at line {loop.line}, and how "
            f"many iterations one pass runs ({bounds}) is not known here: assumed it is a multiple of 2 x {depth}, "
            f"so that each pass starts where the {depth}-slot ring stands (stage 0, phase {start & 1}); any other "
            "count leaves the re-created state at the wrong slot and parity"
        )
    if per % (2 * depth) == 0:
        return None, None
    return {
        "every": per,
        "line": line,
        "loop": loop.line,
        "start": start & 1,
        "barrier": bname,
        "wait_line": wait.line,
    }, None


def _code_ops(sc, bk) -> dict:
    """What the code as written does to barrier ``bk``: its waits' lines, whether anything arrives on it, announces
    or brings bytes, and whether its address reaches a call the reading does not know."""
    ops = [o for o in sc.ops if o.barrier == bk]
    return {
        "waits": [o.line for o in ops if o.kind == "wait"],
        "arrives": [o.line for o in ops if o.kind in ("arrive", "arrive_expect_tx", "commit")],
        "expects": [o.line for o in ops if o.kind in ("arrive_expect_tx", "expect_tx")],
        "copies": [o.line for o in ops if o.kind == "copy"],
        "unknown": bk in sc.unknown_uses,
        "wait_trips": next((o.trips for o in ops if o.kind == "wait"), None),
    }


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
    {function: [(note, barrier keys it concerns)]}, whether anything changed, {function name: the function with the
    given ``params`` only}: what a reading that depends on the trip counts themselves, not on their agreeing, takes)."""
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
    out, notes, changed, given = [], {}, False, {}
    for name, f in funcs:
        mine = {scalars[name][k]: _imm(scalars[name][k], v) for k, v in params.items() if k in scalars[name]}
        if mine:
            f = f.specialize(mine)
            changed = True
        given[name] = f
        guessed, fnotes = _assumed_trips(f)
        if guessed:
            try:
                f = f.specialize(guessed)
                changed = True
            except Exception:  # noqa: BLE001 - not specialisable: the loops stay unknown (noted per spec)
                fnotes = []
        out.append((name, f))
        notes[name] = fnotes
    return out, notes, changed, given


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
