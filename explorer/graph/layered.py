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

import numpy as np

from explorer.graph.ordering import order_layers, port_offsets, slots, wanted_keys
from explorer.graph.placement import keep_rows, place, put_entry_ports
from explorer.graph.routing import Connection, assign_tracks, pin_columns, polyline

MAX_SPAN = 6  # edges over more layers are stubs ("→ Add_9_1") that jump to their other end
MAX_TRACKS = 16  # a gap between layers grows to this many rows of horizontal edge pieces, then pieces share
FRAME_PAD = 2  # cells between a frame's side and what it holds
PORT = ("port", 0)  # Placement.chains' first end for a frame's own port (its one cell)


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
    segments_of: dict[tuple[int, int], tuple[int, int]] = {}  # each pair's first and last segment
    dummy_layers: list[int] = []
    next_id = base
    for a, b in pairs:
        span = int(v_layer[b] - v_layer[a])
        chain = list(range(next_id, next_id + span - 1))
        next_id += len(chain)
        dummy_layers.extend(range(int(v_layer[a]) + 1, int(v_layer[b])))
        path = [a, *chain, b]
        segments_of[(a, b)] = (len(seg_u), len(seg_u) + len(chain))
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
    keys = wanted_keys(want, minor_size, vertex_of_entry, vertex_of_exit, chains, wanted_centres)
    if keys is not None:
        slot = slots(v_layer, keys)
    else:
        off_u, off_v = port_offsets(connections, vertex, segments_of, port_cells, minor_size, su.size)
        slot = order_layers(total, v_layer, su, sv, rank, off_u, off_v)
    minor = place(total, v_layer, slot, v_minor_size, gaps.minor, su, sv, want, base)
    # across: the frame's columns around everything (the top level: one column of margin)
    if framed:
        lo = int((minor).min()) - FRAME_PAD - 1 if total else 0
        hi = int((minor + v_minor_size).max()) + FRAME_PAD if total else 2 * FRAME_PAD + 1
        hi = max(hi, lo + min_minor - 1)
    else:
        lo = int(minor.min()) - 1 if total else 0
        hi = int((minor + v_minor_size).max()) if total else 1
    if entry_cells:
        put_entry_ports(minor, vertex_of_entry, entry_cells, lo, hi)
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
    columns = pin_columns(connections, paths, minor, v_minor_size, port_cells)
    track_of, tracks_in, shared = assign_tracks(connections, paths, columns, v_layer, gaps.tracks)
    stem = np.full(layers, gaps.stem, dtype=np.int64)  # per gap below a layer
    if entries:
        stem[0] = max(gaps.stem, 1)  # below the top border: never turn on the border itself
    tracks = np.asarray([tracks_in.get(k + 1, 0) for k in range(layers)])
    if gaps.major < 2:  # one-line boxes: a gap that nothing turns in needs the arrowheads' row only
        stem = np.where(tracks > 0, stem, 0)
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
        starts = keep_rows(starts, layer + shift, fed_elements[:n], wanted_rows, changed, top_rule)
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
    placement.routes = {c: polyline(paths[c], columns[c], [track_row.get((int(v_layer[q]), track_of.get((c, i), -1)))
                                                            for i, q in enumerate(paths[c][1:])],
                                     v_major, v_major_size, -lo) for c in connections}  # fmt: skip
    placement.shared_tracks = [(a - lo, b - lo, track_row[(k, t)], count) for k, (t, a, b, count) in shared.items()]
    return placement
