"""When each workload runs: the dependency-aware estimate, the sequential one, and the critical path.

The IR carries durations, not start times. Dependency-aware: a workload starts when the previous workload on
its core and every producer of its inputs have finished (DRAM transfers cost nothing unless a bandwidth is
given). Sequential: each core runs back to back, ignoring other cores.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from explorer.models.schedule import Schedule
from explorer.schedule.dependencies import Dependencies
from explorer.worker_pool import WorkerDied


@dataclass
class Timeline:
    start: np.ndarray
    end: np.ndarray
    makespan: float
    start_sequential: np.ndarray
    end_sequential: np.ndarray
    makespan_sequential: float
    set_by: np.ndarray  # the row whose end fixed this row's start; -1 when it starts at 0
    critical_path: list[int]  # rows, first to last
    per_core: dict[int, dict[str, float]] = field(default_factory=dict)
    cycle_rows: list[int] = field(default_factory=list)  # rows that could not be scheduled


def sequential_times(s: Schedule) -> tuple[np.ndarray, np.ndarray]:
    end = np.empty(s.n_workloads, dtype=np.float64)
    for k in range(s.core_ids.size):
        lo, hi = int(s.core_ptr[k]), int(s.core_ptr[k + 1])
        end[lo:hi] = np.cumsum(s.wl_time[lo:hi])
    return end - s.wl_time, end


def compute_timeline(s: Schedule, deps: Dependencies, dram_bytes_per_cycle: float | None = None) -> Timeline:
    """Kahn's algorithm over core order plus producer edges; rows left over sit on a dependency cycle.

    With `dram_bytes_per_cycle`, an edge through DRAM also costs the spilled bytes over that bandwidth.
    A schedule with measured starts (a hardware trace) keeps them: nothing is derived.
    """
    return start_timeline(s, deps, dram_bytes_per_cycle).result()


class PendingTimeline:
    """A timeline whose topological pass may still be running in a worker process (`start_timeline`):
    `result()` waits for it once and keeps the Timeline."""

    def __init__(self, finish: Callable[[], Timeline]) -> None:
        self._finish = finish
        self._timeline: Timeline | None = None
        self._lock = threading.Lock()

    def result(self) -> Timeline:
        with self._lock:
            if self._timeline is None:
                self._timeline = self._finish()
            return self._timeline


def start_timeline(
    s: Schedule,
    deps: Dependencies,
    dram_bytes_per_cycle: float | None = None,
    elsewhere: Callable[..., Future] | None = None,
) -> PendingTimeline:
    """`compute_timeline`, its topological pass (a Python loop: 0.14 s on 168,000 workloads) handed to
    `elsewhere` (a worker pool's submit) when given, so that the checks run meanwhile; else the pass runs when
    the result is first asked for."""
    if s.wl_start is not None:
        measured = measured_timeline(s)
        return PendingTimeline(lambda: measured)
    loop_args = _loop_arguments(s, deps, dram_bytes_per_cycle)
    if elsewhere is None:
        return PendingTimeline(lambda: _finished(s, kahn_pass(*loop_args)))
    future = elsewhere(kahn_pass, *loop_args)

    def finish() -> Timeline:
        try:
            passed = future.result()
        except WorkerDied:  # the worker was killed: the pass runs here
            passed = kahn_pass(*loop_args)
        return _finished(s, passed)

    return PendingTimeline(finish)


def _loop_arguments(s: Schedule, deps: Dependencies, dram_bytes_per_cycle: float | None) -> tuple:
    """What `kahn_pass` needs, as arrays (they cross to a worker process as a few megabytes)."""
    n = s.n_workloads
    edge_order = np.argsort(deps.producer, kind="stable")
    succ_ptr = np.searchsorted(deps.producer[edge_order], np.arange(n + 1))
    succ = deps.consumer[edge_order]
    delay = np.zeros(deps.consumer.size)
    if dram_bytes_per_cycle:
        sizes = dict(zip(s.of_tid.tolist(), s.of_size.tolist(), strict=True))
        delay = np.array(
            [
                sizes.get(t, 0) / dram_bytes_per_cycle if v else 0.0
                for t, v in zip(deps.tid.tolist(), deps.via_dram.tolist(), strict=True)
            ]
        )
    indegree = np.bincount(deps.consumer, minlength=n).astype(np.int64)
    next_on_core = np.full(n, -1, dtype=np.int64)
    for k in range(s.core_ids.size):
        lo, hi = int(s.core_ptr[k]), int(s.core_ptr[k + 1])
        next_on_core[lo : hi - 1] = np.arange(lo + 1, hi)
        indegree[lo + 1 : hi] += 1
    return s.wl_time, next_on_core, succ_ptr, succ, delay[edge_order], indegree


def kahn_pass(
    time: np.ndarray,
    next_on_core: np.ndarray,
    succ_ptr: np.ndarray,
    succ_rows: np.ndarray,
    delays: np.ndarray,
    indegree: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The topological pass: each row's start, end and the row whose end set its start (-1: none), and the
    in-degrees left (above 0 on a cycle). Module-level, so a worker process finds it by name."""
    n = time.size
    start = [0.0] * n
    set_by = [-1] * n
    end = [0.0] * n
    indeg = indegree.tolist()
    nxt = next_on_core.tolist()
    durations = time.tolist()
    ptr = succ_ptr.tolist()
    succ = succ_rows.tolist()
    delay_list = delays.tolist()
    ready = deque(np.flatnonzero(indegree == 0).tolist())
    while ready:
        row = ready.popleft()
        finish = start[row] + durations[row]
        end[row] = finish
        follower = nxt[row]
        if follower >= 0:
            if finish >= start[follower]:
                start[follower], set_by[follower] = finish, row
            indeg[follower] -= 1
            if indeg[follower] == 0:
                ready.append(follower)
        for e in range(ptr[row], ptr[row + 1]):
            consumer = succ[e]
            arrival = finish + delay_list[e]
            if arrival > start[consumer]:
                start[consumer], set_by[consumer] = arrival, row
            indeg[consumer] -= 1
            if indeg[consumer] == 0:
                ready.append(consumer)
    return np.asarray(start), np.asarray(end), np.asarray(set_by, dtype=np.int64), np.asarray(indeg, dtype=np.int64)


def _finished(s: Schedule, passed: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> Timeline:
    """The Timeline from the pass: rows on a cycle get no times; the makespan, critical path and lanes."""
    start_a, end_a, set_by_a, indeg_left = passed
    n = s.n_workloads
    time = s.wl_time
    start_seq, end_seq = sequential_times(s)
    cycle_rows = np.flatnonzero(indeg_left > 0).tolist()
    if cycle_rows:
        end_a[cycle_rows] = np.nan
        start_a[cycle_rows] = np.nan
    makespan = float(np.nanmax(end_a)) if n and not np.isnan(end_a).all() else 0.0
    critical: list[int] = []
    if n and makespan > 0:
        row = int(np.nanargmax(end_a))
        while row >= 0:
            critical.append(row)
            row = int(set_by_a[row])
        critical.reverse()
    per_core: dict[int, dict[str, float]] = {}
    for k, core in enumerate(s.core_ids.tolist()):
        lo, hi = int(s.core_ptr[k]), int(s.core_ptr[k + 1])
        busy = float(time[lo:hi].sum())
        last = float(np.nanmax(end_a[lo:hi])) if hi > lo and not np.isnan(end_a[lo:hi]).all() else 0.0
        per_core[core] = {"workloads": hi - lo, "busy": busy, "end": last, "idle": max(last - busy, 0.0)}
    return Timeline(
        start=start_a,
        end=end_a,
        makespan=makespan,
        start_sequential=start_seq,
        end_sequential=end_seq,
        makespan_sequential=float(end_seq.max()) if n else 0.0,
        set_by=set_by_a,
        critical_path=critical,
        per_core=per_core,
        cycle_rows=cycle_rows,
    )


def measured_timeline(s: Schedule) -> Timeline:
    """The timeline of measured blocks: their own starts and ends; per lane, busy time is the union of its
    blocks (blocks of one lane may overlap) and idle the rest of the lane's span."""
    assert s.wl_start is not None  # asked only of a schedule with measured starts
    start = s.wl_start.astype(np.float64)
    end = start + s.wl_time
    n = s.n_workloads
    first = float(start.min()) if n else 0.0
    makespan = float(end.max()) - first if n else 0.0
    per_core: dict[int, dict[str, float]] = {}
    for k, core in enumerate(s.core_ids.tolist()):
        lo, hi = int(s.core_ptr[k]), int(s.core_ptr[k + 1])
        busy = union_length(start[lo:hi], end[lo:hi])
        last = float(end[lo:hi].max()) if hi > lo else 0.0
        span = last - float(start[lo:hi].min()) if hi > lo else 0.0
        per_core[core] = {"workloads": hi - lo, "busy": busy, "end": last, "idle": max(span - busy, 0.0)}
    start_seq, end_seq = sequential_times(s)
    return Timeline(
        start=start,
        end=end,
        makespan=makespan,
        start_sequential=start_seq,
        end_sequential=end_seq,
        makespan_sequential=float(end_seq.max()) if n else 0.0,
        set_by=np.full(n, -1, dtype=np.int64),
        critical_path=[],
        per_core=per_core,
    )


def union_length(start: np.ndarray, end: np.ndarray) -> float:
    """The length of the union of intervals [start, end)."""
    if start.size == 0:
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = start[order], np.maximum.accumulate(end[order])
    gaps = np.maximum(s[1:] - e[:-1], 0.0)
    return float(e[-1] - s[0] - gaps.sum())
