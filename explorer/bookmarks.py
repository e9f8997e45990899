"""Review bookmarks: a note on a tree item and a view, kept in a sidecar file next to the input.

The input is never written: bookmarks of `model.onnx` live in `model.onnx.bookmarks.json` (or wherever
`--bookmarks PATH` says), so a reviewer can hand the file over and the next person walks the same points.

Nothing in the sidecar is ever lost:
- every change is a read-modify-write of the file under an advisory lock (`fcntl.flock` on its folder), so two
  reviewers (two terminals, two browser tabs of `serve`) merge instead of overwriting each other;
- the file is replaced atomically (a temporary file in the same folder, flushed and fsynced, then renamed), so a
  crash or a full disk in the middle of a save leaves the previous file whole;
- entries this version cannot read are kept verbatim (and reported), never dropped; a file that is not a
  bookmarks file at all is never overwritten;
- each bookmark has a stable id, a creation time and an author; deleting is explicit, by id.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import getpass
import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from explorer.errors import LoadError
from explorer.formatting import human_bytes
from explorer.models.ref import Ref
from explorer.writing import write_atomically

LOCK_SECONDS = 5.0  # how long a save waits for another writer's lock before it says so
MAX_SIDECAR_BYTES = 64 * 2**20  # a bookmarks file is notes: anything larger is not one


@functools.cache
def schema_version() -> int:
    """The sidecar's schema version (1: entries without id, created and author, migrated on load). The contracts
    are imported when a sidecar is read or written, not as the TUI starts: pydantic and its models are slow to
    build (BENCHMARKS.md, second open)."""
    from explorer.contracts import version

    return version("bookmarks")


@dataclass(frozen=True, slots=True)
class Bookmark:
    ref: Ref  # a tree ref (tuple of str/int, possibly nested)
    view: str  # the view on screen when it was made: tree, timeline, buffers, layout, source or graph
    note: str
    label: str  # what the item was called when it was marked
    id: str = ""
    created: str = ""  # ISO 8601, UTC
    author: str = ""


class BookmarksError(OSError):
    """The sidecar cannot be read as bookmarks, or cannot be written: the message says which and where."""


class UnsavableNote(BookmarksError):
    """The bookmark itself cannot be written (text that is not text): another path would not help."""


@dataclass
class Loaded:
    bookmarks: list[Bookmark]
    unreadable: int = 0  # entries kept verbatim because this version cannot read them
    problems: list[str] = field(default_factory=list)


def sidecar_path(source: Path) -> Path:
    return source.with_name(source.name + ".bookmarks.json")


def default_author() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return "unknown"


def new_bookmark(ref: Ref, view: str, note: str, label: str, author: str) -> Bookmark:
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return Bookmark(ref, view, note, label, os.urandom(8).hex(), created, author)


def _to_tuple(value: Any) -> Any:
    return tuple(_to_tuple(v) for v in value) if isinstance(value, list) else value


def _legacy_id(entry: dict) -> str:
    """A version-1 entry has no id: derive a stable one from its content, so every process agrees on it."""
    text = json.dumps([entry.get(k) for k in ("ref", "view", "note", "label")], sort_keys=True, default=str)
    return "v1-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _parse(entry: Any) -> Bookmark | None:
    """The bookmark an entry holds, or None when this version cannot read it (it is then kept as it is)."""
    from pydantic import ValidationError

    from explorer.contracts import BookmarkEntry

    try:
        found = BookmarkEntry.model_validate(entry, strict=True)
    except ValidationError:
        return None
    ident = found.id or _legacy_id(entry)
    return Bookmark(_to_tuple(found.ref), found.view or "tree", found.note, found.label, ident, found.created,
                    found.author)  # fmt: skip


def _parse_raw(raw: msgspec.Raw) -> Bookmark | None:
    """`_parse` of an undecoded entry: a well-formed one in one C call, anything else as pydantic judges it."""
    try:
        found = _entry_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return _parse(msgspec.json.decode(raw))
    ident = found.id or _legacy_id(msgspec.json.decode(raw))
    return Bookmark(_to_tuple(found.ref), found.view or "tree", found.note, found.label, ident, found.created,
                    found.author)  # fmt: skip


def _entry(bookmark: Bookmark) -> dict:
    return asdict(bookmark)


def _read_file(path: Path) -> dict[str, Any]:
    """The sidecar's JSON object ({} when there is none); BookmarksError when it is not a bookmarks file."""
    return {name: msgspec.json.decode(raw) for name, raw in _read_top(path)[0].items()}


_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])


class _Entry(msgspec.Struct):
    """A bookmark entry read in one C call (BookmarkEntry's fields, as strict); what it refuses goes to pydantic."""

    ref: list[Any]
    view: str = "tree"
    note: str = ""
    label: str = ""
    id: str = ""
    created: str = ""
    author: str = ""


_entry_decoder = msgspec.json.Decoder(_Entry)


def _read_top(path: Path) -> tuple[dict[str, msgspec.Raw], list[msgspec.Raw]]:
    """The sidecar's top-level object and its bookmarks, undecoded (({}, []) when there is none); BookmarksError
    when it is not a bookmarks file.

    A bookmarks file is an object with a `bookmarks` list and, when it says its version, an integer one: any
    other JSON (the input itself, a config that happens to sit there) is not ours and is never written. Decoded by
    msgspec in parts: json.loads of 300,000 bookmarks held the interpreter for 2.7 s, the UI with it.
    """
    if path.is_symlink() and not path.exists():  # a dangling link: saving would create a file at its target
        raise BookmarksError(f"{path}: a link to {os.readlink(path)!r}, which does not exist; it is left as it is")
    try:
        text = _read_regular(path)
    except (FileNotFoundError, NotADirectoryError):  # no sidecar yet (or no folder for one): nothing to keep
        return {}, []
    except BookmarksError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise BookmarksError(f"{path}: cannot read the bookmarks ({error})") from None
    try:
        top = _top_decoder.decode(text)
        entries = _raw_list_decoder.decode(top["bookmarks"])  # a list (its entries still undecoded)
    except (msgspec.DecodeError, RecursionError, KeyError):
        raise BookmarksError(f"{path}: not a bookmarks file (no bookmarks list); it is left as it is") from None
    try:
        version = msgspec.json.decode(top.get("schema_version") or top.get("version") or b"1")
    except (msgspec.DecodeError, RecursionError):
        version = None
    if not isinstance(version, int) or isinstance(version, bool):
        raise BookmarksError(f"{path}: not a bookmarks file this version reads (schema_version {version!r}); "
                             "it is left as it is")  # fmt: skip
    if version > schema_version():
        raise BookmarksError(f"{path}: written by a newer ir-explorer (schema {version}); it is left as it is")
    return top, entries


def _read_regular(path: Path) -> str:
    """The file's text, opened without blocking and only when it is a regular file: a FIFO or a device planted
    as the sidecar would otherwise hold the reader (the TUI) until someone writes to it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BookmarksError(f"{path}: not a regular file (a FIFO, a device or a folder); it is left as it is")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SIDECAR_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SIDECAR_BYTES:
        raise BookmarksError(f"{path}: over {MAX_SIDECAR_BYTES // 2**20} MiB, too big for a bookmarks file; it is "
                             "left as it is")  # fmt: skip
    return data.decode("utf-8")


def load_bookmarks(path: Path) -> list[Bookmark]:
    """The readable bookmarks in `path`; [] when there is no such file."""
    return load(path).bookmarks


class Stopped(Exception):
    """`load` was asked to stop (the app quitting while it read)."""


def load(path: Path, stop: Callable[[], bool] | None = None) -> Loaded:
    """The sidecar's bookmarks; `stop()` is asked every 1,000 entries (Stopped when it says so)."""
    _, entries = _read_top(path)
    found = []
    for k, raw in enumerate(entries):
        if stop is not None and k % 1000 == 0 and stop():
            raise Stopped
        found.append(_parse_raw(raw))
    readable = [b for b in found if b is not None]
    unreadable = len(found) - len(readable)
    problems = [f"{path}: {unreadable} entries cannot be read by this version; they are kept"] if unreadable else []
    return Loaded(readable, unreadable, problems)


@contextlib.contextmanager
def _locked(folder: Path, timeout: float | None = None) -> Iterator[None]:
    """An exclusive advisory lock on the folder: every writer of a sidecar there waits for the others, for
    `timeout` seconds at most (another user holding the lock for ever must not hold us): then BookmarksError."""
    timeout = LOCK_SECONDS if timeout is None else timeout
    fd = os.open(folder, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_DIRECTORY", 0))
    try:
        if not _acquire(fd, timeout):
            raise BookmarksError(f"{folder}: another process has held the bookmarks lock for over "
                                 f"{timeout:g} s; nothing was saved")  # fmt: skip
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, timeout: float) -> bool:
    """Take the lock on `fd` within `timeout` seconds. A blocking flock, in a thread the caller waits for: the
    kernel wakes a waiter when the lock is let go, where polling had to hit the instant between a busy writer's
    saves (two writers saving in a loop: one was starved for 5 s and gave up). When the wait is given up, the
    thread lets the lock go as soon as it gets it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    waiter = os.dup(fd)  # the same open file: its lock is the caller's; closed by the thread when done
    taken = threading.Event()
    given_up = threading.Event()
    guard = threading.Lock()

    def wait() -> None:
        try:
            fcntl.flock(waiter, fcntl.LOCK_EX)
            with guard:
                if given_up.is_set():
                    fcntl.flock(waiter, fcntl.LOCK_UN)
                else:
                    taken.set()
        except OSError:
            pass
        finally:
            os.close(waiter)

    threading.Thread(target=wait, name="bookmarks-lock", daemon=True).start()
    if taken.wait(timeout):
        return True
    with guard:
        given_up.set()
        return taken.is_set()


def _write_atomically(path: Path, payload: dict) -> None:
    """Indented as people read it, or compact when that is what keeps it under MAX_SIDECAR_BYTES; never larger
    than the reader takes (a 55 MB file was saved back at 88 MB, indented, and refused by every session after)."""
    compact = msgspec.json.encode(payload)
    data = msgspec.json.format(compact, indent=2) + b"\n"
    if len(data) > MAX_SIDECAR_BYTES:
        data = compact + b"\n"
    if len(data) > MAX_SIDECAR_BYTES:
        raise BookmarksError(f"{path}: the bookmarks would be {human_bytes(len(data))}, over the "
                             f"{human_bytes(MAX_SIDECAR_BYTES)} a bookmarks file may hold; nothing was saved "
                             "(delete some, or keep them in another file with --bookmarks)")  # fmt: skip
    write_atomically(path, data)


def _writable_target(path: Path, source: Path) -> Path:
    """Where saving `path` writes: through a symbolic link to its target (the link stays a link), never the input."""
    if path.is_symlink() and not path.exists():  # a dangling link planted as the sidecar: never create its target
        raise BookmarksError(f"{path}: a link to {os.readlink(path)!r}, which does not exist; bookmarks are not "
                             "written through it")  # fmt: skip
    target = path.resolve() if path.is_symlink() else path
    try:
        same = target.resolve() == source.resolve() or (target.exists() and os.path.samefile(target, source))
    except OSError:  # the input is gone or unreadable: it cannot be this file's target either
        same = False
    if same:
        raise BookmarksError(f"{path}: that is the input file; bookmarks go in a file of their own")
    return target


def _change(path: Path, source: Path, edit: Any) -> Loaded:
    """Read what is on disk now, apply `edit` to its raw entries, write it back atomically; all under the lock.

    Top-level keys this version does not know (another tool's, a newer minor version's) are written back as
    they were.
    """
    target = _writable_target(path, source)
    try:
        with _locked(target.parent):
            for stale in target.parent.glob(f".{target.name}.*.tmp"):  # left by a writer killed mid-save
                stale.unlink(missing_ok=True)  # safe: under the lock no other writer is mid-save
            existing = _read_file(target)
            entries = edit(list(existing.get("bookmarks", [])))
            for k, entry in enumerate(entries):  # version-1 entries get their derived ids written down
                if isinstance(entry, dict) and "id" not in entry and (parsed := _parse(entry)) is not None:
                    entries[k] = {**entry, "id": parsed.id}
            contents = {"schema_version": schema_version(), "file": source.name, "bookmarks": entries}
            kept = {key: value for key, value in existing.items() if key not in contents and key != "version"}
            _write_atomically(target, {**contents, **kept})
    except BookmarksError:
        raise
    except LoadError as error:  # writing.write_atomically says what failed in words
        raise BookmarksError(f"cannot save bookmarks to {path}: {error.message}") from None
    except OSError as error:
        raise BookmarksError(f"cannot save bookmarks to {path}: {error.strerror or error}") from None
    return load(target)


def add_bookmark(path: Path, source: Path, bookmark: Bookmark) -> Loaded:
    """Add one bookmark to whatever the sidecar holds now (others may have added theirs since we read it)."""
    for name in ("note", "label", "author"):
        try:
            getattr(bookmark, name).encode("utf-8")
        except UnicodeEncodeError as error:
            bad = error.object[error.start : error.end]
            raise UnsavableNote(f"the bookmark's {name} cannot be saved: {bad!r} is not text") from None
    return _change(path, source, lambda entries: [*entries, _entry(bookmark)])


def delete_bookmark(path: Path, source: Path, bookmark_id: str) -> Loaded:
    """Remove the bookmark with this id (and nothing else: entries that cannot be read stay)."""

    def without(entries: list[Any]) -> list[Any]:
        return [e for e in entries if (parsed := _parse(e)) is None or parsed.id != bookmark_id]

    return _change(path, source, without)
