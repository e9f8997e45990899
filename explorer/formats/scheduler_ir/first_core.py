"""The first core of a big schedule read from the head of the file and decoded into columns: the preview's
data, made in a worker process when `early.prepare` started one (see `preview`).

Where the first core's array lies is found as the full load finds every core (`layout`): from the keys in the
file's bytes, without parsing what comes before or after it. If that guess is wrong, its bytes are not one JSON
array (the brackets would not balance), the typed decode fails, and there is no preview.

A first core's first workloads alone (`prefix_bytes`) are a screenful decoded in a tenth of the time: on the 3 GB
schedule the whole first core (46 MB) takes 0.5 s to decode, its first 4 MiB 0.05 s, so the TUI draws a timeline
that much sooner and replaces it with the whole core when that is decoded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import msgspec

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
    workloads: int = 0  # the core's workloads in the file (the part may hold only the first ones)
    prefix: int | None = None  # the part is the core's first `prefix` workloads only (None: the whole core)

    def describe(self) -> str:
        """What the part is, for the summary bar: 'core 0 of a 3,128 MB file', or 'core 0: first 1,441 of 15,700
        workloads (a 3,128 MB file)' (the counts first: a bar 80 columns wide keeps them)."""
        size = f"a {self.first.stamp[0] / 1e6:,.0f} MB file"
        if self.prefix is None:
            return f"core {self.first.key} of {size}"
        return f"core {self.first.key}: first {self.prefix:,} of {self.workloads:,} workloads ({size})"


def first_core_part(path: Path, min_bytes: int | None = None, prefix_bytes: int | None = None) -> FirstCorePart | None:
    """The first core read from the head of a big file and decoded; None when there is no preview: a small or
    unusual file, or a first core with a workload that does not decode (the full load reports it). With
    `prefix_bytes`, only the core's first workloads, about that many bytes of them (all of a smaller core)."""
    first = read_first_core(path, min_bytes)
    if first is None:
        return None
    with reader.collector_paused():
        raw, prefix, workloads = _first_workloads(first.raw, prefix_bytes)
        buffersize = first.scalars["buffersize"]  # from the file's last bytes: the full load checks it
        # counted (one core at a time here): the load adds its objects up as it would the workers' cores
        part = reader.decode_core_part(path, first.key, raw, False, buffersize=buffersize, count_objects=1)
    if part.columns is None or any(problem.code == "bad-workload" for problem in part.problems):
        return None  # a workload dropped: not shown as if it were the core (bad list entries are only dropped)
    first.raw = b""
    return FirstCorePart(first, part, workloads or len(part.columns["wl_id"]), prefix)


def _first_workloads(raw: bytes, prefix_bytes: int | None) -> tuple[bytes, int | None, int | None]:
    """The core's array cut to its first workloads of about `prefix_bytes` (at least one), as an array of its
    own: (the array, how many it holds, how many the core has). The whole core, (raw, None, None), when it is no
    longer than that or is not an array (its decode then says so). The workloads keep their positions: the
    cut array's item k is the core's item k, so JSON paths and the details' reads are the whole core's."""
    if prefix_bytes is None or len(raw) <= prefix_bytes:
        return raw, None, None
    try:
        items = reader.raw_items(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return raw, None, None
    taken, size = 0, 0
    while taken < len(items) and (taken == 0 or size < prefix_bytes):
        size += len(items[taken])
        taken += 1
    if taken == len(items):
        return raw, None, None
    return b"[" + b",".join(items[:taken]) + b"]", taken, len(items)


def first_core_schedule(found: FirstCorePart, path: Path) -> Schedule:
    """The first core alone as a Schedule (no DRAM section: its transfers come with the full load)."""
    builder = reader.ScheduleBuilder()
    builder.add_part(dataclasses.replace(found.part, columns=dict(found.part.columns)))  # the part stays as decoded
    spans = FileSpans(path, {found.part.core: (found.first.offset, found.first.length)}, found.first.stamp)
    return builder.build(found.first.scalars, spans)
