"""A relayout that keeps the picture (a group opened or closed): the steps that keep rows and ports where they were,
with exact answers."""

from __future__ import annotations

import numpy as np

from explorer.graph.ordering import wanted_keys
from explorer.graph.placement import keep_rows


def test_rows_above_a_changed_element_start_no_higher_than_they_did():
    """A group opened: a gap above it that now needs a track less keeps its rows, so the frame's corner lands
    where its box was; layers below the changed element are free to move up."""
    starts = np.asarray([0, 6, 12, 18])
    layer = np.asarray([0, 1, 2, 3])
    fed = np.asarray([False, True, True, True])  # the input at layer 0 sits at its layer's bottom: says nothing
    wanted = np.asarray([5.0, 8.0, 14.0, 40.0])  # rows from the canvas's row -1, as the previous layout had them
    changed = np.asarray([False, False, True, False])
    assert keep_rows(starts, layer, fed, wanted, changed, "canvas").tolist() == [0, 7, 13, 19]
    # nothing changed: every layer kept, the last one too
    assert keep_rows(starts, layer, fed, wanted, None, "canvas").tolist() == [0, 7, 13, 39]
    # inside a frame with a title and no port row: the first layer is always two rows down, so it is not moved
    assert keep_rows(starts, layer, fed, np.asarray([0.0, 9.0, 15.0, 12.0]), None, "title").tolist() == [0, 7, 13, 19]


def test_ports_that_were_there_keep_their_own_order():
    """An ancestor's entry ports were ordered by their elements' centres, not by where they were: a grown element
    sent its port past the others, the edges above crossed the gap in a new order and needed a track more (the
    UNet's frames opened a row below their boxes)."""
    want = np.asarray([0.0, 20.0, 30.0, 5.0, np.nan])  # two elements; ports of element 0 at 30, of element 1 at 5
    sizes = np.asarray([10, 10])
    keys = wanted_keys(want, sizes, {0: 2, 1: 3}, {1: 4}, {})
    assert keys.tolist()[:4] == [5.0, 25.0, 30.5, 5.5]  # the ports by their own old cells
    assert keys[4] == 25.25  # a port without an old cell: beside its element, as before


def _opened(model, expanded: set[int], group: int):
    """The layout before and after Enter on `group`, as the graph view's session lays them out."""
    from explorer.graph.session import GraphSession

    session = GraphSession()
    session.start(model, expanded)
    before = session.layout
    session.select(session.item_of_key(before, (1, group)))
    toggled = session.toggle((0, 0, 160, 46))
    assert toggled is not None and toggled.opened and toggled.shift == (0, 0)
    return before, session.layout


def _widening_block(path: str, builder):
    """`path`/inner: a chain of three wide ops beside a side branch (a frame far wider than its box), after `a`."""
    a = builder.node("a", "Relu", group=builder.scope(f"{path}/a"))
    previous = a
    for k in range(3):
        name = f"wide_named_operation_{k}"
        node = builder.node(name, "MatMul", group=builder.scope(f"{path}/inner/{name}"))
        builder.edge(previous, node)
        previous = node
    side = builder.node("side_branch_with_a_long_name", "Add",
                        group=builder.scope(f"{path}/inner/side_branch_with_a_long_name"))  # fmt: skip
    join = builder.node("join", "Add", group=builder.scope(f"{path}/inner/join"))
    for source, target in ((a, side), (previous, join), (side, join)):
        builder.edge(source, target)
    return a, join


def test_an_open_frame_holding_only_frames_keeps_its_corner_when_it_grows():
    """`outer` holds only the frame `mid` (no box of its own says how far its content moved): opening `inner`
    grows it; its corner stays, so the input above stays over it (it was re-centred on its new width, and the
    input moved 28 columns right)."""
    from explorer.graph.builder import GraphBuilder

    b = GraphBuilder()
    x = b.node("x", "Input")
    a, join = _widening_block("/outer/mid", b)
    b.edge(x, a)
    model = b.build()
    inner = int(model.node_group[join])
    mid = int(model.group_parent[inner])
    outer = int(model.group_parent[mid])
    before, after = _opened(model, {outer, mid}, inner)
    x_item = after.visible.node_item[x]
    assert (int(before.x[before.visible.node_item[x]]), int(after.x[x_item])) == (8, 8)
    assert before.frames[outer][:2] == after.frames[outer][:2] == (1, 7)
    assert after.frames[inner][:2] == (7, 17)  # the frame's corner where the box's was
    assert after.frames[outer][2] == 80  # grown right: 25 → 80


def test_a_grown_frame_keeps_its_place_in_its_layer_and_pushes_the_edge_beside_it():
    """`block` stays open and grows when `inner` opens; the edge x → z ran beside it on its right. Ordered by its
    new centre the frame sorted after the edge and jumped 14 columns right of it; by its old centre it stays and
    the edge moves aside."""
    from explorer.graph.builder import GraphBuilder

    b = GraphBuilder()
    x = b.node("x", "Input")
    a, join = _widening_block("/block", b)
    z = b.node("z", "Add")
    for source, target in ((x, a), (join, z), (x, z)):
        b.edge(source, target)
    model = b.build()
    inner = int(model.node_group[join])
    block = int(model.group_parent[inner])
    before, after = _opened(model, {block}, inner)
    assert before.frames[block][:2] == after.frames[block][:2] == (1, 7)
    assert int(after.x[after.visible.node_item[x]]) == int(before.x[before.visible.node_item[x]]) == 11
    assert before.chains[-1][0][(("e", 0), ("e", 1))] == [22]  # x → z beside the closed block, on its right
    assert after.chains[-1][0][(("e", 0), ("e", 1))] == [77]  # and beside the grown frame, still on its right
