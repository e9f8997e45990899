"""The Gemini compiler's assembly (`*_asm.txt`) and ZeBu hardware trace (`*_sim.txt`): one instruction per line,
written like a Python list. The trace adds each instruction's measured [start, end] in cycles."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.format import Format, lazy

_LINE = re.compile(rb"^\s*\[\s*[A-Za-z_]\w*\s*,\s*\{\s*'slyr'")
_TIMED = re.compile(rb"^\s*\[[^\n]*\{\s*'inst_idx'")

LIMITS = (  # the README's Limits section lists these (tested)
    "lines: a line that does not read is reported with its line and column (10,000 located, the rest counted), and "
    "the others are kept",
    "memory: refused before decoding when 8× the text plus 300 bytes a line passes the memory available",
    "problems: 1,000 reversed times and 10,000 unknown enum values listed, the rest counted",
)


def match_asm(path: Path, head: bytes) -> bool:
    if path.name.endswith("_asm.txt"):
        return True
    return bool(_LINE.match(head)) and not _TIMED.match(head)


def match_trace(path: Path, head: bytes) -> bool:
    if path.name.endswith("_sim.txt"):
        return True
    return bool(_LINE.match(head)) and bool(_TIMED.match(head))


FORMATS = (
    Format(
        "gemini-trace",
        "Gemini ZeBu trace",
        ("_sim.txt", ".txt"),
        match_trace,
        lazy("explorer.formats.gemini_trace.reader", "load_trace"),
        write_samples=lazy("explorer.formats.gemini_trace.samples", "write_samples"),
        limits=LIMITS,
        cacheable=True,
    ),
    Format(
        "gemini-asm",
        "Gemini assembly",
        ("_asm.txt", ".txt"),
        match_asm,
        lazy("explorer.formats.gemini_trace.reader", "load_asm"),
        limits=LIMITS,
        cacheable=True,
    ),
)
