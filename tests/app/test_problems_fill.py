"""A long problems list is drawn with its first lines at once and the rest after each paint, and a jump to a line
still to come adds the lines up to it first."""

from __future__ import annotations

from textual.app import App, ComposeResult

from explorer.errors import Problem
from widgets import problems as problems_module
from widgets.problems import FIRST_ROWS, ProblemsTable


class _Panel(App):
    def compose(self) -> ComposeResult:
        yield ProblemsTable()


def _many(count: int) -> list[Problem]:
    # one code per core: each problem is its own group, so each is one line
    return [
        Problem("error", "l2-overlap", f"tensor {k} overlaps", f'$["{k}"][0]', {"core": k, "workload_id": 0})
        for k in range(count)
    ]


async def test_the_first_lines_come_at_once_and_the_rest_after_paints():
    app = _Panel()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(ProblemsTable)
        await pilot.pause()
        table.show_problems(_many(300))
        assert len(table.lines) == 300 and table.row_count == FIRST_ROWS
        assert "300 errors" in table.border_title  # the title counts them all from the start
        for _ in range(100):
            if table.row_count == 300:
                break
            await pilot.pause(0.01)
        assert table.row_count == 300
        cells = [str(table.get_row_at(k)[-2]) for k in (0, FIRST_ROWS, 299)]
        assert cells == ["tensor 0 overlaps", f"tensor {FIRST_ROWS} overlaps", "tensor 299 overlaps"]


async def test_stepping_to_a_group_not_drawn_yet_draws_up_to_it(monkeypatch):
    monkeypatch.setattr(problems_module, "ROW_BATCH", 1)  # the rest would come one line per paint
    app = _Panel()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(ProblemsTable)
        await pilot.pause()
        table.show_problems(_many(300))
        first, _ = table.step(-1)  # the last group, far past the lines drawn so far
        assert table.cursor_row == 299 and table.row_count >= 300
        assert first.message == "tensor 299 overlaps"


async def test_filtering_again_drops_the_lines_still_to_come():
    app = _Panel()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(ProblemsTable)
        await pilot.pause()
        table.show_problems(_many(300))
        table.set_text_filter("tensor 299")
        for _ in range(5):
            await pilot.pause(0.01)
        assert len(table.lines) == 1 and table.row_count == 1
