"""Every message that crosses widgets, in one place so the wiring can be read in one go."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from explorer.document import Item
from explorer.errors import Problem
from explorer.models.ref import Ref


class Selected(Message):
    """A view's selection moved to `ref` (a tree ref: a tree item's, a schedule's workload or entry as
    explorer.schedule.refs names them, a graph box's). Every view posts it; the app keeps it as that
    view's selection (what `g`, `b` and the details act on while the view has the keyboard) and the other views
    follow. `label` names it when the view knows a name (the tree's line)."""

    def __init__(self, ref: Ref | None, view: Any, label: str = "", following: str = "") -> None:
        super().__init__()
        self.ref = ref
        self.view = view  # the view it was made in: it does not need telling
        self.label = label
        # the tree's cursor moved to follow this view (its id): that view is where the selection came from, and
        # telling it again would undo what it did meanwhile (keys run back to back)
        self.following = following


class ItemActivated(Message):
    """Enter on a leaf of the tree: the app opens the view that shows it (a source file, a tensor's layout)."""

    def __init__(self, item: Item) -> None:
        super().__init__()
        self.item = item


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
