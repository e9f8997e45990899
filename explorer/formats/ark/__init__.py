"""Microsoft ARK model JSON (`Nodes` with `Op`/`Ops`) and plan JSON (`TaskInfos`, `ProcessorGroups`):
strided tensors in buffers, the node graph and the task plan."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.document import Document, ProgressCallback
from explorer.format import Format

_NODES = re.compile(rb'"Nodes"\s*:')
_PLAN = re.compile(rb'"(TaskInfos|ProcessorGroups|NumWarpsPerProcessor)"\s*:')
_MODEL_EXCLUDES = re.compile(rb'"(TaskInfos|ProcessorGroups)"\s*:')


def match_model(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_NODES.search(head)) and not _MODEL_EXCLUDES.search(head)


def match_plan(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_PLAN.search(head))


def load_model(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.ark.model_format import load

    return load(path, progress=progress, strict=strict)


def load_plan(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.ark.plan_format import load

    return load(path, progress=progress, strict=strict)


def write_samples(folder: Path) -> list[Path]:
    from explorer.formats.ark.samples import write_samples as write

    return write(folder)


FORMATS = (
    Format("ark-model", "ARK model JSON", (".json",), match_model, load_model, write_samples=write_samples),
    Format("ark-plan", "ARK plan JSON", (".json",), match_plan, load_plan),
)
