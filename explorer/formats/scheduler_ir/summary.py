"""The `info` summary of a Gemini schedule: its keys are public (README, tests and scripts read them)."""

from __future__ import annotations

import numpy as np

from explorer.arrays import distinct
from explorer.models.schedule import Schedule
from explorer.schedule.analysis import ScheduleAnalysis


def schedule_summary(s: Schedule, analysis: ScheduleAnalysis) -> dict:
    """The `info` summary of a schedule (issue #2 fixes the keys)."""
    transfer_ids = distinct(np.concatenate([s.din_tid, s.dout_tid, s.of_tid]))
    return {
        "cores": int(s.core_ids.size),
        "workloads": s.n_workloads,
        "layers": int(distinct(s.wl_layer).size),
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
