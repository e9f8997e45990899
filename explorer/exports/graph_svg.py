"""`ir-explorer graph FILE --svg OUT.svg`: the graph view's layout as a vector drawing for slides and the HTML
report: boxes in the colour mode's colours with their op, shape and weights, routed edges with arrowheads,
stubs for long and back edges, frames of open groups, a legend, and a tooltip (`<title>`) on every box.

The layout is the TUI's (terminal cells); a cell becomes CELL_W × CELL_H px, so the drawing keeps the aspect
the terminal shows. Text is escaped; the output is a function of the model (same bytes for the same file).
"""

from __future__ import annotations

from html import escape
from typing import Any

from explorer.exports.graph_json import opened_layout
from explorer.formatting import shorten_middle
from explorer.graph.colours import COLOURS, colour_modes, item_colours
from explorer.graph.layout import FULL, layout_graph
from explorer.graph.picture import Layout
from explorer.graph.text import shorten_title, stub_text
from explorer.graph.visible import visible_graph
from explorer.models.graph import GraphModel

CELL_W, CELL_H = 8, 16  # px per terminal cell (a terminal cell is about twice as tall as wide)
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
MARGIN = 16
LEGEND_ROW = 22


class UnknownColourMode(ValueError):
    """--colour named a mode this graph does not have; the message lists the ones it has."""


def best_mode(model: GraphModel) -> str:
    """The file's most telling colours: the user's per-node data, else a joined trace's measured time, else a
    schedule's estimated time, else the op type."""
    modes = colour_modes(model)
    return next(iter(model.data_sets), next((m for m in ("measured time", "time") if m in modes), "op type"))


def graph_svg(model: GraphModel, expand: str = "auto", mode: str | None = None, direction: str = "TB",
              title: str = "", opens: list[int] | None = None, only: int | None = None) -> str:  # fmt: skip
    """The whole layout of what the view shows for `expand` after Enter opened `opens` one after the other,
    coloured by `mode` (default: best_mode); `only`: one group's inside alone, every group in it open."""
    modes = colour_modes(model)
    mode = mode or best_mode(model)
    if mode not in modes:
        found = next((m for m in modes if m.removeprefix("data: ") == mode), None)
        if found is None:
            raise UnknownColourMode(f"no colour mode {mode!r} for this graph (it has: {', '.join(modes)})")
        mode = found
    if only is not None:
        inside = {g for g in range(model.n_groups) if only in model.ancestors(g)}
        layout = layout_graph(model, visible_graph(model, inside | set(model.ancestors(only))), FULL, direction)
        caption = f"{title} · {model.group_path(only)} · colour: {mode}" if title else f"colour: {mode}"
        colours, legend = item_colours(model, layout.visible, mode)
        return draw_svg(model, layout, colours, legend, caption, crop=layout.frames[only])
    layout, _ = opened_layout(model, expand, opens or [], direction)
    colours, legend = item_colours(model, layout.visible, mode)
    return draw_svg(model, layout, colours, legend, f"{title} · colour: {mode}" if title else f"colour: {mode}")


def draw_svg(model: GraphModel, layout: Layout, colours: Any, legend: list[tuple[str, str]], caption: str,
             crop: tuple[int, int, int, int] | None = None) -> str:  # fmt: skip
    """The layout as SVG; `crop` (x, y, w, h in cells: an open group's frame) draws that part alone."""
    cx, cy, cw, ch = crop if crop is not None else (0, 0, layout.width, layout.height)
    width = max(cw * CELL_W + 2 * MARGIN, 480)
    top = MARGIN + 24  # the caption's row
    graph_height = ch * CELL_H
    legend_rows = _legend_rows(legend, width - 2 * MARGIN)
    height = top + graph_height + MARGIN + len(legend_rows) * LEGEND_ROW + MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="{FONT}" font-size="12">',
        "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' "
        "orient='auto-start-reverse'><path d='M 0 0 L 10 5 L 0 10 z' fill='#666'/></marker></defs>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="14" fill="#222">{escape(caption)}</text>',
        f'<clipPath id="graph-area"><rect x="{MARGIN}" y="{top - 2}" width="{cw * CELL_W}" '
        f'height="{graph_height + 4}"/></clipPath>',
        f'<g clip-path="url(#graph-area)"><g transform="translate({MARGIN - cx * CELL_W},{top - cy * CELL_H})">',
    ]
    shown = None
    if crop is not None:  # only what lies in the cropped part is written (the rest would be clipped anyway)
        x0, y0, x1, y1 = cx, cy, cx + cw, cy + ch
        shown = {k for k in range(layout.visible.n_items) if x0 <= layout.x[k] and layout.x[k] + layout.w[k] <= x1
                 and y0 <= layout.y[k] and layout.y[k] + layout.h[k] <= y1}  # fmt: skip
    out += _frames(model, layout, crop)
    out += _edges(layout, shown)
    out += _boxes(layout, colours, shown)
    out += _stubs(layout, shown)
    out.append("</g></g>")
    out += _legend(legend_rows, top + graph_height + MARGIN)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _px(x: float, y: float) -> tuple[float, float]:
    return x * CELL_W, y * CELL_H


def _frames(model: GraphModel, layout: Layout, crop: tuple[int, int, int, int] | None = None) -> list[str]:
    out = []
    for group, (x, y, w, h) in layout.frames.items():
        if crop is not None and not (crop[0] <= x and x + w <= crop[0] + crop[2] and crop[1] <= y
                                     and y + h <= crop[1] + crop[3]):  # fmt: skip
            continue
        px, py = _px(x, y + 0.5)
        label = escape(layout.frame_labels.get(group, model.group_label[group]))
        out.append(f'<rect x="{px:g}" y="{py:g}" width="{w * CELL_W:g}" height="{(h - 1) * CELL_H:g}" rx="6" '
                   f'fill="#f4f7fb" stroke="#9ab0c8" stroke-dasharray="4 3"/>'
                   f'<text x="{px + 8:g}" y="{py + 4:g}" fill="#4a6a8a" font-weight="bold">'
                   f'<tspan dy="0.3em">▾ {label}</tspan></text>')  # fmt: skip
    return out


def _edges(layout: Layout, shown: set[int] | None = None) -> list[str]:
    out = []
    for edge in layout.edges:
        if edge.kind != "routed" or len(edge.points) < 2:
            continue
        if shown is not None and edge.source not in shown and edge.target not in shown:
            continue
        # through the middle of their cells, from the source box's edge to the target box's
        tb = layout.direction == "TB"
        (x0, y0), end = edge.points[0], edge.points[-1]
        start = f"{(x0 + 0.5) * CELL_W:g},{y0 * CELL_H:g}" if tb else f"{x0 * CELL_W:g},{(y0 + 0.5) * CELL_H:g}"
        middle = " ".join(f"{(x + 0.5) * CELL_W:g},{(y + 0.5) * CELL_H:g}" for x, y in edge.points[1:])
        into = (f"{(end[0] + 0.5) * CELL_W:g},{(end[1] + 1) * CELL_H:g}" if tb
                else f"{(end[0] + 1) * CELL_W:g},{(end[1] + 0.5) * CELL_H:g}")  # fmt: skip
        points = f"{start} {middle} {into}"
        width = 1.2 if edge.count == 1 else 2.2
        dash = ' stroke-dasharray="2 3"' if edge.owner else ""  # an op's link to its closed branch
        out.append(f'<polyline points="{points}" fill="none" stroke="#666" stroke-width="{width}"{dash} '
                   'marker-end="url(#arrow)"/>')  # fmt: skip
    return out


def _boxes(layout: Layout, colours: Any, shown: set[int] | None = None) -> list[str]:
    out = []
    visible = layout.visible
    for item in range(visible.n_items) if shown is None else sorted(shown):
        x, y = _px(int(layout.x[item]), int(layout.y[item]))
        w, h = int(layout.w[item]) * CELL_W, int(layout.h[item]) * CELL_H
        colour = COLOURS[int(colours[item])]
        group = visible.item_kind[item] == 1 and not (layout.unit.size and layout.unit[item])
        tip = escape(" · ".join(t for t in (layout.labels[item], layout.ops[item], layout.details[item]) if t))
        lines = [layout.titles[item], layout.details[item], layout.extras[item] if layout.extras else ""]
        text = []
        for k, line in enumerate(line for line in lines if line):
            weight = ' font-weight="bold"' if k == 0 else ""
            fill = "#111" if k == 0 else "#444"
            text.append(f'<text x="{x + 8:g}" y="{y + 6 + (k + 1) * 14:g}" fill="{fill}"{weight}>'
                        f"{escape((shorten_title if k == 0 else shorten_middle)(line, int(layout.w[item]) - 2))}"
                        "</text>")  # fmt: skip
        stroke = 'stroke-width="2.5" stroke-dasharray="6 2"' if group else 'stroke-width="1.2"'
        out.append(f"<g><title>{tip}</title>"
                   f'<rect x="{x + 2:g}" y="{y + 2:g}" width="{w - 4:g}" height="{h - 4:g}" rx="4" fill="#ffffff" '
                   f'stroke="{colour}" {stroke}/>'
                   f'<rect x="{x + 2:g}" y="{y + 2:g}" width="{w - 4:g}" height="{CELL_H + 4:g}" rx="4" '
                   f'fill="{colour}" fill-opacity="0.35"/>' + "".join(text) + "</g>")  # fmt: skip
    return out


def _stubs(layout: Layout, shown: set[int] | None = None) -> list[str]:
    """Long edges as labelled stubs under their source and above their target; back edges marked ↺; a huge
    fan-out as one bundled count; a value nobody produces as ⚠ name?."""
    out = []
    tb = layout.direction == "TB"

    def label(item: int, text: str, below: bool, colour: str = "#7a5a00") -> None:
        if shown is not None and item not in shown:
            return
        x, y = _px(int(layout.x[item]), int(layout.y[item]))
        w, h = int(layout.w[item]) * CELL_W, int(layout.h[item]) * CELL_H
        if tb:
            ty = y + h + 12 if below else y - 4
            tx = x + 4
        else:
            tx, ty = (x + w + 4, y + 12) if below else (x - 4 - len(text) * 7, y + h + 12)
        out.append(f'<text x="{tx:g}" y="{ty:g}" fill="{colour}" font-size="11">{escape(text)}</text>')

    for item, targets in layout.out_stubs.items():
        back = item in layout.back_sources
        text = stub_text("↺" if back else "↓" if tb else "→", [layout.labels[t] for t in targets], 24)
        label(item, text, True, "#b03030" if back else "#7a5a00")
    for item in sorted(set(layout.in_stubs) | set(layout.in_bundles)):  # one line above a box: stubs, then bundles
        parts = []
        if item in layout.in_stubs:
            parts.append(stub_text("↑ from" if tb else "← from", [layout.labels[s] for s in layout.in_stubs[item]], 24))
        if item in layout.in_bundles:  # a bundled value's reader says it reads one (the bundle draws no line to it)
            parts.append(stub_text("⇈", [layout.labels[s] for s in layout.in_bundles[item]], 24))
        label(item, "  ".join(parts), False)
    for item, count in layout.bundles.items():
        label(item, f"⇊ {count:,} readers", True)
    for item, name in layout.visible.dangling:
        x, y = _px(int(layout.x[item]) + int(layout.w[item]) + 1, int(layout.y[item]))
        out.append(
            f'<text x="{x:g}" y="{y + 12:g}" fill="#b03030" font-size="11">⚠ {escape(shorten_middle(name, 24))}?</text>'
        )
    return out


def _legend_rows(legend: list[tuple[str, str]], width: int) -> list[list[tuple[str, str]]]:
    rows: list[list[tuple[str, str]]] = [[]]
    used = 0
    for text, colour in legend:
        need = 24 + len(text) * 7 + 16
        if rows[-1] and used + need > width:
            rows.append([])
            used = 0
        rows[-1].append((text, colour))
        used += need
    return rows if legend else []


def _legend(rows: list[list[tuple[str, str]]], y0: int) -> list[str]:
    out = []
    for r, row in enumerate(rows):
        x = MARGIN
        y = y0 + r * LEGEND_ROW
        for text, colour in row:
            out.append(f'<rect x="{x}" y="{y}" width="16" height="14" rx="2" fill="{colour}"/>'
                       f'<text x="{x + 22}" y="{y + 11}" fill="#222">{escape(text)}</text>')  # fmt: skip
            x += 24 + len(text) * 7 + 16
    return out
