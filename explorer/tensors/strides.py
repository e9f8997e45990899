"""Where a strided tensor's bytes sit in its buffer: first/last byte, runs, padding and aliases.

Format-neutral: a format translates its tensors into `TensorLayout`s. ARK, for one, describes a tensor by
`Shape` (data), `PaddedShape` (data plus padding), `Offsets` (where the data starts) and `Strides` (the shape
of the whole region, in elements). The pitch of dimension i is ∏_{j>i} Strides[j].
Everything here is closed-form per dimension, or numpy over run starts, never a Python loop per element:
a [1, 512, 11008] tensor costs the same as a [4, 4] one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Above this many contiguous runs the exact alias test falls back to comparing byte intervals.
MAX_EXACT_RUNS = 1 << 22
_INT64_SAFE = 1 << 62


@dataclass(frozen=True, slots=True)
class TensorLayout:
    tensor_id: int
    buffer_id: int
    dtype: str
    element_bytes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offsets: tuple[int, ...]
    padded_shape: tuple[int, ...]
    pitches: tuple[int, ...]  # elements between neighbours along each dimension
    first_byte: int
    end_byte: int  # one past the last data byte
    bytes: int  # data bytes (∏ Shape × element size)
    runs: int  # maximal contiguous runs of data bytes
    run_bytes: int  # length of each run
    run_dims: int  # how many leading dimensions enumerate the runs
    padding_bytes: int  # (∏ PaddedShape − ∏ Shape) × element size
    region_bytes: int  # ∏ Strides × element size: what the buffer must hold for this tensor

    def first_byte_formula(self) -> str:
        return _formula(self.element_bytes, self.offsets, self.pitches, self.first_byte, plus_one=False)

    def end_byte_formula(self) -> str:
        last = tuple(o + s - 1 for o, s in zip(self.offsets, self.shape, strict=True))
        return _formula(self.element_bytes, last, self.pitches, self.end_byte, plus_one=True)

    def byte_of(self, index: tuple[int, ...]) -> int:
        """Byte offset in the buffer of the element at region index `index` (one entry per dimension)."""
        return self.element_bytes * sum(i * p for i, p in zip(index, self.pitches, strict=True))


def _formula(element_bytes: int, index: tuple[int, ...], pitches: tuple[int, ...], total: int, plus_one: bool) -> str:
    terms = " + ".join(f"{i}×{p}" for i, p in zip(index, pitches, strict=True))
    body = f"({terms} + 1)" if plus_one else f"({terms})"
    return f"{element_bytes} × {body} = {total:,}"


def run_starts(layout: TensorLayout) -> np.ndarray | None:
    """Byte offsets where each contiguous run of data starts, ascending; None when too many or too large."""
    if layout.runs > MAX_EXACT_RUNS or layout.region_bytes >= _INT64_SAFE:
        return None
    k = layout.run_dims
    base = layout.offsets[k] * layout.pitches[k] if k < len(layout.shape) else 0
    starts = np.array([base], dtype=np.int64)
    for i in range(k):  # outer dimensions, outermost first: the raveled result is already sorted
        along = (layout.offsets[i] + np.arange(layout.shape[i], dtype=np.int64)) * layout.pitches[i]
        starts = np.add.outer(along, starts).ravel()
    return starts * layout.element_bytes


def touches(a: TensorLayout, b: TensorLayout) -> bool:
    """True when the two tensors' data share at least one byte (same buffer assumed)."""
    if a.first_byte >= b.end_byte or b.first_byte >= a.end_byte:
        return False
    starts_a, starts_b = run_starts(a), run_starts(b)
    if starts_a is None or starts_b is None:
        return True  # the byte intervals overlap; too many runs to tell exactly
    if starts_a.size > starts_b.size:
        starts_a, starts_b, a, b = starts_b, starts_a, b, a
    # for each run of a, the first run of b that ends after it starts
    j = np.searchsorted(starts_b, starts_a - b.run_bytes, side="right")
    inside = j < starts_b.size
    return bool(np.any(starts_b[j[inside]] < starts_a[inside] + a.run_bytes))


def aliases(layout: TensorLayout, others: list[TensorLayout]) -> list[int]:
    """Ids of the other tensors on the same buffer whose data shares bytes with this one's data."""
    return sorted(
        {
            other.tensor_id
            for other in others
            if other.tensor_id != layout.tensor_id and other.buffer_id == layout.buffer_id and touches(layout, other)
        }
    )


def same_placement(a: TensorLayout, b: TensorLayout) -> bool:
    """Two ids for the same bytes: ARK's ResultTensor is a copy of its WriteTensor under a new id."""
    return (a.buffer_id, a.element_bytes, a.shape, a.strides, a.offsets, a.padded_shape) == (
        b.buffer_id,
        b.element_bytes,
        b.shape,
        b.strides,
        b.offsets,
        b.padded_shape,
    )


def buffer_size(layouts: list[TensorLayout]) -> int:
    """What the executor allocates: the largest region (∏ Strides × element size) among the buffer's tensors."""
    return max((layout.region_bytes for layout in layouts), default=0)
