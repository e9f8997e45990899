"""The palette's Query (issue #58): a canned query's rows in the panel, Enter on a row goes to its workload in
every view, a SQL error is one line in the panel, and the palette lists the canned queries."""

from __future__ import annotations

import time

import pytest
from textual.widgets import DataTable, Input, Label

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.doc_tree import DocumentTree
from widgets.query_screen import CANNED, QueryScreen

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


async def wait_rows(pilot, screen: QueryScreen) -> None:
    for _ in range(300):
        status = str(screen.query_one("#query-status", Label).render())
        if status and status != "running…":
            return
        await pilot.pause(0.02)


async def test_a_canned_query_lists_rows_and_enter_goes_to_the_workload():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        commands = [command.title for command in app.get_system_commands(app.screen)]
        assert "Query" in commands and all(f"Query: {name}" in commands for name, _, _ in CANNED)
        app.action_query(CANNED[0][2])  # the workloads that read the most from DRAM
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QueryScreen)
        await wait_rows(pilot, screen)
        assert screen.columns == ["core", "workload", "dram_bytes"] and screen.rows[0][2] == 2560
        core, workload = screen.workload_of(0)
        assert screen.query_one(DataTable).row_count == len(screen.rows)
        screen.query_one(DataTable).focus()
        await pilot.press("enter")
        for _ in range(200):
            if not isinstance(app.screen, QueryScreen):
                break
            await pilot.pause(0.02)
        row = app.document.scheduled().row_of(core, workload)
        for _ in range(100):
            if app.query_one(DocumentTree).cursor_node.data.ref == ("workload", row):
                break
            await pilot.pause(0.02)
        assert app.query_one(DocumentTree).cursor_node.data.ref == ("workload", row)


async def test_a_sql_error_is_one_line_in_the_panel():
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_query()
        await pilot.pause()
        screen = app.screen
        screen.query_one(Input).value = "select nonsense from workloads"
        await pilot.press("enter")
        await wait_rows(pilot, screen)
        status = str(screen.query_one("#query-status", Label).render())
        assert status.startswith("✗ Binder Error") and "\n" not in status
        await pilot.press("escape")
        assert not isinstance(app.screen, QueryScreen)


async def test_b_on_a_row_bookmarks_its_workload(tmp_path):
    import shutil

    from explorer.bookmarks import load_bookmarks

    path = tmp_path / PLANTED.name
    shutil.copy(PLANTED, path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_query(CANNED[0][2])
        await pilot.pause()
        screen = app.screen
        await wait_rows(pilot, screen)
        core, workload = screen.workload_of(0)
        screen.query_one(DataTable).focus()
        await pilot.press("b")
        for _ in range(100):
            if app.screen.query(Input) and not isinstance(app.screen, QueryScreen):
                break
            await pilot.pause(0.02)
        app.screen.query_one(Input).value = "reads the most from DRAM"
        await pilot.press("enter")
        for _ in range(200):
            if app.bookmarks:
                break
            await pilot.pause(0.02)
        row = app.document.scheduled().row_of(core, workload)
        saved = load_bookmarks(app.bookmarks_path)
        assert [(tuple(b.ref), b.note) for b in saved] == [(("workload", row), "reads the most from DRAM")]


LONG_SQL = "SELECT count(*) FROM range(1000000000000) -- workloads"  # hours, unless interrupted


def query_children() -> list[int]:
    """This process's child processes (a panel query runs in one)."""
    import pathlib

    found: list[int] = []
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            found += [int(pid) for pid in (task / "children").read_text().split()]
        except FileNotFoundError:  # a thread that ended since the listing
            continue
    return found


async def wait_children_gone(pilot) -> None:
    for _ in range(500):  # a hang guard, not a timing target (make bench times it)
        if not query_children():
            return
        await pilot.pause(0.02)


async def wait_running(pilot, screen: QueryScreen) -> None:
    for _ in range(500):
        if query_children() and screen.running is not None:
            return
        await pilot.pause(0.02)


async def long_query_running(app, pilot) -> QueryScreen:
    """The panel open on LONG_SQL, its query running."""
    await wait_loaded(pilot)
    app.action_query(LONG_SQL)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, QueryScreen)
    await wait_running(pilot, screen)
    assert screen.running is not None and query_children()
    return screen


@pytest.fixture
def scratch_here(tmp_path, monkeypatch):
    """Every query session's scratch folder made in tmp_path (to see that none is left)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    return tmp_path


async def test_escape_and_a_new_run_stop_the_query_running(scratch_here):
    """Issue #72: Escape or a second Enter left the old query running in its thread with its own 2 GiB."""
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        screen = await long_query_running(app, pilot)
        screen.run_sql(CANNED[2][2])  # a new run: the long one is interrupted, one query at a time
        await wait_rows(pilot, screen)
        assert screen.rows and screen.columns[0] == "core"
        await wait_children_gone(pilot)
        assert not query_children()
        screen.run_sql(LONG_SQL)
        await wait_running(pilot, screen)
        await pilot.press("escape")
        await wait_children_gone(pilot)
        assert not query_children() and not isinstance(app.screen, QueryScreen)
    assert list(scratch_here.iterdir()) == []  # every session's scratch removed


async def test_quitting_stops_the_query_running(scratch_here):
    """`q` gave the terminal back while the query ran on and the process did not end."""
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await long_query_running(app, pilot)
        await app.action_quit()
    for _ in range(500):  # the query's thread, then the worker's cleanup after it
        if not query_children() and not list(scratch_here.iterdir()):
            break
        time.sleep(0.02)
    assert not query_children()
    assert list(scratch_here.iterdir()) == []


async def test_sigterm_ends_the_app_and_stops_the_query_running(scratch_here):
    """A TUI ended by SIGTERM (serve closing a tab, `kill`) died at once and left its panel query's scratch."""
    import os
    import signal

    from widgets.app import stopping_on_signals

    before = signal.getsignal(signal.SIGTERM)
    app = make_app(PLANTED)
    with stopping_on_signals(app):
        async with app.run_test(size=SIZE) as pilot:
            await long_query_running(app, pilot)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(500):
                if not app.is_running:
                    break
                await pilot.pause(0.02)
    assert signal.getsignal(signal.SIGTERM) == before  # given back
    for _ in range(500):
        if not query_children() and not list(scratch_here.iterdir()):
            break
        time.sleep(0.02)
    assert not query_children() and list(scratch_here.iterdir()) == []
