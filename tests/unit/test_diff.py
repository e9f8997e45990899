"""`ir-explorer diff`: schedule and model differences, worked out by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import onnx
import pytest

from explorer.api import open_document
from explorer.diff import NotComparable, diff_documents
from explorer.formats.onnx.samples import subgraph_model
from tests.conftest import ROOT, SAMPLE_DATA
from tests.schedules import two_core


def test_schedule_diff(write_json):
    a = two_core()
    b = two_core()
    b["1"][0]["time"] = 12  # C: 7 → 12, so D starts at 22 and the makespan goes 20 → 25
    b["1"][1]["layer_name"] = "D2"  # a renamed layer: D removed, D2 added
    first = open_document(write_json(a, "a_stschedule.json"))
    second = open_document(write_json(b, "b_stschedule.json"))
    result = diff_documents(first, second)
    summary = result["summary"]
    assert summary["makespan"] == [20.0, 25.0] and summary["makespan_delta"] == 5.0
    assert summary["workloads_per_core"] == {"0": [2, 2], "1": [2, 2]}
    assert (summary["layers_added"], summary["layers_removed"]) == (["D2"], ["D"])
    durations = [c for c in result["changes"] if c["kind"] == "duration"]
    assert durations == [
        {"kind": "duration", "core": 1, "workload_id": 0, "layer": "C", "a": 7.0, "b": 12.0, "delta": 5.0}
    ]


def test_model_diff(tmp_path):
    a, b = subgraph_model(), subgraph_model()
    b.graph.node[1].name = "scale_renamed"  # the same op in the same place: matched by structure, not +1/-1
    b.graph.node[0].attribute[1].g.node[0].op_type = "Sub"  # then_add changes type: Add -1, Sub +1
    paths = []
    for name, model in (("a.onnx", a), ("b.onnx", b)):
        onnx.save_model(model, tmp_path / name)
        paths.append(tmp_path / name)
    result = diff_documents(open_document(paths[0]), open_document(paths[1]))
    summary = result["summary"]
    assert (summary["nodes_added"], summary["nodes_removed"], summary["nodes_changed"]) == (0, 0, 1)
    assert summary["nodes_matched_by_structure"] == 1
    assert summary["op_types_delta"] == {"Add": -1, "Sub": 1}
    assert summary["parameter_bytes_delta"] == 0
    kinds = {(c["kind"], c.get("name", c.get("op"))) for c in result["changes"]}
    assert ("node-changed", "then_add") in kinds and not {k for k, _ in kinds} & {"node-added", "node-removed"}
    changed = next(c for c in result["changes"] if c["kind"] == "node-changed")
    assert changed["matched_by"] == "name"


def test_different_formats_are_refused(tmp_path):
    with pytest.raises(NotComparable):
        diff_documents(
            open_document(SAMPLE_DATA / "views_ark_model.json"), open_document(SAMPLE_DATA / "two_modules_mlf.tar")
        )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "diff",
            str(SAMPLE_DATA / "views_ark_model.json"),
            str(SAMPLE_DATA / "two_modules_mlf.tar"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and "cannot compare" in result.stderr


def test_diff_json_command():
    path = SAMPLE_DATA / "clean_2x2_stschedule.json"
    other = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "diff", str(path), str(other), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    payload = json.loads(result.stdout)
    assert payload["format"] == "scheduler-ir" and "makespan_delta" in payload["summary"]
    assert isinstance(payload["changes"], list)


def test_diff_of_the_real_resnet_schedules():
    from tests.conftest import samples_dir

    folder = samples_dir("scheduler_ir")
    b1 = open_document(folder / "int8_resnet34.sim_quantized_b1_c1_bw16_stschedule.json")
    b4 = open_document(folder / "int8_resnet34.sim_quantized_b4_c1_bw16_stschedule.json")
    result = diff_documents(b1, b4)
    summary = result["summary"]
    # same network, batch 1 → 4: the same 69 workloads on one core, each taking longer
    assert summary["workloads_per_core"] == {"0": [69, 69]} and summary["layers_added"] == []
    makespans = [doc.schedule_analysis.timeline.makespan for doc in (b1, b4)]
    assert summary["makespan_delta"] == makespans[1] - makespans[0] > 0
    durations = [c for c in result["changes"] if c["kind"] == "duration"]
    assert durations and durations == sorted(durations, key=lambda c: -abs(c["delta"]))


def test_a_schedule_diff_sees_the_three_planted_changes(capsys):
    import json

    from explorer import cli

    clean = SAMPLE_DATA / "clean_2x2_stschedule.json"
    planted = SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    assert cli.main(["diff", str(clean), str(planted), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    kinds = {(c["kind"], c.get("core"), c.get("workload_id")) for c in result["changes"]}
    assert ("l2-placement-added", 1, 3) in kinds  # the extra L2 tensor
    assert ("transfer-added", 3, 5) in kinds  # the phantom transfer
    assert ("wl0-placement-added", 2, 4) in kinds  # the duplicated WL0 entry
    introduced = {c["code"] for c in result["changes"] if c["kind"] == "problem-introduced"}
    assert introduced == {"l2-overlap", "unresolved-transfer", "wl0-overlap"}
    assert result["summary"]["problems_introduced"] == 3 and result["summary"]["problems_fixed"] == 0
    assert cli.main(["diff", str(planted), str(clean)]) == 0
    text = capsys.readouterr().out
    assert "problems fixed: 3" in text and "l2-placement-removed" in text


def test_diff_sees_moved_endpoints_layer_times_and_incidents(tmp_path, capsys):
    """A transfer read by another workload, a slower layer and a planted overlap: each is its own change."""
    import copy
    import json

    from explorer import cli
    from tests.unit.test_incidents import entry

    clean = SAMPLE_DATA / "clean_2x2_stschedule.json"
    doc = json.loads(clean.read_text())
    changed = copy.deepcopy(doc)
    moved = changed["0"][3]["ifmap"].pop(0)  # workload 3 no longer reads this transfer: workload 4 does
    changed["0"][4]["ifmap"].append(moved)
    changed["1"][5]["time"] += 1000
    changed["1"][2]["buffer"].append(entry(77777, 6144, 2048, new=True))
    path = tmp_path / "changed_stschedule.json"
    path.write_text(json.dumps(changed))
    assert cli.main(["diff", str(clean), str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    by_kind: dict = {}
    for change in result["changes"]:
        by_kind.setdefault(change["kind"], []).append(change)
    tid = moved["transfer_id"][0]
    [endpoints] = by_kind["transfer-endpoints"]
    assert endpoints["transfer"] == tid and "c0 wl 3" in endpoints["a"] and "c0 wl 4" in endpoints["b"]
    reads = {(c["kind"], c["workload_id"]) for c in by_kind["transfer-added"] + by_kind["transfer-removed"]}
    assert reads == {("transfer-removed", 3), ("transfer-added", 4)}
    layer = changed["1"][5]["layer_name"]
    assert by_kind["layer-time"][0]["layer"] == layer and by_kind["layer-time"][0]["delta"] == 1000
    [incident] = by_kind["incident-introduced"]
    assert (incident["core"], incident["workload_id"]) == (1, 2) and "77777" in incident["message"]
    summary = result["summary"]
    assert summary["incidents_introduced"] == 1 and summary["transfer_endpoints_changed"] == 1


def test_multiset_changes_counts_each_placement():
    import numpy as np

    from explorer.diff import multiset_changes

    a = [np.array([1, 1, 2]), np.array([5, 5, 6])]
    b = [np.array([1, 2, 3]), np.array([5, 6, 7])]
    keys, delta, _ = multiset_changes(a, b)
    assert keys.tolist() == [[1, 5], [3, 7]] and delta.tolist() == [-1, 1]  # one (1, 5) fewer, (3, 7) new


def test_two_exports_of_one_model_match_by_op_type_and_position(tmp_path):
    """Names differ between exporters (`/layer1/conv1/Conv` against `Conv_12`): nodes are then matched by op
    type and their order in the graph, not all read as added and removed."""
    import onnx

    from explorer.api import open_document
    from explorer.diff import diff_documents
    from tests.conftest import SAMPLE_DATA

    model = onnx.load(SAMPLE_DATA / "subgraphs_functions.onnx")
    for k, node in enumerate(model.graph.node):
        node.name = f"exported_{k}"
    renamed = tmp_path / "renamed.onnx"
    onnx.save(model, renamed)
    result = diff_documents(open_document(SAMPLE_DATA / "subgraphs_functions.onnx"), open_document(renamed))
    summary = result["summary"]
    assert summary["nodes_added"] == summary["nodes_removed"] == summary["nodes_changed"] == 0
    assert summary["nodes_matched_by_structure"] == len(model.graph.node)
    del model.graph.node[-1]  # the other export lost its last node: one removed, the rest still matched
    onnx.save(model, renamed)
    result = diff_documents(open_document(SAMPLE_DATA / "subgraphs_functions.onnx"), open_document(renamed))
    assert result["summary"]["nodes_removed"] == 1 and result["summary"]["nodes_added"] == 0
