"""An ONNX file's protobuf without its weights: a walk over the wire format that copies everything but the bytes
of large tensors, which stay in the file and are read only when a user asks for them.

A tensor whose stored bytes are over STRIP_BYTES is rewritten as data in the model file itself: its bytes are
dropped and it gains `data_location = EXTERNAL` with `location` (the file's name), `offset`, `length` and the
key INLINE, so everything that reads external weights (on demand, bounded by the dims) reads these the same
way, and shape inference sees the dims without the bytes. What the walk cannot read (a length past the end of
its message or the file, a truncated varint, a field of the wrong wire type) is left out with one located
problem each; what was valid around it is kept.

The walk only descends into the messages that can hold a tensor (a model's graphs and functions, a graph's
nodes and initializers, a node's attributes, a tensor), and only when a message is bigger than STRIP_BYTES:
nothing smaller can hold bytes worth leaving out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from onnx import ModelProto, TensorProto

MAX_DEPTH = 100  # messages inside messages, as protobuf's own parser allows
STRIP_BYTES = 4096  # bytes of one tensor kept in the parsed model; shape inference reads smaller ones as data
INLINE = "ir-explorer:inline"  # external_data key: the data lies in the model file itself (its field's name)
STAMP = "ir-explorer:file"  # external_data key: the model file's size and mtime when it was walked
LENGTH_DELIMITED, VARINT, FIXED64, FIXED32 = 2, 0, 1, 5
# typed repeated fields whose packed bytes are the tensor's raw bytes (little-endian): float_data for float32,
# double_data for float64; the varint-packed ones (int32_data, int64_data, uint64_data) are not
_RAW_LIKE = {4: (TensorProto.FLOAT, TensorProto.COMPLEX64), 10: (TensorProto.DOUBLE, TensorProto.COMPLEX128)}
_RAW_DATA, _DATA_TYPE, _EXTERNAL_DATA, _DATA_LOCATION = 9, 2, 13, 14


class FileWindow:
    """The bytes of an open file as the walk reads them: by `os.pread`, a CHUNK around what is asked at a time, so
    only what the walk reads is ever read. A memory map would do the same with less code, but a touched page
    maps the page cache's whole folio (megabytes of the weights around a tensor's header on recent kernels)."""

    CHUNK = 1 << 16

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size
        self.base, self.chunk = 0, b""

    def __len__(self) -> int:
        return self.size

    def _load(self, pos: int) -> None:
        self.base, self.chunk = pos, os.pread(self.fd, self.CHUNK, pos)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop = index.start or 0, min(index.stop if index.stop is not None else self.size, self.size)
            if stop - start > self.CHUNK:
                return os.pread(self.fd, stop - start, start)
            if not (self.base <= start and stop <= self.base + len(self.chunk)):
                self._load(start)
            return self.chunk[start - self.base : stop - self.base]
        if not self.base <= index < self.base + len(self.chunk):
            if not 0 <= index < self.size:
                raise IndexError(index)
            self._load(index)
        return self.chunk[index - self.base]


Buffer = memoryview | FileWindow  # what the walk reads: a whole file in memory, or read as it goes


@dataclass
class Walk:
    """What a walk left in the file and what it could not read."""

    data: bytes = b""  # the model without the large tensors' bytes
    problems: list[tuple[str, str]] = field(default_factory=list)  # (location, what is wrong)
    checked: bool = False  # each message copied as it is was parsed alone first (and left out if it did not parse)
    stamp: str = ""  # written beside each tensor left in the file


class _Unreadable(Exception):
    """(location, message): the rest of the message the walk is in cannot be read."""


def strip_weights(buffer: bytes | memoryview | FileWindow, file_name: str, stamp: str = "",
                  checked: bool = False) -> Walk:  # fmt: skip
    """The ModelProto in `buffer` (the whole file, or read as the walk goes) with every tensor over STRIP_BYTES
    pointing into the file instead of holding its bytes; `stamp` (the file's size and mtime) goes beside each, for
    a read of them to check. `checked`: for a file whose walk did not parse (a length that lies inside a message
    leaves garbage after it), each message the walk would copy as it is is parsed alone first, and left out with a
    problem when it does not parse."""
    walk = Walk(checked=checked, stamp=stamp)
    out = bytearray()
    view = buffer if isinstance(buffer, FileWindow) else memoryview(buffer)
    _message(view, 0, len(buffer), ModelProto.DESCRIPTOR, out, "", walk, file_name, 0)
    walk.data = bytes(out)
    return walk


@cache
def _holds_tensors(descriptor: Descriptor) -> bool:
    """Whether a message of this type can hold a TensorProto, itself or at any depth."""
    return _reaches(descriptor, frozenset())


def _reaches(descriptor: Descriptor, seen: frozenset[str]) -> bool:
    if descriptor.full_name == TensorProto.DESCRIPTOR.full_name:
        return True
    if descriptor.full_name in seen:
        return False
    seen = seen | {descriptor.full_name}
    return any(f.message_type is not None and _reaches(f.message_type, seen) for f in descriptor.fields)


def _varint(buffer: Buffer, pos: int, end: int, where: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end:
            raise _Unreadable(where, "a varint runs past the end of its message")
        byte = buffer[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _Unreadable(where, "a varint is longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    """A number as protobuf writes it on the wire (what a rewritten length or key is)."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _name(descriptor: Descriptor, number: int) -> str:
    found = descriptor.fields_by_number.get(number)
    return found.name if found is not None else f"field {number}"


@cache
def _fields(descriptor: Descriptor) -> dict[int, tuple[FieldDescriptor, int, bool]]:
    """Per field number: the field, the wire type it has, and whether the walk descends into it."""
    return {number: (found, _wire_of(found), found.message_type is not None and _holds_tensors(found.message_type))
            for number, found in descriptor.fields_by_number.items()}  # fmt: skip


def _message(buffer: Buffer, start: int, end: int, descriptor: Descriptor, out: bytearray, path: str,
             walk: Walk, file_name: str, depth: int) -> None:  # fmt: skip
    """Copy the fields of one message from buffer[start:end] into `out`, descending where a tensor may be."""
    fields = _fields(descriptor)
    counts: dict[int, int] = {}
    pos = copied = start  # buffer[copied:pos] is still to be copied as it is
    while pos < end:
        field_start = pos
        key = buffer[pos]  # one byte for every ONNX field number below 16
        if key < 0x80:
            pos += 1
        else:
            try:
                key, pos = _varint(buffer, pos, end, _join(path, "(a field's key)"))
            except _Unreadable as error:
                walk.problems.append(error.args)
                break
        number, wire = key >> 3, key & 7
        if number == 0:  # no protobuf field has number 0: what follows is not a message
            walk.problems.append((_join(path, "(a field's key)"), "names field 0, which no message has"))
            pos = field_start
            break
        counts[number] = counts.get(number, 0) + 1
        found, expected, descend = fields.get(number, (None, -1, False))
        if wire == LENGTH_DELIMITED and pos < end and buffer[pos] < 0x80 and pos + 1 + buffer[pos] <= end:
            pos += 1 + buffer[pos]  # a short length-delimited field: most nodes, names and attributes
        else:
            try:
                pos = _skip(buffer, pos, end, wire, "")
            except _Unreadable as error:
                where = _where(path, descriptor, number, counts)
                if not (descend and wire == LENGTH_DELIMITED) or not str(error.args[1]).startswith("runs past"):
                    walk.problems.append((where, error.args[1]))
                    pos = field_start  # nothing of it is copied
                    break
                pos = end  # a message cut short (the file ends inside it): what it holds up to the end is read
                said = len(walk.problems)
                out += buffer[copied:field_start]
                assert found is not None
                _descend(buffer, field_start, end, key, found, out, where, walk, file_name, depth)
                if len(walk.problems) == said:
                    walk.problems.append((where, error.args[1]))
                copied = pos
                break
        if found is not None and expected != wire and not (wire == LENGTH_DELIMITED and _packable(found)):
            walk.problems.append((_where(path, descriptor, number, counts),
                                  f"has wire type {wire} where {expected} was expected: left out"))  # fmt: skip
            out += buffer[copied:field_start]
            copied = pos
            continue
        if descend and wire == LENGTH_DELIMITED and pos - field_start > STRIP_BYTES:
            assert found is not None
            out += buffer[copied:field_start]
            _descend(buffer, field_start, pos, key, found, out, _where(path, descriptor, number, counts), walk,
                     file_name, depth)  # fmt: skip
            copied = pos
        elif walk.checked and wire == LENGTH_DELIMITED and found is not None and found.message_type is not None:
            body_start, body_end = _body(buffer, field_start, pos)
            if not _parses(found.message_type, buffer[body_start:body_end]):
                walk.problems.append((_where(path, descriptor, number, counts),
                                      f"is not a valid {found.message_type.name}: left out"))  # fmt: skip
                out += buffer[copied:field_start]
                copied = pos
    out += buffer[copied:pos]


def _parses(descriptor: Descriptor, body: Any) -> bool:
    from google.protobuf.message import DecodeError
    from google.protobuf.message_factory import GetMessageClass

    try:
        GetMessageClass(descriptor)().ParseFromString(bytes(body))
    except (DecodeError, RecursionError, ValueError):
        return False
    return True


def _where(path: str, descriptor: Descriptor, number: int, counts: dict[int, int]) -> str:
    """The location of the field just read: its name, with its index when it repeats."""
    found = descriptor.fields_by_number.get(number)
    return _join(path, _name(descriptor, number) + (f"[{counts[number] - 1}]" if _repeated(found) else ""))


def _descend(buffer: Buffer, field_start: int, end: int, key: int, found: FieldDescriptor, out: bytearray,
             where: str, walk: Walk, file_name: str, depth: int) -> None:  # fmt: skip
    """A message field walked and written again (its length as rewritten), its body cut at `end` if it runs on;
    left out past MAX_DEPTH."""
    if depth >= MAX_DEPTH:
        walk.problems.append((where, f"is nested deeper than {MAX_DEPTH} messages: left out"))
        return
    _, pos = _varint(buffer, field_start, end, where)
    length, body_start = _varint(buffer, pos, end, where)
    body_end = min(body_start + length, end)
    inner = bytearray()
    if found.message_type.full_name == TensorProto.DESCRIPTOR.full_name:
        _tensor(buffer, body_start, body_end, inner, where, walk, file_name)
    else:
        _message(buffer, body_start, body_end, found.message_type, inner, where, walk, file_name, depth + 1)
    out += encode_varint(key)
    out += encode_varint(len(inner))
    out += inner


def _tensor(buffer: Buffer, start: int, end: int, out: bytearray, path: str, walk: Walk,
            file_name: str) -> None:  # fmt: skip
    """A tensor's fields; its raw bytes (raw_data, or float_data/double_data packed as raw) over STRIP_BYTES
    become a pointer into the file. A tensor cut short keeps the fields read before the cut, not its data."""
    data_type, external, data = 0, False, None  # data: (field number, first byte, end) of the bytes to leave
    pos = start
    kept = bytearray()
    descriptor = TensorProto.DESCRIPTOR
    while pos < end:
        field_start = pos
        try:
            key, value_start = _varint(buffer, pos, end, _join(path, "(a field's key)"))
            number, wire = key >> 3, key & 7
            if number == 0:
                raise _Unreadable(_join(path, "(a field's key)"), "names field 0, which no message has")
            pos = _skip(buffer, value_start, end, wire, _join(path, _name(descriptor, number)))
            if wire == VARINT and number in (_DATA_TYPE, _DATA_LOCATION):
                value = _varint(buffer, value_start, pos, path)[0]
                data_type = value if number == _DATA_TYPE else data_type
                external = value == TensorProto.EXTERNAL if number == _DATA_LOCATION else external
        except _Unreadable as error:
            walk.problems.append(error.args)
            out += kept  # without the data: what comes after the cut cannot be placed
            return
        if wire == LENGTH_DELIMITED and (number == _RAW_DATA or number in _RAW_LIKE):
            body_start, body_end = _body(buffer, field_start, end)
            if body_end - body_start > STRIP_BYTES:
                data = (number, body_start, body_end)
                continue
        kept += buffer[field_start:pos]
    if data is None or external or (data[0] in _RAW_LIKE and data_type not in _RAW_LIKE[data[0]]):
        out += buffer[start:end] if data is None or external else kept + _field_bytes(buffer, data)
        return
    _, first, last = data
    out += kept
    out += encode_varint(_DATA_LOCATION << 3 | VARINT) + encode_varint(TensorProto.EXTERNAL)
    for entry_key, text in (("location", file_name), ("offset", str(first)), ("length", str(last - first)),
                            (INLINE, "raw_data" if data[0] == _RAW_DATA else _name(descriptor, data[0])),
                            (STAMP, walk.stamp)):  # fmt: skip
        entry = _string_field(1, entry_key) + _string_field(2, text)
        out += encode_varint(_EXTERNAL_DATA << 3 | LENGTH_DELIMITED) + encode_varint(len(entry)) + entry


def _field_bytes(buffer: Buffer, data: tuple[int, int, int]) -> bytes:
    number, first, last = data
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(last - first) + bytes(buffer[first:last])


def _string_field(number: int, text: str) -> bytes:
    encoded = text.encode("utf-8")
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(encoded)) + encoded


def _skip(buffer: Buffer, pos: int, end: int, wire: int, where: str) -> int:
    """Where the field whose key ends at `pos` ends; _Unreadable when it runs past `end` or has no known form."""
    if wire == VARINT:
        return _varint(buffer, pos, end, where)[1]
    if wire in (FIXED64, FIXED32):
        stop = pos + (8 if wire == FIXED64 else 4)
    elif wire == LENGTH_DELIMITED:
        length, pos = _varint(buffer, pos, end, where)
        stop = pos + length
        if stop > end:
            raise _Unreadable(where, f"runs past the end of {'the file' if end == len(buffer) else 'its message'} "
                              f"({length:,} bytes from byte {pos:,})")  # fmt: skip
        return stop
    else:
        raise _Unreadable(where, f"has wire type {wire}, which no ONNX field has")
    if stop > end:
        raise _Unreadable(where, "runs past the end of its message")
    return stop


def _body(buffer: Buffer, field_start: int, end: int) -> tuple[int, int]:
    """The first and last byte of a length-delimited field's body (the field already checked by _skip)."""
    _, pos = _varint(buffer, field_start, end, "")
    length, pos = _varint(buffer, pos, end, "")
    return pos, pos + length


def _wire_of(found: FieldDescriptor | None) -> int:
    if found is None:
        return -1
    if found.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return LENGTH_DELIMITED
    if found.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64):
        return FIXED64
    if found.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_SFIXED32):
        return FIXED32
    return VARINT


def _repeated(found: FieldDescriptor | None) -> bool:
    return found is not None and found.is_repeated


def _packable(found: FieldDescriptor) -> bool:
    """A repeated number field, which may come packed in one length-delimited field."""
    return _repeated(found) and _wire_of(found) != LENGTH_DELIMITED


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def left_in_file(tensor: TensorProto) -> dict[str, str] | None:
    """The external_data entries of a tensor whose bytes the walk left in the model file, else None."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return None
    info = {entry.key: entry.value for entry in tensor.external_data}
    return info if INLINE in info else None
