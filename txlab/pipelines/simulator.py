"""The simulator: exact mbarrier semantics over every role's script, round robin, with static checks
before and a diagnosis of a deadlock after (the protocol is described in :mod:`txlab.pipelines`)."""

from __future__ import annotations

from collections import deque
from typing import Sequence

from txlab.pipelines.protocol import (
    ADVANCE,
    ARRIVE,
    ARRIVE_EXPECT_TX,
    BARRIER_KINDS,
    COMPLETE_TX,
    EV_BLOCK,
    EV_OP,
    EV_WAKE,
    EXPECT_TX,
    MAX_EVENTS,
    MAX_ITERATIONS,
    MAX_ROLES,
    MAX_STAGES,
    MBARRIER_MAX_COUNT,
    WAIT,
    BarrierSpec,
    BlockedWait,
    Deadlock,
    Problem,
    Role,
    ScriptError,
    Span,
    _int_param,
    _normalise_roles,
    parse_op,
    default_roles,
)
from txlab.pipelines.trace import PipelineTrace


def simulate(
    stages: int,
    *,
    iterations: int,
    producers: int = 1,
    consumers: int = 1,
    producer_phase: int = 1,
    consumer_phase: int = 0,
    init_full: int = 1,
    init_empty: int | None = None,
    empty_phase_offset: int = 0,
    tx_bytes=None,
    roles=None,
    full: str = "tma",
    empty: str = "mbar",
    max_events: int = MAX_EVENTS,
) -> PipelineTrace:
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
        pair = (
            (tx_bytes, tx_bytes)
            if isinstance(tx_bytes, int) and not isinstance(tx_bytes, bool)
            else tuple(tx_bytes)
            if isinstance(tx_bytes, (tuple, list))
            else None
        )
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
        role_list = default_roles(
            iterations=iterations,
            producers=producers,
            consumers=consumers,
            producer_phase=producer_phase,
            consumer_phase=consumer_phase,
            full=full,
            tx_bytes=tx_bytes,
        )
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
            "(each event holds about 150 bytes)"
        )
    barriers = (BarrierSpec("full", full, init_full, 0), BarrierSpec("empty", empty, init_empty, empty_phase_offset))
    params = dict(
        stages=stages,
        iterations=iterations,
        producers=producers,
        consumers=consumers,
        producer_phase=producer_phase,
        consumer_phase=consumer_phase,
        init_full=init_full,
        init_empty=init_empty,
        empty_phase_offset=empty_phase_offset,
        tx_bytes=list(tx_bytes) if isinstance(tx_bytes, (tuple, list)) else tx_bytes,
        full=full,
        empty=empty,
        custom_roles=roles is not None,
    )
    problems = _static_checks(role_list, barriers)
    trace = _run(stages, barriers, role_list, problems, params, max_events)
    trace._roles_arg = roles
    trace._simulate = simulate  # what rerun() calls (the trace module does not import this one)
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
                code, bar, arg = parse_op(op, r.name, 0)
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
                problems.append(
                    Problem(
                        "over_arrival",
                        f"{k} arrives on {spec.name}[stage] {per_role[k]} times per iteration, but each phase "
                        f"of a {spec.name} barrier completes after {spec.init} arrival(s) "
                        f"(init_{spec.name}={spec.init}; arrivals per iteration: {who}). The extra arrival "
                        f"completes a phase nobody waited for, so the parity bit runs ahead and "
                        f"{' and '.join(waiters) or 'the waiters'} will wait on the wrong phase. "
                        f"Arrive once per stage (e.g. only from one elected thread).",
                        role=k,
                        barrier=spec.name,
                    )
                )
            elif total > spec.init:
                problems.append(
                    Problem(
                        "init_count",
                        f"{spec.name} barriers are initialised with count {spec.init} (init_{spec.name}) but "
                        f"{total} arrivals reach each slot per iteration ({who}). Each phase completes after "
                        f"the first {spec.init}: the slot is handed on before every arriver is done (a race), "
                        f"and the surplus completes further phases nobody waits for. Set "
                        f"init_{spec.name}={total}.",
                        barrier=spec.name,
                    )
                )
            else:
                problems.append(
                    Problem(
                        "init_count",
                        f"{spec.name} barriers are initialised with count {spec.init} (init_{spec.name}) but only "
                        f"{total} arrival(s) reach each slot per iteration ({who}). The phase never completes, "
                        f"so {' and '.join(waiters) or 'any waiter'} hangs. Set init_{spec.name}={total}"
                        + (" or add the missing arrive." if total else " or add the missing arrive."),
                        barrier=spec.name,
                    )
                )
        if expect != deliver and (expect or deliver):
            problems.append(
                Problem(
                    "tx_mismatch",
                    f"{spec.name}[stage] is told to expect {expect} bytes per phase (expect_tx by "
                    f"{', '.join(dict.fromkeys(tx_roles)) or 'nobody'}) but the copies deliver {deliver} bytes. "
                    + (
                        "The tx-count never drains to 0, so the phase never completes and its waiters hang. "
                        if expect > deliver
                        else "The tx-count goes negative and the phase cannot complete at 0; its waiters hang. "
                    )
                    + "Make expect_tx equal to the bytes the TMA box really moves (box size × element size).",
                    barrier=spec.name,
                )
            )
    return problems


def _run(
    S: int, barriers, roles: list[Role], problems: list[Problem], params, max_events: int = MAX_EVENTS
) -> PipelineTrace:
    R = len(roles)
    nb = len(barriers)
    init = [barriers[b].init for b in range(nb) for _ in range(S)]
    offset = [barriers[b].phase_offset for b in range(nb)]
    n_slots = nb * S
    sphase = [0] * n_slots
    spend = list(init)
    stx = [0] * n_slots
    scomp = [0] * n_slots  # phases completed
    sobs = [0] * n_slots  # highest completion count a wait has observed
    sarr = [[] for _ in range(n_slots)]  # arrivers (role idx) in the current phase
    sprev = [[] for _ in range(n_slots)]  # arrivers of the last completed phase
    waiters = [[] for _ in range(n_slots)]
    waited_on = [any(o[0] == "wait" and o[1] == barriers[b].name for r in roles for o in r.ops) for b in range(nb)]

    scripts = [[parse_op(o, r.name, i) for i, o in enumerate(r.ops)] for r in roles]
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

    resets = [r.reset_every for r in roles]
    passed: list = [{} for _ in range(R)]  # per role: slot -> (completions, iteration) when it last passed a wait there
    stale_reported = [False] * nb

    def finish_op(r):
        p = pc[r] + 1
        if p == lens[r]:
            p = 0
            it[r] += 1
            if it[r] == iters[r]:
                done[r] = True
            elif resets[r] and it[r] % resets[r] == 0:  # the PipelineState re-created: stage 0, its start phase
                rstage[r] = 0
                rphase[r] = roles[r].phase
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
            problems.append(
                Problem(
                    "phase_skip",
                    f"{bnames[bar]}[{st}] completed phase {c - 2} (arrivals: {prev}) and then phase {c - 1} "
                    f"(arrivals: {cur}) before any role waited for phase {c - 2}. A parity wait cannot "
                    f"tell these apart: whoever waits on {bnames[bar]}[{st}] next sees the parity it saw "
                    f"two phases ago and either hangs or runs on stale data. Too many arrivals reach this "
                    f"barrier per phase (over-arrival, or init_{bnames[bar]} smaller than the number of "
                    f"arrivers).",
                    step=len(events) - 1,
                    role=names[r],
                    barrier=bnames[bar],
                    stage=st,
                    iteration=it[r],
                )
            )
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
                    passed[w][slot] = (c, bit)
                    finish_op(w)
                    ev(
                        (
                            w,
                            EV_WAKE,
                            WAIT,
                            bar,
                            slot - bar * S,
                            bit,
                            sphase[slot],
                            spend[slot],
                            stx[slot],
                            rstage[w],
                            rphase[w],
                        )
                    )
                    spans.append(Span(names[w], bnames[bar], slot - bar * S, bit, blocked_since[w], len(events) - 1))
                    blocked_since[w] = -1
                    if not done[w]:
                        runnable.append(w)
                else:
                    keep.append(w)
            waiters[slot] = keep

    while runnable:
        if len(events) > max_events:
            raise ScriptError(
                f"the simulation recorded more than max_events={max_events:,} events "
                "(blocks and wakes count too); lower iterations, or pass max_events= a "
                "larger number to raise the cap"
            )
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
                seen = passed[r].get(slot)
                if seen is not None and seen[0] == scomp[slot] and seen[1] != cur_it and not stale_reported[bar]:
                    stale_reported[bar] = True
                    problems.append(
                        _stale_wait(
                            names[r], bnames[bar], rstage[r], cur_it, seen, rphase[r] ^ offset[bar], len(events)
                        )
                    )
                passed[r][slot] = (scomp[slot], cur_it)
                finish_op(r)
                ev((r, EV_OP, WAIT, bar, rstage[r], cur_it, sphase[slot], spend[slot], stx[slot], rstage[r], rphase[r]))
                if not done[r]:
                    runnable.append(r)
            else:
                waiters[slot].append(r)
                blocked_since[r] = len(events)
                blocked_it[r] = it[r]
                ev(
                    (
                        r,
                        EV_BLOCK,
                        WAIT,
                        bar,
                        rstage[r],
                        it[r],
                        sphase[slot],
                        spend[slot],
                        stx[slot],
                        rstage[r],
                        rphase[r],
                    )
                )
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
                problems.append(
                    Problem(
                        "over_arrival",
                        f"{names[r]} arrived {n} time(s) on {bnames[bar]}[{rstage[r]}] (iteration {cur_it}) "
                        f"when only {spend[slot]} arrival(s) were pending in its phase: more arrivals than "
                        f"the mbarrier.init count {init[slot]} — undefined behaviour in PTX. Lower the "
                        f"arrive count or raise init_{bnames[bar]}.",
                        step=len(events),
                        role=names[r],
                        barrier=bnames[bar],
                        stage=rstage[r],
                        iteration=cur_it,
                    )
                )
            spend[slot] = p
        elif code == EXPECT_TX:
            stx[slot] += arg
        else:  # COMPLETE_TX
            stx[slot] -= arg
        finish_op(r)
        ei = len(events)
        ev((r, EV_OP, code, bar, slot - bar * S, cur_it, sphase[slot], spend[slot], stx[slot], rstage[r], rphase[r]))
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

    def diagnose() -> Deadlock:
        """The deadlock: who waits on which slot and phase, and why nothing can complete it."""
        arrivers = {
            b: [
                i
                for i, sc in enumerate(scripts)
                if any(op[1] == b and op[0] in (ARRIVE, ARRIVE_EXPECT_TX) for op in sc)
            ]
            for b in range(len(barriers))
        }
        txers = {
            b: [i for i, sc in enumerate(scripts) if any(op[1] == b and op[0] == COMPLETE_TX for op in sc)]
            for b in range(len(barriers))
        }
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
            head = (
                f"{names[w]} waits on {bname} with parity {parity} (PipelineState stage {rstage[w]}, "
                f"phase {rphase[w]}{off}; iteration {it[w]}). The barrier is still in phase parity "
                f"{sphase[slot]} with {spend[slot]} of {spec.init} arrival(s) pending"
                + (f" and {stx[slot]} tx byte(s) outstanding" if stx[slot] else "")
                + f" ({scomp[slot]} phase(s) completed so far), so the wait can only pass once this "
                f"phase completes."
            )
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
                    why = (
                        f" Every arrival is in, but {stx[slot]} expected byte(s) never landed: expect_tx "
                        f"announced more bytes than the copies deliver (tx-count mismatch)."
                    )
                else:
                    why = (
                        f" Every arrival is in, but the copies delivered {-stx[slot]} byte(s) more than "
                        f"expect_tx announced; the tx-count is negative and cannot reach 0 (tx-count "
                        f"mismatch)."
                    )
            elif not who:
                why = f" Nothing ever arrives on {spec.name}: no role's script has an arrive on it."
            elif all(done[a] or a == w for a in who):
                why = (
                    f" Every role that arrives on {spec.name} ({', '.join(status)}) is done, yet the "
                    f"phase needs {spec.init} arrivals: init_{spec.name}={spec.init} is larger than the "
                    f"arrivals a phase receives, or an arrive is missing."
                )
            else:
                why = f" Arrivals on {spec.name} come from {', '.join(status)}: a cycle, nobody can move."
            hint = ""
            if (
                spec.name == "empty"
                and scomp[slot] == 0
                and it[w] == 0
                and roles[w].kind == "producer"
                and sphase[slot] == 0
                and parity == 0
            ):
                fix = (
                    f"Drop the XOR with {spec.phase_offset} (empty_phase_offset=0) or start the producer at phase "
                    f"{roles[w].phase ^ 1}."
                    if spec.phase_offset
                    else "Start the producer at phase 1 (PipelineState(stages, 1)) or use empty_phase_offset=1."
                )
                hint = (
                    f" Likely cause: {names[w]} starts its PipelineState at phase {roles[w].phase} on "
                    f"the empty barriers{f' XORed with empty_phase_offset {spec.phase_offset}' if spec.phase_offset else ''}"
                    ", so its first wait uses parity 0. A fresh mbarrier is in phase 0, so a "
                    f"parity-0 wait blocks until consumers release a slot they never received. {fix}"
                )
            elif spec.name == "full" and roles[w].kind == "consumer" and roles[w].phase == 1:
                hint = (
                    f" Likely cause: {names[w]} starts its PipelineState at phase 1 on the full barriers. A fresh "
                    f"mbarrier is in phase 0, so its first parity-1 waits pass at once: it reads slots no producer "
                    f"has filled and releases them early, and the roles' phases drift apart. Start the consumers at "
                    f"phase 0 (PipelineState(stages, 0))."
                )
            elif scomp[slot] >= 2 and parity == sphase[slot]:
                per_iter = {
                    a: sum(
                        op[2] if op[0] == ARRIVE else 1
                        for op in scripts[a]
                        if op[1] == b and op[0] in (ARRIVE, ARRIVE_EXPECT_TX)
                    )
                    for a in who
                }
                total = sum(per_iter.values())
                twice = [names[a] for a, n in per_iter.items() if n > 1]
                if total > spec.init:
                    cause = (
                        f"{twice[0]} arrives on {spec.name} {per_iter[names.index(twice[0])]} times per stage"
                        if twice
                        else f"init_{spec.name}={spec.init} is smaller than the {total} arrivals each stage receives"
                    )
                    hint = (
                        f" Likely cause: {cause}, so {bname} has completed {scomp[slot]} phases and its "
                        f"parity is back to {sphase[slot]}, the value {names[w]} waits to see change."
                    )
            waits.append(
                BlockedWait(
                    names[w],
                    spec.name,
                    st,
                    parity,
                    it[w],
                    blocked_since[w],
                    sphase[slot],
                    spend[slot],
                    spec.init,
                    stx[slot],
                    scomp[slot],
                    head + why + hint,
                )
            )
        step = len(events) - 1
        if waits:
            lines = [f"Deadlock after event {step}: {len(waits)} role(s) wait forever."]
            lines += [f"- {w.reason}" for w in waits]
            message = "\n".join(lines)
        else:  # pragma: no cover - a role can only stop by blocking
            message = f"Deadlock after event {step}."
        return Deadlock(step, tuple(waits), message)

    finished = all(done)
    deadlock = None
    if not finished:
        deadlock = diagnose()
        problems.insert(
            0,
            Problem(
                "deadlock",
                deadlock.message,
                step=deadlock.step,
                role=deadlock.waits[0].role if deadlock.waits else None,
                barrier=deadlock.waits[0].barrier if deadlock.waits else None,
                stage=deadlock.waits[0].stage if deadlock.waits else None,
                iteration=deadlock.waits[0].iteration if deadlock.waits else None,
            ),
        )
        for slot in range(n_slots):
            for w in waiters[slot]:
                spans.append(Span(names[w], bnames[slot // S], slot % S, blocked_it[w], blocked_since[w], None))
    spans.sort(key=lambda s: s.start)
    return PipelineTrace(S, barriers, roles, events, spans, deadlock, problems, finished, params)


def _stale_wait(role: str, bar: str, stage: int, it: int, seen, parity: int, step: int) -> Problem:
    """A wait that passed on a phase of its slot the same role had already passed on in an earlier iteration: no
    phase completed on that slot in between, so the role runs on what it consumed before."""
    c, before = seen
    what = (
        "what it reads there is stale: the producer has not refilled the slot"
        if bar == "full"
        else "what it writes there overwrites a slot the consumers have not released"
    )
    return Problem(
        "phase_mismatch",
        f"{role}{_poss(role)} wait on {bar}[{stage}] in iteration {it} (parity {parity}) passed at once on the phase it already "
        f"passed on in iteration {before}: {bar}[{stage}] completed no phase in between ({c} so far), so {what}. "
        f"{role}{_poss(role)} PipelineState (stage, phase) no longer matches the barrier's phases.",
        step=step,
        role=role,
        barrier=bar,
        stage=stage,
        iteration=it,
    )


def _poss(name: str) -> str:
    return "'" if name.endswith("s") else "'s"
