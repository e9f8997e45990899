"""A graph group no tree item stands for (a name scope) is described from the graph: its place, what it holds,
the op types inside and the values crossing its border; `g` lists the producers and readers across it."""

from __future__ import annotations

from explorer.document import group_ref, is_group_ref
from explorer.graph.builder import GraphBuilder
from explorer.graph.group_details import group_links, group_sections
from explorer.models.graph import ROOT


def _block():
    """x → [blk: attn › (mm ← W, softmax), add] → out; `W` a folded constant inside the block."""
    b = GraphBuilder()
    x = b.node("x", "input", ref=("value", "x"))
    attn = b.scope("/blk/attn/MatMul")
    blk = b.scope("/blk/Add")
    w = b.node("W", "Constant", group=attn, constant=True, ref=("init", "W"))
    mm = b.node("/blk/attn/MatMul", "MatMul", group=attn, ref=("node", 1))
    sm = b.node("/blk/attn/Softmax", "Softmax", group=attn, ref=("node", 3))
    add = b.node("/blk/Add", "Add", group=blk, ref=("node", 2))
    out = b.node("out", "output", ref=("value", "out"))
    for s, t, label in ((x, mm, "x"), (w, mm, "W"), (mm, sm, "s"), (sm, add, "h"), (x, add, "x"), (add, out, "y")):
        b.edge(s, t, label)
    return b.build(), blk, attn


def test_a_scope_says_where_it_is_what_it_holds_and_what_crosses_it():
    model, blk, attn = _block()
    ((title, columns, rows),) = group_sections(model, blk)
    said = dict(rows)
    assert title == "Group blk" and columns == ("property", "value")
    assert said["in"] == "the top level" and said["kind"] == "name scope"
    assert said["nodes"] == "3 nodes (and 1 folded constant)"  # the folded weight is not a node of its own
    assert said["groups"] == "1 directly inside"
    assert said["ops"] == "MatMul 1 · Softmax 1 · Add 1"
    assert said["reads"] == "1 value: x"  # read twice, named once; the weight inside is not read from outside
    assert said["gives"] == "1 value: y"
    inner = dict(group_sections(model, attn)[0][2])
    assert inner["in"] == "blk" and inner["reads"] == "1 value: x" and inner["gives"] == "1 value: h"
    assert group_sections(model, 99) == [] and group_sections(model, ROOT) == []


def test_links_are_the_producers_of_what_it_reads_and_the_readers_of_what_it_gives():
    model, blk, attn = _block()
    assert group_links(model, blk) == [("in x: x", ("value", "x")), ("out y: out", ("value", "out"))]
    assert group_links(model, attn) == [("in x: x", ("value", "x")), ("out h: /blk/Add", ("node", 2))]
    assert is_group_ref(group_ref(blk)) and not is_group_ref(("node", 1)) and not is_group_ref(("graph-group", "1"))
