"""A TVM bundle in the app: graph nodes drive the storage-plan views, C sources open at the fused function."""

from __future__ import annotations

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.messages import RevealRef

SAMPLE = SAMPLE_DATA / "two_modules_mlf.tar"


async def test_graph_node_moves_the_storage_views_and_opens_its_c_source():
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one("#tabs")
        assert tabs.query("#tab-buffers") and tabs.query("#tab-source")
        assert not tabs.query("#tab-layout")
        app.post_message(RevealRef(("workload", 1)))  # node 4, the relu: the module's second tvm_op
        await pilot.pause()
        assert app.query_one("#details").sections[0].title == "Graph node 4"
        assert app.buffers.row == 1 and app.timeline.selected == 1
        await pilot.press("enter", "down", "enter")  # open the node, then its "→ C source" item
        await pilot.pause()
        assert tabs.active == "tab-source" and app.focused is app.source
        assert (app.source.member, app.source.target_line) == ("codegen/host/src/classifier_lib0.c", 12)
        view_row = app.query_one("#details").sections[0].rows[-1]
        assert list(view_row) == ["view", "press 5 to open the source view"]  # the key from the bindings
        lines = [app.source.render_line(y).text for y in range(app.source.size.height)]
        assert any(line.lstrip().startswith("12 TVM_DLL int32_t tvmgen_classifier_fused_nn_relu(") for line in lines)
        await pilot.press("3")
        header = app.buffers.render_line(0).text
        assert "module classifier · before node #4" in header


async def test_timeline_selection_shows_the_node_and_storage_ids():
    app = make_app(SAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("2", "full_stop", "full_stop", "full_stop")
        await pilot.pause()
        assert app.query_one("#details").sections[0].title == "Graph node 8"
        await pilot.press("3", "right_square_bracket")
        await pilot.pause()
        titles = [section.title for section in app.query_one("#details").sections]
        assert titles[0].startswith("Storage id")
