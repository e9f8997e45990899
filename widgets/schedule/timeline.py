"""Per-core workload timeline (Perfetto-style keys): one row per core, workloads as blocks on a time axis.

Drawing is bucketed per terminal column from numpy arrays (`explorer.schedule.timeline_view`), so a frame
costs O(visible workloads + width) per core and never loops over all workloads in Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.reactive import reactive
from textual.strip import Strip

from explorer.companions import companions_of
from explorer.document import Document
from explorer.formatting import compact, number
from explorer.problem_groups import rows_with_problems
from explorer.schedule.timeline_view import column_owners, columns_touching, nice_ticks
from widgets.frame_widget import FrameWidget
from widgets.messages import Selected

LABEL = 14  # columns for the core labels
# block kinds by code (Schedule.wl_type), two shades each; the vocabulary names the kinds in the status line
KIND_COLORS = (("#4f8fe8", "#2f6bc4"), ("#4cbf73", "#2f9a55"), ("#e8a33d", "#c4822a"), ("#b46be8", "#8f4fc4"))
KIND_COLOR_NAMES = ("blue", "green", "orange", "purple")
LAYER_PALETTE = [
    "#4f8fe8",
    "#4cbf73",
    "#e8a33d",
    "#b46be8",
    "#e85f5f",
    "#3dc4c4",
    "#c4c43d",
    "#e87fc4",
    "#8f8fe8",
    "#7fc47f",
    "#c49a6b",
    "#6bb0c4",
]
IDLE = Style(color="#444444")
SELECTED = Style(color="#ffffff", bold=True)
LINKED = Style(color="#ffd75f")  # producers and consumers of the selection
CRITICAL = Style(color="#ff4d4d")
AXIS = Style(color="#9a9a9a")
CURSOR = Style(color="#ffffff", bgcolor="#5f5f87")
PROBLEM = Style(color="#ff5f5f", bold=True)
PROBLEM_ON_BLOCK = Style(color="#ffffff", bgcolor="#d03030", bold=True)


class Timeline(FrameWidget, can_focus=True):
    """Keys: W/S zoom, A/D pan, ./, next/previous workload, F fit selection, Home/End, ↑/↓ core."""

    BINDINGS = [
        # the footer shows few of a view's keys: at 80 columns the app's p and n must fit beside them (? lists all)
        Binding("w,W", "zoom(0.5)", "Zoom in", key_display="w", show=False),
        Binding("s,S", "zoom(2.0)", "Zoom out", key_display="s", show=False),
        Binding("a,A", "pan(-0.25)", "Pan left", show=False),
        Binding("d,D", "pan(0.25)", "Pan right", show=False),
        Binding("full_stop", "step(1)", "Next", key_display="."),
        Binding("comma", "step(-1)", "Prev", show=False, key_display=","),
        Binding("f,F", "fit", "Fit selection", show=False),
        Binding("home", "edge(0)", "Start", show=False),
        Binding("end", "edge(1)", "End", show=False),
        Binding("up", "core(-1)", "Core up", show=False),
        Binding("down", "core(1)", "Core down", show=False),
        Binding("c,C", "toggle_critical", "Critical", key_display="c"),
        Binding("l,L", "toggle_colors", "Colour by layer", show=False),
        Binding("m,M", "toggle_mode", "Sequential", show=False),
        Binding("0", "zoom_all", "Whole schedule", show=False),
        Binding("j,J", "go_to_core", "Go to core", show=False, key_display="j"),
    ]
    HELP_KEYS = [  # letters work in either case, as in Perfetto
        ("Timeline", "W / S", "zoom in / out around the selection"),
        ("Timeline", "A / D", "pan left / right"),
        ("Timeline", ". / ,", "next / previous {block} on the {lane}"),
        ("Timeline", "F", "fit the view to the selected {block}"),
        ("Timeline", "0", "show everything"),
        ("Timeline", "Home / End", "go to the start / end"),
        ("Timeline", "↑ / ↓", "previous / next {lane}"),
        ("Timeline", "J", "go to a {lane} by its number (the status line counts the {lane}s above and below)"),
        ("Timeline", "C", "highlight the critical path"),
        ("Timeline", "L", "colour by {block} kind / by layer"),
        ("Timeline", "M", "dependency-aware / sequential times"),
        ("Timeline", "click / wheel", "select a {block} / zoom"),
    ]
    DEFAULT_CSS = """
    Timeline { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    Timeline:focus { border: round $accent; }
    """

    t0: reactive[float] = reactive(0.0)
    t1: reactive[float] = reactive(1.0)
    selected: reactive[int] = reactive(-1)  # workload row
    core_index: reactive[int] = reactive(0)
    sequential: reactive[bool] = reactive(False)
    by_layer: reactive[bool] = reactive(False)
    show_critical: reactive[bool] = reactive(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Timeline"
        self.document: Document | None = None
        self._critical = np.zeros(0, dtype=bool)
        self._problem_rows: set[int] = set()  # blocks with a problem: "!" on the block and in the lane margin
        self._layer_styles: list[Style] = []  # colour by layer: two shades per layer
        self._problem_cores: set[int] = set()

    # ---- data ---------------------------------------------------------------------------------------------
    def show_document(self, document: Document) -> None:
        # the whole file after its first part: the rows shown stay the same rows, so the selection stays
        keep_selection = self.document is not None and bool(self.document.partial)
        self.document = document
        s = document.scheduled()
        analysis = document.analysed()
        self._critical = np.zeros(s.n_workloads, dtype=bool)
        self._critical[analysis.timeline.critical_path] = True
        self._problem_rows = set(rows_with_problems(s, document.problems, ("error",)))
        self._problem_cores = {int(s.wl_core[row]) for row in self._problem_rows}
        self.t0, self.t1 = 0.0, max(self.makespan, 1.0)
        if s.n_workloads and not (keep_selection and 0 <= self.selected < s.n_workloads):
            self.selected = 0
        self.refresh()

    @property
    def schedule(self):
        return self.shown.schedule if self.document else None

    @property
    def makespan(self) -> float:
        t = self.shown.analysed().timeline
        estimate = t.makespan_sequential if self.sequential else t.makespan
        measured = self.measured
        if measured is not None and np.isfinite(measured.end).any():
            return max(estimate, float(np.nanmax(measured.end)))
        return estimate

    @property
    def measured(self) -> Any:
        """The joined hardware trace (a lane of measured times under each estimated lane), or None."""
        return companions_of(self.document).measured if self.document is not None else None

    def times(self) -> tuple[np.ndarray, np.ndarray]:
        t = self.shown.analysed().timeline
        return (t.start_sequential, t.end_sequential) if self.sequential else (t.start, t.end)

    def select(self, row: int, *, announce: bool = False, keep_view: bool = False) -> None:
        """Select a workload, show its core and scroll it into view."""
        s = self.schedule
        if s is None or not 0 <= row < s.n_workloads:
            return
        self.selected = row
        self.core_index = int(np.searchsorted(s.core_ids, s.wl_core[row]))
        start, end = self.times()
        if not keep_view and not np.isnan(start[row]) and not (self.t0 <= start[row] and end[row] <= self.t1):
            span = self.t1 - self.t0
            middle = (start[row] + end[row]) / 2
            self.t0, self.t1 = middle - span / 2, middle + span / 2
        if announce:
            self.post_message(Selected(("workload", row), self))

    @property
    def cursor_time(self) -> float:
        start, _ = self.times()
        return float(start[self.selected]) if self.selected >= 0 and not np.isnan(start[self.selected]) else 0.0

    # ---- actions ------------------------------------------------------------------------------------------
    def action_zoom(self, factor: float, around: float | None = None) -> None:
        if self.document is None:
            return
        span = max((self.t1 - self.t0) * factor, 1e-6)
        span = min(span, max(self.makespan, 1.0) * 4)
        anchor = self.cursor_time if around is None else around
        fraction = (anchor - self.t0) / (self.t1 - self.t0) if self.t1 > self.t0 else 0.5
        fraction = min(max(fraction, 0.0), 1.0)
        self.t0 = anchor - fraction * span
        self.t1 = self.t0 + span

    def action_pan(self, fraction: float) -> None:
        shift = (self.t1 - self.t0) * fraction
        self.t0 += shift
        self.t1 += shift

    def action_zoom_all(self) -> None:
        if self.document is not None:
            self.t0, self.t1 = 0.0, max(self.makespan, 1.0)

    def action_edge(self, which: int) -> None:
        span = self.t1 - self.t0
        self.t0 = 0.0 if which == 0 else max(self.makespan - span, 0.0)
        self.t1 = self.t0 + span

    def action_fit(self) -> None:
        if self.selected < 0:
            return
        start, end = self.times()
        duration = max(end[self.selected] - start[self.selected], 1.0)
        self.t0, self.t1 = start[self.selected] - duration * 0.25, end[self.selected] + duration * 0.25

    def action_step(self, delta: int) -> None:
        s = self.schedule
        if s is None or self.selected < 0:
            return
        rows = s.core_rows(int(s.wl_core[self.selected]))
        self.select(min(max(self.selected + delta, rows.start), rows.stop - 1), announce=True)

    def action_core(self, delta: int) -> None:
        s = self.schedule
        if s is None or not s.core_ids.size:
            return
        self.show_core((self.core_index + delta) % s.core_ids.size)

    def action_go_to_core(self) -> None:
        """Ask for a core by number and select its workload at the time cursor (`j`, and the palette)."""
        s = self.schedule
        if s is None or not s.core_ids.size:
            return
        from widgets.review_screens import PromptScreen

        ids = s.core_ids.tolist()
        lane = self.shown.vocabulary.lane

        def go(answer: str | None) -> None:
            if answer is None or not answer.strip():
                return
            try:
                wanted = int(answer.strip().lstrip("c"))
            except ValueError:
                self.notify(f"{answer!r} is not a {lane} number", severity="warning")
                return
            if wanted not in ids:
                self.notify(f"no {lane} {wanted} (the {lane}s are {ids[0]}–{ids[-1]})", severity="warning")
                return
            self.show_core(ids.index(wanted))

        self.app.push_screen(PromptScreen(f"Go to {lane} (number, {ids[0]}–{ids[-1]}):"), go)

    def show_core(self, index: int) -> None:
        """Select the workload of the core at `index` running at the time cursor (else the nearest before it)."""
        s = self.schedule
        rows = s.core_rows(int(s.core_ids[index]))
        if not len(rows):
            return
        start, _ = self.times()
        # keep the time: pick the workload of the new core running at the cursor, else the nearest before it
        core_start = start[rows.start : rows.stop]
        k = int(np.searchsorted(core_start, self.cursor_time, side="right")) - 1
        self.select(rows.start + max(k, 0), announce=True, keep_view=True)

    def action_toggle_critical(self) -> None:
        self.show_critical = not self.show_critical

    def action_toggle_colors(self) -> None:
        self.by_layer = not self.by_layer

    def action_toggle_mode(self) -> None:
        self.sequential = not self.sequential
        self.action_zoom_all()
        self.notify("sequential times" if self.sequential else "dependency-aware times")

    # ---- mouse --------------------------------------------------------------------------------------------
    def _time_at(self, x: int) -> float:
        width = max(self.size.width - LABEL, 1)
        return self.t0 + (x - LABEL) / width * (self.t1 - self.t0)

    def on_click(self, event: events.Click) -> None:
        s = self.schedule
        at = event.get_content_offset(self)  # mouse offsets include the border; the drawing does not
        if s is None or at is None or at.x < LABEL:
            return
        core_row = at.y - 2
        visible = self._visible_cores()
        per = self._lines_per_core(len(visible))
        if core_row < 0 or core_row // per >= len(visible):
            return
        core = int(s.core_ids[visible[core_row // per]])
        rows = s.core_rows(core)
        start, end = self.times()
        t = self._time_at(at.x)
        k = int(np.searchsorted(start[rows.start : rows.stop], t, side="right")) - 1
        if k >= 0:
            self.select(rows.start + k, announce=True, keep_view=True)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.action_zoom(0.8, around=self._time_at(event.get_content_offset_capture(self).x))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.action_zoom(1.25, around=self._time_at(event.get_content_offset_capture(self).x))

    # ---- rendering ----------------------------------------------------------------------------------------
    def _visible_cores(self) -> list[int]:
        s = self.schedule
        n = int(s.core_ids.size)
        capacity = max(self.size.height - 3, 1)
        if n <= capacity:
            return list(range(n))
        first = min(max(self.core_index - capacity // 2, 0), n - capacity)
        return list(range(first, first + capacity))

    def _lines_per_core(self, count: int) -> int:
        if self.measured is not None:  # the estimate, the measurement under it, a gap
            return 3
        return max(1, min(5, (self.size.height - 3) // max(count, 1)))

    def frame_key(self) -> tuple:
        return (self.t0, self.t1, self.selected, self.core_index, self.sequential, self.by_layer, self.show_critical)

    def render_frame(self) -> list[Strip]:
        """All lines of the current view. Public so the benchmark can time exactly one redraw."""
        width, height = self.size.width, self.size.height
        if self.document is None or width <= LABEL:
            return [Strip.blank(width)] * height
        s = self.schedule
        plot = width - LABEL
        start, end = self.times()
        lines = [self._axis_labels(plot), self._axis_line(plot)]
        visible = self._visible_cores()
        per = self._lines_per_core(len(visible))
        linked = np.zeros(s.n_workloads, dtype=bool)
        if self.selected >= 0:
            deps = self.shown.analysed().deps
            linked[deps.producers_of(self.selected)] = True
            linked[deps.consumers_of(self.selected)] = True
        important = linked.copy()
        if self.selected >= 0:
            important[self.selected] = True
        cursor_col = int((self.cursor_time - self.t0) / (self.t1 - self.t0) * plot) if self.t1 > self.t0 else -1
        for k in visible:
            core = int(s.core_ids[k])
            rows = s.core_rows(core)
            cs, ce = start[rows.start : rows.stop], end[rows.start : rows.stop]
            owners = column_owners(cs, ce, self.t0, self.t1, plot, important=important[rows.start : rows.stop])
            critical = (
                columns_touching(cs, ce, self._critical[rows.start : rows.stop], self.t0, self.t1, plot)
                if self.show_critical
                else None
            )
            strip = self._core_strip(core, k == self.core_index, owners, rows.start, critical, linked, cursor_col)
            lines.append(strip)
            if self.measured is not None:
                lines += [self._measured_strip(rows, important, linked, cursor_col, plot), Strip.blank(width)]
                continue
            if per > 1:  # further lines repeat the blocks without the names; from 3 on, the last is a gap
                plain = self._core_strip(core, False, owners, rows.start, critical, linked, cursor_col, names=False)
                body = Strip([Segment(" " * LABEL), *list(plain)[1:]])
                lines.extend([body] * (per - 1 - (per >= 3)))
                if per >= 3:
                    lines.append(Strip.blank(self.size.width))
        while len(lines) < height - 1:
            lines.append(Strip.blank(width))
        lines = lines[: height - 1]
        lines.append(self._status_line(width))
        return lines

    def _measured_strip(self, rows: range, important: np.ndarray, linked: np.ndarray, cursor_col: int,
                        plot: int) -> Strip:  # fmt: skip
        """The same workloads at their measured times (first start to last end of their instructions)."""
        measured = self.measured
        ms, me = measured.start[rows.start : rows.stop], measured.end[rows.start : rows.stop]
        order = np.argsort(np.where(np.isnan(ms), np.inf, ms), kind="stable")
        owners = column_owners(ms[order], me[order], self.t0, self.t1, plot,
                               important=important[rows.start : rows.stop][order])  # fmt: skip
        owners = np.where(owners >= 0, order[np.maximum(owners, 0)], -1)
        return self._core_strip(-1, False, owners, rows.start, None, linked, cursor_col, label=" measured")

    def _core_strip(
        self, core: int, current: bool, owners: np.ndarray, base: int, critical: np.ndarray | None,
        linked: np.ndarray, cursor_col: int,
        label: str | None = None, names: bool = True,
    ) -> Strip:  # fmt: skip
        s = self.schedule
        flagged = label is None and core in self._problem_cores  # a lane with problems: marked in its margin
        margin = (("▶" if current else " ") + ("!" if flagged else "")) if label is None else ""
        label = _fit(label or f"{margin}{s.core_short(core)}", LABEL - 1).ljust(LABEL)
        margin_style = PROBLEM if flagged else Style(bold=current, color="#ffffff" if current else "#9a9a9a")
        segments = [Segment(label, margin_style)]
        # by runs of one owner (a block or idle time), not by column: a frame has thousands of columns and only
        # hundreds of runs; reactive attributes are read once, outside the loops
        owner_list = owners.tolist()
        count = len(owner_list)
        edges = [0, *(np.flatnonzero(owners[1:] != owners[:-1]) + 1).tolist(), count] if count else [0]
        selected = self.selected
        chars: list[str] = [" "] * count
        styles: list[Style] = [IDLE] * count
        starts = np.asarray(edges[:-1], dtype=np.int64)
        first = owners[starts] if count else owners[:0]
        rows = np.where(first >= 0, base + first, 0)
        table, keys = self._block_styles(rows)
        key_list, linked_list = keys.tolist(), linked[rows].tolist()
        critical_list = critical[starts].tolist() if critical is not None else [False] * len(key_list)
        for k, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            owner = owner_list[a]
            if owner < 0:
                char, style = "·", IDLE
            else:
                row = base + owner
                char, style = "█", table[key_list[k]]
                if critical_list[k]:
                    style = CRITICAL
                if linked_list[k]:
                    char, style = "▓", LINKED
                if row == selected:
                    style = SELECTED
            chars[a:b] = [char] * (b - a)
            styles[a:b] = [style] * (b - a)
        if names:
            self._label_blocks(chars, styles, owner_list, base, edges, selected)
        if 0 <= cursor_col < count:
            if owner_list[cursor_col] < 0:
                chars[cursor_col], styles[cursor_col] = "│", CURSOR
            else:
                styles[cursor_col] = styles[cursor_col] + CURSOR_BACKGROUND
        run_text: list[str] = []
        run_style: Style | None = None
        for char, style in zip(chars, styles, strict=True):
            if style is run_style:
                run_text.append(char)
            else:
                if run_text:
                    segments.append(Segment("".join(run_text), run_style))
                run_text, run_style = [char], style
        if run_text:
            segments.append(Segment("".join(run_text), run_style))
        return Strip(segments)

    def _label_blocks(
        self, chars: list[str], styles: list[Style], owners: list[int], base: int, edges: list[int], selected: int
    ) -> None:
        """Write each block's layer name (then its id) on it wherever it is wide enough, dark on the block's
        colour; a block with a problem starts with "!"."""
        s = self.schedule
        for col, end in zip(edges[:-1], edges[1:], strict=True):
            owner = owners[col]
            if owner < 0:
                continue
            row = base + owner
            width = end - col
            flagged = row in self._problem_rows
            text = "!" if flagged else ""
            if width >= 4:
                name = s.layers[s.wl_layer[row]]
                full = f"{text}{name} #{int(s.wl_id[row])}"
                text = full if len(full) <= width - 1 else f"{text}{name}"[: width - 1]
            if not text:
                continue
            on_block = _on_block(styles[col].color, row == selected)
            chars[col : col + len(text)] = text
            styles[col : col + len(text)] = [on_block] * len(text)
            if flagged:
                styles[col] = PROBLEM_ON_BLOCK

    def _block_styles(self, rows: np.ndarray) -> tuple[list[Style], np.ndarray]:
        """(style table, index into it per row): by layer or by block kind, neighbours in alternate shades."""
        s = self.schedule
        if self.by_layer:
            if len(self._layer_styles) != 2 * len(s.layers):
                self._layer_styles = [
                    _style(color if shade == 0 else _darker(color))
                    for layer in range(len(s.layers))
                    for color in (LAYER_PALETTE[layer % len(LAYER_PALETTE)],)
                    for shade in (0, 1)
                ]
            return self._layer_styles, s.wl_layer[rows].astype(np.int64) * 2 + rows % 2
        table = [_style(KIND_COLORS[kind][shade]) for kind in range(len(KIND_COLORS)) for shade in (0, 1)]
        return table, (s.wl_type[rows].astype(np.int64) % len(KIND_COLORS)) * 2 + rows % 2

    def _axis_labels(self, plot: int) -> Strip:
        text = [" "] * plot
        for col, value in nice_ticks(self.t0, self.t1, plot):
            label = compact(value)
            if col + len(label) <= plot:
                text[col : col + len(label)] = label
        unit = self.shown.vocabulary.time_label
        return Strip([Segment(unit[: LABEL - 1].ljust(LABEL), AXIS), Segment("".join(text), AXIS)])

    def _axis_line(self, plot: int) -> Strip:
        line = ["─"] * plot
        for col, _ in nice_ticks(self.t0, self.t1, plot):
            if 0 <= col < plot:
                line[col] = "┬"
        cursor = int((self.cursor_time - self.t0) / (self.t1 - self.t0) * plot) if self.t1 > self.t0 else -1
        if 0 <= cursor < plot:
            line[cursor] = "▼"
        return Strip([Segment(" " * LABEL, AXIS), Segment("".join(line), AXIS)])

    def _kind_legend(self) -> str:
        kinds = self.shown.vocabulary.block_kinds
        if len(kinds) <= 1:
            return f"by kind ({kinds[0] if kinds else self.shown.vocabulary.block} blue)"
        named = ", ".join(f"{kind} {KIND_COLOR_NAMES[i % len(KIND_COLOR_NAMES)]}" for i, kind in enumerate(kinds))
        return f"by type ({named})"

    def _status_line(self, width: int) -> Strip:
        s = self.schedule
        parts = [
            f"{compact(self.t0)}–{compact(self.t1)}",
            "sequential" if self.sequential else "dependencies",
            "by layer" if self.by_layer else self._kind_legend(),
        ]
        if self.selected >= 0:
            start, end = self.times()
            row = self.selected
            parts.append(
                f"▶ c{int(s.wl_core[row])} #{int(s.wl_id[row])} {s.layers[s.wl_layer[row]]} "
                f"{number(start[row])}→{number(end[row])}"
            )
        if self.show_critical:
            parts.append("critical path in red")
        visible = self._visible_cores()
        hidden = int(s.core_ids.size) - len(visible)
        if hidden > 0:  # a tall mesh: where the rows on screen sit among all of them (j jumps to one)
            above, below = visible[0], int(s.core_ids.size) - 1 - visible[-1]
            parts.insert(0, f"↑{above} ↓{below} {self.shown.vocabulary.lane}s (j: go to)")
        text = " · ".join(parts)
        if len(text) > width:  # narrow: the colours' names go first (the legend says "by type"), then the mode
            parts[2] = "by layer" if self.by_layer else "by type"
            text = " · ".join(parts)
        if len(text) > width:
            text = " · ".join(parts[:1] + parts[2:]) if hidden <= 0 else " · ".join(parts[:2] + parts[3:])
        if len(text) > width:
            text = text[: width - 1] + "…"
        return Strip([Segment(text.ljust(width), Style(color="#d0d0d0", bgcolor="#262626"))])


_STYLES: dict[str, Style] = {}
_ON_BLOCK: dict[tuple, Style] = {}
CURSOR_BACKGROUND = Style(bgcolor="#5f5f87")


def _on_block(color: Any, bold: bool) -> Style:
    """Dark text on a block's colour (bold on the selection), one Style per colour."""
    key = (color.name if color is not None else None, bold)
    style = _ON_BLOCK.get(key)
    if style is None:
        style = _ON_BLOCK[key] = Style(color="#101010", bgcolor=color, bold=bold)
    return style


def _style(color: str) -> Style:
    style = _STYLES.get(color)
    if style is None:
        style = _STYLES[color] = Style(color=color)
    return style


def _darker(color: str) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"#{int(r * 0.75):02x}{int(g * 0.75):02x}{int(b * 0.75):02x}"


def _fit(text: str, width: int) -> str:
    """`text` in `width` columns, its cut end marked with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"
