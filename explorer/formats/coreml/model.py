"""Core ML models as plain data for the views: ML Program blocks and ops, NeuralNetwork layers, weight blobs.

ML Program blocks are keyed by their protobuf path (`mlProgram.functions[main].block_specializations[CoreML6]`,
then `.operations[4].blocks[1]` for nested ones); ops are (block key, index). `weight.bin` records are checked
when the model is opened (64 bytes each) and their data is read only when someone looks at a weight.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

BLOB_MAGIC = 0xDEADBEEF
# weight.bin dtype codes seen in coremltools' blob writer
BLOB_DTYPES = {
    1: ("float16", np.float16),
    2: ("float32", np.float32),
    3: ("uint8", np.uint8),
    4: ("int8", np.int8),
    5: ("bfloat16", None),
    6: ("int16", np.int16),
    7: ("uint16", np.uint16),
    8: ("int4", None),
    9: ("uint1", None),
    10: ("uint2", None),
    11: ("uint3", None),
    12: ("uint4", None),
    13: ("uint6", None),
    14: ("int32", np.int32),
    15: ("uint32", np.uint32),
}
MAX_STATS_BYTES = 256 * 1024 * 1024


@dataclass
class BlockInfo:
    key: str
    proto: Any
    title: str
    function: str
    parent: tuple[str, int] | None = None  # (block key, op index) of the op holding this block
    producer: dict[str, int] = field(default_factory=dict)  # value name → op index


@dataclass(frozen=True, slots=True)
class Blob:
    """One weight record in weight.bin, as found when the model was opened."""

    file: str
    offset: int
    dtype: str
    size: int
    data_offset: int


@dataclass
class CoreMLModel:
    path: Path  # the file or folder the user opened
    spec_path: Path | None  # the .mlmodel protobuf, None for a compiled folder
    model: Any  # CoreML.Specification.Model, None for a compiled folder
    weights_dir: Path | None
    blocks: dict[str, BlockInfo] = field(default_factory=dict)
    blobs: dict[tuple[str, int], Blob] = field(default_factory=dict)  # (op's block key, op index) → blob
    mil_text: str | None = None  # model.mil of a compiled .mlmodelc
    # a compiled folder's metadata.json (coremlcompiler writes an array of one object; an object is read too)
    compiled_metadata: dict[str, Any] | None = None
    # the file's size and mtime when its walk left weights in it (explorer.formats.coreml.wire); "" when parsed whole
    stamp: str = ""

    @property
    def model_type(self) -> str:
        if self.model is None:
            return "compiled"
        return self.model.WhichOneof("Type") or "none"

    def __getstate__(self) -> dict[str, Any]:
        """Kept (explorer.cache) with the spec as its protobuf bytes and each block found again in it by its key:
        coremltools' message classes pickle under module names that do not import (explorer.formats.coreml.proto)."""
        state = self.__dict__.copy()
        state["model"] = None if self.model is None else self.model.SerializeToString()
        state["blocks"] = {key: replace(block, proto=None) for key, block in self.blocks.items()}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        from explorer.formats.coreml.proto import proto_module

        self.__dict__.update(state)
        if self.model is not None:
            self.model = proto_module("Model_pb2").Model.FromString(self.model)
        for block in self.blocks.values():  # parents before their nested blocks (the order they were added in)
            block.proto = self._block_at(block)

    def _block_at(self, block: BlockInfo) -> Any:
        if block.parent is None:
            function = self.model.mlProgram.functions[block.function]
            opset = block.key[len(block_key_of(block.function, "")) - 1 : -1]
            return function.block_specializations[opset]
        parent_key, op_index = block.parent
        nested = int(block.key.rsplit("[", 1)[1][:-1])
        return self.blocks[parent_key].proto.operations[op_index].blocks[nested]


def block_key_of(function: str, opset: str) -> str:
    return f"mlProgram.functions[{function}].block_specializations[{opset}]"


def index_program(program: Any, model: CoreMLModel) -> None:
    """Every block (the active one of each function, then nested blocks recursively) and its producers."""
    for name, function in sorted(program.functions.items()):  # a map: sorted for a stable order
        opset = (
            function.opset
            if function.opset in function.block_specializations
            else next(iter(function.block_specializations), function.opset)
        )
        if opset not in function.block_specializations:
            continue
        _add_block(
            model, function.block_specializations[opset], block_key_of(name, opset), f"function {name}", name, None, 0
        )


def _add_block(model: CoreMLModel, block: Any, key: str, title: str, function: str, parent: tuple[str, int] | None,
               depth: int) -> None:  # fmt: skip
    info = BlockInfo(key, block, title, function, parent)
    model.blocks[key] = info
    for i, op in enumerate(block.operations):
        for output in op.outputs:
            info.producer.setdefault(output.name, i)
        if depth < 64:
            for j, nested in enumerate(op.blocks):
                _add_block(
                    model,
                    nested,
                    f"{key}.operations[{i}].blocks[{j}]",
                    f"{op.type} block {j}",
                    function,
                    (key, i),
                    depth + 1,
                )


def op_name(op: Any) -> str:
    value = op.attributes.get("name") if "name" in op.attributes else None
    if value is not None and value.immediateValue.tensor.strings.values:
        return value.immediateValue.tensor.strings.values[0]
    return op.outputs[0].name if op.outputs else ""


def type_text(value_type: Any, mil: Any) -> str:
    """`fp16[1, 3, 32, 32]`, `list(fp32[?])`, `state(fp16[1, 8])`."""
    kind = value_type.WhichOneof("type")
    if kind == "tensorType":
        tensor = value_type.tensorType
        dtype = mil.DataType.Name(tensor.dataType).lower() if tensor.dataType in mil.DataType.values() else "?"
        dtype = {"float16": "fp16", "float32": "fp32", "float64": "fp64"}.get(dtype, dtype)
        dims = ", ".join(
            str(d.constant.size) if d.WhichOneof("dimension") == "constant" else "?" for d in tensor.dimensions
        )
        return f"{dtype}[{dims}]" if tensor.rank >= 0 else f"{dtype}[*]"
    if kind == "listType":
        return f"list({type_text(value_type.listType.type, mil)})"
    if kind == "tupleType":
        return "tuple(" + ", ".join(type_text(t, mil) for t in value_type.tupleType.types) + ")"
    if kind == "dictionaryType":
        entry = value_type.dictionaryType
        return f"dict({type_text(entry.keyType, mil)}, {type_text(entry.valueType, mil)})"
    if kind == "stateType":
        return f"state({type_text(value_type.stateType.wrappedType, mil)})"
    return "?"


def value_text(value: Any, limit: int = 60) -> str:
    """A short form of an immediate value, or where a blob lives."""
    which = value.WhichOneof("value")
    if which == "blobFileValue":
        return f"blob {value.blobFileValue.fileName} @ {value.blobFileValue.offset}"
    if which != "immediateValue":
        return "?"
    immediate = value.immediateValue
    kind = immediate.WhichOneof("value")
    if kind == "tensor":
        tensor = immediate.tensor
        field_name = tensor.WhichOneof("value")
        if field_name is None:
            return "[]"
        values = list(getattr(tensor, field_name).values)
        if field_name == "bytes":
            return f"{len(getattr(tensor, field_name).values)} bytes"
        text = ", ".join(
            repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v) for v in values[:16]
        )
        text = text if len(values) <= 16 else text + ", …"
        return (f"[{text}]" if len(values) != 1 else text)[:limit]
    if kind == "tuple":
        return f"tuple of {len(immediate.tuple.values)}"
    if kind == "list":
        return f"list of {len(immediate.list.values)}"
    if kind == "dictionary":
        return f"dict of {len(immediate.dictionary.values)}"
    return "?"


def read_blob_record(handle: Any, file_size: int, offset: int) -> Blob | str:
    """The 64-byte record at `offset`, or why it is not a valid one."""
    if offset < 64 or offset + 64 > file_size:
        return f"offset {offset:,} is outside weight.bin ({file_size:,} bytes)"
    handle.seek(offset)
    magic, dtype, size, data_offset = struct.unpack("<IIQQ", handle.read(24))
    if magic != BLOB_MAGIC:
        return f"no blob record at offset {offset:,} (magic {magic:#x}, expected {BLOB_MAGIC:#x})"
    if data_offset + size > file_size:
        return f"blob at {offset:,} claims {size:,} bytes at {data_offset:,}, past the end of weight.bin"
    return Blob("weight.bin", offset, BLOB_DTYPES.get(dtype, (f"dtype{dtype}", None))[0], size, data_offset)


def blob_stats(path: Path, blob: Blob) -> dict[str, str]:
    if blob.size > MAX_STATS_BYTES:
        return {"values": f"not summarised: {blob.size:,} bytes"}
    numpy_type = next((t for name, t in BLOB_DTYPES.values() if name == blob.dtype), None)
    if numpy_type is None:
        return {"values": f"{blob.dtype} data, {blob.size:,} bytes (packed: no per-value statistics)"}
    with path.open("rb") as handle:
        handle.seek(blob.data_offset)
        data = handle.read(blob.size)
    from explorer.tensors.value_stats import value_stats

    itemsize = np.dtype(numpy_type).itemsize
    return value_stats(np.frombuffer(data, dtype=np.dtype(numpy_type).newbyteorder("<"), count=len(data) // itemsize))


def feature_type(feature: Any) -> str:
    """A model description's input or output type in words: `multiArray fp32[1, 3, 32, 32]`, `image 224×224`."""
    kind = feature.type.WhichOneof("Type")
    if kind == "multiArrayType":
        array = feature.type.multiArrayType
        dtype = {65552: "fp16", 65568: "fp32", 65600: "fp64", 131104: "int32", 131080: "int8"}.get(
            array.dataType, str(array.dataType)
        )
        return f"multiArray {dtype}{list(array.shape)}"
    if kind == "imageType":
        image = feature.type.imageType
        return f"image {image.width}×{image.height}"
    if kind == "stateType":
        return "state"
    return kind or "?"


def schema_entries(metadata: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The entries of one of metadata.json's feature lists (inputSchema, outputSchema, stateSchema)."""
    value = metadata.get(key)
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def layer_type(layer: Any) -> str:
    return layer.WhichOneof("layer") or "?"


def layer_weights(layer: Any, stamp: str) -> list[tuple[str, int]]:
    kind = layer_type(layer)
    if kind == "?":
        return []
    return [(dtype, size) for _, dtype, size in named_weights(getattr(layer, kind), stamp)]


def named_weights(params: Any, stamp: str) -> list[tuple[str, str, int]]:
    """(field, stored as, bytes) of each weight of a layer's parameters; `stamp`: the walk's, when the file was
    walked (CoreMLModel.stamp), so the values it left in the file count too."""
    found = []
    for field_descriptor, value in params.ListFields():
        if field_descriptor.message_type is not None and field_descriptor.message_type.name == "WeightParams":
            for stored, size in weight_size(value, stamp):
                found.append((field_descriptor.name, stored, size))
    return found


def weight_size(weights: Any, stamp: str) -> list[tuple[str, int]]:
    from explorer.formats.coreml.wire import left_in_file

    sizes = []
    if len(weights.floatValue):
        sizes.append(("float32", 4 * len(weights.floatValue)))
    if weights.float16Value:
        sizes.append(("float16", len(weights.float16Value)))
    if weights.rawValue:
        sizes.append(("raw", len(weights.rawValue)))
    if weights.int8RawValue:
        sizes.append(("int8", len(weights.int8RawValue)))
    sizes += [(left.stored_as, left.length) for left in left_in_file(weights, stamp)]
    return sizes
