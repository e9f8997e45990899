"""The core mesh at one instant: every core where the scheduler placed it (`xlen` × `ylen`, row-major), and what
it is doing at a time: the workload running (or idle, waiting on DRAM, done), L2 and WL0 occupancy, and whether
an overlap is live there. Graphcore's tile map and AMD's AI-engine array view draw the same picture.

Everything comes from the tables the timeline and the buffer view already use (the analysis's start and end
times, the L2 bytes per snapshot, the overlap rows): every core's state at a time is one `searchsorted` in a
per-row key of (core, start), made once.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from explorer.arrays import distinct
from explorer.errors import Problem
from explorer.models.schedule import Schedule
from explorer.schedule.buffer_view import wl0_capacity
from explorer.schedule.buffers import wl0_bytes_per_workload

IDLE, RUNNING, WAITING_DRAM, DONE, BEFORE = "idle", "running", "waiting on DRAM", "done", "not started"


MAX_SIDE = 4096  # no accelerator's mesh is wider: a side past it is shown only as far as its cores reach


@dataclass(frozen=True)
class MeshLayout:
    """Where each core sits: `place[(x, y)] = core`; cores that could not be placed, with why. `xlen` × `ylen` is
    the mesh drawn: the declared one, or, where a declared side passes MAX_SIDE, that side as far as its cores
    reach (`declared` then says what the file declared)."""

    xlen: int
    ylen: int
    place: dict[tuple[int, int], int]
    unplaced: list[tuple[int, str]]
    declared: tuple[int, int] | None = None
    _lines: dict[tuple[int, int], list[int]] = field(default_factory=dict, repr=False, compare=False)

    def position(self, core: int) -> tuple[int, int] | None:
        return next((xy for xy, c in self.place.items() if c == core), None)

    def step(self, cell: tuple[int, int], dx: int, dy: int) -> tuple[int, int] | None:
        """The nearest placed cell from `cell` in the direction (dx, dy) along its row or column, skipping holes;
        None at the edge. A binary search in that line's sorted places: the same cost on any mesh shape."""
        x, y = cell
        across = dx != 0
        key = (0, y) if across else (1, x)
        line = self._lines.get(key)
        if line is None:
            line = sorted(px if across else py for px, py in self.place if (py == y if across else px == x))
            self._lines[key] = line
        here = x if across else y
        if dx > 0 or dy > 0:
            k = bisect.bisect_right(line, here)
            found = line[k] if k < len(line) else None
        else:
            k = bisect.bisect_left(line, here) - 1
            found = line[k] if k >= 0 else None
        if found is None:
            return None
        return (found, y) if across else (x, found)


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
    xlen, ylen = max(xlen, 0), max(ylen, 0)
    if xlen <= MAX_SIDE and ylen <= MAX_SIDE:
        return MeshLayout(xlen, ylen, place, unplaced)
    shown_x = xlen if xlen <= MAX_SIDE else max((x for x, _ in place), default=-1) + 1
    shown_y = ylen if ylen <= MAX_SIDE else max((y for _, y in place), default=-1) + 1
    return MeshLayout(max(shown_x, 1), max(shown_y, 1), place, unplaced, declared=(xlen, ylen))


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
        self._key: np.ndarray | None = None  # per row, (core, start) as one sorted number (`_keys`)
        self._dram: np.ndarray | None = None  # per row, whether it reads from DRAM (`_reads_dram`)

    def state(self, core: int, time: float) -> CoreState:
        return self.states([core], time)[core]

    def states(self, cores: list[int], time: float) -> dict[int, CoreState]:
        """Each core's state at `time`, found for all of them in a few array operations: a frame of 64 cells
        made one search per core, and each search let go of the interpreter, which a thread of this process
        (the graph's build) then kept for up to 5 ms (frames took 33 ms while it ran, 1.3 ms after)."""
        s = self.s
        if not s.core_ids.size:
            return {core: CoreState(core, IDLE, -1, 0.0, 0.0, False) for core in cores}
        asked = np.asarray(cores, dtype=np.int64)
        ranks = np.minimum(np.searchsorted(s.core_ids, asked), s.core_ids.size - 1)
        lo, hi = s.core_ptr[ranks], s.core_ptr[ranks + 1]
        known = (s.core_ids[ranks] == asked) & (hi > lo)  # a core with workloads
        key, width = self._keys()
        started = int(np.searchsorted(self.events, time, side="right"))  # the event times at or before `time`
        # the last row of each core with a start at or before `time`: its key is below (rank, started)
        last = np.searchsorted(key, ranks * width + started, side="left") - 1
        last = np.where(last >= lo, last, -1)
        running = (last >= 0) & (time < self.end[np.maximum(last, 0)])
        after = np.where(last >= 0, last + 1, lo)  # the next workload, if the core has one
        row = np.where(running, last, np.where(after < hi, after, hi - 1))
        state = np.where(running, 1, np.where(after < hi, np.where(last < 0, 2, 3), 4))
        dram = self._reads_dram()
        capacity = max(int(s.buffersize), 1)
        out: dict[int, CoreState] = {}
        for k, core in enumerate(cores):
            r = int(row[k])
            if not known[k]:
                out[core] = CoreState(core, IDLE, -1, 0.0, 0.0, False)
                continue
            code = int(state[k])
            word = (RUNNING if code == 1 else BEFORE if code == 2 else DONE if code == 4
                    else WAITING_DRAM if dram[r] else IDLE)  # fmt: skip
            out[core] = CoreState(core, word, r, float(self.l2_bytes[r]) / capacity,
                                  float(self.wl0_bytes[r]) / self._wl0_cap(core), r in self.overlap_rows)  # fmt: skip
        return out

    def _wl0_cap(self, core: int) -> int:
        found = self._wl0_capacity.get(core)
        if found is None:
            found = self._wl0_capacity[core] = wl0_capacity(self.s, core)
        return found

    def _keys(self) -> tuple[np.ndarray, int]:
        """Per row, (its core's rank, the rank of its start among the event times) as one sorted integer
        (rank × width + time rank; a start not known counts as after every event), and the width."""
        if self._key is None:
            s = self.s
            width = self.events.size + 1
            start = np.where(np.isnan(self.start), np.inf, self.start)
            time_rank = np.searchsorted(self.events, start, side="left")
            core_rank = np.repeat(np.arange(s.core_ids.size, dtype=np.int64), np.diff(s.core_ptr))
            self._key = core_rank * width + time_rank
        return self._key, self.events.size + 1

    def _reads_dram(self) -> np.ndarray:
        """Per row, whether the workload reads a transfer from DRAM (what a gap before it waits for)."""
        if self._dram is None:
            s = self.s
            hits = np.isin(s.in_tid, self._dram_ids)
            if not hits.any():
                self._dram = np.zeros(s.n_workloads, bool)
            else:  # reduceat gives a row without inputs its next entry (or the last): such rows read nothing
                counts = np.add.reduceat(hits.astype(np.int64), np.minimum(s.in_ptr[:-1], hits.size - 1))
                self._dram = (counts > 0) & (np.diff(s.in_ptr) > 0)
        return self._dram

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
    problems = [Problem("warning", "mesh-placement", f"{s.core_label(core)}: {why}", f'$["{core}"]', {"core": core})
                for core, why in layout.unplaced[:100]]  # fmt: skip
    if layout.declared is not None:
        xlen, ylen = layout.declared
        where = "$.xlen" if xlen > MAX_SIDE else "$.ylen"
        problems.append(Problem("warning", "mesh-size", f"the file declares a {xlen:,}×{ylen:,} mesh for "
                                f"{s.core_ids.size:,} cores (a side over {MAX_SIDE:,}): the mesh view shows the "
                                f"{layout.xlen:,}×{layout.ylen:,} that holds them", where))  # fmt: skip
    return problems
