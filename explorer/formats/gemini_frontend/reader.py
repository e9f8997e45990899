"""Load a frontend IR file: read-only, decoded at once; each layer kept if it is an object, checked for the
graph's consistency (links both ways, known names, unique indices, shapes that agree along each edge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from explorer import jsonpath
from explorer.bounded_read import read_regular
from explorer.errors import LoadError, Problem
from explorer.json_errors import locate_json_error
from explorer.jsonpath import duplicate_problems
from explorer.memory_guard import JSON_TEXT_FLOOR, ensure_json_fits

# What reading builds of each JSON object, at most: measured on a file of 1,000,000 empty layers (14 MB: 648 MiB at
# peak, about 600 bytes an object beyond the interpreter; tests/unit/test_limits.py)
MEMORY_PER_OBJECT = 700


def is_graph_input(name: str) -> bool:
    """previous_layer names that are graph inputs, not layers: `input1`, `constant_497`, `X_constant1`."""
    return name.startswith("input") or "constant" in name


def is_graph_output(name: str) -> bool:
    """next_layer names that are graph outputs, not layers: `output1`."""
    return name.startswith("output")


@dataclass
class Layer:
    name: str  # the key
    index: int
    operation: str
    record: dict[str, Any]

    def names(self, key: str) -> list[str]:
        value = self.record.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def shapes(self, key: str) -> list[list[int]]:
        value = self.record.get(key)
        if not isinstance(value, list):
            return []
        return [s for s in value if isinstance(s, list) and all(isinstance(d, int) for d in s)]


@dataclass
class FrontendIR:
    path: Path
    layers: list[Layer]  # in layer_index order
    by_name: dict[str, Layer]
    inputs: list[str] = field(default_factory=list)  # previous_layer names that are not layers
    outputs: list[str] = field(default_factory=list)  # next_layer names that are not layers
    problems: list[Problem] = field(default_factory=list)


def read_frontend(path: Path) -> FrontendIR:
    data = read_regular(path, "frontend IR", bytes_per_file_byte=JSON_TEXT_FLOOR)
    if not data.strip():
        raise LoadError(path, "byte 0", "the file is empty")
    ensure_json_fits(path, data, "frontend IR", MEMORY_PER_OBJECT)
    try:
        top = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        location, message = locate_json_error(data, error)
        raise LoadError(path, location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(path, "$", "JSON nested too deeply to be a frontend IR") from None
    if not isinstance(top, dict):
        raise LoadError(path, "$", "expected a JSON object of layers (name → layer)")
    problems: list[Problem] = duplicate_problems(data)
    layers = []
    for name, record in top.items():
        where = "$" + jsonpath.key(name)
        if not isinstance(record, dict):
            problems.append(Problem("error", "bad-layer", f"layer {name!r} is not an object", where))
            continue
        index = record.get("layer_index")
        if not isinstance(index, int) or isinstance(index, bool):
            problems.append(Problem("error", "bad-layer", f"layer {name!r} has no integer layer_index",
                                    f"{where}.layer_index", {"layer": name}))  # fmt: skip
            continue
        operation = record.get("operation")
        layers.append(Layer(name, index, operation if isinstance(operation, str) else "?", record))
        if record.get("name", name) != name:
            problems.append(Problem("warning", "name-mismatch", f"layer {name!r} calls itself {record.get('name')!r}",
                                    f"{where}.name", {"layer": name}))  # fmt: skip
    if not layers:
        raise LoadError(path, "$", "no layer objects with a layer_index: not a frontend IR")
    layers.sort(key=lambda layer: layer.index)
    ir = FrontendIR(path, layers, {layer.name: layer for layer in layers}, problems=problems)
    ir.problems += check_links(ir)
    return ir


def check_links(ir: FrontendIR) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[int, str] = {}
    inputs: set[str] = set()
    outputs: set[str] = set()
    for layer in ir.layers:
        where = "$" + jsonpath.key(layer.name)
        if layer.index in seen:
            problems.append(Problem("error", "duplicate-layer-index", f"layers {seen[layer.index]!r} and "
                                    f"{layer.name!r} share layer_index {layer.index}", f"{where}.layer_index",
                                    {"layer": layer.name}))  # fmt: skip
        seen.setdefault(layer.index, layer.name)
        for k, previous in enumerate(layer.names("previous_layer")):
            at = f"{where}.previous_layer[{k}]"
            other = ir.by_name.get(previous)
            if other is None:
                if is_graph_input(previous):
                    inputs.add(previous)
                else:
                    message = f"{layer.name} reads {previous!r}, which is neither a layer nor a graph input"
                    problems.append(Problem("warning", "unknown-layer", message, at, {"layer": layer.name}))
                continue
            if layer.name not in other.names("next_layer"):
                problems.append(Problem("warning", "link-asymmetry", f"{layer.name} lists {previous} as previous, "
                                        f"but {previous}'s next_layer does not list {layer.name}", at,
                                        {"layer": layer.name}))  # fmt: skip
            problems += _shape_check(other, layer, k, at)
        for k, following in enumerate(layer.names("next_layer")):
            at = f"{where}.next_layer[{k}]"
            other = ir.by_name.get(following)
            if other is None and is_graph_output(following):
                outputs.add(following)
            elif other is None:
                problems.append(Problem("error", "unknown-layer", f"{layer.name} feeds {following!r}, which is not a "
                                        "layer", at, {"layer": layer.name}))  # fmt: skip
            elif layer.name not in other.names("previous_layer"):
                problems.append(Problem("warning", "link-asymmetry", f"{layer.name} lists {following} as next, but "
                                        f"{following}'s previous_layer does not list {layer.name}", at,
                                        {"layer": layer.name}))  # fmt: skip
    ir.inputs = sorted(inputs)
    ir.outputs = sorted(outputs)
    return problems


def _shape_check(producer: Layer, consumer: Layer, k: int, at: str) -> list[Problem]:
    """The producer's output shape must be the consumer's k-th input shape (when both say one)."""
    outputs, inputs = producer.shapes("output_shape"), consumer.shapes("input_shape")
    if not outputs or k >= len(inputs) or outputs[0] == inputs[k]:
        return []
    return [Problem("error", "shape-mismatch", f"{producer.name} makes {outputs[0]}, but {consumer.name} reads "
                    f"{inputs[k]} from it (input {k})", at, {"layer": consumer.name})]  # fmt: skip
