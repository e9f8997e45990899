"""What starts as soon as a big schedule is named, before the TUI or the CLI has imported anything heavy: the
worker processes that will decode it (`explorer.worker_pool`) start (they take a third of a second to be ready),
and for the TUI one decodes the first core for the preview. The preview takes that job instead of starting its
own, and the loader takes the core it decoded. Imports nothing heavy itself (no numpy), so calling it costs the
start-up nothing."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from explorer import worker_pool

PARALLEL_MIN_BYTES = 32 << 20  # smaller files decode in about a second in one process: workers would not pay
PREVIEW_MIN_BYTES = 64 << 20  # a smaller file loads whole in about a second: no preview

# The first core's decode (a Future of a `preview.FirstCorePart`, or of None), started early for the TUI, until the
# full load takes it: the preview and the load use the same decode
_first_cores: dict[Path, Future] = {}
# Where every core lies (a Future of `layout.core_spans_at`), looked for by the other worker meanwhile, with the
# file's (size, mtime_ns) it was asked for: the TUI starts its load only after its first paint
_spans: dict[Path, tuple[tuple[int, int], Future]] = {}


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
        # urgent: the screen waits for it (it runs at the TUI's priority, before the other cores)
        _first_cores[path.resolve()] = pool.submit(_first_core, str(path), urgent=True)
        stamp = (status.st_size, status.st_mtime_ns)
        _spans[path.resolve()] = (stamp, pool.submit(_core_spans, str(path), stamp))


def first_core_job(path: Path) -> Future | None:
    """The first core's decode started by `prepare`, if any, for the preview; it stays for the full load."""
    return _first_cores.get(path.resolve())


def take_first_core(path: Path) -> Future | None:
    """The first core's decode, for the full load (taken once). The load takes its part only for a core at the
    very same bytes of the file as it is now: it was decoded by the same function from the same bytes."""
    return _first_cores.pop(path.resolve(), None)


def take_spans(path: Path, stamp: tuple[int, int]) -> Future | None:
    """The cores' spans looked for since `prepare`, for the full load (taken once), if asked for the file as
    it is now (`stamp`)."""
    asked = _spans.pop(path.resolve(), None)
    return asked[1] if asked is not None and asked[0] == stamp else None


def _core_spans(path: str, stamp: tuple[int, int]) -> object:
    from explorer.formats.scheduler_ir.layout import core_spans_at

    return core_spans_at(path, stamp)


def _first_core(path: str) -> object:
    from explorer.formats.scheduler_ir.preview import first_core_part  # in the worker, where numpy is loaded

    return first_core_part(Path(path), min_bytes=0)  # big enough: `prepare` looked
