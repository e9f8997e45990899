"""Reviews in the app: bookmarks saved beside the input (never in it), reopened with --bookmarks; the palette;
the browser mode fetched over loopback."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
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
    from textual.widgets import OptionList

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
        await pilot.press(*str(second), "enter")
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
        await pilot.press(*str(first), "enter")
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


def forward(listen_port: int, target_port: int, stop) -> None:
    """A TCP port forward, as `ssh -L listen:localhost:target` makes one."""
    import selectors

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen()
    server.settimeout(0.2)
    pairs = []
    while not stop.is_set():
        try:
            client, _ = server.accept()
        except OSError:
            continue
        try:
            upstream = socket.create_connection(("127.0.0.1", target_port))
        except OSError:  # the server is not up yet: drop this client, as ssh does
            client.close()
            continue

        def pipe(a, b):
            selector = selectors.DefaultSelector()
            selector.register(a, selectors.EVENT_READ, b)
            selector.register(b, selectors.EVENT_READ, a)
            while not stop.is_set():
                for key, _ in selector.select(0.2):
                    data = key.fileobj.recv(65536)
                    if not data:
                        a.close()
                        b.close()
                        return
                    key.data.sendall(data)

        thread = threading.Thread(target=pipe, args=(client, upstream), daemon=True)
        thread.start()
        pairs.append(thread)
    server.close()


def start_serve(*extra: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    command = [sys.executable, "-m", "explorer", "serve", str(SAMPLE_DATA / "clean_2x2_stschedule.json"),
               "--port", str(port), *extra]  # fmt: skip
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), port


def fetch(url: str) -> tuple[int, str]:
    for _ in range(100):
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered at {url}")


def test_serve_works_through_a_forwarded_port():
    server, port = start_serve()
    assert fetch(f"http://127.0.0.1:{port}/")[0] == 200  # up
    stop = threading.Event()
    local = free_port()
    tunnel = threading.Thread(target=forward, args=(local, port, stop), daemon=True)
    tunnel.start()
    try:
        status, page = fetch(f"http://127.0.0.1:{local}/")
        assert status == 200
        assert f"ws://127.0.0.1:{local}/ws" in page  # the address the browser used, not the server's own
        assert f"http://127.0.0.1:{local}/static/" in page and f":{port}/" not in page
        status, _ = fetch(f"http://127.0.0.1:{local}/static/js/textual.js")
        assert status == 200
    finally:
        stop.set()
        server.terminate()
        server.wait(timeout=10)


def test_serve_off_loopback_needs_its_token():
    server, port = start_serve("--host", "0.0.0.0", "--token", "s3cret-token")
    try:
        status, page = fetch(f"http://127.0.0.1:{port}/")
        assert status == 403 and "token" in page
        status, page = fetch(f"http://127.0.0.1:{port}/?token=wrong")
        assert status == 403
        status, page = fetch(f"http://127.0.0.1:{port}/?token=s3cret-token")
        assert status == 200 and "/ws" in page
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert "?token=s3cret-token" in err  # the address to open is printed with its token


def test_serve_behind_a_proxy_uses_the_public_url():
    server, port = start_serve("--public-url", "https://review.example.com/irx/")
    try:
        status, page = fetch(f"http://127.0.0.1:{port}/")
        assert status == 200
        assert "wss://review.example.com/irx/ws" in page and "https://review.example.com/irx/static/" in page
    finally:
        server.terminate()
        server.wait(timeout=10)
