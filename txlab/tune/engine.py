"""The work of a sweep: compile one configuration (CPU), measure one (GPU), and run many on Ray.

Compile tasks are Ray tasks (``num_cpus=1``, one per core); measuring happens in one Ray actor per
GPU (``num_gpus=1``, ``max_concurrency=1``: nothing else times on that GPU meanwhile). Inside the
actor every launch goes through txlab's isolated worker (:mod:`txlab.worker`), so a candidate that
faults or hangs costs that worker, which is replaced, and the sweep goes on.

The same two functions (:func:`compile_one`, :func:`measure_one`) also run in-process
(``engine="serial"``): the baseline the parallel compile phase is measured against, and a way to
sweep where Ray cannot start.

Ray starts embedded and local unless ``cluster="ray://host:port"`` or ``RAY_ADDRESS`` names a
cluster; its object store is capped (``TXLAB_RAY_OBJECT_STORE_MB``, default 256) so a 2 GB machine
(Binder) still fits it. Kernels written in a notebook cell or a string travel with their source
lines (TVMScript re-reads a function's source when it parses it), so workers can parse them.
"""

from __future__ import annotations

import functools
import json
import linecache
import os
import sys
import time
import types

from txlab.tune.space import config_id

#: the object store Ray gets when txlab starts it (MiB)
DEFAULT_OBJECT_STORE_MB = 256


def _quiet(_stage):
    return None


# ---- sources of kernels defined in cells/strings ------------------------------------------------
def collect_sources(fn, limit_bytes: int = 4 << 20) -> dict:
    """{filename: lines} of the code ``fn`` is built from, when TVMScript could not re-read it on
    another process or machine (a notebook cell, a string, a script outside site-packages)."""
    seen, files = set(), {}

    def visit(obj, depth=0):
        if depth > 4 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, functools.partial):
            visit(obj.func, depth + 1)
            for a in list(obj.args) + list(obj.keywords.values()):
                if callable(a):
                    visit(a, depth + 1)
            return
        code = getattr(obj, "__code__", None)
        if code is None and callable(obj) and hasattr(obj, "__call__"):
            code = getattr(getattr(obj, "__call__"), "__code__", None)
        if code is None:
            return
        stack = [code]
        while stack:
            co = stack.pop()
            fn_name = co.co_filename
            if fn_name not in files and "site-packages" not in fn_name and not fn_name.startswith("<frozen"):
                lines = linecache.getlines(fn_name)
                if lines:
                    files[fn_name] = lines
            stack.extend(c for c in co.co_consts if isinstance(c, types.CodeType))
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if callable(v) and not isinstance(v, type):
                visit(v, depth + 1)

    visit(fn)
    total = 0
    out = {}
    for k, v in files.items():
        total += sum(len(l) for l in v)
        if total > limit_bytes:
            break
        out[k] = v
    return out


def install_sources(sources: dict | None) -> None:
    """Make shipped source lines readable by ``inspect`` here (only where the file is absent)."""
    for name, lines in (sources or {}).items():
        if os.path.exists(name):
            continue
        linecache.cache[name] = (sum(len(l) for l in lines), None, list(lines), name)


# ---- facts of a compiled kernel -----------------------------------------------------------------
def occupancy(compiled) -> dict:
    """Resident blocks per SM and what limits it, from :mod:`txlab.occupancy` (the CUDA occupancy
    rules per arch); empty when it cannot be computed (e.g. a symbolic block size)."""
    from txlab import occupancy as occ

    try:
        o = occ.occupancy(compiled)
    except Exception:  # noqa: BLE001 - facts are best effort; the row still has the rest
        return {"blocks_per_sm": None, "limited_by": None}
    return {
        "blocks_per_sm": o.blocks_per_sm,
        "limited_by": ", ".join(o.limiter),
        "warps_per_sm": o.blocks_per_sm * o.warps_per_cta,
        "occupancy": o.blocks_per_sm * o.warps_per_cta / o.max_warps_per_sm,
    }


def facts(compiled) -> dict:
    """Registers, spills, shared memory, occupancy and SASS counts of a compiled kernel (its first
    device kernel; ``kernels`` lists all)."""
    name = compiled.kernels[0] if compiled.kernels else compiled.name
    res = compiled.resources.get(name, {})
    launch = compiled.launch.get(name, {})
    dyn = res.get("dynamic_smem_bytes") or 0
    dyn = dyn if isinstance(dyn, int) else 0
    smem = int(res.get("static_smem_bytes") or 0) + dyn
    threads = launch.get("threads_per_block")
    regs = int(res.get("registers") or 0)
    from txlab.sass import summary

    sass = summary(compiled)
    return {
        "kernel": name,
        "kernels": compiled.kernels,
        "registers": regs,
        "spill_store_bytes": int(res.get("spill_store_bytes") or 0),
        "spill_load_bytes": int(res.get("spill_load_bytes") or 0),
        "spill_bytes": int(res.get("spill_store_bytes") or 0) + int(res.get("spill_load_bytes") or 0),
        "stack_bytes": int(res.get("stack_bytes") or 0),
        "smem_bytes": smem,
        "threads": threads,
        "grid": list(launch.get("grid") or ()),
        "cluster": list(launch["cluster"]) if launch.get("cluster") else None,
        **occupancy(compiled),
        "sass_instructions": sass["sass_instructions"],
        "sass": sass["sass"],
    }


def _static_device(arch: str):
    """A GPUInfo with the arch's documented per-block limits (:mod:`txlab.occupancy`'s table), for
    launch checks without a GPU."""
    from txlab.device import GPUInfo
    from txlab.occupancy import limits

    lim = limits(arch)
    return GPUInfo(
        False,
        "static limits",
        name=f"{arch} (documented limits)",
        arch=arch,
        max_threads_per_block=lim.max_threads_per_cta,
        max_smem_per_block_optin=lim.max_smem_per_cta_optin,
        max_regs_per_block=lim.max_regs_per_cta,
    )


def _short(exc: BaseException, limit: int = 400) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    out = f"{type(exc).__name__}: {first}" if not first.startswith("[") else first
    return out if len(out) <= limit else out[: limit - 3] + "..."


# ---- one compile ----------------------------------------------------------------------------------
def compile_one(
    build,
    config: dict,
    arch: str,
    sources=None,
    max_spill_bytes: int = 0,
    *,
    files: bool = True,
    cached_only: bool = False,
):
    """Build and compile one configuration. Returns (summary dict, cache-entry files or None;
    ``files=False``: always None). ``cached_only``: (None, None) when the compile cache has no
    entry for it (nothing is compiled)."""
    from txlab import cache
    from txlab.compiler import compile as tx_compile
    from txlab.errors import CompileError, KernelFault
    from txlab.run import check_launch

    install_sources(sources)
    t0 = time.perf_counter()
    out = {
        "id": config_id(config),
        "config": config,
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "node": _ray_node(),
    }
    try:
        prim = build(**config)
    except Exception as exc:  # noqa: BLE001 - the user's build rejected this point
        return {
            **out,
            "status": "compile_failed",
            "reason": f"build: {_short(exc)}",
            "compile_s": time.perf_counter() - t0,
        }, None
    try:
        compiled = tx_compile(prim, arch=arch, progress=_quiet, cached_only=cached_only)
        if compiled is None:
            return None, None
    except CompileError as exc:
        return {**out, "status": "compile_failed", "reason": _short(exc), "compile_s": time.perf_counter() - t0}, None
    except Exception as exc:  # noqa: BLE001 - anything else TVM raises for a bad point
        return {**out, "status": "compile_failed", "reason": _short(exc), "compile_s": time.perf_counter() - t0}, None
    f = facts(compiled)
    out.update(
        status="compiled",
        reason="",
        compile_s=time.perf_counter() - t0,
        key=compiled.key,
        facts=f,
        cache_hit=compiled.cache_hit,
        timings=compiled.timings,
    )
    if f["spill_bytes"] > max_spill_bytes:
        out.update(
            status="spills",
            reason=f"ptxas spills {f['spill_store_bytes']} B stored / "
            f"{f['spill_load_bytes']} B loaded (limit {max_spill_bytes} B: max_spill_bytes=...)",
        )
    else:
        try:
            check_launch(compiled, _static_device(arch))
        except KernelFault as exc:
            out.update(status="unlaunchable", reason=_short(exc))
    return out, cache.load(compiled.key) if files else None


def _ray_node() -> str | None:
    if "ray" not in sys.modules:
        return None
    try:
        import ray

        return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
    except Exception:  # noqa: BLE001
        return None


# ---- one measurement --------------------------------------------------------------------------------
class _Reference:
    """The expected outputs of ``check`` for one set of inputs, computed once per input set (the
    arrays are held, so their identity cannot be reused by other arrays)."""

    def __init__(self):
        self.memo: list = []

    def get(self, check, args):
        ident = tuple(id(a) for a in args)
        for held, ids, value in self.memo:
            if ids == ident:
                return value
        import numpy as np

        value = check(*[np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args])
        self.memo = (self.memo + [(list(args), ident, value)])[-2:]
        return value


def _frobenius_check(compiled, args, expected, rel_tol: float, timeout_s: float):
    """Run once on copies of ``args`` with the outputs poisoned (NaN), then compare each output with
    ``expected`` by relative Frobenius error (float32, in chunks: no float64 copies of big outputs)."""
    import numpy as np

    from txlab.run import _poison, expected_outputs, launch

    exp = expected_outputs(compiled, expected)
    index = {p["name"]: i for i, p in enumerate(compiled.params)}
    host = list(args)
    for n in exp:
        host[index[n]] = np.array(args[index[n]], copy=True)
        _poison(host[index[n]])
    launch(compiled, *host, timeout_s=timeout_s, device="gpu")
    worst, ok, parts = 0.0, True, []
    for n, want in exp.items():
        got = host[index[n]].reshape(-1)
        want = np.asarray(want).reshape(-1)
        num = den = 0.0
        nan = 0
        step = 1 << 24
        for s in range(0, got.size, step):
            g = got[s : s + step].astype(np.float32)
            w = want[s : s + step].astype(np.float32)
            bad = np.isnan(g) & ~np.isnan(w)
            nan += int(bad.sum())
            d = np.where(bad, 0, g - w).astype(np.float64)
            num += float(np.dot(d, d))
            den += float(np.dot(w.astype(np.float64), w.astype(np.float64)))
        rel = (num**0.5) / (den**0.5) if den else num**0.5
        worst = max(worst, rel)
        good = rel <= rel_tol and nan == 0
        ok &= good
        parts.append(
            f"{n}: rel. Frobenius error {rel:.3g}"
            + (f", {nan} unwritten" if nan else "")
            + ("" if good else f" (limit {rel_tol:g})")
        )
    return ok, worst, "; ".join(parts)


def measure_one(
    build,
    config: dict,
    arch: str,
    *,
    sources=None,
    files=None,
    inputs=None,
    check=None,
    opts: dict,
    reference: _Reference | None = None,
    flops=None,
    nbytes=None,
) -> dict:
    """Check, then time, one compiled configuration on this process's GPU (through the isolated
    worker). Returns the row's fields."""
    from txlab import cache
    from txlab.compiler import compile as tx_compile
    from txlab.device import probe
    from txlab.settings import config as tx_config
    from txlab.errors import InputError, KernelFault, NoGPUError
    from txlab.run import bench, check as run_check, check_launch

    install_sources(sources)
    tx_config.isolation = "process"
    if files and opts.get("key") and cache.load(opts["key"]) is None:
        cache.store(opts["key"], files)
    out: dict = {}
    try:
        compiled = tx_compile(build(**config), arch=arch, progress=_quiet)
        args = list(inputs(config)) if inputs is not None else []
        check_launch(compiled, probe(), args)
        if check is not None:
            expected = (reference or _Reference()).get(check, args)
            if opts.get("rel_tol") is not None:
                ok, rel, text = _frobenius_check(compiled, args, expected, opts["rel_tol"], opts["timeout_s"])
            else:
                res = run_check(
                    compiled,
                    args,
                    lambda *_: expected,
                    rtol=opts["rtol"],
                    atol=opts["atol"],
                    timeout_s=opts["timeout_s"],
                    device="gpu",
                )
                ok, text = res.ok, res.summary()
                rel = max((o["rel_frobenius"] for o in res.outputs.values()), default=None)
            out["rel_error"] = rel
            if not ok:
                return {**out, "status": "check_failed", "reason": text[:400]}
        b = bench(compiled, *args, warmup=opts["warmup"], rep=opts["rep"], timeout_s=opts["timeout_s"])
        out.update(status="measured", reason="", time_ms=b.median_ms, p10_ms=b.p10_ms, p90_ms=b.p90_ms)
        f = flops(config) if callable(flops) else flops
        n = nbytes(config) if callable(nbytes) else nbytes
        if f:
            out["tflops"] = f / (b.median_ms * 1e-3) / 1e12
        if n:
            out["gbps"] = n / (b.median_ms * 1e-3) / 1e9
        return out
    except KernelFault as exc:
        status = "unlaunchable" if exc.kind == "launch_config" else "fault"
        return {**out, "status": status, "fault_kind": exc.kind, "reason": _short(exc)}
    except InputError as exc:
        return {**out, "status": "check_failed", "reason": f"inputs: {_short(exc)}"}
    except NoGPUError as exc:  # the actor's process sees no GPU: nothing ran (not cached)
        return {**out, "status": "skipped", "reason": f"not measured: {_short(exc)}"}
    except Exception as exc:  # noqa: BLE001 - one bad candidate must not stop the sweep
        return {**out, "status": "fault", "fault_kind": "cuda_error", "reason": _short(exc)}


def gpu_identity() -> dict:
    """What this process's GPU is (for result-cache keys and placement reports)."""
    from txlab.device import probe

    info = probe()
    return {
        "device": info.name or "",
        "arch": info.arch or "",
        "available": info.available,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "host": os.uname().nodename,
        "pid": os.getpid(),
    }


# ---- result cache ----------------------------------------------------------------------------------
def _results_dir():
    from txlab import cache

    path = cache.cache_root() / "tune-v1"
    path.mkdir(parents=True, exist_ok=True)
    return path


def result_key(kernel_key: str, device: str, opts: dict, check, inputs, config: dict) -> str:
    from txlab import cache

    def ident(fn):
        if fn is None:
            return None
        return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}"

    method = {k: opts.get(k) for k in ("warmup", "rep", "rtol", "atol", "rel_tol")}
    return cache.make_key(
        kind="tune-measure",
        kernel=kernel_key,
        device=device,
        method=method,
        check=ident(check),
        inputs=ident(inputs),
        config=config,
    )


def load_result(key: str) -> dict | None:
    """A cached measurement, or None (absent, unreadable, or not matching its checksum)."""
    from txlab import cache
    from txlab.files import read_bytes_capped

    try:
        path = _results_dir() / key[:2] / f"{key}.json"
        if not path.exists():
            return None
        doc = json.loads(read_bytes_capped(path, 64 << 20, "cached measurement"))
    except (OSError, ValueError):  # FileReadError and JSONDecodeError are ValueErrors
        return None
    body, problem = cache.sealed_body(doc, "result")
    if problem or doc.get("key") != key or not isinstance(body, dict) or "status" not in body:
        return None
    return body


def store_result(key: str, result: dict) -> None:
    """Keep a measurement (atomically: temporary file + rename). An unusable cache directory is
    reported once and the sweep goes on without caching."""
    from txlab import cache

    doc = cache.seal(json.loads(json.dumps(result, default=str)), "result", key=key)
    try:
        path = _results_dir() / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{key}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)
    except OSError as exc:
        cache.warn_unusable(cache.cache_root(), exc)


# ---- Ray --------------------------------------------------------------------------------------------
def ray_init(cluster: str | None = None, *, num_cpus: int | None = None, num_gpus: int | None = None):
    """Connect to (``cluster`` / ``RAY_ADDRESS``) or start (embedded, local) Ray; returns a dict of
    what was done and how long it took."""
    import ray

    t0 = time.perf_counter()
    if ray.is_initialized():
        return {"mode": "existing", "init_s": 0.0, "address": None}
    address = cluster or os.environ.get("RAY_ADDRESS") or None
    kw = dict(
        log_to_driver=False,
        include_dashboard=False,
        configure_logging=True,
        logging_level="warning",
        ignore_reinit_error=True,
    )
    if address:
        ray.init(address=address, **kw)
        mode = "client" if str(address).startswith("ray://") else "cluster"
    else:
        mb = int(os.environ.get("TXLAB_RAY_OBJECT_STORE_MB", DEFAULT_OBJECT_STORE_MB))
        # Workers of an embedded Ray import what this process imports: a build function defined in
        # a module on this process's sys.path (a test file, the user's own module) is pickled by
        # reference and must be importable there too.
        paths = [p for p in (os.environ.get("PYTHONPATH", "").split(os.pathsep) + sys.path) if p and os.path.isdir(p)]
        # address="local": a Ray of this process's own, even where another (a second notebook, a
        # test run, `ray start`) is running; joining one of those would refuse num_cpus/num_gpus
        ray.init(
            address="local",
            num_cpus=num_cpus or os.cpu_count(),
            num_gpus=num_gpus,
            object_store_memory=max(80, mb) << 20,
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}},
            **kw,
        )
        mode = "local"
    return {"mode": mode, "init_s": time.perf_counter() - t0, "address": address}


def _compile_in_worker(build, config, arch, sources=None, max_spill_bytes=0):
    """compile_one in a Ray worker process. Keeps torch out of it unless asked
    (``TXLAB_TUNE_WORKER_TORCH=1``): tvm_ffi imports torch eagerly when it is installed (~3 s per
    worker on the H200 host) and compiling never needs it."""
    if "tvm" not in sys.modules:
        if os.environ.get("TXLAB_TUNE_WORKER_TORCH", "0") != "1":
            sys.modules.setdefault("torch", None)
        # `import tvm` initialises CUDA: a compile worker hides the GPUs first (a context per compile
        # worker would cost GPU memory and start-up for nothing). Marked, so that the process is
        # never used as a GPU actor afterwards (Measurer refuses it). A runtime env would keep the
        # processes apart too, but costs a fresh set of workers per sweep (7 s vs 5 s here).
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        os.environ["TXLAB_TUNE_ROLE"] = "compile"
    out, files = compile_one(build, config, arch, sources, max_spill_bytes)
    out["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    return out, files


@functools.lru_cache(maxsize=1)
def _remote_compile():
    import ray

    return ray.remote(num_cpus=1, num_returns=2, max_retries=0)(_compile_in_worker)


class Measurer:
    """One per GPU (``num_gpus=1``): measures candidates one at a time through the isolated worker."""

    def __init__(self):
        if os.environ.get("TXLAB_TUNE_ROLE") == "compile":
            # Ray handed this actor a process that ran compile tasks: CUDA there sees no GPU.
            # Exit, and Ray restarts the actor in a fresh process (max_restarts).
            os._exit(1)
        os.environ["TXLAB_TUNE_ROLE"] = "measure"
        os.environ.setdefault("TXLAB_WORKER_STANDBY", "1")
        self.reference = _Reference()

    def info(self) -> dict:
        import ray

        ctx = ray.get_runtime_context()
        return {**gpu_identity(), "node_id": ctx.get_node_id(), "gpu_ids": [str(g) for g in ray.get_gpu_ids()]}

    def measure(self, build, config, arch, sources, files, inputs, check, opts, flops, nbytes):
        if isinstance(files, list):  # an ObjectRef wrapped in a list is passed through unresolved
            import ray

            files = ray.get(files[0])
        t0 = time.perf_counter()
        out = measure_one(
            build,
            config,
            arch,
            sources=sources,
            files=files,
            inputs=inputs,
            check=check,
            opts=opts,
            reference=self.reference,
            flops=flops,
            nbytes=nbytes,
        )
        out["measure_s"] = time.perf_counter() - t0
        return out

    def stop(self):
        from txlab import worker

        worker.stop()
        return True


@functools.lru_cache(maxsize=1)
def _remote_measurer():
    import ray

    return ray.remote(num_gpus=1, num_cpus=1, max_concurrency=1, max_restarts=3)(Measurer)


_actors: list = []
_placement: list = []


def measurers(n: int):
    """``n`` GPU actors and where they run; kept between sweeps of this process (an actor boots TVM
    and an isolated worker: seconds), replaced if dead. :func:`shutdown` ends them."""
    import ray

    cls = _remote_measurer()
    while len(_actors) < n:
        _actors.append(cls.remote())
        _placement.append(None)
    for i in range(n):
        try:
            if _placement[i] is None:
                _placement[i] = ray.get(_actors[i].info.remote(), timeout=300)
        except Exception:  # noqa: BLE001 - a dead actor (e.g. after ray.shutdown): start another
            _actors[i] = cls.remote()
            _placement[i] = ray.get(_actors[i].info.remote(), timeout=300)
    return _actors[:n], _placement[:n]


def replace_measurer(i: int):
    import ray

    try:
        ray.kill(_actors[i])
    except Exception:  # noqa: BLE001
        pass
    _actors[i] = _remote_measurer().remote()
    return _actors[i]


def shutdown() -> None:
    """Stop the GPU actors (and their isolated workers) and, if txlab started it, Ray."""
    try:
        import ray
    except ImportError:  # never started: nothing to stop
        return

    for a in _actors:
        try:
            ray.get(a.stop.remote(), timeout=10)
        except Exception:  # noqa: BLE001
            pass
        try:
            ray.kill(a)
        except Exception:  # noqa: BLE001
            pass
    _actors.clear()
    _placement.clear()
    if ray.is_initialized():
        ray.shutdown()


def node_report() -> list[dict]:
    """Ray's nodes: id, address, CPUs, GPUs, alive."""
    import ray

    out = []
    for n in ray.nodes():
        res = n.get("Resources", {})
        out.append(
            {
                "node_id": n.get("NodeID"),
                "address": n.get("NodeManagerAddress"),
                "alive": n.get("Alive"),
                "cpus": res.get("CPU", 0),
                "gpus": res.get("GPU", 0),
            }
        )
    return out


def python_can_pickle(fn) -> str | None:
    """Why ``fn`` cannot travel to a worker process, or None."""
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - ray vendors it
        from ray import cloudpickle
    try:
        cloudpickle.dumps(fn)
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


__all__ = [
    "compile_one",
    "measure_one",
    "facts",
    "occupancy",
    "ray_init",
    "Measurer",
    "collect_sources",
    "install_sources",
    "result_key",
    "load_result",
    "store_result",
    "node_report",
]
