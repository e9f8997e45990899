"""How much memory a scheduler IR file will take once decoded, from its bytes and its JSON objects: the guard
refuses a file (or a core) that would not fit before it is decoded."""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np

from explorer import memory_guard
from explorer.errors import LoadError
from explorer.memory_guard import BASE_BYTES, guard_off, refusal

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


def _worst_case_fits(size: int, at_once: int = 1) -> bool:
    """Whether even the worst case of `size` bytes (an object and an element every 3 bytes), `at_once` such spans
    decoded at the same time, fits in the memory available: then nothing need be counted (on a box with room,
    never)."""
    return refusal(BASE_BYTES + int(size * WORST_PER_BYTE) * at_once, "scheduler IR") is None


def ensure_objects_fit(path: Path, size: int) -> None:
    """Refuse a file whose JSON objects would take more memory than is available, counting them (0.5 s a GB)
    only when the worst case might not fit. For the load in this process: the workers' load counts each core
    where it is decoded instead (`ensure_core_fits`, `ObjectBudget`)."""
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
    said = refusal(objects_estimate(size, objects, elements), f"{size:,}-byte scheduler IR of {objects:,} JSON "
                   f"objects and {elements:,} array elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, "", said)


def objects_estimate(size: int, objects: int, elements: int = 0) -> int:
    """What a load of `size` bytes holding `objects` JSON objects and `elements` array elements takes at most
    (BASE_BYTES included)."""
    return BASE_BYTES + max(int(size * MEMORY_PER_FILE_BYTE),
                            objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT)  # fmt: skip


def ensure_core_fits(path: Path, key: str, raw: bytes | bytearray, at_once: int) -> tuple[int, int]:
    """A core's JSON objects, counted on the bytes about to be decoded (24 ms a 46 MB core): refused when
    decoding them, `at_once` cores at the same time, needs more memory than is available now."""
    objects, elements = json_counts(raw)
    said = refusal(BASE_BYTES + (objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT) * at_once,
                   f"scheduler IR core of {len(raw):,} bytes, {objects:,} JSON objects and {elements:,} array "
                   "elements")  # fmt: skip
    if said is not None:
        raise LoadError(path, f'$["{key}"]', said)
    return objects, elements


class ObjectBudget:
    """The workers' load counts each core's objects where it decodes it; this adds the counts up as the cores
    come in and projects the file's total by the bytes done, refusing the load when the file's estimate
    (`objects_estimate`) passes what was available when the load began. The same rule as `ensure_objects_fit`,
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
        said = refusal(objects_estimate(self.size, objects, elements), f"{self.size:,}-byte scheduler IR of about "
                       f"{elements:,} array elements and {objects:,} JSON objects (projected from the cores read "
                       "so far)", self.available)  # fmt: skip
        if said is not None:
            raise LoadError(self.path, "", said)


def object_budget(path: Path, size: int) -> ObjectBudget | None:
    """A budget for the workers' load when its objects must be counted (the worst case might not fit)."""
    if guard_off() or _worst_case_fits(size):
        return None
    return ObjectBudget(path, size, memory_guard.available_bytes())
