"""Refuse a protobuf file whose messages would not fit in memory, before parsing it.

A protobuf's cost in memory is per message, not per byte: an empty ONNX `NodeProto` takes 2 bytes of the file and
about 146 bytes once parsed (1,000,000 of them in 2 MB peak at 209 MiB), where a real model is mostly weights (a
raw byte string each, about its own size). So the guard counts the messages: it walks the wire format with the
message's descriptor (only fields typed as messages are entered; strings and raw data are skipped by their
length), and stops as soon as the count passes what is available. The walk is Python and costs about a second
for a million fields, so it runs only when even the worst case (a message every 2 bytes) might not fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer.errors import LoadError
from explorer.formatting import human_bytes
from explorer.memory_guard import BASE_BYTES, available_bytes, guard_off

BYTES_PER_MESSAGE = 200  # measured: 146 B parsed + what the readers index per node (tests/unit/test_memory_estimates)
SMALLEST_MESSAGE = 2  # a tag byte and a zero length


def ensure_messages_fit(path: Path, data: bytes, descriptor: Any, what: str) -> None:
    """A LoadError when parsing `data` (a message of `descriptor`) would take more than the memory available."""
    if guard_off():
        return
    available = available_bytes()
    if available is None:
        return
    budget = (available - BASE_BYTES - len(data)) // BYTES_PER_MESSAGE
    if len(data) // SMALLEST_MESSAGE <= budget:
        return  # even a file of nothing but empty messages fits
    count = count_messages(data, descriptor, stop_after=max(budget, 0))
    if count > budget:
        estimate = BASE_BYTES + len(data) + count * BYTES_PER_MESSAGE
        raise LoadError(path, "", f"opening this {human_bytes(len(data))} {what} needs more than "
                        f"{human_bytes(estimate)} of memory ({count:,}+ messages at {BYTES_PER_MESSAGE} bytes each), "
                        f"and {human_bytes(available)} is available: refused before the machine swaps (free memory, "
                        "or set IR_EXPLORER_MEMORY_GUARD=off to try anyway)")  # fmt: skip


def count_messages(data: bytes, descriptor: Any, stop_after: int | None = None) -> int:
    """How many messages `data` holds (itself included), walking only the fields its descriptors type as messages;
    stops early once past `stop_after`. A malformed stream ends the walk (the parser will say what is wrong)."""
    view = memoryview(data)
    count = 1
    stack = [(0, len(data), descriptor)]
    fields_of: dict[Any, dict[int, Any]] = {}
    while stack:
        at, end, current = stack.pop()
        fields = fields_of.get(current)
        if fields is None:
            fields = fields_of[current] = {f.number: f.message_type for f in current.fields if f.message_type}
        while at < end:
            key, at = _varint(view, at, end)
            if at < 0:
                break
            wire = key & 7
            if wire == 0:
                _, at = _varint(view, at, end)
            elif wire == 1:
                at += 8
            elif wire == 5:
                at += 4
            elif wire == 2:
                length, at = _varint(view, at, end)
                if at < 0 or at + length > end:
                    break
                inner = fields.get(key >> 3)
                if inner is not None:
                    count += 1
                    if stop_after is not None and count > stop_after:
                        return count
                    if inner.fields and length:
                        stack.append((at, at + length, inner))
                at += length
            else:  # groups (3, 4) are not used by these formats; anything else is not protobuf
                break
            if at < 0:
                break
    return count


def _varint(view: memoryview, at: int, end: int) -> tuple[int, int]:
    value, shift = 0, 0
    while at < end:
        byte = view[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            return 0, -1
    return 0, -1
