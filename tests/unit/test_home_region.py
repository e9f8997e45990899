"""Issue #59 item 2: a tensor placed in the wrong ring region for one workload is suggested back to its home (its
address in the neighbouring workload, in the region holding it there), `relocate` accepts any free address of a
region of its core, and after the planted tensors are moved to their suggestions `check` says nothing of them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from explorer import cli
from explorer.formats.scheduler_ir.samples import Recipe, write_streaming


def misplace(value: dict) -> list[tuple[int, int, int, int]]:
    """On every core, one feature map newly added at a workload and kept at the next is put, at the first of
    them only, on the address of a weight live there (the other ring region). (core, tensor, workload, home)."""
    planted = []
    for key in sorted((k for k in value if k.isdigit()), key=int):
        workloads = value[key]
        for k in range(1, len(workloads) - 1):
            here, after = workloads[k]["buffer"], workloads[k + 1]["buffer"]
            fmap = next((e for e in here if e["type"] == "ifmap" and e.get("newly_added")
                         and any(a["tensor_id"] == e["tensor_id"] and a["address"] == e["address"] for a in after)),
                        None)  # fmt: skip
            weight = next((e for e in here if e["type"] == "weight"), None)
            if fmap is not None and weight is not None:
                planted.append((int(key), fmap["tensor_id"], workloads[k]["workload_id"], fmap["address"]))
                fmap["address"] = weight["address"]
                break
    return planted


@pytest.fixture
def misplaced(tmp_path) -> tuple[Path, list[tuple[int, int, int, int]]]:
    original = tmp_path / "gen_stschedule.json"
    write_streaming(original, Recipe(xlen=2, ylen=2, layers=8, seed=11))
    value = json.loads(original.read_bytes())
    planted = misplace(value)
    path = tmp_path / "misplaced_stschedule.json"
    path.write_text(json.dumps(value))
    return path, planted


def check(path: Path, capsys) -> dict:
    capsys.readouterr()
    cli.main(["check", str(path), "--json"])
    return json.loads(capsys.readouterr().out)


def test_the_suggestion_is_the_tensor_s_home_in_its_home_region(misplaced, capsys):
    path, planted = misplaced
    assert len(planted) == 4
    found = check(path, capsys)
    incidents = {(i["core"], i["introduced_by"]): i for i in found["incidents"] if i["code"] == "l2-overlap"}
    for core, tensor, workload, home in planted:
        incident = incidents[(core, tensor)]
        assert incident["suggestion"] == {"address": home, "end": home + incident["suggestion"]["end"] - home,
                                          "residency": [workload, workload], "home_workload": workload + 1}
        assert incident["region"] == [0, 20 * 1024]  # the feature maps' region, not the weights' it landed in
    # the file's own word for it: the address changes between the two workloads
    moved = {(p["core"], p["tensor_ids"][0]) for p in found["problems"] if p["code"] == "tensor-moved"}
    assert moved == {(core, tensor) for core, tensor, _, _ in planted}


def test_moving_every_planted_tensor_to_its_suggestion_leaves_no_incident_and_no_moved_tensor(
    misplaced, tmp_path, capsys
):  # fmt: skip
    path, planted = misplaced
    for k, (core, tensor, workload, home) in enumerate(planted):
        out = tmp_path / f"step{k}_stschedule.json"
        args = ["--core", str(core), "--tensor", str(tensor), "--workload", str(workload)]
        # the home given by hand is accepted as well as `suggested` (it is a free address of a region of the core)
        to = hex(home) if k % 2 else "suggested"
        assert cli.main(["relocate", str(path), "-o", str(out), *args, "--to", to]) == 0
        path = out
    found = check(path, capsys)
    assert found["incidents"] == []
    assert not [p for p in found["problems"] if p["code"] in ("tensor-moved", "l2-overlap")]


def test_relocate_refuses_a_collision_unless_forced(misplaced, tmp_path, capsys):
    path, planted = misplaced
    core, tensor, workload, _ = planted[0]
    value = json.loads(path.read_bytes())
    snapshot = next(w for w in value[str(core)] if w["workload_id"] == workload)["buffer"]
    other = next(e for e in snapshot if e["type"] == "ifmap" and e["tensor_id"] != tensor)
    out = tmp_path / "forced_stschedule.json"
    args = ["relocate", str(path), "-o", str(out), "--core", str(core), "--tensor", str(tensor), "--workload",
            str(workload), "--to", hex(other["address"])]  # fmt: skip
    capsys.readouterr()
    assert cli.main(args) == 2
    error = capsys.readouterr().err
    assert f"would collide with tensor {other['tensor_id']} at workload {workload}" in error and not out.exists()
    assert cli.main([*args, "--force"]) == 0
    forced = json.loads(out.read_bytes())
    moved = next(e for w in forced[str(core)] if w["workload_id"] == workload for e in w["buffer"]
                 if e["tensor_id"] == tensor)  # fmt: skip
    assert moved["address"] == other["address"]
    unchanged = copy.deepcopy(value)
    next(e for w in unchanged[str(core)] if w["workload_id"] == workload for e in w["buffer"]
         if e["tensor_id"] == tensor)["address"] = other["address"]  # fmt: skip
    assert forced == unchanged
