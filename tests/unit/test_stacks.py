"""Issue #54: consecutive sibling blocks of the same structure draw as one stack box (`layers.0–79 × 80
Block`); Enter opens it into its blocks, each a closed group. A stack never hides a difference (one op, one
attribute, one weight's shape) and never closes a cycle."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.api import open_document
from explorer.exports.graph_json import graph_json, resolve_group
from explorer.graph.builder import GraphBuilder
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import group_title, layout_graph
from explorer.graph.stacks import MIN_STACK, stack_label
from explorer.graph.visible import expand_all, visible_graph
from tests.conftest import ROOT


def decoder(layers: int, odd: dict[int, str] | None = None, attributes: dict[int, str] | None = None,
            width: dict[int, int] | None = None):  # fmt: skip
    """input → embed → layers.0 … layers.N-1 (norm → matmul with a weight → add the residual) → norm → head →
    output. `odd` swaps one layer's activation op, `attributes` gives one layer's matmul other attributes,
    `width` one layer's weight another shape."""
    odd, attributes, width = odd or {}, attributes or {}, width or {}
    b = GraphBuilder()
    attrs: dict[int, str] = {}
    b.attributes_of = lambda node: attrs.get(node, "")
    x = b.node("input_ids", "input")
    previous = b.node("embed", "Gather")
    b.edge(x, previous)
    for k in range(layers):
        block = b.group(f"layers.{k}", kind="scope", detail="Block")
        norm = b.node(f"/layers.{k}/norm", "LayerNormalization", group=block)
        weight = b.node(f"layers.{k}.w", "initializer", group=block, constant=True,
                        detail=f"float32[{width.get(k, 64)}, 64]")  # fmt: skip
        matmul = b.node(f"/layers.{k}/matmul", "MatMul", group=block)
        attrs[matmul] = attributes.get(k, "")
        act = b.node(f"/layers.{k}/act", odd.get(k, "Relu"), group=block)
        add = b.node(f"/layers.{k}/add", "Add", group=block)
        for a, z in [(previous, norm), (norm, matmul), (weight, matmul), (matmul, act), (act, add), (previous, add)]:
            b.edge(a, z)
        previous = add
    norm = b.node("norm", "LayerNormalization")
    head = b.node("head", "MatMul")
    out = b.node("logits", "output")
    for a, z in [(previous, norm), (norm, head), (head, out)]:
        b.edge(a, z)
    return b.build()


def stacks(model):
    return [g for g in range(model.n_groups) if model.group_kind[g] == "stack"]


def blocks_of(model, stack):
    return [model.group_label[g] for g in np.flatnonzero(model.group_parent == stack).tolist()]


def test_alike_consecutive_blocks_are_one_stack_named_by_their_range_and_class():
    model = decoder(80)
    [stack] = stacks(model)
    assert blocks_of(model, stack) == [f"layers.{k}" for k in range(80)]
    assert model.group_label[stack] == "layers.0–79" and model.group_parent[stack] == -1
    assert group_title(model, stack) == "layers.0–79 × 80 Block"


def test_the_first_screen_of_an_80_layer_decoder_shows_the_stack_between_embedding_and_head():
    model = decoder(80)
    [stack] = stacks(model)
    expanded = initial_expansion(model)
    assert stack not in expanded
    layout = layout_graph(model, visible_graph(model, expanded))
    order = np.argsort(layout.y, kind="stable").tolist()
    assert [layout.labels[i] for i in order] == ["input_ids", "embed", "layers.0–79", "norm", "head", "logits"]


def test_enter_on_the_stack_shows_its_blocks_closed_and_a_block_opens_as_before():
    model = decoder(5)
    [stack] = stacks(model)
    opened = visible_graph(model, {stack})
    groups = [model.group_label[int(g)] for g in opened.item_id[opened.item_kind == 1].tolist()]
    assert groups == [f"layers.{k}" for k in range(5)]
    block = resolve_group(model, "layers.2")
    inside = visible_graph(model, {stack, block})
    nodes = [model.node_label[int(n)] for n in inside.item_id[inside.item_kind == 0].tolist()]
    assert "/layers.2/matmul" in nodes and "/layers.3/matmul" not in nodes


@pytest.mark.parametrize(("change", "stacked"), [
    ({"odd": {3: "Gelu"}}, [["layers.0", "layers.1", "layers.2"], ["layers.4", "layers.5", "layers.6"]]),
    ({"attributes": {2: "transA=1"}}, [["layers.3", "layers.4", "layers.5", "layers.6"]]),
    ({"width": {1: 32}}, [["layers.2", "layers.3", "layers.4", "layers.5", "layers.6"]]),
])  # fmt: skip
def test_a_block_that_differs_in_one_op_attribute_or_weight_is_never_stacked(change, stacked):
    model = decoder(7, **change)
    assert [blocks_of(model, s) for s in stacks(model)] == stacked


def test_fewer_than_min_stack_alike_blocks_stay_as_they_are():
    assert MIN_STACK == 3
    assert stacks(decoder(2)) == []
    assert len(stacks(decoder(3))) == 1


def test_a_run_an_op_outside_reads_from_and_feeds_back_is_not_stacked():
    """`side` reads layers.0 and feeds layers.2: one box for layers.0-2 would be both before and after it."""
    b = GraphBuilder()
    x = b.node("x", "input")
    previous, adds = x, []
    for k in range(3):
        block = b.group(f"layers.{k}", kind="scope")
        relu = b.node(f"/layers.{k}/relu", "Relu", group=block)
        add = b.node(f"/layers.{k}/add", "Add", group=block)
        b.edge(previous, relu)
        b.edge(relu, add)
        previous = add
        adds.append(add)
    side = b.node("side", "Mul")
    b.edge(adds[0], side)
    b.edge(side, adds[2])
    b.edge(previous, b.node("y", "output"))
    model = b.build()
    assert stacks(model) == []


def test_stack_labels():
    assert stack_label(["layers.0", "layers.1", "layers.2"]) == "layers.0–2"
    assert stack_label(["h.1", "h.2", "h.3"]) == "h.1–3"
    assert stack_label(["h.1", "h.3", "h.4"]) == "h.1 – h.4"  # not consecutive numbers
    assert stack_label(["enc", "mid", "dec"]) == "enc – dec"


def test_graph_json_says_the_stack_its_count_and_class():
    model = decoder(4)
    payload = graph_json(model, "auto")
    [entry] = [g for g in payload["groups"] if g["kind"] == "stack"]
    assert (entry["label"], entry["stacked"], entry["module_class"], entry["expanded"]) == (
        "layers.0–3", 4, "Block", False)  # fmt: skip
    block = next(g for g in payload["groups"] if g["label"] == "layers.1")
    assert block["parent"] == entry["id"] and block["module_class"] == "Block" and block.get("stacked") is None
    assert resolve_group(model, "layers.1") == resolve_group(model, "layers.0–3/layers.1")


def test_every_box_of_a_stacked_model_opened_whole_is_laid_out_without_an_upward_edge():
    model = decoder(12)
    layout = layout_graph(model, visible_graph(model, expand_all(model)))
    assert [e for e in layout.edges if layout.y[e.target] < layout.y[e.source]] == []


def test_a_hugging_face_gpt2_from_dynamo_stacks_every_block_with_what_they_share_beside():
    """Issue #74: dynamo puts the attention mask's `Where`, read by every layer, in `h.0`'s scope, which kept
    `h.0` out of the stack (`h.1–3 × 3`); the Where is drawn beside the stack, in the blocks' parent, and
    `h.0` joins."""
    document = open_document(ROOT / "tests" / "data" / "torch_exports" / "hf_gpt2_dynamo.onnx")
    model = document.view.graph_model()
    [stack] = stacks(model)
    assert blocks_of(model, stack) == ["h.0", "h.1", "h.2", "h.3"]
    assert group_title(model, stack) == "h.0–3 × 4 GPT2Block"
    where = model.node_label.index("node_Where_94")
    folded = int(model.node_group[where])  # beside the stack, folded with the rest of the mask's plumbing
    assert model.group_kind[folded] == "plumbing" and int(model.group_parent[folded]) == int(model.group_parent[stack])
    assert len(model.readers(where)) == 4  # read by every block


def test_alike_branches_side_by_side_are_not_a_stack():
    """An attention's query, key and value are alike Linear modules reading one input: three branches, not a
    chain the values flow through; stacked they would hide which feeds what."""
    b = GraphBuilder()
    x = b.node("x", "input")
    ends = []
    for name in ("query", "key", "value"):
        block = b.group(name, kind="scope", detail="Linear")
        matmul = b.node(f"/{name}/MatMul", "MatMul", group=block)
        add = b.node(f"/{name}/Add", "Add", group=block)
        b.edge(x, matmul)
        b.edge(matmul, add)
        ends.append(add)
    out = b.node("out", "output")
    for end in ends:
        b.edge(end, out)
    assert stacks(b.build()) == []


def shared_mask_decoder(layers: int, extra_in_first: str = ""):
    """input → layers.0 … : each layer adds a mask to its input; the mask's `Where` sits in layers.0's scope (as
    dynamo writes it) and every layer reads it. `extra_in_first`: an op only layers.0 has besides."""
    b = GraphBuilder()
    b.attributes_of = lambda node: ""
    previous = b.node("x", "input")
    mask_input = b.node("mask", "input")
    where = None
    for k in range(layers):
        block = b.group(f"layers.{k}", kind="scope", detail="Block")
        if k == 0:
            where = b.node("/layers.0/Where", "Where", group=block)
            b.edge(mask_input, where)
            if extra_in_first:
                extra = b.node("/layers.0/extra", extra_in_first, group=block)
                b.edge(previous, extra)
                previous = extra
        add = b.node(f"/layers.{k}/add", "Add", group=block)
        act = b.node(f"/layers.{k}/act", "Relu", group=block)
        for a, z in [(previous, add), (where, add), (add, act)]:
            b.edge(a, z)
        previous = act
    out = b.node("y", "output")
    b.edge(previous, out)
    return b.build()


def test_a_first_block_joins_its_stack_when_it_differs_only_by_what_every_block_reads():
    model = shared_mask_decoder(4)
    [stack] = stacks(model)
    assert blocks_of(model, stack) == ["layers.0", "layers.1", "layers.2", "layers.3"]
    assert int(model.node_group[model.node_label.index("/layers.0/Where")]) == int(model.group_parent[stack])


def test_a_first_block_that_differs_otherwise_stays_out_and_nothing_moves():
    model = shared_mask_decoder(4, extra_in_first="Tanh")
    [stack] = stacks(model)
    assert blocks_of(model, stack) == ["layers.1", "layers.2", "layers.3"]
    assert model.group_label[int(model.node_group[model.node_label.index("/layers.0/Where")])] == "layers.0"


def copied_norm_decoder(layers: int, copy_of_data: bool = False):
    """input → layers.0 … : each layer normalizes with one shared weight, as TorchScript writes equal weights: the
    weight once, outside every block; layer 0 reads it, each later layer an `Identity` copy of it in its own
    scope. `copy_of_data`: layer 1 also copies its input (an op that is not a weight's copy)."""
    b = GraphBuilder()
    b.attributes_of = lambda node: ""
    previous = b.node("x", "input")
    weight = b.node("layers.0.norm.weight", "initializer", constant=True, detail="float32[64]")
    for k in range(layers):
        block = b.group(f"layers.{k}", kind="scope", detail="Block")
        scale = weight
        if k > 0:
            scale = b.node(f"Identity_{k}", "Identity", group=block, constant=True)
            b.edge(weight, scale)
        if copy_of_data and k == 1:
            copy = b.node("Identity_data", "Identity", group=block)
            b.edge(previous, copy)
            previous = copy
        norm = b.node(f"/layers.{k}/norm", "LayerNormalization", group=block)
        act = b.node(f"/layers.{k}/act", "Relu", group=block)
        for a, z in [(previous, norm), (scale, norm), (norm, act)]:
            b.edge(a, z)
        previous = act
    b.edge(previous, b.node("y", "output"))
    return b.build()


def test_a_block_reading_a_weight_where_the_others_read_a_copy_of_it_joins_their_stack():
    """Issue #74: TorchScript's layers.0 read the LayerNorm weights, layers 1–3 `Identity` copies of them, and
    layers.0 stayed out (`layers.1–3 × 3`)."""
    model = copied_norm_decoder(4)
    [stack] = stacks(model)
    assert blocks_of(model, stack) == ["layers.0", "layers.1", "layers.2", "layers.3"]


def test_a_copy_of_data_is_structure_and_keeps_its_block_out():
    model = copied_norm_decoder(5, copy_of_data=True)
    [stack] = stacks(model)
    assert blocks_of(model, stack) == ["layers.2", "layers.3", "layers.4"]


def test_units_are_each_node_s_outermost_closed_group_with_the_parent_s_path_open(tmp_path):
    """What a stack's box could close a cycle through: with `parent` and its ancestors open, each node is drawn as
    the outermost closed group holding it (numpy over an ancestor table; a Python walk of every group per parent
    took 9 s on a 50,000-op model of 1,100 scopes)."""
    from explorer.graph.stacks import _Units
    from tests.conftest import named_relu_chain

    names = ["/a/b/x/op0", "/a/b/x/op1", "/a/c/op2", "/a/c/op3", "/d/op4", "/d/op5"]
    model = named_relu_chain(tmp_path / "nested.onnx", names)
    group = {label: g for g, label in enumerate(model.group_label)}
    node = {label: v for v, label in enumerate(model.node_label)}
    n = model.n_nodes
    units = _Units(model)

    def drawn_as(parent: int) -> dict[str, str]:
        found = units._units(parent)
        return {name: model.group_label[int(found[node[name]]) - n] if found[node[name]] >= n else "itself"
                for name in names}  # fmt: skip

    assert drawn_as(-1) == {"/a/b/x/op0": "a", "/a/b/x/op1": "a", "/a/c/op2": "a", "/a/c/op3": "a",
                            "/d/op4": "d", "/d/op5": "d"}  # fmt: skip
    assert drawn_as(group["a"]) == {"/a/b/x/op0": "b", "/a/b/x/op1": "b", "/a/c/op2": "c", "/a/c/op3": "c",
                                    "/d/op4": "d", "/d/op5": "d"}  # fmt: skip
    assert drawn_as(group["b"])["/a/b/x/op0"] == "x" and drawn_as(group["x"])["/a/b/x/op0"] == "itself"
