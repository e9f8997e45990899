"""Loader for the multi-core Gemini scheduler IR (`*_stschedule.json`).

Speed: each workload is decoded with typed msgspec Structs that name only the fields the analyses use
(unknown and unused keys such as ``tile_info`` are skipped by the decoder, never materialised); its L2
entries in a second step, so they lie together in memory. A core at a time is then flattened into the
columns of `explorer.models.schedule.Schedule` with C-level passes (`map` over attribute getters into
`np.fromiter`): at 10^6 entries, each Python-level step per entry costs about a second. The details panel reads
a workload's bytes again from the file (`FileSpans`) to decode everything on demand.

Processes: a file of `started.parallel_min_bytes()` or more is decoded by worker processes
(`explorer.worker_pool`): each core is read from the file and decoded by whichever worker is free, as soon as
`layout` has found where it lies
(or, when that guess fails, after a worker has parsed the top level). The cores' `CorePart`s are added in core
order, so the schedule and its problems are the ones a single process gives.

Leniency: a workload that fails typed decoding is re-decoded generically; its invalid list entries
(buffer, wl0/wl1, ifmap, ofmap) are dropped one by one and the rest kept. Every drop is an error `Problem`
with its JSON path. Only unreadable JSON or a top level that is not an object is a `LoadError`.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from explorer import jsonpath, worker_pool
from explorer.document import Document, ProgressCallback, no_progress
from explorer.errors import CappedProblems, LoadError, Problem
from explorer.file_spans import FileChanged, FileIdentity, FileSpans, span_of
from explorer.formats.scheduler_ir import layout, started
from explorer.formats.scheduler_ir.columns import CorePart, ScheduleBuilder
from explorer.formats.scheduler_ir.core_jobs import CoreJobs, parts_here
from explorer.formats.scheduler_ir.lenient import DecodeContext, decode_dram, decode_top, read_scalars, strict_key_check
from explorer.formats.scheduler_ir.load_progress import BUILD_SHARE, READ_SHARE, ByteMeter, read_all
from explorer.formats.scheduler_ir.memory_budget import MEMORY_PER_FILE_BYTE, ensure_objects_fit, object_budget
from explorer.formats.scheduler_ir.schema import TOP_SCALARS
from explorer.formats.scheduler_ir.started import parallel_min_bytes
from explorer.gc_pause import collector_paused
from explorer.jsonpath import duplicate_problems
from explorer.memory_guard import ensure_fits
from explorer.models.schedule import Schedule


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.scheduler_ir.document import (
        build_document,  # not at the top: the registry imports every loader
    )

    schedule, problems = load_schedule(path, progress=progress, strict=strict)
    return build_document(Path(path), schedule, problems)


def load_schedule(
    path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False
) -> tuple[Schedule, list[Problem]]:
    with collector_paused():
        return _load_schedule(Path(path), progress or no_progress, strict)


def _load_schedule(path: Path, progress: ProgressCallback, strict: bool) -> tuple[Schedule, list[Problem]]:
    meter = ByteMeter(progress)
    try:
        status = path.stat()
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    ensure_fits(path, status.st_size, MEMORY_PER_FILE_BYTE, "scheduler IR")
    pool = None if strict or status.st_size < parallel_min_bytes() else worker_pool.shared_pool()
    try:
        loaded = _load_in_workers(pool, path, FileIdentity.of(status), meter) if pool else None
    except FileChanged:  # a worker found the file other than it was when the load began
        raise LoadError(path, "", "the file changed on disk while it was being loaded: open it again") from None
    builder, scalars, context = loaded or _load_here(path, strict, meter)
    meter.stage("building columns", BUILD_SHARE, 0, 1)
    if builder.saw_wl0 and builder.saw_wl1:
        context.warning("wl-buffer-names", "$", "both wl0_buffer and wl1_buffer appear in this file")
    core_raw = FileSpans(path, builder.spans, context.stamp)
    schedule = builder.build(scalars, core_raw)
    progress(1, 1, "done")
    return schedule, context.problems


_Loaded = tuple["ScheduleBuilder", dict[str, int], "DecodeContext"]


def _load_here(path: Path, strict: bool, meter: ByteMeter) -> _Loaded:
    """The whole file read into memory and decoded in this process, a core at a time."""
    try:
        with path.open("rb") as handle:  # read-only, whole file: msgspec decodes from one buffer
            status = os.fstat(handle.fileno())
            ensure_objects_fit(path, status.st_size, FileIdentity.of(status))
            data = read_all(handle, status.st_size, meter)
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    context = DecodeContext(path, data, strict=strict, stamp=FileIdentity.of(status))
    del data
    top_level, top = _top_level(context)
    builder = _builder(context, top_level, bytes(top["-1"]) if "-1" in top else None)
    cores = [(key, top[key]) for _, key in top_level.core_keys]
    parts = parts_here(path, cores, meter, strict=strict, buffersize=top_level.scalars["buffersize"])
    _add_parts(builder, context, parts)
    if strict:
        strict_key_check(context, top)
    # The file's bytes are freed here, before the columns are joined and analysed: the details panel reads a
    # workload again from the file when it is looked at (FileSpans), which halves what a big file keeps.
    context.data = b""
    return builder, top_level.scalars, context


def _load_in_workers(
    pool: worker_pool.WorkerPool, path: Path, stamp: FileIdentity, meter: ByteMeter
) -> _Loaded | None:
    """A big file decoded by worker processes; this process never holds the file's bytes. The cores' spans are
    guessed from the bytes (`layout`) and each core goes to a worker as soon as its span is known, while the
    rest of the file is still being looked through; the top level is then read from the bytes between the
    cores. When the guess does not hold, a worker parses the top level and the cores are shared out after it.
    A one-core file's core is decoded here, so its bar moves within the core. None when a worker died before
    the cores: the caller loads here."""
    meter.stage("reading", READ_SHARE, 0, 1)
    previewed = started.take_first_core(path)
    looked_for = started.take_spans(path, stamp)  # by a worker since the TUI named the file
    jobs = CoreJobs(pool, path, stamp, previewed, guessed=True, buffersize=_buffersize_guess(path, stamp),
                    budget=object_budget(path, stamp.size))  # fmt: skip
    try:
        if looked_for is not None or (previewed is not None and not previewed.done()):  # not here: the TUI draws
            spans = _spans_in_worker(pool, path, stamp, looked_for)
            for core, span in (spans or {}).items():
                jobs.add(core, span)
        else:
            scanned = functools.partial(meter.stage, "reading", READ_SHARE, total=stamp.size)
            spans = layout.find_core_spans(path, stamp, jobs.add, scanned)
        found = None if spans is None else _top_level_around(path, stamp, spans)
        if found is not None:
            top_level, dram_raw = found
            context = DecodeContext(path, b"", strict=False, stamp=stamp)
            context.problems = top_level.problems
            builder = _builder(context, top_level, dram_raw)
            _add_parts(builder, context, jobs.collect(meter))
            return builder, top_level.scalars, context
    except layout.SpanGuessWrong:
        pass
    finally:
        jobs.cancel()
    return _load_after_top_level(pool, path, stamp, meter, previewed)


def _buffersize_guess(path: Path, stamp: FileIdentity) -> int | None:
    """The buffer size as the file's last bytes give it (where json.dumps and our writer put it), for the
    workers' L2 steps before the top level is read; the build checks it against the top level's."""
    try:
        tail = FileSpans(path, {}, stamp).read(max(stamp.size - layout.TAIL, 0), min(stamp.size, layout.TAIL))
    except (OSError, FileChanged):
        return None
    return {**TOP_SCALARS, **layout.tail_scalars(tail)}["buffersize"]


def _spans_in_worker(
    pool: worker_pool.WorkerPool,
    path: Path,
    stamp: FileIdentity,
    looked_for: concurrent.futures.Future | None = None,
) -> dict[int, tuple[int, int]] | None:
    """The cores' spans found by a worker (`looked_for`: the search `early.prepare` started): the TUI's process
    keeps the interpreter for drawing the preview (a search here holds it in long steps), and the worker that
    is not decoding the preview is free."""
    try:
        return (looked_for or pool.submit(layout.core_spans_at, str(path), stamp)).result()
    except worker_pool.WorkerDied:
        return None


def _load_after_top_level(
    pool: worker_pool.WorkerPool, path: Path, stamp: FileIdentity, meter: ByteMeter, previewed: Any
) -> _Loaded | None:
    """The cores found by parsing the whole top level in a worker, then decoded by workers, biggest first."""
    meter.stage("reading", READ_SHARE, 0, 1)
    try:
        top_level = pool.submit(read_top_level, str(path), stamp).result()
    except worker_pool.WorkerDied:
        return None
    meter.stage("reading", READ_SHARE, 1, 1)
    context = DecodeContext(path, b"", strict=False, stamp=stamp)
    context.problems = top_level.problems
    spans = FileSpans(path, {}, stamp)
    builder = _builder(context, top_level, None if top_level.dram_span is None else spans.read(*top_level.dram_span))
    budget = object_budget(path, stamp.size)
    buffersize = top_level.scalars["buffersize"]
    jobs = CoreJobs(pool, path, stamp, previewed, guessed=False, buffersize=buffersize, budget=budget)
    try:
        for core in sorted(builder.spans, key=lambda core: -builder.spans[core][1]):
            jobs.add(core, builder.spans[core])
        _add_parts(builder, context, jobs.collect(meter))
    finally:
        jobs.cancel()
    return builder, top_level.scalars, context


@dataclass(slots=True)
class TopLevel:
    """What the file holds outside its cores, and where each core's array and the DRAM section lie: one pass
    over the whole file finds it (in a worker process for a big file, so it crosses a pipe: plain values only;
    the DRAM section is decoded where it is used, from its bytes)."""

    scalars: dict[str, int]
    core_keys: list[tuple[int, str]]
    spans: dict[int, tuple[int, int]]
    dram_span: tuple[int, int] | None
    problems: CappedProblems  # the top level's, carried on by the cores' context


def read_top_level(path: str, stamp: FileIdentity) -> TopLevel:
    """What a worker does first for a big file: read it whole (refused if it changed since the load began) and
    find its top level. Module-level, so a worker process finds it by name."""
    data = FileSpans(Path(path), {}, stamp).read(0, stamp.size)
    context = DecodeContext(Path(path), data, strict=False, stamp=stamp)
    with collector_paused():
        return _top_level(context)[0]


def _top_level(context: DecodeContext) -> tuple[TopLevel, dict[str, msgspec.Raw]]:
    """The top level and its numbers decoded, the cores' arrays and the DRAM section still raw."""
    if not context.data or context.data.isspace():  # (no strip(): that would copy a bytearray of the whole file)
        raise LoadError(context.path, "byte 0", "the file is empty")
    top = decode_top(context)
    _report_repeated_keys(context, top)
    scalars = read_scalars(context, top)
    core_keys = sorted((int(k), k) for k in top if k.isdigit())
    if not core_keys and "-1" not in top:
        raise LoadError(context.path, "$", 'expected a scheduler IR object with core arrays ("0", "1", ...) and "-1"')
    unknown = [k for k in top if not k.isdigit() and k not in TOP_SCALARS and k != "-1"]
    for k in unknown:
        report = context.error if context.strict else context.warning
        report("unknown-key", "$" + jsonpath.key(k), "unknown top-level key")
    spans = {core: span_of(top[key], context.data) for core, key in core_keys}
    dram_span = span_of(top["-1"], context.data) if "-1" in top else None
    return TopLevel(scalars, core_keys, spans, dram_span, context.problems), top


def _report_repeated_keys(context: DecodeContext, top: dict[str, msgspec.Raw]) -> None:
    """A top-level key given twice (a second core "0", a second "xlen") is an error: the decoder kept the last.

    Found without a second parse of the cores: each value the decoder kept is replaced by `0`, and what is
    left (the braces, the keys, and the values of any earlier copies) is read by a decoder that shows pairs.
    """
    pieces, at = [], 0
    for offset, length in sorted(span_of(raw, context.data) for raw in top.values()):
        pieces += [bytes(context.data[at:offset]), b"0"]
        at = offset + length
    pieces.append(bytes(context.data[at:]))
    for problem in duplicate_problems(b"".join(pieces), top_only=True):
        context.problems.add(problem)


def _top_level_around(
    path: Path, stamp: FileIdentity, spans: dict[int, tuple[int, int]]
) -> tuple[TopLevel, bytes | None] | None:
    """The top level read from the bytes outside the cores' guessed spans, each core's array replaced by `[]`,
    and the DRAM section's bytes; None unless those bytes are an object whose core keys hold exactly those `[]`
    (then, with each core one array, the file is the JSON a full parse would see)."""
    file = FileSpans(path, {}, stamp)
    pieces: list[bytes | bytearray] = []
    placed: dict[int, int] = {}  # core → where its `[]` is in the skeleton
    at = size = 0
    for core, (offset, length) in sorted(spans.items(), key=lambda item: item[1][0]):
        pieces.append(file.read(at, offset - at))
        size += len(pieces[-1])
        placed[core] = size
        pieces.append(b"[]")
        size += 2
        at = offset + length
    pieces.append(file.read(at, stamp.size - at))
    context = DecodeContext(path, b"".join(pieces), strict=False, stamp=stamp)
    try:
        top_level, top = _top_level(context)
    except LoadError:
        return None
    keys = {core: key for core, key in top_level.core_keys}
    if keys.keys() != spans.keys() or any(keys[core] != str(core) or top_level.spans[core] != (placed[core], 2)
                                          for core in spans):  # fmt: skip
        return None
    dram_span, dram_raw = None, None
    if top_level.dram_span is not None:
        offset, length = top_level.dram_span
        dram_raw = bytes(top["-1"])
        removed = sum(spans[core][1] - 2 for core, where in placed.items() if where < offset)
        dram_span = (offset + removed, length)
    top_level.spans, top_level.dram_span = dict(spans), dram_span
    return top_level, dram_raw


def _builder(context: DecodeContext, top_level: TopLevel, dram_raw: bytes | bytearray | None) -> ScheduleBuilder:
    """A builder that knows the cores' spans and holds the DRAM section, decoded (its problems after the top
    level's, as the file orders them)."""
    builder = ScheduleBuilder()
    builder.add_dram(*decode_dram(context, None if dram_raw is None else msgspec.Raw(dram_raw)))
    builder.dram_raw = dram_raw  # small: kept for its details
    builder.spans = top_level.spans
    return builder


def _add_parts(builder: ScheduleBuilder, context: DecodeContext, parts: list[CorePart]) -> None:
    for part in parts:  # in core order, as one pass over the file would find them
        builder.add_part(part)
        context.problems += part.problems
