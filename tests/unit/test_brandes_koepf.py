"""Brandes-Köpf placement, step by step, on graphs small enough to work out by hand."""

from __future__ import annotations

import numpy as np

from explorer.graph import brandes_koepf as bk
from explorer.graph.layered import Gaps, place_container
from explorer.graph.routing import Connection


def neighbours(total: int, edges: list[tuple[int, int]]) -> tuple[list[list[int]], list[list[int]]]:
    up: list[list[int]] = [[] for _ in range(total)]
    down: list[list[int]] = [[] for _ in range(total)]
    for u, v in edges:
        up[v].append(u)
        down[u].append(v)
    return up, down


def test_a_chain_is_one_straight_column_whatever_the_sizes():
    up, down = neighbours(3, [(0, 1), (1, 2)])
    assert bk.place([[0], [1], [2]], up, down, [5, 3, 7], 2, [False] * 3) == [0.0, 0.0, 0.0]


def test_a_long_edge_and_a_short_branch_are_both_straight_and_their_ends_sit_between():
    # 0 → 1 → 2 → 5 beside 0 → 3 → 4 → 5 (3 and 4 the long edge's dummies): separation (5 + 1) / 2 + 2 = 5
    up, down = neighbours(6, [(0, 1), (1, 2), (2, 5), (0, 3), (3, 4), (4, 5)])
    dummy = [False, False, False, True, True, False]
    centres = bk.place([[0], [1, 3], [2, 4], [5]], up, down, [5, 5, 5, 1, 1, 5], 2, dummy)
    assert centres == [1.5, -1.0, -1.0, 4.0, 4.0, 1.5]


def test_a_fan_out_centres_its_source_over_the_middle_reader():
    up, down = neighbours(4, [(0, 1), (0, 2), (0, 3)])
    assert bk.place([[0], [1, 2, 3]], up, down, [3, 3, 3, 3], 1, [False] * 4) == [4.0, 0.0, 4.0, 8.0]


def test_an_edge_crossing_an_inner_segment_yields_to_it():
    # 1 → 2 is inner (both dummies); 0 → 3 crosses it
    up, _ = neighbours(6, [(0, 3), (1, 2), (2, 4), (3, 5)])
    dummy = [False, True, True, False, False, False]
    assert bk.type1_conflicts([[0, 1], [2, 3], [4, 5]], up, dummy) == {(0, 3)}


def test_alignment_takes_the_median_and_never_crosses_an_earlier_block():
    # layer 1: 2 reads 0 and 1 (medians 0 then 1), 3 reads 0 only: 2 takes 0 first, so 3 (after 2) cannot
    up, _ = neighbours(4, [(0, 2), (1, 2), (0, 3)])
    root = bk.align([[0, 1], [2, 3]], up, set(), 4)
    assert root == [0, 1, 0, 3]
    root = bk.align([[0, 1], [2, 3]], up, {(0, 2)}, 4)  # 0 → 2 in conflict: 2 takes its other median
    assert root == [0, 1, 1, 3]


def test_compaction_packs_blocks_by_half_sizes_and_the_gap():
    # one block of 0 and 2, 1 beside 0, 3 beside 2: 1 must clear 0 by (4 + 2) / 2 + 1 = 4
    xs = bk.compact([[0, 1], [2, 3]], [0, 1, 0, 3], [4, 2, 4, 6], 1)
    assert xs == [0.0, 4.0, 0.0, 6.0]


def test_balance_moves_the_runs_onto_the_narrowest_and_takes_the_middle_two():
    runs = [([0.0, 10.0], True), ([0.0, 4.0], True), ([-4.0, 0.0], False), ([-20.0, 0.0], False)]
    # sizes 2: widths 12, 6, 6, 22; the narrowest is the second (lo -1, hi 5); the right-packed ones end at 5
    assert bk.balance(runs, [[0, 1]], [2, 2]) == [0.0, 4.0]


def test_a_skip_connection_is_drawn_as_a_straight_line():
    # a residual block: x → A → B → C → Add, and x → Add directly: the skip edge's dummies all share one column
    sizes = np.asarray([3, 5, 5, 5, 3])
    layer = np.asarray([0, 1, 2, 3, 4])
    connections = [Connection(a, -1, b, -1) for a, b in [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]]
    placement = place_container(sizes, np.ones(5, dtype=np.int64), layer, np.arange(5), connections, {},
                                Gaps(minor=2, major=2), framed=False)  # fmt: skip
    (cells,) = [cells for key, cells in placement.chains.items() if key == (("e", 0), ("e", 4))]
    assert len(cells) == 3 and len(set(cells)) == 1
    centres = placement.minor + sizes / 2
    assert len({float(c) for c in centres[1:4]}) == 1  # the block's ops in one column too

