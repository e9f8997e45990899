"""Pure analyses over a loaded Document. The TUI, the CLI and the exports all call these; none recomputes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.errors import Problem
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import (
    Placement,
    l2_bytes_per_workload,
    l2_problems,
    place_l2_entries,
    wl0_problems,
)
from explorer.schedule.dependencies import Dependencies, dependencies
from explorer.schedule.mesh import mesh_problems
from explorer.schedule.timeline import PendingTimeline, Timeline, start_timeline


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
    cached: dict[str, Any] = field(default_factory=dict, repr=False)  # worked out when first asked (pressure.py)


def analyze_schedule(
    s: Schedule,
    dram_bytes_per_cycle: float | None = None,
    *,
    timeline_checks: Callable[[PendingTimeline], list[Problem]] | None = None,
    overlaps_found: Callable[[list[int]], None] | None = None,
    elsewhere: Callable[..., Future] | None = None,
) -> ScheduleAnalysis:
    """The timeline, the buffers' placement and their checks. With `elsewhere` (a worker pool's submit), the
    timeline's topological pass (a Python loop) runs in a worker process while the buffer checks run here; the
    format's `timeline_checks` come last and get the timeline as a `PendingTimeline`, waited for only where
    they need it. Everything here runs on one thread: on the 10^6-entry benchmark schedule the format's checks
    (Python) beside the buffer checks (numpy) on a second thread took 0.38 s together, one after the other
    0.28 s (medians of 6 interleaved runs): each numpy call waited for the interpreter the checks held. `overlaps_found`
    hears the rows whose L2 snapshots overlap as soon as they are known, before their problems are written (a
    big file's incidents start reading what they name while the checks go on)."""
    deps = dependencies(s)
    pending = start_timeline(s, deps, dram_bytes_per_cycle, elsewhere)
    placement = place_l2_entries(s)
    used = l2_bytes_per_workload(s)
    problems = l2_problems(s, placement, overlaps_found)
    problems += wl0_problems(s)
    problems += mesh_problems(s)
    timeline_problems = timeline_checks(pending) if timeline_checks is not None else []
    peak_row = int(np.argmax(used)) if used.size else -1
    return ScheduleAnalysis(
        deps=deps,
        timeline=pending.result(),
        placement=placement,
        l2_bytes=used,
        peak_l2_bytes=int(used[peak_row]) if used.size else 0,
        peak_l2_row=peak_row,
        problems=problems,
        timeline_problems=timeline_problems,
    )
