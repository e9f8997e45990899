"""Where malformed JSON goes wrong, found from the bytes by the explorer itself.

A library's error text is not a contract: msgspec 0.23 words a byte that is not UTF-8 without its position, and
0.22 raised a UnicodeDecodeError counted from the start of the string it was in. So the position is computed
here: the first byte that is not UTF-8 (a C-speed pass, any size), the first token the JSON grammar refuses, line
and column, and the JSON path of the value the valid prefix was reading (a scan of up to SCAN_BYTES).
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

import msgspec

from explorer.jsonpath import key

Buffer = bytes | bytearray | memoryview | msgspec.Raw  # what the decoders were handed
SCAN_BYTES = 4 << 20  # the grammar scan's reach (Python, a token at a time): past it the UTF-8 pass answers
_UTF8_CHUNK = 16 << 20

_WHITESPACE = re.compile(rb"[ \t\n\r]*+")
# possessive: a long string that never closes is refused in one pass, not by backtracking
_STRING_BODY = re.compile(rb'"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?")
_NUMBER_START = re.compile(rb"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?\Z")
_LITERALS = (b"true", b"false", b"null")
# runs of plain scalars (and of "key": scalar members) taken in one match: their strings hold no comma, so the
# commas counted in a run are its separators
_PLAIN = rb'(?:-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|true|false|null|"[^"\\,\x00-\x1f]*+")'
_ARRAY_RUN = re.compile(rb"(?:" + _PLAIN + rb"[ \t\n\r]*+,[ \t\n\r]*+)++")
_MEMBER_RUN = re.compile(rb'(?:"[^"\\,\x00-\x1f]*+"[ \t\n\r]*+:[ \t\n\r]*+' + _PLAIN + rb"[ \t\n\r]*+,[ \t\n\r]*+)++")
_LIBRARY_BYTE = re.compile(r"\(byte (\d+)\)")
_LIBRARY_PATH = re.compile(r" - at `(?P<path>[^`]*)`$", re.S)

# what the scan expects next
_VALUE, _KEY_OR_CLOSE, _KEY, _COLON, _AFTER = range(5)


@dataclass(frozen=True, slots=True)
class JsonFault:
    """The first place the bytes stop being JSON: the offset, why, and the path of the value being read."""

    offset: int
    reason: str
    path: str  # "" when the fault lies past the scan's reach


def first_invalid_utf8(data: Buffer) -> int | None:
    """The offset of the first byte that does not decode as UTF-8, or None; a pass in C, a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for start in range(0, len(view), _UTF8_CHUNK):
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(view[start : start + _UTF8_CHUNK])
        except UnicodeDecodeError as error:
            return start - pending + error.start
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return len(view) - len(decoder.getstate()[0])
    return None


def _shown(data: bytes, at: int) -> str:
    if at >= len(data):
        return "the end of the file"
    byte = data[at]
    return json.dumps(chr(byte)) if 0x20 <= byte < 0x7F else f"byte 0x{byte:02X}"


class _Scan:
    """The JSON grammar over a prefix, keeping the open containers (object key or array index) as it goes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.stack: list[list] = []  # [is_object, index, the key's (start, end) or None]
        self.state = _VALUE
        self.in_string = False

    def path(self) -> str:
        """The value being read: each open container's key or index, the innermost only once it is reached."""
        parts = ["$"]
        for depth, (is_object, index, name) in enumerate(self.stack):
            innermost = depth == len(self.stack) - 1
            if innermost and self.state in (_KEY_OR_CLOSE, _KEY, _AFTER) and not self.in_string:
                break
            if is_object:
                if name is None:
                    break
                parts.append(key(self._key_text(*name)))
            else:
                parts.append(f"[{index}]")
        return "".join(parts)

    def _key_text(self, start: int, end: int) -> str:
        try:
            return str(json.loads(self.data[start:end]))
        except ValueError:
            return self.data[start + 1 : end - 1].decode("utf-8", "replace")

    def run(self) -> tuple[int, str] | None:
        """(offset, reason) of the first fault; (len, "") when the prefix ends inside a value; None when whole."""
        data, end = self.data, len(self.data)
        pos = _WHITESPACE.match(data, 0).end()  # type: ignore[union-attr]
        while pos < end:
            state = self.state
            if state != _AFTER and state != _COLON:
                run = (_ARRAY_RUN if state == _VALUE else _MEMBER_RUN).match(data, pos)
                if run is not None and self.stack and self.stack[-1][0] == (state != _VALUE):
                    self.stack[-1][1] += run.group().count(b",")
                    pos = run.end()
                    self.state = state = _KEY if state == _KEY_OR_CLOSE else state
                    if pos >= end:
                        break
            byte = data[pos]
            if state in (_VALUE, _KEY) or (state == _KEY_OR_CLOSE and byte != 0x7D):
                if state != _VALUE and byte != 0x22:
                    closing = ' or "}"' if state == _KEY_OR_CLOSE else ""
                    return pos, f"expected a key in double quotes{closing}, got {_shown(data, pos)}"
                fault = self._value(pos)
                if fault is not None:
                    return fault
                pos = self.next_pos
            elif state == _COLON:
                if byte != 0x3A:
                    return pos, f'expected ":" after the key, got {_shown(data, pos)}'
                self.state = _VALUE
                pos += 1
            else:  # _AFTER, or "}" closing an empty object
                if not self.stack:
                    return pos, f"expected the end of the file after the value, got {_shown(data, pos)}"
                frame = self.stack[-1]
                closer = 0x7D if frame[0] else 0x5D
                if byte == 0x2C:
                    frame[1] += 1
                    frame[2] = None
                    self.state = _KEY if frame[0] else _VALUE
                elif byte == closer:
                    self.stack.pop()
                    self.state = _AFTER
                else:
                    return pos, f'expected "," or "{chr(closer)}", got {_shown(data, pos)}'
                pos += 1
            pos = _WHITESPACE.match(data, pos).end()  # type: ignore[union-attr]
        return None if (self.state == _AFTER and not self.stack) else (end, "")

    def _value(self, pos: int) -> tuple[int, str] | None:
        """Read the value (or key) at `pos`; sets next_pos, or returns the fault."""
        data, byte = self.data, self.data[pos]
        if byte == 0x22:
            string = _STRING_BODY.match(data, pos)
            body_end = string.end()  # type: ignore[union-attr]
            if body_end >= len(data):
                self.in_string = True
                return len(data), ""
            if data[body_end] != 0x22:
                what = "a control character" if data[body_end] < 0x20 else "an escape that JSON does not have"
                self.in_string = True
                return body_end, f"{what} ({_shown(data, body_end)}) inside a string"
            self.next_pos = body_end + 1
            if self.state in (_KEY, _KEY_OR_CLOSE):
                self.stack[-1][2] = (pos, body_end + 1)  # decoded only if the path names it
                self.state = _COLON
            else:
                self.state = _AFTER
            return None
        if byte in (0x7B, 0x5B):
            self.stack.append([byte == 0x7B, 0, None])
            self.state = _KEY_OR_CLOSE if byte == 0x7B else _VALUE
            self.next_pos = pos + 1
            if byte == 0x5B:  # "]" right after "[" closes an empty array
                after = _WHITESPACE.match(data, pos + 1).end()  # type: ignore[union-attr]
                if after < len(data) and data[after] == 0x5D:
                    self.stack.pop()
                    self.state = _AFTER
                    self.next_pos = after + 1
            return None
        number = _NUMBER.match(data, pos)
        if number is not None:
            self.next_pos = number.end()
            self.state = _AFTER
            return None
        rest = data[pos : pos + 8]
        for literal in _LITERALS:
            if data.startswith(literal, pos):
                self.next_pos = pos + len(literal)
                self.state = _AFTER
                return None
            if len(rest) < len(literal) and literal.startswith(rest) and pos + len(rest) == len(data):
                return len(data), ""
        if _NUMBER_START.match(data, pos) is not None:
            return len(data), ""
        return pos, f"expected a value, got {_shown(data, pos)}"


def find_fault(data: Buffer) -> JsonFault | None:
    """The first place `data` stops being JSON, or None when it is well-formed JSON (whatever a typed decoder
    then said of its values). Past SCAN_BYTES only a byte that is not UTF-8 is found, with no path; a fault
    there that is not one has an empty reason."""
    data = memoryview(data)
    bad_utf8 = first_invalid_utf8(data)
    limit = len(data) if bad_utf8 is None else bad_utf8
    reach = min(limit, SCAN_BYTES)
    scan = _Scan(bytes(data[:reach]))
    found = scan.run()
    if found is not None and found[1]:
        return JsonFault(found[0], found[1], scan.path())
    if bad_utf8 is not None:
        reason = f"{_shown(bytes(data[bad_utf8 : bad_utf8 + 1]), 0)} is not UTF-8 text"
        if reach < limit:
            return JsonFault(bad_utf8, reason, "")
        return JsonFault(bad_utf8, reason + (" inside a string" if scan.in_string else ""), scan.path())
    if reach < limit:
        return JsonFault(len(data), "", "")
    if found is not None:
        return JsonFault(len(data), "the file ends in the middle of a JSON value (truncated)", scan.path())
    return None


def line_and_column(data: Buffer, offset: int) -> tuple[int, int]:
    """1-based line and byte column of `offset`, as an editor's go-to-line takes them."""
    head = data if isinstance(data, bytes | bytearray) else bytes(memoryview(data)[:offset])
    line = head.count(b"\n", 0, offset) + 1
    column = offset - (head.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def locate_json_error(
    data: Buffer, library_error: BaseException | None = None, base_offset: int = 0
) -> tuple[str, str]:
    """(location, message) for JSON a decoder refused: `line L, column C (byte N) in $.path`, computed here.

    The library's words are used only where the bytes are well-formed JSON (a number out of range, say: its
    path) or where the fault lies past the scan's reach and the library states a byte."""
    fault = find_fault(data)
    said = str(library_error) if library_error is not None else "not valid JSON"
    if fault is None:
        at = _LIBRARY_PATH.search(said)
        what = _LIBRARY_PATH.sub("", said)
        where = at.group("path").replace("[...]", "[…]") if at else "$"
        return where, what[:1].lower() + what[1:]
    offset, reason, path = fault.offset, fault.reason, fault.path
    stated = _LIBRARY_BYTE.search(said)
    if not path and stated is not None and int(stated.group(1)) < offset:  # past the scan: the library's word
        offset, reason = int(stated.group(1)), _LIBRARY_BYTE.sub("", said).strip().rstrip(".")
    elif not reason:
        return f"past byte {base_offset + SCAN_BYTES:,}", said[:1].lower() + said[1:]
    line, column = line_and_column(data, offset)
    where = f"line {line}, column {column} (byte {base_offset + offset})" + (f" in {path}" if path else "")
    return where, reason[:1].lower() + reason[1:]
