"""Thread-block clusters: the CTAs of one cluster run together, in one scheduler.

A launch with cluster dims ``(cx, cy, cz)`` (``T.cta_id_in_cluster``, the launch's
``clusterCtaIdx``) runs cluster by cluster; within a cluster every warp (or, for a kernel that
never waits on another part of the grid, every CTA's lockstep group) of every CTA is a coroutine of
one round-robin scheduler, CTAs in rank order. Each CTA has its own shared memory, barriers,
mbarriers and race checker. Modelled:

- ``%cluster_ctarank`` / ``clusterCtaIdx.{x,y,z}``: rank ``x + y*cx + z*cx*cy``, index
  ``blockIdx % cluster dims``; ``clusterIdx.{x,y,z}``: ``blockIdx // cluster dims``; the special registers
  ``T.cuda.mov_sreg`` reads (``T.cluster_id`` lowers to ``%clusterid.x``): :data:`_SREGS`;
- ``cluster_sync`` and ``barrier.cluster.arrive`` / ``.wait``: one barrier of all non-exited
  threads of the cluster; its completion orders each CTA's shared memory like a CTA barrier;
- distributed shared memory: rank r's shared memory is also mapped at the shared::cluster address
  ``(r + 1) << 24`` (txlab.emulator.memory), ``mapa`` maps an own shared address there (generic or
  shared::cluster), loads and stores through the mapped generic pointer reach the other CTA's
  memory (bounds-checked; not race-checked across CTAs), ``getctarank`` reads the rank back;
- remote mbarrier arrives (``mbarrier.arrive.shared::cluster`` on a mapped address) act on the
  owning CTA's mbarrier, and carry the arriving warp's clock to whoever waits on its phase (so a
  TMA multicast into a peer, txlab/emulator/tma.py, is race-checked against what its issuer knew);
  an arrive or multicast that reaches a peer's mbarrier before its ``mbarrier.init`` is reported,
  naming the issuing CTA and the fix (init, ``fence.mbarrier_init``, ``cluster_sync``, then arrive).

No thread of the cluster able to progress is reported, not hung: a cluster barrier some threads
never reach is a ``divergent_barrier`` finding (then released), waits nobody can satisfy (e.g. each
CTA waiting for the other's arrive) a ``deadlock`` finding naming every blocked warp of every CTA,
and the cluster stops. Not modelled (NotEmulatedError): ``ld/st/red.shared::cluster`` PTX,
cluster-scope fences beyond the no-op every fence is.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.memory as M
import txlab.emulator.sync as sync
from txlab.emulator.ops import BLOCKING, HANDLERS, _str
from txlab.emulator.result import cta_finding
from txlab.errors import NotEmulatedError


def members(origin_index, dims) -> list:
    """CTA indices of the cluster containing ``origin_index``, in rank order."""
    cx, cy, cz = dims
    ox, oy, oz = (int(origin_index[k]) // d * d for k, d in enumerate(dims))
    return [(ox + x, oy + y, oz + z) for z in range(cz) for y in range(cy) for x in range(cx)]


def rank_of(index, dims) -> int:
    cx, cy, _ = dims
    x, y, z = (int(index[k]) % d for k, d in enumerate(dims))
    return x + y * cx + z * cx * cy


def group_into_clusters(order, dims) -> tuple:
    """The clusters (each a list of CTA indices in rank order) covering the CTAs of ``order``, in
    the order their first CTA appears; and whether CTAs outside ``order`` were added."""
    seen, out, added = set(), [], False
    wanted = {tuple(int(v) for v in c) for c in order}
    for c in order:
        m = members(tuple(int(v) for v in c), dims)
        if m[0] in seen:
            continue
        seen.add(m[0])
        added = added or any(x not in wanted for x in m)
        out.append(m)
    return out, added


class ClusterBarrier(sync.CtaBarrier):
    """``barrier.cluster``: all non-exited threads of the cluster arrive, then the waiters go on.
    Registered in every member CTA's ``bars`` so a CTA's exiting threads re-check it."""

    def __init__(self, cluster):
        super().__init__("cluster")
        self.cluster = cluster

    def arrive(self, cta, g, n, line, payload=None, combine=None):
        self.arrived += n
        self.groups.append((g, line))
        cta.progress += 1
        self.maybe_complete(cta)

    def maybe_complete(self, cta, force=False):
        if not self.groups:
            return
        if self.arrived >= self.cluster.live or force:
            for c in self.cluster.ctas:
                if c.races is not None:
                    mine = [g.warp_of_lane for g, _ in self.groups if g.cta is c]
                    if mine:
                        c.races.barrier(np.unique(np.concatenate(mine)))
            self.generation += 1
            self.arrived = 0
            self.groups = []
            for c in self.cluster.ctas:
                c.progress += 1


class Cluster:
    """The CTAs of one cluster (rank order), each with its own address space: the globals, its own
    shared memory at SHARED_BASE and every member's shared memory in its cluster window."""

    def __init__(self, program, indices, grid, block, space, dyn_bytes, cta_class):
        self.program = program
        self.dims = program.cluster_dims
        self.ctas = []
        for idx in indices:
            cta = cta_class(program, idx, grid, block, space.fork(), dyn_bytes)
            cta.cluster = self
            cta.rank = len(self.ctas)
            self.ctas.append(cta)
        for cta in self.ctas:
            for r, other in enumerate(self.ctas):
                window = M.Region(
                    f"shared memory of CTA {other.index} (cluster rank {r})",
                    M.SHARED_BASE + M.dsmem_window(r),
                    other.shared.data,
                    "dsmem",
                    limit=other.shared.nbytes,
                )
                window.owner = other  # a store through it counts as written in ``other`` (no never-written read)
                cta.space.add(window)
        self.barrier = ClusterBarrier(self)
        for cta in self.ctas:
            cta.bars["cluster"] = self.barrier

    @property
    def live(self) -> int:
        return sum(c.live for c in self.ctas)

    def start(self, args_env):
        """Make every member's groups and coroutines (a unit of :mod:`txlab.emulator.resident`'s window)."""
        for c in self.ctas:
            c.start(args_env)

    def local_deadlock(self) -> bool:
        """Nothing of the cluster progresses: :meth:`deadlock` (True when something was released)."""
        return self.deadlock()

    def run(self, args_env):
        prog = self.program
        prog.running_ctas = list(self.ctas)
        try:
            self.start(args_env)
            stalls = 0
            while any(c.gens_live for c in self.ctas):
                before = sum(c.progress for c in self.ctas)
                for c in self.ctas:
                    c.step()
                if not any(c.gens_live for c in self.ctas):
                    break
                if sum(c.progress for c in self.ctas) == before:
                    stalls += 1
                    if stalls >= 2:
                        if not self.deadlock():
                            for c in self.ctas:
                                c.stop()
                                c.finish()
                            return
                        stalls = 0
                else:
                    stalls = 0
            for c in self.ctas:
                c.finish()
        finally:
            prog.running_ctas = []
            for c in self.ctas:
                c.close()

    def deadlock(self) -> bool:
        """No group of any CTA of the cluster can progress. Returns True when something was
        released (a divergent CTA or cluster barrier) and the run goes on."""
        prog = self.program
        blocked = [(c, c.blocked_groups()) for c in self.ctas]
        for c, gs in blocked:  # a CTA barrier not every thread of its CTA reaches
            if any(g.blocked and g.blocked[0] == "barrier" and g.blocked[2] is not self.barrier for g in gs):
                return sync.describe_blocked(c, [g for g in gs if not (g.blocked and g.blocked[2] is self.barrier)])
        at = [(c, g) for c, gs in blocked for g in gs if g.blocked and g.blocked[0] == "barrier"]
        others = [(c, g) for c, gs in blocked for g in gs if not (g.blocked and g.blocked[0] == "barrier")]
        if at:
            lines = sorted({g.blocked[1] for _, g in at if g.blocked[1] is not None})
            waiting = sum(g.n_present() for _, g in at)
            cta_finding(
                at[0][0],
                "divergent_barrier",
                f"cluster_sync (barrier.cluster) at line(s) {lines} is waited on by {waiting} thread(s) of the "
                f"cluster's {len(self.ctas)} CTAs but {self.live - waiting} non-exited thread(s) never arrive ("
                + "; ".join(_where(c, g) for c, g in others[:6])
                + "): a cluster barrier inside "
                "thread- or CTA-dependent control flow (on a GPU: a hang). Released so the run can go on.",
                lines[0] if lines else None,
                "cluster",
                threads=np.concatenate([g.tid for _, g in at]),
            )
            self.barrier.maybe_complete(at[0][0], force=True)
            return True
        parts = [_where(c, g) for c, g in others if g.blocked]
        first = next((g.blocked[1] for _, g in others if g.blocked and g.blocked[1] is not None), None)
        prog.finding(
            "deadlock",
            f"no thread of the cluster of CTAs {[c.index for c in self.ctas]} can progress (on a GPU: a hang): "
            + "; ".join(parts[:8])
            + (f"; ... {len(parts) - 8} more" if len(parts) > 8 else ""),
            line=first,
            cta=others[0][0].index if others else None,
            key=("deadlock", first, "cluster"),
        )
        return False


def _where(c, g) -> str:
    b = g.blocked
    if not b:
        return f"CTA {c.index} warp {g.first_warp}"
    if b[0] == "mbarrier":
        return f"CTA {c.index} (rank {c.rank}) warp {g.first_warp} waits (line {b[1]}) for parity {b[3]} of the {b[2].state()}"
    if b[0] == "barrier":
        return f"CTA {c.index} (rank {c.rank}) warp {g.first_warp} waits at line {b[1]} ({sync.bar_name(g)})"
    return f"CTA {c.index} (rank {c.rank}) warp {g.first_warp} polls at line {b[1]}"


# ---- barrier.cluster ------------------------------------------------------------------------
def _barrier(g):
    cl = g.cta.cluster
    if cl is not None:
        return cl.barrier
    bar = g.cta.bars.get("cluster")
    if bar is None:  # no cluster (or a cluster of one CTA): the CTA's own threads
        bar = g.cta.bars["cluster"] = sync.CtaBarrier("cluster")
    return bar


def _arrive(g, line, what):
    cta = g.cta
    bar = _barrier(g)
    if g.mask is not None and g.skipped().any():  # (lanes that returned early have exited: not waited for)
        act = g.tid[g.mask]
        cta_finding(
            cta,
            "divergent_barrier",
            f"{what} reached by {act.size} of {g.n_present()} threads of "
            f"{'warp ' + str(g.first_warp) if cta.program.warp_mode else 'the CTA'} (threads {sync._ranges(act)}); "
            f"threads {sync._ranges(g.tid[g.skipped()])} of CTA {cta.index} skipped it (barrier.cluster is .aligned: "
            f"every thread of a warp must execute it)",
            line,
            "cluster-partial",
            threads=g.tid[g.skipped()],
        )
    gen0 = bar.generation
    bar.arrive(cta, g, g.n_present(), line)  # the group's skipped lanes count as arrived (reported above)
    return bar, gen0


def _wait(g, bar, gen0, line, what):
    while bar.generation == gen0:
        g.blocked = ("barrier", line, bar, what)
        yield
    g.blocked = None
    g.cta.progress += 1


def _cluster_sync(comp, call):
    line = comp.line

    def gen(g):
        bar, gen0 = _arrive(g, line, "cluster_sync")
        yield from _wait(g, bar, gen0, line, "cluster_sync")
        return np.int32(0)

    return gen


def _cluster_arrive(comp, call):
    line = comp.line

    def f(g):
        bar, gen0 = _arrive(g, line, "barrier.cluster.arrive")
        g.slots["cluster_arrived"] = (bar, gen0)
        return np.int32(0)

    return f


def _cluster_wait(comp, call):
    line = comp.line

    def gen(g):
        got = g.slots.pop("cluster_arrived", None)
        if got is None:  # a wait with no arrive before it: waits for the current phase
            bar = _barrier(g)
            got = (bar, bar.generation)
        yield from _wait(g, got[0], got[1], line, "barrier.cluster.wait")
        return np.int32(0)

    return gen


BLOCKING["tirx.cuda.cluster_sync"] = _cluster_sync
BLOCKING["tirx.ptx.barrier_cluster_wait"] = _cluster_wait
HANDLERS["tirx.ptx.barrier_cluster_arrive"] = _cluster_arrive


# ---- distributed shared memory addresses ----------------------------------------------------
def _cluster_size(g) -> int:
    return len(g.cta.cluster.ctas) if g.cta.cluster is not None else 1


def _address_op(comp, call, nvals, what):
    """(strings, value closures, register store, slot key) of ``mapa``/``getctarank``, whose first
    argument is the destination register; None where the operands do not fit."""
    args = list(call.args)
    dest = args[0]
    strs = [_str(a) for a in args if type(a).__name__ == "StringImm"]
    vals = [a for a in args[1:] if type(a).__name__ != "StringImm"]
    if type(dest).__name__ != "TensorLoad" or len(vals) != nvals:
        return None
    key = (what, call.__chandle__())
    store = comp.store(dest.source, list(dest.indices), lambda g: g.slots[key])
    return strs, [comp.expr(v) for v in vals], store, key, M.np_dtype(comp.buffer_info(dest.source)["dtype"])


def _mapa(comp, call):
    ops = _address_op(comp, call, 2, "mapa")
    if ops is None:
        return comp.not_emulated(f"{call.op.name} with these operands")
    strs, (addr_f, rank_f), store, key, out_dt = ops
    generic = "shared::cluster" not in strs
    line = comp.line

    def f(g):
        a = np.broadcast_to(np.asarray(addr_f(g)).astype(np.uint64), (g.L,))
        r = np.broadcast_to(np.asarray(rank_f(g)).astype(np.int64), (g.L,))
        act = g.active()
        off = a - np.uint64(M.SHARED_BASE) if generic else a
        if generic and np.any(act & ((a < np.uint64(M.SHARED_BASE)) | (off >> np.uint64(32) != 0))):
            raise NotEmulatedError("mapa of a generic address outside shared memory", lineno=line)
        n = _cluster_size(g)
        bad = act & ((r < 0) | (r >= n))
        if bad.any():
            lane = int(np.nonzero(bad)[0][0])
            cta_finding(
                g.cta,
                "out_of_bounds",
                f"mapa to CTA rank {int(r[lane])} of a cluster of {n} CTA(s) "
                f"(thread {int(g.tid[lane])} of CTA {g.cta.index}): no such CTA",
                line,
                "mapa",
                threads=g.tid[bad],
            )
        window = ((np.clip(r, 0, None) + 1) << M.DSMEM_SHIFT).astype(np.uint64)
        mapped = window + (off & np.uint64(M.DSMEM_MASK))
        if generic:
            mapped = mapped + np.uint64(M.SHARED_BASE)
        g.slots[key] = mapped.astype(out_dt)
        store(g)
        return np.int32(0)

    return f


def _getctarank(comp, call):
    ops = _address_op(comp, call, 1, "getctarank")
    if ops is None:
        return comp.not_emulated(f"{call.op.name} with these operands")
    strs, (addr_f,), store, key, _ = ops
    generic = call.op.name.endswith("_generic") or "shared::cluster" not in strs

    def f(g):
        a = np.broadcast_to(np.asarray(addr_f(g)).astype(np.uint64), (g.L,))
        off = a - np.uint64(M.SHARED_BASE) if generic else a
        win = (off >> np.uint64(M.DSMEM_SHIFT)).astype(np.int64)
        own = g.cta.rank if g.cta.cluster is not None else 0
        g.slots[key] = np.where(win > 0, win - 1, own).astype(np.uint32)
        store(g)
        return np.int32(0)

    return f


for _n in ("tirx.ptx.mapa", "tirx.ptx.mapa_u64_raw", "tirx.ptx.mapa_u64_shared", "tirx.ptx.mapa_u32"):
    HANDLERS[_n] = _mapa
for _n in ("tirx.ptx.getctarank", "tirx.ptx.getctarank_generic"):
    HANDLERS[_n] = _getctarank


# ---- special registers (mov.u32 %r, %<sreg>: T.cuda.mov_sreg, which TVM emits for T.cluster_id) ---------------------
def _block(g, d: int):
    """``blockIdx`` along axis ``d`` (per lane in a batch of CTAs)."""
    return np.asarray(g.cta.index_value(f"blockIdx.{'xyz'[d]}", g)).astype(np.int64)


def _dim3(v) -> tuple:
    return (tuple(int(x) for x in v) + (1, 1, 1))[:3]


def _rank(g):
    """``%cluster_ctarank``: ``x + y*cx + z*cx*cy`` of the CTA's index within its cluster."""
    cx, cy, cz = g.cta.program.cluster_dims
    return _block(g, 0) % cx + (_block(g, 1) % cy) * cx + (_block(g, 2) % cz) * cx * cy


#: the special registers emulated, by name without the axis: value(group, axis) (axis None for a scalar register);
#: the cluster ones as CUDA defines them for a launch without cluster dims too (a cluster of one CTA)
_SREGS = {
    "tid": lambda g, d: g.cta.index_value(f"threadIdx.{'xyz'[d]}", g),
    "ntid": lambda g, d: _dim3(g.cta.block)[d],
    "laneid": lambda g, d: g.tid % 32,
    "warpid": lambda g, d: g.tid // 32,
    "ctaid": lambda g, d: _block(g, d),
    "nctaid": lambda g, d: _dim3(g.cta.grid)[d],
    "clusterid": lambda g, d: _block(g, d) // g.cta.program.cluster_dims[d],
    "nclusterid": lambda g, d: _dim3(g.cta.grid)[d] // g.cta.program.cluster_dims[d],
    "cluster_ctaid": lambda g, d: _block(g, d) % g.cta.program.cluster_dims[d],
    "cluster_nctaid": lambda g, d: g.cta.program.cluster_dims[d],
    "cluster_ctarank": lambda g, d: _rank(g),
    "cluster_nctarank": lambda g, d: int(np.prod(g.cta.program.cluster_dims)),
    "is_explicit_cluster": lambda g, d: int(bool(g.cta.program.launch.get("cluster"))),
    "lanemask_eq": lambda g, d: np.left_shift(np.uint64(1), (g.tid % 32).astype(np.uint64)),
    "lanemask_lt": lambda g, d: np.left_shift(np.uint64(1), (g.tid % 32).astype(np.uint64)) - np.uint64(1),
    "lanemask_le": lambda g, d: np.left_shift(np.uint64(2), (g.tid % 32).astype(np.uint64)) - np.uint64(1),
    "lanemask_gt": lambda g, d: ~(np.left_shift(np.uint64(2), (g.tid % 32).astype(np.uint64)) - np.uint64(1)),
    "lanemask_ge": lambda g, d: ~(np.left_shift(np.uint64(1), (g.tid % 32).astype(np.uint64)) - np.uint64(1)),
}
_SREG_AXES = {"tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid"}


def _mov_sreg(comp, call):
    """``T.cuda.mov_sreg(bits, name)`` (``mov.u32 %r, %name;``): the special registers of :data:`_SREGS`, as a GPU
    gives them for the launch's grid, block and cluster dims. Others (``%smid``, ``%nwarpid``, clocks) are refused by
    name at the line."""
    bits = int(_str(call.args[0]))
    reg = _str(call.args[1]).lstrip("%")
    base, _, axis = reg.partition(".")
    fn = _SREGS.get(base)
    d = "xyz".index(axis) if axis in ("x", "y", "z") else None
    if fn is None or bits not in (32, 64) or (base in _SREG_AXES) != (d is not None) or (axis and d is None):
        return comp.not_emulated(
            f"tirx.cuda.mov_sreg %{reg}",
            "special registers emulated: %tid, %ntid, %ctaid, %nctaid, %clusterid, %nclusterid, %cluster_ctaid, "
            "%cluster_nctaid (.x/.y/.z), %cluster_ctarank, %cluster_nctarank, %is_explicit_cluster, %laneid, %warpid, "
            "%lanemask_*",
        )
    dt = np.int64 if bits == 64 else np.int32
    unsigned = np.uint64 if bits == 64 else np.uint32

    def f(g):  # the register's bits as the call's int32/int64
        v = np.asarray(fn(g, d))
        out = v.astype(np.int64).astype(np.uint64).astype(unsigned).view(dt)
        return out if out.ndim else out[()]

    return f


HANDLERS["tirx.cuda.mov_sreg"] = _mov_sreg
