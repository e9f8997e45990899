"""The graph view driven as a person would: open it, walk edges, open and close groups, find, colour, zoom,
turn; selection shared with the tree both ways."""

from __future__ import annotations

import pytest
from textual.widgets import TabbedContent

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.doc_tree import DocumentTree

ONNX = SAMPLE_DATA / "subgraphs_functions.onnx"
SCHEDULE = SAMPLE_DATA / "clean_2x2_stschedule.json"


async def open_graph(pilot):
    await wait_loaded(pilot)
    await pilot.press("6")
    graph = pilot.app.query_one("#graph")
    for _ in range(400):
        if graph.ready:
            break
        await pilot.pause(0.01)
    await pilot.pause()
    assert graph.ready and not graph.error
    return graph


def frame_text(graph) -> str:
    return "\n".join(strip.text for strip in graph.render_frame())


async def test_walks_edges_and_the_tree_follows():
    app = make_app(SCHEDULE)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        assert app.query_one(TabbedContent).active == "tab-graph"
        layout = graph.picture
        start = graph.selected_item
        assert layout.labels[start] == "Conv_0"
        await pilot.press("down")
        after = graph.selected_item
        assert any(e.source == start and e.target == after for e in layout.edges)  # moved to a consumer
        tree = app.query_one(DocumentTree)
        assert tree.cursor_node.data.ref == graph._ref_of(layout, after)  # the tree followed
        await pilot.press("up")
        assert graph.selected_item == start
        # the tree's cursor selects in the graph too
        tree.reveal(graph.model.group_ref[graph.model.group_label.index("Add_3")])  # a layer: its first workload
        await pilot.pause()
        assert layout.labels[graph.selected_item] == "Add_3"


async def test_groups_open_and_close_with_enter():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        model = graph.model
        assert graph.expanded == set()  # small graphs open whole, but for If/Loop bodies and local functions
        await pilot.press("X")
        assert graph.expanded == set(range(model.n_groups))
        await pilot.press("x")  # collapse every group
        collapsed = graph.picture.visible.n_items
        assert graph.expanded == set()
        groups = [i for i in range(graph.picture.visible.n_items) if graph.picture.visible.item_kind[i] == 1]
        graph.select_item(groups[0])
        await pilot.press("enter")
        assert graph.picture.visible.n_items > collapsed and len(graph.expanded) == 1
        assert graph.selected_key[0] == 0  # the cursor moved onto the opened group's first member
        await pilot.press("enter")  # on a node: closes its group again
        assert graph.expanded == set() and graph.picture.visible.n_items == collapsed


async def test_find_marks_every_match_and_jumps():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        await pilot.press("x")
        await pilot.press("slash")
        await pilot.press(*"body")
        await pilot.press("enter")
        await pilot.pause()
        names = [graph.model.node_label[n] for n in graph.matches]
        assert names and all("body" in name for name in names)
        first = graph.selected_key
        assert graph.model.node_label[first[1]] == names[0]  # jumped, opening the group that hid it
        await pilot.press("right_square_bracket")
        assert graph.selected_key != first or len(names) == 1
        assert "match " in frame_text(graph)


async def test_colour_zoom_direction_and_constants_keys():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        assert "colour: op type" in frame_text(graph)
        await pilot.press("c")
        assert "colour: dtype" in frame_text(graph) and "float32" in frame_text(graph)
        await pilot.press("c")
        assert "colour: parameter bytes" in frame_text(graph)
        before = graph.picture.visible.n_items
        await pilot.press("i")
        assert graph.picture.visible.n_items > before  # initializers shown as their own boxes
        await pilot.press("minus")
        assert "compact" in frame_text(graph)
        await pilot.press("minus")
        assert "dots" in frame_text(graph) and "●" in frame_text(graph)
        await pilot.press("plus")
        assert "compact" in frame_text(graph)
        await pilot.press("r")
        assert graph.direction == "LR" and "compact LR" in frame_text(graph)
        await pilot.press("f")
        assert graph.picture.width <= graph.size.width or graph.level == 2


async def test_schedule_colour_modes_and_help():
    app = make_app(SCHEDULE)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        assert graph.modes == ["op type", "time", "core", "L2 peak"]
        await pilot.press("question_mark")
        wheres = {where for where, _, _ in app.screen.app_bindings}
        assert "Graph" in wheres


def test_readme_documents_every_graph_key():
    from tests.conftest import ROOT
    from widgets.graph.view import GraphView

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("- **Graph** (`6`") : readme.index("- **ONNX** in the tree")]
    for _, keys, _ in GraphView.HELP_KEYS:
        for key in (k.strip() for k in keys.split("/")):
            shown = {"Shift+arrows": "Shift+arrows", "click": "click", "wheel": "click"}.get(key, key)
            assert f"`{shown}`" in section or shown in section, key


async def test_the_selections_edges_carry_their_values():
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        model = graph.model
        scale = model.node_label.index("scale")
        graph.select_item(int(graph.picture.visible.node_item[scale]))
        await pilot.pause()
        text = frame_text(graph)
        # `scale` reads `branch_out` from the If and feeds `y`: both edges are labelled with the value and its
        # shape, said as the boxes say it (the graph's usual dtype left out)
        assert "branch_out : 2×n" in text and "y : 2×n" in text
        graph.select_item(int(graph.picture.visible.node_item[model.node_label.index("choose")]))
        await pilot.pause()
        # where the type does not fit beside the edge leaving `choose`, the value's name still does
        assert "branch_out" in frame_text(graph) and "y : 2×n" not in frame_text(graph)


async def test_a_schedule_layer_opens_into_its_workloads_per_core():
    app = make_app(SCHEDULE)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        layout = graph.picture
        assert layout.labels[graph.selected_item] == "Conv_0" and layout.unit[graph.selected_item]
        await pilot.press("enter")
        opened = graph.picture
        workloads = [label for label, unit in zip(opened.labels, opened.unit.tolist(), strict=True) if not unit]
        assert sorted(workloads) == ["c0 (0,0) · #0", "c1 (1,0) · #0", "c2 (0,1) · #0", "c3 (1,1) · #0"]  # a core each
        assert "Conv_0" in opened.frame_labels.values()
        selected = graph.selected_item  # the layer's first workload in the file, not any of them
        model = graph.model
        assert model.node_ref[graph.selected_key[1]] == model.group_ref[model.group_label.index("Conv_0")]
        assert opened.titles[selected].startswith("pe c0 (0,0) · #0") and "cycles" in opened.details[selected]
        assert "Conv_0" not in opened.details[selected]  # the frame's title says the layer: the box does not repeat it
        await pilot.press("enter")  # on a workload: the layer closes again
        assert graph.picture.labels[graph.selected_item] == "Conv_0"


async def test_big_graphs_are_built_in_the_background_once_the_file_is_shown(monkeypatch):
    import widgets.document_loading

    monkeypatch.setattr(widgets.document_loading, "SYNC_GRAPH_NODES", 0)  # every graph counts as big here
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        for _ in range(300):
            if app.document.view.graph_ready():
                break
            await pilot.pause(0.01)
        assert app.document.view.graph_ready()  # built by a background worker, before the graph key
        graph = await open_graph(pilot)
        assert graph.model is app.document.view.graph_model()
    monkeypatch.undo()
    small = make_app(ONNX)
    async with small.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert not small.document.view.graph_ready()  # small: built when the view is first shown


def test_a_schedule_graph_names_what_flows_on_each_edge():
    """Issue #41, item 8: an edge between workloads said its source again (`Conv_0 : Conv_0 · 154,590`); it now
    names the transfers that make it."""
    from explorer.api import open_document

    model = open_document(SCHEDULE).view.graph_model()
    assert model.edge_label and all(label.startswith("tensor ") for label in model.edge_label)


async def _keys_then_state(monkeypatch, path, keys: list[str], before_ready: bool) -> tuple:
    """The graph's selection, open groups and window after `keys`, pressed while it is still being laid out (the
    first layout held back until they are all in) or once it is drawn."""
    import threading

    import widgets.graph.view as view

    monkeypatch.setattr(view, "SYNC_GRAPH_NODES", -1)  # built in a worker, as a big graph is
    release = threading.Event()
    real = view.layout_graph

    def held(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(view, "layout_graph", held)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("6")
        graph = pilot.app.query_one("#graph")
        if before_ready:
            await pilot.press(*keys)
            assert not graph.ready and len(graph.kept_keys.kept) == len(keys)
        release.set()
        for _ in range(3000):  # on a loaded machine the worker's layout takes seconds
            if graph.ready:
                break
            await pilot.pause(0.01)
        first = graph.session.key_of(graph.picture, graph.picture.first_item)
        await pilot.pause()
        if not before_ready:
            await pilot.press(*keys)
        for _ in range(3000):  # the kept keys run one a refresh
            if not graph.kept_keys.kept:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        moved = graph.selected_key != first or graph.expanded
        return graph.selected_key, frozenset(graph.expanded), graph.origin, bool(moved)


@pytest.mark.parametrize("path", [SCHEDULE, ONNX], ids=lambda p: p.stem)
async def test_keys_pressed_while_the_graph_is_laid_out_are_not_lost(monkeypatch, path):
    """Issue #59 item 6: a key pressed while a big schedule's graph was being laid out did nothing. Kept, they
    end where the same keys pressed after the first frame end (opened a group, walked into it and on)."""
    keys = ["down", "enter", "down", "right", "down", "enter", "up"]
    early = await _keys_then_state(monkeypatch, path, keys, before_ready=True)
    late = await _keys_then_state(monkeypatch, path, keys, before_ready=False)
    assert early == late
    assert early[-1]  # the keys did something


async def test_a_selection_arriving_while_the_app_closes_is_dropped():
    """A view's selection still in the queue when the app is taken down reached a screen without its details
    panel, and the app raised instead of closing (seen in `make bench`, whose probes end right after a key)."""
    from widgets.details import DetailsPanel
    from widgets.doc_tree import DocumentTree
    from widgets.messages import Selected

    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        tree = app.query_one(DocumentTree)
        await app.query_one(DetailsPanel).remove()
        app.on_selected(Selected(("node", "graph", 0), tree, "x"))
        await pilot.pause()
        assert app.is_running


async def test_a_graph_key_draws_the_details_once():
    """The graph's selection moves the tree's cursor, whose own selection came back to draw the same details a
    second time: every graph key cost two details paints (the tree follows, the details are drawn once)."""
    app = make_app(ONNX)
    async with app.run_test(size=SIZE) as pilot:
        graph = await open_graph(pilot)
        drawn = []
        real = app.show_details
        app.show_details = lambda ref: drawn.append(ref) or real(ref)
        for _ in range(3):
            before = len(drawn)
            await pilot.press("down")
            await pilot.pause(0.05)
            await pilot.pause()
            selected = app.selections["graph"][0]
            assert drawn[before:] == [selected]  # once, and the graph's selection
            assert app.query_one(DocumentTree).cursor_node.data.ref == selected  # the tree followed
        assert graph.ready
