"""What the graph view paints over the drawn canvas and how the canvas becomes Textual strips: the minimap in a
free corner, the names of the selection's edges, the legend line, a row of cells as styled segments."""

from __future__ import annotations

import functools

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from explorer.graph.colours import COLOURS
from explorer.graph.picture import Edge, Layout
from explorer.graph.text import shape_text, usual_dtype
from explorer.models.graph import GraphModel
from widgets.graph.canvas import (
    BACK,
    DIM,
    EDGE,
    FIRST_COLOUR,
    FRAME,
    FRAME_LABEL,
    HEADER_COLOUR,
    MATCH,
    SELECTED,
    STUB,
    TEXT,
    WARN,
    Canvas,
    minimap,
    shorten,
)

MINIMAP_SIZE = (24, 8)  # the minimap's cells, its border included
EDGE_LABELS = 12  # most edges of the selection that get their value's name written
BASE_STYLES = {
    EDGE: Style(color="#8a8a8a"),
    FRAME: Style(color="#5a6a7a"),
    FRAME_LABEL: Style(color="#9ab0c8", bold=True),
    TEXT: Style(color="#e0e0e0"),
    DIM: Style(color="#a0a0a0"),
    SELECTED: Style(color="#000000", bgcolor="#ffffff", bold=True),
    MATCH: Style(color="#000000", bgcolor="#e8d44d", bold=True),
    STUB: Style(color="#5fb0c8", italic=True),
    WARN: Style(color="#ff5050", bold=True),
    BACK: Style(color="#ff8050", italic=True),
}


def draw_minimap(
    canvas: Canvas, layout: Layout, width: int, body: int, origin: tuple[int, int]
) -> tuple[int, int, int, int] | None:
    """The minimap in a corner of the panel that covers no box (the selection included) and no frame's title,
    of those the one that hides the fewest drawn cells (edges, frame borders; ties: top-right, bottom-right,
    bottom-left, top-left); none while every corner would cover a box or a title, or the terminal is too small
    to spare the cells: it comes back when the view moves to where a corner is free. Where it went (x, y, width,
    height on the panel), or None."""
    mw, mh = MINIMAP_SIZE
    if width < mw * 3 or body < mh * 2:
        return None
    ox, oy = origin
    x, y = layout.x.astype(np.int64) - ox, layout.y.astype(np.int64) - oy
    w, h = layout.w.astype(np.int64), layout.h.astype(np.int64)
    titles = [(fx + 2 - ox, fy - oy, min(len(layout.frame_labels.get(g, "")), max(fw - 8, 4)) + 4)
              for g, (fx, fy, fw, _) in layout.frames.items() if layout.frame_labels.get(g)]  # fmt: skip
    free: list[tuple[int, int, int, int]] = []  # (drawn cells hidden, order, x, y) of each corner it may take
    for x0, y0 in ((width - mw, 0), (width - mw, body - mh), (0, body - mh), (0, 0)):
        covered = (x < x0 + mw) & (x + w > x0) & (y < y0 + mh) & (y + h > y0)
        # nor a frame's title: the name of the group around what is on screen
        if not covered.any() and not any(tx < x0 + mw and tx + tw > x0 and y0 <= ty < y0 + mh
                                         for tx, ty, tw in titles):  # fmt: skip
            free.append((int((canvas.chars[y0 : y0 + mh, x0 : x0 + mw] != ord(" ")).sum()), len(free), x0, y0))
    if not free:
        return None
    _, _, x0, y0 = min(free)  # the corner that hides the fewest drawn cells (edges, frame borders), blank first
    rows = minimap(layout, mw - 2, mh - 2, (ox, oy, width, body))
    canvas.text(x0, y0, "┌" + "─" * (mw - 2) + "┐", FRAME)
    for k, row in enumerate(rows):
        canvas.text(x0, y0 + k + 1, "│" + row + "│", FRAME)
    canvas.text(x0, y0 + mh - 1, "└" + "─" * (mw - 2) + "┘", FRAME)
    return (x0, y0, mw, mh)


def label_selected_edges(canvas: Canvas, layout: Layout, model: GraphModel, item: int, origin: tuple[int, int]) -> None:
    """The edges into and out of the selection carry their values' names and types, written by the selection:
    where they leave it and by their arrowheads into it (an edge of a collapsed group stands for several: the
    first and a count). Written after the minimap, on free cells only."""
    if item < 0:
        return
    visible = layout.visible
    touching = [e for e in layout.edges if e.kind == "routed" and item in (e.source, e.target) and e.points]
    if not touching:
        return
    src_item = visible.node_item[model.edge_src]
    dst_item = visible.node_item[model.edge_dst]
    for edge in touching[:EDGE_LABELS]:
        found = np.flatnonzero((src_item == edge.source) & (dst_item == edge.target))
        if not found.size:
            continue
        first = int(found[0])
        name = model.edge_label[first]
        if not name:  # an edge that carries no named value (schedule layers): the arrow says it all
            continue
        value_type = model.node_detail[int(model.edge_src[first])].split(" +")[0] if model.detail_is_type else ""
        value_type = shape_text(value_type, usual_dtype(model))  # as its box says it: `?×768`, not unk__16
        text = f" {shorten(name, 24)}{' : ' + shorten(value_type, 24) if value_type else ''}"
        text += f" +{found.size - 1}" if found.size > 1 else ""
        short = f" {shorten(name, 24)}"  # the name alone where the type does not fit
        for label in dict.fromkeys((text, short)):
            if _write_edge_label(canvas, edge, edge.source == item, label, layout.direction == "TB", origin):
                break


def _write_edge_label(canvas: Canvas, edge: Edge, leaving: bool, text: str, tb: bool, origin: tuple[int, int]) -> bool:
    ox, oy = origin
    for cx, cy in label_spots(edge.points, leaving, len(text), tb):
        if canvas.is_free(cx - ox, cy - oy, len(text)):  # only where it hides nothing
            canvas.text(cx - ox, cy - oy, text, STUB)
            return True
    return False


def label_spots(points: list[tuple[int, int]], leaving: bool, length: int, tb: bool) -> list[tuple[int, int]]:
    """Where an edge's label may go, nearest the selection first: beside the segment that leaves it (or that
    arrives at it), right of the line then left of it (TB), above the line then below it (LR); then along the
    next segment when it runs across."""
    ordered = points if leaving else points[::-1]
    near = ordered[0]
    far = ordered[1] if len(ordered) > 1 else near
    spots = []
    if tb:
        step = 1 if far[1] >= near[1] else -1
        for y in range(near[1], far[1] + step, step)[:60]:
            spots += [(near[0] + 1, y), (near[0] - length, y)]
        if len(ordered) > 2 and ordered[1][1] == ordered[2][1]:  # then a horizontal run: above it, below it
            lo = min(ordered[1][0], ordered[2][0])
            spots += [(lo + 1, ordered[1][1] - 1), (lo + 1, ordered[1][1] + 1)]
    else:
        x = near[0] if leaving else near[0] - length + 1
        spots += [(x, near[1] - 1), (x, near[1] + 1)]
    return spots


def canvas_strip(canvas: Canvas, y: int) -> Strip:
    """One row of cells as segments, one per run of a style (the runs found by numpy, not cell by cell)."""
    chars, styles = canvas.chars[y], canvas.styles[y]
    text = "".join(map(chr, chars.tolist()))
    cuts = [0, *(np.flatnonzero(styles[1:] != styles[:-1]) + 1).tolist(), len(text)]
    codes = styles[cuts[:-1]].tolist() if len(text) else []
    return Strip([Segment(text[a:b], cell_style(code)) for a, b, code in zip(cuts, cuts[1:], codes, strict=False)])


@functools.cache
def cell_style(code: int) -> Style:
    """The rich Style of a cell's style code, made once per code (a frame asks for tens of thousands)."""
    if code >= HEADER_COLOUR:
        return Style(color="#101010", bgcolor=COLOURS[(code - HEADER_COLOUR) % len(COLOURS)], bold=True)
    if code >= FIRST_COLOUR:
        return Style(color=COLOURS[(code - FIRST_COLOUR) % len(COLOURS)])
    return BASE_STYLES.get(code, Style())


def legend_segments(legend: list[tuple[str, str]], width: int) -> list[Segment]:
    """The legend in one line: whole entries (a range is never cut inside), as many as fit, and what did not
    fit said as `+N more` (the help's `c` cycles the modes; a wider panel shows them)."""
    segments = [Segment("legend ", BASE_STYLES[DIM])]
    used = 7
    for k, (text, colour) in enumerate(legend):
        piece = f" {shorten(text, 40)}  "
        left = len(legend) - k - 1
        more = len(f"+{left} more") if left else 0
        if used + 1 + len(piece) + more > width:
            segments.append(Segment(f"+{len(legend) - k} more", BASE_STYLES[DIM]))
            break
        segments += [Segment("█", Style(color=colour)), Segment(piece, BASE_STYLES[DIM])]
        used += 1 + len(piece)
    return segments
