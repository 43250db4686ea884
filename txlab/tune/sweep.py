"""The sweep driver: asks the search strategy for configurations, compiles them (on this machine's
compile workers, :mod:`txlab.tune.pool`, or on Ray CPU workers), measures them (in this process
through the isolated worker, or on one Ray actor per GPU), fills a
:class:`~txlab.tune.model.TuneResult` as results come in, and keeps every measurement in the
content-addressed result cache (so an interrupted sweep resumes where it stopped: measured
configurations are not measured again).

Engines: ``"local"`` (the default on one machine: no daemon to start, the compile cache is looked
at first in this process, misses go to the compile workers while this process compiles too),
``"serial"`` (everything in this process), ``"ray"`` (chosen by ``"auto"`` when ``cluster=`` or
``RAY_ADDRESS`` names a cluster, or for measuring on several local GPUs). A Ray that cannot start
or be reached leaves the sweep on the local engine, said in one line."""

from __future__ import annotations

import collections
import os
import threading
import time

import txlab.tune.engine as E
from txlab.tune.model import Row, TuneResult
from txlab.tune.search import Budget, strategy_for
from txlab.tune.space import Space, config_id

_CACHEABLE = ("measured", "check_failed", "fault", "unlaunchable")
ENGINES = ("auto", "local", "serial", "ray")


def _local_gpu_count() -> int:
    from txlab.device import gpu_count

    return gpu_count()


def resolve_engine(engine: str, *, cluster=None, inputs=None, gpus=None) -> tuple[str, str]:
    """(engine, why) for ``engine="auto"``: Ray when a cluster is named (``cluster=`` or
    ``RAY_ADDRESS``) or when measuring on more than one local GPU, else the local engine."""
    if engine != "auto":
        return engine, "asked for"
    if cluster:
        return "ray", f"cluster={cluster!r}"
    if os.environ.get("RAY_ADDRESS"):
        return "ray", f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}"
    if inputs is not None and gpus != 0:
        n = _local_gpu_count() if gpus is None else int(gpus)
        if n > 1:
            return "ray", f"{n} GPUs to measure on"
    return "local", "one machine"


def say(text: str) -> None:
    """A one-line notice of the tuning engine (stdout: a plain line in a notebook)."""
    print(f"txlab.tune: {text}")


def _build_payload(build):
    """``build`` as bytes for the compile workers, or None (it cannot travel: compiled here)."""
    from txlab.tune.pool import dumps_build

    return dumps_build(build)


def _ray_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


class Sweep:
    def __init__(
        self,
        build,
        space,
        inputs=None,
        *,
        check=None,
        objective="time",
        budget=None,
        cluster=None,
        arch=None,
        engine="auto",
        gpus=None,
        flops=None,
        nbytes=None,
        baseline=None,
        rtol=1e-5,
        atol=1e-6,
        rel_tol=None,
        max_spill_bytes=0,
        warmup=10,
        rep=50,
        timeout_s=10.0,
        search="auto",
        seed=0,
        use_cache=True,
        name=None,
        num_cpus=None,
        prior=None,
        batch=None,
    ):
        if not callable(build):
            raise TypeError("build must be a function build(**config) -> @T.prim_func")
        if inputs is not None and not callable(inputs):
            raise TypeError("inputs must be a function inputs(config) -> list of kernel arguments")
        if check is not None and not callable(check):
            raise TypeError("check must be a reference function (as in txlab.check): check(*args) -> expected")
        if objective != "time":
            raise ValueError(
                f"objective={objective!r}: the objective is 'time' (median launch time, "
                "as txlab.bench measures it); TFLOP/s and GB/s follow from flops=/bytes="
            )
        if engine not in ENGINES:
            raise ValueError(
                f"engine={engine!r}: use 'auto' (default: the local engine, Ray for a named "
                "cluster or several GPUs), 'local' (compile workers on this machine), "
                "'serial' (in this process) or 'ray'"
            )
        engine, self.engine_reason = resolve_engine(engine, cluster=cluster, inputs=inputs, gpus=gpus)
        if engine == "ray" and not _ray_installed():
            if cluster is not None:
                from txlab.errors import InputError

                raise InputError(
                    f"cluster={cluster!r} needs Ray, which is not installed here: "
                    "pip install 'ray[default]' (txlab's set-up installs it)",
                    param="cluster",
                )
            import warnings

            warnings.warn(
                "Ray is not installed here, so this sweep runs on the local engine (compile "
                "workers on this machine); pip install 'ray[default]' for clusters and GPU actors",
                RuntimeWarning,
                stacklevel=3,
            )
            engine = "local"
        self.build, self.inputs, self.check = build, inputs, check
        self.space = Space.of(space)
        _check_build_takes(build, self.space.names)
        self.budget = Budget(budget)
        self.cluster, self.engine, self.gpus = cluster, engine, gpus
        self.flops, self.nbytes = flops, nbytes
        if isinstance(baseline, (int, float)):
            baseline = {"name": "baseline", "time_ms": float(baseline)}
        if baseline is not None and not (isinstance(baseline, dict) and "time_ms" in baseline):
            raise TypeError("baseline must be a time in ms or {'name': ..., 'time_ms': ...}")
        self.baseline = baseline
        from txlab.compiler import resolve_arch

        self.arch = resolve_arch(arch)
        self.opts = {
            "rtol": rtol,
            "atol": atol,
            "rel_tol": rel_tol,
            "warmup": warmup,
            "rep": rep,
            "timeout_s": float(timeout_s),
        }
        self.max_spill_bytes = max_spill_bytes
        self.search, self.seed, self.use_cache = search, seed, use_cache
        self.num_cpus = num_cpus
        self.prior = [dict(c) for c in prior or ()]
        self.batch = batch
        self.sources = E.collect_sources(build)
        for fn in (inputs, check):
            if fn is not None:
                self.sources.update(E.collect_sources(fn))
        self.name = name or getattr(build, "__name__", None) or "sweep"
        self.cancelled = threading.Event()

    # ------------------------------------------------------------------------------------------
    def new_result(self) -> TuneResult:
        return TuneResult(
            name=self.name,
            space=self.space.to_dict(),
            baseline=self.baseline,
            meta={
                "arch": self.arch,
                "engine": self.engine,
                "engine_reason": self.engine_reason,
                "budget": self.budget.to_dict(),
                "method": dict(self.opts),
                "max_spill_bytes": self.max_spill_bytes,
            },
        )

    def run(self, result: TuneResult | None = None) -> TuneResult:
        result = result or self.new_result()
        self.budget.start()
        t0 = time.perf_counter()
        try:
            if self.engine == "ray" and "ray" not in result.meta:
                self._start_ray(result)
            if self.engine == "serial":
                self._run_serial(result)
            elif self.engine == "local":
                self._run_local(result)
            else:
                self._run_ray(result)
        finally:
            for r in result.rows:
                if r.status == "pending" or (r.status == "compiled" and result.meta.get("gpus")):
                    r.status, r.reason = (
                        "skipped",
                        r.reason or ("cancelled" if self.cancelled.is_set() else "the budget ran out"),
                    )
            result.meta["wall_s"] = time.perf_counter() - t0
            result.finished = time.time()
            result.update()
        return result

    def _start_ray(self, result) -> None:
        """Connect to or start Ray; on failure, say so in one line and go on with the local engine."""
        try:
            result.meta["ray"] = E.ray_init(self.cluster, num_cpus=self.num_cpus)
        except Exception as exc:  # noqa: BLE001 - whatever Ray raises, the sweep still runs
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            say(
                f"Ray did not start ({type(exc).__name__}: {first}); this sweep runs on the local engine "
                "(compile workers on this machine)."
            )
            self.engine = "local"
            result.meta.update(engine="local", ray_error=f"{type(exc).__name__}: {first}")

    # ---- shared pieces ---------------------------------------------------------------------------
    def _row(self, result, config) -> Row:
        row = Row(config=dict(config), id=config_id(config))
        with result._lock:
            result.rows.append(row)
        return row

    def _apply_compile(self, result, row, s) -> None:
        result.update(
            row,
            status=s["status"],
            reason=s.get("reason", ""),
            compile_s=s.get("compile_s"),
            facts=s.get("facts") or {},
            key=s.get("key", ""),
        )
        if "cuda_visible_devices" in s:
            seen = result.meta.setdefault("compile_gpu_visible", [])
            if s["cuda_visible_devices"] not in seen:
                seen.append(s["cuda_visible_devices"])
        where = s.get("node") or s.get("host", "?")
        c = result.meta.setdefault("compile_nodes", {})
        c[where] = c.get(where, 0) + 1

    def _apply_measure(self, result, row, out, worker="") -> None:
        fields = {
            k: out.get(k)
            for k in ("status", "reason", "fault_kind", "time_ms", "p10_ms", "p90_ms", "tflops", "gbps", "rel_error")
        }
        fields["reason"] = fields["reason"] or ""
        if self.baseline and out.get("time_ms"):
            fields["ratio"] = self.baseline["time_ms"] / out["time_ms"]
        result.update(row, worker=worker, **fields)

    def _cached(self, row, device) -> dict | None:
        if not self.use_cache or not row.key:
            return None
        row_key = E.result_key(row.key, device, self.opts, self.check, self.inputs, row.config)
        row._result_key = row_key  # type: ignore[attr-defined]
        return E.load_result(row_key)

    def _remember(self, row, out) -> None:
        key = getattr(row, "_result_key", None)
        if self.use_cache and key and out.get("status") in _CACHEABLE:
            E.store_result(key, {k: v for k, v in out.items() if k != "measure_s"})

    def _measure_here(self, result, row, device: str, reference) -> None:
        """Check and time a compiled row in this process (through the isolated worker), or take
        its measurement from the result cache."""
        hit = self._cached(row, device)
        if hit is not None:
            self._apply_measure(result, row, hit, worker="cache")
            row.cached = True
            return
        out = E.measure_one(
            self.build,
            row.config,
            self.arch,
            inputs=self.inputs,
            check=self.check,
            opts={**self.opts, "key": row.key},
            reference=reference,
            flops=self.flops,
            nbytes=self.nbytes,
        )
        self._remember(row, out)
        self._apply_measure(result, row, out, worker=f"pid {os.getpid()}")

    def _tell(self, strategy, row):
        strategy.tell(row.config, row.time_ms if row.status == "measured" else None)

    # ---- in this process -----------------------------------------------------------------------
    def _run_serial(self, result):
        from txlab.device import probe

        info = probe()
        measure = self.inputs is not None and info.available and self.gpus != 0
        result.meta.update(gpus=1 if measure else 0, workers=1, placement=[E.gpu_identity()] if measure else [])
        strategy = strategy_for(self.space, self.budget, search=self.search, seed=self.seed, prior=self.prior)
        result.meta["search"] = strategy.name
        reference = E._Reference()
        t_compile = 0.0
        planned = collections.deque()
        if strategy.name == "exhaustive":  # every row exists (pending) from the start
            planned.extend(self._row(result, c) for c in strategy.ask(len(strategy.configs)))
            result.update()
        while self.budget.time_left() and not self.cancelled.is_set():
            if planned:
                row = planned.popleft()
            else:
                batch = strategy.ask(1)
                if not batch:
                    break
                row = self._row(result, batch[0])
                result.update()
            t = time.perf_counter()
            s, _ = E.compile_one(self.build, row.config, self.arch, None, self.max_spill_bytes, files=False)
            t_compile += time.perf_counter() - t
            self._apply_compile(result, row, s)
            if measure and row.status == "compiled":
                self._measure_here(result, row, info.name, reference)
            self._tell(strategy, row)
        result.meta["compile_phase_s"] = t_compile

    # ---- on this machine: the compile cache first, then compile workers ------------------------
    def _run_local(self, result):
        """Each proposed configuration is first looked up in the compile cache here (a hit costs a
        parse and a key: ~0.1 s); misses go to the compile workers (:mod:`txlab.tune.pool`, one per
        core but one, booted at the first miss and kept for the session) while this process compiles
        misses too. Measuring (with a GPU and ``inputs``) happens here, through the isolated worker,
        as each compile comes back."""
        from concurrent.futures import FIRST_COMPLETED, wait

        from txlab.device import probe
        import txlab.tune.pool as P

        info = probe()
        measure = self.inputs is not None and info.available and self.gpus != 0
        n_workers = P.workers_for(self.num_cpus)
        result.meta.update(gpus=1 if measure else 0, workers=1, placement=[E.gpu_identity()] if measure else [])
        strategy = strategy_for(self.space, self.budget, search=self.search, seed=self.seed, prior=self.prior)
        result.meta["search"] = strategy.name
        reference = E._Reference()
        todo: collections.deque = collections.deque()  # rows the cache did not have
        running: dict = {}  # future -> row
        state = {"pool": None, "payload": None, "in_process": 0, "in_workers": 0, "hits": 0}
        t0 = time.perf_counter()

        def finish(row, s):
            state["hits"] += bool(s.get("cache_hit"))
            self._apply_compile(result, row, s)
            if measure and row.status == "compiled":
                self._measure_here(result, row, info.name, reference)
            self._tell(strategy, row)

        def workers():
            if n_workers and state["pool"] is None and state["payload"] is None:
                state["payload"] = _build_payload(self.build) or False  # False: compile here only
                if state["payload"]:
                    state["pool"] = P.pool(n_workers)  # boots now: imports overlap the cache look-ups
                    result.meta["workers"] = 1 + n_workers
            return state["pool"]

        planned: collections.deque = collections.deque()
        # Workers kept from an earlier sweep answer cache hits as cheaply as this process (the cost
        # of a hit is parsing the build's TVMScript): share everything with them from the start.
        warm = bool(n_workers) and P.current(n_workers) is not None
        if warm:
            workers()
        if strategy.name == "exhaustive":
            (todo if warm else planned).extend(self._row(result, c) for c in strategy.ask(len(strategy.configs)))
            result.update()
        try:
            while not self.cancelled.is_set() and self.budget.time_left():
                if not planned and not todo and not running:
                    if strategy.name == "exhaustive":
                        break
                    batch = strategy.ask(max(2, 2 * (1 + n_workers)))
                    if not batch:
                        break
                    (todo if state["pool"] is not None else planned).extend(self._row(result, c) for c in batch)
                    result.update()
                if planned and not n_workers:  # no workers: compile() looks in the cache itself
                    todo.extend(planned)
                    planned.clear()
                if planned:  # the cache first, one row per turn (so finished work is taken in between)
                    row = planned.popleft()
                    s, _ = E.compile_one(
                        self.build, row.config, self.arch, None, self.max_spill_bytes, files=False, cached_only=True
                    )
                    if s is not None:
                        finish(row, s)
                    else:
                        todo.append(row)
                        if len(todo) + len(planned) > 1:
                            workers()
                pool = state["pool"]
                while pool is not None and len(todo) > (0 if planned else 1) and len(running) < pool.n:
                    row = todo.pop()  # workers take from the back, this process from the front
                    running[
                        pool.submit(state["payload"], row.config, self.arch, self.sources, self.max_spill_bytes)
                    ] = row
                    result.update(row, reason="compiling")
                if todo and not planned:
                    row = todo.popleft()
                    s, _ = E.compile_one(self.build, row.config, self.arch, None, self.max_spill_bytes, files=False)
                    state["in_process"] += 1
                    finish(row, s)
                if running:
                    done, _ = wait(list(running), timeout=0 if (planned or todo) else 0.5, return_when=FIRST_COMPLETED)
                    for f in done:
                        row = running.pop(f)
                        try:
                            s = f.result()
                        except Exception as exc:  # noqa: BLE001 - the worker died under the compile
                            s = {"status": "compile_failed", "reason": f"compile worker: {E._short(exc)}"}
                        state["in_workers"] += 1
                        result.update(row, reason="")
                        finish(row, s)
        finally:
            for f, row in list(running.items()):
                if f.cancel():
                    running.pop(f)
            wait(list(running))  # started compiles finish (their results are kept)
            for f, row in running.items():
                try:
                    self._apply_compile(result, row, f.result())
                except Exception:  # noqa: BLE001
                    pass
            for row in todo:
                if row.status == "pending":
                    row.reason = "cancelled" if self.cancelled.is_set() else "the budget ran out"
        result.meta.update(
            compile_phase_s=time.perf_counter() - t0,
            compile_cache_hits=state["hits"],
            compiled_here=state["in_process"],
            compiled_in_workers=state["in_workers"],
        )

    # ---- on Ray ------------------------------------------------------------------------------------
    def _run_ray(self, result):
        import ray

        init = result.meta["ray"]  # connected (or started) by run() / TuneRun just before
        result.update(ray=init, nodes=E.node_report())
        resources = ray.cluster_resources()
        slots = max(1, int(resources.get("CPU", 1)))
        n_gpu = int(resources.get("GPU", 0)) if self.gpus is None else int(self.gpus)
        n_gpu = n_gpu if self.inputs is not None else 0
        actors, placement = [], []
        if n_gpu:
            actors, placement = E.measurers(n_gpu)
        slots = max(1, slots - len(actors))
        result.update(gpus=len(actors), workers=slots, placement=placement)
        device = placement[0]["device"] if placement else ""
        strategy = strategy_for(self.space, self.budget, search=self.search, seed=self.seed, prior=self.prior)
        result.meta["search"] = strategy.name
        remote_compile = E._remote_compile()
        build_ref = ray.put(self.build)
        inputs_ref = ray.put(self.inputs)
        check_ref = ray.put(self.check)
        compiling: dict = {}  # summary ref -> (row, files ref)
        measuring: dict = {}  # result ref -> (row, actor index)
        queue: collections.deque = collections.deque()
        free = list(range(len(actors)))
        t_first = time.perf_counter()
        t_compiled = None
        exhaustive = strategy.name == "exhaustive"

        def ask(k):
            got = strategy.ask(k)
            for config in got:
                row = self._row(result, config)
                s_ref, f_ref = remote_compile.remote(
                    build_ref, row.config, self.arch, self.sources, self.max_spill_bytes
                )
                compiling[s_ref] = (row, f_ref)
            result.update()
            return len(got)

        try:
            if exhaustive:
                ask(len(strategy.configs))
            while True:
                stop = self.cancelled.is_set() or not self.budget.time_left()
                if stop and compiling:
                    for ref in list(compiling):
                        ray.cancel(ref, force=False)
                    compiling.clear()
                if stop:
                    queue.clear()
                dry = False
                if (
                    not stop
                    and not exhaustive
                    and not compiling
                    and len(queue) <= len(actors)
                    and not strategy.exhausted()
                ):
                    # with GPUs, small batches: the sampler learns from each measured batch
                    k = self.batch or (min(slots, max(4, 2 * len(actors))) if actors else slots * 2)
                    dry = ask(k) == 0
                while queue and free and not stop:
                    row, f_ref = queue.popleft()
                    i = free.pop()
                    ref = actors[i].measure.remote(
                        build_ref,
                        row.config,
                        self.arch,
                        self.sources,
                        f_ref,
                        inputs_ref,
                        check_ref,
                        {**self.opts, "key": row.key},
                        self.flops,
                        self.nbytes,
                    )
                    measuring[ref] = (row, i)
                    result.update(row, reason="measuring")
                refs = list(compiling) + list(measuring)
                if not refs:
                    if strategy.exhausted() or stop or exhaustive or dry:
                        break
                    continue
                ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
                for ref in ready:
                    if ref in compiling:
                        row, f_ref = compiling.pop(ref)
                        try:
                            s = ray.get(ref)
                        except Exception as exc:  # noqa: BLE001 - a worker died under the compile
                            s = {"status": "compile_failed", "reason": f"compile worker: {E._short(exc)}"}
                        self._apply_compile(result, row, s)
                        if not compiling:
                            t_compiled = time.perf_counter()
                        if row.status == "compiled" and actors:
                            hit = self._cached(row, device)
                            if hit is not None:
                                row.cached = True
                                self._apply_measure(result, row, hit, worker="cache")
                                self._tell(strategy, row)
                            else:
                                queue.append((row, f_ref))
                        else:
                            self._tell(strategy, row)
                    else:
                        row, i = measuring.pop(ref)
                        try:
                            out = ray.get(ref)
                        except Exception as exc:  # noqa: BLE001 - the actor itself died
                            out = {
                                "status": "fault",
                                "fault_kind": "worker_died",
                                "reason": f"GPU actor died: {E._short(exc)}",
                            }
                            actors[i] = E.replace_measurer(i)
                        self._remember(row, out)
                        where = placement[i] if i < len(placement) else {}
                        self._apply_measure(
                            result,
                            row,
                            out,
                            worker=f"{where.get('host', '?')} GPU {','.join(where.get('gpu_ids', []))}",
                        )
                        self._tell(strategy, row)
                        free.append(i)
        finally:
            if compiling:
                for ref in list(compiling):
                    ray.cancel(ref, force=False)
            result.meta["compile_phase_s"] = (t_compiled or time.perf_counter()) - t_first


class TuneRun:
    """A sweep running in a background thread: ``.result`` (filled live), ``.wait()``, ``.cancel()``."""

    def __init__(self, sweep: Sweep):
        self.sweep = sweep
        self.result = sweep.new_result()
        if sweep.engine == "ray":  # Ray is started from the caller's (main) thread, not the sweep's
            sweep._start_ray(self.result)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="txlab-tune", daemon=True)
        self._thread.start()

    def _main(self):
        try:
            self.sweep.run(self.result)
        except BaseException as exc:  # noqa: BLE001 - reported by wait()
            self.error = exc
            self.result.update(error=f"{type(exc).__name__}: {exc}")

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> TuneResult:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the sweep is still running after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result

    def cancel(self) -> None:
        """Stop asking for and dispatching work; running measurements finish, the rest is skipped."""
        self.sweep.cancelled.set()

    def __repr__(self):
        return f"<TuneRun {'done' if self.done else 'running'}: {self.result!r}>"


def _check_build_takes(build, names) -> None:
    """Every configuration calls ``build(**config)``: a space name that ``build`` does not take (or
    a parameter of ``build`` without a default that the space does not give) would fail every one
    of them the same way, so it is said once, before the sweep starts."""
    import difflib
    import inspect

    from txlab.errors import InputError

    try:
        params = inspect.signature(build).parameters
    except (TypeError, ValueError):  # a builtin or an object without a readable signature
        return
    kinds = {p.kind for p in params.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return
    takes = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    fn = getattr(build, "__name__", "build")
    sig = f"{fn}{inspect.signature(build)}"
    for name in names:
        if name not in takes:
            close = difflib.get_close_matches(name, takes, n=1)
            hint = (
                f"; did you mean {close[0]!r}?"
                if close
                else f"; build(**config) is called, so rename it or add a {name}= parameter"
            )
            raise InputError(f"space[{name!r}] is not a parameter of {sig}{hint}", param="space")
    missing = [n for n in takes if n not in names and params[n].default is inspect.Parameter.empty]
    if missing:
        raise InputError(
            f"{sig} needs {', '.join(missing)}, which the space does not give: add "
            f"{', '.join(repr(m) for m in missing)} to the space or give a default",
            param="space",
        )
