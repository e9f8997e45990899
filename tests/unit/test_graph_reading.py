"""The graph as a reader sees a model (graph layout v2): constants fold into their readers transitively, weights
join the groups that read them, chunks follow the drawn graph, the first screen starts at the input, every edge
has its own track, opening a group leaves everything else in place, and the layout is a function of the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from explorer.api import open_document
from explorer.graph.builder import GraphBuilder
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import layout_graph
from explorer.graph.shaping import reading_path, reading_start
from explorer.graph.text import shape_text, title
from explorer.graph.visible import expand_all, visible_graph
from explorer.models.graph import CHUNK
from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES

RESNET = SAMPLES / "onnx" / "resnet18_narrow_torchscript_opset17.onnx"
GPT = SAMPLES / "onnx" / "minigpt6_torchscript_opset17_noconstfold.onnx"


def needs(path):
    if not path.exists():
        pytest.skip(f"real samples not found at {path.parent} (a user's clone has no ../shared)")
    return path


def test_constant_chains_fold_transitively_and_never_hide_an_op_reading_a_real_input():
    b = GraphBuilder()
    x = b.node("x", "input")
    weight = b.node("w", "initializer", constant=True)
    shape = b.node("/Constant", "Constant", constant=True)
    unsqueeze = b.node("/Unsqueeze", "Unsqueeze")  # reads only a constant: folds
    filled = b.node("/ConstantOfShape", "ConstantOfShape")  # reads the folded Unsqueeze: folds too
    conv = b.node("/Conv", "Conv")
    reshape = b.node("/Reshape", "Reshape")  # reads x (through Conv) and a constant: stays
    shared = b.node("/Shared", "Constant", constant=True)
    add = b.node("/Add", "Add")
    b.edge(shape, unsqueeze, "s")
    b.edge(unsqueeze, filled, "u")
    b.edge(x, conv, "x")
    b.edge(weight, conv, "w")
    b.edge(conv, reshape, "c")
    b.edge(filled, reshape, "f")
    b.edge(reshape, add, "r")
    b.edge(shared, reshape, "k")
    b.edge(shared, add, "k")  # one constant read by two ops folds into each
    model = b.build()
    assert model.node_constant.tolist() == [False, True, True, True, True, False, False, True, False]
    assert model.node_folded_into[[shape, unsqueeze, filled, weight]].tolist() == [reshape, reshape, reshape, conv]
    visible = visible_graph(model, set())
    drawn = {model.node_label[int(i)] for i in visible.item_id}
    assert drawn == {"x", "/Conv", "/Reshape", "/Add"}
    folded = dict(zip((model.node_label[int(i)] for i in visible.item_id), visible.folded.tolist(), strict=True))
    assert folded["/Reshape"] == 2 and folded["/Add"] == 1 and folded["/Conv"] == 1
    assert model.constant_chain(filled) == [filled, unsqueeze, shape]  # what the details list under it


def test_a_chain_of_ten_thousand_constants_folds_without_recursion():
    b = GraphBuilder()
    chain = [b.node("c0", "Constant", constant=True)] + [b.node(f"u{k}", "Unsqueeze") for k in range(10_000)]
    for a, c in zip(chain, chain[1:], strict=False):
        b.edge(a, c)
    reader = b.node("add", "Add")
    b.edge(b.node("x", "input"), reader)
    b.edge(chain[-1], reader)
    model = b.build()
    assert int(model.node_constant.sum()) == 10_001
    assert (model.node_folded_into[chain] == reader).all()
    assert visible_graph(model, set()).n_items == 2


def test_a_weight_without_scope_joins_the_deepest_group_of_its_readers():
    b = GraphBuilder()
    names = ["/layers/layers.3/conv1/Conv", "/layers/layers.3/conv1/Relu", "/layers/layers.3/Add"]
    ops = [b.node(n, n.rsplit("/", 1)[1], group=b.scope(n)) for n in names]
    weight = b.node("onnx::Conv_12", "initializer", constant=True)
    identity = b.node("Identity_12", "Identity")  # torch's weight: an Identity of an initializer, no scope
    embed = b.node("/Gather", "Gather")  # an op without scope stays where the exporter put it
    b.edge(weight, identity)
    b.edge(identity, ops[0])
    b.edge(embed, ops[0])
    b.edge(ops[0], ops[1])
    b.edge(ops[1], ops[2])
    model = b.build()
    assert model.group_path(int(model.node_group[identity])) == "layers › layers.3 › conv1"
    assert model.group_path(int(model.node_group[weight])) == "layers › layers.3 › conv1"
    assert int(model.node_group[embed]) == -1


def test_chunks_count_drawn_boxes_follow_the_drawn_order_and_say_what_they_hold():
    b = GraphBuilder()
    previous = b.node("x", "input")
    for k in range(900):
        node = b.node(f"op{k}", "Relu" if k % 2 else "Conv")
        b.edge(previous, node)
        b.edge(b.node(f"w{k}", "initializer", constant=True), node)  # 900 constants: not counted
        previous = node
    model = b.build()
    chunks = [g for g in range(model.n_groups) if model.group_kind[g] == "chunk"]
    assert len(chunks) == 3  # 901 drawn boxes, 400 a chunk: the 900 weights do not count
    assert model.group_label[chunks[0]] == "input – Conv"  # input, op0 … op398
    drawn = ~model.node_constant
    for g in chunks:
        assert int(((model.node_group == g) & drawn).sum()) <= CHUNK
    for w in np.flatnonzero(model.node_constant).tolist():  # each weight sits in its reader's chunk
        assert model.node_group[w] == model.node_group[model.node_folded_into[w]]
    closed = visible_graph(model, set())
    pairs = {(int(a), int(c)) for a, c in zip(closed.edge_src.tolist(), closed.edge_dst.tolist(), strict=True)}
    assert nx.is_directed_acyclic_graph(nx.DiGraph(pairs))


def test_chunks_never_form_a_cycle_the_model_does_not_have():
    """Members cut in file order made chunk-level cycles on an acyclic GPT; cut in the drawn order they cannot."""
    b = GraphBuilder()
    nodes = [b.node(f"/blk{k // 3}/op{k}", "Add", group=b.scope(f"/blk{k // 3}/op{k}")) for k in range(1500)]
    rng = np.random.default_rng(7)
    for k in range(1, 1500):
        b.edge(nodes[int(rng.integers(max(0, k - 30), k))], nodes[k])
    for k in range(0, 1500, 7):  # unscoped ops between the blocks, added last in the file
        extra = b.node(f"glue{k}", "Mul")
        b.edge(nodes[k], extra)
        b.edge(extra, nodes[min(k + 5, 1499)])
    model = b.build()
    assert not model.cyclic
    closed = visible_graph(model, set())
    layout = layout_graph(model, closed)
    assert layout.back_edges == 0 and all(e.kind != "back" for e in layout.edges)
    pairs = {(int(a), int(c)) for a, c in zip(closed.edge_src.tolist(), closed.edge_dst.tolist(), strict=True)}
    assert nx.is_directed_acyclic_graph(nx.DiGraph(pairs))


def test_box_text_says_op_shape_and_weights():
    assert title("Conv", "/layers/layers.3/conv1/Conv") == "Conv"
    assert title("Identity", "Identity_171") == "Identity"
    assert title("Conv", "node_Conv_22") == "Conv"
    assert title("Reshape", "/attn/node_view") == "Reshape node_view"
    assert shape_text("float32[1, 64, 112, 112]", "float32") == "1×64×112×112"
    assert shape_text("int64[1, 16]", "float32") == "int64 1×16"
    assert shape_text("bool[]", "float32") == "bool scalar"
    assert shape_text("?", "float32") == ""
    document = open_document(needs(RESNET))
    document.run_deep_checks()  # shape inference, as the TUI and `graph` run it
    model = document.view.graph_model()
    layout = layout_graph(model, visible_graph(model, initial_expansion(model)))
    first_conv = next(i for i, op in enumerate(layout.ops) if op == "Conv")
    assert layout.titles[first_conv] == "Conv"
    assert layout.details[first_conv] == "1×16×64×64"
    assert layout.extras[first_conv] == "W 16×3×7×7 · B 16"


@pytest.mark.parametrize(("path", "limit"), [(RESNET, 100), (GPT, 300)])
def test_real_torch_exports_are_narrow_with_every_group_open(path, limit):
    document = open_document(needs(path))
    model = document.view.graph_model()
    layout = layout_graph(model, visible_graph(model, expand_all(model)))
    assert layout.width <= limit


@pytest.mark.parametrize(("path", "own_boxes"), [(RESNET, 4), (GPT, 3)])
def test_the_reading_start_is_the_input_and_its_groups_open_first(path, own_boxes):
    """The first ops are boxes of their own; the GPT's fourth is in its closed stack of blocks, `layers.0–5`."""
    document = open_document(needs(path))
    model = document.view.graph_model()
    start = reading_start(model)
    assert model.node_op[start] == "input"
    path_nodes = reading_path(model)
    assert path_nodes[0] == start and len(path_nodes) == 8
    assert all(not model.node_constant[n] for n in path_nodes)
    expanded = initial_expansion(model)
    layout = layout_graph(model, visible_graph(model, expanded))
    assert layout.first_item == int(layout.visible.node_item[start])
    for node in path_nodes[:own_boxes]:  # the first ops are boxes of their own, not hidden in a closed group
        item = int(layout.visible.node_item[node])
        assert layout.visible.item_kind[item] == 0 and layout.visible.item_id[item] == node
    if own_boxes < 4:
        item = int(layout.visible.node_item[path_nodes[own_boxes]])
        assert layout.visible.item_kind[item] == 1 and layout.labels[item] == "layers.0–5"


def _horizontal_cells(layout) -> dict[tuple[int, int], set[int]]:
    """Cells of horizontal runs of routed edges → the sources whose edges run through them."""
    cells: dict[tuple[int, int], set[int]] = {}
    for edge in layout.edges:
        for (ax, ay), (bx, by) in zip(edge.points, edge.points[1:], strict=False):
            if ay == by and ax != bx:
                for x in range(min(ax, bx), max(ax, bx) + 1):
                    cells.setdefault((x, ay), set()).add(edge.source)
    return cells


def _shared_cells(layout) -> list[tuple[int, int]]:
    """Cells where runs (horizontal or vertical, corners excluded) of edges from two sources lie on each other."""
    found = []
    for vertical in (False, True):
        cells: dict[tuple[int, int], set[int]] = {}
        for edge in layout.edges:
            for (ax, ay), (bx, by) in zip(edge.points, edge.points[1:], strict=False):
                if vertical and ax == bx:
                    cells.update(
                        {
                            (ax, y): cells.get((ax, y), set()) | {edge.source}
                            for y in range(min(ay, by) + 1, max(ay, by))
                        }
                    )
                elif not vertical and ay == by:
                    cells.update(
                        {
                            (x, ay): cells.get((x, ay), set()) | {edge.source}
                            for x in range(min(ax, bx) + 1, max(ax, bx))
                        }
                    )
        found += [cell for cell, sources in cells.items() if len(sources) > 1]
    return found


def test_edges_from_two_sources_enter_a_frame_through_ports_of_their_own():
    """Two ops outside a group both read one op inside it: each edge comes in through its own port."""
    b = GraphBuilder()
    x = b.node("x", "input")
    left, right = b.node("/l/A", "Relu"), b.node("/r/B", "Relu")
    inner = [b.node(f"/blk/op{k}", "Add", group=b.scope(f"/blk/op{k}")) for k in range(3)]
    for source in (left, right):
        b.edge(x, source)
        b.edge(source, inner[0])
    b.edge(inner[0], inner[1])
    b.edge(inner[1], inner[2])
    model = b.build()
    layout = layout_graph(model, visible_graph(model, expand_all(model)))
    assert _shared_cells(layout) == []
    ends = {
        edge.source: edge.points[-1] for edge in layout.edges if edge.target == int(layout.visible.node_item[inner[0]])
    }
    assert len(ends) == 2 and len(set(ends.values())) == 2  # two arrows, two cells


def test_every_edge_has_its_own_track_between_layers():
    """16 sources each read by 16 of the next layer's ops: no horizontal cell holds edges of two sources."""
    b = GraphBuilder()
    first = [b.node(f"a{k}", "Relu") for k in range(16)]
    second = [b.node(f"b{k}", "Add") for k in range(16)]
    rng = np.random.default_rng(3)
    for k, target in enumerate(second):
        for source in rng.choice(16, size=4, replace=False).tolist():
            b.edge(first[source], target)
        b.edge(first[k], target)
    model = b.build()
    layout = layout_graph(model, visible_graph(model, set()))
    shared = [cell for cell, sources in _horizontal_cells(layout).items() if len(sources) > 1]
    assert shared == [] and _shared_cells(layout) == []
    for edge in layout.edges:
        assert edge.points[-1][1] > edge.points[0][1]  # down


def test_opening_a_group_keeps_everything_outside_it_in_place():
    b = GraphBuilder()
    names = ["/in", "/a/op0", "/a/op1", "/a/op2", "/side/op0", "/side/op1", "/b/op0", "/b/op1", "/b/op2", "/out"]
    ids = [b.node(n, "Add", group=b.scope(n)) for n in names]
    chain = [0, 1, 2, 3, 6, 7, 8, 9]
    for x, y in zip(chain, chain[1:], strict=False):
        b.edge(ids[x], ids[y])
    b.edge(ids[0], ids[4])
    b.edge(ids[4], ids[5])
    b.edge(ids[5], ids[9])
    model = b.build()
    group = {model.group_label[g]: g for g in range(model.n_groups)}
    cache: dict = {}
    before = layout_graph(model, visible_graph(model, set()), cache=cache)
    after = layout_graph(model, visible_graph(model, {group["a"]}), cache=cache, previous=before)

    def place(layout, key):
        hits = np.flatnonzero((layout.visible.item_kind == key[0]) & (layout.visible.item_id == key[1]))
        return int(layout.x[hits[0]]), int(layout.y[hits[0]])

    a_box = place(before, (1, group["a"]))
    anchor = (0, ids[0])  # the input, above the group
    dx = place(after, anchor)[0] - place(before, anchor)[0]
    dy = place(after, anchor)[1] - place(before, anchor)[1]
    for key in [(1, group["b"]), (0, ids[9])]:  # below it: pushed down, never sideways
        assert place(after, key)[0] - dx == place(before, key)[0], key
        assert place(after, key)[1] - dy > place(before, key)[1], key
    side_before, side_after = place(before, (1, group["side"])), place(after, (1, group["side"]))
    assert side_after[1] - dy == side_before[1]  # beside it: same row, moved right only as far as the frame grew
    fx, fy, fw, _ = after.frames[group["a"]]
    assert (fx - dx, fy - dy) == a_box  # the opened group's frame starts where its box was: it grows right and down
    assert side_after[0] - dx == max(side_before[0], fx - dx + fw + 2)  # pushed just clear of it (the minor gap)


def _graph_json(path, seed):
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    run = [sys.executable, "-m", "explorer", "graph", str(path), "--json"]
    result = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("name", ["gpt", "subgraphs"])
def test_two_hash_seeds_give_the_same_layout(name):
    path = needs(GPT) if name == "gpt" else SAMPLE_DATA / "subgraphs_functions.onnx"
    assert _graph_json(path, 1) == _graph_json(path, 2)


def test_graph_json_lays_out_what_the_tui_draws():
    """Same shape inference, same box sizes: `graph --json` of the GPT is the view's first layout."""
    path = needs(GPT)
    payload = json.loads(_graph_json(path, 0))
    document = open_document(path)
    document.run_deep_checks()
    model = document.view.graph_model()
    layout = layout_graph(model, visible_graph(model, initial_expansion(model)))
    assert (payload["width"], payload["height"]) == (layout.width, layout.height)


def test_an_opened_schedule_layer_lays_its_workloads_out_one_row_per_core():
    document = open_document(SAMPLE_DATA / "clean_2x2_stschedule.json")
    model = document.view.graph_model()
    layer = model.group_label.index("Conv_0")
    layout = layout_graph(model, visible_graph(model, {layer}))
    members = [i for i in range(layout.visible.n_items) if layout.visible.item_kind[i] == 0
               and model.node_group[int(layout.visible.item_id[i])] == layer]  # fmt: skip
    cores = [int(model.node_lane[int(layout.visible.item_id[i])]) for i in members]
    assert len(set(cores)) == 4
    rows = {core: {int(layout.y[i]) for i, c in zip(members, cores, strict=True) if c == core} for core in set(cores)}
    assert all(len(r) == 1 for r in rows.values())  # a core's workloads on one row
    assert sorted(next(iter(r)) for r in rows.values()) == [next(iter(rows[c])) for c in sorted(rows)]  # in order


def test_lanes_per_row_aims_at_a_panel_s_aspect():
    from explorer.graph.layout import lanes_per_row

    # 64 boxes of 20×3 (22×5 with gaps), top to bottom: 6 a row is 132×55 (2.4), 7 is 154×50 (3.1), 5 is 110×65
    assert lanes_per_row(64, (20, 3), True) == 6
    # left to right (minor 3, major 20): 11 a column is 6 columns of 22 by 55 (2.4); 10 is 154 by 50 (3.1)
    assert lanes_per_row(64, (3, 20), False) == 11
    assert lanes_per_row(1, (20, 3), True) == 1


def test_an_opened_64_core_layer_is_a_grid_in_core_order(tmp_path):
    """Issue #59 item 6: a 64-workload layer stacked one core a row left the panel nearly empty, one tall column."""
    from explorer.formats.scheduler_ir.samples import Recipe, write_streaming
    from explorer.graph.layout import lanes_per_row

    path = tmp_path / "mesh8x8_stschedule.json"
    write_streaming(path, Recipe(xlen=8, ylen=8, layers=3, spill_layer=None))
    model = open_document(path).view.graph_model()
    layer = model.group_label.index("Conv_0")
    layout = layout_graph(model, visible_graph(model, {layer}))
    members = [i for i in range(layout.visible.n_items) if layout.visible.item_kind[i] == 0
               and model.node_group[int(layout.visible.item_id[i])] == layer]  # fmt: skip
    cores = [int(model.node_lane[int(layout.visible.item_id[i])]) for i in members]
    assert sorted(cores) == list(range(64))
    box = (float(np.median(layout.w)), float(np.median(layout.h)))
    per_row = lanes_per_row(64, box, True)
    assert 4 <= per_row <= 16
    by_core = sorted(zip(cores, members, strict=True))
    rows = [int(layout.y[i]) for _, i in by_core]
    assert len(set(rows)) == -(-64 // per_row)  # ceil(64 / per_row) rows, not 64
    for core, i in by_core:  # core k on row k // per_row, at column k % per_row
        assert rows.index(int(layout.y[i])) == core // per_row * per_row
        same_row = sorted((int(layout.x[j]), c) for c, j in by_core if int(layout.y[j]) == int(layout.y[i]))
        assert [c for _, c in same_row].index(core) == core % per_row


def test_graph_command_lays_constants_out_as_boxes_when_asked():
    run = [sys.executable, "-m", "explorer", "graph", str(SAMPLE_DATA / "subgraphs_functions.onnx"), "--json"]
    folded = json.loads(subprocess.run(run, capture_output=True, text=True, cwd=ROOT).stdout)
    shown = json.loads(subprocess.run([*run, "--constants"], capture_output=True, text=True, cwd=ROOT).stdout)
    assert {n["label"] for n in folded["nodes"]} == {n["label"] for n in shown["nodes"]}  # every node listed
    weights = [n for n in folded["nodes"] if n["label"] == "w"]
    assert weights[0]["w"] == 0 and weights[0]["folded_into"] is not None
    assert any(e.get("folded") for e in folded["edges"])
    boxed = [n for n in shown["nodes"] if n["label"] == "w"]
    assert boxed[0]["w"] > 0 and boxed[0]["folded_into"] is None and not any(e.get("folded") for e in shown["edges"])


def test_a_stub_label_goes_whole_where_its_cells_are_free():
    from widgets.graph.canvas import Canvas

    canvas = Canvas(40, 3)
    canvas.text(20, 1, "│", 1)  # an edge runs down right of the box's left edge
    canvas.free_text_near([(10, 1), (2, 1)], "↓ /layers.0/Add", 9)  # does not fit at 10: goes to 2, whole
    assert canvas.line(1).startswith("  ↓ /layers.0/Add") and canvas.line(1)[20] == "│"
    canvas.text(20, 2, "│", 1)
    canvas.free_text_near([(14, 2), (50, 2)], "↓ far away label", 9)  # fits nowhere: cut before the edge
    assert canvas.line(2)[14:21] == "↓ fa… │"  # a cell kept free before the edge


def test_a_stub_label_shrinks_to_a_whole_form_never_cut_at_its_end():
    """Issue #74: the UNet's one-line first screen said `↓ up_bl…` where `↓ up_blocks.2, up_blocks.3, up_blocks.1`
    had no room: the label takes the fullest whole form that fits (two names and a count, one name and a count,
    the count, the arrow)."""
    from explorer.graph.text import stub_forms
    from widgets.graph.canvas import Canvas

    names = ["up_blocks.2", "up_blocks.3", "up_blocks.1"]
    forms = stub_forms("↓", names, 40)
    assert forms == ["↓ up_blocks.2, up_blocks.3 +1", "↓ up_blocks.2 +2", "↓ +3", "↓"]
    assert stub_forms("↓", names, 16) == ["↓ up_blocks.2 +2", "↓ +3", "↓"]
    assert stub_forms("↓", ["conv_out"], 16) == ["↓ conv_out", "↓"]
    canvas = Canvas(40, 2)
    canvas.text(8, 1, "│", 1)  # an edge 8 cells right of the box's left edge
    canvas.first_form_free(forms, lambda text: [(2, 1)], 9)
    assert canvas.line(1)[:9] == "  ↓ +3  │"


def test_a_gap_with_more_edges_than_tracks_says_how_many_share():
    """24 sources each read across the layer by a far reader: past the 16-track cap runs share tracks, and the
    drawing says so next to the busiest one instead of showing one line that reads as a single edge."""
    from widgets.graph.canvas import draw

    b = GraphBuilder()
    first = [b.node(f"a{k}", "Relu") for k in range(24)]
    second = [b.node(f"b{k}", "Add") for k in range(24)]
    for k, target in enumerate(second):
        b.edge(first[k], target)
        b.edge(first[23 - k], target)
    model = b.build()
    layout = layout_graph(model, visible_graph(model, set()))
    assert len(layout.shared_tracks) == 1
    lo, hi, row, count = layout.shared_tracks[0]
    assert count == 24 - 16 and lo < hi  # the nets beyond the cap
    canvas = draw(layout, layout.width + 40, layout.height, (0, 0), np.zeros(layout.visible.n_items, dtype=np.int64))
    assert f"≡ +{count:,} edges share tracks" in canvas.line(row)
    # within the cap (the 16-source test above) nothing is said
    b = GraphBuilder()
    first = [b.node(f"a{k}", "Relu") for k in range(8)]
    second = [b.node(f"b{k}", "Add") for k in range(8)]
    for k, target in enumerate(second):
        b.edge(first[7 - k], target)
    model = b.build()
    assert layout_graph(model, visible_graph(model, set())).shared_tracks == []


def _chain_model(tmp_path, inputs: dict[str, list[str]], name: str):
    """A model whose inputs each feed a chain of the given ops, all the chains summed into the output."""
    import onnx
    from onnx import TensorProto, helper

    nodes, ends = [], []
    for source, ops in inputs.items():
        value = source
        for k, op in enumerate(ops):
            out = f"{source}_{k}"
            nodes.append(helper.make_node(op, [value], [out], name=f"{source}/{op}_{k}"))
            value = out
        ends.append(value)
    total = ends[0]
    for k, other in enumerate(ends[1:]):
        nodes.append(helper.make_node("Add", [total, other], [f"sum_{k}"], name=f"sum_{k}"))
        total = f"sum_{k}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(s, TensorProto.FLOAT, [1, 8]) for s in inputs],
                              [helper.make_tensor_value_info(total, TensorProto.FLOAT, None)])  # fmt: skip
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_reading_starts_at_the_data_input_not_at_a_longer_mask(tmp_path):
    """Issue #54: GPT-2, T5 and BERT exports opened on `attention_mask` and its arithmetic (it heads a longer path
    than the tokens); an input named as data comes first, one that steers or whose shape alone is read last."""
    from explorer.graph.shaping import input_tier, reading_start

    model = _chain_model(tmp_path, {"attention_mask": ["Relu", "Neg", "Relu", "Neg", "Relu", "Neg"],
                                    "input_ids": ["Relu", "Neg"]}, "masked.onnx")  # fmt: skip
    assert model.node_label[reading_start(model)] == "input_ids"
    model = _chain_model(tmp_path, {"sizes": ["Shape", "Cast", "Neg", "Neg", "Neg"], "features": ["Relu"]},
                         "shaped.onnx")  # fmt: skip
    tiers = {model.node_label[n]: input_tier(model, n) for n in range(model.n_nodes) if model.node_op[n] == "input"}
    assert tiers == {"sizes": 2, "features": 1}  # read only by Shape: last
    assert model.node_label[reading_start(model)] == "features"
    model = _chain_model(tmp_path, {"a": ["Relu"], "b": ["Relu", "Neg", "Relu"]}, "plain.onnx")
    assert model.node_label[reading_start(model)] == "b"  # no names to go by: the longest path, as before


def _listed_blocks(tmp_path, blocks: int, ops: int):
    """x → stem → blocks.0 … blocks.N-1 (a module list, each a chain of `ops` Relus, every block another op
    count so none stack) → head → y."""
    import onnx
    from onnx import TensorProto, helper

    nodes, last = [helper.make_node("Relu", ["x"], ["s"], name="/stem/Relu")], "s"
    for k in range(blocks):
        for j in range(ops + k):
            nodes.append(helper.make_node("Relu", [last], [f"b{k}_{j}"], name=f"/blocks.{k}/op{j}"))
            last = f"b{k}_{j}"
    nodes.append(helper.make_node("Relu", [last], ["y"], name="/head/Relu"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])  # fmt: skip
    path = tmp_path / f"listed_{blocks}_{ops}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_a_big_model_opens_on_its_list_of_blocks_closed_and_a_small_one_opens_whole(tmp_path):
    """Issue #74, item 6: the reduced UNet opened on down_blocks.0 › resnets.0 › norm1's first Reshape (the reading
    path opened every group on its way) with mid and up blocks far below; a list's blocks now stay closed on a
    big model's first screen (the model's shape: stem → blocks.0 … blocks.3 → head), and a model small enough to
    open whole still does, each list whole."""
    big = _listed_blocks(tmp_path, 4, 20)
    blocks = [g for g, label in enumerate(big.group_label) if label.startswith("blocks.")]
    assert len(blocks) == 4 and not set(blocks) & initial_expansion(big)
    start = reading_path(big)
    assert big.node_label[start[2]] == "/blocks.0/op0"  # the path runs into blocks.0, which stays one box
    small = _listed_blocks(tmp_path, 3, 2)
    assert initial_expansion(small) == expand_all(small)


def test_a_stage_between_block_lists_stays_closed_on_a_big_model(tmp_path):
    """The reduced UNet opened its mid_block (resnets.0, attentions.0, resnets.1) between the closed down and up
    blocks, ten rows of one stage on a first screen that has room for neither end of the U. A module beside a
    module list (mid between down.N and up.N, each with modules of its own) is a stage like them: closed."""
    from tests.conftest import named_relu_chain

    steps = [f"/down.{k}/op{j}" for k in range(2) for j in range(20)]
    steps += [f"/mid/{part}/op{j}" for part in ("res", "attn") for j in range(2)]
    steps += [f"/up.{k}/op{j}" for k in range(2) for j in range(20 + k)]
    model = named_relu_chain(tmp_path / "staged.onnx", steps)
    named = {label: g for g, label in enumerate(model.group_label)}
    assert {"mid", "res", "attn", "down.0", "up.1"} <= set(named)
    opened = initial_expansion(model)
    assert named["mid"] not in opened and not {named["down.0"], named["up.1"]} & opened
