"""The details panel: the selected item's `Section`s as tables, never raw dicts."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import ScrollableContainer
from textual.widgets import Static

from explorer.document import Section

MAX_ROWS = 120  # the tree lists everything; the panel summarises (Rich tables cost ~1 ms a row)


class DetailsPanel(ScrollableContainer):
    """Tables fit the panel's width where their words can wrap; a table whose numbers cannot fit (they are never
    broken) makes the panel scroll sideways instead of losing its first or last column."""

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
        self._body: Group | None = None

    def compose(self):
        yield Static(id="details-body")

    def show_sections(self, sections: list[Section]) -> None:
        body = self.query_one("#details-body", Static)
        self.sections = sections
        if not sections:
            body.update(Text("Nothing to show for this item.", style="dim"))
            return
        self._body = Group(*(_table(section) for section in sections))
        body.update(self._body)
        self._fit_width()
        self.scroll_home(animate=False)

    def _fit_width(self) -> None:
        body = self.query_one("#details-body", Static)
        if not self.sections or self._body is None or not self.size.width:
            body.styles.width = "100%"
            return
        console = self.app.console
        least = Measurement.get(console, console.options, self._body).minimum
        body.styles.width = least if least > self.scrollable_content_region.width else "100%"

    def on_resize(self, event: events.Resize) -> None:
        self._fit_width()


def _table(section: Section) -> Table:
    key_value = tuple(section.columns) == ("property", "value")
    table = Table(
        title=section.title,
        show_header=not key_value,  # "property | value" says nothing and costs three lines
        title_justify="left",
        title_style="bold",
        expand=False,
        show_edge=False,
        pad_edge=False,
        header_style="bold dim",
    )
    rows = section.rows
    for index, column in enumerate(section.columns):
        numeric = not key_value and index > 0
        # no number and no word is ever broken inside a cell: numbers and headers keep their width, text
        # wraps between words, and a word longer than the cell ends in an ellipsis
        cells = [str(row[index]) for row in rows[:MAX_ROWS] if index < len(row) and row[index] is not None]
        # a short cell of a value column stays whole ("[1, 64]"); of the header, no word is broken
        whole = numeric or (index == 0 and not key_value)  # numbers, and the first column that names the row
        words = [len(word) for word in column.split()] + ([len(cell) for cell in cells] if whole else [])
        table.add_column(
            column,
            style="cyan" if key_value and index == 0 else None,
            justify="right" if numeric else "left",
            overflow="ellipsis",
            no_wrap=numeric,
            min_width=min(max(words, default=1), 16),
        )
    for row in rows[:MAX_ROWS]:
        # Text, not str: values come from files, and "[main]" in a path must not be read as Rich markup
        table.add_row(*(Text("" if value is None else str(value)) for value in row))
    if len(rows) > MAX_ROWS:
        table.caption = f"{len(rows) - MAX_ROWS} more rows not shown"
    if not rows:
        table.caption = "(none)"
    return table
