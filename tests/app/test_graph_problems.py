"""Problems on the graph (issue #33, its "problems on the graph" part): the boxes and closed groups that hold a
problem carry ✗ or ⚠, a "problems" colour mode paints them, and `n` from the graph stays in the graph."""

from __future__ import annotations

import numpy as np

from explorer.api import open_document
from explorer.graph.colours import colour_modes, item_colours
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import item_texts
from explorer.graph.problems import mark_problems
from explorer.graph.visible import visible_graph
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def planted_model():
    document = open_document(PLANTED)
    document.run_deep_checks()
    return document, document.view.graph_model()


def test_a_schedules_problems_mark_their_workloads_and_layers():
    document, model = planted_model()
    assert mark_problems(model, document) == 3  # the overlap's, the unresolved transfer's, the WL0 overlap's
    marked = {model.node_ref[n] for n in np.flatnonzero(~np.isnan(model.node_values["problems"]))}
    assert marked == {("workload", 15), ("workload", 28), ("workload", 41)}
    texts = item_texts(model, visible_graph(model, initial_expansion(model)))
    titled = sorted(t for t in texts.titles if t.startswith("✗ "))
    assert titled == ["✗ Add_3", "✗ Conv_4", "✗ Conv_5"]  # the closed layers holding them
    assert "problems" in colour_modes(model)
    visible = visible_graph(model, initial_expansion(model))
    colours, legend = item_colours(model, visible, "problems")
    assert [name for name, _ in legend] == ["✗ error", "⚠ warning", "no problem"]
    assert len(set(colours.tolist())) == 2  # red boxes and grey ones


def test_a_clean_file_has_no_marks_and_no_problems_mode():
    document = open_document(SAMPLE_DATA / "clean_2x2_stschedule.json")
    model = document.view.graph_model()
    assert mark_problems(model, document) == 0 and "problems" not in colour_modes(model)


async def test_n_from_the_graph_stays_in_the_graph():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("6")
        graph = app.query_one("#graph")
        for _ in range(100):
            if graph.ready:
                break
            await pilot.pause(0.02)
        await pilot.press("n")  # the first problem is an L2 overlap: from the tree it opens the buffers view
        await pilot.pause()
        assert app.focused is graph and app.query_one("TabbedContent").active == "tab-graph"
        assert graph.model.node_ref[graph.selected_key[1]] == ("workload", 15)
