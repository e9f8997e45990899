"""Issue #76: the TUI on a kept document (the derived-data cache) shows what it shows on the file read whole."""

from __future__ import annotations

import re

import pytest

from explorer.cache import documents as derived
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA, settled, written
from widgets.app import make_app

SCHEDULE = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


@pytest.mark.parametrize("keys", [(), ("3",), ("4",)], ids=["tree", "timeline", "buffers"])
async def test_a_second_open_shows_the_same_screen(cache_on, keys):
    """Every view the same picture; the second open reads the entry (it is not written again)."""
    async def screen() -> str:
        app = make_app(SCHEDULE)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.2)
            await pilot.pause()
            return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())

    first = await screen()
    derived.wait_for_writes()
    kept = written(cache_on)  # the first screen's load kept it (once the incidents' roles were named)
    second = await screen()
    assert len(kept) == 1 and written(cache_on) == kept and second == first


async def test_a_file_opened_ahead_shows_the_same_screen(cache_on):
    """The console script opens a kept file on a thread as the app starts (explorer.open_ahead): the app shows
    what it shows when it reads the entry itself, with the same problems and incidents."""
    from explorer.open_ahead import open_ahead_if_kept

    async def screen(ahead=None) -> tuple[str, list]:
        app = make_app(SCHEDULE, open_ahead=ahead)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            await pilot.pause()
            lines = [incident.line() for incident in app.incidents or ()]
            return re.sub(r"terminal-\d+", "terminal", app.export_screenshot()), lines

    first = await screen()
    derived.wait_for_writes()
    settled(cache_on)
    ahead = open_ahead_if_kept(SCHEDULE, strict=False, companions={}, dims={})
    assert ahead is not None
    assert await screen(ahead) == await screen() == first


def test_q_right_after_the_first_open_still_leaves_the_entry(tmp_path):
    """End to end in a terminal: `q` as soon as the whole file is on screen, and the entry is there after the
    process ends (exit status 0). On the 519 MB file the TUI left no entry this way (written from a daemon thread
    once the incidents' roles were named: every tmux launch read the file again); this small file's roles are
    named before `q` lands, so the unit test below is the one that sees the command line finish the write."""
    import os

    from explorer.formats.scheduler_ir.samples import Recipe, write_streaming
    from tests.app.test_quit_handback import explorer_in_a_pty, read_until_quiet

    path = tmp_path / "gen_stschedule.json"
    write_streaming(path, Recipe(xlen=4, ylen=4, layers=1000, seed=5))  # a first open well past MIN_SECONDS
    folder = tmp_path / "xdg" / "ir-explorer" / "derived"
    environment = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "IR_EXPLORER_CACHE": "on"}
    with explorer_in_a_pty(path, environment) as (main, app):
        seen = b""
        while b"errors" not in seen:  # the bar counts the whole file's errors: the document is on screen
            more = read_until_quiet(main, 0.05, limit=60.0)
            assert more or app.poll() is None, seen[-400:]
            seen += more
        os.write(main, b"q")
        read_until_quiet(main, 2.0)
        assert app.wait(timeout=120) == 0
    assert written(settled(folder)), "no cache entry after q"  # (written by a child of its own: waited for)


def test_the_command_line_finishes_the_entry_of_what_the_tui_showed(cache_on):
    """After the app ends, the document it showed is kept if the load worker had not kept it yet, and the
    write is finished before the process ends (its writer is a daemon thread); once only."""
    from types import SimpleNamespace

    from explorer.api import open_document
    from explorer.cli import _keep_what_was_shown

    document = open_document(SCHEDULE)
    assert document.cache_slot is not None and not written(cache_on)
    _keep_what_was_shown(SimpleNamespace(document=document))
    kept = written(cache_on)
    assert len(kept) == 1 and not derived.pending_writes()
    _keep_what_was_shown(SimpleNamespace(document=document))
    assert written(cache_on) == kept
    _keep_what_was_shown(SimpleNamespace(document=None))  # the app ended before the file was read: nothing


async def test_a_models_graph_is_kept_once_shown_and_the_second_open_shows_it_unbuilt(cache_on, monkeypatch):
    """A model's entry is written once its graph is on screen (the graph view's build, kept from a worker), with
    the shape inference's answer; the second open shows the same graph screen without inference or a build."""
    from explorer import isolated
    from explorer.formats.onnx import graph_model
    from tests.app.test_graph_view import frame_text, open_graph

    model = SAMPLE_DATA / "residual_blocks.onnx"

    async def graph_screen() -> tuple[str, bool]:
        app = make_app(model)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            built_before = app.document.view.graph_ready()
            graph = await open_graph(pilot)
            for _ in range(200):  # the worker keeping it
                if written(cache_on):
                    break
                await pilot.pause(0.01)
            derived.wait_for_writes()
            return frame_text(graph), built_before

    first, built = await graph_screen()
    kept = written(cache_on)
    assert len(kept) == 1 and not built  # kept after the graph view built it (not by the load, before it)
    monkeypatch.setattr(isolated, "run_forked", lambda *a, **k: pytest.fail("shape inference ran again"))
    monkeypatch.setattr(graph_model, "onnx_graph", lambda *a, **k: pytest.fail("the graph was built again"))
    second, built = await graph_screen()
    assert second == first and built and written(cache_on) == kept


async def test_a_view_key_pressed_before_its_tab_is_there_shows_it_once_it_is(monkeypatch):
    """The whole file is on screen before the views' tabs are added (their modules are imported after its first
    paint): `2` pressed meanwhile shows the timeline once its tab is there, instead of being lost; a view asked
    for later wins."""
    import threading

    from textual.widgets import TabbedContent

    from widgets import document_loading
    from widgets.views import import_widgets

    release = threading.Event()

    def held_back(views) -> None:
        assert release.wait(20)
        import_widgets(views)

    monkeypatch.setattr(document_loading, "import_widgets", held_back)
    for keys, shown in ((["2"], "tab-timeline"), (["2", "1"], "tab-tree")):
        release.clear()
        app = make_app(SCHEDULE)
        async with app.run_test(size=SIZE) as pilot:
            while app.document is None:
                await pilot.pause(0.01)
            for key in keys:
                await pilot.press(key)
            assert app.query_one(TabbedContent).active == "tab-tree" and not app.query("#tab-timeline")
            release.set()
            await wait_loaded(pilot)
            await pilot.pause(0.1)
            assert app.query_one(TabbedContent).active == shown
