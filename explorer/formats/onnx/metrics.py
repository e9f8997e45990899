"""An ONNX model's ops counted (issue #57): the parameters each reads, its multiply-accumulates by its op's rule,
and the bytes of its outputs, from the declared and inferred shapes (symbolic dims stay names).

Multiply-accumulates are counted for the ops that multiply matrices: Conv (output × the kernel's other dims),
ConvTranspose (input × the kernel's other dims), Gemm and MatMul (output × K), their integer and quantized forms,
Einsum (output × the contracted letters), Attention (Q·Kᵀ and the weighted sum of V), LSTM, GRU and RNN (steps ×
their weights). Every other standard op has none; an op of another domain, or a call of a model-local function,
is not counted (the reason says so). Parameters are the elements of the initializers an op reads, each
initializer counted once, in the op its box folds into.
"""

from __future__ import annotations

import math
from typing import Any

from explorer.formats.onnx.index import ELEMENT_BITS, ModelIndex
from explorer.models.count import LIMIT, ZERO, Count, Dim, OpCounts
from explorer.models.graph import GraphModel

STANDARD = ("", "ai.onnx")
NO_MACS = "no multiply-accumulates"
# op → (its matrix inputs' positions: A and B, or X and W) for the ops counted by one rule
_MATMULS = {"MatMul": (0, 1), "MatMulInteger": (0, 1), "QLinearMatMul": (0, 3)}
_CONVS = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3, "DeformConv": 1}  # op → its kernel's position
_RECURRENT = ("LSTM", "GRU", "RNN")
_BY_RULE = {*_MATMULS, *_CONVS, *_RECURRENT, "ConvTranspose", "Gemm", "Einsum", "Attention"}
_CONTRIB_ATTENTION = ("MultiHeadAttention",)  # com.microsoft: query (B, S, D), key (B, L, D), output (B, S, Dv)


class OnnxCounter:
    """The ONNX view's counter for its graph (explorer.models.count.OpCounter)."""

    def __init__(self, index: ModelIndex, model: GraphModel) -> None:
        self.index, self.model = index, model

    def stamp(self) -> object:
        return self.index.types_version

    def counts(self) -> list[OpCounts | None]:
        model, index = self.model, self.index
        values = _Values(index)
        params: dict[int, Count] = {}
        folded_into = model.node_folded_into.tolist() if model.node_folded_into.size else [-1] * model.n_nodes
        for node, ref in enumerate(model.node_ref):  # each initializer's elements, in the op its box folds into
            if isinstance(ref, tuple) and ref and ref[0] == "init" and folded_into[node] >= 0:
                tensor = index.graphs[ref[1]].proto.initializer[ref[2]]
                target = folded_into[node]
                params[target] = params.get(target, ZERO) + Count.product(list(tensor.dims))
        found: list[OpCounts | None] = []
        for node, ref in enumerate(model.node_ref):
            if not (isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "node"):
                found.append(None)
                continue
            _, key, n = ref
            proto = index.graphs[key].nodes[n]
            macs, rule = op_macs(values, key, proto)
            held = ZERO if _copies_a_constant(index, key, proto) else _output_bytes(values, key, proto)
            found.append(OpCounts(params.get(node, ZERO), macs, held, rule))
        return found


def _copies_a_constant(index: ModelIndex, key: str, node: Any) -> bool:
    """An Identity of an initializer: torch's exporters write one for a weight used twice (a tied embedding, a
    shared projection); its output is that weight again, not an activation."""
    if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") or len(node.input) != 1:
        return False
    where = index.resolve(key, node.input[0])
    return where is not None and where[1] == "initializer"


def op_macs(values: _Values, key: str, node: Any) -> tuple[Count, str]:
    """One node's multiply-accumulates and the rule that counted them."""
    index = values.index
    op = node.op_type
    if node.domain not in STANDARD:
        if node.domain == "com.microsoft" and op in _CONTRIB_ATTENTION:
            return _attention(values, key, node, three_d=True)
        local = any(f.name == op and f.domain == node.domain for f in index.model.functions)
        why = "a call of the model's local function" if local else f"no rule for {node.domain}.{op}"
        return Count.not_known(why), f"not counted: {why}"
    if op not in _BY_RULE:
        return ZERO, NO_MACS
    shape = _Shapes(values, key, node)
    try:
        if op in _MATMULS:
            return _matmul(shape, *_MATMULS[op]), "output elements × K"
        if op in _CONVS:
            output, kernel = shape.output(0), shape.input(_CONVS[op])
            _agree(kernel[0], output[1], "the kernel's output channels", "the output's channels")
            return Count.product([*output, *kernel[1:]]), "output elements × the kernel's other dims"
        if op == "ConvTranspose":
            data, kernel = shape.input(0), shape.input(1)
            _agree(kernel[0], data[1], "the kernel's input channels", "the input's channels")
            return Count.product([*data, *kernel[1:]]), "input elements × the kernel's other dims"
        if op == "Gemm":
            return _gemm(shape, node), "M × N × K"
        if op == "Einsum":
            return _einsum(shape, node), "output elements × the contracted dims"
        if op == "Attention":
            return _attention(values, key, node, three_d=len(shape.input(0)) == 3)
        return _recurrent(shape), "steps × batch × the weights' elements"
    except _Unknown as error:
        return Count.not_known(str(error)), f"{op}: unknown ({error})"


class _Unknown(Exception):
    """Why an op's count is unknown: a shape not known, or shapes that disagree."""


class _Shapes:
    """The shapes a node reads and writes, each a list of dims; _Unknown when one is not known."""

    def __init__(self, values: _Values, key: str, node: Any) -> None:
        self.values, self.key, self.node = values, key, node

    def input(self, position: int) -> list[Dim]:
        if position >= len(self.node.input) or not self.node.input[position]:
            raise _Unknown(f"input {position} is missing")
        return self._of(self.node.input[position], f"input {position}")

    def output(self, position: int) -> list[Dim]:
        if position >= len(self.node.output) or not self.node.output[position]:
            raise _Unknown(f"output {position} is missing")
        return self._of(self.node.output[position], f"output {position}")

    def _of(self, name: str, what: str) -> list[Dim]:
        found = self.values.facts(self.key, name)[0]
        if found is None:
            raise _Unknown(f"{what} ({name}) has no known shape")
        return found


def shape_of(index: ModelIndex, key: str, name: str) -> list[Dim] | None:
    """A value's dims (sizes, or names for symbolic dims, "" for a dim with neither), declared, inferred, or an
    initializer's; None when its shape is not known."""
    return _read_facts(index, key, name)[0]


Facts = tuple[list[Dim] | None, float | None]  # a value's dims and its element's bytes, each None when not known


class _Values:
    """The facts of the values one counting reads, each read from the protobuf once (an op's output is the next
    op's input)."""

    def __init__(self, index: ModelIndex) -> None:
        self.index = index
        self.known: dict[tuple[str, str], Facts] = {}

    def facts(self, key: str, name: str) -> Facts:
        found = self.known.get((key, name))
        if found is None:
            found = self.known[(key, name)] = _read_facts(self.index, key, name)
        return found


def _read_facts(index: ModelIndex, key: str, name: str) -> Facts:
    found = index.type_of(key, name)
    if found is not None and found.HasField("tensor_type"):
        tensor = found.tensor_type
        bits = ELEMENT_BITS.get(tensor.elem_type)
        size = bits / 8 if bits else None
        if not tensor.HasField("shape"):
            return None, size
        return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in tensor.shape.dim], size
    where = index.resolve(key, name)
    if where is not None and where[1] == "initializer":
        info = index.graphs[where[0]]
        tensor = info.proto.initializer[info.initializers[name]]
        bits = ELEMENT_BITS.get(tensor.data_type)
        return list(tensor.dims), bits / 8 if bits else None
    return None, None


def _output_bytes(values: _Values, key: str, node: Any) -> Count:
    """The bytes a node's outputs hold: elements × element size, summed (unknown when one is not known)."""
    whole, found = 0, ZERO  # sizes alone summed as a number; a count with dims only where there is one
    for name in node.output:
        if not name:
            continue
        dims, size = values.facts(key, name)
        if dims is None or size is None:
            return Count.not_known(f"output {name} has no known shape or type")
        sizes = [dim for dim in dims if type(dim) is int and dim > 0]
        if size >= 1 and len(sizes) == len(dims):
            whole += math.prod(sizes) * int(size)
            if whole >= LIMIT:
                return Count.not_known("more than 2^63")
            continue
        elements = Count.product(dims)
        found = found + (elements * int(size) if size >= 1 else _sub_byte(elements, size))
    return found + Count.of(whole) if whole else found


def _sub_byte(elements: Count, size: float) -> Count:
    """Elements of 4 or 2 bits: packed, rounded up (only where the count is a number)."""
    value = elements.value
    return Count.of(math.ceil(value * size)) if value is not None else Count.not_known("packed sub-byte elements")


def _agree(a: Dim, b: Dim, what_a: str, what_b: str) -> None:
    if isinstance(a, int) and isinstance(b, int) and a != b:
        raise _Unknown(f"{what_a} ({a}) and {what_b} ({b}) disagree")


def _matmul(shape: _Shapes, a_at: int, b_at: int) -> Count:
    a, b = shape.input(a_at), shape.input(b_at)
    if not a or not b:
        raise _Unknown("a scalar operand")
    k = a[-1]
    _agree(k, b[-2] if len(b) >= 2 else b[0], "A's last dim", "B's reduced dim")
    try:
        output = shape.output(0)
    except _Unknown:  # worked out as numpy's matmul does: the batch dims broadcast, then A's rows by B's columns
        output = [*_broadcast(a[:-2], b[:-2]), *a[-2:-1], *(b[-1:] if len(b) >= 2 else [])]
    return Count.product([*output, k])


def _broadcast(a: list[Dim], b: list[Dim]) -> list[Dim]:
    width = max(len(a), len(b))
    ones: list[Dim] = [1] * width
    a, b = ones[: width - len(a)] + a, ones[: width - len(b)] + b
    found: list[Dim] = []
    for x, y in zip(a, b, strict=True):
        if x == 1 or x == y:
            found.append(y)
        elif y == 1:
            found.append(x)
        else:
            raise _Unknown(f"batch dims {x} and {y} do not broadcast")
    return found


def _gemm(shape: _Shapes, node: Any) -> Count:
    a, b = shape.input(0), shape.input(1)
    if len(a) != 2 or len(b) != 2:
        raise _Unknown("Gemm's A and B are not matrices")
    trans_a, trans_b = _int_attribute(node, "transA"), _int_attribute(node, "transB")
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    k_b, n = (b[1], b[0]) if trans_b else (b[0], b[1])
    _agree(k, k_b, "A's K", "B's K")
    return Count.product([m, n, k])


def _einsum(shape: _Shapes, node: Any) -> Count:
    equation = next((a.s.decode("utf-8", "replace") for a in node.attribute if a.name == "equation"), "")
    inputs, _, result = equation.replace(" ", "").partition("->")
    operands = inputs.split(",")
    if len(operands) < 2:
        return ZERO  # one operand: a transpose, a trace or a sum, no products
    if not result:
        raise _Unknown("an implicit output (no `->`)")
    sizes: dict[str, Dim] = {}
    for position, letters in enumerate(operands):
        dims = shape.input(position)
        if "..." in letters:
            head, _, tail = letters.partition("...")
            named = list(zip(head, dims[: len(head)], strict=False)) + list(zip(tail, dims[len(dims) - len(tail):],
                                                                                strict=False))  # fmt: skip
        elif len(letters) != len(dims):
            raise _Unknown(f"operand {position} has {len(dims)} dims for {letters!r}")
        else:
            named = list(zip(letters, dims, strict=True))
        for letter, dim in named:
            _agree(sizes.get(letter, dim), dim, f"{letter!r} in one operand", "in another")
            sizes.setdefault(letter, dim)
    contracted = [sizes[letter] for letter in sizes if letter not in result]
    return Count.product([*shape.output(0), *contracted])


def _attention(values: _Values, key: str, node: Any, three_d: bool) -> tuple[Count, str]:
    """Q·Kᵀ (Q's elements × the keys' length) and the weights times V (the output's elements × the same)."""
    shape = _Shapes(values, key, node)
    try:
        query, keys, output = shape.input(0), shape.input(1), shape.output(0)
        if len(keys) < 3:
            raise _Unknown("packed or missing keys")
        length = keys[1] if three_d else keys[-2]
        count = Count.product([*query, length]) + Count.product([*output, length])
    except _Unknown as error:
        return Count.not_known(str(error)), f"{node.op_type}: unknown ({error})"
    return count, "Q elements × keys + output elements × keys"


def _recurrent(shape: _Shapes) -> Count:
    """Per step and batch row, each direction's input and recurrent weights once: X's first two dims (steps and
    batch, in either layout) × (W's elements + R's elements)."""
    data, weights, recurrent = shape.input(0), shape.input(1), shape.input(2)
    if len(data) != 3:
        raise _Unknown("X is not 3-D")
    steps = Count.product(data[:2])
    return steps * (Count.product(weights) + Count.product(recurrent))


def _int_attribute(node: Any, name: str) -> int:
    return next((int(a.i) for a in node.attribute if a.name == name), 0)

