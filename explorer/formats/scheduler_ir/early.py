"""What starts as soon as a big schedule is named, before the TUI or the CLI has imported anything heavy: the
worker processes that will decode it (`explorer.worker_pool`) start, one reads the top level (where each core
lies), and for the TUI another decodes the first core for the preview. The loader and the preview then take
these jobs instead of starting their own. Imports nothing heavy itself (no numpy), so calling it costs the
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
_top_levels: dict[Path, tuple[tuple[int, int], Future]] = {}  # with the file's (size, mtime_ns) when started
_first_cores: dict[Path, Any] = {}  # the preview's decoded first core, until the full load takes it


def prepare(path: Path, interactive: bool) -> None:
    """For a big file: start the workers and the top level's read; for the TUI (`interactive`), also the first
    core's decode, first, so that it has a worker of its own."""
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
    stamp = (status.st_size, status.st_mtime_ns)
    _top_levels[path.resolve()] = (stamp, pool.submit(_top_level, str(path), stamp))


def take_preview(path: Path) -> Future | None:
    """The first core's decode started by `prepare`, if any."""
    return _previews.pop(path.resolve(), None)


def take_top_level(path: Path, stamp: tuple[int, int]) -> Future | None:
    """The top level's read started by `prepare`, if any, and if the file is still as it was then."""
    started = _top_levels.pop(path.resolve(), None)
    if started is None or started[0] != stamp:
        return None
    return started[1]


def keep_first_core(path: Path, found: Any) -> None:
    """The first core as the preview decoded it (a `preview.FirstCorePart`), for the full load to take."""
    _first_cores[path.resolve()] = found


def take_first_core(path: Path, stamp: tuple[int, int], spans: dict[int, tuple[int, int]]) -> Any:
    """The preview's decoded first core, if it is the very core the full load found: the same file as it was
    (size and mtime) and the same bytes in it. It was decoded by the same function from the same bytes."""
    found = _first_cores.pop(path.resolve(), None)
    if found is None or found.first.stamp != stamp:
        return None
    if spans.get(found.part.core) != (found.first.offset, found.first.length):
        return None
    return found.part


def _first_core(path: str) -> object:
    from explorer.formats.scheduler_ir.preview import first_core_part  # in the worker, where numpy is loaded

    return first_core_part(Path(path), min_bytes=0)  # big enough: `prepare` looked


def _top_level(path: str, stamp: tuple[int, int]) -> object:
    from explorer.formats.scheduler_ir.reader import read_top_level  # in the worker

    return read_top_level(path, stamp)
