"""Ordering, Sugiyama's second step: each layer's order, by barycentre sweeps and transposition (Graphviz dot,
dagre, ELK), an open child group's edges read at its ports; or, for a relayout that keeps places, the order of
where everything was."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from explorer.graph.routing import Connection, PortCells

ORDER_ITERATIONS = 24  # rounds of sweeps, as dagre does


ORDER_PATIENCE = 4  # rounds in a row without fewer crossings before the ordering stops


TRANSPOSE_PASSES = 4


def wanted_keys(want: np.ndarray, minor_size: np.ndarray, vertex_of_entry: dict[int, int],
                vertex_of_exit: dict[int, int], chains: dict[tuple[int, int], list[int]],
                centres: np.ndarray | None = None) -> np.ndarray | None:  # fmt: skip
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


def port_offsets(connections: list[Connection], vertex: Callable[[int, bool], int],
                 segments_of: dict[tuple[int, int], tuple[int, int]], port_cells: PortCells, minor_size: np.ndarray,
                 segments: int) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per segment: where across its upper and its lower vertex it ends, as a fraction of the box from its middle
    (-0.5 left border, +0.5 right border), for ends at an open child group's port; 0 elsewhere. The ordering reads
    a child's ports as places within its slot (ELK's port-aware barycentres): two edges into one group through
    ports in one order cross when their sources stand in the other. `segments_of[(a, b)]` is the first and last
    segment of the path from vertex a to vertex b."""
    off_u = np.zeros(segments)
    off_v = np.zeros(segments)
    for c in connections:
        if c.source_port < 0 and c.target_port < 0:
            continue
        a, b = vertex(c.source, True), vertex(c.target, False)
        first, last = segments_of[(a, b)]
        if c.source_port >= 0:
            off_u[first] = port_fraction(port_cells[a][1][c.source_port], int(minor_size[a]))
        if c.target_port >= 0:
            off_v[last] = port_fraction(port_cells[b][0][c.target_port], int(minor_size[b]))
    return off_u, off_v


def port_fraction(cell: int, width: int) -> float:
    return min(max((cell + 0.5) / max(width, 1) - 0.5, -0.49), 0.49)


def order_layers(
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
    across its end vertices each segment ends (see port_offsets)."""
    slot = slots(v_layer, rank)
    if off_u is None or off_v is None:
        off_u = off_v = np.zeros(seg_u.size)
    if seg_u.size == 0:
        return slot
    layers = int(v_layer.max()) + 1
    members = layer_members(v_layer, slot, layers)
    if max(len(m) for m in members) < 2:
        return slot
    # every segment joins layer l to l + 1 (dummies make it so): per layer, the segments below it
    seg_layer = v_layer[seg_u]
    by_layer = np.argsort(seg_layer, kind="stable")
    bounds = np.searchsorted(seg_layer[by_layer], np.arange(layers + 1))
    below = [by_layer[bounds[k] : bounds[k + 1]] for k in range(layers)]
    up_nbrs, down_nbrs = neighbour_ends(total, seg_u, seg_v, off_u, off_v)
    position = slot.astype(np.int64)
    ends = (seg_u, seg_v, off_u, off_v)
    best, best_crossings = position.copy(), crossings(position, *ends, below)
    still = 0
    for iteration in range(ORDER_ITERATIONS):
        if best_crossings == 0:
            break
        down = iteration % 2 == 0
        bias_right = (iteration // 2) % 2 == 1  # ties broken the other way every second round (dagre does so)
        for k in range(1, layers) if down else range(layers - 2, -1, -1):
            sort_by_barycentre(members[k], position, up_nbrs if down else down_nbrs, bias_right)
        found = crossings(position, *ends, below)
        if 0 < found <= total:  # each round, as dot's mincross does, unless a tangle (then once, at the end)
            transpose(members, position, up_nbrs, down_nbrs, passes=1)
            found = crossings(position, *ends, below)
        if found < best_crossings:
            best, best_crossings, still = position.copy(), found, 0
        else:
            still += 1
            if still >= ORDER_PATIENCE:
                break
    if best_crossings:  # the best sweep's order, then neighbours transposed while that removes crossings
        members = layer_members(v_layer, best, layers)
        transpose(members, best, up_nbrs, down_nbrs)
    return best


def layer_members(v_layer: np.ndarray, slot: np.ndarray, layers: int) -> list[list[int]]:
    order = np.lexsort((slot, v_layer))
    layer_sorted = v_layer[order]
    bounds = np.searchsorted(layer_sorted, np.arange(layers + 1))
    return [order[bounds[k] : bounds[k + 1]].tolist() for k in range(layers)]


def neighbours(total: int, seg_u: np.ndarray, seg_v: np.ndarray) -> tuple[list[list[int]], list[list[int]]]:
    """Per vertex: its neighbours in the layer above, and in the layer below."""
    up: list[list[int]] = [[] for _ in range(total)]
    down: list[list[int]] = [[] for _ in range(total)]
    for u, v in zip(seg_u.tolist(), seg_v.tolist(), strict=True):
        up[v].append(u)
        down[u].append(v)
    return up, down


Ends = list[list[tuple[int, float]]]


def neighbour_ends(total: int, seg_u: np.ndarray, seg_v: np.ndarray, off_u: np.ndarray,
                   off_v: np.ndarray) -> tuple[Ends, Ends]:  # fmt: skip
    """Per vertex: its neighbours in the layer above and in the layer below, each with where across it the
    segment ends (a fraction of its slot, see port_offsets)."""
    up: Ends = [[] for _ in range(total)]
    down: Ends = [[] for _ in range(total)]
    for u, v, fu, fv in zip(seg_u.tolist(), seg_v.tolist(), off_u.tolist(), off_v.tolist(), strict=True):
        up[v].append((u, fu))
        down[u].append((v, fv))
    return up, down


def sort_by_barycentre(layer: list[int], position: np.ndarray, nbrs: Ends, bias_right: bool) -> None:
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


def transpose(members: list[list[int]], position: np.ndarray, up: Ends, down: Ends,
              passes: int = TRANSPOSE_PASSES) -> None:  # fmt: skip
    """Swap adjacent vertices of a layer while that removes crossings with both neighbouring layers (dot's
    transpose), a bounded number of passes. Neighbour positions are read as sorted lists once per layer (the
    neighbouring layers do not move while one layer is transposed)."""
    pos = position.tolist()
    for _ in range(passes):
        improved = False
        for layer in members:
            if len(layer) < 2:
                continue
            near = {v: (sorted(pos[w] + f for w, f in up[v]), sorted(pos[w] + f for w, f in down[v])) for v in layer}
            for index in range(len(layer) - 1):
                a, b = layer[index], layer[index + 1]
                (a_up, a_down), (b_up, b_down) = near[a], near[b]
                if (not a_up or not b_up or a_up[-1] <= b_up[0]) and (
                        not a_down or not b_down or a_down[-1] <= b_down[0]):  # fmt: skip
                    continue  # no crossing between them: the usual case, told without counting
                now = inversions(a_up, b_up) + inversions(a_down, b_down)
                if now == 0:
                    continue
                if inversions(b_up, a_up) + inversions(b_down, a_down) < now:
                    layer[index], layer[index + 1] = b, a
                    pos[a], pos[b] = index + 1, index
                    improved = True
        if not improved:
            break
    position[:] = pos


def inversions(left: list[float], right: list[float]) -> int:
    """Crossings between the edges of a vertex standing left (to the sorted places `left`) and of the vertex
    right of it (to `right`): pairs whose places are in the opposite order."""
    if not left or not right:
        return 0
    return sum(bisect.bisect_left(right, x) for x in left)


def crossings(position: np.ndarray, seg_u: np.ndarray, seg_v: np.ndarray, off_u: np.ndarray | None,
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


def slots(v_layer: np.ndarray, key: np.ndarray) -> np.ndarray:
    order = np.lexsort((key, v_layer))
    slot = np.empty(v_layer.size, dtype=np.int64)
    layer_sorted = v_layer[order]
    starts = np.searchsorted(layer_sorted, layer_sorted, side="left")
    slot[order] = np.arange(v_layer.size) - starts
    return slot
