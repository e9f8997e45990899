"""Where a strided ARK tensor's bytes sit in its buffer: first/last byte, runs, padding and aliases.

ARK describes a tensor by `Shape` (data), `PaddedShape` (data plus padding), `Offsets` (where the data starts)
and `Strides` (the shape of the whole region, in elements). The pitch of dimension i is ∏_{j>i} Strides[j].
Everything here is closed-form per dimension, or numpy over run starts, never a Python loop per element:
a [1, 512, 11008] tensor costs the same as a [4, 4] one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.ark import DTYPE_BYTES, ArkTensor

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


def check_tensor(tensor: ArkTensor) -> list[str]:
    """What breaks ARK's tensor invariants (the constructor refuses such a tensor); empty when valid."""
    dims = (tensor.shape, tensor.strides, tensor.offsets, tensor.padded_shape)
    ranks = {len(d) for d in dims}
    faults: list[str] = []
    if len(ranks) != 1:
        faults.append(
            "Shape, Strides, Offsets and PaddedShape must have the same length, got "
            + ", ".join(str(len(d)) for d in dims)
        )
        return faults
    rank = ranks.pop()
    if not 1 <= rank <= 4:
        faults.append(f"a tensor has 1 to 4 dimensions, got {rank}")
    for i, (s, r, o, p) in enumerate(zip(*dims, strict=True)):
        if s < 1:
            faults.append(f"Shape[{i}] = {s} must be at least 1")
        if s > p:
            faults.append(f"Shape[{i}] = {s} exceeds PaddedShape[{i}] = {p}")
        if o < 0:
            faults.append(f"Offsets[{i}] = {o} is negative")
        if o + p > r:
            faults.append(f"Offsets[{i}] + PaddedShape[{i}] = {o} + {p} = {o + p} exceeds Strides[{i}] = {r}")
    if not DTYPE_BYTES.get(tensor.dtype):  # unknown, or NONE (registered, 0 bytes, never a real tensor)
        faults.append(f"unknown DataType {tensor.dtype!r}")
    return faults


def layout_of(tensor: ArkTensor) -> TensorLayout | None:
    """The byte layout of a tensor, or None when its fields are too broken to place it (see check_tensor)."""
    dims = (tensor.shape, tensor.strides, tensor.offsets, tensor.padded_shape)
    if len({len(d) for d in dims}) != 1 or not tensor.shape or tensor.element_bytes == 0:
        return None
    if any(s < 1 for s in tensor.shape) or any(r < 1 for r in tensor.strides) or any(o < 0 for o in tensor.offsets):
        return None
    e = tensor.element_bytes
    rank = len(tensor.shape)
    pitches = tuple(math.prod(tensor.strides[i + 1 :]) for i in range(rank))
    first = sum(o * p for o, p in zip(tensor.offsets, pitches, strict=True))
    last = sum((o + s - 1) * p for o, s, p in zip(tensor.offsets, tensor.shape, pitches, strict=True))
    # The innermost dimensions k.. form one contiguous run when every dimension after k spans its whole region.
    k = rank - 1
    while k > 0 and tensor.shape[k] == tensor.strides[k]:
        k -= 1
    run_elements = tensor.shape[k] * pitches[k]
    runs = math.prod(tensor.shape[:k])
    return TensorLayout(
        tensor_id=tensor.id,
        buffer_id=tensor.buffer.id,
        dtype=tensor.dtype,
        element_bytes=e,
        shape=tensor.shape,
        strides=tensor.strides,
        offsets=tensor.offsets,
        padded_shape=tensor.padded_shape,
        pitches=pitches,
        first_byte=e * first,
        end_byte=e * (last + 1),
        bytes=e * math.prod(tensor.shape),
        runs=runs,
        run_bytes=e * run_elements,
        run_dims=k,
        padding_bytes=e * max(0, math.prod(tensor.padded_shape) - math.prod(tensor.shape)),
        region_bytes=e * math.prod(tensor.strides),
    )


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
