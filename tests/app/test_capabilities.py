"""Every format shows only its own views and words: tabs, view keys, help and palette follow the document's
capabilities, and the shared views speak its vocabulary (Pilot, one sample per format)."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.help_screen import HelpScreen

# sample → the tabs it must show, in order
CASES = {
    "clean_2x2_stschedule.json": ["tab-tree", "tab-timeline", "tab-buffers", "tab-graph", "tab-memory", "tab-mesh"],
    "views_ark_model.json": ["tab-tree", "tab-layout", "tab-graph"],
    "two_modules_mlf.tar": ["tab-tree", "tab-timeline", "tab-buffers", "tab-source", "tab-graph", "tab-memory"],
    "subgraphs_functions.onnx": ["tab-tree", "tab-graph"],
}
VIEW_KEYS = {"tab-timeline": "2", "tab-buffers": "3", "tab-layout": "4", "tab-source": "5", "tab-graph": "6",
             "tab-memory": "7", "tab-mesh": "8"}  # fmt: skip


def tab_ids(app) -> list[str]:
    tabs = app.query_one(TabbedContent)
    return [pane.id for pane in tabs.query("TabPane")]


def active_keys(app) -> set[str]:
    """The keys the footer would show and the app would answer (bindings whose check_action allows them)."""
    return {binding.key for _, binding, enabled, _ in app.active_bindings.values() if enabled}


@pytest.mark.parametrize("name", list(CASES))
async def test_tabs_keys_and_help_follow_capabilities(name):
    app = make_app(SAMPLE_DATA / name)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert tab_ids(app) == CASES[name]
        keys = active_keys(app)
        for tab, key in VIEW_KEYS.items():
            assert (key in keys) == (tab in CASES[name]), f"key {key} for {tab}"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        wheres = {where for where, _, _ in app.screen.app_bindings}
        assert ("Timeline" in wheres) == ("tab-timeline" in CASES[name])
        assert ("Layout" in wheres) == ("tab-layout" in CASES[name])
        await pilot.press("escape")
        for tab, key in VIEW_KEYS.items():  # a view key that is not offered does nothing
            if tab not in CASES[name]:
                await pilot.press(key)
                assert app.query_one(TabbedContent).active == "tab-tree"
        palette = {command.title for command in app.get_system_commands(app.screen)}
        assert ("Timeline" in palette) == ("tab-timeline" in CASES[name])
        assert ("Export Chrome trace" in palette) == ("tab-timeline" in CASES[name])


async def test_tvm_storage_plan_speaks_its_own_words():
    app = make_app(SAMPLE_DATA / "two_modules_mlf.tar")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline_text = "\n".join(strip.text for strip in app.query_one("#timeline").render_frame())
        assert "node order" in timeline_text and "cycles" not in timeline_text
        assert "pe blue" not in timeline_text and "tvm_op" in timeline_text
        await pilot.press("3")
        buffers_text = "\n".join(strip.text for strip in app.query_one("#buffers").render_frame())
        assert "storage" in buffers_text and "written by the node" in buffers_text
        assert "L2" not in buffers_text and "WL0" not in buffers_text and "ifmap" not in buffers_text
        await pilot.press("question_mark")
        help_text = " ".join(what for _, _, what in app.screen.app_bindings)
        assert "workload" not in help_text and "core" not in help_text
        assert "node" in help_text and "module" in help_text


async def test_schedule_keeps_its_words():
    app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2")
        timeline_text = "\n".join(strip.text for strip in app.query_one("#timeline").render_frame())
        assert "time (cycles)" in timeline_text and "pe blue, vp green, dt orange" in timeline_text
        await pilot.press("3")
        buffers_text = "\n".join(strip.text for strip in app.query_one("#buffers").render_frame())
        assert "L2" in buffers_text and "WL0" in buffers_text and "ifmap" in buffers_text
