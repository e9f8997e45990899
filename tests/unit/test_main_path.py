"""Issue #54: ↓ follows a model's main data path. At a fork it takes the consumer that heads the longest way on
through the drawn graph, so a stage's downsample shortcut, a residual skip and a UNet's skip connection come after
the branch they bypass; and an op an exporter put beside a scope while it sits between two parts of it (dynamo's
GPT-2 qkv `Split`) joins that scope instead of closing a cycle with its box."""

from __future__ import annotations

from explorer.graph.builder import GraphBuilder
from explorer.graph.layout import layout_graph
from explorer.graph.visible import expand_all, visible_graph
from explorer.graph.walk import item_heights, next_along


def downsample_block():
    """x → shortcut conv (first in the model's order) → Add; x → conv1 → relu → conv2 → Add → out."""
    b = GraphBuilder()
    ids = {name: b.node(name, op) for name, op in [("x", "input"), ("shortcut", "Conv"), ("conv1", "Conv"),
                                                    ("relu", "Relu"), ("conv2", "Conv"), ("add", "Add"),
                                                    ("out", "output")]}  # fmt: skip
    for a, z in [("x", "shortcut"), ("x", "conv1"), ("conv1", "relu"), ("relu", "conv2"), ("shortcut", "add"),
                 ("conv2", "add"), ("add", "out")]:  # fmt: skip
        b.edge(ids[a], ids[z], a)
    return b.build(), ids


def test_the_way_on_counts_the_drawn_boxes_after_each():
    model, ids = downsample_block()
    layout = layout_graph(model, visible_graph(model, set()))
    heights = item_heights(layout)
    item = {name: int(layout.visible.node_item[i]) for name, i in ids.items()}
    assert {name: int(heights[i]) for name, i in item.items()} == {
        "x": 5, "shortcut": 2, "conv1": 4, "relu": 3, "conv2": 2, "add": 1, "out": 0}  # fmt: skip


def test_down_takes_the_longer_branch_before_the_shortcut():
    model, ids = downsample_block()
    layout = layout_graph(model, visible_graph(model, set()))
    item = {name: int(layout.visible.node_item[i]) for name, i in ids.items()}
    name_of = {i: name for name, i in item.items()}
    assert [name_of[c] for c in next_along(model, layout, item["x"], True)] == ["conv1", "shortcut"]
    # up from the join: the latest producer first (the branch just computed)
    assert [name_of[c] for c in next_along(model, layout, item["add"], False)] == ["conv2", "shortcut"]


def test_an_op_between_two_parts_of_a_scope_beside_it_joins_the_scope():
    b = GraphBuilder()
    block = b.group("h.0", kind="scope")
    attn = b.group("attn", block, kind="scope")
    x = b.node("x", "input")
    qkv = b.node("qkv", "MatMul", group=attn)
    split = b.node("split", "Split", group=block)  # where the exporter put it
    heads = b.node("heads", "Transpose", group=attn)
    scores = b.node("scores", "MatMul", group=attn)
    add = b.node("add", "Add", group=block)  # after attn: stays in the block
    out = b.node("out", "output")
    for a, z in [(x, qkv), (qkv, split), (split, heads), (split, scores), (heads, scores), (scores, add),
                 (x, add), (add, out)]:  # fmt: skip
        b.edge(a, z)
    model = b.build()
    assert model.group_path(int(model.node_group[split])) == "h.0 › attn"
    assert model.group_path(int(model.node_group[add])) == "h.0"
    layout = layout_graph(model, visible_graph(model, {0}))  # attn closed: no cycle between its box and the split
    assert layout.back_edges == 0
    opened = layout_graph(model, visible_graph(model, expand_all(model)))
    assert opened.back_edges == 0


def test_hugging_face_gpt2_from_dynamo_draws_no_edge_upward():
    """Its qkv `Split` in `h.N` between `c_attn` and the heads drew 3 upward edges with the blocks closed and 9
    with every group open; in `attn` it draws none."""
    from explorer.api import open_document
    from tests.conftest import ROOT

    document = open_document(ROOT / "tests" / "data" / "torch_exports" / "hf_gpt2_dynamo.onnx")
    model = document.view.graph_model()
    splits = [n for n in range(model.n_nodes) if model.node_op[n] == "Split"]
    assert len(splits) == 4 and all(model.group_label[int(model.node_group[n])] == "attn" for n in splits)
    for expanded in (set(), expand_all(model)):
        layout = layout_graph(model, visible_graph(model, expanded))
        assert [e for e in layout.edges if layout.y[e.target] < layout.y[e.source]] == []


def test_a_module_called_twice_is_cut_into_its_calls():
    """diffusers' ResnetBlock2D applies one `nonlinearity` after each norm, and dynamo gives both calls one module
    path: as one box it sat both before and after conv1 (an upward edge). Its calls become `act` and `act #2`."""
    b = GraphBuilder()
    block = b.group("resnets.0", kind="scope")
    groups = {name: b.group(name, block, kind="scope") for name in ("norm1", "act", "conv1", "norm2")}
    x = b.node("x", "input")
    chain = [x]
    for name, op, group in [("n1a", "GroupNormalization", "norm1"), ("n1b", "Identity", "norm1"),
                            ("s1", "Sigmoid", "act"), ("m1", "Mul", "act"), ("c1a", "Conv", "conv1"),
                            ("c1b", "Identity", "conv1"), ("n2a", "GroupNormalization", "norm2"),
                            ("n2b", "Identity", "norm2"), ("s2", "Sigmoid", "act"), ("m2", "Mul", "act")]:  # fmt: skip
        node = b.node(name, op, group=groups[group])
        b.edge(chain[-1], node)
        chain.append(node)
    b.edge(chain[-1], b.node("y", "output"))
    model = b.build()
    labels = {model.node_label[n]: model.group_label[int(model.node_group[n])] for n in chain[1:]}
    assert (labels["s1"], labels["m1"], labels["s2"], labels["m2"]) == ("act", "act", "act #2", "act #2")
    for expanded in ({0}, expand_all(model)):
        layout = layout_graph(model, visible_graph(model, expanded))
        assert [e for e in layout.edges if layout.y[e.target] < layout.y[e.source]] == []
