"""One call from a path to an analysed Document: what the CLI, the TUI and the exports use."""

from __future__ import annotations

from pathlib import Path

from explorer.errors import LoadError
from explorer.loaders import pick_loader
from explorer.model import Document, ProgressCallback, no_progress


def open_document(
    path: str | Path, *, strict: bool = False, progress: ProgressCallback | None = None, analyze: bool = True
) -> Document:
    """Load `path` with the loader that recognises it, then run that format's analyses.

    Raises LoadError only; any other exception from a loader is a bug, turned into a LoadError that still
    names the file so a user never sees a traceback.
    """
    progress = progress or no_progress
    loader = pick_loader(path)
    try:
        document = loader.module.load(Path(path), progress=progress, strict=strict)
        if analyze:
            progress(0, 1, "analysing")
            analyze_document(document)
            progress(1, 1, "ready")
    except LoadError:
        raise
    except (MemoryError, RecursionError) as error:
        raise LoadError(path, "", f"too large or too deeply nested to load ({type(error).__name__})") from None
    return document


def analyze_document(document: Document) -> None:
    if document.schedule is not None:
        from explorer.analysis import analyze_schedule, schedule_summary

        analysis = analyze_schedule(document.schedule)
        document.analysis["schedule"] = analysis
        if document.meta.format == "scheduler-ir":  # other formats draw a derived schedule (TVM's storage plan)
            document.problems = document.problems + analysis.problems
            document.summary = schedule_summary(document.schedule, analysis)
