"""Tuning sweeps: many configurations of a kernel compiled in parallel on CPU workers and measured
on every GPU, on Ray (embedded and local by default, or a cluster).

    res = txlab.autotune(build, {"bn": [128, 256], "stages": [3, 4, 5]}, inputs, check=reference)
    res.best.config, res.plot(), res.save("sweep.json")
    run = txlab.autotune(..., background=True); TuneView(run)      # live in the notebook

``build(**config)`` returns a ``@T.prim_func`` for one point of the space; ``inputs(config)`` the
kernel's arguments (numpy arrays; called on the GPU worker); ``check`` the reference, as in
:func:`txlab.check`. The objective is the median launch time measured exactly like
:func:`txlab.bench` (CUDA events, L2 flushed before each launch), in txlab's isolated worker.
Without a GPU (or without ``inputs``) the sweep is compile-only: registers, spills, shared memory,
occupancy and SASS counts per configuration.

Modules: ``entry`` (:func:`autotune`, ``load``, ``shutdown``), ``sweep`` (phases), ``engine`` (Ray / serial), ``search``
(budgets, Optuna), ``space``, ``model`` (:class:`TuneResult`). Calling the package,
``txlab.tune(...)``, is deprecated: it is ``txlab.autotune(...)``.
"""

from txlab.tune.entry import autotune, load, shutdown, tune
from txlab.tune.model import Row, TuneResult
from txlab.tune.search import Budget
from txlab.tune.space import Space, config_id

__all__ = ["autotune", "tune", "load", "shutdown", "TuneResult", "Row", "Space", "Budget", "config_id"]
