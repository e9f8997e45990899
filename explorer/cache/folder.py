"""Where entries live and how many: one private folder (`$XDG_CACHE_HOME/ir-explorer/derived`, else
`~/.cache/ir-explorer/derived`), 0700 and the user's own, or no cache at all; the least recently used entries go
first once the folder holds more than its cap."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

CACHE_VARIABLE = "IR_EXPLORER_CACHE"  # "off" (or 0, no, false): no entry read or written
SIZE_VARIABLE = "IR_EXPLORER_CACHE_SIZE"  # the folder's cap in bytes
DETACH_VARIABLE = "IR_EXPLORER_DETACH"  # "off": entries written by the process itself, not a detached child (serve)
DEFAULT_CAP = 2 * 2**30
ENTRY_SUFFIX = ".entry"
TEMPORARY_SUFFIX = ".partial"
STALE_TEMPORARY_SECONDS = 3600.0  # a write that old was cut short (its process ended): removed by the next sweep


def enabled() -> bool:
    return os.environ.get(CACHE_VARIABLE, "").strip().lower() not in ("off", "0", "no", "false")


def cap() -> int:
    try:
        return max(0, int(os.environ.get(SIZE_VARIABLE, "")))
    except ValueError:
        return DEFAULT_CAP


def root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ir-explorer" / "derived"


def private_folder(create: bool) -> Path | None:
    """The folder, made 0700 when `create`; None when it is not there, or is not a folder the user alone owns and
    may write (a symbolic link, another user's, open to others): such a folder is never read nor written."""
    folder = root()
    if create and not folder.exists():
        try:
            folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077
    return folder if private else None


@dataclass(frozen=True)
class Kept:
    path: Path
    size: int
    last_used: float  # an entry's modification time is set when it is read: the LRU order


def entries(folder: Path) -> list[Kept]:
    """The folder's entries, least recently used first (regular files only: a link is never an entry)."""
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for item in listing:
            if not item.name.endswith(ENTRY_SUFFIX):
                continue
            with contextlib.suppress(OSError):
                info = item.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    found.append(Kept(Path(item.path), info.st_size, info.st_mtime))
    return sorted(found, key=lambda kept: (kept.last_used, kept.path.name))


def mark_used(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)


def evict(folder: Path, limit: int) -> list[Path]:
    """Remove the least recently used entries until the rest fit in `limit` bytes, and cut-short writes; the
    entries removed."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for item in listing:
            if item.name.endswith(TEMPORARY_SUFFIX):
                with contextlib.suppress(OSError):
                    if now - item.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS:
                        os.unlink(item.path)
    kept = entries(folder)
    total = sum(entry.size for entry in kept)
    removed = []
    for entry in kept:
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.path)
        total -= entry.size
    return removed


def clear(folder: Path) -> tuple[int, int]:
    """Remove every entry (and cut-short write): (entries, bytes) removed."""
    count = size = 0
    for entry in entries(folder):
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            count, size = count + 1, size + entry.size
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for item in listing:
            if item.name.endswith(TEMPORARY_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(item.path)
    return count, size
