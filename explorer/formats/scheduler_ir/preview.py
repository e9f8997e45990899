"""The first core of a big schedule, read from the head of the file, so the TUI can draw its timeline while the
whole file is still loading (issue #14: "draw what is decoded while the rest decodes"). The full load replaces it.

Where the first core's array ends is found without parsing what comes before or after it: at the first closing
bracket followed by the next top-level key (`], "1":`). If that guess is wrong, the bytes up to it are not one
JSON array (the brackets would not balance), the typed decode fails, and there is no preview. Files laid out
otherwise (no core "0" near the head, an unusual next key) get no preview either and load as before.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path

from explorer.document import Capability, Document
from explorer.errors import Problem
from explorer.file_spans import FileSpans
from explorer.formats.scheduler_ir import early, reader
from explorer.formats.scheduler_ir.early import PREVIEW_MIN_BYTES
from explorer.schedule import Schedule

HEAD_LIMIT = 256 << 20  # how far into the file the first core may end
CHUNK = 16 << 20
TAIL = 64 << 10  # the scalars ("buffersize", ...) are looked for in the file's last bytes

_FIRST_CORE = b'"0"'
_NEXT_KEYS = (b'"1"', b'"-1"', b'"buffersize"', b'"top_batch_cut"', b'"xlen"', b'"ylen"')
_KEY_OPENS = re.compile(rb"\s*:\s*\[")  # after the key "0": the core's array
_KEY_FOLLOWS = re.compile(rb"\s*:")
_BEFORE_KEY = re.compile(rb"[{,]\s*$")
_CLOSE_BEFORE_KEY = re.compile(rb"(\])\s*,\s*$")
_SCALAR = re.compile(rb'"(buffersize|top_batch_cut|xlen|ylen)"\s*:\s*(\d+)')


@dataclass
class FirstCore:
    """The first core's array as it lies in the file, and the file's top-level numbers found at its end."""

    key: str
    raw: bytes
    offset: int  # where the array starts in the file
    length: int
    scalars: dict[str, int]
    stamp: tuple[int, int]  # the file's (size, mtime_ns) when read


def read_first_core(path: Path, min_bytes: int | None = None) -> FirstCore | None:
    """Core "0"'s array, read from the head of a big file (`min_bytes` or more: PREVIEW_MIN_BYTES unless said);
    None when the file is smaller or laid out otherwise."""
    try:
        with path.open("rb") as handle:  # read-only
            status = os.fstat(handle.fileno())
            size = status.st_size
            if size < (PREVIEW_MIN_BYTES if min_bytes is None else min_bytes):
                return None
            head = bytearray()
            start = -1
            scanned: dict[bytes, int] = {}  # how far each next key was looked for: each chunk is searched once
            while len(head) < min(size, HEAD_LIMIT):
                chunk = handle.read(CHUNK)
                if not chunk:
                    break
                head += chunk
                if start < 0:
                    start = _array_start(head)
                if start >= 0:
                    raw = _array_at(head, start, scanned)
                    if raw is not None:
                        handle.seek(max(size - TAIL, 0))
                        stamp = (size, status.st_mtime_ns)
                        return FirstCore("0", raw, start, len(raw), _scalars(handle.read(TAIL)), stamp)
    except OSError:
        return None  # the full load reports it
    return None


def _array_start(head: bytearray) -> int:
    """Where core "0"'s `[` is: the key must follow `{` or `,` and be followed by `:` and `[`."""
    at = head.find(_FIRST_CORE)
    while at >= 0:
        opens = _KEY_OPENS.match(head, at + len(_FIRST_CORE))
        if opens and _BEFORE_KEY.search(head, max(at - 64, 0), at):
            return opens.end() - 1
        at = head.find(_FIRST_CORE, at + 1)
    return -1


def _array_at(head: bytearray, start: int, scanned: dict[bytes, int]) -> bytes | None:
    """The array opening at `start`, up to the first closing bracket that one of the next top-level keys follows
    within `head`. Not checked here: a wrong end fails the typed decode of the first core, and gives no preview.
    Each key is looked for only in what `scanned` says is new since the last call (a little before it, so a key
    cut between two reads is found)."""
    for key in _NEXT_KEYS:  # in the order they are likely to follow core "0"
        at = head.find(key, max(start, scanned.get(key, start) - len(key) - 64))
        scanned[key] = len(head)
        while at >= 0:
            closing = _CLOSE_BEFORE_KEY.search(head, max(at - 64, start), at)
            if closing and _KEY_FOLLOWS.match(head, at + len(key)):
                return bytes(head[start : closing.start(1) + 1])
            at = head.find(key, at + 1)
    return None


def _scalars(tail: bytes) -> dict[str, int]:
    values = dict(reader._TOP_SCALARS)
    for name, value in _SCALAR.findall(tail):
        values[name.decode()] = int(value)
    return values


@dataclass
class FirstCorePart:
    """The first core decoded into columns, and where it lies: what a worker sends back for the preview."""

    first: FirstCore  # its `raw` emptied: the bytes stay in the worker
    part: reader.CorePart


def first_core_part(path: Path, min_bytes: int | None = None) -> FirstCorePart | None:
    """The first core read from the head of a big file and decoded; None when there is no preview: a small or
    unusual file, or a first core with a workload that does not decode (the full load reports it)."""
    first = read_first_core(path, min_bytes)
    if first is None:
        return None
    with reader.collector_paused():
        part = reader._decode_core_part(path, first.key, first.raw, strict=False)
    if part.columns is None or any(problem.code == "bad-workload" for problem in part.problems):
        return None  # a workload dropped: not shown as if it were the core (bad list entries are only dropped)
    first.raw = b""
    return FirstCorePart(first, part)


def first_core_schedule(found: FirstCorePart, path: Path) -> Schedule:
    """The first core alone as a Schedule (no DRAM section: its transfers come with the full load)."""
    builder = reader._ScheduleBuilder()
    builder.add_part(dataclasses.replace(found.part, columns=dict(found.part.columns)))  # the part stays as decoded
    spans = FileSpans(path, {found.part.core: (found.first.offset, found.first.length)}, found.first.stamp)
    return builder.build(found.first.scalars, spans)


def preview(path: Path) -> Document | None:
    """A document of the first core, analysed, for the TUI to show while `load` reads the whole file; its problems
    are left for the full load (a core alone misses the producers on other cores). The first core is decoded by
    a worker process when `early.prepare` started one, else here."""
    from explorer.api import analyze_document
    from explorer.formats.scheduler_ir.document import build_document

    path = Path(path)
    started = early.take_preview(path)
    found = started.result() if started is not None else first_core_part(path)
    if found is None:
        return None
    early.keep_first_core(path, found)  # the full load takes this core instead of decoding it again
    document = build_document(path, first_core_schedule(found, path), [])
    document.partial = f"core {found.first.key} of a {found.first.stamp[0] / 1e6:,.0f} MB file"
    document.capabilities -= {Capability.GRAPH}  # built from every core's layers: waits for the whole file
    analyze_document(document)
    document.problems = [Problem("info", "preview", "the first core only: the rest of the file is loading")]
    return document
