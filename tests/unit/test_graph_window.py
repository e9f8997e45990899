"""Where the screen's window over a layout goes (explorer/graph/window.py), on hand-made boxes with exact answers:
the selection kept in view, the room closed up after a group closed, the first screen over the reading path."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from explorer.graph import window


def boxes(x: list[int], y: list[int], w: list[int], h: list[int], width: int, height: int, direction: str = "TB"):
    """A stand-in for a Layout: the fields the window functions read."""
    visible = SimpleNamespace(node_item=np.arange(len(x)), item_kind=np.zeros(len(x), dtype=np.int64))
    return SimpleNamespace(x=np.asarray(x), y=np.asarray(y), w=np.asarray(w), h=np.asarray(h), width=width,
                           height=height, direction=direction, visible=visible)  # fmt: skip


def test_a_graph_that_fits_is_centred_across_and_top_aligned():
    layout = boxes([10], [5], [20], [4], width=60, height=20)
    assert window.on_selection(layout, 0, (7, 3), width=80, body=24) == (-10, 0)


def test_a_box_already_in_view_keeps_the_window_and_one_out_of_view_is_centred():
    layout = boxes([10, 300], [5, 200], [20, 20], [4, 4], width=400, height=300)
    assert window.on_selection(layout, 0, (0, 0), width=80, body=24) == (0, 0)
    # the far box: centred on it (its centre 310, 202), within the layout
    assert window.on_selection(layout, 1, (0, 0), width=80, body=24) == (270, 190)


def test_keep_moves_the_window_only_as_far_as_the_boxes_corner_needs():
    layout = boxes([100], [50], [20], [4], width=400, height=300)
    assert window.on_selection(layout, 0, (90, 40), width=80, body=24, keep=True) == (90, 40)  # corner in view
    assert window.on_selection(layout, 0, (0, 0), width=80, body=24, keep=True) == (40, 30)  # just in view


def test_after_a_close_the_window_moves_back_over_the_boxes():
    layout = boxes([0], [0], [10], [4], width=100, height=40)
    assert window.closed_up(layout, (60, 30), width=80, body=24) == (20, 16)  # no empty room past the right edge
    small = boxes([0], [0], [10], [4], width=50, height=10)
    assert window.closed_up(small, (60, 30), width=80, body=24) == (0, 0)  # all of it fits: from the top left


def test_the_first_screen_takes_the_reading_path_while_it_fits(monkeypatch):
    # the input at the top, then a box below it, then one too far down to fit with it
    layout = boxes([40, 40, 40], [0, 10, 100], [10, 10, 10], [4, 4, 4], width=200, height=200)
    monkeypatch.setattr(window, "reading_path", lambda model, count: [0, 1, 2])
    ox, oy = window.at_start(None, layout, 0, width=80, body=24)  # type: ignore[arg-type]
    assert (ox, oy) == (5, 0)  # centred across the first two boxes (40..50), the input's row at the top


def test_the_first_screen_does_not_cut_the_box_beside_the_input_s_first_op(monkeypatch):
    """Issue #74, item 6: at 80 columns the window centred on the path (an input and its first op, 40..60) cut the
    box beside the first op in half; the left edge moves to that box's, the path kept whole."""
    layout = boxes([45, 40, 10, 100], [0, 6, 6, 6], [10, 20, 30, 20], [4, 4, 4, 4], width=200, height=40)
    monkeypatch.setattr(window, "reading_path", lambda model, count: [0, 1])
    centred = (40 + 60) // 2 - 80 // 2  # 10: where the window went before, the side box [10, 40) whole already
    assert window.at_start(None, layout, 0, width=80, body=24)[0] == centred
    layout.x[2] = 0  # the side box now [0, 30): centred at 10 it was cut; moved to 0 it is whole
    assert window.fewest_cut(layout, 10, 0, 80, 24, 40, 60) == 0
    assert window.at_start(None, layout, 0, width=80, body=24)[0] == 0
    layout.x[2] = -30  # too far left to show with the path: [x0, x1) stays inside, the box stays cut
    layout.x[3] = 85  # and [85, 105) is cut at the right edge 90 unless the window moves to 25
    assert window.fewest_cut(layout, 10, 0, 80, 24, 40, 60) == 25
