"""Reviews in the app: bookmarks saved beside the input (never in it), reopened with --bookmarks; the palette;
the browser mode fetched over loopback."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from explorer.bookmarks import load_bookmarks, sidecar_path
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import ROOT, SAMPLE_DATA
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
        await pilot.pause()
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_answers_over_loopback():
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer",
            "serve",
            str(SAMPLE_DATA / "clean_2x2_stschedule.json"),
            "--port",
            str(port),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        page = ""
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    page = response.read().decode()
                    break
            except OSError:
                time.sleep(0.1)
        assert "ir-explorer" in page and "textual" in page.lower()
    finally:
        server.terminate()
        server.wait(timeout=10)


async def test_diff_screen_shows_the_same_as_the_command():
    from explorer.api import open_document
    from explorer.diff import diff_documents, diff_lines
    from widgets.review_screens import DiffScreen

    first, second = SAMPLE_DATA / "clean_2x2_stschedule.json", SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    app = make_app(first)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        app.action_diff()
        await pilot.pause()
        await pilot.press(*str(second), "enter")
        for _ in range(200):
            if isinstance(app.screen, DiffScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, DiffScreen)
        expected = diff_lines(diff_documents(open_document(first), open_document(second)))
        assert app.screen.lines == expected


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


def test_serve_gives_every_tab_the_author_and_the_bookmarks_file(monkeypatch, tmp_path):
    import textual_serve.server

    from explorer import cli

    started = {}

    class Recorder:
        def __init__(self, command: str, **options) -> None:
            started["command"] = command

        def serve(self) -> None:
            started["served"] = True

    monkeypatch.setattr(textual_serve.server, "Server", Recorder)
    sidecar = tmp_path / "notes.json"
    code = cli.main(["serve", str(SAMPLE_DATA / "clean_2x2_stschedule.json"), "--author", "ana lee",
                     "--bookmarks", str(sidecar)])  # fmt: skip
    assert code == 0 and started["served"]
    assert "--author 'ana lee'" in started["command"] and f"--bookmarks {sidecar}" in started["command"]
