"""Each step of the layered layout on a small hand-made case with its exact answer (issue #55, dagre's way):
switching any one step off fails a test here or in the tests it names."""

from __future__ import annotations

import numpy as np

from explorer.graph import layering, ordering, placement, routing
from explorer.graph.layered import Gaps, Placement, place_container
from explorer.graph.relayout import keeps, keeps_rows


def ends(total: int, edges: list[tuple[int, int]]) -> tuple[ordering.Ends, ordering.Ends]:
    u = np.asarray([a for a, _ in edges])
    v = np.asarray([b for _, b in edges])
    return ordering.neighbour_ends(total, u, v, np.zeros(u.size), np.zeros(u.size))


def test_layering_puts_each_box_a_layer_below_its_deepest_source_and_pulls_sources_down():
    """a→b→c and a weight w read by c alone: w sits right above c, not in the first layer."""
    layer = layering.longest_path_layers(4, np.array([0, 1, 3]), np.array([1, 2, 2]), np.arange(4))
    assert layer.tolist() == [0, 1, 2, 1]


def test_a_sweep_sorts_a_layer_by_barycentre_and_keeps_the_unconnected_in_place():
    """Upper layer 0, 1, 2; the lower layer 3 (reads 2), 4 (reads nothing), 5 (reads 0): 4 keeps its index, 5
    and 3 take the others in barycentre order."""
    position = np.array([0, 1, 2, 0, 1, 2])
    up, _ = ends(6, [(2, 3), (0, 5)])
    layer = [3, 4, 5]
    ordering.sort_by_barycentre(layer, position, up, bias_right=False)
    assert layer == [5, 4, 3]
    assert position[[3, 4, 5]].tolist() == [2, 1, 0]


def test_transposition_swaps_neighbours_while_that_removes_crossings():
    """0→3 and 1→2 cross; swapping 0 and 1 (the first layer it meets) uncrosses them, then 2 and 3 stay."""
    members = [[0, 1], [2, 3]]
    position = np.array([0, 1, 0, 1])
    up, down = ends(4, [(0, 3), (1, 2)])
    ordering.transpose(members, position, up, down)
    assert members == [[1, 0], [2, 3]]
    assert position.tolist() == [1, 0, 0, 1]


def test_the_ordering_step_uncrosses_two_crossed_edges():
    """0→3 and 1→2 as the file orders them cross once; the step (sweeps, then transposition) ends at none."""
    v_layer = np.array([0, 0, 1, 1])
    u, v = np.array([0, 1]), np.array([3, 2])
    slot = ordering.order_layers(4, v_layer, u, v, np.arange(4.0))
    below = [np.array([0, 1]), np.array([], dtype=np.int64)]
    assert ordering.crossings(slot, u, v, None, None, below) == 0


def test_each_round_ends_with_a_transposition_where_the_sweeps_are_stuck():
    """Layers 0-3, 4-7, 8-9 with 0→6, 2→5, 3→6, 3→7, 6→9: in the file's order 0→6 crosses 2→5, and no sweep mends
    it (4 reads nothing and holds its index, so 5 and 6 keep theirs); sweeps with one transposition at the end
    left that crossing. Transposing each round (as dot's mincross does) reaches none: 3 before 2 above, 6 and 7
    before 5 below."""
    v_layer = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    u, v = np.array([0, 2, 3, 3, 6]), np.array([6, 5, 6, 7, 9])
    slot = ordering.order_layers(10, v_layer, u, v, np.arange(10.0))
    assert slot.tolist() == [0, 1, 3, 2, 0, 3, 1, 2, 0, 1]
    below = [np.flatnonzero(v_layer[u] == k) for k in range(3)]
    assert ordering.crossings(slot, u, v, None, None, below) == 0


def test_tracks_prefer_the_order_that_crosses_less():
    """Net 0 drops at cells 4 and 10 from a source at 0; net 1 rises from 6 to drop at 2. Net 0 above: its drop
    at 4 and net 1's rise at 6 both cross (2); net 1 above: only net 1's drop at 2 crosses net 0's run (1). So
    net 1 goes above."""
    nets = [{"span": (0, 10), "bottoms": [4, 10], "top": 0}, {"span": (2, 6), "bottoms": [2], "top": 6}]
    below: list[list[int]] = [[], []]
    above_count = [0, 0]
    routing.prefer_fewer_crossings(nets, below, above_count)
    assert below == [[], [0]] and above_count == [1, 0]


def test_a_kept_place_wins_and_a_dummy_makes_room_for_it():
    """One layer: a box (2 cells), a dummy, a box wanted at 4. The dummy moves left of the wanted box rather
    than pushing it; the first box moves left of the dummy."""
    coord = placement.settle(np.array([0, 1, 2]), np.array([0, 0, 0]), np.array([2, 1, 2]), 1, np.array([0, 3, 5]),
                             np.array([np.nan, np.nan, 4.0]))  # fmt: skip
    assert coord.tolist() == [-1, 2, 4]


def test_a_cached_placement_is_reused_only_where_it_keeps_the_wanted_places():
    cached = Placement(minor=np.array([0, 5]), major=np.array([0, 9]), minor_size=8, major_size=12)
    assert keeps(cached, None)
    assert keeps(cached, np.array([np.nan, 5.0]))
    assert not keeps(cached, np.array([np.nan, 6.0]))  # the second box was wanted a cell further right
    cached.chains = {(("e", 0), ("e", 1)): [3]}
    assert not keeps(cached, np.array([0.0, 5.0]), {(("e", 0), ("e", 1)): [2]})  # its long edge moved
    assert keeps_rows(cached, np.array([0, 1]), np.array([0.0, 9.0]), None)
    assert not keeps_rows(cached, np.array([0, 1]), np.array([0.0, 10.0]), None)  # a row above moved up


def test_placement_centres_a_fan_out_over_its_middle_reader_and_balances_a_skip():
    """Brandes-Köpf as place_container uses it: a source of 3 cells over three readers of 5 sits centred on the
    middle one (a packing from the left would put it over the first); in a residual block x → A → B → C → Add
    with x → Add, the chain is one column and x and Add sit between it and the skip edge's straight column."""
    from explorer.graph.layered import Gaps, place_container
    from explorer.graph.routing import Connection

    fan = [Connection(0, -1, b, -1) for b in (1, 2, 3)]
    found = place_container(np.asarray([3, 5, 5, 5]), np.ones(4, dtype=np.int64), np.asarray([0, 1, 1, 1]),
                            np.arange(4), fan, {}, Gaps(minor=2, major=2), framed=False)  # fmt: skip
    assert found.minor.tolist() == [9, 1, 8, 15]
    block = [Connection(a, -1, b, -1) for a, b in [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]]
    found = place_container(np.asarray([3, 5, 5, 5, 3]), np.ones(5, dtype=np.int64), np.arange(5), np.arange(5),
                            block, {}, Gaps(minor=2, major=2), framed=False)  # fmt: skip
    assert found.minor.tolist() == [4, 1, 1, 1, 4]
    assert found.chains[(("e", 0), ("e", 4))] == [8, 8, 8]


def test_one_line_boxes_leave_one_row_where_nothing_turns_and_three_where_a_fork_does():
    """One-line boxes (major gap 1): a straight drop needs its arrowhead's row only, so a chain takes rows 1, 3, 5
    (2 rows a box, where the gap of 2 made it 1, 4, 7), each edge the one cell of its arrowhead; a fork turns on a
    track, so its gap keeps the stem, the track and the arrows' row (rows 1 and 5)."""
    from explorer.graph.routing import Connection

    chain = [Connection(0, -1, 1, -1), Connection(1, -1, 2, -1)]
    ones = np.ones(3, dtype=np.int64)
    found = place_container(np.asarray([3, 3, 3]), ones, np.arange(3), np.arange(3), chain, {},
                            Gaps(minor=1, major=1), framed=False)  # fmt: skip
    assert found.major.tolist() == [1, 3, 5]
    assert list(found.routes.values()) == [[(2, 2), (2, 2)], [(2, 4), (2, 4)]]
    found = place_container(np.asarray([3, 3, 3]), ones, np.arange(3), np.arange(3), chain, {},
                            Gaps(minor=1, major=2), framed=False)  # fmt: skip
    assert found.major.tolist() == [1, 4, 7]
    fork = [Connection(0, -1, 1, -1), Connection(0, -1, 2, -1)]
    found = place_container(np.asarray([3, 3, 3]), ones, np.asarray([0, 1, 1]), np.arange(3), fork, {},
                            Gaps(minor=1, major=1), framed=False)  # fmt: skip
    assert found.major.tolist() == [1, 5, 5]
    assert found.routes[fork[0]] == [(4, 2), (4, 3), (2, 3), (2, 4)]
