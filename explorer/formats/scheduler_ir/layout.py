"""Where each core's array lies in a big schedule, found by looking for the top-level keys in the file's bytes
instead of parsing all of it first, so that worker processes can start on the first cores while the rest is still
being looked through (issue #14: parsing the top level of a 519 MB file took 1.6 s before any core could start).

It is a guess, and it is checked. A core's span is right only if its bytes decode as one JSON array (a wrong end
leaves brackets unbalanced or text after the array; the worker refuses it with `SpanGuessWrong`), and the bytes
outside the cores, with each core replaced by `[]`, decode as an object whose keys hold exactly those `[]`
(`reader._top_level_around`). When both hold, the file is the JSON the full parse would have seen, so the load is the
same. When either fails, the caller parses the top level as before. Two layouts are known and looked for:

- indented (json.dumps with an indent, as the real samples are): every top-level key starts a line with the
  indent of the first key, and no deeper key or string does, so the keys are found in any order;
- compact (no newlines, as our generator writes): the cores follow each other as "0", "1", ... up to xlen·ylen
  (read from the numbers at the file's end, when they are there), and the last one is followed by "-1", a
  top-level number or the end of the object, looked for from the end of the file backwards first: the
  members after the cores are a small part of the file, and a search forward would cross the whole last core
  once per key (a one-core file of 442 MB took 1.3 s).
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable
from pathlib import Path

from explorer.file_spans import FileChanged, FileIdentity

WINDOW = 32 << 20  # bytes looked through per search step; pages behind the scan are given back to the kernel
TAIL = 64 << 10  # the top-level numbers ("xlen", ...) are looked for in the file's last bytes
END_WINDOW = 64 << 20  # how far from the end the key after the last core is looked for backwards first
LOOK_BACK = 64  # how far before a key its comma and the end of the previous value may lie
SKIP = 0.75  # of the previous core's length: where the search for the next core's key starts (compact layout)

_KEY_OPENS = re.compile(rb"\s*:\s*\[")  # after a core's key: its array
_KEY_FOLLOWS = re.compile(rb"\s*:\s*")
_OPENS_KEY = re.compile(rb"[{,]\s*$")
_CLOSE_BEFORE_KEY = re.compile(rb"(\])\s*,\s*$")
_NOT_SPACE = re.compile(rb"\S")
_ENDS = (b'"-1"', b'"buffersize"', b'"top_batch_cut"', b'"xlen"', b'"ylen"')  # what may follow the last core
_WHITESPACE = b" \t\r\n"
_SCALAR = re.compile(rb'"(buffersize|top_batch_cut|xlen|ylen)"\s*:\s*(\d+)')

Span = tuple[int, int]  # (offset, length) in the file
Found = Callable[[int, Span], None]


class SpanGuessWrong(Exception):
    """A guessed span does not hold one JSON array: the top level must be parsed to find the cores."""


def find_core_spans(
    path: Path,
    stamp: FileIdentity,
    found: Found = lambda core, span: None,
    scanned: Callable[[int], None] = lambda done: None,
    limit: int | None = None,
) -> dict[int, Span] | None:
    """Each core's (offset, length), passed to `found` as soon as it is known, in file order; `scanned` hears
    how many bytes have been looked through; the search stops after `limit` cores when given. None when the
    file is laid out otherwise (or a core appears twice): nothing of what was passed to `found` is to be
    trusted then."""
    try:
        with open(path, "rb") as handle:  # read-only
            status = os.fstat(handle.fileno())
            if FileIdentity.of(status) != stamp:
                raise FileChanged(path, "", "the file changed on disk while it was being loaded: open it again")
            if status.st_size == 0:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                scanner = _Scanner(mapped, scanned)
                spans: dict[int, Span] = {}

                def keep(core: int, span: Span) -> None:
                    if core in spans:
                        raise _Unknown
                    spans[core] = span
                    found(core, span)
                    if limit is not None and len(spans) >= limit:
                        raise _Enough

                try:
                    scanner.walk(keep)
                except _Unknown:
                    return None
                except _Enough:
                    pass
                return spans or None
    except (OSError, ValueError):  # unreadable, or cannot be mapped: the full parse reports or copes
        return None


def tail_scalars(tail: bytes | bytearray) -> dict[str, int]:
    """The top-level numbers found in the file's last bytes (where json.dumps and our writer put them)."""
    return {name.decode(): int(value) for name, value in _SCALAR.findall(tail)}


def core_spans_at(path: str, stamp: FileIdentity) -> dict[int, Span] | None:
    """`find_core_spans` as a worker process's job (module-level, so the worker finds it by name): all the
    spans at once."""
    return find_core_spans(Path(path), stamp)


class _Unknown(Exception):
    """Not a layout this module knows."""


class _Enough(Exception):
    """As many cores as were asked for are found."""


class _Scanner:
    """Searches a mapped file front to back, window by window, giving the pages it has passed back to the kernel
    (they stay in the page cache) so that looking through 519 MB does not count 519 MB to this process."""

    def __init__(self, mapped: mmap.mmap, scanned: Callable[[int], None]) -> None:
        self.mapped = mapped
        self.size = len(mapped)
        self.scanned = scanned
        self.released = 0

    def walk(self, keep: Found) -> None:
        first = _NOT_SPACE.search(self.mapped, 0, min(self.size, 4096))
        if first is None or self.mapped[first.start()] != ord("{"):
            raise _Unknown
        key = _NOT_SPACE.search(self.mapped, first.end(), min(self.size, first.end() + 4096))
        if key is None or self.mapped[key.start()] != ord('"'):
            raise _Unknown
        indent = self.mapped[first.end() : key.start()]
        if b"\n" in indent:
            self._walk_indented(keep, key.start(), b"," + indent + b'"')
        else:
            self._walk_compact(keep)

    def _walk_indented(self, keep: Found, key_at: int, lead: bytes) -> None:
        """Every top-level key starts with `lead` (a comma, a newline and the first key's indent)."""
        while True:
            key_end = self.mapped.find(b'"', key_at + 1, key_at + 64)
            if key_end < 0:
                raise _Unknown
            key = bytes(self.mapped[key_at + 1 : key_end])
            colon = _KEY_FOLLOWS.match(self.mapped, key_end + 1)
            if colon is None or b"\\" in key:
                raise _Unknown
            start = colon.end()
            following = self.find(lead, start)
            end = self._object_end() if following < 0 else following
            end = self._strip_back(start, end)
            if key.isdigit():
                self._keep_array(keep, int(key), start, end)
            if following < 0:
                return
            key_at = following + len(lead) - 1

    def _walk_compact(self, keep: Found) -> None:
        """Cores "0", "1", ... one after the other; the last is followed by one of `_ENDS` or the object's end."""
        numbers = tail_scalars(self.mapped[max(self.size - TAIL, 0) :])
        cores = numbers.get("xlen", 0) * numbers.get("ylen", 0) or None  # a hint: a wrong one fails the check
        start = self._first_core_start()
        core, previous_length = 0, 0
        while cores is None or core + 1 < cores:
            following = self._next_core_key(b'"%d"' % (core + 1), start, previous_length)
            if following is None:
                break
            close, opens = following
            self._keep_array(keep, core, start, close + 1)
            start, core, previous_length = opens, core + 1, close + 1 - start
        self._keep_array(keep, core, start, self._last_end(start))

    def _last_end(self, start: int) -> int:
        """Where the last core's array ends: before the first of `_ENDS` that follows an array's `]`, looked for
        backwards in the file's last END_WINDOW bytes, else forwards from the core's start; else before the
        object's closing brace."""
        window = max(start, self.size - END_WINDOW)
        ends = [at for at in (self._end_before(key, window, backwards=True) for key in _ENDS) if at is not None]
        if not ends:
            ends = [at for at in (self._end_before(key, start) for key in _ENDS) if at is not None]
        return min(ends) if ends else self._strip_back(start, self._object_end())

    def _first_core_start(self) -> int:
        """Where core "0"'s `[` is: its key follows `{` or `,` and is followed by `:` and `[`."""
        at = self.find(b'"0"', 0)
        while at >= 0:
            opens = _KEY_OPENS.match(self.mapped, at + 3)
            if opens and _OPENS_KEY.search(self.mapped, max(at - LOOK_BACK, 0), at):
                return opens.end() - 1
            at = self.find(b'"0"', at + 1)
        raise _Unknown

    def _next_core_key(self, key: bytes, start: int, previous_length: int) -> tuple[int, int] | None:
        """`_core_key` for the core that starts at `start`, looked for first from SKIP of the previous core's
        length on (cores are alike in size: a 519 MB file's search took 0.4 s of a CPU the decoding workers
        need), then from the start when it is not within two such lengths."""
        skip = int(previous_length * SKIP)
        if skip > 0:
            found = self._core_key(key, start + skip, start + skip + 2 * previous_length)
            if found is not None:
                return found
        return self._core_key(key, start)

    def _core_key(self, key: bytes, after: int, before: int | None = None) -> tuple[int, int] | None:
        """The first `key` after `after` (and before `before`) that closes an array before it and opens one after
        it: (where the previous array's `]` is, where the next one's `[` is)."""
        at = self.find(key, after, before)
        while at >= 0:
            close = _CLOSE_BEFORE_KEY.search(self.mapped, max(at - LOOK_BACK, after), at)
            opens = _KEY_OPENS.match(self.mapped, at + len(key))
            if close and opens:
                return close.start(1), opens.end() - 1
            at = self.find(key, at + 1, before)
        return None

    def _end_before(self, key: bytes, after: int, backwards: bool = False) -> int | None:
        """Where the array that `key` follows ends (just past its `]`), for the first such `key` after `after`
        (or the last one, `backwards`)."""
        at = self.mapped.rfind(key, after) if backwards else self.find(key, after)
        while at >= 0:
            close = _CLOSE_BEFORE_KEY.search(self.mapped, max(at - LOOK_BACK, after), at)
            if close and _KEY_FOLLOWS.match(self.mapped, at + len(key)):
                return close.start(1) + 1
            at = self.mapped.rfind(key, after, at) if backwards else self.find(key, at + 1)
        return None

    def _object_end(self) -> int:
        """Where the top-level object's closing `}` is."""
        end = self._strip_back(0, self.size)
        if end == 0 or self.mapped[end - 1] != ord("}"):
            raise _Unknown
        return end - 1

    def _strip_back(self, start: int, end: int) -> int:
        while end > start and self.mapped[end - 1] in _WHITESPACE:
            end -= 1
        return end

    def _keep_array(self, keep: Found, core: int, start: int, end: int) -> None:
        if end - start < 2 or self.mapped[start] != ord("[") or self.mapped[end - 1] != ord("]"):
            raise _Unknown
        keep(core, (start, end - start))

    def find(self, needle: bytes, start: int, before: int | None = None) -> int:
        """The first `needle` at or after `start` (and ending before `before`), or -1; looked for a window at a
        time."""
        at, size = start, self.size if before is None else min(before, self.size)
        while at < size:
            end = min(at + WINDOW, size)
            hit = self.mapped.find(needle, at, min(end + len(needle) - 1, size))
            if hit >= 0:
                return hit
            self._release(end - LOOK_BACK)
            at = end
        return -1

    def _release(self, upto: int) -> None:
        """Pages wholly before `upto` are no longer needed mapped."""
        page = mmap.PAGESIZE
        upto = upto // page * page
        if upto > self.released:
            if hasattr(self.mapped, "madvise"):
                self.mapped.madvise(mmap.MADV_DONTNEED, self.released, upto - self.released)
            self.released = upto
            self.scanned(upto)
