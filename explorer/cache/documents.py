"""Documents in the cache: the analysed document of a file whose format keeps them (`Format.cacheable`), found by
its entry's name before anything is read and checked by its key (the hash of every byte), kept once what it holds
cost more than `MIN_SECONDS` to work out.

A schedule with pipeline companions (found beside it or named) is not kept: its joined view holds the companions'
documents, and their files would be part of the key. The entry is pickled on the caller's thread (arrays are not
copied: they stay outside the pickle) and written by a thread of its own, so the first screen does not wait for
the disk; `wait_for_writes` lets a command finish it before the process ends. With `detach` (the console
script's commands and TUI) a forked grandchild pickles and writes it instead, from a copy of the document as it
is then: nothing waits for it nor shares the interpreter with it. Every write locks its temporary file until
the rename; an open that finds one locked waits for that entry.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.cache import folder as cache_folder
from explorer.cache import key as cache_key
from explorer.cache.entry import open_locked, pickled, read_entry, read_header, wait_for_writer, write_parts
from explorer.cache.key import Stamp, changed_ns_of, changed_since, entry_key, entry_name, stamp_of

if TYPE_CHECKING:
    from explorer.document import Document
    from explorer.format import Format

MIN_SECONDS = 0.3  # what was worked out quicker than this is not written: reading the entry would save too little
# Keeping costs a hash of every byte (a command waits for it; every second open pays it again): a document is kept
# only when working it out cost SAVED_PER_HASH times what hashing the file takes at HASH_BYTES_PER_SECOND (a
# 512 MiB TVM bundle read in 0.5 s is not kept; the 480 MB schedule, 10 s to read, is)
HASH_BYTES_PER_SECOND = 4e9
SAVED_PER_HASH = 20.0
DISK_RESERVE = 256 * 2**20  # a write that would leave less free than this is skipped (it would fill the disk)
WAIT_SECONDS = 60.0  # how long an open waits for the entry another process is writing (rather than read the file)
DETACHED_SECONDS = 300  # a detached writer still working after this long is stopped (its cut-short write is no entry)


@dataclass
class Slot:
    """Where a file's document is kept: its entry (named without reading the file: `key.entry_name`), the file as
    it was when opened, and its full key, worked out (hashing every byte) only when an entry is read or written."""

    path: Path
    source: str
    format: str
    options: dict[str, object]
    stamp: Stamp
    changed_ns: int
    _key: str | None = None

    def key(self) -> str | None:
        """The full key (`key.entry_key`), or None when the file cannot be read whole or is no longer the file
        that was opened (an entry keyed now could hold what another file became)."""
        if self._key is None:
            try:
                self._key = entry_key(self.format, Path(self.source), self.options)
            except OSError:
                return None
        # asked again on each write: a file changed after its hash was taken is no longer what was read
        return None if changed_since(Path(self.source), self.stamp, self.changed_ns) else self._key


def slot_for(found: Format, path: Path, strict: bool, companions: dict[str, Path | None] | None,
             dims: Mapping[str, int] | None = None) -> Slot | None:  # fmt: skip
    """The slot of `path` read by `found` (with `dims` bound: they change what shape inference derives), or None
    when nothing is kept for it (cache off, a format that does not keep documents, companions, no private
    folder, a file that cannot be looked at)."""
    if not cache_folder.enabled() or not found.cacheable or any((companions or {}).values()):
        return None
    from explorer.companions import find_companions

    if find_companions(path):
        return None
    where = cache_folder.private_folder(create=True)
    if where is None:
        return None
    options: dict[str, object] = {"strict": strict, "dims": sorted((dims or {}).items())}
    try:
        name = entry_name(found.name, path, options)
        resolved = path.resolve()
        stamp, changed_ns = stamp_of(resolved), changed_ns_of(resolved)
    except OSError:
        return None
    return Slot(where / f"{name}{cache_folder.ENTRY_SUFFIX}", str(path), found.name, options, stamp, changed_ns)


def has_entry(found: Format, path: Path, strict: bool = False, companions: dict[str, Path | None] | None = None,
              dims: Mapping[str, int] | None = None) -> bool:  # fmt: skip
    """Whether a kept document may answer for `path` (an entry under its name written from the file as it is now,
    its change time the same, or one being written; whether it is the file's and reads whole is `lookup`'s, which
    hashes the file)."""
    slot = slot_for(found, path, strict, companions, dims)
    if slot is None:
        return False
    return written_as_it_is(slot) if slot.path.is_file() else wait_for_writer(slot.path, 0.0)


def written_as_it_is(slot: Slot) -> bool:
    """Whether the slot's entry was written from the file with its change time as it is now. An entry read back
    whose file's change time moved since (a `chmod`, a `touch`, a write that kept its bytes) is written again
    with the new one: else `has_entry` would say no for every later open."""
    found = read_header(slot.path)
    return found is not None and found[0].changed_ns == slot.changed_ns


def lookup(slot: Slot) -> Document | None:
    from explorer.document import Document

    if not slot.path.is_file() and not (wait_for_writer(slot.path, WAIT_SECONDS) and slot.path.is_file()):
        return None  # (nothing kept under the file's name, nor being written: no hashing)
    key = slot.key()
    kept = read_entry(slot.path, key) if key is not None else None
    if not isinstance(kept, Document):
        return None
    cache_folder.mark_used(slot.path)
    return kept


_writes: list[threading.Thread] = []
_warned = threading.Event()


def keep(document: Document, warn: Callable[[str], None] | None = None, detach: bool = False) -> None:
    """Write `document` to the slot its open marked, in a thread of its own, when what it holds cost at least
    MIN_SECONDS, and SAVED_PER_HASH times a hash of the file, to work out (its load, deep checks and graph:
    `Document.derive_seconds`) and it holds more than the entry it came from or was last kept as
    (`Document.derived_state`); a write that cannot be made is skipped, a full disk said once (`warn`, else
    stderr). Call it when done with what the command or the first screen worked out: the pickling walks the
    document (a view may read it meanwhile; one that changes what the pickle is walking skips this write).
    `detach` (the console script's command or TUI): pickled and written by a process of its own, so a command
    ends when it would without a cache; an open meanwhile waits for that entry (`lookup`)."""
    import pickle

    slot = document.cache_slot
    if not isinstance(slot, Slot) or document.derive_seconds < max(MIN_SECONDS, slot.stamp.size * SAVED_PER_HASH /
                                                                   HASH_BYTES_PER_SECOND):  # fmt: skip
        return
    with _keeping:  # the TUI may keep from two threads (its load, its graph): each state is written once
        state = document.derived_state()
        if document._kept_state == state:
            return  # (read back from the cache, or kept already, and nothing worked out since)
        document._kept_state = state
    if detach and _keep_detached(slot, document, warn or _to_stderr):
        return
    try:
        stream, views = pickled(document)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError, RuntimeError):
        return  # something in it cannot be kept: the next open reads the file, as today
    size = len(stream) + sum(view.nbytes for view in views)
    writer = threading.Thread(target=_write, args=(slot, stream, views, size, warn or _to_stderr),
                              name="ir-explorer cache write", daemon=True)  # fmt: skip
    _writes.append(writer)
    writer.start()


_keeping = threading.Lock()


def _keep_detached(slot: Slot, document: Document, warn: Callable[[str], None]) -> bool:
    """Fork a child that pickles and writes `document`'s entry; False when none could start (the caller writes
    it). The entry's temporary file is made and locked here, before this process can end, so an open started
    right after this one finds the write under way."""
    if not hasattr(os, "fork"):
        return False
    try:
        if shutil.disk_usage(slot.path.parent).free - slot.stamp.size < DISK_RESERVE:  # (its size is not known yet)
            raise OSError(28, "No space left on device")
        locked = open_locked(slot.path)
    except OSError as error:
        _say_not_written(slot, slot.stamp.size, error, warn)
        return True
    try:
        pid = os.fork()
    except OSError:
        os.close(locked[0])
        with contextlib.suppress(OSError):
            os.unlink(locked[1])
        return False
    if pid == 0:  # pragma: no cover - the child: it forks the writer and ends, so no zombie waits on this process
        try:
            if os.fork() == 0:
                _write_detached(slot, document, locked)  # never returns
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(locked[1])
        os._exit(0)
    os.close(locked[0])  # (the writer holds the lock)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    return True


def _write_detached(slot: Slot, document: Document, locked: tuple[int, Path]) -> None:  # pragma: no cover
    """In the child: out of the terminal's session, silent, stopped after DETACHED_SECONDS; never returns."""
    import pickle

    try:
        from explorer.isolated import quiet_forked_child

        with contextlib.suppress(OSError):
            os.setsid()  # the terminal's hang-up or Ctrl+C for the next command is not this write's
        quiet_forked_child()  # (the forking thread is the child's main one: it may set signal handlers)
        signal.alarm(DETACHED_SECONDS)
        cache_key._hashing = threading.Lock()  # (another thread may have held it at the fork: it would stay held)
        with contextlib.suppress(Exception):  # (what it adds is a bonus: the entry is written without it)
            _complete_for_the_tui(document)
        stream, views = pickled(document)
        size = len(stream) + sum(view.nbytes for view in views)
        key = slot.key()
        if key is not None and shutil.disk_usage(slot.path.parent).free - size >= DISK_RESERVE:
            write_parts(slot.path, key, slot.source, slot.format, stream, views, locked, slot.changed_ns)
            cache_folder.evict(slot.path.parent, cache_folder.cap())
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError, RuntimeError):
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(locked[1])  # (renamed when written: then there is nothing here)
        os._exit(0)


def _complete_for_the_tui(document: Document) -> None:
    """What the TUI shows first and a command may not have asked for (`info` lists no incidents), worked out on the
    detached writer's copy before it is kept: a schedule's overlap incidents (their roles are named by the TUI,
    which reads the workloads again), at no command's cost."""
    if document.schedule_analysis is not None:
        from explorer.schedule.incidents import incidents_of

        incidents_of(document, with_roles=False)


def _write(slot: Slot, stream: bytes, views: list[memoryview], size: int, warn: Callable[[str], None]) -> None:
    key = slot.key()  # the file's hash, here and not on the opening thread
    if key is None:
        return  # the file changed since it was read: what was read is kept under no key
    try:
        if shutil.disk_usage(slot.path.parent).free - size < DISK_RESERVE:
            raise OSError(28, "No space left on device")
        write_parts(slot.path, key, slot.source, slot.format, stream, views, None, slot.changed_ns)
    except OSError as error:
        _say_not_written(slot, size, error, warn)
        return
    cache_folder.evict(slot.path.parent, cache_folder.cap())


def _say_not_written(slot: Slot, size: int, error: OSError, warn: Callable[[str], None]) -> None:
    from explorer.writing import in_words

    if not _warned.is_set():
        _warned.set()
        warn(f"the cache entry of {Path(slot.source).name} ({size / 2**20:,.0f} MiB) was not written: "
             f"{in_words(error)}; the next open reads the file again")  # fmt: skip


def _to_stderr(message: str) -> None:
    print(f"ir-explorer: {message}", file=sys.stderr)


def pending_writes() -> bool:
    """Whether an entry is still being written."""
    return any(writer.is_alive() for writer in _writes)


def wait_for_writes(timeout: float = 60.0) -> None:
    """Finish the entries being written (a command ends after them; a cut-short write leaves no entry)."""
    while _writes:
        _writes.pop().join(timeout)


def kept_entries() -> list[tuple[Path, int, float, Any]]:
    """(entry, bytes, last used, its header or None when unreadable) for `ir-explorer cache`."""
    from explorer.cache.entry import read_header

    where = cache_folder.private_folder(create=False)
    if where is None:
        return []
    listed = []
    for entry in cache_folder.entries(where):
        found = read_header(entry.path)
        listed.append((entry.path, entry.size, entry.last_used, found[0] if found else None))
    return listed


def clear() -> tuple[int, int]:
    """`ir-explorer cache --clear`: (entries, bytes) removed."""
    where = cache_folder.private_folder(create=False)
    return (0, 0) if where is None else cache_folder.clear(where)
