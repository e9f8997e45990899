"""The details panel's sections for an ONNX model's items: the model, a graph and its values, a node with its
attributes and where each input comes from, an initializer with its value statistics (read only when shown)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from onnx import TensorProto

from explorer.document import Document, KeyHint, Section
from explorer.formats.onnx.index import ModelIndex, element_name, tensor_bytes
from explorer.formats.onnx.text import attribute_text
from explorer.formats.onnx.wire import INLINE, STAMP, left_in_file
from explorer.formatting import human_bytes
from explorer.models.ref import Ref

MAX_STATS_BYTES = 256 * 1024 * 1024  # a weight bigger than this is not read for its value statistics
DIGEST_CHUNK = 1 << 20  # `diff --weights` hashes a weight this many bytes at a time


class ViewParts(Protocol):
    """What the details read of the ONNX view (the view is one; named here, the two modules need not import
    each other)."""

    document: Document | None
    index: ModelIndex
    path: Path

    def consumers_of(self, key: str, name: str) -> list[tuple[str, int]]: ...
    def describe(self, ref: Ref) -> list[Section]: ...
    def node_label(self, key: str, n: int) -> str: ...
    def type_str(self, key: str, name: str) -> str: ...


class OnnxDetails:
    """What `describe` shows of each kind of ref (`describe_by_kind` finds `_describe_<kind>` here)."""

    def __init__(self, view: ViewParts) -> None:
        self.view = view

    def _describe_summary(self) -> list[Section]:
        model = self.view.index.model
        summary = self.view.document.summary if self.view.document else {}
        rows = [
            ("format", f"ONNX, IR version {model.ir_version}"),
            ("producer", f"{model.producer_name} {model.producer_version}".strip() or "(not set)"),
            ("domain", model.domain or "(not set)"),
            ("model version", model.model_version),
            ("opsets", ", ".join(f"{k} {v}" for k, v in summary.get("opsets", {}).items())),
        ]
        rows += [(k.replace("_", " "), f"{v:,}") for k, v in summary.items() if isinstance(v, int)]
        if model.doc_string:
            rows.append(("doc", model.doc_string[:200]))
        sections = [Section("ONNX model", ("property", "value"), rows)]
        if model.metadata_props:
            sections.append(Section("Metadata", ("key", "value"), [(p.key, p.value) for p in model.metadata_props]))
        sections.append(Section("Op types", ("op", "nodes"), list(summary.get("op_types", {}).items())))
        dtypes = summary.get("parameters_by_dtype", {})
        sections.append(
            Section(
                "Parameters by dtype",
                ("dtype", "elements", "bytes"),
                [(k, f"{v[0]:,}", f"{v[1]:,}") for k, v in dtypes.items()],
            )
        )
        return sections

    def _describe_graph(self, key: str) -> list[Section]:
        view = self.view
        info = view.index.graphs[key]
        rows = [("graph", info.title), ("location", key), ("nodes", len(info.nodes))]
        if info.parent is not None and info.owner is not None:
            rows.append(
                ("inside", f"{view.index.graphs[info.parent].title}, node {view.node_label(info.parent, info.owner)}")
            )
        if info.kind == "function":
            proto = info.proto
            rows += [("domain", proto.domain), ("attributes", ", ".join(proto.attribute) or "none")]
            rows.append(("opsets", ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in proto.opset_import)))
        outer = self._outer_values(key) if info.parent is not None else []
        sections = [Section(info.title, ("property", "value"), rows)]
        sections.append(Section("Inputs", ("name", "type"), [(n, self.view.type_str(key, n)) for n in info.inputs]))
        sections.append(Section("Outputs", ("name", "type"), [(n, self.view.type_str(key, n)) for n in info.outputs]))
        if outer:
            sections.append(
                Section(
                    "Values from enclosing graphs",
                    ("name", "defined in"),
                    [(n, self._defined_in(key, n)) for n in outer],
                )
            )
        return sections

    def _defined_in(self, key: str, name: str) -> str:
        """The title of the graph defining a value `key` reads (an outer value: _outer_values found it)."""
        found = self.view.index.resolve(key, name)
        return self.view.index.graphs[found[0]].title if found else "?"

    def _outer_values(self, key: str) -> list[str]:
        """Names a subgraph reads from enclosing graphs (only subgraphs have any)."""
        info = self.view.index.graphs[key]
        names = set()
        for node in info.nodes:
            for name in node.input:
                if name and name not in info.producer and name not in info.initializers and name not in info.inputs:
                    found = self.view.index.resolve(key, name)
                    if found and found[0] != key:
                        names.add(name)
        return sorted(names)

    def _describe_inputs(self, key: str) -> list[Section]:
        names = self.view.index.graphs[key].inputs
        return [Section("Inputs", ("name", "type"), [(n, self.view.type_str(key, n)) for n in names])]

    def _describe_outputs(self, key: str) -> list[Section]:
        names = self.view.index.graphs[key].outputs
        return [Section("Outputs", ("name", "type"), [(n, self.view.type_str(key, n)) for n in names])]

    def _describe_nodes(self, key: str) -> list[Section]:
        info = self.view.index.graphs[key]
        counts: dict[str, int] = {}
        for node in info.nodes:
            counts[node.op_type] = counts.get(node.op_type, 0) + 1
        return [Section(f"Nodes of {info.title}", ("op", "count"), sorted(counts.items(), key=lambda kv: -kv[1]))]

    def _describe_chunk(self, key: str, lo: int) -> list[Section]:
        return self._describe_nodes(key)

    def _describe_inits(self, key: str) -> list[Section]:
        proto = self.view.index.graphs[key].proto
        return [
            Section(
                "Initializers",
                ("name", "dtype", "shape", "bytes", "stored"),
                [
                    (t.name, element_name(t.data_type), str(list(t.dims)), _bytes(t), _storage(t))
                    for t in proto.initializer
                ],
            )
        ]

    def _describe_functions(self) -> list[Section]:
        return [
            Section(
                "Local functions",
                ("domain", "name", "nodes", "inputs", "outputs"),
                [(f.domain, f.name, len(f.node), len(f.input), len(f.output)) for f in self.view.index.model.functions],
            )
        ]

    def _describe_node(self, key: str, n: int) -> list[Section]:
        view = self.view
        info = view.index.graphs[key]
        node = info.nodes[n]
        rows = [
            ("op type", node.op_type),
            ("domain", node.domain or "ai.onnx"),
            ("name", node.name or "(none)"),
            ("graph", info.title),
            ("location", f"{key}.node[{n}]"),
        ]
        if node.doc_string:
            rows.append(("doc", node.doc_string[:200]))
        function = self._local_function(node)
        if function is not None:
            rows.append(("local function", f"{function} (Functions in the tree)"))
        inputs = [
            (k, name or "(omitted)", self.view.type_str(key, name) if name else "", self._source(key, name))
            for k, name in enumerate(node.input)
        ]
        outputs = [
            (
                k,
                name,
                self.view.type_str(key, name),
                ", ".join(view.node_label(ck, cn) for ck, cn in view.consumers_of(key, name)[:6]) or "(graph output)"
                if name in info.outputs or self.view.consumers_of(key, name)
                else "(unused)",
            )
            for k, name in enumerate(node.output)
        ]
        attributes = [(a.name, *attribute_text(a)) for a in node.attribute]
        return [
            Section(f"Node {self.view.node_label(key, n)}", ("property", "value"), rows),
            Section("Inputs", ("#", "value", "type", "from"), inputs),
            Section("Outputs", ("#", "value", "type", "to"), outputs),
            Section("Attributes", ("name", "type", "value"), attributes),
        ]

    def _local_function(self, node: Any) -> str | None:
        for function in self.view.index.model.functions:
            if function.name == node.op_type and function.domain == node.domain:
                return f"{function.domain}.{function.name}"
        return None

    def _source(self, key: str, name: str) -> str:
        if not name:
            return ""
        found = self.view.index.resolve(key, name)
        if found is None:
            return "undefined"
        where, kind = found
        info = self.view.index.graphs[where]
        scope = "" if where == key else f" ({info.title})"
        if kind == "node":
            return self.view.node_label(where, info.producer[name]) + scope
        return f"{kind}{scope}"

    def _describe_value(self, key: str, name: str) -> list[Section]:
        view = self.view
        found = view.index.resolve(key, name)
        rows = [("name", name), ("type", self.view.type_str(key, name)), ("from", self._source(key, name))]
        if found and found[1] == "initializer":
            info = self.view.index.graphs[found[0]]
            return [
                Section(f"Value {name}", ("property", "value"), rows),
                *self._describe_init(found[0], info.initializers[name]),
            ]
        consumers = self.view.consumers_of(found[0] if found else key, name)
        return [
            Section(f"Value {name}", ("property", "value"), rows),
            Section(
                "Consumers",
                ("graph", "node"),
                [(self.view.index.graphs[k].title, self.view.node_label(k, n)) for k, n in consumers],
            ),
        ]

    def _describe_init(self, key: str, i: int) -> list[Section]:
        tensor = self.view.index.graphs[key].proto.initializer[i]
        rows = [
            ("name", tensor.name),
            ("dtype", element_name(tensor.data_type)),
            ("shape", str(list(tensor.dims))),
            ("elements", f"{math.prod(tensor.dims):,}"),
            ("bytes", _bytes(tensor)),
            ("stored", _storage(tensor)),
            ("location", f"{key}.initializer[{i}]"),
        ]
        return [Section(f"Initializer {tensor.name}", ("property", "value"), rows), self._values_section(tensor)]

    def _values_section(self, tensor: TensorProto) -> Section:
        """Statistics of the weights, read now (from the file or its external-data sidecar)."""
        stats = weight_stats(tensor, self.view.path.parent)
        return Section("Values", ("property", "value"), list(stats.items()))

    def _describe_goto(self, target: Any) -> list[Section]:
        return [Section("Link", ("property", "value"), [("link", KeyHint("select_cursor", "jump there"))]),
                *self.view.describe(target)]


def weight_stats(tensor: TensorProto, base_dir: Path) -> dict[str, str]:
    size = tensor_bytes(tensor)
    if size is not None and size > MAX_STATS_BYTES:
        return {"values": f"not summarised: {human_bytes(size)} is over the {human_bytes(MAX_STATS_BYTES)} limit"}
    try:
        from onnx import numpy_helper

        if tensor.data_location == TensorProto.EXTERNAL:
            array = _external_array(tensor, base_dir)
        else:
            array = numpy_helper.to_array(tensor)
    except FileNotFoundError as error:
        return {"values": f"external data missing: {error.filename or error}"}
    except Exception as error:  # a malformed tensor: say why instead of failing the panel
        return {"values": f"cannot be read: {type(error).__name__}: {str(error)[:120]}"}
    from explorer.tensors.value_stats import value_stats

    return value_stats(array)


def _external_array(tensor: TensorProto, base_dir: Path) -> np.ndarray:
    """The tensor's bytes from its sidecar (or the range of the model file the walk left them in), read-only,
    never touching the model's own proto."""
    from onnx import numpy_helper

    path, offset, declared = external_range(tensor, base_dir)
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read(declared)
    if len(data) != declared:
        raise ValueError(f"external data file ends {declared - len(data):,} bytes before the tensor does")
    copy = TensorProto()
    copy.CopyFrom(tensor)
    del copy.external_data[:]
    copy.data_location = TensorProto.DEFAULT
    copy.raw_data = data
    return numpy_helper.to_array(copy)


def external_range(tensor: TensorProto, base_dir: Path) -> tuple[Path, int, int]:
    """Where an external tensor's bytes are: (file, offset, bytes), checked against its dims and, for bytes the
    walk left in the model file, against the file as it was walked. ValueError or FileNotFoundError says why not."""
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    try:
        path = (base_dir / location).resolve()
    except (RuntimeError, OSError) as error:  # a symbolic link loop
        raise ValueError(f"cannot follow external data location {location!r}: {error}") from None
    if not path.is_relative_to(base_dir.resolve()):
        raise ValueError(f"external data location {location!r} leaves the model's folder")
    stamp = info.get(STAMP)
    if stamp is not None:  # bytes the walk left in the model file: that file as it was walked
        try:
            status = path.stat()
        except OSError as error:
            raise FileNotFoundError(error.errno, error.strerror, str(path)) from None
        if f"{status.st_size}:{status.st_mtime_ns}" != stamp:
            raise ValueError("the model file changed since it was opened: reopen it to read its weights")
    # The read is bounded by what the dims declare, never by the sidecar: a 16-byte tensor without a `length`
    # once read all 4.5 GiB of the file beside it.
    declared = tensor_bytes(tensor)
    if declared is None:
        raise ValueError("external data of this element type cannot be sized from its dims")
    try:
        offset, length = int(info.get("offset", 0) or 0), int(info.get("length") or declared)
    except ValueError:
        raise ValueError("external data offset or length is not a number") from None
    if offset < 0 or length != declared:
        raise ValueError(f"external data says {length:,} bytes at offset {offset:,}; the dims say {declared:,}")
    if path.exists() and not path.is_file():  # a FIFO would wait for a writer for ever
        raise ValueError(f"external data location {location!r} is not a regular file")
    return path, offset, declared


def weight_digest(tensor: TensorProto, base_dir: Path) -> str:
    """A SHA-256 of a weight's data, read DIGEST_CHUNK bytes at a time from wherever it lies (the model file,
    its sidecar, or the proto for a small one); "unreadable: why" when it cannot be read."""
    digest = hashlib.sha256()
    try:
        if tensor.data_location == TensorProto.EXTERNAL:
            path, offset, size = external_range(tensor, base_dir)
            with path.open("rb") as handle:
                handle.seek(offset)
                while size > 0:
                    piece = handle.read(min(DIGEST_CHUNK, size))
                    if not piece:
                        raise ValueError("the file ends before the tensor does")
                    digest.update(piece)
                    size -= len(piece)
        elif tensor.raw_data:
            digest.update(tensor.raw_data)
        else:
            from onnx import numpy_helper

            digest.update(numpy_helper.to_array(tensor).tobytes())
    except (OSError, ValueError) as error:
        return f"unreadable: {error}"
    return digest.hexdigest()


def _bytes(tensor: TensorProto) -> str:
    size = tensor_bytes(tensor)
    return f"{size:,}" if size is not None else "?"


def _storage(tensor: TensorProto) -> str:
    inline = left_in_file(tensor)
    if inline is not None:
        first, length = int(inline.get("offset", 0)), int(inline.get("length", 0))
        return f"{inline[INLINE]} in the file, bytes {first:,}–{first + length:,} (read when asked)"
    if tensor.data_location == TensorProto.EXTERNAL:
        info = {entry.key: entry.value for entry in tensor.external_data}
        return f"external: {info.get('location', '?')} at {info.get('offset', '0')} (+{info.get('length', '?')})"
    if tensor.raw_data:
        return "raw_data in the file"
    return "typed fields in the file"
