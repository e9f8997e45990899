"""The workers' load counts a file's JSON objects where it decodes each core, not in one pass over the whole file
before any worker starts (issue #43: that pass took 1.7 s of the 3 GB file's load, serially). The rule stays the
one the in-process load keeps: refuse when `max(1.75 × the size, 96 × the objects)` plus the base passes what is
available; the total is projected from the cores done, and each core is refused by its own count where it is
decoded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer import memory_guard, worker_pool
from explorer.errors import LoadError
from explorer.file_spans import FileIdentity
from explorer.formats.scheduler_ir import reader
from explorer.formats.scheduler_ir.core_jobs import CoreJob, decode_core_at
from explorer.formats.scheduler_ir.memory_budget import (
    MEMORY_PER_ELEMENT,
    MEMORY_PER_FILE_BYTE,
    MEMORY_PER_OBJECT,
    WORST_PER_BYTE,
    ObjectBudget,
    json_counts,
)
from explorer.formats.scheduler_ir.reader import load_schedule
from explorer.memory_guard import BASE_BYTES
from tests.unit.test_parallel_load import every_size  # noqa: F401  (a fixture: workers for files of any size)

# An L2 entry with ten empty objects the decoder skips: dense in `{` (one in 8 bytes), cheap to decode
ENTRY = '{"tensor_id":0,"type":"ifmap","address":0,"size":8,"x":[{},{},{},{},{},{},{},{},{},{}]}'


def dense_schedule(folder: Path, cores: int = 4, entries: int = 4000) -> tuple[Path, tuple[int, int]]:
    """A valid schedule whose cores are dense in JSON objects: (its path, the objects and array elements of its
    cores, as the loader counts them)."""
    workload = ('{"workload_id":%d,"layer_name":"L","layer_type":"pe","time":1.0,"ifmap":[],"ofmap":[],'
                '"buffer":[' + ",".join([ENTRY] * entries) + "]}")  # fmt: skip
    body = ",".join(f'"{core}":[{workload % core}]' for core in range(cores))
    text = '{' + body + ',"-1":{"in":[],"out":[]},"buffersize":1048576,"top_batch_cut":1,"xlen":2,"ylen":2}'
    path = folder / "dense_stschedule.json"
    path.write_text(text)
    counts = [json_counts(f"[{workload % core}]".encode()) for core in range(cores)]
    return path, (sum(c[0] for c in counts), sum(c[1] for c in counts))


def estimates(path: Path, counted: tuple[int, int]) -> tuple[int, int, int]:
    """(by the size, by the objects and elements, the worst case): each with the base, as the loader computes them."""
    size = path.stat().st_size
    objects, elements = counted
    return (BASE_BYTES + int(size * MEMORY_PER_FILE_BYTE),
            BASE_BYTES + objects * MEMORY_PER_OBJECT + elements * MEMORY_PER_ELEMENT,
            BASE_BYTES + int(size * WORST_PER_BYTE))  # fmt: skip


@pytest.mark.usefixtures("every_size")
def test_the_workers_load_refuses_by_the_objects_its_cores_counted(tmp_path, monkeypatch):
    path, objects = dense_schedule(tmp_path)
    by_size, by_objects, worst = estimates(path, objects)
    assert by_size < by_objects < worst
    # the whole file is never counted here: its cores are
    monkeypatch.setattr(reader, "ensure_objects_fit", lambda *_: pytest.fail("a pass over the whole file"))
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: (by_size + by_objects) // 2)
    with pytest.raises(LoadError) as refused:
        load_schedule(path)
    message = str(refused.value)
    assert "JSON objects (projected from the cores read so far)" in message and "MEMORY_GUARD=off" in message
    # with room for the objects (not for the worst case: they are still counted), it loads
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: (by_objects + worst) // 2)
    counted = []
    monkeypatch.setattr(ObjectBudget, "add", lambda self, n, length: counted.append(n))
    schedule, _ = load_schedule(path)
    assert schedule.n_workloads == 4 and len(counted) == 4
    assert (sum(c[0] for c in counted), sum(c[1] for c in counted)) == objects
    # where even the worst case fits, nothing is counted
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: worst * 2)
    counted.clear()
    assert load_schedule(path)[0].n_workloads == 4 and counted == []


def test_the_in_process_load_counts_the_whole_file_first(tmp_path, monkeypatch):
    path, objects = dense_schedule(tmp_path)
    by_size, by_objects, _ = estimates(path, objects)
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: None)
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: (by_size + by_objects) // 2)
    with pytest.raises(LoadError) as refused:
        load_schedule(path)
    assert f"of {path.read_bytes().count(b'{'):,} JSON objects and " in str(refused.value)


def test_a_core_is_refused_by_its_own_count_where_it_is_decoded(tmp_path, monkeypatch):
    path, objects = dense_schedule(tmp_path, cores=1)
    status = path.stat()
    text = path.read_bytes()
    start = text.index(b'"0":[') + 4
    span = (start, text.index(b',"-1"') - start)
    need_one = BASE_BYTES + objects[0] * MEMORY_PER_OBJECT + objects[1] * MEMORY_PER_ELEMENT
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: need_one + 1)
    stamp = FileIdentity.of(status)
    part = decode_core_at(CoreJob(str(path), stamp, "0", span, count_objects=1))
    assert part.objects == objects and part.columns is not None
    with pytest.raises(LoadError) as refused:  # two cores decoded at once: twice the room asked
        decode_core_at(CoreJob(str(path), stamp, "0", span, count_objects=2))
    said = str(refused.value)
    assert refused.value.location == '$["0"]' and f"{objects[0]:,} JSON objects and {objects[1]:,}" in said
    assert decode_core_at(CoreJob(str(path), stamp, "0", span)).objects is None  # not asked: not counted


def test_the_budget_projects_the_total_from_the_cores_done(tmp_path):
    path = tmp_path / "x_stschedule.json"
    size = 10_000_000
    budget = ObjectBudget(path, size, BASE_BYTES + 1_000_000 * MEMORY_PER_OBJECT)
    budget.add(None, 5_000_000)  # a core not counted adds nothing
    budget.add((400_000, 0), 5_000_000)  # half the file: 800,000 projected, fits
    with pytest.raises(LoadError) as refused:
        budget.add((700_000, 0), 2_500_000)  # 1,100,000 in 7.5 MB: 1,466,666 projected
    assert "about 0 array elements and 1,466,666 JSON objects" in str(refused.value)
    assert json.dumps(str(refused.value))  # a plain message
