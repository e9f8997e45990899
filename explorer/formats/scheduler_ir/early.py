"""What starts as soon as a big schedule is named, before the TUI or the CLI has imported anything heavy: the
worker processes that will decode it (`explorer.worker_pool`) start (they take a third of a second to be ready),
and for the TUI one decodes the first core for the preview. The preview takes that job instead of starting its
own, and the loader takes the core it decoded. Imports nothing heavy itself (no numpy), so calling it costs the
start-up nothing."""

from __future__ import annotations

from pathlib import Path

from explorer import worker_pool
from explorer.formats.scheduler_ir import started
from explorer.formats.scheduler_ir.started import PARALLEL_MIN_BYTES, PREVIEW_MIN_BYTES


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
        # The screen waits for these, in this order, ahead of any core of the load: the first core's first
        # workloads (urgent: the first worker, at the TUI's priority), then the whole first core (the next worker)
        started.first_prefixes[path.resolve()] = pool.submit(_first_core, str(path), True, urgent=True)
        started.first_cores[path.resolve()] = pool.submit(_first_core, str(path))
        stamp = (status.st_size, status.st_mtime_ns)
        started.span_searches[path.resolve()] = (stamp, pool.submit(_core_spans, str(path), stamp))


def _core_spans(path: str, stamp: tuple[int, int]) -> object:
    from explorer.formats.scheduler_ir.layout import core_spans_at

    return core_spans_at(path, stamp)


def _first_core(path: str, prefix: bool = False) -> object:
    from explorer.formats.scheduler_ir.first_core import first_core_part  # in the worker, where numpy is loaded

    # big enough: `prepare` looked; `prefix`: the core's first workloads only
    return first_core_part(Path(path), min_bytes=0, prefix_bytes=started.PREFIX_BYTES if prefix else None)
