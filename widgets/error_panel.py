"""A load failure shown in the app, in plain words, instead of a crash."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from explorer.errors import LoadError


class ErrorPanel(Static):
    DEFAULT_CSS = """
    ErrorPanel { border: round $error; padding: 1 2; margin: 2 4; height: auto; }
    """

    def show_error(self, error: LoadError) -> None:
        self.update(
            Text.assemble(
                ("This file cannot be opened.\n\n", "bold red"),
                ("file      ", "dim"),
                (error.path + "\n", "bold"),
                ("where     ", "dim"),
                ((error.location or "—") + "\n", ""),
                ("problem   ", "dim"),
                (error.message + "\n\n", ""),
                ("Press q to quit.", "dim"),
            )
        )
