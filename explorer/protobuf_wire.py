"""A protobuf message copied field by field on the wire, except the bytes of its large leaves, which stay in the
file and are read only when a user asks for them (ONNX's tensors, Core ML's weights: formats/*/wire.py).

The walk descends only into the messages that can hold a leaf, and only when a message is bigger than
STRIP_BYTES: nothing smaller can hold bytes worth leaving out. The format's leaf handler rewrites each leaf
it meets (its large fields dropped, a note of where they lie added). What the walk cannot read (a length past
the end of its message or the file, a truncated varint, field 0, a field of the wrong wire type) is left out with
one located problem each; what was valid around it is kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from explorer.errors import LoadError
from explorer.protobuf_guard import ensure_messages_fit

MAX_DEPTH = 100  # messages inside messages, as protobuf's own parser allows
WHOLE_BYTES = 32 << 20  # files up to this size are read whole before the walk; larger ones as the walk goes
DIRECT_BYTES = 16 << 20  # files up to this size are parsed as they are (weights and all) when they parse
MAX_BYTES = 2**31 - 1  # protobuf's own limit for one message: the message besides its leaves must be under it
STRIP_BYTES = 4096  # bytes of one leaf kept in the parsed message (ONNX's shape inference reads smaller ones)
LENGTH_DELIMITED, VARINT, FIXED64, FIXED32 = 2, 0, 1, 5


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

    data: bytes = b""  # the message without the large leaves' bytes
    problems: list[tuple[str, str]] = field(default_factory=list)  # (location, what is wrong)
    checked: bool = False  # each message copied as it is was parsed alone first (and left out if it did not parse)
    stamp: str = ""  # the file's size and mtime, written beside each leaf left in the file


class Unreadable(Exception):
    """(location, message): the rest of the message the walk is in cannot be read."""


# a leaf's handler: (buffer, its body's first byte, its end, out, its location, the walk) → its body rewritten
LeafHandler = Callable[[Buffer, int, int, bytearray, str, Walk], None]


def strip_leaves(buffer: bytes | memoryview | FileWindow, root: Descriptor, leaf: Descriptor,
                 handle_leaf: LeafHandler, *, stamp: str = "", checked: bool = False) -> Walk:  # fmt: skip
    """The `root` message in `buffer` (the whole file, or read as the walk goes) with every `leaf` message over
    STRIP_BYTES rewritten by `handle_leaf`. `checked`: for a file whose walk did not parse (a length that lies
    inside a message leaves garbage after it), each message the walk would copy as it is is parsed alone first,
    and left out with a problem when it does not parse."""
    walk = Walk(checked=checked, stamp=stamp)
    out = bytearray()
    view = buffer if isinstance(buffer, FileWindow) else memoryview(buffer)
    _Walker(view, leaf, handle_leaf, walk).message(0, len(buffer), root, out, "", 0)
    walk.data = bytes(out)
    return walk


def file_source(fd: int, size: int) -> bytes | FileWindow:
    """What a walk reads a file from: a small file read whole (the walk indexes it faster than it reads a large
    one piece by piece), a larger one read as the walk goes."""
    if size > WHOLE_BYTES:
        return FileWindow(fd, size)
    pieces, read = [], 0
    while read < size:
        piece = os.pread(fd, size - read, read)
        if not piece:
            break
        pieces.append(piece)
        read += len(piece)
    return b"".join(pieces)


def parse_stripped(path: Path, source: bytes | FileWindow, message: Callable[[], Message], what: str,
                   strip: Callable[[bool], Walk]) -> tuple[Any, Walk]:  # fmt: skip
    """The message in `source` without its large leaves' bytes (`strip(checked)` walks it), parsed; walked again
    checking each message when the first walk does not parse (a length that lies inside a message leaves garbage
    after it). A file up to DIRECT_BYTES is parsed whole when it parses: its leaves cost no more than its bytes,
    and the walk would cost a pass over every message (BENCHMARKS.md, the weights floors). `what`: the format's
    name in the LoadError ("ONNX")."""
    from google.protobuf.message import DecodeError

    def attempts() -> Iterator[Walk]:
        if isinstance(source, bytes) and len(source) <= DIRECT_BYTES:  # small: as it is, when it parses
            yield Walk(data=source)
        for checked in (False, True):
            yield strip(checked)

    error: Exception | None = None
    root = message()
    for walk in attempts():
        if len(walk.data) > MAX_BYTES:
            raise LoadError(path, "", f"{len(walk.data):,} bytes besides the weights is over protobuf's 2 GiB limit")
        parsed = message()
        ensure_messages_fit(path, walk.data, parsed.DESCRIPTOR, f"{what} model")  # a message costs ~150 B parsed
        try:
            parsed.ParseFromString(walk.data)
        except (DecodeError, RecursionError, ValueError) as found:
            error = found
            continue
        return parsed, walk
    raise LoadError(path, root.DESCRIPTOR.name, f"not a valid {what} protobuf (truncated or not {what}): {error}")


@cache
def _holds(descriptor: Descriptor, leaf_name: str) -> bool:
    """Whether a message of this type can hold the leaf, itself or at any depth."""
    return _reaches(descriptor, leaf_name, frozenset())


def _reaches(descriptor: Descriptor, leaf_name: str, seen: frozenset[str]) -> bool:
    if descriptor.full_name == leaf_name:
        return True
    if descriptor.full_name in seen:
        return False
    seen = seen | {descriptor.full_name}
    return any(f.message_type is not None and _reaches(f.message_type, leaf_name, seen) for f in descriptor.fields)


@cache
def _fields(descriptor: Descriptor, leaf_name: str) -> dict[int, tuple[FieldDescriptor, int, bool]]:
    """Per field number: the field, the wire type it has, and whether the walk descends into it."""
    return {number: (found, wire_of(found), found.message_type is not None and _holds(found.message_type, leaf_name))
            for number, found in descriptor.fields_by_number.items()}  # fmt: skip


class _Walker:
    """One walk's fixed parts: the bytes, the leaf type and its handler, and what is found."""

    def __init__(self, buffer: Buffer, leaf: Descriptor, handle_leaf: LeafHandler, walk: Walk) -> None:
        self.buffer, self.leaf_name, self.handle_leaf, self.walk = buffer, leaf.full_name, handle_leaf, walk

    def message(self, start: int, end: int, descriptor: Descriptor, out: bytearray, path: str, depth: int) -> None:
        """Copy the fields of one message from buffer[start:end] into `out`, descending where a leaf may be."""
        buffer, walk = self.buffer, self.walk
        fields = _fields(descriptor, self.leaf_name)
        counts: dict[int, int] = {}
        pos = copied = start  # buffer[copied:pos] is still to be copied as it is
        while pos < end:
            field_start = pos
            key = buffer[pos]  # one byte for every field number below 16
            if key < 0x80:
                pos += 1
            else:
                try:
                    key, pos = read_varint(buffer, pos, end, join(path, "(a field's key)"))
                except Unreadable as error:
                    walk.problems.append(error.args)
                    break
            number, wire = key >> 3, key & 7
            if number == 0:  # no protobuf field has number 0: what follows is not a message
                walk.problems.append((join(path, "(a field's key)"), "names field 0, which no message has"))
                pos = field_start
                break
            counts[number] = counts.get(number, 0) + 1
            found, expected, descend = fields.get(number, (None, -1, False))
            if wire == LENGTH_DELIMITED and pos < end and buffer[pos] < 0x80 and pos + 1 + buffer[pos] <= end:
                pos += 1 + buffer[pos]  # a short length-delimited field: most nodes, names and attributes
            else:
                try:
                    pos = skip(buffer, pos, end, wire, "")
                except Unreadable as error:
                    where = located(path, descriptor, number, counts)
                    if not (descend and wire == LENGTH_DELIMITED) or not str(error.args[1]).startswith("runs past"):
                        walk.problems.append((where, error.args[1]))
                        pos = field_start  # nothing of it is copied
                        break
                    pos = end  # a message cut short (the file ends inside it): what it holds up to the end is read
                    said = len(walk.problems)
                    out += buffer[copied:field_start]
                    assert found is not None
                    self.descend(field_start, end, key, found, out, where, depth)
                    if len(walk.problems) == said:
                        walk.problems.append((where, error.args[1]))
                    copied = pos
                    break
            if found is not None and expected != wire and not (wire == LENGTH_DELIMITED and _packable(found)):
                walk.problems.append((located(path, descriptor, number, counts),
                                      f"has wire type {wire} where {expected} was expected: left out"))  # fmt: skip
                out += buffer[copied:field_start]
                copied = pos
                continue
            if descend and wire == LENGTH_DELIMITED and pos - field_start > STRIP_BYTES:
                assert found is not None
                out += buffer[copied:field_start]
                self.descend(field_start, pos, key, found, out, located(path, descriptor, number, counts), depth)
                copied = pos
            elif walk.checked and wire == LENGTH_DELIMITED and found is not None and found.message_type is not None:
                body_start, body_end = body(buffer, field_start, pos)
                if not _parses(found.message_type, buffer[body_start:body_end]):
                    walk.problems.append((located(path, descriptor, number, counts),
                                          f"is not a valid {found.message_type.name}: left out"))  # fmt: skip
                    out += buffer[copied:field_start]
                    copied = pos
        out += buffer[copied:pos]

    def descend(self, field_start: int, end: int, key: int, found: FieldDescriptor, out: bytearray, where: str,
                depth: int) -> None:  # fmt: skip
        """A message field walked and written again (its length as rewritten), its body cut at `end` if it runs
        on; left out past MAX_DEPTH."""
        if depth >= MAX_DEPTH:
            self.walk.problems.append((where, f"is nested deeper than {MAX_DEPTH} messages: left out"))
            return
        _, pos = read_varint(self.buffer, field_start, end, where)
        length, body_start = read_varint(self.buffer, pos, end, where)
        body_end = min(body_start + length, end)
        inner = bytearray()
        if found.message_type.full_name == self.leaf_name:
            self.handle_leaf(self.buffer, body_start, body_end, inner, where, self.walk)
        else:
            self.message(body_start, body_end, found.message_type, inner, where, depth + 1)
        out += encode_varint(key)
        out += encode_varint(len(inner))
        out += inner


def leaf_fields(buffer: Buffer, start: int, end: int, descriptor: Descriptor,
                path: str) -> Iterator[tuple[int, int, int, int, int]]:  # fmt: skip
    """Each field of one leaf message, for its handler: (its first byte, its value's first byte, its end, its
    number, its wire type); Unreadable at the first one that cannot be read."""
    pos = start
    while pos < end:
        field_start = pos
        key, value_start = read_varint(buffer, pos, end, join(path, "(a field's key)"))
        number, wire = key >> 3, key & 7
        if number == 0:
            raise Unreadable(join(path, "(a field's key)"), "names field 0, which no message has")
        pos = skip(buffer, value_start, end, wire, join(path, field_name(descriptor, number)))
        yield field_start, value_start, pos, number, wire


def _parses(descriptor: Descriptor, message_body: Any) -> bool:
    from google.protobuf.message import DecodeError
    from google.protobuf.message_factory import GetMessageClass

    try:
        GetMessageClass(descriptor)().ParseFromString(bytes(message_body))
    except (DecodeError, RecursionError, ValueError):
        return False
    return True


def read_varint(buffer: Buffer, pos: int, end: int, where: str) -> tuple[int, int]:
    """The varint at `pos` and where it ends; Unreadable when it runs past `end` or over 10 bytes."""
    value = shift = 0
    while True:
        if pos >= end:
            raise Unreadable(where, "a varint runs past the end of its message")
        byte = buffer[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise Unreadable(where, "a varint is longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    """A number as protobuf writes it on the wire (what a rewritten length or key is)."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def skip(buffer: Buffer, pos: int, end: int, wire: int, where: str) -> int:
    """Where the field whose key ends at `pos` ends; Unreadable when it runs past `end` or has no known form."""
    if wire == VARINT:
        return read_varint(buffer, pos, end, where)[1]
    if wire in (FIXED64, FIXED32):
        stop = pos + (8 if wire == FIXED64 else 4)
    elif wire == LENGTH_DELIMITED:
        length, pos = read_varint(buffer, pos, end, where)
        stop = pos + length
        if stop > end:
            raise Unreadable(where, f"runs past the end of {'the file' if end == len(buffer) else 'its message'} "
                             f"({length:,} bytes from byte {pos:,})")  # fmt: skip
        return stop
    else:
        raise Unreadable(where, f"has wire type {wire}, which no field of this format has")
    if stop > end:
        raise Unreadable(where, "runs past the end of its message")
    return stop


def body(buffer: Buffer, field_start: int, end: int) -> tuple[int, int]:
    """The first and last byte of a length-delimited field's body (the field already checked by `skip`)."""
    _, pos = read_varint(buffer, field_start, end, "")
    length, pos = read_varint(buffer, pos, end, "")
    return pos, pos + length


def bytes_field(number: int, value: bytes) -> bytes:
    """A length-delimited field as it is written on the wire."""
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(value)) + value


def field_name(descriptor: Descriptor, number: int) -> str:
    found = descriptor.fields_by_number.get(number)
    return found.name if found is not None else f"field {number}"


def located(path: str, descriptor: Descriptor, number: int, counts: dict[int, int]) -> str:
    """The location of the field just read: its name, with its index when it repeats."""
    found = descriptor.fields_by_number.get(number)
    return join(path, field_name(descriptor, number) + (f"[{counts[number] - 1}]" if _repeated(found) else ""))


def wire_of(found: FieldDescriptor | None) -> int:
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
    return _repeated(found) and wire_of(found) != LENGTH_DELIMITED


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
