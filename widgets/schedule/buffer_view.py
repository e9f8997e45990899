"""Animated L2 / WL0 buffer occupancy of one core, or of every core at the same time cursor.

The frame (a workload of the core) is a reactive index, so tests set it directly and playback only moves it.
Cells are coloured by tensor type, new tensors are marked, ring-region starts are ticked on the ruler and
bytes shared by two tensors are red; the overlapping tensors are named under the map.
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
from textual.timer import Timer

from explorer.document import Document, Vocabulary
from explorer.formatting import human_bytes
from explorer.schedule.buffer_view import (
    CellMap,
    address_window,
    l2_cell_map,
    round_cell_size,
    window_around,
    wl0_capacity,
    wl0_cell_map,
)
from explorer.schedule.pressure import preview_words
from explorer.schedule.refs import entry_ref
from widgets.frame_widget import LaneFrameWidget
from widgets.messages import Selected
from widgets.schedule.move_preview import MovePreview
from widgets.schedule.playback import SPEEDS, Playback
from widgets.text_lines import flowed, folded

RULER = 9  # "0x00000 │"
WL0_WIDTH = 18  # the side memory's (WL0's) least width; it gets a quarter of a wide view
# address-space entries by kind code (Schedule.buf_type: input, weight, output); the vocabulary names them
ENTRY_STYLES = (Style(color="#4cbf73"), Style(color="#b46be8"), Style(color="#e8a33d"))
SIDE_STYLE = Style(color="#4f8fe8")  # entries of the side memory (WL0)
FREE = Style(color="#3a3a3a")
_UNDERLINED: dict[Style, Style] = {}


def _underlined(style: Style) -> Style:
    """`style` underlined, one object per style (runs of cells merge by style identity)."""
    found = _UNDERLINED.get(style)
    if found is None:
        found = _UNDERLINED[style] = style + Style(underline=True)
    return found

OVERLAP = Style(color="#ff3030", bold=True)
WRITES = Style(color="#ff79e0", bold=True)  # `w`: where an instruction starts writing
PREVIEW = Style(color="#101010", bgcolor="#e8c33d", bold=True)  # a move drawn that the file does not hold
SELECTED = Style(color="#ffffff", bold=True)
TEXT = Style(color="#d0d0d0")
DIM = Style(color="#8a8a8a")
SPARK = "▁▂▃▄▅▆▇█"
SHOWN_OVERLAPS = 3  # L2 pairs listed under the map at least (more when the lines below it allow)
SHOWN_SIDE_OVERLAPS = 2  # the side memory's (WL0)


class BufferView(Playback, MovePreview, LaneFrameWidget, can_focus=True):
    BINDINGS = [
        Binding("space", "play", "Play"),
        Binding("right", "step(1)", "Next frame", show=False),
        Binding("left", "step(-1)", "Prev frame", show=False),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False),
        Binding("minus", "speed(-1)", "Slower", show=False),
        Binding("up", "core(-1)", "Core up", show=False),
        Binding("down", "core(1)", "Core down", show=False),
        Binding("G", "toggle_grid", "All cores", key_display="G", show=False),
        Binding("right_square_bracket", "tensor(1)", "Next tensor", show=False, key_display="]"),
        Binding("left_square_bracket", "tensor(-1)", "Prev tensor", show=False, key_display="["),
        Binding("home", "frame_edge(0)", "First frame", show=False),
        Binding("end", "frame_edge(1)", "Last frame", show=False),
        Binding("i", "zoom_addresses(0.25)", "Zoom addresses in", show=False),
        Binding("o", "zoom_addresses(4)", "Zoom addresses out", show=False),
        Binding("I", "zoom_to_overlap", "Zoom to the overlap", show=False),
        Binding("v", "preview_move", "Preview the move", show=False),
        Binding("w", "toggle_writes", "Instructions' writes", show=False),
    ]
    HELP_KEYS = [
        ("Buffers", "Space", "play / pause the animation over the {lane}'s {block}s"),
        ("Buffers", "← / →", "previous / next frame ({block})"),
        ("Buffers", "+ / -", "faster / slower playback"),
        ("Buffers", "Home / End", "first / last frame"),
        ("Buffers", "↑ / ↓", "previous / next {lane}"),
        ("Buffers", "G", "one {lane} / every {lane} at the same time (g is go to linked, everywhere)"),
        ("Buffers", "[ / ]", "select the previous / next tensor of the snapshot"),
        ("Buffers", "click", "select the tensor under the mouse"),
        ("Buffers", "i / o", "zoom the addresses in / out around the selected tensor (else the overlap, the middle)"),
        ("Buffers", "I", "zoom the addresses to the selected incident's overlap (else every overlap of the snapshot), "
                         "whole; n / N then fit each incident's (o back out)"),
        ("Buffers", "v", "preview the selected incident's fix: its tensor drawn where it would fit for its whole stay "
                         "(nothing is written; v again: off)"),
        ("Buffers", "w", "mark ▼ where the joined assembly's or trace's instructions of this {block} start writing "
                         "{memory} and the side memory (w again: off)"),
    ]
    DEFAULT_CSS = """
    BufferView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    BufferView:focus { border: round $accent; }
    """

    core_index: reactive[int] = reactive(0)
    frame: reactive[int] = reactive(0)  # index of the workload within the core
    grid: reactive[bool] = reactive(False)
    playing: reactive[bool] = reactive(False)
    speed_index: reactive[int] = reactive(2)
    selected_entry: reactive[int] = reactive(-1)  # buf_* index of the selected tensor
    highlight: reactive[tuple] = reactive(())  # tensor ids to highlight (from a problem)
    show_writes: reactive[bool] = reactive(False)  # `w`: the joined instructions' destinations marked

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Buffers"
        self.document: Document | None = None
        self._timer: Timer | None = None
        # Where the single-core L2 map was drawn: (top, left, rows, cols, owner per cell), to answer clicks.
        self._l2_geometry: tuple[int, int, int, int, np.ndarray] | None = None
        self._wl0_capacity: dict[int, int] = {}  # per core: scanning its WL0 entries once is enough
        self.addresses: tuple[int, int] | None = None  # the L2 address window shown (None: all of it)
        self._zoom_follows = False  # after `I`: n/N re-fit the window to each incident (until zoomed all out)
        self.preview: Any = None  # `v`: the incident's tensor drawn where it would fit (a rooms.Room)
        self._writes: tuple[Document, Any] | None = None  # the joined instructions' destinations, read once

    # ---- state --------------------------------------------------------------------------------------------
    def show_document(self, document: Document) -> None:
        self.document = document
        self.preview = None
        self._wl0_capacity = {}
        self.core_index, self.frame = 0, 0
        self.refresh()

    def show_row(self, row: int, highlight: tuple | None = None) -> None:
        """Jump to a workload (from the timeline, a problem or the tree) without announcing it back.

        A highlight (the tensors of a problem) stays while the view stays on that workload."""
        s = self.schedule
        if s is None or not 0 <= row < s.n_workloads:
            return
        moved = row != self.row
        self.core_index = int(np.searchsorted(s.core_ids, s.wl_core[row]))
        self.frame = row - s.core_rows(int(s.wl_core[row])).start
        if highlight is not None:
            self.highlight = tuple(highlight)
        elif moved:
            self.highlight = ()
        if moved:
            self.selected_entry = -1
        if self._zoom_follows and highlight is not None and not self.grid:  # `I`'s zoom follows the incident
            ranges = self.incident_overlap()
            self.addresses = window_around(*ranges, max(s.buffersize, 1)) if ranges is not None else None

    def _announce(self) -> None:
        self.post_message(Selected(("workload", self.row), self))

    # ---- actions ------------------------------------------------------------------------------------------
    def _tick(self) -> None:
        if self.schedule is None:
            return
        count = len(self.schedule.core_rows(self.core))
        self.frame = (self.frame + 1) % max(count, 1)
        self._announce()

    def action_step(self, delta: int) -> None:
        if self.schedule is None:
            return
        count = len(self.schedule.core_rows(self.core))
        self.frame = min(max(self.frame + delta, 0), max(count - 1, 0))
        self.selected_entry = -1
        self._announce()

    def action_frame_edge(self, which: int) -> None:
        if self.schedule is not None:
            self.frame = 0 if which == 0 else max(len(self.schedule.core_rows(self.core)) - 1, 0)
            self._announce()

    def action_core(self, delta: int) -> None:
        s = self.schedule
        if s is None:
            return
        self.core_index = (self.core_index + delta) % int(s.core_ids.size)
        self.frame = min(self.frame, max(len(s.core_rows(self.core)) - 1, 0))
        self._announce()

    def action_toggle_grid(self) -> None:
        self.grid = not self.grid

    def action_tensor(self, delta: int) -> None:
        s = self.schedule
        if s is None:
            return
        lo, hi = int(s.buf_ptr[self.row]), int(s.buf_ptr[self.row + 1])
        if hi <= lo:
            return
        order = lo + np.argsort(s.buf_addr[lo:hi], kind="stable")
        current = np.flatnonzero(order == self.selected_entry)
        k = (int(current[0]) + delta) % order.size if current.size else (0 if delta > 0 else order.size - 1)
        self.selected_entry = int(order[k])
        self.post_message(Selected(entry_ref(self.row, self.selected_entry), self))

    def action_zoom_addresses(self, factor: float) -> None:
        """L2's addresses zoomed in (factor below 1) or out around the selected tensor, else the snapshot's first
        overlap, else the window's middle: a 91-byte overlap in 8 MiB is one cell of the whole map."""
        s = self.schedule
        if s is None or self.grid:
            return
        lo, hi = self.addresses or (0, s.buffersize)
        focus = (lo + hi) // 2
        if self.selected_entry >= 0:
            focus = int(s.buf_addr[self.selected_entry] + s.buf_size[self.selected_entry] // 2)
        elif (overlap := self._overlap_span()) is not None:
            focus = (overlap[0] + overlap[1]) // 2
        self.addresses = address_window(max(s.buffersize, 1), self.addresses, factor, focus)
        self._zoom_follows = self._zoom_follows and self.addresses is not None  # all of L2 again: done following
        self.refresh()

    def action_zoom_to_overlap(self) -> None:
        """The addresses of the selected incident's tensors in this snapshot (all of their ranges, whole),
        else every overlap of the snapshot."""
        s = self.schedule
        overlap = (self.incident_overlap() or self._overlap_span()) if s is not None and not self.grid else None
        if overlap is None:
            self.notify("no overlap in this snapshot", severity="warning")
            return
        self.addresses = window_around(*overlap, max(s.buffersize, 1))
        self._zoom_follows = True
        self.refresh()

    def incident_overlap(self) -> tuple[int, int] | None:
        """[lo, hi) around the overlaps of the highlighted tensors (an incident's) in the snapshot shown."""
        return self._overlap_span(self.highlight)

    def _overlap_span(self, tensors: tuple | None = None) -> tuple[int, int] | None:
        """[lo, hi) around the overlapping pairs in the snapshot shown, all of them whole (none cut in half); with
        `tensors` (an incident's), only the pairs involving one of them. None when there is none."""
        s = self.schedule
        if s is None or tensors == ():
            return None
        cells = l2_cell_map(s, self.row, 1, self.shown.analysed().placement)
        found = [o for o in cells.overlaps if tensors is None or o[0] in tensors or o[1] in tensors]
        return (min(o[2] for o in found), max(o[3] for o in found)) if found else None

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)  # mouse offsets include the border; the drawing does not
        if self._l2_geometry is None or at is None:  # the all-cores grid has no tensor selection
            return
        top, left, rows, cols, owner = self._l2_geometry
        r, c = at.y - top, at.x - left
        if 0 <= r < rows and 0 <= c < cols and r * cols + c < owner.size and owner[r * cols + c] >= 0:
            self.selected_entry = int(owner[r * cols + c])
            self.post_message(Selected(entry_ref(self.row, self.selected_entry), self))

    # ---- rendering ----------------------------------------------------------------------------------------
    def action_toggle_writes(self) -> None:
        """`w`: mark where this workload's instructions (the joined assembly or trace) start writing L2."""
        if self.document is None:
            return
        if not self.show_writes and self._joined_writes() is None:
            self.notify("no assembly or trace is joined to this schedule (put them beside it, or give --asm/--trace)",
                        severity="warning")  # fmt: skip
            return
        self.show_writes = not self.show_writes

    def _joined_writes(self) -> Any:
        if self._writes is None or self._writes[0] is not self.document:
            from explorer.schedule.touched import joined_writes

            self._writes = (self.shown, joined_writes(self.shown))
        return self._writes[1]

    def writes_here(self, side: bool = False) -> list[tuple[int, str, int, int]]:
        """(first byte, instruction name, line, bytes written or -1 where the size is not settled) of each
        instruction of the workload shown that writes L2 (`side`: the side memory, WL0, in its 64-byte units)."""
        writes = self._joined_writes() if self.show_writes else None
        if writes is None:
            return []
        written = writes.wl0 if side else writes.l2
        here = np.flatnonzero((writes.rows == self.row) & (written >= 0))
        sizes = writes.wl0_size if side else writes.l2_size
        return [(int(written[k]), writes.table.name[k], int(writes.table.line[k]), int(sizes[k]))
                for k in here.tolist()]  # fmt: skip

    def frame_key(self) -> tuple:
        return (
            self.core_index,
            self.frame,
            self.grid,
            self.selected_entry,
            self.highlight,
            id(self.preview),
            self.playing,
            self.speed_index,
            self.addresses,
            self.show_writes,
        )

    def render_frame(self) -> list[Strip]:
        """Every line of the current frame. Public so the benchmark can time one frame."""
        width, height = self.size.width, self.size.height
        self._l2_geometry = None
        if self.document is None or width < 30 or height < 8:
            return [Strip.blank(width)] * height
        lines = self._grid_frame(width, height) if self.grid else self._core_frame(width, height)
        lines = lines[:height]
        while len(lines) < height:
            lines.append(Strip.blank(width))
        return lines

    def _core_frame(self, width: int, height: int) -> list[Strip]:
        s = self.schedule
        words = self.shown.vocabulary
        row = self.row
        analysis = self.shown.analysed()
        rows = s.core_rows(self.core)
        used = int(analysis.l2_bytes[row])
        header = (
            f"{s.core_label(self.core)} · before {words.block} #{int(s.wl_id[row])} "
            f"{s.layers[s.wl_layer[row]]} · frame {self.frame + 1}/{len(rows)} · "
            f"{words.memory} {human_bytes(used)} of {human_bytes(s.buffersize)}"
            f"{' · ▶ playing ×' + str(SPEEDS[self.speed_index]) if self.playing else ''}"
        )
        lines = folded(header, width, TEXT)  # a narrow view folds the header at its fields, never mid-number
        moved = None
        if self.preview is not None:  # said first: the map shows a move that was not made
            stay = self.preview.residency
            lines = [*folded(preview_words(s, self.preview), width, PREVIEW), *lines]
            if stay.core == self.core and stay.first_row <= row <= stay.last_row:
                moved = (stay.entries, self.preview.address)
        legend = _legend(width, words)
        available = max(height - 11 - (len(lines) - 1) - (len(legend) - 1), 2)
        l2_cols, wl0_width = split_columns(width, bool(words.side_memory))
        base, end = self.addresses or (0, s.buffersize)
        bpc = round_cell_size(end - base, available * l2_cols)
        grid_rows = min(available, -(-max(end - base, 1) // (bpc * l2_cols)))
        cells = l2_cell_map(s, row, grid_rows * l2_cols, analysis.placement, bytes_per_cell=bpc, base=base, moved=moved)
        wl0_cap = self._wl0_capacity.get(self.core)
        if wl0_cap is None:
            wl0_cap = self._wl0_capacity[self.core] = wl0_capacity(s, self.core)
        wl0 = wl0_cell_map(
            s,
            row,
            grid_rows * max(wl0_width, 1),
            wl0_cap,
            bytes_per_cell=round_cell_size(wl0_cap, grid_rows * max(wl0_width, 1)),
        )
        l2_title = f"{words.memory} · {bpc} B per cell · {human_bytes(bpc * l2_cols)} per row"
        if self.addresses is not None:  # said first: the map is a window of the memory
            l2_title = f"{base:#x}–{end:#x} (o: out) · {bpc} B per cell"
        shorter_forms: tuple[str, ...] = (f"{bpc} B/cell · {human_bytes(bpc * l2_cols)}/row", f"{bpc} B per cell",
                                          f"{bpc} B/cell")  # fmt: skip
        if self.addresses is not None:  # a window keeps saying where it is (the ruler counts from its start)
            shorter_forms = (f"{base:#x}–{end:#x} · {bpc} B/cell", f"{base:#x}–{end:#x}")
        for shorter in shorter_forms:
            if len(l2_title) > l2_cols:  # a short form rather than a cut one
                l2_title = shorter
        title = [Segment(" " * RULER), Segment(l2_title[:l2_cols].ljust(l2_cols), DIM)]
        if words.side_memory:
            title += [
                Segment(" │ ", DIM),
                Segment(f"{words.side_memory} · {human_bytes(wl0_cap)}"[:wl0_width], DIM),
            ]
        lines.append(Strip(title))
        self._l2_geometry = (len(lines), RULER, grid_rows, l2_cols, cells.owner)  # after the header and titles
        writes = self.writes_here()
        marked = {(byte - cells.base) // cells.bytes_per_cell for byte, *_ in writes if byte >= cells.base}
        covered: set[int] = set()  # the cells a write covers where its size is settled: underlined, ▼ on the first
        for byte, _, _, size in writes:
            if size > 0:
                first = max(byte - cells.base, 0) // cells.bytes_per_cell
                last = min((byte + size - 1 - cells.base) // cells.bytes_per_cell, cells.owner.size - 1)
                covered.update(range(first, last + 1))
        l2_lines = self._map_lines(cells, grid_rows, l2_cols, s.buf_type, s.buf_new, s.buf_tensor, ruler=True,
                                   marked=marked, covered=covered)  # fmt: skip
        side_writes = self.writes_here(side=True) if words.side_memory else []
        side_marked = {byte // wl0.bytes_per_cell for byte, *_ in side_writes}
        wl0_lines = (
            self._map_lines(wl0, grid_rows, wl0_width, None, None, None, ruler=False, marked=side_marked)
            if words.side_memory else []
        )  # fmt: skip
        for k in range(grid_rows):
            segments = list(l2_lines[k])
            if words.side_memory:
                segments += [Segment(" │ ", DIM), *wl0_lines[k]]
            lines.append(Strip(segments))
        lines.extend(self._strip_lines(width, analysis.l2_bytes[rows.start : rows.stop]))
        lines.append(self._peak_line(width, analysis.l2_bytes[rows.start : rows.stop]))
        lines.extend(legend)
        if self.show_writes:  # said in lines of their own, folded between instructions: what the marks are
            every = [(*write, "") for write in writes] + [(*write, f" in {words.side_memory} units")
                                                          for write in side_writes]  # WL0 counts 64-byte units
            named = [f"{name} (line {line}) at {byte:#x}{f'–{byte + size:#x}' if size > 0 else ''}{unit}"
                     for byte, name, line, size, unit in every[:4]]  # fmt: skip
            if len(every) > 4:
                named.append(f"{len(every) - 4} more")
            counts = f"{len(writes)} in {words.memory}, {len(side_writes)} in {words.side_memory}" if side_writes \
                else f"{len(writes)}"  # fmt: skip
            lead = f"▼ where its instructions start writing ({counts})"
            if any(size > 0 for *_, size in writes):  # a field of its own: the fold may break before it
                named.insert(0, "underlined: as far as each writes")
            none = f"▼ no instruction of this {words.block} writes {words.memory} (w: off)"
            said = " · ".join([lead, *named]) if every else none
            lines.extend(folded(said, width, WRITES))
        lines.extend(self._findings(width, cells, wl0, room=height - len(lines)))
        return lines

    def _map_lines(
        self, cells: CellMap, grid_rows: int, cols: int, types: np.ndarray | None, new: np.ndarray | None,
        tensors: np.ndarray | None, *, ruler: bool, marked: set[int] | None = None, covered: set[int] | None = None
    ) -> list[list[Segment]]:
        s = self.schedule
        lines = []
        selected_tensor = int(s.buf_tensor[self.selected_entry]) if self.selected_entry >= 0 else None
        boundaries = set(cells.boundaries)
        for r in range(grid_rows):
            segments: list[Segment] = []
            if ruler:
                first = r * cols
                tick = "◆" if any(first <= b < first + cols for b in boundaries) else " "
                address = cells.base + first * cells.bytes_per_cell
                window = cells.bytes_per_cell * cells.owner.size < cells.capacity  # an address zoom, from 0 too
                relative = cells.base if window and cells.capacity > 0xFFFFF else None
                segments.append(Segment(ruler_label(address, cells.capacity, tick, relative), DIM))
            run: list[str] = []
            run_style = None
            for c in range(cols):
                index = r * cols + c
                owner = int(cells.owner[index]) if index < cells.owner.size else -1
                if owner < 0:
                    char, style = "·", FREE
                elif types is None or new is None or tensors is None:  # WL0: given none of them
                    char, style = "█", SIDE_STYLE
                else:
                    char = "▓" if new[owner] == 1 else "█"
                    style = ENTRY_STYLES[int(types[owner]) % len(ENTRY_STYLES)]
                    tensor = int(tensors[owner])
                    if tensor == selected_tensor or tensor in self.highlight:
                        style = SELECTED
                if index < cells.overlap.size and cells.overlap[index]:
                    char, style = "▒", OVERLAP
                if marked and index in marked:  # `w`: an instruction starts writing in this cell
                    char, style = "▼", WRITES
                elif covered and index in covered:  # and writes on to here
                    style = _underlined(style)
                if style is run_style:
                    run.append(char)
                else:
                    if run:
                        segments.append(Segment("".join(run), run_style))
                    run, run_style = [char], style
            if run:
                segments.append(Segment("".join(run), run_style))
            lines.append(segments)
        return lines

    def _strip_lines(self, width: int, used: np.ndarray) -> list[Strip]:
        """L2 bytes used per workload: two rows of bars under a dashed capacity line; the frame in white."""
        s = self.schedule
        words = self.shown.vocabulary
        plot = width - RULER
        if used.size == 0:
            return []
        levels, frame_bucket = _columns(used, plot, self.frame)
        capacity = max(s.buffersize, max(levels), 1)
        n = used.size
        eighths = [min(round(level / capacity * 16), 16) if level else 0 for level in levels]
        if any(level and e == 0 for level, e in zip(levels, eighths, strict=True)):
            eighths = [max(e, 1) if level else 0 for level, e in zip(levels, eighths, strict=True)]
        label = f"capacity {human_bytes(s.buffersize)} "
        lines = [Strip([Segment(" " * RULER), Segment((label + "╌" * plot)[:plot], DIM)])]
        used_label = f"{words.memory} used" if len(words.memory) <= 3 else "in use"
        for row, name in ((1, f"{used_label:<8}│"), (0, "        │")):
            segments = [Segment(name, DIM)]
            for k, e in enumerate(eighths):
                part = min(max(e - row * 8, 0), 8)
                char = SPARK[part - 1] if part else " "
                current = k == frame_bucket if n >= len(levels) else (k * n) // len(levels) == self.frame
                segments.append(Segment(char, SELECTED if current else Style(color="#6bb0c4")))
            lines.append(Strip(segments))
        return lines

    def _peak_line(self, width: int, used: np.ndarray) -> Strip:
        s = self.schedule
        plot = width - RULER
        if used.size == 0:
            return Strip.blank(width)
        buckets = plot
        peak = int(used.argmax())
        peak_col = (
            min(peak * plot // used.size, plot - 1)
            if used.size >= plot
            else min(int((peak + 0.5) * plot / used.size), plot - 1)
        )
        marks = [" "] * buckets
        marks[peak_col] = "▲"
        # the same words as the memory map's for the same point: the workload, and the step it is on the core
        text = (f"peak {human_bytes(int(used[peak]))} before #{int(s.wl_id[s.core_rows(self.core).start + peak])} "
                f"(step {peak + 1})")  # fmt: skip
        line = "".join(marks)
        if peak_col + 2 + len(text) <= buckets:  # the label right of the marker, or left when it does not fit
            line = line[: peak_col + 2] + text + line[peak_col + 2 + len(text) :]
        elif peak_col - 1 - len(text) >= 0:
            line = line[: peak_col - 1 - len(text)] + text + line[peak_col - 1 :]
        return Strip([Segment(" " * RULER, DIM), Segment(line[:plot], Style(color="#ff9f43"))])

    def _findings(self, width: int, cells: CellMap, wl0: CellMap, room: int = 5) -> list[Strip]:
        """The overlapping pairs of this snapshot, as many as the lines under the map allow (at least three of
        L2's and two of the side memory's), then how many more: never a silent cut."""
        s = self.schedule
        words = self.shown.vocabulary
        lines = []
        side_room = min(len(wl0.overlaps), SHOWN_SIDE_OVERLAPS) + (len(wl0.overlaps) > SHOWN_SIDE_OVERLAPS)
        l2_room = max(room - side_room - (self.selected_entry >= 0), SHOWN_OVERLAPS)
        for found, limit, say in (
            (cells.overlaps, l2_room, lambda a, b, lo, hi: f"overlap: tensor {a} and {b}, bytes {lo:#x}-{hi:#x}"),
            (wl0.overlaps, SHOWN_SIDE_OVERLAPS,
             lambda a, b, lo, hi: f"{words.side_memory} overlap: entry {a} and {b}, bytes {lo:#x}-{hi:#x}"),
        ):  # fmt: skip
            listed = found if len(found) <= limit else found[: limit - 1]
            lines += [_text(say(*pair), width, OVERLAP) for pair in listed]
            if len(found) > len(listed):
                more = f"and {len(found) - len(listed)} more overlapping pairs here (p: the problems list them all)"
                lines.append(_text(more, width, OVERLAP))
        if self.selected_entry >= 0:
            e = self.selected_entry
            lines.append(
                _text(
                    f"selected: tensor {int(s.buf_tensor[e])} {words.entry_kinds[int(s.buf_type[e])]} "
                    f"{int(s.buf_addr[e]):#x}-{int(s.buf_addr[e] + s.buf_size[e]):#x} "
                    f"({human_bytes(int(s.buf_size[e]))})",
                    width,
                    SELECTED,
                )
            )
        if not lines:
            lines.append(_text("no overlap in this snapshot", width, DIM))
        return lines

    def _grid_frame(self, width: int, height: int) -> list[Strip]:
        """Every core's L2 at the time cursor: the workload each core is running (or last started) then."""
        s = self.schedule
        words = self.shown.vocabulary
        analysis = self.shown.analysed()
        start = analysis.timeline.start
        t = float(start[self.row]) if not np.isnan(start[self.row]) else 0.0
        n = int(s.core_ids.size)
        columns = max(1, min(n, width // 30))
        tile_w = width // columns
        tile_rows = max((height - 2) // -(-n // columns) - 2, 1)
        lines = [
            _text(
                f"all {words.lane}s at t = {t:,.0f} (the time cursor of {words.lane} {self.core})"
                f" · G for one {words.lane}",
                width,
                TEXT,
            )
        ]
        for first in range(0, n, columns):
            block: list[list[Segment]] = [[] for _ in range(tile_rows + 1)]
            for k in range(first, min(first + columns, n)):
                core = int(s.core_ids[k])
                rows = s.core_rows(core)
                j = int(np.searchsorted(start[rows.start : rows.stop], t, side="right")) - 1
                row = rows.start + max(j, 0)
                cells = l2_cell_map(s, row, tile_rows * (tile_w - 2), analysis.placement)
                title = f"c{core} #{int(s.wl_id[row])} {human_bytes(int(analysis.l2_bytes[row]))}"
                style = OVERLAP if cells.overlaps else (SELECTED if k == self.core_index else TEXT)
                block[0].append(Segment(title[: tile_w - 1].ljust(tile_w), style))
                body = self._map_lines(cells, tile_rows, tile_w - 2, s.buf_type, s.buf_new, s.buf_tensor, ruler=False)
                for r in range(tile_rows):
                    block[r + 1].extend(body[r] + [Segment("  ", DIM)])
            lines.extend(Strip(segments) for segments in block)
        lines.extend(_legend(width, words))
        return lines


def _columns(values: np.ndarray, plot: int, frame: int) -> tuple[list[int], int]:
    """`values` (one per workload) spread over `plot` columns: the max per column when there are more values
    than columns, each value repeated over several columns otherwise. Also the column of `frame`."""
    n = values.size
    if n >= plot:
        edges = np.linspace(0, n, plot + 1).astype(np.int64)
        levels = [int(values[a:b].max()) if b > a else 0 for a, b in zip(edges[:-1], edges[1:], strict=True)]
        return levels, min(int(np.searchsorted(edges, frame, side="right")) - 1, plot - 1)
    owner = np.minimum((np.arange(plot) * n) // plot, n - 1)
    levels = values[owner].astype(np.int64).tolist()
    return levels, int((frame + 0.5) * plot / n)


def ruler_label(address: int, top: int, tick: str, relative_to: int | None = None) -> str:
    """An address ruler's cell, always RULER wide: hex ("0x1c400") while the memory's addresses fit in seven
    characters, else MiB ("5.25M"), the same for every row of the ruler; then the tick and the rule. In an
    address zoom of a big memory, the offset from the window's start ("+0x1c0"; the title gives the start)."""
    if relative_to is not None:
        text = f"+{address - relative_to:#x}"[:7].rjust(7)
    elif max(top, address) <= 0xFFFFF:
        text = f"{address:#07x}"
    else:  # never wider than 7 (`.3g` wrote 6.1e-05M, and the rows started a column or two apart)
        mib = address / 2**20
        text = (f"{mib:.2f}M" if mib < 100 else f"{mib:.0f}M" if mib < 10_000 else f"{mib / 1024:.0f}G")[:7].rjust(7)
    return f"{text}{tick}│"


def split_columns(width: int, side_memory: bool) -> tuple[int, int]:
    """(L2 cells per row, side-memory width incl. its separator) for a view `width` wide: L2 rows hold a multiple
    of 8 cells, so row addresses stay round, and the side memory takes the rest (at least WL0_WIDTH, about a
    quarter), so no column is left empty at any width."""
    space = width - RULER - 3
    if not side_memory:
        return max(space // 8 * 8, 8), 0
    # narrow (80 columns): L2 first, the side memory a quarter down to 10 cells (it took 22 of 38, L2 16)
    side = max(WL0_WIDTH, space // 4) if space >= 4 * WL0_WIDTH else max(space // 4, 10)
    l2_cols = max((space - side) // 8 * 8, 8)
    return l2_cols, max(space - l2_cols, 10)


def _text(text: str, width: int, style: Style) -> Strip:
    return Strip([Segment(text[:width].ljust(width), style)])


def _legend(width: int, words: Vocabulary) -> list[Strip]:
    """The legend's items flowed onto as many lines as `width` needs (each item whole)."""
    narrow = width < 80  # short words then, so the legend takes two lines, not three
    items = [(glyph, style, f" {shown}  ", DIM) for glyph, style, shown in (
        *(("█", style, kind) for style, kind in zip(ENTRY_STYLES, words.entry_kinds, strict=False)),
        ("▓", ENTRY_STYLES[0], "new" if narrow else "newly added"), ("▒", OVERLAP, "overlap"), ("·", FREE, "free"),
    )]  # fmt: skip
    if words.side_memory:
        region, side = ("region start", words.side_memory) if narrow else ("ring region start", "{} entry")
        items += [("◆", DIM, f" {region}  ", DIM), ("█", SIDE_STYLE, " " + side.format(words.side_memory), DIM)]
    return flowed(items, width, ("legend ", DIM))
