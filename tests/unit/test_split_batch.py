"""A batch is what a layer's workloads cover together (issue #59 item 1): schedules that split a layer's batch
across workloads (each covering samples 0-1 and 2-3, on two cores) are batch 4, so their own b4 frontend IR is
joined; a b1 frontend is still refused."""

from __future__ import annotations

import json

import pytest

from explorer.api import open_document
from tests.schedules import two_core


def split_schedule(folder):
    """two_core() with one layer on both cores: core 0's workloads cover samples 0-1, core 1's samples 2-3."""
    schedule = two_core()
    for core, (b0, b1) in (("0", (0, 1)), ("1", (2, 3))):
        for k, workload in enumerate(schedule[core]):
            workload["layer_name"] = f"L{k + 1}"
            workload["workload"] = [[b0, 0, 0, 0], [b1, 3, 7, 7]]
    for entry in schedule["-1"]["in"]:
        entry["layer_name"] = "L2"
    for entry in schedule["-1"]["out"]:
        for destination in entry["destination"]:
            destination["layer_name"] = "L1"
    path = folder / "m_b4_c1_bw16_stschedule.json"
    path.write_text(json.dumps(schedule))
    return path


def frontend(path, batch: int) -> None:
    layers = {
        name: {"layer_index": k, "name": name, "operation": "conv2d", "input_shape": [[batch, 4, 8, 8]],
               "output_shape": [[batch, 4, 8, 8]], "previous_layer": ["input"] if k == 0 else ["L1"],
               "next_layer": ["L2"] if k == 0 else []}
        for k, name in enumerate(("L1", "L2"))
    }  # fmt: skip
    path.write_text(json.dumps(layers))


def test_a_layers_workloads_cover_its_batch_together(tmp_path):
    document = open_document(split_schedule(tmp_path))
    assert document.view.batch_size() == 4


@pytest.mark.parametrize(("batch", "joined"), [(4, True), (1, False)])
def test_the_frontend_of_the_covered_batch_is_joined_and_another_refused(tmp_path, batch, joined):
    schedule = split_schedule(tmp_path)
    frontend(tmp_path / "m_b4.json", batch)
    document = open_document(schedule, companions={"frontend": tmp_path / "m_b4.json"})
    mismatches = [p.message for p in document.problems if p.code == "companion-mismatch"]
    if joined:
        assert mismatches == []
    else:
        assert mismatches == ["frontend companion m_b4.json was not joined: its shapes are batch 1, the "
                              "schedule's workloads cover batch 4: another batch"]  # fmt: skip
