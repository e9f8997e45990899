"""Loader for the multi-core Gemini scheduler IR (`*_stschedule.json`).

Speed: each workload is decoded with typed msgspec Structs that name only the fields the analyses use
(unknown and unused keys such as ``tile_info`` are skipped by the decoder, never materialised); its L2
entries in a second step, so they lie together in memory. A core at a time is then flattened into the
columns of `explorer.schedule.model.Schedule` with C-level passes (`map` over attribute getters into
`np.fromiter`): at 10^6 entries, each Python-level step per entry costs about a second. The details panel reads
a workload's bytes again from the file (`FileSpans`) to decode everything on demand.

Processes: a file of PARALLEL_MIN_BYTES or more is decoded by worker processes (`explorer.worker_pool`): each
core is read from the file and decoded by whichever worker is free, as soon as `layout` has found where it lies
(or, when that guess fails, after a worker has parsed the top level). The cores' `CorePart`s are added in core
order, so the schedule and its problems are the ones a single process gives.

Leniency: a workload that fails typed decoding is re-decoded generically; its invalid list entries
(buffer, wl0/wl1, ifmap, ofmap) are dropped one by one and the rest kept. Every drop is an error `Problem`
with its JSON path. Only unreadable JSON or a top level that is not an object is a `LoadError`.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import itertools
import mmap
import operator
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from explorer import jsonpath, memory_guard, worker_pool
from explorer.document import Document, ProgressCallback, no_progress
from explorer.errors import CappedProblems, LoadError, Problem
from explorer.file_spans import FileChanged, FileSpans, span_of
from explorer.formats.scheduler_ir import layout, started
from explorer.formats.scheduler_ir.checks import SNAPSHOT_COLUMNS, SnapshotFacts, core_snapshot_facts, joined_facts
from explorer.formats.scheduler_ir.codes import BUFFER_TYPES, DRAM_OUT_TYPES, LAYER_TYPES, WL_SOURCES
from explorer.formats.scheduler_ir.started import PARALLEL_MIN_BYTES
from explorer.gc_pause import collector_paused
from explorer.jsonpath import duplicate_problems
from explorer.memory_guard import BASE_BYTES, ensure_fits, guard_off, refusal
from explorer.schedule.buffers import L2_COLUMNS, CoreL2, core_l2, joined_l2
from explorer.schedule.model import Schedule

# Measured: a 519 MB schedule peaks at about 770 MiB in the TUI, 1.6 bytes a file byte, since the loader frees the
# file's bytes before the analyses (BENCHMARKS.md); the guard assumes a little more.
MEMORY_PER_FILE_BYTE = 1.75
# A file of empty objects costs more per byte than a real one: `{},` (3 bytes) decodes to a dict and its problem
# bookkeeping, about 80 bytes (1,000,000 empty workloads, 3 MB: 76 MiB more at peak; tests/unit/test_memory_estimates).
MEMORY_PER_OBJECT = 96
# An array's element: a workload of one list of 15 million transfer ids (139 MB) peaked at 1.4 GB in the TUI, about
# 97 bytes an element, none of them an object (tests/unit/test_memory_estimates.py holds the estimate to it).
MEMORY_PER_ELEMENT = 110
# The most a byte can become: `{},` is an object and an element every 3 bytes
WORST_PER_BYTE = (MEMORY_PER_OBJECT + MEMORY_PER_ELEMENT) / 3


def json_counts(data: Any) -> tuple[int, int]:
    """(objects, array elements) of JSON text, counted at C speed without decoding: every `{`, and the elements
    as the commas that separate no members, plus one for each array (bytes inside strings only make the counts
    larger)."""
    return _objects_and_elements(*_tally(data))


def _tally(data: Any) -> tuple[int, int, int, int]:
    return data.count(b"{"), data.count(b"["), data.count(b","), data.count(b":")


def _objects_and_elements(braces: int, brackets: int, commas: int, colons: int) -> tuple[int, int]:
    return braces, max(commas - colons + braces + brackets, 0)

# Values are stored in int64 columns: refuse what would not fit rather than overflow later.
Int = Annotated[int, msgspec.Meta(ge=-(2**62), le=2**62)]
NonNeg = Annotated[int, msgspec.Meta(ge=0, le=2**62)]
Number = Annotated[float, msgspec.Meta(ge=0, le=1e18)]
# Addresses and buffer sizes are added (an entry's end) and subtracted (spans, gaps): within ±2^61 every such
# result fits in int64, where 2^62 + 2^62 wrapped to a negative end with numpy's overflow warning.
Address = Annotated[int, msgspec.Meta(ge=-(2**61), le=2**61)]
Size = Annotated[int, msgspec.Meta(ge=0, le=2**61)]


class Destination(msgspec.Struct, gc=False):
    type: Literal["core", "DRAM"]
    core_id: Int | None = None
    workload_id: Int | None = None


class OfmapRef(msgspec.Struct, gc=False):
    transfer_id: Int
    destination: list[Destination] = []
    size: NonNeg = 0


class InputRef(msgspec.Struct, gc=False):
    transfer_id: list[Int]
    size: NonNeg = 0


class BufferEntry(msgspec.Struct, gc=False):
    tensor_id: Int
    type: Literal["ifmap", "weight", "ofmap"]
    address: Address
    size: Size
    newly_added: bool | None = None
    cur_wl_ifmap: bool = False


class WeightBufferEntry(msgspec.Struct, gc=False):
    address: Address
    size: Size
    source: Literal["DDR", "CORE", "DRAM"] = "DDR"
    transfer_id: list[Int] = []
    layer_name: str | None = None


class Workload(msgspec.Struct, gc=False):
    workload_id: Int
    layer_name: str
    layer_type: Literal["pe", "vp", "dt"]
    time: Number
    ifmap: list[InputRef]
    ofmap: list[OfmapRef]
    # The L2 entries stay raw here and are decoded per workload afterwards (`_decode_buffers`): decoded apart
    # from the rest of the workload, a core's million entries lie together in memory, and building the columns
    # from them took a third of the time (measured on the 16-core benchmark file).
    buffer: msgspec.Raw
    ring_buffer_info: list[tuple[Int, Int]] = []
    weight: InputRef | None = None
    wl0_buffer: list[WeightBufferEntry] | None = None
    wl1_buffer: list[WeightBufferEntry] | None = None
    ofmap_size: NonNeg = 0


class DramWrite(msgspec.Struct, gc=False):
    transfer_id: Int
    core_id: Int
    workload_id: Int
    layer_name: str = ""
    related_ofmap: list[Int] = []


class DramReadDestination(msgspec.Struct, gc=False):
    core_id: Int | None = None
    workload_id: Int | None = None
    type: str = "core"


class DramRead(msgspec.Struct, gc=False):
    transfer_id: Int
    type: Literal["weight", "fmap"]
    size: NonNeg = 0
    related_ifmap: list[Int] = []
    destination: list[DramReadDestination] = []


class Dram(msgspec.Struct, gc=False):
    in_: list[DramWrite] = msgspec.field(name="in", default_factory=list)
    out: list[DramRead] = []


# Lists inside a workload whose invalid entries are dropped one by one (the rest of the workload is kept).
_WORKLOAD_LISTS: dict[str, type] = {
    "wl0_buffer": WeightBufferEntry,
    "wl1_buffer": WeightBufferEntry,
    "ifmap": InputRef,
    "ofmap": OfmapRef,
}
TOP_SCALARS = {"buffersize": 0, "top_batch_cut": 1, "xlen": 1, "ylen": 1}

_get = operator.attrgetter
_workload_decoder = msgspec.json.Decoder(Workload)
_buffer_decoder = msgspec.json.Decoder(list[BufferEntry])
_core_decoder = msgspec.json.Decoder(list[Workload])
_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_dram_decoder = msgspec.json.Decoder(Dram)


def raw_items(array: bytes | msgspec.Raw) -> list[msgspec.Raw]:
    """A JSON array's items as raw texts, checked as JSON but not decoded (raises msgspec.DecodeError)."""
    return _raw_list_decoder.decode(array)


class _Context:
    """What one load accumulates: the file, its problems, and the strictness."""

    def __init__(self, path: Path, data: bytes | bytearray, strict: bool, stamp: tuple[int, int] = (0, 0)) -> None:
        self.path = path
        self.data = data
        self.strict = strict
        self.stamp = stamp  # the file's (size, mtime_ns) when opened: workers refuse a file changed since
        self.span_guessed = False  # the core being decoded lies where `layout` guessed: not an array refutes it
        self.problems = CappedProblems()  # counted past 10,000 a code: memory bounded by the cap

    def error(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.add(Problem("error", code, message, location, refs))

    def warning(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.add(Problem("warning", code, message, location, refs))

    def plain(self, raw: msgspec.Raw, path: str, what: str) -> tuple[bool, Any]:
        """Decode `raw` as plain JSON values; on failure record an error at `path` and return (False, None)."""
        try:
            return True, msgspec.json.decode(raw)
        except RecursionError:
            reason = "nested too deeply"
        except UnicodeDecodeError:
            reason = "a string is not valid UTF-8"
        except msgspec.DecodeError as error:
            reason = str(error)
        self.error(f"bad-{what}", path, f"{reason}; the {what} is dropped", core=_core_of(path))
        return False, None


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


def _worst_case_fits(size: int, at_once: int = 1) -> bool:
    """Whether even the worst case of `size` bytes (an object and an element every 3 bytes), `at_once` such spans
    decoded at the same time, fits in the memory available: then nothing need be counted (on a box with room,
    never)."""
    return refusal(BASE_BYTES + int(size * WORST_PER_BYTE) * at_once, "scheduler IR") is None


def _ensure_objects_fit(path: Path, size: int) -> None:
    """Refuse a file whose JSON objects would take more memory than is available, counting them (0.5 s a GB)
    only when the worst case might not fit. For the load in this process: the workers' load counts each core
    where it is decoded instead (`_ensure_core_fits`, `_ObjectBudget`)."""
    if _worst_case_fits(size):
        return
    tally = np.zeros(4, dtype=np.int64)
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            for start in range(0, len(mapped), 64 << 20):
                tally += _tally(mapped[start : start + (64 << 20)])  # summed whole, combined once at the end
    except (OSError, ValueError):  # unreadable or empty: the reader says so in its own words
        return
    objects, elements = _objects_and_elements(*map(int, tally))
    said = refusal(_objects_estimate(size, objects, elements), f"{size:,}-byte scheduler IR of {objects:,} JSON "
                   f"objects and {elements:,} array elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, "", said)


def _objects_estimate(size: int, objects: int, elements: int = 0) -> int:
    """What a load of `size` bytes holding `objects` JSON objects and `elements` array elements takes at most
    (BASE_BYTES included)."""
    return BASE_BYTES + max(int(size * MEMORY_PER_FILE_BYTE),
                            objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT)  # fmt: skip


def _ensure_core_fits(path: Path, key: str, raw: bytes | bytearray, at_once: int) -> tuple[int, int]:
    """A core's JSON objects, counted on the bytes about to be decoded (24 ms a 46 MB core): refused when
    decoding them, `at_once` cores at the same time, needs more memory than is available now."""
    objects, elements = json_counts(raw)
    said = refusal(BASE_BYTES + (objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT) * at_once,
                   f"scheduler IR core of {len(raw):,} bytes, {objects:,} JSON objects and {elements:,} array "
                   "elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, f'$["{key}"]', said)
    return objects, elements


class _ObjectBudget:
    """The workers' load counts each core's objects where it decodes it; this adds the counts up as the cores
    come in and projects the file's total by the bytes done, refusing the load when the file's estimate
    (`_objects_estimate`) passes what was available when the load began. The same rule as `_ensure_objects_fit`,
    without a pass over the whole file before any worker starts (1.7 s on a 3 GB file)."""

    def __init__(self, path: Path, size: int, available: int | None) -> None:
        self.path, self.size, self.available = path, size, available
        self.objects = self.elements = self.bytes_done = 0

    def add(self, counted: tuple[int, int] | None, span_bytes: int) -> None:
        """A core's (objects, array elements), counted where it was decoded (None: not counted)."""
        if counted is None or self.available is None:
            return
        self.objects += counted[0]
        self.elements += counted[1]
        self.bytes_done += span_bytes
        objects = self.objects * self.size // max(self.bytes_done, 1)
        elements = self.elements * self.size // max(self.bytes_done, 1)
        said = refusal(_objects_estimate(self.size, objects, elements), f"{self.size:,}-byte scheduler IR of about "
                       f"{elements:,} array elements and {objects:,} JSON objects (projected from the cores read "
                       "so far)", self.available)  # fmt: skip
        if said is not None:
            raise LoadError(self.path, "", said)


def _object_budget(path: Path, size: int) -> _ObjectBudget | None:
    """A budget for the workers' load when its objects must be counted (the worst case might not fit)."""
    if guard_off() or _worst_case_fits(size):
        return None
    return _ObjectBudget(path, size, memory_guard.available_bytes())


def _load_schedule(path: Path, progress: ProgressCallback, strict: bool) -> tuple[Schedule, list[Problem]]:
    meter = _ByteMeter(progress)
    try:
        status = path.stat()
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    ensure_fits(path, status.st_size, MEMORY_PER_FILE_BYTE, "scheduler IR")
    pool = None if strict or status.st_size < PARALLEL_MIN_BYTES else worker_pool.shared_pool()
    try:
        loaded = _load_in_workers(pool, path, (status.st_size, status.st_mtime_ns), meter) if pool else None
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


_Loaded = tuple["ScheduleBuilder", dict[str, int], "_Context"]


def _load_here(path: Path, strict: bool, meter: _ByteMeter) -> _Loaded:
    """The whole file read into memory and decoded in this process, a core at a time."""
    try:
        with path.open("rb") as handle:  # read-only, whole file: msgspec decodes from one buffer
            status = os.fstat(handle.fileno())
            _ensure_objects_fit(path, status.st_size)
            data = _read_all(handle, status.st_size, meter)
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    context = _Context(path, data, strict, (status.st_size, status.st_mtime_ns))
    del data
    top_level, top = _top_level(context)
    builder = _builder(context, top_level, bytes(top["-1"]) if "-1" in top else None)
    cores = [(key, top[key]) for _, key in top_level.core_keys]
    _add_parts(builder, context, _parts_here(path, cores, strict, meter, buffersize=top_level.scalars["buffersize"]))
    if strict:
        _strict_key_check(context, top)
    # The file's bytes are freed here, before the columns are joined and analysed: the details panel reads a
    # workload again from the file when it is looked at (FileSpans), which halves what a big file keeps.
    context.data = b""
    return builder, top_level.scalars, context


def _load_in_workers(
    pool: worker_pool.WorkerPool, path: Path, stamp: tuple[int, int], meter: _ByteMeter
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
    jobs = _CoreJobs(pool, path, stamp, True, previewed, _buffersize_guess(path, stamp), _object_budget(path, stamp[0]))
    try:
        if looked_for is not None or (previewed is not None and not previewed.done()):  # not here: the TUI draws
            spans = _spans_in_worker(pool, path, stamp, looked_for)
            for core, span in (spans or {}).items():
                jobs.add(core, span)
        else:
            scanned = functools.partial(meter.stage, "reading", READ_SHARE, total=stamp[0])
            spans = layout.find_core_spans(path, stamp, jobs.add, scanned)
        found = None if spans is None else _top_level_around(path, stamp, spans)
        if found is not None:
            top_level, dram_raw = found
            context = _Context(path, b"", False, stamp)
            context.problems = top_level.problems
            builder = _builder(context, top_level, dram_raw)
            _add_parts(builder, context, jobs.collect(meter))
            return builder, top_level.scalars, context
    except layout.SpanGuessWrong:
        pass
    finally:
        jobs.cancel()
    return _load_after_top_level(pool, path, stamp, meter, previewed)


def _buffersize_guess(path: Path, stamp: tuple[int, int]) -> int | None:
    """The buffer size as the file's last bytes give it (where json.dumps and our writer put it), for the
    workers' L2 steps before the top level is read; the build checks it against the top level's."""
    try:
        tail = FileSpans(path, {}, stamp).read(max(stamp[0] - layout.TAIL, 0), min(stamp[0], layout.TAIL))
    except (OSError, FileChanged):
        return None
    return {**TOP_SCALARS, **layout.tail_scalars(tail)}["buffersize"]


def _spans_in_worker(
    pool: worker_pool.WorkerPool,
    path: Path,
    stamp: tuple[int, int],
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
    pool: worker_pool.WorkerPool, path: Path, stamp: tuple[int, int], meter: _ByteMeter, previewed: Any
) -> _Loaded | None:
    """The cores found by parsing the whole top level in a worker, then decoded by workers, biggest first."""
    meter.stage("reading", READ_SHARE, 0, 1)
    try:
        top_level = pool.submit(read_top_level, str(path), stamp).result()
    except worker_pool.WorkerDied:
        return None
    meter.stage("reading", READ_SHARE, 1, 1)
    context = _Context(path, b"", False, stamp)
    context.problems = top_level.problems
    spans = FileSpans(path, {}, stamp)
    builder = _builder(context, top_level, None if top_level.dram_span is None else spans.read(*top_level.dram_span))
    budget = _object_budget(path, stamp[0])
    jobs = _CoreJobs(pool, path, stamp, False, previewed, top_level.scalars["buffersize"], budget)
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


def read_top_level(path: str, stamp: tuple[int, int]) -> TopLevel:
    """What a worker does first for a big file: read it whole (refused if it changed since the load began) and
    find its top level. Module-level, so a worker process finds it by name."""
    data = FileSpans(Path(path), {}, stamp).read(0, stamp[0])
    context = _Context(Path(path), data, False, stamp)
    with collector_paused():
        return _top_level(context)[0]


def _top_level(context: _Context) -> tuple[TopLevel, dict[str, msgspec.Raw]]:
    """The top level and its numbers decoded, the cores' arrays and the DRAM section still raw."""
    if not context.data or context.data.isspace():  # (no strip(): that would copy a bytearray of the whole file)
        raise LoadError(context.path, "byte 0", "the file is empty")
    top = _decode_top(context)
    _report_repeated_keys(context, top)
    scalars = _read_scalars(context, top)
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


def _report_repeated_keys(context: _Context, top: dict[str, msgspec.Raw]) -> None:
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
    path: Path, stamp: tuple[int, int], spans: dict[int, tuple[int, int]]
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
    pieces.append(file.read(at, stamp[0] - at))
    context = _Context(path, b"".join(pieces), False, stamp)
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


def _builder(context: _Context, top_level: TopLevel, dram_raw: bytes | bytearray | None) -> ScheduleBuilder:
    """A builder that knows the cores' spans and holds the DRAM section, decoded (its problems after the top
    level's, as the file orders them)."""
    builder = ScheduleBuilder()
    builder.add_dram(*_decode_dram(context, None if dram_raw is None else msgspec.Raw(dram_raw)))
    builder.dram_raw = dram_raw  # small: kept for its details
    builder.spans = top_level.spans
    return builder


def _parts_here(
    path: Path,
    cores: list[tuple[str, Any]],
    strict: bool,
    meter: _ByteMeter,
    guessed: bool = False,
    buffersize: int | None = None,
    count_objects: int = 0,
) -> list[CorePart]:
    """Each core (key, raw array) decoded in this process, the bar moving by the bytes decoded, not by core."""
    total = sum(len(raw) for _, raw in cores) or 1
    parts, done = [], 0
    for key, raw in cores:
        bar = _CoreProgress(meter, f"core {key}", done, len(raw), total)
        parts.append(decode_core_part(path, key, raw, strict, bar, guessed, buffersize, count_objects))
        done += len(raw)
        bar.entries(1, 1)
    return parts


def _add_parts(builder: ScheduleBuilder, context: _Context, parts: list[CorePart]) -> None:
    for part in parts:  # in core order, as one pass over the file would find them
        builder.add_part(part)
        context.problems += part.problems


@dataclass(slots=True)
class CorePart:
    """One core decoded into columns, with what the file-wide build needs from it. Made in a worker process or in
    this one and added in core order, so the schedule does not depend on where it was made. Its `columns` number
    layers in `layers`' order (the core's own first appearances); `add_part` renumbers them file-wide."""

    core: int
    columns: dict[str, Any] | None  # None: the core has no valid workload
    layers: list[str]
    problems: list[Problem]
    saw_wl0: bool
    saw_wl1: bool
    l2: CoreL2 | None = None  # its L2 regions and overlaps, for the buffer size the decode was told
    snapshots: SnapshotFacts | None = None  # its tensors' moves and newly_added mismatches
    objects: tuple[int, int] | None = None  # its JSON (objects, array elements), when counted (`_ensure_core_fits`)


def decode_core_part(
    path: Path,
    key: str,
    raw: bytes | bytearray | msgspec.Raw,
    strict: bool,
    bar: _CoreProgress | None = None,
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
    refuses a core that would not fit (`_ensure_core_fits`)."""
    objects = _ensure_core_fits(path, key, raw, count_objects) if count_objects else None
    context = _Context(path, b"", strict)
    context.span_guessed = guessed
    kept = _decode_workloads(context, key, raw, bar.workloads if bar else _ignore)
    entries = _decode_buffers(context, key, kept, bar.entries if bar else _ignore)
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
        _ptr_of(columns["buf_counts"]), columns["buf_tensor"], columns["buf_addr"], columns["buf_size"],
        columns["buf_new"],
    )  # fmt: skip


def _core_l2(columns: dict[str, Any], buffersize: int) -> CoreL2:
    return core_l2(
        _ptr_of(columns["buf_counts"]), columns["buf_addr"], columns["buf_size"], columns["buf_tensor"],
        _ptr_of(columns["ring_counts"]), columns["ring_lo"], columns["ring_hi"], buffersize,
    )  # fmt: skip


def _ignore(*_args: Any) -> None:
    return None


def decode_core_at(
    path: str,
    stamp: tuple[int, int],
    key: str,
    span: tuple[int, int],
    guessed: bool = False,
    buffersize: int | None = None,
    count_objects: int = 0,
) -> CorePart:
    """What a worker does for one core: read its array from the file (refused if the file changed since the
    load began) and decode it. Module-level, so a worker process finds it by name."""
    raw = FileSpans(Path(path), {}, stamp).read(*span)
    with collector_paused():
        return decode_core_part(Path(path), key, raw, False, None, guessed, buffersize, count_objects)


class _CoreJobs:
    """Cores handed to worker processes as their spans become known, then gathered in core order. A core is
    handed on when the next one is known, so that a file of one core is decoded here instead, its bar moving
    within it. The file's first core is taken from the preview's decode (`previewed`, a Future that may still
    be running) when that is the same bytes, not decoded again. A core whose worker died is decoded here.
    With a `budget`, each core's objects are counted where it is decoded and added up as the parts come in."""

    def __init__(
        self,
        pool: worker_pool.WorkerPool,
        path: Path,
        stamp: tuple[int, int],
        guessed: bool,
        previewed: concurrent.futures.Future | None,
        buffersize: int | None = None,
        budget: _ObjectBudget | None = None,
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
        self.futures[self.pool.submit(decode_core_at, *self._job(core))] = core

    def _job(self, core: int) -> tuple:
        """`decode_core_at`'s arguments for a core, in a worker or (its worker died) here."""
        at_once = max(self.pool.count, 1) if self.budget is not None else 0
        return str(self.path), self.stamp, str(core), self.spans[core], self.guessed, self.buffersize, at_once

    def _took(self, core: int, part: CorePart) -> None:
        self.parts[core] = part
        if self.budget is not None:
            self.budget.add(part.objects, self.spans[core][1])

    def collect(self, meter: _ByteMeter) -> list[CorePart]:
        """Every core's part, in core order; the bar moves by the bytes of the cores done."""
        total = sum(length for _, length in self.spans.values()) or 1
        last, self.waiting = self.waiting, None
        # cores are handed on only once a second one is found: with one core, nothing has gone to a worker yet
        if last is not None and (len(self.spans) > 1 or self.previewed is not None):
            self._hand_on(last)
        elif last is not None:  # the file's only core, and no preview of it
            raw = FileSpans(self.path, {}, self.stamp).read(*self.spans[last])
            counted = 1 if self.budget is not None else 0
            found = _parts_here(self.path, [(str(last), raw)], False, meter, self.guessed, self.buffersize, counted)
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
                self._took(core, decode_core_at(*self._job(core)))
            done += self.spans[core][1]
            meter.stage(f"core {core}", DECODE_SHARE, done, total)
        return [self.parts[core] for core in sorted(self.parts)]

    def cancel(self) -> None:
        """The cores still queued are not decoded (the load stopped early, or the spans were wrong)."""
        for future in self.futures:
            future.cancel()


# Shares of the progress bar: reading the file, decoding the cores (by bytes), building the columns.
READ_SHARE = (0.0, 0.2)
DECODE_SHARE = (0.2, 0.75)
BUILD_SHARE = (0.75, 1.0)
READ_CHUNK = 32 << 20
SLICE_BYTES = 64 << 20  # a core larger than this is decoded in slices of about this many bytes


class _ByteMeter:
    """Turns (bytes done, bytes total) within a stage into the loader's overall fraction, so a one-core file's
    bar moves as steadily as a 16-core one's."""

    def __init__(self, progress: ProgressCallback) -> None:
        self.progress = progress

    def stage(self, label: str, share: tuple[float, float], done: float, total: float) -> None:
        lo, hi = share
        self.progress(lo + (hi - lo) * min(done / max(total, 1), 1.0), 1, label)


class _CoreProgress:
    """One core's part of the decode stage, by its bytes: its workloads fill the first half, its L2 entries
    (decoded afterwards) the second."""

    def __init__(self, meter: _ByteMeter, label: str, before: int, size: int, total: int) -> None:
        self.meter, self.label, self.before, self.size, self.total = meter, label, before, size, total

    def workloads(self, bytes_done: int) -> None:
        self._at(0.5 * bytes_done / max(self.size, 1))

    def entries(self, done: int, count: int) -> None:
        self._at(0.5 + 0.5 * done / max(count, 1))

    def _at(self, fraction: float) -> None:
        self.meter.stage(self.label, DECODE_SHARE, self.before + fraction * self.size, self.total)


def _read_all(handle: Any, size: int, meter: _ByteMeter) -> bytes | bytearray:
    """The whole file, read in chunks into one buffer (no second copy) so the bar moves while a large file comes
    off the disk. A file that grows while it is read keeps what was there when it was opened; one that shrinks
    is cut where it ended."""
    if size <= READ_CHUNK:
        return handle.read()
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = handle.readinto(view[done : done + READ_CHUNK])
        if not got:
            break
        done += got
        meter.stage("reading", READ_SHARE, done, size)
    view.release()
    if done < size:
        del buffer[done:]
    return buffer


def _decode_workloads(
    context: _Context, key: str, raw: bytes | bytearray | msgspec.Raw, report: Callable[[int], None]
) -> list[tuple[int, Workload, dict[str, list[int]]]]:
    """A core's valid workloads as (file position, workload, positions of the list entries kept when some were
    dropped). The whole core is decoded typed in one go when it can be; otherwise workload by workload."""
    try:
        return [(position, workload, {}) for position, workload in enumerate(_decode_core(raw, report))]
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    kept = []
    for position, raw_workload in enumerate(_decode_core_array(context, key, raw)):
        workload, positions = _decode_workload(context, raw_workload, f'$["{key}"][{position}]')
        if workload is not None:
            kept.append((position, workload, positions))
    return kept


BUFFER_BATCH = 2048  # workloads whose L2 entries are decoded between two progress reports


def _decode_buffers(
    context: _Context,
    key: str,
    kept: list[tuple[int, Workload, dict[str, list[int]]]],
    report: Callable[[int, int], None],
) -> list[list[BufferEntry]]:
    """Each kept workload's L2 entries. A batch decodes typed in one pass; a batch with a bad entry is decoded
    again workload by workload, dropping the bad entries (an error each) and noting the positions kept."""
    entries: list[list[BufferEntry]] = []
    for start in range(0, len(kept), BUFFER_BATCH):
        batch = kept[start : start + BUFFER_BATCH]
        try:
            decoded = list(map(_buffer_decoder.decode, map(_get("buffer"), map(operator.itemgetter(1), batch))))
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            decoded = []
            for position, workload, dropped in batch:
                path = f'$["{key}"][{position}]' + jsonpath.key("buffer")
                try:
                    decoded.append(_buffer_decoder.decode(workload.buffer))
                    continue
                except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                    pass
                ok, items = context.plain(workload.buffer, path, "entry")
                valid, dropped["buffer"] = _keep_valid(context, items if ok else [], BufferEntry, path, "entry")
                decoded.append(valid)
        entries += decoded
        report(start + len(batch), len(kept))
    return entries


def _decode_core(raw: bytes | bytearray | msgspec.Raw, report: Callable[[int], None]) -> list[Workload]:
    """A core's workloads, typed. A big core is split into its workloads' raw texts first and decoded in slices
    of about SLICE_BYTES, reporting the bytes done after each; a malformed core raises as one decode would."""
    if len(raw) <= SLICE_BYTES:
        return _core_decoder.decode(raw)
    raws = _raw_list_decoder.decode(raw)
    workloads: list[Workload] = []
    start, done = 0, 0
    while start < len(raws):
        end, size = start, 0
        while end < len(raws) and size < SLICE_BYTES:
            size += len(raws[end])
            end += 1
        workloads += [_workload_decoder.decode(r) for r in raws[start:end]]
        done += size
        report(done)
        start = end
    return workloads


def _decode_top(context: _Context) -> dict[str, msgspec.Raw]:
    try:
        return _top_decoder.decode(context.data)
    except msgspec.ValidationError:  # a subclass of DecodeError: catch it first
        raise LoadError(context.path, "$", "expected a JSON object at the top level") from None
    except msgspec.DecodeError as error:
        location, message = jsonpath.locate_decode_error(error, context.data)
        raise LoadError(context.path, location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(context.path, "$", "JSON nested too deeply to be a scheduler IR") from None
    except UnicodeDecodeError as error:
        raise LoadError(context.path, "$", f"a key is not valid UTF-8 text ({error.reason})") from None


def _read_scalars(context: _Context, top: dict[str, msgspec.Raw]) -> dict[str, int]:
    values = dict(TOP_SCALARS)
    for name, default in TOP_SCALARS.items():
        raw = top.get(name)
        if raw is None:
            context.error("missing-key", "$", f'missing required key "{name}" (using {default})')
            continue
        try:
            value = msgspec.json.decode(
                raw, type=Annotated[int, msgspec.Meta(ge=0 if name == "buffersize" else 1, le=2**62)]
            )
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            ok, shown = context.plain(raw, "$" + jsonpath.key(name), "value")
            if ok:
                context.error(
                    "bad-value",
                    "$" + jsonpath.key(name),
                    f"expected a positive integer, got {jsonpath.short_json(shown)} (using {default})",
                )
            continue
        values[name] = value
    return values


def _decode_dram(context: _Context, raw: msgspec.Raw | None) -> tuple[Dram, dict[str, list[int]]]:
    """The DRAM section, plus the file positions of its entries when invalid ones were dropped."""
    if raw is None:
        context.error("missing-key", "$", 'missing the DRAM section "-1"')
        return Dram(), {}
    try:
        return _dram_decoder.decode(raw), {}
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    ok, obj = context.plain(raw, '$["-1"]', "dram")
    if not ok:
        return Dram(), {}
    if not isinstance(obj, dict):
        context.error("bad-value", '$["-1"]', f"expected an object, got {jsonpath.short_json(obj)}")
        return Dram(), {}
    kept: dict[str, list[Any]] = {}
    positions: dict[str, list[int]] = {}
    for name, entry_type in (("in", DramWrite), ("out", DramRead)):
        kept[name], positions[name] = _keep_valid(context, obj.get(name, []), entry_type, f'$["-1"].{name}', "dram")
    return Dram(in_=kept["in"], out=kept["out"]), positions


def _decode_core_array(context: _Context, key: str, raw: bytes | bytearray | msgspec.Raw) -> list[msgspec.Raw]:
    try:
        return _raw_list_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        if context.span_guessed:
            raise layout.SpanGuessWrong(f"core {key}") from None
        context.error("bad-value", f'$["{key}"]', "expected an array of workloads; the core is skipped")
        return []


def _decode_workload(context: _Context, raw: msgspec.Raw, path: str) -> tuple[Workload | None, dict[str, list[int]]]:
    """The typed workload, plus the file positions of list entries when some were dropped."""
    try:
        return _workload_decoder.decode(raw), {}
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    ok, obj = context.plain(raw, path, "workload")
    if not ok:
        return None, {}
    if not isinstance(obj, dict):
        context.error("bad-workload", path, f"expected a workload object, got {jsonpath.short_json(obj)}")
        return None, {}
    positions: dict[str, list[int]] = {}
    for name, entry_type in _WORKLOAD_LISTS.items():
        items = obj.get(name)
        if isinstance(items, list):
            obj[name], positions[name] = _keep_valid(context, items, entry_type, path + jsonpath.key(name), "entry")
    if "buffer" in obj:  # kept raw, like the typed decode does: its entries are checked by _decode_buffers
        obj["buffer"] = msgspec.Raw(msgspec.json.encode(obj["buffer"]))
    try:
        return msgspec.convert(obj, Workload), positions
    except msgspec.ValidationError as error:
        location, message = jsonpath.explain_validation_error(error, obj, path)
        context.error("bad-workload", location, f"{message}; the workload is dropped", core=_core_of(path))
        return None, {}


def _core_of(path: str) -> int | None:
    match_ = re.match(r'\$\["(\d+)"\]', path)
    return int(match_.group(1)) if match_ else None


def _keep_valid(context: _Context, items: Any, entry_type: type, path: str, what: str) -> tuple[list[Any], list[int]]:
    """Entries of `items` that convert to `entry_type`, and their positions; an error for each other one."""
    if not isinstance(items, list):
        context.error("bad-value", path, f"expected an array, got {jsonpath.short_json(items)}")
        return [], []
    kept: list[Any] = []
    positions: list[int] = []
    for index, item in enumerate(items):
        try:
            kept.append(msgspec.convert(item, entry_type))
            positions.append(index)
        except msgspec.ValidationError as error:
            location, message = jsonpath.explain_validation_error(error, item, f"{path}[{index}]")
            context.error(f"bad-{what}", location, f"{message}; the {what} is dropped", core=_core_of(path))
    return kept, positions


# Keys the documented dialect uses, per record kind: --strict reports anything else.
_KNOWN_KEYS: dict[str, set[str]] = {
    "workload": {
        "workload_id",
        "layer_name",
        "layer_type",
        "time",
        "workload",
        "ofmap_size",
        "tile_padding_tblr",
        "ifmap",
        "ofmap",
        "weight",
        "tile_info",
        "ring_buffer_info",
        "buffer",
        "wl0_buffer",
        "wl1_buffer",
    },
    "buffer": {
        "tensor_id",
        "tensor_order",
        "type",
        "address",
        "size",
        "align",
        "bitwidth",
        "lower",
        "upper",
        "newly_added",
        "cur_wl_ifmap",
        "transfer_id",
        "source",
        "layer_name",
        "start_send",
    },
    "wl": {
        "address",
        "align",
        "bitwidth",
        "layer_name",
        "size",
        "source",
        "transfer_id",
        "tensor_order",
        "lower",
        "upper",
    },
    "ifmap": {"align", "bitwidth", "lower", "upper", "size", "transfer_id"},
    "ofmap": {"lower", "upper", "size", "transfer_id", "destination"},
    "in": {"core_id", "workload_id", "layer_name", "transfer_id", "lower", "upper", "related_ofmap"},
    "out": {"transfer_id", "type", "lower", "upper", "size", "related_ifmap", "destination"},
}


def _strict_key_check(context: _Context, top: dict[str, msgspec.Raw]) -> None:
    """--strict: unknown keys anywhere in the documented records are errors."""

    def check(obj: Any, kind: str, path: str) -> None:
        if isinstance(obj, dict):
            for name in obj:
                if name not in _KNOWN_KEYS[kind]:
                    context.error("unknown-key", path + jsonpath.key(name), f"unknown key in a {kind} record")

    for key, raw in top.items():
        ok, obj = context.plain(raw, "$" + jsonpath.key(key), "value")
        if not ok:
            continue
        if key == "-1" and isinstance(obj, dict):
            for name in ("in", "out"):
                for index, entry in enumerate(obj.get(name) or []):
                    check(entry, name, f'$["-1"].{name}[{index}]')
        elif key.isdigit() and isinstance(obj, list):
            for position, workload in enumerate(obj):
                base = f'$["{key}"][{position}]'
                check(workload, "workload", base)
                if not isinstance(workload, dict):
                    continue
                for list_name, kind in (
                    ("buffer", "buffer"),
                    ("wl0_buffer", "wl"),
                    ("wl1_buffer", "wl"),
                    ("ifmap", "ifmap"),
                    ("ofmap", "ofmap"),
                ):
                    for index, entry in enumerate(workload.get(list_name) or []):
                        check(entry, kind, f"{base}.{list_name}[{index}]")


def _ptr_of(counts: Any) -> np.ndarray:
    """Child counts per parent → the CSR pointer array (0, then running totals)."""
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)


def _within(ptr: np.ndarray) -> np.ndarray:
    """Each child's index within its parent, from the CSR pointer array."""
    return np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], np.diff(ptr))


_LAYER_CODE = {name: i for i, name in enumerate(LAYER_TYPES)}
_BUFFER_CODE = {name: i for i, name in enumerate(BUFFER_TYPES)}
_SOURCE_CODE = {name: i for i, name in enumerate(WL_SOURCES)}
_DRAM_OUT_CODE = {name: i for i, name in enumerate(DRAM_OUT_TYPES)}
_NEWLY_ADDED_CODE = {None: -1, False: 0, True: 1}


def _flatten(lists: Any) -> list[Any]:
    return list(itertools.chain.from_iterable(lists))


def _lengths(lists: Any, count: int | None = None) -> np.ndarray:
    return np.fromiter(map(len, lists), np.int64, len(lists) if count is None else count)


def _field(items: list[Any], name: str, dtype: Any = np.int64, missing: int | None = None) -> np.ndarray:
    """One attribute of every item as a column; `missing` stands for None."""
    values = map(_get(name), items)
    if missing is not None:  # dict.get(value, value): the value itself unless it is None
        values = map({None: missing}.get, values, map(_get(name), items))
    return np.fromiter(values, dtype, len(items))


def _coded(items: list[Any], name: str, code: dict[Any, int]) -> np.ndarray:
    """One attribute of every item through `code` (a name → small integer), as an int8 column."""
    return np.fromiter(map(code.__getitem__, map(_get(name), items)), np.int8, len(items))


def _first_transfer(transfer_ids: list[int]) -> int:
    return transfer_ids[0] if transfer_ids else -1


def _inputs(wls: list[Workload]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per workload: the transfer ids of its ifmap refs, then its weight's; kind 0 for ifmap, 1 for weight.
    Returns (counts per workload, transfer ids, kinds)."""
    ref_lists = list(map(_get("ifmap"), wls))
    ref_tids = list(map(_get("transfer_id"), _flatten(ref_lists)))
    ifmap_tid = np.fromiter(itertools.chain.from_iterable(ref_tids), np.int64)
    per_ref = _ptr_of(_lengths(ref_tids))
    ref_ptr = _ptr_of(_lengths(ref_lists))
    ifmap_counts = per_ref[ref_ptr[1:]] - per_ref[ref_ptr[:-1]]
    weight_tids = [() if w is None else w.transfer_id for w in map(_get("weight"), wls)]
    weight_tid = np.fromiter(itertools.chain.from_iterable(weight_tids), np.int64)
    weight_counts = _lengths(weight_tids)
    counts = ifmap_counts + weight_counts
    ptr = _ptr_of(counts)
    tid = np.empty(int(ptr[-1]), np.int64)
    kind = np.zeros(int(ptr[-1]), np.int8)
    ifmap_at = np.repeat(ptr[:-1], ifmap_counts) + _within(_ptr_of(ifmap_counts))
    weight_at = np.repeat(ptr[:-1] + ifmap_counts, weight_counts) + _within(_ptr_of(weight_counts))
    tid[ifmap_at] = ifmap_tid
    tid[weight_at] = weight_tid
    kind[weight_at] = 1
    return counts, tid, kind


class ScheduleBuilder:
    """Turns typed workloads into columns core by core, as each core is decoded, so only one core's typed
    objects are alive at a time (peak memory: the file, one core's Structs and the columns), then joins the
    cores' columns. Bulk comprehensions over a core's entries are several times faster than appending per
    workload."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.layers: dict[str, int] = {}  # layer name → id, in order of first appearance in the workloads
        self.spans: dict[int, tuple[int, int]] = {}  # core → where its array lies in the file
        self.dram_raw: bytes | bytearray | None = None
        self.core_order: list[int] = []
        self.dram_columns = _dram_columns(Dram(), {})
        self.saw_wl0 = False
        self.saw_wl1 = False
        self.l2_parts: list[CoreL2 | None] = []  # per part: what its decode found of its L2 snapshots
        self.snapshot_parts: list[SnapshotFacts | None] = []  # per part: its snapshot checks' findings

    def add_core(
        self, core: int, workloads: list[tuple[int, Workload, dict]], entries: list[list[BufferEntry]]
    ) -> None:
        if not workloads:
            return
        self.core_order.append(core)
        self.saw_wl0 = self.saw_wl0 or any(w.wl0_buffer is not None for _, w, _ in workloads)
        self.saw_wl1 = self.saw_wl1 or any(w.wl1_buffer is not None for _, w, _ in workloads)
        self.parts.append(self._columns(core, workloads, entries))

    def add_part(self, part: CorePart) -> None:
        """A core decoded apart (`decode_core_part`), its layers renumbered in the file's order of first
        appearance: parts added in core order give the ids a single pass over the cores would."""
        self.saw_wl0 = self.saw_wl0 or part.saw_wl0
        self.saw_wl1 = self.saw_wl1 or part.saw_wl1
        if part.columns is None:
            return
        ids = np.fromiter(map(self._layer_id, part.layers), np.int32, len(part.layers))
        part.columns["wl_layer"] = ids[part.columns["wl_layer"]]
        self.core_order.append(part.core)
        self.parts.append(part.columns)
        self.l2_parts.append(part.l2)
        self.snapshot_parts.append(part.snapshots)

    def _layer_id(self, name: str) -> int:
        return self.layers.setdefault(name, len(self.layers))

    def add_dram(self, dram: Dram, positions: dict[str, list[int]]) -> None:
        """The DRAM section's columns, made as soon as it is decoded: while the workers still decode the cores,
        not in the build after them, where one CPU waits."""
        self.dram_columns = _dram_columns(dram, positions)

    def _columns(
        self, core: int, workloads: list[tuple[int, Workload, dict]], buf_lists: list[list[BufferEntry]]
    ) -> dict[str, Any]:
        """One core's columns; child lists as counts (joined into pointers at the end) and row indices local.

        Every pass over entries is C-level (`map` over attrgetters into `np.fromiter`, `chain` to flatten): a
        Python loop or generator per entry cost about 3 µs an entry, most of the load time of a big file."""
        wls = list(map(operator.itemgetter(1), workloads))
        n = len(wls)
        damaged = [(index, dropped) for index, (_, _, dropped) in enumerate(workloads) if dropped]
        wl_lists = [w.wl0_buffer if w.wl0_buffer is not None else (w.wl1_buffer or []) for w in wls]
        wl_keys = ["wl0_buffer" if wls[index].wl0_buffer is not None else "wl1_buffer" for index, _ in damaged]

        def positions(name: str, counts: np.ndarray) -> np.ndarray:
            """File positions of the child entries: 0..k-1 per parent unless the loader dropped some."""
            ptr = _ptr_of(counts)
            pos = _within(ptr)
            for (index, dropped_by_list), wl_key in zip(damaged, wl_keys, strict=True):
                dropped = dropped_by_list.get(wl_key if name == "wl" else name)  # "wl": wl0_buffer, else wl1_buffer
                if dropped is not None:
                    pos[ptr[index] : ptr[index + 1]] = dropped
            return pos.astype(np.int32)

        layer_names = list(map(_get("layer_name"), wls))
        for name in dict.fromkeys(layer_names):  # ids in order of first appearance
            self.layers.setdefault(name, len(self.layers))
        ring_lists = list(map(_get("ring_buffer_info"), wls))
        rings = _flatten(ring_lists)
        in_counts, in_tid, in_kind = _inputs(wls)
        of_lists = list(map(_get("ofmap"), wls))
        of_counts = _lengths(of_lists)
        ofmaps = _flatten(of_lists)
        dst_lists = list(map(_get("destination"), ofmaps))
        dests = _flatten(dst_lists)
        dst_dram = np.fromiter(map("DRAM".__eq__, map(_get("type"), dests)), bool, len(dests))
        buf_counts = _lengths(buf_lists)
        entries = _flatten(buf_lists)
        w0_counts = _lengths(wl_lists)
        w0 = _flatten(wl_lists)
        w0_names = list(map(_get("layer_name"), w0))
        w0_layer_names = list(dict.fromkeys(w0_names))  # the core's own, in order of first appearance
        return {
            "n": n,
            "wl_core": np.full(n, core, dtype=np.int32),
            "wl_pos": np.fromiter(map(operator.itemgetter(0), workloads), np.int32, n),
            "wl_id": _field(wls, "workload_id"),
            "wl_layer": np.fromiter(map(self.layers.__getitem__, layer_names), np.int32, n),
            "wl_type": _coded(wls, "layer_type", _LAYER_CODE),
            "wl_time": _field(wls, "time", np.float64),
            "wl_ofmap_size": _field(wls, "ofmap_size"),
            "ring_counts": _lengths(ring_lists),
            "ring_lo": np.fromiter(map(operator.itemgetter(0), rings), np.int64, len(rings)),
            "ring_hi": np.fromiter(map(operator.itemgetter(1), rings), np.int64, len(rings)),
            "in_counts": in_counts,
            "in_tid": in_tid,
            "in_kind": in_kind,
            "of_counts": of_counts,
            "of_tid": _field(ofmaps, "transfer_id"),
            "of_size": _field(ofmaps, "size"),
            "of_pos": positions("ofmap", of_counts),
            "dst_counts": _lengths(dst_lists),
            "dst_core": np.where(dst_dram, -1, _field(dests, "core_id", missing=-1)),
            "dst_wl": _field(dests, "workload_id", missing=-1),
            "dst_dram": dst_dram,
            "buf_counts": buf_counts,
            "buf_tensor": _field(entries, "tensor_id"),
            "buf_addr": _field(entries, "address"),
            "buf_size": _field(entries, "size"),
            "buf_type": _coded(entries, "type", _BUFFER_CODE),
            "buf_new": _coded(entries, "newly_added", _NEWLY_ADDED_CODE),
            "buf_cur": _field(entries, "cur_wl_ifmap", bool),
            "buf_pos": positions("buffer", buf_counts),
            "w0_counts": w0_counts,
            "w0_addr": _field(w0, "address"),
            "w0_size": _field(w0, "size"),
            "w0_src": _coded(w0, "source", _SOURCE_CODE),
            "w0_tid": np.fromiter(map(_first_transfer, map(_get("transfer_id"), w0)), np.int64, len(w0)),
            "w0_pos": positions("wl", w0_counts),
            # numbered file-wide in the build, after every workload's layer has its id
            "w0_layer": np.fromiter(
                map({name: i for i, name in enumerate(w0_layer_names)}.__getitem__, w0_names), np.int32, len(w0)
            ),
            "w0_layer_names": w0_layer_names,
        }

    @property
    def wl0_key(self) -> str:
        """The WL0 snapshots' key as the file names them: wl1_buffer only when no workload says wl0_buffer."""
        return "wl1_buffer" if self.saw_wl1 and not self.saw_wl0 else "wl0_buffer"

    def build(self, scalars: dict[str, int], core_raw: Any) -> Schedule:
        parts = self.parts
        layers = self.layers

        def joined(key: str, dtype: Any = np.int64) -> np.ndarray:
            arrays = [part[key] for part in parts]
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)

        ptr_of = _ptr_of

        n = sum(part["n"] for part in parts)
        core_ids = np.asarray(self.core_order, dtype=np.int64)
        core_ptr = ptr_of([part["n"] for part in parts])
        of_counts = joined("of_counts")
        w0_layer = self._w0_layers()  # before `layers` is listed: it adds the names only WL0 entries use
        schedule = Schedule(
            buffersize=scalars["buffersize"],
            xlen=scalars["xlen"],
            ylen=scalars["ylen"],
            top_batch_cut=scalars["top_batch_cut"],
            wl0_key=self.wl0_key,
            layers=list(layers),
            core_ids=core_ids,
            core_ptr=core_ptr,
            wl_core=joined("wl_core", np.int32),
            wl_pos=joined("wl_pos", np.int32),
            wl_id=joined("wl_id"),
            wl_layer=joined("wl_layer", np.int32),
            wl_type=joined("wl_type", np.int8),
            wl_time=joined("wl_time", np.float64),
            wl_ofmap_size=joined("wl_ofmap_size"),
            core_raw=core_raw,
            ring_ptr=ptr_of(joined("ring_counts")),
            ring_lo=joined("ring_lo"),
            ring_hi=joined("ring_hi"),
            in_ptr=ptr_of(joined("in_counts")),
            in_tid=joined("in_tid"),
            in_kind=joined("in_kind", np.int8),
            of_row=np.repeat(np.arange(n, dtype=np.int64), of_counts),
            of_tid=joined("of_tid"),
            of_size=joined("of_size"),
            of_pos=joined("of_pos", np.int32),
            of_dst_ptr=ptr_of(joined("dst_counts")),
            dst_core=joined("dst_core"),
            dst_wl=joined("dst_wl"),
            dst_dram=joined("dst_dram", bool),
            buf_ptr=ptr_of(joined("buf_counts")),
            buf_tensor=joined("buf_tensor"),
            buf_addr=joined("buf_addr"),
            buf_size=joined("buf_size"),
            buf_type=joined("buf_type", np.int8),
            buf_new=joined("buf_new", np.int8),
            buf_cur=joined("buf_cur", bool),
            buf_pos=joined("buf_pos", np.int32),
            w0_ptr=ptr_of(joined("w0_counts")),
            w0_addr=joined("w0_addr"),
            w0_size=joined("w0_size"),
            w0_src=joined("w0_src", np.int8),
            w0_tid=joined("w0_tid"),
            w0_pos=joined("w0_pos", np.int32),
            w0_layer=w0_layer,
            **self.dram_columns,
            dram_raw=self.dram_raw,
        )
        schedule.keep_known("l2_known", self._l2_known(scalars["buffersize"]), L2_COLUMNS)
        schedule.keep_known("snapshots_known", self._snapshots_known(), SNAPSHOT_COLUMNS)
        return schedule

    def _entry_starts(self) -> list[int]:
        """Where each part's L2 entries start in the joined columns."""
        return _ptr_of([int(part["buf_counts"].sum()) for part in self.parts])[:-1].tolist()

    def _snapshots_known(self) -> SnapshotFacts | None:
        """The parts' snapshot findings joined, when every part has them."""
        known = self.snapshot_parts
        if len(known) != len(self.parts) or not known or any(facts is None for facts in known):
            return None
        return joined_facts(known, self._entry_starts())  # type: ignore[arg-type]

    def _l2_known(self, buffersize: int) -> CoreL2 | None:
        """The parts' L2 answers joined, when every part has one for the file's buffer size."""
        known = self.l2_parts
        if len(known) != len(self.parts) or not known or any(k is None or k.buffersize != buffersize for k in known):
            return None
        rows = [part["n"] for part in self.parts]
        return joined_l2(known, self._entry_starts(), _ptr_of(rows)[:-1].tolist())  # type: ignore[arg-type]

    def _w0_layers(self) -> np.ndarray:
        """The WL0 entries' layer ids (-1: none named). Each core numbered its own names; they are numbered
        file-wide here, after every workload's layer, in the order a pass over all the entries would."""
        pieces = [np.zeros(0, dtype=np.int32)]
        for part in self.parts:
            names = part["w0_layer_names"]
            ids = list(map(self.layers.get, names))  # most are workloads' layers: looked up without a call each
            if None in ids:  # a name no workload has, or none: numbered in order, one by one
                ids = list(map(self._w0_layer_id, names))
            pieces.append(np.array(ids, dtype=np.int32)[part["w0_layer"]])
        return np.concatenate(pieces)

    def _w0_layer_id(self, name: str | None) -> int:
        return -1 if name is None else self.layers.setdefault(name, len(self.layers))


def _dram_columns(dram: Dram, positions: dict[str, list[int]]) -> dict[str, Any]:
    """The DRAM section as the schedule's din_*/dout_* columns; `positions` holds the file positions of the
    transfers kept when some were dropped."""
    din, dout = dram.in_, dram.out
    din_rel = list(map(_get("related_ofmap"), din))
    dout_rel = list(map(_get("related_ifmap"), dout))
    dout_dst_lists = list(map(_get("destination"), dout))
    dout_dsts = _flatten(dout_dst_lists)
    return {
        "din_tid": _field(din, "transfer_id"),
        "din_core": _field(din, "core_id"),
        "din_wl": _field(din, "workload_id"),
        "din_pos": np.asarray(positions.get("in", range(len(din))), dtype=np.int64),
        "din_rel_ptr": _ptr_of(_lengths(din_rel)),
        "din_rel": np.fromiter(itertools.chain.from_iterable(din_rel), np.int64),
        "dout_tid": _field(dout, "transfer_id"),
        "dout_type": _coded(dout, "type", _DRAM_OUT_CODE),
        "dout_size": _field(dout, "size"),
        "dout_pos": np.asarray(positions.get("out", range(len(dout))), dtype=np.int64),
        "dout_rel_ptr": _ptr_of(_lengths(dout_rel)),
        "dout_rel": np.fromiter(itertools.chain.from_iterable(dout_rel), np.int64),
        "dout_dst_ptr": _ptr_of(_lengths(dout_dst_lists)),
        "dout_dst_core": _field(dout_dsts, "core_id", missing=-1),
        "dout_dst_wl": _field(dout_dsts, "workload_id", missing=-1),
    }
