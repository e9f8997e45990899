"""The models the latency bench walks (issue #73): an 80-layer decoder (TorchScript-style scoped names, small
weights: the graph is what costs) and a model of ~600 MB of weights kept in an external file beside it (the
weights are what a reader could be slowed by). Written with onnx's helper once into benchmarks/out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from explorer.formats.onnx.samples import deep_decoder_model

DECODER_LAYERS = 80
HEAVY_LAYERS, HEAVY_WIDTH = 9, 4096  # 9 square float32 weights of 4096²: 576 MiB (604 MB)


def decoder_80(folder: Path) -> Path:
    path = folder / "decoder_80_layers.onnx"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        onnx.save(deep_decoder_model(DECODER_LAYERS, 8), path)
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
