"""Profiles recorded on an H200 and shipped with txlab (``txlab/data``)."""

from __future__ import annotations

from pathlib import Path

from txlab.profiling.measurements import Profile


def _data_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "data"  # txlab/data


def _names() -> list:
    return sorted(p.name[: -len(".profile.json")] for p in _data_dir().glob("*.profile.json"))


def saved_names() -> list:
    """Deprecated: ``saved()`` lists the saved profiles (as ``txlab.timeline.saved()`` lists the
    saved traces)."""
    import warnings

    warnings.warn(
        "txlab.profiling.saved_names() is deprecated: txlab.profiling.saved() lists the saved profiles",
        DeprecationWarning,
        stacklevel=2,
    )
    return _names()


def saved(name: str | None = None):
    """``saved()``: the names of the profiles recorded on an H200 that ship with txlab (a list).
    ``saved(name)``: that :class:`Profile`, from ``txlab/data``."""
    if name is None:
        return _names()
    path = _data_dir() / f"{name}.profile.json"
    if not isinstance(name, str) or not path.is_file():
        raise FileNotFoundError(
            f"no saved profile {name!r}; saved profiles: {', '.join(_names()) or 'none'} "
            "(txlab.profiling.saved() lists them)"
        )
    return Profile.load(path)
