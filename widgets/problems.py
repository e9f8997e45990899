"""The problems list: one row per problem, errors first; enter jumps to what it points at."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from explorer.errors import SEVERITY_RANK, Problem
from explorer.formatting import plural
from widgets.messages import ProblemChosen

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
MAX_ROWS = 20_000


class ProblemsTable(DataTable):
    DEFAULT_CSS = """
    ProblemsTable { border: round $primary-darken-2; border-title-color: $text-muted; height: 12; }
    ProblemsTable:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.problems: list[Problem] = []
        self.border_title = "Problems"
        self._stepped = False  # the first `n` goes to the first problem, not the second

    def on_mount(self) -> None:
        self.add_columns("severity", "code", "message", "location")

    def show_problems(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: SEVERITY_RANK.get(p.severity, 3))[:MAX_ROWS]
        self.clear()
        for problem in self.problems:
            self.add_row(
                Text(problem.severity, style=_STYLE.get(problem.severity, "")),
                problem.code,
                problem.message,
                Text(problem.location, style="dim"),
            )
        errors = sum(p.severity == "error" for p in problems)
        warnings = sum(p.severity == "warning" for p in problems)
        self.border_title = f"Problems · {plural(errors, 'error')} · {plural(warnings, 'warning')}"
        # sized to its rows, at most 12 lines; hidden when there is nothing to list
        self.styles.height = min(len(self.problems) + 4, 12)  # border, header and a horizontal scrollbar
        self.display = bool(self.problems)
        if len(problems) > MAX_ROWS:
            self.border_title += f" (first {MAX_ROWS} shown)"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.problems):
            self.post_message(ProblemChosen(self.problems[event.cursor_row]))

    def step(self, delta: int) -> Problem | None:
        """Move the cursor to the next/previous problem and return it."""
        if not self.problems:
            return None
        row = (self.cursor_row + delta) % len(self.problems) if self._stepped else (0 if delta > 0 else -1)
        row %= len(self.problems)
        self._stepped = True
        self.move_cursor(row=row)
        return self.problems[row]
