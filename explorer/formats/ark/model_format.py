"""Loader for ARK model JSON (`Rank`, `WorldSize`, `Nodes` with one `Op` or an `Ops` array)."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback, no_progress
from explorer.gc_pause import collector_paused


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress, strict)


def _load(path: Path, progress: ProgressCallback, strict: bool) -> Document:
    # imported here, not at the top: networkx is slow to import
    from explorer.formats.ark.checks import index_tensors, node_graph, op_type_counts
    from explorer.formats.ark.document import build_document
    from explorer.formats.ark.reader import ArkReader, decode_file

    progress(0, 3, "parsing")
    reader = ArkReader(strict)
    ark = reader.model(decode_file(path), path)
    progress(1, 3, "indexing tensors")
    index, tensor_problems = index_tensors(ark)
    progress(2, 3, "checking the node graph")
    graph, graph_problems = node_graph(ark)
    summary = {
        "nodes": len(ark.nodes),
        "ops": sum(len(node.ops) for node in ark.nodes),
        "tensors": len(index.tensors),
        "buffers": len(index.buffers),
        "op_types": op_type_counts(ark),
    }
    progress(3, 3, "done")
    return build_document(path, ark, index, graph, reader.problems + tensor_problems + graph_problems, summary)
