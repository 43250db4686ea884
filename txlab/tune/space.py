"""A tuning space: named parameters, each with a finite list of values, and an optional constraint.

    space = {"bn": [128, 192, 256], "stages": [3, 4, 5], "constraint": lambda c: c["bn"] * c["stages"] < 1200}

Configurations are plain dicts (JSON values only). Their order is the product of the value lists in
the order the parameters were given, so an exhaustive sweep is deterministic.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Callable


def config_id(config: dict) -> str:
    """A short stable name of a configuration (the same dict gives the same id in every process)."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


@dataclass
class Space:
    params: dict[str, list]
    constraint: Callable[[dict], bool] | None = None
    #: why configurations were rejected by the constraint (filled by :meth:`configs`)
    rejected: int = field(default=0, compare=False)

    @classmethod
    def of(cls, space) -> "Space":
        """A Space from a Space or a dict ``{name: values, ..., "constraint": fn}``."""
        if isinstance(space, Space):
            return space
        if not isinstance(space, dict) or not space:
            raise TypeError(
                "space must be a dict of parameter name -> list of values "
                "(plus an optional 'constraint': fn(config) -> bool)"
            )
        params, constraint = {}, None
        for name, values in space.items():
            if name == "constraint":
                if values is not None and not callable(values):
                    raise TypeError("space['constraint'] must be a function config -> bool")
                constraint = values
                continue
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(f"space[{name!r}] must be a list of values, got {values!r}")
            values = list(values)
            if not values:
                raise ValueError(f"space[{name!r}] is empty: give at least one value")
            for v in values:
                if not isinstance(v, (int, float, str, bool, type(None))):
                    raise TypeError(
                        f"space[{name!r}] holds {v!r}; values must be numbers, strings, "
                        "booleans or None (they are stored as JSON)"
                    )
            if len(set(map(repr, values))) != len(values):
                raise ValueError(f"space[{name!r}] repeats a value: {values}")
            params[str(name)] = values
        if not params:
            raise ValueError("space has no parameters")
        return cls(params, constraint)

    @property
    def names(self) -> list[str]:
        return list(self.params)

    @property
    def size(self) -> int:
        """Points of the full product (before the constraint)."""
        n = 1
        for v in self.params.values():
            n *= len(v)
        return n

    def valid(self, config: dict) -> bool:
        if self.constraint is None:
            return True
        try:
            return bool(self.constraint(dict(config)))
        except Exception as exc:  # a constraint that raises is a bug in the user's function
            raise ValueError(f"the space's constraint raised {type(exc).__name__}: {exc} for {config}") from exc

    def configs(self) -> list[dict]:
        """Every configuration that satisfies the constraint, in product order."""
        out, rejected = [], 0
        for values in itertools.product(*self.params.values()):
            c = dict(zip(self.params, values))
            if self.valid(c):
                out.append(c)
            else:
                rejected += 1
        self.rejected = rejected
        return out

    def to_dict(self) -> dict:
        return {
            "params": {k: list(v) for k, v in self.params.items()},
            "constraint": _describe(self.constraint),
            "size": self.size,
        }


def _describe(fn: Any) -> str | None:
    if fn is None:
        return None
    return getattr(fn, "__qualname__", None) or repr(fn)
