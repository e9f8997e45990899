"""The stride map's grid: one 2-D plane (the last two dimensions) of a tensor's buffer region, in cells.

Each cell covers one element, or a block of elements when the plane is larger than the screen. A cell's
code is a bit set: DATA (the tensor's data), PAD (its padding) and OTHER (data of another tensor on the same
buffer). The tensor's own bits are exact per axis; another tensor with the same region and element size is
exact too; any other tensor is tested element by element, on a sample of each block when the plane is huge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from explorer.tensors.strides import TensorLayout

DATA, PAD, OTHER = 1, 2, 4
EXACT_ELEMENTS = 1 << 20  # planes up to this many elements are tested element by element
SAMPLES_PER_AXIS = 4
_HUGE = 1 << 62


@dataclass(frozen=True, slots=True)
class PlaneGrid:
    codes: np.ndarray  # (rows, cols) uint8 bit sets
    row_block: int  # elements per cell, vertically
    col_block: int
    plane_rows: int  # the region's extent of the second-to-last dimension (1 for a 1-D tensor)
    plane_cols: int
    outer_index: tuple[int, ...]  # fixed indices of the outer dimensions
    exact: bool  # False when other tensors were tested on a sample of each block
    rank: int


def plane_shape(layout: TensorLayout) -> tuple[int, int]:
    strides = layout.strides
    return (strides[-2], strides[-1]) if len(strides) >= 2 else (1, strides[-1])


def outer_dims(layout: TensorLayout) -> int:
    return max(0, len(layout.strides) - 2)


def plane_grid(
    layout: TensorLayout,
    others: list[TensorLayout],
    outer_index: tuple[int, ...],
    max_rows: int,
    max_cols: int,
) -> PlaneGrid:
    rows_total, cols_total = plane_shape(layout)
    row_block = max(1, math.ceil(rows_total / max(1, max_rows)))
    col_block = max(1, math.ceil(cols_total / max(1, max_cols)))
    n_rows, n_cols = math.ceil(rows_total / row_block), math.ceil(cols_total / col_block)
    rank = len(layout.strides)
    inner_axes = (rank - 2, rank - 1) if rank >= 2 else (None, 0)

    def own(size: tuple[int, ...]) -> np.ndarray:
        """Cells whose block meets the box offsets..offsets+size of this tensor (outer dims at outer_index)."""
        for axis, index in enumerate(outer_index):
            if not layout.offsets[axis] <= index < layout.offsets[axis] + size[axis]:
                return np.zeros((n_rows, n_cols), dtype=bool)
        row_axis, col_axis = inner_axes
        rows_hit = (
            _blocks_meeting(n_rows, row_block, layout.offsets[row_axis], size[row_axis])
            if row_axis is not None
            else np.ones(1, dtype=bool)
        )
        cols_hit = _blocks_meeting(n_cols, col_block, layout.offsets[col_axis], size[col_axis])
        return rows_hit[:, None] & cols_hit[None, :]

    codes = np.zeros((n_rows, n_cols), dtype=np.uint8)
    codes[own(layout.shape)] |= DATA
    codes[own(layout.padded_shape)] |= PAD
    exact = True
    others = [o for o in others if o.tensor_id != layout.tensor_id and o.buffer_id == layout.buffer_id]
    if others:
        for other in others:
            if other.element_bytes == layout.element_bytes and other.strides == layout.strides:
                same_region = replace(other, tensor_id=-1)  # drawn as the main tensor: exact per axis
                codes[plane_grid(same_region, [], outer_index, max_rows, max_cols).codes & DATA > 0] |= OTHER
            elif max(layout.region_bytes, other.region_bytes) >= _HUGE:
                exact = False  # byte offsets would not fit int64: such a buffer is not drawn with its neighbours
            else:
                hit, was_exact = _sampled_hits(layout, other, outer_index, n_rows, n_cols, row_block, col_block)
                codes[hit] |= OTHER
                exact = exact and was_exact
    return PlaneGrid(codes, row_block, col_block, rows_total, cols_total, tuple(outer_index), exact, rank)


def _blocks_meeting(n_blocks: int, block: int, start: int, size: int) -> np.ndarray:
    lows = np.arange(n_blocks, dtype=np.int64) * block
    end = min(start + size, _HUGE)  # dimensions reach 2^62: keep the bounds inside int64
    return (lows < end) & (lows + block > min(start, _HUGE))


def _sampled_hits(
    layout: TensorLayout,
    other: TensorLayout,
    outer_index: tuple[int, ...],
    n_rows: int,
    n_cols: int,
    row_block: int,
    col_block: int,
) -> tuple[np.ndarray, bool]:
    rows_total, cols_total = plane_shape(layout)
    exact = rows_total * cols_total <= EXACT_ELEMENTS
    per_row = row_block if exact else min(row_block, SAMPLES_PER_AXIS)
    per_col = col_block if exact else min(col_block, SAMPLES_PER_AXIS)
    row_pos = _sample_positions(n_rows, row_block, per_row, rows_total)
    col_pos = _sample_positions(n_cols, col_block, per_col, cols_total)
    pitches = layout.pitches
    base = sum(i * p for i, p in zip(outer_index, pitches, strict=False))
    row_pitch = pitches[-2] if len(pitches) >= 2 else 0
    elements = base + row_pos[:, None] * row_pitch + col_pos[None, :]
    inside = _in_data(other, elements * layout.element_bytes)
    inside &= (row_pos[:, None] < rows_total) & (col_pos[None, :] < cols_total)
    return np.asarray(inside.reshape(n_rows, per_row, n_cols, per_col).any(axis=(1, 3))), exact


def _sample_positions(n_blocks: int, block: int, per_block: int, total: int) -> np.ndarray:
    """`per_block` evenly spread element positions inside each block (past-the-end positions are masked)."""
    step = np.linspace(0, block - 1, per_block).round().astype(np.int64)
    return (np.arange(n_blocks, dtype=np.int64)[:, None] * block + step[None, :]).ravel()


def _in_data(layout: TensorLayout, byte_offsets: np.ndarray) -> np.ndarray:
    """Whether each byte offset falls on an element of `layout`'s data (element-aligned test)."""
    inside = (byte_offsets >= 0) & (byte_offsets < layout.region_bytes)
    rest = byte_offsets // layout.element_bytes
    for axis, pitch in enumerate(layout.pitches):
        index = rest // pitch
        rest = rest % pitch
        inside &= (index >= layout.offsets[axis]) & (index < layout.offsets[axis] + layout.shape[axis])
    return inside
