"""The memory map's data: bands (a tensor over the consecutive snapshots it keeps its place), overlaps, ring
regions and the painted pixels, checked against planted files."""

from __future__ import annotations

import copy
import json

import numpy as np

from explorer.api import open_document
from explorer.schedule.memory_map import FREE, memory_map, paint
from tests.conftest import SAMPLE_DATA
from tests.unit.test_incidents import CLEAN, entry, planted


def test_a_misplaced_tensor_is_one_band_over_its_snapshots_and_its_collisions_are_red(tmp_path):
    path, _, _ = planted(tmp_path)
    document = open_document(path)
    s = document.schedule
    m = memory_map(s, 0, "l2", document.schedule_analysis.placement)
    mine = np.flatnonzero(m.tensor == 77777)
    assert mine.size == 1
    band = int(mine[0])
    assert (m.first[band], m.last[band], m.lo[band], m.hi[band]) == (2, 4, 6144, 8192)
    assert set(m.overlap_step.tolist()) == {2, 3, 4}
    assert (m.overlap_lo >= 6144).all() and (m.overlap_hi <= 8192).all()
    # every byte piece of the core (an entry, or the two halves of a wrapped one) is in exactly one band
    rows = s.core_rows(0)
    placement = document.schedule_analysis.placement
    pieces = int(((placement.row >= rows.start) & (placement.row < rows.stop)).sum())
    assert int((m.last - m.first + 1).sum()) == pieces
    assert m.used.tolist() == document.schedule_analysis.l2_bytes[rows.start : rows.stop].tolist()
    assert m.peak_step == int(np.argmax(m.used))
    assert m.bands_at(3).tolist() == sorted(m.bands_at(3).tolist(), key=lambda b: m.lo[b])
    assert m.band_of(3, 77777, 6144) == band


def test_a_moved_tensor_starts_a_new_band(tmp_path):
    doc = json.loads(CLEAN.read_text())
    moved = copy.deepcopy(doc)
    for k, workload in enumerate(moved["0"][2:6]):
        workload["buffer"].append(entry(55555, 16000 if k < 2 else 18000, 512, new=k in (0, 2)))
    path = tmp_path / "moved_stschedule.json"
    path.write_text(json.dumps(moved))
    document = open_document(path)
    m = memory_map(document.schedule, 0, "l2", document.schedule_analysis.placement)
    mine = np.flatnonzero(m.tensor == 55555)
    assert [(int(m.first[b]), int(m.last[b]), int(m.lo[b])) for b in mine] == [(2, 3, 16000), (4, 5, 18000)]


def test_wl0_bands_and_a_duplicate_entry_overlapping_itself():
    document = open_document(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
    m = memory_map(document.schedule, 2, "wl0")
    assert m.memory == "wl0" and (m.kind == -1).all() and m.ring == []
    assert m.overlap_step.tolist() == [4]  # the planted duplicated WL0 entry of core 2
    l2 = memory_map(document.schedule, 0, "l2", document.schedule_analysis.placement)
    assert {(lo, hi) for _, _, lo, hi in l2.ring} == {(0, 0x5000), (0x5000, 0x7000)}


def test_painting_puts_each_band_and_each_overlap_where_they_are(tmp_path):
    path, _, _ = planted(tmp_path)
    document = open_document(path)
    m = memory_map(document.schedule, 0, "l2", document.schedule_analysis.placement)
    pixels = paint(m, 0, m.steps, 0, 16384, m.steps, 64)  # one column a step, 256 bytes a pixel
    band = int(np.flatnonzero(m.tensor == 77777)[0])
    assert (pixels.band[6144 // 256 : 8192 // 256, 2] == band).all()  # the newest placement is on top
    assert pixels.overlap[6144 // 256 : 8192 // 256, 2:5].any(axis=0).all() and not pixels.overlap[:, :2].any()
    assert (pixels.band[:, 0] != FREE).any()
    zoomed = paint(m, 2, 3, 6144, 8192, 1, 8)  # a window: one step, the tensor's bytes
    assert (zoomed.band == band).all()
