"""The problems list: one line per incident or per code and core, errors first, each with its count; a group
opens on → (or space) to list its problems; enter jumps to what the line points at.

Filters narrow what is listed (s severity, c code, l core, / text, x clears) and the title says what is kept
and how much. Messages wrap inside their cell instead of being cut, so a narrow column still says what is
wrong; the location column appears when there is room for it. The grouping itself is
`explorer.problem_groups`: this widget only draws it and dispatches keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import DataTable

from explorer.errors import SEVERITY_RANK, Problem, from_added_file
from explorer.formatting import plural
from explorer.problem_groups import (
    ProblemFilter,
    ProblemGroup,
    cycle,
    filter_choices,
    group_problems,
)
from explorer.schedule.incidents import Incident
from widgets.messages import ProblemChosen

_divide_line: Callable[..., list[int]] | None
try:  # rich's line breaking, as Text.wrap uses it
    from rich._wrap import divide_line as _divide_line
except ImportError:  # moved in some rich release: wrapped_height wraps the whole text instead
    _divide_line = None

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_GLYPH = {"error": "✗", "warning": "⚠", "info": "·"}
MAX_MEMBERS = 500  # an opened group lists at most this many of its problems
MAX_LINES = 1000  # lines listed at once; the title says how many groups the filters can still reach
# Lines added to the table before it is drawn; the rest follow in batches after each paint. A big file's 1,000
# lines took 0.24 s to add (wrapping and measuring each), all of it before the whole file's first paint; in
# batches of 200 each batch held the keys back (a key pressed meanwhile waited for it): one of 50 is a frame's.
FIRST_ROWS = 40
ROW_BATCH = 50
WIDE = 90  # from this inner width on, the location gets its own column
MAX_HEIGHT = 14


class ProblemsTable(DataTable):
    BINDINGS = [
        Binding("right,space", "open_group(True)", "Open group", show=False),
        Binding("left", "open_group(False)", "Close group", show=False),
        Binding("s", "filter('severity', 1)", "Severity", show=False),
        Binding("c", "filter('code', 1)", "Code", show=False),
        Binding("l", "filter('core', 1)", "Core", show=False),
        Binding("slash", "filter_text", "Filter", show=False, key_display="/"),
        Binding("x", "clear_filter", "Clear filter", show=False),
    ]
    HELP_KEYS = [
        ("Problems", "→ / Space, ←",
         "open / close a group (an incident or one code on one {lane}) to list its problems"),
        ("Problems", "Enter", "jump to what the line points at (a group: its first problem)"),
        ("Problems", "s / c / l", "keep one severity / code / {lane} (each press the next one, then all again)"),
        ("Problems", "/ , x", "keep the problems whose text contains a word / clear every filter"),
    ]  # fmt: skip
    DEFAULT_CSS = """
    ProblemsTable {
        border: round $primary-darken-2; border-title-color: $text-muted;
        height: 12; max-height: 45%; overflow-x: hidden;
    }
    ProblemsTable:focus { border: round $accent; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.problems: list[Problem] = []  # every problem, errors first
        self.incidents: list[Incident] = []
        self.chosen = ProblemFilter()
        self.groups: list[ProblemGroup] = []  # what the filter keeps, grouped
        self.opened: set[tuple] = set()  # keys of the groups listing their problems
        self.lines: list[tuple[ProblemGroup, Problem | None]] = []  # per table row: its group, its problem
        self.border_title = "Problems"
        self._stepped = False  # the first `n` goes to the first group, not the second
        self._width = 0
        self.roles_pending = False  # the incidents' tensors are being named: their lines gain words soon
        self._text_width = 0
        self._wide = False
        self._added_height = 0  # lines of the terminal the rows added so far take
        self._drawing = 0  # which `_draw` the rows still to add belong to
        self._more_for = -1  # the `_draw` whose next batch is already asked for (one at a time)
        self._draw_pending = False  # a draw waited for the first size after being shown

    # ---- content --------------------------------------------------------------------------------------------
    def show_problems(
        self, problems: list[Problem], incidents: Sequence[Incident] = (), roles_pending: bool = False
    ) -> None:
        # the model's own first; a file the user added (per-node data) after them, apart
        self.problems = sorted(problems, key=lambda p: (from_added_file(p), SEVERITY_RANK.get(p.severity, 3)))
        self.incidents = list(incidents)
        self.roles_pending = roles_pending
        self.chosen = ProblemFilter()
        self.opened.clear()
        self.display = bool(self.problems)  # hidden when there is nothing to list: the details take the column
        self._regroup()

    def _regroup(self) -> None:
        self.groups = group_problems(self.problems, self.incidents, self.chosen)
        self._stepped = False
        self._fill()

    def _fill(self) -> None:
        self.lines = []
        shown = 0
        for group in self.groups:
            if len(self.lines) >= MAX_LINES:
                break
            shown += 1
            self.lines.append((group, None))
            if _key(group) in self.opened and len(group.problems) > 1:
                self.lines += [(group, problem) for problem in group.problems[:MAX_MEMBERS]]
        hidden = len(self.groups) - shown
        # a file with thousands of incidents lists the first ones (errors first); the filters reach the rest
        said = [f"{hidden:,} more groups: narrow with s c l /"] if hidden else []
        if self.roles_pending and self.incidents:
            said.insert(0, "naming tensors…")
        self.border_subtitle = " · ".join(said)
        self._draw()

    def roles_named(self) -> None:
        """The incidents' roles are named: their lines are written again, with them."""
        self.roles_pending = False
        if self.problems:
            self._fill()

    def _draw(self) -> None:
        if not self.size.width and self.display:  # just shown, not laid out yet: on_resize draws it at its width
            self._draw_pending = True
            return
        self._draw_pending = False
        cursor = self.cursor_row
        self.clear(columns=True)
        inner = max(self.size.width or self._width or 40, 20) - 2
        wide = inner >= WIDE
        code_width = min(max((len(g.code) for g in self.groups), default=4), 24) if wide else 0
        location_width = 24 if wide else 0
        text_width = max(inner - 3 - (code_width + 1 if wide else 0) - (location_width + 1 if wide else 0) - 2, 12)
        self.add_column("", width=1)
        if wide:
            self.add_column("code", width=code_width)
        self.add_column("problem", width=text_width)
        if wide:
            self.add_column("where", width=location_width)
        self._wide, self._text_width, self._added_height = wide, text_width, 0
        self._drawing += 1
        self._add_rows(FIRST_ROWS)
        everything = [p for g in self.groups for p in g.problems]
        counts = {s: sum(p.severity == s and not from_added_file(p) for p in everything) for s in ("error", "warning")}
        added = sum(from_added_file(p) for p in everything)
        if inner >= 60:
            title = f"Problems · {plural(counts['error'], 'error')} · {plural(counts['warning'], 'warning')}"
            title += f" · {plural(len(self.groups), 'group')}"
            title += f" · {added:,} in added files" if added else ""
        else:
            title = f"Problems ✗{counts['error']} ⚠{counts['warning']}" + (f" +{added} added" if added else "")
        if self.chosen.active:
            title += f" · only {self.chosen.said()} (x: all)"
        self.border_title = title
        if self.lines:
            self.show_row(min(max(cursor, 0), len(self.lines) - 1))

    def fit_height(self) -> None:
        """As tall as its rows (border and header included, at most MAX_HEIGHT), or the whole screen while
        maximised (`z`): the height set here is inline, which a stylesheet cannot override."""
        self.styles.height = "1fr" if self.has_class("-maximized") else min(self._added_height + 3, MAX_HEIGHT)

    def _add_rows(self, count: int) -> None:
        """The next `count` lines as table rows; the rest are added after the next paint."""
        start = self.row_count
        for group, problem in self.lines[start : start + count]:
            cells = self._cells(group, problem, self._wide)
            # the height from our own wrap: DataTable's auto height renders every row again (13 s for 9,000)
            height = wrapped_height(cells[2 if self._wide else 1], self._text_width, self.app.console)
            self.add_row(*cells, height=height)
            self._added_height += height
        self.fit_height()
        if self.row_count < len(self.lines) and self._more_for != self._drawing:
            self._more_for = self._drawing
            self.call_after_refresh(self._add_more, self._drawing)

    def _add_more(self, drawing: int) -> None:
        if drawing != self._drawing:  # drawn again since: that drawing adds its own rows
            return
        self._more_for = -1
        if self.row_count < len(self.lines):
            self._add_rows(ROW_BATCH)

    def show_row(self, row: int) -> None:
        """Put the cursor on line `row`, adding the rows up to it first if they are still to come."""
        if row >= self.row_count:
            self._add_rows(row + 1 - self.row_count)
        self.move_cursor(row=row)

    def _cells(self, group: ProblemGroup, problem: Problem | None, wide: bool) -> list[Any]:
        shown = problem or group.first
        severity = shown.severity
        glyph = Text(_GLYPH.get(severity, "·"), style=_STYLE.get(severity, ""))
        if problem is None:  # the group's line
            many = len(group.problems) > 1
            arrow = ("▾ " if _key(group) in self.opened else "▸ ") if many else ""
            text = Text(arrow, style="dim")
            if not wide:
                text.append(group.code + " ", style="bold")
            text.append(group.title if many or group.incident else shown.message)
            location = "" if many else shown.location
        else:  # one problem of an opened group, indented under it
            text = Text("   ")
            if not wide:
                text.append(problem.code + " ", style="bold")
            text.append(problem.message)
            location = problem.location
        cells: list[Any] = [glyph]
        if wide:
            cells.append(Text(shown.code if problem is None else problem.code, style="bold" if problem is None else ""))
        cells.append(text)
        if wide:
            cells.append(Text(location, style="dim", overflow="ellipsis", no_wrap=True))
        return cells

    def on_resize(self, event: events.Resize) -> None:
        # also at the same width: shown again after another file hid it (Back from a diff's other file)
        if event.size.width != self._width or self._draw_pending:
            self._width = event.size.width
            if self.problems:
                self._draw()

    # ---- keys -----------------------------------------------------------------------------------------------
    def action_open_group(self, open_: bool) -> None:
        if not self.lines:
            return
        group, _ = self.lines[self.cursor_row]
        key = _key(group)
        if open_ == (key in self.opened) or len(group.problems) < 2:
            return
        (self.opened.add if open_ else self.opened.discard)(key)
        row = next(i for i, (g, p) in enumerate(self.lines) if g is group and p is None)
        self._fill()
        self.show_row(row)

    def action_filter(self, what: str, step: int) -> None:
        severities, codes, cores = filter_choices(self.problems)
        options: dict[str, list[Any]] = {"severity": severities, "code": codes, "core": cores}
        choices = options[what]
        changed: dict[str, Any] = {what: cycle(choices, getattr(self.chosen, what), step)}
        self.chosen = replace(self.chosen, **changed)
        self._regroup()

    def action_filter_text(self) -> None:
        from widgets.review_screens import PromptScreen

        def keep(text: str | None) -> None:
            if text is not None:
                self.set_text_filter(text)

        question = "keep the problems whose code, message or location contains"
        self.app.push_screen(PromptScreen(question, self.chosen.text), keep)

    def set_text_filter(self, text: str) -> None:
        self.chosen = replace(self.chosen, text=text.strip())
        self._regroup()

    def action_clear_filter(self) -> None:
        self.chosen = ProblemFilter()
        self._regroup()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self.lines):
            group, problem = self.lines[event.cursor_row]
            self.post_message(ProblemChosen(problem or group.first, tuple(group.tensor_ids)))

    def step(self, delta: int) -> tuple[Problem, tuple[int, ...]] | None:
        """Move to the next/previous group (an incident, or one code on one core) and return its first problem
        and the tensors to highlight; None when nothing is listed."""
        heads = [i for i, (_, problem) in enumerate(self.lines) if problem is None]
        if not heads:
            return None
        here = max((i for i, h in enumerate(heads) if h <= self.cursor_row), default=0)
        index = (here + delta) % len(heads) if self._stepped else (0 if delta > 0 else len(heads) - 1)
        self._stepped = True
        self.show_row(heads[index])
        group = self.lines[heads[index]][0]
        return group.first, tuple(group.tensor_ids)


def wrapped_height(text: Text, width: int, console: Any) -> int:
    """How many lines `text` takes wrapped to `width` cells, as rich wraps it when the table draws it. A line of
    plain text is measured with rich's own line breaking alone: building the wrapped lines was half of the
    panel's fill for a big file's 1,000 lines."""
    plain = text.plain
    if _divide_line is None or "\n" in plain or "\t" in plain or (text.overflow or "fold") != "fold" or text.no_wrap:
        return len(text.wrap(console, width))
    return len(_divide_line(plain, width, fold=True)) + 1


def _key(group: ProblemGroup) -> tuple:
    if group.incident is not None:
        return ("incident", group.code, group.core, group.incident.introduced_by, group.incident.first_workload)
    return ("code", group.severity, group.code, group.core)
