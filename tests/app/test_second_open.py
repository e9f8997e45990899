"""Issue #76: the TUI on a kept document (the derived-data cache) shows what it shows on the file read whole."""

from __future__ import annotations

import re

import pytest

from explorer.cache import documents as derived
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA, written
from widgets.app import make_app

SCHEDULE = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


@pytest.mark.parametrize("keys", [(), ("3",), ("4",)], ids=["tree", "timeline", "buffers"])
async def test_a_second_open_shows_the_same_screen(cache_on, keys):
    """Every view the same picture; the second open reads the entry (it is not written again)."""
    async def screen() -> str:
        app = make_app(SCHEDULE)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.2)
            await pilot.pause()
            return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())

    first = await screen()
    derived.wait_for_writes()
    kept = written(cache_on)  # the first screen's load kept it (once the incidents' roles were named)
    second = await screen()
    assert len(kept) == 1 and written(cache_on) == kept and second == first
