"""ONNX models (`.onnx`): graphs with subgraphs, local functions and external data read on demand."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback
from explorer.format import Format

LFS_POINTER = b"version https://git-lfs.github.com/spec"


def match(path: Path, head: bytes) -> bool:
    return path.suffix.lower() in (".onnx", ".onnxtxt") or head.startswith(LFS_POINTER) and ".onnx" in path.name


def load(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.onnx.reader import load as read

    return read(path, progress=progress, strict=strict)


def write_samples(folder: Path) -> list[Path]:
    from explorer.formats.onnx.samples import write_samples as write

    return write(folder)


FORMATS = (Format("onnx", "ONNX", (".onnx",), match, load, write_samples=write_samples),)
