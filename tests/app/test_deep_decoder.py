"""Issue #54: an 80-layer decoder opens on its shape, not on 80 screens of layers: input → embedding → one stack
box `layers.0–79 × 80` → norm → head → logits; ↓ reads into the stack, its first block and on. The decoder is
written here with onnx's helper (TorchScript-style scoped names, weights of width 4), not committed."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from tests.app.test_graph_view import open_graph
from widgets.app import make_app

LAYERS = 80
WIDTH = 4


def deep_decoder(path) -> None:
    nodes, inits = [], []

    def weight(name: str) -> str:
        inits.append(helper.make_tensor(name, TensorProto.FLOAT, [WIDTH, WIDTH], [0.1] * WIDTH * WIDTH))
        return name

    def op(kind: str, inputs: list[str], name: str) -> str:
        out = name.strip("/").replace("/", "_")
        nodes.append(helper.make_node(kind, inputs, [out], name=name))
        return out

    inits.append(helper.make_tensor("embed.weight", TensorProto.FLOAT, [32, WIDTH], [0.0] * 32 * WIDTH))
    x = op("Gather", ["embed.weight", "input_ids"], "/model/embed_tokens/Gather")
    for k in range(LAYERS):
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
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 8, WIDTH])]
    graph = helper.make_graph(nodes, "decoder", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_an_80_layer_decoder_opens_on_its_shape_and_down_reads_into_the_stack(tmp_path, size):
    path = tmp_path / "decoder80.onnx"
    deep_decoder(path)
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        graph = await open_graph(pilot)
        layout, model = graph.picture, graph.model
        order = sorted(range(layout.visible.n_items), key=lambda i: (int(layout.y[i]), int(layout.x[i])))
        assert [layout.titles[i].split(" · ")[0] for i in order] == [
            "input input_ids", "Gather", f"layers.0–{LAYERS - 1} × {LAYERS}", "Sigmoid", "MatMul", "output logits"]
        seen = []
        for _ in range(6):  # input, Gather, the stack (opens), layers.0 (opens), its first op
            seen.append(graph.picture.labels[graph.selected_item])
            await pilot.press("down")
        assert seen[:3] == ["input_ids", "/model/embed_tokens/Gather", f"layers.0–{LAYERS - 1}"]
        assert seen[3] == "layers.0" and seen[4].startswith("/model/layers.0/")
        stack = next(g for g in range(model.n_groups) if model.group_kind[g] == "stack")
        assert int((model.group_parent == stack).sum()) == LAYERS
