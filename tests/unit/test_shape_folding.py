"""The explorer's own shape propagation (issue #57): small shape computations an exporter left unfolded are
evaluated, handed to their op as constants, and the second inference knows the shapes after them."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from explorer.api import open_document
from explorer.formats.onnx.metrics import shape_of
from explorer.formats.onnx.shape_folding import MAX_ELEMENTS, fold_shape_inputs


def constant(name: str, values: list[int]) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(values, np.int64)))


def masked_expand() -> onnx.ModelProto:
    """TorchScript's expand of a mask: the target shape is `Where(Equal(c, ConstantOfShape([4]) * -1), ones, c)`
    with c = [1, -1, 16, 16], which onnx's data propagation does not evaluate."""
    nodes = [
        constant("c", [1, -1, 16, 16]), constant("n", [4]), constant("k", [-1]),
        helper.make_node("ConstantOfShape", ["n"], ["ones"], value=numpy_helper.from_array(np.ones(1, np.int64))),
        helper.make_node("Mul", ["ones", "k"], ["minus"]),
        helper.make_node("Equal", ["c", "minus"], ["is_minus"]),
        helper.make_node("Where", ["is_minus", "ones", "c"], ["target"]),
        helper.make_node("Expand", ["mask", "target"], ["expanded"], name="expand"),
        helper.make_node("Add", ["scores", "expanded"], ["masked"], name="add"),
    ]  # fmt: skip
    inputs = [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 16, 16]),
              helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 12, 16, 16])]  # fmt: skip
    output = helper.make_tensor_value_info("masked", TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph(nodes, "mask", inputs, [output]),
                             opset_imports=[helper.make_opsetid("", 17)])  # fmt: skip


def test_an_unfolded_expand_target_is_evaluated_and_the_shapes_after_it_are_known():
    model = masked_expand()
    first = onnx.shape_inference.infer_shapes(model, data_prop=True)
    known = {v.name: v for v in first.graph.value_info}
    assert known["expanded"].type.tensor_type.shape.dim[0].dim_param.startswith("unk__")  # onnx alone: unknown
    assert fold_shape_inputs(model, first) == 1
    expand = next(node for node in model.graph.node if node.name == "expand")
    folded = next(t for t in model.graph.initializer if t.name == expand.input[1])
    assert numpy_helper.to_array(folded).tolist() == [1, 1, 16, 16]  # -1 (keep the dim) became 1
    second = onnx.shape_inference.infer_shapes(model, data_prop=True)
    values = [*second.graph.value_info, *second.graph.output]
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
    assert dims["expanded"] == [1, 1, 16, 16] and dims["masked"] == [1, 12, 16, 16]


def test_the_reader_folds_in_the_inference_child(tmp_path):
    path = tmp_path / "mask.onnx"
    path.write_bytes(masked_expand().SerializeToString())
    document = open_document(path)
    document.run_deep_checks()
    assert shape_of(document.view.index, "graph", "masked") == [1, 12, 16, 16]


def test_shape_gather_concat_reshape_is_folded_from_a_static_shape():
    """`Reshape(x, Concat(Gather(Shape(x), 0), [-1]))`: the batch dim read from x's shape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]), constant("zero", [0]), constant("rest", [-1]),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        helper.make_node("Concat", ["b", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten"),
    ]  # fmt: skip
    graph = helper.make_graph(nodes, "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    first = onnx.shape_inference.infer_shapes(model, data_prop=True)
    assert fold_shape_inputs(model, first) == 1
    folded = next(t for t in model.graph.initializer if t.name.endswith("__folded"))
    assert numpy_helper.to_array(folded).tolist() == [2, -1]


def test_a_large_or_unknown_shape_computation_is_left_as_it_is():
    """A ConstantOfShape past MAX_ELEMENTS and a Shape of a value of unknown dims are not evaluated."""
    nodes = [
        constant("big", [MAX_ELEMENTS + 1]),
        helper.make_node("ConstantOfShape", ["big"], ["filled"], value=numpy_helper.from_array(np.ones(1, np.int64))),
        helper.make_node("Reshape", ["x", "filled"], ["y"]),
        helper.make_node("Shape", ["z"], ["s"]),
        helper.make_node("Reshape", ["x", "s"], ["w"]),
    ]  # fmt: skip
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
              helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n"])]  # fmt: skip
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "w")]
    opsets = [helper.make_opsetid("", 17)]
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=opsets)
    first = onnx.shape_inference.infer_shapes(model, data_prop=True)
    assert fold_shape_inputs(model, first) == 0 and len(model.graph.initializer) == 0
