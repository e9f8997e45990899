"""Issue #42's proof on real and generated schedules: in each, misplaced tensors are planted (a copy of a live
tensor's address under a new id, for two snapshots); every incident then gets a suggestion or a shortfall, and
`relocate --to suggested` followed by `check` removes that incident and adds none."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from explorer import cli
from explorer.formats.scheduler_ir.samples import Recipe, write_streaming
from tests.conftest import SAMPLE_DATA, SAMPLES

PLANTED_ID = 9_000_000


def _schedules() -> list[pytest.param]:
    found = [pytest.param(SAMPLE_DATA / "clean_2x2_stschedule.json", id="clean_2x2"),
             pytest.param(SAMPLE_DATA / "planted_problems_2x2_stschedule.json", id="planted_problems_2x2"),
             pytest.param("generated", id="generated_3x2")]  # fmt: skip
    folder = SAMPLES / "scheduler_ir"
    for path in sorted(folder.glob("*_stschedule.json")) if folder.is_dir() else []:
        found.append(pytest.param(path, id=path.name.split(".")[1][:24]))
    if not folder.is_dir():
        found.append(pytest.param(None, id="shared-samples", marks=pytest.mark.skip(reason=f"no {folder}")))
    return found


def plant(value: dict) -> dict:
    """On every core, a new tensor (small, 8-aligned) at the address of the largest tensor of its middle
    workload, in that snapshot and the next."""
    planted = copy.deepcopy(value)
    for key in [k for k in planted if k.lstrip("-").isdigit() and k != "-1"]:
        workloads = planted[key]
        middle = len(workloads) // 2
        if middle + 1 >= len(workloads) or not workloads[middle].get("buffer"):
            continue
        victim = max(workloads[middle]["buffer"], key=lambda e: e["size"])
        for k, w in enumerate(workloads[middle : middle + 2]):
            w["buffer"].append({"address": victim["address"], "size": min(victim["size"], 256), "tensor_id":
                                PLANTED_ID + int(key), "type": "ifmap", "newly_added": k == 0, "align": 8,
                                "bitwidth": 8, "lower": [0, 0, 0, 0], "upper": [0, 0, 0, 0]})  # fmt: skip
    return planted


def check(path: Path, capsys) -> list[dict]:
    capsys.readouterr()
    cli.main(["check", str(path), "--json"])
    return json.loads(capsys.readouterr().out)["incidents"]


def key(incident: dict) -> tuple:
    return (incident["code"], incident["core"], incident["introduced_by"], incident["first_workload"])


@pytest.mark.parametrize("source", _schedules())
def test_relocating_each_incident_to_its_suggestion_removes_it_and_adds_none(source, tmp_path, capsys):
    if source == "generated":
        original = tmp_path / "generated_stschedule.json"
        write_streaming(original, Recipe(xlen=3, ylen=2, layers=8, seed=11))
        source = original
    path = tmp_path / "planted_stschedule.json"
    path.write_text(json.dumps(plant(json.loads(Path(source).read_bytes()))))
    incidents = [i for i in check(path, capsys) if i["code"] == "l2-overlap"]
    planted = [i for i in incidents if i["introduced_by"] >= PLANTED_ID]
    assert planted, "every file gets misplaced tensors to explain"
    for incident in incidents:
        assert ("suggestion" in incident and incident["suggestion"] is not None) != (
            incident.get("shortfall_bytes") is not None)  # fmt: skip
    before = {key(i) for i in check(path, capsys)}
    for incident in incidents:
        if incident["suggestion"] is None:
            continue
        out = tmp_path / f"moved_{incident['core']}_{incident['introduced_by']}_stschedule.json"
        args = ["--core", str(incident["core"]), "--tensor", str(incident["introduced_by"]), "--to", "suggested",
                "--workload", str(incident["first_workload"])]  # fmt: skip
        assert cli.main(["relocate", str(path), "-o", str(out), *args]) == 0
        after = {key(i) for i in check(out, capsys)}
        assert after == before - {key(incident)}, "the incident is gone and no other appears"
