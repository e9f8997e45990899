"""Byte ranges of a loaded file, read again from the file when asked for, so a loader need not keep the whole
file in memory for details that are looked at one at a time (a 519 MB schedule kept its 495 MiB of bytes only for
the details panel). Reads are checked against the file as it was loaded: a file changed on disk since is said to
be, never misread.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import numpy as np

from explorer.errors import LoadError

_raw_items = msgspec.json.Decoder(list[msgspec.Raw])


class FileChanged(LoadError):
    """The file is no longer what was loaded: its bytes cannot be read again."""


class FileSpans:
    """JSON arrays at known byte ranges of a file (key → (offset, length)), and their items on demand."""

    def __init__(self, path: Path, spans: dict[int, tuple[int, int]], stamp: tuple[int, int]) -> None:
        self.path = Path(path)
        self.spans = spans
        self.stamp = stamp  # (size, mtime_ns) when the file was loaded
        self._items: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # key → (item offsets, item lengths)

    def read(self, offset: int, length: int) -> bytes:
        try:
            with self.path.open("rb") as handle:  # read-only, opened for each read: nothing is held open
                status = os.fstat(handle.fileno())
                if (status.st_size, status.st_mtime_ns) != self.stamp:
                    raise FileChanged(self.path, "", "the file changed on disk since it was loaded: reopen it")
                return os.pread(handle.fileno(), length, offset)
        except OSError as error:
            raise FileChanged(self.path, "", f"cannot read the file again: {error.strerror or error}") from None

    def item(self, key: int, index: int) -> bytes:
        """The raw JSON of item `index` of the array at span `key`. The first look at an array reads it whole
        once to find where its items lie; each item is then read alone."""
        found = self._items.get(key)
        if found is None:
            offset, length = self.spans[key]
            array = self.read(offset, length)
            items = _raw_items.decode(array)
            base = np.frombuffer(array, np.uint8).ctypes.data
            starts = np.fromiter((np.frombuffer(item, np.uint8).ctypes.data for item in items), np.int64, len(items))
            lengths = np.fromiter(map(len, items), np.int64, len(items))
            found = self._items[key] = (starts - base + offset, lengths)
        starts, lengths = found
        return self.read(int(starts[index]), int(lengths[index]))


def span_of(part: msgspec.Raw, whole: bytes | bytearray) -> tuple[int, int]:
    """Where `part` (a Raw decoded from `whole`, so pointing into it) lies in `whole`: (offset, length)."""
    start = np.frombuffer(part, np.uint8).ctypes.data - np.frombuffer(whole, np.uint8).ctypes.data
    if not 0 <= start <= len(whole) - len(part):
        raise ValueError("the Raw does not point into the buffer it was decoded from")
    return int(start), len(part)
