"""ONNX models (`.onnx`): graphs with subgraphs, local functions and external data read on demand."""

from __future__ import annotations

from pathlib import Path

from explorer.format import PROTOBUF_MEMORY_LIMIT, Format, lazy
from explorer.protobuf_sniff import looks_like_onnx

LFS_POINTER = b"version https://git-lfs.github.com/spec"


def match(path: Path, head: bytes) -> bool:
    """By its ending, or by its content whatever its name (`model.pb`): a protobuf whose first fields are a
    ModelProto's."""
    if path.suffix.lower() in (".onnx", ".onnxtxt") or head.startswith(LFS_POINTER) and ".onnx" in path.name:
        return True
    return not path.is_dir() and looks_like_onnx(head)


LIMITS = (  # the README's Limits section lists these (tested)
    "size: 2 GiB − 1 byte for the model besides the bytes of its tensors over 4 KiB (protobuf's own limit for what is "
    "parsed); those bytes stay in the file, whatever its size",
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
        cacheable=True,
    ),
)
