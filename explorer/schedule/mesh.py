"""The core mesh at one instant: every core where the scheduler placed it (`xlen` × `ylen`, row-major), and what
it is doing at a time: the workload running (or idle, waiting on DRAM, done), L2 and WL0 occupancy, and whether
an overlap is live there. Graphcore's tile map and AMD's AI-engine array view draw the same picture.

Everything comes from the tables the timeline and the buffer view already use (the analysis's start and end
times, the L2 bytes per snapshot, the overlap rows): a state at a time is one `searchsorted` per core.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct
from explorer.errors import Problem
from explorer.schedule.buffer_view import wl0_capacity
from explorer.schedule.buffers import wl0_bytes_per_workload
from explorer.schedule.model import Schedule

IDLE, RUNNING, WAITING_DRAM, DONE, BEFORE = "idle", "running", "waiting on DRAM", "done", "not started"


@dataclass(frozen=True)
class MeshLayout:
    """Where each core sits: `place[(x, y)] = core`; cores that could not be placed, with why."""

    xlen: int
    ylen: int
    place: dict[tuple[int, int], int]
    unplaced: list[tuple[int, str]]

    def position(self, core: int) -> tuple[int, int] | None:
        return next((xy for xy, c in self.place.items() if c == core), None)


def mesh_layout(s: Schedule) -> MeshLayout:
    """The cores on their mesh (row-major: core = y·xlen + x, as the documented IR numbers them). A mesh whose
    sides are not positive, or cores past `xlen × ylen`, leave cores unplaced (the view says so)."""
    xlen, ylen = int(s.xlen), int(s.ylen)
    place: dict[tuple[int, int], int] = {}
    unplaced: list[tuple[int, str]] = []
    for core in s.core_ids.tolist():
        if xlen <= 0 or ylen <= 0:
            unplaced.append((core, f"the mesh is {xlen}×{ylen}: no place for any core"))
            continue
        x, y = core % xlen, core // xlen
        if core < 0 or y >= ylen:
            unplaced.append((core, f"core {core} is outside the {xlen}×{ylen} mesh (cores 0–{xlen * ylen - 1})"))
        elif (x, y) in place:  # cannot happen with distinct ids; kept for derived schedules
            unplaced.append((core, f"core {core}'s place ({x}, {y}) is taken by core {place[(x, y)]}"))
        else:
            place[(x, y)] = core
    return MeshLayout(max(xlen, 0), max(ylen, 0), place, unplaced)


@dataclass(frozen=True)
class CoreState:
    core: int
    state: str  # RUNNING, IDLE, WAITING_DRAM, DONE, BEFORE
    row: int  # the workload running, else the next one, else the last (-1: the core has none)
    l2_share: float  # of the snapshot before `row` (the buffer view's), of buffersize
    wl0_share: float
    overlap: bool  # an L2 or WL0 overlap in that snapshot


class MeshTimes:
    """Per core, its rows' start and end times (the timeline's, dependency-aware or sequential), the L2 bytes
    per snapshot and the rows with overlaps: the state of every core at a time, without a pass over the file."""

    def __init__(self, s: Schedule, start: np.ndarray, end: np.ndarray, l2_bytes: np.ndarray,
                 overlap_rows: set[int]) -> None:  # fmt: skip
        self.s = s
        self.source = start  # the timeline's own arrays: a switch of its times is seen by identity
        # float64 and contiguous once, so a search for a float time never converts a core's column
        self.start = np.ascontiguousarray(start, dtype=np.float64)
        self.end = np.ascontiguousarray(end, dtype=np.float64)
        self.l2_bytes = l2_bytes
        self.overlap_rows = overlap_rows
        self.wl0_bytes = wl0_bytes_per_workload(s)
        self._wl0_capacity: dict[int, int] = {}
        self._dram_ids = np.sort(s.dout_tid).astype(s.in_tid.dtype) if s.dout_tid.size else s.in_tid[:0]
        # the events a step moves between: every distinct start time, sorted
        known = self.start[~np.isnan(self.start)]
        self.events = distinct(known) if known.size else np.zeros(1)

    def state(self, core: int, time: float) -> CoreState:
        s = self.s
        rows = s.core_rows(core)
        if len(rows) == 0:
            return CoreState(core, IDLE, -1, 0.0, 0.0, False)
        start, end = self.start[rows.start : rows.stop], self.end[rows.start : rows.stop]
        k = int(np.searchsorted(start, time, side="right")) - 1  # the last workload started by `time`
        if k >= 0 and time < end[k]:
            row, state = rows.start + k, RUNNING
        elif k + 1 < len(rows):
            row = rows.start + k + 1
            state = BEFORE if k < 0 else (WAITING_DRAM if self._reads_dram(row) else IDLE)
        else:
            row, state = rows.stop - 1, DONE
        capacity = max(int(s.buffersize), 1)
        return CoreState(core, state, row, float(self.l2_bytes[row]) / capacity,
                         float(self.wl0_bytes[row]) / self._wl0_cap(core), row in self.overlap_rows)  # fmt: skip

    def _wl0_cap(self, core: int) -> int:
        found = self._wl0_capacity.get(core)
        if found is None:
            found = self._wl0_capacity[core] = wl0_capacity(self.s, core)
        return found

    def _reads_dram(self, row: int) -> bool:
        """Whether the workload reads a transfer from DRAM (what a gap before it waits for)."""
        ids = self.s.in_tid[self.s.in_ptr[row] : self.s.in_ptr[row + 1]]
        if not ids.size or not self._dram_ids.size:
            return False
        at = np.minimum(np.searchsorted(self._dram_ids, ids), self._dram_ids.size - 1)
        return bool((self._dram_ids[at] == ids).any())

    def step(self, time: float, delta: int) -> float:
        """The next (delta > 0) or previous event time from `time`: playback moves between workload starts."""
        k = int(np.searchsorted(self.events, time, side="right" if delta > 0 else "left"))
        k = k if delta > 0 else k - 1
        return float(self.events[min(max(k, 0), self.events.size - 1)])


def overlap_rows(s: Schedule, problems: list) -> set[int]:
    """The rows whose snapshots hold an L2 or WL0 overlap (from the overlap problems)."""
    pairs = [(p.refs["core"], p.refs["workload_id"]) for p in problems
             if p.code in ("l2-overlap", "wl0-overlap") and "core" in p.refs and "workload_id" in p.refs]  # fmt: skip
    if not pairs:
        return set()
    rows = s.rows_of([c for c, _ in pairs], [w for _, w in pairs])
    return set(rows[rows >= 0].tolist())


def mesh_problems(s: Schedule) -> list[Problem]:
    """A core the mesh has no place for (past `xlen × ylen`, or a mesh with a side below 1): one warning each,
    so the problems list says what the mesh view cannot draw."""
    if s.core_names or s.core_ids.size <= 1:  # a derived schedule's lanes are not on a mesh
        return []
    layout = mesh_layout(s)
    return [Problem("warning", "mesh-placement", f"{s.core_label(core)}: {why}", f'$["{core}"]', {"core": core})
            for core, why in layout.unplaced[:100]]  # fmt: skip
