"""ARK tensors as neutral `TensorLayout`s, and ARK's own tensor invariants."""

from __future__ import annotations

import math

from explorer.formats.ark.model import DTYPE_BYTES, ArkTensor
from explorer.tensors.strides import TensorLayout


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
