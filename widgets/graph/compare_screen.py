"""Two graphs side by side (`ir-explorer A --compare B`, the palette's "Compare graphs side by side"): a graph
pane per file, coloured by what the comparison found; selecting a box in one pane selects and shows its match in
the other; `n`/`N` walk the changes; the line at the bottom says what the selected box matched and what
changed. Escape closes it. The panes are the graph view itself, showing annotated copies of the two graphs."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from explorer.diff import setting_changes
from explorer.graph.compare import Comparison
from explorer.models.graph import ROOT
from widgets.graph.view import GraphView
from widgets.key_footer import KeyFooter
from widgets.messages import Selected


class CompareScreen(Screen):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("n", "change(1)", "Next change"),
        Binding("N", "change(-1)", "Prev change"),
    ]
    # One grid, every part a direct child of the screen: a pane inside a container was sometimes not mounted yet
    # when the screen's on_mount ran (NoMatches '#compare-a', one run in three at 80x24)
    DEFAULT_CSS = """
    CompareScreen { layout: grid; grid-size: 2; grid-rows: 1 1fr 1; grid-columns: 1fr 1fr; }
    CompareScreen #compare-summary { column-span: 2; height: 1; background: $panel; padding: 0 1; }
    CompareScreen #compare-about { column-span: 2; height: 1; background: $panel; padding: 0 1; color: $text-muted; }
    CompareScreen.-settings { grid-rows: 1 1 1fr 1; }
    CompareScreen #compare-settings { column-span: 2; height: 1; background: $panel; padding: 0 1; color: $warning; }
    CompareScreen GraphView { height: 1fr; }
    """

    def __init__(self, comparison: Comparison, documents: tuple[Any, Any]) -> None:
        super().__init__()
        self.comparison = comparison
        self.documents = documents
        self.change_index = -1

    def compose(self) -> ComposeResult:
        a, b = self.documents
        settings = setting_changes(a, b)  # two plans of one model: the same graph, other warps and tiles
        said = f" · {len(settings):,} settings differ" if settings else ""
        # the counts first: what an 80-column terminal must still show (the panes' titles name the files)
        yield Static(Text(f"{self.comparison.summary()}{said} · A {a.meta.source.name}  ⇄  B {b.meta.source.name}"),
                     id="compare-summary")  # fmt: skip
        self.set_class(bool(settings), "-settings")
        if settings:
            shown = "; ".join(f"{c['where']} {c['a']} → {c['b']}" for c in settings[:3])
            more = f"; and {len(settings) - 3:,} more (the palette's diff lists all)" if len(settings) > 3 else ""
            yield Static(Text(f"settings: {shown}{more}"), id="compare-settings")
        yield GraphView(id="compare-a")
        yield GraphView(id="compare-b")
        yield Static("n / N: next / previous change · Tab: the other pane · Escape: close", id="compare-about")
        yield KeyFooter()

    def on_mount(self) -> None:
        pane_a, pane_b = self.pane("a"), self.pane("b")
        pane_a.border_title = Text(f"A {self.documents[0].meta.source.name}")
        pane_b.border_title = Text(f"B {self.documents[1].meta.source.name}")
        pane_a.show_model(self.documents[0], self.comparison.a, "diff")
        pane_b.show_model(self.documents[1], self.comparison.b, "diff")
        pane_a.focus()

    def pane(self, side: str) -> GraphView:
        return self.query_one(f"#compare-{side}", GraphView)

    @property
    def ready(self) -> bool:
        """Both panes composed and laid out (a screen just pushed has not composed its panes yet)."""
        panes = list(self.query(GraphView))
        return len(panes) == 2 and all(pane.ready for pane in panes)

    def on_selected(self, message: Selected) -> None:
        """A box chosen in one pane: its match chosen and shown in the other (without echoing back)."""
        message.stop()
        side = "a" if message.view is self.pane("a") else "b" if message.view is self.pane("b") else ""
        if not side:
            return
        here = self.pane(side)
        key = here.selected_key
        if key is None or key[0] != 0:
            return
        self.follow(side, key[1])

    def follow(self, side: str, node: int) -> None:
        match = self.comparison.match
        other_side = "b" if side == "a" else "a"
        other = int(match.a_to_b[node] if side == "a" else match.b_to_a[node])
        if other >= 0:
            self.pane(other_side).reveal_node(other, ROOT, announce=False)
        self.query_one("#compare-about", Static).update(Text(self.comparison.describe(side, node)))

    def action_change(self, step: int) -> None:
        changes = self.comparison.changes
        if not changes:
            self.app.notify("no changes: the two graphs match")
            return
        self.change_index = (self.change_index + step) % len(changes)
        side, node = changes[self.change_index]
        self.pane(side).reveal_node(node, ROOT, announce=False)
        self.pane(side).focus()
        self.follow(side, node)

    def action_close(self) -> None:
        self.dismiss()
