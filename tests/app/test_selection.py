"""One selection, whichever view made it: `g`, `b` and the details act on what the focused view selected (the
timeline, the buffers, the memory map, the graph), not on the tree's old cursor (issue #31's selection fix)."""

from __future__ import annotations

import pytest

from explorer.document import Section
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.details import DetailsPanel
from widgets.review_screens import LinksScreen, PromptScreen

SCHEDULE = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
MODEL = SAMPLE_DATA / "subgraphs_functions.onnx"


def details_titles(app) -> list[str]:
    shown: list[Section] = app.query_one(DetailsPanel).sections
    return [section.title for section in shown]


async def selected_after(pilot, *keys: str) -> tuple:
    """Wait for the file, press `keys`, and return what the app takes as selected (ref, label)."""
    await wait_loaded(pilot)
    await pilot.press(*keys)
    await pilot.pause()
    return pilot.app.selected_item()


async def press_and_read(pilot, key: str) -> object:
    await pilot.press(key)
    await pilot.pause()
    return pilot.app.screen


@pytest.mark.parametrize(
    ("view_key", "moves", "kind"),
    [
        ("2", ["full_stop", "full_stop", "down"], "workload"),  # the timeline's cursor
        ("3", ["right", "right", "right_square_bracket"], "buffer-entry"),  # a tensor of the buffers' snapshot
        ("7", ["right", "right", "right_square_bracket"], "buffer-entry"),  # a band of the memory map
    ],
)
async def test_g_b_and_the_details_follow_a_schedule_views_selection(view_key, moves, kind, tmp_path):
    app = make_app(SCHEDULE, bookmarks=tmp_path / "marks.json")
    async with app.run_test(size=SIZE) as pilot:
        ref, label = await selected_after(pilot, view_key, *moves)
        assert ref[0] == kind and label != "summary" and app.focused.id == {"2": "timeline", "3": "buffers",
                                                                             "7": "memory"}[view_key]  # fmt: skip
        assert app.document.describe(ref)[0].title in details_titles(app)  # the details show it
        tree_ref = app.query_one("#tree").cursor_node.data.ref
        screen = await press_and_read(pilot, "g")
        if isinstance(screen, LinksScreen):
            assert label in screen.title_text and str(tree_ref) not in screen.title_text
            await pilot.press("escape")
        else:  # an item without links says so, naming it (not the tree's item)
            assert any(label in notice.message for notice in app._notifications)
        screen = await press_and_read(pilot, "b")
        assert isinstance(screen, PromptScreen) and screen.question == f"Note for {label}:"
        await pilot.press(*"overlap here", "enter")
        await pilot.pause()
        assert [(bookmark.ref, bookmark.view) for bookmark in app.bookmarks] == [
            (ref, {"2": "timeline", "3": "buffers", "7": "memory"}[view_key])
        ]


async def test_the_timelines_workload_has_links_g_lists(tmp_path):
    app = make_app(SCHEDULE, bookmarks=tmp_path / "marks.json")
    async with app.run_test(size=SIZE) as pilot:
        ref, label = await selected_after(pilot, "2", "full_stop", "full_stop")
        assert ref[0] == "workload" and app.document.links(ref)
        screen = await press_and_read(pilot, "g")
        assert isinstance(screen, LinksScreen) and screen.title_text.startswith(f"Linked to {label}")
        assert screen.labels == [text for text, _ in app.document.links(ref)]


async def test_g_and_b_follow_the_graphs_selection_and_the_tree_keeps_its_own(tmp_path):
    app = make_app(MODEL, bookmarks=tmp_path / "marks.json")
    async with app.run_test(size=SIZE) as pilot:
        ref, label = await selected_after(pilot, "6", "down", "down")
        assert app.focused.id == "graph" and ref != ("summary",)
        screen = await press_and_read(pilot, "b")
        assert isinstance(screen, PromptScreen) and screen.question == f"Note for {label}:"
        await pilot.press("escape")
        await pilot.press("1")  # the tree has the keyboard: its cursor is the selection
        await pilot.pause()
        node = app.query_one("#tree").cursor_node
        assert app.selected_item() == (node.data.ref, node.data.label)


async def test_after_a_jump_the_views_selection_is_where_it_jumped(tmp_path):
    app = make_app(SCHEDULE, bookmarks=tmp_path / "marks.json")
    async with app.run_test(size=SIZE) as pilot:
        before, _ = await selected_after(pilot, "2", "full_stop", "full_stop")
        screen = await press_and_read(pilot, "g")
        target = app.document.links(before)[0][1]
        await pilot.press("enter")  # the first link: the timeline follows it
        await pilot.pause()
        assert app.focused.id == "timeline" and app.selected_item()[0] == target != before
        screen = await press_and_read(pilot, "b")
        assert screen.question == f"Note for {app.selected_item()[1]}:"


async def test_a_workloads_label_says_its_core(tmp_path):
    """The tree shows `#1 Conv_1` under its core's node; a bookmark or a prompt read alone must say the core."""
    app = make_app(SCHEDULE, bookmarks=tmp_path / "marks.json")
    async with app.run_test(size=SIZE) as pilot:
        ref, label = await selected_after(pilot, "2", "full_stop", "down", "full_stop")
        s = app.document.schedule
        assert label.startswith(s.core_label(int(s.wl_core[ref[1]])) + " · #")
