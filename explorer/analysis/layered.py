"""Sugiyama's layered layout of one container of the graph (the top level, or one open group), vectorised.

The compound layout in graph_layout lays out every open group on its own with these steps and places the
result as one box in its parent, so opening a group lays out that group and its ancestors only. Coordinates
here are (minor, major): major runs along the edges (down in TB, right in LR), minor across them.

A container sees its open child groups as boxes, and the edges that leave or enter it as ports on its border:
an entry port sits on the top border (a layer above every box) and an exit port on the bottom border, so an
edge between groups is drawn piece by piece, each piece inside one container.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from explorer.graph import topological_rank

MAX_SPAN = 6  # edges over more layers are stubs ("→ Add_9_1") that jump to their other end
SWEEPS = 8
PLACEMENT_PASSES = 6
FRAME_PAD = 2  # cells between a frame's side and what it holds


def order_and_layers(n: int, src: np.ndarray, dst: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, ...]:
    """Elements in a topological order (ties and cycles broken by `base`), their layers by longest path, and
    which edges point backwards in that order (they close a cycle)."""
    base_order = np.lexsort((np.arange(n), base))
    if src.size:
        renumber = np.empty(n, dtype=np.int64)
        renumber[base_order] = np.arange(n)
        rank, _ = topological_rank(n, renumber[src], renumber[dst])
        order = base_order[np.argsort(rank, kind="stable")]
    else:
        order = base_order
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    back = position[src] > position[dst]
    layer = longest_path_layers(n, np.where(back, dst, src), np.where(back, src, dst), order)
    return position, layer, back


def longest_path_layers(m: int, src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> np.ndarray:
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


class Connection(NamedTuple):
    """One drawn piece inside a container. `source`/`target` are element indices; `source < 0` is the entry
    port of element -source-1 and `target < 0` the exit port of element -target-1. `source_port`/`target_port`
    give the cell across the box where the piece leaves or enters a child group (its own port), else -1."""

    source: int
    source_port: int
    target: int
    target_port: int


@dataclass
class Placement:
    """A container laid out, relative to its own box (the frame) or, for the top level, to the canvas."""

    minor: np.ndarray  # per element: its box's first cell across the layers
    major: np.ndarray  # per element: its box's first cell along the layers
    minor_size: int  # the box's size (frame included)
    major_size: int
    entry_ports: dict[int, int] = field(default_factory=dict)  # element → cell across the top border
    exit_ports: dict[int, int] = field(default_factory=dict)  # element → cell across the bottom border
    routes: dict[Connection, list[tuple[int, int]]] = field(default_factory=dict)  # (minor, major) polylines


@dataclass
class Gaps:
    minor: int  # between boxes of a layer
    major: int  # between layers


def place_container(
    minor_size: np.ndarray,
    major_size: np.ndarray,
    layer: np.ndarray,
    position: np.ndarray,
    connections: list[Connection],
    port_cells: dict[int, tuple[dict[int, int], dict[int, int]]],
    gaps: Gaps,
    framed: bool,
    min_minor: int = 0,
) -> Placement:
    """Boxes and routes of one container.

    `layer`/`position` come from order_and_layers; every connection points down a layer or more.
    `port_cells[e]` holds the entry and exit port cells of element e when it is an open child group.
    """
    n = int(minor_size.size)
    entries = sorted({-c.source - 1 for c in connections if c.source < 0})
    exits = sorted({-c.target - 1 for c in connections if c.target < 0})
    shift = 1 if entries else 0
    top_layer = int(layer.max()) + shift + 1 if n else shift
    vertex_of_entry = {e: n + k for k, e in enumerate(entries)}
    vertex_of_exit = {e: n + len(entries) + k for k, e in enumerate(exits)}
    ports = len(entries) + len(exits)

    def vertex(end: int, entry: bool) -> int:
        if end >= 0:
            return end
        return vertex_of_entry[-end - 1] if entry else vertex_of_exit[-end - 1]

    pairs = sorted({(vertex(c.source, True), vertex(c.target, False)) for c in connections})
    base = n + ports
    v_layer = np.concatenate([layer + shift, np.zeros(len(entries), np.int64), np.full(len(exits), top_layer)])
    v_minor_size = np.concatenate([minor_size, np.ones(ports, dtype=np.int64)])
    v_major_size = np.concatenate([major_size, np.zeros(ports, dtype=np.int64)])
    rank = np.concatenate([position, position[entries] - 0.5, position[exits] + 0.5]).astype(np.float64)
    # dummies: one per intermediate layer of each pair that spans several
    seg_u: list[int] = []
    seg_v: list[int] = []
    chains: dict[tuple[int, int], list[int]] = {}
    dummy_layers: list[int] = []
    next_id = base
    for a, b in pairs:
        span = int(v_layer[b] - v_layer[a])
        chain = list(range(next_id, next_id + span - 1))
        next_id += len(chain)
        dummy_layers.extend(range(int(v_layer[a]) + 1, int(v_layer[b])))
        path = [a, *chain, b]
        seg_u += path[:-1]
        seg_v += path[1:]
        chains[(a, b)] = chain
    total = next_id
    dummies = total - base
    v_layer = np.concatenate([v_layer, np.asarray(dummy_layers, dtype=np.int64)])
    v_minor_size = np.concatenate([v_minor_size, np.ones(dummies, dtype=np.int64)])
    v_major_size = np.concatenate([v_major_size, np.zeros(dummies, dtype=np.int64)])
    rank = np.concatenate([rank, position.size + np.arange(dummies, dtype=np.float64)])
    su = np.asarray(seg_u, dtype=np.int64)
    sv = np.asarray(seg_v, dtype=np.int64)
    slot = _order_layers(total, v_layer, su, sv, rank)
    minor = _place(total, v_layer, slot, v_minor_size, gaps.minor, su, sv)
    # along the layers: each layer as thick as its thickest box; port layers are border rows
    layers = int(v_layer.max()) + 1 if total else 1
    thickness = np.zeros(layers, dtype=np.int64)
    if n:
        np.maximum.at(thickness, layer + shift, major_size)
    thickness = np.maximum(thickness, 1)
    if entries:
        thickness[0] = 0
    if exits:
        thickness[top_layer] = 0
    gap = np.full(layers, gaps.major, dtype=np.int64)
    if entries:  # below the top border: a row to turn in and a row for the arrow
        gap[0] = max(gaps.major, 3)
    if exits:
        gap[top_layer - 1] = max(gaps.major, 2)
    starts = np.concatenate([[0], np.cumsum(thickness + gap)[:-1]])
    v_major = starts[v_layer]
    # a layer is as thick as its tallest box (often a frame): what nothing feeds (inputs, weights) sits at its
    # bottom, next to its readers; everything else at its top, next to what feeds it
    fed = np.zeros(total, dtype=bool)
    fed[sv] = True
    sources = np.flatnonzero(~fed[:n])
    v_major[sources] += thickness[v_layer[sources]] - major_size[sources]
    # the box: frame rows and columns around everything, stub labels inside
    if framed:
        first_real = starts[shift] if n else 0
        last_real = starts[top_layer - 1] + thickness[top_layer - 1] if n else 0
        top = 0 if entries else int(first_real) - 2
        bottom = int(starts[top_layer]) if exits else int(last_real) + 1
        lo = int((minor).min()) - FRAME_PAD - 1 if total else 0
        hi = int((minor + v_minor_size).max()) + FRAME_PAD if total else 2 * FRAME_PAD + 1
        hi = max(hi, lo + min_minor - 1)
    else:
        top = -1  # row 0: room for the stub labels above the first layer
        bottom = int(starts[-1] + thickness[-1])
        lo = int(minor.min()) - 1 if total else 0
        hi = int((minor + v_minor_size).max()) if total else 1
    minor = minor - lo
    v_major = v_major - top
    placement = Placement(minor[:n], v_major[:n], hi - lo + 1, bottom - top + 1)
    placement.entry_ports = {e: int(minor[vertex_of_entry[e]]) for e in entries}
    placement.exit_ports = {e: int(minor[vertex_of_exit[e]]) for e in exits}
    placement.routes = _route(connections, vertex, chains, minor, v_major, v_minor_size, v_major_size,
                              v_layer, starts - top, starts + thickness - top, port_cells)  # fmt: skip
    return placement


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
    return coord


def _route(connections, vertex, chains, minor, v_major, minor_size, major_size, v_layer, starts, band_end,
           port_cells) -> dict[Connection, list[tuple[int, int]]]:  # fmt: skip
    """Orthogonal polylines: out of the source's far side (at its port when it is an open group), through each
    dummy's lane, a jog in the gap above the target, into the target's near side."""
    minor, v_major, minor_size, major_size = minor.tolist(), v_major.tolist(), minor_size.tolist(), major_size.tolist()
    v_layer, starts, band_end = v_layer.tolist(), starts.tolist(), band_end.tolist()  # plain ints: a hot loop
    ends = [(vertex(c.source, True), vertex(c.target, False)) for c in connections]
    leaving: dict[int, list[int]] = {}
    arriving: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(ends):
        leaving.setdefault(a, []).append(k)
        arriving.setdefault(b, []).append(k)
    first_lane, last_lane = {}, {}  # where each piece heads after leaving its source, and comes from
    for k, (a, b) in enumerate(ends):
        chain = chains[(a, b)]
        first_lane[k] = minor[chain[0]] if chain else minor[b]
        last_lane[k] = minor[chain[-1]] if chain else minor[a]

    def slots(groups: dict[int, list[int]], toward: dict[int, float]) -> dict[int, int]:
        """Each piece's cell on its vertex's side: the side split evenly, in the order of where they head."""
        cell = {}
        for v, members in groups.items():
            lo, size = minor[v], minor_size[v]
            if size <= 2:
                cell.update(dict.fromkeys(members, lo + size // 2))
                continue
            ordered = sorted(members, key=lambda j: (toward[j], j))
            for rank, j in enumerate(ordered):
                cell[j] = lo + (rank + 1) * size // (len(ordered) + 1)
        return cell

    start_cell, end_cell = slots(leaving, first_lane), slots(arriving, last_lane)

    routes: dict[Connection, list[tuple[int, int]]] = {}
    for k, c in enumerate(connections):
        a, b = ends[k]
        start = minor[a] + port_cells[a][1][c.source_port] if c.source_port >= 0 else start_cell[k]
        end = minor[b] + port_cells[b][0][c.target_port] if c.target_port >= 0 else end_cell[k]
        start_major = v_major[a] + major_size[a]  # first cell past the source's far side
        points = [(start, start_major)]
        current = start
        for d in chains[(a, b)]:
            jog = starts[v_layer[d]] - 1
            points += [(current, jog), (minor[d], jog)]
            current = minor[d]
        target_layer = v_layer[b]
        above = starts[target_layer] - 1  # the gap above the target's layer: no box of either layer there
        in_gap = target_layer == 0 or above - 1 >= band_end[target_layer - 1]
        jog = max(above - (1 if in_gap and above - 1 > start_major else 0), start_major)
        points += [(current, jog), (end, jog), (end, v_major[b] - 1)]
        routes[c] = simplify(points)
    return routes


def simplify(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The corners of an orthogonal polyline: repeated points and points inside a straight run dropped."""
    out: list[tuple[int, int]] = []
    for p in points:
        if out and out[-1] == p:
            continue
        if len(out) >= 2 and (out[-2][0] == out[-1][0] == p[0] or out[-2][1] == out[-1][1] == p[1]):
            out[-1] = p
        else:
            out.append(p)
    return out
