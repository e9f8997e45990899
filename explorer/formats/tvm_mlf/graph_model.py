"""A TVM bundle's graph-executor graphs as the neutral graph: one group per module (when there are several),
`tvm_op` nodes labelled by their fused function (the module prefix dropped), parameters as constants and
graph inputs as inputs; edges from each node's inputs."""

from __future__ import annotations

from typing import Any

from explorer.graph.builder import GraphBuilder
from explorer.graph.model import ROOT, GraphModel


def tvm_graph(view: Any) -> GraphModel:
    b = GraphBuilder()
    with_graphs = [(m, module) for m, module in enumerate(view.modules) if module.graph is not None]
    for m, module in with_graphs:
        graph = module.graph
        group = ROOT if len(with_graphs) == 1 else b.group(f"module {module.name}", ROOT, kind="module",
                                                           ref=("module", m))  # fmt: skip
        params = {array.name for array in module.params}
        prefix = f"tvmgen_{module.name}_"
        ids: dict[int, int] = {}
        for node in graph.nodes:
            entry = _first_entry(graph, node.nid)
            detail = f"{entry.dtype}[{', '.join(map(str, entry.shape))}]" if entry is not None else ""
            if node.op == "null":
                is_param = node.name in params
                ids[node.nid] = b.node(node.name, "parameter" if is_param else "input", group=group, detail=detail,
                                       ref=view.node_ref(m, node.nid), constant=is_param,
                                       dtype=entry.dtype if entry else "",
                                       parameter_bytes=_bytes(module, node.name) if is_param else 0)  # fmt: skip
                continue
            function = node.func_name or node.name
            label = function.removeprefix(prefix)
            kind = "tvm_op" if node.op == "tvm_op" else node.op
            ids[node.nid] = b.node(label, kind, group=group, detail=detail, ref=view.node_ref(m, node.nid),
                                   dtype=entry.dtype if entry else "", parameter_bytes=0)  # fmt: skip
        for node in graph.nodes:
            for source, _ in node.inputs:
                if source in ids:
                    b.edge(ids[source], ids[node.nid])
                else:
                    b.dangling.append((ids[node.nid], f"node {source}"))
    return b.build()


def _first_entry(graph: Any, nid: int) -> Any:
    if nid + 1 < len(graph.row_ptr):
        eid = graph.row_ptr[nid]
        if eid < len(graph.entries):
            return graph.entries[eid]
    return None


def _bytes(module: Any, name: str) -> int:
    return next((array.nbytes for array in module.params if array.name == name), 0)
