"""SQL over schedules (issue #58): the tables of explorer.schedule.tables, from one file or many, in DuckDB.

The connection is locked before any table is registered: no file is read or written (no COPY, no read_csv, no
ATTACH), no extension is installed or loaded, and the configuration cannot be changed back; DuckDB's memory is
capped. Only the tables a query names are built. A result is fetched in chunks and stops at the row cap."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from explorer.document import Document
from explorer.schedule.tables import NULL_WHEN_MINUS_ONE, TABLES, Columns, build_table

CHUNK_ROWS = 2048
ROW_CAP = 1_000_000  # rows a query gives before it stops with a message
MEMORY_LIMIT = "2GB"  # DuckDB's own working memory (sorts, joins, aggregates), past which a query fails in words


class QueryError(Exception):
    """DuckDB refused or failed the query: its one-line message."""


@dataclass
class Result:
    columns: list[str]
    rows: Iterator[tuple[Any, ...]]  # fetched as they are read
    capped: Callable[[], bool]  # after the rows are read: whether they stopped at the cap


def tables_named(sql: str) -> list[str]:
    """The tables a query names (a word of the query that is a table's name), so only those are built."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql.lower()))
    return [name for name in TABLES if name in words]


def locked_connection() -> Any:
    import duckdb

    return duckdb.connect(":memory:", config={
        "enable_external_access": False, "autoload_known_extensions": False,
        "autoinstall_known_extensions": False, "allow_community_extensions": False,
        "memory_limit": MEMORY_LIMIT, "threads": 2, "lock_configuration": True,
    })  # fmt: skip


def run_query(documents: list[tuple[str, Document]], sql: str, row_cap: int = ROW_CAP) -> Result:
    """The query over the named files' tables, each table the rows of every file (the `file` column says which)."""
    import duckdb

    connection = locked_connection()
    for name in tables_named(sql):
        register(connection, name, _joined([build_table(name, document, file) for file, document in documents]))
    try:
        cursor = connection.execute(sql)
    except duckdb.Error as error:
        raise QueryError(_one_line(error)) from None
    columns = [column[0] for column in cursor.description] if cursor.description else []
    state = {"capped": False}

    def rows() -> Iterator[tuple[Any, ...]]:
        given = 0
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

    return Result(columns, rows(), lambda: state["capped"])


def register(connection: Any, name: str, columns: Columns) -> None:
    """Table `name` as a view over its arrays (read where they are, not copied), its "none" values as NULL."""
    nulls = NULL_WHEN_MINUS_ONE.get(name, ())
    connection.register(f"_{name}_arrays", columns)
    selected = ", ".join(f'NULLIF("{column}", -1) AS "{column}"' if column in nulls else f'"{column}"'
                         for column in columns)  # quoted: `end` is an SQL keyword  # fmt: skip
    connection.execute(f"CREATE VIEW {name} AS SELECT {selected} FROM _{name}_arrays")


def _joined(parts: list[Columns]) -> Columns:
    import numpy as np

    if len(parts) == 1:
        return parts[0]
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
