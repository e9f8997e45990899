"""`v` in the buffers view and the memory map: the selected incident's misplaced tensor drawn where it would fit
for its whole stay (explorer.schedule.pressure's suggestion), marked as a preview; nothing is written."""

from __future__ import annotations

from typing import Any

from explorer.schedule.pressure import NO_INCIDENT, preview_room
from widgets.key_names import keys_said


class MovePreview:
    """Mixed into a LaneFrameWidget with a `highlight` (the incident's tensors, the misplaced one first); the view
    draws `preview` (a rooms.Room) when it is set."""

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
                if why == NO_INCIDENT:  # the keys that choose one, as this app binds them
                    choosing = [("focus('problems')", "problems"), ("next_problem(1)", "next")]
                    hint = keys_said(self.app, choosing)  # type: ignore[attr-defined]
                    why = f"{why} ({hint})" if hint else why
                self.notify(why, severity="warning")  # type: ignore[attr-defined]
                return
            self.preview = room
        self._preview_changed()
        self.refresh()  # type: ignore[attr-defined]

    def _preview_changed(self) -> None:
        """What else the view redraws when the preview comes or goes."""
