"""Walking a model with the arrow keys alone (issue #41): ↓ follows the reading path into every block, a fork
says which of how many and `o` takes the other branch, ←/→ move along the rows, and every box is reachable."""

from __future__ import annotations

import pytest

from explorer.graph.builder import GraphBuilder
from explorer.graph.layout import layout_graph
from explorer.graph.visible import visible_graph
from explorer.graph.walk import above_or_below, beside, next_along
from tests.app.helpers import wait_loaded
from tests.app.test_graph_view import open_graph
from tests.conftest import ROOT, SAMPLES
from widgets.app import make_app

GPT = SAMPLES / "onnx" / "minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx"
RESNET = SAMPLES / "onnx" / "resnet18_narrow_torchscript_opset17.onnx"


def _residual():
    """x → Add0; Add0 read by the block's LayerNorm (first in order) and by the next Add (the skip)."""
    b = GraphBuilder()
    x = b.node("x", "input")
    add0 = b.node("add0", "Add")
    norm = b.node("norm", "LayerNormalization")
    mm = b.node("mm", "MatMul")
    add1 = b.node("add1", "Add")
    for s, t in ((x, add0), (add0, norm), (norm, mm), (mm, add1), (add0, add1)):
        b.edge(s, t)
    return b.build(), (x, add0, norm, mm, add1)


def test_down_at_a_fork_goes_into_the_block_not_past_it():
    model, (x, add0, norm, mm, add1) = _residual()
    layout = layout_graph(model, visible_graph(model, set()))
    item = layout.visible.node_item
    assert next_along(model, layout, int(item[add0]), True) == [int(item[norm]), int(item[add1])]
    assert next_along(model, layout, int(item[add1]), False)[0] == int(item[mm])  # ↑: the value just computed


def test_left_right_and_the_nearest_box_reach_what_no_edge_does():
    b = GraphBuilder()
    ids = [b.node(f"n{k}", "Relu") for k in range(4)]  # no edges: one row
    model = b.build()
    layout = layout_graph(model, visible_graph(model, set()))
    order = sorted(range(4), key=lambda i: int(layout.x[i]))
    assert beside(layout, order[0], 1) == order[1] and beside(layout, order[1], -1) == order[0]
    assert beside(layout, order[-1], 1) == -1
    assert above_or_below(layout, order[0], True) == -1
    del ids


async def _open_the_stack(pilot, graph) -> None:
    """The sample's layers.0-3 are alike and stacked: Enter on the stack shows them as closed blocks."""
    _select_group(graph, "layers.0–3")
    await pilot.press("enter")
    await pilot.pause()


def _select_group(graph, label: str):
    """Put the cursor on the closed group box `label`: the layout it was found in and its item."""
    layout = graph.picture
    block = next(i for i in range(layout.visible.n_items)
                 if layout.visible.item_kind[i] == 1 and layout.labels[i] == label)  # fmt: skip
    graph.select_item(block)
    return layout, block


async def _walk_down(path, presses: int, found) -> list[str]:
    """↓ at most `presses` times from the first screen, until `found(seen)` holds: the labels and ops seen."""
    app = make_app(path)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        seen: list[str] = []
        for _ in range(presses):
            layout = graph.picture
            seen.append(layout.labels[graph.selected_item] + " " + layout.ops[graph.selected_item])
            if found(seen):
                break
            await pilot.press("down")
        return seen


def _gpt_blocks(seen: list[str]) -> set[str]:
    return {label.split("/")[1] for label in seen if label.endswith(" MatMul") and label.startswith("/layers.")}


def _resnet_blocks(seen: list[str]) -> set[str]:
    return {label.split("/")[2] for label in seen if label.endswith("/conv1/Conv Conv")}


@pytest.mark.skipif(not GPT.exists(), reason="real samples not found (a user's clone has no ../shared)")
async def test_down_alone_visits_a_matmul_of_every_gpt_block():
    blocks = {"layers.0", "layers.1", "layers.2", "layers.3"}
    seen = await _walk_down(GPT, 120, lambda seen: _gpt_blocks(seen) == blocks)
    assert _gpt_blocks(seen) == blocks, seen


@pytest.mark.skipif(not RESNET.exists(), reason="real samples not found (a user's clone has no ../shared)")
async def test_down_alone_visits_the_first_conv_of_every_resnet_block():
    blocks = {f"stages.{k}" for k in range(8)}
    seen = await _walk_down(RESNET, 80, lambda seen: _resnet_blocks(seen) == blocks)
    assert _resnet_blocks(seen) == blocks, seen


async def test_a_fork_says_which_of_how_many_and_o_takes_the_other_branch():
    from tests.conftest import SAMPLE_DATA

    app = make_app(SAMPLE_DATA / "residual_blocks.onnx")
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        await pilot.press("X")  # every group open: the alike blocks are a stack, closed on the first screen
        await pilot.pause()
        for _ in range(40):  # ↓ until a fork
            await pilot.press("down")
            if graph.session.fork is not None:
                break
        assert graph.session.fork is not None
        choices = graph.session.fork.choices
        status = "\n".join(strip.text for strip in graph.render_frame())
        assert f"↓ 1 of {len(choices)}: " in status and "(o)" in status
        first = graph.selected_key
        await pilot.press("o")
        assert graph.selected_key == choices[1] != first
        assert f"↓ 2 of {len(choices)}: " in "\n".join(strip.text for strip in graph.render_frame())
        await pilot.pause()
        assert graph.picture.labels[graph.selected_item] in _details_text(pilot.app)


def _details_text(app) -> str:
    from widgets.details import DetailsPanel

    return "\n".join(f"{s.title} {s.rows}" for s in app.query_one(DetailsPanel).sections)


async def test_the_details_follow_enter_into_a_group():
    """Enter opens a group and moves the cursor inside: the details describe that box at once (they lagged one
    selection behind, until the next arrow)."""
    if not GPT.exists():
        pytest.skip("real samples not found (a user's clone has no ../shared)")
    app = make_app(GPT)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        await pilot.pause()
        assert graph.picture.labels[graph.selected_item] in _details_text(pilot.app)  # the first screen's box
        while graph.picture.visible.item_kind[graph.selected_item] != 1:
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        label = graph.picture.labels[graph.selected_item]
        assert graph.picture.visible.item_kind[graph.selected_item] in (0, 1) and label in _details_text(pilot.app)


def test_a_reader_of_only_the_shape_is_a_side_branch():
    b = GraphBuilder()
    x = b.node("x", "input")
    shape = b.node("shape", "Shape")  # first in the model's order, as torch exports put it
    norm = b.node("norm", "LayerNormalization")
    b.edge(x, shape)
    b.edge(x, norm)
    model = b.build()
    layout = layout_graph(model, visible_graph(model, set()))
    item = layout.visible.node_item
    choices = next_along(model, layout, int(item[x]), True)
    assert choices == [int(item[norm]), int(item[shape])]


async def test_a_bookmark_made_in_the_graph_reopens_on_its_box(tmp_path):
    """Made on a box inside a group, reopened in a fresh session where the graph is built after the jump: the
    graph selects that box (its groups opened), not the model's first layer."""
    import shutil

    from explorer.bookmarks import add_bookmark, new_bookmark, sidecar_path
    from tests.conftest import SAMPLE_DATA

    source = tmp_path / "residual_blocks.onnx"
    shutil.copy(SAMPLE_DATA / "residual_blocks.onnx", source)
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        model = graph.model
        deep = max((n for n in range(model.n_nodes) if not model.node_constant[n] and model.node_group[n] >= 0),
                   key=lambda n: int(model.topo_rank[n]))  # fmt: skip
        ref, label = model.node_ref[deep], model.node_label[deep]
    add_bookmark(sidecar_path(source), source, new_bookmark(ref, "graph", "look here", label, "test"))
    app = make_app(source, bookmarks=sidecar_path(source))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("B")
        await pilot.pause()
        await pilot.press("enter")
        graph = pilot.app.query_one("#graph")
        for _ in range(400):
            if graph.ready and app.query_one("#tabs").active == "tab-graph":
                break
            await pilot.pause(0.01)
        await pilot.pause()
        assert graph.selected_key == (0, deep)
        assert graph.picture.labels[graph.selected_item] == label  # its own box, its groups opened
        assert label in _details_text(pilot.app)


async def test_the_minimap_covers_no_box_on_any_first_screen():
    from tests.conftest import SAMPLE_DATA

    files = [*sorted((SAMPLES / "onnx").glob("*.onnx")), SAMPLE_DATA / "residual_blocks.onnx"]
    files = [f for f in files if f.exists()]
    drawn = 0
    for path in files:
        app = make_app(path)
        async with app.run_test(size=(160, 48)) as pilot:
            graph = await open_graph(pilot)
            await pilot.pause()
            graph.render_frame()
            if graph.minimap_box is None:
                continue
            drawn += 1
            x0, y0, mw, mh = graph.minimap_box
            layout, (ox, oy) = graph.picture, graph.origin
            for item in range(layout.visible.n_items):
                x, y = int(layout.x[item]) - ox, int(layout.y[item]) - oy
                w, h = int(layout.w[item]), int(layout.h[item])
                assert not (x < x0 + mw and x + w > x0 and y < y0 + mh and y + h > y0), (path.name, item)
    assert drawn


async def test_the_minimap_takes_a_blank_corner_where_there_is_one():
    """With every group of a model open the minimap sat on frame borders in the bottom-left corner while the
    top-left one was blank: of the corners that cover no box, the one that hides the least comes first."""
    from tests.conftest import SAMPLE_DATA
    from widgets.graph.canvas import draw
    from widgets.graph.painting import MINIMAP_SIZE
    from widgets.graph.view import STATUS_LINES

    blank_corners = 0
    for path in (SAMPLE_DATA / "residual_blocks.onnx", SAMPLE_DATA / "subgraphs_functions.onnx"):
        app = make_app(path)
        async with app.run_test(size=(160, 48)) as pilot:
            graph = await open_graph(pilot)
            await pilot.press("X")  # every group open: the frames reach the corners
            await pilot.pause()
            graph.render_frame()
            if graph.minimap_box is None:
                continue
            width, body = graph.size.width, graph.size.height - STATUS_LINES
            canvas = draw(graph.picture, width, body, graph.origin, graph.colours()[0], graph.selected_item)
            mw, mh = MINIMAP_SIZE
            corners = ((width - mw, 0), (width - mw, body - mh), (0, body - mh), (0, 0))
            blank = [(x0, y0) for x0, y0 in corners if (canvas.chars[y0 : y0 + mh, x0 : x0 + mw] == ord(" ")).all()]
            if blank:
                blank_corners += 1
                assert graph.minimap_box[:2] == blank[0], path.name
    assert blank_corners


async def test_no_minimap_at_80_columns():
    """At 80×24 the panel has no cells to spare for a minimap: it would cover the model."""
    from tests.conftest import SAMPLE_DATA

    app = make_app(SAMPLE_DATA / "residual_blocks.onnx")
    async with app.run_test(size=(80, 24)) as pilot:
        graph = await open_graph(pilot)
        await pilot.pause()
        graph.render_frame()
        assert graph.picture.w.max() > 0 and graph.minimap_box is None


@pytest.mark.skipif(not GPT.exists(), reason="real samples not found (a user's clone has no ../shared)")
async def test_f_on_a_deep_model_draws_a_picture_not_a_column_and_any_key_only_leaves_it():
    app = make_app(GPT)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        await pilot.press("X")  # every group open: a model 1,200 rows deep
        await pilot.pause()
        level, mode = graph.level, graph.mode
        await pilot.press("f")
        assert graph.overview
        lines = [strip.text for strip in graph.render_frame()][:-2]
        columns = {x for line in lines for x, ch in enumerate(line) if ch in "█■"}
        assert max(columns) - min(columns) > graph.size.width // 4  # spread over the panel, not one column
        canvas = graph.render_frame()
        coloured = {seg.style.color for strip in canvas[:-2] for seg in strip if "█" in seg.text and seg.style}
        assert len(coloured) > 2  # boxes in the colour mode's colours
        await pilot.press("c")  # leaves the overview and does nothing else
        assert not graph.overview and graph.mode == mode and graph.level == level


@pytest.mark.skipif(not GPT.exists(), reason="real samples not found (a user's clone has no ../shared)")
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_enter_on_a_block_moves_nothing_on_screen_above_it(size):
    """Issue #41: Enter keeps the picture in the view too: the cursor goes to the frame's top-left member, where
    the box was, so the window does not scroll sideways to a member far to the right (it did: a 229-column
    block frame sent every box above off screen)."""
    app = make_app(GPT)
    async with app.run_test(size=size) as pilot:
        graph = await open_graph(pilot)
        while graph.level > 0:  # full boxes (80×24 opens on one-line ones, where the frame's first member can
            await pilot.press("plus")  # lie a row below the window and the window follows the cursor that row)
            await pilot.pause()
        await _open_the_stack(pilot, graph)
        layout, block = _select_group(graph, "layers.1")
        await pilot.pause()
        ox, oy = graph.origin
        width, body = graph.size.width, graph.size.height - 2
        top = int(layout.y[block])
        above = {graph.session.key_of(layout, i): (int(layout.x[i]) - ox, int(layout.y[i]) - oy)
                 for i in range(layout.visible.n_items) if layout.y[i] + layout.h[i] <= top
                 and 0 <= layout.x[i] - ox < width and 0 <= layout.y[i] - oy < body}  # fmt: skip
        assert above or size[1] < 30  # at 80×24 the block, centred, may have nothing above it on screen
        corner = (int(layout.x[block]) - ox, int(layout.y[block]) - oy)
        await pilot.press("enter")
        await pilot.pause()
        after, (ox, oy) = graph.picture, graph.origin
        fx, fy, _, _ = after.frames[int(layout.visible.item_id[block])]
        if size[0] >= 160:
            assert (fx - ox, fy - oy) == corner  # the frame's corner where the box was, on screen
        else:  # at 80 columns no member of the 225-column frame is on screen: the window moves across, never down
            assert fy - oy == corner[1]
        for key, place in above.items():
            i = graph.session.item_of_key(after, key)
            assert (int(after.x[i]) - ox, int(after.y[i]) - oy) == place, key
        item = graph.selected_item
        assert 0 <= after.x[item] - ox < width and 0 <= after.y[item] - oy < body  # the cursor is on screen


@pytest.mark.skipif(not GPT.exists(), reason="real samples not found (a user's clone has no ../shared)")
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_closing_a_wide_block_leaves_no_box_hidden_beside_empty_room(size):
    """At 80 columns a block opened wider than the panel scrolls the window across; closing it again must not
    leave the window there, the graph's left part off screen while its right shows nothing."""
    app = make_app(GPT)
    async with app.run_test(size=size) as pilot:
        graph = await open_graph(pilot)
        await _open_the_stack(pilot, graph)
        layout, block = _select_group(graph, "layers.1")
        await pilot.press("enter")
        for _ in range(6):  # along the block's rows, to its right
            await pilot.press("right")
        await pilot.press("enter")  # on a member: closes the block
        await pilot.pause()
        after, (ox, oy) = graph.picture, graph.origin
        width, body = graph.size.width, graph.size.height - 2
        assert graph.selected_key == (1, int(layout.visible.item_id[block]))
        assert min(0, after.width - width) <= ox <= max(0, after.width - width), (ox, after.width, width)
        assert min(0, after.height - body) <= oy <= max(0, after.height - body), (oy, after.height, body)
        item = graph.selected_item
        assert 0 <= after.x[item] - ox < width and 0 <= after.y[item] - oy < body  # the closed block on screen


@pytest.mark.skipif(not GPT.exists(), reason="real samples not found (a user's clone has no ../shared)")
async def test_a_name_scope_selected_is_what_the_details_describe_and_g_lists():
    """A block like `layers.0` has no tree item: the details described the last box while the status line named
    the block. They now describe the block; `g` lists what feeds it and what it feeds, and jumps; `b` says why
    it cannot bookmark it."""
    from widgets.review_screens import LinksScreen

    app = make_app(GPT)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        await _open_the_stack(pilot, graph)
        layout, block = _select_group(graph, "layers.1")
        await pilot.pause()
        sections = app.query_one("#details").sections
        said = dict(sections[0].rows)
        assert sections[0].title == "Group layers.1" and said["kind"] == "name scope"
        # half of a TorchScript block is shape plumbing, folded (issue #54)
        assert said["nodes"] == "35 nodes (and 47 folded constants, 35 folded shape ops)" and "MatMul 6" in said["ops"]
        # the residual stream in, and what the next block reads
        assert said["reads"] == "1 value: /layers.0/Add_3_output_0" and said["gives"].startswith("1 value: ")
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, LinksScreen)
        labels = app.screen.labels
        assert labels and labels[0].startswith("in ") and any(label.startswith("out ") for label in labels)
        await pilot.press("enter")  # the first producer: the tree and the graph go there
        await pilot.pause()
        target = app.document.links(("graph-group", int(layout.visible.item_id[block])))[0][1]
        assert app.query_one("#tree").cursor_node.data.ref == target
        graph.select_item(graph.session.item_of_key(graph.picture, (1, int(layout.visible.item_id[block]))))
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
        assert not isinstance(app.screen, LinksScreen) and app.bookmarks == []


async def test_the_minimap_covers_no_frame_title():
    """With every group of the demo open at 160×48 the minimap sat on `function custom.Scale`, the title of the
    frame under it: a corner is free only when it covers no box and no frame's title."""
    from tests.conftest import SAMPLE_DATA

    app = make_app(SAMPLE_DATA / "subgraphs_functions.onnx")
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        await pilot.press("X")
        await pilot.pause()
        graph.render_frame()
        layout, (ox, oy) = graph.picture, graph.origin
        assert layout.frames and graph.minimap_box is not None
        x0, y0, mw, mh = graph.minimap_box
        for group, (fx, fy, fw, _) in layout.frames.items():
            width = min(len(layout.frame_labels.get(group, "")), max(fw - 8, 4)) + 4
            tx, ty = fx + 2 - ox, fy - oy
            assert not (tx < x0 + mw and tx + width > x0 and y0 <= ty < y0 + mh), layout.frame_labels.get(group)


@pytest.mark.parametrize(("name", "blocks", "parts"), [
    ("hf_gpt2_dynamo.onnx", ("h.0", "h.1", "h.2"), ("c_attn", "c_fc")),
])  # fmt: skip
async def test_down_alone_walks_every_block_of_torch_exports(name, blocks, parts):
    """Issue #54: ↓ from the tokens reaches every block's attention and MLP, in the export
    torch's dynamo exporter writes (module paths from metadata; the TorchScript GPT sample is walked above).
    Hugging Face's GPT-2 (dynamo) has its qkv `Split` beside `attn`, which drew upward edges that cut the way on
    until the split joined `attn`."""
    path = ROOT / "tests" / "data" / "torch_exports" / name
    app = make_app(path)
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        model, visited = graph.model, []

        def missing() -> list[tuple[str, str]]:
            computed = [path for op, path in visited if op in ("MatMul", "Gemm")]
            return [(b, p) for b in blocks for p in parts if not any(b in path and p in path for path in computed)]

        for _ in range(200):
            layout = graph.picture
            item = graph.selected_item
            if layout.visible.item_kind[item] == 0:
                node = int(layout.visible.item_id[item])
                visited.append((model.node_op[node], model.group_path(int(model.node_group[node])).split(" › ")))
            if not missing():
                break
            await pilot.press("down")
    assert visited[0][0] == "input" and missing() == [], (missing(), visited)


async def test_enter_opens_a_stack_into_closed_blocks_and_a_block_on_the_second():
    """Issue #54: the alike blocks of a GPT-2 are one box `h.0–3 × 4 GPT2Block`; Enter shows them as closed
    blocks with the cursor on the first, Enter again opens that block."""
    app = make_app(ROOT / "tests" / "data" / "torch_exports" / "hf_gpt2_dynamo.onnx")
    async with app.run_test(size=(160, 48)) as pilot:
        graph = await open_graph(pilot)
        layout, stack = _select_group(graph, "h.0–3")
        assert "h.0–3 × 4 GPT2Block" in layout.titles[stack]
        group = int(layout.visible.item_id[stack])
        await pilot.press("enter")
        await pilot.pause()
        layout = graph.picture
        blocks = [layout.labels[i] for i in range(layout.visible.n_items) if layout.visible.item_kind[i] == 1
                  and graph.model.group_parent[int(layout.visible.item_id[i])] == group]
        assert blocks == ["h.0", "h.1", "h.2", "h.3"]
        assert layout.labels[graph.selected_item] == "h.0"
        await pilot.press("enter")
        await pilot.pause()
        model, layout = graph.model, graph.picture
        inside = [model.group_path(int(model.node_group[int(layout.visible.item_id[i])]))
                  for i in range(layout.visible.n_items) if layout.visible.item_kind[i] == 0]  # fmt: skip
        assert any("h.0–3 › h.0" in path for path in inside) and not any("h.2" in path for path in inside)
