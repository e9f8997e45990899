"""Ctrl+F: find items by name or id; Enter jumps to the chosen one."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from explorer.document import Document


class SearchScreen(ModalScreen[Any]):
    BINDINGS = [Binding("escape", "dismiss", "Close"), Binding("down", "focus_results", "Results", show=False)]
    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > Vertical { width: 100; height: auto; max-height: 80%; margin-top: 3; border: round $accent;
                              background: $surface; padding: 0 1; }
    SearchScreen OptionList { height: auto; max-height: 30; }
    """

    def __init__(self, document: Document) -> None:
        super().__init__()
        self.document = document
        self.refs: list[Any] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Search by {self.document.vocabulary.search_hint}")
            yield Input(placeholder="e.g. Conv_1 or 17", id="search-input")
            yield OptionList(id="search-results")

    @on(Input.Changed, "#search-input")
    def refresh_results(self, event: Input.Changed) -> None:
        results = self.document.search(event.value)
        self.refs = [ref for _, ref in results]
        options = self.query_one("#search-results", OptionList)
        options.clear_options()
        options.add_options([Option(Text(label)) for label, _ in results] or [Option("no match", disabled=True)])

    @on(Input.Submitted, "#search-input")
    def choose_first(self) -> None:
        if self.refs:
            self.dismiss(self.refs[0])

    @on(OptionList.OptionSelected, "#search-results")
    def choose(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.refs):
            self.dismiss(self.refs[event.option_index])

    def action_focus_results(self) -> None:
        self.query_one("#search-results", OptionList).focus()

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(result)
