"""Source files (a TVM bundle's C, Relay, TIR and JSON; a compiled Core ML model's model.mil) with syntax
highlighting and line numbers.

A Line-API scroll view: the file is highlighted once (Pygments, through Rich), and only the visible lines
are turned into strips, so a 5,000-line generated C file scrolls as fast as a short one.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

LEXERS = {"c": "c", "cpp": "cpp", "relay": "python", "tir": "python", "mil": "python", "json": "json", "text": "text"}
GUTTER = Style(color="#6a6a6a")
TARGET = Style(bgcolor="#33334d")


class SourceView(ScrollView, can_focus=True):
    HELP_KEYS = [
        ("Source", "↑ ↓ PgUp PgDn Home End", "scroll the file"),
        ("Source", "tree: → C source", "open a graph node's fused function at its definition"),
    ]
    DEFAULT_CSS = """
    SourceView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    SourceView:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Source"
        self.document: Any = None
        self.member: str | None = None
        self.target_line = 1
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}

    def show_document(self, document: Any) -> None:
        self.document = document

    def show(self, member: str, line: int = 1) -> None:
        """Open `member` of the bundle with `line` (1-based) near the top and marked."""
        view = self.document.sources
        if member != self.member:
            code = view.source_text(member)
            lexer = LEXERS.get(view.language_of(member) or "text", "text")
            highlighted = Syntax(code, lexer, theme="monokai").highlight(code)
            self._lines = list(highlighted.split("\n", allow_blank=True))
            self.member = member
            width = max((len(line) for line in code.splitlines()), default=0)
            self.virtual_size = Size(width + self._gutter_width() + 1, len(self._lines))
        self.target_line = line
        self._strips.clear()
        self.border_title = Text(f"Source · {member}")
        self._scroll_to_target()
        self.call_after_refresh(self._scroll_to_target)  # the new virtual size applies after a refresh
        self.refresh()

    def _scroll_to_target(self) -> None:
        self.scroll_to(y=max(self.target_line - 4, 0), animate=False)

    def on_show(self) -> None:
        """A hidden view cannot scroll: place the target line once the tab is shown."""
        self.call_after_refresh(self._scroll_to_target)

    def _gutter_width(self) -> int:
        return len(str(max(len(self._lines), 1))) + 1

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        if self.member is None:  # the hint once, on the first line
            hint = "Select a source file in the tree." if y == 0 else ""  # any format's: TVM's C, Core ML's MIL
            return Strip([Segment(hint[:width].ljust(width), GUTTER)])
        if index >= len(self._lines):
            return Strip.blank(width)
        strip = self._strips.get(index)
        if strip is None:
            gutter = self._gutter_width()
            text = self._lines[index]
            segments = [Segment(f"{index + 1:>{gutter - 1}} ", GUTTER), *text.render(self.app.console)]
            strip = Strip(segments)
            if index + 1 == self.target_line:
                strip = strip.apply_style(TARGET)
            self._strips[index] = strip
        scroll_x = int(self.scroll_offset.x)
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width)
