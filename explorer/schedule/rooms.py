"""Where a misplaced tensor would have fitted: its residency (the snapshots that hold it at its incident's
address), its home region, and the room found there for its whole stay, or how many bytes short it is
(explorer.schedule.pressure states the definitions)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import Placement
from explorer.schedule.free_space import free_blocks, ranges

ALIGNMENT = 8  # the scheduler IR's default alignment: 64-bit words
PIECES_PER_ENTRY = 64  # pieces searched in all, per entry of the file: bounds the time
PIECES_PER_BATCH = 1 << 19  # snapshot pieces searched at once by `rooms_for`: bounds its memory


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
    group_a, pieces_a = ranges(entry_lo, entry_hi)
    group_b, pieces_b = ranges(n + second_lo, n + second_hi)
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
    block_group, block_start, block_end = free_blocks(group[taken], lo[taken], hi[taken], region_lo, region_hi)
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
