"""What a protobuf's first bytes say about which message it is, as Netron tells ONNX from Core ML without trusting
the file's name: the top-level fields' numbers and wire types, read from the head of the file without parsing it
(a length-delimited field that runs past the head ends the reading, not the match)."""

from __future__ import annotations

VARINT, FIXED64, DELIMITED, FIXED32 = 0, 1, 2, 5


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
    return None


def top_level_fields(head: bytes) -> list[tuple[int, int, int]] | None:
    """(field number, wire type, value or length) of each top-level field that starts within `head`; None when
    the bytes are not a protobuf message (a group, a reserved wire type, field 0, a varint that never ends)."""
    fields: list[tuple[int, int, int]] = []
    at = 0
    while at < len(head):
        tag = _varint(head, at)
        if tag is None:
            return fields if fields and len(head) - at < 10 else None  # a tag cut by the head's end
        key, at = tag
        number, wire = key >> 3, key & 7
        if number == 0 or wire not in (VARINT, FIXED64, DELIMITED, FIXED32):
            return None
        if wire == VARINT:
            value = _varint(head, at)
            if value is None:
                return fields if len(head) - at < 10 else None
            fields.append((number, wire, value[0]))
            at = value[1]
        elif wire == DELIMITED:
            length = _varint(head, at)
            if length is None:
                return fields if len(head) - at < 10 else None
            fields.append((number, wire, length[0]))
            at = length[1] + length[0]  # past the head: the reading ends here
        else:
            fields.append((number, wire, 0))
            at += 8 if wire == FIXED64 else 4
    return fields


ONNX_MODEL = {1: VARINT, 2: DELIMITED, 3: DELIMITED, 4: DELIMITED, 5: VARINT, 6: DELIMITED, 7: DELIMITED,
              8: DELIMITED, 14: DELIMITED, 20: DELIMITED, 25: DELIMITED}  # fmt: skip  (onnx.proto's ModelProto)
ONNX_ONLY = frozenset(ONNX_MODEL) - {1, 2}


def looks_like_onnx(head: bytes) -> bool:
    """A ModelProto: ir_version first, then only ModelProto's fields, at least one that Core ML's Model lacks."""
    fields = top_level_fields(head)
    if not fields or fields[0][:2] != (1, VARINT) or not 1 <= fields[0][2] <= 64:
        return False
    return all(ONNX_MODEL.get(n) == w for n, w, _ in fields) and any(n in ONNX_ONLY for n, _, _ in fields)


def looks_like_coreml(head: bytes) -> bool:
    """A Core ML Model: specificationVersion first, then its description, isUpdatable and one model type (the
    fields from 200 on: neuralNetwork, mlProgram, pipeline, ...), nothing ONNX's ModelProto has alone."""
    fields = top_level_fields(head)
    if not fields or fields[0][:2] != (1, VARINT) or not 1 <= fields[0][2] <= 64:
        return False
    known = all((n, w) in ((1, VARINT), (2, DELIMITED), (10, VARINT)) or (n >= 200 and w == DELIMITED)
                for n, w, _ in fields)  # fmt: skip
    return known and any(n == 2 or n >= 200 for n, _, _ in fields)
