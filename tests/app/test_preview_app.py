"""A big schedule's first core is on screen while the rest loads; the whole file then takes its place."""

from __future__ import annotations

import threading

from textual.widgets import TabbedContent

from explorer import open_ahead as opening  # the app loads through opening.open_checked
from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import SAMPLE_DATA
from tests.unit.test_preview import through_workloads
from widgets.app import make_app
from widgets.schedule.timeline import Timeline
from widgets.summary_bar import SummaryBar

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


async def test_first_core_then_the_whole_file(monkeypatch):
    from explorer.formats.scheduler_ir import first_core

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)  # previews are for big files: hold the load back instead
    release = threading.Event()
    whole_load = opening.open_document

    def held_back(*args, **kwargs):
        assert release.wait(20)
        return whole_load(*args, **kwargs)

    monkeypatch.setattr(opening, "open_document", held_back)
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if app.document is not None and app.views_ready:
                break
            await pilot.pause(0.01)
        assert app.document.partial and app.document.schedule.core_ids.tolist() == [0]
        bar = str(app.query_one(SummaryBar).render())
        # how far first, and no problem counts before the whole file is checked
        assert "◐ loading · showing core 0 of a" in bar and "error" not in bar
        app._show_progress(0.46, "core 7")
        assert "◐ 46% loaded (core 7) · showing core 0" in str(app.query_one(SummaryBar).render())
        app._show_progress(0.0, "analysing")  # read and decoded: the checks' own fraction is not the load's
        assert "◐ loaded, analysing · showing core 0" in str(app.query_one(SummaryBar).render())
        timeline = app.query_one(Timeline)
        # the first part opens on its timeline, with the keyboard: that is what there is to see while the rest loads
        assert app.query_one(TabbedContent).active == "tab-timeline"
        assert app.focused is timeline and timeline.document.partial
        timeline.select(3)
        await pilot.press("b")  # bookmarking (like exports and diff) waits for the whole file
        await pilot.pause()
        assert any("waits until the whole file is loaded" in str(n.message) for n in app._notifications)
        release.set()
        for _ in range(1000):
            if not app.document.partial and app.views_ready:
                break
            await pilot.pause(0.01)
        await wait_loaded(pilot)
        assert app.document.schedule.core_ids.size == 4 and not app.document.partial
        assert timeline.document is app.document and timeline.selected == 3  # the chosen workload stays chosen
        assert app.focused is timeline
        assert "error" in str(app.query_one(SummaryBar).render())
        tabs = [str(tab.label) for tab in app.query("#tabs Tab")]
        assert tabs == ["1 Tree", "2 Timeline", "3 Buffers", "6 Graph", "7 Memory", "8 Mesh"]  # the graph in place


async def test_a_whole_file_that_fails_after_its_first_core_shows_the_error(monkeypatch):
    from explorer.errors import LoadError
    from explorer.formats.scheduler_ir import first_core

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)

    def fails(path, **kwargs):
        raise LoadError(path, '$["3"][7].time', "expected a number")

    monkeypatch.setattr(opening, "open_document", fails)
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if app.load_error is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        assert app.document is None and "expected a number" in str(app.load_error)
        assert app.query_one("#switcher").current == "error"


async def test_a_preview_later_than_the_whole_file_is_not_shown(monkeypatch):
    """The preview and the whole load run side by side: a preview that comes last has nothing to add."""
    from explorer.formats.scheduler_ir import first_core, preview

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)
    release = threading.Event()
    first_core = preview.preview
    made = []

    def held_back(path, *job):
        assert release.wait(20)
        made.append(first_core(path, *job))
        return made[-1]

    monkeypatch.setattr(preview, "preview", held_back)  # the format's `preview` finds it when called
    app = make_app(PLANTED)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert not app.document.partial  # the whole file came while the preview was held back
        whole = app.document
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        assert made and made[0].partial  # it was made, and then not shown
        assert app.document is whole and not app.document.partial


async def test_the_first_workloads_then_the_whole_first_core_then_the_file(monkeypatch):
    """A big schedule's first screen comes from its first core's first workloads (decoded in a tenth of the
    time), then the whole first core takes their place, then the whole file; the chosen workload stays chosen."""
    from concurrent.futures import Future

    from explorer.formats.scheduler_ir import first_core, preview, started

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)
    prefix: Future = Future()  # as a worker would have decoded it for `early.prepare`
    prefix.set_result(first_core.first_core_part(PLANTED, prefix_bytes=through_workloads(3)))
    monkeypatch.setattr(started, "take_first_look", lambda path: prefix)
    whole_core, whole_file = threading.Event(), threading.Event()
    first_core_only, whole_load = preview.preview, opening.open_document

    def core_held_back(path, *job):
        assert whole_core.wait(20)
        return first_core_only(path, *job)

    def file_held_back(*args, **kwargs):
        assert whole_file.wait(20)
        return whole_load(*args, **kwargs)

    monkeypatch.setattr(preview, "preview", core_held_back)
    monkeypatch.setattr(opening, "open_document", file_held_back)
    app = make_app(PLANTED)

    async def shown(workloads: int) -> None:
        for _ in range(1000):
            if app.document is not None and app.views_ready and app.document.schedule.n_workloads == workloads:
                return
            await pilot.pause(0.01)
        raise AssertionError(f"{workloads} workloads never shown")

    async with app.run_test(size=SIZE) as pilot:
        await shown(3)
        bar = str(app.query_one(SummaryBar).render())
        assert "showing core 0: first 3 workloads" in bar and app.document.partial
        timeline = app.query_one(Timeline)
        assert app.focused is timeline
        timeline.select(2)
        whole_core.set()
        await shown(12)
        assert "showing core 0 of a" in str(app.query_one(SummaryBar).render()) and app.document.partial
        assert timeline.selected == 2 and app.focused is timeline
        await pilot.pause(0.2)  # the selection is put back once the views are ready (a 50 ms timer)
        timeline.select(7)  # a workload the first screen did not have
        whole_file.set()
        await wait_loaded(pilot)
        for _ in range(500):
            if not app.document.partial and app.views_ready:
                break
            await pilot.pause(0.01)
        assert app.document.schedule.core_ids.size == 4 and timeline.selected == 7
