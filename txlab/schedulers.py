"""Tile-scheduler traces: which tile each CTA visits, in which order, by running TVM's own code.

``trace(name, num_ctas, **params)`` generates a small TVMScript recorder for one of the tile
schedulers of ``tvm.backend.cuda.lang`` (``ClusterPersistentScheduler2D``, ``GroupMajor3D``,
``FlashAttentionLinearScheduler``, ``FlashAttentionLPTScheduler``, ``IndexedTripleTileScheduler``,
``RankAwareGroupMajorTileScheduler``). The recorder instantiates the real class exactly as a kernel
does, runs ``init(cta)`` / ``valid()`` / ``next_tile()`` with the CTA index as a serial loop, and
stores the scheduler's own attributes (``m_idx``, ``n_idx``, ...) into an output buffer. It is
compiled for ``llvm`` (or, with ``device="cuda"``, launched as a real kernel with the real CTA
index). No tile order is re-derived in Python.

Two builds exist:

* ``specialize=True`` (default): every parameter is a Python int baked into the scheduler, as in a
  kernel with static shapes (the classes prune statically dead branches in that case). One parse
  and compile per parameter set (about 0.6 s here, mostly TVMScript parsing), then cached in memory.
* ``specialize=False``: grid extents and the worker count are kernel arguments (the "runtime
  expression" form the classes accept for shapes); group sizes, cluster shape, swizzle, serpentine
  and world size stay constants. One compile then serves every grid size and CTA count (a new
  extent costs about a millisecond). The explorer widget uses this; tests check both builds agree.

``RankAwareGroupMajorTileScheduler`` reads its rank from ``T.nvshmem.my_pe()``. The recorder
substitutes that intrinsic while the scheduler is parsed: it yields the recorder's int32 argument
``rank`` instead, so the class's remapping runs unchanged, on the CPU and on a GPU without NVSHMEM.
The substitution is local to the parse (a lock guards it and the original is restored).
"""
from __future__ import annotations

import hashlib
import math
import os
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from txlab.errors import InputError, TxlabError

__all__ = ["trace", "ScheduleTrace", "SCHEDULERS", "SchedulerSpec", "Param", "lpt_index_lists", "spec_of"]

DEFAULT_SM_COUNT = 132  # H100/H200 SXM; used when no GPU is present
# Default cap on the tiles one trace records: about 12 bytes per visit per attribute plus the
# recorder's padded output buffer, so 2**22 tiles cost roughly 0.2-0.4 GB. trace(max_tiles=) raises it.
MAX_TRACE_TILES = 2**22


# --------------------------------------------------------------------------------------------
# What each scheduler takes and exposes (names are the class's own).
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "int" | "bool" | "ints"
    default: Any
    minimum: int = 1
    help: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "default": self.default,
                "minimum": self.minimum, "help": self.help}


@dataclass(frozen=True)
class SchedulerSpec:
    name: str
    family: str            # "gemm" (m,n[,k] tiles) or "attention" (batch, head, m-block)
    params: tuple          # Param, in constructor order (without prefix / worker count)
    attrs: tuple           # attribute names recorded per visit
    doc: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "family": self.family, "attrs": list(self.attrs),
                "params": [p.to_dict() for p in self.params], "doc": self.doc}


SCHEDULERS: dict[str, SchedulerSpec] = {
    s.name: s for s in (
        SchedulerSpec("ClusterPersistentScheduler2D", "gemm", (
            Param("num_m_tiles", "int", 16, help="tiles along M"),
            Param("num_n_tiles", "int", 16, help="tiles along N"),
            Param("l2_group_size", "int", 8, help="M rows per L2 group (swizzle size if serpentine)"),
            Param("cluster_m", "int", 1, help="cluster extent in M (tiles)"),
            Param("cluster_n", "int", 1, help="cluster extent in N (tiles)"),
            Param("serpentine", "bool", False, 0, help="CUTLASS-style 2D block swizzle, serpentine"),
        ), ("m_idx", "n_idx"), "persistent: cluster c visits work c, c+num_clusters, ..."),
        SchedulerSpec("GroupMajor3D", "gemm", (
            Param("m_tiles", "int", 16), Param("n_tiles", "int", 16), Param("k_tiles", "int", 1),
            Param("group_rows", "int", 8),
            Param("step", "int", 0, 0, help="next_tile() stride; 0 means num_ctas"),
        ), ("m_idx", "n_idx", "k_idx"), "grouped rows over (M, N, K), stride `step`"),
        SchedulerSpec("FlashAttentionLinearScheduler", "attention", (
            Param("num_batches", "int", 2), Param("num_heads", "int", 8),
            Param("num_m_blocks", "int", 16),
        ), ("batch_idx", "head_idx", "m_block_idx"), "linear (batch, head, m_block), stride num_ctas"),
        SchedulerSpec("FlashAttentionLPTScheduler", "attention", (
            Param("num_batches", "int", 2), Param("num_heads", "int", 8),
            Param("num_m_blocks", "int", 16), Param("l2_swizzle", "int", 4),
            Param("persistent", "bool", False, 0,
                  help="stride by num_ctas; otherwise one task per CTA (num_ctas=None)"),
        ), ("batch_idx", "head_idx", "m_block_idx"), "heaviest causal m-blocks first, L2 swizzle"),
        SchedulerSpec("IndexedTripleTileScheduler", "attention", (
            Param("b_indices", "ints", [0], 0), Param("h_indices", "ints", [0], 0),
            Param("q_indices", "ints", [0], 0), Param("tiles_indptr", "ints", [0, 1], 0),
        ), ("b_idx", "h_idx", "q_idx"), "CTA i visits entries tiles_indptr[i]..tiles_indptr[i+1]"),
        SchedulerSpec("RankAwareGroupMajorTileScheduler", "gemm", (
            Param("m_clusters", "int", 16), Param("n_clusters", "int", 16),
            Param("group_size", "int", 4), Param("world_size", "int", 4),
            Param("rank", "int", 0, 0, help="substituted for T.nvshmem.my_pe()"),
        ), ("m_idx", "n_idx"), "group-major, remote row-blocks first (rank-rotated)"),
    )
}


# Parameters a specialize=False build passes as kernel arguments: extents and worker counts.
# Group sizes, cluster shape, swizzle and world size stay compile-time constants, as in kernels
# (making them runtime values also sends TVM's lowering into very long compiles).
_RUNTIME = {
    "ClusterPersistentScheduler2D": {"num_m_tiles", "num_n_tiles"},
    "GroupMajor3D": {"m_tiles", "n_tiles", "k_tiles", "step"},
    "FlashAttentionLinearScheduler": {"num_batches", "num_heads", "num_m_blocks"},
    "FlashAttentionLPTScheduler": {"num_batches", "num_heads", "num_m_blocks"},
    "RankAwareGroupMajorTileScheduler": {"m_clusters", "n_clusters"},
}


def spec_of(name_or_class) -> SchedulerSpec:
    """The :class:`SchedulerSpec` of a scheduler, by name (any case) or by its TVM class."""
    if isinstance(name_or_class, str):
        name = name_or_class
    elif isinstance(getattr(name_or_class, "__name__", None), str):
        name = name_or_class.__name__
    else:
        raise InputError(f"the scheduler must be named by a string or given as its class, not "
                         f"{name_or_class!r} ({type(name_or_class).__name__}); txlab traces: "
                         f"{', '.join(SCHEDULERS)}", param="name_or_class")
    for key, spec in SCHEDULERS.items():
        if key.lower() == name.strip().lower():
            return spec
    raise InputError(f"unknown scheduler {name!r}; txlab traces: {', '.join(SCHEDULERS)}",
                     param="name_or_class")


_resolve = spec_of  # the former private name (other modules' branches may still use it)


# --------------------------------------------------------------------------------------------
# Parameter checking (before anything runs: a zero divisor would kill the process with SIGFPE).
# --------------------------------------------------------------------------------------------
def _as_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an int, got {value!r}", param=name)
    value = int(value)
    if value < minimum:
        what = "positive" if minimum == 1 else f">= {minimum}"
        raise InputError(f"{name}={value}: must be {what}", param=name)
    if value >= 2**31:
        raise InputError(f"{name}={value} does not fit the schedulers' int32 indices", param=name)
    return value


def _default_ctas() -> int:
    try:
        from txlab.device import probe

        info = probe()
        if info.available and info.sm_count:
            return info.sm_count
    except Exception:  # pragma: no cover - probe never raises, but never let it break a trace
        pass
    return DEFAULT_SM_COUNT


def _check_tiles(spec: SchedulerSpec, tiles: int, max_tiles: int) -> None:
    if tiles > max_tiles:
        raise InputError(
            f"{spec.name}: {tiles:,} tiles is more than one trace records by default "
            f"({max_tiles:,}; a trace keeps every visit, about 12 bytes x {len(spec.attrs)} attributes "
            f"each, and 2**31 is the int32 index limit): use a smaller grid, or pass "
            f"max_tiles={tiles} (at most {2**31 - 1:,}) to trace it anyway", param="max_tiles")


def _normalize(spec: SchedulerSpec, num_ctas, params: dict,
               max_tiles: int = MAX_TRACE_TILES) -> tuple[dict, int | None, int]:
    """Checked params, the worker count handed to the class (None = one task per CTA), and the
    number of CTAs the recorder loops over."""
    max_tiles = min(_as_int("max_tiles", max_tiles, 1), 2**31 - 1)
    params = dict(params)
    if spec.name == "ClusterPersistentScheduler2D" and "num_clusters" in params:
        nc = params.pop("num_clusters")
        if num_ctas is not None and nc != num_ctas:
            raise InputError("give num_ctas or num_clusters, not both", param="num_clusters")
        num_ctas = nc
    if spec.name == "FlashAttentionLPTScheduler" and "num_ctas" in params:
        num_ctas = params.pop("num_ctas")
    known = {p.name for p in spec.params}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(f"{spec.name} has no parameter {', '.join(map(repr, unknown))}; "
                         f"it takes {', '.join(sorted(known))} (and num_ctas)", param=unknown[0])
    out = {}
    for p in spec.params:
        v = params.get(p.name, p.default)
        if p.kind == "int":
            out[p.name] = _as_int(p.name, v, p.minimum)
        elif p.kind == "bool":
            if not isinstance(v, (bool, np.bool_)):
                raise InputError(f"{p.name} must be True or False, got {v!r}", param=p.name)
            out[p.name] = bool(v)
        else:
            arr = np.asarray(list(v) if not isinstance(v, np.ndarray) else v)
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise InputError(f"{p.name} must be a 1-D list of ints", param=p.name)
            if arr.size and (arr.min() < 0 or arr.max() >= 2**31):
                raise InputError(f"{p.name} has values outside [0, 2**31)", param=p.name)
            out[p.name] = [int(x) for x in arr]
    name = spec.name
    if name == "IndexedTripleTileScheduler":
        b, hh, q, ptr = (out[k] for k in ("b_indices", "h_indices", "q_indices", "tiles_indptr"))
        if not (len(b) == len(hh) == len(q)):
            raise InputError(f"b_indices, h_indices, q_indices must have equal length "
                             f"(got {len(b)}, {len(hh)}, {len(q)})", param="q_indices")
        if len(b) == 0:
            raise InputError("the index lists are empty: zero tiles to schedule", param="b_indices")
        _check_tiles(spec, len(b), max_tiles)
        if len(ptr) < 2:
            raise InputError("tiles_indptr needs num_ctas + 1 entries (at least 2)",
                             param="tiles_indptr")
        if any(x > y for x, y in zip(ptr, ptr[1:])) or ptr[-1] > len(b):
            raise InputError(f"tiles_indptr must be non-decreasing and end at most at "
                             f"len(b_indices)={len(b)}; got {ptr[:8]}{'...' if len(ptr) > 8 else ''}",
                             param="tiles_indptr")
        if num_ctas is not None and num_ctas != len(ptr) - 1:
            raise InputError(f"num_ctas={num_ctas} but tiles_indptr describes {len(ptr) - 1} CTAs",
                             param="num_ctas")
        return out, None, len(ptr) - 1
    if name == "ClusterPersistentScheduler2D":
        tiles = out["num_m_tiles"] * out["num_n_tiles"]
    elif name == "GroupMajor3D":
        tiles = out["m_tiles"] * out["n_tiles"] * out["k_tiles"]
    elif name == "RankAwareGroupMajorTileScheduler":
        tiles = out["m_clusters"] * out["n_clusters"]
        if out["world_size"] > out["m_clusters"]:
            raise InputError(f"world_size={out['world_size']} exceeds m_clusters="
                             f"{out['m_clusters']}: each rank owns m_clusters // world_size rows",
                             param="world_size")
        if out["rank"] >= out["world_size"]:
            raise InputError(f"rank={out['rank']} must be < world_size={out['world_size']}",
                             param="rank")
    else:
        tiles = out["num_batches"] * out["num_heads"] * out["num_m_blocks"]
    _check_tiles(spec, tiles, max_tiles)
    if name == "FlashAttentionLPTScheduler" and not out["persistent"] and num_ctas is None:
        return out, None, tiles           # one task per CTA: the grid is the task count
    if num_ctas is None:
        num_ctas = min(_default_ctas(), tiles)
    num_ctas = _as_int("num_ctas", num_ctas, 1)
    if num_ctas > tiles:
        raise InputError(f"num_ctas={num_ctas} is more than the {tiles} tiles: "
                         f"{num_ctas - tiles} CTAs would get no work; use num_ctas <= {tiles}",
                         param="num_ctas")
    if name == "FlashAttentionLPTScheduler":
        out["persistent"] = True
    if name == "GroupMajor3D" and out["step"] == 0:
        out["step"] = num_ctas
    return out, num_ctas, num_ctas


# --------------------------------------------------------------------------------------------
# Recorder generation
# --------------------------------------------------------------------------------------------
_PAD = " " * 12


def _ctor(spec: SchedulerSpec, p: dict, workers, dynamic: bool) -> tuple[str, list, str]:
    """Constructor expression, extra scalar kernel arguments, next_tile() argument text."""
    args: list[str] = []

    runtime = _RUNTIME.get(spec.name, set()) | {"num_clusters", "num_ctas", "stride"}

    def val(name, value):
        if dynamic and name in runtime:
            args.append(f"p_{name}")
            return f"p_{name}"
        return repr(value)

    n = spec.name
    if n == "ClusterPersistentScheduler2D":
        ctor = (f'ClusterPersistentScheduler2D("s", num_m_tiles={val("num_m_tiles", p["num_m_tiles"])}, '
                f'num_n_tiles={val("num_n_tiles", p["num_n_tiles"])}, '
                f'num_clusters={val("num_clusters", workers)}, '
                f'l2_group_size={val("l2_group_size", p["l2_group_size"])}, '
                f'cluster_m={val("cluster_m", p["cluster_m"])}, cluster_n={val("cluster_n", p["cluster_n"])}, '
                f'serpentine={p["serpentine"]!r})')
        return ctor, args, ""
    if n == "GroupMajor3D":
        ctor = (f'GroupMajor3D("s", m_tiles={val("m_tiles", p["m_tiles"])}, n_tiles={val("n_tiles", p["n_tiles"])}, '
                f'k_tiles={val("k_tiles", p["k_tiles"])}, group_rows={val("group_rows", p["group_rows"])}, '
                f'step={val("step", p["step"])})')
        return ctor, args, ""
    if n == "FlashAttentionLinearScheduler":
        ctor = (f'FlashAttentionLinearScheduler("s", num_batches={val("num_batches", p["num_batches"])}, '
                f'num_heads={val("num_heads", p["num_heads"])}, num_m_blocks={val("num_m_blocks", p["num_m_blocks"])}, '
                f'num_ctas={val("num_ctas", workers)})')
        return ctor, args, ""
    if n == "FlashAttentionLPTScheduler":
        nc = "None" if workers is None else val("num_ctas", workers)
        ctor = (f'FlashAttentionLPTScheduler("s", num_batches={val("num_batches", p["num_batches"])}, '
                f'num_heads={val("num_heads", p["num_heads"])}, num_m_blocks={val("num_m_blocks", p["num_m_blocks"])}, '
                f'l2_swizzle={val("l2_swizzle", p["l2_swizzle"])}, num_ctas={nc})')
        return ctor, args, ""
    if n == "IndexedTripleTileScheduler":
        return 'IndexedTripleTileScheduler("s", b_idx_buf, h_idx_buf, q_idx_buf, indptr_buf)', args, ""
    if n == "RankAwareGroupMajorTileScheduler":
        ctor = (f'RankAwareGroupMajorTileScheduler("s", m_clusters={val("m_clusters", p["m_clusters"])}, '
                f'n_clusters={val("n_clusters", p["n_clusters"])}, group_size={val("group_size", p["group_size"])}, '
                f'world_size={val("world_size", p["world_size"])})')
        stride = val("stride", workers)
        return ctor, args, stride
    raise AssertionError(n)  # pragma: no cover


def _recorder_text(spec: SchedulerSpec, p: dict, workers, nworkers: int, dynamic: bool,
                   device: str) -> tuple[str, list]:
    """TVMScript text of the recorder and the ordered names of its scalar arguments."""
    ctor, scalars, nxt = _ctor(spec, p, workers, dynamic)
    nw = "p_nworkers" if dynamic else str(nworkers)
    if dynamic:
        scalars = ["p_nworkers"] + scalars
    indexed = spec.name == "IndexedTripleTileScheduler"
    rank = spec.name == "RankAwareGroupMajorTileScheduler"
    sig = ["out_h: T.handle", "cnt_h: T.handle"]
    if indexed:
        sig += ["b_h: T.handle", "hh_h: T.handle", "q_h: T.handle", "ptr_h: T.handle"]
    sig += ["cap: T.int32", "limit: T.int32"]
    sig += [f"{s}: T.int32" for s in scalars]
    if rank:
        sig.append("rank: T.int32")
    w = len(spec.attrs)
    body = [f"    out = T.match_buffer(out_h, ({nw}, cap, {w}), \"int32\")",
            f"    cnt = T.match_buffer(cnt_h, ({nw},), \"int32\")"]
    if indexed:
        body += ["    n_idx = T.int32()",
                 "    b_idx_buf = T.match_buffer(b_h, (n_idx,), \"int32\")",
                 "    h_idx_buf = T.match_buffer(hh_h, (n_idx,), \"int32\")",
                 "    q_idx_buf = T.match_buffer(q_h, (n_idx,), \"int32\")",
                 f"    indptr_buf = T.match_buffer(ptr_h, ({nw} + 1,), \"int32\")"]
    if device == "cuda":
        body += ["    T.device_entry()",
                 f"    cta = T.cta_id([{nw}])",
                 "    tx = T.thread_id([32])",
                 "    if tx == 0:"]
    else:
        body += [f"    for cta in T.serial({nw}):"]
    ind = " " * 8
    if rank:
        body.append(f"{ind}_rank = T.meta_var(_txlab_bind_rank(rank))")
    body += [f"{ind}s = T.meta_var({ctor})",
             f"{ind}s.init(cta)",
             f"{ind}k: T.int32 = 0",
             f"{ind}while s.valid() & (k < limit):",
             f"{ind}    if k < cap:"]
    body += [f"{ind}        out[cta, k, {i}] = s.{a}" for i, a in enumerate(spec.attrs)]
    body += [f"{ind}    k = k + 1",
             f"{ind}    s.next_tile({nxt})",
             f"{ind}cnt[cta] = k"]
    text = "\n".join([
        "# generated by txlab.schedulers: records the tiles each CTA visits",
        f"from tvm.backend.cuda.lang import {spec.name}",
        "",
        "",
        "@T.prim_func",
        f"def recorder({', '.join(sig)}):",
        *body,
        "",
    ])
    return text, scalars


# --------------------------------------------------------------------------------------------
# Parse + compile, cached
# --------------------------------------------------------------------------------------------
_EXE_CACHE: dict[tuple, Any] = {}
_LOCK = threading.RLock()
_RANK = threading.local()
_PARSER_POOL = None


def _bind_rank(var):
    _RANK.var = var
    return var


class _RankAsArgument:
    """While the recorder is parsed, ``T.nvshmem.my_pe()`` yields the recorder's ``rank`` argument."""

    def __enter__(self):
        from tvm.script import tirx as T

        self.ns = T.nvshmem
        self.had = "my_pe" in vars(self.ns)
        self.orig = vars(self.ns).get("my_pe")
        self.ns.my_pe = lambda: _RANK.var
        return self

    def __exit__(self, *exc):
        if self.had:
            self.ns.my_pe = self.orig
        else:  # pragma: no cover - NVSHMEMNamespace sets it in __init__
            del self.ns.my_pe
        _RANK.var = None


_PRIVATE_SOURCE_DIR: list = []


def _private_source_dir() -> str:
    """A folder of this process's own, for when the cache directory cannot be written."""
    if not _PRIVATE_SOURCE_DIR:
        import atexit
        import shutil
        import tempfile

        path = tempfile.mkdtemp(prefix="txlab-schedulers-")
        atexit.register(shutil.rmtree, path, True)
        _PRIVATE_SOURCE_DIR.append(path)
    return _PRIVATE_SOURCE_DIR[0]


def _source_dir() -> str:
    from txlab.cache import cache_root, warn_unusable

    base = cache_root()
    path = os.path.join(base, "schedulers")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        warn_unusable(base, exc)
        return _private_source_dir()
    return path


def _write_source(path: str, text: str) -> str:
    """Write the recorder's source where TVM's parser can find it; the path used."""
    try:
        if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
            return path
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        return path
    except OSError as exc:
        from txlab.cache import warn_unusable

        warn_unusable(os.path.dirname(os.path.dirname(path)), exc)
        path = os.path.join(_private_source_dir(), os.path.basename(path))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path


def _parse(text: str, rank: bool):
    """Parse generated TVMScript. The text is written to a real file and bound to a module in
    sys.modules (TVM's parser walks the stack with ``inspect``, which is slow for frames whose file
    it cannot find); parsing runs on a worker thread so the caller's (e.g. Jupyter's) deep stack is
    not walked either."""
    global _PARSER_POOL
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = _write_source(os.path.join(_source_dir(), f"rec_{digest}.py"), text)
    import linecache

    linecache.checkcache(path)
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)

    def work():
        from tvm.script import tirx as T

        import txlab.compat  # noqa: F401  (includes a 4x faster frame inspection for the parser)

        modname = f"txlab._generated.rec_{digest}"
        mod = types.ModuleType(modname)
        mod.__file__ = path
        mod.T = T
        mod._txlab_bind_rank = _bind_rank
        sys.modules[modname] = mod
        try:
            if rank:
                with _RankAsArgument():
                    exec(compile(text, path, "exec"), mod.__dict__)
            else:
                exec(compile(text, path, "exec"), mod.__dict__)
        finally:
            sys.modules.pop(modname, None)
        return mod.recorder

    if _PARSER_POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _PARSER_POOL = ThreadPoolExecutor(1, thread_name_prefix="txlab-tvmscript")
    return _PARSER_POOL.submit(work).result()


def _executable(text: str, rank: bool, device: str):
    key = (text, device)
    with _LOCK:
        hit = _EXE_CACHE.get(key)
        if hit is not None:
            return hit
        import tvm

        try:
            func = _parse(text, rank)
            if device == "cuda":
                from txlab.device import probe

                arch = probe().arch or "sm_90a"
                target = tvm.target.Target({"kind": "cuda", "arch": arch})
            else:
                target = "llvm"
            exe = tvm.compile(tvm.IRModule({"main": func}), target=target, tir_pipeline="tirx")
            fn = exe["main"]
        except Exception as exc:
            msg = str(exc)
            if "Divide by zero" in msg:
                raise _ConstantDivideByZero(
                    "TVM cannot compile this scheduler with these constant parameters: one of its "
                    "branches (unreachable for them) divides by a constant 0, which TVM's constant "
                    "folder rejects. A kernel with the same static parameters fails the same way. "
                    "Change the parameters.") from exc
            raise TxlabError(f"building the scheduler recorder failed: {type(exc).__name__}: "
                             f"{_last_message_line(str(exc))}") from exc
        _EXE_CACHE[key] = (exe, fn)
        return exe, fn


class _ConstantDivideByZero(TxlabError):
    """TVM's constant folder met a division by a constant 0 in a branch of the scheduler."""


def _last_message_line(text: str) -> str:
    """The line of an error that says what went wrong: TVM's diagnostics end with the source line
    and a ``^^^^`` marker under it, and its checks start with the failed condition."""
    import re

    lines = [l.strip() for l in text.strip().splitlines()]
    said = [l for l in lines if l and set(l) - set("^~-| ") and not re.match(r"^(\d+\s*\||-->|\|)", l)]
    head = next((l for l in said if re.match(r"^(error:|[\w.]*(Error|Exception):)", l)), None)
    msg = head or (said[-1] if said else "(no message)")
    msg = re.sub(r"^error:\s*", "", msg)
    return re.sub(r"Check failed: \(.*\) is false: ", "", msg)


def clear_cache() -> None:
    """Forget compiled recorders (the next trace compiles again)."""
    with _LOCK:
        _EXE_CACHE.clear()


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------
def trace(name_or_class, num_ctas: int | None = None, *, device: str = "cpu",
          specialize: bool = True, concurrency: int | None = None,
          max_tiles: int = MAX_TRACE_TILES, **params) -> "ScheduleTrace":
    """Run a ``tvm.backend.cuda.lang`` tile scheduler and record the tiles each CTA visits.

    ``num_ctas`` is the persistent worker count the class strides by (``num_clusters`` for
    ``ClusterPersistentScheduler2D``, where a worker is a cluster); default: the GPU's SM count,
    or 132 without a GPU, capped at the tile count. For ``FlashAttentionLPTScheduler`` leaving it
    None keeps the class's one-task-per-CTA mode (pass ``persistent=True`` for the default count).
    ``IndexedTripleTileScheduler`` takes its CTA count from ``tiles_indptr``.
    ``RankAwareGroupMajorTileScheduler`` takes ``rank`` (0 <= rank < world_size): it replaces
    ``T.nvshmem.my_pe()`` as a kernel argument of the recorder (see the module docstring).

    ``device="cuda"`` launches the recorder as a real kernel (one CTA per worker, CTA index from
    ``T.cta_id``) and reads the buffers back; ``concurrency`` is the number of CTAs resident at once
    for the wave model (default: min(num_ctas, SM count)). ``max_tiles`` caps the grid (the product
    of the tile counts; default ``MAX_TRACE_TILES`` = 2**22): a larger grid raises InputError.
    """
    spec = spec_of(name_or_class)
    if device not in ("cpu", "cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', not {device!r}", param="device")
    if not isinstance(specialize, (bool, np.bool_)):
        raise InputError(f"specialize must be True or False, got {specialize!r}", param="specialize")
    p, workers, nworkers = _normalize(spec, num_ctas, params, max_tiles)
    if device == "cuda":
        from txlab.device import require_gpu

        require_gpu("tracing a scheduler on the GPU")
        specialize = True
    dynamic = not specialize
    rank = spec.name == "RankAwareGroupMajorTileScheduler"
    try:
        text, scalar_names = _recorder_text(spec, p, workers, nworkers, dynamic, device)
        exe, fn = _executable(text, rank, device)
    except _ConstantDivideByZero as exc:
        if not dynamic:
            raise TxlabError(f"{exc} Or pass specialize=False to trace the runtime-extent build.") from None
        # The runtime-extent build keeps group sizes constant while the extents are unknown, so a
        # branch that only some extents reach divides by a constant 0 (e.g. l2_group_size=1).
        # With every parameter known that branch folds away: trace the specialized build.
        dynamic, specialize = False, True
        try:
            text, scalar_names = _recorder_text(spec, p, workers, nworkers, dynamic, device)
            exe, fn = _executable(text, rank, device)
        except _ConstantDivideByZero as exc2:
            raise TxlabError(f"{exc2} (both the runtime-extent and the specialized build fail)") from None

    import tvm

    dev = tvm.cuda(0) if device == "cuda" else tvm.cpu(0)
    scalar_values = {"p_nworkers": nworkers, "p_num_clusters": workers, "p_num_ctas": workers,
                     "p_stride": workers}
    scalar_values.update({f"p_{k}": v for k, v in p.items() if not isinstance(v, list)})
    scalars = [int(scalar_values[s]) for s in scalar_names]
    if rank:
        scalars.append(int(p["rank"]))
    if spec.name == "IndexedTripleTileScheduler":
        total = len(p["b_indices"])
        idx = [tvm.runtime.tensor(np.asarray(p[k], dtype="int32"), device=dev)
               for k in ("b_indices", "h_indices", "q_indices", "tiles_indptr")]
    else:
        total = _grid_size(spec, p)
        idx = []
    limit = min(4 * total + 16, 2**31 - 1)  # runaway guard: no correct scheduler revisits every tile
    cap = max(1, -(-total // max(nworkers, 1)) + 1)
    if spec.name == "IndexedTripleTileScheduler":
        ptr = p["tiles_indptr"]
        cap = max(1, max(b - a for a, b in zip(ptr, ptr[1:])))
    w = len(spec.attrs)
    for _ in range(2):
        out = tvm.runtime.tensor(np.full((nworkers, cap, w), -1, dtype="int32"), device=dev)
        cnt = tvm.runtime.tensor(np.zeros((nworkers,), dtype="int32"), device=dev)
        try:
            fn(out, cnt, *idx, cap, limit, *scalars)
        except Exception as exc:
            raise TxlabError(f"the {spec.name} recorder failed to run: {exc}") from exc
        counts = cnt.numpy()
        if counts.size and counts.max() >= limit:
            bad = int(np.argmax(counts))
            raise TxlabError(f"{spec.name} did not terminate for these parameters: CTA {bad} was "
                             f"still valid() after {limit} tiles (grid of {total} tiles)")
        if counts.size == 0 or counts.max() <= cap:
            break
        cap = int(counts.max())
    raw = out.numpy()
    steps = np.concatenate([np.arange(c, dtype=np.int32) for c in counts]) if counts.sum() else \
        np.zeros(0, np.int32)
    ctas = np.repeat(np.arange(nworkers, dtype=np.int32), counts)
    mask = np.arange(cap)[None, :] < counts[:, None]
    values = raw[mask]  # (n, w) in CTA-major, step order
    if concurrency is None:
        concurrency = min(nworkers, _default_ctas())
    concurrency = _as_int("concurrency", concurrency, 1)
    public = {k: v for k, v in p.items()}
    return ScheduleTrace(spec.name, public, nworkers, ctas, steps,
                         {a: values[:, i].copy() for i, a in enumerate(spec.attrs)},
                         concurrency=concurrency, device=device, specialized=specialize)


def _grid_size(spec, p) -> int:
    n = spec.name
    if n == "ClusterPersistentScheduler2D":
        return p["num_m_tiles"] * p["num_n_tiles"]
    if n == "GroupMajor3D":
        return p["m_tiles"] * p["n_tiles"] * p["k_tiles"]
    if n == "RankAwareGroupMajorTileScheduler":
        return p["m_clusters"] * p["n_clusters"]
    if n == "IndexedTripleTileScheduler":
        return len(p["b_indices"])
    return p["num_batches"] * p["num_heads"] * p["num_m_blocks"]


def lpt_index_lists(num_batches: int, num_heads: int, num_m_blocks: int, num_ctas: int,
                    causal: bool = True) -> dict:
    """Index lists for ``IndexedTripleTileScheduler``: tasks sorted by causal cost (heaviest first)
    and assigned greedily to the least-loaded CTA (host-side LPT). Returns the four lists."""
    import heapq

    tasks = [(b, h, q) for b in range(num_batches) for h in range(num_heads)
             for q in range(num_m_blocks)]
    cost = (lambda q: q + 1) if causal else (lambda q: num_m_blocks)
    tasks.sort(key=lambda t: -cost(t[2]))
    heap = [(0, c) for c in range(num_ctas)]
    per = [[] for _ in range(num_ctas)]
    for t in tasks:
        load, c = heapq.heappop(heap)
        per[c].append(t)
        heapq.heappush(heap, (load + cost(t[2]), c))
    b, hh, q, ptr = [], [], [], [0]
    for lst in per:
        for (x, y, z) in lst:
            b.append(x), hh.append(y), q.append(z)
        ptr.append(len(b))
    return {"b_indices": b, "h_indices": hh, "q_indices": q, "tiles_indptr": ptr}


# --------------------------------------------------------------------------------------------
# The trace and its metrics
# --------------------------------------------------------------------------------------------
@dataclass
class ScheduleTrace:
    """Tiles visited by each CTA of a scheduler, in order. Arrays are int32, CTA-major.

    ``cta``/``step`` say who visits and when (the step-th tile of that CTA); ``attrs`` holds the
    scheduler's own attributes for each visit (``m_idx``, ``n_idx``, ``k_idx`` or ``batch_idx``,
    ``head_idx``, ``m_block_idx`` or ``b_idx``, ``h_idx``, ``q_idx``).
    """

    scheduler: str
    params: dict
    num_ctas: int
    cta: np.ndarray
    step: np.ndarray
    attrs: dict
    concurrency: int = DEFAULT_SM_COUNT
    device: str = "cpu"
    specialized: bool = True
    _metrics_cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ---- shapes -----------------------------------------------------------------------------
    @property
    def spec(self) -> SchedulerSpec:
        return SCHEDULERS[self.scheduler]

    @property
    def family(self) -> str:
        return self.spec.family

    def __len__(self) -> int:
        return int(self.cta.size)

    @property
    def visits(self) -> list[dict]:
        """One dict per visit, ``{"cta", "step", <attribute names>}``, in each CTA's order."""
        names = list(self.attrs)
        cols = [self.cta.tolist(), self.step.tolist()] + [self.attrs[n].tolist() for n in names]
        keys = ["cta", "step"] + names
        return [dict(zip(keys, row)) for row in zip(*cols)]

    @property
    def array(self) -> np.ndarray:
        """The visits as a numpy structured array (fields ``cta``, ``step``, attributes)."""
        dtype = [("cta", "i4"), ("step", "i4")] + [(n, "i4") for n in self.attrs]
        arr = np.empty(len(self), dtype=dtype)
        arr["cta"], arr["step"] = self.cta, self.step
        for n, v in self.attrs.items():
            arr[n] = v
        return arr

    def grid_shape(self) -> tuple[int, int, int]:
        """(rows, cols, layers) of the tile grid the trace is drawn on."""
        p = self.params
        n = self.scheduler
        if n == "ClusterPersistentScheduler2D":
            return p["num_m_tiles"], p["num_n_tiles"], 1
        if n == "GroupMajor3D":
            return p["m_tiles"], p["n_tiles"], p["k_tiles"]
        if n == "RankAwareGroupMajorTileScheduler":
            return p["m_clusters"], p["n_clusters"], 1
        if n == "IndexedTripleTileScheduler":
            b, h, q = self.attrs["b_idx"], self.attrs["h_idx"], self.attrs["q_idx"]
            nb = int(b.max()) + 1 if b.size else 1
            nh = int(h.max()) + 1 if h.size else 1
            return nb * nh, (int(q.max()) + 1 if q.size else 1), 1
        return p["num_batches"] * p["num_heads"], p["num_m_blocks"], 1

    def coords(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, col, layer) of every visit on the grid of :meth:`grid_shape`."""
        a = self.attrs
        zeros = np.zeros_like(self.cta)
        if "m_idx" in a:
            return a["m_idx"], a["n_idx"], a.get("k_idx", zeros)
        if "batch_idx" in a:
            return a["batch_idx"] * self.params["num_heads"] + a["head_idx"], a["m_block_idx"], zeros
        nh = int(a["h_idx"].max()) + 1 if a["h_idx"].size else 1
        return a["b_idx"] * nh + a["h_idx"], a["q_idx"], zeros

    @property
    def waves_per_step(self) -> int:
        return -(-self.num_ctas // self.concurrency)

    @property
    def wave(self) -> np.ndarray:
        """Wave of each visit under an equal-time model: ``concurrency`` CTAs are resident; CTA c
        runs in slot group c // concurrency, and its step s in wave s * ceil(num_ctas/concurrency)
        + c // concurrency (for a persistent grid, num_ctas <= concurrency: wave == step)."""
        return (self.step * self.waves_per_step + self.cta // self.concurrency).astype(np.int32)

    # ---- metrics ----------------------------------------------------------------------------
    def metrics(self, *, tile_m: int = 128, tile_n: int = 128, k: int = 4096, dtype_bytes: int = 2,
                block_m: int = 128, block_n: int = 128, causal: bool = True) -> dict:
        """Load balance, waves, coverage; GEMM panel reuse per wave and DRAM estimate; attention
        causal cost per CTA. See :func:`_gemm_metrics` and :func:`_attention_metrics` for models."""
        key = (tile_m, tile_n, k, dtype_bytes, block_m, block_n, causal)
        if key in self._metrics_cache:
            return self._metrics_cache[key]
        counts = np.bincount(self.cta, minlength=self.num_ctas)
        mean = float(counts.mean()) if counts.size else 0.0
        waves = int(self.wave.max()) + 1 if len(self) else 0
        rows, cols, layers = self.grid_shape()
        r, c, l = self.coords()
        inside = (r >= 0) & (r < rows) & (c >= 0) & (c < cols) & (l >= 0) & (l < layers)
        flat = (l[inside].astype(np.int64) * rows + r[inside]) * cols + c[inside]
        hits = np.bincount(flat, minlength=rows * cols * layers)
        m = {
            "scheduler": self.scheduler,
            "num_ctas": self.num_ctas,
            "concurrency": self.concurrency,
            "visits": len(self),
            "tiles_per_cta": {"min": int(counts.min()) if counts.size else 0,
                              "max": int(counts.max()) if counts.size else 0,
                              "mean": round(mean, 3)},
            "imbalance": round(float(counts.max()) / mean, 4) if mean else 0.0,
            "idle_ctas": int((counts == 0).sum()),
            "waves": waves,
            "coverage": {"grid_tiles": rows * cols * layers,
                         "missing": int((hits == 0).sum()),
                         "duplicated": int((hits > 1).sum()),
                         "extra_visits": int(np.maximum(hits - 1, 0).sum()),
                         "out_of_grid": int((~inside).sum())},
        }
        if self.family == "gemm":
            m["gemm"] = self._gemm_metrics(tile_m, tile_n, k, dtype_bytes)
        else:
            m["attention"] = self._attention_metrics(block_m, block_n, causal)
        self._metrics_cache[key] = m
        return m

    def _gemm_metrics(self, tile_m, tile_n, k, dtype_bytes) -> dict:
        """Per wave, the distinct A row-panels (m, or (m, k) blocks for 3D) and B column-panels
        (n, or (k, n)) its concurrently running tiles read. Traffic model: a wave's distinct panels
        come from DRAM once, nothing survives in L2 across waves. Baseline: row-major tile order
        (tile t = (t // N, t % N), or (m, n, k) lexicographic) striding by the same num_ctas."""
        rows, cols, layers = self.grid_shape()
        r, c, l = self.coords()
        wave = self.wave
        a_per, b_per = _distinct_per_wave(wave, r, c, l, layers)
        # row-major baseline with the same CTA count, stride and wave model
        total = rows * cols * layers
        t = np.arange(total, dtype=np.int64)
        base_cta = t % self.num_ctas
        base_step = t // self.num_ctas
        base_wave = base_step * self.waves_per_step + base_cta // self.concurrency
        bm, rem = np.divmod(t, cols * layers)
        bn, bk = np.divmod(rem, layers)
        ba, bb = _distinct_per_wave(base_wave, bm, bn, bk, layers)
        k_slice = k / layers
        a_bytes = tile_m * k_slice * dtype_bytes
        b_bytes = tile_n * k_slice * dtype_bytes
        traffic = float(a_per.sum() * a_bytes + b_per.sum() * b_bytes)
        base = float(ba.sum() * a_bytes + bb.sum() * b_bytes)
        return {
            "a_panels_per_wave": a_per.tolist(),
            "b_panels_per_wave": b_per.tolist(),
            "a_panel_loads": int(a_per.sum()), "b_panel_loads": int(b_per.sum()),
            "rowmajor_a_panel_loads": int(ba.sum()), "rowmajor_b_panel_loads": int(bb.sum()),
            "dram_bytes_est": traffic, "rowmajor_dram_bytes_est": base,
            "traffic_vs_rowmajor": round(traffic / base, 4) if base else 0.0,
            "model": {"tile_m": tile_m, "tile_n": tile_n, "k": k, "dtype_bytes": dtype_bytes},
        }

    def _attention_metrics(self, block_m, block_n, causal) -> dict:
        """Causal cost of a (batch, head, m_block) task = KV blocks it reads:
        min(ceil((m_block+1)*block_m / block_n), kv_blocks) with kv_blocks = ceil(seq/block_n),
        seq = num_m_blocks*block_m; non-causal = kv_blocks. Makespan: CTAs run their tasks back to
        back; with more CTAs than ``concurrency`` they are issued in index order to the first free
        slot (greedy list scheduling)."""
        _, cols, _ = self.grid_shape()
        q = self.coords()[1].astype(np.int64)
        seq = cols * block_m
        kv_blocks = -(-seq // block_n)
        if causal:
            cost = np.minimum(-(-((q + 1) * block_m) // block_n), kv_blocks)
        else:
            cost = np.full_like(q, kv_blocks)
        per_cta = np.bincount(self.cta, weights=cost, minlength=self.num_ctas).astype(np.int64)
        mean = float(per_cta.mean()) if per_cta.size else 0.0
        if self.num_ctas <= self.concurrency:
            makespan = int(per_cta.max()) if per_cta.size else 0
        else:
            import heapq

            slots = [0] * self.concurrency
            heapq.heapify(slots)
            finish = 0
            for work in per_cta.tolist():
                start = heapq.heappop(slots)
                end = start + work
                finish = max(finish, end)
                heapq.heappush(slots, end)
            makespan = finish
        ideal = float(cost.sum()) / min(self.concurrency, self.num_ctas) if len(self) else 0.0
        return {
            "causal": causal,
            "cost_per_cta": per_cta.tolist(),
            "cost": {"min": int(per_cta.min()) if per_cta.size else 0,
                     "max": int(per_cta.max()) if per_cta.size else 0, "mean": round(mean, 3)},
            "cost_imbalance": round(float(per_cta.max()) / mean, 4) if mean else 0.0,
            "total_kv_blocks": int(cost.sum()),
            "makespan_kv_blocks": makespan,
            "ideal_kv_blocks": round(ideal, 3),
            "efficiency": round(ideal / makespan, 4) if makespan else 0.0,
            "model": {"block_m": block_m, "block_n": block_n},
        }

    # ---- output -----------------------------------------------------------------------------
    def columns(self) -> dict[str, np.ndarray]:
        """int32 columns for drawing: cta, step, wave, row, col, layer, then the attributes."""
        r, c, l = self.coords()
        cols = {"cta": self.cta, "step": self.step, "wave": self.wave,
                "row": r, "col": c, "layer": l}
        cols.update(self.attrs)
        return {k: np.ascontiguousarray(v, dtype=np.int32) for k, v in cols.items()}

    def to_dict(self, *, arrays: bool = True) -> dict:
        """Compact payload: scalars, metrics and int columns (lists, not per-visit dicts)."""
        rows, cols, layers = self.grid_shape()
        spec = self.spec
        labels = {"gemm": ("m tile", "n tile", "k tile"),
                  "attention": ("batch·head", "m block", "")}[spec.family]
        d = {
            "scheduler": self.scheduler,
            "family": spec.family,
            "params": {k: v for k, v in self.params.items()},
            "num_ctas": self.num_ctas,
            "concurrency": self.concurrency,
            "device": self.device,
            "specialized": self.specialized,
            "attrs": list(self.attrs),
            "grid": {"rows": rows, "cols": cols, "layers": layers,
                     "row_label": labels[0], "col_label": labels[1], "layer_label": labels[2],
                     "num_heads": self._num_heads()},
            "visits": len(self),
            "metrics": self.metrics(),
        }
        if arrays:
            d["columns"] = {k: v.tolist() for k, v in self.columns().items()}
        return d

    def _num_heads(self) -> int:
        if "num_heads" in self.params:
            return self.params["num_heads"]
        if "h_idx" in self.attrs and self.attrs["h_idx"].size:
            return int(self.attrs["h_idx"].max()) + 1
        return 1

    def tile_map(self, by: str = "cta", layer: int = 0) -> np.ndarray:
        """rows x cols array of the first visit's ``by`` (cta, step or wave) per tile; -1 if none."""
        rows, cols, _ = self.grid_shape()
        out = np.full((rows, cols), -1, dtype=np.int64)
        r, c, l = self.coords()
        val = {"cta": self.cta, "step": self.step, "wave": self.wave}[by]
        ok = (l == layer) & (r >= 0) & (r < rows) & (c >= 0) & (c < cols)
        # reversed so the first visit wins when a tile is visited twice
        out[r[ok][::-1], c[ok][::-1]] = val[ok][::-1]
        return out

    def plot(self, by: str = "cta", wave: int | None = None, layer: int = 0, ax=None):
        """Tile grid coloured by ``by`` (cta, step or wave); with ``wave``, tiles of later waves
        are blank and that wave's tiles are outlined. Returns the matplotlib Figure (drawn on ``ax``
        when given)."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if by not in ("cta", "step", "wave"):
            raise InputError("by must be 'cta', 'step' or 'wave'", param="by")
        grid = self.tile_map(by, layer).astype(float)
        if wave is not None:
            wmap = self.tile_map("wave", layer)
            grid[wmap > wave] = np.nan
        grid[grid < 0] = np.nan
        if ax is None:
            rows, cols, _ = self.grid_shape()
            scale = 6.0 / max(rows, cols)
            _, ax = plt.subplots(figsize=(max(3.0, cols * scale + 1.5), max(3.0, rows * scale + 0.8)))
        cmap = "tab20" if by == "cta" else "viridis"
        im = ax.imshow(grid, cmap=cmap, interpolation="nearest", aspect="auto")
        spec = self.spec
        labels = {"gemm": ("m tile", "n tile"), "attention": ("batch·head", "m block")}[spec.family]
        ax.set_ylabel(labels[0])
        ax.set_xlabel(labels[1])
        m = self.metrics()
        title = f"{self.scheduler} · {self.num_ctas} CTAs · {m['waves']} waves"
        if wave is not None:
            title += f" · wave {wave}"
            r, c, l = self.coords()
            sel = (self.wave == wave) & (l == layer)
            for rr, cc in zip(r[sel].tolist(), c[sel].tolist()):
                ax.add_patch(Rectangle((cc - 0.5, rr - 0.5), 1, 1, fill=False, lw=0.8, ec="black"))
        ax.set_title(title, fontsize=9)
        ax.figure.colorbar(im, ax=ax, label=by, fraction=0.046, pad=0.04)
        return ax.figure

    def view(self, **kwargs):
        """The interactive widget of this schedule (:class:`txlab.views.SchedulerExplorer`), registered by
        ``txlab.views``; ``kwargs`` go to the widget."""
        from txlab.hooks import widget

        return widget(self, **kwargs)

    def __repr__(self) -> str:
        m = self.metrics()
        return (f"ScheduleTrace({self.scheduler}, {self.num_ctas} CTAs, {len(self)} visits, "
                f"{m['waves']} waves, imbalance {m['imbalance']})")


def _distinct_per_wave(wave, r, c, l, layers):
    """Distinct A blocks (row, layer) and B blocks (layer, col) per wave."""
    if wave.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    nw = int(wave.max()) + 1
    w = wave.astype(np.int64)
    r = r.astype(np.int64)
    c = c.astype(np.int64)
    l = l.astype(np.int64)
    span_r = int(r.max()) + 2 if r.size else 1
    span_c = int(c.max()) + 2 if c.size else 1
    a_keys = np.unique((w * layers + l) * span_r + r)
    b_keys = np.unique((w * layers + l) * span_c + c)
    a_per = np.bincount(a_keys // (span_r * layers), minlength=nw)
    b_per = np.bincount(b_keys // (span_c * layers), minlength=nw)
    return a_per, b_per
