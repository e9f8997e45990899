"""Issue #76: the TUI's second open of a kept file. The file is opened on a thread from the command's start
(`OpenAhead`), only when the cache holds it, and gives what the app's own load gives; its error, progress and
cancellation reach whoever waits. The entry a command writes holds the incidents the TUI lists first."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from explorer import open_ahead
from explorer.api import open_document
from explorer.cache import documents as derived
from explorer.errors import LoadError
from explorer.open_ahead import OpenAhead, open_ahead_if_kept, open_checked
from tests.conftest import ROOT, SAMPLE_DATA, settled

SCHEDULE = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


def lines_of(opened) -> tuple[list, list[str]]:
    document, incidents = opened
    return [p.to_json() for p in document.problems], [incident.line() for incident in incidents]


def test_a_kept_file_is_opened_ahead_as_the_app_opens_it(cache_on):
    assert open_ahead_if_kept(SCHEDULE, strict=False, companions={}, dims={}) is None  # nothing kept yet
    derived.keep(open_document(SCHEDULE))
    derived.wait_for_writes()
    ahead = open_ahead_if_kept(SCHEDULE, strict=False, companions={}, dims={})
    assert isinstance(ahead, OpenAhead)
    opened = ahead.result()
    assert opened is not None and opened[0].cache_slot is not None  # (read back from the entry)
    assert ahead.ready() and lines_of(opened) == lines_of(open_checked(SCHEDULE))
    # another option than the entry's (strict): the app loads the file itself, with its first part shown
    assert open_ahead_if_kept(SCHEDULE, strict=True, companions={}, dims={}) is None


def test_a_file_no_format_reads_is_left_to_the_app(cache_on, tmp_path):
    stray = tmp_path / "notes.txt"
    stray.write_text("not a model")
    assert open_ahead_if_kept(stray, strict=False, companions={}, dims={}) is None


def test_the_opens_error_is_raised_where_it_is_waited_for(tmp_path):
    broken = tmp_path / "broken_stschedule.json"
    broken.write_text('{"0": [')
    with pytest.raises(LoadError) as raised:
        OpenAhead(broken).result()
    assert "broken_stschedule.json" in str(raised.value)


class Stop(Exception):
    pass


def test_the_waiter_hears_the_progress_stops_the_open_or_stops_waiting(monkeypatch):
    """What the waiter's progress callback raises ends the open and is raised to it; a waiter that is cancelled
    (the app quits) gets None at once, whatever the open is doing."""
    release = threading.Event()

    def slow_open(path, *, progress, **options):
        while True:  # a long load: it reports until it is released, or told to stop
            progress(0.5, 1, "loading")
            if release.wait(0.01):
                return "opened"

    monkeypatch.setattr(open_ahead, "open_checked", slow_open)
    heard: list[str] = []

    def listening(done: float, total: float, stage: str) -> None:
        heard.append(stage)
        raise Stop

    with pytest.raises(Stop):
        OpenAhead(SCHEDULE).result(listening)
    assert heard == ["loading"]
    waiting = OpenAhead(SCHEDULE)
    assert waiting.result(cancelled=lambda: True) is None and not waiting.ready()
    release.set()
    assert waiting.result() == "opened"


def test_an_entry_written_by_a_child_holds_the_incidents_its_command_did_not_ask_for(cache_on):
    """`info` lists no incidents; the TUI lists them first. The detached writer works them out on its own copy
    (their roles are the TUI's to name), so the TUI opening that entry finds them."""
    document = open_document(SCHEDULE)
    assert "incidents" not in document.schedule_analysis.cached
    derived.keep(document, detach=True)
    settled(cache_on)
    again = open_document(SCHEDULE)
    assert again.cache_slot is not None and "incidents" in again.schedule_analysis.cached
    _, kept = again.schedule_analysis.cached["incidents"]
    incidents = kept.found()
    def what(found: list) -> list:
        return [(i.code, i.core, i.tensor_ids, i.first_workload, i.last_workload, i.ranges) for i in found]

    assert incidents and what(incidents) == what(open_checked(SCHEDULE)[1])
    assert not any(incident.roles for incident in incidents)  # (named by the TUI once the file is on screen)


def test_the_app_starts_without_the_contracts_nor_the_graph_view():
    """What the TUI imports before its first frame: pydantic and the contracts (the bookmarks' fallback), and the
    graph view's modules, come when they are used (BENCHMARKS.md, second open)."""
    code = ("import sys\nimport widgets.app\n"
            "print(sorted(m for m in ('pydantic', 'explorer.contracts', 'widgets.graph.view') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["[]"]
