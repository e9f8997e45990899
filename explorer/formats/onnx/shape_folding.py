"""The explorer's own propagation of shape values, for where onnx's shape inference gives up (issue #57).

An exporter that does not fold constants leaves the shape a Reshape or an Expand takes computed by a small
subgraph (`Where(Equal(c, ConstantOfShape(n) * k), ..., c)`, `Concat(Gather(Shape(x), 0), ...)`): onnx's
inference, even with its data propagation, does not evaluate most of those ops, so every shape downstream
becomes an invented `unk__N` dim and a count over it is a formula in dims nobody can bind. This module
evaluates such small integer tensors with numpy (each at most MAX_ELEMENTS, from constants and the static
shapes a first inference found) and hands each result to the op as a constant, so a second inference knows
the shapes. It runs in the inference child (its source is sent there with the child's code): it imports
nothing but onnx and numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper, numpy_helper

MAX_ELEMENTS = 4096  # a shape-like tensor: larger ones are data, not shapes, and are never evaluated
MAX_DEPTH = 200  # ops between a shape input and the constants and shapes it is computed from
# op → the positions of its inputs that are shapes, axes, starts, sizes: what inference needs as values
SHAPE_INPUTS = {
    "Reshape": (1,), "Expand": (1,), "Tile": (1,), "ConstantOfShape": (0,), "Slice": (1, 2, 3, 4),
    "Range": (0, 1, 2), "Unsqueeze": (1,), "Squeeze": (1,), "Pad": (1,), "Resize": (2, 3), "Upsample": (1,),
    "TopK": (1,), "OneHot": (1,), "Split": (1,), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,),
}  # fmt: skip
_BINARY: dict[str, Any] = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal, "Less": np.less,
           "Greater": np.greater, "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
           "And": np.logical_and, "Or": np.logical_or, "Max": np.maximum, "Min": np.minimum, "Mod": np.mod}  # fmt: skip
_UNARY: dict[str, Any] = {"Identity": lambda x: x, "Neg": np.negative, "Abs": np.abs, "Not": np.logical_not,
                          "Floor": np.floor, "Ceil": np.ceil, "Sqrt": np.sqrt}  # fmt: skip


def fold_shape_inputs(model: Any, inferred: Any) -> int:
    """Give each shape input of the main graph that can be evaluated its value as a new initializer (the op reads
    it instead); `inferred` is the model after a first inference (its static shapes). The number folded."""
    folder = _Folder(model.graph, inferred.graph)
    folded = 0
    for node in model.graph.node:
        for position in SHAPE_INPUTS.get(node.op_type, ()) if node.domain in ("", "ai.onnx") else ():
            if position >= len(node.input) or not node.input[position]:
                continue
            name = node.input[position]
            if name in folder.initializers or folder.producer_op(name) == "Constant":
                continue
            value = folder.value(name)
            if value is None:
                continue
            constant = numpy_helper.from_array(np.asarray(value), f"{name}__folded")
            model.graph.initializer.append(constant)
            node.input[position] = constant.name
            folded += 1
    return folded


class _Folder:
    """Values of small integer tensors of one graph, worked out on demand and remembered."""

    def __init__(self, graph: Any, inferred: Any) -> None:
        self.producer = {output: node for node in graph.node for output in node.output if output}
        self.initializers = {tensor.name: tensor for tensor in graph.initializer}
        self.shapes: dict[str, list[int]] = {}
        for value in [*inferred.value_info, *inferred.input, *inferred.output]:
            tensor = value.type.tensor_type
            if tensor.HasField("shape") and all(d.HasField("dim_value") for d in tensor.shape.dim):
                self.shapes[value.name] = [d.dim_value for d in tensor.shape.dim]
        for tensor in graph.initializer:
            self.shapes.setdefault(tensor.name, list(tensor.dims))
        self.known: dict[str, np.ndarray | None] = {}

    def producer_op(self, name: str) -> str:
        node = self.producer.get(name)
        return node.op_type if node is not None else ""

    def value(self, name: str, depth: int = 0) -> np.ndarray | None:
        if name in self.known:
            return self.known[name]
        found = self._evaluate(name, depth) if depth < MAX_DEPTH else None
        if found is not None and (found.size > MAX_ELEMENTS or found.dtype.kind not in "biuf"):
            found = None
        self.known[name] = found
        return found

    def _evaluate(self, name: str, depth: int) -> np.ndarray | None:
        tensor = self.initializers.get(name)
        if tensor is not None:
            if _elements(tensor.dims) > MAX_ELEMENTS or tensor.data_location == 1:  # EXTERNAL: data, not a shape
                return None
            return numpy_helper.to_array(tensor)
        node = self.producer.get(name)
        if node is None or node.domain not in ("", "ai.onnx"):
            return None
        try:
            return self._op(node, depth)
        except (ValueError, IndexError, TypeError, KeyError, OverflowError, ZeroDivisionError, MemoryError):
            return None

    def _inputs(self, node: Any, depth: int) -> list[np.ndarray | None]:
        return [self.value(name, depth + 1) if name else None for name in node.input]

    def _op(self, node: Any, depth: int) -> np.ndarray | None:
        op, attributes = node.op_type, {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if op == "Constant":
            return _constant(attributes)
        if op in ("Shape", "Size"):
            shape = self.shapes.get(node.input[0])
            if shape is None:
                return None
            if op == "Size":
                return np.asarray(_elements(shape), dtype=np.int64)
            return np.asarray(shape[attributes.get("start", 0) : attributes.get("end", len(shape))], dtype=np.int64)
        values = self._inputs(node, depth)
        if op == "ConstantOfShape":
            if values[0] is None or _elements(values[0].tolist()) > MAX_ELEMENTS:
                return None
            fill = numpy_helper.to_array(attributes["value"]) if "value" in attributes else np.zeros(1, np.float32)
            return np.full(values[0].astype(np.int64).tolist(), fill.reshape(-1)[0], dtype=fill.dtype)
        optional = op in ("Slice", "Unsqueeze", "Squeeze")  # their later inputs may be absent
        if values[0] is None or (not optional and any(v is None for v in values)):
            return None
        return _compute(op, attributes, values)


def _compute(op: str, attributes: dict[str, Any], values: list[Any]) -> np.ndarray | None:
    first = values[0]
    if op in _BINARY:
        return np.asarray(_BINARY[op](first, values[1]))
    if op in _UNARY:
        return np.asarray(_UNARY[op](first))
    if op == "Div":
        a, b = first, values[1]
        return np.asarray(np.trunc(a / b).astype(np.result_type(a, b))) if a.dtype.kind in "iu" else a / b
    if op == "Where":
        return np.where(first, values[1], values[2])
    if op == "Cast":
        return first.astype(helper.tensor_dtype_to_np_dtype(attributes["to"]))
    if op == "Gather":
        return np.take(first, values[1], axis=attributes.get("axis", 0))
    if op == "Concat":
        return np.concatenate([np.atleast_1d(v) for v in values], axis=attributes.get("axis", 0))
    if op in ("Unsqueeze", "Squeeze"):
        axes = values[1] if len(values) > 1 and values[1] is not None else attributes.get("axes")
        if op == "Squeeze":
            return np.squeeze(first, axis=tuple(int(a) for a in axes) if axes is not None else None)
        if axes is None:
            return None
        result = first
        for axis in sorted(int(a) % (first.ndim + len(axes)) for a in axes):
            result = np.expand_dims(result, axis)
        return result
    if op == "Slice":
        return _slice(first, attributes, values)
    if op == "Range":
        start, limit, delta = (v.item() for v in values[:3])
        length = max(int(np.ceil((limit - start) / delta)), 0) if delta else MAX_ELEMENTS + 1
        return np.arange(start, limit, delta, dtype=first.dtype) if length <= MAX_ELEMENTS else None
    if op == "Reshape":
        target = [int(d) for d in values[1]]
        target = [first.shape[k] if d == 0 and not attributes.get("allowzero") else d for k, d in enumerate(target)]
        return first.reshape(target)
    if op == "Expand":
        shape = np.broadcast_shapes(first.shape, tuple(int(d) for d in values[1]))
        return np.broadcast_to(first, shape).copy() if _elements(shape) <= MAX_ELEMENTS else None
    return None


def _slice(data: np.ndarray, attributes: dict[str, Any], values: list[Any]) -> np.ndarray | None:
    if len(values) > 1:  # opset 10 and later: starts, ends, axes, steps as inputs
        starts, ends = values[1], values[2] if len(values) > 2 else None
        axes = values[3] if len(values) > 3 and values[3] is not None else range(len(starts))
        steps = values[4] if len(values) > 4 and values[4] is not None else [1] * len(starts)
    else:
        starts, ends = attributes.get("starts"), attributes.get("ends")
        axes, steps = attributes.get("axes", range(len(starts or []))), [1] * len(starts or [])
    if starts is None or ends is None:
        return None
    index = [slice(None)] * data.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=False):
        big = np.iinfo(np.int64).max
        index[int(axis)] = slice(int(start), None if int(end) >= big else int(end), int(step))
    return data[tuple(index)]


def _constant(attributes: dict[str, Any]) -> np.ndarray | None:
    if "value" in attributes:
        return numpy_helper.to_array(attributes["value"])
    for key, dtype in (("value_int", np.int64), ("value_ints", np.int64), ("value_float", np.float32),
                       ("value_floats", np.float32)):  # fmt: skip
        if key in attributes:
            return np.asarray(attributes[key], dtype=dtype)
    return None


def _elements(dims: Any) -> int:
    total = 1
    for dim in dims:
        total *= int(dim)
        if total > MAX_ELEMENTS * MAX_ELEMENTS:
            return total
    return total
