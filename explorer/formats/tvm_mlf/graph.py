"""TVM graph-executor JSON, read leniently: nodes, entries (dtype, shape, storage id) and the data flow.

An entry id is `node_row_ptr[nid] + output index`; `attrs` columns (`dltype`, `shape`, `storage_id`,
`device_index`) are indexed by entry id. Broken parts are dropped with an error naming their JSON path; the
graph is only unusable (LoadError) when it is not JSON or not an object with a `nodes` array.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from explorer import jsonpath
from explorer.errors import Problem
from explorer.json_errors import locate_json_error
from explorer.memory_guard import BASE_BYTES, json_memory_bound, json_value_bound, refusal

MAX_STORAGE_ID = 1 << 31
# graph.json is decoded whole into Python values: its size and its number of values are capped before that (a
# 142 KB .tar.gz once held ten million empty nodes, 6 GiB decoded). Real graphs: ~25 values a node.
MAX_GRAPH_BYTES = 256 << 20
MAX_GRAPH_VALUES = 8_000_000
MAX_GRAPH_NODES = 1_000_000  # real graph-executor graphs hold thousands; a 38 KB .tar.gz held 2,000,000 empty ones
# What a node costs once read, drawn, laid out and written by `graph --json` (which lists every node, each
# validated against the output contract), at most: measured on graphs of empty nodes (200,000 `{}`: 854 MiB more
# than a graph of one, about 4.5 KB a node)
MEMORY_PER_OBJECT = 5_000
MAX_ENTRIES = 1_000_000  # node outputs in one graph: far above real models, far below what exhausts memory
ErrorSink = Callable[[str, str], None]  # (JSON path, message): one bad-graph problem
MAX_ENTRY_BYTES = 1 << 48  # 256 TiB: anything larger is a broken shape, and sums of it would overflow int64
_DTYPE = re.compile(r"^(u?int|float|bfloat)(\d+)(?:x(\d+))?$")


def dtype_bytes(dtype: str) -> int | None:
    """Bytes per element of a TVM dtype string (`float32`, `int8`, `float16x4`, `bool`); None when unknown."""
    if dtype == "bool":
        return 1
    match = _DTYPE.match(dtype)
    if not match:
        return None
    lanes = int(match.group(3) or 1)
    return max(1, int(match.group(2)) // 8) * lanes


@dataclass(slots=True)
class GraphNode:
    nid: int
    op: str  # "null" (input or parameter) or "tvm_op"
    name: str
    inputs: list[tuple[int, int]]  # (node id, output index)
    attrs: dict[str, Any]
    num_outputs: int = 1

    @property
    def func_name(self) -> str:
        return str(self.attrs.get("func_name", "")) if self.op == "tvm_op" else ""


@dataclass(slots=True)
class Entry:
    eid: int
    nid: int
    index: int
    dtype: str
    shape: tuple[int, ...]
    storage_id: int
    device_index: int | None = None

    @property
    def nbytes(self) -> int:
        size = dtype_bytes(self.dtype) or 0
        for dim in self.shape:
            size *= dim
        return size


@dataclass
class Graph:
    member: str
    nodes: list[GraphNode] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    arg_nodes: list[int] = field(default_factory=list)
    heads: list[tuple[int, int]] = field(default_factory=list)
    row_ptr: list[int] = field(default_factory=list)

    def entry_id(self, nid: int, index: int) -> int | None:
        if 0 <= nid < len(self.row_ptr) - 1 and 0 <= index < self.row_ptr[nid + 1] - self.row_ptr[nid]:
            return self.row_ptr[nid] + index
        return None

    def consumers(self) -> dict[int, list[int]]:
        """Node id → the nodes that read one of its outputs."""
        result: dict[int, list[int]] = {}
        for node in self.nodes:
            for nid, _ in node.inputs:
                result.setdefault(nid, []).append(node.nid)
        return result


class GraphError(Exception):
    """The graph JSON cannot be used at all: (location, message)."""


def parse_graph(data: bytes, member: str) -> tuple[Graph, list[Problem]]:
    where = f"{member}: "
    if len(data) > MAX_GRAPH_BYTES:
        raise GraphError(where + "$", f"{len(data):,} bytes, over the {MAX_GRAPH_BYTES:,}-byte cap for a graph")
    if json_value_bound(data) > MAX_GRAPH_VALUES:
        raise GraphError(where + "$", f"more than {MAX_GRAPH_VALUES:,} JSON values, over the cap for a graph")
    if (said := refusal(BASE_BYTES + json_memory_bound(data, MEMORY_PER_OBJECT), f"{len(data):,}-byte graph")):
        raise GraphError(where + "$", said)
    try:
        top = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as undecodable:
        location, message = locate_json_error(data, undecodable)
        raise GraphError(where + location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise GraphError(where + "$", "JSON nested too deeply to be a graph") from None
    if not isinstance(top, dict) or not isinstance(top.get("nodes"), list):
        raise GraphError(where + "$", 'expected a graph object with a "nodes" array')
    if len(top["nodes"]) > MAX_GRAPH_NODES:
        raise GraphError(where + "$.nodes", f"{len(top['nodes']):,} nodes, over the cap of {MAX_GRAPH_NODES:,} for a "
                         "graph")  # fmt: skip
    problems: list[Problem] = []

    def error(path: str, message: str) -> None:
        problems.append(Problem("error", "bad-graph", message, where + path, {"member": member}))

    graph = Graph(member)
    for nid, raw in enumerate(top["nodes"]):
        node = _node(nid, raw, f"$.nodes[{nid}]", error)
        graph.nodes.append(node)
    graph.row_ptr = _row_ptr(top.get("node_row_ptr"), graph.nodes, error)
    graph.arg_nodes = [n for n in _int_list(top.get("arg_nodes", []), "$.arg_nodes", error) if _valid(n, graph, error)]
    for k, head in enumerate(top.get("heads", []) if isinstance(top.get("heads"), list) else []):
        pair = _pair(head)
        if pair is None or graph.entry_id(*pair) is None:
            error(
                f"$.heads[{k}]", f"expected [node, output, version] naming an output, got {jsonpath.short_json(head)}"
            )
        else:
            graph.heads.append(pair)
    for node in graph.nodes:
        kept = []
        for k, (nid, index) in enumerate(node.inputs):
            if graph.entry_id(nid, index) is None:
                error(f"$.nodes[{node.nid}].inputs[{k}]", f"names output {index} of node {nid}, which does not exist")
            elif nid >= node.nid:
                error(f"$.nodes[{node.nid}].inputs[{k}]", f"reads node {nid}, which comes later: not in node order")
            else:
                kept.append((nid, index))
        node.inputs = kept
    graph.entries = _entries(top.get("attrs"), graph, error)
    return graph, problems


def _valid(nid: int, graph: Graph, error: ErrorSink) -> bool:
    if 0 <= nid < len(graph.nodes):
        return True
    error("$.arg_nodes", f"node {nid} does not exist")
    return False


def _pair(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) >= 2 and all(type(v) is int for v in value[:2]):
        return value[0], value[1]
    return None


def _int_list(value: Any, path: str, error: ErrorSink) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        error(path, f"expected an array of integers, got {jsonpath.short_json(value)}")
        return []
    return value


def _node(nid: int, raw: Any, path: str, error: ErrorSink) -> GraphNode:
    if not isinstance(raw, dict):
        error(path, f"expected a node object, got {jsonpath.short_json(raw)}; kept as an empty input")
        return GraphNode(nid, "null", f"<node {nid}>", [], {})
    op = raw.get("op", "null")
    name = raw.get("name", f"<node {nid}>")
    if op not in ("null", "tvm_op"):
        error(path + ".op", f'expected "null" or "tvm_op", got {jsonpath.short_json(op)}')
        op = "tvm_op" if isinstance(op, str) else "null"
    if not isinstance(name, str):
        error(path + ".name", f"expected a string, got {jsonpath.short_json(name)}")
        name = str(name)
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        error(path + ".attrs", f"expected an object, got {jsonpath.short_json(attrs)}")
        attrs = {}
    inputs = []
    for k, value in enumerate(raw.get("inputs", []) if isinstance(raw.get("inputs", []), list) else []):
        pair = _pair(value)
        if pair is None:
            error(f"{path}.inputs[{k}]", f"expected [node, output, version], got {jsonpath.short_json(value)}")
        else:
            inputs.append(pair)
    outputs = attrs.get("num_outputs", 1)
    try:
        num_outputs = int(outputs)
    except (TypeError, ValueError):
        error(path + ".attrs.num_outputs", f"expected a number, got {jsonpath.short_json(outputs)}")
        num_outputs = 1
    return GraphNode(nid, op, name, inputs, attrs, max(0, min(num_outputs, 1 << 16)))


def _row_ptr(value: Any, nodes: list[GraphNode], error: ErrorSink) -> list[int]:
    """`node_row_ptr`, or one built from num_outputs when it is missing or inconsistent."""
    built = [0]
    for node in nodes:
        built.append(built[-1] + node.num_outputs)
    if built[-1] > MAX_ENTRIES:  # num_outputs is text in the file: "4000000000" must not become 4e9 entries
        error("$.nodes", f"the nodes declare {built[-1]:,} outputs, more than {MAX_ENTRIES:,}: one output each is used")
        built = list(range(len(nodes) + 1))
    if value is None:
        return built
    if (
        not isinstance(value, list)
        or len(value) != len(nodes) + 1
        or not all(type(v) is int for v in value)
        or any(b < a for a, b in zip(value, value[1:], strict=False))
        or (value and value[0] != 0)
        or (value and value[-1] > MAX_ENTRIES)
    ):
        error(
            "$.node_row_ptr",
            f"expected {len(nodes) + 1} ascending integers from 0 (at most {MAX_ENTRIES:,}); rebuilt from num_outputs",
        )
        return built
    return value


def _column(attrs: dict, name: str, kind: str, count: int, error: ErrorSink) -> list | None:
    value = attrs.get(name)
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and value[0] == kind and isinstance(value[1], list)):
        error(f"$.attrs.{name}", f'expected ["{kind}", [...]], got {jsonpath.short_json(value)}')
        return None
    if len(value[1]) != count:
        error(f"$.attrs.{name}", f"has {len(value[1])} values for {count} entries")
    return value[1]


def _entries(attrs: Any, graph: Graph, error: ErrorSink) -> list[Entry]:
    count = graph.row_ptr[-1] if graph.row_ptr else 0
    if not isinstance(attrs, dict):
        error("$.attrs", f"expected an object with dltype, shape and storage_id, got {jsonpath.short_json(attrs)}")
        attrs = {}
    dtypes = _column(attrs, "dltype", "list_str", count, error) or []
    shapes = _column(attrs, "shape", "list_shape", count, error) or []
    storage = _column(attrs, "storage_id", "list_int", count, error) or []
    devices = _column(attrs, "device_index", "list_int", count, error)
    entries = []
    for node in graph.nodes:
        for index in range(graph.row_ptr[node.nid + 1] - graph.row_ptr[node.nid]):
            eid = graph.row_ptr[node.nid] + index
            dtype = dtypes[eid] if eid < len(dtypes) and isinstance(dtypes[eid], str) else "?"
            shape = shapes[eid] if eid < len(shapes) else None
            if not (isinstance(shape, list) and all(type(d) is int and 0 <= d < 1 << 40 for d in shape)):
                if eid < len(shapes):
                    error(
                        f"$.attrs.shape[1][{eid}]", f"expected a list of dimensions, got {jsonpath.short_json(shape)}"
                    )
                shape = []
            sid = storage[eid] if eid < len(storage) and type(storage[eid]) is int else -1
            if eid < len(storage) and not 0 <= sid < MAX_STORAGE_ID:
                got = jsonpath.short_json(storage[eid])
                error(f"$.attrs.storage_id[1][{eid}]", f"expected a storage id in 0..{MAX_STORAGE_ID - 1}, got {got}")
                sid = -1
            if dtype != "?" and dtype_bytes(dtype) is None:
                error(f"$.attrs.dltype[1][{eid}]", f"unknown dtype {dtype!r}")
            elif math.prod(shape) * (dtype_bytes(dtype) or 0) > MAX_ENTRY_BYTES:
                error(f"$.attrs.shape[1][{eid}]", f"{shape} of {dtype} is over {MAX_ENTRY_BYTES:,} bytes; not planned")
                shape = []
            device = devices[eid] if devices is not None and eid < len(devices) and type(devices[eid]) is int else None
            entries.append(Entry(eid, node.nid, index, dtype, tuple(shape), sid, device))
    return entries
