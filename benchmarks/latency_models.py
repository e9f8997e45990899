"""The models the latency bench walks (issue #73): an 80-layer decoder (TorchScript-style scoped names, small
weights: the graph is what costs) and a model of ~600 MB of weights kept in an external file beside it (the
weights are what a reader could be slowed by). Written with onnx's helper once into benchmarks/out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DECODER_LAYERS = 80
HEAVY_LAYERS, HEAVY_WIDTH = 9, 4096  # 9 square float32 weights of 4096²: 576 MiB (604 MB)


def decoder_80(folder: Path) -> Path:
    path = folder / "decoder_80_layers.onnx"
    if path.exists():
        return path
    nodes, weights = [], []
    width = 8

    def weight(name: str) -> str:
        weights.append(helper.make_tensor(name, TensorProto.FLOAT, [width, width], [0.01] * width * width))
        return name

    def op(kind: str, inputs: list[str], name: str) -> str:
        out = name.strip("/").replace("/", "_")
        nodes.append(helper.make_node(kind, inputs, [out], name=name))
        return out

    weights.append(helper.make_tensor("embed.weight", TensorProto.FLOAT, [64, width], [0.0] * 64 * width))
    x = op("Gather", ["embed.weight", "input_ids"], "/model/embed_tokens/Gather")
    for k in range(DECODER_LAYERS):
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
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def heavy_weights(folder: Path) -> Path:
    path = folder / "weights_600mb.onnx"
    if path.exists():
        return path
    nodes, weights, x = [], [], "x"
    for k in range(HEAVY_LAYERS):
        weights.append(numpy_helper.from_array(np.full((HEAVY_WIDTH, HEAVY_WIDTH), 0.001, np.float32),
                                               f"blocks.{k}.weight"))  # fmt: skip
        nodes.append(helper.make_node("MatMul", [x, f"blocks.{k}.weight"], [f"h{k}"], name=f"/blocks.{k}/MatMul"))
        nodes.append(helper.make_node("Relu", [f"h{k}"], [f"r{k}"], name=f"/blocks.{k}/Relu"))
        x = f"r{k}"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, HEAVY_WIDTH])]
    outputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, HEAVY_WIDTH])]
    graph = helper.make_graph(nodes, "heavy", inputs, outputs, weights)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path,
              save_as_external_data=True, location=path.name + ".data")  # fmt: skip
    return path
