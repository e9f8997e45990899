"""What the buffer view draws: one snapshot's L2 (or WL0) address space as a grid of fixed-size cells.

Each cell covers `bytes_per_cell` bytes and shows the entry that covers most of it; cells whose bytes two
distinct tensors share are marked as overlap. Pure numpy and small loops over the (few dozen) entries of one
snapshot, so a frame costs the same whatever the file size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from explorer.arrays import distinct
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import Placement, moved_pieces
from explorer.schedule.overlap import overlapping_pairs

FREE = -1


@dataclass
class CellMap:
    bytes_per_cell: int
    capacity: int
    owner: np.ndarray  # per cell: entry index (buf_* or w0_* columns), FREE when empty
    overlap: np.ndarray  # per cell: True where two distinct tensors share bytes
    boundaries: list[int]  # cells where a ring region starts
    overlaps: list[tuple[int, int, int, int]] = field(default_factory=list)  # (tensor a, tensor b, lo, hi)
    base: int = 0  # the address of cell 0 (an address zoom shows a window of the memory)


def _paint(cells: int, bpc: int, pieces: list[tuple[int, int, int]]) -> np.ndarray:
    """Owner per cell: for each cell, the entry covering most of its bytes (later entries win ties)."""
    owner = np.full(cells, FREE, dtype=np.int64)
    cover = np.zeros(cells, dtype=np.int64)
    for entry, lo, hi in pieces:
        if hi <= lo:
            continue
        c0, c1 = max(lo // bpc, 0), min(-(-hi // bpc), cells)
        for c in range(c0, c1) if c1 - c0 <= 2 else (c0, c1 - 1):
            amount = min(hi, (c + 1) * bpc) - max(lo, c * bpc)
            if amount >= cover[c]:
                owner[c], cover[c] = entry, amount
        if c1 - c0 > 2:  # the inner cells are fully covered by this entry
            owner[c0 + 1 : c1 - 1] = entry
            cover[c0 + 1 : c1 - 1] = bpc
    return owner


def round_cell_size(capacity: int, cells: int) -> int:
    """The smallest power of two that fits `capacity` bytes into `cells` cells: rulers then show round addresses."""
    need = max(math.ceil(capacity / max(cells, 1)), 1)
    return 1 << (need - 1).bit_length()


MIN_WINDOW = 64  # bytes: the narrowest address window a zoom shows


def address_window(capacity: int, window: tuple[int, int] | None, factor: float, focus: int) -> tuple[int, int] | None:
    """The address window after zooming the current one (None: the whole memory) by `factor` (below 1: in)
    around the address `focus`; None again once it would cover the whole memory. A 91-byte overlap in 8 MiB of
    L2 is one cell of the whole map: zoomed to it, it spans the map."""
    lo, hi = window or (0, capacity)
    span = max(int((hi - lo) * factor), min(MIN_WINDOW, capacity))
    if span >= capacity:
        return None
    lo = min(max(focus - span // 2, 0), capacity - span)
    return lo, lo + span


def window_around(lo: int, hi: int, capacity: int) -> tuple[int, int] | None:
    """A window showing bytes [lo, hi) in its middle half (an overlap, with what collides around it)."""
    span = max(2 * (hi - lo), MIN_WINDOW)
    return address_window(capacity, None, span / max(capacity, 1), (lo + hi) // 2)


def l2_cell_map(
    s: Schedule, row: int, cells: int, placement: Placement | None = None, bytes_per_cell: int | None = None,
    base: int = 0,
    moved: tuple[np.ndarray, int] | None = None,
) -> CellMap:
    """The L2 snapshot before `row` painted into `cells` cells from address `base` (0: the whole memory).
    `moved` (entries, an address; with `placement`) draws those entries there, whole: a preview of relocate."""
    capacity = max(s.buffersize, 1)
    bpc = bytes_per_cell or max(math.ceil(capacity / max(cells, 1)), 1)
    lo_e, hi_e = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
    entries = np.arange(lo_e, hi_e)
    pieces: list[tuple[int, int, int]] = []
    if placement is not None:
        # Pieces are the entries in order, then the wrapped second halves (also in entry order).
        n = s.buf_tensor.size
        a, b = np.searchsorted(placement.entry[n:], [lo_e, hi_e]) + n
        index = np.r_[np.arange(lo_e, hi_e), np.arange(a, b)]
        entry, lo, hi = placement.entry[index], placement.lo[index], placement.hi[index]
        if moved is not None:
            entry, lo, hi, _ = moved_pieces(s, entry, lo, hi, index >= n, *moved)
        pieces = list(zip(entry.tolist(), lo.tolist(), hi.tolist(), strict=True))
    else:
        pieces = [(int(e), int(s.buf_addr[e]), int(s.buf_addr[e] + s.buf_size[e])) for e in entries]
    owner = _paint(cells, bpc, [(entry, lo - base, hi - base) for entry, lo, hi in pieces] if base else pieces)
    overlap = np.zeros(cells, dtype=bool)
    overlaps: list[tuple[int, int, int, int]] = []
    if len(pieces) > 1:
        p_entry = np.array([p[0] for p in pieces])
        pairs, _ = overlapping_pairs(
            np.zeros(len(pieces), dtype=np.int64),
            np.array([p[1] for p in pieces]),
            np.array([p[2] for p in pieces]),
            s.buf_tensor[p_entry],
        )
        for pair in pairs:
            ta, tb = sorted((int(s.buf_tensor[p_entry[pair.a]]), int(s.buf_tensor[p_entry[pair.b]])))
            overlaps.append((ta, tb, pair.lo, pair.hi))
            overlap[max((pair.lo - base) // bpc, 0) : max(min(-(-(pair.hi - base) // bpc), cells), 0)] = True
    r0, r1 = int(s.ring_ptr[row]), int(s.ring_ptr[row + 1])
    # only the starts inside the window (a window from address 0 drew every later start on its last row)
    shown = [lo - base for lo in map(int, s.ring_lo[r0:r1].tolist()) if base <= lo < base + cells * bpc]
    boundaries = sorted({min(lo // bpc, cells - 1) for lo in shown})
    return CellMap(bpc, capacity, owner, overlap, boundaries, overlaps, base)


def wl0_capacity(s: Schedule, core: int) -> int:
    """WL0 has no size in the file: use the furthest byte any snapshot of this core reaches, rounded up."""
    rows = s.core_rows(core)
    lo, hi = int(s.w0_ptr[rows.start]) if len(rows) else 0, int(s.w0_ptr[rows.stop]) if len(rows) else 0
    if hi <= lo:
        return 1024
    furthest = int((s.w0_addr[lo:hi] + s.w0_size[lo:hi]).max())
    return max(1024, -(-furthest // 1024) * 1024)


def wl0_cell_map(s: Schedule, row: int, cells: int, capacity: int, bytes_per_cell: int | None = None) -> CellMap:
    bpc = bytes_per_cell or max(math.ceil(capacity / max(cells, 1)), 1)
    lo_e, hi_e = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1])
    pieces = [(e, int(s.w0_addr[e]), int(s.w0_addr[e] + s.w0_size[e])) for e in range(lo_e, hi_e)]
    owner = _paint(cells, bpc, pieces)
    overlap = np.zeros(cells, dtype=bool)
    overlaps = []
    if len(pieces) > 1:
        pairs, _ = overlapping_pairs(
            np.zeros(len(pieces), dtype=np.int64),
            np.array([p[1] for p in pieces]),
            np.array([p[2] for p in pieces]),
            np.arange(len(pieces)),
        )
        for pair in pairs:
            overlaps.append((int(s.w0_pos[pieces[pair.a][0]]), int(s.w0_pos[pieces[pair.b][0]]), pair.lo, pair.hi))
            overlap[max(pair.lo // bpc, 0) : min(-(-pair.hi // bpc), cells)] = True
    return CellMap(bpc, capacity, owner, overlap, [], overlaps)


def tensor_residency(s: Schedule, core: int, tensor: int) -> tuple[int, int, int] | None:
    """(first row, last row, number of snapshots) in which `tensor` is resident on `core`, or None."""
    rows = s.core_rows(core)
    if not len(rows):
        return None
    lo, hi = int(s.buf_ptr[rows.start]), int(s.buf_ptr[rows.stop])
    hits = np.flatnonzero(s.buf_tensor[lo:hi] == tensor) + lo
    if hits.size == 0:
        return None
    owners = np.searchsorted(s.buf_ptr, hits, side="right") - 1
    return int(owners.min()), int(owners.max()), int(distinct(owners).size)


def row_of_entry(s: Schedule, entry: int) -> int:
    return int(np.searchsorted(s.buf_ptr, entry, side="right") - 1)
