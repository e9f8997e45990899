"""How an ARK op, tensor, argument and tensor layout are written in the tree and the details."""

from __future__ import annotations

from explorer.document import Section
from explorer.formats.ark.model import ArkArg, ArkOp, ArkTensor
from explorer.tensors.strides import TensorLayout


def dims(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def layout_section(layout: TensorLayout) -> Section:
    return Section(
        "Layout in the buffer",
        ("property", "value"),
        [
            ("element size", f"{layout.element_bytes} B"),
            ("first byte", f"{layout.first_byte:,}"),
            ("  = e × Σ Offsets[i] × pitch[i]", layout.first_byte_formula()),
            ("end byte (one past the last)", f"{layout.end_byte:,}"),
            ("  = e × (Σ (Offsets+Shape−1)[i] × pitch[i] + 1)", layout.end_byte_formula()),
            ("pitches (elements)", dims(layout.pitches)),
            ("data bytes", f"{layout.bytes:,}"),
            ("contiguous runs", f"{layout.runs:,} × {layout.run_bytes:,} B"),
            ("padding bytes", f"{layout.padding_bytes:,}"),
            ("region bytes (∏ Strides × e)", f"{layout.region_bytes:,}"),
        ],
    )


def op_label(op: ArkOp) -> str:
    virtual = "  (virtual)" if op.is_virtual else ""
    return f"{op.type} {op.name}{virtual}".strip()


def tensor_label(tensor: ArkTensor) -> str:
    return f"t{tensor.id}  {tensor.dtype} {dims(tensor.shape)}  buf {tensor.buffer.id}"


def arg_value(arg: ArkArg) -> str:
    if arg.type == "TENSOR" and isinstance(arg.value, ArkTensor):
        return "tensor " + tensor_label(arg.value)
    if arg.type == "OFFSET" and isinstance(arg.value, tuple):
        return f"buffer {arg.value[0]} + {arg.value[1]} B"
    if arg.type == "DIMS":
        return dims(arg.value)
    return str(arg.value).lower() if isinstance(arg.value, bool) else str(arg.value)
