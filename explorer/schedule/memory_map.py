"""The memory map: one core's address space over time, every tensor a band from the snapshot it appears in to
the one it leaves (PyTorch memory_viz's "active memory timeline", for an accelerator's L2 and WL0).

A band is a run of consecutive snapshots in which a tensor keeps its address and size; a tensor that moves
starts a new band, and a wrapped ring entry is two bands (its two byte pieces). Overlaps are the byte ranges
two distinct tensors share in one snapshot. Everything is computed with numpy sorts over the core's entries at
once, so a core with 10^5 entries costs milliseconds; `paint` turns the map into a small pixel grid (the TUI's
half-block cells, one column per step bucket) in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.models.schedule import Schedule
from explorer.schedule.buffer_view import wl0_capacity
from explorer.schedule.buffers import Placement, moved_pieces
from explorer.schedule.overlap import overlapping_pairs

SIDE = -1  # kind of a side-memory (WL0) band: it has no ifmap/weight/ofmap type
FREE = -1  # a pixel no band covers


@dataclass
class MemoryMap:
    core: int
    memory: str  # "l2" or "wl0"
    rows: np.ndarray  # the schedule row of each step
    capacity: int
    # bands, in order of first step then address
    tensor: np.ndarray  # tensor id (L2) or transfer id (WL0)
    kind: np.ndarray  # entry type code (L2) or SIDE
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray  # first and last step (inclusive)
    last: np.ndarray
    entry: np.ndarray  # the buf_* / w0_* entry of the band's first snapshot
    # overlapping byte ranges per step
    overlap_step: np.ndarray
    overlap_lo: np.ndarray
    overlap_hi: np.ndarray
    overlap_ids: np.ndarray  # (pairs, 2): the tensor (or transfer) ids on each side of each overlap
    ring: list[tuple[int, int, int, int]]  # (first step, last step, lo, hi) of each run of a ring region
    used: np.ndarray  # bytes resident per step
    top: int  # the highest address drawn: the capacity, or beyond it when a band reaches further

    @property
    def steps(self) -> int:
        return int(self.rows.size)

    @property
    def bands(self) -> int:
        return int(self.tensor.size)

    @property
    def peak_step(self) -> int:
        return int(np.argmax(self.used)) if self.used.size else -1

    def bands_at(self, step: int) -> np.ndarray:
        """The bands live at `step`, by address."""
        live = np.flatnonzero((self.first <= step) & (step <= self.last))
        return live[np.argsort(self.lo[live], kind="stable")]

    def band_of(self, step: int, tensor: int, address: int) -> int:
        """The band of `tensor` placed at `address` live at `step` (its first piece when it wraps); -1 if none."""
        live = self.bands_at(step)
        hits = live[(self.tensor[live] == tensor) & (self.lo[live] == address)]
        if not hits.size:  # a wrapped entry's second piece does not start at the address: any piece will do
            hits = live[self.tensor[live] == tensor]
        return int(hits[0]) if hits.size else -1


def memory_map(
    s: Schedule, core: int, memory: str = "l2", placement: Placement | None = None,
    moved: tuple[np.ndarray, int] | None = None,
) -> MemoryMap:
    """The bands, overlaps and ring regions of one core's L2 (`memory="l2"`, with the analysis's `placement`
    so wrapped entries are drawn where they really sit) or WL0 (`"wl0"`). `moved` (L2: entries, an address)
    draws those entries at that address, whole (a preview of `relocate`: nothing is changed)."""
    rows = s.core_rows(core)
    r0, r1 = rows.start, rows.stop
    steps = np.arange(r0, r1, dtype=np.int64)
    if memory == "l2":
        lo_e, hi_e = int(s.buf_ptr[r0]), int(s.buf_ptr[r1])
        if placement is not None:
            n = s.buf_tensor.size
            a, b = np.searchsorted(placement.entry[n:], [lo_e, hi_e]) + n
            index = np.r_[np.arange(lo_e, hi_e), np.arange(a, b)]
            entry, lo, hi = placement.entry[index], placement.lo[index], placement.hi[index]
            half = (index >= n).astype(np.int64)
            if moved is not None:
                entry, lo, hi, second = moved_pieces(s, entry, lo, hi, half.astype(bool), *moved)
                half = second.astype(np.int64)
        else:
            entry = np.arange(lo_e, hi_e)
            lo, hi = s.buf_addr[entry], s.buf_addr[entry] + s.buf_size[entry]
            half = np.zeros(entry.size, dtype=np.int64)
        ptr, tensor, kind = s.buf_ptr, s.buf_tensor[entry], s.buf_type[entry].astype(np.int64)
        capacity = max(int(s.buffersize), 1)
        owner = tensor  # two pieces of one tensor never overlap each other
        sizes = s.buf_size[lo_e:hi_e]
        ring = _ring_runs(s, r0, r1)
    else:
        lo_e, hi_e = int(s.w0_ptr[r0]), int(s.w0_ptr[r1])
        entry = np.arange(lo_e, hi_e)
        lo, hi = s.w0_addr[entry], s.w0_addr[entry] + s.w0_size[entry]
        half = np.zeros(entry.size, dtype=np.int64)
        ptr, tensor, kind = s.w0_ptr, s.w0_tid[entry], np.full(entry.size, SIDE, dtype=np.int64)
        capacity = wl0_capacity(s, core)
        owner = entry  # a transfer placed twice does overlap itself (see wl0-overlap)
        sizes = s.w0_size[lo_e:hi_e]
        ring = []
    step = np.searchsorted(ptr, entry, side="right") - 1 - r0
    used = np.bincount(np.searchsorted(ptr, np.arange(lo_e, hi_e), side="right") - 1 - r0, weights=sizes,
                       minlength=steps.size).astype(np.int64)  # fmt: skip
    bands = _bands(tensor, half, lo, hi, step, kind, entry)
    pairs, _ = overlapping_pairs(step, lo, hi, owner)
    top = max(capacity, int(hi.max()) if hi.size else 0)
    return MemoryMap(
        core=core, memory=memory, rows=steps, capacity=capacity, **bands,
        overlap_step=np.array([p.group for p in pairs], dtype=np.int64),
        overlap_lo=np.array([p.lo for p in pairs], dtype=np.int64),
        overlap_hi=np.array([p.hi for p in pairs], dtype=np.int64),
        overlap_ids=np.array([(tensor[p.a], tensor[p.b]) for p in pairs], dtype=np.int64).reshape(-1, 2),
        ring=ring, used=used, top=top,
    )  # fmt: skip


def _bands(tensor: np.ndarray, half: np.ndarray, lo: np.ndarray, hi: np.ndarray, step: np.ndarray, kind: np.ndarray,
           entry: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    """Runs of consecutive steps with the same (tensor, piece, lo, hi): one sort, one diff."""
    if tensor.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return dict(tensor=empty, kind=empty, lo=empty, hi=empty, first=empty, last=empty, entry=empty)
    order = np.lexsort((step, hi, lo, half, tensor))
    t, h, l_, e_, st = tensor[order], half[order], lo[order], hi[order], step[order]
    same = (t[1:] == t[:-1]) & (h[1:] == h[:-1]) & (l_[1:] == l_[:-1]) & (e_[1:] == e_[:-1])
    starts = np.flatnonzero(np.r_[True, ~(same & (st[1:] == st[:-1] + 1))])
    ends = np.r_[starts[1:], order.size] - 1
    first, last = st[starts], st[ends]
    by_time = np.lexsort((l_[starts], first))
    pick = order[starts][by_time]
    return dict(
        tensor=tensor[pick].astype(np.int64), kind=kind[pick], lo=lo[pick].astype(np.int64),
        hi=hi[pick].astype(np.int64), first=first[by_time], last=last[by_time], entry=entry[pick].astype(np.int64),
    )  # fmt: skip


def _ring_runs(s: Schedule, r0: int, r1: int) -> list[tuple[int, int, int, int]]:
    """Each ring region (lo, hi) and the runs of steps it is declared in."""
    runs: list[list[int]] = []
    open_: dict[tuple[int, int], list[int]] = {}
    for step in range(r1 - r0):
        a, b = int(s.ring_ptr[r0 + step]), int(s.ring_ptr[r0 + step + 1])
        here = set(zip(s.ring_lo[a:b].tolist(), s.ring_hi[a:b].tolist(), strict=True))
        for key in list(open_):
            if key not in here:
                del open_[key]
        for key in here:
            run = open_.get(key)
            if run is None:
                run = open_[key] = [step, step, *key]
                runs.append(run)
            run[1] = step
    return [(a, b, c, d) for a, b, c, d in runs]


@dataclass
class Pixels:
    """A painted window of the map: `band` per pixel (FREE when empty), `overlap` where two tensors share it."""

    band: np.ndarray  # (pixel rows, columns)
    overlap: np.ndarray
    step0: int
    steps_per_column: float
    address0: int
    bytes_per_pixel: float


def paint(m: MemoryMap, step0: int, step1: int, address0: int, address1: int, columns: int, pixel_rows: int) -> Pixels:
    """Steps [step0, step1) across `columns`, addresses [address0, address1) down `pixel_rows` (two per cell).

    A pixel shows the band covering it that started last (the newest placement is on top), which is where the
    eye should go when two collide; the overlap mask is painted from the overlapping ranges themselves."""
    columns, pixel_rows = max(columns, 1), max(pixel_rows, 1)
    spc = max((step1 - step0) / columns, 1e-9)
    bpp = max((address1 - address0) / pixel_rows, 1e-9)
    band = np.full((pixel_rows, columns), FREE, dtype=np.int64)
    overlap = np.zeros((pixel_rows, columns), dtype=bool)
    visible = np.flatnonzero((m.last >= step0) & (m.first < step1) & (m.hi > address0) & (m.lo < address1))
    boxes = _boxes(m.first[visible], m.last[visible] + 1, m.lo[visible], m.hi[visible],
                   step0, spc, address0, bpp, columns, pixel_rows)  # fmt: skip
    _fill(band, boxes, visible)
    if m.overlap_step.size:
        s_ = m.overlap_step
        keep = np.flatnonzero((s_ >= step0) & (s_ < step1) & (m.overlap_hi > address0) & (m.overlap_lo < address1))
        boxes = _boxes(s_[keep], s_[keep] + 1, m.overlap_lo[keep], m.overlap_hi[keep],
                       step0, spc, address0, bpp, columns, pixel_rows)  # fmt: skip
        _fill(overlap, boxes, np.ones(keep.size, dtype=bool))
    return Pixels(band, overlap, step0, spc, address0, bpp)


MAX_FILL_PIXELS = 8_000_000  # above this many covered pixels, boxes are painted one by one (bounded memory)


def _fill(grid: np.ndarray, boxes: tuple, values: np.ndarray) -> None:
    """Paint boxes [c0, c1) × [p0, p1) with their values, later boxes over earlier ones: every covered pixel
    listed at once and assigned in one fancy-index write (4× a loop of slice writes on 25,000 bands)."""
    c0, c1, p0, p1 = boxes
    width, height = c1 - c0, p1 - p0
    area = width * height
    total = int(area.sum())
    if total > MAX_FILL_PIXELS:
        for value, a, z, y, w in zip(values.tolist(), c0.tolist(), c1.tolist(), p0.tolist(), p1.tolist(),
                                     strict=True):  # fmt: skip
            grid[y:w, a:z] = value
        return
    owner = np.repeat(np.arange(values.size), area)
    k = np.arange(total) - (np.cumsum(area) - area)[owner]
    grid[p0[owner] + k // width[owner], c0[owner] + k % width[owner]] = values[owner]


def _boxes(t0, t1, a0, a1, step0, spc, address0, bpp, columns, pixel_rows):
    """Pixel boxes [c0, c1) × [p0, p1) of step ranges [t0, t1) and byte ranges [a0, a1): at least one pixel
    each, so a one-byte tensor in a one-step run is still seen."""
    c0 = np.clip(np.floor((t0 - step0) / spc), 0, columns - 1).astype(np.int64)
    c1 = np.clip(np.ceil((t1 - step0) / spc), 1, columns).astype(np.int64)
    p0 = np.clip(np.floor((a0 - address0) / bpp), 0, pixel_rows - 1).astype(np.int64)
    p1 = np.clip(np.ceil((a1 - address0) / bpp), 1, pixel_rows).astype(np.int64)
    return c0, np.maximum(c1, c0 + 1), p0, np.maximum(p1, p0 + 1)
