"""Memory explained (issue #42): every definition in explorer/schedule/pressure.py held on hand-made schedules
worked out by hand, and `relocate` proving a suggestion (the incident gone, none added, the input untouched)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import cli
from explorer.api import open_document
from explorer.schedule.incidents import incidents_of
from explorer.schedule.pressure import packing_text, pressure_of, worst_line
from explorer.schedule.rooms import residency
from tests.schedules import DRAM, entry, workload


def one_core(snapshots: list[list[dict]], ring: list[list[int]] | None = None, buffersize: int = 1024) -> dict:
    """Core 0 with one workload per snapshot (ids 0, 1, ...), each writing its output to DRAM."""
    return {
        "-1": {"in": [], "out": []},
        "0": [
            workload(k, f"L{k}", 1, [], 100 + k, [DRAM], buffer=buffer, ring=ring if ring is not None else [])
            for k, buffer in enumerate(snapshots)
        ],
        "buffersize": buffersize, "top_batch_cut": 1, "xlen": 1, "ylen": 1,
    }  # fmt: skip


def opened(write_json, value: dict):
    document = open_document(write_json(value))
    incidents = [i for i in incidents_of(document) if i.code == "l2-overlap"]
    pressure = pressure_of(document)
    pressure.explain(incidents)
    return document, pressure, incidents


def test_live_peak_high_water_packing_and_fragmentation(write_json):
    # Snapshot 0: [0,100) and [300,400): live 200, free [100,300) and [400,1024): 200 + 624; largest 624.
    # Snapshot 1: [0,100), [300,400), [500,700): live 400 (the peak, first reached here), free 200+100+324.
    # Snapshot 2: [0,100), [500,700): live 300 (peak not reached again), high water stays 700.
    snapshots = [
        [entry(1, 0, 100), entry(2, 300, 100)],
        [entry(1, 0, 100), entry(2, 300, 100), entry(3, 500, 200)],
        [entry(1, 0, 100), entry(3, 500, 200), entry(4, 0, 0)],
    ]
    _, pressure, _ = opened(write_json, one_core(snapshots))
    free = pressure.free
    assert free.live.tolist() == [200, 400, 300]
    assert free.free_total.tolist() == [824, 624, 724]
    assert free.largest_free.tolist() == [624, 324, 400]
    assert free.fragmentation.round(4).tolist() == [round(1 - 624 / 824, 4), round(1 - 324 / 624, 4),
                                                    round(1 - 400 / 724, 4)]  # fmt: skip
    [core] = pressure.cores
    assert (core.peak_bytes, core.peak_workload, core.high_water, core.capacity) == (400, 1, 700, 1024)
    assert core.packing == pytest.approx(400 / 700)
    assert core.max_fragmentation == pytest.approx(1 - 324 / 624) and core.max_fragmentation_workload == 1
    assert [(t["tensor_id"], t["bytes"], t["address"]) for t in core.live_at_peak] == [
        (3, 200, 500), (1, 100, 0), (2, 100, 300)]  # largest first, ties by tensor id  # fmt: skip


def test_packing_over_one_is_said_to_be_overlapping_tensors(write_json):
    # [0,300) and [100,300) live together: 500 bytes in a span whose high water is 300, which only an overlap
    # can make; the number stays in --json, the words say what it means
    _, pressure, incidents = opened(write_json, one_core([[entry(1, 0, 300), entry(2, 100, 200)]]))
    [core] = pressure.cores
    assert incidents and core.packing == pytest.approx(500 / 300)
    assert packing_text(core.packing) == "1.67 (over 1: tensors overlap)" and packing_text(0.5) == "0.50"
    assert "packing 1.67 (over 1: tensors overlap)" in worst_line({"0": core.to_json()})


def test_free_blocks_never_span_a_ring_region_boundary(write_json):
    # Regions [0,100) and [100,200) of a 200-byte L2; tensor 1 wraps in region 0: [90,100) + [0,10).
    # Region 0 free: [10,90) = 80; region 1 free: [100,150) = 50 and [170,200) = 30. [90..100) and [100..150)
    # touch at the boundary but are two blocks: the largest is 80, not 60.
    snapshots = [[entry(1, 90, 20), entry(2, 150, 20)]]
    _, pressure, _ = opened(write_json, one_core(snapshots, ring=[[0, 100], [100, 200]], buffersize=200))
    assert pressure.free.free_total.tolist() == [160]
    assert pressure.free.largest_free.tolist() == [80]
    [core] = pressure.cores
    assert core.high_water == 170  # the wrapped piece ends at 10; tensor 2 at 170


def planted_with_room() -> dict:
    """Tensor 9 (64 bytes) lands on tensor 1 ([0, 100)) at 40 in snapshots 1-2 of 4; tensor 5 takes [200, 263) in
    snapshot 2. Free in both: [100, 200) and [263, 1024); the lowest multiple of 8 where 64 bytes fit is 104."""
    return one_core([
        [entry(1, 0, 100)],
        [entry(1, 0, 100), entry(9, 40, 64, new=True)],
        [entry(1, 0, 100), entry(9, 40, 64, new=False), entry(5, 200, 63)],
        [entry(1, 0, 100)],
    ])  # fmt: skip


def test_a_planted_overlap_with_room_gets_the_lowest_aligned_free_address(write_json):
    _, _, [incident] = opened(write_json, planted_with_room())
    assert incident.introduced_by == 9
    assert incident.suggestion == {"address": 104, "end": 168, "residency": [1, 2], "home_workload": None}
    assert incident.shortfall_bytes is None and incident.region == [0, 1024]
    assert incident.region_largest_free == 1024 - 264  # [100, 200) and [263, 1024): from 264, 760 bytes
    assert incident.context["live_bytes"] == 164 and incident.context["capacity"] == 1024
    assert incident.context["largest_free_block"] == 1024 - 104
    assert [(t["tensor_id"], t["role"]) for t in incident.context["largest_live"]] == [(1, "ifmap"), (9, "ifmap")]
    assert "would fit at 0x68 (in region 0x0-0x400) for workloads 1–2" in incident.line()


def test_no_room_gives_the_shortfall(write_json):
    # A 256-byte L2 nearly full in both snapshots: free blocks common to both are [100,128) (28 bytes, from 104:
    # 24 usable) and [232,256) (24); tensor 9 needs 64: 40 bytes short.
    snapshots = [
        [entry(1, 0, 100), entry(2, 128, 104)],
        [entry(1, 0, 100), entry(2, 128, 104), entry(9, 0, 64, new=True)],
    ]
    _, _, [incident] = opened(write_json, one_core(snapshots, buffersize=256))
    assert incident.suggestion is None and incident.shortfall_bytes == 64 - 24
    assert "no room: 40 bytes short in region 0x0-0x100" in incident.line()


def test_the_suggestion_stays_in_the_tensor_s_ring_region_and_never_wraps(write_json):
    # Region 0 [0,128) is full but for [96,128) (32 bytes); region 1 [128,512) is empty. Tensor 9 (48 bytes) in
    # region 0 cannot go to region 1, and [96,128) + a wrap would fit it but a suggestion never wraps.
    snapshots = [[entry(1, 0, 96), entry(9, 8, 48, new=True)]]
    _, _, [incident] = opened(write_json, one_core(snapshots, ring=[[0, 128], [128, 512]], buffersize=512))
    assert incident.suggestion is None and incident.shortfall_bytes == 48 - 32


def test_a_tensor_that_moves_has_a_residency_of_one_address_and_its_next_address_as_home(write_json):
    # Tensor 9 sits at 0 (on tensor 1) in snapshots 0-1, then moves to 600 in snapshot 2 (clear): its residency
    # is workloads 0-1 only, and its home is 600, free in both: the suggestion (the move ends the tensor-moved too).
    snapshots = [
        [entry(1, 0, 100), entry(9, 0, 64, new=True)],
        [entry(1, 0, 100), entry(9, 0, 64, new=False), entry(2, 100, 100)],
        [entry(1, 0, 100), entry(9, 600, 64, new=False)],
    ]
    _, _, [incident] = opened(write_json, one_core(snapshots))
    assert incident.suggestion == {"address": 600, "end": 664, "residency": [0, 1], "home_workload": 2}
    assert "would fit at 0x258 (its address at workload 2) for workloads 0–1" in incident.line()
    # with 600 taken in snapshot 1, the lowest free 8-aligned address of the home region: 200
    snapshots[1].append(entry(3, 640, 8))
    _, _, [incident] = opened(write_json, one_core(snapshots))
    assert incident.suggestion == {"address": 200, "end": 264, "residency": [0, 1], "home_workload": None}


def test_the_same_address_in_disjoint_snapshots_is_legal(write_json):
    snapshots = [[entry(1, 0, 100)], [entry(2, 0, 100, new=True)], [entry(3, 0, 100, new=True)]]
    document, _, incidents = opened(write_json, one_core(snapshots))
    assert incidents == [] and not [p for p in document.problems if p.code == "l2-overlap"]


def test_a_residency_that_reaches_the_end_of_the_core(write_json):
    snapshots = [[entry(1, 0, 100)], [entry(1, 0, 100), entry(9, 64, 64, new=True)],
                 [entry(1, 0, 100), entry(9, 64, 64, new=False)]]  # fmt: skip
    _, _, [incident] = opened(write_json, one_core(snapshots))
    assert incident.suggestion == {"address": 104, "end": 168, "residency": [1, 2], "home_workload": None}


def test_hostile_sizes_and_addresses_are_numbers_not_crashes(write_json):
    snapshots = [[entry(1, -50, 100), entry(2, 2**60, 2**61), entry(3, 0, 2**62), entry(4, 10, 20), entry(6, 40, -16)],
                 [entry(4, 10, 20), entry(5, 10, 8, new=True)]]  # fmt: skip
    for ring in ([], [[0, 1024]], [[500, 100]]):
        document, pressure, incidents = opened(write_json, one_core(snapshots, ring=ring))
        assert len(pressure.cores) == 1
        for incident in incidents:
            assert incident.suggestion is not None or incident.shortfall_bytes is not None


def relocate(path: Path, out: Path, *extra: str) -> int:
    return cli.main(["relocate", str(path), "-o", str(out), *extra])


def test_relocate_to_the_suggestion_removes_the_incident_and_adds_none(write_json, tmp_path, capsys):
    path = write_json(planted_with_room())
    before = path.read_bytes()
    out = tmp_path / "fixed_stschedule.json"
    assert relocate(path, out, "--core", "0", "--tensor", "9", "--to", "suggested") == 0
    assert path.read_bytes() == before  # the input is never written
    capsys.readouterr()
    assert cli.main(["check", str(out), "--json"]) in (0, 1)
    after = json.loads(capsys.readouterr().out)
    assert after["incidents"] == []
    # byte for byte elsewhere: only the two address fields of tensor 9 changed
    fixed = json.loads(out.read_bytes())
    original = json.loads(before)
    moved = [(k, e["address"]) for k, w in enumerate(fixed["0"]) for e in w["buffer"] if e["tensor_id"] == 9]
    assert moved == [(1, 104), (2, 104)]
    for w in original["0"]:
        for e in w["buffer"]:
            if e["tensor_id"] == 9:
                e["address"] = 104
    assert fixed == original
    assert len(out.read_bytes()) == len(before) + 2 * (len("104") - len("40"))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--core", "7", "--tensor", "9", "--to", "suggested"], "core 7 is not in the schedule"),
        (["--core", "0", "--tensor", "4242", "--to", "suggested"], "tensor 4242 is in no snapshot of core 0"),
        (["--core", "0", "--tensor", "9", "--to", "0x3f0"], "must lie inside a region of core 0"),
        (["--core", "0", "--tensor", "9", "--to", "-8"], "must lie inside a region of core 0"),
        (["--core", "0", "--tensor", "9", "--to", "0x69"], "--to 0x69 is not 8-aligned (--force"),
        (["--core", "0", "--tensor", "9", "--to", "0xc0"],
         "would collide with tensor 5 at workload 2 (bytes 0xc8-0x100; 1 collisions in workloads 1–2); --force"),
        (["--core", "0", "--tensor", "9", "--to", "there"], "expected an address"),
    ],
)
def test_relocate_refuses_in_one_line_and_writes_nothing(write_json, tmp_path, capsys, args, said):
    path = write_json(planted_with_room())
    out = tmp_path / "out_stschedule.json"
    assert relocate(path, out, *args) == 2
    error = capsys.readouterr().err
    assert said in error and error.count("\n") == 1 and "Traceback" not in error
    assert not out.exists()


def test_relocate_never_writes_its_input_nor_through_a_link(write_json, tmp_path, capsys):
    path = write_json(planted_with_room())
    before = path.read_bytes()
    link = tmp_path / "link_stschedule.json"
    link.symlink_to(path)
    for target in (path, link):
        assert relocate(path, target, "--core", "0", "--tensor", "9", "--to", "suggested") == 2
        assert "input" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_relocate_with_no_room_says_how_short(write_json, tmp_path, capsys):
    snapshots = [[entry(1, 0, 100), entry(2, 128, 104)],
                 [entry(1, 0, 100), entry(2, 128, 104), entry(9, 0, 64, new=True)]]  # fmt: skip
    path = write_json(one_core(snapshots, buffersize=256))
    out = tmp_path / "out_stschedule.json"
    assert relocate(path, out, "--core", "0", "--tensor", "9", "--to", "suggested") == 2
    assert "40 bytes short" in capsys.readouterr().err and not out.exists()


def test_info_json_lists_each_core_s_pressure_and_the_text_names_the_worst(write_json, capsys):
    path = write_json(planted_with_room())
    assert cli.main(["info", str(path), "--json"]) == 0
    cores = json.loads(capsys.readouterr().out)["memory"]["l2"]["cores"]
    assert cores["0"]["peak_bytes"] == 227 and cores["0"]["peak_workload"] == 2
    assert cores["0"]["high_water"] == 263 and cores["0"]["packing"] == round(227 / 263, 4)
    assert cores["0"]["live_at_peak"][0] == {"tensor_id": 1, "bytes": 100, "address": 0, "role": "ifmap"}
    assert cli.main(["info", str(path)]) == 0
    assert "L2 at its fullest: core 0, 227 bytes of 1,024 (22%) at workload 2" in capsys.readouterr().out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_suggestions_match_a_byte_by_byte_search(data):
    """Random snapshots of a 256-byte L2 in two ring regions: every incident's suggestion (or shortfall) is what
    a byte map of the residency's other entries gives."""
    import tempfile

    snapshots = []
    for _ in range(data.draw(st.integers(1, 4))):
        snapshot, used = [], set()
        for _ in range(data.draw(st.integers(0, 5))):
            tensor = data.draw(st.integers(1, 8).filter(lambda t, used=used: t not in used))
            used.add(tensor)
            address = data.draw(st.integers(0, 30)) * 8
            snapshot.append(entry(tensor, address, data.draw(st.integers(1, 96))))
        snapshots.append(snapshot)
    ring = data.draw(st.sampled_from([[], [[0, 128], [128, 256]]]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r_stschedule.json"
        path.write_text(json.dumps(one_core(snapshots, ring=ring, buffersize=256)))
        document = open_document(path)
        incidents = [i for i in incidents_of(document) if i.code == "l2-overlap"]
        pressure_of(document).explain(incidents) if incidents else None
        s, placement = document.schedule, document.schedule_analysis.placement
        for incident in incidents:
            row = s.row_of(incident.core, incident.first_workload)
            stay = residency(s, placement, incident.core, incident.introduced_by, row)
            taken = np.zeros(512, dtype=bool)
            for e in range(int(s.buf_ptr[stay.first_row]), int(s.buf_ptr[stay.last_row + 1])):
                if e in stay.entries.tolist() or placement.out_of_range[e]:
                    continue
                for piece in np.flatnonzero(placement.entry == e).tolist():
                    taken[int(placement.lo[piece]) : int(placement.hi[piece])] = True
            # the home: the tensor's first address in the snapshot before the residency, else after, if another
            near = [snapshots[r] for r in (stay.first_row - 1, stay.last_row + 1) if 0 <= r < len(snapshots)
                    and any(e["tensor_id"] == incident.introduced_by for e in snapshots[r])]  # fmt: skip
            home = next(e["address"] for e in near[0] if e["tensor_id"] == incident.introduced_by) if near else None
            home = None if home == stay.address else home
            regions = [(0, 128), (128, 256)] if ring else [(0, 256)]
            lo, hi = next(r for r in regions if r[0] <= (stay.address if home is None else home) < r[1])
            assert incident.region == [lo, hi]
            spots = [a for a in range(lo, hi - stay.size + 1, 8) if not taken[a : a + stay.size].any()]
            if home is not None and home + stay.size <= hi and not taken[home : home + stay.size].any():
                spots.insert(0, home)
            if spots:
                assert incident.suggestion["address"] == spots[0]
            else:
                best = max((next((b for b in range(a, hi) if taken[b]), hi) - a
                            for a in range(lo, hi, 8) if not taken[a]), default=0)  # fmt: skip
                assert incident.suggestion is None and incident.shortfall_bytes == stay.size - best


def test_info_json_gives_wl0_the_numbers_that_make_sense_there(write_json, capsys):
    # WL0 of workload 0: [0, 32) and [64, 96): 64 live bytes; workload 1: [0, 48): 48. Peak 64 at workload 0, high
    # water 96 (packing 64/96); no capacity, fragmentation or suggestion (WL0 has no size, regions nor ids).
    value = one_core([[entry(1, 0, 100)], [entry(1, 0, 100)]])
    value["0"][0]["wl0_buffer"] = [{"address": 0, "size": 32, "source": "DDR", "transfer_id": [7], "layer_name": "L0"},
                                   {"address": 64, "size": 32, "source": "DDR", "transfer_id": [8], "layer_name": "L0"}]
    value["0"][1]["wl0_buffer"] = [{"address": 0, "size": 48, "source": "DDR", "transfer_id": [9], "layer_name": "L1"}]
    assert cli.main(["info", str(write_json(value)), "--json"]) == 0
    side = json.loads(capsys.readouterr().out)["memory"]["wl0"]
    assert side == {"name": "WL0", "cores": {"0": {"peak_bytes": 64, "peak_workload": 0, "high_water": 96,
                                                   "packing": round(64 / 96, 4)}}}  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_residencies_follow_the_definition_on_random_snapshots(data):
    """Many residencies asked at once (as check does for thousands of incidents) are each the run of consecutive
    snapshots holding the tensor at the address its first entry has in the asked one: a tensor may move, leave and
    come back, or sit twice in one snapshot."""
    import tempfile

    from explorer.schedule.rooms import residencies

    def snapshot() -> list[dict]:
        count = data.draw(st.integers(0, 4))
        return [entry(data.draw(st.integers(1, 3)), data.draw(st.sampled_from([0, 64, 128])), 8) for _ in range(count)]

    snapshots = [snapshot() for _ in range(data.draw(st.integers(1, 6)))]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r_stschedule.json"
        path.write_text(json.dumps(one_core(snapshots)))
        document = open_document(path)
        s, placement = document.schedule, document.schedule_analysis.placement
        asked = [(0, tensor, row) for row in range(len(snapshots)) for tensor in (1, 2, 3, 4)]
        for (_, tensor, row), stay in zip(asked, residencies(s, placement, asked), strict=True):
            held = [[a["address"] for a in snapshot if a["tensor_id"] == tensor] for snapshot in snapshots]
            if not held[row]:
                assert stay is None
                continue
            address = held[row][0]
            first = last = row
            while first > 0 and address in held[first - 1]:
                first -= 1
            while last + 1 < len(snapshots) and address in held[last + 1]:
                last += 1
            assert (stay.address, stay.first_row, stay.last_row) == (address, first, last)
            expected = [e for r in range(first, last + 1)
                        for e in range(int(s.buf_ptr[r]), int(s.buf_ptr[r + 1]))
                        if s.buf_tensor[e] == tensor and s.buf_addr[e] == address]  # fmt: skip
            assert stay.entries.tolist() == expected
