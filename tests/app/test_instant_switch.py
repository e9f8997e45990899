"""A view switch paints the view and nothing after it (issue #73): the footer is one line that repaints only
when its keys change, and a big core's memory map is built by a worker while the view is already shown."""

from __future__ import annotations

import pytest

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.key_footer import KeyFooter

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def _line(widget) -> str:
    return "".join(widget.render_line(0).text)


async def test_the_footer_names_the_focused_view_s_keys_and_repaints_only_when_they_change():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        footer = app.query_one(KeyFooter)
        assert not footer.children  # one widget draws the line: nothing is mounted per key
        tree_line = _line(footer)
        assert tree_line.startswith(" q Quit  ? Help  p Problems  n Next problem ")
        assert tree_line.rstrip().endswith("▏^p palette") and len(tree_line) == SIZE[0]
        spans = footer.key_spans()
        assert spans["q"] == (0, 8) and spans["?"] == (8, 16) and spans["^p"][1] == SIZE[0]
        await pilot.press("2")
        await pilot.pause()
        timeline_line = _line(footer)
        assert timeline_line.startswith(" . Next  c Critical  q Quit ") and timeline_line != tree_line
        repaints = []
        footer.refresh = lambda *a, **k: repaints.append(a) or footer  # type: ignore[method-assign]
        footer.bindings_changed(app.screen)  # the same keys: no repaint
        assert repaints == []
        await pilot.press("1")
        await pilot.pause()
        assert len(repaints) == 1 and footer.keys[0].display == "q"


async def test_a_click_on_a_footer_key_presses_it():
    from widgets.help_screen import HelpScreen

    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        start, _end = app.query_one(KeyFooter).key_spans()["?"]
        await pilot.click(KeyFooter, offset=(start + 1, 0))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_a_big_core_s_memory_map_is_built_by_a_worker_while_keys_are_answered(monkeypatch):
    from widgets.schedule import memory_map as view_module

    monkeypatch.setattr(view_module, "BUILT_IN_PLACE", 0)  # every core counts as big
    built: list[tuple] = []
    real = view_module.memory_map

    def slow_build(*args, **kwargs):
        import time

        time.sleep(0.3)  # the worker is still building when the switch has painted
        built.append(args[1:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(view_module, "memory_map", slow_build)
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        memory = app.memory_map
        await pilot.press("7")
        await pilot.pause()
        text = "\n".join("".join(strip.text) for strip in memory.render_frame())
        assert "core 0 (x0, y0) · L2 · drawing the map of 12 steps…" in text and built == []
        await pilot.press("right")  # answered meanwhile: the cursor moves, the map is still coming
        await pilot.pause()
        assert memory.frame == 1
        for _ in range(100):
            await pilot.pause(0.02)
            if memory.maps_built:
                break
        assert built == [(0, "l2")] and (0, "l2") in memory._maps
        text = "\n".join("".join(strip.text) for strip in memory.render_frame())
        assert "core 0 (x0, y0) · L2 · workload #" in text and "step 2/12" in text and "drawing" not in text


@pytest.mark.parametrize("width", [80, 160])
async def test_the_footer_draws_what_textual_s_footer_drew(width):
    """The picture is Textual's (the snapshots did not change): keys bold with a space either side, each
    description then a space, the palette's key at the right after an edge; at 80 columns the left part is cut
    where the palette starts."""
    app = make_app(PLANTED)
    async with app.run_test(size=(width, 24)) as pilot:
        await wait_loaded(pilot)
        line = app.query_one(KeyFooter).render_line(0)
        assert line.cell_length == width
        text = line.text
        assert text.endswith("▏^p palette ") and text.index("▏") == width - 12
        bold = [segment.text for segment in line if segment.style is not None and segment.style.bold]
        assert bold[:3] == [" q ", " ? ", " p "] and bold[-1] == "^p"
