"""An ONNX file's protobuf without its weights: the wire walk (explorer.protobuf_wire) with TensorProto as its leaf.

A tensor whose stored bytes are over STRIP_BYTES is rewritten as data in the model file itself: its bytes are
dropped and it gains `data_location = EXTERNAL` with `location` (the file's name), `offset`, `length` and the
key INLINE, so everything that reads external weights (on demand, bounded by the dims) reads these the same
way, and shape inference sees the dims without the bytes.
"""

from __future__ import annotations

from functools import partial

from onnx import ModelProto, TensorProto

from explorer.protobuf_wire import (
    LENGTH_DELIMITED,
    STRIP_BYTES,
    VARINT,
    Buffer,
    FileWindow,
    Unreadable,
    Walk,
    body,
    bytes_field,
    encode_varint,
    field_name,
    leaf_fields,
    read_varint,
    strip_leaves,
)

__all__ = ["STRIP_BYTES", "FileWindow", "Walk", "encode_varint", "left_in_file", "strip_weights"]

INLINE = "ir-explorer:inline"  # external_data key: the data lies in the model file itself (its field's name)
STAMP = "ir-explorer:file"  # external_data key: the model file's size and mtime when it was walked
# typed repeated fields whose packed bytes are the tensor's raw bytes (little-endian): float_data for float32,
# double_data for float64; the varint-packed ones (int32_data, int64_data, uint64_data) are not
_RAW_LIKE = {4: (TensorProto.FLOAT, TensorProto.COMPLEX64), 10: (TensorProto.DOUBLE, TensorProto.COMPLEX128)}
_RAW_DATA, _DATA_TYPE, _EXTERNAL_DATA, _DATA_LOCATION = 9, 2, 13, 14


def strip_weights(buffer: bytes | memoryview | FileWindow, file_name: str, stamp: str = "",
                  checked: bool = False) -> Walk:  # fmt: skip
    """The ModelProto in `buffer` (the whole file, or read as the walk goes) with every tensor over STRIP_BYTES
    pointing into the file instead of holding its bytes; `stamp` (the file's size and mtime) goes beside each, for
    a read of them to check. `checked`: see explorer.protobuf_wire.strip_leaves."""
    return strip_leaves(buffer, ModelProto.DESCRIPTOR, TensorProto.DESCRIPTOR, partial(_tensor, file_name=file_name),
                        stamp=stamp, checked=checked)  # fmt: skip


def _tensor(buffer: Buffer, start: int, end: int, out: bytearray, path: str, walk: Walk, *,
            file_name: str) -> None:  # fmt: skip
    """A tensor's fields; its raw bytes (raw_data, or float_data/double_data packed as raw) over STRIP_BYTES
    become a pointer into the file. A tensor cut short keeps the fields read before the cut, not its data."""
    data_type, external, data = 0, False, None  # data: (field number, first byte, end) of the bytes to leave
    kept = bytearray()
    descriptor = TensorProto.DESCRIPTOR
    try:
        for field_start, value_start, pos, number, wire in leaf_fields(buffer, start, end, descriptor, path):
            if wire == VARINT and number in (_DATA_TYPE, _DATA_LOCATION):
                value = read_varint(buffer, value_start, pos, path)[0]
                data_type = value if number == _DATA_TYPE else data_type
                external = value == TensorProto.EXTERNAL if number == _DATA_LOCATION else external
            if wire == LENGTH_DELIMITED and (number == _RAW_DATA or number in _RAW_LIKE):
                body_start, body_end = body(buffer, field_start, end)
                if body_end - body_start > STRIP_BYTES:
                    data = (number, body_start, body_end)
                    continue
            kept += buffer[field_start:pos]
    except Unreadable as error:
        walk.problems.append(error.args)
        out += kept  # without the data: what comes after the cut cannot be placed
        return
    if data is None or external or (data[0] in _RAW_LIKE and data_type not in _RAW_LIKE[data[0]]):
        kept_data = b"" if data is None or external else bytes_field(data[0], bytes(buffer[data[1] : data[2]]))
        out += buffer[start:end] if data is None or external else kept + kept_data
        return
    _, first, last = data
    out += kept
    out += encode_varint(_DATA_LOCATION << 3 | VARINT) + encode_varint(TensorProto.EXTERNAL)
    for entry_key, text in (("location", file_name), ("offset", str(first)), ("length", str(last - first)),
                            (INLINE, "raw_data" if data[0] == _RAW_DATA else field_name(descriptor, data[0])),
                            (STAMP, walk.stamp)):  # fmt: skip
        out += bytes_field(_EXTERNAL_DATA, bytes_field(1, entry_key.encode()) + bytes_field(2, text.encode()))


def left_in_file(tensor: TensorProto) -> dict[str, str] | None:
    """The external_data entries of a tensor whose bytes the walk left in the model file, else None."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return None
    info = {entry.key: entry.value for entry in tensor.external_data}
    return info if INLINE in info else None
