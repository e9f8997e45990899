"""Pure analyses over a loaded Document. The TUI, the CLI and the exports all call these; none recomputes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from explorer.analysis.buffers import (
    Placement,
    l2_bytes_per_workload,
    l2_problems,
    place_l2_entries,
    wl0_problems,
)
from explorer.analysis.dependencies import Dependencies, dependencies
from explorer.analysis.timeline import Timeline, compute_timeline
from explorer.errors import Problem
from explorer.schedule import Schedule


@dataclass
class ScheduleAnalysis:
    deps: Dependencies
    timeline: Timeline
    placement: Placement
    l2_bytes: np.ndarray  # per workload row
    peak_l2_bytes: int
    peak_l2_row: int
    problems: list[Problem]
    timeline_problems: list[Problem] = field(default_factory=list)  # the format's checks that need the timeline


def analyze_schedule(
    s: Schedule,
    dram_bytes_per_cycle: float | None = None,
    *,
    timeline_checks: Callable[[Timeline], list[Problem]] | None = None,
    overlaps_found: Callable[[list[int]], None] | None = None,
) -> ScheduleAnalysis:
    """The timeline, the buffers' placement and their checks. The timeline (a Python loop) and the format's
    `timeline_checks` run on a second thread beside the buffer checks, whose long numpy calls let go of the
    interpreter: on the 10^6-entry benchmark schedule the two took 0.42-0.63 s one after the other and
    0.33-0.36 s side by side, the load's last step with one CPU idle. `overlaps_found` hears the rows whose L2
    snapshots overlap as soon as they are known, before their problems are written (a big file's incidents
    start reading what they name while the checks go on)."""
    with ThreadPoolExecutor(1, thread_name_prefix="timeline") as beside:
        timed = beside.submit(_timeline_and_checks, s, dram_bytes_per_cycle, timeline_checks)
        placement = place_l2_entries(s)
        used = l2_bytes_per_workload(s)
        problems = l2_problems(s, placement, overlaps_found)
        problems += wl0_problems(s)
        deps, timeline, timeline_problems = timed.result()
    peak_row = int(np.argmax(used)) if used.size else -1
    return ScheduleAnalysis(
        deps=deps,
        timeline=timeline,
        placement=placement,
        l2_bytes=used,
        peak_l2_bytes=int(used[peak_row]) if used.size else 0,
        peak_l2_row=peak_row,
        problems=problems,
        timeline_problems=timeline_problems,
    )


def _timeline_and_checks(
    s: Schedule, dram_bytes_per_cycle: float | None, checks: Callable[[Timeline], list[Problem]] | None
) -> tuple[Dependencies, Timeline, list[Problem]]:
    deps = dependencies(s)
    timeline = compute_timeline(s, deps, dram_bytes_per_cycle)
    return deps, timeline, checks(timeline) if checks is not None else []
