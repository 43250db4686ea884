"""Content-addressed on-disk cache of compile artifacts.

An entry is a folder named by the SHA-256 of its key (kernel IR text, arch, tool versions, txlab
version). It is written in a private temporary folder beside the final one and published with one
atomic ``os.rename``; a concurrent writer that loses the race simply discards its copy, so readers
never see a half-written entry. ``TXLAB_CACHE_DIR`` moves the cache (default ~/.cache/txlab).

Entries verify themselves: ``manifest.json``, written last, holds the key and the SHA-256 and size
of every artifact. :func:`load` serves an entry only when the manifest names this key and every
file matches its digest; anything else (a truncated cubin, an emptied ``meta.json``, a missing
file, a manifest of another key) is a miss, and the next :func:`store` replaces the entry.

A cache directory that cannot be used (read-only, full, not a directory) never costs a compile:
:func:`load` and :func:`store` then say so once (a :class:`CacheWarning`) and the caller runs
uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from pathlib import Path

FORMAT = 2  # bump when the entry layout changes (2: manifest.json with per-file digests)
MANIFEST = "manifest.json"
MAX_ENTRY_FILE_BYTES = 1 << 30  # no artifact is this large; a bigger file is not read


class CacheWarning(UserWarning):
    """The compile cache cannot be used; txlab runs uncached."""


_warned: set[str] = set()
_warn_lock = threading.Lock()


def warn_unusable(root, exc: BaseException) -> None:
    """Say once per cache directory (per process) that it cannot be used and why."""
    where = str(root)
    with _warn_lock:
        if where in _warned:
            return
        _warned.add(where)
    warnings.warn(
        f"txlab: the compile cache at {where} cannot be used ({type(exc).__name__}: "
        f"{getattr(exc, 'strerror', None) or exc}); compiling without it. Point TXLAB_CACHE_DIR "
        "at a writable folder with free space to cache again.",
        CacheWarning,
        stacklevel=3,
    )


def forget_warnings() -> None:
    """Warn again about cache directories already reported unusable (e.g. after fixing one)."""
    with _warn_lock:
        _warned.clear()


def cache_root() -> Path:
    """txlab's cache directory: ``$TXLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/txlab``, else
    ``~/.cache/txlab``. Compiled kernels live under ``compile-v<FORMAT>``; other caches (the
    scheduler sources) in their own subdirectories. A ``~`` in either variable (common in ``.env`` files and
    ``kernel.json`` env blocks, where no shell expands it) is the home directory, and a relative path is taken
    from the current directory once, as an absolute path (a notebook that changes directory keeps its cache)."""
    raw = os.environ.get("TXLAB_CACHE_DIR", "").strip() or os.path.join(
        os.environ.get("XDG_CACHE_HOME", "").strip() or "~/.cache", "txlab"
    )
    path = os.path.expanduser(raw)
    if os.path.isabs(path):
        return Path(os.path.normpath(path))
    with _warn_lock:
        if raw not in _RELATIVE_ROOTS:
            _RELATIVE_ROOTS[raw] = Path(os.path.abspath(path))
        return _RELATIVE_ROOTS[raw]


#: a relative cache directory as first resolved (the current directory then), by the variable's value
_RELATIVE_ROOTS: dict[str, Path] = {}


def usage() -> dict:
    """What the cache holds now, without creating it: ``{"path", "exists", "entries"`` (compiled kernels),
    ``"bytes"`` (every file under the cache directory)``}``. ``txlab.cache.clear()`` deletes the compiled
    kernels; nothing is evicted on its own."""
    root = cache_root()
    total, entries = 0, 0
    if root.is_dir():
        for folder, _, files in os.walk(root):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    continue
        compiled = root / f"compile-v{FORMAT}"
        if compiled.is_dir():
            entries = sum(1 for p in compiled.glob("*/*") if p.is_dir() and not p.name.startswith("."))
    return {"path": str(root), "exists": root.is_dir(), "entries": entries, "bytes": total}


def cache_dir() -> Path:
    path = cache_root() / f"compile-v{FORMAT}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def make_key(**parts) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def json_digest(body, *, compact: bool = False) -> str:
    """SHA-256 of ``body`` as canonical JSON (sorted keys; ``compact``: no spaces after ``,``/``:``):
    the checksum txlab's sealed JSON files carry (sanitizer reports, tune results and cached
    measurements, the GEMM's tuned table), each verified with :func:`sealed_body` when read."""
    seps = (",", ":") if compact else None
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=seps, default=str).encode()).hexdigest()


def seal(body, field: str, *, compact: bool = False, **extra) -> dict:
    """``{**extra, "sha256": json_digest(body), field: body}``: a document :func:`sealed_body` opens."""
    return {**extra, "sha256": json_digest(body, compact=compact), field: body}


def sealed_body(doc, field: str, *, compact: bool = False):
    """``(doc[field], None)`` when ``doc`` carries ``field`` and a matching ``sha256``; else
    ``(None, "missing")`` (not a sealed document) or ``(None, "mismatch")`` (edited or damaged)."""
    if not isinstance(doc, dict) or field not in doc or "sha256" not in doc:
        return None, "missing"
    if json_digest(doc[field], compact=compact) != doc["sha256"]:
        return None, "mismatch"
    return doc[field], None


def read_sealed(path, field: str, fmt: str, *, what: str = "sealed file", limit: int = 16 << 20) -> dict:
    """The JSON document at ``path`` when its ``format`` is ``fmt`` and its ``sha256`` matches its
    ``field`` (:func:`seal`); else ValueError naming what is wrong (unreadable, another format, edited
    or damaged). A file read for its data, e.g. a shipped tuned table, is trusted only through this."""
    from txlab.files import read_bytes_capped

    try:
        doc = json.loads(read_bytes_capped(path, limit, what))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable {what} ({exc})") from None
    got = doc.get("format") if isinstance(doc, dict) else None
    if got != fmt:
        raise ValueError(f"{path}: format {got!r}, expected {fmt!r}")
    if sealed_body(doc, field)[1]:
        raise ValueError(f"{path}: the sha256 does not match its {field!r} (edited or damaged)")
    return doc


def seal_text(body: dict, field: str, *, lines: str | None = None, **extra) -> str:
    """A sealed JSON document as text whose ``sha256`` covers ``field``'s bytes exactly as they stand in the text
    (compact, sorted keys; ``lines``: the key of a list in ``body`` written an item a line), so
    :func:`read_sealed_text` checks them without writing the body out again. ``field`` must sort after ``extra``'s
    keys and before ``sha256``; write the text with ``\\n`` line ends (:func:`read_sealed_text` also takes ``\\r\\n``)."""
    if field >= "sha256":
        raise ValueError(f"seal_text: the body's field {field!r} must sort before 'sha256'")
    if any(k >= field for k in extra):
        raise ValueError(f"seal_text: the other fields ({sorted(extra)}) must sort before {field!r}")

    def dump(v):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))

    parts = []
    for k in sorted(body):
        v = body[k]
        if k == lines and isinstance(v, list):
            parts.append(f"{dump(k)}:[" + ",\n".join(dump(item) for item in v) + "]")
        else:
            parts.append(f"{dump(k)}:{dump(v)}")
    text = "{" + ",".join(parts) + "}"
    head = dump(extra)[:-1]
    if f'"{field}":'.encode() in head.encode():  # the reader finds the body by the first such key
        raise ValueError(f"seal_text: the other fields must not hold the text '\"{field}\":'")
    return f'{head}{"," if extra else ""}"{field}":{text},"sha256":"{_digest(text.encode())}"}}\n'


def read_sealed_text(path, field: str, fmt: str, *, what: str = "sealed file", limit: int = 16 << 20) -> dict:
    """The document :func:`seal_text` wrote at ``path``, when its ``format`` is ``fmt`` and its ``sha256`` matches the
    bytes of ``field`` (with ``\\r\\n`` line ends read as ``\\n``: JSON strings hold no raw line breaks); else
    ValueError naming what is wrong (unreadable, not such a document, another format, edited or damaged)."""
    import re

    from txlab.files import read_bytes_capped

    raw = read_bytes_capped(path, limit, what).replace(b"\r\n", b"\n")
    key = f'"{field}":'.encode()
    at = raw.find(key)
    tail = re.search(rb',"sha256":"([0-9a-f]{64})"\}\s*$', raw)
    try:
        head = json.loads(raw[:at] + key + b"null" + raw[tail.start() :] if at >= 0 and tail else raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable {what} ({exc})") from None
    if not isinstance(head, dict):
        raise ValueError(f"{path}: not a {what} (a JSON {type(head).__name__}, not an object)")
    if head.get("format") != fmt:
        raise ValueError(f"{path}: format {head.get('format')!r}, expected {fmt!r}")
    if at < 0:
        raise ValueError(f"{path}: no {field!r} in this {what}")
    if tail is None:
        raise ValueError(f"{path}: no sha256 closing this {what} (edited or damaged)")
    if _digest(raw[at + len(key) : tail.start()]) != tail.group(1).decode():
        raise ValueError(f"{path}: the sha256 does not match its {field!r} (edited or damaged)")
    try:
        head[field] = json.loads(raw[at + len(key) : tail.start()])
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable {what} ({exc})") from None
    return head


def entry_path(key: str) -> Path:
    return cache_dir() / key[:2] / key


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_verified(path: Path, key: str) -> dict | None:
    """The entry's files when its manifest names ``key`` and every digest matches, else None."""
    from txlab.files import FileReadError, read_bytes_capped

    try:
        manifest = json.loads(read_bytes_capped(path / MANIFEST, 1 << 20, "cache manifest"))
        if (
            not isinstance(manifest, dict)
            or manifest.get("key") != key
            or manifest.get("format") != FORMAT
            or not isinstance(manifest.get("files"), dict)
        ):
            return None
        out = {}
        for name, want in manifest["files"].items():
            if not isinstance(name, str) or "/" in name or name.startswith(".") or not isinstance(want, dict):
                return None
            size = want.get("bytes")
            if not isinstance(size, int) or size < 0 or size > MAX_ENTRY_FILE_BYTES:
                return None
            data = read_bytes_capped(path / name, size, "cache artifact")
            if len(data) != size or _digest(data) != want.get("sha256"):
                return None
            out[name] = data
        out.update(_late_files(path, key, set(out)))
        return out
    except (FileReadError, ValueError, OSError):
        return None


LATE_SUFFIX = ".digest"  # an artifact added after the entry was published vouches for itself here
_MAX_LATE_FILES = 16


def _late_files(path: Path, key: str, known: set) -> dict:
    """Artifacts added later by :func:`add_file` whose own digest file (written after them) names
    ``key`` and matches; one that does not verify is left out (its caller recomputes it)."""
    from txlab.files import FileReadError, read_bytes_capped

    out = {}
    for digest_path in sorted(path.glob("*" + LATE_SUFFIX))[:_MAX_LATE_FILES]:
        name = digest_path.name[: -len(LATE_SUFFIX)]
        if name in known or name == MANIFEST or "/" in name or name.startswith("."):
            continue
        try:
            want = json.loads(read_bytes_capped(digest_path, 4096, "cache digest"))
            size = want.get("bytes") if isinstance(want, dict) else None
            if want.get("key") != key or not isinstance(size, int) or not 0 <= size <= MAX_ENTRY_FILE_BYTES:
                continue
            data = read_bytes_capped(path / name, size, "cache artifact")
            if len(data) == size and _digest(data) == want.get("sha256"):
                out[name] = data
        except (FileReadError, ValueError, OSError, AttributeError):
            continue
    return out


def load(key: str) -> dict | None:
    """The entry's files as {name: bytes}, or None when absent, incomplete or not matching its
    manifest (or when the cache directory cannot be used: then a :class:`CacheWarning`, once)."""
    try:
        path = entry_path(key)
    except OSError as exc:
        warn_unusable(cache_root(), exc)
        return None
    if not (path / MANIFEST).is_file():
        return None
    return _read_verified(path, key)


def store(key: str, files: dict[str, bytes | str]) -> Path | None:
    """Publish an entry atomically, replacing an entry of this key that does not verify;
    ``meta.json`` must be among the files. Returns the entry's folder, or None when the cache
    directory cannot be written (a :class:`CacheWarning`, once; the caller's result stands)."""
    import shutil
    import tempfile

    if "meta.json" not in files:
        raise ValueError("a cache entry needs meta.json")
    if MANIFEST in files:
        raise ValueError(f"{MANIFEST} is the cache's own file")
    blobs = {
        name: (bytes(data) if isinstance(data, (bytes, bytearray)) else str(data).encode("utf-8"))
        for name, data in files.items()
    }
    tmp = None
    try:
        final = entry_path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=final.parent))
        for name, data in blobs.items():
            _write(tmp / name, data)
        manifest = {
            "format": FORMAT,
            "key": key,
            "files": {n: {"bytes": len(d), "sha256": _digest(d)} for n, d in blobs.items()},
        }
        _write(tmp / MANIFEST, json.dumps(manifest, indent=1).encode())  # last: it vouches for the rest
        _publish(tmp, final, key)
        tmp = None
        return final
    except OSError as exc:
        warn_unusable(cache_root(), exc)
        return None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _publish(tmp: Path, final: Path, key: str) -> None:
    import shutil

    try:
        os.rename(tmp, final)
        return
    except OSError:
        if not final.exists():
            raise
    # An entry of this key is already there. A good one came from a concurrent writer (identical
    # by construction): keep it. A bad one (truncated, tampered, an older layout) is moved aside
    # with one rename and ours takes its place.
    if _read_verified(final, key) is not None:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    stale = final.with_name(f".stale-{final.name[:12]}-{os.getpid()}-{threading.get_ident()}")
    try:
        os.rename(final, stale)
    except FileNotFoundError:
        pass  # another writer moved it first
    try:
        os.rename(tmp, final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # another writer replaced it first
    shutil.rmtree(stale, ignore_errors=True)


def verified_file(relpath: str, build) -> Path | None:
    """A single cached file (e.g. the exported kernel library ``lib/<key>.so``) that verifies
    itself: ``build(tmp_path)`` writes it once, its SHA-256 goes to ``<file>.sha256`` after it, and
    a later call serves it only while the digest matches (a truncated or replaced file is rebuilt).
    None when the cache directory cannot be written (a :class:`CacheWarning`, once)."""
    from txlab.files import FileReadError, read_bytes_capped

    try:
        path = cache_dir() / relpath
        sidecar = path.with_name(path.name + ".sha256")
        if path.is_file() and sidecar.is_file():
            try:
                want = read_bytes_capped(sidecar, 256, "cache digest").decode().strip()
                if _digest(read_bytes_capped(path, MAX_ENTRY_FILE_BYTES, "cache artifact")) == want:
                    return path
            except (FileReadError, UnicodeDecodeError):
                pass
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp{path.suffix}")
        try:
            build(tmp)
            digest = _digest(tmp.read_bytes())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        side_tmp = sidecar.with_name(f".{sidecar.name}.{os.getpid()}.{threading.get_ident()}")
        _write(side_tmp, digest.encode())
        os.replace(side_tmp, sidecar)  # last: it vouches for the file
        return path
    except OSError as exc:
        warn_unusable(cache_root(), exc)
        return None


def clear() -> int:
    """Delete every entry; returns how many were removed."""
    import shutil

    root = cache_dir()
    count = sum(1 for _ in root.glob("*/*"))
    shutil.rmtree(root, ignore_errors=True)
    return count


def add_file(key: str, name: str, data: bytes | str) -> bool:
    """Add an artifact computed later (e.g. SASS, disassembled on first use) to an existing entry:
    written beside it and renamed into place, then its own digest file (``<name>.digest``), so
    :func:`load` serves it only while the two agree. False when the entry is gone or not writable
    (the caller keeps its value in memory)."""
    import tempfile

    if name == MANIFEST or name.endswith(LATE_SUFFIX) or "/" in name or name.startswith("."):
        raise ValueError(f"{name!r} cannot be added to a cache entry")
    blob = data.encode() if isinstance(data, str) else bytes(data)
    try:
        final = entry_path(key)
        if not (final / MANIFEST).is_file():
            return False
        for target, payload in (
            (name, blob),
            (name + LATE_SUFFIX, json.dumps({"key": key, "bytes": len(blob), "sha256": _digest(blob)}).encode()),
        ):
            fd, tmp = tempfile.mkstemp(prefix=f".{target}-", dir=final)
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final / target)  # the digest last: it vouches for the artifact
        return True
    except OSError:
        return False
