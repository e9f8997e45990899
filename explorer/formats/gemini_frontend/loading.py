"""The frontend IR format's entry point: read the file (reader), then build its document (document)."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback, no_progress
from explorer.formats.gemini_frontend.document import build_document
from explorer.formats.gemini_frontend.reader import read_frontend
from explorer.gc_pause import collector_paused


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    path = Path(path)
    progress = progress or no_progress
    progress(0, 2, "reading")
    with collector_paused():
        ir = read_frontend(path)
        progress(1, 2, "checking")
        return build_document(path, ir)
