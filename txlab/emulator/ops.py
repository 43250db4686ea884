"""The calls of lowered TIRx device code: pointers, warp collectives (shuffles, votes, elect,
reductions), atomics, fences, conversions, barriers and mbarriers, TMA and wgmma.

Each handler is ``handler(compiler, call) -> closure(group)``; blocking ones (``BLOCKING``) give a
generator per group that returns the call's value. Anything not listed here raises
:class:`txlab.errors.NotEmulatedError` when executed.

Atomics are sequentially consistent in a fixed order: CTAs one after another, within a CTA the
groups (warps) in the order the scheduler runs them, within one instruction the lanes in
increasing thread index. Fences are no-ops (the emulator's memory is always coherent); that is
noted once per run.
"""

from __future__ import annotations

import numpy as np

import txlab.emulator.diverged as diverged
import txlab.emulator.memory as M
import txlab.emulator.shuffle_sites as shuffle_sites
import txlab.emulator.sync as sync
import txlab.emulator.warp_sync as warp_sync
from txlab.emulator.nan import canonical, canonicalising
from txlab.emulator.warp_sync import lane_list as _lane_list
from txlab.ir import semantics
from txlab.errors import NotEmulatedError

HANDLERS: dict = {}
BLOCKING: dict = {}
#: calls by the *function name* they carry: ``call_pure_extern("__expf", x)``, ``call_extern(...)``,
#: ``T.cuda.func_call("tvm_builtin_pointer_offset", ...)`` -- handlers take (compiler, call, args),
#: ``args`` being the call's arguments after the name (and, for ``func_call``, before its source)
EXTERNS: dict = {}
#: callables ``hook(cta)`` run when a CTA is done (e.g. TMEM leaks: txlab.emulator.tmem)
CTA_EXIT: list = []
#: ops that make a CTA run warp by warp (some warps wait for others)
WARP_MODE_OPS = {
    "tirx.cuda.mbarrier_wait",
    "tirx.cuda.mbarrier_wait_acquire_cluster",
    "tirx.cuda.wait_until",
    "tirx.ptx.mbarrier_try_wait",
    "tirx.cuda.warpgroup_sync",
    "tirx.ptx.bar_sync_count",
}
#: ops whose state is per CTA and ordered (mbarriers, TMA, wgmma groups, reductions through a
#: barrier's payload, clock counters, clusters): a kernel calling one runs CTA by CTA, not batched
NO_BATCH_PREFIXES = (
    "tirx.ptx.mbarrier",
    "tirx.cuda.mbarrier",
    "tirx.ptx.cp_async_bulk",
    "tirx.cuda.cta_reduce",
    "tirx.cuda.syncthreads_",
    "tirx.cuda.clock",
    "tirx.ptx.wgmma",
    "tirx.cuda.wgmma",
    "tirx.timer",
    "tirx.cuda.timer",
    "tirx.cuda.cluster",
    "tirx.ptx.cluster",
    "tirx.ptx.tcgen05",
    "tirx.ptx.cp_async",
    "tirx.ptx.mapa",
    "tirx.cuda.grid_sync",
    "tirx.ptx.bar",
)


def _registrar(table: dict):
    """A decorator factory: ``@register(*names)`` files the decorated handler in ``table`` under
    each of ``names``."""

    def register(*names):
        def deco(fn):
            for n in names:
                table[n] = fn
            return fn

        return deco

    return register


handler = _registrar(HANDLERS)
blocking = _registrar(BLOCKING)
#: register a handler for calls that name a device function (see ``EXTERNS``)
extern = _registrar(EXTERNS)


def _extern_call(skip_tail: int):
    def build(comp, call):
        name = _str(call.args[0])
        rest = list(call.args[1 : len(call.args) - skip_tail])
        fn = EXTERNS.get(name)
        if fn is None:
            return comp.not_emulated(name, f"a call of the device function {name} ({call.op.name})")
        return fn(comp, call, rest)

    return build


HANDLERS["tirx.call_pure_extern"] = _extern_call(0)
HANDLERS["tirx.call_extern"] = _extern_call(0)
HANDLERS["tirx.cuda.func_call"] = _extern_call(1)  # its last argument is the function's source


def _args(comp, call):
    return [comp.expr(a) for a in call.args]


def _str(arg) -> str:
    return str(getattr(arg, "value", arg))


def _dtype(call) -> str:
    from txlab.emulator.interpreter import _dtype_of

    return _dtype_of(call)


# ---- pointers ------------------------------------------------------------------------------------
@handler("tirx.buffer_data")
def _buffer_data(comp, call):
    buf = call.args[0]
    return lambda g: g.env[buf]


@handler("tirx.address_of")
def _address_of(comp, call):
    load = call.args[0]
    if type(load).__name__ == "Var":  # a tensor map parameter: its host-encoded descriptor
        return lambda g: g.env[load]
    if type(load).__name__ != "TensorLoad":
        return comp.not_emulated("address_of of a non-buffer expression")
    bufvar = load.source
    info = comp.buffer_info(bufvar)
    if info["scope"].startswith("local"):
        name = info["name"] or getattr(bufvar, "name_hint", "") or "?"
        return comp.not_emulated(
            f"the address of thread-local buffer {name!r}",
            "registers have no address here: only TVM's paired casts (Tx.cast of local tiles) are emulated on one",
        )
    idx = comp._flat_index(bufvar, list(load.indices))
    isz = M.np_dtype(info["dtype"]).itemsize
    off = info["elem_offset"]

    def addr(g):
        base = g.env[bufvar]
        i = idx(g)
        if isinstance(base, dict):  # a tensor map parameter
            return base
        return (
            (np.asarray(base).astype(np.int64) + (np.asarray(i).astype(np.int64) + off) * isz).astype(np.uint64)[()]
            if np.ndim(i) == 0
            else np.uint64(base) + ((np.asarray(i).astype(np.int64) + off) * isz).astype(np.uint64)
        )

    return addr


@handler("tirx.ptr_byte_offset")
def _ptr_byte_offset(comp, call):
    """``(dtype*)((char*)data + byte_offset)``: pointers are byte addresses here, so an add (TVM's
    tcgen05.cp and gemm_async lowerings step shared-memory descriptors' start addresses with it)."""
    base, off = comp.expr(call.args[0]), comp.expr(call.args[1])
    refuse = comp.not_emulated("ptr_byte_offset of a tensor map")

    def addr(g):
        b = base(g)
        if isinstance(b, dict):
            return refuse(g)
        r = np.asarray(b).astype(np.uint64) + np.asarray(off(g)).astype(np.int64).astype(np.uint64)
        return r if r.ndim else r[()]

    return addr


@handler("tirx.reinterpret")
def _reinterpret(comp, call):
    src = comp.expr(call.args[0])
    to = _dtype(call)
    frm = comp_dtype(call.args[0])
    if to == "handle" or frm == "handle":
        return src
    dt = M.np_dtype(to)
    lanes_to, lanes_from = _lanes(to), _lanes(frm)

    def reint(g):
        v = np.asarray(src(g))
        if lanes_from > 1 and lanes_to == 1:  # a vector (rows, n) -> one wider scalar per row
            out = np.ascontiguousarray(v).view(dt).reshape(v.shape[:-1])
            return out[0] if out.shape == (1,) else out
        if lanes_to > 1 and lanes_from == 1:  # a scalar (or one per lane) -> a vector (rows, n)
            return np.ascontiguousarray(np.atleast_1d(v)).view(dt).reshape(-1, lanes_to)
        out = v.view(dt)
        return out if out.ndim else out[()]

    return reint


def _lanes(dtype: str) -> int:
    import re

    m = re.fullmatch(r"(?:u?int|float|bfloat)\d+x(\d+)", str(dtype))
    return int(m.group(1)) if m else 1


def comp_dtype(e) -> str:
    from txlab.emulator.interpreter import _dtype_of

    return _dtype_of(e)


@handler("tirx.cuda.cvta_generic_to_shared")
def _cvta(comp, call):
    src = comp.expr(call.args[0])

    def cvta(g):
        v = np.asarray(src(g)).astype(np.uint64) - np.uint64(M.SHARED_BASE)
        v = v.astype(np.uint32)
        return v if v.ndim else v[()]

    return cvta


@handler("tirx.cuda.smem_addr_from_uint64")
def _smem_from_u64(comp, call):
    src = comp.expr(call.args[0])

    def f(g):
        v = np.asarray(src(g)).astype(np.uint32)
        return v if v.ndim else v[()]

    return f


@handler("tirx.if_then_else", "prim.if_then_else")
def _if_then_else(comp, call):
    from txlab.emulator.interpreter import _masked_pair, _uniform

    c, t, f = _args(comp, call)

    def ite(g):
        cv = c(g)
        if _uniform(cv):
            return t(g) if cv else f(g)
        return _masked_pair(g, cv, t, f)

    return ite


# ---- thread identity and warp collectives --------------------------------------------------------
def _warps(g, v, fill=0):
    """(nw, 32) view of per-lane values ``v`` of group ``g`` (padded when the block is not a whole
    number of warps), and the padding."""
    v = (
        np.broadcast_to(np.asarray(v), (g.L,) + np.shape(v)[1:])
        if np.ndim(v) == 0 or np.shape(v)[0] != g.L
        else np.asarray(v)
    )
    pad = (-g.L) % 32
    if pad:
        v = np.concatenate([v, np.full((pad,) + v.shape[1:], fill, dtype=v.dtype)])
    return v.reshape((-1, 32) + v.shape[1:]), pad


def _unwarp(g, w, pad):
    flat = w.reshape((-1,) + w.shape[2:])
    return flat[: g.L] if pad else flat


def _lane(g):
    return (g.tid % 32).astype(np.int32)


@handler("tirx.cuda.thread_rank")
def _thread_rank(comp, call):
    return lambda g: g.tid.astype(np.int32)


def _per_warp(g, value, pad):
    """One (nw,) value per warp, broadcast back to each of the warp's lanes of group ``g``."""
    return _unwarp(g, np.repeat(np.asarray(value)[:, None], 32, axis=1), pad)


def _active_mask(g):
    """Each lane's warp's mask of the lanes that execute (``__activemask``, PTX ``activemask``)."""
    act, pad = _warps(g, g.active(), False)
    return _per_warp(g, _ballot_bits(act, act), pad)


@handler("tirx.cuda.__activemask")
def _activemask(comp, call):
    return _active_mask


def _shfl_check(g, kind, mask_val, b, w, line, what=None, V=None):
    """A shuffle that part of its warp does not execute. A lane that reads a lane not executing it
    gets an undefined value, and a lane outside its own member mask is undefined behaviour (CUDA
    programming guide, PTX ``shfl.sync``). Member lanes that have exited or diverged are not
    reported by themselves: on sm_70+ exited ones are legal. With ``V`` (the operands, (nw, 32, ...)):
    member lanes of another branch may meet it at their own shuffle (txlab.emulator.shuffle_sites): its
    reads of them wait for that, it gets the operands of an earlier branch's shuffle it meets, and
    returns ``V`` with them."""
    act, _ = _warps(g, g.active(), False)
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    M_, _ = _warps(g, m, 0)
    inmask = ((M_ >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
    A, _ = _warps(g, np.broadcast_to(np.asarray(b).astype(np.int64), (g.L,)), 0)
    src = semantics.shfl_source(kind, np.arange(32), A, w)
    bits = np.left_shift(np.uint64(1), np.arange(32, dtype=np.uint64))
    here = np.where(act, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64)
    given = np.zeros(here.shape, np.uint64)  # lanes whose operand came from a site this shuffle met
    wait = np.zeros(act.shape, bool)  # reads of member lanes of another branch, which may meet it later
    if V is not None:
        avail = g.present()  # (lanes that returned early have exited; lanes parked in a poll meet it there)
        if g.parked:
            avail = avail & ~diverged.parked_lanes(g)
        exist, _ = _warps(g, avail, False)
        first = np.argmax(act, axis=1)
        mv = np.where(act.any(axis=1), M_[np.arange(act.shape[0]), first] & np.uint64(0xFFFFFFFF), np.uint64(0))
        missing = mv & np.where(exist, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64) & ~here
        given = shuffle_sites.meet(g, -1 if line is None else int(line), mv, here, V)
        missing &= ~given
        src_missing = ((missing[:, None] >> src.astype(np.uint64)) & 1).astype(bool)
    served = act | ((given[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
    reads = act & ~np.take_along_axis(served, src.astype(np.int64), axis=1)
    outside = act & ~inmask
    unmet = np.zeros(here.shape, np.uint64)  # member lanes that execute no shuffle of the mask (yet)
    if V is not None:
        wait = reads & src_missing & ~outside.any(axis=1)[:, None]
        reads &= ~wait
        unmet = np.where(outside.any(axis=1), np.uint64(0), missing)
    name = what or ("__shfl_sync" if kind == "idx" else f"__shfl_{kind}_sync")

    def report(bad_reads, bad_outside, ws=None, gone=None):
        bad = bad_reads | bad_outside
        if gone is not None:
            bad = bad | (
                ((gone[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool) & act.any(axis=1)[:, None]
            )
        if ws is not None:
            keep = np.zeros(bad.shape[0], bool)
            keep[ws] = True
            bad = bad & keep[:, None]
        if not bad.any():
            return
        wi, first = (int(x[0]) for x in np.nonzero(bad))
        at = min(wi * 32 + first, g.L - 1)
        parts = []
        if bad_reads[wi].any():
            r = np.nonzero(bad_reads[wi])[0]
            parts.append(
                f"lanes {_lane_list(r)} read lanes {_lane_list(np.unique(src[wi][r]))}, which do not execute it, "
                "so the value they get is undefined"
            )
        if bad_outside[wi].any():
            parts.append(f"lanes {_lane_list(np.nonzero(bad_outside[wi])[0])} execute it outside their member mask")
        if gone is not None and int(gone[wi]):
            parts.append(
                f"lanes {_lane_list([k for k in range(32) if int(gone[wi]) >> k & 1])} of its member mask "
                f"{int(mv[wi]):#010x} execute no shuffle of that mask (every non-exited lane of the mask must; give "
                "it the mask of the lanes that execute it, e.g. __activemask() or the branch's own)"
            )
        g.cta.program.finding(
            "divergent_barrier",
            f"{name} executed by lanes {_lane_list(np.nonzero(act[wi])[0])} of warp {int(g.tid[at]) // 32} only: "
            + "; ".join(parts)
            + " (undefined behaviour on a GPU)",
            line=line,
            cta=g.cta_of(at),
            threads=[g.tid[at]],
            key=("divergent_barrier", line, "shfl"),
        )

    report(reads, outside)
    if unmet.any():
        ws = np.nonzero(unmet)[0]
        never = np.zeros_like(outside)
        shuffle_sites.open_sites(
            g,
            ws,
            -1 if line is None else int(line),
            mv,
            here,
            missing,
            V.copy(),
            lambda w_: report(wait, never, w_, unmet),
        )
    return V


def _full(mask_val) -> bool:
    """Every lane of the warp is in the member mask (the fast path: nothing to check of a converged warp)."""
    m = np.asarray(mask_val)
    return bool(((m.astype(np.int64) & 0xFFFFFFFF) == 0xFFFFFFFF).all())


def _shfl(kind):
    def build(comp, call):
        mask, val, arg, width = _args(comp, call)

        line = comp.line

        def f(g):
            v = val(g)
            V, pad = _warps(g, v)
            av = arg(g)
            w = int(width(g))
            lane = np.arange(32)
            mv = mask(g)
            if g.mask is not None or pad or not _full(mv):
                V = _shfl_check(g, kind, mv, av, w, line, V=V.copy())
            if kind == "idx" and np.ndim(av) == 0 and V.ndim == 2:  # broadcast from one lane
                src = semantics.shfl_source(kind, lane, av, w)
                if w == 32:
                    out = np.repeat(V[:, src[0]][:, None], 32, axis=1)
                else:
                    out = V[:, src]
                return _unwarp(g, out, pad)
            a = np.broadcast_to(np.asarray(av), (g.L,)).astype(np.int64)
            A, _ = _warps(g, a)
            src = semantics.shfl_source(kind, lane, A, w)
            out = np.take_along_axis(V, src.astype(np.int64) if V.ndim == 2 else src[..., None], axis=1)
            return _unwarp(g, out, pad)

        return f

    return build


HANDLERS["tirx.cuda.__shfl_sync"] = _shfl("idx")
HANDLERS["tirx.cuda.__shfl_up_sync"] = _shfl("up")
HANDLERS["tirx.cuda.__shfl_down_sync"] = _shfl("down")
HANDLERS["tirx.cuda.__shfl_xor_sync"] = _shfl("xor")
#: warp collectives whose lanes meet (a kernel that polls waits at them for lanes parked in a poll: diverged), and
#: whether the first operand is the member mask (else the whole warp meets)
WARP_MEETS = {
    **dict.fromkeys(
        (
            "tirx.cuda.__shfl_sync",
            "tirx.cuda.__shfl_up_sync",
            "tirx.cuda.__shfl_down_sync",
            "tirx.cuda.__shfl_xor_sync",
            "tirx.cuda.ballot_sync",
            "tirx.cuda.any_sync",
            "tirx.cuda.all_sync",
            "tirx.cuda.reduce_add_sync_u32",
            "tirx.cuda.reduce_min_sync_u32",
            "tirx.cuda.reduce_max_sync_u32",
            "tirx.cuda.reduce_and_sync_u32",
            "tirx.cuda.reduce_or_sync_u32",
            "tirx.cuda.reduce_xor_sync_u32",
        ),
        True,
    ),
    **dict.fromkeys(
        (
            "tirx.cuda.elect_sync",
            "tirx.cuda.warp_reduce",
            "tirx.ptx.vote_sync",
            "tirx.ptx.vote_sync_ballot",
            "tirx.ptx.match_any_sync",
            "tirx.ptx.match_all_sync",
            "tirx.ptx.redux_sync",
            "tirx.ptx.redux_sync_bitwise",
        ),
        False,
    ),
}


#: each warp collective's kind, in the upper bits of a pending site's key (txlab.emulator.shuffle_sites): a call meets
#: only one of its own kind (the shuffles, 0, meet each other as they always did)
_MEET_CODE = {n: (0 if "shfl" in n else k + 1) for k, n in enumerate(WARP_MEETS)}


def warp_synced(g, lanes=None, whole_warps=False) -> None:
    """The active lanes (or ``lanes``, a bool mask) ran ``__syncwarp`` (``bar.warp.sync``): for the race checker
    their earlier shared accesses are ordered with each other's (txlab/emulator/lane_hazards.py; a mask that leaves
    lanes out leaves them unordered), or with ``whole_warps`` every lane's of their warps. Shuffles, votes and the warp's
    other ``.sync`` collectives do not order memory: racecheck reports a pair of lanes with only a shuffle between
    them (H100, 2026-12-06)."""
    races = g.cta.races
    if races is None:
        return
    if lanes is None and g.mask is None:  # every lane of the group: its warps, whole
        races.sync_warps(np.arange(int(g.warp_of_lane[0]), int(g.warp_of_lane[-1]) + 1))
        return
    lanes = g.active() if lanes is None else lanes
    if whole_warps:  # an ld.acquire: its warp's later accesses are ordered after what the release published
        races.sync_warps(g.warp_of_lane[lanes])
    else:
        races.sync_lanes(g.gtid[lanes])


def _member_active(g, mask_val):
    """Active lanes that are in the member mask, as a (nw, 32) bool array."""
    act, pad = _warps(g, g.active(), False)
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    M_, _ = _warps(g, m, 0)
    inmask = ((M_ >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
    return act & inmask, pad


def _outside_own_mask(g, mask_val, line, name: str) -> None:
    """Lanes executing a warp collective whose member mask does not name them (undefined behaviour)."""
    actv, _ = _warps(g, g.active(), False)
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    M_, _ = _warps(g, m, 0)
    outside = actv & ~((M_ >> np.arange(32, dtype=np.uint64)) & 1).astype(bool)
    if not outside.any():
        return
    w = int(np.nonzero(outside.any(axis=1))[0][0])
    lane = min(w * 32 + int(np.argmax(outside[w])), g.L - 1)
    g.cta.program.finding(
        "divergent_barrier",
        f"{name} with member mask {int(M_[w][np.argmax(outside[w])]) & 0xFFFFFFFF:#010x} executed by lanes "
        f"{_lane_list(np.nonzero(actv[w])[0])} of warp {int(g.tid[lane]) // 32}: lanes "
        f"{_lane_list(np.nonzero(outside[w])[0])} execute it outside their member mask (each calling thread must "
        "have its own bit set, or the result is undefined on a GPU). Give it the mask of the lanes that execute it",
        line=line,
        cta=g.cta_of(lane),
        threads=[g.tid[lane]],
        key=("divergent_barrier", line, name, "outside"),
    )


def member_meet(g, mask_val, act, X, line, name: str, op: str):
    """A warp collective ``name`` (the op ``op``: a vote, ``__reduce_*_sync``, ``redux.sync``, ``match.sync``) whose
    member mask names lanes of the warp that do not execute it (not active, not exited, not parked in a poll): as a
    shuffle's (:func:`_shfl_check`), member lanes of another branch may meet it at one of the same op and mask
    (txlab.emulator.shuffle_sites): where an earlier branch's call waits for this one's lanes, its lanes' operands
    join this one's; where lanes are still missing, the call waits for them, and one no lane of theirs meets by the
    time they run again (the ``if`` ended) is a ``divergent_barrier`` finding (CUDA: every non-exited lane of the mask
    must execute it, else the result is undefined). ``act`` (nw, 32): the active member lanes, ``X`` (nw, 32): the
    operands by lane. Returns ``(act, X)`` with the lanes met added. Active lanes outside their own member mask are a
    ``divergent_barrier`` finding too (CUDA: each calling thread must have its own bit set)."""
    if not _full(mask_val):
        _outside_own_mask(g, mask_val, line, name)
    if g.mask is None and not g.L % 32:  # every lane of every warp executes it
        return act, X
    actv, _ = _warps(g, g.active(), False)
    avail = g.present()
    if g.parked:
        avail = avail & ~diverged.parked_lanes(g)
    exist, _ = _warps(g, avail, False)
    bits = np.left_shift(np.uint64(1), np.arange(32, dtype=np.uint64))
    here = np.where(actv, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64)
    m = np.broadcast_to(np.asarray(mask_val).astype(np.uint64), (g.L,))
    M_, _ = _warps(g, m, 0)
    first = np.argmax(actv, axis=1)
    mv = np.where(actv.any(axis=1), M_[np.arange(actv.shape[0]), first] & np.uint64(0xFFFFFFFF), np.uint64(0))
    missing = mv & np.where(exist, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64) & ~here
    if not missing.any():
        return act, X
    key = mv | (np.uint64(_MEET_CODE.get(op, 0xFFFF)) << np.uint64(32))  # only the same op and mask meet it
    at = -1 if line is None else int(line)
    X = np.array(X)
    given = shuffle_sites.meet(g, at, key, here, X)
    missing &= ~given
    act = act | (((given[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(bool) & actv.any(axis=1)[:, None])
    if missing.any():
        ws = np.nonzero(missing)[0]

        def report(wsel):
            w = int(wsel[0])
            lane = min(w * 32 + int(first[w]), g.L - 1)
            lanes = [k for k in range(32) if int(here[w]) >> k & 1]
            gone = [k for k in range(32) if int(missing[w]) >> k & 1]
            g.cta.program.finding(
                "divergent_barrier",
                f"{name} with member mask {int(mv[w]):#010x} executed by lanes {_lane_list(lanes)} of warp "
                f"{int(g.tid[lane]) // 32} only: lanes {_lane_list(gone)} of its mask do not execute it (every "
                "non-exited lane of the mask must, or the result is undefined on a GPU; the emulator combined the "
                "executing lanes' operands only). Give it the mask of the lanes that execute it (__activemask() or "
                "the branch's own), or call it where the whole warp does",
                line=line,
                cta=g.cta_of(lane),
                threads=[g.tid[lane]],
                key=("divergent_barrier", line, name),
            )

        shuffle_sites.open_sites(g, ws, at, key, here, missing, X.copy(), report, name)
    return act, X


def _member_collective(operand, combine, name=None):
    """A handler for a warp collective ``(member mask, x)`` whose value is one per warp, the same in
    each of its lanes: ``combine(act, X)`` -> (nw,) from the active member lanes ``act`` and
    ``operand(x)`` by warp (both (nw, 32)). Member lanes that do not execute it: :func:`member_meet`."""

    def build(comp, call):
        mask, x = _args(comp, call)
        line = comp.line
        op = call.op.name
        what = name or op[len("tirx.cuda.") :]

        def f(g):
            mv = mask(g)
            act, pad = _member_active(g, mv)
            X, _ = _warps(g, operand(x(g)), False)
            act, X = member_meet(g, mv, act, X, line, what, op)
            return _per_warp(g, combine(act, X), pad)

        return f

    return build


def _nonzero(v):
    return np.not_equal(v, 0)


def _ballot_bits(act, P):
    return ((act & P).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)


#: warp votes over the active member lanes ``act`` of predicates ``P`` (both (nw, 32)): ``__ballot_sync`` & co.
#: and PTX ``vote.sync`` (``uni``: every active member has the same predicate)
_VOTE = {
    "ballot": _ballot_bits,
    "any": lambda act, P: (act & P).any(axis=1).astype(np.int32),
    "all": lambda act, P: (~act | P).all(axis=1).astype(np.int32),
    "uni": lambda act, P: ((~act | P).all(axis=1) | (~act | ~P).all(axis=1)).astype(np.int32),
}
for _mode in ("ballot", "any", "all"):
    HANDLERS[f"tirx.cuda.{_mode}_sync"] = _member_collective(_nonzero, _VOTE[_mode], f"__{_mode}_sync")


@handler("tirx.cuda.elect_sync")
def _elect(comp, call):
    def f(g):
        act, pad = _warps(g, g.active(), False)
        first = np.argmax(act, axis=1)
        out = np.zeros(act.shape, np.uint32)
        has = act.any(axis=1)
        out[np.nonzero(has)[0], first[has]] = 1
        return _unwarp(g, out, pad)

    return f


#: float reductions: FADD / FMNMX steps, so a NaN result is the canonical NaN (txlab.emulator.nan)
_RED = {"sum": canonicalising(np.add), "max": canonicalising(np.fmax), "min": canonicalising(np.fmin)}


def _butterfly_check(g, width, line, what):
    """TVM's warp and CTA reductions run ``__shfl_xor_sync(0xFFFFFFFF, v, m)`` for m = width / 2 .. 1: report a
    warp that part of its lanes execute (a partial last warp, or a call under a per-lane condition), as a
    written shuffle is: the lanes read values of lanes that never ran it."""
    if g.mask is None and g.L % 32 == 0:
        return
    m = width >> 1
    while m > 0:
        _shfl_check(g, "xor", _ALL_ONES, m, 32, line, f"{what}'s __shfl_xor_sync")
        m >>= 1


def _butterfly(V, op, width):
    mask = width >> 1
    lane = np.arange(32)
    while mask > 0:
        V = op(V, V[:, lane ^ mask])
        mask >>= 1
    return V


@handler("tirx.cuda.warp_reduce")
def _warp_reduce(comp, call):
    val = comp.expr(call.args[0])
    op = _RED.get(_str(call.args[1]))
    width = int(call.args[2].value) if len(call.args) > 2 and hasattr(call.args[2], "value") else 32
    if op is None:
        return comp.not_emulated(f"warp_reduce op {_str(call.args[1])}")
    is_int = not comp_dtype(call).startswith(("float", "bfloat"))
    if is_int:
        op = {"sum": np.add, "max": np.maximum, "min": np.minimum}[_str(call.args[1])]

    line = comp.line

    def f(g):
        _butterfly_check(g, width, line, f"warp_reduce ({_str(call.args[1])})")
        V, pad = _warps(g, val(g))
        return _unwarp(g, _butterfly(V, op, width), pad)

    return f


_ALL_ONES = np.uint32(0xFFFFFFFF)
#: redux.sync over the active member lanes (inactive ones hold the operation's identity): V is uint32 (the bits),
#: or int32 for a signed min/max
_REDUX = {
    "add": lambda act, V: np.where(act, V, 0).astype(np.uint64).sum(axis=1).astype(np.uint32),
    "min": lambda act, V: np.where(act, V, np.iinfo(V.dtype).max).min(axis=1),
    "max": lambda act, V: np.where(act, V, np.iinfo(V.dtype).min).max(axis=1),
    "and": lambda act, V: np.bitwise_and.reduce(np.where(act, V, _ALL_ONES), axis=1),
    "or": lambda act, V: np.bitwise_or.reduce(np.where(act, V, 0), axis=1),
    "xor": lambda act, V: np.bitwise_xor.reduce(np.where(act, V, 0), axis=1),
}
for _op, _combine in _REDUX.items():
    HANDLERS[f"tirx.cuda.reduce_{_op}_sync_u32"] = _member_collective(
        lambda v: np.asarray(v).astype(np.uint32), _combine, f"__reduce_{_op}_sync"
    )


@handler("tirx.cuda.ffs_u32")
def _ffs(comp, call):
    (x,) = _args(comp, call)

    def f(g):
        v = np.asarray(x(g)).astype(np.uint64)
        low = v & (~v + np.uint64(1))
        out = np.where(v == 0, 0, np.log2(np.where(low == 0, 1, low).astype(np.float64)).astype(np.int64) + 1)
        return out.astype(np.int32) if out.ndim else np.int32(out)

    return f


@handler("tirx.cuda.ldg")
def _ldg(comp, call):
    addr = comp.expr(call.args[0])
    dt = M.np_dtype(_str(call.args[1]) if len(call.args) > 1 else _dtype(call))
    line = comp.line
    prog = comp.program
    info = {"name": "ldg pointer", "dtype": str(dt)}

    def f(g):
        return prog.mem_read(g, addr(g), np.int64(0), 0, dt, line, info)

    return f


# ---- no-ops with a note -------------------------------------------------------------------------
def _noop(note=None):
    def build(comp, call):
        prog = comp.program
        if note and note not in prog.notes:
            prog.notes.append(note)
        return lambda g: np.int32(0)

    return build


_FENCE = (
    "fences are no-ops: the emulator's memory is coherent and every store is visible at once "
    "(a missing fence is not detected)"
)
for _n in ("tirx.ptx.fence_proxy", "tirx.ptx.fence_mbarrier_init", "tirx.ptx.fence_proxy_async"):
    HANDLERS[_n] = _noop(_FENCE)


def _memory_fence(comp, call):
    """A memory fence: nothing to do for the coherent memory here, but what the warp did before it is released by
    its next atomic, for the race checker (a spin lock's release; :meth:`RaceChecker.fence`)."""
    prog = comp.program
    if _FENCE not in prog.notes:
        prog.notes.append(_FENCE)

    def fence(g):
        if g.cta.races is not None:
            g.cta.races.fence(np.unique(g.warp_of_lane[g.active()]))
        return np.int32(0)

    return fence


for _n in ("tirx.cuda.thread_fence", "tirx.ptx.fence", "tirx.cuda.threadfence_block", "tirx.ptx.fence_acq_rel"):
    HANDLERS[_n] = _memory_fence
_BULK = (
    "bulk-group commit/wait are no-ops: TMA stores land when issued, so nothing is outstanding "
    "(a missing wait before reusing a staging buffer is not detected)"
)
for _n in ("tirx.ptx.cp_async_bulk_commit_group", "tirx.ptx.cp_async_bulk_wait_group"):
    HANDLERS[_n] = _noop(_BULK)
_PREFETCH = "prefetches (prefetch, prefetchu, prefetch.tensormap) are no-ops: they move nothing a kernel can read"
for _n in ("tirx.ptx.prefetch", "tirx.ptx.prefetchu", "tirx.ptx.prefetch_valid_addr"):
    HANDLERS[_n] = _noop(_PREFETCH)


@blocking("tirx.cuda.warp_sync", "tirx.ptx.bar_warp_sync")
def _warp_sync(comp, call):
    """``__syncwarp(mask)``: it orders the lanes' shared accesses; where some member lanes are in another branch of
    a divergent ``if``, the lanes here wait for them there (txlab/emulator/warp_sync.py)."""
    mask = comp.expr(call.args[0]) if call.args else (lambda g: np.uint32(0xFFFFFFFF))
    line = comp.line

    site = ("site", call.__chandle__())

    def gen(g):  # member lanes parked in a poll reach this __syncwarp first (txlab.emulator.diverged)
        yield from diverged.meet(g, site, lambda g: diverged.members(g, mask(g)))
        return (yield from warp_sync.arrive(g, mask(g), line, warp_synced))

    return gen


HANDLERS["tirx.cuda.nano_sleep"] = _noop()
HANDLERS["tirx.ptx.setmaxnreg"] = _noop("setmaxnreg is a no-op (registers are not modelled)")
HANDLERS["tirx.ptx.setmaxnreg_inc"] = HANDLERS["tirx.ptx.setmaxnreg"]
HANDLERS["tirx.ptx.setmaxnreg_dec"] = HANDLERS["tirx.ptx.setmaxnreg"]
HANDLERS["tirx.cuda.wgmma_noop_barrier"] = lambda comp, call: comp.expr(call.args[0])


# clock / clock64: txlab.emulator.timers (emulated warp-instructions)


# ---- math: txlab.emulator.mathfns (expf, __expf, sqrtf, ... with the build's fast-math meaning) ------
# ---- conversions ---------------------------------------------------------------------------------
@handler("tirx.cuda.float_as_uint")
def _f2u(comp, call):
    (x,) = _args(comp, call)
    return lambda g: _view(x(g), np.float32, np.uint32)


@handler("tirx.cuda.uint_as_float")
def _u2f(comp, call):
    (x,) = _args(comp, call)
    return lambda g: _view(x(g), np.uint32, np.float32)


def _view(v, frm, to):
    a = np.asarray(v).astype(frm).view(to)
    return a if a.ndim else a[()]


@handler("tirx.cuda.half2float")
def _half2float(comp, call):
    """``__half2float``: HADD2.F32, so a NaN becomes the canonical 0x7fffffff (txlab.emulator.nan)."""
    (x,) = _args(comp, call)
    return lambda g: canonical(np.asarray(x(g)).astype(np.float32))


@handler("tirx.cuda.bfloat162float")
def _to_float(comp, call):
    """``__bfloat162float``: a 16-bit shift, every bit kept (a NaN's payload too)."""
    (x,) = _args(comp, call)
    return lambda g: np.asarray(x(g)).astype(np.float32)


# ---- atomics (txlab.emulator.atomics: order, rounding, race checking) ------------------------------
def _atomic(kind):
    def build(comp, call):
        from txlab.emulator.atomics import apply_atomic, element_of

        args = _args(comp, call)
        dt = M.np_dtype(_dtype(call))
        line = comp.line
        prog = comp.program
        acquire = comp.polling  # in a poll: it acquires what a fenced atomic released (races.RaceChecker.fence)
        target = element_of(comp, call.args[0])  # address_of(buf[i]): bounds-checked against buf

        def f(g):
            return apply_atomic(g, prog, args[0](g), [a(g) for a in args[1:]], kind, dt, line, acquire, target)

        return f

    return build


for _k in ("add", "cas", "max", "min", "exch", "and", "or"):
    HANDLERS[f"tirx.cuda.atomic_{_k}"] = _atomic(_k)


# ---- CTA barriers (blocking) --------------------------------------------------------------------
@blocking("tirx.cuda.cta_sync", "tirx.tvm_storage_sync")
def _cta_sync(comp, call):
    line = comp.line

    def gen(g):
        yield from sync.barrier_wait(g.cta, g, 0, line)
        return np.int32(0)

    return gen


# cluster_sync, barrier.cluster, mapa: txlab.emulator.cluster


@blocking("tirx.cuda.grid_sync")
def _grid_sync(comp, call):
    """``cg::this_grid().sync()``: the CTA's threads meet at its barrier, then the CTA waits until every CTA of the
    launch has reached the same (k-th) grid barrier. The launch runs its CTAs resident together, all at once
    (txlab.emulator.resident); a CTA that never arrives leaves the others polling, a ``deadlock`` finding."""
    line = comp.line

    def gen(g):
        yield from sync.barrier_wait(g.cta, g, 0, line, what="grid_sync")
        prog = g.cta.program
        k = g.slots.get("grid_sync", 0)  # this group's k-th grid barrier
        g.slots["grid_sync"] = k + 1
        arrived = prog.grid_arrivals.setdefault(k, set())
        arrived.add(g.cta.index)
        while len(arrived) < prog.grid_ctas:
            g.blocked = ("poll", line, "grid_sync")
            yield
        g.blocked = None
        g.cta.progress += 1
        return np.int32(0)

    return gen


def _sync_pred(kind):
    def build(comp, call):
        (pred,) = _args(comp, call)
        line = comp.line

        def combine(parts):
            vals = [p for p in parts if p is not None]
            if kind == "and":
                return np.int32(all(vals))
            if kind == "or":
                return np.int32(any(vals))
            return np.int32(sum(vals))

        def gen(g):
            p = np.broadcast_to(np.not_equal(pred(g), 0), (g.L,))[g.active()]
            part = bool(p.all()) if kind == "and" else (bool(p.any()) if kind == "or" else int(p.sum()))
            r = yield from sync.barrier_wait(
                g.cta, g, 0, line, payload=part, combine=combine, what=f"syncthreads_{kind}"
            )
            return np.full(g.L, r, np.int32)

        return gen

    return build


BLOCKING["tirx.cuda.syncthreads_and"] = _sync_pred("and")
BLOCKING["tirx.cuda.syncthreads_or"] = _sync_pred("or")
BLOCKING["tirx.cuda.syncthreads_count"] = _sync_pred("count")


@blocking("tirx.cuda.warpgroup_sync")
def _warpgroup_sync(comp, call):
    line = comp.line
    bar_id = comp.expr(call.args[0]) if call.args else (lambda g: 0)

    def gen(g):
        wg = int(g.tid[0]) // 128
        if g.cta.nthreads <= 128 or not g.cta.program.warp_mode:
            yield from sync.barrier_wait(
                g.cta,
                g,
                ("wg", wg),
                line,
                count=min(128, g.cta.nthreads) if g.cta.program.warp_mode else None,
                what="warpgroup_sync",
            )
        else:
            ids = np.unique(
                np.broadcast_to(np.asarray(bar_id(g)), (g.L,))[g.mask if g.mask is not None else slice(None)]
            )
            if ids.size != 1:  # bar.sync takes one barrier per warp
                raise NotEmulatedError("warpgroup_sync with a barrier id that differs across a warp", lineno=line)
            # bar.sync id, 128: named barrier ``id``, complete once any 128 threads arrived (an aligned warpgroup or
            # not), shared with bar.sync / bar.arrive on the same id
            yield from sync.barrier_wait(g.cta, g, ("named", int(ids[0])), line, count=128, what="warpgroup_sync")
        return np.int32(0)

    return gen


def _named_bar_operands(comp, call, what):
    vals = [a for a in call.args if type(a).__name__ != "StringImm"]
    if len(vals) != 2:
        return None
    bar_id, count = comp.expr(vals[0]), comp.expr(vals[1])
    line = comp.line

    def key_count(g):
        sel = g.mask if g.mask is not None else slice(None)
        ids = np.unique(np.broadcast_to(np.asarray(bar_id(g)), (g.L,))[sel])
        cnt = np.unique(np.broadcast_to(np.asarray(count(g)), (g.L,))[sel])
        if ids.size != 1 or cnt.size != 1:
            raise NotEmulatedError(f"{what} with a barrier id or count that differs across a warp", lineno=line)
        return ("named", int(ids[0])), int(cnt[0])

    return key_count


def _named_bar(what):
    """Makes ``build(key_count, line)`` the handler of ``what id, count`` on a named barrier
    (``key_count(g)``: the warp's barrier key and count); other operands are not emulated."""

    def wrap(build):
        def handler_(comp, call):
            key_count = _named_bar_operands(comp, call, what)
            if key_count is None:
                return comp.not_emulated(f"{what} with these operands")
            return build(key_count, comp.line)

        return handler_

    return wrap


@blocking("tirx.ptx.bar_sync_count")
@_named_bar("bar.sync")
def _bar_sync_count(key_count, line):
    """``bar.sync id, count``: a named barrier shared with ``bar.arrive id, count`` (producer/consumer
    ordering between warpgroups); the generation completes once ``count`` threads arrived."""

    def gen(g):
        key, cnt = key_count(g)
        yield from sync.barrier_wait(g.cta, g, key, line, count=cnt, what=f"bar.sync {key[1]}, {cnt}")
        return np.int32(0)

    return gen


@handler("tirx.ptx.bar_arrive")
@_named_bar("bar.arrive")
def _bar_arrive(key_count, line):
    """``bar.arrive id, count``: counts this warp's threads toward the barrier's generation and goes on."""

    def f(g):
        key, cnt = key_count(g)
        bar = g.cta.bars.get(key)
        if bar is None:
            bar = g.cta.bars[key] = sync.CtaBarrier(key, cnt)
        bar.arrive(g.cta, g, g.L, line)
        return np.int32(0)

    return f


@blocking("tirx.cuda.cta_reduce")
def _cta_reduce(comp, call):
    """``T.cuda.cta_reduce`` (cta_sum/max/min) as TVM's helper runs it, through its shared scratch: each warp's
    lane 0 stores its warp's total at ``scratch[warp]``; a barrier; warp 0 reads ``scratch[lane]`` for the
    first ``num_warps`` lanes (the op's identity in the others), reduces, and its lane 0 stores ``scratch[0]``;
    a barrier; every thread reads ``scratch[0]``. So the scratch holds what it holds on the GPU afterwards, and
    the race checker sees its stores and loads (two reductions on one scratch with no barrier between race)."""
    val = comp.expr(call.args[0])
    opname = _str(call.args[1])
    nw = int(call.args[2].value)
    scratch = comp.expr(call.args[3])
    line = comp.line
    is_float = comp_dtype(call).startswith(("float", "bfloat"))
    op = _RED[opname] if is_float else {"sum": np.add, "max": np.maximum, "min": np.minimum}[opname]
    dt = M.np_dtype(comp_dtype(call))
    info = {"name": "cta_reduce scratch", "dtype": str(dt)}
    # the helper's padding, (lane < num_warps) ? scratch[lane] : identity: T(0), -INFINITY or INFINITY; for an
    # integer max/min the conditional is a float, so the value goes through float32 and back (saturating)
    widen = not is_float and opname != "sum"

    def padded(got, rd):
        if not widen:
            return np.where(
                rd, got, dt.type({"sum": 0, "max": -np.inf, "min": np.inf}[opname]) if is_float else dt.type(0)
            )
        f = np.where(rd, got.astype(np.float32), np.float32(-np.inf if opname == "max" else np.inf))
        lim = np.iinfo(dt)
        return np.clip(np.nan_to_num(f.astype(np.float64), nan=0.0), lim.min, lim.max).astype(dt)

    site = ("site", call.__chandle__())

    def gen(g):
        yield from diverged.meet(g, site)  # lanes parked in a poll reach this reduction first: it is over all threads
        prog = g.cta.program
        base = scratch(g)
        outer = g.mask
        act = g.active()
        warp = (g.tid // 32).astype(np.int64)
        lane = (g.tid % 32).astype(np.int64)
        _butterfly_check(g, 32, line, f"cta_reduce ({opname})")
        V, pad = _warps(g, val(g))
        total = _unwarp(g, _butterfly(V, op, 32), pad)  # every lane: its warp's total
        g.mask = act & (lane == 0)
        if g.mask.any():
            prog.mem_write(g, base, warp, 0, dt, total, line, info)
        g.mask = outer
        yield from sync.barrier_wait(g.cta, g, 0, line, what="cta_reduce")
        first = act & (warp == 0)
        if first.any():
            rd = first & (lane < nw)
            g.mask = rd
            got = (
                np.asarray(prog.mem_read(g, base, np.where(rd, lane, 0), 0, dt, line, info))
                if rd.any()
                else (np.zeros(g.L, dt))
            )
            P, pad2 = _warps(g, padded(np.broadcast_to(got, (g.L,)), rd))
            part = _unwarp(g, _butterfly(P, op, 32), pad2)
            g.mask = first & (lane == 0)
            prog.mem_write(g, base, np.zeros(g.L, np.int64), 0, dt, part, line, info)
            g.mask = outer
        # the second __syncthreads of the helper
        yield from sync.barrier_wait(g.cta, g, 0, line, what="cta_reduce")
        r = prog.mem_read(g, base, np.zeros(g.L, np.int64), 0, dt, line, info)
        return np.broadcast_to(np.asarray(r, dtype=dt), (g.L,)).copy()

    return gen


# ---- mbarriers -----------------------------------------------------------------------------------
def _active_count(g) -> int:
    return g.L if g.mask is None else int(np.count_nonzero(g.mask))


def _uniform_addr(g, v, line, what):
    a = np.asarray(v)
    if a.ndim:
        act = a[g.active()] if a.shape[0] == g.L else a
        u = np.unique(act)
        if u.size != 1:
            raise NotEmulatedError(f"{what} on different mbarriers within one instruction", lineno=line)
        return int(u[0])
    return int(a)


def _mb_count_op(what, apply):
    """A handler for ``op(mbarrier address, count)``: ``apply(g, cta, mb, count, line)`` on the
    mbarrier the active lanes name, with the count of the first lane."""

    def build(comp, call):
        addr, count = comp.expr(call.args[0]), comp.expr(call.args[1])
        line = comp.line

        def f(g):
            a = _uniform_addr(g, addr(g), line, what)
            cta, mb = sync.mbarrier_at(g, a, line)
            apply(g, cta, mb, int(np.asarray(count(g)).ravel()[0]), line)
            return np.int32(0)

        return f

    return build


HANDLERS["tirx.ptx.mbarrier_init"] = _mb_count_op(
    "mbarrier.init", lambda g, cta, mb, n, line: sync.mb_init(cta, mb, n, line)
)
HANDLERS["tirx.ptx.mbarrier_expect_tx"] = _mb_count_op(
    "mbarrier.expect_tx", lambda g, cta, mb, n, line: sync.mb_tx(cta, mb, n * _active_count(g), line)
)


@handler("tirx.ptx.mbarrier_arrive", "tirx.ptx.mbarrier_arrive_nocount", "tirx.ptx.mbarrier_arrive_expect_tx")
def _mb_arrive(comp, call):
    name = call.op.name
    addr = comp.expr(call.args[0])
    has_count = name != "tirx.ptx.mbarrier_arrive_nocount"
    count = comp.expr(call.args[1]) if has_count else (lambda g: 1)
    strs = [_str(a) for a in call.args if type(a).__name__ == "StringImm"]
    expect = name.endswith("expect_tx") or "expect_tx" in strs
    line = comp.line

    def f(g):
        a = _uniform_addr(g, addr(g), line, "mbarrier.arrive")
        cta, mb = sync.mbarrier_at(g, a, line)  # shared::cluster: maybe another CTA's
        n = _active_count(g)
        c = int(np.asarray(count(g)).ravel()[0])
        sync.mb_arrive_lanes(cta, mb, g, c, n, line, expect_tx=expect)
        return np.uint64(0)

    return f


@blocking("tirx.cuda.mbarrier_wait", "tirx.cuda.mbarrier_wait_acquire_cluster")
def _mb_wait(comp, call):
    addr, parity = comp.expr(call.args[0]), comp.expr(call.args[1])
    line = comp.line

    def gen(g):
        cta, mb = sync.mbarrier_at(g, _uniform_addr(g, addr(g), line, "mbarrier wait"), line)
        if cta is not g.cta:
            raise NotEmulatedError(
                "mbarrier wait on another CTA's mbarrier (PTX waits only on shared::cta)", lineno=line
            )
        yield from sync.mb_wait(g.cta, g, mb, parity(g), line)
        return np.int32(0)

    return gen


@blocking("tirx.cuda.wait_until")
def _wait_until(comp, call):
    dest = call.args[0]
    addr = comp.expr(call.args[1])
    cond = comp.expr(call.args[2])
    line = comp.line
    if type(dest).__name__ != "TensorLoad":

        def bad(g):
            raise NotEmulatedError("wait_until into a non-buffer", lineno=line)
            yield

        return bad
    dt = M.np_dtype(comp.buffer_info(dest.source)["dtype"])
    key = call.__chandle__()
    store = comp.store(dest.source, list(dest.indices), lambda g: g.slots.get(("wait_until", key)))

    def gen(g):
        while True:
            a = np.broadcast_to(np.asarray(addr(g)).astype(np.uint64), (g.L,))
            au = np.unique(a[g.active()])
            if au.size != 1:
                raise NotEmulatedError("wait_until on per-thread addresses", lineno=line)
            region = g.cta.space.find(int(au[0]))
            off = (int(au[0]) - region.base) // dt.itemsize
            g.slots[("wait_until", key)] = np.full(g.L, region.view(dt)[off], dtype=dt)
            store(g)
            c = np.broadcast_to(np.asarray(cond(g)), (g.L,))
            if c[g.active()].all():
                break
            g.blocked = ("poll", line)
            yield
        g.blocked = None
        g.cta.progress += 1
        return np.int32(0)

    return gen


# ---- packed conversions (TVM's own device helpers, tvm.backend.cuda.cpp.builtins) ----------------
def _u(v, dt):
    return np.asarray(v).astype(dt)


def _ret(r):
    return r if np.ndim(r) else r[()]


def _bf16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


@handler("tirx.cuda.make_float2")
def _make_float2(comp, call):
    x, y = _args(comp, call)

    def f(g):
        lo = _u(x(g), np.float32).view(np.uint32).astype(np.uint64)
        hi = _u(y(g), np.float32).view(np.uint32).astype(np.uint64)
        return _ret(lo | (hi << np.uint64(32)))  # float2 {x, y}: x in the low word

    return f


def _float2_part(shift):
    def build(comp, call):
        (p,) = _args(comp, call)

        def f(g):
            w = ((_u(p(g), np.uint64) >> np.uint64(shift)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            return _ret(w.view(np.float32))

        return f

    return build


HANDLERS["tirx.cuda.float2_x"] = _float2_part(0)
HANDLERS["tirx.cuda.float2_y"] = _float2_part(32)


def _pack2(lo, hi, dt):
    """Two 16-bit values (numpy dtype ``dt``) -> uint32, ``lo`` in the low half (a conversion to ``dt``, F2FP: a
    NaN becomes the canonical 0x7fff)."""
    a = np.asarray(canonical(np.asarray(lo).astype(dt))).view(np.uint16).astype(np.uint32)
    b = np.asarray(canonical(np.asarray(hi).astype(dt))).view(np.uint16).astype(np.uint32)
    return a | (b << np.uint32(16))


def _unpack2(u, dt):
    u = _u(u, np.uint32)
    lo = (u & np.uint32(0xFFFF)).astype(np.uint16).view(dt)
    hi = (u >> np.uint32(16)).astype(np.uint16).view(dt)
    return lo, hi


@handler("tirx.cuda.float22bfloat162_rn")
def _f22bf162(comp, call):
    x, y = _args(comp, call)
    return lambda g: _ret(_pack2(_u(x(g), np.float32), _u(y(g), np.float32), _bf16()))  # round to nearest even


@handler("tirx.cuda.float22bfloat162_rn_from_float2")
def _f22bf162_f2(comp, call):
    (p,) = _args(comp, call)

    def f(g):
        u = _u(p(g), np.uint64)
        x = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        y = (u >> np.uint64(32)).astype(np.uint32).view(np.float32)
        return _ret(_pack2(x, y, _bf16()))

    return f


@handler("tirx.cuda.bfloat1622float2")
def _bf1622f2(comp, call):
    (p,) = _args(comp, call)

    def f(g):
        lo, hi = _unpack2(p(g), _bf16())
        a = lo.astype(np.float32).view(np.uint32).astype(np.uint64)
        b = hi.astype(np.float32).view(np.uint32).astype(np.uint64)
        return _ret(a | (b << np.uint64(32)))

    return f


@handler("tirx.cuda.fp8x4_e4m3_from_float4")
def _fp8x4(comp, call):
    import ml_dtypes

    parts = _args(comp, call)
    e4m3 = np.dtype(ml_dtypes.float8_e4m3fn)

    def f(g):
        out = np.uint32(0)
        for k, p in enumerate(parts):
            v = _u(p(g), np.float32)
            # __nv_fp8x4_e4m3(float4) converts with __NV_SATFINITE: finite overflow -> +-448; a NaN -> 0x7f
            v = np.where(np.isnan(v), v, np.clip(v, -448.0, 448.0)).astype(np.float32)
            byte = np.asarray(canonical(np.asarray(v.astype(e4m3)))).view(np.uint8).astype(np.uint32)
            out = out | (byte << np.uint32(8 * k))
        return _ret(np.asarray(out, np.uint32))

    return f


def _hminmax(is_min):
    def build(comp, call):
        a, b = _args(comp, call)

        def f(g):
            bf = _bf16()
            out = []
            (a0, a1), (b0, b1) = _unpack2(a(g), bf), _unpack2(b(g), bf)
            for x, y in ((a0, b0), (a1, b1)):
                xf, yf = x.astype(np.float32), y.astype(np.float32)
                # __hmin2/__hmax2 (bf16): a NaN input yields the other input, two NaNs the canonical
                # NaN; -0 orders below +0
                if is_min:
                    pick_x = (xf < yf) | ((xf == yf) & np.signbit(xf))
                else:
                    pick_x = (xf > yf) | ((xf == yf) & ~np.signbit(xf))
                xb, yb = x.view(np.uint16), y.view(np.uint16)
                r = np.where(pick_x, xb, yb)
                r = np.where(np.isnan(xf), yb, np.where(np.isnan(yf), xb, r))
                r = np.where(np.isnan(xf) & np.isnan(yf), np.uint16(0x7FFF), r)
                out.append(np.asarray(r, np.uint16).astype(np.uint32))
            return _ret(out[0] | (out[1] << np.uint32(16)))

        return f

    return build


HANDLERS["tirx.cuda.hmin2"] = _hminmax(True)
HANDLERS["tirx.cuda.hmax2"] = _hminmax(False)


def _convert_mem(n, src_dt, dst_dt, dst_first):
    """``*dst = convert(*src)`` over ``n`` consecutive elements, through per-thread pointers."""

    def build(comp, call):
        p0, p1 = _args(comp, call)
        dst, src = (p0, p1) if dst_first else (p1, p0)
        line = comp.line
        prog = comp.program
        sdt, ddt = np.dtype(src_dt), np.dtype(dst_dt)
        elems = np.arange(n)[None, :]

        def f(g):
            v = prog.mem_read(g, src(g), elems, 0, sdt, line, {"name": "source pointer", "dtype": str(sdt)})
            prog.mem_write(
                g,
                dst(g),
                elems,
                0,
                ddt,
                canonical(np.asarray(v).astype(np.float32).astype(ddt)),  # F2FP / HADD2.F32: canonical NaNs
                line,
                {"name": "destination pointer", "dtype": str(ddt)},
            )
            return np.int32(0)

        return f

    return build


HANDLERS["tirx.cuda.float22half2"] = _convert_mem(2, "float32", "float16", True)
HANDLERS["tirx.cuda.float8tohalf8"] = _convert_mem(8, "float32", "float16", False)
HANDLERS["tirx.cuda.half8tofloat8"] = _convert_mem(8, "float16", "float32", False)


# ---- mma.sync accumulator fragments: fill and store --------------------------------------------
def _fragment_map():
    """(lane, register) -> (row, col) of a 16x16 accumulator tile over one warp: the inverse of
    TVM's ``shared_16x16_to_ldmatrix_32x8_layout`` ((i, j) -> (4*(i%8) + (j%8)//2,
    4*(j//8) + 2*(i//8) + j%2)), the map mma_store's codegen inverts."""
    rows = np.zeros((32, 8), np.int64)
    cols = np.zeros((32, 8), np.int64)
    for i in range(16):
        for j in range(16):
            lane, reg = 4 * (i % 8) + (j % 8) // 2, 4 * (j // 8) + 2 * (i // 8) + j % 2
            rows[lane, reg], cols[lane, reg] = i, j
    return rows, cols


_FRAG_ROWS, _FRAG_COLS = _fragment_map()


def _frag_buffer(comp, e, what):
    if not (type(e).__name__ == "Call" and getattr(e.op, "name", "") == "tirx.buffer_data"):
        return None
    return e.args[0]


def _mma_fill(comp, call):
    size, ptr, off = call.args
    buf = _frag_buffer(comp, ptr, "fill")
    if buf is None or not hasattr(size, "value") or not hasattr(off, "value"):
        return comp.not_emulated(f"{call.op.name} of a non-buffer fragment")
    n, o = int(size.value), int(off.value)

    def f(g):
        arr = g.env[buf]
        if g.mask is None:
            arr[:, o : o + n] = 0
        else:
            arr[g.mask, o : o + n] = 0
        return np.int32(0)

    return f


def _mma_store(comp, call):
    m, n, dst, src, off, stride = call.args
    buf = _frag_buffer(comp, src, "store")
    if (
        buf is None
        or not all(hasattr(x, "value") for x in (m, n, off))
        or (int(m.value), int(n.value)) != (16, 16)
        or int(off.value) != 0
    ):
        return comp.not_emulated(f"{call.op.name} other than a 16x16 fragment at offset 0")
    dst_f = comp.expr(dst)
    stride_f = comp.expr(stride)
    dt = M.np_dtype(_dtype(call))
    line = comp.line
    prog = comp.program

    def f(g):
        lane = (g.tid % 32).astype(np.int64)
        s = int(np.asarray(stride_f(g)).ravel()[0])
        elem = _FRAG_ROWS[lane] * s + _FRAG_COLS[lane]  # (L, 8)
        vals = g.env[buf][:, :8].astype(dt)
        prog.mem_write(g, dst_f(g), elem, 0, dt, vals, line, {"name": "mma_store destination", "dtype": str(dt)})
        return np.int32(0)

    return f


HANDLERS["tirx.mma_fill"] = HANDLERS["tirx.mma_fill_legacy"] = _mma_fill
HANDLERS["tirx.mma_store"] = HANDLERS["tirx.mma_store_legacy"] = _mma_store
