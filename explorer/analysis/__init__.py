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
from explorer.analysis.transfers import transfer_problems
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
    problems = transfer_problems(s, timeline.cycle_rows)
    problems += l2_problems(s, placement)
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


def schedule_summary(s: Schedule, analysis: ScheduleAnalysis) -> dict:
    """The `info` summary of a schedule (issue #2 fixes the keys)."""
    transfer_ids = np.unique(np.concatenate([s.din_tid, s.dout_tid, s.of_tid]))
    return {
        "cores": int(s.core_ids.size),
        "workloads": s.n_workloads,
        "layers": int(np.unique(s.wl_layer).size),
        "transfers": int(transfer_ids.size),
        "dram_reads": int(s.dout_tid.size),
        "dram_writes": int(s.din_tid.size),
        "buffer_size": s.buffersize,
        "makespan": _number(analysis.timeline.makespan),
        "makespan_sequential": _number(analysis.timeline.makespan_sequential),
        "peak_l2_bytes": analysis.peak_l2_bytes,
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 3)
