"""`ir-explorer query FILE... "SQL"` (issue #58): the rows as a table, CSV or JSON on stdout, streamed, stopped at
the row cap with a message; a SQL error is one line and exit 2. One file is queried where it is loaded; several
are read in parallel worker processes (explorer.schedule.query_files), and a file that cannot be read is named on
standard error, the others still answer, and the exit status is 1."""

from __future__ import annotations

import argparse
import csv
import json
import math
import signal
import sys
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.cli_parsers import given_companions

if TYPE_CHECKING:
    from explorer.schedule.query import Result
    from explorer.schedule.query_files import NotRead

TABLE_SAMPLE = 200  # rows the table form reads before it fixes its column widths


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the query is interrupted and its scratch removed, as for Ctrl+C


def run_query_command(args: argparse.Namespace) -> int:
    from explorer.schedule.query import QueryError, bound_address_space, open_schedule, run_query, tables_named
    from explorer.schedule.tables import TABLES

    for each in (signal.SIGTERM, signal.SIGHUP):  # a closed SSH session, kill: the spill goes too
        signal.signal(each, _stop)

    if not tables_named(args.sql):
        print(f"ir-explorer query: the query names none of the tables: {', '.join(TABLES)}", file=sys.stderr)
        return 2
    row_cap = max(args.max_rows, 0)
    not_read: list[NotRead] = []
    given: dict[str, Path | None] = {kind: path for kind, path in given_companions(args).items() if path}
    if given and len(args.files) > 1:
        print(f"ir-explorer query: --{', --'.join(given)} name one schedule's companions: give one FILE (several "
              "schedules find theirs beside them)", file=sys.stderr)  # fmt: skip
        return 2
    try:
        if len(args.files) == 1:
            document = open_schedule(args.files[0], args.strict, given or None)
            bound_address_space()  # the file is loaded: from here on only the query grows
            result = run_query([(str(args.files[0]), document)], args.sql, row_cap)
        else:
            from explorer.schedule.query_files import query_files

            progress = _progress()
            try:
                found, not_read = query_files(args.files, args.sql, args.strict, row_cap, progress,
                                              before_run=bound_address_space)  # fmt: skip
            except KeyboardInterrupt:
                if progress is not None:
                    print(file=sys.__stderr__)  # the shell's prompt on its own line, not after the count
                raise
            for failure in not_read:
                print(f"ir-explorer query: not read: {failure.error}", file=sys.stderr)
            if found is None:
                print("ir-explorer query: no file could be read", file=sys.stderr)
                return 2
            result = found
        with result:
            _write(result, args, not_read)
    except QueryError as error:
        print(f"ir-explorer query: {error}", file=sys.stderr)
        return 2
    if result.capped():
        print(f"ir-explorer query: stopped at {args.max_rows:,} rows (--max-rows)", file=sys.stderr)
    if not_read:
        print(f"ir-explorer query: {len(not_read)} of {len(args.files)} files not read: the rows are the others'",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _progress() -> Callable[[int, int], None] | None:
    """`read 3 of 100 files` on standard error while they are read, when it is a terminal (written to it directly:
    the command's own stderr shows control characters as text)."""
    terminal = sys.__stderr__
    if terminal is None or not terminal.isatty():
        return None

    def said(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rir-explorer query: read {done:,} of {total:,} files", end=end, file=terminal, flush=True)

    return said


def _write(result: Result, args: argparse.Namespace, not_read: list[NotRead]) -> None:
    if args.format == "json":
        _write_json(result, args, not_read)
    elif args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.columns)
        for row in result.rows:
            writer.writerow(["" if value is None else _plain(value) for value in row])
    else:
        _print_table(result.columns, result.rows)


def _write_json(result: Result, args: argparse.Namespace, not_read: list[NotRead]) -> None:
    """The query contract, its rows written as they are read (held all at once, a million rows took gigabytes):
    the parts before and after the rows are the contract's own output, validated, around them."""
    import msgspec

    from explorer.contracts import dump

    def around(capped: bool) -> tuple[str, str]:
        payload = {"columns": result.columns, "rows": [], "row_cap": args.max_rows, "capped": capped,
                   "not_read": [{"file": n.file, "error": n.error} for n in not_read]}  # fmt: skip
        head, marker, tail = dump("query", payload, None).partition('"rows":[]')
        assert marker, "the query contract has a rows list"
        return head + '"rows":[', "]" + tail

    sys.stdout.write(around(False)[0])
    for index, row in enumerate(result.rows):
        sys.stdout.write(("," if index else "") + msgspec.json.encode([_plain(value) for value in row]).decode())
    sys.stdout.write(around(result.capped())[1] + "\n")


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
