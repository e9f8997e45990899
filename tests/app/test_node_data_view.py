"""Per-node data in the TUI (issue #33): `--node-data` opens the graph coloured by it, `a` cycles what closed
groups show, `T` lists the top boxes and jumps to one, the details list each set's value, and the palette's
"Add per-node data" adds a file while the app runs (a bad one is a problem and nothing else changes)."""

from __future__ import annotations

import numpy as np

from tests.app.helpers import SIZE
from tests.app.test_graph_view import open_graph
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.problems import ProblemsTable
from widgets.review_screens import LinksScreen

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"
PROFILE = SAMPLE_DATA / "clean_2x2_layer_profile.csv"
ONNX = SAMPLE_DATA / "subgraphs_functions.onnx"


async def answer_prompt(pilot, action, path) -> None:
    """Run the palette command's action and answer its path prompt (the path set, then Enter, as typed)."""
    from textual.widgets import Input

    action()
    await pilot.pause()
    pilot.app.screen.query_one(Input).value = str(path)
    await pilot.press("enter")


async def test_node_data_colours_the_graph_and_a_and_t_work():
    app = make_app(CLEAN, node_data=[PROFILE])
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        name = "data: clean_2x2_layer_profile"
        assert graph.modes[graph.mode] == name  # opened on the user's numbers
        text = "\n".join(strip.text for strip in graph.render_frame())
        assert "colour: data: clean_2x2_layer_profile" in text and "9.15k" in text  # the legend's first step
        colours, _ = graph.colours()
        assert len(set(colours.tolist())) > 2  # the layers differ
        data = graph.model.data_sets[name]
        await pilot.press("a")
        assert data.aggregate == "max"
        await pilot.press("a", "a")
        assert data.aggregate == "sum"
        await pilot.press("T")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LinksScreen) and len(screen.labels) == 12
        hottest = screen.labels[0].split()[1]
        values = np.sort(data.unit_values[np.isfinite(data.unit_values)])[::-1]
        assert screen.labels[0].split()[0] == f"{values[0]:,.6g}"
        await pilot.press("enter")
        await pilot.pause()
        layout = graph.picture
        assert layout.labels[graph.selected_item] == hottest and layout.unit[graph.selected_item]


async def test_the_palette_adds_node_data_and_the_details_show_its_values(tmp_path):
    profile = tmp_path / "ops.json"
    profile.write_text('{"choose": 2.5, "scale": -1, "ghost": 1}')
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        modes = list(graph.modes)
        await answer_prompt(pilot, app.action_add_node_data, profile)
        for _ in range(200):
            if "data: ops" in graph.modes:
                break
            await pilot.pause(0.02)
        assert graph.modes == [*modes, "data: ops"] and graph.modes[graph.mode] == "data: ops"
        assert [p.code for p in app.query_one(ProblemsTable).problems] == ["node-data-unknown-key"]
        model = graph.model
        node = model.node_label.index("choose")
        sections = app.document.describe(model.node_ref[node])
        table = next(s for s in sections if s.title == "Per-node data")
        assert list(table.rows) == [("ops", "2.5")]
        # a file that is not node data: one problem, no new mode
        bad = tmp_path / "notes.txt"
        bad.write_text("just some words\nand more words here\n")
        await answer_prompt(pilot, app.action_add_node_data, bad)
        for _ in range(200):
            if len(app.query_one(ProblemsTable).problems) == 2:
                break
            await pilot.pause(0.02)
        codes = sorted(p.code for p in app.query_one(ProblemsTable).problems)
        assert codes == ["node-data-unknown-key", "node-data-unreadable"]
        assert graph.modes == [*modes, "data: ops"]


async def test_a_and_t_without_node_data_say_how_to_get_some():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        await pilot.press("a")
        await pilot.press("T")
        await pilot.pause()
        assert not isinstance(app.screen, LinksScreen)
        assert any("per-node data" in str(n.message) for n in app._notifications)
        assert graph.model.data_sets == {}


async def test_t_lists_the_top_boxes_of_a_numeric_mode_too():
    """A schedule's time (and a joined trace's measured time, the same way): T lists its layers by value."""
    app = make_app(CLEAN)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        graph.mode = graph.modes.index("time")
        await pilot.press("T")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LinksScreen) and screen.title_text == "Top 12 by time"
        values = [float(label.split()[0].replace(",", "")) for label in screen.labels]
        assert values == sorted(values, reverse=True)
        assert graph.model.data_sets == {}  # the mode keeps its own colours


async def test_a_bad_node_data_file_does_not_turn_the_model_red(tmp_path):
    """Issue #45, item 6: a CSV with unknown keys and words for numbers added 2 errors and a warning to the
    model's count (`✗ 2 errors ⚠ 1 warning`); its problems are listed after the model's, counted apart."""
    from widgets.summary_bar import SummaryBar

    bad = tmp_path / "bad.csv"
    bad.write_text("node,value\nConv_0,fast\nConv_1,slow\nno_such_layer,3\n")
    app = make_app(CLEAN, node_data=[bad])
    async with app.run_test(size=(160, 48)) as pilot:
        await open_graph(pilot)
        await pilot.pause()
        document = app.document
        assert {p.code for p in document.problems} >= {"node-data-not-numeric", "node-data-unknown-key"}
        summary = str(app.query_one(SummaryBar).render())
        assert "✓ 0 errors" in summary and "0 warnings" in summary  # the model's own: none
        table = app.query_one(ProblemsTable)
        added = sum(p.code.startswith("node-data-") for p in document.problems)
        title = str(table.border_title)
        assert ("0 errors · 0 warnings" in title and f"{added} in added files" in title) or (
            "✗0 ⚠0" in title and f"+{added} added" in title), title
        codes = [p.code for p in table.problems]
        assert all(code.startswith("node-data-") for code in codes[codes.index("node-data-not-numeric"):])
