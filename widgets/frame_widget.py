"""Base for the Line-API views: compute every line of a frame at once, and only when the state changes.

Textual asks for lines one by one; the timeline and the buffer view are cheapest drawn whole from numpy arrays,
so each keeps the last frame and a key describing the state it was drawn for.
"""

from __future__ import annotations

from typing import Any

from textual.strip import Strip
from textual.widget import Widget

from explorer.document import Document


class FrameWidget(Widget):
    document: Document | None = None

    @property
    def shown(self) -> Document:
        """The document the view shows: its frames and keys run only once it has one (show_document)."""
        if self.document is None:
            raise RuntimeError(f"{type(self).__name__} shows no document yet")
        return self.document

    def frame_key(self) -> tuple:
        """Everything (besides size and document) that changes what is drawn."""
        raise NotImplementedError

    def render_frame(self) -> list[Strip]:
        """Every line of the current frame. Public so the benchmark can time exactly one redraw."""
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        key = (self.size, id(self.document), *self.frame_key())
        if key != getattr(self, "_frame_key", None):
            self._frame_lines = self.render_frame()
            self._frame_key = key
        lines = self._frame_lines
        return lines[y] if y < len(lines) else Strip.blank(self.size.width)


class LaneFrameWidget(FrameWidget):
    """A frame view of one lane (core) of the document's schedule at a time, with a cursor on one of its
    blocks: the buffer view and the memory map. Subclasses hold `core_index` and `frame` as reactives."""

    core_index: int
    frame: int  # the cursor: the index of a block within the lane

    @property
    def schedule(self) -> Any:
        return self.document.schedule if self.document else None

    @property
    def core(self) -> int:
        return int(self.schedule.core_ids[self.core_index])

    @property
    def row(self) -> int:
        """The schedule row under the cursor (the lane's last block when the cursor is past its end)."""
        rows = self.schedule.core_rows(self.core)
        return rows.start + min(self.frame, max(len(rows) - 1, 0))
