"""A laid-out graph, in terminal cells: the boxes, the edges as drawn, the frames of open groups. What the
graph view, `ir-explorer graph`, the SVG and the HTML figure draw (explorer.graph.layout makes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.graph.visible import VisibleGraph


@dataclass
class Edge:
    source: int  # item
    target: int  # item
    count: int
    kind: str  # "routed", "stub" (too long), "back" (closes a cycle), "bundle" (huge fan-out)
    points: list[tuple[int, int]] = field(default_factory=list)  # orthogonal polyline, cells
    owner: bool = False  # the dotted link from an op to its closed branch or body (not a value)


@dataclass
class Layout:
    visible: VisibleGraph
    level: int
    direction: str  # "TB" or "LR"
    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    h: np.ndarray
    layer: np.ndarray
    edges: list[Edge]
    frames: dict[int, tuple[int, int, int, int]]  # open group → (x, y, w, h) around its visible members
    width: int
    height: int
    back_edges: int = 0
    labels: list[str] = field(default_factory=list)  # full names: the status line, stubs, find
    ops: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # a box's second line: its output shape, a group's kind
    titles: list[str] = field(default_factory=list)  # a box's first line: op type (and name where it adds)
    extras: list[str] = field(default_factory=list)  # a box's third line: folded weights, "" for none
    compacts: list[str] = field(default_factory=list)  # a one-line box's text
    out_stubs: dict[int, list[int]] = field(default_factory=dict)  # item → targets drawn as stubs below it
    in_stubs: dict[int, list[int]] = field(default_factory=dict)  # item → sources drawn as stubs above it
    bundles: dict[int, int] = field(default_factory=dict)  # item → how many items its bundled edge feeds
    in_bundles: dict[int, list[int]] = field(default_factory=dict)  # item → bundled sources it reads (`⇈ cos`)
    # gaps with more edges than tracks: (minor from, minor to, major of the busiest track, sources beyond the
    # cap), absolute cells across/along the layers (x/y in TB, y/x in LR)
    shared_tracks: list[tuple[int, int, int, int]] = field(default_factory=list)
    back_sources: set[int] = field(default_factory=set)  # items with an edge that closes a cycle
    frame_labels: dict[int, str] = field(default_factory=dict)  # open group → its label
    unit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # items that are closed unit groups
    laid_out: int = 0  # containers laid out by this call (the others came from the cache)
    first_item: int = -1  # where reading starts: the item showing the model's first input (reading_start)
    # per container: its long edges' dummies and ports (Placement.chains) and its elements' keys, so a group opened
    # next keeps the edges above it where they were
    chains: dict[int, tuple[dict[tuple, list[int]], list[tuple[int, int]]]] = field(default_factory=dict)
    # per item: the earliest topological rank in the model of the nodes it shows (the containers' order ties,
    # and the reading order at a fork: explorer.graph.walk)
    model_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def item_at(self, cx: int, cy: int) -> int:
        """The item whose box holds the cell (cx, cy), or -1."""
        inside = (self.x <= cx) & (cx < self.x + self.w) & (self.y <= cy) & (cy < self.y + self.h)
        hits = np.flatnonzero(inside)
        return int(hits[0]) if hits.size else -1


KIND_NAMES = ("routed", "stub", "back", "bundle")
