"""The palette's "Query" (issue #58): SQL over the open schedule's tables (explorer.schedule.query), run in a
child process of its own (explorer.schedule.query_child: the app's memory never holds what a query builds, and
stopping it kills it); Enter on a result row that names a core and a workload jumps there (where `b` bookmarks
it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label

from explorer.document import Document
from explorer.schedule.query import tables_named
from explorer.schedule.tables import TABLES

if TYPE_CHECKING:
    from explorer.schedule.query_child import ForkedQuery

SHOWN_ROWS = 1000  # rows the panel shows; `ir-explorer query` gives them all
# the palette's canned queries: (its name, what it says, the SQL)
CANNED = (
    ("top DRAM readers", "the workloads that read the most from DRAM",
     "SELECT dst_core AS core, dst_workload AS workload, sum(bytes) AS dram_bytes FROM transfers WHERE from_dram "
     "GROUP BY 1, 2 ORDER BY dram_bytes DESC LIMIT 50"),
    ("largest incidents", "the overlap incidents by bytes overlapping",
     "SELECT code, core, tensor, first_workload AS workload, bytes, shortfall_bytes FROM incidents "
     "ORDER BY bytes DESC LIMIT 50"),
    ("busiest cores", "each lane's workloads and cycles, the busiest first",
     'SELECT core, count(*) AS workloads, sum(cycles) AS cycles, max("end") AS last_end FROM workloads '
     "GROUP BY core ORDER BY cycles DESC"),
)  # fmt: skip


class QueryScreen(ModalScreen[tuple[str, tuple[int, int]] | None]):
    """A query, its rows; Enter in the query runs it, Enter on a row goes to its workload ("go"), `b` on a row
    bookmarks it ("bookmark"), Escape closes."""

    BINDINGS = [Binding("escape", "close", "Close")]  # `b` is the app's key: it asks this screen (bookmark_row)
    DEFAULT_CSS = """
    QueryScreen { align: center middle; }
    QueryScreen > Vertical { width: 95%; height: 85%; border: round $accent; background: $panel; padding: 0 1; }
    QueryScreen DataTable { height: 1fr; }
    """

    def __init__(self, document: Document, sql: str = "") -> None:
        super().__init__()
        self.document, self.sql = document, sql
        self.columns: list[str] = []
        self.rows: list[tuple[Any, ...]] = []
        self.running: ForkedQuery | None = None  # the one query of this panel that runs now

    def stop_query(self) -> None:
        """End the query running (a new run, Escape, the app quitting): its process stops at once."""
        running, self.running = self.running, None
        if running is not None:
            running.stop()

    def on_unmount(self) -> None:
        self.stop_query()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"SQL over {', '.join(TABLES)} (Enter runs; on a row with core and workload: Enter "
                             "goes there, b bookmarks it)"))  # fmt: skip
            yield Input(value=self.sql, id="query-sql")
            yield Label(Text(""), id="query-status")
            yield DataTable(id="query-rows", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#query-sql", Input).focus()
        if self.sql:
            self.run_sql(self.sql)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.run_sql(event.value)

    def run_sql(self, sql: str) -> None:
        """One query at a time: the one running is interrupted before this one starts."""
        from explorer.schedule.query_child import ForkedQuery

        self.stop_query()
        self._status("running…")
        if not tables_named(sql):
            self._status("the query names none of the tables")
            return
        self.running = ForkedQuery([(str(self.document.meta.source), self.document)], sql, SHOWN_ROWS)
        self._run(self.running)

    @work(thread=True, group="query", description="query")
    def _run(self, query: ForkedQuery) -> None:
        from explorer.schedule.query import Interrupted, QueryError

        try:
            answer = query.answer()
        except Interrupted:
            return  # stopped by a new run or the panel closing: nothing to show
        except QueryError as error:
            self._said(query, f"✗ {error}")
            return
        if self.running is not query:
            return
        self.running = None
        more = f" (the first {len(answer.rows):,}; `ir-explorer query` gives them all)" if answer.capped else ""
        counted = f"{len(answer.rows):,} row{'' if len(answer.rows) == 1 else 's'}"
        self.app.call_from_thread(self._show, answer.columns, answer.rows, f"{counted}{more}")

    def _said(self, query: ForkedQuery, text: str) -> None:
        """The status from a query's thread, unless a newer query or the panel closing replaced it."""
        if self.running is query:
            self.running = None
            self.app.call_from_thread(self._status, text)

    def _status(self, text: str) -> None:
        self.query_one("#query-status", Label).update(Text(text))

    def _show(self, columns: list[str], rows: list[tuple[Any, ...]], status: str) -> None:
        self.columns, self.rows = columns, rows
        table = self.query_one("#query-rows", DataTable)
        table.clear(columns=True)
        table.add_columns(*columns)
        table.add_rows([[_cell(value) for value in row] for row in rows])
        self._status(status)
        if rows:
            table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self._choose("go", event.cursor_row)

    def bookmark_row(self) -> None:
        self._choose("bookmark", self.query_one("#query-rows", DataTable).cursor_row)

    def _choose(self, action: str, index: int) -> None:
        target = self.workload_of(index)
        if target is None:
            self._status("this row names no core and workload")
        else:
            self.dismiss((action, target))

    def workload_of(self, index: int) -> tuple[int, int] | None:
        """The (core, workload id) a result row names, when its columns have both."""
        if not (0 <= index < len(self.rows)) or "core" not in self.columns or "workload" not in self.columns:
            return None
        core, workload = self.rows[index][self.columns.index("core")], self.rows[index][self.columns.index("workload")]
        return (int(core), int(workload)) if core is not None and workload is not None else None

    def action_close(self) -> None:
        self.stop_query()
        self.dismiss(None)


def _cell(value: Any) -> Text:
    if value is None:
        return Text("NULL", style="dim")
    if isinstance(value, float) and value.is_integer():
        return Text(str(int(value)))
    return Text(str(value))
