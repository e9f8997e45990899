"""The details panel: the selected item's `Section`s as tables, never raw dicts."""

from __future__ import annotations

import re
from typing import Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import ScrollableContainer
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widgets import Static

from explorer.document import KeyHint, Section
from widgets.doc_tree import DocumentTree
from widgets.key_names import key_for

KEY_VALUE = ("property", "value")
# a cell that is one number, with a unit or not: "1,024", "-3.5", "0x1c40", "2.0 KiB", "12 %"
NUMBER = re.compile(r"[-+]?(0x[0-9a-fA-F]+|[0-9][0-9,_.]*(e[-+]?[0-9]+)?)( ?[A-Za-z%/]{1,5})?")
MAX_ROWS = 120  # the tree lists everything; the panel summarises (Rich tables cost ~1 ms a row)


class SectionLines(Static):
    """One section, drawn once into lines at the panel's width (as a `Static` draws, by Textual's own visual) and
    shown as they are (Textual's line API): its height is fixed, so a new selection is no content to measure in
    the layout pass and no Rich table rendered again when the panel paints (a `Static` of auto height rendered
    each table twice a key, to measure it and to paint it). A `Static` still, for what queries the panel's
    statics."""

    def __init__(self) -> None:
        super().__init__(classes="section")
        self._strips: list[Strip] = []
        self._shown: tuple[Table | Text, int] | None = None

    def show(self, renderable: Table | Text, room: int) -> None:
        """Draw `renderable` `room` cells wide; a section not mounted yet is drawn once it is (its style)."""
        self._shown = (renderable, room)
        if self.is_mounted:
            self._draw()

    def on_mount(self) -> None:
        if self._shown is not None:
            self._draw()

    def _draw(self) -> None:
        assert self._shown is not None
        renderable, room = self._shown
        self._strips = Visual.to_strips(self, visualize(self, renderable, markup=False), room, None,
                                        self.visual_style)  # fmt: skip
        self.styles.width = room
        self.styles.height = len(self._strips)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.visual_style.rich_style)


class DetailsPanel(ScrollableContainer):
    """Tables fit the panel's width where their words can wrap; a table whose numbers cannot fit (they are never
    broken) is written one record per row instead (its first cell, then each column's name and value), so no
    column is lost at the panel's edge (a 64-core table in an 80-column terminal)."""

    DEFAULT_CSS = """
    DetailsPanel { border: round $primary-darken-2; border-title-color: $text-muted; scrollbar-gutter: stable; }
    DetailsPanel:focus { border: round $accent; }
    DetailsPanel > Static { width: 100%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Details"
        self.can_focus = True
        self.sections: list[Section] = []  # what is on screen now (tests and other views read it)
        self._tables: list[Table | None] = []  # per section: its table, None for a key-value section
        self._fitted_room = -1  # the width the sections were last fitted to

    def compose(self):
        yield Static(id="details-empty")

    def show_sections(self, sections: list[Section]) -> None:
        """One Static per table, reused from selection to selection: each table wraps its words at the panel's
        width, and only a table whose numbers cannot fit is wider (then the panel scrolls sideways)."""
        sections = [self._keys_named(section) for section in sections]
        self.sections = sections
        empty = self.query_one("#details-empty", Static)
        empty.display = not sections
        if not sections:
            empty.update(Text("Nothing to show for this item.", style="dim"))
        self._tables = [None if tuple(section.columns) == KEY_VALUE else _table(section) for section in sections]
        pool = list(self.query(SectionLines).results(SectionLines))
        if len(pool) < len(self._tables):
            extra = [SectionLines() for _ in range(len(self._tables) - len(pool))]
            self.mount_all(extra)
            pool += extra
        for static in pool[: len(self._tables)]:
            static.display = True
        for static in pool[len(self._tables) :]:
            static.display = False
        self._fit_width()
        if self.scroll_offset != (0, 0):  # a scroll to where it is already costs a layout pass and a repaint
            self.scroll_home(animate=False)

    def _keys_named(self, section: Section) -> Section:
        """The section with each KeyHint written as this app's key for it (`press 5 to open the source view`)."""
        if not any(isinstance(cell, KeyHint) for row in section.rows for cell in row):
            return section

        def said(cell: Any) -> Any:
            if not isinstance(cell, KeyHint):
                return cell
            key = key_for(self.app, cell.action, (DocumentTree,))  # a link's Enter is the tree's
            return f"press {key} to {cell.purpose}" if key else cell.purpose

        return Section(section.title, section.columns, [[said(cell) for cell in row] for row in section.rows])

    def _room(self) -> int:
        return self.scrollable_content_region.width if self.size.width else 40

    def _fit_width(self) -> None:
        """Each section drawn at the panel's width: a key-value section exactly as wide, its values folding; a
        table fitted (`fitted`)."""
        console = self.app.console
        room = self._fitted_room = self._room()
        statics = self.query(SectionLines).results(SectionLines)
        for static, table, section in zip(statics, self._tables, self.sections, strict=False):
            if table is None:
                static.show(_key_value(section, room, console), room)
            else:
                static.show(fitted(section, table, room, console), room)

    def on_resize(self, event: events.Resize) -> None:
        """Fitted again when the width changes: new sections change only the panel's height (its virtual size,
        which also sends Resize), and fitting them again painted the same details twice a key."""
        if self._room() != self._fitted_room:
            self._fit_width()


def fitted(section: Section, table: Table, room: int, console: Any) -> Table | Text:
    """The table with its columns' widths chosen for `room` cells, where every column's minimum fits; else the
    section as records (`_records`): never a table cut at the panel's edge. The widths are ours, not Rich's:
    pressed for room, Rich narrows columns evenly below the minimums they were given (`mini tile` cut to `m`)."""
    columns = table.columns
    budget = room - 3 * (len(columns) - 1)  # a separator and a cell of padding either side between columns
    rows = section.rows[:MAX_ROWS]
    texts = [[name, *("" if index >= len(row) or row[index] is None else str(row[index]) for row in rows)]
             for index, name in enumerate(section.columns)]  # fmt: skip
    # no column narrower than its longest word: a table that would cut a name (`reduce_sum_1_keep_di…`) is
    # written as records instead
    least = [max(column.min_width or 1, *(cell_len(word) for text in column_texts for word in text.split()))
             for column, column_texts in zip(columns, texts, strict=True)]  # fmt: skip
    if sum(least) > budget:
        return _records(section, room, console)
    widths = [max(low, *(cell_len(line) for text in column_texts for line in text.splitlines() or [""]))
              for low, column_texts in zip(least, texts, strict=True)]  # fmt: skip
    excess = sum(widths) - budget
    while excess > 0:  # the widest column that can still give gives, a cell at a time
        index = max((k for k in range(len(widths)) if widths[k] > least[k]), key=widths.__getitem__)
        widths[index] -= 1
        excess -= 1
    for column, width in zip(columns, widths, strict=True):
        column.width = width
    return table


NARROW_PANEL = 40  # below this many cells, a value that cannot stand beside its name goes under it


def _key_value(section: Section, width: int, console: Any) -> Text:
    """A property/value section as aligned lines: names in a column as wide as the longest (at most half the
    panel, wrapping between words beyond), values folding at the panel's edge, so nothing is ever cut off.
    In a narrow panel (an 80-column terminal leaves it about 25 cells) a value too long for the cells beside its
    name is written on the lines under the name, at the panel's whole width: beside it, a message wrapped
    one word a line."""
    rows = section.rows[:MAX_ROWS]
    keys = [str(row[0]) for row in rows]
    key_width = max(min(max((len(key) for key in keys), default=1), max(width // 2, 8), 24), 1)
    value_width = max(width - key_width - 3, 4)
    out = Text(section.title, style="bold")
    for key, row in zip(keys, rows, strict=True):
        value = "" if len(row) < 2 or row[1] is None else str(row[1])
        # Text, not str: values come from files, and "[main]" in a path must not be read as Rich markup
        text = Text(value)
        if width < NARROW_PANEL and console.measure(text).maximum > value_width:
            out.append("\n")
            out.append_text(Text(key, style="cyan"))
            for line in text.wrap(console, max(width - 2, 4), overflow="fold"):
                line.rstrip()
                out.append("\n  ")
                out.append_text(line)
            continue
        key_lines = Text(key).wrap(console, key_width, overflow="fold")
        value_lines = text.wrap(console, value_width, overflow="fold") if value else [Text("")]
        for k in range(max(len(key_lines), len(value_lines))):
            name = key_lines[k].plain if k < len(key_lines) else ""
            out.append("\n")
            out.append(name.ljust(key_width), style="cyan")
            out.append(" │ ", style="dim")
            if k < len(value_lines):
                out.append_text(value_lines[k])
    if len(section.rows) > MAX_ROWS:
        out.append(f"\n{len(section.rows) - MAX_ROWS} more rows not shown", style="dim")
    if not section.rows:
        out.append("\n(none)", style="dim")
    return out


def _records(section: Section, width: int, console: Any) -> Text:
    """A table too wide for the panel, one record per row: the row's first cell, then `column value` pairs
    under it, folded at the panel's width."""
    out = Text(section.title, style="bold")
    rows = section.rows[:MAX_ROWS]
    for row in rows:
        line = Text()
        line.append(str(row[0]) if row and row[0] is not None else "", style="cyan")
        indent = ""  # the record's first line starts with its first cell; the lines under it are indented
        for name, value in zip(section.columns[1:], row[1:], strict=False):
            pair = Text.assemble((str(name), "dim"), " ", "" if value is None else str(value))
            if line.cell_len and len(indent) + line.cell_len + 3 + pair.cell_len > width:  # pairs stay whole
                out.append("\n" + indent)
                out.append_text(line)
                line, indent = Text(), "  "
            if line.cell_len:
                line.append(" · ", style="dim")
            line.append_text(pair)
        for piece in line.wrap(console, max(width - len(indent), 4), overflow="fold"):
            out.append("\n" + indent)
            out.append_text(piece)
            indent = "  "
    if len(section.rows) > MAX_ROWS:
        out.append(f"\n{len(section.rows) - MAX_ROWS} more rows not shown", style="dim")
    if not section.rows:  # as a table says it: a title alone read as if its rows were lost
        out.append("\n(none)", style="dim")
    return out


def _table(section: Section) -> Table:
    """A section with columns of its own (key-value sections are `_key_value`'s): numbers right-aligned and
    never broken, the first column (it names the row) and short cells whole, other text wrapping between
    words, a word longer than its cell ending in an ellipsis."""
    table = Table(
        title=section.title,
        title_justify="left",
        title_style="bold",
        expand=False,
        show_edge=False,
        pad_edge=False,
        header_style="bold dim",
    )
    rows = section.rows
    for index, column in enumerate(section.columns):
        cells = [str(row[index]) for row in rows[:MAX_ROWS] if index < len(row) and row[index] is not None]
        # a column of numbers (not one of blanks) is as wide as its longest number, however long (`fitted`
        # never makes a column narrower than its minimum), so a number is never broken nor cut; its header
        # wraps between words like any other
        numeric = index > 0 and any(cells) and all(NUMBER.fullmatch(cell) for cell in cells if cell)
        if numeric:
            least = max([len(word) for word in column.split()] + [len(cell) for cell in cells])
        else:
            if index == 0:
                words = [len(word) for word in column.split()] + [len(cell) for cell in cells]
            else:  # a short cell stays on one line ("x2, y1"); longer text wraps between words
                words = [len(word) for text in (column, *cells) for word in text.split()]
                words += [len(cell) for cell in cells if len(cell) <= 12]
            least = min(max(words, default=1), 16)
        table.add_column(column, justify="right" if numeric else "left", overflow="ellipsis", min_width=least)
    for row in rows[:MAX_ROWS]:
        # Text, not str: values come from files, and "[main]" in a path must not be read as Rich markup
        table.add_row(*(Text("" if value is None else str(value)) for value in row))
    if len(rows) > MAX_ROWS:
        table.caption = f"{len(rows) - MAX_ROWS} more rows not shown"
    if not rows:
        table.caption = "(none)"
    return table
