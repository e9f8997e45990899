"""The loader registry: picks a loader by content sniffing (the extension only shortlists).

Each loader module exposes ``FORMAT``, ``match(path, head) -> bool`` and
``load(path, *, progress=None, strict=False) -> Document``. Third parties add loaders through the
``ir_explorer.loaders`` entry-point group, whose entries point at such a module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from explorer.errors import LoadError

# Module, and the name endings it usually has: a file is first offered to the loaders its name suggests, so
# opening it imports one loader, not all of them (each import costs start-up time).
BUILTIN_LOADERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("explorer.loaders.scheduler_ir", ("stschedule.json", ".json")),
    ("explorer.loaders.ark_model", (".json",)),
    ("explorer.loaders.ark_plan", (".json",)),
    ("explorer.loaders.tvm_mlf", (".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz")),
    ("explorer.loaders.onnx_model", (".onnx",)),
    ("explorer.loaders.coreml", (".mlmodel", ".mlpackage", ".mlmodelc")),
)
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class LoaderInfo:
    format: str
    module: ModuleType


def available_loaders() -> list[LoaderInfo]:
    modules = [importlib.import_module(name) for name, _ in BUILTIN_LOADERS]
    for entry in entry_points(group="ir_explorer.loaders"):
        try:
            modules.append(entry.load())
        except Exception:  # a broken plug-in must not stop the built-in formats from opening
            continue
    return [LoaderInfo(module.FORMAT, module) for module in modules]


def read_head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(HEAD_BYTES)


def pick_loader(path: str | Path) -> LoaderInfo:
    """The loader for `path`, or a LoadError saying why there is none."""
    path = Path(path)
    if not path.exists():
        raise LoadError(path, "", "no such file or directory")
    if path.is_dir():
        loaders = available_loaders()
        for loader in loaders:
            if getattr(loader.module, "ACCEPTS_DIRECTORIES", False) and loader.module.match(path, b""):
                return loader
        raise LoadError(path, "", "this is a directory, not a supported model or schedule file")
    try:
        head = read_head(path)
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    if not head:
        raise LoadError(path, "byte 0", "the file is empty")
    name = path.name.lower()
    for module_name, endings in BUILTIN_LOADERS:  # the likely loaders first, importing only those
        if name.endswith(endings):
            module = importlib.import_module(module_name)
            if module.match(path, head):
                return LoaderInfo(module.FORMAT, module)
    loaders = available_loaders()
    for loader in loaders:
        if loader.module.match(path, head):
            return loader
    supported = ", ".join(loader.format for loader in loaders)
    raise LoadError(path, "byte 0", f"unknown format: the content matches none of the supported formats ({supported})")
