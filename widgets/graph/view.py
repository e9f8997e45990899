"""The graph view: the document's graph as boxes and edges, laid out only as far as it is expanded.

The model is built in a thread worker the first time the view is shown; every expansion, zoom level and
direction is laid out once and cached, so moving around never lays out again. Selection is shared with the
tree (the app reveals the node's ref there, and the tree's cursor selects its node here).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from rich.segment import Segment
from textual import events, work
from textual.message import Message
from textual.strip import Strip

from explorer.document import Document, group_ref, is_group_ref
from explorer.graph.colours import colour_modes, item_colours
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import COMPACT, DOTS, FULL, LEVEL_NAMES, layout_graph
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
from explorer.graph.session import GraphSession, Key, Window
from explorer.graph.visible import visible_graph
from explorer.graph.window import at_start, closed_up, first_level, on_selection
from explorer.models.graph import ROOT, GraphModel
from widgets.frame_widget import FrameWidget
from widgets.graph.canvas import (
    DIM,
    TEXT,
    WARN,
    draw,
    overview,
    shorten,
)
from widgets.graph.kept_keys import KeptKeys, kept_until_drawn
from widgets.graph.keys import GRAPH_BINDINGS, GRAPH_HELP_KEYS
from widgets.graph.painting import BASE_STYLES, canvas_strip, draw_minimap, label_selected_edges, legend_segments
from widgets.messages import Selected
from widgets.text_lines import fit_fields
from widgets.views import SYNC_GRAPH_NODES

STATUS_LINES = 2
TOP_NODES = 20  # nodes the top list offers
EXPAND_ALL_BOXES = 5_000  # most boxes `X` opens at once (its layout stays well under a second)

class GraphView(FrameWidget, can_focus=True):
    class Built(Message):
        """The document's own graph is built and its first screen laid out: what the app keeps for the next open
        of a big model (explorer.cache)."""

        def __init__(self, document: Document) -> None:
            super().__init__()
            self.document = document

    BINDINGS = GRAPH_BINDINGS
    HELP_KEYS = GRAPH_HELP_KEYS
    DEFAULT_CSS = """
    GraphView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    GraphView:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Graph"
        self.session = GraphSession()  # what is open, selected, laid out: the state `graph --open` drives too
        self.ready = False
        self.error = ""
        self.mode = 0
        self.modes = ["op type"]
        self.origin = (0, 0)
        self.matches: list[int] = []
        self.match_text = ""
        self.match_index = -1
        self._colours: dict[tuple, tuple[np.ndarray, list[tuple[str, str]]]] = {}
        self._scroll_pending = ""  # "center" or "start": a scroll asked for before the widget had a size
        self._building = False
        self.kept_keys = KeptKeys()  # keys pressed while building (kept_until_drawn)
        self.show_minimap = True
        self._overview_from: tuple[int, tuple[int, int]] | None = None  # zoom level and place `f` left
        self.minimap_box: tuple[int, int, int, int] | None = None  # where the last frame drew it, None: hidden
        self._pending_ref: Any = None  # a bookmark's box to reveal once the graph is built
        self.overview = False  # `f` on a graph bigger than the panel even as dots: the whole of it in braille
        self.given_model: GraphModel | None = None  # a model to show instead of the document's (a comparison's)
        self.preferred_mode = ""  # the colour mode to open on when the model has it (a comparison's "diff")

    # ---- the session's state, as the view's own (tests, the screenshot and the benchmarks read and set it) ------
    @property
    def model(self) -> GraphModel | None:
        return self.session.model

    @property
    def expanded(self) -> set[int]:
        return self.session.expanded

    @expanded.setter
    def expanded(self, groups: set[int]) -> None:
        self.session.expanded = groups

    @property
    def selected_key(self) -> Key | None:
        return self.session.selected_key

    @selected_key.setter
    def selected_key(self, key: Key | None) -> None:
        self.session.selected_key = key

    @property
    def level(self) -> int:
        return self.session.level

    @property
    def direction(self) -> str:
        return self.session.direction

    @property
    def show_constants(self) -> bool:
        return self.session.show_constants

    @property
    def last_layout_seconds(self) -> float:
        return self.session.last_layout_seconds

    # ---- data ---------------------------------------------------------------------------------------------
    def show_document(self, document: Document) -> None:
        """Remember the document; the graph is built the first time the view is shown, so opening a file never
        pays for a graph nobody looks at (and the tree stays responsive while it is built)."""
        self.document = document
        self.ready = False
        self.session.reset()
        self._pending_ref = None
        self._colours.clear()
        self._building = False
        self.kept_keys.clear()
        if self.is_on_screen:
            self.on_show()

    def show_model(self, document: Document, model: GraphModel, mode: str = "") -> None:
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
            model = self.given_model or self.shown.view.drawn_graph()
            if self.document is not None:
                mark_problems(model, self.document)  # ✗/⚠ on the boxes, before the boxes are sized
            expanded = initial_expansion(model)
            started = time.perf_counter()
            visible = visible_graph(model, expanded)
            layout = layout_graph(model, visible, FULL, "TB", self.session.placements)
            elapsed = time.perf_counter() - started
            level = FULL
            if self.level == FULL:  # the user's own zoom level otherwise, kept across files
                level, layout = first_level(
                    model, layout, lambda: layout_graph(model, visible, COMPACT, "TB", self.session.placements),
                    self.size.width, self.size.height - STATUS_LINES)  # fmt: skip
        except Exception as error:  # a format bug must not take the app down: say it in the view
            call(self._failed, f"{type(error).__name__}: {error}")
            return
        call(self._ready, model, expanded, layout, elapsed, level)

    def _failed(self, reason: str) -> None:
        self.error = reason
        self.ready = True
        self.refresh()

    def _ready(self, model: GraphModel, expanded: set[int], layout: Layout, elapsed: float, level: int = FULL) -> None:
        worker_state = (self.level, self.direction, self.show_constants) == (FULL, "TB", False)
        if worker_state and level != FULL:  # the whole main path fits in one-line boxes only: the first screen
            self.session.level = level
        self.session.start(model, expanded, layout if worker_state else None)  # what the worker laid out
        self.session.last_layout_seconds = elapsed
        self.modes = colour_modes(model)
        if self.preferred_mode in self.modes:
            self.mode = self.modes.index(self.preferred_mode)
        elif model.data_sets:  # the user brought numbers: the first screen shows them
            self.mode = self.modes.index(next(iter(model.data_sets)))
        self.ready = True
        self._scroll_to_start()
        self.refresh()
        if self.given_model is None and self.document is not None:
            self.post_message(self.Built(self.document))
        pending, self._pending_ref = self._pending_ref, None
        node = model.ref_to_node.get(pending) if pending is not None else None
        if node is not None:  # a bookmark opened before the graph was built: its box
            self.reveal_node(node, announce=False)
            self._scroll_to_selection(center=True)
            return
        self._announce_selection()  # the details describe the first screen's box, not what the tree had
        gc.freeze()  # the graph lives as long as the view: no full collection rescans it mid-frame (see app.py)

    # ---- layouts ------------------------------------------------------------------------------------------
    @property
    def picture(self) -> Layout | None:
        laid_out = self.session.laid_out
        found = self.session.layout
        if self.session.laid_out != laid_out:
            gc.freeze()  # kept for the next time this state is drawn: out of the collector's way too
        return found

    def colours(self) -> tuple[np.ndarray, list[tuple[str, str]]]:
        key = (*self.session.state(), self.modes[self.mode])
        found = self._colours.get(key)
        if found is None:
            visible = self.shown_picture.visible
            found = self._colours[key] = item_colours(self.graph_model, visible, self.modes[self.mode])
        return found

    @property
    def selected_item(self) -> int:
        return self.session.selected_item

    @property
    def graph_model(self) -> GraphModel:
        """The model shown: what draws and acts runs only once it is built (`model` is None before)."""
        if self.model is None:
            raise RuntimeError("the graph is not built yet")
        return self.model

    @property
    def shown_picture(self) -> Layout:
        found = self.picture
        if found is None:
            raise RuntimeError("the graph is not built yet")
        return found

    def _window(self) -> Window:
        return (*self.origin, self.size.width, self.size.height - STATUS_LINES)

    # ---- drawing ------------------------------------------------------------------------------------------
    def frame_key(self) -> tuple:
        return (self.ready, self.error, self.session.state(), self.origin, self.selected_key, self.mode,
                tuple(self.matches[:64]), self.match_index, self.has_focus, self.show_minimap,
                self.overview, self.session.fork)  # fmt: skip

    def render_frame(self) -> list[Strip]:
        width, height = self.size.width, self.size.height
        if not self.ready:
            return [Strip([Segment("Laying out the graph…", BASE_STYLES[DIM])])]
        if self.error:
            return [Strip([Segment(f"The graph could not be built: {self.error}", BASE_STYLES[WARN])])]
        layout = self.picture
        if layout is None or layout.visible.n_items == 0:
            return [Strip([Segment("This graph has no nodes.", BASE_STYLES[DIM])])]
        if self._scroll_pending == "start":
            self._scroll_to_start()
        elif self._scroll_pending:
            self._scroll_to_selection(center=True)
        self.kept_keys.replay(self)  # the window is placed: the keys pressed while building run now
        body = max(height - STATUS_LINES, 1)
        colours, legend = self.colours()
        match_items = {int(layout.visible.node_item[n]) for n in self.matches if layout.visible.node_item[n] >= 0}
        if self.overview:
            canvas = overview(layout, width, body, self.selected_item, match_items, colours)
        else:
            canvas = draw(layout, width, body, self.origin, colours, self.selected_item, match_items)
            self.minimap_box = None  # where the last frame drew it (tests, the help), None: hidden
            if self.show_minimap and (layout.width > width or layout.height > body):
                self.minimap_box = draw_minimap(canvas, layout, width, body, self.origin)
            label_selected_edges(canvas, layout, self.graph_model, self.selected_item, self.origin)
        lines = [canvas_strip(canvas, y) for y in range(body)]
        lines += self._status(width, layout, legend)
        return lines

    def _status(self, width: int, layout: Layout, legend: list[tuple[str, str]]) -> list[Strip]:
        model = self.graph_model
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
        return [status, Strip(legend_segments(legend, width)).crop(0, width)]

    def _fork_text(self, layout: Layout) -> str:
        """`↓ 1 of 2: LayerNormalization · other: Add (o)` while the selection is the branch ↓ took at a fork."""
        fork = self.session.fork
        if fork is None:
            return ""
        choices, taken, arrow = fork.choices, fork.taken, fork.arrow
        if self.selected_key != choices[taken]:
            return ""
        names = []
        for key in choices:
            item = self.session.item_of_key(layout, key)
            names.append(layout.ops[item] if item >= 0 else "?")
        others = ", ".join(shorten(n, 20) for k, n in enumerate(names) if k != taken)
        return f"{arrow} {taken + 1} of {len(choices)}: {shorten(names[taken], 24)} · other: {others} (o)"

    # ---- selection ----------------------------------------------------------------------------------------
    def select_item(self, item: int, *, announce: bool = True) -> None:
        layout = self.picture
        if layout is None or not 0 <= item < layout.visible.n_items:
            return
        changed = self.session.select(item)
        self._scroll_to_selection()
        self.refresh()
        if announce and changed and (message := self._selected_message(layout, item)) is not None:
            self.post_message(message)

    def _announce_selection(self) -> None:
        """Tell the app (details, tree, status) what is selected now, after a change made without select_item
        (Enter, open all, the first screen): one selection, never a details panel describing the last box."""
        layout = self.picture
        item = self.selected_item
        if layout is not None and item >= 0 and (message := self._selected_message(layout, item)) is not None:
            self.post_message(message)

    def _ref_of(self, layout: Layout, item: int) -> Any:
        """The selection as the app shares it: a node's or group's tree ref; a group the tree has no item for
        (a name scope) is `("graph-group", id)`, which the details describe from the graph."""
        kind, ident = self.session.key_of(layout, item)
        if kind == 0:
            return self.graph_model.node_ref[ident]
        ref = self.graph_model.group_ref[ident]
        return group_ref(ident) if ref is None else ref

    def _selected_message(self, layout: Layout, item: int) -> Selected | None:
        """What the app is told of a box selected: its ref, and a group's path where the tree has no name for it."""
        ref = self._ref_of(layout, item)
        if ref is None:
            return None
        kind, ident = self.session.key_of(layout, item)
        return Selected(ref, self, self.graph_model.group_path(ident) if kind == 1 and is_group_ref(ref) else "")

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
        """Keep the selection on screen (explorer.graph.window.on_selection); before the widget has a size this
        waits for the first frame."""
        layout, item = self.picture, self.selected_item
        if layout is None or item < 0:
            return
        if self.size.width == 0 or self.size.height <= STATUS_LINES:
            self._scroll_pending = "center" if center else self._scroll_pending or "center"
            return
        self._scroll_pending = ""
        width, body = self.size.width, self.size.height - STATUS_LINES
        self.origin = on_selection(layout, item, self.origin, width, body, center, keep)

    def _close_up_room(self) -> None:
        layout = self.picture
        if layout is not None and self.size.width:
            self.origin = closed_up(layout, self.origin, self.size.width, self.size.height - STATUS_LINES)

    def _scroll_to_start(self) -> None:
        """The first screen: the input and the first boxes of the reading path (explorer.graph.window.at_start)."""
        layout, item = self.picture, self.selected_item
        if layout is None or item < 0 or self.model is None:
            return
        if self.size.width == 0 or self.size.height <= STATUS_LINES:
            self._scroll_pending = "start"
            return
        self._scroll_pending = ""
        self.origin = at_start(self.model, layout, item, self.size.width, self.size.height - STATUS_LINES)

    # ---- actions ------------------------------------------------------------------------------------------
    @kept_until_drawn
    def action_move(self, where: str) -> None:
        """↓/↑ along the reading path, ←/→ to the neighbour on the same rows (GraphSession.step): at a fork the
        status line says which of how many (`o` takes the next). ↓ on a closed group reads on inside it: the group
        opens (as Enter opens it) and the cursor goes to its first member."""
        target = self.session.step(where)
        if target is None:
            self.action_toggle_group(reading=True)
        elif target >= 0:
            self.select_item(target)

    @kept_until_drawn
    def action_other_branch(self) -> None:
        """At the last fork ↓/↑ met, go to its next branch instead (round the branches)."""
        item = self.session.other_branch()
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
            self.session.level = level
            self._scroll_to_selection(center=True)
            self.refresh()

    @kept_until_drawn
    def action_fit(self) -> None:
        """The most detailed level whose layout fits the view, the whole graph centred; when even dots do not
        fit, an overview of the whole graph in braille dots at the panel's size (any key leaves it)."""
        width, body = self.size.width, max(self.size.height - STATUS_LINES, 1)
        came_from = (self.level, self.origin)
        for level in (FULL, 1, DOTS):
            self.session.level = level
            layout = self.picture
            if layout is None or (layout.width <= width and layout.height <= body):
                break
        layout = self.picture
        if layout is not None:
            self.overview = layout.width > width or layout.height > body
            self.origin = ((layout.width - width) // 2, max((layout.height - body) // 2, 0))
            if self.overview:  # the picture stands for no zoom level: leaving it goes back where `f` was pressed
                self.session.level, self.origin = came_from
                self._overview_from = came_from
        self.refresh()

    def on_key(self, event: events.Key) -> None:
        """Any key leaves the overview, back to the zoom level and place `f` was pressed at, and does nothing
        else (a `c` that leaves it does not change the colours)."""
        if self.overview:
            self.overview = False
            if self._overview_from is not None:
                self.session.level, self.origin = self._overview_from
            event.stop()
            event.prevent_default()
            self.refresh()

    @kept_until_drawn
    def action_close_group(self) -> None:
        """Backspace: close the open group the selection is drawn in (a stack, whose members are all groups)."""
        self.action_toggle_group(enclosing=True)

    @kept_until_drawn
    def action_toggle_group(self, reading: bool = False, enclosing: bool = False) -> None:
        """Enter: open the selected group or close the selected node's group (GraphSession.toggle); the window
        moves by what moved under it, so everything outside the group stays where it was on screen, and the
        cursor is where it can be seen."""
        toggled = self.session.toggle(self._window(), reading, enclosing)
        if toggled is None:
            return
        if toggled.shift is not None:
            self.origin = (self.origin[0] + toggled.shift[0], self.origin[1] + toggled.shift[1])
        self._scroll_to_selection(keep=True)
        if not toggled.opened:
            self._close_up_room()
        self.refresh()
        self._announce_selection()

    def action_minimap(self) -> None:
        self.show_minimap = not self.show_minimap
        self.refresh()

    def action_collapse_all(self) -> None:
        self.session.expanded = set()
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
        self.session.open_all()
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
        data = self.graph_model.data_sets[name]
        set_aggregate(self.graph_model, name, AGGREGATES[(AGGREGATES.index(data.aggregate) + 1) % len(AGGREGATES)])
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

        model = self.graph_model
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
        self.session.direction = "LR" if self.direction == "TB" else "TB"
        self._scroll_to_selection(center=True)
        self.refresh()

    def action_constants(self) -> None:
        self.session.show_constants = not self.show_constants
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
        item = self.session.reveal(node, unit)
        if item >= 0:
            self.select_item(item, announce=announce)

    # ---- mouse --------------------------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        layout = self.picture
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
