"""`ir-explorer query FILE... "SQL"` (issue #58): the rows as a table, CSV or JSON on stdout, streamed, stopped at
the row cap with a message; a SQL error is one line and exit 2."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from itertools import islice
from typing import Any

from explorer.errors import LoadError

TABLE_SAMPLE = 200  # rows the table form reads before it fixes its column widths


def run_query_command(args: argparse.Namespace) -> int:
    from explorer.api import open_document
    from explorer.schedule.query import QueryError, run_query, tables_named

    if not tables_named(args.sql):
        print("ir-explorer query: the query names none of the tables: workloads, l2, wl0, transfers, layers, "
              "incidents, problems", file=sys.stderr)  # fmt: skip
        return 2
    documents = []
    for path in args.files:
        document = open_document(path, strict=args.strict)
        if document.schedule is None:
            raise LoadError(path, "", f"this {document.meta.format} file is not a schedule: it has no tables to query")
        documents.append((str(path), document))
    try:
        result = run_query(documents, args.sql, row_cap=max(args.max_rows, 0))
        if args.format == "json":
            rows = [[_plain(value) for value in row] for row in result.rows]
            from explorer.contracts import dump

            payload = {"columns": result.columns, "rows": rows, "row_cap": args.max_rows, "capped": result.capped()}
            sys.stdout.write(dump("query", payload, None) + "\n")
        elif args.format == "csv":
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(result.columns)
            for row in result.rows:
                writer.writerow(["" if value is None else _plain(value) for value in row])
        else:
            _print_table(result.columns, result.rows)
    except QueryError as error:
        print(f"ir-explorer query: {error}", file=sys.stderr)
        return 2
    if result.capped():
        print(f"ir-explorer query: stopped at {args.max_rows:,} rows (--max-rows)", file=sys.stderr)
    return 0


def _print_table(columns: list[str], rows: Any) -> None:
    first = list(islice(rows, TABLE_SAMPLE))
    texts = [[_text(value) for value in row] for row in first]
    widths = [max([len(name), *(len(row[k]) for row in texts)]) for k, name in enumerate(columns)]
    print("  ".join(name.ljust(width) for name, width in zip(columns, widths, strict=True)).rstrip())
    print("  ".join("-" * width for width in widths))
    for row in texts:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(_text(value).rjust(width) for value, width in zip(row, widths, strict=True)).rstrip())


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}" if not value.is_integer() or abs(value) >= 1e15 else str(int(value))
    return str(value)


def _plain(value: Any) -> Any:
    """A value JSON and CSV can hold: numbers and text as they are, NaN as null, anything else as its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    return json.loads(json.dumps(value, default=str))
