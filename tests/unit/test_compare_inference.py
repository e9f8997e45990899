"""Issue #74 item 3: compare and diff speak of the model, not of inference. A type that differs only where one
side's inference knew less (`float32[batch, seq, 768]` against `float32[?, ?, 768]`) and an attribute written
at its schema's default (TorchScript's `allowzero=0`) are not changes; a different size, element type or
attribute value still is."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from explorer.api import open_document
from explorer.diff import diff_documents
from explorer.graph.match import CHANGED, SAME, match_graphs, same_but_inferred


@pytest.mark.parametrize("x, y, same", [
    ("float32[batch, seq, 768]", "float32[?, ?, 768]", True),
    ("float32[1, seq, 768]", "float32[1, 128, 768]", True),
    ("float32[1, 128, 768]", "", True),  # no type on one side: inference gave none
    ("?", "float32[1, 128, 768]", True),
    ("float32[1, 128, 768]", "float32[1, 64, 768]", False),
    ("float32[1, 128, 768]", "float16[1, 128, 768]", False),
    ("float32[1, 128]", "float32[1, 128, 1]", False),
    ("float32[2], int64[]", "float32[?], int64[]", True),
    ("float32[2], int64[]", "float32[2]", False),
])  # fmt: skip
def test_types_that_differ_only_by_inference(x, y, same):
    assert same_but_inferred(x, y) is same


def reshaper(tmp_path, name: str, dims: list, **attributes) -> onnx.ModelProto:
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [0, -1])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape", **attributes),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape],
                              value_info=[helper.make_tensor_value_info("r", TensorProto.FLOAT, dims)])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / name
    onnx.save(model, path)
    return path


def compared(a_path, b_path):
    a, b = open_document(a_path), open_document(b_path)
    ma, mb = a.view.graph_model(), b.view.graph_model()
    match = match_graphs(ma, mb, lambda n: a.view.node_attributes(ma.node_ref[n]),
                         lambda n: b.view.node_attributes(mb.node_ref[n]))  # fmt: skip
    reshape = ma.node_label.index("reshape")
    return match.status_a[reshape], match.what.get(reshape, ""), diff_documents(a, b)


def test_a_default_attribute_and_an_inferred_dim_are_not_changes(tmp_path):
    a = reshaper(tmp_path, "a.onnx", [4, 6])
    b = reshaper(tmp_path, "b.onnx", ["unk__0", "n"], allowzero=0)
    status, what, result = compared(a, b)
    assert (status, what) == (SAME, "")
    assert [c for c in result["changes"] if c["kind"].startswith("node-")] == []


def test_a_changed_value_and_a_changed_size_still_are(tmp_path):
    a = reshaper(tmp_path, "a.onnx", [4, 6])
    b = reshaper(tmp_path, "b.onnx", [4, 5], allowzero=1)
    status, what, _ = compared(a, b)
    assert status == CHANGED and what == "type float32[4, 6] → float32[4, 5]; attributes allowzero"


def attention(tmp_path, name: str, k_first: bool, prefix: str):
    """x → q = x·Wq → Transpose → an output, k = x·Wk → Transpose → an output: two projections alike in every
    way but their weights' names; another exporter writes K before Q and names every node and output its own
    way."""
    weights = [onnx.numpy_helper.from_array(np.ones((8, 8), np.float32), n) for n in ("wq", "wk")]
    q = [helper.make_node("MatMul", ["x", "wq"], [f"{prefix}q"], name=f"{prefix}q_mm"),
         helper.make_node("Transpose", [f"{prefix}q"], [f"{prefix}qo"], name=f"{prefix}q_t", perm=[1, 0])]
    k = [helper.make_node("MatMul", ["x", "wk"], [f"{prefix}k"], name=f"{prefix}k_mm"),
         helper.make_node("Transpose", [f"{prefix}k"], [f"{prefix}ko"], name=f"{prefix}k_t", perm=[1, 0])]
    outputs = [helper.make_tensor_value_info(f"{prefix}{o}", TensorProto.FLOAT, None) for o in ("qo", "ko")]
    graph = helper.make_graph(k + q if k_first else q + k, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 8])],
                              outputs[::-1] if k_first else outputs, weights)  # fmt: skip
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_projections_alike_but_for_their_weights_pair_by_the_weights_names(tmp_path):
    """Issue #74 item 3: a Q transpose paired with the K transpose (their structure is the same)."""
    a = attention(tmp_path, "a.onnx", k_first=False, prefix="/attn/")
    b = attention(tmp_path, "b.onnx", k_first=True, prefix="node_")
    match = match_graphs(a, b)
    pairs = {a.node_label[x]: b.node_label[int(match.a_to_b[x])] for x in range(a.n_nodes) if match.a_to_b[x] >= 0}
    assert pairs["/attn/q_mm"] == "node_q_mm" and pairs["/attn/k_mm"] == "node_k_mm"
    assert pairs["/attn/q_t"] == "node_q_t" and pairs["/attn/k_t"] == "node_k_t"


def test_on_request_an_inferred_dim_and_a_default_attribute_are_changes(tmp_path, capsys):
    """`diff --as-written` (issue #74, item 3: shown on request): the same pair as above, counted as written."""
    from explorer.cli import main

    a = reshaper(tmp_path, "a.onnx", [4, 6])
    b = reshaper(tmp_path, "b.onnx", ["unk__0", "n"], allowzero=0)
    first, second = open_document(a), open_document(b)
    result = diff_documents(first, second, as_written=True)
    changed = [c for c in result["changes"] if c["kind"] == "node-changed"]
    assert [(c["name"], c["what"]) for c in changed] == [("reshape", "type float32[4, 6] → float32[?, n]; attributes "
                                                                     "allowzero")]  # fmt: skip
    assert main(["diff", str(a), str(b), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert [c for c in plain["changes"] if c["kind"].startswith("node-")] == []
    assert main(["diff", str(a), str(b), "--json", "--as-written"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert [c["what"] for c in written["changes"] if c["kind"] == "node-changed"] == [changed[0]["what"]]


def biased(tmp_path, name: str, torchscript: bool) -> onnx.ModelProto:
    """x + bias → Reshape(·, shape) → y, as the two torch exporters write it: dynamo `Add(x, bias)` reading the
    initializer and the shape as an initializer; TorchScript `Add(bias, x)` reading the bias through an `Identity`
    copy and the shape from a `Constant` node, every name its own."""
    bias = onnx.numpy_helper.from_array(np.ones(6, np.float32), "bias")
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 2])
    if torchscript:
        nodes = [helper.make_node("Identity", ["bias"], ["Identity_7"], name="Identity_7"),
                 helper.make_node("Add", ["Identity_7", "x"], ["sum"], name="/Add"),
                 helper.make_node("Constant", [], ["shape_c"], name="/Constant", value=shape),
                 helper.make_node("Reshape", ["sum", "shape_c"], ["y"], name="/Reshape")]
        initializers = [bias]
    else:
        nodes = [helper.make_node("Add", ["x", "bias"], ["sum"], name="node_add"),
                 helper.make_node("Reshape", ["sum", "shape"], ["y"], name="node_view")]
        initializers = [bias, shape]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_weights_read_through_copies_and_a_commutative_op_s_order_are_not_changes(tmp_path):
    """BERT's two exports read 85 'folded weights' changes: TorchScript's bias reached through `Identity` and its
    shapes from `Constant` nodes had no type without inference ('?'), and `Add(bias, x)` against `Add(x, bias)`
    put the bias in another role. Both are the same model; a bias of another size still is a change."""
    a, b = biased(tmp_path, "a.onnx", torchscript=False), biased(tmp_path, "b.onnx", torchscript=True)
    first, second = open_document(a), open_document(b)
    graph = second.view.graph_model()
    copy = graph.node_label.index("Identity_7")
    assert graph.node_detail[copy] == "float32[6]"  # what the file states, no inference run
    assert graph.node_detail[graph.node_label.index("/Constant")] == "int64[2]"
    assert [c for c in diff_documents(first, second)["changes"] if c["kind"].startswith("node-")] == []
    onnx_b = onnx.load(b)
    onnx_b.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(np.ones(3, np.float32), "bias"))
    onnx.save(onnx_b, b)
    changed = [c for c in diff_documents(first, open_document(b))["changes"] if c["kind"] == "node-changed"]
    assert [(c["name"], c["what"]) for c in changed] == [("/Add", "folded weights")]
