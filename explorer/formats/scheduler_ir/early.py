"""What starts as soon as a big schedule is named, before the TUI or the CLI has imported anything heavy: the
worker processes that will decode it (`explorer.worker_pool`) start (they take a third of a second to be ready),
and for the TUI one decodes the first core for the preview. The preview takes that job instead of starting its
own, and the loader takes the core it decoded. Imports nothing heavy itself (no numpy), so calling it costs the
start-up nothing."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

from explorer import worker_pool

PARALLEL_MIN_BYTES = 32 << 20  # smaller files decode in about a second in one process: workers would not pay
PREVIEW_MIN_BYTES = 64 << 20  # a smaller file loads whole in about a second: no preview

# Jobs started early, until the loader or the preview asks for them (each taken once: a later load starts its own)
_previews: dict[Path, Future] = {}
_first_cores: dict[Path, Any] = {}  # the preview's decoded first core, until the full load takes it


def prepare(path: Path, interactive: bool) -> None:
    """For a big file: start the workers; for the TUI (`interactive`), also the first core's decode."""
    try:
        status = path.stat()
    except OSError:
        return  # the load reports it
    if status.st_size < PARALLEL_MIN_BYTES:
        return
    pool = worker_pool.shared_pool()
    if pool is None:
        return
    if interactive and status.st_size >= PREVIEW_MIN_BYTES:
        _previews[path.resolve()] = pool.submit(_first_core, str(path))


def take_preview(path: Path) -> Future | None:
    """The first core's decode started by `prepare`, if any."""
    return _previews.pop(path.resolve(), None)


def keep_first_core(path: Path, found: Any) -> None:
    """The first core as the preview decoded it (a `preview.FirstCorePart`), for the full load to take."""
    _first_cores[path.resolve()] = found


def take_first_core(path: Path, stamp: tuple[int, int]) -> Any:
    """The preview's decoded first core (a `preview.FirstCorePart`), if the file is as it was then (size and
    mtime). The loader takes its part only for a core it finds at the very same bytes: it was decoded by the
    same function from the same bytes."""
    found = _first_cores.pop(path.resolve(), None)
    if found is None or found.first.stamp != stamp:
        return None
    return found


def _first_core(path: str) -> object:
    from explorer.formats.scheduler_ir.preview import first_core_part  # in the worker, where numpy is loaded

    return first_core_part(Path(path), min_bytes=0)  # big enough: `prepare` looked
