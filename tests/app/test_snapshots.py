"""SVG snapshots of the shell at 160×48. Update with `pytest --snapshot-update` after looking at the change."""

from __future__ import annotations

from tests.app.helpers import SIZE, wait_loaded
from tests.conftest import ROOT
from widgets.app import make_app

CLEAN = "sample_data/clean_2x2_stschedule.json"
PLANTED = "sample_data/planted_problems_2x2_stschedule.json"


def test_shell_on_clean_sample(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("down", "down", "down", "enter", "down", "down")

    assert snap_compare(make_app(CLEAN), terminal_size=SIZE, run_before=run_before)


def test_shell_jumped_to_an_overlap(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("n", "n")

    assert snap_compare(make_app(PLANTED), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(CLEAN), terminal_size=SIZE, run_before=run_before)


def test_load_error(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)

    assert snap_compare(make_app("tests/app/data/truncated_stschedule.json"), terminal_size=SIZE, run_before=run_before)


def test_timeline(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("2", "full_stop", "full_stop", "full_stop", "c")

    assert snap_compare(make_app(CLEAN), terminal_size=SIZE, run_before=run_before)


def test_buffers_clean_frame(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("3", "right", "right", "right", "right", "right")

    assert snap_compare(make_app(CLEAN), terminal_size=SIZE, run_before=run_before)


def test_buffers_overlap_frame(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("n", "n")

    assert snap_compare(make_app(PLANTED), terminal_size=SIZE, run_before=run_before)


def test_buffers_all_cores(snap_compare, monkeypatch):
    monkeypatch.chdir(ROOT)

    async def run_before(pilot):
        await wait_loaded(pilot)
        await pilot.press("3", "right", "right", "right", "g")

    assert snap_compare(make_app(PLANTED), terminal_size=SIZE, run_before=run_before)
