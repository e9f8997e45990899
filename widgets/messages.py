"""Every message that crosses widgets, in one place so the wiring can be read in one go."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from explorer.document import Item
from explorer.errors import Problem


class ItemFocused(Message):
    """The tree's cursor moved to an item: the details panel follows."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item = item


class ItemActivated(Message):
    """Enter on a leaf of the tree: the app opens the view that shows it (a source file, a tensor's layout)."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item = item


class CursorMoved(Message):
    """The shared time cursor moved to a schedule row in one view (timeline, buffers, memory map): the others
    and the details follow."""

    def __init__(self, row: int, view: Any) -> None:
        super().__init__()
        self.row = row
        self.view = view  # the view it moved in: it does not need telling


class ProblemChosen(Message):
    """Enter on a problem: the app navigates to what it points at."""

    def __init__(self, problem: Problem, highlight: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.problem = problem
        self.highlight = highlight  # every tensor of the problem's incident, when it has one


class RevealRef(Message):
    """Ask the app to show a ref (from search, a problem or another view)."""

    def __init__(self, ref: Any, because: Problem | None = None, highlight: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.ref = ref
        self.because = because
        self.highlight = highlight or tuple((because.refs.get("tensor_ids") or ()) if because else ())
