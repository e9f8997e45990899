"""What starts as soon as a big schedule is named, before the TUI or the CLI has imported anything heavy: the
worker processes that will decode it (`explorer.worker_pool`) start (they take a third of a second to be ready),
and for the TUI one decodes the first core for the preview. The preview takes that job instead of starting its
own, and the loader takes the core it decoded. Imports nothing heavy itself (no numpy), so calling it costs the
start-up nothing."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from explorer import worker_pool
from explorer.file_spans import FileIdentity
from explorer.formats.scheduler_ir import started
from explorer.formats.scheduler_ir.started import PREVIEW_MIN_BYTES, parallel_min_bytes


def prepare(path: Path, interactive: bool) -> None:
    """For a big file: start the workers; for the TUI (`interactive`), also the first core's decode."""
    try:
        status = path.stat()
    except OSError:
        return  # the load reports it
    if status.st_size < parallel_min_bytes():
        return
    pool = worker_pool.shared_pool()
    if pool is None:
        return
    if interactive and status.st_size >= PREVIEW_MIN_BYTES:
        # The screen waits for this, ahead of any core of the load: the first core, or its first workloads when
        # it is big (urgent: the first worker, at the TUI's priority, takes it; then, for a big core, the whole)
        sizes = (started.PREFIX_BYTES, started.PREFIX_MIN_CORE_BYTES)  # sent: the worker's module is not this one
        first = pool.submit(_first_core, str(path), *sizes, urgent=True)
        started.first_looks[path.resolve()] = first
        started.first_cores[path.resolve()] = _whole_first_core(pool, path, first)
        stamp = FileIdentity.of(status)
        started.span_searches[path.resolve()] = (stamp, pool.submit(_core_spans, str(path), stamp))


def _core_spans(path: str, stamp: FileIdentity) -> object:
    from explorer.formats.scheduler_ir.layout import core_spans_at

    return core_spans_at(path, stamp)


def _first_core(path: str, prefix_bytes: int = 0, cut_above: int = 0) -> object:
    """In a worker: the first core (big enough: `prepare` looked), or only the first workloads, `prefix_bytes`
    of them, of one over `cut_above` bytes."""
    from explorer.formats.scheduler_ir.first_core import first_core_part  # in the worker, where numpy is loaded

    return first_core_part(Path(path), 0, prefix_bytes or None, cut_above)


def _whole_first_core(pool: worker_pool.WorkerPool, path: Path, first: Future) -> Future:
    """The whole first core: the first look's part when that is the whole core; after a cut, the whole core
    decoded next, urgent too: submitted as the cut is answered, it goes to the first worker (the pool hands jobs
    to its workers in order), which is free again and still at the TUI's priority."""
    whole: Future = Future()

    def first_done(done: Future) -> None:
        found = None if done.cancelled() or done.exception() is not None else done.result()
        if found is None or found.prefix is None:
            _settle(whole, done)
            return
        try:
            rest = pool.submit(_first_core, str(path), urgent=True)
        except RuntimeError:  # the pool stopped meanwhile (the program is ending)
            whole.set_result(None)
            return
        rest.add_done_callback(lambda answered: _settle(whole, answered))

    first.add_done_callback(first_done)
    return whole


def _settle(future: Future, source: Future) -> None:
    """`future` ends as `source` did (None for a cancelled job)."""
    if source.cancelled():
        future.set_result(None)
    elif source.exception() is not None:
        future.set_exception(source.exception())
    else:
        future.set_result(source.result())
