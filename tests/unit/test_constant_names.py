"""Issue #74 item 6: names that only repeat a node's path do not make blocks unlike. TorchScript names each
Constant's value tensor by its node's path (`/layers.3/Constant_output_0`); the attribute digest read those names,
so Llama-1B's alike layers got no stack and a renamed constant was a change."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from explorer.api import open_document
from explorer.formats.onnx.document import attribute_digest


def constant(name: str, tensor_name: str, value: float) -> onnx.NodeProto:
    tensor = numpy_helper.from_array(np.full(4, value, np.float32), tensor_name)
    return helper.make_node("Constant", [], [name + "_out"], name=name, value=tensor)


def test_a_constant_digest_reads_its_value_not_its_name():
    a = attribute_digest(constant("/layers.0/Constant", "/layers.0/Constant_output_0", 1.0))
    b = attribute_digest(constant("/layers.1/Constant", "/layers.1/Constant_output_0", 1.0))
    c = attribute_digest(constant("/layers.1/Constant", "/layers.1/Constant_output_0", 2.0))
    assert a == b and a != c and a.startswith("value=")


def test_layers_whose_constants_are_named_by_their_path_stack(tmp_path):
    nodes, previous = [], "x"
    for k in range(4):
        nodes += [constant(f"/layers.{k}/Constant", f"/layers.{k}/Constant_output_0", 0.5),
                  helper.make_node("Add", [previous, f"/layers.{k}/Constant_out"], [f"a{k}"], name=f"/layers.{k}/Add"),
                  helper.make_node("Relu", [f"a{k}"], [f"r{k}"], name=f"/layers.{k}/Relu")]  # fmt: skip
        previous = f"r{k}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [4])])  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = open_document(path).view.graph_model()
    stacks = [model.group_label[g] for g in range(model.n_groups) if model.group_kind[g] == "stack"]
    assert stacks == ["layers.0–3"]
