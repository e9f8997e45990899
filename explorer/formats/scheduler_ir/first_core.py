"""The first core of a big schedule read from the head of the file and decoded into columns: the preview's
data, made in a worker process when `early.prepare` started one (see `preview`).

Where the first core's array lies is found as the full load finds every core (`layout`): from the keys in the
file's bytes, without parsing what comes before or after it. If that guess is wrong, its bytes are not one JSON
array (the brackets would not balance), the typed decode fails, and there is no preview.

A big first core's first workloads alone (`prefix_bytes`) are a screenful read and decoded in a small part of the
time: a 177 MB core takes 2.3 s to decode, its first 4 MiB 0.05 s, so the TUI draws a timeline that much sooner and
replaces it with the whole core when that is decoded. Only the core's head is read (twice the bytes shown), and
it is cut after the last workload that ends past `prefix_bytes`: found by bracket depth, checked by decoding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from explorer.errors import LoadError
from explorer.file_spans import FileIdentity, FileSpans
from explorer.formats.scheduler_ir import layout
from explorer.formats.scheduler_ir.columns import CorePart, ScheduleBuilder
from explorer.formats.scheduler_ir.core_jobs import decode_core_part
from explorer.formats.scheduler_ir.lenient import raw_items
from explorer.formats.scheduler_ir.schema import TOP_SCALARS
from explorer.formats.scheduler_ir.started import PREVIEW_MIN_BYTES
from explorer.gc_pause import collector_paused
from explorer.models.schedule import Schedule


@dataclass
class FirstCore:
    """The first core's array as it lies in the file, and the file's top-level numbers found at its end."""

    key: str
    raw: bytes | bytearray
    offset: int  # where the array starts in the file
    length: int
    scalars: dict[str, int]
    stamp: FileIdentity  # the file's (size, mtime_ns) when read


def read_first_core(
    path: Path, min_bytes: int | None = None, head: int | None = None, above: int = 0
) -> FirstCore | None:
    """The first core's array in the file (core "0" as files are written), for a big file (`min_bytes` or more:
    PREVIEW_MIN_BYTES unless said); None when the file is smaller or laid out otherwise. With `head`, a core
    longer than `above` bytes is read only that far (`raw` is then its first bytes)."""
    try:
        status = path.stat()
        if status.st_size < (PREVIEW_MIN_BYTES if min_bytes is None else min_bytes):
            return None
        stamp = FileIdentity.of(status)
        spans = layout.find_core_spans(path, stamp, limit=1)
        if not spans:
            return None
        ((core, (offset, length)),) = spans.items()
        file = FileSpans(path, {}, stamp)  # read-only; refuses a file changed since it was looked through
        tail = file.read(max(stamp.size - layout.TAIL, 0), layout.TAIL)
        read = length if head is None or length <= above else min(length, head)
        return FirstCore(str(core), file.read(offset, read), offset, length, _scalars(tail), stamp)
    except (OSError, LoadError):
        return None  # the full load reports it


def _scalars(tail: bytes | bytearray) -> dict[str, int]:
    return {**TOP_SCALARS, **layout.tail_scalars(tail)}


@dataclass
class FirstCorePart:
    """The first core decoded into columns, and where it lies: what a worker sends back for the preview."""

    first: FirstCore  # its `raw` emptied: the bytes stay in the worker
    part: CorePart
    prefix: int | None = None  # the part is the core's first `prefix` workloads only (None: the whole core)
    prefix_bytes: int = 0  # the bytes of the core those take

    def describe(self) -> str:
        """What the part is, for the summary bar: 'core 0 of a 3,128 MB file', or 'core 0: first 1,450 workloads,
        4 of its 177 MB (a 372 MB file)' (the count first: a bar 80 columns wide keeps it)."""
        size = f"a {self.first.stamp.size / 1e6:,.0f} MB file"
        if self.prefix is None:
            return f"core {self.first.key} of {size}"
        return (f"core {self.first.key}: first {self.prefix:,} workloads, {self.prefix_bytes / 1e6:,.0f} of its "
                f"{self.first.length / 1e6:,.0f} MB ({size})")  # fmt: skip


def first_core_part(
    path: Path, min_bytes: int | None = None, prefix_bytes: int | None = None, cut_above: int = 0
) -> FirstCorePart | None:
    """The first core read from the head of a big file and decoded; None when there is no preview: a small or
    unusual file, or a first core with a workload that does not decode (the full load reports it). With
    `prefix_bytes`, a core of more than `cut_above` bytes gives only its first workloads, about that many bytes."""
    first = read_first_core(path, min_bytes, HEAD_READ * prefix_bytes if prefix_bytes is not None else None, cut_above)
    if first is None:
        return None
    with collector_paused():
        cut = None
        while prefix_bytes is not None and first.length > cut_above:
            cut = _first_workloads(first, prefix_bytes)
            if cut is not None or len(first.raw) == first.length:
                break  # (a cut that does not decode is looked for again in more bytes, at worst the whole core)
            more = min(first.length, 2 * len(first.raw))  # no workload ends in the head: twice as much
            try:
                first.raw = FileSpans(path, {}, first.stamp).read(first.offset, more)
            except LoadError:  # changed on disk since: no preview (the full load says so)
                return None
        raw, prefix, shown = cut or (first.raw, None, 0)
        buffersize = first.scalars["buffersize"]  # from the file's last bytes: the full load checks it
        # counted (one core at a time here): the load adds its objects up as it would the workers' cores
        part = decode_core_part(path, first.key, raw, strict=False, buffersize=buffersize, count_objects=1)
    if part.columns is None or any(problem.code == "bad-workload" for problem in part.problems):
        return None  # a workload dropped: not shown as if it were the core (bad list entries are only dropped)
    first.raw = b""
    return FirstCorePart(first, part, prefix, shown)


HEAD_READ = 2  # a big core's head read for its first workloads: this many times the bytes to show
DEPTH_CHUNK = 4 << 20  # the bracket depth is counted this many bytes at a time (over a whole 120 MB core at once,
# its arrays took 1.4 GB)


def _workload_end(raw: bytes | bytearray, prefix_bytes: int) -> int | None:
    """One past the `}` that ends the first workload ending at or past `prefix_bytes` (the last one the bytes hold
    if none does), or None when no workload ends in them: counted a chunk at a time, stopping at the first."""
    depth, last = 0, None
    for start in range(0, len(raw), DEPTH_CHUNK):
        chunk = np.frombuffer(raw, np.uint8, min(DEPTH_CHUNK, len(raw) - start), start)
        closes = (chunk == ord("]")) | (chunk == ord("}"))
        level = np.cumsum((chunk == ord("[")) | (chunk == ord("{")), dtype=np.int32)
        level -= np.cumsum(closes, dtype=np.int32)
        level += depth
        ends = np.flatnonzero((chunk == ord("}")) & (level == 1)) + start
        depth = int(level[-1])
        del chunk, closes, level
        if ends.size:
            at = int(np.searchsorted(ends, prefix_bytes - 1))
            if at < ends.size:
                return int(ends[at]) + 1
            last = int(ends[-1]) + 1
    return last


def _first_workloads(first: FirstCore, prefix_bytes: int) -> tuple[bytes, int, int] | None:
    """The core's first workloads, through the first one that ends at or past `prefix_bytes` (at least one), as
    an array of their own: (the array, how many, the bytes of the core they take). None when the head read
    holds no such cut (or all of the core): the workloads' ends are the `}` that bring the bracket depth back
    to the core array's, and a bracket inside a string that misleads the count leaves a cut that does not
    decode, which is refused. The workloads keep their positions: the cut array's item k is the core's."""
    end = _workload_end(first.raw, prefix_bytes)
    if end is None:
        return None
    if len(first.raw) == first.length and not first.raw[end:].strip(b" \t\r\n,]"):
        return None  # the cut would be the whole core
    array = bytes(first.raw[:end]) + b"]"
    try:
        items = raw_items(array)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return None
    if not items or any(bytes(memoryview(item)[:1]) != b"{" for item in items):
        return None
    return array, len(items), end


def first_core_schedule(found: FirstCorePart, path: Path) -> Schedule:
    """The first core alone as a Schedule (no DRAM section: its transfers come with the full load)."""
    builder = ScheduleBuilder()
    columns = found.part.columns  # the part stays as decoded: the builder gets a copy
    builder.add_part(dataclasses.replace(found.part, columns=dict(columns) if columns is not None else None))
    spans = FileSpans(path, {found.part.core: (found.first.offset, found.first.length)}, found.first.stamp)
    return builder.build(found.first.scalars, spans)
