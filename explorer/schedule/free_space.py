"""Free space of L2 snapshots: each ring region (else the whole L2) minus the union of the placed pieces in it,
blocks never spanning a region boundary, found in one vectorised pass (explorer.schedule.pressure states the
definitions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import Placement, l2_bytes_per_workload
from explorer.schedule.dependencies import rows_of_children


@dataclass(frozen=True)
class SnapshotFree:
    """Per workload row: live bytes, total free bytes and the largest free block (see the module's definitions)."""

    live: np.ndarray
    free_total: np.ndarray
    largest_free: np.ndarray

    @property
    def fragmentation(self) -> np.ndarray:
        """1 − largest free block ÷ total free bytes; 0 where nothing is free."""
        total = self.free_total.astype(np.float64)
        out = np.zeros(total.size, dtype=np.float64)
        has = total > 0
        out[has] = 1.0 - self.largest_free[has] / total[has]
        return out


def _regions(s: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every snapshot's regions, sorted by row then start: (row, lo, hi, each row's first region index). A row
    without ring regions has one, [0, buffersize) (or up to its highest piece's end when L2's size is unknown)."""
    n_rows = s.n_workloads
    per_row = np.diff(s.ring_ptr) if s.ring_ptr.size else np.zeros(n_rows, dtype=np.int64)
    ring_row = rows_of_children(s.ring_ptr) if s.ring_ptr.size else np.zeros(0, dtype=np.int64)
    plain = np.flatnonzero(per_row == 0)
    if s.buffersize > 0:
        plain_hi = np.full(plain.size, s.buffersize, dtype=np.int64)
    else:  # no capacity known: each snapshot's region ends where its pieces end
        end = np.zeros(n_rows, dtype=np.int64)
        row_of_entry = rows_of_children(s.buf_ptr)
        if row_of_entry.size:
            np.maximum.at(end, row_of_entry, np.maximum(s.buf_addr + s.buf_size, 0))
        plain_hi = end[plain]
    row = np.concatenate([ring_row, plain]).astype(np.int64)
    lo = np.concatenate([s.ring_lo[: ring_row.size], np.zeros(plain.size, dtype=np.int64)]).astype(np.int64)
    hi = np.concatenate([s.ring_hi[: ring_row.size], plain_hi]).astype(np.int64)
    hi = np.maximum(hi, lo)  # a region given backwards holds nothing
    order = np.lexsort((lo, row))
    row, lo, hi = row[order], lo[order], hi[order]
    first = np.searchsorted(row, np.arange(n_rows + 1))
    return row, lo, hi, first


def snapshot_free(
    s: Schedule, placement: Placement, rows: np.ndarray | None = None, live: np.ndarray | None = None
) -> SnapshotFree:
    """Live bytes (`live`: the analysis's L2 bytes per snapshot, when it has them), total free bytes and the
    largest free block of every snapshot (one sort of the pieces); with `rows`, of those snapshots only (the
    others' free bytes read 0)."""
    n_rows = s.n_workloads
    live = l2_bytes_per_workload(s) if live is None else live
    reg_row, reg_lo, reg_hi, reg_first = _regions(s)
    if rows is not None:
        chosen = np.zeros(n_rows, dtype=bool)
        chosen[rows] = True
        reg_hi = np.where(chosen[reg_row], reg_hi, reg_lo)  # the other snapshots' regions hold nothing
    region = _piece_regions(placement, reg_lo, reg_first, None if rows is None else chosen)
    kept = np.flatnonzero(region >= 0)
    g = region[kept]
    lo = np.clip(placement.lo[kept], reg_lo[g], reg_hi[g])
    hi = np.clip(placement.hi[kept], reg_lo[g], reg_hi[g])
    block_group, block_start, block_end = free_blocks(g, lo, hi, reg_lo, reg_hi)
    block_size = block_end - block_start
    free_by_region = np.bincount(block_group, weights=block_size, minlength=reg_row.size).astype(np.int64)
    largest_by_region = np.zeros(reg_row.size, dtype=np.int64)
    np.maximum.at(largest_by_region, block_group, block_size)
    free_total = np.bincount(reg_row, weights=free_by_region, minlength=n_rows).astype(np.int64)
    largest_free = np.zeros(n_rows, dtype=np.int64)
    np.maximum.at(largest_free, reg_row, largest_by_region)
    return SnapshotFree(live, free_total, largest_free)


def free_blocks(
    group: np.ndarray, lo: np.ndarray, hi: np.ndarray, bound_lo: np.ndarray, bound_hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The free blocks (group, start, end) of each group k's span [bound_lo[k], bound_hi[k]) once the pieces
    [lo, hi) of that group (inside its span) are taken: the gaps before each piece, and the tail after the last
    (a group without pieces is free whole). Empty blocks are kept (size 0). One sort for every group."""
    order = np.lexsort((lo, group))
    group, lo, hi = group[order], lo[order], hi[order]
    covered = _running_max_by_group(group, hi)  # the end of the union of the pieces so far, within each group
    first_in_group = np.ones(group.size, dtype=bool)
    first_in_group[1:] = group[1:] != group[:-1]
    last_in_group = np.ones(group.size, dtype=bool)
    last_in_group[:-1] = group[1:] != group[:-1]
    gap_start = np.empty(group.size, dtype=np.int64)
    gap_start[1:] = covered[:-1]
    gap_start[first_in_group] = bound_lo[group[first_in_group]]
    tail_start = bound_lo.astype(np.int64, copy=True)
    tail_start[group[last_in_group]] = covered[last_in_group]
    start = np.concatenate([gap_start, tail_start])
    end = np.concatenate([lo, bound_hi])
    return np.concatenate([group, np.arange(bound_lo.size)]), start, np.maximum(end, start)


def _piece_regions(
    placement: Placement, reg_lo: np.ndarray, reg_first: np.ndarray, chosen: np.ndarray | None = None
) -> np.ndarray:
    """The region index (into `_regions`) of each placed piece; -1 for pieces of entries out of range (and of
    rows not `chosen`, when given)."""
    entry = placement.entry
    row = placement.row
    wanted = placement.region_lo[entry]
    answer = np.full(entry.size, -1, dtype=np.int64)
    usable = ~placement.out_of_range[entry] & (wanted >= 0)
    if chosen is not None:
        usable &= chosen[row]
    start, stop = reg_first[row], reg_first[row + 1]
    most = int((reg_first[1:] - reg_first[:-1]).max()) if reg_first.size > 1 else 0
    for k in range(most):  # rows hold a few regions each: one vectorised step per position
        at = start + k
        has = usable & (answer < 0) & (at < stop)
        found = np.flatnonzero(has)
        match = reg_lo[at[found]] == wanted[found]
        answer[found[match]] = at[found[match]]
    return answer


def _running_max_by_group(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The running maximum of `values` restarting at each group (`group` sorted): values are ranked so that
    group·ranks + rank fits an int64 whatever the addresses are."""
    if values.size == 0:
        return values.copy()
    levels = distinct(values)
    rank = np.searchsorted(levels, values)
    stride = levels.size + 1
    keyed = group * stride + rank
    running = np.maximum.accumulate(keyed) - group * stride
    return levels[running]


def ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The integers of each [starts[k], stops[k]) laid end to end, and k for each."""
    counts = np.maximum(stops - starts, 0)
    group = np.repeat(np.arange(counts.size), counts)
    offsets = np.arange(group.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return group, np.repeat(starts, counts) + offsets
