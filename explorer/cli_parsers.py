"""The command line's parsers: `ir-explorer FILE` (the TUI) and each subcommand, with their flags (what `--help`
and the README say is read from here)."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer import __version__

# widgets.views names them too (tested)
SCREENSHOT_VIEWS = ("tree", "timeline", "buffers", "layout", "source", "graph", "memory", "mesh")


UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


# Every subcommand and what it takes: `ir-explorer --help` lists them from here, and the CLI dispatches on it
# (a test holds each synopsis to its parser's arguments).
SUBCOMMANDS = {
    "info": "FILE", "check": "FILE", "tensor": "FILE TENSOR_ID", "graph": "FILE", "export": "FILE", "diff": "A B",
    "relocate": "FILE", "query": "FILE... SQL", "serve": "FILE", "screenshot": "FILE", "schema": "NAME",
    "cache": "[--clear]",
}  # fmt: skip


def base_parser() -> argparse.ArgumentParser:
    listed = ", ".join(f"{name} {takes}" for name, takes in SUBCOMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="ir-explorer",
        description="Explore ML model files and accelerator schedules in the terminal.",
        epilog=f"Subcommands: {listed} (run 'ir-explorer SUBCOMMAND --help' for details). With only FILE, the "
        "interactive explorer opens.",
    )
    parser.add_argument("--version", action=VersionAction, help="show the version, the formats and any broken plug-in")
    return parser


class VersionAction(argparse.Action):
    """`--version`: the version, every format it can open, and each plug-in that failed to load (and why)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from explorer.registry import registry

        found = registry()
        print(f"ir-explorer {__version__}")
        print("formats: " + ", ".join(f.name for f in found.formats))
        for failure in found.plugin_failures:
            print(failure)
        parser.exit()


def tui_parser() -> argparse.ArgumentParser:
    parser = base_parser()
    parser.add_argument("file", nargs="?", type=Path, help="the file to open (a bundled sample when omitted)")
    parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
    parser.add_argument(
        "--bookmarks", type=Path, help="the bookmarks file to open and save (default FILE.bookmarks.json)"
    )
    parser.add_argument("--author", help="the name your bookmarks carry (default: your login name)")
    add_companion_flags(parser)
    add_node_data_flag(parser)
    parser.add_argument("--compare", type=Path, metavar="OTHER",
                        help="show OTHER's graph beside FILE's: changes coloured, selection shared")  # fmt: skip
    add_dims_flag(parser)
    add_cache_flags(parser)
    return parser


def add_cache_flags(parser: argparse.ArgumentParser) -> None:
    """The derived-data cache (`ir-explorer cache`): on by default for a big file."""
    parser.add_argument("--no-cache", action="store_true",
                        help="read the file whole, neither reading nor writing its cache entry (as "
                             "IR_EXPLORER_CACHE=off)")  # fmt: skip
    parser.add_argument("--cache-size", type=byte_size, metavar="SIZE",
                        help="the cache's cap, e.g. 4G (default 2G): the least recently used entries go first")


def apply_cache_flags(args: argparse.Namespace) -> None:
    """--no-cache and --cache-size reach every process that may open a file (serve's sessions, workers) through
    the environment, as the cache reads them."""
    from explorer.cache.folder import CACHE_VARIABLE, SIZE_VARIABLE

    if getattr(args, "no_cache", False):
        os.environ[CACHE_VARIABLE] = "off"
    size = getattr(args, "cache_size", None)
    if size is not None:
        os.environ[SIZE_VARIABLE] = str(size)


def terminal_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 160x48, got {text!r}") from None
    if not (40 <= width <= 1000 and 10 <= height <= 500):
        raise argparse.ArgumentTypeError("the size must be between 40x10 and 1000x500")
    return width, height


def add_companion_flags(parser: argparse.ArgumentParser) -> None:
    """A schedule's pipeline companions, when they are not beside it under the conventional names."""
    parser.add_argument("--frontend", type=Path, help="the frontend IR the schedule was made from (schedules)")
    parser.add_argument("--asm", type=Path, help="the schedule's assembly (schedules)")
    parser.add_argument("--trace", type=Path, help="the ZeBu trace of that assembly (schedules)")
    parser.add_argument("--max-companion-size", type=byte_size, metavar="SIZE",
                        help="the largest companion read, e.g. 2G (default 512M): a bigger one is not joined")


def given_companions(args: argparse.Namespace) -> dict[str, Path | None]:
    """The companions given by name; --max-companion-size goes to every process that may read one (workers,
    serve's sessions) through the environment."""
    limit = getattr(args, "max_companion_size", None)
    if limit is not None:
        from explorer.companions import LIMIT_VARIABLE

        os.environ[LIMIT_VARIABLE] = str(limit)
    return {kind: getattr(args, kind, None) for kind in ("frontend", "asm", "trace")}


def add_node_data_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node-data", type=Path, action="append", default=[], metavar="FILE",
                        help="per-node values to colour the graph by: Model Explorer's node-data JSON, a "
                             "{\"node\": number} JSON or a node,value CSV (repeatable)")  # fmt: skip


def add_dims_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dims", type=dims_value, default={}, metavar="NAME=SIZE,...",
                        help="models: bind symbolic dims for the counts (parameters, multiply-accumulates, bytes), "
                             "e.g. batch=1,seq=2048")  # fmt: skip


def dims_value(text: str) -> dict[str, int]:
    from explorer.graph.metrics import parse_dims

    try:
        return parse_dims(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def byte_size(text: str) -> int:
    """`512M`, `2G`, `2GiB`, `1048576`: a size in bytes (binary units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size such as 512M or 2G, got {text!r}")
    return int(float(match[1]) * UNITS[match[2].upper()])


def command_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"ir-explorer {command}")
    if command == "cache":
        parser.description = ("List the derived-data cache's entries (what big files became, kept for their next "
                              "open), or clear it.")  # fmt: skip
        parser.add_argument("--clear", action="store_true", help="remove every entry")
        parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        return parser
    if command != "schema":
        add_cache_flags(parser)
    if command == "schema":
        from explorer.contracts import CONTRACTS

        parser.description = "Print the JSON Schema of a --json output or of the bookmarks file (see schemas/)."
        parser.add_argument("name", choices=tuple(CONTRACTS), help="which output")
        return parser
    if command == "query":
        from explorer.schedule.query import ROW_CAP
        from explorer.schedule.tables import TABLES

        parser.description = (f"SQL over schedules (DuckDB): tables {', '.join(TABLES)}, every file's rows in each "
                              "(the README lists their columns).")  # fmt: skip
        parser.add_argument("files", type=Path, nargs="+", metavar="FILE",
                            help="one or more schedules (several: read in parallel worker processes)")
        parser.add_argument("sql", metavar="SQL", help="the query (reads the tables only)")
        parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output form")
        parser.add_argument("--max-rows", type=int, default=ROW_CAP,
                            help=f"stop after this many rows, saying so (default {ROW_CAP:,})")  # fmt: skip
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        add_companion_flags(parser)  # one schedule's: its instructions table comes from them
        return parser
    parser.add_argument("file", type=Path, metavar="A" if command == "diff" else "FILE")
    if command == "serve":
        parser.description = "The explorer in a web browser (textual-serve). Bound to localhost unless --host says."
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        parser.add_argument("--bookmarks", type=Path, help="the bookmarks file (default FILE.bookmarks.json)")
        parser.add_argument("--author", help="the name bookmarks made in the browser carry (default: your login)")
        parser.add_argument(
            "--public-url", help="the address the browser uses (behind a proxy): http(s)://host[:port][/prefix]"
        )
        parser.add_argument(
            "--token", help="the token every address requires (default: a random one per start; 16+ characters)"
        )
        parser.add_argument("--max-sessions", type=int, default=8, help="browser tabs open at once (default 8)")
        add_companion_flags(parser)
        add_dims_flag(parser)
        return parser
    if command == "diff":
        parser.description = "What changed from A to B (two schedules, or two models of one format)."
        parser.add_argument("other", type=Path, metavar="B")
        parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        parser.add_argument("--all", action="store_true", help="list every change (else 25 of each kind)")
        parser.add_argument("--weights", action="store_true",
                            help="compare the weights' values too: each one hashed, read in 1 MiB pieces (else by "
                                 "dtype, dims and bytes, read from no weight)")  # fmt: skip
        parser.add_argument("--as-written", action="store_true",
                            help="models: also count what only shape inference or a default makes differ (a dim "
                                 "known on one side only, an attribute written at its default value)")  # fmt: skip
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        return parser
    if command == "screenshot":
        parser.description = "Write an SVG of one view at a given state, without a terminal."
        parser.add_argument("--view", choices=SCREENSHOT_VIEWS, default="tree", help="a view the file offers")
        parser.add_argument("--core", type=int, help="core to show (scheduler IR)")
        parser.add_argument("--workload", type=int, help="workload_id on that core (scheduler IR)")
        parser.add_argument("--member", help="the file the source view shows (e.g. a TVM bundle's src/relay.txt)")
        parser.add_argument("--line", type=int, default=1, help="the source view's line to show and mark")
        parser.add_argument("--size", type=terminal_size, default=(160, 48), help="terminal size, WIDTHxHEIGHT")
        parser.add_argument("-o", "--output", type=Path, required=True, help="the SVG file to write")
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        add_force_flag(parser)
        add_node_data_flag(parser)
        add_companion_flags(parser)
        parser.add_argument(
            "--compare",
            type=Path,
            metavar="OTHER",
            help="the two graphs side by side, on the first change (as ir-explorer FILE --compare)",
        )
        parser.add_argument(
            "--open", action="append", default=[], metavar="G",
            help="--view graph: open group G as Enter does (repeatable, in order; as graph --open)",
        )  # fmt: skip
        return parser
    if command == "export":
        parser.description = ("Write a self-contained HTML report, a Chrome trace (Perfetto) and/or a schedule's "
                              "tables as Parquet files (--parquet DIR) of the file.")  # fmt: skip
        parser.add_argument("--html", type=Path, help="the HTML report to write (plotly.js embedded: works offline)")
        parser.add_argument("--trace-event", type=Path, help="the Trace Event JSON to write (schedules)")
        parser.add_argument("--parquet", type=Path, metavar="DIR",
                            help="schedules: `query`'s tables as Parquet files in DIR (DIR/workloads.parquet, "
                                 "...)")  # fmt: skip
        parser.add_argument("--flows", action="store_true",
                            help="--trace-event: draw every cross-core transfer as an arrow (else up to 10,000)")
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        add_force_flag(parser)
        add_companion_flags(parser)
        add_node_data_flag(parser)
        return parser
    if command == "graph":
        parser.description = "Lay out the file's graph as the graph view draws it (terminal cells)."
        parser.add_argument("--json", action="store_true", help="the layout as JSON on stdout (see the README)")
        parser.add_argument(
            "--expand",
            choices=("auto", "all", "none"),
            default="auto",
            help="open every group (all), none (only the top level), or as the view opens (auto)",
        )
        parser.add_argument("--direction", choices=("TB", "LR"), default="TB", help="top to bottom or left to right")
        parser.add_argument(
            "--constants",
            action="store_true",
            help="lay constants and initializers out as boxes (the view's i); by default they fold into their readers",
        )
        parser.add_argument(
            "--svg",
            type=Path,
            metavar="OUT.svg",
            help="write the whole layout as a vector drawing (boxes, edges, stubs, frames, legend)",
        )
        parser.add_argument(
            "--colour",
            "--color",
            dest="colour",
            metavar="MODE",
            help="the SVG's colour mode (as the view's c names them: 'op type', 'dtype', 'time', a "
            "node-data file's name...; default: the node data, else measured time, else op type)",
        )
        parser.add_argument(
            "--open", action="append", default=[], metavar="G",
            help="open group G as Enter does, after the expansion (repeatable, in order; G a graph --json id "
            "like g12 or a path of labels like layers/layers.7): every box above it keeps its place",
        )  # fmt: skip
        parser.add_argument("--only", metavar="G", help="--svg: draw group G's inside alone, every group in it open")
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        add_force_flag(parser)
        add_node_data_flag(parser)
        add_dims_flag(parser)
        return parser
    if command == "relocate":
        parser.description = ("Write a copy of a schedule with one tensor moved for its residency (only its address "
                              "fields change); check OUT proves the move.")  # fmt: skip
        parser.add_argument("--core", type=int, required=True, help="the core the tensor is on")
        parser.add_argument("--tensor", type=int, required=True, help="the tensor's id")
        parser.add_argument(
            "--to", required=True, metavar="ADDRESS",
            help="the new address (744 or 0x2e8) inside any region of the core, or 'suggested' (where check says it "
                 "would fit)",
        )  # fmt: skip
        parser.add_argument("--workload", type=int, help="the residency around this workload (default: the tensor's "
                            "first incident on the core, else its first snapshot there)")  # fmt: skip
        parser.add_argument("-o", "--output", type=Path, required=True, help="the schedule to write (never the input)")
        parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
        add_force_flag(parser, also="move to an address that is not 8-aligned or that collides with another "
                                     "tensor, and ")  # fmt: skip
        return parser
    if command == "tensor":
        parser.description = "Where an ARK tensor's bytes sit in its buffer: first/end byte, runs, padding, aliases."
        parser.add_argument("tensor_id", type=int, help="the tensor's Id")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument("--strict", action="store_true", help="report unknown keys as errors")
    if command in ("info", "check"):
        add_companion_flags(parser)
    if command == "info":
        parser.description = ("Summarise a file: format, sizes, makespan, peak memory and problem counts; for models "
                              "parameters, multiply-accumulates and the top groups.")  # fmt: skip
        add_dims_flag(parser)
    else:
        parser.description = "List every problem found in a file. Exit 1 when any is an error."
    return parser


def add_force_flag(parser: argparse.ArgumentParser, also: str = "") -> None:
    parser.add_argument("--force", action="store_true",
                        help=f"{also}replace an output file that is read-only (never an input: those are always "
                             "refused)")  # fmt: skip
