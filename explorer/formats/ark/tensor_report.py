"""The `ir-explorer tensor` record: one ARK tensor's placement in its buffer as plain JSON values."""

from __future__ import annotations

from typing import Any, Protocol

from explorer.tensors.strides import TensorLayout


class PlacedTensors(Protocol):
    """What the report reads of `checks.TensorIndex` (named here, not imported: the index calls this module)."""

    tensors: dict[int, Any]

    def layout(self, tensor_id: int) -> TensorLayout | None: ...

    def aliases_of(self, tensor_id: int) -> list[int]: ...


def tensor_report(index: PlacedTensors, tensor_id: int) -> dict[str, Any] | None:
    """The documented JSON fields; None when the file has no such tensor. Unplaceable tensors get nulls."""
    tensor = index.tensors.get(tensor_id)
    if tensor is None:
        return None
    layout = index.layout(tensor_id)
    return {
        "tensor_id": tensor.id,
        "buffer_id": tensor.buffer.id,
        "dtype": tensor.dtype,
        "element_bytes": tensor.element_bytes,
        "shape": list(tensor.shape),
        "strides": list(tensor.strides),
        "offsets": list(tensor.offsets),
        "padded_shape": list(tensor.padded_shape),
        "first_byte": layout.first_byte if layout else None,
        "end_byte": layout.end_byte if layout else None,
        "bytes": layout.bytes if layout else None,
        "runs": layout.runs if layout else None,
        "padding_bytes": layout.padding_bytes if layout else None,
        "aliases": index.aliases_of(tensor_id),
    }
