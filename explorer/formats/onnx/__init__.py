"""ONNX models (`.onnx`): graphs with subgraphs, local functions and external data read on demand."""

from __future__ import annotations

from pathlib import Path

from explorer.format import PROTOBUF_MEMORY_LIMIT, Format, lazy

LFS_POINTER = b"version https://git-lfs.github.com/spec"


def match(path: Path, head: bytes) -> bool:
    return path.suffix.lower() in (".onnx", ".onnxtxt") or head.startswith(LFS_POINTER) and ".onnx" in path.name


LIMITS = (  # the README's Limits section lists these (tested)
    "size: 2 GiB − 1 byte per protobuf (protobuf's own limit); larger weights go in external data files",
    "weights: tensors over 256 MiB are not summarised (min/max/mean), only described",
    "external data: a tensor reads exactly the bytes its dims declare (a `length` that says otherwise is refused)",
    PROTOBUF_MEMORY_LIMIT,
)

FORMATS = (
    Format(
        "onnx",
        "ONNX",
        (".onnx",),
        match,
        lazy("explorer.formats.onnx.loading", "load"),
        write_samples=lazy("explorer.formats.onnx.samples", "write_samples"),
        limits=LIMITS,
    ),
)
