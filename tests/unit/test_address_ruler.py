"""The address ruler in a zoom (issue #59 item 5): every label exactly 7 columns (a window from 0x0 of an 8 MiB
L2 read `6.1e-05M` and rows started a column or two apart), offsets from the window's start in a zoom of a big
memory, and only the region starts inside the window marked (every later start sat on the last row)."""

from __future__ import annotations

import json

import pytest

from explorer.api import open_document
from explorer.schedule.buffer_view import l2_cell_map as cell_map
from tests.schedules import two_core
from widgets.schedule.buffer_view import ruler_label


@pytest.mark.parametrize(("address", "top", "relative", "text"), [
    (0x1C400, 0x40000, None, "0x1c400"),
    (64, 8 << 20, None, "  0.00M"),
    (5 << 19, 8 << 20, None, "  2.50M"),
    (300 << 20, 512 << 20, None, "   300M"),
    (20 << 30, 32 << 30, None, "    20G"),
    (0x400, 8 << 20, 0, " +0x400"),
    (0x262000 + 0x1c0, 8 << 20, 0x262000, " +0x1c0"),
])  # fmt: skip
def test_every_label_is_seven_columns_and_reads_as_an_address(address, top, relative, text):
    label = ruler_label(address, top, "◆", relative)
    assert label == f"{text}◆│" and len(label) == 9


def test_only_the_region_starts_inside_the_window_are_marked(tmp_path):
    schedule = two_core()
    schedule["buffersize"] = 0x10000
    schedule["0"][0]["ring_buffer_info"] = [[0, 0x4000], [0x8000, 0x10000]]
    path = tmp_path / "regions_stschedule.json"
    path.write_text(json.dumps(schedule))
    s = open_document(path).schedule
    window = cell_map(s, 0, 64, bytes_per_cell=0x40, base=0)  # 0x0-0x1000: the second region starts past it
    assert window.boundaries == [0]
    whole = cell_map(s, 0, 64)
    assert whole.boundaries == [0, 32]
    later = cell_map(s, 0, 64, bytes_per_cell=0x100, base=0x4000)  # 0x4000-0x8000: none starts inside
    assert later.boundaries == []
