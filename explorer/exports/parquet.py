"""`export FILE --parquet DIR` (issue #58): `query`'s tables as Parquet files, one per table (DIR/workloads.parquet,
...), for DuckDB, Polars or a Spark/Trino cluster to read many schedules at once. Each file is written whole or
not at all; DuckDB writes it in a private temporary folder, never into DIR."""

from __future__ import annotations

import tempfile
from pathlib import Path

from explorer.document import Document
from explorer.errors import LoadError
from explorer.schedule.query import select_list, sql_string
from explorer.schedule.tables import TABLES, build_table
from explorer.writing import write_atomically


def write_parquet(document: Document, folder: Path, force: bool = False) -> list[Path]:
    """Every table of the document's schedule as DIR/<table>.parquet; the files written."""
    import duckdb

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise LoadError(folder, "", "is not a folder: --parquet takes the folder the tables go in")
    if not folder.parent.is_dir():
        raise LoadError(folder, "", f"the folder {str(folder.parent)!r} does not exist")
    folder.mkdir(exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="ir-explorer-parquet-") as scratch:
        settings: dict[str, str | bool | int | float | list[str]] = {
            "autoload_known_extensions": False, "autoinstall_known_extensions": False, "threads": 2,
            "temp_directory": str(Path(scratch) / "spill")}  # fmt: skip
        connection = duckdb.connect(":memory:", config=settings)
        for name in TABLES:
            columns = build_table(name, document, str(document.meta.source))
            connection.register("_arrays", columns)
            made = Path(scratch) / f"{name}.parquet"
            selected = select_list(name, columns)
            connection.execute(f"COPY (SELECT {selected} FROM _arrays) TO '{sql_string(str(made))}' (FORMAT parquet)")
            connection.unregister("_arrays")  # one table's arrays held at a time
            del columns
            target = folder / f"{name}.parquet"
            write_atomically(target, made.read_bytes(), force)
            made.unlink()
            written.append(target)
        connection.close()
    return written
