"""Shown while the worker loads: what it is doing and how far it got."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar


class LoadingPanel(Vertical):
    DEFAULT_CSS = """
    LoadingPanel { align: center middle; }
    LoadingPanel > Label { width: auto; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label("Opening…", id="loading-stage")
        yield ProgressBar(total=100, show_eta=False, id="loading-bar")

    shown = 0.0  # the bar's fraction: stages report their own from 0, the bar never goes back (26% → 0% → 20%)

    def set_progress(self, fraction: float, stage: str) -> None:
        self.query_one("#loading-stage", Label).update(Text(stage))
        self.shown = max(self.shown, fraction)
        self.query_one("#loading-bar", ProgressBar).update(progress=round(self.shown * 100, 1))
