"""One emulated launch: the lowered kernel (what TVM's CUDA codegen sees), its arguments bound into
the address space, and the CTAs run one after another (each CTA's threads vectorised).

Execution model: a CTA runs as one lockstep group of all its threads when the kernel never waits
on another part of the CTA (no mbarrier wait, no flag polling); otherwise each warp is its own
group (a generator advanced until it blocks), so producer and consumer warps progress
independently. CTAs run sequentially in launch order (blockIdx.x fastest), except the CTAs of one
cluster (a launch with cluster dims), which run together in one scheduler (txlab.emulator.cluster);
so a kernel whose CTAs wait on each other across clusters (grid barriers, inter-CTA flags)
deadlocks here -- reported, not hung.
"""

from __future__ import annotations

import time

import numpy as np

from txlab import ir
from txlab.build import COOPERATIVE_DECLARATION, NOT_COOPERATIVE_FAULT
import txlab.emulator.memory as M
import txlab.emulator.cta_overlaps as cta_overlaps
import txlab.emulator.cta_reads as cta_reads
import txlab.emulator.diverged as diverged
import txlab.emulator.warp_sync as warp_sync
from txlab.emulator.interpreter import ATOMIC_PREFIXES as _ATOMIC_PREFIXES
from txlab.emulator.interpreter import Compiler, Group, _key, is_poll
from txlab.emulator.cta_reads import CtaReads
from txlab.emulator.races import EpochRaceChecker, GlobalRaces, RaceChecker
from txlab.emulator.warp_global import WarpGlobalRaces
import txlab.emulator.resident as resident
from txlab.emulator.result import Finding
from txlab.errors import EmulationFault, NotEmulatedError

_INDEX_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z")
MAX_FINDINGS = 200
MAX_BATCH_LANES = 1 << 16  # lanes of one batch of CTAs (numpy vectors of this length)
MAX_BATCH_SHARED = 64 << 20  # bytes of shared memory of one batch
MAX_BATCH_RACE = 256 << 20  # bytes of race-checker state of one batch


class Stop(Exception):
    """Internal: a finding with stop=True, or a deadlocked CTA."""


class Program:
    def __init__(
        self,
        func,
        kernel_name: str,
        launch: dict,
        *,
        check: bool,
        stop: bool,
        tensormaps=None,
        filename: str | None = None,
        fast_math: bool = True,
        axes: dict | None = None,
    ):
        import txlab.emulator.ops as ops
        import txlab.emulator.bulk_copy  # noqa: F401
        import txlab.emulator.cluster  # noqa: F401  (importing them registers their ops' handlers)
        import txlab.emulator.debug  # noqa: F401
        import txlab.emulator.iket  # noqa: F401
        import txlab.emulator.mathfns  # noqa: F401
        import txlab.emulator.mma  # noqa: F401
        import txlab.emulator.packed_math  # noqa: F401
        import txlab.emulator.ptx_alu  # noqa: F401
        import txlab.emulator.ptx_farith  # noqa: F401
        import txlab.emulator.ptx_floatmath  # noqa: F401
        import txlab.emulator.ptx_iarith  # noqa: F401
        import txlab.emulator.ptx_mbarrier  # noqa: F401
        import txlab.emulator.ptx_memory  # noqa: F401
        import txlab.emulator.timers  # noqa: F401
        import txlab.emulator.tcgen05  # noqa: F401
        import txlab.emulator.tma  # noqa: F401
        import txlab.emulator.tmem  # noqa: F401
        import txlab.emulator.wgmma  # noqa: F401

        self.func = func
        self.kernel_name = kernel_name
        self.deadline = None  # (perf_counter deadline, timeout_s) of emulate(timeout_s=...)
        self.launch = launch
        self.check = check
        self.stop = stop
        self.tensormaps = tensormaps or {}
        self.filename = filename
        self.fast_math = fast_math  # the build emulated: nvcc --use_fast_math (txlab's default) or IEEE
        self.axes = axes or {}  # the user's multi-dimensional accesses, checked per axis (txlab.emulator.axes)
        self.buffers: dict = {}
        self.extents: dict = {}
        self.shared_static: list = []
        self.uses_dyn = False
        self.findings: list[Finding] = []
        self._finding_keys: dict = {}
        self._lane_races: set = set()  # keys of race findings between lanes of one warp (replaced by a cross-warp one)
        self.notes: list[str] = []
        self.stats = {"instructions": 0, "lane_instructions": 0}
        cl = tuple(int(v) for v in (launch.get("cluster") or ()))
        self.cluster_dims = (cl + (1, 1, 1))[:3]
        self.running_ctas: list = []  # the CTAs running now (one, or a cluster's): the global timer
        self.ctas_after = 0  # CTAs of the launch that may not have run yet (see run)
        self.warp_steps_done = 0  # warp-instructions of the CTAs already run (txlab.emulator.timers)
        self.index_cache: dict = {}  # thread-index lane vectors, shared by CTAs of one shape (read-only)
        self.call_handlers = ops.HANDLERS
        self.blocking_handlers = ops.BLOCKING
        polls = _polls(func.body)
        if polls:  # lanes parked in a poll meet the others at a shuffle too (txlab.emulator.diverged)
            meets = {n: diverged.meeting(ops.HANDLERS[n], masked) for n, masked in ops.WARP_MEETS.items()}
            self.blocking_handlers = {**ops.BLOCKING, **meets}
        self.blocking_ops = set(self.blocking_handlers)
        self.blocking_nodes: set = set()
        self.blocking_in: dict = {}
        self._find_blocking(func.body)
        names = {getattr(n.op, "name", "") for n in ir.walk(func.body) if getattr(n, "op", None) is not None}
        self.warp_mode = bool(names & ops.WARP_MODE_OPS)
        self.uses_tcgen05 = any(nm.startswith("tirx.ptx.tcgen05") for nm in names)
        # a wait on another part of the grid (a poll of global memory): the launch's CTAs run resident together
        # (txlab.emulator.resident), never one after another nor in lockstep batches
        self.grid_sync = "tirx.cuda.grid_sync" in names  # a grid barrier: every CTA resident at once
        self.grid_waits = polls or "tirx.cuda.wait_until" in names or self.grid_sync
        self.grid_arrivals: dict = {}  # grid_sync: k -> the CTAs that reached their k-th grid barrier
        self.resident_window = None  # CTAs the GPU holds at once (runner: from threads, shared memory, registers)
        self.partial_grid = None  # (CTAs run, CTAs in the grid) of a resident run that ctas= made partial
        self.grid_ctas = 0
        self.cooperative = bool((launch or {}).get("cooperative"))
        self.batchable = not any(nm.startswith(ops.NO_BATCH_PREFIXES) for nm in names) and not self.grid_waits
        self.global_races = None  # atomics in global memory: txlab.emulator.races.GlobalRaces
        self._atomic_roots: set = set()
        self.cta_serial = 0
        if check and any(nm.startswith(_ATOMIC_PREFIXES) for nm in names):
            self.global_races = GlobalRaces(self._global_race_found)
            self._atomic_roots = _atomic_roots(func.body)
        # a plain load of bytes another CTA stores, no grid barrier between (txlab.emulator.cta_reads)
        self.cta_reads = CtaReads(self._cta_read_found, self.notes) if check and cta_reads.applies(names) else None
        # plain global accesses of two warps of one CTA, nothing ordering them (txlab.emulator.warp_global)
        self.warp_global = WarpGlobalRaces(self._warp_global_found, self.notes, self.grid_sync) if check else None
        # plain stores of two CTAs to one global byte, where nothing can order CTAs (txlab.emulator.cta_overlaps)
        overlaps = check and cta_overlaps.applies(names)
        if overlaps and int(np.prod(self.cluster_dims)) > 1:  # what orders a cluster's CTAs beyond the names
            overlaps = not cta_overlaps.cluster_orders(func.body)
        self.cta_overlaps = cta_overlaps.CtaOverlaps(self._overlap_found, self.notes) if overlaps else None
        self.compiler = Compiler(self)
        self.body = self.compiler.kernel_body(func.body)  # a generator function
        self.static_smem = self.compiler.static_smem
        self.line_quality = (self.compiler.lines_own, self.compiler.lines_total)

    def _find_blocking(self, body):
        """Statements whose expressions call a blocking op (cta_sync, mbarrier_wait, ...)."""
        names = self.blocking_ops
        for node in ir.walk(body):
            t = type(node).__name__
            if t in ("Bind", "Evaluate", "BufferStore"):
                exprs = [getattr(node, "value", None)] + list(getattr(node, "indices", []) or [])
                found = []
                for e in exprs:
                    if e is None:
                        continue
                    for n in ir.walk(e):
                        if type(n).__name__ == "Call" and getattr(n.op, "name", None) in names:
                            found.append(n)
                if found:
                    found.reverse()  # inner calls first (walk is pre-order)
                    self.blocking_in[_key(node)] = found
                    self.blocking_nodes.update(_key(n) for n in found)
        self._keep_alive = list(ir.walk(body))  # ids above stay valid while the program lives

    # ---- findings ----------------------------------------------------------------------------
    def finding(
        self,
        kind,
        message,
        *,
        line=None,
        other_line=None,
        cta=None,
        threads=(),
        index=(),
        buffer=None,
        count=1,
        key=None,
    ):
        k = key or (kind, line, other_line, buffer)
        prev = self._finding_keys.get(k)
        if prev is not None:
            prev.count += count
            return prev
        f = Finding(
            kind,
            message,
            line=line,
            other_line=other_line,
            cta=cta,
            threads=[int(t) for t in list(threads)[:8]],
            index=[int(i) for i in list(index)[:8]],
            buffer=buffer,
            count=count,
        )
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(f)
        self._finding_keys[k] = f
        if self.stop and kind != "note":
            raise EmulationFault(f)
        return f

    def count_loop(self, g, n):
        pass

    def _global_race_found(self, r):
        (k1, l1, t1, c1), (k2, l2, t2, c2) = r["first"], r["second"]
        l1 = l1 if l1 is not None and l1 >= 0 else None
        l2 = l2 if l2 is not None and l2 >= 0 else None
        where = (
            "the same CTA, with no barrier between them"
            if c1 == c2
            else "different CTAs, which nothing in the launch orders"
        )
        self.race_finding(
            "global_race",
            f"global-memory race: {k1} by thread {t1} of CTA {c1} (line {l1}) and {k2} by thread {t2} of CTA "
            f"{c2} (line {l2}) of byte {r['addr']} of {r['region']}: {where} (an atomic does not order a plain "
            f"access to the same address; separate them with a barrier, or a second kernel across CTAs"
            + (
                "; a plain read that only seeds a compare-and-swap loop is benign where the loop retries with "
                "the value the CAS returns: make it an atomic read (atomic_add of 0) to say so"
                if "read" in {k1, k2}
                else ""
            )
            + ")",
            r,
            c2,
            buffer=r["region"],
        )

    def _cta_read_found(self, r):
        (k1, l1, t1, c1), (k2, l2, t2, c2) = r["first"], r["second"]
        sync = " (a grid_sync between them orders every CTA's accesses)" if self.grid_sync else ""
        self.race_finding(
            "global_race",
            f"global-memory race between CTAs: {k1} by thread {t1} of CTA {c1} (line {l1 or None}) and {k2} by thread "
            f"{t2} of CTA {c2} (line {l2 or None}) of byte {r['addr']} of {r['region']}, with no grid barrier between "
            f"them: nothing else in the launch orders its CTAs, so the value read depends on which runs first{sync}. "
            "Separate the phases with Tx.cuda.grid_sync() in a cooperative launch, or with a second kernel",
            r,
            c2,
            buffer=r["region"],
        )

    def _warp_global_found(self, r):
        (k1, l1, t1, c1), (k2, l2, t2, _) = r["first"], r["second"]
        unit = f"element {r['addr'] // r['unit']}" if r["unit"] > 1 else "byte"
        where = f"{unit} (byte {r['addr']}) of {r['region']}"
        if r.get("warp") is not None:  # two lanes of one warp (as txlab/emulator/lane_hazards.py for shared memory)
            message = (
                f"global-memory race within warp {r['warp']} of CTA {c1}: {k1} by thread {t1} (line {l1}) and {k2} by "
                f"thread {t2} (line {l2}) of {where} with no __syncwarp() between them: lanes of a warp are scheduled "
                "independently since Volta, so only __syncwarp (or a barrier) orders them; put Tx.cuda.warp_sync() "
                "between the two accesses"
            )
        else:
            rmw = {k1, k2} == {"read", "write"} and l1 == l2
            message = (
                f"global-memory race between warps of CTA {c1}: {k1} by thread {t1} (line {l1}) and {k2} by thread "
                f"{t2} (line {l2}) of {where}, with no barrier between them (threads of different warps): the "
                "emulator's lockstep is one order, a GPU's warps run in any. "
                + (
                    "A read-modify-write by several threads loses updates: make it atomic (Tx.cuda.atomic_add), or "
                    "give each thread its own element"
                    if rmw
                    else "Order them with a barrier (Tx.cuda.cta_sync()) between the two accesses, or give each warp "
                    "its own elements"
                )
            )
        self.race_finding("global_race", message, r, c1, buffer=r["region"])

    def _overlap_found(self, r):
        (_, l1, t1, c1, v1), (_, l2, t2, c2, v2) = r["first"], r["second"]
        self.finding(
            "global_race",
            f"CTAs {c1} and {c2} leave different values in element {r['elem']} of {r['region']} ({r['dtype']}): thread {t1} of "
            f"CTA {c1} stores {v1!s} (line {l1}), thread {t2} of CTA {c2} stores {v2!s} (line {l2}). Nothing orders "
            "the CTAs of one launch (a GPU runs them in any order, or at once), so which value is left is up to the "
            "scheduler: an index that leaves out the CTA's own (T.cta_id) or tiles that overlap. Give each CTA its "
            "own elements, or combine the values with atomics",
            line=l2,
            other_line=l1,
            cta=c2,
            threads=[t1, t2],
            index=[r["elem"]],
            buffer=r["region"],
            count=r["count"],
            key=("global_race", l1, l2, "ctas", r["region"]),
        )

    def race_finding(self, kind, message, r, cta, buffer=None):
        """The finding of race record ``r`` (``first``/``second`` = (kind, line, thread, ...)) at its
        second access's line, keyed by both accesses so each pair of lines is reported once."""
        (k1, l1, t1), (k2, l2, t2) = r["first"][:3], r["second"][:3]
        l1 = l1 if l1 is not None and l1 >= 0 else None
        l2 = l2 if l2 is not None and l2 >= 0 else None
        key = (kind, l1, l2, k1, k2)
        prev = self._finding_keys.get(key)
        if prev is not None and key in self._lane_races and r.get("warp") is None:
            # the same two lines race across warps too: that report (a barrier's fix covers both) replaces it
            self._lane_races.discard(key)
            prev.message, prev.threads, prev.index, prev.buffer, prev.cta = message, [t1, t2], [r["addr"]], buffer, cta
        elif prev is None and r.get("warp") is not None:
            self._lane_races.add(key)
        return self.finding(
            kind,
            message,
            line=l2,
            other_line=l1,
            cta=cta,
            threads=[t1, t2],
            index=[r["addr"]],
            buffer=buffer,
            count=r["count"],
            key=key,
        )

    def _track_atomic_targets(self, args_env, space):
        for region in _regions_of(self._atomic_roots, args_env, space):
            self.global_races.track(region)

    def _global_race(self, g, region, e, lm, dt, write, line):
        byte, tids = _lane_bytes(g, e, lm, dt)
        self.global_races.access(g, region, byte, tids, write, line)

    # ---- memory ------------------------------------------------------------------------------
    def _resolve(self, g, base, elem, dt, line, info, write):
        """Region and element indices (into region.view(dt)) for the active lanes; reports and drops
        out-of-bounds lanes. Returns (region, elem_index, lane_mask) with elem_index shaped like elem."""
        cta = g.cta
        isz = dt.itemsize
        if not _is_uniform(base):
            return self._resolve_per_lane(g, base, elem, dt, line, info, write)
        region = cta.space.find(int(base))
        if region is None:
            raise NotEmulatedError(f"access through a pointer that points nowhere ({info['name']})", lineno=line)
        boff = int(base) - region.base
        if boff % isz:
            raise NotEmulatedError(f"misaligned {info['name']} (byte offset {boff} of {dt})", lineno=line)
        e = np.asarray(elem).astype(np.int64) + (boff // isz)
        n = region.nbytes // isz
        mask = g.mask
        out = (e < 0) | (e >= n)
        extent = info.get("static_extent")
        if extent is not None and region.kind == "shared" and boff == extent[0]:
            self._past_buffer(g, e - boff // isz, extent[1] // isz, out, dt, line, info, write)
        if not out.any():
            return region, e, None
        bad = out
        if mask is not None and e.ndim >= 1 and e.shape[0] == g.L:
            bad = out & (mask if e.ndim == 1 else mask[:, None])
        if bad.any():
            self._oob(g, region, e, bad, n, dt, line, info, write)
        e = np.where(out, 0, e)
        lm = ~out if e.ndim <= 1 else ~out.any(axis=1)
        return region, e, lm

    def _resolve_per_lane(self, g, base, elem, dt, line, info, write):
        base = np.asarray(base).astype(np.uint64)
        regions = g.cta.space.find_many(base)
        ids = np.unique(regions[g.active()] if g.mask is not None else regions)
        if ids.size != 1 or ids[0] < 0:
            raise NotEmulatedError(f"per-thread pointers into several regions ({info['name']})", lineno=line)
        region = g.cta.space.regions[int(ids[0])]
        boff = (base - np.uint64(region.base)).astype(np.int64)
        if np.any(boff % dt.itemsize):
            raise NotEmulatedError(f"misaligned per-thread pointer ({info['name']})", lineno=line)
        e = np.asarray(elem).astype(np.int64) + (
            boff // dt.itemsize if np.ndim(elem) < 2 else (boff // dt.itemsize)[:, None]
        )
        n = region.nbytes // dt.itemsize
        out = (e < 0) | (e >= n)
        if not out.any():
            return region, e, None
        bad = out
        if g.mask is not None:
            bad = out & (g.mask if e.ndim == 1 else g.mask[:, None])
        if bad.any():
            self._oob(g, region, e, bad, n, dt, line, info, write)
        e = np.where(out, 0, e)
        lm = ~out if e.ndim <= 1 else ~out.any(axis=1)
        return region, e, lm

    def _past_buffer(self, g, e, n, out, dt, line, info, write):
        """Lanes whose element ``e`` of a static shared buffer of ``n`` elements lies outside it but inside the CTA's
        shared memory (``out``: those outside that too, reported as out of bounds): on a GPU they read or write
        the neighbouring buffer's bytes, silently."""
        bad = ((e < 0) | (e >= n)) & ~out
        if g.mask is not None and bad.ndim >= 1 and bad.shape[0] == g.L:
            bad = bad & (g.mask if bad.ndim == 1 else g.mask[:, None])
        if not bad.any():
            return
        threads, cta_idx = self._offenders(g, bad)
        flat_e = e[bad] if bad.ndim else np.array([int(e)])
        first = int(flat_e[0])
        name = info["name"]
        what = _access_name(write)
        side = "before its start" if first < 0 else "past its end"
        neighbour = self.shared_buffer_at(info["static_extent"][0] + first * dt.itemsize)
        self.finding(
            "out_of_bounds",
            f"out-of-bounds {what} of {name}: element {first} of shared buffer {name}, which holds {n} {dt} "
            f"element(s), by thread {int(threads[0]) if threads.size else '?'} of CTA {cta_idx}: {side}, "
            f"into {'buffer ' + neighbour[0] if neighbour else 'other shared memory'} (a GPU "
            f"{_ACCESS_VERB.get(what, 'updates')} those bytes silently): guard the index, or size {name} for it",
            line=line,
            cta=cta_idx,
            threads=threads,
            index=flat_e,
            buffer=name,
            count=_bad_count(g, bad),
            key=("out_of_bounds", line, name, what),
        )

    def shared_buffer_at(self, addr: int):
        """(name, offset) of the static shared buffer holding shared byte ``addr``, or None."""
        for name, off, nbytes in self.shared_static:
            if off <= addr < off + nbytes:
                return name, off
        return None

    @staticmethod
    def _offenders(g, bad) -> tuple:
        """``(threads, CTA index)`` of the lanes ``bad`` marks (per lane, per lane and element, or one flag for
        every active lane): the first offending CTA's threads."""
        if bad.ndim == 0:  # a uniform address: every active lane
            rows = np.arange(g.L) if g.mask is None else np.nonzero(g.mask)[0]
        else:
            rows = np.nonzero(bad if bad.ndim == 1 else bad.any(axis=1))[0]
        threads = g.tid[rows] if rows.size and rows.max() < g.L else rows
        cta_idx = g.cta_of(int(rows[0])) if rows.size and rows.max() < g.L else g.cta.index
        if g.lane_cta is not None and rows.size and rows.max() < g.L:  # report the first CTA's lanes
            first = g.lane_cta[rows] == g.lane_cta[rows[0]]
            threads = threads[first]
        return threads, cta_idx

    def _oob(self, g, region, e, bad, n, dt, line, info, write):
        threads, cta_idx = self._offenders(g, bad)
        flat_e = e[bad] if bad.ndim else np.array([int(e)])
        what = _access_name(write)
        where = (
            f"{region.name}"
            if region.kind == "global"
            else (
                f"the {region.name} (buffer {info['name']}, through a mapa address)"
                if region.kind == "dsmem"
                else f"shared memory (buffer {info['name']})"
            )
        )
        elems = n if region.kind == "global" else region.nbytes
        self.finding(
            "out_of_bounds",
            f"out-of-bounds {what} of {info['name']}: element {int(flat_e[0])} of {where}, "
            + (
                "but the CTA has no shared memory (a generic pointer to global memory taken as a shared address?)"
                if region.kind == "shared" and not (self.static_smem or self.uses_dyn)
                else f"which holds {n} {dt} element(s) ({region.nbytes} bytes)"
            )
            + f", by thread {int(threads[0]) if threads.size else '?'} of CTA {cta_idx}",
            line=line,
            cta=cta_idx,
            threads=threads,
            index=flat_e,
            buffer=info["name"],
            count=_bad_count(g, bad),
            key=("out_of_bounds", line, info["name"], what),
        )
        del elems

    def local_out_of_bounds(self, g, e, bad, n, dt, line, info, write):
        """Lanes ``bad`` (per lane, or per lane and element) index element(s) ``e`` (shaped like ``bad``) of the
        thread-local buffer ``info``, which holds ``n`` elements, outside it; reported as a shared buffer's are
        (:meth:`_past_buffer`). The caller skips those lanes: their load reads 0, their store writes nothing."""
        threads, cta_idx = self._offenders(g, bad)
        flat_e = e[bad]
        first = int(flat_e[0])
        name = info["name"]
        what = _access_name(write)
        side = "before its start" if first < 0 else "past its end"
        self.finding(
            "out_of_bounds",
            f"out-of-bounds {what} of {name}: element {first} of local buffer {name}, which holds {n} {dt} "
            f"element(s), by thread {int(threads[0]) if threads.size else '?'} of CTA {cta_idx}: {side} (a GPU "
            f"{_ACCESS_VERB.get(what, 'updates')} whatever lies there in the thread's local memory, silently): "
            f"guard the index, or size {name} for it",
            line=line,
            cta=cta_idx,
            threads=threads,
            index=flat_e,
            buffer=name,
            count=int(np.count_nonzero(bad)),
            key=("out_of_bounds", line, name, what),
        )

    def atomic_bounds(self, g, base, elem, info, what, line):
        """An atomic ``what`` (``"atomic add"``) on element ``elem`` of buffer ``info`` whose pointer is ``base``
        (the address ``address_of(buf[i])``): its active lanes outside the buffer are reported as a plain
        access's are (:meth:`_resolve`: past a static shared buffer into its neighbour, outside the argument or
        the CTA's shared memory). Returns the lanes inside the buffer's region (bool per lane, or one for every
        lane), the ones the atomic applies; None where every lane is, or the pointer is not one ``_resolve``
        takes (the atomic's own check of its addresses reports those)."""
        if not _is_uniform(base) or isinstance(base, dict):  # a per-lane pointer, a tensor map
            return None
        dt = M.np_dtype(info["dtype"])
        region = g.cta.space.find(int(base))
        if region is None or (int(base) - region.base) % dt.itemsize:
            return None
        return self._resolve(g, base, elem, dt, line, info, what)[2]

    @staticmethod
    def _batched(g, region, e, isz):
        """Element indices into ``region.view`` for a batch of CTAs: each lane's CTA's slice."""
        if region.cta_stride == 0 or g.lane_cta is None:
            return e
        add = g.lane_cta.astype(np.int64) * (region.cta_stride // isz)
        e = np.asarray(e)
        if e.ndim == 2:
            return e + add[:, None]
        return e + add

    def mem_read(self, g, base, idx, off, dt, line, info, plain=False):
        elem = idx if off == 0 else np.asarray(idx) + off
        region, e, lm = self._resolve(g, base, elem, dt, line, info, False)
        view = region.view(dt)
        if lm is not None and not view.size:  # no element of it in range (a CTA with no shared memory): reads 0
            out = np.zeros(np.shape(e), dt)
        else:
            out = view[self._batched(g, region, e, dt.itemsize)]
        if lm is not None:
            out = np.where(lm if out.ndim <= 1 else lm[:, None], out, np.zeros((), dt))
        if region.kind == "shared" and g.cta.races is not None:
            self._race(g, e, lm, dt, False, line, info, plain)
        elif self.global_races is not None and self.global_races.tracks(region):
            self._global_race(g, region, e, lm, dt, False, line)
        reads = [x for x in (self.cta_reads, self.warp_global if plain else None) if x is not None and x.tracks(region)]
        if reads:  # (txlab.emulator.cta_reads, txlab.emulator.warp_global)
            start, tids = _lane_elems(g, e, lm, dt)
            for x in reads:
                x.access(g, region, start, tids, dt.itemsize, False, line)
        return out if out.ndim else out[()]

    def mem_write(self, g, base, idx, off, dt, value, line, info, plain=False):
        elem = idx if off == 0 else np.asarray(idx) + off
        region, e, lm = self._resolve(g, base, elem, dt, line, info, True)
        if region.readonly and g.active().any():  # an active lane writes a read-only argument: an InputError
            region.check_write(line)
        view = region.view(dt)
        v = np.asarray(value)
        if v.dtype != dt:
            v = v.astype(dt)
        e = np.asarray(e)
        m = g.mask
        writes = [
            x for x in (self.cta_reads, self.warp_global if plain else None) if x is not None and x.tracks(region)
        ]
        if writes:  # before the store: does it change them?
            self._cta_write(g, region, e, lm, dt, v, line, writes)
        overlaps = self.cta_overlaps if plain and region.kind == "global" else None
        if e.ndim == 0 and lm is not None and not lm:  # a uniform address outside the region (reported): no store
            g.cta.progress += 1
            return
        if e.ndim == 0 and (region.cta_stride == 0 or g.lane_cta is None):
            # uniform address: every active lane stores; the last active lane's value lands
            landed = None
            if overlaps is not None and g.active().any():  # each CTA's last active lane stores (a batch: several)
                ia = np.nonzero(g.active())[0]
                if g.lane_cta is None:
                    last = ia[-1:]
                else:
                    _, r = np.unique(g.lane_cta[ia][::-1], return_index=True)
                    last = np.sort(ia[::-1][r])
                vals = np.broadcast_to(v, (last.size,)) if v.ndim == 0 else v[last]
                overlaps.store(g, region, np.full(last.size, int(e)), np.asarray(vals, dt), last, dt, line)
            if v.ndim == 0:
                view[int(e)] = v
            else:
                act = np.nonzero(g.active())[0]
                if act.size:
                    view[int(e)] = v[act[-1]]
                    if np.unique(v[act]).size > 1:  # different values: the others read another lane's store
                        landed = int(g.gtid[act[-1]])
            if region.kind == "shared" and g.cta.races is not None:
                self._race(g, np.full(g.L, int(e)), lm, dt, True, line, plain=plain, landed=landed)
            elif region.kind == "dsmem":
                self._dsmem_written(g, region, np.full(g.L, int(e)), lm, dt)
            elif self.global_races is not None and self.global_races.tracks(region):
                self._global_race(g, region, e, lm, dt, True, line)
            g.cta.progress += 1
            return
        race_e = e
        if e.ndim == 0:  # uniform address in a batch of CTAs: one store per CTA (the last lane's)
            e = np.full(g.L, int(e), np.int64)
        e = self._batched(g, region, e, dt.itemsize)
        v = np.broadcast_to(v, e.shape) if v.shape != e.shape else v
        sel = None
        if m is not None and e.shape[0] == g.L:
            sel = m
        if lm is not None:
            sel = lm if sel is None else (sel & lm)
        if overlaps is not None and e.shape[0] == g.L:
            rows = np.broadcast_to(np.arange(g.L).reshape((-1,) + (1,) * (e.ndim - 1)), e.shape)
            es, vs, rs = (e[sel], v[sel], rows[sel]) if sel is not None else (e, v, rows)
            overlaps.store(g, region, es.ravel(), vs.ravel(), rs.ravel(), dt, line)
        if sel is not None:
            view[e[sel]] = v[sel]
        else:
            view[e] = v
        if region.kind == "shared" and g.cta.races is not None:
            self._race(g, race_e if np.ndim(race_e) else np.full(g.L, int(race_e)), lm, dt, True, line, plain=plain)
        elif region.kind == "dsmem":
            self._dsmem_written(g, region, race_e if np.ndim(race_e) else np.full(g.L, int(race_e)), lm, dt)
        elif self.global_races is not None and self.global_races.tracks(region):
            self._global_race(g, region, race_e, lm, dt, True, line)
        g.cta.progress += 1

    def _cta_write(self, g, region, e, lm, dt, v, line, checkers) -> None:
        """A global store's elements and the values they get, to ``checkers`` (:class:`CtaReads`,
        :class:`WarpGlobalRaces`; before the store lands)."""
        ea = np.asarray(e)
        uniform = ea.ndim == 0
        if uniform:
            ea = np.full(g.L, int(ea))
        elif ea.shape[0] != g.L:
            ea = np.broadcast_to(ea, (g.L,) + ea.shape[1:])
        act = g.active() if lm is None else (g.active() & lm)
        vals = np.ascontiguousarray(np.broadcast_to(np.asarray(v, dt), ea.shape)[act]).reshape(-1)
        start, tids = _lane_elems(g, e, lm, dt)
        for x in checkers:
            if x is self.cta_reads:
                x.access(g, region, start, tids, dt.itemsize, True, line, new=vals, uniform=uniform)
            else:
                x.access(g, region, start, tids, dt.itemsize, True, line, new=vals)

    def _race(self, g, e, lm, dt, write, line, info=None, plain=False, landed=None):
        """Race-check an access; a read (``info``: the read's address info) is also checked for bytes
        nothing wrote, per ``info['unwritten']`` (see RaceChecker.access; default True). ``plain``: a
        thread's own load or store (not a collective's), also checked between lanes of a warp."""
        start, tids = _lane_elems(g, e, lm, dt)
        if g.cta.cp_pending:
            self._cp_in_flight(g, *_spread_bytes(start, tids, dt.itemsize), write, line)
        info = info or {}
        g.cta.races.access(
            start,
            tids,
            write,
            line,
            name=info.get("name"),
            unwritten=info.get("unwritten", True),
            lanes=plain,
            landed=landed,
            width=dt.itemsize,
        )

    @staticmethod
    def _dsmem_written(g, region, e, lm, dt):
        """A store into a cluster peer's (or, through its own window, this CTA's) shared memory: not
        race-checked across CTAs, but its bytes count as written there (no never-written read after)."""
        owner = region.owner
        if owner is not None and owner.races is not None:
            owner.races.mark(_lane_bytes(g, e, lm, dt)[0])

    # ---- cp.async copies in flight: their shared bytes may land at any time until the wait ----
    def cp_issued(self, g, base, nbytes, line, info) -> object:
        """Record the shared destination bytes of a ``cp.async`` issued by the active lanes; the
        token returned is passed to :meth:`cp_landed` when its group is waited for."""
        if g.cta.races is None:
            return None
        elems = np.arange(nbytes)[None, :]
        region, e, lm = self._resolve(g, base, elems, np.dtype(np.uint8), line, info, True)
        if region.kind != "shared":
            return None
        byte, tids = _lane_bytes(g, e, lm, np.dtype(np.uint8))
        token = object()
        g.cta.cp_pending[token] = (byte, tids, line)
        return token

    def cp_landed(self, g, token) -> None:
        g.cta.cp_pending.pop(token, None)

    def _cp_in_flight(self, g, byte, tids, write, line):
        for byte0, tids0, line0 in g.cta.cp_pending.values():
            hit = np.isin(byte, byte0)
            if not hit.any():
                continue
            i = int(np.argmax(hit))
            j = int(np.argmax(byte0 == byte[i]))
            if not write:  # the read is this race, not a read of never-written bytes
                g.cta.races.raced_reads.add(-1 if line is None else int(line))
            self.finding(
                "shared_race",
                f"shared-memory race: {'write' if write else 'read'} by thread {int(tids[i])} (line {line}) of "
                f"shared byte {int(byte[i])}, which a cp.async of thread {int(tids0[j])} (line {line0}) is still "
                "copying: the copy may land before or after it (wait for its group with "
                "cp.async.wait_group, then a barrier if another thread copied it)",
                line=line,
                other_line=line0,
                cta=g.cta.index,
                threads=[tids0[j], tids[i]],
                index=[byte[i]],
                key=("shared_race", line0, line, "cp.async", "write" if write else "read"),
            )

    # ---- running -----------------------------------------------------------------------------
    def batch_size(self, nctas: int, threads: int, shared_bytes: int) -> int:
        """How many CTAs run as one lane vector. CTAs of a grid are independent unless they
        communicate, so a kernel that runs in per-CTA lockstep (no mbarrier waits or polling) and
        uses no per-CTA ordered state (mbarriers, TMA, wgmma, CTA reductions through barriers,
        clock reads, clusters) runs many CTAs at once: lanes = CTAs x threads, shared memory one
        slice per CTA. Results are the same as CTA by CTA (per instruction, lanes go in (CTA,
        thread) order, so atomics and stores to one address resolve as in launch order)."""
        import txlab.emulator.ops as ops

        if self.warp_mode or threads % 32 or nctas < 2 or not self.batchable:
            return 1
        cl = self.launch.get("cluster")
        if cl and int(np.prod(cl)) > 1:
            return 1
        b = max(1, MAX_BATCH_LANES // threads)
        if shared_bytes > 1:
            b = min(b, max(1, MAX_BATCH_SHARED // shared_bytes))
            if self.check:  # the (epoch) race checker keeps 30 bytes per shared byte
                b = min(b, max(1, MAX_BATCH_RACE // (shared_bytes * 30)))
        del ops
        return min(b, nctas)

    def _index(self, key, make):
        """A read-only lane vector, built once per key."""
        v = self.index_cache.get(key)
        if v is None:
            v = self.index_cache[key] = make()
            v.flags.writeable = False
        return v

    def lane_cta(self, B, threads):
        return self._index(("lane_cta", B), lambda: np.repeat(np.arange(B, dtype=np.int32), threads))

    def _grid_sync_units(self, units, grid) -> list:
        """A grid_sync launch runs every CTA of the grid (a grid barrier waits for all of them, so ``ctas=`` cannot
        pick some); a launch that is not cooperative is a finding (TVM launches cooperatively only when the kernel's
        ``tirx.kernel_launch_params`` names ``tirx.use_cooperative_launch``)."""
        total = int(np.prod(grid))
        if sum(len(u) for u in units) < total:
            self.notes.append(
                f"ctas= named {sum(len(u) for u in units)} of the grid's {total} CTAs: a grid_sync waits "
                "for every CTA of the launch, so all of them ran"
            )
            gx, gy, _ = (tuple(grid) + (1, 1, 1))[:3]
            full = [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in range(total)]
            if int(np.prod(self.cluster_dims)) > 1:
                from txlab.emulator.cluster import group_into_clusters

                units = group_into_clusters(full, self.cluster_dims)[0]
            else:
                units = [[c] for c in full]
        if not self.cooperative:
            line = next(
                (ir.first_user_line(n, self.filename) for n in ir.calls(self.func.body, "tirx.cuda.grid_sync")), None
            )
            self.finding(
                "grid_sync_not_cooperative",
                "Tx.cuda.grid_sync (cg::this_grid().sync()) in a launch that is not cooperative: CUDA defines a grid "
                "barrier only for a cooperative launch (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_COOPERATIVE), and "
                f"{NOT_COOPERATIVE_FAULT}. Emulated as if it were one; declare it with {COOPERATIVE_DECLARATION} so "
                "that TVM launches it so",
                line=line,
            )
        return units

    def batch_tids(self, B, threads):
        return self._index(("tids", B), lambda: np.tile(np.arange(threads, dtype=np.int32), B))

    def run(self, args_env: dict, space: M.AddressSpace, ctas, grid, block, dyn_bytes: int):
        t0 = time.perf_counter()
        threads = int(np.prod(block))
        static = self.static_smem
        dyn_off = (static + 1023) // 1024 * 1024 if self.uses_dyn else static
        smem = dyn_off + (dyn_bytes if self.uses_dyn else 0)
        B = self.batch_size(len(ctas), threads, smem)
        if self.global_races is not None:
            self._track_atomic_targets(args_env, space)
        if self.cta_reads is not None:  # only the arguments the kernel stores to can be read racily
            self.cta_reads.stored = set(_regions_of(_store_roots(self.func.body), args_env, space))
        if self.warp_global is not None:  # (likewise: only what a plain store reaches can race between warps)
            self.warp_global.stored = set(_regions_of(_store_roots(self.func.body), args_env, space))
        nclus = int(np.prod(self.cluster_dims))
        if self.grid_waits:
            from txlab.emulator.cluster import group_into_clusters
            from txlab.emulator.resident import run as run_resident

            self.cta_overlaps = None  # resident CTAs run interleaved, and their protocol may order them
            if nclus > 1:
                units, added = group_into_clusters(ctas, self.cluster_dims)
                if added:
                    self.notes.append("ctas= named part of a cluster: the whole cluster ran (its CTAs run together)")
            else:
                units = [[tuple(int(v) for v in c)] for c in ctas]
            window = self.resident_window or resident.WINDOW
            ran, total = sum(len(u) for u in units), int(np.prod(grid))
            self.partial_grid = (ran, total) if ran < total and not self.grid_sync else None
            if self.grid_sync:  # a cooperative launch: every CTA resident at once (runner checks that they fit)
                units = self._grid_sync_units(units, grid)
                window = self.grid_ctas = sum(len(u) for u in units)
            ran = run_resident(self, units, grid, block, space, dyn_bytes, Cta, args_env, window)
            ctas = [c for m in units for c in m][:ran]  # admitted in launch order; a deadlock stops admitting
            nclus = 0  # nothing left to run below
        elif nclus > 1:
            from txlab.emulator.cluster import Cluster, group_into_clusters

            # (cta_overlaps: kept where nothing can order the cluster's CTAs -- no cluster barrier, fence, atomic,
            # mapa, remote arrive or multicast -- with each cluster's CTAs compared as one batch)
            clusters, added = group_into_clusters(ctas, self.cluster_dims)
            if added:
                self.notes.append("ctas= named part of a cluster: the whole cluster ran (its CTAs run together)")
            total, done = sum(len(m) for m in clusters), 0
            for members in clusters:
                self.ctas_after = total - done - 1  # a cluster's CTAs share one scheduler, which a spin holds
                cl = Cluster(self, members, grid, block, space, dyn_bytes, Cta)
                cl.run(args_env)
                if self.cta_overlaps is not None:  # the cluster's final values, against the CTAs' before it
                    self.cta_overlaps.close(cl.ctas[0].serial)
                done += len(members)
            ctas = [c for m in clusters for c in m]
        for k in range(0, len(ctas) if nclus == 1 else 0, B):
            part = ctas[k : k + B]
            cta = Cta(self, part[0], grid, block, space, dyn_bytes, batch=part if B > 1 else None)
            # CTAs that may not have run their part yet: the rest of this batch (in lockstep, a branch other CTAs
            # take runs after this one's) and those after it (a cross-CTA wait: atomics.spin_check)
            self.ctas_after = len(ctas) - k - 1
            self.running_ctas = [cta]
            try:
                cta.run(args_env)
                cta.finish()
                if self.cta_overlaps is not None:  # the batch's final values, against the CTAs' before it
                    self.cta_overlaps.close(cta.serial)
            finally:
                self.running_ctas = []
                cta.close()
        self.stats.update(
            {
                "ctas_run": len(ctas),
                "ctas_in_grid": int(np.prod(grid)),
                "threads_per_cta": threads,
                "grid": tuple(grid),
                "block": tuple(block),
                "mode": "per-warp" if self.warp_mode else "per-CTA lockstep",
                "cluster": self.cluster_dims if int(np.prod(self.cluster_dims)) > 1 else None,
                "resident": resident_note(len(ctas), self.grid_sync, self.resident_window) if self.grid_waits else None,
                "ctas_per_batch": B,
                "seconds": time.perf_counter() - t0,
                "dynamic_smem_bytes": dyn_bytes,
                "static_smem_bytes": self.static_smem,
                "statements_with_own_line": self.line_quality[0],
                "statements": self.line_quality[1],
            }
        )


def resident_note(nctas: int, grid_sync: bool = False, window: int | None = None) -> str:
    """How a launch whose CTAs wait on one another ran (``stats['resident']``)."""
    if grid_sync:
        return f"{nctas} CTA(s), all resident at once, interleaved (a cooperative launch: the kernel calls grid_sync)"
    return (
        f"{nctas} CTA(s), up to {window or resident.WINDOW} resident at once (what 132 SMs hold of them), interleaved "
        "(the kernel polls global memory)"
    )


def _bad_count(g, bad) -> int:
    """Accesses an out-of-bounds mask ``bad`` marks (one flag for a uniform address: each active lane's)."""
    if bad.ndim:
        return int(np.count_nonzero(bad))
    return int(np.count_nonzero(g.active())) if bad else 0


def _lane_bytes(g, e, lm, dt):
    """(byte offsets, batch-wide thread of each) of an access's active, in-bounds lanes: element
    indices ``e`` ((L,) or (L, n)) of ``dt`` (for the race checkers)."""
    return _spread_bytes(*_lane_elems(g, e, lm, dt), dt.itemsize)


def _spread_bytes(start, tids, isz: int):
    """(each byte, its thread) of the elements of ``isz`` bytes at byte offsets ``start`` of threads ``tids``."""
    return (start[:, None] + np.arange(isz)).ravel(), np.repeat(tids, isz)


def _lane_elems(g, e, lm, dt):
    """(byte offset of each element, batch-wide thread of each) of an access's active, in-bounds lanes
    (:func:`_lane_bytes`, before it spreads each element over its bytes)."""
    e = np.asarray(e)
    if e.ndim == 0:
        e = np.full(g.L, int(e))
    act = g.active()
    if lm is not None:
        act = act & lm
    if e.shape[0] != g.L:
        e = np.broadcast_to(e, (g.L,) + e.shape[1:])
    ee = e[act]
    tids = g.gtid[act]
    if ee.ndim == 2:
        tids = np.repeat(tids, ee.shape[1])
        ee = ee.ravel()
    return ee.astype(np.int64) * dt.itemsize, tids


def _polls(body) -> bool:
    """Whether a ``while`` condition reads memory through an atomic (a wait for another thread or CTA): such a
    kernel runs its CTAs resident together (txlab.emulator.resident), never in lockstep batches."""
    return any(type(node).__name__ == "While" and is_poll(node) for node in ir.walk(body))


def _atomic_roots(body) -> set:
    """The variables an atomic's address may derive from: buffers, their data pointers and the
    let-bound pointers between (so the global regions atomics reach can be tracked)."""
    seeds: set = set()
    for node in ir.walk(body):
        if type(node).__name__ == "Call" and getattr(node.op, "name", "").startswith(_ATOMIC_PREFIXES):
            for a in node.args:
                seeds |= _vars_in(a)
    return _roots(body, seeds)


def _regions_of(roots, args_env, space) -> list:
    """The regions of the kernel arguments among ``roots``."""
    out = []
    for v in roots:
        val = args_env.get(v)
        if val is None:
            continue
        try:
            region = space.find(int(np.asarray(val).ravel()[0]))
        except (TypeError, ValueError):
            continue
        if region is not None:
            out.append(region)
    return out


def _store_roots(body) -> set:
    """The variables a plain store's buffer may derive from (the global arguments a kernel stores to: the only ones
    whose loads txlab.emulator.cta_reads need track)."""
    seeds: set = set()
    for node in ir.walk(body):
        if type(node).__name__ == "BufferStore":
            seeds.add(node.buffer)
            seeds |= _vars_in(node.buffer.data)
    return _roots(body, seeds)


def _roots(body, seeds: set) -> set:
    """``seeds`` and every variable they are defined from (DeclBuffer data, let-bound pointers), transitively."""
    defs: dict = {}
    for node in ir.walk(body):
        t = type(node).__name__
        if t == "DeclBuffer":
            defs.setdefault(node.buffer, set()).update(_vars_in(node.data))
        elif t in ("Bind", "Let"):
            defs.setdefault(node.var, set()).update(_vars_in(node.value))
    roots = set(seeds)
    todo = list(roots)
    while todo:
        v = todo.pop()
        for d in defs.get(v, ()):
            if d not in roots:
                roots.add(d)
                todo.append(d)
    return roots


def _vars_in(e) -> set:
    out = set()
    for n in ir.walk(e):
        t = type(n).__name__
        if t == "Var":
            out.add(n)
        elif t == "TensorLoad":
            out.add(n.source)
    return out


#: the verb a GPU does to memory, by access (an atomic's: "updates")
_ACCESS_VERB = {"read": "reads", "write": "writes"}


def _access_name(write) -> str:
    """An access's name in a finding: ``"write"``/``"read"`` for a plain store/load (``write`` a bool), else
    ``write`` itself (``"atomic add"``)."""
    if isinstance(write, str):
        return write
    return "write" if write else "read"


def _is_uniform(v) -> bool:
    return not isinstance(v, np.ndarray) or v.ndim == 0


class Cta:
    """One CTA: its shared memory, barriers, mbarriers, race checker and groups."""

    def __init__(
        self, program: Program, index, grid, block, space: M.AddressSpace, dyn_bytes: int, batch: list | None = None
    ):
        self.program = program
        self.index = tuple(int(i) for i in index)
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.nthreads = int(np.prod(block))
        self.space = space
        # a batch of independent CTAs run as one lane vector (Program.batch_size)
        self._batch = np.asarray(batch, dtype=np.int64).reshape(-1, 3) if batch is not None else None
        self.B = 1 if batch is None else len(self._batch)
        static = program.static_smem
        self.dyn_offset = (static + 1023) // 1024 * 1024 if program.uses_dyn else static
        total = max(self.dyn_offset + (dyn_bytes if program.uses_dyn else 0), 1)
        if self.B > 1:
            stride = (total + 1023) // 1024 * 1024
            self.shared = M.Region(
                f"shared memory of CTAs {self.index}..{tuple(int(v) for v in self._batch[-1])}",
                M.SHARED_BASE,
                np.zeros(stride * self.B, np.uint8),
                "shared",
                cta_stride=stride,
                limit=total,
            )
        else:
            self.shared = M.Region(
                f"shared memory of CTA {self.index}", M.SHARED_BASE, np.zeros(total, np.uint8), "shared"
            )
        space.add(self.shared)
        self.nwarps = (self.nthreads + 31) // 32
        self.serial = program.cta_serial  # a launch-wide CTA number (GlobalRaces)
        program.cta_serial += self.B
        seen = [x for x in (program.global_races, program.cta_overlaps, program.cta_reads, program.warp_global) if x]
        if seen:  # (each CTA's index, made once for every checker that names CTAs)
            named = {self.serial + c: self.index_of(c) if batch is not None else self.index for c in range(self.B)}
            for x in seen:
                x.ctas.update(named)
        if not program.check or not (
            program.static_smem
            or program.uses_dyn
            or program.global_races is not None
            or (program.warp_global is not None and program.warp_global.stored)  # its warps' clocks order global
        ):
            self.races = None  # no shared memory: nothing to race on
        else:
            ncl = int(np.prod(program.cluster_dims))
            if program.warp_mode:  # with a cluster: an agent row per CTA's multicast writes
                self.races = RaceChecker(
                    total,
                    self.nwarps,
                    self._race_found,
                    ctas=self.B,
                    threads=self.nthreads,
                    agents=ncl if ncl > 1 else 0,
                    tensor_core=program.uses_tcgen05,
                    report_unwritten=self._unwritten_found,
                )
            else:
                self.races = EpochRaceChecker(
                    total,
                    self.nwarps,
                    self._race_found,
                    ctas=self.B,
                    threads=self.nthreads,
                    report_unwritten=self._unwritten_found,
                )
        self.cp_pending: dict = {}  # cp.async copies in flight (Program.cp_issued)
        self.spins: dict = {}  # line -> (values, rounds) of global atomics that changed nothing (atomics.spin_check)
        self.progress = 0
        self.steps = 0
        self.warp_steps = 0  # warp-instructions issued: the CTA's clock64 (timers)
        self.cluster = None  # the Cluster it runs in (launches with clusters of > 1 CTA)
        self.rank = 0  # %cluster_ctarank
        self.lane_steps = 0
        self.live = self.nthreads * self.B
        self.bars: dict = {}  # barrier id -> state
        self.mbarriers: dict = {}  # shared offset -> MBarrier
        self.clock = 0
        self.groups: list[Group] = []
        self.wgmma_groups: dict = {}
        if self.B > 1:
            self._lane_cta = program.lane_cta(self.B, self.nthreads)
            self._bidx = {d: np.repeat(self._batch[:, k].astype(np.int32), self.nthreads) for k, d in enumerate("xyz")}

    def index_of(self, c: int) -> tuple:
        """(x, y, z) of CTA ``c`` of the batch."""
        return self.index if self._batch is None else tuple(int(v) for v in self._batch[c])

    @property
    def indices(self) -> list:
        """(x, y, z) of each CTA of the batch."""
        if self._batch is None:
            return [self.index]
        return [tuple(int(v) for v in c) for c in self._batch]

    def close(self):
        from txlab.emulator.ops import CTA_EXIT

        for hook in CTA_EXIT:
            hook(self)
        self.space.remove(self.shared)
        self.program.stats["instructions"] += self.steps
        self.program.warp_steps_done += self.warp_steps
        self.program.stats["lane_instructions"] += self.lane_steps

    def finish(self):
        """The CTA's run ended (normally, or stopped at a deadlock): report its never-written shared reads."""
        if self.races is not None:
            self.races.flush()

    def _unwritten_found(self, r, c=0):
        """A read (record ``r`` of the race checker) of shared bytes nothing of this CTA wrote before it."""
        cta_index = self.index_of(c)
        line, addr, through = r["line"], r["addr"], r["name"]
        buffer, what = self._shared_place(addr)
        buffer = buffer or through
        atomic = bool(through) and through.startswith("atomic_")
        if atomic:
            what += f" with {through} (its read-modify-write starts from whatever was there: zero it, then cta_sync())"
        elif through and through != buffer:
            what += f", through {through}"
        at = f"line {line}" if line is not None else "an unknown line"
        self.program.finding(
            "uninitialized_shared_read",
            f"read of never-written shared memory: thread {r['tid']} of CTA {cta_index} read {what} at {at}, and "
            "no thread of this CTA wrote these bytes before this read (no store, atomic, TMA load or cp.async "
            "landed there): on a GPU it reads whatever was left there (the emulator gives 0)",
            line=line,
            cta=cta_index,
            threads=[r["tid"]],
            index=[addr],
            buffer=buffer,
            count=r["count"],
            key=("uninitialized_shared_read", line),
        )

    def _shared_place(self, addr: int) -> tuple:
        """``(static buffer or None, words)`` for shared byte ``addr``: the static buffer holding it, else dynamic
        shared memory, else the bare byte."""
        static = self.program.shared_buffer_at(addr)
        if static is not None:
            return static[0], f"byte {addr - static[1]} of {static[0]} (shared byte {addr})"
        if self.program.uses_dyn and addr >= self.dyn_offset:
            return None, f"byte {addr - self.dyn_offset} of dynamic shared memory (shared byte {addr})"
        return None, f"shared byte {addr}"

    def _race_found(self, r, c=0):
        cta_index = self.index_of(c)
        (k1, l1, t1), (k2, l2, t2) = r["first"], r["second"]
        buffer, where = self._shared_place(r["addr"])
        if r.get("warp") is not None:  # two lanes of one warp (txlab/emulator/lane_hazards.py)
            message = (
                f"shared-memory race within warp {r['warp']}: {k1} by thread {t1} (line {l1}) and {k2} by thread "
                f"{t2} (line {l2}) of {where} with no __syncwarp() between them: lanes of a warp are scheduled "
                "independently since Volta, so only __syncwarp (or a barrier) orders them and the warp-synchronous "
                "idiom is a race; put Tx.cuda.warp_sync() between the two accesses"
            )
        else:
            message = (
                f"shared-memory race: {k1} by thread {t1} (line {l1}) and {k2} by thread {t2} (line {l2}) of "
                f"{where} with no barrier between them (threads of different warps): order them with a barrier "
                "(Tx.cuda.cta_sync()) or an mbarrier wait between the two accesses"
            )
        self.program.race_finding("shared_race", message, r, cta_index, buffer=buffer)

    def index_value(self, tag, g):
        if tag.startswith("cluster"):
            return self._cluster_index(tag)
        if not tag.startswith("blockIdx."):
            return self.program._index((tag, g.L, int(g.tid[0])), lambda: self._thread_index(tag, g))
        if self.B > 1:
            return self._bidx[tag[-1]]
        return np.int32(self.index["xyz".index(tag[-1])])

    def _cluster_index(self, tag):
        dims = self.program.cluster_dims
        d = "xyz".index(tag[-1]) if tag[-1] in "xyz" else None
        if self.B > 1:
            raise NotEmulatedError(f"launch dimension {tag} in a batch of CTAs")
        if tag.startswith("clusterCtaIdx.") and d is not None:
            return np.int32(self.index[d] % dims[d])
        if tag.startswith("clusterIdx.") and d is not None:
            return np.int32(self.index[d] // dims[d])
        raise NotEmulatedError(f"launch dimension {tag}")

    def _thread_index(self, tag, g):
        bx, by, bz = (self.block + (1, 1, 1))[:3]
        t = g.tid
        if tag == "threadIdx.x":
            return (t % bx).astype(np.int32)
        if tag == "threadIdx.y":
            return ((t // bx) % by).astype(np.int32)
        if tag == "threadIdx.z":
            return (t // (bx * by)).astype(np.int32)
        if tag.startswith("blockIdx."):
            if self.B > 1:
                return self._bidx[tag[-1]]
            return np.int32(self.index["xyz".index(tag[-1])])
        raise NotEmulatedError(f"launch dimension {tag}")

    def start(self, args_env):
        """Make the groups (one per warp, or the whole CTA) and their coroutines."""
        prog = self.program
        if prog.warp_mode:
            tids = [np.arange(w * 32, min((w + 1) * 32, self.nthreads), dtype=np.int32) for w in range(self.nwarps)]
        elif self.B > 1:
            tids = [prog.batch_tids(self.B, self.nthreads)]
        else:
            tids = [np.arange(self.nthreads, dtype=np.int32)]
        lane_cta = self._lane_cta if self.B > 1 else None
        self.groups = [Group(self, t, lane_cta) for t in tids]
        self.gens = []
        for g in self.groups:
            g.env.update(args_env)
            self.gens.append(prog.body(g))
        self.gens_live = list(range(len(self.gens)))

    def step(self):
        """Advance every live group once (until it blocks or ends)."""
        for i in list(self.gens_live):
            try:
                if next(self.gens[i]) is warp_sync.WARP_SYNC:  # no branch holds the lanes it waits for
                    from txlab.emulator.ops import warp_synced

                    note = warp_sync.let_pass(self.groups[i], warp_synced)
                    if note and note not in self.program.notes:
                        self.program.notes.append(note)
                    self.progress += 1
            except StopIteration:
                self.gens_live.remove(i)
                self.exit_group(self.groups[i])

    def blocked_groups(self) -> list:
        return [self.groups[i] for i in self.gens_live]

    def stop(self):
        for i in self.gens_live:
            self.gens[i].close()
        self.gens_live = []

    def run(self, args_env):
        self.start(args_env)
        stalls = 0
        while self.gens_live:
            before = self.progress
            self.step()
            if not self.gens_live:
                break
            if self.progress == before:
                stalls += 1
                if stalls >= 2:
                    if not self.deadlock(self.blocked_groups()):
                        self.stop()
                        return
                    stalls = 0
            else:
                stalls = 0

    def exit_group(self, g):
        self.live -= g.n_present()  # (lanes that returned early left already: lanes_exited)
        self.progress += 1
        for bar in list(self.bars.values()):
            bar.maybe_complete(self)

    def lanes_exited(self, g, n: int):
        """``n`` lanes of ``g`` returned early: a barrier waits for the threads that have not exited only."""
        self.live -= n
        self.progress += 1
        for bar in list(self.bars.values()):
            bar.maybe_complete(self)

    def deadlock(self, blocked) -> bool:
        """No group can progress. A CTA barrier some threads wait at is reported as a divergent
        barrier and released (the run continues); an mbarrier wait nobody can satisfy is reported
        and the CTA stops. Returns True when something was released."""
        from txlab.emulator.sync import describe_blocked

        return describe_blocked(self, blocked)
