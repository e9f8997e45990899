"""Draws a window of a graph layout into character cells: frames of open groups, orthogonal edges with
box-drawing junctions, boxes at three zoom levels, stubs for long and back edges, and a minimap.

Pure functions over numpy arrays: the widget turns the cells into Strips, tests read the characters. Only what
intersects the window is drawn, so a frame costs the same for 100 or 100,000 laid-out items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from explorer.formatting import shorten_middle
from explorer.graph.layout import COMPACT, DOTS
from explorer.graph.picture import Layout
from explorer.graph.text import shorten_title, stub_forms, stub_text

UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
JUNCTIONS = {
    UP | DOWN: "│", LEFT | RIGHT: "─", DOWN | RIGHT: "┌", DOWN | LEFT: "┐", UP | RIGHT: "└", UP | LEFT: "┘",
    UP | DOWN | RIGHT: "├", UP | DOWN | LEFT: "┤", LEFT | RIGHT | DOWN: "┬", LEFT | RIGHT | UP: "┴",
    UP | DOWN | LEFT | RIGHT: "┼", UP: "│", DOWN: "│", LEFT: "─", RIGHT: "─",
}  # fmt: skip
# style codes the widget maps to colours
BLANK, EDGE, FRAME, FRAME_LABEL, BOX, TEXT, DIM, SELECTED, MATCH, STUB, WARN, MINIMAP, VIEWPORT, BACK = range(14)
FIRST_COLOUR = 32  # style code FIRST_COLOUR + k: box in colour k of the current colour mode
HEADER_COLOUR = 64  # HEADER_COLOUR + k: a box's name line, on a band of colour k


@dataclass
class Canvas:
    width: int
    height: int
    chars: np.ndarray = field(init=False)  # unicode code points
    styles: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.chars = np.full((self.height, self.width), ord(" "), dtype=np.int32)
        self.styles = np.zeros((self.height, self.width), dtype=np.int16)

    def text(self, x: int, y: int, text: str, style: int, limit: int | None = None) -> None:
        if not 0 <= y < self.height:
            return
        if limit is not None:
            text = text[:limit]
        start = max(x, 0)
        end = min(x + len(text), self.width)
        if end <= start:
            return
        part = text[start - x : end - x]
        self.chars[y, start:end] = np.frombuffer(part.encode("utf-32-le"), dtype=np.uint32)
        self.styles[y, start:end] = style

    def is_free(self, x: int, y: int, length: int) -> bool:
        """Whether `length` cells from (x, y) are on the canvas and blank."""
        if not 0 <= y < self.height or x < 0 or x + length > self.width:
            return False
        return bool((self.chars[y, x : x + length] == ord(" ")).all())

    def free_text_near(self, spots: list[tuple[int, int]], text: str, style: int) -> None:
        """The text whole at the first spot where it fits on blank cells; else as much as fits at the first."""
        self.first_form_free([text], lambda _: spots, style)

    def first_form_free(self, forms: list[str], spots_of: Callable[[str], list[tuple[int, int]]],
                        style: int) -> None:  # fmt: skip
        """The first of a label's forms (fullest first) that fits whole on blank cells at one of its spots; else the
        last form as free_text writes it at its first spot."""
        for text in forms:
            for x, y in spots_of(text):
                if self.is_free(x, y, len(text)):
                    self.text(x, y, text, style)
                    return
        self.free_text(*spots_of(forms[-1])[0], forms[-1], style)

    def free_text(self, x: int, y: int, text: str, style: int, limit: int | None = None) -> None:
        """Text written only on blank cells: as much of it as fits before the first cell in use (cut with "…"),
        nothing when fewer than four cells are free, so a label never hides a box, a frame or an edge."""
        if not 0 <= y < self.height or x < 0 or x >= self.width:
            return
        if limit is not None:
            text = text[:limit]
        row = self.chars[y, x : x + len(text)]
        used = np.flatnonzero(row != ord(" "))
        room = int(used[0]) if used.size else row.size
        if room >= len(text):
            self.text(x, y, text, style)
        elif room >= 4:
            self.text(x, y, text[: room - 2] + "…", style)

    def line(self, y: int) -> str:
        return "".join(map(chr, self.chars[y].tolist()))


# Cut from the middle, so both the scope and the op's own name stay readable.
shorten = shorten_middle


def draw(
    layout: Layout,
    width: int,
    height: int,
    origin: tuple[int, int],
    colour_of_item: np.ndarray,
    selected: int = -1,
    matches: set[int] | None = None,
) -> Canvas:
    canvas = Canvas(width, height)
    ox, oy = origin
    matches = matches or set()
    _draw_frames(canvas, layout, ox, oy)
    _draw_edges(canvas, layout, ox, oy)
    _draw_frame_labels(canvas, layout, ox, oy)  # over the edges that enter a frame through its top
    shown = np.flatnonzero(
        (layout.x + layout.w > ox) & (layout.x < ox + width) & (layout.y + layout.h > oy) & (layout.y < oy + height)
    )
    for item in shown.tolist():
        if item == selected:
            style = SELECTED
        elif item in matches:
            style = MATCH
        else:
            style = FIRST_COLOUR + int(colour_of_item[item])
        _draw_box(canvas, layout, item, int(layout.x[item]) - ox, int(layout.y[item]) - oy, style)
    _draw_stubs(canvas, layout, ox, oy, shown)
    _draw_shared_tracks(canvas, layout, ox, oy)
    return canvas


def _draw_shared_tracks(canvas: Canvas, layout: Layout, ox: int, oy: int) -> None:
    """Where a gap has more edges than tracks, the busiest track says how many sources it carries beyond one
    each (beside its run in TB, above it in LR), so a merged line is not read as one edge."""
    tb = layout.direction == "TB"
    for lo, hi, row, count in layout.shared_tracks:
        text = f" ≡ +{count:,} edges share tracks"
        if tb:  # the first free cells beside the run, right then left (other edges' drops stand there)
            right, left = hi - ox + 2, lo - ox - len(text) - 1
            spots = [(right + k, row - oy) for k in range(32)] + [(left - k, row - oy) for k in range(32)]
        else:
            spots = [(row - ox + 1, lo - oy - 1 - k) for k in range(8)] + [
                (row - ox + 1, hi - oy + 1 + k) for k in range(8)
            ]
        canvas.free_text_near(spots, text, STUB)


def _draw_frames(canvas: Canvas, layout: Layout, ox: int, oy: int) -> None:
    for fx, fy, fw, fh in layout.frames.values():
        x0, y0 = fx - ox, fy - oy
        x1, y1 = x0 + fw - 1, y0 + fh - 1
        if x1 < 0 or y1 < 0 or x0 >= canvas.width or y0 >= canvas.height:
            continue
        canvas.text(x0, y0, "╭" + "┄" * (fw - 2) + "╮", FRAME)
        canvas.text(x0, y1, "╰" + "┄" * (fw - 2) + "╯", FRAME)
        top, bottom = max(y0 + 1, 0), min(y1, canvas.height)
        for x in (x0, x1):  # the sides, a column at a time
            if top < bottom and 0 <= x < canvas.width:
                canvas.chars[top:bottom, x] = ord("┆")
                canvas.styles[top:bottom, x] = FRAME


def _draw_frame_labels(canvas: Canvas, layout: Layout, ox: int, oy: int) -> None:
    for group, (fx, fy, fw, _) in layout.frames.items():
        label = layout.frame_labels.get(group, "")
        if label and 0 <= fy - oy < canvas.height:
            # a frame whose left edge is scrolled off keeps its title on screen, at the left (a sticky header)
            left = fx - ox + 2
            room = max(fw - 8, 4) if left >= 0 else fx - ox + fw - 6
            room = min(room, canvas.width - max(left, 0) - 4)  # nor past the window's right side: shortened whole
            if room >= 4 and left < canvas.width:
                canvas.text(max(left, 0), fy - oy, f" ▾ {shorten_title(label, room)} ", FRAME_LABEL)


DOTTED = {ord("│"): ord("┊"), ord("─"): ord("┈")}  # an owner → branch link's straight runs


def _draw_edges(canvas: Canvas, layout: Layout, ox: int, oy: int) -> None:
    """Values as solid lines; an op's link to its closed branch or body dotted, under the solid ones."""
    bits = np.zeros((canvas.height, canvas.width), dtype=np.int8)
    links = np.zeros_like(bits)
    heads: list[tuple[int, int, str]] = []
    tb = layout.direction == "TB"
    for edge in layout.edges:
        points = edge.points
        if len(points) < 2:
            continue
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        if max(xs) < ox or min(xs) >= ox + canvas.width or max(ys) < oy or min(ys) >= oy + canvas.height:
            continue
        for (ax, ay), (bx, by) in zip(points[:-1], points[1:], strict=True):
            _segment(links if edge.owner else bits, ax - ox, ay - oy, bx - ox, by - oy)
        last = points[-1]
        heads.append((last[0] - ox, last[1] - oy, ("▽" if tb else "▷") if edge.owner else ("▼" if tb else "▶")))
    table = np.full(16, ord(" "), dtype=np.int32)
    for key, char in JUNCTIONS.items():
        table[key] = ord(char)
    flat_chars = canvas.chars.ravel()
    flat_styles = canvas.styles.ravel()
    dotted = np.flatnonzero((links.ravel() != 0) & (bits.ravel() == 0))
    if dotted.size:
        chars = table[links.ravel()[dotted]]
        for solid, dots in DOTTED.items():
            chars[chars == solid] = dots
        flat_chars[dotted] = chars
        flat_styles[dotted] = EDGE
    drawn = np.flatnonzero(bits.ravel())
    if drawn.size:
        flat_chars[drawn] = table[bits.ravel()[drawn]]
        flat_styles[drawn] = EDGE
    for x, y, char in heads:
        canvas.text(x, y, char, EDGE)


def _segment(bits: np.ndarray, ax: int, ay: int, bx: int, by: int) -> None:
    height, width = bits.shape
    if ax == bx:
        if not 0 <= ax < width:
            return
        lo, hi = sorted((ay, by))
        if lo == hi:
            return
        inner_lo, inner_hi = max(lo + 1, 0), min(hi, height)
        if inner_lo < inner_hi:
            bits[inner_lo:inner_hi, ax] |= UP | DOWN
        if 0 <= lo < height:
            bits[lo, ax] |= DOWN
        if 0 <= hi < height:
            bits[hi, ax] |= UP
    elif ay == by:
        if not 0 <= ay < height:
            return
        lo, hi = sorted((ax, bx))
        inner_lo, inner_hi = max(lo + 1, 0), min(hi, width)
        if inner_lo < inner_hi:
            bits[ay, inner_lo:inner_hi] |= LEFT | RIGHT
        if 0 <= lo < width:
            bits[ay, lo] |= RIGHT
        if 0 <= hi < width:
            bits[ay, hi] |= LEFT


def _draw_box(canvas: Canvas, layout: Layout, item: int, x: int, y: int, style: int) -> None:
    w, h = int(layout.w[item]), int(layout.h[item])
    unit = bool(layout.unit[item]) if layout.unit.size else False  # a node that opens (a schedule layer)
    group = layout.visible.item_kind[item] == 1 and not unit
    if layout.level == DOTS:
        canvas.text(x, y, "◆" if group else "●", style)
        return
    if layout.level == COMPACT:
        text = layout.compacts[item]
        fitted = shorten_title(text, w - 2) if group else shorten(text, w - 2)  # a stack keeps its `× N`
        canvas.text(x, y, ("⟦" if group else "[") + fitted.ljust(w - 2) + ("⟧" if group else "]"), style)
        return
    inner = w - 2
    if group:
        top, side, bottom = "╔" + "═" * inner + "╗", "║", "╚" + "═" * inner + "╝"
    else:
        top, side, bottom = "┌" + "─" * inner + "┐", "│", "└" + "─" * inner + "┘"
    canvas.text(x, y, top, style)
    name = layout.titles[item]
    if unit:
        name_line = (" " + shorten_title(name, inner - 3)).ljust(inner - 1) + "▸"
    else:
        name_line = (" " + shorten_title(name, inner - 1)).ljust(inner)
    canvas.text(x, y + 1, side + name_line + side, style)
    lines = [line for line in (layout.details[item], layout.extras[item]) if line][: h - 3]  # no empty line
    for k, line in enumerate(lines):
        canvas.text(x, y + 2 + k, side + (" " + shorten(line, inner - 1)).ljust(inner) + side, style)
    canvas.text(x, y + h - 1, bottom, style)
    lo, hi = max(x + 1, 0), min(x + w - 1, canvas.width)
    if lo < hi and style >= FIRST_COLOUR:  # the title on a band of the box's colour, the other lines dim
        if 0 <= y + 1 < canvas.height:
            canvas.styles[y + 1, lo:hi] = style - FIRST_COLOUR + HEADER_COLOUR
        for row in range(y + 2, y + h - 1):
            if 0 <= row < canvas.height:
                canvas.styles[row, lo:hi] = DIM


def _stub_spots(box: tuple[int, int, int, int], tb: bool, above: bool, text: str) -> list[tuple[int, int]]:
    """Where a box's stub label may go: in TB on the row below it (above it, for what comes in), from its left
    edge, else ending at its right edge, else left of it; in LR right of it (below its left part)."""
    x, y, w, h = box
    row = y - 1 if above else y + h
    if tb:
        return [(x, row), (x + w - len(text), row), (x - len(text) - 1, row)]
    return [(max(x - 16, 0), y + h)] if above else [(x + w + 1, y)]


def _draw_stubs(canvas: Canvas, layout: Layout, ox: int, oy: int, shown: np.ndarray) -> None:
    tb = layout.direction == "TB"
    for item in shown.tolist():
        x, y = int(layout.x[item]) - ox, int(layout.y[item]) - oy
        w, h = int(layout.w[item]), int(layout.h[item])
        limit = max(w + 12, 16)
        targets = layout.out_stubs.get(item)
        if targets:  # below the box (TB), from its left edge, else ending at its right edge, else left of it
            forms = stub_forms("↓" if tb else "→", [layout.labels[t] for t in targets], limit)
            canvas.first_form_free(forms, partial(_stub_spots, (x, y, w, h), tb, False),
                                   BACK if item in layout.back_sources else STUB)  # fmt: skip
        sources = layout.in_stubs.get(item)
        if sources:
            forms = stub_forms("↑" if tb else "←", [layout.labels[s] for s in sources], limit)
            canvas.first_form_free(forms, partial(_stub_spots, (x, y, w, h), tb, True), STUB)
        bundle = layout.bundles.get(item)
        if bundle:
            canvas.free_text(x if tb else x + w + 1, y + h if tb else y, f"⇊ {bundle:,} readers", STUB)
        bundled = layout.in_bundles.get(item)
        if bundled:  # each reader of a bundled value says it reads one (the bundle has no line to it)
            text = stub_text("⇈", [layout.labels[s] for s in bundled])[: max(w + 12, 16)]
            spots = [(x + w - len(text), y - 1), (x, y - 1), (x + w + 1, y)] if tb else [(x, y + h)]
            canvas.free_text_near(spots, text, STUB)
    on_screen = set(shown.tolist())
    for item, name in layout.visible.dangling:
        if item in on_screen:
            x, y = int(layout.x[item]) - ox, int(layout.y[item]) - oy
            canvas.free_text(x + int(layout.w[item]) + 1, y, f"⚠ {shorten(name, 20)}?", WARN)


def minimap(layout: Layout, width: int, height: int, window: tuple[int, int, int, int]) -> list[str]:
    """The whole layout shrunk into width × height cells (· items, ▒ the window on screen)."""
    grid = np.full((height, width), ord(" "), dtype=np.int32)
    sx = max(layout.width, 1) / width
    sy = max(layout.height, 1) / height
    if layout.x.size:
        cx = np.clip(((layout.x + layout.w / 2) / sx).astype(np.int64), 0, width - 1)
        cy = np.clip(((layout.y + layout.h / 2) / sy).astype(np.int64), 0, height - 1)
        grid[cy, cx] = ord("·")
    wx, wy, ww, wh = window  # the window may reach past the layout (a narrow graph is centred): clamp it
    x0 = min(max(int(wx / sx), 0), width - 1)
    x1 = min(max(int((wx + ww) / sx), x0), width - 1)
    y0 = min(max(int(wy / sy), 0), height - 1)
    y1 = min(max(int((wy + wh) / sy), y0), height - 1)
    grid[y0 : y1 + 1, x0] = ord("▏")
    grid[y0 : y1 + 1, x1] = ord("▕")
    grid[y0, x0 : x1 + 1] = ord("▔")
    grid[y1, x0 : x1 + 1] = ord("▁")
    return ["".join(map(chr, row.tolist())) for row in grid]


_BRAILLE_BITS = np.array([[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]], dtype=np.int32)  # [row][col]
MAX_OVERVIEW_EDGES = 20_000  # beyond this the overview draws the boxes only


def overview(
    layout: Layout,
    width: int,
    height: int,
    selected: int = -1,
    matches: set[int] | None = None,
    colour_of_item: np.ndarray | None = None,
) -> Canvas:
    """The whole layout as a picture at the panel's size: what `f` shows when even one-dot boxes do not fit.

    Columns and rows are scaled each on its own, so a deep model fills the panel instead of standing as one
    column of dots; boxes are blocks in the colour mode's colours, open groups' frames outlined, edges dim
    braille dots, the selection and the matches marked."""
    canvas = Canvas(width, height)
    if layout.visible.n_items == 0 or width <= 0 or height <= 0:
        return canvas
    sx = max(layout.width / width, 1.0)  # layout cells per panel cell, across and down, each on its own
    sy = max(layout.height / height, 1.0)
    pad_x = max((width - int(np.ceil(layout.width / sx))) // 2, 0)  # centred where the layout is smaller
    pad_y = 0

    def cell_x(v: Any) -> Any:  # an array of cells, or one
        return np.clip((v / sx).astype(np.int64) + pad_x, 0, width - 1)

    def cell_y(v: Any) -> Any:
        return np.clip((v / sy).astype(np.int64) + pad_y, 0, height - 1)

    if len(layout.edges) <= MAX_OVERVIEW_EDGES:  # edges: braille dots, 2×4 a cell
        gw, gh = width * 2, height * 4
        lines = np.zeros((gh, gw), dtype=bool)
        for edge in layout.edges:
            for (ax, ay), (bx, by) in zip(edge.points[:-1], edge.points[1:], strict=False):
                steps = max(abs(bx - ax) * 2 / sx, abs(by - ay) * 4 / sy, 1)
                t = np.linspace(0.0, 1.0, int(min(steps + 1, 4 * (gw + gh))))
                xs = np.clip(((ax + (bx - ax) * t) * 2 / sx).astype(np.int64) + 2 * pad_x, 0, gw - 1)
                ys = np.clip(((ay + (by - ay) * t) * 4 / sy).astype(np.int64) + 4 * pad_y, 0, gh - 1)
                lines[ys, xs] = True
        code = np.zeros((height, width), dtype=np.int32)
        for r in range(4):
            for c in range(2):
                code |= np.where(lines[r::4, c::2][:height, :width], _BRAILLE_BITS[r, c], 0)
        drawn = code > 0
        canvas.chars[drawn] = 0x2800 + code[drawn]
        canvas.styles[drawn] = EDGE
    for fx, fy, fw, fh in layout.frames.values():  # open groups: outlined
        x0, x1 = int(cell_x(np.float64(fx))), int(cell_x(np.float64(fx + fw - 1)))
        y0, y1 = int(cell_y(np.float64(fy))), int(cell_y(np.float64(fy + fh - 1)))
        if x1 > x0:
            canvas.chars[[y0, y1], x0 : x1 + 1] = ord("┄")
            canvas.styles[[y0, y1], x0 : x1 + 1] = FRAME
        if y1 > y0:
            canvas.chars[y0 : y1 + 1, [x0, x1]] = ord("┆")
            canvas.styles[y0 : y1 + 1, [x0, x1]] = FRAME
    x0, y0 = cell_x(layout.x.astype(np.float64)), cell_y(layout.y.astype(np.float64))
    x1 = cell_x((layout.x + layout.w - 1).astype(np.float64))
    y1 = cell_y((layout.y + layout.h - 1).astype(np.float64))
    colours = colour_of_item if colour_of_item is not None else np.zeros(layout.visible.n_items, dtype=np.int64)
    for k in range(layout.visible.n_items):
        style = FIRST_COLOUR + int(colours[k])
        canvas.chars[y0[k] : y1[k] + 1, x0[k] : x1[k] + 1] = ord("█" if x1[k] > x0[k] or y1[k] > y0[k] else "■")
        canvas.styles[y0[k] : y1[k] + 1, x0[k] : x1[k] + 1] = style
    marks = [(item, MATCH) for item in sorted(matches or ())] + ([(selected, SELECTED)] if selected >= 0 else [])
    for item, style in marks:
        canvas.text(int(x0[item] + x1[item]) // 2, int(y0[item] + y1[item]) // 2, "◆" if style == SELECTED else "●",
                    style)  # fmt: skip
    return canvas
