"""What a format declares to the registry: its name, how it recognises a file and how it loads one.

A format package (`explorer/formats/<name>/`, or a third party's package) exposes ``FORMATS``, a tuple of
`Format`s; `explorer.registry` lists the built-in packages and reads plug-ins from the
``ir_explorer.formats`` entry-point group. Recognising must be cheap (it runs on every file opened), so a
package's ``__init__`` keeps `match` light and imports its reader inside `load`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: listing the formats (`--version`) imports no reader, numpy nor Document
    from explorer.document import Document, ProgressCallback


class Loader(Protocol):
    def __call__(self, path: Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document: ...


@dataclass(frozen=True, slots=True)
class Format:
    """One file format the explorer can open."""

    name: str  # stable id, printed by `info` as "format": "scheduler-ir"
    title: str  # what people call it: "Gemini scheduler IR"
    endings: tuple[str, ...]  # name endings that shortlist it, so opening a file imports only likely readers
    match: Callable[[Path, bytes], bool]  # (path, first 64 KiB) -> is it mine? content sniffing
    load: Loader  # read the file into a Document; raises explorer.errors.LoadError only
    accepts_directories: bool = False  # .mlpackage folders, extracted MLF bundles
    write_samples: Callable[[Path], list[Path]] | None = None  # demo files for sample_data/ (make samples)
    limits: tuple[str, ...] = ()  # the ceilings past which a file is refused or cut, one sentence each (README)
    # First parts of a big file, shown by the TUI while `load` reads the whole, each more than the one before
    # (None, or nothing yielded: nothing early to show)
    preview: Callable[[Path], Iterable[Document]] | None = None
    # Called as soon as the file is named, before anything heavy is imported: a chance to start slow work (such
    # as worker processes) early. (path, interactive: the TUI will show it) -> None
    prepare: Callable[[Path, bool], None] | None = None
    # Whether its analysed documents may be kept for the next open (explorer.cache): only a format whose
    # document pickles whole and small beside what reading the file costs (its arrays are kept as they are)
    cacheable: bool = False


# The limit every JSON format shares (msgspec decodes recursively), said once for their LIMITS.
JSON_MEMORY_LIMIT = (
    "memory: refused before decoding when what the JSON can become (its size plus 72 bytes for each value and "
    "what the reader builds of each object, counted before decoding) passes the memory available "
    "(`IR_EXPLORER_MEMORY_GUARD=off` overrides)"
)
PROTOBUF_MEMORY_LIMIT = (
    "memory: refused before parsing when its messages at 200 bytes each (counted on the wire, only when even a "
    "message every 2 bytes might not fit) pass the memory available"
)
JSON_NESTING_LIMIT = (
    "nesting: about 1,000 levels of JSON arrays and objects (the interpreter's recursion limit); deeper is "
    'refused as "nested too deeply"'
)


def lazy(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported on the first call: a format's `__init__` declares its loader without importing
    the reader (numpy, protobuf...), so recognising a file stays cheap."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module}.{name}, imported when first called."
    return call
