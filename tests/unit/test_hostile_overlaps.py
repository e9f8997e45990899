"""Overlaps that grow faster than the file (issue #60 items 4 and 6): 64,000 entries on the same bytes are
2 billion pairs, counted exactly and listed up to the cap; one tensor listed 64,000 times in a snapshot (no pair
at all) no longer makes the sweep quadratic; the rooms of the incidents are searched in bounded batches."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.api import open_document
from explorer.schedule import pressure, rooms
from explorer.schedule.incidents import incidents_of
from explorer.schedule.overlap import count_overlapping_pairs, overlapping_pairs
from tests.conftest import ROOT
from tests.hostile import overlapping_entries_schedule

intervals = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(0, 20), st.integers(0, 5)), max_size=40
)


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_the_count_is_the_brute_force_count(items):
    group, lo, length, owner = (np.array([i[k] for i in items], dtype=np.int64) for k in range(4))
    hi = lo + length
    expected = sum(
        1
        for a in range(len(items))
        for b in range(a + 1, len(items))
        if group[a] == group[b] and owner[a] != owner[b] and min(hi[a], hi[b]) > max(lo[a], lo[b])
    )
    assert count_overlapping_pairs(group, lo, hi, owner) == expected
    assert len(overlapping_pairs(group, lo, hi, owner)[0]) == expected


def test_exact_counts_of_the_hostile_shapes():
    n = 64_000
    same = np.zeros(n, dtype=np.int64)
    lo, hi = np.full(n, 64), np.full(n, 320)
    assert count_overlapping_pairs(same, lo, hi, np.arange(n)) == n * (n - 1) // 2
    assert count_overlapping_pairs(same, lo, hi, same) == 0
    pairs, truncated = overlapping_pairs(same, lo, hi, same)  # 2 billion candidates of one owner: not walked
    assert pairs == [] and not truncated
    pairs, truncated = overlapping_pairs(same, lo, hi, np.arange(n), limit=1_000)
    assert len(pairs) == 1_000 and truncated
    assert pairs[:3] == [(0, 0, 1, 64, 320), (0, 1, 2, 64, 320), (0, 0, 2, 64, 320)]  # the sweep's order


def test_the_rooms_past_the_budget_are_left_unsaid(tmp_path, monkeypatch):
    path = overlapping_entries_schedule(tmp_path / "crowded_stschedule.json", 200)
    def explained(document):
        incidents = incidents_of(document)
        pressure.pressure_of(document).explain(incidents)
        return incidents

    full = explained(open_document(path))
    monkeypatch.setattr(rooms, "PIECES_PER_ENTRY", 0)
    monkeypatch.setattr(rooms, "PIECES_PER_BATCH", 1_000)  # about two rooms' snapshots
    some = explained(open_document(path))
    assert [(i.core, i.tensor_ids) for i in some] == [(i.core, i.tensor_ids) for i in full]

    def said(incidents):
        return [i.suggestion is not None or i.shortfall_bytes is not None for i in incidents]

    assert said(some)[0] and sum(said(some)) < sum(said(full))
    assert all(full_said for budget_said, full_said in zip(said(some), said(full), strict=True) if budget_said)
    assert all(a.suggestion == b.suggestion for a, b in zip(some, full, strict=True) if a.suggestion)


def test_check_of_64000_overlapping_entries_fits_under_a_2_gib_limit(tmp_path):
    """22 MB of L2 entries all on the same bytes: `check` took 1.4 GB; now a few times the file."""
    import resource

    path = overlapping_entries_schedule(tmp_path / "overlaps_stschedule.json", 64_000)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run([sys.executable, "-m", "explorer", "check", str(path)], cwd=ROOT, capture_output=True,
                          text=True, preexec_fn=limit, env={"PATH": "", "IR_EXPLORER_CACHE": "off"},
                          timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "2,047,968,000 L2 overlaps in all; the first 10,000 are listed" in done.stdout


def test_problems_past_the_cap_are_counted_without_being_made(tmp_path):
    """One workload reading 300,000 transfers nobody produces: the first 10,000 are listed and the rest counted,
    without a message made for each (15 million made `info` of a 139 MB file take 200 s)."""
    import json

    from tests.schedules import two_core

    schedule = two_core()
    schedule["0"][0]["ifmap"][0]["transfer_id"] = [0, *range(100_000, 400_000)]
    path = tmp_path / "unresolved_stschedule.json"
    path.write_text(json.dumps(schedule))
    problems = open_document(path).problems
    listed = [p for p in problems if p.code == "unresolved-transfer"]
    [note] = [p for p in problems if p.code == "unresolved-transfer-truncated"]
    assert len(listed) == 10_000 and listed[-1].refs["transfer_id"] == 109_999
    assert note.message == "300000 unresolved-transfer problems; the first 10000 are listed"
