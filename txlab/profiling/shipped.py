"""Profiles recorded on an H200 and shipped with txlab (``txlab/data``)."""
from __future__ import annotations

from pathlib import Path

from txlab.profiling.measurements import Profile


def _data_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "data"  # txlab/data


def saved_names() -> list:
    """Names of the profiles recorded on an H200 that ship with txlab."""
    return sorted(p.name[: -len(".profile.json")] for p in _data_dir().glob("*.profile.json"))


def saved(name: str) -> Profile:
    """A profile recorded on an H200 and shipped in ``txlab/data`` (``saved_names()`` lists them)."""
    path = _data_dir() / f"{name}.profile.json"
    if not path.is_file():
        raise FileNotFoundError(f"no saved profile {name!r}; saved profiles: {', '.join(saved_names()) or 'none'}")
    return Profile.load(path)
