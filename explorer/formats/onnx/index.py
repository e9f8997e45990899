"""An index over an ONNX ModelProto: every graph (main, subgraphs in node attributes, local functions) with
its producers, consumers and value types, so the views answer "who makes this value, who reads it" at once.

Graphs are keyed by their protobuf path (`graph`, `graph.node[3].attribute[0].g`, `functions[1]`), which is
also the location problems carry. A name a subgraph reads but does not define resolves to the nearest
enclosing graph that does (ONNX's outer-scope rule).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from onnx import AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto

from explorer.errors import Severity

ELEMENT_NAMES = {code: name.lower() for name, code in TensorProto.DataType.items()}
ELEMENT_NAMES.update({TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64", TensorProto.FLOAT16: "float16"})
# bits per element, for parameter bytes (strings have no fixed size)
ELEMENT_BITS: dict[int, int] = {
    TensorProto.FLOAT: 32,
    TensorProto.DOUBLE: 64,
    TensorProto.FLOAT16: 16,
    TensorProto.BFLOAT16: 16,
    TensorProto.INT8: 8,
    TensorProto.UINT8: 8,
    TensorProto.INT16: 16,
    TensorProto.UINT16: 16,
    TensorProto.INT32: 32,
    TensorProto.UINT32: 32,
    TensorProto.INT64: 64,
    TensorProto.UINT64: 64,
    TensorProto.BOOL: 8,
    TensorProto.COMPLEX64: 64,
    TensorProto.COMPLEX128: 128,
}
for _name in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0"):
    if hasattr(TensorProto, _name):
        ELEMENT_BITS[getattr(TensorProto, _name)] = 8
for _name in ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2"):
    if hasattr(TensorProto, _name):
        ELEMENT_BITS[getattr(TensorProto, _name)] = 2 if _name.endswith("2") else 4


def element_name(code: int) -> str:
    return ELEMENT_NAMES.get(code, f"type{code}")


@dataclass
class GraphInfo:
    key: str
    proto: GraphProto | FunctionProto  # FunctionProto for a local function
    kind: str  # "main", "subgraph" or "function"
    title: str
    parent: str | None = None  # the enclosing graph's key (subgraphs)
    owner: int | None = None  # the node in the parent that holds this subgraph
    producer: dict[str, int] = field(default_factory=dict)  # value name → node index
    consumers: dict[str, list[int]] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    initializers: dict[str, int] = field(default_factory=dict)  # name → index in proto.initializer
    types: dict[str, TypeProto] = field(default_factory=dict)  # name → its type as the file declares it
    # name → its type as shape inference found it, where the file declares none or one without a shape
    inferred: dict[str, TypeProto] = field(default_factory=dict)
    subgraphs: dict[int, list[str]] = field(default_factory=dict)  # node index → keys of its subgraphs
    # per node, read in the one indexing pass so the graph view need not walk the protobuf again
    node_names: list[str] = field(default_factory=list)
    node_ops: list[str] = field(default_factory=list)
    node_first_output: list[str] = field(default_factory=list)
    # node index → its module path ("layers.0/attn") and classes, from torch's exporter's metadata (`torch_scope`)
    node_modules: dict[int, TorchScope] = field(default_factory=dict)
    scope_problems: list[tuple[int, str, str]] = field(default_factory=list)  # (node, name, why) metadata ignored

    @property
    def nodes(self) -> Sequence[NodeProto]:
        return self.proto.node

    def type_of(self, name: str) -> TypeProto | None:
        """The value's type in this graph: inferred where the file declares none, or one without a shape."""
        declared = self.types.get(name)
        if declared is None or shapeless(declared):
            return self.inferred.get(name) or declared
        return declared

    def __getstate__(self) -> dict[str, Any]:
        """Its protobuf parts are the model's: the index keeps the model once and finds them again (`__setstate__`
        of the index); the inferred types are the inference's, kept once by the index as its output."""
        return {k: v for k, v in self.__dict__.items() if k not in ("proto", "types", "inferred")}


def shapeless(declared: Any) -> bool:
    return declared.HasField("tensor_type") and not declared.tensor_type.HasField("shape")


@dataclass
class KeptInference:
    """Shape inference's answer for the bound dims: the inferred model as the child gave it (None when it failed)
    and the problems it made; a document read back from the cache merges it again instead of running it."""

    dims: dict[str, int]
    output: bytes | None
    problems: list[Any]


@dataclass
class ModelIndex:
    model: ModelProto
    graphs: dict[str, GraphInfo]
    counted: list[str]  # main + subgraphs outside functions, in document order (the summary's "graphs")
    problems: list[tuple[Severity, str, str, str]] = field(default_factory=list)  # severity, code, message, where
    stripped: bytes = b""  # the file as the wire walk left it (large tensors' bytes in the file): what inference reads
    types_version: int = 0  # counts the times shape inference added types (what an op's counts were read from)
    inference: KeptInference | None = None  # the last inference's answer, kept with the document

    def __getstate__(self) -> dict[str, Any]:
        """The model as its bytes (`stripped`, which it was parsed from: a parse is all reading it back costs),
        each graph's parts found again in it by key; the declared types read again, the inferred ones not (a
        document read back has not run its deep checks: they merge `inference` again)."""
        state = self.__dict__.copy()
        state["model"] = None if self.stripped else self.model.SerializeToString()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        serialized = state.pop("model")
        self.__dict__.update(state)
        self.model = ModelProto()
        self.model.ParseFromString(serialized if serialized is not None else self.stripped)
        for key, graph in self.graphs.items():
            graph.proto = _graph_at(self.model, key)
            graph.types, graph.inferred = {}, {}
            _declare_types(graph)

    @property
    def main(self) -> GraphInfo:
        return self.graphs["graph"]

    def resolve(self, key: str, name: str) -> tuple[str, str] | None:
        """Where a value is defined, seen from graph `key`: (graph key, "input"|"initializer"|"node"), or None."""
        current: str | None = key
        while current is not None:
            graph = self.graphs[current]
            if name in graph.producer:
                return current, "node"
            if name in graph.initializers:
                return current, "initializer"
            if name in graph.inputs:
                return current, "input"
            current = graph.parent
        return None

    def type_of(self, key: str, name: str) -> TypeProto | None:
        current: str | None = key
        while current is not None:
            found = self.graphs[current].type_of(name)
            if found is not None:
                return found
            current = self.graphs[current].parent
        return None

    def op_types(self) -> Counter:
        return Counter(node.op_type for key in self.counted for node in self.graphs[key].nodes)


class BadText(Exception):
    """A name in the protobuf is not valid UTF-8 (protobuf then hands back bytes): (location,)."""


TORCH_SCOPES = "pkg.torch.onnx.name_scopes"  # torch.onnx.export(dynamo=True): the module path of each node
TORCH_CLASSES = "pkg.torch.onnx.class_hierarchy"  # and the class of each module on it
MAX_SCOPE_TEXT = 4096  # longer values are not module paths: ignored (with a warning)
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class TorchScope:
    """A node's module path from torch's dynamo exporter: `path` ("layers.0/attn"), the class of each module on
    it (short names: "Block", "Linear"; empty when the file's list does not fit the path), or why the metadata
    was not used (`ignored`)."""

    path: str = ""
    classes: tuple[str, ...] = ()
    ignored: str = ""


_NO_SCOPE = TorchScope()


def _quoted_list(text: Any) -> list[str] | None:
    """The names of a Python list's text; the exporter writes `['a', 'b']`, which without a backslash or a double
    quote splits exactly at `', '` (a name holding a quote would be written in double quotes): that is split at C
    speed (the regex was most of the index's time on a big export: BENCHMARKS.md), anything else goes through it."""
    if type(text) is not str or not (text.startswith("[") and text.endswith("]")):
        return None
    if _plain(text):
        return text[2:-2].split("', '")
    return [a if b == "" and a else b for a, b in _QUOTED.findall(text)]


def _plain(text: str) -> bool:
    """The exporter's plain list form: `['a', 'b']`, no backslash, no double quote."""
    return text.startswith("['") and text.endswith("']") and "\\" not in text and '"' not in text


def torch_scope(props: Any) -> TorchScope:
    """The module path torch's dynamo exporter gives a node in its metadata: `['', 'layers.0', 'layers.0.attn',
    'linear']` (the root module, the modules it is in by their full names, the traced op) → "layers.0/attn" (each
    module named within its parent, as the model's own code names it); `class_hierarchy` (the root's class, each
    module's, the op's) gives their classes. Metadata that is too long, not such a list or holds control
    characters is ignored, and says why."""
    text = said = None
    for prop in props:
        key = prop.key
        if key == TORCH_SCOPES:
            text = prop.value
        elif key == TORCH_CLASSES:
            said = prop.value
    if text is None:
        return _NO_SCOPE
    if type(text) is not str or len(text) > MAX_SCOPE_TEXT:
        return TorchScope(ignored=f"{TORCH_SCOPES} longer than {MAX_SCOPE_TEXT:,} characters{_INSTEAD}")
    if type(said) is not str or len(said) > MAX_SCOPE_TEXT:
        said = None if said is None else ""
    # the nodes of one module differ in their last name only (the op): the rest is read once (lru_cache), its
    # text cut at the last separator, which is exact where the exporter's plain form is split (`_quoted_list`)
    cut, said_cut = _plain_cut(text), _plain_cut(said) if said else -1
    if cut > 0 and (said is None or said == "" or said_cut > 0):
        if _CONTROL.search(text, cut) or (said and _CONTROL.search(said, said_cut)):
            return TorchScope(ignored=f"{TORCH_SCOPES} holds control characters{_INSTEAD}")
        return _scope_of_prefix(text[:cut], said[:said_cut] if said else said)
    return _scope_of(text, said)


_INSTEAD = "; grouped by its name instead"


def _plain_cut(text: str | None) -> int:
    """Where a list in the exporter's plain form (`['a', 'b']`: no backslash, no double quote) has its last
    separator; -1 for any other text."""
    return text.rfind("', '") if text and _plain(text) else -1


@functools.lru_cache(maxsize=1024)  # a path of 4,096 characters at most: 8 MiB at worst
def _scope_of_prefix(text: str, said: str | None) -> TorchScope:
    """`_scope_of` a plain list's text without its last name (that of the op, which the result does not use)."""
    return _scope_of(text + "', 'op']", None if said is None else said + "', 'op']" if said else "")


def _scope_of(text: str, said: str | None) -> TorchScope:
    parts = _quoted_list(text)
    if parts is None:
        return TorchScope(ignored=f"{TORCH_SCOPES} is not a list of names{_INSTEAD}")
    if _CONTROL.search(text):
        return TorchScope(ignored=f"{TORCH_SCOPES} holds control characters{_INSTEAD}")
    modules = parts[1:-1]
    named: list[str] = []
    kept: list[int] = []
    parent = ""
    for k, module in enumerate(modules):
        if not module:
            continue
        short = module[len(parent) + 1 :] if parent and module.startswith(parent + ".") else module
        named.append(short.replace("/", "∕"))  # a scope's parts are cut at '/'
        kept.append(k)
        parent = module
    if said is None:
        return TorchScope("/".join(named))
    found = _quoted_list(said) if said else None
    if found is None or len(found) != len(parts) or _CONTROL.search("".join(found)):
        return TorchScope("/".join(named), ignored=f"{TORCH_CLASSES} does not name one class per module of its path "
                                                   "(its modules' classes are not shown)")  # fmt: skip
    return TorchScope("/".join(named), tuple(found[1:-1][k].rpartition(".")[2] for k in kept))


def _require_text(values: Any, location: str) -> None:
    for value in values:
        if type(value) is not str:
            raise BadText(location)


def build_index(model: Any) -> ModelIndex:
    _require_text([o.domain for o in model.opset_import], "ModelProto.opset_import")
    _require_text([f.name for f in model.functions] + [f.domain for f in model.functions], "ModelProto.functions")
    _require_text([p.key for p in model.metadata_props], "ModelProto.metadata_props")
    graphs: dict[str, GraphInfo] = {}
    counted: list[str] = []
    index = ModelIndex(model, graphs, counted)
    _add_graph(index, model.graph, "graph", "main", "main graph", None, None, count=True)
    for k, function in enumerate(model.functions):
        key = f"functions[{k}]"
        title = f"function {function.domain + '.' if function.domain else ''}{function.name}"
        _add_graph(index, function, key, "function", title, None, None, count=False)
    return index


def _add_graph(
    index: ModelIndex,
    proto: Any,
    key: str,
    kind: str,
    title: str,
    parent: str | None,
    owner: int | None,
    count: bool,
    depth: int = 0,
) -> None:
    graph = GraphInfo(key, proto, kind, title, parent, owner)
    index.graphs[key] = graph
    if count:
        index.counted.append(key)
    if kind == "function":
        graph.inputs = list(proto.input)
        graph.outputs = list(proto.output)
    else:
        graph.inputs = [v.name for v in proto.input]
        graph.outputs = [v.name for v in proto.output]
        graph.initializers = {t.name: i for i, t in enumerate(proto.initializer)}
    _declare_types(graph)
    _require_text(graph.inputs + graph.outputs + list(graph.initializers), key)
    producer, consumers = graph.producer, graph.consumers
    known = set(graph.inputs) | graph.initializers.keys()
    # One pass per graph does the indexing and the text and definition checks: on a 20,000-node model every
    # extra pass costs about as much as the protobuf parse itself.
    names, ops, firsts = graph.node_names, graph.node_ops, graph.node_first_output
    last_producer: dict[str, int] | None = None  # built at the first undefined value: a cut file has thousands
    for n, node in enumerate(proto.node):
        op_type, node_name = node.op_type, node.name
        if type(op_type) is not str or type(node_name) is not str or type(node.domain) is not str:
            raise BadText(f"{key}.node[{n}]")
        names.append(node_name)
        ops.append(op_type)
        if node.metadata_props:
            module = torch_scope(node.metadata_props)
            if module.path:
                graph.node_modules[n] = module
            if module.ignored:
                graph.scope_problems.append((n, node_name, module.ignored))
        outputs = node.output
        firsts.append(outputs[0] if len(outputs) and type(outputs[0]) is str else "")
        for name in node.input:
            if not name:
                continue
            if type(name) is not str:
                raise BadText(f"{key}.node[{n}].input")
            readers = consumers.get(name)
            if readers is None:
                consumers[name] = [n]
            else:
                readers.append(n)
            if name not in producer and name not in known and not (parent and index.resolve(parent, name)):
                k = list(node.input).index(name)
                if last_producer is None:
                    last_producer = {out: i for i, other in enumerate(proto.node) for out in other.output}
                later = " (a later node produces it: the nodes are not in topological order)"
                index.problems.append(
                    (
                        "error",
                        "undefined-value",
                        f"node {n} ({node.op_type}) reads {name!r}, which no earlier node, input or initializer defines"
                        + (later if last_producer.get(name, -1) > n else ""),
                        f"{key}.node[{n}].input[{k}]",
                    )
                )
        for name in outputs:
            if not name:
                continue
            if type(name) is not str:
                raise BadText(f"{key}.node[{n}].output")
            if name in producer:
                index.problems.append(
                    (
                        "error",
                        "duplicate-output",
                        f"value {name!r} is produced twice (nodes {producer[name]} and {n})",
                        f"{key}.node[{n}].output",
                    )
                )
            else:
                producer[name] = n
        if not node.attribute:
            continue
        for a, attribute in enumerate(node.attribute):
            if attribute.type == AttributeProto.GRAPH or (attribute.type == 0 and attribute.HasField("g")):
                subgraphs = [(f"{key}.node[{n}].attribute[{a}].g", attribute.g)]
            elif attribute.type == AttributeProto.GRAPHS:
                subgraphs = [
                    (f"{key}.node[{n}].attribute[{a}].graphs[{g}]", sub) for g, sub in enumerate(attribute.graphs)
                ]
            else:
                continue
            for sub_key, sub in subgraphs:
                graph.subgraphs.setdefault(n, []).append(sub_key)
                if depth >= 64:  # protobuf itself refuses deeper nesting; stop well before Python's stack does
                    index.problems.append(("error", "too-deep", "subgraphs nested more than 64 deep", sub_key))
                    continue
                sub_title = f"{node.op_type} {attribute.name}" + (f" #{node.name}" if node.name else "")
                _add_graph(index, sub, sub_key, "subgraph", sub_title, key, n, count, depth + 1)
    if graph.scope_problems:  # one warning for all of them: a file that lies once usually lies everywhere
        n, name, why = graph.scope_problems[0]
        others = len(graph.scope_problems) - 1
        more = f" (and {others:,} other node{'s' if others != 1 else ''})" if others else ""
        index.problems.append(("warning", "torch-scope-ignored", f"node {n} {name!r}{more}: {why}",
                               f"{key}.node[{n}].metadata_props"))  # fmt: skip


def _declare_types(graph: GraphInfo) -> None:
    """The types the graph's file declares (a function's value_info; a graph's inputs, outputs and value_info)."""
    proto = graph.proto
    if graph.kind == "function":
        for info in getattr(proto, "value_info", []):
            graph.types[info.name] = info.type
        return
    for values in (proto.input, proto.output, proto.value_info):
        for info in values:
            if info.HasField("type"):
                graph.types.setdefault(info.name, info.type)


_SUBGRAPH_KEY = re.compile(r"^(.*)\.node\[(\d+)\]\.attribute\[(\d+)\]\.(?:g|graphs\[(\d+)\])$")


def _graph_at(model: ModelProto, key: str) -> Any:
    """The graph or function a key names (`graph`, `functions[1]`, `graph.node[3].attribute[0].g`)."""
    if key == "graph":
        return model.graph
    if key.startswith("functions[") and key.endswith("]"):
        return model.functions[int(key[len("functions[") : -1])]
    found = _SUBGRAPH_KEY.match(key)
    if found is None:
        raise ValueError(f"not a graph's key: {key}")
    owner = _graph_at(model, found.group(1)).node[int(found.group(2))].attribute[int(found.group(3))]
    return owner.g if found.group(4) is None else owner.graphs[int(found.group(4))]


def tensor_bytes(tensor: TensorProto) -> int | None:
    """Bytes the tensor's dims and element type declare (None for a type without a fixed size, as strings)."""
    bits = ELEMENT_BITS.get(tensor.data_type)
    if bits is None:
        return None
    return math.ceil(math.prod(tensor.dims) * bits / 8)
