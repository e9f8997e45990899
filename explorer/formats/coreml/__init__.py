"""Core ML: `.mlpackage` and `.mlmodel` (ML Program, NeuralNetwork, pipeline) and compiled `.mlmodelc`
folders, read through coremltools' protobuf modules only."""

from __future__ import annotations

from pathlib import Path

from explorer.document import Document, ProgressCallback
from explorer.format import Format


def match(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return (
            (path / "Manifest.json").is_file()
            or (path / "model.mil").is_file()
            or path.suffix in (".mlpackage", ".mlmodelc")
        )
    return path.suffix.lower() == ".mlmodel"


def load(path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.formats.coreml.reader import load as read

    return read(path, progress=progress, strict=strict)


FORMATS = (Format("coreml", "Core ML", (".mlmodel", ".mlpackage", ".mlmodelc"), match, load, accepts_directories=True),)
