"""Overlaps grouped into incidents: a planted misplaced tensor that lands on several live tensors over several
snapshots is one incident with every tensor and its first and last workload; check prints one line per
incident and check --json lists them beside the per-pair problems."""

from __future__ import annotations

import copy
import json

from explorer import cli
from explorer.api import open_document
from explorer.schedule.incidents import find_incidents
from tests.conftest import SAMPLE_DATA

CLEAN = SAMPLE_DATA / "clean_2x2_stschedule.json"


def entry(tensor: int, address: int, size: int, new: bool) -> dict:
    return {"address": address, "size": size, "tensor_id": tensor, "type": "ifmap", "newly_added": new,
            "transfer_id": [tensor], "lower": [0, 0, 0, 0], "upper": [0, 0, 0, 0]}  # fmt: skip


def planted(tmp_path):
    """Core 0: tensor 77777 lands on 6144..8192 in workloads 2-4 (over tensors 7, 8 and 10 as they come and go);
    core 1: tensor 88888 on its first tensor in one snapshot."""
    doc = json.loads(CLEAN.read_text())
    planted_doc = copy.deepcopy(doc)
    for k, workload in enumerate(planted_doc["0"][2:5]):
        workload["buffer"].append(entry(77777, 6144, 2048, new=k == 0))
    first = planted_doc["1"][3]["buffer"][0]
    planted_doc["1"][3]["buffer"].append(entry(88888, first["address"], 64, new=True))
    path = tmp_path / "incidents_stschedule.json"
    path.write_text(json.dumps(planted_doc))
    return path, int(planted_doc["1"][3]["workload_id"]), int(first["tensor_id"])


def test_each_planted_misplacement_is_one_incident(tmp_path):
    path, core1_workload, core1_victim = planted(tmp_path)
    document = open_document(path)
    words = document.vocabulary
    incidents = find_incidents(document.schedule, document.problems, words.entry_kinds, document.view.entry_role)
    l2 = [i for i in incidents if i.code == "l2-overlap"]
    assert [(i.core, i.introduced_by) for i in l2] == [(0, 77777), (1, 88888)]
    core0, core1 = l2
    assert (core0.first_workload, core0.last_workload, core0.snapshots) == (2, 4, 3)
    assert set(core0.tensor_ids) == {77777, 7, 8, 10} and core0.tensor_ids[0] == 77777
    assert core0.pairs == len([p for p in document.problems if p.code == "l2-overlap" and p.refs["core"] == 0])
    assert core0.ranges == [[6144, 8192]] and core0.bytes == 2048
    assert "from core" in core0.roles[7] or "DRAM" in core0.roles[7]  # where a live tensor comes from
    assert (core1.first_workload, core1.last_workload, core1.tensor_ids) == (
        core1_workload, core1_workload, [88888, core1_victim])  # fmt: skip


def test_check_prints_incidents_and_lists_them_in_json(tmp_path, capsys):
    path, _, _ = planted(tmp_path)
    assert cli.main(["check", str(path)]) == 1
    text = capsys.readouterr().out
    assert "2 overlap incidents" in text
    assert "core 0: tensor 77777 (ifmap) collides with 3 tensors (7, 8, 10), 2,048 bytes, seen in 3 snapshots" in text
    assert cli.main(["check", str(path), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    first = payload["incidents"][0]
    assert first["introduced_by"] == 77777 and first["snapshots"] == 3 and first["bytes"] == 2048
    assert len([p for p in payload["problems"] if p["code"] == "l2-overlap"]) > len(payload["incidents"])


def test_the_report_starts_with_the_incidents_and_animates_the_core_with_the_most_errors(tmp_path):
    from explorer.exports.html_report import core_to_review, figures, report_html

    path, _, _ = planted(tmp_path)
    document = open_document(path)
    page = report_html(document)
    assert page.index("Overlap incidents (") < page.index("<h2>Summary</h2>")
    assert "77777 (ifmap" in page
    errors_per_core = {}
    for problem in document.problems:
        if problem.severity == "error":
            errors_per_core[problem.refs["core"]] = errors_per_core.get(problem.refs["core"], 0) + 1
    busiest = max(errors_per_core, key=lambda c: (errors_per_core[c], -c))
    assert core_to_review(document) == busiest
    occupancy = next(f for f in figures(document) if "occupancy of" in f.layout.title.text)
    assert document.schedule.core_label(busiest) in occupancy.layout.title.text


def test_odd_entries_are_reported_as_such_and_never_merged_into_a_wrong_incident(tmp_path):
    doc = json.loads(CLEAN.read_text())
    buffer = doc["0"][3]["buffer"]
    first = buffer[0]
    buffer.append(entry(first["tensor_id"], first["address"] + 10000, 64, new=True))  # one tensor, two addresses
    buffer.append(entry(55555, 100, 0, new=True))  # a tensor of no bytes
    ring_end = doc["1"][3]["ring_buffer_info"][0][1]
    doc["1"][3]["buffer"].append(entry(66666, ring_end - 64, 8000, new=True))  # wraps onto live tensors
    path = tmp_path / "odd_stschedule.json"
    path.write_text(json.dumps(doc))
    document = open_document(path)
    by_code = {}
    for problem in document.problems:
        by_code.setdefault(problem.code, []).append(problem)
    duplicate = by_code["l2-duplicate-tensor"][0]
    assert f"tensor {first['tensor_id']} is in the snapshot twice" in duplicate.message
    assert duplicate.location.startswith('$["0"][3].buffer[')
    assert by_code["l2-zero-size"][0].location.endswith(".size")
    wrapped = [p for p in by_code["l2-overlap"] if p.refs["core"] == 1]
    assert wrapped and all("wraps past its ring region's end" in p.message for p in wrapped)
    words = document.vocabulary
    incidents = find_incidents(document.schedule, document.problems, words.entry_kinds, document.view.entry_role)
    assert [(i.core, i.introduced_by) for i in incidents if i.code == "l2-overlap"] == [(1, 66666)]


def _moved_one_by_one(ptr, ids, addresses, new, row: int, t: int) -> bool:
    """The rule `_moved` applies to all pairs at once, for one id: absent here or in the snapshot before, said to
    be newly added, or at another address than before (each snapshot's first entry of the id counts)."""

    def first(r: int) -> int | None:
        if r < 0 or r >= len(ptr) - 1:
            return None
        hits = [e for e in range(ptr[r], ptr[r + 1]) if ids[e] == t]
        return hits[0] if hits else None

    here, before = first(row), first(row - 1)
    if here is None or before is None:
        return True
    return bool(new is not None and new[here] == 1) or addresses[here] != addresses[before]


def test_who_moved_is_found_for_all_pairs_at_once_as_one_by_one():
    """`_moved` (one sort of the snapshots involved) against the rule applied id by id, on random snapshots
    where ids repeat within a snapshot, appear and vanish, keep or change their address, in L2 and in WL0."""
    from types import SimpleNamespace

    import numpy as np

    from explorer.schedule.incidents import _moved

    rng = np.random.default_rng(7)
    for trial in range(40):
        counts = rng.integers(0, 6, rng.integers(1, 12))
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        n = int(ptr[-1])
        ids = rng.integers(0, 5, n).astype(np.int64)
        addresses = rng.integers(0, 3, n).astype(np.int64) * 64
        new = rng.integers(-1, 2, n).astype(np.int8)
        s = SimpleNamespace(buf_ptr=ptr, buf_tensor=ids, buf_addr=addresses, buf_new=new,
                            w0_ptr=ptr, w0_tid=ids, w0_addr=addresses)  # fmt: skip
        rows = rng.integers(0, counts.size, 15).astype(np.int64)
        pair_ids = rng.integers(0, 6, (15, 2)).astype(np.int64)  # id 5 is in no snapshot
        for code, flags in (("l2-overlap", new), ("wl0-overlap", None)):
            expected = [[_moved_one_by_one(ptr, ids, addresses, flags, int(r), int(t)) for t in pair]
                        for r, pair in zip(rows, pair_ids, strict=True)]  # fmt: skip
            assert _moved(s, code, rows, pair_ids).tolist() == expected, (trial, code)
