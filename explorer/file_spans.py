"""Byte ranges of a loaded file, read again from the file when asked for, so a loader need not keep the whole
file in memory for details that are looked at one at a time (a 519 MB schedule kept its 495 MiB of bytes only for
the details panel). Reads are checked against the file as it was loaded: a file changed on disk since is said to
be, never misread.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import NamedTuple

import msgspec
import numpy as np

from explorer.errors import LoadError

_raw_items = msgspec.json.Decoder(list[msgspec.Raw])


class FileIdentity(NamedTuple):
    """A file as it was when a load began: a read that finds it otherwise refuses to go on (it changed on disk).
    A tuple, so it crosses to worker processes and compares as plain values do."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileIdentity:
        return cls(status.st_size, status.st_mtime_ns)


class FileChanged(LoadError):
    """The file is no longer what was loaded: its bytes cannot be read again."""


class FileSpans:
    """JSON arrays at known byte ranges of a file (key → (offset, length)), and their items on demand."""

    def __init__(self, path: Path, spans: dict[int, tuple[int, int]], stamp: FileIdentity) -> None:
        self.path = Path(path)
        self.spans = spans
        self.stamp = stamp  # the file when it was loaded
        self._items: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # key → (item offsets, item lengths)
        # One read-only descriptor, opened on the first read and closed with this object: opening the file for
        # each read cost a third of the time incidents take to name their thousands of tensors. A file replaced
        # (renamed over) since keeps being read as loaded; one changed in place is refused.
        self._fd: list[int] = []
        weakref.finalize(self, _close, self._fd)

    def read(self, offset: int, length: int) -> bytes | bytearray:
        try:
            if not self._fd:
                self._fd.append(os.open(self.path, os.O_RDONLY))
            status = os.fstat(self._fd[0])
            if FileIdentity.of(status) != self.stamp:
                raise FileChanged(self.path, "", "the file changed on disk since it was loaded: reopen it")
            return read_fully(self._fd[0], offset, length)
        except OSError as error:
            raise FileChanged(self.path, "", f"cannot read the file again: {error.strerror or error}") from None

    def item(self, key: int, index: int) -> bytes | bytearray:
        """The raw JSON of item `index` of the array at span `key`. The first look at an array reads it whole
        once to find where its items lie; each item is then read alone."""
        return self.read(*self.item_span(key, index))

    def item_span(self, key: int, index: int) -> tuple[int, int]:
        """Where item `index` of the array at span `key` lies in the file: (offset, length)."""
        found = self._items.get(key)
        if found is None:
            offset, length = self.spans[key]
            array = self.read(offset, length)
            items = _raw_items.decode(array)
            lengths = np.fromiter(map(len, items), np.int64, len(items))
            found = self._items[key] = (_item_starts(array, lengths) + offset, lengths)
        starts, lengths = found
        return int(starts[index]), int(lengths[index])


_BETWEEN = frozenset(b" \t\r\n,")  # what may lie between two items of a JSON array


def _item_starts(array: bytes | bytearray, lengths: np.ndarray) -> np.ndarray:
    """Where each item of a JSON array starts, from the items' lengths: each follows the previous one after
    whitespace and a comma."""
    starts = np.empty(lengths.size, dtype=np.int64)
    at = array.index(b"[") + 1
    for k, length in enumerate(lengths.tolist()):
        while array[at] in _BETWEEN:
            at += 1
        starts[k] = at
        at += length
    return starts


_ONE_READ = 1 << 30  # the most asked of one read: below Linux's cap of 2,147,479,552 bytes per call


def read_fully(fd: int, offset: int, length: int) -> bytes | bytearray:
    """`length` bytes from `offset`, in as many reads as it takes: one `pread` returns at most 2,147,479,552 bytes
    on Linux (and may return fewer on a signal), so a big span read in one call came back cut. Fewer bytes only
    at the end of the file. A big span is filled in place (a bytearray): no second copy of its size."""
    if length <= _ONE_READ:
        first = os.pread(fd, length, offset)
        if len(first) == length or not first:
            return first
        return first + read_fully(fd, offset + len(first), length - len(first))
    whole = bytearray(length)
    got = 0
    with memoryview(whole) as view:
        while got < length:
            read = os.preadv(fd, [view[got : got + _ONE_READ]], offset + got)
            if read <= 0:
                break
            got += read
    if got < length:
        del whole[got:]
    return whole


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
    fds.clear()


def span_of(part: msgspec.Raw, whole: bytes | bytearray) -> tuple[int, int]:
    """Where `part` (a Raw decoded from `whole`, so pointing into it) lies in `whole`: (offset, length)."""
    start = np.frombuffer(part, np.uint8).ctypes.data - np.frombuffer(whole, np.uint8).ctypes.data
    if not 0 <= start <= len(whole) - len(part):
        raise ValueError("the Raw does not point into the buffer it was decoded from")
    return int(start), len(part)
