"""A Core ML ML Program's ops counted (issue #57), from the types the program states for every value: conv
(output × the kernel's other dims), conv_transpose (input × the kernel's other dims), linear (output × the input's
last dim), matmul (output × K, after its transposes); every other MIL op has no multiply-accumulates. Parameters
are the elements of the float constants an op reads, each counted once, in the op its box folds into.
NeuralNetwork models and compiled folders state no shapes between layers: they are not counted."""

from __future__ import annotations

from typing import Any

from explorer.formats.coreml.source import ProgramSource
from explorer.models.count import ZERO, Count, Dim, OpCounts
from explorer.models.graph import GraphModel

NO_MACS = "no multiply-accumulates"
# MIL's data types as the proto numbers them → bytes per element (explorer.formats.coreml.model type_text names)
_BYTES = {"float16": 2, "float32": 4, "float64": 8, "bfloat16": 2, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
          "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1}  # fmt: skip
_FLOATS = ("float16", "float32", "float64", "bfloat16")


class CoreMLCounter:
    """The Core ML view's counter for an ML Program's graph (explorer.models.count.OpCounter)."""

    def __init__(self, view: ProgramSource, model: GraphModel) -> None:
        self.view, self.model = view, model

    def stamp(self) -> object:
        return 0  # a program's types are all in the file: they never change

    def counts(self) -> list[OpCounts | None]:
        view, model = self.view, self.model
        blocks = view.model.blocks
        params: dict[int, Count] = {}
        folded_into = model.node_folded_into.tolist() if model.node_folded_into.size else [-1] * model.n_nodes
        ops: list[tuple[str, Any] | None] = []  # per node: (its block, its MIL operation), None for the others
        for node, ref in enumerate(model.node_ref):
            op = None
            if ref is not None and _is_op(ref) and ref[1] in blocks:
                op = blocks[ref[1]].proto.operations[ref[2]]
                ops.append((ref[1], op))
            else:
                ops.append(None)
            if op is not None and model.node_constant[node] and folded_into[node] >= 0 and op.outputs:
                dtype, dims = _tensor(op.outputs[0].type, view.mil)
                if dtype in _FLOATS and dims is not None:
                    params[folded_into[node]] = params.get(folded_into[node], ZERO) + Count.product(dims)
        found: list[OpCounts | None] = []
        for node, located in enumerate(ops):
            if located is None or model.node_constant[node]:
                found.append(None)
                continue
            key, op = located
            macs, rule = _macs(view, key, op)
            found.append(OpCounts(params.get(node, ZERO), macs, _output_bytes(view, op), rule))
        return found


def _is_op(ref: Any) -> bool:
    return isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "op"


def _tensor(value_type: Any, mil: Any) -> tuple[str, list[Dim] | None]:
    """A value's dtype name and dims (sizes; "" for an unknown dim), or no dims when it is not a tensor of a known
    rank."""
    if value_type.WhichOneof("type") != "tensorType":
        return "", None
    tensor = value_type.tensorType
    dtype = mil.DataType.Name(tensor.dataType).lower() if tensor.dataType in mil.DataType.values() else "?"
    if tensor.rank < 0:
        return dtype, None
    dims: list[Dim] = [d.constant.size if d.WhichOneof("dimension") == "constant" else "" for d in tensor.dimensions]
    return dtype, dims


def _output_bytes(view: ProgramSource, op: Any) -> Count:
    found = ZERO
    for output in op.outputs:
        dtype, dims = _tensor(output.type, view.mil)
        if dims is None or dtype not in _BYTES:
            return Count.not_known(f"output {output.name} is not a tensor of known type and rank")
        found = found + Count.product(dims) * _BYTES[dtype]
    return found


def _macs(view: ProgramSource, key: str, op: Any) -> tuple[Count, str]:
    kind = op.type
    if kind not in ("conv", "conv_transpose", "linear", "matmul"):
        return ZERO, NO_MACS
    try:
        output = _dims(view, op.outputs[0].type)
        if kind == "conv":
            kernel = _input_dims(view, key, op, "weight")
            return Count.product([*output, *kernel[1:]]), "output elements × the kernel's other dims"
        if kind == "conv_transpose":
            data, kernel = _input_dims(view, key, op, "x"), _input_dims(view, key, op, "weight")
            return Count.product([*data, *kernel[1:]]), "input elements × the kernel's other dims"
        if kind == "linear":
            data = _input_dims(view, key, op, "x")
            return Count.product([*output, data[-1]]), "output elements × the input's last dim"
        data = _input_dims(view, key, op, "x")
        transposed = _bool_input(view, key, op, "transpose_x")
        k = data[-2] if transposed and len(data) >= 2 else data[-1]
        return Count.product([*output, k]), "output elements × K"
    except _Unknown as error:
        return Count.not_known(str(error)), f"{kind}: unknown ({error})"


class _Unknown(Exception):
    """Why an op's count is unknown."""


def _dims(view: ProgramSource, value_type: Any) -> list[Dim]:
    _, dims = _tensor(value_type, view.mil)
    if not dims:
        raise _Unknown("a value of unknown rank")
    return dims


def _input_dims(view: ProgramSource, key: str, op: Any, role: str) -> list[Dim]:
    """The dims of the value bound to one of the op's named inputs (its producer's output, or a block input)."""
    name = _bound_name(op, role)
    source = view.resolve(key, name)
    if source is not None:
        producer = view.model.blocks[source[0]].proto.operations[source[1]]
        for output in producer.outputs:
            if output.name == name:
                return _dims(view, output.type)
    for function in view.spec.mlProgram.functions.values():
        for value in function.inputs:
            if value.name == name:
                return _dims(view, value.type)
    raise _Unknown(f"{role} ({name}) has no known type")


def _bound_name(op: Any, role: str) -> str:
    if role not in op.inputs or not op.inputs[role].arguments:
        raise _Unknown(f"no {role}")
    binding = op.inputs[role].arguments[0]
    if binding.WhichOneof("binding") != "name":
        raise _Unknown(f"{role} is not a named value")
    return str(binding.name)


def _bool_input(view: ProgramSource, key: str, op: Any, role: str) -> bool:
    """A flag input's value (a const), False when absent."""
    if role not in op.inputs:
        return False
    source = view.resolve(key, _bound_name(op, role))
    if source is None:
        raise _Unknown(f"{role} is not a constant")
    const = view.model.blocks[source[0]].proto.operations[source[1]]
    value = const.attributes["val"].immediateValue.tensor.bools.values if "val" in const.attributes else []
    return bool(value[0]) if value else False
