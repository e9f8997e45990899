"""SQL over schedules (issue #58): the tables of explorer.schedule.tables, from one file or many, in DuckDB.

A `Session` is one DuckDB connection and a private scratch folder (DuckDB spills a big sort there, never into the
working directory; removed when the session closes). Its tables are views: over a loaded document's arrays (read
where they are, not copied) or, for many files, over one database in the scratch folder that gathers the tables
`explorer.schedule.query_files` wrote for each file (one table of many files' rows: DuckDB scanning hundreds of
attached databases at once took memory for each), attached read-only. The connection is then locked: no file is
read or written (no COPY, no read_csv, no ATTACH), no extension is installed or loaded, and the configuration cannot
be changed back; DuckDB's memory and its spill are capped. A result is fetched in chunks and stops at the row cap.

Every DuckDB call runs in the session's own thread while the caller waits interruptibly: Ctrl+C in the caller, or
`interrupt()` from another thread (the panel's Escape, a new run, quitting), stops the query at once (DuckDB checks
for a signal only now and then by itself), and the scratch folder goes with the session. A scratch folder carries
its owner's pid, so one left by a killed process is removed by the next session."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.document import Document
from explorer.schedule.tables import TABLES, Columns, build_table, lacking, null_when, sql_type

CHUNK_ROWS = 2048
ROW_CAP = 1_000_000  # rows a query gives before it stops with a message
STORE, STORE_FILE = "store", "tables.duckdb"  # many files' tables: a database in the scratch folder
MEMORY_LIMIT_BYTES = 2 * 2**30  # DuckDB's working memory (sorts, joins, aggregates) before it spills to the scratch
SPILL_LIMIT_BYTES = 4 * 2**30  # the scratch a query may fill, at most (and at most SPILL_SHARE of the free space)
SPILL_SHARE = 0.5
ROW_LIMIT_BYTES = 64 * 2**20  # a result row holding more text or bytes than this is refused
SCRATCH_PREFIX = "ir-explorer-query-"
INTERRUPT_WAIT_SECONDS = 5.0  # how long an interrupted call is waited for before the session is closed anyway


class QueryError(Exception):
    """DuckDB refused or failed the query: its one-line message."""


class Interrupted(Exception):
    """The query was stopped by `interrupt()` (the panel closed, a new run, the app quitting)."""


def spill_limit(folder: Path) -> int:
    """The spill cap: SPILL_LIMIT_BYTES, or SPILL_SHARE of the free space where the scratch lies if less."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return SPILL_LIMIT_BYTES
    return max(min(SPILL_LIMIT_BYTES, int(free * SPILL_SHARE)), 16 * 2**20)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive as far as this one can tell
        return True
    return True


def remove_abandoned_scratch(parent: Path | None = None) -> list[Path]:
    """Scratch folders of this user's sessions whose process is gone (killed: nothing removed them), removed."""
    parent = Path(parent or tempfile.gettempdir())
    removed = []
    try:
        entries = list(parent.glob(f"{SCRATCH_PREFIX}*"))
    except OSError:
        return []
    for entry in entries:
        owner = entry.name[len(SCRATCH_PREFIX) :].split("-", 1)[0]
        try:
            status = entry.lstat()
        except OSError:
            continue
        if not owner.isdigit() or status.st_uid != os.getuid() or not entry.is_dir() or entry.is_symlink():
            continue
        if int(owner) != os.getpid() and not _alive(int(owner)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


class _Runner:
    """One daemon thread that runs the session's DuckDB calls, so the caller waits where a signal reaches it and
    an abandoned call never holds the interpreter's exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pending = threading.Event()
        self.pending.set()

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        done = threading.Event()
        outcome: dict[str, Any] = {}

        def body() -> None:
            try:
                outcome["value"] = function(*args)
            except BaseException as error:  # handed to the caller
                outcome["error"] = error
            finally:
                done.set()

        with self._lock:  # one call at a time: a connection runs one statement
            self.pending = done
            threading.Thread(target=body, name="ir-explorer-query", daemon=True).start()
            done.wait()  # Ctrl+C raises KeyboardInterrupt here, in the caller's thread
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")


@dataclass
class Result:
    """A query's columns and its rows, fetched as they are read; the session closes when they are all read or
    `close` is called (a `with` block does)."""

    columns: list[str]
    rows: Iterator[tuple[Any, ...]]
    capped: Callable[[], bool]  # after the rows are read: whether they stopped at the cap
    close: Callable[[], None] = field(default=lambda: None)

    def __enter__(self) -> Result:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tables_named(sql: str) -> list[str]:
    """The tables a query names (a word of the query that is a table's name), so only those are built."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql.lower()))
    return [name for name in TABLES if name in words]


class Session:
    """A DuckDB connection to fill with tables, lock, then query once."""

    def __init__(self) -> None:
        remove_abandoned_scratch()
        self._scratch = tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
        self.folder = Path(self._scratch.name)
        self.spill_bytes = spill_limit(self.folder)
        self.connection = connect(self.folder / "spill", threads=2, allow_community_extensions=False,
                                  memory_limit=f"{MEMORY_LIMIT_BYTES // 2**20}MiB",
                                  max_temp_directory_size=f"{self.spill_bytes // 2**20}MiB")  # fmt: skip
        self._parts: dict[str, list[str]] = {}  # table -> the relations its view unites
        self._arrays = 0
        self._store_open = False
        self._runner = _Runner()
        self._interrupted = False
        self._closed = False

    def interrupt(self) -> None:
        """Stop the statement running now (from any thread); the caller waiting on it gets `Interrupted`."""
        self._interrupted = True
        if not self._closed:
            self.connection.interrupt()

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` on the runner; Ctrl+C while it runs interrupts DuckDB and closes the session."""
        import duckdb

        try:
            return self._runner.call(function, *args)
        except KeyboardInterrupt:
            self.interrupt()
            self._runner.pending.wait(INTERRUPT_WAIT_SECONDS)
            self.close()
            raise
        except duckdb.Error as error:
            if self._interrupted:
                raise Interrupted() from None
            raise QueryError(_refusal(error, self.spill_bytes)) from None
        except MemoryError:  # a result value bigger than the room left (the CLI bounds its address space)
            raise QueryError(f"the result does not fit in the memory a query may use: select less (a row may "
                             f"hold {ROW_LIMIT_BYTES // 2**20} MiB)") from None  # fmt: skip

    def add_arrays(self, name: str, columns: Columns) -> None:
        """One part of table `name`: arrays of this process, as they are."""
        relation = f"_arrays_{self._arrays}"
        self._arrays += 1
        self.connection.register(relation, columns)
        self._parts.setdefault(name, []).append(f"(SELECT {select_list(name, columns)} FROM {relation})")

    def open_store(self, names: list[str]) -> None:
        """Tables `names`, empty, in a database in the scratch folder (DuckDB keeps what does not fit in its memory
        there), for `add_database` to fill; read-only once locked."""
        self.connection.execute(f"ATTACH '{sql_string(str(self.folder / STORE_FILE))}' AS {STORE}")
        self._store_open = True
        for name in names:
            self.connection.execute(f"CREATE TABLE {STORE}.{name} ({table_schema(name)})")
            self._parts.setdefault(name, []).append(f"{STORE}.{name}")

    def add_database(self, database: Path, names: list[str]) -> None:
        """The rows of tables `names` of a database `query_files` wrote, added to the store's; the database is
        then deleted (the store holds them)."""
        self.connection.execute(f"ATTACH '{sql_string(str(database))}' AS incoming (READ_ONLY)")
        try:
            for name in names:
                self._call(self.connection.execute, f"INSERT INTO {STORE}.{name} BY NAME SELECT * FROM incoming.{name}")
        finally:
            self.connection.execute("DETACH incoming")
        database.unlink()

    def lock(self) -> None:
        """Make each table one view of its parts, then shut every door to the file system and to extensions."""
        if self._store_open:
            self.connection.execute(f"DETACH {STORE}")  # attached again read-only: a query cannot change the rows
            self.connection.execute(f"ATTACH '{sql_string(str(self.folder / STORE_FILE))}' AS {STORE} (READ_ONLY)")
        for name, parts in self._parts.items():
            union = " UNION ALL BY NAME ".join(f"SELECT * FROM {part}" for part in parts)
            self.connection.execute(f"CREATE VIEW {name} AS {union}")
        self.connection.execute("SET enable_external_access = false")
        self.connection.execute("SET lock_configuration = true")

    def run(self, sql: str, row_cap: int = ROW_CAP) -> Result:
        """The query's result; its rows streamed, at most `row_cap` of them. The session closes with it."""
        try:
            cursor = self._call(self.connection.execute, sql)
        except (QueryError, Interrupted):
            self.close()
            raise
        columns = [column[0] for column in cursor.description] if cursor.description else []
        state = {"capped": False}

        def rows() -> Iterator[tuple[Any, ...]]:
            given = 0
            try:
                while True:
                    chunk = self._call(cursor.fetchmany, CHUNK_ROWS)
                    if not chunk:
                        return
                    for row in chunk:
                        if given >= row_cap:
                            state["capped"] = True
                            return
                        if (size := row_bytes(row)) > ROW_LIMIT_BYTES:
                            raise QueryError(f"row {given + 1:,} holds {size / 2**20:,.0f} MiB, over the "
                                             f"{ROW_LIMIT_BYTES // 2**20} MiB a row may hold: select less")  # fmt: skip
                        given += 1
                        yield row
            finally:
                self.close()

        return Result(columns, rows(), lambda: state["capped"], self.close)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._runner.pending.is_set():
            self.connection.close()  # a call still running keeps its connection: the process's exit ends it
        self._scratch.cleanup()


def bound_address_space(headroom: int = 2**30) -> int | None:
    """Cap this process's address space at what it maps now plus DuckDB's memory limit and `headroom`, so that
    no SQL (a 2 GB string of repeat()) takes the machine: past it an allocation fails and the query is refused
    in words. For a process that runs one query and exits (the CLI): DuckDB keeps what it mapped, so a second
    query in the same process could be refused. The cap set, or None where it cannot be."""
    import resource

    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            mapped = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        cap = mapped + MEMORY_LIMIT_BYTES + headroom
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY and soft < cap:
            return soft
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError):
        return None
    return cap


def row_bytes(row: tuple[Any, ...]) -> int:
    """The text and bytes a row holds (what can grow without bound: a string of repeat())."""
    return sum(len(value) for value in row if isinstance(value, str | bytes | bytearray))


def _refusal(error: Exception, spill_bytes: int) -> str:
    """DuckDB's one line, and in the explorer's words when it ran out of room."""
    import duckdb

    if isinstance(error, duckdb.OutOfMemoryException):
        return (f"the query needs more than its {MEMORY_LIMIT_BYTES / 2**30:g} GiB of memory and "
                f"{spill_bytes / 2**30:.1f} GiB of scratch disk: narrow it (a WHERE, a LIMIT, fewer columns) "
                f"({_one_line(error)})")  # fmt: skip
    return _one_line(error)


def run_query(documents: list[tuple[str, Document]], sql: str, row_cap: int = ROW_CAP,
              session: Session | None = None) -> Result:  # fmt: skip
    """The query over loaded documents' tables, each table the rows of every file (the `file` column says which);
    in `session` when the caller keeps it to interrupt."""
    names = tables_named(sql)
    for name in names:
        said = [lacking(name, document) for _, document in documents]
        if all(said):
            raise QueryError(str(said[0]))
    session = session or Session()
    try:
        for name in names:
            for file, document in documents:
                session.add_arrays(name, build_table(name, document, file))
        session.lock()
    except BaseException:
        session.close()
        raise
    return session.run(sql, row_cap)


def connect(spill: Path, threads: int, **settings: str | bool | int) -> Any:
    """An in-memory DuckDB connection that loads no extension and spills into `spill` (DuckDB's default is ./.tmp
    in the working directory, never the user's to be written)."""
    import duckdb

    config: dict[str, str | bool | int | float | list[str]] = {
        "autoload_known_extensions": False, "autoinstall_known_extensions": False, "threads": threads,
        "temp_directory": str(spill), **settings}  # fmt: skip
    return duckdb.connect(":memory:", config=config)


def run_on_arrays(connection: Any, name: str, columns: Columns, statement: str) -> None:
    """`statement` with `{select}` standing for table `name`'s typed SELECT over `columns`, registered only while
    it runs (one table's arrays held at a time)."""
    connection.register("_arrays", columns)
    try:
        connection.execute(statement.format(select=f"SELECT {select_list(name, columns)} FROM _arrays"))
    finally:
        connection.unregister("_arrays")


def open_schedule(path: Path, strict: bool, companions: dict[str, Path | None] | None = None) -> Document:
    """The file loaded (with the companions given by name, besides those found beside it), refused in words when
    it is not a schedule (it has no tables)."""
    from explorer.api import open_document
    from explorer.errors import LoadError

    document = open_document(path, strict=strict, companions=companions)
    if document.schedule is None:
        raise LoadError(path, "", f"this {document.meta.format} file is not a schedule: it has no tables to query")
    return document


def select_list(name: str, columns: Columns) -> str:
    """The columns of table `name` in its SQL types, its "none" values (-1) as NULL; quoted, since `end` is an SQL
    keyword."""
    def value(column: str) -> str:
        null = null_when(name, column)
        read = f'NULLIF("{column}", {null})' if null is not None else f'"{column}"'
        return f'CAST({read} AS {sql_type(name, column)}) AS "{column}"'

    return ", ".join(value(column) for column in columns)


def table_schema(name: str) -> str:
    """The column list of a CREATE TABLE for table `name`."""
    return ", ".join(f'"{column}" {sql_type(name, column)}' for column in TABLES[name].columns)


def sql_string(text: str) -> str:
    """Text for inside an SQL string literal ('...')."""
    return text.replace("'", "''")


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
