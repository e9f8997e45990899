"""A big schedule's cores are decoded by worker processes (explorer.worker_pool): the result is the one the
in-process load gives, column for column and problem for problem, on real, clean, broken and variant files; a
file changed during the load, or a worker that dies, is handled as the in-process load would be."""

from __future__ import annotations

import copy
import json
import os
from concurrent.futures import Future
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from explorer import worker_pool
from explorer.errors import LoadError
from explorer.file_spans import FileChanged, FileIdentity
from explorer.formats.scheduler_ir import early, layout, reader, started
from explorer.formats.scheduler_ir.core_jobs import CoreJob, decode_core_at
from explorer.formats.scheduler_ir.reader import load_schedule
from tests.conftest import SAMPLE_DATA, SAMPLES

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


@pytest.fixture
def every_size(monkeypatch):
    """Workers for files of any size (they are for big files only)."""
    monkeypatch.setattr(reader, "parallel_min_bytes", lambda: 0)
    monkeypatch.setattr(early, "parallel_min_bytes", lambda: 0)
    if worker_pool.shared_pool() is None:
        pytest.skip("no worker processes on this machine (one CPU, or IR_EXPLORER_WORKERS=0)")


def in_process(path, monkeypatch, **kwargs):
    with monkeypatch.context() as patch:
        patch.setattr(worker_pool, "shared_pool", lambda: None)
        return load_schedule(path, **kwargs)


def columns(schedule) -> dict:
    out = {}
    for field in fields(schedule):
        value = getattr(schedule, field.name)
        if field.name == "_known_from":  # which arrays l2_known and snapshots_known were worked out from
            continue
        if field.name == "core_raw":
            out[field.name] = (value.spans, value.stamp)
        elif field.name == "l2_known" and value is not None:  # what the cores' decodes found of their L2
            out[field.name] = (value.buffersize, value.region_lo.tolist(), value.region_hi.tolist(),
                               value.overlaps.found.tolist(), value.overlaps.truncated)  # fmt: skip
        elif field.name == "snapshots_known" and value is not None:  # what they found of moves and flags
            out[field.name] = (value.moved.tolist(), value.mismatched.tolist(), value.in_previous.tolist())
        else:
            out[field.name] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


def variants(tmp_path: Path) -> list[Path]:
    """The planted demo, broken in ways each core's decode must handle alike in a worker and here."""
    value = json.loads(PLANTED.read_text())
    made = []

    def write(name, changed, **dump):
        path = tmp_path / f"{name}_stschedule.json"
        path.write_text(json.dumps(changed, **dump))
        made.append(path)

    bad = copy.deepcopy(value)
    bad["1"][2]["buffer"][0]["address"] = "oops"  # an entry dropped
    bad["0"][1]["wl0_buffer"] = [{"address": "x"}]  # a WL0 entry dropped
    write("bad_entries", bad)
    bad = copy.deepcopy(value)
    del bad["1"][3]["layer_name"]  # a workload dropped
    bad["2"] = "not a list"  # a core skipped
    write("bad_workload", bad)
    bad = copy.deepcopy(value)
    bad["3"][0]["buffer"] = 5
    bad["extra"] = 1
    write("sorted_indented", bad, indent=1, sort_keys=True)  # the real files' layout: "-1" first
    renamed = copy.deepcopy(value)
    for key in ("0", "1", "2", "3"):
        for w in renamed[key]:
            if "wl0_buffer" in w:
                w["wl1_buffer"] = w.pop("wl0_buffer")
    write("wl1", renamed)
    layers = copy.deepcopy(value)
    layers["3"][0]["layer_name"] = "only_on_core_3"  # a layer first seen on a later core keeps the file's order
    layers["1"][0]["layer_name"] = "only_on_core_3"
    write("layers", layers)
    one_core = {"0": value["0"], "buffersize": value["buffersize"], "-1": value["-1"], "xlen": 1, "ylen": 1}
    write("one_core", one_core)  # decoded here, so its bar moves within the core
    return made


def test_workers_give_what_the_in_process_load_gives(every_size, tmp_path, monkeypatch):
    paths = [PLANTED, SAMPLE_DATA / "clean_2x2_stschedule.json", *variants(tmp_path)]
    if SAMPLES.is_dir():
        paths += sorted((SAMPLES / "scheduler_ir").glob("*_stschedule.json"))
    for path in paths:
        here, here_problems = in_process(path, monkeypatch)
        parallel, parallel_problems = load_schedule(path)
        assert columns(parallel) == columns(here), path.name
        assert parallel_problems == here_problems, path.name
    assert any(p.code == "bad-workload" for p in load_schedule(tmp_path / "bad_workload_stschedule.json")[1])


def test_progress_moves_by_bytes_and_ends_done(every_size):
    seen = []
    load_schedule(PLANTED, progress=lambda done, total, label: seen.append((done / total, label)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert sum(label.startswith("core ") for _, label in seen) == 4  # one step per core finished


def test_junk_found_by_a_worker_is_the_same_load_error(every_size, tmp_path, monkeypatch):
    path = tmp_path / "junk_stschedule.json"
    path.write_text('{"0": [], "-1": {"in": [], "out": [}')
    with pytest.raises(LoadError) as here:
        in_process(path, monkeypatch)
    with pytest.raises(LoadError) as parallel:
        load_schedule(path)
    assert str(parallel.value) == str(here.value) and "not valid JSON" in str(parallel.value)


def test_a_file_changed_while_loading_is_refused(every_size):
    stamp = FileIdentity(PLANTED.stat().st_size, PLANTED.stat().st_mtime_ns - 1)  # as if it had been written since
    with pytest.raises(FileChanged):
        decode_core_at(CoreJob(str(PLANTED), stamp, "0", (0, 10)))
    with pytest.raises(FileChanged):
        reader.read_top_level(str(PLANTED), stamp)


class _DeadPool:
    """A pool whose every worker dies: the loader must finish the work itself."""

    def submit(self, function, *args):
        future: Future = Future()
        future.set_exception(worker_pool.WorkerDied("killed"))
        return future


def test_a_dead_worker_leaves_the_work_here(every_size, tmp_path, monkeypatch):
    path = variants(tmp_path)[0]
    here = in_process(path, monkeypatch)
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: _DeadPool())
    assert columns(load_schedule(path)[0]) == columns(here[0])


def test_early_jobs_are_taken_once_and_only_for_the_same_file(every_size, tmp_path, monkeypatch):
    from explorer.formats.scheduler_ir import first_core, preview

    monkeypatch.setattr(early, "PREVIEW_MIN_BYTES", 0)
    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)
    path = tmp_path / "copy_stschedule.json"
    path.write_bytes(PLANTED.read_bytes())
    early.prepare(path, interactive=True)
    found = started.first_core_job(path).result(timeout=60)
    assert found.part.core == 0 and found.first.offset > 0
    assert started.first_core_job(path) is not None  # left for the full load
    assert started.take_first_core(path).result() is found and started.take_first_core(path) is None
    early.prepare(path, interactive=False)
    assert started.first_core_job(path) is None  # not asked for outside the TUI
    shown = preview.preview(path)  # no early job: decoded here, the same first core
    assert shown.schedule.core_ids.tolist() == [0] and started.take_first_core(path) is None


def test_the_readme_says_what_runs():
    from tests.conftest import ROOT

    text = " ".join((ROOT / "README.md").read_text().split())
    assert (f"A schedule of {started.PARALLEL_MIN_BYTES >> 20} MB or more ({started.BUSY_PARALLEL_MIN_BYTES >> 20} MB "
            "or more while other tasks keep every CPU busy) is decoded by worker processes") in text  # fmt: skip
    assert f"at most {worker_pool.MAX_WORKERS}; `IR_EXPLORER_WORKERS=N`" in text
    assert (f"a first core over {started.PREFIX_MIN_CORE_BYTES >> 20} MiB shows its first "
            f"{started.PREFIX_BYTES >> 20} MiB of workloads first") in text  # fmt: skip
    assert f"stop with it or after {worker_pool.IDLE_SECONDS:.0f} s without work" in text


def test_incidents_name_their_tensors_alike_when_workers_read_the_roles(every_size, monkeypatch):
    from explorer.api import open_document
    from explorer.formats.scheduler_ir import document as schedule_document
    from explorer.schedule.incidents import incidents_of

    def named(document):
        return [incident.to_json() for incident in incidents_of(document)]

    here = named(open_document(PLANTED))  # a small file's few roles are read in this process
    assert any(incident["roles"] for incident in here)
    monkeypatch.setattr(schedule_document, "ROLE_PREFETCH_MIN_ROWS", 0)
    document = open_document(PLANTED)
    assert document.view._role_jobs  # the workers are reading them
    assert named(document) == here
    assert not open_document(PLANTED, read_ahead=False).view._role_jobs  # what `info` opens: no incidents asked
    monkeypatch.setattr(worker_pool, "running_pool", lambda: _DeadPool())
    assert named(open_document(PLANTED)) == here  # read here when the workers fail


class _RecordingPool:
    """The shared pool, noting which cores it was asked to decode."""

    def __init__(self, pool):
        self.pool, self.cores, self.decoded, self.functions = pool, [], [], []

    def submit(self, function, *args, urgent=False):
        self.functions.append(function)
        if function is decode_core_at:
            self.cores.append(args[0].key)
            self.decoded.append(args)
        return self.pool.submit(function, *args, urgent=urgent)


def test_the_full_load_takes_the_first_core_the_preview_decoded(every_size, tmp_path, monkeypatch):
    from explorer.formats.scheduler_ir import first_core, preview

    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)
    monkeypatch.setattr(early, "PREVIEW_MIN_BYTES", 0)
    path = tmp_path / "copy_stschedule.json"
    path.write_bytes(PLANTED.read_bytes())
    here = in_process(path, monkeypatch)
    recording = _RecordingPool(worker_pool.shared_pool())
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: recording)
    early.prepare(path, interactive=True)
    loaded = load_schedule(path)  # before the preview: the load waits for the first core's decode, not redoes it
    assert sorted(recording.cores) == ["1", "2", "3"]
    # the cores' spans: looked for once, by the worker `prepare` asked, and taken by the load
    assert recording.functions.count(early._core_spans) == 1 and layout.core_spans_at not in recording.functions
    assert columns(loaded[0]) == columns(here[0]) and loaded[1] == here[1]
    early.prepare(path, interactive=True)
    assert preview.preview(path) is not None
    loaded = load_schedule(path)  # after it
    assert columns(loaded[0]) == columns(here[0]) and loaded[1] == here[1]
    early.prepare(path, interactive=True)
    started.first_core_job(path).result(timeout=60)
    path.write_bytes(PLANTED.read_bytes() + b" ")  # changed since the decode: its core is not taken
    recording.cores.clear()
    load_schedule(path)
    assert sorted(recording.cores) == ["0", "1", "2", "3"]


class _TouchingPool:
    """Runs each job here, but the file is written to as each job starts."""

    def __init__(self, path: Path):
        self.path = path

    def submit(self, function, *args):
        status = self.path.stat()
        os.utime(self.path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))
        future: Future = Future()
        try:
            future.set_result(function(*args))
        except Exception as error:
            future.set_exception(error)
        return future


def test_a_file_written_to_during_the_load_is_a_load_error_saying_so(every_size, tmp_path, monkeypatch):
    path = tmp_path / "copy_stschedule.json"
    path.write_bytes(PLANTED.read_bytes())
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: _TouchingPool(path))
    with pytest.raises(LoadError, match="changed on disk while it was being loaded") as refused:
        load_schedule(path)
    assert type(refused.value) is LoadError and str(path) in str(refused.value)


def test_wl0_layers_are_numbered_after_the_workloads_layers_in_file_order(every_size, tmp_path, monkeypatch):
    """Each core numbers its WL0 entries' layer names itself; the build numbers them file-wide after every
    workload's layer, in the order one pass over the file meets them, whether cores were decoded here or not."""
    from tests.schedules import two_core

    value = two_core()
    value["0"][0]["wl0_buffer"] = [{"address": 0, "size": 8, "layer_name": "W1"}, {"address": 8, "size": 8}]
    value["1"][1]["wl0_buffer"] = [
        {"address": 0, "size": 8, "layer_name": "W2"},
        {"address": 8, "size": 8, "layer_name": "W1"},
        {"address": 16, "size": 8, "layer_name": "C"},
    ]
    path = tmp_path / "wl0_layers_stschedule.json"
    path.write_text(json.dumps(value))
    for schedule, _problems in (in_process(path, monkeypatch), load_schedule(path)):
        assert schedule.layers == ["A", "B", "C", "D", "W1", "W2"]
        assert schedule.w0_layer.tolist() == [4, -1, 5, 4, 2]


@pytest.mark.parametrize(("setting", "lower"), [("", 0), ("5", 5), ("not a number", 0), ("40", 19)])
def test_workers_run_at_the_commands_priority_unless_asked(monkeypatch, setting, lower):
    """Issue #74: workers at nice 10 were starved on a shared box (58.8 s against 22.7 s without them)."""
    from explorer import worker_pool

    monkeypatch.setenv(worker_pool.NICE_VARIABLE, setting)
    assert worker_pool.worker_niceness() == lower
    pool = worker_pool.WorkerPool(1)
    try:
        worker_pool_nice = pool.submit(os.nice, 0).result(timeout=120)  # a job that is not urgent: lowered first
    finally:
        pool.stop()
    assert worker_pool_nice == os.nice(0) + lower


def test_workers_pay_only_on_bigger_files_while_every_cpu_is_busy(monkeypatch):
    """Issue #74 item 2: whether to use workers is decided on what the machine gives now (the crossover measured
    idle and loaded in BENCHMARKS.md)."""
    monkeypatch.setattr(started, "_cpus_busy", lambda: False)
    assert started.parallel_min_bytes() == started.PARALLEL_MIN_BYTES == 48 << 20
    monkeypatch.setattr(started, "_cpus_busy", lambda: True)
    assert started.parallel_min_bytes() == started.BUSY_PARALLEL_MIN_BYTES == 128 << 20


def test_busy_is_read_from_the_kernels_count_of_running_tasks(monkeypatch, tmp_path):
    import builtins

    real_open = builtins.open
    cpus = len(__import__("os").sched_getaffinity(0))

    def loadavg(running: int):
        def fake(path, *args, **kwargs):
            if path == "/proc/loadavg":
                (tmp_path / "loadavg").write_text(f"0.50 0.40 0.30 {running}/300 12345\n")
                return real_open(tmp_path / "loadavg", *args, **kwargs)
            return real_open(path, *args, **kwargs)
        return fake

    monkeypatch.setattr(builtins, "open", loadavg(1))  # only this process
    assert not started._cpus_busy()
    monkeypatch.setattr(builtins, "open", loadavg(cpus + 1))  # others on every CPU
    assert started._cpus_busy()
    monkeypatch.setattr(builtins, "open", loadavg(cpus))
    assert not started._cpus_busy()
