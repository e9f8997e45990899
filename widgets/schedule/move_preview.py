"""`v` in the buffers view and the memory map: the selected incident's misplaced tensor drawn where it would fit
for its whole stay (explorer.schedule.pressure's suggestion), marked as a preview; nothing is written."""

from __future__ import annotations

from typing import Any

from explorer.schedule.pressure import preview_room


class MovePreview:
    """Mixed into a LaneFrameWidget with a `highlight` (the incident's tensors, the misplaced one first); the view
    draws `preview` (a pressure.Room) when it is set."""

    preview: Any = None

    def action_preview_move(self) -> None:
        """Draw the incident's misplaced tensor where it would fit for its whole stay (nothing is written); again:
        back to the file as it is."""
        if self.schedule is None:  # type: ignore[attr-defined]
            return
        if self.preview is not None:
            self.preview = None
        else:
            room, why = preview_room(self.document, self.core, self.highlight, self.row)  # type: ignore[attr-defined]
            if room is None:
                self.notify(why, severity="warning")  # type: ignore[attr-defined]
                return
            self.preview = room
        self._preview_changed()
        self.refresh()  # type: ignore[attr-defined]

    def _preview_changed(self) -> None:
        """What else the view redraws when the preview comes or goes."""
