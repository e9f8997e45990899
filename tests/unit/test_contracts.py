"""The JSON contracts: the committed schemas are the ones the code builds (and a changed schema carries a new
version), and every command's --json output on every sample validates against its committed schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from explorer import cli
from explorer.bookmarks import add_bookmark, new_bookmark, sidecar_path
from explorer.contracts import CONTRACTS, schema_text, version
from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES

SCHEMAS = ROOT / "schemas"


def committed(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_committed_schema_is_the_one_the_code_builds_and_changes_carry_a_version(name):
    path = SCHEMAS / f"{name}.schema.json"
    assert path.exists(), f"schemas/{name}.schema.json is missing: run `make schemas` and commit it"
    built = schema_text(name)
    on_disk = path.read_text(encoding="utf-8")
    if built != on_disk:
        old_version = json.loads(on_disk).get("$id", "").rpartition("/v")[2]
        assert old_version != str(version(name)), (
            f"the {name} schema changed but its version is still {version(name)}: raise schema_version in "
            "explorer/contracts.py (consumers rely on it), then run `make schemas`"
        )
        pytest.fail(f"the {name} schema changed to version {version(name)}: run `make schemas` and commit it")


def test_schema_command_prints_each_schema(capsys):
    for name in CONTRACTS:
        assert cli.main(["schema", name]) == 0
        assert json.loads(capsys.readouterr().out) == committed(name)
    with pytest.raises(SystemExit):
        cli.main(["schema", "nonsense"])


def run_json(capsys, argv: list[str]) -> dict:
    code = cli.main(argv)
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return json.loads(out.out)


def every_sample() -> list[Path]:
    found = sorted(
        p
        for p in SAMPLE_DATA.iterdir()
        if not p.name.startswith(".") and "bookmarks" not in p.name and p.suffix != ".csv"
    )  # a per-node data demo, not a format
    if SAMPLES.is_dir():
        for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "gemini_pipeline"):
            found += sorted(p for p in folder.iterdir() if not p.name.endswith((".data", ".md")))
    return found


def test_info_check_and_graph_json_of_every_sample_validate(capsys):
    if not SAMPLES.is_dir():
        pytest.skip("real samples not found (a user's clone has no ../shared): the bundled ones only")
    graphs = 0
    for path in every_sample():
        for command in ("info", "check"):
            payload = run_json(capsys, [command, str(path), "--json"])
            jsonschema.validate(payload, committed(command))
            assert payload["schema_version"] == version(command)
        code = cli.main(["graph", str(path), "--json"])
        out = capsys.readouterr()
        if code == 0:
            jsonschema.validate(json.loads(out.out), committed("graph"))
            graphs += 1
        else:
            assert "has no graph" in out.err
    assert graphs >= 10


def test_bundled_samples_validate_without_shared(capsys):
    for path in every_sample()[:5]:
        jsonschema.validate(run_json(capsys, ["info", str(path), "--json"]), committed("info"))


def test_diff_and_tensor_json_validate(capsys):
    clean, planted = SAMPLE_DATA / "clean_2x2_stschedule.json", SAMPLE_DATA / "planted_problems_2x2_stschedule.json"
    payload = run_json(capsys, ["diff", str(clean), str(planted), "--json"])
    jsonschema.validate(payload, committed("diff"))
    onnx_file = SAMPLE_DATA / "subgraphs_functions.onnx"
    jsonschema.validate(run_json(capsys, ["diff", str(onnx_file), str(onnx_file), "--json"]), committed("diff"))
    ark = SAMPLE_DATA / "views_ark_model.json"
    info = run_json(capsys, ["info", str(ark), "--json"])
    assert info["format"] == "ark-model"
    from explorer.api import open_document

    for tensor_id in open_document(ark).layouts.tensor_ids()[:6]:
        payload = run_json(capsys, ["tensor", str(ark), str(tensor_id), "--json"])
        jsonschema.validate(payload, committed("tensor"))
        assert payload["tensor_id"] == tensor_id


def test_a_bookmarks_file_validates_and_keeps_what_it_cannot_read(tmp_path):
    source = tmp_path / "model.onnx"
    source.write_bytes(b"")
    sidecar = sidecar_path(source)
    sidecar.write_text(json.dumps({"schema_version": 2, "file": "model.onnx", "bookmarks": [7, {"ref": "x"}]}))
    add_bookmark(sidecar, source, new_bookmark(("node", 3), "graph", "look here", "Conv_3", "ana"))
    written = json.loads(sidecar.read_text())
    jsonschema.validate(written, committed("bookmarks"))
    assert written["bookmarks"][:2] == [7, {"ref": "x"}]  # kept verbatim
    assert written["bookmarks"][2]["note"] == "look here" and written["bookmarks"][2]["author"] == "ana"


def test_the_readme_graph_example_follows_the_graph_schema():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## `ir-explorer graph FILE --json`") :]
    example = section[section.index("```json") + len("```json") : section.index("```", section.index("```json") + 7)]
    jsonschema.validate(json.loads(example), committed("graph"))
