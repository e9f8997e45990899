"""Compound layered layout of what is visible of a GraphModel, in terminal cells: the graph view,
`ir-explorer graph`, the SVG screenshot and the HTML figure all draw this.

Only what is visible is laid out: a collapsed group is one box, constants fold into their consumers, and
groups with many members were already split into chunks by the model. Each open group is laid out on its own
(explorer.graph.layered) and placed as one framed box in its parent, the way Model Explorer lays out
expanded layers: frames never overlap other boxes, and opening a group lays out that group and its ancestors
while every other open group keeps its placement (cached by the caller). Edges between groups are drawn
piece by piece through ports on the frames; edges against the order (cycles), over more than MAX_SPAN layers
or out of a huge fan-out are drawn as labelled stubs instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.arrays import distinct
from explorer.graph.layered import MAX_SPAN, Gaps, Placement, place_container
from explorer.graph.layering import order_and_layers
from explorer.graph.picture import KIND_NAMES, Edge, Layout
from explorer.graph.problems import mark_of
from explorer.graph.relayout import Before, item_keys, keeps, keeps_rows
from explorer.graph.routing import Connection, simplify
from explorer.graph.shaping import reading_start
from explorer.graph.text import shape_text, title, usual_dtype, weights_text
from explorer.graph.visible import VisibleGraph
from explorer.models.graph import ROOT, GraphModel, count_nodes, topological_rank

FANOUT = 24  # an item feeding more visible items than this draws one bundled stub with the count
FULL, COMPACT, DOTS = 0, 1, 2
LEVEL_NAMES = ("full", "compact", "dots")
# per level: box height, minor gap (between boxes of a layer), major gap (between layers), width bounds
_LEVELS = {FULL: (4, 2, 3, 10, 30), COMPACT: (1, 1, 1, 5, 18), DOTS: (1, 1, 1, 1, 1)}


@dataclass
class ItemTexts:
    labels: list[str]
    ops: list[str]
    titles: list[str]
    details: list[str]
    extras: list[str]
    compacts: list[str]  # a one-line box: the op type of a node, the label of a group
    floors: list[int] = field(default_factory=list)  # the least width of a full box: its op type is never cut


def group_title(model: GraphModel, group: int) -> str:
    """A group's name, with the class of the module it is when the file says (`layers.7 · LlamaDecoderLayer`)."""
    label = model.group_label[group]
    detail = model.group_detail[group] if group < len(model.group_detail) else ""
    if detail and model.group_kind[group] == "stack":  # `layers.0–79 × 80 LlamaDecoderLayer`
        return f"{label} {detail}"
    return f"{label} · {detail}" if detail and model.group_kind[group] == "scope" else label


def compact_group_label(model: GraphModel, group: int) -> str:
    """A group's one-line box: its name, and a stack's `× N` (`h.0–11 × 12`), without the module's class."""
    label = model.group_label[group]
    detail = model.group_detail[group] if group < len(model.group_detail) else ""
    if model.group_kind[group] == "stack" and detail.startswith("×"):
        return f"{label} {' '.join(detail.split()[:2])}"
    return label


def item_texts(model: GraphModel, visible: VisibleGraph) -> ItemTexts:
    """Per item: its name, op type (groups: "▸ N nodes"), and the three lines its box shows (graph_text)."""
    sizes = count_nodes(model, drawn_only=True) if model.n_groups else np.zeros(0, dtype=np.int64)
    usual = usual_dtype(model)
    texts = ItemTexts([], [], [], [], [], [])
    for kind, ident, folded in zip(
        visible.item_kind.tolist(), visible.item_id.tolist(), visible.folded.tolist(), strict=True
    ):
        mark = mark_of(model, kind, ident)  # ✗/⚠: the worst problem in the box (empty until marked)
        if kind == 1 and model.group_unit[ident]:  # drawn as the node it stands for
            label, op = model.group_label[ident], model.group_op[ident]
            texts.labels.append(label)
            texts.ops.append(op)
            texts.titles.append(mark + label)
            texts.floors.append(0)
            texts.details.append(f"{op} {model.group_detail[ident]}".strip())
            texts.extras.append("")
            texts.compacts.append(label)
        elif kind == 1:
            texts.labels.append(model.group_label[ident])
            held = int(sizes[ident])
            texts.ops.append(f"▸ {held:,} node{'' if held == 1 else 's'}")
            texts.titles.append(mark + group_title(model, ident))
            texts.floors.append(0)
            texts.details.append(texts.ops[-1])
            texts.extras.append("")
            texts.compacts.append(compact_group_label(model, ident))
        else:
            label, op = model.node_label[ident], model.node_op[ident]
            texts.labels.append(label)
            texts.ops.append(op)
            texts.titles.append(mark + title(op, label))
            texts.floors.append(len(mark) + len(op) + 4)
            texts.details.append(shape_text(model.node_detail[ident], usual))
            texts.extras.append(weights_text(model, ident, usual) if folded else "")
            # a one-line box says the op type; an input's or output's says its name (`input` thrice told nothing)
            texts.compacts.append(mark + (label if op in ("input", "output") and label else op or label))
    return texts


def box_sizes(texts: ItemTexts, level: int) -> tuple[np.ndarray, np.ndarray]:
    """Cells per box: full boxes fit their lines (a third line for folded weights), compact ones the op type."""
    height, _, _, low, high = _LEVELS[level]
    n = len(texts.titles)
    if level == DOTS:
        return np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    if level == COMPACT:
        widths = [len(text) + 2 for text in texts.compacts]
        heights = [height] * n
    else:
        widths = [max(len(a), len(b), len(c)) + 4 for a, b, c in zip(texts.titles, texts.details, texts.extras,
                                                                      strict=True)]  # fmt: skip
        # the title, then a line for the shape and one for folded weights where there is one; none for a shape
        # nobody knows (a Core ML network's layers, an ONNX file without shape inference): an empty line made
        # every such box a third taller than what it says
        heights = [height - 1 + bool(b) + bool(c) for b, c in zip(texts.details, texts.extras, strict=True)]
    w = np.clip(np.asarray(widths, dtype=np.int64), low, high) if widths else np.zeros(0, dtype=np.int64)
    if level != COMPACT and texts.floors:  # a node's op type is never cut: its box grows to hold a long one
        w = np.maximum(w, np.asarray(texts.floors, dtype=np.int64))
    return w, np.asarray(heights, dtype=np.int64)


ROUTED, STUB, BACK, BUNDLE = 0, 1, 2, 3


@dataclass
class Containers:
    """The open groups that hold something visible, as a tree under the top level (ROOT), and what each holds:
    its items (nodes and closed groups) first, then its open child groups, numbered from 0 in each container."""

    item_container: np.ndarray  # per item: the open group it sits in directly, or ROOT
    order: list[int]  # containers, parents before children (ROOT first)
    parent: dict[int, int]
    items: dict[int, np.ndarray]  # container → its items
    children: dict[int, list[int]]  # container → its open child groups
    item_local: np.ndarray  # per item: its element number in its container
    container_local: dict[int, int]  # open group → its element number in its parent

    def element_count(self, c: int) -> int:
        return int(self.items[c].size) + len(self.children[c])

    def path(self, item: int, top: int) -> list[tuple[int, int]]:
        """(container, element) from the item's own container up to `top`: how the item is seen at each level."""
        c = int(self.item_container[item])
        steps = [(c, int(self.item_local[item]))]
        while c != top:
            element = self.container_local[c]
            c = self.parent[c]
            steps.append((c, element))
        return steps


def containers_of(model: GraphModel, visible: VisibleGraph) -> Containers:
    m = visible.n_items
    item_container = np.full(m, ROOT, dtype=np.int64)
    nodes = visible.item_kind == 0
    item_container[nodes] = model.node_group[visible.item_id[nodes]]
    item_container[~nodes] = model.group_parent[visible.item_id[~nodes]]
    parent: dict[int, int] = {}
    for c in distinct(item_container).tolist():
        while c != ROOT and c not in parent:  # every ancestor of a container is open and holds it
            parent[c] = int(model.group_parent[c])
            c = parent[c]
    depth = model.group_depth() if model.n_groups else np.zeros(0, dtype=np.int64)
    order = [ROOT, *sorted(parent, key=lambda g: (int(depth[g]), g))]
    by_container = np.argsort(item_container, kind="stable")
    sorted_containers = item_container[by_container]
    bounds = np.searchsorted(sorted_containers, order, side="left"), np.searchsorted(sorted_containers, order, "right")
    items = {c: by_container[lo:hi] for c, lo, hi in zip(order, bounds[0].tolist(), bounds[1].tolist(), strict=True)}
    item_local = np.zeros(m, dtype=np.int64)
    for members in items.values():
        item_local[members] = np.arange(members.size)
    children: dict[int, list[int]] = {c: [] for c in order}
    container_local: dict[int, int] = {}
    for g in order[1:]:
        siblings = children[parent[g]]
        container_local[g] = int(items[parent[g]].size) + len(siblings)
        siblings.append(g)
    return Containers(item_container, order, parent, items, children, item_local, container_local)


def layout_graph(
    model: GraphModel,
    visible: VisibleGraph,
    level: int = FULL,
    direction: str = "TB",
    cache: dict | None = None,
    previous: Layout | None = None,
) -> Layout:
    """Lay out what is visible: every open group on its own (bottom up), placed as one box in its parent.

    `cache` (kept by the caller between calls) holds each container's placement under a key made of
    everything it depends on, so opening a group lays out that group and its ancestors, nothing else.
    `previous` (the layout on screen before a group opened or closed) gives every box that was already there its
    old place across the layers as the one wanted, so what is outside the group stays where it was."""
    cache = {} if cache is None else cache
    texts = item_texts(model, visible)
    w, h = box_sizes(texts, level)
    m = visible.n_items
    tb = direction == "TB"
    _, minor_gap, major_gap, _, _ = _LEVELS[level]
    gaps = Gaps(minor_gap, major_gap if tb else major_gap + 2)  # LR: room for the jogs between columns
    item_minor, item_major = (w, h) if tb else (h, w)
    src, dst = visible.edge_src, visible.edge_dst
    order = _item_order(model, visible)
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    kind = np.full(src.size, ROUTED, dtype=np.int64)
    out_degree = np.bincount(src, minlength=m) if m else np.zeros(0, dtype=np.int64)
    kind[out_degree[src] > FANOUT] = BUNDLE
    # against the drawn order: on a cyclic model an edge that closes a cycle; on an acyclic one, an edge that
    # only runs back because a closed group holds nodes from before and after its other end (a stub)
    kind[position[src] > position[dst]] = BACK if model.cyclic else STUB
    tree = containers_of(model, visible)
    # ties in each container's order broken by the model's own order, not by the drawn order of everything:
    # that one changes when any other group opens, and a container whose content did not change must be placed
    # as it was (the cache finds it, nothing in it moves)
    model_rank = _model_rank(model, visible)
    first = _first_positions(tree, model_rank)
    # every drawn edge belongs to the innermost container that holds both ends; a bundled edge is drawn as one
    # stub with a count, but still layers its target below its source (so nothing points up)
    edges_in: dict[int, list[tuple[int, int, int]]] = {c: [] for c in tree.order}  # (edge, element, element)
    paths: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
    for e in np.flatnonzero((kind == ROUTED) | (kind == BUNDLE)).tolist():
        a, b = int(src[e]), int(dst[e])
        ca, cb = int(tree.item_container[a]), int(tree.item_container[b])
        if ca == cb:
            edges_in[ca].append((e, int(tree.item_local[a]), int(tree.item_local[b])))
            continue
        top = _common_container(tree, ca, cb)
        up, down = tree.path(a, top), tree.path(b, top)
        paths[e] = (up, down)
        edges_in[top].append((e, up[-1][1], down[-1][1]))
    # per container: layers of its elements; edges over too many layers, or against the order of the
    # container's own elements (a cycle through a closed group), become stubs
    layering: dict[int, tuple[np.ndarray, np.ndarray, bytes]] = {}
    gridded: set[int] = set()  # containers laid out as a grid of lanes (`_lane_layers`)
    box = (float(np.median(item_minor)), float(np.median(item_major))) if m else (0.0, 0.0)  # a grid's cell
    for c in tree.order:
        n = tree.element_count(c)
        inside = edges_in[c]
        pair_src = np.asarray([x[1] for x in inside], dtype=np.int64)
        pair_dst = np.asarray([x[2] for x in inside], dtype=np.int64)
        codes, inverse = np.unique(pair_src * max(n, 1) + pair_dst, return_inverse=True)
        u, v = codes // max(n, 1), codes % max(n, 1)
        base = np.concatenate([model_rank[tree.items[c]], [first[g] for g in tree.children[c]]]).astype(np.int64)
        local_position, layer, back = order_and_layers(n, u, v, base)
        grid = _lane_layers(model, visible, tree, c, layer, box, tb)
        if grid is not None:  # one band of rows per lane (a schedule layer's cores); edges not running down: stubs
            layer, lane_position = grid
            if lane_position is not None:
                local_position = lane_position
                gridded.add(c)
            back = layer[v] <= layer[u]
        span = np.abs(layer[v] - layer[u])
        stub = back | (span > MAX_SPAN) | (c in gridded)  # a grid's rows are not steps: edges in it are stubs
        if stub.any():
            edge_ids = np.asarray([x[0] for x in inside], dtype=np.int64)
            turned = edge_ids[stub[inverse]]
            kind[turned[kind[turned] == ROUTED]] = STUB  # a bundle stays a bundle, however far it reaches
        layering[c] = (local_position, layer, codes[~stub].tobytes())
    # an edge that would run through more than MAX_SPAN layers inside a group, from its box to the frame's
    # border or back, is a stub too: a long line across a frame says less than a label at each end
    deepest = {c: int(layering[c][1].max()) if layering[c][1].size else 0 for c in tree.order}
    for e, (up, down) in paths.items():
        if kind[e] != ROUTED:
            continue
        out_spans = (deepest[c] + 1 - int(layering[c][1][element]) for c, element in up[:-1])
        in_spans = (int(layering[c][1][element]) + 1 for c, element in down[:-1])
        # a grid's boxes below its first row are fed, and above its last row feed, through stubs: a line down
        # past the rows above would push each row aside (a staircase)
        into_grid = any(c in gridded and int(layering[c][1][element]) > 0 for c, element in down[:-1])
        out_of_grid = any(c in gridded and int(layering[c][1][element]) < deepest[c] for c, element in up[:-1])
        if max(out_spans, default=0) > MAX_SPAN or max(in_spans, default=0) > MAX_SPAN or into_grid or out_of_grid:
            kind[e] = STUB
    # the pieces each routed edge is drawn in: up through exit ports, across, down through entry ports
    connections: dict[int, set[Connection]] = {c: set() for c in tree.order}
    entries = _EntryPorts(tree)
    pieces: dict[int, list[tuple[int, Connection]]] = {}
    for c in tree.order:
        for e, ea, eb in edges_in[c]:
            if kind[e] != ROUTED:
                continue
            if e not in paths:
                piece = Connection(ea, -1, eb, -1)
                connections[c].add(piece)
                pieces[e] = [(c, piece)]
                continue
            up, down = paths[e]
            source = int(src[e])
            drawn = []
            for k, (container, element) in enumerate(up[:-1]):
                drawn.append((container, Connection(element, up[k - 1][1] if k else -1, -element - 1, -1)))
            from_port = up[-2][1] if len(up) > 1 else -1  # the element inside the child group it leaves
            to_port = entries.port(*down[-2], source) if len(down) > 1 else -1
            drawn.append((c, Connection(ea, from_port, eb, to_port)))
            for k in range(len(down) - 2, -1, -1):
                container, element = down[k]
                inner = entries.port(*down[k - 1], source) if k else -1
                drawn.append((container, Connection(-entries.port(container, element, source) - 1, -1, element, inner)))
            for container, piece in drawn:
                connections[container].add(piece)
            pieces[e] = drawn
    # bottom up: each container laid out (or found in the cache) with its open children as boxes
    placements: dict[int, Placement] = {}
    laid_out = 0
    before = Before(previous, tb, level, direction)
    shifts: dict[int, float | None] = {}  # per container: how far its content moved inside its box since `previous`
    element_keys_of: dict[int, list[tuple[int, int]]] = {}
    for c in reversed(tree.order):
        members = tree.items[c]
        kids = tree.children[c]
        minor_size = np.concatenate([item_minor[members], [placements[g].minor_size for g in kids]]).astype(np.int64)
        major_size = np.concatenate([item_major[members], [placements[g].major_size for g in kids]]).astype(np.int64)
        local_position, layer, routed_pairs = layering[c]
        port_cells = {tree.container_local[g]: (placements[g].entry_ports, placements[g].exit_ports) for g in kids}
        pieces_here = sorted(connections[c])
        framed = c != ROOT
        min_minor = min(len(model.group_label[c]), 30) + 8 if framed and tb else 0
        entry_cells = before.entry_cells(c, entries.sources(c, visible)) if before.just_opened(c) else None
        key = (c, level, direction, visible.item_kind[members].tobytes(), visible.item_id[members].tobytes(),
               minor_size.tobytes(), major_size.tobytes(), local_position.tobytes(), layer.tobytes(), routed_pairs,
               tuple(pieces_here), tuple(sorted((k, tuple(sorted(a.items())), tuple(sorted(b.items())))
                                               for k, (a, b) in port_cells.items())),
               tuple(sorted(entry_cells.items())) if entry_cells else ())  # fmt: skip
        element_keys = element_keys_of[c] = [*item_keys(visible, members), *((1, g) for g in kids)]
        wanted, centres = before.wanted(c, element_keys, minor_size, [shifts.get(g) for g in kids], members.size)
        wanted_chains = before.wanted_chains(c, element_keys) if wanted is not None else None
        rows, changed = before.wanted_rows(c, element_keys, major_size)
        found = cache.get(key)
        if found is not None and not keeps(found, wanted, wanted_chains):  # reached from another picture
            found = None
        if found is not None and not keeps_rows(found, layer, rows, changed):
            found = None
        if found is None:
            found = place_container(minor_size, major_size, layer, local_position, pieces_here, port_cells, gaps,
                                    framed, min_minor, wanted, wanted_chains, centres, entry_cells,
                                    rows, changed)  # fmt: skip
            laid_out += 1
            if len(cache) > 4096:
                cache.clear()
            cache[key] = found
        placements[c] = found
        shifts[c] = before.shift(c, element_keys, found.minor)
    result = _assemble(model, visible, tree, placements, kind, pieces, texts, w, h, level, direction, laid_out)
    result.chains = {c: (placements[c].chains, keys) for c, keys in element_keys_of.items()}
    start = reading_start(model)
    result.model_rank = model_rank
    result.first_item = int(visible.node_item[start]) if start >= 0 and visible.node_item[start] >= 0 else -1
    if result.first_item < 0 and m:
        result.first_item = int(order[0])
    return result


LANES_IN_BANDS = 4  # up to this many lanes of one row each are stacked; more are laid out as a grid
PANEL_ASPECT = 2.5  # a graph panel's width ÷ height in cells (160×48 and 80×24 terminals alike): the grid's aim


def _lane_layers(
    model: GraphModel, visible: VisibleGraph, tree: Containers, c: int, layer: np.ndarray,
    box: tuple[float, float], tb: bool,
) -> tuple[np.ndarray, np.ndarray | None] | None:  # fmt: skip
    """For a container whose members are all nodes on two or more lanes (an opened schedule layer's workloads on
    their cores): layers stacked by lane, each lane a band keeping its own order (one row per lane when its
    workloads do not depend on each other); None for any other container. More than LANES_IN_BANDS lanes of one
    row each (a 64-core layer: 64 rows of one box) become a grid in lane order, as many per row as makes the
    grid about as wide as a panel for its height (`box`: a box's (minor, major) size); then the elements' order
    within their rows is given too."""
    items = tree.items[c]
    if c == ROOT or not model.node_lane.size or tree.children[c] or items.size < 2:
        return None
    if (visible.item_kind[items] != 0).any():
        return None
    lanes = model.node_lane[visible.item_id[items]]
    if (lanes < 0).any():
        return None
    names = distinct(lanes)
    if names.size < 2:
        return None
    lane_index = np.searchsorted(names, lanes)
    out = np.zeros(items.size, dtype=np.int64)
    start = 0
    for k in range(names.size):
        members = np.flatnonzero(lane_index == k)
        rows = distinct(layer[members])
        out[members] = start + np.searchsorted(rows, layer[members])
        start += rows.size
    if names.size > LANES_IN_BANDS and start == names.size:  # one row per lane: a grid
        per_row = lanes_per_row(names.size, box, tb)
        return lane_index // per_row, lane_index
    return out, None


def lanes_per_row(lanes: int, box: tuple[float, float], tb: bool) -> int:
    """How many lanes' boxes side by side make a grid of `lanes` closest to PANEL_ASPECT (width ÷ height, in
    cells, gaps included: a box's (minor, major) size plus 2 across and 2 along the layers)."""
    minor, major = box[0] + 2, box[1] + 2
    per_row = np.arange(1, lanes + 1)
    rows = -(-lanes // per_row)
    across, along = per_row * minor, rows * major  # TB: across is the width; LR: along is
    aspect = across / along if tb else along / across
    return int(per_row[np.argmin(np.abs(np.log(aspect / PANEL_ASPECT)))])


class _EntryPorts:
    """Entry ports on a frame's top border: one per member and per source outside that enters it, so edges from
    different sources never share the cells where they come in (edges leave a member through one exit port: they
    share a source). A port's id is `element + k * elements` (its element is `id % elements`)."""

    def __init__(self, tree: Containers) -> None:
        self.tree = tree
        self.ids: dict[tuple[int, int, int], int] = {}
        self.count: dict[tuple[int, int], int] = {}

    def sources(self, container: int, visible: VisibleGraph) -> dict[int, tuple[int, int]]:
        """The container's entry ports and the keys ((kind, id)) of the items that feed them."""
        kinds, ids = visible.item_kind, visible.item_id
        return {port: (int(kinds[source]), int(ids[source])) for (c, _, source), port in self.ids.items()
                if c == container}  # fmt: skip

    def port(self, container: int, element: int, source: int) -> int:
        key = (container, element, source)
        found = self.ids.get(key)
        if found is None:
            k = self.count.get((container, element), 0)
            self.count[(container, element)] = k + 1
            found = self.ids[key] = element + k * self.tree.element_count(container)
        return found


def _first_positions(tree: Containers, position: np.ndarray) -> dict[int, int]:
    """Per open group: the earliest position of anything inside it (where it sits in its parent's order)."""
    first = {c: np.iinfo(np.int64).max for c in tree.order}
    for c in tree.order:
        if tree.items[c].size:
            first[c] = int(position[tree.items[c]].min())
    for c in reversed(tree.order[1:]):
        first[tree.parent[c]] = min(first[tree.parent[c]], first[c])
    return first


def _common_container(tree: Containers, a: int, b: int) -> int:
    above_a = {a}
    while a != ROOT:
        a = tree.parent[a]
        above_a.add(a)
    while b not in above_a:
        b = tree.parent[b]
    return b


def _assemble(model: GraphModel, visible: VisibleGraph, tree: Containers, placements: dict[int, Placement],
              kind: np.ndarray, pieces: dict[int, list[tuple[int, Connection]]], texts: ItemTexts, w: np.ndarray,
              h: np.ndarray, level: int, direction: str, laid_out: int) -> Layout:  # fmt: skip
    """Absolute cells: each container's placement shifted by where its box sits in its parent."""
    tb = direction == "TB"
    m = visible.n_items
    origin = {ROOT: (0, 0)}
    for c in tree.order:
        here = placements[c]
        for g in tree.children[c]:
            k = tree.container_local[g]
            origin[g] = (origin[c][0] + int(here.minor[k]), origin[c][1] + int(here.major[k]))
    minor = np.zeros(m, dtype=np.int64)
    major = np.zeros(m, dtype=np.int64)
    for c in tree.order:
        members = tree.items[c]
        minor[members] = placements[c].minor[: members.size] + origin[c][0]
        major[members] = placements[c].major[: members.size] + origin[c][1]
    x, y = (minor, major) if tb else (major, minor)
    frames = {}
    for g in tree.order[1:]:
        box = (origin[g][0], origin[g][1], placements[g].minor_size, placements[g].major_size)
        frames[g] = box if tb else (box[1], box[0], box[3], box[2])
    edges: list[Edge] = []
    src, dst, counts = visible.edge_src.tolist(), visible.edge_dst.tolist(), visible.edge_count.tolist()
    for e, edge_kind in enumerate(kind.tolist()):
        if edge_kind != ROUTED:
            edges.append(Edge(src[e], dst[e], counts[e], KIND_NAMES[edge_kind]))
            continue
        drawn = pieces[e]
        if len(drawn) == 1:  # within one container: its route, shifted
            c, piece = drawn[0]
            dx, dy = origin[c]
            points = [(a + dx, b + dy) for a, b in placements[c].routes[piece]]
        else:  # through ports: the pieces joined, and the corners where they meet straightened
            points = []
            for c, piece in drawn:
                dx, dy = origin[c]
                points += [(a + dx, b + dy) for a, b in placements[c].routes[piece]]
            points = simplify(points)
        if not tb:
            points = [(b, a) for a, b in points]
        owner = bool(visible.owner_link[e]) if visible.owner_link.size else False
        edges.append(Edge(src[e], dst[e], counts[e], "routed", points, owner))
    width = int(max((x + w).max(initial=0), max((f[0] + f[2] for f in frames.values()), default=0))) + 2
    height = int(max((y + h).max(initial=0), max((f[1] + f[3] for f in frames.values()), default=0))) + 3
    result = Layout(visible, level, direction, x, y, w, h, major.copy(), edges, frames, width, height,
                    int((kind == BACK).sum()), texts.labels, texts.ops, texts.details, texts.titles,
                    texts.extras, texts.compacts)  # fmt: skip
    result.laid_out = laid_out
    result.frame_labels = {g: group_title(model, g) for g in frames}
    result.shared_tracks = [(a + origin[c][0], b + origin[c][0], row + origin[c][1], count)
                            for c in tree.order for a, b, row, count in placements[c].shared_tracks]  # fmt: skip
    result.unit = np.zeros(m, dtype=bool)
    grouped = visible.item_kind == 1
    if model.n_groups and grouped.any():
        result.unit[grouped] = model.group_unit[visible.item_id[grouped]]
    for edge in edges:
        if edge.kind in ("stub", "back"):
            if edge.kind == "back":
                result.back_sources.add(edge.source)
            result.out_stubs.setdefault(edge.source, []).append(edge.target)
            result.in_stubs.setdefault(edge.target, []).append(edge.source)
        elif edge.kind == "bundle":
            result.bundles[edge.source] = result.bundles.get(edge.source, 0) + 1
            result.in_bundles.setdefault(edge.target, []).append(edge.source)
    return result


def _model_rank(model: GraphModel, visible: VisibleGraph) -> np.ndarray:
    """Per item: the earliest topological rank in the model of the nodes it shows (distinct: nodes are)."""
    best = np.full(visible.n_items, np.iinfo(np.int64).max, dtype=np.int64)
    shown = visible.node_item >= 0
    np.minimum.at(best, visible.node_item[shown], model.topo_rank[shown])
    return best


def _item_order(model: GraphModel, visible: VisibleGraph) -> np.ndarray:
    """Items in a topological order of the drawn graph itself (collapsed groups can order differently from
    their members), ties and cycles broken by the model's order (a group at its first member's place)."""
    best = np.full(visible.n_items, np.iinfo(np.int64).max, dtype=np.int64)
    shown = visible.node_item >= 0
    np.minimum.at(best, visible.node_item[shown], model.topo_rank[shown])
    base = np.lexsort((np.arange(visible.n_items), best))  # base[k]: the k-th item in the model's order
    if visible.edge_src.size == 0:
        return base
    renumber = np.empty(visible.n_items, dtype=np.int64)
    renumber[base] = np.arange(visible.n_items)
    rank, _ = topological_rank(visible.n_items, renumber[visible.edge_src], renumber[visible.edge_dst])
    return base[np.argsort(rank, kind="stable")]
