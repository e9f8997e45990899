"""Each core's L2 regions and overlaps, and its snapshot checks' findings, are worked out by that core's decode
(in a worker process for a big file) and joined by the load: the joined answer is what the checks work out over
the whole schedule, for every file and every limit on the pairs listed; an L2 answer worked out for another
buffer size is not used."""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest

from explorer.formats.scheduler_ir.checks import transfer_problems
from explorer.formats.scheduler_ir.reader import load_schedule
from explorer.schedule import buffers
from explorer.schedule.buffers import l2_problems, place_l2_entries
from tests.conftest import SAMPLE_DATA, SAMPLES
from tests.schedules import entry, two_core
from tests.unit.test_parallel_load import PLANTED, every_size, in_process  # noqa: F401


def analysed(schedule) -> tuple[dict, list]:
    placement = place_l2_entries(schedule)
    arrays = {field.name: getattr(placement, field.name).tolist() for field in dataclasses.fields(placement)}
    return arrays, l2_problems(schedule, placement)


def worked_out_whole(schedule):
    return dataclasses.replace(schedule, l2_known=None, snapshots_known=None)


def snapshot_warnings(schedule) -> list:
    return [p for p in transfer_problems(schedule, lambda: []) if p.code in ("tensor-moved", "newly-added-mismatch")]


def moves_and_flags_on_both_cores() -> dict:
    """Tensors that move and newly_added flags that are wrong, on both cores, some ids shared between cores."""
    value = wrapping_on_both_cores()
    value["0"][0]["buffer"] = [entry(1, 0, 8, new=True), entry(2, 8, 8, new=True), entry(3, 20, 4, new=False)]
    value["0"][1]["buffer"] = [entry(1, 16, 8, new=False), entry(2, 8, 8, new=True), entry(3, 24, 4)]
    value["1"][0]["buffer"] = [entry(2, 40, 8, new=True), entry(1, 0, 8, new=False)]
    value["1"][1]["buffer"] = [entry(2, 48, 8, new=False), entry(1, 0, 16, new=True), entry(4, 60, 4, new=True)]
    return value


def wrapping_on_both_cores() -> dict:
    """Overlaps on both cores, one of them in the part of a tensor that wraps past its ring region's end."""
    value = two_core()
    value["buffersize"] = 200
    for key in ("0", "1"):
        for workload in value[key]:
            workload["ring_buffer_info"] = [[0, 100], [100, 200]]
    value["0"][0]["buffer"] = [entry(1, 90, 20), entry(2, 5, 10), entry(3, 8, 4), entry(4, 100, 100, "weight")]
    value["0"][1]["buffer"] = [entry(1, 90, 20), entry(5, 250, 10), entry(6, 0, 150, "weight")]
    value["1"][1]["buffer"] = [entry(7, 120, 30), entry(8, 140, 30), entry(9, 145, 2)]
    return value


def test_the_cores_answers_joined_are_the_whole_schedules(write_json):
    paths = [PLANTED, SAMPLE_DATA / "clean_2x2_stschedule.json", write_json(wrapping_on_both_cores())]
    if SAMPLES.is_dir():
        paths += sorted((SAMPLES / "scheduler_ir").glob("*_stschedule.json"))
    for path in paths:
        schedule, _ = load_schedule(path)
        assert schedule.l2_known is not None, path.name
        assert analysed(schedule) == analysed(worked_out_whole(schedule)), path.name
        assert schedule.snapshots_known is not None, path.name
        assert snapshot_warnings(schedule) == snapshot_warnings(worked_out_whole(schedule)), path.name
    found = load_schedule(paths[2])[0].l2_known.overlaps.found  # rows 0-1 on core 0, rows 2-3 on core 1
    assert found[:, 0].tolist() == [0, 0, 0, 1, 1, 3, 3, 3]
    assert found[:, 3].tolist() == [1, 0, 1, 1, 0, 0, 0, 0]  # 1: the pair meets in tensor 1's wrapped part


@pytest.mark.parametrize("limit", [*range(1, 10), 100])
def test_a_limit_reached_on_one_core_is_reached_for_all(write_json, monkeypatch, limit):
    monkeypatch.setattr(buffers, "MAX_LISTED", limit)
    schedule, _ = load_schedule(write_json(wrapping_on_both_cores()))
    joined, whole = analysed(schedule), analysed(worked_out_whole(schedule))
    assert joined == whole
    truncated = [problem for problem in whole[1] if problem.code == "l2-overlap-truncated"]
    assert len(truncated) == (limit < 8)  # eight pairs in all: a limit of eight lists them all
    if truncated:
        assert truncated[0].message == f"8 L2 overlaps in all; the first {limit} are listed"


@pytest.mark.usefixtures("every_size")
def test_an_answer_for_another_buffer_size_is_worked_out_again(tmp_path, monkeypatch):
    """The workers take the buffer size from the file's last bytes; a file that says it first is placed again."""
    value = json.loads(PLANTED.read_text())
    first = {"buffersize": value.pop("buffersize"), **copy.deepcopy(value)}
    path = tmp_path / "size_first_stschedule.json"
    path.write_text(json.dumps(first))
    parallel, parallel_problems = load_schedule(path)
    here, here_problems = in_process(path, monkeypatch)
    assert parallel.l2_known is None and here.l2_known is not None  # the workers guessed 0 bytes
    assert parallel.buffersize == here.buffersize > 0 and parallel_problems == here_problems
    assert analysed(parallel) == analysed(here)
    assert np.array_equal(here.l2_known.region_lo, place_l2_entries(parallel).region_lo)


def test_a_schedule_made_with_other_l2_columns_is_worked_out_again(write_json):
    """What the cores found is bound to the columns it describes: a schedule made from another with moved
    tensors (as the review benchmark plants overlaps) gets its own placement and overlaps."""
    schedule, _ = load_schedule(write_json(wrapping_on_both_cores()))
    address = schedule.buf_addr.copy()
    address[3] = 8  # tensor 4 onto tensor 3 in the first snapshot (it now wraps in the first ring region)
    moved = dataclasses.replace(schedule, buf_addr=address)
    assert analysed(moved) == analysed(worked_out_whole(moved)) != analysed(schedule)
    pairs = {tuple(p.refs["tensor_ids"]) for p in analysed(moved)[1] if p.code == "l2-overlap"}
    assert {(1, 4), (2, 4), (3, 4)} <= pairs


def test_the_cores_snapshot_findings_joined_are_the_whole_schedules(write_json):
    schedule, _ = load_schedule(write_json(moves_and_flags_on_both_cores()))
    joined = snapshot_warnings(schedule)
    assert joined == snapshot_warnings(worked_out_whole(schedule))
    found = [(p.code, p.refs["core"], p.refs["workload_id"], p.refs["tensor_ids"]) for p in joined]
    assert found == [  # moves by core, tensor and workload; flags in file order
        ("tensor-moved", 0, 1, [1]), ("tensor-moved", 0, 1, [3]), ("tensor-moved", 1, 1, [1]),
        ("tensor-moved", 1, 1, [2]), ("newly-added-mismatch", 0, 1, [2]), ("newly-added-mismatch", 1, 1, [1]),
    ]  # fmt: skip
    address = schedule.buf_addr.copy()
    address[4] = 9  # tensor 2 moves in core 0's second snapshot: what the cores found is not used for that
    moved = dataclasses.replace(schedule, buf_addr=address)
    assert snapshot_warnings(moved) == snapshot_warnings(worked_out_whole(moved)) != joined
    assert ("tensor-moved", [2]) in [(p.code, p.refs["tensor_ids"]) for p in snapshot_warnings(moved)]
