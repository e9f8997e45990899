"""Reading the Gemini assembly (`*_asm.txt`) and ZeBu trace (`*_sim.txt`) lines without `eval`.

Each line is written like a Python list: `[lda_mov, {'slyr': 0, ...}, {'inst_idx': 7, 'time': [161, 23549]},
{'RS': 0, 'DF': <DataFmt.FP16: 3>, ...}]` (the trace; the assembly has no timing element). The fast path
rewrites the whole text into JSON with a few byte replacements (bare names and enum reprs quoted, single quotes made
double) and decodes every line at once with msgspec into typed tuples; the parameters stay raw bytes until an
instruction is opened. A line that does not decode is read again by a small tokenizer of the
original text, which says where (line and column) and why, and the rest of the file is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

ENUM = re.compile(rb"<([A-Za-z_]\w*)\.([A-Za-z_]\w*): (-?\d+)>")
BARE_NAME = re.compile(rb"^\[([A-Za-z_]\w*)", re.MULTILINE)
CONSTANT = re.compile(rb"(?<=[\[\s,:])(True|False|None)(?=\s*[,\]\}])")
QUOTED = re.compile(rb"'((?:[^'\\\n]|\\.)*)'")
JSON_CONSTANTS = {b"True": b"true", b"False": b"false", b"None": b"null"}


# Every number becomes an int64 column: larger ones are refused per line, not carried into numpy
Int = Annotated[int, msgspec.Meta(ge=-(2**62), le=2**62)]


class Mapping(msgspec.Struct):
    """Where an instruction belongs: the frontend layer it is scheduled in (slyr), the layers it serves
    (clyr), their fusion indices, the schedule's workload (wkl) and tile; -1 when not applicable."""

    slyr: Int = -1
    clyr: list[Int] = []
    s_flyr: Int = -1
    c_flyr: list[Int] = []
    wkl: Int = -1
    tile: Int = -1


class Timing(msgspec.Struct):
    inst_idx: Int
    time: tuple[Int, Int]


class Links(msgspec.Struct):
    """The dependency bits among an instruction's parameters: the units it waits for / that wait for it."""

    Prev_Insts: list[str] = []
    Next_Insts: list[str] = []


AsmLine = tuple[str, Mapping, msgspec.Raw]
TraceLine = tuple[str, Mapping, Timing, msgspec.Raw]


@dataclass
class BadLine:
    line: int  # 1-based
    column: int  # 1-based, in the original text
    message: str


def to_json(text: bytes) -> bytes:
    """The lines as one JSON array, by plain byte replacements (C speed): enum reprs become strings
    ("<DataFmt.INT8: 1>"), the bare name the first string. It relies on the layout every published file has
    (a line starts with `[name, {'slyr'`; no quote, backslash or angle bracket inside a string); where a file
    differs, the JSON does not decode and `decode_lines` reads each line with `to_json_exact`."""
    out = text.replace(b"<", b'"<').replace(b">", b'>"').replace(b"'", b'"')
    out = b"\n" + out
    out = out.replace(b"\n[", b'\n["').replace(b', {"slyr"', b'", {"slyr"')
    out = CONSTANT.sub(lambda m: JSON_CONSTANTS[m.group(1)], out)
    body = b",".join(line for line in out.split(b"\n") if line.strip())
    return b"[" + body + b"]"


def to_json_exact(line: bytes) -> bytes:
    """One line as JSON, by regular expressions that follow the grammar (quotes inside strings, any key order)."""
    out = BARE_NAME.sub(rb'["\1"', line.strip())
    out = ENUM.sub(rb'"<\1.\2: \3>"', out)
    out = CONSTANT.sub(lambda m: JSON_CONSTANTS[m.group(1)], out)
    plain = b'"' not in line and b"\\" not in line
    return out.replace(b"'", b'"') if plain else QUOTED.sub(_requote, out)


def _requote(match: re.Match) -> bytes:
    inner = match.group(1).replace(b"\\'", b"'").replace(b'"', b'\\"')
    return b'"' + inner + b'"'


MAX_BAD_LINES = 10_000  # bad lines located and listed; the rest are counted in one problem
# What reading costs, at most: 8 bytes per byte of text (a 48 MB trace of real lines peaks 353 MiB above the
# interpreter) plus 300 bytes a line (a file of 5,000,000 one-character lines: about 240 bytes a line)
MEMORY_PER_TEXT_BYTE = 8
MEMORY_PER_LINE = 300


def decode_lines(text: bytes, timed: bool) -> tuple[list[tuple | None], list[BadLine]]:
    """Every non-blank line decoded (None where it could not be), and where and why the others failed."""
    line_type: Any = TraceLine if timed else AsmLine  # a tuple type made at run time: msgspec reads it
    numbered = [(k + 1, line) for k, line in enumerate(text.split(b"\n")) if line.strip()]
    try:
        decoded = msgspec.json.decode(to_json(text), type=list[line_type])
        if len(decoded) == len(numbered):
            return list(decoded), []
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(line_type)
    results: list[tuple | None] = []
    bad: list[BadLine] = []
    for number, line in numbered:
        try:
            results.append(decoder.decode(to_json_exact(line)))
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as error:
            results.append(None)
            if len(bad) < MAX_BAD_LINES:  # located one by one (slow) and kept; the rest only counted
                column, why = locate(line.decode("utf-8", "replace"), timed)
                bad.append(BadLine(number, column, why or f"unexpected value: {error}"))
            else:
                bad.append(BadLine(number, 0, ""))  # counted, not located
    return results, bad


def decode_params(raw: msgspec.Raw | bytes) -> dict[str, Any]:
    value = msgspec.json.decode(raw)
    return value if isinstance(value, dict) else {"value": value}


def decode_links(raw: msgspec.Raw | bytes) -> Links:
    try:
        return msgspec.json.decode(raw, type=Links)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return Links()


# ---- the slow path: the original line, token by token, to say where it breaks ------------------------------


class _Stop(Exception):
    def __init__(self, column: int, message: str) -> None:
        self.column, self.message = column, message


def locate(line: str, timed: bool) -> tuple[int, str]:
    """(1-based column, what is wrong) for a line the fast path could not read; (0, "") when it finds nothing
    wrong in the syntax (then the values are of the wrong kind, and the caller says so)."""
    try:
        value, end = _value(line, _skip(line, 0))
        end = _skip(line, end)
        if end != len(line):
            raise _Stop(end, "text after the closing bracket")
    except _Stop as stop:
        return stop.column + 1, stop.message
    expected = 4 if timed else 3
    if not isinstance(value, list):
        return 1, "expected a list [name, {mapping}, ...]"
    if len(value) != expected:
        shape = "[name, {mapping}, {timing}, {params}]" if timed else "[name, {mapping}, {params}]"
        return 1, f"expected {expected} elements {shape}, found {len(value)}"
    return 1, "an element has the wrong kind (the name must be a word, the mapping and params dictionaries)"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r":
        at += 1
    return at


def _value(text: str, at: int) -> tuple[Any, int]:
    if at >= len(text):
        raise _Stop(at, "the line ends inside a value (cut short?)")
    char = text[at]
    if char == "[":
        return _sequence(text, at + 1, "]")
    if char == "{":
        return _mapping(text, at + 1)
    if char == "'":
        end = at + 1
        while end < len(text) and text[end] != "'":
            end += 2 if text[end] == "\\" else 1
        if end >= len(text):
            raise _Stop(at, "a string that is never closed")
        return text[at + 1 : end], end + 1
    if char == "<":
        match = re.compile(r"<([A-Za-z_]\w*)\.([A-Za-z_]\w*): (-?\d+)>").match(text, at)
        if not match:
            raise _Stop(at, "an enum value must look like <Type.NAME: number>")
        return (match.group(1), match.group(2), int(match.group(3))), match.end()
    match = re.compile(r"-?\d+(\.\d*)?([eE][-+]?\d+)?|[A-Za-z_]\w*").match(text, at)
    if not match:
        raise _Stop(at, f"unexpected character {char!r}")
    return match.group(0), match.end()


def _sequence(text: str, at: int, close: str) -> tuple[list, int]:
    items: list = []
    at = _skip(text, at)
    if at < len(text) and text[at] == close:
        return items, at + 1
    while True:
        value, at = _value(text, _skip(text, at))
        items.append(value)
        at = _skip(text, at)
        if at >= len(text):
            raise _Stop(at, f"the line ends before the closing {close!r} (cut short?)")
        if text[at] == close:
            return items, at + 1
        if text[at] != ",":
            raise _Stop(at, f"expected ',' or {close!r}")
        at += 1


def _mapping(text: str, at: int) -> tuple[dict, int]:
    items: dict = {}
    at = _skip(text, at)
    if at < len(text) and text[at] == "}":
        return items, at + 1
    while True:
        at = _skip(text, at)
        if at >= len(text) or text[at] != "'":
            raise _Stop(at, "expected a quoted key")
        key, at = _value(text, at)
        at = _skip(text, at)
        if at >= len(text) or text[at] != ":":
            raise _Stop(at, "expected ':' after the key")
        value, at = _value(text, _skip(text, at + 1))
        items[key] = value
        at = _skip(text, at)
        if at >= len(text):
            raise _Stop(at, "the line ends before the closing '}' (cut short?)")
        if text[at] == "}":
            return items, at + 1
        if text[at] != ",":
            raise _Stop(at, "expected ',' or '}'")
        at += 1
