"""The refs a schedule's items go by (explorer/schedule/refs.py): formats build them, views read them."""

from __future__ import annotations

from explorer.schedule.refs import entry_of, entry_ref, workload_row


def test_a_workload_and_each_of_its_parts_name_their_row():
    assert workload_row(("workload", 7)) == 7
    assert workload_row(("ifmap", 7, 0)) == 7
    assert workload_row(("buffer-entry", 7, 3)) == 7
    assert workload_row(("core", 1)) is None  # a core is no workload
    assert workload_row(("workload", "7")) is None  # a row is an int
    assert workload_row("workload") is None


def test_an_entry_ref_says_its_row_entry_and_memory_both_ways():
    assert entry_of(("buffer-entry", 7, 3)) == (7, 3, "l2")
    assert entry_of(("wl0-entry", 2, 0)) == (2, 0, "wl0")
    assert entry_of(("workload", 7)) is None
    assert entry_ref(7, 3) == ("buffer-entry", 7, 3)
    assert entry_ref(2, 0, "wl0") == ("wl0-entry", 2, 0)
    assert entry_of(entry_ref(5, 1, "wl0")) == (5, 1, "wl0")
