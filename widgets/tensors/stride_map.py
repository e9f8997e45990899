"""The stride map: how one strided tensor sits in its buffer, drawn as a 2-D grid of its last two dimensions.

Data, padding and the other tensors of the same buffer have distinct glyphs and colours; bytes where this
tensor's data meets another tensor's data are red. The cursor names the element and byte offset under it,
and the formulas for the first and end byte are always shown. Outer dimensions are picked with keys.
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.reactive import reactive
from textual.strip import Strip

from explorer.formatting import human_bytes
from explorer.tensors.stride_map import DATA, OTHER, PAD, PlaneGrid, outer_dims, plane_grid, plane_shape
from explorer.tensors.strides import TensorLayout, same_placement
from widgets.frame_widget import FrameWidget

RULER = 7  # row numbers on the left
HEADER_LINES = 3  # tensor line, plane line, column ruler
FOOTER_LINES = 5  # legend, cursor, two formulas, aliases
TEXT = Style(color="#d0d0d0")
DIM = Style(color="#8a8a8a")
BOLD = Style(color="#ffffff", bold=True)
CELL_STYLES = {
    "data": ("█", Style(color="#4cbf73")),
    "shared": ("█", Style(color="#ff3030", bold=True)),
    "padding": ("▒", Style(color="#e8a33d")),
    "other": ("░", Style(color="#4f8fe8")),
    "padding+other": ("▒", Style(color="#b46be8")),
    "unused": ("·", Style(color="#4a4a4a")),
}


def cell_kind(code: int) -> str:
    if code & DATA:
        return "shared" if code & OTHER else "data"
    if code & PAD:
        return "padding+other" if code & OTHER else "padding"
    return "other" if code & OTHER else "unused"


class StrideMap(FrameWidget, can_focus=True):
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("right_square_bracket", "outer(1)", "Next plane", key_display="]"),
        Binding("left_square_bracket", "outer(-1)", "Prev plane", show=False, key_display="["),
        Binding("greater_than_sign", "outer_dim(1)", "Next outer dim", show=False, key_display=">"),
        Binding("less_than_sign", "outer_dim(-1)", "Prev outer dim", show=False, key_display="<"),
        Binding("home", "first_data", "First data cell", show=False),
    ]
    HELP_KEYS = [
        ("Layout", "arrows", "move the cursor over the grid (the byte offset under it is shown)"),
        ("Layout", "[ / ]", "previous / next index of the chosen outer dimension"),
        ("Layout", "< / >", "choose which outer dimension [ and ] change"),
        ("Layout", "Home", "put the cursor on the tensor's first data cell"),
    ]
    DEFAULT_CSS = """
    StrideMap { border: round $primary-darken-2; border-title-color: $text-muted; height: 1fr; }
    StrideMap:focus { border: round $accent; }
    """

    tensor_id: reactive[int] = reactive(-1)
    cursor: reactive[tuple[int, int]] = reactive((0, 0))  # (row, column) element of the plane, not a cell
    outer_index: reactive[tuple[int, ...]] = reactive(())
    outer_axis: reactive[int] = reactive(0)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Layout"
        self._grid: PlaneGrid | None = None

    # ---- state --------------------------------------------------------------------------------------------
    def show_document(self, document: Any) -> None:
        self.document = document
        self.show_tensor(document.layouts.first_tensor() if document.layouts is not None else -1)

    @property
    def index(self) -> Any:
        """The document's tensor layouts (explorer.document.TensorLayouts)."""
        return self.shown.layouts

    @property
    def tensor_layout(self) -> TensorLayout | None:
        return self.index.layout(self.tensor_id) if self.document is not None else None

    def show_tensor(self, tensor_id: int) -> None:
        if tensor_id == self.tensor_id:
            return
        self.tensor_id = tensor_id
        layout = self.tensor_layout
        self.outer_index = tuple(0 for _ in range(outer_dims(layout))) if layout else ()
        self.outer_axis = 0
        if layout is not None:  # start on the data: the first element of the tensor in the chosen plane
            self.outer_index = tuple(layout.offsets[: outer_dims(layout)])
        self._grid = None
        self.action_first_data()

    def frame_key(self) -> tuple:
        return (self.tensor_id, self.cursor, self.outer_index, self.outer_axis, self.has_focus)

    def grid(self) -> PlaneGrid | None:
        layout = self.tensor_layout
        if layout is None:
            return None
        rows = max(1, self.size.height - HEADER_LINES - FOOTER_LINES)
        cols = max(1, self.size.width - RULER - 1)
        key = (self.tensor_id, self.outer_index, rows, cols)
        if self._grid is None or getattr(self, "_grid_key", None) != key:
            # a tensor's twin (the same bytes under another id) would paint every data cell as shared
            others = [o for o in self.index.layouts_on(layout.buffer_id) if not same_placement(o, layout)]
            self._grid = plane_grid(layout, others, self.outer_index, rows, cols)
            self._grid_key = key
        return self._grid

    # ---- actions ------------------------------------------------------------------------------------------
    def action_move(self, d_row: int, d_col: int) -> None:
        """Move by one cell: one element, or one block of elements when cells hold blocks."""
        grid = self.grid()
        if grid is None:
            return
        row, col = self.cursor
        row = (row // grid.row_block + d_row) * grid.row_block
        col = (col // grid.col_block + d_col) * grid.col_block
        self.cursor = (min(max(row, 0), grid.plane_rows - 1), min(max(col, 0), grid.plane_cols - 1))

    def action_outer(self, delta: int) -> None:
        layout = self.tensor_layout
        if layout is None or not self.outer_index:
            return
        axis = self.outer_axis
        index = list(self.outer_index)
        index[axis] = (index[axis] + delta) % layout.strides[axis]
        self.outer_index = tuple(index)

    def action_outer_dim(self, delta: int) -> None:
        if self.outer_index:
            self.outer_axis = (self.outer_axis + delta) % len(self.outer_index)

    def action_first_data(self) -> None:
        layout = self.tensor_layout
        if layout is None:
            self.cursor = (0, 0)
            return
        rows, cols = plane_shape(layout)
        row = layout.offsets[-2] if len(layout.offsets) >= 2 else 0
        self.cursor = (min(row, rows - 1), min(layout.offsets[-1], cols - 1))

    # ---- drawing ------------------------------------------------------------------------------------------
    def render_frame(self) -> list[Strip]:
        width = self.size.width
        if self.document is None or self.tensor_id < 0:
            return [Strip([Segment("Select a tensor in the tree to see how it sits in its buffer.", DIM)])]
        layout = self.tensor_layout
        faults = self.index.layout_faults(self.tensor_id)
        if layout is None or faults:  # the format itself refuses such a tensor: say why rather than draw a guess
            faults = faults or ["its dimensions cannot be placed"]
            lines = [Strip([Segment(f"Tensor {self.tensor_id} cannot be placed in its buffer:", BOLD)])]
            lines += [Strip([Segment("  " + fault, TEXT)]) for fault in faults]
            return lines
        grid = self.grid()
        if grid is None:
            return [Strip([Segment(f"Tensor {self.tensor_id} has no elements to draw.", DIM)])]
        lines = [self._header(layout), self._plane_line(layout, grid), self._column_ruler(grid, width)]
        lines += self._grid_lines(grid)
        lines += self._footer(layout, grid, width)
        return [line.crop(0, width) for line in lines]

    def _header(self, layout: TensorLayout) -> Strip:
        region = f"[{', '.join(map(str, layout.strides))}]"
        buffer_bytes = self.index.buffer_bytes(layout.buffer_id)
        return Strip(
            [
                Segment(f"tensor {layout.tensor_id}", BOLD),
                Segment(f"  {layout.dtype} [{', '.join(map(str, layout.shape))}]", TEXT),
                Segment(f"  in buffer {layout.buffer_id} ({human_bytes(buffer_bytes)})  region {region}", DIM),
                Segment(
                    f"  {layout.runs:,} run{'s' if layout.runs != 1 else ''} of {human_bytes(layout.run_bytes)}", DIM
                ),
            ]
        )

    def _plane_line(self, layout: TensorLayout, grid: PlaneGrid) -> Strip:
        segments = []
        if self.outer_index:
            parts = []
            for axis, value in enumerate(self.outer_index):
                text = f"d{axis}={value}/{layout.strides[axis]}"
                parts.append(f"‹{text}›" if axis == self.outer_axis else text)
            segments.append(Segment("plane " + "  ".join(parts) + "   ", TEXT))
        rows, cols = plane_shape(layout)
        segments.append(Segment(f"{rows} × {cols} elements", DIM))
        if grid.row_block > 1 or grid.col_block > 1:
            segments.append(Segment(f"; one cell = {grid.row_block} × {grid.col_block} elements", DIM))
        if not grid.exact:
            segments.append(Segment(" (other tensors sampled per cell)", DIM))
        return Strip(segments)

    def _column_ruler(self, grid: PlaneGrid, width: int) -> Strip:
        cols = grid.codes.shape[1]
        ruler = [" "] * cols
        step = 10
        for c in range(0, cols, step):
            label = str(c * grid.col_block)
            if c + len(label) <= cols:
                ruler[c : c + len(label)] = list(label)
        return Strip([Segment(" " * RULER, DIM), Segment("".join(ruler), DIM)])

    def _grid_lines(self, grid: PlaneGrid) -> list[Strip]:
        lines = []
        cursor_row, cursor_col = self.cursor[0] // grid.row_block, self.cursor[1] // grid.col_block
        for r, row in enumerate(grid.codes):
            label = f"{r * grid.row_block:>{RULER - 1}} "
            segments = [Segment(label, DIM)]
            run_kind, run_length = "", 0
            for c, code in enumerate(row.tolist()):
                kind = cell_kind(code)
                if r == cursor_row and c == cursor_col:
                    if run_length:
                        segments.append(_cells(run_kind, run_length))
                    glyph, style = CELL_STYLES[kind]
                    segments.append(Segment(glyph, style + Style(reverse=True, bgcolor="#ffffff")))
                    run_kind, run_length = "", 0
                    continue
                if kind == run_kind:
                    run_length += 1
                else:
                    if run_length:
                        segments.append(_cells(run_kind, run_length))
                    run_kind, run_length = kind, 1
            if run_length:
                segments.append(_cells(run_kind, run_length))
            lines.append(Strip(segments))
        return lines

    def _footer(self, layout: TensorLayout, grid: PlaneGrid, width: int) -> list[Strip]:
        others = [o for o in self.index.layouts_on(layout.buffer_id) if o.tensor_id != layout.tensor_id]
        legend = []
        for kind in ("data", "padding", "other", "shared", "unused"):
            glyph, style = CELL_STYLES[kind]
            legend += [Segment(glyph * 2, style), Segment(f" {_LEGEND[kind]}   ", TEXT)]
        row, col = self.cursor
        element = (*self.outer_index, row, col) if len(layout.strides) >= 2 else (col,)
        byte = layout.byte_of(element)
        terms = " + ".join(f"{i}×{p}" for i, p in zip(element, layout.pitches, strict=True))
        code = int(grid.codes[min(row // grid.row_block, grid.codes.shape[0] - 1), col // grid.col_block])
        under = _LEGEND[cell_kind(code)] + (" (in this cell)" if grid.row_block * grid.col_block > 1 else "")
        where = f"cursor [{', '.join(map(str, element))}]  byte "
        cursor = Strip([*_formula_strip(where, f"{layout.element_bytes} × ({terms}) = {byte:,}",
                                        width - len(under) - 3), Segment(f"   {under}", DIM)])  # fmt: skip
        aliases = self.index.aliases_of(layout.tensor_id)
        twins = {o.tensor_id for o in others if same_placement(o, layout)}
        shared_text = ", ".join(f"t{t}" + (" (same bytes)" if t in twins else "") for t in aliases) or "none"
        return [
            Strip(legend),
            cursor,
            _formula_strip("first byte = ", layout.first_byte_formula(), width),
            _formula_strip("end byte   = ", layout.end_byte_formula(), width),
            Strip(
                [
                    Segment(f"shares bytes with: {shared_text}", TEXT),
                    Segment(f"   ({len(others)} other tensors on buffer {layout.buffer_id})", DIM),
                ]
            ),
        ]


def _formula_strip(label: str, formula: str, width: int) -> Strip:
    """`end byte   = 32,768 = 2 × (0×16384 + 63×256 + …)`: the value first, then the expression, cut at a term
    (never inside one) with `…` where the panel is too narrow for all of it."""
    expression, _, value = formula.rpartition(" = ")
    if not expression:
        return Strip([Segment(label, DIM), Segment(formula, TEXT)])
    room = width - len(label) - len(value) - 3
    if len(expression) > room:
        terms = expression.split(" + ")
        kept = terms[0]
        for term in terms[1:]:
            if len(kept) + 3 + len(term) + 6 > room:
                break
            kept += " + " + term
        expression = kept + (" + …)" if kept.count("(") > kept.count(")") else " …")
    return Strip([Segment(label, DIM), Segment(value, BOLD), Segment(f" = {expression}", TEXT)])


_LEGEND = {
    "data": "data",
    "padding": "padding",
    "other": "other tensors",
    "shared": "shared data",
    "padding+other": "padding under another tensor",
    "unused": "unused",
}


def _cells(kind: str, count: int) -> Segment:
    glyph, style = CELL_STYLES[kind]
    return Segment(glyph * count, style)
