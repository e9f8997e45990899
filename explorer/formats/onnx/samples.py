"""ONNX models built with onnx.helper: subgraphs, local functions, external data, odd types (demos, tests,
fuzzing). `python -m explorer.formats.scheduler_ir.samples` writes the subgraph model to sample_data/."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SUBGRAPHS_NAME = "subgraphs_functions.onnx"


def subgraph_model() -> onnx.ModelProto:
    """An If whose branches read `x` and `w` from the main graph (outer scope); the else branch holds a Loop
    whose body reads `w` too, two levels up; plus a call to a local function `custom.Scale`."""
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["then_out"], name="then_add")],
        "then_branch",
        [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2, "n"])],
    )
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["carried", "w"], ["carried_out"], name="body_mul"),
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
        ],
        "loop_body",
        [
            helper.make_tensor_value_info("iteration", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("carried", TensorProto.FLOAT, [2, "n"]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("carried_out", TensorProto.FLOAT, [2, "n"]),
        ],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "x"], ["else_out"], name="inner_loop", body=body)],
        "else_branch",
        [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2, "n"])],
    )
    function = helper.make_function(
        "custom",
        "Scale",
        ["a"],
        ["b"],
        [helper.make_node("Mul", ["a", "a"], ["b"], name="square")],
        [helper.make_opsetid("", 17)],
    )
    graph = helper.make_graph(
        [
            helper.make_node(
                "If", ["flag"], ["branch_out"], name="choose", then_branch=then_graph, else_branch=else_graph
            ),
            helper.make_node("Scale", ["branch_out"], ["y"], name="scale", domain="custom"),
        ],
        "main",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n"]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])],
        initializer=[
            numpy_helper.from_array(np.arange(2, dtype=np.float32).reshape(2, 1), "w"),
            numpy_helper.from_array(np.array(3, dtype=np.int64), "trips"),
        ],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)],
        functions=[function],
        producer_name="ir-explorer tests",
    )
    helper.set_model_props(model, {"author": "tests", "purpose": "subgraphs"})
    return model


def odd_types_model() -> onnx.ModelProto:
    """Inputs of every kind of type: float8, int4, bfloat16, string, sequence, optional, map, symbolic dims."""

    def tensor(name, elem, shape):
        return helper.make_tensor_value_info(name, elem, shape)

    inputs = [
        tensor("f8", TensorProto.FLOAT8E4M3FN, [4]),
        tensor("i4", TensorProto.INT4, ["batch", 8]),
        tensor("bf", TensorProto.BFLOAT16, [None, 3]),
        tensor("text", TensorProto.STRING, [2]),
        helper.make_value_info(
            "seq", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["k"]))
        ),
        helper.make_value_info(
            "maybe", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, []))
        ),
        helper.make_value_info(
            "table",
            helper.make_map_type_proto(TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, [])),
        ),
    ]
    nodes = [helper.make_node("Identity", [i.name], [f"{i.name}_out"]) for i in inputs]
    outputs = [helper.make_value_info(f"{i.name}_out", i.type) for i in inputs]
    graph = helper.make_graph(nodes, "odd", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def save_with_external_data(model: onnx.ModelProto, folder: Path, name: str = "external.onnx") -> Path:
    """A linear layer whose weights go to a sidecar file (onnx's own external-data writer)."""
    path = folder / name
    onnx.save_model(
        model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=f"{name}.data", size_threshold=0
    )
    return path


def linear_model(rows: int = 16, cols: int = 8) -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.linspace(-1, 1, rows * cols, dtype=np.float32).reshape(rows, cols), "weight")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "weight"], ["y"], name="linear")],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", cols])],
        initializer=[weight],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def write_samples(folder: Path) -> list[Path]:
    """The bundled ONNX demo: If/Loop subgraphs and a local function."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SUBGRAPHS_NAME
    path.write_bytes(subgraph_model().SerializeToString(deterministic=True))
    return [path]
