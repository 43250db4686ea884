"""Which configurations a sweep tries: all of them, or — under a budget — the ones Optuna proposes.

Why Optuna (its TPE sampler through the ask-and-tell interface) and not Ray Tune's search
algorithms: Ray Tune's searchers wrap these same libraries (``OptunaSearch``, ``HyperOptSearch``),
but Ray Tune wants to own the trial loop (one trainable per trial, its own actors and resource
requests). txlab's sweep has two phases with different resources — compiles on every CPU, timing
on one long-lived, exclusive actor per GPU that keeps an isolated worker process — so the engine
drives the work itself and only needs "propose the next k points; here is how they did", which is
exactly Optuna's ``study.ask()`` / ``study.tell()``. TPE handles categorical parameters, and
``constant_liar`` keeps a batch of parallel proposals from piling onto one point. Optuna is pure
Python and runs with or without Ray (e.g. compile-only on a laptop).
"""

from __future__ import annotations

import json
import time

from txlab.tune.space import Space


class Budget:
    """``None`` (no limit), an int (that many configurations), a float (seconds of sweep time), or a
    string ``"30s"`` / ``"5m"`` / ``"40"``."""

    def __init__(self, budget):
        self.count = None
        self.seconds = None
        if budget is None:
            return
        if isinstance(budget, str):
            text = budget.strip().lower()
            try:
                if text.endswith("s"):
                    self.seconds = float(text[:-1])
                elif text.endswith("m"):
                    self.seconds = 60 * float(text[:-1])
                else:
                    self.count = int(text)
            except ValueError:
                raise ValueError(
                    f"budget={budget!r}: write a count (40), seconds (120.0, '120s') or minutes ('5m')"
                ) from None
        elif isinstance(budget, bool):
            raise TypeError("budget must be a count, seconds or a string like '5m'")
        elif isinstance(budget, int):
            self.count = budget
        elif isinstance(budget, float):
            self.seconds = budget
        else:
            raise TypeError(f"budget={budget!r}: a count (int), seconds (float) or '5m'")
        if (self.count is not None and self.count < 1) or (self.seconds is not None and self.seconds <= 0):
            raise ValueError(f"budget={budget!r} must be positive")
        self.t0 = time.monotonic()

    def start(self):
        self.t0 = time.monotonic()

    @property
    def limited(self) -> bool:
        return self.count is not None or self.seconds is not None

    def time_left(self) -> bool:
        return self.seconds is None or time.monotonic() - self.t0 < self.seconds

    def to_dict(self) -> dict:
        return {"count": self.count, "seconds": self.seconds}


class Exhaustive:
    """Every valid configuration, in product order (truncated to a count budget)."""

    name = "exhaustive"

    def __init__(self, space: Space, budget: Budget, prior=()):
        self.configs = _prior_first(space.configs(), prior)
        if budget.count is not None:
            self.configs = self.configs[: budget.count]
        self._next = 0

    def ask(self, k: int) -> list[dict]:
        out = self.configs[self._next : self._next + k]
        self._next += len(out)
        return out

    def tell(self, config: dict, value: float | None) -> None:
        pass

    def exhausted(self) -> bool:
        return self._next >= len(self.configs)


class OptunaSearch:
    """Optuna's TPE sampler (``seed`` fixed) over the categorical space; constraint-violating and
    repeated proposals are not counted (the sampler is told about them and asked again)."""

    name = "optuna-tpe"

    def __init__(self, space: Space, budget: Budget, *, seed: int = 0, startup: int | None = None, prior=()):
        import optuna

        import warnings

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self.optuna = optuna
        self.space = space
        self.budget = budget
        self.valid = {json.dumps(c, sort_keys=True) for c in space.configs()}
        # random start-up trials before TPE models the results (the priors count among them); under a
        # small count budget keep it to half the budget, or TPE would never be used
        n_startup = startup if startup is not None else max(2, min(10, len(self.valid) // 4, (budget.count or 20) // 2))
        sampler = optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=n_startup, constant_liar=True, multivariate=True
        )
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        # ordered numeric values: an integer index (TPE models neighbourhoods: 3 stages is nearer
        # 4 than 6); anything else (strings, booleans, unsorted lists): categorical
        self.dists = {}
        for n, v in space.params.items():
            ordered = (
                all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
                and len(v) > 2
                and list(v) == sorted(v)
            )
            self.dists[n] = (
                optuna.distributions.IntDistribution(0, len(v) - 1)
                if ordered
                else optuna.distributions.CategoricalDistribution(list(range(len(v))))
            )
        for c in prior or ():
            key = json.dumps(dict(c), sort_keys=True)
            if key in self.valid:  # measured first: known-good points anchor the sampler
                self.study.enqueue_trial({n: space.params[n].index(c[n]) for n in space.params})
        self.seen: dict[str, float | None] = {}
        self.open: dict[str, list] = {}  # config json -> trials waiting for its value
        self.asked = 0

    def _decode(self, params: dict) -> dict:
        return {n: self.space.params[n][params[n]] for n in self.space.params}

    def ask(self, k: int) -> list[dict]:
        out, tries = [], 0
        while len(out) < k and len(self.seen) < len(self.valid) and tries < 200 * max(k, 1):
            if self.budget.count is not None and self.asked >= self.budget.count:
                break
            tries += 1
            trial = self.study.ask(self.dists)
            config = self._decode(trial.params)
            key = json.dumps(config, sort_keys=True)
            if key not in self.valid:
                self.study.tell(trial, state=self.optuna.trial.TrialState.PRUNED)
                continue
            if key in self.seen:
                value = self.seen[key]
                if value is None and key in self.open:  # still running: tell it later, with the rest
                    self.open[key].append(trial)
                elif value is None:
                    self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
                else:
                    self.study.tell(trial, value)
                continue
            self.seen[key] = None
            self.open[key] = [trial]
            self.asked += 1
            out.append(config)
        return out

    def tell(self, config: dict, value: float | None) -> None:
        key = json.dumps(config, sort_keys=True)
        self.seen[key] = value
        for trial in self.open.pop(key, []):
            if value is None or not (value == value):  # failed or NaN
                self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            else:
                self.study.tell(trial, value)

    def exhausted(self) -> bool:
        return len(self.seen) >= len(self.valid) or (self.budget.count is not None and self.asked >= self.budget.count)


def _prior_first(configs: list[dict], prior) -> list[dict]:
    keys = [json.dumps(dict(c), sort_keys=True) for c in prior or ()]
    first = [c for k in keys for c in configs if json.dumps(c, sort_keys=True) == k]
    return first + [c for c in configs if c not in first]


def strategy_for(space: Space, budget: Budget, *, search: str = "auto", seed: int = 0, prior=()):
    """``search="auto"``: exhaustive when the budget covers the whole space (or there is none),
    Optuna TPE otherwise; ``"exhaustive"`` / ``"optuna"`` force one."""
    if search not in ("auto", "exhaustive", "optuna"):
        raise ValueError(f"search={search!r}: use 'auto', 'exhaustive' or 'optuna'")
    if search == "exhaustive":
        return Exhaustive(space, budget, prior)
    if search == "optuna":
        return OptunaSearch(space, budget, seed=seed, prior=prior)
    n = len(space.configs())
    if not budget.limited or (budget.count is not None and budget.count >= n and budget.seconds is None):
        return Exhaustive(space, budget, prior)
    return OptunaSearch(space, budget, seed=seed, prior=prior)
