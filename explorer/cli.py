"""The command line. `ir-explorer FILE` opens the TUI; the subcommands are headless and never import Textual.

Exit codes: 0 all good, 1 problems of severity error were found, 2 the input is unusable (or bad usage).
JSON goes to stdout, diagnostics to stderr, and no input ever produces a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.cache import folder as cache_folder
from explorer.cli_parsers import SUBCOMMANDS, apply_cache_flags, command_parser, given_companions, tui_parser
from explorer.errors import LoadError, count_by_severity
from explorer.formatting import EscapingWriter, escape_controls
from explorer.writing import refuse_inputs, write_atomically

if TYPE_CHECKING:  # only named in annotations: `--help` and `--version` import nothing that reads files
    from explorer.document import Document


class ExitCode(IntEnum):
    OK = 0
    PROBLEMS = 1
    UNUSABLE = 2


def _report_plugin_failures() -> list[str]:
    """Broken plug-ins, said on stderr (once per command) so a missing format is never a silent mystery."""
    from explorer.registry import registry

    failures = registry().plugin_failures
    for failure in failures:
        print(f"ir-explorer: {failure}", file=sys.stderr)
    return failures


def main(argv: Sequence[str] | None = None, detach_writes: bool = False) -> int:
    """The CLI and the TUI. `detach_writes` (the console script, about to end its process): a file's cache entry
    is written by a child process of its own, so the command ends when its answer is given; not under `serve`,
    whose sessions end with every process they started (`folder.DETACH_VARIABLE`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    detach_writes = detach_writes and os.environ.get(cache_folder.DETACH_VARIABLE, "") != "off"
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = command_parser(argv[0]).parse_args(argv[1:])
            apply_cache_flags(args)
            if argv[0] == "serve":
                return int(_run_command(argv[0], args, detach_writes))
            # Text from the input (op types, names, file names) never drives the terminal.
            with (
                contextlib.redirect_stdout(EscapingWriter(sys.stdout)),
                contextlib.redirect_stderr(EscapingWriter(sys.stderr)),
            ):
                return int(_run_command(argv[0], args, detach_writes))
        args = tui_parser().parse_args(argv)
        apply_cache_flags(args)
        return int(_run_tui(args, detach_writes))
    except LoadError as error:
        print(f"ir-explorer: {escape_controls(str(error))}", file=sys.stderr)
        return int(ExitCode.UNUSABLE)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as error:  # a bug, not bad input: still no traceback unless asked for
        if os.environ.get("IR_EXPLORER_DEBUG"):
            raise
        print(
            f"ir-explorer: internal error: {type(error).__name__}: {escape_controls(str(error))} "
            "(set IR_EXPLORER_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return int(ExitCode.UNUSABLE)


def _run_command(command: str, args: argparse.Namespace, detach_writes: bool = False) -> ExitCode:
    from explorer.api import open_document
    from explorer.cache import documents as derived

    if command == "schema":
        from explorer.contracts import schema_text

        sys.stdout.write(schema_text(args.name))
        return ExitCode.OK
    if command == "cache":
        from explorer.cli_cache import run_cache_command

        return ExitCode(run_cache_command(args))
    if command == "screenshot":
        return _run_screenshot(args)
    if command == "diff":
        return _run_diff(args)
    if command == "query":
        from explorer.cli_query import run_query_command

        return ExitCode(run_query_command(args))
    if command == "serve":
        from explorer.registry import pick_format
        from widgets.serve.server import ServeRefused, serve  # needs textual-serve: imported only for this command

        pick_format(args.file)  # a file nothing can open is refused here, not in every browser tab
        try:
            companions = {kind: path.resolve() for kind, path in given_companions(args).items() if path is not None}
            serve(args.file.resolve(), args.host, args.port, args.strict, args.bookmarks, args.author,
                  args.public_url, args.token, args.max_sessions, companions, args.dims)  # fmt: skip
        except ServeRefused as refused:
            print(f"ir-explorer serve: {refused}", file=sys.stderr)
            return ExitCode.UNUSABLE
        return ExitCode.OK
    if command == "export" and not (args.html or args.trace_event or args.parquet):
        print("ir-explorer export: give --html OUT.html, --trace-event OUT.json and/or --parquet DIR", file=sys.stderr)
        return ExitCode.UNUSABLE
    failures = _report_plugin_failures() if command in ("info", "check") else []
    if not args.strict:
        _prepare(args.file, interactive=False)
    read_ahead = command != "info"  # info names no incidents: their roles are not read ahead
    document = open_document(args.file, strict=args.strict, companions=given_companions(args), read_ahead=read_ahead,
                             dims=getattr(args, "dims", None))  # fmt: skip
    code = _run_on(command, document, args, failures)
    derived.keep(document, detach=detach_writes)  # a big file's entry, with what the command worked out
    derived.wait_for_writes()
    return code


def _run_on(command: str, document: Document, args: argparse.Namespace, failures: list[str]) -> ExitCode:
    """The command's own work on the opened document."""
    if command == "export":
        return _run_export(document, args)
    if command == "tensor":
        return _run_tensor(document, args)
    if command == "graph":
        return _run_graph(document, args)
    if command == "relocate":
        return _run_relocate(document, args)
    if command == "check":
        document.run_deep_checks()
    counts = count_by_severity(document.problems)
    if command == "info":
        payload: dict[str, Any] = {
            "format": document.meta.format,
            "file": str(args.file),
            "summary": document.summary,
            "problems": counts,
            "plugin_failures": failures,
        }
        from explorer.companions import companions_of, measured_summary

        joined = companions_of(document)
        if joined.paths:
            payload["companions"] = {kind: {"file": str(path), "joined": kind not in joined.refused,
                                            "why_not": joined.refused.get(kind, "")}
                                     for kind, path in joined.paths.items()}  # fmt: skip
        if joined.measured is not None:
            payload["measured"] = measured_summary(document)
        from explorer.schedule.pressure import pressure_of

        pressure = pressure_of(document)
        if pressure is not None:
            from explorer.schedule.pressure import side_memory_pressure

            payload["memory"] = {"l2": {"cores": {str(c.core): c.to_json() for c in pressure.cores}}}
            side = side_memory_pressure(document.scheduled())
            if side and document.vocabulary.side_memory:
                payload["memory"]["wl0"] = {"name": document.vocabulary.side_memory, "cores": side}
        metric_lines = _model_metrics(document, args.dims, payload)
        if args.json:
            _print_json("info", payload)
        else:
            _print_info(payload, metric_lines)
        return ExitCode.OK
    from explorer.schedule.pressure import explained_incidents

    incidents = explained_incidents(document)
    if args.json:
        problems = [p.to_json() for p in document.problems]
        payload = {"format": document.meta.format, "file": str(args.file), "problems": problems,
                   "incidents": [incident.to_json() for incident in incidents]}  # fmt: skip
        _print_json("check", payload)
    else:
        if incidents:
            print(f"{len(incidents)} overlap incident{'s' if len(incidents) != 1 else ''} (one per misplaced tensor "
                  "and run of snapshots):")  # fmt: skip
            from explorer.schedule.touched import touched_words

            for incident in incidents:
                print(f"  {incident.code:<12} {incident.line()}")
                if verdict := touched_words(incident.touched):  # an assembly or trace joined: what ran did or not
                    print(f"  {'':<12} {verdict}")
            print()
        _print_problem_table(document.problems, counts)
    return ExitCode.PROBLEMS if counts["error"] else ExitCode.OK


def _print_json(contract: str, payload: dict[str, Any], indent: int | None = 2) -> None:
    """Every --json output is built as its contract (explorer/contracts.py, `ir-explorer schema NAME`)."""
    from explorer.contracts import dump

    sys.stdout.write(dump(contract, payload, indent) + "\n")


def _model_metrics(document: Document, dims: dict[str, int], payload: dict[str, Any]) -> list[str]:
    """A model's counts for `info`: its shapes inferred first (what the counts are read from); the JSON goes in
    the payload, the text lines are returned."""
    if not document.view.counts_ops():
        return []
    from explorer.graph.metrics import metrics_of, model_json, summary_lines, unknown_dims

    document.run_deep_checks()  # from the dims open_document bound: sizes, not a new symbol for every unknown
    model = document.view.drawn_graph()
    if dims and (refused := unknown_dims(model, dims, document.view.input_dims())):
        raise LoadError(document.meta.source, "--dims", refused)
    metrics = metrics_of(model, dims)
    if metrics is None:
        return []
    payload["metrics"] = model_json(model, metrics)
    return summary_lines(model, metrics)


def _print_info(payload: dict[str, Any], metric_lines: list[str] | None = None) -> None:
    from explorer.formatting import human, plural

    lines = [f"{payload['file']}", f"  format: {payload['format']}"]
    for key, value in payload["summary"].items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"  {key.replace('_', ' ')}:")  # e.g. TVM modules: one line each
            lines += [
                "    - " + ", ".join(f"{k.replace('_', ' ')} {human(v, k)}" for k, v in item.items()) for item in value
            ]
            continue
        lines.append(f"  {key.replace('_', ' ')}: {human(value, key)}")
    for kind, said in payload.get("companions", {}).items():  # what --json says, in words (it was --json only)
        state = "joined" if said["joined"] else f"not joined: {said['why_not']}"
        lines.append(f"  companion {kind}: {Path(said['file']).name} ({state})")
    for key, value in payload.get("measured", {}).items():
        if isinstance(value, list | dict):  # per layer: one line would be the whole model
            lines.append(f"  measured {key.replace('_', ' ')}: {len(value):,} (listed by --json)")
        elif key != "source":
            lines.append(f"  measured {key.replace('_', ' ')}: {human(value, key)}")
    memory = payload.get("memory")
    if memory and memory["l2"]["cores"]:
        from explorer.schedule.pressure import worst_line

        lines.append(f"  L2 at its fullest: {worst_line(memory['l2']['cores'])}")
    lines += metric_lines or []
    counts = payload["problems"]
    lines.append(f"  problems: {plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}")
    print("\n".join(lines))


def _print_problem_table(problems: list, counts: dict[str, int]) -> None:
    if not problems:
        print("no problems found")
        return
    from explorer.formatting import plural

    widths = {"severity": 8, "code": max(len(p.code) for p in problems)}
    rank = {"error": 0, "warning": 1}
    for p in sorted(problems, key=lambda p: rank.get(p.severity, 2)):  # errors first, each kind in file order
        print(f"{p.severity:<{widths['severity']}} {p.code:<{widths['code']}} {p.message}")
        if p.location:
            print(f"{'':<{widths['severity']}} {'':<{widths['code']}}   at {p.location}")
    print(f"\n{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')}")


def _run_diff(args: argparse.Namespace) -> ExitCode:
    from explorer.api import open_document
    from explorer.diff import TOP_CHANGES, NotComparable, diff_documents, diff_lines

    first, second = open_document(args.file, strict=args.strict), open_document(args.other, strict=args.strict)
    first.run_deep_checks()  # the problems introduced and fixed are those `check` finds (and the TUI's diff)
    second.run_deep_checks()
    try:
        result = diff_documents(first, second, limit=None if args.all else TOP_CHANGES, weights=args.weights,
                                as_written=args.as_written)
    except NotComparable as error:
        raise LoadError(args.other, "", str(error)) from None
    if args.json:
        _print_json("diff", result)
    else:
        print("\n".join(diff_lines(result)))
    return ExitCode.OK


def _check_comparable(path: Path, other: Path) -> None:
    """--compare: both files readable and of one format, said before the screen switches (exit 2 if not)."""
    from explorer.registry import pick_format

    mine, theirs = pick_format(path), pick_format(other)
    if mine.name != theirs.name:
        raise LoadError(other, "", f"cannot compare a {mine.name} file with a {theirs.name} file side by side")


def _inputs_read(document: Document, args: argparse.Namespace) -> list[Path]:
    """FILE first, then every other file this command read: what no output may overwrite."""
    return [args.file, *document.files_read(), *(getattr(args, "node_data", None) or [])]


def _read_node_data(document: Document, args: argparse.Namespace) -> None:
    """The --node-data files joined to the graph; what each joined (and why one was not read) on stderr."""
    from explorer.document import Capability

    if not args.node_data:
        return
    if not document.offers(Capability.GRAPH):
        raise LoadError(args.file, "", f"--node-data needs a graph, and this {document.meta.format} file has none")
    from explorer.graph.node_data import load_node_data

    before = len(document.problems)
    for line in load_node_data(document, args.node_data):
        print(f"node data: {line}", file=sys.stderr)
    found = document.problems[before:]
    for problem in found[:10]:
        print(f"  {problem.severity}: {problem.message}" + (f" ({problem.location})" if problem.location else ""),
              file=sys.stderr)  # fmt: skip
    if len(found) > 10:
        print(f"  … {len(found) - 10:,} more", file=sys.stderr)


def _run_export(document: Document, args: argparse.Namespace) -> ExitCode:
    """Write what was asked for and what the document has; for what it lacks, say why (exit 2 if nothing)."""
    from explorer.document import Capability

    document.run_deep_checks()
    _read_node_data(document, args)
    wrote = False
    if args.html:
        from explorer.exports.html_report import write_report

        def said(done: int, total: int, name: str) -> None:  # a big schedule's figures take half a minute
            print(f"report: {name} ({done + 1}/{total})", file=sys.stderr, flush=True)

        refuse_inputs(args.html, _inputs_read(document, args))
        write_report(document, args.html, said, force=args.force)
        print(f"wrote {args.html}", file=sys.stderr)
        wrote = True
    if args.trace_event:
        if document.offers(Capability.TIMELINE):
            from explorer.exports.trace_event import trace_events

            refuse_inputs(args.trace_event, _inputs_read(document, args))
            trace = trace_events(document, flows=args.flows or None)
            write_atomically(args.trace_event, json.dumps(trace).encode("utf-8"), args.force)
            print(f"wrote {args.trace_event}", file=sys.stderr)
            wrote = True
        else:
            print(
                f"no trace written to {args.trace_event}: a trace needs a timeline, and this "
                f"{document.meta.format} file has none",
                file=sys.stderr,
            )
    if args.parquet:
        if document.schedule is not None:
            from explorer.exports.parquet import write_parquet

            inputs = _inputs_read(document, args)
            refuse_inputs(args.parquet, inputs)
            for path in write_parquet(document, args.parquet, args.force, inputs):
                print(f"wrote {path}", file=sys.stderr)
            wrote = True
        else:
            print(f"no tables written to {args.parquet}: this {document.meta.format} file is not a schedule",
                  file=sys.stderr)  # fmt: skip
    return ExitCode.OK if wrote else ExitCode.UNUSABLE


def _run_graph(document: Document, args: argparse.Namespace) -> ExitCode:
    from explorer.document import Capability

    if not document.offers(Capability.GRAPH):
        raise LoadError(args.file, "", f"this {document.meta.format} file has no graph")
    from explorer.exports.graph_json import graph_json

    document.run_deep_checks()  # shape inference, as the TUI runs it before it draws: the same box texts and sizes
    from explorer.graph.problems import mark_problems

    model = document.view.drawn_graph()
    from explorer.graph.metrics import unknown_dims

    if args.dims and (refused := unknown_dims(model, args.dims, document.view.input_dims())):
        raise LoadError(args.file, "--dims", refused)
    model.metric_dims = dict(args.dims)  # the counts' colour modes and the JSON bind the same dims
    _read_node_data(document, args)
    mark_problems(model, document)  # the boxes the TUI draws carry their ✗/⚠, and are sized with them
    from explorer.exports.graph_json import UnknownGroup, resolve_group

    try:
        opens = [resolve_group(model, spec) for spec in args.open]
        only = resolve_group(model, args.only) if args.only else None
    except UnknownGroup as error:
        raise LoadError(args.file, "--open/--only", str(error)) from None
    if only is not None and args.svg is None:
        raise LoadError(args.file, "--only", "--only draws one group for --svg: give --svg OUT.svg")
    if args.svg is not None:
        from explorer.exports.graph_svg import UnknownColourMode, graph_svg

        try:
            drawing = graph_svg(model, args.expand, args.colour, args.direction, title=args.file.name, opens=opens,
                                only=only)  # fmt: skip
        except UnknownColourMode as error:
            raise LoadError(args.file, "--colour", str(error)) from None
        refuse_inputs(args.svg, _inputs_read(document, args))
        write_atomically(args.svg, drawing.encode("utf-8"), args.force)
        print(f"wrote {args.svg}", file=sys.stderr)
        if not args.json:
            return ExitCode.OK
    from explorer.graph.metrics import metrics_of

    metrics = metrics_of(model)
    payload = graph_json(model, args.expand, args.direction, constants=args.constants, opens=opens, metrics=metrics)
    if args.json:
        _print_json("graph", payload, indent=None)
        return ExitCode.OK
    kinds: dict[str, int] = {}
    for edge in payload["edges"]:
        kinds[edge["kind"]] = kinds.get(edge["kind"], 0) + 1
    print(f"{args.file}: {len(payload['nodes']):,} nodes, {len(payload['edges']):,} edges "
          f"({', '.join(f'{v:,} {k}' for k, v in kinds.items()) or 'none'}), "
          f"{sum(g['expanded'] for g in payload['groups'])} of {len(payload['groups'])} groups open, "
          f"{payload['width']}×{payload['height']} cells")  # fmt: skip
    if payload["back_edges"]:
        print(f"  {payload['back_edges']} edges close a cycle (drawn as back edges)")
    return ExitCode.OK


def _run_relocate(document: Document, args: argparse.Namespace) -> ExitCode:
    """Move one tensor for its residency and write the copy; any refusal is one line and exit 2, nothing written."""
    from explorer.schedule.incidents import incidents_of
    from explorer.schedule.relocate import plan_move, relocated_bytes, summary

    schedule = document.schedule
    if schedule is None or document.schedule_analysis is None:
        raise LoadError(args.file, "", f"relocate needs a schedule, and this {document.meta.format} file has none")
    refuse_inputs(args.output, _inputs_read(document, args))
    incidents = incidents_of(document, with_roles=False)
    move = plan_move(schedule, document.schedule_analysis.placement, incidents, args.core, args.tensor, args.to,
                     args.workload, force=args.force)  # fmt: skip
    data = relocated_bytes(schedule, move)
    write_atomically(args.output, data, force=args.force)
    print(f"{summary(move, args.tensor, args.core)}; wrote {args.output}", file=sys.stderr)
    return ExitCode.OK


def _run_tensor(document: Document, args: argparse.Namespace) -> ExitCode:
    layouts = document.layouts
    if layouts is None:
        raise LoadError(
            args.file, "", f"tensor needs a file with strided tensors (ARK), this is {document.meta.format}"
        )
    report = layouts.report(args.tensor_id)
    if report is None:
        known = ", ".join(map(str, layouts.tensor_ids()[:12]))
        raise LoadError(args.file, "", f"no tensor with Id {args.tensor_id} (ids in the file: {known}, ...)")
    if args.json:
        _print_json("tensor", report)
    else:
        width = max(len(key) for key in report)
        for key, value in report.items():
            print(f"{key.replace('_', ' '):<{width}}  {value}")
    return ExitCode.OK


def _run_screenshot(args: argparse.Namespace) -> ExitCode:
    from widgets.screenshot import take_screenshot  # needs Textual: imported only for this command

    if args.compare is not None:
        _check_comparable(args.file, args.compare)
    take_screenshot(
        args.file,
        view=args.view,
        output=args.output,
        core=args.core,
        workload=args.workload,
        member=args.member,
        line=args.line,
        size=args.size,
        strict=args.strict,
        node_data=args.node_data,
        compare=args.compare,
        force=args.force,
        companions=given_companions(args),
        opens=args.open,
    )
    print(f"wrote {args.output}", file=sys.stderr)
    return ExitCode.OK


def _run_tui(args: argparse.Namespace, detach_writes: bool = False) -> ExitCode:
    path = args.file or default_sample()
    if not path.exists():  # fail before the screen switches, with the same message the app would show
        raise LoadError(path, "", "no such file or directory")
    from explorer.open_ahead import open_ahead_if_kept

    # a kept file is read while the app's modules are imported; another has its slow work started (_prepare)
    ahead = open_ahead_if_kept(path, strict=args.strict, companions=given_companions(args), dims=args.dims)
    if ahead is None and not args.strict:
        _prepare(path, interactive=True)
    from widgets.app import make_app, stopping_on_signals  # the one place the core reaches the UI, when asked to

    if args.compare is not None:
        _check_comparable(path, args.compare)
    app = make_app(path, strict=args.strict, bookmarks=args.bookmarks, author=args.author,
                   companions=given_companions(args), node_data=args.node_data, compare=args.compare,
                   dims=args.dims, detach_writes=detach_writes, open_ahead=ahead)  # fmt: skip
    with stopping_on_signals(app) as ended:
        app.run()
    if ended.signal is not None:  # told to stop, or the terminal is gone: the app has shut down, so does this
        os._exit(128 + ended.signal)
    if app.load_error is not None:  # the error box was on screen; the shell still learns it, as the README says
        raise app.load_error
    _keep_what_was_shown(app, detach_writes)
    return ExitCode.OK


def _keep_what_was_shown(app: Any, detach: bool = False) -> None:
    """The cache entry of the file the TUI showed, finished before the process ends: the load worker writes it
    once the incidents' roles are named, in a daemon thread, so `q` a few seconds into a first open left no entry
    and the next open read the whole file again. Ctrl+C here skips it (a cut-short write leaves no entry)."""
    from explorer.cache import documents as derived

    document = app.document
    if document is not None and not document.partial:
        derived.keep(document, detach=detach)  # nothing when the worker kept it already, or it is not kept
    if derived.pending_writes():
        print("ir-explorer: finishing the file's cache entry for its next open (Ctrl+C skips it)", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            derived.wait_for_writes()


def _prepare(path: Path, interactive: bool) -> None:
    """Let the file's format start slow work (a big schedule's worker processes) before the heavy imports."""
    from explorer.cache import documents as derived
    from explorer.registry import pick_format

    try:
        found = pick_format(path)
    except LoadError:
        return  # the load says it, in its place
    if found.prepare is not None and not derived.has_entry(found, path):  # (kept: nothing slow is left to start)
        found.prepare(path, interactive)


DEMO = "clean_2x2_stschedule.json"
CHECKOUT_SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def default_sample(checkout: Path = CHECKOUT_SAMPLES) -> Path:
    """The demo schedule: a checkout's own (`make samples` wrote it), else made once in the user's cache folder
    (`$XDG_CACHE_HOME/ir-explorer/samples`, by default `~/.cache/...`), never beside the code (installed from a
    wheel, that was site-packages)."""
    if (checkout / DEMO).is_file():
        return checkout / DEMO
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ir-explorer" / "samples"
    if not (folder / DEMO).is_file():
        from explorer.samples import write_samples

        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_samples(folder)
        except OSError as error:
            raise LoadError(folder, "", f"cannot write the demo files there: {error.strerror or error} (give a "
                            "FILE, or set XDG_CACHE_HOME to a folder you may write)") from None  # fmt: skip
    return folder / DEMO
