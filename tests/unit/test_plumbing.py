"""A steering input's plumbing folded into one closed box per scope (issue #74, item 6): the ops that read only
an attention mask (or a position id, a timestep, a cache) until they meet the model's data."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from explorer.api import open_document
from explorer.graph.expansion import initial_expansion
from tests.conftest import ROOT


def _members(model, group: int) -> list[str]:
    return [model.node_label[v] for v in np.flatnonzero(model.node_group == group) if not model.node_constant[v]]


def test_gpt2_s_attention_mask_chain_is_one_closed_box_beside_the_stack():
    model = open_document(ROOT / "tests" / "data" / "torch_exports" / "hf_gpt2_dynamo.onnx").view.graph_model()
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert model.group_label[folded] == "attention_mask plumbing"
    assert model.group_detail[folded] == "5 ops that read only attention_mask"
    assert model.group_label[int(model.group_parent[folded])] == "transformer"
    assert _members(model, folded) == ["node_view_1", "node__to_copy", "node_GatherND_37", "node_bitwise_and_1",
                                       "node_Where_94"]  # fmt: skip
    assert folded not in initial_expansion(model)  # the first screen shows it closed


def _model(tmp_path, extra_mask_ops: int):
    """x → Relu → Where(cond, Relu, 0) → y, where cond = mask → Cast → (Not × extra) chain; mask an input too."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Cast", ["mask"], ["c0"], name="cast", to=TensorProto.BOOL)]  # fmt: skip
    last = "c0"
    for k in range(extra_mask_ops):
        nodes.append(helper.make_node("Not", [last], [f"c{k + 1}"], name=f"not{k}"))
        last = f"c{k + 1}"
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    nodes.append(helper.make_node("Where", [last, "r", "zero"], ["y"], name="where"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                                           helper.make_tensor_value_info("mask", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [zero])  # fmt: skip
    path = tmp_path / f"masked_{extra_mask_ops}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_only_ops_that_read_nothing_but_the_mask_are_folded_and_one_op_stays_a_box(tmp_path):
    model = _model(tmp_path, 2)
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert model.group_label[folded] == "mask plumbing" and _members(model, folded) == ["cast", "not0", "not1"]
    assert int(model.group_parent[folded]) == -1  # at the top level, where its ops were
    where = model.node_label.index("where")
    assert model.node_group[where] != folded  # it reads the data too: where the mask meets the model
    single = _model(tmp_path, 0)  # mask → Cast → Where: one op is its own box
    assert "plumbing" not in single.group_kind
