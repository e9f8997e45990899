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
from explorer.graph.layered import MAX_SPAN, PORT, Gaps, Placement, place_container
from explorer.graph.layering import order_and_layers
from explorer.graph.model import ROOT, GraphModel, count_nodes, topological_rank
from explorer.graph.placement import last_kept_layer
from explorer.graph.problems import mark_of
from explorer.graph.routing import Connection, simplify
from explorer.graph.shaping import reading_path, reading_start
from explorer.graph.text import shape_text, title, usual_dtype, weights_text

FANOUT = 24  # an item feeding more visible items than this draws one bundled stub with the count
FULL, COMPACT, DOTS = 0, 1, 2
LEVEL_NAMES = ("full", "compact", "dots")
# per level: box height, minor gap (between boxes of a layer), major gap (between layers), width bounds
_LEVELS = {FULL: (4, 2, 3, 10, 30), COMPACT: (1, 1, 2, 5, 18), DOTS: (1, 1, 1, 1, 1)}
PATH_BUDGET = 600  # most drawn boxes the groups on the reading path may open to (a chunk is at most 400)


@dataclass
class VisibleGraph:
    """What the current expansion shows: items (nodes or collapsed groups) and the edges between them."""

    item_kind: np.ndarray  # 0 node, 1 group
    item_id: np.ndarray  # node id or group id
    node_item: np.ndarray  # item of each node: its own, its collapsed group's, or -1 (a folded constant)
    edge_src: np.ndarray  # item ids, one edge per distinct pair
    edge_dst: np.ndarray
    edge_count: np.ndarray  # model edges behind each item edge
    open_groups: list[int]  # expanded groups that have something visible (drawn as frames)
    folded: np.ndarray  # per item: constants folded into it
    dangling: list[tuple[int, str]]  # (item, value nobody produces)
    # per edge: an owner → closed branch link (an If and its closed then-branch), drawn dotted
    owner_link: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def n_items(self) -> int:
        return int(self.item_id.size)


def visible_graph(model: GraphModel, expanded: set[int], show_constants: bool = False) -> VisibleGraph:
    n = model.n_nodes
    closed_at = np.full(model.n_groups, -1, dtype=np.int64)  # the outermost collapsed group holding g, or -1
    depth = model.group_depth()
    for g in np.argsort(depth, kind="stable").tolist():
        parent = int(model.group_parent[g])
        outer = closed_at[parent] if parent != ROOT else -1
        closed_at[g] = outer if outer >= 0 else (-1 if g in expanded else g)
    groups = model.node_group
    closed_or_none = np.append(closed_at, -1)  # index -1 (ROOT) reads the appended "not hidden"
    hidden_by = closed_or_none[groups]
    key = np.where(hidden_by >= 0, n + hidden_by, np.arange(n))
    constants = model.node_constant & (hidden_by < 0) & (not show_constants)
    key = np.where(constants, -1, key)
    shown = distinct(key[key >= 0])
    item_of_key = {int(k): i for i, k in enumerate(shown.tolist())}
    lookup = np.full(n + model.n_groups, -1, dtype=np.int64)
    lookup[shown] = np.arange(shown.size)
    node_item = np.where(key >= 0, lookup[np.maximum(key, 0)], -1)
    del item_of_key
    src_item = node_item[model.edge_src] if model.edge_src.size else np.zeros(0, dtype=np.int64)
    dst_item = node_item[model.edge_dst] if model.edge_dst.size else np.zeros(0, dtype=np.int64)
    links = _owner_links(model, node_item, lookup, n)
    if links:  # a closed branch's captured values are read by its owner, which the branch hangs off
        dst_item = dst_item.copy()
        for owner_item, branch_item in links:
            dst_item[(dst_item == branch_item) & (src_item != branch_item)] = owner_item
    links += _open_owner_links(model, node_item, closed_at)
    folded = np.zeros(shown.size, dtype=np.int64)
    from_constant = (src_item < 0) & (dst_item >= 0)
    if from_constant.any():
        np.add.at(folded, dst_item[from_constant], 1)
    keep = (src_item >= 0) & (dst_item >= 0) & (src_item != dst_item)
    pairs = src_item[keep] * max(shown.size, 1) + dst_item[keep]
    link_pairs = np.asarray([a * max(shown.size, 1) + b for a, b in links], dtype=np.int64)
    unique, counts = np.unique(np.concatenate([pairs, link_pairs]), return_counts=True)
    open_groups = sorted(
        {int(g) for g in model.node_group[hidden_by < 0].tolist() if g >= 0}
        | _open_ancestors(model, expanded, closed_at)
    )
    dangling = [(int(node_item[node]), name) for node, name in model.dangling if node_item[node] >= 0]
    return VisibleGraph(
        item_kind=(shown >= n).astype(np.int64),
        item_id=np.where(shown >= n, shown - n, shown),
        node_item=node_item,
        edge_src=unique // max(shown.size, 1),
        edge_dst=unique % max(shown.size, 1),
        edge_count=counts,
        open_groups=open_groups,
        folded=folded,
        dangling=dangling,
        owner_link=np.isin(unique, link_pairs),
    )


def _owner_links(model: GraphModel, node_item: np.ndarray, lookup: np.ndarray, n: int) -> list[tuple[int, int]]:
    """(owner item, branch item) for every owned group drawn closed apart from its owner."""
    links = []
    for g in np.flatnonzero(model.group_owner >= 0).tolist() if model.group_owner.size else []:
        branch, owner = int(lookup[n + g]), int(node_item[model.group_owner[g]])
        if branch >= 0 and owner >= 0 and owner != branch:
            links.append((owner, branch))
    return links


def _open_owner_links(model: GraphModel, node_item: np.ndarray, closed_at: np.ndarray) -> list[tuple[int, int]]:
    """(owner item, first drawn member's item) for every owned group drawn open: the dotted link goes on to the
    body's first box, so the open frame still hangs below its owner (without it a Loop body opened into a frame
    at the top of the graph, above the Loop and its inputs, nothing saying whose body it was)."""
    owned = np.flatnonzero(model.group_owner >= 0).tolist() if model.group_owner.size else []
    opened = [g for g in owned if closed_at[g] < 0 and node_item[model.group_owner[g]] >= 0]
    if not opened:
        return []
    first_rank = _group_first_rank(model)
    node_at_rank = np.argsort(model.topo_rank)  # topo_rank is a permutation of the nodes
    links = []
    for g in opened:
        if first_rank[g] < model.n_nodes:  # a drawn node inside (its box, or its closed subgroup's)
            owner, first = int(node_item[model.group_owner[g]]), int(node_item[node_at_rank[first_rank[g]]])
            if first >= 0 and first != owner:
                links.append((owner, first))
    return links


def _open_ancestors(model: GraphModel, expanded: set[int], closed_at: np.ndarray) -> set[int]:
    """Expanded groups whose members are all inside collapsed child groups still get a frame."""
    found = set()
    for g in expanded:
        if 0 <= g < model.n_groups and closed_at[g] < 0:
            parent = int(model.group_parent[g])
            if parent == ROOT or closed_at[parent] < 0:
                found.add(g)
    return found


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
            texts.compacts.append(model.group_label[ident])
        else:
            label, op = model.node_label[ident], model.node_op[ident]
            texts.labels.append(label)
            texts.ops.append(op)
            texts.titles.append(mark + title(op, label))
            texts.floors.append(len(mark) + len(op) + 4)
            texts.details.append(shape_text(model.node_detail[ident], usual))
            texts.extras.append(weights_text(model, ident, usual) if folded else "")
            texts.compacts.append(mark + (op or label))
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
KIND_NAMES = ("routed", "stub", "back", "bundle")


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
    before = _Before(previous, tb, level, direction)
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
        element_keys = element_keys_of[c] = [*_item_keys(visible, members), *((1, g) for g in kids)]
        wanted, centres = before.wanted(c, element_keys, minor_size, [shifts.get(g) for g in kids], members.size)
        wanted_chains = before.wanted_chains(c, element_keys) if wanted is not None else None
        rows, changed = before.wanted_rows(c, element_keys, major_size)
        found = cache.get(key)
        if found is not None and not _keeps(found, wanted, wanted_chains):  # reached from another picture
            found = None
        if found is not None and not _keeps_rows(found, layer, rows, changed):
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


def _item_keys(visible: VisibleGraph, items: np.ndarray) -> list[tuple[int, int]]:
    return list(zip(visible.item_kind[items].tolist(), visible.item_id[items].tolist(), strict=True))


class _Before:
    """Where things were across the layers in the previous layout, per container: what `wanted` asks for."""

    def __init__(self, previous: Layout | None, tb: bool, level: int, direction: str) -> None:
        self.boxes: dict[tuple[int, int], tuple[int, int]] = {}  # (kind, id) → (first cell, size) across
        self.frames: dict[int, tuple[int, int]] = {}
        self.rows: dict[tuple[int, int], tuple[int, int]] = {}  # (kind, id) → (first cell, size) along
        self.frame_rows: dict[int, tuple[int, int]] = {}
        self.chains: dict[int, tuple[dict[tuple, list[int]], list[tuple[int, int]]]] = {}
        self.previous: Layout | None = None
        self.tb = tb
        self._entered: dict[int, dict[tuple[int, int], int]] | None = None  # built at the first just-opened group
        if previous is None or previous.level != level or previous.direction != direction:
            return
        across, size = (previous.x, previous.w) if tb else (previous.y, previous.h)
        kinds, ids = previous.visible.item_kind.tolist(), previous.visible.item_id.tolist()
        for k, (a, b) in enumerate(zip(across.tolist(), size.tolist(), strict=True)):
            self.boxes[(kinds[k], ids[k])] = (a, b)
        along, thick = (previous.y, previous.h) if tb else (previous.x, previous.w)
        for k, (a, b) in enumerate(zip(along.tolist(), thick.tolist(), strict=True)):
            self.rows[(kinds[k], ids[k])] = (a, b)
        for g, (fx, fy, fw, fh) in previous.frames.items():
            self.frames[g] = (fx, fw) if tb else (fy, fh)
            self.frame_rows[g] = (fy, fh) if tb else (fx, fw)
        self.chains = previous.chains
        self.previous = previous

    def wanted_chains(self, container: int, keys: list[tuple[int, int]]) -> dict[tuple, list[int]] | None:
        """The container's long edges' dummies and ports where they were (Placement.chains), their ends renamed
        from the old layout's elements to the same elements now (an element's index changes when a group opens)."""
        old, old_keys = self.chains.get(container, ({}, []))
        if not old:
            return None
        local = {key: e for e, key in enumerate(keys)}
        n, n_old = len(keys), max(len(old_keys), 1)

        def end(name: tuple) -> tuple | None:
            if name == PORT:
                return PORT
            element = name[1] % n_old if name[0] == "in" else name[1]
            e = local.get(old_keys[element])
            if e is None:
                return None
            return ("in", e + name[1] // n_old * n) if name[0] == "in" else (name[0], e)

        out = {}
        for (a, b), cells in old.items():
            ends = end(a), end(b)
            if ends[0] is not None and ends[1] is not None:
                out[ends] = cells
        return out or None

    def just_opened(self, container: int) -> bool:
        """Whether the container is a group that was a closed box in the previous layout."""
        return self.previous is not None and container != ROOT and (1, container) in self.boxes

    def entry_cells(self, group: int, sources: dict[int, tuple[int, int]]) -> dict[int, int] | None:
        """For a group just opened (`just_opened`): per entry port (`sources`: port → its source's key), the cell
        across its closed box's near side, from the box's first cell, where that source's edge came in (None when no
        source's edge did)."""
        if self._entered is None:  # every closed group's incoming edges, indexed once per layout
            previous, self._entered = self.previous, {}
            assert previous is not None  # just_opened says there was a layout before
            kinds, ids = previous.visible.item_kind, previous.visible.item_id
            for edge in previous.edges:
                if edge.kind != "routed" or not edge.points or kinds[edge.target] != 1:
                    continue
                x, y = edge.points[-1]
                first = previous.x[edge.target] if self.tb else previous.y[edge.target]
                source = (int(kinds[edge.source]), int(ids[edge.source]))
                self._entered.setdefault(int(ids[edge.target]), {})[source] = int((x if self.tb else y) - first)
        entered = self._entered.get(group, {})
        cells = {port: entered[key] for port, key in sources.items() if key in entered}
        return cells or None

    def origin(self, container: int, along: bool = False) -> int | None:
        """The container's first cell before, across the layers (or along them): 0 for the canvas."""
        if container == ROOT:
            return 0 if self.boxes else None
        frame = (self.frame_rows if along else self.frames).get(container)
        return frame[0] if frame else None

    def wanted(self, container: int, keys: list[tuple[int, int]], sizes: np.ndarray, child_shifts: list,
               n_items: int) -> tuple[np.ndarray | None, np.ndarray | None]:  # fmt: skip
        """Each element's old first cell inside `container` (NaN where it was not there): a group that stays
        open is placed so its content stays put; a group just opened puts its frame's corner where its box's was
        (the frame grows right and down, so what is above and left of it stays), and one just closed puts its
        box where its frame's corner was; a box that only changed size keeps its centre. Also each element's
        old centre (what orders a layer: a just-opened group's frame, centred on its new size, would sort after
        the edges that ran beside its box)."""
        origin = self.origin(container)
        if origin is None:
            return None, None
        wanted = np.full(len(keys), np.nan)
        centres = np.full(len(keys), np.nan)
        for e, key in enumerate(keys):
            child_shift = child_shifts[e - n_items] if e >= n_items else None
            if e >= n_items and key[1] in self.frames and child_shift is not None:
                wanted[e] = self.frames[key[1]][0] - origin - child_shift
                centres[e] = wanted[e] + int(sizes[e]) / 2.0
                continue
            was_box = self.boxes.get(key)
            old = was_box or (self.frames.get(key[1]) if key[0] == 1 else None)
            if old is None:
                continue
            opened_or_closed = (e >= n_items) == (was_box is not None)
            wanted[e] = old[0] - origin + (0.0 if opened_or_closed else (old[1] - int(sizes[e])) / 2.0)
            centres[e] = old[0] - origin + old[1] / 2.0
        return (None, None) if np.isnan(wanted).all() else (wanted, centres)

    def wanted_rows(
        self, container: int, keys: list[tuple[int, int]], sizes: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Each element's old first cell along the layers inside `container`, from its frame's first cell (NaN
        where it was not there), and which elements changed size along them (a group opened or closed, a frame
        grown): rows down to the first changed one stay where they were (`place_container`)."""
        origin = self.origin(container, along=True)
        if origin is None:
            return None, None
        wanted = np.full(len(keys), np.nan)
        changed = np.zeros(len(keys), dtype=bool)
        for e, key in enumerate(keys):
            old = self.rows.get(key)  # a box before; else a group that was open, by its frame
            if old is None and key[0] == 1:
                old = self.frame_rows.get(key[1])
            if old is None:
                changed[e] = True
                continue
            wanted[e] = old[0] - origin
            changed[e] = old[1] != int(sizes[e])
        return (None, None) if np.isnan(wanted).all() else (wanted, changed)

    def shift(self, container: int, keys: list[tuple[int, int]], placed: np.ndarray) -> float | None:
        """How far the container's elements moved inside its box (the median over those that were there)."""
        origin = self.origin(container)
        if origin is None:
            return None
        moved = [int(placed[e]) - (self.boxes[key][0] - origin) for e, key in enumerate(keys[: placed.size])
                 if key in self.boxes]  # fmt: skip
        return float(np.median(moved)) if moved else None


def _keeps(placement: Placement, wanted: np.ndarray | None, wanted_chains: dict | None = None) -> bool:
    """Whether a cached placement puts every element that has a wanted place exactly there (and the long edges'
    dummies where they were)."""
    if wanted is None:
        return True
    known = ~np.isnan(wanted)
    if not np.all(placement.minor[: wanted.size][known] == np.floor(wanted[known])):
        return False
    return not wanted_chains or all(placement.chains.get(ends, cells) == cells for ends, cells in wanted_chains.items())


def _keeps_rows(placement: Placement, layer: np.ndarray, rows: np.ndarray | None, changed: np.ndarray | None) -> bool:
    """Whether a cached placement starts no element of the layers kept (down to the first changed element's)
    higher than it was (what place_container's `wanted_rows` asks)."""
    if rows is None or layer.size == 0:
        return True
    kept = ~np.isnan(rows) & (layer <= last_kept_layer(layer, changed))
    return bool(np.all(placement.major[kept] >= rows[kept]))


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


def _assemble(model, visible, tree, placements, kind, pieces, texts, w, h, level, direction, laid_out) -> Layout:
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


ON_DEMAND_KINDS = frozenset({"subgraph", "function", "stack"})  # groups the first screen leaves closed off the path


def initial_expansion(model: GraphModel, budget: int = 60) -> set[int]:
    """What opens first: the groups on the path from the first input to its first ops (outermost first, while
    the drawn boxes stay within PATH_BUDGET: the first ops must be on the first screen even when a group holds a
    whole chunk), then the other groups level by level in the model's order within `budget`; a small graph
    opens whole, a large one on its reading start. Control-flow bodies and local functions off that path stay
    closed (as Netron and Model Explorer show them on demand): opened, their frames stood between the first
    ops. A stack of alike blocks stays closed, on the path too."""
    if model.n_groups == 0:
        return set()
    drawn = ~model.node_constant
    direct = np.bincount(model.node_group[(model.node_group >= 0) & drawn], minlength=model.n_groups)
    children: dict[int, list[int]] = {}
    for g, parent in enumerate(model.group_parent.tolist()):
        children.setdefault(parent, []).append(g)
    first_rank = _group_first_rank(model)
    for members in children.values():
        members.sort(key=lambda g: (int(first_rank[g]), g))
    visible = len(children.get(ROOT, [])) + int(((model.node_group == ROOT) & drawn).sum())
    expanded: set[int] = set()

    def opened_cost(g: int) -> int:
        return int(direct[g]) + len(children.get(g, [])) - 1

    for node in reading_path(model):  # the path's groups may open up to a chunk's worth of boxes
        for g in model.ancestors(int(model.node_group[node])):
            if g in expanded:
                continue
            if model.group_unit[g] or model.group_kind[g] == "stack" or visible + opened_cost(g) > max(
                    budget, PATH_BUDGET):  # fmt: skip
                break  # a stack stays one box: the model's shape first, its blocks on Enter
            expanded.add(g)
            visible += opened_cost(g)
    frontier = list(children.get(ROOT, []))
    while frontier:
        g = frontier.pop(0)
        if model.group_unit[g] or (g not in expanded and model.group_kind[g] in ON_DEMAND_KINDS):
            continue  # a unit, a loop body, a function: opened when asked
        if g not in expanded:
            if visible + opened_cost(g) > budget:
                continue
            expanded.add(g)
            visible += opened_cost(g)
        frontier += children.get(g, [])
    return expanded


def _group_first_rank(model: GraphModel) -> np.ndarray:
    """Per group: the smallest topological rank of a drawn node inside it (at any depth)."""
    best = np.full(model.n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    inside = (model.node_group >= 0) & ~model.node_constant
    np.minimum.at(best, model.node_group[inside], model.topo_rank[inside])
    for g in np.argsort(-model.group_depth(), kind="stable").tolist():
        parent = int(model.group_parent[g])
        if parent != ROOT and best[g] < best[parent]:
            best[parent] = best[g]
    return best


def expand_all(model: GraphModel) -> set[int]:
    """Every group open, except unit groups (they stand for one node each, as a schedule's layers)."""
    return {g for g in range(model.n_groups) if not model.group_unit[g]}
