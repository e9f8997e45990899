"""What the timeline draws in each terminal column: pure numpy over one core's sorted workloads.

A core runs its workloads one after another, so their [start, end) intervals are sorted and disjoint. For a
time window split into `width` columns, each column shows one workload: the longest of those that start in it,
or the one still running from an earlier column when that is longer. Cost is O(visible workloads + width) per
core per frame: no Python loop over workloads, whatever the zoom.
"""

from __future__ import annotations

import math

import numpy as np


def column_owners(
    start: np.ndarray, end: np.ndarray, t0: float, t1: float, width: int, *, important: np.ndarray | None = None
) -> np.ndarray:
    """Index (into `start`) of the workload drawn in each column, or -1 for idle.

    `start`/`end` are one core's times in execution order (NaN for workloads that never run, at the tail).
    `important` is a boolean array: such workloads win their column even when shorter (the selection).
    """
    owners = np.full(width, -1, dtype=np.int64)
    if width <= 0 or t1 <= t0 or start.size == 0:
        return owners
    valid = int(np.searchsorted(start, np.inf, side="left")) if np.isnan(start).any() else start.size
    start, end = start[:valid], end[:valid]
    scale = (t1 - t0) / width
    lo = int(np.searchsorted(end, t0, side="right"))
    hi = int(np.searchsorted(start, t1, side="left"))
    if hi <= lo:
        return owners
    vs, ve = start[lo:hi], end[lo:hi]
    duration = ve - vs
    col_lo = t0 + np.arange(width) * scale

    # Candidate 1: the workload running at each column's left edge (a long one carried in from the left).
    carried = np.searchsorted(vs, col_lo, side="right") - 1
    carried_ok = (carried >= 0) & (ve[np.maximum(carried, 0)] > col_lo)
    best = np.where(carried_ok, carried, -1)
    best_duration = np.where(carried_ok, duration[np.maximum(carried, 0)], -1.0)

    # Candidate 2: the longest of the workloads that start inside each column.
    column = np.clip(((vs - t0) / scale).astype(np.int64), 0, width - 1)
    inside = vs >= t0
    if inside.any():
        idx = np.flatnonzero(inside)
        cols = column[idx]
        seg_start = np.r_[0, np.flatnonzero(np.diff(cols)) + 1]
        seg_max = np.maximum.reduceat(duration[idx], seg_start)
        seg_id = np.repeat(np.arange(seg_start.size), np.diff(np.r_[seg_start, idx.size]))
        is_max = duration[idx] == seg_max[seg_id]
        hits = np.flatnonzero(is_max)
        first = hits[np.r_[True, seg_id[hits][1:] != seg_id[hits][:-1]]]
        win_cols = cols[first]
        win = idx[first]
        better = duration[win] > best_duration[win_cols]
        best[win_cols[better]] = win[better]
        # A workload starting in a column where nothing ran at the left edge always shows.
        empty = best[win_cols] < 0
        best[win_cols[empty]] = win[empty]
    if important is not None:
        chosen = np.flatnonzero(important[lo:hi])
        for k in chosen.tolist():  # a handful at most: the selection, its producers and consumers
            c0 = int(max((vs[k] - t0) / scale, 0))
            c1 = int(min(math.ceil((ve[k] - t0) / scale), width))
            best[c0 : max(c1, c0 + 1)] = k
    owners[best >= 0] = best[best >= 0] + lo
    return owners


def columns_touching(
    start: np.ndarray, end: np.ndarray, flags: np.ndarray, t0: float, t1: float, width: int
) -> np.ndarray:
    """Columns in which at least one flagged workload runs (for the critical-path overlay)."""
    hit = np.zeros(max(width, 0), dtype=bool)
    if width <= 0 or t1 <= t0 or start.size == 0:
        return hit
    scale = (t1 - t0) / width
    col_lo = t0 + np.arange(width) * scale
    col_hi = col_lo + scale
    finite = ~np.isnan(start)
    start, end, flags = start[finite], end[finite], flags[finite]
    first = np.searchsorted(end, col_lo, side="right")
    last = np.searchsorted(start, col_hi, side="left")
    prefix = np.r_[0, np.cumsum(flags)]
    return prefix[np.minimum(last, flags.size)] - prefix[np.minimum(first, flags.size)] > 0


def nice_ticks(t0: float, t1: float, width: int, spacing: int = 14) -> list[tuple[int, float]]:
    """(column, time) pairs for axis labels at round values (1, 2 or 5 × 10^k), about `spacing` columns apart."""
    if width <= 0 or t1 <= t0:
        return []
    raw = (t1 - t0) * spacing / width
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(t0 / step) * step
    ticks = []
    value = first
    while value < t1:
        ticks.append((int((value - t0) / (t1 - t0) * width), value))
        value += step
    return ticks
