"""The top line: file, format and the handful of numbers that say what this file is."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from explorer.api import AFTER_LOADING
from explorer.companions import companions_of
from explorer.document import Document
from explorer.errors import count_by_severity
from explorer.formatting import plural, shorten_middle
from widgets.text_lines import without_last_fields


class SummaryBar(Static):
    DEFAULT_CSS = """
    SummaryBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def show_loading(self, name: str) -> None:
        self.update(Text.assemble(("ir-explorer ", "bold"), (name, "bold cyan"), ("  loading…", "dim")))

    _document: Document | None = None
    _progress: tuple[float, str] = (0.0, "")  # how far the rest of a partly shown file has loaded

    def show_progress(self, fraction: float, stage: str) -> None:
        self._progress = (fraction, stage)
        if self._document is not None:
            self.show_document(self._document)

    def on_resize(self) -> None:
        if self._document is not None:
            self.show_document(self._document)

    def show_document(self, document: Document) -> None:
        self._document = document
        s = document.summary
        counts = count_by_severity(document.problems)
        mark = "✗" if counts["error"] else "✓"  # no red cross beside zero errors
        # what matters most first, so a narrow terminal cuts the least useful end: the file, its problems, ...
        parts: list[tuple[str, str] | str] = [
            (document.meta.source.name, "bold cyan"),
            (f" {document.meta.format} │", "magenta"),
            (f" {mark} {plural(counts['error'], 'error')}", "bold red" if counts["error"] else "green"),
            (f" ⚠ {plural(counts['warning'], 'warning')}", "yellow" if counts["warning"] else "green"),
        ]
        if document.partial:  # a first part while the rest loads: no problem counts yet, how far the rest is
            fraction, stage = self._progress
            # how far first: a narrow terminal cuts the end of the bar
            if stage in AFTER_LOADING:  # read and decoded: the checks run (their fraction is not the load's)
                so_far = f"loaded, {stage}"
            else:
                so_far = f"{fraction:.0%} loaded ({stage})" if stage else "loading"
            parts[2:] = [(f" ◐ {so_far} · showing {document.partial}", "bold yellow")]
        companions = companions_of(document)
        companions_at = len(parts)  # which pipeline files were found beside the schedule, joined (✓) or not (✗)
        if companions.said():
            parts.append((f" │ {companions.said()}", "cyan"))
        if document.headline:
            parts.append(f" │ {document.headline}")
        else:  # model formats: their summary's counts, in the loader's order
            counts_text = " · ".join(
                f"{value:,} {key.replace('_', ' ')}"
                for key, value in s.items()
                if isinstance(value, int) and not isinstance(value, bool)
            )
            parts.append(f" │ {counts_text}" if counts_text else "")
        width = self.size.width - 2  # the padding
        if width > 0:
            name = document.meta.source.name

            def length(fixed_only: bool = False) -> int:  # fixed: the fields that cannot be cut by whole words
                return sum(len(p[0]) if isinstance(p, tuple) else 0 if fixed_only else len(p) for p in parts)

            # what cannot be cut by whole fields (all but the headline) must fit: at 80 columns the companions say
            # themselves in short words and no problems says so in fewer cells, rather than being cut off
            if length(fixed_only=True) + 1 > width and companions.said():
                parts[companions_at] = (f" │ {companions.said(short=True)}", "cyan")
            no_problems = counts["error"] == counts["warning"] == 0 and not document.partial
            if length(fixed_only=True) + 1 > width and no_problems:
                parts[2:4] = [(" ✓ no problems", "green")]
            # too long: a long file name gives way first, from its middle, down to 20 characters
            total = length()
            if total > width:
                parts[0] = (shorten_middle(name, max(len(name) - (total - width), 20)), "bold cyan")
                total = length()
            if total > width and isinstance(parts[-1], str):  # then whole fields of the end, never half a number
                parts[-1] = without_last_fields(parts[-1], len(parts[-1]) - (total - width), " │ | · ")
        self.update(Text.assemble(*parts), layout=False)  # one line whatever it says: no relayout of the screen

    def show_error(self, name: str) -> None:
        self.update(Text.assemble(("ir-explorer ", "bold"), (name, "bold cyan"), ("  cannot be opened", "bold red")))
