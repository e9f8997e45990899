"""The Document: the one in-memory form that every view (TUI, CLI, export) reads, whatever the format.

Format-specific data hangs off it (``schedule`` for the scheduler IR); the tree and the details are uniform
so that one tree widget and one details panel serve every format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.errors import Problem

# progress(done, total, stage): loaders call it now and then; the TUI turns it into a progress bar.
ProgressCallback = Callable[[float, float, str], None]


def no_progress(done: float, total: float, stage: str) -> None:
    """The default progress callback: headless callers do not need one."""


@dataclass(slots=True)
class Item:
    """A node of the uniform tree. Children are either given or produced on demand by `expand`.

    Lazy children keep huge schedules cheap: a 10^6-entry file must not build 10^6 items up front.
    `ref` is an opaque key that the document's `describe` understands (and that problems point at).
    """

    kind: str
    label: str
    ref: Any = None
    children: list[Item] | None = None
    expand: Callable[[], list[Item]] | None = None

    @property
    def has_children(self) -> bool:
        return bool(self.children) or self.expand is not None

    def get_children(self) -> list[Item]:
        if self.children is None:
            self.children = self.expand() if self.expand else []
            self.expand = None
        return self.children


@dataclass(slots=True)
class Section:
    """One table of the details panel: a title, column names and rows of plain values."""

    title: str
    columns: Sequence[str]
    rows: list[Sequence[Any]]


@dataclass(slots=True)
class Meta:
    format: str
    source: Path
    producer: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Document:
    """Everything a loader produced plus what the analyses added (problems, summary, timeline...)."""

    meta: Meta
    tree: Item
    problems: list[Problem] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    graph: Any = None  # networkx.DiGraph for graph formats
    schedule: Any = None  # explorer.schedule.Schedule for the scheduler IR
    analysis: dict[str, Any] = field(default_factory=dict)
    describe: Callable[[Any], list[Section]] = field(default=lambda ref: [])
    find_ref: Callable[[dict[str, Any]], Any] = field(default=lambda refs: None)
    search: Callable[[str], list[tuple[str, Any]]] = field(default=lambda text: [])
    # refs from the top of the tree down to a ref, so a view can open its way there
    ancestors: Callable[[Any], list[Any]] = field(default=lambda ref: [ref])
    # the tensor id an item shows, for formats with a tensor layout view (ARK); None elsewhere
    tensor_of: Callable[[Any], Any] = field(default=lambda ref: None)
    # one line for the summary bar when the summary's counts do not say it well (e.g. TVM's nested modules)
    headline: str = ""
    # where an item's data comes from and goes to: (label, ref) pairs the details panel can jump to (key g)
    links: Callable[[Any], list[tuple[str, Any]]] = field(default=lambda ref: [])
    # Checks that cost more than reading the file (ONNX shape inference): `check` and the TUI run them once,
    # `info` does not. Returns the problems they found.
    deep_checks: Callable[[], list[Problem]] = field(default=lambda: [])

    def run_deep_checks(self) -> None:
        self.problems = self.problems + self.deep_checks()
        self.deep_checks = lambda: []


CHUNK = 500  # children per tree group: a node with 10^5 children must still open instantly


def chunked_items(
    start: int, stop: int, make_item: Callable[[int], Item], word: str, chunk_ref: Callable[[int], Any]
) -> list[Item]:
    """Items for indices start..stop-1, grouped in lazily built chunks of CHUNK when there are more.

    Labels count from `start` ("workloads 0–499"); `chunk_ref(lo)` is the ref of the chunk starting at `lo`.
    """
    if stop - start <= CHUNK:
        return [make_item(i) for i in range(start, stop)]
    return [
        Item(
            "chunk",
            f"{word} {lo - start}–{min(lo + CHUNK, stop) - 1 - start}",
            chunk_ref(lo),
            expand=lambda lo=lo: [make_item(i) for i in range(lo, min(lo + CHUNK, stop))],
        )
        for lo in range(start, stop, CHUNK)
    ]


def chunk_start(index: int, start: int = 0) -> int:
    """The first index of the chunk holding `index` (see chunked_items)."""
    return start + (index - start) // CHUNK * CHUNK


def describe_by_kind(view: Any, ref: Any) -> list[Section]:
    """The details of `ref` from the view's `_describe_<kind>` method (kind = ref[0], `-` read as `_`).

    A kept record can still hold junk that the loader's fast path never read; instead of failing the panel,
    such a record is described as unreadable, with the reason.
    """
    if not isinstance(ref, tuple) or not ref:
        return []
    method = getattr(view, "_describe_" + str(ref[0]).replace("-", "_"), None)
    if method is None:
        return []
    try:
        return method(*ref[1:])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, StopIteration) as error:
        return [Section("Unreadable", ("problem",), [(f"{type(error).__name__}: {error}",)])]


def attach_view(document: Document, view: Any) -> Document:
    """Wire a format's view into its document: the callables every front end uses, and the way back."""
    view.document = document
    document.describe = view.describe
    document.find_ref = view.find_ref
    document.search = view.search
    document.ancestors = view.ancestors
    if hasattr(view, "links"):
        document.links = view.links
    return document
