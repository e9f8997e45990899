"""Ordering with ports (issue #54): an open group is one slot in its layer, but the edges into it end at its ports;
the barycentres and the crossing count read where across the group each edge ends, so sources line up with the
ports they feed (ELK's port-aware barycentres)."""

import numpy as np
import pytest

from explorer.graph import ordering
from explorer.graph.routing import Connection


def test_a_port_is_a_fraction_of_its_box_from_the_middle():
    assert ordering.port_fraction(0, 10) == pytest.approx(-0.45)
    assert ordering.port_fraction(9, 10) == pytest.approx(0.45)
    assert ordering.port_fraction(4, 9) == 0.0
    assert ordering.port_fraction(50, 10) == 0.49  # a cell past the border still stays inside its slot


def test_two_sources_take_the_order_of_the_ports_they_feed():
    """a (slot 0) feeds the group's right port, b (slot 1) its left one: one crossing as they stand, none once
    they swap; without the ports both edges end at one place and nothing would move them."""
    v_layer = np.array([0, 0, 1])
    seg_u, seg_v = np.array([0, 1]), np.array([2, 2])
    off_u, off_v = np.zeros(2), np.array([0.3, -0.3])
    below = [np.array([0, 1]), np.array([], dtype=np.int64)]
    as_they_stand = np.array([0, 1, 0])
    assert ordering.crossings(as_they_stand, seg_u, seg_v, off_u, off_v, below) == 1
    assert ordering.crossings(as_they_stand, seg_u, seg_v, None, None, below) == 0
    order = ordering.order_layers(3, v_layer, seg_u, seg_v, np.arange(3.0), off_u, off_v)
    assert order.tolist() == [1, 0, 0]
    assert ordering.order_layers(3, v_layer, seg_u, seg_v, np.arange(3.0)).tolist() == [0, 1, 0]


def test_the_offsets_sit_on_the_segments_that_touch_the_ports():
    """Entry port 0 feeds element 0 (a group 10 cells wide, its port for this piece at cell 8) directly; element 1
    (a box) feeds element 0's port at cell 1 through a long edge of two dummies: only the last segment of that
    chain ends at a port."""
    connections = [Connection(-1, -1, 0, 7), Connection(1, -1, 0, 3)]
    port_cells = {0: ({7: 8, 3: 1}, {})}
    segments_of = {(2, 0): (0, 0), (1, 0): (1, 3)}  # the chain's three segments: 1→3, 3→4, 4→0
    vertex = {(-1, True): 2, (1, True): 1, (0, False): 0}

    def vertex_of(end: int, entry: bool) -> int:
        return vertex[(end, entry)] if end < 0 else end

    off_u, off_v = ordering.port_offsets(connections, vertex_of, segments_of, port_cells, np.array([10, 5]), 4)
    assert off_u.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert off_v.tolist() == pytest.approx([0.35, 0.0, 0.0, -0.35])
