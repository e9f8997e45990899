"""One call from a path to an analysed Document: what the CLI, the TUI and the exports use."""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from pathlib import Path

from explorer import worker_pool
from explorer.cache import documents as derived
from explorer.document import Document, ProgressCallback, no_progress
from explorer.errors import LoadError, cap_per_code
from explorer.registry import pick_format

# Stages after the file is read, which progress reports with a fraction of their own (not of the load)
ANALYSING, CHECKING, READY = "analysing", "checking", "ready"
AFTER_LOADING = frozenset({ANALYSING, CHECKING, READY})
# The timeline's pass costs about 1 µs a row here: below this it is quicker than a worker's round trip.
PASS_ELSEWHERE_MIN_ROWS = 50_000


def open_document(
    path: str | Path,
    *,
    strict: bool = False,
    progress: ProgressCallback | None = None,
    analyze: bool = True,
    companions: dict[str, Path | None] | None = None,
    read_ahead: bool = True,
    dims: Mapping[str, int] | None = None,
) -> Document:
    """Load `path` with the format that recognises it, then run the neutral analyses it has data for. A
    schedule also gets its pipeline companions (found beside it, or given as kind → path: frontend, asm,
    trace), joined when they belong to it (explorer.companions). `read_ahead=False` when nothing but the
    summary and the problem counts will be asked (`Document.read_ahead`). `dims`: the symbolic dims the user
    binds (`--dims`), given to the deep checks (`Document.bind_dims`). A big file's analysed document is read
    back from the derived-data cache when it was kept there; else it is marked for keeping, which the caller does
    when done with it (`explorer.cache.documents.keep`).

    Raises LoadError only; any other exception from a loader is a bug, turned into a LoadError that still
    names the file so a user never sees a traceback.
    """
    progress = progress or no_progress
    found = pick_format(path)
    slot = derived.slot_for(found, Path(path), strict, companions, dims) if analyze else None
    if slot is not None and (kept := derived.lookup(slot)) is not None:
        kept.read_ahead = read_ahead
        kept.cache_slot, kept._opened_problems = slot, kept.problems
        kept._kept_state = kept.derived_state() if derived.written_as_it_is(slot) else None  # (None: kept again)
        kept.bind_dims(dims or {})
        progress(1, 1, READY)
        return kept
    started = time.perf_counter()
    try:
        document = found.load(Path(path), progress=progress, strict=strict)
        document.problems = cap_per_code(document.problems)  # every format's loader, as Limits promises
        document.read_ahead = read_ahead
        if document.is_schedule:
            from explorer.companions import attach_companions

            attach_companions(document, companions, open_document)
        if analyze:
            progress(0, 1, ANALYSING)
            analyze_document(document)
            document.derive_seconds = time.perf_counter() - started
            if slot is not None:  # kept when done with, if what it holds by then cost enough to work out
                document.cache_slot, document._opened_problems = slot, document.problems
            progress(1, 1, READY)
        document.bind_dims(dims or {})
    except LoadError:
        raise
    except (MemoryError, RecursionError) as error:
        raise LoadError(path, "", f"too large or too deeply nested to load ({type(error).__name__})") from None
    return document


def analyze_document(document: Document) -> None:
    """Neutral analyses over the document's lanes and snapshots; the format then adds its own (`analyzed`)."""
    if document.schedule is not None and document.schedule_analysis is None:
        from explorer.schedule.analysis import analyze_schedule

        view = document.view
        schedule = document.schedule
        # a big file's workers, idle once it is decoded, take the timeline's pass; a small one's is not worth it
        pool = worker_pool.running_pool() if schedule.n_workloads >= PASS_ELSEWHERE_MIN_ROWS else None
        document.schedule_analysis = analyze_schedule(
            schedule,
            timeline_checks=functools.partial(view.timeline_checks, document),
            overlaps_found=functools.partial(view.overlaps_found, document),
            elsewhere=None if pool is None else pool.submit,
        )
        document.view.analyzed(document)
