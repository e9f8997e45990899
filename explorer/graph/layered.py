"""Sugiyama's layered layout of one container of the graph (the top level, or one open group), vectorised.

The compound layout in graph_layout lays out every open group on its own with these steps and places the
result as one box in its parent, so opening a group lays out that group and its ancestors only. Coordinates
here are (minor, major): major runs along the edges (down in TB, right in LR), minor across them.

A container sees its open child groups as boxes, and the edges that leave or enter it as ports on its border:
an entry port sits on the top border (a layer above every box) and an exit port on the bottom border, so an
edge between groups is drawn piece by piece, each piece inside one container.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from explorer.graph import brandes_koepf
from explorer.graph.model import topological_rank

MAX_SPAN = 6  # edges over more layers are stubs ("→ Add_9_1") that jump to their other end
ORDER_ITERATIONS = 24  # rounds of sweeps, as dagre does
ORDER_PATIENCE = 4  # rounds in a row without fewer crossings before the ordering stops
TRANSPOSE_PASSES = 4
PLACEMENT_PASSES = 6
MAX_TRACKS = 16  # a gap between layers grows to this many rows of horizontal edge pieces, then pieces share
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
    """One drawn piece inside a container. `source`/`target` are element indices; `source < 0` is entry port
    -source-1 (of element (-source-1) % elements: one port per element and outside source) and `target < 0` the
    exit port of element -target-1. `source_port`/`target_port`
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
    # gaps whose edges outnumber the track cap: (minor from, minor to, major of the shared track, sources
    # sharing), so the drawing can say that a run there carries more than one source
    shared_tracks: list[tuple[int, int, int, int]] = field(default_factory=list)
    # each long edge's dummies (one per layer it passes): their cells across, by the edge's two ends, each named
    # ("e", element), ("in", entry port) or ("out", exit port): where they were, when a group opens beside them
    chains: dict[tuple, list[int]] = field(default_factory=dict)


PORT = ("port", 0)  # Placement.chains' first end for a frame's own port (its one cell)


@dataclass
class Gaps:
    minor: int  # between boxes of a layer
    major: int  # between layers, at least (a gap grows with the tracks its edges need)
    stem: int = 1  # rows between a layer and the first track below it
    tracks: int = MAX_TRACKS  # most tracks a gap gets; more edges share them


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
    wanted: np.ndarray | None = None,
    wanted_chains: dict[tuple, list[int]] | None = None,
    wanted_centres: np.ndarray | None = None,
    entry_cells: dict[int, int] | None = None,
    wanted_rows: np.ndarray | None = None,
    changed: np.ndarray | None = None,
) -> Placement:
    """Boxes and routes of one container.

    `layer`/`position` come from order_and_layers; every connection points down a layer or more.
    `port_cells[e]` holds the entry and exit port cells of element e when it is an open child group.
    `wanted[e]` is where element e's box should start across the layers (where it was before a group opened or
    closed; NaN for none): such elements keep their order and stay there unless a grown neighbour pushes them.
    `wanted_chains` (keyed as `Placement.chains` is) gives a long edge's dummies their old cells too, when every
    element has a wanted place: the edges above an opened group then cross each gap where they did, so those gaps
    keep their tracks and the rows above stay. `wanted_centres` (the elements' old centres) order each layer.
    `entry_cells[port]` (a group just opened) is the cell across the top border, from the frame's left border,
    where the edge from that port's source entered the group's closed box: the port goes there, so the edges above
    drop where they did and the gap above needs no track more than before.
    `wanted_rows[e]` is where element e's box started along the layers, from the frame's first cell, before
    (NaN for none); `changed[e]` says its size along them changed (a group opened or closed): the layers down to
    the first changed element's start no higher than they did (a gap keeps rows it no longer needs), so what is
    above an opened group stays where it was relative to it.
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
    entry_of = [e % max(n, 1) for e in entries]  # an entry port's id: its element, plus a multiple of n per source
    entry_rank = position[entry_of] - 0.5 + np.asarray([e // max(n, 1) for e in entries], dtype=np.float64) * 1e-3
    rank = np.concatenate([position, entry_rank, position[exits] + 0.5]).astype(np.float64)
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
    want = np.full(total, np.nan)
    if wanted is not None and n:
        want[:n] = wanted
    entry_of_vertex = {v: e for e, v in vertex_of_entry.items()}
    exit_of_vertex = {v: e for e, v in vertex_of_exit.items()}

    def end_name(v: int) -> tuple[str, int]:  # a chain's end as the caller can name it across layouts
        if v < n:
            return ("e", v)
        return ("in", entry_of_vertex[v]) if v in entry_of_vertex else ("out", exit_of_vertex[v])

    if wanted_chains and n and not np.isnan(want[:n]).any():
        for (a, b), chain in chains.items():
            old = wanted_chains.get((end_name(a), end_name(b)))
            if old is not None and len(old) == len(chain):
                want[chain] = old
        for v in range(n, base):  # the frame's own ports where they were too (their tracks below the border)
            old = wanted_chains.get((PORT, end_name(v)))
            if old is not None:
                want[v] = old[0]
    keys = _wanted_keys(want, minor_size, vertex_of_entry, vertex_of_exit, chains, wanted_centres)
    if keys is not None:
        slot = _slots(v_layer, keys)
    else:
        off_u, off_v = _port_offsets(connections, vertex, chains, port_cells, minor_size, su.size)
        slot = _order_layers(total, v_layer, su, sv, rank, off_u, off_v)
    minor = _place(total, v_layer, slot, v_minor_size, gaps.minor, su, sv, want, base)
    # across: the frame's columns around everything (the top level: one column of margin)
    if framed:
        lo = int((minor).min()) - FRAME_PAD - 1 if total else 0
        hi = int((minor + v_minor_size).max()) + FRAME_PAD if total else 2 * FRAME_PAD + 1
        hi = max(hi, lo + min_minor - 1)
    else:
        lo = int(minor.min()) - 1 if total else 0
        hi = int((minor + v_minor_size).max()) if total else 1
    if entry_cells:
        _put_entry_ports(minor, vertex_of_entry, entry_cells, lo, hi)
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
    # every piece of an edge between two layers gets its own track (row) in the gap between them
    paths = {c: [vertex(c.source, True), *chains[(vertex(c.source, True), vertex(c.target, False))],
                 vertex(c.target, False)] for c in connections}  # fmt: skip
    columns = _pin_columns(connections, paths, minor, v_minor_size, port_cells)
    track_of, tracks_in, shared = _assign_tracks(connections, paths, columns, v_layer, gaps.tracks)
    stem = np.full(layers, gaps.stem, dtype=np.int64)  # per gap below a layer
    if entries:
        stem[0] = max(gaps.stem, 1)  # below the top border: never turn on the border itself
    tracks = np.asarray([tracks_in.get(k + 1, 0) for k in range(layers)])
    gap = np.maximum(gaps.major, stem + tracks + 1)  # the stem, the tracks, the row of the arrowheads
    if entries:  # below the top border: its tracks and the arrows, no more
        gap[0] = max(stem[0] + tracks[0] + 1, 2)
    if exits:  # above the bottom border: the tracks only (the edges go on through the border, no arrow there)
        gap[top_layer - 1] = max(stem[top_layer - 1] + tracks[top_layer - 1], 1)
    starts = np.concatenate([[0], np.cumsum(thickness + gap)[:-1]])
    if wanted_rows is not None and n:
        fed_elements = np.zeros(total, dtype=bool)
        fed_elements[sv] = True
        top_rule = "canvas" if not framed else ("ports" if entries else "title")
        starts = _keep_rows(starts, layer + shift, fed_elements[:n], wanted_rows, changed, top_rule)
    v_major = starts[v_layer]
    # a layer is as thick as its tallest box (often a frame): what nothing feeds (inputs, weights) sits at its
    # bottom, next to its readers; everything else at its top, next to what feeds it
    fed = np.zeros(total, dtype=bool)
    fed[sv] = True
    sources = np.flatnonzero(~fed[:n])
    v_major[sources] += thickness[v_layer[sources]] - major_size[sources]
    # along: the frame's rows (its title row, its bottom border), stub labels inside
    if framed:
        first_real = starts[shift] if n else 0
        last_real = starts[top_layer - 1] + thickness[top_layer - 1] if n else 0
        top = 0 if entries else int(first_real) - 2
        bottom = int(starts[top_layer]) if exits else int(last_real) + 1
    else:
        top = -1  # row 0: room for the stub labels above the first layer
        bottom = int(starts[-1] + thickness[-1])
    minor = minor - lo
    v_major = v_major - top
    placement = Placement(minor[:n], v_major[:n], hi - lo + 1, bottom - top + 1)
    placement.chains = {(end_name(a), end_name(b)): minor[chain].tolist() for (a, b), chain in chains.items() if chain}
    placement.chains.update({(PORT, end_name(v)): [int(minor[v])] for v in range(n, base)})
    placement.entry_ports = {e: int(minor[vertex_of_entry[e]]) for e in entries}
    placement.exit_ports = {e: int(minor[vertex_of_exit[e]]) for e in exits}
    band_end = starts + thickness - top
    track_row = {}  # (gap below layer, track) → row
    for k in range(layers):
        for t in range(tracks_in.get(k + 1, 0)):
            track_row[(k + 1, t)] = int(band_end[k] + stem[k] + t)
    placement.routes = {c: _polyline(paths[c], columns[c], [track_row.get((int(v_layer[q]), track_of.get((c, i), -1)))
                                                            for i, q in enumerate(paths[c][1:])],
                                     v_major, v_major_size, -lo) for c in connections}  # fmt: skip
    placement.shared_tracks = [(a - lo, b - lo, track_row[(k, t)], count) for k, (t, a, b, count) in shared.items()]
    return placement


def last_kept_layer(layer: np.ndarray, changed: np.ndarray | None) -> int:
    """The deepest layer a relayout keeps the rows of: the first changed element's, or every layer."""
    return int(layer[changed].min()) if changed is not None and changed.any() else int(layer.max())


def _keep_rows(starts: np.ndarray, layer: np.ndarray, fed: np.ndarray, wanted_rows: np.ndarray,
               changed: np.ndarray | None, top_rule: str) -> np.ndarray:  # fmt: skip
    """Layer starts grown (never shrunk) so each layer down to the first changed element's starts no higher
    than its fed elements did (a source sits at its layer's bottom, so says nothing of where the layer began).
    Rows count from the frame's first cell: the port row on top ("ports"), two rows above the first layer
    ("title"), or one row above the canvas's first layer ("canvas"), as place_container places them."""
    first = int(layer.min())
    want = np.full(starts.size, np.inf)
    known = ~np.isnan(wanted_rows) & fed
    np.minimum.at(want, layer[known], wanted_rows[known])
    starts = starts.copy()
    top = {"ports": 0, "title": int(starts[first]) - 2, "canvas": -1}[top_rule]  # the first layer never moves
    for k in range(first + (1 if top_rule == "title" else 0), last_kept_layer(layer, changed) + 1):
        if np.isfinite(want[k]) and want[k] > starts[k] - top:
            starts[k:] += int(want[k]) - int(starts[k] - top)
    return starts


def _put_entry_ports(
    minor: np.ndarray, vertex_of_entry: dict[int, int], cells: dict[int, int], lo: int, hi: int
) -> None:
    """Entry ports to the cells where their sources' edges entered the closed box, when each lies inside the
    frame's top border and no two sources' ports would share a cell (ports of one source may: it is one trunk)."""
    wanted = {v: lo + cells[e] for e, v in vertex_of_entry.items() if e in cells and lo < lo + cells[e] < hi}
    if not wanted:
        return
    kept = {int(minor[v]) for v in vertex_of_entry.values() if v not in wanted}
    if kept & set(wanted.values()):
        return  # a kept port on a moved one's cell
    for v, cell in wanted.items():
        minor[v] = cell


def _wanted_keys(want, minor_size, vertex_of_entry, vertex_of_exit, chains, centres=None) -> np.ndarray | None:
    """The order across each layer when every element has a wanted place: elements by their wanted centres,
    ports beside their element, a long edge's dummies spaced evenly between its two ends; None otherwise."""
    n = int(minor_size.size)
    if n == 0 or np.isnan(want[:n]).any():
        return None
    keys = want.copy()
    keys[:n] += minor_size / 2.0
    if centres is not None:  # where they were: the order they had
        keys[:n] = np.where(np.isnan(centres), keys[:n], centres)
    for e, v in vertex_of_entry.items():  # a port that was there keeps its order (its row holds ports only)
        keys[v] = want[v] + 0.5 if not np.isnan(want[v]) else keys[e % n] - 0.25 + (e // n) * 1e-3
    for e, v in vertex_of_exit.items():
        keys[v] = want[v] + 0.5 if not np.isnan(want[v]) else keys[e] + 0.25
    for (a, b), chain in chains.items():
        for k, d in enumerate(chain, 1):
            if np.isnan(want[d]):  # a dummy without an old cell: spaced between its ends
                keys[d] = keys[a] + (keys[b] - keys[a]) * k / (len(chain) + 1)
            else:
                keys[d] = want[d] + 0.5
    return keys


def _port_offsets(connections, vertex, chains, port_cells, minor_size, segments: int) -> tuple[np.ndarray, ...]:
    """Per segment: where across its upper and its lower vertex it ends, as a fraction of the box from its middle
    (-0.5 left border, +0.5 right border), for ends at an open child group's port; 0 elsewhere. The ordering reads
    a child's ports as places within its slot (ELK's port-aware barycentres): two edges into one group through
    ports in one order cross when their sources stand in the other."""
    off_u = np.zeros(segments)
    off_v = np.zeros(segments)
    first_segment: dict[tuple[int, int], int] = {}
    at = 0
    for pair, chain in chains.items():  # the segments were made in this order, len(chain) + 1 per pair
        first_segment[pair] = at
        at += len(chain) + 1
    for c in connections:
        if c.source_port < 0 and c.target_port < 0:
            continue
        a, b = vertex(c.source, True), vertex(c.target, False)
        first = first_segment[(a, b)]
        if c.source_port >= 0:
            off_u[first] = _fraction(port_cells[a][1][c.source_port], int(minor_size[a]))
        if c.target_port >= 0:
            off_v[first + len(chains[(a, b)])] = _fraction(port_cells[b][0][c.target_port], int(minor_size[b]))
    return off_u, off_v


def _fraction(cell: int, width: int) -> float:
    return min(max((cell + 0.5) / max(width, 1) - 0.5, -0.49), 0.49)


def _order_layers(
    total: int,
    v_layer: np.ndarray,
    seg_u: np.ndarray,
    seg_v: np.ndarray,
    rank: np.ndarray,
    off_u: np.ndarray | None = None,
    off_v: np.ndarray | None = None,
) -> np.ndarray:
    """Each vertex's slot in its layer, as the layered-layout literature orders them (Graphviz dot, dagre, ELK):
    sweeps down and up, one layer at a time, each layer sorted by the barycentre of its neighbours in the layer
    just placed (vertices without any keep their place); then adjacent pairs transposed while that removes
    crossings; the ordering with the fewest crossings seen is kept. Long edges are chains of dummy vertices, one
    per layer, so their runs take part like boxes. At most ORDER_ITERATIONS rounds, fewer when
    ORDER_PATIENCE rounds in a row find nothing better: bounded whatever the graph. `off_u`/`off_v` say where
    across its end vertices each segment ends (see _port_offsets)."""
    slot = _slots(v_layer, rank)
    if off_u is None or off_v is None:
        off_u = off_v = np.zeros(seg_u.size)
    if seg_u.size == 0:
        return slot
    layers = int(v_layer.max()) + 1
    members = _layer_members(v_layer, slot, layers)
    if max(len(m) for m in members) < 2:
        return slot
    # every segment joins layer l to l + 1 (dummies make it so): per layer, the segments below it
    seg_layer = v_layer[seg_u]
    by_layer = np.argsort(seg_layer, kind="stable")
    bounds = np.searchsorted(seg_layer[by_layer], np.arange(layers + 1))
    below = [by_layer[bounds[k] : bounds[k + 1]] for k in range(layers)]
    up_nbrs, down_nbrs = _neighbour_ends(total, seg_u, seg_v, off_u, off_v)
    position = slot.astype(np.int64)
    ends = (seg_u, seg_v, off_u, off_v)
    best, best_crossings = position.copy(), _crossings(position, *ends, below)
    still = 0
    for iteration in range(ORDER_ITERATIONS):
        if best_crossings == 0:
            break
        down = iteration % 2 == 0
        bias_right = (iteration // 2) % 2 == 1  # ties broken the other way every second round (dagre does so)
        for k in range(1, layers) if down else range(layers - 2, -1, -1):
            _sort_by_barycentre(members[k], position, up_nbrs if down else down_nbrs, bias_right)
        crossings = _crossings(position, *ends, below)
        if crossings < best_crossings:
            best, best_crossings, still = position.copy(), crossings, 0
        else:
            still += 1
            if still >= ORDER_PATIENCE:
                break
    if best_crossings:  # the best sweep's order, then neighbours transposed while that removes crossings
        members = _layer_members(v_layer, best, layers)
        _transpose(members, best, up_nbrs, down_nbrs)
    return best


def _layer_members(v_layer: np.ndarray, slot: np.ndarray, layers: int) -> list[list[int]]:
    order = np.lexsort((slot, v_layer))
    layer_sorted = v_layer[order]
    bounds = np.searchsorted(layer_sorted, np.arange(layers + 1))
    return [order[bounds[k] : bounds[k + 1]].tolist() for k in range(layers)]


def _neighbours(total: int, seg_u: np.ndarray, seg_v: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Per vertex: its neighbours in the layer above, and in the layer below."""
    up: list[list[int]] = [[] for _ in range(total)]
    down: list[list[int]] = [[] for _ in range(total)]
    for u, v in zip(seg_u.tolist(), seg_v.tolist(), strict=True):
        up[v].append(u)
        down[u].append(v)
    return up, down


Ends = list[list[tuple[int, float]]]


def _neighbour_ends(total: int, seg_u: np.ndarray, seg_v: np.ndarray, off_u: np.ndarray,
                    off_v: np.ndarray) -> tuple[Ends, Ends]:  # fmt: skip
    """Per vertex: its neighbours in the layer above and in the layer below, each with where across it the
    segment ends (a fraction of its slot, see _port_offsets)."""
    up: Ends = [[] for _ in range(total)]
    down: Ends = [[] for _ in range(total)]
    for u, v, fu, fv in zip(seg_u.tolist(), seg_v.tolist(), off_u.tolist(), off_v.tolist(), strict=True):
        up[v].append((u, fu))
        down[u].append((v, fv))
    return up, down


def _sort_by_barycentre(layer: list[int], position: np.ndarray, nbrs: Ends, bias_right: bool) -> None:
    """Reorder one layer (in place, `position` updated) by the mean position of each vertex's neighbours in the
    fixed layer; a vertex with none keeps its index, the others fill the remaining indices in barycentre order."""
    if len(layer) < 2:
        return
    sortable, fixed = [], {}
    for index, v in enumerate(layer):
        near = nbrs[v]
        if near:
            bary = sum(int(position[w]) + f for w, f in near) / len(near)
            sortable.append((bary, -index if bias_right else index, v))
        else:
            fixed[index] = v
    if len(sortable) < 2 and not fixed:
        return
    sortable.sort()
    queue = iter(s[2] for s in sortable)
    for index in range(len(layer)):
        layer[index] = fixed[index] if index in fixed else next(queue)
    for index, v in enumerate(layer):
        position[v] = index


def _transpose(members: list[list[int]], position: np.ndarray, up: Ends, down: Ends) -> None:
    """Swap adjacent vertices of a layer while that removes crossings with both neighbouring layers (dot's
    transpose), a bounded number of passes. Neighbour positions are read as sorted lists once per layer (the
    neighbouring layers do not move while one layer is transposed)."""
    pos = position.tolist()
    for _ in range(TRANSPOSE_PASSES):
        improved = False
        for layer in members:
            if len(layer) < 2:
                continue
            near = {v: (sorted(pos[w] + f for w, f in up[v]), sorted(pos[w] + f for w, f in down[v])) for v in layer}
            for index in range(len(layer) - 1):
                a, b = layer[index], layer[index + 1]
                (a_up, a_down), (b_up, b_down) = near[a], near[b]
                now = _inversions(a_up, b_up) + _inversions(a_down, b_down)
                if now == 0:
                    continue
                if _inversions(b_up, a_up) + _inversions(b_down, a_down) < now:
                    layer[index], layer[index + 1] = b, a
                    pos[a], pos[b] = index + 1, index
                    improved = True
        if not improved:
            break
    position[:] = pos


def _inversions(left: list[float], right: list[float]) -> int:
    """Crossings between the edges of a vertex standing left (to the sorted places `left`) and of the vertex
    right of it (to `right`): pairs whose places are in the opposite order."""
    if not left or not right:
        return 0
    return sum(bisect.bisect_left(right, x) for x in left)


def _crossings(position: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray, off_u: np.ndarray | None,
               off_v: np.ndarray | None, below: list[np.ndarray]) -> int:  # fmt: skip
    """Crossings of all segments, layer gap by layer gap: pairs whose ends are in opposite orders (an end's place
    is its vertex's slot plus where across the vertex it ends)."""
    total = 0
    for segments in below:
        if segments.size < 2:
            continue
        pu, pv = position[seg_u[segments]], position[seg_v[segments]]
        if off_u is not None and off_v is not None:
            pu, pv = pu + off_u[segments], pv + off_v[segments]
        if segments.size <= 512:
            du = pu[:, None] - pu[None, :]
            dv = pv[:, None] - pv[None, :]
            total += int(np.count_nonzero((du * dv) < 0)) // 2
        else:  # inversions of the lower ends taken in the order of the upper ones, O(E log E)
            order = np.lexsort((pv, pu))
            seen: list[int] = []
            for value in pv[order].tolist():
                at = bisect.bisect_right(seen, value)
                total += len(seen) - at
                seen.insert(at, value)
    return total


def _slots(v_layer: np.ndarray, key: np.ndarray) -> np.ndarray:
    order = np.lexsort((key, v_layer))
    slot = np.empty(v_layer.size, dtype=np.int64)
    layer_sorted = v_layer[order]
    starts = np.searchsorted(layer_sorted, layer_sorted, side="left")
    slot[order] = np.arange(v_layer.size) - starts
    return slot


def _place(total: int, v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int,
           seg_u: np.ndarray, seg_v: np.ndarray, wanted: np.ndarray, first_dummy: int) -> np.ndarray:  # fmt: skip
    """Minor-axis coordinates, order and gaps kept. Laid out afresh: Brandes-Köpf (long edges straight, each box
    over a median neighbour). Where elements have wanted places (a group opened beside them): each box pulled
    toward the mean centre of its neighbours or to its wanted place.

    Within a layer (in slot order) z = coord - packed offset must not decrease. A pass asks every box for the
    centre of its neighbours (`want`), then takes the mean of the two nearest non-decreasing sequences (a
    running max from the left and a running min from the right), which keeps the gaps and centres the layer
    on what it wants; chains end up straight.
    """
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    has_want = ~np.isnan(wanted)
    if seg_u.size and not has_want.any():
        return _brandes_koepf(total, v_layer, slot, size, gap, seg_u, seg_v, first_dummy)
    order, layer_sorted, offset = _packed(v_layer, slot, size, gap)
    size_sorted = size[order].astype(np.float64)
    last = np.searchsorted(layer_sorted, layer_sorted, side="right") - 1
    layer_width = offset[last] + size_sorted[last]
    z = -layer_width / 2.0  # layers start centred on 0
    size_f = size.astype(np.float64)
    passes = PLACEMENT_PASSES if seg_u.size or has_want.any() else 0
    for _ in range(passes):
        coord = np.empty(total)
        coord[order] = z + offset
        centre = coord + size_f / 2.0
        pull = np.bincount(seg_u, weights=centre[seg_v], minlength=total)
        pull += np.bincount(seg_v, weights=centre[seg_u], minlength=total)
        degree = np.bincount(seg_u, minlength=total) + np.bincount(seg_v, minlength=total)
        want = np.where(degree > 0, pull / np.maximum(degree, 1) - size_f / 2.0, coord)
        want = np.where(has_want, wanted, want)[order]
        wz = want - offset
        big = 4.0 * (float(np.abs(wz).max()) + float(offset.max()) + 16.0)
        lift = layer_sorted * big
        from_left = np.maximum.accumulate(wz + lift) - lift
        from_right = np.minimum.accumulate((wz + lift)[::-1])[::-1] - lift
        z = (from_left + from_right) / 2.0
    coord_sorted = np.round(z).astype(np.int64) + offset.astype(np.int64)  # rounding keeps z non-decreasing
    coord = np.empty(total, dtype=np.int64)
    coord[order] = coord_sorted
    if has_want.any():
        coord = _settle(order, layer_sorted, size, gap, coord, wanted)
    return coord


def _packed(v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int) -> tuple[np.ndarray, ...]:
    """The vertices in layer-then-slot order, their layers, and each one's first cell were its layer packed from
    0 with `gap` between boxes: a placement keeps order and gaps when coord - offset never decreases in a layer."""
    order = np.lexsort((slot, v_layer))
    layer_sorted = v_layer[order]
    size_sorted = size[order].astype(np.int64)
    packed = np.cumsum(size_sorted + gap) - (size_sorted + gap)
    first = np.searchsorted(layer_sorted, layer_sorted, side="left")
    return order, layer_sorted, packed - packed[first]


def _brandes_koepf(total: int, v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int,
                   seg_u: np.ndarray, seg_v: np.ndarray, first_dummy: int) -> np.ndarray:  # fmt: skip
    """Left cells from brandes_koepf's centres, rounded, then pushed right where rounding left a gap short."""
    layers = int(v_layer.max()) + 1
    members = _layer_members(v_layer, slot, layers)
    up, down = _neighbours(total, seg_u, seg_v)
    dummy = (np.arange(total) >= first_dummy).tolist()
    centre = np.asarray(brandes_koepf.place(members, up, down, size.tolist(), gap, dummy))
    left = np.floor(centre - size / 2.0).astype(np.int64)
    order, layer_sorted, offset = _packed(v_layer, slot, size, gap)
    z = left[order] - offset  # non-decreasing within a layer when the gaps hold
    lift = layer_sorted * (4 * (int(np.abs(z).max()) + int(offset.max()) + 16))
    z = np.maximum.accumulate(z + lift) - lift
    coord = np.empty(total, dtype=np.int64)
    coord[order] = z + offset
    return coord


def _settle(order, layer_sorted, size, gap, coord, wanted) -> np.ndarray:
    """Where elements have wanted places (a group opened beside them): each sits exactly there unless something
    that does not fit pushes it right, and what has none (a long edge's dummy) makes room instead of pushing:
    right to left, a dummy stays left of the next wanted box; left to right, nothing overlaps."""
    coord = coord.copy()
    size_list, want = size.tolist(), wanted.tolist()
    layers = np.flatnonzero(np.diff(np.concatenate([[-1], layer_sorted, [layer_sorted[-1] + 1]]))).tolist()
    ordered = order.tolist()
    for lo, hi in zip(layers[:-1], layers[1:], strict=False):
        members = ordered[lo:hi]
        place: dict[int, int] = {}
        limit = None
        for v in reversed(members):
            if want[v] == want[v]:  # not NaN
                place[v] = int(np.floor(want[v]))
            else:
                place[v] = int(coord[v]) if limit is None else min(int(coord[v]), limit - size_list[v])
            limit = place[v] - gap
        end = None
        for v in members:
            if end is not None and place[v] < end + gap:
                place[v] = end + gap
            end = place[v] + size_list[v]
            coord[v] = place[v]
    return coord


def _pin_columns(connections, paths, minor, size, port_cells) -> dict[Connection, list[tuple[int, int]]]:
    """Per piece and per vertex on its path: the column it leaves the vertex at and the column it arrives at.

    A box's pieces all leave from the middle of its far side (edges of one source share a trunk); an open child
    group's leave at its exit ports; pieces arriving at a box get distinct cells along its near side, in the
    order of where they come from, so no two arrows share a cell; a dummy (a long edge passing a layer) is one
    column."""
    minor, size = minor.tolist(), size.tolist()
    arriving: dict[int, list[Connection]] = {}
    for c in connections:
        arriving.setdefault(paths[c][-1], []).append(c)
    end_cell: dict[Connection, int] = {}
    for v, members in arriving.items():
        came_from = {c: minor[paths[c][-2]] + (size[paths[c][-2]] // 2 if len(paths[c]) == 2 else 0) for c in members}
        ordered = sorted(members, key=lambda c: (came_from[c], c))
        end_cell.update(zip(ordered, _spread([came_from[c] for c in ordered], minor[v], size[v]), strict=True))
    columns = {}
    for c in connections:
        path = paths[c]
        a, b = path[0], path[-1]
        start = minor[a] + port_cells[a][1][c.source_port] if c.source_port >= 0 else minor[a] + size[a] // 2
        end = minor[b] + port_cells[b][0][c.target_port] if c.target_port >= 0 else end_cell[c]
        middle = [(minor[d], minor[d]) for d in path[1:-1]]
        columns[c] = [(start, start), *middle, (end, end)]  # (arrives at, leaves from) per vertex
    return columns


def _spread(wanted: list[int], lo: int, width: int) -> list[int]:
    """Cells along a box side (lo .. lo + width - 1, corners excluded where there is room) for arrows that
    would each arrive straight below where they come from (`wanted`, sorted): as near to that as the side
    allows, two cells apart where it has room (one where it has not, shared only when even that does not fit)."""
    first, last = (lo + 1, lo + width - 2) if width > 2 else (lo, lo + width - 1)
    count = len(wanted)
    room = last - first + 1
    step = 2 if (count - 1) * 2 < room else 1 if count <= room else 0
    cells = [min(max(w, first), last) for w in wanted]
    for k in range(1, count):  # push right what sits too close to its left neighbour
        cells[k] = max(cells[k], cells[k - 1] + step)
    if cells and cells[-1] > last:  # then back from the right edge
        cells[-1] = last
        for k in range(count - 2, -1, -1):
            cells[k] = min(cells[k], cells[k + 1] - step)
    return [min(max(c, first), last) for c in cells]


def _assign_tracks(connections, paths, columns, v_layer, cap) -> tuple[dict, dict[int, int], dict]:
    """Tracks in each gap between layers: one per net (the pieces that leave one vertex at one column share
    it: a trunk), so pieces of different sources never share a cell of a horizontal run. A net whose top pin
    sits where another net drops to its target is placed above it, so their vertical runs never meet (the left
    edge algorithm with vertical constraints, Hashimoto and Stevens); a gap with more than `cap` nets lets the
    rest share the least crowded tracks. Returns (piece, step) → track, gap (layer below it) → tracks, and for
    each gap where nets share: gap → (the most shared track, its leftmost and rightmost cell, nets sharing)."""
    nets: dict[tuple[int, int, int], dict] = {}  # (gap, column, vertex) → its pins and pieces
    for c in connections:
        path, cols = paths[c], columns[c]
        for i in range(len(path) - 1):
            p, q = path[i], path[i + 1]
            top, bottom = cols[i][1], cols[i + 1][0]
            key = (int(v_layer[q]), top, p)
            net = nets.setdefault(key, {"top": top, "bottoms": [], "steps": []})
            net["bottoms"].append(bottom)
            net["steps"].append((c, i))
    by_gap: dict[int, list[tuple[int, int, int]]] = {}
    for key, net in nets.items():
        lo, hi = min(net["top"], *net["bottoms"]), max(net["top"], *net["bottoms"])
        net["span"] = (lo, hi)
        if lo < hi:  # a straight drop needs no track
            by_gap.setdefault(key[0], []).append(key)
    track_of: dict[tuple[Connection, int], int] = {}
    tracks_in: dict[int, int] = {}
    shared: dict[int, tuple[int, int, int, int]] = {}
    for gap_layer, keys in by_gap.items():
        keys.sort(key=lambda k: (nets[k]["span"], k))
        drops: dict[int, list[int]] = {}  # column → nets that drop to a target there
        for j, k in enumerate(keys):
            for bottom in nets[k]["bottoms"]:
                drops.setdefault(bottom, []).append(j)
        below: list[list[int]] = [[] for _ in keys]  # j → nets that must sit below net j
        above_count = [0] * len(keys)
        for j, k in enumerate(keys):
            for other in drops.get(nets[k]["top"], []):
                if other != j:
                    below[j].append(other)
                    above_count[other] += 1
        if len(keys) <= PREFERRED_NETS:
            _prefer_fewer_crossings([nets[k] for k in keys], below, above_count)
        # Kahn over the constraints, ties by the left end; a cycle is broken at its leftmost net
        ready = [j for j in range(len(keys)) if above_count[j] == 0]
        heapq.heapify(ready)
        floor = [0] * len(keys)
        overflow = 0
        rows: list[list[tuple[int, int]]] = []
        placed = [False] * len(keys)
        pending = len(keys)
        while pending:
            if not ready:
                j = next(j for j in range(len(keys)) if not placed[j])
            else:
                j = heapq.heappop(ready)
                if placed[j]:
                    continue
            placed[j] = True
            pending -= 1
            lo, hi = nets[keys[j]]["span"]
            track = floor[j]
            while track < len(rows) and any(a <= hi and lo <= b for a, b in rows[track]):
                track += 1
            if track >= cap:  # full: share the track with the fewest runs
                track = min(range(cap), key=lambda t: (len(rows[t]) if t < len(rows) else 0, t))
                overflow += 1
            while track >= len(rows):
                rows.append([])
            rows[track].append((lo, hi))
            for other in below[j]:
                floor[other] = max(floor[other], track + 1)
                above_count[other] -= 1
                if above_count[other] == 0:
                    heapq.heappush(ready, other)
            for step in nets[keys[j]]["steps"]:
                track_of[step] = track
        tracks_in[gap_layer] = len(rows)
        if overflow:
            busiest = max(range(len(rows)), key=lambda t: (len(rows[t]), -t))
            runs = rows[busiest]
            shared[gap_layer] = (busiest, min(a for a, _ in runs), max(b for _, b in runs), overflow)
    return track_of, tracks_in, shared


PREFERRED_NETS = 96  # a gap with at most this many nets also orders them for fewer crossings (quadratic in nets)


def _prefer_fewer_crossings(nets: list[dict], below: list[list[int]], above_count: list[int]) -> None:
    """Add "sits above" constraints between nets whose spans overlap, for the order that crosses less.

    Net A above net B: A's drops to its targets pass B's track (a crossing each where B's run spans them) and
    B's rise from its source does not meet A's run; B above A, the other way round. Each overlapping pair
    prefers the cheaper order; preferences are added by how much they save, and one that would close a cycle
    with the constraints already there (the must-not-overlap ones first) is dropped, so Kahn's order stays
    total. Reachability is kept as bit sets: adding a constraint is linear in the gap's nets."""
    count = len(nets)
    order = _topological(count, below, above_count)
    if order is None:  # the hard constraints already hold a cycle (broken later at its leftmost net)
        return
    reach = [0] * count  # j → nets that must sit below j, transitively (bit set)
    for j in reversed(order):
        for other in below[j]:
            reach[j] |= reach[other] | (1 << other)
    wishes = []
    for a in range(count):
        lo_a, hi_a = nets[a]["span"]
        for b in range(a + 1, count):
            lo_b, hi_b = nets[b]["span"]
            if hi_a < lo_b or hi_b < lo_a:
                continue
            a_above = sum(lo_b < x < hi_b for x in nets[a]["bottoms"]) + (lo_a < nets[b]["top"] < hi_a)
            b_above = sum(lo_a < x < hi_a for x in nets[b]["bottoms"]) + (lo_b < nets[a]["top"] < hi_b)
            if a_above != b_above:
                upper, lower = (a, b) if a_above < b_above else (b, a)
                wishes.append((-abs(a_above - b_above), upper, lower))
    wishes.sort()
    for _, upper, lower in wishes:
        if reach[upper] >> lower & 1 or reach[lower] >> upper & 1:
            continue  # already implied, or the other way round is
        below[upper].append(lower)
        above_count[lower] += 1
        gained = reach[lower] | (1 << lower)
        for j in range(count):
            if j == upper or reach[j] >> upper & 1:
                reach[j] |= gained


def _topological(count: int, below: list[list[int]], above_count: list[int]) -> list[int] | None:
    waiting = above_count[:]
    ready = [j for j in range(count) if waiting[j] == 0]
    order = []
    while ready:
        j = ready.pop()
        order.append(j)
        for other in below[j]:
            waiting[other] -= 1
            if waiting[other] == 0:
                ready.append(other)
    return order if len(order) == count else None


def _polyline(path, cols, rows, v_major, major_size, dx) -> list[tuple[int, int]]:
    """A piece's corners: down from its source's far side, along its track in each gap (a straight drop has
    none), down through each dummy's layer, and into its target's near side (the cell above it)."""
    a, b = path[0], path[-1]
    points = [(cols[0][1] + dx, int(v_major[a] + major_size[a]))]
    for i, row in enumerate(rows):
        if row is not None:  # a straight drop has no track
            points += [(cols[i][1] + dx, row), (cols[i + 1][0] + dx, row)]
    points.append((cols[-1][0] + dx, int(v_major[b]) - 1))
    return simplify(points)


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
