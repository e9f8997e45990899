"""The views beside the tree, and the capability each needs: the app builds its tabs, view keys, help and
command palette from this table and from what the loaded document offers, so a view a document lacks is
never shown and its key is not bound."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from explorer.document import Capability, Document


@dataclass(frozen=True, slots=True)
class ViewSpec:
    name: str  # widget id and tab id suffix
    capability: Capability
    key: str  # the view's number key: fixed per view, so muscle memory holds across formats
    title: str
    about: str  # one line for the palette and the help
    widget: str  # "module:Class", imported off the UI thread (`import_widgets`)
    short: str = ""  # the title when the tab row is narrower than the full titles (80 columns)

    def widget_class(self) -> Any:
        module_name, class_name = self.widget.split(":")
        return getattr(importlib.import_module(module_name), class_name)

    def make(self) -> Any:
        return self.widget_class()(id=self.name)

    def import_widget(self) -> None:
        importlib.import_module(self.widget.split(":")[0])


# Graphs up to this many nodes are built when the graph view is first shown (at most about 0.2 s); bigger ones
# in a background worker once the file is on screen (the graph view, shown first, builds in a thread and waits).
SYNC_GRAPH_NODES = 20_000

TREE = ViewSpec("tree", Capability.TREE, "1", "Tree", "the document tree", "widgets.doc_tree:DocumentTree")
VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("timeline", Capability.TIMELINE, "2", "Timeline", "{block}s per {lane} on a time axis",
             "widgets.schedule.timeline:Timeline", "Time"),
    ViewSpec("buffers", Capability.BUFFERS, "3", "Buffers", "{memory} occupancy before each {block}, animated",
             "widgets.schedule.buffer_view:BufferView", "Buf"),
    ViewSpec("layout", Capability.LAYOUT, "4", "Layout", "how a strided tensor sits in its buffer",
             "widgets.tensors.stride_map:StrideMap", "Lay"),
    ViewSpec("source", Capability.SOURCE, "5", "Source", "source files with syntax highlighting",
             "widgets.source_view:SourceView", "Src"),
    ViewSpec("graph", Capability.GRAPH, "6", "Graph", "the model as a graph, expandable by group",
             "widgets.graph.view:GraphView"),
    ViewSpec("memory", Capability.BUFFERS, "7", "Memory", "the memory map: {memory} over time, a band per tensor",
             "widgets.schedule.memory_map:MemoryMapView", "Mem"),
    ViewSpec("mesh", Capability.MESH, "8", "Mesh", "every {lane} on its mesh at the time cursor",
             "widgets.schedule.mesh:MeshView"),
)  # fmt: skip
ALL_VIEWS = (TREE, *VIEWS)


def offered_views(document: Document) -> tuple[ViewSpec, ...]:
    """The views beside the tree that this document offers, in key order."""
    return tuple(spec for spec in VIEWS if document.offers(spec.capability))


def import_widgets(views: tuple[ViewSpec, ...]) -> None:
    """The views' modules, imported (in a thread: numpy and the views' own modules would hold the UI thread)."""
    for spec in views:
        spec.import_widget()


def spec_named(name: str) -> ViewSpec | None:
    return next((spec for spec in ALL_VIEWS if spec.name == name), None)
