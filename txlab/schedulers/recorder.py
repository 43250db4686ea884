"""The recorder: TVMScript generated to run one scheduler class exactly as a kernel does, parsed and
compiled (for ``llvm``, or ``cuda``) once per text and cached in memory."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
from typing import Any

from txlab.errors import TxlabError
from txlab.schedulers.catalogue import _RUNTIME, SchedulerSpec


_PAD = " " * 12


#: the builds a trace can run: every parameter a constant; extents and worker counts kernel arguments;
#: every integer parameter a kernel argument (group sizes, cluster shape, swizzle and world size too)
SPECIALIZED, RUNTIME_EXTENTS, RUNTIME_PARAMETERS = "specialized", "runtime extents", "runtime parameters"


def _ctor(spec: SchedulerSpec, p: dict, workers, dynamic) -> tuple[str, list, str]:
    """Constructor expression, extra scalar kernel arguments, next_tile() argument text. ``dynamic``: False
    (every parameter a constant), True (extents and worker counts are arguments) or :data:`RUNTIME_PARAMETERS`
    (every integer parameter is)."""
    args: list[str] = []

    runtime = _RUNTIME.get(spec.name, set()) | {"num_clusters", "num_ctas", "stride"}
    if dynamic == RUNTIME_PARAMETERS:
        runtime |= {q.name for q in spec.params if q.kind == "int"}

    def val(name, value):
        if dynamic and name in runtime:
            args.append(f"p_{name}")
            return f"p_{name}"
        return repr(value)

    n = spec.name
    if n == "ClusterPersistentScheduler2D":
        ctor = (
            f'ClusterPersistentScheduler2D("s", num_m_tiles={val("num_m_tiles", p["num_m_tiles"])}, '
            f"num_n_tiles={val('num_n_tiles', p['num_n_tiles'])}, "
            f"num_clusters={val('num_clusters', workers)}, "
            f"l2_group_size={val('l2_group_size', p['l2_group_size'])}, "
            f"cluster_m={val('cluster_m', p['cluster_m'])}, cluster_n={val('cluster_n', p['cluster_n'])}, "
            f"serpentine={p['serpentine']!r})"
        )
        return ctor, args, ""
    if n == "GroupMajor3D":
        ctor = (
            f'GroupMajor3D("s", m_tiles={val("m_tiles", p["m_tiles"])}, n_tiles={val("n_tiles", p["n_tiles"])}, '
            f"k_tiles={val('k_tiles', p['k_tiles'])}, group_rows={val('group_rows', p['group_rows'])}, "
            f"step={val('step', p['step'])})"
        )
        return ctor, args, ""
    if n == "FlashAttentionLinearScheduler":
        ctor = (
            f'FlashAttentionLinearScheduler("s", num_batches={val("num_batches", p["num_batches"])}, '
            f"num_heads={val('num_heads', p['num_heads'])}, num_m_blocks={val('num_m_blocks', p['num_m_blocks'])}, "
            f"num_ctas={val('num_ctas', workers)})"
        )
        return ctor, args, ""
    if n == "FlashAttentionLPTScheduler":
        nc = "None" if workers is None else val("num_ctas", workers)
        ctor = (
            f'FlashAttentionLPTScheduler("s", num_batches={val("num_batches", p["num_batches"])}, '
            f"num_heads={val('num_heads', p['num_heads'])}, num_m_blocks={val('num_m_blocks', p['num_m_blocks'])}, "
            f"l2_swizzle={val('l2_swizzle', p['l2_swizzle'])}, num_ctas={nc})"
        )
        return ctor, args, ""
    if n == "IndexedTripleTileScheduler":
        return 'IndexedTripleTileScheduler("s", b_idx_buf, h_idx_buf, q_idx_buf, indptr_buf)', args, ""
    if n == "RankAwareGroupMajorTileScheduler":
        ctor = (
            f'RankAwareGroupMajorTileScheduler("s", m_clusters={val("m_clusters", p["m_clusters"])}, '
            f"n_clusters={val('n_clusters', p['n_clusters'])}, group_size={val('group_size', p['group_size'])}, "
            f"world_size={val('world_size', p['world_size'])})"
        )
        stride = val("stride", workers)
        return ctor, args, stride
    raise AssertionError(n)  # pragma: no cover


def _recorder_text(
    spec: SchedulerSpec, p: dict, workers, nworkers: int, dynamic: bool, device: str
) -> tuple[str, list]:
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
    body = [
        f'    out = T.match_buffer(out_h, ({nw}, cap, {w}), "int32")',
        f'    cnt = T.match_buffer(cnt_h, ({nw},), "int32")',
    ]
    if indexed:
        body += [
            "    n_idx = T.int32()",
            '    b_idx_buf = T.match_buffer(b_h, (n_idx,), "int32")',
            '    h_idx_buf = T.match_buffer(hh_h, (n_idx,), "int32")',
            '    q_idx_buf = T.match_buffer(q_h, (n_idx,), "int32")',
            f'    indptr_buf = T.match_buffer(ptr_h, ({nw} + 1,), "int32")',
        ]
    if device == "cuda":
        body += ["    T.device_entry()", f"    cta = T.cta_id([{nw}])", "    tx = T.thread_id([32])", "    if tx == 0:"]
    else:
        body += [f"    for cta in T.serial({nw}):"]
    ind = " " * 8
    if rank:
        body.append(f"{ind}_rank = T.meta_var(_txlab_bind_rank(rank))")
    body += [
        f"{ind}s = T.meta_var({ctor})",
        f"{ind}s.init(cta)",
        f"{ind}k: T.int32 = 0",
        f"{ind}while s.valid() & (k < limit):",
        f"{ind}    if k < cap:",
    ]
    body += [f"{ind}        out[cta, k, {i}] = s.{a}" for i, a in enumerate(spec.attrs)]
    body += [f"{ind}    k = k + 1", f"{ind}    s.next_tile({nxt})", f"{ind}cnt[cta] = k"]
    text = "\n".join(
        [
            "# generated by txlab.schedulers: records the tiles each CTA visits",
            f"from tvm.backend.cuda.lang import {spec.name}",
            "",
            "",
            "@T.prim_func",
            f"def recorder({', '.join(sig)}):",
            *body,
            "",
        ]
    )
    return text, scalars


# --------------------------------------------------------------------------------------------
# Parse + compile, cached
# --------------------------------------------------------------------------------------------
_EXE_CACHE: dict[tuple, Any] = {}
# recorders TVM refuses to compile (a constant 0 divisor): deterministic, so a trace that falls back to
# another build does not pay for the failing compile again
_REFUSED: dict[tuple, "_ConstantDivideByZero"] = {}
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
        if os.path.exists(path) and open(path, encoding="utf-8").read() == text:  # noqa: SIM115 - read once, closed by refcount
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
                    exec(compile(text, path, "exec"), mod.__dict__)  # noqa: S102 - TVM's own scheduler source, executed to record it
            else:
                exec(compile(text, path, "exec"), mod.__dict__)  # noqa: S102 - TVM's own scheduler source, executed to record it
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
        if key in _REFUSED:
            raise _ConstantDivideByZero(str(_REFUSED[key]))
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
                _REFUSED[key] = _ConstantDivideByZero(
                    "TVM cannot compile this scheduler with these constant parameters: one of its "
                    "branches (unreachable for them) divides by a constant 0, which TVM's constant "
                    "folder rejects (TryConstFold checks the divisor before the simplifier has proven the "
                    "branch dead). A kernel with the same static parameters fails the same way."
                )
                raise _REFUSED[key] from exc
            raise TxlabError(
                f"building the scheduler recorder failed: {type(exc).__name__}: {last_message_line(str(exc))}"
            ) from exc
        _EXE_CACHE[key] = (exe, fn)
        return exe, fn


class _ConstantDivideByZero(TxlabError):
    """TVM's constant folder met a division by a constant 0 in a branch of the scheduler."""


def last_message_line(text: str) -> str:
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
        _REFUSED.clear()
