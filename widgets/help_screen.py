"""F1 / ?: every key the app understands, grouped by where it works."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

# (where, key, what) for keys that come from Textual's own widgets and so are not in our BINDINGS.
BUILTIN_KEYS = [
    ("Tree", "↑ ↓ / PgUp PgDn / Home End", "move the cursor"),
    ("Tree", "Enter / Space", "open or close the node under the cursor"),
    ("Tree", "Shift+← / Shift+→", "go to the parent / open the node"),
    ("Problems", "↑ ↓", "move between problems"),
    ("Problems", "Enter", "jump to the item the problem points at"),
    ("Everywhere", "Tab / Shift+Tab", "move the focus between panels"),
    ("Everywhere", "Ctrl+P", "command palette: every command by name"),
    ("Everywhere", "mouse", "click to select, wheel to scroll"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 100%; height: auto; max-height: 90%; border: round $accent;
                                  background: $surface; padding: 1 2; }
    Screen.-narrow HelpScreen > VerticalScroll { padding: 0 1; }
    """

    def __init__(self, app_bindings: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.app_bindings = app_bindings

    def compose(self) -> ComposeResult:
        table = Table(title="ir-explorer keys", show_edge=False, header_style="bold", title_style="bold")
        # at 80 columns the box fits the screen: the key column folds its long entries, the text wraps
        table.add_column("where", style="dim", no_wrap=True)
        table.add_column("key", style="bold cyan", max_width=16, overflow="fold")
        table.add_column("what", ratio=1)
        for where, key, what in self.app_bindings + BUILTIN_KEYS:
            table.add_row(where, key, what)
        with VerticalScroll():
            yield Static(table)
            yield Static("\nEscape closes this screen.", classes="dim")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
