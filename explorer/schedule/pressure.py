"""Memory pressure: why L2 is full at its peak, and where a misplaced tensor would have fitted.

An overlap says two tensors share bytes; an allocator engineer asks next whether there was room. The numbers
here answer it (the README states each definition, and tests hold the code to them):

- live bytes of a snapshot: the sum of its entries' sizes; a core's peak is the largest, at the first workload
  that reaches it;
- high water: the largest end address of a placed piece on the core (entries outside every region are left out:
  `l2-out-of-range` names them); packing = peak ÷ high water (1.0: nothing tighter was possible);
- free blocks of a snapshot: each ring region (else the whole L2) minus the union of the pieces in it, a block
  never spanning a region boundary; fragmentation = 1 − largest free block ÷ total free bytes (0 when nothing
  is free);
- a misplaced tensor's residency: the run of consecutive snapshots of its core that hold it at the address it
  has where its incident starts; its home: the address its first entry has in the snapshot just before the
  residency (else just after) on the same core, when that differs, and the region holding it there (without
  such a neighbour, its own address's region); its suggestion: the home address when the tensor fits there
  without touching a byte of another entry in any snapshot of the residency, else the lowest multiple of 8
  inside the home region where it fits so (never wrapping); when there is none, its shortfall: its size − the
  largest block of that region free in all of them (counted from its first 8-aligned byte).

Everything per snapshot is one vectorised pass over the placed pieces (a sort by region and address); the
suggestions look only at the snapshots of each residency.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.arrays import distinct
from explorer.gc_pause import collector_paused
from explorer.schedule.buffers import Placement, l2_bytes_per_workload, wl0_bytes_per_workload
from explorer.schedule.dependencies import rows_of_children
from explorer.schedule.incidents import Incident
from explorer.schedule.model import Schedule

ALIGNMENT = 8  # the scheduler IR's default alignment: 64-bit words
LARGEST_LISTED = 5  # live tensors an incident's context names


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


@dataclass(frozen=True)
class CorePressure:
    """One core's L2 pressure: what `info --json` lists under memory.l2.cores."""

    core: int
    capacity: int
    peak_bytes: int
    peak_workload: int
    high_water: int
    max_fragmentation: float
    max_fragmentation_workload: int
    live_at_peak: list[dict[str, Any]]

    @property
    def packing(self) -> float:
        """Peak ÷ high water: 1.0 when nothing tighter was possible (and when nothing is placed)."""
        return self.peak_bytes / self.high_water if self.high_water > 0 else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity, "peak_bytes": self.peak_bytes, "peak_workload": self.peak_workload,
            "high_water": self.high_water, "packing": round(self.packing, 4),
            "live_at_peak": self.live_at_peak, "max_fragmentation": round(self.max_fragmentation, 4),
            "max_fragmentation_workload": self.max_fragmentation_workload,
        }  # fmt: skip


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
    block_group, block_start, block_end = _free_blocks(g, lo, hi, reg_lo, reg_hi)
    block_size = block_end - block_start
    free_by_region = np.bincount(block_group, weights=block_size, minlength=reg_row.size).astype(np.int64)
    largest_by_region = np.zeros(reg_row.size, dtype=np.int64)
    np.maximum.at(largest_by_region, block_group, block_size)
    free_total = np.bincount(reg_row, weights=free_by_region, minlength=n_rows).astype(np.int64)
    largest_free = np.zeros(n_rows, dtype=np.int64)
    np.maximum.at(largest_free, reg_row, largest_by_region)
    return SnapshotFree(live, free_total, largest_free)


def _free_blocks(
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


def core_pressure(
    s: Schedule,
    placement: Placement,
    free: SnapshotFree,
    entry_role: Callable[[int, int], str] | None = None,
    entry_kinds: tuple[str, ...] = (),
) -> list[CorePressure]:
    """Every core's peak, high water, packing and worst fragmentation; `entry_role(row, entry)` names the tensors
    live at the peak (else their entry kind does)."""
    placed = ~placement.out_of_range[placement.entry]
    piece_core = s.wl_core[placement.row[placed]] if placed.any() else np.zeros(0, dtype=np.int64)
    piece_hi = placement.hi[placed]
    fragmentation = free.fragmentation
    answer: list[CorePressure] = []
    for core in s.core_ids.tolist():
        rows = s.core_rows(int(core))
        if len(rows) == 0:
            continue
        live = free.live[rows.start : rows.stop]
        peak_row = rows.start + int(np.argmax(live))
        worst_row = rows.start + int(np.argmax(fragmentation[rows.start : rows.stop]))
        mine = piece_core == core
        high_water = int(piece_hi[mine].max()) if mine.any() else 0
        answer.append(
            CorePressure(
                core=int(core), capacity=int(s.buffersize), peak_bytes=int(free.live[peak_row]),
                peak_workload=int(s.wl_id[peak_row]), high_water=high_water,
                max_fragmentation=float(fragmentation[worst_row]),
                max_fragmentation_workload=int(s.wl_id[worst_row]),
                live_at_peak=live_tensors(s, peak_row, entry_role, entry_kinds),
            )
        )  # fmt: skip
    return answer


def live_tensors(
    s: Schedule,
    row: int,
    entry_role: Callable[[int, int], str] | None = None,
    entry_kinds: tuple[str, ...] = (),
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The entries of `row`'s snapshot, largest first (ties by tensor id): tensor_id, bytes, address, role."""
    lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
    entries = np.arange(lo, hi)
    order = np.lexsort((s.buf_tensor[lo:hi], -s.buf_size[lo:hi]))
    chosen = entries[order][:limit] if limit is not None else entries[order]
    out = []
    for e in chosen.tolist():
        said = entry_role(row, e) if entry_role is not None else ""
        kind = int(s.buf_type[e])
        role = said or (entry_kinds[kind] if 0 <= kind < len(entry_kinds) else "")
        out.append({"tensor_id": int(s.buf_tensor[e]), "bytes": int(s.buf_size[e]), "address": int(s.buf_addr[e]),
                    "role": role})  # fmt: skip
    return out


@dataclass(frozen=True)
class Residency:
    """Where a misplaced tensor lies for the run of snapshots its incident starts in (rows first..last)."""

    core: int
    tensor: int
    address: int
    size: int
    region_lo: int
    region_hi: int
    first_row: int
    last_row: int
    entries: np.ndarray  # the entries that hold it there (what `relocate` moves)
    home_address: int | None = None  # its address in the neighbouring snapshot (before, else after), if another
    home_row: int | None = None  # that snapshot's row
    home_lo: int = -1  # the region searched for room: the home's region, else its own
    home_hi: int = -1


@dataclass(frozen=True)
class Room:
    """Where the tensor would have fitted for its whole residency, or how many bytes were missing."""

    residency: Residency
    address: int | None  # the suggestion; None when there is no room
    largest_free: int  # the largest block of the home region free in every snapshot of the residency (aligned)

    @property
    def at_home(self) -> bool:
        """The suggestion is the address the tensor has in its neighbouring snapshot."""
        return self.address is not None and self.address == self.residency.home_address

    @property
    def region(self) -> list[int]:
        return [self.residency.home_lo, self.residency.home_hi]

    @property
    def shortfall(self) -> int:
        return max(self.residency.size - self.largest_free, 0) if self.address is None else 0


def residency(s: Schedule, placement: Placement, core: int, tensor: int, row: int) -> Residency | None:
    """The run of consecutive snapshots of `core` around `row`'s that hold `tensor` at the address it has there;
    None when that snapshot does not hold it."""
    return residencies(s, placement, [(core, tensor, row)])[0]


def residencies(s: Schedule, placement: Placement, asked: list[tuple[int, int, int]]) -> list[Residency | None]:
    """`residency` of many (core, tensor, row) at once: the entries of the tensors asked about are sorted once
    by core, tensor, address and row, and cut into runs of consecutive rows; each question is a look-up (one
    Python loop over 9,000 incidents' entries took 0.4 s)."""
    if not asked:
        return []
    q_core = np.array([core for core, _, _ in asked], dtype=np.int64)
    q_tensor = np.array([tensor for _, tensor, _ in asked], dtype=np.int64)
    q_row = np.array([row for _, _, row in asked], dtype=np.int64)
    tensors = distinct(q_tensor)
    if s.buf_tensor.size == 0:
        return [None] * len(asked)
    at = np.minimum(np.searchsorted(tensors, s.buf_tensor), tensors.size - 1)
    found = np.flatnonzero(tensors[at] == s.buf_tensor)  # the entries of those tensors, in entry (row) order
    rows = np.searchsorted(s.buf_ptr, found, side="right") - 1
    cores = distinct(np.concatenate([s.wl_core[rows], q_core]))
    stride = tensors.size
    pair = np.searchsorted(cores, s.wl_core[rows]) * stride + at[found]  # (core, tensor) as one number
    q_pair = np.searchsorted(cores, q_core) * stride + np.searchsorted(tensors, q_tensor)
    # the asked row's first entry of the tensor: its address is where the residency is
    span = s.n_workloads + 1
    by_row = pair * span + rows  # `found` is in entry order, so a stable sort keeps each row's first entry first
    order = np.argsort(by_row, kind="stable")
    keys = by_row[order]
    q_key = q_pair * span + q_row
    q_entry, known = _first_entry_at(keys, order, found, q_key)
    # runs: sorted by pair, address, row (entry order within), cut where any of them breaks the run
    addresses = s.buf_addr[found]
    runs = np.lexsort((found, rows, addresses, pair))
    r_pair, r_addr, r_row = pair[runs], addresses[runs], rows[runs]
    cut = np.ones(runs.size, dtype=bool)
    cut[1:] = (r_pair[1:] != r_pair[:-1]) | (r_addr[1:] != r_addr[:-1]) | (r_row[1:] > r_row[:-1] + 1)
    run_id = np.cumsum(cut) - 1
    run_start = np.flatnonzero(cut)
    run_stop = np.append(run_start[1:], runs.size)
    place = np.empty(runs.size, dtype=np.int64)
    place[runs] = np.arange(runs.size)  # where each found entry sits in the runs' order
    position = np.searchsorted(found, q_entry)
    q_run = run_id[place[np.minimum(position, max(found.size - 1, 0))]] if found.size else position
    r_entries = found[runs]
    # the home: the tensor's first entry in the snapshot before the run, else after (rows of one core are
    # consecutive and `pair` holds the core, so a hit is on the same core; row -1 or n_workloads never hits)
    q_first = r_row[run_start[q_run]] if found.size else q_row
    q_last = r_row[run_stop[q_run] - 1] if found.size else q_row
    before, had_before = _first_entry_at(keys, order, found, q_pair * span + q_first - 1)
    after, had_after = _first_entry_at(keys, order, found, q_pair * span + q_last + 1)
    neighbour = np.where(had_before, before, after)
    has_home = (had_before | had_after) & known
    answer: list[Residency | None] = []
    for k, (core, tensor, _) in enumerate(asked):
        if not known[k]:
            answer.append(None)
            continue
        entry, run = int(q_entry[k]), int(q_run[k])
        lo, hi = int(run_start[run]), int(run_stop[run])
        region_lo, region_hi = int(placement.region_lo[entry]), int(placement.region_hi[entry])
        home_address = home_row = None
        home_lo, home_hi = region_lo, region_hi
        if has_home[k]:
            near = int(neighbour[k])
            if int(s.buf_addr[near]) != int(s.buf_addr[entry]):
                home_address = int(s.buf_addr[near])
                home_row = int(q_first[k] - 1 if had_before[k] else q_last[k] + 1)
                if placement.region_lo[near] >= 0 and not placement.out_of_range[near]:
                    home_lo, home_hi = int(placement.region_lo[near]), int(placement.region_hi[near])
        answer.append(Residency(
            core=core, tensor=tensor, address=int(s.buf_addr[entry]), size=int(s.buf_size[entry]),
            region_lo=region_lo, region_hi=region_hi, first_row=int(r_row[lo]), last_row=int(r_row[hi - 1]),
            entries=r_entries[lo:hi], home_address=home_address, home_row=home_row, home_lo=home_lo, home_hi=home_hi,
        ))  # fmt: skip
    return answer


def _first_entry_at(
    keys: np.ndarray, order: np.ndarray, found: np.ndarray, wanted: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each (pair, row) key wanted: the first entry of that pair in that row (from `keys`, the sorted keys of
    `found`'s entries, `order` their sort), and whether there is one."""
    if keys.size == 0:
        return np.zeros(wanted.size, dtype=np.int64), np.zeros(wanted.size, dtype=bool)
    hit = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    return found[order[hit]], keys[hit] == wanted


def room_for(s: Schedule, placement: Placement, stay: Residency) -> Room:
    """Its home address when it is clear of every other entry's bytes in every snapshot of its residency, else
    the lowest 8-aligned address of its home region that is, never wrapping past the region's end."""
    return rooms_for(s, placement, [stay])[0]


def rooms_for(s: Schedule, placement: Placement, stays: list[Residency]) -> list[Room]:
    """`room_for` of many residencies at once: the pieces of every residency's snapshots in one array, grouped
    by residency, sorted by address once, their gaps found together (9,000 incidents one by one took 0.5 s)."""
    if not stays:
        return []
    n = s.buf_tensor.size
    k = len(stays)
    first_row = np.array([stay.first_row for stay in stays], dtype=np.int64)
    last_row = np.array([stay.last_row for stay in stays], dtype=np.int64)
    region_lo = np.array([stay.home_lo for stay in stays], dtype=np.int64)
    region_hi = np.array([stay.home_hi for stay in stays], dtype=np.int64)
    size = np.array([stay.size for stay in stays], dtype=np.int64)
    usable = (region_lo >= 0) & (region_hi > region_lo) & (size > 0)
    entry_lo, entry_hi = s.buf_ptr[first_row], s.buf_ptr[last_row + 1]
    wrapped = placement.entry[n:]  # the second pieces, in entry order
    second_lo, second_hi = np.searchsorted(wrapped, entry_lo), np.searchsorted(wrapped, entry_hi)
    group_a, pieces_a = _ranges(entry_lo, entry_hi)
    group_b, pieces_b = _ranges(n + second_lo, n + second_hi)
    group = np.concatenate([group_a, group_b])
    pieces = np.concatenate([pieces_a, pieces_b])
    entry = placement.entry[pieces]
    moving_group = np.repeat(np.arange(k), [stay.entries.size for stay in stays])
    moving_key = np.sort(moving_group * (n + 1) + np.concatenate([stay.entries for stay in stays]))
    key = group * (n + 1) + entry
    at = np.minimum(np.searchsorted(moving_key, key), max(moving_key.size - 1, 0))
    moving = moving_key[at] == key if moving_key.size else np.zeros(key.size, dtype=bool)
    keep = ~(placement.out_of_range[entry] | moving) & usable[group]
    group, pieces = group[keep], pieces[keep]
    lo = np.maximum(placement.lo[pieces], region_lo[group])
    hi = np.minimum(placement.hi[pieces], region_hi[group])
    taken = hi > lo
    block_group, block_start, block_end = _free_blocks(group[taken], lo[taken], hi[taken], region_lo, region_hi)
    usable_start = -(-block_start // ALIGNMENT) * ALIGNMENT  # each block from its first aligned byte
    room = np.maximum(block_end - usable_start, 0)
    room[~usable[block_group]] = 0
    order = np.lexsort((block_end, block_start, block_group))  # an empty block before the one it starts
    block_group, usable_start, room = block_group[order], usable_start[order], room[order]
    largest = np.zeros(k, dtype=np.int64)
    np.maximum.at(largest, block_group, room)
    fits = np.flatnonzero(room >= size[block_group])
    fitting_groups, first_fit = np.unique(block_group[fits], return_index=True)
    address: list[int | None] = [None] * k
    for g, start in zip(fitting_groups.tolist(), usable_start[fits[first_fit]].tolist(), strict=True):
        address[g] = start
    block_start, block_end = block_start[order], block_end[order]
    for g in _free_at_home(stays, usable, block_group, block_start, block_end).tolist():
        address[g] = stays[g].home_address
    return [Room(stay, address[g], int(largest[g])) for g, stay in enumerate(stays)]


def _free_at_home(
    stays: list[Residency], usable: np.ndarray, block_group: np.ndarray, block_start: np.ndarray,
    block_end: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """The residencies (indices) whose home address is free in every snapshot: a free block of their group
    (blocks sorted by group then start) holds [home, home + size). Addresses are ranked so that group and rank
    make one int64 key whatever their size."""
    homed = np.array([g for g, stay in enumerate(stays) if stay.home_address is not None and usable[g]],
                     dtype=np.int64)  # fmt: skip
    if homed.size == 0 or block_group.size == 0:
        return np.zeros(0, dtype=np.int64)
    home = np.array([stays[g].home_address for g in homed.tolist()], dtype=np.int64)
    size = np.array([stays[g].size for g in homed.tolist()], dtype=np.int64)
    levels = distinct(np.concatenate([block_start, home]))
    stride = levels.size + 1
    block_key = block_group * stride + np.searchsorted(levels, block_start)
    home_key = homed * stride + np.searchsorted(levels, home)
    at = np.searchsorted(block_key, home_key, side="right") - 1  # the last block starting at or before home
    inside = at >= 0
    at = np.maximum(at, 0)
    inside &= (block_group[at] == homed) & (block_start[at] <= home) & (home + size <= block_end[at])
    return homed[inside]


PIECES_PER_BATCH = 1 << 19  # snapshot pieces searched at once by `rooms_for`: bounds its memory
PIECES_PER_ENTRY = 64  # pieces searched in all, per entry of the file: bounds the time


def rooms_in_batches(s: Schedule, placement: Placement, stays: list[Residency]) -> list[Room | None]:
    """`rooms_for` in batches of at most PIECES_PER_BATCH snapshot pieces, in order, until PIECES_PER_ENTRY per
    entry of the file are searched; the stays past that are None (not searched). Each room reads every entry of
    its residency's snapshots, so 140 incidents in one snapshot of 64,000 entries were 9 million pieces at once
    (1.4 GB), and 10,000 of them would take minutes."""
    n = max(int(s.buf_tensor.size), 1)
    budget = max(PIECES_PER_ENTRY * n, PIECES_PER_BATCH)
    pieces = [2 * int(s.buf_ptr[stay.last_row + 1] - s.buf_ptr[stay.first_row]) for stay in stays]  # wraps: 2
    rooms: list[Room | None] = [None] * len(stays)
    batches: list[list[int]] = [[]]
    held = used = 0
    for k, count in enumerate(pieces):
        if used + count > budget:
            break
        if batches[-1] and held + count > PIECES_PER_BATCH:
            batches.append([])
            held = 0
        batches[-1].append(k)
        held += count
        used += count
    for batch in batches:
        for at, room in zip(batch, rooms_for(s, placement, [stays[b] for b in batch]), strict=True):
            rooms[at] = room
    return rooms


def _ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The integers of each [starts[k], stops[k]) laid end to end, and k for each."""
    counts = np.maximum(stops - starts, 0)
    group = np.repeat(np.arange(counts.size), counts)
    offsets = np.arange(group.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return group, np.repeat(starts, counts) + offsets


def incident_contexts(
    s: Schedule, free: SnapshotFree, rows: np.ndarray, entry_kinds: tuple[str, ...] = ()
) -> dict[int, dict[str, Any]]:
    """The pressure at incidents' first snapshots, per row: capacity, live bytes, the largest free block and the
    five largest live tensors (their role is their entry kind: naming each in words reads its workload again, and
    a file holds thousands of incidents; the TUI's details name them when one is shown). Every row's entries are
    sorted in one lexsort (one per row took 0.3 s for 9,000 incidents)."""
    rows = distinct(np.asarray(rows, dtype=np.int64))
    group, entries = _ranges(s.buf_ptr[rows], s.buf_ptr[rows + 1])
    order = np.lexsort((s.buf_tensor[entries], -s.buf_size[entries], group))
    group, entries = group[order], entries[order]
    rank = np.arange(group.size) - np.searchsorted(group, group)  # place within its row, largest first
    keep = rank < LARGEST_LISTED
    group, entries = group[keep], entries[keep]
    kinds = s.buf_type[entries].tolist()
    listed: list[list[dict[str, Any]]] = [[] for _ in range(rows.size)]
    for g, tensor, size, address, kind in zip(group.tolist(), s.buf_tensor[entries].tolist(),
                                              s.buf_size[entries].tolist(), s.buf_addr[entries].tolist(), kinds,
                                              strict=True):  # fmt: skip
        role = entry_kinds[kind] if 0 <= kind < len(entry_kinds) else ""
        listed[g].append({"tensor_id": tensor, "bytes": size, "address": address, "role": role})
    capacity = int(s.buffersize)
    return {
        row: {"capacity": capacity, "live_bytes": live, "largest_free_block": largest, "largest_live": listed[g]}
        for g, (row, live, largest) in enumerate(zip(rows.tolist(), free.live[rows].tolist(),
                                                     free.largest_free[rows].tolist(), strict=True))
    }  # fmt: skip


def _first_rows(s: Schedule, incidents: list[Incident]) -> np.ndarray:
    """The rows of the L2 incidents' first snapshots (the only ones their context measures)."""
    l2 = [i for i in incidents if i.code == "l2-overlap"]
    rows = s.rows_of([i.core for i in l2], [i.first_workload for i in l2])
    return rows[rows >= 0]


def explain_incidents(
    s: Schedule, placement: Placement, incidents: list[Incident], free: SnapshotFree, entry_kinds: tuple[str, ...] = ()
) -> dict[int, Room]:
    """Fill each L2 incident's context (from `free`, which must cover their first snapshots) and its suggestion
    or shortfall (WL0 incidents are left as they are); the rooms found, by id(incident)."""
    l2 = [i for i in incidents if i.code == "l2-overlap"]
    rows = s.rows_of([i.core for i in l2], [i.first_workload for i in l2]).tolist()
    asked = [(i, (i.core, i.introduced_by, row)) for i, row in zip(l2, rows, strict=True) if row >= 0]
    found = residencies(s, placement, [ask for _, ask in asked])
    contexts = incident_contexts(s, free, np.array([row for row in rows if row >= 0], dtype=np.int64), entry_kinds)
    stays = {id(incident): stay for (incident, _), stay in zip(asked, found, strict=True)}
    found_rooms = rooms_in_batches(s, placement, [stay for stay in found if stay is not None])
    rooms = {id(incident): room for incident, room in zip(
        [incident for (incident, _), stay in zip(asked, found, strict=True) if stay is not None], found_rooms,
        strict=True) if room is not None}  # fmt: skip
    for incident, row in zip(l2, rows, strict=True):
        if row < 0:
            continue
        incident.context = contexts[row]
        stay = stays.get(id(incident))
        room = rooms.get(id(incident))
        if stay is None or room is None:  # no residency, or past the search's budget: neither said
            continue
        span = [int(s.wl_id[stay.first_row]), int(s.wl_id[stay.last_row])]
        incident.region = room.region
        incident.region_largest_free = room.largest_free
        if room.address is not None:
            home = int(s.wl_id[stay.home_row]) if room.at_home and stay.home_row is not None else None
            incident.suggestion = {"address": room.address, "end": room.address + stay.size, "residency": span,
                                   "home_workload": home}  # fmt: skip
            incident.shortfall_bytes = None
        else:
            incident.suggestion = None
            incident.shortfall_bytes = room.shortfall
    return rooms


class Pressure:
    """A document's L2 pressure, worked out once when first asked for (`pressure_of`): the per-snapshot free
    space, the cores' numbers, and each incident's room on demand."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.schedule: Schedule = document.schedule
        self.placement: Placement = document.schedule_analysis.placement
        self.live: np.ndarray = document.schedule_analysis.l2_bytes  # per snapshot, worked out by the analysis
        self._free: SnapshotFree | None = None
        self._cores: list[CorePressure] | None = None
        self._by_core: dict[int, np.ndarray] = {}

    @property
    def free(self) -> SnapshotFree:
        """Every snapshot's free space (one sort of all the pieces: worked out when first asked for)."""
        if self._free is None:
            self._free = snapshot_free(self.schedule, self.placement, live=self.live)
        return self._free

    def core_fragmentation(self, core: int) -> np.ndarray:
        """Fragmentation of each snapshot of one core, in step order (its rows alone are measured unless every
        snapshot already was): the memory map's strip."""
        rows = self.schedule.core_rows(core)
        if self._free is not None:
            return self._free.fragmentation[rows.start : rows.stop]
        kept = self._by_core.get(core)
        if kept is None:
            wanted = np.arange(rows.start, rows.stop, dtype=np.int64)
            free = snapshot_free(self.schedule, self.placement, rows=wanted, live=self.live)
            kept = self._by_core[core] = free.fragmentation[rows.start : rows.stop]
        return kept

    def entry_role(self) -> Callable[[int, int], str] | None:
        """The document's words for an entry (what the incidents say), for the views that name a few."""
        return getattr(self.document.view, "entry_role", None)

    @property
    def cores(self) -> list[CorePressure]:
        """Each core's numbers; the tensors live at the peak are named by their entry kind (naming them in words
        reads each core's workloads again: a second on a 500 MB file; the TUI's peak list names them)."""
        if self._cores is None:
            words = self.document.vocabulary
            self._cores = core_pressure(self.schedule, self.placement, self.free, None, words.entry_kinds)
        return self._cores

    def explain(self, incidents: list[Incident]) -> dict[int, Room]:
        """Fill every L2 incident's context and suggestion or shortfall; the rooms found, by id(incident). The
        contexts are tens of thousands of small acyclic dicts: the cycle collector, left on, rescans the loaded
        document's objects several times while they are made."""
        words = self.document.vocabulary
        with collector_paused():
            free = self._free or snapshot_free(self.schedule, self.placement,
                                               rows=_first_rows(self.schedule, incidents), live=self.live)  # fmt: skip
            return explain_incidents(self.schedule, self.placement, incidents, free, words.entry_kinds)


def pressure_of(document: Any) -> Pressure | None:
    """The document's L2 pressure (kept on its analysis: worked out once); None without a schedule, or for one
    that has no memory to fill (a trace or an assembly: their lanes are units, not buffers)."""
    analysis = getattr(document, "schedule_analysis", None)
    if document.schedule is None or analysis is None or document.schedule.buf_ptr.size < 2:
        return None
    if not document.vocabulary.memory:
        return None
    kept = analysis.cached.get("pressure")
    if kept is None:
        kept = analysis.cached["pressure"] = Pressure(document)
    return kept


def packing_text(packing: float) -> str:
    """Packing in words where it says more than its number: over 1 the tensors live at the peak hold more bytes
    than the span they sit in, which only overlapping tensors can (a planted overlap read 1.25 unexplained)."""
    return f"{packing:.2f}" + (" (over 1: tensors overlap)" if packing > 1.0 else "")


def worst_line(cores: dict[str, dict[str, Any]]) -> str:
    """The text `info`'s line: the core with the largest peak (from `info --json`'s memory.l2.cores), in words."""
    core, said = max(cores.items(), key=lambda item: (item[1]["peak_bytes"], -int(item[0])))
    capacity = said["capacity"]
    share = f" of {capacity:,} ({said['peak_bytes'] / capacity:.0%})" if capacity > 0 else ""
    return (f"core {core}, {said['peak_bytes']:,} bytes{share} at workload {said['peak_workload']} "
            f"({len(said['live_at_peak'])} tensors live); high water {said['high_water']:#x}, packing "
            f"{packing_text(said['packing'])}; fragmentation up to {said['max_fragmentation']:.2f} "
            f"(workload {said['max_fragmentation_workload']})")  # fmt: skip


NO_INCIDENT = "choose an overlap incident first to preview where its tensor fits"  # the views add their keys


def preview_room(document: Any, core: int, tensors: tuple[int, ...], row: int) -> tuple[Room | None, str]:
    """Where the selected incident's misplaced tensor (`tensors[0]`, as the views highlight it) would go, for
    the views' preview of `relocate`: the room found, or None and why in words."""
    pressure = pressure_of(document)
    if pressure is None or not tensors:
        return None, NO_INCIDENT
    s = pressure.schedule
    [stay] = residencies(s, pressure.placement, [(core, int(tensors[0]), row)])
    if stay is None:
        return None, f"tensor {tensors[0]} is not in this snapshot of {s.core_label(core)}: step to the overlap"
    room = room_for(s, pressure.placement, stay)
    if room.address is None:
        return None, (f"tensor {stay.tensor} fits nowhere in region {stay.home_lo:#x}-{stay.home_hi:#x} for workloads "
                      f"{int(s.wl_id[stay.first_row])}–{int(s.wl_id[stay.last_row])}: {room.shortfall:,} bytes "
                      "short")  # fmt: skip
    return room, ""


def preview_words(s: Schedule, room: Room) -> str:
    """The preview's mark, said in every view that draws it."""
    stay = room.residency
    return (f"PREVIEW · tensor {stay.tensor} → {room.address:#x} (was {stay.address:#x}) · workloads "
            f"{int(s.wl_id[stay.first_row])}–{int(s.wl_id[stay.last_row])} · nothing is written · v: off")  # fmt: skip


def side_memory_pressure(s: Schedule) -> dict[str, dict[str, Any]]:
    """WL0 (or WL1) per core, with the numbers that make sense there: its size is not in the file and its entries
    have no regions nor tensor ids, so there is no capacity, fragmentation or suggestion; the peak of live bytes,
    the high water and the packing are defined as for L2. Core id (as text) → numbers; cores without entries
    are left out."""
    if s.w0_size.size == 0:
        return {}
    live = wl0_bytes_per_workload(s)
    ends = np.where(s.w0_addr >= 0, s.w0_addr + s.w0_size, 0)
    out: dict[str, dict[str, Any]] = {}
    for core in s.core_ids.tolist():
        rows = s.core_rows(int(core))
        lo, hi = int(s.w0_ptr[rows.start]), int(s.w0_ptr[rows.stop])
        if len(rows) == 0 or hi <= lo:
            continue
        peak_row = rows.start + int(np.argmax(live[rows.start : rows.stop]))
        high_water = int(ends[lo:hi].max())
        peak = int(live[peak_row])
        out[str(core)] = {"peak_bytes": peak, "peak_workload": int(s.wl_id[peak_row]), "high_water": high_water,
                          "packing": round(peak / high_water, 4) if high_water > 0 else 1.0}  # fmt: skip
    return out
