"""The frontend IR as a document: the layer graph (tree by layer and by operation, details with shapes, dtypes,
quantisation and module settings, the graph view) and its consistency checks.

Ref kinds: ("summary",), ("layers",), ("layer", index-in-order), ("operations",), ("operation", name),
("inputs",), ("input", name).
"""

from __future__ import annotations

import functools
import math
from functools import cached_property
from pathlib import Path
from typing import Any

from explorer.document import Document, DocumentView, Item, Meta, Section, Vocabulary, chunked_items, describe_by_kind
from explorer.formats.gemini_frontend.reader import FrontendIR, Layer
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref

VOCABULARY = Vocabulary(search_hint="layer name, operation or layer_index")
SHAPE_KEYS = ("input_shape", "output_shape", "input_dtype", "output_dtype", "input_batchdim", "output_batchdim")


def build_document(path: Path, ir: FrontendIR) -> Document:
    view = FrontendView(ir)
    return Document(
        meta=Meta(format="gemini-frontend", source=path, producer="Gemini compiler frontend"),
        tree=view.tree(path.name),
        view=view,
        vocabulary=VOCABULARY,
        problems=list(ir.problems),
        summary=view.summary(),
        headline=view.headline(),
    )


def weight_bytes(layer: Layer) -> int:
    """Bytes of the layer's weights: its inputs after the first (KCRS), at the first input's element size."""
    shapes = layer.shapes("input_shape")
    listed = layer.record.get("input_dtype")
    dtypes: list[Any] = listed if isinstance(listed, list) else []
    size = {"int8": 1, "uint8": 1, "float16": 2, "int16": 2, "float32": 4, "int32": 4}
    total = 0
    for k, shape in enumerate(shapes[1:], start=1):
        dtype = dtypes[k] if k < len(dtypes) and isinstance(dtypes[k], str) else "int8"
        total += math.prod(shape) * size.get(dtype, 1)
    return total


class FrontendView(DocumentView):
    def __init__(self, ir: FrontendIR) -> None:
        self.ir = ir
        self.position = {layer.name: k for k, layer in enumerate(ir.layers)}

    def layer_of(self, ref: Ref) -> str | None:
        if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "layer" and 0 <= ref[1] < len(self.ir.layers):
            return self.ir.layers[ref[1]].name
        return None

    def layer_names(self) -> list[str]:
        return [layer.name for layer in self.ir.layers]

    def batch_size(self) -> int | None:
        """The batch dimension its layers' shapes agree on (the most common first dimension), None for none."""
        counts: dict[int, int] = {}
        for layer in self.ir.layers[:256]:
            for shape in layer.shapes("output_shape")[:1]:
                if shape and isinstance(shape[0], int) and shape[0] > 0:
                    counts[shape[0]] = counts.get(shape[0], 0) + 1
        return max(counts, key=lambda b: (counts[b], -b)) if counts else None

    def summary(self) -> dict[str, Any]:
        return self.facts

    @cached_property
    def facts(self) -> dict[str, Any]:
        """Computed once: the tree's labels, the summary and the details all read them."""
        ir = self.ir
        operations: dict[str, int] = {}
        for layer in ir.layers:
            operations[layer.operation] = operations.get(layer.operation, 0) + 1
        edges = sum(len([n for n in layer.names("next_layer") if n in ir.by_name]) for layer in ir.layers)
        return {
            "layers": len(ir.layers),
            "operations": dict(sorted(operations.items(), key=lambda item: (-item[1], item[0]))),
            "inputs": len(ir.inputs),
            "outputs": len(ir.outputs),
            "edges": edges,
        }

    def headline(self) -> str:
        facts = self.summary()
        return f"frontend IR · {facts['layers']} layers · {len(facts['operations'])} operations"

    # ---- tree (expanders are bound methods and partials, not closures: a kept document pickles its tree) -----
    def _layer_items(self) -> list[Item]:
        return chunked_items(0, len(self.ir.layers), self._layer_item, "layers", lambda lo: ("layer", lo))

    def tree(self, name: str) -> Item:
        ir = self.ir
        operations = self.summary()["operations"]
        return Item("file", name, ("summary",), children=[
            Item("group", "Summary", ("summary",)),
            Item("group", f"Layers ({len(ir.layers)})", ("layers",),
                 expand=self._layer_items),
            Item("group", f"By operation ({len(operations)})", ("operations",), children=[
                Item("operation", f"{op} · {count}", ("operation", op),
                     expand=functools.partial(self._operation_items, op))
                for op, count in operations.items()
            ]),
            Item("group", f"Graph inputs ({len(ir.inputs)})", ("inputs",),
                 children=[Item("input", name, ("input", name)) for name in ir.inputs]),
        ])  # fmt: skip

    def _operation_items(self, operation: str) -> list[Item]:
        return [self._layer_item(k) for k, layer in enumerate(self.ir.layers) if layer.operation == operation]

    def _layer_item(self, k: int) -> Item:
        layer = self.ir.layers[k]
        return Item("layer", f"{layer.index} {layer.name} ({layer.operation})", ("layer", k))

    # ---- navigation ---------------------------------------------------------------------------------------
    def ancestors(self, ref: Ref) -> list[Ref]:
        if isinstance(ref, tuple) and ref and ref[0] == "layer":
            return [("layers",), ref]
        if isinstance(ref, tuple) and ref and ref[0] == "input":
            return [("inputs",), ref]
        return [ref]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        name = refs.get("layer")
        if name in self.position:
            return ("layer", self.position[name])
        return None

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        if not (isinstance(ref, tuple) and ref and ref[0] == "layer"):
            return []
        layer = self.ir.layers[ref[1]]
        found = []
        for word, key in (("reads", "previous_layer"), ("feeds", "next_layer")):
            for name in layer.names(key):
                target = ("layer", self.position[name]) if name in self.position else ("input", name)
                found.append((f"{word} {name}", target))
        return found

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        needle = text.strip().lower()
        hits = []
        for k, layer in enumerate(self.ir.layers):
            if needle == str(layer.index) or needle in layer.name.lower() or needle == layer.operation.lower():
                hits.append((self._layer_item(k).label, ("layer", k)))
                if len(hits) >= limit:
                    break
        return hits

    # ---- details ------------------------------------------------------------------------------------------
    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self, ref)

    def _describe_summary(self) -> list[Section]:
        facts = self.summary()
        rows = [("layers", facts["layers"]), ("graph inputs", facts["inputs"]), ("edges", facts["edges"])]
        return [
            Section("Frontend IR", ("property", "value"), rows),
            Section("Operations", ("operation", "layers"), list(facts["operations"].items())),
        ]

    def _describe_layers(self) -> list[Section]:
        return self._describe_summary()

    def _describe_operations(self) -> list[Section]:
        return self._describe_summary()[1:]

    def _describe_operation(self, op: str) -> list[Section]:
        rows = [(layer.index, layer.name) for layer in self.ir.layers if layer.operation == op]
        return [Section(f"{op}: {len(rows)} layers", ("layer_index", "name"), rows)]

    def _describe_inputs(self) -> list[Section]:
        return [Section("Graph inputs", ("name", "read by"), [(name, self._readers(name)) for name in self.ir.inputs])]

    def _describe_output(self, name: str) -> list[Section]:
        writers = ", ".join(layer.name for layer in self.ir.layers if name in layer.names("next_layer")) or "none"
        return [Section("Graph output", ("property", "value"), [("name", name), ("written by", writers)])]

    def _describe_input(self, name: str) -> list[Section]:
        return [Section("Graph input", ("property", "value"), [("name", name), ("read by", self._readers(name))])]

    def _readers(self, name: str) -> str:
        return ", ".join(layer.name for layer in self.ir.layers if name in layer.names("previous_layer")) or "none"

    def _describe_layer(self, k: int) -> list[Section]:
        layer = self.ir.layers[k]
        record = layer.record
        facts: list[tuple[str, Any]] = [
            ("name", layer.name),
            ("layer_index", layer.index),
            ("operation", layer.operation),
            ("reads", ", ".join(layer.names("previous_layer")) or "none"),
            ("feeds", ", ".join(layer.names("next_layer")) or "none"),
        ]
        for key in ("ori_name", "device", "kernel_size", "stride", "padding", "pool_size", "ceil_mode",
                    "activation_type", "activation_attr", "tensor_mode"):  # fmt: skip
            if key in record:
                facts.append((key.replace("_", " "), _plain(record[key])))
        if weight_bytes(layer):
            facts.append(("weight bytes", f"{weight_bytes(layer):,}"))
        sections = [Section(f"Layer {layer.name}", ("property", "value"), facts)]
        tensors = []
        for side in ("input", "output"):
            shapes = layer.shapes(f"{side}_shape")
            listed = record.get(f"{side}_dtype")
            dtypes: list[Any] = listed if isinstance(listed, list) else []
            for j, shape in enumerate(shapes):
                tensors.append((f"{side} {j}", "×".join(map(str, shape)), dtypes[j] if j < len(dtypes) else "?"))
        if tensors:
            sections.append(Section("Tensors", ("tensor", "shape", "dtype"), tensors))
        quant = record.get("quant_info")
        if isinstance(quant, dict):
            sections.append(Section("Quantisation", ("key", "value"), [(k, _plain(v)) for k, v in quant.items()]))
        modules = record.get("module_list")
        if isinstance(modules, dict):
            rows = []
            for module, settings in modules.items():
                if isinstance(settings, dict):
                    rows += [(module, key, _plain(value)) for key, value in settings.items() if key not in SHAPE_KEYS]
            sections.append(Section("Vector-processor modules", ("module", "setting", "value"), rows))
        shown = {"layer_index", "name", "operation", "previous_layer", "next_layer", "quant_info", "module_list",
                 "ori_name", "device", "kernel_size", "stride", "padding", "pool_size", "ceil_mode",
                 "activation_type", "activation_attr", "tensor_mode", *SHAPE_KEYS}  # fmt: skip
        rest = [(key, _plain(value)) for key, value in record.items() if key not in shown]
        if rest:
            sections.append(Section("Other fields", ("key", "value"), rest))
        return sections

    # ---- graph --------------------------------------------------------------------------------------------
    def graph_size_hint(self) -> int:
        return len(self.ir.layers) + len(self.ir.inputs)

    def draws_graph(self) -> bool:
        return True

    def build_graph(self) -> GraphModel | None:
        from explorer.graph.builder import GraphBuilder

        builder = GraphBuilder()
        node_of: dict[str, int] = {}
        for name in sorted(self.ir.inputs, key=lambda n: ("constant" in n, n)):  # graph inputs first, then weights
            constant = "constant" in name
            node_of[name] = builder.node(name, "constant" if constant else "input", ref=("input", name),
                                         constant=constant)  # fmt: skip
        for k, layer in enumerate(self.ir.layers):
            shapes = layer.shapes("output_shape")
            dtypes = layer.record.get("output_dtype")
            dtype = dtypes[0] if isinstance(dtypes, list) and dtypes and isinstance(dtypes[0], str) else ""
            detail = f"{dtype}[{', '.join(map(str, shapes[0]))}]" if shapes else dtype
            values: dict[str, Any] = {"dtype": dtype or None, "parameter_bytes": weight_bytes(layer) or None}
            node_of[layer.name] = builder.node(layer.name, layer.operation, detail=detail, ref=("layer", k), **values)
        for name in self.ir.outputs:
            node_of[name] = builder.node(name, "output", ref=("output", name))
        for layer in self.ir.layers:
            for previous in layer.names("previous_layer"):
                if previous in node_of:
                    builder.edge(node_of[previous], node_of[layer.name], previous)
            for following in layer.names("next_layer"):
                if following in self.ir.outputs:
                    builder.edge(node_of[layer.name], node_of[following], following)
        return builder.build()


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_plain(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
