"""Where a screen's window over a layout goes: onto the selection, back over boxes after a group closed, and
over the first boxes of the reading path on the first screen. Origins are the window's top-left cell in layout
cells; `body` is the rows the window shows (the panel without its status lines)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from explorer.graph.layout import COMPACT, FULL
from explorer.graph.picture import Layout
from explorer.graph.shaping import reading_path, walk_reading_path
from explorer.models.graph import GraphModel

START_PATH = 32  # boxes along the reading path the first screen tries to show with the input


def on_selection(layout: Layout, item: int, origin: tuple[int, int], width: int, body: int, center: bool = False,
                 keep: bool = False) -> tuple[int, int]:  # fmt: skip
    """Keep the selection in the window (centred when asked); a graph that fits is centred across and
    top-aligned. With `keep` (a group just opened or closed in place) nothing is re-centred: the window moves only
    when the selection's top-left corner (its title) is outside, and then only as far as that needs."""
    x, y, w, h = int(layout.x[item]), int(layout.y[item]), int(layout.w[item]), int(layout.h[item])
    ox, oy = origin
    if keep:
        ox = min(max(ox, x + min(w, width) - width), x) if not ox <= x < ox + width else ox
        oy = min(max(oy, y + min(h, body) - body), y) if not oy <= y < oy + body else oy
        return ox, oy
    if layout.width <= width:
        ox = (layout.width - width) // 2
    elif center or not (ox <= x and x + w <= ox + width):
        ox = min(max(x + w // 2 - width // 2, 0), layout.width - width)
    if layout.height <= body:
        oy = 0
    elif center or not (oy <= y and y + h <= oy + body):
        oy = min(max(y + h // 2 - body // 2, 0), layout.height - body)
    return ox, oy


def closed_up(layout: Layout, origin: tuple[int, int], width: int, body: int) -> tuple[int, int]:
    """After a group closed, the graph is smaller than the window that held it open: where boxes are outside past
    one edge while the other edge shows empty room, the window moves back over them (closing a wide block at 80
    columns left the window scrolled right, the graph's left part hidden). Opening keeps its empty room instead:
    there the boxes around the group staying put matters more."""
    ox, oy = origin
    ox = min(max(ox, min(0, layout.width - width)), max(0, layout.width - width))
    oy = min(max(oy, min(0, layout.height - body)), max(0, layout.height - body))
    return ox, oy


def at_start(model: GraphModel, layout: Layout, item: int, width: int, body: int) -> tuple[int, int]:
    """The first screen shows where reading starts: the selection (the model's first input) near the top (left in
    LR) with as many of the first boxes along the main path as fit, centred across them (or the whole graph, when
    it fits)."""
    tb = layout.direction == "TB"
    span_across, span_along = (width, body) if tb else (body, width)
    x0, y0 = int(layout.x[item]), int(layout.y[item])
    x1, y1 = x0 + int(layout.w[item]), y0 + int(layout.h[item])
    for node in reading_path(model, count=START_PATH)[1:]:  # grow the window's target while it still fits
        k = int(layout.visible.node_item[node])
        if k < 0:
            continue
        nx0, ny0 = min(x0, int(layout.x[k])), min(y0, int(layout.y[k]))
        nx1, ny1 = max(x1, int(layout.x[k] + layout.w[k])), max(y1, int(layout.y[k] + layout.h[k]))
        across, along = (nx1 - nx0, ny1 - ny0) if tb else (ny1 - ny0, nx1 - nx0)
        if across > span_across or along > span_along:
            break
        x0, y0, x1, y1 = nx0, ny0, nx1, ny1
    if tb:
        ox = (layout.width - width) // 2 if layout.width <= width else min(max((x0 + x1) // 2 - width // 2, 0),
                                                                         layout.width - width)  # fmt: skip
        margin = 1 if y1 - y0 < body else 0  # a row above the input, where it does not cost a box below
        oy = 0 if layout.height <= body else min(max(y0 - margin, 0), layout.height - body)
        if layout.width > width:
            ox = fewest_cut(layout, ox, oy, width, body, x0, x1)
    else:
        ox = 0 if layout.width <= width else min(max(x0 - 2, 0), layout.width - width)
        oy = 0 if layout.height <= body else min(max((y0 + y1) // 2 - body // 2, 0), layout.height - body)
    return ox, oy


def path_to_head(model: GraphModel, layout: Layout, limit: int) -> tuple[list[int], int] | None:
    """The drawn boxes along the reading path from the first input to the last op before it ends (the model's
    head; the output box under it may be below the fold), each once, and how many boxes the whole path has; None
    as soon as there are more than `limit` + 1 (the walk stops there: a 100,000-node chain is not walked to its
    end). The boxes are the visible graph's items, the same at every zoom level."""
    items: list[int] = []
    last_op: list[int] = []
    for node in walk_reading_path(model):
        item = int(layout.visible.node_item[node])
        if item < 0 or (items and items[-1] == item):
            continue
        if item not in items:
            items.append(item)
            if len(items) > limit + 1:  # (one more: the output box, left out of the head's path)
                return None
        if model.node_op[node] != "output":
            last_op = items.copy()
    return last_op or items, len(items)


def _holds(layout: Layout, items: list[int], width: int, body: int) -> bool:
    """Whether these boxes fit in the window together."""
    chosen = np.asarray(items)
    left, top = int(layout.x[chosen].min()), int(layout.y[chosen].min())
    right, bottom = int((layout.x + layout.w)[chosen].max()), int((layout.y + layout.h)[chosen].max())
    return right - left <= width and bottom - top + 1 <= body


def first_level(model: GraphModel, full: Layout, lay_out_compact: Callable[[], Layout], width: int,
                body: int) -> tuple[int, Layout]:  # fmt: skip
    """The zoom level of the first screen and its layout: full boxes, unless the reading path from input to head
    does not fit there and does in one-line boxes (a transformer's chain input → embedding → stack × N → norm →
    head at 160×48), as Model Explorer opens fitted to its view; or unless that path is mostly closed groups, whose
    one-line box says what their full box says but its node count (a UNet's conv_in → down blocks → mid → up
    blocks: more of the model on screen, where a CNN's ops keep their shapes). The path is walked once, as far as
    boxes could fit (a box a row), and the one-line layout is made only when the path's boxes could fit it (a box a
    row pair) or are mostly groups."""
    found = path_to_head(model, full, max(body, 1)) if width > 0 and body > 0 else None
    if found is None or not found[0] or _holds(full, found[0], width, body):
        return FULL, full
    head, boxes = found
    groups = int((full.visible.item_kind[np.asarray(head)] == 1).sum())
    structural = 2 * groups > len(head)
    if boxes > max(body // 2, 1) + 1 and not structural:
        return FULL, full
    compact = lay_out_compact()
    return (COMPACT, compact) if structural or _holds(compact, head, width, body) else (FULL, full)


def fewest_cut(layout: Layout, ox: int, oy: int, width: int, body: int, x0: int, x1: int) -> int:
    """The window's left edge moved, if need be, so that fewer boxes on screen are cut by its sides (a box beside
    the input's first op, cut in half at 80 columns, reads as a broken graph), keeping [x0, x1) inside: the edge
    where the fewest boxes are cut, the nearest to `ox` among those."""
    boxes = layout.visible.item_kind == 0
    rows = (layout.y < oy + body) & (layout.y + layout.h > oy)
    xs, ends = layout.x[boxes & rows].astype(int), (layout.x + layout.w)[boxes & rows].astype(int)
    low, high = max(0, x1 - width), min(x0, int(layout.width) - width)
    if low > high:
        return ox

    def cut(left: int) -> int:
        right = left + width
        return int(((xs < left) & (ends > left)).sum() + ((xs < right) & (ends > right)).sum())

    candidates = {ox, *xs.tolist(), *(ends - width).tolist()}
    allowed = [c for c in candidates if low <= c <= high]
    return min(allowed, key=lambda c: (cut(c), abs(c - ox))) if allowed else ox
