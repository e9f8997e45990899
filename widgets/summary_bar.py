"""The top line: file, format and the handful of numbers that say what this file is."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from explorer.document import Document
from explorer.errors import count_by_severity
from explorer.formatting import plural


class SummaryBar(Static):
    DEFAULT_CSS = """
    SummaryBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def show_loading(self, name: str) -> None:
        self.update(Text.assemble(("ir-explorer ", "bold"), (name, "bold cyan"), ("  loading…", "dim")))

    def show_document(self, document: Document) -> None:
        s = document.summary
        parts: list[tuple[str, str] | str] = [
            (document.meta.source.name, "bold cyan"),
            (f" {document.meta.format}", "magenta"),
        ]
        said = document.companions.said()
        if said:  # which pipeline files were found beside the schedule, and joined (✓) or refused (✗)
            parts.append((f" │ {said}", "cyan"))
        if document.headline:
            parts.append(f" │ {document.headline} │")
        else:  # model formats: their summary's counts, in the loader's order
            counts_text = " · ".join(
                f"{value:,} {key.replace('_', ' ')}"
                for key, value in s.items()
                if isinstance(value, int) and not isinstance(value, bool)
            )
            parts.append(f" │ {counts_text} │" if counts_text else " │")
        counts = count_by_severity(document.problems)
        mark = "✗" if counts["error"] else "✓"  # no red cross beside zero errors
        parts.append((f" {mark} {plural(counts['error'], 'error')}", "bold red" if counts["error"] else "green"))
        parts.append((f" ⚠ {plural(counts['warning'], 'warning')}", "yellow" if counts["warning"] else "green"))
        self.update(Text.assemble(*parts))

    def show_error(self, name: str) -> None:
        self.update(Text.assemble(("ir-explorer ", "bold"), (name, "bold cyan"), ("  cannot be opened", "bold red")))
