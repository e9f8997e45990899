"""Hardening (issue #44), as a person meets it in the TUI: a file that crashes a library's native checker, bad
per-node data, a planted bookmarks sidecar, keys typed before a prompt. The app stays up and says what happened."""

from __future__ import annotations

from tests.app.helpers import SIZE, wait_loaded
from tests.hostile import onnx_that_crashes_shape_inference
from widgets.app import make_app


async def test_the_tui_survives_a_model_that_crashes_shape_inference(tmp_path):
    for model in onnx_that_crashes_shape_inference(tmp_path):
        app = make_app(model)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            assert app.load_error is None
            messages = [p.message for p in app.document.problems]
            assert any("shape inference failed: crashed (SIGSEGV)" in m for m in messages), messages
            await pilot.press("6")  # the graph still draws, with the types the file declares
            await pilot.pause(0.3)
            assert app.is_running


async def test_hostile_node_data_never_stops_the_model(tmp_path):
    """Given with --node-data, or added from the palette: each hostile file is a problem, the model opens and
    stays open (issue #44 item 5; the app refused the model, the palette's worker crashed the app)."""
    from tests.conftest import SAMPLE_DATA
    from tests.unit.test_node_data import hostile_node_data

    files = hostile_node_data(tmp_path)
    model = SAMPLE_DATA / "residual_blocks.onnx"
    app = make_app(model, node_data=[files["deep.json"], files["huge_field.csv"]])
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert app.load_error is None and app.document is not None
        assert [p.code for p in app.document.problems].count("node-data-unreadable") == 2
        for name in ("thresholds.json", "digits_5000.json", "graph_ids.json"):
            app.call_later(app._add_node_data, str(files[name]))
            await pilot.pause(0.5)
            await app.workers.wait_for_complete()
            assert app.is_running and app.document is not None
        assert [p.code for p in app.document.problems].count("node-data-unreadable") == 5


async def test_a_note_typed_ahead_of_its_prompt_is_kept_and_an_empty_one_never_saved(tmp_path):
    """Issue #44 item 8: keys typed right after `b`, before the prompt is on screen, go into the note; Enter on an
    empty note saves nothing (and says so)."""
    import shutil

    from explorer.bookmarks import load_bookmarks, sidecar_path
    from tests.conftest import SAMPLE_DATA

    source = tmp_path / "clean_2x2_stschedule.json"
    shutil.copy(SAMPLE_DATA / "clean_2x2_stschedule.json", source)
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        from textual import events

        for key in ["b", *"fast note"]:  # one burst, as a terminal delivers a quick typist's keys
            app.post_message(events.Key(key.replace(" ", "space"), key))
        await pilot.pause(0.2)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        await pilot.press("b", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
    assert [b.note for b in load_bookmarks(sidecar_path(source))] == ["fast note"]


async def test_a_planted_fifo_or_a_held_lock_never_freezes_the_tui(tmp_path, monkeypatch):
    """Issue #44 item 7: a FIFO planted as FILE.bookmarks.json blocked the UI thread on open (q and Ctrl+C
    ignored); another user's flock on the folder blocked it on save. Both are read and written in a worker now:
    the app answers keys meanwhile, says what is wrong, and q quits."""
    import asyncio
    import fcntl
    import os
    import shutil

    import explorer.bookmarks as bookmarks_module
    from tests.conftest import SAMPLE_DATA

    source = tmp_path / "clean_2x2_stschedule.json"
    shutil.copy(SAMPLE_DATA / "clean_2x2_stschedule.json", source)
    os.mkfifo(tmp_path / "clean_2x2_stschedule.json.bookmarks.json")

    async def session() -> list[str]:
        app = make_app(source)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            await app.workers.wait_for_complete()
            said = [n.message for n in app._notifications]
            await pilot.press("2")  # the app answers
            assert app.query_one("#tabs").active == "tab-timeline"
            await pilot.press("q")
        return said

    said = await asyncio.wait_for(session(), 30)
    assert any("not a regular file" in message for message in said), said

    os.unlink(tmp_path / "clean_2x2_stschedule.json.bookmarks.json")
    monkeypatch.setattr(bookmarks_module, "LOCK_SECONDS", 1.0)
    held = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        app = make_app(source)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            await pilot.press("b", *"held", "enter")
            await pilot.press("2")  # answered while the save waits for the lock
            assert app.query_one("#tabs").active == "tab-timeline"
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert any("held the bookmarks lock" in n.message for n in app._notifications)
    finally:
        os.close(held)


async def test_tabs_of_one_serve_load_one_at_a_time(tmp_path, monkeypatch):
    """Issue #44 item 3: tabs opened at once all saw the whole machine's memory free and were OOM-killed; a tab
    waits (and says so) while another holds serve's load lock, then loads with what is left."""
    import fcntl
    import os

    from explorer.load_turn import LOCK_VARIABLE
    from tests.conftest import SAMPLE_DATA

    lock = tmp_path / "serve.lock"
    lock.touch()
    monkeypatch.setenv(LOCK_VARIABLE, str(lock))
    held = os.open(lock, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # another tab is loading
    released = False
    try:
        app = make_app(SAMPLE_DATA / "clean_2x2_stschedule.json")
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(100):
                await pilot.pause(0.02)
                if "waiting for another tab" in str(app.query_one("#loading-stage").render()):
                    break
            assert "waiting for another tab" in str(app.query_one("#loading-stage").render())
            assert app.document is None
            fcntl.flock(held, fcntl.LOCK_UN)
            released = True
            await wait_loaded(pilot)
            assert app.document is not None and app.load_error is None
    finally:
        if not released:
            fcntl.flock(held, fcntl.LOCK_UN)
        os.close(held)


async def test_z_maximises_the_problems_panel_to_the_whole_screen():
    """Issue #45 item 8: `z` on the problems panel made it a box of a third (160×48) or half (80×24) of the
    height in hatching; a maximised panel fills the screen at both sizes."""
    from tests.conftest import SAMPLE_DATA
    from widgets.problems import ProblemsTable

    for size in ((160, 48), (80, 24)):
        app = make_app(SAMPLE_DATA / "planted_problems_2x2_stschedule.json")
        async with app.run_test(size=size) as pilot:
            await wait_loaded(pilot)
            await pilot.press("p", "z")
            await pilot.pause()
            table = app.query_one(ProblemsTable)
            assert app.screen.maximized is table
            assert table.region.height >= size[1] - 2 and table.region.width >= size[0] - 2, table.region
            await pilot.press("z")  # and back
            await pilot.pause()
            assert app.screen.maximized is None and table.region.height <= 12



async def test_the_source_views_placeholder_names_no_format():
    """Issue #45 item 5: the placeholder spoke of TVM's "→ C source" item on a Core ML model too."""
    from textual.app import App

    from widgets.source_view import SourceView

    class Host(App):
        def compose(self):
            yield SourceView(id="source")

    app = Host()
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        view = app.query_one(SourceView)
        first = "".join(segment.text for segment in view.render_line(0))
        assert "Select a source file in the tree" in first and "C source" not in first
