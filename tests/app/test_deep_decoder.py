"""Issue #54: an 80-layer decoder opens on its shape, not on 80 screens of layers: input → embedding → one stack
box `layers.0–79 × 80` → norm → head → logits; ↓ reads into the stack, its first block and on. The decoder is
built by `deep_decoder_model` (TorchScript-style scoped names, weights of width 4), not committed."""

from __future__ import annotations

import onnx
import pytest

from explorer.formats.onnx.samples import deep_decoder_model
from tests.app.test_graph_view import open_graph
from widgets.app import make_app

LAYERS = 80
WIDTH = 4


def deep_decoder(path) -> None:
    onnx.save(deep_decoder_model(LAYERS, WIDTH), path)


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
