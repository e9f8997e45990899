"""ONNX and Core ML in the app: links from a value jump to its producer and consumers; nested graphs open."""

from __future__ import annotations

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA, samples_dir
from widgets.app import make_app
from widgets.messages import RevealRef

ONNX = SAMPLE_DATA / "subgraphs_functions.onnx"


async def test_onnx_value_link_jumps_to_the_consumer_inside_a_subgraph():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        tabs = app.query_one("#tabs")
        assert all(tabs.get_tab(f"tab-{name}").disabled for name in ("timeline", "buffers", "layout", "source"))
        app.post_message(RevealRef(("value", "graph", "x")))  # a graph input
        await pilot.pause()
        tree = app.query_one("#tree")
        assert tree.cursor_node.data.ref == ("value", "graph", "x")
        await pilot.press("enter", "down")  # open the value: "← input of main graph", then "→ to ..." links
        await pilot.press("down", "enter")  # the first consumer: the Loop in the If's else branch
        await pilot.pause()
        assert tree.cursor_node.data.ref == ("node", "graph.node[0].attribute[0].g", 0)
        assert app.query_one("#details").sections[0].title == "Node #0 Loop  inner_loop"


async def test_onnx_search_finds_a_node_in_a_nested_graph():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("ctrl+f")
        await pilot.press(*"inner_loop")
        await pilot.pause(0.2)
        await pilot.press("enter")
        await pilot.pause()
        tree = app.query_one("#tree")
        assert tree.cursor_node.data.ref == ("node", "graph.node[0].attribute[0].g", 0)


async def test_coreml_nested_block_op_details():
    app = make_app(samples_dir("coreml") / "mil_builder_while_cond_ios16.mlpackage")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        view = app.document.analysis["coreml"]
        deepest = max(view.model.blocks, key=len)
        app.post_message(RevealRef(("op", deepest, 0)))
        await pilot.pause()
        assert app.query_one("#tree").cursor_node.data.ref == ("op", deepest, 0)
        assert app.query_one("#details").sections[0].title.startswith("Op ")
