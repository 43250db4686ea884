"""``txlab.autotune(build, space, inputs, ...)``: one sweep (:class:`~txlab.tune.sweep.Sweep`),
in the foreground or as a live :class:`~txlab.tune.sweep.TuneRun`; ``load`` and ``shutdown``."""

from __future__ import annotations

from txlab.deprecation import callable_module
from txlab.tune.model import TuneResult

__all__ = ["autotune", "tune", "load", "shutdown"]


def autotune(
    build,
    space,
    inputs=None,
    *,
    check=None,
    objective: str = "time",
    budget=None,
    cluster=None,
    arch: str | None = None,
    flops=None,
    bytes=None,  # noqa: A002 - the public keyword, as in txlab.bench
    baseline=None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    rel_tol: float | None = None,
    max_spill_bytes: int = 0,
    warmup: int = 10,
    rep: int = 50,
    timeout_s: float = 10.0,
    engine: str = "auto",
    gpus: int | None = None,
    search: str = "auto",
    seed: int = 0,
    use_cache: bool = True,
    name: str | None = None,
    num_cpus: int | None = None,
    prior=None,
    batch: int | None = None,
    background: bool = False,
):
    """Sweep ``space`` and return a :class:`TuneResult` (or, with ``background=True``, a running
    :class:`~txlab.tune.sweep.TuneRun` whose ``.result`` fills in live).

    Phases: every candidate is compiled in parallel (Ray tasks, one CPU each); compile failures,
    ptxas spills over ``max_spill_bytes`` and configurations that cannot launch are recorded with
    their reason. Each compiled candidate is then checked against ``check`` (elementwise with
    ``rtol``/``atol`` as in txlab.check, or by relative Frobenius error when ``rel_tol`` is given)
    and timed (``warmup``, ``rep``) on a GPU actor; a fault or a hang (past ``timeout_s`` per launch)
    is recorded with its :class:`txlab.KernelFault` kind and the sweep goes on.

    ``budget``: a count of configurations, seconds (float) or ``"5m"``; when it does not cover the
    space, Optuna's TPE sampler picks the configurations (``search="optuna"`` forces it,
    ``"exhaustive"`` forbids it). ``cluster``: ``"ray://host:port"`` (else ``RAY_ADDRESS``, else an
    embedded local Ray). ``engine="serial"`` runs everything in this process instead. ``prior``:
    configurations to try first (e.g. today's default); ``batch``: proposals per round under a budget.
    ``flops``/``bytes`` (numbers or functions of the config) give TFLOP/s and GB/s; ``baseline``
    (ms, or ``{"name", "time_ms"}``) gives each row's ratio (baseline time / its time).
    Measurements are cached by kernel, GPU model and method; an interrupted sweep re-run with
    the same arguments resumes (``use_cache=False`` measures again).
    """
    from txlab.tune.sweep import Sweep, TuneRun

    sweep = Sweep(
        build,
        space,
        inputs,
        check=check,
        objective=objective,
        budget=budget,
        cluster=cluster,
        arch=arch,
        engine=engine,
        gpus=gpus,
        flops=flops,
        nbytes=bytes,
        baseline=baseline,
        rtol=rtol,
        atol=atol,
        rel_tol=rel_tol,
        max_spill_bytes=max_spill_bytes,
        warmup=warmup,
        rep=rep,
        timeout_s=timeout_s,
        search=search,
        seed=seed,
        use_cache=use_cache,
        name=name,
        num_cpus=num_cpus,
        prior=prior,
        batch=batch,
    )
    if background:
        return TuneRun(sweep)
    return sweep.run()


def shutdown() -> None:
    """Stop the local engine's compile workers, the GPU actors kept between sweeps and the Ray that
    txlab started."""
    from txlab.tune.engine import shutdown as _shutdown
    from txlab.tune.pool import shutdown as _pool_shutdown

    _pool_shutdown()
    _shutdown()


def load(path) -> TuneResult:
    """A saved :class:`TuneResult` (checked against its checksum)."""
    return TuneResult.load(path)


tune = autotune  # txlab.tune.tune(...): the same function under its package's name

# txlab.tune(...) called the package; it is txlab.autotune(...) now (one release of warnings)
callable_module("txlab.tune", autotune, "txlab.autotune(...)")
