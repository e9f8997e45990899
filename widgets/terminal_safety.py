"""The last guard between a file's bytes and the user's terminal: a line filter Textual applies to every line of
every widget, dropping any control or bidi character still in a line's text.

Names from files are made visible where they enter the document (`explorer.formatting.visible`: ESC shown as ␛),
so a view normally never holds one. But a view can show text that never passed through the document (a file
name, a source file's lines, an error's message); a control character there would reach the terminal raw, where
ESC]52 replaces the clipboard and ESC[2J clears the screen. Textual lays out such characters as zero cells wide,
so dropping them here keeps every line's layout exactly as computed, whatever view forgot."""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from explorer.formatting import UNSAFE


class InertText(LineFilter):
    """Drops control and bidi characters from the text of content segments (Textual's own control segments, the
    cursor moves, are not text and pass untouched)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(UNSAFE.search(segment.text) for segment in segments if not segment.control):
            return segments
        return [
            segment if segment.control else Segment(UNSAFE.sub("", segment.text), segment.style)
            for segment in segments
        ]
