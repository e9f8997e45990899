"""The graph view: the document's graph as boxes and edges, laid out only as far as it is expanded.

The model is built in a thread worker the first time the view is shown; every expansion, zoom level and
direction is laid out once and cached, so moving around never lays out again. Selection is shared with the
tree (the app reveals the node's ref there, and the tree's cursor selects its node here).
"""

from __future__ import annotations

import functools
import gc
import time
from typing import Any

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding
from textual.strip import Strip

from explorer.arrays import distinct
from explorer.graph.colours import COLOURS, colour_modes, item_colours
from explorer.graph.expansion import initial_expansion
from explorer.graph.group_details import group_ref, is_group_ref
from explorer.graph.layout import DOTS, FULL, LEVEL_NAMES, layout_graph
from explorer.graph.model import ROOT, GraphModel
from explorer.graph.node_data import (
    AGGREGATES,
    MODE_PREFIX,
    numeric_mode_set,
    set_aggregate,
    top_nodes,
    value_of,
    value_text,
)
from explorer.graph.picture import Layout
from explorer.graph.problems import mark_problems
from explorer.graph.search import matched_by_unit, search_nodes
from explorer.graph.shaping import reading_path
from explorer.graph.text import shape_text, usual_dtype
from explorer.graph.visible import expand_all, visible_graph
from explorer.graph.walk import SHAPE_READERS, above_or_below, beside, next_along
from widgets.frame_widget import FrameWidget
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
    draw,
    minimap,
    overview,
    shorten,
)
from widgets.messages import Selected
from widgets.text_lines import fit_fields
from widgets.views import SYNC_GRAPH_NODES

STATUS_LINES = 2
TOP_NODES = 20  # nodes the top list offers
EXPAND_ALL_BOXES = 5_000  # most boxes `X` opens at once (its layout stays well under a second)
MINIMAP = (24, 8)
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


KEPT_KEYS = 16  # navigation keys pressed while the graph is built, replayed once it is drawn (more are dropped)


def kept_until_drawn(action: Any) -> Any:
    """A navigation action pressed while the graph is still being built is kept and run, in order, once the
    first frame is drawn (the window placed), instead of being lost; past KEPT_KEYS they are dropped."""

    @functools.wraps(action)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.model is None and not self.error and self.document is not None:
            if len(self._kept) < KEPT_KEYS:
                self._kept.append((action, args, kwargs))
            return None
        return action(self, *args, **kwargs)

    return keeping


class GraphView(FrameWidget, can_focus=True):
    BINDINGS = [
        Binding("up", "move('up')", "Producer", show=False),
        Binding("down", "move('down')", "Consumer", show=False),
        Binding("left", "move('left')", "Left", show=False),
        Binding("right", "move('right')", "Right", show=False),
        Binding("o", "other_branch", "Other branch", show=False),
        Binding("shift+up", "pan(0, -1)", "Pan up", show=False),
        Binding("shift+down", "pan(0, 1)", "Pan down", show=False),
        Binding("shift+left", "pan(-1, 0)", "Pan left", show=False),
        Binding("shift+right", "pan(1, 0)", "Pan right", show=False),
        Binding("enter", "toggle_group", "Open"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom in", show=False, key_display="+"),
        Binding("minus", "zoom(1)", "Zoom out", show=False),
        Binding("f", "fit", "Fit", show=False),
        Binding("slash", "search", "Find", key_display="/", show=False),
        Binding("right_square_bracket", "match(1)", "Next match", show=False, key_display="]"),
        Binding("left_square_bracket", "match(-1)", "Prev match", show=False, key_display="["),
        Binding("c", "colour", "Colour"),
        Binding("r", "direction", "Direction", show=False),
        Binding("i", "constants", "Constants", show=False),
        Binding("x", "collapse_all", "Collapse all", show=False),
        Binding("X", "expand_all", "Open all", show=False),
        Binding("a", "aggregate", "Group aggregate", show=False),
        Binding("T", "top_nodes", "Top nodes", show=False),
        Binding("m", "minimap", "Minimap", show=False),
    ]
    HELP_KEYS = [
        ("Graph", "↑ / ↓", "producer / consumer along the reading path (a fork: the data's first reader in the "
                           "model's order; ↓ on a closed group reads on inside it)"),
        ("Graph", "o", "at a fork ↓/↑ met (the status line says `↓ 1 of 2`): take the next branch"),
        ("Graph", "← / →", "go to the neighbour on the same rows, across frames"),
        ("Graph", "Shift+arrows", "pan"),
        ("Graph", "Enter", "open or close the selected group (on a node: close its group)"),
        ("Graph", "+ / -", "zoom levels: full boxes, one-line boxes, dots"),
        ("Graph", "f", "fit the whole graph on screen (a scaled picture of it when even dots do not fit; any key "
                       "leaves it, and does nothing else)"),
        ("Graph", "/", "find nodes by name or op type: every match is marked"),
        ("Graph", "[ / ]", "previous / next match (opens the groups that hide it)"),
        ("Graph", "c", "next colour mode: op type, then what the nodes carry (dtype, bytes, time...)"),
        ("Graph", "r", "top to bottom / left to right"),
        ("Graph", "i", "show constants and initializers as nodes / fold them into their readers"),
        ("Graph", "x", "collapse every group"),
        ("Graph", "X", "open every group (up to 5,000 boxes)"),
        ("Graph", "a", "per-node data: what a closed group shows (sum, max, mean)"),
        ("Graph", "T", "the top 20 boxes by the per-node data or numeric mode shown; Enter jumps"),
        ("Graph", "m", "show or hide the minimap (it takes a corner that covers no box nor frame title, else "
                       "waits for one)"),
        ("Graph", "click / wheel", "select a box / scroll"),
    ]
    DEFAULT_CSS = """
    GraphView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    GraphView:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Graph"
        self.model: GraphModel | None = None
        self.ready = False
        self.error = ""
        self.expanded: set[int] = set()
        self.show_constants = False
        self.level = FULL
        self.direction = "TB"
        self.mode = 0
        self.modes = ["op type"]
        self.origin = (0, 0)
        self.selected_key: tuple[int, int] | None = None  # (kind, id): 0 node, 1 group
        self.matches: list[int] = []
        self.match_text = ""
        self.match_index = -1
        self._layouts: dict[tuple, Layout] = {}
        self._placements: dict = {}  # each open group's placement, reused when another group opens or closes
        self._colours: dict[tuple, tuple[np.ndarray, list[tuple[str, str]]]] = {}
        self.last_layout_seconds = 0.0
        self._scroll_pending = ""  # "center" or "start": a scroll asked for before the widget had a size
        self._building = False
        self._kept: list[tuple[Any, tuple, dict]] = []  # keys pressed while building (kept_until_drawn)
        self._replaying = False
        self.show_minimap = True
        self._overview_from: tuple[int, tuple[int, int]] | None = None  # zoom level and place `f` left
        self.minimap_box: tuple[int, int, int, int] | None = None  # where the last frame drew it, None: hidden
        self._pending_ref: Any = None  # a bookmark's box to reveal once the graph is built
        # the last ↓/↑ that had a choice: (the boxes it could go to, which one it took, its arrow)
        self._fork: tuple[list[tuple[int, int]], int, str] | None = None
        self.overview = False  # `f` on a graph bigger than the panel even as dots: the whole of it in braille
        self._previous: Layout | None = None  # the layout before a group opened or closed: where things were
        self.given_model: GraphModel | None = None  # a model to show instead of the document's (a comparison's)
        self.preferred_mode = ""  # the colour mode to open on when the model has it (a comparison's "diff")

    # ---- data ---------------------------------------------------------------------------------------------
    def show_document(self, document: Any) -> None:
        """Remember the document; the graph is built the first time the view is shown, so opening a file never
        pays for a graph nobody looks at (and the tree stays responsive while it is built)."""
        self.document = document
        self.ready = False
        self.model = None
        self._pending_ref = None
        self._layouts.clear()
        self._placements.clear()
        self._colours.clear()
        self._building = False
        self._kept.clear()
        self._replaying = False
        if self.is_on_screen:
            self.on_show()

    def show_model(self, document: Any, model: GraphModel, mode: str = "") -> None:
        """Show `model` (built and annotated by the caller, such as one side of a comparison) for `document`."""
        self.given_model, self.preferred_mode = model, mode
        self.show_document(document)

    def on_show(self) -> None:
        if self.document is not None and self.model is None and not self._building:
            self._building = True
            view = self.document.view
            if self.given_model is not None or view.graph_ready() or 0 <= view.graph_size_hint() <= SYNC_GRAPH_NODES:
                self._build_now()  # built while loading, or small: at once, without the hop through a thread
            else:
                self._build()

    @work(thread=True, exclusive=True, group="graph")
    def _build(self) -> None:
        self._build_now(from_thread=True)

    def _build_now(self, from_thread: bool = False) -> None:
        call = self.app.call_from_thread if from_thread else (lambda fn, *args: fn(*args))
        try:
            model = self.given_model or self.document.view.graph_model()
            mark_problems(model, self.document)  # ✗/⚠ on the boxes, before the boxes are sized
            expanded = initial_expansion(model)
            started = time.perf_counter()
            layout = layout_graph(model, visible_graph(model, expanded), FULL, "TB", self._placements)
            elapsed = time.perf_counter() - started
        except Exception as error:  # a format bug must not take the app down: say it in the view
            call(self._failed, f"{type(error).__name__}: {error}")
            return
        call(self._ready, model, expanded, layout, elapsed)

    def _failed(self, reason: str) -> None:
        self.error = reason
        self.ready = True
        self.refresh()

    def _ready(self, model: GraphModel, expanded: set[int], layout: Layout, elapsed: float) -> None:
        self.model = model
        self.expanded = expanded
        self.modes = colour_modes(model)
        if self.preferred_mode in self.modes:
            self.mode = self.modes.index(self.preferred_mode)
        elif model.data_sets:  # the user brought numbers: the first screen shows them
            self.mode = self.modes.index(next(iter(model.data_sets)))
        self._layouts[self._layout_key()] = layout
        self.last_layout_seconds = elapsed
        if layout.first_item >= 0:
            self.selected_key = self._key_of(layout, layout.first_item)
        self.ready = True
        self._scroll_to_start()
        self.refresh()
        pending, self._pending_ref = self._pending_ref, None
        node = model.ref_to_node.get(pending) if pending is not None else None
        if node is not None:  # a bookmark opened before the graph was built: its box
            self.reveal_node(node, announce=False)
            self._scroll_to_selection(center=True)
            return
        self._announce_selection()  # the details describe the first screen's box, not what the tree had
        gc.freeze()  # the graph lives as long as the view: no full collection rescans it mid-frame (see app.py)

    # ---- layout cache -------------------------------------------------------------------------------------
    def _layout_key(self) -> tuple:
        return (frozenset(self.expanded), self.show_constants, self.level, self.direction)

    @property
    def layout(self) -> Layout | None:
        if self.model is None:
            return None
        key = self._layout_key()
        found = self._layouts.get(key)
        if found is None:
            started = time.perf_counter()
            visible = visible_graph(self.model, self.expanded, self.show_constants)
            found = layout_graph(self.model, visible, self.level, self.direction, self._placements, self._previous)
            self.last_layout_seconds = time.perf_counter() - started
            if len(self._layouts) > 24:
                self._layouts.clear()
            self._layouts[key] = found
            gc.freeze()  # kept for the next time this state is drawn: out of the collector's way too
        return found

    def colours(self) -> tuple[np.ndarray, list[tuple[str, str]]]:
        key = (*self._layout_key(), self.modes[self.mode])
        found = self._colours.get(key)
        if found is None:
            found = self._colours[key] = item_colours(self.model, self.layout.visible, self.modes[self.mode])
        return found

    @staticmethod
    def _key_of(layout: Layout, item: int) -> tuple[int, int]:
        return int(layout.visible.item_kind[item]), int(layout.visible.item_id[item])

    def _item_of_key(self, layout: Layout, key: tuple[int, int] | None) -> int:
        """The item showing `key` now: itself, or the collapsed group that hides the node."""
        if key is None or self.model is None:
            return -1
        kind, ident = key
        if kind == 0:
            return int(layout.visible.node_item[ident]) if ident < layout.visible.node_item.size else -1
        hits = np.flatnonzero((layout.visible.item_kind == 1) & (layout.visible.item_id == ident))
        if hits.size:
            return int(hits[0])
        nodes = np.flatnonzero(self.model.node_group == ident)
        return int(layout.visible.node_item[nodes[0]]) if nodes.size else -1

    @property
    def selected_item(self) -> int:
        layout = self.layout
        return self._item_of_key(layout, self.selected_key) if layout is not None else -1

    # ---- drawing ------------------------------------------------------------------------------------------
    def frame_key(self) -> tuple:
        return (self.ready, self.error, self._layout_key(), self.origin, self.selected_key, self.mode,
                tuple(self.matches[:64]), self.match_index, self.has_focus, self.show_minimap,
                self.overview, self._fork)  # fmt: skip

    def render_frame(self) -> list[Strip]:
        width, height = self.size.width, self.size.height
        if not self.ready:
            return [Strip([Segment("Laying out the graph…", BASE_STYLES[DIM])])]
        if self.error:
            return [Strip([Segment(f"The graph could not be built: {self.error}", BASE_STYLES[WARN])])]
        layout = self.layout
        if layout is None or layout.visible.n_items == 0:
            return [Strip([Segment("This graph has no nodes.", BASE_STYLES[DIM])])]
        if self._scroll_pending == "start":
            self._scroll_to_start()
        elif self._scroll_pending:
            self._scroll_to_selection(center=True)
        if self._kept and not self._replaying:  # the window is placed: the keys pressed while building run now
            self._replaying = True
            self.call_later(self._replay_kept)
        body = max(height - STATUS_LINES, 1)
        colours, legend = self.colours()
        match_items = {int(layout.visible.node_item[n]) for n in self.matches if layout.visible.node_item[n] >= 0}
        if self.overview:
            canvas = overview(layout, width, body, self.selected_item, match_items, colours)
        else:
            canvas = draw(layout, width, body, self.origin, colours, self.selected_item, match_items)
            self.minimap_box = None
            if self.show_minimap and (layout.width > width or layout.height > body):
                self._draw_minimap(canvas, layout, width, body)
            self._label_selected_edges(canvas, layout)  # after the minimap: labels go on free cells only
        lines = [self._strip(canvas, y) for y in range(body)]
        lines += self._status(width, layout, legend)
        return lines

    def _draw_minimap(self, canvas: Any, layout: Layout, width: int, body: int) -> None:
        """The minimap in a corner of the panel that covers no box (the selection included) and no frame's title;
        none while every corner would cover one, or the terminal is too small to spare the cells: it comes back
        when the view moves to where a corner is free. Edge labels are written after it, on free cells only."""
        mw, mh = MINIMAP
        self.minimap_box = None
        if width < mw * 3 or body < mh * 2:
            return
        ox, oy = self.origin
        x, y = layout.x.astype(np.int64) - ox, layout.y.astype(np.int64) - oy
        w, h = layout.w.astype(np.int64), layout.h.astype(np.int64)
        titles = [(fx + 2 - ox, fy - oy, min(len(layout.frame_labels.get(g, "")), max(fw - 8, 4)) + 4)
                  for g, (fx, fy, fw, _) in layout.frames.items() if layout.frame_labels.get(g)]  # fmt: skip
        for x0, y0 in ((width - mw, 0), (width - mw, body - mh), (0, body - mh), (0, 0)):
            covered = (x < x0 + mw) & (x + w > x0) & (y < y0 + mh) & (y + h > y0)
            # nor a frame's title: the name of the group around what is on screen
            if not covered.any() and not any(tx < x0 + mw and tx + tw > x0 and y0 <= ty < y0 + mh
                                             for tx, ty, tw in titles):  # fmt: skip
                break
        else:
            return
        self.minimap_box = (x0, y0, mw, mh)  # on the panel, for tests and the help
        rows = minimap(layout, mw - 2, mh - 2, (ox, oy, width, body))
        canvas.text(x0, y0, "┌" + "─" * (mw - 2) + "┐", FRAME)
        for k, row in enumerate(rows):
            canvas.text(x0, y0 + k + 1, "│" + row + "│", FRAME)
        canvas.text(x0, y0 + mh - 1, "└" + "─" * (mw - 2) + "┘", FRAME)

    def _label_selected_edges(self, canvas: Any, layout: Layout) -> None:
        """On demand: the edges into and out of the selection carry their values' names and types, written by
        the selection: where they leave it and by their arrowheads into it (an edge of a collapsed group stands for
        several: the first and a count)."""
        item = self.selected_item
        if item < 0:
            return
        visible, model = layout.visible, self.model
        touching = [e for e in layout.edges if e.kind == "routed" and item in (e.source, e.target) and e.points]
        if not touching:
            return
        src_item = visible.node_item[model.edge_src]
        dst_item = visible.node_item[model.edge_dst]
        ox, oy = self.origin
        for edge in touching[:12]:
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
                if self._write_edge_label(canvas, edge, edge.source == item, label, layout.direction == "TB"):
                    break

    def _write_edge_label(self, canvas: Any, edge: Any, leaving: bool, text: str, tb: bool) -> bool:
        ox, oy = self.origin
        for cx, cy in _label_spots(edge.points, leaving, len(text), tb):
            if canvas.is_free(cx - ox, cy - oy, len(text)):  # only where it hides nothing
                canvas.text(cx - ox, cy - oy, text, STUB)
                return True
        return False

    def _strip(self, canvas: Any, y: int) -> Strip:
        """One row of cells as segments, one per run of a style (the runs found by numpy, not cell by cell)."""
        chars, styles = canvas.chars[y], canvas.styles[y]
        text = "".join(map(chr, chars.tolist()))
        cuts = [0, *(np.flatnonzero(styles[1:] != styles[:-1]) + 1).tolist(), len(text)]
        codes = styles[cuts[:-1]].tolist() if len(text) else []
        return Strip([Segment(text[a:b], self._style(code)) for a, b, code in zip(cuts, cuts[1:], codes, strict=False)])

    @staticmethod
    @functools.cache
    def _style(code: int) -> Style:
        """The rich Style of a cell's style code, made once per code (a frame asks for tens of thousands)."""
        if code >= HEADER_COLOUR:
            return Style(color="#101010", bgcolor=COLOURS[(code - HEADER_COLOUR) % len(COLOURS)], bold=True)
        if code >= FIRST_COLOUR:
            return Style(color=COLOURS[(code - FIRST_COLOUR) % len(COLOURS)])
        return BASE_STYLES.get(code, Style())

    def _status(self, width: int, layout: Layout, legend: list[tuple[str, str]]) -> list[Strip]:
        model = self.model
        parts = []  # most useful first: a narrow terminal cuts from the end
        selected = self.selected_item
        if selected >= 0:
            parts.append(f"▶ {shorten(layout.labels[selected], 32)} ({shorten(layout.ops[selected], 16)})")
        if self.overview:
            parts.append("overview: any key returns")
        fork = self._fork_text(layout)
        if fork:
            parts.append(fork)
        if self.matches:
            parts.append(f"match {self.match_index + 1}/{len(self.matches)}")
        if layout.back_edges:
            parts.append(f"↺ {layout.back_edges} back edges (cycle)")
        if layout.visible.dangling:
            parts.append(f"⚠ {len(layout.visible.dangling)} inputs nobody produces")
        parts += [
            f"colour: {self.modes[self.mode]}",
            f"{LEVEL_NAMES[self.level]} {self.direction}",
            f"{layout.visible.n_items:,} boxes of {model.n_nodes:,} nodes",
            f"{len(self.expanded)}/{model.n_groups} groups open",
        ]
        status = Strip([Segment(fit_fields(parts, width).ljust(width), BASE_STYLES[TEXT])])  # whole fields
        return [status, Strip(_legend_segments(legend, width)).crop(0, width)]

    def _fork_text(self, layout: Layout) -> str:
        """`↓ 1 of 2: LayerNormalization · other: Add (o)` while the selection is the branch ↓ took at a fork."""
        if self._fork is None:
            return ""
        choices, taken, arrow = self._fork
        if self.selected_key != choices[taken]:
            return ""
        names = []
        for key in choices:
            item = self._item_of_key(layout, key)
            names.append(layout.ops[item] if item >= 0 else "?")
        others = ", ".join(shorten(n, 20) for k, n in enumerate(names) if k != taken)
        return f"{arrow} {taken + 1} of {len(choices)}: {shorten(names[taken], 24)} · other: {others} (o)"

    # ---- selection ----------------------------------------------------------------------------------------
    def select_item(self, item: int, *, announce: bool = True) -> None:
        layout = self.layout
        if layout is None or not 0 <= item < layout.visible.n_items:
            return
        key = self._key_of(layout, item)
        changed = key != self.selected_key
        self.selected_key = key
        self._scroll_to_selection()
        self.refresh()
        if announce and changed and (message := self._selected_message(layout, item)) is not None:
            self.post_message(message)

    def _announce_selection(self) -> None:
        """Tell the app (details, tree, status) what is selected now, after a change made without select_item
        (Enter, open all, the first screen): one selection, never a details panel describing the last box."""
        layout = self.layout
        item = self.selected_item
        if layout is not None and item >= 0 and (message := self._selected_message(layout, item)) is not None:
            self.post_message(message)

    def _ref_of(self, layout: Layout, item: int) -> Any:
        """The selection as the app shares it: a node's or group's tree ref; a group the tree has no item for
        (a name scope) is `("graph-group", id)`, which the details describe from the graph."""
        kind, ident = self._key_of(layout, item)
        if kind == 0:
            return self.model.node_ref[ident]
        ref = self.model.group_ref[ident]
        return group_ref(ident) if ref is None else ref

    def _selected_message(self, layout: Layout, item: int) -> Selected | None:
        """What the app is told of a box selected: its ref, and a group's path where the tree has no name for it."""
        ref = self._ref_of(layout, item)
        if ref is None:
            return None
        kind, ident = self._key_of(layout, item)
        return Selected(ref, self, self.model.group_path(ident) if kind == 1 and is_group_ref(ref) else "")

    def select_ref(self, ref: Any) -> bool:
        """Select the node showing a tree ref (or the collapsed group hiding it); False when none does (also
        before the graph is built: it opens on its first screen, the tree then follows it)."""
        if self.model is None:
            return False
        node = self.model.ref_to_node.get(ref)
        if node is None:
            return False
        key = self.selected_key
        if key == (0, node) or (key is not None and key[0] == 0 and self.model.node_ref[key[1]] == ref):
            return True  # already there (boxes that share a tree item, such as a function's inputs, stay put)
        self.selected_key = (0, node)
        self._scroll_to_selection()
        self.refresh()
        return True

    def _scroll_to_selection(self, center: bool = False, keep: bool = False) -> None:
        """Keep the selection on screen (centred when asked); a graph that fits is centred across and top-aligned.
        With `keep` (a group just opened or closed in place) nothing is re-centred: the window moves only when the
        selection's top-left corner (its title) is off screen, and then only as far as that needs. Before the
        widget has a size this waits for the first frame."""
        layout = self.layout
        item = self.selected_item
        if layout is None or item < 0:
            return
        if self.size.width == 0 or self.size.height <= STATUS_LINES:
            self._scroll_pending = "center" if center else self._scroll_pending or "center"
            return
        self._scroll_pending = ""
        width, body = self.size.width, self.size.height - STATUS_LINES
        x, y, w, h = int(layout.x[item]), int(layout.y[item]), int(layout.w[item]), int(layout.h[item])
        ox, oy = self.origin
        if keep:
            ox = min(max(ox, x + min(w, width) - width), x) if not ox <= x < ox + width else ox
            oy = min(max(oy, y + min(h, body) - body), y) if not oy <= y < oy + body else oy
            self.origin = (ox, oy)
            return
        if layout.width <= width:
            ox = (layout.width - width) // 2
        elif center or not (ox <= x and x + w <= ox + width):
            ox = min(max(x + w // 2 - width // 2, 0), layout.width - width)
        if layout.height <= body:
            oy = 0
        elif center or not (oy <= y and y + h <= oy + body):
            oy = min(max(y + h // 2 - body // 2, 0), layout.height - body)
        self.origin = (ox, oy)

    def _close_up_room(self) -> None:
        """After a group closed, the graph is smaller than the window that held it open: where boxes are off
        screen past one edge while the other edge shows empty room, the window moves back over them (closing a
        wide block at 80 columns left the window scrolled right, the graph's left part hidden). Opening keeps its
        empty room instead: there the boxes around the group staying put matters more."""
        layout = self.layout
        if layout is None or self.size.width == 0:
            return
        width, body = self.size.width, self.size.height - STATUS_LINES
        ox, oy = self.origin
        ox = min(max(ox, min(0, layout.width - width)), max(0, layout.width - width))
        oy = min(max(oy, min(0, layout.height - body)), max(0, layout.height - body))
        self.origin = (ox, oy)

    def _scroll_to_start(self) -> None:
        """The first screen shows where reading starts: the selection (the model's first input) near the top
        (left in LR) with as many of the first boxes along the main path as fit, centred across them (or the
        whole graph, when it fits)."""
        layout = self.layout
        item = self.selected_item
        if layout is None or item < 0 or self.model is None:
            return
        if self.size.width == 0 or self.size.height <= STATUS_LINES:
            self._scroll_pending = "start"
            return
        self._scroll_pending = ""
        width, body = self.size.width, self.size.height - STATUS_LINES
        tb = self.direction == "TB"
        span_across, span_along = (width, body) if tb else (body, width)
        x0, y0 = int(layout.x[item]), int(layout.y[item])
        x1, y1 = x0 + int(layout.w[item]), y0 + int(layout.h[item])
        for node in reading_path(self.model, count=32)[1:]:  # grow the window's target while it still fits
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
        else:
            ox = 0 if layout.width <= width else min(max(x0 - 2, 0), layout.width - width)
            oy = 0 if layout.height <= body else min(max((y0 + y1) // 2 - body // 2, 0), layout.height - body)
        self.origin = (ox, oy)

    def _keep_in_place(self, before: Layout, after: Layout, group: int) -> None:
        """After a group opened or closed: move the window by what moved under it, so the boxes around the group
        stay where they were on screen (the nearest box above the group is the anchor; the group itself when
        nothing is above it)."""
        shared = {self._key_of(before, k): k for k in range(before.visible.n_items)}
        gone = self._item_of_key(before, (1, group))
        gx = int(before.x[gone]) if gone >= 0 else 0
        gy = int(before.y[gone]) if gone >= 0 else 0
        best, best_score = None, None
        for k in range(after.visible.n_items):
            old = shared.get(self._key_of(after, k))
            if old is None or old == gone:
                continue
            above = int(before.y[old]) + int(before.h[old]) <= gy
            score = (0 if above else 1, abs(gy - int(before.y[old])) + abs(gx - int(before.x[old])))
            if best_score is None or score < best_score:
                best, best_score = (old, k), score
        if best is not None:
            old, new = best
            dx, dy = int(after.x[new]) - int(before.x[old]), int(after.y[new]) - int(before.y[old])
        elif gone >= 0 and group in after.frames:
            fx, fy, fw, _ = after.frames[group]
            dx, dy = fx + fw // 2 - (gx + int(before.w[gone]) // 2), fy - gy
        else:
            return
        self.origin = (self.origin[0] + dx, self.origin[1] + dy)

    def _replay_kept(self) -> None:
        """One kept key, then the rest after the screen has caught up: what each key selects reaches the other
        views (and comes back) before the next runs, as when they are pressed one by one."""
        if not self._kept:
            self._replaying = False
            return
        action, args, kwargs = self._kept.pop(0)
        action(self, *args, **kwargs)
        if self._kept:
            self.call_after_refresh(self._replay_kept)
        else:
            self._replaying = False

    # ---- actions ------------------------------------------------------------------------------------------
    @kept_until_drawn
    def action_move(self, where: str) -> None:
        """↓/↑ along the reading path (explorer.graph.walk): at a fork, the consumer first in the model's order,
        and the status line says which of how many (`o` takes the next); ←/→ to the neighbour on the same rows.
        A box with no edge that way moves to the nearest box that way. ↓ on a closed group reads on inside it:
        the group opens (as Enter opens it) and the cursor goes to its first member."""
        layout = self.layout
        item = self.selected_item
        if layout is None or item < 0 or self.model is None:
            return
        tb = self.direction == "TB"
        along = where in ("up", "down") if tb else where in ("left", "right")
        forward = where in ("down", "right")
        self._fork = None
        closed_group = layout.visible.item_kind[item] == 1 and not (layout.unit.size and layout.unit[item])
        if along and forward and closed_group:
            self.action_toggle_group(reading=True)
            return
        if along:
            choices = next_along(self.model, layout, item, forward)
            if choices:
                if len(choices) > 1:
                    arrow = {"down": "↓", "up": "↑", "left": "←", "right": "→"}[where]
                    self._fork = ([self._key_of(layout, c) for c in choices], 0, arrow)
                self.select_item(choices[0])
                return
            target = above_or_below(layout, item, forward) if tb else beside(layout, item, 1 if forward else -1)
        else:
            target = beside(layout, item, 1 if forward else -1) if tb else above_or_below(layout, item, forward)
        if target >= 0:
            self.select_item(target)

    @kept_until_drawn
    def action_other_branch(self) -> None:
        """At the last fork ↓/↑ met, go to its next branch instead (round the branches)."""
        if self._fork is None or self.layout is None:
            return
        choices, taken, arrow = self._fork
        taken = (taken + 1) % len(choices)
        self._fork = (choices, taken, arrow)
        item = self._item_of_key(self.layout, choices[taken])
        if item >= 0:
            self.select_item(item)

    @kept_until_drawn
    def action_pan(self, dx: int, dy: int) -> None:
        ox, oy = self.origin
        self.origin = (ox + dx * max(self.size.width // 4, 4), oy + dy * max(self.size.height // 4, 2))
        self.refresh()

    @kept_until_drawn
    def action_zoom(self, delta: int) -> None:
        level = min(max(self.level + delta, FULL), DOTS)
        if level != self.level:
            self.level = level
            self._scroll_to_selection(center=True)
            self.refresh()

    @kept_until_drawn
    def action_fit(self) -> None:
        """The most detailed level whose layout fits the view, the whole graph centred; when even dots do not
        fit, an overview of the whole graph in braille dots at the panel's size (any key leaves it)."""
        width, body = self.size.width, max(self.size.height - STATUS_LINES, 1)
        came_from = (self.level, self.origin)
        for level in (FULL, 1, DOTS):
            self.level = level
            layout = self.layout
            if layout is None or (layout.width <= width and layout.height <= body):
                break
        layout = self.layout
        if layout is not None:
            self.overview = layout.width > width or layout.height > body
            self.origin = ((layout.width - width) // 2, max((layout.height - body) // 2, 0))
            if self.overview:  # the picture stands for no zoom level: leaving it goes back where `f` was pressed
                self.level, self.origin = came_from
                self._overview_from = came_from
        self.refresh()

    def on_key(self, event: events.Key) -> None:
        """Any key leaves the overview, back to the zoom level and place `f` was pressed at, and does nothing
        else (a `c` that leaves it does not change the colours)."""
        if self.overview:
            self.overview = False
            if self._overview_from is not None:
                self.level, self.origin = self._overview_from
            event.stop()
            event.prevent_default()
            self.refresh()

    @kept_until_drawn
    def action_toggle_group(self, reading: bool = False) -> None:
        """Enter: open the selected group (the cursor moves onto the frame's top-left member, which is on screen
        where the box was, so the window need not move) or close the selected node's group; everything outside
        it stays where it was on screen. `reading` (↓ into a closed group): the cursor goes to where reading
        enters it instead (the first data reader fed from outside), and the window follows it."""
        layout = self.layout
        item = self.selected_item
        if layout is None or item < 0 or self.model is None:
            return
        kind, ident = self._key_of(layout, item)
        if kind == 1:
            group = ident
            self._previous = layout
            self.expanded = self.expanded | {ident}
        else:
            group = int(self.model.node_group[ident])
            if group == ROOT:
                return
            self._previous = layout
            self.expanded = self.expanded - {group} - self.model.descendants(group)
        after = self.layout
        self._previous = None
        self._keep_in_place(layout, after, group)  # the window first: the cursor then goes where it can be seen
        if kind == 1:
            entry = self._first_member(after, ident) if reading else self._top_left_member(after, ident)
            self.selected_key = entry or (1, ident)
        else:
            self.selected_key = (1, group)
        self._scroll_to_selection(keep=True)
        if kind != 1:
            self._close_up_room()
        self.refresh()
        self._announce_selection()

    def _top_left_member(self, layout: Layout, group: int) -> tuple[int, int] | None:
        """The drawn item of an opened group at its top left (a node, or a closed subgroup): of those whose
        corner is on screen now, the topmost, then leftmost, so the window need not move (a frame wider than the
        panel holds its first row far to the right); else the leftmost of its first row. A schedule layer: its
        first workload (its own rule, see _first_member)."""
        model = self.model
        if model.group_unit.size and model.group_unit[group]:
            return self._first_member(layout, group)
        items = distinct(layout.visible.node_item[self._member_nodes(layout, group)])
        if items.size == 0:
            return None
        ox, oy = self.origin
        width, body = self.size.width, self.size.height - STATUS_LINES
        seen = items[(layout.x[items] >= ox) & (layout.x[items] < ox + width) & (layout.y[items] >= oy)
                     & (layout.y[items] < oy + body)]  # fmt: skip
        if seen.size:
            return self._key_of(layout, int(seen[np.lexsort((layout.x[seen], layout.y[seen]))[0]]))
        top = int(layout.y[items].min())  # the first row of boxes (a layer's boxes may sit a row or two apart)
        row = items[layout.y[items] < top + int(layout.h[items].max(initial=1))]
        return self._key_of(layout, int(row[np.lexsort((layout.y[row], layout.x[row]))[0]]))

    def _first_member(self, layout: Layout, group: int) -> tuple[int, int] | None:
        """The drawn item inside an opened group that comes first in the model's order (a node, or a closed
        group when the group holds only groups), so Enter always leaves a selection. Folded weights do not count:
        they sit in a closed subgroup's box (the first one in the model's order would pick that box)."""
        model = self.model
        if model.group_unit.size and model.group_unit[group]:  # a schedule layer: its first workload in the file
            first = model.ref_to_node.get(model.group_ref[group])
            if first is not None and layout.visible.node_item[first] >= 0:
                return self._key_of(layout, int(layout.visible.node_item[first]))
        inside = list({group} | self.model.descendants(group))
        nodes = self._member_nodes(layout, group)
        if nodes.size == 0:
            return None
        # where reading enters: a member fed from outside the group that reads data, not only its shape
        member = np.zeros(model.n_nodes, dtype=bool)
        member[nodes] = True
        from_outside = member[model.edge_dst] & ~np.isin(model.node_group[model.edge_src], inside)
        entries = {int(n) for n in model.edge_dst[from_outside].tolist() if model.node_op[n] not in SHAPE_READERS}
        if entries:
            nodes = np.asarray(sorted(entries), dtype=np.int64)
        first = int(nodes[np.argmin(model.topo_rank[nodes])])
        return self._key_of(layout, int(layout.visible.node_item[first]))

    def _member_nodes(self, layout: Layout, group: int) -> np.ndarray:
        """The nodes of a group and of the groups inside it that are drawn (visible, folded weights left out
        unless constants are shown), in node order: where Enter can put the cursor."""
        model = self.model
        inside = list({group} | self.model.descendants(group))
        drawn = ~model.node_constant if not self.show_constants else np.ones(model.n_nodes, dtype=bool)
        return np.flatnonzero(np.isin(model.node_group, inside) & (layout.visible.node_item >= 0) & drawn)

    def action_minimap(self) -> None:
        self.show_minimap = not self.show_minimap
        self.refresh()

    def action_collapse_all(self) -> None:
        self.expanded = set()
        self._scroll_to_selection(center=True)
        self.refresh()

    def action_expand_all(self) -> None:
        """Every group open (schedule layers stay boxes), as `graph --expand all`; refused, with the count, when
        that would draw more than EXPAND_ALL_BOXES boxes (a layout of that many takes seconds)."""
        if self.model is None:
            return
        boxes = int((~self.model.node_constant).sum())
        if boxes > EXPAND_ALL_BOXES:
            self.app.notify(f"{boxes:,} boxes is too many to open at once: open groups with Enter",
                            severity="warning")  # fmt: skip
            return
        key = self.selected_key
        self.expanded = expand_all(self.model)
        if key is not None and key[0] == 1 and key[1] in self.expanded:
            self.selected_key = self._first_member(self.layout, key[1]) or key
        self._scroll_to_selection(center=True)
        self.refresh()
        self._announce_selection()

    def add_data_sets(self, names: list[str]) -> None:
        """Per-node data added to the model after it was shown: each set a mode, the first shown now."""
        if self.model is None or not names:
            return
        self.modes = colour_modes(self.model)
        self.mode = self.modes.index(names[0])
        self._colours.clear()
        self.refresh()

    def _data_mode(self) -> str | None:
        """The per-node data set the view is coloured by, or None (and says how to get one)."""
        mode = self.modes[self.mode] if self.model is not None else ""
        if self.model is None or mode not in self.model.data_sets:
            self.app.notify("colour by a per-node data set first (c; add one with the palette's \"Add per-node "
                            "data\" or --node-data)", severity="warning")  # fmt: skip
            return None
        return mode

    def action_aggregate(self) -> None:
        """What a closed group shows of a per-node data set: sum → max → mean."""
        name = self._data_mode()
        if name is None:
            return
        data = self.model.data_sets[name]
        set_aggregate(self.model, name, AGGREGATES[(AGGREGATES.index(data.aggregate) + 1) % len(AGGREGATES)])
        self._colours.clear()
        self.app.notify(f"closed groups show the {data.aggregate} of what they hold")
        self.refresh()

    def action_top_nodes(self) -> None:
        """The boxes with the largest values of the data set shown, or of a numeric mode (a joined trace's
        measured time, the schedule's time, L2 peak...); Enter jumps to one."""
        mode = self.modes[self.mode] if self.model is not None else ""
        data = (self.model.data_sets.get(mode) or numeric_mode_set(self.model, mode)) if self.model else None
        if data is None:
            self._data_mode()  # says how to get numbers to list
            return
        name = data.name
        from widgets.review_screens import LinksScreen

        model = self.model
        top = top_nodes(model, data, TOP_NODES)
        labels = []
        for node, unit in top:
            label, op = (model.group_label[unit], model.group_op[unit]) if unit != ROOT else (
                model.node_label[node], model.node_op[node])  # fmt: skip
            labels.append(f"{value_text(name, value_of(data, node, unit)):>22}  {label}  ({op})")

        def jump(index: int | None) -> None:
            if index is not None:  # a layer the file gave a value itself stays one box
                self.reveal_node(*top[index])

        self.app.push_screen(LinksScreen(f"Top {len(top)} by {name.removeprefix(MODE_PREFIX)}", labels), jump)

    def action_colour(self) -> None:
        self.mode = (self.mode + 1) % len(self.modes)
        self.refresh()

    def action_direction(self) -> None:
        self.direction = "LR" if self.direction == "TB" else "TB"
        self._scroll_to_selection(center=True)
        self.refresh()

    def action_constants(self) -> None:
        self.show_constants = not self.show_constants
        self.refresh()

    def action_search(self) -> None:
        from widgets.review_screens import PromptScreen

        self.app.push_screen(PromptScreen("Find in the graph (name or op type):"), self.find)

    def find(self, text: str | None) -> None:
        if text is None or self.model is None:
            return
        self.matches = search_nodes(self.model, text)
        self.match_text = text
        self.match_index = -1
        if self.matches:
            self.action_match(1)
        else:
            self.app.notify(f"no node matches {text!r}")
        self.refresh()

    def action_match(self, delta: int) -> None:
        if not self.matches or self.model is None:
            return
        self.match_index = (self.match_index + delta) % len(self.matches)
        node = self.matches[self.match_index]
        unit = matched_by_unit(self.model, node, self.match_text)  # a layer found by its name stays one box
        self.reveal_node(node, unit)

    def reveal_ref(self, ref: Any) -> bool:
        """Select the box of a tree ref, opening every group that hides it (a bookmark's box); kept until the
        graph is built when it is not yet."""
        if self.model is None:
            self._pending_ref = ref
            return True
        node = self.model.ref_to_node.get(ref)
        if node is None:
            return False
        self.reveal_node(node, announce=False)
        return True

    def reveal_node(self, node: int, unit: int = ROOT, announce: bool = True) -> None:
        """Select `node`, opening every group that hides it (a `unit` group, such as a schedule layer, stays one
        box and is selected instead); a folded constant shows the constants to be reached."""
        if self.model is None:
            return
        group = int(self.model.group_parent[unit]) if unit != ROOT else int(self.model.node_group[node])
        opened = set()
        while group != ROOT:  # open every group that hides it
            opened.add(group)
            group = int(self.model.group_parent[group])
        self.expanded = self.expanded | opened
        layout = self.layout
        item = int(layout.visible.node_item[node])
        if item < 0:  # a folded constant: show constants to reach it
            self.show_constants = True
            layout = self.layout
            item = int(layout.visible.node_item[node])
        self.select_item(item, announce=announce)

    # ---- mouse --------------------------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        layout = self.layout
        if layout is None:
            return
        at = event.get_content_offset(self)
        if at is None:
            return
        item = layout.item_at(at.x + self.origin[0], at.y + self.origin[1])
        if item >= 0:
            if event.chain >= 2 and layout.visible.item_kind[item] == 1:
                self.select_item(item)
                self.action_toggle_group()
            else:
                self.select_item(item)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.action_pan(0, 1)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.action_pan(0, -1)


def _legend_segments(legend: list[tuple[str, str]], width: int) -> list[Segment]:
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


def _label_spots(points: list[tuple[int, int]], leaving: bool, length: int, tb: bool) -> list[tuple[int, int]]:
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
