"""Issue #54: the shape arithmetic exporters write (`Shape → Gather → Unsqueeze → Concat → Reshape`, a `Range` over
the sequence length) folds into the op that uses it as data, like a constant; an op that also reads a weight (a
position embedding's `Gather`) stays drawn. Nothing vanishes: the folded ops stay in the model, say where they
are drawn, and the `show constants` switch draws them."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.api import open_document
from explorer.graph.builder import GraphBuilder
from explorer.graph.group_details import group_sections
from explorer.graph.layout import item_texts
from explorer.graph.text import weights_text
from explorer.graph.visible import expand_all, visible_graph
from tests.conftest import SAMPLES


def plumbing():
    """x → Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) → out, and a position embedding
    Gather(wpe, Range(0, Gather(Shape(x), 1), 1)) added to it."""
    b = GraphBuilder()
    ids = {}

    def node(name, op, constant=False, parameter_bytes=0):
        ids[name] = b.node(name, op, constant=constant, parameter_bytes=parameter_bytes)

    node("x", "input")
    node("shape", "Shape")
    node("zero", "initializer", constant=True, parameter_bytes=8)
    node("batch", "Gather")
    node("batch_1d", "Unsqueeze")
    node("minus_one", "initializer", constant=True, parameter_bytes=8)
    node("target", "Concat")
    node("reshape", "Reshape")
    node("one", "initializer", constant=True, parameter_bytes=8)
    node("seq", "Gather")
    node("positions", "Range")
    node("wpe", "initializer", constant=True, parameter_bytes=1024 * 96 * 4)
    node("pos_embedding", "Gather")
    node("add", "Add")
    node("out", "output")
    edges = [("x", "shape"), ("shape", "batch"), ("zero", "batch"), ("batch", "batch_1d"), ("batch_1d", "target"),
             ("minus_one", "target"), ("x", "reshape"), ("target", "reshape"), ("shape", "seq"), ("one", "seq"),
             ("zero", "positions"), ("seq", "positions"), ("one", "positions"), ("wpe", "pos_embedding"),
             ("positions", "pos_embedding"), ("reshape", "add"), ("pos_embedding", "add"), ("add", "out")]  # fmt: skip
    for a, z in edges:
        b.edge(ids[a], ids[z], a)
    return b.build(), ids


def test_shape_arithmetic_folds_into_the_op_that_reads_it_as_data():
    model, ids = plumbing()
    folded = {name for name, i in ids.items() if model.node_constant[i]}
    shape_only = {name for name, i in ids.items() if model.node_shape_only[i]}
    assert shape_only == {"shape", "batch", "batch_1d", "target", "seq", "positions"}
    assert folded == shape_only | {"zero", "minus_one", "one", "wpe"}
    into = {name: int(model.node_folded_into[i]) for name, i in ids.items() if model.node_constant[i]}
    assert into["target"] == into["batch"] == into["shape"] == ids["reshape"]  # the first reader, in order
    assert into["positions"] == into["seq"] == into["wpe"] == ids["pos_embedding"]


def test_an_op_reading_a_weight_and_a_shape_stays_drawn():
    model, ids = plumbing()
    assert not model.node_constant[ids["pos_embedding"]] and not model.node_constant[ids["add"]]
    drawn = [model.node_label[i] for i in np.flatnonzero(~model.node_constant)]
    assert drawn == ["x", "reshape", "pos_embedding", "add", "out"]


def test_the_reader_says_how_many_ops_compute_its_shape():
    model, ids = plumbing()
    assert weights_text(model, ids["reshape"], "float32") == "← 4 ops"  # Shape, Gather, Unsqueeze, Concat
    assert weights_text(model, ids["pos_embedding"], "float32") == "initializer · ← 3 ops"


@pytest.mark.skipif(not (SAMPLES / "onnx").exists(), reason="real samples not found (a user's clone has no ../shared)")
def test_a_reshape_says_the_shape_its_plumbing_comes_to_where_every_dim_is_known():
    document = open_document(SAMPLES / "onnx" / "minigpt4_dynamo_dynseq_noopt.onnx")
    model = document.view.graph_model()
    reshapes = [n for n in range(model.n_nodes) if model.node_op[n] == "Reshape" and not model.node_constant[n]]
    texts = {weights_text(model, n, "float32") for n in reshapes}
    assert "shape = [1, seq, 6, 16]" in texts  # its output's shape, `seq` the symbolic sequence length
    unknown = [n for n in reshapes if "?" in model.node_detail[n] or "unk__" in model.node_detail[n]]
    assert all("←" in weights_text(model, n, "float32") for n in unknown if model.folded_inputs(n))
    where = next(n for n in range(model.n_nodes) if model.node_op[n] == "Where" and not model.node_constant[n])
    assert weights_text(model, where, "float32") == "condition ← 10 ops"  # not a shape: its ops counted


def test_the_constants_switch_draws_the_shape_arithmetic():
    model, ids = plumbing()
    assert visible_graph(model, set()).n_items == 5
    shown = visible_graph(model, set(), show_constants=True)
    assert shown.n_items == model.n_nodes
    assert shown.node_item[ids["shape"]] >= 0


def test_a_group_counts_its_folded_shape_ops_apart():
    b = GraphBuilder()
    block = b.group("block", kind="scope")
    x = b.node("x", "input")
    shape = b.node("shape", "Shape", group=block)
    reshape = b.node("reshape", "Reshape", group=block)
    relu = b.node("relu", "Relu", group=block)
    b.edge(x, shape, "x")
    b.edge(x, reshape, "x")
    b.edge(shape, reshape, "s")
    b.edge(reshape, relu, "r")
    model = b.build()
    rows = dict(group_sections(model, block)[0][2])
    assert rows["nodes"] == "2 nodes (and 1 folded shape op)"


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="real samples not found (a user's clone has no ../shared)")
def test_a_dynamo_gpt_opens_on_its_tokens_and_embeddings_not_shape_arithmetic():
    """The first boxes of torch's dynamo GPT were Shape → Squeeze → Cast → Range; now they are the model's."""
    document = open_document(SAMPLES / "onnx" / "minigpt4_dynamo_dynseq_noopt.onnx")
    model = document.view.graph_model()
    shape_ops = {model.node_op[i] for i in np.flatnonzero(model.node_shape_only)}
    assert {"Shape", "Range", "Concat"} <= shape_ops
    texts = item_texts(model, visible_graph(model, expand_all(model)))
    assert not {"Shape", "Range"} & {title.split()[0] for title in texts.titles if title}
    assert int(model.node_shape_only.sum()) == 69


def test_graph_json_lists_the_folded_shape_ops_with_their_reader():
    from explorer.contracts import dump
    from explorer.exports.graph_json import graph_json

    model, ids = plumbing()
    payload = graph_json(model)
    entries = {entry["label"]: entry for entry in payload["nodes"]}
    reshape_box = entries["reshape"]["id"]
    assert entries["shape"]["shape_plumbing"] is True and entries["shape"]["folded_into"] == reshape_box
    assert "shape_plumbing" not in entries["zero"] and "shape_plumbing" not in entries["reshape"]
    dump("graph", payload)  # the contract holds
