"""The mesh view: every core on the grid it is placed on, at the time cursor the timeline has. Each cell says
the core, what runs there (or idle, waiting on DRAM, done), L2 and WL0 occupancy and a mark when an overlap is
live; colour by L2 occupancy (heat) or by layer. It plays and steps like the timeline (`.`/`,` the next or
previous workload start on any core, space plays), the arrows move between cells, Enter opens the cell's core
in the buffers view at that time; the selected cell is the shared selection (`g`, `b`, the details)."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer

from explorer.document import Document, Vocabulary
from explorer.models.schedule import Schedule
from explorer.schedule.mesh import (
    DONE,
    IDLE,
    RUNNING,
    WAITING_DRAM,
    CoreState,
    MeshLayout,
    MeshTimes,
    mesh_layout,
    overlap_rows,
)
from widgets.app_parts import explorer_app
from widgets.frame_widget import FrameWidget
from widgets.messages import Selected
from widgets.schedule.playback import SPEEDS, Playback
from widgets.schedule.timeline import Timeline
from widgets.text_lines import folded

TEXT = Style(color="#d0d0d0")
DIM = Style(color="#8a8a8a")
OVERLAP = Style(color="#ff3030", bold=True)
LIVE_OVERLAP = "#c0207a"  # a cell whose snapshot holds an overlap: off the heat scale, seen at a glance
HEAT = ("#1f3a2a", "#2d5a32", "#4a7a2a", "#7a7a1f", "#9a5a1a", "#a8321e", "#c01a1a")  # L2 share, low to high
LAYER_COLOURS = ("#2f4f7a", "#5a3f7a", "#2f6a5a", "#7a5a2f", "#6a2f4f", "#3f6a2f", "#7a3f3f", "#2f5f6a")
STATE_WORDS = {RUNNING: "", IDLE: "idle", WAITING_DRAM: "wait DRAM", DONE: "done", "not started": "not started"}


class MeshView(Playback, FrameWidget, can_focus=True):
    BINDINGS = [
        Binding("space", "play", "Play/pause", show=False),
        Binding("full_stop", "step(1)", "Next", key_display="."),
        Binding("comma", "step(-1)", "Prev", show=False, key_display=","),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False),
        Binding("minus", "speed(-1)", "Slower", show=False),
        Binding("left", "move(-1, 0)", "Cell left", show=False),
        Binding("right", "move(1, 0)", "Cell right", show=False),
        Binding("up", "move(0, -1)", "Cell up", show=False),
        Binding("down", "move(0, 1)", "Cell down", show=False),
        Binding("enter", "open_buffers", "Buffers"),
        Binding("c", "colour", "Colour", show=False),
        Binding("home", "edge(0)", "Start", show=False),
        Binding("end", "edge(1)", "End", show=False),
    ]
    HELP_KEYS = [
        ("Mesh", "← ↑ → ↓", "move between the {lane}s on their mesh (the selection is the shared one: g, b, details)"),
        ("Mesh", ". / ,", "the next / previous {block} start on any {lane} (the time cursor the timeline shares)"),
        ("Mesh", "space, + / -", "play the schedule over time, faster / slower"),
        ("Mesh", "Enter", "the selected {lane}'s {memory} in the buffers view at this time"),
        ("Mesh", "c", "colour cells by {memory} occupancy (heat) or by layer"),
    ]
    DEFAULT_CSS = """
    MeshView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    MeshView:focus { border: round $accent; }
    """

    time: reactive[float] = reactive(0.0)
    cell: reactive[tuple[int, int]] = reactive((0, 0))
    by_layer: reactive[bool] = reactive(False)
    playing: reactive[bool] = reactive(False)
    speed_index: reactive[int] = reactive(2)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Mesh"
        self.document: Document | None = None
        self.layout_: MeshLayout | None = None
        self.times: MeshTimes | None = None
        self._timer: Timer | None = None

    # ---- state --------------------------------------------------------------------------------------------
    def show_document(self, document: Document) -> None:
        self.document = document
        s = document.scheduled()
        self.layout_ = mesh_layout(s)
        self._rebuild_times()
        first = int(s.core_ids[0]) if s.core_ids.size else 0
        self.cell = self.layout_.position(first) or (0, 0)
        self.time = 0.0
        self.refresh()

    def _timeline_times(self) -> tuple[np.ndarray, np.ndarray]:
        """The timeline's own times (dependency-aware or sequential, as its `m` chose): one time cursor for both."""
        found = self.app.query("#timeline").results(Timeline) if self.is_mounted else iter(())
        timeline = next(found, None)
        if timeline is not None and timeline.document is self.document:
            return timeline.times()
        t = self.shown.analysed().timeline
        return t.start, t.end

    @property
    def _sequential(self) -> bool:
        return self.times is not None and self.times.source is self.shown.analysed().timeline.start_sequential

    def _rebuild_times(self) -> None:
        s = self.shown.scheduled()
        start, end = self._timeline_times()
        analysis = self.shown.analysed()
        self.times = MeshTimes(s, start, end, analysis.l2_bytes, overlap_rows(s, self.shown.problems))

    def show_row(self, row: int) -> None:
        """Follow the shared cursor: its workload's start is the time, its core the selected cell."""
        s = self.shown.schedule if self.document else None
        if s is None or self.times is None or not 0 <= row < s.n_workloads:
            return
        if self._timeline_times()[0] is not self.times.source:  # the timeline switched its times
            self._rebuild_times()
        start = float(self.times.start[row])
        if not np.isnan(start):
            self.time = start
        place = self.layout_.position(int(s.wl_core[row])) if self.layout_ else None
        if place is not None:
            self.cell = place

    @property
    def selected_core(self) -> int | None:
        return self.layout_.place.get(self.cell) if self.layout_ else None

    def _placed(self) -> MeshLayout:
        if self.layout_ is None:
            raise RuntimeError("the mesh has no layout before a schedule is shown")
        return self.layout_

    def state_of(self, core: int) -> CoreState:
        if self.times is None:
            raise RuntimeError("the mesh has no times before a schedule is shown")
        return self.times.state(core, self.time)

    def _announce(self) -> None:
        core = self.selected_core
        if core is None or self.times is None:
            return
        state = self.state_of(core)
        if state.row >= 0:
            self.post_message(Selected(("workload", state.row), self))

    # ---- actions ------------------------------------------------------------------------------------------
    def action_move(self, dx: int, dy: int) -> None:
        if self.layout_ is None or not self.layout_.place:
            return
        found = self.layout_.step(self.cell, dx, dy)  # holes skipped, in one search whatever the mesh's size
        if found is not None:
            self.cell = found
            self._announce()

    def action_step(self, delta: int) -> None:
        if self.times is not None:
            self.time = self.times.step(self.time, delta)
            self._announce()

    def action_edge(self, which: int) -> None:
        if self.times is not None:
            self.time = float(self.times.events[0 if which == 0 else -1])
            self._announce()

    def _tick(self) -> None:
        if self.times is None:
            return
        last = float(self.times.events[-1])
        self.time = float(self.times.events[0]) if self.time >= last else self.times.step(self.time, 1)
        self._announce()

    def action_colour(self) -> None:
        self.by_layer = not self.by_layer

    def action_open_buffers(self) -> None:
        core = self.selected_core
        if core is None:
            return
        self._announce()
        explorer_app(self).action_view("buffers")

    # ---- rendering ----------------------------------------------------------------------------------------
    def frame_key(self) -> tuple:
        return (self.time, self.cell, self.by_layer, self.playing, self.speed_index, self._sequential)

    def render_frame(self) -> list[Strip]:
        """Every line of the current frame. Public so the benchmark can time one frame."""
        width, height = self.size.width, self.size.height
        if self.document is None or self.layout_ is None or self.times is None or width < 20 or height < 6:
            return [Strip.blank(width)] * height
        s, words = self.shown.scheduled(), self.shown.vocabulary
        layout = self._placed()
        selected = self.selected_core
        lines = folded(self._header(selected), width, TEXT)
        footer = self._footer(width)
        room = height - len(lines) - len(footer)
        cols, rows = max(layout.xlen, 1), max(layout.ylen, 1)
        cell_w = max(min(width // cols, 24), 9)
        cell_h = max(min(room // rows, 6), 2)
        shown_cols, shown_rows = max(width // cell_w, 1), max(room // cell_h, 1)
        x0 = _window(self.cell[0], cols, shown_cols)  # a mesh larger than the panel scrolls with the selection
        y0 = _window(self.cell[1], rows, shown_rows)
        shown = [core for xy, core in layout.place.items()
                 if x0 <= xy[0] < x0 + shown_cols and y0 <= xy[1] < y0 + shown_rows]  # fmt: skip
        states = self.times.states(shown, self.time)  # all at once: a few array operations, not one per cell
        for y in range(y0, min(y0 + shown_rows, rows)):
            cell_lines: list[list[Segment]] = [[] for _ in range(cell_h)]
            for x in range(x0, min(x0 + shown_cols, cols)):
                core = layout.place.get((x, y))
                state = states.get(core) if core is not None else None
                texts, style = self._cell(s, words, core, state, cell_w - 1, cell_h, core == selected)
                for k in range(cell_h):
                    cell_lines[k] += [Segment(texts[k][: cell_w - 1].ljust(cell_w - 1), style), Segment(" ")]
            lines += [Strip(segments) for segments in cell_lines]
        lines = lines[: height - len(footer)]
        while len(lines) < height - len(footer):
            lines.append(Strip.blank(width))
        more = []
        if shown_cols < cols or shown_rows < rows:
            more.append(f"showing x {x0}–{min(x0 + shown_cols, cols) - 1} of 0–{cols - 1}, "
                        f"y {y0}–{min(y0 + shown_rows, rows) - 1} of 0–{rows - 1} (the arrows scroll)")  # fmt: skip
        if more:
            footer = [Strip([Segment(more[0][:width].ljust(width), DIM)]), *footer]
            lines = lines[: height - len(footer)]
        return [*lines, *footer][:height]

    def _header(self, selected: int | None) -> str:
        s, words = self.shown.scheduled(), self.shown.vocabulary
        layout = self._placed()
        axis = f"{words.time_label}, sequential" if self._sequential else words.time_label
        declared = " (declared {:,}×{:,})".format(*layout.declared) if layout.declared else ""
        text = (f"{layout.xlen}×{layout.ylen}{declared} mesh · {s.core_ids.size} {words.lane}s · "
                f"{axis} {self.time:,.0f} · "
                f"{'▶ playing ×' + str(SPEEDS[self.speed_index]) + ' · ' if self.playing else ''}"
                f"colour: {'layer' if self.by_layer else words.memory + ' occupancy'}")  # fmt: skip
        if selected is not None:
            state = self.state_of(selected)
            doing = (f"{words.block} #{int(s.wl_id[state.row])} {s.layers[s.wl_layer[state.row]]}"
                     if state.state == RUNNING else STATE_WORDS.get(state.state, state.state))  # fmt: skip
            text += (f" · selected {s.core_label(selected)} · {doing} · {words.memory} {state.l2_share:.0%}"
                     f"{' · overlap live' if state.overlap else ''}")  # fmt: skip
        return text

    def _cell(self, s: Schedule, words: Vocabulary, core: int | None, state: CoreState | None, width: int, height: int,
              selected: bool) -> tuple[list[str], Style]:  # fmt: skip
        if core is None or state is None:
            return [""] * height, Style(color="#5a5a5a", bgcolor="#1a1a1a")
        x, y = core % max(s.xlen, 1), core // max(s.xlen, 1)
        mark = " ✗" if state.overlap else ""
        what = (s.layers[s.wl_layer[state.row]] if state.state == RUNNING and state.row >= 0
                else STATE_WORDS.get(state.state, state.state))  # fmt: skip
        memory = words.memory
        side = words.side_memory or ""
        if height >= 4:
            texts = [f"c{core} ({x},{y}){mark}", what, f"{memory} {state.l2_share:4.0%}",
                     f"{side} {state.wl0_share:4.0%}" if side else ""]  # fmt: skip
            if height >= 5:
                texts.insert(2, f"#{int(s.wl_id[state.row])}" if state.row >= 0 else "")
        elif height == 3:
            both = f"{memory} {state.l2_share:.0%}" + (f" {side} {state.wl0_share:.0%}" if side else "")
            narrow = f"{state.l2_share:.0%} {state.wl0_share:.0%}" if side else f"{memory} {state.l2_share:.0%}"
            texts = [f"c{core}{mark}", what, both if len(both) <= width else narrow]  # narrow: the footer says which
        else:
            texts = [f"c{core} {state.l2_share:.0%}{mark}", what]
        texts = (texts + [""] * height)[:height]
        if state.overlap:  # one ✗ on a green grid was missed; the whole cell says it
            background = LIVE_OVERLAP
        elif self.by_layer and state.state == RUNNING:
            background = LAYER_COLOURS[zlib.crc32(s.layers[s.wl_layer[state.row]].encode()) % len(LAYER_COLOURS)]
        elif self.by_layer:
            background = "#262626"
        else:
            background = HEAT[min(int(state.l2_share * len(HEAT)), len(HEAT) - 1)]
        style = Style(color="#ffffff" if selected or state.overlap else "#e0e0e0", bgcolor=background,
                      bold=selected or state.overlap,
                      underline=selected, reverse=selected)  # fmt: skip
        return texts, style

    def _footer(self, width: int) -> list[Strip]:
        layout = self._placed()
        parts: list[Strip] = []
        if layout.unplaced:
            said = "; ".join(why for _, why in layout.unplaced[:3])
            more = f" (and {len(layout.unplaced) - 3} more)" if len(layout.unplaced) > 3 else ""
            text = f"not on the mesh: {said}{more}"
            parts.append(Strip([Segment(text[:width].ljust(width), OVERLAP)]))
        heat = [Segment("heat ", DIM)] + [Segment("  ", Style(bgcolor=colour)) for colour in HEAT]
        words = self.shown.vocabulary
        pair = f" · narrow cells: {words.memory}% {words.side_memory}%" if words.side_memory else ""
        legend = f" {words.memory} low→high{pair} · "
        overlap = [Segment(" ✗ ", Style(color="#ffffff", bgcolor=LIVE_OVERLAP, bold=True)), Segment(" overlap live",
                   DIM)]  # fmt: skip
        rest = " · reversed: selected"
        parts.append(Strip([*heat, Segment(legend, DIM), *overlap, Segment(rest, DIM)]).crop(0, width))
        return parts


def _window(selected: int, total: int, shown: int) -> int:
    """The first index of a window of `shown` out of `total` that keeps `selected` inside, centred when it can."""
    if shown >= total:
        return 0
    return min(max(selected - shown // 2, 0), total - shown)
