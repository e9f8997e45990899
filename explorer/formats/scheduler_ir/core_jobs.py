"""Cores decoded into `CorePart`s: here, a core at a time, or by worker processes as soon as each core's span
is known (`CoreJobs`), gathered in core order so the schedule is the one a single process gives."""

from __future__ import annotations

import concurrent.futures
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from explorer import worker_pool
from explorer.file_spans import FileIdentity, FileSpans
from explorer.formats.scheduler_ir.checks import SnapshotFacts, core_snapshot_facts
from explorer.formats.scheduler_ir.columns import CorePart, ScheduleBuilder, ptr_of
from explorer.formats.scheduler_ir.lenient import DecodeContext, decode_buffers, decode_workloads
from explorer.formats.scheduler_ir.load_progress import DECODE_SHARE, ByteMeter, CoreProgress
from explorer.formats.scheduler_ir.memory_budget import ObjectBudget, ensure_core_fits
from explorer.gc_pause import collector_paused
from explorer.schedule.buffers import CoreL2, core_l2


def parts_here(
    path: Path,
    cores: list[tuple[str, Any]],
    meter: ByteMeter,
    *,
    strict: bool,
    guessed: bool = False,
    buffersize: int | None = None,
    count_objects: int = 0,
) -> list[CorePart]:
    """Each core (key, raw array) decoded in this process, the bar moving by the bytes decoded, not by core."""
    total = sum(len(raw) for _, raw in cores) or 1
    parts, done = [], 0
    for key, raw in cores:
        bar = CoreProgress(meter, f"core {key}", done, len(raw), total)
        parts.append(decode_core_part(path, key, raw, strict=strict, bar=bar, guessed=guessed, buffersize=buffersize,
                                      count_objects=count_objects))  # fmt: skip
        done += len(raw)
        bar.entries(1, 1)
    return parts


def decode_core_part(
    path: Path,
    key: str,
    raw: bytes | bytearray | msgspec.Raw,
    *,
    strict: bool,
    bar: CoreProgress | None = None,
    guessed: bool = False,
    buffersize: int | None = None,
    count_objects: int = 0,
) -> CorePart:
    """One core's array, typed, into columns; its problems carry JSON paths within the whole file. A `guessed`
    span (`layout`) that is not one JSON array raises SpanGuessWrong instead of being a problem of the file.
    The core's snapshot checks' findings are worked out here too, and given the file's `buffersize` (or a guess
    of it) its L2 entries are placed and swept for overlaps: in a worker, beside the other cores' decode, so
    the analysis after the last core only joins them (on the 519 MB benchmark file the parent's L2 placement
    went from 0.2 s to 0.035 s; the wall time gained is small, as the workers are the busier side).
    `count_objects` (how many cores are decoded at once, 0: not counted) counts the core's JSON objects first and
    refuses a core that would not fit (`ensure_core_fits`)."""
    objects = ensure_core_fits(path, key, raw, count_objects) if count_objects else None
    context = DecodeContext(path, b"", strict=strict)
    context.span_guessed = guessed
    kept = decode_workloads(context, key, raw, bar.workloads if bar else _ignore)
    entries = decode_buffers(context, key, kept, bar.entries if bar else _ignore)
    local = ScheduleBuilder()
    local.add_core(int(key), kept, entries)
    columns = local.parts[0] if local.parts else None
    l2 = None if columns is None or buffersize is None else _core_l2(columns, buffersize)
    snapshots = None if columns is None else _core_snapshots(columns)
    return CorePart(
        int(key), columns, list(local.layers), context.problems, local.saw_wl0, local.saw_wl1, l2, snapshots, objects
    )


def _core_snapshots(columns: dict[str, Any]) -> SnapshotFacts:
    return core_snapshot_facts(
        ptr_of(columns["buf_counts"]), columns["buf_tensor"], columns["buf_addr"], columns["buf_size"],
        columns["buf_new"],
    )  # fmt: skip


def _core_l2(columns: dict[str, Any], buffersize: int) -> CoreL2:
    return core_l2(
        ptr_of(columns["buf_counts"]), columns["buf_addr"], columns["buf_size"], columns["buf_tensor"],
        ptr_of(columns["ring_counts"]), columns["ring_lo"], columns["ring_hi"], buffersize,
    )  # fmt: skip


def _ignore(*_args: Any) -> None:
    return None


@dataclass(frozen=True, slots=True)
class CoreJob:
    """One core for a worker to decode: where it lies in which file, and how (plain values: it crosses a pipe)."""

    path: str
    stamp: FileIdentity
    key: str
    span: tuple[int, int]
    guessed: bool = False  # the span is `layout`'s guess: a core that is not one array refutes it
    buffersize: int | None = None  # the file's, or a guess: its L2 entries are placed for it
    count_objects: int = 0  # how many cores are decoded at once (0: its objects are not counted)


def decode_core_at(job: CoreJob) -> CorePart:
    """What a worker does for one core: read its array from the file (refused if the file changed since the
    load began) and decode it. Module-level, so a worker process finds it by name."""
    raw = FileSpans(Path(job.path), {}, job.stamp).read(*job.span)
    with collector_paused():
        return decode_core_part(Path(job.path), job.key, raw, strict=False, guessed=job.guessed,
                                buffersize=job.buffersize, count_objects=job.count_objects)  # fmt: skip


class CoreJobs:
    """Cores handed to worker processes as their spans become known, then gathered in core order. A core is
    handed on when the next one is known, so that a file of one core is decoded here instead, its bar moving
    within it. The file's first core is taken from the preview's decode (`previewed`, a Future that may still
    be running) when that is the same bytes, not decoded again. A core whose worker died is decoded here.
    With a `budget`, each core's objects are counted where it is decoded and added up as the parts come in."""

    def __init__(
        self,
        pool: worker_pool.WorkerPool,
        path: Path,
        stamp: FileIdentity,
        previewed: concurrent.futures.Future | None,
        *,
        guessed: bool,
        buffersize: int | None = None,
        budget: ObjectBudget | None = None,
    ) -> None:
        self.pool = pool
        self.budget = budget
        self.buffersize = buffersize  # the file's, or the guess from its last bytes: the build checks it
        self.path = path
        self.stamp = stamp
        self.guessed = guessed  # the spans are `layout`'s guesses: a core that is not one array refutes them
        self.previewed = previewed
        self.spans: dict[int, tuple[int, int]] = {}
        self.futures: dict[concurrent.futures.Future, int] = {}
        self.parts: dict[int, CorePart] = {}
        self.waiting: int | None = None  # the last core found, not handed on yet
        self.deferred: tuple[int, concurrent.futures.Future] | None = None  # the first core, the preview running

    def add(self, core: int, span: tuple[int, int]) -> None:
        self.spans[core] = span
        if self.waiting is not None:
            self._hand_on(self.waiting)
        self.waiting = core

    def _hand_on(self, core: int) -> None:
        previewed, self.previewed = self.previewed, None  # the preview's core can only be the first handed on
        if previewed is not None and not previewed.done():
            self.deferred = (core, previewed)  # the other cores go on meanwhile
            return
        if previewed is None or not self._take_previewed(core, previewed):
            self._submit(core)

    def _take_previewed(self, core: int, previewed: concurrent.futures.Future) -> bool:
        """Whether the preview's decode is this core at these bytes (then its part is taken; waits for it)."""
        try:
            found = previewed.result()
        except Exception:  # the preview's job failed (its worker died): the core is decoded as any other
            return False
        first = None if found is None or found.prefix is not None else found.first  # a prefix is not the core
        if first is None or (first.stamp, found.part.core, (first.offset, first.length)) != (
            self.stamp, core, self.spans[core]
        ):  # fmt: skip
            return False
        columns = found.part.columns
        self._took(core, dataclasses.replace(found.part, columns=None if columns is None else dict(columns)))
        return True  # a copy of its columns: the preview's schedule keeps its own

    def _submit(self, core: int) -> None:
        self.futures[self.pool.submit(decode_core_at, self._job(core))] = core

    def _job(self, core: int) -> CoreJob:
        """A core's job, for a worker or (its worker died) here."""
        at_once = max(self.pool.count, 1) if self.budget is not None else 0
        return CoreJob(str(self.path), self.stamp, str(core), self.spans[core], self.guessed, self.buffersize, at_once)

    def _took(self, core: int, part: CorePart) -> None:
        self.parts[core] = part
        if self.budget is not None:
            self.budget.add(part.objects, self.spans[core][1])

    def collect(self, meter: ByteMeter) -> list[CorePart]:
        """Every core's part, in core order; the bar moves by the bytes of the cores done."""
        total = sum(length for _, length in self.spans.values()) or 1
        last, self.waiting = self.waiting, None
        # cores are handed on only once a second one is found: with one core, nothing has gone to a worker yet
        if last is not None and (len(self.spans) > 1 or self.previewed is not None):
            self._hand_on(last)
        elif last is not None:  # the file's only core, and no preview of it
            raw = FileSpans(self.path, {}, self.stamp).read(*self.spans[last])
            counted = 1 if self.budget is not None else 0
            found = parts_here(self.path, [(str(last), raw)], meter, strict=False, guessed=self.guessed,
                               buffersize=self.buffersize, count_objects=counted)  # fmt: skip
            self._took(last, found[0])
        if self.deferred is not None:
            core, previewed = self.deferred
            self.deferred = None
            if not self._take_previewed(core, previewed):
                self._submit(core)
        done = sum(self.spans[core][1] for core in self.parts)
        for future in concurrent.futures.as_completed(self.futures):
            core = self.futures[future]
            try:
                self._took(core, future.result())
            except worker_pool.WorkerDied:
                self._took(core, decode_core_at(self._job(core)))
            done += self.spans[core][1]
            meter.stage(f"core {core}", DECODE_SHARE, done, total)
        return [self.parts[core] for core in sorted(self.parts)]

    def cancel(self) -> None:
        """The cores still queued are not decoded (the load stopped early, or the spans were wrong)."""
        for future in self.futures:
            future.cancel()
