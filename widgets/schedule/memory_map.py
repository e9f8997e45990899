"""The memory map view: one core's L2 (or WL0) over time, every tensor a band from the snapshot it appears in
to the one it leaves, drawn with half-block cells (two address rows per line).

x is the step (the core's workloads in order), y the address from 0 at the top; bands are coloured by tensor
type, overlapping bytes are red, ring-region starts and the capacity are marked on the ruler, the peak and the
cursor under the map. The cursor step is shared with the timeline and the buffer view; a selected band names
its tensor and opens it in the details. The bands come from `explorer.schedule.memory_map`; this widget only
paints and dispatches keys.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.reactive import reactive
from textual.strip import Strip

from explorer.arrays import distinct
from explorer.document import Document
from explorer.formatting import human_bytes, plural
from explorer.schedule.buffer_view import address_window, window_around
from explorer.schedule.memory_map import FREE, MemoryMap, Pixels, memory_map, paint
from explorer.schedule.pressure import preview_words
from explorer.schedule.refs import entry_ref
from widgets.frame_widget import LaneFrameWidget
from widgets.messages import Selected
from widgets.schedule.buffer_view import ENTRY_STYLES, OVERLAP, RULER, SIDE_STYLE, ruler_label
from widgets.schedule.move_preview import MovePreview
from widgets.text_lines import flowed, folded

BACKGROUND = "#262626"
CURSOR_BACKGROUND = "#3a3a50"
BEYOND = "#3a2020"  # addresses past the capacity
SELECTED = "#ffffff"
HIGHLIGHT = "#ffe066"
TEXT = Style(color="#d0d0d0")
DIM = Style(color="#8a8a8a")
PEAK = Style(color="#ff9f43")
PREVIEW = Style(color="#101010", bgcolor="#e8c33d", bold=True)  # a move drawn that the file does not hold
FOOTER_LINES = 5  # axis, fragmentation, selection, legend, findings
BUILT_IN_PLACE = 16_384  # a core's memory with more entries has its map built by a worker (BENCHMARKS.md, latency)
SPARK = " ▁▂▃▄▅▆▇█"
# pixel colours by palette index: empty, empty under the cursor, empty past the capacity, overlap, selection,
# highlight, side memory, then one per entry type (as the buffer view colours them)


def _colour_name(style: Style) -> str:
    if style.color is None:  # every style of the buffer view names a colour
        raise ValueError(f"{style} has no colour")
    return style.color.name


PALETTE = (BACKGROUND, CURSOR_BACKGROUND, BEYOND, "#ff3030", SELECTED, HIGHLIGHT, _colour_name(SIDE_STYLE),
           *(_colour_name(style) for style in ENTRY_STYLES))  # fmt: skip
FREE_INDEX, CURSOR_INDEX, BEYOND_INDEX, OVERLAP_INDEX, SELECTED_INDEX, HIGHLIGHT_INDEX, SIDE_INDEX = range(7)
KIND_INDEX = 7


@lru_cache(maxsize=1024)
def _pair_style(code: int) -> Style:
    """The style of a half-block cell whose upper pixel has palette colour code // len and lower code % len."""
    upper, lower = divmod(code, len(PALETTE))
    return Style(color=PALETTE[upper], bgcolor=PALETTE[lower])


class MemoryMapView(MovePreview, LaneFrameWidget, can_focus=True):
    BINDINGS = [
        Binding("right", "step(1)", "Next step", show=False),
        Binding("left", "step(-1)", "Prev step", show=False),
        Binding("up", "core(-1)", "Core up", show=False),
        Binding("down", "core(1)", "Core down", show=False),
        Binding("right_square_bracket", "tensor(1)", "Next tensor", show=False, key_display="]"),
        Binding("left_square_bracket", "tensor(-1)", "Prev tensor", show=False, key_display="["),
        Binding("m", "toggle_memory", "Other memory"),
        Binding("w", "zoom(0.5)", "Zoom in", show=False),
        Binding("s", "zoom(2.0)", "Zoom out", show=False),
        Binding("a", "pan(-0.25)", "Pan left", show=False),
        Binding("d", "pan(0.25)", "Pan right", show=False),
        Binding("0", "zoom_all", "Whole run", show=False),
        Binding("i", "zoom_addresses(0.25)", "Zoom addresses in", show=False),
        Binding("o", "zoom_addresses(4)", "Zoom addresses out", show=False),
        Binding("I", "zoom_to_overlap", "Zoom to the overlap", show=False),
        Binding("home", "edge(0)", "First step", show=False),
        Binding("end", "edge(1)", "Last step", show=False),
        Binding("v", "preview_move", "Preview the move", show=False),
        Binding("P", "peak", "Peak", key_display="P"),
    ]
    HELP_KEYS = [
        ("Memory map", "← / →", "previous / next {block} (the cursor is shared with the timeline and buffers)"),
        ("Memory map", "↑ / ↓", "previous / next {lane}"),
        ("Memory map", "[ / ]", "select the tensor below / above at the cursor (click: the band under the mouse)"),
        ("Memory map", "m", "{memory} / the side memory (WL0), where the file has one"),
        ("Memory map", "w / s, a / d, 0", "zoom in / out, pan left / right, the whole run"),
        ("Memory map", "Home / End", "first / last {block}"),
        ("Memory map", "i / o", "zoom the addresses in / out around the selected band (else the overlap, the middle)"),
        ("Memory map", "I", "zoom the addresses to the selected incident's overlap (else every overlap at the "
                            "cursor), whole; n / N then fit each incident's (o back out)"),
        ("Memory map", "v", "preview the selected incident's fix: its tensor drawn where it would fit for its whole "
                            "stay (nothing is written; v again: off)"),
        ("Memory map", "P", "jump to the {lane}'s peak and list what is live there, largest first (Enter selects)"),
    ]
    DEFAULT_CSS = """
    MemoryMapView { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    MemoryMapView:focus { border: round $accent; }
    """

    core_index: reactive[int] = reactive(0)
    frame: reactive[int] = reactive(0)  # the cursor: a step (workload) of the core
    memory: reactive[str] = reactive("l2")
    window: reactive[tuple[int, int]] = reactive((0, 0))  # steps shown [first, last); (0, 0): all
    selected_band: reactive[int] = reactive(-1)
    highlight: reactive[tuple] = reactive(())  # tensor ids to mark (a problem's incident)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Memory map"
        self.document: Document | None = None
        self._maps: dict[tuple, MemoryMap] = {}  # (core, memory), or a preview's (core, "preview", id)
        self._pixels: tuple[tuple, Pixels] | None = None
        self._geometry: tuple[int, int, int, int] | None = None  # (top line, left column, lines, columns)
        self._columns = 0  # the map's width at the last frame: the default window is one step a column
        self.whole_run = False  # `0` was pressed: the whole run, however many steps a column
        self._addresses: dict[tuple[int, str], tuple[int, int]] = {}  # per (core, memory): the address zoom
        self._zoom_follows = False  # after `I`: n/N re-fit the window to each incident (until zoomed all out)
        self.preview: Any = None  # `v`: the incident's tensor drawn where it would fit (a rooms.Room)
        self._building: set[tuple] = set()  # (core, memory) maps being built by a worker
        self.maps_built = 0  # counts the maps a worker delivered: a frame drawn while waiting is drawn again

    @property
    def addresses(self) -> tuple[int, int] | None:
        """The address window shown (None: every address) of this core's memory."""
        return self._addresses.get((self.core, self.memory))

    @addresses.setter
    def addresses(self, window: tuple[int, int] | None) -> None:
        if window is None:
            self._addresses.pop((self.core, self.memory), None)
        else:
            self._addresses[(self.core, self.memory)] = window

    # ---- state --------------------------------------------------------------------------------------------
    def show_document(self, document: Document) -> None:
        self.document = document
        self._maps.clear()
        self._building.clear()
        self._pixels = None
        self.core_index, self.frame, self.window, self.selected_band = 0, 0, (0, 0), -1
        self.whole_run = False
        self._addresses.clear()
        self.preview = None
        self.refresh()

    @property
    def map(self) -> MemoryMap:
        preview = self.preview if self.memory == "l2" and self.preview is not None else None
        if preview is not None and preview.residency.core == self.core:  # drawn apart, never cached as the file's
            key: tuple = (self.core, "preview", id(preview))
            moved = (preview.residency.entries, preview.address)
        else:
            key, moved = (self.core, self.memory), None
        found = self._maps.get(key)
        if found is None:
            placement = self.shown.analysed().placement if self.memory == "l2" else None
            found = self._maps[key] = memory_map(self.schedule, self.core, self.memory, placement, moved)
        return found

    @property
    def steps(self) -> int:
        """The core's steps (its workloads), without building its map."""
        return len(self.schedule.core_rows(self.core))

    def map_ready(self) -> bool:
        """True when the map shown can be drawn now: built already, or cheap enough to build on the UI thread.
        A big core's map is built by a worker (a frame says so meanwhile), so a switch never waits for it."""
        if self.preview is not None and self.memory == "l2" or (self.core, self.memory) in self._maps:
            return True
        s, rows = self.schedule, self.schedule.core_rows(self.core)
        pointers = s.buf_ptr if self.memory == "l2" else s.w0_ptr
        if int(pointers[rows.stop] - pointers[rows.start]) <= BUILT_IN_PLACE:
            return True
        key = (self.core, self.memory)
        if key not in self._building:
            self._building.add(key)
            placement = self.shown.analysed().placement if self.memory == "l2" else None
            self.run_worker(partial(self._build_map, self.document, key, placement), thread=True,
                            group="memory-map", description="draw the memory map")  # fmt: skip
        return False

    def _build_map(self, document: Document | None, key: tuple, placement: Any) -> None:
        built = memory_map(self.schedule, key[0], key[1], placement, None)
        self.app.call_from_thread(self._map_built, document, key, built)

    def _map_built(self, document: Document | None, key: tuple, built: MemoryMap) -> None:
        if document is not self.document:  # another file was opened meanwhile
            return
        self._building.discard(key)
        self._maps.setdefault(key, built)
        self.maps_built += 1
        self.refresh()

    def steps_shown(self) -> tuple[int, int]:
        """The steps on screen: the window chosen by zoom and pan; before any, the whole run when the longest
        core fits in two steps a column, else one step a column around the cursor (10,000 steps in 100 columns
        would paint every column with a hundred steps' overlaps); after `0`, the whole run."""
        first, last = self.window
        steps = self.steps
        if last > first:
            return max(first, 0), min(last, steps)
        columns = self._columns
        # decided by the schedule's longest core, so cores of about the same length open alike (one just over
        # twice the columns was windowed while its neighbour just under was not)
        s = self.schedule
        longest = max((len(s.core_rows(int(c))) for c in s.core_ids), default=steps) if s is not None else steps
        if self.whole_run or not columns or longest <= 2 * columns or steps <= columns:
            return 0, steps
        start = min(max(self.frame - columns // 2, 0), steps - columns)
        return start, start + columns

    def show_row(self, row: int, highlight: tuple | None = None) -> None:
        """Follow the shared cursor (timeline, buffers, a problem) without announcing it back."""
        s = self.schedule
        if s is None or not 0 <= row < s.n_workloads:
            return
        core_index = int(np.searchsorted(s.core_ids, s.wl_core[row]))
        if core_index != self.core_index:
            self.core_index, self.window = core_index, (0, 0)
        self.frame = row - s.core_rows(int(s.wl_core[row])).start
        self.selected_band = -1
        self.highlight = tuple(highlight) if highlight is not None else ()
        self._keep_cursor_in_window()
        if self._zoom_follows and highlight is not None:  # `I`'s address zoom follows the incident
            ranges = self.incident_overlap()
            self.addresses = window_around(*ranges, self.map.top) if ranges is not None else None

    def _keep_cursor_in_window(self) -> None:
        first, last = self.steps_shown()
        if not first <= self.frame < last:
            span = last - first
            start = min(max(self.frame - span // 2, 0), max(self.steps - span, 0))
            self.window = (start, start + span)

    def _announce(self) -> None:
        self.post_message(Selected(("workload", self.row), self))

    # ---- actions ------------------------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        if self.schedule is None:
            return
        self.frame = min(max(self.frame + delta, 0), max(self.steps - 1, 0))
        self.selected_band = -1
        self._keep_cursor_in_window()
        self._announce()

    def action_edge(self, which: int) -> None:
        if self.schedule is not None:
            self.frame = 0 if which == 0 else max(self.steps - 1, 0)
            self._keep_cursor_in_window()
            self._announce()

    def action_core(self, delta: int) -> None:
        s = self.schedule
        if s is None:
            return
        self.core_index = (self.core_index + delta) % int(s.core_ids.size)
        self.frame = min(self.frame, max(self.steps - 1, 0))
        self.window, self.selected_band = (0, 0), -1
        self._announce()

    def action_toggle_memory(self) -> None:
        if self.document is None:
            return
        if not self.shown.vocabulary.side_memory:
            self.notify(f"this file has one address space ({self.shown.vocabulary.memory})")
            return
        self.memory = "wl0" if self.memory == "l2" else "l2"
        self.selected_band = -1

    def action_zoom(self, factor: float) -> None:
        if self.schedule is None:
            return
        first, last = self.steps_shown()
        span = min(max(int(round((last - first) * factor)), 4), self.map.steps)
        start = min(max(self.frame - span // 2, 0), max(self.map.steps - span, 0))
        self.window = (start, start + span)

    def action_zoom_all(self) -> None:
        self.whole_run = True
        self.window = (0, 0)
        self.refresh()

    def action_pan(self, fraction: float) -> None:
        if self.schedule is None:
            return
        first, last = self.steps_shown()
        span = last - first
        start = min(max(first + int(round(span * fraction)) or (1 if fraction > 0 else -1), 0), self.map.steps - span)
        self.window = (max(start, 0), max(start, 0) + span)

    def action_tensor(self, delta: int) -> None:
        if self.schedule is None:
            return
        live = self.map.bands_at(self.frame)
        if not live.size:
            return
        current = np.flatnonzero(live == self.selected_band)
        k = (int(current[0]) + delta) % live.size if current.size else (0 if delta > 0 else live.size - 1)
        self._select_band(int(live[k]))

    def select_entry(self, row: int, entry: int, memory: str) -> None:
        """Select the band of a buf_* (memory "l2") or w0_* ("wl0") entry: the buffer view's or the tree's
        selection, without announcing it back."""
        if self.schedule is None or (memory == "wl0" and not self.shown.vocabulary.side_memory):
            return
        self.show_row(row)
        self.memory = memory
        s = self.schedule
        tensor, address = (s.buf_tensor, s.buf_addr) if memory == "l2" else (s.w0_tid, s.w0_addr)
        self.selected_band = self.map.band_of(self.frame, int(tensor[entry]), int(address[entry]))

    def _select_band(self, band: int) -> None:
        self.selected_band = band
        row = self.row
        entry = self._entry_at(band, row)
        if entry >= 0:
            self.post_message(Selected(entry_ref(row, entry, self.map.memory), self))

    def _entry_at(self, band: int, row: int) -> int:
        """The band's entry in the snapshot of `row` (a band spans snapshots; each has its own entry)."""
        s, m = self.schedule, self.map
        if m.memory == "l2":
            lo, hi, ids = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1]), s.buf_tensor
        else:
            lo, hi, ids = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1]), s.w0_tid
        hits = np.flatnonzero(ids[lo:hi] == m.tensor[band])
        return lo + int(hits[0]) if hits.size else -1

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if self._geometry is None or at is None or self._pixels is None:
            return
        top, left, lines, columns = self._geometry
        line, column = at.y - top, at.x - left
        if not (0 <= line < lines and 0 <= column < columns):
            return
        pixels = self._pixels[1]
        step = int(pixels.step0 + column * pixels.steps_per_column)
        self.frame = min(step, self.map.steps - 1)
        self._announce()
        for pixel_row in (2 * line, 2 * line + 1):
            band = int(pixels.band[pixel_row, column])
            if band != FREE:
                self._select_band(band)
                return
        self.selected_band = -1

    def action_zoom_addresses(self, factor: float) -> None:
        """The addresses zoomed in (factor below 1) or out around the selected band, else the first overlap at
        the cursor, else the window's middle."""
        if self.schedule is None:
            return
        m = self.map
        lo, hi = self.addresses or (0, m.top)
        focus = (lo + hi) // 2
        if self.selected_band >= 0:
            focus = int(m.lo[self.selected_band] + m.hi[self.selected_band]) // 2
        elif (overlap := self._overlap_here()) is not None:
            focus = sum(overlap) // 2
        self.addresses = address_window(m.top, self.addresses, factor, focus)
        self._zoom_follows = self._zoom_follows and self.addresses is not None  # all addresses: done following
        self.refresh()

    def action_zoom_to_overlap(self) -> None:
        """The addresses of the selected incident's tensors at the cursor's step (all its ranges, whole), else
        of every overlap at that step, else the run's first overlap."""
        if self.schedule is None:
            return
        overlap = self.incident_overlap() or self._overlap_here()
        if overlap is None:
            self.notify("no overlap at this step", severity="warning")
            return
        self.addresses = window_around(*overlap, self.map.top)
        self._zoom_follows = True
        self.refresh()

    def incident_overlap(self) -> tuple[int, int] | None:
        """[lo, hi) around the overlaps at the cursor's step that involve a highlighted tensor (an incident's),
        all of them whole (the map's own overlap pairs); None when they overlap nothing there."""
        m = self.map
        if not self.highlight or not m.overlap_step.size:
            return None
        mine = (m.overlap_step == self.frame) & np.isin(m.overlap_ids, np.asarray(self.highlight)).any(axis=1)
        return (int(m.overlap_lo[mine].min()), int(m.overlap_hi[mine].max())) if mine.any() else None

    def _overlap_here(self) -> tuple[int, int] | None:
        """[lo, hi) around every overlap at the cursor's step (so none is cut in half), or the run's first one."""
        m = self.map
        if not m.overlap_step.size:
            return None
        here = np.flatnonzero(m.overlap_step == self.frame)
        if not here.size:
            return int(m.overlap_lo[0]), int(m.overlap_hi[0])
        return int(m.overlap_lo[here].min()), int(m.overlap_hi[here].max())

    # ---- rendering ----------------------------------------------------------------------------------------
    def frame_key(self) -> tuple:
        return (self.core_index, self.frame, self.memory, self.window, self.selected_band, self.highlight,
                self.whole_run, self.addresses, id(self.preview), self.maps_built)  # fmt: skip

    def _preview_changed(self) -> None:
        if self.preview is not None:  # a move in L2: shown in L2
            self.memory = "l2"
        self._pixels = None

    def action_peak(self) -> None:
        """Go to the core's L2 peak and list the tensors live there, largest first; Enter selects one."""
        if self.schedule is None:
            return
        from explorer.schedule.pressure import live_tensors, pressure_of
        from widgets.review_screens import LinksScreen

        self.memory = "l2"
        m = self.map
        if m.peak_step < 0:
            return
        self.frame = m.peak_step
        self._keep_cursor_in_window()
        self._announce()
        s, row = self.schedule, self.row
        pressure = pressure_of(self.shown)
        role = pressure.entry_role() if pressure is not None else None
        live = live_tensors(s, row, role, self.shown.vocabulary.entry_kinds)
        labels = [f"{t['tensor_id']:>8}  {human_bytes(t['bytes']):>10}  at {t['address']:#x}  {t['role']}"
                  for t in live]  # fmt: skip
        title = (f"{s.core_label(self.core)} at its peak: {human_bytes(int(m.used[m.peak_step]))} live before "
                 f"#{int(s.wl_id[row])}, {plural(len(live), 'tensor')}, largest first "
                 "(Enter selects)")  # fmt: skip

        def chosen(index: int | None) -> None:
            if index is not None and index < len(live):
                band = self.map.band_of(self.frame, live[index]["tensor_id"], live[index]["address"])
                if band >= 0:
                    self._select_band(band)

        self.app.push_screen(LinksScreen(title, labels), chosen)

    def render_frame(self) -> list[Strip]:
        """Every line of the current frame. Public so the benchmark can time one frame."""
        width, height = self.size.width, self.size.height
        self._geometry = None
        if self.document is None or self.schedule is None or width < RULER + 12 or height < FOOTER_LINES + 4:
            return [Strip.blank(width)] * height
        if not self.map_ready():
            words = self.shown.vocabulary
            memory = words.memory if self.memory == "l2" else (words.side_memory or "WL0")
            waiting = f"{self.schedule.core_label(self.core)} · {memory} · drawing the map of {self.steps:,} steps…"
            return [*folded(waiting, width, TEXT), *[Strip.blank(width)] * height][:height]
        m = self.map
        lines = self._header(width, m)
        legend = self._legend(width)
        map_lines = height - len(lines) - FOOTER_LINES - (len(legend) - 1)
        columns = width - RULER
        self._columns = columns
        step0, step1 = self.steps_shown()
        base, end = self.addresses or (0, m.top)
        per_line = round_bytes_per_line(end - base, map_lines)
        drawn = min(-(-(end - base) // per_line), map_lines)
        key = (self.core, self.memory, step0, step1, columns, drawn, base)
        if self._pixels is None or self._pixels[0] != key:
            self._pixels = (key, paint(m, step0, step1, base, base + drawn * per_line, columns, 2 * drawn))
        pixels = self._pixels[1]
        self._geometry = (len(lines), RULER, drawn, columns)
        lines += self._map_lines(m, pixels, drawn, columns)
        lines.append(self._axis(m, pixels, columns))
        lines.append(self._fragmentation_line(m, pixels, columns))
        lines.append(self._selection_line(width, m))
        lines += legend
        lines.append(self._findings(width, m))
        return lines[:height]

    def _header(self, width: int, m: MemoryMap) -> list[Strip]:
        s, words = self.schedule, self.shown.vocabulary
        row = self.row
        live = self.map.bands_at(self.frame).size
        memory = words.memory if m.memory == "l2" else (words.side_memory or "WL0")
        step0, step1 = self.steps_shown()
        zoom = "" if (step0, step1) == (0, m.steps) else f" · showing {step0 + 1}–{step1}"
        if self.addresses is not None:
            zoom += f" · addresses {self.addresses[0]:#x}–{self.addresses[1]:#x} (o: out)"
        text = (
            f"{s.core_label(self.core)} · {memory} · {words.block} #{int(s.wl_id[row])} "
            f"{s.layers[s.wl_layer[row]]} · step {self.frame + 1}/{m.steps}{zoom} · {plural(int(live), 'tensor')}, "
            f"{human_bytes(int(m.used[self.frame]) if m.used.size else 0)} of {human_bytes(m.capacity)}"
        )
        if self.preview is not None and self.memory == "l2":  # said first: the map shows a move not made
            return [*folded(preview_words(s, self.preview), width, PREVIEW), *folded(text, width, TEXT)]
        return folded(text, width, TEXT)

    def _map_lines(self, m: MemoryMap, pixels: Pixels, lines: int, columns: int) -> list[Strip]:
        """Each line two pixel rows as ▀ (upper pixel the foreground, lower the background): pixels become
        palette indices with numpy, and each line is cut into runs of one colour pair, one Style per pair."""
        colours = self._pixel_colours(m, pixels, columns)
        pairs = colours[0::2] * len(PALETTE) + colours[1::2]  # (lines, columns) colour-pair codes
        bpp = pixels.bytes_per_pixel
        base = self.addresses[0] if self.addresses else 0
        starts = {int((lo - base) // (2 * bpp)) for _, _, lo, _ in m.ring if lo >= base}
        capacity_line = int((m.capacity - base) // (2 * bpp)) if m.top > m.capacity else -1
        relative = base if self.addresses is not None and m.top > 0xFFFFF else None  # a zoom: offsets from its start
        out: list[Strip] = []
        for line in range(lines):
            tick = "◆" if line in starts else ("┄" if line == capacity_line else " ")
            segments = [Segment(ruler_label(base + int(line * 2 * bpp), m.top, tick, relative), DIM)]
            row = pairs[line]
            cuts = np.flatnonzero(row[1:] != row[:-1]) + 1
            edges = [0, *cuts.tolist(), columns]
            codes = row[edges[:-1]].tolist()
            for a, b, code in zip(edges[:-1], edges[1:], codes, strict=True):
                segments.append(Segment("▀" * (b - a), _pair_style(code)))
            out.append(Strip(segments))
        return out

    def _pixel_colours(self, m: MemoryMap, pixels: Pixels, columns: int) -> np.ndarray:
        """Palette index per pixel: a band's type colour, the selection white, the highlighted tensors yellow,
        overlaps red, empty pixels dark (lighter in the cursor's column, reddish past the capacity)."""
        band = pixels.band
        by_band = np.where(m.kind < 0, SIDE_INDEX, KIND_INDEX + np.maximum(m.kind, 0) % len(ENTRY_STYLES))
        if self.highlight:
            by_band = np.where(np.isin(m.tensor, np.asarray(self.highlight, dtype=np.int64)), HIGHLIGHT_INDEX, by_band)
        if 0 <= self.selected_band < by_band.size:
            by_band[self.selected_band] = SELECTED_INDEX
        colours = np.where(band >= 0, by_band[np.maximum(band, 0)] if by_band.size else 0, FREE_INDEX)
        cursor_column = int((self.frame - pixels.step0) / pixels.steps_per_column)
        if 0 <= cursor_column < columns:
            column = colours[:, cursor_column]
            column[column == FREE_INDEX] = CURSOR_INDEX
        beyond = np.arange(band.shape[0]) * pixels.bytes_per_pixel >= m.capacity
        colours[beyond[:, None] & (colours == FREE_INDEX)] = BEYOND_INDEX
        colours[pixels.overlap] = OVERLAP_INDEX
        return colours

    def _axis(self, m: MemoryMap, pixels: Pixels, columns: int) -> Strip:
        """The step axis: ▲ under the cursor, ◆ under the peak."""
        marks = ["─"] * columns
        peak = m.peak_step
        peak_column = int((peak - pixels.step0) / pixels.steps_per_column) if peak >= 0 else -1
        cursor_column = int((self.frame - pixels.step0) / pixels.steps_per_column)
        if 0 <= peak_column < columns:
            marks[peak_column] = "◆"
        if 0 <= cursor_column < columns:
            marks[cursor_column] = "▲"
        segments = [Segment("step".ljust(RULER - 1) + "└", DIM)]
        for mark in marks:
            segments.append(Segment(mark, DIM if mark == "─" else PEAK))
        return Strip(Segment.simplify(segments))

    def _fragmentation_line(self, m: MemoryMap, pixels: Pixels, columns: int) -> Strip:
        """L2's fragmentation per column (the worst of its steps): 1 − largest free block ÷ free bytes, as bars."""
        from explorer.schedule.pressure import pressure_of

        pressure = pressure_of(self.shown) if m.memory == "l2" else None
        if pressure is None:
            return Strip([Segment("frag".ljust(RULER - 1) + "│", DIM), Segment("(L2 only)"[:columns], DIM)])
        values = pressure.core_fragmentation(self.core)
        step0 = pixels.step0
        edges = step0 + np.arange(columns + 1) * pixels.steps_per_column
        first = np.clip(np.floor(edges[:-1]).astype(np.int64), 0, max(values.size - 1, 0))
        last = np.clip(np.ceil(edges[1:]).astype(np.int64), first + 1, values.size)
        worst = [float(values[a:b].max()) if b > a else 0.0 for a, b in zip(first.tolist(), last.tolist(), strict=True)]
        bars = "".join(SPARK[min(round(v * (len(SPARK) - 1)), len(SPARK) - 1)] for v in worst)
        return Strip([Segment("frag".ljust(RULER - 1) + "│", DIM), Segment(bars[:columns], PEAK)])

    def _selection_line(self, width: int, m: MemoryMap) -> Strip:
        s, words = self.schedule, self.shown.vocabulary
        band = self.selected_band
        peak = m.peak_step
        peak_text = (f"◆ peak {human_bytes(int(m.used[peak]))} before #{int(s.wl_id[m.rows[peak]])} (step {peak + 1})"
                     if peak >= 0 else "")  # the buffers view's words for the same point  # fmt: skip
        if band < 0 or band >= m.bands:
            return Strip([Segment(peak_text[:width].ljust(width), PEAK)])
        what = "tensor" if m.memory == "l2" else "transfer"
        kind = int(m.kind[band])
        role = words.entry_kinds[kind] if 0 <= kind < len(words.entry_kinds) else ""
        first, last = int(m.first[band]), int(m.last[band])
        rows = m.rows
        text = (
            f"{what} {int(m.tensor[band])}{f' ({role})' if role else ''} "
            f"{int(m.lo[band]):#x}–{int(m.hi[band]):#x} ({human_bytes(int(m.hi[band] - m.lo[band]))}) · "
            f"{words.block}s #{int(s.wl_id[rows[first]])}–#{int(s.wl_id[rows[last]])} · {peak_text}"
        )
        return Strip([Segment(text[:width].ljust(width), Style(color=SELECTED, bold=True))])

    def _legend(self, width: int) -> list[Strip]:
        words = self.shown.vocabulary
        items = []
        if self.memory == "l2":
            for code, name in enumerate(words.entry_kinds):
                items.append(("█", ENTRY_STYLES[code % len(ENTRY_STYLES)], f"{name}  ", TEXT))
        else:
            items.append(("█", SIDE_STYLE, "entry  ", TEXT))
        items.append(("█", OVERLAP, "overlap  ", TEXT))
        if self.map.ring:
            items.append(("◆", DIM, "ring region start  ", TEXT))
        items += [("▲", PEAK, "cursor  ", TEXT), ("◆", PEAK, "peak (P lists it)  ", TEXT)]
        if self.memory == "l2":
            items.append(("▆", PEAK, "frag: 1 − largest free block ÷ free bytes", TEXT))
        return flowed(items, width, ("legend ", DIM))

    def _findings(self, width: int, m: MemoryMap) -> Strip:
        here = np.flatnonzero(m.overlap_step == self.frame)
        if not here.size:
            total = int(distinct(m.overlap_step).size)
            text = (f"overlaps in {plural(total, 'step')} (red)" if total else "no overlap on this "
                    f"{self.schedule and self.shown.vocabulary.lane}")  # fmt: skip
            return Strip([Segment(text[:width].ljust(width), OVERLAP if total else DIM)])
        shared = int((m.overlap_hi[here] - m.overlap_lo[here]).sum())
        moved = self.highlight[0] if self.highlight else None  # an incident's misplaced tensor comes first
        word = "tensor" if self.memory == "l2" else "transfer"

        def name(ident: int) -> str:
            return f"{ident} (moved)" if ident == moved else str(ident)

        said = []
        for k in here[:2].tolist():  # the tensors on each side, where they meet, and which one moved
            a, b = (int(v) for v in m.overlap_ids[k])
            lo, hi = int(m.overlap_lo[k]), int(m.overlap_hi[k])
            said.append(f"{word} {name(a)} ⇄ {name(b)} at {lo:#x}–{hi:#x} ({human_bytes(hi - lo)})")
        more = f" · {here.size - 2:,} more" if here.size > 2 else ""
        text = (f"overlap at this step: {'; '.join(said)}{more} · {plural(int(here.size), 'range')}, "
                f"{human_bytes(shared)} shared")  # fmt: skip
        return Strip([Segment(text[:width].ljust(width), OVERLAP)])


def round_bytes_per_line(top: int, lines: int) -> int:
    """Bytes per line of the map: the smallest 2^k or 3·2^k that fits `top` bytes in `lines`, so the ruler reads
    0x0600, 0x0c00, ... and at most a third of the height is left over."""
    need = max(-(-top // max(lines, 1)), 2)
    power = 1 << (need - 1).bit_length()  # the power of two at or above
    return 3 * power // 4 if 3 * power // 4 >= need and power >= 4 else power
