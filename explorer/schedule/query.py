"""SQL over schedules (issue #58): the tables of explorer.schedule.tables, from one file or many, in DuckDB.

A `Session` is one DuckDB connection and a private scratch folder (DuckDB spills a big sort there, never into the
working directory; removed when the session closes). Its tables are views: over a loaded document's arrays (read
where they are, not copied) or, for many files, over one database in the scratch folder that gathers the tables
`explorer.schedule.query_files` wrote for each file (one table of many files' rows: DuckDB scanning hundreds of
attached databases at once took memory for each), attached read-only. The connection is then locked: no file is
read or written (no COPY, no read_csv, no ATTACH), no extension is installed or loaded, and the configuration cannot
be changed back; DuckDB's memory is capped. A result is fetched in chunks and stops at the row cap."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.document import Document
from explorer.schedule.tables import NULL_WHEN_MINUS_ONE, TABLES, Columns, build_table, sql_type

CHUNK_ROWS = 2048
ROW_CAP = 1_000_000  # rows a query gives before it stops with a message
STORE, STORE_FILE = "store", "tables.duckdb"  # many files' tables: a database in the scratch folder
MEMORY_LIMIT_BYTES = 2 * 2**30  # DuckDB's working memory (sorts, joins, aggregates) before it spills to the scratch


class QueryError(Exception):
    """DuckDB refused or failed the query: its one-line message."""


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
        self._scratch = tempfile.TemporaryDirectory(prefix="ir-explorer-query-")
        self.folder = Path(self._scratch.name)
        self.connection = connect(self.folder / "spill", threads=2, allow_community_extensions=False,
                                  memory_limit=f"{MEMORY_LIMIT_BYTES // 2**20}MiB")  # fmt: skip
        self._parts: dict[str, list[str]] = {}  # table -> the relations its view unites
        self._arrays = 0
        self._store_open = False

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
                self.connection.execute(f"INSERT INTO {STORE}.{name} BY NAME SELECT * FROM incoming.{name}")
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
        import duckdb

        try:
            cursor = self.connection.execute(sql)
        except duckdb.Error as error:
            self.close()
            raise QueryError(_one_line(error)) from None
        columns = [column[0] for column in cursor.description] if cursor.description else []
        state = {"capped": False}

        def rows() -> Iterator[tuple[Any, ...]]:
            given = 0
            try:
                while True:
                    try:
                        chunk = cursor.fetchmany(CHUNK_ROWS)
                    except duckdb.Error as error:
                        raise QueryError(_one_line(error)) from None
                    if not chunk:
                        return
                    for row in chunk:
                        if given >= row_cap:
                            state["capped"] = True
                            return
                        given += 1
                        yield row
            finally:
                self.close()

        return Result(columns, rows(), lambda: state["capped"], self.close)

    def close(self) -> None:
        self.connection.close()
        self._scratch.cleanup()


def run_query(documents: list[tuple[str, Document]], sql: str, row_cap: int = ROW_CAP) -> Result:
    """The query over loaded documents' tables, each table the rows of every file (the `file` column says which)."""
    session = Session()
    try:
        for name in tables_named(sql):
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


def open_schedule(path: Path, strict: bool) -> Document:
    """The file loaded, refused in words when it is not a schedule (it has no tables)."""
    from explorer.api import open_document
    from explorer.errors import LoadError

    document = open_document(path, strict=strict)
    if document.schedule is None:
        raise LoadError(path, "", f"this {document.meta.format} file is not a schedule: it has no tables to query")
    return document


def select_list(name: str, columns: Columns) -> str:
    """The columns of table `name` in its SQL types, its "none" values (-1) as NULL; quoted, since `end` is an SQL
    keyword."""
    nulls = NULL_WHEN_MINUS_ONE.get(name, ())

    def value(column: str) -> str:
        read = f'NULLIF("{column}", -1)' if column in nulls else f'"{column}"'
        return f'CAST({read} AS {sql_type(column)}) AS "{column}"'

    return ", ".join(value(column) for column in columns)


def table_schema(name: str) -> str:
    """The column list of a CREATE TABLE for table `name`."""
    return ", ".join(f'"{column}" {sql_type(column)}' for column in TABLES[name].columns)


def sql_string(text: str) -> str:
    """Text for inside an SQL string literal ('...')."""
    return text.replace("'", "''")


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
