"""A small ARK model that shows what the stride map is for: slices, padding, overlapping views, a big tensor.

Written in the current documented form (one `Op` per node, `PaddedShape`), compressed like ARK's own
example (views appear as strided tensors of the producer's buffer). `make samples` writes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer.formats.ark.model import ARG_TYPES

VIEWS_NAME = "views_ark_model.json"


def _tensor(tensor_id: int, shape: Sequence[int], buffer_id: int, *, strides: Sequence[int] | None = None,
            offsets: Sequence[int] | None = None, padded: Sequence[int] | None = None,
            send: Sequence[Sequence[int]] = ()) -> dict:  # fmt: skip
    return {
        "Id": tensor_id,
        "DataType": "FP16",
        "Shape": list(shape),
        "Strides": list(strides or padded or shape),
        "Offsets": list(offsets or [0] * len(shape)),
        "PaddedShape": list(padded or shape),
        "Buffer": {"Id": buffer_id, "Rank": -1, "SendTags": [list(tag) for tag in send], "RecvTags": []},
    }


def _node(node_id: int, producers: list[int], consumers: list[int], op_type: str, name: str, read: list[dict],
          write: list[dict], result: list[dict], args: dict | None = None) -> dict:  # fmt: skip
    return {
        "Id": node_id,
        "ProducerNodeIds": producers,
        "ConsumerNodeIds": consumers,
        "Op": {
            "Type": op_type,
            "Name": name,
            "IsVirtual": False,
            "ReadTensors": read,
            "WriteTensors": write,
            "ResultTensors": result,
            "Args": args or {},
        },
    }


def views_model() -> dict[str, Any]:
    """qkv projection into one [1, 64, 192] buffer, then three views of it: q (cols 0-63), k (64-127) and an
    overlapping window (48-143); a padded row-max, an in-place subtraction, a large padded FFN output and a
    4-D view (the right half of a [2, 4, 16, 32] region) for the outer-dimension keys."""
    qkv = [_tensor(2, (1, 64, 192), 2), _tensor(3, (1, 64, 192), 2)]
    q = _tensor(4, (1, 64, 64), 2, strides=(1, 64, 192))
    k = _tensor(7, (1, 64, 64), 2, strides=(1, 64, 192), offsets=(0, 0, 64))
    window = _tensor(10, (1, 64, 96), 2, strides=(1, 64, 192), offsets=(0, 0, 48))
    rowmax = [_tensor(t, (1, 64, 1), 3, padded=(1, 64, 8)) for t in (5, 6)]
    scaled = [_tensor(t, (1, 64, 64), 4) for t in (8, 9)]
    copied = [_tensor(t, (1, 64, 96), 5, padded=(1, 64, 128), send=[(1, 3)]) for t in (11, 12)]
    centered = [_tensor(t, (1, 64, 64), 4) for t in (13, 14)]
    ffn = [_tensor(t, (1, 512, 11008), 8, padded=(1, 512, 11024)) for t in (17, 18)]
    nodes = [
        _node(
            0, [], [1, 2, 3], "Matmul", "qkv_proj",
            [_tensor(0, (1, 64, 256), 0), _tensor(1, (192, 256), 1)], qkv[:1], qkv[1:],
            {"TransposeInput": {"BOOL": False}, "TransposeOther": {"BOOL": True}},
        ),
        _node(1, [0], [4], "ReduceMax", "q_rowmax", [q], rowmax[:1], rowmax[1:],
              {"Axis": {"INT": 2}, "KeepDim": {"BOOL": True}}),
        _node(2, [0], [4], "ScalarMul", "k_scale", [k], scaled[:1], scaled[1:], {"Factor": {"FLOAT": 0.125}}),
        _node(3, [0], [], "Copy", "window_copy", [window], copied[:1], copied[1:]),
        _node(4, [1, 2], [], "Sub", "center", [scaled[1], rowmax[1]], centered[:1], centered[1:]),
        _node(
            5, [], [], "Matmul", "ffn_up",
            [_tensor(15, (1, 512, 4096), 6), _tensor(16, (11008, 4096), 7)], ffn[:1], ffn[1:],
            {"TransposeInput": {"BOOL": False}, "TransposeOther": {"BOOL": True}},
        ),
        _node(
            6, [], [], "Transpose", "to_heads",
            [_tensor(19, (2, 4, 16, 16), 9, strides=(2, 4, 16, 32), offsets=(0, 0, 0, 16))],
            [_tensor(20, (2, 16, 4, 16), 10)], [_tensor(21, (2, 16, 4, 16), 10)],
            {"Permutation": {"DIMS": [0, 2, 1, 3]}},
        ),
    ]  # fmt: skip
    return {"Rank": 0, "WorldSize": 2, "Nodes": nodes}


def dumps_like_ark(value: Any, indent: int = 0) -> str:
    """ARK's pretty form: 2-space indent, each tensor object and each number array on one line."""
    pad = "  " * indent
    compact = isinstance(value, dict) and ("DataType" in value or (len(value) == 1 and set(value) <= set(ARG_TYPES)))
    compact = compact or (isinstance(value, list) and all(isinstance(v, int | list) for v in value))
    if compact or not isinstance(value, dict | list) or not value:
        return json.dumps(value, separators=(",", ":"))
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {dumps_like_ark(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{dumps_like_ark(v, indent + 1)}" for v in value]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


def chain_model(n_nodes: int) -> dict[str, Any]:
    """A long model for benchmarks: a chain of matmul/elementwise nodes, every third one reading a strided
    column view of its producer's buffer (as compressed ARK files do), with weights on their own buffers."""
    nodes: list[dict] = []
    width = 4096
    previous: dict | None = None
    next_tensor = 0

    def fresh(shape: Sequence[int], buffer_id: int, **kw: Any) -> dict:
        nonlocal next_tensor
        next_tensor += 1
        return _tensor(next_tensor, shape, buffer_id, **kw)

    for i in range(n_nodes):
        out_buffer = 2 * i
        if previous is None:
            read = [fresh((1, 512, width), 10**6)]
        elif i % 3 == 0:  # a view of the left half of the producer's output
            read = [fresh((1, 512, width // 2), previous["Buffer"]["Id"], strides=(1, 512, width))]
        else:
            read = [previous]
        op_type = ("Matmul", "Gelu", "Add", "Mul")[i % 4]
        if op_type == "Matmul":
            read = [*read, fresh((width, read[0]["Shape"][-1]), out_buffer + 1)]
        write = fresh((1, 512, width), out_buffer)
        result = fresh((1, 512, width), out_buffer)
        producers = [i - 1] if i else []
        nodes.append(_node(i, producers, [], op_type, f"{op_type.lower()}_{i}", read, [write], [result]))
        if i:
            nodes[i - 1]["ConsumerNodeIds"] = [i]
        previous = result
    return {"Rank": 0, "WorldSize": 1, "Nodes": nodes}


def write_samples(folder: Path) -> list[Path]:
    """The bundled ARK demo: views of one buffer (slices, padding, an overlapping window)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / VIEWS_NAME
    path.write_text(dumps_like_ark(views_model()) + "\n", encoding="utf-8")
    return [path]
