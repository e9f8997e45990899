"""Analyses against values worked out by hand (see the docstrings in tests/schedules.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.api import open_document
from explorer.schedule.overlap import overlapping_pairs
from tests.conftest import SAMPLE_DATA
from tests.schedules import core, entry, two_core, workload


def codes(doc, severity=None):
    return sorted(p.code for p in doc.problems if severity is None or p.severity == severity)


def test_dependency_timeline_and_critical_path(write_json):
    doc = open_document(write_json(two_core()))
    t = doc.schedule_analysis.timeline
    assert t.start.tolist() == [0, 10, 10, 17]
    assert t.end.tolist() == [10, 15, 17, 20]
    assert t.start_sequential.tolist() == [0, 10, 0, 7]
    assert (t.makespan, t.makespan_sequential) == (20, 15)
    assert t.critical_path == [0, 2, 3]  # A → C → D
    assert t.per_core[0] == {"workloads": 2, "busy": 15, "end": 15, "idle": 0}
    assert t.per_core[1] == {"workloads": 2, "busy": 10, "end": 20, "idle": 10}


def test_spilled_tensor_waits_for_its_dram_write(write_json):
    # C reads transfer 9, a DRAM read of the tensor A wrote to DRAM as transfer 8 (related_ifmap [8]).
    doc_json = two_core()
    a, c = doc_json["0"][0], doc_json["1"][0]
    a["ofmap"].append({"transfer_id": 8, "size": 16, "destination": [{"type": "DRAM", "core_id": -1}]})
    doc_json["-1"]["in"].append({"core_id": 0, "workload_id": 0, "transfer_id": 8, "related_ofmap": [9]})
    doc_json["-1"]["out"].append(
        {
            "transfer_id": 9,
            "type": "fmap",
            "size": 16,
            "related_ifmap": [8],
            "destination": [{"core_id": 1, "workload_id": 0, "type": "core"}],
        }
    )
    c["ifmap"][0]["transfer_id"] = [9]
    a["ofmap"][0]["destination"] = [core(0, 1)]
    doc = open_document(write_json(doc_json))
    assert codes(doc) == []
    assert doc.schedule_analysis.timeline.start.tolist()[2] == 10  # C still waits for A, through DRAM


def test_ring_wrap_overlap_range_and_capacity(write_json):
    doc_json = two_core()
    doc_json["buffersize"] = 200
    doc_json["0"][0]["ring_buffer_info"] = [[0, 100], [100, 200]]
    doc_json["0"][0]["buffer"] = [
        entry(1, 90, 20),  # wraps: [90, 100) and [0, 10)
        entry(2, 5, 10),  # [5, 15): overlaps the wrapped part at [5, 10)
        entry(3, 15, 10),  # [15, 25): touches 2, no overlap
        entry(4, 100, 100, "weight"),  # fills region 1 exactly
    ]
    doc_json["0"][1]["ring_buffer_info"] = [[0, 100], [100, 200]]
    doc_json["0"][1]["buffer"] = [entry(5, 250, 10), entry(6, 0, 150, "weight")]
    doc = open_document(write_json(doc_json))
    problems = {p.code: p for p in doc.problems}
    assert codes(doc) == ["l2-out-of-range", "l2-over-capacity", "l2-overlap"]
    overlap = problems["l2-overlap"]
    assert overlap.refs == {"core": 0, "workload_id": 0, "tensor_ids": [1, 2], "range": [5, 10]}
    assert "0x5-0xa" in overlap.message
    assert problems["l2-out-of-range"].refs["tensor_ids"] == [5]
    assert problems["l2-over-capacity"].refs["tensor_ids"] == [6]  # 150 bytes in a 100-byte region


def test_snapshot_larger_than_l2(write_json):
    doc_json = two_core()
    doc_json["buffersize"] = 64
    doc_json["0"][0]["ring_buffer_info"] = []
    doc_json["0"][0]["buffer"] = [entry(1, 0, 40), entry(2, 40, 40)]
    doc = open_document(write_json(doc_json))
    assert "l2-over-capacity" in codes(doc) and "l2-out-of-range" in codes(doc)
    assert doc.summary["peak_l2_bytes"] == 80


def test_wl0_overlap(write_json):
    doc_json = two_core()
    doc_json["0"][0]["wl0_buffer"] = [
        {"address": 0, "size": 32, "source": "CORE", "transfer_id": [0], "layer_name": "A"},
        {"address": 16, "size": 32, "source": "DDR", "transfer_id": [5], "layer_name": "B"},
        {"address": 48, "size": 8, "source": "DDR", "transfer_id": [6], "layer_name": "B"},
    ]
    doc = open_document(write_json(doc_json))
    [problem] = doc.problems
    assert problem.code == "wl0-overlap" and problem.refs["range"] == [16, 32]
    assert problem.location == '$["0"][0].wl0_buffer[1]'


def mutate(write_json, change):
    doc_json = two_core()
    change(doc_json)
    return open_document(write_json(doc_json))


def test_unresolved_transfer(write_json):
    def change(d):
        d["1"][1]["ifmap"][1]["transfer_id"] = [77]

    doc = mutate(write_json, change)
    problem = next(p for p in doc.problems if p.code == "unresolved-transfer")
    assert problem.refs == {"transfer_id": 77, "core": 1, "workload_id": 1}


def test_duplicate_ofmap_transfer(write_json):
    def change(d):
        d["1"][0]["ofmap"][0]["transfer_id"] = 2

    assert "duplicate-transfer-id" in codes(mutate(write_json, change), "error")


def test_dram_write_without_ofmap(write_json):
    def change(d):
        d["-1"]["in"][0]["transfer_id"] = 9

    assert codes(mutate(write_json, change), "error") == ["dram-write-missing", "dram-write-unmatched"]


def test_dram_write_names_the_wrong_producer(write_json):
    def change(d):
        d["-1"]["in"][0]["workload_id"] = 0

    doc = mutate(write_json, change)
    assert codes(doc, "error") == ["dram-write-unmatched"]
    assert "names core 1 workload 0" in doc.problems[0].message


def test_dangling_related_links(write_json):
    def change(d):
        d["-1"]["in"][0]["related_ofmap"] = [42]
        d["-1"]["out"][0]["related_ifmap"] = [43]

    assert codes(mutate(write_json, change), "error") == ["dangling-related", "dangling-related"]


def test_in_and_out_sharing_an_id(write_json):
    def change(d):
        d["-1"]["out"].append({"transfer_id": 4, "type": "fmap", "size": 1, "related_ifmap": [], "destination": []})

    assert "transfer-id-collision" in codes(mutate(write_json, change), "error")


def test_dependency_cycle(write_json):
    def change(d):
        d["0"][0]["ifmap"][0]["transfer_id"] = [2]  # A waits for B, which runs after A on the same core

    doc = mutate(write_json, change)
    assert "dependency-cycle" in codes(doc, "error")
    # A and B wait on each other; C reads A's output and D reads B's and C's: none of them can start.
    assert doc.schedule_analysis.timeline.cycle_rows == [0, 1, 2, 3]


def test_soft_warnings(write_json):
    def change(d):
        d["0"][0]["ofmap"][0]["destination"] = [core(0, 1)]  # C no longer listed
        d["1"][1]["workload_id"] = 5  # not its index (the DRAM write names it by that id)
        d["-1"]["in"][0]["workload_id"] = 5
        d["0"][1]["ofmap"][0]["destination"] = [core(1, 5)]
        d["1"][0]["ofmap"][0]["destination"] = [core(1, 5)]
        d["0"][0]["buffer"] = [entry(1, 0, 8, new=True), entry(2, 8, 8, new=True)]
        d["0"][1]["buffer"] = [entry(1, 16, 8, new=False), entry(2, 8, 8, new=True)]  # 1 moved; 2 is not new

    doc = mutate(write_json, change)
    assert codes(doc, "error") == []
    assert codes(doc, "warning") == [
        "destination-missing",
        "newly-added-mismatch",
        "tensor-moved",
        "workload-id-mismatch",
    ]


def test_snapshot_warnings_are_alike_for_tensor_ids_far_apart(write_json):
    """Tensor ids too far apart for (row, id) keys to fit in 64 bits are ranked first: the same moved tensor and
    the same wrong newly_added flag are found as with small ids."""
    for far in (2, 2**62):

        def change(d, far=far):
            d["0"][0]["buffer"] = [entry(1, 0, 8, new=True), entry(far, 8, 8, new=True)]
            d["0"][1]["buffer"] = [entry(1, 16, 8, new=False), entry(far, 8, 8, new=True)]  # 1 moved; far not new

        wanted = ("tensor-moved", "newly-added-mismatch")
        found = [(p.code, p.refs["tensor_ids"]) for p in mutate(write_json, change).problems if p.code in wanted]
        assert found == [("tensor-moved", [1]), ("newly-added-mismatch", [far])]


intervals = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(0, 20), st.integers(0, 5)), max_size=40
)


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_sweep_finds_exactly_the_brute_force_pairs(items):
    group = np.array([i[0] for i in items], dtype=np.int64)
    lo = np.array([i[1] for i in items], dtype=np.int64)
    hi = lo + np.array([i[2] for i in items], dtype=np.int64)
    owner = np.array([i[3] for i in items], dtype=np.int64)
    pairs, truncated = overlapping_pairs(group, lo, hi, owner)
    found = {(min(p.a, p.b), max(p.a, p.b), p.lo, p.hi) for p in pairs}
    expected = set()
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            shared_lo, shared_hi = max(lo[a], lo[b]), min(hi[a], hi[b])
            if group[a] == group[b] and owner[a] != owner[b] and shared_hi > shared_lo:
                expected.add((a, b, int(shared_lo), int(shared_hi)))
    assert not truncated
    assert found == expected


@settings(max_examples=100, deadline=None)
@given(intervals, st.integers(1, 6), st.integers(1, 30))
def test_sweep_in_small_batches_and_with_a_limit_lists_pairs_in_scan_order(items, batch, limit):
    """Candidates are tested in batches; the pairs come as a scan back from each suspect meets them, so a limit
    keeps the same first pairs whatever the batch size."""
    from explorer.schedule import overlap

    columns = [np.array([i[k] for i in items], dtype=np.int64) for k in range(4)]
    group, lo, owner = columns[0], columns[1], columns[3]
    hi = lo + columns[2]
    whole, _ = overlapping_pairs(group, lo, hi, owner)
    saved = overlap.CANDIDATES_PER_BATCH
    try:
        overlap.CANDIDATES_PER_BATCH = batch
        batched, _ = overlapping_pairs(group, lo, hi, owner)
        limited, truncated = overlapping_pairs(group, lo, hi, owner, limit=limit)
    finally:
        overlap.CANDIDATES_PER_BATCH = saved
    assert batched == whole
    assert limited == whole[:limit] and truncated == (len(whole) >= limit)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 3)), max_size=30),
       st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 3)), max_size=30))  # fmt: skip
def test_rows_present_is_set_membership(query, table):
    from explorer.schedule.dependencies import rows_present

    def columns(rows):
        return tuple(np.array([r[k] for r in rows], dtype=np.int64) for k in range(2))

    assert rows_present(columns(query), columns(table)).tolist() == [row in set(table) for row in query]


def test_planted_workload_in_the_middle(write_json):
    # A three-workload core where the middle one reads an output from core 1's second workload.
    d = two_core()
    d["0"].append(workload(2, "E", 4, [3], 5, [core(0, 3)]))
    d["1"][0]["ofmap"][0]["destination"].append(core(0, 2))
    d["0"].append(workload(3, "F", 1, [5], 6, [{"type": "DRAM", "core_id": -1}]))
    d["-1"]["in"].append({"core_id": 0, "workload_id": 3, "transfer_id": 6})
    doc = open_document(write_json(d))
    assert codes(doc) == []
    t = doc.schedule_analysis.timeline
    # E starts at max(B ends 15, C ends 17) = 17, ends 21; F 21–22. Makespan 22 (D ends at 20).
    assert t.start.tolist()[2:4] == [17, 21] and t.makespan == 22


def test_format_checks_hear_the_timeline_and_keep_their_place(write_json):
    """analyze_schedule gives the format's checks the timeline and the read-ahead hook the overlapping rows:
    each hook hears what it needs, and an error in one is raised to the caller."""
    from explorer.errors import Problem
    from explorer.schedule.analysis import analyze_schedule

    doc = open_document(write_json(two_core()))
    heard: dict[str, object] = {}
    marker = Problem("error", "planted", "from the timeline checks", "$")

    def timeline_checks(timeline):
        heard["timeline"] = timeline
        return [marker]

    analysis = analyze_schedule(
        doc.schedule, timeline_checks=timeline_checks, overlaps_found=lambda rows: heard.update(overlaps=rows)
    )
    assert heard["timeline"].result() is analysis.timeline  # given as a PendingTimeline
    assert "overlaps" not in heard  # a clean schedule: nothing to read ahead
    assert analysis.timeline_problems == [marker]

    planted = open_document(SAMPLE_DATA / "planted_problems_2x2_stschedule.json").schedule
    analysis = analyze_schedule(planted, overlaps_found=lambda rows: heard.update(overlaps=rows))
    overlaps = [p.refs for p in analysis.problems if p.code == "l2-overlap"]
    rows = sorted(set(planted.rows_of([r["core"] for r in overlaps], [r["workload_id"] for r in overlaps]).tolist()))
    assert rows and heard["overlaps"] == rows  # heard before the problems were written, the same rows

    def broken(_timeline):
        raise ValueError("planted")

    with pytest.raises(ValueError, match="planted"):
        analyze_schedule(doc.schedule, timeline_checks=broken)


def test_the_timelines_pass_in_a_worker_gives_what_it_gives_here(write_json):
    """With a worker pool's submit, the topological pass runs in a worker while the checks run here; the
    timeline and every problem (a dependency cycle's in its place among the transfer checks) are the same, and
    a worker that dies leaves the pass to this process."""
    from concurrent.futures import Future

    from explorer import worker_pool
    from explorer.formats.scheduler_ir.checks import transfer_problems
    from explorer.schedule.analysis import analyze_schedule

    pool = worker_pool.shared_pool()
    if pool is None:
        pytest.skip("no worker processes on this machine (one CPU, or IR_EXPLORER_WORKERS=0)")
    cycle = two_core()
    cycle["0"][0]["ifmap"][0]["transfer_id"] = [2]  # A waits for B, which runs after A on the same core
    cycle["1"][0]["ofmap"][0]["transfer_id"] = 1  # and a duplicate transfer id: an error before the cycle's
    submitted = []

    def elsewhere(function, *args):
        submitted.append(function.__name__)
        return pool.submit(function, *args)

    def died(function, *args):
        future: Future = Future()
        future.set_exception(worker_pool.WorkerDied("planted"))
        return future

    for path in (SAMPLE_DATA / "planted_problems_2x2_stschedule.json", write_json(cycle)):
        schedule = open_document(path).schedule

        def checks(pending, schedule=schedule):
            return transfer_problems(schedule, lambda: pending.result().cycle_rows)

        here = analyze_schedule(schedule, timeline_checks=checks)
        for how in (elsewhere, died):
            there = analyze_schedule(schedule, timeline_checks=checks, elsewhere=how)
            for name in ("start", "end", "set_by", "start_sequential"):
                assert np.array_equal(getattr(there.timeline, name), getattr(here.timeline, name), equal_nan=True)
            assert (there.timeline.critical_path, there.timeline.cycle_rows) == (here.timeline.critical_path,
                                                                                 here.timeline.cycle_rows)  # fmt: skip
            assert there.timeline_problems == here.timeline_problems and there.problems == here.problems
    assert submitted == ["kahn_pass", "kahn_pass"]
    codes_found = [p.code for p in here.timeline_problems]
    assert codes_found.index("duplicate-transfer-id") < codes_found.index("dependency-cycle")
