"""ARK model and plan loading: every real variant, located problems for broken files, the CLI records."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from explorer.api import open_document
from explorer.errors import LoadError
from tests.conftest import ROOT, SAMPLE_DATA, samples_dir

VIEWS = SAMPLE_DATA / "views_ark_model.json"


def t(tid, shape, buffer, **extra):
    value = {
        "Id": tid,
        "DataType": "FP16",
        "Shape": shape,
        "Strides": extra.pop("Strides", shape),
        "Offsets": extra.pop("Offsets", [0] * len(shape)),
        "PaddedShape": extra.pop("PaddedShape", shape),
        "Buffer": {"Id": buffer, "Rank": -1, "SendTags": [], "RecvTags": []},
    }
    value.update(extra)
    return value


def two_nodes() -> dict:
    """The spec's §1.10 shape: a row-sum of a column slice, then a scale that sends its result to rank 1."""
    sent = {"Id": 5, "Rank": -1, "SendTags": [[1, 7]], "RecvTags": []}
    return {
        "Rank": 0,
        "WorldSize": 2,
        "Nodes": [
            {
                "Id": 0,
                "ProducerNodeIds": [],
                "ConsumerNodeIds": [1],
                "Op": {
                    "Type": "ReduceSum",
                    "Name": "row_sum",
                    "IsVirtual": False,
                    "ReadTensors": [t(10, [4, 64], 3, Strides=[4, 128], Offsets=[0, 64])],
                    "WriteTensors": [t(11, [4, 1], 4, Strides=[4, 8], PaddedShape=[4, 8])],
                    "ResultTensors": [t(12, [4, 1], 4, Strides=[4, 8], PaddedShape=[4, 8])],
                    "Args": {"Axis": {"INT": 1}, "KeepDim": {"BOOL": True}},
                },
            },
            {
                "Id": 1,
                "ProducerNodeIds": [0],
                "ConsumerNodeIds": [],
                "Op": {
                    "Type": "ScalarMul",
                    "Name": "scale",
                    "IsVirtual": False,
                    "ReadTensors": [t(12, [4, 1], 4, Strides=[4, 8], PaddedShape=[4, 8])],
                    "WriteTensors": [{**t(13, [4, 1], 5), "Buffer": sent}],
                    "ResultTensors": [{**t(14, [4, 1], 5), "Buffer": sent}],
                    "Args": {"Factor": {"FLOAT": 0.5}},
                },
            },
        ],
    }


def load(write_json, value, name="model.json", strict=False):
    return open_document(write_json(value, name), strict=strict)


def codes(doc):
    return sorted({p.code for p in doc.problems})


def test_real_model_and_plan_open_with_zero_errors():
    folder = samples_dir("ark")
    model = open_document(folder / "model_main_d8bbaebd.json")
    assert model.meta.format == "ark-model"
    assert [p for p in model.problems if p.severity == "error"] == []
    assert model.summary == {
        "nodes": 6,
        "ops": 6,
        "tensors": 16,
        "buffers": 10,
        "op_types": {"Matmul": 3, "Mul": 2, "Sigmoid": 1},
    }
    plan = open_document(folder / "plan_main_d8bbaebd_plan.json")
    assert plan.meta.format == "ark-plan"
    assert [p for p in plan.problems if p.severity in ("error", "warning")] == []
    assert {k: plan.summary[k] for k in ("tasks", "processor_groups", "ops")} == {
        "tasks": 8,
        "processor_groups": 8,
        "ops": 8,
    }
    # the tutorial plan lacks Architecture: read as ANY and said once, as information
    assert [p.code for p in plan.problems] == ["no-architecture"]


def test_spec_example_loads_clean_with_typed_args_and_tags(write_json):
    doc = load(write_json, two_nodes())
    assert doc.problems == []
    view = doc.view
    op = view.ark.nodes[0].ops[0]
    assert [(a.name, a.type, a.value) for a in op.args] == [("Axis", "INT", 1), ("KeepDim", "BOOL", True)]
    assert view.index.tensors[13].buffer.send_tags == ((1, 7),)
    assert sorted(doc.graph.edges) == [(0, 1)]
    layout = view.index.layout(10)
    assert (layout.first_byte, layout.end_byte) == (128, 1024)  # 2 × 64; 2 × (3×128 + 127 + 1)
    assert view.index.buffer_bytes(3) == 1024  # 4 × 128 × 2


def test_every_arg_type_and_the_ops_array_form(write_json):
    value = two_nodes()
    node = value["Nodes"][0]
    node["Ops"] = [node.pop("Op"), copy.deepcopy(value["Nodes"][1]["Op"])]
    node["Ops"][1]["Type"] = "RecvReduceSendPacket"
    node["Ops"][1]["WriteTensors"] = [t(20, [4, 1], 6)]
    node["Ops"][1]["ResultTensors"] = [t(21, [4, 1], 6)]
    node["Ops"][1]["Args"] = {
        "Flag": {"UINT32": 4294967295},
        "NPeers": {"UINT32": 7},
        "Rank": {"INT": -2},
    }
    node["Ops"][0]["Args"].update(
        {
            "Big": {"INT64": -(2**63)},
            "Huge": {"UINT64": 2**64 - 1},
            "Scale": {"FLOAT": 1.5},
            "Dims": {"DIMS": [1, 2, 3, 4]},
            "View": {"TENSOR": t(99, [2], 9)},
            "Where": {"OFFSET": {"BufferId": 3, "Value": 8192}},
        }
    )
    doc = load(write_json, value)
    op = doc.view.ark.nodes[0].ops[0]
    types = {a.name: a.type for a in op.args}
    assert types["Big"] == "INT64" and types["Huge"] == "UINT64" and types["Where"] == "OFFSET"
    assert {a.name: a.value for a in op.args}["Where"] == (3, 8192)
    assert len(doc.view.ark.nodes[0].ops) == 2
    # unknown arg names on a known op are kept and flagged, one warning each
    unknown = sorted(p.location for p in doc.problems if p.code == "unknown-arg")
    assert unknown == [f"$.Nodes[0].Ops[0].Args.{name}" for name in ("Big", "Dims", "Huge", "Scale", "View", "Where")]
    assert all(p.severity == "warning" for p in doc.problems)


def test_draft_and_branch_variants_are_read(write_json):
    value = two_nodes()
    read = value["Nodes"][0]["Op"]["ReadTensors"][0]
    read.pop("PaddedShape")
    read["Pads"] = [1, 1]  # the April 2024 draft: Pads (all ones) instead of PaddedShape
    write = value["Nodes"][0]["Op"]["WriteTensors"][0]
    write.pop("Buffer")
    write["BufferId"] = 4  # the draft's buffer reference
    value["Nodes"][1]["Op"]["WriteTensors"][0]["Buffer"]["IsExternal"] = True  # chhwang/torch branch
    value["Nodes"][1]["Op"]["Type"] = "Placeholder"
    doc = load(write_json, value)
    index = doc.view.index
    assert index.tensors[10].padded_shape == (4, 64) and index.tensors[10].pads == (1, 1)
    assert index.tensors[11].buffer.id == 4
    assert index.tensors[13].buffer.is_external
    assert "unknown-op-type" not in codes(doc)
    assert [p for p in doc.problems if p.severity == "error"] == []


def test_unknown_op_type_and_keys_are_warnings_or_strict_errors(write_json):
    value = two_nodes()
    value["Nodes"][1]["Op"]["Type"] = "FlashAttention"
    value["Nodes"][1]["Op"]["Color"] = "blue"
    doc = load(write_json, value)
    found = {(p.code, p.severity, p.location) for p in doc.problems}
    assert ("unknown-op-type", "warning", "$.Nodes[1].Op.Type") in found
    assert ("unknown-key", "warning", "$.Nodes[1].Op.Color") in found
    strict = load(write_json, value, strict=True)
    assert {p.severity for p in strict.problems if p.code in ("unknown-key", "unknown-op-type")} == {"error"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(Shape=[4, 200]), "Shape[1] = 200 exceeds PaddedShape[1] = 64"),
        (lambda r: r.update(Offsets=[0, 100]), "Offsets[1] + PaddedShape[1] = 100 + 64 = 164 exceeds Strides[1] = 128"),
        (lambda r: r.update(Offsets=[-1, 64]), "Offsets[0] = -1 is negative"),
        (lambda r: r.update(Strides=[4, 128, 1]), "must have the same length, got 2, 3, 2, 2"),
        (lambda r: r.update(DataType="FP8"), "unknown DataType 'FP8'"),
        (
            lambda r: r.update(Shape=[1] * 5, Strides=[1] * 5, Offsets=[0] * 5, PaddedShape=[1] * 5),
            "1 to 4 dimensions, got 5",
        ),
    ],
)
def test_tensor_invariants_are_located_errors(write_json, change, message):
    value = two_nodes()
    change(value["Nodes"][0]["Op"]["ReadTensors"][0])
    doc = load(write_json, value)
    errors = [p for p in doc.problems if p.code == "tensor-invariant"]
    assert [p.location for p in errors] == ["$.Nodes[0].Op.ReadTensors[0]"]
    assert message in errors[0].message
    assert 10 in doc.view.index.tensors  # kept, and shown with its problem


def test_broken_fields_drop_the_smallest_part_with_its_path(write_json):
    value = two_nodes()
    value["Nodes"][0]["Op"]["ReadTensors"][0]["Shape"] = ["4", 64]
    value["Nodes"][0]["Op"]["Args"]["Axis"] = {"INT": 2**40}
    value["Nodes"][0]["Op"]["Args"]["Odd"] = {"COMPLEX": 1}
    value["Nodes"][1]["Op"]["WriteTensors"][0]["Buffer"]["SendTags"] = [[1, 7], 3]
    doc = load(write_json, value)
    found = {(p.code, p.location) for p in doc.problems if p.severity == "error"}
    assert ("bad-tensor", "$.Nodes[0].Op.ReadTensors[0].Shape[0]") in found
    assert ("bad-arg", "$.Nodes[0].Op.Args.Axis.INT") in found
    assert ("bad-arg", "$.Nodes[0].Op.Args.Odd.COMPLEX") in found
    assert ("bad-tag", "$.Nodes[1].Op.WriteTensors[0].Buffer.SendTags[1]") in found
    index = doc.view.index
    assert 10 not in index.tensors and 12 in index.tensors  # only the broken tensor went
    assert index.tensors[13].buffer.send_tags == ((1, 7),)


def test_graph_checks(write_json):
    value = two_nodes()
    value["Nodes"][0]["ConsumerNodeIds"] = [1, 7]  # 7 does not exist
    value["Nodes"][1]["ProducerNodeIds"] = []  # not symmetric, and node 1 reads node 0's result 12
    doc = load(write_json, value)
    found = {(p.code, p.location) for p in doc.problems}
    assert ("unknown-node-id", "$.Nodes[0].ConsumerNodeIds[1]") in found
    assert ("asymmetric-edge", "$.Nodes[0].ConsumerNodeIds[0]") in found
    assert ("missing-producer", "$.Nodes[1].ProducerNodeIds") in found


def test_results_twice_cycles_and_write_ids(write_json):
    value = two_nodes()
    second = value["Nodes"][1]["Op"]
    second["ResultTensors"] = [t(12, [4, 1], 4, Strides=[4, 8], PaddedShape=[4, 8])]  # node 0's result id again
    second["ReadTensors"].append(t(11, [4, 1], 4, Strides=[4, 8], PaddedShape=[4, 8]))  # node 0's WriteTensor id
    value["Nodes"][0]["ProducerNodeIds"] = [1]
    value["Nodes"][1]["ConsumerNodeIds"] = [0]
    doc = load(write_json, value)
    assert {"duplicate-result", "cycle", "reads-write-tensor"} <= set(codes(doc))


def test_views_sample_is_clean_and_compressed_views_justify_producers():
    doc = open_document(VIEWS)
    assert doc.problems == []
    index = doc.view.index
    # q (cols 0..63), k (64..127) and the window (48..143) of the [1, 64, 192] qkv buffer
    assert index.aliases_of(4) == [2, 3, 10]
    assert index.aliases_of(7) == [2, 3, 10]
    assert index.aliases_of(10) == [2, 3, 4, 7]


def test_plan_checks(write_json):
    plan = json.loads((samples_dir("ark") / "plan_main_d8bbaebd_plan.json").read_text())
    group = plan["ProcessorGroups"][0]
    group["ResourceGroups"][0]["TaskGroups"][0]["TaskId"] = 42
    plan["ProcessorGroups"][1]["ResourceGroups"][0]["TaskGroups"][0]["TaskRange"] = [0, 500]
    plan["ProcessorGroups"][2]["ResourceGroups"][0]["WarpRange"] = [0, 16]
    plan["ProcessorGroups"][3]["ProcessorRange"] = [8, 2]
    plan["TaskInfos"][0]["Ops"][0].pop("Config")
    doc = load(write_json, plan, name="plan.json")
    found = {(p.code, p.location) for p in doc.problems}
    assert ("unknown-task-id", "$.ProcessorGroups[0].ResourceGroups[0].TaskGroups[0].TaskId") in found
    assert ("range-outside", "$.ProcessorGroups[1].ResourceGroups[0].TaskGroups[0].TaskRange") in found
    assert ("range-outside", "$.ProcessorGroups[2].ResourceGroups[0].WarpRange") in found
    assert ("bad-range", "$.ProcessorGroups[3].ProcessorRange") in found
    assert ("missing-config", "$.TaskInfos[0].Ops[0]") in found


@pytest.mark.parametrize(
    ("text", "location"),
    [
        ('{"Rank": 0, "WorldSize": 1, "Nodes": [{"Id": 0,', "line 1, column"),
        ('{"Rank": 0, "Nodes": 5}', "$.Nodes"),
        ('{"Rank": 0, "TaskInfos": 5, "ProcessorGroups": []}', "$.TaskInfos"),
    ],
)
def test_unusable_files_are_located_load_errors(tmp_path, text, location):
    path = tmp_path / "broken.json"
    path.write_text(text)
    try:
        doc = open_document(path)
    except LoadError as error:
        assert error.location.startswith(location) and error.path == str(path)
    else:  # a plan whose TaskInfos is not an array is kept, with the error located
        assert any(p.location == location for p in doc.problems)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_tensor_command_json_record():
    result = run_cli("tensor", VIEWS, 10, "--json")
    assert result.returncode == 0, result.stderr
    # the window: FP16 [1, 64, 96] at column 48 of [1, 64, 192]: first 2×48 = 96, last (0, 63, 143) = 12239 → 24480
    assert json.loads(result.stdout) == {
        "schema_version": 1,
        "tensor_id": 10,
        "buffer_id": 2,
        "dtype": "FP16",
        "element_bytes": 2,
        "shape": [1, 64, 96],
        "strides": [1, 64, 192],
        "offsets": [0, 0, 48],
        "padded_shape": [1, 64, 96],
        "first_byte": 96,
        "end_byte": 24480,
        "bytes": 12288,
        "runs": 64,
        "padding_bytes": 0,
        "aliases": [2, 3, 4, 7],
    }
    missing = run_cli("tensor", VIEWS, 999)
    assert missing.returncode == 2 and "no tensor with Id 999" in missing.stderr
    wrong = run_cli("tensor", SAMPLE_DATA / "clean_2x2_stschedule.json", 1)
    assert wrong.returncode == 2 and "ARK" in wrong.stderr and "Traceback" not in wrong.stderr


def test_info_json_summaries():
    result = run_cli("info", VIEWS, "--json")
    payload = json.loads(result.stdout)
    assert payload["format"] == "ark-model"
    assert payload["summary"] == {
        "nodes": 7,
        "ops": 7,
        "tensors": 22,
        "buffers": 11,
        "op_types": {"Matmul": 2, "ReduceMax": 1, "ScalarMul": 1, "Copy": 1, "Sub": 1, "Transpose": 1},
    }
