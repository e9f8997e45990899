"""Loader for ARK model JSON (`Rank`, `WorldSize`, `Nodes` with one `Op` or an `Ops` array)."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.loaders.gc_pause import collector_paused
from explorer.model import Document, ProgressCallback, no_progress

FORMAT = "ark-model"
_NODES = re.compile(rb'"Nodes"\s*:')
_PLAN = re.compile(rb'"(TaskInfos|ProcessorGroups)"\s*:')


def match(path: Path, head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and bool(_NODES.search(head)) and not _PLAN.search(head)


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    with collector_paused():
        return _load(Path(path), progress or no_progress, strict)


def _load(path: Path, progress: ProgressCallback, strict: bool) -> Document:
    # imported here, not at the top: the registry imports every loader to sniff a file, and networkx is slow
    from explorer.analysis.ark_checks import index_tensors, node_graph, op_type_counts
    from explorer.ark_view import build_document
    from explorer.loaders.ark_json import ArkReader, decode_file

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
