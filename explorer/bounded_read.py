"""Reading an input whole, only when it is a regular file of a size that can be held: a FIFO planted where a file
was expected would block the read forever, a 3 GiB sparse file beside a schedule would be read before any guard
spoke. The size is judged from `fstat` before the first byte is read, and the read stops at that size (a file that
grows while it is read is not followed past what was judged)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from explorer.errors import LoadError
from explorer.formatting import human_bytes
from explorer.memory_guard import ensure_fits

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
NOT_REGULAR = "not a regular file (a pipe, a device or a socket): give a file"


def regular_size(path: Path) -> int:
    """The size of `path`, a regular file (a symlink to one is followed); a LoadError for anything else."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise LoadError(path, "", f"cannot be read: {error.strerror or error}") from None
    if not stat.S_ISREG(status.st_mode):
        raise LoadError(path, "", NOT_REGULAR)
    return status.st_size


def too_big(size: int, limit: int, what: str, raise_with: str) -> str:
    how = f"; {raise_with} to raise it" if raise_with else ""
    return f"{human_bytes(size)} is more than {what} can be here (limit {human_bytes(limit)}{how})"


def read_regular(
    path: Path,
    what: str,
    *,
    bytes_per_file_byte: float = 1.0,
    limit: int | None = None,
    raise_with: str = "",
    location: str = "",
) -> bytes:
    """The bytes of `path`, a regular file: refused before reading when it is larger than `limit` (the words say
    how to raise it) or when `bytes_per_file_byte` times its size would not fit in memory (explorer.memory_guard).
    Opened without blocking, so a FIFO or a device is refused, never waited on."""
    with opened_regular(path, location) as (fd, status):
        size = status.st_size
        if limit is not None and size > limit:
            raise LoadError(path, location, too_big(size, limit, what, raise_with))
        ensure_fits(Path(path), size, bytes_per_file_byte, what)
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:  # buffered: reads straight into one bytes object
                return handle.read(size)
        except OSError as error:
            raise LoadError(path, location, f"cannot be read: {error.strerror or error}") from None


@contextmanager
def opened_regular(path: Path, location: str = "") -> Iterator[tuple[int, os.stat_result]]:
    """A regular file opened read-only, with its status, for a reader that reads only the parts it needs
    (`os.pread`). Refused as read_regular refuses: a FIFO, a device, a socket."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise LoadError(path, location, f"cannot be read: {error.strerror or error}") from None
    try:
        try:
            status = os.fstat(fd)
        except OSError as error:
            raise LoadError(path, location, f"cannot be read: {error.strerror or error}") from None
        if not stat.S_ISREG(status.st_mode):
            raise LoadError(path, location, NOT_REGULAR)
        yield fd, status
    finally:
        os.close(fd)
