"""An ONNX model as the neutral graph: nodes grouped by name scope, subgraphs and local functions as groups,
initializers as constants (folded into their readers), graph inputs and outputs as their own boxes."""

from __future__ import annotations

from typing import Any

from explorer.graph import ROOT, Deferred, GraphBuilder, GraphModel


def onnx_graph(view: Any) -> GraphModel:
    index = view.index
    b = GraphBuilder(
        resolve=lambda what, key, name: _dtype(view, key, name) if what == "dtype" else view.type_str(key, name)
    )
    graph_group: dict[str, int] = {}
    node_ids: dict[tuple[str, int], int] = {}
    value_source: dict[tuple[str, str], int] = {}  # (graph key, value name) → node id that defines it
    for key, info in index.graphs.items():
        if info.kind == "main":
            group = ROOT
        elif info.kind == "function":
            group = b.group(info.title, ROOT, kind="function", ref=("graph", key))
        else:  # a subgraph sits in the group of the node that owns it
            owner_group = ROOT
            if info.parent is not None and info.owner is not None:
                owner = index.graphs[info.parent].nodes[info.owner]
                owner_group = b.scope(owner.name or "", graph_group.get(info.parent, ROOT))
            group = b.group(info.title, owner_group, kind="subgraph", ref=("graph", key))
        graph_group[key] = group
        for name in info.inputs:  # a subgraph's and a function's formal inputs too
            if name and name not in info.initializers:
                value_source[(key, name)] = b.node(name, "input", group=group, detail=view.type_str(key, name),
                                                   ref=("value", key, name))  # fmt: skip
        for name, i in info.initializers.items():
            tensor = info.proto.initializer[i]
            value_source[(key, name)] = b.node(
                name, "initializer", group=group, detail=view.type_str(key, name), ref=("init", key, i),
                constant=True, dtype=_dtype(view, key, name), parameter_bytes=_tensor_bytes(tensor),
            )  # fmt: skip
        for n, node in enumerate(info.nodes):
            first = node.output[0] if len(node.output) else ""
            node_id = b.node(
                node.name or f"{node.op_type}_{n}",
                node.op_type,
                group=b.scope(node.name or "", group),
                detail=Deferred(("type", key, first)) if first else "",  # computed when a box shows it
                ref=("node", key, n),
                dtype=Deferred(("dtype", key, first)) if first else "",
                parameter_bytes=0,
            )
            node_ids[(key, n)] = node_id
            for name in node.output:
                if name:
                    value_source[(key, name)] = node_id
    parameter_bytes = b.values.get("parameter_bytes")
    for key, info in index.graphs.items():
        for n, node in enumerate(info.nodes):
            target = node_ids[(key, n)]
            for name in node.input:
                if not name:
                    continue
                source = _find(index, value_source, key, name)
                if source is None:
                    b.dangling.append((target, name))
                    continue
                b.edge(source, target, name)
                if parameter_bytes is not None and b.constants[source]:
                    parameter_bytes[target] = (parameter_bytes[target] or 0) + (parameter_bytes[source] or 0)
        if info.kind == "main":
            for name in info.outputs:
                source = _find(index, value_source, key, name)
                output = b.node(name, "output", group=graph_group[key], detail=view.type_str(key, name),
                                ref=("value", key, name))  # fmt: skip
                if source is not None:
                    b.edge(source, output, name)
    return b.build()


def _find(index: Any, value_source: dict[tuple[str, str], int], key: str, name: str) -> int | None:
    """The node defining `name` as seen from graph `key`: its own graph first, then the enclosing ones."""
    current: str | None = key
    while current is not None:
        found = value_source.get((current, name))
        if found is not None:
            return found
        current = index.graphs[current].parent
    return None


def _dtype(view: Any, key: str, name: str) -> str:
    text = view.type_str(key, name)
    return text.split("[", 1)[0] if text != "?" else ""


def _tensor_bytes(tensor: Any) -> int:
    from explorer.formats.onnx.document import tensor_bytes

    return tensor_bytes(tensor) or 0
