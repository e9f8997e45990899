"""An entry's key: everything that decides what a file becomes. The file's identity (device, inode, size,
modification time in ns) and a hash of every byte of it (xxh3_128: a file changed in place with its size and time
kept is another key), the explorer's code (its version and each module's size and time: an edited checkout derives
differently), the format and the options that change what is derived.

An entry's file is named by all of that but the hash (`entry_name`), so an open with no entry costs no hashing:
the hash is taken only to check an entry found under that name, or by the thread that writes one (a 600 MB model
whose first screen costs 0.1 s would otherwise pay as much again for a hash on every open)."""

from __future__ import annotations

import json
import mmap
import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import xxhash

from explorer import __version__

LAYOUT = 1  # the entry file's own layout (entry.py); an entry of another layout is a miss
WINDOW = 64 * 2**20  # bytes of the file mapped and hashed at a time (a multiple of any page size)
HASH_THREADS = min(4, os.cpu_count() or 1)


@dataclass(frozen=True)
class Stamp:
    device: int
    inode: int
    size: int
    mtime_ns: int


def stamp_of(path: Path) -> Stamp:
    """A file's identity; a folder's (a Core ML package): its own, the bytes of its files and the latest
    modification time of anything in it."""
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        return Stamp(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    members = [member for _, member in folder_members(path)]
    return Stamp(info.st_dev, info.st_ino, sum(m.st_size for m in members if stat.S_ISREG(m.st_mode)),
                 max([info.st_mtime_ns, *(m.st_mtime_ns for m in members)]))  # fmt: skip


def changed_ns_of(path: Path) -> int:
    """The inode's change time, which any write moves and nobody can set back; a folder's: the latest of it and
    of everything in it (a file rewritten in place changes its own, not its folder's)."""
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        return info.st_ctime_ns
    return max([info.st_ctime_ns, *(member.st_ctime_ns for _, member in folder_members(path))])


def folder_members(folder: Path) -> list[tuple[str, os.stat_result]]:
    """Everything below `folder`: (its path inside it, its own stat: a link's, not its target's), in a stable
    order. Links are not followed (one can loop, or lead out of the folder: the readers do not follow those)."""
    found = []
    for parent, folders, files in os.walk(folder):
        folders.sort()
        inside = os.path.relpath(parent, folder)
        for name in sorted(folders + files):
            found.append((os.path.normpath(os.path.join(inside, name)), os.lstat(os.path.join(parent, name))))
    return found


def _member_text(folder: Path, inside: str, member: os.stat_result) -> str:
    """What a folder's hash takes of one member: a regular file's bytes (hashed), a link's target, else its kind."""
    if stat.S_ISREG(member.st_mode):
        return f"file {member.st_size} {_content_hash(folder / inside)}"
    if stat.S_ISLNK(member.st_mode):
        return f"link {os.readlink(folder / inside)}"
    return f"kind {stat.S_IFMT(member.st_mode)}"


# A file hashed once per process while it is unchanged: its stamp and its inode's change time, which any write
# moves and which, unlike the modification time, no one can set back
_hashes: dict[tuple[str, Stamp, int], str] = {}


def content_hash(path: Path) -> str:
    """A hash of every byte: xxh3_128 of each WINDOW of the file (its bytes mapped read-only, no copy), on
    several threads (xxhash lets go of the interpreter while it hashes), then xxh3_128 of the size and those
    digests in order; remembered while the file is unchanged."""
    with _hashing:  # one at a time: the TUI's preview and load both ask, and the second waits for the first
        return _content_hash(path)


_hashing = threading.Lock()


def _content_hash(path: Path) -> str:
    stamp = stamp_of(path)
    changed = changed_ns_of(path)
    remembered = _hashes.get((str(path), stamp, changed))
    if remembered is not None:
        return remembered
    if path.is_dir():  # each file's path, size and hash, in order
        combined = xxhash.xxh3_128()
        for inside, member in folder_members(path):
            combined.update(f"{inside}\0{_member_text(path, inside, member)}\n".encode())
        if stamp_of(path) != stamp or changed_ns_of(path) != changed:
            raise OSError(f"{path} changed while it was read")
        _hashes[(str(path), stamp, changed)] = combined.hexdigest()
        return combined.hexdigest()
    with open(path, "rb") as handle:

        def window(offset: int) -> bytes:
            with mmap.mmap(handle.fileno(), min(WINDOW, stamp.size - offset), offset=offset,
                           access=mmap.ACCESS_READ) as mapped:  # fmt: skip
                return xxhash.xxh3_128(mapped).digest()

        offsets = range(0, stamp.size, WINDOW)
        if len(offsets) > 1:
            with ThreadPoolExecutor(min(HASH_THREADS, len(offsets)), thread_name_prefix="ir-explorer hash") as pool:
                digests = list(pool.map(window, offsets))
        else:
            digests = [window(offset) for offset in offsets]
    combined = xxhash.xxh3_128(stamp.size.to_bytes(8, "little"))
    for digest in digests:
        combined.update(digest)
    if stamp_of(path) != stamp:  # changed while it was read: no key can be trusted
        raise OSError(f"{path} changed while it was read")
    _hashes[(str(path), stamp, changed)] = combined.hexdigest()
    return combined.hexdigest()


_code: str | None = None


def code_fingerprint() -> str:
    """The explorer's version and every module's path, size and time: what runs."""
    global _code
    if _code is None:
        digest = xxhash.xxh3_128(__version__.encode())
        for name, info in sorted(_modules(str(Path(__file__).resolve().parent.parent), "")):
            digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
        _code = digest.hexdigest()
    return _code


def _modules(folder: str, prefix: str) -> list[tuple[str, os.stat_result]]:
    """(path within the package, its stat) of every `.py` below `folder`: one scandir per folder (every open of a
    cacheable file asks, so it is kept to a few milliseconds)."""
    found = []
    with os.scandir(folder) as listing:
        for item in listing:
            if item.is_dir(follow_symlinks=False):
                found += _modules(item.path, f"{prefix}{item.name}/")
            elif item.name.endswith(".py"):
                found.append((prefix + item.name, item.stat()))
    return found


def entry_key(format_name: str, path: Path, options: dict[str, object]) -> str:
    """The key of what `path` becomes when `format_name` reads it with `options`; OSError when the file cannot
    be read whole."""
    return _key(format_name, path, options, with_content=True)


def entry_name(format_name: str, path: Path, options: dict[str, object]) -> str:
    """The name of the entry `entry_key` would check: the same parts but the hash of the file's bytes, known from
    its identity alone; OSError when the file cannot be looked at."""
    return _key(format_name, path, options, with_content=False)


def _key(format_name: str, path: Path, options: dict[str, object], with_content: bool) -> str:
    resolved = path.resolve()
    stamp = stamp_of(resolved)
    identity: list[object] = [str(resolved), stamp.device, stamp.inode, stamp.size, stamp.mtime_ns]
    if resolved.is_dir():
        identity += [(inside, m.st_ino, m.st_size, m.st_mtime_ns) for inside, m in folder_members(resolved)]
    parts = {
        "layout": LAYOUT,
        "code": code_fingerprint(),
        "format": format_name,
        "path": str(path),  # the name the document says it was read from
        "file": [*identity, content_hash(resolved)] if with_content else identity,
        "options": options,
    }
    return xxhash.xxh3_128(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def changed_since(path: Path, stamp: Stamp, changed_ns: int) -> bool:
    """Whether the file is no longer what was opened: another identity, or its inode changed (a write moves the
    change time, which nobody can set back)."""
    try:
        resolved = path.resolve()
        return stamp_of(resolved) != stamp or changed_ns_of(resolved) != changed_ns
    except OSError:
        return True
