"""Pure analyses over a loaded Document. The TUI, the CLI and the exports all call these; none recomputes."""

from __future__ import annotations

from dataclasses import dataclass

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


def analyze_schedule(s: Schedule, dram_bytes_per_cycle: float | None = None) -> ScheduleAnalysis:
    deps = dependencies(s)
    timeline = compute_timeline(s, deps, dram_bytes_per_cycle)
    placement = place_l2_entries(s)
    used = l2_bytes_per_workload(s)
    problems = l2_problems(s, placement)
    problems += wl0_problems(s)
    peak_row = int(np.argmax(used)) if used.size else -1
    return ScheduleAnalysis(
        deps=deps,
        timeline=timeline,
        placement=placement,
        l2_bytes=used,
        peak_l2_bytes=int(used[peak_row]) if used.size else 0,
        peak_l2_row=peak_row,
        problems=problems,
    )
