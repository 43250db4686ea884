"""Content-addressed on-disk cache of compile artifacts.

An entry is a folder named by the SHA-256 of its key (kernel IR text, arch, tool versions, txlab
version). It is written in a private temporary folder beside the final one and published with one
atomic ``os.rename``; a concurrent writer that loses the race simply discards its copy, so readers
never see a half-written entry. ``TXLAB_CACHE_DIR`` moves the cache (default ~/.cache/txlab).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

FORMAT = 1  # bump when the entry layout changes


def cache_root() -> Path:
    """txlab's cache directory: ``$TXLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/txlab``, else
    ``~/.cache/txlab``. Compiled kernels live under ``compile-v<FORMAT>``; other caches (the
    scheduler sources) in their own subdirectories."""
    return Path(os.environ.get("TXLAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "txlab"))


def cache_dir() -> Path:
    path = cache_root() / f"compile-v{FORMAT}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_key(**parts) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def entry_path(key: str) -> Path:
    return cache_dir() / key[:2] / key


def load(key: str) -> dict | None:
    """The entry's files as {name: bytes}, or None when absent or unreadable."""
    path = entry_path(key)
    meta = path / "meta.json"
    if not meta.is_file():
        return None
    try:
        return {p.name: p.read_bytes() for p in path.iterdir() if p.is_file()}
    except OSError:
        return None


def store(key: str, files: dict[str, bytes | str]) -> Path:
    """Publish an entry atomically; ``meta.json`` must be among the files."""
    if "meta.json" not in files:
        raise ValueError("a cache entry needs meta.json")
    final = entry_path(key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=final.parent))
    try:
        for name, data in files.items():
            mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
            with open(tmp / name, mode) as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        try:
            os.rename(tmp, final)
        except OSError:
            # Another writer published the same key first; its entry is identical by construction.
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def clear() -> int:
    """Delete every entry; returns how many were removed."""
    root = cache_dir()
    count = sum(1 for _ in root.glob("*/*"))
    shutil.rmtree(root, ignore_errors=True)
    return count
