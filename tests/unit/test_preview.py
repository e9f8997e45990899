"""The first core of a big schedule, read from the head of the file while the rest loads (issue #14)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.document import Capability
from explorer.file_spans import FileIdentity
from explorer.formats.scheduler_ir import first_core
from explorer.formats.scheduler_ir.preview import preview, previews, read_first_core
from explorer.formats.scheduler_ir.reader import load_schedule
from tests.conftest import SAMPLE_DATA

PLANTED = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"


@pytest.fixture
def any_size(monkeypatch):
    """Previews are for big files; these tests use small ones."""
    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 0)


def first_core_columns_agree(path) -> None:
    """The preview's columns are exactly the whole load's rows of its first core."""
    part = preview(path)
    whole, _ = load_schedule(path)
    first = int(whole.core_ids[0])
    rows = whole.core_rows(first)
    schedule = part.schedule
    assert schedule.core_ids.tolist() == [first]
    assert schedule.buffersize == whole.buffersize
    for name in ("wl_id", "wl_time", "wl_pos"):
        assert getattr(schedule, name).tolist() == getattr(whole, name)[rows].tolist(), name
    lo, hi = int(whole.buf_ptr[rows[0]]), int(whole.buf_ptr[rows[-1] + 1])
    for name in ("buf_tensor", "buf_addr", "buf_size", "buf_type", "buf_new"):
        assert getattr(schedule, name).tolist() == getattr(whole, name)[lo:hi].tolist(), name
    lo, hi = int(whole.w0_ptr[rows[0]]), int(whole.w0_ptr[rows[-1] + 1])
    assert schedule.w0_addr.tolist() == whole.w0_addr[lo:hi].tolist()
    lo, hi = int(whole.in_ptr[rows[0]]), int(whole.in_ptr[rows[-1] + 1])
    assert schedule.in_tid.tolist() == whole.in_tid[lo:hi].tolist()


def test_preview_of_a_file_in_core_order_is_its_first_core(any_size):
    """The demo file's keys come in core order ("0", "1", ..., then "-1" and the numbers)."""
    first_core_columns_agree(PLANTED)
    document = preview(PLANTED)
    assert "core 0" in document.partial and document.schedule_analysis is not None
    assert [p.code for p in document.problems] == ["preview"]  # a core alone misses the other cores' producers
    assert not document.offers(Capability.GRAPH) and document.offers(Capability.TIMELINE)


def test_preview_of_a_file_with_sorted_indented_keys(any_size, tmp_path):
    """As the scheduler writes them: "-1" (the DRAM section) first, keys sorted, indented with spaces."""
    path = tmp_path / "sorted_stschedule.json"
    path.write_text(json.dumps(json.loads(PLANTED.read_text()), sort_keys=True, indent=3))
    assert json.loads(path.read_text())  # valid
    assert path.read_text().lstrip("{ \n").startswith('"-1"')
    first_core_columns_agree(path)


def test_preview_of_a_one_core_file_ends_at_the_next_key(any_size, tmp_path):
    value = json.loads(PLANTED.read_text())
    one_core = {"0": value["0"], "buffersize": value["buffersize"], "-1": value["-1"], "xlen": 1, "ylen": 1}
    path = tmp_path / "one_stschedule.json"
    path.write_text(json.dumps(one_core))
    first_core_columns_agree(path)


def test_no_preview_for_small_or_unusual_files(any_size, tmp_path, monkeypatch):
    value = json.loads(PLANTED.read_text())
    no_core_zero = tmp_path / "cores_3_4_stschedule.json"
    no_core_zero.write_text(json.dumps({"3": value["0"], "4": value["1"], "-1": value["-1"]}))
    assert read_first_core(no_core_zero) is None
    broken = tmp_path / "broken_stschedule.json"
    value["0"][2]["buffer"] = "not a list"  # the workload is kept without entries, as the full load keeps it
    broken.write_text(json.dumps(value))
    shown = preview(broken).schedule
    assert shown.n_workloads == len(value["0"]) and shown.buf_ptr[3] == shown.buf_ptr[2]
    value["0"][2]["time"] = "soon"  # a workload the typed decode refuses: no preview, the full load reports it
    broken.write_text(json.dumps(value))
    assert read_first_core(broken) is not None and preview(broken) is None
    monkeypatch.setattr(first_core, "PREVIEW_MIN_BYTES", 64 << 20)
    assert preview(PLANTED) is None  # small: loads whole in about the same time


def test_preview_reads_only_the_first_core_and_changes_nothing(any_size, tmp_path):
    path = tmp_path / "big_stschedule.json"
    value = json.loads(PLANTED.read_text())
    path.write_text(json.dumps(value) + " " * (4 << 20))  # a long tail the preview has no need to read
    before = path.stat().st_mtime_ns, path.read_bytes()
    first = read_first_core(path)
    assert first is not None and len(first.raw) < 1 << 20
    assert np.array_equal(np.frombuffer(first.raw[:1], np.uint8), np.frombuffer(b"[", np.uint8))
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def through_workloads(count: int) -> int:
    """The `prefix_bytes` that cut the demo file's first core after its first `count` workloads: one byte past
    the end of the one before (the cut is through the first workload ending at or past it)."""
    from explorer.file_spans import span_of
    from explorer.formats.scheduler_ir.lenient import raw_items

    raw = read_first_core(PLANTED).raw
    before = raw_items(raw)[count - 2]
    return span_of(before, raw)[0] + len(before) + 1


def test_the_first_workloads_of_the_first_core_are_the_whole_loads_rows(any_size):
    """A screenful before the whole first core: its first workloads, about `prefix_bytes` of them, read from the
    core's head and decoded alone, at their own positions (JSON paths and the details' reads stay the core's)."""
    found = first_core.first_core_part(PLANTED, prefix_bytes=through_workloads(3))
    whole, _ = load_schedule(PLANTED)
    assert found.prefix == 3 and found.prefix_bytes == through_workloads(4) - 1
    assert found.describe() == (f"core 0: first 3 workloads, 0 of its 0 MB (a {PLANTED.stat().st_size / 1e6:,.0f} "
                                "MB file)")  # fmt: skip
    shown = first_core.first_core_schedule(found, PLANTED)
    assert shown.wl_id.tolist() == whole.wl_id[:3].tolist() and shown.wl_pos.tolist() == [0, 1, 2]
    assert shown.buf_addr.tolist() == whole.buf_addr[: int(whole.buf_ptr[3])].tolist()
    assert shown.core_raw.item(0, 2) == whole.core_raw.item(0, 2)  # the details read the file's own workload
    everything = first_core.first_core_part(PLANTED, prefix_bytes=1 << 20)  # more than the core: all of it
    assert everything.prefix is None and everything.describe().startswith("core 0 of a")
    assert first_core.first_core_part(PLANTED, prefix_bytes=1).prefix == 1  # at least one workload
    big_only = first_core.first_core_part(PLANTED, prefix_bytes=1, cut_above=1 << 20)  # a core below the cut
    assert big_only.prefix is None and big_only.part.columns["wl_id"].size == 12


def test_a_cut_that_does_not_decode_reads_the_whole_core(any_size, tmp_path):
    """A bracket inside a string misleads the depth count: the cut it gives is refused, and the core is read and
    decoded whole (no cut rather than a wrong one)."""
    value = json.loads(PLANTED.read_text())
    value["0"][0]["layer_name"] = "conv]]]"  # three closing brackets: the count ends every workload too soon
    path = tmp_path / "brackets_stschedule.json"
    path.write_text(json.dumps(value, indent=1))
    found = first_core.first_core_part(path, prefix_bytes=10)
    assert found.prefix is None and found.part.columns["wl_id"].size == 12


def early_jobs(monkeypatch, prefix_bytes: int, cut_above: int):
    """`early.prepare` as the TUI calls it, on the demo file (small: every size allowed), with these sizes."""
    from explorer import worker_pool
    from explorer.formats.scheduler_ir import early, started

    monkeypatch.setattr(early, "parallel_min_bytes", lambda: 0)
    monkeypatch.setattr(early, "PREVIEW_MIN_BYTES", 0)
    monkeypatch.setattr(started, "PREFIX_BYTES", prefix_bytes)
    monkeypatch.setattr(started, "PREFIX_MIN_CORE_BYTES", cut_above)
    if worker_pool.shared_pool() is None:
        pytest.skip("no worker processes on this machine (one CPU, or IR_EXPLORER_WORKERS=0)")
    early.prepare(PLANTED, interactive=True)
    return started


def test_a_small_first_core_is_shown_whole_at_once_and_decoded_once(any_size, monkeypatch):
    started = early_jobs(monkeypatch, 100, PLANTED.stat().st_size)  # the core is below the cut: whole
    whole = started.first_core_job(PLANTED)
    documents = list(previews(PLANTED))
    assert [d.partial for d in documents] == [f"core 0 of a {PLANTED.stat().st_size / 1e6:,.0f} MB file"]
    assert whole.result(timeout=60).prefix is None and documents[0].schedule.n_workloads == 12
    assert started.take_first_core(PLANTED) is whole and started.take_first_look(PLANTED) is None
    started.take_spans(PLANTED, (PLANTED.stat().st_size, PLANTED.stat().st_mtime_ns))


def test_a_big_first_core_shows_its_first_workloads_then_all_of_it(any_size, monkeypatch):
    from explorer.formats.scheduler_ir.core_jobs import CoreJobs

    started = early_jobs(monkeypatch, through_workloads(3), 1000)  # a core over 1,000 bytes is big
    look = started.first_looks[PLANTED.resolve()]
    first, whole = previews(PLANTED)
    assert first.partial.startswith("core 0: first 3 workloads") and first.schedule.n_workloads == 3
    assert whole.partial.startswith("core 0 of a") and whole.schedule.n_workloads == 12
    assert started.take_first_look(PLANTED) is None  # taken once
    # the load takes the whole core's decode (the next worker's), never the first look's cut
    taken = started.take_first_core(PLANTED)
    assert taken.result(timeout=60).prefix is None and look.result().prefix == 3
    stamp = FileIdentity.of(PLANTED.stat())
    started.take_spans(PLANTED, stamp)
    jobs = CoreJobs(None, PLANTED, stamp, None, guessed=False)
    jobs.spans[0] = (look.result().first.offset, look.result().first.length)
    assert not jobs._take_previewed(0, look) and jobs._take_previewed(0, taken)


def test_the_workload_end_is_counted_a_chunk_at_a_time(monkeypatch):
    """Issue #72: a core that is one 120 MB workload peaked at 1.8 GiB (the depth's arrays over all of it)."""
    import tracemalloc

    from explorer.formats.scheduler_ir import first_core as module

    core = b'[{"a": [1, {"b": 2}]}, {"c": "x"}, {"d": [[]]}]'
    assert module._workload_end(core, 1) == 21  # the first workload's end
    assert module._workload_end(core, 22) == 33
    assert module._workload_end(core, 10_000) == 46  # none ends past it: the last
    assert module._workload_end(b'[{"a": [1, 2', 1) is None
    monkeypatch.setattr(module, "DEPTH_CHUNK", 5)  # the depth carried across chunks: the same answers
    assert [module._workload_end(core, n) for n in (1, 22, 10_000)] == [21, 33, 46]
    monkeypatch.undo()
    one_workload = b'[{"id": 0, "buffer": [' + b"[1, 2, 3, 4], " * 2_400_000 + b"[5]]}]"  # 34 MB
    tracemalloc.start()
    try:
        assert module._workload_end(one_workload, 4 << 20) == len(one_workload) - 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * module.DEPTH_CHUNK, peak  # counted over the whole core at once: about 10 bytes a byte
