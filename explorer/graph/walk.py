"""Where the arrow keys go in a drawn graph: the reading path a person follows through a model.

↓/↑ step to a consumer/producer along the drawn edges. At a fork ↓ takes the main path: the consumer that heads
the longest way on through the drawn graph (`item_heights`), so a residual `Add` read by the next block's
`LayerNormalization` and by the next `Add` leads into the block, a stage's downsample shortcut and a UNet's skip
connection come after the branch they bypass; among equals routed edges before stubs and bundles (a stub jumps
far away), then the model's topological order. ←/→ step to the
neighbour on the same rows, across frames. A box with no edge that way steps to the nearest box in that
direction instead, so every box is reachable with the arrow keys alone.
"""

from __future__ import annotations

import numpy as np

from explorer.graph.picture import Layout
from explorer.models.graph import GraphModel, path_heights

# ops that read only a value's shape, not its data: a fork into one is a side branch (the shape computations
# torch exports keep), taken after the data's readers
SHAPE_READERS = frozenset({"Shape", "Size", "sym_size", "sym_size.int", "aten::sym_size"})


def item_heights(layout: Layout) -> np.ndarray:
    """Per item: the most items on a path from it on through the drawn edges that lead on down the screen (a
    closed group counts as one): how long the way on is from each consumer. Worked out at each step, not kept
    on the layout: the view shifts a layout's boxes after it is made (a kept copy went stale)."""
    # the way on as drawn: edges leading down the screen (TB) or right (LR). Neither the model's order (a closed
    # group's earliest member can be a weight adopted into it) nor the drawn graph's own (a closed group can close
    # a cycle with an op beside it) follows the picture.
    along = (layout.y if layout.direction == "TB" else layout.x).astype(np.int64)
    visible = layout.visible
    return path_heights(visible.n_items, visible.edge_src, visible.edge_dst, along)


def next_along(model: GraphModel, layout: Layout, item: int, forward: bool) -> list[int]:
    """The items one edge away (consumers when `forward`, producers otherwise), in reading order. Consumers:
    readers of the data before readers of its shape only (SHAPE_READERS) and owned branches, then the one
    heading the longest way on (`item_heights`), then routed edges before stubs and bundles, then the model's
    topological order (`layout.model_rank`), then across the screen. Producers: routed first, the latest in
    the model's order first. The first is where the key goes; the others are the fork's other branches."""
    visible, ranks = layout.visible, layout.model_rank
    height = item_heights(layout)
    found: dict[int, tuple[int, int, int, int, int]] = {}
    for edge in layout.edges:
        if (edge.source if forward else edge.target) != item:
            continue
        other = edge.target if forward else edge.source
        shape_only = visible.item_kind[other] == 0 and model.node_op[int(visible.item_id[other])] in SHAPE_READERS
        aside = bool(edge.owner or shape_only)
        away = aside or edge.kind != "routed"
        key = (int(aside), -int(height[other]), int(away), int(ranks[other]), int(layout.x[other]))
        if other not in found or key < found[other]:
            found[other] = key
    if not forward:  # producers: the latest one first (the value just computed, not a weight from the start)
        return sorted(found, key=lambda o: (found[o][2], -found[o][3], found[o][4]))
    return sorted(found, key=lambda o: found[o])


def beside(layout: Layout, item: int, step: int) -> int:
    """The nearest item left (step -1) or right (+1) whose rows overlap this one's, in any frame; else the
    nearest item that way at all (by rows apart, then columns); -1 when there is none."""
    x, y, w, h = (layout.x.astype(np.int64), layout.y.astype(np.int64), layout.w.astype(np.int64),
                  layout.h.astype(np.int64))  # fmt: skip
    centre = x + w // 2
    here = int(centre[item])
    way = (centre - here) * step > 0
    way[item] = False
    if not way.any():
        return -1
    overlap = (y < y[item] + max(h[item], 1)) & (y + np.maximum(h, 1) > y[item])
    pick = np.flatnonzero(way & overlap)
    if pick.size:
        return int(pick[np.argmin(np.abs(centre[pick] - here))])
    pick = np.flatnonzero(way)
    rows_apart = np.abs(y[pick] - y[item])
    return int(pick[np.lexsort((np.abs(centre[pick] - here), rows_apart))[0]])


def above_or_below(layout: Layout, item: int, down: bool) -> int:
    """The nearest item below (or above) this one: first among those whose columns overlap it, else any;
    -1 when there is none. For a box no edge leaves that way (an opened schedule layer's workloads)."""
    x, y, w = layout.x.astype(np.int64), layout.y.astype(np.int64), layout.w.astype(np.int64)
    way = (y > y[item]) if down else (y < y[item])
    if not way.any():
        return -1
    overlap = (x < x[item] + max(int(w[item]), 1)) & (x + np.maximum(w, 1) > x[item])
    for pick in (np.flatnonzero(way & overlap), np.flatnonzero(way)):
        if pick.size:
            distance = np.abs(y[pick] - y[item])
            across = np.abs(x[pick] + w[pick] // 2 - (x[item] + w[item] // 2))
            return int(pick[np.lexsort((across, distance))[0]])
    return -1
