"""The first core of a big schedule, read from the head of the file, so the TUI can draw its timeline while the
whole file is still loading (issue #14: "draw what is decoded while the rest decodes"). The full load replaces it.

Where the first core's array lies is found as the full load finds every core (`layout`): from the keys in the
file's bytes, without parsing what comes before or after it. If that guess is wrong, its bytes are not one JSON
array (the brackets would not balance), the typed decode fails, and there is no preview. Files laid out otherwise
get no preview either and load as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

from explorer.document import Document
from explorer.errors import Problem
from explorer.formats.scheduler_ir import started
from explorer.formats.scheduler_ir.first_core import (  # what the preview is made of; named here for callers
    FirstCore,
    FirstCorePart,
    first_core_part,
    first_core_schedule,
    read_first_core,
)

__all__ = [
    "FirstCore", "FirstCorePart", "first_core_part", "first_core_schedule", "preview", "previews", "read_first_core"
]  # fmt: skip


def previews(path: Path) -> Iterator[Document]:
    """What the TUI shows while `load` reads the whole file, each part more than the one before: a big first
    core's first workloads when `early.prepare` started their decode (a screenful, sooner), then the whole first
    core."""
    path = Path(path)
    whole = started.first_core_job(path)  # now: the full load takes it from `started` as it begins
    look = started.take_first_look(path)
    if look is not None:
        try:
            found = look.result()
        except Exception:  # its worker died: the whole first core follows as before
            found = None
        if found is not None and found.prefix is not None:
            yield document_of(found, path)
    shown = preview(path, whole)
    if shown is not None:
        yield shown


def preview(path: Path, job: Future | None = None) -> Document | None:
    """A document of the first core, analysed, for the TUI to show while `load` reads the whole file; its problems
    are left for the full load (a core alone misses the producers on other cores). The first core is decoded by
    a worker process when `early.prepare` started one (`job`, else the one in `started`), else here."""
    path = Path(path)
    job = job or started.first_core_job(path)  # the full load takes the same decode
    found = job.result() if job is not None else first_core_part(path)
    return None if found is None else document_of(found, path)


def document_of(found: FirstCorePart, path: Path) -> Document:
    """The decoded first core (or its first workloads) as a partial document, analysed."""
    from explorer.api import analyze_document
    from explorer.formats.scheduler_ir.document import build_document

    document = build_document(path, first_core_schedule(found, path), [])
    document.partial = found.describe()  # no graph while partial: it is built from every core's layers
    analyze_document(document)
    shown = "the first core only" if found.prefix is None else f"the first core's first {found.prefix:,} workloads only"
    document.problems = [Problem("info", "preview", f"{shown}: the rest of the file is loading")]
    return document
