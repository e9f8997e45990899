"""The details panel: the selected item's `Section`s as tables, never raw dicts."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from explorer.document import Section

MAX_ROWS = 120  # the tree lists everything; the panel summarises (Rich tables cost ~1 ms a row)


class DetailsPanel(VerticalScroll):
    DEFAULT_CSS = """
    DetailsPanel { border: round $primary-darken-2; border-title-color: $text-muted; }
    DetailsPanel:focus { border: round $accent; }
    DetailsPanel > Static { width: 100%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Details"
        self.can_focus = True
        self.sections: list[Section] = []  # what is on screen now (tests and other views read it)

    def compose(self):
        yield Static(id="details-body")

    def show_sections(self, sections: list[Section]) -> None:
        body = self.query_one("#details-body", Static)
        self.sections = sections
        if not sections:
            body.update(Text("Nothing to show for this item.", style="dim"))
            return
        body.update(Group(*(_table(section) for section in sections)))
        self.scroll_home(animate=False)


def _table(section: Section) -> Table:
    table = Table(
        title=section.title,
        title_justify="left",
        title_style="bold",
        expand=False,
        show_edge=False,
        pad_edge=False,
        header_style="bold dim",
    )
    key_value = tuple(section.columns) == ("property", "value")
    for index, column in enumerate(section.columns):
        table.add_column(
            column,
            style="cyan" if key_value and index == 0 else None,
            justify="right" if not key_value and index > 0 else "left",
            overflow="fold",
        )
    rows = section.rows
    for row in rows[:MAX_ROWS]:
        # Text, not str: values come from files, and "[main]" in a path must not be read as Rich markup
        table.add_row(*(Text("" if value is None else str(value)) for value in row))
    if len(rows) > MAX_ROWS:
        table.caption = f"{len(rows) - MAX_ROWS} more rows not shown"
    if not rows:
        table.caption = "(none)"
    return table
