"""ONNX models built with onnx.helper: subgraphs, local functions, external data, odd types (demos, tests,
fuzzing). `python -m explorer.formats.scheduler_ir.samples` writes the subgraph model to sample_data/."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SUBGRAPHS_NAME = "subgraphs_functions.onnx"
# a comparison demo (`ir-explorer residual_blocks.onnx --compare residual_blocks_renamed.onnx`): one model, and
# the same model as another exporter names it with one attribute changed
RESIDUAL_NAME = "residual_blocks.onnx"
RENAMED_NAME = "residual_blocks_renamed.onnx"
CHANGED_NODE = ("/blocks.3/act/LeakyRelu", "LeakyRelu_13")  # (its name in A, in B): block 3's alpha 0.1 → 0.2


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


def residual_model(blocks: int = 6, channels: int = 4) -> onnx.ModelProto:
    """Blocks of Conv → LeakyRelu → Conv → Add(skip) in name scopes, with weights: repeated structure, where
    matching two graphs by op type and order alone goes wrong once anything moves."""
    nodes, inits, current = [], [], "x"
    for k in range(blocks):
        for j in (1, 2):
            inits.append(helper.make_tensor(f"w{k}_{j}", TensorProto.FLOAT, [channels, channels, 3, 3],
                                            [0.01] * (channels * channels * 9)))  # fmt: skip
        nodes += [
            helper.make_node("Conv", [current, f"w{k}_1"], [f"c{k}_1"], name=f"/blocks.{k}/conv1/Conv",
                             pads=[1, 1, 1, 1]),
            helper.make_node("LeakyRelu", [f"c{k}_1"], [f"r{k}"], name=f"/blocks.{k}/act/LeakyRelu", alpha=0.1),
            helper.make_node("Conv", [f"r{k}", f"w{k}_2"], [f"c{k}_2"], name=f"/blocks.{k}/conv2/Conv",
                             pads=[1, 1, 1, 1]),
            helper.make_node("Add", [f"c{k}_2", current], [f"y{k}"], name=f"/blocks.{k}/Add"),
        ]  # fmt: skip
        current = f"y{k}"
    graph = helper.make_graph(
        nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 16, 16])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ir-explorer tests")


def deep_decoder_model(layers: int, width: int) -> onnx.ModelProto:
    """A decoder of `layers` alike layers (TorchScript-style scoped names: `/model/layers.K/self_attn/...`) with
    square weights of `width`: its graph is what costs, not its weights (tests, the latency bench)."""
    nodes, weights = [], []

    def weight(name: str) -> str:
        weights.append(helper.make_tensor(name, TensorProto.FLOAT, [width, width], [0.01] * width * width))
        return name

    def op(kind: str, inputs: list[str], name: str) -> str:
        out = name.strip("/").replace("/", "_")
        nodes.append(helper.make_node(kind, inputs, [out], name=name))
        return out

    weights.append(helper.make_tensor("embed.weight", TensorProto.FLOAT, [8 * width, width], [0.0] * 8 * width * width))
    x = op("Gather", ["embed.weight", "input_ids"], "/model/embed_tokens/Gather")
    for k in range(layers):
        scope = f"/model/layers.{k}"
        normed = op("Sigmoid", [x], f"{scope}/input_layernorm/Sigmoid")
        q = op("MatMul", [normed, weight(f"model.layers.{k}.q.weight")], f"{scope}/self_attn/q_proj/MatMul")
        v = op("MatMul", [normed, weight(f"model.layers.{k}.v.weight")], f"{scope}/self_attn/v_proj/MatMul")
        attended = op("Mul", [op("Softmax", [q], f"{scope}/self_attn/Softmax"), v], f"{scope}/self_attn/Mul")
        out = op("MatMul", [attended, weight(f"model.layers.{k}.o.weight")], f"{scope}/self_attn/o_proj/MatMul")
        x = op("Add", [x, out], f"{scope}/Add")
        up = op("MatMul", [x, weight(f"model.layers.{k}.up.weight")], f"{scope}/mlp/up_proj/MatMul")
        down = op("MatMul", [op("Relu", [up], f"{scope}/mlp/act_fn/Relu"), weight(f"model.layers.{k}.down.weight")],
                  f"{scope}/mlp/down_proj/MatMul")  # fmt: skip
        x = op("Add", [x, down], f"{scope}/Add_1")
    normed = op("Sigmoid", [x], "/model/norm/Sigmoid")
    nodes.append(helper.make_node("MatMul", [normed, weight("lm_head.weight")], ["logits"], name="/lm_head/MatMul"))
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 8])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 8, width])]
    graph = helper.make_graph(nodes, "decoder", inputs, outputs, weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def renamed_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model as another exporter names its nodes (`LeakyRelu_13`), block 3's LeakyRelu alpha 0.2."""
    renamed = onnx.ModelProto()
    renamed.CopyFrom(model)
    for n, node in enumerate(renamed.graph.node):
        node.name = f"{node.op_type}_{n}"
    changed = next(node for node in renamed.graph.node if node.name == CHANGED_NODE[1])
    changed.attribute[0].f = 0.2
    return renamed


def write_samples(folder: Path) -> list[Path]:
    """The bundled ONNX demos: If/Loop subgraphs and a local function; a model and its renamed variant."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SUBGRAPHS_NAME
    path.write_bytes(subgraph_model().SerializeToString(deterministic=True))
    model = residual_model()
    written = [path]
    for name, variant in ((RESIDUAL_NAME, model), (RENAMED_NAME, renamed_model(model))):
        written.append(folder / name)
        written[-1].write_bytes(variant.SerializeToString(deterministic=True))
    return written
