"""An ONNX model as a Document: graphs → inputs / outputs / initializers / nodes → values → producer/consumers.

Refs: ("graph", key), ("inputs"|"outputs"|"inits"|"nodes", key), ("chunk", key, lo), ("node", key, n),
("value", key, name), ("init", key, i), ("functions",), ("goto", target ref) for the links that jump to a
value's producer or consumers (Enter on them). `key` is the graph's protobuf path (see explorer.formats.onnx.index).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from onnx import AttributeProto, TensorProto

from explorer.document import (
    CHUNK,
    Document,
    DocumentView,
    Item,
    Meta,
    Section,
    Vocabulary,
    Weight,
    chunk_start,
    chunked_items,
    describe_by_kind,
)
from explorer.errors import Problem
from explorer.formats.onnx.details import OnnxDetails, weight_digest
from explorer.formats.onnx.index import ModelIndex, element_name, tensor_bytes
from explorer.formats.onnx.text import attribute_text, type_text
from explorer.formats.onnx.wire import left_in_file
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref


def build_document(path: Path, index: ModelIndex, problems: list[Problem], summary: dict[str, Any]) -> Document:
    view = OnnxView(path, index)
    model = index.model
    versions = {("ai.onnx" if o.domain in ("", "ai.onnx") else o.domain): str(o.version) for o in model.opset_import}
    return Document(
        meta=Meta(
            format="onnx",
            source=path,
            producer=f"{model.producer_name} {model.producer_version}".strip(),
            versions={"ir": str(model.ir_version), **versions},
        ),
        tree=view.tree(path.name),
        view=view,
        vocabulary=Vocabulary(search_hint="node, value or initializer name, or an op type"),
        problems=problems,
        summary=summary,
        headline=(
            f"ONNX IR {model.ir_version} · opset {', '.join(f'{k} {v}' for k, v in versions.items())} · "
            f"{summary['nodes']:,} nodes in {summary['graphs']} graph{'s' if summary['graphs'] != 1 else ''} · "
            f"{summary['parameters']:,} parameters"
        ),
    )


class OnnxView(DocumentView):
    # the networkx graph, built again when asked (the derived-data cache keeps the rest)
    SESSION_STATE = {"_graph": lambda: None}
    KEEPS_GRAPH = True
    _graph_inferred = False  # whether the graph model was built after shape inference (the one a kept open shows)

    def __init__(self, path: Path, index: ModelIndex) -> None:
        self.path = path
        self.index = index
        self._graph = None
        self.details = OnnxDetails(self)  # what `describe` shows of each kind of ref
        self.bound_dims: dict[str, int] = {}  # --dims: the graph inputs' sizes shape inference starts from
        self._opsets: dict[str, int] | None = None

    def deep_checks(self) -> list[Problem]:
        """Shape inference: it costs more than reading the file, so `check` and the TUI run it, `info` not."""
        from explorer.formats.onnx.reader import infer_shapes

        return infer_shapes(self.index, self.path, self.bound_dims)

    def bind_dims(self, dims: Mapping[str, int]) -> None:
        self.bound_dims = dict(dims)

    def input_dims(self) -> set[str]:
        return {dim.dim_param for value in self.index.main.proto.input if value.type.HasField("tensor_type")
                for dim in value.type.tensor_type.shape.dim if dim.HasField("dim_param")}  # fmt: skip

    def files_read(self) -> list[Path]:
        """The external weight files the model names beside it (`m.onnx.data`): no output may replace them."""
        found: dict[Path, None] = {}
        for info in self.index.graphs.values():
            for tensor in getattr(info.proto, "initializer", ()):  # a local function has none
                if tensor.data_location == 1 and left_in_file(tensor) is None:  # EXTERNAL, beside the model
                    location = next((e.value for e in tensor.external_data if e.key == "location"), "")
                    if location:
                        found[self.path.parent / location] = None
        return list(found)

    def weights(self, digests: bool = False) -> dict[str, Weight]:
        """The main graph's initializers (a name used twice: the first), hashed from the file when asked."""
        found: dict[str, Weight] = {}
        for tensor in self.index.main.proto.initializer:
            if tensor.name not in found:
                digest = weight_digest(tensor, self.path.parent) if digests else None
                found[tensor.name] = Weight(element_name(tensor.data_type), tuple(tensor.dims), tensor_bytes(tensor),
                                            digest)  # fmt: skip
        return found

    def node_signatures(self) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        versions = self.opset_versions()
        for key in self.index.counted:
            for n, node in enumerate(self.index.graphs[key].nodes):
                found[node.name or f"{key}.node[{n}]"] = (
                    node.op_type,
                    f"in {list(node.input)} out {list(node.output)} attrs {attribute_digest(node, versions)}",
                )
        return found

    def node_attributes(self, ref: Ref, as_written: bool = False) -> str:
        if isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "node":
            graph = self.index.graphs.get(ref[1])
            if graph is not None and 0 <= ref[2] < len(graph.nodes):
                return attribute_digest(graph.nodes[ref[2]], None if as_written else self.opset_versions())
        return ""

    def opset_versions(self) -> dict[str, int]:
        """The model's opset per domain ("" for the default one)."""
        if self._opsets is None:
            self._opsets = {("" if o.domain == "ai.onnx" else o.domain): int(o.version)
                            for o in self.index.model.opset_import}  # fmt: skip
        return self._opsets

    def graph_size_hint(self) -> int:
        return sum(len(info.nodes) for info in self.index.graphs.values())

    def counts_ops(self) -> bool:
        return True

    def draws_graph(self) -> bool:
        return True

    def build_graph(self) -> GraphModel | None:
        """Nodes from the index's one pass, grouped by scope, subgraph and function."""
        from explorer.formats.onnx.graph_model import onnx_graph

        self._graph_inferred = self.index.inference is not None
        return onnx_graph(self)

    def derived_state(self) -> tuple:
        """Shape inference's answer and the graph built after it: what a kept document saves a second open."""
        return (self.index.inference is not None, self._graph_cache is not None and self._graph_inferred)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if not self._graph_inferred:  # built before inference: not the graph a command or the TUI draws
            state.pop("_graph_cache", None)
        return state

    def parameter_bytes_by_dtype(self) -> dict[str, int]:
        summary = self.document.summary if self.document else {}
        return {k: int(v[1]) for k, v in summary.get("parameters_by_dtype", {}).items()}

    @property
    def graph(self) -> Any:
        """A networkx graph of every counted graph's nodes, edges from producer to consumer; built on demand."""
        if self._graph is None:
            import networkx as nx

            graph = nx.DiGraph()
            for key in self.index.counted:
                info = self.index.graphs[key]
                for n, node in enumerate(info.nodes):
                    graph.add_node((key, n), op=node.op_type)
                    for name in node.input:
                        source = info.producer.get(name)
                        if source is not None:
                            graph.add_edge((key, source), (key, n), value=name)
            self._graph = graph
        return self._graph

    def type_str(self, key: str, name: str) -> str:
        """A value's type: declared or inferred, else what the file states of a constant: an initializer's or a
        `Constant` node's tensor, through `Identity` copies of one (the TorchScript exporter reads its weights so):
        the same weight reads alike in two exports, with shape inference run or not."""
        for _ in range(8):  # a chain of copies, bounded
            found = self.index.type_of(key, name)
            if found is not None:
                return type_text(found)
            where = self.index.resolve(key, name)
            if where is None:
                return "?"
            info = self.index.graphs[where[0]]
            tensor = None
            if where[1] == "initializer":
                tensor = info.proto.initializer[info.initializers[name]]
            elif where[1] == "node":
                node = info.nodes[info.producer[name]]
                if node.op_type == "Identity" and len(node.input) == 1 and node.input[0]:
                    key, name = where[0], node.input[0]
                    continue
                if node.op_type == "Constant":
                    tensor = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
                    listed = {a.name: a for a in node.attribute}
                    for scalar, element in (("value_float", "float32"), ("value_int", "int64")):
                        if scalar in listed:
                            return f"{element}[]"
                    for many, element in (("value_floats", "float32"), ("value_ints", "int64")):
                        if many in listed:
                            count = len(listed[many].floats if element == "float32" else listed[many].ints)
                            return f"{element}[{count}]"
            if tensor is None:
                return "?"
            return f"{element_name(tensor.data_type)}[{', '.join(map(str, tensor.dims))}]"
        return "?"

    # ---- tree -------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        children = [Item("summary", "Summary", ("summary",)), *self._graph_children("graph")]
        functions = self.index.model.functions
        if functions:
            children.append(
                Item(
                    "functions",
                    f"Functions  ({len(functions)})",
                    ("functions",),
                    expand=self._function_items,
                )
            )
        return Item("file", name, ("summary",), children=children)

    def _function_items(self) -> list[Item]:
        return [self._graph_item(f"functions[{k}]") for k in range(len(self.index.model.functions))]

    def _graph_item(self, key: str, label: str | None = None) -> Item:
        info = self.index.graphs[key]
        text = label or f"{info.title}  ({len(info.nodes)} nodes)"
        return Item("graph", text, ("graph", key), expand=partial(self._graph_children, key))

    def _graph_children(self, key: str) -> list[Item]:
        info = self.index.graphs[key]
        items = [
            Item(
                "inputs",
                f"Inputs  ({len(info.inputs)})",
                ("inputs", key),
                expand=partial(self._values, key, info.inputs),
            ),
            Item(
                "outputs",
                f"Outputs  ({len(info.outputs)})",
                ("outputs", key),
                expand=partial(self._values, key, info.outputs),
            ),
        ]
        if info.initializers:
            items.append(
                Item(
                    "inits",
                    f"Initializers  ({len(info.initializers)})",
                    ("inits", key),
                    expand=partial(self._init_items, key),
                )
            )
        nodes = f"Nodes  ({len(info.nodes)})"
        items.append(Item("nodes", nodes, ("nodes", key), expand=partial(self._node_items, key)))
        return items

    def _values(self, key: str, names: list[str]) -> list[Item]:
        return [self._value_item(key, name) for name in names]

    def _value_item(self, key: str, name: str, prefix: str = "") -> Item:
        label = f"{prefix}{name or '(empty)'} : {self.type_str(key, name)}"
        return Item("value", label, ("value", key, name), expand=partial(self._links, key, name))

    def _links(self, key: str, name: str) -> list[Item]:
        """Jumps from a value to its producer and consumers (Enter follows them)."""
        items = []
        found = self.index.resolve(key, name)
        if found is not None:
            where, kind = found
            info = self.index.graphs[where]
            if kind == "node":
                n = info.producer[name]
                items.append(Item("link", f"← from {self.node_label(where, n)}", ("goto", ("node", where, n))))
            elif kind == "initializer":
                items.append(
                    Item("link", f"← initializer of {info.title}", ("goto", ("init", where, info.initializers[name])))
                )
            else:
                items.append(Item("link", f"← input of {info.title}", ("goto", ("graph", where))))
        for consumer_key, n in self.consumers_of(key, name):
            items.append(Item("link", f"→ to {self.node_label(consumer_key, n)}", ("goto", ("node", consumer_key, n))))
        return items

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """Producers and consumers of a node's values, a value or an initializer, for the details panel's jump."""
        if not isinstance(ref, tuple) or not ref:
            return []
        if ref[0] == "value":
            return [(item.label, _jump(item)) for item in self._links(ref[1], ref[2])]
        if ref[0] == "node":
            key, n = ref[1], ref[2]
            node = self.index.graphs[key].nodes[n]
            found = []
            for name in node.input:
                if name:
                    found += [(f"in {name}: {item.label}", _jump(item)) for item in self._links(key, name)[:1]]
            for name in node.output:
                if name:
                    found += [(f"out {name}: {item.label}", _jump(item)) for item in self._links(key, name)[1:]]
            return found
        if ref[0] == "init":
            key, i = ref[1], ref[2]
            name = self.index.graphs[key].proto.initializer[i].name
            return [(f"→ to {self.node_label(k, n)}", ("node", k, n)) for k, n in self.consumers_of(key, name)]
        return []

    def consumers_of(self, key: str, name: str) -> list[tuple[str, int]]:
        """Nodes reading `name` as defined in graph `key`: its own readers and those of nested subgraphs that
        use it from the outer scope."""
        found = [(key, n) for n in self.index.graphs[key].consumers.get(name, [])]
        for sub_key, sub in self.index.graphs.items():
            if sub.parent is None or sub_key == key or not self._nested_in(sub_key, key):
                continue
            if name in sub.consumers and self.index.resolve(sub_key, name) == self.index.resolve(key, name):
                found += [(sub_key, n) for n in sub.consumers[name]]
        return found

    def _nested_in(self, key: str, ancestor: str) -> bool:
        current = self.index.graphs[key].parent
        while current is not None:
            if current == ancestor:
                return True
            current = self.index.graphs[current].parent
        return False

    def node_label(self, key: str, n: int) -> str:
        node = self.index.graphs[key].nodes[n]
        domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
        return f"#{n} {domain}{node.op_type}" + (f"  {node.name}" if node.name else "")

    def _node_items(self, key: str) -> list[Item]:
        count = len(self.index.graphs[key].nodes)
        return chunked_items(0, count, partial(self._node_item, key), "nodes", lambda lo: ("chunk", key, lo))

    def _node_item(self, key: str, n: int) -> Item:
        return Item("node", self.node_label(key, n), ("node", key, n), expand=partial(self._node_children, key, n))

    def _node_children(self, key: str, n: int) -> list[Item]:
        node = self.index.graphs[key].nodes[n]
        items = [self._value_item(key, name, "in  ") for name in node.input if name]
        items += [self._value_item(key, name, "out ") for name in node.output if name]
        for sub_key in self.index.graphs[key].subgraphs.get(n, []):
            attribute = node.attribute[int(sub_key.rsplit("attribute[", 1)[1].split("]")[0])]
            items.append(
                self._graph_item(sub_key, f"{attribute.name}: subgraph ({len(self.index.graphs[sub_key].nodes)} nodes)")
            )
        return items

    def _init_items(self, key: str) -> list[Item]:
        proto = self.index.graphs[key].proto
        return [
            Item("init", f"{t.name}  {element_name(t.data_type)}{list(t.dims)}{_external_mark(t)}", ("init", key, i))
            for i, t in enumerate(proto.initializer)
        ]

    # ---- navigation -------------------------------------------------------------------------------------
    def _graph_path(self, key: str) -> list[Any]:
        """Refs from the top down to graph `key`'s item (the main graph's children sit at the top)."""
        if key == "graph":
            return []
        info = self.index.graphs[key]
        if info.kind == "function":
            return [("functions",), ("graph", key)]
        parent, owner = info.parent, info.owner
        assert parent is not None and owner is not None  # a subgraph: held by a node of its parent
        path = self._graph_path(parent) + self._node_path(parent, owner)
        return [*path, ("graph", key)]

    def _node_path(self, key: str, n: int) -> list[Any]:
        path: list[Any] = [("nodes", key)]
        if len(self.index.graphs[key].nodes) > CHUNK:
            path.append(("chunk", key, chunk_start(n)))
        return [*path, ("node", key, n)]

    def ancestors(self, ref: Ref) -> list[Ref]:
        if not isinstance(ref, tuple) or not ref:
            return []
        kind = ref[0]
        if kind == "graph":
            return self._graph_path(ref[1]) or [ref]
        if kind in ("inputs", "outputs", "inits", "nodes"):
            return [*self._graph_path(ref[1]), ref]
        if kind == "node":
            return self._graph_path(ref[1]) + self._node_path(ref[1], ref[2])
        if kind == "init":
            return [*self._graph_path(ref[1]), ("inits", ref[1]), ref]
        if kind == "value":
            key, name = ref[1], ref[2]
            info = self.index.graphs[key]
            if name in info.inputs:
                return [*self._graph_path(key), ("inputs", key), ref]
            if name in info.outputs:
                return [*self._graph_path(key), ("outputs", key), ref]
            if name in info.producer:
                return self._graph_path(key) + self._node_path(key, info.producer[name]) + [ref]
        return [ref]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        """The most specific item at a problem's protobuf location (`graph.node[3].attribute[0].g.node[1]`)."""
        location = refs.get("location") or ""
        best = None
        for key in sorted(self.index.graphs, key=len, reverse=True):
            if location == key or location.startswith(key + "."):
                rest = location[len(key) :]
                if rest.startswith(".node["):
                    n = int(rest[6:].split("]")[0])
                    if n < len(self.index.graphs[key].nodes):
                        return ("node", key, n)
                if rest.startswith(".initializer["):
                    return ("init", key, int(rest[13:].split("]")[0]))
                best = ("graph", key) if key != "graph" else ("summary",)
                break
        return best

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        """Nodes by name or op type, values by name, initializers by name, dtype or shape (e.g. "float16",
        "[16, 3, 3, 3]")."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits: list[tuple[str, Any]] = []
        shape = _shape_query(needle)
        for key, info in self.index.graphs.items():
            for n, node in enumerate(info.nodes):
                if needle == node.op_type.lower() or needle in node.name.lower():
                    hits.append((f"{info.title}: {self.node_label(key, n)}", ("node", key, n)))
                if len(hits) >= limit:
                    return hits
            for name in list(info.inputs) + list(info.producer):
                if needle in name.lower():
                    hits.append((f"{info.title}: value {name}", ("value", key, name)))
            if info.kind != "function":
                for i, tensor in enumerate(info.proto.initializer):
                    dims = tuple(tensor.dims)
                    if needle in tensor.name.lower() or needle == element_name(tensor.data_type) or dims == shape:
                        hits.append((f"{info.title}: initializer {tensor.name} {list(dims)}", ("init", key, i)))
        return hits[:limit]

    # ---- details ----------------------------------------------------------------------------------------
    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self.details, ref)

    def value_preview(self, ref: Ref, limit: int = 8) -> str:
        """A small constant's values (an initializer or a `Constant` node's, up to `limit` elements, stored
        inline): `[0, 2]`, a scalar without brackets (`1`)."""
        tensor = None
        if ref[0] == "init":
            tensor = self.index.graphs[ref[1]].proto.initializer[ref[2]]
        elif ref[0] == "node":
            node = self.index.graphs[ref[1]].nodes[ref[2]]
            for attribute in node.attribute if node.op_type == "Constant" else ():
                if attribute.name == "value":
                    tensor = attribute.t
                elif attribute.name.startswith("value_"):
                    return attribute_text(attribute)[1][:40]
        if tensor is None or tensor.data_location == TensorProto.EXTERNAL or math.prod(tensor.dims) > limit:
            return ""
        try:
            from onnx import numpy_helper

            values = numpy_helper.to_array(tensor).ravel().tolist()
        except Exception:  # a tensor the file got wrong: the check reports it, the preview stays empty
            return ""
        said = ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
        return (said if not tensor.dims and len(values) == 1 else f"[{said}]")[:40]


def _external_mark(tensor: Any) -> str:
    """Marks weights stored beside the model (not those the walk left in the model file: they are in it)."""
    return "  (external)" if tensor.data_location == TensorProto.EXTERNAL and left_in_file(tensor) is None else ""


def _shape_query(text: str) -> tuple[int, ...] | None:
    import re

    match = re.fullmatch(r"\[?\s*(\d+(?:\s*[,x×]\s*\d+)*)\s*\]?", text)
    if not match or not any(c in text for c in "[,x×"):
        return None
    return tuple(int(n) for n in re.findall(r"\d+", match.group(1)))


def attribute_digest(node: Any, versions: Mapping[str, int] | None = None) -> str:
    """A node's attributes by name with a short digest of each value (`kernel_shape=3f2a…,strides=9c1b…`):
    equal exactly when names and values are, so a diff sees a changed stride, not only a renamed attribute. An
    attribute written at its schema's default (TorchScript's `allowzero=0`) is left out, as if not written: the
    same model either way (`versions`: the model's opset per domain, to find the schema; None: every attribute
    written counts, as `diff --as-written` asks). A subgraph attribute
    (an If's branch, a Loop's body) counts by name only: its nodes are compared themselves."""
    import hashlib

    subgraphs = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
    defaults = _schema_defaults(node.op_type, node.domain, (versions or {}).get(node.domain or "", 0))
    return ",".join(a.name if a.type in subgraphs else
                    f"{a.name}={hashlib.blake2b(_unnamed(a), digest_size=6).hexdigest()}"
                    for a in sorted(node.attribute, key=lambda a: a.name)
                    if not _at_default(a, defaults.get(a.name)))  # fmt: skip


def _unnamed(attribute: Any) -> bytes:
    """The attribute's bytes without the names of the tensors it holds: TorchScript names a Constant's value by
    its node's path (`/layers.3/attn/Constant_output_0`), which differs from layer to layer and says nothing
    about the value (it kept alike layers from stacking and made a renamed constant a change)."""
    if attribute.type not in (AttributeProto.TENSOR, AttributeProto.TENSORS, AttributeProto.SPARSE_TENSOR,
                              AttributeProto.SPARSE_TENSORS):  # fmt: skip
        return attribute.SerializeToString(deterministic=True)
    copy = AttributeProto()
    copy.CopyFrom(attribute)
    tensors = [copy.t] if copy.HasField("t") else []
    tensors += list(copy.tensors)
    for sparse in ([copy.sparse_tensor] if copy.HasField("sparse_tensor") else []) + list(copy.sparse_tensors):
        tensors += [sparse.values, sparse.indices]
    for tensor in tensors:
        tensor.ClearField("name")
        tensor.ClearField("doc_string")
    return copy.SerializeToString(deterministic=True)


@functools.lru_cache(maxsize=1024)
def _schema_defaults(op_type: str, domain: str, version: int) -> dict[str, Any]:
    """The default value of each attribute of the op's schema at the model's opset (none when unknown)."""
    if version <= 0:
        return {}
    from onnx import defs

    try:
        schema = defs.get_schema(op_type, version, domain)
    except (defs.SchemaError, TypeError, ValueError):
        return {}
    return {name: attribute.default_value for name, attribute in schema.attributes.items()
            if attribute.default_value.type != AttributeProto.UNDEFINED}  # fmt: skip


def _at_default(attribute: Any, default: Any) -> bool:
    if default is None or attribute.type != default.type or attribute.type in (AttributeProto.GRAPH,
                                                                               AttributeProto.GRAPHS):
        return False
    from onnx import helper

    try:
        return bool(helper.get_attribute_value(attribute) == helper.get_attribute_value(default))
    except (ValueError, TypeError):
        return False


def _jump(link: Item) -> Ref:
    """Where a link item (`_links`: ref ("goto", target)) jumps to."""
    assert link.ref is not None
    return link.ref[1]
