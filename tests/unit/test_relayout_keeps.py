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
