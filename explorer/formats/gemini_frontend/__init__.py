"""The Gemini compiler's frontend IR: the layer graph the scheduler consumed, one JSON object whose values are
layer objects (`layer_index`, `operation`, shapes, dtypes, `previous_layer`/`next_layer`, quantisation and
vector-processor module settings)."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.format import JSON_MEMORY_LIMIT, JSON_NESTING_LIMIT, Format, lazy

_FIRST_LAYER = re.compile(rb'^\s*\{\s*"[^"]+"\s*:\s*\{\s*"layer_index"\s*:')

LIMITS = (  # the README's Limits section lists these (tested)
    JSON_MEMORY_LIMIT,
    JSON_NESTING_LIMIT,
)


def match(path: Path, head: bytes) -> bool:
    return bool(_FIRST_LAYER.match(head)) or (b'"layer_index"' in head and b'"previous_layer"' in head)


FORMATS = (
    Format(
        "gemini-frontend",
        "Gemini frontend IR",
        (".json",),
        match,
        lazy("explorer.formats.gemini_frontend.loading", "load"),
        write_samples=lazy("explorer.formats.gemini_frontend.samples", "write_samples"),
        limits=LIMITS,
        cacheable=True,
    ),
)
