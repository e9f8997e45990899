"""The first core of a big schedule read from the head of the file and decoded into columns: the preview's
data, made in a worker process when `early.prepare` started one (see `preview`).

Where the first core's array lies is found as the full load finds every core (`layout`): from the keys in the
file's bytes, without parsing what comes before or after it. If that guess is wrong, its bytes are not one JSON
array (the brackets would not balance), the typed decode fails, and there is no preview.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from explorer.errors import LoadError
from explorer.file_spans import FileSpans
from explorer.formats.scheduler_ir import layout, reader
from explorer.formats.scheduler_ir.started import PREVIEW_MIN_BYTES
from explorer.schedule.model import Schedule


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
    """The first core's array in the file (core "0" as files are written), for a big file (`min_bytes` or more:
    PREVIEW_MIN_BYTES unless said); None when the file is smaller or laid out otherwise."""
    try:
        status = path.stat()
        if status.st_size < (PREVIEW_MIN_BYTES if min_bytes is None else min_bytes):
            return None
        stamp = (status.st_size, status.st_mtime_ns)
        spans = layout.find_core_spans(path, stamp, limit=1)
        if not spans:
            return None
        ((core, (offset, length)),) = spans.items()
        file = FileSpans(path, {}, stamp)  # read-only; refuses a file changed since it was looked through
        tail = file.read(max(stamp[0] - layout.TAIL, 0), layout.TAIL)
        return FirstCore(str(core), file.read(offset, length), offset, length, _scalars(tail), stamp)
    except (OSError, LoadError):
        return None  # the full load reports it


def _scalars(tail: bytes) -> dict[str, int]:
    return {**reader.TOP_SCALARS, **layout.tail_scalars(tail)}


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
        buffersize = first.scalars["buffersize"]  # from the file's last bytes: the full load checks it
        # counted (one core at a time here): the load adds its objects up as it would the workers' cores
        part = reader.decode_core_part(path, first.key, first.raw, False, buffersize=buffersize, count_objects=1)
    if part.columns is None or any(problem.code == "bad-workload" for problem in part.problems):
        return None  # a workload dropped: not shown as if it were the core (bad list entries are only dropped)
    first.raw = b""
    return FirstCorePart(first, part)


def first_core_schedule(found: FirstCorePart, path: Path) -> Schedule:
    """The first core alone as a Schedule (no DRAM section: its transfers come with the full load)."""
    builder = reader.ScheduleBuilder()
    builder.add_part(dataclasses.replace(found.part, columns=dict(found.part.columns)))  # the part stays as decoded
    spans = FileSpans(path, {found.part.core: (found.first.offset, found.first.length)}, found.first.stamp)
    return builder.build(found.first.scalars, spans)
