"""The first screen's zoom level (explorer.graph.window.first_level): full boxes where the reading path to the head
fits, one-line boxes where only they hold it, and one-line boxes where the path is mostly closed groups (a UNet's
blocks: their one-line box says what the full one says but the node count)."""

from __future__ import annotations

from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import COMPACT, FULL, layout_graph
from explorer.graph.visible import visible_graph
from explorer.graph.window import first_level
from tests.conftest import named_relu_chain


def _chain(tmp_path, steps: int, ops_per_block: int):
    """x → `steps` steps → y: each step one Relu (ops_per_block 1) or a module list's block of that many Relus
    (`/blocks.K/opJ`, every block another op count beyond the first two so none stack)."""
    names = [f"/op{k}" if ops_per_block == 1 else f"/blocks.{k}/op{j}"
             for k in range(steps) for j in range(1 if ops_per_block == 1 else ops_per_block + k)]  # fmt: skip
    model = named_relu_chain(tmp_path / f"chain_{steps}_{ops_per_block}.onnx", names)
    visible = visible_graph(model, initial_expansion(model))
    full = layout_graph(model, visible)
    return first_level(model, full, lambda: layout_graph(model, visible, level=COMPACT), 95, 42)[0]


def test_a_path_of_closed_blocks_opens_in_one_line_boxes_a_path_of_ops_in_full_ones(tmp_path):
    """30 steps fit neither level at 95×42 (a full box and its gap take 7 rows, a one-line box 2): thirty closed
    blocks open in one-line boxes (the model's shape, more of it on screen), thirty ops in full boxes (their shapes
    and weights are what one-line boxes lose). Ten ops fit one-line boxes only: one-line boxes. Four fit both:
    full boxes."""
    assert _chain(tmp_path, 30, 2) == COMPACT
    assert _chain(tmp_path, 30, 1) == FULL
    assert _chain(tmp_path, 10, 1) == COMPACT
    assert _chain(tmp_path, 4, 1) == FULL
