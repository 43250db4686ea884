"""Tuning sweeps: many configurations of a kernel compiled in parallel on CPU workers and measured
on every GPU, on Ray (embedded and local by default, or a cluster).

    res = txlab.tune(build, {"bn": [128, 256], "stages": [3, 4, 5]}, inputs, check=reference)
    res.best.config, res.plot(), res.save("sweep.json")
    run = txlab.tune(..., background=True); TuneView(run)      # live in the notebook

``build(**config)`` returns a ``@T.prim_func`` for one point of the space; ``inputs(config)`` the
kernel's arguments (numpy arrays; called on the GPU worker); ``check`` the reference, as in
:func:`txlab.check`. The objective is the median launch time measured exactly like
:func:`txlab.bench` (CUDA events, L2 flushed before each launch), in txlab's isolated worker.
Without a GPU (or without ``inputs``) the sweep is compile-only: registers, spills, shared memory,
occupancy and SASS counts per configuration.

``txlab.tune`` is this module and is callable: ``txlab.tune(...)`` is :func:`tune`.
"""
from __future__ import annotations

import sys
import types

from txlab.tune.model import Row, TuneResult
from txlab.tune.search import Budget
from txlab.tune.space import Space, config_id


def tune(build, space, inputs=None, *, check=None, objective: str = "time", budget=None, cluster=None,
         arch: str | None = None, flops=None, bytes=None, baseline=None, rtol: float = 1e-5,  # noqa: A002
         atol: float = 1e-6, rel_tol: float | None = None, max_spill_bytes: int = 0, warmup: int = 10,
         rep: int = 50, timeout_s: float = 10.0, engine: str = "auto", gpus: int | None = None,
         search: str = "auto", seed: int = 0, use_cache: bool = True, name: str | None = None,
         num_cpus: int | None = None, prior=None, batch: int | None = None, background: bool = False):
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

    sweep = Sweep(build, space, inputs, check=check, objective=objective, budget=budget, cluster=cluster,
                  arch=arch, engine=engine, gpus=gpus, flops=flops, nbytes=bytes, baseline=baseline,
                  rtol=rtol, atol=atol, rel_tol=rel_tol, max_spill_bytes=max_spill_bytes, warmup=warmup,
                  rep=rep, timeout_s=timeout_s, search=search, seed=seed, use_cache=use_cache, name=name,
                  num_cpus=num_cpus, prior=prior, batch=batch)
    if background:
        return TuneRun(sweep)
    return sweep.run()


def shutdown() -> None:
    """Stop the GPU actors kept between sweeps and the Ray that txlab started."""
    from txlab.tune.engine import shutdown as _shutdown

    _shutdown()


def load(path) -> TuneResult:
    """A saved :class:`TuneResult` (checked against its checksum)."""
    return TuneResult.load(path)


class _CallableModule(types.ModuleType):
    """Lets ``txlab.tune(...)`` call :func:`tune` while ``txlab.tune`` stays the package."""

    def __call__(self, *args, **kwargs):
        return tune(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["tune", "load", "shutdown", "TuneResult", "Row", "Space", "Budget", "config_id"]
