"""The uniform document tree: any format's `Item` tree, children built only when a node opens. Labels are plain
`Text`: a name from a file is never read as markup (a `[@click=…]` in it would be a link that runs an action)."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from explorer.document import Document, Item
from widgets.messages import ItemActivated, Selected

_KIND_STYLE = {
    "core": "bold",
    "workload": "",
    "buffer": "cyan",
    "wl0": "cyan",
    "ifmap": "green",
    "ofmap": "yellow",
    "weight": "magenta",
    "dram": "bold blue",
}


class DocumentTree(Tree[Item]):
    """Left-hand tree. Enter/space open a node; the cursor drives the details panel."""

    DEFAULT_CSS = """
    DocumentTree { border: round $primary-darken-2; border-title-color: $text-muted; }
    DocumentTree:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("(loading)", **kwargs)
        self.border_title = "Tree"
        self.document: Document | None = None
        self.guide_depth = 3
        # ref → the view id a reveal put the cursor there for; its highlight (a message, arriving after any
        # number of other reveals) says so. Dropped when its highlight comes, or when it never will.
        self._following: dict[Any, str] = {}
        # the ref of the last highlight: opening nodes above the cursor moves its line, and Textual highlights the
        # same node again; passed on, that stale highlight pulled a view back to what it had left
        self._highlighted: Any = None

    def show_document(self, document: Document) -> None:
        self.document = document
        self._highlighted = None
        self.clear()
        self.root.label = Text(document.tree.label)  # a str label would be read as markup
        self.root.data = document.tree
        self._populate(self.root)
        self.root.expand()
        self.move_cursor(self.root)

    def _populate(self, node: TreeNode[Item]) -> None:
        item = node.data
        if item is None or node.children or not item.has_children:
            return
        for child in item.get_children():
            label = Text(child.label, style=_KIND_STYLE.get(child.kind, ""))
            node.add(label, data=child, allow_expand=child.has_children)

    def get_label_width(self, node: TreeNode[Item]) -> int:
        """The label's width without rendering it: Textual measures every line of the tree this way whenever a
        node opens, and its default (render, then measure) took 0.2 s for the 8,000 lines that walking a big
        schedule's incidents with `n` opens."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        return cell_len(icon) + cell_len(str(node.label))

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Item]) -> None:
        self._populate(event.node)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Item]) -> None:
        if event.node.data is not None:
            ref = event.node.data.ref
            if _hashable(ref) and ref == self._highlighted:
                self._following.pop(ref, None)
                return
            self._highlighted = ref if _hashable(ref) else None
            view = self._following.pop(ref, "") if _hashable(ref) else ""
            self.post_message(Selected(ref, self, event.node.data.label, following=view))

    def on_tree_node_selected(self, event: Tree.NodeSelected[Item]) -> None:
        if event.node.data is not None and not event.node.data.has_children:
            self.post_message(ItemActivated(event.node.data))

    def reveal(self, ref: Any, following: str = "") -> bool:
        """Open the nodes leading to `ref` and put the cursor on it; False when it is not in the tree. `following`:
        the view whose selection this is (the tree's own Selected then says so)."""
        if self.document is None:
            return False
        if following and _hashable(ref):
            if len(self._following) > 64:
                self._following.clear()
            self._following[ref] = following
        node = self.root
        for step in self.document.ancestors(ref):
            self._populate(node)
            if not node.is_expanded:  # expand() rebuilds every line of the tree, open or not
                node.expand()
            match = next((child for child in node.children if child.data is not None and child.data.ref == step), None)
            if match is None:
                break
            node = match
        self._tree_lines  # noqa: B018 - rebuilds line numbers now, so the cursor lands on the right line
        if self.cursor_node is node and node.data is not None and _hashable(node.data.ref):  # no highlight follows
            self._following.pop(node.data.ref, None)
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
        return node.data is not None and node.data.ref == ref


def _hashable(ref: Any) -> bool:
    try:
        hash(ref)
    except TypeError:
        return False
    return True
