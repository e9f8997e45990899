"""Loading ARK model JSON (`Rank`, `WorldSize`, `Nodes` with one `Op` or an `Ops` array) and plan JSON
(`TaskInfos` with configured ops, `ProcessorGroups`): one reader, then the checks each kind has."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback, no_progress
from explorer.gc_pause import collector_paused


def load_model(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    return _load(Path(path), progress or no_progress, strict, "model")


def load_plan(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    return _load(Path(path), progress or no_progress, strict, "plan")


def _load(path: Path, progress: ProgressCallback, strict: bool, kind: str) -> Document:
    # imported here, not at the top: networkx is slow to import
    from explorer.formats.ark.checks import index_tensors, node_graph, op_type_counts, plan_checks
    from explorer.formats.ark.document import build_document
    from explorer.formats.ark.reader import ArkReader, decode_file

    with collector_paused():
        progress(0, 3, "parsing")
        reader = ArkReader(strict)
        decoded, repeated = decode_file(path)
        reader.problems += repeated
        ark = (reader.model if kind == "model" else reader.plan)(decoded, path)
        progress(1, 3, "indexing tensors")
        index, tensor_problems = index_tensors(ark)
        progress(2, 3, "checking the node graph" if kind == "model" else "checking tasks")
        if kind == "model":
            graph, more_problems = node_graph(ark)
            summary = {
                "nodes": len(ark.nodes),
                "ops": sum(len(node.ops) for node in ark.nodes),
                "tensors": len(index.tensors),
                "buffers": len(index.buffers),
                "op_types": op_type_counts(ark),
            }
        else:
            graph, more_problems = None, plan_checks(ark)
            summary = {
                "tasks": len(ark.tasks),
                "processor_groups": len(ark.processor_groups),
                "ops": sum(len(task.ops) for task in ark.tasks),
                "op_types": op_type_counts(ark),
            }
        progress(3, 3, "done")
        return build_document(path, ark, index, graph, reader.problems + tensor_problems + more_problems, summary)
