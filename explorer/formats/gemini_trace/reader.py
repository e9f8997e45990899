"""Load an assembly or a trace: read-only, the whole file at once, lenient per line."""

from __future__ import annotations

from pathlib import Path

from explorer.bounded_read import read_regular
from explorer.document import Document, ProgressCallback, no_progress
from explorer.gc_pause import collector_paused


def load_trace(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    return _load(Path(path), True, progress or no_progress)


def load_asm(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    return _load(Path(path), False, progress or no_progress)


def _load(path: Path, timed: bool, progress: ProgressCallback) -> Document:
    from explorer.formats.gemini_trace.document import build_document
    from explorer.formats.gemini_trace.lines import MEMORY_PER_TEXT_BYTE
    from explorer.formats.gemini_trace.program import read_program

    data = read_regular(path, "instruction file", bytes_per_file_byte=MEMORY_PER_TEXT_BYTE)
    progress(0, 2, "reading instructions")
    with collector_paused():
        program = read_program(path, data, timed)
        progress(1, 2, "indexing")
        document = build_document(path, program)
    progress(2, 2, "done")
    return document
