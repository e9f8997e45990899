"""Loader for ARK plan JSON (`TaskInfos` with configured ops, `ProcessorGroups`)."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback, no_progress
from explorer.gc_pause import collector_paused


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress, strict)


def _load(path: Path, progress: ProgressCallback, strict: bool) -> Document:
    # imported here, not at the top: networkx is slow to import
    from explorer.formats.ark.checks import index_tensors, op_type_counts, plan_checks
    from explorer.formats.ark.document import build_document
    from explorer.formats.ark.reader import ArkReader, decode_file

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
