"""Placement, Sugiyama's third step: each vertex's cell across the layers (Brandes-Köpf when laid out afresh,
pulled towards the wanted places when a relayout keeps them), and the rows a relayout keeps."""

from __future__ import annotations

import numpy as np

from explorer.graph import brandes_koepf
from explorer.graph.ordering import layer_members, neighbours

PLACEMENT_PASSES = 6


def last_kept_layer(layer: np.ndarray, changed: np.ndarray | None) -> int:
    """The deepest layer a relayout keeps the rows of: the first changed element's, or every layer."""
    return int(layer[changed].min()) if changed is not None and changed.any() else int(layer.max())


def keep_rows(starts: np.ndarray, layer: np.ndarray, fed: np.ndarray, wanted_rows: np.ndarray,
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


def put_entry_ports(
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


def place(total: int, v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int,
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
        return aligned_cells(total, v_layer, slot, size, gap, seg_u, seg_v, first_dummy)
    order, layer_sorted, offset = packed(v_layer, slot, size, gap)
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
        coord = settle(order, layer_sorted, size, gap, coord, wanted)
    return coord


def packed(v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int) -> tuple[np.ndarray, ...]:
    """The vertices in layer-then-slot order, their layers, and each one's first cell were its layer packed from
    0 with `gap` between boxes: a placement keeps order and gaps when coord - offset never decreases in a layer."""
    order = np.lexsort((slot, v_layer))
    layer_sorted = v_layer[order]
    size_sorted = size[order].astype(np.int64)
    running = np.cumsum(size_sorted + gap) - (size_sorted + gap)
    first = np.searchsorted(layer_sorted, layer_sorted, side="left")
    return order, layer_sorted, running - running[first]


def aligned_cells(total: int, v_layer: np.ndarray, slot: np.ndarray, size: np.ndarray, gap: int,
                  seg_u: np.ndarray, seg_v: np.ndarray, first_dummy: int) -> np.ndarray:  # fmt: skip
    """Left cells from brandes_koepf's centres, rounded, then pushed right where rounding left a gap short."""
    layers = int(v_layer.max()) + 1
    members = layer_members(v_layer, slot, layers)
    up, down = neighbours(total, seg_u, seg_v)
    dummy = (np.arange(total) >= first_dummy).tolist()
    centre = np.asarray(brandes_koepf.place(members, up, down, size.tolist(), gap, dummy))
    left = np.floor(centre - size / 2.0).astype(np.int64)
    order, layer_sorted, offset = packed(v_layer, slot, size, gap)
    z = left[order] - offset  # non-decreasing within a layer when the gaps hold
    lift = layer_sorted * (4 * (int(np.abs(z).max()) + int(offset.max()) + 16))
    z = np.maximum.accumulate(z + lift) - lift
    coord = np.empty(total, dtype=np.int64)
    coord[order] = z + offset
    return coord


def settle(order: np.ndarray, layer_sorted: np.ndarray, size: np.ndarray, gap: int, coord: np.ndarray,
           wanted: np.ndarray) -> np.ndarray:  # fmt: skip
    """Where elements have wanted places (a group opened beside them): each sits exactly there unless something
    that does not fit pushes it right, and what has none (a long edge's dummy) makes room instead of pushing:
    right to left, a dummy stays left of the next wanted box; left to right, nothing overlaps."""
    coord = coord.copy()
    size_list, want = size.tolist(), wanted.tolist()
    layers = np.flatnonzero(np.diff(np.concatenate([[-1], layer_sorted, [layer_sorted[-1] + 1]]))).tolist()
    ordered = order.tolist()
    for lo, hi in zip(layers[:-1], layers[1:], strict=False):
        members = ordered[lo:hi]
        at: dict[int, int] = {}
        limit = None
        for v in reversed(members):
            if want[v] == want[v]:  # not NaN
                at[v] = int(np.floor(want[v]))
            else:
                at[v] = int(coord[v]) if limit is None else min(int(coord[v]), limit - size_list[v])
            limit = at[v] - gap
        end = None
        for v in members:
            if end is not None and at[v] < end + gap:
                at[v] = end + gap
            end = at[v] + size_list[v]
            coord[v] = at[v]
    return coord
