"""The ONNX format's entry point: read the model (reader), then build its document (document)."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback, no_progress
from explorer.formats.onnx.document import build_document
from explorer.formats.onnx.reader import read_model
from explorer.gc_pause import collector_paused


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    path, progress = Path(path), progress or no_progress
    with collector_paused():
        index, problems, summary = read_model(path, progress)
        progress(3, 3, "done")
        return build_document(path, index, problems, summary)
