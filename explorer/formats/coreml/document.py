"""A Core ML model as a Document. ML Program: description → functions → active block → ops → nested blocks
(cond, while_loop, recursively); NeuralNetwork: layers; compiled folders: model.mil in the source view.

Refs: ("description",), ("feature", section, k), ("function", name), ("block", key), ("op", key, i),
("layers",), ("layer", k), ("pipeline", k), ("goto", target), ("source", "model.mil", line).
"""

from __future__ import annotations

import functools
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from explorer.document import (
    CHUNK,
    Document,
    DocumentView,
    Item,
    Meta,
    Section,
    Vocabulary,
    chunk_start,
    chunked_items,
    describe_by_kind,
)
from explorer.errors import Problem
from explorer.formats.coreml.details import CoreMLDetails
from explorer.formats.coreml.mil_text import MilProgram, read_mil
from explorer.formats.coreml.model import (
    CoreMLModel,
    feature_type,
    layer_type,
    layer_weights,
    op_name,
    schema_entries,
    type_text,
    value_text,
)
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref


def build_document(path: Path, model: CoreMLModel, problems: list[Problem]) -> Document:
    view = CoreMLView(model)
    summary = view.summary()
    if model.model is None and model.mil_text:
        problems = problems + unread_line_problems(view.mil_program())
    return Document(
        meta=Meta(
            format="coreml", source=path, producer="Core ML", versions={"spec": str(summary.get("spec_version"))}
        ),
        tree=view.tree(path.name),
        view=view,
        vocabulary=Vocabulary(search_hint="op, value or layer name, or an op type"),
        problems=problems,
        summary=summary,
        sources=view if model.mil_text is not None else None,
        headline=view.headline(summary),
    )


def unread_line_problems(program: MilProgram) -> list[Problem]:
    """Each line of model.mil the reader could not read (none of an op, a block, a closing brace): its ops are
    missing from the graph, so each is said with its line, the first MAX_SKIPPED_LISTED, and the rest counted."""
    said = [Problem("warning", "mil-unread-line", f"model.mil line {line:,} reads as none of an op, a block or a "
                    "closing brace: it is left out of the graph", f"model.mil: line {line}", {"line": line})
            for line in program.skipped_lines]  # fmt: skip
    if program.skipped > len(program.skipped_lines):
        more = program.skipped - len(program.skipped_lines)
        said.append(Problem("warning", "mil-unread-line", f"{more:,} more lines of model.mil cannot be read",
                            "model.mil"))  # fmt: skip
    return said


class CoreMLView(DocumentView):
    # coremltools' MIL module, imported again when asked (the derived-data cache keeps the rest)
    SESSION_STATE = {"_mil": lambda: None}
    KEEPS_GRAPH = True

    def __init__(self, model: CoreMLModel) -> None:
        self.model = model
        self._mil = None
        self._mil_program: MilProgram | None = None
        self.details = CoreMLDetails(self)  # what `describe` shows of each kind of ref

    def derived_state(self) -> tuple:
        """The graph and its counts: what a kept document saves a second open (the spec is parsed again)."""
        graph = self._graph_cache
        return (graph is not None, graph is not None and graph.metrics_cache is not None)

    def node_signatures(self) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for key, block in self.model.blocks.items():
            for i, op in enumerate(block.proto.operations):
                found[op_name(op) or f"{key}[{i}]"] = (op.type, ",".join(sorted(op.inputs)))
        for k, layer in enumerate(self.layers() or []):
            found[layer.name or f"layer {k}"] = (
                layer.WhichOneof("layer") or "?",
                f"{list(layer.input)}->{list(layer.output)}",
            )
        return found

    def parameter_bytes_by_dtype(self) -> dict[str, int]:
        return {dtype: total for dtype, (_, total) in self.weights_by_dtype().items()}

    def graph_size_hint(self) -> int:
        return sum(len(b.proto.operations) for b in self.model.blocks.values()) or len(self.layers() or [])

    def draws_graph(self) -> bool:
        return bool(self.model.blocks or self.layers() or (self.model.model is None and self.mil_program().ops))

    def build_graph(self) -> GraphModel | None:
        from explorer.formats.coreml.graph_model import coreml_graph

        return coreml_graph(self)

    def counts_ops(self) -> bool:
        return bool(self.model.blocks)  # an ML Program states its values' types; NeuralNetwork layers do not

    @property
    def mil(self) -> Any:
        if self._mil is None:
            from explorer.formats.coreml.proto import proto_module

            self._mil = proto_module("MIL_pb2")
        return self._mil

    @property
    def spec(self) -> Any:
        return self.model.model

    # ---- summary ----------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The `info` summary (issue #5 fixes the keys)."""
        model = self.model
        if model.model is None:
            mil_ops = self.mil_ops()
            metadata = model.compiled_metadata or {}
            version = metadata.get("specificationVersion")
            found = {
                "model_type": "compiled",
                "spec_version": version if isinstance(version, int) else None,
                "functions": len({f for f, _, _ in mil_ops}),
                "operations": len(mil_ops),
                "op_types": dict(Counter(t for _, t, _ in mil_ops).most_common()),
            }
            if model.compiled_metadata is not None:  # coremlcompiler's metadata.json: the model's interface
                found["inputs"] = len(schema_entries(metadata, "inputSchema"))
                found["outputs"] = len(schema_entries(metadata, "outputSchema"))
            return found
        spec = model.model
        description = spec.description
        inputs, outputs = len(description.input), len(description.output)
        if not inputs and description.functions:  # multi-function: the default function's interface
            default = next((f for f in description.functions if f.name == description.defaultFunctionName), None)
            default = default or description.functions[0]
            inputs, outputs = len(default.input), len(default.output)
        result: dict[str, Any] = {"model_type": model.model_type, "spec_version": spec.specificationVersion}
        if model.model_type == "mlProgram":
            ops = [op for block in model.blocks.values() for op in block.proto.operations]
            result |= {
                "functions": len(spec.mlProgram.functions),
                "operations": len(ops),
                "op_types": dict(Counter(op.type for op in ops).most_common()),
            }
        elif self.layers() is not None:
            layers = self.layers()
            result |= {
                "layers": len(layers),
                "layer_types": dict(Counter(layer_type(layer) for layer in layers).most_common()),
            }
        elif model.model_type == "pipeline" or model.model_type.startswith("pipeline"):
            result["models"] = len(self.pipeline().models)
        result |= {"inputs": inputs, "outputs": outputs, "states": len(description.state)}
        return result

    def headline(self, summary: dict[str, Any]) -> str:
        if summary["model_type"] == "compiled":
            return f"compiled Core ML (model.mil) · {summary['operations']} ops"
        count = summary.get("operations", summary.get("layers"))
        unit = "ops" if "operations" in summary else "layers"
        return f"Core ML spec {summary['spec_version']} · {summary['model_type']}" + (
            f" · {count} {unit}" if count is not None else ""
        )

    def layers(self) -> Any:
        spec = self.spec
        kind = spec.WhichOneof("Type") if spec is not None else None
        if kind in ("neuralNetwork", "neuralNetworkClassifier", "neuralNetworkRegressor"):
            return getattr(spec, kind).layers
        return None

    def pipeline(self) -> Any:
        return getattr(self.spec, self.model.model_type)

    # ---- model.mil (compiled folders) --------------------------------------------------------------------
    def mil_program(self) -> MilProgram:
        """model.mil's ops and blocks, read once (the graph of a compiled ML Program)."""
        if self._mil_program is None:
            self._mil_program = read_mil(self.model.mil_text or "")
        return self._mil_program

    def mil_ops(self) -> list[tuple[str, str, int]]:
        """(function, op type, line) for each op line of model.mil that can be read: the graph's one parse."""
        program = self.mil_program()
        return [(program.blocks[op.block].function, op.op, op.line) for op in program.ops]

    def source_text(self, member: str) -> str:
        return self.model.mil_text or ""

    def language_of(self, member: str) -> str:
        return "mil"

    # ---- tree -------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        children = [Item("summary", "Summary", ("summary",))]
        model = self.model
        if model.model is None:
            functions: dict[str, list] = {}
            for function, op_type, line in self.mil_ops():
                functions.setdefault(function, []).append((op_type, line))
            if model.compiled_metadata is not None:
                children.append(Item("description", "Description  (inputs, outputs, metadata.json)", ("description",)))
            children.append(Item("source", "model.mil", ("source", "model.mil", 1)))
            for function, ops in functions.items():
                items = [
                    Item("source", f"{op_type}  (line {line})", ("source", "model.mil", line)) for op_type, line in ops
                ]
                children.append(
                    Item(
                        "function", f"function {function}  ({len(ops)} ops)", ("mil-function", function), children=items
                    )
                )
            return Item("file", name, ("summary",), children=children)
        children.append(
            Item(
                "description", "Description  (inputs, outputs, metadata)", ("description",), expand=self._feature_items
            )
        )
        if model.model_type == "mlProgram":
            for function_name in sorted(self.spec.mlProgram.functions):
                key = self.active_block(function_name)
                count = len(model.blocks[key].proto.operations) if key else 0
                children.append(
                    Item(
                        "function",
                        f"function {function_name}  ({count} ops)",
                        ("function", function_name),
                        expand=functools.partial(self._op_items, key) if key else list,
                    )
                )
        layers = self.layers()
        if layers is not None:
            children.append(Item("layers", f"Layers  ({len(layers)})", ("layers",), expand=self._layer_items))
        if model.model_type.startswith("pipeline"):
            models = self.pipeline().models
            children += [
                Item("pipeline", f"model {k}: {m.WhichOneof('Type')}", ("pipeline", k)) for k, m in enumerate(models)
            ]
        return Item("file", name, ("summary",), children=children)

    def active_block(self, function_name: str) -> str | None:
        return next((k for k, b in self.model.blocks.items() if b.parent is None and b.function == function_name), None)

    def _feature_items(self) -> list[Item]:
        description = self.spec.description
        items = []
        for section in ("input", "output", "state"):
            for k, feature in enumerate(getattr(description, section)):
                items.append(
                    Item("feature", f"{section} {feature.name}  {feature_type(feature)}", ("feature", section, k))
                )
        return items

    def _op_items(self, key: str) -> list[Item]:
        count = len(self.model.blocks[key].proto.operations)
        return chunked_items(0, count, partial(self._op_item, key), "ops", lambda lo: ("chunk", key, lo))

    def op_label(self, key: str, i: int) -> str:
        op = self.model.blocks[key].proto.operations[i]
        outputs = ", ".join(f"{o.name}: {type_text(o.type, self.mil)}" for o in op.outputs[:2])
        mark = "  (blob)" if (key, i) in self.model.blobs else ""
        return f"#{i} {op.type}  {op_name(op)}  → {outputs}{mark}"

    def _op_item(self, key: str, i: int) -> Item:
        op = self.model.blocks[key].proto.operations[i]
        has_children = bool(op.inputs) or bool(op.blocks)
        return Item(
            "op",
            self.op_label(key, i),
            ("op", key, i),
            expand=partial(self._op_children, key, i) if has_children else None,
        )

    def _op_children(self, key: str, i: int) -> list[Item]:
        op = self.model.blocks[key].proto.operations[i]
        items = []
        for param, argument in sorted(op.inputs.items()):  # protobuf maps have no order: sort
            for binding in argument.arguments:
                if binding.WhichOneof("binding") == "name":
                    source = self.resolve(key, binding.name)
                    target = ("goto", ("op", *source)) if source else ("op", key, i)
                    items.append(Item("link", f"{param} ← {binding.name}", target))
                else:
                    items.append(Item("link", f"{param} = {value_text(binding.value)}", ("op", key, i)))
        for j in range(len(op.blocks)):
            nested = f"{key}.operations[{i}].blocks[{j}]"
            count = len(self.model.blocks[nested].proto.operations) if nested in self.model.blocks else 0
            items.append(
                Item(
                    "block",
                    f"block {j}  ({count} ops)",
                    ("block", nested),
                    expand=functools.partial(self._op_items, nested),
                )
            )
        return items

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """An op's producers (through its bindings) and the ops reading its outputs, for the jump key."""
        if not isinstance(ref, tuple) or not ref or ref[0] != "op" or ref[1] not in self.model.blocks:
            return []
        key, i = ref[1], ref[2]
        op = self.model.blocks[key].proto.operations[i]
        found = []
        for param, argument in sorted(op.inputs.items()):
            for binding in argument.arguments:
                if binding.WhichOneof("binding") == "name":
                    source = self.resolve(key, binding.name)
                    if source:
                        found.append((f"{param} ← {self.op_label(*source)}", ("op", *source)))
        outputs = {o.name for o in op.outputs}
        for other_key, block in self.model.blocks.items():
            for j, other in enumerate(block.proto.operations):
                for argument in other.inputs.values():
                    if any(b.WhichOneof("binding") == "name" and b.name in outputs for b in argument.arguments):
                        found.append((f"→ {self.op_label(other_key, j)}", ("op", other_key, j)))
                        break
        return found

    def resolve(self, key: str, name: str) -> tuple[str, int] | None:
        """The op producing `name` seen from block `key`: its own block, then enclosing blocks."""
        current: str | None = key
        while current is not None:
            block = self.model.blocks[current]
            if name in block.producer:
                return current, block.producer[name]
            current = block.parent[0] if block.parent else None
        return None

    def _layer_items(self) -> list[Item]:
        return [
            Item("layer", f"#{k} {layer_type(layer)}  {layer.name}", ("layer", k))
            for k, layer in enumerate(self.layers())
        ]

    # ---- navigation -------------------------------------------------------------------------------------
    def _block_path(self, key: str) -> list[Any]:
        block = self.model.blocks[key]
        if block.parent is None:
            return [("function", block.function)]
        parent_key, i = block.parent
        return [*self._op_path(parent_key, i), ("block", key)]

    def _op_path(self, key: str, i: int) -> list[Any]:
        path = self._block_path(key)
        if len(self.model.blocks[key].proto.operations) > CHUNK:
            path.append(("chunk", key, chunk_start(i)))
        return [*path, ("op", key, i)]

    def ancestors(self, ref: Ref) -> list[Ref]:
        if not isinstance(ref, tuple) or not ref:
            return []
        if ref[0] == "op" and ref[1] in self.model.blocks:
            return self._op_path(ref[1], ref[2])
        if ref[0] == "block" and ref[1] in self.model.blocks:
            return self._block_path(ref[1])
        if ref[0] == "feature":
            return [("description",), ref]
        if ref[0] == "layer":
            return [("layers",), ref]
        return [ref]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        location = refs.get("location") or ""
        for key in sorted(self.model.blocks, key=len, reverse=True):
            if location.startswith(key + ".operations["):
                i = int(location[len(key) + 12 :].split("]")[0])
                if i < len(self.model.blocks[key].proto.operations):
                    return ("op", key, i)
        if location.startswith("mlProgram.functions["):
            return ("function", location[20:].split("]")[0])
        return None

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        """Ops by name or type, layers by name or type, features by name, and dtypes/shapes of op outputs."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits: list[tuple[str, Any]] = []
        for key, block in self.model.blocks.items():
            for i, op in enumerate(block.proto.operations):
                outputs = " ".join(type_text(o.type, self.mil) for o in op.outputs).lower()
                if needle == op.type.lower() or needle in op_name(op).lower() or needle in outputs:
                    hits.append((f"{block.title}: {self.op_label(key, i)}", ("op", key, i)))
                    if len(hits) >= limit:
                        return hits
        for k, layer in enumerate(self.layers() or []):
            if needle in layer.name.lower() or needle == layer_type(layer).lower():
                hits.append((f"layer #{k} {layer_type(layer)} {layer.name}", ("layer", k)))
        if self.spec is not None:
            for section in ("input", "output", "state"):
                for k, feature in enumerate(getattr(self.spec.description, section)):
                    if needle in feature.name.lower():
                        hits.append((f"{section} {feature.name}", ("feature", section, k)))
        for function, op_type, line in self.mil_ops() if self.model.mil_text else []:
            if needle == op_type.lower():
                hits.append((f"{function}: {op_type} (line {line})", ("source", "model.mil", line)))
        return hits[:limit]

    # ---- details ----------------------------------------------------------------------------------------
    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self.details, ref)

    def weights_by_dtype(self) -> dict[str, tuple[int, int]]:
        """dtype → (tensors, bytes) of the weight.bin blobs and the NeuralNetwork layers' inline weights."""
        sizes = [(blob.dtype, blob.size) for blob in self.model.blobs.values()]
        sizes += [weight for layer in self.layers() or [] for weight in layer_weights(layer, self.model.stamp)]
        by_dtype: dict[str, tuple[int, int]] = {}
        for dtype, size in sizes:
            count, total = by_dtype.get(dtype, (0, 0))
            by_dtype[dtype] = (count + 1, total + size)
        return by_dtype


