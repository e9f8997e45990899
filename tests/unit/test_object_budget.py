"""The workers' load counts a file's JSON objects where it decodes each core, not in one pass over the whole file
before any worker starts (issue #43: that pass took 1.7 s of the 3 GB file's load, serially): the file is refused
when what its cores keep once decoded (`kept_estimate`, projected from the cores done) passes what is available,
and each core by its own count where it is decoded. The in-process load counts the whole file first, core by core:
what the cores keep plus the largest core while it is decoded (a correct 3 GB file of 203 million array elements
was refused as if all its cores were decoded at once: 23 GiB estimated, 2.8 GiB at its peak)."""

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
    _pieces,
    decoding_bytes,
    json_counts,
    kept_estimate,
    objects_estimate,
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
    kept = kept_estimate(path.stat().st_size, *objects)
    assert by_size < kept < by_objects < worst
    # the whole file is never counted here: its cores are
    monkeypatch.setattr(reader, "ensure_objects_fit", lambda *_: pytest.fail("a pass over the whole file"))
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: (by_size + kept) // 2)
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


def test_the_in_process_load_counts_what_the_cores_keep_and_the_largest_while_it_is_decoded(tmp_path, monkeypatch):
    path, _ = dense_schedule(tmp_path)
    size, data = path.stat().st_size, path.read_bytes()
    objects, elements = json_counts(data)
    largest = json_counts(data[data.index(b'"0":[') + 4 : data.index(b',"1":')])  # the four cores are alike
    need = kept_estimate(size, objects, elements) + decoding_bytes(*largest)
    assert need < objects_estimate(size, objects, elements) < BASE_BYTES + int(size * WORST_PER_BYTE)
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: None)
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: need - 1)
    with pytest.raises(LoadError) as refused:
        load_schedule(path)
    assert f"of {data.count(b'{'):,} JSON objects and {elements:,} array elements" in str(refused.value)
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: need)  # refused before, as if decoded at once
    assert load_schedule(path)[0].n_workloads == 4


def test_one_core_is_the_whole_file_while_it_is_decoded(tmp_path, monkeypatch):
    path, _ = dense_schedule(tmp_path, cores=1)
    size, data = path.stat().st_size, path.read_bytes()
    objects, elements = json_counts(data)
    core = json_counts(data[data.index(b'"0":[') + 4 : data.index(b',"-1":')])
    need = kept_estimate(size, objects, elements) + decoding_bytes(*core)
    assert need > objects_estimate(size, objects, elements)
    monkeypatch.setattr(worker_pool, "shared_pool", lambda: None)
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: need - 1)
    with pytest.raises(LoadError):
        load_schedule(path)


def test_the_file_is_cut_into_its_cores_and_the_bytes_between():
    assert _pieces(100, [(10, 20), (40, 10)]) == [(0, 10), (10, 30), (30, 40), (40, 50), (50, 100)]
    assert _pieces(50, [(0, 50)]) == [(0, 50)]
    assert _pieces(7, []) == [(0, 7)]


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
