"""SQL over many schedules at once (issue #58): each file read in a worker process, in parallel, its tables
written to a DuckDB database in the session's scratch folder; the query reads them from there.

Memory is bounded by the files being read, not by how many there are: a worker holds one document at a time and
drops it once its tables are written, and a file starts only while the estimates of the files in flight fit in the
memory available when the query began (the first always starts: its own loader refuses it if it cannot fit). The
query process holds no schedule: it gathers each file's tables into one store in the scratch folder, which DuckDB
reads through its buffer manager, within its memory limit.
A file that cannot be read is named (and is a row of `problems`); the others are still queried."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer import memory_guard
from explorer.errors import LoadError
from explorer.schedule.query import (
    MEMORY_LIMIT_BYTES,
    ROW_CAP,
    QueryError,
    Result,
    Session,
    connect,
    open_schedule,
    run_on_arrays,
    sql_string,
    tables_named,
)
from explorer.schedule.tables import Columns, build_table, lacking

if TYPE_CHECKING:
    from explorer.worker_pool import WorkerPool

# What a file in flight is assumed to take, per byte of the file: a schedule's load peaks at about 1.6 bytes a file
# byte and building its largest table (l2) adds its columns (BENCHMARKS.md, "SQL over schedules")
MEMORY_PER_FILE_BYTE = 2.0
NOT_READ = "not-read"  # the code of the `problems` row that names a file the query could not read


@dataclass(frozen=True)
class NotRead:
    file: str
    error: str  # one line: the file, where and what was expected
    location: str = ""  # where in the file (a JSON path, a byte), when the reader said


Failure = tuple[str, str]  # (why, where in the file)


def write_tables(path: str, names: list[str], strict: bool, database: str) -> dict[str, str]:
    """A worker's job: open one schedule, write the tables `names` into a new DuckDB database at `database`;
    returns why it has no rows for the tables it lacks the part of (`lacking`), by table."""
    document = open_schedule(Path(path), strict)
    said = {name: why for name in names if (why := lacking(name, document))}
    connection = _writer(Path(database).parent)
    connection.execute(f"ATTACH '{sql_string(database)}' AS written")
    try:
        for name in names:
            run_on_arrays(connection, name, build_table(name, document, path),
                          f"CREATE TABLE written.{name} AS {{select}}")  # fmt: skip
    finally:
        connection.execute("DETACH written")
    return said


_writer_of: tuple[Path, Any] | None = None  # (the scratch folder, this process's connection writing into it)


def _writer(folder: Path) -> Any:
    """This process's connection for writing tables into `folder`, made once for it (a connection takes 14 ms to
    make, a small file's tables 2 ms to write); what DuckDB spills goes there too. A connection made for another
    folder is closed."""
    global _writer_of
    if _writer_of is None or _writer_of[0] != folder:
        if _writer_of is not None:
            _writer_of[1].close()
        _writer_of = (folder, connect(folder / "spill-writer", threads=1))
    return _writer_of[1]


def query_files(paths: list[Path], sql: str, strict: bool = False, row_cap: int = ROW_CAP,
                on_read: Callable[[int, int], None] | None = None,
                before_run: Callable[[], object] | None = None) -> tuple[Result | None, list[NotRead]]:  # fmt: skip
    """The query over every file's tables (None when no file could be read) and the files that could not be;
    `before_run` is called once the files are read, just before the query runs (the CLI bounds its memory)."""
    names = tables_named(sql)
    session = Session()
    try:
        session.open_store(names)
        gather = lambda database: session.add_database(database, names)  # noqa: E731
        read, not_read, lacked = _write_all(paths, names, strict, session.folder, gather, on_read)
        if not read:
            session.close()
            return None, not_read
        for name in names:  # a table no file read has the part of: said, as for one file, not 0 rows
            said = [why[name] for why in lacked if name in why]
            if len(said) == len(lacked):
                raise QueryError(said[0])
        if "problems" in names and not_read:
            session.add_arrays("problems", _not_read_rows(not_read))
        session.lock()
    except BaseException:
        session.close()
        raise
    if before_run is not None:
        before_run()
    return session.run(sql, row_cap), not_read


Lacked = dict[str, str]  # a file's tables it has no rows for, by table: why (`tables.lacking`)


def _write_all(paths: list[Path], names: list[str], strict: bool, folder: Path, gather: Callable[[Path], None],
               on_read: Callable[[int, int], None] | None) -> tuple[int, list[NotRead], list[Lacked]]:  # fmt: skip
    """Each file's tables written to a database, read by as many workers as the machine has CPUs and its memory
    allows, and handed to `gather` in the files' order (a file done early waits on disk for those before it);
    returns how many were read, the files that were not, and for each file read the tables it lacks (why)."""
    from explorer import worker_pool

    jobs = [(str(path), folder / f"file-{k}.duckdb") for k, path in enumerate(paths)]
    outcome: dict[int, Failure | None] = {}  # job -> None when written, else why not
    lacked: list[dict[str, str]] = []
    gathered = 0  # jobs before this one are all gathered (or failed)

    def finished(k: int, done: tuple[Failure | None, dict[str, str]]) -> None:
        nonlocal gathered
        error, lacking_here = done
        outcome[k] = error
        if error is None:
            lacked.append(lacking_here)
        while gathered in outcome:
            if outcome[gathered] is None:
                gather(jobs[gathered][1])
            gathered += 1
        if on_read is not None:
            on_read(len(outcome), len(jobs))

    count = min(worker_pool.worker_count(), len(jobs))
    if count < 2:
        for k, (path, database) in enumerate(jobs):
            finished(k, _outcome(functools.partial(write_tables, path, names, strict, str(database))))
    else:
        # a file's cores are decoded where it is read: the file workers start no workers of their own
        pool = worker_pool.WorkerPool(count, environment={"IR_EXPLORER_WORKERS": "0"})
        try:
            for k, done in _run_bounded(pool, jobs, names, strict):
                finished(k, done)
        finally:
            pool.stop()
    failed = [NotRead(jobs[k][0], *error) for k, error in sorted(outcome.items()) if error is not None]
    return len(jobs) - len(failed), failed, lacked


def _run_bounded(pool: WorkerPool, jobs: list[tuple[str, Path]], names: list[str],
                 strict: bool) -> Iterator[tuple[int, tuple[Failure | None, dict[str, str]]]]:  # fmt: skip
    """(job, its outcome: `_outcome`) as each finishes, the jobs started as `startable` allows."""
    available = memory_guard.available_bytes()
    # what this process's DuckDB may take while it gathers the tables is not the workers' to use
    budget = None if available is None or memory_guard.guard_off() else max(available - MEMORY_LIMIT_BYTES, 0)
    estimates = [_estimate(Path(path)) for path, _ in jobs]
    waiting = list(range(len(jobs)))
    running: dict[Future, int] = {}
    while waiting or running:
        starting = startable([estimates[k] for k in waiting], [estimates[k] for k in running.values()], budget,
                             pool.count)  # fmt: skip
        for k in waiting[:starting]:
            path, database = jobs[k]
            running[pool.submit(write_tables, path, names, strict, str(database))] = k
        del waiting[:starting]
        done, _ = wait(list(running), return_when=FIRST_COMPLETED)
        for future in done:
            yield running.pop(future), _outcome(future.result)


def startable(waiting: list[int], in_flight: list[int], budget: int | None, workers: int) -> int:
    """How many of the waiting files (their memory estimates, in order) to start now: while a worker is free and
    their estimates, with those in flight, fit in `budget` (None: no limit). With nothing in flight the first
    always starts, so a file too big for the budget is still tried, alone (its loader refuses it in words)."""
    started = 0
    taken = sum(in_flight)
    for estimate in waiting:
        if len(in_flight) + started >= workers:
            break
        if budget is not None and (in_flight or started) and taken + estimate > budget:
            break
        taken += estimate
        started += 1
    return started


def _outcome(job: Callable[[], dict[str, str]]) -> tuple[Failure | None, dict[str, str]]:
    """(None, the tables the file lacks) when the job wrote its tables, else (the one line saying why not and
    where, {})."""
    from explorer import worker_pool

    try:
        return None, job()
    except LoadError as error:
        return (str(error), error.location), {}
    except worker_pool.WorkerDied as error:
        return (f"the process reading it ended ({error}): out of memory?", ""), {}
    except Exception as error:  # a bug reading one file must not lose the others' answer
        return (f"internal error: {type(error).__name__}: {error}", ""), {}


def _estimate(path: Path) -> int:
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return memory_guard.BASE_BYTES + int(size * MEMORY_PER_FILE_BYTE)


def _not_read_rows(not_read: list[NotRead]) -> Columns:
    import numpy as np

    def column(values: list[str]) -> np.ndarray:
        return np.asarray(values, dtype=object)

    return {"file": column([n.file for n in not_read]), "severity": column(["error"] * len(not_read)),
            "code": column([NOT_READ] * len(not_read)), "message": column([n.error for n in not_read]),
            "location": column([n.location for n in not_read])}  # fmt: skip
