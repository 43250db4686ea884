"""What a pipeline's code does: arrivals per phase and transaction bytes, from the kernel itself.

:func:`txlab.pipelines.from_kernel` reads a pipeline's *declaration* (barrier depth, init counts,
start phases). This module reads what the code *does* with it, so the simulation runs the real
protocol: the lowered device function is walked for every thread of a CTA (:mod:`txlab.simt`,
guards evaluated over the thread index: ``if c % 32 == 0`` lets one thread per warp through,
``elect_sync`` one per warp, ``tx == 0`` one, no guard every thread of the branch) and at each
``mbarrier`` arrive / ``arrive.expect_tx`` / ``expect_tx`` and TMA copy the threads that execute
it are counted, per visit (one visit = one iteration of the role's loop = one phase of the slot it
uses). Bytes a TMA copy delivers come from the copy's destination region (box shape x element
size) in the kernel as written; a multicast copy delivers its box to every CTA of its mask.

Everything found is attached to the :class:`txlab.pipelines.PipelineSpec` with the user's line of
each arrive/copy; where a count cannot be derived, ``spec.notes`` says which assumption was made
and at which line.
"""

from __future__ import annotations

import numpy as np

from txlab import simt

_ARRIVE_OPS = ("mbarrier_arrive", "mbarrier_arrive_nocount", "mbarrier_arrive_remote")


def _kind(op_name: str) -> str | None:
    short = op_name.rsplit(".", 1)[-1]
    if short.endswith("mbarrier_init"):
        return "init"
    if short.endswith("mbarrier_arrive_expect_tx"):
        return "arrive_expect_tx"
    if short.endswith("mbarrier_expect_tx"):
        return "expect_tx"
    if short.endswith(_ARRIVE_OPS) or short == "mbarrier_arrive":
        return "arrive"
    if short.startswith("cp_async_bulk_tensor") or short.startswith("cp_async_bulk_g2s"):
        return "copy"
    if "tcgen05" in short and "commit" in short:
        return "commit"
    return None


def _addrs(args):
    return [a for a in args if isinstance(a, simt.AddrValue)]


def tma_copies(func) -> list[dict]:
    """TMA copies of a kernel as written (``Tx.copy_async(..., dispatch="tma...")``), in program
    order: line, bytes of the destination box, the barrier named by ``mbar=``, multicast CTAs."""
    import tvm
    import tvm_ffi

    out = []

    def on(n):
        name = getattr(n.op, "name", "")
        if not name.endswith("copy_async") or not len(n.args):
            return
        dispatch = str(n.dispatch) if n.dispatch is not None else ""
        cfg = dict(n.config.items()) if n.config is not None else {}
        if "tma" not in dispatch and "mbar" not in cfg:
            return
        dst = n.args[0]
        exts = [simt._const(r.extent) for r in dst.region]
        from tvm import DataType

        src = getattr(dst, "source", None)
        if src is None:
            src = getattr(dst, "buffer", None)
        dt = DataType(str(src.dtype))
        nbytes = None
        if all(e is not None for e in exts):
            nbytes = int(np.prod(exts)) * dt.bits * dt.lanes // 8
        mcast = None
        for key in ("cta_mask", "multicast", "mcast_mask", "cta_group_mask"):
            if key in cfg:
                m = simt._const(cfg[key])
                mcast = bin(m).count("1") if isinstance(m, int) and m > 0 else None
        # cta_group=2 (sm_100a): the copy may complete on the peer CTA's barrier (the leader's, in the
        # 2-SM idiom); walk_barriers follows each CTA of the cluster to count what reaches CTA 0's
        pair = simt._const(cfg["cta_group"]) if "cta_group" in cfg else None
        out.append(
            {
                "line": simt.user_line(n.span),
                "bytes": nbytes,
                "multicast": mcast,
                "box": exts,
                "dtype": str(src.dtype),
                "cta_group": pair if isinstance(pair, int) and pair > 1 else None,
            }
        )

    tvm_ffi.structural_walk(func.body, [(tvm.tirx.TilePrimitiveCall, on)], order="pre")
    return out


class _Site:
    def __init__(self, kind, line, node):
        self.kind = kind
        self.line = line
        self.node = node
        self.counts: list = []  # arrivals (or copies) per visit
        self.bytes: list = []  # tx bytes per visit (expect or delivered)
        self.slots: set = set()  # (buffer name, index) the visits touched
        self.visits: list = []  # per visit: {(buffer name, index): threads that executed it there}
        self.uncertain = False
        self.mcast = 0  # CTAs a multicast copy reaches, from its evaluated CTA mask (0: not known / none)
        self.remote: set = set()  # ranks of the other CTAs of the cluster whose visits reach CTA 0's barriers


def _const_int(x) -> int | None:
    """``x`` as an int where the walk made it one value for every lane (a Python or numpy integer, or a uniform
    lane vector: a count typed uint32 in the IR), else None."""
    if isinstance(x, np.ndarray) and x.size and x.dtype.kind in "iu" and np.all(x == x.flat[0]):
        x = x.flat[0]
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    return None


def walk_barriers(func):
    """(barrier arrays ``[(name, [slot indices], init count, line)]`` in init order, call sites).

    The protocol is read for the barriers of CTA 0. In a cluster every CTA is walked (its rank in
    the cluster known): CTA 0's own arrivals count, and so does any arrival another CTA makes on
    CTA 0's barriers through a ``mapa``'d address (``MBarrier.arrive(remote=0)``, a ``cta_group=2``
    TMA load completing on the leader's barrier); a multicast copy is counted once per receiving
    CTA from CTA 0's walk, as before (every CTA of the mask runs the same code)."""
    inits: list = []
    sites: dict = {}
    csize = simt.cluster_size(func)
    walking = [0]  # the rank in the cluster of the CTA being walked

    def target_of(bar):
        """The cluster rank whose barrier ``bar`` is (None: unknown)."""
        if bar is None or bar.rank is None:
            return walking[0]
        r = bar.rank
        if isinstance(r, np.ndarray) and r.size and np.all(r == r.flat[0]):
            r = int(r.flat[0])
        return int(r) if isinstance(r, (int, np.integer)) else None

    def on_visit(v):
        if v.kind != "call":
            return
        kind = _kind(str(getattr(v.node.op, "name", "")))
        if kind is None:
            return
        n_active = int(v.mask.sum())
        addrs = _addrs(v.args)
        if kind == "init":
            if walking[0] == 0 and addrs and isinstance(addrs[0].index, int):
                cnt = _const_int(v.args[1]) if len(v.args) > 1 else None
                inits.append((addrs[0].buffer.name, addrs[0].index, cnt, v.line))
            return
        bar = addrs[-1] if kind == "copy" and addrs else (addrs[0] if addrs else None)
        target = target_of(bar)
        if target is None:  # a mapa to a rank the walk cannot know: counted as if on CTA 0 (noted)
            target = 0
        if target != 0:
            return  # another CTA's barrier
        key = simt._key(v.node)
        s = sites.get(key)
        if s is None:
            s = sites[key] = _Site(kind, v.line, v.node)
        if walking[0] != 0:
            s.remote.add(walking[0])
        per_thread = 1
        count = _const_int(v.args[1]) if kind == "arrive" and len(v.args) > 1 else None
        if count is not None and count > 0:  # mbarrier.arrive with a count (a uint32 in the IR): count arrivals
            per_thread = count
        per_slot: dict = {}
        if bar is not None:
            idx = bar.index
            if isinstance(idx, np.ndarray):
                xs, ns = np.unique(idx[v.mask], return_counts=True)
                per_slot = {(bar.buffer.name, int(x)): int(n) * per_thread for x, n in zip(xs, ns)}
            elif isinstance(idx, int):
                per_slot = {(bar.buffer.name, idx): n_active * per_thread}
            for x in per_slot:
                s.slots.add(x)
        s.visits.append(per_slot)
        s.uncertain = s.uncertain or v.uncertain
        if kind == "copy" and any(isinstance(a, str) and "multicast::cluster" in a for a in v.args):
            # the CTA mask, evaluated for this CTA (a runtime expression in the IR): the CTAs it reaches
            i = next((j for j, a in enumerate(v.args) if a is bar), None)
            m = v.args[i + 1] if i is not None and i + 1 < len(v.args) else None
            if isinstance(m, np.ndarray) and m.size and np.all(m == m.flat[0]):
                m = int(m.flat[0])
            if isinstance(m, (int, np.integer)) and m > 0:
                s.mcast = max(s.mcast, bin(int(m)).count("1"))
        s.counts.append(n_active * per_thread)
        if kind in ("arrive_expect_tx", "expect_tx"):
            b = _const_int(v.args[1]) if len(v.args) > 1 else None
            s.bytes.append(None if b is None else n_active * b)

    walk = simt.execute(func, on_visit=on_visit)
    for r in range(1, csize):  # the other CTAs of a cluster, for what they do to CTA 0's barriers
        walking[0] = r
        simt.execute(func, on_visit=on_visit, cta=(r, 0, 0))
    arrays: list = []
    for name, idx, cnt, line in inits:
        if arrays and arrays[-1][0] == name and idx not in arrays[-1][1] and arrays[-1][3] == line:
            arrays[-1][1].append(idx)
        else:
            arrays.append((name, [idx], cnt, line))
    return arrays, list(sites.values()), walk


def derive(kernel, specs, arch: str = "sm_90a") -> None:
    """Fill ``arrivals_full``, ``arrivals_empty``, ``expect_tx_bytes``, ``tx_delivered`` and
    ``lines`` of each spec (in place) from the code; notes say what could not be derived."""
    import tvm

    from txlab import ir

    by_kernel: dict = {}
    for sp in specs:
        by_kernel.setdefault(sp.kernel, []).append(sp)
    try:
        mod, _ = ir.as_module(kernel, what="txlab.pipelines.from_kernel()")
        funcs = {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)}
        devs = simt.device_functions(kernel, arch)
    except Exception as exc:  # noqa: BLE001 - the declaration-only spec still simulates
        for sp in specs:
            sp.notes.append(
                f"arrival counts not derived from the code (lowering failed: "
                f"{type(exc).__name__}); assumed one arrival per consumer role"
            )
        return
    for kname, ksp in by_kernel.items():
        func = funcs.get(kname) or next(iter(funcs.values()))
        copies = tma_copies(func)
        dev = [f for n, f in devs if n.startswith(kname)] or [f for _, f in devs]
        arrays, sites, walk = [], [], None
        for f in dev:
            a, s, walk = walk_barriers(f)
            arrays += a
            sites += s
        pairs = _pairs_by_slots(ksp, arrays)
        if pairs is None:  # the declaration's slots were not all found: pair arrays of equal depth in order
            pairs = []
            i = 0
            while i + 1 < len(arrays):
                if len(arrays[i][1]) == len(arrays[i + 1][1]):
                    pairs.append((arrays[i], arrays[i + 1]))
                    i += 2
                else:
                    i += 1
        copy_sites = [s for s in sites if s.kind == "copy"]
        for sp, (full, empty) in zip(ksp, pairs):
            _fill(sp, full, empty, sites, copy_sites, copies)
            if walk is not None:
                sp.notes += [f"code walk: {n}" for n in walk.notes[:4]]


def _pairs_by_slots(ksp, arrays):
    """(full array, empty array) per spec, cut out of the code's init slots by where the declaration
    put each barrier (its name and pool element offset, ``spec._slots``). Unnamed barriers of one
    pool (``Pipeline``'s, several pipelines in a row) share a name in the lowered code, so init order
    alone would run them together. None when a spec's slots are not all initialised in the code."""
    flat = [(name, idx, cnt, line) for name, idxs, cnt, line in arrays for idx in idxs]
    pairs = []
    for sp in ksp:
        got = []
        for which in ("full", "empty"):
            name, base, depth = getattr(sp, "_slots", {}).get(which, (None, None, None))
            if base is None or depth is None:
                return None
            want = set(range(base, base + depth))
            hit = [f for f in flat if f[0] == name and f[1] in want]
            if {f[1] for f in hit} != want:
                return None
            hit = [f for f in hit if f[1] in want]
            got.append((name, sorted({f[1] for f in hit}), hit[0][2], hit[0][3]))
        pairs.append(tuple(got))
    return pairs


def _on(site, array) -> bool:
    name, idxs = array[0], set(array[1])
    return any(n == name and x in idxs for n, x in site.slots)


def _first(values):
    vals = [v for v in values if v is not None]
    return vals[0] if vals else None


def _slot_totals(site, array, weight=1) -> dict:
    """What ``site`` brought to each slot of ``array`` over the whole walk (threads x weight)."""
    name, idxs = array[0], array[1]
    totals = {i: 0 for i in idxs}
    for per_slot in site.visits:
        for (n, i), cnt in per_slot.items():
            if n == name and i in totals:
                totals[i] += cnt * weight
    return totals


def _per_phase(totals: dict, phases: dict):
    """(per-phase value, varies between slots) from per-slot totals and the phases of each slot."""
    vals = [totals[i] / phases[i] for i in totals if phases.get(i)]
    if not vals:
        return 0, False
    first = vals[0]
    return (int(first) if float(first).is_integer() else first), any(abs(v - first) > 1e-9 for v in vals)


def _odd_phases(arrive_sites, array, phases) -> list:
    """Phases of ``array``'s slots whose arrivals differ from what most phases get (an arrive skipped or repeated
    in some iterations): ``[{"slot", "phase", "count", "usual", "line"}]`` (``line``: the arrive whose count differs
    there), empty where every phase gets the same or where a site's visits are not one per phase (then they cannot
    be told apart per phase)."""
    from collections import Counter

    name, idxs = array[0], array[1]
    per: dict = {}  # (slot, phase) -> {line: count}
    for s in arrive_sites:
        for i in idxs:
            seq = [c for per_slot in s.visits for (n, j), c in per_slot.items() if n == name and j == i]
            if not seq:
                continue
            if len(seq) != phases.get(i, 0):
                return []
            for ph, c in enumerate(seq):
                d = per.setdefault((i, ph), {})
                d[s.line] = d.get(s.line, 0) + c
    if not per:
        return []
    totals = {k: sum(v.values()) for k, v in per.items()}
    usual = Counter(totals.values()).most_common(1)[0][0]
    usual_by_line = next(d for k, d in per.items() if totals[k] == usual)  # a phase that got the usual count
    out = []
    for (i, ph), t in sorted(totals.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if t == usual:
            continue
        lines = per[(i, ph)]
        diff = [ln for ln in set(lines) | set(usual_by_line) if lines.get(ln, 0) != usual_by_line.get(ln, 0)]
        stage = list(idxs).index(i)  # the slot's place in the ring (idxs are element offsets in the barrier pool)
        out.append({"slot": stage, "phase": ph, "count": t, "usual": usual, "line": diff[0] if diff else None})
    return out


def _share(site, array, phases, weight=1):
    """A site's contribution per phase, averaged over the slots (for attribution)."""
    t = _slot_totals(site, array, weight)
    tot = sum(t.values())
    ph = sum(phases.get(i, 0) for i in t)
    if not ph:
        return 0
    v = tot / ph
    return int(v) if float(v).is_integer() else round(v, 3)


def _phases(full_sites, array):
    """Phases each slot of the full barrier goes through: visits of the producer's first
    full-barrier site (one per fill of the slot)."""
    name, idxs = array[0], array[1]
    out = {i: 0 for i in idxs}
    if not full_sites:
        return out
    for per_slot in full_sites[0].visits:
        for n, i in per_slot:
            if n == name and i in out:
                out[i] += 1
    return out


def _never(code, walked: bool) -> bool:
    """Whether the kernel waits on a barrier and provably never arrives on it: no arrive / expect_tx-arrive / commit
    in the code as written (``code``: what find_pipelines read, ``spec._code``), none in the walk of the lowered code
    (``walked``), and no call the reading does not know takes its address."""
    return bool(code) and bool(code["waits"]) and not code["arrives"] and not code["unknown"] and not walked


def _fill(sp, full, empty, sites, copy_sites, copies):
    notes = sp.notes
    notes[:] = [n for n in notes if not n.startswith("consumers = init_empty")]
    lines: dict = {
        "init_full": full[3],
        "init_empty": empty[3],
        "arrive_full": [],
        "arrive_empty": [],
        "expect_tx": [],
        "copy": [],
    }
    full_sites = [s for s in sites if s.kind != "copy" and _on(s, full)]
    empty_sites = [s for s in sites if s.kind != "copy" and _on(s, empty)]
    producer_sites = full_sites or [s for s in copy_sites if _on(s, full)]
    phases = _phases(producer_sites, full)
    # the empty slot i is released once per fill of full slot i (same ring index)
    ephases = {e: phases.get(f, 0) for f, e in zip(full[1], empty[1])}
    af = ae = 0
    expect = 0
    expect_known = True
    who_full, who_empty = [], []
    for group, array, ph, who in ((full_sites, full, phases, who_full), (empty_sites, empty, ephases, who_empty)):
        arrive = [s for s in group if s.kind in ("arrive", "arrive_expect_tx", "commit")]
        for s in group:
            if s.uncertain:
                notes.append(
                    f"line {s.line if s.line is not None else '?'}: a guard around this {s.kind} "
                    "depends on a value read from memory; assumed every thread of the branch "
                    "executes it"
                )
        if arrive:
            totals = {i: 0 for i in array[1]}
            for s in arrive:
                for i, v in _slot_totals(s, array).items():
                    totals[i] += v
            n, varies = _per_phase(totals, ph)
            odd = _odd_phases(arrive, array, ph)
            if odd:
                n = odd[0]["usual"]  # what most phases get: the simulated protocol; the others are the finding
                sp.uneven[("full" if array is full else "empty")] = odd
            if varies and not odd:
                notes.append(
                    f"{'full' if array is full else 'empty'}: arrivals per phase differ between "
                    f"slots; slot 0's {n} is used"
                )
            for s in arrive:
                share = _share(s, array, ph)
                if share and s.remote:
                    notes.append(
                        f"line {s.line}: counts arrivals on CTA 0's barrier made through mapa by CTA(s) "
                        f"{sorted(s.remote)} of the cluster as well"
                    )
                if share:
                    who.append((s.line, share, s.kind))
                    lines["arrive_full" if array is full else "arrive_empty"].append(s.line)
            if array is full:
                af = n
            else:
                ae = n
        if array is full:
            totals = {i: 0 for i in array[1]}
            for s in group:
                if s.kind not in ("arrive_expect_tx", "expect_tx"):
                    continue
                lines["expect_tx"].append(s.line)
                b = _first(s.bytes)
                if b is None:
                    expect_known = False
                    notes.append(
                        f"line {s.line if s.line is not None else '?'}: expect_tx's byte count is "
                        "not a constant; assumed it equals the bytes the copies deliver"
                    )
                    continue
                per_thread = b // max(1, _first(s.counts) or 1)
                for i, v in _slot_totals(s, array, per_thread).items():
                    totals[i] += v
            expect, _ = _per_phase(totals, ph)
    delivered = 0
    delivered_known = True
    dtotals = {i: 0 for i in full[1]}
    for k, s in enumerate(copy_sites):
        if not _on(s, full):
            continue
        src = copies[k] if k < len(copies) and len(copies) == len(copy_sites) else None
        if src is None or src["bytes"] is None:
            delivered_known = False
            notes.append(
                f"line {src['line'] if src else s.line or '?'}: the bytes this TMA copy delivers "
                "could not be read from its box; assumed they equal expect_tx"
            )
            continue
        per = src["bytes"] * (src["multicast"] or s.mcast or 1)
        if src["multicast"] is None and s.mcast:
            src = {**src, "multicast": s.mcast}  # a runtime mask, evaluated by the walk
        if s.remote:
            notes.append(
                f"line {src['line']}: this TMA copy also completes on CTA 0's barrier when CTA(s) "
                f"{sorted(s.remote)} of the cluster issue it (a mapa'd mbarrier, cta_group={src.get('cta_group') or 1})"
            )
        for i, v in _slot_totals(s, full, per).items():
            dtotals[i] += v
        n = _share(s, full, phases)
        lines["copy"].append(src["line"])
        sp.copies.append(
            {
                "line": src["line"],
                "box": src["box"],
                "dtype": src["dtype"],
                "bytes": src["bytes"],
                "threads": n,
                "multicast": src["multicast"],
                "cta_group": src.get("cta_group"),
            }
        )
        if n != 1 + len(s.remote):
            notes.append(
                f"line {src['line']}: {n} threads issue this TMA copy per phase, so it "
                f"delivers {n} x {src['bytes']} bytes"
            )
    if lines["copy"]:
        delivered, _ = _per_phase(dtotals, phases)
    # a barrier the code waits on and never arrives on (no arrive in the kernel as written, nor one the walk found,
    # and its address reaches no call the reading does not know): zero arrivals per phase, read, not assumed
    code = getattr(sp, "_code", {})
    none_full, none_empty = (_never(code.get(w), bool(who)) for w, who in (("full", who_full), ("empty", who_empty)))
    sp.arrivals_full = af if who_full else (0 if none_full else None)
    sp.arrivals_empty = ae if who_empty else (0 if none_empty else None)
    sp.expect_tx_bytes = expect if (expect_known and lines["expect_tx"]) else None
    sp.tx_delivered = delivered if (delivered_known and lines["copy"]) else None
    full_code = code.get("full") or {}
    if sp.expect_tx_bytes is None and sp.tx_delivered and not lines["expect_tx"] and not full_code.get("expects"):
        # the copies complete bytes on the full barrier and nothing announces them: an expect of 0, read
        sp.expect_tx_bytes = 0
    for attr in ("arrivals_full", "arrivals_empty", "expect_tx_bytes", "tx_delivered"):
        v = getattr(sp, attr)
        if v is not None and not isinstance(v, int):
            notes.append(
                f"{attr} is not a whole number per phase ({v:.3g}): the code's counts do not "
                "divide evenly over the phases; rounded"
            )
            setattr(sp, attr, int(round(v)))
    sp.lines = {**sp.lines, **lines}  # the start phases find_pipelines read stay
    sp.arrive_sites = {"full": who_full, "empty": who_empty}
    if who_empty:
        notes.append(
            "empty: "
            + "; ".join(f"{n} arrival(s) per phase at line {ln}" for ln, n, _ in who_empty)
            + f" (init_empty={sp.init_empty})"
        )
    elif none_empty:
        notes.append(f"empty: no thread arrives on it anywhere in the kernel (init_empty={sp.init_empty})")
    else:
        notes.append(
            f"no arrive on the empty barriers was found in the code; assumed "
            f"init_empty={sp.init_empty} arrivals per phase"
        )
    if who_full:
        notes.append(
            "full: "
            + "; ".join(f"{n} arrival(s) per phase at line {ln}" for ln, n, _ in who_full)
            + f" (init_full={sp.init_full})"
        )
    elif none_full:
        notes.append(f"full: no thread arrives on it anywhere in the kernel (init_full={sp.init_full})")
    if sp.expect_tx_bytes is not None or sp.tx_delivered is not None:
        announced = (
            "none (no expect_tx)"
            if sp.expect_tx_bytes == 0 and not lines["expect_tx"]
            else f"{sp.expect_tx_bytes} (line {', '.join(str(x) for x in lines['expect_tx']) or '?'})"
        )
        notes.append(
            f"tx bytes per phase: expect_tx {announced}, delivered "
            f"{sp.tx_delivered} (line {', '.join(str(x) for x in lines['copy']) or '?'})"
        )
