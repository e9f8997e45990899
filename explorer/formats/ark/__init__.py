"""Microsoft ARK model JSON (`Nodes` with `Op`/`Ops`) and plan JSON (`TaskInfos`, `ProcessorGroups`):
strided tensors in buffers, the node graph and the task plan."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.format import JSON_MEMORY_LIMIT, JSON_NESTING_LIMIT, Format, lazy

_NODES = re.compile(rb'"Nodes"\s*:')
_PLAN = re.compile(rb'"(TaskInfos|ProcessorGroups|NumWarpsPerProcessor)"\s*:')
_MODEL_EXCLUDES = re.compile(rb'"(TaskInfos|ProcessorGroups)"\s*:')


def match_model(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_NODES.search(head)) and not _MODEL_EXCLUDES.search(head)


def match_plan(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_PLAN.search(head))


LIMITS = (  # the README's Limits section lists these (tested)
    JSON_MEMORY_LIMIT,
    "numbers: integers above 2^62 are refused (no real size or stride is that large, and sums stay exact)",
    JSON_NESTING_LIMIT,
)

FORMATS = (
    Format(
        "ark-model",
        "ARK model JSON",
        (".json",),
        match_model,
        lazy("explorer.formats.ark.loading", "load_model"),
        write_samples=lazy("explorer.formats.ark.samples", "write_samples"),
        limits=LIMITS,
        cacheable=True,
    ),
    Format(
        "ark-plan",
        "ARK plan JSON",
        (".json",),
        match_plan,
        lazy("explorer.formats.ark.loading", "load_plan"),
        limits=LIMITS,
        cacheable=True,
    ),
)
