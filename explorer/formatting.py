"""Small, shared ways of printing numbers so every view says the same thing the same way."""

from __future__ import annotations

import re
from typing import Any


def human_bytes(n: float) -> str:
    if isinstance(n, bool) or not isinstance(n, int | float):  # a raw record's junk, shown as it is
        return f"{str(n)[:20]} (not a size)"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def number(value: float) -> str:
    if value != value:  # NaN: a workload on a dependency cycle has no time
        return "—"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def box(lower: list | None, upper: list | None) -> str:
    if not lower or not upper:
        return ""
    return "[" + ", ".join(f"{lo}:{hi}" if lo != hi else f"{lo}" for lo, hi in zip(lower, upper, strict=False)) + "]"


def compact(value: float) -> str:
    """1,530,664 → 1.53M: for one-line summaries where every column counts."""
    if value != value:
        return "—"
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return number(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# What a (count, bytes) pair means in a summary (ONNX parameters by dtype): labelled, not a bare tuple.
PAIRS = {"parameters_by_dtype": ("elements", "bytes")}


# Keys whose number names a thing (a core, a tensor, a transfer, a workload) rather than counting: printed as the
# file writes it, never grouped ("transfer 99,999" finds nothing when searched for).
IDENTIFIER_KEYS = frozenset({"core", "tensor", "transfer", "workload", "id"})


def is_identifier(key: str) -> bool:
    return key in IDENTIFIER_KEYS or key.endswith("_id")


def is_address(key: str) -> bool:
    return key == "address" or key.endswith("_address") or key.endswith("_addr")


def human(value: object, key: str = "") -> str:
    """One summary value as people read it, the same in the TUI, `info`, `diff` and the HTML report: yes/no for
    booleans, "none" for absent ones, grouped integers and floats without a trailing .0, bytes with units when
    the key says bytes, identifiers ungrouped and addresses in hex when the key says so, pairs labelled, lists and
    mappings as short phrases."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if is_identifier(key) and float(value).is_integer():
            return str(int(value))  # "tensor 90000", as the problems and the file say it: searchable
        if is_address(key) and float(value).is_integer():
            return f"{int(value):#x}"  # as the details panel, the buffer view and the overlap messages write it
        if (key.endswith("bytes") or key.endswith("_size")) and not key.endswith("_delta"):
            return f"{number(value)} ({human_bytes(value)})" if abs(value) >= 1024 else human_bytes(value)
        if key.endswith("delta"):
            return ("+" if value > 0 else "") + number(value)
        return number(value)
    if isinstance(value, dict):
        labels = PAIRS.get(key)
        parts = []
        for k, v in value.items():
            if labels and isinstance(v, list | tuple) and len(v) == len(labels):
                said = (
                    f"{number(x)} {label.removesuffix('s') if x == 1 else label}"
                    for x, label in zip(v, labels, strict=True)
                )
                parts.append(f"{k} " + ", ".join(said))  # "int64 1 element", never "1 elements"
            else:
                parts.append(f"{k} {human(v)}")
        return "; ".join(parts) if labels else ", ".join(parts) or "none"
    if isinstance(value, list | tuple):
        one = key.removesuffix("s")  # "tensor_ids": each a tensor_id, never a diff's [A, B]
        if one != key and is_identifier(one):
            return ", ".join(human(v, one) for v in value) or "none"
        if len(value) == 2 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return f"{human(value[0], key)} → {human(value[1], key)}"  # a diff's [A, B]
        return ", ".join(human(v) for v in value) or "none"
    return str(value)


def shorten_middle(text: str, limit: int) -> str:
    """`int8_resnet34.sim_q…_stschedule.json`: both ends kept, where a name's meaning usually is."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[:limit]
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head) :]


# C0 controls but tab and newline, DEL, and the C1 block: a terminal acts on them (ESC]0; retitles the window,
# ESC[2J clears it, 0x9b starts a sequence on some), and op types and file names come from the input. The bidi
# embeddings, overrides, isolates and marks reorder what follows them (U+202E shows "exe.txt" as "txt.exe").
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS = {code: f"\\u{code:04x}" for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *_BIDI)}
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ESCAPED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # _CONTROLS'
# The same characters shown as text in a view: C0 as their control pictures (ESC as ␛, one cell each), DEL as ␡,
# the rest (C1, bidi) as \uXXXX; newline and tab too, where a name must stay on one line.
_VISIBLE = {**_CONTROLS, **{code: chr(0x2400 + code) for code in range(0x20)}, 0x7F: "\u2421"}
_VISIBLE_LINES = {k: v for k, v in _VISIBLE.items() if k not in (0x09, 0x0A)}


def escape_controls(text: str) -> str:
    """`text` with every control character a terminal would act on written as `\\uXXXX`, visible and inert
    (inside a JSON string the escape means the same character, so `--json` output stays valid). Text without
    any is returned as it is (a search is some 50× quicker than `translate` over a big `--json` output)."""
    return text if _ESCAPED.search(text) is None else text.translate(_CONTROLS)


def visible(text: str, lines: bool = False) -> str:
    """Text from a file as a view may show it: every control and bidi character written visibly (ESC as ␛), so
    no name can act on the terminal or reorder a line. `lines` keeps newlines and tabs (multi-line values).
    Called where strings enter the document (Item, Section, Problem, the graph builder, the schedule's names),
    so every view, export and `--json` output says the same thing."""
    if not isinstance(text, str) or UNSAFE.search(text) is None:
        return text
    return text.translate(_VISIBLE_LINES if lines else _VISIBLE)


def visible_column(texts: list) -> list:
    """A column of names made visible, checked in one pass first (100,000 clean labels cost one search)."""
    clean = [t for t in texts if isinstance(t, str)]
    if UNSAFE.search("".join(clean)) is None:
        return texts
    return [visible(t) for t in texts]


class EscapingWriter:
    """A text stream that escapes control characters on their way to `stream` (the CLI's stdout and stderr)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding... as the stream has them
        return getattr(self._stream, name)
