"""The details panel's sections for a Core ML model's items: its description and metadata, features, a MIL
function, block and op, a neural network's layers and their weights, the compiled source files."""

from __future__ import annotations

from collections import Counter
from typing import Any, Protocol

from explorer.document import Document, KeyHint, Section
from explorer.formats.coreml.model import (
    CoreMLModel,
    blob_stats,
    feature_type,
    layer_type,
    layer_weights,
    named_weights,
    op_name,
    schema_entries,
    type_text,
    value_text,
)
from explorer.formatting import human, human_bytes
from explorer.models.ref import Ref


class ViewParts(Protocol):
    """What the details read of the Core ML view (the view is one; named here, the two modules need not import
    each other)."""

    document: Document | None
    model: CoreMLModel

    @property
    def mil(self) -> Any: ...
    @property
    def spec(self) -> Any: ...
    def active_block(self, function_name: str) -> str | None: ...
    def pipeline(self) -> Any: ...
    def describe(self, ref: Ref) -> list[Section]: ...
    def layers(self) -> Any: ...
    def mil_ops(self) -> list[tuple[str, str, int]]: ...
    def op_label(self, key: str, i: int) -> str: ...
    def resolve(self, key: str, name: str) -> tuple[str, int] | None: ...
    def summary(self) -> dict[str, Any]: ...
    def weights_by_dtype(self) -> dict[str, tuple[int, int]]: ...


class CoreMLDetails:
    """What `describe` shows of each kind of ref (`describe_by_kind` finds `_describe_<kind>` here)."""

    def __init__(self, view: ViewParts) -> None:
        self.view = view

    def _describe_summary(self) -> list[Section]:
        summary = self.view.document.summary if self.view.document else self.view.summary()
        rows = [(k.replace("_", " "), human(v, k)) for k, v in summary.items() if not isinstance(v, dict)]
        sections = [Section("Core ML model", ("property", "value"), rows)]
        for key in ("op_types", "layer_types"):
            if summary.get(key):
                sections.append(
                    Section(key.replace("_", " ").capitalize(), ("type", "count"), list(summary[key].items()))
                )
        if self.view.spec is not None:
            sections.append(self._weights_section())
        return sections

    def _weights_section(self) -> Section:
        rows = [(k, count, f"{total:,}") for k, (count, total) in self.view.weights_by_dtype().items()]
        return Section("Weights by dtype", ("dtype", "tensors", "bytes"), rows)

    def _describe_description(self) -> list[Section]:
        if self.view.spec is None:
            return self._describe_compiled_metadata()
        description = self.view.spec.description
        metadata = description.metadata
        rows = [
            ("specification version", self.view.spec.specificationVersion),
            ("model type", self.view.model.model_type),
            ("author", metadata.author),
            ("license", metadata.license),
            ("version", metadata.versionString),
            ("short description", metadata.shortDescription),
        ]
        rows += [(f"user: {k}", v) for k, v in sorted(metadata.userDefined.items())]
        if description.defaultFunctionName:
            rows.append(("default function", description.defaultFunctionName))
        features = [
            (section, f.name, feature_type(f))
            for section in ("input", "output", "state")
            for f in getattr(description, section)
        ]
        for function in description.functions:
            features += [(f"{function.name} input", f.name, feature_type(f)) for f in function.input]
            features += [(f"{function.name} output", f.name, feature_type(f)) for f in function.output]
        return [
            Section("Model description", ("property", "value"), rows),
            Section("Features", ("kind", "name", "type"), features),
        ]

    def _describe_compiled_metadata(self) -> list[Section]:
        """A compiled folder's metadata.json: its scalar fields, user metadata, and the input/output schemas."""
        metadata = self.view.model.compiled_metadata or {}
        rows = [(key, value) for key, value in metadata.items() if isinstance(value, str | int | float)]
        for key in ("availability", "modelType"):
            if isinstance(metadata.get(key), dict):
                rows.append((key, ", ".join(f"{k} {v}" for k, v in metadata[key].items())))
        user = metadata.get("userDefinedMetadata")
        rows += [(f"user: {k}", v) for k, v in sorted(user.items())] if isinstance(user, dict) else []
        features = [
            (kind, str(entry.get("name", "?")), str(entry.get("formattedType") or entry.get("type", "?")))
            for kind, key in (("input", "inputSchema"), ("output", "outputSchema"), ("state", "stateSchema"))
            for entry in schema_entries(metadata, key)
        ]
        return [
            Section("Model description (metadata.json)", ("property", "value"), rows),
            Section("Features", ("kind", "name", "type"), features),
        ]

    def _describe_feature(self, section: str, k: int) -> list[Section]:
        feature = getattr(self.view.spec.description, section)[k]
        return [
            Section(
                f"{section} {feature.name}",
                ("property", "value"),
                [("type", feature_type(feature)), ("description", feature.shortDescription)],
            )
        ]

    def _describe_function(self, name: str) -> list[Section]:
        function = self.view.spec.mlProgram.functions[name]
        key = self.view.active_block(name)
        block = self.view.model.blocks[key].proto if key else None
        rows = [
            ("opset", function.opset),
            ("specializations", ", ".join(function.block_specializations)),
            ("active block", key or "(missing)"),
            ("operations", len(block.operations) if block else 0),
            ("outputs", ", ".join(block.outputs) if block else ""),
        ]
        inputs = [(i.name, type_text(i.type, self.view.mil)) for i in function.inputs]
        return [Section(f"Function {name}", ("property", "value"), rows), Section("Inputs", ("name", "type"), inputs)]

    def _describe_block(self, key: str) -> list[Section]:
        block = self.view.model.blocks[key]
        proto = block.proto
        rows = [
            ("block", block.title),
            ("location", key),
            ("operations", len(proto.operations)),
            ("inputs", ", ".join(i.name for i in proto.inputs)),
            ("outputs", ", ".join(proto.outputs)),
        ]
        return [Section(block.title, ("property", "value"), rows)]

    def _describe_chunk(self, key: str, lo: int) -> list[Section]:
        return self._describe_block(key)

    def _describe_op(self, key: str, i: int) -> list[Section]:
        op, mil = self.view.model.blocks[key].proto.operations[i], self.view.mil
        rows = [
            ("type", op.type),
            ("name", op_name(op)),
            ("block", self.view.model.blocks[key].title),
            ("location", f"{key}.operations[{i}]"),
        ]
        if op.type.startswith("constexpr_"):
            rows.append(("kind", "compressed constant (decompressed when the model loads)"))
        inputs = []
        for param, argument in sorted(op.inputs.items()):  # protobuf maps have no order: sort
            for binding in argument.arguments:
                if binding.WhichOneof("binding") == "name":
                    source = self.view.resolve(key, binding.name)
                    origin = self.view.op_label(*source) if source else "function input"
                    inputs.append((param, binding.name, origin))
                else:
                    inputs.append((param, value_text(binding.value), "value"))
        outputs = [(o.name, type_text(o.type, self.view.mil)) for o in op.outputs]
        attributes = [
            (k, type_text(v.type, mil), value_text(v)) for k, v in sorted(op.attributes.items()) if k != "name"
        ]
        sections = [
            Section(f"Op {op.type}", ("property", "value"), rows),
            Section("Inputs", ("parameter", "binding", "from"), inputs),
            Section("Outputs", ("name", "type"), outputs),
            Section("Attributes", ("name", "type", "value"), attributes),
        ]
        blob = self.view.model.blobs.get((key, i))
        if blob is not None and self.view.model.weights_dir is not None:  # blobs are read only from a weights folder
            weight_file = self.view.model.weights_dir / "weight.bin"
            sections.append(
                Section(
                    "Blob in weight.bin",
                    ("property", "value"),
                    [
                        ("record at", f"{blob.offset:,}"),
                        ("dtype", blob.dtype),
                        ("bytes", f"{blob.size:,}"),
                        ("data at", f"{blob.data_offset:,}"),
                    ],
                )
            )
            sections.append(Section("Values", ("property", "value"), list(blob_stats(weight_file, blob).items())))
        return sections

    def _describe_layers(self) -> list[Section]:
        stamp = self.view.model.stamp
        return [
            Section(
                "Layers",
                ("#", "type", "name", "weights"),
                [
                    (k, layer_type(layer), layer.name, human_bytes(sum(s for _, s in layer_weights(layer, stamp))))
                    for k, layer in enumerate(self.view.layers())
                ],
            )
        ]

    def _describe_layer(self, k: int) -> list[Section]:
        layer = self.view.layers()[k]
        kind = layer_type(layer)
        rows = [
            ("type", kind),
            ("name", layer.name),
            ("inputs", ", ".join(layer.input)),
            ("outputs", ", ".join(layer.output)),
        ]
        params = getattr(layer, kind)
        fields = [
            (f.name, _short(v))
            for f, v in params.ListFields()
            if f.message_type is None or f.message_type.name != "WeightParams"
        ]
        weights = [(name, dtype, f"{size:,}") for name, dtype, size in named_weights(params, self.view.model.stamp)]
        return [
            Section(f"Layer {layer.name}", ("property", "value"), rows),
            Section("Parameters", ("field", "value"), fields),
            Section("Weights", ("name", "stored as", "bytes"), weights),
        ]

    def _describe_pipeline(self, k: int) -> list[Section]:
        member = self.view.pipeline().models[k]
        rows = [
            ("type", member.WhichOneof("Type")),
            ("spec version", member.specificationVersion),
            ("inputs", ", ".join(f.name for f in member.description.input)),
            ("outputs", ", ".join(f.name for f in member.description.output)),
        ]
        return [Section(f"Pipeline model {k}", ("property", "value"), rows)]

    def _describe_source(self, member: str, line: int) -> list[Section]:
        text = self.view.model.mil_text or ""
        lines = text.splitlines()
        shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return [
            Section(
                "model.mil",
                ("property", "value"),
                [
                    ("lines", len(lines)),
                    ("line", line),
                    ("text", shown[:200]),
                    ("view", KeyHint("view('source')", "open the source view")),
                ],
            )
        ]

    def _describe_mil_function(self, name: str) -> list[Section]:
        ops = [(t, line) for f, t, line in self.view.mil_ops() if f == name]
        return [Section(f"function {name}", ("op", "count"), Counter(t for t, _ in ops).most_common())]

    def _describe_goto(self, target: Any) -> list[Section]:
        return [Section("Link", ("property", "value"), [("link", KeyHint("select_cursor", "jump there"))]),
                *self.view.describe(target)]


def _short(value: Any) -> str:
    text = str(value).replace("\n", " ")
    return text if len(text) <= 80 else text[:79] + "…"
