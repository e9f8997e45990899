"""What the command palette and the help screen list: generated from the app's bindings, the views the
document offers and their own keys, in the document's words, so what they say is what runs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from functools import partial
from typing import Any

from textual.app import SystemCommand

from explorer.document import Capability
from widgets.problems import ProblemsTable
from widgets.views import TREE, offered_views


def help_keys(app: Any) -> list[tuple[str, str, str]]:
    """(where, key, what) for the keys of this document: the app's, then each offered view's, in the
    document's own words."""
    views = offered_views(app.document) if app.document is not None else ()
    keys = [("Everywhere", spec.key, f"{spec.title.lower()}: {spec.about}") for spec in (TREE, *views)]
    keys += app.HELP_KEYS
    for spec in views:
        keys += getattr(spec.widget_class(), "HELP_KEYS", [])
    keys += ProblemsTable.HELP_KEYS
    words = asdict(app.document.vocabulary) if app.document is not None else {}
    return [(where, key, what.format(**words) if words else what) for where, key, what in keys]


def system_commands(app: Any) -> Iterable[SystemCommand]:
    """The app's own commands, after Textual's: every key's action by name, and the review actions."""
    yield SystemCommand("Search", "Find items by name or id (Ctrl+F)", app.action_search)
    yield SystemCommand("Help: keys", "Every key the explorer understands (?)", app.action_help)
    yield SystemCommand("Next problem", "Jump to the next problem (n)", lambda: app.action_next_problem(1))
    yield SystemCommand("Previous problem", "Jump to the previous problem (N)", lambda: app.action_next_problem(-1))
    yield SystemCommand("Summary", "Show the file summary (h)", app.action_show_summary)
    yield SystemCommand("Focus details", "Move the focus to the details panel (e)", lambda: app.action_focus("details"))
    yield SystemCommand("Maximise panel", "The focused panel fills the screen, or comes back (z)", app.action_maximize)
    words = asdict(app.document.vocabulary) if app.document is not None else {}
    for spec in (TREE, *(offered_views(app.document) if app.document is not None else ())):
        about = spec.about.format(**words) if words else spec.about
        yield SystemCommand(
            spec.title, f"{about[0].upper()}{about[1:]} ({spec.key})", partial(app.action_view, spec.name)
        )
    yield SystemCommand(
        "Focus problems", "Move the focus to the problems list (p)", lambda: app.action_focus("problems")
    )
    yield SystemCommand("Go to linked item", "Producers and consumers of the selection (g)", app.action_links)
    yield SystemCommand("Bookmark this item", "Mark the selected item with a note (b)", app.action_bookmark)
    yield SystemCommand("Bookmarks", "List the bookmarks and jump to one (B)", app.action_bookmarks)
    yield SystemCommand("Export HTML report", "A self-contained report with plots", app.action_export_report)
    if app.document is not None and app.document.offers(Capability.TIMELINE):
        yield SystemCommand("Export Chrome trace", "Trace Event JSON for Perfetto", app.action_export_trace)
        lane = app.document.vocabulary.lane
        yield SystemCommand(f"Go to {lane}", f"Select a {lane} by its number in the timeline (J there)",
                            app.action_go_to_core)  # fmt: skip
    if app.document is not None and app.document.schedule is not None:
        from widgets.query_screen import CANNED

        yield SystemCommand("Query", "SQL over the schedule's tables (workloads, l2, transfers, ...): a row's "
                            "workload is one Enter away", app.action_query)  # fmt: skip
        for name, about, sql in CANNED:
            yield SystemCommand(f"Query: {name}", about[0].upper() + about[1:], partial(app.action_query, sql))
    yield SystemCommand("Screenshot", "Save an SVG of the screen", app.action_screenshot_svg)
    yield SystemCommand("Diff with another file", "What changed from this file to another", app.action_diff)
    if app.document is not None and app.document.offers(Capability.GRAPH):
        yield SystemCommand("Compare graphs side by side", "Another file's graph beside this one, changes "
                            "coloured, selection shared (n/N walk the changes)", app.action_compare)  # fmt: skip
        yield SystemCommand("Add per-node data", "Colour the graph by your own numbers per node (a JSON or CSV "
                            "file; a then cycles group sum/max/mean, T lists the top nodes)",
                            app.action_add_node_data)  # fmt: skip
    if app.previous_document is not None:
        yield SystemCommand(
            "Back to the previous file", f"Show {app.previous_document.meta.source.name} again", app.action_back
        )
