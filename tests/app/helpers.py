"""Helpers for driving the app: wait for the threaded load instead of sleeping."""

from __future__ import annotations

from textual.pilot import Pilot

from widgets.problems import ProblemsTable

SIZE = (160, 48)


async def wait_loaded(pilot: Pilot, attempts: int = 400) -> None:
    app = pilot.app
    for _ in range(attempts):
        # loaded: the views mounted and the incidents' roles named (they follow the file onto the screen)
        ready = app.document is not None and app.views_ready and not app.query_one(ProblemsTable).roles_pending
        if app.load_error is not None or ready:
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError("the document did not load")
