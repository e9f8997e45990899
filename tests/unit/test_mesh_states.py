"""The mesh finds every core's state at a time in a few array operations (`MeshTimes.states`); each state must be
the one its definition gives core by core: the last workload started by then, running while before its end, else
the next one (not started, idle or waiting on DRAM), else done."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.api import open_document
from explorer.schedule.mesh import BEFORE, DONE, IDLE, RUNNING, WAITING_DRAM, MeshTimes, overlap_rows
from tests.conftest import ROOT, SAMPLE_DATA

FILES = (SAMPLE_DATA / "planted_problems_2x2_stschedule.json", ROOT / "tests/app/data/mesh16_stschedule.json")
DOCUMENTS = {path.name: open_document(path) for path in FILES}


def by_definition(times: MeshTimes, core: int, time: float) -> tuple[str, int]:
    """One core's state, found alone: a search in its own rows, and its next workload's inputs looked up."""
    s = times.s
    rows = s.core_rows(core)
    if not len(rows):
        return IDLE, -1
    start, end = times.start[rows.start : rows.stop], times.end[rows.start : rows.stop]
    k = int(np.searchsorted(start, time, side="right")) - 1
    if k >= 0 and time < end[k]:
        return RUNNING, rows.start + k
    if k + 1 < len(rows):
        row = rows.start + k + 1
        if k < 0:
            return BEFORE, row
        ids = s.in_tid[s.in_ptr[row] : s.in_ptr[row + 1]]
        return (WAITING_DRAM if np.isin(ids, s.dout_tid).any() else IDLE), row
    return DONE, rows.stop - 1


def mesh_times(name: str, sequential: bool = False) -> MeshTimes:
    document = DOCUMENTS[name]
    s, analysis = document.schedule, document.schedule_analysis
    timeline = analysis.timeline
    start = timeline.start_sequential if sequential else timeline.start
    end = timeline.end_sequential if sequential else timeline.end
    return MeshTimes(s, start, end, analysis.l2_bytes, overlap_rows(s, document.problems))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([path.name for path in FILES]), st.booleans(), st.floats(0, 1), st.integers(-2, 2))
def test_every_core_s_state_is_the_one_found_for_it_alone(name, sequential, where, nudge):
    times = mesh_times(name, sequential)
    s = times.s
    # an event time (a workload's start), or next to one, or before and after them all
    at = times.events[min(int(where * times.events.size), times.events.size - 1)] + nudge
    cores = [*s.core_ids.tolist(), 99]  # and a core the file does not have
    found = times.states(cores, float(at))
    for core in cores:
        state = found[core]
        assert (state.state, state.row) == by_definition(times, core, float(at)), (core, at)
        if state.row >= 0:
            assert state.l2_share == float(times.l2_bytes[state.row]) / max(int(s.buffersize), 1)
            assert state.overlap == (state.row in times.overlap_rows)
    assert {found[core].state for core in cores} >= {IDLE}  # the missing core
    assert times.state(cores[0], float(at)) == found[cores[0]]


def test_the_cases_above_meet_every_state():
    """The demo file's playback, a cycle either side of each start, meets all five states (so the test above
    compares each of them)."""
    times = mesh_times("planted_problems_2x2_stschedule.json")
    seen = set()
    for at in (*times.events.tolist(), float(times.events[-1]) + 10**9):
        for nudge in (-1, 0, 1):
            seen |= {state.state for state in times.states(times.s.core_ids.tolist(), at + nudge).values()}
    assert seen == {BEFORE, RUNNING, IDLE, WAITING_DRAM, DONE}


def test_a_step_skips_holes_and_stops_at_the_edge():
    from explorer.schedule.mesh import MeshLayout

    layout = MeshLayout(10**18, 3, {(0, 0): 0, (7, 0): 1, (10**17, 0): 2, (7, 2): 3}, [])
    assert layout.step((0, 0), 1, 0) == (7, 0)
    assert layout.step((7, 0), 1, 0) == (10**17, 0)
    assert layout.step((10**17, 0), 1, 0) is None
    assert layout.step((10**17, 0), -1, 0) == (7, 0)
    assert layout.step((0, 0), -1, 0) is None
    assert layout.step((7, 0), 0, 1) == (7, 2)
    assert layout.step((7, 2), 0, -1) == (7, 0)
    assert layout.step((0, 0), 0, 1) is None
