"""A big schedule's cores are handed to workers from spans guessed in the file's bytes (explorer.formats.
scheduler_ir.layout), not from a parse of the whole top level. A guess is only used when the file proves it: in
every layout, right or wrong guess, the load equals the in-process one, and the top level is parsed whole only
when the guess failed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from explorer import worker_pool
from explorer.file_spans import FileIdentity
from explorer.formats.scheduler_ir import layout, reader
from explorer.formats.scheduler_ir.reader import load_schedule
from tests.unit.test_parallel_load import PLANTED, _RecordingPool, columns, every_size, in_process  # noqa: F401


def spans_of(path: Path) -> dict[int, tuple[int, int]] | None:
    status = path.stat()
    found = []
    stamp = FileIdentity.of(status)
    spans = layout.find_core_spans(path, stamp, lambda *a: found.append(a), lambda _: None)
    assert spans is None or found == list(spans.items())  # each told as found, in file order
    return spans


def arrays(path: Path) -> dict[int, list]:
    data = path.read_bytes()
    return {core: json.loads(data[offset : offset + length]) for core, (offset, length) in spans_of(path).items()}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}_stschedule.json"
    path.write_text(text)
    return path


@pytest.fixture
def planted() -> dict:
    return json.loads(PLANTED.read_text())


def test_the_spans_of_compact_and_indented_files_are_their_cores(tmp_path, planted):
    expected = {core: planted[str(core)] for core in range(4)}
    assert arrays(PLANTED) == expected
    for name, dump in [("indented", {"indent": 3}), ("sorted", {"indent": 1, "sort_keys": True}),
                       ("spaced", {"separators": (", ", ": ")})]:  # fmt: skip
        assert arrays(write(tmp_path, name, json.dumps(planted, **dump))) == expected, name


def test_layouts_it_does_not_know_give_no_spans(tmp_path, planted):
    assert spans_of(write(tmp_path, "list", "[1, 2]")) is None
    assert spans_of(write(tmp_path, "empty", "")) is None
    twice = json.dumps(planted, indent=2).replace('"1": [', '"0": [', 1)
    assert spans_of(write(tmp_path, "twice", twice)) is None  # a core key twice


def guessed_and_parsed(path: Path, monkeypatch) -> tuple[bool, bool]:
    """Load `path` with workers and in this process, check they agree, and say whether the workers' load used
    the guessed spans and whether it parsed the top level whole."""
    here, here_problems = in_process(path, monkeypatch)
    recording = _RecordingPool(worker_pool.shared_pool())
    with monkeypatch.context() as patch:
        patch.setattr(worker_pool, "shared_pool", lambda: recording)
        parallel, problems = load_schedule(path)
    assert columns(parallel) == columns(here) and problems == here_problems, path.name
    guessed = [job.guessed for job, in recording.decoded]  # decode_core_at(CoreJob)
    return any(guessed), reader.read_top_level in recording.functions


@pytest.mark.usefixtures("every_size")
def test_a_right_guess_is_used_and_a_wrong_one_is_refuted(tmp_path, monkeypatch, planted):
    assert guessed_and_parsed(PLANTED, monkeypatch) == (True, False)
    indented = write(tmp_path, "indented", json.dumps(planted, indent=1, sort_keys=True))
    assert guessed_and_parsed(indented, monkeypatch) == (True, False)
    # An unknown field holding what the next core's key looks like: core 0's guessed end is inside it
    planted["0"][1]["extra"] = {"a": [1], "1": [2]}
    assert guessed_and_parsed(write(tmp_path, "fooled", json.dumps(planted)), monkeypatch) == (True, True)
    reordered = {key: planted[key] for key in ["0", "2", "1", "3", "-1", "buffersize", "xlen", "ylen"]}
    assert guessed_and_parsed(write(tmp_path, "reordered", json.dumps(reordered)), monkeypatch) == (True, True)
    planted["2"] = {"not": "a list"}  # a core that is no array: the file's own problem, found by the full parse
    assert guessed_and_parsed(write(tmp_path, "not_a_list", json.dumps(planted, indent=2)), monkeypatch)[1]


def test_the_top_level_around_the_cores_must_hold_them(tmp_path, planted):
    path = write(tmp_path, "indented", json.dumps(planted, indent=2))
    status = path.stat()
    stamp = FileIdentity.of(status)
    spans = spans_of(path)
    top_level, dram = reader._top_level_around(path, stamp, spans)
    assert top_level.spans == spans and json.loads(dram) == planted["-1"]
    offset, length = top_level.dram_span
    assert path.read_bytes()[offset : offset + length] == dram
    shifted = {core: (offset + 1, length - 1) for core, (offset, length) in spans.items()}
    assert reader._top_level_around(path, stamp, shifted) is None
    assert reader._top_level_around(path, stamp, {0: spans[0]}) is None  # cores left out


@pytest.mark.usefixtures("every_size")
def test_while_the_preview_is_drawn_a_worker_looks_for_the_cores(monkeypatch):
    """The TUI's process draws the preview meanwhile: the search runs in a worker, with the same result."""
    import threading
    from concurrent.futures import Future

    from explorer.formats.scheduler_ir import started

    here, here_problems = in_process(PLANTED, monkeypatch)
    running: Future = Future()  # the preview's decode, still running when the load starts
    threading.Timer(0.3, running.set_result, (None,)).start()
    monkeypatch.setattr(started, "take_first_core", lambda path: running)
    recording = _RecordingPool(worker_pool.shared_pool())
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: recording)
    parallel, problems = load_schedule(PLANTED)
    assert columns(parallel) == columns(here) and problems == here_problems
    assert layout.core_spans_at in recording.functions and reader.read_top_level not in recording.functions


@pytest.mark.usefixtures("every_size")
def test_the_core_count_at_the_end_is_a_hint_that_is_checked(tmp_path, monkeypatch, planted):
    """xlen·ylen says how many cores to look for (a one-core file is not searched through for a core "1"); a
    file whose cores are not 0 … xlen·ylen−1 still loads right, from the parsed top level."""
    assert planted["xlen"] * planted["ylen"] == 4 and len(spans_of(PLANTED)) == 4
    searched = []
    one = {"0": planted["0"], "-1": planted["-1"], "buffersize": planted["buffersize"], "xlen": 1, "ylen": 1}
    path = write(tmp_path, "one", json.dumps(one))
    with monkeypatch.context() as patch:
        patch.setattr(layout._Scanner, "_core_key", lambda self, key, *where: searched.append(key))
        assert arrays(path) == {0: planted["0"]} and searched == []
    missing = dict(planted)
    del missing["2"]  # a core without workloads has no key
    assert guessed_and_parsed(write(tmp_path, "missing", json.dumps(missing)), monkeypatch) == (True, True)
    fewer = dict(planted, xlen=1, ylen=2)  # says 2 cores, has 4
    assert guessed_and_parsed(write(tmp_path, "fewer", json.dumps(fewer)), monkeypatch) == (True, True)


@pytest.mark.usefixtures("every_size")
def test_the_search_for_the_next_core_skips_ahead_and_comes_back(tmp_path, monkeypatch, planted):
    """The next core's key is looked for from 3/4 of the previous core's length on: a core much shorter than the
    one before is found by looking again from its start, and a look-alike key after the real one (an unknown
    field's) only makes the load parse the top level whole."""
    uneven = dict(planted)
    uneven["0"] = planted["0"] * 30
    uneven["1"] = planted["1"][:1]
    uneven["2"] = planted["2"] * 30
    searched_from = []
    original = layout._Scanner._core_key

    def core_key(self, key, after, before=None):
        searched_from.append((key, after))
        return original(self, key, after, before)

    path = write(tmp_path, "uneven", json.dumps(uneven))
    with monkeypatch.context() as patch:
        patch.setattr(layout._Scanner, "_core_key", core_key)
        assert arrays(path) == {core: uneven[str(core)] for core in range(4)}
    spans = spans_of(path)
    second_start = spans[1][0]
    looked_again = [after for key, after in searched_from if key == b'"2"']
    assert looked_again == [second_start + int(0.75 * spans[0][1]), second_start]  # skipped past it, then back
    assert guessed_and_parsed(path, monkeypatch) == (True, False)
    uneven["2"] = copy.deepcopy(uneven["2"])
    uneven["2"][-1]["extra"] = {"a": [1], "2": [2]}  # where the skipped search lands first
    assert guessed_and_parsed(write(tmp_path, "look_alike", json.dumps(uneven)), monkeypatch) == (True, True)
