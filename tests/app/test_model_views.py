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
        assert not any(tabs.query(f"#tab-{name}") for name in ("timeline", "buffers", "layout", "source"))
        app.post_message(RevealRef(("value", "graph", "x")))  # a graph input
        await pilot.pause()
        tree = app.query_one("#tree")
        assert tree.cursor_node.data.ref == ("value", "graph", "x")
        await pilot.press("enter", "down")  # open the value: "← input of main graph", then "→ to ..." links
        await pilot.press("down")
        await pilot.pause()
        link = app.query_one("#details").sections[0]  # the key is named as the tree binds it (issue #55)
        assert (link.title, [list(row) for row in link.rows]) == ("Link", [["link", "press Enter to jump there"]])
        await pilot.press("enter")  # the first consumer: the Loop in the If's else branch
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
        view = app.document.view
        deepest = max(view.model.blocks, key=len)
        app.post_message(RevealRef(("op", deepest, 0)))
        await pilot.pause()
        assert app.query_one("#tree").cursor_node.data.ref == ("op", deepest, 0)
        assert app.query_one("#details").sections[0].title.startswith("Op ")


async def test_g_jumps_from_a_node_to_what_it_feeds():
    from widgets.review_screens import LinksScreen

    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.post_message(RevealRef(("node", "graph", 0)))  # the If: reads `flag`, feeds the Scale call
        await pilot.pause()
        assert [target for _, target in app.document.links(("node", "graph", 0))] == [
            ("graph", "graph"),
            ("node", "graph", 1),
        ]
        await pilot.press("d", "g")  # from the details panel
        await pilot.pause()
        assert isinstance(app.screen, LinksScreen)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.query_one("#tree").cursor_node.data.ref == ("node", "graph", 1)


def test_links_of_every_format():
    from explorer.api import open_document

    ark = open_document(SAMPLE_DATA / "views_ark_model.json")
    assert [t for _, t in ark.links(("group", 4))] == [("group", 1), ("group", 2)]  # Sub reads the max and the scale
    tvm = open_document(SAMPLE_DATA / "two_modules_mlf.tar")
    assert [label for label, _ in tvm.links(("workload", 1))] == [
        "← #3 tvmgen_classifier_fused_nn_dense_add",
        "→ #7 tvmgen_classifier_fused_nn_dense_add_1",
    ]
    schedule = open_document(SAMPLE_DATA / "clean_2x2_stschedule.json")
    assert schedule.links(("workload", 1))
