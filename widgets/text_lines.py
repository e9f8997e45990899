"""Text that must stay readable at 80 columns: a header folded between its fields, a legend flowed item by item
onto as many lines as the width needs. Never half a number at the right edge (issue #32: `peak L2 9.0 KiB/28.0`)."""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip


def folded(text: str, width: int, style: Style, separator: str = " · ") -> list[Strip]:
    """`text` on as many lines as `width` needs, folded between its fields; a field longer than a line is folded
    at its spaces (a word longer than a line is cut)."""
    lines = [""]
    for k, field in enumerate(text.split(separator)):
        piece = field if k == 0 else separator + field
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("  " + field)
        else:
            lines[-1] += piece
        while len(lines[-1]) > width and " " in lines[-1][3 : width + 1]:  # at the last space that fits
            cut = lines[-1].rindex(" ", 3, width + 1)
            lines[-1], rest = lines[-1][:cut], lines[-1][cut + 1 :]
            lines.append("  " + rest)
    return [Strip([Segment(line[:width].ljust(width), style)]) for line in lines]


def flowed(items: list[tuple[str, Style, str, Style]], width: int, lead: tuple[str, Style]) -> list[Strip]:
    """Legend items (glyph, its style, label, label style) after `lead`, flowed onto lines of `width`, each
    item whole; the lines after the first are indented under the first item."""
    indent = len(lead[0])
    lines: list[list[Segment]] = [[Segment(*lead)]]
    used = indent
    for glyph, glyph_style, label, label_style in items:
        size = len(glyph) + len(label)
        if used + size > width and used > indent:
            lines.append([Segment(" " * indent, lead[1])])
            used = indent
        lines[-1] += [Segment(glyph, glyph_style), Segment(label, label_style)]
        used += size
    return [Strip(segments).crop(0, width).extend_cell_length(width) for segments in lines]


def without_last_fields(text: str, width: int, separators: str = " · ", mark: str = " …") -> str:
    """`text` as it is when it fits `width`; else without its last fields (split at the `separators` pattern),
    whole, until it fits with `mark` after them. A cut number (`peak L2 9.0 KiB/28.0`) reads as another number."""
    if len(text) <= width:
        return text
    pieces = re.split(f"({separators})", text)  # fields and the separators between them, alternately
    while len(pieces) > 2 and len("".join(pieces)) + len(mark) > width:
        del pieces[-2:]
    shortened = "".join(pieces)
    return text if shortened == text else shortened + mark


def fit_fields(fields: list[str], width: int, separator: str = " · ") -> str:
    """The fields joined, without the last ones (whole) until the line fits `width`, ending in "…" when any went;
    the first field is cut only when it alone is too long."""
    text = without_last_fields(separator.join(fields), width, re.escape(separator), separator + "…")
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
