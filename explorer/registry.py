"""The format registry: picks a format by content sniffing (the extension only shortlists).

Built-in formats are the packages in BUILTIN_FORMATS (adding one is one line here); third parties add theirs
through the ``ir_explorer.formats`` entry-point group, whose entries point at a module exposing ``FORMATS``.
A plug-in that fails to load is remembered with the reason, reported by `--version` and `info`, and never
stops the built-in formats from opening.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from explorer.errors import LoadError
from explorer.format import Format

BUILTIN_FORMATS: tuple[str, ...] = (
    "explorer.formats.scheduler_ir",
    "explorer.formats.ark",
    "explorer.formats.tvm_mlf",
    "explorer.formats.onnx",
    "explorer.formats.coreml",
    "explorer.formats.gemini_trace",
    "explorer.formats.gemini_frontend",
)
ENTRY_POINT_GROUP = "ir_explorer.formats"
HEAD_BYTES = 64 * 1024


@dataclass
class Registry:
    formats: list[Format] = field(default_factory=list)
    plugin_failures: list[str] = field(default_factory=list)  # "plug-in X failed to load: why"


def _formats_of(module_name: str) -> tuple[Format, ...]:
    return tuple(importlib.import_module(module_name).FORMATS)


@cache
def builtin_formats() -> tuple[Format, ...]:
    return tuple(f for name in BUILTIN_FORMATS for f in _formats_of(name))


@cache
def registry() -> Registry:
    """Every format: the built-in ones, then the plug-ins' (a broken plug-in is listed, not fatal)."""
    found = Registry(list(builtin_formats()))
    if not _plugins_declared():
        return found
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            formats = entry.load().FORMATS
            if not all(isinstance(f, Format) for f in formats):
                raise TypeError("FORMATS must be a tuple of explorer.format.Format")
        except Exception as error:  # any failure of third-party code is reported, never raised
            found.plugin_failures.append(f"plug-in {entry.name} failed to load: {type(error).__name__}: {error}")
            continue
        found.formats.extend(formats)
    return found


def _plugins_declared() -> bool:
    """Whether an installed distribution on the path declares the entry-point group: importing
    importlib.metadata costs 30 ms of every command's start (`--version` lists the formats), and almost no
    machine has a plug-in. A false alarm only costs the import; a distribution found another way than a
    `*.dist-info` or `*.egg-info` folder on the path is not seen (importlib.metadata finds those the same way)."""
    header = f"[{ENTRY_POINT_GROUP}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    text = Path(entry.path, "entry_points.txt").read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if header in text:
                    return True
    return False


def read_head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(HEAD_BYTES)


def pick_format(path: str | Path) -> Format:
    """The format of `path`, or a LoadError saying why there is none."""
    path = Path(path)
    if not path.exists():
        raise LoadError(path, "", "no such file or directory")
    if path.is_dir():
        folders = [f for f in registry().formats if f.accepts_directories]
        named = [f for f in folders if path.name.lower().endswith(f.endings)]  # `x.mlmodelc`: Core ML's first
        for candidate in [*named, *(f for f in folders if f not in named)]:
            if candidate.match(path, b""):
                return candidate
        raise LoadError(path, "", "this is a directory, not a supported model or schedule file")
    if not path.is_file():  # checked with stat, before any open: opening a FIFO would wait for a writer forever
        raise LoadError(path, "", "not a regular file (a pipe, a device or a socket): give a file or a folder")
    try:
        head = read_head(path)
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    if not head:
        raise LoadError(path, "byte 0", "the file is empty")
    name = path.name.lower()
    for candidate in builtin_formats():  # the likely formats first, without looking at plug-ins
        if name.endswith(candidate.endings) and candidate.match(path, head):
            return candidate
    formats = registry().formats
    for candidate in formats:
        if candidate.match(path, head):
            return candidate
    supported = ", ".join(f.name for f in formats)
    raise LoadError(path, "byte 0", f"unknown format: the content matches none of the supported formats ({supported})")
