"""A Core ML `.mlmodel` protobuf without its weights: the wire walk (explorer.protobuf_wire) with WeightParams as its
leaf. A NeuralNetwork holds every layer's weights in its spec (floatValue, float16Value, rawValue,
int8RawValue); each over STRIP_BYTES is dropped and its place noted in a field no Core ML version defines
(LEFT_FIELD, kept by protobuf as an unknown field), so the views show its size and kind without the bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.formats.coreml.proto import proto_module
from explorer.protobuf_wire import (
    LENGTH_DELIMITED,
    STRIP_BYTES,
    Buffer,
    FileWindow,
    Unreadable,
    Walk,
    body,
    bytes_field,
    leaf_fields,
    strip_leaves,
)

LEFT_FIELD = 2**29 - 1  # the highest field number protobuf allows: never one of Core ML's
STORED_AS = {1: "float32", 2: "float16", 30: "raw", 31: "int8"}  # WeightParams' value fields, as the views name them


@dataclass(frozen=True)
class LeftInFile:
    """A weight's values the walk left in the file: what they are stored as, and where."""

    stored_as: str
    offset: int
    length: int


def strip_weights(buffer: bytes | FileWindow, stamp: str, *, checked: bool = False) -> Walk:
    """The Model in `buffer` with every WeightParams' values over STRIP_BYTES left in the file, noted by LEFT_FIELD;
    `stamp` (the file's size and mtime) goes in each note, so a note only counts for the file it was made from."""
    model_pb2 = proto_module("Model_pb2")
    return strip_leaves(buffer, model_pb2.Model.DESCRIPTOR, model_pb2.WeightParams.DESCRIPTOR, _weights,
                        stamp=stamp, checked=checked)  # fmt: skip


def _weights(buffer: Buffer, start: int, end: int, out: bytearray, path: str, walk: Walk) -> None:
    """One WeightParams: its large value fields dropped, a note for each; cut short, it keeps what came before."""
    descriptor = proto_module("Model_pb2").WeightParams.DESCRIPTOR
    kept, notes = bytearray(), []
    try:
        for field_start, _, pos, number, wire in leaf_fields(buffer, start, end, descriptor, path):
            if wire == LENGTH_DELIMITED and number in STORED_AS:
                first, last = body(buffer, field_start, end)
                if last - first > STRIP_BYTES:
                    notes.append(f"{number}:{first}:{last - first}:{walk.stamp}")
                    continue
            kept += buffer[field_start:pos]
    except Unreadable as error:
        walk.problems.append(error.args)
    out += kept
    for note in notes:
        out += bytes_field(LEFT_FIELD, note.encode())


def left_in_file(weights: Any, stamp: str) -> list[LeftInFile]:
    """The values of this WeightParams the walk of the file with this stamp left in it (none for a file parsed as
    it is: a note the file itself carries, or one made for another file, is not believed)."""
    if not stamp:
        return []
    from google.protobuf.unknown_fields import UnknownFieldSet

    found = []
    for unknown in UnknownFieldSet(weights):
        if unknown.field_number != LEFT_FIELD or unknown.wire_type != LENGTH_DELIMITED:
            continue
        text = bytes(unknown.data).decode("utf-8", "replace")
        number, offset, length, made_for = [*text.split(":", 3), "", "", ""][:4]
        numbers = number.isdigit() and offset.isdigit() and length.isdigit()
        if made_for == stamp and numbers and int(number) in STORED_AS:
            found.append(LeftInFile(STORED_AS[int(number)], int(offset), int(length)))
    return found
