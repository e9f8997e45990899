"""How much memory a scheduler IR file will take once decoded, from its bytes and its JSON objects: the guard
refuses a file (or a core) that would not fit before it is decoded."""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np

from explorer import memory_guard
from explorer.errors import LoadError
from explorer.file_spans import FileIdentity
from explorer.memory_guard import BASE_BYTES, guard_off, refusal

# Measured: a 519 MB schedule peaks at about 770 MiB in the TUI, 1.6 bytes a file byte, since the loader frees the
# file's bytes before the analyses (BENCHMARKS.md); the guard assumes a little more.
MEMORY_PER_FILE_BYTE = 1.75


# A file of empty objects costs more per byte than a real one: `{},` (3 bytes) decodes to a dict and its problem
# bookkeeping, about 80 bytes (1,000,000 empty workloads, 3 MB: 76 MiB more at peak; tests/unit/test_memory_estimates).
MEMORY_PER_OBJECT = 96


# An array's element while its core is decoded: a workload of one list of 15 million transfer ids (139 MB) peaked
# at 1.4 GB in the TUI, about 97 bytes an element, none of them an object (tests/unit/test_memory_estimates.py holds
# the estimate to it). That is a core's cost while it is decoded, one core (one per worker) at a time.
MEMORY_PER_ELEMENT = 110


# An array's element once its core is columns: about 15 bytes (the 3 GB 64-core file's 203 million elements, 2.8 GiB
# at its peak in all; BENCHMARKS.md); twice that is assumed.
KEPT_PER_ELEMENT = 32


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


def _worst_case_fits(size: int, at_once: int = 1) -> bool:
    """Whether even the worst case of `size` bytes (an object and an element every 3 bytes), `at_once` such spans
    decoded at the same time, fits in the memory available: then nothing need be counted (on a box with room,
    never)."""
    return refusal(BASE_BYTES + int(size * WORST_PER_BYTE) * at_once, "scheduler IR") is None


def ensure_objects_fit(path: Path, size: int, stamp: FileIdentity) -> None:
    """Refuse a file whose JSON objects would take more memory than is available, counting them (0.5 s a GB)
    only when the worst case might not fit: what every core keeps once decoded, and the largest core while it is
    decoded (the cores are decoded one at a time); every core at once when the cores cannot be told apart. For the
    load in this process: the workers' load counts each core where it is decoded instead (`ensure_core_fits`,
    `ObjectBudget`)."""
    if _worst_case_fits(size):
        return
    from explorer.formats.scheduler_ir.layout import find_core_spans

    spans = find_core_spans(path, stamp) if size else None
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            pieces = _pieces(len(mapped), sorted((spans or {}).values()))
            tallies = [_tally_span(mapped, start, end) for start, end in pieces]
    except (OSError, ValueError):  # unreadable or empty: the reader says so in its own words
        return
    objects, elements = _objects_and_elements(*map(int, sum(tallies, np.zeros(4, dtype=np.int64))))
    if spans:
        in_cores = {offset for offset, _ in spans.values()}
        largest = max((_objects_and_elements(*map(int, tally)) for (start, _), tally in zip(pieces, tallies,
                       strict=True) if start in in_cores), key=lambda counted: decoding_bytes(*counted))  # fmt: skip
        estimate = kept_estimate(size, objects, elements) + decoding_bytes(*largest)
    else:
        estimate = objects_estimate(size, objects, elements)
    said = refusal(estimate, f"{size:,}-byte scheduler IR of {objects:,} JSON objects and {elements:,} array "
                   "elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, "", said)


def _pieces(size: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The file as (start, end) pieces: each core's span and the bytes between them."""
    pieces, at = [], 0
    for offset, length in spans:
        if offset > at:
            pieces.append((at, offset))
        pieces.append((offset, offset + length))
        at = offset + length
    if at < size:
        pieces.append((at, size))
    return pieces


def _tally_span(mapped: mmap.mmap, start: int, end: int) -> np.ndarray:
    tally = np.zeros(4, dtype=np.int64)
    for at in range(start, end, 64 << 20):
        tally += _tally(mapped[at : min(at + (64 << 20), end)])  # summed whole, combined once at the end
    return tally


def objects_estimate(size: int, objects: int, elements: int = 0) -> int:
    """What a load of `size` bytes holding `objects` JSON objects and `elements` array elements takes at most
    when all of it is decoded at once (BASE_BYTES included)."""
    return BASE_BYTES + max(int(size * MEMORY_PER_FILE_BYTE), decoding_bytes(objects, elements))


def kept_estimate(size: int, objects: int, elements: int) -> int:
    """What the loaded file keeps once every core is columns (BASE_BYTES included)."""
    return BASE_BYTES + max(int(size * MEMORY_PER_FILE_BYTE), objects * MEMORY_PER_OBJECT + elements * KEPT_PER_ELEMENT)


def decoding_bytes(objects: int, elements: int) -> int:
    """What decoding a span of `objects` JSON objects and `elements` array elements takes while it is decoded."""
    return objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT


def ensure_core_fits(path: Path, key: str, raw: bytes | bytearray, at_once: int) -> tuple[int, int]:
    """A core's JSON objects, counted on the bytes about to be decoded (24 ms a 46 MB core): refused when
    decoding them, `at_once` cores at the same time, needs more memory than is available now."""
    objects, elements = json_counts(raw)
    said = refusal(BASE_BYTES + decoding_bytes(objects, elements) * at_once,
                   f"scheduler IR core of {len(raw):,} bytes, {objects:,} JSON objects and {elements:,} array "
                   "elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, f'$["{key}"]', said)
    return objects, elements


class ObjectBudget:
    """The workers' load counts each core's objects where it decodes it; this adds the counts up as the cores
    come in and projects the file's total by the bytes done, refusing the load when what the file keeps once
    decoded (`kept_estimate`) passes what was available when the load began; each core's decoding is checked
    where it is decoded (`ensure_core_fits`). The same rule as `ensure_objects_fit`, without a pass over the
    whole file before any worker starts (1.7 s on a 3 GB file)."""

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
        said = refusal(kept_estimate(self.size, objects, elements), f"{self.size:,}-byte scheduler IR of about "
                       f"{elements:,} array elements and {objects:,} JSON objects (projected from the cores read "
                       "so far)", self.available)  # fmt: skip
        if said is not None:
            raise LoadError(self.path, "", said)


def object_budget(path: Path, size: int) -> ObjectBudget | None:
    """A budget for the workers' load when its objects must be counted (the worst case might not fit)."""
    if guard_off() or _worst_case_fits(size):
        return None
    return ObjectBudget(path, size, memory_guard.available_bytes())
