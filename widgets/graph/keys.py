"""The graph view's keys and what the help says of them (tests/app/test_keys.py checks the README and the help
against both)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

GRAPH_BINDINGS: list[BindingType] = [
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
    Binding("backspace", "close_group", "Close group", show=False),
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
GRAPH_HELP_KEYS = [
    ("Graph", "↑ / ↓", "producer / consumer along the reading path (a fork: the data's first reader in the "
                       "model's order; ↓ on a closed group reads on inside it)"),
    ("Graph", "o", "at a fork ↓/↑ met (the status line says `↓ 1 of 2`): take the next branch"),
    ("Graph", "← / →", "go to the neighbour on the same rows, across frames"),
    ("Graph", "Shift+arrows", "pan"),
    ("Graph", "Enter", "open or close the selected group (on a node: close its group)"),
    ("Graph", "Backspace", "close the group the selection is in (a stack's members are groups: Enter opens them)"),
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
    ("Graph", "m", "show or hide the minimap (in the corner that hides the least and no box nor frame title; "
                   "else it waits for one)"),
    ("Graph", "click / wheel", "select a box / scroll"),
]
