"""One entry file: a header, then a pickle whose arrays lie outside it (protocol 5's out-of-band buffers, each
64-byte aligned), so reading it back is one read into memory and no parsing of the arrays' bytes: a numpy column
becomes an array over the bytes read. A checksum covers everything after the header; an entry is read only when
it is a regular file (never through a symbolic link) owned by the user and writable by nobody else, and only
whole: anything else is a miss.

Pickle runs code named in the bytes it reads: entries are read only from the user's private folder, written
there by the explorer alone (`folder.private_folder`), which is the trust any of the user's own files has.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import pickle
import stat
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import xxhash

from explorer.cache.folder import ENTRY_SUFFIX, TEMPORARY_SUFFIX
from explorer.cache.key import LAYOUT
from explorer.gc_pause import collector_paused

MAGIC = b"IRXCACHE"
PREFIX = struct.Struct("<8sII")  # magic, layout, header length
ALIGN = 64


class Header(msgspec.Struct):
    key: str
    source: str  # the file it was derived from, for `ir-explorer cache`
    format: str
    pickle: tuple[int, int]  # offset from the payload's start, length
    buffers: list[tuple[int, int]]
    payload: int  # bytes after the header
    checksum: str  # xxh3_128 of the payload
    # the file's change time when it was read (`key.changed_ns_of`): an entry whose file has another one may be
    # another file's (`documents.has_entry` says so without hashing it); 0 where not known
    changed_ns: int = 0


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


def write_entry(target: Path, key: str, source: str, format_name: str, kept: Any) -> int:
    """Pickle `kept` into `target`, atomically (a temporary file in the same folder, 0600, renamed over it); the
    bytes written. Raises OSError (a full disk), pickle.PicklingError, TypeError or AttributeError (something
    that cannot be kept): the caller skips the entry."""
    stream, views = pickled(kept)
    return write_parts(target, key, source, format_name, stream, views)


def pickled(kept: Any) -> tuple[bytes, list[memoryview]]:
    """`kept` as a protocol-5 pickle and its out-of-band buffers (the arrays' bytes, not copied)."""
    buffers: list[pickle.PickleBuffer] = []
    with collector_paused():  # a kept document's columns make a million small objects, all acyclic
        stream = pickle.dumps(kept, protocol=5, buffer_callback=buffers.append)
    return stream, [buffer.raw() for buffer in buffers]


def write_parts(target: Path, key: str, source: str, format_name: str, stream: bytes, views: list[memoryview],
                locked: tuple[int, Path] | None = None, changed_ns: int = 0) -> int:  # fmt: skip
    """The entry of an already pickled `stream` and its out-of-band `views` (what `write_entry` pickled), written
    through `locked` (`open_locked`'s, closed here) or a temporary file of its own."""
    spans, offset = [], _aligned(len(stream))
    for view in views:
        spans.append((offset, view.nbytes))
        offset = _aligned(offset + view.nbytes)
    payload = offset
    checksum = xxhash.xxh3_128()
    pieces: list[bytes | memoryview] = []
    position = 0
    for start, part in [(0, memoryview(stream)), *zip((s for s, _ in spans), views, strict=True)]:
        if start > position:
            pieces.append(bytes(start - position))
        pieces.append(part)
        position = start + part.nbytes
    if payload > position:
        pieces.append(bytes(payload - position))
    for piece in pieces:
        checksum.update(piece)
    header = msgspec.json.encode(Header(key, source, format_name, (0, len(stream)), spans, payload,
                                        checksum.hexdigest(), changed_ns))  # fmt: skip
    lead = PREFIX.pack(MAGIC, LAYOUT, len(header)) + header
    lead += bytes(_aligned(len(lead)) - len(lead))
    handle, temporary = locked or open_locked(target)
    try:
        with os.fdopen(os.dup(handle), "wb") as out:
            out.write(lead)
            for piece in pieces:
                out.write(piece)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        os.close(handle)  # the lock goes with it, after the rename: a waiting lookup finds the entry
    return len(lead) + payload


def open_locked(target: Path) -> tuple[int, Path]:
    """A new temporary file beside `target` (0600) and its descriptor, locked until it is closed: a lookup of
    `target` meanwhile waits for it (`wait_for_writer`) instead of reading the whole file again."""
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=TEMPORARY_SUFFIX)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
    except OSError:
        os.close(handle)
        os.unlink(name)
        raise
    return handle, Path(name)


def wait_for_writer(target: Path, seconds: float) -> bool:
    """Wait, up to `seconds`, while another thread or process writes `target` (a temporary file of its name still
    locked); whether one was writing. A temporary nobody holds is a write cut short: not waited for."""
    try:
        names = [item.path for item in os.scandir(target.parent)
                 if item.name.startswith(f".{target.stem}.") and item.name.endswith(TEMPORARY_SUFFIX)]  # fmt: skip
    except OSError:
        return False
    deadline, waited = time.monotonic() + seconds, False
    for name in names:
        try:
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # (finished meanwhile)
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                continue
            while not _try_lock(handle):
                waited = True
                if time.monotonic() > deadline:
                    return True
                time.sleep(0.02)
        finally:
            os.close(handle)
    return waited


def wait_for_writers(folder: Path, seconds: float) -> None:
    """Wait, up to `seconds` each, for every entry being written in `folder` (`open_locked`'s temporaries)."""
    for temporary in folder.glob(f".*{TEMPORARY_SUFFIX}") if folder.is_dir() else []:
        wait_for_writer(folder / f"{temporary.name[1:].split('.')[0]}{ENTRY_SUFFIX}", seconds)


def _try_lock(handle: int) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True  # (a file system without locks: nothing to wait for)
    return True


def read_header(path: Path) -> tuple[Header, int] | None:
    """The entry's header and where its payload starts, or None when it is no entry of ours to read."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as source:
        return _header(source)


def _header(source: Any) -> tuple[Header, int] | None:
    info = os.fstat(source.fileno())
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None
    lead = source.read(PREFIX.size)
    if len(lead) != PREFIX.size:
        return None
    magic, layout, length = PREFIX.unpack(lead)
    if magic != MAGIC or layout != LAYOUT or length > 1 << 24:
        return None
    try:
        header = msgspec.json.decode(source.read(length), type=Header)
    except msgspec.DecodeError:
        return None
    start = _aligned(PREFIX.size + length)
    if info.st_size != start + header.payload:
        return None
    return header, start


def read_entry(path: Path, key: str) -> Any | None:
    """What `write_entry` kept at `path` under `key`, or None: not there, not ours, another key, layout or
    version, cut short, or any byte changed. The entry is mapped, not copied (a private copy-on-write mapping:
    the arrays read back are writable, and a write never reaches the file); entries are replaced by a rename,
    never rewritten in place, so a mapping never sees its file shrink."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(handle, "rb") as source:
            found = _header(source)
            if found is None or found[0].key != key:
                return None
            header, start = found
            mapped = mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_COPY)
        whole = memoryview(mapped)[start:]
        if xxhash.xxh3_128(whole).hexdigest() != header.checksum:
            return None
        if any(o < 0 or n < 0 or o + n > header.payload for o, n in [header.pickle, *header.buffers]):
            return None
        offset, length = header.pickle
        with collector_paused():
            return pickle.loads(whole[offset : offset + length], buffers=[whole[o : o + n] for o, n in header.buffers])
    except Exception:  # a foreign or damaged entry: read as if there were none
        return None
