"""Reading user-named files safely: resolved paths, regular files only, a byte cap that does not
trust ``stat``.

``stat`` is not a bound: a symlink to ``/dev/zero`` or a file in ``/proc`` reports size 0 and reads
forever, and a FIFO blocks ``open`` until a writer appears. :func:`read_bytes_capped` resolves the
path, refuses anything that is not a regular file (checked on the opened descriptor, so a swap
between check and open is caught too), opens FIFOs never (``O_NONBLOCK`` where the platform has
it) and reads at most ``limit + 1`` bytes, so an over-long file is an error rather than a
MemoryError.

    data = read_bytes_capped(path, 64 << 20, "notebook")
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from txlab.errors import TxlabError


class FileReadError(TxlabError, ValueError):
    """A file cannot be read as asked: missing, not a regular file, or larger than allowed."""

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)


def resolve_path(path, what: str = "file") -> Path:
    """``path`` as an absolute, symlink-free path; refuses an empty path (which would otherwise
    mean the working directory)."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise FileReadError(f"the {what} path must be a str or os.PathLike, not {type(path).__name__}")
    text = os.fspath(path)
    if not text.strip():
        raise FileReadError(f"the {what} path is empty: give the file's path")
    if "\x00" in text:
        raise FileReadError(f"the {what} path contains a NUL byte")
    return Path(text).expanduser().resolve(strict=False)


def read_bytes_capped(path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file at ``path``: at most ``limit`` of them, else FileReadError.
    Refuses directories, FIFOs, devices and sockets whatever ``stat`` says about their size."""
    resolved = resolve_path(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        st = os.stat(resolved)
    except FileNotFoundError:
        raise FileReadError(f"the {what} {str(path)!r} does not exist", path=str(resolved)) from None
    except OSError as exc:
        raise FileReadError(
            f"cannot read the {what} {str(path)!r}: {exc.strerror or exc}", path=str(resolved)
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise FileReadError(
            f"the {what} {str(path)!r} is {_kind(st.st_mode)}, not a regular file (resolved to {resolved})",
            path=str(resolved),
        )
    try:
        fd = os.open(resolved, flags)
    except OSError as exc:
        raise FileReadError(
            f"cannot open the {what} {str(path)!r}: {exc.strerror or exc}", path=str(resolved)
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between stat and open
            raise FileReadError(
                f"the {what} {str(path)!r} is {_kind(st.st_mode)}, not a regular file", path=str(resolved)
            )
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > limit:
        raise FileReadError(
            f"the {what} {str(path)!r} is larger than {limit:,} bytes (the limit for this kind of file)",
            path=str(resolved),
        )
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def shipped_data(name: str):
    """A file txlab ships in ``txlab/data``: its path beside the package where it is installed as files (so a GEMM
    choice's first call does not import ``importlib.resources`` and ``zipfile``), else through
    ``importlib.resources`` (a zipped install)."""
    here = Path(__file__).resolve().parent / "data" / name
    if here.is_file():
        return here
    from importlib import resources

    return resources.files("txlab") / "data" / name
