"""Reviews in the app: bookmarks saved beside the input (never in it), reopened with --bookmarks; the palette.
(The browser mode is tested in test_serve.py.)"""

from __future__ import annotations

import json
import shutil

from explorer.bookmarks import load_bookmarks, sidecar_path
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from widgets.app import make_app
from widgets.messages import RevealRef


async def test_bookmark_a_tensor_and_walk_back_to_it(tmp_path):
    source = tmp_path / "views_ark_model.json"
    shutil.copy(SAMPLE_DATA / "views_ark_model.json", source)
    before = source.read_bytes()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.post_message(RevealRef(("tensor-id", 10)))
        await pilot.pause()
        await pilot.press("4", "b")  # in the layout view: the bookmark remembers the view
        from widgets.review_screens import PromptScreen

        for _ in range(200):  # the note's prompt is up (a loaded machine takes a few frames)
            if isinstance(app.screen, PromptScreen):
                break
            await pilot.pause(0.02)
        await pilot.press(*"window overlaps q and k", "enter")
        await pilot.pause()
    saved = load_bookmarks(sidecar_path(source))
    assert [(b.ref, b.view, b.note) for b in saved] == [(("tensor-id", 10), "layout", "window overlaps q and k")]
    assert source.read_bytes() == before and json.loads(sidecar_path(source).read_text())["file"] == source.name

    app = make_app(source, bookmarks=sidecar_path(source))  # a reviewer opens the same points
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("B")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.query_one("#tree").cursor_node.data.ref == ("tensor-id", 10)
        assert app.query_one("#tabs").active == "tab-layout" and app.layout.tensor_id == 10


async def test_palette_offers_exports_screenshot_bookmarks_and_diff():
    app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {
            "Export HTML report",
            "Export Chrome trace",
            "Screenshot",
            "Bookmark this item",
            "Bookmarks",
            "Diff with another file",
        } <= titles


async def test_diff_screen_shows_the_same_as_the_command():
    from textual.widgets import Input, OptionList

    from explorer.api import open_document
    from explorer.diff import change_lines, diff_documents, summary_lines
    from widgets.doc_tree import DocumentTree
    from widgets.problems import ProblemsTable
    from widgets.review_screens import DiffScreen

    first, second = SAMPLE_DATA / "clean_2x2_stschedule.json", SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    app = make_app(first)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_diff()
        await pilot.pause()
        app.screen.query_one(Input).value = str(second)  # as typed: the prompt's text, then Enter
        await pilot.press("enter")
        for _ in range(200):
            if isinstance(app.screen, DiffScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, DiffScreen)
        a, b = open_document(first), open_document(second)
        a.run_deep_checks(), b.run_deep_checks()
        result = diff_documents(a, b)
        assert app.screen.summary == summary_lines(result) and app.screen.changes == change_lines(result)
        # Enter on the extra L2 tensor (a change only the second file has) opens that file at its workload
        index = next(i for i, line in enumerate(app.screen.changes) if line.startswith("l2-placement-added"))
        app.screen.query_one(OptionList).highlighted = index
        await pilot.press("enter")
        for _ in range(200):
            if (
                app.path == second
                and app.views_ready
                and app.query_one(DocumentTree).cursor_node.data.ref[0] == "workload"
            ):
                break
            await pilot.pause(0.02)
        s = app.document.schedule
        assert app.path == second and app.document.meta.source == second
        assert app.query_one(DocumentTree).cursor_node.data.ref == ("workload", s.row_of(1, 3))
        assert app.query_one(ProblemsTable).problems  # the second file's problems are listed
        app.action_back()  # the palette's "Back to the previous file"
        await pilot.pause()
        assert app.path == first and not app.query_one(ProblemsTable).problems
        # o on a change opens it in the other file: a workload of the first file, from the second
        app.switch_document(b)
        app.previous_document = a
        app.action_diff()
        await pilot.pause()
        app.screen.query_one(Input).value = str(first)
        await pilot.press("enter")
        for _ in range(200):
            if isinstance(app.screen, DiffScreen):
                break
            await pilot.pause(0.02)
        index = next(i for i, line in enumerate(app.screen.changes) if line.startswith("transfer-removed"))
        app.screen.query_one(OptionList).highlighted = index
        await pilot.press("o")
        for _ in range(200):
            if app.path == first and app.views_ready:
                break
            await pilot.pause(0.02)
        assert app.path == first


async def test_palette_export_writes_the_report_beside_the_input(tmp_path):
    source = tmp_path / "two_modules_mlf.tar"
    shutil.copy(SAMPLE_DATA / "two_modules_mlf.tar", source)
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_export_report()
        await pilot.pause()
        await pilot.press("enter")  # the default: beside the input
        target = tmp_path / "two_modules_mlf.tar.report.html"
        for _ in range(300):
            if target.exists() and target.stat().st_size > 1000:
                break
            await pilot.pause(0.02)
        await app.workers.wait_for_complete()
        assert "plotly-graph-div" in target.read_text()


async def test_bookmarks_carry_their_author_and_an_unwritable_sidecar_asks_for_a_path(tmp_path):
    from explorer.bookmarks import load
    from widgets.review_screens import BookmarksScreen, PromptScreen

    source = tmp_path / "views_ark_model.json"
    shutil.copy(SAMPLE_DATA / "views_ark_model.json", source)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    elsewhere = tmp_path / "elsewhere.bookmarks.json"
    app = make_app(source, bookmarks=blocker / "notes.json", author="ana")
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("b", *"first", "enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen) and "cannot save bookmarks" in app.screen.question
        app.screen.query_one("#prompt-input").value = str(elsewhere)
        await pilot.press("enter")
        await pilot.pause()
        saved = load(elsewhere).bookmarks
        assert [(b.note, b.author) for b in saved] == [("first", "ana")] and saved[0].id and saved[0].created
        assert app.bookmarks_path == elsewhere and blocker.read_text() == "x"
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, BookmarksScreen)
        await pilot.press("delete")  # deleting is explicit, by id
        await pilot.pause()
        assert load(elsewhere).bookmarks == []


async def test_150000_bookmarks_list_at_once_and_quit_at_once(tmp_path):
    """Issue #72: listing 300,000 bookmarks blocked the UI for 18 s (`q` answered after 11 s). The list opens at
    once with what was read at start-up, is filled anew when the read ends, and quitting stops a read (half as
    many here: the suite's time)."""
    from dataclasses import asdict

    from explorer.bookmarks import new_bookmark
    from widgets.review_screens import MAX_LISTED, BookmarksScreen

    source = tmp_path / "clean_2x2_stschedule.json"
    shutil.copy(SAMPLE_DATA / "clean_2x2_stschedule.json", source)
    entries = [asdict(new_bookmark(("workload", k % 48), "tree", f"note {k}", f"w {k}", "me")) for k in range(150_000)]
    sidecar_path(source).write_text(json.dumps({"schema_version": 2, "bookmarks": entries}))
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_bookmarks()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BookmarksScreen)  # at once, before the sidecar is read again
        option_list = screen.query_one("#bookmark-list")
        for _ in range(1500):  # a hang guard: the read takes a second or two
            if option_list.option_count == MAX_LISTED + 1:
                break
            await pilot.pause(0.02)
        assert option_list.option_count == MAX_LISTED + 1 and len(screen.bookmarks) == 150_000
        app.action_bookmarks()  # listed again: a read under way when the app quits is stopped
        await pilot.pause()
        await app.action_quit()
