"""`export FILE --parquet DIR` (issue #58): `query`'s tables as Parquet files, one per table (DIR/workloads.parquet,
...), for DuckDB, Polars or a Spark/Trino cluster to read many schedules at once. Each file is written whole or
not at all; DuckDB writes it in a private temporary folder, never into DIR."""

from __future__ import annotations

import tempfile
from pathlib import Path

from explorer.document import Document
from explorer.errors import LoadError
from explorer.schedule.query import connect, run_on_arrays, sql_string
from explorer.schedule.tables import TABLES, build_table
from explorer.writing import in_words, refuse_inputs, write_atomically


def write_parquet(document: Document, folder: Path, force: bool = False,
                  inputs: list[Path] | None = None) -> list[Path]:  # fmt: skip
    """Every table of the document's schedule as DIR/<table>.parquet; the files written. Nothing is written when
    any of them would replace a file the command read (`inputs`: the schedule named DIR/l2.parquet, say)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise LoadError(folder, "", "is not a folder: --parquet takes the folder the tables go in")
    if not folder.parent.is_dir():
        raise LoadError(folder, "", f"the folder {str(folder.parent)!r} does not exist")
    for name in TABLES:
        refuse_inputs(folder / f"{name}.parquet", inputs or [Path(document.meta.source)])
    try:
        folder.mkdir(exist_ok=True)
    except OSError as error:
        raise LoadError(folder, "", f"cannot make the folder: {in_words(error)}") from None
    written = []
    with tempfile.TemporaryDirectory(prefix="ir-explorer-parquet-") as scratch:
        connection = connect(Path(scratch) / "spill", threads=2)
        for name in TABLES:
            made = Path(scratch) / f"{name}.parquet"
            run_on_arrays(connection, name, build_table(name, document, str(document.meta.source)),
                          f"COPY ({{select}}) TO '{sql_string(str(made))}' (FORMAT parquet)")  # fmt: skip
            target = folder / f"{name}.parquet"
            write_atomically(target, made.read_bytes(), force)
            made.unlink()
            written.append(target)
        connection.close()
    return written
