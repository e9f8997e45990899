"""Core ML: `.mlpackage` and `.mlmodel` (ML Program, NeuralNetwork, pipeline) and compiled `.mlmodelc`
folders, read through coremltools' protobuf modules only."""

from __future__ import annotations

from pathlib import Path

from explorer.format import PROTOBUF_MEMORY_LIMIT, Format, lazy
from explorer.protobuf_sniff import looks_like_coreml


def match(path: Path, head: bytes) -> bool:
    if path.is_dir():
        return (
            (path / "Manifest.json").is_file()
            or (path / "model.mil").is_file()
            or path.suffix in (".mlpackage", ".mlmodelc")
        )
    return path.suffix.lower() == ".mlmodel" or looks_like_coreml(head)  # by content whatever the name


LIMITS = (  # the README's Limits section lists these (tested)
    "size: 2 GiB − 1 byte for the model protobuf besides the values of its layers' weights over 4 KiB (protobuf's own "
    "limit for what is parsed); those values stay in the file, whatever its size",
    "weights: tensors over 256 MiB are not summarised, only described",
    (
        "links: a package file or weights folder that a symbolic link takes outside the package (or round a "
        "loop) is not read"
    ),
    PROTOBUF_MEMORY_LIMIT,
    (
        "model.mil: refused before reading when 80× its size (what its drawn graph was measured to take) passes "
        "the memory available, and once read when 6,144 bytes a line does (a program of short lines); each "
        "line that reads as none of an op, a block or a closing brace is a `mil-unread-line` warning (100 "
        "listed, the rest counted); metadata.json over 16 MiB, or not a regular file, is a warning and the "
        "model opens without it"
    ),
)

FORMATS = (
    Format(
        "coreml",
        "Core ML",
        (".mlmodel", ".mlpackage", ".mlmodelc"),
        match,
        lazy("explorer.formats.coreml.reader", "load"),
        accepts_directories=True,
        limits=LIMITS,
        cacheable=True,
    ),
)
