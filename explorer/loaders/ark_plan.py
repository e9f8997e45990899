"""Loader for ARK plan JSON (`TaskInfos` with configured ops, `ProcessorGroups`)."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.loaders.gc_pause import collector_paused
from explorer.model import Document, ProgressCallback, no_progress

FORMAT = "ark-plan"
_PLAN = re.compile(rb'"(TaskInfos|ProcessorGroups|NumWarpsPerProcessor)"\s*:')


def match(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_PLAN.search(head))


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress, strict)


def _load(path: Path, progress: ProgressCallback, strict: bool) -> Document:
    # imported here, not at the top: the registry imports every loader to sniff a file, and networkx is slow
    from explorer.analysis.ark_checks import index_tensors, op_type_counts, plan_checks
    from explorer.ark_view import build_document
    from explorer.loaders.ark_json import ArkReader, decode_file

    progress(0, 2, "parsing")
    reader = ArkReader(strict)
    ark = reader.plan(decode_file(path), path)
    progress(1, 2, "checking tasks")
    index, tensor_problems = index_tensors(ark)
    summary = {
        "tasks": len(ark.tasks),
        "processor_groups": len(ark.processor_groups),
        "ops": sum(len(task.ops) for task in ark.tasks),
        "op_types": op_type_counts(ark),
    }
    progress(2, 2, "done")
    return build_document(path, ark, index, None, reader.problems + tensor_problems + plan_checks(ark), summary)
