"""Routing, the last of Sugiyama's steps: where each piece of an edge leaves and enters its boxes, its own track
in each gap between layers (ordered so fewer pieces cross), and its polyline in cells."""

from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np


class Connection(NamedTuple):
    """One drawn piece inside a container. `source`/`target` are element indices; `source < 0` is entry port
    -source-1 (of element (-source-1) % elements: one port per element and outside source) and `target < 0` the
    exit port of element -target-1. `source_port`/`target_port`
    give the cell across the box where the piece leaves or enters a child group (its own port), else -1."""

    source: int
    source_port: int
    target: int
    target_port: int


# per open child group (its element index): its entry and its exit port cells, element → cell across its box
PortCells = dict[int, tuple[dict[int, int], dict[int, int]]]


def pin_columns(connections: list[Connection], paths: dict[Connection, list[int]], minor: np.ndarray,
                size: np.ndarray, port_cells: PortCells) -> dict[Connection, list[tuple[int, int]]]:  # fmt: skip
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
        end_cell.update(zip(ordered, spread([came_from[c] for c in ordered], minor[v], size[v]), strict=True))
    columns = {}
    for c in connections:
        path = paths[c]
        a, b = path[0], path[-1]
        start = minor[a] + port_cells[a][1][c.source_port] if c.source_port >= 0 else minor[a] + size[a] // 2
        end = minor[b] + port_cells[b][0][c.target_port] if c.target_port >= 0 else end_cell[c]
        middle = [(minor[d], minor[d]) for d in path[1:-1]]
        columns[c] = [(start, start), *middle, (end, end)]  # (arrives at, leaves from) per vertex
    return columns


def spread(wanted: list[int], lo: int, width: int) -> list[int]:
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


def assign_tracks(connections: list[Connection], paths: dict[Connection, list[int]],
                  columns: dict[Connection, list[tuple[int, int]]], v_layer: np.ndarray,
                  cap: int) -> tuple[dict, dict[int, int], dict]:  # fmt: skip
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
            prefer_fewer_crossings([nets[k] for k in keys], below, above_count)
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


def prefer_fewer_crossings(nets: list[dict], below: list[list[int]], above_count: list[int]) -> None:
    """Add "sits above" constraints between nets whose spans overlap, for the order that crosses less.

    Net A above net B: A's drops to its targets pass B's track (a crossing each where B's run spans them) and
    B's rise from its source does not meet A's run; B above A, the other way round. Each overlapping pair
    prefers the cheaper order; preferences are added by how much they save, and one that would close a cycle
    with the constraints already there (the must-not-overlap ones first) is dropped, so Kahn's order stays
    total. Reachability is kept as bit sets: adding a constraint is linear in the gap's nets."""
    count = len(nets)
    order = topological(count, below, above_count)
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


def topological(count: int, below: list[list[int]], above_count: list[int]) -> list[int] | None:
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


def polyline(path: list[int], cols: list[tuple[int, int]], rows: list[int | None], v_major: np.ndarray,
             major_size: np.ndarray, dx: int) -> list[tuple[int, int]]:  # fmt: skip
    """A piece's corners: down from its source's far side, along its track in each gap (a straight drop has
    none), down through each dummy's layer, and into its target's near side (the cell above it)."""
    a, b = path[0], path[-1]
    points = [(cols[0][1] + dx, int(v_major[a] + major_size[a]))]
    for i, row in enumerate(rows):
        if row is not None:  # a straight drop has no track
            points += [(cols[i][1] + dx, row), (cols[i + 1][0] + dx, row)]
    points.append((cols[-1][0] + dx, int(v_major[b]) - 1))
    corners = simplify(points)
    return corners if len(corners) > 1 else corners * 2  # a one-row drop (one-line boxes): its arrowhead's cell


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
