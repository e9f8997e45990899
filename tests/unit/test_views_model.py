"""The timeline's per-column bucketing and the buffer view's cell maps, against hand-worked layouts."""

from __future__ import annotations

import numpy as np

from explorer.api import open_document
from explorer.schedule.buffer_view import l2_cell_map, tensor_residency, wl0_capacity, wl0_cell_map
from explorer.schedule.timeline_view import column_owners, columns_touching, nice_ticks
from tests.schedules import entry, two_core

A = np.array


def test_longest_workload_wins_its_column_and_long_ones_carry_over():
    # A 0–10, B 10–12, C 12–30, D 30–31 in four columns of 10.
    start, end = A([0, 10, 12, 30.0]), A([10, 12, 30, 31.0])
    assert column_owners(start, end, 0, 40, 4).tolist() == [0, 2, 2, 3]
    important = A([False, True, False, False])
    assert column_owners(start, end, 0, 40, 4, important=important).tolist() == [0, 1, 2, 3]


def test_idle_columns_and_zoomed_windows():
    start, end = A([0, 25.0]), A([5, 27.0])
    assert column_owners(start, end, 0, 40, 4).tolist() == [0, -1, 1, -1]
    assert column_owners(start, end, 20, 30, 5).tolist() == [-1, -1, 1, 1, -1]  # 2 per column: B is 25–27
    assert column_owners(start, end, 100, 200, 5).tolist() == [-1] * 5


def test_workloads_that_never_run_are_not_drawn():
    start, end = A([0, np.nan]), A([10, np.nan])
    assert column_owners(start, end, 0, 20, 2).tolist() == [0, -1]


def test_flagged_columns_and_ticks():
    start, end = A([0, 10, 12, 30.0]), A([10, 12, 30, 31.0])
    flags = A([False, True, False, False])
    assert columns_touching(start, end, flags, 0, 40, 4).tolist() == [False, True, False, False]
    assert nice_ticks(0, 100, 70) == [(0, 0), (14, 20), (28, 40), (42, 60), (56, 80)]


def test_l2_cell_map_paints_owners_overlaps_and_ring_boundaries(write_json):
    d = two_core()
    d["buffersize"] = 160
    d["0"][0]["ring_buffer_info"] = [[0, 80], [80, 160]]
    d["0"][0]["buffer"] = [entry(1, 0, 30), entry(2, 20, 20), entry(3, 70, 20, "weight")]  # 3 wraps at 80 → 0
    doc = open_document(write_json(d))
    s = doc.schedule
    cells = l2_cell_map(s, 0, 16, doc.schedule_analysis.placement)  # 10 bytes per cell
    assert cells.bytes_per_cell == 10
    tensors = [int(s.buf_tensor[o]) if o >= 0 else 0 for o in cells.owner.tolist()]
    # [0,30) tensor 1; [20,40) tensor 2 wins cells 2-3; [70,80) + wrapped [0,10) tensor 3
    assert tensors == [3, 1, 2, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0]
    assert cells.overlap.tolist()[:4] == [True, False, True, False]
    assert sorted(cells.overlaps) == [(1, 2, 20, 30), (1, 3, 0, 10)]
    assert cells.boundaries == [0, 8]


def test_wl0_map_capacity_and_residency(write_json):
    d = two_core()
    d["0"][0]["wl0_buffer"] = [
        {"address": 0, "size": 512, "source": "CORE", "transfer_id": [0]},
        {"address": 256, "size": 1024, "source": "DDR", "transfer_id": [7]},
    ]
    d["0"][0]["buffer"] = [entry(5, 0, 8)]
    d["0"][1]["buffer"] = [entry(5, 0, 8)]
    doc = open_document(write_json(d))
    s = doc.schedule
    assert wl0_capacity(s, 0) == 2048  # furthest byte 1280, rounded up to whole KiB
    cells = wl0_cell_map(s, 0, 8, 2048)  # 256 bytes per cell
    assert cells.owner.tolist() == [0, 1, 1, 1, 1, -1, -1, -1]  # cell 1 is a tie: the later entry wins
    assert cells.overlaps == [(0, 1, 256, 512)] and cells.overlap.tolist()[:3] == [False, True, False]
    assert tensor_residency(s, 0, 5) == (0, 1, 2)
    assert tensor_residency(s, 1, 5) is None
