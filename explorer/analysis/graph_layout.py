"""Layered layout of what is visible of a GraphModel, in terminal cells: the graph view, `ir-explorer graph`,
the SVG screenshot and the HTML figure all draw this.

Only what is visible is laid out: a collapsed group is one box, constants fold into their consumers, and
groups with many members were already split into chunks by the model. The steps (Sugiyama's, vectorised):
cycles broken by reversing back edges (kept and marked), layers by longest path (sources pulled down next to
their first reader), edges longer than MAX_SPAN layers drawn as labelled stubs instead of routed, crossing
reduction by barycentre sweeps over all layers at once, and coordinates that pull every box toward the mean
of its neighbours while keeping the order and the gaps, so chains come out as straight vertical lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.graph import ROOT, GraphModel, count_nodes, topological_rank

MAX_SPAN = 6  # edges over more layers are stubs ("→ Add_9_1") that jump to their other end
FANOUT = 24  # an item feeding more visible items than this draws one bundled stub with the count
SWEEPS = 8
PLACEMENT_PASSES = 6
FULL, COMPACT, DOTS = 0, 1, 2
LEVEL_NAMES = ("full", "compact", "dots")
# per level: box height, minor gap (between boxes of a layer), major gap (between layers), width bounds
_LEVELS = {FULL: (4, 2, 3, 10, 30), COMPACT: (1, 1, 2, 5, 18), DOTS: (1, 1, 1, 1, 1)}


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
    shown = np.unique(key[key >= 0])
    item_of_key = {int(k): i for i, k in enumerate(shown.tolist())}
    lookup = np.full(n + model.n_groups, -1, dtype=np.int64)
    lookup[shown] = np.arange(shown.size)
    node_item = np.where(key >= 0, lookup[np.maximum(key, 0)], -1)
    del item_of_key
    src_item = node_item[model.edge_src] if model.edge_src.size else np.zeros(0, dtype=np.int64)
    dst_item = node_item[model.edge_dst] if model.edge_dst.size else np.zeros(0, dtype=np.int64)
    folded = np.zeros(shown.size, dtype=np.int64)
    from_constant = (src_item < 0) & (dst_item >= 0)
    if from_constant.any():
        np.add.at(folded, dst_item[from_constant], 1)
    keep = (src_item >= 0) & (dst_item >= 0) & (src_item != dst_item)
    pairs = src_item[keep] * max(shown.size, 1) + dst_item[keep]
    unique, counts = np.unique(pairs, return_counts=True)
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
    )


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
    labels: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    out_stubs: dict[int, list[int]] = field(default_factory=dict)  # item → targets drawn as stubs below it
    in_stubs: dict[int, list[int]] = field(default_factory=dict)  # item → sources drawn as stubs above it
    bundles: dict[int, int] = field(default_factory=dict)  # item → how many items its bundled edge feeds
    back_sources: set[int] = field(default_factory=set)  # items with an edge that closes a cycle
    frame_labels: dict[int, str] = field(default_factory=dict)  # open group → its label
    unit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # items that are closed unit groups

    def item_at(self, cx: int, cy: int) -> int:
        """The item whose box holds the cell (cx, cy), or -1."""
        inside = (self.x <= cx) & (cx < self.x + self.w) & (self.y <= cy) & (cy < self.y + self.h)
        hits = np.flatnonzero(inside)
        return int(hits[0]) if hits.size else -1


def item_texts(model: GraphModel, visible: VisibleGraph) -> tuple[list[str], list[str], list[str]]:
    """Per item: its name, its op type (groups: "▸ N nodes") and its one-line detail."""
    sizes = count_nodes(model) if model.n_groups else np.zeros(0, dtype=np.int64)
    labels, ops, details = [], [], []
    for kind, ident, folded in zip(
        visible.item_kind.tolist(), visible.item_id.tolist(), visible.folded.tolist(), strict=True
    ):
        if kind == 1 and model.group_unit[ident]:  # drawn as the node it stands for
            labels.append(model.group_label[ident])
            ops.append(model.group_op[ident])
            details.append(model.group_detail[ident])
        elif kind == 1:
            labels.append(model.group_label[ident])
            ops.append(f"▸ {int(sizes[ident]):,} nodes")
            details.append(model.group_kind[ident])
        else:
            labels.append(model.node_label[ident])
            ops.append(model.node_op[ident])
            extra = f" +{folded} const" if folded else ""
            details.append(model.node_detail[ident] + extra)
    return labels, ops, details


def box_sizes(labels: list[str], ops: list[str], details: list[str], level: int) -> tuple[np.ndarray, np.ndarray]:
    height, _, _, low, high = _LEVELS[level]
    if level == DOTS:
        n = len(labels)
        return np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    if level == COMPACT:
        widths = [len(label) + 2 for label in labels]
    else:
        widths = [
            max(len(a), len(b) + 1 + len(c) if c else len(b)) + 4 for a, b, c in zip(labels, ops, details, strict=True)
        ]
    w = np.clip(np.asarray(widths, dtype=np.int64), low, high) if widths else np.zeros(0, dtype=np.int64)
    return w, np.full(len(labels), height, dtype=np.int64)


def layout_graph(model: GraphModel, visible: VisibleGraph, level: int = FULL, direction: str = "TB") -> Layout:
    labels, ops, details = item_texts(model, visible)
    w, h = box_sizes(labels, ops, details, level)
    m = visible.n_items
    _, minor_gap, major_gap, _, _ = _LEVELS[level]
    if direction == "LR":
        major_gap += 2  # room for the vertical jogs of edges between columns
    src, dst = visible.edge_src, visible.edge_dst
    order = _item_order(model, visible)
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    back = position[src] > position[dst]
    fwd_src = np.where(back, dst, src)
    fwd_dst = np.where(back, src, dst)
    layer = _longest_path_layers(m, fwd_src, fwd_dst, order)
    span = layer[fwd_dst] - layer[fwd_src]
    out_degree = np.bincount(src, minlength=m) if m else np.zeros(0, dtype=np.int64)
    bundled = out_degree[src] > FANOUT
    stub = (span > MAX_SPAN) & ~back & ~bundled
    routed = ~stub & ~back & ~bundled
    # dummies: one per intermediate layer of each routed multi-layer edge
    long_edges = np.flatnonzero(routed & (span > 1))
    dummy_count = int((span[long_edges] - 1).sum()) if long_edges.size else 0
    total = m + dummy_count
    v_layer = np.concatenate([layer, np.zeros(dummy_count, dtype=np.int64)])
    major_size = h if direction == "TB" else w
    minor_size = w if direction == "TB" else h
    v_minor = np.concatenate([minor_size, np.ones(dummy_count, dtype=np.int64)])
    seg_u, seg_v = [fwd_src[routed & (span == 1)]], [fwd_dst[routed & (span == 1)]]
    chains: dict[int, list[int]] = {}
    next_id = m
    for e in long_edges.tolist():
        a, b = int(fwd_src[e]), int(fwd_dst[e])
        chain = list(range(next_id, next_id + int(span[e]) - 1))
        next_id += len(chain)
        v_layer[chain] = np.arange(layer[a] + 1, layer[b])
        path = [a, *chain, b]
        seg_u.append(np.asarray(path[:-1], dtype=np.int64))
        seg_v.append(np.asarray(path[1:], dtype=np.int64))
        chains[e] = chain
    seg_u_all = np.concatenate(seg_u) if seg_u else np.zeros(0, dtype=np.int64)
    seg_v_all = np.concatenate(seg_v) if seg_v else np.zeros(0, dtype=np.int64)
    rank = np.concatenate([position, m + np.arange(dummy_count)]).astype(np.float64)
    slot = _order_layers(total, v_layer, seg_u_all, seg_v_all, rank)
    minor = _place(total, v_layer, slot, v_minor, minor_gap, seg_u_all, seg_v_all)
    # the major axis: each layer as thick as its thickest box
    layers = int(v_layer.max()) + 1 if total else 0
    thickness = np.zeros(max(layers, 1), dtype=np.int64)
    if m:
        np.maximum.at(thickness, layer, major_size)
    thickness = np.maximum(thickness, 1)
    starts = np.concatenate([[0], np.cumsum(thickness + major_gap)[:-1]]) + 1  # row 0: room for stub labels
    v_major = starts[v_layer]
    if direction == "TB":
        x, y = minor[:m], v_major[:m]
    else:
        x, y = v_major[:m], minor[:m]
    edges = _route(visible, src, dst, back, stub, bundled, routed, span, chains, minor, v_major, v_layer,
                   thickness, starts, x, y, w, h, direction)  # fmt: skip
    frames = _frames(model, visible, x, y, w, h)
    width = int(max((x + w).max(initial=0), max((f[0] + f[2] for f in frames.values()), default=0))) + 2
    height = int(max((y + h).max(initial=0), max((f[1] + f[3] for f in frames.values()), default=0))) + 3
    result = Layout(visible, level, direction, x, y, w, h, layer, edges, frames, width, height, int(back.sum()),
                    labels, ops, details)  # fmt: skip
    result.frame_labels = {g: model.group_label[g] for g in frames}
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
    return result


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


def _longest_path_layers(m: int, src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> np.ndarray:
    layer = np.zeros(m, dtype=np.int64)
    if m == 0 or src.size == 0:
        return layer
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    by_dst = np.argsort(position[dst], kind="stable")
    s_list, d_list = src[by_dst].tolist(), dst[by_dst].tolist()
    layers = layer.tolist()
    for s, d in zip(s_list, d_list, strict=True):  # edges in the order of their targets: sources are final
        if layers[s] + 1 > layers[d]:
            layers[d] = layers[s] + 1
    # sources (inputs, weights) sit right above their first reader instead of at the top
    has_in = np.zeros(m, dtype=bool)
    has_in[dst] = True
    first_reader = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    layer = np.asarray(layers, dtype=np.int64)
    np.minimum.at(first_reader, src, layer[dst])
    pull = ~has_in & (first_reader < np.iinfo(np.int64).max)
    layer[pull] = np.maximum(first_reader[pull] - 1, 0)
    return layer


def _order_layers(
    total: int, v_layer: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """Each vertex's slot in its layer after barycentre sweeps (all layers at once, down then up)."""
    slot = _slots(v_layer, rank)
    if seg_u.size == 0:
        return slot
    for sweep in range(SWEEPS):
        if sweep % 2 == 0:  # down: a vertex follows the mean slot of what feeds it
            owner, other = seg_v, seg_u
        else:  # up: the mean slot of what it feeds
            owner, other = seg_u, seg_v
        total_slot = np.bincount(owner, weights=slot[other].astype(np.float64), minlength=total)
        degree = np.bincount(owner, minlength=total)
        bary = np.where(degree > 0, total_slot / np.maximum(degree, 1), slot.astype(np.float64))
        slot = _slots(v_layer, bary + rank * 1e-9)
    return slot


def _slots(v_layer: np.ndarray, key: np.ndarray) -> np.ndarray:
    order = np.lexsort((key, v_layer))
    slot = np.empty(v_layer.size, dtype=np.int64)
    layer_sorted = v_layer[order]
    starts = np.searchsorted(layer_sorted, layer_sorted, side="left")
    slot[order] = np.arange(v_layer.size) - starts
    return slot


def _place(total: int, v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int,
           seg_u: np.ndarray, seg_v: np.ndarray) -> np.ndarray:  # fmt: skip
    """Minor-axis coordinates: each box pulled toward the mean centre of its neighbours, order and gaps kept.

    Within a layer (in slot order) z = coord - packed offset must not decrease. A pass asks every box for the
    centre of its neighbours (`want`), then takes the mean of the two nearest non-decreasing sequences (a
    running max from the left and a running min from the right), which keeps the gaps and centres the layer
    on what it wants; chains end up straight.
    """
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((slot, v_layer))
    layer_sorted = v_layer[order]
    size_sorted = size[order].astype(np.float64)
    packed = np.cumsum(size_sorted + gap) - (size_sorted + gap)
    first = np.searchsorted(layer_sorted, layer_sorted, side="left")
    last = np.searchsorted(layer_sorted, layer_sorted, side="right") - 1
    offset = packed - packed[first]
    layer_width = offset[last] + size_sorted[last]
    z = -layer_width / 2.0  # layers start centred on 0
    size_f = size.astype(np.float64)
    for _ in range(PLACEMENT_PASSES if seg_u.size else 0):
        coord = np.empty(total)
        coord[order] = z + offset
        centre = coord + size_f / 2.0
        pull = np.bincount(seg_u, weights=centre[seg_v], minlength=total)
        pull += np.bincount(seg_v, weights=centre[seg_u], minlength=total)
        degree = np.bincount(seg_u, minlength=total) + np.bincount(seg_v, minlength=total)
        want = np.where(degree > 0, pull / np.maximum(degree, 1) - size_f / 2.0, coord)[order]
        wz = want - offset
        big = 4.0 * (float(np.abs(wz).max()) + float(offset.max()) + 16.0)
        lift = layer_sorted * big
        from_left = np.maximum.accumulate(wz + lift) - lift
        from_right = np.minimum.accumulate((wz + lift)[::-1])[::-1] - lift
        z = (from_left + from_right) / 2.0
    coord_sorted = np.round(z).astype(np.int64) + offset.astype(np.int64)  # rounding keeps z non-decreasing
    coord = np.empty(total, dtype=np.int64)
    coord[order] = coord_sorted
    return coord - coord.min() + 1


def _route(visible, src, dst, back, stub, bundled, routed, span, chains, minor, v_major, v_layer, thickness,
           starts, x, y, w, h, direction) -> list[Edge]:  # fmt: skip
    """Orthogonal polylines for routed edges: out of the source's far side, through each dummy's lane, a jog in
    the gap row (or column) above the target, into the target's near side."""
    tb = direction == "TB"
    out_ports: dict[int, list[int]] = {}
    in_ports: dict[int, list[int]] = {}
    for e in np.flatnonzero(routed).tolist():
        out_ports.setdefault(int(src[e]), []).append(e)
        in_ports.setdefault(int(dst[e]), []).append(e)

    def port(item: int, e: int, ports: dict[int, list[int]], other_minor: dict[int, float]) -> int:
        members = sorted(ports[item], key=lambda k: other_minor[k])
        k = members.index(e)
        lo = int(x[item] if tb else y[item])
        size = int(w[item] if tb else h[item])
        return lo + (k + 1) * size // (len(members) + 1) if size > 2 else lo + size // 2

    target_minor = {e: float(minor[dst[e]]) for e in np.flatnonzero(routed).tolist()}
    source_minor = {e: float(minor[src[e]]) for e in np.flatnonzero(routed).tolist()}
    for e, chain in chains.items():
        if chain:
            target_minor[e] = float(minor[chain[0]])
            source_minor[e] = float(minor[chain[-1]])
    edges: list[Edge] = []
    for e in range(src.size):
        a, b, count = int(src[e]), int(dst[e]), int(visible.edge_count[e])
        if back[e]:
            edges.append(Edge(a, b, count, "back"))
            continue
        if bundled[e]:
            edges.append(Edge(a, b, count, "bundle"))
            continue
        if stub[e]:
            edges.append(Edge(a, b, count, "stub"))
            continue
        start_minor = port(a, e, out_ports, target_minor)
        end_minor = port(b, e, in_ports, source_minor)
        start_major = int(v_major[a] + (h[a] if tb else w[a]))  # first cell past the source's far side
        lanes = [int(minor[d]) for d in chains.get(e, [])]
        points: list[tuple[int, int]] = [(start_minor, start_major)]
        current = start_minor
        for d, lane in zip(chains.get(e, []), lanes, strict=True):
            jog = int(starts[v_layer[d]]) - 1
            points += [(current, jog), (lane, jog)]
            current = lane
        jog = int(v_major[b]) - 1 - (1 if int(v_major[b]) - 1 > start_major else 0)
        jog = max(jog, start_major)
        points += [(current, jog), (end_minor, jog), (end_minor, int(v_major[b]) - 1)]
        if not tb:
            points = [(major, minor_) for minor_, major in points]
        edges.append(Edge(a, b, count, "routed", _simplify(points)))
    return edges


def _simplify(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for p in points:
        if out and out[-1] == p:
            continue
        if len(out) >= 2 and (out[-2][0] == out[-1][0] == p[0] or out[-2][1] == out[-1][1] == p[1]):
            out[-1] = p
        else:
            out.append(p)
    return out


def _frames(model: GraphModel, visible: VisibleGraph, x, y, w, h) -> dict[int, tuple[int, int, int, int]]:
    """A frame around the visible members of each open group (nested frames grow by one cell per level)."""
    frames: dict[int, tuple[int, int, int, int]] = {}
    if not visible.open_groups or visible.n_items == 0:
        return frames
    # the open group each item sits in directly, then every ancestor of it
    item_group = np.full(visible.n_items, ROOT, dtype=np.int64)
    nodes = visible.item_kind == 0
    item_group[nodes] = model.node_group[visible.item_id[nodes]]
    groups = ~nodes
    item_group[groups] = model.group_parent[visible.item_id[groups]]
    open_set = set(visible.open_groups)
    boxes: dict[int, list[int]] = {}
    for item, g in enumerate(item_group.tolist()):
        level = 0
        while g != ROOT:
            if g in open_set:
                box = boxes.get(g)
                lo_x, lo_y = int(x[item]) - 1 - level, int(y[item]) - 1 - level
                hi_x, hi_y = int(x[item] + w[item]) + level, int(y[item] + h[item]) + level
                if box is None:
                    boxes[g] = [lo_x, lo_y, hi_x, hi_y]
                else:
                    box[0], box[1] = min(box[0], lo_x), min(box[1], lo_y)
                    box[2], box[3] = max(box[2], hi_x), max(box[3], hi_y)
            level += 1
            g = int(model.group_parent[g])
    for g, (x0, y0, x1, y1) in boxes.items():
        frames[g] = (max(x0, 0), max(y0, 0), x1 - max(x0, 0) + 1, y1 - max(y0, 0) + 1)
    return frames


def initial_expansion(model: GraphModel, budget: int = 60) -> set[int]:
    """What opens first: groups level by level (smallest first) while the visible count stays within `budget`,
    so a large graph opens collapsed to its top groups and a small one opens whole."""
    expanded: set[int] = set()
    sizes = count_nodes(model) if model.n_groups else np.zeros(0, dtype=np.int64)
    visible = len(model.top_groups()) + int((model.node_group == ROOT).sum())
    frontier = sorted(model.top_groups(), key=lambda g: int(sizes[g]))
    children: dict[int, int] = {}
    for parent in model.group_parent.tolist():
        children[parent] = children.get(parent, 0) + 1
    direct = np.bincount(model.node_group[model.node_group >= 0], minlength=model.n_groups) if model.n_groups else []
    while frontier:
        g = frontier.pop(0)
        if model.group_unit[g]:  # a unit opens only when asked
            continue
        opened = int(direct[g]) + children.get(g, 0)
        if visible - 1 + opened > budget:
            continue
        expanded.add(g)
        visible += opened - 1
        frontier += sorted(
            (c for c in range(model.n_groups) if model.group_parent[c] == g), key=lambda c: int(sizes[c])
        )
    return expanded


def expand_all(model: GraphModel) -> set[int]:
    """Every group open, except unit groups (they stand for one node each, as a schedule's layers)."""
    return {g for g in range(model.n_groups) if not model.group_unit[g]}
