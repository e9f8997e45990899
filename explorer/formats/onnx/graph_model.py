"""An ONNX model as the neutral graph: nodes grouped by name scope, subgraphs and local functions as groups,
initializers as constants (folded into their readers), graph inputs and outputs as their own boxes."""

from __future__ import annotations

from typing import Any, Protocol

from explorer.formats.onnx.index import ModelIndex
from explorer.formats.onnx.metrics import OnnxCounter
from explorer.graph.builder import GraphBuilder
from explorer.models.graph import ROOT, Deferred, GraphModel
from explorer.models.ref import Ref


class GraphSource(Protocol):
    """What the graph is built from: the view's index and its words for types, values and attributes (the
    OnnxView, which imports this module when its graph is first asked for)."""

    index: ModelIndex

    def type_str(self, key: str, name: str) -> str: ...

    def value_preview(self, ref: Ref, limit: int = 8) -> str: ...

    def node_attributes(self, ref: Ref, as_written: bool = False) -> str: ...


class _Resolve:
    """The graph's deferred texts from the view (a class, not a closure: a kept document pickles its graph)."""

    def __init__(self, view: GraphSource) -> None:
        self.view = view

    def __call__(self, what: str, key: str, name: Any) -> str:
        if what == "dtype":
            return _dtype(self.view, key, name)
        if what == "value":  # a small constant's values, for the box that folds it (`axes = [0, 2]`)
            return self.view.value_preview(name, limit=SHOWN_VALUES)
        return self.view.type_str(key, name)


class _Attributes:
    """attributes_of for GraphModel: alike blocks stack only when their attributes are equal."""

    def __init__(self, view: GraphSource, refs: list[Any]) -> None:
        self.view, self.refs = view, refs

    def __call__(self, node: int) -> str:
        return _attributes(self.view, self.refs[node])


def onnx_graph(view: GraphSource) -> GraphModel:
    index = view.index
    b = GraphBuilder(resolve=_Resolve(view))
    b.role_of = _Roles(index, b.refs)
    b.attributes_of = _Attributes(view, b.refs)
    graph_group: dict[str, int] = {}
    node_ids: dict[str, int] = {}  # graph key → the id of its first op node (its nodes are consecutive)
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
                value=Deferred(("value", key, ("init", key, i))) if _elements(tensor) <= SHOWN_VALUES else "",
            )  # fmt: skip
        # the op nodes in bulk, from what the index read in its one pass (no second walk of the protobuf)
        names, ops, firsts = info.node_names, info.node_ops, info.node_first_output
        node_groups = b.scopes(_scoped_names(names, info.node_modules), group)
        _name_module_classes(b, node_groups, info.node_modules, group)
        first_id = b.add_nodes(
            [name or f"{op}_{n}" for n, (name, op) in enumerate(zip(names, ops, strict=True))],
            list(ops),
            node_groups,
            [Deferred(("type", key, out)) if out else "" for out in firsts],  # computed when a box shows it
            [("node", key, n) for n in range(len(names))],
            constants=[op == "Constant" for op in ops],  # the ops a reader folds, with what they feed alone
            dtype=[Deferred(("dtype", key, out)) if out else "" for out in firsts],
            parameter_bytes=[0] * len(names),
            value=[Deferred(("value", key, ("node", key, n))) if op == "Constant" else "" for n, op in enumerate(ops)],
        )
        node_ids[key] = first_id
        for name, n in info.producer.items():
            value_source[(key, name)] = first_id + n
    for key, info in index.graphs.items():  # an If's branches and a Loop's body hang off their op
        if info.kind == "subgraph" and info.parent in node_ids and info.owner is not None:
            b.owned_by(graph_group[key], node_ids[info.parent] + info.owner)
    parameter_bytes = b.values["parameter_bytes"]
    constants = {i for i, constant in enumerate(b.constants) if constant}
    src, dst, labels = b.src, b.dst, b.edge_labels  # appended to directly: this loop sees every edge
    for key, info in index.graphs.items():
        first_id = node_ids[key]
        for name, readers in info.consumers.items():
            source = _find(index, value_source, key, name)
            if source is None:
                b.dangling += [(first_id + n, name) for n in readers]
                continue
            targets = [first_id + n for n in readers]
            src += [source] * len(targets)
            dst += targets
            labels += [name] * len(targets)
            if source in constants:  # a reader's parameter bytes: the initializers it reads
                for target in targets:
                    parameter_bytes[target] = (parameter_bytes[target] or 0) + (parameter_bytes[source] or 0)
        if info.kind == "main":
            for name in info.outputs:
                source = _find(index, value_source, key, name)
                output = b.node(name, "output", group=graph_group[key], detail=view.type_str(key, name),
                                ref=("value", key, name))  # fmt: skip
                if source is not None:
                    b.edge(source, output, name)
    model = b.build()
    model.op_counter = OnnxCounter(index, model)
    return model


def _find(index: Any, value_source: dict[tuple[str, str], int], key: str, name: str) -> int | None:
    """The node defining `name` as seen from graph `key`: its own graph first, then the enclosing ones."""
    current: str | None = key
    while current is not None:
        found = value_source.get((current, name))
        if found is not None:
            return found
        current = index.graphs[current].parent
    return None


def _attributes(view: GraphSource, ref: Ref | None) -> str:
    return view.node_attributes(ref) if ref is not None else ""


def _dtype(view: GraphSource, key: str, name: str) -> str:
    text = view.type_str(key, name)
    return text.split("[", 1)[0] if text != "?" else ""


def _tensor_bytes(tensor: Any) -> int:
    from explorer.formats.onnx.index import tensor_bytes

    return tensor_bytes(tensor) or 0


class _Roles:
    """role_of for GraphModel: where a node reads a value (its input's position) and that input's formal name
    in the op's schema (Conv: X, W, B), looked up once per op type and position, only for boxes that fold
    something."""

    def __init__(self, index: Any, refs: list[Any]) -> None:
        self.index, self.refs = index, refs
        self.opsets = {(o.domain or ""): o.version for o in index.model.opset_import}
        self.names: dict[tuple[str, str, int], str] = {}

    def formal(self, op: str, domain: str, slot: int) -> str:
        key = (op, domain, slot)
        if key not in self.names:
            try:
                import onnx.defs

                version = self.opsets.get(domain if domain != "ai.onnx" else "", 1 << 30)
                inputs = onnx.defs.get_schema(op, version, domain).inputs
                self.names[key] = inputs[min(slot, len(inputs) - 1)].name if inputs else ""
            except Exception:  # an op of a domain onnx does not know (a custom op): no name, the shape alone
                self.names[key] = ""
        return self.names[key]

    def __call__(self, node: int, value: str) -> tuple[int, str]:
        ref = self.refs[node]
        if not ref or ref[0] != "node":
            return 0, ""
        proto = self.index.graphs[ref[1]].nodes[ref[2]]
        inputs = list(proto.input)
        slot = inputs.index(value) if value in inputs else len(inputs)
        return slot, self.formal(proto.op_type, proto.domain, slot)


SHOWN_VALUES = 4  # a folded constant of at most this many elements shows its values on its reader's box


def _elements(tensor: Any) -> int:
    count = 1
    for dim in tensor.dims:
        count *= dim
    return count


def _scoped_names(names: list[str], modules: dict[int, Any]) -> list[str]:
    """The names the scope groups are cut from: a node named without a scope (`node_MatMul_12`, as torch's dynamo
    exporter names them) whose metadata gives its module path is scoped by that path (`/layers.0/attn/…`)."""
    if not modules:
        return names
    return [f"/{modules[n].path}/{name}" if n in modules and "/" not in name else name
            for n, name in enumerate(names)]  # fmt: skip


def _name_module_classes(b: GraphBuilder, node_groups: list[int], modules: dict[int, Any], top: int) -> None:
    """Each module group's class (`Block`, from the first of its nodes that says), in its detail: its title then
    reads `layers.0 · Block`."""
    details = b.group_details
    for n, scope in modules.items():
        g = node_groups[n]
        for cls in reversed(scope.classes):
            if g == top or g < 0:
                break
            if not details[g]:
                details[g] = cls
            g = b.group_parents[g]
