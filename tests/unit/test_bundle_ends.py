"""Issue #54: a value read by more boxes than FANOUT is drawn as one bundle at its source (`⇊ 32 readers`); each
reader marks that input too (`⇈ cos`), in the view and the SVG, where it showed one input fewer than it has."""

from __future__ import annotations

import numpy as np

from explorer.exports.graph_svg import graph_svg
from explorer.graph.builder import GraphBuilder
from explorer.graph.layout import FANOUT, layout_graph
from explorer.graph.visible import visible_graph
from widgets.graph.canvas import draw


def rope_like():
    """`cos` read by FANOUT + 8 `Mul`s, each also reading its own input."""
    b = GraphBuilder()
    cos = b.node("cos", "Cos")
    b.edge(b.node("angles", "input"), cos)
    muls = []
    for k in range(FANOUT + 8):
        x = b.node(f"x{k}", "input")
        mul = b.node(f"mul{k}", "Mul")
        b.edge(x, mul)
        b.edge(cos, mul)
        muls.append(mul)
    return b.build(), cos, muls


def test_every_reader_of_a_bundle_names_it():
    model, cos, muls = rope_like()
    layout = layout_graph(model, visible_graph(model, set()))
    item = {int(layout.visible.item_id[i]): i for i in range(layout.visible.n_items)}
    assert layout.bundles == {item[cos]: len(muls)}
    assert {r: layout.in_bundles[item[r]] for r in muls} == {r: [item[cos]] for r in muls}


def test_the_svg_and_the_view_say_it_above_the_readers():
    model, _, muls = rope_like()
    svg = graph_svg(model)
    assert svg.count("⇈ cos") == len(muls)
    layout = layout_graph(model, visible_graph(model, set()))
    canvas = draw(layout, layout.width + 20, layout.height + 4, (0, 0), np.zeros(layout.visible.n_items, dtype=int))
    text = "\n".join("".join(map(chr, row)) for row in canvas.chars.tolist())
    assert "⇈ cos" in text and "⇊ 32 readers" in text
