"""Reads a layer list into a Document: a tree of layers, details, links and located problems."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from explorer.document import Document, DocumentView, Item, Meta, ProgressCallback, Section, Vocabulary
from explorer.errors import LoadError, Problem
from explorer.models.ref import Ref

LINE = re.compile(
    r"^\s*(?P<name>[\w.]+)\s*=\s*(?P<op>\w+)\((?P<inputs>[^)]*)\)\s*(?:->\s*(?P<shape>\[[\d,\s]*\]))?\s*$"
)


class Layer:
    def __init__(self, name: str, op: str, inputs: list[str], shape: str, line: int) -> None:
        self.name, self.op, self.inputs, self.shape, self.line = name, op, inputs, shape, line


def load(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LoadError(path, "", f"cannot read the file as UTF-8 text: {error}") from None
    layers: list[Layer] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        found = LINE.match(raw)
        if found is None:  # lenient: keep every other line, say where this one broke
            problems.append(Problem("error", "bad-line", "expected `name = Op(inputs) -> [shape]`", f"line {number}"))
            continue
        inputs = [name.strip() for name in found["inputs"].split(",") if name.strip()]
        layers.append(Layer(found["name"], found["op"], inputs, found["shape"] or "", number))
    names = {layer.name for layer in layers}
    for layer in layers:
        for k, name in enumerate(layer.inputs):
            if name not in names and name != "input":
                problems.append(
                    Problem(
                        "error" if strict else "warning",
                        "undefined-input",
                        f"{layer.name} reads {name}, which no layer defines",
                        f"line {layer.line}, input {k}",
                        {"layer": layer.name},
                    )
                )
    view = LayerListView(layers)
    return Document(
        meta=Meta(format="layer-list", source=path, producer="example plug-in"),
        tree=Item("file", path.name, ("summary",), children=[view.item(layer) for layer in layers]),
        view=view,
        vocabulary=Vocabulary(search_hint="layer name or op type"),
        problems=problems,
        summary={"layers": len(layers), "op_types": _counts(layer.op for layer in layers)},
    )


def _counts(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


class LayerListView(DocumentView):
    """The answers the explorer asks of a document; refs are ("layer", name) and ("summary",)."""

    def __init__(self, layers: list[Layer]) -> None:
        self.layers = {layer.name: layer for layer in layers}

    def item(self, layer: Layer) -> Item:
        return Item("layer", f"{layer.name}  {layer.op}  {layer.shape}", ("layer", layer.name))

    def describe(self, ref: Any) -> list[Section]:
        if ref == ("summary",):
            return [Section("Layer list", ("property", "value"), [("layers", len(self.layers))])]
        layer = self.layers.get(ref[1]) if isinstance(ref, tuple) and ref[0] == "layer" else None
        if layer is None:
            return []
        rows = [("name", layer.name), ("op", layer.op), ("shape", layer.shape), ("line", layer.line)]
        return [Section("Layer", ("property", "value"), rows)]

    def search(self, text: str) -> list[tuple[str, Ref]]:
        text = text.lower()
        return [
            (f"{layer.name} {layer.op}", ("layer", layer.name))
            for layer in self.layers.values()
            if text in f"{layer.name} {layer.op}".lower()
        ]

    def links(self, ref: Any) -> list[tuple[str, Any]]:
        layer = self.layers.get(ref[1]) if isinstance(ref, tuple) and ref[0] == "layer" else None
        if layer is None:
            return []
        found = [(f"← {name}", ("layer", name)) for name in layer.inputs if name in self.layers]
        readers = [other.name for other in self.layers.values() if layer.name in other.inputs]
        return found + [(f"→ {name}", ("layer", name)) for name in readers]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        return ("layer", refs["layer"]) if refs.get("layer") in self.layers else None
